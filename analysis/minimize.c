/*
 * Minimisation: see minimize.h.
 */
#include <stdlib.h>
#include <string.h>
#include "explore.h"
#include "minimize.h"

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
