/*
 * schedule files: show in every format, valid and corrupt corpus files,
 * untrusted content.
 */
#include "common.h"

TestSuite(schedule_files, .init = setup, .fini = teardown, .timeout = 180);

Test(schedule_files, show_explains_a_schedule_in_every_format)
{
	struct found f = find(example("bank"));
	static const char *formats[] = { "text", "json", "markdown",
					 "script" };

	for (size_t i = 0; i < 4; i++) {
		struct res r = PTL("show", "--format", formats[i],
				   f.minimized);

		assert_exit(r, 0);
		cr_assert(r.outlen > 0, "show --format %s printed nothing",
			  formats[i]);
		if (!strcmp(formats[i], "json")) {
			cr_assert_eq(r.out[strspn(r.out, " \n")], '{', "%s",
				     r.out);
			cr_assert_eq(json_num(r.out, "preemptions"), 1, "%s",
				     r.out);
		} else {
			assert_contains(r.out, "T2", "show's output");
		}
		res_free(&r);
	}
	struct res r = PTL("show", f.minimized);

	assert_exit(r, 0);
	assert_contains(r.out, "bank.c", "show's text");
	res_free(&r);
	found_free(&f);
}

Test(schedule_files, valid_corpus_files_show)
{
	const char *dir = env_or("PTLOOM_CORPUS", "tests/corpus");
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "%s", dir);
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (strncmp(e->d_name, "valid-", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct res r = PTL("show", path);

		assert_exit(r, 0);
		res_free(&r);
		n++;
	}
	closedir(d);
	cr_assert_gt(n, 0);
}

/* Exit 2 with exactly one line on stderr. */
static void one_line_error(struct res r, const char *file)
{
	assert_exit(r, 2);
	cr_assert(r.errlen > 1 && r.err[r.errlen - 1] == '\n' &&
			  !memchr(r.err, '\n', r.errlen - 1),
		  "%s: want one line on stderr, got:\n%s", file, r.err);
	cr_assert_null(strstr(r.out, "ptloom: FAIL"), "%s", r.out);
	res_free(&r);
}

Test(schedule_files, bad_corpus_files_are_input_errors)
{
	const char *dir = env_or("PTLOOM_CORPUS", "tests/corpus");
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "%s", dir);
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (strncmp(e->d_name, "bad-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		one_line_error(PTL("replay", path, "--", example("bank")),
			       path);
		one_line_error(PTL("show", path), path);
		n++;
	}
	closedir(d);
	cr_assert_gt(n, 20, "only %d bad-* files in %s", n, dir);
}

Test(schedule_files, missing_schedule_is_an_input_error)
{
	one_line_error(PTL("replay", in_tmp("nope.pb"), "--", example("bank")),
		       "nope.pb");
	one_line_error(PTL("show", in_tmp("nope.pb")), "nope.pb");
	one_line_error(PTL("show", tmp), "a directory");
}

Test(schedule_files, loader_variables_from_a_file_are_refused)
{
	char *orig = hostile_schedule(NULL);
	char preload[PATH_MAX + 16], *evil = in_tmp("evil.pb");
	char so[PATH_MAX];

	snprintf(so, sizeof(so), "%s/evil_preload.so",
		 env_or("PTLOOM_TARGETS", "build/tests"));
	cr_assert(access(so, R_OK) == 0, "%s is not built", so);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", so);
	craft(orig, evil, "env", preload);

	/* refused with one line naming the variable; nothing loaded */
	struct res r = PTL("replay", evil, "--", target("hostile_output"));

	assert_exit(r, 2);
	assert_contains(r.err, "LD_PRELOAD", "stderr");
	assert_contains(r.err, "--trust-env", "stderr");
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1,
		     "not one line:\n%s", r.err);
	cr_assert(access(in_tmp("pwned"), F_OK), "the preload ran");
	res_free(&r);
	r = PTL("minimize", "-o", in_tmp("m"), evil, "--",
		target("hostile_output"));
	assert_exit(r, 2);
	cr_assert(access(in_tmp("pwned"), F_OK), "the preload ran");
	res_free(&r);

	/* show says what is in it */
	r = PTL("show", evil);
	assert_exit(r, 0);
	assert_contains(r.out, preload, "show");
	assert_contains(r.out, "argv:", "show");
	res_free(&r);
	r = PTL("show", "--format", "json", evil);
	assert_exit(r, 0);
	assert_contains(r.out, "\"env\": [", "show --format json");
	assert_contains(r.out, preload, "show --format json");
	res_free(&r);

	/* -e sets the variable (here: to nothing) and the replay runs */
	r = PTL("replay", "-e", "LD_PRELOAD=", evil, "--",
		target("hostile_output"));
	assert_exit(r, 1);
	cr_assert(access(in_tmp("pwned"), F_OK), "the preload ran");
	res_free(&r);

	/* --trust-env: the user's decision (and proof the file works) */
	r = PTL("replay", "--trust-env", evil, "--", target("hostile_output"));
	assert_exit(r, 1);
	cr_assert(access(in_tmp("pwned"), F_OK) == 0,
		  "--trust-env did not use the file's LD_PRELOAD");
	res_free(&r);

	/* the rest of the list */
	static const char *const others[] = {
		"GLIBC_TUNABLES=glibc.malloc.check=3", "GCONV_PATH=/tmp",
		"LD_AUDIT=/tmp/x.so", "LD_LIBRARY_PATH=/tmp",
		"MALLOC_TRACE=/tmp/t", "LOCPATH=/tmp", "NLSPATH=/tmp/%N",
		"HOSTALIASES=/tmp/h",
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(others[i], "="), others[i]);
		craft(orig, evil, "env", others[i]);
		r = PTL("replay", evil, "--", target("hostile_output"));
		assert_exit(r, 2);
		assert_contains(r.err, name, "stderr");
		res_free(&r);
	}
}

Test(schedule_files, replay_env_option_overrides_the_recording)
{
	char *orig = hostile_schedule("HOSTILE_VAR=recorded");
	/* a -e entry of the recording is applied only when confirmed (the
	 * replay command run prints carries it) */
	struct res r = PTL("replay", "--output", orig, "--",
			   target("hostile_output"));

	assert_exit(r, 2);
	assert_contains(r.err, "HOSTILE_VAR", "stderr");
	res_free(&r);
	r = PTL("replay", "--output", "-e", "HOSTILE_VAR=recorded", orig,
		"--", target("hostile_output"));
	assert_exit(r, 1);
	assert_contains(r.out, "var=recorded", "replay --output");
	res_free(&r);
	r = PTL("replay", "--output", "--trust-env", orig, "--",
		target("hostile_output"));
	assert_exit(r, 1);
	assert_contains(r.out, "var=recorded", "replay --trust-env --output");
	res_free(&r);
	r = PTL("replay", "--output", "-e", "HOSTILE_VAR=override", orig,
		"--", target("hostile_output"));
	assert_exit(r, 1);
	assert_contains(r.out, "var=override", "replay -e --output");
	res_free(&r);
}

/* The number after what in a PTLOOM_SHOW_STATS line, -1 if none. */
static long stat_after(const char *err, const char *what)
{
	const char *p = strstr(err, what);

	return p ? strtol(p + strlen(what), NULL, 10) : -1;
}

Test(schedule_files, show_is_linear_on_a_large_file)
{
	/* 200,000 events, each with its own symbol: a scan per event
	 * would look at 2e10 entries (minutes); the index looks at a few
	 * per event */
	char *big = in_tmp("big.pb");
	char *argv[] = { (char *)schedtool(), "-", big, "big", "200000",
			 NULL };
	struct res r = run_argv(argv, NULL, 60);

	assert_exit(r, 0);
	res_free(&r);
	static const char *const fmts[] = { "text", "json", "markdown" };
	for (size_t i = 0; i < 3; i++) {
		char *sargv[] = { (char *)ptloom(), "show", "--format",
				  (char *)fmts[i], big, NULL };

		r = run_argv(sargv, "PTLOOM_SHOW_STATS=1", CMD_TIMEOUT);
		assert_exit(r, 0);
		char *st = strstr(r.err, "symbol probes");

		cr_assert_not_null(st, "%s", r.err);
		while (st > r.err && st[-1] != ',')
			st--;
		long probes = strtol(st + 1, NULL, 10);

		cr_assert(probes > 0 && probes <= 10L * 200000,
			  "%s: %ld symbol probes for 200000 events", fmts[i],
			  probes);
		/* bounded: the file (mapped) and a constant; its events and
		 * symbols stay in it (decoded whole, it was 7x the file) */
		long file = stat_after(r.err, "event reads, ");
		long rss = stat_after(r.err, "peak RSS ") * 1024;

		cr_assert(file > 0 && rss > 0, "%s", r.err);
		/* a sanitizer build (PTLOOM_TEST_SLOWDOWN) adds its shadow
		 * memory and quarantine: a larger constant */
		cr_assert_leq(rss, file + file / 2 +
					   (slowdown() > 1 ? 320L << 20 : 24L << 20),
			      "%s: peak RSS %ld for a %ld-byte file", fmts[i],
			      rss, file);
		res_free(&r);
	}
}

Test(schedule_files, show_reads_events_one_at_a_time)
{
	/* 600,000 events (14 MB) and no symbols: show holds a few events
	 * at a time, so its memory is the mapped file and a constant (it
	 * was 6.6x the file) */
	char *big = in_tmp("events.pb");
	char *argv[] = { (char *)schedtool(), "-", big, "bigevents",
			 "600000", NULL };
	struct res r = run_argv(argv, NULL, 60);

	assert_exit(r, 0);
	res_free(&r);
	static const char *const fmts[] = { "text", "html", "script" };
	for (size_t i = 0; i < 3; i++) {
		char *sargv[] = { (char *)ptloom(), "show", "--format",
				  (char *)fmts[i], big, NULL };

		r = run_argv(sargv, "PTLOOM_SHOW_STATS=1", CMD_TIMEOUT);
		assert_exit(r, 0);
		long file = stat_after(r.err, "event reads, ");
		long rss = stat_after(r.err, "peak RSS ") * 1024;
		long reads = stat_after(r.err, "probes, ");

		cr_assert(file > 12000000 && rss > 0, "%s", r.err);
		/* a sanitizer build (PTLOOM_TEST_SLOWDOWN) adds its shadow
		 * memory and quarantine: a larger constant */
		cr_assert_leq(rss, file + file / 2 +
					   (slowdown() > 1 ? 320L << 20 : 24L << 20),
			      "%s: peak RSS %ld for a %ld-byte file", fmts[i],
			      rss, file);
		/* each event decoded a few times (a pass per use), never
		 * once per other event */
		cr_assert(reads >= 600000 && reads <= 4L * 600000,
			  "%s: %ld event reads", fmts[i], reads);
		res_free(&r);
	}
}

Test(schedule_files, show_stops_on_sigterm)
{
	char *big = in_tmp("big.pb"), line[4096];
	char *argv[] = { (char *)schedtool(), "-", big, "big", "200000",
			 NULL };
	struct res r = run_argv(argv, NULL, 60);

	assert_exit(r, 0);
	res_free(&r);
	/* stdout is a pipe nobody reads: show blocks in write until the
	 * signal; it must stop and say so.  The signal goes once show is
	 * blocked in write(2) (/proc/PID/syscall), not after a second: a
	 * sanitizer build on a loaded machine was not writing yet, and
	 * SIGTERM's default action ended it before its handler was in */
	snprintf(line, sizeof(line),
		 "mkfifo f; sleep 30 <f & s=$!; %s show %s >f 2>err.txt & "
		 "p=$!; i=0; while [ $i -lt 600 ] && [ \"$(cut -d' ' -f1 "
		 "/proc/$p/syscall 2>/dev/null)\" != 1 ]; do sleep 0.05; "
		 "i=$((i+1)); done; kill -TERM $p; wait $p; c=$?; kill $s; "
		 "wait $s; cat err.txt >&2; exit $c", ptloom(), big);
	r = sh(line);
	assert_exit(r, 143);
	assert_contains(r.err, "interrupted", "stderr");
	res_free(&r);
}
