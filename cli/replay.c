/*
 * ptloom replay: follow one recorded schedule exactly, prove it by the
 * trace hash, and name the first divergence when it cannot be followed.
 * ptloom minimize: the same failure with fewer preemptions.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "through.h"
#include "../analysis/escape.h"
#include "../analysis/explore.h"
#include "../analysis/minimize.h"
#include "../analysis/report.h"
#include "../analysis/strategy.h"

static const struct option long_opts[] = {
	{ "max-steps", required_argument, 0, 'M' },
	{ "timeout", required_argument, 0, 'T' },
	{ "out", required_argument, 0, 'o' },
	{ "report", required_argument, 0, 'R' },
	{ "report-format", required_argument, 0, 'F' },
	{ "env", required_argument, 0, 'e' },
	{ "free-children", no_argument, 0, 'W' },
	{ "fail-on-child-crash", no_argument, 0, CHILD_CRASH_OPT },
	{ "no-fast-path", no_argument, 0, NO_FAST_PATH_OPT },
	{ "minimize-time", required_argument, 0, MINIMIZE_TIME_OPT },
	{ "trust-env", no_argument, 0, 'U' },
	{ "gdb", no_argument, 0, 'G' },
	{ "stop-at", required_argument, 0, 'A' },
	{ "core", required_argument, 0, 'C' },
	{ "output", no_argument, 0, 'O' },
	{ "quiet", no_argument, 0, 'q' },
	{ "help", no_argument, 0, 'h' },
	{ 0, 0, 0, 0 },
};

static void usage(FILE *f, const char *cmd)
{
	fprintf(f,
		"usage: ptloom %s [OPTIONS] SCHEDULE [-- PROGRAM [ARGS...]]\n"
		"\n"
		"%s"
		"\n"
		"SCHEDULE is a schedule file written by `ptloom run` or a "
		"text script\n(`ptloom show --format script`, one `run Tn`, "
		"`wake Tn` or `timeout Tn` a line).\n"
		"Without a PROGRAM, the file's recorded command line runs in "
		"its recorded\ndirectory.  A PROGRAM other than the recorded "
		"one (file, name, build-id) is\nthe test's runner (ctest ...): "
		"the file is followed in the process that\nruns the recorded "
		"command line in the recorded directory, the rest on the\n"
		"default schedule.\n"
		"\n"
		"      --max-steps N     per-run cap on scheduling points\n"
		"      --timeout SEC     per-run wall-clock cap (default 10)\n"
		"  -o, --out DIR         where new schedule files go (minimize)\n"
		"      --minimize-time SEC  (minimize) at most SEC seconds "
		"(default: the larger\n"
		"                        of 60 s and 10 times the first replay's "
		"time); past it\n"
		"                        the best schedule so far is kept, "
		"\"minimum not proven\"\n"
		"      --report FILE     write a report; --report-format "
		"json|markdown|junit|sarif\n"
		"  -e, --env NAME=VALUE  set in the program's environment "
		"(overrides the\n"
		"                        recorded entry)\n"
		"      --trust-env       apply the file's whole environment "
		"(by default only\n"
		"                        PATH of standard directories, HOME, "
		"LANG, LC_*, TZ,\n"
		"                        USER, TMPDIR, SHELL, PWD: see "
		"ptloom(1))\n"
		"      --output          pass the program's output through\n"
		"      --free-children   child processes ran unscheduled in the "
		"recording\n"
		"      --no-fast-path    clock reads and lone sync calls at "
		"ptrace stops\n"
		"      --fail-on-child-crash  a process that dies of a crash "
		"signal fails the\n"
		"                        run (as the recording's `run "
		"--fail-on-child-crash`)\n"
		"      --gdb             (replay) stop at a step and hand the "
		"program to gdb\n"
		"                        ($PTLOOM_GDB), every thread where the "
		"schedule left it\n"
		"      --core FILE       (replay) write the core of the stopped "
		"program (gdb's\n"
		"                        gcore) at the --stop-at step, then "
		"kill it\n"
		"      --stop-at STEP    with --gdb: stop before STEP, or "
		"`failure' (default:\n"
		"                        the last step, before the failing "
		"thread's last point)\n"
		"  -q, --quiet           print the summary line only\n"
		"\n"
		"exit: 1 the failure reproduced, 0 the program passed, 4 the "
		"program diverged\nfrom the schedule, 2 usage or input error\n",
		cmd,
		strcmp(cmd, "replay")
			? "Replays the failing schedule, then searches for the "
			  "same failure with fewer\npreemptions and decisions, "
			  "and saves it as ID-minimized.pb.\n"
			: "Runs the program following the schedule's decisions "
			  "exactly (same virtual\ntime, same random bytes) and "
			  "checks the trace hash.\n");
}

/* Load a schedule file or script; prints the error.  0 or -1. */
int load_any_schedule(const char *path, struct schedule *s);
int load_any_schedule(const char *path, struct schedule *s)
{
	char err[512] = "";
	char head[8] = { 0 };
	struct stat sb;

	if (stat(path, &sb)) {
		fprintf(stderr, "ptloom: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		fprintf(stderr, "ptloom: %s: not a regular file\n", path);
		return -1;
	}
	if (!sb.st_size) {
		fprintf(stderr, "ptloom: %s: empty file, not a schedule\n",
			path);
		return -1;
	}
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "ptloom: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t n = fread(head, 1, sizeof(head), f);

	fclose(f);
	if (n >= 6 && !memcmp(head, "PTLOOM", 6)) {
		if (schedule_load(path, s, err, sizeof(err))) {
			fprintf(stderr, "ptloom: %s: %s\n", path, err);
			return -1;
		}
		return 0;
	}
	/* a text script */
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "ptloom: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);

	if (!buf) {
		fclose(f);
		return -1;
	}
	len = fread(buf, 1, cap, f);
	bool more = fgetc(f) != EOF;

	fclose(f);
	if (more) {
		fprintf(stderr, "ptloom: %s: not a ptloom schedule (too large "
				"for a script)\n", path);
		free(buf);
		return -1;
	}
	buf[len] = 0;
	int r = schedule_parse_script(buf, len, s, err, sizeof(err));

	free(buf);
	if (r) {
		fprintf(stderr, "ptloom: %s: not a ptloom schedule file or "
				"script: %s\n", path, err);
		return -1;
	}
	return 0;
}

static int cmp_env(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct replay_setup {
	struct common_opts co;
	struct schedule sch;
	struct program prog;
	struct session_config cfg;
	const char *path;
	char identity[1536];	/* why the run may differ, or "" */
	bool gdb;		/* --gdb */
	const char *core;	/* --core FILE */
	const char *stop_at;	/* --stop-at STEP|failure */
	double min_time;	/* --minimize-time, 0 = the default */
	/* PROGRAM is not the recorded program: a runner that runs it (the
	 * file's test is followed where its command line runs) */
	bool through;
};

/* A replay's exit code as its report's verdict. */
static const char *replay_verdict(int code)
{
	return code == EXIT_FAIL	   ? "fail"
	       : code == EXIT_DIVERGED	   ? "diverged"
	       : code == EXIT_INCOMPLETE ? "incomplete"
					   : "pass";
}

static bool same_path(const char *a, const char *b)
{
	struct stat x, y;

	return !strcmp(a, b) || (stat(a, &x) == 0 && stat(b, &y) == 0 &&
				 x.st_dev == y.st_dev && x.st_ino == y.st_ino);
}

/*
 * Is path the recorded program: the same file, or one of the same name
 * (a checkout elsewhere, a rebuilt binary: replayed as before, a changed
 * build-id named as the likely cause of a divergence), or the same
 * build-id?  Otherwise a command given after -- is the recorded test's
 * runner (`ctest ...`).
 */
static bool same_program(const char *path, const struct schedule *sch)
{
	const char *a = strrchr(path, '/'), *b = strrchr(sch->program, '/');
	uint8_t id[64];
	int n;

	if (same_path(path, sch->program) ||
	    !strcmp(a ? a + 1 : path, b ? b + 1 : sch->program))
		return true;
	n = symbols_elf_build_id(path, id, sizeof(id));
	return sch->build_id_len && n > 0 && (size_t)n == sch->build_id_len &&
	       !memcmp(id, sch->build_id, (size_t)n);
}

static int setup(int argc, char **argv, const char *cmd,
		 struct replay_setup *rs)
{
	int c;

	memset(rs, 0, sizeof(*rs));
	common_defaults(&rs->co);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:e:qh", long_opts, NULL)) !=
	       -1) {
		int r = common_option(&rs->co, c, optarg);

		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		if (c == 'h') {
			usage(stdout, cmd);
			return -1;
		}
		if (c == MINIMIZE_TIME_OPT && !strcmp(cmd, "minimize")) {
			if (parse_seconds(optarg, SECONDS_MAX, &rs->min_time)) {
				fprintf(stderr, "ptloom: --minimize-time takes "
						"seconds, a decimal number > 0 "
						"and <= %d (got '%s')\n",
					SECONDS_MAX, esc(optarg));
				return EXIT_USAGE;
			}
			continue;
		}
		if ((c == 'G' || c == 'A' || c == 'C') &&
		    !strcmp(cmd, "replay")) {
			if (c == 'G')
				rs->gdb = true;
			else if (c == 'A')
				rs->stop_at = optarg;
			else
				rs->core = optarg;
			continue;
		}
		return cli_bad_option(cmd, c, argv);
	}
	if (rs->stop_at && !rs->gdb && !rs->core) {
		fprintf(stderr, "ptloom: replay: --stop-at goes with --gdb or "
				"--core\n");
		return EXIT_USAGE;
	}
	if (rs->gdb && rs->core) {
		fprintf(stderr, "ptloom: replay: --gdb or --core, not both\n");
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "ptloom: %s: no schedule given (usage: ptloom "
				"%s SCHEDULE -- PROGRAM [ARGS...])\n", cmd, cmd);
		return EXIT_USAGE;
	}
	rs->path = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (load_any_schedule(rs->path, &rs->sch))
		return EXIT_USAGE;
	rs->co.seed = rs->sch.seed;
	rs->co.points = rs->sch.points ? rs->sch.points : POINTS_SYNC;
	/* the recorded start (files before this one: 2026-01-01 too) */
	rs->co.clock_realtime_ns = rs->sch.clock_start_realtime_ns
					   ? rs->sch.clock_start_realtime_ns
					   : CLOCK_REALTIME_DEFAULT_NS;
	char **args = argv + optind;
	int nargs = argc - optind;

	if (optind >= argc) {
		/* the file's own command line, in its own directory (a
		 * test of `run --per-test` replayed alone) */
		if (!rs->sch.argc || !rs->sch.argv[0][0]) {
			fprintf(stderr, "ptloom: %s: no program given and the "
					"file records none (usage: ptloom %s "
					"SCHEDULE [-- PROGRAM [ARGS...]])\n",
				cmd, cmd);
			return EXIT_USAGE;
		}
		/* where results go stays relative to where we were */
		char here[PATH_MAX], *abs;

		if (getcwd(here, sizeof(here))) {
			if (rs->co.report && rs->co.report[0] != '/' &&
			    asprintf(&abs, "%s/%s", here, rs->co.report) > 0)
				rs->co.report = abs;
			if (rs->co.out_dir && rs->co.out_dir[0] != '/' &&
			    asprintf(&abs, "%s/%s", here, rs->co.out_dir) > 0)
				rs->co.out_dir = abs;
		}
		if (rs->sch.cwd && chdir(rs->sch.cwd)) {
			fprintf(stderr, "ptloom: %s: cannot enter the recorded "
					"directory %s: %s\n",
				cmd, esc(rs->sch.cwd), strerror(errno));
			return EXIT_USAGE;
		}
		args = rs->sch.argv;
		nargs = rs->sch.argc;
	}
	if (program_setup(&rs->prog, nargs, args, &rs->co))
		return EXIT_USAGE;
	/* `replay FILE -- ctest ...` for a test's file: another program,
	 * which runs the recorded one (a recorded trace to follow there) */
	rs->through = !strcmp(cmd, "replay") && args != rs->sch.argv &&
		      rs->sch.nevents && rs->sch.program[0] &&
		      !rs->gdb && !rs->core &&
		      !same_program(rs->prog.path, &rs->sch);
	/* the recorded argv[0] where only its spelling differs (./bank for
	 * /home/u/bank: the same name of the same file), so stack addresses
	 * match; another name is the user's choice (a multi-call binary acts
	 * on it), and the file's is data, not a command */
	if (!rs->through && args != rs->sch.argv && rs->sch.argc &&
	    rs->sch.argv[0] && strcmp(rs->sch.argv[0], rs->prog.argv0)) {
		const char *r = rs->sch.argv[0], *rb = strrchr(r, '/'),
			   *tb = strrchr(rs->prog.argv0, '/');
		char *rp = !strcmp(rb ? rb + 1 : r,
				   tb ? tb + 1 : rs->prog.argv0)
				   ? tracer_find_program(r)
				   : NULL;

		if (rp && !strcmp(rp, rs->prog.path))
			rs->prog.argv0 = r;
		free(rp);
	}
	/* the recorded environment, so stack addresses match (through a
	 * runner too: the runner passes it on to the test, as it did) */
	if (rs->sch.nenv) {
		for (int i = 0; i < rs->prog.nenv; i++)
			free(rs->prog.envp[i]);
		free(rs->prog.envp);
		rs->prog.envp = calloc((size_t)rs->sch.nenv + 1, sizeof(char *));
		for (int i = 0; i < rs->sch.nenv; i++)
			rs->prog.envp[i] = strdup(rs->sch.env[i]);
		rs->prog.nenv = rs->sch.nenv;
		rs->prog.envp[rs->prog.nenv] = NULL;
		/* -e overrides what the file says */
		for (int i = 0; i < rs->co.nenv_extra; i++)
			program_setenv(&rs->prog, rs->co.env_extra[i]);
		qsort(rs->prog.envp, (size_t)rs->prog.nenv, sizeof(char *),
		      cmp_env);
	}
	/* the file's environment is data, not permission: only the fixed
	 * set is applied unless the user says so (README "Schedule files
	 * are untrusted") */
	char names[1024];
	int nbad = rs->co.trust_env
			   ? 0
			   : env_refused(rs->prog.envp, rs->prog.nenv,
					 rs->co.env_extra, rs->co.nenv_extra,
					 names, sizeof(names));

	if (nbad) {
		fprintf(stderr, "ptloom: %s: refusing the recorded environment "
				"entr%s %s (a replay applies only PATH of "
				"standard or your own directories, HOME, LANG, "
				"LC_*, TZ, USER, TMPDIR, SHELL, PWD and what "
				"ptloom's own environment holds: others can make "
				"a shell, an interpreter or the loader run code); "
				"confirm with -e NAME=VALUE, or --trust-env if "
				"you trust this file\n",
			esc(rs->path), nbad == 1 ? "y" : "ies", names);
		return EXIT_USAGE;
	}
	if (check_output_paths(&rs->co, !strcmp(cmd, "minimize")))
		return EXIT_USAGE;
	session_config_init(&rs->cfg, &rs->prog, &rs->co);
	rs->cfg.symbolize_trace = true;
	rs->cfg.user_points = rs->sch.user_points;
	rs->cfg.nuser_points = rs->sch.nuser_points;
	if (rs->through) {
		/* the points are the test's process's, not the runner's */
		rs->cfg.user_points = NULL;
		rs->cfg.nuser_points = 0;
		rs->cfg.points &= ~POINTS_RACES;
	} else {
		/* the ids the recording's threads and processes had */
		rs->cfg.ids = rs->sch.thread_ids;
		rs->cfg.nids = rs->sch.nthread_ids;
	}
	/* is it the recorded binary? */
	if (!rs->through && (rs->sch.program_size || rs->sch.build_id_len)) {
		uint8_t id[64];
		int n = symbols_elf_build_id(rs->prog.path, id, sizeof(id));
		uint64_t h = 0, sz = 0;

		schedule_hash_file(rs->prog.path, &h, &sz);
		if (rs->sch.build_id_len && n > 0 &&
		    ((size_t)n != rs->sch.build_id_len ||
		     memcmp(id, rs->sch.build_id, (size_t)n)))
			snprintf(rs->identity, sizeof(rs->identity),
				 "%s is not the recorded binary (its build-id "
				 "differs): it was rebuilt or changed",
				 rs->prog.display);
		else if (rs->sch.program_hash && h != rs->sch.program_hash)
			snprintf(rs->identity, sizeof(rs->identity),
				 "%s is not the recorded binary (its content "
				 "hash differs)",
				 rs->prog.display);
	}
	/* the libraries it loads: ld.so, libc, ..., and ld.so.cache */
	char lib[1024];

	if (objects_changed(&rs->sch, lib, sizeof(lib))) {
		size_t k = strlen(rs->identity);

		snprintf(rs->identity + k, sizeof(rs->identity) - k, "%s%s",
			 k ? "; " : "", lib);
		if (!rs->co.quiet)
			fprintf(stderr, "ptloom: warning: %s: the replay may "
					"diverge\n",
				lib);
	}
	return 0;
}

static void teardown(struct replay_setup *rs)
{
	schedule_free(&rs->sch);
	program_free(&rs->prog);
	free(rs->co.env_extra);
}

/* Interrupted before the replay ended: nothing was reproduced or refuted.
 * Says so, writes the report, frees r; returns 130 or 143. */
static int interrupted_replay(struct replay_setup *rs, struct run_result *r)
{
	char summary[600], at[48] = "";

	if (r && r->steps)
		snprintf(at, sizeof(at), " at step %llu",
			 (unsigned long long)r->steps);
	snprintf(summary, sizeof(summary),
		 "ptloom: INTERRUPTED by %s: the replay of %s stopped%s "
		 "before its end; nothing reproduced or refuted",
		 signal_name(cli_interrupted), esc(rs->path), at);
	printf("%s\n", summary);
	if (rs->co.report) {
		struct report rep = {
			.command = "replay",
			.verdict = "incomplete",
			.interrupted = true,
			.strategy = "replay",
			.runs = 0,
			.seed = rs->sch.seed,
			.summary = summary,
			.schedule_file = rs->path,
			.has_replay = true,
			.diverged_at = -1,
			.thread = -1,
			.exit_status = -1,
			.program = rs->prog.display,
		};

		if (report_write(&rep, rs->co.report_format, rs->co.report))
			fprintf(stderr, "ptloom: cannot write %s\n",
				rs->co.report);
	}
	if (r)
		run_result_free(r);
	teardown(rs);
	return exit_interrupted();
}

/*
 * replay --core FILE: the stopped program's core, written by gdb's gcore
 * (a child we wait for), then the program is killed.  0 or EXIT_USAGE.
 */
static int write_core(struct replay_setup *rs, int pid, uint64_t step)
{
	char pidbuf[32], cmd[4200];
	struct stat sb;

	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	snprintf(cmd, sizeof(cmd), "gcore %s", rs->core);
	char *argv[] = { "gdb", "-batch", "-nx", "-ex", cmd, "-p", pidbuf,
			 NULL };
	pid_t g = fork();

	if (g == 0) {
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(nul, 1); /* gdb's chatter: the result is the file */
		execvp("gdb", argv);
		fprintf(stderr, "ptloom: cannot run gdb for --core: %s\n",
			strerror(errno));
		_exit(127);
	}
	int st = 0;

	while (g > 0 && waitpid(g, &st, 0) < 0 && errno == EINTR)
		;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	teardown(rs);
	if (g < 0 || !WIFEXITED(st) || WEXITSTATUS(st) ||
	    stat(rs->core, &sb) || !sb.st_size) {
		fprintf(stderr, "ptloom: --core %s: gdb's gcore did not write "
				"it%s\n", esc(rs->core),
			g > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127
				? " (no gdb on PATH)"
				: "");
		return EXIT_USAGE;
	}
	printf("core: %s (before step %llu, every thread where the schedule "
	       "left it)\n", rs->core, (unsigned long long)step);
	return EXIT_PASS;
}

/*
 * replay --gdb: follow the schedule to the stop step, then exec the
 * debugger attached to the stopped program.  ptloom becomes the debugger,
 * so it stays the program's parent: the program's PR_SET_PDEATHSIG kills
 * it when the debugger exits, and nothing is left behind.
 */
static int replay_gdb(struct replay_setup *rs)
{
	uint64_t step;

	if (!rs->stop_at || !strcmp(rs->stop_at, "failure")) {
		/* the failing thread's last point: the last recorded step */
		if (rs->sch.nevents)
			step = rs->sch.events[rs->sch.nevents - 1].step;
		else if (rs->sch.ndecisions &&
			 rs->sch.decisions[rs->sch.ndecisions - 1].step !=
				 SCHEDULE_STEP_UNKNOWN)
			step = rs->sch.decisions[rs->sch.ndecisions - 1].step;
		else {
			fprintf(stderr, "ptloom: %s records no steps: give "
					"--stop-at STEP\n", esc(rs->path));
			teardown(rs);
			return EXIT_USAGE;
		}
	} else if (parse_decimal(rs->stop_at, UINT32_MAX, &step)) {
		fprintf(stderr, "ptloom: --stop-at takes a step number or "
				"`failure' (got '%s')\n", esc(rs->stop_at));
		teardown(rs);
		return EXIT_USAGE;
	}
	if (rs->core) {
		/* where the core goes is checked before the run */
		struct common_opts o = { .report = (char *)rs->core };

		if (check_output_paths(&o, false)) {
			teardown(rs);
			return EXIT_USAGE;
		}
	}
	const char *dbg = getenv("PTLOOM_GDB");
	char **dargv;
	int dn = shell_split(dbg && *dbg ? dbg : "gdb", &dargv);

	if (dn < 0) {
		fprintf(stderr, "ptloom: PTLOOM_GDB: not a command line (an "
				"unterminated quote?): %s\n", esc(dbg));
		teardown(rs);
		return EXIT_USAGE;
	}
	struct replay_strategy strat;

	replay_init(&strat, rs->sch.decisions, rs->sch.ndecisions, true);
	struct strategy st = replay_strategy(&strat);
	struct run_result r;

	rs->cfg.stop_at = true;
	rs->cfg.stop_step = step;
	rs->cfg.symbolize_trace = false;
	int e = session_run(&rs->cfg, &st, &r);

	if (e || !r.handed_over) {
		if (cli_interrupted)
			return interrupted_replay(rs, e ? NULL : &r);
		if (e)
			fprintf(stderr, "ptloom: cannot start %s: %s\n",
				rs->prog.display, tracer_start_error(e));
		else if (r.failure == FAIL_DIVERGED)
			fprintf(stderr, "ptloom: the program diverged from the "
					"schedule at step %llu, before step "
					"%llu: nothing to debug there\n",
				(unsigned long long)r.steps,
				(unsigned long long)step);
		else
			fprintf(stderr, "ptloom: the run ended at step %llu "
					"(%s), before step %llu\n",
				(unsigned long long)r.steps,
				failure_kind_name(r.failure),
				(unsigned long long)step);
		if (!e)
			run_result_free(&r);
		free(dargv[0]);
		free(dargv);
		teardown(rs);
		return e ? EXIT_USAGE : EXIT_DIVERGED;
	}
	int pid = r.handed_over;
	char pidbuf[32];

	/* wait for every thread's group-stop (a second at most) */
	for (int tries = 0; tries < 100; tries++) {
		char path[64], buf[512];
		bool all = true;

		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		DIR *d = opendir(path);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/stat",
				 pid, de->d_name);
			FILE *f = fopen(path, "r");
			size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

			if (f)
				fclose(f);
			buf[n] = 0;
			char *rp = strrchr(buf, ')');

			if (!rp || rp[1] != ' ' || rp[2] != 'T')
				all = false;
		}
		if (d)
			closedir(d);
		if (all)
			break;
		usleep(10000);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
	char **argv = calloc((size_t)dn + 3, sizeof(char *));

	for (int i = 0; i < dn; i++)
		argv[i] = dargv[i];
	argv[dn] = "-p";
	argv[dn + 1] = pidbuf;
	if (rs->core)
		return write_core(rs, pid, step);
	fprintf(stderr, "ptloom: %s stopped before step %llu (pid %d, every "
			"thread where the schedule left it); %s takes over, "
			"and the program is killed when it exits\n",
		rs->prog.display, (unsigned long long)step, pid, esc(argv[0]));
	for (const char *l = r.split_note; *l;) {
		int th = 0;
		unsigned long long addr = 0, val = 0;
		unsigned size = 0;

		if (sscanf(l, "T%d %llx %u %llu", &th, &addr, &size, &val) == 4)
			fprintf(stderr,
				"ptloom: note: T%d stopped between the load and "
				"the store of its read-modify-write of %u bytes "
				"at %#llx: it has read %llu (ptloom keeps it), "
				"so the memory there may hold another thread's "
				"store since; continued, the instruction would "
				"read memory again\n",
				th, size, addr, val);
		l = strchr(l, '\n');
		l = l ? l + 1 : "";
	}
	fprintf(stderr, "ptloom: note: for inspection only: ptloom's seccomp "
			"filter stays, so if the program is continued, the "
			"system calls it traps fail with ENOSYS\n");
	fflush(stdout);
	fflush(stderr);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	fprintf(stderr, "ptloom: cannot run %s: %s\n", esc(argv[0]),
		strerror(errno));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	return EXIT_USAGE;
}

/* ---- replay FILE -- RUNNER: a test's file through its runner ---- */

static void thr_fork(void *ctx, int pidx, int ppidx)
{
	through_fork(ctx, pidx, ppidx);
}

static bool thr_exec(void *ctx, int pidx, int ppidx, pid_t pid, int thread)
{
	(void)ppidx;
	through_exec(ctx, pidx, pid, thread);
	return false;
}

static void thr_thread(void *ctx, int thread, int pidx)
{
	through_thread(ctx, thread, pidx);
}

static void thr_died(void *ctx, int pidx, int status)
{
	through_died(ctx, pidx, status);
}

static const struct user_point *thr_points(void *ctx, int pidx, size_t *n)
{
	return through_points(ctx, pidx, n);
}

/*
 * The command is not the recorded program: run it, and follow the file's
 * trace in the process that runs the recorded command line (in the
 * recorded directory), every other process on the default schedule.
 * Reproduced (exit 1) when that process fails as recorded.
 */
static int replay_through(struct replay_setup *rs)
{
	struct through *thr = through_new();
	char rec[600], cmdline[4096];
	struct schedule sch;

	if (!thr) {
		fprintf(stderr, "ptloom: out of memory\n");
		teardown(rs);
		return EXIT_USAGE;
	}
	describe_schedule_failure(&rs->sch, rec, sizeof(rec));
	shell_join(cmdline, sizeof(cmdline), rs->sch.argv, rs->sch.argc);
	uint64_t seed = rs->sch.seed;
	int recorded = rs->sch.failure;
	struct run_result want;

	schedule_failure(&rs->sch, &want);
	/* the follower takes the schedule over */
	sch = rs->sch;
	memset(&rs->sch, 0, sizeof(rs->sch));
	if (through_add(thr, &sch, cmdline, -1) < 0) {
		fprintf(stderr, "ptloom: out of memory\n");
		through_free(thr);
		teardown(rs);
		return EXIT_USAGE;
	}
	struct proc_watch w = {
		.ctx = thr,
		.fork = thr_fork,
		.exec = thr_exec,
		.thread = thr_thread,
		.died = thr_died,
		.points = thr_points,
	};
	struct strategy st = through_strategy(thr);
	struct run_result r;

	rs->cfg.watch = &w;
	cli_test_interrupt("replay");
	int e = session_run(&rs->cfg, &st, &r);

	if (e && cli_interrupted) {
		through_free(thr);
		return interrupted_replay(rs, NULL);
	}
	if (e) {
		fprintf(stderr, "ptloom: cannot start %s: %s\n",
			rs->prog.display, tracer_start_error(e));
		through_free(thr);
		teardown(rs);
		return EXIT_USAGE;
	}
	if (r.failure == FAIL_INTERRUPTED ||
	    (cli_interrupted && r.failure == FAIL_NONE)) {
		through_free(thr);
		return interrupted_replay(rs, &r);
	}
	if (rs->co.output && r.output_len)
		fwrite(r.output, 1, r.output_len, stdout);
	struct through_result tr;

	through_result(thr, 0, &tr);
	bool all = tr.st.followed == tr.st.recorded && !tr.st.diverged;
	bool passed = tr.ended && WIFEXITED(tr.status) &&
		      WEXITSTATUS(tr.status) == 0;
	char summary[2048], runner[160] = "";
	int code;

	if (r.failure == FAIL_NONE || r.failure == FAIL_EXIT)
		snprintf(runner, sizeof(runner), "exited with status %d",
			 r.exit_status);
	else if (r.failure == FAIL_CRASH)
		snprintf(runner, sizeof(runner), "was killed by %s",
			 signal_name(r.signal));
	else
		snprintf(runner, sizeof(runner), "ended: %s",
			 failure_kind_name(r.failure));
	if (tr.reproduced) {
		snprintf(summary, sizeof(summary),
			 "ptloom: FAIL %s, reproduced through %s in P%d "
			 "(%s)", rec, rs->prog.display, tr.pidx, tr.follow);
		code = EXIT_FAIL;
	} else if (tr.found && !tr.ended &&
		   (r.failure == FAIL_KILLED || r.failure == FAIL_STEPS ||
		    r.failure == FAIL_SLOW)) {
		snprintf(summary, sizeof(summary),
			 "ptloom: INCOMPLETE %s before the test ended",
			 r.message);
		code = EXIT_INCOMPLETE;
	} else if (tr.found && all && passed) {
		snprintf(summary, sizeof(summary),
			 "ptloom: PASS the schedule still applies through %s "
			 "and the test passes%s",
			 rs->prog.display,
			 recorded ? " (the recorded failure is gone)" : "");
		code = EXIT_PASS;
	} else {
		snprintf(summary, sizeof(summary),
			 "ptloom: DIVERGED the test did not fail as recorded "
			 "through %s (%s)", rs->prog.display, tr.what);
		code = EXIT_DIVERGED;
	}
	if (!rs->co.quiet) {
		if (recorded)
			printf("recorded: %s\n", rec);
		printf("in the runner's run: %s: %s\n", esc(cmdline),
		       esc(tr.what));
		printf("runner: %s %s\n", esc(rs->prog.display), runner);
		if (rs->identity[0])
			printf("note: %s; that is the likely cause of any "
			       "divergence\n", rs->identity);
	}
	printf("%s\n", esc(summary));
	if (rs->co.report || github_enabled()) {
		char signame[32];
		struct report rep = {
			.command = "replay",
			.verdict = replay_verdict(code),
			.strategy = "replay",
			.runs = 1,
			.complete = true,
			.seed = seed,
			.seconds = r.seconds,
			.summary = summary,
			.schedule_file = rs->path,
			.has_replay = true,
			.exact = all,
			.trace_hash = NULL,
			.diverged_at = tr.st.diverged ? (long)tr.st.followed
						      : -1,
			.divergence = tr.st.diverged ? tr.st.why : NULL,
			.program = rs->prog.display,
			.runner_command = rs->prog.display,
			.runner_exit = r.failure == FAIL_CRASH
					       ? 128 + r.signal
					       : r.failure == FAIL_NONE ||
							 r.failure == FAIL_EXIT
						 ? r.exit_status
						 : -1,
			.runner_output = r.output,
		};

		/* the failure is the test's, as recorded */
		report_failure(&rep, tr.reproduced ? &want : &r,
			       tr.reproduced, signame, sizeof(signame));
		if (tr.reproduced)
			rep.output = r.output;
		if (rs->co.report &&
		    report_write(&rep, rs->co.report_format, rs->co.report))
			fprintf(stderr, "ptloom: cannot write %s\n",
				rs->co.report);
		github_report(&rep);
	}
	run_result_free(&r);
	through_free(thr);
	teardown(rs);
	return code;
}

int cmd_replay(int argc, char **argv)
{
	struct replay_setup rs;
	int e = setup(argc, argv, "replay", &rs);

	if (e)
		return e < 0 ? EXIT_PASS : e;
	if (cli_interrupted) /* while the objects were identified */
		return interrupted_replay(&rs, NULL);
	if (rs.gdb || rs.core)
		return replay_gdb(&rs);
	if (rs.through)
		return replay_through(&rs);
	struct replay_strategy strat;

	replay_init(&strat, rs.sch.decisions, rs.sch.ndecisions, true);
	struct strategy st = replay_strategy(&strat);
	struct run_result r;

	cli_test_interrupt("replay");
	e = session_run(&rs.cfg, &st, &r);
	if (e && cli_interrupted)
		return interrupted_replay(&rs, NULL);
	if (e) {
		fprintf(stderr, "ptloom: cannot start %s: %s\n",
			rs.prog.display, tracer_start_error(e));
		teardown(&rs);
		return EXIT_USAGE;
	}
	if (r.failure == FAIL_INTERRUPTED || (cli_interrupted &&
					      r.failure == FAIL_NONE))
		return interrupted_replay(&rs, &r);
	if (!rs.co.quiet && getenv("PTLOOM_STATS")) {
		/* where the replay's stops went, as run's statistics */
		fprintf(stderr, "ptloom: replay stops by kind:");
		for (int k = 0; k < STOPK_N; k++)
			if (r.stop_kinds[k])
				fprintf(stderr, " %s %llu", stop_kind_name(k),
					(unsigned long long)r.stop_kinds[k]);
		fputc('\n', stderr);
	}
	if (rs.co.output && r.output_total > r.output_len)
		fprintf(stderr, "ptloom: the replay wrote %llu bytes of output; "
				"--output passes its last %zu\n",
			(unsigned long long)r.output_total, r.output_len);
	if (rs.co.output && r.output_len)
		fwrite(r.output, 1, r.output_len, stdout);

	/* the first event that differs from the recording */
	char div[1024] = "", a[512], b[512];
	long at = -1;

	if (rs.sch.nevents) {
		long k = trace_departure(rs.sch.events, rs.sch.nevents,
					 r.events, r.nevents);

		if (k >= 0) {
			at = k;
			strcpy(a, "the run ended");
			strcpy(b, "the run ended");
			if ((size_t)k < rs.sch.nevents)
				event_line(&rs.sch.events[k], rs.sch.syms,
					   rs.sch.nsyms, NULL, 0, a, sizeof(a));
			if ((size_t)k < r.nevents)
				event_line(&r.events[k], r.syms, r.nsyms, NULL,
					   0, b, sizeof(b));
			else if (r.failure != FAIL_NONE)
				snprintf(b, sizeof(b), "the run failed");
			snprintf(div, sizeof(div),
				 "diverged at step %ld: recorded %s, now %s", k,
				 a, b);
		}
	} else if (strat.diverged_at >= 0) {
		at = (long)strat.diverged_step;
		snprintf(div, sizeof(div), "diverged at step %u (decision %ld): "
					   "%s",
			 strat.diverged_step, strat.diverged_at + 1, strat.why);
	}
	if (!div[0] && strat.diverged_at >= 0) {
		at = (long)strat.diverged_step;
		snprintf(div, sizeof(div), "diverged at step %u: %s",
			 strat.diverged_step, strat.why);
	}
	/* the likely cause of a divergence: other objects, else other ids */
	if ((div[0] || r.failure == FAIL_DIVERGED) && !rs.identity[0] &&
	    !objects_differ(&rs.sch, &r, rs.identity, sizeof(rs.identity)))
		ids_differ(&rs.sch, &r, rs.identity, sizeof(rs.identity));
	bool failed = r.failure != FAIL_NONE && r.failure != FAIL_DIVERGED &&
		      r.failure != FAIL_KILLED && r.failure != FAIL_STEPS &&
		      r.failure != FAIL_SLOW;
	bool exact = !div[0] && strat.diverged_at < 0 &&
		     (!rs.sch.nevents || r.trace_hash == rs.sch.trace_hash);
	char hash[32], desc[600], rec[600], summary[1400];

	agent_note(r.agent_note);
	snprintf(hash, sizeof(hash), "%016llx",
		 (unsigned long long)r.trace_hash);
	describe_failure(&r, desc, sizeof(desc));
	describe_schedule_failure(&rs.sch, rec, sizeof(rec));
	int code;
	bool same = false;

	if (failed) {
		struct run_result want;

		schedule_failure(&rs.sch, &want);
		same = fingerprint_equal(&r, &want);
		snprintf(summary, sizeof(summary),
			 "ptloom: FAIL %s (replay %s%s)", desc,
			 exact ? "exact, trace " : "not exact",
			 exact ? hash : same ? "" : "; a different failure");
		code = EXIT_FAIL;
	} else if (r.failure == FAIL_KILLED || r.failure == FAIL_STEPS ||
		   r.failure == FAIL_SLOW) {
		snprintf(summary, sizeof(summary), "ptloom: INCOMPLETE %s",
			 r.message);
		code = EXIT_INCOMPLETE;
	} else if (div[0] || r.failure == FAIL_DIVERGED) {
		snprintf(summary, sizeof(summary),
			 "ptloom: DIVERGED the program no longer follows the "
			 "schedule and did not fail");
		code = EXIT_DIVERGED;
	} else {
		snprintf(summary, sizeof(summary),
			 "ptloom: PASS the schedule still applies and the "
			 "program passes%s",
			 rs.sch.failure ? " (the recorded failure is gone)" : "");
		code = EXIT_PASS;
	}
	if (!rs.co.quiet) {
		if (failed)
			print_failure_output(&r, !rs.co.output);
		if (rs.sch.failure)
			printf("recorded: %s\n", rec);
		if (div[0])
			printf("%s\n", div);
		if (rs.identity[0])
			printf("note: %s; that is the likely cause of any "
			       "divergence\n", rs.identity);
		printf("trace hash: %s (%s)\n", hash,
		       exact ? "identical to the recording"
		       : rs.sch.nevents ? "differs from the recording"
					: "script: no recorded trace");
	}
	printf("%s\n", summary);
	if (rs.co.report || github_enabled()) {
		struct report rep = {
			.command = "replay",
			.verdict = replay_verdict(code),
			.strategy = "replay",
			.runs = 1,
			.complete = true,
			.seed = rs.sch.seed,
			.seconds = r.seconds,
			.summary = summary,
			.schedule_file = rs.path,
			.has_replay = true,
			.exact = exact,
			.trace_hash = hash,
			.diverged_at = at,
			.divergence = div[0] ? div : NULL,
			.program = rs.prog.display,
		};

		char signame[32];

		report_failure(&rep, &r, failed, signame, sizeof(signame));
		if (rs.co.report &&
		    report_write(&rep, rs.co.report_format, rs.co.report))
			fprintf(stderr, "ptloom: cannot write %s\n",
				rs.co.report);
		github_report(&rep);
	}
	run_result_free(&r);
	teardown(&rs);
	return code;
}

int cmd_minimize(int argc, char **argv)
{
	struct replay_setup rs;
	int e = setup(argc, argv, "minimize", &rs);

	if (e)
		return e < 0 ? EXIT_PASS : e;
	if (cli_interrupted)
		return interrupted_replay(&rs, NULL);
	struct run_result best;
	struct minimize_stats ms;

	rs.cfg.symbolize_trace = false;
	e = run_by_step(&rs.cfg, rs.sch.decisions, rs.sch.ndecisions, &best);
	if ((e && cli_interrupted) || (!e && best.failure == FAIL_INTERRUPTED))
		return interrupted_replay(&rs, e ? NULL : &best);
	if (e) {
		fprintf(stderr, "ptloom: cannot start %s: %s\n",
			rs.prog.display, tracer_start_error(e));
		teardown(&rs);
		return EXIT_USAGE;
	}
	if (best.failure == FAIL_NONE || best.failure == FAIL_DIVERGED) {
		printf("ptloom: PASS the schedule does not fail: nothing to "
		       "minimize\n");
		run_result_free(&best);
		teardown(&rs);
		return EXIT_PASS;
	}
	cli_test_interrupt("minimize");
	cli_progress_begin("minimizing", !rs.co.quiet);
	/* within a bound the user can predict, as run's: --minimize-time,
	 * else the larger of 60 s and 10 times the replay that found the
	 * failure again; past it the best schedule so far is kept */
	double t0 = cli_wall();
	double bound = rs.min_time > 0 ? rs.min_time
		       : best.seconds * MINIMIZE_TIME_FACTOR > MINIMIZE_TIME_MIN
			       ? best.seconds * MINIMIZE_TIME_FACTOR
			       : MINIMIZE_TIME_MIN;
	unsigned pb = best.preemptions;
	size_t db = minimize_count_decisions(&best);
	struct minimize_stats ps = { 0 };

	cli_bound_begin(&rs.cfg, bound);
	uint64_t max_steps = minimize_cap_steps(&rs.cfg, &best);

	minimize_process_first(&rs.cfg, &best, &ps);
	minimize_reorder_first(&rs.cfg, &best, 500, &ms);
	ms.runs += ps.runs;
	ms.preemptions_before = pb;
	ms.decisions_before = db;
	if (best.preemptions > 1 && !cli_interrupted && !cli_bound_expired()) {
		/*
		 * The same failure with fewer preemptions, searched below
		 * its count as `run` does: at most 400 runs, for as long as
		 * the rest took (at least MINIMIZE_PROOF_MIN s) within the
		 * bound, or the rest of the user's --minimize-time; a run
		 * behind a test runner takes seconds.
		 */
		double spent = cli_wall() - t0;
		struct minimize_stats more = { 0 };

		cli_bound_cap(&rs.cfg, rs.min_time > 0 ? 0
				       : spent > MINIMIZE_PROOF_MIN
					       ? spent
					       : MINIMIZE_PROOF_MIN);
		if (minimize_search(run_with_strategy, &rs.cfg, &best, 400,
				    &more) >= 0) {
			cli_bound_cap(&rs.cfg, 0);
			minimize(run_by_step, &rs.cfg, &best, 200, &more);
			ms.preemptions_after = best.preemptions;
			ms.decisions_after = minimize_count_decisions(&best);
		}
		cli_bound_cap(&rs.cfg, 0);
		ms.runs += more.runs;
	}
	ms.preemptions_after = best.preemptions;
	ms.decisions_after = minimize_count_decisions(&best);
	bool stopped = cli_bound_hit();

	cli_bound_end(&rs.cfg);
	rs.cfg.max_steps = max_steps;
	cli_progress_end();
	/* once more, exactly, with names */
	struct replay_strategy exact;
	struct run_result fin;

	replay_init(&exact, best.decisions, best.ndecisions, true);
	struct strategy st = replay_strategy(&exact);

	rs.cfg.symbolize_trace = true;
	if (session_run(&rs.cfg, &st, &fin) == 0 &&
	    fin.failure != FAIL_INTERRUPTED &&
	    fin.trace_hash == best.trace_hash) {
		run_result_free(&best);
		best = fin;
	} else {
		run_result_free(&fin);
	}
	if (cli_interrupted) {
		/* what was found so far is a real failing run, but it was
		 * not replayed exactly: nothing is saved */
		char desc[600];

		describe_failure(&best, desc, sizeof(desc));
		printf("minimized: not finished (interrupted after %u run%s; "
		       "nothing saved)\n", ms.runs, ms.runs == 1 ? "" : "s");
		printf("ptloom: INTERRUPTED by %s while minimizing %s; the "
		       "recorded schedule still fails: %s\n",
		       signal_name(cli_interrupted), esc(rs.path), desc);
		run_result_free(&best);
		teardown(&rs);
		return exit_interrupted();
	}
	struct schedule out;
	char id[32], path[1024], desc[600], quoted[4096];

	schedule_from_run(&out, &rs.prog, &rs.co,
			  rs.sch.strategy ? rs.sch.strategy : "dfs",
			  (int)rs.sch.preemption_bound, &best);
	schedule_set_points(&out, rs.sch.user_points, rs.sch.nuser_points);
	out.points = rs.sch.points;
	snprintf(id, sizeof(id), "%06llx",
		 (unsigned long long)(best.trace_hash & 0xffffff));
	int se = save_schedule(&out, rs.co.out_dir, id, "minimized", path,
			       sizeof(path));

	if (se) {
		fprintf(stderr, "ptloom: cannot write %s: %s\n", path,
			strerror(-se));
		schedule_free(&out);
		run_result_free(&best);
		teardown(&rs);
		return EXIT_USAGE;
	}
	schedule_free(&out);
	describe_failure(&best, desc, sizeof(desc));
	shell_join(quoted, sizeof(quoted), rs.prog.argv, rs.prog.argc);
	printf("minimized: %u preemption%s (from %u), %zu decision%s (from "
	       "%zu), %u run%s",
	       ms.preemptions_after, ms.preemptions_after == 1 ? "" : "s",
	       ms.preemptions_before, ms.decisions_after,
	       ms.decisions_after == 1 ? "" : "s", ms.decisions_before,
	       ms.runs, ms.runs == 1 ? "" : "s");
	if (stopped)
		printf("; stopped at its %.3g s bound (%s): the best schedule "
		       "so far, minimum not proven",
		       bound, rs.min_time > 0 ? "--minimize-time"
					      : "the default");
	printf("\nsaved: %s\nreplay: ptloom replay %s -- %s\n", path, path,
	       quoted);
	char summary[800];

	snprintf(summary, sizeof(summary), "ptloom: FAIL %s (minimized%s)",
		 desc, stopped ? ", minimum not proven" : "");
	printf("%s\n", summary);
	if (rs.co.report || github_enabled()) {
		char cmd[8192];

		snprintf(cmd, sizeof(cmd), "ptloom replay %s -- %s", path, quoted);
		struct report rep = {
			.command = "minimize",
			.verdict = "fail",
			.strategy = rs.sch.strategy,
			.runs = ms.runs,
			.complete = true,
			.preemption_bound = (int)rs.sch.preemption_bound,
			.seed = rs.sch.seed,
			.summary = summary,
			.schedule_file = rs.path,
			.minimized_file = path,
			.minimum_proven = 1, /* minimize proves no minimum */
			.replay_command = cmd,
			.diverged_at = -1,
			.program = rs.prog.display,
		};

		char signame[32];

		report_failure(&rep, &best, true, signame, sizeof(signame));
		if (rs.co.report &&
		    report_write(&rep, rs.co.report_format, rs.co.report))
			fprintf(stderr, "ptloom: cannot write %s\n",
				rs.co.report);
		github_report(&rep);
	}
	run_result_free(&best);
	teardown(&rs);
	return EXIT_FAIL;
}
