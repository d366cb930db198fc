/*
 * ptloom: make flaky concurrency bugs in native programs reproducible.
 * Dispatches to the subcommands; see README.md and `ptloom --help`.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <capstone/capstone.h>
#include <elfutils/libdwfl.h>
#include <protobuf-c/protobuf-c.h>
#include "cli.h"
#include "version.h"

volatile int cli_interrupted;

static void on_signal(int sig)
{
	if (!cli_interrupted)
		cli_interrupted = sig; /* the first one names the exit code */
	tracer_kill_all();
}

static void usage(FILE *f)
{
	fputs("usage: ptloom COMMAND [OPTIONS] ...\n"
	      "\n"
	      "Runs an unmodified multithreaded program under a supervisor "
	      "that decides\nevery thread switch, explores schedules, and "
	      "saves the failing one.\n"
	      "\n"
	      "commands:\n"
	      "  run      [OPTIONS] -- PROGRAM [ARGS...]    explore schedules, "
	      "stop at the first failure\n"
	      "  replay   [OPTIONS] SCHEDULE -- PROGRAM [ARGS...]\n"
	      "                                             follow one "
	      "recorded schedule exactly\n"
	      "  minimize [OPTIONS] SCHEDULE -- PROGRAM [ARGS...]\n"
	      "                                             the same failure "
	      "with fewer preemptions\n"
	      "  show     [--format text|json|markdown|script|html] SCHEDULE\n"
	      "                                             explain a "
	      "schedule file\n"
	      "  races    [OPTIONS] -- PROGRAM [ARGS...]    report data races "
	      "(happens-before)\n"
	      "  merge    REPORT...                         one verdict from "
	      "--shard reports\n"
	      "\n"
	      "exit codes: 0 pass, 1 failure found/reproduced, 2 usage or "
	      "input error,\n"
	      "            3 incomplete (a budget stopped exploration: not a "
	      "pass), 4 replay diverged,\n"
	      "            130/143 interrupted by SIGINT/SIGTERM (what was "
	      "found is kept)\n"
	      "\n"
	      "Schedule files are untrusted: a replay applies only a fixed "
	      "set of their\n"
	      "environment (PATH of standard directories, HOME, LANG, LC_*, "
	      "TZ, USER, TMPDIR,\n"
	      "SHELL, PWD) and refuses the rest unless -e or --trust-env.  "
	      "`man ptloom` has\nthe details.\n"
	      "\n"
	      "`ptloom COMMAND --help` describes each command's options.\n",
	      f);
}

static void version(void)
{
	int major = 0, minor = 0;

	cs_version(&major, &minor);
	printf("ptloom %s (git %s)\n", PTLOOM_VERSION, PTLOOM_GIT_COMMIT);
	printf("built with capstone %s, libelf %s, libdw %s, protobuf-c %s\n",
	       PTLOOM_BUILT_CAPSTONE, PTLOOM_BUILT_LIBELF, PTLOOM_BUILT_LIBDW,
	       PTLOOM_BUILT_PROTOBUF_C);
	printf("running with capstone %d.%d, libdw %s, protobuf-c %s\n",
	       major, minor, dwfl_version(NULL), protobuf_c_version());
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	atexit(tracer_kill_all);

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];

	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		usage(stdout);
		return EXIT_PASS;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		version();
		return EXIT_PASS;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "replay"))
		return cmd_replay(argc - 1, argv + 1);
	if (!strcmp(cmd, "minimize") || !strcmp(cmd, "minimise"))
		return cmd_minimize(argc - 1, argv + 1);
	if (!strcmp(cmd, "show"))
		return cmd_show(argc - 1, argv + 1);
	if (!strcmp(cmd, "races"))
		return cmd_races(argc - 1, argv + 1);
	if (!strcmp(cmd, "merge"))
		return cmd_merge(argc - 1, argv + 1);
	fprintf(stderr, "ptloom: unknown command '%s' (see ptloom --help)\n",
		cmd);
	return EXIT_USAGE;
}
