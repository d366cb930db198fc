/*
 * Dynamic partial-order reduction: the race analysis of one run.
 *
 * Source-set DPOR (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014) with the
 * conservative backtrack points of bounded POR (Coons, Musuvathi,
 * McKinley, OOPSLA 2013).  Given the operations a run performed, in
 * order, and the alternatives of the choice points before them, it finds
 * every race (two dependent operations of different threads, the first
 * not ordered before the second by other operations) and, for each, the
 * choice points at which the race can be reversed and the alternatives
 * that start a reversal there (the initials of notdep(e).p).  What to do
 * with them (explore one now, queue one for a later bound) is the
 * caller's policy: analysis/dfs.c.
 */
#ifndef PTLOOM_DPOR_H
#define PTLOOM_DPOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../tracer/event.h"

struct dpor_step {
	struct alt op; /* the operation that ran (its chosen alternative) */
	int32_t node;  /* the choice point before it, -1: it was alone */
};

struct dpor_node {
	const struct alt *alts; /* its alternatives */
	int nalts;
};

/* A race asks choice point `node` to explore one of the alternatives
 * cand[0..n) (indices into its alts; n >= 1). */
typedef void (*dpor_fn)(void *ctx, int node, const int *cand, int n);

enum {
	/* reverse every race, not only those no other race covers */
	DPOR_ALL_RACES = 1u << 0,
	/* bounded POR: also ask the choice point where the first thread's
	 * run of steps began (a switch taken there anyway, so reversing
	 * there costs no more preemptions) */
	DPOR_BOUNDED = 1u << 1,
	/* what dfs uses: the only combination tests/unit/test_dfs.c found
	 * sound under a bound (immediate races alone lose end states at
	 * bound 1, no extra points at bound 0) */
	DPOR_DEFAULT = DPOR_ALL_RACES | DPOR_BOUNDED,
};

/*
 * The races of steps[0..n) under dependence dep (same-thread operations
 * are always dependent); fn is called for each reversal.  0, or -1 when
 * memory ran out (then some races were not reported: the caller must not
 * rely on the analysis).
 */
int dpor_races(const struct dpor_step *steps, size_t n,
	       const struct dpor_node *nodes,
	       bool (*dep)(const struct alt *, const struct alt *),
	       unsigned flags, dpor_fn fn, void *ctx);

#endif
