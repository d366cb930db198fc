/*
 * A test's failing schedule followed through its runner (analysis/follow.h
 * inside a process watcher): in the suite's own run of `run --per-test`
 * (the runner then reports the test as failing, natively), and in
 * `ptloom replay FILE -- RUNNER ...`.  The schedule applies to the process
 * that execs the test's recorded command line in its recorded directory
 * (or to a given process at once) and to the processes and threads it
 * makes; every other process takes the default alternative.
 */
#ifndef PTLOOM_THROUGH_H
#define PTLOOM_THROUGH_H

#include <stdbool.h>
#include <sys/types.h>
#include "../analysis/follow.h"
#include "../replayer/schedule.h"

struct through;
struct through *through_new(void);
void through_free(struct through *t);

/* Follow sch (taken over; freed with t) in the first process within the
 * subtree of process scope (-1: anywhere) that execs its recorded command
 * line (argv, and its directory when recorded).  Its index, -1: out of
 * memory (sch is freed). */
int through_add(struct through *t, struct schedule *sch, const char *name,
		int scope);

/* Hooks for a struct proc_watch (tracer/tracer.h). */
void through_fork(struct through *t, int pidx, int ppidx);
/* process pidx (pid) exec'd with thread going on in it: a target waiting
 * for that command line follows it from here */
void through_exec(struct through *t, int pidx, pid_t pid, int thread);
void through_thread(struct through *t, int thread, int pidx);
void through_died(struct through *t, int pidx, int status);
const struct user_point *through_points(struct through *t, int pidx,
					size_t *n);
struct strategy through_strategy(struct through *t);

struct through_result {
	const char *name;
	bool found;		/* its command line ran */
	int pidx;		/* in that process */
	bool ended;		/* which ended with status */
	int status;
	bool reproduced;	/* the recorded failure, again */
	struct follow_status st;
	char what[512];		/* one line: what happened */
	char follow[400];	/* how much of the recording it followed */
};
int through_count(const struct through *t);
void through_result(const struct through *t, int i,
		    struct through_result *r);

#endif
