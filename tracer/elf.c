/*
 * Minimal ELF reading with libelf: see elf.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>
#include "elf.h"

int elf_open_path(const char *path, int *fd, Elf **e)
{
	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return -errno;
	*e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*e || elf_kind(*e) != ELF_K_ELF) {
		if (*e)
			elf_end(*e);
		close(*fd);
		return -EINVAL;
	}
	return 0;
}

Elf_Scn *elf_section_named(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstr;
	const char *nm;

	if (elf_getshdrstrndx(e, &shstr))
		return NULL;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) &&
		    (nm = elf_strptr(e, shstr, sh->sh_name)) &&
		    !strcmp(nm, name))
			return scn;
	return NULL;
}

/* elf_open_path for the callers that only need to know it failed */
static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	return elf_open_path(path, fd, &e) ? NULL : e;
}

/* Each defined function symbol (STT_FUNC, not SHN_UNDEF) of e's symbol
 * tables of type type (SHT_DYNSYM or SHT_SYMTAB; 0: both, in section
 * order), with its name (NULL if it has none), to fn until fn returns
 * true.  True if it did. */
static bool each_function(Elf *e, Elf64_Word type,
			  bool (*fn)(void *ctx, const GElf_Sym *sym,
				     const char *name),
			  void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) ||
		    (type ? sh.sh_type != type
			  : sh.sh_type != SHT_SYMTAB &&
				    sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);

		if (!d || !sh.sh_entsize)
			continue;
		size_t cnt = sh.sh_size / sh.sh_entsize;

		for (size_t k = 0; k < cnt; k++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)k, &sym) ||
			    sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			if (fn(ctx, &sym, elf_strptr(e, sh.sh_link, sym.st_name)))
				return true;
		}
	}
	return false;
}

struct lookup {
	const char *const *names;
	int n, cap, found_more;
	uint64_t *values, *more;
	int *more_idx;
};

static bool lookup_one(void *ctx, const GElf_Sym *sym, const char *nm)
{
	struct lookup *l = ctx;

	if (!sym->st_value || !nm)
		return false;
	for (int i = 0; i < l->n; i++) {
		if (strcmp(nm, l->names[i]))
			continue;
		if (!l->values[i]) {
			l->values[i] = sym->st_value;
		} else if (l->values[i] != sym->st_value &&
			   l->found_more < l->cap) {
			bool dup = false;

			for (int j = 0; j < l->found_more; j++)
				dup |= l->more[j] == sym->st_value;
			if (!dup) {
				l->more[l->found_more] = sym->st_value;
				l->more_idx[l->found_more++] = i;
			}
		}
	}
	return false;
}

int elf_symbols_lookup(const char *path, const char *const *names, int n,
		       uint64_t *values, uint64_t *more, int *more_idx,
		       int *nmore)
{
	int fd;
	Elf *e = open_elf(path, &fd);
	struct lookup l = { .names = names, .n = n, .cap = nmore ? *nmore : 0,
			    .values = values, .more = more,
			    .more_idx = more_idx };

	if (!e)
		return -ENOENT;
	for (int i = 0; i < n; i++)
		values[i] = 0;
	/* .dynsym first: libc's exported functions are all there. */
	each_function(e, SHT_DYNSYM, lookup_one, &l);
	each_function(e, SHT_SYMTAB, lookup_one, &l);
	if (nmore)
		*nmore = l.found_more;
	elf_end(e);
	close(fd);
	return 0;
}

int elf_symbol_values(const char *path, const char *name, uint64_t *values,
		      int max)
{
	const char *names[1] = { name };
	uint64_t first, more[16];
	int idx[16], nmore = 16, k = 0;
	int r = elf_symbols_lookup(path, names, 1, &first, more, idx, &nmore);

	if (r)
		return r;
	if (first && k < max)
		values[k++] = first;
	for (int i = 0; i < nmore && k < max; i++)
		values[k++] = more[i];
	return k;
}

/* fn(ctx, header) for each PT_LOAD segment of path's, in order, until it
 * returns false: 0, -ENOENT (not ELF), -EINVAL (no PT_LOAD) */
static int load_segments(const char *path,
			 bool (*fn)(void *ctx, const GElf_Phdr *ph), void *ctx)
{
	int fd;
	Elf *e = open_elf(path, &fd);
	size_t n;
	int r = -EINVAL;

	if (!e)
		return -ENOENT;
	if (elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) ||
			    ph.p_type != PT_LOAD)
				continue;
			r = 0;
			if (!fn(ctx, &ph))
				break;
		}
	}
	elf_end(e);
	close(fd);
	return r;
}

static bool first_vaddr(void *ctx, const GElf_Phdr *ph)
{
	*(uint64_t *)ctx = ph->p_vaddr - ph->p_offset;
	return false;
}

int elf_first_vaddr(const char *path, uint64_t *vaddr)
{
	return load_segments(path, first_vaddr, vaddr);
}

static bool widen_span(void *ctx, const GElf_Phdr *ph)
{
	uint64_t *span = ctx;

	if (ph->p_vaddr < span[0])
		span[0] = ph->p_vaddr;
	if (ph->p_vaddr + ph->p_memsz > span[1])
		span[1] = ph->p_vaddr + ph->p_memsz;
	return true;
}

int elf_load_span(const char *path, uint64_t *lo, uint64_t *hi)
{
	uint64_t span[2] = { UINT64_MAX, 0 };
	int r = load_segments(path, widen_span, span);

	*lo = span[0];
	*hi = span[1];
	return r;
}

void elf_dyn_relocs(Elf *e,
		    bool (*fn)(void *ctx, const GElf_Rela *r,
			       const GElf_Sym *sym, const char *name),
		    void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh, lsh;
		Elf_Data *d, *sd;
		Elf_Scn *ls;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(ls = elf_getscn(e, sh.sh_link)) ||
		    !gelf_getshdr(ls, &lsh) || lsh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)) ||
		    !(sd = elf_getdata(ls, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getrela(d, (int)i, &r) ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym) ||
			    !(nm = elf_strptr(e, lsh.sh_link, sym.st_name)))
				continue;
			if (!fn(ctx, &r, &sym, nm))
				return;
		}
	}
}

struct copies {
	uint64_t (*v)[2];
	size_t n, cap;
};

static bool add_copy(void *ctx, const GElf_Rela *r, const GElf_Sym *sym,
		     const char *name)
{
	struct copies *c = ctx;

	(void)name;
	if (GELF_R_TYPE(r->r_info) != R_X86_64_COPY || !sym->st_size)
		return true;
	if (c->n == c->cap) {
		size_t nc = c->cap ? 2 * c->cap : 8;
		uint64_t(*w)[2] = realloc(c->v, nc * sizeof(*w));

		if (!w)
			return false;
		c->v = w;
		c->cap = nc;
	}
	c->v[c->n][0] = r->r_offset;
	c->v[c->n][1] = r->r_offset + sym->st_size;
	c->n++;
	return true;
}

int elf_copy_objects(const char *path, uint64_t (**out)[2])
{
	int fd;
	Elf *e = open_elf(path, &fd);
	struct copies c = { 0 };

	*out = NULL;
	if (!e)
		return -ENOENT;
	elf_dyn_relocs(e, add_copy, &c);
	elf_end(e);
	close(fd);
	*out = c.v;
	return (int)c.n;
}

/*
 * Whether ptloom can run path: an x86-64 ELF file, or a #! script whose
 * interpreter is one.  Anything else gets one line in why and -ENOEXEC
 * (a 32-bit program would bypass the filter through int 0x80).
 */
int elf_check_program(const char *path, char *why, size_t len)
{
	unsigned char h[256];

	for (int depth = 0; depth < 4; depth++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			snprintf(why, len, "%s: cannot open: %s", path,
				 strerror(errno));
			return -errno;
		}
		ssize_t n = read(fd, h, sizeof(h) - 1);

		close(fd);
		if (n < 0)
			n = 0;
		h[n] = 0;
		if (n >= 2 && h[0] == '#' && h[1] == '!') {
			/* the interpreter runs it: check that one */
			static char interp[256];
			char *p = (char *)h + 2, *e;

			while (*p == ' ' || *p == '\t')
				p++;
			e = p + strcspn(p, " \t\n");
			*e = 0;
			if (!*p)
				return 0; /* the kernel refuses it itself */
			snprintf(interp, sizeof(interp), "%s", p);
			path = interp;
			continue;
		}
		if (n < 20 || memcmp(h, "\177ELF", 4))
			return 0; /* not ELF: execve says what it is */
		uint16_t machine = (uint16_t)(h[18] | h[19] << 8);

		if (h[4] == 2 && h[5] == 1 && machine == 62 /* EM_X86_64 */)
			return 0;
		const char *what = machine == 3	   ? "a 32-bit x86 (i386)"
				   : machine == 62 ? "an x32"
				   : machine == 183 ? "an AArch64"
				   : machine == 40  ? "an ARM"
				   : h[4] == 1	    ? "a 32-bit"
						    : "a non-x86-64";

		snprintf(why, len,
			 "%s is %s ELF program; ptloom runs x86-64 programs "
			 "only",
			 path, what);
		return -ENOEXEC;
	}
	snprintf(why, len, "%s: too many nested #! interpreters", path);
	return -ENOEXEC;
}

struct function_at {
	uint64_t vaddr;
	char *name;
	size_t len;
};

static bool function_at_one(void *ctx, const GElf_Sym *sym, const char *nm)
{
	struct function_at *f = ctx;

	if (!nm || f->vaddr < sym->st_value ||
	    f->vaddr >= sym->st_value + (sym->st_size ? sym->st_size : 1))
		return false;
	snprintf(f->name, f->len, "%s", nm);
	return true;
}

int elf_function_at(const char *path, uint64_t off, char *name, size_t len)
{
	int fd, ret = -ENOENT;
	Elf *e = open_elf(path, &fd);
	size_t nph = 0;
	uint64_t vaddr = 0;
	bool mapped = false;

	if (!e)
		return -ENOENT;
	name[0] = 0;
	/* the file offset as a link-time address: its PT_LOAD's */
	if (!elf_getphdrnum(e, &nph))
		for (size_t i = 0; i < nph && !mapped; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) &&
			    ph.p_type == PT_LOAD && off >= ph.p_offset &&
			    off < ph.p_offset + ph.p_filesz) {
				vaddr = ph.p_vaddr + (off - ph.p_offset);
				mapped = true;
			}
		}
	struct function_at f = { vaddr, name, len };

	if (mapped && each_function(e, 0, function_at_one, &f))
		ret = 0;
	elf_end(e);
	close(fd);
	return ret;
}

struct sizes {
	const uint64_t *vaddrs;
	int n;
	uint64_t *size;
};

static bool size_one(void *ctx, const GElf_Sym *sym, const char *nm)
{
	struct sizes *z = ctx;

	(void)nm;
	for (int i = 0; i < z->n; i++)
		if (z->vaddrs[i] == sym->st_value && sym->st_size > z->size[i])
			z->size[i] = sym->st_size;
	return false;
}

struct starts {
	uint64_t *v;
	size_t n, cap;
};

static bool start_one(void *ctx, const GElf_Sym *sym, const char *nm)
{
	struct starts *z = ctx;

	(void)nm;
	if (z->n == z->cap) {
		size_t cap = z->cap ? 2 * z->cap : 1024;
		uint64_t *v = realloc(z->v, cap * sizeof(*v));

		if (!v)
			return true;
		z->v = v;
		z->cap = cap;
	}
	z->v[z->n++] = sym->st_value;
	return false;
}

/*
 * .eh_frame_hdr's sorted table of FDE initial locations and FDE addresses
 * (the form every x86-64 linker writes: version 1, a udata4 count, datarel
 * sdata4 pairs): its entries (*n pairs, relative to sh->sh_addr), or NULL.
 */
static const uint8_t *eh_frame_table(Elf *e, GElf_Shdr *sh, uint32_t *n)
{
	Elf_Scn *scn = elf_section_named(e, ".eh_frame_hdr", sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const uint8_t *b = d ? d->d_buf : NULL;

	if (!b || d->d_size < 12 || b[0] != 1 || b[2] != 0x03 ||
	    b[3] != 0x3b || (b[1] & 0x0f) != 0x0b)
		return NULL;
	memcpy(n, b + 8, 4);
	return *n <= (d->d_size - 12) / 8 ? b + 12 : NULL;
}

/* The start of every function with unwind information.  A stripped
 * library's internal functions have no symbol but have one of these. */
static void eh_frame_starts(Elf *e, struct starts *z)
{
	GElf_Shdr sh;
	uint32_t n;
	const uint8_t *t = eh_frame_table(e, &sh, &n);

	for (uint32_t i = 0; t && i < n; i++) {
		int32_t loc;

		memcpy(&loc, t + 8 * (size_t)i, 4);
		GElf_Sym sym = { .st_value = sh.sh_addr + (uint64_t)(int64_t)loc };

		if (start_one(z, &sym, NULL))
			return;
	}
}

/* The section of e holding vaddr (SHT_PROGBITS), with its data. */
static Elf_Data *section_at(Elf *e, uint64_t vaddr, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_PROGBITS &&
		    vaddr >= sh->sh_addr && vaddr - sh->sh_addr < sh->sh_size)
			return elf_getdata(scn, NULL);
	return NULL;
}

int elf_eh_frame_functions(Elf *e,
			   int (*fn)(void *ctx, uint64_t addr, uint64_t size),
			   void *ctx)
{
	GElf_Shdr sh, fs;
	uint32_t n;
	const uint8_t *t = eh_frame_table(e, &sh, &n);

	for (uint32_t i = 0; t && i < n; i++) {
		int32_t loc, fde, len, cie, init, range;

		memcpy(&loc, t + 8 * (size_t)i, 4);
		memcpy(&fde, t + 4 + 8 * (size_t)i, 4);
		uint64_t start = sh.sh_addr + (uint64_t)(int64_t)loc;
		uint64_t at = sh.sh_addr + (uint64_t)(int64_t)fde;
		Elf_Data *fd = section_at(e, at, &fs);

		if (!fd || !fd->d_buf || at - fs.sh_addr + 16 > fd->d_size)
			return -EINVAL;
		const uint8_t *f = (const uint8_t *)fd->d_buf + (at - fs.sh_addr);

		memcpy(&len, f, 4);
		memcpy(&cie, f + 4, 4);
		memcpy(&init, f + 8, 4);
		memcpy(&range, f + 12, 4);
		/* a 32-bit FDE whose pc-relative sdata4 start is the table's:
		 * its range is an sdata4 too (GCC's and LLVM's DW_EH_PE_pcrel |
		 * sdata4); anything else and nothing is said */
		if (len < 12 || !cie ||
		    at + 8 + (uint64_t)(int64_t)init != start || range <= 0)
			return -EINVAL;
		int r = fn(ctx, start, (uint64_t)range);

		if (r)
			return r;
	}
	return t ? (int)n : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int elf_exec_sections(const char *path,
		      void (*fn)(void *ctx, const uint8_t *code, size_t size,
				 uint64_t vaddr, const uint64_t *starts,
				 size_t n),
		      void *ctx)
{
	int fd;
	Elf *e = open_elf(path, &fd);
	struct starts z = { 0 };
	Elf_Scn *scn = NULL;

	if (!e)
		return -ENOENT;
	each_function(e, 0, start_one, &z);
	eh_frame_starts(e, &z);
	if (z.n)
		qsort(z.v, z.n, sizeof(*z.v), cmp_u64);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);

		if (d && d->d_buf && d->d_size <= sh.sh_size)
			fn(ctx, d->d_buf, d->d_size, sh.sh_addr, z.v, z.n);
	}
	free(z.v);
	elf_end(e);
	close(fd);
	return 0;
}

int elf_functions_code(const char *path, const uint64_t *vaddrs, int n,
		       void (*fn)(void *ctx, int i, const uint8_t *code,
				  size_t size),
		       void *ctx)
{
	int fd;
	Elf *e = open_elf(path, &fd);
	uint64_t size[96] = { 0 };

	if (!e)
		return -ENOENT;
	if (n > 96)
		n = 96;
	/* each function's size: its largest STT_FUNC symbol at vaddr */
	struct sizes z = { vaddrs, n, size };

	each_function(e, 0, size_one, &z);
	/* its bytes: from the section that holds them */
	for (int i = 0; i < n; i++) {
		Elf_Scn *scn = NULL;

		if (!vaddrs[i] || !size[i])
			continue;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR) ||
			    vaddrs[i] < sh.sh_addr ||
			    vaddrs[i] + size[i] > sh.sh_addr + sh.sh_size)
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d && d->d_buf &&
			    d->d_size >= vaddrs[i] + size[i] - sh.sh_addr)
				fn(ctx, i,
				   (const uint8_t *)d->d_buf +
					   (vaddrs[i] - sh.sh_addr),
				   (size_t)size[i]);
			break;
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

/* Searches one note area; returns the build-id length, 0 if absent. */
static int find_build_id(Elf_Data *d, uint8_t *buf, size_t len)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) != 0)
			continue;
		if (nh.n_descsz > len)
			return -ENOSPC;
		memcpy(buf, (char *)d->d_buf + desc_off, nh.n_descsz);
		return (int)nh.n_descsz;
	}
	return 0;
}

int elf_build_id(const char *path, uint8_t *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	size_t nph;
	int fd, r;
	Elf *e;

	r = elf_open_path(path, &fd, &e);
	if (r < 0)
		return r;
	/* sections first; program headers for files stripped of them */
	while (!r && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    (d = elf_getdata(scn, NULL)))
			r = find_build_id(d, buf, len);
	}
	if (!r && elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph && !r; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(e, (int)i, &ph) ||
			    ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset,
						 ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8
								 : ELF_T_NHDR);
			if (d)
				r = find_build_id(d, buf, len);
		}
	}
	elf_end(e);
	close(fd);
	return r ? r : -ENOENT;
}
