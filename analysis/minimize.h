/*
 * Minimisation (ploom's "the same failure with fewer preemptions"): first
 * drop preemptions (in chunks while there are 16 or more, delta-debugging
 * style, then one at a time) while the run still fails with the same
 * fingerprint, to a fixed point; then drop the remaining non-default
 * decisions one at a time (the last first) under the same rule.
 *
 * Decisions are applied by step (replay_strategy, lenient): removing one
 * lets the default alternative run at its step.  Pure: it calls run() for
 * every candidate, so tests/unit/test_minimize.c drives it with a model.
 */
#ifndef PTLOOM_MINIMIZE_H
#define PTLOOM_MINIMIZE_H

#include <stdbool.h>
#include <stddef.h>
#include "../tracer/tracer.h"

/* Run the program following dec (by step); fill *out.  0 or -errno. */
typedef int (*minimize_run_fn)(void *ctx, const struct decision *dec,
			       size_t n, struct run_result *out);

struct minimize_stats {
	unsigned runs;
	unsigned preemptions_before, preemptions_after;
	size_t decisions_before, decisions_after; /* non-default ones */
};

/* best starts as a copy of the failing run (ownership moves in and out:
 * on return *best is the minimal failing run found).  Returns 0. */
int minimize(minimize_run_fn run, void *ctx, struct run_result *best,
	     unsigned max_runs, struct minimize_stats *st);
/* Run the program once under strategy s; fill *out.  0 or -errno. */
typedef int (*minimize_strategy_fn)(void *ctx, struct strategy *s,
				    struct run_result *out);

/*
 * The same failure with fewer preemptions, searched systematically:
 * bounds 0, 1, ... best->preemptions - 1 in turn, each bound every way of
 * placing that many preemptions on default continuations (dfs placement
 * search), the placements that resemble best's own preemptions (same
 * threads, same operations) first.  So a sampled schedule with many
 * preemptions gives way to the fewest that fail the same way, even where
 * dropping its preemptions one at a time cannot get there.  On success
 * *best is the new run and the bound is returned, else -1 (*best kept).
 * st->runs counts the runs.
 */
int minimize_search(minimize_strategy_fn run, void *ctx,
		    struct run_result *best, unsigned max_runs,
		    struct minimize_stats *st);
/*
 * The same order of effects (calls, racy accesses, atomics, pipe I/O; a
 * mutex's critical sections in their order) with fewer switches: one run
 * that keeps the current thread while its next effect may come and
 * otherwise goes to the thread whose next effect came first in *best.
 * A deep alternation sampled with many needless preemptions comes back
 * with one switch per alternation.  On success (the same failure, fewer
 * preemptions) *best is replaced and its preemptions returned, else -1.
 */
int minimize_reorder(minimize_strategy_fn run, void *ctx,
		     struct run_result *best, struct minimize_stats *st);
/*
 * A failure inside one process of a tree (a test runner's worker): one run
 * with only the decisions that switched between that process's threads,
 * keyed by the preempted thread's own position (so the other processes'
 * default schedules do not shift them), every other choice the default;
 * then, if that failed the same way, as few of those switches as the
 * failure needs (delta debugging over them: a subset keeps its keys where
 * they were).  On success (the same failure, fewer preemptions) *best is
 * replaced and its preemptions returned, else -1.
 */
int minimize_process(minimize_strategy_fn run, void *ctx,
		     struct run_result *best, struct minimize_stats *st);
/* Non-default decisions of a run (index != 0). */
size_t minimize_count_decisions(const struct run_result *r);

#endif
