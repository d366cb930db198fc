/*
 * test runners under ptloom: make -j, ctest, Criterion, meson test.
 */
#include "common.h"

TestSuite(test_runners, .init = setup, .fini = teardown, .timeout = 120);

Test(test_runners, make_j2_recipes_racing_on_a_file)
{
	struct res r = RUN9("--seed", SEED, "-n", "300", "--no-minimize", "--",
			    "make", "-j2", "-s", "-f", script("race.mk"));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 2");
	assert_contains(r.out, "lost update", "make's output");
	char *line = line_with(r.out, "replay: ");

	cr_assert_not_null(line);
	char *cmd = with_report(line + strlen("replay: "),
				in_tmp("replay.json"));
	struct res x = sh(cmd);

	assert_exit(x, 1);
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "exact", "true");
	free(j);
	free(cmd);
	free(line);
	res_free(&x);
	res_free(&r);
}

/* ctest (cmake from Debian, scripts/setup.sh): the racy test of a project
 * is found and named; the project of two correct tests passes. */
Test(test_runners, ctest_project_racy_test_found_and_named)
{
	char cmd[4 * PATH_MAX];

	if (system("command -v cmake >/dev/null 2>&1 && "
		   "command -v ctest >/dev/null 2>&1")) {
		skip_note("cmake/ctest missing (scripts/setup.sh installs "
			  "them): ctest check skipped");
		cr_skip_test("cmake is not installed");
	}
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof(cmd), "cmake -S '%s' -B '%s' -DRACY='%s' "
			 "-DCORRECT='%s' >/dev/null", script("ctest"),
			 in_tmp(k ? "fixed" : "racy"),
			 target(k ? "fork_race_fixed" : "fork_race"),
			 target("fork_race_fixed"));
		struct res c = sh(cmd);

		assert_exit(c, 0);
		res_free(&c);
	}
	struct res r = RUN9("-s", "random", "-n", "40", "--seed", "2",
			    "--no-minimize", "--", "ctest", "--test-dir",
			    in_tmp("racy"));

	assert_exit(r, 1);
	assert_contains(r.out, "racy_withdraw (Failed)", "ctest's output");
	assert_contains(summary(&r), "fork_race T0 (worker at fork_race.c:",
			"the summary");
	res_free(&r);
	r = RUN9("-s", "random", "-n", "30", "--seed", SEED, "--", "ctest",
		 "--test-dir", in_tmp("fixed"));
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 30 runs");
	res_free(&r);
	/* dfs: no false deadlock (libuv's SIGCHLD handling in a poll) */
	r = RUN9("-n", "30", "--seed", SEED, "--", "ctest", "--test-dir",
		 in_tmp("fixed"));
	cr_assert(r.code == 0 || r.code == 3, "exit %d\n%s\n%s", r.code,
		  r.out, r.err);
	res_free(&r);
}

/*
 * A Criterion test binary: Criterion forks and re-execs a worker per test,
 * stops it with SIGSTOP handshakes and talks to it over nanomsg.  Its
 * correct tests never fail under ptloom (they did: nanomsg's 60 s request
 * resend fired as a "slow machine" preemption and the runner saw a test
 * phase twice), whole and through --filter.
 */
Test(test_runners, criterion_correct_tests_never_fail)
{
	/* -n 2: every test of the binary in each run, about 45 s at -n 4
	 * on a loaded machine against the 60 s a command may take */
	struct res r = RUN9("--timeout", "120", "-n", "2", "--seed", SEED,
			    "--", target("criterion_tests"));

	cr_assert(r.code == 0 || r.code == 3, "exit %d\n%s\n%s", r.code,
		  r.out, r.err);
	res_free(&r);
	r = RUN9("--timeout", "120", "-n", "3", "--seed", SEED, "--",
		 target("criterion_tests"), "--filter", "suite/locked");
	cr_assert(r.code == 0 || r.code == 3, "exit %d\n%s\n%s", r.code,
		  r.out, r.err);
	res_free(&r);
}

/* A lost update between two threads of one Criterion test is found
 * through Criterion's own worker, saved and replayed exactly; the summary
 * names the worker's thread that failed the assertion and its line (the
 * worker reports it over a socket and exits 0: the runner's exit status
 * is the command's), the report the worker's threads by process. */
Test(test_runners, criterion_racy_test_found_and_replayed)
{
	struct res r = RUN9("--timeout", "120", "-s", "surw", "-n", "20",
			    "--seed", SEED, "--no-minimize", "--",
			    target("criterion_racy"));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in P1 criterion_racy "
			   "T0 (criterion_tests.c:");
	assert_contains(r.out, "lost update: counter 1", "Criterion's output");
	char *rep = report();

	assert_contains(rep, "P1 criterion_racy T1", "the report");
	free(rep);
	char *line = line_with(r.out, "replay: ");

	cr_assert_not_null(line, "no replay: line:\n%s", r.out);
	char *cmd = with_report(line + strlen("replay: "),
				in_tmp("replay.json"));
	struct res x = sh(cmd);

	assert_exit(x, 1);
	assert_contains(x.out, "P1 criterion_racy T0 (criterion_tests.c:",
			"the replay");
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "exact", "true");
	free(j);
	free(cmd);
	free(line);
	res_free(&x);
	res_free(&r);
}

/* meson test (meson's asyncio runner forks the tests): a project of two
 * correct tests passes under ptloom. */
Test(test_runners, meson_test_correct_project_passes)
{
	char cmd[4 * PATH_MAX];

	if (system("command -v meson >/dev/null 2>&1")) {
		skip_note("meson missing: meson test check skipped");
		cr_skip_test("meson is not installed");
	}
	snprintf(cmd, sizeof(cmd), "meson setup '%s' '%s' -Dfirst='%s' "
		 "-Dsecond='%s' >/dev/null", in_tmp("mb"), script("mesontest"),
		 target("fork_race_fixed"), target("fork_race_fixed"));
	struct res c = sh(cmd);

	assert_exit(c, 0);
	res_free(&c);
	struct res r = RUN9("--timeout", "120", "-s", "random", "-n", "3",
			    "--seed", SEED, "--output", "--", "meson", "test",
			    "-C", in_tmp("mb"));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 3 runs");
	assert_contains(r.out, "2/2 second", "meson's output");
	res_free(&r);
}
