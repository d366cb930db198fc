/*
 * Reports: see report.h.  Every file is written to a temporary file in the
 * same directory and renamed, so a reader never sees half a report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report.h"

void json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
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
	fprintf(f, ",\n  \"replay_command\": ");
	json_string(f, r->replay_command);
	if (r->nshards)
		fprintf(f, ",\n  \"shard\": { \"index\": %d, \"count\": %d, "
			   "\"failure_key\": %llu, \"bound0_runs\": %llu }",
			r->shard, r->nshards, (unsigned long long)r->fail_key,
			(unsigned long long)r->bound0_runs);
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
	fprintf(f, "\n}\n");
}

static void md_block(FILE *f, const char *s)
{
	fprintf(f, "```\n%s%s```\n", s, s[0] && s[strlen(s) - 1] == '\n' ? "" : "\n");
}

void report_markdown(FILE *f, const struct report *r)
{
	fprintf(f, "## ptloom %s: %s\n\n", r->command ? r->command : "run",
		r->verdict);
	fprintf(f, "`%s`\n\n", r->summary ? r->summary : "");
	fprintf(f, "| | |\n|---|---|\n");
	fprintf(f, "| program | `%s` |\n", r->program ? r->program : "");
	fprintf(f, "| strategy | %s |\n| runs | %llu |\n",
		r->strategy ? r->strategy : "", (unsigned long long)r->runs);
	fprintf(f, "| complete | %s |\n| preemption bound | %d |\n",
		r->complete ? "yes" : "no", r->preemption_bound);
	fprintf(f, "| seed | %llu |\n\n", (unsigned long long)r->seed);
	if (r->has_failure) {
		fprintf(f, "### Failure: %s", r->kind);
		if (r->signal)
			fprintf(f, " %s", r->signal);
		if (r->thread >= 0)
			fprintf(f, " in T%d", r->thread);
		fprintf(f, "\n\n");
		if (r->location && r->location[0])
			fprintf(f, "at `%s`, %d preemption(s)\n\n", r->location,
				r->preemptions);
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
	}
	if (r->replay_command)
		fprintf(f, "\nReplay:\n\n```\n%s\n```\n", r->replay_command);
	if (r->has_replay)
		fprintf(f, "\nReplay exact: %s, trace hash `%s`%s%s\n",
			r->exact ? "yes" : "no",
			r->trace_hash ? r->trace_hash : "",
			r->divergence ? "; " : "",
			r->divergence ? r->divergence : "");
}

static void xml(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

void report_junit(FILE *f, const struct report *r)
{
	bool fail = r->has_failure || strcmp(r->verdict, "pass");

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites tests=\"1\" failures=\"%d\" time=\"%.3f\">\n",
		fail, r->seconds);
	fprintf(f, "  <testsuite name=\"ptloom\" tests=\"1\" failures=\"%d\" "
		   "time=\"%.3f\">\n", fail, r->seconds);
	fprintf(f, "    <testcase classname=\"ptloom.%s\" name=\"",
		r->command ? r->command : "run");
	xml(f, r->program);
	fprintf(f, "\" time=\"%.3f\">\n", r->seconds);
	if (fail) {
		fprintf(f, "      <failure type=\"%s\" message=\"",
			r->has_failure ? r->kind : r->verdict);
		xml(f, r->summary);
		fprintf(f, "\">");
		xml(f, r->message);
		if (r->location) {
			fputc('\n', f);
			xml(f, r->location);
		}
		if (r->replay_command) {
			fprintf(f, "\nreplay: ");
			xml(f, r->replay_command);
		}
		if (r->output) {
			fputc('\n', f);
			xml(f, r->output);
		}
		fprintf(f, "</failure>\n");
	}
	fprintf(f, "      <system-out>");
	xml(f, r->summary);
	fprintf(f, "</system-out>\n    </testcase>\n  </testsuite>\n"
		   "</testsuites>\n");
}

int write_atomically(const char *path, void (*fn)(FILE *f, const void *arg),
		     const void *arg)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 16);

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, n + 16, "%s.XXXXXX", path);
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
	else
		report_junit(f, w->r);
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
	else
		return -EINVAL;
	return write_atomically(path, render, &w);
}
