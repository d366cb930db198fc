/*
 * Coverage (analysis/coverage.c) from hand-made traces: which pairs of
 * conflicting operations a run shows, each counted once, covered when both
 * orders were seen, the same count however the runs are split among
 * workers and merged.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/coverage.h"

#define LOCK_A 0x1000 /* a lock call's return address */
#define UNLOCK_B 0x2000
#define MUTEX 0x9000

static struct event call(int t, int fn, uint64_t pc, uint64_t obj)
{
	return (struct event){ .thread = (uint16_t)t, .kind = OP_CALL,
			       .fn = (uint8_t)fn, .obj = obj, .pc = pc };
}

static struct event ev(int t, int kind, uint64_t pc, uint64_t obj,
		       int64_t arg)
{
	return (struct event){ .thread = (uint16_t)t, .kind = (uint8_t)kind,
			       .obj = obj, .pc = pc, .arg = arg };
}

/* T1 then T2, each lock; unlock. */
static size_t serial_run(struct event *e)
{
	size_t n = 0;

	e[n++] = call(1, FN_MUTEX_LOCK, LOCK_A, MUTEX);
	e[n++] = call(1, FN_MUTEX_UNLOCK, UNLOCK_B, MUTEX);
	e[n++] = call(2, FN_MUTEX_LOCK, LOCK_A, MUTEX);
	e[n++] = call(2, FN_MUTEX_UNLOCK, UNLOCK_B, MUTEX);
	return n;
}

/* T2 tries the lock while T1 holds it: its call comes between T1's lock
 * and unlock, then it blocks in the futex (inside its call) */
static size_t contended_run(struct event *e)
{
	size_t n = 0;

	e[n++] = call(1, FN_MUTEX_LOCK, LOCK_A, MUTEX);
	e[n++] = call(2, FN_MUTEX_LOCK, LOCK_A, MUTEX);
	e[n++] = ev(2, OP_FUTEX_WAIT, 0x7000, MUTEX, 0);
	e[n++] = call(1, FN_MUTEX_UNLOCK, UNLOCK_B, MUTEX);
	e[n++] = ev(1, OP_FUTEX_WAKE, 0x7100, MUTEX, 1);
	e[n++] = ev(2, OP_WOKEN, 0x7000, MUTEX, 0);
	e[n++] = call(2, FN_MUTEX_UNLOCK, UNLOCK_B, MUTEX);
	return n;
}

Test(coverage, one_order_is_not_covered)
{
	struct coverage *c = coverage_new();
	struct event e[16];
	size_t n = serial_run(e);

	coverage_add_run(c, e, n);
	/* T2's lock after T1's unlock: {lock, unlock}, one order */
	cr_assert_eq(coverage_pairs(c), 1);
	cr_assert_eq(coverage_covered(c), 0);
	coverage_free(c);
}

Test(coverage, pairs_counted_once)
{
	struct coverage *c = coverage_new();
	struct event e[16];
	size_t n = serial_run(e);

	for (int i = 0; i < 5; i++)
		coverage_add_run(c, e, n);
	cr_assert_eq(coverage_pairs(c), 1);
	/* another object, other threads, same two locations: same pair */
	for (size_t i = 0; i < n; i++) {
		e[i].obj = 0xa000;
		e[i].thread = (uint16_t)(e[i].thread + 3);
	}
	coverage_add_run(c, e, n);
	cr_assert_eq(coverage_pairs(c), 1);
	coverage_free(c);
}

Test(coverage, both_orders_recognised)
{
	struct coverage *c = coverage_new();
	struct event e[16];
	size_t n = contended_run(e);

	coverage_add_run(c, e, n);
	/* lock/lock and unlock/unlock (one location each: covered once
	 * seen), and T1's unlock after T2's lock call (its futex wait is
	 * the call's, not a futex pair of its own) */
	cr_assert_eq(coverage_pairs(c), 3);
	cr_assert_eq(coverage_covered(c), 2);
	n = serial_run(e);
	cr_assert_eq(coverage_add_run(c, e, n), 1,
		     "the other order covers {lock, unlock}");
	cr_assert_eq(coverage_pairs(c), 3);
	cr_assert_eq(coverage_covered(c), 3);
	cr_assert_float_eq(coverage_ratio(c), 1.0, 1e-9);
	coverage_free(c);
}

Test(coverage, reads_conflict_with_writes_only)
{
	struct coverage *c = coverage_new();
	struct event e[8];
	size_t n = 0;

	/* two reads of two threads: no conflict */
	e[n++] = ev(1, OP_ACCESS, 0x100, 0x5000, 0);
	e[n++] = ev(2, OP_ACCESS, 0x200, 0x5000, 0);
	coverage_add_run(c, e, n);
	cr_assert_eq(coverage_pairs(c), 0);
	/* T1 writes, T2 reads it, T1 reads again (its own write: no
	 * pair, and T2's read is no write) */
	n = 0;
	e[n++] = ev(1, OP_ACCESS, 0x300, 0x5000, 1);
	e[n++] = ev(2, OP_ACCESS, 0x200, 0x5000, 0);
	e[n++] = ev(1, OP_ACCESS, 0x100, 0x5000, 0);
	coverage_add_run(c, e, n);
	cr_assert_eq(coverage_pairs(c), 1);
	/* T2 reads before T1 writes: the write follows the read */
	n = 0;
	e[n++] = ev(2, OP_ACCESS, 0x200, 0x5000, 0);
	e[n++] = ev(1, OP_ACCESS, 0x300, 0x5000, 1);
	coverage_add_run(c, e, n);
	cr_assert_eq(coverage_pairs(c), 1);
	cr_assert_eq(coverage_covered(c), 1);
	coverage_free(c);
}

Test(coverage, futex_outside_a_call_is_its_own_operation)
{
	struct coverage *c = coverage_new();
	struct event e[8];
	size_t n = 0;

	e[n++] = ev(1, OP_ACCESS, 0x100, 0x5000, 1);
	e[n++] = ev(1, OP_FUTEX_WAKE, 0x110, 0x6000, 1);
	e[n++] = ev(2, OP_FUTEX_WAIT, 0x210, 0x6000, 0);
	coverage_add_run(c, e, n);
	cr_assert_eq(coverage_pairs(c), 1);

	struct cov_pair *ps;
	size_t np = coverage_list(c, &ps);

	cr_assert_eq(np, 1);
	cr_assert_eq(ps[0].what, COV_FUTEX);
	cr_assert_eq(ps[0].a, 0x111);
	cr_assert_eq(ps[0].b, 0x211);
	cr_assert_eq(ps[0].seen, 1);
	free(ps);
	coverage_free(c);
}

/* Runs split among workers (or shards) and their pair sets unioned,
 * through the workers' text form, give the serial count. */
Test(coverage, same_count_when_split_and_merged)
{
	struct coverage *all = coverage_new(), *w[2] = { coverage_new(),
							 coverage_new() };
	struct coverage *merged = coverage_new();
	struct event e[16];

	for (int run = 0; run < 8; run++) {
		size_t n = run % 3 ? serial_run(e) : contended_run(e);

		/* vary the locations so there are several pairs */
		for (size_t i = 0; i < n; i++)
			if (e[i].kind == OP_CALL && e[i].thread == 2)
				e[i].pc += (uint64_t)(run % 4) * 0x10;
		coverage_add_run(all, e, n);
		coverage_add_run(w[run % 2], e, n);
	}
	for (int k = 0; k < 2; k++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		coverage_put(f, w[k]);
		fclose(f);
		f = fmemopen(buf, len, "r");
		cr_assert_eq(coverage_get(f, merged), 0);
		fclose(f);
		free(buf);
	}
	cr_assert_gt(coverage_pairs(all), 3);
	cr_assert_eq(coverage_pairs(merged), coverage_pairs(all));
	cr_assert_eq(coverage_covered(merged), coverage_covered(all));
	cr_assert_lt(coverage_covered(all), coverage_pairs(all));

	struct cov_pair *a, *b;
	size_t na = coverage_list(all, &a), nb = coverage_list(merged, &b);

	cr_assert_eq(na, nb);
	for (size_t i = 0; i < na; i++)
		cr_assert(a[i].a == b[i].a && a[i].b == b[i].b &&
			  a[i].seen == b[i].seen);
	free(a);
	free(b);
	coverage_free(all);
	coverage_free(w[0]);
	coverage_free(w[1]);
	coverage_free(merged);
}

Test(coverage, malformed_worker_text_is_refused)
{
	struct coverage *c = coverage_new();
	const char *bad[] = { "pairs 2\n1 2 3 1\n", "pairs x\n",
			      "pairs 1\n1 2 9 1\n" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");

		cr_assert_neq(coverage_get(f, c), 0, "%s", bad[i]);
		fclose(f);
	}
	coverage_free(c);
}
