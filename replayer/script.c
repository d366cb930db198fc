/*
 * Schedule scripts: the text form of a schedule that a person can read,
 * edit, or write from scratch to pin down one interleaving.
 *
 *   # ptloom schedule script v1
 *   # program: ./bank
 *   seed 0
 *   points sync
 *   # step 12: T1 pthread_mutex_lock(0x404060)
 *   run T2
 *   run T1            # comments allowed after decisions
 *   wake T3
 *   timeout T1        # the timed wait of T1 times out here
 *   buffer T2         # T2's store enters its store buffer (x86-TSO)
 *
 * One decision per line, in order: "run Tn" (Tn performs its next
 * operation), "wake Tn" (a wake of fewer than all waiters picks Tn),
 * "timeout Tn" (Tn's timed wait times out now), "buffer Tn" (Tn's store
 * stays in its store buffer, tracer/tso.c), each optionally prefixed
 * with "step N:".  "seed N" and "points LIST" set those settings.  '#'
 * starts a comment anywhere.  A script names threads, not alternative
 * indexes, so its decisions have nalts = 0: the replayer matches them by
 * thread.
 *
 * The writer puts, before each decision, a comment describing the
 * operation that decision led to, so the script reads like the trace.
 * Like schedule files, scripts are untrusted input: any error is -EINVAL
 * with "line N: ..." in err.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, strdup, strndup */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/escape.h"
#include "schedule.h"

#define SCRIPT_HEADER "# ptloom schedule script v"
#define SCRIPT_VERSION 1
#define QUOTE_MAX 32 /* longest piece of input quoted in an error */

static const struct {
	const char *name;
	unsigned bit;
} point_sets[] = {
	{ "sync", POINTS_SYNC },
	{ "atomics", POINTS_ATOMICS },
	{ "races", POINTS_RACES },
	{ "tso", POINTS_TSO },
	/* --points was given: C-level points under the Python policy */
	{ "clevel", POINTS_CLEVEL },
};

#define NPOINT_SETS (sizeof(point_sets) / sizeof(point_sets[0]))

/* --- writing ------------------------------------------------------------- */

/* Text from the schedule goes into comments: a newline in it must not
 * end the comment and turn the rest into a directive. */
static void put_text(FILE *f, const char *s)
{
	esc_fputs(f, s, 0); /* no newline, no control, valid UTF-8 */
}

static bool is_fd_op(int kind)
{
	return kind == OP_READ || kind == OP_WRITE || kind == OP_POLL ||
	       kind == OP_ACCEPT || kind == OP_CONNECT;
}

static void put_event(FILE *f, const struct event *e)
{
	const char *name = e->kind == OP_CALL ? call_fn_name(e->fn) :
						op_kind_name(e->kind);

	fprintf(f, "# step %" PRIu32 ": T%u %s", e->step, (unsigned)e->thread,
		name);
	if (is_fd_op(e->kind))
		fprintf(f, "(fd %" PRIu64 ")", e->obj);
	else if (e->obj)
		fprintf(f, "(0x%" PRIx64 ")", e->obj);
	if (e->preempt)
		fputs("  [preemption]", f);
	fputc('\n', f);
}

/* The events of a schedule in memory, or of a view read one at a time. */
struct events_src {
	const struct schedule *s;
	size_t next;
	struct event_cursor c;
	bool view;
};

static bool src_next(struct events_src *src, struct event *e)
{
	if (src->view)
		return event_cursor_next(&src->c, e) > 0;
	if (src->next >= src->s->nevents)
		return false;
	*e = src->s->events[src->next++];
	return true;
}

static int write_script(FILE *f, const struct schedule *s,
			struct events_src *src)
{
	const char *sep = "";
	struct event e;
	bool have;
	size_t i;
	int a;

	fprintf(f, "%s%d\n", SCRIPT_HEADER, SCRIPT_VERSION);
	if (s->program && *s->program) {
		fputs("# program: ", f);
		put_text(f, s->program);
		fputc('\n', f);
	}
	if (s->argc > 1) {
		fputs("# arguments:", f);
		for (a = 1; a < s->argc; a++) {
			fputc(' ', f);
			put_text(f, s->argv[a]);
		}
		fputc('\n', f);
	}
	if (s->strategy && *s->strategy) {
		fputs("# recorded by strategy: ", f);
		put_text(f, s->strategy);
		fputc('\n', f);
	}
	if (s->fail_thread >= 0 && s->location && *s->location) {
		fprintf(f, "# failed in T%d at ", s->fail_thread);
		put_text(f, s->location);
		fputc('\n', f);
	}
	fprintf(f, "seed %" PRIu64 "\n", s->seed);
	fputs("points ", f);
	for (i = 0; i < NPOINT_SETS; i++) {
		if (s->points & point_sets[i].bit) {
			fprintf(f, "%s%s", sep, point_sets[i].name);
			sep = ",";
		}
	}
	fputs(*sep ? "\n" : "none\n", f);

	/* events and decisions are both in step order: merge them */
	have = src_next(src, &e);
	for (i = 0; i < s->ndecisions; i++) {
		const struct decision *d = &s->decisions[i];
		const char *verb = d->kind == DEC_WAKE ? "wake" :
				   d->kind == DEC_POLL ? "poll" :
				   d->timeout == ALT_BUFFER ? "buffer" :
				   d->timeout	       ? "timeout" :
							 "run";

		while (have && e.step < d->step)
			have = src_next(src, &e);
		if (have && e.step == d->step)
			put_event(f, &e);
		if (d->kind == DEC_POLL)
			fprintf(f, "poll T%u %u%s\n", (unsigned)d->thread,
				(unsigned)d->index,
				d->timeout ? " timeout" : "");
		else
			fprintf(f, "%s T%u\n", verb, (unsigned)d->thread);
	}
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

int schedule_write_script(FILE *f, const struct schedule *s)
{
	struct events_src src = { .s = s };

	return write_script(f, s, &src);
}

int schedule_view_write_script(FILE *f, const struct schedule_view *v)
{
	struct events_src src = { .s = &v->s, .view = true };

	event_cursor_start(&src.c, v);
	return write_script(f, &v->s, &src);
}

/* --- parsing ------------------------------------------------------------- */

struct parser {
	size_t line;
	char *err;
	size_t errlen;
	struct schedule *s;
	size_t cap;	/* allocated decisions */
	bool seed_set, points_set;
};

static int fail(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!ps->err || !ps->errlen)
		return -EINVAL;
	n = snprintf(ps->err, ps->errlen, "line %zu: ", ps->line);
	if (n >= 0 && (size_t)n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A word of the input, made safe and short enough to quote in an error. */
static const char *quote(const char *w, size_t n, char buf[QUOTE_MAX + 4])
{
	size_t i, m = n > QUOTE_MAX ? QUOTE_MAX : n;

	for (i = 0; i < m; i++) {
		unsigned char c = (unsigned char)w[i];

		buf[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	strcpy(buf + m, n > m ? "..." : "");
	return buf;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The next whitespace-separated word in [*p, end); false at the end. */
static bool next_word(const char **p, const char *end, const char **w,
		      size_t *n)
{
	const char *q = *p;

	while (q < end && is_space(*q))
		q++;
	if (q == end)
		return false;
	*w = q;
	while (q < end && !is_space(*q))
		q++;
	*n = (size_t)(q - *w);
	*p = q;
	return true;
}

static bool word_is(const char *w, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(w, lit, n);
}

/* Decimal (or 0x hex if allowed) digits only: no sign, no overflow past
 * max. */
static bool parse_num(const char *w, size_t n, uint64_t max, bool hex,
		      uint64_t *v)
{
	unsigned base = 10;
	uint64_t x = 0;
	size_t i = 0;

	if (hex && n > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return false;
	for (; i < n; i++) {
		unsigned d;

		if (w[i] >= '0' && w[i] <= '9')
			d = (unsigned)(w[i] - '0');
		else if (base == 16 && w[i] >= 'a' && w[i] <= 'f')
			d = (unsigned)(w[i] - 'a' + 10);
		else if (base == 16 && w[i] >= 'A' && w[i] <= 'F')
			d = (unsigned)(w[i] - 'A' + 10);
		else
			return false;
		if (x > (max - d) / base)
			return false;
		x = x * base + d;
	}
	*v = x;
	return true;
}

static int add_decision(struct parser *ps, const struct decision *d)
{
	struct schedule *s = ps->s;

	if (s->ndecisions == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct decision *nd;

		if (s->ndecisions >= SCHEDULE_MAX_DECISIONS)
			return fail(ps, "more than %u decisions",
				    SCHEDULE_MAX_DECISIONS);
		if (cap > SCHEDULE_MAX_DECISIONS)
			cap = SCHEDULE_MAX_DECISIONS;
		nd = realloc(s->decisions, cap * sizeof(*nd));
		if (!nd) {
			fail(ps, "out of memory");
			return -ENOMEM;
		}
		s->decisions = nd;
		ps->cap = cap;
	}
	s->decisions[s->ndecisions++] = *d;
	return 0;
}

static int parse_decision(struct parser *ps, const char *verb, size_t vn,
			  const char *p, const char *end, uint32_t step)
{
	struct decision d = { .step = step };
	char q[QUOTE_MAX + 4];
	const char *w;
	size_t n;
	uint64_t t;

	if (word_is(verb, vn, "wake"))
		d.kind = DEC_WAKE;
	else if (word_is(verb, vn, "poll"))
		d.kind = DEC_POLL;
	else if (word_is(verb, vn, "timeout"))
		d.timeout = 1;
	else if (word_is(verb, vn, "buffer"))
		d.timeout = ALT_BUFFER;
	if (!next_word(&p, end, &w, &n))
		return fail(ps, "'%s' needs a thread, like T1",
			    quote(verb, vn, q));
	if (n < 2 || w[0] != 'T' ||
	    !parse_num(w + 1, n - 1, UINT64_MAX, false, &t))
		return fail(ps, "expected a thread like T1, not '%s'",
			    quote(w, n, q));
	if (t >= SCHEDULE_MAX_THREADS)
		return fail(ps, "thread T%" PRIu64 " is out of range (T0..T%u)",
			    t, SCHEDULE_MAX_THREADS - 1);
	d.thread = (uint16_t)t;
	/* poll Tn K: what Tn's wait sees, the K-th alternative (0: all) */
	if (d.kind == DEC_POLL && next_word(&p, end, &w, &n)) {
		if (!parse_num(w, n, MAX_ALTS - 1, false, &t))
			return fail(ps, "expected an alternative (0 to %d) "
					"after 'poll T%u', not '%s'",
				    MAX_ALTS - 1, (unsigned)d.thread,
				    quote(w, n, q));
		d.index = (uint16_t)t;
		/* poll Tn K timeout: the wait's timeout came first */
		if (next_word(&p, end, &w, &n)) {
			if (!word_is(w, n, "timeout"))
				return fail(ps, "unexpected '%s' after the "
						"decision",
					    quote(w, n, q));
			d.timeout = 1;
		}
	}
	if (next_word(&p, end, &w, &n))
		return fail(ps, "unexpected '%s' after the decision",
			    quote(w, n, q));
	return add_decision(ps, &d);
}

static int parse_points(struct parser *ps, const char *p, const char *end)
{
	char q[QUOTE_MAX + 4];
	unsigned points = 0;
	bool any = false, none = false;

	while (p < end) {
		const char *w;
		size_t n, i;

		while (p < end && (is_space(*p) || *p == ','))
			p++;
		if (p == end)
			break;
		w = p;
		while (p < end && !is_space(*p) && *p != ',')
			p++;
		n = (size_t)(p - w);
		any = true;
		if (word_is(w, n, "none")) {
			none = true;
			continue;
		}
		for (i = 0; i < NPOINT_SETS; i++)
			if (word_is(w, n, point_sets[i].name))
				break;
		if (i == NPOINT_SETS)
			return fail(ps,
				    "unknown point set '%s' (expected sync, "
				    "atomics, races or clevel)",
				    quote(w, n, q));
		points |= point_sets[i].bit;
	}
	if (!any)
		return fail(ps, "'points' needs a list, like sync,atomics");
	if (none && points)
		return fail(ps, "'none' cannot be combined with point sets");
	ps->s->points = points;
	return 0;
}

static int parse_seed(struct parser *ps, const char *p, const char *end)
{
	char q[QUOTE_MAX + 4];
	const char *w;
	size_t n;

	if (!next_word(&p, end, &w, &n))
		return fail(ps, "'seed' needs a number");
	if (!parse_num(w, n, UINT64_MAX, true, &ps->s->seed))
		return fail(ps, "bad seed '%s'", quote(w, n, q));
	if (next_word(&p, end, &w, &n))
		return fail(ps, "unexpected '%s' after the seed",
			    quote(w, n, q));
	return 0;
}

/* "step N:" before a decision; on return *p is past the colon. */
static int parse_step(struct parser *ps, const char **p, const char *end,
		      uint32_t *step)
{
	char q[QUOTE_MAX + 4];
	const char *c = *p, *w;
	uint64_t v;

	while (c < end && is_space(*c))
		c++;
	w = c;
	while (c < end && !is_space(*c) && *c != ':')
		c++;
	if (c == w)
		return fail(ps,
			    "'step' needs a number, like 'step 12: run T1'");
	if (!parse_num(w, (size_t)(c - w), UINT32_MAX - 1, false, &v))
		return fail(ps, "bad step number '%s'",
			    quote(w, (size_t)(c - w), q));
	while (c < end && is_space(*c))
		c++;
	if (c == end || *c != ':')
		return fail(ps, "expected ':' after 'step %" PRIu64 "'", v);
	*p = c + 1;
	*step = (uint32_t)v;
	return 0;
}

static int parse_line(struct parser *ps, const char *p, const char *end)
{
	char q[QUOTE_MAX + 4];
	uint32_t step = SCHEDULE_STEP_UNKNOWN;
	bool has_step = false;
	const char *w;
	size_t n;
	int r;

	if (!next_word(&p, end, &w, &n))
		return 0;
	if (word_is(w, n, "step")) {
		r = parse_step(ps, &p, end, &step);
		if (r)
			return r;
		has_step = true;
		if (!next_word(&p, end, &w, &n))
			return fail(ps, "'step %" PRIu32 ":' must be followed "
					"by run, wake, poll, timeout or buffer",
				    step);
	}
	if (word_is(w, n, "run") || word_is(w, n, "wake") ||
	    word_is(w, n, "poll") || word_is(w, n, "timeout") ||
	    word_is(w, n, "buffer"))
		return parse_decision(ps, w, n, p, end, step);
	if (has_step)
		return fail(ps, "expected run, wake, poll, timeout or buffer "
				"after 'step %" PRIu32 ":', not '%s'",
			    step, quote(w, n, q));
	if (word_is(w, n, "seed")) {
		if (ps->seed_set)
			return fail(ps, "'seed' given twice");
		ps->seed_set = true;
		return parse_seed(ps, p, end);
	}
	if (word_is(w, n, "points")) {
		if (ps->points_set)
			return fail(ps, "'points' given twice");
		ps->points_set = true;
		return parse_points(ps, p, end);
	}
	return fail(ps,
		    "unknown directive '%s' (expected run, wake, timeout, "
		    "buffer, step, seed or points)",
		    quote(w, n, q));
}

/* "# ptloom schedule script vN" on the first line names the version. */
static int check_header(struct parser *ps, const char *p, const char *end)
{
	size_t hl = strlen(SCRIPT_HEADER), n;
	char q[QUOTE_MAX + 4];
	const char *w;
	uint64_t v;

	if ((size_t)(end - p) < hl || memcmp(p, SCRIPT_HEADER, hl))
		return 0;
	p += hl;
	w = p;
	while (p < end && !is_space(*p))
		p++;
	n = (size_t)(p - w);
	if (!parse_num(w, n, UINT32_MAX, false, &v))
		return fail(ps, "bad script version '%s'", quote(w, n, q));
	if (v != SCRIPT_VERSION)
		return fail(ps,
			    "schedule script version %" PRIu64 " is not "
			    "supported (this ptloom reads version %d)",
			    v, SCRIPT_VERSION);
	return 0;
}

static int init_script_schedule(struct schedule *s)
{
	s->format_version = SCHEDULE_FORMAT_VERSION;
	s->points = POINTS_SYNC;
	s->fail_thread = -1;
	s->program = strdup("");
	s->strategy = strdup("script");
	s->ptloom_version = strdup("");
	s->location = strdup("");
	s->message = strdup("");
	if (!s->program || !s->strategy || !s->ptloom_version ||
	    !s->location || !s->message)
		return -ENOMEM;
	return 0;
}

int schedule_parse_script(const char *text, size_t len, struct schedule *s,
			  char *err, size_t errlen)
{
	struct parser ps = { .line = 1, .err = err, .errlen = errlen, .s = s };
	const char *p = text, *end = text ? text + len : text;
	int r;

	memset(s, 0, sizeof(*s));
	if (err && errlen)
		err[0] = '\0';
	if (len && !text)
		return fail(&ps, "no text");
	if (len > SCHEDULE_MAX_BYTES) {
		if (err && errlen)
			snprintf(err, errlen,
				 "script of %zu bytes is larger than the "
				 "limit of %u MiB",
				 len, SCHEDULE_MAX_BYTES >> 20);
		return -EINVAL;
	}
	if (init_script_schedule(s)) {
		r = -ENOMEM;
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	/* a byte-order mark from an editor is not a directive */
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *hash;

		if (memchr(p, '\0', (size_t)(eol - p))) {
			r = fail(&ps, "NUL byte: not a text file");
			goto out_free;
		}
		if (ps.line == 1 && (r = check_header(&ps, p, eol)))
			goto out_free;
		hash = memchr(p, '#', (size_t)(eol - p));
		r = parse_line(&ps, p, hash ? hash : eol);
		if (r)
			goto out_free;
		p = nl ? nl + 1 : end;
		ps.line++;
	}
	return 0;
out_free:
	schedule_free(s);
	return r;
}
