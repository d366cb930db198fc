/*
 * Coverage in a verdict (analysis/coverage.h): the pairs of an exploration
 * named by one more run, and the words the summary line gives them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include "cli.h"
#include "../analysis/coverage.h"
#include "../analysis/escape.h"
#include "../analysis/report.h"
#include "../analysis/strategy.h"

static const char *name_of(const struct run_result *r, uint64_t key,
			   char *buf, size_t len)
{
	for (size_t i = 0; r && i < r->nsyms; i++)
		if (r->syms[i].addr == key && !r->syms[i].data &&
		    r->syms[i].text && r->syms[i].text[0])
			return r->syms[i].text;
	snprintf(buf, len, "0x%llx", (unsigned long long)(EVENT_ADDR(key) - 1));
	return buf;
}

int cli_coverage_pairs(struct session_config *cfg, const struct coverage *c,
		       const struct run_result *like,
		       struct report_pair **out, char **names)
{
	struct cov_pair *ps = NULL;
	uint64_t *keys = NULL;
	size_t n = coverage_list(c, &ps), nk = coverage_keys(c, &keys);
	struct run_result named;
	bool have = false;

	*out = NULL;
	*names = NULL;
	if (!n) {
		free(keys);
		return 0;
	}
	if (nk) {
		/* one more run, any schedule (lenient: a passing run's),
		 * naming every pair's code while the program is alive
		 * (within cfg's time bound, if any: a run it stops names
		 * what it met) */
		struct replay_strategy rs;
		struct session_config k = *cfg;

		replay_init(&rs, like ? like->decisions : NULL,
			    like ? like->ndecisions : 0, false);
		struct strategy s = replay_strategy(&rs);

		k.symbolize_trace = true;
		k.name_code = keys;
		k.nname_code = nk;
		k.spin_ms = 0;
		k.pass_output = false;
		have = session_run(&k, &s, &named) == 0;
	}
	/* the names, escaped, in one block: [2 * i] and [2 * i + 1] */
	size_t cap = n * 2 * (LOC_MAX + 1);
	char *text = calloc(1, cap), *p = text;
	struct report_pair *rp = calloc(n, sizeof(*rp));

	if (!text || !rp) {
		free(text);
		free(rp);
		free(ps);
		free(keys);
		if (have)
			run_result_free(&named);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char raw[64];
		const char *w[2] = {
			name_of(have ? &named : NULL, ps[i].a, raw, sizeof(raw)),
			NULL
		};

		esc_text(p, LOC_MAX, w[0], 0);
		rp[i].where_a = p;
		p += strlen(p) + 1;
		w[1] = name_of(have ? &named : NULL, ps[i].b, raw, sizeof(raw));
		esc_text(p, LOC_MAX, w[1], 0);
		rp[i].where_b = p;
		p += strlen(p) + 1;
		rp[i].a = ps[i].a;
		rp[i].b = ps[i].b;
		rp[i].seen = ps[i].seen;
		rp[i].what = coverage_what_name(ps[i].what);
	}
	if (have)
		run_result_free(&named);
	free(ps);
	free(keys);
	*out = rp;
	*names = text;
	return (int)n;
}

void cli_coverage_text(char *buf, size_t len, const struct report_pair *ps,
		       size_t n, uint64_t pairs, uint64_t covered, bool list)
{
	size_t off, shown = 0;

	snprintf(buf, len, "%llu of %llu conflicting pair%s seen in both "
			   "orders",
		 (unsigned long long)covered, (unsigned long long)pairs,
		 pairs == 1 ? "" : "s");
	if (!list || covered == pairs)
		return;
	off = strlen(buf);
	bool any = false;

	for (size_t i = 0; i < n && !any; i++)
		any = ps[i].seen != 3;
	if (!any) {
		/* no names to show (an interrupted exploration names none):
		 * no empty list before "and N more" */
		snprintf(buf + off, len - off,
			 "; the %llu not: --report lists them",
			 (unsigned long long)(pairs - covered));
		return;
	}
	snprintf(buf + off, len - off, "; the %llu not:",
		 (unsigned long long)(pairs - covered));
	for (size_t i = 0; i < n && shown < 3; i++) {
		if (ps[i].seen == 3)
			continue;
		off = strlen(buf);
		snprintf(buf + off, len - off, "%s %s / %s (%s)",
			 shown ? "," : "", ps[i].where_a, ps[i].where_b,
			 ps[i].what);
		shown++;
	}
	off = strlen(buf);
	if (pairs - covered > shown)
		snprintf(buf + off, len - off,
			 ", and %llu more (--report lists them)",
			 (unsigned long long)(pairs - covered - shown));
}

int cli_coverage_to_schedule(struct schedule *s, const struct report_pair *ps,
			     size_t n, uint64_t pairs, uint64_t covered)
{
	size_t k = 0, cap = 0;

	if (covered > pairs)
		return 0; /* nothing sane to record */
	for (size_t i = 0; i < n; i++)
		cap += ps[i].seen != 3;
	if (cap > pairs - covered)
		cap = (size_t)(pairs - covered);
	if (cap > SCHEDULE_MAX_COVERAGE)
		cap = SCHEDULE_MAX_COVERAGE;
	struct schedule_pair *u = calloc(cap ? cap : 1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	for (size_t i = 0; i < n && k < cap; i++) {
		const struct report_pair *p = &ps[i];

		if (p->seen == 3 || p->a > p->b)
			continue;
		u[k].a = p->a;
		u[k].b = p->b;
		u[k].seen = (uint8_t)(p->seen & 3);
		u[k].what = (uint8_t)coverage_what_of(p->what);
		u[k].where_a = strdup(p->where_a ? p->where_a : "");
		u[k].where_b = strdup(p->where_b ? p->where_b : "");
		if (!u[k].what || !u[k].where_a || !u[k].where_b) {
			free(u[k].where_a);
			free(u[k].where_b);
			if (!u[k].what)
				continue; /* an unknown kind: left out */
			for (size_t j = 0; j < k; j++) {
				free(u[j].where_a);
				free(u[j].where_b);
			}
			free(u);
			return -ENOMEM;
		}
		k++;
	}
	s->cov_pairs = pairs;
	s->cov_covered = covered;
	s->uncovered = u;
	s->nuncovered = k;
	return 0;
}
