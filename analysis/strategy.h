/*
 * Exploration strategies: each is a struct strategy (tracer/tracer.h) the
 * supervisor asks at every choice point, plus a few calls the explorer
 * makes between runs.
 *
 * - first:  no preemption; the default alternative everywhere.
 * - random: a uniformly random alternative at every choice (rr chaos-like).
 * - pct:    Burckhardt et al. 2010: random thread priorities, d-1 priority
 *           change points; the highest-priority enabled thread runs.
 * - dfs:    every schedule with at most N preemptions, bounds 0..N in turn,
 *           each schedule once (tests/unit/test_dfs.c pins it).
 * - replay: follow a list of recorded decisions.
 */
#ifndef PTLOOM_STRATEGY_H
#define PTLOOM_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../tracer/tracer.h"

/* Samplers: begin run number `run` (seeds are derived from it), so every
 * sample is a pure function of (seed, run) and of the profile.
 * - random: a uniformly random alternative at every choice;
 * - pct:    random priorities, depth-1 change points (Burckhardt 2010);
 * - pos:    partial-order sampling: a random priority per pending event,
 *           re-drawn for the events that conflict with the one that ran
 *           (Yuan et al. 2018);
 * - surw:   selectively uniform walk: only events on the run's chosen
 *           shared objects are interleaved, each thread weighted by the
 *           interesting events it has left (Zhao et al. 2025); it needs a
 *           profile: the events of one run, e.g. the default schedule;
 * - rr:     preemptive round-robin: the next thread in T-number order
 *           after every q points of the running one (from the run
 *           number: q, the order's direction, whether the turns begin at
 *           once or when the running thread first cannot go on; from the
 *           twelfth run on one choice in 16 is uniform): a strict
 *           alternation of any length with no delay at all;
 * - cov:    coverage-guided (in the spirit of RFF, Wolff et al. 2024):
 *           pos's random priorities, but an operation that would follow
 *           the last one on its object in an order of their pair not yet
 *           seen (sampler_set_coverage) goes first;
 * - late:   one preemption, to the newest thread that can run: the default
 *           schedule, except that at the k-th step of the k-th sample
 *           (counted from the step after the profile's last thread
 *           creation, then from the start) the running thread hands over
 *           to the enabled thread created last.  The default order runs
 *           the oldest threads first, so a thread created last meets the
 *           others only after they have finished; this scan puts it into
 *           every gap of the first one to run (an atomicity violation
 *           between two critical sections among many threads: a worker
 *           stopped between them while a reader created after all the
 *           workers reads both). */
enum sampler_kind {
	SAMPLER_RANDOM,
	SAMPLER_PCT,
	SAMPLER_POS,
	SAMPLER_SURW,
	SAMPLER_RR,
	SAMPLER_COV,
	SAMPLER_LATE,
	SAMPLER_MAX
};
struct sampler;
struct sampler *sampler_new(bool pct, uint64_t seed, int depth);
struct sampler *sampler_new_kind(int kind, uint64_t seed, int depth);
/* splitmix64: the next number of the stream whose state is *x (the
 * samplers' seeds and draws) */
uint64_t splitmix64(uint64_t *x);

int sampler_kind(const struct sampler *s);
/* The random walk draws timeouts like threads in every run, not in half
 * of them (race discovery: a background thread's wakes, Go's sysmon
 * preempting goroutines, are what interleave the work it observes). */
void sampler_timeouts_always(struct sampler *s);
const char *sampler_name(int kind);
int sampler_kind_of(const char *name); /* -1 if unknown */
/* SURW: learn the shared objects and each thread's events on them. */
void sampler_profile(struct sampler *s, const struct event *ev, size_t n);
/* cov: the pairs seen so far (analysis/coverage.h), read at every choice;
 * the caller adds each run to it. */
struct coverage;
void sampler_set_coverage(struct sampler *s, const struct coverage *c);
void sampler_begin(struct sampler *s, uint64_t run, uint64_t est_steps);
struct strategy sampler_strategy(struct sampler *s);
void sampler_free(struct sampler *s);

/* dfs */
struct dfs;
struct dfs *dfs_new(int bound, bool sleep_sets);
/* Prepare the next run; false when the exploration is complete. */
bool dfs_next(struct dfs *d);
/* After a run: backtrack.  diverged: the run did not follow its prefix. */
void dfs_end_run(struct dfs *d);
struct strategy dfs_strategy(struct dfs *d);
/* Placement search: each work item runs once, its default continuation,
 * without backtracking over free edges (and without sleep sets). */
void dfs_set_placement(struct dfs *d, bool on);
/* The items of each bound run by descending score(ctx, choice, alt) of the
 * costly alternative that starts them; ties in queue order. */
typedef int (*dfs_score_fn)(void *ctx, const struct choice *c, int alt);
void dfs_set_order(struct dfs *d, dfs_score_fn score, void *ctx);
/* Explore only part `shard` (0-based) of `nshards`: bound 0 in full, then
 * the bound-1 items whose index is shard mod nshards, with all their
 * descendants.  The parts are disjoint and together the serial search. */
void dfs_set_shard(struct dfs *d, int shard, int nshards);
/* Where the search is, in the serial order of failures: bound, then the
 * bound-1 item the current item descends from (0 at bound 0). */
uint64_t dfs_key(const struct dfs *d);
/* Delay bounding instead of preemption bounding: alternative k in
 * round-robin order costs k delays (sleep sets off). */
void dfs_set_delay(struct dfs *d, bool on);
int dfs_delay_cost(const struct choice *c, int i);
/* DPOR (analysis/dpor.h; flags DPOR_*): a run choice explores its first
 * free alternative and those the races of the runs ask for.  Serial
 * preemption bounding only: ignored under placement, delay bounding and
 * sharding, which keep sleep sets; the state cache is off under it. */
void dfs_set_dpor(struct dfs *d, bool on, unsigned flags);
bool dfs_dpor(const struct dfs *d);	/* DPOR is in use */
uint64_t dfs_dpor_points(const struct dfs *d); /* backtrack points added */
/* State caching: prune a choice point whose program state was reached
 * before at no higher cost (choice.state; call before dfs_strategy). */
void dfs_set_state_cache(struct dfs *d, bool on);
/* -j: a state cache the workers share (made before they fork, at most
 * cap entries); the workers' shards then prune by one another's states
 * too, from bound 1 on.  The first failure in the serial order and the
 * verdict stay the serial search's; the run count may vary. */
struct dfs_shared_cache;
struct dfs_shared_cache *dfs_shared_cache_new(size_t cap);
void dfs_shared_cache_free(struct dfs_shared_cache *t);
void dfs_set_shared_cache(struct dfs *d, struct dfs_shared_cache *t);
uint64_t dfs_cache_hits(const struct dfs *d);
/* State keys at forced choices of the last bound too (one free
 * alternative: dfs_want_state); off by default, PTLOOM_NO_LIFT=1. */
void dfs_set_forced_keys(struct dfs *d, bool on);
int dfs_bound(const struct dfs *d);	/* the bound being explored */
/* The reduction's dependence of two pending operations (tests use it). */
bool dfs_dependent(const struct alt *a, const struct alt *b);
bool dfs_diverged(const struct dfs *d); /* last run left its prefix */
/* The last run ended before the edge it was given (its prefix's costly
 * edge or the backtracked node): the program did not repeat itself (a
 * file an earlier run left: `make` finds its targets made) and that edge
 * was never run, though the search would count it done. */
bool dfs_ended_short(const struct dfs *d);
size_t dfs_pending(const struct dfs *d);
/* Of the work items of the bound being explored: how many are done, of
 * how many (progress lines). */
void dfs_progress(const struct dfs *d, size_t *done, size_t *total);
uint64_t dfs_pruned(const struct dfs *d);
void dfs_free(struct dfs *d);

/* replay: follow decisions.  strict: a missing alternative or extra choice
 * point is a divergence (pick returns -1 / recorded in *diverged_at);
 * lenient: missing or extra decisions take the default alternative. */
struct replay_strategy {
	const struct decision *dec;
	size_t ndec, pos;
	bool strict;
	long diverged_at;  /* decision index where following failed, -1 */
	uint32_t diverged_step;
	char why[256];
	size_t extra;	   /* choice points beyond the recorded ones */
};
void replay_init(struct replay_strategy *r, const struct decision *dec,
		 size_t ndec, bool strict);
struct strategy replay_strategy(struct replay_strategy *r);

/* For struct strategy.known hooks: the index of c->current among a run
 * choice's alternatives, -1 when it is not one, or when an alternative is
 * a store buffer's or (unless timeouts) a timeout: a hook that says
 * whether it would take a timeout (its draws, a recorded decision) may
 * have them. */
int known_current(const struct choice *c, bool timeouts);

#endif
