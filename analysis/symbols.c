/*
 * Symbolisation with elfutils: libdwfl for the live process, libelf for
 * files on disk.
 *
 * symbols_open() reports /proc/PID/maps to a Dwfl (dwfl_linux_proc_report);
 * libdwfl opens each module's ELF file lazily, on the first address that
 * falls in it.  Answers are kept in an open-addressing hash map keyed by
 * (address, kind), and every string handed out is copied into an arena that
 * lives until symbols_close(), because libdwfl frees a module's strings when
 * a refresh finds it unmapped.
 *
 * Unwinding attaches our own Dwfl_Thread_Callbacks (never
 * dwfl_linux_proc_attach, which would PTRACE_ATTACH): the tracer already
 * holds the thread in a ptrace-stop, so the registers come from
 * PTRACE_GETREGS and the stack from /proc/PID/mem, read a page at a time
 * through a small cache that lives for one backtrace.
 *
 * Separate debug information is never searched for the system runtime:
 * reports only need its ELF symbols and .eh_frame, and skipping it keeps
 * libdwfl from asking a debuginfod server (Debian sets DEBUGINFOD_URLS in
 * login shells) for libc's debuginfo in the middle of a run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "symbols.h"
#include "demangle.h"
#include "../tracer/elf.h"

#include <ctype.h>
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <unistd.h>

#define ARENA_BLOCK 65536
#define CACHE_MIN 1024		/* slots; a power of two */
#define PAGE_CACHE 4		/* stack pages cached during one backtrace */
#define PAGE 4096
#define UNWIND_MAX 64
#define AUTO_REFRESH_MAX 32	/* re-reads of the maps on unknown code */
#define X86_64_DWARF_NREGS 17	/* rax..r15 and rip (16) */
#define DESC_MAX 512

enum { KIND_CODE = 1, KIND_DATA };

struct entry {
	uint64_t addr;
	uint8_t kind;		/* 0 = empty slot */
	bool known;		/* symbols_lookup finds something */
	int line;
	const char *desc;
	const char *func;
	const char *file;
};

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t cap;
	char data[];
};

struct stack_page {
	uint64_t addr;		/* page-aligned, tracee address */
	bool valid;
	unsigned char bytes[PAGE];
};

/* A CU's top-level DIEs with code, by address: dwarf_getscopes from the
 * CU steps over every top-level DIE before the pc's (each namespace with
 * everything in it: Rust's and C++'s CUs hold thousands), once per
 * described pc; the index is one such walk per CU (see dwarf_info). */
#define CU_INDEXES 32
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;
};
struct cu_index {
	Dwarf *dw;
	Dwarf_Off cu;
	struct cu_range *r;
	size_t n;
	bool failed; /* the walk could not be made: use the CU */
};

#define GOPCLN_MODULES 8

struct symbols {
	Dwfl *dwfl;
	int pid;
	int memfd;		/* /proc/PID/mem, or -1 */
	bool attached;		/* dwfl_attach_state done */
	Elf *arch_elf;		/* tells dwfl_attach_state the machine */
	unsigned char arch_image[sizeof(Elf64_Ehdr)];
	int auto_refreshes;

	struct entry *tab;
	size_t cap;		/* slots, a power of two */
	size_t n;		/* used slots */
	struct arena_block *arena;

	/* file-backed mappings and the bss right after them: the only
	 * places a data address can belong to a module */
	/* owner: a bss mapping's file mapping right below it (the module
	 * libdw reports covers the file's mappings only), else lo */
	struct { uint64_t lo, hi, owner; } *files;
	size_t nfiles;

	/* each CU's functions by address, built on its first lookup
	 * (cu_index) */
	struct cu_index *cus[CU_INDEXES];
	unsigned next_cu;

	/* Go's function tables of modules without symbols (go_func) */
	struct gopcln {
		Dwfl_Module *mod;
		const uint8_t *data;	/* .gopclntab, in the module's Elf */
		size_t size;
		uint64_t text, nfunc, names, functab;
		bool ok;
	} gop[GOPCLN_MODULES];
	unsigned ngop;

	/* state of the backtrace in progress */
	int unwind_err;		/* -errno from our callbacks */
	struct stack_page pages[PAGE_CACHE];
	unsigned next_page;
};

/* ---- strings that live until symbols_close() ---- */

static const char *arena_strdup(struct symbols *s, const char *str)
{
	size_t n = strlen(str) + 1;
	struct arena_block *b = s->arena;

	if (!b || b->cap - b->used < n) {
		size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = s->arena;
		s->arena = b;
	}
	memcpy(b->data + b->used, str, n);
	b->used += n;
	return b->data + b->used - n;
}

/* ---- the address cache ---- */

static size_t slot_of(uint64_t addr, int kind, size_t cap)
{
	uint64_t h = (addr ^ ((uint64_t)kind << 62)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

static struct entry *cache_find(struct symbols *s, uint64_t addr, int kind)
{
	size_t i = slot_of(addr, kind, s->cap);

	while (s->tab[i].kind) {
		if (s->tab[i].addr == addr && s->tab[i].kind == kind)
			return &s->tab[i];
		i = (i + 1) & (s->cap - 1);
	}
	return NULL;
}

static int cache_grow(struct symbols *s)
{
	size_t cap = s->cap * 2;
	struct entry *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t j = 0; j < s->cap; j++) {
		size_t i;

		if (!s->tab[j].kind)
			continue;
		i = slot_of(s->tab[j].addr, s->tab[j].kind, cap);
		while (tab[i].kind)
			i = (i + 1) & (cap - 1);
		tab[i] = s->tab[j];
	}
	free(s->tab);
	s->tab = tab;
	s->cap = cap;
	return 0;
}

/* Stores a copy of *e; returns the cached entry, or `e` itself when out of
 * memory (the answer is then recomputed next time). */
static struct entry *cache_insert(struct symbols *s, struct entry *e)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap && cache_grow(s) < 0)
		return e;
	i = slot_of(e->addr, e->kind, s->cap);
	while (s->tab[i].kind)
		i = (i + 1) & (s->cap - 1);
	s->tab[i] = *e;
	s->n++;
	return &s->tab[i];
}

static void cache_clear(struct symbols *s)
{
	memset(s->tab, 0, s->cap * sizeof(*s->tab));
	s->n = 0;
	/* the maps were read again: a module may be gone, its Elf with it */
	memset(s->gop, 0, sizeof(s->gop));
	s->ngop = 0;
}

/* ---- modules ---- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Module names are the paths in /proc/PID/maps; the vDSO is "[vdso: PID]". */
static bool runtime_name(const char *modname)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-", "libpthread.so", "libpthread-", "ld-linux",
		"ld64.so", "ld-2.", "libstdc++.so", "libgcc_s.so", "libm.so",
		"libm-", "libdl.so", "libdl-", "librt.so", "librt-",
		"libatomic.so",
	};
	const char *b;

	if (!modname)
		return false;
	if (starts_with(modname, "[vdso"))
		return true;
	b = base_name(modname);
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with(b, prefixes[i]))
			return true;
	return false;
}

static const char *module_name(Dwfl_Module *mod)
{
	return dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL,
				NULL);
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	if (runtime_name(modname))
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base,
					    file_name, debuglink_file,
					    debuglink_crc,
					    debuginfo_file_name);
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = find_debuginfo,
};

static int report_maps(struct symbols *s)
{
	int r;

	dwfl_report_begin(s->dwfl);
	r = dwfl_linux_proc_report(s->dwfl, s->pid);
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0 && r == 0)
		r = -1;
	if (r > 0)
		return -r;
	if (r < 0)
		return -EINVAL;
	return 0;
}

static void open_mem(struct symbols *s)
{
	char path[64];

	if (s->memfd >= 0)
		close(s->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", s->pid);
	s->memfd = open(path, O_RDONLY | O_CLOEXEC);
}

int symbols_open(struct symbols **out, int pid)
{
	struct symbols *s;
	int r;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	s->memfd = -1;
	s->cap = CACHE_MIN;
	s->tab = calloc(s->cap, sizeof(*s->tab));
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->tab || !s->dwfl) {
		r = -ENOMEM;
		goto out_free;
	}
	r = report_maps(s);
	if (r < 0)
		goto out_free;
	open_mem(s);
	*out = s;
	return 0;

out_free:
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s->tab);
	free(s);
	return r;
}

int symbols_refresh(struct symbols *s)
{
	int r = report_maps(s);

	/* after an exec the old mem file describes the old address space */
	open_mem(s);
	cache_clear(s);
	free(s->files);
	s->files = NULL;
	s->nfiles = 0;
	return r;
}

void symbols_close(struct symbols *s)
{
	struct arena_block *b, *next;

	if (!s)
		return;
	dwfl_end(s->dwfl);
	free(s->files);
	if (s->arch_elf)
		elf_end(s->arch_elf);
	if (s->memfd >= 0)
		close(s->memfd);
	for (int i = 0; i < CU_INDEXES; i++)
		if (s->cus[i]) {
			free(s->cus[i]->r);
			free(s->cus[i]);
		}
	for (b = s->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	free(s->tab);
	free(s);
}

/* Finds the module of a code address, re-reading the maps (a bounded number
 * of times) when the address is in none: code that appeared after the last
 * refresh, such as a dlopen'ed library or, when opened at the exec, every
 * shared library.  See tests/unit/test_symbols.c, opened_at_exec. */
static Dwfl_Module *code_module(struct symbols *s, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);

	if (mod || pc == 0 || s->auto_refreshes >= AUTO_REFRESH_MAX)
		return mod;
	s->auto_refreshes++;
	if (report_maps(s) < 0)
		return NULL;
	cache_clear(s);
	return dwfl_addrmodule(s->dwfl, pc);
}

/* ---- code addresses ---- */

/*
 * The compilation unit covering pc.  libdw 0.188 finds it only through
 * .debug_aranges, which clang does not emit by default (see the crash_*
 * tests with CC=clang): without it, ask each unit for its ranges.
 */
static bool find_cu(Dwfl_Module *mod, uint64_t pc, Dwarf_Die *cu,
		    Dwarf_Addr *bias)
{
	Dwarf_Die *d = dwfl_module_addrdie(mod, pc, bias);
	Dwarf_CU *unit = NULL;
	Dwarf *dw;

	if (d) {
		*cu = *d;
		return true;
	}
	dw = dwfl_module_getdwarf(mod, bias);
	if (!dw)
		return false;
	while (dwarf_get_units(dw, unit, &unit, NULL, NULL, cu, NULL) == 0)
		if (dwarf_haspc(cu, pc - *bias) > 0)
			return true;
	return false;
}

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->die < y->die ? -1 : x->die > y->die;
}

/* What elfutils' dwarf_getscopes descends into (libdw's
 * may_have_scopes). */
static bool scope_tag(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* The CU's direct children whose code ranges are known. */
static bool index_cu(struct cu_index *c, Dwarf_Die *cu)
{
	Dwarf_Die child;
	size_t cap = 0;

	if (dwarf_child(cu, &child) != 0)
		return true;
	do {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (c->n == cap) {
				size_t nc = cap ? 2 * cap : 256;
				struct cu_range *r =
					realloc(c->r, nc * sizeof(*r));

				if (!r)
					return false;
				c->r = r;
				cap = nc;
			}
			c->r[c->n++] = (struct cu_range){
				lo, hi, dwarf_dieoffset(&child)
			};
		}
		if (off < 0)
			return false; /* libdw's own walk decides */
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

static struct cu_index *cu_index(struct symbols *s, Dwarf_Die *cu)
{
	Dwarf *dw = dwarf_cu_getdwarf(cu->cu);
	Dwarf_Off off = dwarf_dieoffset(cu);
	struct cu_index *c;

	for (int i = 0; i < CU_INDEXES; i++)
		if (s->cus[i] && s->cus[i]->dw == dw && s->cus[i]->cu == off)
			return s->cus[i];
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	c->dw = dw;
	c->cu = off;
	c->failed = !index_cu(c, cu);
	if (!c->failed)
		qsort(c->r, c->n, sizeof(*c->r), cmp_cu_range);
	unsigned k = s->next_cu++ % CU_INDEXES;

	if (s->cus[k]) {
		free(s->cus[k]->r);
		free(s->cus[k]);
	}
	s->cus[k] = c;
	return c;
}

/* The first top-level DIE (in the CU's order) whose code holds pc, as the
 * walk from the CU meets it: 1 (in *die), 0 (none), -1 (no index). */
static int first_holder(struct cu_index *c, Dwarf_Addr pc, Dwarf_Die *die)
{
	size_t lo = 0, hi;
	Dwarf_Off best = 0;
	bool found = false;

	if (!c || c->failed)
		return -1;
	hi = c->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* any range that starts at or before pc may hold it */
	for (size_t i = lo; i-- > 0;)
		if (pc < c->r[i].hi && (!found || c->r[i].die < best)) {
			best = c->r[i].die;
			found = true;
		}
	if (!found)
		return 0;
	return dwarf_offdie(c->dw, best, die) ? 1 : -1;
}

/*
 * The innermost function at pc below top, as dwarf_getscopes from the CU
 * finds it once its walk has reached top: at each level the first child
 * that holds pc (dwarf_haspc), descending into those of libdw's scope
 * tags.  1: *func set or none there; -1: an inlined instance is on the
 * way (libdw then looks for its abstract origin, which may fail and give
 * no function at all: the caller asks libdw).
 */
static int innermost_function(Dwarf_Die *top, Dwarf_Addr pc,
			      const char **func)
{
	Dwarf_Die cur = *top, child;
	const char *name = NULL;

	for (int depth = 0; depth < 256; depth++) {
		int tag = dwarf_tag(&cur);

		if (tag == DW_TAG_inlined_subroutine)
			return -1;
		if (tag == DW_TAG_subprogram)
			name = dwarf_diename(&cur);
		if (!scope_tag(tag) || dwarf_child(&cur, &child) != 0)
			break;
		bool in = false;

		do {
			int h = dwarf_haspc(&child, pc);

			if (h > 0) {
				in = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!in)
			break;
		cur = child;
	}
	/* the innermost subprogram on the way (a lexical block inside it
	 * names no function) */
	*func = name;
	return 1;
}

/* The innermost function (inlined or not), file and line at pc. */
static void dwarf_info(struct symbols *s, Dwfl_Module *mod, uint64_t pc,
		       const char **func, const char **file, int *line)
{
	Dwarf_Die cu, top, *scopes = NULL;
	Dwarf_Addr bias;
	Dwarf_Line *l;
	int n, h;

	if (!find_cu(mod, pc, &cu, &bias))
		return;
	l = dwarf_getsrc_die(&cu, pc - bias);
	if (l && dwarf_lineno(l, line) == 0 && *line > 0)
		*file = dwarf_linesrc(l, NULL, NULL);
	if (!*file)
		*line = 0;
	/* PTLOOM_NO_CU_INDEX=1: libdw's walk alone (tests compare) */
	static int no_index = -1;

	if (no_index < 0)
		no_index = getenv("PTLOOM_NO_CU_INDEX") != NULL;
	h = no_index ? -1 : first_holder(cu_index(s, &cu), pc - bias, &top);
	if (h == 0)
		return; /* only the CU holds it: no function */
	if (h > 0 && innermost_function(&top, pc - bias, func) > 0)
		return;
	*func = NULL;
	n = dwarf_getscopes(&cu, pc - bias, &scopes);
	for (int i = 0; i < n && !*func; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram ||
		    tag == DW_TAG_inlined_subroutine)
			*func = dwarf_diename(&scopes[i]);
	}
	free(scopes);
}

/* The end of mod's loaded segments in memory, its bss included (0: not
 * known) */
static uint64_t module_memory_end(Dwfl_Module *mod)
{
	Dwarf_Addr bias = 0;
	Elf *e = dwfl_module_getelf(mod, &bias);
	size_t n = 0;
	uint64_t end = 0;

	if (!e || elf_getphdrnum(e, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_vaddr + ph.p_memsz + bias > end)
			end = ph.p_vaddr + ph.p_memsz + bias;
	}
	return end;
}

/* "0x7f3c1a28aeec (libc.so.6+0x8aeec)": the address as the file numbers it
 * (what addr2line -e takes) survives ASLR. */
static void format_unnamed(char *buf, size_t len, Dwfl_Module *mod,
			   uint64_t addr)
{
	Dwarf_Addr bias = 0;

	if (!mod) {
		snprintf(buf, len, "0x%" PRIx64, addr);
		return;
	}
	if (!dwfl_module_getelf(mod, &bias))
		dwfl_module_info(mod, NULL, &bias, NULL, NULL, NULL, NULL,
				 NULL);
	snprintf(buf, len, "0x%" PRIx64 " (%s+0x%" PRIx64 ")", addr,
		 base_name(module_name(mod)), addr - bias);
}

static void format_code(char *buf, size_t len, uint64_t pc,
			Dwfl_Module *mod, const char *modname,
			const char *sym, uint64_t off, const char *func,
			const char *file, int line)
{
	if (file && func)
		snprintf(buf, len, "%s at %s:%d", func, base_name(file), line);
	else if (file)
		snprintf(buf, len, "%s:%d", base_name(file), line);
	else if (sym && off)
		snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", sym, off,
			 base_name(modname));
	else if (sym)
		snprintf(buf, len, "%s (%s)", sym, base_name(modname));
	else
		format_unnamed(buf, len, mod, pc);
}

/* A C++ or Rust symbol as gdb shows it (analysis/demangle.c); the name
 * as it is when it is no mangled one. */
static const char *demangled(struct symbols *s, const char *sym)
{
	char *d = symbols_demangle(sym);
	const char *out = d ? arena_strdup(s, d) : NULL;

	free(d);
	return out ? out : sym;
}

static uint64_t le_word(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The module's .gopclntab (Go 1.18 and later: magic 0xfffffff0 or
 * 0xfffffff1, 8-byte pointers), parsed once. */
static struct gopcln *go_table(struct symbols *s, Dwfl_Module *mod)
{
	for (unsigned i = 0; i < s->ngop && i < GOPCLN_MODULES; i++)
		if (s->gop[i].mod == mod)
			return s->gop[i].ok ? &s->gop[i] : NULL;
	struct gopcln *g = &s->gop[s->ngop++ % GOPCLN_MODULES];
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Shdr sh;
	Elf_Scn *scn = elf ? elf_section_named(elf, ".gopclntab", &sh) : NULL;
	Elf_Data *d = scn && sh.sh_type != SHT_NOBITS ? elf_rawdata(scn, NULL)
						      : NULL;

	memset(g, 0, sizeof(*g));
	g->mod = mod;
	if (d && d->d_buf) {
		g->data = d->d_buf;
		g->size = d->d_size;
	}
	if (!g->data || g->size < 72)
		return NULL;
	uint32_t magic = (uint32_t)le_word(g->data, 4);

	if ((magic != 0xfffffff0 && magic != 0xfffffff1) || g->data[7] != 8)
		return NULL;
	g->nfunc = le_word(g->data + 8, 8);
	g->text = le_word(g->data + 24, 8);
	g->names = le_word(g->data + 32, 8);
	g->functab = le_word(g->data + 64, 8);
	if (g->functab > g->size || g->names > g->size ||
	    g->nfunc > (g->size - g->functab) / 8)
		return NULL;
	g->ok = true;
	return g;
}

/* The Go function holding file address a and the offset into it, from
 * the module's .gopclntab: a stripped Go binary (`go test` links its test
 * binaries with -s -w) keeps its names there for the runtime. */
static const char *go_func(struct symbols *s, Dwfl_Module *mod, uint64_t a,
			   uint64_t *off)
{
	struct gopcln *g = go_table(s, mod);

	if (!g || a < g->text || !g->nfunc)
		return NULL;
	uint64_t rel = a - g->text, lo = 0, hi = g->nfunc;
	const uint8_t *ft = g->data + g->functab;

	if (rel >= le_word(ft + 8 * g->nfunc, 4))
		return NULL; /* past the last function's end */
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;

		if (le_word(ft + 8 * mid, 4) <= rel)
			lo = mid;
		else
			hi = mid;
	}
	uint64_t entry = le_word(ft + 8 * lo, 4);
	uint64_t fo = g->functab + le_word(ft + 8 * lo + 4, 4);

	if (entry > rel || fo + 8 > g->size)
		return NULL;
	uint64_t no = g->names + (uint32_t)le_word(g->data + fo + 4, 4);

	if (no >= g->size || !memchr(g->data + no, 0, g->size - no))
		return NULL;
	*off = rel - entry;
	return (const char *)g->data + no;
}

static struct entry *code_entry(struct symbols *s, uint64_t pc)
{
	struct entry *hit = cache_find(s, pc, KIND_CODE);
	struct entry e = { .addr = pc, .kind = KIND_CODE };
	static struct entry oom;
	const char *modname = NULL, *sym = NULL, *func = NULL, *file = NULL;
	GElf_Off off = 0;
	GElf_Sym esym;
	Dwfl_Module *mod;
	char desc[DESC_MAX];

	if (hit)
		return hit;
	mod = code_module(s, pc);
	if (mod) {
		modname = module_name(mod);
		sym = demangled(s, dwfl_module_addrinfo(mod, pc, &off, &esym,
							NULL, NULL, NULL));
		if (!sym) {
			Dwarf_Addr bias = 0;
			uint64_t goff = 0;

			if (!dwfl_module_getelf(mod, &bias))
				bias = 0;
			sym = go_func(s, mod, pc - bias, &goff);
			off = goff;
		}
		if (!runtime_name(modname))
			dwarf_info(s, mod, pc, &func, &file, &e.line);
	}
	if (!func)
		func = sym;
	format_code(desc, sizeof(desc), pc, mod, modname, sym, off, func,
		    file, e.line);
	e.known = func || file;
	e.desc = arena_strdup(s, desc);
	e.func = func ? arena_strdup(s, func) : NULL;
	e.file = file ? arena_strdup(s, file) : NULL;
	if (!e.desc || (func && !e.func) || (file && !e.file)) {
		oom = (struct entry){ .addr = pc, .kind = KIND_CODE,
				      .desc = "?" };
		return &oom;
	}
	return cache_insert(s, &e);
}

static void copy_out(char *buf, size_t len, const char *str)
{
	if (len)
		snprintf(buf, len, "%s", str);
}

void symbols_describe_code(struct symbols *s, uint64_t pc, char *buf,
			   size_t len)
{
	copy_out(buf, len, code_entry(s, pc)->desc);
}

int symbols_lookup(struct symbols *s, uint64_t pc, const char **func,
		   const char **file, int *line)
{
	struct entry *e = code_entry(s, pc);

	if (func)
		*func = e->func;
	if (file)
		*file = e->file;
	if (line)
		*line = e->line;
	return e->known ? 0 : -ENOENT;
}

bool symbols_is_runtime(struct symbols *s, uint64_t pc)
{
	Dwfl_Module *mod = code_module(s, pc);

	return mod && runtime_name(module_name(mod));
}

/* ---- data addresses ---- */

static void read_file_maps(struct symbols *s)
{
	char name[64], line[4096];
	uint64_t prev_hi = 0, owner = 0;
	bool prev_file = false;

	free(s->files);
	s->files = NULL;
	s->nfiles = 0;
	snprintf(name, sizeof(name), "/proc/%d/maps", s->pid);
	FILE *f = fopen(name, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		bool file = strchr(line, '/') != NULL;
		/* (without address randomisation the heap starts right
		 * after the executable's bss, and the kernel merges the two
		 * mappings into one "[heap]": its module's range tells its
		 * bss from the heap) */
		bool bss = !file &&
			   (!strchr(line, '[') || strstr(line, "[heap]")) &&
			   prev_file && lo == prev_hi;

		if (file || bss) {
			void *n = realloc(s->files,
					  (s->nfiles + 1) * sizeof(*s->files));

			if (!n)
				break;
			s->files = n;
			if (file)
				owner = lo;
			s->files[s->nfiles].lo = lo;
			s->files[s->nfiles].hi = hi;
			s->files[s->nfiles++].owner = owner;
		}
		prev_file = file;
		prev_hi = hi;
	}
	fclose(f);
}

/* Is addr in a file's mapping or its bss?  *owner: an address of the
 * file's own mappings (addr, or the one below a bss). */
static bool in_file_mapping(struct symbols *s, uint64_t addr, uint64_t *owner)
{
	if (!s->files)
		read_file_maps(s);
	for (size_t i = 0; i < s->nfiles; i++)
		if (addr >= s->files[i].lo && addr < s->files[i].hi) {
			*owner = s->files[i].owner < s->files[i].lo
					 ? s->files[i].owner
					 : addr;
			return true;
		}
	return false;
}

void symbols_describe_data(struct symbols *s, uint64_t addr, char *buf,
			   size_t len)
{
	struct entry *hit = cache_find(s, addr, KIND_DATA);
	struct entry e = { .addr = addr, .kind = KIND_DATA };
	Dwfl_Module *mod;
	const char *sym = NULL;
	GElf_Off off = 0;
	GElf_Sym esym;
	char desc[DESC_MAX];

	if (hit) {
		copy_out(buf, len, hit->desc);
		return;
	}
	/* no refresh on a miss: heap and stack addresses are in no module */
	uint64_t owner = addr;

	mod = in_file_mapping(s, addr, &owner)
		      ? dwfl_addrmodule(s->dwfl, owner)
		      : NULL;
	if (mod && owner != addr && addr >= module_memory_end(mod))
		mod = NULL; /* past its bss: the heap */
	if (mod) {
		sym = demangled(s, dwfl_module_addrinfo(mod, addr, &off, &esym,
							NULL, NULL, NULL));
		/* a sizeless symbol (_edata, a section start) names only
		 * its own address */
		if (sym && off && (!esym.st_size || off >= esym.st_size))
			sym = NULL;
	}
	if (sym && off)
		snprintf(desc, sizeof(desc), "%s+%" PRIu64, sym, off);
	else if (sym)
		snprintf(desc, sizeof(desc), "%s", sym);
	else
		format_unnamed(desc, sizeof(desc), mod, addr);
	copy_out(buf, len, desc);
	e.desc = arena_strdup(s, desc);
	if (e.desc)
		cache_insert(s, &e);
}

/* ---- unwinding ---- */

static bool read_page(struct symbols *s, struct stack_page *p, uint64_t page)
{
	if (s->memfd < 0 || page > (uint64_t)INT64_MAX - PAGE)
		return false;
	if (pread(s->memfd, p->bytes, PAGE, (off_t)page) != PAGE)
		return false;
	p->addr = page;
	p->valid = true;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	struct symbols *s = arg;
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	struct stack_page *p;
	long word;

	(void)dwfl;
	if (addr - page <= PAGE - sizeof(*result)) {
		for (unsigned i = 0; i < PAGE_CACHE; i++) {
			p = &s->pages[i];
			if (p->valid && p->addr == page)
				goto hit;
		}
		p = &s->pages[s->next_page++ % PAGE_CACHE];
		p->valid = false;
		if (read_page(s, p, page))
			goto hit;
	}
	/* straddles a page, or the page is only partly readable */
	if (s->memfd >= 0 && addr <= (uint64_t)INT64_MAX &&
	    pread(s->memfd, result, sizeof(*result), (off_t)addr) ==
		    sizeof(*result))
		return true;
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, s->pid, (void *)addr, NULL);
	if (errno)
		return false;
	*result = (Dwarf_Word)word;
	return true;

hit:
	memcpy(result, p->bytes + (addr - page), sizeof(*result));
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	(void)thread_argp;
	return 0;	/* only dwfl_getthread_frames is used */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct symbols *s = arg;
	struct user_regs_struct r;
	Dwarf_Word regs[X86_64_DWARF_NREGS];

	if (ptrace(PTRACE_GETREGS, dwfl_thread_tid(thread), NULL, &r) != 0) {
		s->unwind_err = -errno;
		return false;
	}
	regs[0] = r.rax;
	regs[1] = r.rdx;
	regs[2] = r.rcx;
	regs[3] = r.rbx;
	regs[4] = r.rsi;
	regs[5] = r.rdi;
	regs[6] = r.rbp;
	regs[7] = r.rsp;
	regs[8] = r.r8;
	regs[9] = r.r9;
	regs[10] = r.r10;
	regs[11] = r.r11;
	regs[12] = r.r12;
	regs[13] = r.r13;
	regs[14] = r.r14;
	regs[15] = r.r15;
	regs[16] = r.rip;
	return dwfl_thread_state_registers(thread, 0, X86_64_DWARF_NREGS,
					   regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/*
 * dwfl_attach_state() without an Elf borrows the backend of the first
 * module, which a later refresh may free (exec, dlclose); a bare ELF header
 * of our own naming the machine stays valid until symbols_close().
 */
static int attach(struct symbols *s)
{
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
			     ELFDATA2LSB, EV_CURRENT, ELFOSABI_NONE },
		.e_type = ET_CORE,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_ehsize = sizeof(Elf64_Ehdr),
	};

	if (s->attached)
		return 0;
	elf_version(EV_CURRENT);
	memcpy(s->arch_image, &eh, sizeof(eh));
	s->arch_elf = elf_memory((char *)s->arch_image, sizeof(s->arch_image));
	if (!s->arch_elf)
		return -ENOMEM;
	if (!dwfl_attach_state(s->dwfl, s->arch_elf, s->pid,
			       &thread_callbacks, s)) {
		elf_end(s->arch_elf);
		s->arch_elf = NULL;
		return -EINVAL;
	}
	s->attached = true;
	return 0;
}

struct frames {
	uint64_t *pcs;
	int n;
	int max;
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct frames *f = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	f->pcs[f->n++] = pc;
	return f->n < f->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int symbols_backtrace(struct symbols *s, int tid, uint64_t *pcs, int max)
{
	struct frames f = { .pcs = pcs, .max = max };
	int r;

	if (max <= 0)
		return -EINVAL;
	r = attach(s);
	if (r < 0)
		return r;
	for (int tries = 0; tries < 2; tries++) {
		bool stale = false;

		f.n = 0;
		s->unwind_err = 0;
		for (unsigned i = 0; i < PAGE_CACHE; i++)
			s->pages[i].valid = false;
		/* the end of the stack is often reported as an error: keep
		 * what came before it */
		dwfl_getthread_frames(s->dwfl, tid, frame_cb, &f);
		/* a frame in code mapped since the last refresh (opened at
		 * the exec, before ld.so mapped the libraries)? */
		for (int i = 0; i < f.n && !stale; i++) {
			uint64_t pc = i ? pcs[i] - 1 : pcs[i];

			stale = !dwfl_addrmodule(s->dwfl, pc) &&
				code_module(s, pc);
		}
		if (!stale)
			break;
	}
	if (f.n > 0)
		return f.n;
	return s->unwind_err ? s->unwind_err : -EIO;
}

/*
 * A shared library the system installed (glib, libgomp, libjvm): a
 * failure inside it, an assertion helper's abort, is the program's
 * caller's to name when there is one.
 */
static bool system_library(const char *modname)
{
	static const char *const dirs[] = { "/usr/lib/", "/lib/",
					    "/usr/lib64/", "/lib64/" };

	if (!modname || !strstr(base_name(modname), ".so"))
		return false;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (starts_with(modname, dirs[i]))
			return true;
	return false;
}

/*
 * A sanitizer's runtime linked into the program (clang's default, where
 * gcc's is libasan.so): its functions, C++ ones mangled in namespaces
 * such as __sanitizer and __asan (_ZN11__sanitizer14internal__exitEi,
 * _ZNK6__asan...), C ones prefixed (__asan_report_load1,
 * __interceptor_malloc).
 */
static bool sanitizer_function(const char *sym)
{
	static const char *const prefixes[] = {
		"__sanitizer", "__asan", "__lsan", "__ubsan", "__tsan",
		"__msan", "__hwasan", "__interception", "__interceptor_",
		"___interceptor_",
	};

	if (starts_with(sym, "_ZNK"))
		sym += 4;
	else if (starts_with(sym, "_ZN"))
		sym += 3;
	while (isdigit((unsigned char)*sym))
		sym++;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with(sym, prefixes[i]))
			return true;
	return false;
}

/*
 * The C library's own failure path linked into a static executable
 * (abort, raise, the assertion and fortify helpers, the start code), or
 * a sanitizer's runtime linked into the program (its report's exit):
 * the frame that called it names the failure, as it does where the same
 * functions are in libc.so or libasan.so.
 */
static bool runtime_function(Dwfl_Module *mod, uint64_t pc)
{
	static const char *const prefixes[] = {
		"__pthread_kill", "pthread_kill", "raise", "abort",
		"__assert_fail", "__assert_perror_fail", "__libc_message",
		"__libc_fatal", "__fortify_fail", "__chk_fail",
		"__stack_chk_fail", "malloc_printerr", "__malloc_assert",
		"__libc_start", "_start",
	};
	GElf_Off off;
	GElf_Sym esym;
	const char *sym = dwfl_module_addrinfo(mod, pc, &off, &esym, NULL,
					       NULL, NULL);

	if (!sym)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with(sym, prefixes[i]))
			return true;
	return sanitizer_function(sym);
}

void symbols_user_location(struct symbols *s, int tid, char *buf, size_t len)
{
	uint64_t pcs[UNWIND_MAX];
	int n = symbols_backtrace(s, tid, pcs, UNWIND_MAX);

	/* the program's own frame first, else any but the C runtime's */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			uint64_t pc = i ? pcs[i] - 1 : pcs[i];
			Dwfl_Module *mod = code_module(s, pc);
			const char *name = mod ? module_name(mod) : NULL;

			if (mod && !runtime_name(name) &&
			    (pass || (!system_library(name) &&
				      !runtime_function(mod, pc)))) {
				symbols_describe_code(s, pc, buf, len);
				return;
			}
		}
	}
	if (n > 0)
		symbols_describe_code(s, pcs[0], buf, len);
	else
		copy_out(buf, len, "?");
}

/* ---- ELF files ---- */

static void elf_close(int fd, Elf *elf)
{
	elf_end(elf);
	close(fd);
}

/* "name", or "name@VERSION" / "name@@VERSION" as .symtab spells versions */
static bool name_matches(const char *sym, const char *name, size_t len)
{
	return strncmp(sym, name, len) == 0 &&
	       (sym[len] == '\0' || sym[len] == '@');
}

/* Calls fn for each symbol of .symtab and .dynsym until it returns false.
 * Returns 0 or -errno (-EINVAL if not an ELF file). */
static int elf_each_symbol(const char *path,
			   bool (*fn)(void *ctx, const GElf_Sym *sym,
				      const char *name),
			   void *ctx)
{
	Elf_Scn *scn = NULL;
	int fd, r;
	Elf *elf = NULL;
	bool more = true;

	r = elf_open_path(path, &fd, &elf);
	if (r < 0)
		return r;
	while (more && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; more && i < sh.sh_size / sh.sh_entsize;
		     i++) {
			GElf_Sym sym;
			const char *sname;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			sname = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (sname)
				more = fn(ctx, &sym, sname);
		}
	}
	elf_close(fd, elf);
	return 0;
}

struct lookup {
	const char *name;
	size_t len;
	uint64_t *values;
	int n, max;
};

static bool lookup_one(void *ctx, const GElf_Sym *sym, const char *sname)
{
	struct lookup *l = ctx;
	bool dup = false;

	if (l->n >= l->max)
		return false;
	if (sym->st_shndx == SHN_UNDEF || !name_matches(sname, l->name, l->len))
		return true;
	for (int j = 0; j < l->n; j++)
		dup |= l->values[j] == sym->st_value;
	if (!dup)
		l->values[l->n++] = sym->st_value;
	return l->n < l->max;
}

int symbols_elf_lookup(const char *path, const char *name, uint64_t *values,
		       int max)
{
	struct lookup l = { name, strlen(name), values, 0, max };
	int r = elf_each_symbol(path, lookup_one, &l);

	return r < 0 ? r : l.n;
}

struct naming {
	const char *const *subs;
	int n, found;
};

static bool naming_one(void *ctx, const GElf_Sym *sym, const char *sname)
{
	struct naming *m = ctx;

	(void)sym;
	for (int k = 0; k < m->n && m->found < 0; k++)
		if (strstr(sname, m->subs[k]))
			m->found = k;
	return m->found < 0;
}

int symbols_elf_naming(const char *path, const char *const *subs, int n)
{
	struct naming m = { subs, n, -1 };
	int r = elf_each_symbol(path, naming_one, &m);

	return r < 0 ? r : m.found;
}

int symbols_elf_section_has(const char *path, const char *section,
			    const char *needle)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	int fd, r;
	Elf *elf = NULL;

	r = elf_open_path(path, &fd, &elf);
	if (r < 0)
		return r;
	scn = elf_section_named(elf, section, &sh);
	d = scn && sh.sh_type != SHT_NOBITS ? elf_rawdata(scn, NULL) : NULL;
	r = d && d->d_buf &&
	    memmem(d->d_buf, d->d_size, needle, strlen(needle));
	elf_close(fd, elf);
	return r;
}

int symbols_elf_build_id(const char *path, uint8_t *buf, size_t len)
{
	return elf_build_id(path, buf, len);
}

int symbols_elf_text(const char *path, struct elf_text *out, int max)
{
	size_t nph;
	int fd, n = 0, r;
	Elf *elf = NULL;

	r = elf_open_path(path, &fd, &elf);
	if (r < 0)
		return r;
	if (elf_getphdrnum(elf, &nph) != 0) {
		elf_close(fd, elf);
		return -EINVAL;
	}
	for (size_t i = 0; i < nph && n < max; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		out[n].vaddr = ph.p_vaddr;
		out[n].offset = ph.p_offset;
		out[n].size = ph.p_filesz;
		n++;
	}
	elf_close(fd, elf);
	return n;
}

/* ---- atomic operations by their source (symbols_elf_atomic_code) ---- */

/* The headers whose functions are the C++ library's atomic operations,
 * or (rust) the file of Rust's core::sync::atomic (AtomicBool::load and
 * the atomic_load it inlines, ...). */
static bool atomic_header(const char *file, bool rust)
{
	static const char *const names[] = {
		"atomic", "atomic_base.h", "atomic_wait.h",
		"atomic_timed_wait.h", "atomic_futex.h", "atomic_lockfree_defines.h",
		"shared_ptr_atomic.h", "atomic_word.h", "atomicity.h",
	};
	static const char core[] = "/core/src/sync/atomic.rs";
	const char *b = file ? strrchr(file, '/') : NULL;

	if (rust)
		return file && strlen(file) >= sizeof(core) - 1 &&
		       !strcmp(file + strlen(file) - (sizeof(core) - 1), core);
	b = b ? b + 1 : file;
	if (!b)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(b, names[i]))
			return true;
	return false;
}

struct ranges {
	uint64_t *v; /* pairs */
	size_t n, cap;
};

static int ranges_add(struct ranges *r, uint64_t lo, uint64_t hi)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		uint64_t *v = realloc(r->v, 2 * cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[2 * r->n] = lo;
	r->v[2 * r->n + 1] = hi;
	r->n++;
	return 0;
}

static int atomic_walk(Dwarf_Die *die, struct ranges *r, int depth,
		       bool rust)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > 64)
		return 0;
	do {
		int tag = dwarf_tag(die);

		if ((tag == DW_TAG_inlined_subroutine ||
		     tag == DW_TAG_subprogram) &&
		    atomic_header(dwarf_decl_file(die), rust)) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) >
			       0)
				if (hi > lo && (err = ranges_add(r, lo, hi)))
					return err;
			continue; /* what it inlines is inside */
		}
		if (dwarf_child(die, &child) == 0 &&
		    (err = atomic_walk(&child, r, depth + 1, rust)))
			return err;
	} while (dwarf_siblingof(die, die) == 0);
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* r's pairs sorted and merged into *out (malloc'd): their number, or err
 * (r freed) when err is set. */
static int ranges_finish(struct ranges *r, int err, uint64_t **out)
{
	if (err) {
		free(r->v);
		return err;
	}
	if (r->n) /* qsort(NULL, 0) is undefined */
		qsort(r->v, r->n, 2 * sizeof(uint64_t), cmp_range);
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++) {
		if (k && r->v[2 * i] <= r->v[2 * k - 1]) {
			if (r->v[2 * i + 1] > r->v[2 * k - 1])
				r->v[2 * k - 1] = r->v[2 * i + 1];
			continue;
		}
		r->v[2 * k] = r->v[2 * i];
		r->v[2 * k + 1] = r->v[2 * i + 1];
		k++;
	}
	*out = r->v;
	return (int)k;
}

/* The DWARF of path, or of the file with its debug information (Debian's
 * -dbgsym packages, `objcopy --only-keep-debug`): by build id under
 * /usr/lib/debug/.build-id, then by .gnu_debuglink beside it, in its
 * .debug directory or under /usr/lib/debug.  A separate file must carry
 * the same build id where path has one.  (Not libdwfl's standard search:
 * it would also ask a debuginfod server, see the top of this file.)  *fd
 * is path opened; it becomes the file the DWARF is read from.  NULL if
 * there is none. */
static Dwarf *dwarf_of(const char *path, int *fd)
{
	const void *id = NULL, *did = NULL;
	ssize_t idlen = -1;
	char cand[4][PATH_MAX];
	int nc = 0;
	Dwarf *dw;
	Elf *e;

	if ((dw = dwarf_begin(*fd, DWARF_C_READ)))
		return dw;
	elf_version(EV_CURRENT);
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (e) {
		const unsigned char *b;
		GElf_Word crc;
		const char *link = dwelf_elf_gnu_debuglink(e, &crc);
		const char *slash = strrchr(path, '/');
		int dl = slash ? (int)(slash - path) : 1;
		const char *dir = slash ? path : ".";
		int n = 0;

		idlen = dwelf_elf_gnu_build_id(e, &id);
		b = id;
		if (idlen >= 2) {
			n = snprintf(cand[nc], PATH_MAX,
				     "/usr/lib/debug/.build-id/%02x/", b[0]);
			for (ssize_t i = 1; i < idlen && n < PATH_MAX - 8; i++)
				n += snprintf(cand[nc] + n, PATH_MAX - n,
					      "%02x", b[i]);
			snprintf(cand[nc] + n, PATH_MAX - n, ".debug");
			nc++;
		}
		if (link && !strchr(link, '/')) {
			snprintf(cand[nc++], PATH_MAX, "%.*s/%s", dl, dir,
				 link);
			snprintf(cand[nc++], PATH_MAX, "%.*s/.debug/%s", dl,
				 dir, link);
			snprintf(cand[nc++], PATH_MAX, "/usr/lib/debug%.*s/%s",
				 path[0] == '/' ? dl : 0, dir, link);
		}
	}
	for (int i = 0; i < nc && !dw; i++) {
		int dfd = open(cand[i], O_RDONLY | O_CLOEXEC);
		Elf *de;

		if (dfd < 0 || !strcmp(cand[i], path)) {
			if (dfd >= 0)
				close(dfd);
			continue;
		}
		de = elf_begin(dfd, ELF_C_READ_MMAP, NULL);
		bool same = de && (idlen <= 0 ||
				   (dwelf_elf_gnu_build_id(de, &did) ==
					    idlen &&
				    !memcmp(did, id, (size_t)idlen)));
		if (de)
			elf_end(de);
		if (same && (dw = dwarf_begin(dfd, DWARF_C_READ))) {
			close(*fd);
			*fd = dfd;
		} else {
			close(dfd);
		}
	}
	if (e)
		elf_end(e);
	return dw;
}

/* Only a C++ unit inlines the C++ library's atomics: a unit of another
 * language (a Rust crate's, C's, Go's) is not walked; one that does not
 * say is. */
static bool may_be_cxx(Dwarf_Die *cu)
{
	switch (dwarf_srclang(cu)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_Rust:
	case DW_LANG_Go:
	case DW_LANG_Mips_Assembler:
	case DW_LANG_Fortran77:
	case DW_LANG_Fortran90:
	case DW_LANG_Fortran95:
		return false;
	default:
		return true;
	}
}

/* A unit of the Rust toolchain's own libraries (std, core, alloc, test
 * and its dependencies: built under /rustc/HASH or /rust/deps): their
 * atomics stay plain accesses, as before Rust's were known.  Marked, the
 * loads inside std's channels, Arcs and thread spawns became atomic
 * points of every Rust program, and a lost update between two threads
 * of libtest's binary was no longer found in 30 samples. */
static bool rust_toolchain_unit(Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	const char *dir = dwarf_attr(cu, DW_AT_comp_dir, &a)
				  ? dwarf_formstring(&a)
				  : NULL;

	return dir && (!strncmp(dir, "/rustc/", 7) ||
		       !strncmp(dir, "/rust/deps/", 11));
}

/* walk(first DIE of a unit, its language, r) over every unit of path's
 * DWARF (only the units may_be_cxx or Rust's if cxx), its ranges into
 * *out (ranges_finish). */
static int units_walk(const char *path, bool cxx,
		      int (*walk)(Dwarf_Die *, int, struct ranges *),
		      uint64_t **out)
{
	struct ranges r = { 0 };
	Dwarf_Off off = 0, next;
	size_t hsize;
	int fd, err = 0;
	Dwarf *dw;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dw = dwarf_of(path, &fd);
	if (!dw) {
		close(fd);
		return 0; /* no DWARF: nothing known */
	}
	while (!err && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL,
				    NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    (!cxx || may_be_cxx(&cu) ||
		     (dwarf_srclang(&cu) == DW_LANG_Rust &&
		      !rust_toolchain_unit(&cu)))) {
			int lang = dwarf_srclang(&cu);

			if (dwarf_child(&cu, &cu) == 0)
				err = walk(&cu, lang, &r);
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	return ranges_finish(&r, err, out);
}

static int atomic_code_unit(Dwarf_Die *first, int lang, struct ranges *r)
{
	return atomic_walk(first, r, 0, lang == DW_LANG_Rust);
}

int symbols_elf_atomic_code(const char *path, uint64_t **out)
{
	return units_walk(path, true, atomic_code_unit, out);
}

/* the code first's compile unit covers */
static int unit_code_unit(Dwarf_Die *first, int lang, struct ranges *r)
{
	Dwarf_Die cu;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t o = 0;
	int err = 0;

	(void)lang;
	if (!dwarf_diecu(first, &cu, NULL, NULL))
		return 0;
	while (!err && (o = dwarf_ranges(&cu, o, &base, &lo, &hi)) > 0)
		if (hi > lo)
			err = ranges_add(r, lo, hi);
	return err;
}

int symbols_elf_unit_code(const char *path, uint64_t **out)
{
	return units_walk(path, false, unit_code_unit, out);
}

/* ---- atomic objects by their type (symbols_elf_atomic_data) ---- */

/* type without its typedefs and qualifiers; false if there is none */
static bool type_strip(Dwarf_Die *type)
{
	for (int i = 0; i < 16; i++) {
		switch (dwarf_tag(type)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type: {
			Dwarf_Attribute a;

			if (!dwarf_attr_integrate(type, DW_AT_type, &a) ||
			    !dwarf_formref_die(&a, type))
				return false;
			break;
		}
		default:
			return true;
		}
	}
	return false;
}

/* A library's atomic type, whole: C++'s std::atomic<T> (and its bases),
 * std::atomic_flag, Rust's core::sync::atomic::Atomic*, Go's
 * sync/atomic and runtime/internal/atomic types. */
static bool atomic_type_name(const char *n, int lang)
{
	if (!n)
		return false;
	if (lang == DW_LANG_Rust)
		return !strncmp(n, "Atomic", 6) && n[6] >= 'A' && n[6] <= 'Z';
	if (lang == DW_LANG_Go)
		return !strncmp(n, "sync/atomic.", 12) ||
		       !strncmp(n, "runtime/internal/atomic.", 24) ||
		       !strncmp(n, "internal/runtime/atomic.", 24);
	return !strncmp(n, "atomic<", 7) || !strncmp(n, "__atomic_base<", 14) ||
	       !strncmp(n, "__atomic_float<", 15) ||
	       !strncmp(n, "__atomic_ref<", 13) || !strcmp(n, "atomic_flag") ||
	       !strcmp(n, "__atomic_flag_base");
}

#define ATOMIC_ELEMENTS 256 /* elements of an array of structures looked at */

/* The atomic parts of an object of type at addr into r (depth: nesting).
 * Returns 0 or -ENOMEM. */
static int atomic_parts(Dwarf_Die *type, uint64_t addr, int lang,
			struct ranges *r, int depth)
{
	Dwarf_Word size;
	Dwarf_Die t = *type, m;

	if (depth > 8 || !type_strip(&t))
		return 0;
	switch (dwarf_tag(&t)) {
	case DW_TAG_atomic_type:
		if (dwarf_aggregate_size(&t, &size) || !size) {
			Dwarf_Die u = t;
			Dwarf_Attribute a;

			if (!dwarf_attr_integrate(&t, DW_AT_type, &a) ||
			    !dwarf_formref_die(&a, &u) ||
			    dwarf_aggregate_size(&u, &size) || !size)
				return 0;
		}
		return ranges_add(r, addr, addr + size);
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		if (atomic_type_name(dwarf_diename(&t), lang)) {
			if (dwarf_aggregate_size(&t, &size) || !size)
				return 0;
			return ranges_add(r, addr, addr + size);
		}
		if (dwarf_child(&t, &m) != 0)
			return 0;
		do {
			Dwarf_Attribute a;
			Dwarf_Word off = 0;
			Dwarf_Die mt;

			if (dwarf_tag(&m) != DW_TAG_member &&
			    dwarf_tag(&m) != DW_TAG_inheritance)
				continue;
			if (dwarf_hasattr(&m, DW_AT_bit_size))
				continue; /* a bit-field is never atomic */
			if (dwarf_attr(&m, DW_AT_data_member_location, &a) &&
			    dwarf_formudata(&a, &off))
				continue; /* not a constant offset */
			if (!dwarf_attr_integrate(&m, DW_AT_type, &a) ||
			    !dwarf_formref_die(&a, &mt))
				continue;
			int err = atomic_parts(&mt, addr + off, lang, r,
					       depth + 1);

			if (err)
				return err;
		} while (dwarf_siblingof(&m, &m) == 0);
		return 0;
	case DW_TAG_array_type: {
		Dwarf_Attribute a;
		Dwarf_Die e, es;
		Dwarf_Word esize;

		if (dwarf_aggregate_size(&t, &size) || !size ||
		    !dwarf_attr_integrate(&t, DW_AT_type, &a) ||
		    !dwarf_formref_die(&a, &e) ||
		    dwarf_aggregate_size(&e, &esize) || !esize)
			return 0;
		es = e;
		if (!type_strip(&es))
			return 0;
		if (dwarf_tag(&es) == DW_TAG_atomic_type ||
		    (dwarf_tag(&es) != DW_TAG_array_type &&
		     atomic_type_name(dwarf_diename(&es), lang)))
			return ranges_add(r, addr, addr + size);
		/* atomics inside the elements: each element's, up to a
		 * bound (a longer array's later elements are not known) */
		struct ranges one = { 0 };
		int err = atomic_parts(&e, addr, lang, &one, depth + 1);

		for (Dwarf_Word k = 0; !err && one.n && k < size / esize &&
				       k < ATOMIC_ELEMENTS; k++)
			for (size_t j = 0; !err && j < one.n; j++)
				err = ranges_add(r, one.v[2 * j] + k * esize,
						 one.v[2 * j + 1] + k * esize);
		free(one.v);
		return err;
	}
	default:
		return 0;
	}
}

/* A variable's fixed address (a location of one DW_OP_addr), or 0. */
static uint64_t static_address(Dwarf_Die *var)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(var, DW_AT_location, &a) ||
	    dwarf_getlocation(&a, &ops, &n) != 0 || n != 1 ||
	    ops[0].atom != DW_OP_addr)
		return 0;
	return ops[0].number;
}

static int atomic_data_walk(Dwarf_Die *die, int lang, struct ranges *r,
			    int depth)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > 64)
		return 0;
	do {
		int tag = dwarf_tag(die);

		if (tag == DW_TAG_variable) {
			Dwarf_Attribute a;
			Dwarf_Die type;
			uint64_t addr = static_address(die);

			if (addr && dwarf_attr_integrate(die, DW_AT_type, &a) &&
			    dwarf_formref_die(&a, &type) &&
			    (err = atomic_parts(&type, addr, lang, r, 0)))
				return err;
			continue;
		}
		/* where variables with an address may be declared: a
		 * namespace, a function's body and its blocks (static
		 * locals), a class (static members, defined outside it
		 * with a DW_AT_specification) */
		if (tag != DW_TAG_namespace && tag != DW_TAG_subprogram &&
		    tag != DW_TAG_lexical_block && tag != DW_TAG_module)
			continue;
		if (dwarf_child(die, &child) == 0 &&
		    (err = atomic_data_walk(&child, lang, r, depth + 1)))
			return err;
	} while (dwarf_siblingof(die, die) == 0);
	return 0;
}

static int atomic_data_unit(Dwarf_Die *first, int lang, struct ranges *r)
{
	return atomic_data_walk(first, lang, r, 0);
}

int symbols_elf_atomic_data(const char *path, uint64_t **out)
{
	return units_walk(path, false, atomic_data_unit, out);
}

/* ---- a language runtime's own code (symbols_elf_runtime_code) ---- */

/*
 * A function of Go's runtime: the packages Go's own race detector leaves
 * uninstrumented (cmd/compile's NoInstrumentPkgs: runtime,
 * runtime/internal/..., runtime/race, internal/cpu) and the runtime's
 * assembly routines, whose ELF names carry no package (gogo,
 * aeshashbody, _rt0_amd64).  A Go function's name always has a dot.
 */
static bool go_runtime_fn(const char *n)
{
	return !strncmp(n, "runtime.", 8) || !strncmp(n, "runtime/", 8) ||
	       !strncmp(n, "internal/cpu.", 13) || !strchr(n, '.');
}

int symbols_elf_runtime_code(const char *path, uint64_t **out)
{
	struct ranges r = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr bi;
	int fd, err = 0;
	Elf *e;

	*out = NULL;
	err = elf_open_path(path, &fd, &e);
	if (err)
		return err == -EINVAL ? 0 : err;
	/* a Go executable: the linker's build-info section */
	bool go = elf_section_named(e, ".go.buildinfo", &bi) != NULL;

	while (go && !err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; !err && k < sh.sh_size / sh.sh_entsize;
		     k++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)k, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || !sym.st_value ||
			    !(n = elf_strptr(e, sh.sh_link, sym.st_name)) ||
			    !go_runtime_fn(n))
				continue;
			err = ranges_add(&r, sym.st_value,
					 sym.st_value + sym.st_size);
		}
	}
	elf_end(e);
	close(fd);
	return ranges_finish(&r, err, out);
}
