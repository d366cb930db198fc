/*
 * Each failed test's name and failed assertions once more after the run,
 * for the integration and real programs' test binaries: with --filter,
 * Criterion lists every other suite's tests as skipped after a failure,
 * and a runner that keeps a failed test's last lines (meson: 100) would
 * show only those.  A message's first 30 lines.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	if (!stats->tests_failed && !stats->tests_crashed)
		return;
	fprintf(stderr, "failed, again:\n");
	for (struct criterion_suite_stats *s = stats->suites; s; s = s->next)
		for (struct criterion_test_stats *t = s->tests; t;
		     t = t->next) {
			if (t->test_status != CR_STATUS_FAILED)
				continue;
			fprintf(stderr, "  %s::%s%s%s\n", t->test->category,
				t->test->name,
				t->crashed ? " (crashed)" : "",
				t->timed_out ? " (timed out)" : "");
			for (struct criterion_assert_stats *a = t->asserts;
			     a; a = a->next) {
				const char *m = a->message ? a->message : "";
				int lines = 0;

				if (a->passed)
					continue;
				fprintf(stderr, "    %s:%u: ",
					a->file ? a->file : "?", a->line);
				for (const char *p = m; *p && lines < 30; p++) {
					fputc(*p, stderr);
					lines += *p == '\n';
				}
				fputc('\n', stderr);
			}
		}
}
