/*
 * Trampolines of the in-process agent (tracer/tramp.c): a libc
 * synchronisation function's first instructions replaced by a jump to a
 * slot of ptloom's code, which logs the call in the shared page while the
 * supervisor has said that no other thread can run (a point with no
 * choice), or stops at an int3 as the breakpoint would, then runs the
 * displaced instructions and jumps back.
 */
#ifndef PTLOOM_TRAMP_H
#define PTLOOM_TRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One slot of the code region per trampolined breakpoint. */
#define TRAMP_SLOT 224
/* The shared page's words the slots read and write (struct agent_data). */
#define TRAMP_NOW 0
#define TRAMP_QUANTUM 8
#define TRAMP_CURSOR 40
#define TRAMP_LIMIT 48
#define TRAMP_SCR_RAX 64
#define TRAMP_SCR_R11 72
#define TRAMP_SCR_FL 80
/* the slots' jump table (one word each), and the log after it */
#define TRAMP_TABLE 256
#define TRAMP_LOG 2048
/* A logged call: slot index, rdi, rsi, return address. */
#define TRAMP_ENTRY 32

/* How a function's entry is moved into a slot (position-independent:
 * one plan per libc file, emitted per process). */
struct tramp_plan {
	bool ok;
	uint8_t len;		/* bytes replaced at the entry (>= 5) */
	uint8_t n;		/* instructions displaced */
	struct tramp_insn {
		uint8_t off, len;
		uint8_t kind;	/* TI_PLAIN, TI_RIPREL, TI_JCC, TI_JMP */
		uint8_t disp_at; /* TI_RIPREL: offset of its disp32 */
		uint8_t cc;	/* TI_JCC: condition (low nibble) */
		int64_t target;	/* TI_JCC, TI_JMP, TI_RIPREL: from the entry */
	} insn[6];
	uint8_t bytes[32];	/* the original bytes from the entry */
};

enum { TI_PLAIN, TI_RIPREL, TI_JCC, TI_JMP };

/*
 * Plan the move of the function at vaddr whose code is code[0..size): its
 * first instructions covering 5 bytes must be movable (no call, return,
 * indirect or short-loop branch, syscall), and no direct branch of the
 * function may land inside them past the entry.  false: keep the int3.
 */
bool tramp_plan(const uint8_t *code, size_t size, uint64_t vaddr,
		struct tramp_plan *out);

/*
 * The slot for plan pl of the entry at site, placed at slot, with index id
 * and the shared page at page: TRAMP_SLOT bytes into out.  false when a
 * distance does not fit in 32 bits.
 */
bool tramp_emit(const struct tramp_plan *pl, uint64_t site, uint64_t slot,
		uint32_t id, uint64_t page, uint8_t *out);

/* The jump written at site to slot (5 bytes). */
void tramp_jump(uint64_t site, uint64_t slot, uint8_t *out);

/* Offsets in a slot: the int3 the slow path stops at, and the displaced
 * instructions the thread resumes at after the point. */
#define TRAMP_FAST 6
#define TRAMP_FAIL 136
#define TRAMP_INT3 160
#define TRAMP_DISP 161

/* The address in the function (orig[0..len): its first bytes, at site)
 * of the displaced instruction at offset off of its slot: false when off
 * starts none. */
bool tramp_unmove(const uint8_t *orig, size_t len, uint64_t site,
		  uint64_t off, uint64_t *pc);

/*
 * A thread stopped at offset off of a slot (access: an access slot),
 * inside its sequence: what the supervisor does before it goes on.  The
 * registers the sequence changed come back from the page's scratch words
 * now (another thread may use them before this one runs again), the
 * clock advances if the sequence committed its point and had not yet
 * advanced it, and the thread goes on at resume: the slot's start (the
 * point was not logged: the slot logs it again or stops) or its
 * displaced instructions (it was).  false: off is outside the sequence.
 */
enum { TFIX_R11 = 1, TFIX_RAX = 2, TFIX_FLAGS = 4, TFIX_ALL = 7 };
struct tramp_fix {
	uint8_t regs;	/* TFIX_*: what comes back from the scratch words */
	bool clock;	/* advance the clock by the quantum */
	uint16_t resume; /* the offset the thread goes on at */
};
bool tramp_fix(bool access, uint64_t off, struct tramp_fix *f);

/*
 * free() and realloc() in race discovery (their observation points, the
 * block forgotten: thread.c observe_free): a call's slot whose entry is
 * the slot, rdi, the block's chunk header (the word before rdi, read only
 * where rdi is nonzero and 16-aligned) and the return address, without
 * the clock's quantum (an observation is no step).  Its table word logs
 * only while the supervisor lets t log its observations alone.
 * tramp_fix_free: as tramp_fix for such a slot (nothing committed before
 * offset 107).
 */
bool tramp_emit_free(const struct tramp_plan *pl, uint64_t site, uint64_t slot,
		     uint32_t id, uint64_t page, uint8_t *out);
bool tramp_fix_free(uint64_t off, struct tramp_fix *f);

/*
 * Access slots (race discovery's observation points): one instruction of
 * 5 bytes or more that touches memory, moved into a slot that logs the
 * address it is about to touch and runs it.  No table: the supervisor
 * lets a process's access slots be entered only while no other thread
 * runs (bp.c), and gates the log with its limit (a full or closed log
 * goes to the int3 at TRAMP_INT3, the displaced instruction is at
 * TRAMP_DISP as in a call's slot).  The entry: the site with TRAMP_ACCESS
 * set, the effective address.
 */
#define TRAMP_ASLOT 208
#define TRAMP_SCR_EA 88
/* Where the site's jump leads: `jmp *word(%rip)` and its word, the
 * logging sequence (the slot's start) or, once the point is sampled out,
 * lifted or retired, the displaced instructions alone (TRAMP_DISP): a
 * jump over several instructions cannot be taken back while the process
 * observes (bp.multi), so this is how it stops logging. */
#define TRAMP_ASTUB 192
#define TRAMP_AWORD (TRAMP_ASTUB + 6)
/* where in an access slot its entry's first word (site | TRAMP_ACCESS)
 * is, as an immediate: the supervisor reads a slot's site there */
#define TRAMP_ASITE 74
#define TRAMP_ACCESS (1ull << 63)
struct disasm_mem;
/* One instruction at vaddr (code[0..len)) that can move alone: 5 bytes
 * or more, no branch, call, return or syscall. */
bool tramp_plan_one(const uint8_t *code, size_t len, uint64_t vaddr,
		    struct tramp_plan *out);
/* The instructions at vaddr (code[0..size)) that make up exactly len
 * bytes (5 to 16), each movable as in tramp_plan, no branch among them
 * into them past the first; that no branch of the function lands inside
 * them is the caller's to know (disasm.c, insn_info.move_len). */
bool tramp_plan_span(const uint8_t *code, size_t size, uint64_t vaddr,
		     size_t len, struct tramp_plan *out);
/* The access slot for plan pl (its operand m, as disasm.c decodes it:
 * no segment, no 32-bit address, no vector index) of the instruction at
 * site, at slot, with the page (a view of it within a rel32) at page:
 * TRAMP_ASLOT bytes into out.  false when it cannot be made. */
bool tramp_emit_access(const struct tramp_plan *pl, const struct disasm_mem *m,
		       uint64_t site, uint64_t slot, uint64_t page,
		       uint8_t *out);

/*
 * Futex wakes taken in the program: glibc's private FUTEX_WAKE calls
 * (`mov $SYS_futex, %eax; syscall` in its code: a mutex's unlock finding a
 * waiter, a condition variable's signal; and its syscall() function's)
 * while the supervisor lets t log.  Only the `mov` (5 bytes) moves: the
 * jump to the slot replaces it, and the `syscall` stays where it was, so
 * the slot's way to a stop is the `mov` and a jump back to the `syscall`:
 * the seccomp stop sees the program's own pc.
 * A slot takes three of the region's units (TRAMP_FSLOT bytes, one table
 * word: the first unit's).  It logs a wake (its first word: the slot's
 * index with TRAMP_FUTEX set and the number of threads it wakes above bit
 * 32; rdi, rsi, rdx) when eax is SYS_futex, rsi
 * FUTEX_WAKE|FUTEX_PRIVATE_FLAG, rdx at least 1, and the page's waiter
 * words (TRAMP_WADDR: up to TRAMP_NWAIT addresses with their waiter
 * counts, the supervisor's, all of the process's private waits) give the
 * address at most one waiter; it answers that
 * count in rax, rcx and r11 as the syscall instruction leaves them (the
 * next pc; IF, bit 1 and the arithmetic flags), advances the clock and,
 * when it wakes a thread, closes the log (limit = cursor: the woken
 * thread may run from here on).  Anything else goes to the `mov` and
 * the syscall.
 */
#define TRAMP_FSLOT (3 * TRAMP_SLOT)
#define TRAMP_FUTEX (1ull << 30)
#define TRAMP_SCR_NEW 96
#define TRAMP_WADDR 104 /* TRAMP_NWAIT pairs: address, waiters */
#define TRAMP_NWAIT 6
#define TRAMP_FSTOP TRAMP_INT3 /* the slot's way to the syscall */
/* mov $SYS_futex, %eax; syscall */
#define TRAMP_FUTEX_LEN 7
/* What moves from a site (5 bytes; the syscall follows): glibc's own
 * `mov $SYS_futex, %eax`, or its syscall() function's `mov 8(%rsp), %r9`
 * (Rust's std and other callers of syscall(SYS_futex, ...): the slot then
 * checks the number too) */
enum { TRAMP_FUTEX_GLIBC, TRAMP_FUTEX_SYSCALL, TRAMP_FUTEX_KINDS };
extern const uint8_t tramp_futex_moved[TRAMP_FUTEX_KINDS][5];
/* b (7 bytes) is a site of that kind: its `mov`, then `syscall` */
bool tramp_futex_site_at(const uint8_t *b, int kind);
/* The TRAMP_FUTEX_SYSCALL site of glibc's syscall() (its code[0..size) at
 * vaddr), found whole: false if none */
bool tramp_futex_syscall_site(const uint8_t *code, size_t size,
			      uint64_t vaddr, uint64_t *site);
/* Link-time addresses of the futex wake sites in an executable section
 * (code[0..size) at vaddr), each found at an instruction boundary by a
 * linear sweep from the nearest function start before it (starts[0..n),
 * sorted): up to max into out.  How many. */
int tramp_futex_sites(const uint8_t *code, size_t size, uint64_t vaddr,
		      const uint64_t *starts, size_t n, uint64_t *out, int max);
/* The slot for the site of that kind, with index id: TRAMP_FSLOT bytes
 * into out. */
bool tramp_emit_futex(uint64_t site, int kind, uint64_t slot, uint32_t id,
		      uint64_t page, uint8_t *out);
/* A thread stopped at offset off of a futex slot: registers back from
 * the scratch words and start again at the site (resume 0), the clock
 * taken back (unclock), or, once the wake is logged, on after the
 * syscall with rcx = that pc (past). */
struct tramp_ffix {
	uint8_t regs;
	bool unclock, past;
};
bool tramp_fix_futex(uint64_t off, struct tramp_ffix *f);

/*
 * rdtsc and rdtscp answered in the program (tracer/tsc.c): the
 * instruction and those after it that make up 5 to 16 bytes (disasm.c's
 * move_len: nothing branches into them, none touches memory) move into a
 * slot of TRAMP_TSLOT bytes, which answers from the page's clock as the
 * supervisor's emulation does (syscall.c syscall_answer_rdtsc: the clock
 * times 3, then a quantum on; rdtscp's ecx 0), counting a read, without
 * changing a flag or any register but rax and rdx (and rcx), then runs the
 * others (from TRAMP_TDISP) and jumps back.  It needs BMI2 (rorx: a
 * flag-free split of the answer).  pl: tramp_plan_span's of the whole
 * span at site.
 */
#define TRAMP_TSLOT 96
#define TRAMP_TDISP 54
#define TRAMP_READS 24
bool tramp_emit_tsc(const struct tramp_plan *pl, bool rdtscp, uint64_t site,
		    uint64_t slot, uint64_t page, uint8_t *out);
/* The program's address of the instruction at offset off of such a slot
 * (its answer's part: the site), false when none starts there. */
bool tramp_tsc_unmove(const struct tramp_plan *pl, uint64_t site,
		      uint64_t off, uint64_t *pc);

#endif
