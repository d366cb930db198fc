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
#include "../../tracer/disasm.h"
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
	uint64_t scr[4]; /* rax, r11, flags, an access's address */
};

static uint8_t *mem;     /* the page, then the slot, then the function */
static uint8_t *slot, *fn;
static volatile uint64_t trap_regs[18];
static volatile int traps;

/* mem: the page (PAGE_LEN) and pages more after it, read, write and
 * execute; slot at the first of those, fn fn_at pages after it */
static void map_code(size_t pages, size_t fn_at)
{
	mem = mmap(NULL, PAGE_LEN + pages * 4096,
		   PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(mem != MAP_FAILED);
	slot = mem + PAGE_LEN;
	fn = slot + fn_at * 4096;
}

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

	map_code(2, 1);
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

/*
 * The supervisor's side of a stop inside a slot's sequence (a signal, an
 * interrupt), played by a SIGTRAP handler under the trap flag: at the
 * stop-th instruction of the slot, tramp_fix() says which registers come
 * back from the page's scratch words, whether the clock advances and
 * where the thread goes on; then the scratch words are scribbled over, as
 * another thread's slot would, and the thread runs on without the trap
 * flag.  Whatever the instruction, the call must come out with every
 * register and flag it went in with, one entry logged, one quantum.
 */
static volatile int step_at, steps, fixed;

/* the registers tramp_fix says come back from the scratch words */
static void scratch_back(greg_t *g, int regs)
{
	const struct page *pg = (const struct page *)mem;

	if (regs & TFIX_R11)
		g[REG_R11] = (greg_t)pg->scr[1];
	if (regs & TFIX_RAX)
		g[REG_RAX] = (greg_t)pg->scr[0];
	if (regs & TFIX_FLAGS)
		g[REG_EFL] = (greg_t)(((uint64_t)g[REG_EFL] & ~0x8d5ull) |
				      ((pg->scr[2] >> 8) & 0xd5) |
				      ((pg->scr[2] & 1) << 11));
}
static volatile bool fix_access;
static uint8_t *fix_slot;

/* The step_at-th instruction of [lo, lo + len) the trap flag meets:
 * the flag off, true (once).  Out of the range after steps in it (the
 * code was stepped through): the flag off, false. */
static bool at_step(greg_t *g, uint64_t lo, uint64_t len)
{
	uint64_t rip = (uint64_t)g[REG_RIP];

	if (rip < lo || rip - lo >= len || fixed) {
		if (steps && !fixed)
			g[REG_EFL] &= ~0x100ll;
		return false;
	}
	if (steps++ != step_at)
		return false;
	fixed = 1;
	g[REG_EFL] &= ~0x100ll;
	return true;
}

static void on_step(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;
	struct page *pg = (struct page *)mem;
	uint64_t off = (uint64_t)g[REG_RIP] - (uint64_t)fix_slot;
	struct tramp_fix f;

	(void)sig;
	(void)si;
	if (!at_step(g, (uint64_t)fix_slot, TRAMP_INT3) ||
	    !tramp_fix(fix_access, off, &f))
		return;
	scratch_back(g, f.regs);
	if (f.clock)
		pg->now += pg->quantum;
	g[REG_RIP] = (greg_t)(fix_slot + f.resume);
	pg->scr[0] = pg->scr[1] = pg->scr[2] = pg->scr[3] = rnd();
}

static void step_through(bool access, uint8_t *code, const struct cpu *in,
			 int nsteps)
{
	struct page *pg = (struct page *)mem;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_step;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	fix_access = access;
	for (int k = 0; k < nsteps; k++) {
		struct cpu out = *in;
		uint64_t cur = TRAMP_LOG + 32 * (uint64_t)(rnd() % 100);

		pg->cursor = cur;
		pg->limit = cur + 32;
		pg->now = 5000;
		step_at = k;
		steps = fixed = 0;
		out.flags |= 0x100; /* the trap flag */
		call_with(&out, code);
		out.flags &= ~0x100ull;
		same_cpu(in, &out, "stopped inside");
		cr_assert(fixed, "the sequence has fewer than %d steps", k + 1);
		cr_assert_eq(pg->cursor, cur + 32, "step %d: one entry", k);
		if (!access)
			cr_assert_eq(pg->now, 6000, "step %d: one quantum", k);
	}
}

Test(trampolines, a_stop_inside_a_call_slot_gives_everything_back)
{
	struct cpu in;

	setup();
	((struct page *)mem)->quantum = 1000;
	set_way(true);
	fix_slot = slot;
	random_cpu(&in);
	/* the jump, then the sequence's 24 instructions to its jmp */
	step_through(false, fn, &in, 25);
	cr_assert_not(tramp_fix(false, TRAMP_INT3, &(struct tramp_fix){ 0 }));
	cr_assert_not(tramp_fix(false, TRAMP_DISP, &(struct tramp_fix){ 0 }));
}

/* code at fn (an access instruction first, then ret unless the code is
 * longer than its first span bytes: span 0, the instruction alone) moved
 * into an access slot */
static void setup_span(const uint8_t *insn, size_t n, size_t span,
		       uint64_t *ea_off);

static void setup_access(const uint8_t *insn, size_t n, uint64_t *ea_off)
{
	setup_span(insn, n, 0, ea_off);
}

static void setup_span(const uint8_t *insn, size_t n, size_t span,
		       uint64_t *ea_off)
{
	struct tramp_plan pl;
	struct insn_info ii;

	map_code(3, 1);
	memcpy(fn, insn, n);
	fn[n] = 0xc3;
	memcpy(fn + 2048, insn, n); /* the same, run natively */
	fn[2048 + n] = 0xc3;
	if (span) {
		cr_assert(tramp_plan_span(fn, n + 1, (uint64_t)fn, span, &pl));
		cr_assert_eq(pl.len, span);
	} else {
		cr_assert(tramp_plan_one(fn, n + 1, (uint64_t)fn, &pl));
		cr_assert_eq(pl.len, n);
	}
	cr_assert_eq(disasm_decode(fn, n + 1, (uint64_t)fn, &ii), 0);
	cr_assert(tramp_emit_access(&pl, &ii.mem[0], (uint64_t)fn,
				    (uint64_t)slot, (uint64_t)mem, slot));
	tramp_jump((uint64_t)fn, (uint64_t)slot, fn);
	*ea_off = ii.rip_relative ? (uint64_t)ii.mem[0].disp : 0;
}

/* Instructions of 5 bytes or more with an operand in each form: base and
 * index (rax and r11, the registers the slot uses), base alone, index
 * alone, rip-relative; loads, stores, read-modify-writes, a lock. */
static const struct {
	uint8_t b[12];
	uint8_t n;
	int base, index; /* cpu.g index, -1: none */
	int scale;
	int32_t disp;
} access_insns[] = {
	/* mov %rax, 0x200(%r11,%rax,8) */
	{ { 0x49, 0x89, 0x84, 0xc3, 0x00, 0x02, 0x00, 0x00 }, 8, 11, 0, 8,
	  0x200 },
	/* movq $5, 0x40(%rax) */
	{ { 0x48, 0xc7, 0x40, 0x40, 0x05, 0x00, 0x00, 0x00 }, 8, 0, -1, 1,
	  0x40 },
	/* addl $1, 0x100(%rbx) */
	{ { 0x83, 0x83, 0x00, 0x01, 0x00, 0x00, 0x01 }, 7, 1, -1, 1, 0x100 },
	/* mov 0x100(,%rcx,4), %edx (no base) */
	{ { 0x8b, 0x14, 0x8d, 0x00, 0x01, 0x00, 0x00 }, 7, -1, 2, 4, 0x100 },
	/* lock xadd %r12, 0x18(%r13) */
	{ { 0xf0, 0x4d, 0x0f, 0xc1, 0x65, 0x18 }, 6, 13, -1, 1, 0x18 },
	/* mov 0xc00(%rip), %eax */
	{ { 0x8b, 0x05, 0x00, 0x0c, 0x00, 0x00 }, 6, -1, -1, 1, 0xc00 },
	/* mov %r11, 0x10(%rsp)... not an observed form; cmp with an
	 * imm32 instead: cmpl $0x12345, 0x20(%r11) */
	{ { 0x41, 0x81, 0x7b, 0x20, 0x45, 0x23, 0x01, 0x00 }, 8, 11, -1, 1,
	  0x20 },
};

/* registers for access_insns[i] whose operand lands in buf */
static void access_cpu(int i, uint8_t *buf, struct cpu *c)
{
	random_cpu(c);
	if (access_insns[i].index >= 0)
		c->g[access_insns[i].index] =
			access_insns[i].base < 0
				? (uint64_t)buf / (uint64_t)access_insns[i].scale
				: rnd() % 16;
	if (access_insns[i].base >= 0)
		c->g[access_insns[i].base] =
			(uint64_t)buf -
			(access_insns[i].index >= 0
				 ? c->g[access_insns[i].index] *
					   (uint64_t)access_insns[i].scale
				 : 0);
}

/* access_insns[i] from random registers and 16 random bytes at its
 * operand: run natively (the copy at fn + 2048, its operand at native) into
 * *a and after[]; then *b and the same bytes at target, for the caller to
 * run through the slot.  *in: the registers both started from. */
static void native_then_same_start(size_t i, uint8_t *buf, uint8_t *native,
				   uint8_t *target, struct cpu *in,
				   struct cpu *a, struct cpu *b,
				   uint8_t after[16])
{
	uint8_t before[16];

	access_cpu((int)i, buf, in);
	for (int k = 0; k < 16; k++)
		before[k] = (uint8_t)rnd();
	*a = *in;
	memcpy(native, before, 16);
	call_with(a, fn + 2048);
	memcpy(after, native, 16);
	*b = *in;
	memcpy(target, before, 16);
}

Test(trampolines, an_access_slot_logs_the_address_and_runs_the_instruction)
{
	for (size_t i = 0; i < sizeof(access_insns) / sizeof(access_insns[0]);
	     i++) {
		uint64_t rip_ea;
		struct sigaction sa;

		setup_access(access_insns[i].b, access_insns[i].n, &rip_ea);
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_trap;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGTRAP, &sa, NULL);
		/* the operand: in the slot's page, past the log (or the
		 * rip-relative one, in the function's page) */
		uint8_t *buf = mem + PAGE_LEN - 4096;
		uint8_t *target = rip_ea ? (uint8_t *)rip_ea
					 : buf + access_insns[i].disp;
		/* (the native copy's rip-relative operand is its own) */
		uint8_t *native = rip_ea ? target + 2048 : target;
		struct page *pg = (struct page *)mem;

		for (int round = 0; round < 100; round++) {
			struct cpu in, a, b;
			bool logged = round % 3 != 2;
			uint64_t cur = TRAMP_LOG + 32 * (uint64_t)(rnd() % 50);
			uint8_t after[16];

			native_then_same_start(i, buf, native, target, &in, &a,
					       &b, after);
			/* through the slot: logged, or the int3 of a
			 * closed log */
			pg->cursor = cur;
			pg->limit = logged ? cur + 32 : cur;
			traps = 0;
			call_with(&b, fn);
			same_cpu(&a, &b, logged ? "logged" : "stopped");
			cr_assert_arr_eq(target, after, 16,
					 "insn %zu: memory as natively", i);
			if (logged) {
				const uint64_t *e =
					(const uint64_t *)(mem + cur);

				cr_assert_eq(traps, 0);
				cr_assert_eq(pg->cursor, cur + 32);
				cr_assert_eq(e[0], (uint64_t)fn | TRAMP_ACCESS);
				cr_assert_eq(e[1], (uint64_t)target,
					     "insn %zu: the address", i);
			} else {
				struct cpu at = in;

				cr_assert_eq(traps, 1);
				for (int k = 0; k < 16; k++)
					if (k != 7)
						at.g[k] = trap_regs[k];
				at.flags = trap_regs[16];
				same_cpu(&in, &at, "at the int3");
				cr_assert_eq(pg->cursor, cur, "nothing logged");
			}
		}
		munmap(mem, PAGE_LEN + 3 * 4096);
	}
}

/* The site's jump leads to the slot's stub: its word says log (the
 * slot's start) or only run the moved instruction (TRAMP_DISP), as a
 * point sampled out, lifted or retired does. */
Test(trampolines, an_access_slot_stub_logs_or_only_runs_the_instruction)
{
	uint64_t rip_ea;
	uint8_t *buf;
	struct page *pg;

	setup_access(access_insns[0].b, access_insns[0].n, &rip_ea);
	tramp_jump((uint64_t)fn, (uint64_t)slot + TRAMP_ASTUB, fn);
	buf = mem + PAGE_LEN - 4096;
	pg = (struct page *)mem;
	for (int round = 0; round < 2; round++) {
		struct cpu in, a, b;
		bool log = round == 0;
		uint64_t word = (uint64_t)slot + (log ? 0 : TRAMP_DISP);
		uint8_t after[16];
		uint8_t *target = buf + access_insns[0].disp;

		memcpy(slot + TRAMP_AWORD, &word, 8);
		native_then_same_start(0, buf, target, target, &in, &a, &b,
				       after);
		pg->cursor = TRAMP_LOG;
		pg->limit = TRAMP_LOG + 32;
		traps = 0;
		call_with(&b, fn);
		same_cpu(&a, &b, log ? "through the stub, logged"
				     : "through the stub, not logged");
		cr_assert_arr_eq(target, after, 16);
		cr_assert_eq(traps, 0);
		cr_assert_eq(pg->cursor, log ? TRAMP_LOG + 32 : TRAMP_LOG,
			     "logged %s", log ? "nothing" : "anyway");
	}
	/* a stop at the stub's jump: nothing changed, it starts again at
	 * the site */
	struct tramp_fix f;

	cr_assert(tramp_fix(true, TRAMP_ASTUB, &f));
	cr_assert_eq(f.regs, 0);
	cr_assert_eq(f.resume, 0);
	munmap(mem, PAGE_LEN + 3 * 4096);
}

Test(trampolines, a_stop_inside_an_access_slot_gives_everything_back)
{
	uint64_t rip_ea;
	struct cpu in;

	setup_access(access_insns[0].b, access_insns[0].n, &rip_ea);
	fix_slot = slot;
	access_cpu(0, mem + PAGE_LEN - 4096, &in);
	/* the jump, then the sequence's 23 instructions to its jmp */
	step_through(true, fn, &in, 24);
	cr_assert_not(tramp_fix(true, TRAMP_INT3, &(struct tramp_fix){ 0 }));
}

Test(trampolines, instructions_that_cannot_move_alone_keep_the_int3)
{
	struct tramp_plan pl;
	/* mov (%rdi), %eax: 2 bytes */
	static const uint8_t shortie[] = { 0x8b, 0x07, 0xc3 };
	/* call *0x10(%rax): a branch */
	static const uint8_t call[] = { 0xff, 0x50, 0x10, 0x90, 0x90, 0xc3 };
	/* jmp *0x1000(%rip) */
	static const uint8_t jmp[] = { 0xff, 0x25, 0x00, 0x10, 0x00, 0x00 };

	cr_assert_not(tramp_plan_one(shortie, sizeof(shortie), 0x1000, &pl));
	cr_assert_not(tramp_plan_one(call, sizeof(call), 0x1000, &pl));
	cr_assert_not(tramp_plan_one(jmp, sizeof(jmp), 0x1000, &pl));
}

/* A short access instruction moves with the ones after it (race
 * discovery's insn_info.move_len): a 3-byte compare and the jne after
 * it (its target outside the moved bytes: a rel32 in the slot), either
 * way the branch goes; a 2-byte load and the add after it. */
Test(trampolines, a_short_access_moves_with_the_instructions_after_it)
{
	static const uint8_t cmp_jne[] = {
		0x83, 0x3f, 0x00,		/* cmpl $0, (%rdi) */
		0x75, 0x03,			/* jne +3 */
		0x31, 0xc9,			/* xor %ecx, %ecx */
		0xc3,				/* ret */
		0xb9, 0x07, 0x00, 0x00, 0x00,	/* mov $7, %ecx */
		0xc3,
	};
	static const uint8_t load_add[] = {
		0x8b, 0x07,			/* mov (%rdi), %eax */
		0x83, 0xc0, 0x05,		/* add $5, %eax */
		0xc3,
	};
	struct {
		const uint8_t *b;
		size_t n, span;
	} cases[] = { { cmp_jne, sizeof(cmp_jne), 5 },
		      { load_add, sizeof(load_add), 5 } };
	struct sigaction sa;

	for (size_t i = 0; i < 2; i++) {
		uint64_t rip_ea;

		setup_span(cases[i].b, cases[i].n, cases[i].span, &rip_ea);
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_trap;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGTRAP, &sa, NULL);
		uint32_t *word = (uint32_t *)(mem + PAGE_LEN - 4096);
		struct page *pg = (struct page *)mem;

		for (int round = 0; round < 60; round++) {
			struct cpu in, a, b;
			bool logged = round % 3 != 2;
			uint64_t cur = TRAMP_LOG + 32 * (uint64_t)(rnd() % 50);

			random_cpu(&in);
			in.g[5] = (uint64_t)word; /* rdi */
			*word = round % 2 ? 0 : (uint32_t)rnd();
			a = in;
			call_with(&a, fn + 2048);
			b = in;
			pg->cursor = cur;
			pg->limit = logged ? cur + 32 : cur;
			traps = 0;
			call_with(&b, fn);
			same_cpu(&a, &b, logged ? "logged" : "stopped");
			cr_assert_eq(traps, logged ? 0 : 1);
			if (logged) {
				const uint64_t *e =
					(const uint64_t *)(mem + cur);

				cr_assert_eq(e[0], (uint64_t)fn | TRAMP_ACCESS);
				cr_assert_eq(e[1], (uint64_t)word);
			}
		}
		munmap(mem, PAGE_LEN + 3 * 4096);
	}
}

/*
 * Futex wake slots (tramp.h): glibc's `mov $SYS_futex, %eax; syscall`,
 * its mov replaced by a jump.  Logged, the wake leaves every register and
 * flag as the real syscall does (rax the waiter count the page gives,
 * rcx the next pc, r11 the flags), which the same code run natively
 * shows; anything else makes the real syscall.
 */
static uint32_t futex_word;
static int futex_kind; /* the site's: TRAMP_FUTEX_* */

/* the site's mov (glibc's own, or syscall()'s load of r9), the syscall,
 * ret */
static void setup_futex(int kind)
{
	uint8_t futex_code[TRAMP_FUTEX_LEN + 1] = { 0, 0, 0, 0, 0, 0x0f, 0x05,
						    0xc3 };

	futex_kind = kind;
	memcpy(futex_code, tramp_futex_moved[kind], 5);
	map_code(4, 3);
	memcpy(fn, futex_code, sizeof(futex_code));
	memcpy(fn + 2048, futex_code, sizeof(futex_code)); /* native */
	cr_assert(tramp_emit_futex((uint64_t)fn, kind, (uint64_t)slot, 0,
				   (uint64_t)mem, slot));
	tramp_jump((uint64_t)fn, (uint64_t)slot, fn);
	((struct page *)mem)->quantum = 1000;
}

static uint64_t *futex_waiters(void)
{
	return (uint64_t *)(mem + TRAMP_WADDR);
}

/* the native copy's syscall left its own next pc in rcx: fn's */
static void native_at_fn(struct cpu *c)
{
	cr_assert_eq(c->g[2], (uint64_t)fn + 2048 + TRAMP_FUTEX_LEN);
	c->g[2] -= 2048;
	/* syscall()'s load of r9: call_with's word above the return
	 * address is the code it called */
	if (futex_kind == TRAMP_FUTEX_SYSCALL && c->g[9] == (uint64_t)fn + 2048)
		c->g[9] = (uint64_t)fn;
}

/* a wake of futex_word (nobody waits: the kernel answers 0) */
static void wake_cpu(struct cpu *c, uint64_t op, uint64_t n)
{
	random_cpu(c);
	if (futex_kind == TRAMP_FUTEX_SYSCALL)
		c->g[0] = 202; /* syscall()'s number, moved to rax */
	c->g[5] = (uint64_t)&futex_word; /* rdi */
	c->g[4] = op;			 /* rsi */
	c->g[3] = n;			 /* rdx */
}

Test(trampolines, a_futex_wake_logged_leaves_what_the_syscall_leaves)
{
	struct page *pg = NULL;
	uint64_t *table = NULL, *w = NULL;

	for (int round = 0; round < 400; round++) {
		if (round % 200 == 0) {
			setup_futex(round / 200);
			pg = (struct page *)mem;
			table = (uint64_t *)(mem + TRAMP_TABLE);
			w = futex_waiters();
		}
		struct cpu in, native, out;
		uint64_t cur = TRAMP_LOG + 32 * (uint64_t)(rnd() % 100);
		int count = (int)(rnd() % 2);

		wake_cpu(&in, 0x81, 1 + rnd() % 3);
		native = out = in;
		call_with(&native, fn + 2048);
		native_at_fn(&native);
		cr_assert_eq(native.g[0], 0, "the kernel's wake of nobody");
		/* the page says the word has count waiters */
		/* the word's entry anywhere in the table, the others
		 * other addresses (waited on or not) */
		for (int i = 0; i < TRAMP_NWAIT; i++) {
			w[2 * i] = (uint64_t)&futex_word + 64 + 4 * (uint64_t)i;
			w[2 * i + 1] = rnd() % 3;
		}
		if (count || rnd() % 2) {
			int at = (int)(rnd() % TRAMP_NWAIT);

			w[2 * at] = (uint64_t)&futex_word;
			w[2 * at + 1] = (uint64_t)count;
		}
		pg->cursor = cur;
		pg->limit = cur + 64;
		pg->now = 5000;
		table[0] = (uint64_t)slot + TRAMP_FAST;
		call_with(&out, fn);
		native.g[0] = (uint64_t)count; /* the answer */
		for (int i = 0; i < 16; i++)
			if (i != 7)
				cr_assert_eq(out.g[i], native.g[i],
					     "register %d: %#llx logged, %#llx "
					     "native", i,
					     (unsigned long long)out.g[i],
					     (unsigned long long)native.g[i]);
		cr_assert_eq(out.flags & FLAGS, native.flags & FLAGS);
		const uint64_t *e = (const uint64_t *)(mem + cur);

		cr_assert_eq(pg->cursor, cur + 32, "the commit");
		cr_assert_eq(pg->limit, count ? cur + 32 : cur + 64,
			     "the log closed after a wake of somebody only");
		cr_assert_eq(pg->now, 6000, "a quantum for the point");
		cr_assert_eq(e[0], TRAMP_FUTEX | ((uint64_t)count << 32));
		cr_assert_eq(e[1], in.g[5]);
		cr_assert_eq(e[2], in.g[4]);
		cr_assert_eq(e[3], in.g[3]);
	}
}

Test(trampolines, a_futex_call_not_logged_makes_the_syscall)
{
	struct page *pg;
	uint64_t *table, *w;
	/* a wait (EAGAIN: the word is not 7), a shared wake, a wake of
	 * none, a wake of two waiters, the log full, the table's stop */
	static const struct {
		uint64_t op, n, waiters;
		bool full, stop, getpid;
	} cases[] = {
		{ 0x80, 7, 0, false, false, false },
		{ 0x01, 1, 0, false, false, false },
		{ 0x81, 0, 0, false, false, false },
		{ 0x81, 1, 2, false, false, false },
		{ 0x81, 1, 0, true, false, false },
		{ 0x81, 1, 0, false, true, false },
		/* syscall(SYS_getpid) with a wake's arguments */
		{ 0x81, 1, 0, false, false, true },
	};

	for (int kind = 0; kind < TRAMP_FUTEX_KINDS; kind++) {
	setup_futex(kind);
	pg = (struct page *)mem;
	table = (uint64_t *)(mem + TRAMP_TABLE);
	w = futex_waiters();
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		for (int round = 0; round < 20; round++) {
			struct cpu in, native, out;
			uint64_t cur = TRAMP_LOG;

			if (cases[k].getpid && kind != TRAMP_FUTEX_SYSCALL)
				continue;
			wake_cpu(&in, cases[k].op, cases[k].n);
			if (cases[k].getpid)
				in.g[0] = 39;
			native = out = in;
			call_with(&native, fn + 2048);
			native_at_fn(&native);
			w[0] = (uint64_t)&futex_word;
			w[1] = cases[k].waiters;
			pg->cursor = cur;
			pg->limit = cases[k].full ? cur : cur + 32;
			pg->now = 5000;
			table[0] = (uint64_t)slot +
				   (cases[k].stop ? TRAMP_FSTOP : TRAMP_FAST);
			call_with(&out, fn);
			for (int i = 0; i < 16; i++)
				if (i != 7)
					cr_assert_eq(out.g[i], native.g[i],
						     "case %zu register %d", k,
						     i);
			cr_assert_eq(out.flags & FLAGS, native.flags & FLAGS);
			cr_assert_eq(pg->cursor, cur, "case %zu: logged", k);
			cr_assert_eq(pg->now, 5000);
		}
	}
}

/* A stop at any instruction of the logging way (tramp_fix_futex played
 * by a SIGTRAP handler, the scratch words scribbled over after it): the
 * wake comes out logged once, with the syscall's registers, one quantum. */
static void on_fstep(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	greg_t *g = uc->uc_mcontext.gregs;
	struct page *pg = (struct page *)mem;
	uint64_t off = (uint64_t)g[REG_RIP] - (uint64_t)slot;
	struct tramp_ffix f;

	(void)sig;
	(void)si;
	if (!at_step(g, (uint64_t)slot, TRAMP_FSLOT))
		return;
	cr_assert(tramp_fix_futex(off, &f), "no fix at offset %llu",
		  (unsigned long long)off);
	if (f.past) {
		g[REG_RIP] = g[REG_RCX] = (greg_t)(fn + TRAMP_FUTEX_LEN);
		return;
	}
	scratch_back(g, f.regs);
	if (f.unclock)
		pg->now -= pg->quantum;
	if (off < TRAMP_FSTOP || off >= TRAMP_SLOT)
		g[REG_RIP] = (greg_t)fn;
	pg->scr[0] = pg->scr[1] = pg->scr[2] = pg->scr[3] = rnd();
}

Test(trampolines, a_stop_inside_a_futex_slot_gives_everything_back)
{
	struct page *pg;
	struct sigaction sa;
	uint64_t *table, *w;
	struct cpu in, native;

	for (int kind = 0; kind < TRAMP_FUTEX_KINDS; kind++) {
	setup_futex(kind);
	pg = (struct page *)mem;
	table = (uint64_t *)(mem + TRAMP_TABLE);
	w = futex_waiters();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fstep;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	wake_cpu(&in, 0x81, 1);
	native = in;
	call_with(&native, fn + 2048);
	native_at_fn(&native);
	native.g[0] = 1;
	w[0] = (uint64_t)&futex_word;
	w[1] = 1;
	table[0] = (uint64_t)slot + TRAMP_FAST;
	int k;

	for (k = 0;; k++) {
		struct cpu out = in;
		uint64_t cur = TRAMP_LOG + 32 * (uint64_t)(rnd() % 100);

		pg->cursor = cur;
		pg->limit = cur + 64;
		pg->now = 5000;
		step_at = k;
		steps = fixed = 0;
		out.flags |= 0x100; /* the trap flag */
		call_with(&out, fn);
		out.flags &= ~0x100ull;
		if (!fixed)
			break; /* past the slot's last instruction */
		for (int i = 0; i < 16; i++)
			if (i != 7)
				cr_assert_eq(out.g[i], native.g[i],
					     "step %d register %d", k, i);
		cr_assert_eq(out.flags & FLAGS, native.flags & FLAGS,
			     "step %d", k);
		cr_assert_eq(pg->cursor, cur + 32, "step %d: one entry", k);
		cr_assert_eq(pg->now, 6000, "step %d: one quantum", k);
		cr_assert(k < 200);
	}
	/* the jump and the whole logging way were stepped */
	cr_assert(k > 45, "%d steps", k);
	}
}

/* The sites: an instruction boundary a sweep from a function start
 * meets, never the same bytes inside another instruction. */
Test(trampolines, futex_sites_are_whole_instructions)
{
	static const uint8_t code[] = {
		0x45, 0x31, 0xd2,		    /* 0: xor %r10d, %r10d */
		0xb8, 0xca, 0, 0, 0, 0x0f, 0x05, /* 3: the site */
		0xc3,				    /* 10: ret */
		/* 11: movabs $..., %rax holding the bytes */
		0x48, 0xb8, 0xb8, 0xca, 0, 0, 0, 0x0f, 0x05, 0x90,
		0xc3,
	};
	uint64_t starts[] = { 0x1000 }, out[4];

	cr_assert_eq(tramp_futex_sites(code, sizeof(code), 0x1000, starts, 1,
				       out, 4),
		     1);
	cr_assert_eq(out[0], 0x1003);
	/* no function start before the code: nothing */
	starts[0] = 0x2000;
	cr_assert_eq(tramp_futex_sites(code, sizeof(code), 0x1000, starts, 1,
				       out, 4),
		     0);

	/* glibc's syscall(): the arguments moved down, then the site */
	static const uint8_t sc[] = {
		0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48,
		0x89, 0xca, 0x4d, 0x89, 0xc2, 0x4d, 0x89, 0xc8, 0x4c, 0x8b,
		0x4c, 0x24, 0x08, 0x0f, 0x05, 0x48, 0x3d, 0x01, 0xf0, 0xff,
		0xff, 0x73, 0x01, 0xc3,
	};
	uint64_t site = 0;

	cr_assert(tramp_futex_syscall_site(sc, sizeof(sc), 0x5000, &site));
	cr_assert_eq(site, 0x5000 + 18);
	/* the same bytes inside another instruction: no */
	uint8_t inside[sizeof(sc) + 2] = { 0x48, 0xb8 };

	memcpy(inside + 2, sc + 18, 8);
	cr_assert_not(tramp_futex_syscall_site(inside, 10, 0x5000, &site));
}

/* An rdtsc (rdtscp) and the `mov %rdx, %r8` after it moved into an rdtsc
 * slot (tramp_emit_tsc), called with random registers and flags: rax and
 * rdx hold the clock times 3 split as the CPU splits the counter (rdtscp's
 * ecx 0), the moved instruction runs, the clock advances by a quantum and
 * a read is counted; every other register and every flag is as it was. */
Test(trampolines, an_rdtsc_slot_answers_from_the_clock_and_keeps_the_rest)
{
	static const uint8_t bodies[2][8] = {
		{ 0x0f, 0x31, 0x49, 0x89, 0xd0, 0xc3 },	/* rdtsc */
		{ 0x0f, 0x01, 0xf9, 0x49, 0x89, 0xd0, 0xc3 }, /* rdtscp */
	};

	__builtin_cpu_init();
	if (!__builtin_cpu_supports("bmi2"))
		cr_skip_test("this CPU has no BMI2 (the slot's rorx): ptloom "
			     "keeps rdtsc at its int3 or fault here");
	for (int k = 0; k < 2; k++) {
		struct tramp_plan pl;
		size_t len = k ? 6 : 5;

		map_code(2, 1);
		memcpy(fn, bodies[k], sizeof(bodies[k]));
		cr_assert(tramp_plan_span(fn, sizeof(bodies[k]), (uint64_t)fn,
					  len, &pl));
		cr_assert(tramp_emit_tsc(&pl, k == 1, (uint64_t)fn,
					 (uint64_t)slot, (uint64_t)mem, slot));
		tramp_jump((uint64_t)fn, (uint64_t)slot, fn);
		struct page *pg = (struct page *)mem;

		pg->quantum = 1000;
		for (int round = 0; round < 200; round++) {
			struct cpu in, out;
			uint64_t now = rnd() >> 4, tsc = now * 3;

			random_cpu(&in);
			out = in;
			pg->now = now;
			pg->reads = 7;
			call_with(&out, fn);
			cr_assert_eq(out.g[0], tsc & 0xffffffffu, "eax");
			cr_assert_eq(out.g[3], tsc >> 32, "edx");
			cr_assert_eq(out.g[8], tsc >> 32, "the moved mov");
			if (k)
				cr_assert_eq(out.g[2], 0, "rdtscp's ecx");
			cr_assert_eq(pg->now, now + 1000, "a quantum on");
			cr_assert_eq(pg->reads, 8, "a clock read");
			in.g[0] = out.g[0];
			in.g[3] = out.g[3];
			in.g[8] = out.g[8];
			if (k)
				in.g[2] = out.g[2];
			same_cpu(&in, &out, k ? "rdtscp" : "rdtsc");
		}
		munmap(mem, PAGE_LEN + 2 * 4096);
	}
}

/* free()'s slot (tramp_emit_free) logs the block, the chunk header before
 * it (only for a nonzero, 16-aligned block: the word is left alone
 * otherwise) and the return address, without the clock's quantum, and
 * keeps every register and flag. */
Test(trampolines, a_free_slot_logs_the_block_and_its_header)
{
	static const uint8_t body[] = { 0x48, 0x89, 0xc0, 0x90, 0x90, 0xc3 };
	struct tramp_plan pl;

	map_code(2, 1);
	memcpy(fn, body, sizeof(body));
	cr_assert(tramp_plan(fn, sizeof(body), (uint64_t)fn, &pl));
	cr_assert(tramp_emit_free(&pl, (uint64_t)fn, (uint64_t)slot, 3,
				  (uint64_t)mem, slot));
	tramp_jump((uint64_t)fn, (uint64_t)slot, fn);
	uint64_t *table = (uint64_t *)(mem + TRAMP_TABLE);
	/* a block: its header, then its bytes (past the log) */
	uint64_t *blk = (uint64_t *)(mem + PAGE_LEN - 1024);
	struct page *pg = (struct page *)mem;

	table[3] = (uint64_t)slot + TRAMP_FAST;
	pg->quantum = 1000;
	for (int round = 0; round < 300; round++) {
		struct cpu in, out;
		uint64_t cur = TRAMP_LOG + 32 * (uint64_t)(rnd() % 100);
		int kind = (int)(rnd() % 3); /* a block, NULL, misaligned */
		uint64_t *e = (uint64_t *)(mem + cur);

		random_cpu(&in);
		blk[-1] = rnd();
		in.g[5] = kind == 0   ? (uint64_t)blk
			  : kind == 1 ? 0
				      : (uint64_t)blk + 8;
		out = in;
		e[2] = 0x5555;
		pg->cursor = cur;
		pg->limit = cur + 32;
		pg->now = 5000;
		call_with(&out, fn);
		same_cpu(&in, &out, "free logged");
		cr_assert_eq(pg->cursor, cur + 32, "the commit");
		cr_assert_eq(pg->now, 5000, "no quantum for an observation");
		cr_assert_eq(e[0], 3, "the slot");
		cr_assert_eq(e[1], in.g[5], "the block");
		cr_assert_eq(e[2], kind == 0 ? blk[-1] : 0x5555, "the header");
		cr_assert_eq(e[3], out.ret, "the return address");
	}
	munmap(mem, PAGE_LEN + 2 * 4096);
}
