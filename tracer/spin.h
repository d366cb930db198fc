/*
 * Spin and livelock evidence (tracer/spin.c): whether a thread that runs
 * long without a scheduling point is spinning on memory another thread
 * must change, and whether a run past --max-steps provably repeats.
 */
#ifndef PTLOOM_SPIN_H
#define PTLOOM_SPIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct session;
struct thread;

enum {
	SPIN_COMPUTE = 0, /* not a spin: let it run on (stopped, resumable) */
	SPIN_LOOP,	  /* a spin at *spin_pc (stopped) */
	SPIN_EVENT,	  /* a stop of another kind came: *status */
	SPIN_GONE,	  /* the thread vanished */
};

/* t is stopped (its SIGSTOP or a single-step trap).  Look for a spin. */
int spin_probe(struct session *s, struct thread *t, uint64_t *spin_pc,
	       int *status);

/* t stands at its spin point: the 8-byte words one turn of the spin
 * reads (before storing to them), found by taking the turn and undoing
 * it; how many (at most max), <0 when t is gone.  *waits: the turn came
 * back to the point with nothing changed (it waits for another thread). */
int spin_reads(struct session *s, struct thread *t, uint64_t *words, int max,
	       bool *waits);

#define LIVELOCK_SLOTS 8

struct livelock {
	bool probing;	   /* past --max-steps, looking for a cycle */
	uint64_t until;	   /* last step looked at */
	size_t anchor;	   /* the event whose repetitions are compared */
	uint64_t hash[LIVELOCK_SLOTS];
	size_t at[LIVELOCK_SLOTS];
	int n, tries;
};

enum {
	LIVELOCK_MAYBE = 0, /* go on looking */
	LIVELOCK_PROVEN,    /* msg holds the cycle */
	LIVELOCK_UNKNOWN,   /* no proof: the run is only too long */
};

/* After each event past --max-steps. */
int livelock_check(struct session *s, char *msg, size_t len);

#endif
