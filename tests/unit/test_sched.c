/*
 * The run queue's rules (tracer/sched.h), without a tracee: which
 * alternatives a choice point offers, in which order, at which cost.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../tracer/sched.h"

#define N 8

static struct sched_thread th[N];
static struct choice c;

static void setup(void)
{
	memset(th, 0, sizeof(th));
	memset(&c, 0, sizeof(c));
}

TestSuite(sched, .init = setup);

static void enable(int t, uint8_t kind, uint64_t obj)
{
	th[t] = (struct sched_thread){ .state = SCHED_ENABLED, .kind = kind,
				       .obj = obj };
}

static void block(int t, uint64_t obj)
{
	th[t] = (struct sched_thread){ .state = SCHED_BLOCKED,
				       .kind = OP_FUTEX_WAIT, .obj = obj };
}

static void block_timed(int t, uint64_t obj, uint64_t deadline)
{
	block(t, obj);
	th[t].timed = true;
	th[t].deadline = deadline;
}

static void yielding(int t)
{
	enable(t, OP_YIELD, 0);
	th[t].yield = true;
}

/* The alternatives as "T<thread><cost><t if timeout>" words, e.g. "T10 T21". */
static const char *alts(int n, int current)
{
	static char buf[1024];
	size_t k = 0;

	cr_assert_eq(sched_alternatives(th, n, current, &c), c.nalts);
	buf[0] = 0;
	for (int i = 0; i < c.nalts; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%sT%u%u%s",
				      i ? " " : "", c.alts[i].thread,
				      c.alts[i].cost,
				      c.alts[i].timeout ? "t" : "");
	return buf;
}

Test(sched, choice_is_a_run_decision_naming_the_current_thread)
{
	enable(0, OP_CALL, 1);
	enable(1, OP_CALL, 2);
	alts(2, 1);
	cr_assert_eq(c.kind, DEC_RUN);
	cr_assert_eq(c.current, 1);
	cr_assert_eq(c.nalts, 2);
}

Test(sched, current_continues_by_default_and_switching_costs_one)
{
	enable(0, OP_CALL, 0x10);
	enable(1, OP_CALL, 0x20);
	enable(2, OP_CALL, 0x30);
	cr_assert_str_eq(alts(3, 1), "T10 T01 T21");
	cr_assert_str_eq(alts(3, 0), "T00 T11 T21");
	cr_assert_str_eq(alts(3, 2), "T20 T01 T11");
}

Test(sched, alternatives_carry_the_pending_operation)
{
	enable(0, OP_CALL, 0x10);
	th[0].kind = OP_CALL;
	enable(1, OP_FUTEX_WAKE, 0x20);
	alts(2, 0);
	cr_assert_eq(c.alts[0].kind, OP_CALL);
	cr_assert_eq(c.alts[0].obj, 0x10);
	cr_assert_eq(c.alts[1].kind, OP_FUTEX_WAKE);
	cr_assert_eq(c.alts[1].obj, 0x20);
	cr_assert_eq(c.alts[1].yield, 0);
}

Test(sched, only_enabled_threads_are_offered)
{
	enable(0, OP_CALL, 0);
	block(1, 0x40);
	/* 2 is dead */
	th[3].state = SCHED_RUNNING;
	enable(4, OP_CALL, 0);
	cr_assert_str_eq(alts(5, 0), "T00 T41");
}

Test(sched, single_enabled_current_has_one_alternative)
{
	enable(0, OP_CALL, 0);
	block(1, 0x40);
	cr_assert_str_eq(alts(2, 0), "T00");
}

/* A free switch: round-robin order after the thread that stopped. */
Test(sched, blocked_current_passes_round_robin_and_all_free)
{
	enable(0, OP_CALL, 0);
	block(1, 0x40);
	enable(2, OP_CALL, 0);
	enable(3, OP_CALL, 0);
	cr_assert_str_eq(alts(4, 1), "T20 T30 T00");

	block(0, 0x50);
	cr_assert_str_eq(alts(4, 1), "T20 T30");
}

Test(sched, exited_current_passes_round_robin_and_all_free)
{
	enable(1, OP_CALL, 0);
	enable(3, OP_CALL, 0);
	th[2].state = SCHED_DEAD;
	cr_assert_str_eq(alts(4, 2), "T30 T10");
}

Test(sched, no_current_thread_means_lowest_enabled_first_and_free)
{
	enable(2, OP_CALL, 0);
	enable(5, OP_CALL, 0);
	cr_assert_str_eq(alts(6, -1), "T20 T50");
	cr_assert_eq(c.current, -1);
}

Test(sched, current_out_of_range_is_treated_as_no_current)
{
	enable(0, OP_CALL, 0);
	enable(1, OP_CALL, 0);
	cr_assert_str_eq(alts(2, 7), "T00 T10");
}

/*
 * Yields: the threads that are not yielding come first, in round-robin
 * order after the yielder, for free; the other yielders follow and the
 * yielder itself comes last, and those cost a preemption while a thread
 * that is not yielding could run (so spinning threads cannot pass the
 * turn to each other forever while the thread they wait for is ready).
 */
Test(sched, yield_is_round_robin_free_with_the_yielder_last)
{
	enable(0, OP_CALL, 0);
	enable(1, OP_CALL, 0);
	yielding(2);
	enable(3, OP_CALL, 0);
	cr_assert_str_eq(alts(4, 2), "T30 T00 T10 T21");
	cr_assert_eq(c.alts[3].yield, 1);

	/* wrap-around from the last thread */
	setup();
	enable(0, OP_CALL, 0);
	enable(1, OP_CALL, 0);
	yielding(3);
	cr_assert_str_eq(alts(4, 3), "T00 T10 T31");
}

Test(sched, yield_skips_blocked_and_dead_threads)
{
	yielding(1);
	block(2, 0x40);
	enable(4, OP_CALL, 0);
	enable(0, OP_CALL, 0);
	cr_assert_str_eq(alts(5, 1), "T40 T00 T11");
}

Test(sched, lone_yielder_continues_for_free)
{
	yielding(0);
	block(1, 0x40);
	cr_assert_str_eq(alts(2, 0), "T00");
	cr_assert_eq(c.alts[0].yield, 1);
}

/* Spinners pass the turn to each other for free, but the one that just
 * spun may go on only as a preemption: else it could spin forever at no
 * cost (tests/targets/peterson). */
Test(sched, yielders_alone_pass_the_turn_for_free)
{
	yielding(0);
	yielding(1);
	yielding(2);
	cr_assert_str_eq(alts(3, 0), "T10 T20 T01");
	cr_assert_str_eq(alts(3, 1), "T20 T00 T11");
}

Test(sched, other_yielders_cost_one_while_a_busy_thread_waits)
{
	yielding(0);
	yielding(1);
	enable(2, OP_CALL, 0);
	cr_assert_str_eq(alts(3, 0), "T20 T11 T01");

	/* after a block too */
	setup();
	block(0, 0x10);
	yielding(1);
	enable(2, OP_CALL, 0);
	cr_assert_str_eq(alts(3, 0), "T20 T11");
}

Test(sched, yielders_after_a_block_are_free_when_nobody_else_runs)
{
	block(0, 0x10);
	yielding(1);
	yielding(2);
	cr_assert_str_eq(alts(3, 0), "T10 T20");
}

Test(sched, yielders_come_after_preemptions_of_busy_threads)
{
	enable(0, OP_CALL, 0);
	yielding(1);
	enable(2, OP_CALL, 0);
	cr_assert_str_eq(alts(3, 0), "T00 T21 T11");
}

/* A deadline that came (virtual clock) while only spinners can run: its
 * thread is the one they wait for, as if the kernel had woken it, so its
 * timeout comes first and free, marked for the samplers, and the spinners
 * cost one as beside a busy thread.  Before, the spinner went on for free
 * until --max-steps (a flag set after usleep(1000)). */
Test(sched, a_deadline_that_came_runs_before_the_spinners)
{
	yielding(0);
	yielding(1);
	block_timed(2, 0x40, 1000);
	th[2].due = true;
	block_timed(3, 0x50, 5000);
	cr_assert_str_eq(alts(4, 0), "T20t T11 T01 T31t");
	cr_assert_eq(c.alts[0].woken, 1);
	cr_assert_eq(c.alts[0].obj, 0x40, "the wait's object");
	cr_assert_eq(c.alts[3].woken, 0);
}

Test(sched, a_deadline_not_come_yet_waits_behind_a_spinner)
{
	yielding(0);
	block_timed(1, 0x40, 1000);
	cr_assert_str_eq(alts(2, 0), "T00 T11t");
	cr_assert_eq(c.alts[1].woken, 0);
}

Test(sched, a_deadline_that_came_is_a_preemption_beside_a_busy_thread)
{
	enable(0, OP_CALL, 0);
	yielding(1);
	block_timed(2, 0x40, 1000);
	th[2].due = true;
	cr_assert_str_eq(alts(3, 0), "T00 T11 T21t");
	cr_assert_eq(c.alts[2].woken, 0);
}

Test(sched, timeout_costs_one_while_someone_is_enabled)
{
	enable(0, OP_CALL, 0);
	block_timed(1, 0x40, 1000);
	cr_assert_str_eq(alts(2, 0), "T00 T11t");
	cr_assert_eq(c.alts[1].kind, OP_TIMEOUT);
	cr_assert_eq(c.alts[1].obj, 0x40, "a timeout's object is its wait");
}

Test(sched, timeout_costs_one_even_after_a_block)
{
	/* the current thread blocked; T2 could run, so timing T1 out
	 * instead is still a preemption */
	block(0, 0x30);
	block_timed(1, 0x40, 1000);
	enable(2, OP_CALL, 0);
	cr_assert_str_eq(alts(3, 0), "T20 T11t");
}

Test(sched, untimed_blocked_threads_never_time_out)
{
	enable(0, OP_CALL, 0);
	block(1, 0x40);
	cr_assert_str_eq(alts(2, 0), "T00");
}

/* Nobody can run: time jumps to the earliest deadline, free, and only
 * there; T0's later one is a choice once T2 can run (a preemption then).
 * Offering it here let a 60 s wait time out before a 10 ms sleep ended. */
Test(sched, only_the_earliest_deadline_is_free_when_nobody_can_run)
{
	block_timed(0, 0x10, 5000);
	block(1, 0x20);
	block_timed(2, 0x30, 3000);
	cr_assert_str_eq(alts(3, 0), "T20t");
}

Test(sched, timeouts_are_ordered_earliest_deadline_first)
{
	enable(0, OP_CALL, 0);
	block_timed(1, 0x10, 900);
	block_timed(2, 0x20, 100);
	block_timed(3, 0x30, 500);
	cr_assert_str_eq(alts(4, 0), "T00 T21t T31t T11t");
	cr_assert_eq(c.alts[1].obj, 0x20);
	cr_assert_eq(c.alts[2].obj, 0x30);
	cr_assert_eq(c.alts[3].obj, 0x10);
}

Test(sched, equal_deadlines_time_out_lowest_thread_first)
{
	block_timed(3, 0x10, 700);
	block_timed(1, 0x20, 700);
	block_timed(2, 0x30, 100);
	enable(0, OP_CALL, 0);
	cr_assert_str_eq(alts(4, 0), "T00 T21t T11t T31t");
	/* nobody can run: every thread at the earliest deadline is free */
	th[0].state = SCHED_DEAD;
	th[2].state = SCHED_DEAD;
	cr_assert_str_eq(alts(4, 3), "T10t T30t");
}

Test(sched, deadlock_offers_nothing)
{
	block(0, 0x10);
	block(1, 0x20);
	th[2].state = SCHED_DEAD;
	cr_assert_eq(sched_alternatives(th, 3, 0, &c), 0);
	cr_assert_eq(c.nalts, 0);
}

Test(sched, timeouts_follow_a_yield)
{
	yielding(0);
	enable(1, OP_CALL, 0);
	block_timed(2, 0x20, 10);
	cr_assert_str_eq(alts(3, 0), "T10 T01 T21t");
}
