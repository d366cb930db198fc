/*
 * the command line: usage errors, --help, --quiet, numbers, output paths,
 * progress lines.
 */
#include "common.h"

TestSuite(command_line, .init = setup, .fini = teardown, .timeout = 180);

/* Usage errors: exit 2, a message on stderr, no summary line. */
static void usage_error(struct res r)
{
	assert_exit(r, 2);
	cr_assert(r.errlen > 0, "`%s`: exit 2 without a message", r.cmd);
	cr_assert_null(strstr(r.out, "ptloom: PASS"), "%s", r.out);
	cr_assert_null(strstr(r.out, "ptloom: FAIL"), "%s", r.out);
	res_free(&r);
}

Test(command_line, missing_program_is_a_usage_error)
{
	usage_error(PTL("run", "--seed", SEED, "--", "/nonexistent/program"));
	usage_error(PTL("run", "--seed", SEED, "--",
			"ptloom-no-such-program-on-path"));
	usage_error(PTL("run", "--seed", SEED, "--"));
	usage_error(PTL("run"));
}

Test(command_line, bad_options_are_usage_errors)
{
	const char *bank = example("bank");

	usage_error(PTL("run", "--no-such-option", "--", bank));
	usage_error(PTL("run", "-s", "bogus", "--", bank));
	usage_error(PTL("run", "--max-runs", "lots", "--", bank));
	usage_error(PTL("run", "--max-runs", "0", "--", bank));
	usage_error(PTL("run", "--preemptions", "-1", "--", bank));
	usage_error(PTL("run", "--seed", "x1", "--", bank));
	usage_error(PTL("no-such-command"));
	usage_error(ptl(NULL));
}

Test(command_line, bad_points_are_usage_errors)
{
	const char *bank = example("bank");

	usage_error(PTL("run", "--points", "bogus", "--", bank));
	usage_error(PTL("run", "--points", "sync,bogus", "--", bank));
	usage_error(PTL("run", "--points", "", "--", bank));
}

Test(command_line, help_and_version_exit_0)
{
	struct res r = PTL("--help");

	assert_exit(r, 0);
	assert_contains(r.out, "run", "--help");
	res_free(&r);
	r = PTL("run", "--help");
	assert_exit(r, 0);
	assert_contains(r.out, "--preemptions", "run --help");
	res_free(&r);
	r = PTL("--version");
	assert_exit(r, 0);
	assert_contains(r.out, "ptloom", "--version");
	res_free(&r);
}

Test(command_line, quiet_prints_the_summary_line_only)
{
	struct res r = RUN(example("bank"), "-q", "--seed", SEED);

	assert_exit(r, 1);
	char *s = summary(&r);

	cr_assert_eq(strlen(r.out), strlen(s) + 1, "-q printed more:\n%s",
		     r.out);
	free(s);
	res_free(&r);
}

Test(command_line, numbers_are_plain_decimals_in_range)
{
	const char *bank = example("bank");
	static const char *const seeds[] = { " 1", "-1", "+1", "010", "0x10",
					     "1e3", "", "18446744073709551616" };

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		one_line_usage_error(PTL("run", "--seed", seeds[i], "--",
					 bank));
	static const char *const secs[] = { "nan", "inf", "-1", "0", " 1",
					    "1e3", "0x10", "infinity", "" };
	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		one_line_usage_error(PTL("run", "--timeout", secs[i], "--",
					 bank));
		one_line_usage_error(PTL("run", "--max-time", secs[i], "--",
					 bank));
	}
	one_line_usage_error(PTL("run", "--max-runs", " 5", "--", bank));
	one_line_usage_error(PTL("run", "--max-steps", "0", "--", bank));
	one_line_usage_error(PTL("run", "-p", "01", "--", bank));
	one_line_usage_error(PTL("races", "--runs", "010", "--", bank));
	one_line_usage_error(PTL("races", "--budget", "-5", "--", bank));
	/* what is plain is accepted */
	struct res r = PTL("run", "-q", "--seed", "0", "--timeout", "2.5",
			   "--max-time", "30", "-p", "0", "--", bank);

	cr_assert(r.code == 0 || r.code == 1, "`%s`: exit %d\n%s", r.cmd,
		  r.code, r.err);
	res_free(&r);
}

Test(command_line, an_unknown_option_is_one_line_and_a_hint)
{
	const char *bank = example("bank");
	static const char *const cmds[] = { "run", "replay", "minimize",
					    "races", "show" };

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char hint[64];
		struct res r = PTL(cmds[i], "--no-such-option", "--", bank);

		snprintf(hint, sizeof(hint), "ptloom %s --help", cmds[i]);
		assert_contains(r.err, hint, "stderr");
		assert_contains(r.err, "--no-such-option", "stderr");
		one_line_usage_error(r);
	}
	struct res r = PTL("run", "--seed");

	assert_contains(r.err, "--seed", "stderr");
	one_line_usage_error(r);
}

Test(command_line, one_run_is_singular)
{
	struct res r = RUN(target("hostile_output"), "--seed", SEED);

	assert_exit(r, 1);
	assert_contains(r.out, "after 1 run,", "summary");
	res_free(&r);
}

Test(command_line, output_paths_are_checked_before_the_first_run)
{
	const char *bank = example("bank");

	spit(in_tmp("file"), "x");
	mkdir(in_tmp("dir"), 0755);
	struct res r = PTL("run", "--seed", SEED, "-o", in_tmp("file/sub"),
			   "--", bank);

	assert_contains(r.err, "-o ", "stderr");
	cr_assert_null(strstr(r.out, "saved:"), "%s", r.out);
	one_line_usage_error(r);
	r = PTL("run", "--seed", SEED, "-o", in_tmp("file"), "--", bank);
	one_line_usage_error(r);
	r = PTL("run", "--seed", SEED, "--report", in_tmp("missing/r.json"),
		"--", bank);
	assert_contains(r.err, "does not exist", "stderr");
	one_line_usage_error(r);
	r = PTL("run", "--seed", SEED, "--report", in_tmp("dir"), "--", bank);
	assert_contains(r.err, "directory", "stderr");
	one_line_usage_error(r);
	r = PTL("run", "--seed", SEED, "--report", in_tmp("file/r.json"), "--",
		bank);
	one_line_usage_error(r);
	/* nothing ran: no schedule directory appeared */
	cr_assert(access(in_tmp(".ptloom"), F_OK), ".ptloom was written");
	char *sched = hostile_schedule(NULL);

	r = PTL("replay", "--report", in_tmp("dir"), sched, "--",
		target("hostile_output"));
	one_line_usage_error(r);
	r = PTL("minimize", "-o", in_tmp("file"), sched, "--",
		target("hostile_output"));
	one_line_usage_error(r);
}

Test(command_line, stale_temporary_files_are_cleaned_at_start)
{
	char *out = in_tmp("out");
	char stale[PATH_MAX], fresh[PATH_MAX], other[PATH_MAX];

	mkdir(out, 0755);
	snprintf(stale, sizeof(stale), "%s/.3ac056-original.pb.AbC123", out);
	snprintf(fresh, sizeof(fresh), "%s/.3ac056-minimized.pb.XyZ987", out);
	snprintf(other, sizeof(other), "%s/.keep-me", out);
	spit(stale, "half a file");
	spit(fresh, "a save in progress");
	spit(other, "not ours");
	struct timespec old[2] = { { time(NULL) - 3600, 0 },
				   { time(NULL) - 3600, 0 } };

	cr_assert(utimensat(AT_FDCWD, stale, old, 0) == 0);
	cr_assert(utimensat(AT_FDCWD, other, old, 0) == 0);
	struct res r = RUN(target("hostile_output"), "--seed", SEED);

	assert_exit(r, 1);
	cr_assert(access(stale, F_OK), "%s is still there", stale);
	cr_assert(access(fresh, F_OK) == 0, "a recent temp file was removed");
	cr_assert(access(other, F_OK) == 0, "a file not ours was removed");
	res_free(&r);
}

/*
 * ptloom run OPTS --output on a terminal (script(1) gives it one on
 * stdout and stderr): the progress line shows what must, every line of
 * the program's output stands alone (what a terminal shows of a line is
 * what follows its last "\r\e[K", which starts every progress write),
 * and the line is cleared before the verdict.
 */
static void progress_beside_output(const char *opts, const char *must,
				   int min_lines)
{
	if (access("/usr/bin/script", X_OK)) {
		skip_note("skipping: no /usr/bin/script to give ptloom a "
			  "terminal");
		return;
	}
	char line[4096];

	snprintf(line, sizeof(line),
		 "/usr/bin/script -qec '%s run --seed " SEED " %s --output -o "
		 "%s -- %s' /dev/null",
		 ptloom(), opts, in_tmp("out"), example("bank_fixed"));
	char *argv[] = { "/bin/sh", "-c", line, NULL };
	struct res r = run_argv(argv, NULL, CMD_TIMEOUT);

	assert_exit(r, 0);
	assert_contains(r.out, must, "the progress lines");
	assert_contains(r.out, "runs/s", "the progress lines");
	int program_lines = 0;
	bool verdict = false;

	for (char *l = strtok(r.out, "\n"); l; l = strtok(NULL, "\n")) {
		size_t n = strlen(l);

		if (n && l[n - 1] == '\r')
			l[--n] = 0;
		char *v = l, *k;

		while ((k = strstr(v, "\r\033[K")))
			v = k + 4;
		if (!strncmp(v, "ptloom: PASS", 12))
			verdict = true;
		if (!*v || (!strncmp(v, "ptloom: ", 8) && !strstr(v, "balance")))
			continue;
		cr_assert(!strncmp(v, "balance", 7),
			  "a program line mixed with progress: \"%s\"", v);
		cr_assert_null(strstr(v, "runs/s"), "\"%s\"", v);
		program_lines++;
	}
	cr_assert(verdict, "no verdict line of its own");
	cr_assert_geq(program_lines, min_lines, "%d program lines",
		      program_lines);
	res_free(&r);
}

Test(command_line, progress_on_a_terminal_never_mixes_with_program_output)
{
	progress_beside_output("-s random -n 40", "race discovery", 40);
}

/* -j N: the parent draws the workers' line; their output never on it */
Test(command_line, progress_of_j_workers_beside_their_output)
{
	progress_beside_output("-j 2 -s random -n 600", "% of 600, 2 workers",
			       60);
	/* bound 6: the line comes every 200 ms, and -j 2's workers now end
	 * together (their samples are shared), so bank_fixed's 250 runs to
	 * bound 2 could end before the first */
	progress_beside_output("-j 2 -p 6", "of its items done), 2 workers",
			       100);
}

/* Not a terminal: not a byte of progress */
Test(command_line, no_progress_when_not_a_terminal)
{
	struct res r = RUN(example("bank_fixed"), "--seed", SEED, "-j", "2",
			   "-s", "random", "-n", "30");

	assert_exit(r, 0);
	cr_assert_null(strstr(r.err, "runs/s"), "%s", r.err);
	cr_assert_null(strchr(r.err, '\r'), "%s", r.err);
	res_free(&r);
}

/* The failing argv_zero run in out/ replayed as PROGRAM: its output. */
static void replay_as(const char *program, const char *want)
{
	char *cmd = NULL;

	cr_assert(asprintf(&cmd, "%s replay -e ABORT_AFTER=1 %s/*-minimized.pb "
				 "-- '%s'",
			   ptloom(), in_tmp("out"), program) > 0);
	struct res r = sh(cmd);

	assert_exit(r, 1);
	assert_contains(r.out, want, "output");
	assert_contains(r.out, "replay exact", "output");
	res_free(&r);
	free(cmd);
}

/*
 * The program gets argv[0] as a shell gives it, not the file's resolved
 * path: a multi-call binary (lld, busybox) acts on the name, a venv's
 * python finds its environment beside it.  A replay spelled otherwise
 * (an absolute path for ./name) keeps the recorded one; another name is
 * the user's.
 */
Test(command_line, the_program_gets_argv0_as_typed)
{
	char *cmd = NULL, *alias = strdup(in_tmp("argv-zero-alias"));
	const char *opts = "-s random -n 2 --seed 1 -e ABORT_AFTER=1";

	cr_assert(symlink(target("argv_zero"), alias) == 0, "%s",
		  strerror(errno));
	cr_assert(asprintf(&cmd, "cd '%s' && %s run %s -o out -- "
				 "./argv-zero-alias",
			   in_tmp(""), ptloom(), opts) > 0);
	struct res r = sh(cmd);

	assert_exit(r, 1);
	assert_contains(r.out, "argv0=./argv-zero-alias turns=2", "output");
	res_free(&r);
	free(cmd);
	/* found on PATH: the bare name */
	cr_assert(asprintf(&cmd, "PATH='%s':$PATH %s run %s -o '%s' -- "
				 "argv-zero-alias",
			   in_tmp(""), ptloom(), opts, in_tmp("out2")) > 0);
	r = sh(cmd);
	assert_exit(r, 1);
	assert_contains(r.out, "argv0=argv-zero-alias turns=2", "output");
	res_free(&r);
	free(cmd);
	/* replayed by its absolute path: the recorded spelling, exact */
	replay_as(alias, "argv0=./argv-zero-alias turns=2");
	/* by another name of the same file: the name given */
	cr_assert(asprintf(&cmd, "argv0=%s turns=2", target("argv_zero")) > 0);
	replay_as(target("argv_zero"), cmd);
	free(cmd);
	free(alias);
}
