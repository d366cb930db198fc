/*
 * parallel and sharded exploration: -j and --shard give the serial verdict,
 * merge combines shards.
 */
#include "common.h"

TestSuite(parallel, .init = setup, .fini = teardown, .timeout = 240);

Test(parallel, one_seccomp_filter_per_worker)
{
	struct res r = run_stats((const char *const[]){ "-s", "pct", "-j", "2",
							 "-n", "600", "--seed",
							 SEED, NULL },
				 example("bank_fixed"));

	assert_exit(r, 0);
	/* and one in ptloom's own process: race discovery runs there
	 * once, before the workers start */
	cr_assert_leq(filters_of(&r), 3, "%s", r.err);
	res_free(&r);
}

/* The steps of the schedule file r saved (`ptloom show`, without its
 * name, the kernel's ids and the coverage when saved: the workers'
 * together). */
static char *saved_steps(const struct res *r)
{
	char file[4096], cmd[5000];

	replay_file(r, file);
	snprintf(cmd, sizeof(cmd),
		 "%s show %s | grep -v -e '^schedule ' -e '^kernel ids:' "
		 "-e '^coverage when saved:' -e 'not covered:'",
		 ptloom(), file);
	struct res s = sh(cmd);
	char *steps = strdup(s.out ? s.out : "");

	res_free(&s);
	return steps;
}

/* -j: race discovery is made once, before the workers, and they search
 * with its points: the dfs (without the state cache, whose pruning
 * depends on which worker met a state first) fails where the serial one
 * does, with the same schedule step for step. */
Test(parallel, race_discovery_once_for_all_workers)
{
	const char *opts[] = { "--dfs-only", "--no-state-cache", "-j", "2",
			       "--seed", SEED, "--no-minimize", NULL };
	const char *serial[] = { "--dfs-only", "--no-state-cache", "--seed",
				 SEED, "--no-minimize", NULL };
	struct res a = run_out("j2", opts, example("bank"), "PTLOOM_STATS=1");
	struct res b = run_out("j1", serial, example("bank"), "PTLOOM_STATS=1");

	assert_exit(a, 1);
	assert_exit(b, 1);
	char *sa = saved_steps(&a), *sb = saved_steps(&b);
	/* (the run counts are the workers' together, by then) */
	cr_assert(strlen(sa) > 200, "%s", sa);
	cr_assert_str_eq(sa, sb);
	/* one filter for the discovery, one per worker */
	cr_assert_leq(filters_of(&a), 3, "%s", a.err);
	free(sa);
	free(sb);
	res_free(&a);
	res_free(&b);
}

/* -j with a sampler: the failure is the first failing sample in the
 * seed's order, as in a serial run, whichever worker met one first in
 * time (a failing worker lowers the shared best sample; the others run
 * every sample before it).  Three times, under the load of three jobs. */
Test(parallel, samplers_fail_at_the_serial_first_failing_sample)
{
	const char *serial[] = { "-s", "random", "-n", "300", "--seed", SEED,
				 "--no-minimize", NULL };
	struct res b = run_out("s1", serial, example("bank"), NULL);

	assert_exit(b, 1);
	char *sb = saved_steps(&b);

	cr_assert(strlen(sb) > 200, "%s", sb);
	for (int i = 0; i < 3; i++) {
		const char *opts[] = { "-s", "random", "-j", "3", "-n", "300",
				       "--seed", SEED, "--no-minimize", NULL };
		struct res a = run_out("s3", opts, example("bank"), NULL);

		assert_exit(a, 1);
		char *sa = saved_steps(&a);

		cr_assert_str_eq(sa, sb, "-j 3, time %d", i + 1);
		free(sa);
		res_free(&a);
	}
	free(sb);
	res_free(&b);
}

/* -j 2 dfs: the same verdict and schedules as the serial search, with
 * either kind of bound. */
static void same_with_two_jobs_bound(const char *program, int want,
				     const char *bound)
{
	/* without the state cache the shards are exactly the serial set
	 * (with it, the run count depends on which worker met a state
	 * first: dfs_with_two_jobs_shares_the_state_cache) */
	struct res a = RUN(program, "--dfs-only", "--no-state-cache", "--seed",
			   SEED, "--bound", bound);
	struct res b = RUN(program, "--dfs-only", "--no-state-cache", "-j",
			   "2", "--seed", SEED, "--bound", bound);
	char *sa = summary(&a), *sb = summary(&b);

	assert_exit(a, want);
	assert_exit(b, want);
	if (want == 0) {
		/* the same set and number of schedules */
		cr_assert_str_eq(sb, sa, "-j 2: %s\nserial: %s", sb, sa);
	} else {
		/* the same first failure: all but the run count */
		*strstr(sa, " after ") = 0;
		*strstr(sb, " after ") = 0;
		cr_assert_str_eq(sb, sa, "-j 2: %s\nserial: %s", sb, sa);
		assert_contains(b.out, "replay: ", "-j 2's stdout");
	}
	free(sa);
	free(sb);
	res_free(&a);
	res_free(&b);
}

static void same_with_two_jobs(const char *program, int want)
{
	same_with_two_jobs_bound(program, want, "preemption");
}

/* Delay bounding deals the items that bound 0 makes for bounds beyond 1
 * out to the shards as well (they were explored by every shard). */
Test(parallel, delay_bound_dfs_with_two_jobs_equals_serial)
{
	same_with_two_jobs_bound(example("bank_fixed"), 0, "delay");
	same_with_two_jobs_bound(example("rwlock"), 0, "delay");
	same_with_two_jobs_bound(example("lost_wakeup"), 1, "delay");
}

/* The default hybrid: after the search, samples go on to twice its runs;
 * the shards' bound-0 runs count once there too, so -j 2 reports the
 * serial count. */
Test(parallel, hybrid_with_two_jobs_counts_the_serial_runs)
{
	const char *progs[] = { example("bank_fixed"),
				example("deadlock_fixed") };

	for (int i = 0; i < 2; i++) {
		struct res a = RUN(progs[i], "--no-state-cache", "--seed", SEED);
		struct res b = RUN(progs[i], "--no-state-cache", "-j", "2",
				   "--seed", SEED);
		char *sa = summary(&a), *sb = summary(&b);

		assert_exit(a, 0);
		assert_exit(b, 0);
		cr_assert_str_eq(sb, sa, "-j 2: %s\nserial: %s", sb, sa);
		free(sa);
		free(sb);
		res_free(&a);
		res_free(&b);
	}
}

/* (bank_fixed and pipe: dfs_with_two_jobs_has_the_serial_budget makes
 * their serial search, the same one, and checks that -j 2 within a
 * budget of one run more gives its summary, which an unlimited -j 2
 * would have to give too) */
Test(parallel, dfs_with_two_jobs_equals_serial_on_correct_examples)
{
	same_with_two_jobs(example("deadlock_fixed"), 0);
	same_with_two_jobs(example("lost_wakeup_fixed"), 0);
}

/* -n is the whole search's budget under -j as serially: a search that
 * fits in -n passes, one that does not is INCOMPLETE (before, each worker
 * had its share of -n, and bound 0, which every worker runs, counted in
 * each: bank_fixed's 126 runs with -n 127 were INCOMPLETE at 123). */
Test(parallel, dfs_with_two_jobs_has_the_serial_budget)
{
	const char *progs[] = { example("bank_fixed"), example("pipe") };

	for (int i = 0; i < 2; i++) {
		struct res a = RUN(progs[i], "--dfs-only", "--no-state-cache",
				   "--seed", SEED);
		char *sa = summary(&a), n[32], m[32];
		int runs = 0;

		assert_exit(a, 0);
		cr_assert_eq(sscanf(sa, "ptloom: PASS %d runs", &runs), 1, "%s",
			     sa);
		snprintf(n, sizeof(n), "%d", runs + 1);
		snprintf(m, sizeof(m), "%d", runs);
		struct res b = RUN(progs[i], "--dfs-only", "--no-state-cache",
				   "-j", "2", "--seed", SEED, "-n", n);
		struct res c = RUN(progs[i], "--dfs-only", "--no-state-cache",
				   "-j", "2", "--seed", SEED, "-n", m);
		char *sb = summary(&b);

		assert_exit(b, 0);
		cr_assert_str_eq(sb, sa, "-j 2 -n %s: %s\nserial: %s", n, sb,
				 sa);
		assert_exit(c, 3); /* as serially: the limit met is no pass */
		/* and it is the whole search's: two workers that both saw
		 * room for one more run do not both take it */
		for (int k = 2; k <= runs / 2; k += runs / 6 + 1) {
			char nk[32], want[64];

			snprintf(nk, sizeof(nk), "%d", k);
			snprintf(want, sizeof(want), "ptloom: INCOMPLETE %d runs,",
				 k);
			struct res d = RUN(progs[i], "--dfs-only",
					   "--no-state-cache", "-j", "2",
					   "--seed", SEED, "-n", nk);

			assert_exit(d, 3);
			assert_summary(&d, want);
			res_free(&d);
		}
		free(sa);
		free(sb);
		res_free(&a);
		res_free(&b);
		res_free(&c);
	}
}

/*
 * -j shares one state cache between its workers (dfs.c, struct
 * dfs_shared_cache): a correct program is complete with at most the runs
 * of the uncached shards, and a buggy one gives the serial search's first
 * failure (the summary but its run count).
 */
Test(parallel, dfs_with_two_jobs_shares_the_state_cache)
{
	/* bound 1 keeps it short: 218 runs or so, 285 uncached */
	const char *p = example("mutex_condvar");
	struct res b = RUN(p, "--dfs-only", "--points", "sync", "-p", "1", "-j",
			   "2", "--seed", SEED);
	struct res u = RUN(p, "--dfs-only", "--points", "sync", "-p", "1", "-j",
			   "2", "--no-state-cache", "--seed", SEED);

	assert_exit(b, 0);
	assert_exit(u, 0);
	assert_contains(b.out, "complete to preemption bound 1", "-j 2");
	cr_assert_gt(pass_runs(&b), 0, "%s", b.out);
	cr_assert_lt(pass_runs(&b), pass_runs(&u),
		     "cached -j 2: %s\nuncached: %s", b.out, u.out);
	res_free(&b);
	res_free(&u);
	const char *bugs[] = { example("bank"), example("deadlock"),
			       example("lost_wakeup"), target("order_violation") };

	for (int i = 0; i < 4; i++) {
		struct res s = RUN(bugs[i], "--dfs-only", "--seed", SEED);
		struct res j = RUN(bugs[i], "--dfs-only", "-j", "2", "--seed",
				   SEED);
		char *ss = summary(&s), *sj = summary(&j);

		assert_exit(s, 1);
		assert_exit(j, 1);
		*strstr(ss, " after ") = 0;
		*strstr(sj, " after ") = 0;
		cr_assert_str_eq(sj, ss, "-j 2: %s\nserial: %s", sj, ss);
		free(ss);
		free(sj);
		res_free(&s);
		res_free(&j);
	}
}

/* Without the state cache the shards are exactly the serial runs: the
 * same trace digest (PTLOOM_STATS; the workers' digests summed, bound 0
 * once) as the serial search. */
Test(parallel, dfs_with_two_jobs_runs_the_serial_runs)
{
	const char *progs[] = { example("bank_fixed"),
				example("deadlock_fixed") };

	for (int i = 0; i < 2; i++) {
		struct res a = run_stats((const char *const[]){
						 "--dfs-only", "--no-state-cache",
						 "--seed", SEED, NULL },
					 progs[i]);
		struct res b = run_stats((const char *const[]){
						 "--dfs-only", "--no-state-cache",
						 "-j", "2", "--seed", SEED, NULL },
					 progs[i]);
		char *da = line_with(a.err, "ptloom: trace digest ");
		char *db = line_with(b.err, "ptloom: trace digest ");

		assert_exit(a, 0);
		assert_exit(b, 0);
		cr_assert_not_null(da, "%s", a.err);
		cr_assert_not_null(db, "%s", b.err);
		cr_assert_str_eq(db, da, "-j 2: %s\nserial: %s", db, da);
		free(da);
		free(db);
		res_free(&a);
		res_free(&b);
	}
}

/* The summary's part after the run count: "complete to preemption
 * bound 2; 10 of 11 conflicting pairs ..." or ", bound 1; ..." */
static const char *after_runs(const char *s)
{
	const char *p = strstr(s, " runs");

	return p ? p + 5 : s;
}

/*
 * -j 2 keys states without the virtual clock until a systematic run reads
 * it, as the serial search does, and then every worker starts again with
 * the clock in its keys: a program that never reads it is complete
 * without starting again, one that reads it after its first choice starts
 * again and gets the serial verdict (the fixed twin complete with the
 * serial coverage, the buggy one the serial first failure, replayed
 * exactly).
 */
Test(parallel, two_jobs_key_the_clock_once_a_run_reads_it)
{
	struct res b = run_stats((const char *const[]){ "--dfs-only", "-j",
							 "2", "--seed", SEED,
							 NULL },
				 example("bank_fixed"));

	assert_exit(b, 0);
	assert_contains(b.out, "complete to preemption bound 2", "-j 2");
	cr_assert_null(strstr(b.err, "started again with the clock"), "%s",
		       b.err);
	res_free(&b);

	struct res s = run_stats((const char *const[]){ "--dfs-only", "--seed",
							 SEED, NULL },
				 target("clock_after_merge_fixed"));
	struct res j = run_stats((const char *const[]){ "--dfs-only", "-j",
							 "2", "--seed", SEED,
							 NULL },
				 target("clock_after_merge_fixed"));
	char *ss = summary(&s), *sj = summary(&j);

	assert_exit(s, 0);
	assert_exit(j, 0);
	assert_contains(j.err, "started again with the clock", "-j 2 stats");
	assert_contains(sj, "complete to preemption bound 2", "-j 2");
	cr_assert_str_eq(after_runs(sj), after_runs(ss),
			 "-j 2: %s\nserial: %s", sj, ss);
	free(ss);
	free(sj);
	res_free(&s);
	res_free(&j);

	s = RUN(target("clock_after_merge"), "--dfs-only", "--seed", SEED);
	j = RUN(target("clock_after_merge"), "--dfs-only", "-j", "2", "--seed",
		SEED);
	ss = summary(&s);
	sj = summary(&j);
	assert_exit(s, 1);
	assert_exit(j, 1);
	*strstr(ss, " after ") = 0;
	*strstr(sj, " after ") = 0;
	cr_assert_str_eq(sj, ss, "-j 2: %s\nserial: %s", sj, ss);
	replays_exactly(&j, "clock_after_merge.c:");
	free(ss);
	free(sj);
	res_free(&s);
	res_free(&j);
}

/* The default search (the hybrid, sleep sets, the state cache, race
 * points) on a producer/consumer with a condition variable: -j 2 is the
 * serial verdict, complete to the same bound with the same conflicting
 * pairs seen in both orders.  To bound 1 (412 runs; bound 2's 5,940
 * took 50 s of the suite; dfs_with_two_jobs_* go to bound 2). */
Test(parallel, two_jobs_reach_the_serial_verdict_and_coverage)
{
	const char *p = example("mutex_condvar");
	struct res s = RUN(p, "-p", "1", "--seed", SEED);
	struct res j = RUN(p, "-p", "1", "-j", "2", "--seed", SEED);
	char *ss = summary(&s), *sj = summary(&j);

	assert_exit(s, 0);
	assert_exit(j, 0);
	assert_contains(ss, "ptloom: PASS ", "serial");
	assert_contains(sj, "ptloom: PASS ", "-j 2");
	assert_contains(sj, "complete to preemption bound 1", "-j 2");
	cr_assert_str_eq(after_runs(sj), after_runs(ss), "-j 2: %s\nserial: %s",
			 sj, ss);
	free(ss);
	free(sj);
	res_free(&s);
	res_free(&j);
}

Test(parallel, dfs_with_two_jobs_finds_every_buggy_example)
{
	same_with_two_jobs(example("bank"), 1);
	same_with_two_jobs(example("deadlock"), 1);
	same_with_two_jobs(example("lost_wakeup"), 1);
	same_with_two_jobs(target("order_violation"), 1);
}

/* ptloom run --shard K/N with its JSON report in <tmp>/NAME. */
static struct res shard(const char *program, const char *k_of_n,
			const char *name)
{
	char *argv[MAXARGS];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = "run";
	argv[n++] = "-o";
	argv[n++] = in_tmp("out");
	argv[n++] = "--report";
	argv[n++] = in_tmp(name);
	argv[n++] = "--dfs-only";
	argv[n++] = "--seed";
	argv[n++] = SEED;
	argv[n++] = "--shard";
	argv[n++] = (char *)k_of_n;
	argv[n++] = "--";
	argv[n++] = (char *)program;
	argv[n] = NULL;
	return run_argv(argv, NULL, CMD_TIMEOUT);
}

Test(parallel, shards_together_explore_exactly_the_serial_set)
{
	struct res serial = RUN(example("bank_fixed"), "--dfs-only",
				"--no-state-cache", "--seed", SEED);
	struct res a = shard(example("bank_fixed"), "1/2", "s1.json");
	struct res b = shard(example("bank_fixed"), "2/2", "s2.json");

	assert_exit(serial, 0);
	assert_exit(a, 0);
	assert_exit(b, 0);
	struct res m = PTL("merge", in_tmp("s1.json"), in_tmp("s2.json"));

	assert_exit(m, 0);
	char *s = summary(&serial), *ms = summary(&m);

	/* "ptloom: PASS 281 runs, complete to preemption bound 2", then
	 * the same coverage ("; 3 of 3 conflicting pairs ...") */
	char *sc = strchr(s, ';'), *mc = strchr(ms, ';');

	cr_assert(sc && mc, "merged: %s\nserial: %s", ms, s);
	cr_assert_str_eq(mc, sc, "merged: %s\nserial: %s", ms, s);
	cr_assert_eq(strncmp(ms, s, (size_t)(sc - s)), 0,
		     "merged: %s\nserial: %s", ms, s);
	assert_contains(ms, "(2 shards)", "the merged summary");
	free(s);
	free(ms);
	res_free(&m);
	/* a shard missing is not a pass */
	m = PTL("merge", in_tmp("s2.json"));
	assert_exit(m, 3);
	assert_contains(m.out, "shard 1 missing", "merge's summary");
	res_free(&m);
	res_free(&serial);
	res_free(&a);
	res_free(&b);
}

Test(parallel, merge_of_a_failing_and_a_passing_shard_is_a_fail)
{
	/* timedlock_abort's one failing item lies in shard 1 of 2 */
	struct res a = shard(target("timedlock_abort"), "1/2", "t1.json");
	struct res b = shard(target("timedlock_abort"), "2/2", "t2.json");

	assert_exit(a, 1);
	assert_exit(b, 0);
	struct res m = PTL("merge", in_tmp("t2.json"), in_tmp("t1.json"));

	assert_exit(m, 1);
	assert_summary(&m, "ptloom: FAIL ");
	assert_contains(m.out, "(shard 1/2)", "merge's summary");
	char *want = line_with(a.out, "replay: ");
	char *got = line_with(m.out, "replay: ");

	cr_assert_not_null(want);
	cr_assert_not_null(got, "merge printed no replay command: %s", m.out);
	cr_assert_str_eq(got, want);
	free(want);
	free(got);
	res_free(&m);
	/* reports of different explorations do not merge */
	struct res f = shard(example("bank_fixed"), "2/2", "f.json");

	m = PTL("merge", in_tmp("t1.json"), in_tmp("f.json"));
	assert_exit(m, 2);
	res_free(&m);
	res_free(&f);
	res_free(&a);
	res_free(&b);
}

/* Children of pid, from /proc (any state). */
static int children_of(pid_t pid)
{
	char path[64], buf[4096];
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fscanf(f, "%4095s", buf) == 1)
		n++;
	fclose(f);
	return n;
}

Test(parallel, sigkill_of_ptloom_stops_every_worker)
{
	const char *jobs[] = { "dfs", "random" };

	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();

		cr_assert_geq(pid, 0);
		if (pid == 0) {
			int nul = open("/dev/null", O_RDWR);

			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
			if (chdir(tmp) < 0)
				_exit(126);
			execl(ptloom(), ptloom(), "run", "-q", "-j", "2", "-s",
			      jobs[i], "-n", "100000", "--seed", SEED, "--",
			      target("many_threads"), (char *)NULL);
			_exit(127);
		}
		/* wait until both workers exist, then kill ptloom */
		for (int k = 0; k < 400 && children_of(pid) < 2; k++)
			usleep(25000);
		cr_assert_geq(children_of(pid), 2, "no workers started");
		usleep(300000);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		check_leftovers("ptloom run -j 2, killed");
	}
}
