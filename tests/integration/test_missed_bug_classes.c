/*
 * missed_bug_classes: bugs the default search used to miss, found with
 * default options, each with a fixed twin that is not reported.
 */
#include "common.h"

TestSuite(missed_bug_classes, .init = setup, .fini = teardown,
	  .timeout = 300);

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

	r = RUN(target("publish_early_fixed"), "--seed", SEED);
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(r.out, "complete to preemption bound 2", "summary");
	res_free(&r);
}
