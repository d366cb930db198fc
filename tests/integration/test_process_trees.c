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
static void hidden_crash_named_under_jobs(const struct res *one);

/* The systematic search cuts runs short (its reduction): the hidden
 * crash's count says how many of the runs it counts were, so that "7 of
 * 60 runs" is not read as 53 schedules that spared the process. */
Test(process_trees, hidden_crash_count_says_how_many_runs_were_cut_short)
{
	struct res r = RUN9("-n", "60", "--seed", SEED, "--", "sh", "-c",
			    and_true(target("counter_race")));
	char *w = line_with(r.out, "warning: ");

	assert_exit(r, 3);
	cr_assert_not_null(w, "no warning line:\n%s", r.out);
	assert_contains(w, " runs, ", "the warning");
	assert_contains(w, " of them cut short by the search's reduction; ",
			"the warning");
	res_free(&r);
}

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
	/* and under -j 2, compared with this serial run (it was made again
	 * by a case of its own, crash_hidden_by_the_parent_is_named_under_
	 * jobs) */
	hidden_crash_named_under_jobs(&r);
	res_free(&r);
}

/* The warning's part of a summary line ("; warning: ... in N runs"). */
static char *warning_part(const struct res *r)
{
	char *s = summary(r), *w = s ? strstr(s, "; warning: ") : NULL;
	char *out = w ? strdup(w) : NULL;

	free(s);
	return out;
}

/* -j workers collect hidden crashes too: the samplers' -j 2 names the
 * same process, signal and count as the serial run of the same samples
 * (one, counter_race's 30 random runs behind sh -c), with a saved
 * schedule that replays exactly as the failure; dfs's shards name it as
 * well. */
static void hidden_crash_named_under_jobs(const struct res *one)
{
	char *w1 = warning_part(one);

	cr_assert_not_null(w1, "serial: no warning\n%s", one->out);
	struct res r = RUN9("-s", "random", "-n", "30", "-j", "2", "--seed",
			    SEED, "--", "sh", "-c",
			    and_true(target("counter_race")));
	char *w2 = warning_part(&r);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 30 runs");
	cr_assert_not_null(w2, "-j 2: no warning\n%s", r.out);
	cr_assert_str_eq(w2, w1, "-j 2 and -j 1 differ");
	char *rep = report();

	assert_contains(rep, "\"kind\": \"child_crash\"", "the JSON report");
	free(rep);
	char *line = line_with(r.out, "  replay: ");

	cr_assert_not_null(line, "no replay line:\n%s", r.out);
	char *cmd = with_report(line + strlen("  replay: "),
				in_tmp("replay.json"));
	struct res x = sh(cmd);

	assert_exit(x, 1);
	assert_contains(summary(&x), "ptloom: FAIL crash SIGABRT in P1 "
			"counter_race T0", "the replay's summary");
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "exact", "true");
	free(j);
	res_free(&x);
	free(cmd);
	free(line);
	res_free(&r);

	struct res d = RUN9("-p", "1", "-n", "300", "-j", "2", "--seed", SEED,
			    "--", "sh", "-c", and_true(target("counter_race")));
	char *w3 = warning_part(&d);

	cr_assert(d.code == 0 || d.code == 3, "dfs -j 2: exit %d\n%s",
		  d.code, d.out);
	cr_assert(w3 && strstr(w3, "; warning: P1 counter_race T0 died of "
			       "SIGABRT in "),
		  "dfs -j 2: no warning\n%s", d.out);
	free(w1);
	free(w2);
	free(w3);
	res_free(&d);
}

#define NO_LEAKS "ASAN_OPTIONS=detect_leaks=0"

/* tests/targets/asan_use_after_free.c built by the compiler cc with
 * -fsanitize=address in the test's directory, as name; NULL (the test
 * skipped, saying why) when the compiler cannot build it or the result
 * does not report natively. */
static const char *asan_program_by(const char *cc, const char *name)
{
	static char cmd[3 * PATH_MAX], bin[PATH_MAX];

	snprintf(bin, sizeof(bin), "%s", in_tmp(name));
	snprintf(cmd, sizeof(cmd), "%s -fsanitize=address -g -O1 "
		 "-o '%s' '%s' 2>&1", cc, bin, script("asan_use_after_free.c"));
	struct res c = sh(cmd);

	if (c.code) {
		skip_note("skipping: %s cannot build with "
			  "-fsanitize=address: %s", cc, c.out);
		res_free(&c);
		return NULL;
	}
	res_free(&c);
	snprintf(cmd, sizeof(cmd), "%s '%s' 2>&1", NO_LEAKS, bin);
	struct res n = sh(cmd);
	bool ok = n.code == 1 && strstr(n.out, "ERROR: AddressSanitizer");

	if (!ok)
		skip_note("skipping: the -fsanitize=address program does not "
			  "report natively (exit %d): %.200s", n.code, n.out);
	res_free(&n);
	return ok ? bin : NULL;
}

/* the compiler of the build (gcc's runtime is libasan.so) */
static const char *asan_program(void)
{
	return asan_program_by("${CC:-cc}", "asan_uaf");
}

/* A sanitizer's report ends a process by an exit of its runtime (status
 * 1, no signal): behind `sh -c '...; true'` it is a hidden crash named
 * after the sanitizer, saved and replayed exactly as the failure, and a
 * failure with --fail-on-child-crash; the same instrumented program's
 * ordinary exit(1) is not.  No option is needed for LeakSanitizer: its
 * check at exit cannot run under ptrace, and ptloom turns it off. */
Test(process_trees, sanitizer_report_in_a_child_is_a_hidden_crash)
{
	const char *bin = asan_program();

	if (!bin)
		cr_skip_test("no -fsanitize=address program");
	struct res r = RUN9("-s", "random", "-n", "3", "--seed", SEED, "--",
			    "sh", "-c", and_true(bin));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 3 runs");
	assert_contains(summary(&r), "; warning: P1 asan_uaf T0 "
			"died of AddressSanitizer in 3 runs", "the summary");
	char *rep = report();

	assert_contains(rep, "\"kind\": \"child_crash\"", "the JSON report");
	assert_contains(rep, "AddressSanitizer", "the JSON report");
	free(rep);
	char *line = line_with(r.out, "  replay: ");

	cr_assert_not_null(line, "no replay line:\n%s", r.out);
	char *cmd = with_report(line + strlen("  replay: "),
				in_tmp("replay.json"));
	struct res x = sh(cmd);

	assert_exit(x, 1);
	assert_contains(summary(&x), "ptloom: FAIL crash AddressSanitizer in "
			"P1 asan_uaf T0", "the replay's summary");
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "exact", "true");
	free(j);
	res_free(&x);
	free(cmd);
	free(line);
	res_free(&r);

	struct res f = RUN9("--fail-on-child-crash", "--seed", SEED, "--",
			    "sh", "-c", and_true(bin));

	assert_exit(f, 1);
	assert_summary(&f, "ptloom: FAIL crash AddressSanitizer in P1 "
			   "asan_uaf T0");
	res_free(&f);

	char plain[PATH_MAX + 32];

	snprintf(plain, sizeof(plain), "'%s' x; true", bin);
	struct res o = RUN9("-s", "random", "-n", "2", "--seed", SEED, "--",
			    "sh", "-c", plain);

	assert_exit(o, 0);
	assert_summary(&o, "ptloom: PASS 2 runs");
	cr_assert(!strstr(o.out, "warning"), "%s", o.out);
	res_free(&o);
}

/* A correct sanitizer build passes with no option: LeakSanitizer's check
 * at exit, which stops the world with ptrace and so cannot run under any
 * tracer, is turned off (LSAN_OPTIONS gains detect_leaks=0) instead of
 * ending the program with its fatal error and exit status 1 (a false
 * FAIL); a user's LSAN_OPTIONS naming detect_leaks is left alone. */
Test(process_trees, correct_sanitizer_build_passes)
{
	const char *bin = asan_program();

	if (!bin)
		cr_skip_test("no -fsanitize=address program");
	struct res r = RUN9("--seed", SEED, "--", bin, "ok");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	res_free(&r);
	r = RUN9("-s", "random", "-n", "2", "--seed", SEED, "--", "sh", "-c",
		 and_true(bin));
	assert_exit(r, 0);
	assert_contains(summary(&r), "died of AddressSanitizer", "the summary");
	res_free(&r);
}

/* clang links the sanitizer's runtime into the program (gcc's is
 * libasan.so): the failure is named at the program's frame that made
 * the report, not at the runtime's exit under it
 * (__sanitizer::internal__exit), in a process behind a shell and in
 * the command's own. */
Test(process_trees, sanitizer_runtime_linked_into_the_program_names_its_caller)
{
	const char *bin = asan_program_by("clang", "asan_uaf_clang");

	if (!bin)
		cr_skip_test("no -fsanitize=address program built by clang");
	/* (sync points and no minimisation: the location is the first
	 * run's, and each run of it runs the symbolizer) */
	struct res r = RUN9("--fail-on-child-crash", "--points", "sync",
			    "--no-minimize", "--seed", SEED, "--", "sh", "-c",
			    and_true(bin));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash AddressSanitizer in P1 "
			   "asan_uaf_clang T0 (main at asan_use_after_free.c:"
			   "27)");
	res_free(&r);
	r = RUN9("--points", "sync", "--no-minimize", "--seed", SEED, "--",
		 bin);
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0 (main at "
			   "asan_use_after_free.c:27)");
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

/* A Python parent running a native test: the interpreter's process is
 * scheduled at the Python level, the child keeps its C-level and race
 * points, so its lost update is found and replayed exactly. */
static char py_line[PATH_MAX + 128];

static const char *py_calls(const char *program)
{
	snprintf(py_line, sizeof(py_line),
		 "import subprocess, sys; "
		 "sys.exit(subprocess.call(['%s']))", program);
	return py_line;
}

Test(process_trees, python_parent_runs_a_racy_native_child)
{
	if (access(PYTHON3, X_OK))
		cr_skip_test("no %s", PYTHON3);
	struct res r = RUN9("--seed", SEED, "--", PYTHON3, "-c",
			    py_calls(target("counter_race")));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 250 in P1 counter_race "
			   "T0 (main at counter_race.c:");
	replays_exactly(&r, "P1 counter_race T0 (main at counter_race.c:");
	res_free(&r);
	/* the correct twin */
	r = RUN9("-s", "random", "-n", "20", "--seed", SEED, "--", PYTHON3,
		 "-c", py_calls(target("bank_locked")));
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 20 runs");
	res_free(&r);
}

/* The coverage line says which process ran at which level. */
Test(process_trees, coverage_line_names_each_process_level)
{
	if (access(PYTHON3, X_OK))
		cr_skip_test("no %s", PYTHON3);
	struct res r = RUN9("--seed", SEED, "--", PYTHON3, "-c",
			    "import subprocess, threading; "
			    "t = threading.Thread(target=lambda: None); "
			    "t.start(); t.join(); "
			    "subprocess.call(['/bin/true'])");

	assert_exit(r, 0);
	assert_contains(summary(&r), "(Python-level: GIL switches at the "
			"eval-breaker checks of the program's own code in P0 "
			"python3", "the summary");
	assert_contains(summary(&r), "; C-level points in P1 true)",
			"the summary");
	res_free(&r);
}

/* seconds per ptloom command on a Python program behind a shell or make
 * (each run starts the interpreter: no checkpoint before the shell's
 * first thread) */
#define PY_TREE_TIMEOUT (240 * slowdown())

#define NEED_PY(ver)                                                        \
	const char *py = python_interpreter(ver);                           \
	if (!py)                                                            \
		cr_skip_test("CPython " ver " is not installed")

/* `sh -c 'PY bank.py'`: the interpreter is P1, a child of the shell. */
static const char *shell_runs(const char *py, const char *script)
{
	snprintf(shell_line, sizeof(shell_line), "'%s' '%s'", py,
		 py_example(script));
	return shell_line;
}

/*
 * A CPython child of a shell gets the Python level (the policy is decided
 * at its exec, not from the command's image): the bank race is found at
 * <= 2 preemptions and named in Python terms (the traceback's line, the
 * threads' threading names, bank.py:LINE in the trace), the minimized
 * schedule replays exactly, and the shell keeps its C-level points.  The
 * fixed twin never fails (complete to bound 2 on 3.11; 20 random runs on
 * the others, to keep the suite's time).
 */
static void python_child_of_a_shell(const char *py, bool complete)
{
	struct res r = run9_within(PY_TREE_TIMEOUT, "--seed", SEED, "--",
				   "sh", "-c", shell_runs(py, "bank.py"),
				   (const char *)NULL);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in P1 python3");
	assert_contains(summary(&r), "(main at bank.py:26)", "the summary");
	char *j = report();

	cr_assert_leq(json_num(j, "preemptions"), 2, "%s", j);
	char *minimized = strdup(json_get(j, "minimized_file"));

	cr_assert(minimized[0], "%s", j);
	replays_exactly(&r, "(main at bank.py:26)");
	res_free(&r);
	r = PTL("show", minimized);
	assert_exit(r, 0);
	assert_contains(r.out, "MainThread)", "show");
	assert_contains(r.out, " Lucas)", "show");
	assert_contains(r.out, " python at withdraw at bank.py:", "show");
	assert_contains(r.out, "<-- preemption (stops T", "show");
	res_free(&r);
	free(minimized);
	free(j);

	if (complete) /* to bound 1: bound 2 is python's own test's */
		r = run9_within(PY_TREE_TIMEOUT, "-q", "-p", "1", "--", "sh",
				"-c", shell_runs(py, "bank_fixed.py"),
				(const char *)NULL);
	else
		r = run9_within(PY_TREE_TIMEOUT, "-q", "-s", "random", "-n",
				"20", "--seed", SEED, "--", "sh", "-c",
				shell_runs(py, "bank_fixed.py"),
				(const char *)NULL);
	assert_exit(r, 0);
	if (complete)
		assert_contains(summary(&r), "complete to preemption bound 1 "
				"(Python-level: GIL switches at the eval-breaker "
				"checks of the program's own code in P1 python3",
				"the summary");
	else
		assert_summary(&r, "ptloom: PASS 20 runs");
	res_free(&r);
}

Test(process_trees, python_child_of_a_shell_3_11)
{
	NEED_PY("3.11");
	python_child_of_a_shell(py, true);
}

Test(process_trees, python_child_of_a_shell_3_12)
{
	NEED_PY("3.12");
	python_child_of_a_shell(py, false);
}

Test(process_trees, python_child_of_a_shell_3_13)
{
	NEED_PY("3.13");
	python_child_of_a_shell(py, false);
}

/* A Makefile target that runs a racy Python test: make (P0) keeps C-level
 * points, the interpreter it runs gets the Python level; found, and named
 * by the Python traceback. */
Test(process_trees, python_test_run_by_make_found)
{
	NEED_PY("3.11");
	char mk[PATH_MAX + 64];
	FILE *f = fopen(in_tmp("Makefile"), "w");

	cr_assert_not_null(f);
	fprintf(f, "test:\n\t'%s' '%s'\n", py, py_example("bank.py"));
	fclose(f);
	snprintf(mk, sizeof(mk), "%s", in_tmp("Makefile"));
	struct res r = run9_within(PY_TREE_TIMEOUT, "--seed", SEED, "--",
				   "make", "-s", "-f", mk, "test",
				   (const char *)NULL);

	if (r.code == 127 || strstr(r.err, "make: not found"))
		cr_skip_test("make is not installed");
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 2 in P1 python3 T0 "
			   "(main at bank.py:26)");
	replays_exactly(&r, "(main at bank.py:26)");
	res_free(&r);
}

/* Two interpreters one after the other in one shell: each is scheduled at
 * the Python level in its own process (its own GIL and threads), the
 * shell at the C level; the coverage line names both.  To bound 1 (256
 * runs; bound 2's 994 took 82 s of a CPU and tell nothing more here). */
Test(process_trees, two_interpreters_in_one_tree_each_get_the_python_level)
{
	NEED_PY("3.11");
	static const char prog[] = "import threading; "
				   "t = threading.Thread(target=lambda: None); "
				   "t.start(); t.join()";
	char line[2 * PATH_MAX + 256];

	snprintf(line, sizeof(line), "'%s' -c '%s'; '%s' -c '%s'", py, prog,
		 py, prog);
	struct res r = run9_within(PY_TREE_TIMEOUT, "-q", "-p", "1", "--seed",
				   SEED, "--", "sh", "-c", line,
				   (const char *)NULL);

	assert_exit(r, 0);
	assert_contains(summary(&r), "complete to preemption bound 1 "
			"(Python-level: GIL switches at the eval-breaker checks "
			"of the program's own code in P1 python3", "the summary");
	assert_contains(summary(&r), ", P2 python3", "the summary");
	assert_contains(summary(&r), "; C-level points in P0 ", "the summary");
	res_free(&r);
}
