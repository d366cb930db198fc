/*
 * ptloom run: explore schedules, stop at the first failure, save it,
 * minimise it, verify its replay, and print the command that replays it.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "suite.h"

#include "../analysis/coverage.h"
#include "../analysis/escape.h"
#include "../analysis/explore.h"
#include "../analysis/minimize.h"
#include "../analysis/report.h"
#include "../analysis/strategy.h"

static void usage(FILE *f)
{
	fputs("usage: ptloom run [OPTIONS] -- PROGRAM [ARGS...]\n"
	      "\n"
	      "Explores the program's schedules and stops at the first "
	      "failure.\n"
	      "\n"
	      "  -p, --preemptions N   preemption bound; bounds 0..N in turn "
	      "(default 2)\n"
	      "  -s, --strategy NAME   dfs (systematic), or a sampler: random, "
	      "pct, pos, surw, rr, cov\n"
	      "                        (default dfs)\n"
	      "  -n, --max-runs N      at most N executions explored (default 10000;\n"
	      "                        race discovery's runs before them, up to 24,\n"
	      "                        and minimisation's after are not counted)\n"
	      "      --max-time SEC    at most SEC seconds for the whole "
	      "command (exploration,\n"
	      "                        then minimisation in what is left)\n"
	      "      --max-steps N     per-run cap on scheduling points; over "
	      "it is a livelock\n"
	      "                        failure (default 100000)\n"
	      "      --timeout SEC     per-run wall-clock cap; over it is a "
	      "hang (default 10)\n"
	      "      --seed N          seed of every random choice (default "
	      "0)\n"
	      "      --points LIST     sync,atomics,races,tso (default "
	      "sync,races,tso)\n"
	      "      --pct-depth D     PCT bug depth (default 3)\n"
	      "      --reduction KIND  dfs's reduction: sleep (sleep sets, "
	      "the default),\n"
	      "                        dpor (source-set DPOR with bounded "
	      "POR; serial, no\n"
	      "                        state cache) or none\n"
	      "      --no-reduction    the same as --reduction none\n"
	      "      --no-state-cache  dfs without state caching (by default a "
	      "serial dfs\n"
	      "                        skips a program state it reached "
	      "before)\n"
	      "      --dfs-only        dfs without interleaved samples (every "
	      "fourth run\n"
	      "                        samples, fewer after 2000; the verdict "
	      "is dfs's)\n"
	      "      --hybrid-mix LIST the hybrid's samplers in turn (default "
	      "surw,pos,surw,random,\n"
	      "                        and one sample in 16 each rr and cov;\n"
	      "                        from run 2000 one run in 16 more: late)\n"
	      "      --bound KIND      what -p bounds: preemption (default) or "
	      "delay\n"
	      "                        (delays of a round-robin scheduler; "
	      "serial only)\n"
	      "      --no-minimize     keep the schedule as found\n"
	      "      --minimize-time SEC  at most SEC seconds of "
	      "minimisation (default: the\n"
	      "                        larger of 60 s and 10 times the time "
	      "the failure took\n"
	      "                        to find); past it the best schedule "
	      "so far is kept,\n"
	      "                        \"minimum not proven\"\n"
	      "  -o, --out DIR         where schedule files go (default "
	      ".ptloom)\n"
	      "      --report FILE     write a report; --report-format "
	      "json|markdown|junit|sarif\n"
	      "  -j, --jobs N          parallel workers, one per CPU, for "
	      "every strategy; the\n"
	      "                        result does not depend on N (default "
	      "1; 0 = one per CPU)\n"
	      "      --shard K/N       explore only part K of N (disjoint, "
	      "deterministic);\n"
	      "                        `ptloom merge` combines the shards' "
	      "reports\n"
	      "  -e, --env NAME=VALUE  add to the program's fixed "
	      "environment\n"
	      "      --keep-env        pass ptloom's whole environment\n"
	      "      --free-children   let child processes run unscheduled "
	      "(today's\n"
	      "                        behaviour; the verdict says so)\n"
	      "      --no-fast-path    clock reads, sync calls while the "
	      "other threads\n"
	      "                        wait and race discovery's "
	      "observations, at ptrace\n"
	      "                        stops instead of in the program\n"
	      "                        (the same runs, slower; also "
	      "PTLOOM_NO_FAST_PATH=1)\n"
	      "      --fail-on-child-crash  a process of the program that "
	      "dies of SIGSEGV,\n"
	      "                        SIGBUS, SIGILL, SIGFPE, SIGABRT or a "
	      "sanitizer's report\n"
	      "                        fails the run, even when the command's "
	      "exit status\n"
	      "                        hides it (default: a warning naming it)\n"
	      "      --clock-start SEC the virtual CLOCK_REALTIME at every "
	      "run's start, in\n"
	      "                        seconds since 1970 (default: the real "
	      "time now)\n"
	      "      --output          pass every run's output through (not "
	      "that of runs\n"
	      "                        the reduction cuts short)\n"
	      "      --per-test        test-suite mode: explore each test the "
	      "command starts\n"
	      "                        (ctest, make check, meson test, a "
	      "script, Criterion's\n"
	      "                        suite::test, the tests of a "
	      "GoogleTest, Rust or Go\n"
	      "                        binary or of pytest, and those "
	      "together) on its own,\n"
	      "                        with these"
	      " budgets per test, -j N tests at a\n"
	      "                        time, one verdict per test; the runner "
	      "runs a failing\n"
	      "                        test on its failing schedule\n"
	      "      --suite-time SEC  with --per-test: seconds for all the "
	      "tests, shared\n"
	      "                        fairly (the command runs once first "
	      "to count them)\n"
	      "      --whole-tree      explore the command's whole process "
	      "tree as one\n"
	      "                        program (the default)\n"
	      "  -v, --verbose         with --per-test: why each test was "
	      "split or not\n"
	      "      --min-coverage F  explore until this share (0-1] of the "
	      "conflicting pairs\n"
	      "                        seen was seen in both orders, or the "
	      "budget ends;\n"
	      "                        exit 0 if reached, 3 if not\n"
	      "  -q, --quiet           print the summary line only\n"
	      "\n"
	      "exit: 0 pass, 1 failure, 2 usage/input error, 3 incomplete (a "
	      "limit is not a pass)\n",
	      f);
}


static const struct option long_opts[] = {
	{ "preemptions", required_argument, 0, 'p' },
	{ "strategy", required_argument, 0, 's' },
	{ "max-runs", required_argument, 0, 'n' },
	{ "max-time", required_argument, 0, 'X' },
	{ "max-steps", required_argument, 0, 'M' },
	{ "timeout", required_argument, 0, 'T' },
	{ "seed", required_argument, 0, 'S' },
	{ "points", required_argument, 0, 'P' },
	{ "pct-depth", required_argument, 0, 'D' },
	{ "no-reduction", no_argument, 0, 'N' },
	{ "reduction", required_argument, 0, 'r' + 256 },
	{ "no-state-cache", no_argument, 0, 'c' + 256 },
	{ "state-cache", no_argument, 0, 'C' + 256 },
	{ "no-minimize", no_argument, 0, 'm' },
	{ "minimize-time", required_argument, 0, MINIMIZE_TIME_OPT },
	{ "dfs-only", no_argument, 0, 'Y' },
	{ "hybrid-mix", required_argument, 0, 'H' },
	{ "out", required_argument, 0, 'o' },
	{ "report", required_argument, 0, 'R' },
	{ "report-format", required_argument, 0, 'F' },
	{ "jobs", required_argument, 0, 'j' },
	{ "shard", required_argument, 0, 'Z' },
	{ "bound", required_argument, 0, 'B' },
	{ "env", required_argument, 0, 'e' },
	{ "keep-env", no_argument, 0, 'K' },
	{ "free-children", no_argument, 0, 'W' },
	{ "fail-on-child-crash", no_argument, 0, CHILD_CRASH_OPT },
	{ "no-fast-path", no_argument, 0, NO_FAST_PATH_OPT },
	{ "clock-start", required_argument, 0, CLOCK_START_OPT },
	{ "output", no_argument, 0, 'O' },
	{ "min-coverage", required_argument, 0, 'v' + 256 },
	{ "quiet", no_argument, 0, 'q' },
	{ "per-test", no_argument, 0, 'T' + 512 },
	{ "suite-time", required_argument, 0, 'S' + 512 },
	{ "whole-tree", no_argument, 0, 'w' + 256 },
	{ "verbose", no_argument, 0, 'v' },
	{ "help", no_argument, 0, 'h' },
	{ 0, 0, 0, 0 },
};

/*
 * The options a test's own exploration (--per-test) takes from ours: all
 * but where results go, the environment (the test's is its own), the
 * output, the mode and -j (it explores serially).
 */
static int forwarded(int argc, char **argv, char ***out)
{
	static const char *const drop_arg[] = {
		"-o", "--out", "--report", "--report-format", "-e", "--env",
		"-j", "--jobs", "--shard", "--clock-start", "--suite-time",
		NULL,
	};
	static const char *const drop[] = {
		"-q", "--quiet", "--keep-env", "--per-test", "--whole-tree",
		"-v", "--verbose", "--output", NULL,
	};
	char **v = calloc((size_t)argc + 1, sizeof(*v));
	int n = 0;

	if (!v)
		return -1;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];
		bool skip = false;

		if (a[0] != '-')
			break; /* the program */
		for (int k = 0; drop[k] && !skip; k++)
			skip = !strcmp(a, drop[k]);
		for (int k = 0; drop_arg[k] && !skip; k++) {
			size_t l = strlen(drop_arg[k]);

			if (!strcmp(a, drop_arg[k])) {
				skip = true;
				i++; /* and its value */
			} else if (!strncmp(a, drop_arg[k], l) &&
				   (a[1] != '-' ? a[l] != 0 : a[l] == '=')) {
				skip = true;
			}
		}
		if (skip)
			continue;
		v[n++] = argv[i];
		/* an option's separate value goes with it */
		if (i + 1 < argc && argv[i + 1][0] != '-' &&
		    strcmp(argv[i + 1], "--")) {
			const struct option *o = NULL;

			for (int k = 0; long_opts[k].name && !o; k++)
				if (a[1] == '-' &&
				    !strcmp(a + 2, long_opts[k].name))
					o = &long_opts[k];
			bool takes = o ? o->has_arg == required_argument
				       : (a[1] && !a[2] &&
					  strchr("psnoje", a[1]));

			if (takes)
				v[n++] = argv[++i];
		}
	}
	*out = v;
	return n;
}

static int number(const char *opt, const char *arg, long lo, long hi,
		  long *out)
{
	uint64_t v;

	if (parse_decimal(arg, (uint64_t)hi, &v) || v < (uint64_t)lo) {
		fprintf(stderr, "ptloom: %s takes a decimal number from %ld to "
				"%ld (got '%s')\n", opt, lo, hi, esc(arg));
		return -1;
	}
	*out = (long)v;
	return 0;
}

/* Follow a run's decisions exactly once more, with the trace symbolised. */
static int rerun_exact(struct session_config *cfg, const struct run_result *r,
		       struct run_result *out)
{
	struct replay_strategy rs;

	replay_init(&rs, r->decisions, r->ndecisions, true);
	struct strategy s = replay_strategy(&rs);
	bool sym = cfg->symbolize_trace;

	cfg->symbolize_trace = true;
	int e = session_run(cfg, &s, out);

	cfg->symbolize_trace = sym;
	if (!e && out->failure == FAIL_INTERRUPTED) {
		/* cut short: not the run it replays */
		run_result_free(out);
		memset(out, 0, sizeof(*out));
		return -EINTR;
	}
	return e;
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Processes that died of a crash signal in passing runs (a shell's
 * `./racy; true`): the command's exit status stays the verdict, but each
 * is named, in how many runs, with its first run saved as a schedule that
 * `replay --fail-on-child-crash` reproduces as a failure.  The run is
 * replayed once with --fail-on-child-crash, so the file ends where the
 * process died.  Returns the number of warnings in w.
 */
struct crash_note {
	char file[1024], cmd[8192], msg[1024], sig[32];
};

static size_t crash_warnings(struct explore_opts *eo, struct explore_result *er,
			     const struct program *prog,
			     const struct common_opts *co, const char *sname,
			     struct report_warning *w, struct crash_note *n)
{
	size_t k = 0;
	char quoted[4096];

	shell_join(quoted, sizeof(quoted), prog->argv, prog->argc);
	for (int i = 0; i < er->ncrashes; i++, k++) {
		struct child_crash *c = &er->crashes[i];
		struct session_config cfg = eo->cfg;
		struct run_result x;
		char id[32];

		memset(&n[k], 0, sizeof(n[k]));
		snprintf(n[k].sig, sizeof(n[k].sig), "%s",
			 signal_name(c->signal));
		cfg.fail_on_child_crash = true;
		if (c->points) { /* a -j worker's run, with its points */
			cfg.user_points = c->points;
			cfg.nuser_points = c->npoints;
		}
		if (rerun_exact(&cfg, &c->run, &x) == 0 &&
		    x.failure == FAIL_CRASH && x.signal == c->signal) {
			struct schedule sch;

			snprintf(id, sizeof(id), "%06llx",
				 (unsigned long long)(x.trace_hash & 0xffffff));
			schedule_from_run(&sch, prog, co, sname, eo->bound, &x);
			if (c->points)
				schedule_set_points(&sch, c->points,
						    c->npoints);
			else
				schedule_set_points(&sch, er->points,
						    er->npoints);
			if (save_schedule(&sch, co->out_dir, id, "crash",
					  n[k].file, sizeof(n[k].file)))
				n[k].file[0] = 0;
			schedule_free(&sch);
			if (x.location[0])
				snprintf(c->where, sizeof(c->where), "%s",
					 x.location);
		}
		if (x.events || x.output)
			run_result_free(&x);
		char envs[4096] = "";

		/* the -e entries a replay applies only when confirmed */
		for (int e = 0; e < co->nenv_extra; e++) {
			char *kv[] = { "-e", co->env_extra[e] };
			size_t l = strlen(envs);

			if (!env_refused(&co->env_extra[e], 1, NULL, 0, NULL,
					 0))
				continue;
			shell_join(envs + l, sizeof(envs) - l, kv, 2);
			l = strlen(envs);
			snprintf(envs + l, sizeof(envs) - l, " ");
		}
		if (n[k].file[0])
			snprintf(n[k].cmd, sizeof(n[k].cmd),
				 "ptloom replay %s--fail-on-child-crash %s -- "
				 "%s",
				 envs, n[k].file, quoted);
		/* (a run the reduction cut short may end before the
		 * process could die: said, so that "5 of 6" is not read as
		 * a schedule that spared it) */
		char cut[96] = "";

		if (er->pruned)
			snprintf(cut, sizeof(cut),
				 ", %llu of them cut short by the search's "
				 "reduction",
				 (unsigned long long)er->pruned);
		snprintf(n[k].msg, sizeof(n[k].msg),
			 "%s died of %s%s%s%s in %llu of %llu run%s%s; the "
			 "command's exit status hid it (--fail-on-child-crash "
			 "makes it a failure)",
			 c->label, n[k].sig, c->where[0] ? " (" : "",
			 esc(c->where), c->where[0] ? ")" : "",
			 (unsigned long long)c->runs,
			 (unsigned long long)er->runs,
			 er->runs == 1 ? "" : "s", cut);
		w[k] = (struct report_warning){
			.kind = "child_crash",
			.process = c->label,
			.signal = n[k].sig,
			.location = c->where,
			.runs = c->runs,
			.message = n[k].msg,
			.schedule_file = n[k].file[0] ? n[k].file : NULL,
			.replay_command = n[k].cmd[0] ? n[k].cmd : NULL,
		};
	}
	return k;
}

/* printf onto the end of buf */
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t k = strlen(buf);
	va_list ap;

	if (k + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + k, len - k, fmt, ap);
	va_end(ap);
}

static const char *strategy_names[] = { "dfs", "random", "pct", "pos",
					"surw", "rr", "cov" };

/*
 * How many bounds a finished exploration explored completely without any
 * failure (bounds 0 .. n-1): a dfs searches bound by bound and stops at
 * the first failure, so the bounds below the one it was at had none.  Only
 * a serial preemption-bounded dfs (alone or in the hybrid) tells; a failure
 * found by the dfs at bound b, or by a sample while it explored bound b,
 * gives b; a sample after the dfs finished gives the whole bound + 1.
 */
static int bounds_clear(const struct explore_opts *eo,
			const struct explore_result *er)
{
	if (eo->strategy != STRAT_DFS || eo->delay_bound || eo->jobs > 1 ||
	    eo->nshards > 1 || er->restarts)
		return 0;
	if (er->found_by == FOUND_DFS)
		return er->bound;
	if (er->found_by == FOUND_HYBRID)
		return er->dfs_runs ? eo->bound + 1 : er->bound;
	return 0;
}

/* --max-steps of the search, while minimisation's candidates have their
 * cap (minimize_cap_steps); 0 otherwise */
static uint64_t search_max_steps;

/* The bounded search for a smaller schedule: at most max_runs runs of dfs
 * at bound, serial; its outcome raises *clear (bounds with no failure). */
static int bounded_search(const struct explore_opts *eo, int bound,
			  unsigned max_runs, struct explore_result *er,
			  int *clear)
{
	struct explore_opts o = *eo;

	o.strategy = STRAT_DFS;
	o.delay_bound = false; /* fewer preemptions is the goal */
	o.bound = bound;
	o.max_runs = max_runs;
	o.hybrid = false;
	o.progress = false;
	o.output = false;
	o.min_coverage = 0; /* the search for fewer preemptions, not coverage */
	o.jobs = 1;
	o.nshards = 0;
	o.shard = 0;
	if (search_max_steps)
		o.cfg.max_steps = search_max_steps; /* its runs prove */
	double left = cli_bound_left();

	if (left == 0)
		return -1; /* no time left */
	if (left > 0) {
		o.max_time = left;
		o.cfg.timeout = cli_bound_timeout(); /* not the last cut */
	}
	if (explore(&o, er))
		return -1;
	if (left > 0 && er->verdict == VERDICT_INCOMPLETE &&
	    cli_bound_left() == 0)
		cli_bound_expired(); /* stopped by the bound */
	int c = er->verdict == VERDICT_PASS && er->complete ? bound + 1
		: er->restarts					  ? 0
								  : er->bound;

	if (er->verdict != VERDICT_PASS && er->verdict != VERDICT_FAIL &&
	    er->verdict != VERDICT_INCOMPLETE)
		c = 0;
	if (c > *clear)
		*clear = c;
	return 0;
}

/* What the minimised count is worth: proven the fewest when every bound
 * below it was explored completely without a failure. */
static void minimum_note(char *note, size_t len, unsigned pre, int clear)
{
	size_t off = strlen(note);

	if (off >= len)
		return;
	if (!pre)
		snprintf(note + off, len - off, "; minimal");
	else if (clear >= (int)pre)
		snprintf(note + off, len - off,
			 "; minimal: bound %u explored completely, no failure",
			 pre - 1);
	else if (clear > 1)
		snprintf(note + off, len - off,
			 "; not proven minimal: bounds 0-%d explored "
			 "completely, bound %d not", clear - 1, clear);
	else if (clear == 1)
		snprintf(note + off, len - off,
			 "; not proven minimal: bound 0 explored completely, "
			 "bound 1 not");
	else
		snprintf(note + off, len - off,
			 "; not proven minimal: bound 0 not explored "
			 "completely");
}

/* PTLOOM_DEBUG_MIN: each minimisation phase's outcome on stderr. */
static void min_debug(const char *phase, const struct run_result *best,
		      unsigned runs)
{
	static double t0;

	if (!t0)
		t0 = cli_wall();
	if (!getenv("PTLOOM_DEBUG_MIN"))
		return;
	fprintf(stderr, "minimize: %s: %u preemptions, %u runs, %.1f s\n",
		phase, best->preemptions, runs, cli_wall() - t0);
}

/* Seconds past --max-time the run that names the coverage's pairs may
 * take when the search used it all. */
#define NAMING_GRACE 1.0

/* The quick bounded search's runs, before the placement search. */
#define QUICK_BOUNDED_RUNS 40

/*
 * The same failure below best's preemptions by the bounded search (dfs to
 * best's count - 1, at most max_runs runs, raising *clear): on success
 * *best is replaced and minimised again.
 */
static void smaller_by_bounds(const struct explore_opts *eo,
			      struct session_config *cfg,
			      struct run_result *best,
			      struct minimize_stats *ms, unsigned max_runs,
			      int *clear)
{
	struct explore_result er;
	struct minimize_stats more = { 0 };

	if (bounded_search(eo, (int)best->preemptions - 1, max_runs, &er,
			   clear))
		return;
	if (er.verdict == VERDICT_FAIL && fingerprint_equal(&er.fail, best) &&
	    er.fail.preemptions < best->preemptions) {
		run_result_free(best);
		*best = er.fail;
		er.verdict = VERDICT_PASS; /* moved out */
		minimize(run_by_step, cfg, best, 200, &more);
		ms->runs += more.runs;
		ms->preemptions_after = best->preemptions;
		ms->decisions_after = more.decisions_after;
	}
	ms->runs += (unsigned)er.runs;
	explore_result_free(&er);
}

/*
 * A schedule found by a sample (or by greedy dropping) may carry more
 * preemptions than the bug needs: search systematically below its count,
 * first by placing preemptions on default paths, seeded with the found
 * schedule's own preemptions (cheap even with many threads), then by the
 * whole bounded search; on success *best is replaced (minimised again).
 * *clear counts the bounds known to hold no failure at all (0 .. *clear-1):
 * the minimum is proven when it reaches best's preemptions.
 */
static void smaller_schedule(const struct explore_opts *eo,
			     struct session_config *cfg,
			     struct run_result *best,
			     struct minimize_stats *ms, int *clear,
			     double t_min, bool own_time, bool *capped)
{
	struct minimize_stats more = { 0 };

	/* the found order of effects with fewer switches, to a fixed point */
	while (best->preemptions > 1 &&
	       minimize_reorder(run_with_strategy, cfg, best, &more) >= 0) {
		ms->runs += more.runs;
		more.runs = 0;
		minimize(run_by_step, cfg, best, 200, &more);
		ms->preemptions_after = best->preemptions;
		ms->decisions_after = more.decisions_after;
	}
	ms->runs += more.runs;
	more.runs = 0;
	min_debug("reorder loop", best, ms->runs);
	double spent = cli_wall() - t_min; /* minimising so far */

	/* (a --minimize-time of the user's is the search's too: the share
	 * keeps the default's wait predictable, and a slow machine's
	 * search to bound 1 was cut at 30 s of the 180 given) */
	double share = own_time			? 0
		       : spent > MINIMIZE_PROOF_MIN ? spent
						    : MINIMIZE_PROOF_MIN;

	cli_bound_cap(cfg, share);
	/* the bounded search first, for a few runs and at most a quarter
	 * of the time left (a runner's run takes seconds): it goes bound by
	 * bound from 0, so a failure it meets there has the fewest
	 * preemptions (a C extension's race under Python: 1 preemption in
	 * 31 runs, where the placement search had spent 400 runs, 40 s,
	 * finding none) */
	if (best->preemptions > 1 && *clear < (int)best->preemptions) {
		double t_q = cli_wall(), left = cli_bound_left();

		if (left > 0)
			cli_bound_cap(cfg, left / 4);
		smaller_by_bounds(eo, cfg, best, ms, QUICK_BOUNDED_RUNS, clear);
		double used = cli_wall() - t_q;

		min_debug("quick bounded search", best, ms->runs);
		/* the phase's share again, less what this took (0: none) */
		cli_bound_cap(cfg, share <= 0	      ? 0
				   : share - used > 1e-3 ? share - used
							 : 1e-3);
	}
	/* (none once the minimum is proven: the check below returns) */
	if (*clear < (int)best->preemptions &&
	    minimize_search(run_with_strategy, cfg, best, 400, &more) >= 0) {
		ms->runs += more.runs;
		more.runs = 0;
		minimize(run_by_step, cfg, best, 200, &more);
		ms->preemptions_after = best->preemptions;
		ms->decisions_after = more.decisions_after;
	}
	ms->runs += more.runs;
	more.runs = 0;
	min_debug("placement search", best, ms->runs);
	if (!best->preemptions || *clear >= (int)best->preemptions) {
		*capped = cli_bound_capped();
		cli_bound_cap(cfg, 0);
		return;
	}

	/* bound 0 alone is cheap to prove; a deeper one is also the search
	 * for the same failure with fewer preemptions */
	smaller_by_bounds(eo, cfg, best, ms, best->preemptions > 1 ? 500 : 200,
			  clear);
	min_debug("bounded search", best, ms->runs);
	cli_bound_expired();
	*capped = cli_bound_capped();
	cli_bound_cap(cfg, 0);
}

int cmd_run(int argc, char **argv)
{
	struct common_opts co;
	struct explore_opts eo;
	long v;
	int c, jobs = 1;
	bool minimize_on = true, per_test = false, verbose = false;
	double t_start = cli_wall(), min_time = 0, suite_time = 0;

	common_defaults(&co);
	memset(&eo, 0, sizeof(eo));
	eo.strategy = STRAT_DFS;
	eo.bound = 2;
	eo.max_runs = 10000;
	eo.pct_depth = 3;
	eo.reduction = true;
	eo.state_cache = true;
	eo.hybrid = true;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:s:n:o:j:e:qvh", long_opts,
				NULL)) != -1) {
		int r = common_option(&co, c, optarg);

		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'p':
			if (number("--preemptions", optarg, 0, 64, &v))
				return EXIT_USAGE;
			eo.bound = (int)v;
			break;
		case 's':
			eo.strategy = -1;
			for (int k = 0; k < 7; k++)
				if (!strcmp(optarg, strategy_names[k]))
					eo.strategy = k;
			if (eo.strategy < 0) {
				fprintf(stderr, "ptloom: --strategy is dfs, "
						"random, pct, pos, surw, rr or cov "
						"(got "
						"'%s')\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'B':
			if (!strcmp(optarg, "delay") ||
			    !strcmp(optarg, "delays")) {
				eo.delay_bound = true;
			} else if (!strcmp(optarg, "preemption") ||
				   !strcmp(optarg, "preemptions")) {
				eo.delay_bound = false;
			} else {
				fprintf(stderr, "ptloom: --bound is preemption "
						"or delay (got '%s')\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'H': {
			char *list = strdup(optarg), *save = NULL;

			eo.nmix = 0;
			for (char *w = strtok_r(list, ",", &save); w;
			     w = strtok_r(NULL, ",", &save)) {
				int k = sampler_kind_of(w);

				if (k < 0 || eo.nmix == HYBRID_MIX_MAX) {
					fprintf(stderr,
						"ptloom: --hybrid-mix takes up "
						"to %d of random, pct, pos, "
						"surw, rr, cov, late (got "
						"'%s')\n",
						HYBRID_MIX_MAX, optarg);
					free(list);
					return EXIT_USAGE;
				}
				eo.mix[eo.nmix++] = k;
			}
			free(list);
			if (!eo.nmix) {
				fprintf(stderr, "ptloom: --hybrid-mix needs a "
						"list (got '%s')\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		}
		case 'n':
			if (number("--max-runs", optarg, 1, 2000000000, &v))
				return EXIT_USAGE;
			eo.max_runs = (uint64_t)v;
			break;
		case 'X':
			if (parse_seconds(optarg, SECONDS_MAX, &eo.max_time)) {
				fprintf(stderr, "ptloom: --max-time takes "
						"seconds, a decimal number > 0 "
						"and <= %d (got '%s')\n",
					SECONDS_MAX, esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'D':
			if (number("--pct-depth", optarg, 1, 16, &v))
				return EXIT_USAGE;
			eo.pct_depth = (int)v;
			break;
		case 'N':
			eo.reduction = false;
			eo.dpor = false;
			break;
		case 'r' + 256:
			if (!strcmp(optarg, "dpor")) {
				eo.reduction = eo.dpor = true;
			} else if (!strcmp(optarg, "sleep")) {
				eo.reduction = true;
				eo.dpor = false;
			} else if (!strcmp(optarg, "none")) {
				eo.reduction = eo.dpor = false;
			} else {
				fprintf(stderr, "ptloom: --reduction takes "
						"dpor, sleep or none (got "
						"'%s')\n", esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'C' + 256:
			eo.state_cache = true;
			break;
		case 'c' + 256:
			eo.state_cache = false;
			break;
		case 'm':
			minimize_on = false;
			break;
		case MINIMIZE_TIME_OPT:
			if (parse_seconds(optarg, SECONDS_MAX, &min_time)) {
				fprintf(stderr, "ptloom: --minimize-time takes "
						"seconds, a decimal number > 0 "
						"and <= %d (got '%s')\n",
					SECONDS_MAX, esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'Y':
			eo.hybrid = false;
			break;
		case 'j':
			if (number("--jobs", optarg, 0, 64, &v))
				return EXIT_USAGE;
			jobs = (int)v;
			break;
		case 'Z': {
			unsigned k, n;
			char tail;

			if (sscanf(optarg, "%u/%u%c", &k, &n, &tail) != 2 ||
			    optarg[0] < '1' || optarg[0] > '9' || n < 1 ||
			    n > 100000 || k < 1 || k > n) {
				fprintf(stderr, "ptloom: --shard takes K/N with "
						"1 <= K <= N (got '%s')\n",
					optarg);
				return EXIT_USAGE;
			}
			eo.shard = (int)k - 1;
			eo.nshards = (int)n;
			break;
		}
		case 'T' + 512:
			per_test = true;
			break;
		case 'S' + 512:
			if (parse_seconds(optarg, SECONDS_MAX, &suite_time)) {
				fprintf(stderr, "ptloom: --suite-time takes "
						"seconds, a decimal number > 0 "
						"and <= %d (got '%s')\n",
					SECONDS_MAX, esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'w' + 256:
			per_test = false;
			break;
		case 'v':
			verbose = true;
			break;
		case 'v' + 256: {
			char *end = NULL;
			double f = strtod(optarg, &end);

			if (!end || end == optarg || *end || !(f > 0) ||
			    f > 1) {
				fprintf(stderr, "ptloom: --min-coverage takes a "
						"share greater than 0 and at most "
						"1, e.g. 0.95 (got '%s')\n",
					esc(optarg));
				return EXIT_USAGE;
			}
			eo.min_coverage = f;
			break;
		}
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			return cli_bad_option("run", c, argv);
		}
	}
	if (jobs == 0) {
		cpu_set_t set;

		jobs = sched_getaffinity(0, sizeof(set), &set) == 0
			       ? CPU_COUNT(&set)
			       : 1;
	}
	eo.jobs = jobs;
	if (eo.nshards > 1 && eo.strategy != STRAT_DFS) {
		/* samplers: shard K runs the sample numbers = K-1 mod N */
		eo.worker = eo.shard;
		eo.stride = eo.nshards;
	}
	if (suite_time > 0 && !per_test) {
		fprintf(stderr, "ptloom: --suite-time shares a budget among "
				"the tests of --per-test; without it, use "
				"--max-time\n");
		return EXIT_USAGE;
	}
	struct program prog;

	if (program_setup(&prog, argc - optind, argv + optind, &co))
		return EXIT_USAGE;
	/* where results go is checked before the first run */
	if (check_output_paths(&co, true)) {
		program_free(&prog);
		return EXIT_USAGE;
	}
	session_config_init(&eo.cfg, &prog, &co);
	if (per_test) {
		char **fwd = NULL;
		int nfwd = forwarded(optind, argv, &fwd), code;

		if (nfwd < 0) {
			fprintf(stderr, "ptloom: out of memory\n");
			program_free(&prog);
			return EXIT_USAGE;
		}
		if (eo.nshards > 1) {
			fprintf(stderr, "ptloom: --per-test explores each test "
					"whole; --shard is not for it\n");
			free(fwd);
			program_free(&prog);
			return EXIT_USAGE;
		}
		int done = suite_run(&prog, &co, &eo.cfg, fwd, nfwd,
				     verbose && !co.quiet, jobs, eo.bound,
				     suite_time, eo.max_time, &code);

		free(fwd);
		if (done) {
			program_free(&prog);
			return code;
		}
		/* no test: one program, explored as usual */
	}
	eo.progress = !co.quiet && isatty(2);
	/* under the GIL a busy thread reaches the eval-breaker checks */
	/* never for the policy's process (tracer/world.c check_limits) */
	eo.spin_ms = 100;
	eo.output = co.output;

	struct explore_result er;

	/* discovery's runs come before explore's progress line */
	cli_progress_begin("observing runs for race discovery",
			   eo.progress && (eo.cfg.points & POINTS_RACES));
	explore(&eo, &er);
	cli_progress_end();
	python_note_children(&eo.cfg, &co);
	eo.cfg.user_points = er.points;
	eo.cfg.nuser_points = er.npoints;
	eo.cfg.points &= ~POINTS_RACES;
	if (er.verdict == VERDICT_ERROR && cli_interrupted)
		er.verdict = VERDICT_INCOMPLETE; /* the error is the interrupt */
	if (er.verdict == VERDICT_ERROR) {
		fprintf(stderr, "ptloom: %s\n", er.error);
		explore_result_free(&er);
		program_free(&prog);
		return EXIT_USAGE;
	}
	bool unsupported = er.verdict == VERDICT_FAIL &&
			   er.fail.failure == FAIL_UNSUPPORTED;

	if (unsupported) {
		/* an operation ptloom cannot make deterministic (ptrace, a
		 * CPU-time timer, ...): the run says nothing about the
		 * program, neither a failure nor a pass */
		snprintf(er.error, sizeof(er.error),
			 "after %llu run%s: %s; ptloom cannot explore the "
			 "program past it (no failure found; not a pass)",
			 (unsigned long long)er.runs, er.runs == 1 ? "" : "s",
			 er.fail.message);
		run_result_free(&er.fail);
		er.verdict = VERDICT_INCOMPLETE;
		er.complete = false;
	}

	const char *sname = strategy_names[eo.strategy];
	/* what the runs covered: their conflicting pairs, named */
	struct report_pair *cov_list = NULL;
	char *cov_names = NULL, covtext[1536], covshort[160];
	/* the naming run is one more run of the program: within
	 * --max-time too, but for NAMING_GRACE seconds past it (a search
	 * ends at its bound: the pairs of every INCOMPLETE by --max-time
	 * were bare addresses; a run it stops names what it met) */
	struct session_config cov_cfg = eo.cfg;

	if (eo.max_time > 0) {
		double left = eo.max_time - (cli_wall() - t_start);

		if (left < NAMING_GRACE)
			left = NAMING_GRACE;
		cov_cfg.stop_wall = cli_wall() + left;
		if (cov_cfg.timeout <= 0 || cov_cfg.timeout > left)
			cov_cfg.timeout = left;
	}
	int ncov = cli_interrupted ? 0
		   : cli_coverage_pairs(&cov_cfg, er.coverage,
					er.have_pass ? &er.pass
					: er.verdict == VERDICT_FAIL ? &er.fail
								     : NULL,
					&cov_list, &cov_names);
	uint64_t cov_pairs = coverage_pairs(er.coverage),
		 cov_covered = coverage_covered(er.coverage);
	bool cov_ok = eo.min_coverage > 0 &&
		      coverage_ratio(er.coverage) >= eo.min_coverage;

	if (ncov < 0)
		ncov = 0;
	cli_coverage_text(covtext, sizeof(covtext), cov_list, (size_t)ncov,
			  cov_pairs, cov_covered, true);
	cli_coverage_text(covshort, sizeof(covshort), cov_list, (size_t)ncov,
			  cov_pairs, cov_covered, false);
	char summary[2560], files[2][1024] = { "", "" }, cmd[8192] = "";
	char mnote[256] = "", depart[2048] = "", desc[600], signame[32];
	struct report rep = {
		.command = "run",
		.strategy = sname,
		.runs = er.runs,
		.complete = er.complete,
		.preemption_bound = eo.bound,
		.seed = co.seed,
		.seconds = er.seconds,
		.exit_status = -1,
		.thread = -1,
		.diverged_at = -1,
		.program = prog.display,
		.shard = eo.shard + 1,
		.nshards = eo.nshards > 1 ? eo.nshards : 0,
		.fail_key = er.verdict == VERDICT_FAIL ? er.fail_key : 0,
		.bound0_runs = er.bound0_runs,
		.has_coverage = true,
		.cov_pairs = cov_pairs,
		.cov_covered = cov_covered,
		.min_coverage = eo.min_coverage,
		.cov_reached = cov_ok,
		.cov_list = cov_list,
		.ncov_list = (size_t)ncov,
	};
	int code;

	if (er.verdict == VERDICT_FAIL) {
		struct run_result *orig = &er.fail, best, exact;
		struct minimize_stats ms = { 0 };

		/* the found schedule, replayed once with names for show;
		 * kept only with the same failure: a hang's replay that
		 * came out merely too slow for --timeout (a loaded moment)
		 * once replaced the hang, and "FAIL too slow" was reported,
		 * a kind no schedule file can hold */
		if (rerun_exact(&eo.cfg, orig, &exact) == 0 &&
		    exact.trace_hash == orig->trace_hash &&
		    exact.failure == orig->failure) {
			run_result_free(orig);
			*orig = exact;
		} else if (exact.events) {
			run_result_free(&exact);
		}
		char id[32];

		snprintf(id, sizeof(id), "%06llx",
			 (unsigned long long)(orig->trace_hash & 0xffffff));
		struct schedule sch;

		schedule_from_run(&sch, &prog, &co, sname, eo.bound, orig);
		schedule_set_points(&sch, er.points, er.npoints);
		(void)cli_coverage_to_schedule(&sch, cov_list, (size_t)ncov,
					       cov_pairs, cov_covered);
		int se = save_schedule(&sch, co.out_dir, id, "original",
				       files[0], sizeof(files[0]));

		if (se) {
			fprintf(stderr, "ptloom: cannot write %s: %s\n",
				files[0], strerror(-se));
			files[0][0] = 0;
		}
		schedule_free(&sch);

		memset(&best, 0, sizeof(best));
		if (minimize_on)
			cli_test_interrupt("minimize");
		if (minimize_on && cli_interrupted)
			snprintf(mnote, sizeof(mnote), "not done (interrupted)");
		/* minimisation answers within a bound the user can predict:
		 * --minimize-time, else the larger of 60 s and 10 times the
		 * time the failure took to find; never past --max-time,
		 * which is the whole command's */
		double budget = min_time > 0 ? min_time
				: er.seconds * MINIMIZE_TIME_FACTOR >
						MINIMIZE_TIME_MIN
					? er.seconds * MINIMIZE_TIME_FACTOR
					: MINIMIZE_TIME_MIN;
		bool by_max_time = false;

		if (eo.max_time > 0 &&
		    eo.max_time - (cli_wall() - t_start) < budget) {
			budget = eo.max_time - (cli_wall() - t_start);
			by_max_time = true;
		}
		bool no_time = false;

		if (minimize_on && !cli_interrupted && budget <= 0) {
			snprintf(mnote, sizeof(mnote),
				 "not done (no time left of --max-time %g s); "
				 "minimum not proven", eo.max_time);
			minimize_on = false;
			no_time = true;
		}
		cli_progress_begin("minimizing", eo.progress);
		int clear = bounds_clear(&eo, &er);
		bool proven = false;

		if (minimize_on && !cli_interrupted) {
			/* minimise a copy: replay the original by step */
			if (run_by_step(&eo.cfg, orig->decisions,
					orig->ndecisions, &best) == 0 &&
			    fingerprint_equal(&best, orig)) {
				/* the found schedule is the best so far: the
				 * bound applies from here on */
				cli_bound_begin(&eo.cfg, budget);
				search_max_steps =
					minimize_cap_steps(&eo.cfg, &best);
				double t_min = cli_wall();
				unsigned pb = best.preemptions;
				size_t db = minimize_count_decisions(&best);
				struct minimize_stats ps = { 0 };
				bool capped = false;

				min_debug("start", &best, 0);
				minimize_process_first(&eo.cfg, &best, &ps);
				min_debug("process-first", &best, ps.runs);
				minimize_reorder_first(&eo.cfg, &best, 300,
						       &ms);
				min_debug("reorder+drop", &best, ms.runs);
				ms.runs += ps.runs;
				ms.preemptions_before = pb;
				ms.decisions_before = db;
				unsigned before = ms.preemptions_before;
				size_t dbefore = ms.decisions_before;

				/* a sample's schedule may need more
				 * preemptions than the bug: look for the same
				 * failure systematically below its count */
				if ((int)best.preemptions > clear)
					smaller_schedule(&eo, &eo.cfg, &best,
							 &ms, &clear, t_min,
							 min_time > 0,
							 &capped);
				ms.preemptions_before = before;
				ms.decisions_before = dbefore;
				bool stopped = cli_bound_hit();

				cli_bound_end(&eo.cfg);
				eo.cfg.max_steps = search_max_steps;
				search_max_steps = 0;
				struct run_result ex;

				bool exact = false, tree = false;

				if (rerun_exact(&eo.cfg, &best, &ex) == 0 &&
				    ex.trace_hash == best.trace_hash &&
				    ex.failure == best.failure) {
					run_result_free(&best);
					best = ex;
					exact = true;
				} else if (ex.events) {
					run_result_free(&ex);
				}
				for (int i = 0; i < best.nthreads; i++)
					tree |= best.threads[i].proc > 0;
				/* behind a runner a process may wait in the
				 * kernel for another's timing: a schedule that
				 * does not replay exactly twice is not kept */
				if (tree && exact && !cli_interrupted) {
					exact = rerun_exact(&eo.cfg, &best,
							    &ex) == 0 &&
						ex.trace_hash ==
							best.trace_hash;
					if (ex.events || ex.output)
						run_result_free(&ex);
				}
				if (tree && !exact && !cli_interrupted &&
				    best.preemptions < orig->preemptions) {
					run_result_free(&best);
					memset(&best, 0, sizeof(best));
					snprintf(mnote, sizeof(mnote),
						 "not kept: the minimised "
						 "schedule did not replay "
						 "exactly twice (a process "
						 "waited in the kernel for "
						 "another's timing); the found "
						 "schedule is saved");
					goto minimized;
				}
				if (cli_interrupted) {
					/* not verified to the end: keep the
					 * original */
					run_result_free(&best);
					memset(&best, 0, sizeof(best));
					snprintf(mnote, sizeof(mnote),
						 "not finished (interrupted)");
					goto minimized;
				}
				schedule_from_run(&sch, &prog, &co, sname,
						  eo.bound, &best);
				schedule_set_points(&sch, er.points,
						    er.npoints);
				(void)cli_coverage_to_schedule(
					&sch, cov_list, (size_t)ncov,
					cov_pairs, cov_covered);
				se = save_schedule(&sch, co.out_dir, id,
						   "minimized", files[1],
						   sizeof(files[1]));
				if (se) {
					fprintf(stderr,
						"ptloom: cannot write %s: %s\n",
						files[1], strerror(-se));
					files[1][0] = 0;
				}
				schedule_free(&sch);
				snprintf(mnote, sizeof(mnote),
					 "%u preemption%s (from %u), %zu "
					 "decision%s (from %zu)",
					 ms.preemptions_after,
					 ms.preemptions_after == 1 ? "" : "s",
					 ms.preemptions_before,
					 ms.decisions_after,
					 ms.decisions_after == 1 ? "" : "s",
					 ms.decisions_before);
				minimum_note(mnote, sizeof(mnote),
					     best.preemptions, clear);
				proven = clear >= (int)best.preemptions;
				if (capped && !proven && !stopped) {
					size_t l = strlen(mnote);

					snprintf(mnote + l, sizeof(mnote) - l,
						 "; the search below stopped "
						 "at its share of the bound "
						 "(as long as shrinking took, "
						 "at least %g s)",
						 MINIMIZE_PROOF_MIN);
				}
				if (stopped) {
					size_t l = strlen(mnote);

					snprintf(mnote + l, sizeof(mnote) - l,
						 "; stopped at its %.3g s bound "
						 "(%s): the best schedule so "
						 "far",
						 budget,
						 by_max_time ? "what --max-time "
							       "left"
						 : min_time > 0
							 ? "--minimize-time"
							 : "the default");
				}
			} else if (best.events || best.output) {
				run_result_free(&best);
				memset(&best, 0, sizeof(best));
			}
		}
		cli_bound_end(&eo.cfg);
minimized:
		cli_progress_end();
		const struct run_result *shown = files[1][0] ? &best : orig;
		char quoted[4096];

		char envs[4096] = "";

		shell_join(quoted, sizeof(quoted), prog.argv, prog.argc);
		/* the -e entries a replay applies only when confirmed */
		for (int i = 0; i < co.nenv_extra; i++) {
			char *kv[] = { "-e", co.env_extra[i] };
			size_t k = strlen(envs);

			if (!env_refused(&co.env_extra[i], 1, NULL, 0, NULL,
					 0))
				continue;
			shell_join(envs + k, sizeof(envs) - k, kv, 2);
			k = strlen(envs);
			snprintf(envs + k, sizeof(envs) - k, " ");
		}
		if (files[0][0] || files[1][0])
			snprintf(cmd, sizeof(cmd),
				 "ptloom replay %s%s%s -- %s", envs,
				 co.fail_on_child_crash
					 ? "--fail-on-child-crash "
					 : "",
				 files[1][0] ? files[1] : files[0], quoted);
		/* where the failing run left the last passing one */
		if (er.have_pass && !cli_interrupted &&
		    !(eo.max_time > 0 &&
		      cli_wall() - t_start >= eo.max_time)) {
			struct run_result p;

			if (rerun_exact(&eo.cfg, &er.pass, &p) == 0) {
				long k = trace_departure(orig->events,
							 orig->nevents,
							 p.events, p.nevents);

				if (k >= 0) {
					char a[512] = "-", b[512] = "-";

					if ((size_t)k < p.nevents)
						event_line(&p.events[k], p.syms,
							   p.nsyms, NULL, 0, a,
							   sizeof(a));
					if ((size_t)k < orig->nevents)
						event_line(&orig->events[k],
							   orig->syms,
							   orig->nsyms, NULL, 0,
							   b, sizeof(b));
					snprintf(depart, sizeof(depart),
						 "step %ld\n  passing run: %s\n"
						 "  failing run: %s",
						 k, a, b);
				}
				run_result_free(&p);
			}
		}
		describe_failure(orig, desc, sizeof(desc));
		/* the bound at which systematic search finds this failure:
		 * the preemptions of the (minimised) schedule; a failure a
		 * sample found says so, and is never given a bound above the
		 * requested one */
		unsigned pre = shown->preemptions;
		char found[160] = "";

		if (er.found_by == FOUND_HYBRID || er.found_by == FOUND_DISCOVERY)
			snprintf(found, sizeof(found),
				 "found by a %s sample with %u preemption%s",
				 er.found_by == FOUND_HYBRID
					 ? sampler_name(er.found_sampler)
					 : "race-discovery",
				 er.found_preemptions,
				 er.found_preemptions == 1 ? "" : "s");
		/* a sampler's failure that race discovery's run found (the
		 * sampler's runs did not; it was replayed after them, one run
		 * more): said so, not credited to the sampler */
		const char *by_discovery = er.found_by == FOUND_DISCOVERY
						   ? " by a race-discovery "
						     "sample"
						   : "";
		/* whether the minimised count is proven the fewest */
		const char *mproof = no_time    ? ", minimum not proven"
				     : !files[1][0] && !strncmp(mnote, "not ",
								4)
					     ? ", not minimised (see minimized:)"
				     : !files[1][0] ? ""
				     : proven	    ? ", minimal"
						    : ", minimum not proven";

		if (found[0] && (files[1][0] || no_time)) {
			size_t l = strlen(found);

			snprintf(found + l, sizeof(found) - l, ", %s",
				 proven && !no_time ? "minimal"
						    : "minimum not proven");
		}
		if (eo.strategy == STRAT_DFS && eo.delay_bound &&
		    er.found_by == FOUND_DFS)
			snprintf(summary, sizeof(summary),
				 "ptloom: FAIL %s after %llu run%s, delay bound "
				 "%d, %u preemption%s",
				 desc, (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", er.bound, pre,
				 pre == 1 ? "" : "s");
		else if (eo.strategy == STRAT_DFS && eo.delay_bound)
			snprintf(summary, sizeof(summary),
				 "ptloom: FAIL %s after %llu run%s, %u "
				 "preemption%s (%s)",
				 desc, (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", pre,
				 pre == 1 ? "" : "s",
				 found[0] ? found : "found by a sample");
		else if (eo.strategy == STRAT_DFS && (int)pre <= eo.bound)
			snprintf(summary, sizeof(summary),
				 "ptloom: FAIL %s after %llu run%s, bound %u%s%s%s",
				 desc, (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", pre,
				 found[0] ? " (" : "", found, found[0] ? ")" : "");
		else if (eo.strategy == STRAT_DFS)
			snprintf(summary, sizeof(summary),
				 "ptloom: FAIL %s after %llu run%s, %u "
				 "preemption%s (%s; beyond bound %d)",
				 desc, (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", pre,
				 pre == 1 ? "" : "s",
				 found[0] ? found : "found by a sample",
				 eo.bound);
		else if (er.found_preemptions != pre)
			snprintf(summary, sizeof(summary),
				 "ptloom: FAIL %s after %llu run%s (%s, %u "
				 "preemption%s%s; found with %u%s)",
				 desc, (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", sname, pre,
				 pre == 1 ? "" : "s", mproof,
				 er.found_preemptions, by_discovery);
		else
			snprintf(summary, sizeof(summary),
				 "ptloom: FAIL %s after %llu run%s (%s, %u "
				 "preemption%s%s%s%s)",
				 desc, (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", sname, pre,
				 pre == 1 ? "" : "s", mproof,
				 by_discovery[0] ? "; found" : "", by_discovery);
		if (!co.quiet) {
			print_failure_output(orig, true);
			if (depart[0])
				printf("first departure from the last passing "
				       "run: %s\n", depart);
			if (mnote[0])
				printf("minimized: %s\n", mnote);
			if (files[0][0])
				printf("saved: %s\n", files[0]);
			if (files[1][0])
				printf("%s %s\n", files[0][0] ? "      " : "saved:",
				       files[1]);
			if (cmd[0])
				printf("replay: %s\n", cmd);
		}
		rep.verdict = "fail";
		report_failure(&rep, shown, true, signame, sizeof(signame));
		rep.schedule_file = files[0][0] ? files[0] : NULL;
		rep.minimized_file = files[1][0] ? files[1] : NULL;
		rep.replay_command = cmd[0] ? cmd : NULL;
		rep.minimized_note = mnote[0] ? mnote : NULL;
		rep.minimum_proven = files[1][0] ? (proven ? 2 : 1)
				     : no_time	 ? 1
						 : 0;
		rep.departure = depart[0] ? depart : NULL;
		code = EXIT_FAIL;
		if (cli_interrupted) {
			/* found before the interrupt: saved and reported,
			 * and the exit code says it was cut short */
			size_t k = strlen(summary);

			snprintf(summary + k, sizeof(summary) - k,
				 "; interrupted by %s", signal_name(cli_interrupted));
			code = exit_interrupted();
			rep.interrupted = true;
		}
		if (co.free_children)
			strncat(summary, " (children not explored)",
				sizeof(summary) - strlen(summary) - 1);
		append(summary, sizeof(summary), "; %s", covshort);
		rep.summary = summary;
		printf("%s\n", summary);
		if (er.runs == 1 && !shown->preemptions && prog.nleft_out)
			/* the first run, with no preemption: the program's
			 * plain run under ptloom; one that needs a variable
			 * of the shell's fails so (a test's own setting) */
			fprintf(stderr,
				"ptloom: note: the first run failed, with no "
				"preemption, in ptloom's fixed environment, "
				"which left out %d of ptloom's variables (%s%s): "
				"-e NAME=VALUE passes one, --keep-env all\n",
				prog.nleft_out, prog.left_out,
				prog.nnamed_out < prog.nleft_out ? ", ..." : "");
		if (co.report && report_write(&rep, co.report_format,
					      co.report))
			fprintf(stderr, "ptloom: cannot write %s\n", co.report);
		github_report(&rep);
		if (files[1][0])
			run_result_free(&best);
	} else if (er.verdict == VERDICT_PASS && er.coverage_reached &&
		   !er.complete) {
		/* --min-coverage reached before the search ended */
		if (eo.strategy == STRAT_DFS)
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %llu run%s, --min-coverage %g "
				 "reached (preemption bound %d not exhausted)",
				 (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", eo.min_coverage,
				 er.bound);
		else
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %llu run%s (%s, sampled, not "
				 "exhaustive), --min-coverage %g reached",
				 (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", sname,
				 eo.min_coverage);
		rep.verdict = "pass";
		code = EXIT_PASS;
	} else if (er.verdict == VERDICT_PASS) {
		if (eo.strategy == STRAT_DFS) {
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %llu run%s, complete to "
				 "%s bound %d",
				 (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s",
				 eo.delay_bound ? "delay" : "preemption",
				 eo.bound);
			/* what a policy's bound counts (Python: GIL
			 * switches in the program's own code) */
			/* (in the processes it applied to: a CPython's) */
			const char *pl = er.have_pass ? er.pass.plevel : "";

			if (eo.cfg.policy && eo.cfg.policy->coverage && pl[0]) {
				size_t k = strlen(summary);
				/* and which processes kept C-level points */
				const char *cl = er.pass.clevel;

				if (!cl[0] && !strncmp(pl, "P0 ", 3) &&
				    !strchr(pl, ','))
					snprintf(summary + k, sizeof(summary) - k,
						 " (%s)", eo.cfg.policy->coverage);
				else if (!cl[0])
					snprintf(summary + k, sizeof(summary) - k,
						 " (%s in %s)",
						 eo.cfg.policy->coverage, esc(pl));
				else {
					char p2[200];

					snprintf(p2, sizeof(p2), "%s", esc(pl));
					snprintf(summary + k, sizeof(summary) - k,
						 " (%s in %s; C-level points "
						 "in %s)",
						 eo.cfg.policy->coverage, p2,
						 esc(cl));
				}
			}
		} else {
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %llu run%s (%s, sampled, not "
				 "exhaustive)",
				 (unsigned long long)er.runs,
				 er.runs == 1 ? "" : "s", sname);
		}
		rep.verdict = "pass";
		code = EXIT_PASS;
		if (eo.min_coverage > 0 && !cov_ok) {
			/* complete, but not the coverage asked for */
			char was[sizeof(summary)];

			snprintf(was, sizeof(was), "%s",
				 summary + strlen("ptloom: PASS"));
			snprintf(summary, sizeof(summary),
				 "ptloom: INCOMPLETE%s, below --min-coverage %g",
				 was, eo.min_coverage);
			rep.verdict = "incomplete";
			code = EXIT_INCOMPLETE;
		}
	} else if (er.killed || er.nondeterministic || unsupported) {
		snprintf(summary, sizeof(summary), "ptloom: INCOMPLETE %s",
			 er.error);
		rep.verdict = "incomplete";
		code = EXIT_INCOMPLETE;
	} else if (cli_interrupted) {
		snprintf(summary, sizeof(summary),
			 "ptloom: INTERRUPTED by %s after %llu run%s%s; no "
			 "failure found (an interrupted exploration is not a "
			 "pass)",
			 signal_name(cli_interrupted),
			 (unsigned long long)er.runs, er.runs == 1 ? "" : "s",
			 eo.strategy == STRAT_DFS ? ", bound not exhausted"
						  : "");
		rep.verdict = "incomplete";
		rep.interrupted = true;
		code = exit_interrupted();
	} else if (er.too_long) {
		snprintf(summary, sizeof(summary),
			 "ptloom: INCOMPLETE %s (a limit is not a pass)",
			 er.error);
		rep.verdict = "incomplete";
		code = EXIT_INCOMPLETE;
	} else if (cov_ok) {
		/* a budget ended the search, after the level asked for */
		snprintf(summary, sizeof(summary),
			 "ptloom: PASS %llu run%s, --min-coverage %g reached "
			 "(%s)",
			 (unsigned long long)er.runs, er.runs == 1 ? "" : "s",
			 eo.min_coverage,
			 eo.strategy == STRAT_DFS ? "bound not exhausted"
						  : "sampled, not exhaustive");
		rep.verdict = "pass";
		code = EXIT_PASS;
	} else if (eo.strategy != STRAT_DFS) {
		snprintf(summary, sizeof(summary),
			 "ptloom: INCOMPLETE %llu of %llu run%s (%s, %s); no "
			 "failure found (a limit is not a pass)",
			 (unsigned long long)er.runs,
			 (unsigned long long)eo.max_runs,
			 eo.max_runs == 1 ? "" : "s", sname,
			 cli_interrupted ? "interrupted"
					 : "stopped by --max-time");
		rep.verdict = "incomplete";
		code = EXIT_INCOMPLETE;
	} else {
		/* which budget: the run count or the time */
		char lim[96] = "";

		if (eo.max_runs && er.runs >= eo.max_runs)
			snprintf(lim, sizeof(lim), "-n %llu reached: ",
				 (unsigned long long)eo.max_runs);
		else if (eo.max_time > 0 && !cli_interrupted)
			snprintf(lim, sizeof(lim), "--max-time %g s reached: ",
				 eo.max_time);
		snprintf(summary, sizeof(summary),
			 "ptloom: INCOMPLETE %llu run%s, %sbound %d not "
			 "exhausted%s; no failure found (%sa limit is not a "
			 "pass)",
			 (unsigned long long)er.runs, er.runs == 1 ? "" : "s",
			 eo.delay_bound ? "delay " : "", er.bound,
			 cli_interrupted ? " (interrupted)" : "", lim);
		rep.verdict = "incomplete";
		code = EXIT_INCOMPLETE;
	}
	if (er.verdict != VERDICT_FAIL) {
		static struct crash_note notes[CHILD_CRASH_MAX];
		struct report_warning warns[CHILD_CRASH_MAX];
		size_t nw = er.ncrashes && !cli_interrupted
				    ? crash_warnings(&eo, &er, &prog, &co,
						     sname, warns, notes)
				    : 0;

		if (co.free_children)
			strncat(summary, " (children not explored)",
				sizeof(summary) - strlen(summary) - 1);
		for (size_t i = 0; i < nw; i++) {
			if (!co.quiet) {
				printf("warning: %s\n", notes[i].msg);
				if (notes[i].file[0])
					printf("  saved: %s\n  replay: %s\n",
					       notes[i].file, notes[i].cmd);
			}
			append(summary, sizeof(summary),
			       "; warning: %s died of %s in %llu run%s",
			       warns[i].process, notes[i].sig,
			       (unsigned long long)warns[i].runs,
			       warns[i].runs == 1 ? "" : "s");
		}
		rep.warnings = warns;
		rep.nwarnings = nw;
		if (eo.min_coverage > 0 && !cov_ok && code == EXIT_INCOMPLETE &&
		    !strstr(summary, "--min-coverage"))
			append(summary, sizeof(summary),
			       " (below --min-coverage %g)", eo.min_coverage);
		append(summary, sizeof(summary), "; %s", covtext);
		rep.summary = summary;
		printf("%s\n", summary);
		if (co.report && report_write(&rep, co.report_format,
					      co.report))
			fprintf(stderr, "ptloom: cannot write %s\n", co.report);
		github_report(&rep);
	}
	if (!co.quiet && isatty(2) && (er.nrace_points || er.nspin_points))
		fprintf(stderr, "ptloom: %zu racy instructions (%llu accesses "
				"observed in %.2f s), %zu spin points\n",
			er.nrace_points, (unsigned long long)er.accesses,
			er.discovery_seconds, er.nspin_points);
	if (!co.quiet && getenv("PTLOOM_STATS"))
		fprintf(stderr, "ptloom: %llu runs, %llu pruned, %.3f s "
				"(longest run %.3f s), %.1f runs/s, %.1f us/step, "
				"%u seccomp filter%s\n",
			(unsigned long long)er.runs,
			(unsigned long long)er.pruned, er.seconds,
			er.longest_run,
			er.seconds > 0 ? (double)er.runs / er.seconds : 0,
			er.total_steps ? er.seconds * 1e6 /
						 (double)er.total_steps
				       : 0,
			er.filters, er.filters == 1 ? "" : "s");
	if (!co.quiet && getenv("PTLOOM_STATS") &&
	    (!tracer_tsc_traps() || !tracer_watch_traps()))
		fprintf(stderr, "ptloom: this machine: %s%s%s\n",
			tracer_tsc_traps() ? ""
					   : "rdtsc runs under PR_SET_TSC "
					     "(answered at int3s on its sites)",
			!tracer_tsc_traps() && !tracer_watch_traps() ? "; "
								     : "",
			tracer_watch_traps() ? ""
					     : "debug-register watchpoints do "
					       "not trap (spin words watched "
					       "by single steps)");
	if (!co.quiet && getenv("PTLOOM_STATS") && er.clock_restarts)
		fprintf(stderr, "ptloom: the search started again with the "
				"clock in its state keys (a run read it)\n");
	if (!co.quiet && getenv("PTLOOM_STATS") && er.runs)
		fprintf(stderr, "ptloom: per run %.1f stops, %.1f steps, %.1f "
				"choices (decisions among two or more), %.1f "
				"state keys\n",
			(double)er.total_stops / (double)er.runs,
			(double)er.total_steps / (double)er.runs,
			(double)er.total_choices / (double)er.runs,
			(double)er.total_state_keys / (double)er.runs);
	if (!co.quiet && getenv("PTLOOM_STATS") && er.runs) {
		/* where the stops go: the kinds above 0.05 a run */
		fprintf(stderr, "ptloom: stops per run by kind:");
		for (int k = 0; k < STOPK_N; k++)
			if (er.stop_kinds[k] * 20 >= er.runs)
				fprintf(stderr, " %s %.1f", stop_kind_name(k),
					(double)er.stop_kinds[k] /
						(double)er.runs);
		fputc('\n', stderr);
	}
	if (!co.quiet && getenv("PTLOOM_STATS") && er.runs)
		fprintf(stderr, "ptloom: coverage: %llu pairs, %llu in both "
				"orders, %.1f us CPU per run to count them\n",
			(unsigned long long)cov_pairs,
			(unsigned long long)cov_covered,
			er.coverage_seconds * 1e6 / (double)er.runs);
	if (!co.quiet && getenv("PTLOOM_STATS") && er.discovery_runs)
		fprintf(stderr, "ptloom: race discovery %d runs, %.3f s, "
				"%llu accesses observed, %llu observation "
				"stops (%llu of them logged in the program "
				"instead), %llu single-steps, %llu stops at "
				"shared objects' atomics and free(); %d runs "
				"forked from its checkpoint, %d from exec (the "
				"template's pid was another process's then)\n",
			er.discovery_runs, er.discovery_seconds,
			(unsigned long long)er.accesses,
			(unsigned long long)er.discovery_stops,
			(unsigned long long)er.discovery_logged,
			(unsigned long long)er.discovery_steps,
			(unsigned long long)er.discovery_sync,
			er.discovery_forked, er.discovery_from_exec);
	if (!co.quiet && getenv("PTLOOM_STATS") &&
	    er.discovery_runtime_atomics)
		fprintf(stderr, "ptloom: race discovery: the language "
				"runtime's code observed in its first run, "
				"only its atomics in %d more; its own %zu "
				"races and %d shared atomic instructions are "
				"no points\n",
			er.discovery_runtime_atomics,
			er.discovery_runtime_races,
			er.discovery_runtime_atomics_left);
	if (!co.quiet && getenv("PTLOOM_STATS") && er.discovery_stack_shared)
		fprintf(stderr, "ptloom: race discovery: a thread's stack "
				"shared with another, %d runs observed "
				"stack-relative accesses\n",
			er.discovery_stack_runs);
	if (!co.quiet && getenv("PTLOOM_STATS") && er.discovery_hidden)
		fprintf(stderr, "ptloom: race discovery: %zu pairs only "
				"the lazy joins of shared objects' atomics "
				"order are points, not races\n",
			er.discovery_hidden);
	if (!co.quiet && getenv("PTLOOM_STATS") && er.discovery_costly)
		fprintf(stderr, "ptloom: race discovery: %zu races its "
				"feedback runs found are no points (too "
				"costly)\n",
			er.discovery_costly);
	if (!co.quiet)
		agent_note(er.agent_note);
	if (!co.quiet && er.outlived_runs)
		fprintf(stderr,
			"ptloom: note: %s still ran when P0 ended (in %llu of "
			"%llu runs): killed there, so what it would have done "
			"after is in no run (a process the program left "
			"behind, as `setsid` leaves one when it is a group "
			"leader, as under ptloom)\n",
			er.outlived, (unsigned long long)er.outlived_runs,
			(unsigned long long)er.runs);
	if (!co.quiet && getenv("PTLOOM_STATS") && er.runs)
		fprintf(stderr, "ptloom: trace digest %016llx over %llu runs\n",
			(unsigned long long)er.trace_digest,
			(unsigned long long)er.runs);
	if (!co.quiet && getenv("PTLOOM_STATS"))
		fprintf(stderr, "ptloom: %u runs forked from a checkpoint%s%s\n",
			er.checkpoint_forks, er.checkpoint_note[0] ? "; " : "",
			er.checkpoint_note);
	free(cov_list);
	free(cov_names);
	explore_result_free(&er);
	program_free(&prog);
	return code;
}
