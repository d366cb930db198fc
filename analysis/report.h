/*
 * Reports for CI: JSON, Markdown and JUnit renderings of one ptloom
 * command's outcome (../shared/CONTRACT.md lists the JSON fields).
 */
#ifndef PTLOOM_REPORT_H
#define PTLOOM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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
	int preemptions;
	const char *schedule_file;
	const char *minimized_file;
	const char *replay_command;
	const char *minimized_note;
	const char *departure;	  /* first departure from a passing run */
	/* replay (has_replay) */
	bool has_replay;
	bool exact;
	const char *trace_hash;
	long diverged_at;	  /* -1: null */
	const char *divergence;
	const char *program;
};

/* format: "json", "markdown", "junit".  Written atomically to path.
 * Returns 0 or -errno (-EINVAL for an unknown format). */
int report_write(const struct report *r, const char *format,
		 const char *path);
void report_json(FILE *f, const struct report *r);
void report_markdown(FILE *f, const struct report *r);
void report_junit(FILE *f, const struct report *r);
/* JSON string escaping, shared with `show --format json`. */
void json_string(FILE *f, const char *s);
/* Write a file atomically: f(tmpfile, arg), then rename onto path. */
int write_atomically(const char *path, void (*fn)(FILE *f, const void *arg),
		     const void *arg);

#endif
