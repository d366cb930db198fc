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
 * threading.Lock's semaphore, the runtime's locks) is not a preemption,
 * except while the GIL is free (its holder dropped it around a call and
 * has not taken it back), where a woken waiter may take it first.
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
/* words of a Task object searched for its coroutine */
#define PY_TASK_WORDS 40
/* sys.modules looked at so many times per process for asyncio.tasks */
#define PY_TASKS_TRIES 64

/*
 * Layouts (x86-64).  3.11: printed with offsetof() against python3.11-dev's
 * headers (Include/internal/pycore_*.h), see docs/python.md; 3.12 the same
 * way against the headers pyenv installs with its 3.12 (include/python3.12);
 * 3.13 and later are read from the interpreter (debug_offsets_layout).
 */
static const struct python_layout layout_311 = {
	.minor = 11,
	.rt_interp_head = 40, .rt_interp_main = 48,
	.rt_signals_pending = 352, .rt_gil = 360,
	.is_threads_head = 16, .is_eval_breaker = 100,
	.is_initial_thread = 107392,
	.ts_next = 8, .ts_interp = 16, .ts_native_tid = 160,
	.ts_frame = 56, .cframe = true, .cf_current_frame = 8,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69,
	.fr_localsplus = 72,
	.co_firstlineno = 72, .co_filename = 112, .co_name = 120,
	.co_linetable = 136, .co_firsttraceable = 168, .co_code = 184,
	.str_ascii_data = 48, .str_compact_data = 72,
	.tp_flags = 168, .tp_basicsize = 32, .ht_cached_keys = 872,
	.dict_keys = 32, .dict_values = 40,
	.is_modules = 888, .gen_iframe = 80,
};

static const struct python_layout layout_312 = {
	.minor = 12,
	.rt_interp_head = 40, .rt_interp_main = 48,
	.is_gil_ptr = 384,
	.is_threads_head = 72, .is_eval_breaker = 368,
	/* ceval.pending.async_exc: the handler looks at the thread's
	 * tstate->async_exc instead, and every recomputation of the breaker
	 * (at the end of each _Py_HandlePending) ORs it in */
	.is_keep_breaker = 420,
	.is_initial_thread = 383264,
	.ts_next = 8, .ts_interp = 16, .ts_native_tid = 144,
	.ts_frame = 56, .cframe = true, .cf_current_frame = 0,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
	.fr_localsplus = 72,
	.co_firstlineno = 68, .co_filename = 112, .co_name = 120,
	.co_linetable = 136, .co_firsttraceable = 176, .co_code = 192,
	.str_ascii_data = 40, .str_compact_data = 56,
	.tp_flags = 168, .tp_basicsize = 32, .ht_cached_keys = 880,
	.dict_keys = 32, .dict_values = 40,
	.is_modules = 944, .gen_iframe = 72,
};

/* Layout-independent constants (3.11 to 3.13). */
enum {
	TP_NAME = 24,		/* PyTypeObject.tp_name */
	MODULE_DICT = 16,	/* PyModuleObject.md_dict */
	GIL_LAST_HOLDER = 8,	/* struct _gil_runtime_state */
	GIL_LOCKED = 16,
	GIL_COND = 32,		/* pthread_cond_t, 48 bytes */
	GIL_MUTEX = 80,
	GIL_SWITCH_COND = 120,
	GIL_SWITCH_MUTEX = 168,
	GIL_END = 208,
	FR_OWNED_BY_GENERATOR = 1,
	FR_OWNED_BY_CSTACK = 3,	/* 3.12+: an entry frame, no Python code */
	OB_TYPE = 8,
	STR_LENGTH = 16,	/* PyASCIIObject */
	STR_STATE = 32,
	BYTES_SIZE = 16,	/* PyVarObject.ob_size */
	BYTES_DATA = 32,
	DK_LOG2_INDEX_BYTES = 9,
	DK_KIND = 10,
	DK_NENTRIES = 24,
	DK_INDICES = 32,
	TPFLAGS_INLINE_VALUES = 1 << 2, /* 3.13+ */
	TPFLAGS_MANAGED_DICT = 1 << 4,
	/* 3.13+: a bit of tstate->eval_breaker that only free-threaded
	 * builds act on (_PY_EVAL_EXPLICIT_MERGE_BIT): set, it makes every
	 * check call _Py_HandlePending without asking anything of it */
	EB_PTLOOM_BIT = 1 << 6,
};

struct py_thread {
	uint64_t tstate;
	int tid;
	bool eb_set;		/* 3.13+: EB_PTLOOM_BIT set in its tstate */
	uint64_t eb_tstate;	/* ... in this one */
	char name[32];
};

#define LIB_CACHE 1024

/* One interpreter, detected once per executable's path: the points the
 * tracer installs in each process running it (sched_policy.adopt). */
struct pyimage {
	struct policy_image img;	/* first: adopt's result */
	struct python_info rel;	/* as detected (offsets, with an object) */
	struct user_point pt;
	char exe[4096];		/* the executable, as /proc/PID/exe names it */
};

/* The Python-level state of one process of a run (a P-number) that runs
 * an interpreter.  Per-thread arrays are indexed by the session's thread
 * numbers. */
struct pypol {
	const struct pyimage *im;
	int proc;
	struct python_info pi;	/* this run's addresses */
	bool c_points;
	/* per run */
	bool located;		/* pi is relocated (or needs no base) */
	bool checked, bad;
	bool valid;		/* validated for descriptions only */
	uint64_t ctasks;	/* asyncio.tasks._current_tasks, 0: not yet */
	int ctasks_tries;
	int threads;		/* its threads (session_thread.proc) ... */
	int counted;		/* ... among the session's first so many */
	uint64_t interp;
	uint64_t gil;		/* struct _gil_runtime_state */
	bool kept;		/* 3.12: is_keep_breaker set */
	int parked;		/* discovery: choices a thread was parked */
	int checks_thread;
	uint64_t checks;
	struct py_thread *th;
	int nth;
	struct {
		uint64_t code;
		bool lib;
	} lib[LIB_CACHE];		/* code object -> library code */
};

/* The policy: every interpreter seen (by path; NULL entries: a path that
 * is no usable CPython), and this run's processes. */
struct pyroot {
	struct sched_policy pol;
	bool c_points;
	struct {
		char *exe;
		struct pyimage *im;	/* NULL: not at the Python level */
	} *seen;
	int nseen;
	struct pypol **procs;	/* by P-number, NULL: none yet */
	int nprocs;
	char why[256];		/* an interpreter seen that is not usable */
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
			       size_t off, uint64_t signals_off)
{
	struct insn_info in;

	for (int n = 0; n < 3 && off < len; n++, off += in.len) {
		if (disasm_decode(code + off, len - off, lo + off, &in) ||
		    !in.len || in.is_jump || in.is_call || in.is_ret)
			return false;
		for (int k = 0; k < in.nmem; k++)
			if (is_signals_load(&in, k, signals_off, true))
				return true;
	}
	return false;
}

static uint64_t find_check(const uint8_t *code, size_t len, uint64_t lo,
			   uint64_t signals, uint64_t signals_off, uint64_t got)
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
				   based_load_follows(code, len, lo, off + in.len,
						      signals_off)) {
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

/*
 * 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), as 64-bit
 * words: the first member of _PyRuntime, initialised statically, so it is
 * in the ELF file's data.  py-spy and austin read the same struct from the
 * live process.
 */
enum {
	DO_VERSION = 1, DO_FREE_THREADED = 2,
	DO_RT_INTERPRETERS_HEAD = 5,
	DO_IS_SIZE = 6, DO_IS_THREADS_HEAD = 9, DO_IS_IMPORTS_MODULES = 11,
	DO_IS_CEVAL_GIL = 14,
	DO_IS_GIL_LOCKED = 17, DO_IS_GIL_HOLDER = 18,
	DO_TS_SIZE = 19, DO_TS_NEXT = 21, DO_TS_INTERP = 22,
	DO_TS_CURRENT_FRAME = 23, DO_TS_NATIVE_THREAD_ID = 25,
	DO_FR_SIZE = 28, DO_FR_PREVIOUS = 29, DO_FR_EXECUTABLE = 30,
	DO_FR_INSTR_PTR = 31, DO_FR_LOCALSPLUS = 32, DO_FR_OWNER = 33,
	DO_CO_SIZE = 34, DO_CO_FILENAME = 35, DO_CO_NAME = 36,
	DO_CO_LINETABLE = 38, DO_CO_FIRSTLINENO = 39, DO_CO_CODE_ADAPTIVE = 43,
	DO_OB_SIZE = 44, DO_OB_TYPE = 45,
	DO_TP_FLAGS = 49,
	DO_DICT_MA_KEYS = 57, DO_DICT_MA_VALUES = 58,
	DO_BYTES_OB_SIZE = 65, DO_BYTES_OB_SVAL = 66,
	DO_STR_STATE = 68, DO_STR_LENGTH = 69, DO_STR_ASCII_SIZE = 70,
	DO_WORDS = 73,
};

/* The layout from the interpreter's debug offsets; false with why. */
static bool debug_offsets_layout(const char *file, uint64_t runtime,
				 struct python_layout *L, bool *free_threaded,
				 char *why, size_t wlen)
{
	uint64_t d[DO_WORDS];

	if (elf_read_at(file, runtime, d, sizeof(d)) ||
	    memcmp(d, "xdebugpy", 8)) {
		snprintf(why, wlen, "%s: _PyRuntime.debug_offsets is not "
			 "readable", file);
		return false;
	}
	*free_threaded = d[DO_FREE_THREADED] != 0;
	/* positions late in the struct: a format that moved a member
	 * fails these */
	if (d[DO_OB_SIZE] != 16 || d[DO_OB_TYPE] != 8 ||
	    d[DO_BYTES_OB_SIZE] != BYTES_SIZE ||
	    d[DO_BYTES_OB_SVAL] != BYTES_DATA ||
	    d[DO_STR_LENGTH] != STR_LENGTH || d[DO_STR_STATE] != STR_STATE ||
	    d[DO_TS_SIZE] > 65536 || d[DO_FR_SIZE] > 4096 ||
	    d[DO_CO_SIZE] > 4096 || d[DO_IS_SIZE] > (1u << 24)) {
		snprintf(why, wlen, "%s: _PyRuntime.debug_offsets has a "
			 "format this ptloom does not read (it reads "
			 "3.13's)", file);
		return false;
	}
	uint64_t ts_max = d[DO_TS_SIZE], fr_max = d[DO_FR_SIZE];
	const int in_ts[] = { DO_TS_NEXT, DO_TS_INTERP, DO_TS_CURRENT_FRAME,
			      DO_TS_NATIVE_THREAD_ID };
	const int in_fr[] = { DO_FR_PREVIOUS, DO_FR_EXECUTABLE,
			      DO_FR_INSTR_PTR, DO_FR_LOCALSPLUS, DO_FR_OWNER };

	for (size_t i = 0; i < sizeof(in_ts) / sizeof(in_ts[0]); i++)
		if (d[in_ts[i]] + 8 > ts_max)
			return snprintf(why, wlen, "%s: implausible debug "
					"offsets", file), false;
	for (size_t i = 0; i < sizeof(in_fr) / sizeof(in_fr[0]); i++)
		if (d[in_fr[i]] > fr_max)
			return snprintf(why, wlen, "%s: implausible debug "
					"offsets", file), false;
	if (d[DO_CO_CODE_ADAPTIVE] < 16 ||
	    d[DO_CO_CODE_ADAPTIVE] > d[DO_CO_SIZE])
		return snprintf(why, wlen, "%s: implausible debug offsets",
				file), false;
	*L = (struct python_layout){
		.minor = (unsigned)(d[DO_VERSION] >> 16 & 0xff),
		.rt_interp_head = (uint32_t)d[DO_RT_INTERPRETERS_HEAD],
		/* struct pyinterpreters: head, then main */
		.rt_interp_main = (uint32_t)d[DO_RT_INTERPRETERS_HEAD] + 8,
		.is_gil_ptr = (uint32_t)d[DO_IS_CEVAL_GIL],
		.is_threads_head = (uint32_t)d[DO_IS_THREADS_HEAD],
		.ts_next = (uint32_t)d[DO_TS_NEXT],
		.ts_interp = (uint32_t)d[DO_TS_INTERP],
		.ts_native_tid = (uint32_t)d[DO_TS_NATIVE_THREAD_ID],
		.ts_frame = (uint32_t)d[DO_TS_CURRENT_FRAME],
		/* PyThreadState: prev, next, interp, eval_breaker */
		.ts_eval_breaker = (uint32_t)d[DO_TS_INTERP] + 8,
		.fr_code = (uint32_t)d[DO_FR_EXECUTABLE],
		.fr_previous = (uint32_t)d[DO_FR_PREVIOUS],
		.fr_instr = (uint32_t)d[DO_FR_INSTR_PTR],
		.fr_owner = (uint32_t)d[DO_FR_OWNER],
		.fr_localsplus = (uint32_t)d[DO_FR_LOCALSPLUS],
		.co_firstlineno = (uint32_t)d[DO_CO_FIRSTLINENO],
		.co_filename = (uint32_t)d[DO_CO_FILENAME],
		.co_name = (uint32_t)d[DO_CO_NAME],
		.co_linetable = (uint32_t)d[DO_CO_LINETABLE],
		/* PyCodeObject: ..., int _co_firsttraceable; void *co_extra;
		 * char co_code_adaptive[] (checked against each code
		 * object's size when read) */
		.co_firsttraceable = (uint32_t)d[DO_CO_CODE_ADAPTIVE] - 16,
		.co_code = (uint32_t)d[DO_CO_CODE_ADAPTIVE],
		.str_ascii_data = (uint32_t)d[DO_STR_ASCII_SIZE],
		/* PyCompactUnicodeObject: + utf8_length, utf8 */
		.str_compact_data = (uint32_t)d[DO_STR_ASCII_SIZE] + 16,
		.tp_flags = (uint32_t)d[DO_TP_FLAGS],
		.tp_basicsize = 32,
		.ht_cached_keys = 880,
		.dict_keys = (uint32_t)d[DO_DICT_MA_KEYS],
		.dict_values = (uint32_t)d[DO_DICT_MA_VALUES],
		.is_modules = d[DO_IS_IMPORTS_MODULES] + 8 <= d[DO_IS_SIZE]
				      ? (uint32_t)d[DO_IS_IMPORTS_MODULES]
				      : 0,
		/* PyGenObject's frame (3.13's headers; not in its debug
		 * offsets): each use checks the object's type name */
		.gen_iframe = 72,
	};
	return true;
}

static bool is_pie(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool pie = false;
	GElf_Ehdr eh;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);

	if (e && gelf_getehdr(e, &eh))
		pie = eh.e_type == ET_DYN;
	if (e)
		elf_end(e);
	close(fd);
	return pie;
}

int python_detect(const char *path, struct python_info *pi)
{
	char interp[4096];
	struct elf_sym syms[] = {
		{ "_PyRuntime", 0, 0 },	   { "_PyEval_EvalFrameDefault", 0, 0 },
		{ "PyCode_Type", 0, 0 },   { "PyUnicode_Type", 0, 0 },
		{ "Py_Version", 0, 0 },	   { "Py_GetVersion", 0, 0 },
		{ "_Py_HandlePending", 0, 0 },
	};
	const int nsyms = (int)(sizeof(syms) / sizeof(syms[0]));
	uint8_t *code = NULL;
	int r;

	memset(pi, 0, sizeof(*pi));
	if (shebang(path, interp, sizeof(interp)))
		path = interp;
	snprintf(pi->path, sizeof(pi->path), "%s", path);
	r = elf_scan(path, syms, nsyms, 0, 0, NULL, NULL, NULL);
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
		for (int i = 0; i < nsyms; i++)
			syms[i].value = syms[i].size = 0;
		r = elf_scan(pi->object, syms, nsyms, 0, 0, NULL, NULL, NULL);
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
				 "scheduling needs CPython 3.11 to 3.13)",
				 path);
		} else if (!strncmp(base, "python", 6)) {
			pi->is_python = true;
			snprintf(pi->why, sizeof(pi->why),
				 "%s has no _PyRuntime symbol (not CPython, "
				 "or its dynamic symbols are stripped): "
				 "Python-level scheduling needs CPython 3.11 "
				 "to 3.13",
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
	unsigned major = pi->version >> 24, minor = pi->version >> 16 & 0xff;
	bool free_threaded = !strncmp(base, "python", 6) && bl > 7 &&
			     base[bl - 1] == 't' && base[bl - 2] >= '0' &&
			     base[bl - 2] <= '9';

	if (major == 3 && minor == 11) {
		pi->L = layout_311;
	} else if (major == 3 && minor == 12) {
		pi->L = layout_312;
	} else if (major == 3 && minor >= 13) {
		bool ft = false;

		if (!debug_offsets_layout(file, syms[0].value, &pi->L, &ft,
					  pi->why, sizeof(pi->why)) &&
		    !free_threaded)
			return 0;
		free_threaded |= ft;
	}
	if (free_threaded) {
		/* python3.13t: PEP 703's build, no GIL to hand over */
		snprintf(pi->why, sizeof(pi->why),
			 "%s is a free-threaded CPython build (no GIL): "
			 "Python-level scheduling needs the GIL (CPython "
			 "3.11 to 3.13)",
			 path);
		return 0;
	}
	if (!pi->version) {
		/* Py_Version is 3.11's */
		snprintf(pi->why, sizeof(pi->why),
			 "%s: CPython before 3.11 (no Py_Version): "
			 "Python-level scheduling supports 3.11 to 3.13",
			 path);
		return 0;
	}
	if (major != 3 || minor < 11 || minor > 13) {
		snprintf(pi->why, sizeof(pi->why),
			 "CPython %u.%u: Python-level scheduling supports "
			 "3.11 to 3.13",
			 major, minor);
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
	if (minor == 11 && !r && code)
		pi->check_pc = find_check(code, syms[1].size, syms[1].value,
					  pi->runtime +
						  pi->L.rt_signals_pending,
					  pi->L.rt_signals_pending,
					  pi->object[0]
						  ? got_slot(file, "_PyRuntime")
						  : 0);
	else if (minor >= 12)
		/* every check calls it (CHECK_EVAL_BREAKER) */
		pi->check_pc = syms[6].value;
	free(code);
	if (!pi->check_pc) {
		snprintf(pi->why, sizeof(pi->why),
			 minor == 11 ? "the eval-breaker check of %s was not "
				       "found (an unusual build)"
				     : "%s has no _Py_HandlePending symbol "
				       "(its symbol table is stripped)",
			 path);
		return 0;
	}
	/* a position-independent executable with the interpreter linked in
	 * (an embedding program, a static --enable-shared-less build with
	 * PIE): its addresses are offsets too, from its own first mapping */
	if (!pi->object[0] && is_pie(path) && !realpath(path, pi->object))
		pi->object[0] = 0;
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

static int rd(struct pypol *p, struct session *s, uint64_t a, void *buf,
	      size_t len)
{
	if (!a)
		return -EFAULT;
	return session_peek_in(s, p->proc, a, buf, len);
}

static uint64_t rd64(struct pypol *p, struct session *s, uint64_t a)
{
	uint64_t v = 0;

	if (rd(p, s, a, &v, 8))
		return 0;
	return v;
}

static int poke(struct pypol *p, struct session *s, uint64_t a,
		const void *buf, size_t len)
{
	return session_poke_in(s, p->proc, a, buf, len);
}

/* A str object as ASCII (other characters as '?'). */
static int read_str(struct pypol *p, struct session *s, uint64_t o,
		    char *buf, size_t len)
{
	const struct python_layout *L = &p->pi.L;
	uint8_t h[STR_STATE + 4];

	buf[0] = 0;
	if (rd(p, s, o, h, sizeof(h)))
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
	if (rd(p, s, o + (ascii ? L->str_ascii_data : L->str_compact_data), buf,
	       n))
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
			  const struct session_thread *st)
{
	const struct python_layout *L = &p->pi.L;
	int tid = st->tid;
	bool main = st->first;

	/* the main thread's is the interpreter's first (3.13+: the list's
	 * oldest); its native id may be another process's (a run forked
	 * from a checkpoint) */
	if (main && L->is_initial_thread)
		return p->interp + L->is_initial_thread;
	if (thread < p->nth && p->th[thread].tid == tid && p->th[thread].tstate)
		return p->th[thread].tstate;
	uint64_t ts = rd64(p, s, p->interp + L->is_threads_head), found = 0;
	int matches = 0;

	for (int n = 0; ts && n < PY_MAX_THREADS; n++) {
		uint64_t ntid = rd64(p, s, ts + L->ts_native_tid);
		uint64_t next = rd64(p, s, ts + L->ts_next);

		if (main ? !next : (int)ntid == tid) {
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

/* The innermost frame of thread state ts. */
static uint64_t current_frame(struct pypol *p, struct session *s, uint64_t ts)
{
	const struct python_layout *L = &p->pi.L;
	uint64_t f = rd64(p, s, ts + L->ts_frame);

	return L->cframe && f ? rd64(p, s, f + L->cf_current_frame) : f;
}

struct py_frame {
	uint64_t addr, code, previous, self;
	bool gen;		/* a generator's or coroutine's own frame */
	char file[160], func[96];
	int line;
};

/* One complete frame at f (false when it is incomplete or unreadable). */
static bool read_frame(struct pypol *p, struct session *s, uint64_t f,
		       struct py_frame *out, bool want_loc)
{
	const struct python_layout *L = &p->pi.L;
	uint8_t fr[256], co[512];
	uint64_t code, prev_instr, previous;
	size_t frlen = L->fr_localsplus + 8, colen = L->co_code;

	memset(out, 0, sizeof(*out));
	if (frlen > sizeof(fr) || colen > sizeof(co) ||
	    L->fr_owner >= frlen || rd(p, s, f, fr, frlen))
		return false;
	memcpy(&code, fr + L->fr_code, 8);
	memcpy(&previous, fr + L->fr_previous, 8);
	memcpy(&prev_instr, fr + L->fr_instr, 8);
	memcpy(&out->self, fr + L->fr_localsplus, 8);
	out->addr = f;
	out->code = code;
	out->previous = previous;
	out->gen = fr[L->fr_owner] == FR_OWNED_BY_GENERATOR;
	/* 3.12+: the C stack's entry frame runs no Python code */
	if (L->minor >= 12 && fr[L->fr_owner] == FR_OWNED_BY_CSTACK)
		return false;
	if (rd(p, s, code, co, colen))
		return false;
	uint64_t type, fn, nm, lt;
	int32_t first, traceable;

	memcpy(&type, co + OB_TYPE, 8);
	if (type != p->pi.code_type)
		return false;
	memcpy(&traceable, co + L->co_firsttraceable, 4);
	int64_t idx = ((int64_t)prev_instr - (int64_t)(code + L->co_code)) / 2;

	/* _PyFrame_IsIncomplete(): still in its prologue */
	if (fr[L->fr_owner] != FR_OWNED_BY_GENERATOR && idx < traceable)
		return false;
	memcpy(&fn, co + L->co_filename, 8);
	memcpy(&nm, co + L->co_name, 8);
	read_str(p, s, nm, out->func, sizeof(out->func));
	if (!want_loc)
		return true;
	memcpy(&lt, co + L->co_linetable, 8);
	memcpy(&first, co + L->co_firstlineno, 4);
	read_str(p, s, fn, out->file, sizeof(out->file));
	out->line = -1;
	uint64_t n = rd64(p, s, lt + BYTES_SIZE);

	if (n && n < 65536 && idx >= 0) {
		uint8_t *tab = malloc(n);

		/* an instruction without a line (a loop's jump back, a
		 * cleanup) is shown at the line before it */
		if (tab && !rd(p, s, lt + BYTES_DATA, tab, n))
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

	if (rd(p, s, keys, h, sizeof(h)))
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
		uint64_t kp = rd64(p, s, entries + (uint64_t)i * esz + koff);

		if (!kp || read_str(p, s, kp, k, sizeof(k)) || strcmp(k, key))
			continue;
		if (values)
			return values + 8 * (uint64_t)i;
		return entries + (uint64_t)i * esz + koff + 8;
	}
	return 0;
}

/*
 * threading.Thread's _name of obj, a "managed dict" instance: its
 * attributes are values split from the keys its type caches, or a dict.
 * 3.11: the values' and the dict's pointers before the object (-4, -3
 * words); 3.12: one word at -3, the values' pointer minus 1 (bit 0 set);
 * 3.13+: the values inline after the object (tp_basicsize; a 'valid'
 * byte, the array at +8), else the dict at -3.  A dict's ma_values points
 * at the array (3.11, 3.12) or at the values' header (3.13+).
 */
static void thread_obj_name(struct pypol *p, struct session *s, uint64_t obj,
			    char *buf, size_t len)
{
	const struct python_layout *L = &p->pi.L;
	uint64_t type = rd64(p, s, obj + OB_TYPE), slot = 0, flags;
	uint64_t values = 0, dict = 0, keys;
	uint64_t array = L->minor >= 13 ? 8 : 0;

	buf[0] = 0;
	if (!type)
		return;
	flags = rd64(p, s, type + L->tp_flags);
	if (!(flags & TPFLAGS_MANAGED_DICT))
		return;
	keys = rd64(p, s, type + L->ht_cached_keys);
	if (L->minor == 11) {
		values = rd64(p, s, obj - 32);
		dict = rd64(p, s, obj - 24);
	} else if (L->minor == 12) {
		uint64_t dv = rd64(p, s, obj - 24);

		if (dv & 1)
			values = dv + 1; /* stored as values - 1 */
		else
			dict = dv;
	} else {
		uint8_t valid = 0;
		uint64_t v = obj + rd64(p, s, type + L->tp_basicsize);

		if ((flags & TPFLAGS_INLINE_VALUES) && !rd(p, s, v + 3, &valid, 1) &&
		    valid)
			values = v + array;
		else
			dict = rd64(p, s, obj - 24);
	}
	if (values)
		slot = keys_lookup(p, s, keys, values, "_name");
	else if (dict) {
		uint64_t dvals = rd64(p, s, dict + L->dict_values);

		slot = keys_lookup(p, s, rd64(p, s, dict + L->dict_keys),
				   dvals ? dvals + array : 0, "_name");
	}
	if (slot)
		read_str(p, s, rd64(p, s, slot), buf, len);
}

/* ---- asyncio's tasks ---------------------------------------------- */

/* The tp_name of obj's type ("coroutine", "int", "_asyncio.Task"); ""
 * if unreadable. */
static void type_name(struct pypol *p, struct session *s, uint64_t obj,
		      char *buf, size_t len)
{
	uint64_t type = rd64(p, s, obj + OB_TYPE);
	uint64_t np = type ? rd64(p, s, type + TP_NAME) : 0;

	buf[0] = 0;
	if (!np || rd(p, s, np, buf, len - 1)) {
		buf[0] = 0;
		return;
	}
	buf[len - 1] = 0;
}

/* d[key] for a dict d with str keys; 0 if absent or unreadable. */
static uint64_t dict_get(struct pypol *p, struct session *s, uint64_t d,
			 const char *key)
{
	const struct python_layout *L = &p->pi.L;
	uint64_t keys = rd64(p, s, d + L->dict_keys);
	uint64_t vals = rd64(p, s, d + L->dict_values), slot;

	if (!keys)
		return 0;
	slot = keys_lookup(p, s, keys,
			   vals ? vals + (L->minor >= 13 ? 8 : 0) : 0, key);
	return slot ? rd64(p, s, slot) : 0;
}

/*
 * asyncio's {loop: running task} dict, asyncio.tasks._current_tasks (the
 * C accelerator's own, which every version from 3.11 to 3.13 exports
 * there), found through sys.modules once asyncio is imported; 0 before.
 */
static uint64_t current_tasks(struct pypol *p, struct session *s)
{
	const struct python_layout *L = &p->pi.L;
	char tn[16];

	if (p->ctasks || !p->interp || !L->is_modules ||
	    p->ctasks_tries >= PY_TASKS_TRIES)
		return p->ctasks;
	p->ctasks_tries++;
	uint64_t mods = rd64(p, s, p->interp + L->is_modules);
	uint64_t mod = mods ? dict_get(p, s, mods, "asyncio.tasks") : 0;
	uint64_t md = mod ? rd64(p, s, mod + MODULE_DICT) : 0;
	uint64_t ct = md ? dict_get(p, s, md, "_current_tasks") : 0;

	if (ct) {
		type_name(p, s, ct, tn, sizeof(tn));
		if (!strcmp(tn, "dict"))
			p->ctasks = ct;
	}
	return p->ctasks;
}

/* A task's name from its object: the C Task (_asyncio) keeps its
 * coroutine and then its name (task_coro, task_name: 3.11 to 3.13), found
 * by the coroutine's address; a name still stored as its number (3.13)
 * reads "Task-N"; a pure-Python Task has its _name attribute. */
static bool task_name(struct pypol *p, struct session *s, uint64_t task,
		      uint64_t coro, char *buf, size_t len)
{
	uint64_t w[PY_TASK_WORDS];
	char tn[16];

	buf[0] = 0;
	if (rd(p, s, task, w, sizeof(w)))
		return false;
	for (int k = 2; k + 1 < PY_TASK_WORDS; k++) {
		if (w[k] != coro)
			continue;
		type_name(p, s, w[k + 1], tn, sizeof(tn));
		if (!strcmp(tn, "str"))
			return !read_str(p, s, w[k + 1], buf, len) && buf[0];
		if (strcmp(tn, "int"))
			return false;
		/* a small int: 3.11, ob_size then 30-bit digits; 3.12+, a
		 * tag (digits << 3 | sign) then the digits */
		uint64_t h[4];

		if (rd(p, s, w[k + 1], h, sizeof(h)))
			return false;
		uint64_t n = p->pi.L.minor >= 12 ? h[2] >> 3 : h[2];
		uint64_t v = (uint32_t)h[3] & 0x3fffffff;

		if (n > 1)
			v |= (h[3] >> 32 & 0x3fffffff) << 30;
		if (n > 2)
			return false;
		snprintf(buf, len, "Task-%llu", (unsigned long long)v);
		return true;
	}
	thread_obj_name(p, s, task, buf, len);
	return buf[0] != 0;
}

/*
 * The running asyncio task whose coroutine owns the generator frame
 * coro_frame (the outermost of the coroutine frames a thread is in), by
 * name; false when none (no task running, not a coroutine).
 */
static bool running_task(struct pypol *p, struct session *s,
			 uint64_t coro_frame, char *buf, size_t len)
{
	const struct python_layout *L = &p->pi.L;
	uint64_t coro = coro_frame - L->gen_iframe;
	char tn[16];
	uint8_t h[DK_INDICES];

	buf[0] = 0;
	if (!L->gen_iframe)
		return false;
	type_name(p, s, coro, tn, sizeof(tn));
	if (strcmp(tn, "coroutine"))
		return false;
	uint64_t ct = current_tasks(p, s);
	uint64_t keys = ct ? rd64(p, s, ct + L->dict_keys) : 0;

	if (!keys || rd(p, s, keys, h, sizeof(h)))
		return false;
	uint8_t log2_index = h[DK_LOG2_INDEX_BYTES];
	int64_t n;

	memcpy(&n, h + DK_NENTRIES, 8);
	if (log2_index > 30 || n < 0 || n > 64 || h[DK_KIND] != 0)
		return false;
	uint64_t entries = keys + DK_INDICES + (1ull << log2_index);

	/* one entry per running loop: {hash, key, value} */
	for (int64_t i = 0; i < n; i++) {
		uint64_t task = rd64(p, s, entries + (uint64_t)i * 24 + 16);

		if (task && task_name(p, s, task, coro, buf, len))
			return true;
	}
	return false;
}

static bool validate(struct pypol *p, struct session *s)
{
	const struct python_layout *L = &p->pi.L;
	uint64_t rt = p->pi.runtime;
	uint64_t interp = rd64(p, s, rt + L->rt_interp_head), gil;
	uint32_t locked = 2;

	if (!interp || rd64(p, s, rt + L->rt_interp_main) != interp)
		return false;
	uint64_t ts = rd64(p, s, interp + L->is_threads_head);

	if (!ts || rd64(p, s, ts + L->ts_interp) != interp ||
	    (L->is_initial_thread &&
	     rd64(p, s, interp + L->is_initial_thread + L->ts_interp) != interp))
		return false;
	/* 3.12+: the interpreter's GIL (its own, or the main one's) */
	gil = L->is_gil_ptr ? rd64(p, s, interp + L->is_gil_ptr)
			    : rt + L->rt_gil;
	if (!gil || rd(p, s, gil + GIL_LOCKED, &locked, 4) || locked > 1)
		return false;
	p->interp = interp;
	p->gil = gil;
	return true;
}

/* This run's addresses: a libpython's offsets plus where it is mapped
 * (the same in every run unless the program's process changed). */
static bool locate(struct pypol *p, struct session *s)
{
	uint64_t at;

	if (p->located)
		return true;
	if (!p->im->rel.object[0]) {
		p->located = true;
		return true;
	}
	if (!(at = session_object_start_in(s, p->proc, p->im->rel.object)))
		return false;
	p->pi = p->im->rel;
	p->pi.runtime += at;
	p->pi.code_type += at;
	p->pi.unicode_type += at;
	p->pi.text_lo += at;
	p->pi.text_hi += at;
	p->pi.check_pc += at;
	p->located = true;
	return true;
}

/* The interpreter's state can be read: checked once its process has a
 * second thread (p->threads), when scheduling at its points begins (a
 * mismatch then is the run's: pol_conclude says unsupported); before,
 * for descriptions only (a single-threaded program: asyncio), tried again
 * until it matches (the interpreter may not be initialised yet). */
static bool ready(struct pypol *p, struct session *s)
{
	if (!p->checked && p->threads > 1) {
		p->checked = true;
		p->bad = !locate(p, s) || !validate(p, s);
	}
	return p->checked && !p->bad;
}

static bool ready_to_describe(struct pypol *p, struct session *s)
{
	if (p->checked)
		return !p->bad;
	if (!p->valid)
		p->valid = locate(p, s) && validate(p, s);
	return p->valid;
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

static void proc_free(struct pypol *p)
{
	if (!p)
		return;
	free(p->th);
	free(p);
}

static void pol_begin(void *ctx)
{
	struct pyroot *r = ctx;

	for (int i = 0; i < r->nprocs; i++)
		proc_free(r->procs[i]);
	free(r->procs);
	r->procs = NULL;
	r->nprocs = 0;
}

/*
 * The state of the process that thread runs in, when the policy applies
 * to it (the tracer adopted its image at its exec, or it is a fork of
 * such a process); NULL otherwise.  Made at the process's first use, and
 * again when it runs another interpreter (an exec).
 */
static struct pypol *proc_of(struct pyroot *r, struct session *s, int thread,
			     struct session_thread *st)
{
	struct session_thread tmp;

	if (!st)
		st = &tmp;
	if (session_thread_info(s, thread, st) || !st->policy || !st->image ||
	    st->proc < 0)
		return NULL;
	const struct pyimage *im = (const struct pyimage *)st->image;

	if (st->proc >= r->nprocs) {
		int n = st->proc + 8;
		struct pypol **v = realloc(r->procs, (size_t)n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + r->nprocs, 0, (size_t)(n - r->nprocs) * sizeof(*v));
		r->procs = v;
		r->nprocs = n;
	}
	struct pypol *p = r->procs[st->proc];

	if (p && p->im != im) {
		proc_free(p);
		p = r->procs[st->proc] = NULL;
	}
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return NULL;
		p->im = im;
		p->proc = st->proc;
		p->pi = im->rel;
		p->c_points = r->c_points;
		p->checks_thread = -1;
		r->procs[st->proc] = p;
	}
	/* its threads so far (a second one: scheduling at its points) */
	int n = session_nthreads(s);

	for (; p->counted < n; p->counted++) {
		struct session_thread o;

		if (!session_thread_info(s, p->counted, &o) &&
		    o.proc == p->proc)
			p->threads++;
	}
	return p;
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
	struct session_thread st;
	struct pypol *p = proc_of(ctx, s, 0, &st);

	if (!p || !locate(p, s))
		return;
	const struct python_layout *L = &p->pi.L;
	uint64_t rt, interp, ts, ntid;

	rt = p->pi.runtime;
	interp = rd64(p, s, rt + L->rt_interp_main);
	if (!interp || rd64(p, s, rt + L->rt_interp_head) != interp)
		return;
	if (L->is_initial_thread) {
		ts = interp + L->is_initial_thread;
	} else {
		/* the oldest thread state: the list's last */
		uint64_t next = rd64(p, s, interp + L->is_threads_head);

		ts = 0;
		for (int n = 0; next && n < PY_MAX_THREADS; n++) {
			ts = next;
			next = rd64(p, s, ts + L->ts_next);
		}
	}
	if (!ts || rd64(p, s, ts + L->ts_interp) != interp)
		return;
	ntid = rd64(p, s, ts + L->ts_native_tid);
	if ((int)ntid != old_tid)
		return;
	ntid = (uint64_t)st.tid;
	poke(p, s, ts + L->ts_native_tid, &ntid, 8);
}

/* Could another thread want the GIL: one that can run, or a timed
 * waiter (the GIL's own waits are timed). */
static bool contended(struct pypol *p, struct session *s, int thread)
{
	int n = session_nthreads(s);

	for (int i = 0; i < n; i++) {
		struct session_thread st;

		/* the interpreter's threads: another process's want
		 * no GIL (not this one's, another interpreter's either) */
		if (i == thread || session_thread_info(s, i, &st) ||
		    !st.policy || st.proc != p->proc)
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
	const struct python_layout *L = &p->pi.L;
	struct session_thread st;

	if (session_thread_info(s, thread, &st) || !st.policy)
		return false;
	ensure_threads(p, s);
	uint64_t ts = tstate_of(p, s, thread, &st);
	uint64_t f = ts ? current_frame(p, s, ts) : 0;
	uint64_t code = f ? rd64(p, s, f + L->fr_code) : 0;
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
	if (rd64(p, s, code + OB_TYPE) != p->pi.code_type ||
	    read_str(p, s, rd64(p, s, code + L->co_filename), file, sizeof(file)))
		return false;
	bool lib = is_stdlib(file);

	if (!p->lib[h].code)
		p->lib[h].code = code, p->lib[h].lib = lib;
	return lib;
}

static bool pol_want_point(void *ctx, struct session *s, int thread)
{
	struct pypol *p = proc_of(ctx, s, thread, NULL);

	if (!p || !ready(p, s) || !contended(p, s, thread))
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

/* 3.13+: EB_PTLOOM_BIT of the thread state ts's eval breaker on or off;
 * true if it was changed. */
static bool eb_bit(struct pypol *p, struct session *s, uint64_t ts, bool on)
{
	uint64_t a = ts + p->pi.L.ts_eval_breaker, v;

	if (!ts || rd(p, s, a, &v, 8) || !!(v & EB_PTLOOM_BIT) == on)
		return false;
	v = on ? v | EB_PTLOOM_BIT : v & ~(uint64_t)EB_PTLOOM_BIT;
	return poke(p, s, a, &v, 8) == 0;
}

static void pol_resume(void *ctx, struct session *s, int thread)
{
	struct session_thread st;
	struct pypol *p = proc_of(ctx, s, thread, &st);
	uint32_t one = 1;

	if (!p || !ready(p, s))
		return;
	const struct python_layout *L = &p->pi.L;
	bool want = contended(p, s, thread);

	/* keep the breaker set while the GIL may be wanted, so every check
	 * reaches the handler's breakpoint (3.11, 3.12: the interpreter's,
	 * which take_gil() and the handler recompute) */
	if (L->is_eval_breaker) {
		if (want)
			poke(p, s, p->interp + L->is_eval_breaker, &one,
				     4);
		/* 3.12 recomputes it after every check: a flag keeps it */
		if (L->is_keep_breaker && (want || p->kept)) {
			uint32_t v = want;

			if (poke(p, s, p->interp + L->is_keep_breaker, &v,
					 4) == 0)
				p->kept = want;
		}
		return;
	}
	/* 3.13+: each thread has its own; a bit nothing in the interpreter
	 * clears, set in the thread about to run and in the GIL's holder
	 * while the GIL may be wanted, cleared otherwise */
	ensure_threads(p, s);
	if (thread >= p->nth)
		return;
	struct py_thread *t = &p->th[thread];
	uint64_t ts = tstate_of(p, s, thread, &st);

	if (ts && (t->eb_tstate != ts || t->eb_set != want)) {
		eb_bit(p, s, ts, want);
		t->eb_tstate = ts;
		t->eb_set = want;
	}
	uint32_t locked = 0;
	uint64_t holder = rd64(p, s, p->gil + GIL_LAST_HOLDER);

	if (holder && holder != ts && !rd(p, s, p->gil + GIL_LOCKED, &locked, 4) &&
	    locked)
		eb_bit(p, s, holder, want);
}

static bool gil_wait(const struct pypol *p, const struct alt *a)
{
	uint64_t c = p->gil + GIL_COND;

	return a->timeout && a->obj >= c && a->obj < c + 48;
}

static void keep_only(struct choice *c, int i)
{
	c->alts[0] = c->alts[i];
	c->alts[0].cost = 0;
	c->nalts = 1;
}

/* Thread stopped at a C-level point in code outside the interpreter (a
 * C extension's racy instruction race discovery made a point). */
static bool at_extension_point(struct pypol *p, struct session *s, int thread)
{
	struct session_thread st;

	return !session_thread_info(s, thread, &st) &&
	       (st.kind == OP_ATOMIC || st.kind == OP_ACCESS) &&
	       (st.pc < p->pi.text_lo || st.pc >= p->pi.text_hi);
}

/*
 * A race-discovery run samples every C-level interleaving (no pruning),
 * and looks for two threads in a C extension's code without the GIL at
 * the same time: a thread at one of its points waits while another can
 * run (at most PY_INTERVAL choices in a row), so the next one that
 * releases the GIL gets there too.  Under the GIL, everything else runs
 * one thread at a time whatever the schedule.
 */
static void park_extension_threads(struct pypol *p, struct session *s,
				   struct choice *c)
{
	bool others = false;
	int k = 0;

	for (int i = 0; i < c->nalts && !others; i++)
		others = !c->alts[i].timeout &&
			 !at_extension_point(p, s, c->alts[i].thread);
	if (!others || p->parked >= PY_INTERVAL) {
		p->parked = 0;
		return;
	}
	for (int i = 0; i < c->nalts; i++)
		if (c->alts[i].timeout ||
		    !at_extension_point(p, s, c->alts[i].thread))
			c->alts[k++] = c->alts[i];
	p->parked += k < c->nalts;
	c->nalts = k;
}

static void pol_shape(void *ctx, struct session *s, struct choice *c)
{
	struct pypol *p;
	struct session_thread ct, at;
	int h = -1, other = -1;

	if (c->kind != DEC_RUN || c->current < 0)
		return;
	/* another process's choice: its own C-level points */
	p = proc_of(ctx, s, c->current, &ct);
	if (!p || !ready(p, s))
		return;
	if (session_observing(s)) {
		park_extension_threads(p, s, c);
		return;
	}
	for (int i = 0; i < c->nalts && h < 0; i++)
		if (!c->alts[i].timeout && c->alts[i].kind == OP_PYCHECK &&
		    !session_thread_info(s, c->alts[i].thread, &at) &&
		    at.proc == p->proc)
			h = i;
	if (h >= 0) {
		/* the GIL holder at a check: who can run without the GIL
		 * goes first, for free, until it waits for the GIL (the
		 * interpreter's threads: another process's are C-level; not
		 * a thread preempted at a C extension's point: running it
		 * is a choice) */
		for (int i = 0; i < c->nalts; i++)
			if (!c->alts[i].timeout && i != h &&
			    !session_thread_info(s, c->alts[i].thread, &at) &&
			    at.policy && at.proc == p->proc &&
			    (other < 0 || c->alts[i].thread == c->current) &&
			    !at_extension_point(p, s, c->alts[i].thread))
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
	/* ... unless the GIL is free: its holder dropped it around a call
	 * (a sleep, a blocking read, a Lock's wait) and has not taken it
	 * back, and a woken waiter may take it first, as it does natively
	 * while the dropper is in its syscall: the program's threads then
	 * run in another order (a preemption) */
	uint32_t locked = 1;

	if (!rd(p, s, p->gil + GIL_LOCKED, &locked, 4) && !locked)
		return;
	struct session_thread cur;

	/* the racy instructions race discovery found in a C extension are
	 * points by default; with --points, the C-level calls too */
	if (!session_thread_info(s, c->current, &cur) &&
	    ((p->c_points && cur.kind == OP_CALL) || cur.kind == OP_ATOMIC ||
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
	if (!ready_to_describe(p, s) || session_thread_info(s, thread, &st) ||
	    st.state == SCHED_DEAD)
		return;
	ensure_threads(p, s);
	uint64_t ts = tstate_of(p, s, thread, &st);

	if (!ts)
		return;
	uint64_t f = current_frame(p, s, ts);
	struct py_frame fr, inner = { 0 }, user = { 0 };
	bool have_inner = false, have_user = false;
	bool need_name = thread < p->nth && !p->th[thread].name[0];
	/* the outermost of the innermost run of coroutine frames: an asyncio
	 * task's own coroutine, when one runs */
	uint64_t coro = 0;
	bool coro_done = false;

	for (int n = 0; f && n < PY_MAX_FRAMES; n++, f = fr.previous) {
		bool loc = !have_user;

		if (!read_frame(p, s, f, &fr, loc)) {
			if (!fr.code)
				break;
			continue;
		}
		if (fr.gen && !coro_done)
			coro = fr.addr;
		else if (coro)
			coro_done = true;
		if (loc && !have_inner) {
			inner = fr;
			have_inner = true;
		}
		if (loc && !have_user && fr.file[0] && !is_stdlib(fr.file)) {
			user = fr;
			have_user = true;
		}
		if (need_name && !st.first &&
		    (!strcmp(fr.func, "_bootstrap") ||
		     !strcmp(fr.func, "_bootstrap_inner")))
			thread_obj_name(p, s, fr.self, p->th[thread].name,
					sizeof(p->th[thread].name));
		if (!need_name && have_user && (coro_done || !fr.gen))
			break;
	}
	if (st.first && thread < p->nth && !p->th[thread].name[0])
		snprintf(p->th[thread].name, sizeof(p->th[thread].name),
			 "MainThread");
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
	/* the thread's threading name: every event names it; and the
	 * asyncio task running there */
	char task[64] = "";

	if (coro)
		running_task(p, s, coro, task, sizeof(task));
	if (thread < p->nth && p->th[thread].name[0] && n < len)
		n += (size_t)snprintf(buf + n, len - n, task[0] ? " (%s, task "
							"%s)" : " (%s)",
				      p->th[thread].name, task);
	else if (task[0] && n < len)
		snprintf(buf + n, len - n, " (task %s)", task);
}

static void pol_where(void *ctx, struct session *s, int thread, char *buf,
		      size_t len)
{
	struct session_thread st;
	struct pypol *p = proc_of(ctx, s, thread, &st);
	char c[LOC_MAX];

	buf[0] = 0;
	if (!p)
		return;
	describe(p, s, thread, buf, len);
	/* in a C extension's code: its function and line, then the Python
	 * frame that called it */
	if (!ready(p, s) || !at_extension_point(p, s, thread))
		return;
	session_code_location(s, st.proc, st.pc, c, sizeof(c));
	if (!c[0])
		return;
	if (buf[0]) {
		char py[LOC_MAX];

		snprintf(py, sizeof(py), "%s", buf);
		snprintf(buf, len, "%s from %s", c, py);
	} else {
		snprintf(buf, len, "%s", c);
	}
}

static void pol_name(void *ctx, struct session *s, int thread, char *buf,
		     size_t len)
{
	struct pypol *p = proc_of(ctx, s, thread, NULL);
	char tmp[LOC_MAX];

	buf[0] = 0;
	if (!p)
		return;
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
	struct pyroot *root = ctx;
	char where[LOC_MAX], exc[LOC_MAX];

	/* an interpreter's memory did not match its layout: the run was not
	 * scheduled at the Python level there, and without the libc points
	 * (own_points) not at the C level either; never a pass */
	for (int k = 0; k < root->nprocs; k++) {
		struct pypol *p = root->procs[k];

		if (!p || !p->checked || !p->bad || r->failure != FAIL_NONE)
			continue;
		r->failure = FAIL_UNSUPPORTED;
		snprintf(r->message, sizeof(r->message),
			 "%s: the running interpreter does not match CPython "
			 "%u.%u's layout (Python-level scheduling is not "
			 "possible; PTLOOM_PYTHON=off schedules it at the C "
			 "level)",
			 p->pi.path, p->pi.version >> 24,
			 p->pi.version >> 16 & 0xff);
		return;
	}

	if ((r->failure == FAIL_EXIT || r->failure == FAIL_CRASH) &&
	    r->output &&
	    python_traceback(r->output, r->output_len, where, sizeof(where),
			     exc, sizeof(exc))) {
		snprintf(r->location, sizeof(r->location), "%s", where);
		if (exc[0])
			snprintf(r->message, sizeof(r->message), "%s", exc);
	}
	/* the interpreters' own objects, in their terms (an object's
	 * address carries its process image's tag above bit 48) */
	for (size_t i = 0; i < r->nsyms; i++) {
		struct sym_entry *e = &r->syms[i];
		uint64_t addr = EVENT_ADDR(e->addr);
		const char *n = NULL;

		if (!e->data)
			continue;
		for (int k = 0; k < root->nprocs && !n; k++) {
			struct pypol *p = root->procs[k];
			uint64_t gil = p ? p->gil : 0, a = addr - gil;

			/* 0: not this run's interpreter objects */
			if (!gil || addr < gil || addr >= gil + GIL_END)
				continue;
			n = a >= GIL_SWITCH_MUTEX ? "GIL.switch_mutex"
			    : a >= GIL_SWITCH_COND ? "GIL.switch_cond"
			    : a >= GIL_MUTEX	   ? "GIL.mutex"
			    : a >= GIL_COND	   ? "GIL.cond"
						   : "GIL";
		}
		char *t = n ? strdup(n) : NULL;

		if (t) {
			free(e->text);
			e->text = t;
		}
	}
}

/*
 * A C extension module of the program's own (not the interpreter's, nor
 * an installed package's under .../lib/python3*): race discovery
 * observes its code, and the racy instructions it finds are C-level
 * points of the threads that run it without the GIL.  Extension modules
 * are named NAME.so, NAME.cpython-312-x86_64-linux-gnu.so, NAME.abi3.so;
 * shared libraries lib*.so are not.
 */
static bool pol_observe_object(void *ctx, const char *path)
{
	struct pyroot *r = ctx;
	const char *b = base_name(path);
	size_t n = strlen(b);

	if (n < 4 || strcmp(b + n - 3, ".so") || !strncmp(b, "lib", 3) ||
	    !strncmp(b, "ld-", 3) || is_stdlib(path))
		return false;
	for (int i = 0; i < r->nseen; i++)
		if (r->seen[i].im && r->seen[i].im->rel.object[0] &&
		    !strcmp(path, r->seen[i].im->rel.object))
			return false;
	return true;
}

/* An interpreter the policy applies to, from its detection. */
static struct pyimage *image_new(const struct python_info *pi, bool c_points)
{
	struct pyimage *im;

	if (!pi->usable || !(im = calloc(1, sizeof(*im))))
		return NULL;
	im->rel = *pi;
	/* an offset in the libpython when there is one (.object) */
	im->pt = (struct user_point){ pi->check_pc, OP_PYCHECK };
	im->img = (struct policy_image){
		.points = &im->pt,
		.npoints = 1,
		/* without C-level points a libc call point of the
		 * interpreter is never a choice (pol_shape) */
		.own_points = !c_points,
		.object = im->rel.object[0] ? im->rel.object : NULL,
	};
	return im;
}

static bool remember(struct pyroot *r, const char *exe, struct pyimage *im)
{
	void *v = realloc(r->seen, (size_t)(r->nseen + 1) * sizeof(*r->seen));
	char *e = strdup(exe);

	if (!v || !e) {
		free(e);
		if (v)
			r->seen = v;
		return false;
	}
	r->seen = v;
	r->seen[r->nseen].exe = e;
	r->seen[r->nseen].im = im;
	r->nseen++;
	return true;
}

/*
 * A process exec'd exe: the Python level when it is a CPython this
 * policy supports (3.11 to 3.13 with the GIL, static or with a shared
 * libpython), detected once per path.  Anything else (a shell, make, a
 * native test, an interpreter ptloom cannot schedule) keeps its C-level
 * points; the first such interpreter's reason is kept (python_policy_why).
 */
static const struct policy_image *pol_adopt(void *ctx, const char *exe)
{
	struct pyroot *r = ctx;
	struct python_info *pi;
	struct pyimage *im;

	for (int i = 0; i < r->nseen; i++)
		if (!strcmp(r->seen[i].exe, exe))
			return r->seen[i].im ? &r->seen[i].im->img : NULL;
	if (!(pi = calloc(1, sizeof(*pi))))
		return NULL;
	im = python_detect(exe, pi) == 0 ? image_new(pi, r->c_points) : NULL;
	if (pi->is_python && !pi->usable && pi->why[0] && !r->why[0])
		snprintf(r->why, sizeof(r->why), "%s", pi->why);
	free(pi);
	if (!remember(r, exe, im)) {
		free(im);
		return NULL;
	}
	return im ? &im->img : NULL;
}

struct sched_policy *python_policy_new(const struct python_info *pi,
				       bool c_points)
{
	struct pyroot *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->c_points = c_points;
	/* the command's own interpreter, as the CLI found it (a shim's
	 * target included): known before its first exec */
	if (pi && pi->usable) {
		struct pyimage *im = image_new(pi, c_points);
		char real[4096];

		if (!im || !remember(r, realpath(pi->path, real) ? real
								: pi->path,
				     im)) {
			free(im);
			free(r);
			return NULL;
		}
	}
	r->pol = (struct sched_policy){
		.ctx = r,
		.adopt = pol_adopt,
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
		.observe_object = pol_observe_object,
	};
	return &r->pol;
}

const char *python_policy_why(const struct sched_policy *pol)
{
	const struct pyroot *r = pol ? pol->ctx : NULL;

	return r && r->why[0] ? r->why : NULL;
}

void python_policy_free(struct sched_policy *pol)
{
	if (!pol)
		return;
	struct pyroot *r = pol->ctx;

	pol_begin(r);
	for (int i = 0; i < r->nseen; i++) {
		free(r->seen[i].exe);
		free(r->seen[i].im);
	}
	free(r->seen);
	free(r);
}
