/*
 * sampled exploration (random, pct, pos, hybrid): bugs found, correct
 * programs pass with their native output, seeds decide everything.
 */
#include "common.h"

TestSuite(sampling, .init = setup, .fini = teardown, .timeout = 120);

/* --- issue 2: random exploration, output, determinism, usage ------------ */

/*
 * A correct program passes `--strategy random` for several seeds, and its
 * output under ptloom is, run for run, what it prints natively.
 */
static void passes_random_with_native_output(const char *program)
{
	static const char *seeds[] = { "1", "7", "42" };
	/* the sanitizer build's run takes the first seed only: ASan and
	 * UBSan still watch ptloom through 50 runs of every program, and the
	 * normal run checks all three seeds */
	size_t nseeds = sanitized_run() ? 1
					: sizeof(seeds) / sizeof(seeds[0]);
	char *want = native(program);

	cr_assert(want[0], "%s prints nothing natively", program);
	for (size_t i = 0; i < nseeds; i++) {
		struct res r = RUN(program, "--strategy", "random", "--seed",
				   seeds[i], "--max-runs", "50", "--output");

		assert_exit(r, 0);
		assert_summary(&r, "ptloom: PASS 50 runs");

		char *got = program_lines(r.out);
		size_t wl = strlen(want);

		cr_assert_eq(strlen(got), 50 * wl,
			     "seed %s: output differs from 50 native runs:\n"
			     "native:\n%s\nunder ptloom:\n%s\nstderr:\n%s",
			     seeds[i], want, got, r.err);
		for (int k = 0; k < 50; k++)
			cr_assert(!strncmp(got + k * wl, want, wl),
				  "seed %s, run %d: output differs from the "
				  "native run:\nnative:\n%s\nunder ptloom:\n"
				  "%.*s\nstderr:\n%s", seeds[i], k, want,
				  (int)wl, got + k * wl, r.err);
		char *j = report();

		assert_json(j, "verdict", "pass");
		assert_json(j, "strategy", "random");
		assert_json(j, "failure", "null");
		assert_json(j, "seed", seeds[i]);
		cr_assert_eq(json_num(j, "runs"), 50);
		free(j);
		free(got);
		res_free(&r);
	}
	free(want);
}

#define CORRECT_EXAMPLE(name)                                               \
	Test(sampling, name##_passes_random_with_native_output)               \
	{                                                                   \
		passes_random_with_native_output(example(#name));           \
	}
CORRECT_EXAMPLE(bank_fixed)
CORRECT_EXAMPLE(deadlock_fixed)
CORRECT_EXAMPLE(lost_wakeup_fixed)
CORRECT_EXAMPLE(mutex_condvar)
CORRECT_EXAMPLE(barrier)
CORRECT_EXAMPLE(semaphore)
CORRECT_EXAMPLE(rwlock)
CORRECT_EXAMPLE(pipe)
CORRECT_EXAMPLE(join_many)
CORRECT_EXAMPLE(sleeps)

#define CORRECT_TARGET(name)                                                \
	Test(sampling, name##_passes_random_with_native_output)               \
	{                                                                   \
		passes_random_with_native_output(target(#name));            \
	}
CORRECT_TARGET(bank_locked)
CORRECT_TARGET(cpp_mutex)
CORRECT_TARGET(fork_exec)
CORRECT_TARGET(spin_yield)

Test(sampling, many_threads_passes_random)
{
	const char *t = target("many_threads");
	char *want = native(t);

	cr_assert_str_eq(want, "total=64\n");
	struct res r = RUN(t, "-s", "random", "--seed", SEED, "-n", "20",
			   "--output");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 20 runs");
	char *got = program_lines(r.out);

	for (const char *p = got; *p; p += strlen(want))
		cr_assert(!strncmp(p, want, strlen(want)),
			  "many_threads printed:\n%s", got);
	free(got);
	free(want);
	res_free(&r);
}

/* determinism's output under `run --output -s random -n 1 --seed 3`,
 * with PTLOOM_TSC_SITES set (sites: an int3 on each rdtsc the sweep
 * finds, as where PR_SET_TSC does not trap) or not (this machine's way),
 * the agent's rdtsc slots off (PTLOOM_TSC_SLOTS=0: the int3 or the
 * fault) */
static char *determinism_with(bool sites, int *rdtsc_sites)
{
	char *argv[] = { (char *)ptloom(), "run", "--output", "-s", "random",
			 "-n", "1", "--seed", "3", "--clock-start",
			 "1767225600", "--", (char *)target("determinism"),
			 NULL };

	setenv("PTLOOM_STATS", "1", 1);
	/* (no template: its stops before the first thread, main's rdtsc
	 * among them, are no run's) */
	struct res r = run_argv(argv, sites ? "PTLOOM_TSC_SITES=1 "
					      "PTLOOM_NO_CHECKPOINT=1 "
					      "PTLOOM_TSC_SLOTS=0"
					    : "PTLOOM_TSC_SITES=0 "
					      "PTLOOM_TSC_SLOTS=0", 60);
	unsetenv("PTLOOM_STATS");
	const char *k = strstr(r.err, " rdtsc-rdrand-site ");

	assert_exit(r, 0);
	*rdtsc_sites = k ? atoi(k + strlen(" rdtsc-rdrand-site ")) : 0;
	char *out = strdup(r.out);

	res_free(&r);
	return out;
}

/* Where the CPU runs rdtsc although PR_SET_TSC asked it to fault (an AMD
 * EPYC VM here: the hypervisor ignores the guest's CR4.TSD), the rdtsc
 * the sweep finds gets an int3 and the virtual clock's answer: the same
 * output in every invocation, and the same as where it faults. */
Test(sampling, rdtsc_answered_from_the_clock_where_the_cpu_does_not_trap_it)
{
	int n1 = 0, n2 = 0, n0 = 0;
	char *a = determinism_with(true, &n1);
	char *b = determinism_with(true, &n2);
	char *c = determinism_with(false, &n0);

	assert_contains(a, "rdtsc=", "determinism's output");
	cr_expect_str_eq(a, b, "two runs with --seed 3 and the rdtsc sites "
			 "differ");
	cr_expect_str_eq(a, c, "the rdtsc sites give other output than this "
			 "machine's own way");
	cr_expect(n1 >= 1, "the rdtsc of determinism.c's main was not taken "
		  "at its site (%d)", n1);
	free(a);
	free(b);
	free(c);
}

/* reads_rdrand's output under `run --output -s random -n 1 --seed S` */
static char *rdrand_output(const char *seed)
{
	struct res r = RUN(target("reads_rdrand"), "--output", "-s", "random",
			   "-n", "1", "--seed", seed);

	assert_exit(r, 0);
	char *out = strdup(r.out);

	res_free(&r);
	return out;
}

/* rdrand and rdseed never trap: each one the sweep finds gets an int3
 * and a number of the run's --seed stream (before, two invocations with
 * one seed printed two numbers); the carry set, a 16-bit result's upper
 * bits kept, as the CPU does. */
Test(sampling, cpu_random_numbers_come_from_the_seed)
{
	char *a = rdrand_output("1");

	if (strstr(a, "unsupported")) {
		free(a);
		cr_skip_test("this CPU has no rdrand (cpuid 1, ecx bit 30)");
	}
	char *b = rdrand_output("1");
	char *c = rdrand_output("2");

	assert_contains(a, "rdrand64=", "reads_rdrand's output");
	assert_contains(a, "/1 rdrand32=", "rdrand64's carry");
	assert_contains(a, "rdrand16=abcdef000000", "rdrand16's upper bits");
	cr_expect_str_eq(a, b, "two invocations with --seed 1 differ");
	cr_expect_str_neq(a, c, "--seed 1 and --seed 2 drew the same");
	free(a);
	free(b);
	free(c);
}

Test(sampling, correct_example_passes_pct)
{
	struct res r = RUN(example("mutex_condvar"), "-s", "pct", "--seed",
			   SEED, "-n", "30");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 30 runs");
	char *j = report();

	assert_json(j, "strategy", "pct");
	free(j);
	res_free(&r);
}

/* -n N is at most N executions: SURW's profile of the default schedule is
 * one of them (before, -n 1 made 2 runs and -n 3 made 4). */
Test(sampling, surw_profile_run_counts_toward_n)
{
	static const char *const n[] = { "1", "3" };

	for (int i = 0; i < 2; i++) {
		struct res r = RUN(example("bank_fixed"), "-s", "surw",
				   "--seed", SEED, "-n", n[i]);
		char want[64];

		snprintf(want, sizeof(want), "ptloom: PASS %s run%s ", n[i],
			 i ? "s" : "");
		assert_exit(r, 0);
		assert_summary(&r, want);
		res_free(&r);
	}
}

static char *determinism_output(const char *seed)
{
	/* the virtual clock starts at the real time unless fixed: with one
	 * start, the same seed prints the same times */
	struct res r = RUN(target("determinism"), "--output", "-s", "random",
			   "-n", "1", "--seed", seed, "--clock-start",
			   "1767225600");

	assert_exit(r, 0);
	cr_assert(strstr(r.out, "log="), "`%s` lost the program's output:\n"
		  "stdout:\n%s\nstderr:\n%s", r.cmd, r.out, r.err);
	char *out = strdup(r.out);

	res_free(&r);
	return out;
}

Test(sampling, same_seed_gives_byte_identical_output)
{
	char *a = determinism_output("3");
	char *b = determinism_output("3");

	assert_contains(a, "log=", "determinism's output");
	assert_contains(a, "getrandom=", "determinism's output");
	assert_contains(a, "at_random=", "determinism's output");
	cr_assert_str_eq(a, b, "two runs with --seed 3 differ");
	free(a);
	free(b);
}

Test(sampling, different_seeds_give_different_logs)
{
	char *logs[5];
	bool differ = false;

	for (int s = 1; s <= 5; s++) {
		char seed[8], *out;

		snprintf(seed, sizeof(seed), "%d", s);
		out = determinism_output(seed);
		logs[s - 1] = line_with(out, "log=");
		cr_assert_not_null(logs[s - 1], "no log= line:\n%s", out);
		cr_assert_eq(strlen(logs[s - 1]), strlen("log=") + 15,
			     "%s", logs[s - 1]);
		free(out);
	}
	for (int i = 0; i < 5; i++)
		for (int k = i + 1; k < 5; k++)
			differ |= strcmp(logs[i], logs[k]) != 0;
	cr_assert(differ, "seeds 1..5 all give %s", logs[0]);
	for (int i = 0; i < 5; i++)
		free(logs[i]);
}

/* A buggy example found by random sampling, with the right failure. */
static void found_by_random(const char *program, const char *kind,
			    const char *sig)
{
	struct res r = RUN(program, "-s", "random", "--seed", SEED,
			   "--max-runs", "200");
	char want[128], *j;

	assert_exit(r, 1);
	snprintf(want, sizeof(want), "ptloom: FAIL %s%s%s", kind,
		 sig ? " " : "", sig ? sig : "");
	assert_summary(&r, want);
	j = report();
	assert_json(j, "verdict", "fail");
	assert_json(j, "kind", kind);
	assert_json(j, "signal", sig ? sig : "null");
	free(j);
	res_free(&r);
}

Test(sampling, bank_found_by_random)
{
	found_by_random(example("bank"), "crash", "SIGABRT");
}

Test(sampling, deadlock_found_by_random)
{
	found_by_random(example("deadlock"), "deadlock", NULL);
}

Test(sampling, lost_wakeup_found_by_random)
{
	found_by_random(example("lost_wakeup"), "deadlock", NULL);
}

Test(sampling, bank_found_by_pct)
{
	struct res r = RUN(example("bank"), "-s", "pct", "--seed", SEED,
			   "--max-runs", "300");

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT");
	res_free(&r);
}

/* A failure a sampler's runs did not find, but a run of race discovery
 * did (replayed after the sampler's runs, one run more), is credited to
 * race discovery.  Before, `-s pct -n 1` on counter_race said "after 2
 * runs (pct, 3 preemptions)", as if pct had found it. */
Test(sampling, failure_found_by_race_discovery_is_not_credited_to_the_sampler)
{
	static const char *const sname[] = { "pct", "random" };

	for (int i = 0; i < 2; i++) {
		struct res r = RUN(target("counter_race"), "-s", sname[i], "-n",
				   "1", "--seed", "1", "--no-minimize");
		char *s = summary(&r);
		char want[64];

		assert_exit(r, 1);
		snprintf(want, sizeof(want), "after 2 runs (%s, ", sname[i]);
		cr_expect(strstr(s, want) &&
				  strstr(s, "; found by a race-discovery "
					    "sample)"),
			  "`%s`: %s", r.cmd, s);
		free(s);
		res_free(&r);
	}
}

Test(sampling, static_executable_found_named_and_proven)
{
	struct res r = RUN(target("bank_nolock_static"), "--seed", SEED);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
			   "bank_nolock.c:");
	replays_exactly(&r, "bank_nolock.c");
	res_free(&r);
	r = RUN(target("bank_locked_static"), "--seed", SEED);
	assert_exit(r, 0);
	char *s = summary(&r);

	assert_contains(s, "complete to preemption bound 2", "the summary");
	free(s);
	res_free(&r);
}

/* --- issue 11: minimal witnesses ---------------------------------------- */

/* A bug one preemption exposes among 8 threads: bound 0 alone does not
 * finish, a sample finds it with more preemptions, and minimisation must
 * get down to the one it needs. */
Test(sampling, eight_thread_bug_reported_with_one_preemption)
{
	struct res r = RUN(target("lost_update_8"), "--seed", SEED);

	assert_exit(r, 1);
	char *s = line_with(r.out, "ptloom: FAIL");

	cr_assert_not_null(s, "%s", r.out);
	assert_contains(s, ", bound 1", "the summary");
	free(s);
	char *j = report();

	cr_assert_eq(json_num(j, "preemptions"), 1, "%s", j);
	free(j);
	res_free(&r);
}

/* Requested bound 0, a sample finds it: the summary says so and names no
 * bound above 0. */
Test(sampling, sampled_failure_beyond_the_bound_says_so)
{
	struct res r = RUN(target("lost_update_8"), "--seed", SEED, "-p", "0");

	assert_exit(r, 1);
	char *s = line_with(r.out, "ptloom: FAIL");

	cr_assert_not_null(s, "%s", r.out);
	assert_contains(s, "sample", "the summary");
	assert_contains(s, "beyond bound 0", "the summary");
	cr_assert_null(strstr(s, ", bound 1"), "%s", s);
	free(s);
	res_free(&r);
}

/* PCT's deadlock schedules carry extra preemptions; one is enough. */
Test(sampling, pct_deadlock_minimized_to_one_preemption)
{
	struct res r = RUN(example("deadlock"), "--seed", "4", "-s", "pct");

	assert_exit(r, 1);
	char *j = report();

	assert_json(j, "kind", "deadlock");
	cr_assert_eq(json_num(j, "preemptions"), 1, "%s", j);
	free(j);
	res_free(&r);
}

/* A sampled failure minimised to 1 preemption, with bound 0 explored
 * completely by the minimiser: the summary and the report say the
 * minimum holds. */
Test(sampling, sampled_minimum_proven_by_the_bound_below)
{
	struct res r = RUN(target("bank_nolock"), "--seed", SEED, "-p", "0");

	assert_exit(r, 1);
	char *s = line_with(r.out, "ptloom: FAIL");

	cr_assert_not_null(s, "%s", r.out);
	assert_contains(s, "sample", "the summary");
	assert_contains(s, ", minimal;", "the summary");
	free(s);
	s = line_with(r.out, "minimized:");
	cr_assert_not_null(s, "%s", r.out);
	assert_contains(s, "bound 0 explored completely", "the minimized line");
	free(s);
	char *j = report();

	cr_assert_eq(json_num(j, "preemptions"), 1, "%s", j);
	assert_contains(j, "\"minimum_proven\": true", "the report");
	free(j);
	res_free(&r);
}

/* The SPSC ring's consumer busy-waits: its re-check must not be a forced
 * switch that only runs when the producer stops, or the window between
 * the producer's two stores is out of reach of priority samplers. */
Test(sampling, spinning_consumer_window_reached_by_pos_and_pct)
{
	const char *strategies[] = { "pos", "pct", "surw", "random" };

	for (int k = 0; k < 4; k++) {
		/* found, not minimised (each minimisation took 6 to 19 s) */
		struct res r = RUN(target("spsc_ring"), "-s", strategies[k],
				   "--seed", SEED, "-n", "1000",
				   "--no-minimize");

		assert_exit(r, 1);
		char *s = line_with(r.out, "ptloom: FAIL");

		cr_assert_not_null(s, "%s: %s", strategies[k], r.out);
		assert_contains(s, "spsc_ring.c", "the summary");
		free(s);
		res_free(&r);
	}
}
