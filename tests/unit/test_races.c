/*
 * analysis/races: the happens-before detector fed hand-written serialized
 * executions.  T0 is the main thread; pcs are made up.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "../../analysis/races.h"

#define X 0x601040 /* a shared variable */
#define LOCK 0x601100

static struct race_detector *r;

static void setup(void)
{
	cr_assert_eq(races_new(&r), 0);
}

static void teardown(void)
{
	races_free(r);
}

TestSuite(races, .init = setup, .fini = teardown);

static size_t npairs(const struct race_pair **p)
{
	const struct race_pair *dummy;
	size_t n;

	cr_assert_eq(races_pairs(r, p ? p : &dummy, &n), 0);
	return n;
}

/* T0 starts T1 and T2, which both write X without synchronisation. */
static void lost_update(uint64_t pc1, uint64_t pc2)
{
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, pc1, X, 4, true, false);
	races_access(r, 2, pc2, X, 4, true, false);
	races_thread_join(r, 0, 1);
	races_thread_join(r, 0, 2);
	races_access(r, 0, 0x400900, X, 4, false, false);
}

Test(races, unsynchronised_writes_race)
{
	const struct race_pair *p;

	lost_update(0x400100, 0x400200);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].pc[0], 0x400100);
	cr_assert_eq(p[0].pc[1], 0x400200);
	cr_assert_eq(p[0].thread[0], 1);
	cr_assert_eq(p[0].thread[1], 2);
	cr_assert(p[0].write[0] && p[0].write[1]);
	cr_assert_eq(p[0].addr, X);
	cr_assert_eq(p[0].size, 4);
	cr_assert_eq(p[0].count, 1);
}

Test(races, read_write_races_read_read_does_not)
{
	const struct race_pair *p;

	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, X, 8, false, false);
	races_access(r, 2, 0x20, X, 8, false, false);
	cr_assert_eq(npairs(NULL), 0);
	races_access(r, 2, 0x30, X, 8, true, false);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].pc[0], 0x10);
	cr_assert(!p[0].write[0] && p[0].write[1]);
}

Test(races, lock_protected_is_not_racy)
{
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	for (int i = 0; i < 3; i++) {
		for (int t = 1; t <= 2; t++) {
			races_acquire(r, t, LOCK);
			races_access(r, t, 0x100, X, 4, false, false);
			races_access(r, t, 0x108, X, 4, true, false);
			races_release(r, t, LOCK);
		}
	}
	cr_assert_eq(npairs(NULL), 0);
}

Test(races, access_after_unlock_races)
{
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_acquire(r, 1, LOCK);
	races_release(r, 1, LOCK);
	races_access(r, 1, 0x100, X, 4, true, false); /* outside the lock */
	races_acquire(r, 2, LOCK);
	races_access(r, 2, 0x200, X, 4, true, false);
	races_release(r, 2, LOCK);
	cr_assert_eq(npairs(NULL), 1);
}

Test(races, fork_join_orders)
{
	races_access(r, 0, 0x10, X, 8, true, false);
	races_thread_create(r, 0, 1);
	races_access(r, 1, 0x20, X, 8, true, false);
	races_thread_join(r, 0, 1);
	races_access(r, 0, 0x30, X, 8, true, false);
	races_access(r, 0, 0x40, X, 8, false, false);
	cr_assert_eq(npairs(NULL), 0);
}

Test(races, parent_after_create_races_with_child)
{
	races_thread_create(r, 0, 1);
	races_access(r, 0, 0x10, X, 8, true, false);
	races_access(r, 1, 0x20, X, 8, false, false);
	cr_assert_eq(npairs(NULL), 1);
}

Test(races, atomics_do_not_race_with_atomics)
{
	const struct race_pair *p;

	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, X, 4, true, true);
	races_access(r, 2, 0x20, X, 4, true, true);
	races_access(r, 2, 0x28, X, 4, false, true);
	cr_assert_eq(npairs(NULL), 0);
	/* a plain read of the counter does race with the atomic writes */
	races_access(r, 2, 0x30, X, 4, false, false);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].pc[0], 0x10);
}

Test(races, atomic_does_not_hide_earlier_plain_access)
{
	/* T1's plain write is not covered by T2's later atomic write */
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_thread_create(r, 0, 3);
	races_access(r, 1, 0x10, X, 4, true, false);
	races_acquire(r, 2, LOCK);
	races_access(r, 2, 0x20, X, 4, true, true);
	cr_assert_eq(npairs(NULL), 1);
	races_access(r, 3, 0x30, X, 4, true, true);
	cr_assert_eq(npairs(NULL), 2); /* T1 plain vs T3 atomic */
}

Test(races, later_atomic_does_not_cover_plain_access)
{
	/* T1: plain init, then atomic update; T2's atomic update races with
	 * the plain one, which T1's atomic must not replace */
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, X, 4, true, false);
	races_access(r, 1, 0x18, X, 4, true, true);
	races_access(r, 2, 0x20, X, 4, true, true);
	cr_assert_eq(npairs(NULL), 1);
}

Test(races, later_read_does_not_cover_write)
{
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, X, 8, true, false);
	races_access(r, 1, 0x18, X, 8, false, false);
	races_access(r, 2, 0x20, X, 8, false, false);
	cr_assert_eq(npairs(NULL), 1);
}

Test(races, releases_accumulate)
{
	/* T1 and T2 both post; T3's wait sees both posts */
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_thread_create(r, 0, 3);
	races_access(r, 1, 0x10, X, 4, true, false);
	races_release(r, 1, LOCK);
	races_access(r, 2, 0x20, X + 8, 4, true, false);
	races_release(r, 2, LOCK);
	races_acquire(r, 3, LOCK);
	races_access(r, 3, 0x30, X, 4, true, false);
	races_access(r, 3, 0x40, X + 8, 4, true, false);
	cr_assert_eq(npairs(NULL), 0);
}

/* acquire_all takes the releases of the keys it selects, no other */
Test(races, acquire_all_takes_the_selected_keys_only)
{
	const uint64_t atom = (1ull << 62) | LOCK, other = LOCK + 64;

	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, X, 4, true, false);
	races_release(r, 1, atom);
	races_access(r, 1, 0x20, X + 8, 4, true, false);
	races_release(r, 1, other);
	races_acquire_all(r, 2, 7ull << 61, 1ull << 62);
	races_access(r, 2, 0x30, X, 4, true, false);	 /* ordered */
	races_access(r, 2, 0x40, X + 8, 4, true, false); /* not */
	cr_assert_eq(npairs(NULL), 1);
}

Test(races, acquire_without_release_orders_nothing)
{
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, X, 4, true, false);
	races_acquire(r, 2, LOCK);
	races_access(r, 2, 0x20, X, 4, true, false);
	cr_assert_eq(npairs(NULL), 1);
}

Test(races, bytes_not_granules)
{
	const struct race_pair *p;

	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, X, 1, true, false);
	races_access(r, 2, 0x20, X + 1, 1, true, false);
	races_access(r, 2, 0x28, X + 4, 4, true, false);
	cr_assert_eq(npairs(NULL), 0);
	races_access(r, 2, 0x30, X, 2, true, false);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].addr, X);
	cr_assert_eq(p[0].size, 2);
}

Test(races, unaligned_access_spans_granules)
{
	const struct race_pair *p;

	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	/* [X + 6, X + 22) touches three granules */
	races_access(r, 1, 0x10, X + 6, 16, true, false);
	races_access(r, 2, 0x20, X + 22, 1, true, false);
	races_access(r, 2, 0x24, X + 5, 1, true, false);
	cr_assert_eq(npairs(NULL), 0);
	races_access(r, 2, 0x30, X + 21, 1, false, false);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].addr, X + 21);
	cr_assert_eq(p[0].count, 1);
	/* one access overlapping the write in three granules counts once */
	races_access(r, 2, 0x30, X, 32, false, false);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].count, 2);
}

Test(races, dedupe_across_executions)
{
	const struct race_pair *p;

	lost_update(0x400100, 0x400200);
	races_reset_execution(r);
	lost_update(0x400100, 0x400200);
	races_reset_execution(r);
	lost_update(0x400200, 0x400100); /* the other order: same pair */
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].count, 3);
	cr_assert_eq(p[0].pc[0], 0x400100);
}

Test(races, reset_forgets_clocks_and_shadow)
{
	races_thread_create(r, 0, 1);
	races_access(r, 1, 0x10, X, 4, true, false);
	races_reset_execution(r);
	/* a new execution: T2's write has nothing to race with */
	races_thread_create(r, 0, 2);
	races_access(r, 2, 0x20, X, 4, true, false);
	cr_assert_eq(npairs(NULL), 0);
}

Test(races, many_threads)
{
	const struct race_pair *p;
	enum { N = 1024 };

	/* each thread its own slot: no race; all of them on X: one pair */
	for (int t = 1; t <= N; t++)
		races_thread_create(r, 0, t);
	for (int t = 1; t <= N; t++) {
		races_access(r, t, 0x10, 0x700000 + 8 * (uint64_t)t, 8, true,
			     false);
		races_access(r, t, 0x20, X, 4, true, false);
	}
	for (int t = 1; t <= N; t++)
		races_thread_join(r, 0, t);
	races_access(r, 0, 0x30, X, 4, true, false);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].pc[0], 0x20);
	cr_assert_eq(p[0].pc[1], 0x20);
	cr_assert_eq(p[0].thread[1], 2);
	cr_assert_eq(p[0].count, N - 1);
}

Test(races, bad_thread_is_reported)
{
	const struct race_pair *p;
	size_t n;

	races_access(r, -1, 0x10, X, 4, true, false);
	races_access(r, RACES_MAX_THREADS, 0x10, X, 4, true, false);
	cr_assert_eq(races_pairs(r, &p, &n), -EINVAL);
	cr_assert_eq(n, 0);
}

Test(races, million_accesses, .timeout = 60)
{
	/* four threads under one lock over a 64 KiB array, then a racy tail */
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_thread_create(r, 0, 3);
	for (int i = 0; i < 1000000; i++) {
		int t = 1 + (i / 100) % 3;

		if (i % 100 == 0)
			races_acquire(r, t, LOCK);
		races_access(r, t, 0x1000 + (uint64_t)(i % 7),
			     0x10000000 + (uint64_t)(i * 8 % 65536), 8, i & 1,
			     false);
		if (i % 100 == 99)
			races_release(r, t, LOCK);
	}
	cr_assert_eq(npairs(NULL), 0);
	races_access(r, 1, 0x2000, 0x10000000, 8, true, false);
	races_access(r, 2, 0x2008, 0x10000000, 8, true, false);
	cr_assert_eq(npairs(NULL), 1);
}

/* A lock in a shared object taken by an atomic and released by a plain
 * store nobody observes (a spinlock's `movl $0`): the next taker's atomic
 * orders everything the holder did before it, the unlock included. */
Test(races, unseen_plain_store_release_orders_the_holder)
{
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_touch_unseen(r, 1, LOCK, true); /* lock: word left nonzero */
	races_access(r, 1, 0x100, X, 4, true, false);
	/* T1's unlock: a plain store, not seen */
	races_touch_unseen(r, 2, LOCK, true);
	races_access(r, 2, 0x200, X, 4, true, false);
	cr_assert_eq(npairs(NULL), 0);
}

/* A release the detector did see (an xchg of 0): the holder's accesses
 * after it are not ordered before the next taker's, so a race right after
 * an unlock is still found. */
Test(races, seen_atomic_release_does_not_hide_later_access)
{
	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_touch_unseen(r, 1, LOCK, true);
	races_access(r, 1, 0x100, X, 4, true, false);
	races_touch_unseen(r, 1, LOCK, false); /* unlock: word left 0 */
	races_access(r, 1, 0x110, X + 8, 4, true, false); /* unlocked */
	races_touch_unseen(r, 2, LOCK, true);
	races_access(r, 2, 0x200, X, 4, true, false);
	cr_assert_eq(npairs(NULL), 0);
	races_access(r, 2, 0x210, X + 8, 4, true, false);
	cr_assert_eq(npairs(NULL), 1);
}

/* races_after: an ended thread's accesses are ordered before main's next
 * only once main has acquired what the thread released after them (a
 * flag set after the data is not enough) or joined it. */
Test(races, an_ended_thread_is_ordered_by_what_main_acquired)
{
	races_thread_create(r, 0, 1);
	cr_assert(races_after(r, 0, 1), "no access of T1's yet");
	races_access(r, 1, 0x10, X, 4, true, false);
	races_release(r, 1, LOCK);
	cr_assert_not(races_after(r, 0, 1));
	races_acquire(r, 0, LOCK);
	cr_assert(races_after(r, 0, 1), "released after the write");
	races_access(r, 1, 0x14, X + 8, 4, true, false); /* after the flag */
	cr_assert_not(races_after(r, 0, 1), "written after the release");
	races_thread_join(r, 0, 1);
	cr_assert(races_after(r, 0, 1), "joined");
}

/* Memory forgotten over a range of far more pages than were ever seen
 * (munmap of a reservation of gigabytes) is forgotten page by page where
 * it was seen: T2's write after it does not race with T1's before, one
 * just outside the range still does, and a freeing thread's forget over
 * such a range races with a read it did not order. */
Test(races, a_huge_range_forgotten_where_it_was_seen)
{
	const uint64_t base = 0x7f0000000000ull, huge = 64ull << 30;
	const struct race_pair *p;

	races_thread_create(r, 0, 1);
	races_thread_create(r, 0, 2);
	races_access(r, 1, 0x10, base + (5ull << 30), 8, true, false);
	races_access(r, 1, 0x18, base + huge, 8, true, false);
	races_forget(r, base, huge);
	races_access(r, 2, 0x20, base + (5ull << 30), 8, true, false);
	cr_assert_eq(npairs(NULL), 0);
	races_access(r, 2, 0x28, base + huge, 8, true, false);
	cr_assert_eq(npairs(&p), 1);
	cr_assert_eq(p[0].addr, base + huge);
	races_access(r, 1, 0x30, base + 4096 * 3 + 8, 8, false, false);
	races_freed(r, 2, 0x40, base, huge);
	cr_assert_eq(npairs(&p), 2);
}
