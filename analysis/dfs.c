/*
 * Systematic exploration with iterative preemption bounding (CHESS).
 *
 * The schedules form a tree: a node is a choice point, an edge one of its
 * alternatives, costing 1 when it is a preemption.  Bound b must run every
 * path costing exactly b once (paths costing less ran at a lower bound).
 * A *work item* is a prefix of decisions that ends in a costly edge; the
 * item's subtree is explored depth-first over free edges only, and every
 * costly edge met in it becomes an item of bound b+1.  Bound 0 starts with
 * the empty prefix.  So no schedule runs twice and none is skipped.
 *
 * Sleep sets (Godefroid) prune free edges whose operation commutes with an
 * edge already explored at an ancestor: two operations of different
 * threads on different objects (tracer/event.c: op_is_local) lead to the
 * same execution in either order.  A run whose every free alternative is
 * asleep is cut short (pick returns -1) and counted as pruned.
 *
 * Placement search (minimisation, dfs_set_placement) runs each item once,
 * on its default continuation: bound b is then every way of placing b
 * preemptions on default paths, a small subset of the bound-b tree that
 * stays cheap where free orders explode (many threads).  An order
 * (dfs_set_order) runs the items of each bound by descending score.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "dpor.h"
#include "strategy.h"

struct node {
	uint16_t nalts;
	uint16_t chosen;
	uint8_t kind;		/* DEC_RUN / DEC_WAKE */
	struct alt *alts;	/* copy of the alternatives */
	uint8_t *done;		/* explored (or asleep) free alternatives */
	struct alt *sleep;	/* asleep at this node */
	int nsleep;
	/* DPOR: free alternatives a race asked for, not yet explored */
	uint8_t *todo;
	uint64_t hash;		/* the path to it (edge_key) */
	int cost;		/* the preemptions on that path */
};

/* DPOR: a choice point of the current run */
struct rpick {
	size_t off;		/* its alternatives in dfs.ralts */
	uint16_t nalts;
	uint8_t kind;
	int cost;		/* preemptions before it */
	uint64_t hash;		/* the path to it */
};

struct item {
	long snap;		/* the run whose path is the prefix, -1: none */
	uint32_t len;		/* decisions taken from that path */
	uint16_t alt, nalts;	/* then this costly alternative */
	struct alt *sleep;	/* asleep at the item's first fresh node */
	int nsleep;
	int score;		/* with an order: higher runs first */
	uint32_t seq;		/* queue order, to break ties */
	uint32_t root;		/* the bound-1 item it descends from */
	int bound;		/* the bound it belongs to */
	/* or: sleep is made from this when the item starts (sleep_of) */
	struct sleep_base *base;
};

/*
 * What the sleep sets of the costly items queued at one node are made of:
 * what is asleep there, its alternatives and which of them may sleep
 * (explored or to be, and awake).  One copy per node, shared by its items
 * and filtered for each when it starts: a copy per item (item_sleep) grew
 * with the square of the threads, 3.2 GB for 1,000 threads at bound 2
 * (tests/targets/threads_n.c, bench/threads_rss.sh).
 */
struct sleep_base {
	int refs;
	int nsleep, nalts;
	struct alt *v;		/* nsleep asleep, then nalts alternatives */
	uint8_t *ok;		/* per alternative */
};

struct dfs;
static struct alt *sleep_of(const struct dfs *d, const struct sleep_base *b,
			    int i, int *count);

static void base_put(struct sleep_base *b)
{
	if (b && !--b->refs)
		free(b);
}

struct dfs {
	int bound, cur;		/* the limit and the bound being explored */
	bool sleep_sets;
	/* items of the current and the next bound */
	struct item *items[2];
	size_t nitems[2], capitems[2], next_item;
	/* the decision paths of runs that queued items, pairs (index,
	 * nalts): one copy per run, not one per queued alternative */
	uint16_t **snaps;
	size_t nsnaps, capsnaps;
	long cur_snap;		/* this run's path, once an item needs it */
	/* the item being explored */
	uint16_t *prefix;	/* pairs */
	uint32_t plen;
	struct alt *root_sleep;	/* the item's sleep set */
	int nroot_sleep;
	/* the sleep set now, updated at every step of the run (the chosen
	 * ones and those with one alternative, dfs_single); live once the
	 * item's prefix is behind */
	struct alt *run_sleep;
	int nrun_sleep;
	bool live;
	struct node *stack;	/* nodes at depth >= plen */
	size_t depth, cap;
	size_t pos;		/* decisions taken in the current run */
	/* decisions the current run must take to reach the edge it was
	 * given (the item's costly edge, or the backtracked node's): a run
	 * that ends before it did not run that edge (dfs_ended_short) */
	size_t must_reach;
	bool in_item;
	bool diverged, pruned_run;
	uint64_t pruned;
	/* placement search: each item runs once, on its default
	 * continuation (no backtracking over free edges) */
	bool placement;
	dfs_score_fn score;
	void *score_ctx;
	uint32_t seq;
	/* sharding (-j, --shard): bound 0 runs in every shard; the items
	 * bound 0 made are dealt out by index (with delay bounding some of
	 * them wait for a bound beyond 1), and each shard explores the
	 * whole subtree of its own, so the shards are disjoint and
	 * together exactly the serial search */
	int shard, nshards;
	uint32_t cur_root;	/* root of the item being explored */
	/* delay bounding: alternative k of a choice in round-robin order
	 * costs k delays, so an item may belong to a bound beyond the next;
	 * those wait here until their bound comes */
	bool delay;
	struct item *later;
	size_t nlater, caplater;
	/* state caching: the choice points' states seen, each with the
	 * least cost it was reached at and what was asleep there */
	bool cache;
	struct cached *seen;
	size_t nseen, capseen;
	uint64_t cache_hits;
	bool forced_keys;	/* keys at forced nodes too (dfs_want_state) */
	/* -j: the states every worker reached, in memory they share
	 * (dfs_shared_cache_new); used from bound 1 on */
	struct dfs_shared_cache *shm;
	/* DPOR (analysis/dpor.c): the current run's steps and choice
	 * points, analysed when it ends; and every edge of the tree that
	 * was explored, queued or asleep, by the hash of its path */
	bool dpor;
	unsigned dpor_flags;
	struct dpor_step *rsteps;
	size_t nrsteps, caprsteps;
	struct rpick *rpicks;
	size_t nrpicks, caprpicks;
	struct alt *ralts;
	size_t nralts, capralts;
	uint64_t path_hash;
	int path_cost;
	uint64_t *edges;
	size_t nedges, capedges;
	uint64_t dpor_points;	/* backtrack points races added */
	bool dpor_failed;	/* an analysis ran out of memory */
};

struct cached {
	uint64_t key;		/* 0: an empty slot */
	uint64_t sleep;		/* asleep there: bit 2*thread + timeout */
	uint8_t cost;
};

/*
 * -j: one state cache the workers share (MAP_SHARED, made before they
 * fork).  An entry is stamped with the serial position (dfs_key: bound,
 * then root) of the item that wrote it, and a node prunes only by an
 * entry stamped no later than its own item: what the serial search
 * would have known there, if another worker has got there already.  So
 * a worker explores a superset of the serial search's schedules of its
 * roots; what it explores beyond them is a subtree the serial search cut
 * because an earlier item had explored that state, without a failure
 * (or the serial search would have stopped there), and the first failure
 * in the serial order is the serial search's.  The run count depends on
 * how fast the workers met the states, so it can vary from one
 * invocation to the next; --no-state-cache gives the exact serial set.
 * Bound 0, which every worker runs to deal out the same roots, prunes by
 * the worker's own table only: another worker's entries there would
 * make the roots differ.  A full table stops adding (no pruning), never
 * a wrong one.
 */
struct shm_entry {
	uint64_t key;		/* 0: empty; claimed by compare-and-swap */
	uint64_t sleep;
	uint64_t stamp;		/* dfs_key of the item that wrote it */
	uint32_t lock;		/* a spin lock over sleep, stamp, cost */
	uint8_t cost;
};

struct dfs_shared_cache {
	size_t cap;		/* a power of two */
	uint64_t used;
	struct shm_entry e[];
};

struct dfs_shared_cache *dfs_shared_cache_new(size_t cap)
{
	size_t c = 1;

	while (c < cap)
		c <<= 1;
	size_t len = sizeof(struct dfs_shared_cache) +
		     c * sizeof(struct shm_entry);
	struct dfs_shared_cache *t = mmap(NULL, len, PROT_READ | PROT_WRITE,
					  MAP_SHARED | MAP_ANONYMOUS |
						  MAP_NORESERVE,
					  -1, 0);

	if (t == MAP_FAILED)
		return NULL;
	t->cap = c;
	return t;
}

void dfs_shared_cache_free(struct dfs_shared_cache *t)
{
	if (t)
		munmap(t, sizeof(*t) + t->cap * sizeof(struct shm_entry));
}

void dfs_set_shared_cache(struct dfs *d, struct dfs_shared_cache *t)
{
	d->shm = t;
}

static void set_run_sleep(struct dfs *d, const struct alt *set, int k);

static bool push_item(struct dfs *d, int which, struct item it)
{
	if (d->nitems[which] == d->capitems[which]) {
		size_t cap = d->capitems[which] ? d->capitems[which] * 2 : 64;
		struct item *n = realloc(d->items[which], cap * sizeof(*n));

		if (!n)
			return false;
		d->items[which] = n;
		d->capitems[which] = cap;
	}
	it.seq = d->seq++;
	d->items[which][d->nitems[which]++] = it;
	return true;
}

static bool push_later(struct dfs *d, struct item it)
{
	if (d->nlater == d->caplater) {
		size_t cap = d->caplater ? d->caplater * 2 : 64;
		struct item *n = realloc(d->later, cap * sizeof(*n));

		if (!n) {
			free(it.sleep);
			base_put(it.base);
			return false;
		}
		d->later = n;
		d->caplater = cap;
	}
	it.seq = d->seq++;
	d->later[d->nlater++] = it;
	return true;
}

/*
 * Delay bounding (Emmi, Qadeer, Rakamaric, POPL 2011): the deterministic
 * scheduler runs the current thread while it can, then the next one in
 * round-robin order; a delay skips the thread it would pick.  So
 * alternative k in round-robin order after the current thread (the
 * current one first when it can go on) costs k delays.  tracer/sched.c
 * lists the others in round-robin order when the current thread cannot
 * go on, and in T-number order when it can; timeouts come last.
 *
 * Which waiter a wake of one picks (DEC_WAKE: a futex wake, a signal's
 * taker, a wait's child) is the scheduler's choice too: the deterministic
 * one wakes the waiter first in round-robin order after the waker, and
 * waking the k-th instead costs k delays.  Free, those choices let a
 * bound explode: after one delay leaves n threads queued on a mutex,
 * every order of their wake-ups (n!) cost nothing (join_many, 16
 * threads, did not finish delay bound 1 in 10,000 runs).
 */
static uint32_t rr_dist(uint32_t cur, uint32_t t)
{
	return t > cur ? t - cur : t + 65536 - cur;
}

/* The rank of alternative i among alternatives from..nalts-1 that are not
 * timeouts, in round-robin order after thread cur (ties by index). */
static int rr_rank(const struct choice *c, int i, int from, uint32_t cur)
{
	uint32_t me = rr_dist(cur, c->alts[i].thread);
	int rank = 0;

	for (int k = from; k < c->nalts; k++) {
		const struct alt *b = &c->alts[k];
		uint32_t t = rr_dist(cur, b->thread);

		if (b->timeout || k == i)
			continue;
		if (t < me || (t == me && k < i))
			rank++;
	}
	return rank;
}

int dfs_delay_cost(const struct choice *c, int i)
{
	const struct alt *a = &c->alts[i];

	if (c->kind != DEC_RUN)
		/* no current thread (-1): T-number order */
		return a->timeout ? i
				  : rr_rank(c, i, 0, c->current < 0
							  ? 65535u
							  : (uint32_t)c->current);
	bool cur_runs = c->nalts && c->alts[0].thread == c->current &&
			!c->alts[0].cost && !c->alts[0].timeout &&
			!c->alts[0].yield;

	if (!cur_runs || a->timeout || i == 0)
		return i;
	return 1 + rr_rank(c, i, 1, (uint32_t)c->current);
}

void dfs_set_delay(struct dfs *d, bool on)
{
	d->delay = on;
	if (on)
		d->sleep_sets = false;
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * A path is pairs (index, nalts) with, in nalts' high bits, a print of
 * the alternatives there (1..127; 0: not known).  A run given a prefix
 * must meet, where the prefix's run met them, the same alternatives, not
 * only as many: as many with other threads or operations behind them is a
 * program that did not repeat itself (tests/real/not_repeatable_ops.c),
 * and following the indices would explore a tree that is not the
 * program's while counting it as covered.
 */
#define NALTS_MASK 0x1ff /* MAX_ALTS fits */
#define PRINT_SHIFT 9

static uint16_t alts_print(const struct alt *a, int n, int kind)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)kind;

	for (int i = 0; i < n; i++)
		h = (h ^ (a[i].thread | (uint64_t)a[i].kind << 16 |
			  (uint64_t)a[i].fn << 24 |
			  (uint64_t)a[i].timeout << 32)) *
		    0x100000001b3ull;
	h ^= h >> 29;
	return (uint16_t)(1 + h % 127);
}

/* The alternatives of a replayed node are those it was made with. */
static bool same_alts(const struct node *n, const struct choice *c)
{
	if (n->nalts != c->nalts || n->kind != c->kind)
		return false;
	for (int i = 0; i < c->nalts; i++)
		if (n->alts[i].thread != c->alts[i].thread ||
		    n->alts[i].kind != c->alts[i].kind ||
		    n->alts[i].fn != c->alts[i].fn ||
		    n->alts[i].timeout != c->alts[i].timeout)
			return false;
	return true;
}

/* Keep the path of the run that just ended if items refer to it. */
static void snapshot(struct dfs *d)
{
	if (d->cur_snap < 0)
		return;
	size_t n = d->plen + d->depth;
	uint16_t *p = malloc((2 * n + 1) * sizeof(*p));

	if (p) {
		if (d->plen)
			memcpy(p, d->prefix, 2 * d->plen * sizeof(*p));
		for (size_t k = 0; k < d->depth; k++) {
			p[2 * (d->plen + k)] = d->stack[k].chosen;
			p[2 * (d->plen + k) + 1] =
				(uint16_t)(d->stack[k].nalts |
					   alts_print(d->stack[k].alts,
						      d->stack[k].nalts,
						      d->stack[k].kind)
						   << PRINT_SHIFT);
		}
	}
	d->snaps[d->cur_snap] = p;
	d->cur_snap = -1;
}

struct dfs *dfs_new(int bound, bool sleep_sets)
{
	struct dfs *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->bound = bound < 0 ? 0 : bound;
	d->sleep_sets = sleep_sets;
	d->cur_snap = -1;
	push_item(d, 0, (struct item){ .snap = -1 });
	return d;
}

static void free_node(struct node *n)
{
	free(n->alts);
	free(n->done);
	free(n->sleep);
	free(n->todo);
	memset(n, 0, sizeof(*n));
}

static void truncate_stack(struct dfs *d, size_t depth)
{
	while (d->depth > depth)
		free_node(&d->stack[--d->depth]);
}

/* Start the next item; false when every bound is done. */
static bool next_item(struct dfs *d)
{
	for (;;) {
		if (d->next_item < d->nitems[0]) {
			struct item *it = &d->items[0][d->next_item++];
			uint32_t len = it->snap < 0 ? 0 : it->len + 1;

			if (d->nshards > 1 && d->cur >= 1 &&
			    it->root % (uint32_t)d->nshards !=
				    (uint32_t)d->shard) {
				free(it->sleep);
				it->sleep = NULL;
				base_put(it->base);
				it->base = NULL;
				continue;
			}
			d->cur_root = it->root;
			if (it->base) {
				it->sleep = sleep_of(d, it->base, it->alt,
						     &it->nsleep);
				base_put(it->base);
				it->base = NULL;
			}

			free(d->prefix);
			d->prefix = malloc((2 * len + 1) * sizeof(uint16_t));
			if (!d->prefix)
				return false;
			if (it->snap >= 0) {
				if (!d->snaps[it->snap])
					return false;
				if (it->len)
					memcpy(d->prefix, d->snaps[it->snap],
					       2 * it->len * sizeof(uint16_t));
				d->prefix[2 * it->len] = it->alt;
				d->prefix[2 * it->len + 1] = it->nalts;
			}
			d->plen = len;
			free(d->root_sleep);
			d->root_sleep = it->sleep;
			d->nroot_sleep = it->nsleep;
			it->sleep = NULL;
			truncate_stack(d, 0);
			d->in_item = true;
			return true;
		}
		/* the bound is exhausted: move to the next one */
		if (d->cur >= d->bound || (!d->nitems[1] && !d->nlater))
			return false;
		free(d->items[0]);
		d->items[0] = d->items[1];
		d->nitems[0] = d->nitems[1];
		d->capitems[0] = d->capitems[1];
		d->items[1] = NULL;
		d->nitems[1] = d->capitems[1] = 0;
		d->next_item = 0;
		d->cur++;
		/* items waiting for this bound (delay bounding) */
		size_t k = 0;

		for (size_t j = 0; j < d->nlater; j++) {
			if (d->later[j].bound == d->cur)
				push_item(d, 0, d->later[j]);
			else
				d->later[k++] = d->later[j];
		}
		d->nlater = k;
		if (d->score)
			qsort(d->items[0], d->nitems[0], sizeof(struct item),
			      cmp_item);
		/* the roots that shards are dealt: the items bound 0 made,
		 * those of bound 1 first, then (delay bounding) the ones
		 * waiting for a later bound; every other item inherits the
		 * root of the item whose run made it */
		if (d->cur == 1) {
			for (size_t i = 0; i < d->nitems[0]; i++)
				d->items[0][i].root = (uint32_t)i;
			for (size_t j = 0; j < d->nlater; j++)
				d->later[j].root = (uint32_t)(d->nitems[0] + j);
		}
	}
}

static void dpor_end_run(struct dfs *d);

/* The alternative a fresh node takes itself: its first free awake one. */
static int first_free(const struct node *n)
{
	for (int i = 0; i < n->nalts; i++)
		if (!n->alts[i].cost && !n->done[i])
			return i;
	return -1;
}

static void edge_add(struct dfs *d, uint64_t key);
static uint64_t edge_key(uint64_t path, int idx, int nalts);

static bool dpor_active(const struct dfs *d)
{
	return d->dpor && !d->placement && !d->delay && d->nshards <= 1;
}

bool dfs_next(struct dfs *d)
{
	if (dpor_active(d))
		dpor_end_run(d); /* may queue items on this run's path */
	if (d->dpor_failed) {
		/* out of memory: the next run is abandoned at once, and
		 * never counts as covered (dfs_diverged) */
		d->pruned_run = false;
		return true;
	}
	snapshot(d);
	d->pos = 0;
	d->diverged = false;
	d->pruned_run = false;
	set_run_sleep(d, NULL, 0);
	if (d->in_item && d->placement) {
		truncate_stack(d, 0);
		d->in_item = false;
	}
	if (d->in_item) {
		/* backtrack: the deepest node with an untried free edge */
		while (d->depth) {
			struct node *n = &d->stack[d->depth - 1];
			int next = -1;

			for (int i = 0; i < n->nalts; i++)
				if (!n->done[i] && !n->alts[i].cost &&
				    (!n->todo || n->todo[i])) {
					next = i;
					break;
				}
			if (next >= 0) {
				n->chosen = (uint16_t)next;
				n->done[next] = 1;
				if (dpor_active(d))
					edge_add(d, edge_key(n->hash, next,
							     n->nalts));
				d->live = d->plen == 0;
				d->must_reach = d->plen + d->depth;
				return true;
			}
			free_node(n);
			d->depth--;
		}
		d->in_item = false;
	}
	if (!next_item(d))
		return false;
	d->live = d->plen == 0;
	d->must_reach = d->plen;
	return true;
}

void dfs_end_run(struct dfs *d)
{
	/* nodes deeper than the run reached stay valid: a run visits its
	 * stack in order, so the stack is exactly this run's fresh path */
	(void)d;
}

/*
 * Dependence from what the supervisor knows of a pending operation: the
 * stretch of the thread's code from this point to its next one.
 * DEP_NONE: commutes with every other thread's operation (a thread's first
 * step, a yield: they change no shared state the next points see; the code
 * between points is covered only where it is race-free, as everywhere in
 * the reduction).  DEP_OBJ: acts on its objects only (struct span); two of
 * them conflict when their byte ranges overlap.  DEP_LIFE: a thread's
 * exit, which clears and wakes its tid word: it conflicts with futex
 * operations on that word (on any word when it is not known) and with
 * other exits.  DEP_ALL: everything else (clone, create, join, timed
 * waits, timeouts, time, signals, polls, spins, pthread_once (it runs the
 * init routine), unknown calls, a wake-up by a signal). DEP_WAIT: a
 * wait4/waitid that may block: its answer changes only when a child dies,
 * stops or continues, that is at an exit, an exit_group, a signal, a fork
 * (all DEP_LIFE or DEP_ALL) or another wait; blocking first and being
 * woken ends where answering later does.  So a shell or runner waiting
 * for its child commutes with the child's own operations.  A fork's
 * return in the parent is DEP_NONE, like a thread's first step.
 * DEP_JOIN: a join whose object is the joined thread's tid word (the
 * tracer knows its offset from the clone), or a create's call (up to its
 * clone: it allocates the stack and writes the pthread_t at its object):
 * it conflicts with operations on those bytes, with every exit, join and
 * create (the tid word; glibc's cache of thread stacks, which joins and
 * exits of detached threads fill and creates take from; a thread
 * clone, which has no object), and with DEP_ALL.  What the joiner does
 * after the join is ordered after the joined thread's steps through the
 * exit.
 */
enum { DEP_NONE, DEP_OBJ, DEP_LIFE, DEP_WAIT, DEP_JOIN, DEP_ALL };

static int dep_class(const struct alt *a)
{
	if (a->timeout || a->global)
		return DEP_ALL;
	switch (a->kind) {
	case OP_START:
	case OP_YIELD:
	case OP_ANNOTATE:
		return DEP_NONE;
	case OP_CLONE:
		/* a fork's parent going on: only its own process; a thread
		 * made or the parent going on after it: the threads'
		 * bookkeeping (the new thread's first step is ordered after
		 * it by dpor.c; sleep sets never see the two together) */
		return a->fn == FORK_RETURN    ? DEP_NONE
		       : a->fn == THREAD_CLONE ? DEP_JOIN
					       : DEP_ALL;
	case OP_EXIT:
		return DEP_LIFE;
	case OP_WAIT4:
		return a->fn == WAIT_BLOCKING ? DEP_WAIT : DEP_ALL;
	case OP_FUTEX_WAIT:
	case OP_FUTEX_WAKE:
	case OP_FUTEX_REQUEUE:
	case OP_WOKEN:
	case OP_READ:
	case OP_WRITE:
	case OP_ACCEPT:
	case OP_CONNECT:
	case OP_ATOMIC:
	case OP_ACCESS:
		return a->obj ? DEP_OBJ : DEP_ALL;
	case OP_CALL:
		switch (a->fn) {
		case FN_COND_TIMEDWAIT:
		case FN_CND_TIMEDWAIT:
		case FN_MUTEX_TIMEDLOCK:
		case FN_RWLOCK_TIMEDRDLOCK:
		case FN_RWLOCK_TIMEDWRLOCK:
		case FN_SEM_TIMEDWAIT:
		case FN_MTX_TIMEDLOCK:
		case FN_ONCE:
			return DEP_ALL;
		case FN_COND_WAIT:
		case FN_CND_WAIT:
			/* it unlocks its mutex too: the tracer names it */
			return a->obj && a->obj2 ? DEP_OBJ : DEP_ALL;
		case FN_JOIN:
		case FN_THRD_JOIN:
		case FN_CREATE:
		case FN_THRD_CREATE:
			return a->obj ? DEP_JOIN : DEP_ALL;
		default:
			return a->obj && op_is_local(OP_CALL, a->fn) ? DEP_OBJ
								     : DEP_ALL;
		}
	default:
		return DEP_ALL;
	}
}

struct span {
	uint64_t lo, hi; /* [lo, hi) */
};

/* The byte ranges a DEP_OBJ operation acts on; returns how many. */
static int spans(const struct alt *a, struct span *sp)
{
	uint64_t len1, len2 = 4;

	if (a->obj >> 63) {
		len1 = 1; /* a descriptor's object: an identity */
	} else {
		switch (a->kind) {
		case OP_CALL:
			len1 = call_object_size(a->fn);
			len2 = call_object_size(FN_MUTEX_LOCK); /* cond_wait's */
			break;
		case OP_FUTEX_WAIT:
		case OP_FUTEX_WAKE:
		case OP_FUTEX_REQUEUE:
		case OP_WOKEN:
			len1 = 4; /* a futex word */
			break;
		case OP_ATOMIC:
			len1 = 16; /* up to cmpxchg16b */
			break;
		default:
			len1 = 64; /* a racy access: up to a 64-byte vector */
			break;
		}
	}
	int n = 0;

	sp[n++] = (struct span){ a->obj, a->obj + len1 };
	if (a->obj2 && a->kind != OP_EXIT)
		sp[n++] = (struct span){ a->obj2, a->obj2 + len2 };
	return n;
}

static bool is_futex(int kind)
{
	return kind == OP_FUTEX_WAIT || kind == OP_FUTEX_WAKE ||
	       kind == OP_FUTEX_REQUEUE || kind == OP_WOKEN;
}

/* Does exit e (its tid word in obj2, 0: unknown) touch o's futex words? */
static bool exit_touches(const struct alt *e, const struct alt *o)
{
	if (dep_class(o) == DEP_LIFE)
		return true;
	if (!is_futex(o->kind) && !(o->kind == OP_CALL && o->obj2))
		return false;
	if (!e->obj2)
		return is_futex(o->kind);
	struct span sp[2];
	int n = spans(o, sp);

	for (int i = 0; i < n; i++)
		if (e->obj2 < sp[i].hi && sp[i].lo < e->obj2 + 4)
			return true;
	return false;
}

bool dfs_dependent(const struct alt *a, const struct alt *b)
{
	if (a->thread == b->thread)
		return true;
	int x = dep_class(a), y = dep_class(b);

	if (x == DEP_ALL || y == DEP_ALL)
		return true;
	if (x == DEP_NONE || y == DEP_NONE)
		return false;
	if (x == DEP_JOIN || y == DEP_JOIN) {
		const struct alt *j = x == DEP_JOIN ? a : b;
		const struct alt *o = x == DEP_JOIN ? b : a;
		int k = x == DEP_JOIN ? y : x;

		if (k == DEP_JOIN || k == DEP_LIFE)
			return true;
		if (k != DEP_OBJ || !j->obj)
			return false;
		struct span so[2];
		int no = spans(o, so);
		/* the tid word, or the pthread_t a create writes */
		uint64_t len = j->fn == FN_JOIN || j->fn == FN_THRD_JOIN ? 4 : 8;

		for (int i = 0; i < no; i++)
			if (j->obj < so[i].hi && so[i].lo < j->obj + len)
				return true;
		return false;
	}
	if (x == DEP_WAIT || y == DEP_WAIT) {
		int o = x == DEP_WAIT ? y : x;

		return o == DEP_WAIT || o == DEP_LIFE;
	}
	if (x == DEP_LIFE)
		return exit_touches(a, b);
	if (y == DEP_LIFE)
		return exit_touches(b, a);
	if (a->kind == OP_READ && b->kind == OP_READ &&
	    a->fn == FILE_PREAD && b->fn == FILE_PREAD)
		return false; /* two reads of a file, no offset moved */
	struct span sa[2], sb[2];
	int na = spans(a, sa), nb = spans(b, sb);

	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (sa[i].lo < sb[j].hi && sb[j].lo < sa[i].hi)
				return true;
	return false;
}

static bool reader_call(const struct alt *a)
{
	return a->kind == OP_CALL && !a->timeout && !a->global &&
	       (a->fn == FN_RWLOCK_RDLOCK || a->fn == FN_RWLOCK_UNLOCK);
}

/*
 * Two readers' calls on one pthread rwlock that commute at the state
 * where b is offered: the tracer read the lock there (struct alt readers,
 * tracer/world.c rwlock_readers) with no writer and no waiting reader, so
 * each rdlock is a fetch-and-add returning 0 and each unlock a decrement
 * waking nobody, and neither changes that.  With at least as many readers
 * as there are unlocks among the two, no count wraps in either order (an
 * unlock by a thread that holds no read lock could otherwise make the
 * rdlock fail in one order only).  The code after either call up to its
 * thread's next point is covered as everywhere in the reduction.
 *
 * This is independence at that state, not everywhere (conditional
 * independence, which sleep sets allow: a sleeper is kept past a step only
 * if it commutes with that step at the state the step is taken in).  a is
 * a thread's pending operation there (a sleeper stays where it was, so
 * its operation is the one recorded, but its readers are of an older
 * state and are not used).  DPOR's races are computed on the recorded run
 * with the unconditional relation, so with DPOR on this is not used.
 */
static bool readers_commute(const struct alt *a, const struct alt *b)
{
	if (!reader_call(a) || !reader_call(b) || !b->readers ||
	    a->obj != b->obj || a->thread == b->thread)
		return false;
	int unlocks = (a->fn == FN_RWLOCK_UNLOCK) + (b->fn == FN_RWLOCK_UNLOCK);

	return b->readers - 1 >= unlocks;
}

/* Independence for the sleep sets of dfs d, at the state where b is
 * offered: b is always the step taken there or a sibling of it. */
static bool independent(const struct dfs *d, const struct alt *a,
			const struct alt *b)
{
	if (!dfs_dependent(a, b))
		return true;
	return !dpor_active(d) && readers_commute(a, b);
}

/*
 * Sleep sets under a preemption bound (Coons et al., OOPSLA 2013, show
 * the naive combination unsound): putting explored alternative a to sleep
 * below sibling b prunes every run b.r.a.t in which a's operation comes
 * later, whose representative a.b.r.t ran in a's subtree.  That
 * representative must not cost more preemptions, or a bounded search
 * misses it.  Moving a to the front changes four switches; the difference
 * is cost(a) - cost(b) + E - X, where E is 1 if a's thread could go on
 * after a (the switch to b is then a preemption) and X >= 0.  So it is
 * never positive when a was free and b a preemption (a is the current
 * thread's own continuation), or when a ends its thread (E = 0); for two
 * free (or two costly) siblings it can be +1 and they are not slept.
 * tests/unit/test_dfs.c checks every bound against brute force.
 */
static bool bound_safe(const struct alt *a, const struct alt *b)
{
	return a->cost < b->cost || a->kind == OP_EXIT;
}

static bool asleep(const struct node *n, const struct alt *a)
{
	for (int i = 0; i < n->nsleep; i++)
		if (n->sleep[i].thread == a->thread &&
		    n->sleep[i].timeout == a->timeout)
			return true;
	return false;
}

static bool same_op(const struct alt *a, const struct alt *b)
{
	return a->thread == b->thread && a->obj == b->obj &&
	       a->obj2 == b->obj2 && a->kind == b->kind && a->fn == b->fn &&
	       a->timeout == b->timeout && a->global == b->global;
}

/* The running sleep set becomes (k alternatives of) set. */
static void set_run_sleep(struct dfs *d, const struct alt *set, int k)
{
	struct alt *n = k ? malloc((size_t)k * sizeof(*n)) : NULL;

	if (k && !n)
		k = 0; /* an empty set is always safe */
	if (k)
		memcpy(n, set, (size_t)k * sizeof(*n));
	free(d->run_sleep);
	d->run_sleep = n;
	d->nrun_sleep = k;
}

/*
 * After node n's chosen edge: what is asleep at n and commutes with it,
 * and the explored free siblings before it that commute with it and may
 * sleep (bound_safe).  A wake or wait choice clears the set.
 */
static void sleep_after(struct dfs *d, const struct node *n)
{
	if (!d->sleep_sets || n->kind != DEC_RUN) {
		set_run_sleep(d, NULL, 0);
		return;
	}
	const struct alt *via = &n->alts[n->chosen];
	struct alt *sl = malloc((size_t)(n->nsleep + n->nalts) * sizeof(*sl));
	int k = 0;

	if (!sl) {
		set_run_sleep(d, NULL, 0);
		return;
	}
	for (int i = 0; i < n->nsleep; i++)
		if (independent(d, &n->sleep[i], via))
			sl[k++] = n->sleep[i];
	for (int i = 0; i < n->chosen; i++) {
		const struct alt *a = &n->alts[i];

		if (!n->done[i] || a->cost || asleep(n, a))
			continue;
		if (independent(d, a, via) && bound_safe(a, via))
			sl[k++] = *a;
	}
	set_run_sleep(d, sl, k);
	free(sl);
}

/*
 * The thread that ran last yields at c for fairness (tracer/world.c
 * FAIR_STEPS: it took that many points in a row, so leaving it is free
 * and staying costs a preemption).  What staying costs there depends on
 * how long it has run, not on the operations: a sleeper's representative,
 * its operation moved before this run of points, splits the run and
 * needs preemptions the pruned run did not (a writer's store at its
 * 1,100th point in a row, between two reads of main's: pruned at the
 * yield, and "PASS, complete to preemption bound 2").  Nothing sleeps
 * at such a node.
 */
static bool fairness_yield(const struct choice *c)
{
	for (int i = 0; i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];

		if (a->thread == c->current && !a->timeout)
			return a->yield && a->cost && a->kind != OP_YIELD &&
			       a->kind != OP_SPIN;
	}
	return false;
}

/* A fresh node's sleep set: the running one, each sleeper kept only
 * while the node offers its thread the same operation. */
static void node_sleep(struct dfs *d, struct node *n)
{
	if (!d->sleep_sets || n->kind != DEC_RUN || !d->live ||
	    !d->nrun_sleep)
		return;
	n->sleep = malloc((size_t)d->nrun_sleep * sizeof(struct alt));
	if (!n->sleep)
		return;
	for (int i = 0; i < d->nrun_sleep; i++)
		for (int j = 0; j < n->nalts; j++)
			if (same_op(&n->alts[j], &d->run_sleep[i])) {
				n->sleep[n->nsleep++] = d->run_sleep[i];
				break;
			}
}

/*
 * A choice point with one alternative, which the supervisor takes without
 * asking pick: if that thread is asleep every continuation ran elsewhere
 * (cut the run short: false); otherwise its operation wakes the sleepers
 * it conflicts with.
 */
static bool single_sleep(struct dfs *d, const struct choice *c)
{
	if (!d->sleep_sets || !d->live || !d->nrun_sleep || c->nalts != 1)
		return true;
	const struct alt *a = &c->alts[0];
	int k = 0;

	for (int i = 0; i < d->nrun_sleep; i++) {
		if (same_op(&d->run_sleep[i], a)) {
			d->pruned_run = true;
			d->pruned++;
			return false;
		}
		if (independent(d, &d->run_sleep[i], a))
			d->run_sleep[k++] = d->run_sleep[i];
	}
	d->nrun_sleep = k;
	return true;
}

static bool rec_step(struct dfs *d, const struct alt *a, int32_t node);

static bool dfs_single(void *ctx, const struct choice *c)
{
	struct dfs *d = ctx;

	if (d->dpor_failed)
		return false;
	bool go = single_sleep(d, c);

	if (go && c->nalts == 1 && dpor_active(d) &&
	    !rec_step(d, &c->alts[0], -1))
		d->dpor_failed = true;
	return go;
}

/*
 * The sleep set of the subtree reached through costly alternative i of n:
 * what is asleep at n, and every alternative of n explored before i (the
 * free ones in this bound, the costly ones queued before it), as long as
 * it commutes with alternative i.
 */
static struct alt *item_sleep(const struct dfs *d, const struct node *n,
			       int i, int *count)
{
	const struct alt *via = &n->alts[i];
	struct alt *sl = malloc((size_t)(n->nsleep + n->nalts) * sizeof(*sl));
	int k = 0;

	if (!sl)
		return NULL;
	for (int j = 0; j < n->nsleep; j++)
		if (independent(d, &n->sleep[j], via))
			sl[k++] = n->sleep[j];
	for (int j = 0; j < i; j++)
		if (!asleep(n, &n->alts[j]) &&
		    independent(d, &n->alts[j], via) &&
		    bound_safe(&n->alts[j], via) &&
		    (!n->todo || n->done[j] || n->todo[j]))
			sl[k++] = n->alts[j];
	*count = k;
	if (!k) {
		free(sl);
		return NULL;
	}
	return sl;
}

/* Node n's sleep_base (its costly items are queued now), or NULL. */
static struct sleep_base *base_of(const struct node *n)
{
	size_t k = (size_t)n->nsleep + n->nalts;
	struct sleep_base *b = malloc(sizeof(*b) + k * sizeof(struct alt) +
				      n->nalts);

	if (!b)
		return NULL;
	b->refs = 1;
	b->nsleep = n->nsleep;
	b->nalts = n->nalts;
	b->v = (struct alt *)(b + 1);
	b->ok = (uint8_t *)(b->v + k);
	if (n->nsleep)
		memcpy(b->v, n->sleep, (size_t)n->nsleep * sizeof(struct alt));
	memcpy(b->v + n->nsleep, n->alts, (size_t)n->nalts * sizeof(struct alt));
	for (int j = 0; j < n->nalts; j++)
		b->ok[j] = !asleep(n, &n->alts[j]) &&
			   (!n->todo || n->done[j] || n->todo[j]);
	return b;
}

/* item_sleep() of alternative i, made from its node's sleep_base. */
static struct alt *sleep_of(const struct dfs *d, const struct sleep_base *b,
			    int i, int *count)
{
	const struct alt *alts = b->v + b->nsleep, *via = &alts[i];
	struct alt *sl = malloc((size_t)(b->nsleep + i + 1) * sizeof(*sl));
	int k = 0;

	*count = 0;
	if (!sl || i >= b->nalts) {
		free(sl);
		return NULL;
	}
	for (int j = 0; j < b->nsleep; j++)
		if (independent(d, &b->v[j], via))
			sl[k++] = b->v[j];
	for (int j = 0; j < i; j++)
		if (b->ok[j] && independent(d, &alts[j], via) &&
		    bound_safe(&alts[j], via))
			sl[k++] = alts[j];
	*count = k;
	if (!k) {
		free(sl);
		return NULL;
	}
	return sl;
}

/*
 * State caching (Godefroid's state matching, under a bound): a choice
 * point whose program state (choice.state, tracer/state.c) and
 * alternatives equal those of a node met before, at a cost no higher and
 * with no more asleep there, has no future that node's subtree does not
 * have: its free edges ran below it and its costly ones are queued, with
 * at least as much of the bound left.  A node that is not pruned is
 * remembered.  Sound for reaching failures and end states when the state
 * covers everything the future depends on; tests/unit/test_dfs.c checks
 * it against brute force at every bound.
 */
static uint64_t cache_key(const struct choice *c)
{
	uint64_t h = c->state ^ 0x6a09e667f3bcc909ull;

	h = (h ^ ((uint64_t)c->kind << 32 | (uint32_t)c->nalts)) *
	    0x9e3779b97f4a7c15ull;
	h = (h ^ (uint64_t)(uint32_t)c->current) * 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];

		h = (h ^ ((uint64_t)a->thread << 48 | (uint64_t)a->timeout << 40 |
			  (uint64_t)a->cost << 32 | (uint64_t)a->kind << 24 |
			  (uint64_t)a->yield << 16 | (uint64_t)a->fn << 8 |
			  a->global)) *
		    0x9e3779b97f4a7c15ull;
		h = (h ^ a->obj) * 0x9e3779b97f4a7c15ull;
		h = (h ^ a->obj2) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
	}
	return h ? h : 1;
}

static bool cache_grow(struct dfs *d)
{
	size_t cap = d->capseen ? d->capseen * 2 : 4096;
	struct cached *n = calloc(cap, sizeof(*n));

	if (!n)
		return false;
	for (size_t i = 0; i < d->capseen; i++) {
		struct cached *e = &d->seen[i];

		if (!e->key)
			continue;
		size_t k = e->key & (cap - 1);

		while (n[k].key)
			k = (k + 1) & (cap - 1);
		n[k] = *e;
	}
	free(d->seen);
	d->seen = n;
	d->capseen = cap;
	return true;
}

static bool shm_seen_before(struct dfs *d, uint64_t key, uint64_t sleep,
			    bool all, uint8_t cost);

static bool seen_before(struct dfs *d, const struct choice *c,
			const struct node *n)
{
	uint64_t key = cache_key(c), sleep = 0;
	bool all = true; /* every sleeper fits the mask */

	for (int i = 0; i < n->nalts; i++)
		if (asleep(n, &n->alts[i])) {
			unsigned bit = 2u * n->alts[i].thread +
				       n->alts[i].timeout;

			if (bit < 64)
				sleep |= 1ull << bit;
			else
				all = false;
		}
	uint8_t cost = (uint8_t)(d->cur < 255 ? d->cur : 255);

	if (d->shm) {
		/* bound 0 (every worker's): its own table, copied to the
		 * shared one for the bounds after it */
		if (d->cur >= 1)
			return shm_seen_before(d, key, sleep, all, cost);
		(void)shm_seen_before(d, key, sleep, all, cost);
	}
	if (2 * (d->nseen + 1) > d->capseen && !cache_grow(d))
		return false;
	size_t k = key & (d->capseen - 1);

	while (d->seen[k].key && d->seen[k].key != key)
		k = (k + 1) & (d->capseen - 1);
	struct cached *e = &d->seen[k];

	if (e->key) {
		if (e->cost <= cost && !(e->sleep & ~sleep))
			return true;
		/* keep the entry that covers more */
		if (all && (cost < e->cost ||
			    (cost == e->cost && !(sleep & ~e->sleep)))) {
			e->cost = cost;
			e->sleep = sleep;
		}
		return false;
	}
	if (all) {
		*e = (struct cached){ key, sleep, cost };
		d->nseen++;
	}
	return false;
}

static void shm_lock(struct shm_entry *e)
{
	while (__atomic_exchange_n(&e->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&e->lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void shm_unlock(struct shm_entry *e)
{
	__atomic_store_n(&e->lock, 0, __ATOMIC_RELEASE);
}

/* seen_before() in the workers' shared table (see dfs_shared_cache). */
static bool shm_seen_before(struct dfs *d, uint64_t key, uint64_t sleep,
			    bool all, uint8_t cost)
{
	struct dfs_shared_cache *t = d->shm;
	uint64_t stamp = dfs_key(d);
	size_t k = key & (t->cap - 1);
	struct shm_entry *e = NULL;

	for (size_t probes = 0; probes < 64; probes++) {
		struct shm_entry *x = &t->e[k];
		uint64_t cur = __atomic_load_n(&x->key, __ATOMIC_ACQUIRE);

		if (cur == key) {
			e = x;
			break;
		}
		if (!cur) {
			if (!all || 4 * __atomic_load_n(&t->used,
							 __ATOMIC_RELAXED) >=
					    3 * t->cap)
				return false;
			shm_lock(x);
			uint64_t expect = 0;

			if (__atomic_compare_exchange_n(&x->key, &expect, key,
							false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				x->sleep = sleep;
				x->stamp = stamp;
				x->cost = cost;
				__atomic_add_fetch(&t->used, 1,
						   __ATOMIC_RELAXED);
				shm_unlock(x);
				return false;
			}
			shm_unlock(x);
			if (expect == key) {
				e = x;
				break;
			}
		}
		k = (k + 1) & (t->cap - 1);
	}
	if (!e)
		return false;
	bool hit = false;

	shm_lock(e);
	if (e->stamp <= stamp && e->cost <= cost && !(e->sleep & ~sleep)) {
		hit = true;
	} else if (all && (cost < e->cost ||
			   (cost == e->cost && !(sleep & ~e->sleep)) ||
			   e->stamp > stamp)) {
		/* keep the entry that covers more, or the one an earlier
		 * item in the serial order may use */
		e->cost = cost;
		e->sleep = sleep;
		e->stamp = stamp;
	}
	shm_unlock(e);
	return hit;
}

/* This run's path, kept when it ends (snapshot) for items to refer to. */
static long run_snap(struct dfs *d)
{
	if (d->cur_snap >= 0)
		return d->cur_snap;
	if (d->nsnaps == d->capsnaps) {
		size_t cap = d->capsnaps ? d->capsnaps * 2 : 64;
		uint16_t **ns = realloc(d->snaps, cap * sizeof(*ns));

		if (!ns)
			return -1;
		d->snaps = ns;
		d->capsnaps = cap;
	}
	d->snaps[d->nsnaps] = NULL;
	d->cur_snap = (long)d->nsnaps++;
	return d->cur_snap;
}

/*
 * DPOR (source sets with bounded POR's extra points; analysis/dpor.c
 * finds the races).  A run choice explores its first free awake
 * alternative; when the run ends, every race it contains asks a choice
 * point on its path to explore one alternative that reverses it.  An
 * edge of the tree is named by the hash of its path (edge_key), and the
 * set `edges` holds every edge explored, queued or asleep, so no edge
 * runs twice whichever run asks for it.  A free alternative of a node on
 * the current item's stack is explored by backtracking (todo); any other
 * (costly, or at a node of the item's prefix) becomes an item of the
 * bound its path costs: the current one (possibly below it: a race found
 * at a higher bound may need a cheaper reversal) or the next.  Beyond
 * the bound it is dropped; bounded POR's extra point at the start of the
 * racing thread's run of steps covers what that reversal would.  The
 * item of an alternative at a prefix node gets no sleep set (we no
 * longer know that node's); one at a stack node sleeps the earlier
 * alternatives explored or asked for there (item_sleep).
 */
static uint64_t edge_key(uint64_t path, int idx, int nalts)
{
	uint64_t h = (path ^ ((uint64_t)(uint16_t)idx << 16 |
			      (uint16_t)nalts)) * 0x9e3779b97f4a7c15ull;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h ? h : 1;
}

static bool edge_has(const struct dfs *d, uint64_t key)
{
	if (!d->capedges)
		return false;
	for (size_t k = key & (d->capedges - 1); d->edges[k];
	     k = (k + 1) & (d->capedges - 1))
		if (d->edges[k] == key)
			return true;
	return false;
}

static void edge_add(struct dfs *d, uint64_t key)
{
	if (2 * (d->nedges + 1) > d->capedges) {
		size_t cap = d->capedges ? d->capedges * 2 : 4096;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n) {
			d->dpor_failed = true;
			return;
		}
		for (size_t i = 0; i < d->capedges; i++) {
			if (!d->edges[i])
				continue;
			size_t k = d->edges[i] & (cap - 1);

			while (n[k])
				k = (k + 1) & (cap - 1);
			n[k] = d->edges[i];
		}
		free(d->edges);
		d->edges = n;
		d->capedges = cap;
	}
	size_t k = key & (d->capedges - 1);

	while (d->edges[k] && d->edges[k] != key)
		k = (k + 1) & (d->capedges - 1);
	if (!d->edges[k]) {
		d->edges[k] = key;
		d->nedges++;
	}
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 256;

	while (c < need)
		c *= 2;
	void *n = realloc(*p, c * size);

	if (!n)
		return false;
	*p = n;
	*cap = c;
	return true;
}

static bool rec_pick(struct dfs *d, const struct choice *c)
{
	if (!grow((void **)&d->rpicks, &d->caprpicks, d->nrpicks + 1,
		  sizeof(*d->rpicks)) ||
	    !grow((void **)&d->ralts, &d->capralts,
		  d->nralts + (size_t)c->nalts, sizeof(*d->ralts)))
		return false;
	memcpy(d->ralts + d->nralts, c->alts,
	       (size_t)c->nalts * sizeof(*d->ralts));
	d->rpicks[d->nrpicks++] = (struct rpick){
		d->nralts, (uint16_t)c->nalts, c->kind, d->path_cost,
		d->path_hash
	};
	d->nralts += (size_t)c->nalts;
	return true;
}

static bool rec_step(struct dfs *d, const struct alt *a, int32_t node)
{
	if (!grow((void **)&d->rsteps, &d->caprsteps, d->nrsteps + 1,
		  sizeof(*d->rsteps)))
		return false;
	d->rsteps[d->nrsteps++] = (struct dpor_step){ *a, node };
	return true;
}

/* Queue alternative i of the choice at decision pos of this run. */
static void dpor_queue(struct dfs *d, size_t pos, int i, int nalts, int cost,
		       struct alt *sl, int nsl)
{
	struct item it = { run_snap(d), (uint32_t)pos, (uint16_t)i,
			   (uint16_t)nalts, sl, nsl, 0, 0, d->cur_root, cost,
			   NULL };

	if (it.snap < 0 || !push_item(d, cost <= d->cur ? 0 : 1, it)) {
		free(sl);
		d->dpor_failed = true;
	}
}

/* Alternative i of stack node n (decision pos) is to be explored. */
static void dpor_add(struct dfs *d, struct node *n, size_t pos, int i)
{
	int cost = n->cost + n->alts[i].cost, nsl = 0;

	if (cost > d->bound)
		return;
	edge_add(d, edge_key(n->hash, i, n->nalts));
	d->dpor_points++;
	if (!n->alts[i].cost) {
		n->todo[i] = 1;
		return;
	}
	n->todo[i] = 2;
	struct alt *sl = d->sleep_sets ? item_sleep(d, n, i, &nsl) : NULL;

	dpor_queue(d, pos, i, n->nalts, cost, sl, nsl);
}

/* A race asks choice point `node` (a decision index of this run) for one
 * of cand[]: nothing if one is explored, queued or asleep there; else
 * the cheapest within the bound. */
static void dpor_request(void *ctx, int node, const int *cand, int nc)
{
	struct dfs *d = ctx;
	const struct rpick *rp = &d->rpicks[node];
	const struct alt *alts = d->ralts + rp->off;
	size_t pos = (size_t)node;
	int best = -1;

	for (int k = 0; k < nc; k++) {
		int a = cand[k];

		if (edge_has(d, edge_key(rp->hash, a, rp->nalts)))
			return;
		if (rp->cost + alts[a].cost <= d->bound &&
		    (best < 0 || alts[a].cost < alts[best].cost))
			best = a;
	}
	if (best < 0)
		return;
	if (pos >= d->plen && pos - d->plen < d->depth) {
		dpor_add(d, &d->stack[pos - d->plen], pos, best);
		return;
	}
	/* a node of the prefix: its earlier alternatives that are
	 * explored, queued or asleep may sleep (not knowing its own sleep
	 * set, we keep only those the bound allows) */
	struct alt *sl = NULL;
	int nsl = 0;

	if (d->sleep_sets && rp->kind == DEC_RUN && best &&
	    (sl = malloc((size_t)best * sizeof(*sl))))
		for (int j = 0; j < best; j++)
			if (edge_has(d, edge_key(rp->hash, j, rp->nalts)) &&
			    independent(d, &alts[j], &alts[best]) &&
			    bound_safe(&alts[j], &alts[best]))
				sl[nsl++] = alts[j];
	if (!nsl) {
		free(sl);
		sl = NULL;
	}
	edge_add(d, edge_key(rp->hash, best, rp->nalts));
	d->dpor_points++;
	dpor_queue(d, pos, best, rp->nalts, rp->cost + alts[best].cost, sl,
		   nsl);
}

/* The run has ended: its races add backtrack points; forget it. */
static void dpor_end_run(struct dfs *d)
{
	if (d->nrsteps && !d->diverged) {
		struct dpor_node *nodes =
			malloc((d->nrpicks + 1) * sizeof(*nodes));

		for (size_t k = 0; nodes && k < d->nrpicks; k++)
			nodes[k] = (struct dpor_node){
				d->ralts + d->rpicks[k].off, d->rpicks[k].nalts
			};
		if (!nodes || dpor_races(d->rsteps, d->nrsteps, nodes,
					 dfs_dependent, d->dpor_flags,
					 dpor_request, d))
			d->dpor_failed = true;
		free(nodes);
	}
	d->nrsteps = d->nrpicks = d->nralts = 0;
	d->path_hash = 0x243f6a8885a308d3ull;
	d->path_cost = 0;
}

static int pick_inner(struct dfs *d, const struct choice *c)
{
	size_t pos = d->pos++;

	/* 1. the item's prefix */
	if (pos < d->plen) {
		uint16_t idx = d->prefix[2 * pos],
			 nalts = d->prefix[2 * pos + 1] & NALTS_MASK,
			 print = d->prefix[2 * pos + 1] >> PRINT_SHIFT;

		if (nalts != c->nalts || idx >= c->nalts ||
		    (print && print != alts_print(c->alts, c->nalts,
						  c->kind))) {
			d->diverged = true;
			return -1;
		}
		if (pos + 1 == d->plen) {
			/* the item's costly edge: its sleep set from here */
			set_run_sleep(d, d->root_sleep, d->nroot_sleep);
			d->live = true;
		}
		return idx;
	}
	size_t depth = pos - d->plen;

	/* 2. the part of this item's stack being replayed */
	if (depth < d->depth) {
		struct node *n = &d->stack[depth];

		if (!same_alts(n, c)) {
			d->diverged = true;
			return -1;
		}
		sleep_after(d, n);
		return n->chosen;
	}
	/* 3. a fresh node */
	if (d->depth == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256;
		struct node *n = realloc(d->stack, cap * sizeof(*n));

		if (!n) {
			d->diverged = true;
			return -1;
		}
		d->stack = n;
		d->cap = cap;
	}
	struct node *n = &d->stack[d->depth];

	memset(n, 0, sizeof(*n));
	n->nalts = (uint16_t)c->nalts;
	n->kind = c->kind;
	n->alts = malloc((size_t)c->nalts * sizeof(struct alt));
	n->done = calloc((size_t)c->nalts, 1);
	if (!n->alts || !n->done) {
		free_node(n);
		d->diverged = true;
		return -1;
	}
	memcpy(n->alts, c->alts, (size_t)c->nalts * sizeof(struct alt));
	if (d->delay)
		for (int i = 0; i < n->nalts; i++) {
			int k = dfs_delay_cost(c, i);

			n->alts[i].cost = (uint8_t)(k < 255 ? k : 255);
		}
	d->depth++;
	n->hash = d->path_hash;
	n->cost = d->path_cost;
	/* DPOR: a run choice explores its first free alternative, and the
	 * others only when a race asks for them (dpor_request) */
	bool dp = dpor_active(d) && n->kind == DEC_RUN;

	if (dp && !(n->todo = calloc((size_t)c->nalts, 1))) {
		d->diverged = true;
		return -1;
	}
	if (fairness_yield(c))
		set_run_sleep(d, NULL, 0);
	node_sleep(d, n);
	if (d->cache && c->state && !d->placement &&
	    (d->nshards <= 1 || d->shm) && !dpor_active(d) &&
	    n->kind == DEC_RUN && seen_before(d, c, n)) {
		/* the same state was reached before at no higher cost: its
		 * futures ran (or are queued) from there */
		free_node(n);
		d->depth--;
		d->cache_hits++;
		d->pruned++;
		d->pruned_run = true;
		return -1;
	}
	/* asleep alternatives count as explored */
	for (int i = 0; i < n->nalts; i++)
		if (asleep(n, &n->alts[i])) {
			n->done[i] = 1;
			d->pruned++;
			if (dpor_active(d))
				edge_add(d, edge_key(n->hash, i, n->nalts));
		}
	/* DPOR: a timeout (or a timer's expiry) is no step that a race
	 * could reverse: the wake that preempts it happens before the woken
	 * step, so no race ever asks for it (tests/targets/timedlock_abort
	 * was a false PASS).  Every one within the bound is explored, as
	 * the plain search does. */
	int first = first_free(n);

	for (int i = 0; dp && i < n->nalts; i++)
		if (n->alts[i].timeout && !n->done[i] && !n->todo[i] &&
		    i != first)
			dpor_add(d, n, pos, i);
	/* costly edges are items of the next bound */
	struct sleep_base *base = NULL;

	if (d->cur < d->bound && !dp) {
		for (int i = 0; i < n->nalts; i++) {
			if (!n->alts[i].cost || n->done[i] ||
			    d->cur + n->alts[i].cost > d->bound)
				continue;
			if (run_snap(d) < 0)
				break;
			struct alt *sl = NULL;
			int nsl = 0;

			/* the sleep set from one copy of the node's, when
			 * the item starts */
			if (d->sleep_sets && n->kind == DEC_RUN && !base &&
			    !(base = base_of(n)))
				sl = item_sleep(d, n, i, &nsl);
			struct item it = { d->cur_snap, (uint32_t)pos,
					   (uint16_t)i, n->nalts, sl, nsl,
					   d->score ? d->score(d->score_ctx, c, i)
						    : 0,
					   0, d->cur_root,
					   d->cur + n->alts[i].cost, NULL };

			if (base && !sl) {
				base->refs++;
				it.base = base;
			}

			if (dpor_active(d))
				edge_add(d, edge_key(n->hash, i, n->nalts));
			if (it.bound > d->cur + 1)
				push_later(d, it);
			else
				push_item(d, 1, it);
		}
	}
	base_put(base); /* the items hold it now */
	/* the first free alternative that is awake (the costly edges above
	 * are only queued: first is still it) */
	if (first >= 0) {
		n->chosen = (uint16_t)first;
		n->done[first] = 1;
		if (dpor_active(d))
			edge_add(d, edge_key(n->hash, first, n->nalts));
		sleep_after(d, n);
		return first;
	}
	/* every free alternative is asleep: this run is redundant.  Under
	 * DPOR the node still needs one alternative explored: the first
	 * awake costly one, in a later item (none if the timeout rule above
	 * queued one already) */
	bool queued = false;

	for (int i = 0; dp && i < n->nalts; i++)
		queued |= n->todo[i] != 0;
	for (int i = 0; dp && !queued && i < n->nalts; i++)
		if (n->alts[i].cost && !n->done[i]) {
			dpor_add(d, n, pos, i);
			break;
		}
	d->pruned_run = true;
	return -1;
}

static int dfs_pick(void *ctx, const struct choice *c)
{
	struct dfs *d = ctx;
	bool dp = dpor_active(d);

	if (d->dpor_failed)
		return -1;
	if (dp && !rec_pick(d, c)) {
		d->diverged = true;
		return -1;
	}
	int i = pick_inner(d, c);

	if (dp && i >= 0) {
		d->path_hash = edge_key(d->path_hash, i, c->nalts);
		d->path_cost += c->alts[i].cost;
		if (c->kind == DEC_RUN &&
		    !rec_step(d, &c->alts[i], (int32_t)(d->nrpicks - 1)))
			d->dpor_failed = true;
	}
	return i;
}

/*
 * A choice of the last bound with one free alternative (a thread going
 * on whose preemption the bound no longer affords, or one thread able to
 * take over from one that blocked) decides nothing: the search takes it
 * (or finds it asleep) whatever its state.  Its state key would cost a
 * read of the program's memory (150 us, several stops' worth) for a cut
 * that the next keyed node makes as well: a node matching a forced
 * node's entry is in the last bound too and goes on exactly as the
 * entry's run went on, without a choice, to that run's next choice
 * with two or more free alternatives, which has its key (cut there:
 * same runs, same verdict), or to that run's end (a whole run instead
 * of a cut one, still one run).  Only where the state between stops
 * being keyable (a descriptor used, a timer armed) can the search run
 * a subtree twice: more runs, never fewer schedules.
 */
static bool forced(const struct dfs *d, const struct choice *c)
{
	int nfree = 0;

	if (d->forced_keys || d->cur < d->bound || c->kind != DEC_RUN)
		return false;
	for (int i = 0; i < c->nalts && nfree < 2; i++)
		nfree += (d->delay ? dfs_delay_cost(c, i) : c->alts[i].cost) ==
			 0;
	return nfree == 1;
}

/* Only a fresh node's state is looked up: ask for it there, unless the
 * node is forced. */
static bool dfs_want_state(void *ctx, const struct choice *c)
{
	const struct dfs *d = ctx;

	return d->cache && !d->placement && (d->nshards <= 1 || d->shm) &&
	       !dpor_active(d) && d->pos >= d->plen &&
	       d->pos - d->plen >= d->depth && !forced(d, c);
}

/*
 * struct strategy.known: the item's prefix and the replayed part of its
 * stack say the coming picks, and want no state keys there
 * (dfs_want_state asks only at fresh nodes), so the in-process agent may
 * take them in the program.  Counted while each would pick c->current's
 * index among as many alternatives, up to the item's own costly edge or
 * the first fresh node; the pick made for each at the next stop checks
 * the rest as at a stop (other alternatives: the run diverged).
 */
static uint64_t dfs_known(void *ctx, const struct choice *c)
{
	const struct dfs *d = ctx;
	int cur = known_current(c, true);
	uint64_t k = 0;

	if (d->dpor_failed || d->diverged || cur < 0)
		return 0;
	for (size_t pos = d->pos;; pos++, k++) {
		if (pos < d->plen) {
			if (pos + 1 == d->plen || d->prefix[2 * pos] != cur ||
			    (d->prefix[2 * pos + 1] & NALTS_MASK) != c->nalts)
				break;
			continue;
		}
		size_t depth = pos - d->plen;

		if (depth >= d->depth)
			break;
		const struct node *n = &d->stack[depth];

		if (n->kind != DEC_RUN || n->nalts != c->nalts ||
		    n->chosen != cur)
			break;
	}
	return k;
}

static bool dfs_was_prune(void *ctx)
{
	const struct dfs *d = ctx;

	return d->pruned_run && !d->diverged;
}

struct strategy dfs_strategy(struct dfs *d)
{
	return (struct strategy){ .ctx = d, .pick = dfs_pick,
				  .single = dfs_single,
				  .want_state = d->cache ? dfs_want_state
							 : NULL,
				  .known = dfs_known,
				  .pruned = dfs_was_prune };
}

void dfs_set_dpor(struct dfs *d, bool on, unsigned flags)
{
	d->dpor = on;
	d->dpor_flags = flags;
	if (on)
		dpor_end_run(d); /* the first run's path hash */
}

uint64_t dfs_dpor_points(const struct dfs *d)
{
	return d->dpor_points;
}

bool dfs_dpor(const struct dfs *d)
{
	return dpor_active(d);
}

void dfs_set_state_cache(struct dfs *d, bool on)
{
	d->cache = on;
}

void dfs_set_forced_keys(struct dfs *d, bool on)
{
	d->forced_keys = on;
}

uint64_t dfs_cache_hits(const struct dfs *d)
{
	return d->cache_hits;
}

void dfs_set_placement(struct dfs *d, bool on)
{
	d->placement = on;
	if (on)
		d->sleep_sets = false;
}

void dfs_set_order(struct dfs *d, dfs_score_fn score, void *ctx)
{
	d->score = score;
	d->score_ctx = ctx;
}

void dfs_set_shard(struct dfs *d, int shard, int nshards)
{
	d->shard = shard;
	d->nshards = nshards;
}

uint64_t dfs_key(const struct dfs *d)
{
	return d->cur ? (uint64_t)d->cur << 32 | d->cur_root : 0;
}

int dfs_bound(const struct dfs *d)
{
	return d->cur;
}

bool dfs_ended_short(const struct dfs *d)
{
	return !d->diverged && !d->pruned_run && !d->dpor_failed &&
	       d->pos < d->must_reach;
}

bool dfs_diverged(const struct dfs *d)
{
	/* an analysis that failed leaves the search incomplete */
	return d->diverged || d->dpor_failed;
}

bool dfs_pruned_run(const struct dfs *d);
bool dfs_pruned_run(const struct dfs *d)
{
	return d->pruned_run;
}

size_t dfs_pending(const struct dfs *d)
{
	return d->nitems[0] - d->next_item + d->nitems[1] + d->nlater +
	       (d->in_item ? 1 : 0);
}

void dfs_progress(const struct dfs *d, size_t *done, size_t *total)
{
	*done = d->next_item - (d->in_item && d->next_item ? 1 : 0);
	*total = d->nitems[0];
}

uint64_t dfs_pruned(const struct dfs *d)
{
	return d->pruned;
}

void dfs_free(struct dfs *d)
{
	if (!d)
		return;
	truncate_stack(d, 0);
	free(d->stack);
	free(d->prefix);
	free(d->root_sleep);
	free(d->run_sleep);
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < d->nitems[i]; k++) {
			free(d->items[i][k].sleep);
			base_put(d->items[i][k].base);
		}
		free(d->items[i]);
	}
	for (size_t k = 0; k < d->nlater; k++) {
		free(d->later[k].sleep);
		base_put(d->later[k].base);
	}
	free(d->later);
	for (size_t k = 0; k < d->nsnaps; k++)
		free(d->snaps[k]);
	free(d->snaps);
	free(d->seen);
	free(d->rsteps);
	free(d->rpicks);
	free(d->ralts);
	free(d->edges);
	free(d);
}
