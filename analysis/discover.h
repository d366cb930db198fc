/*
 * Race discovery: run the program a few times under seeded random
 * schedules, observing every memory access of its own code while more
 * than one thread exists, and feed a happens-before detector
 * (analysis/races.c) with those accesses and the synchronisation the
 * supervisor sees.  The racy instructions become scheduling points
 * (--points races) or a report (ptloom races).
 */
#ifndef PTLOOM_DISCOVER_H
#define PTLOOM_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../tracer/tracer.h"
#include "races.h"

struct race_entry {
	struct race_pair pair;
	char where[2][LOC_MAX]; /* "worker at counter_race.c:20" */
	char what[LOC_MAX];	/* "counter" */
	bool by_feedback;	/* found in a run with racy points */
	/* the instruction after each side's access when that side is a
	 * store and the other a load (0: none): a point there opens the
	 * window between the store and the code after it, which holds no
	 * point of its own */
	uint64_t after[2];
	/* enum race_unreported: a pair kept as points but not reported as
	 * the program's data race */
	uint8_t unreported;
	/* both sides in the language runtime's own code: no points either */
	bool runtime;
	/* reported as possible, not certain: a race only while the plain
	 * loads and stores of an aligned word in code no debug information
	 * covers (access_observer.access's `untyped_word`) are no atomic's;
	 * on x86 an atomic's load or store is such a mov (Rust's and C++'s
	 * acquire/release protocols, a C11 atomic), and without its type
	 * nothing tells them apart.  A read-modify-write without a lock, a
	 * wider, misaligned or string access is never one. */
	bool possible;
	/* a thread's access and one of a handler of a signal running in
	 * it (RACE_WITH_OWN_HANDLER) */
	bool own_handler;
};

enum race_unreported {
	RACE_REPORTED = 0,
	/* an atomic instruction touched its bytes in some run: both sides
	 * are atomics (on x86 an atomic load or store is a plain mov),
	 * whichever came first */
	RACE_ON_ATOMIC,
	/* both sides in the language runtime's own code (Go's: the
	 * packages Go's race detector leaves uninstrumented) */
	RACE_IN_RUNTIME,
	/* both sides in Rust std's channels (std::sync::mpmc, mpsc), in a
	 * binary without DWARF: their slots' stamps and positions are
	 * atomics that only plain movs touch (acquire loads, release
	 * stores), so what they order looks racy; with DWARF they are
	 * known atomics (symbols_elf_atomic_code) */
	RACE_IN_RUST_CHANNEL,
	/* a thread and a handler of a signal running in it: the handler
	 * may come between the thread's instructions (`ptloom run`
	 * interleaves there), but one access of each is no data race
	 * (a volatile sig_atomic_t flag is how C says to talk to one) */
	RACE_WITH_OWN_HANDLER,
};

struct discovery {
	struct race_entry *races;
	size_t nraces;
	int runs;
	int forked;		/* runs forked from its template */
	int from_exec;		/* runs from exec: the template's pid taken */
	uint64_t accesses;	/* accesses observed in all */
	double seconds;
	double longest_run;	/* wall seconds of the longest run */
	int failed_runs;	/* discovery runs that failed */
	/* of them, the ones that ended with an exit status (not 0): the
	 * program ran to its end (grep finding nothing, a test that fails) */
	int exit_runs;
	/* runs whose observation the budget ended before the program's end
	 * (what they ran after it was not observed) */
	int spent_runs;
	bool cut_short;		/* ended early: two runs spent the budget
				 * and found no new race */
	uint64_t obs_stops;	/* observation stops, all runs */
	uint64_t obs_steps;	/* single-steps over them */
	uint64_t obs_logged;	/* of obs_stops, logged in the program by an
				 * access slot instead (no stop) */
	uint64_t obs_sync;	/* stops and steps at shared objects' atomics */
	uint64_t obs_stack;	/* of obs_stops, at stack-relative accesses */
	/* a run cut by --timeout or --max-steps ended the discovery (it
	 * did not observe the program to its end): its failure kind and
	 * why, 0 if none */
	int limit_kind;
	int limit_run;		/* its number, 1-based */
	bool time_up;		/* stop_wall ended it (after limit_run) */
	char limit_why[MSG_MAX];
	/* pairs only the lazy joins of shared objects' atomics order
	 * (discover.c hidden_pairs): points, not reported races */
	struct race_pair *hidden;
	size_t nhidden;
	uint64_t *extra_pcs;	/* other instructions touching racy data */
	size_t nextra;
	uint64_t *atomic_pcs;	/* instructions on atomics shared by threads */
	size_t natomic;
	/* the races feedback runs found cost too many steps as points
	 * (discover.c FEEDBACK_STEPS): they are no points */
	bool feedback_costly;
	/* runs that observed only the atomics of the executable's language
	 * runtime (Go's: symbols_elf_runtime_code); the first run observes
	 * all of it */
	int runtime_atomics_runs;
	/* atomic instructions of the runtime's own code on data threads
	 * share, left out of the points (its races are: RACE_IN_RUNTIME) */
	int runtime_atomics_left;
	/* a run saw a thread touch another live thread's stack
	 * (run_result.stack_shared): the runs after it observe the
	 * executable's stack-relative accesses too (observe_stack), so that
	 * the owner's own accesses to what escaped meet the other's;
	 * stack_runs of them ran.  stack_unobserved: none could (the
	 * discovery ended first), so a race there may be missing */
	bool stack_shared;
	int stack_runs;
	bool stack_unobserved;
	/* runs in which the program mapped an object of its own after its
	 * first thread (run_result.late_objects): its code was not observed,
	 * nor its atomics points; the first one's file name */
	int late_runs;
	char late_object[64];
	struct user_point *spin; /* yield points found in spins */
	size_t nspin;
	/* the first discovery run that crashed, exited non-zero or
	 * deadlocked, with the spin points it ran with: a real failure,
	 * replayable with sync points alone (observing changes nothing) */
	struct run_result fail;
	bool have_fail;
	struct user_point *fail_points;
	size_t nfail_points;
};

/*
 * The default budget of a discovery run: stops at observation points
 * plus single-steps over them (each is a ptrace round trip, ~25 us on an
 * idle machine, several times that on a loaded one), so that a discovery
 * run costs about a second more than a run with sync points alone,
 * whatever the program.  The whole discovery ends once its runs spent
 * DISCOVERY_TOTAL budgets.
 */
#define DISCOVERY_BUDGET 50000
#define DISCOVERY_TOTAL 4
/* Runs by default; a program whose runs are cheap (fewer than
 * DISCOVERY_CHEAP observation stops a run on average: a test's few
 * threads, each a handful of accesses) runs on, up to DISCOVERY_MAX_RUNS:
 * a race between two short threads shows only in a run where the first
 * has not ended before the second starts (a Rust Dekker handshake: one
 * run in ten) */
#define DISCOVERY_RUNS 6
#define DISCOVERY_MAX_RUNS 24
#define DISCOVERY_CHEAP 2000
/* Runs observing stack-relative accesses at least, once a run saw stack
 * data shared (discovery.stack_shared), past the runs above if need be */
#define DISCOVERY_STACK_RUNS 3

/* base: the configuration of every run (points are ignored).  runs:
 * executions, up to max_runs while they are cheap; budget: per run, the stops at observation points plus the
 * single-steps over them (then the run goes on unobserved).  fork_runs:
 * runs after the first fork from a template of its own, at the first
 * thread (tracer/checkpoint.c; observation starts there), which it
 * kills when done.  No run starts past base->stop_wall (the command's
 * --max-time), and one in flight stops there; d->time_up says so.  0 or
 * -errno. */
int discover_races(const struct session_config *base, int runs,
		   int max_runs, uint64_t seed, uint64_t budget,
		   bool fork_runs, struct discovery *d);
void discovery_free(struct discovery *d);
/* The racy instructions as user points (sorted, unique); malloc'd. */
size_t discovery_points(const struct discovery *d, struct user_point **out);

#endif
