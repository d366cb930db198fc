/*
 * coverage: every verdict says how many pairs of conflicting operations
 * were seen and how many of them in both orders, the JSON report lists the
 * pairs not covered with their locations, --min-coverage sets the level a
 * pass needs, and -j and --shard/merge count the same pairs.
 */
#include "common.h"

TestSuite(coverage, .init = setup, .fini = teardown, .timeout = 240);

/* "... N of M conflicting pairs seen in both orders ..." */
static void pairs_of(const char *s, long *n, long *m)
{
	const char *p = strstr(s, " conflicting pair");

	cr_assert(p, "no coverage in \"%s\"", s);
	while (p > s && p[-1] != ';')
		p--;
	cr_assert_eq(sscanf(p, " %ld of %ld", n, m), 2, "\"%s\"", s);
}

/* deadlock_fixed: two threads take two locks in one order; a lock of one
 * right after the other's unlock of the other lock never happens in one
 * of the two orders: pairs left uncovered, named by their lines */
Test(coverage, pass_names_the_pairs_not_seen_in_both_orders)
{
	struct res r = RUN(example("deadlock_fixed"), "--seed", SEED);
	char *s = summary(&r), *j = report();
	long n, m;

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	assert_contains(s, "complete to preemption bound 2; ", "summary");
	pairs_of(s, &n, &m);
	cr_assert(n > 0 && n < m, "%s", s);
	assert_contains(s, "seen in both orders; the ", "summary");
	assert_contains(s, " not: ", "summary");
	assert_contains(s, "deadlock_fixed.c:", "summary");
	cr_assert_eq(json_num(j, "pairs"), m, "%s", j);
	cr_assert_eq(json_num(j, "covered"), n, "%s", j);
	/* the pairs not covered, each with both locations */
	const char *nc = json_raw(j, "not_covered");
	const char *pl = json_raw(j, "pair_list");
	long listed = 0;

	cr_assert(nc && pl && nc < pl, "%s", j);
	for (const char *p = nc; (p = strstr(p, "\"a\": ")) && p < pl; p++) {
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "}"), p);
		assert_contains(line, "deadlock_fixed.c:", "a pair");
		assert_contains(line, "\"b\": ", "a pair");
		assert_contains(line, "\"object\": \"lock\"", "a pair");
		listed++;
	}
	cr_assert_eq(listed, m - n, "%s", j);
	free(s);
	free(j);
	res_free(&r);
}

Test(coverage, sampled_pass_and_failure_say_it)
{
	struct res r = RUN(example("bank_fixed"), "-s", "random", "-n", "40",
			   "--seed", SEED);
	char *s = summary(&r);
	long n, m;

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 40 runs (random, sampled, not "
			   "exhaustive); ");
	pairs_of(s, &n, &m);
	cr_assert(m > 0, "%s", s);
	free(s);
	res_free(&r);

	r = RUN(example("bank"), "--seed", SEED, "--no-minimize");
	s = summary(&r);
	char *j = report();

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL");
	pairs_of(s, &n, &m);
	cr_assert(m > 0, "%s", s);
	cr_assert_eq(json_num(j, "pairs"), m, "%s", j);
	free(j);
	free(s);
	res_free(&r);
}

/* racy locations found by race discovery are pairs too */
Test(coverage, racy_locations_are_pairs)
{
	struct res r = RUN(target("counter_race"), "--seed", SEED,
			   "--no-minimize");
	char *j = report();

	assert_exit(r, 1);
	assert_contains(j, "\"object\": \"memory\"", "report");
	assert_contains(j, "counter_race.c:", "report");
	free(j);
	res_free(&r);
}

Test(coverage, incomplete_dfs_says_it)
{
	struct res r = RUN(example("join_many"), "-n", "30", "--seed", SEED);
	char *s = summary(&r);
	long n, m;

	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE 30 runs, bound 0 not exhausted");
	pairs_of(s, &n, &m);
	cr_assert(m > 0 && n <= m, "%s", s);
	free(s);
	res_free(&r);
}

Test(coverage, min_coverage_reached_is_a_pass)
{
	/* join_many never completes bound 0 in a test's time, but its few
	 * pairs are seen in both orders within its first runs */
	struct res r = RUN(example("join_many"), "--min-coverage", "1",
			   "--seed", SEED);
	char *j = report();

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(r.out, "--min-coverage 1 reached (preemption bound 0 "
			       "not exhausted)", "summary");
	assert_json(j, "verdict", "pass");
	assert_json(j, "reached", "true");
	cr_assert_lt(json_num(j, "runs"), 10000);
	free(j);
	res_free(&r);
}

Test(coverage, min_coverage_not_reached_goes_on_to_the_budget)
{
	/* deadlock_fixed completes bound 2 in a few hundred runs and never
	 * sees some pairs in both orders: the samples go on to -n */
	struct res r = RUN(example("deadlock_fixed"), "--min-coverage", "1",
			   "-n", "500", "--seed", SEED);
	char *j = report();

	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE 500 runs, complete to "
			   "preemption bound 2, below --min-coverage 1; ");
	assert_json(j, "verdict", "incomplete");
	assert_json(j, "reached", "false");
	free(j);
	res_free(&r);
}

Test(coverage, bad_min_coverage_is_a_usage_error)
{
	const char *bad[] = { "0", "1.5", "-0.2", "x", "0.5x", "" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct res r = RUN(example("bank_fixed"), "--min-coverage",
				   bad[i]);

		assert_contains(r.err, "--min-coverage", "stderr");
		one_line_usage_error(r); /* frees r */
	}
}

/* The same pairs serially, with -j 2, and as two shards merged. */
Test(coverage, same_count_under_jobs_and_shards)
{
	const char *p = example("lost_wakeup_fixed");
	struct res a = RUN(p, "--dfs-only", "--no-state-cache", "--seed", SEED);
	struct res b = RUN(p, "--dfs-only", "-j", "2", "--seed", SEED);
	char *sa = summary(&a), *sb = summary(&b);
	long n[4], m[4];

	assert_exit(a, 0);
	assert_exit(b, 0);
	pairs_of(sa, &n[0], &m[0]);
	pairs_of(sb, &n[1], &m[1]);
	cr_assert(n[0] == n[1] && m[0] == m[1], "serial: %s\n-j 2: %s", sa,
		  sb);
	cr_assert_gt(m[0], 1);

	char *r1 = in_tmp("s1.json"), *r2 = in_tmp("s2.json");
	char *o = in_tmp("out");

	for (int k = 1; k <= 2; k++) {
		char part[8];
		char *argv[] = { (char *)ptloom(), "run", "-q", "-o", o,
				 "--report", k == 1 ? r1 : r2, "--dfs-only",
				 "--seed", SEED, "--shard", part, "--",
				 (char *)p, NULL };

		snprintf(part, sizeof(part), "%d/2", k);
		struct res s = run_argv(argv, NULL, CMD_TIMEOUT);

		assert_exit(s, 0);
		res_free(&s);
	}
	struct res mg = PTL("merge", r1, r2);
	char *sm = summary(&mg);

	assert_exit(mg, 0);
	pairs_of(sm, &n[2], &m[2]);
	cr_assert(n[2] == n[0] && m[2] == m[0], "serial: %s\nmerge: %s", sa,
		  sm);
	/* a lone shard need not see them all; the merge has their union */
	char *j1 = slurp(r1);

	cr_assert_leq(json_num(j1, "pairs"), m[0]);
	free(j1);
	free(sa);
	free(sb);
	free(sm);
	res_free(&a);
	res_free(&b);
	res_free(&mg);
}

/* A count of needle in hay. */
static long count_of(const char *hay, const char *needle)
{
	long n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The saved failure carries the exploration's coverage: `show` names the
 * pairs not covered, and the html page lists them and rings the steps that
 * are one end of one; the numbers are the run's summary's. */
Test(coverage, show_marks_the_pairs_not_covered)
{
	struct found f = find(example("deadlock"));
	long covered = json_num(f.report, "covered"),
		   pairs = json_num(f.report, "pairs");
	char want[128];

	cr_assert(pairs > covered, "%s", f.report);
	snprintf(want, sizeof(want), "coverage when saved: %ld of %ld "
				     "conflicting pairs seen in both orders",
		 covered, pairs);
	const char *files[] = { f.original, f.minimized };

	for (int k = 0; k < 2; k++) {
		if (!files[k])
			continue;
		struct res t = PTL("show", files[k]);

		assert_exit(t, 0);
		assert_contains(t.out, want, "show");
		cr_assert_eq(count_of(t.out, "  not covered: "), pairs - covered,
			     "%s", t.out);
		assert_contains(t.out, "deadlock.c:", "show");
		res_free(&t);

		struct res h = PTL("show", "--format", "html", files[k]);

		assert_exit(h, 0);
		assert_contains(h.out, "id=\"coverage\"", "html");
		assert_contains(h.out, want, "html");
		cr_assert_eq(count_of(h.out, "<tr class=\"uncovered\">"),
			     pairs - covered, "%s", h.out);
		/* deadlock.c's steps at those locks are ringed */
		cr_assert_gt(count_of(h.out, " uncovered\" id=\"step-"), 0,
			     "%s", h.out);
		res_free(&h);

		struct res j = PTL("show", "--format", "json", files[k]);

		assert_exit(j, 0);
		cr_assert_eq(json_num(j.out, "pairs"), pairs, "%s", j.out);
		cr_assert_eq(json_num(j.out, "covered"), covered, "%s", j.out);
		res_free(&j);
	}
	found_free(&f);

	/* a file from before (no coverage recorded) shows none */
	char old[PATH_MAX];

	snprintf(old, sizeof(old), "%s/valid-full.pb",
		 env_or("PTLOOM_CORPUS", "tests/corpus"));
	struct res o = PTL("show", "--format", "html", old);

	assert_exit(o, 0);
	cr_assert_null(strstr(o.out, "id=\"coverage\""), "%s", o.out);
	cr_assert_null(strstr(o.out, " uncovered"), "%s", o.out);
	res_free(&o);
}
