/*
 * Wrappers that time their children (timeout(1), a shell `sleep N; kill`
 * watchdog, ctest's TIMEOUT property): a child that ends before the
 * wrapper's deadline in virtual time is seen to end first (never a false
 * FAIL of the wrapper's timer), and a racy child is still found and
 * replayed exactly through the wrapper.
 */
#include "common.h"

TestSuite(wrappers, .init = setup, .fini = teardown, .timeout = 240);

#define WHERE "fork_race T0 (worker at fork_race.c:"

/* The racy twin is found in the child and replays exactly; the correct
 * twin passes every sampled run and is no FAIL under dfs. */
static void twins(const char *const *wrapper)
{
	const char *argv[MAXARGS] = { NULL };
	int n = 0;

	argv[n++] = "-s";
	argv[n++] = "random";
	argv[n++] = "-n";
	argv[n++] = "40";
	argv[n++] = "--seed";
	argv[n++] = SEED;
	argv[n++] = "--";
	for (int i = 0; wrapper[i]; i++)
		argv[n++] = wrapper[i];
	argv[n++] = target("fork_race");
	argv[n] = NULL;
	struct res r = run9(argv[0], argv[1], argv[2], argv[3], argv[4],
			    argv[5], argv[6], argv[7], argv[8], argv[9],
			    argv[10], argv[11], (const char *)NULL);

	assert_exit(r, 1);
	assert_contains(summary(&r), WHERE, "the summary");
	replays_exactly(&r, WHERE);
	res_free(&r);

	argv[n - 1] = target("fork_race_fixed");
	r = run9(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5],
		 argv[6], argv[7], argv[8], argv[9], argv[10], argv[11],
		 (const char *)NULL);
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 40 runs");
	res_free(&r);
	/* the systematic search with its samples: never a FAIL */
	argv[0] = "-n";
	argv[1] = "150";
	r = run9(argv[0], argv[1], argv[4], argv[5], argv[6], argv[7],
		 argv[8], argv[9], argv[10], argv[11], (const char *)NULL);
	cr_assert(r.code == 0 || r.code == 3, "`%s`: exit %d\n%s\n%s", r.cmd,
		  r.code, r.out, r.err);
	res_free(&r);
}

Test(wrappers, timeout_5_sees_its_child_end_first)
{
	twins((const char *const[]){ "timeout", "5", NULL, NULL, NULL });
}

Test(wrappers, timeout_60_sees_its_child_end_first)
{
	twins((const char *const[]){ "timeout", "60", NULL, NULL, NULL });
}

/* sh: the child in the background, `(sleep 5; kill $pid) &`, wait */
Test(wrappers, shell_sleep_kill_watchdog_sees_its_child_end_first)
{
	twins((const char *const[]){ "sh", script("watchdog.sh"), NULL, NULL,
				     NULL });
}

/* ctest with a TIMEOUT property of 5 s around the test */
Test(wrappers, ctest_timeout_property_sees_its_test_end_first)
{
	char cmd[4 * PATH_MAX];

	if (system("command -v cmake >/dev/null 2>&1 && "
		   "command -v ctest >/dev/null 2>&1")) {
		skip_note("cmake/ctest missing (scripts/setup.sh installs "
			  "them): ctest TIMEOUT check skipped");
		cr_skip_test("cmake is not installed");
	}
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof(cmd),
			 "cmake -S '%s' -B '%s' -DPROGRAM='%s' >/dev/null",
			 script("ctest_timeout"), in_tmp(k ? "fixed" : "racy"),
			 target(k ? "fork_race_fixed" : "fork_race"));
		struct res c = sh(cmd);

		assert_exit(c, 0);
		res_free(&c);
	}
	struct res r = RUN9("-s", "random", "-n", "40", "--seed", SEED, "--",
			    "ctest", "--test-dir", in_tmp("racy"));

	assert_exit(r, 1);
	assert_contains(r.out, "timed (Failed)", "ctest's output");
	assert_contains(summary(&r), WHERE, "the summary");
	replays_exactly(&r, WHERE);
	res_free(&r);
	r = RUN9("-s", "random", "-n", "40", "--seed", SEED, "--", "ctest",
		 "--test-dir", in_tmp("fixed"));
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 40 runs");
	res_free(&r);
	r = RUN9("-n", "100", "--seed", SEED, "--", "ctest", "--test-dir",
		 in_tmp("fixed"));
	cr_assert(r.code == 0 || r.code == 3, "`%s`: exit %d\n%s\n%s", r.cmd,
		  r.code, r.out, r.err);
	res_free(&r);
}
