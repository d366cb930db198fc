/*
 * The CI renderings of a report: JUnit and SARIF.
 *
 * The JUnit rendering of a report, for strict consumers (Jenkins' and
 * GitLab's parsers, the Ant XSD): testsuites > testsuite > testcase with
 * the counts every consumer reads (tests, failures, errors, skipped),
 * time, an ISO 8601 timestamp and the hostname.  One ptloom command is one
 * testcase:
 *
 *   fail                 <failure type="crash" message="...">details</failure>
 *   incomplete           <skipped message="..."/>  (a limit is never a pass)
 *   diverged, error      <error type="..." message="...">details</error>
 *   pass                 the testcase alone
 *
 * tests/integration (issue9, junit_report_validates) checks the output
 * against tests/corpus/junit.xsd with xmllint.
 *
 * SARIF 2.1.0 (code scanning): one run of the tool "ptloom" with one
 * result per failure (ruleId "ptloom/KIND", level error; INCOMPLETE is a
 * note, never an error), at the failing thread's source line when the
 * location names one; the message is the summary and the replay command.
 * tests/integration (issue9, sarif_report_shape) checks its JSON shape.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "escape.h"
#include "report.h"

/* The first "name.ext:LINE" in a location ("withdraw at bank.c:23"). */
bool report_source_line(const char *loc, char *file, size_t len, int *line)
{
	for (const char *p = loc; p && *p; p++) {
		if (*p != ':' || !isdigit((unsigned char)p[1]))
			continue;
		const char *b = p;

		while (b > loc && !isspace((unsigned char)b[-1]) && b[-1] != '(')
			b--;
		if (!memchr(b, '.', (size_t)(p - b)) || (size_t)(p - b) >= len)
			continue;
		memcpy(file, b, (size_t)(p - b));
		file[p - b] = 0;
		*line = atoi(p + 1);
		return *line > 0;
	}
	return false;
}

static void xml(FILE *f, const char *s)
{
	esc_xml(f, s ? s : "");
}

/* The text after "ptloom: " of the summary line. */
static const char *short_summary(const struct report *r)
{
	const char *s = r->summary ? r->summary : "";

	return strncmp(s, "ptloom: ", 8) ? s : s + 8;
}

/* A failure's text: the summary, then each field there is, labelled. */
static void detail_lines(FILE *f, const char *summary, const char *message,
			 const char *location, const char *replay,
			 const char *schedule, const char *label,
			 const char *extra, const char *output)
{
	const struct {
		const char *label, *value;
	} fields[] = { { "\nat: ", location },
		       { "\nreplay: ", replay },
		       { "\nschedule: ", schedule },
		       { label, extra } };

	xml(f, summary);
	if (message && message[0]) {
		fputc('\n', f);
		xml(f, message);
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].label && fields[i].value &&
		    (i != 0 || fields[i].value[0])) {
			fputs(fields[i].label, f);
			xml(f, fields[i].value);
		}
	if (output && output[0]) {
		fprintf(f, "\nprogram output (tail):\n");
		xml(f, output);
	}
}

static void details(FILE *f, const struct report *r)
{
	detail_lines(f, r->summary, r->message, r->location, r->replay_command,
		     r->schedule_file, "\nminimized: ", r->minimized_file,
		     r->output);
}

static void property(FILE *f, const char *name, const char *value)
{
	if (!value)
		return;
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	xml(f, value);
	fprintf(f, "\"/>\n");
}

static bool is(const char *v, const char *w)
{
	return v && !strcmp(v, w);
}

static void test_details(FILE *f, const struct report_test *t)
{
	detail_lines(f, t->summary, t->message, t->location, t->replay_command,
		     t->schedule_file, "\nsplit: ", t->rule, t->output);
}

/* --per-test: one testcase per test of the suite. */
static void junit_tests(FILE *f, const struct report *r, const char *stamp,
			const char *host)
{
	int fail = 0, skip = 0, error = 0;
	char num[64];

	for (int i = 0; i < r->ntests; i++) {
		const char *v = r->tests[i].verdict;

		fail += is(v, "fail");
		skip += is(v, "incomplete");
		error += !is(v, "fail") && !is(v, "incomplete") &&
			 !is(v, "pass");
	}
	fprintf(f, "<testsuites name=\"ptloom\" tests=\"%d\" failures=\"%d\" "
		   "errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
		r->ntests, fail, error, skip, r->seconds);
	fprintf(f, "  <testsuite name=\"");
	xml(f, r->program);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
		   "skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\" "
		   "hostname=\"",
		r->ntests, fail, error, skip, r->seconds, stamp);
	xml(f, host);
	fprintf(f, "\" id=\"0\" package=\"ptloom\">\n    <properties>\n");
	property(f, "verdict", r->verdict);
	property(f, "mode", "per-test");
	snprintf(num, sizeof(num), "%llu", (unsigned long long)r->runs);
	property(f, "runs", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)r->seed);
	property(f, "seed", num);
	fprintf(f, "    </properties>\n");
	for (int i = 0; i < r->ntests; i++) {
		const struct report_test *t = &r->tests[i];
		const char *s = t->summary ? t->summary : "";

		if (!strncmp(s, "ptloom: ", 8))
			s += 8;
		fprintf(f, "    <testcase classname=\"ptloom.suite\" name=\"");
		xml(f, t->name);
		fprintf(f, "\" time=\"%.3f\">\n", t->seconds);
		if (is(t->verdict, "fail")) {
			fprintf(f, "      <failure type=\"");
			xml(f, t->kind ? t->kind : "fail");
			fprintf(f, "\" message=\"");
			xml(f, s);
			fprintf(f, "\">");
			test_details(f, t);
			fprintf(f, "</failure>\n");
		} else if (is(t->verdict, "incomplete")) {
			fprintf(f, "      <skipped message=\"");
			xml(f, s);
			fprintf(f, "\"/>\n");
		} else if (!is(t->verdict, "pass")) {
			fprintf(f, "      <error type=\"");
			xml(f, t->verdict ? t->verdict : "error");
			fprintf(f, "\" message=\"");
			xml(f, s);
			fprintf(f, "\">");
			test_details(f, t);
			fprintf(f, "</error>\n");
		}
		fprintf(f, "      <system-out>");
		xml(f, t->summary);
		if (t->command) {
			fprintf(f, "\ncommand: ");
			xml(f, t->command);
		}
		if (t->rule) {
			fprintf(f, "\nsplit: ");
			xml(f, t->rule);
		}
		if (t->in_runner) {
			fprintf(f, "\nin the runner: ");
			xml(f, t->in_runner);
		}
		fprintf(f, "</system-out>\n      <system-err></system-err>\n"
			   "    </testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}

void report_junit(FILE *f, const struct report *r)
{
	const char *v = r->verdict ? r->verdict : "error";
	bool fail = !strcmp(v, "fail");
	bool skip = !strcmp(v, "incomplete");
	bool error = !fail && !skip && strcmp(v, "pass");
	char host[256] = "localhost", stamp[32] = "1970-01-01T00:00:00";
	char num[64];
	time_t start = time(NULL) - (time_t)r->seconds;
	struct tm tm;

	if (gethostname(host, sizeof(host) - 1) || !host[0])
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = 0;
	if (gmtime_r(&start, &tm))
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	if (r->ntests) {
		junit_tests(f, r, stamp, host);
		return;
	}
	fprintf(f, "<testsuites name=\"ptloom\" tests=\"1\" failures=\"%d\" "
		   "errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
		fail, error, skip, r->seconds);
	fprintf(f, "  <testsuite name=\"ptloom %s\" tests=\"1\" "
		   "failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
		   "time=\"%.3f\" timestamp=\"%s\" hostname=\"",
		r->command ? r->command : "run", fail, error, skip, r->seconds,
		stamp);
	xml(f, host);
	fprintf(f, "\" id=\"0\" package=\"ptloom\">\n    <properties>\n");
	property(f, "verdict", v);
	property(f, "strategy", r->strategy);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)r->runs);
	property(f, "runs", num);
	snprintf(num, sizeof(num), "%d", r->preemption_bound);
	property(f, "preemption_bound", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)r->seed);
	property(f, "seed", num);
	property(f, "replay_command", r->replay_command);
	property(f, "schedule_file", r->schedule_file);
	property(f, "minimized_file", r->minimized_file);
	for (size_t i = 0; i < r->nwarnings; i++)
		property(f, "warning", r->warnings[i].message);
	fprintf(f, "    </properties>\n");
	fprintf(f, "    <testcase classname=\"ptloom.%s\" name=\"",
		r->command ? r->command : "run");
	xml(f, r->program);
	fprintf(f, "\" time=\"%.3f\">\n", r->seconds);
	if (fail) {
		fprintf(f, "      <failure type=\"");
		xml(f, r->kind ? r->kind : v);
		fprintf(f, "\" message=\"");
		xml(f, short_summary(r));
		fprintf(f, "\">");
		details(f, r);
		fprintf(f, "</failure>\n");
	} else if (skip) {
		fprintf(f, "      <skipped message=\"");
		xml(f, short_summary(r));
		fprintf(f, "\"/>\n");
	} else if (error) {
		fprintf(f, "      <error type=\"");
		xml(f, v);
		fprintf(f, "\" message=\"");
		xml(f, short_summary(r));
		fprintf(f, "\">");
		details(f, r);
		fprintf(f, "</error>\n");
	}
	fprintf(f, "      <system-out>");
	xml(f, r->summary);
	fprintf(f, "</system-out>\n      <system-err>");
	for (size_t i = 0; i < r->nwarnings; i++) {
		fprintf(f, "warning: ");
		xml(f, r->warnings[i].message);
		fprintf(f, "\n");
	}
	fprintf(f, "</system-err>\n"
		   "    </testcase>\n  </testsuite>\n</testsuites>\n");
}

/* A result's "locations": the source line of a "file:line" location. */
static void sarif_location(FILE *f, const char *location)
{
	char file[256];
	int line = 0;

	if (!location ||
	    !report_source_line(location, file, sizeof(file), &line))
		return;
	fprintf(f, ",\n          \"locations\": [\n"
		   "            { \"physicalLocation\": {\n"
		   "                \"artifactLocation\": "
		   "{ \"uri\": ");
	json_string(f, file);
	fprintf(f, " },\n                \"region\": "
		   "{ \"startLine\": %d } } }\n          ]",
		line);
}

/* One result: a test's (name) or the whole command's (minimized). */
static void sarif_result(FILE *f, const char *id, bool fail,
			 const char *summary, const char *message,
			 const char *replay, const char *location,
			 const char *verdict, const char *schedule,
			 const char *name, const char *minimized)
{
	fprintf(f, "\n        {\n          \"ruleId\": ");
	json_string(f, id);
	fprintf(f, ",\n          \"level\": \"%s\",\n"
		   "          \"message\": { \"text\": ",
		fail ? "error" : "note");
	char *text = NULL;
	size_t tlen = 0;
	FILE *m = open_memstream(&text, &tlen);

	if (m) {
		if (name)
			fprintf(m, "%s: ", name);
		fputs(summary ? summary : verdict, m);
		if (message && message[0])
			fprintf(m, "\n%s", message);
		if (replay)
			fprintf(m, "\nreplay: %s", replay);
		fclose(m);
	}
	json_string(f, text ? text : verdict);
	free(text);
	fprintf(f, " }");
	sarif_location(f, location);
	fprintf(f, ",\n          \"properties\": { \"verdict\": ");
	json_string(f, verdict);
	if (name) {
		fprintf(f, ", \"test\": ");
		json_string(f, name);
	}
	if (schedule) {
		fprintf(f, ", \"schedule_file\": ");
		json_string(f, schedule);
	}
	if (minimized) {
		fprintf(f, ", \"minimized_file\": ");
		json_string(f, minimized);
	}
	fprintf(f, " }\n        }");
}

/* --per-test: a result per test that failed or was not covered. */
static void sarif_tests(FILE *f, const struct report *r)
{
	char id[64];
	bool first = true;

	fprintf(f, "{\n  \"$schema\": \"https://json.schemastore.org/"
		   "sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n"
		   "  \"runs\": [\n    {\n      \"tool\": {\n"
		   "        \"driver\": {\n          \"name\": \"ptloom\",\n"
		   "          \"version\": \"" PTLOOM_VERSION "\",\n"
		   "          \"rules\": [");
	for (int i = 0; i < r->ntests; i++) {
		const struct report_test *t = &r->tests[i];
		bool dup = false;

		if (is(t->verdict, "pass"))
			continue;
		const char *kind = t->kind ? t->kind : t->verdict;

		for (int k = 0; k < i; k++) {
			const struct report_test *u = &r->tests[k];

			dup |= !is(u->verdict, "pass") &&
			       is(u->kind ? u->kind : u->verdict, kind);
		}
		if (dup)
			continue;
		snprintf(id, sizeof(id), "ptloom/%s", kind);
		fprintf(f, "%s\n            { \"id\": ", first ? "" : ",");
		json_string(f, id);
		fprintf(f, ", \"shortDescription\": { \"text\": ");
		json_string(f, kind);
		fprintf(f, " } }");
		first = false;
	}
	fprintf(f, "%s]\n        }\n      },\n      \"results\": [",
		first ? "" : "\n          ");
	first = true;
	for (int i = 0; i < r->ntests; i++) {
		const struct report_test *t = &r->tests[i];

		if (is(t->verdict, "pass"))
			continue;
		snprintf(id, sizeof(id), "ptloom/%s",
			 t->kind ? t->kind : t->verdict);
		if (!first)
			fputc(',', f);
		sarif_result(f, id, is(t->verdict, "fail"), t->summary,
			     t->message, t->replay_command, t->location,
			     t->verdict, t->schedule_file, t->name, NULL);
		first = false;
	}
	fprintf(f, "%s]\n    }\n  ]\n}\n", first ? "" : "\n      ");
}

void report_sarif(FILE *f, const struct report *r)
{
	if (r->ntests) {
		sarif_tests(f, r);
		return;
	}

	const char *v = r->verdict ? r->verdict : "error";
	bool fail = !strcmp(v, "fail") || !strcmp(v, "diverged");
	bool note = !strcmp(v, "incomplete");
	const char *kind = r->has_failure && r->kind ? r->kind : v;
	char id[64];

	snprintf(id, sizeof(id), "ptloom/%s", kind);

	fprintf(f, "{\n  \"$schema\": \"https://json.schemastore.org/"
		   "sarif-2.1.0.json\",\n  \"version\": \"2.1.0\",\n"
		   "  \"runs\": [\n    {\n      \"tool\": {\n"
		   "        \"driver\": {\n          \"name\": \"ptloom\",\n"
		   "          \"version\": \"" PTLOOM_VERSION "\",\n"
		   "          \"rules\": [");
	if (fail || note) {
		fprintf(f, "\n            { \"id\": ");
		json_string(f, id);
		fprintf(f, ", \"shortDescription\": { \"text\": ");
		json_string(f, kind);
		fprintf(f, " } }%s\n          ", r->nwarnings ? "," : "");
	}
	if (r->nwarnings)
		fprintf(f, "%s{ \"id\": \"ptloom/child_crash\", "
			   "\"shortDescription\": { \"text\": \"a process "
			   "of the program crashed\" } }\n          ",
			fail || note ? "  " : "\n            ");
	fprintf(f, "]\n        }\n      },\n      \"results\": [");
	if (fail || note) {
		sarif_result(f, id, fail, r->summary ? r->summary : v,
			     r->message, r->replay_command, r->location, v,
			     r->schedule_file, NULL, r->minimized_file);
		fprintf(f, "%s\n      ", r->nwarnings ? "," : "");
	}
	for (size_t i = 0; i < r->nwarnings; i++) {
		const struct report_warning *w = &r->warnings[i];

		fprintf(f, "%s{\n          \"ruleId\": \"ptloom/child_crash\","
			   "\n          \"level\": \"warning\",\n"
			   "          \"message\": { \"text\": ",
			fail || note || i ? "  " : "\n        ");
		json_string(f, w->message);
		fprintf(f, " }");
		sarif_location(f, w->location);
		fprintf(f, ",\n          \"properties\": { \"process\": ");
		json_string(f, w->process);
		fprintf(f, ", \"signal\": ");
		json_string(f, w->signal);
		fprintf(f, ", \"runs\": %llu", (unsigned long long)w->runs);
		if (w->schedule_file) {
			fprintf(f, ", \"schedule_file\": ");
			json_string(f, w->schedule_file);
		}
		fprintf(f, " }\n        }%s\n      ",
			i + 1 < r->nwarnings ? "," : "");
	}
	fprintf(f, "]\n    }\n  ]\n}\n");
}
