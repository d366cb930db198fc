/*
 * The round-robin and coverage-guided samplers (analysis/strategy.c) on
 * hand-made choices: rr alternates strictly, cov takes the operation that
 * makes an order not seen yet.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../../analysis/coverage.h"
#include "../../analysis/strategy.h"

static struct choice two(int current)
{
	struct choice c;

	memset(&c, 0, sizeof(c));
	c.kind = DEC_RUN;
	c.current = current;
	c.nalts = 2;
	/* the current thread first (the default) */
	c.alts[0].thread = (uint16_t)(current == 2 ? 2 : 1);
	c.alts[1].thread = (uint16_t)(current == 2 ? 1 : 2);
	return c;
}

Test(samplers, rr_alternates_strictly)
{
	/* run 1: turns from the start, q = 1, upwards */
	struct sampler *s = sampler_new_kind(SAMPLER_RR, 1, 3);
	struct strategy st = sampler_strategy(s);
	int cur = 1, prev = -1;

	sampler_begin(s, 1, 100);
	for (int i = 0; i < 40; i++) {
		struct choice c = two(cur);
		int k = st.pick(st.ctx, &c);

		cr_assert(k >= 0 && k < 2);
		int t = c.alts[k].thread;

		cr_assert_neq(t, prev, "choice %d: thread %d twice in a row", i,
			      t);
		prev = cur = t;
	}
	sampler_free(s);
}

Test(samplers, rr_waits_for_the_first_block)
{
	/* run 0: the running thread goes on while it can */
	struct sampler *s = sampler_new_kind(SAMPLER_RR, 1, 3);
	struct strategy st = sampler_strategy(s);
	struct choice c = two(1);

	sampler_begin(s, 0, 100);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(st.pick(st.ctx, &c), 0);
	c.current = 0; /* thread 0 blocked: turns begin */
	int k = st.pick(st.ctx, &c);
	struct choice d = two(c.alts[k].thread);
	int k2 = st.pick(st.ctx, &d);

	cr_assert_neq(d.alts[k2].thread, c.alts[k].thread);
	sampler_free(s);
}

Test(samplers, cov_takes_the_order_not_seen)
{
	struct coverage *cov = coverage_new();
	struct sampler *s = sampler_new_kind(SAMPLER_COV, 7, 3);
	struct strategy st = sampler_strategy(s);
	struct event e[2] = {
		{ .thread = 1, .kind = OP_ACCESS, .obj = 0x5000, .pc = 0x100,
		  .arg = 1 },
		{ .thread = 2, .kind = OP_ACCESS, .obj = 0x5000, .pc = 0x200,
		  .arg = 1 },
	};

	/* 0x100 then 0x200 seen; 0x200 then 0x100 not */
	coverage_add_run(cov, e, 2);
	sampler_set_coverage(s, cov);
	for (uint64_t run = 0; run < 20; run++) {
		sampler_begin(s, run, 100);
		/* thread 2 wrote at 0x200; thread 1 (at 0x100) and thread 3
		 * (on another object, nobody's before) could go next */
		st.executed(st.ctx, &e[1]);
		struct choice c;

		memset(&c, 0, sizeof(c));
		c.kind = DEC_RUN;
		c.current = 2;
		c.nalts = 2;
		c.alts[0] = (struct alt){ .thread = 3, .kind = OP_ACCESS,
					  .obj = 0x6000, .pc = 0x200 };
		c.alts[1] = (struct alt){ .thread = 1, .kind = OP_ACCESS,
					  .obj = 0x5000, .pc = 0x100 };
		cr_assert_eq(st.pick(st.ctx, &c), 1, "run %llu",
			     (unsigned long long)run);
	}
	sampler_free(s);
	coverage_free(cov);
}

/* Threads 1 and 2 can run, thread 3 sleeps: its timeout is the third
 * alternative.  How many of n choices of run `run` wake the sleeper. */
static int timeouts_taken(struct sampler *s, uint64_t run, int n)
{
	struct strategy st = sampler_strategy(s);
	int taken = 0;

	sampler_begin(s, run, 100);
	for (int i = 0; i < n; i++) {
		struct choice c = two(1);

		c.nalts = 3;
		c.alts[2].thread = 3;
		c.alts[2].timeout = 1;
		c.alts[2].cost = 1;
		int k = st.pick(st.ctx, &c);

		cr_assert(k >= 0 && k < 3);
		taken += c.alts[k].timeout == 1;
	}
	return taken;
}

/* The random walk wakes a sleeper like a thread in half of its runs
 * (time flows fast against the work) and one time in 64 in the others,
 * so a background thread's periodic sleep does not interleave as much as
 * the threads doing the work in every run; race discovery's walk wakes
 * it like a thread in every run. */
Test(samplers, random_walk_wakes_sleepers_rarely_in_half_its_runs)
{
	struct sampler *s = sampler_new_kind(SAMPLER_RANDOM, 1, 3);
	int heavy = 0, rare = 0;

	for (uint64_t run = 0; run < 40; run++) {
		int k = timeouts_taken(s, run, 3000);

		if (k >= 800 && k <= 1200)
			heavy++; /* about 1 in 3 */
		else if (k >= 20 && k <= 80)
			rare++; /* about 1 in 64 */
		else
			cr_assert_fail("run %llu took %d timeouts of 3000",
				       (unsigned long long)run, k);
	}
	cr_assert(heavy >= 10 && rare >= 10, "%d heavy, %d rare", heavy, rare);
	sampler_timeouts_always(s);
	for (uint64_t run = 0; run < 40; run++) {
		int k = timeouts_taken(s, run, 3000);

		cr_assert(k >= 800 && k <= 1200,
			  "discovery's run %llu took %d timeouts of 3000",
			  (unsigned long long)run, k);
	}
	sampler_free(s);
}
