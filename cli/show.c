/*
 * ptloom show: explain a schedule like a crime-scene report: who did what,
 * in which order, where each preemption happened.  Boring stretches of
 * one thread collapse into "T1 runs 37 steps".
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../analysis/escape.h"
#include "../analysis/report.h"

int load_any_schedule(const char *path, struct schedule *s);

enum { FMT_TEXT, FMT_JSON, FMT_MARKDOWN, FMT_SCRIPT, FMT_HTML };

/* Does event i matter?  Preemptions, decided choices, thread lifecycle,
 * and the last few events before the end. */
static bool matters(const struct schedule *s, size_t i)
{
	const struct event *e = &s->events[i];

	if (e->preempt || e->kind == OP_START || e->kind == OP_EXIT ||
	    e->kind == OP_EXIT_GROUP || e->kind == OP_CLONE ||
	    e->kind == OP_TIMEOUT || e->kind == OP_ANNOTATE ||
	    e->kind == OP_TIMER)
		return true;
	if (i + 6 >= s->nevents)
		return true;
	if (i == 0 || s->events[i - 1].thread != e->thread)
		return true; /* a switch */
	if (i + 1 < s->nevents && s->events[i + 1].thread != e->thread)
		return true;
	return false;
}

static const char *tname(const struct schedule *s, unsigned t, char *buf,
			 size_t len)
{
	if ((int)t < s->nthread_names && s->thread_names[t] &&
	    s->thread_names[t][0])
		snprintf(buf, len, "T%u (%s)", t, esc(s->thread_names[t]));
	else
		snprintf(buf, len, "T%u", t);
	return buf;
}

/* The thread names to go with the backtraces, if there is one each. */
static char *const *bt_names(const struct schedule *s)
{
	return s->nthread_names >= s->nthread_backtraces ? s->thread_names
							  : NULL;
}

static int nthreads(const struct schedule *s)
{
	int n = 0;

	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i].thread + 1 > n)
			n = s->events[i].thread + 1;
	return n;
}


/* The schedule under explanation and what makes explaining it linear: a
 * symbol index, and for each event the index of its thread's next event
 * (SIZE_MAX: none). */
static const struct schedule *cur_sched;
static struct sym_index cur_ix;
static size_t *next_same;
static int cur_nthreads;

static int prepare(const struct schedule *s)
{
	cur_sched = s;
	sym_index_build(&cur_ix, s->syms, s->nsyms);
	cur_nthreads = nthreads(s);
	next_same = malloc((s->nevents + 1) * sizeof(*next_same));
	size_t *last = calloc((size_t)cur_nthreads + 1, sizeof(*last));

	if (!next_same || !last) {
		free(last);
		return -1;
	}
	for (size_t i = s->nevents; i-- > 0;) {
		unsigned t = s->events[i].thread;

		next_same[i] = last[t] ? last[t] - 1 : SIZE_MAX;
		last[t] = i + 1;
	}
	free(last);
	return 0;
}

static void unprepare(void)
{
	sym_index_free(&cur_ix);
	free(next_same);
	next_same = NULL;
	cur_sched = NULL;
}

/* SIGINT/SIGTERM stop the explanation where it is (cmd_show says so). */
static bool stop(void)
{
	return cli_interrupted != 0;
}

/* Calls f for each line of the collapsed trace. */
static void walk(const struct schedule *s,
		 void (*f)(void *ctx, const struct event *e, const char *text,
			   size_t collapsed, unsigned who),
		 void *ctx)
{
	char line[600];

	for (size_t i = 0; i < s->nevents && !stop();) {
		if (!matters(s, i)) {
			size_t j = i;

			while (j < s->nevents && !matters(s, j) &&
			       s->events[j].thread == s->events[i].thread)
				j++;
			if (j - i > 1) {
				f(ctx, &s->events[i], NULL, j - i,
				  s->events[i].thread);
				i = j;
				continue;
			}
		}
		event_line_ix(&s->events[i], &cur_ix, line, sizeof(line));
		f(ctx, &s->events[i], line, 0, s->events[i].thread);
		i++;
	}
}

/* At a preemption: which thread was stopped and what it was about to do
 * (its next event), e.g. "T1 access(&counter) at counter_race.c:20". */
static void preempted(const struct event *e, char *buf, size_t len)
{
	const struct schedule *s = cur_sched;
	size_t i = (size_t)(e - s->events);

	buf[0] = 0;
	if (!s || i == 0 || i >= s->nevents)
		return;
	unsigned victim = s->events[i - 1].thread;

	if (victim == e->thread)
		return;
	size_t j = next_same[i - 1]; /* after i: event i is not victim's */

	if (j != SIZE_MAX)
		event_line_ix(&s->events[j], &cur_ix, buf, len);
}

static void text_line(void *ctx, const struct event *e, const char *text,
		      size_t collapsed, unsigned who)
{
	FILE *f = ctx;
	char was[600];

	if (collapsed) {
		fprintf(f, "         T%u runs %zu steps\n", who, collapsed);
		return;
	}
	if (!e->preempt) {
		fprintf(f, "  %5u  %s\n", e->step, text);
		return;
	}
	preempted(e, was, sizeof(was));
	fprintf(f, "  %5u  %s    <-- preemption%s%s%s\n", e->step, text,
		was[0] ? " (stops " : "", was, was[0] ? ")" : "");
}

static void show_text(FILE *f, const struct schedule *s, const char *path)
{
	char buf[800], tn[64];
	size_t nd = 0;

	for (size_t i = 0; i < s->ndecisions; i++)
		nd += s->decisions[i].index != 0;
	fprintf(f, "schedule %s\n", esc(path));
	if (s->program && s->program[0]) {
		fprintf(f, "program: ");
		esc_fputs(f, s->program, 0);
		fprintf(f, "\n");
	}
	if (s->argc) {
		fprintf(f, "argv:");
		for (int i = 0; i < s->argc; i++) {
			fprintf(f, " [%d] ", i);
			esc_fputs(f, s->argv[i], 0);
		}
		fprintf(f, "\n");
	}
	if (s->nenv) {
		fprintf(f, "environment (%d):\n", s->nenv);
		for (int i = 0; i < s->nenv; i++) {
			fprintf(f, "  ");
			esc_fputs(f, s->env[i], 0);
			if (env_is_loader_var(s->env[i]) &&
			    strcmp(s->env[i], PTLOOM_TUNABLES))
				fprintf(f, "   <-- loader variable: refused "
					   "on replay unless --trust-env");
			fprintf(f, "\n");
		}
	}
	if (s->nobjects) {
		fprintf(f, "loaded objects (%zu):\n", s->nobjects);
		for (size_t i = 0; i < s->nobjects; i++) {
			const struct loaded_object *o = &s->objects[i];

			fprintf(f, "  ");
			esc_fputs(f, o->path, 0);
			if (o->build_id_len) {
				fprintf(f, "  build-id ");
				for (size_t k = 0; k < o->build_id_len; k++)
					fprintf(f, "%02x", o->build_id[k]);
			} else {
				fprintf(f, "  %llu bytes, hash %016llx",
					(unsigned long long)o->size,
					(unsigned long long)o->hash);
			}
			fprintf(f, "\n");
		}
	}
	if (s->failure) {
		describe_schedule_failure(s, buf, sizeof(buf));
		fprintf(f, "failure: %s\n", buf);
		if (s->message && s->message[0])
			fprintf(f, "  %s\n", esc(s->message));
	}
	fprintf(f, "preemptions: %u, decisions: %zu of %zu choice points, "
		   "seed %llu, trace hash %016llx\n",
		s->preemptions, nd, s->ndecisions, (unsigned long long)s->seed,
		(unsigned long long)s->trace_hash);
	print_backtraces(f, s->thread_backtraces, bt_names(s),
			 s->nthread_backtraces, "  ");
	int n = cur_nthreads;

	if (n) {
		fprintf(f, "threads:");
		for (int t = 0; t < n; t++)
			fprintf(f, " %s", tname(s, (unsigned)t, tn, sizeof(tn)));
		fprintf(f, "\n");
	}
	if (!s->nevents) {
		fprintf(f, "\n(no recorded events: a hand-written script; "
			   "decisions:)\n");
		schedule_write_script(f, s);
		return;
	}
	fprintf(f, "\n   step  event\n");
	walk(s, text_line, f);
}

static void md_line(void *ctx, const struct event *e, const char *text,
		    size_t collapsed, unsigned who)
{
	FILE *f = ctx;

	if (collapsed) {
		fprintf(f, "    Note over T%u: runs %zu steps\n", who, collapsed);
		return;
	}
	/* drop the "Tn " prefix: the participant says it */
	const char *sp = strchr(text, ' ');
	char esc[600];
	size_t k = 0;

	for (const char *p = sp ? sp + 1 : text; *p && k < sizeof(esc) - 8;
	     p++) {
		if (*p == ';' || *p == '#' || *p == '<' || *p == '>')
			esc[k++] = ',';
		else
			esc[k++] = *p;
	}
	esc[k] = 0;
	if (e->preempt) {
		char was[600];

		preempted(e, was, sizeof(was));
		for (char *c = was; *c; c++)
			if (*c == ';' || *c == '#' || *c == '<' || *c == '>')
				*c = ',';
		fprintf(f, "    Note over T%u: preemption%s%s\n", who,
			was[0] ? ", stops " : "", was);
	}
	fprintf(f, "    T%u->>T%u: %u %s\n", who, who, e->step, esc);
}

static void text_collect(void *ctx, const struct event *e, const char *text,
			 size_t collapsed, unsigned who)
{
	text_line(ctx, e, text, collapsed, who);
}

/* Untrusted text as a Markdown code span: escaped, and without a backtick
 * that could end the span. */
static void md_code(FILE *f, const char *s)
{
	char buf[4096];

	esc_text(buf, sizeof(buf), s, 0);
	for (char *c = buf; *c; c++)
		if (*c == '`')
			*c = '\'';
	fprintf(f, "`%s`", buf);
}

static void show_markdown(FILE *f, const struct schedule *s, const char *path)
{
	char buf[800], tn[64];

	fprintf(f, "## ptloom schedule ");
	md_code(f, path);
	fprintf(f, "\n\n");
	if (s->argc) {
		char cmd[4096];

		shell_join(cmd, sizeof(cmd), s->argv, s->argc);
		fprintf(f, "Program: ");
		md_code(f, cmd);
		fprintf(f, "\n\n");
	}
	if (s->nenv) {
		fprintf(f, "<details><summary>Environment (%d)</summary>\n\n"
			   "````\n", s->nenv);
		for (int i = 0; i < s->nenv; i++) {
			esc_fputs(f, s->env[i], 0);
			fputc('\n', f);
		}
		fprintf(f, "````\n</details>\n\n");
	}
	if (s->failure) {
		describe_schedule_failure(s, buf, sizeof(buf));
		fprintf(f, "**Failure:** ");
		md_code(f, buf);
		fprintf(f, "\n\n");
		if (s->message && s->message[0])
			fprintf(f, "````\n%s\n````\n\n", esc(s->message));
		if (s->nthread_backtraces) {
			fprintf(f, "<details><summary>Threads at the "
				   "failure</summary>\n\n````\n");
			print_backtraces(f, s->thread_backtraces,
					 bt_names(s), s->nthread_backtraces,
					 "");
			fprintf(f, "````\n</details>\n\n");
		}
	}
	fprintf(f, "Preemptions: %u. Seed %llu. Trace hash `%016llx`.\n\n",
		s->preemptions, (unsigned long long)s->seed,
		(unsigned long long)s->trace_hash);
	if (!s->nevents) {
		fprintf(f, "```\n");
		schedule_write_script(f, s);
		fprintf(f, "```\n");
		return;
	}
	fprintf(f, "```mermaid\nsequenceDiagram\n");
	for (int t = 0; t < cur_nthreads && !stop(); t++)
		fprintf(f, "    participant T%d as %s\n", t,
			tname(s, (unsigned)t, tn, sizeof(tn)));
	walk(s, md_line, f);
	fprintf(f, "```\n\n<details><summary>Trace as text</summary>\n\n"
		   "```\n");
	walk(s, text_collect, f);
	fprintf(f, "```\n</details>\n");
}

static void show_json(FILE *f, const struct schedule *s)
{
	char line[600], buf[800];

	fprintf(f, "{\n  \"format_version\": %u,\n  \"program\": ",
		s->format_version);
	json_string(f, s->program);
	fprintf(f, ",\n  \"argv\": [");
	for (int i = 0; i < s->argc; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_string(f, s->argv[i]);
	}
	fprintf(f, "],\n  \"env\": [");
	for (int i = 0; i < s->nenv; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_string(f, s->env[i]);
	}
	fprintf(f, "],\n  \"seed\": %llu,\n  \"strategy\": ",
		(unsigned long long)s->seed);
	json_string(f, s->strategy);
	describe_schedule_failure(s, buf, sizeof(buf));
	fprintf(f, ",\n  \"preemptions\": %u,\n  \"trace_hash\": "
		   "\"%016llx\",\n  \"failure\": ",
		s->preemptions, (unsigned long long)s->trace_hash);
	if (s->failure) {
		fprintf(f, "{ \"kind\": \"%s\", \"description\": ",
			failure_kind_name(s->failure));
		json_string(f, buf);
		fprintf(f, ", \"location\": ");
		json_string(f, s->location);
		fprintf(f, ", \"message\": ");
		json_string(f, s->message);
		fprintf(f, ",\n    \"threads\": ");
		report_json_threads(f, (const char *const *)s->thread_backtraces,
				    (const char *const *)bt_names(s),
				    s->nthread_backtraces, "    ");
		fprintf(f, " }");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"decisions\": [");
	for (size_t i = 0; i < s->ndecisions && !stop(); i++) {
		const struct decision *d = &s->decisions[i];

		fprintf(f, "%s\n    { \"step\": %u, \"kind\": \"%s\", "
			   "\"thread\": \"T%u\", \"timeout\": %s, "
			   "\"index\": %u, \"alternatives\": %u }",
			i ? "," : "", d->step,
			d->kind == DEC_WAKE ? "wake" : "run", d->thread,
			d->timeout ? "true" : "false", d->index, d->nalts);
	}
	fprintf(f, "\n  ],\n  \"events\": [");
	for (size_t i = 0; i < s->nevents && !stop(); i++) {
		const struct event *e = &s->events[i];

		event_line_ix(e, &cur_ix, line, sizeof(line));
		fprintf(f, "%s\n    { \"step\": %u, \"thread\": \"T%u\", "
			   "\"op\": \"%s\", \"object\": \"0x%llx\", "
			   "\"pc\": \"0x%llx\", \"preemption\": %s, "
			   "\"text\": ",
			i ? "," : "", e->step, e->thread,
			e->kind == OP_CALL ? call_fn_name(e->fn)
					   : op_kind_name(e->kind),
			(unsigned long long)e->obj,
			(unsigned long long)e->pc,
			e->preempt ? "true" : "false");
		json_string(f, line);
		if (e->preempt) {
			char was[600];

			preempted(e, was, sizeof(was));
			fprintf(f, ", \"preempted\": ");
			json_string(f, was[0] ? was : NULL);
		}
		fprintf(f, " }");
	}
	fprintf(f, "\n  ]\n}\n");
}

/* The Markdown rendering of a schedule file (the GitHub job summary). */
int show_markdown_path(FILE *f, const char *path)
{
	struct schedule s;
	int r = 0;

	if (load_any_schedule(path, &s))
		return -1;
	if (prepare(&s))
		r = -1;
	else
		show_markdown(f, &s, path);
	unprepare();
	schedule_free(&s);
	return r;
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, 0, 'f' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c, fmt = FMT_TEXT;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "markdown"))
				fmt = FMT_MARKDOWN;
			else if (!strcmp(optarg, "script"))
				fmt = FMT_SCRIPT;
			else if (!strcmp(optarg, "html"))
				fmt = FMT_HTML;
			else {
				fprintf(stderr, "ptloom: --format is text, "
						"json, markdown, script or html "
						"(got '%s')\n", esc(optarg));
				return EXIT_USAGE;
			}
			break;
		case 'h':
			printf("usage: ptloom show [--format "
			       "text|json|markdown|script|html] SCHEDULE\n\n"
			       "Explains a schedule file without running "
			       "anything.  `script` prints the\ndecisions as "
			       "an editable text file that `ptloom replay` "
			       "accepts; `html` a\nself-contained timeline "
			       "page (a lane per thread, a mark per step).\n"
			       "\nStrings from the file are escaped; SIGINT "
			       "or SIGTERM stops it (exit 130/143).\n");
			return EXIT_PASS;
		default:
			return cli_bad_option("show", c, argv);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "ptloom: show takes one schedule file (usage: "
				"ptloom show [--format F] SCHEDULE)\n");
		return EXIT_USAGE;
	}
	struct schedule s;

	if (load_any_schedule(argv[optind], &s))
		return EXIT_USAGE;
	if (prepare(&s)) {
		fprintf(stderr, "ptloom: %s: out of memory\n",
			esc(argv[optind]));
		unprepare();
		schedule_free(&s);
		return EXIT_USAGE;
	}
	switch (fmt) {
	case FMT_TEXT:
		show_text(stdout, &s, argv[optind]);
		break;
	case FMT_JSON:
		show_json(stdout, &s);
		break;
	case FMT_MARKDOWN:
		show_markdown(stdout, &s, argv[optind]);
		break;
	case FMT_SCRIPT:
		schedule_write_script(stdout, &s);
		break;
	case FMT_HTML:
		show_html(stdout, &s, argv[optind], &cur_ix, cur_nthreads);
		break;
	}
	fflush(stdout);
	if (getenv("PTLOOM_SHOW_STATS"))
		fprintf(stderr, "ptloom: show: %zu events, %zu symbols, %llu "
				"symbol probes\n", s.nevents, s.nsyms,
			(unsigned long long)sym_probes);
	unprepare();
	schedule_free(&s);
	if (cli_interrupted) {
		fprintf(stderr, "ptloom: show interrupted by %s; the output "
				"above is incomplete\n",
			signal_name(cli_interrupted));
		return exit_interrupted();
	}
	return EXIT_PASS;
}
