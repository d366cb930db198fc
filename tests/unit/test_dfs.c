/*
 * Systematic exploration (analysis/dfs.c) driven by a synthetic program
 * instead of a tracee: a few threads, each a list of operations (a step on
 * an object, lock, unlock, yield), run by a tiny supervisor that builds
 * every choice point with the real run queue (tracer/sched.c) and asks the
 * dfs strategy, exactly as tracer/world.c does.  Each run is determined
 * by the picks, so a brute-force walk of the same tree gives every
 * schedule and its preemption cost, and we check that dfs at bound b
 * produces each schedule costing at most b exactly once, bound by bound.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/dpor.h"
#include "../../analysis/minimize.h"
#include "../../analysis/strategy.h"
#include "../../tracer/sched.h"

#define MAXT 4
#define MAXOPS 16
#define MAXOBJ 4
#define MAXLEN (2 * MAXT * MAXOPS + 1) /* futex retries, wake marks */

/* SPAWN makes thread obj (a thread clone), SPAWN_RET is the parent's
 * return from it; a thread of `spawned` exists only after its SPAWN */
enum mop {
	STEP, LOCK, UNLOCK, YIELD, CLOCK, CUNLOCK, START, EXIT, SPAWN, SPAWN_RET,
	RDLOCK, WRREQ, WRWAIT, RWUNLOCK, FLOCK, FUNLOCK
};

/* FLOCK and FUNLOCK are a futex mutex as glibc's: a lock finding the
 * mutex held queues its thread (blocked) and is retried once woken; an
 * unlock frees it and wakes one waiter, which with several queued is a
 * wake choice (DEC_WAKE), as tracer/syscall.c futex_wake_addr offers it.
 * The schedule records the woken thread as a letter. */

/* RDLOCK, WRREQ, WRWAIT and RWUNLOCK act on the one rwlock (its object is
 * RWOBJ): a reader's rdlock blocks while a writer holds it; a writer's
 * wrlock call registers it (WRREQ) and its wait (WRWAIT, a futex wait)
 * takes the lock once no reader and no writer holds it; RWUNLOCK ends
 * either.  In a reader-only state (no writer holds or waits) readers'
 * calls change the count only, and commute; any other rwlock operation is
 * logged, so that its order shows in the end state. */
#define RWOBJ 3

struct mop_s {
	enum mop op;
	int obj;
};

struct model {
	int nthreads;
	bool spawned[MAXT];
	int nops[MAXT];
	struct mop_s ops[MAXT][MAXOPS];
};

/* The state of one execution of a model. */
struct mstate {
	int pc[MAXT];
	int holder[MAXOBJ];	  /* lock holder, -1 */
	char log[MAXOBJ][MAXLEN]; /* who stepped on each object, in order */
	int nlog[MAXOBJ];
	int current;
	char sched[MAXLEN];	  /* thread of every operation, in order */
	int len;
	unsigned cost;
	bool deadlocked;
	bool created[MAXT];	  /* a spawned thread exists */
	int rw_count, rw_writer, rw_wait; /* readers, writer (-1), waiting */
	char rwlog[MAXLEN];	  /* the rwlock's logged operations */
	int nrwlog;
	bool waiting[MAXT];	  /* queued on a futex mutex */
	int wq[MAXOBJ][MAXT], nwq[MAXOBJ]; /* each mutex's queue, in order */
	int wake_obj;		  /* >= 0: an unlock's wake choice is due */
	struct event ev[MAXLEN];  /* what ran, for minimisation's seeds */
};

static void mstate_init(struct mstate *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < MAXOBJ; i++)
		s->holder[i] = -1;
	s->current = -1;
	s->rw_writer = -1;
	s->wake_obj = -1;
}

static bool reader_only(const struct mstate *s)
{
	return s->rw_writer < 0 && !s->rw_wait;
}

static void threads_of(const struct model *m, const struct mstate *s,
		       struct sched_thread *th)
{
	memset(th, 0, MAXT * sizeof(*th));
	for (int t = 0; t < m->nthreads; t++) {
		if (s->pc[t] >= m->nops[t] ||
		    (m->spawned[t] && !s->created[t])) {
			th[t].state = SCHED_DEAD;
			continue;
		}
		const struct mop_s *o = &m->ops[t][s->pc[t]];

		th[t].state = SCHED_ENABLED;
		th[t].obj = 0x1000 + (uint64_t)o->obj * 0x100;
		switch (o->op) {
		case STEP:
			th[t].kind = OP_ACCESS; /* commutes across objects */
			break;
		case LOCK:
			th[t].kind = OP_FUTEX_WAIT;
			if (s->holder[o->obj] >= 0 && s->holder[o->obj] != t)
				th[t].state = SCHED_BLOCKED;
			break;
		case UNLOCK:
			th[t].kind = OP_FUTEX_WAKE;
			break;
		case YIELD:
			th[t].kind = OP_YIELD;
			th[t].yield = true;
			th[t].obj = 0;
			break;
		case CLOCK: /* pthread_mutex_lock as a call point */
			th[t].kind = OP_CALL;
			th[t].fn = FN_MUTEX_LOCK;
			if (s->holder[o->obj] >= 0 && s->holder[o->obj] != t)
				th[t].state = SCHED_BLOCKED;
			break;
		case CUNLOCK:
			th[t].kind = OP_CALL;
			th[t].fn = FN_MUTEX_UNLOCK;
			break;
		case START:
			th[t].kind = OP_START;
			th[t].obj = 0;
			break;
		case EXIT:
			th[t].kind = OP_EXIT;
			th[t].obj = 0;
			break;
		case SPAWN:
		case SPAWN_RET:
			th[t].kind = OP_CLONE;
			th[t].fn = THREAD_CLONE;
			th[t].obj = 0;
			break;
		case RDLOCK:
		case RWUNLOCK:
			/* as tracer/world.c rwlock_readers reads the lock */
			th[t].kind = OP_CALL;
			th[t].fn = o->op == RDLOCK ? FN_RWLOCK_RDLOCK
						   : FN_RWLOCK_UNLOCK;
			if (reader_only(s))
				th[t].readers = (uint8_t)(1 + s->rw_count);
			if (o->op == RDLOCK && s->rw_writer >= 0 &&
			    s->rw_writer != t)
				th[t].state = SCHED_BLOCKED;
			break;
		case WRREQ:
			th[t].kind = OP_CALL;
			th[t].fn = FN_RWLOCK_WRLOCK;
			break;
		case WRWAIT:
			th[t].kind = OP_FUTEX_WAIT;
			if (s->rw_count || s->rw_writer >= 0)
				th[t].state = SCHED_BLOCKED;
			break;
		case FLOCK:
			th[t].kind = OP_FUTEX_WAIT;
			if (s->waiting[t])
				th[t].state = SCHED_BLOCKED;
			break;
		case FUNLOCK:
			th[t].kind = OP_FUTEX_WAKE;
			break;
		}
	}
}

static const uint8_t mop_kind[FUNLOCK + 1] = {
	[STEP] = OP_ACCESS, [LOCK] = OP_FUTEX_WAIT, [UNLOCK] = OP_FUTEX_WAKE,
	[YIELD] = OP_YIELD, [CLOCK] = OP_CALL,	    [CUNLOCK] = OP_CALL,
	[START] = OP_START, [EXIT] = OP_EXIT,	    [SPAWN] = OP_CLONE,
	[SPAWN_RET] = OP_CLONE, [RDLOCK] = OP_CALL,    [WRREQ] = OP_CALL,
	[WRWAIT] = OP_FUTEX_WAIT, [RWUNLOCK] = OP_CALL,
	[FLOCK] = OP_FUTEX_WAIT, [FUNLOCK] = OP_FUTEX_WAKE,
};

static const uint8_t mop_fn[FUNLOCK + 1] = {
	[CLOCK] = FN_MUTEX_LOCK,	 [CUNLOCK] = FN_MUTEX_UNLOCK,
	[RDLOCK] = FN_RWLOCK_RDLOCK, [WRREQ] = FN_RWLOCK_WRLOCK,
	[RWUNLOCK] = FN_RWLOCK_UNLOCK,
};

/* Thread t performs its next operation. */
static void perform(const struct model *m, struct mstate *s, int t,
		    unsigned cost)
{
	const struct mop_s *o = &m->ops[t][s->pc[t]++];

	switch (o->op) {
	case STEP:
		s->log[o->obj][s->nlog[o->obj]++] = (char)('0' + t);
		break;
	case LOCK:
	case CLOCK:
		s->holder[o->obj] = t;
		break;
	case UNLOCK:
	case CUNLOCK:
		s->holder[o->obj] = -1;
		break;
	case SPAWN:
		s->created[o->obj] = true;
		break;
	case FLOCK:
		if (s->holder[o->obj] >= 0) {
			/* held: queue, and retry once woken */
			s->pc[t]--;
			s->waiting[t] = true;
			s->wq[o->obj][s->nwq[o->obj]++] = t;
		} else {
			s->holder[o->obj] = t;
		}
		break;
	case FUNLOCK:
		s->holder[o->obj] = -1;
		if (s->nwq[o->obj])
			s->wake_obj = o->obj;
		break;
	case RDLOCK:
	case WRREQ:
	case WRWAIT:
	case RWUNLOCK: {
		bool quiet = reader_only(s) && o->op != WRREQ &&
			     o->op != WRWAIT && s->rw_writer != t;

		if (!quiet)
			s->rwlog[s->nrwlog++] =
				(char)('a' + 4 * t + (o->op - RDLOCK));
		if (o->op == RDLOCK)
			s->rw_count++;
		else if (o->op == WRREQ)
			s->rw_wait++;
		else if (o->op == WRWAIT)
			s->rw_wait--, s->rw_writer = t;
		else if (s->rw_writer == t)
			s->rw_writer = -1;
		else
			s->rw_count--;
		break;
	}
	default:
		break;
	}
	bool none = o->op == YIELD || o->op == START || o->op == EXIT ||
		    o->op == SPAWN || o->op == SPAWN_RET;

	s->ev[s->len] = (struct event){
		.step = (uint32_t)s->len, .thread = (uint16_t)t,
		.kind = mop_kind[o->op],
		.fn = mop_fn[o->op],
		.preempt = (uint8_t)cost,
		.obj = none ? 0 : 0x1000 + (uint64_t)o->obj * 0x100,
		.arg = o->op == STEP, /* a step writes its object */
	};
	s->sched[s->len++] = (char)('0' + t);
	s->cost += cost;
	s->current = t;
	cr_assert_lt(s->len, MAXLEN - 1);
}

/* The wake choice an unlock left due (false: none; one waiter: no
 * choice, woken at once, as the tracer does). */
static bool wake_choice(struct mstate *s, struct choice *c)
{
	int o = s->wake_obj;

	if (o < 0)
		return false;
	memset(c, 0, sizeof(*c));
	c->kind = DEC_WAKE;
	c->current = s->current;
	for (int i = 0; i < s->nwq[o]; i++)
		c->alts[c->nalts++] = (struct alt){
			.thread = (uint16_t)s->wq[o][i], .kind = OP_WOKEN,
			.obj = 0x1000 + (uint64_t)o * 0x100 };
	return c->nalts > 1;
}

/* Waiter i of the due wake is woken, at cost (delays; a wake is free for
 * preemption bounding, as in the tracer). */
static void wake(struct mstate *s, int i, unsigned cost)
{
	int o = s->wake_obj, t = s->wq[o][i];

	s->wake_obj = -1;
	memmove(&s->wq[o][i], &s->wq[o][i + 1],
		(size_t)(s->nwq[o] - i - 1) * sizeof(int));
	s->nwq[o]--;
	s->waiting[t] = false;
	s->ev[s->len] = (struct event){ .step = (uint32_t)s->len,
					.thread = (uint16_t)t,
					.kind = OP_WOKEN };
	s->sched[s->len++] = (char)('a' + t);
	s->cost += cost;
}

/* State caching: runs give their choices a state (model_state) and dfs
 * caches them; with model_sums a step adds to its object (the state and
 * the outcome count each thread's steps, not their order), so that
 * different orders reach the same state. */
static bool model_cache, model_sums;
/* state keys at the last bound's forced choices too (the old search) */
static bool model_forced_keys;
/* DPOR (dfs_set_dpor) with these flags, in explore_model */
static bool model_dpor;
static unsigned model_dpor_flags = DPOR_DEFAULT;

static unsigned steps_of(const struct mstate *s, int obj, int t)
{
	unsigned n = 0;

	for (int i = 0; i < s->nlog[obj]; i++)
		n += s->log[obj][i] == '0' + t;
	return n;
}

static uint64_t model_state(const struct model *m, const struct mstate *s)
{
	uint64_t h = 1469598103934665603ull;

#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
	for (int t = 0; t < m->nthreads; t++)
		MIX(s->pc[t]);
	for (int o = 0; o < MAXOBJ; o++) {
		MIX(s->holder[o] + 1);
		if (model_sums) {
			for (int t = 0; t < m->nthreads; t++)
				MIX(steps_of(s, o, t));
			continue;
		}
		MIX(s->nlog[o]);
		for (int i = 0; i < s->nlog[o]; i++)
			MIX(s->log[o][i]);
	}
	MIX(s->current + 1);
	MIX(s->rw_count);
	MIX(s->rw_writer + 1);
	MIX(s->rw_wait);
	for (int o = 0; o < MAXOBJ; o++) {
		MIX(s->nwq[o]);
		for (int i = 0; i < s->nwq[o]; i++)
			MIX(s->wq[o][i]);
	}
	for (int i = 0; i < s->nrwlog; i++)
		MIX(s->rwlog[i]);
#undef MIX
	return h ? h : 1;
}

/* The end state, for comparing outcomes: each object's log. */
static void outcome(const struct mstate *s, char *buf, size_t len)
{
	size_t k = 0;

	for (int i = 0; i < MAXOBJ; i++) {
		if (model_sums) {
			for (int t = 0; t < MAXT; t++)
				k += (size_t)snprintf(buf + k, len - k, "%u,",
						      steps_of(s, i, t));
			k += (size_t)snprintf(buf + k, len - k, "/");
			continue;
		}
		k += (size_t)snprintf(buf + k, len - k, "%s/", s->log[i]);
	}
	if (s->nrwlog || s->rw_count)
		k += (size_t)snprintf(buf + k, len - k, "rw %.*s %d/",
				      s->nrwlog, s->rwlog, s->rw_count);
	if (s->deadlocked)
		snprintf(buf + k, len - k, "deadlock");
}

enum run_end { RUN_DONE, RUN_DEADLOCK, RUN_ABANDONED };

static bool walk_delay; /* costs are delays (dfs_delay_cost) */

/* One execution under a strategy, like session_run(): the strategy is
 * asked only where there are at least two alternatives. */
static enum run_end run_model(const struct model *m, struct strategy *st,
			      struct mstate *s)
{
	struct sched_thread th[MAXT];
	struct choice c;
	uint32_t step = 0;

	mstate_init(s);
	for (;; step++) {
		threads_of(m, s, th);
		memset(&c, 0, sizeof(c));
		sched_alternatives(th, m->nthreads, s->current, &c);
		if (c.nalts == 0) {
			for (int t = 0; t < m->nthreads; t++)
				if (th[t].state != SCHED_DEAD) {
					s->deadlocked = true;
					return RUN_DEADLOCK;
				}
			return RUN_DONE;
		}
		c.step = step;
		c.preemptions = s->cost;
		if (model_cache && st->want_state &&
		    st->want_state(st->ctx, &c))
			c.state = model_state(m, s);
		int idx = 0;

		if (c.nalts > 1) {
			idx = st->pick(st->ctx, &c);
			if (idx < 0)
				return RUN_ABANDONED;
			cr_assert_lt(idx, c.nalts, "pick out of range");
		} else if (st->single && !st->single(st->ctx, &c)) {
			return RUN_ABANDONED;
		}
		perform(m, s, c.alts[idx].thread,
			walk_delay ? (unsigned)dfs_delay_cost(&c, idx)
				   : c.alts[idx].cost);
		if (st->executed)
			st->executed(st->ctx, &s->ev[s->len - 1]);
		if (wake_choice(s, &c)) {
			c.step = ++step;
			c.preemptions = s->cost;
			idx = st->pick(st->ctx, &c);
			if (idx < 0)
				return RUN_ABANDONED;
			cr_assert_lt(idx, c.nalts, "wake pick out of range");
			wake(s, idx,
			     walk_delay ? (unsigned)dfs_delay_cost(&c, idx) : 0);
		} else if (s->wake_obj >= 0) {
			wake(s, 0, 0);
		}
	}
}

/* --- brute force: every path of the tree ------------------------------- */

struct sched_set {
	char (*s)[MAXLEN];
	unsigned *cost;
	int *seen;
	char (*out)[MAXLEN * 2];
	size_t n, cap;
	/* set_find's index: open addressing over s, 1 + its index, 0
	 * empty (a linear search made brute force's sets quadratic) */
	size_t *idx;
	size_t icap;
};

static uint64_t sched_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*p)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
	return h;
}

static void set_index(struct sched_set *ss, size_t i)
{
	size_t k = sched_hash(ss->s[i]) & (ss->icap - 1);

	while (ss->idx[k])
		k = (k + 1) & (ss->icap - 1);
	ss->idx[k] = i + 1;
}

static void set_add(struct sched_set *ss, const struct mstate *s)
{
	if (ss->n == ss->cap) {
		ss->cap = ss->cap ? 2 * ss->cap : 64;
		ss->s = realloc(ss->s, ss->cap * sizeof(*ss->s));
		ss->cost = realloc(ss->cost, ss->cap * sizeof(*ss->cost));
		ss->seen = realloc(ss->seen, ss->cap * sizeof(*ss->seen));
		ss->out = realloc(ss->out, ss->cap * sizeof(*ss->out));
		cr_assert(ss->s && ss->cost && ss->seen && ss->out);
	}
	memcpy(ss->s[ss->n], s->sched, MAXLEN);
	ss->s[ss->n][s->len] = 0;
	ss->cost[ss->n] = s->cost;
	ss->seen[ss->n] = 0;
	outcome(s, ss->out[ss->n], sizeof(ss->out[0]));
	ss->n++;
	if (2 * ss->n > ss->icap) {
		free(ss->idx);
		ss->icap = ss->icap ? 2 * ss->icap : 256;
		ss->idx = calloc(ss->icap, sizeof(*ss->idx));
		cr_assert(ss->idx);
		for (size_t i = 0; i < ss->n; i++)
			set_index(ss, i);
	} else {
		set_index(ss, ss->n - 1);
	}
}

static long set_find(const struct sched_set *ss, const char *sched)
{
	if (!ss->icap)
		return -1;
	for (size_t k = sched_hash(sched) & (ss->icap - 1); ss->idx[k];
	     k = (k + 1) & (ss->icap - 1))
		if (!strcmp(ss->s[ss->idx[k] - 1], sched))
			return (long)ss->idx[k] - 1;
	return -1;
}

static void set_free(struct sched_set *ss)
{
	free(ss->s);
	free(ss->cost);
	free(ss->seen);
	free(ss->out);
	free(ss->idx);
	memset(ss, 0, sizeof(*ss));
}

static void walk(const struct model *m, const struct mstate *s,
		 struct sched_set *all)
{
	struct sched_thread th[MAXT];
	struct choice c;

	threads_of(m, s, th);
	memset(&c, 0, sizeof(c));
	sched_alternatives(th, m->nthreads, s->current, &c);
	if (c.nalts == 0) {
		struct mstate end = *s;

		for (int t = 0; t < m->nthreads; t++)
			end.deadlocked |= th[t].state != SCHED_DEAD;
		set_add(all, &end);
		return;
	}
	for (int i = 0; i < c.nalts; i++) {
		struct mstate next = *s;
		struct choice w;

		perform(m, &next, c.alts[i].thread,
			walk_delay ? (unsigned)dfs_delay_cost(&c, i)
				   : c.alts[i].cost);
		if (!wake_choice(&next, &w)) {
			if (next.wake_obj >= 0)
				wake(&next, 0, 0);
			walk(m, &next, all);
			continue;
		}
		for (int k = 0; k < w.nalts; k++) {
			struct mstate woken = next;

			wake(&woken, k,
			     walk_delay ? (unsigned)dfs_delay_cost(&w, k) : 0);
			walk(m, &woken, all);
		}
	}
}

static void all_schedules(const struct model *m, struct sched_set *all)
{
	struct mstate s;

	mstate_init(&s);
	memset(all, 0, sizeof(*all));
	walk(m, &s, all);
}

/* --- exploration -------------------------------------------------------- */

struct explored {
	unsigned runs, abandoned;
	struct sched_set got;
};

/* Explore m with dfs to bound; check the run-by-run invariants. */
static void explore_model(const struct model *m, int bound, bool sleep_sets,
			  struct explored *ex)
{
	struct dfs *d = dfs_new(bound, sleep_sets);
	struct strategy st = dfs_strategy(d);
	int last_bound = 0;

	cr_assert_not_null(d);
	if (walk_delay)
		dfs_set_delay(d, true);
	if (model_cache) {
		dfs_set_state_cache(d, true);
		dfs_set_forced_keys(d, model_forced_keys);
		st = dfs_strategy(d);
		cr_assert(st.want_state);
	}
	if (model_dpor)
		dfs_set_dpor(d, true, model_dpor_flags);
	memset(ex, 0, sizeof(*ex));
	while (dfs_next(d)) {
		struct mstate s;
		enum run_end e = run_model(m, &st, &s);

		cr_assert_lt(ex->runs, 100000u, "dfs does not terminate");
		ex->runs++;
		cr_assert_geq(dfs_bound(d), last_bound,
			      "bounds go down: %d after %d", dfs_bound(d),
			      last_bound);
		cr_assert_leq(dfs_bound(d), bound < 0 ? 0 : bound);
		last_bound = dfs_bound(d);
		if (e == RUN_ABANDONED) {
			cr_assert(sleep_sets || model_cache || model_dpor,
				  "run %u abandoned without "
				  "sleep sets (diverged=%d)",
				  ex->runs, dfs_diverged(d));
			cr_assert_not(dfs_diverged(d));
			ex->abandoned++;
			dfs_end_run(d);
			continue;
		}
		cr_assert_not(dfs_diverged(d));
		s.sched[s.len] = 0;
		/* DPOR may reverse a race found at bound b through a path
		 * cheaper than b */
		if (model_dpor)
			cr_assert_leq(s.cost, (unsigned)dfs_bound(d),
				      "run %u (%s) costs %u at bound %d",
				      ex->runs, s.sched, s.cost, dfs_bound(d));
		else
			cr_assert_eq(s.cost, (unsigned)dfs_bound(d),
				     "run %u (%s) costs %u while exploring "
				     "bound %d",
				     ex->runs, s.sched, s.cost, dfs_bound(d));
		set_add(&ex->got, &s);
		dfs_end_run(d);
	}
	cr_assert_not(dfs_next(d), "finished exploration restarted");
	cr_assert_eq(dfs_pending(d), 0);
	dfs_free(d);
}

/* Every schedule of cost <= bound exactly once, nothing else. */
static void check_exactly_once(const struct model *m, int bound)
{
	struct sched_set all;
	struct explored ex;
	size_t expect = 0;

	all_schedules(m, &all);
	explore_model(m, bound, false, &ex);
	for (size_t i = 0; i < ex.got.n; i++) {
		long k = set_find(&all, ex.got.s[i]);

		cr_assert_geq(k, 0, "dfs produced %s, not a schedule",
			      ex.got.s[i]);
		cr_assert_leq(all.cost[k], (unsigned)bound,
			      "%s costs %u > bound %d", ex.got.s[i],
			      all.cost[k], bound);
		cr_assert_eq(all.seen[k], 0, "%s produced twice", ex.got.s[i]);
		all.seen[k] = 1;
	}
	for (size_t i = 0; i < all.n; i++) {
		if (all.cost[i] > (unsigned)bound)
			continue;
		expect++;
		cr_assert(all.seen[i], "%s (cost %u) missed at bound %d",
			  all.s[i], all.cost[i], bound);
	}
	cr_assert_eq(ex.got.n, expect);
	cr_assert_eq(ex.runs, expect, "runs: %u, schedules: %zu", ex.runs,
		     expect);
	set_free(&all);
	set_free(&ex.got);
}

static struct model steps(int nthreads, int nops, int obj)
{
	struct model m = { .nthreads = nthreads };

	for (int t = 0; t < nthreads; t++) {
		m.nops[t] = nops;
		for (int i = 0; i < nops; i++)
			m.ops[t][i] = (struct mop_s){ STEP, obj };
	}
	return m;
}

/* Each thread: lock 0; step; unlock 0; step. */
static struct model locks(int nthreads)
{
	struct model m = { .nthreads = nthreads };

	for (int t = 0; t < nthreads; t++) {
		m.nops[t] = 4;
		m.ops[t][0] = (struct mop_s){ LOCK, 0 };
		m.ops[t][1] = (struct mop_s){ STEP, 1 };
		m.ops[t][2] = (struct mop_s){ UNLOCK, 0 };
		m.ops[t][3] = (struct mop_s){ STEP, 2 };
	}
	return m;
}

/* Two locks taken in opposite orders: some schedules deadlock. */
static struct model inversion(void)
{
	struct model m = { .nthreads = 2 };

	m.nops[0] = m.nops[1] = 4;
	m.ops[0][0] = (struct mop_s){ LOCK, 0 };
	m.ops[0][1] = (struct mop_s){ LOCK, 1 };
	m.ops[0][2] = (struct mop_s){ UNLOCK, 1 };
	m.ops[0][3] = (struct mop_s){ UNLOCK, 0 };
	m.ops[1][0] = (struct mop_s){ LOCK, 1 };
	m.ops[1][1] = (struct mop_s){ LOCK, 0 };
	m.ops[1][2] = (struct mop_s){ UNLOCK, 0 };
	m.ops[1][3] = (struct mop_s){ UNLOCK, 1 };
	return m;
}

/* Spin-wait style: step, yield, step, yield, step. */
static struct model yields(int nthreads)
{
	struct model m = { .nthreads = nthreads };

	for (int t = 0; t < nthreads; t++) {
		m.nops[t] = 5;
		for (int i = 0; i < 5; i++)
			m.ops[t][i] = (struct mop_s){ i % 2 ? YIELD : STEP,
						      0 };
	}
	return m;
}

Test(dfs, bound_0_of_independent_threads_runs_each_free_order_once)
{
	struct model m = steps(2, 3, 0);

	/* no current thread at the first choice: both orders are free */
	check_exactly_once(&m, 0);
}

Test(dfs, two_threads_every_bound)
{
	struct model m = steps(2, 3, 0);

	for (int b = 0; b <= 4; b++)
		check_exactly_once(&m, b);
}

Test(dfs, three_threads_every_bound)
{
	struct model m = steps(3, 2, 0);

	for (int b = 0; b <= 3; b++)
		check_exactly_once(&m, b);
}

Test(dfs, high_bound_explores_every_interleaving)
{
	struct model m = steps(2, 3, 0);
	struct explored ex;

	explore_model(&m, 10, false, &ex);
	cr_assert_eq(ex.runs, 20, "C(6,3) interleavings, got %u", ex.runs);
	set_free(&ex.got);
}

Test(dfs, locks_with_blocking_every_bound)
{
	struct model m = locks(2);

	for (int b = 0; b <= 3; b++)
		check_exactly_once(&m, b);
	m = locks(3);
	for (int b = 0; b <= 2; b++)
		check_exactly_once(&m, b);
}

Test(dfs, deadlocking_schedules_are_schedules_too)
{
	struct model m = inversion();
	struct sched_set all;
	int deadlocks = 0;

	all_schedules(&m, &all);
	for (size_t i = 0; i < all.n; i++)
		deadlocks += strlen(all.s[i]) < 8;
	cr_assert_gt(deadlocks, 0, "the model deadlocks somewhere");
	set_free(&all);
	for (int b = 0; b <= 3; b++)
		check_exactly_once(&m, b);
}

Test(dfs, yields_switch_for_free)
{
	struct model m = yields(2);

	for (int b = 0; b <= 2; b++)
		check_exactly_once(&m, b);
	m = yields(3);
	check_exactly_once(&m, 1);
}

Test(dfs, bounds_are_explored_in_order)
{
	struct model m = steps(3, 2, 0);
	struct explored ex;
	unsigned prev = 0;

	explore_model(&m, 3, false, &ex);
	for (size_t i = 0; i < ex.got.n; i++) {
		cr_assert_geq(ex.got.cost[i], prev, "run %zu", i);
		prev = ex.got.cost[i];
	}
	cr_assert_eq(prev, 3, "bound 3 reached");
	set_free(&ex.got);
}

Test(dfs, negative_bound_is_bound_0)
{
	struct model m = steps(2, 2, 0);
	struct explored a, b;

	explore_model(&m, 0, false, &a);
	explore_model(&m, -1, false, &b);
	cr_assert_eq(a.runs, b.runs);
	set_free(&a.got);
	set_free(&b.got);
}

Test(dfs, single_thread_runs_once)
{
	struct model m = steps(1, 5, 0);
	struct explored ex;

	explore_model(&m, 2, false, &ex);
	cr_assert_eq(ex.runs, 1);
	cr_assert_str_eq(ex.got.s[0], "00000");
	set_free(&ex.got);
}

Test(dfs, diverging_run_is_reported)
{
	struct model m = steps(2, 2, 0);
	struct dfs *d = dfs_new(1, false);
	struct strategy st = dfs_strategy(d);
	struct mstate s;

	cr_assert(dfs_next(d));
	cr_assert_eq(run_model(&m, &st, &s), RUN_DONE);
	cr_assert_not(dfs_diverged(d));
	dfs_end_run(d);
	cr_assert(dfs_next(d));
	/* the program now offers three alternatives where it offered two */
	struct choice c = { .step = 0, .kind = DEC_RUN, .current = -1,
			    .nalts = 3 };

	for (int i = 0; i < 3; i++)
		c.alts[i] = (struct alt){ .thread = (uint16_t)i,
					  .kind = OP_ACCESS };
	cr_assert_eq(st.pick(st.ctx, &c), -1);
	cr_assert(dfs_diverged(d));
	dfs_free(d);
}

/* Sleep sets: no schedule twice, never over the bound, fewer runs, and
 * with an unreachable bound the same end states as without them. */
static void check_sleep_sets(const struct model *m)
{
	struct explored off, on;

	explore_model(m, 20, false, &off);
	explore_model(m, 20, true, &on);
	cr_log_info("%u runs without sleep sets, %u with (%u cut short)",
		    off.runs, on.runs, on.abandoned);
	cr_assert_leq(on.runs, off.runs);
	for (size_t i = 0; i < on.got.n; i++)
		for (size_t j = i + 1; j < on.got.n; j++)
			cr_assert_str_neq(on.got.s[i], on.got.s[j]);
	for (size_t i = 0; i < off.got.n; i++) {
		bool found = false;

		for (size_t j = 0; j < on.got.n && !found; j++)
			found = !strcmp(off.got.out[i], on.got.out[j]);
		cr_assert(found, "end state %s of %s lost by sleep sets",
			  off.got.out[i], off.got.s[i]);
	}
	set_free(&off.got);
	set_free(&on.got);
}

Test(dfs, sleep_sets_keep_every_end_state_of_independent_steps)
{
	struct model m = { .nthreads = 2 };

	/* T0 steps on objects 0 and 1, T1 on 1 and 2: one conflict */
	m.nops[0] = m.nops[1] = 2;
	m.ops[0][0] = (struct mop_s){ STEP, 0 };
	m.ops[0][1] = (struct mop_s){ STEP, 1 };
	m.ops[1][0] = (struct mop_s){ STEP, 2 };
	m.ops[1][1] = (struct mop_s){ STEP, 1 };
	check_sleep_sets(&m);
}

Test(dfs, sleep_sets_prune_fully_independent_threads)
{
	struct model m = { .nthreads = 3 };
	struct explored off, on;

	for (int t = 0; t < 3; t++) {
		m.nops[t] = 2;
		m.ops[t][0] = (struct mop_s){ STEP, t };
		m.ops[t][1] = (struct mop_s){ STEP, t };
	}
	check_sleep_sets(&m);
	explore_model(&m, 20, false, &off);
	explore_model(&m, 20, true, &on);
	cr_assert_lt(on.runs - on.abandoned, off.runs,
		     "independent threads need fewer complete runs");
	set_free(&off.got);
	set_free(&on.got);
}

Test(dfs, sleep_sets_keep_every_end_state_with_locks)
{
	struct model m = locks(2);

	check_sleep_sets(&m);
}

/* --- minimisation by placement search (analysis/minimize.c) ------------ */

/* Each thread: lock; read x; unlock; lock; write x; unlock.  An update is
 * lost when another thread's access to x falls between a thread's two. */
static struct model lost_update(int nthreads)
{
	struct model m = { .nthreads = nthreads };

	for (int t = 0; t < nthreads; t++) {
		m.nops[t] = 6;
		m.ops[t][0] = (struct mop_s){ LOCK, 0 };
		m.ops[t][1] = (struct mop_s){ STEP, 1 };
		m.ops[t][2] = (struct mop_s){ UNLOCK, 0 };
		m.ops[t][3] = (struct mop_s){ LOCK, 0 };
		m.ops[t][4] = (struct mop_s){ STEP, 1 };
		m.ops[t][5] = (struct mop_s){ UNLOCK, 0 };
	}
	return m;
}

static bool lost(const struct mstate *s)
{
	const char *l = s->log[1];

	for (int i = 0; i + 1 < s->nlog[1]; i += 2)
		if (l[i] != l[i + 1])
			return true;
	return false;
}

static struct model g_model;
static bool (*g_fails)(const struct mstate *s) = lost;

/* minimize_strategy_fn over the model */
static int model_run(void *ctx, struct strategy *st, struct run_result *out)
{
	struct mstate s;
	enum run_end e = run_model(ctx, st, &s);

	memset(out, 0, sizeof(*out));
	out->thread = -1;
	out->preemptions = s.cost;
	out->nevents = (size_t)s.len;
	out->events = malloc((size_t)(s.len + 1) * sizeof(struct event));
	cr_assert(out->events);
	memcpy(out->events, s.ev, (size_t)s.len * sizeof(struct event));
	if (e == RUN_ABANDONED)
		out->failure = FAIL_DIVERGED;
	else if (e == RUN_DEADLOCK)
		out->failure = FAIL_DEADLOCK;
	else if (g_fails(&s)) {
		out->failure = FAIL_CRASH;
		out->signal = 6;
		snprintf(out->location, sizeof(out->location), "main");
	}
	return 0;
}

Test(minimize_search, sampled_lost_update_among_4_threads_needs_1)
{
	g_model = lost_update(4);
	struct sampler *smp = sampler_new(false, 7, 3);
	struct strategy st = sampler_strategy(smp);
	struct run_result best;
	int found = 0;

	/* a random walk's failure carries many preemptions */
	for (uint64_t k = 0; k < 1000 && !found; k++) {
		sampler_begin(smp, k, 30);
		model_run(&g_model, &st, &best);
		if (best.failure == FAIL_CRASH && best.preemptions >= 3)
			found = 1;
		else
			run_result_free(&best);
	}
	sampler_free(smp);
	cr_assert(found, "no sampled failure with 3+ preemptions");
	unsigned before = best.preemptions;
	struct minimize_stats ms = { 0 };
	int b = minimize_search(model_run, &g_model, &best, 1000, &ms);

	cr_log_info("%u preemptions -> %u in %u runs", before,
		    best.preemptions, ms.runs);
	cr_assert_eq(b, 1, "found at bound %d", b);
	cr_assert_eq(best.preemptions, 1);
	cr_assert_eq(best.failure, FAIL_CRASH);
	cr_assert_leq(ms.runs, 1000);
	run_result_free(&best);
}

Test(minimize_search, nothing_below_the_minimum)
{
	g_model = lost_update(2);
	struct dfs *d = dfs_new(1, false);
	struct strategy st = dfs_strategy(d);
	struct run_result best;
	bool found = false;

	/* systematic bound 1 finds a one-preemption failure */
	while (!found && dfs_next(d)) {
		model_run(&g_model, &st, &best);
		dfs_end_run(d);
		found = best.failure == FAIL_CRASH;
		if (!found)
			run_result_free(&best);
	}
	dfs_free(d);
	cr_assert(found);
	cr_assert_eq(best.preemptions, 1);
	struct minimize_stats ms = { 0 };

	cr_assert_eq(minimize_search(model_run, &g_model, &best, 100, &ms),
		     -1);
	cr_assert_eq(best.preemptions, 1, "kept");
	cr_assert_eq(ms.runs, 1, "bound 0 of a placement search is one run");
	run_result_free(&best);
}

/* Placement search runs each item once: bound b is every placement of b
 * preemptions on default paths, each once, all costing b. */
Test(dfs, placement_runs_each_item_once)
{
	struct model m = steps(2, 3, 0);
	struct dfs *d = dfs_new(2, false);
	struct strategy st = dfs_strategy(d);
	struct sched_set got = { 0 };
	unsigned runs = 0;

	dfs_set_placement(d, true);
	while (dfs_next(d)) {
		struct mstate s;

		cr_assert_eq(run_model(&m, &st, &s), RUN_DONE);
		dfs_end_run(d);
		s.sched[s.len] = 0;
		cr_assert_eq(s.cost, (unsigned)dfs_bound(d));
		cr_assert_lt(set_find(&got, s.sched), 0, "%s twice", s.sched);
		set_add(&got, &s);
		runs++;
	}
	/* bound 0: the default run (and the other free first choice is
	 * not explored); bound 1 and 2: placements on default paths */
	cr_assert_lt(runs, 20u, "fewer than every interleaving");
	cr_assert_gt(runs, 3u);
	dfs_free(d);
	set_free(&got);
}

/* --- samplers (analysis/strategy.c) on the model ------------------------ */

/* Two threads, k critical sections each: lock; step on x; unlock. */
static struct model alternation(int k)
{
	struct model m = { .nthreads = 2 };

	for (int t = 0; t < 2; t++) {
		m.nops[t] = 3 * k;
		for (int i = 0; i < k; i++) {
			m.ops[t][3 * i] = (struct mop_s){ LOCK, 0 };
			m.ops[t][3 * i + 1] = (struct mop_s){ STEP, 1 };
			m.ops[t][3 * i + 2] = (struct mop_s){ UNLOCK, 0 };
		}
	}
	return m;
}

static bool strictly_alternates(const struct mstate *s)
{
	for (int i = 1; i < s->nlog[1]; i++)
		if (s->log[1][i] == s->log[1][i - 1])
			return false;
	return s->nlog[1] > 1;
}

static int always_first(void *ctx, const struct choice *c)
{
	(void)ctx;
	(void)c;
	return 0;
}

/* How many of n samples of kind satisfy pred. */
static unsigned sample_hits(const struct model *m, int kind, uint64_t seed,
			    unsigned n, bool (*pred)(const struct mstate *))
{
	struct sampler *smp = sampler_new_kind(kind, seed, 3);
	struct strategy st = sampler_strategy(smp);
	struct strategy first = { .pick = always_first };
	struct mstate s;
	unsigned hits = 0;

	cr_assert_not_null(smp);
	cr_assert_eq(sampler_kind(smp), kind);
	cr_assert_eq(run_model(m, &first, &s), RUN_DONE);
	sampler_profile(smp, s.ev, (size_t)s.len);
	for (unsigned k = 0; k < n; k++) {
		sampler_begin(smp, k, 40);
		enum run_end e = run_model(m, &st, &s);

		cr_assert_neq(e, RUN_ABANDONED, "%s abandoned a run",
			      sampler_name(kind));
		hits += e == RUN_DONE && pred(&s);
	}
	sampler_free(smp);
	return hits;
}

Test(sampler, names_round_trip)
{
	for (int k = 0; k < SAMPLER_MAX; k++)
		cr_assert_eq(sampler_kind_of(sampler_name(k)), k);
	cr_assert_eq(sampler_kind_of("dfs"), -1);
}

/* Every sample is a pure function of (seed, run number, profile): -j and
 * the re-run of a failing sample depend on it. */
Test(sampler, samples_are_pure_functions_of_seed_and_number)
{
	struct model m = lost_update(3);
	struct strategy first = { .pick = always_first };
	struct mstate base;

	cr_assert_eq(run_model(&m, &first, &base), RUN_DONE);
	for (int kind = 0; kind < SAMPLER_MAX; kind++) {
		struct sampler *a = sampler_new_kind(kind, 42, 3);
		struct sampler *b = sampler_new_kind(kind, 42, 3);
		struct strategy sa = sampler_strategy(a),
				sb = sampler_strategy(b);
		unsigned differ = 0;
		char prev[MAXLEN] = "";

		sampler_profile(a, base.ev, (size_t)base.len);
		sampler_profile(b, base.ev, (size_t)base.len);
		for (uint64_t k = 0; k < 20; k++) {
			struct mstate x, y;

			/* b runs the numbers in another order */
			sampler_begin(a, k, 40);
			run_model(&m, &sa, &x);
			sampler_begin(b, 19 - k, 40);
			run_model(&m, &sb, &y);
			sampler_begin(b, k, 40);
			run_model(&m, &sb, &y);
			x.sched[x.len] = y.sched[y.len] = 0;
			cr_assert_str_eq(x.sched, y.sched, "%s run %llu",
					 sampler_name(kind),
					 (unsigned long long)k);
			differ += strcmp(prev, x.sched) != 0;
			memcpy(prev, x.sched, sizeof(prev));
		}
		cr_assert_gt(differ, 1, "%s always runs one schedule",
			     sampler_name(kind));
		sampler_free(a);
		sampler_free(b);
	}
}

Test(sampler, every_sampler_finds_a_lost_update)
{
	struct model m = lost_update(3);

	for (int kind = 0; kind < SAMPLER_MAX; kind++) {
		unsigned h = sample_hits(&m, kind, 1, 300, lost);

		cr_log_info("%s: %u of 300 lose an update", sampler_name(kind),
			    h);
		cr_assert_gt(h, 0, "%s never loses an update",
			     sampler_name(kind));
	}
}

/* Strict alternation of 5+5 critical sections: a uniform walk over the
 * interesting events hits it with probability 2/C(10,5); a random walk
 * over every choice far less often; PCT with depth 3 cannot. */
Test(sampler, surw_samples_strict_alternation_most_often)
{
	struct model m = alternation(5);
	unsigned n = 4000;
	unsigned surw = sample_hits(&m, SAMPLER_SURW, 3, n,
				    strictly_alternates);
	unsigned rnd = sample_hits(&m, SAMPLER_RANDOM, 3, n,
				   strictly_alternates);
	unsigned pct = sample_hits(&m, SAMPLER_PCT, 3, n,
				   strictly_alternates);
	unsigned pos = sample_hits(&m, SAMPLER_POS, 3, n,
				   strictly_alternates);

	cr_log_info("strict alternation in %u runs: surw %u, random %u, "
		    "pos %u, pct %u", n, surw, rnd, pos, pct);
	cr_assert_gt(surw, 0);
	cr_assert_geq(surw, rnd);
	cr_assert_eq(pct, 0, "depth-3 PCT cannot switch 9 times");
}


/* --- the reduction against brute force on generated programs ----------- */

static uint64_t gen_rng;

static unsigned gen(unsigned n)
{
	gen_rng = gen_rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((gen_rng >> 33) % n);
}

/* A thread: START, then blocks (a step, or lock; step; unlock, with
 * futex or call points), optionally EXIT. */
static void gen_thread(struct model *m, int t, int blocks, bool exit)
{
	int k = 0;

	m->ops[t][k++] = (struct mop_s){ START, 0 };
	for (int b = 0; b < blocks; b++) {
		int o = 1 + (int)gen(3);

		if (gen(2)) {
			m->ops[t][k++] = (struct mop_s){ STEP, o };
			continue;
		}
		int l = (int)gen(2);
		bool call = gen(2);

		m->ops[t][k++] = (struct mop_s){ call ? CLOCK : LOCK, l };
		m->ops[t][k++] = (struct mop_s){ STEP, o };
		m->ops[t][k++] = (struct mop_s){ call ? CUNLOCK : UNLOCK, l };
	}
	if (exit)
		m->ops[t][k++] = (struct mop_s){ EXIT, 0 };
	m->nops[t] = k;
}

static struct model generated(uint64_t seed)
{
	struct model m = { 0 };

	gen_rng = seed * 0x9e3779b97f4a7c15ull + 1;
	if (gen(2)) {
		m.nthreads = 2;
		for (int t = 0; t < 2; t++)
			gen_thread(&m, t, 1 + (int)gen(2), true);
	} else {
		m.nthreads = 3;
		for (int t = 0; t < 3; t++)
			gen_thread(&m, t, 1, false);
	}
	return m;
}

/* The end states (logs and deadlocks) of set a, each in set b? */
static bool outcomes_within(const struct sched_set *a,
			    const struct sched_set *b, const char **missing)
{
	for (size_t i = 0; i < a->n; i++) {
		bool found = false;

		for (size_t j = 0; j < b->n && !found; j++)
			found = !strcmp(a->out[i], b->out[j]);
		if (!found) {
			*missing = a->out[i];
			return false;
		}
	}
	return true;
}

struct reduction_stats {
	unsigned on_runs, off_runs, fewer, bounded_lost;
};

/* One program: with the reduction, the unbounded search reaches exactly
 * brute force's end states in no more runs; at bounds 0-3 the same end
 * states as without it (counted in bounded_lost), in no more runs. */
static void check_reduction(const struct model *m, uint64_t seed,
			    struct reduction_stats *rs)
{
	struct sched_set all;
	struct explored off, on;
	const char *miss = NULL;

	all_schedules(m, &all);
	explore_model(m, 20, false, &off);
	explore_model(m, 20, true, &on);
	cr_assert(outcomes_within(&all, &on.got, &miss),
		  "program %llu: end state %s lost by the reduction",
		  (unsigned long long)seed, miss);
	cr_assert(outcomes_within(&on.got, &all, &miss),
		  "program %llu: end state %s invented",
		  (unsigned long long)seed, miss);
	cr_assert(outcomes_within(&all, &off.got, &miss));
	cr_assert_leq(on.runs, off.runs, "program %llu",
		      (unsigned long long)seed);
	rs->on_runs += on.runs;
	rs->off_runs += off.runs;
	rs->fewer += on.runs < off.runs;
	for (int b = 0; b <= 3; b++) {
		struct explored bo, bf;

		explore_model(m, b, true, &bo);
		explore_model(m, b, false, &bf);
		cr_assert(outcomes_within(&bo.got, &all, &miss));
		/* bounded too: the same end states as without the
		 * reduction (the sleep sets are bound-safe) */
		if (!outcomes_within(&bf.got, &bo.got, &miss)) {
			rs->bounded_lost++;
			cr_log_error("program %llu bound %d: end state %s "
				     "lost", (unsigned long long)seed, b,
				     miss);
		}
		cr_assert_leq(bo.runs, bf.runs);
		set_free(&bo.got);
		set_free(&bf.got);
	}
	set_free(&all);
	set_free(&off.got);
	set_free(&on.got);
}

static uint64_t programs(void)
{
	/* PTLOOM_DFS_PROGRAMS=600 for a longer check */
	return getenv("PTLOOM_DFS_PROGRAMS")
		       ? strtoull(getenv("PTLOOM_DFS_PROGRAMS"), NULL, 10)
		       : 80;
}

/*
 * On 80 generated programs (2-3 threads; start, steps, futex- and
 * call-point locks, exit): with the reduction, the unbounded search
 * reaches exactly the end states and deadlocks that brute force reaches,
 * in no more runs than without it; and at every bound 0-3 it reaches the
 * same end states as the search without it, in no more runs.
 */
Test(dfs, reduction_matches_brute_force_on_generated_programs)
{
	struct reduction_stats rs = { 0 };
	uint64_t nprog = programs();

	for (uint64_t seed = 1; seed <= nprog; seed++) {
		struct model m = generated(seed);

		check_reduction(&m, seed, &rs);
	}
	cr_log_info("generated programs: %u runs with the reduction, %u "
		    "without; fewer on %u of %llu; bounds 0-3: %u searches "
		    "reach fewer end states than without it",
		    rs.on_runs, rs.off_runs, rs.fewer,
		    (unsigned long long)nprog, rs.bounded_lost);
	cr_assert_eq(rs.bounded_lost, 0, "a bounded search lost end states");
	cr_assert_gt(rs.fewer, 10, "the reduction prunes something");
}

/*
 * Three threads that exit, one with a critical section, two with a step
 * or a yield: runs cut short where the only thread left to run is asleep
 * (choice points with one alternative), exits waking sleepers, yields'
 * costs.  Same checks.
 */
static struct model generated_exits(uint64_t seed)
{
	struct model m = { .nthreads = 3 };

	gen_rng = seed * 0xd1b54a32d192ed03ull + 7;
	gen_thread(&m, 0, 1, true);
	for (int t = 1; t < 3; t++) {
		int k = 0;

		m.ops[t][k++] = (struct mop_s){ START, 0 };
		if (gen(3) == 0)
			m.ops[t][k++] = (struct mop_s){ YIELD, 0 };
		else
			m.ops[t][k++] = (struct mop_s){ STEP, 1 + (int)gen(3) };
		m.ops[t][k++] = (struct mop_s){ EXIT, 0 };
		m.nops[t] = k;
	}
	return m;
}

Test(dfs, reduction_matches_brute_force_with_exits_and_yields)
{
	struct reduction_stats rs = { 0 };
	uint64_t nprog = programs();

	for (uint64_t seed = 1; seed <= nprog; seed++) {
		struct model m = generated_exits(seed);

		check_reduction(&m, seed, &rs);
	}
	cr_log_info("programs with exits: %u runs with the reduction, %u "
		    "without; fewer on %u of %llu; bounds 0-3: %u lost",
		    rs.on_runs, rs.off_runs, rs.fewer,
		    (unsigned long long)nprog, rs.bounded_lost);
	cr_assert_eq(rs.bounded_lost, 0, "a bounded search lost end states");
	cr_assert_gt(rs.fewer, 10, "the reduction prunes something");
}

/* --- state caching against brute force ---------------------------------- */


/* Every end state of a schedule in a costing at most bound is in b. */
static bool outcomes_within_cost(const struct sched_set *a, unsigned bound,
				 const struct sched_set *b, const char **missing)
{
	for (size_t i = 0; i < a->n; i++) {
		bool found = false;

		if (a->cost[i] > bound)
			continue;
		for (size_t j = 0; j < b->n && !found; j++)
			found = !strcmp(a->out[i], b->out[j]);
		if (!found) {
			*missing = a->out[i];
			return false;
		}
	}
	return true;
}

struct cache_stats {
	unsigned cached_runs, plain_runs, fewer;
};

/* At bounds 0-3 and unbounded, with and without sleep sets: the search
 * with state caching reaches exactly the end states (and deadlocks) of
 * brute force's schedules within the bound, in no more runs than the
 * same search without caching. */
static void check_cache(const struct model *m, uint64_t seed,
			struct cache_stats *cs)
{
	static const int bounds[] = { 0, 1, 2, 3, 20 };
	struct sched_set all;
	const char *miss = NULL;

	all_schedules(m, &all);
	for (int sl = 0; sl < 2; sl++)
		for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
			struct explored on, off;
			unsigned bound = (unsigned)bounds[b];

			model_cache = true;
			explore_model(m, bounds[b], sl, &on);
			/* keys at the forced choices of the last bound
			 * cut nothing the next keyed choice does not:
			 * the same number of runs without them (bound 20
			 * is never the last one reached) */
			struct explored keyed;

			model_forced_keys = bound < 20;
			if (model_forced_keys) {
				explore_model(m, bounds[b], sl, &keyed);
				cr_assert_eq(on.runs, keyed.runs,
					     "program %llu bound %u sleep "
					     "sets %d: %u runs, %u with keys "
					     "at forced choices",
					     (unsigned long long)seed, bound,
					     sl, on.runs, keyed.runs);
				set_free(&keyed.got);
			}
			model_forced_keys = false;
			model_cache = false;
			explore_model(m, bounds[b], sl, &off);
			cr_assert(outcomes_within_cost(&all, bound, &on.got,
						       &miss),
				  "program %llu, bound %u, sleep sets %d, "
				  "sums %d: end state %s lost by caching",
				  (unsigned long long)seed, bound, sl,
				  model_sums, miss);
			cr_assert(outcomes_within(&on.got, &all, &miss),
				  "program %llu: end state %s invented",
				  (unsigned long long)seed, miss);
			cr_assert_leq(on.runs, off.runs,
				      "program %llu bound %u sleep sets %d",
				      (unsigned long long)seed, bound, sl);
			cs->cached_runs += on.runs;
			cs->plain_runs += off.runs;
			cs->fewer += on.runs < off.runs;
			set_free(&on.got);
			set_free(&off.got);
		}
	set_free(&all);
}

/*
 * Programs on one rwlock: each thread STARTs, then runs reader sections
 * (RDLOCK, maybe a step, RWUNLOCK), writer sections (WRREQ, WRWAIT, maybe
 * a step, RWUNLOCK) or steps, and may EXIT.  Steps are on objects 1-2, so
 * two readers' steps on one object inside their sections (a write under
 * a read lock) do not commute.  The reduction may treat readers' calls as
 * commuting only in a reader-only state (analysis/dfs.c readers_commute).
 */
static void gen_rw_block(struct model *m, int t, int *k, bool big)
{
	unsigned kind = gen(4);

	if (kind == 3) {
		m->ops[t][(*k)++] = (struct mop_s){ STEP, 1 + (int)gen(2) };
		return;
	}
	if (kind == 2) {
		m->ops[t][(*k)++] = (struct mop_s){ WRREQ, RWOBJ };
		m->ops[t][(*k)++] = (struct mop_s){ WRWAIT, RWOBJ };
	} else {
		m->ops[t][(*k)++] = (struct mop_s){ RDLOCK, RWOBJ };
		if (gen(2))
			m->ops[t][(*k)++] =
				(struct mop_s){ STEP, 1 + (int)gen(2) };
	}
	if (big && kind == 2 && gen(2))
		m->ops[t][(*k)++] = (struct mop_s){ STEP, 1 + (int)gen(2) };
	m->ops[t][(*k)++] = (struct mop_s){ RWUNLOCK, RWOBJ };
}

/* 2 threads with 1-2 blocks and maybe an exit, or 3 with one block: at
 * most 8 + 8 or 5 + 5 + 5 operations, so brute force stays small. */
static struct model generated_rw(uint64_t seed)
{
	struct model m = { 0 };

	gen_rng = seed * 0x2545f4914f6cdd1dull + 3;
	m.nthreads = gen(2) ? 2 : 3;
	for (int t = 0; t < m.nthreads; t++) {
		bool two = m.nthreads == 2;
		int k = 0, blocks = two ? 1 + (int)gen(2) : 1;

		m.ops[t][k++] = (struct mop_s){ START, 0 };
		for (int b = 0; b < blocks; b++)
			gen_rw_block(&m, t, &k, !two);
		if (two && gen(2))
			m.ops[t][k++] = (struct mop_s){ EXIT, 0 };
		m.nops[t] = k;
	}
	return m;
}

/*
 * Readers' rwlock calls commute where no writer holds or waits: on 80
 * generated rwlock programs, the same checks as for the other reductions
 * (unbounded: brute force's end states exactly; bounds 0-3: those of the
 * search without it; no more runs), then with the state cache.
 */
Test(dfs, rwlock_readers_commute_only_without_a_writer)
{
	struct reduction_stats rs = { 0 };
	struct cache_stats cs = { 0 };
	uint64_t nprog = programs();

	for (uint64_t seed = 1; seed <= nprog; seed++) {
		struct model m = generated_rw(seed);

		check_reduction(&m, seed, &rs);
		check_cache(&m, seed, &cs);
	}
	cr_log_info("rwlock programs: %u runs with the reduction, %u "
		    "without; fewer on %u of %llu; bounds 0-3: %u lost; "
		    "state caching %u runs, %u without",
		    rs.on_runs, rs.off_runs, rs.fewer,
		    (unsigned long long)nprog, rs.bounded_lost,
		    cs.cached_runs, cs.plain_runs);
	cr_assert_eq(rs.bounded_lost, 0, "a bounded search lost end states");
	cr_assert_gt(rs.fewer, 10, "the reduction prunes something");
}

/*
 * The generated programs of the reduction's checks, twice: with each
 * object's log as state (orders of steps on one object stay apart) and
 * with sums (steps commute, so states meet far more often).
 */
Test(dfs, state_cache_matches_brute_force_on_generated_programs)
{
	/* 30 programs of each kind unless PTLOOM_DFS_PROGRAMS says */
	uint64_t nprog = getenv("PTLOOM_DFS_PROGRAMS") ? programs() : 30;

	for (int sums = 0; sums < 2; sums++) {
		struct cache_stats cs = { 0 };

		model_sums = sums;
		for (uint64_t seed = 1; seed <= nprog; seed++) {
			struct model m = generated(seed);

			check_cache(&m, seed, &cs);
			m = generated_exits(seed);
			check_cache(&m, seed, &cs);
		}
		cr_log_info("state caching (%s): %u runs, %u without; fewer "
			    "in %u searches",
			    sums ? "sums" : "logs", cs.cached_runs,
			    cs.plain_runs, cs.fewer);
		cr_assert_gt(cs.fewer, 20, "caching prunes something");
	}
	model_sums = false;
}

/*
 * -j: two shards sharing one state cache (dfs_shared_cache), their runs
 * interleaved in three ways: alternating, shard 1 (the later roots)
 * entirely first, shard 0 first.  Whichever met a state first, the union
 * reaches exactly brute force's end states within the bound, in no more
 * runs than the uncached shards; a shard never prunes by a state that
 * only a later item in the serial order had reached.
 */
static unsigned explore_shards(const struct model *m, int bound,
			       bool sleep_sets, int order, bool cache,
			       struct sched_set *got)
{
	struct dfs_shared_cache *t = cache ? dfs_shared_cache_new(1 << 16)
					   : NULL;
	struct dfs *d[2];
	struct strategy st[2];
	bool live[2] = { true, true };
	unsigned runs = 0;

	model_cache = cache; /* run_model computes the states */
	for (int k = 0; k < 2; k++) {
		d[k] = dfs_new(bound, sleep_sets);
		cr_assert_not_null(d[k]);
		dfs_set_shard(d[k], k, 2);
		if (cache) {
			dfs_set_state_cache(d[k], true);
			dfs_set_shared_cache(d[k], t);
		}
		st[k] = dfs_strategy(d[k]);
	}
	for (int turn = 0; live[0] || live[1]; turn++) {
		int k = order == 0 ? turn % 2 : order == 1 ? !live[1] : live[0] ? 0 : 1;

		if (!live[k])
			k = !k;
		if (!dfs_next(d[k])) {
			live[k] = false;
			continue;
		}
		struct mstate s;
		enum run_end e = run_model(m, &st[k], &s);

		cr_assert_lt(++runs, 100000u, "dfs does not terminate");
		cr_assert_not(dfs_diverged(d[k]));
		if (e != RUN_ABANDONED) {
			s.sched[s.len] = 0;
			set_add(got, &s);
		}
		dfs_end_run(d[k]);
	}
	for (int k = 0; k < 2; k++)
		dfs_free(d[k]);
	dfs_shared_cache_free(t);
	model_cache = false;
	return runs;
}

Test(dfs, shared_state_cache_of_shards_matches_brute_force)
{
	static const int bounds[] = { 1, 2, 3 };
	unsigned cached = 0, plain = 0;

	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct model m = seed % 2 ? generated(seed)
					  : generated_exits(seed);
		struct sched_set all;
		const char *miss = NULL;

		model_sums = seed % 4 == 1;
		all_schedules(&m, &all);
		for (size_t b = 0; b < 3; b++)
			for (int order = 0; order < 3; order++) {
				struct sched_set on = { 0 }, off = { 0 };
				unsigned ron = explore_shards(&m, bounds[b],
							      true, order,
							      true, &on);
				unsigned roff = explore_shards(&m, bounds[b],
							       true, order,
							       false, &off);

				cr_assert(outcomes_within_cost(
						  &all, (unsigned)bounds[b],
						  &on, &miss),
					  "program %llu bound %d order %d: "
					  "end state %s lost by the shared "
					  "cache",
					  (unsigned long long)seed, bounds[b],
					  order, miss);
				cr_assert(outcomes_within(&on, &all, &miss),
					  "end state %s invented", miss);
				cr_assert_leq(ron, roff, "program %llu",
					      (unsigned long long)seed);
				cached += ron;
				plain += roff;
				set_free(&on);
				set_free(&off);
			}
		set_free(&all);
	}
	model_sums = false;
	cr_log_info("shared cache: %u runs, %u without", cached, plain);
	cr_assert_lt(cached, plain, "the shared cache prunes something");
}

/* Two threads each adding k times to one counter under one lock: every
 * order of the critical sections ends in the same state, and the cached
 * search needs far fewer runs at every bound. */
Test(dfs, state_cache_merges_commuting_critical_sections)
{
	struct model m = { .nthreads = 3 };
	struct sched_set all;
	const char *miss = NULL;

	for (int t = 0; t < 3; t++) {
		int k = 0;

		for (int i = 0; i < 3; i++) {
			m.ops[t][k++] = (struct mop_s){ CLOCK, 0 };
			m.ops[t][k++] = (struct mop_s){ STEP, 1 };
			m.ops[t][k++] = (struct mop_s){ CUNLOCK, 0 };
		}
		m.nops[t] = k;
	}
	model_sums = true;
	all_schedules(&m, &all);
	for (int b = 0; b <= 3; b++) {
		struct explored on, off;

		model_cache = true;
		explore_model(&m, b, true, &on);
		model_cache = false;
		explore_model(&m, b, true, &off);
		cr_assert(outcomes_within_cost(&all, (unsigned)b, &on.got,
					       &miss));
		cr_log_info("bound %d: %u runs cached, %u without", b, on.runs,
			    off.runs);
		cr_assert_leq(on.runs, off.runs);
		if (b >= 2)
			cr_assert_lt(on.runs, off.runs,
				     "bound %d: %u cached vs %u", b, on.runs,
				     off.runs);
		set_free(&on.got);
		set_free(&off.got);
	}
	set_free(&all);
	model_sums = false;
}

/* --- delay bounding ----------------------------------------------------- */

/* Every schedule of at most b delays exactly once, bound by bound, with
 * the delay costs of the brute-force walk. */
Test(dfs, delay_bounding_runs_each_schedule_once)
{
	walk_delay = true;
	struct model m = steps(3, 2, 0);

	for (int b = 0; b <= 3; b++)
		check_exactly_once(&m, b);
	m = locks(3);
	for (int b = 0; b <= 2; b++)
		check_exactly_once(&m, b);
	m = inversion();
	for (int b = 0; b <= 3; b++)
		check_exactly_once(&m, b);
	m = yields(2);
	for (int b = 0; b <= 2; b++)
		check_exactly_once(&m, b);
	walk_delay = false;
}

/* n threads (2-4) around one futex mutex, each: maybe a step, FLOCK 0,
 * a step, FUNLOCK 0, maybe a step or an exit; with three or more some
 * unlock finds two waiters queued and chooses whom to wake. */
static struct model futex_workers(uint64_t seed, int n)
{
	struct model m = { .nthreads = n };

	gen_rng = seed * 0x9e3779b97f4a7c15ull + 11;
	for (int t = 0; t < n; t++) {
		int k = 0;

		if (seed && gen(3) == 0)
			m.ops[t][k++] = (struct mop_s){ STEP, 1 + (int)gen(3) };
		m.ops[t][k++] = (struct mop_s){ FLOCK, 0 };
		m.ops[t][k++] = (struct mop_s){ STEP, 1 };
		m.ops[t][k++] = (struct mop_s){ FUNLOCK, 0 };
		if (seed && gen(2))
			m.ops[t][k++] = gen(2) ? (struct mop_s){ EXIT, 0 }
					       : (struct mop_s){ STEP, 2 };
		m.nops[t] = k;
	}
	return m;
}

/* How many schedules; does some schedule choose among two or more
 * waiters? */
static size_t wake_schedules(const struct model *m, bool *choice)
{
	struct sched_set all;
	size_t n;

	all_schedules(m, &all);
	*choice = false;
	for (size_t i = 0; i < all.n && !*choice; i++)
		for (const char *p = all.s[i]; *p && !*choice; p++)
			*choice = *p >= 'a';
	n = all.n;
	set_free(&all);
	return n;
}

/*
 * Which waiter a wake picks costs delays too (dfs_delay_cost: the k-th in
 * round-robin order after the waker costs k): every schedule of at most b
 * delays, wake choices counted, exactly once, on programs whose unlocks
 * choose among queued waiters (3 threads, those of seeds 0-30 with at
 * most 2,000 schedules, and 4 plain workers); and with the state cache
 * the end states of exactly those schedules.  Preemption bounding (wake
 * choices free) is checked on the same programs.  Before wake choices
 * cost delays, join_many (16 threads) did not finish delay bound 1 in
 * 10,000 runs: every order of the queued threads' wake-ups was free.
 */
Test(dfs, delay_bounding_counts_wake_choices)
{
	struct cache_stats cs = { 0 };
	int tested = 0, with_wakes = 0;

	for (uint64_t seed = 0; seed <= 31; seed++) {
		bool four = seed == 31, choice;
		struct model m = futex_workers(four ? 0 : seed, four ? 4 : 3);

		if (wake_schedules(&m, &choice) > (four ? 8000 : 2000))
			continue;
		tested++;
		with_wakes += choice;
		for (int b = 0; b <= (four ? 1 : 2); b++)
			check_exactly_once(&m, b);
		walk_delay = true;
		for (int b = 0; b <= (four ? 2 : 3); b++)
			check_exactly_once(&m, b);
		if (!four)
			check_cache(&m, seed, &cs);
		walk_delay = false;
	}
	cr_log_info("futex workers: %d programs, %d choose a waiter; with "
		    "delays, %u runs cached, %u without", tested, with_wakes,
		    cs.cached_runs, cs.plain_runs);
	cr_assert_geq(tested, 15);
	cr_assert_eq(with_wakes, tested, "every program makes wake choices");
}

/* Bound 0 of delay bounding is the one deterministic round-robin run. */
Test(dfs, delay_bound_0_is_one_run)
{
	walk_delay = true;
	struct model m = locks(3);
	struct explored ex;

	explore_model(&m, 0, false, &ex);
	cr_assert_eq(ex.runs, 1);
	set_free(&ex.got);
	walk_delay = false;
}

/* --- minimisation by reordering (minimize_reorder) ---------------------- */

/* Two threads, k call-point critical sections each: lock; step; unlock;
 * a third steps on its own object (switches to it are needless). */
static struct model call_alternation(int k)
{
	struct model m = { .nthreads = 3 };

	m.nops[2] = 4;
	for (int i = 0; i < 4; i++)
		m.ops[2][i] = (struct mop_s){ STEP, 2 };

	for (int t = 0; t < 2; t++) {
		m.nops[t] = 3 * k;
		for (int i = 0; i < k; i++) {
			m.ops[t][3 * i] = (struct mop_s){ CLOCK, 0 };
			m.ops[t][3 * i + 1] = (struct mop_s){ STEP, 1 };
			m.ops[t][3 * i + 2] = (struct mop_s){ CUNLOCK, 0 };
		}
	}
	return m;
}

static bool alternates_fully(const struct mstate *s)
{
	return strictly_alternates(s) && s->nlog[1] == 8;
}

/* A strict alternation of 4+4 sections sampled with needless preemptions
 * (a random walk) comes back with one switch per alternation (7 switches,
 * 6 of them preemptions: the one after a thread's last section is free),
 * plus at most two around the bystander. */
Test(minimize_reorder, sampled_alternation_needs_one_switch_each)
{
	g_model = call_alternation(4);
	g_fails = alternates_fully;
	struct sampler *smp = sampler_new_kind(SAMPLER_RANDOM, 3, 3);
	struct strategy st = sampler_strategy(smp);
	struct run_result best;
	bool found = false;

	for (uint64_t k = 0; k < 20000 && !found; k++) {
		sampler_begin(smp, k, 30);
		model_run(&g_model, &st, &best);
		found = best.failure == FAIL_CRASH && best.preemptions > 9;
		if (!found)
			run_result_free(&best);
	}
	sampler_free(smp);
	cr_assert(found, "no sampled alternation with more than 9 switches");
	unsigned before = best.preemptions;
	struct minimize_stats ms = { 0 };
	int p = minimize_reorder(model_run, &g_model, &best, &ms);

	cr_log_info("alternation: %u preemptions -> %u in %u run(s)", before,
		    best.preemptions, ms.runs);
	cr_assert_geq(p, 6, "reordered to %d", p);
	cr_assert_leq(p, 8, "reordered to %d", p);
	cr_assert_eq(best.preemptions, (unsigned)p);
	cr_assert_eq(best.failure, FAIL_CRASH);
	cr_assert_eq(ms.runs, 1);
	run_result_free(&best);
	g_fails = lost;
}

/* A lost update among 4 threads, sampled: the found order of the two
 * conflicting sections, with the rest run without switches. */
Test(minimize_reorder, sampled_lost_update_keeps_its_failure)
{
	g_model = lost_update(4);
	g_fails = lost;
	struct sampler *smp = sampler_new(false, 11, 3);
	struct strategy st = sampler_strategy(smp);
	struct run_result best;
	bool found = false;

	for (uint64_t k = 0; k < 1000 && !found; k++) {
		sampler_begin(smp, k, 30);
		model_run(&g_model, &st, &best);
		found = best.failure == FAIL_CRASH && best.preemptions >= 4;
		if (!found)
			run_result_free(&best);
	}
	sampler_free(smp);
	cr_assert(found);
	unsigned before = best.preemptions;
	struct minimize_stats ms = { 0 };

	minimize_reorder(model_run, &g_model, &best, &ms);
	cr_log_info("lost update: %u preemptions -> %u", before,
		    best.preemptions);
	cr_assert_eq(best.failure, FAIL_CRASH, "the failure is kept");
	cr_assert_leq(best.preemptions, before);
	run_result_free(&best);
}

/* --- DPOR against brute force ------------------------------------------- */

struct dpor_stats {
	unsigned dpor_runs, sleep_runs, brute_runs, fewer, searches;
	unsigned by_bound[5][3]; /* DPOR, sleep sets, brute force */
};

static unsigned within(const struct sched_set *a, unsigned bound)
{
	unsigned n = 0;

	for (size_t i = 0; i < a->n; i++)
		n += a->cost[i] <= bound;
	return n;
}

/* At bounds 0-3 and unbounded: DPOR reaches exactly the end states and
 * deadlocks of brute force's schedules within the bound, each schedule
 * at most once, in no more runs than brute force. */
static void check_dpor(const struct model *m, uint64_t seed, const char *kind,
		       struct dpor_stats *ds)
{
	static const int bounds[] = { 0, 1, 2, 3, 20 };
	struct sched_set all;
	const char *miss = NULL;

	all_schedules(m, &all);
	for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
		struct explored dp, sl;
		unsigned bound = (unsigned)bounds[b], brute = within(&all, bound);

		model_dpor = true;
		explore_model(m, bounds[b], true, &dp);
		model_dpor = false;
		explore_model(m, bounds[b], true, &sl);
		cr_assert(outcomes_within_cost(&all, bound, &dp.got, &miss),
			  "%s program %llu, bound %u: end state %s lost by "
			  "DPOR", kind, (unsigned long long)seed, bound, miss);
		cr_assert(outcomes_within(&dp.got, &all, &miss),
			  "%s program %llu: end state %s invented", kind,
			  (unsigned long long)seed, miss);
		for (size_t i = 0; i < dp.got.n; i++) {
			long k = set_find(&all, dp.got.s[i]);

			cr_assert_geq(k, 0);
			cr_assert_leq(all.cost[k], bound);
			cr_assert_eq(all.seen[k], 0, "%s ran twice",
				     dp.got.s[i]);
			all.seen[k] = 1;
		}
		for (size_t i = 0; i < all.n; i++)
			all.seen[i] = 0;
		cr_assert_leq(dp.runs, brute, "%s program %llu bound %u",
			      kind, (unsigned long long)seed, bound);
		ds->by_bound[b][0] += dp.runs;
		ds->by_bound[b][1] += sl.runs;
		ds->by_bound[b][2] += brute;
		ds->dpor_runs += dp.runs;
		ds->sleep_runs += sl.runs;
		ds->brute_runs += brute;
		ds->fewer += dp.runs < sl.runs;
		ds->searches++;
		set_free(&dp.got);
		set_free(&sl.got);
	}
	set_free(&all);
}

static void dpor_programs(unsigned flags, const char *name)
{
	struct dpor_stats gen = { 0 }, ex = { 0 };
	uint64_t nprog = programs();

	model_dpor_flags = flags;
	for (uint64_t seed = 1; seed <= nprog; seed++) {
		struct model m = generated(seed);

		check_dpor(&m, seed, "generated", &gen);
		m = generated_exits(seed);
		check_dpor(&m, seed, "exits", &ex);
	}
	cr_log_info("DPOR (%s), %llu generated programs x bounds 0-3,inf: "
		    "%u runs, sleep sets %u, brute force %u; fewer than sleep "
		    "sets in %u of %u searches",
		    name, (unsigned long long)nprog, gen.dpor_runs,
		    gen.sleep_runs, gen.brute_runs, gen.fewer, gen.searches);
	cr_log_info("DPOR (%s), %llu programs with exits and yields: %u "
		    "runs, sleep sets %u, brute force %u; fewer in %u of %u",
		    name, (unsigned long long)nprog, ex.dpor_runs,
		    ex.sleep_runs, ex.brute_runs, ex.fewer, ex.searches);
	for (int b = 0; b < 5; b++)
		cr_log_info("bound %s: DPOR %u + %u runs, sleep sets %u + %u, "
			    "brute force %u + %u (generated + exits)",
			    b < 4 ? (const char[][2]){ "0", "1", "2", "3" }[b]
				  : "unbounded",
			    gen.by_bound[b][0], ex.by_bound[b][0],
			    gen.by_bound[b][1], ex.by_bound[b][1],
			    gen.by_bound[b][2], ex.by_bound[b][2]);
	cr_assert_lt(gen.dpor_runs, gen.brute_runs, "DPOR prunes something");
	model_dpor_flags = DPOR_DEFAULT;
}

/* T0 spawns T1 and T2 (a thread clone and its return each), then a step,
 * a critical section or nothing, and exits; the children start and do
 * one block (a step, or one in a critical section). */
static struct model generated_spawn(uint64_t seed)
{
	struct model m = { .nthreads = 3 };
	int k = 0;

	gen_rng = seed * 0x94d049bb133111ebull + 3;
	for (int c = 1; c <= 2; c++) {
		m.ops[0][k++] = (struct mop_s){ SPAWN, c };
		m.ops[0][k++] = (struct mop_s){ SPAWN_RET, 0 };
	}
	switch (gen(3)) {
	case 0:
		m.ops[0][k++] = (struct mop_s){ STEP, 1 + (int)gen(3) };
		break;
	case 1: {
		int l = (int)gen(2);

		m.ops[0][k++] = (struct mop_s){ CLOCK, l };
		m.ops[0][k++] = (struct mop_s){ STEP, 1 + (int)gen(3) };
		m.ops[0][k++] = (struct mop_s){ CUNLOCK, l };
		break;
	}
	default:
		break;
	}
	m.ops[0][k++] = (struct mop_s){ EXIT, 0 };
	m.nops[0] = k;
	for (int t = 1; t < 3; t++) {
		m.spawned[t] = true;
		gen_thread(&m, t, 1, false);
	}
	return m;
}

/* Thread clones (THREAD_CLONE: bookkeeping only, the child's first step
 * ordered after its clone) against brute force: sleep sets and DPOR. */
Test(dpor, thread_clones_match_brute_force)
{
	struct reduction_stats rs = { 0 };
	struct dpor_stats ds = { 0 };
	uint64_t nprog = programs();

	for (uint64_t seed = 1; seed <= nprog; seed++) {
		struct model m = generated_spawn(seed);

		check_reduction(&m, seed, &rs);
		check_dpor(&m, seed, "spawn", &ds);
	}
	cr_log_info("%llu programs with thread clones: sleep sets %u runs "
		    "unbounded (%u without); DPOR %u runs at bounds 0-3,inf, "
		    "sleep sets %u, brute force %u",
		    (unsigned long long)nprog, rs.on_runs, rs.off_runs,
		    ds.dpor_runs, ds.sleep_runs, ds.brute_runs);
	cr_assert_eq(rs.bounded_lost, 0, "a bounded search lost end states");
	cr_assert_lt(ds.dpor_runs, ds.sleep_runs, "DPOR prunes more");
}

Test(dpor, matches_brute_force_on_generated_programs)
{
	unsigned flags = DPOR_DEFAULT;

	/* PTLOOM_DPOR_FLAGS=2 (immediate races) shows what fails */
	if (getenv("PTLOOM_DPOR_FLAGS"))
		flags = (unsigned)strtoul(getenv("PTLOOM_DPOR_FLAGS"), NULL,
					  0);
	dpor_programs(flags, flags == DPOR_DEFAULT ? "source sets, bounded"
						   : "other flags");
}
