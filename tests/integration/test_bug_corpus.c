/*
 * bug classes of published benchmark corpora, at -O0 and -O2, with their
 * fixed twins.
 */
#include "common.h"

TestSuite(bug_corpus, .init = setup, .fini = teardown, .timeout = 240);

/* A corpus program with default options: FAIL of the given kind at where,
 * and the printed replay reproduces it exactly. */
static void corpus_found(const char *program, const char *kind,
			 const char *where)
{
	struct res r = RUN(program, "--seed", SEED);

	assert_exit(r, 1);
	char *j = report();

	assert_json(j, "kind", kind);
	assert_contains(json_get(j, "location"), where, "the location");
	free(j);
	replays_exactly(&r, where);
	res_free(&r);
}

static void corpus_passes(const char *program)
{
	struct res r = RUN(program, "--seed", SEED);

	assert_exit(r, 0);
	assert_contains(summary(&r), "complete to preemption bound 2",
			"the summary");
	res_free(&r);
}

/*
 * gcc -O2 makes `count++` on a plain global one `addl $1, count(%rip)`:
 * not atomic (no lock prefix), so two CPUs can lose an update, but one
 * instruction.  Executed whole, no schedule lost it: a false "PASS
 * complete to bound 2".  The access point splits it into its load and
 * its store; the atomic increment (-DFIXED, `lock addl`) is not split and
 * passes.
 */
Test(bug_corpus, plain_increment_lost_at_O2)
{
	corpus_found(target("plain_inc_O2"), "crash", "plain_inc.c");
	corpus_found(target("plain_inc_O0"), "crash", "plain_inc.c");
	corpus_passes(target("plain_inc_fixed_O2"));
	corpus_passes(target("plain_inc_fixed_O0"));
}

/*
 * Chess-style work-stealing queue: the steal tests head < tail before
 * advancing head, so on a one-element queue the owner's lock-free pop and
 * the steal take one item twice.  The preemption the bug needs lies
 * between two accesses (the steal's read of the item, its store to head)
 * that race in no run with synchronisation points alone: the thief's
 * steals succeed only when it interleaves with the owner's plain stores.
 * Race discovery's later runs interleave at the racy instructions found
 * by the earlier ones, which shows the race on the items (before: a false
 * "PASS complete to bound 2").
 */
Test(bug_corpus, work_stealing_race_found_through_discovery_feedback)
{
	corpus_found(target("wsq_O0"), "crash", "wsq.c");
	corpus_found(target("wsq_O2"), "crash", "wsq.c");
	corpus_passes(target("wsq_fixed_O2"));
}

/*
 * SCTBench's wronglock: threads guard one counter with two different
 * mutexes.  At -O2 the two mutexes lie next to each other in one 64-byte
 * block, which race discovery keyed as one synchronisation object: the
 * lost update's race was hidden by happens-before through "both" locks,
 * no race point, no failure within 2000 runs.  Discovery keys an address
 * by the object a call named that contains it.
 */
Test(bug_corpus, wrong_lock_race_seen_between_neighbouring_mutexes)
{
	corpus_found(target("wronglock_O2"), "crash", "wronglock.c");
	corpus_found(target("wronglock_O0"), "crash", "wronglock.c");
}

/*
 * Readers' rwlock calls commute where no writer holds the lock (the
 * reduction's conditional independence, analysis/dfs.c readers_commute),
 * and a check under the read lock followed by an unchecked take under the
 * write lock is still found: by the default search and by dfs alone (the
 * readers' sections meet with the rule on), -O0 and -O2.
 */
Test(bug_corpus, rwlock_recheck_found_with_readers_commuting)
{
	static const char *const progs[] = { "rwlock_recheck_O0",
					     "rwlock_recheck_O2" };

	for (int i = 0; i < 2; i++) {
		corpus_found(target(progs[i]), "crash", "rwlock_recheck.c");
		struct res r = RUN(target(progs[i]), "--dfs-only", "--seed",
				   SEED);

		assert_exit(r, 1);
		res_free(&r);
	}
}

/*
 * Readers that count visits in a shared counter holding only the read
 * lock: race discovery no longer orders one reader's unlock before the
 * next reader's rdlock (tracer/world.c observe_rwlock), so the counter's
 * accesses race even in runs whose read sections never overlap, become
 * points, and the lost update is found with default options (before: no
 * race, INCOMPLETE at 10,000 runs), -O0 and -O2.  Readers are still
 * ordered after writers and writers after readers: the fixed twin and
 * examples/rwlock (reads under the read lock, writes under the write
 * lock) have no race.
 */
Test(bug_corpus, write_under_read_lock_found_as_a_race)
{
	static const char *const progs[] = { "rdlock_write_O0",
					     "rdlock_write_O2" };
	static const char *const clean[] = { "rdlock_write_fixed_O0",
					     "rdlock_write_fixed_O2" };

	for (int i = 0; i < 2; i++) {
		corpus_found(target(progs[i]), "crash", "rdlock_write.c");
		struct res r = PTL("races", "--seed", SEED, "--",
				   target(progs[i]));

		assert_exit(r, 1);
		assert_contains(r.out, "race on visits", "ptloom races");
		res_free(&r);
		r = PTL("races", "--seed", SEED, "--runs", "30", "--",
			target(clean[i]));
		assert_exit(r, 0);
		assert_contains(r.out, "0 data races", "ptloom races");
		res_free(&r);
	}
	struct res r = PTL("races", "--seed", SEED, "--runs", "30", "--",
			   example("rwlock"));

	assert_exit(r, 0);
	assert_contains(r.out, "0 data races", "ptloom races on rwlock");
	res_free(&r);
}

/*
 * SCTBench's twostage among 8 workers: a sample finds the reader between
 * a worker's two stages with 13 preemptions; one is enough (the first
 * worker preempted between its stages, the reader next).  The minimiser's
 * placements of one preemption are many (every point of 10 threads times
 * every other thread) and those switching to the failing thread now come
 * first among equal resemblance; before, the 400 it tries ran out and the
 * report said 7 or 8 preemptions.
 */
Test(bug_corpus, two_stage_reader_minimized_to_one_preemption)
{
	struct res r = RUN(target("twostage_O0"), "--seed", "2");

	assert_exit(r, 1);
	char *j = report();

	cr_assert_eq(json_num(j, "preemptions"), 1, "%s", j);
	free(j);
	replays_exactly(&r, "twostage.c");
	res_free(&r);
}
