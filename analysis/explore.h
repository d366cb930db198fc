/*
 * The explorer: runs many executions of one program with a strategy,
 * stops at the first failure or when a budget runs out, and says honestly
 * which of the two happened.
 */
#ifndef PTLOOM_EXPLORE_H
#define PTLOOM_EXPLORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "../tracer/tracer.h"

enum verdict {
	VERDICT_PASS = 0,
	VERDICT_FAIL = 1,
	VERDICT_INCOMPLETE = 3,
	VERDICT_ERROR = 2,
	VERDICT_DIVERGED = 4,
};

enum strategy_kind { STRAT_DFS, STRAT_RANDOM, STRAT_PCT, STRAT_POS, STRAT_SURW,
		     STRAT_RR, STRAT_COV };

#define HYBRID_MIX_MAX 8

enum found_by { FOUND_DFS, FOUND_SAMPLE, FOUND_HYBRID, FOUND_DISCOVERY };

/*
 * What a -j worker has done so far, in memory it shares with the parent,
 * which prints the progress line for all of them.  lock guards the
 * terminal: the parent holds it to draw the line (line_shown), a worker
 * to clear it before it passes program output through (--output).
 */
struct explore_tally {
	volatile uint64_t runs, bound0_runs;
	volatile int bound;		/* dfs: the bound being explored */
	volatile uint32_t done, total;	/* dfs: its work items */
};
struct explore_shared {
	pthread_mutex_t lock;		/* process-shared, robust */
	volatile int line_shown;
	struct explore_tally w[64];
};

struct explore_opts {
	struct session_config cfg; /* base configuration of every run */
	int strategy;		   /* enum strategy_kind */
	int bound;		   /* --preemptions */
	bool delay_bound;	   /* --bound delay: bound delays instead */
	uint64_t max_runs;	   /* 0 = none */
	double max_time;	   /* 0 = none */
	int pct_depth;
	bool reduction;		   /* sleep sets (dfs) */
	/* dfs: source-set DPOR with bounded POR (analysis/dpor.c) over
	 * the sleep sets; serial only (-j, --shard and --bound delay keep
	 * sleep sets), and without the state cache */
	bool dpor;
	bool state_cache;	   /* dfs: prune states seen before */
	bool progress;		   /* a progress line on stderr */
	bool output;		   /* --output: show every run's output */
	int spin_ms;		   /* spin detection, 0 = off */
	bool hybrid;		   /* dfs: interleave samples */
	/* the hybrid's samplers (enum sampler_kind), used in turn; none:
	 * the default mix */
	int mix[HYBRID_MIX_MAX];
	int nmix;
	int jobs;		   /* random/pct: parallel workers */
	int worker, stride;	   /* this worker runs worker + k*stride */
	uint64_t only_run;	   /* run just sample only_run-1 */
	int shard, nshards;	   /* dfs: explore part shard of nshards */
	/* -j dfs: the smallest failure key (dfs_key) any worker found, in
	 * memory the workers share; a worker past it stops */
	struct dfs_shared_cache *shared_cache; /* -j: the workers' states */
	volatile uint64_t *best_key;
	/* -j samplers: the smallest sample number any worker failed at, in
	 * memory the workers share; a worker whose next sample is past it
	 * stops, so every sample before it runs and the first failing one
	 * in the seed's order is the result, as in a serial run */
	volatile uint64_t *best_sample;
	/* -j dfs: the smallest dfs_key of a systematic run that read the
	 * virtual clock while state keys left it out
	 * (session_config.key_no_clock), in the same shared memory: the
	 * worker publishes it there and in best_key (a worker past it
	 * stops), and the parent starts the whole search again with the
	 * clock in every key, as the serial search does.  NULL: the
	 * workers' keys carry the clock from the start. */
	volatile uint64_t *clock_key;
	bool key_clock;		   /* state keys carry the clock from the start */
	/* -j dfs: the runs of all workers as the merge counts them (bound 0
	 * once), against shared_max: the budget is the whole search's, as
	 * serially (a worker's share of -n made a search that fits -n
	 * INCOMPLETE when its roots' runs exceeded the share) */
	volatile uint64_t *shared_runs;
	/* -j dfs with the hybrid: [0] the systematic runs of all workers
	 * (bound 0 once), [1] the workers whose search goes on; a worker
	 * whose search is done samples while the runs of all are fewer than
	 * twice [0], and waits while [1] says a search can still add to it,
	 * so the samples after the search are shared out as they come */
	volatile uint64_t *shared_post;
	uint64_t shared_max;
	bool shared_bound0;	   /* its bound-0 runs count there */
	/* -j: this worker's tally and the terminal's lock, or NULL */
	struct explore_tally *tally;
	struct explore_shared *shared;
	bool no_checkpoint;	   /* every run from exec */
	int discovery_runs;	   /* --points races: discovery executions */
	/* --min-coverage: stop once this share of the conflicting pairs
	 * seen was seen in both orders (serial only; a finished dfs's
	 * samples go on until then or the budget); 0: none */
	double min_coverage;
	uint64_t discovery_budget; /* per discovery run: observation stops
				    * and single-steps (discover.h) */
	/* -j: race discovery made once, before the workers started (each
	 * worker's own copy, which it consumes); NULL: make it here */
	struct discovery *discovered;
};

/* A process of the program that died of a crash signal in passing runs
 * (the command's exit status hid it: run_result.child_crash_sig): its
 * label without the thread ("P1 racy"), the signal, where, in how many
 * runs, and the first such run (its schedule is saved). */
#define CHILD_CRASH_MAX 8
struct child_crash {
	char process[64];
	char label[64];		/* "P1 racy T0", of the first run */
	int signal;
	char where[LOC_MAX];
	uint64_t runs;
	uint64_t first_run;	/* its number (0-based) */
	struct run_result run;
	/* the points that run had, when not the result's own (a -j
	 * worker's race discovery); NULL: explore_result.points */
	struct user_point *points;
	size_t npoints;
};

struct explore_result {
	int verdict;		   /* enum verdict */
	uint64_t runs;		   /* executions */
	uint64_t pruned;	   /* runs cut short by the reduction */
	bool complete;		   /* dfs: the bound was exhausted */
	int bound;		   /* dfs: highest bound reached */
	double seconds;
	double longest_run;	   /* wall seconds of the longest run (race
				    * discovery's included) */
	struct run_result fail;	   /* the failing run, if any */
	uint64_t fail_run;	   /* its number (0-based) */
	/* who found it: FOUND_DFS (the bounded search itself), a sample of
	 * the hybrid or of --strategy, or a race-discovery sample; only a
	 * dfs find is known to fit the preemption bound */
	int found_by;
	uint32_t found_preemptions; /* the failing run's, as found */
	struct run_result pass;	   /* the last passing run, if any */
	bool have_pass;
	uint64_t total_steps;
	uint64_t total_stops, total_choices; /* run_result.stops, .choices */
	uint64_t total_state_keys;	   /* run_result.state_keys */
	uint64_t stop_kinds[STOPK_N];	   /* run_result.stop_kinds summed */
	/* the runs' trace hashes, each mixed and summed (any order; -j
	 * sums its workers', bound 0 once): two explorations that ran the
	 * same runs have the same
	 * (PTLOOM_STATS prints it; the fast path is checked with it) */
	uint64_t trace_digest;
	uint64_t bound0_digest;		   /* of it, the bound-0 runs' (-j) */
	/* why a process of some run had no in-process agent, or "" */
	char agent_note[128];
	/* runs in which processes of the tree outlived P0 (killed at its
	 * end), and the first such run's run_result.outlived */
	uint64_t outlived_runs;
	char outlived[128];
	char error[512];
	/* user points the runs used: racy accesses and adaptive spin points
	 * (schedule files record them) */
	struct user_point *points;
	size_t npoints;
	size_t nrace_points, nspin_points;
	uint64_t accesses;	   /* observed by race discovery */
	double discovery_seconds;
	int discovery_runs;
	int discovery_forked;	   /* of them forked from a template */
	int discovery_from_exec;   /* from exec: its pid was taken then */
	uint64_t discovery_stops;  /* its observation stops */
	uint64_t discovery_steps;  /* and single-steps over them */
	uint64_t discovery_logged; /* stops the access slots saved */
	uint64_t discovery_sync;   /* at shared objects' atomics, free() */
	/* races feedback runs found that are no points: too costly
	 * (discover.c FEEDBACK_STEPS) */
	size_t discovery_costly;
	/* pairs only the lazy joins of shared objects' atomics order:
	 * points, not races (discovery.hidden) */
	size_t discovery_hidden;
	/* discovery runs that observed only the language runtime's atomics
	 * (Go's runtime after the first run) */
	int discovery_runtime_atomics;
	/* the runtime's own races and shared atomics: no points */
	size_t discovery_runtime_races;
	int discovery_runtime_atomics_left;
	/* a discovery run cut by --timeout or --max-steps: the discovery
	 * did not see the program to its end (error says), 0 if none */
	int discovery_limit;
	/* discovery saw data on a thread's stack reach another thread
	 * (discovery.stack_shared): its runs observing stack-relative
	 * accesses, and whether none could (stack_unobserved: no pass) */
	bool discovery_stack_shared;
	int discovery_stack_runs;
	bool discovery_stack_unobserved;
	/* discovery runs in which the program mapped an object of its own
	 * after its first thread (a plugin): not covered; the first's name */
	int discovery_late_runs;
	char discovery_late_object[64];
	int restarts;		   /* explorations restarted for a spin */
	/* restarted because a dfs run read the virtual clock, which state
	 * keys left out until then (session_config.key_no_clock) */
	int clock_restarts;
	uint64_t samples;	   /* hybrid samples among the runs */
	uint64_t rr_samples;	   /* of them, round-robin's (rr) */
	uint64_t cov_samples;	   /* and the coverage-guided one's (cov) */
	uint64_t late_samples;	   /* and the newest-thread scan's (late) */
	int found_sampler;	   /* FOUND_HYBRID: its enum sampler_kind */
	uint64_t dfs_runs;	   /* runs when a hybrid's dfs finished */
	uint64_t profile_runs;	   /* surw: the default run it learns from */
	bool too_long;		   /* a run hit a per-run limit (error says) */
	uint64_t steps_runs;	   /* runs cut by --max-steps, no livelock */
	/* runs with a choice of more alternatives than a point offers
	 * (MAX_ALTS): not covered by a dfs, and the most candidates seen */
	uint64_t capped_runs;
	uint64_t shared_vm_runs; /* runs with a clone sharing the memory */
	uint64_t shared_apart_runs; /* runs with files mapped shared apart */
	uint64_t watch_capped_runs; /* runs past their watching steps */
	uint64_t py_shared_runs; /* runs with interpreters sharing data */
	uint32_t capped_most;
	uint64_t slow_runs;	   /* runs cut by --timeout, still running */
	char slow_why[320];	   /* the first of them: its kernel_wait */
	bool killed;		   /* a run was SIGKILLed from outside */
	bool nondeterministic;	   /* dfs: a run left the prefix it was
				    * given; the search stopped (error) */
	unsigned filters;	   /* seccomp filters installed (all workers) */
	/* sharded dfs: where the failure lies in the serial order
	 * (dfs_key), and the bound-0 runs every shard repeats */
	uint64_t fail_key;
	uint64_t bound0_runs;
	bool stopped;		   /* -j: stopped, another worker's failure
				      comes first */
	unsigned checkpoint_forks; /* runs forked from a checkpoint */
	char checkpoint_note[160]; /* why runs were exec'd, or "" */
	/* the conflicting pairs of every run (analysis/coverage.h), and
	 * whether --min-coverage stopped the exploration */
	struct coverage *coverage;
	bool coverage_reached;
	double coverage_seconds;   /* CPU time counting them (serial) */
	/* passing runs in which a process died of a crash signal, by
	 * process and signal (serial explorations) */
	struct child_crash crashes[CHILD_CRASH_MAX];
	int ncrashes;
};

int explore(const struct explore_opts *o, struct explore_result *r);
void explore_result_free(struct explore_result *r);

/* Same failure? kind, signal/exit status and location. */
bool fingerprint_equal(const struct run_result *a, const struct run_result *b);

#endif
