/*
 * Test-suite mode (`ptloom run --per-test`, cli/suite.c): each test a
 * runner starts is explored on its own, with a verdict of its own.
 */
#include "common.h"

TestSuite(suite_mode, .init = setup, .fini = teardown, .timeout = 300);

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The JUnit report x's first failure is in the testcase named name. */
static void first_failure_in(const char *x, const char *name)
{
	char want[300];
	const char *fail = strstr(x, "<failure");

	cr_assert_not_null(fail, "%s", x);
	const char *tc = fail;

	while (tc > x && strncmp(tc, "<testcase", 9))
		tc--;
	snprintf(want, sizeof(want), "name=\"%s\"", name);
	cr_assert(!strncmp(tc, "<testcase ", 10) && strstr(tc, want) &&
			  strstr(tc, want) < fail,
		  "the failing testcase is not %s:\n%s", name, tc);
}

/* The JUnit report x has one failure, in the testcase named name. */
static void fails_only_in(const char *x, const char *name)
{
	first_failure_in(x, name);
	cr_assert_eq(count_of(x, "<failure"), 1, "%s", x);
}

/* A printed "  replay: ptloom replay ..." line, run (quiet). */
static struct res replayed(const char *line)
{
	char *cmd;

	cr_assert(asprintf(&cmd, "'%s' replay -q %s", ptloom(),
			   line + strlen("  replay: ptloom replay ")) > 0);
	const char *rargv[] = { "sh", "-c", cmd, NULL };
	struct res p = run_argv((char *const *)rargv, NULL, 2 * CMD_TIMEOUT);

	free(cmd);
	return p;
}

/* cmake's project of six tests, five correct and one racy, in dir. */
static bool ctest_project(const char *dir)
{
	char cmd[4 * PATH_MAX];

	if (system("command -v cmake >/dev/null 2>&1 && "
		   "command -v ctest >/dev/null 2>&1")) {
		skip_note("cmake/ctest missing (scripts/setup.sh installs "
			  "them): ctest suite check skipped");
		return false;
	}
	snprintf(cmd, sizeof(cmd), "cmake -S '%s' -B '%s' -DTARGETS='%s' "
		 ">/dev/null", script("ctest_suite"), dir,
		 env_or("PTLOOM_TARGETS", "build/tests"));
	struct res c = sh(cmd);

	assert_exit(c, 0);
	res_free(&c);
	return true;
}

/* The JUnit report has one testcase per test, the racy one failing, and
 * its replay command reruns that test alone (not ctest) to the same
 * failure.  ctest itself, which ran each test once more, saw the racy
 * one fail (its failing schedule was followed inside ctest's run), and
 * the test's file replays through ctest too. */
static void six_tests(const char *jobs, const char *ptloom_jobs)
{
	if (!ctest_project(in_tmp("ct")))
		cr_skip_test("cmake is not installed");
	const char *argv[MAXARGS];
	int n = 0;

	argv[n++] = ptloom();
	argv[n++] = "run";
	argv[n++] = "--per-test";
	argv[n++] = "--output"; /* ctest's own output */
	/* bound 1: the correct tests' PASS (and the racy one's failure,
	 * after 12 runs at bound 1) as at the default bound 2: the five
	 * correct tests in 376 runs, not 1,682 (what is checked here is the
	 * split, the names, the report and the replays) */
	argv[n++] = "-p";
	argv[n++] = "1";
	if (ptloom_jobs) {
		argv[n++] = "-j";
		argv[n++] = ptloom_jobs;
	}
	const char *rest[] = { "--seed", SEED, "-o", in_tmp("out"),
			       "--report", in_tmp("r.xml"), "--report-format",
			       "junit", "--", "ctest", "--test-dir",
			       in_tmp("ct"), NULL };

	for (int i = 0; rest[i]; i++)
		argv[n++] = rest[i];
	if (jobs) {
		argv[n++] = "-j";
		argv[n++] = jobs;
	}
	argv[n] = NULL;
	struct res r = run_argv((char *const *)argv, NULL, CMD_TIMEOUT);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL 1 of 6 tests failed (racy_withdraw)");
	/* ctest's own verdicts: five passed, the racy one failed */
	assert_contains(r.out, "racy_withdraw (Subprocess aborted)",
			"ctest's output");
	assert_contains(r.out, "83% tests passed, 1 tests failed out of 6",
			"ctest's output");
	assert_contains(r.out, "in the runner's run: racy_withdraw: "
			       "reproduced: ", "the output");
	assert_contains(r.out, "runner: ctest --test-dir ", "the output");
	assert_contains(r.out, " exited with status 8\n", "the output");
	char *x = slurp(in_tmp("r.xml"));

	cr_assert_eq(count_of(x, "<testcase "), 6, "%s", x);
	assert_contains(x, "tests=\"6\" failures=\"1\" errors=\"0\" "
			   "skipped=\"0\"", "the JUnit report");
	static const char *names[] = { "locked_withdraw", "atomic_increment",
				       "atomic_increment_O2", "forked_withdraw",
				       "treiber_stack", "racy_withdraw" };

	for (int i = 0; i < 6; i++) {
		char want[128];

		snprintf(want, sizeof(want), "name=\"%s\"", names[i]);
		assert_contains(x, want, "the JUnit report");
	}
	/* strict JUnit consumers accept it */
	if (system("command -v xmllint >/dev/null 2>&1") == 0) {
		char v[3 * PATH_MAX];

		snprintf(v, sizeof(v), "xmllint --noout --schema "
			 "'%s/tests/corpus/junit.xsd' '%s'",
			 env_or("PTLOOM_SOURCE_ROOT", "."), in_tmp("r.xml"));
		struct res xv = sh(v);

		assert_exit(xv, 0);
		res_free(&xv);
	} else {
		skip_note("xmllint missing: JUnit schema check skipped");
	}
	fails_only_in(x, "racy_withdraw");
	free(x);
	char *line = line_with(r.out, "  replay: ");

	cr_assert_not_null(line, "%s", r.out);
	const char *cmd = line + strlen("  replay: ");

	cr_assert(!strstr(cmd, "ctest") && !strstr(cmd, " -- "),
		  "the replay reruns the test alone, from its file: %s", cmd);
	/* from another directory, with this process's own PATH (sh()
	 * puts ptloom's directory first: a replay refuses a recorded PATH
	 * its own environment does not hold) */
	char *from_root;

	cr_assert(asprintf(&from_root, "cd / && PATH='%s' '%s' replay "
			   "--report '%s' --report-format json %s",
			   env_or("PATH", "/usr/bin:/bin"), ptloom(),
			   in_tmp("replay.json"),
			   cmd + strlen("ptloom replay ")) > 0);
	struct res p = sh(from_root);

	free(from_root);
	assert_exit(p, 1);
	assert_contains(summary(&p), "(main at bank_nolock.c:", "the replay");
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "exact", "true");
	free(j);
	/* the same file through ctest: the racy test fails as recorded
	 * inside ctest's run, the other five pass */
	char *through;

	cr_assert(asprintf(&through, "PATH='%s' '%s' replay --report '%s' "
			   "--report-format json %s -- ctest --test-dir '%s'%s",
			   env_or("PATH", "/usr/bin:/bin"), ptloom(),
			   in_tmp("through.json"), cmd + strlen("ptloom replay "),
			   in_tmp("ct"),
			   jobs ? " -j 2" : "") > 0);
	struct res q = sh(through);

	free(through);
	assert_exit(q, 1);
	assert_contains(summary(&q), "ptloom: FAIL crash SIGABRT in T0 (main "
				     "at bank_nolock.c:", "the replay");
	assert_contains(summary(&q), ", reproduced through ctest --test-dir ",
			"the replay");
	j = slurp(in_tmp("through.json"));
	assert_json(j, "verdict", "fail");
	assert_contains(j, "\"exit_status\": 8", "the runner's exit");
	assert_contains(j, "racy_withdraw (Subprocess aborted)",
			"ctest's output in the report");
	free(j);
	res_free(&q);
	free(line);
	res_free(&p);
	res_free(&r);
}

Test(suite_mode, ctest_six_tests_one_verdict_each)
{
	six_tests(NULL, NULL);
}

/* ctest -j 2 runs two tests at a time: the same verdicts */
Test(suite_mode, ctest_parallel_six_tests_one_verdict_each)
{
	six_tests("2", NULL);
}

/* ... and explored by two nested explorations at a time (-j 2), each
 * test held at its exec until its own exploration ends */
Test(suite_mode, ctest_parallel_explored_in_parallel)
{
	six_tests("2", "2");
}

/* make check running four programs: four verdicts, the racy one failing,
 * named by its command line. */
Test(suite_mode, make_check_four_programs)
{
	char t[PATH_MAX + 8];

	snprintf(t, sizeof(t), "T=%s", env_or("PTLOOM_TARGETS",
					      "build/tests"));
	struct res r = PTL("run", "--per-test", "--seed", SEED, "-o",
			   in_tmp("out"), "--report", in_tmp("r.json"), "--",
			   "make", "-s", "-f", script("check.mk"), t, "check");

	assert_exit(r, 1);
	assert_contains(summary(&r), "ptloom: FAIL 1 of 4 tests failed (",
			"the summary");
	assert_contains(summary(&r), "bank_nolock)", "the summary");
	char *j = slurp(in_tmp("r.json"));

	cr_assert_eq(count_of(j, "\"rule\": "), 4, "%s", j);
	cr_assert_eq(count_of(j, "\"verdict\": \"pass\""), 3, "%s", j);
	free(j);
	res_free(&r);
}

/* Two tests of a script that talk through a file while both run are not
 * split, and their verdicts say why; a single program is explored as
 * usual. */
Test(suite_mode, script_tests_sharing_a_file_not_split)
{
	char cmd[2 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cd '%s' && '%s' run "
		 "--per-test -v --seed %s -o out --report r.json -- sh '%s'",
		 in_tmp("sh"), in_tmp("sh"), ptloom(), SEED,
		 script("share_file.sh"));
	struct res r = sh(cmd);

	assert_exit(r, 0);
	assert_contains(r.out, "not split: it writes ", "the verdicts");
	assert_contains(r.out, "not split: it reads ", "the verdicts");
	assert_contains(r.out, "explored with the whole command",
			"the verdicts");
	assert_contains(summary(&r), "with the whole command (not split)",
			"the summary");
	res_free(&r);
	r = PTL("run", "--per-test", "-q", "--seed", SEED, "-o",
		in_tmp("out"), "--", target("bank_locked"));
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	assert_contains(summary(&r), "complete to preemption bound 2",
			"a single program");
	res_free(&r);
}

/* A client test and its server test, started by a script to run at once,
 * talk over a Unix socket: each end is its own socket, yet one connection,
 * so neither is split (alone, the client finds no server and fails: a
 * false FAIL when it was split). */
Test(suite_mode, script_tests_talking_over_a_socket_not_split)
{
	char cmd[3 * PATH_MAX];

	/* bound 1: the whole command's PASS sees all 9 conflicting pairs
	 * in both orders in 214 runs (bound 2: 932) */
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cd '%s' && '%s' run "
		 "--per-test -v --seed %s --timeout 3 -p 1 -o out "
		 "--report r.json -- sh '%s' '%s'",
		 in_tmp("sock"), in_tmp("sock"), ptloom(), SEED,
		 script("share_socket.sh"), target("socket_pair_test"));
	struct res r = sh(cmd);

	assert_exit(r, 0);
	assert_contains(r.out, "client: not split: it writes socket:[",
			"the verdicts");
	assert_contains(r.out, "server: not split: it reads socket:[",
			"the verdicts");
	assert_summary(&r, "ptloom: PASS 2 tests, 0 explored on its own, 2 "
			   "with the whole command (not split)");
	res_free(&r);
}

/* A reader test and a writer test share a file through mmap while both
 * run: mapping a file shared counts as reading it (and writing it, when
 * writable), so neither is split (alone, the reader never sees the value
 * and fails: a false FAIL when it was split). */
Test(suite_mode, script_tests_sharing_a_mapped_file_not_split)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cd '%s' && '%s' run "
		 "--per-test -v --seed %s --timeout 3 -o out -- sh '%s' '%s'",
		 in_tmp("mmap"), in_tmp("mmap"), ptloom(), SEED,
		 script("share_mmap.sh"), target("mmap_pair_test"));
	struct res r = sh(cmd);

	assert_exit(r, 0);
	assert_contains(r.out, "reader: not split: it reads ", "the verdicts");
	assert_contains(r.out, "writer: not split: it writes ", "the verdicts");
	assert_summary(&r, "ptloom: PASS 2 tests, 0 explored on its own, 2 "
			   "with the whole command (not split)");
	res_free(&r);
}

/* meson test on a project with a racy test: the test fails under its own
 * meson name (meson-info/intro-tests.json), the correct one passes. */
Test(suite_mode, meson_test_racy_test_named)
{
	char cmd[4 * PATH_MAX];

	if (system("command -v meson >/dev/null 2>&1")) {
		skip_note("meson missing: meson test suite check skipped");
		cr_skip_test("meson is not installed");
	}
	snprintf(cmd, sizeof(cmd), "meson setup '%s' '%s' -Dfirst='%s' "
		 "-Dsecond='%s' >/dev/null", in_tmp("mb"), script("mesontest"),
		 target("bank_locked"), target("bank_nolock"));
	struct res c = sh(cmd);

	assert_exit(c, 0);
	res_free(&c);
	struct res r = PTL("run", "--per-test", "--seed", SEED, "--timeout",
			   "120", "-o", in_tmp("out"), "--report",
			   in_tmp("r.json"), "--", "meson", "test", "-C",
			   in_tmp("mb"));

	assert_exit(r, 1);
	assert_contains(summary(&r), "tests failed (second)", "the summary");
	assert_contains(r.out, ": first: ptloom: PASS", "the verdicts");
	res_free(&r);
}

/* pytest whose tests run compiled programs through subprocess: each
 * program is a test, named by pytest's test and its command line. */
Test(suite_mode, pytest_subprocess_programs)
{
	if (system(PYTHON3 " -c 'import pytest' 2>/dev/null")) {
		skip_note("pytest is not installed for %s (scripts/setup.sh "
			  "installs python3-pytest): skipped", PYTHON3);
		cr_skip_test("pytest is not installed");
	}
	char env[PATH_MAX + 32], rootdir[PATH_MAX + 16];

	snprintf(env, sizeof(env), "PTLOOM_TARGETS=%s",
		 env_or("PTLOOM_TARGETS", "build/tests"));
	/* test ids relative to the script's directory wherever the clone
	 * is (pytest's rootdir is otherwise the common ancestor of the
	 * current directory and the script: /tmp for a clone in /tmp) */
	snprintf(rootdir, sizeof(rootdir), "--rootdir=%s",
		 script("test_programs.py"));
	*strrchr(rootdir, '/') = 0;
	struct res r = PTL("run", "--per-test", "--seed", SEED, "--timeout",
			   "60", "-o", in_tmp("out"), "--report",
			   in_tmp("r.xml"), "--report-format", "junit", "-e",
			   env, "--", PYTHON3, "-m", "pytest", "-q", "-p",
			   "no:cacheprovider", rootdir,
			   script("test_programs.py"));

	assert_exit(r, 1);
	assert_contains(summary(&r), "ptloom: FAIL 1 of 3 tests failed "
				     "(test_programs.py::test_racy_withdraw: ",
			"the summary");
	char *x = slurp(in_tmp("r.xml"));

	cr_assert_eq(count_of(x, "<testcase "), 3, "%s", x);
	assert_contains(x, "name=\"test_programs.py::test_locked_withdraw: ",
			"the JUnit report");
	free(x);
	res_free(&r);
}

/* The runner's own failure, with every test passing alone, is a test of
 * its own ("runner") whose schedule replays exactly through the runner. */
Test(suite_mode, runner_failure_is_a_test_of_its_own)
{
	struct res r = PTL("run", "--per-test", "--seed", SEED, "-o",
			   in_tmp("out"), "--", "sh", script("runner_fails.sh"),
			   env_or("PTLOOM_TARGETS", "build/tests"));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL 1 of 2 tests failed (runner)");
	assert_contains(r.out, "bank_locked: ptloom: PASS", "the verdicts");
	char *line = line_with(r.out, "  replay: ");

	cr_assert_not_null(line, "%s", r.out);
	const char *cmd = line + strlen("  replay: ");
	char *again;

	cr_assert(strstr(cmd, " -- sh "), "through the runner: %s", cmd);
	cr_assert(asprintf(&again, "PATH='%s' '%s' replay --report '%s' "
			   "--report-format json %s",
			   env_or("PATH", "/usr/bin:/bin"), ptloom(),
			   in_tmp("replay.json"),
			   cmd + strlen("ptloom replay ")) > 0);
	struct res p = sh(again);

	assert_exit(p, 1);
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "exact", "true");
	free(j);
	free(again);
	free(line);
	res_free(&p);
	res_free(&r);
}

/* A Criterion binary of three tests, one racy: Criterion's workers
 * re-execute the runner for one test each, so each test is a unit of its
 * own, named as Criterion names it and explored as the runner filtered to
 * it; one JUnit testcase per test, the racy one failing, the other two
 * passing, and its replay command reruns that test alone to the same
 * failure. */
Test(suite_mode, criterion_tests_one_verdict_each)
{
	/* a Criterion run costs about 2 s (bench/processes.sh): three
	 * explorations of a few sampled runs each, not the minute a command
	 * usually gets (12: since a regular file's I/O between threads is a
	 * point, surw finds the racy test at its 8th run, not its 3rd) */
	const char *argv[] = { ptloom(), "run", "--per-test", "-v", "-s",
			       "surw", "-n", "12", "--no-minimize", "--timeout",
			       "120", "--seed", SEED, "-o", in_tmp("out"),
			       "--report", in_tmp("r.xml"), "--report-format",
			       "junit", "--", target("criterion_suite"), NULL };
	struct res r = run_argv((char *const *)argv, NULL, 4 * CMD_TIMEOUT);

	assert_exit(r, 1);
	/* the other two pass: the arena Criterion's runner and worker map
	 * apart is followed (it made them INCOMPLETE before) */
	assert_summary(&r, "ptloom: FAIL 1 of 3 tests failed (suite::racy); "
			   "2 passed");
	assert_contains(r.out, "ptloom: suite::plain: split as a test of the "
			       "fork-per-test runner P0: its worker ",
			"the rule, with -v");
	assert_contains(r.out, "--filter suite/plain`", "the rule, with -v");
	char *x = slurp(in_tmp("r.xml"));

	cr_assert_eq(count_of(x, "<testcase "), 3, "%s", x);
	assert_contains(x, "tests=\"3\" failures=\"1\" errors=\"0\"",
			"the JUnit report");
	assert_contains(x, "name=\"suite::locked\"", "the JUnit report");
	assert_contains(x, "name=\"suite::plain\"", "the JUnit report");
	fails_only_in(x, "suite::racy");
	free(x);
	char *line = line_with(r.out, "  replay: ");

	cr_assert_not_null(line, "%s", r.out);
	assert_contains(line, "--filter suite/racy", "the replay command");
	struct res p = replayed(line);

	assert_exit(p, 1);
	assert_contains(summary(&p), "(criterion_tests.c:", "the replay");
	free(line);
	res_free(&p);
	res_free(&r);
}

/* --suite-time: the command runs once to count its tests, then each test's
 * exploration gets what is left shared by the tests left (-v says so);
 * unused time goes to the tests after it.  Without --per-test it is a
 * usage error. */
Test(suite_mode, suite_time_shared_among_counted_tests)
{
	if (!ctest_project(in_tmp("ct")))
		cr_skip_test("cmake is not installed");
	struct res r = PTL("run", "--per-test", "-v", "--suite-time", "600",
			   "--seed", SEED, "-o", in_tmp("out"), "--", "ctest",
			   "--test-dir", in_tmp("ct"));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL 1 of 6 tests failed (racy_withdraw)");
	assert_contains(r.out, "ptloom: locked_withdraw: --max-time ",
			"the shares");
	assert_contains(r.out, ", its share of --suite-time 600 with 6 of 6 "
			       "tests left\n", "the shares");
	assert_contains(r.out, "ptloom: racy_withdraw: --max-time ",
			"the shares");
	assert_contains(r.out, " with 1 of 6 tests left\n", "the shares");
	res_free(&r);
	one_line_usage_error(PTL("run", "--suite-time", "5", "--",
				 target("bank_locked")));
}

/* ---- test programs that run their tests in one process ---- */

/* A test program built into bin by cmd (its output in bin.log) with
 * tool, which scripts/setup.sh --tests installs as package; without it
 * the test skips, saying why. */
static void build_or_skip(const char *tool, const char *package,
			  const char *cmd, const char *bin)
{
	char have[256];

	snprintf(have, sizeof(have), "command -v %s >/dev/null 2>&1", tool);
	if (system(have)) {
		skip_note("%s missing (scripts/setup.sh --tests installs "
			  "%s): its test program's split check skipped",
			  tool, package);
		cr_skip_test("%s is not installed", tool);
	}
	cr_assert_eq(system(cmd), 0, "%s failed (%s.log)", tool, bin);
}

/*
 * `--per-test -- BIN` of a test program with three or four tests, one of
 * them racy (`racy`): each test is a unit explored as BIN filtered to it
 * (`filter` in the rule and the replay command), named as the program
 * lists it, and one unit more is the tests together (the whole command);
 * one JUnit testcase each, the racy one failing, and its replay command
 * reruns that test alone to the same failure.
 */
static void in_process_cmd(const char *const *cmd, const char *base,
			   const char *const *opts, int ntests,
			   const char *racy, const char *filter,
			   const char *const *names)
{
	const char *argv[MAXARGS];
	int n = 0;
	char want[256], together[256];

	argv[n++] = ptloom();
	argv[n++] = "run";
	argv[n++] = "--per-test";
	argv[n++] = "-v";
	for (int i = 0; opts[i]; i++)
		argv[n++] = opts[i];
	const char *rest[] = { "--no-minimize", "--seed", SEED, "-o",
			       in_tmp("out"), "--report", in_tmp("r.xml"),
			       "--report-format", "junit", "--", NULL };
	for (int i = 0; rest[i]; i++)
		argv[n++] = rest[i];
	for (int i = 0; cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	struct res r = run_argv((char *const *)argv, NULL, 4 * CMD_TIMEOUT);

	assert_exit(r, 1);
	/* the tests together may fail too (the racy one in them) */
	assert_summary(&r, "ptloom: FAIL ");
	snprintf(want, sizeof(want), " of %d tests failed (%s", ntests + 1,
		 racy);
	assert_contains(summary(&r), want, "the summary");
	snprintf(together, sizeof(together), "%s: its %d tests together",
		 base, ntests);
	/* the rules, with -v */
	for (int i = 0; names[i]; i++) {
		char rule[256];

		snprintf(rule, sizeof(rule),
			 "ptloom: %s: split as one of the %d tests P0 runs in "
			 "its one process (", names[i], ntests);
		assert_contains(r.out, rule, "the rule, with -v");
	}
	char rule[512];

	snprintf(rule, sizeof(rule), "ptloom: %s: not split: ", together);
	assert_contains(r.out, rule, "the tests together, with -v");
	char *x = slurp(in_tmp("r.xml"));

	cr_assert_eq(count_of(x, "<testcase "), ntests + 1, "%s", x);
	for (int i = 0; names[i]; i++) {
		char nm[256];

		snprintf(nm, sizeof(nm), "name=\"%s\"", names[i]);
		assert_contains(x, nm, "the JUnit report");
	}
	/* the racy test's (the tests together may fail after it) */
	first_failure_in(x, racy);
	free(x);
	/* the racy test's replay: that test alone */
	char *line = NULL;

	for (const char *p = r.out; (p = strstr(p, "test ")); p++) {
		char head[256];

		snprintf(head, sizeof(head), ": %s: ptloom: FAIL", racy);
		const char *e = strchr(p, '\n');

		if (e && strstr(p, head) && strstr(p, head) < e) {
			/* the line after it */
			if (!strncmp(e + 1, "  replay: ", 10))
				line = strndup(e + 1, strcspn(e + 1, "\n"));
			break;
		}
	}
	cr_assert_not_null(line, "%s", r.out);
	/* explored (and recorded: the file replays it alone) as the
	 * command line narrowed to it */
	snprintf(rule, sizeof(rule), "ptloom: %s: split as one of ", racy);
	char *rl = line_with(r.out, rule);

	cr_assert_not_null(rl, "%s", r.out);
	assert_contains(rl, filter, "the racy test's rule");
	free(rl);
	struct res p = replayed(line);

	assert_exit(p, 1);
	assert_contains(summary(&p), "ptloom: FAIL", "the replay");
	free(line);
	res_free(&p);
	res_free(&r);
}

static void in_process_suite(const char *bin, const char *const *opts,
			     int ntests, const char *racy, const char *filter,
			     const char *const *names)
{
	const char *cmd[] = { bin, NULL };

	in_process_cmd(cmd, strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin,
		       opts, ntests, racy, filter, names);
}

/* target name, or the test skipped saying why (package: what installs
 * what it is built with) */
static const char *framework_target(const char *name, const char *package,
				    const char *framework)
{
	const char *bin = target(name);

	if (access(bin, X_OK)) {
		skip_note("%s missing (scripts/setup.sh installs it): %s "
			  "split check skipped",
			  package, framework);
		cr_skip_test("no %s binary", framework);
	}
	return bin;
}

/* A GoogleTest binary: its four tests (a value-parameterised test's two
 * instances named Nums/Square.Positive/0 and /1, as GoogleTest lists them)
 * one verdict each, explored as `--gtest_filter=NAME`. */
Test(suite_mode, gtest_tests_one_verdict_each)
{
	const char *bin =
		framework_target("gtest_suite", "libgtest-dev", "GoogleTest");
	const char *opts[] = { "-n", "40", NULL };
	const char *names[] = { "Bank.Locked", "Bank.Racy",
				"Nums/Square.Positive/0",
				"Nums/Square.Positive/1", NULL };

	in_process_suite(bin, opts, 4, "Bank.Racy",
			 "--gtest_filter=Bank.Racy", names);
}

/* A Catch2 binary: its three tests (the hidden one not among them) one
 * verdict each, explored as the binary running an escaped test spec of
 * the name ("racy\\, withdraw"): a comma separates specs and brackets
 * start a tag. */
Test(suite_mode, catch2_tests_one_verdict_each)
{
	const char *bin = framework_target("catch2_suite", "catch2", "Catch2");
	const char *opts[] = { "-n", "40", NULL };
	const char *names[] = { "bank: locked", "bank: racy, withdraw",
				"a [bracketed] name", NULL };

	in_process_suite(bin, opts, 3, "bank: racy, withdraw",
			 "bank: racy\\, withdraw", names);
}

/* A doctest binary: its four tests (the skipped one not among them) one
 * verdict each, explored as --dt-test-case=NAME; the failed WARN and the
 * expected failure pass as they do natively (doctest would break into
 * ptloom as into a debugger if /proc/self/status named it).  A name that
 * narrows the command line to more tests than one (doctest matches
 * names without case: "Bank: Locked" beside "bank: locked") leaves the
 * binary one program, saying why. */
Test(suite_mode, doctest_tests_one_verdict_each)
{
	const char *bin =
		framework_target("doctest_suite", "doctest-dev", "doctest");
	const char *opts[] = { "-n", "40", NULL };
	const char *names[] = { "bank: locked", "bank: racy, withdraw",
				"soft check", "known bug", NULL };

	in_process_suite(bin, opts, 4, "bank: racy, withdraw",
			 "--dt-test-case=bank: racy\\, withdraw", names);
	/* its own filters: "*o*" names every test and the exclusion leaves
	 * the two soft ones; each test's command line keeps the exclusion
	 * and puts its own name in the place of "*o*" */
	struct res r = PTL("run", "--per-test", "-v", "-n", "20", "--seed",
			   SEED, "-o", in_tmp("out2"), "--", bin,
			   "--test-case=*o*", "--test-case-exclude=bank*");
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 3 tests, 2 explored on its own, 1 "
			   "with the whole command");
	res_free(&r);
	/* two names alike but for their case: one program */
	r = PTL("run", "--per-test", "-v", "-n", "4", "--seed", SEED, "-o",
		in_tmp("out3"), "--", target("doctest_cases"),
		"--test-case-exclude=*racy*");
	assert_contains(r.out,
			"a test program of doctest, not split: its command "
			"line narrowed to bank: locked listed 2 tests, not "
			"that one",
			"-v");
	cr_assert_null(strstr(r.out, "tests together"), "%s", r.out);
	res_free(&r);
}

/* A Boost.Test binary: its five tests (the disabled one not among them)
 * one verdict each, explored as `--run_test=SUITE/NAME` before the test
 * module's own arguments ("--" and what follows, which it checks); a
 * template test case's instances by their names (one with a space,
 * quoted in the command line shown).  Its own selection (-t, or
 * BOOST_TEST_RUN_FILTERS in its environment) leaves it one program,
 * saying why. */
Test(suite_mode, boost_test_tests_one_verdict_each)
{
	const char *bin = framework_target("boost_suite", "libboost-test-dev",
					   "Boost.Test");
	/* (the racy test fails after 12 runs: seed 1) */
	const char *opts[] = { "-n", "24", NULL };
	const char *cmd[] = { bin, "--", "custom", NULL };
	const char *names[] = { "bank/locked", "bank/racy_withdraw",
				"module_arguments", NULL };

	in_process_cmd(cmd, "boost_suite", opts, 5, "bank/racy_withdraw",
		       "--run_test=bank/racy_withdraw -- custom`", names);
	/* (the rules only: one run each) */
	struct res r = PTL("run", "--per-test", "-v", "-n", "1", "--seed",
			   SEED, "-o", in_tmp("out2"), "--", bin, "--",
			   "custom");
	char *rl = line_with(r.out, "ptloom: sizes<unsigned long>: split ");

	cr_assert_not_null(rl, "%s", r.out);
	assert_contains(rl, " '--run_test=sizes<unsigned long>' -- custom`",
			"the template instance's rule");
	free(rl);
	res_free(&r);
	/* its own selection: one program */
	const char *own[][3] = {
		{ "-t", "bank/locked", "its command line has -t" },
		{ "--run=bank", NULL, "its command line has --run=bank" },
	};
	for (int i = 0; i < 2; i++) {
		r = PTL("run", "--per-test", "-v", "-n", "1", "--seed", SEED,
			"-o", in_tmp("out3"), "--", bin, own[i][0], own[i][1]);
		/* (the locked test alone: PASS, or INCOMPLETE at -n 1) */
		cr_assert(r.code == 0 || r.code == 3, "%s", r.out);
		assert_contains(r.out, own[i][2], "-v");
		cr_assert_null(strstr(r.out, "tests together"), "%s", r.out);
		res_free(&r);
	}
	r = PTL("run", "--per-test", "-v", "-n", "1", "--seed", SEED, "-e",
		"BOOST_TEST_RUN_FILTERS=bank/locked", "-o", in_tmp("out4"),
		"--", bin);
	cr_assert(r.code == 0 || r.code == 3, "%s", r.out);
	assert_contains(r.out,
			"a test program of Boost.Test, not split: its "
			"environment has BOOST_TEST_RUN_FILTERS",
			"-v");
	res_free(&r);
}

/* A Rust test binary: libtest runs its tests in threads at once; each is
 * explored as `--exact NAME`.  Its own selection counts (a filter lists
 * fewer tests), and a command line that only lists is one program. */
Test(suite_mode, rust_libtest_tests_one_verdict_each)
{
	char cmd[4 * PATH_MAX], bin[PATH_MAX];

	snprintf(bin, sizeof(bin), "%s", in_tmp("rust_tests"));
	snprintf(cmd, sizeof(cmd),
		 "rustc --test -O -o '%s' '%s/tests/targets/rust_tests.rs' "
		 ">'%s.log' 2>&1",
		 bin, env_or("PTLOOM_SOURCE_ROOT", "."), bin);
	build_or_skip("rustc", "rustc", cmd, bin);
	const char *opts[] = { "-s", "surw", "-n", "30", NULL };
	const char *names[] = { "bank::racy_withdraw", "channel", "locked",
				NULL };

	in_process_suite(bin, opts, 3, "bank::racy_withdraw",
			 "--exact bank::racy_withdraw", names);
	/* its own filter: two tests listed, explored as the filter leaves
	 * them */
	struct res r = PTL("run", "--per-test", "-v", "-s", "surw", "-n", "5",
			   "--seed", SEED, "-o", in_tmp("out2"), "--", bin,
			   "l");
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 3 tests, 2 explored on its own, 1 "
			   "with the whole command");
	assert_contains(r.out, "(`", "the rule");
	assert_contains(r.out, " --exact channel`)", "the rule");
	res_free(&r);
	/* --list runs no test: one program, not split */
	r = PTL("run", "--per-test", "-v", "-n", "2", "--seed", SEED, "-o",
		in_tmp("out3"), "--", bin, "--list");
	assert_exit(r, 0);
	assert_contains(r.out, "not split: its command line has --list",
			"-v");
	cr_assert_null(strstr(r.out, "tests together"), "%s", r.out);
	res_free(&r);
}

/* A Go test binary (`go test -c`): each test explored as
 * `-test.run=^NAME$`. */
Test(suite_mode, go_test_binary_tests_one_verdict_each)
{
	char cmd[6 * PATH_MAX], bin[PATH_MAX];

	snprintf(bin, sizeof(bin), "%s", in_tmp("go_tests"));
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && GOCACHE='%s/gocache' GOPATH='%s/gopath' "
		 "GOFLAGS=-mod=mod go test -c -o '%s' "
		 "'%s/tests/targets/go_tests_test.go' >'%s.log' 2>&1",
		 tmp, tmp, tmp, bin, env_or("PTLOOM_SOURCE_ROOT", "."), bin);
	build_or_skip("go", "golang-go", cmd, bin);
	/* (the racy test is found after 2 runs, the three together after
	 * 1: seed 1) */
	const char *opts[] = { "-s", "pos", "-n", "5", NULL };
	const char *names[] = { "TestLocked", "TestChannel",
				"TestRacyWithdraw", NULL };

	in_process_suite(bin, opts, 3, "TestRacyWithdraw",
			 "-test.run=^TestRacyWithdraw$", names);

	/* through `go test` itself: its compile, link and vet are build
	 * steps, not tests; its test binary (linked stripped) is split */
	char mod[PATH_MAX], gocache[PATH_MAX + 16], gopath[PATH_MAX + 16];

	snprintf(mod, sizeof(mod), "%s", in_tmp("gomod"));
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && cp '%s/tests/targets/go_tests_test.go' "
		 "'%s/' && printf 'module gotests\\ngo 1.19\\n' "
		 ">'%s/go.mod'",
		 mod, env_or("PTLOOM_SOURCE_ROOT", "."), mod, mod);
	cr_assert_eq(system(cmd), 0);
	snprintf(gocache, sizeof(gocache), "GOCACHE=%s/gocache", tmp);
	snprintf(gopath, sizeof(gopath), "GOPATH=%s/gopath", tmp);
	char gocmd[PATH_MAX + 64];

	/* in the module (the shell execs go in its own process) */
	snprintf(gocmd, sizeof(gocmd), "cd '%s' && exec go test -count=1 .",
		 mod);
	/* each run builds the test binary again (from GOCACHE): `go`'s
	 * compile and link under ptrace take most of a minute on a loaded
	 * machine (52-55 s at load 5), so three of the usual limit */
	char *goargv[] = { (char *)ptloom(), "run", "--per-test", "-v", "-s",
			   "pos", "-n", "3", "--no-minimize", "--seed",
			   (char *)SEED, "-o", (char *)in_tmp("out_gotest"),
			   "-e", gocache, "-e", gopath, "-e",
			   "GOFLAGS=-mod=mod", "--", "sh", "-c", gocmd, NULL };
	struct res r = run_argv(goargv, NULL, 3 * CMD_TIMEOUT);

	assert_exit(r, 1);
	/* the tests, and their binary's tests together; the runner's own
	 * run follows the racy test's schedule, and may be one more unit,
	 * not covered: `go` names its build directory at random, so the
	 * test binary's run inside it is not the one found alone, and past
	 * where it parts from it, it can be too long for the limit */
	const char *sum = summary(&r);

	cr_assert(strstr(sum, " of 4 tests failed (TestRacyWithdraw") ||
			  (strstr(sum, " of 5 tests failed (TestRacyWithdraw") &&
			   strstr(sum, "1 not covered (a limit)") &&
			   strstr(r.out, "runner: ptloom: INCOMPLETE the "
					 "runner's own run")),
		  "%s\n%s", r.out, r.err);
	assert_contains(r.out, "not a test: a build step (Go's toolchain)",
			"-v");
	/* stripped, its code is still named, from Go's own table */
	assert_contains(r.out, "(runtime.exit+0x", "the failure's location");
	res_free(&r);
}

/* Python's unittest (threads at the Python level, tests/targets/
 * unittest_bank.py): `python3 -m unittest MODULE` has each test explored
 * as its command line with `-k '*ID'` (the ids that end with ID: that
 * one); a script calling unittest.main() the same, its tests' ids in
 * __main__.  A test named on the command line is loaded whatever -k
 * says, so such a command line is one program, saying why. */
Test(suite_mode, python_unittest_tests_one_verdict_each)
{
	char cp[2 * PATH_MAX];

	snprintf(cp, sizeof(cp), "cp '%s/tests/targets/unittest_bank.py' '%s'",
		 env_or("PTLOOM_SOURCE_ROOT", "."), tmp);
	cr_assert_eq(system(cp), 0);
	cr_assert_eq(chdir(tmp), 0);
	const char *cmd[] = { "/usr/bin/python3", "-m", "unittest",
			      "unittest_bank", NULL };
	/* the racy test is found after 14 runs (seed 1) */
	const char *opts[] = { "-n", "24", NULL };
	const char *names[] = { "unittest_bank.Bank.test_locked",
				"unittest_bank.Bank.test_racy",
				"unittest_bank.Bank.test_plain",
				"unittest_bank.Bank.test_skipped", NULL };

	in_process_cmd(cmd, "unittest", opts, 4, "unittest_bank.Bank.test_racy",
		       "-m unittest unittest_bank -k "
		       "'*unittest_bank.Bank.test_racy'`",
		       names);
	/* a script */
	/* (the rules only: one run each) */
	struct res r = PTL("run", "--per-test", "-v", "-n", "1", "--seed",
			   SEED, "-o", in_tmp("out2"), "--",
			   "/usr/bin/python3", "unittest_bank.py");
	assert_contains(r.out,
			"ptloom: __main__.Bank.test_racy: split as one of "
			"the 4 tests",
			"-v");
	assert_contains(r.out, "unittest_bank.py -k '*__main__.Bank.test_racy'`",
			"-v");
	assert_contains(r.out, "unittest_bank.py: its 4 tests together", "-v");
	res_free(&r);
	/* tests named on its command line */
	r = PTL("run", "--per-test", "-v", "-n", "1", "--seed", SEED, "-o",
		in_tmp("out3"), "--", "/usr/bin/python3", "-m", "unittest",
		"unittest_bank.Bank.test_racy", "unittest_bank.Bank.test_plain");
	assert_contains(r.out,
			"a test program of Python's unittest, not split: its "
			"test unittest_bank.Bank.test_racy is loaded whatever "
			"-k says",
			"-v");
	cr_assert_null(strstr(r.out, "tests together"), "%s", r.out);
	res_free(&r);
}

/* pytest (Python's threads at the Python level): its node ids, each
 * explored as the command line narrowed to it. */
Test(suite_mode, pytest_tests_one_verdict_each)
{
	if (system("/usr/bin/python3 -m pytest --version >/dev/null 2>&1")) {
		skip_note("pytest is not installed for /usr/bin/python3 "
			  "(scripts/setup.sh installs python3-pytest): "
			  "pytest split check skipped");
		cr_skip_test("no pytest");
	}
	FILE *f = fopen(in_tmp("test_bank.py"), "w");

	cr_assert_not_null(f);
	fputs("import threading, time\n"
	      "balance = 0\n"
	      "def run2(f):\n"
	      "    ts = [threading.Thread(target=f) for _ in range(2)]\n"
	      "    for t in ts: t.start()\n"
	      "    for t in ts: t.join()\n"
	      "def test_locked():\n"
	      "    n, lock = [0], threading.Lock()\n"
	      "    def add():\n"
	      "        with lock: n[0] += 1\n"
	      "    run2(add)\n"
	      "    assert n[0] == 2\n"
	      "def test_racy():\n"
	      "    global balance\n"
	      "    balance = 0\n"
	      "    def add():\n"
	      "        global balance\n"
	      "        v = balance\n"
	      "        time.sleep(0)\n"
	      "        balance = v + 1\n"
	      "    run2(add)\n"
	      "    assert balance == 2, 'lost update'\n"
	      "def test_plain():\n"
	      "    assert sorted([3, 1, 2]) == [1, 2, 3]\n",
	      f);
	fclose(f);
	cr_assert_eq(chdir(tmp), 0);
	const char *cmd[] = { "/usr/bin/python3", "-m", "pytest", "-q", "-p",
			      "no:cacheprovider", "test_bank.py", NULL };
	/* the racy test is found after 14 runs, the three together after
	 * 16 (seed 1) */
	const char *opts[] = { "-n", "24", NULL };
	const char *names[] = { "test_bank.py::test_locked",
				"test_bank.py::test_racy",
				"test_bank.py::test_plain", NULL };

	in_process_cmd(cmd, "pytest", opts, 3, "test_bank.py::test_racy",
		       "test_bank.py::test_racy", names);
}
