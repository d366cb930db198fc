/*
 * Reports: see report.h.  Every file is written to a temporary file in the
 * same directory and renamed, so a reader never sees half a report.
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "escape.h"
#include "report.h"

void json_string(FILE *f, const char *s)
{
	esc_json(f, s);
}

void report_json_threads(FILE *f, const char *const *bts,
			 const char *const *names, int n, const char *indent)
{
	fprintf(f, "[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s\n%s  { \"thread\": \"T%d\", \"name\": ",
			i ? "," : "", indent, i);
		json_string(f, names && names[i] && names[i][0] ? names[i]
							       : NULL);
		fprintf(f, ", \"backtrace\": [");
		const char *l = bts && bts[i] ? bts[i] : "";

		for (int k = 0; *l; k++) {
			size_t m = strcspn(l, "\n");
			char *frame = strndup(l, m);

			fprintf(f, "%s", k ? ", " : "");
			json_string(f, frame ? frame : "");
			free(frame);
			l += m + (l[m] == '\n');
		}
		fprintf(f, "] }");
	}
	fprintf(f, "%s%s]", n ? "\n" : "", n ? indent : "");
}

/* "coverage": the pairs not seen in both orders for a reader, and every
 * pair with its keys for `ptloom merge`. */
static void report_json_coverage(FILE *f, const struct report *r)
{
	fprintf(f, ",\n  \"coverage\": {\n    \"pairs\": %llu,\n"
		   "    \"covered\": %llu,\n    \"ratio\": %.4f,\n"
		   "    \"min_coverage\": ",
		(unsigned long long)r->cov_pairs,
		(unsigned long long)r->cov_covered,
		r->cov_pairs ? (double)r->cov_covered / (double)r->cov_pairs
			     : 1.0);
	if (r->min_coverage > 0)
		fprintf(f, "%g,\n    \"reached\": %s", r->min_coverage,
			r->cov_reached ? "true" : "false");
	else
		fprintf(f, "null,\n    \"reached\": null");
	for (int pass = 0; pass < 2; pass++) {
		size_t k = 0;

		fprintf(f, ",\n    \"%s\": [",
			pass ? "pair_list" : "not_covered");
		for (size_t i = 0; i < r->ncov_list; i++) {
			const struct report_pair *p = &r->cov_list[i];

			if (!pass && p->seen == 3)
				continue;
			fprintf(f, "%s\n      { \"a\": ", k++ ? "," : "");
			json_string(f, p->where_a);
			fprintf(f, ", \"b\": ");
			json_string(f, p->where_b);
			fprintf(f, ", \"object\": ");
			json_string(f, p->what);
			if (!pass)
				fprintf(f, ", \"seen\": \"%s\" }",
					p->seen == 1 ? "a before b"
						     : "b before a");
			else
				fprintf(f, ", \"key_a\": \"%llx\", "
					   "\"key_b\": \"%llx\", "
					   "\"seen\": %d }",
					(unsigned long long)p->a,
					(unsigned long long)p->b, p->seen);
		}
		fprintf(f, "%s]", k ? "\n    " : "");
	}
	fprintf(f, "\n  }");
}

void report_json(FILE *f, const struct report *r)
{
	fprintf(f, "{\n  \"verdict\": ");
	json_string(f, r->verdict);
	fprintf(f, ",\n  \"command\": ");
	json_string(f, r->command);
	fprintf(f, ",\n  \"program\": ");
	json_string(f, r->program);
	fprintf(f, ",\n  \"strategy\": ");
	json_string(f, r->strategy);
	fprintf(f, ",\n  \"runs\": %llu,\n  \"complete\": %s,\n"
		   "  \"preemption_bound\": %d,\n  \"seed\": %llu,\n"
		   "  \"seconds\": %.3f,\n  \"summary\": ",
		(unsigned long long)r->runs, r->complete ? "true" : "false",
		r->preemption_bound, (unsigned long long)r->seed, r->seconds);
	json_string(f, r->summary);
	fprintf(f, ",\n  \"interrupted\": %s", r->interrupted ? "true" : "false");
	fprintf(f, ",\n  \"failure\": ");
	if (r->has_failure) {
		fprintf(f, "{\n    \"kind\": ");
		json_string(f, r->kind);
		fprintf(f, ",\n    \"signal\": ");
		json_string(f, r->signal);
		if (r->exit_status >= 0)
			fprintf(f, ",\n    \"exit_status\": %d",
				r->exit_status);
		else
			fprintf(f, ",\n    \"exit_status\": null");
		if (r->thread >= 0)
			fprintf(f, ",\n    \"thread\": \"T%d\"", r->thread);
		else
			fprintf(f, ",\n    \"thread\": null");
		fprintf(f, ",\n    \"location\": ");
		json_string(f, r->location);
		fprintf(f, ",\n    \"message\": ");
		json_string(f, r->message);
		fprintf(f, ",\n    \"output\": ");
		json_string(f, r->output);
		fprintf(f, ",\n    \"preemptions\": %d,\n    \"departure\": ",
			r->preemptions);
		json_string(f, r->departure);
		fprintf(f, ",\n    \"threads\": ");
		report_json_threads(f, r->backtraces, r->thread_names,
				    r->nthreads, "    ");
		fprintf(f, "\n  }");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"schedule_file\": ");
	json_string(f, r->schedule_file);
	fprintf(f, ",\n  \"minimized_file\": ");
	json_string(f, r->minimized_file);
	fprintf(f, ",\n  \"minimized\": ");
	json_string(f, r->minimized_note);
	if (r->minimum_proven)
		fprintf(f, ",\n  \"minimum_proven\": %s",
			r->minimum_proven == 2 ? "true" : "false");
	fprintf(f, ",\n  \"replay_command\": ");
	json_string(f, r->replay_command);
	if (r->nshards)
		fprintf(f, ",\n  \"shard\": { \"index\": %d, \"count\": %d, "
			   "\"failure_key\": %llu, \"bound0_runs\": %llu }",
			r->shard, r->nshards, (unsigned long long)r->fail_key,
			(unsigned long long)r->bound0_runs);
	if (r->ntests) {
		fprintf(f, ",\n  \"tests\": [");
		for (int i = 0; i < r->ntests; i++) {
			const struct report_test *t = &r->tests[i];
			static const char *const keys[] = {
				"name",	    "verdict",	     "summary",
				"command",  "cwd",	     "rule",
				"replay_command", "schedule_file", "kind",
				"location", "message",	     "output",
				"in_runner",
			};
			const char *vals[] = {
				t->name,     t->verdict,	t->summary,
				t->command,  t->cwd,		t->rule,
				t->replay_command, t->schedule_file, t->kind,
				t->location, t->message,	t->output,
				t->in_runner,
			};

			fprintf(f, "%s\n    {", i ? "," : "");
			for (size_t k = 0; k < sizeof(keys) / sizeof(*keys);
			     k++) {
				fprintf(f, "%s\n      \"%s\": ", k ? "," : "",
					keys[k]);
				json_string(f, vals[k]);
			}
			fprintf(f, ",\n      \"runs\": %llu,\n      "
				   "\"seconds\": %.3f\n    }",
				(unsigned long long)t->runs, t->seconds);
		}
		fprintf(f, "\n  ]");
	}
	if (r->runner_command) {
		fprintf(f, ",\n  \"runner\": { \"command\": ");
		json_string(f, r->runner_command);
		if (r->runner_exit >= 0)
			fprintf(f, ", \"exit_status\": %d", r->runner_exit);
		else
			fprintf(f, ", \"exit_status\": null");
		fprintf(f, ", \"output\": ");
		json_string(f, r->runner_output);
		fprintf(f, " }");
	}
	if (r->has_replay) {
		fprintf(f, ",\n  \"replay\": { \"exact\": %s, \"trace_hash\": ",
			r->exact ? "true" : "false");
		json_string(f, r->trace_hash);
		if (r->diverged_at >= 0)
			fprintf(f, ", \"diverged_at\": %ld", r->diverged_at);
		else
			fprintf(f, ", \"diverged_at\": null");
		fprintf(f, ", \"divergence\": ");
		json_string(f, r->divergence);
		fprintf(f, " }");
	}
	if (r->has_coverage)
		report_json_coverage(f, r);
	fprintf(f, ",\n  \"warnings\": [");
	for (size_t i = 0; i < r->nwarnings; i++) {
		const struct report_warning *w = &r->warnings[i];

		fprintf(f, "%s\n    { \"kind\": ", i ? "," : "");
		json_string(f, w->kind);
		fprintf(f, ", \"process\": ");
		json_string(f, w->process);
		fprintf(f, ", \"signal\": ");
		json_string(f, w->signal);
		fprintf(f, ", \"location\": ");
		json_string(f, w->location);
		fprintf(f, ", \"runs\": %llu, \"message\": ",
			(unsigned long long)w->runs);
		json_string(f, w->message);
		fprintf(f, ", \"schedule_file\": ");
		json_string(f, w->schedule_file);
		fprintf(f, ", \"replay_command\": ");
		json_string(f, w->replay_command);
		fprintf(f, " }");
	}
	fprintf(f, "%s]", r->nwarnings ? "\n  " : "");
	fprintf(f, "\n}\n");
}

/* The longest run of backticks in s: a fence must be longer. */
static size_t max_ticks(const char *s)
{
	size_t best = 0, run = 0;

	for (; s && *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

/* Untrusted text in a fenced block: escaped, and fenced so that no line of
 * it can close the block. */
static void md_block(FILE *f, const char *s)
{
	size_t n = max_ticks(s) + 1;

	if (n < 3)
		n = 3;
	for (size_t i = 0; i < n; i++)
		fputc('`', f);
	fputc('\n', f);
	esc_fputs(f, s, ESC_LINES);
	if (!s[0] || s[strlen(s) - 1] != '\n')
		fputc('\n', f);
	for (size_t i = 0; i < n; i++)
		fputc('`', f);
	fputc('\n', f);
}

/* Untrusted text as an inline code span (one line, escaped). */
static void md_code(FILE *f, const char *s)
{
	char buf[4096];

	esc_text(buf, sizeof(buf), s ? s : "", 0);
	if (strchr(buf, '`'))
		fprintf(f, "`` %s ``", buf);
	else
		fprintf(f, "`%s`", buf);
}

void report_markdown(FILE *f, const struct report *r)
{
	fprintf(f, "## ptloom %s: %s\n\n", r->command ? r->command : "run",
		r->verdict);
	md_code(f, r->summary);
	fprintf(f, "\n\n");
	fprintf(f, "| | |\n|---|---|\n");
	fprintf(f, "| program | ");
	md_code(f, r->program);
	fprintf(f, " |\n");
	fprintf(f, "| strategy | %s |\n| runs | %llu |\n",
		r->strategy ? r->strategy : "", (unsigned long long)r->runs);
	fprintf(f, "| complete | %s |\n| preemption bound | %d |\n",
		r->complete ? "yes" : "no", r->preemption_bound);
	fprintf(f, "| seed | %llu |\n\n", (unsigned long long)r->seed);
	if (r->ntests) {
		fprintf(f, "### Tests\n\n| test | verdict | runs | summary "
			   "|\n|---|---|---|---|\n");
		for (int i = 0; i < r->ntests; i++) {
			const struct report_test *t = &r->tests[i];

			fprintf(f, "| ");
			md_code(f, t->name);
			fprintf(f, " | %s | %llu | ", t->verdict,
				(unsigned long long)t->runs);
			md_code(f, t->summary);
			fprintf(f, " |\n");
		}
		fprintf(f, "\n");
		for (int i = 0; i < r->ntests; i++)
			if (r->tests[i].replay_command) {
				fprintf(f, "Replay ");
				md_code(f, r->tests[i].name);
				fprintf(f, ":\n\n");
				md_block(f, r->tests[i].replay_command);
				fprintf(f, "\n");
			}
	}
	if (r->has_failure) {
		fprintf(f, "### Failure: %s", r->kind);
		if (r->signal)
			fprintf(f, " %s", r->signal);
		if (r->thread >= 0)
			fprintf(f, " in T%d", r->thread);
		fprintf(f, "\n\n");
		if (r->location && r->location[0]) {
			fprintf(f, "at ");
			md_code(f, r->location);
			fprintf(f, ", %d preemption%s\n\n", r->preemptions,
				r->preemptions == 1 ? "" : "s");
		}
		if (r->message && r->message[0])
			md_block(f, r->message);
		if (r->output && r->output[0]) {
			fprintf(f, "\nOutput (tail):\n\n");
			md_block(f, r->output);
		}
		if (r->departure && r->departure[0]) {
			fprintf(f, "\nFirst departure from the last passing "
				   "run:\n\n");
			md_block(f, r->departure);
		}
		bool any = false;

		for (int i = 0; r->backtraces && i < r->nthreads; i++)
			any |= r->backtraces[i] && r->backtraces[i][0];
		if (any) {
			fprintf(f, "\n<details><summary>Threads at the "
				   "failure</summary>\n\n");
			for (int i = 0; i < r->nthreads; i++) {
				fprintf(f, "T%d:\n\n", i);
				md_block(f, r->backtraces[i] &&
						    r->backtraces[i][0]
						    ? r->backtraces[i]
						    : "(no stack: exited or "
						      "running)");
			}
			fprintf(f, "\n</details>\n");
		}
	}
	if (r->replay_command) {
		fprintf(f, "\nReplay:\n\n");
		md_block(f, r->replay_command);
	}
	if (r->has_replay)
		fprintf(f, "\nReplay exact: %s, trace hash `%s`%s%s\n",
			r->exact ? "yes" : "no",
			r->trace_hash ? r->trace_hash : "",
			r->divergence ? "; " : "",
			r->divergence ? esc(r->divergence) : "");
}

/* report_junit(): analysis/report_ci.c */

int make_dirs(const char *dir, mode_t mode)
{
	char d[4096];

	if (snprintf(d, sizeof(d), "%s", dir) >= (int)sizeof(d))
		return -ENAMETOOLONG;
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(d, mode);
		*p = '/';
	}
	return mkdir(d, mode) && errno != EEXIST ? -errno : 0;
}

int write_atomically(const char *path, void (*fn)(FILE *f, const void *arg),
		     const void *arg)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	size_t n = strlen(path) + sizeof(REPORT_TEMP_PREFIX) + 8;
	char *tmp = malloc(n);

	if (!tmp)
		return -ENOMEM;
	/* "DIR/.ptloom-tmp.BASE.XXXXXX": a prefix no user file has, so the
	 * clean-up of stale ones (cli/common.c) never touches a user's */
	snprintf(tmp, n, "%.*s" REPORT_TEMP_PREFIX "%s.XXXXXX", (int)dirlen,
		 path, path + dirlen);
	int fd = mkstemp(tmp);

	if (fd < 0) {
		int e = -errno;

		free(tmp);
		return e;
	}
	FILE *f = fdopen(fd, "w");

	if (!f) {
		int e = -errno;

		close(fd);
		unlink(tmp);
		free(tmp);
		return e;
	}
	fn(f, arg);
	int bad = ferror(f);

	if (fflush(f) || fsync(fileno(f)))
		bad = 1;
	if (fclose(f))
		bad = 1;
	if (bad || rename(tmp, path)) {
		unlink(tmp);
		free(tmp);
		return -EIO;
	}
	free(tmp);
	return 0;
}

struct rw {
	const struct report *r;
	int format;
};

static void render(FILE *f, const void *arg)
{
	const struct rw *w = arg;

	if (w->format == 0)
		report_json(f, w->r);
	else if (w->format == 1)
		report_markdown(f, w->r);
	else if (w->format == 2)
		report_junit(f, w->r);
	else
		report_sarif(f, w->r);
}

int report_write(const struct report *r, const char *format, const char *path)
{
	struct rw w = { r, 0 };

	if (!strcmp(format, "json"))
		w.format = 0;
	else if (!strcmp(format, "markdown"))
		w.format = 1;
	else if (!strcmp(format, "junit"))
		w.format = 2;
	else if (!strcmp(format, "sarif"))
		w.format = 3;
	else
		return -EINVAL;
	return write_atomically(path, render, &w);
}
