/*
 * Python-level scheduling on every CPython present: Debian's python3
 * (3.11) and pyenv's newest 3.12 and 3.13 (a shared libpython each).
 * Each interpreter gets the same checks; one that is not installed is
 * skipped with a printed reason.
 *
 * pyenv is found without its shell integration (CI runs a fresh clone as
 * root, without pyenv's PATH): $PYENV_ROOT, else ~/.pyenv, else
 * /root/.pyenv; its versions/3.X.N/bin/python3.X, highest N.
 */
#include "common.h"

TestSuite(python_versions, .init = setup, .fini = teardown, .timeout = 900);

/* seconds per ptloom command on a Python program */
#define PYV_TIMEOUT (240 * slowdown())

#define NEED(ver)                                                           \
	const char *py = python_interpreter(ver);                           \
	if (!py)                                                            \
		cr_skip_test("CPython " ver " is not installed")

/* ptloom CMD [opts] -- PY SCRIPT; run gets -o out, --report report.json,
 * --timeout and --seed. */
static struct res pyv(const char *cmd, const char *py,
		      const char *const *opts, const char *script)
{
	char *argv[MAXARGS];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = (char *)cmd;
	if (!strcmp(cmd, "run")) {
		argv[n++] = "-o";
		argv[n++] = in_tmp("out");
		argv[n++] = "--report";
		argv[n++] = in_tmp("report.json");
		argv[n++] = "--timeout";
		argv[n++] = "120";
		argv[n++] = "--seed";
		argv[n++] = SEED;
	}
	for (int i = 0; opts && opts[i] && n < MAXARGS - 4; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "--";
	argv[n++] = (char *)py;
	argv[n++] = (char *)script;
	argv[n] = NULL;
	return run_argv(argv, NULL, PYV_TIMEOUT);
}

/*
 * The bank race is found at the Python level with default options, at
 * <= 2 preemptions, with its traceback; the minimized schedule replays
 * exactly; show names the threads by their threading names and the
 * program's lines.
 */
static void bank_found(const char *py)
{
	const char *bank = py_example("bank.py");
	struct res r = pyv("run", py, NULL, bank);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0 (main at "
			   "bank.py:");
	char both[1 << 16];

	snprintf(both, sizeof(both), "%s%s", r.out, r.err);
	assert_contains(both, "Traceback (most recent call last)", "output");
	assert_contains(both, "AssertionError: overdrawn", "output");
	/* not C-level points because the version is not supported */
	cr_assert(!strstr(r.err, "C-level scheduling"), "%s", r.err);
	res_free(&r);
	char *j = report();

	cr_assert_leq(json_num(j, "preemptions"), 2, "%s", j);
	char *minimized = strdup(json_get(j, "minimized_file"));
	char *hash = NULL;

	cr_assert(minimized[0], "%s", j);
	for (int i = 0; i < 3; i++) {
		r = pyv("replay", py,
			(const char *const[]){ "--report",
					       in_tmp("replay.json"),
					       minimized, NULL },
			bank);
		assert_exit(r, 1);
		char *rj = slurp(in_tmp("replay.json"));

		assert_json(rj, "exact", "true");
		char *h = json_get(rj, "trace_hash");

		cr_assert(h, "%s", rj);
		if (!hash)
			hash = strdup(h);
		cr_assert_str_eq(h, hash, "replays differ");
		free(rj);
		res_free(&r);
	}
	r = PTL("show", minimized);
	assert_exit(r, 0);
	assert_contains(r.out, "T1 (Lucas)", "show");
	assert_contains(r.out, "T2 (Mathieu)", "show");
	assert_contains(r.out, "withdraw at bank.py:", "show");
	assert_contains(r.out, "<-- preemption", "show");
	res_free(&r);
	free(hash);
	free(minimized);
	free(j);
}

/* The fixed twin passes, complete to bound 1 at the Python level. */
static void bank_fixed_complete(const char *py)
{
	/* bound 1: 32 runs (bound 2, 348 runs, is the python tests' for
	 * the default interpreter) */
	struct res r = pyv("run", py,
			   (const char *const[]){ "-q", "-p", "1", NULL },
			   py_example("bank_fixed.py"));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	assert_contains(r.out, "complete to preemption bound 1 (Python-level",
			"stdout");
	res_free(&r);
}

/* Correct programs on queue.Queue, threading.Condition, a
 * ThreadPoolExecutor and threading.Barrier pass or run out of their
 * budget; never fail. */
static void correct_never_fail(const char *py)
{
	static const char *progs[] = { "queue_pc.py", "cond_pingpong.py",
				       "pool_map.py", "barrier.py" };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct res r = pyv("run", py,
				   (const char *const[]){ "-q", "-p", "1",
							  "--max-runs", "40",
							  NULL },
				   py_example(progs[i]));

		cr_assert(r.code == 0 || r.code == 3, "%s: exit %d\n%s\n%s",
			  progs[i], r.code, r.out, r.err);
		if (r.code == 0)
			assert_contains(r.out, "complete to preemption bound 1",
					"stdout");
		res_free(&r);
	}
}

/*
 * A C extension (tests/targets/pyext/counterext.c) whose bump() releases
 * the GIL and increments its own C counter unlocked: with --points
 * sync,races, race discovery observes the extension (not the interpreter)
 * and its racy instructions become C-level points, while the interpreter
 * keeps the Python level.  The lost update is found at <= 2 preemptions,
 * replays exactly, and the trace names the C function and line and the
 * Python frame that called it.  The extension is built here against the
 * interpreter's own headers (python3-dev for Debian's, scripts/setup.sh).
 */
static void extension_race_found(const char *py)
{
	char cmd[4 * PATH_MAX], dir[PATH_MAX];
	const char *src = env_or("PTLOOM_SOURCE_ROOT", ".");

	snprintf(dir, sizeof(dir), "%s", in_tmp("ext"));
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p %s; cd %s; "
		 "inc=$(%s -c 'import sysconfig; "
		 "print(sysconfig.get_paths()[\"include\"])'); "
		 "suf=$(%s -c 'import sysconfig; "
		 "print(sysconfig.get_config_var(\"EXT_SUFFIX\"))'); "
		 "test -f \"$inc/Python.h\" || "
		 "{ echo \"no $inc/Python.h\"; exit 77; }; "
		 "cc -shared -fPIC -g -O0 -I\"$inc\" "
		 "%s/tests/targets/pyext/counterext.c -o counterext$suf",
		 dir, dir, py, py, src);
	struct res b = sh(cmd);

	if (b.code == 77) {
		skip_note("python_versions: %s: the extension needs the "
			  "interpreter's headers (python3-dev, "
			  "scripts/setup.sh): %s", py, b.out);
		res_free(&b);
		cr_skip_test("no Python.h for %s", py);
	}
	assert_exit(b, 0);
	res_free(&b);
	char script[PATH_MAX];

	snprintf(script, sizeof(script), "%s/tests/targets/pyext/"
		 "counter_race.py", src);
	char *argv[] = { (char *)ptloom(), "run", "-o", in_tmp("out"),
			 "--report", in_tmp("report.json"), "--timeout", "120",
			 "--seed", SEED, "--points", "sync,races",
			 /* found by a sample: its minimisation to <= 2
			  * preemptions must not be cut by a loaded
			  * machine's clock (10 s of 416 runs here) */
			 "--minimize-time", "180", "--", (char *)py, script,
			 dir, NULL };
	struct res r = run_argv(argv, NULL, PYV_TIMEOUT);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0 (main at "
			   "counter_race.py:");
	char both[1 << 16];

	snprintf(both, sizeof(both), "%s%s", r.out, r.err);
	assert_contains(both, "AssertionError: lost update: 1", "output");
	res_free(&r);
	char *j = report();

	cr_assert_leq(json_num(j, "preemptions"), 2, "%s", j);
	char *minimized = strdup(json_get(j, "minimized_file"));

	cr_assert(minimized[0], "%s", j);
	char *rargv[] = { (char *)ptloom(), "replay", "--report",
			  in_tmp("replay.json"), minimized, "--",
			  (char *)py, script, dir, NULL };

	r = run_argv(rargv, NULL, PYV_TIMEOUT);
	assert_exit(r, 1);
	res_free(&r);
	char *rj = slurp(in_tmp("replay.json"));

	assert_json(rj, "exact", "true");
	free(rj);
	r = PTL("show", minimized);
	assert_exit(r, 0);
	/* the C function and line, from the Python frame that called it,
	 * by the thread's threading name */
	assert_contains(r.out, "at bump_unlocked at counterext.c:", "show");
	assert_contains(r.out, "from work at counter_race.py:12", "show");
	assert_contains(r.out, "(left)", "show");
	assert_contains(r.out, "(right)", "show");
	assert_contains(r.out, "<-- preemption", "show");
	res_free(&r);
	free(minimized);
	free(j);
}

/*
 * The interpreter linked into a position-independent executable from the
 * build's static libpython (pyenv installs libpython3.X.a; the
 * executable is tests/targets/pyembed.c's Py_BytesMain): its addresses
 * are offsets from its own mapping, as a shared libpython's are.  The
 * bank race is found at the Python level and its twin is complete; a
 * layout read at the wrong addresses would have been a PASS.
 */
static void static_interpreter(const char *py)
{
	char cmd[4 * PATH_MAX], exe[PATH_MAX];
	const char *src = env_or("PTLOOM_SOURCE_ROOT", ".");

	snprintf(exe, sizeof(exe), "%s", in_tmp("pystatic"));
	snprintf(cmd, sizeof(cmd),
		 "set -e; eval \"$(%s -c 'import sysconfig as s; "
		 "v = s.get_config_var; "
		 "print(\"lib=%%s/%%s inc=%%s libs=\\\"%%s\\\"\" %% "
		 "(v(\"LIBPL\"), v(\"LIBRARY\"), s.get_paths()[\"include\"], "
		 "v(\"LIBS\")))')\"; "
		 "test -f \"$lib\" || { echo \"no $lib\"; exit 77; }; "
		 "cc -o %s %s/tests/targets/pyembed.c -I\"$inc\" \"$lib\" "
		 "$libs -lm -lpthread -lutil >cc.log 2>&1 || "
		 "{ cat cc.log; exit 77; }",
		 py, exe, src);
	struct res b = sh(cmd);

	if (b.code == 77) {
		skip_note("python_versions: %s: no PIE static build: %s", py,
			  b.out);
		res_free(&b);
		cr_skip_test("no static libpython for %s", py);
	}
	assert_exit(b, 0);
	res_free(&b);
	for (int fixed = 0; fixed < 2; fixed++) {
		struct res r = pyv("run", exe,
				   (const char *const[]){ "-q", "-p", "1",
							  NULL },
				   py_example(fixed ? "bank_fixed.py"
						    : "bank.py"));

		assert_exit(r, fixed ? 0 : 1);
		assert_summary(&r, fixed ? "ptloom: PASS "
					 : "ptloom: FAIL exit status 1 in T0 "
					   "(main at bank.py:");
		if (fixed)
			assert_contains(r.out, "complete to preemption bound 1 "
					       "(Python-level",
					"stdout");
		res_free(&r);
	}
}

Test(python_versions, static_interpreter_3_12)
{
	NEED("3.12");
	static_interpreter(py);
}

Test(python_versions, static_interpreter_3_13)
{
	NEED("3.13");
	static_interpreter(py);
}

/*
 * An asyncio lost update (tests/targets/asyncio_named_tasks.py: a server
 * and two clients over loopback TCP, the first client in a task the
 * program names "alice") is found through the event loop's readiness
 * choices, and its minimized trace reads in asyncio's terms: the tasks
 * that ran, by their names ("alice", asyncio's "Task-N" for the others),
 * with their coroutines and lines, not the loop's internals only.
 */
static void asyncio_tasks_named(const char *py)
{
	struct res r = pyv("run", py, NULL, script("asyncio_named_tasks.py"));

	assert_exit(r, 1);
	assert_contains(r.out, "count 1", "the failing run's output");
	res_free(&r);
	char *j = report();
	char *minimized = strdup(json_get(j, "minimized_file"));

	cr_assert(minimized[0], "%s", j);
	r = PTL("show", minimized);
	assert_exit(r, 0);
	/* a collapsed stretch of the loop lists its tasks as they resume */
	assert_contains(r.out, "alice client at asyncio_named_tasks.py:",
			"show");
	assert_contains(r.out, " handle at asyncio_named_tasks.py:", "show");
	cr_assert(strstr(r.out, "Task-") &&
		  strstr(strstr(r.out, "Task-"), " client at "
					       "asyncio_named_tasks.py:"),
		  "show names no default-named client task:\n%s", r.out);
	assert_contains(r.out, " resumes\n", "show");
	/* the loop's choice itself, in the program's terms */
	assert_contains(r.out, "<-- preemption", "show");
	res_free(&r);
	/* the events, in the JSON form: the task beside the thread */
	r = PTL("show", "--format", "json", minimized);
	assert_exit(r, 0);
	assert_contains(r.out, "in client at asyncio_named_tasks.py:",
			"show --format json");
	assert_contains(r.out, "(MainThread, task alice)",
			"show --format json");
	res_free(&r);
	free(minimized);
	free(j);
}

#define VERSION_TESTS(tag, ver)                                             \
	Test(python_versions, bank_found_replayed_and_shown_##tag)          \
	{                                                                   \
		NEED(ver);                                                  \
		bank_found(py);                                             \
	}                                                                   \
	Test(python_versions, bank_fixed_complete_to_bound_1_##tag)         \
	{                                                                   \
		NEED(ver);                                                  \
		bank_fixed_complete(py);                                    \
	}                                                                   \
	Test(python_versions, correct_programs_never_fail_##tag)            \
	{                                                                   \
		NEED(ver);                                                  \
		correct_never_fail(py);                                     \
	}                                                                   \
	Test(python_versions, c_extension_race_found_##tag)                 \
	{                                                                   \
		NEED(ver);                                                  \
		extension_race_found(py);                                   \
	}                                                                   \
	Test(python_versions, asyncio_failure_names_its_tasks_##tag)        \
	{                                                                   \
		NEED(ver);                                                  \
		asyncio_tasks_named(py);                                    \
	}

VERSION_TESTS(3_11, "3.11")
VERSION_TESTS(3_12, "3.12")
VERSION_TESTS(3_13, "3.13")
