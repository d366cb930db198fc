/*
 * ptloom show: explain a schedule like a crime-scene report: who did what,
 * in which order, where each preemption happened.  Boring stretches of
 * one thread collapse into "T1 runs 37 steps".
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "../analysis/coverage.h"
#include "../analysis/escape.h"
#include "../analysis/report.h"

int load_any_schedule(const char *path, struct schedule *s);

enum { FMT_TEXT, FMT_JSON, FMT_MARKDOWN, FMT_SCRIPT, FMT_HTML };

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

/*
 * The schedule under explanation, read one event at a time from its file
 * (struct schedule_view), and what makes explaining it linear and bounded:
 * a symbol index, the number of threads, and for each preemption the file
 * offset of the stopped thread's next event (UINT32_MAX: none), found in
 * one pass with a pending list per thread.  Nothing else grows with the
 * trace.
 */
static const struct schedule_view *cur_v;
static struct sym_index cur_ix;
static int cur_nthreads;
static uint32_t *victim_at;
static size_t nvictims;
static bool cur_changed;	/* the file changed underneath: stop */
static uint64_t events_read;	/* PTLOOM_SHOW_STATS */

#define NONE UINT32_MAX

static bool read_event(struct event_cursor *c, struct event *e)
{
	int k = event_cursor_next(c, e);

	if (k < 0)
		cur_changed = true;
	events_read += k > 0;
	return k > 0;
}

static int prepare(const struct schedule_view *v)
{
	const struct schedule *s = &v->s;
	struct event_cursor c;
	struct event e;
	uint32_t *head = malloc(SCHEDULE_MAX_THREADS * sizeof(*head));
	uint32_t *link = NULL;
	size_t cap = 0, i = 0;
	unsigned prev = 0;
	int r = -1;

	cur_v = v;
	cur_changed = false;
	events_read = 0;
	if (v->msg)
		sym_index_build_view(&cur_ix, v);
	else
		sym_index_build(&cur_ix, s->syms, s->nsyms);
	if (!head)
		return -1;
	for (size_t t = 0; t < SCHEDULE_MAX_THREADS; t++)
		head[t] = NONE;
	cur_nthreads = 0;
	event_cursor_start(&c, v);
	for (; !show_stopped() && read_event(&c, &e); i++) {
		/* the preemptions that stopped this thread: it goes on here */
		for (uint32_t k = head[e.thread]; k != NONE; k = link[k])
			victim_at[k] = (uint32_t)c.last_at;
		head[e.thread] = NONE;
		if (e.thread + 1 > cur_nthreads)
			cur_nthreads = e.thread + 1;
		if (e.preempt && i > 0) {
			if (nvictims == cap) {
				size_t nc = cap ? 2 * cap : 1024;
				uint32_t *a = realloc(victim_at,
						      nc * sizeof(*a));
				uint32_t *b = a ? realloc(link, nc * sizeof(*b))
						: NULL;

				if (a)
					victim_at = a;
				if (!a || !b)
					goto out;
				link = b;
				cap = nc;
			}
			victim_at[nvictims] = NONE;
			if (prev != e.thread) {
				link[nvictims] = head[prev];
				head[prev] = (uint32_t)nvictims;
			}
			nvictims++;
		}
		prev = e.thread;
	}
	r = cur_changed ? -1 : 0;
out:
	free(head);
	free(link);
	return r;
}

static void unprepare(void)
{
	sym_index_free(&cur_ix);
	free(victim_at);
	victim_at = NULL;
	nvictims = 0;
	cur_v = NULL;
}

/* SIGINT/SIGTERM stop the explanation where it is (cmd_show says so), and
 * so does a file that changed underneath. */
bool show_stopped(void)
{
	return cli_interrupted != 0 || cur_changed;
}

static bool stop(void)
{
	return show_stopped();
}

void win_start(struct win *w)
{
	memset(w, 0, sizeof(*w));
	w->n = cur_v->s.nevents;
	event_cursor_start(&w->c, cur_v);
	for (int d = 1; d < 4; d++)
		if ((size_t)d - 1 < w->n)
			read_event(&w->c, &w->e[d]);
}

/* Moves to the next event; false at the end (or on a stop). */
bool win_next(struct win *w)
{
	if (w->e[1].preempt && w->i > 0)
		w->k++;
	memmove(&w->e[0], &w->e[1], 3 * sizeof(w->e[0]));
	w->i++;
	if (w->i + 2 < w->n)
		read_event(&w->c, &w->e[3]);
	return w->i < w->n && !stop();
}

static bool win_has(const struct win *w, int d)
{
	return d < 0 ? w->i > 0 : w->i + (size_t)d < w->n;
}

/* Does the event at the window matter?  Preemptions, decided choices,
 * thread lifecycle, and the last few events before the end. */
static bool matters(const struct win *w)
{
	const struct event *e = &w->e[1];

	if (e->preempt || e->kind == OP_START || e->kind == OP_EXIT ||
	    e->kind == OP_EXIT_GROUP || e->kind == OP_CLONE ||
	    e->kind == OP_TIMEOUT || e->kind == OP_ANNOTATE ||
	    e->kind == OP_TIMER || e->kind == OP_DELAY ||
	    e->kind == OP_KILL || e->handler_sig)
		return true;
	if (w->i + 6 >= w->n)
		return true;
	if (w->i == 0 || w->e[0].thread != e->thread)
		return true; /* a switch */
	if (win_has(w, 1) && w->e[2].thread != e->thread)
		return true;
	return false;
}

/* At a preemption: which thread was stopped and what it was about to do
 * (its next event), e.g. "T1 access(&counter) at counter_race.c:20". */
static void preempted(const struct win *w, char *buf, size_t len)
{
	struct event_cursor c;
	struct event v;

	buf[0] = 0;
	if (!w->e[1].preempt || w->i == 0 || w->k >= nvictims ||
	    victim_at[w->k] == NONE)
		return;
	event_cursor_at(&c, cur_v, victim_at[w->k]);
	if (read_event(&c, &v)) {
		v.handler_sig = 0; /* what it was about to do: not sent yet */
		event_line_ix(&v, &cur_ix, buf, len);
	}
}

/* Calls f for each line of the collapsed trace: a stretch of one thread's
 * events that do not matter is one line ("T1 runs 37 steps"); was is what
 * a preemption stopped. */
/*
 * asyncio's tasks in a collapsed stretch (a Python event names the task
 * it ran in: "... in client at counter.py:21 (MainThread, task Task-2)"):
 * each time another task's event comes, "Task-2 client at counter.py:21
 * resumes", so a single-threaded event loop's run reads as its tasks'.
 */
#define MAX_RESUMES 12
static char resumes[MAX_RESUMES][200];
static size_t nresumes, more_resumes;
static char last_task[64];

static void note_task(const char *text, bool collapsed)
{
	const char *end = strrchr(text, '(');
	const char *t = end ? strstr(end, "task ") : NULL;
	char task[64], frame[160];

	if (!t || (t != end + 1 && strncmp(t - 2, ", ", 2))) {
		last_task[0] = 0;
		return;
	}
	t += 5;
	snprintf(task, sizeof(task), "%.*s", (int)strcspn(t, ")"), t);
	if (!strcmp(task, last_task))
		return;
	snprintf(last_task, sizeof(last_task), "%s", task);
	if (!collapsed)
		return;
	if (nresumes == MAX_RESUMES) {
		more_resumes++;
		return;
	}
	/* the program's frame: after the last " in ", else the first
	 * " at " (the event's own frame is the program's) */
	const char *stop = end > text ? end - 1 : end, *fr = NULL;

	for (const char *q = text; (q = strstr(q, " in ")) && q < stop; q++)
		fr = q + 4;
	if (!fr && (fr = strstr(text, " at ")) && fr < stop)
		fr += 4;
	if (!fr || fr >= stop)
		fr = stop;
	snprintf(frame, sizeof(frame), "%.*s", (int)(stop - fr), fr);
	snprintf(resumes[nresumes++], sizeof(resumes[0]), "%s%s%s resumes",
		 task, frame[0] ? " " : "", frame);
}

static void walk(void (*f)(void *ctx, const struct event *e,
			   const char *text, size_t collapsed, unsigned who,
			   const char *was),
		 void *ctx)
{
	char line[600], was[600];
	struct event first;
	size_t run = 0;
	struct win w;

	if (!cur_v->s.nevents)
		return;
	nresumes = more_resumes = 0;
	last_task[0] = 0;
	win_start(&w);
	do {
		const struct event *e = &w.e[1];

		if (!matters(&w)) {
			if (!run++) {
				first = *e;
				nresumes = more_resumes = 0;
			}
			/* Python events only (their locations are the
			 * policy's, tagged) */
			if (EVENT_PC_IS_POLICY(e->pc)) {
				event_line_ix(e, &cur_ix, line, sizeof(line));
				note_task(line, true);
			} else {
				last_task[0] = 0;
			}
			continue;
		}
		if (run > 1) {
			f(ctx, &first, NULL, run, first.thread, "");
		} else if (run) {
			event_line_ix(&first, &cur_ix, line, sizeof(line));
			f(ctx, &first, line, 0, first.thread, "");
		}
		run = 0;
		nresumes = more_resumes = 0;
		event_line_ix(e, &cur_ix, line, sizeof(line));
		note_task(line, false);
		preempted(&w, was, sizeof(was));
		f(ctx, e, line, 0, e->thread, was);
	} while (win_next(&w));
	if (run > 1 && !stop()) {
		f(ctx, &first, NULL, run, first.thread, "");
	} else if (run && !stop()) {
		event_line_ix(&first, &cur_ix, line, sizeof(line));
		f(ctx, &first, line, 0, first.thread, "");
	}
}

static void text_line(void *ctx, const struct event *e, const char *text,
		      size_t collapsed, unsigned who, const char *was)
{
	FILE *f = ctx;

	if (collapsed) {
		fprintf(f, "         T%u runs %zu steps\n", who, collapsed);
		for (size_t i = 0; i < nresumes; i++)
			fprintf(f, "           %s\n", esc(resumes[i]));
		if (more_resumes)
			fprintf(f, "           (%zu more tasks resume)\n",
				more_resumes);
		return;
	}
	if (!e->preempt) {
		fprintf(f, "  %5u  %s\n", e->step, text);
		return;
	}
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
			if (env_refused(&s->env[i], 1, NULL, 0, NULL, 0))
				fprintf(f, "   <-- %s: refused on replay "
					   "unless -e or --trust-env",
					env_is_loader_var(s->env[i])
						? "loader variable"
						: "not in the replayed set");
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
	if (s->nthread_ids) {
		/* to match the program's own logs (a pid, a tid) to T-numbers */
		int shown = 0;

		fprintf(f, "kernel ids:");
		for (int i = 0; i < s->nthread_ids && i < 64; i++)
			if (s->thread_ids[i])
				fprintf(f, "%s T%d %d", shown++ ? "," : "", i,
					(int)s->thread_ids[i]);
		if (s->nthread_ids > 64)
			fprintf(f, " (and %d more T-numbers)",
				s->nthread_ids - 64);
		fprintf(f, "\n");
	}
	if (s->cov_pairs) {
		fprintf(f, "coverage when saved: %llu of %llu conflicting "
			   "pair%s seen in both orders\n",
			(unsigned long long)s->cov_covered,
			(unsigned long long)s->cov_pairs,
			s->cov_pairs == 1 ? "" : "s");
		for (size_t i = 0; i < s->nuncovered; i++) {
			const struct schedule_pair *q = &s->uncovered[i];

			fprintf(f, "  not covered: ");
			esc_fputs(f, q->where_a[0] ? q->where_a : "?", 0);
			fprintf(f, " / ");
			esc_fputs(f, q->where_b[0] ? q->where_b : "?", 0);
			fprintf(f, " (%s, %s)\n", coverage_what_name(q->what),
				q->seen ? "one order seen"
					: "neither order seen");
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
	walk(text_line, f);
}

static void md_line(void *ctx, const struct event *e, const char *text,
		    size_t collapsed, unsigned who, const char *stopped)
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

		snprintf(was, sizeof(was), "%s", stopped);
		for (char *c = was; *c; c++)
			if (*c == ';' || *c == '#' || *c == '<' || *c == '>')
				*c = ',';
		fprintf(f, "    Note over T%u: preemption%s%s\n", who,
			was[0] ? ", stops " : "", was);
	}
	fprintf(f, "    T%u->>T%u: %u %s\n", who, who, e->step, esc);
}

static void text_collect(void *ctx, const struct event *e, const char *text,
			 size_t collapsed, unsigned who, const char *was)
{
	text_line(ctx, e, text, collapsed, who, was);
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

/* The length of a code fence no line of strs can end: longer than any
 * run of backticks in them, at least 4. */
static int md_fence_len(char *const *strs, int n, int at_least)
{
	int longest = at_least - 1;

	for (int i = 0; i < n; i++) {
		int run = 0;

		for (const char *c = strs[i]; c && *c; c++) {
			run = *c == '`' ? run + 1 : 0;
			if (run > longest)
				longest = run;
		}
	}
	return longest + 1;
}

static void md_fence(FILE *f, int len)
{
	for (int i = 0; i < len; i++)
		fputc('`', f);
	fputc('\n', f);
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
		int fence = md_fence_len(s->env, s->nenv, 4), nbad = 0;

		fprintf(f, "<details><summary>Environment (%d)</summary>\n\n",
			s->nenv);
		md_fence(f, fence);
		for (int i = 0; i < s->nenv; i++) {
			esc_fputs(f, s->env[i], 0);
			fputc('\n', f);
		}
		md_fence(f, fence);
		fprintf(f, "</details>\n\n");
		for (int i = 0; i < s->nenv; i++) {
			if (!env_refused(&s->env[i], 1, NULL, 0, NULL, 0))
				continue;
			char name[256];

			snprintf(name, sizeof(name), "%.*s",
				 (int)strcspn(s->env[i], "="), s->env[i]);
			fprintf(f, "%s", nbad++ ? ", " : "**Refused on replay "
						     "unless `-e` or "
						     "`--trust-env`:** ");
			md_code(f, name);
		}
		if (nbad)
			fprintf(f, "\n\n");
	}
	if (s->failure) {
		describe_schedule_failure(s, buf, sizeof(buf));
		fprintf(f, "**Failure:** ");
		md_code(f, buf);
		fprintf(f, "\n\n");
		if (s->message && s->message[0]) {
			int fence = md_fence_len(&s->message, 1, 4);

			md_fence(f, fence);
			fprintf(f, "%s\n", esc(s->message));
			md_fence(f, fence);
			fputc('\n', f);
		}
		if (s->nthread_backtraces) {
			int fence = md_fence_len(s->thread_backtraces,
						 s->nthread_backtraces, 4);

			fence = md_fence_len(s->thread_names,
					     s->nthread_names, fence);
			fprintf(f, "<details><summary>Threads at the "
				   "failure</summary>\n\n");
			md_fence(f, fence);
			print_backtraces(f, s->thread_backtraces,
					 bt_names(s), s->nthread_backtraces,
					 "");
			md_fence(f, fence);
			fprintf(f, "</details>\n\n");
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
	walk(md_line, f);
	fprintf(f, "```\n\n<details><summary>Trace as text</summary>\n\n"
		   "```\n");
	walk(text_collect, f);
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
	fprintf(f, "],\n  \"env_refused_on_replay\": [");
	for (int i = 0, k = 0; i < s->nenv; i++) {
		if (!env_refused(&s->env[i], 1, NULL, 0, NULL, 0))
			continue;
		char name[256];

		snprintf(name, sizeof(name), "%.*s",
			 (int)strcspn(s->env[i], "="), s->env[i]);
		fprintf(f, "%s", k++ ? ", " : "");
		json_string(f, name);
	}
	/* index = T-number; 0: not known */
	fprintf(f, "],\n  \"kernel_ids\": [");
	for (int i = 0; i < s->nthread_ids; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)s->thread_ids[i]);
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
	fprintf(f, ",\n  \"coverage\": ");
	if (s->cov_pairs) {
		fprintf(f, "{ \"pairs\": %llu, \"covered\": %llu, "
			   "\"not_covered\": [",
			(unsigned long long)s->cov_pairs,
			(unsigned long long)s->cov_covered);
		for (size_t i = 0; i < s->nuncovered; i++) {
			const struct schedule_pair *q = &s->uncovered[i];

			fprintf(f, "%s\n    { \"a\": ", i ? "," : "");
			json_string(f, q->where_a);
			fprintf(f, ", \"b\": ");
			json_string(f, q->where_b);
			fprintf(f, ", \"object\": \"%s\", \"seen\": \"%s\", "
				   "\"key_a\": \"%llx\", \"key_b\": \"%llx\" }",
				coverage_what_name(q->what),
				q->seen == 1   ? "a before b"
				: q->seen == 2 ? "b before a"
					       : "neither",
				(unsigned long long)q->a,
				(unsigned long long)q->b);
		}
		fprintf(f, "%s] }", s->nuncovered ? "\n  " : "");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"decisions\": [");
	for (size_t i = 0; i < s->ndecisions && !stop(); i++) {
		const struct decision *d = &s->decisions[i];

		fprintf(f, "%s\n    { \"step\": %u, \"kind\": \"%s\", "
			   "\"thread\": \"T%u\", \"timeout\": %s, "
			   "\"buffered\": %s, "
			   "\"index\": %u, \"alternatives\": %u }",
			i ? "," : "", d->step,
			d->kind == DEC_WAKE   ? "wake"
			: d->kind == DEC_POLL ? "poll"
					      : "run",
			d->thread,
			d->timeout == 1 ? "true" : "false",
			d->timeout == ALT_BUFFER ? "true" : "false", d->index,
			d->nalts);
	}
	fprintf(f, "\n  ],\n  \"events\": [");
	struct win w;

	if (s->nevents)
		win_start(&w);
	for (bool more = s->nevents && !stop(); more; more = win_next(&w)) {
		const struct event *e = &w.e[1];

		event_line_ix(e, &cur_ix, line, sizeof(line));
		fprintf(f, "%s\n    { \"step\": %u, \"thread\": \"T%u\", "
			   "\"op\": \"%s\", \"object\": \"0x%llx\", "
			   "\"pc\": \"0x%llx\", \"preemption\": %s, "
			   "\"text\": ",
			w.i ? "," : "", e->step, e->thread,
			e->kind == OP_CALL ? call_fn_name(e->fn)
					   : op_kind_name(e->kind),
			(unsigned long long)e->obj,
			(unsigned long long)e->pc,
			e->preempt ? "true" : "false");
		json_string(f, line);
		if (e->handler_sig)
			fprintf(f, ", \"handler_signal\": %u", e->handler_sig);
		if (e->kind == OP_KILL && e->sent_sig)
			fprintf(f, ", \"sent_signal\": %u", e->sent_sig);
		if (e->preempt) {
			char was[600];

			preempted(&w, was, sizeof(was));
			fprintf(f, ", \"preempted\": ");
			json_string(f, was[0] ? was : NULL);
		}
		fprintf(f, " }");
	}
	fprintf(f, "\n  ]\n}\n");
}

/* A schedule file as a view, or a script parsed; prints the error.  0 or
 * -1. */
static int load_view(const char *path, struct schedule_view *v)
{
	char head[6], err[512];
	struct schedule s;
	struct stat st;
	ssize_t n = -1;
	int fd;

	memset(v, 0, sizeof(*v));
	if (!stat(path, &st) && S_ISREG(st.st_mode) &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) >=
		    0) {
		n = read(fd, head, sizeof(head));
		close(fd);
	}
	if (n == (ssize_t)sizeof(head) && !memcmp(head, "PTLOOM", 6)) {
		if (schedule_view_open(path, v, err, sizeof(err))) {
			fprintf(stderr, "ptloom: %s: %s\n", esc(path), err);
			return -1;
		}
		return 0;
	}
	if (load_any_schedule(path, &s))
		return -1;
	schedule_view_of(v, &s);
	return 0;
}

/* A file cut short while mapped: the one line, and out (exit 2). */
static void on_sigbus(int sig)
{
	static const char msg[] = "ptloom: show: the schedule file was cut "
				  "short while it was being read\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	_exit(EXIT_USAGE);
}

/* The Markdown rendering of a schedule file (the GitHub job summary). */
int show_markdown_path(FILE *f, const char *path)
{
	struct schedule_view v;
	int r = 0;

	if (load_view(path, &v))
		return -1;
	if (prepare(&v))
		r = -1;
	else
		show_markdown(f, &v.s, path);
	unprepare();
	schedule_view_close(&v);
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
	struct schedule_view v;
	struct sigaction sa = { .sa_handler = on_sigbus };

	sigaction(SIGBUS, &sa, NULL);
	if (load_view(argv[optind], &v))
		return EXIT_USAGE;
	const struct schedule *s = &v.s;

	if (prepare(&v)) {
		fprintf(stderr, "ptloom: %s: %s\n", esc(argv[optind]),
			cur_changed ? "the file changed while it was being read"
				    : "out of memory");
		unprepare();
		schedule_view_close(&v);
		return EXIT_USAGE;
	}
	switch (fmt) {
	case FMT_TEXT:
		show_text(stdout, s, argv[optind]);
		break;
	case FMT_JSON:
		show_json(stdout, s);
		break;
	case FMT_MARKDOWN:
		show_markdown(stdout, s, argv[optind]);
		break;
	case FMT_SCRIPT:
		schedule_view_write_script(stdout, &v);
		break;
	case FMT_HTML:
		show_html(stdout, &v, argv[optind], &cur_ix, cur_nthreads);
		break;
	}
	fflush(stdout);
	bool changed = cur_changed;

	if (getenv("PTLOOM_SHOW_STATS")) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "ptloom: show: %zu events, %zu symbols, %llu "
				"symbol probes, %llu event reads, %zu-byte "
				"file, peak RSS %ld KiB\n", s->nevents, s->nsyms,
			(unsigned long long)sym_probes,
			(unsigned long long)events_read, v.maplen,
			ru.ru_maxrss);
	}
	unprepare();
	schedule_view_close(&v);
	if (changed) {
		fprintf(stderr, "ptloom: %s: the file changed while it was "
				"being read; the output above is incomplete\n",
			esc(argv[optind]));
		return EXIT_USAGE;
	}
	if (cli_interrupted) {
		fprintf(stderr, "ptloom: show interrupted by %s; the output "
				"above is incomplete\n",
			signal_name(cli_interrupted));
		return exit_interrupted();
	}
	return EXIT_PASS;
}
