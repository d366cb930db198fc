/*
 * the search made smaller: sleep sets, DPOR, the state cache and delay
 * bounding keep every verdict.
 */
#include "common.h"

TestSuite(reduction, .init = setup, .fini = teardown, .timeout = 120);
/* The example (with opt, if any) is PASS complete to preemption bound 2
 * within the default budget. */
static void example_completes_bound_2(const char *name, const char *opt)
{
	char *argv[MAXARGS];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = "run";
	argv[n++] = "-o";
	argv[n++] = in_tmp("out");
	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "--seed";
	argv[n++] = SEED;
	argv[n++] = "--";
	argv[n++] = (char *)example(name);
	argv[n] = NULL;
	struct res r = run_argv(argv, NULL, 300 * slowdown());
	char *s = summary(&r);

	assert_exit(r, 0);
	assert_contains(s, "complete to preemption bound 2", "the summary");
	free(s);
	res_free(&r);
}

/* State caching: the barrier example (3 threads, 2 rounds, all on one
 * pthread_barrier_t) completes preemption bound 2 with the default options
 * and budget (over 20,000 runs without caching). */
Test(reduction, barrier_completes_bound_2_by_default)
{
	example_completes_bound_2("barrier", NULL);
}

/* mutex_condvar (a producer and consumers on one mutex and condvar)
 * completes preemption bound 2 within the default budget of 10,000 runs
 * (dfs alone: 3,683 runs with --seed 1; before state caching it did not
 * finish in 20,000).  --dfs-only keeps the test short: with the default
 * hybrid the samples after dfs double the runs. */
Test(reduction, mutex_condvar_completes_bound_2_within_the_budget)
{
	example_completes_bound_2("mutex_condvar", "--dfs-only");
}

/* array_tail at -O0: a writer's 1,200 points in a row (its stores to
 * a[0..399] and its counter's), main's two reads of a[399] between which
 * the last store must fall.  After 1,000 points in a row the writer
 * yields (fairness: leaving it is free, staying costs a preemption), so
 * what staying costs depends on how long it has run: sleep sets pruned
 * the one bound-2 run, at the yield, where main slept, and the search
 * said "PASS 3362 runs, complete to preemption bound 2".  Nothing sleeps
 * at a fairness yield now: FAIL, bound 2. */
Test(reduction, a_thread_past_its_fairness_yield_still_meets_the_others)
{
	struct res r = RUN(target("array_tail_O0"), "--seed", SEED,
			   "--no-minimize");

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT");
	res_free(&r);
}

/* Two threads strictly alternating 5+5 updates: about 9 preemptions, far
 * beyond the default bound 2, found by the hybrid's samples with default
 * options; the summary says a sample found it beyond the bound. */
Test(reduction, strict_alternation_found_with_default_options)
{
	struct res r = RUN(target("alternation"), "--seed", SEED);

	assert_exit(r, 1);
	char *s = line_with(r.out, "ptloom: FAIL");

	cr_assert_not_null(s, "%s", r.out);
	assert_contains(s, "alternation.c", "the summary");
	assert_contains(s, "sample", "the summary");
	assert_contains(s, "beyond bound 2", "the summary");
	free(s);
	/* minimised to about one switch per alternation (2K-1 = 9 at most;
	 * 8 when the first switch is free), not the sample's 15-25 */
	char *j = report();
	int p = json_num(j, "preemptions");

	cr_assert(p >= 1 && p <= 9, "minimised to %d preemptions: %s", p, j);
	/* bound p-1 cannot be explored completely in the minimiser's
	 * budget: the summary must not call it minimal */
	assert_contains(j, "\"minimum_proven\": false", "the report");
	free(j);
	s = line_with(r.out, "ptloom: FAIL");
	assert_contains(s, "minimum not proven", "the summary");
	free(s);
	res_free(&r);
}

/* The state key leaves out an exited thread's frames in the stack glibc
 * gave it, never memory the program gave as a stack and uses again after
 * the join: there the two writers' orders are different states, and the
 * failing one is reached at bound 0 (a key that dropped it gave a false
 * "PASS complete to preemption bound 0"). */
Test(reduction, state_key_keeps_a_reused_thread_stack)
{
	struct res r = RUN(target("stack_reuse"), "--dfs-only", "-p", "0",
			   "--seed", SEED);

	assert_exit(r, 1);
	char *s = line_with(r.out, "ptloom: FAIL");

	cr_assert_not_null(s, "%s", r.out);
	assert_contains(s, "stack_reuse.c", "the summary");
	free(s);
	res_free(&r);
}

/* Delay bounding: bank's bug needs one delay; bank_fixed is complete to
 * delay bound 2; it is serial for now. */
Test(reduction, delay_bound_finds_and_proves)
{
	struct res r = RUN(example("bank"), "--seed", SEED, "--bound", "delay",
			   "--dfs-only");

	assert_exit(r, 1);
	assert_contains(r.out, "delay bound 1", "the summary");
	res_free(&r);
	r = RUN(example("bank_fixed"), "--seed", SEED, "--bound", "delay");
	assert_exit(r, 0);
	assert_contains(r.out, "complete to delay bound 2", "the summary");
	res_free(&r);
	/* -j splits a delay-bounded search too (issue 10) */
	r = RUN(example("bank_fixed"), "--seed", SEED, "--bound", "delay", "-j",
		"2");
	assert_exit(r, 0);
	assert_contains(r.out, "complete to delay bound 2", "the -j 2 summary");
	res_free(&r);
	r = RUN(example("bank_fixed"), "--seed", SEED, "--bound", "sideways");
	assert_exit(r, 2);
	res_free(&r);
}

/* DPOR (--reduction dpor) proves bound 2 of deadlock_fixed in fewer runs
 * than sleep sets alone (both without the state cache, which DPOR turns
 * off), with the same verdict; -j 2 keeps sleep sets and equals the
 * serial sleep-set search. */
Test(reduction, dpor_completes_bound_2_in_fewer_runs)
{
	const char *p = example("deadlock_fixed");
	struct res dp = RUN(p, "--seed", SEED, "--dfs-only", "--reduction",
			    "dpor");
	struct res sl = RUN(p, "--seed", SEED, "--dfs-only", "--reduction",
			    "sleep", "--no-state-cache");
	struct res pj = RUN(p, "--seed", SEED, "--dfs-only", "--reduction",
			    "dpor", "-j", "2");

	assert_exit(dp, 0);
	assert_exit(sl, 0);
	assert_exit(pj, 0);
	assert_contains(dp.out, "complete to preemption bound 2", "DPOR");
	cr_log_info("deadlock_fixed bound 2: DPOR %ld runs, sleep sets %ld",
		    pass_runs(&dp), pass_runs(&sl));
	cr_assert_lt(pass_runs(&dp), pass_runs(&sl), "DPOR saves runs");
	cr_assert_eq(pass_runs(&pj), pass_runs(&sl), "-j 2 is sleep sets");
	res_free(&dp);
	res_free(&sl);
	res_free(&pj);
	struct res bad = RUN(p, "--seed", SEED, "--reduction", "optimal");

	assert_exit(bad, 2);
	res_free(&bad);
}

/* Every buggy example is still found by the systematic search with DPOR. */
Test(reduction, dpor_finds_every_buggy_example)
{
	static const char *const bugs[] = { "bank", "deadlock", "lost_wakeup" };

	for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
		struct res r = RUN(example(bugs[i]), "--seed", SEED,
				   "--dfs-only", "--no-minimize", "--reduction",
				   "dpor");

		assert_exit(r, 1);
		assert_contains(r.out, "ptloom: FAIL", bugs[i]);
		res_free(&r);
	}
}

/* ... and the buggy targets: a timeout no race can ask for
 * (timedlock_abort was a false PASS under DPOR), a lock-free ABA, an
 * order violation, a lost update. */
Test(reduction, dpor_finds_the_buggy_targets)
{
	static const char *const bugs[] = { "timedlock_abort", "treiber_aba",
					    "order_violation", "counter_race" };

	for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
		struct res r = RUN(target(bugs[i]), "--seed", SEED,
				   "--dfs-only", "--no-minimize", "--reduction",
				   "dpor");

		assert_exit(r, 1);
		assert_contains(r.out, "ptloom: FAIL", bugs[i]);
		res_free(&r);
	}
}
