/*
 * proofs: correct programs whose bounded search finishes within the
 * default budget, and the state-key rule that helps them (the virtual
 * clock left out of the key until a run reads it) keeps every verdict.
 */
#include "common.h"

TestSuite(proofs, .init = setup, .fini = teardown, .timeout = 600);

/* The runs of r's PASS summary ("ptloom: PASS 123 runs, ..."): a PASS
 * it must be. */
static long runs_of(const struct res *r)
{
	long n = pass_runs(r);

	cr_assert_geq(n, 0, "no PASS in:\n%s", r->out);
	return n;
}

/* `ptloom run ARGS -- PROGRAM` under sh with ENV ("K=V ..." or ""). */
static struct res run_env(const char *env, const char *args,
			  const char *program)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "%s ptloom run -o out %s -- %s", env, args,
		 program);
	return sh(cmd);
}

/* Three workers add three times each under a mutex while main reads the
 * count once: with the default options (the hybrid, 10,000 runs) the
 * search completes preemption bound 2.  At the session start it did not
 * (dfs alone 8,540 runs, which a sample every fourth run stretches past
 * the budget); now the clock is left out of the key (8,175) and the
 * samples thin out after run 2,000. */
Test(proofs, stateful_counter_completes_bound_2_by_default)
{
	char *argv[] = { (char *)ptloom(), "run", "-o", in_tmp("out"),
			 "--seed", SEED, "--", (char *)target("stateful_counter"),
			 NULL };
	struct res r = run_argv(argv, NULL, 600 * slowdown());
	char *s = summary(&r);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(s, "complete to preemption bound 2", "the summary");
	cr_assert_leq(runs_of(&r), 10000);
	free(s);
	res_free(&r);
}

/* A program that never reads the clock after its first choice: the search
 * never starts again, and leaving the clock out of the key costs no run
 * (the states it merges are equal but for a clock nobody reads). */
Test(proofs, clock_left_out_of_the_key_until_read)
{
	const char *bank = example("bank_fixed");
	char args[256];

	snprintf(args, sizeof(args), "--dfs-only --seed %s", SEED);
	struct res a = run_env("PTLOOM_STATS=1", args, bank);
	struct res b = run_env("PTLOOM_STATS=1 PTLOOM_KEY_CLOCK=1", args, bank);

	assert_exit(a, 0);
	assert_exit(b, 0);
	assert_contains(a.out, "complete to preemption bound 2", "summary");
	assert_contains(b.out, "complete to preemption bound 2", "summary");
	cr_assert_null(strstr(a.err, "started again with the clock"), "%s",
		       a.err);
	cr_assert_leq(runs_of(&a), runs_of(&b));
	res_free(&a);
	res_free(&b);
}

/* A program whose only difference between schedules is the clock it
 * reads at the end (a contended lock takes more points): the search
 * starts again with the clock keyed as soon as a run reads it, so the
 * buggy parity is found and replays exactly, and the fixed twin's proof
 * covers every schedule the keyed search runs (no fewer runs than it). */
Test(proofs, reading_the_clock_keys_it_again)
{
	char args[256];

	snprintf(args, sizeof(args), "--dfs-only --seed %s", SEED);
	struct res r = run_env("PTLOOM_STATS=1", args,
			       target("clock_after_merge"));

	assert_exit(r, 1);
	assert_contains(r.out, "ptloom: FAIL crash SIGABRT in T0 (main at "
			       "clock_after_merge.c:", "summary");
	assert_contains(r.err, "started again with the clock", "stats");
	res_free(&r);

	r = RUN(target("clock_after_merge"), "--seed", SEED);
	assert_exit(r, 1);
	replays_exactly(&r, "clock_after_merge.c:");
	res_free(&r);

	struct res a = run_env("PTLOOM_STATS=1", args,
			       target("clock_after_merge_fixed"));
	struct res b = run_env("PTLOOM_STATS=1 PTLOOM_KEY_CLOCK=1", args,
			       target("clock_after_merge_fixed"));

	assert_exit(a, 0);
	assert_exit(b, 0);
	assert_contains(a.out, "complete to preemption bound 2", "summary");
	assert_contains(a.err, "started again with the clock", "stats");
	cr_assert_null(strstr(b.err, "started again"), "%s", b.err);
	cr_assert_geq(runs_of(&a), runs_of(&b));
	res_free(&a);
	res_free(&b);
}

/* Where the kernel has no PAGEMAP_SCAN (before Linux 6.7: Debian 12's
 * 6.1) a state key finds the program's pages in memory by reading
 * pagemap instead: the same pages, so the same keys, the same pruned runs
 * and the same search (PTLOOM_PAGEMAP_READ=1 reads it so on any kernel).
 * mutex_condvar's search prunes by the state cache (about 230 of its first
 * 400 runs), and its alternatives differ in memory. */
Test(proofs, state_keys_the_same_with_or_without_the_kernels_page_scan)
{
	char args[256];

	snprintf(args, sizeof(args), "--dfs-only -n 600 --seed %s", SEED);
	struct res a = run_env("PTLOOM_STATS=1", args,
			       example("mutex_condvar"));
	struct res b = run_env("PTLOOM_STATS=1 PTLOOM_PAGEMAP_READ=1", args,
			       example("mutex_condvar"));
	char *da = line_with(a.err, "ptloom: trace digest ");
	char *db = line_with(b.err, "ptloom: trace digest ");
	/* "ptloom: 600 runs, M pruned, ..." (it needs more to complete) */
	char *pa = line_with(a.err, "ptloom: 600 runs, ");
	char *pb = line_with(b.err, "ptloom: 600 runs, ");

	cr_assert_not_null(da, "%s", a.err);
	cr_assert_not_null(pa, "%s", a.err);
	cr_assert_not_null(db, "%s", b.err);
	cr_assert_not_null(pb, "%s", b.err);
	cr_assert_str_eq(da, db);
	cr_assert_eq(strncmp(pa, pb, strcspn(pa, "d") + 1), 0, "%s\n%s", pa,
		     pb);
	cr_assert_eq(a.code, b.code);
	cr_assert_str_eq(summary(&a), summary(&b));
	free(da);
	free(db);
	free(pa);
	free(pb);
	res_free(&a);
	res_free(&b);
}
