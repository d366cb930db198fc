/*
 * busy-waits: a thread that spins on data another thread must change gets
 * a yield point wherever that data lives (a global, the heap, its own
 * stack or another thread's) and whatever shape the loop has (inline,
 * through a call, a lock taken and released each turn), at -O0 and -O2;
 * each program finishes (a PASS or a FAIL, never INCOMPLETE after its
 * first run), and a computation is never taken for a spin.
 */
#include "common.h"

TestSuite(spin_waits, .init = setup, .fini = teardown, .timeout = 240);

/* Not INCOMPLETE: the regression ended the first run after 10 s of CPU
 * time ("raise --timeout") under every strategy. */
static void finishes(const struct res *r)
{
	cr_assert(r->code == 0 || r->code == 1,
		  "`%s`: exit %d, want a PASS or a FAIL\nstdout:\n%s\n"
		  "stderr:\n%s", r->cmd, r->code, r->out, r->err);
	char *s = summary(r);

	cr_assert(!strstr(s, "INCOMPLETE") && !strstr(s, "raise --timeout"),
		  "%s", s);
	free(s);
}

/* A correct spinning program, name with its argument arg (or none): a
 * PASS complete to the default bound.  Its spins are single-stepped a
 * turn at a time to learn the words they wait on (the ring below: 26 s at
 * -O0 at load 5): a generous command limit. */
static void passes_complete(const char *name, const char *arg)
{
	struct res r = run9_within(180 * slowdown(), "--seed", SEED, "--",
				   target(name), arg, (const char *)NULL);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	assert_contains(r.out, "complete to preemption bound 2", "the summary");
	res_free(&r);
}

/* A lock-free SPSC ring on the main thread's stack: the producer (main)
 * spins inline on the ring's indices in its own stack, the consumer
 * through ring_empty() on another thread's stack. */
Test(spin_waits, spsc_ring_on_a_stack_passes_at_O0)
{
	passes_complete("spsc_stack_ring_O0", NULL);
}

Test(spin_waits, spsc_ring_on_a_stack_passes_at_O2)
{
	passes_complete("spsc_stack_ring_O2", NULL);
}

/* The twin that publishes a slot before storing its item: no scheduling
 * point lies between the producer's index store and its slot store (at
 * -O2 both are stores to its own stack, which race discovery never
 * observes), so the consumer can only read the stale slot if a store to
 * a word its spin waits on is a point.  Found by the systematic search
 * alone and by a sampler, the failure is the consumer's assertion, and
 * it replays exactly. */
static void racy_ring_failed(struct res r)
{
	finishes(&r);
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T1 "
			   "(consumer at spsc_stack_ring.c:");
	replays_exactly(&r, "spsc_stack_ring.c");
	res_free(&r);
}

static void racy_ring_found(const char *name)
{
	racy_ring_failed(
		RUN(target(name), "--dfs-only", "-n", "300", "--seed", SEED));
	racy_ring_failed(
		RUN(target(name), "-s", "pct", "-n", "300", "--seed", SEED));
}

Test(spin_waits, spsc_ring_that_publishes_early_found_at_O0)
{
	racy_ring_found("spsc_stack_ring_racy_O0");
}

Test(spin_waits, spsc_ring_that_publishes_early_found_at_O2)
{
	racy_ring_found("spsc_stack_ring_racy_O2");
}

/* Where the debug registers take a watchpoint and never trap (an AMD EPYC
 * VM: the racy ring passed its search, complete to bound 2), the threads
 * beside a waiting spinner run by single steps, and a step that changed
 * a watched word is the trap: the early publish is found and replays,
 * and the correct ring still passes.  PTLOOM_WATCH_STEPS=1 takes that way
 * on any machine. */
Test(spin_waits, spin_words_watched_by_single_steps_where_watchpoints_do_not_trap)
{
	setenv("PTLOOM_WATCH_STEPS", "1", 1);
	racy_ring_failed(RUN(target("spsc_stack_ring_racy_O2"), "--dfs-only",
			     "-n", "300", "--seed", SEED));

	struct res r = RUN(target("spsc_stack_ring_O2"), "--dfs-only", "-n",
			   "300", "--seed", SEED);

	unsetenv("PTLOOM_WATCH_STEPS");
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	res_free(&r);
}

/* A work-stealing deque on the owner's stack under a test-and-test-and-
 * set spin lock; the thief polls (lock, look, unlock: memory changes and
 * is restored each turn).  Correct: a PASS complete to bound 1. */
static void deque_passes(const char *name)
{
	struct res r = RUN(target(name), "-p", "1", "--seed", SEED);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	assert_contains(r.out, "complete to preemption bound 1", "the summary");
	res_free(&r);
}

Test(spin_waits, spin_locked_deque_passes_at_O0)
{
	deque_passes("wsq_spinlock_O0");
}

Test(spin_waits, spin_locked_deque_passes_at_O2)
{
	deque_passes("wsq_spinlock_O2");
}

/* A buggy program, name, whose source is src: its assertion (what it
 * says) fails in T0's main, found, and replayed exactly. */
static void found_and_replayed_by(const char *name, const char *src,
				  const char *says, bool sampled)
{
	char want[128];
	struct res r = sampled ? RUN(target(name), "--seed", SEED, "-s",
				     "random", "-n", "200", "--no-minimize")
			       : RUN(target(name), "--seed", SEED);

	snprintf(want, sizeof(want), "ptloom: FAIL crash SIGABRT in T0 (main "
				     "at %s:", src);
	assert_exit(r, 1);
	assert_summary(&r, want);
	assert_contains(r.out, says, "the assertion");
	replays_exactly(&r, src);
	res_free(&r);
}

static void found_and_replayed(const char *name, const char *src,
			       const char *says)
{
	found_and_replayed_by(name, src, says, false);
}

/* The owner reads its last item before taking the lock: the thief takes
 * it too.  Found, and replayed exactly.  At -O2 by the random walk: the
 * deque lives on main's stack and its thief polls its `done` flag, which
 * race discovery sees since it observes stack data another thread
 * touches; the default search's bound-2 part then takes about 60 s (36
 * runs, then a sample finds it) where -s random finds it at its 3rd run
 * (a thread polling a racy flag makes every poll a point: the search's
 * cost, as with the deque made global before).  The random walk's
 * schedule is replayed as found (49 preemptions): minimising it takes
 * 30 s and is the minimisation group's to check. */
static void deque_bug_found(const char *name, bool sampled)
{
	found_and_replayed_by(name, "wsq_spinlock.c",
			      "an item was taken twice or lost", sampled);
}

Test(spin_waits, spin_locked_deque_double_take_found_at_O0)
{
	deque_bug_found("wsq_spinlock_racy_O0", false);
}

Test(spin_waits, spin_locked_deque_double_take_found_at_O2)
{
	deque_bug_found("wsq_spinlock_racy_O2", true);
}

/* Compute loops that re-read a few private addresses without storing are
 * not spins: two threads summing their own heap arrays pass, complete. */
Test(spin_waits, computation_is_not_a_spin)
{
	struct res r = RUN(target("busy_private"), "--seed", SEED);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	res_free(&r);
}

/* The trace digest of `run -s random` on target name, with a spin probe
 * every millisecond a thread runs without a point (look) or only every
 * 100, as by default. */
static void digest_with_probes(const char *name, bool look, char d[40])
{
	char *argv[] = { (char *)ptloom(), "run", "-s", "random", "-n", "6",
			 "--seed", "5", "--no-minimize", "--",
			 (char *)target(name), NULL };

	setenv("PTLOOM_STATS", "1", 1);
	struct res r = run_argv(argv, look ? "PTLOOM_SPIN_LOOK_MS=1" : NULL,
				CMD_TIMEOUT);
	unsetenv("PTLOOM_STATS");
	const char *l = strstr(r.err, "ptloom: trace digest ");

	cr_assert_not_null(l, "`%s`: no trace digest\n%s", r.cmd, r.err);
	sscanf(l, "ptloom: trace digest %39[^\n]", d);
	res_free(&r);
}

/* A probe is stopping a thread that ran long without a point and single-
 * stepping it to see whether it spins: one that finds a computation must
 * leave no trace, and one that finds a spin finds the same one whenever
 * it looks.  Probes every millisecond make the same runs as probes every
 * 100 (spinning rings and deques, and work between points). */
Test(spin_waits, spin_probes_change_no_run)
{
	static const char *const names[] = { "spsc_stack_ring_O2",
					     "wsq_spinlock_O0",
					     "spsc_linked_fifo_fixed_O2",
					     "busy_private" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char d0[40] = "", d1[40] = "";

		digest_with_probes(names[i], false, d0);
		digest_with_probes(names[i], true, d1);
		cr_expect_str_eq(d0, d1, "%s: other runs with a probe every "
				 "millisecond", names[i]);
	}
}

/*
 * A flag a sleeper sets: main waits on an atomic flag that a worker sets
 * after a 1 ms sleep, spinning on the load alone or with sched_yield().
 * A PASS complete to bound 2 at -O0 and -O2.  Before, an atomic load was
 * no spin read: the spin alone ran to --max-steps in the first run.  And
 * once the loop was a spin, the sleep's early expiry was a choice at each
 * of its thousand turns (the same state but for how often it looked):
 * INCOMPLETE, bound 1 not exhausted.  Now it expires early only in the
 * loop's first turns (SPIN_EXPIRIES, tracer/world.h).
 */
Test(spin_waits, a_spin_on_an_atomic_flag_waits_out_a_sleeper)
{
	passes_complete("flag_beside_a_sleeper_O0", "spin");
	passes_complete("flag_beside_a_sleeper_O2", "spin");
}

Test(spin_waits, a_yielding_spin_on_an_atomic_flag_waits_out_a_sleeper)
{
	passes_complete("flag_beside_a_sleeper_O0", "yield");
	passes_complete("flag_beside_a_sleeper_O2", "yield");
}

/*
 * The same worker setting the flag before the data: main may read the
 * data before it is written.  Found with an exact replay, spin alone or
 * with a yield, sleeper or not.  Before: INCOMPLETE at the first run
 * (spin), or 1,000 runs without it (no sleep): race discovery never saw
 * main's read of the data, made after the worker ended and before its
 * join, since main was then alone (see races_report_a_thread_that_ended).
 */
Test(spin_waits, data_published_after_its_flag_found)
{
	static const char *const modes[] = { "spin", "yield", "nosleep" };

	for (int o = 0; o < 2; o++)
		for (size_t m = 0; m < 3; m++) {
			const char *name = o ? "flag_beside_a_sleeper_early_O2"
					     : "flag_beside_a_sleeper_early_O0";
			struct res r = run9_within(
				180 * slowdown(), "--seed", SEED, "--max-time",
				"150", "--", target(name), modes[m],
				(const char *)NULL);

			assert_exit(r, 1);
			assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 "
					   "(main at flag_beside_a_sleeper.c:");
			replays_exactly(&r, "flag_beside_a_sleeper.c:");
			res_free(&r);
		}
}

/*
 * A thread that ended but was not joined still races with the one left:
 * the worker's write of the data after its flag, read by main once the
 * worker is gone.  Before, a thread alone in its process was not observed
 * at all, and `ptloom races` reported no race.  The twin that writes the
 * data before the flag has none.
 */
Test(spin_waits, races_report_a_thread_that_ended)
{
	for (int o = 0; o < 2; o++) {
		struct res r = PTL("races", "--seed", SEED, "--",
				   target(o ? "flag_beside_a_sleeper_early_O2"
					    : "flag_beside_a_sleeper_early_O0"),
				   "nosleep");

		/* (the race is on data, which at -O2 sits where the
		 * symbol __TMC_END__ names) */
		assert_exit(r, 1);
		assert_contains(r.out, "write by T1 at worker at "
				       "flag_beside_a_sleeper.c:", "ptloom races");
		assert_contains(r.out, "read  by T0 at main at "
				       "flag_beside_a_sleeper.c:", "ptloom races");
		res_free(&r);
		r = PTL("races", "--seed", SEED, "--",
			target(o ? "flag_beside_a_sleeper_O2"
				 : "flag_beside_a_sleeper_O0"),
			"nosleep");
		assert_exit(r, 0);
		assert_contains(r.out, "0 data races", "ptloom races");
		res_free(&r);
	}
}

/* The runs of r's PASS summary, which says it is complete to bound */
static long complete_runs(const struct res *r, const char *bound)
{
	char want[64];
	long n = pass_runs(r);

	snprintf(want, sizeof(want), "complete to preemption bound %s", bound);
	cr_assert_geq(n, 0, "`%s`: no PASS in:\n%s", r->cmd, r->out);
	assert_contains(r->out, want, "the summary");
	return n;
}

/*
 * A POSIX spin lock is a lock: taking a free one is no yield (a switch
 * there is a preemption, as at a mutex), and a thread that finds it held
 * spins in libc, where spin recognition makes it wait for the holder.
 * Its call was a yield, so every lock offered every other thread for free:
 * 3 threads x 3 sections took 591 runs at bound 0 (the mutex twin 13) and
 * more than 5,600 at bound 1 without finishing it (the twin 427).
 */
static void spin_lock_costs_a_mutex(const char *name)
{
	struct res m = run9("--dfs-only", "-p", "1", "-n", "3000", "--seed",
			    SEED, "--", target(name), "mutex",
			    (const char *)NULL);
	struct res s = run9("--dfs-only", "-p", "1", "-n", "3000", "--seed",
			    SEED, "--", target(name), (const char *)NULL);
	long nm = complete_runs(&m, "1"), ns = complete_runs(&s, "1");

	assert_exit(m, 0);
	assert_exit(s, 0);
	cr_assert_leq(ns, 2 * nm, "spin lock %ld runs, mutex %ld", ns, nm);
	res_free(&m);
	res_free(&s);
}

Test(spin_waits, a_posix_spin_lock_costs_what_a_mutex_costs_at_O0)
{
	spin_lock_costs_a_mutex("pthread_spinlock_O0");
}

Test(spin_waits, a_posix_spin_lock_costs_what_a_mutex_costs_at_O2)
{
	spin_lock_costs_a_mutex("pthread_spinlock_O2");
}

/* The read and the store of an increment in two spin-locked sections:
 * found (one preemption), and replayed exactly. */
static void split_sections_found(const char *name)
{
	found_and_replayed(name, "pthread_spinlock.c", "an update was lost");
}

Test(spin_waits, an_update_lost_between_spin_locked_sections_found_at_O0)
{
	split_sections_found("pthread_spinlock_split_O0");
}

Test(spin_waits, an_update_lost_between_spin_locked_sections_found_at_O2)
{
	split_sections_found("pthread_spinlock_split_O2");
}
