/*
 * Coverage of an exploration: which pairs of conflicting operations were
 * seen in both orders.
 *
 * Two operations of different threads conflict when they act on one object
 * (a lock or other pthread object, a futex word outside a libc call on it,
 * a racy location with at least one write, a descriptor).  A pair is named
 * by the two operations' code locations (unordered), not by the object or
 * the threads: two threads running one function at one lock give one pair.
 * In each run, every conflicting operation is paired with the one that
 * immediately preceded it on its object (for a read of a racy location:
 * the last write; for a write: the last access) when another thread made
 * that one; the pair is *covered* once both orders were seen (a pair of
 * one location with itself: once seen).  Counted from the tracer's events
 * alone: the tracer knows nothing of it.
 */
#ifndef PTLOOM_COVERAGE_H
#define PTLOOM_COVERAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../tracer/event.h"

/* What the two operations shared. */
enum cov_what { COV_LOCK = 1, COV_FUTEX, COV_MEMORY, COV_FD };

/* One pair.  a <= b are code keys as run_result.syms names them: an
 * event's pc, plus one for an event that is not a call (describe key-1). */
struct cov_pair {
	uint64_t a, b;
	uint8_t seen;	/* 1: a before b seen, 2: b before a seen */
	uint8_t what;	/* enum cov_what */
};

struct coverage;
struct coverage *coverage_new(void);
void coverage_free(struct coverage *c);
/* The code key of an event (the run_result.syms key of its location). */
uint64_t coverage_key(const struct event *e);
/* Adds one run's trace.  Returns how many pairs became covered. */
size_t coverage_add_run(struct coverage *c, const struct event *ev,
			size_t n);
/* Adds (a union) one pair with the orders it was seen in. */
void coverage_add_pair(struct coverage *c, const struct cov_pair *p);
void coverage_add(struct coverage *c, const struct coverage *from);
size_t coverage_pairs(const struct coverage *c);
size_t coverage_covered(const struct coverage *c);
/* covered / pairs, 1 when there is no pair */
double coverage_ratio(const struct coverage *c);
/* The pairs, sorted by (not covered first, a, b); *out is malloc'd. */
size_t coverage_list(const struct coverage *c, struct cov_pair **out);
/* "lock", "futex word", "memory", "descriptor" */
const char *coverage_what_name(int what);
int coverage_what_of(const char *name); /* 0 if unknown */
/* The code keys of every pair's two ends, sorted, unique; malloc'd. */
size_t coverage_keys(const struct coverage *c, uint64_t **out);

/* Serialisation for -j workers: "pairs N" then one "a b seen what" line
 * each; read back into c (a union).  Returns 0 or -EINVAL. */
void coverage_put(FILE *f, const struct coverage *c);
int coverage_get(FILE *f, struct coverage *c);

#endif
