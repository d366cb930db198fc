/*
 * Minimisation: see minimize.h.
 */
#include <stdlib.h>
#include <string.h>
#include "explore.h"
#include "minimize.h"
#include "strategy.h"

size_t minimize_count_decisions(const struct run_result *r)
{
	size_t k = 0;

	for (size_t i = 0; i < r->ndecisions; i++)
		k += r->decisions[i].index != 0;
	return k;
}

/* Is the decision at step a preemption in run r? */
static bool preempts(const struct run_result *r, const struct decision *d)
{
	if (d->kind != DEC_RUN)
		return false;
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].step == d->step)
			return r->events[i].preempt;
	return false;
}

/* Candidate: best's decisions without number `drop`. */
static bool try_without(minimize_run_fn run, void *ctx, struct run_result *best,
			size_t drop, struct minimize_stats *st, bool need_fewer)
{
	size_t n = best->ndecisions;
	struct decision *dec = malloc((n ? n : 1) * sizeof(*dec));
	struct run_result rr;

	if (!dec)
		return false;
	memcpy(dec, best->decisions, drop * sizeof(*dec));
	memcpy(dec + drop, best->decisions + drop + 1,
	       (n - drop - 1) * sizeof(*dec));
	st->runs++;
	int e = run(ctx, dec, n - 1, &rr);

	free(dec);
	if (e)
		return false;
	bool better = rr.failure != FAIL_NONE && fingerprint_equal(&rr, best) &&
		      (need_fewer ? rr.preemptions < best->preemptions
				  : rr.preemptions <= best->preemptions &&
					    minimize_count_decisions(&rr) <
						    minimize_count_decisions(best));

	if (better) {
		run_result_free(best);
		*best = rr;
	} else {
		run_result_free(&rr);
	}
	return better;
}

int minimize(minimize_run_fn run, void *ctx, struct run_result *best,
	     unsigned max_runs, struct minimize_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->preemptions_before = best->preemptions;
	st->decisions_before = minimize_count_decisions(best);

	/* 1. fewer preemptions, to a fixed point */
	for (bool again = true; again && st->runs < max_runs;) {
		again = false;
		for (size_t i = best->ndecisions; i-- > 0;) {
			if (st->runs >= max_runs)
				break;
			if (i >= best->ndecisions ||
			    !preempts(best, &best->decisions[i]))
				continue;
			if (try_without(run, ctx, best, i, st, true)) {
				again = true;
				break;
			}
		}
	}
	/* 2. fewer decisions */
	for (bool again = true; again && st->runs < max_runs;) {
		again = false;
		for (size_t i = best->ndecisions; i-- > 0;) {
			if (st->runs >= max_runs)
				break;
			if (i >= best->ndecisions || !best->decisions[i].index)
				continue;
			if (try_without(run, ctx, best, i, st, false)) {
				again = true;
				break;
			}
		}
	}
	st->preemptions_after = best->preemptions;
	st->decisions_after = minimize_count_decisions(best);
	return 0;
}

/* One preemption of the schedule being minimised: thread `from` was about
 * to do from_kind on from_obj when `to` ran to_kind on to_obj instead. */
struct seed {
	int from, to;
	uint8_t from_kind, to_kind;
	uint64_t from_obj, to_obj;
};

struct seeds {
	struct seed *s;
	size_t n;
};

static int seed_score(void *ctx, const struct choice *c, int i)
{
	const struct seeds *ss = ctx;
	const struct alt *a = &c->alts[i], *cur = NULL;
	int best = 0;

	for (int k = 0; k < c->nalts; k++)
		if (c->alts[k].thread == c->current && !c->alts[k].timeout)
			cur = &c->alts[k];
	for (size_t k = 0; k < ss->n; k++) {
		const struct seed *s = &ss->s[k];
		int v = (c->current == s->from) + (a->thread == s->to);

		if (a->kind == s->to_kind && a->obj == s->to_obj)
			v += 2;
		if (cur && cur->kind == s->from_kind && cur->obj == s->from_obj)
			v += 2;
		if (v > best)
			best = v;
	}
	return best;
}

static void seeds_of(const struct run_result *r, struct seeds *ss)
{
	ss->n = 0;
	ss->s = calloc(r->nevents ? r->nevents : 1, sizeof(*ss->s));
	if (!ss->s)
		return;
	for (size_t k = 1; k < r->nevents; k++) {
		const struct event *e = &r->events[k];

		if (!e->preempt)
			continue;
		struct seed *s = &ss->s[ss->n++];

		s->to = e->thread;
		s->to_kind = e->kind;
		s->to_obj = e->obj;
		s->from = r->events[k - 1].thread;
		s->from_kind = OP_NONE;
		/* what the preempted thread did next is what it was at */
		for (size_t j = k + 1; j < r->nevents; j++)
			if (r->events[j].thread == s->from) {
				s->from_kind = r->events[j].kind;
				s->from_obj = r->events[j].obj;
				break;
			}
	}
}

int minimize_search(minimize_strategy_fn run, void *ctx,
		    struct run_result *best, unsigned max_runs,
		    struct minimize_stats *st)
{
	struct seeds ss;
	int found = -1;

	if (!best->preemptions)
		return -1;
	struct dfs *d = dfs_new((int)best->preemptions - 1, false);

	if (!d)
		return -1;
	seeds_of(best, &ss);
	dfs_set_placement(d, true);
	if (ss.s)
		dfs_set_order(d, seed_score, &ss);
	struct strategy s = dfs_strategy(d);

	while (st->runs < max_runs && dfs_next(d)) {
		struct run_result rr;

		st->runs++;
		if (run(ctx, &s, &rr))
			break;
		dfs_end_run(d);
		if (rr.failure != FAIL_NONE && rr.failure != FAIL_DIVERGED &&
		    rr.failure != FAIL_INTERNAL &&
		    rr.failure != FAIL_INTERRUPTED &&
		    rr.failure != FAIL_SPIN && fingerprint_equal(&rr, best) &&
		    rr.preemptions < best->preemptions) {
			run_result_free(best);
			*best = rr;
			found = dfs_bound(d);
			break;
		}
		bool stop = rr.failure == FAIL_INTERRUPTED ||
			    rr.failure == FAIL_INTERNAL;

		run_result_free(&rr);
		if (stop)
			break;
	}
	free(ss.s);
	dfs_free(d);
	if (found >= 0) {
		st->preemptions_after = best->preemptions;
		st->decisions_after = minimize_count_decisions(best);
	}
	return found;
}
