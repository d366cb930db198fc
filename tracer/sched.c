/*
 * The run queue: see sched.h for the rules.  Pure: it reads thread states
 * and writes alternatives, so tests/unit/test_sched.c pins every rule
 * without a tracee.
 */
#include <stdlib.h>
#include "sched.h"

static void add(struct choice *c, int t, const struct sched_thread *st,
		bool timeout, bool cost)
{
	if (c->nalts >= MAX_ALTS)
		return;
	c->alts[c->nalts++] = (struct alt){
		.thread = (uint16_t)t,
		.timeout = timeout,
		.cost = cost,
		.kind = timeout ? OP_TIMEOUT : st->kind,
		.yield = st->yield,
		.fn = timeout ? 0 : st->fn,
		.global = st->global,
		.readers = timeout ? 0 : st->readers,
		.reads = !timeout && st->reads,
		.obj = st->obj,
		.obj2 = timeout ? 0 : st->obj2,
		.pc = st->pc,
	};
}

static int cmp_deadline(const void *a, const void *b, void *th)
{
	(void)th;
	const struct alt *x = a, *y = b;

	if (x->obj != y->obj)
		return (x->obj > y->obj) - (x->obj < y->obj);
	return (x->thread > y->thread) - (x->thread < y->thread);
}

/* Adds the timeouts of the timed waits (only the due ones: due 1, only
 * the others: 0, all: -1), earliest deadline first, each at cost; returns
 * where they start.  A timeout's object is the thread's wait object for
 * the reduction; the deadline only orders them. */
static int add_timeouts(struct choice *c, const struct sched_thread *th,
			int n, int due, bool cost)
{
	int first = c->nalts;

	for (int t = 0; t < n; t++) {
		if (th[t].state != SCHED_BLOCKED || !th[t].timed ||
		    (due >= 0 && th[t].due != (due == 1)))
			continue;
		add(c, t, &th[t], true, cost);
		c->alts[c->nalts - 1].obj = th[t].deadline;
	}
	if (c->nalts - first > 1)
		qsort_r(&c->alts[first], c->nalts - first, sizeof(c->alts[0]),
			cmp_deadline, NULL);
	for (int i = first; i < c->nalts; i++)
		c->alts[i].obj = th[c->alts[i].thread].obj;
	return first;
}

int sched_alternatives(const struct sched_thread *th, int n, int current,
		       struct choice *c)
{
	bool cur_on = current >= 0 && current < n &&
		      th[current].state == SCHED_ENABLED;
	bool cur_runs = cur_on && !th[current].yield;
	int enabled = 0, busy = 0, due = 0;

	c->kind = DEC_RUN;
	c->current = current;
	c->nalts = 0;
	for (int t = 0; t < n; t++) {
		enabled += th[t].state == SCHED_ENABLED;
		busy += th[t].state == SCHED_ENABLED && !th[t].yield;
		due += th[t].state == SCHED_BLOCKED && th[t].timed &&
		       th[t].due;
	}
	/* Only yielders can run and a deadline has come: that wait's thread
	 * is the one they wait for (natively it is woken and runs), so its
	 * timeout comes first and free and the yielders cost one, as beside
	 * a busy thread.  Before, the timeout cost a preemption while a
	 * spinner could run, and the spinner ran for free until --max-steps
	 * (a flag set by a thread after usleep(1000): INCOMPLETE). */
	bool woken = busy == 0 && enabled > 0 && due > 0;
	/* round-robin order after the current thread, the current last */
	int start = current >= 0 && current < n && !cur_runs ? current + 1 : 0;

	if (cur_runs)
		add(c, current, &th[current], false, false);
	for (int k = 0; k < n; k++) {
		int t = (start + k) % n;

		if (t == current || th[t].state != SCHED_ENABLED ||
		    th[t].yield)
			continue;
		/* a free switch when the current thread blocked, exited or
		 * yielded; a preemption when it could go on */
		add(c, t, &th[t], false, cur_runs);
	}
	if (woken)
		for (int i = add_timeouts(c, th, n, 1, false); i < c->nalts;
		     i++)
			c->alts[i].woken = 1;
	/* yielders: free only when nobody else can run; otherwise running
	 * one is a preemption, so spinning threads cannot pass the turn to
	 * each other forever while the thread they wait for is ready */
	for (int k = 0; k < n; k++) {
		int t = (start + k) % n;

		if (th[t].state != SCHED_ENABLED || !th[t].yield ||
		    t == current)
			continue;
		add(c, t, &th[t], false, busy > 0 || woken);
	}
	/* the yielder itself again: free only when it is alone, or one
	 * spinning thread could be chosen forever at no cost */
	if (cur_on && !cur_runs)
		add(c, current, &th[current], false, c->nalts > 0);

	/* Timeouts: a preemption while someone can run, else time jumps to
	 * the earliest deadline for free, and only there: a later deadline
	 * passes only after the earliest one's thread is woken (its timeout
	 * is a choice among the ones that follow, a preemption then, since
	 * that thread can run).  Offering it here, free, let a 60 s wait time
	 * out before a worker's 10 ms sleep ended, at bound 0. */
	int first_timeout = add_timeouts(c, th, n, woken ? 0 : -1,
					 enabled > 0);

	if (!enabled)
		for (int i = first_timeout + 1; i < c->nalts; i++)
			if (th[c->alts[i].thread].deadline >
			    th[c->alts[first_timeout].thread].deadline) {
				c->nalts = i;
				break;
			}
	/* x86-TSO: a store that may stay in its thread's store buffer past
	 * the loads that follow it, after everything else: a delay, counted
	 * as a preemption (tracer/tso.c) */
	for (int t = 0; t < n; t++) {
		if (th[t].state != SCHED_ENABLED || !th[t].tso ||
		    c->nalts >= MAX_ALTS)
			continue;
		add(c, t, &th[t], false, true);
		c->alts[c->nalts - 1].timeout = ALT_BUFFER;
		c->alts[c->nalts - 1].global = 1;
	}
	return c->nalts;
}
