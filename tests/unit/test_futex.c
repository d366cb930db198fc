/*
 * The supervisor's futex wait queues (tracer/futex.c): FIFO wake order,
 * bitsets, requeue and removal, without a tracee.
 */
#include <criterion/criterion.h>
#include <errno.h>

#include "../../tracer/futex.h"

#define A 0x1000
#define B 0x2000
#define C 0x3000
#define ALL 0xffffffffu

static struct futex_table ft;

static void setup(void)
{
	futex_init(&ft);
}

static void teardown(void)
{
	futex_destroy(&ft);
}

TestSuite(futex, .init = setup, .fini = teardown);

/* Wait thread t on addr with every bit set. */
static void wait_on(uint64_t addr, int t)
{
	cr_assert_eq(futex_wait(&ft, addr, ALL, t), 0);
}

static int waiters(uint64_t addr, uint32_t bitset, int *out, int max)
{
	return futex_waiters(&ft, addr, bitset, out, max);
}

Test(futex, empty_table_has_no_waiters)
{
	int out[4];

	cr_assert_eq(waiters(A, ALL, out, 4), 0);
	cr_assert_eq(futex_count(&ft, A), 0);
	cr_assert_not(futex_is_waiting(&ft, 0));
	cr_assert_eq(futex_remove(&ft, 0), -ENOENT);
	cr_assert_eq(futex_requeue(&ft, A, B, 10), 0);
}

Test(futex, wake_one_wakes_oldest_waiter)
{
	int out[4];

	wait_on(A, 3);
	wait_on(A, 1);
	wait_on(A, 2);
	cr_assert_eq(waiters(A, ALL, out, 1), 1);
	cr_assert_eq(out[0], 3, "the oldest waiter first, not the lowest T");
}

Test(futex, waiters_are_listed_in_fifo_order)
{
	int out[8];

	wait_on(A, 5);
	wait_on(B, 9);
	wait_on(A, 2);
	wait_on(A, 7);
	cr_assert_eq(waiters(A, ALL, out, 8), 3);
	cr_assert_eq(out[0], 5);
	cr_assert_eq(out[1], 2);
	cr_assert_eq(out[2], 7);
}

Test(futex, max_limits_the_waiters_returned)
{
	int out[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };

	for (int t = 1; t <= 5; t++)
		wait_on(A, t);
	cr_assert_eq(waiters(A, ALL, out, 2), 2);
	cr_assert_eq(out[0], 1);
	cr_assert_eq(out[1], 2);
	cr_assert_eq(out[2], -1, "nothing written past max");
	cr_assert_eq(waiters(A, ALL, out, 0), 0);
}

Test(futex, queues_of_different_words_are_separate)
{
	int out[4];

	wait_on(A, 1);
	wait_on(B, 2);
	wait_on(C, 3);
	cr_assert_eq(futex_count(&ft, A), 1);
	cr_assert_eq(futex_count(&ft, B), 1);
	cr_assert_eq(futex_count(&ft, 0x4000), 0);
	cr_assert_eq(waiters(B, ALL, out, 4), 1);
	cr_assert_eq(out[0], 2);
	cr_assert_eq(waiters(0x4000, ALL, out, 4), 0);
}

Test(futex, wake_bitset_picks_only_matching_waiters)
{
	int out[8];

	cr_assert_eq(futex_wait(&ft, A, 0x1, 1), 0);
	cr_assert_eq(futex_wait(&ft, A, 0x2, 2), 0);
	cr_assert_eq(futex_wait(&ft, A, 0x3, 3), 0);
	cr_assert_eq(futex_wait(&ft, A, ALL, 4), 0);

	cr_assert_eq(waiters(A, 0x2, out, 8), 3);
	cr_assert_eq(out[0], 2);
	cr_assert_eq(out[1], 3);
	cr_assert_eq(out[2], 4);

	cr_assert_eq(waiters(A, 0x1, out, 1), 1);
	cr_assert_eq(out[0], 1, "oldest among the matching waiters");

	cr_assert_eq(waiters(A, 0x4, out, 8), 1);
	cr_assert_eq(out[0], 4);

	cr_assert_eq(waiters(A, ALL, out, 8), 4, "FUTEX_WAKE matches all");
	/* futex_count ignores bitsets */
	cr_assert_eq(futex_count(&ft, A), 4);
}

Test(futex, remove_takes_a_thread_out_of_its_queue)
{
	int out[8];

	wait_on(A, 1);
	wait_on(A, 2);
	wait_on(A, 3);
	cr_assert(futex_is_waiting(&ft, 2));
	cr_assert_eq(futex_remove(&ft, 2), 0);
	cr_assert_not(futex_is_waiting(&ft, 2));
	cr_assert_eq(futex_remove(&ft, 2), -ENOENT, "removed only once");
	cr_assert_eq(waiters(A, ALL, out, 8), 2);
	cr_assert_eq(out[0], 1);
	cr_assert_eq(out[1], 3, "the others keep their order");
	cr_assert_eq(futex_count(&ft, A), 2);
}

Test(futex, removed_thread_can_wait_again_at_the_tail)
{
	int out[8];

	wait_on(A, 1);
	wait_on(A, 2);
	cr_assert_eq(futex_remove(&ft, 1), 0); /* woken */
	wait_on(A, 1);			       /* waits again */
	cr_assert_eq(waiters(A, ALL, out, 8), 2);
	cr_assert_eq(out[0], 2);
	cr_assert_eq(out[1], 1);
}

Test(futex, requeue_moves_oldest_waiters_to_the_tail_of_the_target)
{
	int out[8];

	wait_on(B, 10); /* already on the target */
	wait_on(A, 1);
	wait_on(A, 2);
	wait_on(A, 3);
	cr_assert_eq(futex_requeue(&ft, A, B, 2), 2);
	cr_assert_eq(futex_count(&ft, A), 1);
	cr_assert_eq(futex_count(&ft, B), 3);
	cr_assert_eq(waiters(A, ALL, out, 8), 1);
	cr_assert_eq(out[0], 3, "the youngest stays");
	cr_assert_eq(waiters(B, ALL, out, 8), 3);
	cr_assert_eq(out[0], 10, "target's own waiters stay ahead");
	cr_assert_eq(out[1], 1);
	cr_assert_eq(out[2], 2);
}

Test(futex, requeue_all_keeps_relative_order)
{
	int out[8];

	wait_on(A, 4);
	wait_on(C, 9);
	wait_on(A, 2);
	wait_on(A, 6);
	cr_assert_eq(futex_requeue(&ft, A, B, 100), 3);
	cr_assert_eq(futex_count(&ft, A), 0);
	cr_assert_eq(waiters(B, ALL, out, 8), 3);
	cr_assert_eq(out[0], 4);
	cr_assert_eq(out[1], 2);
	cr_assert_eq(out[2], 6);
	cr_assert_eq(waiters(C, ALL, out, 8), 1);
	cr_assert_eq(out[0], 9, "other words untouched");
}

Test(futex, requeue_keeps_bitsets)
{
	int out[8];

	cr_assert_eq(futex_wait(&ft, A, 0x1, 1), 0);
	cr_assert_eq(futex_wait(&ft, A, 0x2, 2), 0);
	cr_assert_eq(futex_requeue(&ft, A, B, 2), 2);
	cr_assert_eq(waiters(B, 0x2, out, 8), 1);
	cr_assert_eq(out[0], 2);
}

Test(futex, requeue_of_zero_moves_nothing)
{
	wait_on(A, 1);
	cr_assert_eq(futex_requeue(&ft, A, B, 0), 0);
	cr_assert_eq(futex_count(&ft, A), 1);
	cr_assert_eq(futex_count(&ft, B), 0);
}

Test(futex, requeue_onto_itself_keeps_everyone_waiting)
{
	int out[8];

	wait_on(A, 1);
	wait_on(A, 2);
	int moved = futex_requeue(&ft, A, A, 10);

	cr_assert(moved >= 0 && moved <= 2);
	cr_assert_eq(futex_count(&ft, A), 2);
	cr_assert_eq(waiters(A, ALL, out, 8), 2);
}

Test(futex, removing_after_requeue_finds_the_thread)
{
	wait_on(A, 1);
	wait_on(A, 2);
	futex_requeue(&ft, A, B, 1);
	cr_assert_eq(futex_remove(&ft, 1), 0);
	cr_assert_eq(futex_count(&ft, B), 0);
	cr_assert_eq(futex_count(&ft, A), 1);
}

Test(futex, many_waiters_grow_the_table)
{
	int out[1000];

	for (int t = 0; t < 1000; t++)
		cr_assert_eq(futex_wait(&ft, t % 2 ? A : B, ALL, t), 0);
	cr_assert_eq(futex_count(&ft, A), 500);
	cr_assert_eq(waiters(B, ALL, out, 1000), 500);
	for (int i = 0; i < 500; i++)
		cr_assert_eq(out[i], 2 * i);
	for (int t = 0; t < 1000; t += 3)
		cr_assert_eq(futex_remove(&ft, t), 0);
	cr_assert_eq(waiters(A, ALL, out, 1000), 500 - 167);
	for (int i = 1; i < 500 - 167; i++)
		cr_assert_lt(out[i - 1], out[i]);
}

Test(futex, destroy_then_init_is_empty)
{
	wait_on(A, 1);
	futex_destroy(&ft);
	futex_init(&ft);
	cr_assert_eq(futex_count(&ft, A), 0);
	cr_assert_not(futex_is_waiting(&ft, 1));
}

/* A priority-inheritance lock's waiters: no wake or requeue reaches them,
 * the oldest is the one an unlock hands the lock to, and *more says
 * whether another waits behind it. */
Test(futex, priority_inheritance_waiters_are_served_oldest_first_by_unlock)
{
	int out[4];
	bool more;

	cr_assert_eq(futex_pi_first(&ft, A, &more), -1);
	cr_assert_not(more);
	wait_on(A, 1);
	cr_assert_eq(futex_wait(&ft, A, FUTEX_PI_WAITER, 2), 0);
	cr_assert_eq(futex_wait(&ft, A, FUTEX_PI_WAITER, 3), 0);
	cr_assert_eq(waiters(A, ALL, out, 4), 1);
	cr_assert_eq(out[0], 1);
	cr_assert_eq(futex_requeue(&ft, A, B, 10), 1);
	cr_assert_eq(futex_pi_first(&ft, A, &more), 2);
	cr_assert(more);
	cr_assert_eq(futex_remove(&ft, 2), 0);
	cr_assert_eq(futex_pi_first(&ft, A, &more), 3);
	cr_assert_not(more);
	cr_assert_eq(futex_pi_first(&ft, B, &more), -1);
}
