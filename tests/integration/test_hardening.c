/*
 * Hardening: a schedule file that would run code or hang a replay, a report
 * that would delete a user's files, signals that must end a parallel
 * exploration at once, a program that signals ptloom, a supervisor whose
 * memory must stay proportionate to the program's threads.  The crafted
 * files are made here, by tests/integration/schedtool.c.
 */
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <utime.h>
#include <dirent.h>
#include "common.h"

TestSuite(hardening, .init = setup, .fini = teardown, .timeout = 300);

/* A failing schedule of hostile_output with the entry kv added. */
static char *with_env(const char *kv, const char *name)
{
	char *orig = hostile_schedule(NULL), *out = strdup(in_tmp(name));

	craft(orig, out, "env", kv);
	return out;
}

/* An executable shell script at path. */
static void script_at(const char *path, const char *body)
{
	spit(path, body);
	cr_assert(chmod(path, 0755) == 0, "chmod %s", path);
}

Test(hardening, a_files_shell_environment_runs_nothing_on_replay)
{
	char pwned[PATH_MAX + 64], kv[2 * PATH_MAX], bin[PATH_MAX];

	snprintf(pwned, sizeof(pwned), "%s", in_tmp("pwned"));
	/* BASH_ENV runs before bash's command; a BASH_FUNC_ entry defines
	 * a function; a PATH directory in front chooses `true` */
	snprintf(kv, sizeof(kv), "BASH_ENV=$(touch %s)", pwned);
	char *bash_env = with_env(kv, "bash_env.pb");

	snprintf(kv, sizeof(kv), "BASH_FUNC_true%%%%=() { touch %s; }",
		 pwned);
	char *bash_func = with_env(kv, "bash_func.pb");

	snprintf(bin, sizeof(bin), "%s", in_tmp("bin"));
	mkdir(bin, 0755);
	snprintf(kv, sizeof(kv), "#!/bin/sh\ntouch %s\n", pwned);
	script_at(in_tmp("bin/true"), kv);
	snprintf(kv, sizeof(kv), "PATH=%s:/usr/bin:/bin", bin);
	char *path = with_env(kv, "path.pb");
	const struct {
		const char *file, *name;
	} cases[] = { { bash_env, "BASH_ENV" },
		      { bash_func, "BASH_FUNC_true%%" },
		      { path, "PATH" } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct res r = PTL("replay", cases[i].file, "--", "bash", "-c",
				   "true");

		/* refused in one line naming the entry; nothing ran */
		assert_exit(r, 2);
		assert_contains(r.err, cases[i].name, "stderr");
		assert_contains(r.err, "--trust-env", "stderr");
		cr_assert_eq(strchr(r.err, '\n'), r.err + r.errlen - 1,
			     "not one line:\n%s", r.err);
		cr_assert(access(pwned, F_OK), "replaying %s ran code",
			  cases[i].name);
		res_free(&r);
		r = PTL("minimize", "-o", in_tmp("m"), cases[i].file, "--",
			"bash", "-c", "true");
		assert_exit(r, 2);
		assert_contains(r.err, cases[i].name, "stderr");
		cr_assert(access(pwned, F_OK), "minimizing %s ran code",
			  cases[i].name);
		res_free(&r);

		/* show marks it (text and json) */
		r = PTL("show", cases[i].file);
		assert_exit(r, 0);
		assert_contains(r.out, "refused on replay", "show");
		res_free(&r);
		r = PTL("show", "--format", "json", cases[i].file);
		assert_exit(r, 0);
		const char *list = strstr(r.out, "\"env_refused_on_replay\"");

		cr_assert(list && strstr(list, cases[i].name) &&
				  strstr(list, cases[i].name) <
					  strchr(list, ']'),
			  "json does not list %s:\n%s", cases[i].name, r.out);
		res_free(&r);
	}

	/* the user's explicit word applies it (and proves the file works) */
	struct res r = PTL("replay", "--trust-env", bash_env, "--", "bash",
			   "-c", "true");

	cr_assert(access(pwned, F_OK) == 0,
		  "--trust-env did not apply BASH_ENV:\n%s", r.err);
	res_free(&r);
	free(bash_env);
	free(bash_func);
	free(path);
}

Test(hardening, the_safe_environment_set_replays_without_asking)
{
	/* what a replay needs for exactness and is harmless: applied as
	 * recorded, the failure reproduces */
	char *orig = hostile_schedule(NULL), *f = strdup(in_tmp("safe.pb"));

	craft(orig, f, "env", "TZ=Europe/Paris");
	craft(f, f, "env", "LC_ALL=C.UTF-8");
	craft(f, f, "env", "PATH=/usr/local/bin:/usr/bin:/bin");
	craft(f, f, "env", "USER=someone");
	struct res r = PTL("replay", f, "--", target("hostile_output"));

	assert_exit(r, 1);
	res_free(&r);
	/* a locale given as a path is not a locale name */
	craft(f, f, "env", "LANG=/tmp/locale");
	r = PTL("replay", f, "--", target("hostile_output"));
	assert_exit(r, 2);
	assert_contains(r.err, "LANG", "stderr");
	res_free(&r);
	free(f);
}

Test(hardening, an_entry_without_equals_is_refused_by_the_loader)
{
	char *orig = hostile_schedule(NULL);

	craft(orig, in_tmp("noeq.pb"), "noeq", "x");
	struct res r = PTL("show", in_tmp("noeq.pb"));

	one_line_usage_error(r);
	r = PTL("replay", in_tmp("noeq.pb"), "--", target("hostile_output"));
	assert_exit(r, 2);
	assert_contains(r.err, "not NAME=VALUE", "stderr");
	res_free(&r);
}

Test(hardening, markdown_fences_outlast_the_files_backticks)
{
	char *orig = hostile_schedule(NULL);

	craft(orig, in_tmp("fence.pb"), "fence", NULL);
	struct res r = PTL("show", "--format", "markdown", in_tmp("fence.pb"));

	assert_exit(r, 0);
	/* the message ```` inside a longer fence, and the backtrace's
	 * ```` line too */
	assert_contains(r.out, "\n`````\n````\n`````\n", "markdown");
	const char *bt = strstr(r.out, "Threads at the failure");

	cr_assert_not_null(bt, "%s", r.out);
	assert_contains(bt, "\n`````\n", "the backtraces' fence");
	res_free(&r);
}

Test(hardening, report_cleanup_leaves_the_users_files)
{
	char *dir = in_tmp("rep");
	const char *mine[] = { "results.tar.gz", "results.backup",
			       "results.AbC123", ".results.XyZ987" };
	char path[PATH_MAX + 64], stale[PATH_MAX + 64];
	struct utimbuf old = { time(NULL) - 3600, time(NULL) - 3600 };

	mkdir(dir, 0755);
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, mine[i]);
		spit(path, "the user's");
		cr_assert(utime(path, &old) == 0);
	}
	/* ptloom's own temporary, left by a killed save: removed */
	snprintf(stale, sizeof(stale), "%s/.ptloom-tmp.results.QwE456", dir);
	spit(stale, "half a report");
	cr_assert(utime(stale, &old) == 0);
	snprintf(path, sizeof(path), "%s/results", dir);
	struct res r = PTL("run", "--seed", SEED, "-o", in_tmp("out"),
			   "--report", path, "--", example("bank"));

	assert_exit(r, 1);
	res_free(&r);
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, mine[i]);
		cr_assert(access(path, F_OK) == 0, "%s was removed", path);
	}
	cr_assert(access(stale, F_OK), "%s is still there", stale);
	snprintf(path, sizeof(path), "%s/results", dir);
	char *rep = slurp(path);

	assert_contains(rep, "\"verdict\": \"fail\"", "the report");
	free(rep);
}

/*
 * What a run created exclusively in a temporary directory (mkstemp's
 * O_CREAT|O_EXCL file, mkdtemp's directory) is removed when the run ends:
 * every run makes the same names, and a run ptloom ends early never
 * removes its own, so the next one met them and went another way.  What
 * the program wrote without O_EXCL stays.
 */
Test(hardening, a_runs_temporary_files_are_removed_when_it_ends)
{
	char *dir = strdup(in_tmp("tmpdir")), env[PATH_MAX + 16];

	mkdir(dir, 0755);
	snprintf(env, sizeof(env), "TMPDIR=%s", dir);
	char *argv[] = { (char *)ptloom(), "run", "--seed", SEED, "-s",
			 "random", "-n", "4", "--", "sh", "-c",
			 "mktemp; mktemp -d; d=$(mktemp -d); mktemp -p $d; "
			 "echo x > $TMPDIR/kept.txt",
			 NULL };
	struct res r = run_argv(argv, env, CMD_TIMEOUT);

	cr_assert(r.code == 0 || r.code == 3, "`%s` exit %d:\n%s%s", r.cmd,
		  r.code, r.out, r.err);
	res_free(&r);
	DIR *d = opendir(dir);
	struct dirent *e;
	int kept = 0, other = 0;
	char names[1024] = "";

	cr_assert(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strcmp(e->d_name, "kept.txt"))
			kept++;
		else
			other++;
		strncat(names, e->d_name, sizeof(names) - strlen(names) - 2);
		strcat(names, " ");
	}
	closedir(d);
	cr_assert(kept == 1 && other == 0, "left in TMPDIR: %s", names);
	free(dir);
}

/*
 * ptloom -j 2 exploring for long (--max-time 600) in the background; once
 * its workers run, `kill -SIG TARGET` where TARGET is "$p" (ptloom) or
 * "$w" (a worker).  A shell line: the exit code is ptloom's.  Before the
 * signal was passed on, the command waited for --max-time: past the test's
 * command timeout, a failure.
 */
/* (strategies that cannot end on their own first: a search of 10,000
 * runs of rwlock once took less than the half second below) */
static struct res parallel_signalled(const char *sig, const char *who,
				     const char *strategy)
{
	char line[4096];

	snprintf(line, sizeof(line),
		 "%s run --seed " SEED " -j 2 --points sync --max-time 600 %s "
		 "-o out -- %s >out.txt 2>err.txt & p=$!; w=; i=0; "
		 "while [ -z \"$w\" ] && [ $i -lt 400 ]; do sleep 0.05; "
		 "i=$((i+1)); w=$(pgrep -P $p -x ptloom | head -1); done; "
		 "sleep 0.5; kill -%s %s; wait $p; c=$?; cat out.txt; "
		 "cat err.txt >&2; exit $c",
		 ptloom(), strategy, example("rwlock"), sig, who);
	return sh(line);
}

Test(hardening, signals_to_ptloom_reach_its_workers)
{
	static const char *const strategies[] = { "-p 12 -n 100000000",
						  "-s random -n 100000000" };

	for (int i = 0; i < 2; i++) {
		struct res r = parallel_signalled("INT", "$p", strategies[i]);

		assert_exit(r, 130);
		assert_summary(&r, "ptloom: INTERRUPTED by SIGINT");
		res_free(&r);
		r = parallel_signalled("TERM", "$p", strategies[i]);
		assert_exit(r, 143);
		assert_summary(&r, "ptloom: INTERRUPTED by SIGTERM");
		res_free(&r);
	}
}

Test(hardening, a_worker_killed_from_outside_ends_the_exploration)
{
	static const char *const strategies[] = { "-p 12 -n 100000000",
						  "-s random -n 100000000" };

	for (int i = 0; i < 2; i++) {
		struct res r = parallel_signalled("KILL", "$w", strategies[i]);

		/* incomplete, never a usage error; the worker named */
		assert_exit(r, 3);
		assert_summary(&r, "ptloom: INCOMPLETE worker ");
		assert_contains(r.out, "killed by SIGKILL from outside",
				"summary");
		res_free(&r);
		r = parallel_signalled("TERM", "$w", strategies[i]);
		assert_exit(r, 3);
		assert_summary(&r, "ptloom: INCOMPLETE worker ");
		assert_contains(r.out, "SIGTERM from outside", "summary");
		res_free(&r);
	}
}

/* The number after what in a PTLOOM_SHOW_STATS line, -1 if none. */
static long stat_before(const char *err, const char *what)
{
	const char *p = strstr(err, what);

	if (!p)
		return -1;
	while (p > err && p[-1] != ',' && p[-1] != ' ')
		p--;
	while (p > err && p[-1] == ' ')
		p--;
	while (p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtol(p, NULL, 10);
}

Test(hardening, show_is_linear_on_colliding_symbols_and_stops_on_sigterm)
{
	/* 50,000 symbols whose addresses share one probe chain of an
	 * unkeyed hash: a walk of that chain per symbol was 1.25e9 probes
	 * (minutes); the keyed index looks at a few per symbol */
	char *big = in_tmp("collide.pb");
	char *argv[] = { (char *)schedtool(), "-", big, "collide", "50000",
			 NULL };
	struct res r = run_argv(argv, NULL, 60);

	assert_exit(r, 0);
	res_free(&r);
	char *sargv[] = { (char *)ptloom(), "show", big, NULL };

	r = run_argv(sargv, "PTLOOM_SHOW_STATS=1", CMD_TIMEOUT);
	assert_exit(r, 0);
	long probes = stat_before(r.err, "symbol probes");

	cr_assert(probes > 0 && probes <= 10L * 50000,
		  "%ld symbol probes for 50000 symbols:\n%s", probes, r.err);
	res_free(&r);
	/* a signal while the index is built: it stops there */
	r = run_argv(sargv, "PTLOOM_TEST_INTERRUPT=symbols:TERM", CMD_TIMEOUT);
	assert_exit(r, 143);
	assert_contains(r.err, "interrupted by SIGTERM", "stderr");
	res_free(&r);
}

Test(hardening, a_proc_object_in_a_file_is_not_read)
{
	/* /proc/self/pagemap says size 0 and reads terabytes: 4,000 of them
	 * made a replay hash for hours, deaf to SIGTERM */
	char *orig = hostile_schedule(NULL);
	char *argv[] = { (char *)schedtool(), orig, in_tmp("pagemap.pb"),
			 "objects", "/proc/self/pagemap", "1000000", "4000",
			 NULL };
	struct res r = run_argv(argv, NULL, 60);

	assert_exit(r, 0);
	res_free(&r);
	r = PTL("replay", in_tmp("pagemap.pb"), "--", target("hostile_output"));
	assert_exit(r, 1);
	assert_contains(r.err, "/proc/self/pagemap changed", "stderr");
	res_free(&r);
}

Test(hardening, supervisor_memory_is_proportionate_to_threads)
{
	/* 400 threads alive at once, one run at bound 2: every costly
	 * alternative held its own sleep set, 1.58 GB; and a wake of all
	 * woke only 256 of them, a false deadlock */
	struct rusage ru;
	struct res r = PTL("run", "--seed", SEED, "-o", in_tmp("out"), "-n",
			   "1", "--timeout", "120", "--", target("threads_n"),
			   "400");

	/* the one run passed (all 400 got past the barrier), and a limit
	 * is not a pass */
	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE 1 run");
	res_free(&r);
	cr_assert(getrusage(RUSAGE_CHILDREN, &ru) == 0);
	cr_assert_lt(ru.ru_maxrss, 200L * 1024,
		     "ptloom's peak RSS %ld KiB for 400 threads",
		     ru.ru_maxrss);
}

Test(hardening, a_program_that_signals_ptloom_is_contained)
{
	static const char *const sigs[] = { "KILL", "TERM", "INT" };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct res r = PTL("run", "--seed", SEED, "-o", in_tmp("out"),
				   "--", target("kill_parent"), sigs[i]);
		char want[64];

		/* a verdict, not ptloom's death or the user's interrupt */
		assert_exit(r, 3);
		assert_summary(&r, "ptloom: INCOMPLETE after 1 run: "
				   "unsupported:");
		snprintf(want, sizeof(want), "sends SIG%s to its parent",
			 sigs[i]);
		assert_contains(r.out, want, "stdout");
		cr_assert_null(strstr(r.out, "INTERRUPTED"), "%s", r.out);
		res_free(&r);
	}
}

Test(hardening, output_says_when_only_the_tail_is_passed)
{
	struct res r = PTL("run", "--output", "-s", "random", "-n", "1",
			   "--seed", SEED, "-o", in_tmp("out"), "--", "/bin/sh",
			   "-c", "yes | head -c 1500000");

	assert_exit(r, 0);
	assert_contains(r.err, "this run wrote 1500000 bytes of output; "
			       "--output passes its last 1048576",
			"stderr");
	res_free(&r);
}

Test(hardening, out_dir_on_proc_says_why)
{
	struct res r = PTL("run", "-o", "/proc", "--", example("bank"));

	assert_contains(r.err, "kernel file system", "stderr");
	one_line_usage_error(r);
	r = PTL("run", "--report", "/proc/report.json", "--", example("bank"));
	assert_contains(r.err, "kernel file system", "stderr");
	one_line_usage_error(r);
}

/* A copy of id(1) owned by nobody (65534), set-user-ID, in the test
 * directory; NULL (and a note) when that cannot be made or would not
 * change ids. */
static const char *setuid_id(void)
{
	static char path[PATH_MAX + 16];
	struct statvfs vfs;

	snprintf(path, sizeof(path), "%s", in_tmp("suid_id"));
	if (geteuid() != 0) {
		skip_note("skipping: making a set-user-ID file of another "
			  "user needs root");
		return NULL;
	}
	struct res r = sh("cp /usr/bin/id suid_id && chown 65534 suid_id && "
			  "chmod 4755 suid_id");

	if (r.code || statvfs(path, &vfs) || (vfs.f_flag & ST_NOSUID)) {
		res_free(&r);
		skip_note("skipping: no set-user-ID file here (nosuid)");
		return NULL;
	}
	res_free(&r);
	return path;
}

/* A set-user-ID program owned by nobody: natively its effective user is
 * nobody (65534), the check below passes; under ptloom every process has
 * no_new_privs, so it would run as root and the check fail, a FAIL of a
 * correct program (before: so it did, root's ptloom having
 * CAP_SYS_PTRACE).  So its exec is unsupported, INCOMPLETE, as a child
 * and as the first process alike, with or without CAP_SYS_PTRACE. */
Test(hardening, setuid_exec_is_alike_in_every_process)
{
	const char *suid = setuid_id();

	if (!suid)
		return;
	char child[PATH_MAX + 64], main_exec[PATH_MAX + 64];

	snprintf(child, sizeof(child), "[ \"$(%s -u)\" = 65534 ]", suid);
	snprintf(main_exec, sizeof(main_exec), "exec %s -u", suid);
	const char *lines[] = { child, main_exec };
	bool setpriv = !access("/usr/bin/setpriv", X_OK);

	if (!setpriv)
		skip_note("skipping the half without CAP_SYS_PTRACE: no "
			  "setpriv");
	for (int i = 0; i < 4; i++) {
		if (i >= 2 && !setpriv)
			break;
		char *argv[] = { "/usr/bin/setpriv",
				 "--bounding-set=-sys_ptrace",
				 "--inh-caps=-sys_ptrace", (char *)ptloom(),
				 "run", "--seed", SEED, "-o", in_tmp("out"),
				 "--", "/bin/sh", "-c", (char *)lines[i % 2],
				 NULL };
		struct res r = run_argv(i < 2 ? argv + 3 : argv, NULL,
					CMD_TIMEOUT);

		assert_exit(r, 3);
		assert_summary(&r, "ptloom: INCOMPLETE after 1 run: "
				   "unsupported:");
		assert_contains(r.out, "set-user-ID", "stdout");
		res_free(&r);
	}
}

/* A program that asks whether it is traced (/proc/self/status,
 * /proc/thread-self/status, its task's file, its child's) reads
 * "TracerPid:\t0" as natively, with stdio and with read(2): a test
 * framework would break into ptloom as into a debugger at a failed soft
 * check (doctest), a FAIL of a correct program. */
Test(hardening, a_program_asking_whether_it_is_traced_is_told_no)
{
	struct res r = RUN(target("asks_if_traced"), "--seed", SEED);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(summary(&r), "complete to preemption bound 2",
			"the summary");
	res_free(&r);
}

/* A signal ignored when ptloom started is ignored in the program, as it
 * would be natively (it survives fork and exec), not ptloom's own
 * dispositions nor the defaults: under a parent that ignores SIGPIPE the
 * program's write to a closed pipe must fail with EPIPE, not kill it. */
Test(hardening, signals_ignored_when_ptloom_started_stay_ignored)
{
	char line[2 * PATH_MAX + 128];

	snprintf(line, sizeof(line),
		 "trap '' PIPE; exec '%s' run --seed %s -o '%s' -- '%s' "
		 "ignored",
		 ptloom(), SEED, in_tmp("out"), target("inherited_signals"));
	char *argv[] = { "/bin/sh", "-c", line, NULL };
	struct res r = run_argv(argv, NULL, CMD_TIMEOUT);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	res_free(&r);
	/* and not ignored where it was not (ptloom's own SIGPIPE is) */
	r = RUN(target("inherited_signals"), "--seed", SEED);
	assert_exit(r, 0);
	res_free(&r);
}

/* A program whose code a runtime finds through the environment (a module
 * on PYTHONPATH) starts as natively: the variable is passed, not left out
 * with the rest of the shell's (before: ModuleNotFoundError, FAIL exit
 * status 1 after 1 run). */
Test(hardening, a_runtimes_search_path_reaches_the_program)
{
	char cmd[2 * PATH_MAX + 256];

	spit(in_tmp("found_by_path.py"), "X = 1\n");
	snprintf(cmd, sizeof(cmd),
		 "PYTHONPATH='%s' '%s' run -n 2 --seed %s -o '%s' -- "
		 "/usr/bin/python3 -c 'import found_by_path'",
		 tmp, ptloom(), SEED, in_tmp("out"));
	struct res r = sh(cmd);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	cr_assert_null(strstr(r.out, "ModuleNotFoundError"), "%s", r.out);
	res_free(&r);
	/* a variable of the test's own is still left out; a first run that
	 * fails with no preemption names what was */
	snprintf(cmd, sizeof(cmd),
		 "PTLOOM_TEST_NEEDED=1 '%s' run -n 2 --seed %s -o '%s' -- "
		 "/bin/sh -c 'test -n \"$PTLOOM_TEST_NEEDED\"'",
		 ptloom(), SEED, in_tmp("out"));
	r = sh(cmd);
	assert_exit(r, 1);
	assert_contains(r.err, "ptloom: note: the first run failed, with no "
			"preemption, in ptloom's fixed environment", "stderr");
	assert_contains(r.err, "PTLOOM_TEST_NEEDED", "stderr");
	res_free(&r);
}
