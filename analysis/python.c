/*
 * CPython under ptloom: Python-level scheduling under the GIL and
 * Python-level descriptions of threads.
 *
 * Scheduling.  Under the GIL one thread runs Python at a time, and it can
 * lose the GIL only where the eval loop checks its "eval breaker"
 * (function entry, backward jumps, after calls).  The policy keeps the
 * breaker set while another thread could want the GIL, so every check
 * enters the loop's handler, where a breakpoint makes it a scheduling
 * point (OP_PYCHECK).  There the only preemptions offered are the
 * timeouts of the threads waiting in take_gil(): a timed-out waiter sets
 * gil_drop_request exactly as after CPython's 5 ms switch interval, so the
 * holder drops the GIL at this very check, and which waiter gets it is the
 * tracer's ordinary wake choice.  Threads that can run but do not hold the
 * GIL (just woken, just created) run first, for free, until they wait for
 * the GIL; every other C-level point (the GIL's own mutex and condvar,
 * threading.Lock's semaphore, the runtime's locks) is not a preemption.
 * After PY_INTERVAL checks in a row the holder hands the GIL over for
 * free, like the switch interval, so no Python spin livelocks.
 *
 * Descriptions.  As py-spy and austin do, the policy walks
 * _PyRuntime.interpreters.head -> threads (by native_thread_id) -> cframe
 * -> current_frame -> f_code (co_filename, co_name, co_linetable) and
 * names a thread by its threading.Thread's _name (the self of its
 * Thread._bootstrap frame).  The offsets are CPython 3.11's (x86-64),
 * taken from its internal headers and checked against the running
 * interpreter once per run; a mismatch turns the policy into a
 * pass-through (C-level scheduling).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../tracer/disasm.h"
#include "../tracer/elf.h"
#include "python.h"
#include "../tracer/sched.h"

/* Switch interval in eval-breaker checks (CPython's is 5 ms). */
#define PY_INTERVAL 200
#define PY_MAX_FRAMES 256
#define PY_MAX_THREADS 4096

/*
 * CPython 3.11 x86-64 layout (Include/internal/pycore_*.h; printed with
 * offsetof() against python3.11-dev's headers, see docs/python.md).
 */
enum {
	RT_INTERP_HEAD = 40,	/* _PyRuntimeState.interpreters.head */
	RT_INTERP_MAIN = 48,
	RT_SIGNALS_PENDING = 352, /* .ceval.signals_pending */
	RT_GIL = 360,		/* .ceval.gil */
	RT_GIL_END = 576,	/* .gilstate */
	RT_TSTATE_CURRENT = 576, /* .gilstate.tstate_current */
	RT_GIL_LOCKED = 376,
	RT_GIL_COND = 392,	/* pthread_cond_t, 48 bytes */
	RT_GIL_MUTEX = 440,
	RT_GIL_SWITCH_COND = 480,
	RT_GIL_SWITCH_MUTEX = 528,
	IS_THREADS_HEAD = 16,	/* PyInterpreterState.threads.head */
	IS_EVAL_BREAKER = 100,	/* .ceval.eval_breaker */
	IS_INITIAL_THREAD = 107392, /* ._initial_thread: the main thread's */
	TS_NEXT = 8,		/* PyThreadState.next */
	TS_INTERP = 16,
	TS_CFRAME = 56,
	TS_NATIVE_TID = 160,
	TS_SIZE = 168,		/* what we read of it */
	CF_CURRENT_FRAME = 8,	/* _PyCFrame.current_frame */
	FR_CODE = 32,		/* _PyInterpreterFrame.f_code */
	FR_PREVIOUS = 48,
	FR_PREV_INSTR = 56,
	FR_OWNER = 69,
	FR_LOCALSPLUS = 72,
	FR_OWNED_BY_GENERATOR = 1,
	OB_TYPE = 8,
	CO_FIRSTLINENO = 72,	/* PyCodeObject */
	CO_FILENAME = 112,
	CO_NAME = 120,
	CO_LINETABLE = 136,
	CO_FIRSTTRACEABLE = 168,
	CO_CODE = 184,		/* co_code_adaptive */
	CO_SIZE = 192,
	STR_LENGTH = 16,	/* PyASCIIObject */
	STR_STATE = 32,
	STR_ASCII_DATA = 48,
	STR_COMPACT_DATA = 72,	/* PyCompactUnicodeObject */
	BYTES_SIZE = 16,	/* PyVarObject.ob_size */
	BYTES_DATA = 32,
	TP_FLAGS = 168,
	HT_CACHED_KEYS = 872,
	DICT_KEYS = 32,
	DICT_VALUES = 40,
	DK_LOG2_INDEX_BYTES = 9,
	DK_KIND = 10,
	DK_NENTRIES = 24,
	DK_INDICES = 32,
	TPFLAGS_MANAGED_DICT = 1 << 4,
};

struct py_thread {
	uint64_t tstate;
	int tid;
	char name[32];
};

#define LIB_CACHE 1024

struct pypol {
	struct sched_policy pol;
	struct python_info rel;	/* as detected (offsets, with an object) */
	struct python_info pi;	/* this run's addresses */
	struct user_point pt;
	bool c_points;
	/* per run */
	bool located;		/* pi is relocated (or needs no base) */
	bool checked, bad;
	uint64_t interp;
	int checks_thread;
	uint64_t checks;
	struct py_thread *th;
	int nth;
	struct {
		uint64_t code;
		bool lib;
	} lib[LIB_CACHE];		/* code object -> library code */
};

/* ---- ELF ---------------------------------------------------------- */

struct elf_sym {
	const char *name;
	uint64_t value, size;
};

/* Values of the named dynamic or static symbols; reads code bytes of
 * [lo, lo + len) into *code when code is not NULL. */
static int elf_scan(const char *path, struct elf_sym *syms, int n,
		    uint64_t lo, size_t len, uint8_t **code,
		    uint64_t *text_lo, uint64_t *text_hi)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	int r = -ENOEXEC;

	if (!e || elf_kind(e) != ELF_K_ELF)
		goto out;
	r = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)) {
			if (text_lo && (!*text_lo || sh.sh_addr < *text_lo))
				*text_lo = sh.sh_addr;
			if (text_hi && sh.sh_addr + sh.sh_size > *text_hi)
				*text_hi = sh.sh_addr + sh.sh_size;
			if (code && len && lo >= sh.sh_addr &&
			    lo + len <= sh.sh_addr + sh.sh_size) {
				Elf_Data *d = elf_getdata(scn, NULL);

				if (d && d->d_buf && d->d_size >= sh.sh_size) {
					*code = malloc(len);
					if (*code)
						memcpy(*code,
						       (uint8_t *)d->d_buf +
							       (lo - sh.sh_addr),
						       len);
				}
			}
		}
		if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t cnt = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

		for (size_t i = 0; d && i < cnt; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value)
				continue;
			nm = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!nm)
				continue;
			for (int k = 0; k < n; k++)
				if (!syms[k].value && !strcmp(nm, syms[k].name)) {
					syms[k].value = sym.st_value;
					syms[k].size = sym.st_size;
				}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

/* Read a read-only datum of the file at link-time address a. */
static int elf_read_at(const char *path, uint64_t a, void *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = -ENOENT;

	if (fd < 0)
		return -errno;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;

	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) ||
			    ph.p_type != PT_LOAD || a < ph.p_vaddr ||
			    a + len > ph.p_vaddr + ph.p_filesz)
				continue;
			r = pread(fd, buf, len,
				  (off_t)(ph.p_offset + a - ph.p_vaddr)) ==
					    (ssize_t)len
				    ? 0
				    : -EIO;
			break;
		}
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

/* A script's interpreter: "#!/usr/bin/python3" (or "#!/usr/bin/env
 * python3", resolved on PATH). */
static bool shebang(const char *path, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	bool ok = fgets(line, sizeof(line), f) && line[0] == '#' &&
		  line[1] == '!';

	fclose(f);
	if (!ok)
		return false;
	char *sv, *a = strtok_r(line + 2, " \t\r\n", &sv);
	char *b = a ? strtok_r(NULL, " \t\r\n", &sv) : NULL;

	if (!a)
		return false;
	if (b && !strcmp(a, "/usr/bin/env")) {
		char *p = tracer_find_program(b);

		if (!p)
			return false;
		snprintf(out, len, "%s", p);
		free(p);
		return true;
	}
	snprintf(out, len, "%s", a);
	return true;
}

/*
 * The eval loop's eval-breaker handler: in 3.11, handle_eval_breaker
 * (eval_frame_handle_pending() inlined) starts by loading
 * _PyRuntime.ceval.signals_pending, and every CHECK_EVAL_BREAKER() jumps
 * there.  Exactly one such load, targeted by several jumps, or none.  In
 * a libpython built with semantic interposition the load goes through
 * the GOT: `mov got(%rip), %reg` (got: _PyRuntime's slot) shortly before
 * `mov signals_pending(%reg), %e..`, and the jumps target the first.
 */
static bool is_signals_load(const struct insn_info *in, int k, uint64_t at,
			    bool based)
{
	const struct disasm_mem *m = &in->mem[k];

	return m->read && !m->write && m->index == DISASM_REG_NONE &&
	       (based ? m->base != DISASM_REG_NONE
		      : m->base == DISASM_REG_NONE) &&
	       (uint64_t)m->disp == at && m->size == 4 && !in->is_call;
}

/* Within the next three instructions, with no branch before it, a load
 * of signals_pending from a register (the one the GOT load set). */
static bool based_load_follows(const uint8_t *code, size_t len, uint64_t lo,
			       size_t off)
{
	struct insn_info in;

	for (int n = 0; n < 3 && off < len; n++, off += in.len) {
		if (disasm_decode(code + off, len - off, lo + off, &in) ||
		    !in.len || in.is_jump || in.is_call || in.is_ret)
			return false;
		for (int k = 0; k < in.nmem; k++)
			if (is_signals_load(&in, k, RT_SIGNALS_PENDING, true))
				return true;
	}
	return false;
}

static uint64_t find_check(const uint8_t *code, size_t len, uint64_t lo,
			   uint64_t signals, uint64_t got)
{
	uint64_t found = 0;
	int loads = 0, jumps = 0;
	struct insn_info in;

	for (size_t off = 0; off < len;) {
		if (disasm_decode(code + off, len - off, lo + off, &in) ||
		    !in.len) {
			off++;
			continue;
		}
		for (int k = 0; k < in.nmem; k++) {
			const struct disasm_mem *m = &in.mem[k];

			if (is_signals_load(&in, k, signals, false)) {
				loads++;
				found = in.addr;
			} else if (got && m->read && !m->write &&
				   m->base == DISASM_REG_NONE &&
				   m->index == DISASM_REG_NONE &&
				   (uint64_t)m->disp == got && m->size == 8 &&
				   based_load_follows(code, len, lo, off + in.len)) {
				loads++;
				found = in.addr;
			}
		}
		off += in.len;
	}
	if (loads != 1)
		return 0;
	for (size_t off = 0; off < len;) {
		if (disasm_decode(code + off, len - off, lo + off, &in) ||
		    !in.len) {
			off++;
			continue;
		}
		jumps += in.is_jump && in.target == found;
		off += in.len;
	}
	return jumps >= 2 ? found : 0;
}

/* The GOT slot the dynamic loader fills with a symbol's address
 * (R_X86_64_GLOB_DAT), 0 if none. */
static uint64_t got_slot(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t slot = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !slot && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *d, *sd;
		GElf_Rela rela;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(symscn = elf_getscn(e, sh.sh_link)) ||
		    !gelf_getshdr(symscn, &symsh) ||
		    !(d = elf_getdata(scn, NULL)) ||
		    !(sd = elf_getdata(symscn, NULL)))
			continue;
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

		for (size_t i = 0; i < n && !slot; i++) {
			const char *nm;

			if (!gelf_getrela(d, (int)i, &rela) ||
			    GELF_R_TYPE(rela.r_info) != R_X86_64_GLOB_DAT ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(rela.r_info),
					 &sym))
				continue;
			nm = elf_strptr(e, symsh.sh_link, sym.st_name);
			if (nm && !strcmp(nm, name))
				slot = rela.r_offset;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return slot;
}

/* One directory of a DT_RUNPATH/DT_RPATH list, $ORIGIN expanded. */
static bool lib_in(const char *dir, size_t dlen, const char *origin,
		   const char *name, char *out, size_t len)
{
	char d[4096], f[8192];

	if (dlen >= 7 && !strncmp(dir, "$ORIGIN", 7))
		snprintf(d, sizeof(d), "%s%.*s", origin, (int)(dlen - 7),
			 dir + 7);
	else if (dlen >= 9 && !strncmp(dir, "${ORIGIN}", 9))
		snprintf(d, sizeof(d), "%s%.*s", origin, (int)(dlen - 9),
			 dir + 9);
	else
		snprintf(d, sizeof(d), "%.*s", (int)dlen, dir);
	snprintf(f, sizeof(f), "%s/%s", d, name);
	if (access(f, R_OK) || !realpath(f, d))
		return false;
	snprintf(out, len, "%s", d);
	return true;
}

/*
 * The libpython an executable loads, as the dynamic loader finds it:
 * DT_RPATH (without DT_RUNPATH), DT_RUNPATH, then the system's library
 * directories (LD_LIBRARY_PATH is not in the program's fixed
 * environment).  Its real path, as /proc/PID/maps names it.  0,
 * -ENOENT when the executable needs no libpython, -ESRCH when the one it
 * names was not found, or -errno.
 */
static int find_libpython(const char *exe, char *out, size_t len)
{
	static const char *const sys[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
	};
	char name[256] = "", rpath[4096] = "", runpath[4096] = "";
	char origin[4096];
	int fd = open(exe, O_RDONLY | O_CLOEXEC), r = -ESRCH;
	Elf *e;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Dyn dyn;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		d = elf_getdata(scn, NULL);
		for (int i = 0; d && gelf_getdyn(d, i, &dyn); i++) {
			const char *v = elf_strptr(e, sh.sh_link,
						   dyn.d_un.d_val);

			if (!v)
				continue;
			if (dyn.d_tag == DT_NEEDED &&
			    !strncmp(v, "libpython", 9) && !name[0])
				snprintf(name, sizeof(name), "%s", v);
			else if (dyn.d_tag == DT_RPATH)
				snprintf(rpath, sizeof(rpath), "%s", v);
			else if (dyn.d_tag == DT_RUNPATH)
				snprintf(runpath, sizeof(runpath), "%s", v);
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	if (!name[0])
		return -ENOENT;
	if (strchr(name, '/'))
		return -ESRCH;
	if (!realpath(exe, origin))
		return -errno;
	*strrchr(origin, '/') = 0;
	const char *lists[] = { runpath[0] ? "" : rpath, runpath };

	for (int l = 0; l < 2 && r; l++)
		for (const char *p = lists[l]; *p && r;) {
			size_t n = strcspn(p, ":");

			if (n && lib_in(p, n, origin, name, out, len))
				r = 0;
			p += n + (p[n] == ':');
		}
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]) && r; i++)
		if (lib_in(sys[i], strlen(sys[i]), origin, name, out, len))
			r = 0;
	return r;
}

int python_detect(const char *path, struct python_info *pi)
{
	char interp[4096];
	struct elf_sym syms[] = {
		{ "_PyRuntime", 0, 0 },	   { "_PyEval_EvalFrameDefault", 0, 0 },
		{ "PyCode_Type", 0, 0 },   { "PyUnicode_Type", 0, 0 },
		{ "Py_Version", 0, 0 },	   { "Py_GetVersion", 0, 0 },
	};
	uint8_t *code = NULL;
	int r;

	memset(pi, 0, sizeof(*pi));
	if (shebang(path, interp, sizeof(interp)))
		path = interp;
	snprintf(pi->path, sizeof(pi->path), "%s", path);
	r = elf_scan(path, syms, 6, 0, 0, NULL, NULL, NULL);
	if (r == -ENOEXEC)
		return 0; /* a shell script, not an interpreter */
	if (r)
		return r;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	/* the file with the interpreter's symbols and code: the libpython
	 * it loads, when it is not linked in */
	const char *file = path;
	int lib = syms[0].value ? -ENOENT
				: find_libpython(path, pi->object,
						 sizeof(pi->object));
	bool shared = lib != -ENOENT;

	if (lib == 0) {
		for (int i = 0; i < 6; i++)
			syms[i].value = syms[i].size = 0;
		r = elf_scan(pi->object, syms, 6, 0, 0, NULL, NULL, NULL);
		if (r || !syms[0].value)
			pi->object[0] = 0;
		else
			file = pi->object;
	}
	if (!syms[0].value) {
		if (shared || syms[5].value) {
			pi->is_python = true;
			snprintf(pi->why, sizeof(pi->why),
				 "%s uses a libpython that was not found "
				 "(searched its RUNPATH and the system's "
				 "library directories)",
				 path);
		} else if (!strncmp(base, "pypy", 4)) {
			pi->is_python = true;
			snprintf(pi->why, sizeof(pi->why),
				 "%s: PyPy is not supported (Python-level "
				 "scheduling needs CPython 3.11)",
				 path);
		} else if (!strncmp(base, "python", 6)) {
			pi->is_python = true;
			snprintf(pi->why, sizeof(pi->why),
				 "%s has no _PyRuntime symbol (not CPython, "
				 "or its dynamic symbols are stripped): "
				 "Python-level scheduling needs CPython 3.11",
				 path);
		}
		return 0;
	}
	pi->is_python = true;
	pi->runtime = syms[0].value;
	pi->code_type = syms[2].value;
	pi->unicode_type = syms[3].value;
	if (syms[4].value) {
		uint64_t v = 0;

		if (elf_read_at(file, syms[4].value, &v, sizeof(v)) == 0)
			pi->version = (unsigned)v;
	}
	size_t bl = strlen(base);

	if (!strncmp(base, "python", 6) && bl > 7 && base[bl - 1] == 't' &&
	    base[bl - 2] >= '0' &&
	    base[bl - 2] <= '9') {
		/* python3.13t: PEP 703's build, no GIL to hand over */
		snprintf(pi->why, sizeof(pi->why),
			 "%s is a free-threaded CPython build (no GIL): "
			 "Python-level scheduling needs the GIL (CPython "
			 "3.11)",
			 path);
		return 0;
	}
	if ((pi->version >> 16) != 0x030b) {
		snprintf(pi->why, sizeof(pi->why),
			 "CPython %u.%u: Python-level scheduling supports "
			 "3.11 (3.12 and 3.13 are planned)",
			 pi->version >> 24, (pi->version >> 16) & 0xff);
		return 0;
	}
	if (!syms[1].value || !syms[1].size || !pi->code_type ||
	    !pi->unicode_type) {
		snprintf(pi->why, sizeof(pi->why),
			 "%s does not export _PyEval_EvalFrameDefault",
			 path);
		return 0;
	}
	r = elf_scan(file, syms, 0, syms[1].value, syms[1].size, &code,
		     &pi->text_lo, &pi->text_hi);
	if (!r && code)
		pi->check_pc = find_check(code, syms[1].size, syms[1].value,
					  pi->runtime + RT_SIGNALS_PENDING,
					  pi->object[0]
						  ? got_slot(file, "_PyRuntime")
						  : 0);
	free(code);
	if (!pi->check_pc) {
		snprintf(pi->why, sizeof(pi->why),
			 "the eval-breaker check of %s was not found "
			 "(an unusual build)",
			 path);
		return 0;
	}
	if (pi->object[0]) {
		/* offsets from the first mapping (sched_policy.object) */
		uint64_t first = 0;

		if (elf_first_vaddr(file, &first)) {
			snprintf(pi->why, sizeof(pi->why),
				 "%s: its load segments are unreadable", file);
			return 0;
		}
		pi->runtime -= first;
		pi->code_type -= first;
		pi->unicode_type -= first;
		pi->text_lo -= first;
		pi->text_hi -= first;
		pi->check_pc -= first;
	}
	pi->usable = true;
	return 0;
}

static int first_alternative(void *ctx, const struct choice *c)
{
	(void)ctx;
	(void)c;
	return 0;
}

int python_probe(const struct session_config *cfg, char *exe, size_t len,
		 struct probe_exec *pe)
{
	struct session_config c = *cfg;
	struct strategy st = { .pick = first_alternative };
	struct run_result res;
	int r;

	c.policy = NULL;
	c.checkpoint = NULL;
	c.observer = NULL;
	c.points = POINTS_SYNC;
	c.nuser_points = 0;
	c.user_points = NULL;
	c.pass_output = false;
	c.stop_at = false;
	c.note_execs = pe != NULL;
	if ((r = session_run(&c, &st, &res)))
		return r;
	r = res.exe || res.exec_argv ? 0 : -ENOENT;
	if (!r) /* a program with no thread: what its wrapper exec'd */
		snprintf(exe, len, "%s",
			 res.exe ? res.exe : res.exec_argv[0]);
	if (pe) {
		pe->argv = res.exec_argv;
		pe->envp = res.exec_envp;
		res.exec_argv = res.exec_envp = NULL;
		snprintf(pe->why, sizeof(pe->why), "%s", res.exec_why);
	}
	run_result_free(&res);
	return r;
}

/* ---- the tracee's Python state ----------------------------------- */

static int rd(struct session *s, uint64_t a, void *buf, size_t len)
{
	if (!a)
		return -EFAULT;
	return session_peek(s, a, buf, len);
}

static uint64_t rd64(struct session *s, uint64_t a)
{
	uint64_t v = 0;

	if (rd(s, a, &v, 8))
		return 0;
	return v;
}

/* A str object as ASCII (other characters as '?'). */
static int read_str(struct pypol *p, struct session *s, uint64_t o,
		    char *buf, size_t len)
{
	uint8_t h[STR_COMPACT_DATA];

	buf[0] = 0;
	if (rd(s, o, h, sizeof(h)))
		return -EFAULT;
	uint64_t type, n;
	uint32_t state;

	memcpy(&type, h + OB_TYPE, 8);
	memcpy(&n, h + STR_LENGTH, 8);
	memcpy(&state, h + STR_STATE, 4);
	if (type != p->pi.unicode_type)
		return -EINVAL;
	bool compact = state >> 5 & 1, ascii = state >> 6 & 1;
	unsigned kind = state >> 2 & 7;

	if (!compact || (!ascii && kind != 1))
		return -EINVAL;
	if (n >= len)
		n = len - 1;
	if (rd(s, o + (ascii ? STR_ASCII_DATA : STR_COMPACT_DATA), buf, n))
		return -EFAULT;
	buf[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((uint8_t)buf[i] < 0x20 || (uint8_t)buf[i] > 0x7e)
			buf[i] = '?';
	return 0;
}

static int varint(const uint8_t *t, size_t len, size_t *i)
{
	unsigned v = 0, shift = 0;

	while (*i < len) {
		uint8_t b = t[(*i)++];

		v |= (unsigned)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 30)
			break;
	}
	return (int)v;
}

int python_line_311(const uint8_t *tab, size_t len, int firstlineno,
		    int idx)
{
	int line = firstlineno, at = 0;

	for (size_t i = 0; i < len;) {
		uint8_t b = tab[i++];
		int code = b >> 3 & 15, n = (b & 7) + 1, delta = 0;

		if (!(b & 128))
			return -1; /* not an entry's first byte */
		if (code == 13 || code == 14) {
			size_t j = i;
			int u = varint(tab, len, &j);

			delta = u & 1 ? -(u >> 1) : u >> 1;
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
		}
		line += delta;
		if (idx >= at && idx < at + n)
			return code == 15 ? -1 : line;
		at += n;
		while (i < len && !(tab[i] & 128))
			i++;
	}
	return -1;
}

/* The thread state of kernel thread tid.  A thread state made for a new
 * thread carries its creator's id until the thread binds it, and the list
 * is newest first: the last match is the creator's own. */
static uint64_t tstate_of(struct pypol *p, struct session *s, int thread,
			  int tid)
{
	/* the main thread's is the interpreter's first; its native id may
	 * be another process's (a run forked from a checkpoint) */
	if (thread == 0)
		return p->interp + IS_INITIAL_THREAD;
	if (thread < p->nth && p->th[thread].tid == tid && p->th[thread].tstate)
		return p->th[thread].tstate;
	uint64_t ts = rd64(s, p->interp + IS_THREADS_HEAD), found = 0;
	int matches = 0;

	for (int n = 0; ts && n < PY_MAX_THREADS; n++) {
		uint8_t b[TS_SIZE];

		if (rd(s, ts, b, sizeof(b)))
			break;
		uint64_t ntid, next;

		memcpy(&ntid, b + TS_NATIVE_TID, 8);
		memcpy(&next, b + TS_NEXT, 8);
		if ((int)ntid == tid) {
			found = ts;
			matches++;
		}
		ts = next;
	}
	if (matches == 1 && thread < p->nth) {
		p->th[thread].tstate = found;
		p->th[thread].tid = tid;
	}
	return found;
}

struct py_frame {
	uint64_t addr, code, previous, self;
	char file[160], func[96];
	int line;
};

/* One complete frame at f (false when it is incomplete or unreadable). */
static bool read_frame(struct pypol *p, struct session *s, uint64_t f,
		       struct py_frame *out, bool want_loc)
{
	uint8_t fr[FR_LOCALSPLUS + 8], co[CO_SIZE];
	uint64_t code, prev_instr, previous;

	memset(out, 0, sizeof(*out));
	if (rd(s, f, fr, sizeof(fr)))
		return false;
	memcpy(&code, fr + FR_CODE, 8);
	memcpy(&previous, fr + FR_PREVIOUS, 8);
	memcpy(&prev_instr, fr + FR_PREV_INSTR, 8);
	memcpy(&out->self, fr + FR_LOCALSPLUS, 8);
	out->addr = f;
	out->code = code;
	out->previous = previous;
	if (rd(s, code, co, sizeof(co)))
		return false;
	uint64_t type, fn, nm, lt;
	int32_t first, traceable;

	memcpy(&type, co + OB_TYPE, 8);
	if (type != p->pi.code_type)
		return false;
	memcpy(&traceable, co + CO_FIRSTTRACEABLE, 4);
	int64_t idx = ((int64_t)prev_instr - (int64_t)(code + CO_CODE)) / 2;

	/* _PyFrame_IsIncomplete(): still in its prologue */
	if (fr[FR_OWNER] != FR_OWNED_BY_GENERATOR && idx < traceable)
		return false;
	memcpy(&fn, co + CO_FILENAME, 8);
	memcpy(&nm, co + CO_NAME, 8);
	read_str(p, s, nm, out->func, sizeof(out->func));
	if (!want_loc)
		return true;
	memcpy(&lt, co + CO_LINETABLE, 8);
	memcpy(&first, co + CO_FIRSTLINENO, 4);
	read_str(p, s, fn, out->file, sizeof(out->file));
	out->line = -1;
	uint64_t n = rd64(s, lt + BYTES_SIZE);

	if (n && n < 65536 && idx >= 0) {
		uint8_t *tab = malloc(n);

		/* an instruction without a line (a loop's jump back, a
		 * cleanup) is shown at the line before it */
		if (tab && !rd(s, lt + BYTES_DATA, tab, n))
			for (int64_t i = idx; out->line < 0 && i >= 0 &&
					      i > idx - 64;
			     i--)
				out->line = python_line_311(tab, n, first,
							    (int)i);
		free(tab);
	}
	return true;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The interpreter's own library (stdlib, frozen modules, installed
 * packages), as opposed to the program's code. */
static bool is_stdlib(const char *file)
{
	return strstr(file, "/lib/python3") || !strncmp(file, "<frozen ", 8);
}

/* Find key "_name"-like in a dict keys object; returns the value slot's
 * address or 0. values: a split table's value array (0 if combined). */
static uint64_t keys_lookup(struct pypol *p, struct session *s,
			    uint64_t keys, uint64_t values, const char *key)
{
	uint8_t h[DK_INDICES];

	if (rd(s, keys, h, sizeof(h)))
		return 0;
	uint8_t log2_index = h[DK_LOG2_INDEX_BYTES], kind = h[DK_KIND];
	int64_t n;

	memcpy(&n, h + DK_NENTRIES, 8);
	if (log2_index > 30 || n < 0 || n > 4096)
		return 0;
	uint64_t entries = keys + DK_INDICES + (1ull << log2_index);
	size_t esz = kind == 0 ? 24 : 16, koff = kind == 0 ? 8 : 0;

	for (int64_t i = 0; i < n; i++) {
		char k[64];
		uint64_t kp = rd64(s, entries + (uint64_t)i * esz + koff);

		if (!kp || read_str(p, s, kp, k, sizeof(k)) || strcmp(k, key))
			continue;
		if (values)
			return values + 8 * (uint64_t)i;
		return entries + (uint64_t)i * esz + koff + 8;
	}
	return 0;
}

/* threading.Thread's _name of obj (a managed-dict instance in 3.11). */
static void thread_obj_name(struct pypol *p, struct session *s, uint64_t obj,
			    char *buf, size_t len)
{
	uint64_t type = rd64(s, obj + OB_TYPE), slot = 0;

	buf[0] = 0;
	if (!type || !(rd64(s, type + TP_FLAGS) & TPFLAGS_MANAGED_DICT))
		return;
	uint64_t values = rd64(s, obj - 32), dict = rd64(s, obj - 24);

	if (values)
		slot = keys_lookup(p, s, rd64(s, type + HT_CACHED_KEYS),
				   values, "_name");
	else if (dict)
		slot = keys_lookup(p, s, rd64(s, dict + DICT_KEYS),
				   rd64(s, dict + DICT_VALUES), "_name");
	if (slot)
		read_str(p, s, rd64(s, slot), buf, len);
}

static bool validate(struct pypol *p, struct session *s)
{
	uint64_t rt = p->pi.runtime;
	uint64_t interp = rd64(s, rt + RT_INTERP_HEAD);
	uint32_t locked = 2;

	if (!interp || rd64(s, rt + RT_INTERP_MAIN) != interp)
		return false;
	uint64_t ts = rd64(s, interp + IS_THREADS_HEAD);

	if (!ts || rd64(s, ts + TS_INTERP) != interp ||
	    rd64(s, interp + IS_INITIAL_THREAD + TS_INTERP) != interp)
		return false;
	if (rd(s, rt + RT_GIL_LOCKED, &locked, 4) || locked > 1)
		return false;
	p->interp = interp;
	return true;
}

/* This run's addresses: a libpython's offsets plus where it is mapped
 * (the same in every run unless the program's process changed). */
static bool locate(struct pypol *p, struct session *s)
{
	uint64_t at;

	if (p->located)
		return true;
	if (!p->rel.object[0]) {
		p->located = true;
		return true;
	}
	if (!(at = session_object_start(s, p->rel.object)))
		return false;
	p->pi = p->rel;
	p->pi.runtime += at;
	p->pi.code_type += at;
	p->pi.unicode_type += at;
	p->pi.text_lo += at;
	p->pi.text_hi += at;
	p->pi.check_pc += at;
	p->located = true;
	return true;
}

static bool ready(struct pypol *p, struct session *s)
{
	if (!p->checked && session_nthreads(s) > 1) {
		p->checked = true;
		p->bad = !locate(p, s) || !validate(p, s);
	}
	return p->checked && !p->bad;
}

static void ensure_threads(struct pypol *p, struct session *s)
{
	int n = session_nthreads(s);

	if (n <= p->nth)
		return;
	struct py_thread *t = realloc(p->th, (size_t)n * sizeof(*t));

	if (!t)
		return;
	memset(t + p->nth, 0, (size_t)(n - p->nth) * sizeof(*t));
	p->th = t;
	p->nth = n;
}

/* ---- the policy's hooks ------------------------------------------- */

static void pol_begin(void *ctx)
{
	struct pypol *p = ctx;

	p->checked = p->bad = false;
	p->located = false;
	p->interp = 0;
	p->checks_thread = -1;
	p->checks = 0;
	free(p->th);
	p->th = NULL;
	p->nth = 0;
	memset(p->lib, 0, sizeof(p->lib));
}

/*
 * The run is a fork of a checkpoint template (tracer/checkpoint.c): the
 * main thread's state still carries the template's native thread id,
 * which an exec'd run would not.  It is made the fork's own, so the
 * interpreter's memory is the exec'd run's.  (The threading module's
 * int in threading.main_thread().native_id keeps the template's:
 * docs/python.md.)
 */
static void pol_forked(void *ctx, struct session *s, int old_tid)
{
	struct pypol *p = ctx;
	struct session_thread st;
	uint64_t rt = p->pi.runtime, interp, ts, ntid;

	if (session_thread_info(s, 0, &st) || !locate(p, s))
		return;
	rt = p->pi.runtime;
	interp = rd64(s, rt + RT_INTERP_MAIN);
	if (!interp || rd64(s, rt + RT_INTERP_HEAD) != interp)
		return;
	ts = interp + IS_INITIAL_THREAD;
	if (rd64(s, ts + TS_INTERP) != interp)
		return;
	ntid = rd64(s, ts + TS_NATIVE_TID);
	if ((int)ntid != old_tid)
		return;
	ntid = (uint64_t)st.tid;
	session_poke(s, ts + TS_NATIVE_TID, &ntid, 8);
}

/* Could another thread want the GIL: one that can run, or a timed
 * waiter (the GIL's own waits are timed). */
static bool contended(struct session *s, int thread)
{
	int n = session_nthreads(s);

	for (int i = 0; i < n; i++) {
		struct session_thread st;

		/* the interpreter's threads: another process's want
		 * no GIL */
		if (i == thread || session_thread_info(s, i, &st) ||
		    !st.policy)
			continue;
		if (st.state == SCHED_ENABLED || st.timed)
			return true;
	}
	return false;
}

/* Is the frame running on thread library code?  By code object, cached
 * for the run. */
static bool in_library(struct pypol *p, struct session *s, int thread)
{
	struct session_thread st;

	if (session_thread_info(s, thread, &st) || !st.policy)
		return false;
	/* the thread at a check holds the GIL: it is the current one */
	uint64_t ts = rd64(s, p->pi.runtime + RT_TSTATE_CURRENT), cf, ntid;
	/* its frame pointer and native id in one read */
	uint8_t tsb[TS_NATIVE_TID + 8 - TS_CFRAME];

	if (!ts || rd(s, ts + TS_CFRAME, tsb, sizeof(tsb)))
		return false;
	memcpy(&cf, tsb, 8);
	memcpy(&ntid, tsb + TS_NATIVE_TID - TS_CFRAME, 8);
	if (thread == 0 ? ts != p->interp + IS_INITIAL_THREAD
			: (int)ntid != st.tid)
		return false;
	uint64_t f = rd64(s, cf + CF_CURRENT_FRAME);
	uint64_t code = f ? rd64(s, f + FR_CODE) : 0;
	char file[160];

	if (!code)
		return false;
	size_t h = (size_t)(code >> 4) % LIB_CACHE;

	for (size_t k = 0; k < LIB_CACHE; k++, h = (h + 1) % LIB_CACHE) {
		if (p->lib[h].code == code)
			return p->lib[h].lib;
		if (!p->lib[h].code)
			break;
	}
	if (rd64(s, code + OB_TYPE) != p->pi.code_type ||
	    read_str(p, s, rd64(s, code + CO_FILENAME), file, sizeof(file)))
		return false;
	bool lib = is_stdlib(file);

	if (!p->lib[h].code)
		p->lib[h].code = code, p->lib[h].lib = lib;
	return lib;
}

static bool pol_want_point(void *ctx, struct session *s, int thread)
{
	struct pypol *p = ctx;

	if (!ready(p, s) || !contended(s, thread))
		return false;
	/* preemptions in the program's own code: the library's internal
	 * states are behind its locks (docs/python.md, "Limits") */
	if (in_library(p, s, thread))
		return false;
	if (p->checks_thread == thread) {
		p->checks++;
	} else {
		p->checks_thread = thread;
		p->checks = 1;
	}
	return true;
}

static void pol_resume(void *ctx, struct session *s, int thread)
{
	struct pypol *p = ctx;
	uint32_t one = 1;

	/* keep the breaker set while the GIL may be wanted, so every check
	 * reaches the handler's breakpoint (take_gil() recomputes it) */
	if (ready(p, s) && contended(s, thread))
		session_poke(s, p->interp + IS_EVAL_BREAKER, &one, 4);
}

static bool gil_wait(const struct pypol *p, const struct alt *a)
{
	uint64_t c = p->pi.runtime + RT_GIL_COND;

	return a->timeout && a->obj >= c && a->obj < c + 48;
}

static void keep_only(struct choice *c, int i)
{
	c->alts[0] = c->alts[i];
	c->alts[0].cost = 0;
	c->nalts = 1;
}

static void pol_shape(void *ctx, struct session *s, struct choice *c)
{
	struct pypol *p = ctx;
	struct session_thread ct, at;
	int h = -1, other = -1;

	if (!ready(p, s) || c->kind != DEC_RUN)
		return;
	/* another process's choice: its own C-level points */
	if (c->current < 0 || session_thread_info(s, c->current, &ct) ||
	    !ct.policy)
		return;
	for (int i = 0; i < c->nalts && h < 0; i++)
		if (!c->alts[i].timeout && c->alts[i].kind == OP_PYCHECK)
			h = i;
	if (h >= 0) {
		/* the GIL holder at a check: who can run without the GIL
		 * goes first, for free, until it waits for the GIL (the
		 * interpreter's threads: another process's are C-level) */
		for (int i = 0; i < c->nalts; i++)
			if (!c->alts[i].timeout && i != h &&
			    !session_thread_info(s, c->alts[i].thread, &at) &&
			    at.policy &&
			    (other < 0 || c->alts[i].thread == c->current))
				other = i;
		if (other >= 0) {
			keep_only(c, other);
			return;
		}
		/* the switch interval: hand the GIL over for free */
		if (p->checks >= PY_INTERVAL &&
		    p->checks_thread == c->alts[h].thread) {
			int t = -1;

			for (int i = 0; i < c->nalts; i++)
				if (c->alts[i].timeout &&
				    (t < 0 || (gil_wait(p, &c->alts[i]) &&
					       !gil_wait(p, &c->alts[t]))))
					t = i;
			if (t >= 0) {
				p->checks = 0;
				keep_only(c, t);
				return;
			}
		}
		return; /* go on, or a waiter times out: a preemption */
	}
	/* a C-level point of a thread that can go on: not a preemption,
	 * unless --points asked for C-level points outside the interpreter
	 * (C extensions) */
	if (c->nalts < 2 || c->alts[0].timeout || c->alts[0].cost ||
	    c->alts[0].thread != c->current)
		return;
	struct session_thread cur;

	if (p->c_points && !session_thread_info(s, c->current, &cur) &&
	    (cur.kind == OP_CALL || cur.kind == OP_ATOMIC ||
	     cur.kind == OP_ACCESS || cur.kind == OP_SPIN) &&
	    (cur.pc < p->pi.text_lo || cur.pc >= p->pi.text_hi))
		return;
	int k = 0;

	for (int i = 0; i < c->nalts; i++)
		if (!c->alts[i].cost)
			c->alts[k++] = c->alts[i];
	c->nalts = k;
}

/* The innermost frames of a thread: the first, and the first outside the
 * standard library; the thread's name from its bootstrap frame. */
static void describe(struct pypol *p, struct session *s, int thread,
		     char *buf, size_t len)
{
	struct session_thread st;

	buf[0] = 0;
	if (!ready(p, s) || session_thread_info(s, thread, &st) ||
	    st.state == SCHED_DEAD || st.proc != 0)
		return;
	ensure_threads(p, s);
	uint64_t ts = tstate_of(p, s, thread, st.tid);

	if (!ts)
		return;
	uint64_t f = rd64(s, rd64(s, ts + TS_CFRAME) + CF_CURRENT_FRAME);
	struct py_frame fr, inner = { 0 }, user = { 0 };
	bool have_inner = false, have_user = false;
	bool need_name = thread < p->nth && !p->th[thread].name[0];

	for (int n = 0; f && n < PY_MAX_FRAMES; n++, f = fr.previous) {
		bool loc = !have_user;

		if (!read_frame(p, s, f, &fr, loc)) {
			if (!fr.code)
				break;
			continue;
		}
		if (loc && !have_inner) {
			inner = fr;
			have_inner = true;
		}
		if (loc && !have_user && fr.file[0] && !is_stdlib(fr.file)) {
			user = fr;
			have_user = true;
		}
		if (need_name && thread > 0 &&
		    (!strcmp(fr.func, "_bootstrap") ||
		     !strcmp(fr.func, "_bootstrap_inner")))
			thread_obj_name(p, s, fr.self, p->th[thread].name,
					sizeof(p->th[thread].name));
		if (!need_name && have_user)
			break;
	}
	if (thread == 0 && thread < p->nth && !p->th[0].name[0])
		snprintf(p->th[0].name, sizeof(p->th[0].name), "MainThread");
	if (!have_inner)
		return;
	size_t n;

	if (have_user && user.addr != inner.addr)
		n = (size_t)snprintf(buf, len, "%s at %s:%d in %s at %s:%d",
				     inner.func, base_name(inner.file),
				     inner.line, user.func,
				     base_name(user.file), user.line);
	else
		n = (size_t)snprintf(buf, len, "%s at %s:%d", inner.func,
				     base_name(inner.file), inner.line);
	/* the thread's threading name: every event names it */
	if (thread < p->nth && p->th[thread].name[0] && n < len)
		snprintf(buf + n, len - n, " (%s)", p->th[thread].name);
}

static void pol_where(void *ctx, struct session *s, int thread, char *buf,
		      size_t len)
{
	describe(ctx, s, thread, buf, len);
}

static void pol_name(void *ctx, struct session *s, int thread, char *buf,
		     size_t len)
{
	struct pypol *p = ctx;
	char tmp[LOC_MAX];

	buf[0] = 0;
	if (thread >= p->nth || !p->th[thread].name[0])
		describe(p, s, thread, tmp, sizeof(tmp));
	if (thread < p->nth)
		snprintf(buf, len, "%s", p->th[thread].name);
}

/* pytest prints its own report: "tests/test_bank.py:22: AssertionError"
 * locates the first failure, "E       assert -100 >= 0" says what. */
static bool pytest_failure(const char *out, size_t len, char *where,
			   size_t wlen, char *exc, size_t elen)
{
	const char *end = out + len;

	where[0] = exc[0] = 0;
	for (const char *l = out; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		char line[512], file[256], type[128];
		int no, used = 0;

		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		if (!exc[0] && !strncmp(line, "E   ", 4))
			snprintf(exc, elen, "%s",
				 line + 1 + strspn(line + 1, " "));
		if (sscanf(line, "%255[^: ]:%d: %127s%n", file, &no, type,
			   &used) == 3 &&
		    !line[used] && strstr(file, ".py")) {
			snprintf(where, wlen, "%s:%d (%s)", base_name(file), no,
				 type);
			return true;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	return false;
}

bool python_traceback(const char *out, size_t len, char *where,
		      size_t wlen, char *exc, size_t elen)
{
	static const char tb[] = "Traceback (most recent call last):\n";
	const char *last = NULL, *end = out + len;

	for (const char *q = out; q && q < end;) {
		q = memmem(q, (size_t)(end - q), tb, sizeof(tb) - 1);
		if (q)
			last = q++;
	}
	if (!last)
		return pytest_failure(out, len, where, wlen, exc, elen);
	where[0] = exc[0] = 0;
	for (const char *l = last + sizeof(tb) - 1; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		char line[512], file[256], func[128];
		int no;

		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		if (sscanf(line, "  File \"%255[^\"]\", line %d, in %127s",
			   file, &no, func) == 3)
			snprintf(where, wlen, "%s at %s:%d", func,
				 base_name(file), no);
		else if (line[0] && line[0] != ' ') {
			snprintf(exc, elen, "%s", line);
			break;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	return where[0] != 0;
}

static void pol_conclude(void *ctx, struct run_result *r)
{
	struct pypol *p = ctx;
	char where[LOC_MAX], exc[LOC_MAX];
	uint64_t gil = p->pi.runtime + RT_GIL;

	if (!p->located)
		gil = 0; /* no base this run: no interpreter objects named */
	if ((r->failure == FAIL_EXIT || r->failure == FAIL_CRASH) &&
	    r->output &&
	    python_traceback(r->output, r->output_len, where, sizeof(where),
			     exc, sizeof(exc))) {
		snprintf(r->location, sizeof(r->location), "%s", where);
		if (exc[0])
			snprintf(r->message, sizeof(r->message), "%s", exc);
	}
	/* the interpreter's own objects, in its terms */
	for (size_t i = 0; i < r->nsyms; i++) {
		struct sym_entry *e = &r->syms[i];
		const char *n = NULL;
		uint64_t a = e->addr - p->pi.runtime;

		if (!gil || !e->data || e->addr < gil ||
		    e->addr >= gil + RT_GIL_END - RT_GIL)
			continue;
		n = a >= RT_GIL_SWITCH_MUTEX ? "GIL.switch_mutex"
		    : a >= RT_GIL_SWITCH_COND ? "GIL.switch_cond"
		    : a >= RT_GIL_MUTEX	      ? "GIL.mutex"
		    : a >= RT_GIL_COND	      ? "GIL.cond"
					      : "GIL";
		char *t = strdup(n);

		if (t) {
			free(e->text);
			e->text = t;
		}
	}
}

struct sched_policy *python_policy_new(const struct python_info *pi,
				       bool c_points)
{
	struct pypol *p;

	if (!pi->usable || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pi = p->rel = *pi;
	p->c_points = c_points;
	/* an offset in the libpython when there is one (.object) */
	p->pt = (struct user_point){ pi->check_pc, OP_PYCHECK };
	p->checks_thread = -1;
	p->pol = (struct sched_policy){
		.ctx = p,
		.points = &p->pt,
		.npoints = 1,
		/* without C-level points a libc call point of the
		 * interpreter is never a choice (pol_shape) */
		.own_points = !c_points,
		.object = p->rel.object[0] ? p->rel.object : NULL,
		.coverage = "Python-level: GIL switches at the eval-breaker "
			    "checks of the program's own code",
		.begin = pol_begin,
		.want_point = pol_want_point,
		.shape = pol_shape,
		.resume = pol_resume,
		.forked = pol_forked,
		.where = pol_where,
		.name = pol_name,
		.conclude = pol_conclude,
	};
	return &p->pol;
}

void python_policy_free(struct sched_policy *pol)
{
	if (!pol)
		return;
	struct pypol *p = pol->ctx;

	free(p->th);
	free(p);
}
