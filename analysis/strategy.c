/*
 * The sampling strategies (random, PCT) and the replay strategy; the
 * systematic one lives in analysis/dfs.c.  See strategy.h.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "strategy.h"

static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define PCT_THREADS 4096

struct sampler {
	bool pct;
	uint64_t seed, rng;
	int depth;
	uint64_t change[16];  /* PCT priority change points (steps) */
	int nchange;
	int64_t prio[PCT_THREADS];
	bool has_prio[PCT_THREADS];
	int next_low;	      /* priorities below every initial one */
};

struct sampler *sampler_new(bool pct, uint64_t seed, int depth)
{
	struct sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pct = pct;
	s->seed = seed;
	s->depth = depth < 1 ? 1 : depth > 16 ? 16 : depth;
	return s;
}

void sampler_begin(struct sampler *s, uint64_t run, uint64_t est_steps)
{
	s->rng = s->seed * 0x100000001b3ull ^ (run + 1) * 0x9e3779b97f4a7c15ull;
	mix(&s->rng);
	memset(s->has_prio, 0, sizeof(s->has_prio));
	s->next_low = 0;
	s->nchange = 0;
	if (est_steps < 2)
		est_steps = 2;
	for (int i = 0; i < s->depth - 1; i++)
		s->change[s->nchange++] = 1 + mix(&s->rng) % est_steps;
}

static int64_t prio_of(struct sampler *s, int t)
{
	if (t >= PCT_THREADS)
		t = PCT_THREADS - 1;
	if (!s->has_prio[t]) {
		/* initial priorities are large and random, above d */
		s->prio[t] = 1000 + (int64_t)(mix(&s->rng) % 1000000);
		s->has_prio[t] = true;
	}
	return s->prio[t];
}

static int sampler_pick(void *ctx, const struct choice *c)
{
	struct sampler *s = ctx;

	if (!s->pct || c->kind != DEC_RUN)
		return (int)(mix(&s->rng) % (uint64_t)c->nalts);
	/* a change point lowers the running thread's priority */
	for (int i = 0; i < s->nchange; i++)
		if (s->change[i] == c->step && c->current >= 0) {
			prio_of(s, c->current);
			s->prio[c->current < PCT_THREADS ? c->current
							 : PCT_THREADS - 1] =
				s->next_low++ - 1000000;
		}
	int best = -1;
	int64_t bp = 0;

	/* the highest priority among threads that make progress; a
	 * yielding (spinning) thread only when nobody else can run, or
	 * spinners pass the turn among themselves forever */
	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (int i = 0; i < c->nalts; i++) {
			const struct alt *a = &c->alts[i];

			if (a->timeout || (!pass && a->yield))
				continue;
			/* only spinners: take turns (round-robin order, the
			 * one that just spun last) */
			if (pass)
				return i;
			int64_t p = prio_of(s, a->thread);

			if (best < 0 || p > bp) {
				best = i;
				bp = p;
			}
		}
	if (best < 0)
		best = 0;
	/* the machine may be slow: rarely let a timed wait expire */
	if (best >= 0 && !c->alts[best].timeout) {
		for (int i = 0; i < c->nalts; i++)
			if (c->alts[i].timeout && mix(&s->rng) % 64 == 0)
				return i;
	}
	return best;
}

struct strategy sampler_strategy(struct sampler *s)
{
	return (struct strategy){ .ctx = s, .pick = sampler_pick };
}

void sampler_free(struct sampler *s)
{
	free(s);
}

void replay_init(struct replay_strategy *r, const struct decision *dec,
		 size_t ndec, bool strict)
{
	memset(r, 0, sizeof(*r));
	r->dec = dec;
	r->ndec = ndec;
	r->strict = strict;
	r->diverged_at = -1;
}

/* Lenient: decisions are keyed by step; a step without one, or whose
 * recorded thread cannot run, takes the default alternative. */
static int replay_by_step(struct replay_strategy *r, const struct choice *c)
{
	while (r->pos < r->ndec && r->dec[r->pos].step < c->step)
		r->pos++;
	if (r->pos >= r->ndec || r->dec[r->pos].step != c->step)
		return 0;
	const struct decision *d = &r->dec[r->pos++];

	for (int i = 0; i < c->nalts; i++)
		if (c->alts[i].thread == d->thread &&
		    c->alts[i].timeout == d->timeout && d->kind == c->kind)
			return i;
	return 0;
}

static int replay_pick(void *ctx, const struct choice *c)
{
	struct replay_strategy *r = ctx;

	if (!r->strict)
		return replay_by_step(r, c);

	if (r->pos >= r->ndec) {
		r->extra++;
		if (r->strict && r->diverged_at < 0) {
			r->diverged_at = (long)r->pos;
			r->diverged_step = c->step;
			snprintf(r->why, sizeof(r->why),
				 "the program reached a choice point after "
				 "the last recorded decision");
		}
		return 0;
	}
	const struct decision *d = &r->dec[r->pos];
	int found = -1;

	/* the recorded index, when it still names the same thread */
	if (d->nalts && d->index < c->nalts &&
	    c->alts[d->index].thread == d->thread &&
	    c->alts[d->index].timeout == d->timeout && d->kind == c->kind)
		found = d->index;
	for (int i = 0; found < 0 && i < c->nalts; i++)
		if (c->alts[i].thread == d->thread &&
		    c->alts[i].timeout == d->timeout && d->kind == c->kind)
			found = i;
	if (found < 0) {
		if (r->diverged_at < 0) {
			r->diverged_at = (long)r->pos;
			r->diverged_step = c->step;
			snprintf(r->why, sizeof(r->why),
				 "recorded %s T%u%s, but T%u cannot %s now",
				 d->kind == DEC_WAKE ? "wake" : "run",
				 d->thread, d->timeout ? " (times out)" : "",
				 d->thread,
				 d->kind == DEC_WAKE ? "be woken" : "run");
		}
		if (r->strict)
			return -1;
		r->pos++;
		return 0;
	}
	r->pos++;
	return found;
}

struct strategy replay_strategy(struct replay_strategy *r)
{
	return (struct strategy){ .ctx = r, .pick = replay_pick };
}
