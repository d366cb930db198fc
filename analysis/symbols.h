/*
 * Symbolisation of a live traced process and of ELF files on disk.
 *
 * One `struct symbols` per traced process (after its exec): it reports the
 * modules mapped in /proc/PID/maps to elfutils' libdwfl, turns code and data
 * addresses into "withdraw at bank.c:23" / "accounts+8", tells the system
 * runtime (libc, ld.so, libstdc++, ...) apart from the user's code, and
 * unwinds the stack of a thread its caller holds in a ptrace-stop, using
 * the modules' CFI.  libdwfl never attaches to the process itself: registers
 * come from PTRACE_GETREGS and memory from /proc/PID/mem.
 *
 * Every answer is cached by address until the next symbols_refresh(), so
 * symbolising the same PC for thousands of events costs a hash lookup.
 * Not thread-safe: one caller (the tracer's loop) per struct symbols.
 *
 * The symbols_elf_*() helpers read ELF files with libelf and need no
 * process.
 */
#ifndef PTLOOM_SYMBOLS_H
#define PTLOOM_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbols;

/* Reports the modules of process `pid` from /proc/PID/maps.  Returns 0 or
 * -errno (-ESRCH/-ENOENT if the process is gone). */
int symbols_open(struct symbols **out, int pid);

/* Re-reads the maps: after a dlopen, at the first clone (when the shared
 * libraries are in place), or after an exec.  Drops the address cache, but
 * strings already returned stay valid until symbols_close(). */
int symbols_refresh(struct symbols *s);

void symbols_close(struct symbols *s);

/*
 * "withdraw at bank.c:23" (basename of the source file, innermost inlined
 * function), "withdraw+0x12 (bank)" without line information, "0x4011f0
 * (bank)" in a module without a symbol, "0x4011f0" outside any module.
 * `pc` is looked up as given: for a return address (a caller frame of a
 * backtrace) pass pc - 1 so the line is that of the call.
 */
void symbols_describe_code(struct symbols *s, uint64_t pc, char *buf,
			   size_t len);

/* "balance", "accounts+8", "0x55d0c0a01010 (bank)" in a module without a
 * covering symbol, "0x7ffff7a0c2a0" (heap, stack, TLS). */
void symbols_describe_data(struct symbols *s, uint64_t addr, char *buf,
			   size_t len);

/* True if `pc` lies in the system runtime (libc, libpthread, ld.so,
 * libstdc++, libgcc_s, libm, libdl, librt, libatomic, the vDSO), i.e. not
 * in the user's code.  False outside any module. */
bool symbols_is_runtime(struct symbols *s, uint64_t pc);

/*
 * Function name (innermost inlined function when DWARF says so, else the ELF
 * symbol), source file (full path as recorded in DWARF) and line of `pc`.
 * *file is NULL and *line 0 without line information.  Any out pointer may
 * be NULL.  The strings live until symbols_close().  Returns 0, or -ENOENT
 * if nothing at all is known about `pc` (*func is then NULL).
 */
int symbols_lookup(struct symbols *s, uint64_t pc, const char **func,
		   const char **file, int *line);

/*
 * Unwinds thread `tid` of the process, which the caller traces and holds in
 * a ptrace-stop, with the modules' CFI (frame pointers as a fallback).
 * Fills up to `max` PCs: pcs[0] is the current pc, the others are return
 * addresses (describe them at pc - 1).  Returns the count (>= 1), or -errno
 * (-ESRCH if the thread is not in a ptrace-stop of ours).
 */
int symbols_backtrace(struct symbols *s, int tid, uint64_t *pcs, int max);

/* Describes the innermost frame of `tid` that lies in user code, e.g.
 * "withdraw at bank.c:23"; falls back to the top frame, then to "?". */
void symbols_user_location(struct symbols *s, int tid, char *buf,
			   size_t len);

/*
 * Values (st_value, not relocated) of the defined symbols called `name` in
 * the ELF file, from .symtab and .dynsym, every symbol version included
 * (pthread_cond_wait@@GLIBC_2.3.2 and @GLIBC_2.2.5 give two values), without
 * duplicates.  Stores at most `max`.  Returns the number stored (0 if none)
 * or -errno (-EINVAL if not an ELF file).
 */
int symbols_elf_lookup(const char *path, const char *name, uint64_t *values,
		       int max);

/*
 * Which of subs[0..n) some symbol of the ELF file (.symtab or .dynsym,
 * defined or not) has in its name: the first one found, in the order the
 * symbols come, -1 if none, or -errno (-EINVAL if not an ELF file).
 */
int symbols_elf_naming(const char *path, const char *const *subs, int n);

/* Whether the ELF file's section named section holds the bytes of needle
 * (without its NUL): 1 or 0, or -errno (-EINVAL if not an ELF file). */
int symbols_elf_section_has(const char *path, const char *section,
			    const char *needle);

/* Copies the NT_GNU_BUILD_ID of the ELF file into buf.  Returns its length,
 * -ENOENT if it has none, -ENOSPC if `len` is too small, or -errno. */
int symbols_elf_build_id(const char *path, uint8_t *buf, size_t len);

/*
 * The code of the ELF file (link-time addresses, pairs [lo, hi), sorted,
 * disjoint) that its DWARF says is the body, inlined or not, of a function
 * of the C++ library's atomic headers (<atomic>, bits/atomic_base.h,
 * bits/atomic_wait.h, ...) or of Rust's core::sync::atomic.  On x86 an atomic load or release store is a
 * plain mov, so without this a std::atomic flag handing data over would
 * be a race.  Returns the number of ranges (0 without DWARF) or -errno;
 * *out is malloc'd.
 */
int symbols_elf_atomic_code(const char *path, uint64_t **out);

/*
 * The code of the ELF file (link-time pairs [lo, hi), sorted, disjoint)
 * that its DWARF's compile units cover (their DW_AT_ranges or low/high
 * pc): where an access's type can be known.  Returns the number of ranges
 * (0 without DWARF: a stripped program, a release build's own code) or
 * -errno; *out is malloc'd.
 */
int symbols_elf_unit_code(const char *path, uint64_t **out);

/*
 * The static data of the ELF file (link-time addresses, pairs [lo, hi),
 * sorted, disjoint) that its DWARF says are atomic objects: variables
 * with a fixed address (globals, statics, static members) of a C11
 * _Atomic type, a std::atomic, a Rust Atomic* or a Go sync/atomic type,
 * or such members of a structure, a union or an array.  A C11
 * atomic_load_explicit or atomic_store_explicit is a plain mov on x86,
 * with no function around it to tell it from any other.  Returns the
 * number of ranges (0 without DWARF) or -errno; *out is malloc'd.
 */
int symbols_elf_atomic_data(const char *path, uint64_t **out);

/*
 * The code of a language runtime in the ELF file (link-time pairs [lo,
 * hi), sorted, disjoint): in a Go executable (a .go.buildinfo section),
 * the functions of the packages Go's own race detector does not
 * instrument (runtime, runtime/internal/..., internal/cpu) and the
 * runtime's assembly, by the symbol table.  Race discovery observes only
 * its atomic instructions: its plain accesses race by design (sysmon
 * reads the Ps' state unlocked) and are no program's races.  Returns the
 * number of ranges (0 for any other file, or a stripped one) or -errno;
 * *out is malloc'd.
 */
int symbols_elf_runtime_code(const char *path, uint64_t **out);

/* An executable PT_LOAD segment, as in the program headers. */
struct elf_text {
	uint64_t vaddr, offset, size; /* size is p_filesz */
};

/* Fills up to `max` executable PT_LOAD segments (PF_X).  Returns the number
 * stored or -errno. */
int symbols_elf_text(const char *path, struct elf_text *out, int max);

#endif
