/*
 * Following a recorded run inside a larger run (follow.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "follow.h"

/* event addresses carry their process image's tag in the top 16 bits
 * (tracer/process.h): the recording's process is another image */
#define ADDR_MASK 0x0000ffffffffffffull

struct follower {
	const struct event *ev;
	size_t nev;
	const struct decision *dec;
	size_t ndec;
	size_t k;		/* the next recorded event to take */
	size_t dk;		/* the next recorded wait or wake decision */
	size_t *next_same;	/* [i]: the next event of ev[i]'s thread */
	size_t *head;		/* [local thread]: its next recorded event */
	int nhead;
	int nthreads;		/* local threads so far */
	size_t extra;
	bool diverged;
	char why[256];
};

struct follow_set {
	struct follower **f;
	int nf;
	/* [run thread]: follower + 1 (0: none) and the local T-number */
	int *of, *local;
	int nth;
};

struct follower *follower_new(const struct event *ev, size_t nev,
			      const struct decision *dec, size_t ndec)
{
	struct follower *f = calloc(1, sizeof(*f));
	int maxt = 0;

	if (!f)
		return NULL;
	f->ev = ev;
	f->nev = nev;
	f->dec = dec;
	f->ndec = ndec;
	for (size_t i = 0; i < nev; i++)
		if (ev[i].thread + 1 > maxt)
			maxt = ev[i].thread + 1;
	f->next_same = malloc((nev + 1) * sizeof(*f->next_same));
	f->head = malloc(((size_t)maxt + 1) * sizeof(*f->head));
	if (!f->next_same || !f->head) {
		follower_free(f);
		return NULL;
	}
	f->nhead = maxt;
	for (int t = 0; t < maxt; t++)
		f->head[t] = nev;
	for (size_t i = nev; i-- > 0;) {
		f->next_same[i] = f->head[ev[i].thread];
		f->head[ev[i].thread] = i;
	}
	return f;
}

void follower_free(struct follower *f)
{
	if (!f)
		return;
	free(f->next_same);
	free(f->head);
	free(f);
}

void follower_status(const struct follower *f, struct follow_status *st)
{
	memset(st, 0, sizeof(*st));
	st->followed = f->k;
	st->recorded = f->nev;
	st->extra = f->extra;
	st->diverged = f->diverged;
	snprintf(st->why, sizeof(st->why), "%s", f->why);
}

static bool following(const struct follower *f)
{
	return !f->diverged && f->k < f->nev;
}

static void diverge(struct follower *f, const char *why)
{
	if (f->diverged)
		return;
	f->diverged = true;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

static bool same_pc(uint64_t a, uint64_t b)
{
	return !a || !b || (a & ADDR_MASK) == (b & ADDR_MASK);
}

/* Could the pending operation alt become the recorded event r? */
static bool alt_is(const struct alt *a, const struct event *r)
{
	if (a->kind == OP_TIMER || r->kind == OP_TIMER)
		return a->kind == r->kind;
	return a->kind == r->kind && a->fn == r->fn && same_pc(a->pc, r->pc);
}

/* Is the event that ran the recorded event r? */
static bool event_is(const struct event *e, const struct event *r)
{
	if (e->kind != r->kind)
		return false;
	if (e->kind == OP_TIMER)
		return true;
	if (e->fn != r->fn || !same_pc(e->pc, r->pc))
		return false;
	/* the descriptor: a test's write to its runner's pipe is not the
	 * write to its own pipe the recording made at the same call */
	if (e->kind == OP_READ || e->kind == OP_WRITE)
		return e->arg == r->arg;
	return true;
}

struct follow_set *follow_set_new(void)
{
	return calloc(1, sizeof(struct follow_set));
}

void follow_set_free(struct follow_set *fs)
{
	if (!fs)
		return;
	free(fs->f);
	free(fs->of);
	free(fs->local);
	free(fs);
}

int follow_set_add(struct follow_set *fs, struct follower *f)
{
	struct follower **n = realloc(fs->f, (size_t)(fs->nf + 1) * sizeof(*n));

	if (!n)
		return -1;
	fs->f = n;
	fs->f[fs->nf] = f;
	return fs->nf++;
}

void follow_set_thread(struct follow_set *fs, int thread, int id)
{
	if (thread < 0 || id < 0 || id >= fs->nf)
		return;
	if (thread >= fs->nth) {
		int n = thread + 64;
		int *a = realloc(fs->of, (size_t)n * sizeof(*a));

		if (!a)
			return;
		fs->of = a;
		a = realloc(fs->local, (size_t)n * sizeof(*a));
		if (!a)
			return;
		fs->local = a;
		for (int i = fs->nth; i < n; i++)
			fs->of[i] = 0;
		fs->nth = n;
	}
	fs->of[thread] = id + 1;
	fs->local[thread] = fs->f[id]->nthreads++;
}

int follow_set_of(const struct follow_set *fs, int thread)
{
	return thread >= 0 && thread < fs->nth ? fs->of[thread] - 1 : -1;
}

/* The follower of thread (following), its local T-number in *lt. */
static struct follower *of(const struct follow_set *fs, int thread, int *lt)
{
	int id = follow_set_of(fs, thread);

	if (id < 0 || !following(fs->f[id]))
		return NULL;
	*lt = fs->local[thread];
	return fs->f[id];
}

enum { FREE, DUE, LATER };

/* What alt is to its follower: due now, recorded for later, or free (a
 * thread of no follower, an extra point). */
static int classify(const struct follow_set *fs, const struct alt *a)
{
	int lt;
	struct follower *f = of(fs, a->thread, &lt);

	if (!f)
		return FREE;
	size_t h = lt < f->nhead ? f->head[lt] : f->nev;

	if (h >= f->nev || !alt_is(a, &f->ev[h]))
		return FREE;
	return h == f->k ? DUE : LATER;
}

/* A wait's or wake's choice among one follower's threads: its next
 * recorded decision of that kind. */
static int pick_decided(struct follow_set *fs, const struct choice *c)
{
	int lt, first = -1;
	struct follower *f = NULL;

	for (int i = 0; i < c->nalts; i++) {
		struct follower *g = of(fs, c->alts[i].thread, &lt);

		if (!g || (f && g != f))
			return 0; /* not one follower's alone */
		f = g;
	}
	if (!f)
		return 0;
	while (f->dk < f->ndec && f->dec[f->dk].kind == DEC_RUN)
		f->dk++;
	if (f->dk >= f->ndec || f->dec[f->dk].kind != c->kind) {
		diverge(f, c->kind == DEC_WAKE
				   ? "a wake chose among its waiters where the "
				     "recording had no such choice"
				   : "a wait chose what it sees where the "
				     "recording had no such choice");
		return 0;
	}
	const struct decision *d = &f->dec[f->dk++];

	if (c->kind == DEC_POLL)
		return d->index < c->nalts ? d->index : 0;
	for (int i = 0; i < c->nalts; i++) {
		of(fs, c->alts[i].thread, &lt);
		if (lt == d->thread && c->alts[i].timeout == d->timeout) {
			first = i;
			break;
		}
	}
	if (first < 0) {
		char why[128];

		snprintf(why, sizeof(why),
			 "the recording woke T%u, which is not waiting here",
			 d->thread);
		diverge(f, why);
		return 0;
	}
	return first;
}

static int follow_pick(void *ctx, const struct choice *c)
{
	struct follow_set *fs = ctx;
	int due = -1, free_ = -1;

	if (c->kind != DEC_RUN)
		return pick_decided(fs, c);
	for (int i = 0; i < c->nalts; i++) {
		int k = classify(fs, &c->alts[i]);

		if (k == FREE && i == 0)
			return 0; /* the default, where it may go */
		if (k == DUE && due < 0)
			due = i;
		if (k == FREE && free_ < 0)
			free_ = i;
	}
	if (due >= 0)
		return due;
	if (free_ >= 0)
		return free_;
	/* only recorded points for later: the one due cannot run */
	for (int i = 0; i < c->nalts; i++) {
		int lt;
		struct follower *f = of(fs, c->alts[i].thread, &lt);

		if (f) {
			char why[160];

			snprintf(why, sizeof(why),
				 "the recording's step %zu (T%u) cannot run "
				 "where it ran",
				 f->k, f->ev[f->k].thread);
			diverge(f, why);
		}
	}
	return 0;
}

static void follow_executed(void *ctx, const struct event *e)
{
	struct follow_set *fs = ctx;
	int lt;
	struct follower *f = of(fs, e->thread, &lt);

	if (!f) {
		int id = follow_set_of(fs, e->thread);

		if (id >= 0)
			fs->f[id]->extra++;
		return;
	}
	if (f->ev[f->k].thread == lt && event_is(e, &f->ev[f->k])) {
		f->head[lt] = f->next_same[f->k];
		f->k++;
		return;
	}
	size_t h = lt < f->nhead ? f->head[lt] : f->nev;

	if (h < f->nev && event_is(e, &f->ev[h]) &&
	    f->ev[f->k].thread != lt) {
		char why[160];

		snprintf(why, sizeof(why),
			 "T%d ran its recorded step %zu before step %zu "
			 "(T%u), where nothing else could run",
			 lt, h, f->k, f->ev[f->k].thread);
		diverge(f, why);
		return;
	}
	f->extra++;
}

struct strategy follow_set_strategy(struct follow_set *fs)
{
	return (struct strategy){ .ctx = fs,
				  .pick = follow_pick,
				  .executed = follow_executed };
}
