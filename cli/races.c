/*
 * ptloom races: report the data races of a binary built without a
 * sanitizer, like ThreadSanitizer's report: each racy pair with both
 * threads, read/write, the data symbol and both source locations.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../analysis/discover.h"
#include "../analysis/escape.h"
#include "../analysis/report.h"

static const struct option long_opts[] = {
	{ "runs", required_argument, 0, 'r' },
	{ "budget", required_argument, 0, 'b' },
	{ "seed", required_argument, 0, 'S' },
	{ "max-steps", required_argument, 0, 'M' },
	{ "timeout", required_argument, 0, 'T' },
	{ "format", required_argument, 0, 'f' },
	{ "env", required_argument, 0, 'e' },
	{ "free-children", no_argument, 0, 'W' },
	{ "clock-start", required_argument, 0, CLOCK_START_OPT },
	{ "quiet", no_argument, 0, 'q' },
	{ "help", no_argument, 0, 'h' },
	{ 0, 0, 0, 0 },
};

static void usage(FILE *f)
{
	fputs("usage: ptloom races [OPTIONS] -- PROGRAM [ARGS...]\n"
	      "\n"
	      "Runs the program a few times under seeded schedules, observes "
	      "every memory\naccess of its own code while more than one thread "
	      "exists, and reports the\npairs of accesses not ordered by "
	      "happens-before (thread create/join,\nlocks, futexes, atomics).\n"
	      "\n"
	      "      --runs N          executions observed (default 6, up to 24 "
	      "while each\n"
	      "                        observes fewer than 2,000 accesses)\n"
	      "      --budget N        per execution, stops at observed "
	      "accesses and\n"
	      "                        single-steps over them "
	      "(default 50000)\n"
	      "      --seed N          seed of the schedules (default 0)\n"
	      "      --format F        text or json (default text)\n"
	      "  -e, --env NAME=VALUE  add to the program's environment\n"
	      "      --clock-start SEC the virtual CLOCK_REALTIME at the "
	      "start (default now)\n"
	      "\n"
	      "exit: 0 no race found, 1 races found, 2 usage or input "
	      "error,\n"
	      "      3 incomplete (no run observed the program to its end, "
	      "or only possible\n"
	      "      races: in code without debug information an atomic's "
	      "load or store\n"
	      "      looks like any other), 130/143 interrupted\n",
	      f);
}

int cmd_races(int argc, char **argv)
{
	struct common_opts co;
	int c, runs = DISCOVERY_RUNS, max_runs = DISCOVERY_MAX_RUNS;
	uint64_t budget = DISCOVERY_BUDGET;
	bool json = false;

	common_defaults(&co);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:e:qh", long_opts, NULL)) != -1) {
		int r = common_option(&co, c, optarg);

		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'r': {
			uint64_t v;

			if (parse_decimal(optarg, 10000, &v) || !v) {
				fprintf(stderr, "ptloom: --runs takes a decimal "
						"number from 1 to 10000 (got "
						"'%s')\n", esc(optarg));
				return EXIT_USAGE;
			}
			runs = max_runs = (int)v;
			break;
		}
		case 'b':
			if (parse_decimal(optarg, UINT32_MAX, &budget) ||
			    !budget) {
				fprintf(stderr, "ptloom: --budget takes a decimal "
						"number from 1 to %u (got "
						"'%s')\n", UINT32_MAX,
					esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr, "ptloom: --format is text or "
						"json (got '%s')\n", optarg);
				return EXIT_USAGE;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			return cli_bad_option("races", c, argv);
		}
	}
	struct program prog;

	if (program_setup(&prog, argc - optind, argv + optind, &co))
		return EXIT_USAGE;
	struct session_config cfg;
	struct discovery d;

	session_config_init(&cfg, &prog, &co);
	int e = discover_races(&cfg, runs, max_runs, co.seed, budget,
				   !getenv("PTLOOM_NO_CHECKPOINT"), &d);

	if (e && cli_interrupted) {
		printf("ptloom: INTERRUPTED by %s before any run ended\n",
		       signal_name(cli_interrupted));
		program_free(&prog);
		return exit_interrupted();
	}
	if (e) {
		fprintf(stderr, "ptloom: cannot start %s\n", prog.display);
		program_free(&prog);
		return EXIT_USAGE;
	}
	if (getenv("PTLOOM_STATS"))
		fprintf(stderr, "ptloom: race discovery %d runs (%d failed), "
				"%llu observation stops (%llu of them logged in "
				"the program instead), %llu single-steps, %d "
				"runs forked from its checkpoint\n",
			d.runs, d.failed_runs, (unsigned long long)d.obs_stops,
			(unsigned long long)d.obs_logged,
			(unsigned long long)d.obs_steps, d.forked);
	if (getenv("PTLOOM_STATS") && d.stack_shared)
		fprintf(stderr, "ptloom: race discovery: a thread's stack "
				"shared with another, %d runs observed "
				"stack-relative accesses\n",
			d.stack_runs);
	if (json) {
		printf("{\n  \"program\": ");
		json_string(stdout, prog.display);
		printf(",\n  \"runs\": %d,\n  \"accesses\": %llu,\n  "
		       "\"seconds\": %.3f,\n  \"races\": [",
		       d.runs, (unsigned long long)d.accesses, d.seconds);
	} else if (!co.quiet) {
		printf("ptloom: %d run%s, %llu accesses observed in %.2f s\n",
		       d.runs, d.runs == 1 ? "" : "s",
		       (unsigned long long)d.accesses, d.seconds);
	}
	/* the program's races; the other pairs are counted by kind
	 * (enum race_unreported), not reported */
	size_t nrep = 0, left[RACE_WITH_OWN_HANDLER + 1] = { 0 }, nleft = 0;
	/* the certain races first, then the possible ones */
	size_t npos = 0, nout = 0;

	for (size_t j = 0; j < 2 * d.nraces; j++) {
		bool pass = j >= d.nraces; /* the possible ones' */
		struct race_entry *r = &d.races[j % d.nraces];
		char where[2][LOC_MAX + 32];

		if (r->unreported) {
			if (!pass) {
				left[r->unreported]++;
				nleft++;
			}
			continue;
		}
		if (r->possible != pass)
			continue;
		if (r->possible)
			npos++;
		for (int k = 0; k < 2; k++)
			snprintf(where[k], sizeof(where[k]), "%s",
				 r->where[k][0] ? r->where[k] : "?");
		if (json) {
			if (!r->possible)
				nrep++;
			printf("%s\n    { \"object\": ", nout++ ? "," : "");
			json_string(stdout, r->what[0] ? r->what : NULL);
			printf(", \"address\": \"0x%llx\", \"size\": %d, "
			       "\"count\": %llu, \"possible\": %s, "
			       "\"accesses\": [",
			       (unsigned long long)r->pair.addr, r->pair.size,
			       (unsigned long long)r->pair.count,
			       r->possible ? "true" : "false");
			for (int k = 0; k < 2; k++) {
				printf("%s{ \"thread\": \"T%d\", \"kind\": "
				       "\"%s\", \"pc\": \"0x%llx\", "
				       "\"location\": ",
				       k ? ", " : "", r->pair.thread[k],
				       k && r->pair.freed ? "free"
				       : r->pair.write[k] ? "write"
							  : "read",
				       (unsigned long long)r->pair.pc[k]);
				json_string(stdout, where[k]);
				printf(" }");
			}
			printf("] }");
			continue;
		}
		if (!r->possible)
			nrep++;
		if (co.quiet)
			continue;
		printf("\n%srace on %s (%d bytes at 0x%llx):\n",
		       r->possible ? "possible " : "",
		       r->what[0] ? esc(r->what) : "?", r->pair.size,
		       (unsigned long long)r->pair.addr);
		for (int k = 0; k < 2; k++)
			printf("  %s by T%d at %s\n",
			       k && r->pair.freed ? "free "
			       : r->pair.write[k] ? "write"
						  : "read ",
			       r->pair.thread[k], esc(where[k]));
	}
	/* a pass needs runs that observed the program to their end */
	/* a run that ended with an exit status was observed to its end */
	int observed = d.runs - d.failed_runs + d.exit_runs;
	char why[200] = "";

	if (cli_interrupted)
		snprintf(why, sizeof(why), "interrupted by %s after %d of %d "
					   "run%s", signal_name(cli_interrupted),
			 d.runs, runs, runs == 1 ? "" : "s");
	else if (!nrep && observed <= 0)
		snprintf(why, sizeof(why), "no run observed the program to "
					   "its end (%d of %d run%s failed: "
					   "it crashed, hung or was refused)",
			 d.failed_runs - d.exit_runs, d.runs,
			 d.runs == 1 ? "" : "s");
	else if (!nrep && npos)
		/* not a pass, not a failure: without types ptloom cannot
		 * judge them */
		snprintf(why, sizeof(why), "%zu possible race%s in code "
					   "without debug information; build "
					   "with -g (or install the program's "
					   "debug symbols) to judge %s",
			 npos, npos == 1 ? "" : "s",
			 npos == 1 ? "it" : "them");
	else if (!nrep && d.spent_runs)
		/* a limit is not a pass: what ran past it was not seen */
		snprintf(why, sizeof(why), "the observation budget (--budget "
					   "%llu) ended the observation of %d "
					   "of %d run%s before the program's "
					   "end; raise --budget",
			 (unsigned long long)budget, d.spent_runs, d.runs,
			 d.runs == 1 ? "" : "s");
	else if (!nrep && d.stack_unobserved)
		/* its owner's accesses to what escaped were never seen */
		snprintf(why, sizeof(why), "data on a thread's stack reached "
					   "another thread, and no run "
					   "observed its owner's "
					   "stack-relative accesses to it "
					   "(raise --runs)");
	else if (!nrep && d.late_runs)
		/* its code was never observed */
		snprintf(why, sizeof(why), "%d of %d run%s loaded code of "
					   "the program's own after its first "
					   "thread started (%s, dlopen'ed), "
					   "whose accesses were not observed",
			 d.late_runs, d.runs, d.runs == 1 ? "" : "s",
			 d.late_object);
	int code = nrep ? EXIT_FAIL : why[0] ? EXIT_INCOMPLETE : EXIT_PASS;

	if (cli_interrupted)
		code = exit_interrupted();
	if (!json && !co.quiet && npos)
		printf("\nptloom: %zu possible race%s: each side a plain load "
		       "or store of an aligned\nword in code without debug "
		       "information, which is also what an atomic's load\nor "
		       "store is on x86: without the type, ptloom cannot tell "
		       "a data race from\nan atomic's ordering there\n",
		       npos, npos == 1 ? "" : "s");
	if (!json && !co.quiet && nleft) {
		static const char *const kind[] = {
			[RACE_ON_ATOMIC] = "on atomics' bytes (an atomic load "
					   "or store is a plain mov on x86)",
			[RACE_IN_RUNTIME] = "inside the language runtime's own "
					    "code (as Go's race detector)",
			[RACE_IN_RUST_CHANNEL] = "inside Rust std's channels (a "
						 "build without -g)",
			[RACE_WITH_OWN_HANDLER] =
				"between a thread and a signal handler "
				"running in it (`ptloom run` interleaves "
				"there)",
		};
		const char *sep = "";

		printf("%sptloom: not reported: ", nrep || npos ? "\n" : "");
		/* only the kinds there are */
		for (int k = RACE_ON_ATOMIC; k <= RACE_WITH_OWN_HANDLER; k++) {
			if (!left[k])
				continue;
			printf("%s%zu %s%s", sep, left[k],
			       k == RACE_ON_ATOMIC || k == RACE_WITH_OWN_HANDLER
				       ? (left[k] == 1 ? "pair " : "pairs ")
				       : "",
			       kind[k]);
			sep = ", ";
		}
		printf("\n");
	}
	if (!json && !co.quiet && d.nhidden)
		printf("%sptloom: not reported: %zu pair%s ordered only by "
		       "taking a thread that left a\nshared object's atomic "
		       "word nonzero to have released it by another's next\n"
		       "touch (an unlock may be a store nobody sees; `ptloom "
		       "run` interleaves there)\n",
		       nrep || npos || nleft ? "\n" : "", d.nhidden,
		       d.nhidden == 1 ? "" : "s");
	if (json) {
		printf("\n  ],\n  \"possible\": %zu,\n  \"not_reported\": { "
		       "\"on_atomics\": %zu, \"in_runtime\": %zu, "
		       "\"in_rust_channels\": %zu, \"with_own_handler\": %zu "
		       "},\n  \"verdict\": \"%s\",\n  "
		       "\"incomplete\": ",
		       npos, left[RACE_ON_ATOMIC], left[RACE_IN_RUNTIME],
		       left[RACE_IN_RUST_CHANNEL], left[RACE_WITH_OWN_HANDLER],
		       nrep ? "races" : why[0] ? "incomplete" : "pass");
		json_string(stdout, why[0] ? why : NULL);
		printf("\n}\n");
	} else if (nrep) {
		char pos[64] = "";

		if (npos)
			snprintf(pos, sizeof(pos), " and %zu possible", npos);
		printf("%sptloom: RACES %zu data race%s found%s%s%s\n",
		       !co.quiet ? "\n" : "", nrep, nrep == 1 ? "" : "s", pos,
		       why[0] ? "; " : "", why);
	} else if (why[0]) {
		printf("ptloom: %s %s; no %sdata race found (not a pass)\n",
		       cli_interrupted ? "INTERRUPTED" : "INCOMPLETE", why,
		       npos ? "certain " : "");
	} else {
		printf("ptloom: PASS 0 data races found\n");
	}

	discovery_free(&d);
	program_free(&prog);
	return code;
}
