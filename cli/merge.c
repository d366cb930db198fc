/*
 * ptloom merge: one verdict from the JSON reports of `ptloom run --shard
 * K/N` runs (a CI matrix, a Slurm array, a Kubernetes indexed Job).
 *
 * PASS only when every shard 1..N is there, passed and (dfs) is complete;
 * a failure wins over everything, and of several failures the first in
 * the serial search's order (the bound, then the bound-1 item it lies
 * under: the shard's failure_key), then the lowest shard.  A missing
 * shard is INCOMPLETE, never a pass.  Reports are parsed with json-c.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../analysis/coverage.h"
#include "../analysis/report.h"

static void usage(FILE *f)
{
	fputs("usage: ptloom merge [--report FILE] [--report-format "
	      "json|markdown|junit|sarif] REPORT...\n"
	      "\n"
	      "Combines the JSON reports of `ptloom run --shard K/N` into one "
	      "verdict:\n"
	      "PASS only when every shard 1..N passed (dfs: complete); the "
	      "first failure\n"
	      "in the serial order (bound, then item), then the lowest "
	      "shard, otherwise.\n"
	      "\n"
	      "exit: 0 pass, 1 failure, 2 usage/input error, 3 incomplete (a "
	      "missing shard\n"
	      "or a budget: not a pass)\n",
	      f);
}

struct shard {
	const char *path;
	json_object *root;
	const char *verdict, *strategy, *program, *summary;
	int index, count, bound;
	bool complete;
	uint64_t runs, seed, key, bound0;
};

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool num_of(json_object *o, const char *key, uint64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_uint64(v);
	return true;
}

static int load(struct shard *s, const char *path)
{
	uint64_t v;
	json_object *sh, *c;

	memset(s, 0, sizeof(*s));
	s->path = path;
	s->root = json_object_from_file(path);
	if (!s->root || !json_object_is_type(s->root, json_type_object)) {
		fprintf(stderr, "ptloom: %s: not a ptloom JSON report (%s)\n",
			path, json_util_get_last_err());
		return -1;
	}
	s->verdict = str_of(s->root, "verdict");
	s->strategy = str_of(s->root, "strategy");
	s->program = str_of(s->root, "program");
	s->summary = str_of(s->root, "summary");
	if (!s->verdict || !s->strategy || !num_of(s->root, "runs", &s->runs) ||
	    !num_of(s->root, "seed", &s->seed) ||
	    !num_of(s->root, "preemption_bound", &v)) {
		fprintf(stderr, "ptloom: %s: a report without verdict, "
				"strategy, runs, seed or bound\n",
			path);
		return -1;
	}
	s->bound = (int)v;
	s->complete = json_object_object_get_ex(s->root, "complete", &c) &&
		      json_object_get_boolean(c);
	s->index = s->count = 1;
	if (json_object_object_get_ex(s->root, "shard", &sh)) {
		uint64_t i, n;

		if (!num_of(sh, "index", &i) || !num_of(sh, "count", &n) ||
		    !n || !i || i > n || n > 100000) {
			fprintf(stderr, "ptloom: %s: a bad shard object\n",
				path);
			return -1;
		}
		s->index = (int)i;
		s->count = (int)n;
		num_of(sh, "failure_key", &s->key);
		num_of(sh, "bound0_runs", &s->bound0);
	}
	return 0;
}

static const char *failure_str(const struct shard *s, const char *key)
{
	json_object *f;

	if (!json_object_object_get_ex(s->root, "failure", &f) ||
	    !json_object_is_type(f, json_type_object))
		return NULL;
	return str_of(f, key);
}

/* Every shard that is not a pass stopped at a budget only (its search
 * was not exhausted), none at a per-run limit or an interrupt. */
static bool budget_only(const struct shard *sh, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(sh[i].verdict, "pass") &&
		    (strcmp(sh[i].verdict, "incomplete") || !sh[i].summary ||
		     !strstr(sh[i].summary, " not exhausted; no failure")))
			return false;
	return true;
}

/* A pair of a shard's coverage.pair_list: 0, or -1 if malformed. */
static int pair_of(json_object *e, struct cov_pair *p, const char **wa,
		   const char **wb)
{
	const char *ka = str_of(e, "key_a"), *kb = str_of(e, "key_b");
	uint64_t seen;
	char *end;

	if (!ka || !kb || !num_of(e, "seen", &seen) || seen < 1 || seen > 3)
		return -1;
	p->a = strtoull(ka, &end, 16);
	if (*end)
		return -1;
	p->b = strtoull(kb, &end, 16);
	if (*end)
		return -1;
	p->seen = (uint8_t)seen;
	p->what = (uint8_t)coverage_what_of(str_of(e, "object"));
	*wa = str_of(e, "a");
	*wb = str_of(e, "b");
	return 0;
}

/*
 * The union of the shards' conflicting pairs (each report lists every
 * pair it saw with its code keys): *list gets them with their names.
 * Returns the count, or -1 when a report has no coverage (an older
 * ptloom's) or a malformed one.
 */
static int merge_coverage(struct shard *sh, int n, struct coverage *cov,
			  struct report_pair **list, double *minc)
{
	struct cov_pair *ps = NULL;
	size_t np;

	*list = NULL;
	*minc = 0;
	for (int i = 0; i < n; i++) {
		json_object *c, *l, *m;

		if (!json_object_object_get_ex(sh[i].root, "coverage", &c) ||
		    !json_object_object_get_ex(c, "pair_list", &l) ||
		    !json_object_is_type(l, json_type_array))
			return -1;
		if (json_object_object_get_ex(c, "min_coverage", &m) &&
		    json_object_is_type(m, json_type_double))
			*minc = json_object_get_double(m);
		else if (m && json_object_is_type(m, json_type_int))
			*minc = (double)json_object_get_int(m);
		for (size_t k = 0; k < json_object_array_length(l); k++) {
			struct cov_pair p;
			const char *wa, *wb;

			if (pair_of(json_object_array_get_idx(l, k), &p, &wa,
				    &wb))
				return -1;
			coverage_add_pair(cov, &p);
		}
	}
	np = coverage_list(cov, &ps);
	*list = calloc(np + 1, sizeof(**list));
	if (!*list) {
		free(ps);
		return -1;
	}
	for (size_t j = 0; j < np; j++) {
		struct report_pair *r = &(*list)[j];

		*r = (struct report_pair){ ps[j].a, ps[j].b, "?", "?",
					   coverage_what_name(ps[j].what),
					   ps[j].seen };
		/* the names any shard gave them */
		for (int i = 0; i < n && r->where_a[0] == '?'; i++) {
			json_object *c, *l;

			json_object_object_get_ex(sh[i].root, "coverage", &c);
			json_object_object_get_ex(c, "pair_list", &l);
			for (size_t k = 0; k < json_object_array_length(l);
			     k++) {
				struct cov_pair p;
				const char *wa, *wb;

				if (!pair_of(json_object_array_get_idx(l, k),
					     &p, &wa, &wb) &&
				    p.a == r->a && p.b == r->b && wa && wb) {
					r->where_a = wa;
					r->where_b = wb;
					break;
				}
			}
		}
	}
	free(ps);
	return (int)np;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "report", required_argument, 0, 'R' },
		{ "report-format", required_argument, 0, 'F' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *report = NULL, *format = "json";
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'R':
			report = optarg;
			break;
		case 'F':
			if (strcmp(optarg, "json") && strcmp(optarg, "markdown") &&
			    strcmp(optarg, "junit") && strcmp(optarg, "sarif")) {
				fprintf(stderr, "ptloom: --report-format is "
						"json, markdown, junit or "
						"sarif\n");
				return EXIT_USAGE;
			}
			format = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_PASS;
		default:
			fprintf(stderr, "ptloom: see ptloom merge --help\n");
			return EXIT_USAGE;
		}
	}
	int n = argc - optind;

	if (n < 1) {
		fprintf(stderr, "ptloom: merge needs at least one report "
				"(see ptloom merge --help)\n");
		return EXIT_USAGE;
	}
	struct shard *sh = calloc((size_t)n, sizeof(*sh));
	int code = EXIT_USAGE;

	if (!sh)
		return EXIT_USAGE;
	for (int i = 0; i < n; i++)
		if (load(&sh[i], argv[optind + i]))
			goto out_free;
	int count = sh[0].count;
	char *seen = calloc((size_t)count + 1, 1);

	if (!seen)
		goto out_free;
	for (int i = 0; i < n; i++) {
		struct shard *s = &sh[i];

		if (s->count != count || strcmp(s->strategy, sh[0].strategy) ||
		    s->seed != sh[0].seed || s->bound != sh[0].bound ||
		    (s->program && sh[0].program &&
		     strcmp(s->program, sh[0].program))) {
			fprintf(stderr, "ptloom: %s is not a shard of the same "
					"exploration as %s (program, strategy, "
					"seed, bound and shard count must "
					"agree)\n",
				s->path, sh[0].path);
			goto out_seen;
		}
		if (seen[s->index]) {
			fprintf(stderr, "ptloom: shard %d/%d is given twice "
					"(%s)\n",
				s->index, count, s->path);
			goto out_seen;
		}
		seen[s->index] = 1;
	}

	/* the verdict */
	int win = -1, missing = 0, errors = 0, incomplete = 0;
	uint64_t runs = 0;
	bool dfs = !strcmp(sh[0].strategy, "dfs");

	for (int k = 1; k <= count; k++)
		missing += !seen[k];
	for (int i = 0; i < n; i++) {
		struct shard *s = &sh[i];

		runs += s->runs - (dfs && s->index > 1 ? s->bound0 : 0);
		if (!strcmp(s->verdict, "fail")) {
			if (win < 0 || s->key < sh[win].key ||
			    (s->key == sh[win].key &&
			     s->index < sh[win].index))
				win = i;
		} else if (!strcmp(s->verdict, "pass")) {
			if (dfs && !s->complete)
				incomplete++;
		} else if (!strcmp(s->verdict, "incomplete")) {
			incomplete++;
		} else {
			errors++;
		}
	}
	char summary[4096];
	struct report rep = {
		.command = "merge",
		.strategy = sh[0].strategy,
		.runs = runs,
		.preemption_bound = sh[0].bound,
		.seed = sh[0].seed,
		.exit_status = -1,
		.thread = -1,
		.diverged_at = -1,
		.program = sh[0].program,
		.summary = summary,
	};

	if (win >= 0) {
		const struct shard *w = &sh[win];
		const char *line = w->summary ? w->summary : "ptloom: FAIL";

		if (!strncmp(line, "ptloom: ", 8))
			line += 8;
		snprintf(summary, sizeof(summary), "ptloom: %s (shard %d/%d)",
			 line, w->index, count);
		rep.verdict = "fail";
		rep.has_failure = true;
		rep.kind = failure_str(w, "kind");
		rep.signal = failure_str(w, "signal");
		rep.location = failure_str(w, "location");
		rep.message = failure_str(w, "message");
		rep.schedule_file = str_of(w->root, "schedule_file");
		rep.minimized_file = str_of(w->root, "minimized_file");
		rep.replay_command = str_of(w->root, "replay_command");
		code = EXIT_FAIL;
	} else if (errors) {
		snprintf(summary, sizeof(summary),
			 "ptloom: ERROR %d of %d shard reports say the "
			 "exploration did not run",
			 errors, count);
		rep.verdict = "error";
		code = EXIT_USAGE;
	} else if (missing || incomplete) {
		char which[512] = "";
		size_t k = 0;

		for (int i = 1; i <= count && k < sizeof(which) - 16; i++)
			if (!seen[i])
				k += (size_t)snprintf(which + k,
						      sizeof(which) - k,
						      "%s%d", k ? "," : "", i);
		if (missing)
			snprintf(summary, sizeof(summary),
				 "ptloom: INCOMPLETE %llu runs in %d of %d "
				 "shards; shard%s %s missing (a limit is not "
				 "a pass)",
				 (unsigned long long)runs, n, count,
				 missing == 1 ? "" : "s", which);
		else
			snprintf(summary, sizeof(summary),
				 "ptloom: INCOMPLETE %llu runs, %d of %d "
				 "shards not exhausted; no failure found (a "
				 "limit is not a pass)",
				 (unsigned long long)runs, incomplete, count);
		rep.verdict = "incomplete";
		code = EXIT_INCOMPLETE;
	} else {
		if (dfs)
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %llu run%s, complete to "
				 "preemption bound %d (%d shard%s)",
				 (unsigned long long)runs, runs == 1 ? "" : "s",
				 sh[0].bound, count, count == 1 ? "" : "s");
		else
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %llu run%s (%s, sampled, not "
				 "exhaustive; %d shard%s)",
				 (unsigned long long)runs, runs == 1 ? "" : "s",
				 sh[0].strategy, count, count == 1 ? "" : "s");
		rep.verdict = "pass";
		rep.complete = dfs;
		code = EXIT_PASS;
	}
	/* coverage: the union of the shards' pairs */
	struct coverage *cov = coverage_new();
	struct report_pair *cl = NULL;
	double minc = 0;
	int ncl = cov ? merge_coverage(sh, n, cov, &cl, &minc) : -1;

	if (ncl >= 0) {
		char text[1536];
		bool ok = coverage_ratio(cov) >= minc;

		rep.has_coverage = true;
		rep.cov_pairs = coverage_pairs(cov);
		rep.cov_covered = coverage_covered(cov);
		rep.cov_list = cl;
		rep.ncov_list = (size_t)ncl;
		rep.min_coverage = minc;
		rep.cov_reached = minc > 0 && ok;
		if (minc > 0 && code == EXIT_PASS && !ok) {
			char was[sizeof(summary)];

			snprintf(was, sizeof(was), "%s",
				 summary + strlen("ptloom: PASS"));
			snprintf(summary, sizeof(summary),
				 "ptloom: INCOMPLETE%s, below --min-coverage %g",
				 was, minc);
			rep.verdict = "incomplete";
			code = EXIT_INCOMPLETE;
		} else if (minc > 0 && code == EXIT_INCOMPLETE && ok &&
			   !missing && budget_only(sh, n)) {
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %llu runs, --min-coverage %g "
				 "reached (%d shards)",
				 (unsigned long long)runs, minc, count);
			rep.verdict = "pass";
			code = EXIT_PASS;
		}
		cli_coverage_text(text, sizeof(text), cl, (size_t)ncl,
				  rep.cov_pairs, rep.cov_covered,
				  win < 0);
		size_t k = strlen(summary);

		snprintf(summary + k, sizeof(summary) - k, "; %s", text);
	}
	if (rep.replay_command)
		printf("replay: %s\n", rep.replay_command);
	printf("%s\n", summary);
	if (report && report_write(&rep, format, report)) {
		fprintf(stderr, "ptloom: cannot write %s: %s\n", report,
			strerror(errno));
		code = EXIT_USAGE;
	}
	free(cl);
	coverage_free(cov);
out_seen:
	free(seen);
out_free:
	for (int i = 0; i < n; i++)
		if (sh[i].root)
			json_object_put(sh[i].root);
	free(sh);
	return code;
}
