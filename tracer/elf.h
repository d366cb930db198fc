/*
 * Minimal ELF reading the supervisor needs at run time (libelf): symbol
 * values of a shared object and its load bias.
 */
#ifndef PTLOOM_ELF_H
#define PTLOOM_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include <libelf.h>

/* Values (st_value, link-time) of every defined symbol called name, all
 * versions.  Returns how many were found (<= max) or -errno. */
int elf_symbol_values(const char *path, const char *name, uint64_t *values,
		      int max);
/* Several names at once: values[i] gets the first definition of names[i]
 * (0 if absent); extra versions are appended to more[] (up to nmore) with
 * their name index in more_idx[].  Returns 0 or -errno. */
int elf_symbols_lookup(const char *path, const char *const *names, int n,
		       uint64_t *values, uint64_t *more, int *more_idx,
		       int *nmore);
/* Link-time vaddr of the segment at file offset 0 (load bias = mapping
 * start - this).  Returns 0 or -errno. */
int elf_first_vaddr(const char *path, uint64_t *vaddr);

/* The name of the function (STT_FUNC, .symtab or .dynsym) whose code
 * holds file offset off of path.  0, or -ENOENT (no such function, no
 * symbols). */
int elf_function_at(const char *path, uint64_t off, char *name, size_t len);

/* The code of the functions at link-time addresses vaddrs[0..n) (n <=
 * 96) of path: fn(ctx, i, code, size) for each one whose symbol has a
 * size and whose bytes are in an executable section.  0 or -ENOENT. */
int elf_functions_code(const char *path, const uint64_t *vaddrs, int n,
		       void (*fn)(void *ctx, int i, const uint8_t *code,
				  size_t size),
		       void *ctx);

/* Each executable section of path: fn(ctx, code, size, vaddr, starts, n)
 * with the sorted link-time addresses of the function starts path tells
 * (STT_FUNC symbols of .dynsym and .symtab, .eh_frame_hdr's FDEs; some
 * outside the section, some twice).  0 or -ENOENT. */
int elf_exec_sections(const char *path,
		      void (*fn)(void *ctx, const uint8_t *code, size_t size,
				 uint64_t vaddr, const uint64_t *starts,
				 size_t n),
		      void *ctx);

/* 0 when ptloom can run path (x86-64 ELF, or a #! script whose interpreter
 * is one), else -ENOEXEC/-errno and one line in why. */
int elf_check_program(const char *path, char *why, size_t len);

/* Each function .eh_frame_hdr and .eh_frame tell (a stripped file's
 * functions: start and size, from each FDE): fn(ctx, addr, size) in the
 * table's order, until it returns non-zero (returned).  The number of
 * functions, 0 without a table, -EINVAL for FDEs it does not read (not
 * GCC's or LLVM's pc-relative sdata4 encoding): the caller then knows
 * none. */
int elf_eh_frame_functions(Elf *e,
			   int (*fn)(void *ctx, uint64_t addr, uint64_t size),
			   void *ctx);

/* The span of path's loaded segments, at link-time addresses: the
 * lowest PT_LOAD p_vaddr and the highest p_vaddr + p_memsz.  0, -ENOENT,
 * -EINVAL (no PT_LOAD). */
int elf_load_span(const char *path, uint64_t *lo, uint64_t *hi);

/* fn(ctx, the relocation, its symbol, the symbol's name) for each
 * relocation of e's that names a dynamic symbol (.rela.dyn, .rela.plt),
 * until fn returns false. */
void elf_dyn_relocs(Elf *e,
		    bool (*fn)(void *ctx, const GElf_Rela *r,
			       const GElf_Sym *sym, const char *name),
		    void *ctx);

/* The objects of shared libraries that executable path holds a copy of
 * (R_X86_64_COPY: libstdc++'s std::cout, libc's stdout): their ranges
 * [start, end) at link-time addresses into *out (malloc'd, NULL if
 * none): how many, or -ENOENT. */
int elf_copy_objects(const char *path, uint64_t (**out)[2]);

/* Open path for libelf (read-mmap): 0, -errno (open) or -EINVAL (not
 * ELF); the caller ends e and closes fd. */
int elf_open_path(const char *path, int *fd, Elf **e);

/* The first section of e named name, its header in *sh; NULL if none. */
Elf_Scn *elf_section_named(Elf *e, const char *name, GElf_Shdr *sh);

/* path's GNU build id (NT_GNU_BUILD_ID) into buf: its length, -ENOENT
 * (none), -ENOSPC (longer than len), -EINVAL (not ELF) or -errno. */
int elf_build_id(const char *path, uint8_t *buf, size_t len);

#endif
