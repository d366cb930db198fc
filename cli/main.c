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
#include "../analysis/filecache.h"

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
	/* what the first run learns of libc, kept for the next process */
	filecache_install();
	int (*fn)(int, char **) = !strcmp(cmd, "run")	       ? cmd_run
				  : !strcmp(cmd, "replay")     ? cmd_replay
				  : !strcmp(cmd, "minimize") ||
						  !strcmp(cmd, "minimise")
					  ? cmd_minimize
				  : !strcmp(cmd, "show")   ? cmd_show
				  : !strcmp(cmd, "races")  ? cmd_races
				  : !strcmp(cmd, "merge")  ? cmd_merge
							   : NULL;

	if (fn) {
		int rc = fn(argc - 1, argv + 1);
		struct filecache_stats fs;

		filecache_stats(&fs);
		if (getenv("PTLOOM_STATS") && fs.hits + fs.misses)
			fprintf(stderr,
				"ptloom: analysis cache %s: %llu read, %llu "
				"made, %llu stored, %llu not stored\n",
				fs.dir, (unsigned long long)fs.hits,
				(unsigned long long)fs.misses,
				(unsigned long long)fs.stores,
				(unsigned long long)fs.store_errors);
		return rc;
	}
	fprintf(stderr, "ptloom: unknown command '%s' (see ptloom --help)\n",
		cmd);
	return EXIT_USAGE;
}
