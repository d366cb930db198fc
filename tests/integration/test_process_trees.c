/*
 * Process trees: a crash that a parent hides behind its own exit status
 * is named beside the verdict (and is a failure with
 * --fail-on-child-crash); every process of a tree gets the scheduling of
 * its own image (Python-level for CPython, C-level for the rest).
 */
#include "common.h"

TestSuite(process_trees, .init = setup, .fini = teardown, .timeout = 240);

static char shell_line[PATH_MAX + 64];

static const char *and_true(const char *program)
{
	snprintf(shell_line, sizeof(shell_line), "'%s'; true", program);
	return shell_line;
}

/* `sh -c './racy; true'`: the exit status (0) stays the verdict, the
 * crash is named with its count, its schedule and a replay command that
 * reproduces it as a failure, exactly; the JSON report carries it. */
Test(process_trees, crash_hidden_by_the_parent_is_named)
{
	struct res r = RUN9("-s", "random", "-n", "30", "--seed", SEED, "--",
			    "sh", "-c", and_true(target("counter_race")));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 30 runs");
	assert_contains(summary(&r), "; warning: P1 counter_race T0 died of "
			"SIGABRT in ", "the summary");
	char *w = line_with(r.out, "warning: ");

	cr_assert_not_null(w, "no warning line:\n%s", r.out);
	assert_contains(w, "(main at counter_race.c:", "the warning");
	char *rep = report();

	assert_contains(rep, "\"warnings\": [", "the JSON report");
	assert_contains(rep, "\"kind\": \"child_crash\"", "the JSON report");
	assert_contains(rep, "\"signal\": \"SIGABRT\"", "the JSON report");
	assert_contains(rep, "--fail-on-child-crash", "the JSON report");
	char *line = line_with(r.out, "  replay: ");

	cr_assert_not_null(line, "no replay line:\n%s", r.out);
	assert_contains(line, "replay --fail-on-child-crash ", "the replay");
	char *cmd = with_report(line + strlen("  replay: "),
				in_tmp("replay.json"));

	for (int i = 0; i < 2; i++) {
		struct res x = sh(cmd);

		assert_exit(x, 1);
		assert_contains(summary(&x), "ptloom: FAIL crash SIGABRT in P1 "
				"counter_race T0 (main at counter_race.c:",
				"the replay's summary");
		char *j = slurp(in_tmp("replay.json"));

		assert_json(j, "exact", "true");
		free(j);
		res_free(&x);
	}
	free(cmd);
	free(line);
	free(rep);
	free(w);
	res_free(&r);
}

/* the correct twin: no warning */
Test(process_trees, correct_child_behind_a_shell_has_no_warning)
{
	struct res r = RUN9("-s", "random", "-n", "20", "--seed", SEED, "--",
			    "sh", "-c", and_true(target("bank_locked")));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 20 runs");
	cr_assert(!strstr(r.out, "warning"), "%s", r.out);
	char *rep = report();

	assert_contains(rep, "\"warnings\": []", "the JSON report");
	free(rep);
	res_free(&r);
}

/* --fail-on-child-crash: the hidden crash is the failure, found,
 * minimised and replayed exactly */
Test(process_trees, crash_hidden_by_the_parent_fails_with_the_option)
{
	struct res r = RUN9("--fail-on-child-crash", "--seed", SEED, "--",
			    "sh", "-c", and_true(target("counter_race")));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in P1 counter_race T0 "
			   "(main at counter_race.c:");
	assert_contains(r.out, "replay: ptloom replay --fail-on-child-crash ",
			"the replay line");
	replays_exactly(&r, "P1 counter_race T0 (main at counter_race.c:");
	res_free(&r);
}

/* JUnit, SARIF and GitHub's annotations carry the warning too */
Test(process_trees, hidden_crash_is_a_warning_in_ci_reports)
{
	const char *junit = in_tmp("r.xml");
	char *argv[] = { (char *)ptloom(), "run", "-o", in_tmp("out"),
			 "-s", "random", "-n", "20", "--seed", SEED,
			 "--report", (char *)junit, "--report-format", "junit",
			 "--", "sh", "-c",
			 (char *)and_true(target("counter_race")), NULL };
	struct res r = run_argv(argv, "GITHUB_ACTIONS=true", CMD_TIMEOUT);

	assert_exit(r, 0);
	assert_contains(r.out, "::warning ", "GitHub's annotations");
	assert_contains(r.out, "died of SIGABRT", "GitHub's annotations");
	char *x = slurp(junit);

	assert_contains(x, "<property name=\"warning\" value=\"P1 "
			"counter_race T0 died of SIGABRT", "the JUnit report");
	assert_contains(x, "<system-err>warning: P1 counter_race T0",
			"the JUnit report");
	free(x);
	res_free(&r);
	argv[13] = "sarif";
	argv[11] = in_tmp("r.sarif");
	r = run_argv(argv, NULL, CMD_TIMEOUT);
	assert_exit(r, 0);
	x = slurp(in_tmp("r.sarif"));
	assert_contains(x, "\"ruleId\": \"ptloom/child_crash\"",
			"the SARIF report");
	assert_contains(x, "\"level\": \"warning\"", "the SARIF report");
	assert_json_loads(in_tmp("r.sarif"));
	free(x);
	res_free(&r);
}
