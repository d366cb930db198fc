/*
 * Spins and livelocks by evidence, not by time.
 *
 * spin_probe(): the CPU-time cue (a thread ran spin_ms without a
 * scheduling point) only makes ptloom look.  It then single-steps the
 * thread for a bounded number of instructions and calls it a spin only
 * when the loop re-reads the same few addresses of shared, writable
 * memory and changes no memory at all (every store writes what is already
 * there), and some other thread could end it (one that can run, or will
 * time out).  A loop that stores, reads ever new addresses (a hash over a
 * buffer), reads only its stack or constants, or that no other thread
 * could end, is computing: it goes on.  The yield point is the loop's
 * lowest load address, so the same loop always gives the same point.
 *
 * livelock_*(): past --max-steps a run is only too long, unless ptloom can
 * show that it makes no progress: the whole state (every thread's
 * registers and pending operation, ptloom's wait queues, the writable
 * memory) at one step is identical to the state at an earlier step where
 * the same event happened, every thread that could run ran in between,
 * and no deadline could end it.  Then the same cycle can repeat forever,
 * fairly: a livelock, and the cycle is shown.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "session_int.h"
#include "spin.h"

#define COMPUTE(why) do { if (getenv("PTLOOM_DEBUG_SPIN")) fprintf(stderr, "probe: compute (%s) after %d steps\n", why, step); return SPIN_COMPUTE; } while (0)
#define PROBE_STEPS 3000	/* instructions single-stepped at most */
#define PROBE_LOADS 32		/* distinct shared addresses a spin re-reads */
#define PROBE_PCS 512
#define MAX_MAPS 512

static const struct proc_map *find_map(const struct proc_map *m, int n,
				       uint64_t a)
{
	for (int i = 0; i < n; i++)
		if (a >= m[i].lo && a < m[i].hi)
			return &m[i];
	return NULL;
}

/* Could another thread end a loop of t: one that can run, is about to
 * start, or waits with a deadline. */
static bool someone_else(struct session *s, struct thread *t)
{
	for (int i = 0; i < s->nth; i++) {
		struct thread *x = &s->th[i];

		if (x == t || x->st == SCHED_DEAD)
			continue;
		if (x->st != SCHED_BLOCKED || x->starting || x->timed)
			return true;
	}
	return false;
}

struct pcs {
	uint64_t pc[PROBE_PCS];
	uint16_t hits[PROBE_PCS];
	bool load[PROBE_PCS];
	int n;
};

static int note_pc(struct pcs *p, uint64_t pc, bool load)
{
	for (int i = 0; i < p->n; i++)
		if (p->pc[i] == pc) {
			p->hits[i]++;
			p->load[i] |= load;
			return p->hits[i];
		}
	if (p->n == PROBE_PCS)
		return -1;
	p->pc[p->n] = pc;
	p->hits[p->n] = 1;
	p->load[p->n++] = load;
	return 1;
}

/* Instructions that must not be single-stepped here: a scheduling point
 * of ours or the program's own int3, a syscall (its stop is a point), or
 * rdtsc (trapped and emulated). */
static bool must_run(struct process *p, uint64_t pc, const uint8_t *code)
{
	struct bp *b = bp_find(p, pc);

	if (b && b->observe)
		return false; /* stepped with its original byte */
	if (b || code[0] == 0xcc)
		return true;
	if (code[0] == 0x0f && (code[1] == 0x05 || code[1] == 0x31 ||
				(code[1] == 0x01 && code[2] == 0xf9) ||
				code[1] == 0x34))
		return true;
	return code[0] == 0xcd; /* int n */
}

int spin_probe(struct session *s, struct thread *t, uint64_t *spin_pc,
	       int *status)
{
	struct proc_map maps[MAX_MAPS];
	int step = 0;
	int nmaps, shared_loads = 0, loops = 0, last_new = 0, rereads = 0;
	uint64_t loads[PROBE_LOADS];
	static struct pcs p;
	const struct proc_map *stack;

	*spin_pc = 0;
	if (!someone_else(s, t))
		COMPUTE("L139"); /* nobody else could end it */
	nmaps = proc_maps(t->p->pid, maps, MAX_MAPS, NULL);
	if (nmaps < 0)
		nmaps = 0;
	t->regs_valid = false;
	if (regs_get(t))
		COMPUTE("L143");
	stack = find_map(maps, nmaps, t->regs.rsp);
	p.n = 0;
	for (step = 0; step < PROBE_STEPS; step++) {
		uint8_t code[16] = { 0 };
		struct insn_info in;
		uint8_t before[2][64], after[64];
		uint64_t wa[2] = { 0, 0 };
		int wsz[2] = { 0, 0 }, nw = 0;
		bool load = false;

		if (regs_get(t) || mem_read(t->p, t->regs.rip, code, 1))
			COMPUTE("L157");
		mem_read(t->p, t->regs.rip, code, sizeof(code));
		struct bp *ob = bp_find(t->p, t->regs.rip);

		if (ob && ob->observe)
			memcpy(code, ob->orig, sizeof(code));
		else
			ob = NULL;
		if (must_run(t->p, t->regs.rip, code))
			COMPUTE("L160"); /* it reaches a point: no spin */
		if (disasm_decode(code, sizeof(code), t->regs.rip, &in))
			COMPUTE("L162");
		if (in.vsib || (in.is_string_op && in.mem_write))
			COMPUTE("L164");
		for (int k = 0; k < in.nmem; k++) {
			const struct disasm_mem *m = &in.mem[k];
			uint64_t a = disasm_mem_addr(m, &t->regs);
			int sz = m->size ? m->size : 8;

			if (sz > 64)
				sz = 64;
			if (m->write && nw < 2) {
				wa[nw] = a;
				wsz[nw] = sz;
				if (mem_read(t->p, a, before[nw], (size_t)sz))
					COMPUTE("L176");
				nw++;
			}
			if (!m->read)
				continue;
			const struct proc_map *mp = find_map(maps, nmaps, a);

			/* a constant, or the thread's own stack: no other
			 * thread changes it */
			if (!mp || !mp->writable || mp == stack || m->seg)
				continue;
			load = true;
			bool known = false;

			for (int i = 0; i < shared_loads; i++)
				known |= loads[i] == a;
			if (!known) {
				if (shared_loads == PROBE_LOADS)
					COMPUTE("L194"); /* ever new data */
				loads[shared_loads++] = a;
				last_new = step;
			} else {
				rereads++;
			}
		}
		if ((in.is_call || in.is_push_reg) && nw < 2) {
			wa[nw] = t->regs.rsp - 8;
			wsz[nw] = 8;
			if (mem_read(t->p, wa[nw], before[nw], 8))
				COMPUTE("L205");
			nw++;
		}
		int hits = note_pc(&p, t->regs.rip, load);

		if (hits < 0)
			COMPUTE("L211"); /* too long a loop to tell */
		if (hits >= 3)
			loops++;
		/* an observation breakpoint (race discovery) is not a
		 * point: step its original instruction */
		if (ob)
			mem_write(t->p, ob->addr, ob->orig, 1);
		long e = ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0);

		if (e < 0) {
			uint8_t cc = 0xcc;

			if (ob)
				mem_write(t->p, ob->addr, &cc, 1);
			COMPUTE("step");
		}
		t->regs_valid = false;
		for (;;) {
			pid_t w = waitpid(t->tid, status, __WALL);

			if (w == t->tid)
				break;
			if (w < 0 && errno != EINTR)
				return SPIN_GONE;
		}
		if (ob) {
			uint8_t cc = 0xcc;

			mem_write(t->p, ob->addr, &cc, 1);
		}
		if (!WIFSTOPPED(*status) || WSTOPSIG(*status) != SIGTRAP ||
		    (*status >> 16))
			return SPIN_EVENT; /* a signal, an exit, an event */
		for (int k = 0; k < nw; k++)
			if (mem_read(t->p, wa[k], after, (size_t)wsz[k]) ||
			    memcmp(before[k], after, (size_t)wsz[k]))
				COMPUTE("L231"); /* it changed memory */
		/* enough evidence: a loop that went round many times and
		 * only re-read what it had read before for a long while */
		if (loops >= 64 && rereads >= 16 && step - last_new >= 256)
			break;
	}
	if (!shared_loads || loops < 64 || rereads < 16 ||
	    step - last_new < 256)
		COMPUTE("L239");
	uint64_t best = 0;

	for (int i = 0; i < p.n; i++)
		if (p.load[i] && p.hits[i] >= 3 && (!best || p.pc[i] < best))
			best = p.pc[i];
	if (!best)
		COMPUTE("L246");
	*spin_pc = best;
	return SPIN_LOOP;
}

/* ---- livelock: the same state twice ------------------------------------ */

#define STATE_MEM_MAX (256ull << 20) /* writable memory hashed at most */

/* A hash of everything the future of the run depends on, or 0 when it
 * cannot be taken (too much memory, a thread not stopped). */
static uint64_t state_hash(struct session *s)
{
	static struct proc_map maps[MAX_MAPS];
	static uint64_t buf[8192];
	uint64_t h = 0x5054204c4f4f4dull, total = 0;
	int n;

	if (timer_armed(s))
		return 0; /* its expiry may end the cycle */

	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		hash_mix(&h, (uint64_t)t->st << 32 | (uint64_t)t->block << 16 |
				(uint64_t)t->kind << 8 | t->fn);
		if (t->st == SCHED_DEAD)
			continue;
		if (t->st == SCHED_RUNNING || t->timed || t->starting)
			return 0;
		hash_mix(&h, t->obj);
		hash_mix(&h, t->pc);
		hash_mix(&h, (uint64_t)t->arg);
		hash_mix(&h, (uint64_t)t->skip << 1 | t->yield);
		if (t->skip)
			hash_mix(&h, (uint64_t)t->result);
		if (regs_get(t))
			return 0;
		const uint64_t *r = (const uint64_t *)&t->regs;

		for (size_t k = 0; k < sizeof(t->regs) / 8; k++)
			hash_mix(&h, r[k]);
	}
	for (size_t i = 0; i < s->ft.n; i++) {
		hash_mix(&h, (uint64_t)s->ft.w[i].thread);
		hash_mix(&h, s->ft.w[i].addr);
	}
	for (int k = 0; k < s->nprocs; k++) {
		struct process *p = s->procs[k];

		if (!p || p->dead || p->memfd < 0)
			continue;
		n = proc_maps(p->pid, maps, MAX_MAPS, NULL);
		for (int i = 0; i < n; i++) {
			if (!maps[i].writable)
				continue;
			total += maps[i].hi - maps[i].lo;
			if (total > STATE_MEM_MAX)
				return 0;
			for (uint64_t a = maps[i].lo; a < maps[i].hi;) {
				size_t len = maps[i].hi - a < sizeof(buf)
						     ? (size_t)(maps[i].hi - a)
						     : sizeof(buf);
				ssize_t got = pread(p->memfd, buf, len,
						    (off_t)a);

				if (got <= 0)
					break; /* [vvar] and the like */
				for (size_t j = 0; j < (size_t)got / 8; j++)
					hash_mix(&h, buf[j]);
				a += (uint64_t)got;
			}
		}
	}
	return h ? h : 1;
}

static bool same_event(const struct event *a, const struct event *b)
{
	return a->thread == b->thread && a->kind == b->kind &&
	       a->fn == b->fn && a->obj == b->obj && a->pc == b->pc;
}

/* Every thread that is not blocked took part in events [from, to). */
static bool fair(struct session *s, size_t from, size_t to)
{
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];
		bool ran = false;

		if (t->st == SCHED_DEAD || t->st == SCHED_BLOCKED)
			continue;
		for (size_t k = from; k < to && !ran; k++)
			ran = s->ev[k].thread == t->idx;
		if (!ran)
			return false;
	}
	return true;
}

static void describe_cycle(struct session *s, size_t from, size_t to,
			   char *buf, size_t len)
{
	size_t off = 0;

	off += (size_t)snprintf(buf, len,
				"livelock: the same %zu-step cycle repeats "
				"with no change to memory or any thread",
				to - from);
	for (int i = 0; i < s->nth && off < len; i++) {
		int shown = 0;

		for (size_t k = from; k < to && off < len; k++) {
			const struct event *e = &s->ev[k];

			if (e->thread != i)
				continue;
			if (!shown)
				off += (size_t)snprintf(buf + off, len - off,
							"\n  T%d:", i);
			if (++shown > 12) {
				off += (size_t)snprintf(buf + off, len - off,
							" ...");
				break;
			}
			const char *what = e->kind == OP_CALL
						   ? call_fn_name(e->fn)
					   : e->kind == OP_ACCESS
						   ? (e->arg ? "write" : "read")
						   : op_kind_name(e->kind);
			char obj[128] = "";

			if (e->obj && !(e->obj >> 63))
				session_describe_data(s, s->th[e->thread].p,
						      e->obj, obj,
						      sizeof(obj));
			off += (size_t)snprintf(buf + off, len - off,
						"%s %s%s%s%s", shown > 1 ? ";" : "",
						what, obj[0] ? "(" : "", obj,
						obj[0] ? ")" : "");
		}
	}
}

#define LIVELOCK_WINDOW 20000	/* steps past --max-steps to look */
#define LIVELOCK_HASHES 48

int livelock_check(struct session *s, char *msg, size_t len)
{
	struct livelock *l = &s->ll;

	if (!s->nev)
		return LIVELOCK_UNKNOWN;
	if (!l->probing) {
		l->probing = true;
		/* look at most --max-steps further, up to a bound */
		l->until = s->step + (s->cfg->max_steps < LIVELOCK_WINDOW
					      ? s->cfg->max_steps
					      : LIVELOCK_WINDOW);
		l->anchor = s->nev - 1;
		l->n = 0;
		l->tries = 0;
	}
	if (s->step > l->until || l->tries >= LIVELOCK_HASHES)
		return LIVELOCK_UNKNOWN;
	const struct event *e = &s->ev[s->nev - 1];

	if (s->nev - 1 != l->anchor && !same_event(e, &s->ev[l->anchor]))
		return LIVELOCK_MAYBE;
	l->tries++;
	uint64_t h = state_hash(s);

	if (!h)
		return LIVELOCK_UNKNOWN;
	for (int i = 0; i < l->n; i++)
		if (l->hash[i] == h && fair(s, l->at[i], s->nev - 1)) {
			describe_cycle(s, l->at[i], s->nev - 1, msg, len);
			return LIVELOCK_PROVEN;
		}
	if (l->n < LIVELOCK_SLOTS) {
		l->hash[l->n] = h;
		l->at[l->n++] = s->nev - 1;
	} else {
		memmove(l->hash, l->hash + 1, sizeof(l->hash[0]) * (LIVELOCK_SLOTS - 1));
		memmove(l->at, l->at + 1, sizeof(l->at[0]) * (LIVELOCK_SLOTS - 1));
		l->hash[LIVELOCK_SLOTS - 1] = h;
		l->at[LIVELOCK_SLOTS - 1] = s->nev - 1;
	}
	return LIVELOCK_MAYBE;
}
