/*
 * Minimisation (analysis/minimize.c) with a fake program instead of a
 * tracee: every step of the fake is a choice between T0 (the default) and
 * T1; at odd steps taking T1 is a preemption, at even steps it is free (as
 * after a block).  A predicate over the steps that took T1 decides whether
 * the run fails and how, so we know the minimal failing schedule.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "../../analysis/minimize.h"

#define NSTEPS 80

struct fake {
	/* fill out->failure/signal/location from which steps took T1 */
	void (*verdict)(const bool *t1, struct run_result *out);
	unsigned calls;
	int error; /* run() returns this instead of running */
};

static bool costly(int step)
{
	return step % 2 == 1;
}

static void crash_at(struct run_result *out, int sig, const char *loc)
{
	out->failure = FAIL_CRASH;
	out->signal = sig;
	out->thread = 1;
	snprintf(out->location, sizeof(out->location), "%s", loc);
}

#define BANK "withdraw at bank.c:23"

/* A run of the fake that takes T1 exactly at the steps in t1. */
static void fake_result(struct fake *f, const bool *t1, struct run_result *out)
{
	memset(out, 0, sizeof(*out));
	out->thread = -1;
	out->events = calloc(NSTEPS, sizeof(*out->events));
	out->decisions = calloc(NSTEPS, sizeof(*out->decisions));
	cr_assert(out->events && out->decisions);
	out->nevents = out->ndecisions = NSTEPS;
	for (int k = 0; k < NSTEPS; k++) {
		bool pre = t1[k] && costly(k);

		out->events[k] = (struct event){
			.step = (uint32_t)k, .thread = t1[k], .kind = OP_CALL,
			.fn = FN_MUTEX_LOCK, .preempt = pre, .decided = 1 };
		out->decisions[k] = (struct decision){
			.step = (uint32_t)k, .kind = DEC_RUN,
			.thread = t1[k], .index = t1[k], .nalts = 2 };
		out->preemptions += pre;
	}
	out->steps = NSTEPS;
	f->verdict(t1, out);
}

/* minimize_run_fn: decisions applied by step, missing ones default. */
static int fake_run(void *ctx, const struct decision *dec, size_t n,
		    struct run_result *out)
{
	struct fake *f = ctx;
	bool t1[NSTEPS] = { 0 };

	f->calls++;
	if (f->error)
		return f->error;
	for (size_t i = 0; i < n; i++) {
		cr_assert(i == 0 || dec[i - 1].step < dec[i].step,
			  "decisions out of step order");
		if (dec[i].step < NSTEPS && dec[i].kind == DEC_RUN)
			t1[dec[i].step] = dec[i].thread == 1;
	}
	fake_result(f, t1, out);
	return 0;
}

/* The failing run minimisation starts from: T1 at the given steps. */
static struct run_result start(struct fake *f, const int *steps, int n)
{
	bool t1[NSTEPS] = { 0 };
	struct run_result r;

	for (int i = 0; i < n; i++)
		t1[steps[i]] = true;
	fake_result(f, t1, &r);
	cr_assert_neq(r.failure, FAIL_NONE, "the start run must fail");
	return r;
}

static bool took(const struct run_result *r, int step)
{
	return r->decisions[step].index != 0;
}

/* Fails (bank's fingerprint) iff T1 preempts at step 5. */
static void needs_5(const bool *t1, struct run_result *out)
{
	if (t1[5])
		crash_at(out, SIGABRT, BANK);
}

Test(minimize, drops_every_preemption_not_needed)
{
	struct fake f = { .verdict = needs_5 };
	struct run_result best = start(&f, (int[]){ 1, 3, 5, 7, 9 }, 5);
	struct minimize_stats st;

	cr_assert_eq(best.preemptions, 5);
	cr_assert_eq(minimize(fake_run, &f, &best, 1000, &st), 0);
	cr_assert_eq(best.preemptions, 1);
	cr_assert(took(&best, 5));
	cr_assert_eq(minimize_count_decisions(&best), 1);
	cr_assert_eq(best.failure, FAIL_CRASH);
	cr_assert_eq(best.signal, SIGABRT);
	cr_assert_str_eq(best.location, BANK);
	cr_assert_eq(st.preemptions_before, 5);
	cr_assert_eq(st.preemptions_after, 1);
	cr_assert_eq(st.decisions_before, 5);
	cr_assert_eq(st.decisions_after, 1);
	cr_assert_eq(st.runs, f.calls, "every candidate run is counted");
	run_result_free(&best);
}

/* Fails iff T1 preempts at steps 5 and 61. */
static void needs_5_and_61(const bool *t1, struct run_result *out)
{
	if (t1[5] && t1[61])
		crash_at(out, SIGABRT, BANK);
}

/* A sample through a runner: 40 preemptions, two needed.  They are
 * dropped in chunks, in fewer runs than one at a time would take (one per
 * needless preemption). */
Test(minimize, drops_many_preemptions_in_chunks)
{
	struct fake f = { .verdict = needs_5_and_61 };
	int steps[40];

	for (int i = 0; i < 40; i++)
		steps[i] = 2 * i + 1;
	struct run_result best = start(&f, steps, 40);
	struct minimize_stats st;

	cr_assert_eq(best.preemptions, 40);
	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.preemptions, 2);
	cr_assert(took(&best, 5) && took(&best, 61));
	cr_assert_lt(st.runs, 38, "%u runs", st.runs);
	cr_assert_eq(st.runs, f.calls);
	run_result_free(&best);
}

Test(minimize, drops_free_decisions_not_needed)
{
	struct fake f = { .verdict = needs_5 };
	struct run_result best = start(&f, (int[]){ 2, 4, 5, 6, 8 }, 5);
	struct minimize_stats st;

	cr_assert_eq(best.preemptions, 1);
	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.preemptions, 1);
	cr_assert_eq(minimize_count_decisions(&best), 1);
	cr_assert(took(&best, 5));
	cr_assert_eq(st.decisions_before, 5);
	cr_assert_eq(st.decisions_after, 1);
	run_result_free(&best);
}

/* Fails iff T1 took the free step 4 and preempted at 5. */
static void needs_4_and_5(const bool *t1, struct run_result *out)
{
	if (t1[4] && t1[5])
		crash_at(out, SIGABRT, BANK);
}

Test(minimize, keeps_a_needed_free_decision)
{
	struct fake f = { .verdict = needs_4_and_5 };
	struct run_result best = start(&f, (int[]){ 0, 2, 4, 5, 7, 10 }, 6);
	struct minimize_stats st;

	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.preemptions, 1);
	cr_assert_eq(minimize_count_decisions(&best), 2);
	cr_assert(took(&best, 4));
	cr_assert(took(&best, 5));
	run_result_free(&best);
}

/* Fails iff T1 preempts at 3 and at 7: nothing can go. */
static void needs_3_and_7(const bool *t1, struct run_result *out)
{
	if (t1[3] && t1[7])
		crash_at(out, SIGABRT, BANK);
}

Test(minimize, keeps_every_needed_preemption)
{
	struct fake f = { .verdict = needs_3_and_7 };
	struct run_result best = start(&f, (int[]){ 1, 3, 7, 11 }, 4);
	struct minimize_stats st;

	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.preemptions, 2);
	cr_assert(took(&best, 3));
	cr_assert(took(&best, 7));
	cr_assert_eq(st.preemptions_after, 2);
	run_result_free(&best);
}

/* With 5, bank's failure; without 5 but with 3, a different crash. */
static void other_failure_without_5(const bool *t1, struct run_result *out)
{
	if (t1[5])
		crash_at(out, SIGABRT, BANK);
	else if (t1[3])
		crash_at(out, SIGSEGV, "requester at crash_segv.c:30");
}

Test(minimize, never_trades_for_a_different_failure)
{
	struct fake f = { .verdict = other_failure_without_5 };
	struct run_result best = start(&f, (int[]){ 3, 5 }, 2);
	struct minimize_stats st;

	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.signal, SIGABRT);
	cr_assert_str_eq(best.location, BANK);
	cr_assert(took(&best, 5));
	cr_assert_not(took(&best, 3));
	cr_assert_eq(best.preemptions, 1);
	run_result_free(&best);
}

/* Same kind and signal at another location is another failure. */
static void location_matters(const bool *t1, struct run_result *out)
{
	if (t1[5] && t1[9])
		crash_at(out, SIGABRT, BANK);
	else if (t1[9])
		crash_at(out, SIGABRT, "main at bank.c:40");
}

Test(minimize, location_is_part_of_the_fingerprint)
{
	struct fake f = { .verdict = location_matters };
	struct run_result best = start(&f, (int[]){ 5, 9 }, 2);
	struct minimize_stats st;

	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.preemptions, 2);
	cr_assert_str_eq(best.location, BANK);
	run_result_free(&best);
}

/* Exit status is part of the fingerprint of an exit failure. */
static void exit_status_matters(const bool *t1, struct run_result *out)
{
	if (t1[1] || t1[7]) {
		out->failure = FAIL_EXIT;
		out->exit_status = t1[7] ? 3 : 1;
		snprintf(out->location, sizeof(out->location), "main");
	}
}

Test(minimize, exit_status_is_part_of_the_fingerprint)
{
	struct fake f = { .verdict = exit_status_matters };
	struct run_result best = start(&f, (int[]){ 1, 7 }, 2);
	struct minimize_stats st;

	cr_assert_eq(best.exit_status, 3);
	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.failure, FAIL_EXIT);
	cr_assert_eq(best.exit_status, 3);
	cr_assert(took(&best, 7));
	cr_assert_not(took(&best, 1));
	run_result_free(&best);
}

/* Any run fails the same way: nothing at all is needed. */
static void always(const bool *t1, struct run_result *out)
{
	(void)t1;
	crash_at(out, SIGABRT, BANK);
}

Test(minimize, reaches_zero_when_no_decision_is_needed)
{
	struct fake f = { .verdict = always };
	struct run_result best = start(&f, (int[]){ 1, 2, 3 }, 3);
	struct minimize_stats st;

	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.preemptions, 0);
	cr_assert_eq(minimize_count_decisions(&best), 0);
	cr_assert_eq(st.preemptions_after, 0);
	cr_assert_eq(st.decisions_after, 0);
	run_result_free(&best);
}

Test(minimize, minimal_run_is_left_alone)
{
	struct fake f = { .verdict = needs_5 };
	struct run_result best = start(&f, (int[]){ 5 }, 1);
	struct minimize_stats st;

	minimize(fake_run, &f, &best, 1000, &st);
	cr_assert_eq(best.preemptions, 1);
	cr_assert(took(&best, 5));
	cr_assert_leq(st.runs, 2, "one try per decision and phase");
	run_result_free(&best);
}

Test(minimize, respects_the_run_budget)
{
	struct fake f = { .verdict = needs_5 };
	struct run_result best = start(&f, (int[]){ 1, 3, 5, 7, 9, 11 }, 6);
	struct minimize_stats st;

	minimize(fake_run, &f, &best, 2, &st);
	cr_assert_leq(f.calls, 2);
	cr_assert_leq(st.runs, 2);
	cr_assert_leq(best.preemptions, 6);
	cr_assert_neq(best.failure, FAIL_NONE, "still a failing run");
	run_result_free(&best);

	struct fake g = { .verdict = needs_5 };

	best = start(&g, (int[]){ 1, 3, 5 }, 3);
	minimize(fake_run, &g, &best, 0, &st);
	cr_assert_eq(g.calls, 0);
	cr_assert_eq(best.preemptions, 3);
	run_result_free(&best);
}

Test(minimize, failing_run_function_keeps_the_original)
{
	struct fake f = { .verdict = needs_5 };
	struct run_result best = start(&f, (int[]){ 1, 5 }, 2);
	struct minimize_stats st;

	f.error = -EIO;
	cr_assert_eq(minimize(fake_run, &f, &best, 100, &st), 0);
	cr_assert_gt(f.calls, 0);
	cr_assert_eq(best.preemptions, 2);
	cr_assert(took(&best, 1));
	cr_assert(took(&best, 5));
	run_result_free(&best);
}

Test(minimize, count_decisions_counts_non_default_ones)
{
	struct decision d[4] = {
		{ .step = 0, .index = 0 }, { .step = 1, .index = 2 },
		{ .step = 2, .index = 0 }, { .step = 3, .index = 1 },
	};
	struct run_result r = { .decisions = d, .ndecisions = 4 };

	cr_assert_eq(minimize_count_decisions(&r), 2);
	r.ndecisions = 0;
	cr_assert_eq(minimize_count_decisions(&r), 0);
}
