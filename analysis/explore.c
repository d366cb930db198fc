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
#include "explore.h"
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
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

static void progress(const struct explore_opts *o, struct explore_result *r,
		     double t0, int bound, bool final)
{
	static double last;
	double t = now();

	if (!o->progress || (!final && t - last < 0.2))
		return;
	last = t;
	double el = t - t0;

	fprintf(stderr, "\r\033[Kptloom: %llu runs, %.0f runs/s",
		(unsigned long long)r->runs, el > 0 ? (double)r->runs / el : 0.0);
	if (o->strategy == STRAT_DFS)
		fprintf(stderr, ", bound %d", bound);
	if (final)
		fputs("\r\033[K", stderr);
	fflush(stderr);
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

#define MAX_SPIN_POINTS 16
#define HYBRID_AFTER 200

static int explore_serial(const struct explore_opts *o0,
			  struct explore_result *r)
{
	struct dfs *d = NULL;
	struct sampler *smp = NULL;
	struct strategy s;
	double t0 = now();
	uint64_t est_steps = 100;
	struct explore_opts opts = *o0, *o = &opts;
	struct sampler *hs = NULL;	/* hybrid samples beside dfs */
	struct run_result disc_fail;	/* a discovery run that failed */
	bool have_disc_fail = false;
	struct user_point *disc_points = NULL;
	size_t ndisc_points = 0;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < o->cfg.nuser_points; i++)
		add_point(r, o->cfg.user_points[i].addr,
			  o->cfg.user_points[i].kind);
	if (o->cfg.points & POINTS_RACES) {
		struct discovery disc;
		struct user_point *pts;

		if (discover_races(&o->cfg, o->discovery_runs ? o->discovery_runs
							       : 6,
				   o->cfg.seed,
				   o->discovery_budget ? o->discovery_budget
						       : 200000,
				   &disc) == 0) {
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
restart:
	o->cfg.user_points = r->points;
	o->cfg.nuser_points = r->npoints;
	o->cfg.spin_ms = r->nspin_points < MAX_SPIN_POINTS ? o->spin_ms : 0;
	if (o->strategy == STRAT_DFS) {
		d = dfs_new(o->bound, o->reduction);
		if (!d)
			return -1;
		s = dfs_strategy(d);
		if (o->hybrid && !hs)
			hs = sampler_new(true, o->cfg.seed ^ 0x9c7, 3);
	} else {
		smp = sampler_new(o->strategy == STRAT_PCT, o->cfg.seed,
				  o->pct_depth);
		if (!smp)
			return -1;
		s = sampler_strategy(smp);
	}
	r->verdict = VERDICT_PASS;
	for (;;) {
		if (o->cfg.interrupted && *o->cfg.interrupted) {
			r->verdict = VERDICT_INCOMPLETE;
			snprintf(r->error, sizeof(r->error), "interrupted");
			break;
		}
		/* hybrid: once a systematic search is not over quickly,
		 * every fourth run is a PCT sample, so a deep tree at a low
		 * bound cannot hide a bug reachable elsewhere; the verdict
		 * still needs the systematic search to finish */
		bool sample = d && hs && r->runs >= HYBRID_AFTER &&
			      (r->runs % 4 == 3);

		if (!sample && !d && o->only_run && r->runs >= 1)
			break;
		if (!sample && !d && o->max_runs &&
		    r->runs * (o->stride ? o->stride : 1) + (uint64_t)o->worker >=
			    o->max_runs)
			break;
		if ((o->max_runs && r->runs >= o->max_runs) ||
		    (o->max_time > 0 && now() - t0 >= o->max_time)) {
			r->verdict = VERDICT_INCOMPLETE;
			break;
		}
		if (!sample && d && !dfs_next(d)) {
			r->complete = true;
			break;
		}
		uint64_t number = r->runs * (o->stride ? o->stride : 1) +
				  (uint64_t)o->worker;

		if (o->only_run)
			number = o->only_run - 1;
		if (smp)
			sampler_begin(smp, number, est_steps);
		if (sample)
			sampler_begin(hs, r->samples++, est_steps);
		struct strategy hstrat = sample ? sampler_strategy(hs) : s;
		struct run_result rr;
		int e = session_run(&o->cfg, &hstrat, &rr);

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
				 strerror(-e));
			r->verdict = VERDICT_ERROR;
			break;
		}
		r->runs++;
		r->total_steps += rr.steps;
		if (rr.steps > est_steps)
			est_steps = rr.steps;
		if (d)
			r->bound = dfs_bound(d);
		if (o->output && rr.output_len) {
			fwrite(rr.output, 1, rr.output_len, stdout);
			fflush(stdout);
		}
		if (sample && rr.failure == FAIL_DIVERGED) {
			run_result_free(&rr);
			continue;
		}
		if (d && rr.failure == FAIL_DIVERGED && dfs_pruned_run(d)) {
			r->pruned++;
			run_result_free(&rr);
			progress(o, r, t0, r->bound, false);
			continue;
		}
		if (d && rr.failure == FAIL_DIVERGED) {
			snprintf(r->error, sizeof(r->error),
				 "internal error: run %llu did not follow the "
				 "schedule prefix it was given (nondeterminism "
				 "ptloom does not control yet)",
				 (unsigned long long)r->runs);
			r->verdict = VERDICT_ERROR;
			run_result_free(&rr);
			break;
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
			goto restart;
		}
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
		if ((rr.failure == FAIL_HANG || rr.failure == FAIL_LIVELOCK) &&
		    r->runs == 1 && !rr.preemptions && !sample) {
			/* the very first, default schedule already exceeds a
			 * per-run limit: the program is long under ptloom, not
			 * known to hang; say so rather than report a bug */
			snprintf(r->error, sizeof(r->error),
				 "the first run, without any preemption, "
				 "exceeded %s; raise it for this program",
				 rr.failure == FAIL_HANG ? "--timeout"
							 : "--max-steps");
			r->too_long = true;
			r->verdict = VERDICT_INCOMPLETE;
			run_result_free(&rr);
			break;
		}
		if (rr.failure != FAIL_NONE) {
			r->fail = rr;
			r->fail_run = number;
			r->found_by = sample ? FOUND_HYBRID
				      : d    ? FOUND_DFS
					     : FOUND_SAMPLE;
			r->found_preemptions = rr.preemptions;
			r->verdict = VERDICT_FAIL;
			break;
		}
		if (r->have_pass)
			run_result_free(&r->pass);
		r->pass = rr;
		r->have_pass = true;
		progress(o, r, t0, r->bound, false);
	}
	if (have_disc_fail && (r->verdict == VERDICT_PASS ||
			       r->verdict == VERDICT_INCOMPLETE) &&
	    !(o->cfg.interrupted && *o->cfg.interrupted)) {
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
	if (have_disc_fail)
		run_result_free(&disc_fail);
	free(disc_points);
	progress(o, r, t0, r->bound, true);
	r->seconds = now() - t0;
	if (d && r->verdict == VERDICT_INCOMPLETE)
		r->complete = false;
	dfs_free(d);
	sampler_free(smp);
	sampler_free(hs);
	return 0;
}

void explore_result_free(struct explore_result *r)
{
	free(r->points);
	if (r->verdict == VERDICT_FAIL)
		run_result_free(&r->fail);
	if (r->have_pass)
		run_result_free(&r->pass);
}

/*
 * -j N for the samplers: worker k runs samples k, k+N, k+2N, ... (each a
 * pure function of the seed and its number) and reports the first failing
 * number with the points it used; the parent runs that sample again to
 * have the whole result.  Systematic search stays serial.
 */
static int explore_parallel(const struct explore_opts *o,
			    struct explore_result *r)
{
	int jobs = o->jobs, fds[64][2];
	pid_t pids[64];
	cpu_set_t set;
	int cpus[64], ncpu = 0;

	if (jobs > 64)
		jobs = 64;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int i = 0; i < CPU_SETSIZE && ncpu < 64; i++)
			if (CPU_ISSET(i, &set))
				cpus[ncpu++] = i;
	for (int k = 0; k < jobs; k++) {
		if (pipe(fds[k]))
			return explore_serial(o, r);
		pids[k] = fork();
		if (pids[k] < 0)
			return explore_serial(o, r);
		if (pids[k] == 0) {
			struct explore_opts w = *o;
			struct explore_result wr;
			cpu_set_t one;

			close(fds[k][0]);
			w.jobs = 1;
			w.worker = k;
			w.stride = jobs;
			w.progress = false;
			if (ncpu) {
				w.cfg.cpu = cpus[k % ncpu];
				CPU_ZERO(&one);
				CPU_SET(w.cfg.cpu, &one);
				sched_setaffinity(0, sizeof(one), &one);
			}
			explore_serial(&w, &wr);
			FILE *f = fdopen(fds[k][1], "w");

			if (f) {
				fprintf(f, "%d %llu %llu %zu %u\n", wr.verdict,
					(unsigned long long)wr.runs,
					(unsigned long long)wr.fail_run,
					wr.npoints, tracer_filters_installed());
				for (size_t i = 0; i < wr.npoints; i++)
					fprintf(f, "%llx %u\n",
						(unsigned long long)
							wr.points[i].addr,
						wr.points[i].kind);
				fclose(f);
			}
			_exit(0);
		}
		close(fds[k][1]);
	}
	memset(r, 0, sizeof(*r));
	r->verdict = VERDICT_PASS;
	uint64_t fail_run = UINT64_MAX;
	struct user_point *fail_points = NULL;
	size_t nfail_points = 0;

	for (int k = 0; k < jobs; k++) {
		FILE *f = fdopen(fds[k][0], "r");
		int v = VERDICT_ERROR;
		unsigned long long runs = 0, fr = 0;
		size_t np = 0;
		unsigned nf = 0;

		if (f && fscanf(f, "%d %llu %llu %zu %u", &v, &runs, &fr, &np,
				&nf) == 5) {
			r->runs += runs;
			r->filters += nf;
			struct user_point *pts = calloc(np + 1, sizeof(*pts));

			for (size_t i = 0; pts && i < np; i++) {
				unsigned long long a;
				unsigned kind;

				if (fscanf(f, "%llx %u", &a, &kind) == 2)
					pts[i] = (struct user_point){ a,
								      (uint8_t)kind };
			}
			if (v == VERDICT_FAIL && fr < fail_run) {
				fail_run = fr;
				free(fail_points);
				fail_points = pts;
				nfail_points = np;
				/* the others need not go on */
				for (int j = 0; j < jobs; j++)
					if (j != k)
						kill(pids[j], SIGTERM);
			} else {
				free(pts);
				if (v == VERDICT_INCOMPLETE &&
				    r->verdict == VERDICT_PASS)
					r->verdict = VERDICT_INCOMPLETE;
				if (v == VERDICT_ERROR)
					r->verdict = VERDICT_ERROR;
			}
		} else if (r->verdict == VERDICT_PASS && fail_run == UINT64_MAX) {
			r->verdict = VERDICT_ERROR;
			snprintf(r->error, sizeof(r->error),
				 "a parallel worker failed");
		}
		if (f)
			fclose(f);
	}
	for (int k = 0; k < jobs; k++)
		waitpid(pids[k], NULL, 0);
	if (fail_run == UINT64_MAX) {
		free(fail_points);
		return 0;
	}
	unsigned filters = r->filters;
	/* the failing sample once more, here, for its whole result */
	struct explore_opts one = *o;

	one.jobs = 1;
	one.only_run = fail_run + 1;
	one.cfg.user_points = fail_points;
	one.cfg.nuser_points = nfail_points;
	one.cfg.points &= ~POINTS_RACES;
	uint64_t total = r->runs;
	int e = explore_serial(&one, r);

	r->runs = total;
	r->fail_run = fail_run;
	r->filters += filters;
	free(fail_points);
	return e;
}

int explore(const struct explore_opts *o, struct explore_result *r)
{
	unsigned f0 = tracer_filters_installed();
	double t0 = now();
	int e;

	if (o->jobs > 1 && o->strategy != STRAT_DFS && !o->only_run)
		e = explore_parallel(o, r);
	else
		e = explore_serial(o, r);
	r->filters += tracer_filters_installed() - f0;
	if (r->seconds <= 0)
		r->seconds = now() - t0;
	return e;
}
