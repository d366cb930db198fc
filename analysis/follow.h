/*
 * Following a recorded run of one program inside a larger run: a test's
 * failing schedule, recorded with the test alone (`run --per-test`),
 * applied to the process that runs the test under its runner (the
 * suite's own run, `ptloom replay FILE -- ctest ...`), every other
 * process taking the default alternative.
 *
 * The runner's run is not the test's: its processes add points (the
 * runner's own threads, and the test's writes to the runner's pipes,
 * which a fresh start of the test writes to a file), so the recorded
 * decisions cannot be followed by their index.  A follower follows the
 * recorded *events* instead: the threads of the followed processes
 * (numbered T0, T1, ... in the order they are made there, as the
 * recording numbers them) perform their recorded points in the recorded
 * order, and a point of theirs that the recording does not have (an
 * extra) goes whenever it comes.  The recorded waits' and wakes'
 * decisions are taken in their recorded order.  When the recording
 * cannot be followed any more (a recorded thread cannot run where it
 * ran, or a point ran out of its turn) the follower says why and lets
 * everything take the default from there on.
 */
#ifndef PTLOOM_FOLLOW_H
#define PTLOOM_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include "../tracer/tracer.h"

struct follower;
/* Follows ev (the recorded trace) and dec (its decisions; only those of
 * waits and wakes are used), which must outlive it.  NULL: out of
 * memory. */
struct follower *follower_new(const struct event *ev, size_t nev,
			      const struct decision *dec, size_t ndec);
void follower_free(struct follower *f);

struct follow_status {
	size_t followed;	/* recorded points taken in their order */
	size_t recorded;	/* of so many */
	size_t extra;		/* points of the followed threads the
				 * recording does not have */
	bool diverged;		/* it stopped following: why */
	char why[256];
};
void follower_status(const struct follower *f, struct follow_status *st);

/*
 * A set of followers and the strategy over the whole run: each thread of
 * the run belongs to at most one follower (follow_set_thread, in the
 * order threads are made; a follower's first thread is its T0).  Threads
 * of none take the default alternative.  The set does not own the
 * followers.
 */
struct follow_set;
struct follow_set *follow_set_new(void);
void follow_set_free(struct follow_set *fs);
/* Its index in the set, -1: out of memory. */
int follow_set_add(struct follow_set *fs, struct follower *f);
/* Thread (a T-number of the run) is the next thread of follower id. */
void follow_set_thread(struct follow_set *fs, int thread, int id);
/* The follower thread belongs to, -1: none. */
int follow_set_of(const struct follow_set *fs, int thread);
struct strategy follow_set_strategy(struct follow_set *fs);

#endif
