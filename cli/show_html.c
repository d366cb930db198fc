/*
 * ptloom show --format html: one self-contained page (inline CSS and SVG,
 * no script, nothing fetched) drawing the schedule as a timeline: a lane
 * per thread, a mark per scheduling point (its call and source line on
 * hover, as an SVG <title>), preemptions and wakes as arrows between lanes,
 * the failing step highlighted.  Long stretches of one thread without
 * anything of note are drawn as one bar ("T1 runs 37 steps"), so the page
 * stays small for large schedules.
 *
 * Every string from the file is escaped twice over: for the terminal rules
 * (analysis/escape.c: no control, valid UTF-8) and then for HTML.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../analysis/coverage.h"
#include "../analysis/escape.h"

#define LANE_H 34
#define LABEL_W 180
#define COL_W 16
#define TOP 70
#define MAX_COLS 20000 /* marks drawn; the rest is summarised */

/* Text from the file, safe in HTML text and attribute values; with
 * ESC_LINES its lines are kept, as <br/>. */
static void html_lines(FILE *f, const char *s, unsigned flags)
{
	char buf[4096];

	esc_text(buf, sizeof(buf), s ? s : "", flags);
	for (const char *c = buf; *c; c++) {
		switch (*c) {
		case '\n': fputs("<br/>", f); break;
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*c, f);
		}
	}
}

static void html(FILE *f, const char *s)
{
	html_lines(f, s, 0);
}

/* The code keys of the pairs the file lists as not covered, sorted. */
struct keys {
	uint64_t *k;
	size_t n;
};

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void keys_of(struct keys *ks, const struct schedule *s)
{
	ks->n = 0;
	ks->k = s->nuncovered ? malloc(2 * s->nuncovered * sizeof(*ks->k))
			      : NULL;
	if (!ks->k)
		return;
	for (size_t i = 0; i < s->nuncovered; i++) {
		ks->k[ks->n++] = s->uncovered[i].a;
		ks->k[ks->n++] = s->uncovered[i].b;
	}
	qsort(ks->k, ks->n, sizeof(*ks->k), cmp_key);
}

/* Is e one end of a pair not covered? */
static bool uncovered(const struct keys *ks, const struct event *e)
{
	uint64_t key;

	if (!ks->n || !coverage_what_of_event(e->kind, e->fn, e->arg,
					       &(bool){ false }))
		return false;
	key = coverage_key(e);
	return bsearch(&key, ks->k, ks->n, sizeof(*ks->k), cmp_key) != NULL;
}

/* Worth a mark of its own?  e with the events before (pv, when i > 0) and
 * after it (nx, when i + 1 < n). */
static bool notable(const struct keys *ks, const struct event *pv,
		    const struct event *e, const struct event *nx, size_t i,
		    size_t n)
{
	if (uncovered(ks, e))
		return true;
	if (e->preempt || e->decided || e->kind == OP_START ||
	    e->kind == OP_EXIT || e->kind == OP_EXIT_GROUP ||
	    e->kind == OP_CLONE || e->kind == OP_WOKEN ||
	    e->kind == OP_TIMEOUT || e->kind == OP_ANNOTATE ||
	    e->kind == OP_FUTEX_WAKE || e->kind == OP_CALL)
		return true;
	if (i + 8 >= n || i == 0 || pv->thread != e->thread)
		return true;
	return i + 1 < n && nx->thread != e->thread;
}

/* Columns: a notable event each; a quiet stretch shares one.  Does the
 * event at the window start a column (prev_notable: the one before was
 * notable), and is it notable? */
static bool new_col(const struct keys *ks, const struct win *w,
		    bool prev_notable, bool *is_notable)
{
	*is_notable = notable(ks, &w->e[0], &w->e[1], &w->e[2], w->i, w->n);
	return *is_notable || w->i == 0 || prev_notable ||
	       w->e[0].thread != w->e[1].thread;
}

/* Does the event after the window's start a column? */
static bool next_new_col(const struct keys *ks, const struct win *w,
			 bool is_notable)
{
	if (w->i + 1 >= w->n)
		return true;
	return is_notable || w->e[1].thread != w->e[2].thread ||
	       notable(ks, &w->e[1], &w->e[2], &w->e[3], w->i + 1, w->n);
}

static int lane_y(unsigned t)
{
	return TOP + (int)t * LANE_H + LANE_H / 2;
}

/* The process of thread t: the tracer names a thread of another process
 * than the first "P<n> <comm> T<k>" (process_thread_label); P0 otherwise. */
static long process_of(const struct schedule *s, int t)
{
	const char *n = t < s->nthread_names ? s->thread_names[t] : NULL;
	char *end;
	long p;

	if (!n || n[0] != 'P' || n[1] < '0' || n[1] > '9')
		return 0;
	p = strtol(n + 1, &end, 10);
	return *end == ' ' && p > 0 && p < SCHEDULE_MAX_THREADS ? p : 0;
}

/* A strip at the left of each lane, one group per process, so that the
 * lanes of one process read as one: <g class="process" id="process-P1">. */
static void processes(FILE *f, const struct schedule *s, int nthreads)
{
	static const char *const colour[] = { "#3569c8", "#2a9d3a", "#8a4fbf",
					      "#c8a035", "#c8356f" };
	/* next[t]: the next thread of t's process; last[p]: its last one */
	int *next = malloc(((size_t)nthreads + 1) * sizeof(*next));
	int *last = malloc(SCHEDULE_MAX_THREADS * sizeof(*last));
	int *first = malloc(((size_t)nthreads + 1) * sizeof(*first));

	if (!next || !last || !first)
		goto out;
	for (long p = 0; p < SCHEDULE_MAX_THREADS; p++)
		last[p] = -1;
	for (int t = 0; t < nthreads; t++) {
		long p = process_of(s, t);

		first[t] = last[p] < 0;
		next[t] = -1;
		if (last[p] >= 0)
			next[last[p]] = t;
		last[p] = t;
	}
	for (int t = 0; t < nthreads; t++) {
		long p = process_of(s, t);

		if (!first[t])
			continue;
		fprintf(f, "<g class=\"process\" id=\"process-P%ld\" "
			   "fill=\"%s\"><title>process P%ld:", p,
			colour[p % 5], p);
		for (int u = t; u >= 0; u = next[u])
			fprintf(f, " T%d", u);
		fprintf(f, "</title>");
		for (int u = t; u >= 0; u = next[u])
			fprintf(f, "<rect x=\"0\" y=\"%d\" width=\"4\" "
				   "height=\"%d\"/>", TOP + u * LANE_H, LANE_H);
		fprintf(f, "</g>\n");
	}
out:
	free(next);
	free(last);
	free(first);
}

/* The exploration's coverage when it saved the file: the counts and a
 * table of the pairs not seen in both orders (id "coverage"). */
static void pairs_table(FILE *f, const struct schedule *s)
{
	fprintf(f, "<p class=\"meta\" id=\"coverage\">coverage when saved: "
		   "%llu of %llu conflicting pair%s seen in both orders",
		(unsigned long long)s->cov_covered,
		(unsigned long long)s->cov_pairs,
		s->cov_pairs == 1 ? "" : "s");
	if (s->cov_pairs - s->cov_covered > s->nuncovered)
		fprintf(f, " (%zu of the %llu not listed below)",
			s->nuncovered,
			(unsigned long long)(s->cov_pairs - s->cov_covered));
	fprintf(f, "</p>\n");
	if (!s->nuncovered)
		return;
	fprintf(f, "<table class=\"pairs\" id=\"not-covered\">\n<tr><th>"
		   "operation a</th><th>operation b</th><th>on</th><th>order "
		   "seen</th></tr>\n");
	for (size_t i = 0; i < s->nuncovered; i++) {
		const struct schedule_pair *q = &s->uncovered[i];

		fprintf(f, "<tr class=\"uncovered\"><td>");
		html(f, q->where_a && q->where_a[0] ? q->where_a : "?");
		fprintf(f, "</td><td>");
		html(f, q->where_b && q->where_b[0] ? q->where_b : "?");
		fprintf(f, "</td><td>%s</td><td>%s</td></tr>\n",
			coverage_what_name(q->what),
			q->seen == 1   ? "a before b only"
			: q->seen == 2 ? "b before a only"
				       : "neither");
	}
	fprintf(f, "</table>\n");
}

void show_html(FILE *f, const struct schedule_view *v, const char *path,
	       const struct sym_index *ix, int nthreads)
{
	const struct schedule *s = &v->s;
	size_t n = s->nevents;
	char line[700], desc[800] = "";
	bool nb = false, pnb = false;
	int ncols = 0;
	struct win w;
	struct keys ks;

	keys_of(&ks, s);
	/* a first pass counts the columns, for the page's width */
	if (n) {
		win_start(&w);
		do {
			pnb = nb;
			ncols += new_col(&ks, &w, pnb, &nb);
		} while (win_next(&w));
	}
	int drawn = ncols < MAX_COLS ? ncols : MAX_COLS;
	int width = LABEL_W + (drawn + 2) * COL_W;
	int height = TOP + (nthreads ? nthreads : 1) * LANE_H + 40;

	fprintf(f, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/"
		   "xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
		   "<title>ptloom schedule ");
	html(f, path);
	fprintf(f, "</title>\n<style>\n"
		   "body { font: 13px/1.4 system-ui, sans-serif; margin: 1em; "
		   "color: #222; }\n"
		   "h1 { font-size: 16px; margin: 0 0 .3em; }\n"
		   ".meta { color: #555; margin: 0 0 .6em; }\n"
		   ".fail { color: #b00; font-weight: bold; }\n"
		   ".scroll { overflow-x: auto; border: 1px solid #ddd; }\n"
		   "svg text { font: 12px monospace; }\n"
		   ".lane line { stroke: #ccc; }\n"
		   ".lane:nth-child(odd) rect { fill: #f7f7f7; }\n"
		   ".lane:nth-child(even) rect { fill: #fff; }\n"
		   ".mark circle { fill: #3569c8; }\n"
		   ".mark.preempt circle { fill: #e08000; }\n"
		   ".mark.failing circle { fill: #c00; stroke: #600; "
		   "stroke-width: 3; }\n"
		   ".mark.uncovered circle { stroke: #8a4fbf; "
		   "stroke-width: 3; fill: #fff; }\n"
		   ".mark:hover circle { r: 7; }\n"
		   "table.pairs { border-collapse: collapse; margin: .4em 0 "
		   "1em; }\n"
		   "table.pairs td, table.pairs th { border: 1px solid #ddd; "
		   "padding: 2px 6px; text-align: left; }\n"
		   "tr.uncovered td { color: #8a4fbf; }\n"
		   ".run rect { fill: #9db3e0; }\n"
		   ".arrow.preempt { stroke: #e08000; }\n"
		   ".arrow.wake { stroke: #2a9d3a; stroke-dasharray: 4 3; }\n"
		   ".arrow { stroke-width: 1.5; fill: none; }\n"
		   "</style>\n</head>\n<body>\n<h1>ptloom schedule ");
	html(f, path);
	fprintf(f, "</h1>\n<p class=\"meta\">");
	if (s->argc) {
		char cmd[4096];

		shell_join(cmd, sizeof(cmd), s->argv, s->argc);
		fprintf(f, "program <code>");
		html(f, cmd);
		fprintf(f, "</code> &#183; ");
	}
	fprintf(f, "%zu steps, %u preemption%s, seed %llu, trace hash "
		   "%016llx</p>\n", n, s->preemptions,
		s->preemptions == 1 ? "" : "s", (unsigned long long)s->seed,
		(unsigned long long)s->trace_hash);
	if (s->failure) {
		describe_schedule_failure(s, desc, sizeof(desc));
		fprintf(f, "<p class=\"fail\" id=\"failure\">failure: ");
		html(f, desc);
		if (s->message && s->message[0]) {
			fprintf(f, "<br/>");
			html_lines(f, s->message, ESC_LINES);
		}
		fprintf(f, "</p>\n");
	}
	if (s->cov_pairs)
		pairs_table(f, s);
	if (drawn < ncols)
		fprintf(f, "<p class=\"meta\">The first %d of %d columns are "
			   "drawn.</p>\n", drawn, ncols);
	fprintf(f, "<div class=\"scroll\">\n<svg xmlns=\"http://www.w3.org/"
		   "2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">"
		   "\n<defs>\n<marker id=\"head-preempt\" viewBox=\"0 0 10 10\" "
		   "refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
		   "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" "
		   "fill=\"#e08000\"/></marker>\n<marker id=\"head-wake\" "
		   "viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" "
		   "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L10,5 "
		   "L0,10 z\" fill=\"#2a9d3a\"/></marker>\n</defs>\n",
		width, height, width, height);
	fprintf(f, "<text x=\"%d\" y=\"%d\">step &#8594;</text>\n", LABEL_W,
		TOP - 20);
	fprintf(f, "<g id=\"lanes\">\n");
	for (int t = 0; t < nthreads; t++) {
		fprintf(f, "<g class=\"lane\" id=\"lane-T%d\"><rect x=\"0\" "
			   "y=\"%d\" width=\"%d\" height=\"%d\"/><line x1=\"%d\" "
			   "y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text x=\"6\" "
			   "y=\"%d\">T%d", t, TOP + t * LANE_H, width, LANE_H,
			LABEL_W, lane_y((unsigned)t), width, lane_y((unsigned)t),
			lane_y((unsigned)t) + 4, t);
		if (t < s->nthread_names && s->thread_names[t] &&
		    s->thread_names[t][0]) {
			fprintf(f, " (");
			html(f, s->thread_names[t]);
			fprintf(f, ")");
		}
		fprintf(f, "</text></g>\n");
	}
	fprintf(f, "</g>\n");
	processes(f, s, nthreads);
	fprintf(f, "<g id=\"marks\">\n");
	/* the latest futex wake drawn: who woke a waiter */
	int wake_col = -1, prev_col = -1, col = -1;
	unsigned wake_thread = 0;
	/* a quiet stretch being drawn as one bar */
	struct {
		uint32_t step, end;
		unsigned thread;
		size_t count;
		int x, y;
	} bar = { 0 };

	nb = false;
	if (n)
		win_start(&w);
	for (bool more = n && !show_stopped(); more;
	     more = win_next(&w), prev_col = col) {
		const struct event *e = &w.e[1];
		size_t i = w.i;

		pnb = nb;
		bool first = new_col(&ks, &w, pnb, &nb);

		col += first;
		if (col >= drawn)
			break;
		int x = LABEL_W + (col + 1) * COL_W, y = lane_y(e->thread);
		bool last = next_new_col(&ks, &w, nb);

		if (!first || !last) {
			if (first)
				bar.count = 0, bar.step = e->step,
				bar.thread = e->thread, bar.x = x, bar.y = y;
			bar.count++;
			bar.end = e->step;
			if (last)
				fprintf(f, "<g class=\"run\"><rect x=\"%d\" "
					   "y=\"%d\" width=\"%d\" height=\"8\" "
					   "rx=\"3\"/><title>steps %u-%u: T%u "
					   "runs %zu steps</title></g>\n",
					bar.x - COL_W / 2 + 2, bar.y - 4,
					COL_W - 4, bar.step, bar.end,
					bar.thread, bar.count);
			continue;
		}
		bool failing = s->failure && i + 1 == n;

		if (e->preempt && i > 0) {
			int py = lane_y(w.e[0].thread);
			int px = LABEL_W + (prev_col + 1) * COL_W;

			fprintf(f, "<path class=\"arrow preempt\" d=\"M%d,%d "
				   "L%d,%d\" marker-end=\"url(#head-preempt)\">"
				   "<title>preemption at step %u</title></path>"
				   "\n", px, py, x - 5, y + (py < y ? -5 : 5),
				e->step);
		}
		if (e->kind == OP_WOKEN && wake_col >= 0 &&
		    wake_thread != e->thread) {
			int wy = lane_y(wake_thread);
			int wx = LABEL_W + (wake_col + 1) * COL_W;

			fprintf(f, "<path class=\"arrow wake\" d=\"M%d,%d "
				   "L%d,%d\" marker-end=\"url(#head-wake)\">"
				   "<title>T%u wakes T%u</title></path>\n",
				wx, wy, x - 5, y + (wy < y ? -5 : 5),
				wake_thread, e->thread);
		}
		if (e->kind == OP_FUTEX_WAKE) {
			wake_col = col;
			wake_thread = e->thread;
		}
		bool unc = uncovered(&ks, e);

		event_line_ix(e, ix, line, sizeof(line));
		fprintf(f, "<g class=\"mark%s%s%s\" id=\"step-%u\"><circle "
			   "cx=\"%d\" cy=\"%d\" r=\"5\"/><title>step %u: ",
			e->preempt ? " preempt" : "", failing ? " failing" : "",
			unc ? " uncovered" : "", e->step, x, y, e->step);
		html(f, line);
		if (e->preempt)
			fprintf(f, " (preemption)");
		if (unc)
			fprintf(f, " (one end of a conflicting pair not seen "
				   "in both orders)");
		if (failing) {
			fprintf(f, " &#8212; the last step before the failure: ");
			html(f, desc);
		}
		fprintf(f, "</title></g>\n");
	}
	fprintf(f, "</g>\n</svg>\n</div>\n<p class=\"meta\">Hover a mark for "
		   "its step, call and source line. Orange: preemptions; green "
		   "dashes: wakes; red: the failing step%s.</p>\n</body>\n"
		   "</html>\n",
		ks.n ? "; purple rings: an end of a conflicting pair the "
		       "exploration had not seen in both orders" : "");
	free(ks.k);
}
