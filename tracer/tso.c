/*
 * x86-TSO store buffers (POINTS_TSO).
 *
 * One thread runs at a time, so without this every run is sequentially
 * consistent: a store is seen by every thread from the instruction on.
 * An x86 CPU keeps a thread's stores in its store buffer for a while, and
 * the thread's later loads may read memory before the buffer drains, so
 * a Dekker or Peterson handshake without a fence, or a "set my flag, read
 * yours" check, fails on the hardware and passed every schedule.
 *
 * Modelled here as the CPU allows it, never more:
 * - at a racy plain store (an OP_ACCESS or OP_ATOMIC point on a `mov` to
 *   memory) that a racy load may follow before any fence, the thread has
 *   one more alternative, ALT_BUFFER (a delay, costed as a preemption):
 *   the store goes into the thread's buffer, not into memory;
 * - the thread then runs on under the supervisor: loads and stores the
 *   emulator knows (emul.c) are done by it, a load reading the thread's
 *   own newest buffered store of the same address and size (forwarding),
 *   stores entering the buffer, and so are calls, returns, pushes, pops
 *   and leaves (their stack stores buffered too); instructions that touch
 *   no memory are single-stepped; before each racy load the thread
 *   stands at a point (an OP_ACCESS of fn TSO_WINDOW), so other threads
 *   may run, and read memory without its buffered stores, while its own
 *   load is still to come, and so it does before the buffer drains (fn
 *   TSO_DRAIN), after its last load;
 * - the buffer drains into memory, in order, before anything else: a
 *   locked instruction or fence, a syscall, an indirect call, a
 *   breakpoint of ptloom's, a load that overlaps a buffered store other
 *   than exactly, an instruction it does not know, a signal, a full
 *   buffer (TSO_MAX) or TSO_STEPS instructions.  Then the thread runs
 *   natively again.  Draining early is always allowed (the hardware may
 *   drain at any time), so every run is one x86 can make.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include "emul.h"
#include "session_int.h"

#define TSO_STEPS 64	/* instructions a window runs before it drains */
#define TSO_SCAN 32	/* instructions looked at for a load after a store */

/* A racy access or atomic point of the search is at b */
static bool racy_bp(const struct bp *b)
{
	return b && !b->observe && !b->policy &&
	       (b->kind == OP_ACCESS || b->kind == OP_ATOMIC);
}

static bool racy_point(struct process *p, uint64_t pc)
{
	return racy_bp(bp_find(p, pc));
}

/* Code read ahead for a scan that only reads it (load_follows: up to
 * TSO_SCAN instructions in a row, each a pread of its own before) */
struct code_win {
	uint64_t lo;
	size_t n;
	uint8_t b[256];
};

/*
 * The program's code at pc as the file has it: our breakpoints' bytes (an
 * int3, a trampoline's jump) replaced by the original ones.  *in_the_way
 * (may be NULL): some breakpoint's bytes cover pc other than a racy
 * point's int3, whose instruction the window runs as any other.  w (may
 * be NULL): bytes read ahead, used and refilled (a scan that executes
 * nothing between its reads).
 */
static int code_at(struct process *p, uint64_t pc, uint8_t code[16],
		   bool *in_the_way, struct code_win *w)
{
	size_t n = 16, lo = 0, hi = p->nbps;

	memset(code, 0, 16);
	if (in_the_way)
		*in_the_way = false;
	if (w && w->n && pc >= w->lo && pc - w->lo + 16 <= w->n) {
		memcpy(code, w->b + (pc - w->lo), 16);
	} else if (w && (n = 4096 - (pc & 4095)) >= 16 &&
		   !mem_read(p, pc, w->b,
			     n = n < sizeof(w->b) ? n : sizeof(w->b))) {
		/* up to 256 bytes, not past its page */
		w->lo = pc;
		w->n = n;
		memcpy(code, w->b, 16);
		n = 16;
	} else if ((n = 16) && mem_read(p, pc, code, n)) {
		n = 4096 - (pc & 4095); /* up to the end of its page */
		if (n >= 16 || mem_read(p, pc, code, n))
			return -EFAULT;
	}
	while (lo < hi) { /* the first breakpoint at pc - 15 or above */
		size_t mid = (lo + hi) / 2;

		if (p->bps[mid].addr + 15 < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->nbps && p->bps[i].addr < pc + n; i++) {
		const struct bp *b = &p->bps[i];
		size_t len = b->tramp ? b->plen : 1;

		if (in_the_way && b->addr <= pc && pc < b->addr + len &&
		    (b->addr != pc || b->tramp || !racy_bp(b)))
			*in_the_way = true;
		for (size_t k = 0; k < len && k < sizeof(b->orig); k++)
			if (b->addr + k >= pc && b->addr + k < pc + n)
				code[b->addr + k - pc] = b->orig[k];
	}
	return 0;
}

static bool unconditional_jump(const uint8_t *c)
{
	if (c[0] == 0xf2 || c[0] == 0x3e) /* bnd, notrack */
		c++;
	return c[0] == 0xeb || c[0] == 0xe9;
}

enum { SK_NONE, SK_CALL, SK_RET, SK_PUSH, SK_POP, SK_LEAVE };

/* A call rel32 (*target), a return, a push or pop of a 64-bit register
 * (*reg) or a leave at pc: SK_*, its length in *len */
static int stack_op(const uint8_t *c, uint64_t pc, int *reg,
		    uint64_t *target, int *len)
{
	int rex = c[0] == 0x41;
	uint8_t op = c[rex];
	int32_t d;

	if ((c[0] == 0xf3 || c[0] == 0xf2) && c[1] == 0xc3) {
		*len = 2; /* repz ret, bnd ret */
		return SK_RET;
	}
	if (!rex && (op == 0xc3 || op == 0xc9)) {
		*len = 1;
		return op == 0xc3 ? SK_RET : SK_LEAVE;
	}
	if (!rex && op == 0xe8) {
		memcpy(&d, c + 1, 4);
		*target = pc + 5 + (uint64_t)(int64_t)d;
		*len = 5;
		return SK_CALL;
	}
	if (op >= 0x50 && op <= 0x5f) {
		*reg = (op & 7) + (rex ? 8 : 0);
		*len = rex + 1;
		return op < 0x58 ? SK_PUSH : SK_POP;
	}
	return SK_NONE;
}

/*
 * Whether a racy load (a point's) may come after the store at b before a
 * fence: straight on from it, through conditional branches' fall-through
 * and unconditional jumps, over instructions that touch no memory and
 * plain accesses, until a locked instruction, a call, a return, a syscall
 * or anything else.
 */
static bool load_follows(struct thread *t, const struct bp *b,
			 bool *dynamic)
{
	struct process *p = t->p;
	uint64_t pc = b->addr + b->ei.len, sp = t->regs.rsp;
	uint64_t rets[8]; /* return addresses of the calls followed */
	int nrets = 0;
	struct code_win w = { 0 };

	for (int n = 0; n < TSO_SCAN; n++) {
		uint8_t code[16];
		struct insn_info in;
		uint64_t target = 0;
		int reg, len, k;

		if (code_at(p, pc, code, NULL, &w) ||
		    disasm_decode(code, 16, pc, &in))
			return false;
		/* into a call, and back from a return: the caller's pc from
		 * the thread's stack (its registers at the store) */
		k = stack_op(code, pc, &reg, &target, &len);
		if (k == SK_CALL && nrets < 8) {
			rets[nrets++] = pc + (uint64_t)len;
			sp -= 8;
			pc = target;
			continue;
		}
		if (k == SK_RET) {
			if (nrets) {
				pc = rets[--nrets];
			} else {
				*dynamic = true;
				if (mem_read(p, sp, &pc, 8))
					return false;
			}
			sp += 8;
			continue;
		}
		if (k == SK_PUSH || k == SK_POP) {
			sp += k == SK_PUSH ? (uint64_t)-8 : 8;
			pc += (uint64_t)len;
			continue;
		}
		if (k == SK_LEAVE) {
			*dynamic = true;
			sp = t->regs.rbp + 8;
			pc += (uint64_t)len;
			continue;
		}
		if (in.nmem) {
			if (in.is_atomic || in.is_string_op || in.is_call ||
			    in.is_ret || in.is_jump)
				return false;
			if (in.mem_read && racy_point(p, pc))
				return true;
			pc += in.len;
			continue;
		}
		if (in.is_jump && in.target && unconditional_jump(code)) {
			pc = in.target;
			continue;
		}
		if (!in.reg_only)
			return false;
		pc += in.len;
	}
	return false;
}

bool tso_may_buffer(struct session *s, struct thread *t)
{
	struct bp *b;

	if (!(s->cfg->points & POINTS_TSO) || s->cfg->observer ||
	    session_policy_active(s) || t->stop != STOP_BP || t->split ||
	    t->nsb || (t->kind != OP_ACCESS && t->kind != OP_ATOMIC))
		return false;
	b = bp_find(t->p, t->bp_addr);
	if (!b || b->observe || b->policy || b->tramp ||
	    b->emul != EMUL_INSN || b->ei.form != EF_MEM ||
	    (b->ei.op != EMU_STORE && b->ei.op != EMU_STORE_IMM))
		return false;
	if (b->tso)
		return b->tso == 1;
	/* what a return leads to is the thread's: not kept */
	bool dynamic = false, follows = !regs_get(t) &&
					 load_follows(t, b, &dynamic);

	if (!dynamic)
		b->tso = follows ? 1 : 2;
	return follows;
}

/* Memory the program may write there (its page protection's say: the
 * current value written back through process_vm_writev). */
static bool writable(struct process *p, uint64_t a, int size)
{
	uint64_t v = 0;

	return !mem_access_user(p, a, &v, (size_t)size, false) &&
	       !mem_access_user(p, a, &v, (size_t)size, true);
}

static void push(struct thread *t, uint64_t a, int size, uint64_t v)
{
	t->sb[t->nsb++] = (struct tso_store){
		.addr = a,
		.val = size >= 8 ? v : v & ((1ull << (size * 8)) - 1),
		.size = (uint8_t)size,
	};
}

/* 1: the newest buffered store of exactly [a, a+size) answers the load
 * (*v); 0: no buffered store overlaps it; -1: one overlaps otherwise */
static int forward(const struct thread *t, uint64_t a, int size, uint64_t *v)
{
	for (int i = t->nsb - 1; i >= 0; i--) {
		const struct tso_store *e = &t->sb[i];

		if (e->addr == a && e->size == size) {
			*v = e->val;
			return 1;
		}
		if (e->addr < a + (uint64_t)size && a < e->addr + e->size)
			return -1;
	}
	return 0;
}

/* The buffer into memory, in order; the spinners that read what it
 * changed take their turn again (no watchpoint sees these stores) */
static void drain(struct session *s, struct thread *t)
{
	uint64_t addr[TSO_MAX];
	uint8_t size[TSO_MAX];

	for (int i = 0; i < t->nsb; i++) {
		mem_access_user(t->p, t->sb[i].addr, &t->sb[i].val,
				t->sb[i].size, true);
		addr[i] = t->sb[i].addr;
		size[i] = t->sb[i].size;
	}
	if (s->watching && t->nsb)
		spinners_recheck(s, t, addr, size, t->nsb);
	t->nsb = 0;
	t->tso_steps = 0;
}

/* A load of size bytes at a under t's buffer (its newest store there,
 * else memory); false: it cannot be (the caller drains first) */
static bool buffered_load(struct thread *t, uint64_t a, int size,
			  uint64_t *v)
{
	int f;

	*v = 0;
	if ((a & 4095) + (uint64_t)size > 4096)
		return false;
	f = forward(t, a, size, v);
	return f > 0 || (!f && !mem_access_user(t->p, a, v, (size_t)size,
						  false));
}

/* A store into t's buffer; false: it cannot be */
static bool buffered_store(struct thread *t, uint64_t a, int size,
			   uint64_t v)
{
	if ((a & 4095) + (uint64_t)size > 4096 || t->nsb >= TSO_MAX ||
	    !writable(t->p, a, size))
		return false;
	push(t, a, size, v);
	return true;
}

/* Run e, an access of address a, under t's buffer.  False: it cannot be
 * (the caller drains, and the CPU runs it). */
static bool buffered_access(struct thread *t, const struct emul_insn *e,
			    uint64_t a)
{
	struct user_regs_struct nr = t->regs;
	uint64_t mem = 0;

	if (emul_reads(e) && !buffered_load(t, a, e->size, &mem))
		return false;
	emul_run(e, &nr, &mem);
	if (emul_writes(e) && !buffered_store(t, a, e->size, mem))
		return false;
	t->regs = nr;
	t->regs_dirty = true;
	return true;
}

/* A call, return, push, pop or leave (stack_op) under t's buffer: the
 * return address and pushed values are stores like any other */
static bool stack_step(struct thread *t, int k, int reg, uint64_t target,
		       int len)
{
	struct user_regs_struct r = t->regs;
	uint64_t v = 0, sp = r.rsp;

	switch (k) {
	case SK_CALL:
	case SK_PUSH:
		v = k == SK_CALL ? r.rip + (uint64_t)len : *emul_reg(&r, reg);
		if (!buffered_store(t, sp - 8, 8, v))
			return false;
		r.rsp = sp - 8;
		r.rip = k == SK_CALL ? target : r.rip + (uint64_t)len;
		break;
	case SK_LEAVE:
		sp = r.rbp;
		/* fall through */
	default: /* SK_RET, SK_POP */
		if (!buffered_load(t, sp, 8, &v))
			return false;
		r.rsp = sp + 8;
		r.rip += (uint64_t)len;
		if (k == SK_RET)
			r.rip = v;
		else
			*emul_reg(&r, k == SK_LEAVE ? 5 : reg) = v;
	}
	t->regs = r;
	t->regs_dirty = true;
	return true;
}

/* t stands at the access (fn TSO_WINDOW) or the drain (TSO_DRAIN) at pc,
 * of address a, inside its window */
static int stand(struct session *s, struct thread *t, uint64_t pc,
		 uint64_t a, bool writes, uint8_t fn)
{
	t->tso_window = true;
	t->tso_drain = fn == TSO_DRAIN;
	thread_access_point(s, t, pc, a, writes, fn);
	return TSO_POINT;
}

/* One instruction that touches no memory, by the CPU.  False: it did not
 * end in the step's trap (a signal came: t->stop says so, or t died). */
static bool single_step(struct thread *t)
{
	int st;

	if (regs_set(t) || thread_step_wait(t, &st) || !WIFSTOPPED(st))
		return false;
	if (WSTOPSIG(st) != SIGTRAP) {
		t->stop = STOP_SIGNAL;
		t->sig = WSTOPSIG(st);
		return false;
	}
	return !regs_get(t);
}

/* The same at pc, where an int3 of ours may be: the original byte while
 * it runs (no other thread runs meanwhile) */
static bool step_over(struct thread *t, uint64_t pc)
{
	static const uint8_t int3 = 0xcc;
	const struct bp *b = bp_find(t->p, pc);
	uint8_t now = 0;
	bool ok;

	if (!b || mem_read(t->p, pc, &now, 1) || now != int3)
		return single_step(t);
	if (mem_write(t->p, pc, b->orig, 1))
		return false;
	ok = single_step(t);
	mem_write(t->p, pc, &int3, 1);
	return ok;
}

/* t stands before its buffer drains, so that other threads may run while
 * its stores are not in memory yet, after its last load */
static int stand_drain(struct session *s, struct thread *t)
{
	return stand(s, t, t->regs.rip, t->sb[0].addr, true, TSO_DRAIN);
}

/* t runs on under its buffer from its pc; at_access: the load it stands
 * at is done first */
static int run(struct session *s, struct thread *t, bool at_access)
{
	struct process *p = t->p;

	t->stop = STOP_NONE;
	while (t->nsb) { /* drained meanwhile (tso_drain_process): native */
		uint64_t pc = t->regs.rip, mem = 0;
		uint8_t code[16];
		struct emul_insn e;
		struct insn_info in;

		bool blocked;

		if (++t->tso_steps > TSO_STEPS ||
		    code_at(p, pc, code, &blocked, NULL) || blocked ||
		    disasm_decode(code, sizeof(code), pc, &in) ||
		    in.is_atomic)
			return stand_drain(s, t);
		uint64_t target = 0;
		int reg, len, k = stack_op(code, pc, &reg, &target, &len);

		if (k != SK_NONE) {
			if (!stack_step(t, k, reg, target, len))
				return stand_drain(s, t);
			continue;
		}
		if (!emul_decode(code, sizeof(code), &e)) {
			if (in.reg_only && step_over(t, pc))
				continue;
			if (t->stop == STOP_SIGNAL || regs_get(t)) {
				drain(s, t); /* a signal first, or t is gone */
				return TSO_RUNS;
			}
			return stand_drain(s, t);
		}
		if (e.form != EF_MEM) {
			emul_run(&e, &t->regs, &mem);
			t->regs_dirty = true;
			continue;
		}
		uint64_t a = emul_addr(&e, &t->regs, pc);

		/* another thread may run before a racy load (a point's) */
		if (!at_access && emul_reads(&e) && racy_point(p, pc))
			return stand(s, t, pc, a, emul_writes(&e),
				     TSO_WINDOW);
		at_access = false;
		if (!buffered_access(t, &e, a))
			return stand_drain(s, t);
	}
	return TSO_RUNS;
}

int tso_buffer(struct session *s, struct thread *t)
{
	struct bp *b = bp_find(t->p, t->bp_addr);
	struct user_regs_struct nr;
	uint64_t a, mem = 0;

	if (!b || regs_get(t))
		return TSO_RUNS; /* resume() runs the store */
	a = emul_addr(&b->ei, &t->regs, b->addr);
	if ((a & 4095) + b->ei.size > 4096 ||
	    !writable(t->p, a, b->ei.size))
		return TSO_RUNS; /* the CPU's, a fault included */
	nr = t->regs;
	nr.rip = b->addr;
	emul_run(&b->ei, &nr, &mem);
	push(t, a, b->ei.size, mem);
	t->regs = nr;
	t->regs_dirty = true;
	t->tso_steps = 0;
	s->tso_buffered++;
	return run(s, t, false);
}

void tso_drain_process(struct session *s, const struct process *p)
{
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->p == p && t->nsb)
			drain(s, t); /* it stands where it stood: its point */
	}
}

int tso_step(struct session *s, struct thread *t)
{
	t->tso_window = false;
	if (t->tso_drain || regs_get(t)) {
		t->tso_drain = false;
		drain(s, t);
		return TSO_RUNS;
	}
	return run(s, t, true);
}
