/*
 * CPython programs at the Python level: found, replayed and explained in
 * Python terms.
 */
#include "common.h"

TestSuite(python, .init = setup, .fini = teardown, .timeout = 420);

#define PYTHON "/usr/bin/python3"
/* seconds per ptloom command on a Python program (start-up is paid per
 * run until fork checkpoints) */
#define PY_TIMEOUT (240 * slowdown())

static void need_python(void)
{
	if (access(PYTHON, X_OK))
		cr_skip_test("no " PYTHON " (Debian's python3): skipped");
}

/* ptloom CMD [opts...] -- python3 ARGS... with env (NULL or "A=B"):
 * opts and args NULL-terminated lists; run gets -o OUT, --report
 * OUT.json, --timeout and --seed. */
static struct res py_cmd_env(const char *cmd, const char *env,
			     const char *out, const char *const *opts,
			     const char *const *args)
{
	char *argv[MAXARGS], rep[64];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = (char *)cmd;
	if (!strcmp(cmd, "run")) {
		argv[n++] = "-o";
		argv[n++] = in_tmp(out);
		argv[n++] = "--report";
		snprintf(rep, sizeof(rep), "%s.json",
			 strcmp(out, "out") ? out : "report");
		argv[n++] = in_tmp(rep);
		/* a loaded machine must not turn a slow run into a hang */
		argv[n++] = "--timeout";
		argv[n++] = "120";
		argv[n++] = "--seed";
		argv[n++] = SEED;
	}
	for (int i = 0; opts && opts[i] && n < MAXARGS - 8; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "--";
	argv[n++] = PYTHON;
	for (int i = 0; args && args[i] && n < MAXARGS - 1; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	return run_argv(argv, env, PY_TIMEOUT);
}

static struct res py_cmd(const char *cmd, const char *const *opts,
			 const char *const *args)
{
	return py_cmd_env(cmd, NULL, "out", opts, args);
}

#define PY_RUN(script, ...)                                                 \
	py_cmd("run", (const char *const[]){ __VA_ARGS__, NULL },          \
	       (const char *const[]){ py_example(script), NULL })

/*
 * The bank account race (check and withdraw under two `with lock:`) is
 * found with default options at <= 2 preemptions, the failing run's
 * traceback is shown, the minimized schedule replays exactly 10 times out
 * of 10, and show names the threads and the Python lines.
 */
Test(python, python_bank_found_replayed_and_shown)
{
	need_python();
	/* (one search: its summary, and its failing run's output, which
	 * -q would leave out; it was made twice, with -q and without) */
	struct res r = py_cmd("run", NULL,
			      (const char *const[]){ py_example("bank.py"),
						     NULL });

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0 (main at bank.py:");
	char both[1 << 16];

	snprintf(both, sizeof(both), "%s%s", r.out, r.err);
	assert_contains(both, "AssertionError: overdrawn", "run's output");
	assert_contains(both, "Traceback (most recent call last)",
			"run's output");
	res_free(&r);
	char *j = report();

	cr_assert_leq(json_num(j, "preemptions"), 2, "%s", j);
	char *minimized = strdup(json_get(j, "minimized_file"));

	cr_assert(minimized[0], "%s", j);
	for (int i = 0; i < 10; i++) {
		r = py_cmd("replay", (const char *const[]){ minimized, NULL },
			   (const char *const[]){ py_example("bank.py"),
						  NULL });
		assert_exit(r, 1);
		assert_contains(r.out, "replay exact", "replay's stdout");
		res_free(&r);
	}
	r = PTL("show", minimized);
	assert_exit(r, 0);
	assert_contains(r.out, "Lucas", "show");
	assert_contains(r.out, "Mathieu", "show");
	assert_contains(r.out, "withdraw at bank.py:", "show");
	assert_contains(r.out, "preemption", "show");
	res_free(&r);
	free(minimized);
	free(j);
}

/* The fixed twin (one `with lock:` around check and withdraw) passes,
 * complete to bound 2. */
Test(python, python_bank_fixed_passes_complete_to_bound_2)
{
	need_python();
	struct res r = PY_RUN("bank_fixed.py", "-q");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	assert_contains(r.out, "complete to preemption bound 2", "stdout");
	res_free(&r);
}

/* The example script fails with default options, at an assertion of
 * main in T0, and the report has its message. */
static void fails_in_main(const char *script, const char *message)
{
	char want[256];

	need_python();
	struct res r = PY_RUN(script, "-q");

	assert_exit(r, 1);
	snprintf(want, sizeof(want),
		 "ptloom: FAIL exit status 1 in T0 (main at %s:", script);
	assert_summary(&r, want);
	res_free(&r);
	char *j = report();

	assert_contains(j, message, "report");
	free(j);
}

/* `self.count += 1` spread over two bytecodes with a call between, no
 * lock: the lost update is found. */
Test(python, python_lost_update_found)
{
	fails_in_main("lost_update.py", "lost update: count 1");
}

/* A thread that drops the GIL around a call (time.sleep(0), a blocking
 * read) lets a woken waiter take it before it takes it back: that order is
 * explored (one preemption), so a read and a write of a global with a
 * sleep between them lose an update.  Before, the waiter could take the
 * GIL only at a Python check, and 3.11 passed this program complete to
 * bound 2.  The same with the three under a Lock passes, complete. */
Test(python, python_lost_update_across_a_gil_drop_found)
{
	fails_in_main("gil_drop_lost_update.py", "lost update: balance 1");
	/* to bound 1: the lost update needs one preemption */
	struct res r = PY_RUN("gil_drop_locked.py", "-q", "-p", "1");

	assert_exit(r, 0);
	assert_contains(r.out, "complete to preemption bound 1", "stdout");
	res_free(&r);
}

/* Two worker processes that add to a multiprocessing.Value without
 * holding its lock across the read and the write lose an update; the
 * interpreters are single-threaded, and before, the run was a false
 * PASS, complete to bound 2 in 40 runs: a process got points only from
 * its first thread on, and the Python level left the libc calls out.
 * Now a fork with writable shared memory gives both processes points on
 * the calls whose object is in that memory (the Value's semaphore).  The
 * twin that holds the lock around each addition is never a pass either:
 * the interpreters' own accesses to the shared Value are no points (a
 * RawValue updated without a lock was a PASS, complete), so sharing
 * data makes the verdict INCOMPLETE, saying why. */
Test(python, multiprocessing_value_lost_update_found)
{
	fails_in_main("mp_value.py", "lost update: count ");
	/* bound 0 (8 runs, each with the shared Value): the note is the
	 * same as bound 1's 52 runs' and bound 2's 282 */
	struct res r = PY_RUN("mp_value.py", "-q", "-p", "0", "-e", "FIXED=1");

	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE");
	assert_contains(r.out, "Python interpreters sharing writable memory",
			"stdout");
	res_free(&r);
}

/* Correct programs on queue.Queue, threading.Condition, a
 * ThreadPoolExecutor and threading.Barrier pass, or run out of their
 * budget; never fail. */
Test(python, python_correct_programs_never_fail)
{
	static const char *progs[] = { "queue_pc.py", "cond_pingpong.py",
				       "pool_map.py", "barrier.py" };

	need_python();
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct res r = PY_RUN(progs[i], "-q", "-p", "1",
				      "--max-runs", "40");

		cr_assert(r.code == 0 || r.code == 3,
			  "%s: exit %d\n%s\n%s", progs[i], r.code, r.out,
			  r.err);
		if (r.code == 0)
			assert_contains(r.out, "complete to preemption bound 1",
					"stdout");
		res_free(&r);
	}
}

/* python3 -m pytest works the same (pytest does not fork by default),
 * and its runs fork from the checkpoint: the deleted files pytest
 * captures output in are put back for each run (before, every run was
 * from exec: "fd 1 (/tmp/#... (deleted)) is open at the first thread"). */
Test(python, python_pytest_finds_the_bank_race)
{
	char line[PATH_MAX + 64];

	need_python();
	snprintf(line, sizeof(line), "%s -c 'import pytest' 2>/dev/null",
		 PYTHON);
	if (system(line))
		cr_skip_test("pytest is not installed (scripts/setup.sh "
			     "installs python3-pytest): skipped");
	struct res r = py_cmd_env(
		/* no .pyc written into the source tree, and the same
		 * imports every run */
		"run", "PTLOOM_STATS=1", "out",
		(const char *const[]){ "--no-minimize", "-e",
					      "PYTHONDONTWRITEBYTECODE=1",
					      NULL },
		(const char *const[]){ "-m", "pytest", "-q", "-p",
				       "no:cacheprovider",
				       py_example("tests/test_bank.py"),
				       NULL });

	assert_exit(r, 1);
	/* pytest's own report locates the failure */
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0 (test_bank.py:22");
	cr_assert_gt(forks_of(&r), 0, "%s", r.err);
	res_free(&r);
}

/* Two locks taken in opposite orders: the deadlock is found and each
 * blocked thread is named with its Python line and threading name. */
Test(python, python_deadlock_found_in_python_terms)
{
	need_python();
	struct res r = PY_RUN("deadlock.py", "-q", "--no-minimize");

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL deadlock");
	assert_contains(r.out, "from migrate_users at deadlock.py:", "stdout");
	assert_contains(r.out, "(migrate)", "stdout");
	assert_contains(r.out, "from audit_orders at deadlock.py:", "stdout");
	res_free(&r);
}

/*
 * Fork checkpoints in Python mode: the interpreter's start-up runs once,
 * and every run forks from the template stopped at the first thread's
 * creation.  The same exploration from exec and from the checkpoint: the
 * same verdict and run count, and a failure with the same trace hash (the
 * schedule file is named by it) that an exec'd replay reproduces exactly.
 */
static void py_checkpoint_agrees(const char *script, int code,
				 const char *bound)
{
	const char *opts[] = { "--no-minimize", "-p", bound, NULL };
	const char *args[] = { py_example(script), NULL };
	struct res a = py_cmd_env("run", "PTLOOM_STATS=1", "cp", opts, args);
	struct res b = py_cmd_env("run", "PTLOOM_NO_CHECKPOINT=1", "exec",
				  opts, args);
	char *sa = summary(&a), *sb = summary(&b);

	assert_exit(a, code);
	assert_exit(b, code);
	cr_assert_str_eq(sa, sb, "%s: checkpoint: %s\nexec: %s", script, sa,
			 sb);
	cr_assert_eq(forks_of(&a), atol(strstr(sa, code ? "after " : "PASS ")
					+ (code ? 6 : 5)),
		     "%s: every run forks: %s\n%s", script, sa, a.err);
	if (code == 1) {
		char *ca = line_with(a.out, "replay: "),
		     *cb = line_with(b.out, "replay: ");

		cr_assert(ca && cb, "%s\n%s", a.out, b.out);
		/* .../cp/HASH-original.pb and .../exec/HASH-original.pb */
		cr_assert_str_eq(strstr(ca, "/cp/") + 4,
				 strstr(cb, "/exec/") + 6,
				 "the same trace hash");
		replay_line_exact(&a, "the exec'd replay of a checkpointed run");
		free(ca);
		free(cb);
	}
	free(sa);
	free(sb);
	res_free(&a);
	res_free(&b);
}

Test(python, python_checkpointed_runs_equal_exec_runs)
{
	need_python();
	py_checkpoint_agrees("bank.py", 1, "2");
	py_checkpoint_agrees("bank_fixed.py", 0, "1"); /* bound 1: its runs */
}

/* An interpreter Python mode does not support is named, and the run is
 * scheduled at the C level: PyPy, a python without CPython's symbols, a
 * free-threaded build (copies named like them). */
Test(python, python_unsupported_interpreters_say_so)
{
	static const struct {
		const char *name, *from, *code, *says;
	} cases[] = {
		{ "pypy3", "/bin/dash", ":", "PyPy is not supported" },
		{ "python3.9", "/bin/dash", ":", "has no _PyRuntime symbol" },
		{ "python3.13t", PYTHON, "pass",
		  "a free-threaded CPython build" },
	};
	char line[3 * PATH_MAX];

	need_python();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *copy = in_tmp(cases[i].name);

		snprintf(line, sizeof(line), "cp -L %s %s", cases[i].from,
			 copy);
		cr_assert_eq(system(line), 0, "%s", line);
		char *argv[] = { (char *)ptloom(), "run", "--seed", SEED,
				 "-o", in_tmp("out"), "--timeout", "120",
				 "--max-runs", "3", "--", copy, "-c",
				 (char *)cases[i].code, NULL };
		struct res r = run_argv(argv, NULL, PY_TIMEOUT);

		cr_assert(r.code == 0 || r.code == 3, "%s: exit %d\n%s\n%s",
			  cases[i].name, r.code, r.out, r.err);
		assert_contains(r.err, cases[i].says, cases[i].name);
		assert_contains(r.err, "using C-level scheduling points",
				cases[i].name);
		res_free(&r);
	}
}

/*
 * A python whose interpreter is a shared libpython (pyenv's, Fedora's
 * builds; here Debian's libpython3.11 behind a two-line Py_BytesMain):
 * Python-level scheduling finds the eval loop in the library, so the
 * bank race is found at Python-level bound 1 and its twin passes
 * complete to bound 2 at the Python level, as with /usr/bin/python3.
 */
Test(python, python_shared_libpython_is_scheduled_at_python_level)
{
	const char *py = target("pyembed");

	need_python();
	if (access(py, X_OK)) {
		skip_note("no python3-embed (python3-dev, scripts/setup.sh): "
			  "shared-libpython check skipped");
		cr_skip_test("python3-dev is not installed");
	}
	for (int fixed = 0; fixed < 2; fixed++) {
		/* bound 1 (bound 2 is 348 runs: python_bank_fixed_passes_
		 * complete_to_bound_2 has it for the interpreter) */
		char *argv[] = { (char *)ptloom(), "run", "-q", "--seed", SEED,
				 "-p", "1", "-o", in_tmp("out"), "--timeout",
				 "120", "--", (char *)py,
				 (char *)py_example(fixed ? "bank_fixed.py"
							  : "bank.py"),
				 NULL };
		struct res r = run_argv(argv, NULL, PY_TIMEOUT);

		assert_exit(r, fixed ? 0 : 1);
		assert_summary(&r, fixed ? "ptloom: PASS "
					 : "ptloom: FAIL exit status 1 in T0 "
					   "(main at bank.py:");
		char *sum = summary(&r);

		assert_contains(sum,
				fixed ? "complete to preemption bound 1 "
					"(Python-level"
				      : "bound 1",
				"pyembed");
		free(sum);
		res_free(&r);
	}
}

/*
 * A shell shim that execs the interpreter (as pyenv's `python3` does, at
 * the end of its chain): ptloom runs it once to see what it becomes, and
 * schedules that python at the Python level.
 */
Test(python, python_behind_a_shell_shim_is_scheduled_at_python_level)
{
	char *shim = in_tmp("python3-shim");
	FILE *f;

	need_python();
	cr_assert((f = fopen(shim, "w")));
	fprintf(f, "#!/bin/sh\nexec %s \"$@\"\n", PYTHON);
	fclose(f);
	cr_assert_eq(chmod(shim, 0755), 0);
	char *argv[] = { (char *)ptloom(), "run", "-q", "--seed", SEED,
			 "-o", in_tmp("out"), "--timeout", "120", "--", shim,
			 (char *)py_example("bank.py"), NULL };
	struct res r = run_argv(argv, NULL, PY_TIMEOUT);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0 (main at bank.py:");
	res_free(&r);
}

/*
 * A virtual environment's python is a symlink to the interpreter, which
 * finds pyvenv.cfg beside argv[0]: run by its resolved path it left the
 * venv (a CI job's tox or pytest venv failed on its imports), a false
 * FAIL.  Run as typed it stays in, at the Python level.
 */
Test(python, python_in_a_virtual_environment_stays_in_it)
{
	char *venv = strdup(in_tmp("venv")), *cmd = NULL, *chk;
	FILE *f;

	need_python();
	cr_assert(asprintf(&cmd, "%s -m venv --without-pip '%s'", PYTHON,
			   venv) > 0);
	struct res r = sh(cmd);

	free(cmd);
	if (r.code != 0) {
		skip_note("python3 -m venv failed (Debian's python3-venv?): "
			  "%s", r.err);
		res_free(&r);
		free(venv);
		cr_skip_test("no venv module");
	}
	res_free(&r);
	chk = strdup(in_tmp("in_venv.py"));
	cr_assert((f = fopen(chk, "w")));
	fprintf(f, "import sys, threading\n"
		   "t = threading.Thread(target=lambda: None)\n"
		   "t.start(); t.join()\n"
		   "assert sys.prefix != sys.base_prefix, 'not in the venv'\n"
		   "print('in the venv:', sys.prefix)\n");
	fclose(f);
	cr_assert(asprintf(&cmd, "%s/bin/python", venv) > 0);
	char *argv[] = { (char *)ptloom(), "run", "--seed", SEED, "-s",
			 "random", "-n", "2", "-o", in_tmp("out"), "--timeout",
			 "120", "--", cmd, chk, NULL };

	r = run_argv(argv, NULL, PY_TIMEOUT);
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 2 runs");
	res_free(&r);
	free(cmd);
	free(chk);
	free(venv);
}

/* A wrapper like pyenv's shim: other processes first, then the exec. */
static char *py_wrapper(const char *name, const char *script)
{
	char *w = in_tmp(name);
	FILE *f;

	cr_assert((f = fopen(w, "w")));
	fprintf(f, "#!/bin/sh\n"
		   "v=$(printf '%%s\\n' 3 2 1 | sort | head -n 1)\n"
		   "d=$(dirname \"$0\")\n"
		   "export SHIM_VERSION=\"$v\" SHIM_DIR=\"$d\"\n"
		   "exec %s '%s'\n",
		   PYTHON, script);
	fclose(f);
	cr_assert_eq(chmod(w, 0755), 0);
	return w;
}

/*
 * pyenv's `python3` shim runs some 40 processes of bash and coreutils
 * before it execs the interpreter.  Explored with them, bound 0 never
 * ended (bank.py not found in 1,350 runs, 10 minutes).  A wrapper that
 * ends by exec'ing the interpreter, with nothing else left running and
 * nothing but argv and the environment changed, is run once (the probe)
 * and every run starts at that exec: bank.py is found at the Python
 * level, the printed replay (through the wrapper) is exact, the fixed
 * bank passes complete, and PTLOOM_WRAPPER=keep runs the wrapper in
 * every run again.
 */
Test(python, python_wrapper_with_processes_starts_runs_at_its_exec)
{
	need_python();
	char *w = py_wrapper("python3-wrapper", py_example("bank.py"));
	struct res r = RUN(w, "--seed", SEED);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0 (main at bank.py:");
	assert_contains(r.err, "is a wrapper that execs " PYTHON,
			"ptloom's stderr");
	replays_exactly(&r, "bank.py");
	res_free(&r);

	w = py_wrapper("python3-wrapper-fixed", py_example("bank_fixed.py"));
	r = RUN(w, "--seed", SEED, "-p", "1");
	assert_exit(r, 0);
	char *s = summary(&r);

	assert_contains(s, "complete to preemption bound 1", "the summary");
	free(s);
	res_free(&r);

	char *argv[] = { (char *)ptloom(), "run", "--seed", SEED, "-n", "3",
			 "-o", in_tmp("out"), "--", w, NULL };
	r = run_argv(argv, "PTLOOM_WRAPPER=keep", PY_TIMEOUT);
	cr_assert(!strstr(r.err, "is a wrapper"), "%s", r.err);
	res_free(&r);

	/* a script with no thread: bound 0 of the wrapper's processes did
	 * not end in 2 minutes (374 runs); from the exec, 2 runs */
	char *one = in_tmp("single.py");
	FILE *f;

	cr_assert((f = fopen(one, "w")));
	fprintf(f, "print('alone')\n");
	fclose(f);
	w = py_wrapper("python3-wrapper-single", one);
	r = RUN(w, "--seed", SEED);
	assert_exit(r, 0);
	assert_contains(r.err, "is a wrapper that execs " PYTHON,
			"ptloom's stderr");
	s = summary(&r);
	assert_contains(s, "complete to preemption bound 2", "the summary");
	free(s);
	res_free(&r);
}
