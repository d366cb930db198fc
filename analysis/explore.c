/*
 * The explorer: see explore.h.  A run that the strategy abandoned because
 * it could not follow its own prefix is a nondeterminism bug in ptloom
 * and ends the exploration with an error; it is never absorbed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dpor.h"
#include "explore.h"
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "coverage.h"
#include "discover.h"
#include "strategy.h"

bool dfs_pruned_run(const struct dfs *d);

bool fingerprint_equal(const struct run_result *a, const struct run_result *b)
{
	if (a->failure != b->failure)
		return false;
	if (a->failure == FAIL_CRASH && a->signal != b->signal)
		return false;
	if (a->failure == FAIL_EXIT && a->exit_status != b->exit_status)
		return false;
	return strcmp(a->location, b->location) == 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The progress line: elapsed time, runs, runs/s, and how far the work is:
 * dfs's bound with the share of its work items started (frac < 0:
 * unknown), or the share of -n's runs.  jobs > 1: the sum of -j workers.
 */
static void progress_line(const struct explore_opts *o, double el,
			  uint64_t runs, int bound, double frac, int jobs)
{
	fprintf(stderr, "\r\033[Kptloom: %.1f s, %llu run%s, %.0f runs/s", el,
		(unsigned long long)runs, runs == 1 ? "" : "s",
		el > 0 ? (double)runs / el : 0.0);
	if (o->strategy == STRAT_DFS) {
		fprintf(stderr, ", bound %d", bound);
		if (frac >= 0)
			fprintf(stderr, " (%.0f%% of its items done)",
				100 * frac);
	} else if (o->max_runs) {
		fprintf(stderr, ", %.0f%% of %llu",
			runs >= o->max_runs ? 100.0
					    : 100.0 * (double)runs /
						      (double)o->max_runs,
			(unsigned long long)o->max_runs);
	}
	if (jobs > 1)
		fprintf(stderr, ", %d workers", jobs);
	fflush(stderr);
}

static void lock_terminal(struct explore_shared *sh)
{
	if (pthread_mutex_lock(&sh->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&sh->lock); /* a killed worker's */
}

/*
 * A passing run in which a process died of a crash signal (a shell's
 * `./racy; true`): counted by process and signal; the first such run is
 * kept (its schedule is saved and replayed).  Returns true if rr was kept.
 */
static bool note_child_crash(struct explore_result *r, struct run_result *rr,
			     uint64_t number)
{
	char proc[64];
	char *t;

	snprintf(proc, sizeof(proc), "%s", rr->child_crash_label);
	/* "P1 racy T2" -> "P1 racy": the process, whichever thread */
	if ((t = strrchr(proc, ' ')) && t[1] == 'T' && t > proc)
		*t = 0;
	for (int i = 0; i < r->ncrashes; i++) {
		struct child_crash *c = &r->crashes[i];

		if (c->signal == rr->child_crash_sig &&
		    !strcmp(c->process, proc)) {
			c->runs++;
			return false;
		}
	}
	if (r->ncrashes >= CHILD_CRASH_MAX)
		return false;
	struct child_crash *c = &r->crashes[r->ncrashes++];

	memset(c, 0, sizeof(*c));
	snprintf(c->process, sizeof(c->process), "%s", proc);
	snprintf(c->label, sizeof(c->label), "%s", rr->child_crash_label);
	snprintf(c->where, sizeof(c->where), "%s", rr->child_crash_where);
	c->signal = rr->child_crash_sig;
	c->runs = 1;
	c->first_run = number;
	c->run = *rr;
	return true;
}

static void progress(const struct explore_opts *o, struct explore_result *r,
		     double t0, const struct dfs *d, bool final)
{
	static double last;
	size_t done = 0, total = 0;
	double t = now();

	if (d)
		dfs_progress(d, &done, &total);
	if (o->tally) {
		o->tally->runs = r->runs;
		o->tally->bound0_runs = r->bound0_runs;
		o->tally->bound = r->bound;
		o->tally->done = (uint32_t)done;
		o->tally->total = (uint32_t)total;
	}
	if (!o->progress || (!final && t - last < 0.2))
		return;
	last = t;
	progress_line(o, t - t0, r->runs, r->bound,
		      total ? (double)done / (double)total : -1, 1);
	if (final)
		fputs("\r\033[K", stderr);
	fflush(stderr);
}

/* --output: a run's output, never on the progress line (a -j worker
 * clears the parent's under the terminal lock). */
static void pass_output(const struct explore_opts *o, const char *out,
			size_t len, uint64_t total)
{
	if (o->shared)
		lock_terminal(o->shared);
	if (o->progress || (o->shared && o->shared->line_shown)) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	if (total > len) {
		fflush(stdout);
		fprintf(stderr, "ptloom: this run wrote %llu bytes of output; "
				"--output passes its last %zu\n",
			(unsigned long long)total, len);
		fflush(stderr);
	}
	fwrite(out, 1, len, stdout);
	fflush(stdout);
	if (o->shared) {
		o->shared->line_shown = 0;
		pthread_mutex_unlock(&o->shared->lock);
	}
}

/*
 * -j: the workers of one exploration, their results read as they come.
 * The parent polls every worker's pipe (never blocks on one), so that
 *  - SIGINT/SIGTERM to ptloom (o->cfg.interrupted) reaches every worker at
 *    once: each ends its run and writes what it found (a signal to
 *    ptloom's pid alone used to wait for --max-time);
 *  - a worker that dies without a result (killed from outside), or that
 *    was interrupted by a signal ptloom did not send it, ends the whole
 *    exploration at once: the others are told to stop and why names it;
 *  - told workers that do not stop within 2 s are killed.
 * stop_on_fail: a failure read from worker k, when every worker before it
 * has reported, tells the rest to stop (the samplers without their shared
 * best sample, which they stop at themselves: the first failure in worker
 * order wins, as when they were read one after the other).
 */
static void put_result(FILE *f, const struct explore_result *wr);
static void merge_crashes(struct explore_result *r, struct explore_result *w);
static bool get_result(FILE *f, struct explore_result *w);

struct workers {
	int n;
	pid_t pids[64];
	int fds[64];		/* read ends */
	bool done[64], ok[64], told[64], reaped[64];
	struct explore_result w[64];
};

static void tell_rest(struct workers *ws, int sig)
{
	for (int k = 0; k < ws->n; k++)
		if (!ws->done[k] && (!ws->told[k] || sig == SIGKILL)) {
			kill(ws->pids[k], sig);
			ws->told[k] = true;
		}
}

static bool interrupted_result(const struct explore_result *w)
{
	return w->verdict == VERDICT_INCOMPLETE &&
	       !strncmp(w->error, "interrupted", 11);
}

static int collect_workers(const struct explore_opts *o,
			   struct explore_shared *sh, struct workers *ws,
			   bool stop_on_fail, double t0, char *why,
			   size_t len)
{
	int left = ws->n, fwd = 0;
	double deadline = 0;

	why[0] = 0;
	while (left) {
		struct pollfd p[64];
		int idx[64], n = 0;

		for (int k = 0; k < ws->n; k++)
			if (!ws->done[k]) {
				p[n] = (struct pollfd){ .fd = ws->fds[k],
							.events = POLLIN };
				idx[n++] = k;
			}
		int e = poll(p, (nfds_t)n, 200);
		int sig = o->cfg.interrupted ? *o->cfg.interrupted : 0;

		if (sig && !fwd) {
			/* ptloom's interrupt is every worker's */
			fwd = sig;
			tell_rest(ws, sig);
			if (!deadline)
				deadline = now() + 2;
		}
		for (int i = 0; e > 0 && i < n; i++) {
			int k = idx[i];

			if (!p[i].revents)
				continue;
			FILE *f = fdopen(ws->fds[k], "r");

			ws->ok[k] = get_result(f, &ws->w[k]);
			if (f)
				fclose(f);
			else
				close(ws->fds[k]);
			ws->done[k] = true;
			left--;
			bool outside = !ws->told[k] && !sig &&
				       (!ws->ok[k] || interrupted_result(&ws->w[k]));

			if (outside && !why[0]) {
				int st = 0;

				if (!ws->ok[k] &&
				    waitpid(ws->pids[k], &st, 0) == ws->pids[k])
					ws->reaped[k] = true;
				if (ws->reaped[k] && WIFSIGNALED(st))
					snprintf(why, len,
						 "worker %d (pid %d) was killed "
						 "by SIG%s from outside ptloom; "
						 "the exploration stopped, no "
						 "failure found",
						 k + 1, (int)ws->pids[k],
						 sigabbrev_np(WTERMSIG(st))
							 ? sigabbrev_np(
								   WTERMSIG(st))
							 : "?");
				else if (ws->ok[k])
					snprintf(why, len,
						 "worker %d (pid %d) was %s from "
						 "outside ptloom; the "
						 "exploration stopped, no "
						 "failure found",
						 k + 1, (int)ws->pids[k],
						 ws->w[k].error);
				else
					snprintf(why, len,
						 "worker %d (pid %d) ended "
						 "without a result (exit status "
						 "%d); the exploration stopped, "
						 "no failure found",
						 k + 1, (int)ws->pids[k],
						 ws->reaped[k] && WIFEXITED(st)
							 ? WEXITSTATUS(st)
							 : -1);
			}
			if (outside || (ws->ok[k] && !ws->told[k] &&
					ws->w[k].verdict == VERDICT_ERROR)) {
				/* (an error is the verdict, whatever the rest
				 * would find) */
				tell_rest(ws, SIGTERM);
				if (!deadline)
					deadline = now() + 2;
			} else if (stop_on_fail && ws->ok[k] &&
				   ws->w[k].verdict == VERDICT_FAIL) {
				bool first = true;

				for (int j = 0; j < k; j++)
					first = first && ws->done[j];
				if (first)
					tell_rest(ws, SIGTERM);
			}
		}
		if (deadline && left && now() > deadline)
			tell_rest(ws, SIGKILL); /* wedged: no more waiting */
		if (!sh || !o->progress || !left)
			continue;
		uint64_t runs = 0;
		int bound = INT32_MAX, at = 0;
		double frac = 0;

		for (int k = 0; k < ws->n; k++) {
			runs += sh->w[k].runs - (k ? sh->w[k].bound0_runs : 0);
			if (sh->w[k].bound < bound)
				bound = sh->w[k].bound;
		}
		for (int k = 0; k < ws->n; k++) {
			uint32_t dn = sh->w[k].done, tt = sh->w[k].total;

			at++;
			if (sh->w[k].bound > bound)
				frac += 1;
			else if (tt)
				frac += (double)(dn < tt ? dn : tt) / tt;
			else
				at--;
		}
		lock_terminal(sh);
		progress_line(o, now() - t0, runs, bound == INT32_MAX ? 0 : bound,
			      at ? frac / at : -1, ws->n);
		sh->line_shown = 1;
		pthread_mutex_unlock(&sh->lock);
	}
	return why[0] ? -1 : 0;
}

/* -j: the line cleared for good (the summary follows). */
static void end_progress(const struct explore_opts *o,
			 struct explore_shared *sh)
{
	if (!sh)
		return;
	if (o->progress) {
		lock_terminal(sh);
		if (sh->line_shown)
			fputs("\r\033[K", stderr);
		fflush(stderr);
		sh->line_shown = 0;
		pthread_mutex_unlock(&sh->lock);
	}
	pthread_mutex_destroy(&sh->lock);
	munmap(sh, sizeof(*sh));
}

/* -j: the tallies and the terminal lock, shared with the workers; NULL
 * when they cannot be had (then no line). */
static struct explore_shared *shared_new(void)
{
	struct explore_shared *sh = mmap(NULL, sizeof(*sh),
					 PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_mutexattr_t a;

	if (sh == MAP_FAILED)
		return NULL;
	if (pthread_mutexattr_init(&a) ||
	    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) ||
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) ||
	    pthread_mutex_init(&sh->lock, &a)) {
		munmap(sh, sizeof(*sh));
		return NULL;
	}
	pthread_mutexattr_destroy(&a);
	/* the caller's own line may be there (race discovery's) */
	sh->line_shown = 1;
	return sh;
}

/* What every merge of one exploration's result into another adds up: the
 * runs' steps, stops (by kind) and choices, the seccomp filters and the
 * checkpoint's forks */
static void add_totals(struct explore_result *r,
		       const struct explore_result *w)
{
	r->total_steps += w->total_steps;
	r->total_stops += w->total_stops;
	r->total_choices += w->total_choices;
	for (int i = 0; i < STOPK_N; i++)
		r->stop_kinds[i] += w->stop_kinds[i];
	r->filters += w->filters;
	r->checkpoint_forks += w->checkpoint_forks;
	if (w->outlived_runs && !r->outlived[0])
		snprintf(r->outlived, sizeof(r->outlived), "%s", w->outlived);
	r->outlived_runs += w->outlived_runs;
	if (w->agent_note[0] && !r->agent_note[0])
		snprintf(r->agent_note, sizeof(r->agent_note), "%s",
			 w->agent_note);
	r->steps_runs += w->steps_runs;
	r->slow_runs += w->slow_runs;
	if (w->slow_why[0] && !r->slow_why[0])
		snprintf(r->slow_why, sizeof(r->slow_why), "%s", w->slow_why);
	r->capped_runs += w->capped_runs;
	if (w->capped_most > r->capped_most)
		r->capped_most = w->capped_most;
	r->shared_vm_runs += w->shared_vm_runs;
	r->shared_apart_runs += w->shared_apart_runs;
	r->watch_capped_runs += w->watch_capped_runs;
	r->py_shared_runs += w->py_shared_runs;
}

static int cmp_point(const void *a, const void *b)
{
	const struct user_point *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static bool add_point(struct explore_result *r, uint64_t addr, uint8_t kind)
{
	for (size_t i = 0; i < r->npoints; i++)
		if (r->points[i].addr == addr)
			return false;
	struct user_point *p = realloc(r->points,
				       (r->npoints + 1) * sizeof(*p));

	if (!p)
		return false;
	r->points = p;
	r->points[r->npoints++] = (struct user_point){ addr, kind };
	qsort(r->points, r->npoints, sizeof(*p), cmp_point);
	return true;
}

/* Lower *best to key (workers race on it). */
static void publish_key(volatile uint64_t *best, uint64_t key)
{
	uint64_t cur;

	if (!best)
		return;
	cur = *best;
	while (key < cur &&
	       !__atomic_compare_exchange_n(best, &cur, key, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

#define MAX_SPIN_POINTS 16

/* The hybrid's default samplers, in turn.  bench/SEARCH.md: surw needs
 * the fewest schedules on every bug class of the suite (strict
 * alternation, deadlocks needing 2-3 preemptions, 1-preemption bugs among
 * 8-16 threads), pos is second on alternation and deadlocks, random ties
 * on the many-thread bugs; depth-3 pct never finds a strict alternation
 * and is not better elsewhere.  So surw takes half the samples. */
static const int default_mix[] = { SAMPLER_SURW, SAMPLER_POS, SAMPLER_SURW,
				   SAMPLER_RANDOM };

static int sampler_of(int strategy)
{
	switch (strategy) {
	case STRAT_PCT:
		return SAMPLER_PCT;
	case STRAT_POS:
		return SAMPLER_POS;
	case STRAT_SURW:
		return SAMPLER_SURW;
	case STRAT_RR:
		return SAMPLER_RR;
	case STRAT_COV:
		return SAMPLER_COV;
	default:
		return SAMPLER_RANDOM;
	}
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A run's conflicting pairs into the exploration's (PTLOOM_STATS says
 * what it cost) */
static void add_coverage(struct explore_result *r, const struct run_result *rr)
{
	double t = cpu_now();

	coverage_add_run(r->coverage, rr->events, rr->nevents);
	r->coverage_seconds += cpu_now() - t;
}

static int first_pick(void *ctx, const struct choice *c)
{
	(void)ctx;
	(void)c;
	return 0;
}

/*
 * Is run `runs` (0-based) of the hybrid a sample while the systematic
 * search goes on?  Every fourth of the first 2,000 (where the samples find
 * what they find: bench/SEARCH.md, bench/CORPUS.md, every program's
 * median under 1,000), every eighth up to 4,000, every sixteenth after:
 * a search that needs most of the budget gets 8,875 of 10,000 runs rather
 * than 7,500, and the first 2,000 runs are what they always were.
 */
static bool hybrid_turn(uint64_t runs)
{
	if (runs < 2000)
		return runs % 4 == 3;
	if (runs < 4000)
		return runs % 8 == 7;
	return runs % 16 == 15;
}

/*
 * The program did not repeat itself under ptloom: what the search has not
 * run yet is not covered, no failure, no pass.  how says what run r->runs
 * did (it follows "run N"), why what may make a program do so.
 */
static void not_repeated(struct explore_result *r, const char *how,
			 const char *why)
{
	snprintf(r->error, sizeof(r->error),
		 "run %llu%s: the program does not repeat itself under "
		 "ptloom (%s), so the search cannot go on; no failure found "
		 "in %llu runs",
		 (unsigned long long)r->runs, how, why,
		 (unsigned long long)r->runs);
	r->nondeterministic = true;
	r->verdict = VERDICT_INCOMPLETE;
}

/* Race discovery for exploration o (discover_races), within its
 * --max-time (explore_serial's stop_wall, else from now: -j's parent
 * discovers before its workers start): 0 or -errno. */
static int discover(const struct explore_opts *o, struct discovery *d)
{
	struct session_config c = o->cfg;

	if (o->max_time > 0 && c.stop_wall <= 0)
		c.stop_wall = now() + o->max_time;
	return discover_races(&c,
			      o->discovery_runs ? o->discovery_runs
						: DISCOVERY_RUNS,
			      o->discovery_runs ? o->discovery_runs
						: DISCOVERY_MAX_RUNS,
			      o->cfg.seed,
			      o->discovery_budget ? o->discovery_budget
						  : DISCOVERY_BUDGET,
			      !o->no_checkpoint && !o->only_run &&
				      !getenv("PTLOOM_NO_CHECKPOINT"),
			      d);
}

/*
 * -j: race discovery once, in ptloom's own process, before the workers
 * start (each inherits it through fork): every worker would make the
 * same one (its runs are a function of the seed), on every CPU at once.
 * True if *d holds it (the caller frees it once the workers are done).
 */
static bool discover_first(const struct explore_opts *o, struct discovery *d)
{
	if (!(o->cfg.points & POINTS_RACES) || o->discovered)
		return false;
	return discover(o, d) == 0;
}

/* A PASS (or a budget's INCOMPLETE) whose runs (n of them) met what
 * ptloom does not model or offer (what): INCOMPLETE, saying so. */
static void not_modelled(struct explore_result *r, uint64_t n,
			 const char *what)
{
	if (!n || r->too_long || r->killed || r->nondeterministic ||
	    (r->verdict != VERDICT_PASS && r->verdict != VERDICT_INCOMPLETE))
		return;
	snprintf(r->error, sizeof(r->error),
		 "%llu run%s, %llu of them with %s; no failure found",
		 (unsigned long long)r->runs, r->runs == 1 ? "" : "s",
		 (unsigned long long)n, what);
	r->too_long = true;
	r->verdict = VERDICT_INCOMPLETE;
}

/* A plugin of the program's own loaded after its first thread (n
 * discovery runs, the first's file name): its code was never observed,
 * nor its atomics points (bp.c bp_late_objects): no pass */
static void late_objects(struct explore_result *r, int n, const char *name)
{
	char what[240];

	if (!n)
		return;
	snprintf(what, sizeof(what),
		 "code of the program's own loaded after its first thread "
		 "started (%s, dlopen'ed), whose accesses and atomics race "
		 "discovery did not see",
		 name);
	not_modelled(r, (uint64_t)n, what);
}

/* Runs that ptloom ran but did not cover (a per-run limit cut them, or
 * they met what it does not model): a PASS, or a budget's INCOMPLETE,
 * becomes INCOMPLETE saying which.  At the end of a serial exploration,
 * and again after -j workers' results are added up (explore()), with the
 * counts of all of them. */
static void runs_not_covered(const struct explore_opts *o,
			     struct explore_result *r, bool dfs)
{
	/* (-j: bound 0's runs, made in every worker, are counted once) */
	uint64_t *counts[] = { &r->steps_runs,	      &r->slow_runs,
			       &r->capped_runs,	      &r->shared_vm_runs,
			       &r->shared_apart_runs, &r->watch_capped_runs,
			       &r->py_shared_runs };

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (*counts[i] > r->runs)
			*counts[i] = r->runs;
	if ((r->steps_runs || r->slow_runs) &&
	    (r->verdict == VERDICT_PASS ||
	     r->verdict == VERDICT_INCOMPLETE) &&
	    !r->too_long && !r->killed && !r->nondeterministic) {
		/* a run cut by a per-run limit was not covered: no pass */
		if (r->steps_runs)
			snprintf(r->error, sizeof(r->error),
				 "%llu runs, %llu of them longer than "
				 "--max-steps (%llu) without a livelock; raise "
				 "--max-steps; no failure found",
				 (unsigned long long)r->runs,
				 (unsigned long long)r->steps_runs,
				 (unsigned long long)o->cfg.max_steps);
		else if (r->slow_why[0])
			/* a wait nobody can end while ptloom holds the
			 * others (a FIFO's open by two threads): say which */
			snprintf(r->error, sizeof(r->error),
				 "%llu runs, %llu of them past --timeout (%g "
				 "s) with no hang shown (the first: %s); no "
				 "failure found",
				 (unsigned long long)r->runs,
				 (unsigned long long)r->slow_runs,
				 o->cfg.timeout, r->slow_why);
		else
			snprintf(r->error, sizeof(r->error),
				 "%llu runs, %llu of them past --timeout (%g "
				 "s) with no hang shown; raise --timeout; no "
				 "failure found",
				 (unsigned long long)r->runs,
				 (unsigned long long)r->slow_runs,
				 o->cfg.timeout);
		r->too_long = true;
		r->verdict = VERDICT_INCOMPLETE;
	}
	/* a dfs run that did not offer every alternative did not cover its
	 * subtree: no pass (sampled runs claim nothing) */
	char capped[200];

	snprintf(capped, sizeof(capped),
		 "a choice among more than %d alternatives (up to %u: threads "
		 "able to run, waiters to wake, a signal's takers or a wait's "
		 "children), of which ptloom offers the first %d",
		 MAX_ALTS, r->capped_most, MAX_ALTS);
	not_modelled(r, dfs ? r->capped_runs : 0, capped);
	/* a process cloned to share its parent's whole memory: its memory
	 * is one, ptloom's model of it two */
	not_modelled(r, r->shared_vm_runs,
		     "a process cloned to share its parent's whole memory "
		     "(clone with CLONE_VM, neither a thread nor a vfork), "
		     "whose accesses ptloom does not interleave with its "
		     "parent's");
	/* a file processes map shared each on its own, in a way ptloom
	 * does not name (tracer/syscall.c apart_fence) */
	not_modelled(r, r->shared_apart_runs,
		     "a file processes map shared on their own (shm_open, a "
		     "file mapped after a fork) in a way ptloom does not "
		     "follow (moved or viewed twice by mremap, truncated, also "
		     "mapped private, beyond its first mapping, or more than "
		     "16 such mappings), whose accesses it does not "
		     "interleave");
	/* the debug registers do not trap here, and a run spent the single
	 * steps that watch spin words instead (tracer/thread.c) */
	not_modelled(r, r->watch_capped_runs,
		     "stores to a spinning thread's words unwatched: this "
		     "machine's debug registers do not trap, and the run went "
		     "past the 200000 single steps that watch them instead");
	late_objects(r, r->discovery_late_runs, r->discovery_late_object);
	/* interpreters sharing data: their own stores to it are no points */
	not_modelled(r, r->py_shared_runs,
		     "Python interpreters sharing writable memory (a "
		     "multiprocessing Value or Array, shared_memory): the "
		     "Python level interleaves them at their locks and system "
		     "calls, not at their accesses to it");
}

static int explore_serial(const struct explore_opts *o0,
			  struct explore_result *r)
{
	struct dfs *d = NULL;
	struct sampler *smp = NULL;
	struct strategy s;
	double t0 = now();
	uint64_t est_steps = 100;
	struct explore_opts opts = *o0, *o = &opts;
	struct sampler *hs[HYBRID_MIX_MAX] = { 0 }; /* hybrid samplers */
	struct sampler *hrr = NULL;	/* the default mix's round-robin */
	struct sampler *hcov = NULL;	/* and its coverage-guided one */
	struct sampler *hlate = NULL;	/* and its newest-thread scan */
	int nhs = 0;
	bool profiled = false;		/* surw samplers have a profile */
	bool post = false;		/* dfs done, the hybrid samples on */
	uint64_t post_until = 0;
	bool searching = o0->shared_post != NULL; /* in shared_post[1] */
	struct run_result disc_fail;	/* a discovery run that failed */
	bool have_disc_fail = false;
	struct user_point *disc_points = NULL;
	size_t ndisc_points = 0;
	uint64_t first_run = 1;	/* the first run since the last restart */
	char disc_why[400] = "";	/* a discovery run hit a limit */
	int disc_time_up = 0;	/* discovery's runs when --max-time ended it */
	double fastest = -1;	/* wall seconds of the fastest finished run */
	bool clock_restart = false; /* a dfs run read the clock: key it */
	/* the trace of the search's first whole dfs run, which the first
	 * run after a clock restart takes again (the same decisions) */
	uint64_t first_trace = 0;
	bool have_first = false, check_first = false;

	memset(r, 0, sizeof(*r));
	/* A serial dfs with the state cache keys states without the virtual
	 * clock while no run has read it or waited on it: a program that
	 * never does cannot tell two clocks apart.  The search is then one
	 * of the program in which reading the clock ends the run, with keys
	 * that cover its whole state, so if any schedule within the bound
	 * reads the clock, one of the search's runs does (or would, where a
	 * run was cut short, at a state an earlier run went on from), and
	 * the search starts again with the clock in every key. */
	o->cfg.key_no_clock = o->strategy == STRAT_DFS && o->state_cache &&
			      (o->shared_cache ? o->clock_key != NULL
					       : o->nshards <= 1) &&
			      !o->key_clock && !(o->dpor && o->reduction) &&
			      !getenv("PTLOOM_KEY_CLOCK");
	/* --max-time bounds the whole exploration, race discovery's runs
	 * and a run in flight included: a run still going at the bound is
	 * stopped there (FAIL_INTERRUPTED, not covered).  Before, the
	 * bound was checked only between runs, and a run longer than it
	 * (a program's start-up that reads the TSC in a loop: gm, 10 s)
	 * ran on to its end past it */
	if (o->max_time > 0 &&
	    (o->cfg.stop_wall <= 0 || t0 + o->max_time < o->cfg.stop_wall))
		o->cfg.stop_wall = t0 + o->max_time;
	r->coverage = coverage_new();
	for (size_t i = 0; i < o->cfg.nuser_points; i++)
		add_point(r, o->cfg.user_points[i].addr,
			  o->cfg.user_points[i].kind);
	if (o->cfg.points & POINTS_RACES) {
		struct discovery disc;
		struct user_point *pts;

		if (o->discovered)
			disc = *o->discovered; /* ours to consume */
		if (o->discovered || discover(o, &disc) == 0) {
			size_t n = discovery_points(&disc, &pts);

			for (size_t i = 0; i < n; i++)
				r->nrace_points += add_point(r, pts[i].addr,
							     pts[i].kind);
			free(pts);
			for (size_t i = 0; i < disc.nspin; i++)
				r->nspin_points += add_point(
					r, disc.spin[i].addr, OP_SPIN);
			r->accesses = disc.accesses;
			r->discovery_seconds = disc.seconds;
			r->discovery_runs = disc.runs;
			r->discovery_forked = disc.forked;
			r->discovery_from_exec = disc.from_exec;
			r->discovery_stops = disc.obs_stops;
			r->discovery_steps = disc.obs_steps;
			r->discovery_logged = disc.obs_logged;
			r->discovery_sync = disc.obs_sync;
			r->discovery_runtime_atomics = disc.runtime_atomics_runs;
			r->discovery_runtime_atomics_left =
				disc.runtime_atomics_left;
			for (size_t i = 0; i < disc.nraces; i++)
				r->discovery_runtime_races +=
					disc.races[i].runtime;
			for (size_t i = 0; disc.feedback_costly &&
					   i < disc.nraces; i++)
				r->discovery_costly += disc.races[i].by_feedback;
			r->discovery_hidden = disc.nhidden;
			r->discovery_stack_shared = disc.stack_shared;
			r->discovery_stack_runs = disc.stack_runs;
			r->discovery_stack_unobserved = disc.stack_unobserved;
			r->discovery_late_runs = disc.late_runs;
			memcpy(r->discovery_late_object, disc.late_object,
			       sizeof(r->discovery_late_object));
			if (disc.limit_kind) {
				r->discovery_limit = disc.limit_kind;
				snprintf(disc_why, sizeof(disc_why),
					 "race discovery's run %d %s",
					 disc.limit_run,
					 disc.limit_kind == FAIL_STEPS
						 ? "went past --max-steps"
						 : "went past --timeout");
				char *cut = strstr(disc.limit_why,
						   "; raise --");

				if (cut)
					*cut = 0; /* said below */
				if (disc.limit_why[0])
					snprintf(disc_why + strlen(disc_why),
						 sizeof(disc_why) -
							 strlen(disc_why),
						 " (%s)", disc.limit_why);
			}
			r->longest_run = disc.longest_run;
			if (disc.time_up)
				disc_time_up = disc.runs;
			if (disc.have_fail) {
				/* keep it for after the exploration */
				disc_fail = disc.fail;
				have_disc_fail = true;
				disc.have_fail = false;
				disc_points = disc.fail_points;
				ndisc_points = disc.nfail_points;
				disc.fail_points = NULL;
			}
			discovery_free(&disc);
		}
		o->cfg.points &= ~POINTS_RACES;
	}
	/* start-up once per exploration: runs fork from a template */
	struct checkpoint *cp = NULL;

	if (!o->no_checkpoint && !o->cfg.checkpoint && !o->only_run &&
	    !getenv("PTLOOM_NO_CHECKPOINT"))
		cp = checkpoint_new();
	if (cp)
		o->cfg.checkpoint = cp;
restart:
	post = false;
	post_until = 0;
	o->cfg.user_points = r->points;
	o->cfg.nuser_points = r->npoints;
	o->cfg.spin_ms = r->nspin_points < MAX_SPIN_POINTS ? o->spin_ms : 0;
	if (o->strategy == STRAT_DFS) {
		d = dfs_new(o->bound, o->reduction);
		if (!d)
			return -1;
		if (o->nshards > 1)
			dfs_set_shard(d, o->shard, o->nshards);
		if (o->delay_bound)
			dfs_set_delay(d, true);
		if (o->state_cache)
			dfs_set_state_cache(d, true);
		if (o->state_cache && o->shared_cache)
			dfs_set_shared_cache(d, o->shared_cache);
		if (getenv("PTLOOM_NO_LIFT"))
			dfs_set_forced_keys(d, true);
		if (o->dpor && o->reduction)
			dfs_set_dpor(d, true, DPOR_DEFAULT);
		s = dfs_strategy(d);
		if (o->hybrid && !nhs) {
			const int *mix = o->nmix ? o->mix : default_mix;
			int n = o->nmix ? o->nmix
					: (int)(sizeof(default_mix) /
						sizeof(default_mix[0]));

			/* the first sampler keeps the seed PCT always had */
			for (int k = 0; k < n && k < HYBRID_MIX_MAX; k++)
				if ((hs[nhs] = sampler_new_kind(
					     mix[k],
					     (o->cfg.seed ^ 0x9c7) + 0x51 * k,
					     3))) {
					sampler_set_coverage(hs[nhs],
							     r->coverage);
					nhs++;
				}
			if (!o->nmix) {
				hrr = sampler_new_kind(SAMPLER_RR,
						       o->cfg.seed ^ 0x4242, 3);
				hcov = sampler_new_kind(SAMPLER_COV,
							o->cfg.seed ^ 0x2424,
							3);
				if (hcov)
					sampler_set_coverage(hcov,
							     r->coverage);
				hlate = sampler_new_kind(SAMPLER_LATE,
							 o->cfg.seed ^ 0x1a7e,
							 3);
			}
		}
	} else {
		smp = sampler_new_kind(sampler_of(o->strategy), o->cfg.seed,
				       o->pct_depth);
		if (!smp)
			return -1;
		sampler_set_coverage(smp, r->coverage);
		s = sampler_strategy(smp);
	}
	r->verdict = VERDICT_PASS;
	if (smp && sampler_kind(smp) == SAMPLER_SURW && !profiled) {
		/* SURW weighs threads by their events: learn them from the
		 * default schedule (a run like any other) */
		struct strategy fs = { .pick = first_pick };
		struct run_result pr;
		int e = session_run(&o->cfg, &fs, &pr);

		if (e) {
			snprintf(r->error, sizeof(r->error),
				 "cannot start %s: %s", o->cfg.argv[0],
				 tracer_start_error(e));
			r->verdict = VERDICT_ERROR;
			goto out;
		}
		r->profile_runs++;
		profiled = true;
		add_coverage(r, &pr);
		if (pr.failure == FAIL_SPIN) {
			bool added = pr.spin_pc &&
				     add_point(r, pr.spin_pc, OP_SPIN);

			run_result_free(&pr);
			r->nspin_points += added;
			if (!added)
				r->nspin_points = MAX_SPIN_POINTS;
			sampler_free(smp);
			smp = NULL;
			profiled = false;
			r->restarts++;
			/* new points: another first run */
			have_first = check_first = false;
			goto restart;
		}
		sampler_profile(smp, pr.events, pr.nevents);
		if (pr.failure == FAIL_NONE || pr.failure == FAIL_DIVERGED ||
		    o->only_run) {
			run_result_free(&pr);
		} else if (pr.failure == FAIL_INTERNAL) {
			snprintf(r->error, sizeof(r->error), "%s", pr.message);
			r->verdict = VERDICT_ERROR;
			run_result_free(&pr);
			goto out;
		} else if (pr.failure == FAIL_INTERRUPTED) {
			run_result_free(&pr);
			r->verdict = VERDICT_INCOMPLETE;
			snprintf(r->error, sizeof(r->error), "interrupted");
			goto out;
		} else {
			r->fail = pr;
			r->fail_run = 0;
			r->verdict = VERDICT_FAIL;
			r->found_by = FOUND_SAMPLE;
			r->found_preemptions = pr.preemptions;
			goto out;
		}
	}
	for (;;) {
		if (o->cfg.interrupted && *o->cfg.interrupted) {
			r->verdict = VERDICT_INCOMPLETE;
			snprintf(r->error, sizeof(r->error), "interrupted");
			break;
		}
		if (clock_restart && o->clock_key) {
			/* a -j worker: its place in the serial order to the
			 * parent, which starts every worker again (unless a
			 * failure comes first); workers past it stop */
			uint64_t k = dfs_key(d);

			publish_key(o->clock_key, k);
			publish_key(o->best_key, k);
			r->stopped = true;
			break;
		}
		if (clock_restart) {
			/* the last dfs run read the clock and the search
			 * went on (no failure): what it pruned by keys
			 * without the clock is not known to be covered.
			 * Start again with the clock in every key. */
			clock_restart = false;
			check_first = have_first;
			o->cfg.key_no_clock = false;
			dfs_free(d);
			sampler_free(smp);
			d = NULL;
			smp = NULL;
			r->clock_restarts++;
			first_run = r->runs + 1;
			goto restart;
		}
		/* hybrid: every fourth run is a sample (hybrid_turn: fewer
		 * after 2,000), so a deep tree at
		 * a low bound cannot hide a bug reachable elsewhere; the
		 * verdict still needs the systematic search to finish.  When
		 * it has finished, samples go on until the runs are twice
		 * the systematic ones (bugs
		 * beyond the bound, like a strict alternation, need more
		 * preemptions than any bound can afford); the verdict is the
		 * finished search's, and a limit reached then is no longer
		 * a reason for INCOMPLETE */
		bool time_up = o->max_time > 0 && now() - t0 >= o->max_time;

		if (o->min_coverage > 0 && r->runs &&
		    coverage_ratio(r->coverage) >= o->min_coverage) {
			/* the level asked for: enough */
			r->coverage_reached = true;
			if (post)
				r->complete = true;
			break;
		}
		bool reserved = false; /* this run is in *shared_runs */

		if (post && o->shared_post && !time_up) {
			/* -j: twice the systematic runs of all workers, the
			 * samples taken by whichever worker is free */
			uint64_t want = 2 * __atomic_load_n(&o->shared_post[0],
							    __ATOMIC_SEQ_CST);

			if (o->shared_max && want > o->shared_max)
				want = o->shared_max;
			if (__atomic_fetch_add(o->shared_runs, 1,
					       __ATOMIC_SEQ_CST) < want) {
				reserved = true;
			} else {
				__atomic_sub_fetch(o->shared_runs, 1,
						   __ATOMIC_SEQ_CST);
				if (!__atomic_load_n(&o->shared_post[1],
						     __ATOMIC_SEQ_CST) ||
				    (o->best_key && dfs_key(d) > *o->best_key)) {
					r->complete = true;
					break;
				}
				/* another worker's search goes on and
				 * makes room */
				usleep(2000);
				continue;
			}
		} else if (post && (r->runs >= post_until || time_up) &&
			   !(o->min_coverage > 0 && !time_up &&
			     (!o->max_runs || r->runs < o->max_runs))) {
			r->complete = true;
			break;
		}
		/* from run 2,000 on, one run in 16 more is a sample of the
		 * newest-thread scan (late: a preemption to the thread created
		 * last, at each step in turn); before, the runs are as they
		 * were (every measured bug of bench/SEARCH.md and CORPUS.md is
		 * found within 2,000) */
		bool late_turn = d && hlate && profiled && r->runs >= 2000 &&
				 r->runs % 16 == 5;
		bool sample = d && nhs &&
			      (post || hybrid_turn(r->runs) || late_turn);
		/* the default mix gives samples 7, 23, 39, ... to round-robin
		 * (rr: strict alternations no walk finds in time) and 15,
		 * 31, ... to the coverage-guided sampler (cov); the first
		 * seven are the mix's (the late scan's samples not counted) */
		uint64_t others = r->samples - r->late_samples;
		bool rr_turn = sample && !late_turn && hrr && others % 16 == 7;
		bool cov_turn = sample && !late_turn && hcov &&
				others % 16 == 15;
		uint64_t mixed = others - r->rr_samples - r->cov_samples;
		struct sampler *h = !sample    ? NULL
				    : late_turn ? hlate
				    : rr_turn   ? hrr
				    : cov_turn  ? hcov
						: hs[mixed % (uint64_t)nhs];

		if (!sample && !d && o->only_run && r->runs >= 1)
			break;
		/* SURW's profile run counts as a run of -n (before, -n 1 made
		 * two); under -j each worker makes its own, beside the same
		 * samples as the serial run's */
		if (!sample && !d && o->max_runs &&
		    (o->max_runs <= r->profile_runs ||
		     r->runs * (o->stride ? o->stride : 1) +
				     (uint64_t)o->worker >=
			     o->max_runs - r->profile_runs))
			break;
		if (!post && ((o->shared_runs && o->shared_max &&
			       *o->shared_runs >= o->shared_max) ||
			      (!o->shared_runs && o->max_runs &&
			       r->runs + r->profile_runs >= o->max_runs) ||
			      (o->max_time > 0 && now() - t0 >= o->max_time))) {
			r->verdict = VERDICT_INCOMPLETE;
			break;
		}
		if (!sample && d && !dfs_next(d)) {
			if (nhs && !post) {
				post = true;
				if (searching) {
					searching = false;
					__atomic_sub_fetch(&o->shared_post[1],
							   1, __ATOMIC_SEQ_CST);
				}
				/* a shard after the first counts its bound-0
				 * runs once, not twice: every shard runs
				 * bound 0 and the merge counts it once, so
				 * the shards' runs add up to the serial
				 * search's (-j N equals -j 1) */
				uint64_t sys = r->runs - r->samples;
				uint64_t dup = o->nshards > 1 && o->shard > 0
						       ? r->bound0_runs
						       : 0;

				post_until = 2 * (sys - dup) + dup;
				if (post_until < r->runs)
					post_until = r->runs;
				if (o->max_runs && post_until > o->max_runs)
					post_until = o->max_runs;
				r->dfs_runs = r->runs;
				continue;
			}
			r->complete = true;
			break;
		}
		if (d && o->best_key && dfs_key(d) > *o->best_key) {
			/* another worker failed earlier in the serial order */
			r->stopped = true;
			break;
		}
		if (!d && o->best_sample &&
		    r->runs * (o->stride ? o->stride : 1) +
				    (uint64_t)o->worker >
			    *o->best_sample) {
			/* another worker failed at an earlier sample */
			r->stopped = true;
			break;
		}
		/* -j dfs: this run's place in the whole search's budget,
		 * taken before it runs (two workers that both saw room for
		 * one more run took both: -n 8 made 9) */
		bool counted = o->shared_runs &&
			       (o->shared_bound0 || !d || sample ||
				dfs_bound(d) > 0);

		if (counted && !post && o->shared_max &&
		    __atomic_fetch_add(o->shared_runs, 1, __ATOMIC_SEQ_CST) >=
			    o->shared_max) {
			__atomic_sub_fetch(o->shared_runs, 1, __ATOMIC_SEQ_CST);
			r->verdict = VERDICT_INCOMPLETE;
			break;
		}
		if (counted && !post && o->shared_max)
			reserved = true;
		uint64_t number = r->runs * (o->stride ? o->stride : 1) +
				  (uint64_t)o->worker;

		if (o->only_run)
			number = o->only_run - 1;
		if (smp)
			sampler_begin(smp, number, est_steps);
		if (sample)
			sampler_begin(h,
				      (late_turn  ? r->late_samples++
				       : rr_turn  ? r->rr_samples++
				       : cov_turn ? r->cov_samples++
						  : mixed / (uint64_t)nhs) *
						      (uint64_t)(o->nshards > 1
								 ? o->nshards
								 : 1) +
					      (uint64_t)o->shard,
				      est_steps);
		r->samples += sample;
		struct strategy hstrat = sample ? sampler_strategy(h) : s;
		struct run_result rr;
		int e = session_run(&o->cfg, &hstrat, &rr);

		if (!e && rr.failure == FAIL_INTERRUPTED &&
		    !(o->cfg.interrupted && *o->cfg.interrupted) &&
		    o->cfg.stop_wall > 0 && now() >= o->cfg.stop_wall) {
			/* stopped at the time bound: no run, not covered
			 * (a finished search's samples were extra) */
			run_result_free(&rr);
			if (post)
				r->complete = true;
			else
				r->verdict = VERDICT_INCOMPLETE;
			break;
		}
		if (!e && rr.seconds > r->longest_run)
			r->longest_run = rr.seconds;

		if (e && o->cfg.interrupted && *o->cfg.interrupted) {
			/* killed while starting: the interrupt, not the
			 * program, is why */
			r->verdict = VERDICT_INCOMPLETE;
			snprintf(r->error, sizeof(r->error), "interrupted");
			break;
		}
		if (e) {
			snprintf(r->error, sizeof(r->error),
				 "cannot start %s: %s", o->cfg.argv[0],
				 tracer_start_error(e));
			r->verdict = VERDICT_ERROR;
			break;
		}
		r->runs++;
		add_coverage(r, &rr);
		if (d && !sample && dfs_bound(d) == 0)
			r->bound0_runs++;
		if (counted && !reserved)
			__atomic_add_fetch(o->shared_runs, 1, __ATOMIC_RELAXED);
		if (counted && !sample && o->shared_post)
			__atomic_add_fetch(&o->shared_post[0], 1,
					   __ATOMIC_SEQ_CST);
		r->total_steps += rr.steps;
		r->total_stops += rr.stops;
		r->total_choices += rr.choices;
		r->total_state_keys += rr.state_keys;
		for (int k = 0; k < STOPK_N; k++)
			r->stop_kinds[k] += rr.stop_kinds[k];
		{
			/* a run's share, mixed: sums of any order agree */
			uint64_t h = rr.trace_hash, x = splitmix64(&h);

			r->trace_digest += x;
			if (d && !sample && dfs_bound(d) == 0)
				r->bound0_digest += x;
		}
		if (rr.agent_note[0] && !r->agent_note[0])
			snprintf(r->agent_note, sizeof(r->agent_note), "%s",
				 rr.agent_note);
		if (rr.outlived[0] && !r->outlived_runs++)
			snprintf(r->outlived, sizeof(r->outlived), "%s",
				 rr.outlived);
		if (rr.steps > est_steps)
			est_steps = rr.steps;
		if (d)
			r->bound = dfs_bound(d);
		if (d && !sample && rr.time_used && o->cfg.key_no_clock)
			clock_restart = true;
		/* a run the reduction cut short is no whole execution: its
		 * output would be a fragment */
		bool cut_short = d && !sample && rr.failure == FAIL_DIVERGED &&
				 dfs_pruned_run(d);

		if (o->output && rr.output_len && !cut_short)
			pass_output(o, rr.output, rr.output_len,
				    rr.output_total);
		if (sample && rr.failure == FAIL_DIVERGED) {
			run_result_free(&rr);
			continue;
		}
		if (cut_short) {
			check_first = false; /* the next run is another one */
			r->pruned++;
			run_result_free(&rr);
			progress(o, r, t0, d, false);
			continue;
		}
		char how[sizeof(r->error)] = "";

		if (d && rr.failure == FAIL_DIVERGED) {
			/* a large runtime, the JVM, whose threads depend on
			 * what ptloom does not control */
			snprintf(how, sizeof(how),
				 " did not follow the schedule prefix it was "
				 "given (%s)",
				 rr.message[0] ? rr.message : "diverged");
			not_repeated(r, how,
				     "nondeterminism it does not control");
			run_result_free(&rr);
			break;
		}
		if (d && !sample && rr.failure == FAIL_NONE &&
		    dfs_ended_short(d)) {
			/* it passed before reaching the edge it was given
			 * (`make` or `ninja` finding their targets made by
			 * an earlier run): that edge never ran, though the
			 * search would count it explored */
			not_repeated(r,
				     " ended before the schedule prefix it was "
				     "given",
				     "a file an earlier run left?");
			run_result_free(&rr);
			break;
		}
		if (d && !sample && rr.failure == FAIL_NONE && !have_first) {
			first_trace = rr.trace_hash;
			have_first = true;
		} else if (d && !sample && check_first) {
			check_first = false;
			if (rr.failure == FAIL_NONE &&
			    rr.trace_hash != first_trace) {
				/* the search begun again took the first run's
				 * decisions and the program did something else
				 * (`ninja` finding what the first run built):
				 * the new search explores another program */
				snprintf(how, sizeof(how),
					 ", the first of the search begun "
					 "again with the clock in its state "
					 "keys, did not repeat the first run "
					 "(trace %016llx, then %016llx)",
					 (unsigned long long)first_trace,
					 (unsigned long long)rr.trace_hash);
				not_repeated(r, how,
					     "a file an earlier run left?");
				run_result_free(&rr);
				break;
			}
		}
		if (rr.failure == FAIL_SPIN) {
			/* a spin without scheduling points: make its PC a
			 * yield point and start again, so every run stays a
			 * pure function of its schedule */
			bool added = rr.spin_pc &&
				     add_point(r, rr.spin_pc, OP_SPIN);

			run_result_free(&rr);
			r->nspin_points += added;
			if (!added)
				r->nspin_points = MAX_SPIN_POINTS;
			dfs_free(d);
			sampler_free(smp);
			d = NULL;
			smp = NULL;
			r->restarts++;
			first_run = r->runs + 1;
			/* new points: another first run */
			have_first = check_first = false;
			goto restart;
		}
		if (rr.failure == FAIL_HANG &&
		    !(fastest >= 0 && fastest * 4 <= o->cfg.timeout)) {
			/* a hang is this schedule running on where another
			 * finished in a quarter of --timeout; with no such run
			 * the program may just be long: not covered */
			rr.failure = FAIL_SLOW;
		}
		if (rr.failure == FAIL_NONE || rr.failure == FAIL_CRASH ||
		    rr.failure == FAIL_EXIT || rr.failure == FAIL_DEADLOCK)
			if (fastest < 0 || rr.seconds < fastest)
				fastest = rr.seconds;
		if (rr.failure == FAIL_INTERRUPTED) {
			run_result_free(&rr);
			r->verdict = VERDICT_INCOMPLETE;
			snprintf(r->error, sizeof(r->error), "interrupted");
			break;
		}
		if (rr.failure == FAIL_INTERNAL) {
			snprintf(r->error, sizeof(r->error), "%s", rr.message);
			r->verdict = VERDICT_ERROR;
			run_result_free(&rr);
			break;
		}
		if (rr.failure == FAIL_KILLED) {
			/* not the program's doing: nothing to save or
			 * report as a bug */
			snprintf(r->error, sizeof(r->error),
				 "run %llu was killed from outside ptloom "
				 "(SIGKILL); no failure found",
				 (unsigned long long)r->runs);
			r->killed = true;
			r->verdict = VERDICT_INCOMPLETE;
			run_result_free(&rr);
			break;
		}
		r->shared_vm_runs += rr.shared_vm > 0;
		r->shared_apart_runs += rr.shared_apart > 0;
		r->watch_capped_runs += rr.watch_capped;
		r->py_shared_runs += rr.py_shared > 0;
		if (rr.capped && !sample) {
			/* a choice had more alternatives than a point
			 * offers: the others were never tried */
			r->capped_runs++;
			if (rr.capped_most > r->capped_most)
				r->capped_most = rr.capped_most;
		}
		if ((rr.failure == FAIL_STEPS || rr.failure == FAIL_SLOW) &&
		    (r->runs > first_run || sample || rr.preemptions)) {
			/* this run is too long for --max-steps, no proof
			 * of a livelock, or too slow for --timeout while
			 * still running: it is not covered, go on */
			if (rr.failure == FAIL_SLOW && !r->slow_runs++)
				snprintf(r->slow_why, sizeof(r->slow_why),
					 "%s", rr.kernel_wait);
			else if (rr.failure != FAIL_SLOW)
				r->steps_runs++;
			run_result_free(&rr);
			progress(o, r, t0, d, false);
			continue;
		}
		if ((rr.failure == FAIL_HANG || rr.failure == FAIL_STEPS ||
		     rr.failure == FAIL_SLOW) &&
		    r->runs == first_run && !rr.preemptions && !sample) {
			/* the very first, default schedule already exceeds a
			 * per-run limit: the program is long under ptloom, not
			 * known to hang; say so rather than report a bug */
			if (rr.failure == FAIL_SLOW && rr.message[0])
				snprintf(r->error, sizeof(r->error),
					 "the first run, without any "
					 "preemption: %s", rr.message);
			else
				snprintf(r->error, sizeof(r->error),
					 "the first run, without any "
					 "preemption, exceeded %s; raise it for "
					 "this program",
					 rr.failure == FAIL_STEPS
						 ? "--max-steps"
						 : "--timeout");
			r->too_long = true;
			r->verdict = VERDICT_INCOMPLETE;
			run_result_free(&rr);
			break;
		}
		if (rr.failure != FAIL_NONE) {
			r->fail = rr;
			r->fail_run = number;
			publish_key(o->best_sample, number);
			r->found_by = sample ? FOUND_HYBRID
				      : d    ? FOUND_DFS
					     : FOUND_SAMPLE;
			r->found_sampler = sample ? sampler_kind(h)
					   : smp  ? sampler_kind(smp)
						  : -1;
			r->found_preemptions = rr.preemptions;
			r->verdict = VERDICT_FAIL;
			if (d) {
				r->fail_key = dfs_key(d);
				publish_key(o->best_key, r->fail_key);
			}
			break;
		}
		if (!sample && d && !profiled) {
			/* the first dfs run is the default schedule: the
			 * profile of the hybrid's SURW samplers */
			for (int k = 0; k < nhs; k++)
				sampler_profile(hs[k], rr.events, rr.nevents);
			if (hlate)
				sampler_profile(hlate, rr.events, rr.nevents);
			profiled = true;
		}
		if (rr.child_crash_sig && note_child_crash(r, &rr, number)) {
			progress(o, r, t0, d, false);
			continue; /* kept as the crash's run */
		}
		if (r->have_pass)
			run_result_free(&r->pass);
		r->pass = rr;
		r->have_pass = true;
		progress(o, r, t0, d, false);
	}
	if (have_disc_fail && (r->verdict == VERDICT_PASS ||
			       r->verdict == VERDICT_INCOMPLETE) &&
	    !r->stopped && !(o->cfg.interrupted && *o->cfg.interrupted)) {
		/*
		 * A sampled discovery run failed where the bounded search
		 * did not (it needs more preemptions, or the budget ran out):
		 * replay it with the points it ran with, and report it.
		 */
		struct session_config c = o->cfg;
		struct replay_strategy rs;
		struct run_result rr;

		c.user_points = disc_points;
		c.nuser_points = ndisc_points;
		c.spin_ms = 0;
		/* a failure found: replayed past --max-time's bound too */
		c.stop_wall = o0->cfg.stop_wall;
		replay_init(&rs, disc_fail.decisions, disc_fail.ndecisions,
			    true);
		struct strategy st = replay_strategy(&rs);

		if (session_run(&c, &st, &rr) == 0) {
			r->runs++;
			if (rr.failure != FAIL_NONE &&
			    rr.failure != FAIL_DIVERGED &&
			    rr.failure != FAIL_INTERNAL &&
			    rr.failure != FAIL_INTERRUPTED &&
			    fingerprint_equal(&rr, &disc_fail)) {
				if (r->verdict == VERDICT_FAIL)
					run_result_free(&r->fail);
				r->fail = rr;
				r->fail_run = r->runs - 1;
				/* every shard finds it; after any systematic
				 * failure in the serial order */
				r->fail_key = UINT64_MAX - 1;
				r->verdict = VERDICT_FAIL;
				r->found_by = FOUND_DISCOVERY;
				r->found_preemptions = rr.preemptions;
				r->complete = false;
				/* the schedule's points are the ones it used */
				free(r->points);
				r->points = disc_points;
				r->npoints = ndisc_points;
				disc_points = NULL;
			} else {
				run_result_free(&rr);
			}
		}
	}
out:
	if (searching) /* a worker that ends before its search does */
		__atomic_sub_fetch(&o->shared_post[1], 1, __ATOMIC_SEQ_CST);
	if (have_disc_fail)
		run_result_free(&disc_fail);
	free(disc_points);
	runs_not_covered(o, r, d != NULL);
	/* data on a thread's stack reached another thread, and no
	 * discovery run observed its owner's stack-relative accesses to it
	 * (the discovery ended first): their races may be missing */
	if (r->discovery_stack_unobserved && !r->too_long && !r->killed &&
	    !r->nondeterministic &&
	    (r->verdict == VERDICT_PASS || r->verdict == VERDICT_INCOMPLETE)) {
		snprintf(r->error, sizeof(r->error),
			 "%llu run%s: race discovery saw data on a thread's "
			 "stack reach another thread, but ended before it "
			 "observed the owner's stack-relative accesses, so "
			 "the race points may be incomplete; no failure found",
			 (unsigned long long)r->runs, r->runs == 1 ? "" : "s");
		r->too_long = true;
		r->verdict = VERDICT_INCOMPLETE;
	}
	if (disc_time_up && !r->too_long && !r->killed &&
	    !r->nondeterministic && r->verdict == VERDICT_INCOMPLETE) {
		/* say which limit: "0 runs, bound 0 not exhausted" alone
		 * hid that race discovery's runs took the time */
		snprintf(r->error, sizeof(r->error),
			 "%llu run%s, bound %d not exhausted: --max-time (%g s) "
			 "ran out after race discovery's %d runs (%.1f s; "
			 "--points sync skips it); no failure found",
			 (unsigned long long)r->runs, r->runs == 1 ? "" : "s",
			 r->bound, o->max_time, disc_time_up,
			 r->discovery_seconds);
		r->too_long = true;
	}
	if (r->discovery_limit && !r->too_long && !r->killed &&
	    !r->nondeterministic &&
	    (r->verdict == VERDICT_PASS || r->verdict == VERDICT_INCOMPLETE)) {
		/* its race points may be missing: not covered, no pass */
		snprintf(r->error, sizeof(r->error),
			 "%s, so the race points may be incomplete; %s; no "
			 "failure found",
			 disc_why,
			 r->discovery_limit == FAIL_STEPS
				 ? "raise --max-steps"
				 : "raise --timeout (or --points sync)");
		r->too_long = true;
		r->verdict = VERDICT_INCOMPLETE;
	}
	r->runs += r->profile_runs;
	progress(o, r, t0, d, true);
	r->seconds = now() - t0;
	if (d && r->verdict == VERDICT_INCOMPLETE)
		r->complete = false;
	if (cp) {
		r->checkpoint_forks = checkpoint_forks(cp);
		if (checkpoint_note(cp))
			snprintf(r->checkpoint_note, sizeof(r->checkpoint_note),
				 "%s", checkpoint_note(cp));
		checkpoint_free(cp);
	}
	dfs_free(d);
	sampler_free(smp);
	for (int k = 0; k < nhs; k++)
		sampler_free(hs[k]);
	sampler_free(hrr);
	sampler_free(hcov);
	sampler_free(hlate);
	return 0;
}

void explore_result_free(struct explore_result *r)
{
	coverage_free(r->coverage);
	r->coverage = NULL;
	free(r->points);
	if (r->verdict == VERDICT_FAIL)
		run_result_free(&r->fail);
	if (r->have_pass)
		run_result_free(&r->pass);
	for (int i = 0; i < r->ncrashes; i++) {
		run_result_free(&r->crashes[i].run);
		free(r->crashes[i].points);
	}
	r->ncrashes = 0;
}


/* A worker's end: its result to the parent, saying which signal
 * interrupted it (collect_workers tells ptloom's own from another's). */
static void worker_exit(int fd, const struct explore_opts *o,
			struct explore_result *wr)
{
	int sig = o->cfg.interrupted ? *o->cfg.interrupted : 0;

	/* (an error on the way out, a wait the signal cut short, is the
	 * signal's too) */
	if (sig && (interrupted_result(wr) || wr->verdict == VERDICT_ERROR)) {
		wr->verdict = VERDICT_INCOMPLETE;
		snprintf(wr->error, sizeof(wr->error), "interrupted by SIG%s",
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	}
	FILE *f = fdopen(fd, "w");

	if (f) {
		put_result(f, wr);
		fclose(f);
	}
	_exit(0);
}

/*
 * -j N for the samplers: worker k runs samples k, k+N, k+2N, ... (each a
 * pure function of the seed and its number) and reports the first failing
 * number with the points it used; the parent runs that sample again to
 * have the whole result.  A failing worker lowers the shared best sample
 * (explore_opts.best_sample) and a worker stops once its next sample is
 * past it, so the result is the first failing sample in the seed's order,
 * whichever worker met one first in time.  Systematic search stays
 * serial.
 */
static int explore_parallel(const struct explore_opts *o,
			    struct explore_result *r)
{
	int jobs = o->jobs, fds[64][2];
	pid_t pids[64];
	cpu_set_t set;
	int cpus[64], ncpu = 0;
	pid_t parent = getpid();
	double t0 = now();
	struct explore_shared *sh = o->progress ? shared_new() : NULL;
	volatile uint64_t *best = mmap(NULL, sizeof(*best),
				       PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (best == MAP_FAILED)
		best = NULL; /* the first failure in worker order wins */
	else
		*best = UINT64_MAX;
	if (jobs > 64)
		jobs = 64;
	/* the CPUs ptloom was started with (it has pinned itself to one of
	 * them since: session_config.cpus), else where it runs now */
	set = o->cfg.cpus;
	if (!CPU_COUNT(&set) && sched_getaffinity(0, sizeof(set), &set))
		CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE && ncpu < 64; i++)
		if (CPU_ISSET(i, &set))
			cpus[ncpu++] = i;
	for (int k = 0; k < jobs; k++) {
		if (pipe(fds[k]) || (pids[k] = fork()) < 0) {
			/* serially, after the workers started so far */
			for (int j = 0; j < k; j++) {
				kill(pids[j], SIGKILL);
				waitpid(pids[j], NULL, 0);
				close(fds[j][0]);
			}
			end_progress(o, sh);
			if (best)
				munmap((void *)best, sizeof(*best));
			struct explore_opts so = *o;

			so.discovered = NULL; /* the caller's to free */
			return explore_serial(&so, r);
		}
		if (pids[k] == 0) {
			struct explore_opts w = *o;
			struct explore_result wr;
			cpu_set_t one;

			/* a worker never outlives ptloom */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			close(fds[k][0]);
			tracer_forget_tids(k + 1); /* ids of its own runs */
			w.jobs = 1;
			w.min_coverage = 0; /* the union is the parent's */
			/* inside a shard (worker, stride) of its own */
			w.worker = o->worker + k * (o->stride ? o->stride : 1);
			w.stride = jobs * (o->stride ? o->stride : 1);
			w.progress = false;
			w.tally = sh ? &sh->w[k] : NULL;
			w.shared = sh;
			w.best_sample = best;
			if (ncpu) {
				w.cfg.cpu = cpus[k % ncpu];
				CPU_ZERO(&one);
				CPU_SET(w.cfg.cpu, &one);
				sched_setaffinity(0, sizeof(one), &one);
			}
			explore_serial(&w, &wr);
			worker_exit(fds[k][1], o, &wr);
		}
		close(fds[k][1]);
	}
	memset(r, 0, sizeof(*r));
	r->verdict = VERDICT_PASS;
	r->coverage = coverage_new();
	uint64_t fail_run = UINT64_MAX;
	struct user_point *fail_points = NULL;
	size_t nfail_points = 0;
	int32_t *fail_ids = NULL; /* the failing run's, in its worker */
	int nfail_ids = 0;
	struct workers *ws = calloc(1, sizeof(*ws));
	char why[320] = "";

	if (!ws) {
		for (int k = 0; k < jobs; k++)
			kill(pids[k], SIGKILL);
		snprintf(r->error, sizeof(r->error), "out of memory");
		r->verdict = VERDICT_ERROR;
		jobs = 0;
	} else {
		ws->n = jobs;
		for (int k = 0; k < jobs; k++) {
			ws->pids[k] = pids[k];
			ws->fds[k] = fds[k][0];
		}
		collect_workers(o, sh, ws, best == NULL, t0, why,
				sizeof(why));
	}
	struct explore_result *hid = calloc(1, sizeof(*hid)); /* crashes */

	for (int k = 0; k < jobs; k++) {
		struct explore_result w = ws->w[k];

		memset(&ws->w[k], 0, sizeof(ws->w[k]));
		if (hid)
			merge_crashes(hid, &w);
		for (int i = 0; i < w.ncrashes; i++) { /* no memory */
			run_result_free(&w.crashes[i].run);
			free(w.crashes[i].points);
		}
		w.ncrashes = 0;
		if (ws->ok[k]) {
			coverage_add(r->coverage, w.coverage);
			coverage_free(w.coverage);
			w.coverage = NULL;
			r->runs += w.runs;
			add_totals(r, &w);
			if (w.verdict == VERDICT_FAIL && w.fail_run < fail_run) {
				fail_run = w.fail_run;
				free(fail_points);
				fail_points = w.points;
				nfail_points = w.npoints;
				w.points = NULL;
				free(fail_ids);
				fail_ids = w.fail.ids;
				nfail_ids = w.fail.nids;
				w.fail.ids = NULL;
			} else {
				if (w.verdict == VERDICT_INCOMPLETE &&
				    r->verdict == VERDICT_PASS)
					r->verdict = VERDICT_INCOMPLETE;
				if (w.verdict == VERDICT_ERROR)
					r->verdict = VERDICT_ERROR;
			}
			free(w.points);
			free(w.fail.decisions);
			free(w.fail.ids);
		} else if (r->verdict == VERDICT_PASS &&
			   fail_run == UINT64_MAX && !ws->told[k]) {
			r->verdict = VERDICT_ERROR;
			snprintf(r->error, sizeof(r->error),
				 "a parallel worker failed");
		}
	}
	for (int k = 0; k < jobs; k++)
		if (!ws->reaped[k])
			while (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR)
				;
	free(ws);
	end_progress(o, sh);
	if (best)
		munmap((void *)best, sizeof(*best));
	if (why[0] && fail_run == UINT64_MAX) {
		/* a worker killed from outside: not the program's doing,
		 * and what it would have run is unknown */
		r->verdict = VERDICT_INCOMPLETE;
		r->killed = true;
		snprintf(r->error, sizeof(r->error), "%s", why);
	}
	if (fail_run == UINT64_MAX) {
		free(fail_points);
		free(fail_ids);
		if (hid)
			merge_crashes(r, hid);
		free(hid);
		return 0;
	}
	unsigned filters = r->filters;
	/* the failing sample once more, here, for its whole result */
	struct explore_opts one = *o;

	one.jobs = 1;
	one.only_run = fail_run + 1;
	one.cfg.user_points = fail_points;
	one.cfg.nuser_points = nfail_points;
	/* with the ids it had there: a program that reads them fails
	 * here as it did there */
	one.cfg.ids = fail_ids;
	one.cfg.nids = nfail_ids;
	one.cfg.points &= ~POINTS_RACES;
	uint64_t total = r->runs;
	struct coverage *cov = r->coverage;
	int e = explore_serial(&one, r);

	coverage_add(cov, r->coverage);
	coverage_free(r->coverage);
	r->coverage = cov;
	r->runs = total;
	r->fail_run = fail_run;
	r->filters += filters;
	free(fail_points);
	free(fail_ids);
	if (hid)
		merge_crashes(r, hid);
	free(hid);
	return e;
}

/* A one-line string for get_line (a newline in it becomes a space). */
static void put_line(FILE *f, const char *str)
{
	for (const char *p = str; *p; p++)
		fputc(*p == '\n' ? ' ' : *p, f);
	fputc('\n', f);
}

static bool get_line(FILE *f, char *buf, size_t len)
{
	if (!fgets(buf, (int)len, f))
		return false;
	size_t n = strcspn(buf, "\n");

	if (!buf[n]) { /* longer than the buffer: the rest dropped */
		int ch;

		while ((ch = fgetc(f)) != EOF && ch != '\n')
			;
	}
	buf[n] = 0;
	return true;
}

/* The crashes a worker reports (put_result), read into w->crashes: each
 * with its first run's decisions and points (child_crash.points). */
static bool get_crashes(FILE *f, struct explore_result *w)
{
	int n;

	if (fscanf(f, " crashes %d", &n) != 1 || n < 0 ||
	    n > CHILD_CRASH_MAX || fgetc(f) != '\n')
		return false;
	for (int i = 0; i < n; i++) {
		struct child_crash *c = &w->crashes[w->ncrashes];
		unsigned long long runs, first;
		size_t ndec, np;

		memset(c, 0, sizeof(*c));
		if (fscanf(f, "%d %llu %llu %zu %zu", &c->signal, &runs, &first,
			   &ndec, &np) != 5 ||
		    ndec > (1u << 26) || np > (1u << 20) || fgetc(f) != '\n')
			return false;
		c->runs = runs;
		c->first_run = first;
		c->run.decisions = calloc(ndec + 1, sizeof(struct decision));
		c->points = calloc(np + 1, sizeof(struct user_point));
		w->ncrashes++; /* owned from here: explore_result_free */
		if (!c->run.decisions || !c->points ||
		    !get_line(f, c->process, sizeof(c->process)) ||
		    !get_line(f, c->label, sizeof(c->label)) ||
		    !get_line(f, c->where, sizeof(c->where)))
			return false;
		for (size_t k = 0; k < ndec; k++) {
			unsigned st, kd, to, th, ix, na;

			if (fscanf(f, "%u %u %u %u %u %u", &st, &kd, &to, &th,
				   &ix, &na) != 6)
				return false;
			c->run.decisions[k] = (struct decision){
				st, (uint8_t)kd, (uint8_t)to, (uint16_t)th,
				(uint16_t)ix, (uint16_t)na
			};
		}
		c->run.ndecisions = ndec;
		for (size_t k = 0; k < np; k++) {
			unsigned long long a;
			unsigned kind;

			if (fscanf(f, "%llx %u", &a, &kind) != 2)
				return false;
			c->points[k] = (struct user_point){ a, (uint8_t)kind };
		}
		c->npoints = np;
		if (fgetc(f) != '\n')
			return false;
	}
	return true;
}

/*
 * Worker crashes into the parent's result (-j): the same process and
 * signal add up their runs and keep the first run in the serial order
 * (the lowest number), so the warning and its saved schedule do not depend
 * on -j.  Moves what it keeps out of w.
 */
static void merge_crashes(struct explore_result *r, struct explore_result *w)
{
	for (int i = 0; i < w->ncrashes; i++) {
		struct child_crash *c = &w->crashes[i], *m = NULL;

		for (int k = 0; k < r->ncrashes && !m; k++)
			if (r->crashes[k].signal == c->signal &&
			    !strcmp(r->crashes[k].process, c->process))
				m = &r->crashes[k];
		if (m) {
			uint64_t runs = m->runs + c->runs;

			if (c->first_run < m->first_run) {
				struct child_crash t = *m;

				*m = *c;
				*c = t;
			}
			m->runs = runs;
		} else if (r->ncrashes < CHILD_CRASH_MAX) {
			r->crashes[r->ncrashes++] = *c;
			memset(c, 0, sizeof(*c));
		}
	}
	/* what was not kept */
	for (int i = 0; i < w->ncrashes; i++) {
		run_result_free(&w->crashes[i].run);
		free(w->crashes[i].points);
	}
	w->ncrashes = 0;
}

/* One worker's result, as a worker writes it for the parent. */
static void put_result(FILE *f, const struct explore_result *wr)
{
	const struct run_result *fr = &wr->fail;
	bool fail = wr->verdict == VERDICT_FAIL;

	fprintf(f, "%d %llu %llu %d %d %llu %llu %d %u %zu %zu %u %llu %d %u "
		   "%llu %llu %llu %llu %llu %llu\n",
		wr->verdict, (unsigned long long)wr->runs,
		(unsigned long long)wr->bound0_runs, wr->complete, wr->bound,
		(unsigned long long)wr->fail_key,
		(unsigned long long)wr->fail_run, wr->found_by,
		wr->found_preemptions, fail ? fr->ndecisions : 0, wr->npoints,
		tracer_filters_installed(),
		(unsigned long long)wr->pruned, wr->stopped,
		wr->checkpoint_forks, (unsigned long long)wr->total_steps,
		(unsigned long long)wr->total_stops,
		(unsigned long long)wr->total_choices,
		(unsigned long long)wr->total_state_keys,
		(unsigned long long)wr->trace_digest,
		(unsigned long long)wr->bound0_digest);
	for (int i = 0; i < STOPK_N; i++)
		fprintf(f, "%llu%c", (unsigned long long)wr->stop_kinds[i],
			i + 1 < STOPK_N ? ' ' : '\n');
	fprintf(f, "%s\n", wr->error);
	fprintf(f, "%llu %s\n", (unsigned long long)wr->outlived_runs,
		wr->outlived);
	fprintf(f, "%s\n", wr->agent_note);
	/* the runs not covered, for runs_not_covered() over them all */
	fprintf(f, "%llu %llu %llu %u %llu %llu %llu %llu\n",
		(unsigned long long)wr->steps_runs,
		(unsigned long long)wr->slow_runs,
		(unsigned long long)wr->capped_runs, wr->capped_most,
		(unsigned long long)wr->shared_vm_runs,
		(unsigned long long)wr->shared_apart_runs,
		(unsigned long long)wr->watch_capped_runs,
		(unsigned long long)wr->py_shared_runs);
	put_line(f, wr->slow_why);
	for (size_t i = 0; fail && i < fr->ndecisions; i++) {
		const struct decision *c = &fr->decisions[i];

		fprintf(f, "%u %u %u %u %u %u\n", c->step, c->kind, c->timeout,
			c->thread, c->index, c->nalts);
	}
	for (size_t i = 0; i < wr->npoints; i++)
		fprintf(f, "%llx %u\n", (unsigned long long)wr->points[i].addr,
			wr->points[i].kind);
	/* the failing run's ids, which the parent's run of it asks for */
	fprintf(f, "ids %d", fail ? fr->nids : 0);
	for (int i = 0; fail && i < fr->nids; i++)
		fprintf(f, " %d", (int)fr->ids[i]);
	fputc('\n', f);
	coverage_put(f, wr->coverage);
	/* the crashes the command's exit status hid: each with its first
	 * run's decisions and the points that run had */
	fprintf(f, "crashes %d\n", wr->ncrashes);
	for (int i = 0; i < wr->ncrashes; i++) {
		const struct child_crash *c = &wr->crashes[i];

		fprintf(f, "%d %llu %llu %zu %zu\n", c->signal,
			(unsigned long long)c->runs,
			(unsigned long long)c->first_run, c->run.ndecisions,
			wr->npoints);
		put_line(f, c->process);
		put_line(f, c->label);
		put_line(f, c->where);
		for (size_t k = 0; k < c->run.ndecisions; k++) {
			const struct decision *d = &c->run.decisions[k];

			fprintf(f, "%u %u %u %u %u %u\n", d->step, d->kind,
				d->timeout, d->thread, d->index, d->nalts);
		}
		for (size_t k = 0; k < wr->npoints; k++)
			fprintf(f, "%llx %u\n",
				(unsigned long long)wr->points[k].addr,
				wr->points[k].kind);
	}
}

/* The parent's copy of a worker's result; fail.decisions only. */
static bool get_result(FILE *f, struct explore_result *w)
{
	int complete, stopped;
	unsigned long long runs, b0, key, frun, pruned, steps, stops, choices,
		keys, dig, dig0;
	size_t ndec, np;

	memset(w, 0, sizeof(*w));
	if (!f || fscanf(f, "%d %llu %llu %d %d %llu %llu %d %u %zu %zu %u "
			    "%llu %d %u %llu %llu %llu %llu %llu %llu",
			 &w->verdict, &runs, &b0, &complete, &w->bound, &key,
			 &frun, &w->found_by, &w->found_preemptions, &ndec, &np,
			 &w->filters, &pruned, &stopped, &w->checkpoint_forks,
			 &steps, &stops, &choices, &keys, &dig, &dig0) != 21 ||
	    ndec > (1u << 26) || np > (1u << 20))
		return false;
	w->runs = runs;
	w->bound0_runs = b0;
	w->complete = complete;
	w->fail_key = key;
	w->fail_run = frun;
	w->pruned = pruned;
	w->stopped = stopped;
	w->total_steps = steps;
	w->total_stops = stops;
	w->total_choices = choices;
	w->total_state_keys = keys;
	w->trace_digest = dig;
	w->bound0_digest = dig0;
	for (int i = 0; i < STOPK_N; i++) {
		unsigned long long v;

		if (fscanf(f, "%llu", &v) != 1)
			return false;
		w->stop_kinds[i] = v;
	}
	if (fgetc(f) != '\n' || !fgets(w->error, sizeof(w->error), f))
		return false;
	w->error[strcspn(w->error, "\n")] = 0;
	unsigned long long outl;
	char line[256];

	if (fscanf(f, "%llu", &outl) != 1 || fgetc(f) != ' ' ||
	    !fgets(line, sizeof(line), f))
		return false;
	line[strcspn(line, "\n")] = 0;
	w->outlived_runs = outl;
	snprintf(w->outlived, sizeof(w->outlived), "%s", line);
	if (!fgets(line, sizeof(line), f))
		return false;
	line[strcspn(line, "\n")] = 0;
	snprintf(w->agent_note, sizeof(w->agent_note), "%s", line);
	unsigned long long nc[7];

	if (fscanf(f, "%llu %llu %llu %u %llu %llu %llu %llu", &nc[0], &nc[1],
		   &nc[2], &w->capped_most, &nc[3], &nc[4], &nc[5],
		   &nc[6]) != 8 ||
	    fgetc(f) != '\n' || !fgets(w->slow_why, sizeof(w->slow_why), f))
		return false;
	w->slow_why[strcspn(w->slow_why, "\n")] = 0;
	w->steps_runs = nc[0];
	w->slow_runs = nc[1];
	w->capped_runs = nc[2];
	w->shared_vm_runs = nc[3];
	w->shared_apart_runs = nc[4];
	w->watch_capped_runs = nc[5];
	w->py_shared_runs = nc[6];
	w->fail.decisions = calloc(ndec + 1, sizeof(struct decision));
	w->points = calloc(np + 1, sizeof(struct user_point));
	if (!w->fail.decisions || !w->points)
		return false;
	for (size_t i = 0; i < ndec; i++) {
		unsigned st, k, to, th, ix, na;

		if (fscanf(f, "%u %u %u %u %u %u", &st, &k, &to, &th, &ix,
			   &na) != 6)
			return false;
		w->fail.decisions[i] = (struct decision){
			st, (uint8_t)k, (uint8_t)to, (uint16_t)th, (uint16_t)ix,
			(uint16_t)na
		};
	}
	w->fail.ndecisions = ndec;
	for (size_t i = 0; i < np; i++) {
		unsigned long long a;
		unsigned kind;

		if (fscanf(f, "%llx %u", &a, &kind) != 2)
			return false;
		w->points[i] = (struct user_point){ a, (uint8_t)kind };
	}
	w->npoints = np;
	int nids;

	if (fscanf(f, " ids %d", &nids) != 1 || nids < 0 || nids > 65536 ||
	    !(w->fail.ids = calloc((size_t)nids + 1, sizeof(*w->fail.ids))))
		return false;
	for (int i = 0; i < nids; i++)
		if (fscanf(f, "%d", &w->fail.ids[i]) != 1)
			return false;
	w->fail.nids = nids;
	w->coverage = coverage_new();
	return w->coverage && coverage_get(f, w->coverage) == 0 &&
	       get_crashes(f, w);
}

/*
 * -j N for dfs: N shards of the search (dfs_set_shard) in N pinned
 * workers.  The verdict, the set and number of systematic schedules and
 * the first failure in the serial order (bound, then bound-1 item) are
 * those of the serial search; bound 0, which every shard repeats, is
 * counted once.  A worker that finds a failure lowers the shared key,
 * and every worker past it stops.  The parent then replays the winning
 * schedule once, here, for its whole result.
 */
static int explore_dfs_parallel(const struct explore_opts *o,
				struct explore_result *r);

/*
 * -j dfs, after a run read the virtual clock: the whole search again with
 * the clock in every state key and a new shared cache; the runs so far
 * count, as in a serial search that starts again, and -n and --max-time
 * are the budgets of both together.  r holds the first search's result
 * (a PASS, incomplete), which took `spent` seconds.
 */
static int parallel_again(const struct explore_opts *o,
			  struct explore_result *r, double spent)
{
	struct explore_result first = *r;
	struct explore_opts again = *o;

	again.key_clock = true;
	if ((o->max_runs && first.runs >= o->max_runs) ||
	    (o->max_time > 0 && spent >= o->max_time)) {
		/* a budget is spent: not covered */
		r->verdict = VERDICT_INCOMPLETE;
		r->complete = false;
		r->clock_restarts++;
		return 0;
	}
	if (o->max_runs)
		again.max_runs = o->max_runs - first.runs;
	if (o->max_time > 0)
		again.max_time = o->max_time - spent;
	int e = explore_dfs_parallel(&again, r);

	r->runs += first.runs;
	r->pruned += first.pruned;
	add_totals(r, &first);
	r->total_state_keys += first.total_state_keys;
	r->trace_digest += first.trace_digest;
	r->clock_restarts++;
	if (r->coverage)
		coverage_add(r->coverage, first.coverage);
	coverage_free(first.coverage);
	merge_crashes(r, &first);
	return e;
}

static int explore_dfs_parallel(const struct explore_opts *o,
				struct explore_result *r)
{
	int jobs = o->jobs > 64 ? 64 : o->jobs, fds[64][2];
	pid_t pids[64];
	cpu_set_t set;
	int cpus[64], ncpu = 0;
	pid_t parent = getpid();
	double t0 = now();
	struct explore_shared *sh = NULL;
	struct workers *wk = NULL;
	bool again = false; /* parallel_again */
	/* [0]: the best failure key, [1]: the runs (shared_runs), [2]: the
	 * first run in the serial order that read the clock (clock_key),
	 * [3], [4]: shared_post */
	volatile uint64_t *best = mmap(NULL, 5 * sizeof(*best),
				       PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (best == MAP_FAILED) {
		struct explore_opts so = *o;

		so.discovered = NULL; /* the caller's to free */
		return explore_serial(&so, r);
	}
	best[0] = best[2] = UINT64_MAX;
	best[4] = (uint64_t)jobs;
	/* one state cache for every worker (dfs_shared_cache_new): 2^22
	 * entries, 160 MiB of address space touched as it fills; without
	 * it the workers explore uncached */
	struct dfs_shared_cache *cache =
		o->state_cache && !o->dpor && !o->delay_bound
			? dfs_shared_cache_new((size_t)1 << 22)
			: NULL;
	if (o->progress)
		sh = shared_new();
	/* the CPUs ptloom was started with (it has pinned itself to one of
	 * them since: session_config.cpus), else where it runs now */
	set = o->cfg.cpus;
	if (!CPU_COUNT(&set) && sched_getaffinity(0, sizeof(set), &set))
		CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE && ncpu < 64; i++)
		if (CPU_ISSET(i, &set))
			cpus[ncpu++] = i;
	for (int k = 0; k < jobs; k++) {
		if (pipe2(fds[k], O_CLOEXEC) || (pids[k] = fork()) < 0) {
			snprintf(r->error, sizeof(r->error),
				 "cannot start a worker: %s", strerror(errno));
			for (int j = 0; j < k; j++)
				kill(pids[j], SIGKILL);
			jobs = k;
			r->verdict = VERDICT_ERROR;
			goto out_reap;
		}
		if (pids[k] == 0) {
			struct explore_opts w = *o;
			struct explore_result wr;

			/* a worker never outlives ptloom */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			close(fds[k][0]);
			tracer_forget_tids(k + 1); /* ids of its own runs */
			w.jobs = 1;
			w.min_coverage = 0; /* the union is the parent's */
			w.shard = o->shard * jobs + k;
			w.nshards = (o->nshards > 1 ? o->nshards : 1) * jobs;
			w.best_key = best;
			w.shared_cache = cache;
			w.clock_key = cache ? best + 2 : NULL;
			w.shared_runs = best + 1;
			w.shared_post = o->hybrid ? best + 3 : NULL;
			w.shared_max = o->max_runs;
			w.shared_bound0 = k == 0;
			w.progress = false;
			w.tally = sh ? &sh->w[k] : NULL;
			w.shared = sh;
			if (o->max_runs)
				w.max_runs = o->max_runs / (uint64_t)jobs +
					     ((uint64_t)k <
					      o->max_runs % (uint64_t)jobs);
			if (ncpu) {
				cpu_set_t one;

				w.cfg.cpu = cpus[k % ncpu];
				CPU_ZERO(&one);
				CPU_SET(w.cfg.cpu, &one);
				sched_setaffinity(0, sizeof(one), &one);
			}
			explore_serial(&w, &wr);
			worker_exit(fds[k][1], o, &wr);
		}
		close(fds[k][1]);
	}
	memset(r, 0, sizeof(*r));
	r->verdict = VERDICT_PASS;
	r->complete = true;
	r->coverage = coverage_new();
	int win = -1;
	wk = calloc(1, sizeof(*wk));
	struct explore_result *ws = wk ? wk->w : NULL;
	char why[320] = "";

	if (!wk) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		for (int k = 0; k < jobs; k++)
			kill(pids[k], SIGKILL);
		r->verdict = VERDICT_ERROR;
		goto out_reap;
	}
	wk->n = jobs;
	for (int k = 0; k < jobs; k++) {
		wk->pids[k] = pids[k];
		wk->fds[k] = fds[k][0];
	}
	collect_workers(o, sh, wk, false, t0, why, sizeof(why));
	for (int k = 0; k < jobs; k++) {
		struct explore_result *w = &ws[k];

		if (!wk->ok[k]) {
			memset(w, 0, sizeof(*w));
			w->verdict = why[0] || wk->told[k] ? VERDICT_INCOMPLETE
							   : VERDICT_ERROR;
			snprintf(w->error, sizeof(w->error), "%s",
				 why[0] ? why : "a parallel worker failed");
		}
		coverage_add(r->coverage, w->coverage);
		coverage_free(w->coverage);
		w->coverage = NULL;
		merge_crashes(r, w);
		/* bound 0 ran in every worker: count it once */
		r->runs += w->runs - (k ? w->bound0_runs : 0);
		r->pruned += w->pruned;
		add_totals(r, w);
		r->total_state_keys += w->total_state_keys;
		r->trace_digest += w->trace_digest -
				   (k ? w->bound0_digest : 0);
		if (w->bound > r->bound)
			r->bound = w->bound;
		if (w->verdict == VERDICT_FAIL &&
		    (win < 0 || w->fail_key < ws[win].fail_key))
			win = k;
		if (w->verdict == VERDICT_ERROR && r->verdict != VERDICT_ERROR) {
			r->verdict = VERDICT_ERROR;
			snprintf(r->error, sizeof(r->error), "%s", w->error);
		}
		if (w->verdict == VERDICT_INCOMPLETE &&
		    r->verdict == VERDICT_PASS) {
			r->verdict = VERDICT_INCOMPLETE;
			snprintf(r->error, sizeof(r->error), "%s", w->error);
		}
		if (!w->complete)
			r->complete = false;
	}
	end_progress(o, sh);
	sh = NULL;
	/* a systematic run read the virtual clock, which the keys left out,
	 * before any failure in the serial order: as serially, the search
	 * starts again with the clock in every key (after the workers are
	 * reaped, below) */
	again = cache && best[2] != UINT64_MAX &&
		     r->verdict == VERDICT_PASS && !why[0] &&
		     !(o->cfg.interrupted && *o->cfg.interrupted) &&
		     (win < 0 || best[2] < ws[win].fail_key);

	if (again)
		win = -1;
	if (win >= 0 && r->verdict != VERDICT_ERROR) {
		/* the winner once more, here, for its whole result */
		struct explore_result *w = &ws[win];
		struct session_config c = o->cfg;
		struct replay_strategy rs;
		struct run_result rr;

		c.user_points = w->points;
		c.nuser_points = w->npoints;
		c.points &= ~POINTS_RACES;
		c.spin_ms = 0;
		c.ids = w->fail.ids;
		c.nids = w->fail.nids;
		replay_init(&rs, w->fail.decisions, w->fail.ndecisions, true);
		struct strategy st = replay_strategy(&rs);
		int e = session_run(&c, &st, &rr);

		if (e == 0 && rr.failure != FAIL_NONE &&
		    rr.failure != FAIL_DIVERGED &&
		    rr.failure != FAIL_INTERNAL &&
		    rr.failure != FAIL_INTERRUPTED) {
			r->verdict = VERDICT_FAIL;
			r->fail = rr;
			r->fail_run = w->fail_run;
			r->fail_key = w->fail_key;
			r->found_by = w->found_by;
			r->found_preemptions = w->found_preemptions;
			r->complete = false;
			r->points = w->points;
			r->npoints = w->npoints;
			for (size_t i = 0; i < r->npoints; i++)
				r->nspin_points +=
					r->points[i].kind == OP_SPIN;
			w->points = NULL;
		} else {
			if (e == 0)
				run_result_free(&rr);
			r->verdict = VERDICT_ERROR;
			snprintf(r->error, sizeof(r->error),
				 "internal error: the failure a worker found "
				 "did not replay here (nondeterminism ptloom "
				 "does not control yet)");
		}
	}
	for (int k = 0; k < jobs; k++) {
		free(ws[k].fail.decisions);
		free(ws[k].fail.ids);
		free(ws[k].points);
	}
	if (why[0] && win < 0 && r->verdict != VERDICT_ERROR) {
		/* a worker killed from outside: not the program's doing */
		r->verdict = VERDICT_INCOMPLETE;
		r->killed = true;
		r->complete = false;
		snprintf(r->error, sizeof(r->error), "%s", why);
	}
out_reap:
	for (int k = 0; k < jobs; k++)
		if (!wk || !wk->reaped[k])
			while (waitpid(pids[k], NULL, 0) < 0 && errno == EINTR)
				;
	free(wk);
	end_progress(o, sh);
	munmap((void *)best, 5 * sizeof(*best));
	dfs_shared_cache_free(cache);
	if (again)
		return parallel_again(o, r, now() - t0);
	return 0;
}

int explore(const struct explore_opts *o, struct explore_result *r)
{
	unsigned f0 = tracer_filters_installed();
	double t0 = now();
	struct explore_opts jo = *o;
	struct discovery pre;
	bool have = o->jobs > 1 && !o->only_run && discover_first(o, &pre);
	int e;

	if (have)
		jo.discovered = &pre;
	if (o->jobs > 1 && o->strategy == STRAT_DFS && !o->only_run)
		e = explore_dfs_parallel(&jo, r);
	else if (o->jobs > 1 && o->strategy != STRAT_DFS && !o->only_run)
		e = explore_parallel(&jo, r);
	else
		e = explore_serial(o, r);
	if (o->jobs > 1 && !o->only_run)
		/* the workers' runs not covered, counted over all of them
		 * (a worker's own reason counts its runs only) */
		runs_not_covered(o, r, o->strategy == STRAT_DFS);
	if (have) {
		/* (the workers' reasons are not sent: said again here) */
		r->discovery_late_runs = pre.late_runs;
		memcpy(r->discovery_late_object, pre.late_object,
		       sizeof(r->discovery_late_object));
		late_objects(r, pre.late_runs, pre.late_object);
		discovery_free(&pre);
		/* its time is the exploration's, as in a serial one */
		r->seconds = now() - t0;
	}
	r->filters += tracer_filters_installed() - f0;
	if (r->seconds <= 0)
		r->seconds = now() - t0;
	return e;
}
