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

/* Candidate: best's decisions without those marked in drop. */
static bool try_dropping(minimize_run_fn run, void *ctx,
			 struct run_result *best, const bool *drop,
			 struct minimize_stats *st, bool need_fewer)
{
	size_t n = best->ndecisions, k = 0;
	struct decision *dec = malloc((n ? n : 1) * sizeof(*dec));
	struct run_result rr;

	if (!dec)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!drop[i])
			dec[k++] = best->decisions[i];
	st->runs++;
	int e = run(ctx, dec, k, &rr);

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

/* Candidate: best's decisions without number `drop`. */
static bool try_without(minimize_run_fn run, void *ctx, struct run_result *best,
			size_t drop, struct minimize_stats *st, bool need_fewer)
{
	bool *mask = calloc(best->ndecisions ? best->ndecisions : 1, 1);
	bool better;

	if (!mask)
		return false;
	mask[drop] = true;
	better = try_dropping(run, ctx, best, mask, st, need_fewer);
	free(mask);
	return better;
}

/* Below this many preemptions they are dropped one at a time only. */
#define CHUNK_MIN 16

/*
 * Many preemptions (a sample through a test runner carries hundreds, most
 * in the runner's own threads): drop them in chunks first, as delta
 * debugging does: halves, then quarters, ..., the later chunks first,
 * keeping the granularity after a success.  One at a time costs a run per
 * needless preemption; chunks cost about two runs per needed one per
 * halving.
 */
static void drop_chunks(minimize_run_fn run, void *ctx, struct run_result *best,
			unsigned max_runs, struct minimize_stats *st)
{
	size_t parts = 2;

	while (st->runs < max_runs) {
		size_t n = best->ndecisions, npre = 0;
		size_t *pre = malloc((n ? n : 1) * sizeof(*pre));
		bool *mask = calloc(n ? n : 1, 1);
		bool dropped = false;

		if (!pre || !mask) {
			free(pre);
			free(mask);
			return;
		}
		for (size_t i = 0; i < n; i++)
			if (preempts(best, &best->decisions[i]))
				pre[npre++] = i;
		if (npre < CHUNK_MIN || parts > npre / 2) {
			free(pre);
			free(mask);
			return;
		}
		size_t size = (npre + parts - 1) / parts;

		for (size_t c = parts; c-- > 0 && !dropped &&
				       st->runs < max_runs;) {
			size_t a = c * size, b = a + size < npre ? a + size
								  : npre;

			if (a >= b)
				continue;
			memset(mask, 0, n);
			for (size_t k = a; k < b; k++)
				mask[pre[k]] = true;
			dropped = try_dropping(run, ctx, best, mask, st, true);
		}
		free(pre);
		free(mask);
		if (!dropped)
			parts *= 2;
		else if (parts > 2)
			parts--;
	}
}

/* The process of thread T-number `thread` in run r, or -1. */
static int process_of(const struct run_result *r, int thread)
{
	for (int i = 0; i < r->nthreads; i++)
		if (r->threads[i].thread == thread)
			return r->threads[i].proc;
	return -1;
}

/* The process the failure is in: the "P1 racy T2" label's when the failing
 * thread is another process's (a runner's worker may report its failure
 * and exit 0: the label names it, the thread may be unknown), else the
 * failing thread's; -1 if unknown. */
static int failing_process(const struct run_result *r)
{
	if (r->thread_label[0] == 'P' && r->thread_label[1] >= '0' &&
	    r->thread_label[1] <= '9')
		return atoi(r->thread_label + 1);
	return r->thread >= 0 ? process_of(r, r->thread) : -1;
}

/*
 * A failure inside one process of a tree (a test runner's worker) rarely
 * needs the other processes' preemptions, and a sample through a runner
 * carries hundreds of them: first try without every non-default decision
 * that chose a thread of another process (one run), else drop those
 * processes' preemptions in chunks before anything else.
 */
static void drop_other_processes(minimize_run_fn run, void *ctx,
				 struct run_result *best, unsigned max_runs,
				 struct minimize_stats *st)
{
	int proc = failing_process(best);
	size_t n = best->ndecisions, other = 0;
	bool *mask;

	if (proc < 0 || st->runs >= max_runs)
		return;
	mask = calloc(n ? n : 1, 1);
	if (!mask)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct decision *d = &best->decisions[i];
		int p = process_of(best, d->thread);

		if (d->index && p >= 0 && p != proc &&
		    preempts(best, d)) {
			mask[i] = true;
			other++;
		}
	}
	if (other && !try_dropping(run, ctx, best, mask, st, true)) {
		/* only the other processes' preemptions, in halves, then
		 * quarters (the general chunks follow) */
		for (size_t parts = 2; parts <= 4 && parts <= other &&
				       st->runs < max_runs;
		     parts *= 2) {
			bool dropped = false;

			n = best->ndecisions;
			size_t npre = 0, *pre = malloc((n ? n : 1) *
						       sizeof(*pre));
			bool *m = calloc(n ? n : 1, 1);

			if (!pre || !m) {
				free(pre);
				free(m);
				break;
			}
			for (size_t i = 0; i < n; i++) {
				const struct decision *d = &best->decisions[i];
				int p = process_of(best, d->thread);

				if (p >= 0 && p != proc && preempts(best, d))
					pre[npre++] = i;
			}
			size_t size = (npre + parts - 1) / parts;

			for (size_t c = parts; c-- > 0 && size &&
					       st->runs < max_runs;) {
				size_t a = c * size,
				       b = a + size < npre ? a + size : npre;

				if (a >= b)
					continue;
				memset(m, 0, n);
				for (size_t k = a; k < b; k++)
					m[pre[k]] = true;
				dropped |= try_dropping(run, ctx, best, m, st,
							true);
				if (dropped)
					break;
			}
			free(pre);
			free(m);
			if (dropped)
				parts /= 2; /* the same granularity again */
			if (!npre)
				break;
		}
	}
	free(mask);
}

int minimize(minimize_run_fn run, void *ctx, struct run_result *best,
	     unsigned max_runs, struct minimize_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->preemptions_before = best->preemptions;
	st->decisions_before = minimize_count_decisions(best);

	/* 0. a failure inside one process: the others' preemptions first */
	drop_other_processes(run, ctx, best, max_runs, st);
	/* 1. fewer preemptions: in chunks while there are many, then one at
	 * a time, to a fixed point */
	drop_chunks(run, ctx, best, max_runs, st);
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
	bool inproc; /* both threads in the failing process (of several) */
	int from, to;
	uint8_t from_kind, to_kind;
	uint64_t from_obj, to_obj;
};

struct seeds {
	struct seed *s;
	size_t n;
	int failing; /* the failing thread, -1 if none */
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
		bool to = a->kind == s->to_kind && a->obj == s->to_obj;
		bool from = cur && cur->kind == s->from_kind &&
			    cur->obj == s->from_obj;

		v += 2 * to + 2 * from;
		/* a failure inside one process of a tree: a preemption the
		 * found schedule made inside that process, on the same
		 * operations, comes first (T-numbers may differ from the
		 * found run's where processes create threads in another
		 * order; the operations' objects do not) */
		if (s->inproc && to && from)
			v += 8;
		if (v > best)
			best = v;
	}
	/* the thread that fails must see the state go wrong: running it
	 * early is the likelier preemption (a reader among many writers) */
	return best + (a->thread == ss->failing);
}

static void seeds_of(const struct run_result *r, struct seeds *ss)
{
	int proc = -1;

	ss->n = 0;
	ss->failing = r->thread;
	for (int i = 0; i < r->nthreads; i++)
		if (r->threads[i].proc > 0) {
			proc = failing_process(r);
			break;
		}
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
		s->inproc = proc >= 0 && process_of(r, s->from) == proc &&
			    process_of(r, s->to) == proc;
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

/*
 * Reordering: the same order of effects with as few switches as possible.
 * The effects of a run are its calls, racy accesses, atomics and pipe
 * reads and writes (not the futex and wake-up mechanics under them, which
 * follow from the schedule).  Each effect may run once the effects it
 * depends on (other threads', earlier in the found run, on objects within
 * 64 bytes, not two reads) have run; a mutex's critical sections keep
 * their order: a lock call waits for the other threads' unlocks of that
 * mutex that came before the unlock closing its own section.  The run
 * keeps the current thread while its next effect may run and otherwise
 * switches to the thread whose next effect came first.  One run; the
 * caller keeps it only if it fails the same way with fewer preemptions.
 */
struct reorder {
	int nth;
	size_t n;		/* effects of the found run */
	int *thread;		/* per effect */
	size_t *local;		/* its index among its thread's effects */
	uint32_t *need;		/* n x nth: effects of each thread first */
	size_t **order;		/* per thread: its effects' indices */
	size_t *count;		/* per thread: how many it has */
	size_t *done;		/* per thread: how many ran in this run */
};

static bool mutex_fn(int fn, bool *unlock)
{
	*unlock = fn == FN_MUTEX_UNLOCK || fn == FN_MTX_UNLOCK;
	return *unlock || fn == FN_MUTEX_LOCK || fn == FN_MUTEX_TRYLOCK ||
	       fn == FN_MUTEX_TIMEDLOCK || fn == FN_MTX_LOCK ||
	       fn == FN_MTX_TRYLOCK || fn == FN_MTX_TIMEDLOCK;
}

static bool is_effect(int kind, int fn)
{
	switch (kind) {
	case OP_CALL:
		return fn != FN_CREATE && fn != FN_JOIN && fn != FN_ONCE &&
		       fn != FN_THRD_CREATE && fn != FN_THRD_JOIN &&
		       fn != FN_USLEEP && fn > FN_NONE && fn < FN_MAX;
	case OP_ACCESS:
	case OP_ATOMIC:
	case OP_READ:
	case OP_WRITE:
		return true;
	default:
		return false;
	}
}

static bool effects_conflict(const struct event *a, const struct event *b)
{
	bool ua, ub;

	if (!a->obj || !b->obj)
		return true;
	uint64_t d = a->obj > b->obj ? a->obj - b->obj : b->obj - a->obj;

	if ((a->obj >> 63) != (b->obj >> 63) || d >= 64)
		return false;
	if (a->kind == OP_ACCESS && b->kind == OP_ACCESS && !a->arg && !b->arg)
		return false; /* two reads */
	/* mutex sections are ordered at their lock calls */
	if (a->kind == OP_CALL && b->kind == OP_CALL && mutex_fn(a->fn, &ua) &&
	    mutex_fn(b->fn, &ub))
		return false;
	return true;
}

static void reorder_free(struct reorder *ro)
{
	if (ro->order)
		for (int t = 0; t < ro->nth; t++)
			free(ro->order[t]);
	free(ro->order);
	free(ro->count);
	free(ro->done);
	free(ro->thread);
	free(ro->local);
	free(ro->need);
	memset(ro, 0, sizeof(*ro));
}

static int reorder_init(struct reorder *ro, const struct run_result *r)
{
	const struct event **ef;

	memset(ro, 0, sizeof(*ro));
	for (size_t i = 0; i < r->nevents; i++)
		if (r->events[i].thread >= ro->nth)
			ro->nth = r->events[i].thread + 1;
	if (!ro->nth || ro->nth > 64)
		return -1;
	ef = malloc((r->nevents + 1) * sizeof(*ef));
	ro->thread = malloc((r->nevents + 1) * sizeof(int));
	ro->local = malloc((r->nevents + 1) * sizeof(size_t));
	ro->count = calloc((size_t)ro->nth, sizeof(size_t));
	ro->done = calloc((size_t)ro->nth, sizeof(size_t));
	ro->order = calloc((size_t)ro->nth, sizeof(size_t *));
	if (!ef || !ro->thread || !ro->local || !ro->count || !ro->done ||
	    !ro->order)
		goto fail;
	for (size_t i = 0; i < r->nevents; i++) {
		const struct event *e = &r->events[i];

		if (!is_effect(e->kind, e->fn))
			continue;
		ef[ro->n] = e;
		ro->thread[ro->n] = e->thread;
		ro->local[ro->n] = ro->count[e->thread]++;
		ro->n++;
	}
	for (int t = 0; t < ro->nth; t++) {
		ro->order[t] = malloc((ro->count[t] + 1) * sizeof(size_t));
		if (!ro->order[t])
			goto fail;
		ro->count[t] = 0;
	}
	for (size_t j = 0; j < ro->n; j++)
		ro->order[ro->thread[j]][ro->count[ro->thread[j]]++] = j;
	ro->need = calloc(ro->n * (size_t)ro->nth + 1, sizeof(uint32_t));
	if (!ro->need)
		goto fail;
	for (size_t j = 0; j < ro->n; j++) {
		const struct event *e = ef[j];
		uint32_t *need = &ro->need[j * (size_t)ro->nth];
		bool unlock;
		size_t upto = j; /* effects before this one may constrain it */

		if (e->kind == OP_CALL && mutex_fn(e->fn, &unlock) && !unlock) {
			/* a lock call: up to the unlock closing its section */
			for (size_t k = j + 1; k < ro->n; k++)
				if (ro->thread[k] == e->thread &&
				    ef[k]->kind == OP_CALL &&
				    mutex_fn(ef[k]->fn, &unlock) && unlock &&
				    ef[k]->obj == e->obj) {
					upto = k;
					break;
				}
			for (size_t i = 0; i < upto; i++)
				if (ro->thread[i] != e->thread &&
				    ef[i]->kind == OP_CALL &&
				    mutex_fn(ef[i]->fn, &unlock) && unlock &&
				    ef[i]->obj == e->obj &&
				    need[ro->thread[i]] < ro->local[i] + 1)
					need[ro->thread[i]] =
						(uint32_t)ro->local[i] + 1;
		}
		for (size_t i = 0; i < j; i++)
			if (ro->thread[i] != e->thread &&
			    effects_conflict(ef[i], e) &&
			    need[ro->thread[i]] < ro->local[i] + 1)
				need[ro->thread[i]] = (uint32_t)ro->local[i] + 1;
	}
	free(ef);
	return 0;
fail:
	free(ef);
	reorder_free(ro);
	return -1;
}

/* The found run's index of thread t's next effect; n when none is left. */
static size_t next_effect(const struct reorder *ro, int t)
{
	if (t < 0 || t >= ro->nth || ro->done[t] >= ro->count[t])
		return ro->n;
	return ro->order[t][ro->done[t]];
}

static bool may_run(const struct reorder *ro, const struct alt *a)
{
	size_t j = next_effect(ro, a->thread);

	if (a->timeout)
		return false;
	if (!is_effect(a->kind, a->fn) || j >= ro->n)
		return true;
	const uint32_t *need = &ro->need[j * (size_t)ro->nth];

	for (int t = 0; t < ro->nth; t++)
		if (ro->done[t] < need[t])
			return false;
	return true;
}

static int reorder_pick(void *ctx, const struct choice *c)
{
	struct reorder *ro = ctx;
	int best = -1, any = -1;
	size_t bj = 0, aj = 0;

	if (c->kind != DEC_RUN)
		return 0;
	for (int i = 0; i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];

		if (a->timeout)
			continue;
		if (a->thread == c->current && !a->yield && may_run(ro, a))
			return i;
		size_t j = next_effect(ro, a->thread);

		if (any < 0 || j < aj) {
			any = i;
			aj = j;
		}
		if (may_run(ro, a) && (best < 0 || j < bj)) {
			best = i;
			bj = j;
		}
	}
	return best >= 0 ? best : any >= 0 ? any : 0;
}

static void reorder_executed(void *ctx, const struct event *e)
{
	struct reorder *ro = ctx;

	if (e->thread < ro->nth && is_effect(e->kind, e->fn))
		ro->done[e->thread]++;
}

int minimize_reorder(minimize_strategy_fn run, void *ctx,
		     struct run_result *best, struct minimize_stats *st)
{
	struct reorder ro;
	struct run_result rr;

	if (best->preemptions < 2 || reorder_init(&ro, best))
		return -1;
	struct strategy s = { .ctx = &ro, .pick = reorder_pick,
			      .executed = reorder_executed };

	st->runs++;
	int e = run(ctx, &s, &rr);

	reorder_free(&ro);
	if (e)
		return -1;
	if (rr.failure != FAIL_NONE && rr.failure != FAIL_DIVERGED &&
	    rr.failure != FAIL_INTERNAL && rr.failure != FAIL_INTERRUPTED &&
	    rr.failure != FAIL_SPIN && fingerprint_equal(&rr, best) &&
	    rr.preemptions < best->preemptions) {
		run_result_free(best);
		*best = rr;
		st->preemptions_after = best->preemptions;
		st->decisions_after = minimize_count_decisions(best);
		return (int)best->preemptions;
	}
	run_result_free(&rr);
	return -1;
}

/*
 * A failure inside one process of a tree, its own decisions only: the
 * found run's order of that process's threads (each place where its next
 * event was another of its threads', whether another process ran in
 * between or not) is replayed keyed by where the thread left was (its own
 * count of events), not by the global step, so that the other processes
 * running their default schedule, with other step numbers, do not move
 * them; every other choice takes the default.
 */
struct tkey {
	uint16_t cur, thread;
	uint32_t k; /* events cur had taken at the choice; for DEC_RUN,
		     * its events at pc (the k-th time it was there) */
	uint8_t kind, timeout;
	uint64_t pc; /* DEC_RUN: where cur's last event was */
};

struct process_replay {
	struct tkey *keys;
	size_t n;
	uint32_t *count; /* events per T-number in this run */
	int nth;
	/* T-numbers of the failing process's threads, as the other
	 * processes' default schedules number them (process_layout) */
	bool *mine;
	/* the thread of the process that must take its next event before
	 * any other of its threads (a key was reached), -1: none */
	int pending;
	uint32_t *hits; /* per key: its thread's events at its pc so far */
};

static bool replay_mine(const struct process_replay *pr, int t)
{
	return t >= 0 && t < pr->nth && pr->mine[t];
}

/*
 * A key of kind DEC_RUN (cur had taken k events, then the process's next
 * event was `thread`'s) holds the process's other threads from the moment
 * cur has taken its k-th event until `thread` has taken one: it runs if
 * it can, else another process's thread (the process waits as it did in
 * the found run, while the rest of the tree goes on), else the default.
 * Wake and poll keys choose where cur is, as recorded.
 */
static int process_replay_pick(void *ctx, const struct choice *c)
{
	struct process_replay *pr = ctx;

	if (c->kind != DEC_RUN) {
		if (c->current < 0 || c->current >= pr->nth)
			return 0;
		uint32_t k = pr->count[c->current];

		for (size_t j = 0; j < pr->n; j++) {
			const struct tkey *t = &pr->keys[j];

			if (t->cur != c->current || t->k != k ||
			    t->kind != c->kind)
				continue;
			for (int i = 0; i < c->nalts; i++)
				if (c->alts[i].thread == t->thread &&
				    c->alts[i].timeout == t->timeout)
					return i;
		}
		return 0;
	}
	if (pr->pending < 0)
		return 0;
	for (int i = 0; i < c->nalts; i++)
		if (c->alts[i].thread == pr->pending && !c->alts[i].timeout)
			return i;
	if (c->nalts && !replay_mine(pr, c->alts[0].thread))
		return 0;
	for (int i = 1; i < c->nalts; i++)
		if (!replay_mine(pr, c->alts[i].thread) && !c->alts[i].timeout)
			return i;
	return 0;
}

static void process_replay_executed(void *ctx, const struct event *e)
{
	struct process_replay *pr = ctx;

	if (e->thread >= pr->nth)
		return;
	pr->count[e->thread]++;
	if (e->thread == pr->pending)
		pr->pending = -1;
	/* by the k-th visit of a place, not the k-th event: a thread's
	 * count of events moves with the contention it meets (futex waits
	 * and retries), its visits of the racy access do not */
	for (size_t j = 0; j < pr->n; j++)
		if (pr->keys[j].kind == DEC_RUN &&
		    pr->keys[j].cur == e->thread && pr->keys[j].pc == e->pc &&
		    ++pr->hits[j] == pr->keys[j].k)
			pr->pending = pr->keys[j].thread;
}

/* One run following only the keys marked in `use` (all when NULL); true
 * when it fails as *best does with no more preemptions (and fewer when
 * need_fewer): *best is then replaced.  *err: the run did not happen
 * (the time bound, an interruption). */
static bool process_try(minimize_strategy_fn run, void *ctx,
			struct run_result *best, struct process_replay *pr,
			const struct tkey *all, size_t nall, const bool *use,
			bool need_fewer, struct minimize_stats *st, bool *err)
{
	struct run_result rr;

	pr->n = 0;
	for (size_t j = 0; j < nall; j++)
		if (!use || use[j])
			pr->keys[pr->n++] = all[j];
	memset(pr->count, 0, (size_t)pr->nth * sizeof(*pr->count));
	memset(pr->hits, 0, (pr->n + 1) * sizeof(*pr->hits));
	pr->pending = -1;
	struct strategy s = { .ctx = pr,
			      .pick = process_replay_pick,
			      .executed = process_replay_executed };

	st->runs++;
	if (run(ctx, &s, &rr)) {
		*err = true;
		return false;
	}
	if (rr.failure == FAIL_INTERRUPTED)
		*err = true;
	if (rr.failure != FAIL_NONE && rr.failure != FAIL_DIVERGED &&
	    rr.failure != FAIL_INTERNAL && rr.failure != FAIL_INTERRUPTED &&
	    rr.failure != FAIL_SPIN && fingerprint_equal(&rr, best) &&
	    (need_fewer ? rr.preemptions < best->preemptions
			: rr.preemptions <= best->preemptions)) {
		run_result_free(best);
		*best = rr;
		return true;
	}
	run_result_free(&rr);
	return false;
}

/*
 * The failing process's own decisions, fewest first: delta debugging
 * (ddmin) over the keys.  A key is where a thread of the process was
 * preempted, by its own count of events, so dropping one leaves the
 * others where they were (a global step would move): a subset of the
 * keys is a meaningful candidate, and a failure that needs one or two
 * switches comes out of hundreds in about 2 log2(n) runs.  Keeps the
 * failing subset's run in *best; at most max_runs runs.
 */
static void process_ddmin(minimize_strategy_fn run, void *ctx,
			  struct run_result *best, struct process_replay *pr,
			  struct tkey *keys, size_t n, unsigned max_runs,
			  struct minimize_stats *st)
{
	bool *use = calloc(n + 1, 1);
	struct tkey *cur = malloc((n + 1) * sizeof(*cur));
	bool err = false;
	size_t parts = 2;
	unsigned start = st->runs;

	if (!use || !cur)
		goto out;
	while (n >= 2 && !err && st->runs - start < max_runs) {
		size_t size = (n + parts - 1) / parts;
		bool reduced = false;

		/* a chunk alone, then (past halves) all but a chunk */
		for (int comp = 0; comp < 2 && !reduced && !err; comp++) {
			if (comp && parts == 2)
				break;
			for (size_t c = 0; c < parts && !err &&
					   st->runs - start < max_runs;
			     c++) {
				size_t lo = c * size,
				       hi = lo + size < n ? lo + size : n;

				if (lo >= hi)
					continue;
				for (size_t j = 0; j < n; j++)
					use[j] = (j >= lo && j < hi) != comp;
				if (!process_try(run, ctx, best, pr, keys, n,
						 use, false, st, &err))
					continue;
				size_t k = 0;

				for (size_t j = 0; j < n; j++)
					if (use[j])
						cur[k++] = keys[j];
				memcpy(keys, cur, k * sizeof(*keys));
				n = k;
				parts = comp ? (parts > 2 ? parts - 1 : 2) : 2;
				reduced = true;
				break;
			}
		}
		if (reduced)
			continue;
		if (parts >= n)
			break;
		parts = parts * 2 < n ? parts * 2 : n;
	}
out:
	free(use);
	free(cur);
}

/* Thread t of run r as (its process, its rank among that process's
 * threads by T-number, i.e. by creation): the same thread in another run
 * whose other processes interleaved differently, and so numbered it
 * differently.  false if r does not know t. */
static bool thread_place(const struct run_result *r, int t, int *proc,
			 int *rank)
{
	int p = process_of(r, t), k = 0;

	if (p < 0)
		return false;
	for (int i = 0; i < r->nthreads; i++)
		k += r->threads[i].proc == p && r->threads[i].thread < t;
	*proc = p;
	*rank = k;
	return true;
}

/* The T-number that run r gave to the rank-th thread of process proc, or
 * -1. */
static int thread_at(const struct run_result *r, int proc, int rank)
{
	for (int i = 0; i < r->nthreads; i++) {
		if (r->threads[i].proc != proc)
			continue;
		int k = 0;

		for (int j = 0; j < r->nthreads; j++)
			k += r->threads[j].proc == proc &&
			     r->threads[j].thread < r->threads[i].thread;
		if (k == rank)
			return r->threads[i].thread;
	}
	return -1;
}

/* One run with the other processes on their default schedules and no key:
 * the T-numbers the candidates will see.  Renumber the keys (taken from
 * *best) to it; true if it failed as *best does (then it is *best). */
static bool process_layout(minimize_strategy_fn run, void *ctx,
			   struct run_result *best, struct process_replay *pr,
			   struct tkey *keys, size_t n, int proc,
			   struct minimize_stats *st, bool *err)
{
	struct run_result rr;
	struct strategy s = { .ctx = pr,
			      .pick = process_replay_pick,
			      .executed = process_replay_executed };

	pr->n = 0;
	memset(pr->count, 0, (size_t)pr->nth * sizeof(*pr->count));
	memset(pr->hits, 0, (pr->n + 1) * sizeof(*pr->hits));
	pr->pending = -1;
	st->runs++;
	if (run(ctx, &s, &rr)) {
		*err = true;
		return false;
	}
	if (rr.failure == FAIL_INTERRUPTED)
		*err = true;
	for (int i = 0; i < rr.nthreads; i++)
		if (rr.threads[i].proc == proc && rr.threads[i].thread >= 0 &&
		    rr.threads[i].thread < pr->nth)
			pr->mine[rr.threads[i].thread] = true;
	for (size_t j = 0; j < n && rr.nthreads && !*err; j++) {
		int p, k, c = -1, t = -1;

		if (thread_place(best, keys[j].cur, &p, &k))
			c = thread_at(&rr, p, k);
		if (thread_place(best, keys[j].thread, &p, &k))
			t = thread_at(&rr, p, k);
		if (c >= 0 && c < pr->nth)
			keys[j].cur = (uint16_t)c;
		if (t >= 0)
			keys[j].thread = (uint16_t)t;
	}
	if (rr.failure != FAIL_NONE && rr.failure != FAIL_DIVERGED &&
	    rr.failure != FAIL_INTERNAL && rr.failure != FAIL_INTERRUPTED &&
	    rr.failure != FAIL_SPIN && fingerprint_equal(&rr, best) &&
	    rr.preemptions <= best->preemptions) {
		run_result_free(best);
		*best = rr;
		return true;
	}
	run_result_free(&rr);
	return false;
}

static int process_only(minimize_strategy_fn run, void *ctx,
			struct run_result *best, struct minimize_stats *st,
			int proc)
{
	struct process_replay pr = { 0 };
	struct tkey *keys = NULL;
	size_t nkeys = 0;
	bool tree = false, err = false;
	int ret = -1;
	unsigned pre = best->preemptions;

	for (int i = 0; i < best->nthreads; i++)
		tree |= best->threads[i].proc != proc;
	if (proc < 0 || !tree || !best->nevents)
		return -1;
	for (size_t i = 0; i < best->nevents; i++)
		if (best->events[i].thread + 1 > pr.nth)
			pr.nth = best->events[i].thread + 1;
	pr.nth += 64; /* threads this run may create beyond the found run's */
	pr.count = calloc((size_t)pr.nth, sizeof(*pr.count));
	pr.mine = calloc((size_t)pr.nth, sizeof(*pr.mine));
	pr.hits = calloc(best->ndecisions + best->nevents + 1,
			 sizeof(*pr.hits));
	pr.pending = -1;
	pr.keys = calloc(best->ndecisions + best->nevents + 1,
			 sizeof(*pr.keys));
	keys = calloc(best->ndecisions + best->nevents + 1, sizeof(*keys));
	if (!pr.count || !pr.mine || !pr.hits || !pr.keys || !keys)
		goto out;
	size_t d = 0;
	int last = -1; /* the process's thread that ran last */
	size_t at = 0;	/* its last event */

	/* the process's own order: wherever its next event is another of
	 * its threads' than the last one's (directly, or after other
	 * processes ran), a switch keyed where the last one was; and its
	 * wake and poll decisions as they were made */
	for (size_t i = 0; i < best->nevents; i++) {
		const struct event *e = &best->events[i];

		while (d < best->ndecisions && best->decisions[d].step < e->step)
			d++;
		if (i > 0 && d < best->ndecisions &&
		    best->decisions[d].step == e->step &&
		    best->decisions[d].index &&
		    best->decisions[d].kind != DEC_RUN) {
			const struct decision *x = &best->decisions[d];
			int cur = best->events[i - 1].thread;

			if (process_of(best, cur) == proc &&
			    process_of(best, x->thread) == proc &&
			    nkeys < best->ndecisions + best->nevents)
				keys[nkeys++] = (struct tkey){
					.cur = (uint16_t)cur,
					.thread = x->thread,
					.k = pr.count[cur],
					.kind = x->kind,
					.timeout = x->timeout };
		}
		if (process_of(best, e->thread) == proc) {
			if (last >= 0 && last != e->thread &&
			    nkeys < best->ndecisions + best->nevents) {
				uint64_t pc = best->events[at].pc;
				uint32_t visits = 0;

				for (size_t j = 0; j <= at; j++)
					visits += best->events[j].thread ==
							  last &&
						  best->events[j].pc == pc;
				keys[nkeys++] = (struct tkey){
					.cur = (uint16_t)last,
					.thread = e->thread,
					.k = visits,
					.kind = DEC_RUN,
					.pc = pc };
			}
			last = e->thread;
			at = i;
		}
		pr.count[e->thread]++;
	}
	if (!nkeys)
		goto out;
	/* the default schedule first: the other processes then create their
	 * threads in the order every candidate will see (the keys' T-numbers
	 * follow it), and it may fail already */
	if (process_layout(run, ctx, best, &pr, keys, nkeys, proc, st, &err) || err)
		goto done;
	/* all of the process's own switches, every other choice default */
	if (!process_try(run, ctx, best, &pr, keys, nkeys, NULL, true, st,
			 &err))
		goto out;
	/* then as few of them as the failure needs */
	process_ddmin(run, ctx, best, &pr, keys, nkeys, 8 + 4 * (unsigned)nkeys,
		      st);
done:
	if (best->preemptions < pre) {
		ret = (int)best->preemptions;
		st->preemptions_after = best->preemptions;
		st->decisions_after = minimize_count_decisions(best);
	}
out:
	free(pr.count);
	free(pr.hits);
	free(pr.mine);
	free(pr.keys);
	free(keys);
	return ret;
}

int minimize_process(minimize_strategy_fn run, void *ctx,
		     struct run_result *best, struct minimize_stats *st)
{
	int proc = failing_process(best);

	if (proc >= 0)
		return process_only(run, ctx, best, st, proc);
	/* not named (a run without symbols): each child process in turn,
	 * the first few */
	int tried[4], ntried = 0;

	for (int i = 0; i < best->nthreads && ntried < 4; i++) {
		int p = best->threads[i].proc;
		bool seen = p <= 0;

		for (int k = 0; k < ntried; k++)
			seen |= tried[k] == p;
		if (seen)
			continue;
		tried[ntried++] = p;
		int e = process_only(run, ctx, best, st, p);

		if (e >= 0)
			return e;
	}
	return -1;
}
