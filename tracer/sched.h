/*
 * The run queue: from the state of every thread, the alternatives of a
 * choice point, default choice first, each with its preemption cost.
 *
 * The rules (docs/INTERNALS.md explains them):
 * - the thread that ran last and could continue is the default; running
 *   anyone else instead is a preemption;
 * - when it blocked or exited, the lowest-numbered enabled thread is the
 *   default and every switch is free;
 * - when it yielded (sched_yield, spin), the next thread after it in
 *   round-robin order is the default, switching is free and the yielder
 *   comes last;
 * - a thread in a timed wait may time out at any choice point: that costs a
 *   preemption while another thread could run, and is free (earliest
 *   deadline first) when nobody else can;
 * - when only yielders (spinners) can run, a wait whose deadline has come
 *   is a thread able to run: its timeout comes first, free, and the
 *   yielders cost a preemption, as beside any thread that is not
 *   yielding (a spin on a flag that a sleeping thread sets).
 */
#ifndef PTLOOM_SCHED_H
#define PTLOOM_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include "event.h"

enum sched_state {
	SCHED_DEAD = 0,
	SCHED_ENABLED,	/* at a scheduling point, its operation can run */
	SCHED_BLOCKED,	/* waiting; may have a deadline */
	SCHED_RUNNING,
};

struct sched_thread {
	int state;	  /* enum sched_state */
	bool yield;	  /* its pending operation is a yield */
	bool timed;	  /* blocked with a deadline */
	bool due;	  /* timed, and the deadline has come (virtual clock) */
	uint64_t deadline; /* virtual ns */
	uint8_t kind;	  /* pending operation */
	uint8_t fn;	  /* its enum call_fn (OP_CALL) */
	bool global;	  /* the operation may touch anything */
	uint8_t readers;  /* struct alt's readers */
	bool reads;	  /* struct alt's reads */
	uint64_t obj;
	uint64_t obj2;	  /* a second object (struct alt) */
	uint64_t pc;	  /* where its pending operation is (struct alt) */
	bool tso;	  /* its pending store may enter its store buffer:
			     one more alternative (ALT_BUFFER) */
};

/* Fill c->alts for a DEC_RUN choice.  th is indexed by T-number; current
 * is the thread that ran last (-1 if none).  Returns c->nalts. */
int sched_alternatives(const struct sched_thread *th, int n, int current,
		       struct choice *c);

#endif
