/*
 * missed_bug_classes: bugs the default search used to miss, found with
 * default options, each with a fixed twin that is not reported.
 */
#include "common.h"

TestSuite(missed_bug_classes, .init = setup, .fini = teardown,
	  .timeout = 300);

/* A correct twin's run: PASS, complete to the default bound */
static void passes_complete(struct res r)
{
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(r.out, "complete to preemption bound 2", "summary");
	res_free(&r);
}

/* Twenty turns that must strictly alternate (19 switches): beyond any
 * preemption bound; the round-robin samples of the hybrid make it. */
Test(missed_bug_classes, strict_alternation_of_ten_turns_each)
{
	struct res r = RUN(target("turn_taking"), "--seed", SEED);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
			   "turn_taking.c:");
	assert_contains(r.out, "found by a rr sample", "summary");
	replays_exactly(&r, "turn_taking.c:");
	res_free(&r);

	/* the twin with the true bound: no failure in as many runs as
	 * the bug took, and more */
	r = RUN(target("turn_taking_fixed"), "--seed", SEED, "-n", "300");
	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE 300 runs, bound 2 not "
			   "exhausted; no failure found");
	res_free(&r);
}

/* A push publishes a node before a library call fills it in: no point
 * lies between the store and the memcpy but the one race discovery puts
 * after a store another thread's load races with. */
Test(missed_bug_classes, window_between_a_store_and_a_racing_load)
{
	struct res r = RUN(target("publish_early"), "--seed", SEED);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T2 (popper at "
			   "publish_early.c:");
	replays_exactly(&r, "publish_early.c:");
	res_free(&r);

	passes_complete(RUN(target("publish_early_fixed"), "--seed", SEED));
}

/* An SPSC FIFO of linked heap nodes whose producer links a node before it
 * fills it, with no point in between: the consumer reads the unfilled
 * node only if it is spinning on that very next pointer when it is
 * stored, and runs at once.  A store to a word a waiting spinner reads is
 * a point; found with default options at -O0 and -O2 (well within 10,000
 * runs), replayed exactly; the twin that fills first passes. */
static void spin_window(const char *buggy, const char *fixed)
{
	struct res r = RUN(target(buggy), "--seed", SEED, "-n", "10000");

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T1 (consumer at "
			   "spsc_linked_fifo.c:");
	assert_contains(r.out, "consumer read an unfilled node", "output");
	replays_exactly(&r, "spsc_linked_fifo.c:");
	res_free(&r);

	passes_complete(RUN(target(fixed), "--seed", SEED, "-n", "10000"));
}

Test(missed_bug_classes, consumer_spinning_at_the_moment_a_node_is_linked_O0)
{
	spin_window("spsc_linked_fifo_O0", "spsc_linked_fifo_fixed_O0");
}

Test(missed_bug_classes, consumer_spinning_at_the_moment_a_node_is_linked_O2)
{
	spin_window("spsc_linked_fifo_O2", "spsc_linked_fifo_fixed_O2");
}

/* A two-stage pipeline among 30 workers and an auditor created after
 * them: the failure needs one preemption, at the first worker's second
 * stage, handed to the thread created last (bound 0 alone never finishes:
 * every order of 31 threads is free).  The hybrid's newest-thread scan
 * (late) puts that thread into each step in turn and finds it in a few
 * dozen runs; by default the scan joins the mix from run 2,000, and finds
 * it after 2,118 runs (55 s of a CPU, so the suite runs the scan alone;
 * `ptloom run --help` must still list it in the default mix). */
Test(missed_bug_classes, two_stage_pipeline_of_many_workers)
{
	struct res r = RUN(target("stage_pipeline"), "--seed", SEED,
			   "--hybrid-mix", "late", "-n", "400");

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T31 (auditor at "
			   "stage_pipeline.c:");
	assert_contains(r.out, "found by a late sample", "summary");
	res_free(&r);
	r = PTL("run", "--help");
	assert_exit(r, 0);
	assert_contains(r.out, "from run 2000 one run in 16 more: late",
			"the default mix");
	res_free(&r);

	/* the twin that holds its stages together: never a failure (the
	 * scan alone, as the hybrid's only sampler, from the first runs) */
	r = RUN(target("stage_pipeline_fixed"), "--seed", SEED,
		"--hybrid-mix", "late", "-n", "200");
	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE 200 runs");
	res_free(&r);
}

/* Dekker's handshake without a fence: each thread raises its flag, then
 * reads the other's.  Sequentially consistent schedules never let both in;
 * x86 does, by keeping a store in its store buffer while the load after it
 * reads memory (tracer/tso.c).  Found (it was a PASS complete to bound 2),
 * with a readable trace and an exact replay, for volatile flags at -O0 and
 * C11 release/acquire atomics at -O2; the twins with a full fence (an
 * mfence, or C11's sequentially consistent store: xchg) pass complete. */
static void store_buffering(const char *buggy, const char *fixed)
{
	struct res r = RUN(target(buggy), "--seed", SEED);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
			   "store_buffering.c:");
	replays_exactly(&r, "store_buffering.c:");
	res_free(&r);
	r = RUN(target(buggy), "--seed", SEED, "--dfs-only");
	assert_exit(r, 1);
	assert_contains(r.out, ", bound 2;", "summary");
	res_free(&r);

	passes_complete(RUN(target(fixed), "--seed", SEED));

	/* --points without tso: sequentially consistent, as before */
	r = RUN(target(buggy), "--seed", SEED, "--points", "sync,races");
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	res_free(&r);
}

Test(missed_bug_classes, store_buffering_handshake_volatile_O0)
{
	store_buffering("store_buffering", "store_buffering_fixed");
}

Test(missed_bug_classes, store_buffering_handshake_c11_release_acquire_O2)
{
	store_buffering("store_buffering_c11", "store_buffering_c11_fixed");
}

/* The store in one function, the load in another: the window runs the
 * return and the call (their stack stores buffered too). */
Test(missed_bug_classes, store_buffering_handshake_through_calls_O0)
{
	store_buffering("store_buffering_calls", "store_buffering_calls_fixed");
}

/* The trace says what the CPU did: the store that stayed in the store
 * buffer, the other thread reading memory meanwhile, the drain. */
Test(missed_bug_classes, store_buffering_trace_shows_the_buffer)
{
	struct res r = RUN(target("store_buffering"), "--seed", SEED);
	char pb[PATH_MAX];

	assert_exit(r, 1);
	replay_file(&r, pb);
	res_free(&r);
	r = PTL("show", pb);
	assert_exit(r, 0);
	assert_contains(r.out, "into its store buffer: no other thread sees "
			       "it yet", "show");
	assert_contains(r.out, "'s store buffer drains: its stores reach "
			       "memory (&want", "show");
	res_free(&r);
}

/* A counter on main's stack that a worker updates through its address:
 * main's own load and store are stack-relative (rbp at -O0, rsp at -O2),
 * which race discovery left out, and the search said "PASS complete to
 * preemption bound 2" on the lost update.  Discovery now sees the worker
 * touch main's stack and observes stack-relative accesses from then on:
 * the race is a point, the failure found and replayed exactly, and
 * `ptloom races` names it.  The twin under a mutex, its arguments in a
 * struct on main's stack, passes. */
static void stack_data(const char *buggy, const char *fixed)
{
	struct res r = RUN(target(buggy), "--seed", SEED);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
			   "stack_lost_update.c:");
	replays_exactly(&r, "stack_lost_update.c:");
	res_free(&r);

	r = PTL("races", "--seed", SEED, "--", target(buggy));
	assert_exit(r, 1);
	assert_contains(r.out, "by T0 at main at stack_lost_update.c:",
			"races");
	assert_contains(r.out, "by T1 at adder at stack_lost_update.c:",
			"races");
	res_free(&r);

	passes_complete(RUN(target(fixed), "--seed", SEED));
}

Test(missed_bug_classes, lost_update_on_data_on_a_threads_stack_O0)
{
	stack_data("stack_lost_update_O0", "stack_lost_update_fixed_O0");
}

Test(missed_bug_classes, lost_update_on_data_on_a_threads_stack_O2)
{
	stack_data("stack_lost_update_O2", "stack_lost_update_fixed_O2");
}
