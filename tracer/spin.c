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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session_int.h"
#include "spin.h"
#include "tramp.h"

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
	if (b || code[0] == 0xcc || tsc_slot_site(p, pc) ||
	    (agent_code(p, pc) && !agent_unmoved(p, pc, NULL)))
		return true;
	if (code[0] == 0x0f && (code[1] == 0x05 || code[1] == 0x31 ||
				(code[1] == 0x01 && code[2] == 0xf9) ||
				code[1] == 0x34))
		return true;
	return code[0] == 0xcd; /* int n */
}

/*
 * Proof by repetition.  A thread whose registers (general, x87/SSE/AVX)
 * at some pc are exactly what they were at an earlier visit of that pc,
 * while every byte it stored in between holds again what it held then,
 * is back in the same state: left alone it repeats that turn forever.
 * Only a change to the memory it reads can end it.  That holds wherever
 * the memory lives (a global, the heap, its own stack or another
 * thread's), whatever the loop's shape (inline, through calls, a lock
 * taken and released each turn), so such a loop is a spin as soon as it
 * reads writable memory and another thread could change it.  A loop that
 * counts in a register never repeats a state and is left to the evidence
 * rules above (tests/targets/spsc_stack_ring.c, wsq_spinlock.c).
 */
#define CYCLE_MAX 256	 /* instructions one turn of a spin takes at most */
#define CYCLE_STORES 128 /* stores one turn makes at most */
#define XSTATE_MAX 16384 /* bytes of the extended register state */

struct step_rec {
	uint64_t pc, h;	     /* where, and a hash of the registers there */
	uint32_t first_store; /* index in probe.w of this step's stores */
	bool load;	     /* it read writable memory */
	bool bad;	     /* its effect cannot be checked: no proof */
};

struct store_rec {
	uint64_t a;
	uint8_t sz;
	uint8_t before[64];
};

static struct {
	struct step_rec st[PROBE_STEPS + 1];
	struct store_rec w[PROBE_STEPS * 3];
	uint32_t nw;
	struct pcs p;
	struct user_regs_struct cand_regs;
	uint8_t cand_x[XSTATE_MAX], x[XSTATE_MAX];
	size_t cand_xlen;
} probe;

static uint64_t regs_hash(const struct user_regs_struct *r)
{
	const uint64_t *v = (const uint64_t *)r;
	uint64_t h = 0x7370696e;

	for (size_t k = 0; k < sizeof(*r) / 8; k++)
		hash_mix(&h, v[k]);
	return h;
}

/* The x87/SSE/AVX state of t into buf; its length, or 0. */
static size_t xstate_get(struct thread *t, uint8_t *buf)
{
	struct iovec io = { .iov_base = buf, .iov_len = XSTATE_MAX };

	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &io) == 0)
		return io.iov_len;
	if (ptrace(PTRACE_GETFPREGS, t->tid, 0, buf) == 0)
		return sizeof(struct user_fpregs_struct);
	return 0;
}

/* Equal register values.  The XSAVE header (bytes 512-575) says which
 * components are in their initial state, which two equal states need
 * not agree on; the values themselves are compared. */
static bool xstate_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	if (len <= 512)
		return !memcmp(a, b, len);
	return !memcmp(a, b, 512) &&
	       (len <= 576 || !memcmp(a + 576, b + 576, len - 576));
}

/* Instructions whose result is not a function of registers and memory
 * (rdrand, rdseed, rdpid): a loop through them proves nothing. */
static bool nondeterministic(const uint8_t *c, size_t len)
{
	size_t i = 0;

	while (i < len && (c[i] == 0x66 || c[i] == 0xf2 || c[i] == 0xf3 ||
			   (c[i] & 0xf0) == 0x40))
		i++;
	return i + 2 < len && c[i] == 0x0f && c[i + 1] == 0xc7 &&
	       c[i + 2] >> 6 == 3 && ((c[i + 2] >> 3) & 7) >= 6;
}

/* Every byte stored since store `from` holds what it held before. */
static bool memory_restored(struct process *p, uint32_t from)
{
	for (uint32_t i = from; i < probe.nw; i++) {
		const struct store_rec *w = &probe.w[i];
		uint8_t now[64];

		if (mem_read(p, w->a, now, w->sz))
			return false;
		for (int b = 0; b < w->sz; b++) {
			uint64_t a = w->a + (uint64_t)b;
			bool earlier = false;

			/* the first store of a byte saw its old value */
			for (uint32_t k = from; k < i && !earlier; k++)
				earlier = a >= probe.w[k].a &&
					  a < probe.w[k].a + probe.w[k].sz;
			if (!earlier && w->before[b] != now[b])
				return false;
		}
	}
	return true;
}

/* Steps [from, to) took t from a state back to the same state: the
 * spin's point (its lowest load of writable memory), or 0. */
static uint64_t same_state(struct thread *t, int from, int to)
{
	uint64_t best = 0;

	if (probe.nw - probe.st[from].first_store > CYCLE_STORES)
		return 0;
	for (int k = from; k < to; k++) {
		if (probe.st[k].bad)
			return 0;
		if (probe.st[k].load && (!best || probe.st[k].pc < best))
			best = probe.st[k].pc;
	}
	if (!best || xstate_get(t, probe.x) != probe.cand_xlen ||
	    !xstate_equal(probe.x, probe.cand_x, probe.cand_xlen) ||
	    !memory_restored(t->p, probe.st[from].first_store))
		return 0;
	return best;
}

int spin_probe(struct session *s, struct thread *t, uint64_t *spin_pc,
	       int *status)
{
	struct proc_map maps[MAX_MAPS];
	int step = 0;
	int nmaps, shared_loads = 0, loops = 0, last_new = 0, rereads = 0;
	uint64_t loads[PROBE_LOADS];
	struct pcs *p = &probe.p;
	const struct proc_map *stack;
	/* the evidence rules hold so far; else the step they failed at */
	int evidence_lost = -1;
	int cand = -1; /* the step whose state a repetition is checked at */

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
	p->n = 0;
	probe.nw = 0;
	for (step = 0; step < PROBE_STEPS; step++) {
		uint8_t code[16] = { 0 };
		struct insn_info in;
		uint8_t sbefore[16];
		uint64_t rsp;
		uint32_t nw0 = probe.nw;
		bool load = false;
		struct step_rec *rec = &probe.st[step];

		if (regs_get(t) || mem_read(t->p, t->regs.rip, code, 1))
			COMPUTE("L157");
		/* race discovery observes what the probe steps */
		uint64_t obs_ea = 0;
		uint64_t obs_site = session_probe_observes(s, t, &obs_ea)
					    ? t->regs.rip
					    : 0;
		/* an access slot's jump over several instructions (race
		 * discovery): they are stepped in the slot, without its
		 * logging, each seen at its own pc; the step goes there
		 * (a probe that gives up first leaves t at the site) */
		struct bp *mb = bp_find(t->p, t->regs.rip);
		uint64_t into_slot = mb && mb->multi && mb->tramp &&
						     !mb->by_int3
					     ? mb->tramp + TRAMP_DISP
					     : 0;
		bool back = false;
		uint64_t moved = agent_unmoved(t->p, t->regs.rip, &back);
		uint64_t pc = moved ? moved : t->regs.rip;

		rec->pc = pc;
		rec->h = regs_hash(&t->regs);
		rec->first_store = probe.nw;
		rec->load = false;
		rec->bad = false;
		if (cand >= 0 && step - cand > CYCLE_MAX)
			cand = -1;
		if (cand >= 0 && probe.st[cand].h == rec->h &&
		    probe.st[cand].pc == rec->pc &&
		    !memcmp(&probe.cand_regs, &t->regs, sizeof(t->regs))) {
			uint64_t pc = same_state(t, cand, step);

			if (pc) {
				*spin_pc = pc;
				return SPIN_LOOP;
			}
			cand = -1;
		}
		if (cand < 0)
			for (int j = step - 1; j >= 0 && step - j <= CYCLE_MAX;
			     j--) {
				if (probe.st[j].h != rec->h ||
				    probe.st[j].pc != rec->pc)
					continue;
				probe.cand_xlen = xstate_get(t, probe.cand_x);
				if (probe.cand_xlen) {
					cand = step;
					probe.cand_regs = t->regs;
				}
				break;
			}
		/* a loop that changes memory can only be proved a spin by
		 * repetition: give up when none is in sight */
		if (evidence_lost >= 0 && cand < 0 &&
		    step - evidence_lost > 2 * CYCLE_MAX)
			COMPUTE("L231"); /* it changes memory */
		mem_read(t->p, t->regs.rip, code, sizeof(code));
		struct bp *ob = bp_find(t->p, t->regs.rip);

		if (ob && ob->observe)
			memcpy(code, ob->orig, sizeof(code));
		else
			ob = NULL;
		if (must_run(t->p, pc, code))
			COMPUTE("L160"); /* it reaches a point: no spin */
		if (disasm_decode(code, sizeof(code), t->regs.rip, &in))
			COMPUTE("L162");
		if (in.vsib || (in.is_string_op && in.mem_write))
			COMPUTE("L164");
		rec->bad = nondeterministic(code, sizeof(code)) ||
			   code[0] == 0xc8; /* enter: stores it may not show */
		for (int k = 0; k < in.nmem; k++) {
			const struct disasm_mem *m = &in.mem[k];
			uint64_t a = disasm_mem_addr(m, &t->regs);
			int sz = m->size ? m->size : 8;

			if (sz > 64)
				sz = 64;
			/* a store to a word t watches traps (or ends a
			 * watching step) when t runs: not in a probe's step */
			if (m->write && thread_watched(t, a, sz, NULL))
				COMPUTE("watched");
			if (m->write) {
				struct store_rec *w = &probe.w[probe.nw];

				if (!m->size || m->size > 64 ||
				    probe.nw >= PROBE_STEPS * 3 - 1) {
					rec->bad = true;
				} else {
					w->a = a;
					w->sz = (uint8_t)sz;
					if (mem_read(t->p, a, w->before,
						     (size_t)sz))
						COMPUTE("L176");
					probe.nw++;
				}
			}
			if (!m->read)
				continue;
			const struct proc_map *mp = find_map(maps, nmaps, a);

			if (!mp || !mp->writable)
				continue; /* a constant */
			rec->load = true;
			/* the thread's own stack: the evidence rules do not
			 * count it (a repetition does) */
			if (mp == stack || m->seg)
				continue;
			load = true;
			bool known = false;

			for (int i = 0; i < shared_loads; i++)
				known |= loads[i] == a;
			if (!known) {
				if (shared_loads == PROBE_LOADS) {
					/* ever new data */
					if (evidence_lost < 0)
						evidence_lost = step;
					continue;
				}
				loads[shared_loads++] = a;
				last_new = step;
			} else {
				rereads++;
			}
		}
		/* the 16 bytes under the stack pointer, for a push, a call,
		 * or any instruction that stores there implicitly */
		rsp = t->regs.rsp;
		if (mem_read(t->p, rsp - sizeof(sbefore), sbefore,
			     sizeof(sbefore)))
			rec->bad = true;
		int hits = note_pc(p, pc, load);

		if (hits < 0)
			COMPUTE("L211"); /* too long a loop to tell */
		if (hits >= 3)
			loops++;
		/* an observation breakpoint (race discovery) is not a
		 * point: it observes (as the thread's trap or slot would
		 * have), then its original instruction is stepped (all of
		 * it, under an access slot's jump), and it is armed again if
		 * it was (the budget spent takes every one away: their
		 * bytes are back) */
		if (obs_site) {
			session_probe_access(s, t, obs_site, obs_ea);
			if (!t->p->observing)
				ob = NULL;
		}
		if (into_slot && t->p->observing) {
			t->regs.rip = into_slot;
			t->regs_dirty = true;
			if (regs_set(t))
				COMPUTE("L157");
			ob = NULL;
		}
		bool rearm = ob && (ob->multi || (!ob->lifted && !ob->retired &&
						  !ob->dormant));

		if (rearm)
			bp_put(t->p, ob, false);
		/* one step of the program's (an access slot's jump back
		 * after it is stepped too: it is not the program's) */
		for (bool first = true;; first = false) {
			if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0) {
				if (first && rearm)
					bp_put(t->p, ob, true);
				COMPUTE("step");
			}
			t->regs_valid = false;
			if (wait_task(t->tid, status) != t->tid)
				return SPIN_GONE;
			if (first && rearm)
				bp_put(t->p, ob, true);
			if (!WIFSTOPPED(*status) || WSTOPSIG(*status) != SIGTRAP ||
			    (*status >> 16))
				return SPIN_EVENT; /* a signal, an exit, an event */
			if (regs_get(t))
				COMPUTE("L157");
			if (!agent_unmoved(t->p, t->regs.rip, &back) || !back)
				break;
		}
		if (t->regs.rsp < rsp && !rec->bad &&
		    probe.nw < PROBE_STEPS * 3 - 1) {
			struct store_rec *w = &probe.w[probe.nw++];
			uint64_t below = rsp - t->regs.rsp;

			if (below > sizeof(sbefore))
				below = sizeof(sbefore);
			w->a = rsp - below;
			w->sz = (uint8_t)below;
			memcpy(w->before, sbefore + sizeof(sbefore) - below,
			       below);
		}
		for (uint32_t k = nw0; k < probe.nw && evidence_lost < 0;
		     k++) {
			uint8_t after[64];

			if (mem_read(t->p, probe.w[k].a, after, probe.w[k].sz) ||
			    memcmp(probe.w[k].before, after, probe.w[k].sz))
				evidence_lost = step; /* it changed memory */
		}
		/* enough evidence: a loop that went round many times and
		 * only re-read what it had read before for a long while */
		if (evidence_lost < 0 && loops >= 64 && rereads >= 16 &&
		    step - last_new >= 256)
			break;
	}
	if (evidence_lost >= 0 || !shared_loads || loops < 64 ||
	    rereads < 16 || step - last_new < 256)
		COMPUTE("L239");
	uint64_t best = 0;

	for (int i = 0; i < p->n; i++)
		if (p->load[i] && p->hits[i] >= 3 && (!best || p->pc[i] < best))
			best = p->pc[i];
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
			/* the agent's page holds the clock, which advances
			 * every step: no part of the program's state */
			if (!maps[i].writable || agent_page_at(p, maps[i].lo))
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

/* ---- the words a spin reads --------------------------------------------- */

static bool in_list(const uint64_t *l, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

/*
 * One turn of t's spin, taken and then undone: t stands at its spin point
 * (the breakpoint at rip), and nobody else runs.  It is single-stepped
 * until it is back at the spin point (or reaches another point, a system
 * call, CYCLE_MAX instructions, or an instruction whose effect cannot be
 * undone), every 8-byte word it reads before storing to it is noted, and
 * then its registers (general and x87/SSE/AVX) and every byte it stored
 * are put back: the thread is exactly where it was, as if it had not
 * moved.  Those words are what another thread's store must change to end
 * the spin (thread.c watch_arm: a store to one is a scheduling point).
 * Only a turn that ends where it began, registers and memory unchanged,
 * is a wait (*waits): a turn that finds what it waits for (a consumer
 * that takes an item) needs no watchpoints, which would only cost points.
 * Returns how many words (at most max) are in words[], 0 when none are
 * known, <0 when t is gone.
 */
#define TURN_MAX 96 /* instructions of a turn taken to tell a wait */

/* Instructions that may store more or elsewhere than their operand says
 * (the xsave and fxsave families, x87 state stores, maskmovq/maskmovdqu
 * through rdi, the system group): a turn that reaches one cannot be
 * undone, so it ends there (ld.so's lazy binding saves the vector state
 * with xsavec). */
static bool hidden_store(const uint8_t *c, size_t len)
{
	size_t i = 0;

	while (i < len && (c[i] == 0x66 || c[i] == 0x67 || c[i] == 0xf2 ||
			   c[i] == 0xf3 || c[i] == 0x2e || c[i] == 0x3e ||
			   c[i] == 0x26 || c[i] == 0x36 || c[i] == 0x64 ||
			   c[i] == 0x65 || (c[i] & 0xf0) == 0x40))
		i++;
	if (i + 1 >= len)
		return true;
	if (c[i] >= 0xd8 && c[i] <= 0xdf)
		return true; /* x87 */
	if (c[i] == 0xc5) /* VEX: only vmaskmovdqu stores through rdi */
		return i + 2 < len && c[i + 2] == 0xf7;
	if (c[i] == 0xc4)
		return i + 3 < len && c[i + 3] == 0xf7;
	return c[i] == 0x0f && (c[i + 1] == 0xae || c[i + 1] == 0xc7 ||
				c[i + 1] == 0xf7 || c[i + 1] == 0x01 ||
				c[i + 1] == 0x00);
}

/* Every byte stores [from, to) wrote holds again what the first of them
 * to write it found. */
static bool turn_restored(struct process *p, const struct store_rec *w,
			  int from, int to)
{
	for (int i = from; i < to; i++) {
		uint8_t now[64];

		if (mem_read(p, w[i].a, now, w[i].sz))
			return false;
		for (int b = 0; b < w[i].sz; b++) {
			uint64_t a = w[i].a + (uint64_t)b;
			bool earlier = false;

			for (int k = from; k < i && !earlier; k++)
				earlier = a >= w[k].a && a < w[k].a + w[k].sz;
			if (!earlier && w[i].before[b] != now[b])
				return false;
		}
	}
	return true;
}

int spin_reads(struct session *s, struct thread *t, uint64_t *words, int max,
	       bool *waits)
{
	static uint8_t xs[XSTATE_MAX];
	static struct store_rec w[CYCLE_STORES + 16];
	uint64_t written[CYCLE_STORES + 16];
	struct user_regs_struct saved;
	int n = 0, nw = 0, nwritten = 0, status = 0, requeue = 0;
	size_t xlen;
	uint64_t start;
	bool cycle = false;

	(void)s;
	*waits = false;
	if (regs_get(t) || regs_set(t))
		return 0;
	saved = t->regs;
	start = saved.rip;
	xlen = xstate_get(t, xs);
	/* the path of a turn that waited, from this point: a turn that
	 * leaves it goes on, and is not followed further */
	int npath = t->wait_path_at == start ? t->nwait_path : 0;
	uint64_t path[WAIT_PATH];
	/* the turn going on: its first step, first store, registers */
	int turn0 = 0, nw0 = 0;
	struct user_regs_struct ref = saved;
	/* a trampoline's jump (tracer/tramp.c) covers several instructions:
	 * its original bytes stay in while the turn runs */
	struct bp *held = NULL;

	for (int step = 0; step < TURN_MAX; step++) {
		uint8_t code[16] = { 0 };
		uint8_t sbefore[16];
		struct insn_info in;
		bool stop = false;

		int ts = step - turn0; /* step of this turn */

		if (npath && ts && t->regs.rip != start &&
		    (ts >= npath || t->wait_path[ts] != t->regs.rip))
			break; /* off the waiting path */
		if (ts < WAIT_PATH)
			path[ts] = t->regs.rip;
		if (ts && t->regs.rip == start) {
			/* a turn is over: a wait when it changed nothing (the
			 * first turn may load what the registers did not hold
			 * yet: then the second must repeat it exactly) */
			struct user_regs_struct now = t->regs, then = ref;

			now.eflags = then.eflags = 0;
			cycle = !memcmp(&now, &then, sizeof(now)) &&
				turn_restored(t->p, w, nw0, nw);
			if (cycle && !npath && ts <= WAIT_PATH) {
				memcpy(t->wait_path, path,
				       (size_t)ts * sizeof(path[0]));
				t->nwait_path = ts;
				t->wait_path_at = start;
			}
			/* a first turn that left memory changed goes on */
			if (cycle || turn0 || !turn_restored(t->p, w, 0, nw))
				break;
			turn0 = step;
			nw0 = nw;
			ref = t->regs;
			ts = 0;
		}
		if (mem_read(t->p, t->regs.rip, code, sizeof(code)))
			break;
		struct bp *b = bp_find(t->p, t->regs.rip);

		if (b && step && !b->observe && t->regs.rip != start)
			break; /* another point */
		if (b)
			memcpy(code, b->orig, sizeof(code));
		else if (code[0] == 0xcc || agent_code(t->p, t->regs.rip) ||
			 tsc_slot_site(t->p, t->regs.rip))
			break;
		if ((code[0] == 0x0f &&
		     (code[1] == 0x05 || code[1] == 0x31 || code[1] == 0x34 ||
		      (code[1] == 0x01 && code[2] == 0xf9))) ||
		    code[0] == 0xcd || hidden_store(code, sizeof(code)) ||
		    nondeterministic(code, sizeof(code)) ||
		    disasm_decode(code, sizeof(code), t->regs.rip, &in) ||
		    in.vsib || in.is_string_op || code[0] == 0xc8)
			break;
		for (int k = 0; k < in.nmem && !stop; k++) {
			const struct disasm_mem *m = &in.mem[k];
			uint64_t a = disasm_mem_addr(m, &t->regs);
			int sz = m->size ? m->size : 8;

			if (m->seg) { /* thread-local: not undone */
				stop = m->write;
				continue;
			}
			if (m->read && n < max && !in_list(written, nwritten,
							   a & ~7ull) &&
			    !in_list(words, n, a & ~7ull))
				words[n++] = a & ~7ull;
			/* every operand's bytes are kept, written or not: the
			 * undo puts back only what changed, so a store the
			 * decoder does not flag is undone too */
			if (!m->size || m->size > 64 || nw == CYCLE_STORES ||
			    mem_read(t->p, a, w[nw].before, (size_t)sz)) {
				stop = true;
				break;
			}
			w[nw].a = a;
			w[nw++].sz = (uint8_t)sz;
			if (!m->write)
				continue;
			for (uint64_t g = a & ~7ull; g < a + (uint64_t)sz &&
			     nwritten < CYCLE_STORES; g += 8)
				if (!in_list(written, nwritten, g))
					written[nwritten++] = g;
		}
		if (stop || nw >= CYCLE_STORES)
			break;
		uint64_t rsp = t->regs.rsp;
		/* what a push or a call stores under the stack pointer */
		bool pushes = in.is_call || in.is_push_reg || code[0] == 0x68 ||
			      code[0] == 0x6a || code[0] == 0x9c ||
			      code[0] == 0xff;

		if (pushes && mem_read(t->p, rsp - sizeof(sbefore), sbefore,
				       sizeof(sbefore)))
			break;
		if (b)
			bp_put(t->p, b, false);
		long e = ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0);

		if (e == 0 && wait_task(t->tid, &status) != t->tid)
			e = -1;
		if (b && b->tramp) {
			/* one held at a time: the thread is at b, outside
			 * the one before (no breakpoint under a jump) */
			if (held && held != b)
				bp_put(t->p, held, true);
			held = b;
		} else if (b) {
			bp_put(t->p, b, true);
		}
		t->regs_valid = false;
		if (e < 0 || !WIFSTOPPED(status)) {
			if (held)
				bp_put(t->p, held, true);
			return -1; /* gone */
		}
		if (WSTOPSIG(status) != SIGTRAP || (status >> 16)) {
			siginfo_t si;

			/* a signal sent to it came first: sent again once the
			 * turn is undone; a fault of the turn's own (the
			 * thread left where it stood would meet it itself,
			 * if it runs that way) is dropped with the turn */
			if (!(status >> 16) &&
			    (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) ||
			     si.si_code <= 0))
				requeue = WSTOPSIG(status);
			break;
		}
		if (regs_get(t))
			break;
		if (pushes && t->regs.rsp < rsp && nw < CYCLE_STORES) {
			uint64_t below = rsp - t->regs.rsp;

			if (below > sizeof(sbefore))
				below = sizeof(sbefore);
			w[nw].a = rsp - below;
			w[nw].sz = (uint8_t)below;
			memcpy(w[nw++].before,
			       sbefore + sizeof(sbefore) - below, below);
		}
	}
	if (held)
		bp_put(t->p, held, true);
	/* undone: the stores from the last to the first, then registers */
	for (int k = nw - 1; k >= 0; k--) {
		uint8_t now[64];

		if (mem_read(t->p, w[k].a, now, w[k].sz) ||
		    memcmp(now, w[k].before, w[k].sz))
			mem_write(t->p, w[k].a, w[k].before, w[k].sz);
	}
	if (xlen) {
		struct iovec io = { .iov_base = xs, .iov_len = xlen };

		if (xlen == sizeof(struct user_fpregs_struct))
			ptrace(PTRACE_SETFPREGS, t->tid, 0, xs);
		else
			ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE,
			       &io);
	}
	t->regs = saved;
	t->regs_valid = true;
	t->regs_dirty = true;
	t->regs_kernel_known = false; /* stepped: all of them */
	if (regs_set(t))
		return -1;
	ptrace(PTRACE_POKEUSER, t->tid,
	       offsetof(struct user, u_debugreg[6]), 0);
	if (requeue)
		syscall(SYS_tgkill, t->p->pid, t->tid, requeue);
	*waits = cycle;
	return n;
}
