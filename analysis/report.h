/*
 * Reports for CI: JSON, Markdown, JUnit and SARIF renderings of one ptloom
 * command's outcome (../shared/CONTRACT.md lists the JSON fields).
 */
#ifndef PTLOOM_REPORT_H
#define PTLOOM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One test of a suite (`run --per-test`, cli/suite.c). */
struct report_test {
	const char *name;	  /* as the runner knows it, or the command */
	const char *verdict;	  /* pass|fail|incomplete */
	const char *summary;	  /* its own summary line */
	const char *command, *cwd; /* how it was started */
	const char *rule;	  /* why it was split or not */
	const char *replay_command, *schedule_file;
	const char *kind, *location, *message, *output; /* its failure */
	/* its failing schedule followed when the runner ran it: what
	 * happened ("reproduced: ..."), NULL: not followed */
	const char *in_runner;
	uint64_t runs;
	double seconds;
};

/* A warning beside the verdict: a process of the program died of a crash
 * signal in passing runs (the command's exit status hid it). */
struct report_warning {
	const char *kind;	  /* "child_crash" */
	const char *process;	  /* "P1 racy T0" */
	const char *signal;	  /* "SIGABRT" */
	const char *location;	  /* where its thread was, or "" */
	uint64_t runs;		  /* in how many runs */
	const char *message;	  /* one line saying all of it */
	const char *schedule_file;
	const char *replay_command;
};

struct report {
	const char *command;	  /* "run", "replay" */
	const char *verdict;	  /* pass|fail|incomplete|diverged|error */
	const char *strategy;
	uint64_t runs;
	bool complete;
	int preemption_bound;
	uint64_t seed;
	double seconds;
	const char *summary;	  /* the summary line */
	bool interrupted;	  /* SIGINT/SIGTERM cut the command short */
	/* failure (has_failure) */
	bool has_failure;
	const char *kind;
	const char *signal;	  /* "SIGABRT" or NULL */
	int exit_status;	  /* -1: null */
	int thread;
	const char *location;
	const char *message;
	const char *output;	  /* tail of the program's output */
	/* each thread's backtrace at the failure, one frame a line, and
	 * its name, by T-number ("" or NULL: none) */
	const char *const *backtraces;
	const char *const *thread_names;
	int nthreads;
	int preemptions;
	const char *schedule_file;
	const char *minimized_file;
	const char *replay_command;
	const char *minimized_note;
	int minimum_proven;	/* minimised: 2 the fewest preemptions (every
				 * bound below explored), 1 not proven, 0 not
				 * said */
	const char *departure;	  /* first departure from a passing run */
	/* replay (has_replay) */
	bool has_replay;
	bool exact;
	const char *trace_hash;
	long diverged_at;	  /* -1: null */
	const char *divergence;
	const char *program;
	/* --shard: which part, and what `ptloom merge` needs */
	int shard, nshards;	  /* 1-based; nshards 0: not sharded */
	uint64_t fail_key;	  /* the failure's place in the serial order */
	uint64_t bound0_runs;	  /* runs every shard repeats */
	/* --per-test: the suite's tests, each with its verdict */
	const struct report_test *tests;
	int ntests;
	/* --per-test: the runner's own run (runner_exit -1: none) */
	const char *runner_command, *runner_output;
	int runner_exit;	  /* exit status, or 128 + its signal */

	/* coverage (analysis/coverage.h): has_coverage, then how many
	 * conflicting pairs were seen, how many in both orders, and each
	 * pair with its locations (merge unions them by their keys) */
	bool has_coverage;
	uint64_t cov_pairs, cov_covered;
	double min_coverage;	  /* --min-coverage, 0: none */
	bool cov_reached;
	const struct report_pair *cov_list;
	size_t ncov_list;
	const struct report_warning *warnings;
	size_t nwarnings;
};

/* One conflicting pair of a report: code keys a < b (a == b: one
 * location), where they are, what they shared, the orders seen (1: a
 * before b, 2: b before a, 3: both). */
struct report_pair {
	uint64_t a, b;
	const char *where_a, *where_b;
	const char *what;
	int seen;
};

/* format: "json", "markdown", "junit", "sarif".  Written atomically to path.
 * Returns 0 or -errno (-EINVAL for an unknown format). */
int report_write(const struct report *r, const char *format,
		 const char *path);
void report_json(FILE *f, const struct report *r);
void report_markdown(FILE *f, const struct report *r);
void report_junit(FILE *f, const struct report *r);
void report_sarif(FILE *f, const struct report *r);
/* The first "name.ext:LINE" in a location ("withdraw at bank.c:23"). */
bool report_source_line(const char *loc, char *file, size_t len, int *line);
/* "threads": [{ "thread": "T0", "name": ..., "backtrace": [frames] }]
 * (shared with `show --format json`). */
void report_json_threads(FILE *f, const char *const *bts,
			 const char *const *names, int n, const char *indent);
/* JSON string escaping, shared with `show --format json`. */
void json_string(FILE *f, const char *s);
/* Write a file atomically: f(tmpfile, arg) into DIR/.ptloom-tmp.BASE.XXXXXX
 * beside path, then rename onto path. */
#define REPORT_TEMP_PREFIX ".ptloom-tmp."
int write_atomically(const char *path, void (*fn)(FILE *f, const void *arg),
		     const void *arg);
/* mkdir -p dir with mode: 0 or -errno (of the last mkdir: one above it
 * that cannot be made makes it fail). */
int make_dirs(const char *dir, mode_t mode);

#endif
