/*
 * tracer/tramp.c against the CPU: a function's entry moved into a slot
 * (a jump at the entry, the slot's code, the displaced instructions) is
 * called natively with random registers and flags, through each of the
 * slot's three ways: logging the call (the page's table says so), the
 * int3 the supervisor would stop at (a SIGTRAP handler plays the
 * supervisor: it resumes at the displaced instructions), and the int3
 * after a full log.  Every register and flag must come back as it went
 * in, at the int3 too; the log must hold the call's rdi, rsi and return
 * address, and the clock must advance by a quantum per logged call.  The
 * plans are checked on instruction sequences a libc entry may start with.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include "../../tracer/tramp.h"
#include "cpu_call.h"

/* the flags lahf/seto keep and sahf/add give back, and the ones the
 * ABI fixes (DF clear) or the CPU owns */
#define FLAGS (0x1ull | 0x4 | 0x10 | 0x40 | 0x80 | 0x800)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define PAGE_LEN (64u << 10)

struct page {
	uint64_t now, quantum, realtime, reads, on, cursor, limit, region;
	uint64_t scr[3];
};

static uint8_t *mem;     /* the page, then the slot, then the function */
static uint8_t *slot, *fn;
static volatile uint64_t trap_regs[18];
static volatile int traps;

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;
	static const int order[16] = { REG_RAX, REG_RBX, REG_RCX, REG_RDX,
				       REG_RSI, REG_RDI, REG_RBP, REG_RSP,
				       REG_R8,	REG_R9,	 REG_R10, REG_R11,
				       REG_R12, REG_R13, REG_R14, REG_R15 };

	(void)sig;
	(void)si;
	for (int i = 0; i < 16; i++)
		trap_regs[i] = (uint64_t)g[order[i]];
	trap_regs[16] = (uint64_t)g[REG_EFL];
	trap_regs[17] = (uint64_t)g[REG_RIP];
	traps++;
	/* what the supervisor does after the point: the displaced code */
	g[REG_RIP] = (greg_t)(slot + TRAMP_DISP);
}

static void setup(void)
{
	/* five movable bytes (the entry the jump replaces), then ret */
	static const uint8_t body[] = { 0x48, 0x89, 0xc0, /* mov %rax,%rax */
					0x90, 0x90, 0xc3 };
	struct tramp_plan pl;
	struct sigaction sa;

	mem = mmap(NULL, PAGE_LEN + 2 * 4096, PROT_READ | PROT_WRITE |
						      PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(mem != MAP_FAILED);
	slot = mem + PAGE_LEN;
	fn = slot + 4096;
	memcpy(fn, body, sizeof(body));
	cr_assert(tramp_plan(fn, sizeof(body), (uint64_t)fn, &pl));
	cr_assert_eq(pl.len, 5);
	cr_assert(tramp_emit(&pl, (uint64_t)fn, (uint64_t)slot, 0,
			     (uint64_t)mem, slot));
	tramp_jump((uint64_t)fn, (uint64_t)slot, fn);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
}

static void set_way(bool log)
{
	uint64_t *table = (uint64_t *)(mem + TRAMP_TABLE);

	table[0] = (uint64_t)slot + (log ? TRAMP_FAST : TRAMP_INT3);
}

static void random_cpu(struct cpu *c)
{
	for (int i = 0; i < 16; i++)
		c->g[i] = rnd();
	c->flags = 0x202 | (rnd() & FLAGS);
}

static void same_cpu(const struct cpu *in, const struct cpu *out,
		     const char *way)
{
	for (int i = 0; i < 16; i++)
		if (i != 7)
			cr_assert_eq(in->g[i], out->g[i],
				     "%s: register %d changed: %#llx -> %#llx",
				     way, i, (unsigned long long)in->g[i],
				     (unsigned long long)out->g[i]);
	cr_assert_eq(in->flags & FLAGS, out->flags & FLAGS,
		     "%s: flags %#llx -> %#llx", way,
		     (unsigned long long)in->flags,
		     (unsigned long long)out->flags);
}

Test(trampolines, every_register_and_flag_kept_on_each_way)
{
	struct page *pg;

	setup();
	pg = (struct page *)mem;
	pg->quantum = 1000;
	for (int round = 0; round < 300; round++) {
		struct cpu in, out;
		int way = (int)(rnd() % 3); /* log, stop, log full: stop */
		uint64_t cur = TRAMP_LOG + 32 * (uint64_t)(rnd() % 100);

		random_cpu(&in);
		out = in;
		pg->cursor = cur;
		pg->limit = way == 2 ? cur : cur + 32;
		pg->now = 5000;
		set_way(way != 1);
		traps = 0;
		call_with(&out, fn);
		same_cpu(&in, &out, way == 0 ? "logged" : "stopped");
		if (way == 0) {
			const uint64_t *e = (const uint64_t *)(mem + cur);

			cr_assert_eq(traps, 0);
			cr_assert_eq(pg->cursor, cur + 32, "the commit");
			cr_assert_eq(pg->now, 6000, "a quantum for the point");
			cr_assert_eq(e[0], 0, "the slot");
			cr_assert_eq(e[1], in.g[5], "rdi");
			cr_assert_eq(e[2], in.g[4], "rsi");
			cr_assert_eq(e[3], out.ret, "the return address");
		} else {
			/* at the int3, the entry's registers */
			struct cpu at = in;

			cr_assert_eq(traps, 1);
			for (int i = 0; i < 16; i++)
				if (i != 7)
					at.g[i] = trap_regs[i];
			at.flags = trap_regs[16];
			same_cpu(&in, &at, "at the int3");
			cr_assert_eq(trap_regs[17],
				     (uint64_t)slot + TRAMP_INT3 + 1);
			cr_assert_eq(pg->cursor, cur, "nothing logged");
			cr_assert_eq(pg->now, 5000);
		}
	}
}

/* One plan: code at 0x100000, its first bytes moved. */
static bool plan(const uint8_t *code, size_t n, struct tramp_plan *pl)
{
	return tramp_plan(code, n, 0x100000, pl);
}

Test(trampolines, entries_that_cannot_move_keep_the_int3)
{
	struct tramp_plan pl;
	/* a call in the first five bytes (sem_wait's entry) */
	static const uint8_t call[] = { 0x53, 0x48, 0x89, 0xfb, 0xe8,
					0,    0,    0,	  0,	0xc3 };
	/* pthread_spin_lock: its loop jumps back to byte 0 of the moved
	 * bytes' second instruction... here to byte 3, inside them */
	static const uint8_t loop[] = { 0xf0, 0xff, 0x0f,	/* lock decl */
					0x75, 0x03,		/* jne +3 */
					0x31, 0xc0, 0xc3,	/* ret 0 */
					0xf3, 0x90,		/* pause */
					0xeb, 0xf7 };		/* jmp to 3 */
	/* a function shorter than the jump */
	static const uint8_t tiny[] = { 0x31, 0xc0, 0xc3 };

	cr_assert_not(plan(call, sizeof(call), &pl), "a call moved");
	cr_assert_not(plan(loop, sizeof(loop), &pl),
		      "a jump into the moved bytes");
	cr_assert_not(plan(tiny, sizeof(tiny), &pl), "a 3-byte function");
}

Test(trampolines, branches_and_rip_relative_operands_keep_their_targets)
{
	/* lock decl (%rdi); jne +0x0b (to 0x10); ...; the loop back goes
	 * to the entry itself, which is the call again */
	static const uint8_t spin[] = { 0xf0, 0xff, 0x0f, 0x75, 0x0b,
					0x31, 0xc0, 0xc3, 0x90, 0x90,
					0x90, 0x90, 0x90, 0x90, 0x90,
					0x90, 0xf3, 0x90, 0x83, 0x3f,
					0x00, 0x7f, 0xe9, 0xeb, 0xf7 };
	/* mov 0x1000(%rip), %eax; ret */
	static const uint8_t rip[] = { 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00,
				       0xc3 };
	struct tramp_plan pl;
	uint8_t out[TRAMP_SLOT];
	uint64_t site = 0x7f0000100000, sl = 0x7f0000200000;
	uint64_t page = 0x7f0000180000, pc = 0;

	cr_assert(plan(spin, sizeof(spin), &pl));
	cr_assert_eq(pl.len, 5);
	cr_assert(tramp_emit(&pl, site, sl, 7, page, out));
	/* the lock decl as it was, the jne as a jne rel32 to site + 0x10,
	 * then a jmp back to site + 5 */
	cr_assert_arr_eq(out + TRAMP_DISP, spin, 3);
	uint8_t *j = out + TRAMP_DISP + 3;
	int32_t rel;

	cr_assert_eq(j[0], 0x0f);
	cr_assert_eq(j[1], 0x85);
	memcpy(&rel, j + 2, 4);
	cr_assert_eq(sl + TRAMP_DISP + 3 + 6 + (uint64_t)(int64_t)rel,
		     site + 0x10);
	cr_assert_eq(j[6], 0xe9);
	memcpy(&rel, j + 7, 4);
	cr_assert_eq(sl + TRAMP_DISP + 3 + 11 + (uint64_t)(int64_t)rel,
		     site + 5);
	/* and back: each displaced instruction is its own in the function */
	cr_assert(tramp_unmove(spin, sizeof(spin), site, TRAMP_DISP, &pc));
	cr_assert_eq(pc, site);
	cr_assert(tramp_unmove(spin, sizeof(spin), site, TRAMP_DISP + 3, &pc));
	cr_assert_eq(pc, site + 3);
	cr_assert(tramp_unmove(spin, sizeof(spin), site, TRAMP_DISP + 9, &pc));
	cr_assert_eq(pc, site + 5);
	cr_assert_not(
		tramp_unmove(spin, sizeof(spin), site, TRAMP_DISP + 1, &pc));

	cr_assert(plan(rip, sizeof(rip), &pl));
	cr_assert_eq(pl.len, 6);
	cr_assert(tramp_emit(&pl, site, sl, 0, page, out));
	memcpy(&rel, out + TRAMP_DISP + 2, 4);
	cr_assert_eq(sl + TRAMP_DISP + 6 + (uint64_t)(int64_t)rel,
		     site + 6 + 0x1000, "the operand's address");
}

Test(trampolines, a_stop_inside_the_sequence_starts_it_again)
{
	/* before the saves nothing changed; after them, until the commit,
	 * the registers come back from the page; past the commit the
	 * supervisor finishes the clock's advance */
	cr_assert_eq(tramp_where(0), TRAMP_OUTSIDE);
	cr_assert_eq(tramp_where(TRAMP_FAST), TRAMP_RESTART);
	cr_assert_eq(tramp_where(21), TRAMP_RESTART_RAX);
	cr_assert_eq(tramp_where(31), TRAMP_RESTART_ALL);
	cr_assert_eq(tramp_where(84), TRAMP_RESTART_ALL);
	cr_assert_eq(tramp_where(92), TRAMP_FINISH);
	cr_assert_eq(tramp_where(99), TRAMP_FINISH);
	cr_assert_eq(tramp_where(TRAMP_DONE), TRAMP_OUTSIDE);
	cr_assert_eq(tramp_where(TRAMP_INT3), TRAMP_OUTSIDE);
}
