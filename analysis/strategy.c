/*
 * The sampling strategies (random, PCT) and the replay strategy; the
 * systematic one lives in analysis/dfs.c.  See strategy.h.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "coverage.h"
#include "strategy.h"

uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define PCT_THREADS 4096
#define SURW_OBJS 64

/* cov: the last operation on an object in this run (direct-mapped) */
#define COV_SLOTS 1024
struct cov_last {
	uint64_t obj, key, wkey;
	int thread, wthread;
};

struct sampler {
	int kind;	      /* enum sampler_kind */
	uint64_t seed, rng;
	int depth;
	uint64_t change[16];  /* PCT priority change points (steps) */
	int nchange;
	int64_t prio[PCT_THREADS];
	bool has_prio[PCT_THREADS];
	int next_low;	      /* priorities below every initial one */
	/* SURW: the profile (shared objects and each thread's events on
	 * them, from one default run) and this run's interesting objects */
	uint64_t obj[SURW_OBJS];
	uint16_t count[SURW_OBJS][64]; /* events of thread t on obj[k] */
	int nobj;
	bool interesting[SURW_OBJS];
	int remaining[PCT_THREADS];
	int target;	      /* performs the next interesting event, -1 */
	/* rr: points per turn, direction, the thread whose turn it is and
	 * the points it has had, and how often a choice is uniform (0:
	 * never) */
	int quantum, dir, turn, used;
	uint32_t noise;
	bool wait_block;      /* no preemption until a thread blocks */
	/* late: where the scan starts (the step after the profile's last
	 * thread creation) and wraps (its steps), this sample's step, its
	 * number, and whether it has handed over */
	uint32_t late_base, late_span, late_step;
	bool late_done;
	bool rare_timeouts; /* random: this run takes a timeout 1 in 64 */
	bool timeouts_always; /* random: never rare_timeouts */
	/* cov: the exploration's pairs and this run's last operations */
	const struct coverage *cov;
	struct cov_last last[COV_SLOTS];
};

static const char *const sampler_names[SAMPLER_MAX] = {
	[SAMPLER_RANDOM] = "random",
	[SAMPLER_PCT] = "pct",
	[SAMPLER_POS] = "pos",
	[SAMPLER_SURW] = "surw",
	[SAMPLER_RR] = "rr",
	[SAMPLER_COV] = "cov",
	[SAMPLER_LATE] = "late",
};


const char *sampler_name(int kind)
{
	return kind >= 0 && kind < SAMPLER_MAX ? sampler_names[kind] : "?";
}

int sampler_kind_of(const char *name)
{
	for (int k = 0; k < SAMPLER_MAX; k++)
		if (!strcmp(name, sampler_names[k]))
			return k;
	return -1;
}

struct sampler *sampler_new_kind(int kind, uint64_t seed, int depth)
{
	struct sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->kind = kind;
	s->seed = seed;
	s->depth = depth < 1 ? 1 : depth > 16 ? 16 : depth;
	return s;
}

struct sampler *sampler_new(bool pct, uint64_t seed, int depth)
{
	return sampler_new_kind(pct ? SAMPLER_PCT : SAMPLER_RANDOM, seed, depth);
}

int sampler_kind(const struct sampler *s)
{
	return s->kind;
}

static int obj_index(const struct sampler *s, uint64_t obj)
{
	for (int k = 0; k < s->nobj; k++)
		if (s->obj[k] == obj)
			return k;
	return -1;
}

void sampler_profile(struct sampler *s, const struct event *ev, size_t n)
{
	s->late_base = 0;
	s->late_span = n && ev[n - 1].step ? ev[n - 1].step : (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		if (ev[i].kind == OP_CLONE)
			s->late_base = ev[i].step + 1;
	if (s->late_base >= s->late_span)
		s->late_base = 0;
	s->nobj = 0;
	memset(s->count, 0, sizeof(s->count));
	for (size_t i = 0; i < n; i++) {
		if (!ev[i].obj || ev[i].thread >= 64)
			continue;
		int k = obj_index(s, ev[i].obj);

		if (k < 0) {
			if (s->nobj == SURW_OBJS)
				continue;
			k = s->nobj++;
			s->obj[k] = ev[i].obj;
		}
		if (s->count[k][ev[i].thread] < UINT16_MAX)
			s->count[k][ev[i].thread]++;
	}
	/* keep the objects more than one thread touches */
	int m = 0;

	for (int k = 0; k < s->nobj; k++) {
		int users = 0;

		for (int t = 0; t < 64; t++)
			users += s->count[k][t] > 0;
		if (users < 2)
			continue;
		s->obj[m] = s->obj[k];
		memmove(s->count[m], s->count[k], sizeof(s->count[0]));
		m++;
	}
	s->nobj = m;
}

void sampler_timeouts_always(struct sampler *s)
{
	s->timeouts_always = true;
}

void sampler_set_coverage(struct sampler *s, const struct coverage *c)
{
	s->cov = c;
}

void sampler_begin(struct sampler *s, uint64_t run, uint64_t est_steps)
{
	s->rng = s->seed * 0x100000001b3ull ^ (run + 1) * 0x9e3779b97f4a7c15ull;
	splitmix64(&s->rng);
	memset(s->has_prio, 0, sizeof(s->has_prio));
	s->next_low = 0;
	s->nchange = 0;
	if (est_steps < 2)
		est_steps = 2;
	if (s->kind == SAMPLER_PCT)
		for (int i = 0; i < s->depth - 1; i++)
			s->change[s->nchange++] = 1 + splitmix64(&s->rng) % est_steps;
	s->target = -1;
	if (s->kind == SAMPLER_RANDOM) {
		/* every other run, by a hash of its number (shards number
		 * their runs k * N + shard), rare timeouts; not drawn from
		 * rng, so the runs that draw timeouts like threads are the
		 * walks they were */
		uint64_t h = run;

		s->rare_timeouts = !s->timeouts_always && (splitmix64(&h) & 1);
	}
	if (s->kind == SAMPLER_COV)
		memset(s->last, 0, sizeof(s->last));
	if (s->kind == SAMPLER_LATE) {
		/* the caller numbers the scan's samples 0, 1, 2, ...: the
		 * run's step, a pure function of (profile, run) */
		uint64_t span = s->late_span ? s->late_span : est_steps;

		s->late_step = (uint32_t)((s->late_base + run) % span);
		s->late_done = false;
	}
	if (s->kind == SAMPLER_RR) {
		s->wait_block = run % 2 == 0;
		s->dir = run / 4 % 2 ? -1 : 1;
		s->quantum = 1 + (int)(run / 8 % 3);
		s->turn = -1;
		s->used = 0;
		/* every fourth run (2, 6, ...) a uniform walk once the first thread
		 * cannot go on (a main thread has created its workers);
		 * else from the 24th run on one choice in 16 */
		s->noise = run % 4 == 2 ? 1 : run >= 24 ? 16 : 0;
	}
	if (s->kind == SAMPLER_SURW) {
		/* this run's interesting events: those on one shared object
		 * (half the runs) or on every shared object */
		bool all = s->nobj < 2 || splitmix64(&s->rng) % 2;
		int one = s->nobj ? (int)(splitmix64(&s->rng) % (uint64_t)s->nobj) : 0;

		for (int k = 0; k < s->nobj; k++)
			s->interesting[k] = all || k == one;
		for (int t = 0; t < PCT_THREADS; t++) {
			int c = 0;

			for (int k = 0; t < 64 && k < s->nobj; k++)
				if (s->interesting[k])
					c += s->count[k][t];
			s->remaining[t] = c;
		}
	}
}

static int64_t prio_of(struct sampler *s, int t)
{
	if (t >= PCT_THREADS)
		t = PCT_THREADS - 1;
	if (!s->has_prio[t]) {
		/* initial priorities are large and random, above d */
		s->prio[t] = 1000 + (int64_t)(splitmix64(&s->rng) % 1000000);
		s->has_prio[t] = true;
	}
	return s->prio[t];
}

static void redraw(struct sampler *s, int t)
{
	if (t >= PCT_THREADS)
		t = PCT_THREADS - 1;
	s->has_prio[t] = false;
}

/* A timeout as such: not one whose deadline came while only yielders
 * could run (alt.woken), whose thread is one that can run. */
static bool timeout_only(const struct alt *a)
{
	return a->timeout && !a->woken;
}

/* The machine may be slow: rarely let a timed wait expire. */
static int maybe_timeout(struct sampler *s, const struct choice *c, int best)
{
	if (best >= 0 && !c->alts[best].timeout)
		for (int i = 0; i < c->nalts; i++)
			if (timeout_only(&c->alts[i]) &&
			    splitmix64(&s->rng) % 64 == 0)
				return i;
	return best < 0 ? 0 : best;
}

/* The highest priority among threads that make progress; a yielding
 * (spinning) thread only when nobody else can run, or spinners pass the
 * turn among themselves forever (round-robin order: the first). */
static int highest(struct sampler *s, const struct choice *c)
{
	int best = -1;
	int64_t bp = 0;

	for (int i = 0; i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];

		if (timeout_only(a) || a->yield)
			continue;
		int64_t p = prio_of(s, a->thread);

		if (best < 0 || p > bp) {
			best = i;
			bp = p;
		}
	}
	return best;
}

/* Only spinners (or nobody but timeouts): take turns, round-robin. */
static int first_spinner(const struct choice *c)
{
	for (int i = 0; i < c->nalts; i++)
		if (!timeout_only(&c->alts[i]))
			return i;
	return 0;
}

static int pct_pick(struct sampler *s, const struct choice *c)
{
	/* a change point lowers the running thread's priority */
	for (int i = 0; i < s->nchange; i++)
		if (s->change[i] == c->step && c->current >= 0) {
			prio_of(s, c->current);
			s->prio[c->current < PCT_THREADS ? c->current
							 : PCT_THREADS - 1] =
				s->next_low++ - 1000000;
		}
	int best = highest(s, c);

	return best < 0 ? first_spinner(c) : maybe_timeout(s, c, best);
}

/*
 * POS (Yuan et al., CAV 2018): every pending event has a random
 * priority; the highest runs; after it, the events that conflict with it
 * (other threads' operations on the same object) draw new priorities, and
 * so does the thread that ran (its next event is a new one).  Independent
 * events keep theirs, so the orders of conflicting pairs are sampled
 * nearly uniformly instead of being driven by thread identity.
 */
static int pos_pick(struct sampler *s, const struct choice *c)
{
	int best = highest(s, c);

	best = best < 0 ? first_spinner(c) : maybe_timeout(s, c, best);
	const struct alt *a = &c->alts[best];

	for (int i = 0; i < c->nalts; i++)
		if (i != best && a->obj && c->alts[i].obj == a->obj)
			redraw(s, c->alts[i].thread);
	redraw(s, a->thread);
	return best;
}

/*
 * SURW-style selectively uniform walk (Zhao et al., ASPLOS 2025): only
 * the run's interesting events (those on the objects picked for the run)
 * are interleaved at random.  Who performs the next interesting event is
 * drawn with probability proportional to the interesting events each
 * thread still has (counted in a profile run), and that thread runs until
 * it has performed one; so every interleaving of the interesting events
 * is about equally likely (a uniform random walk over them), however many
 * uninteresting steps lie between.
 */
static int surw_pick(struct sampler *s, const struct choice *c)
{
	uint64_t total = 0;
	int pick = -1;

	for (int i = 0; i < c->nalts && s->target >= 0; i++)
		if (c->alts[i].thread == s->target &&
		    !timeout_only(&c->alts[i]) && !c->alts[i].yield)
			pick = i;
	for (int i = 0; pick < 0 && i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];

		if (timeout_only(a) || a->yield)
			continue;
		int r = s->remaining[a->thread < PCT_THREADS ? a->thread : 0];

		total += r > 0 ? (uint64_t)r : 1;
	}
	if (total) {
		uint64_t x = splitmix64(&s->rng) % total;

		for (int i = 0; i < c->nalts && pick < 0; i++) {
			const struct alt *a = &c->alts[i];

			if (timeout_only(a) || a->yield)
				continue;
			int r = s->remaining[a->thread < PCT_THREADS
						     ? a->thread
						     : 0];
			uint64_t w = r > 0 ? (uint64_t)r : 1;

			if (x < w)
				pick = i;
			else
				x -= w;
		}
		s->target = c->alts[pick].thread;
	}
	pick = pick < 0 ? first_spinner(c) : maybe_timeout(s, c, pick);
	return pick;
}

/*
 * Preemptive round-robin: the thread whose turn it is runs q points, then
 * the next one in T-number order (up or down, wrapping) that can make
 * progress.  Two threads that must alternate strictly, at any depth, do
 * so in the first runs; PCT and the walks need luck for every switch.
 */
static int rr_pick(struct sampler *s, const struct choice *c)
{
	int cur = -1, next = -1, best_d = 0;

	if (s->wait_block) {
		/* the running thread goes on (the default) until it cannot:
		 * the threads a main thread creates before it waits are
		 * all there when the turns begin */
		if (c->current >= 0 && c->alts[0].thread == c->current &&
		    !c->alts[0].yield && !c->alts[0].timeout)
			return 0;
		s->wait_block = false;
	}
	if (s->noise && splitmix64(&s->rng) % s->noise == 0)
		return (int)(splitmix64(&s->rng) % (uint64_t)c->nalts);
	for (int i = 0; i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];

		if (timeout_only(a) || a->yield)
			continue;
		if (a->thread == s->turn)
			cur = i;
		/* distance after the turn's thread in the order */
		int d = (s->dir * ((int)a->thread - s->turn) + 65536) % 65536;

		if (d > 0 && (next < 0 || d < best_d)) {
			next = i;
			best_d = d;
		}
	}
	if (cur >= 0 && s->used < s->quantum) {
		s->used++;
		return cur;
	}
	if (next < 0)
		next = cur >= 0 ? cur : first_spinner(c);
	s->turn = c->alts[next].thread;
	s->used = 1;
	return next;
}

static struct cov_last *cov_slot(struct sampler *s, uint64_t obj)
{
	return &s->last[(obj ^ obj >> 12 ^ obj >> 24) % COV_SLOTS];
}

/*
 * Coverage-guided: an operation that would make an order of a pair not
 * seen yet (it follows the last operation of another thread on its
 * object) runs first, the highest-priority one of them; else pos.  A
 * pending access counts as a write (whether it writes is known once it
 * ran).
 */
static int cov_pick(struct sampler *s, const struct choice *c)
{
	int best = -1;
	int64_t bp = 0;

	for (int i = 0; s->cov && i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];
		bool w;

		if (a->timeout || a->yield || !a->obj ||
		    !coverage_what_of_event(a->kind, a->fn, 1, &w))
			continue;
		struct cov_last *l = cov_slot(s, a->obj);
		uint64_t key = a->pc + (a->kind != OP_CALL);
		/* a load conflicts with the last write only, as the coverage
		 * counts it: paired with the last access, two threads'
		 * loads in a spin (Rust's full sync_channel's senders) made
		 * a pair never covered, picked at every turn while the
		 * thread that would end the spin never ran (runs past
		 * --max-steps) */
		int lt = a->reads ? l->wthread : l->thread;
		uint64_t lk = a->reads ? l->wkey : l->key;

		if (l->obj != a->obj || !lt || lt - 1 == a->thread ||
		    coverage_seen(s->cov, lk, key))
			continue;
		int64_t p = prio_of(s, a->thread);

		if (best < 0 || p > bp) {
			best = i;
			bp = p;
		}
	}
	if (best < 0)
		return pos_pick(s, c);
	redraw(s, c->alts[best].thread);
	return best;
}

/* Every event, chosen or forced: an interesting one is used up. */
static void sampler_executed(void *ctx, const struct event *e)
{
	struct sampler *s = ctx;
	int k;
	bool w;

	if (s->kind == SAMPLER_COV && e->obj &&
	    coverage_what_of_event(e->kind, e->fn, e->arg, &w)) {
		struct cov_last *l = cov_slot(s, e->obj);

		if (l->obj != e->obj)
			*l = (struct cov_last){ .obj = e->obj };
		l->thread = e->thread + 1;
		l->key = coverage_key(e);
		if (w) {
			l->wthread = e->thread + 1;
			l->wkey = l->key;
		}
		return;
	}

	if (s->kind != SAMPLER_SURW || !e->obj ||
	    (k = obj_index(s, e->obj)) < 0 || !s->interesting[k])
		return;
	if (e->thread < PCT_THREADS && s->remaining[e->thread] > 0)
		s->remaining[e->thread]--;
	if (e->thread == s->target)
		s->target = -1;
}

/*
 * What an event loop's wait sees (DEC_POLL): usually everything ready,
 * as the kernel answers; one time in POLL_LATE, a socket that comes later
 * or the wait's timeout first, each alike.  Every sampler, so that a run's
 * thread order and its loop's order vary independently.
 */
#define POLL_LATE 4

static int poll_pick(struct sampler *s, const struct choice *c)
{
	if (c->nalts < 2 || splitmix64(&s->rng) % POLL_LATE)
		return 0;
	return 1 + (int)(splitmix64(&s->rng) % (uint64_t)(c->nalts - 1));
}

/* late: the default alternative, but once, at the sample's step or the
 * first choice after it, the enabled thread created last (highest
 * T-number) other than the running one. */
static int late_pick(struct sampler *s, const struct choice *c)
{
	int best = -1;

	if (s->late_done || c->step < s->late_step)
		return 0;
	for (int i = 1; i < c->nalts; i++)
		if (c->alts[i].thread != c->current &&
		    !timeout_only(&c->alts[i]) &&
		    (best < 0 || c->alts[i].thread > c->alts[best].thread))
			best = i;
	if (best < 0)
		return 0;
	s->late_done = true;
	return best;
}

/*
 * The random walk: uniform among the alternatives, except that a store's
 * entering its store buffer (ALT_BUFFER, tracer/tso.c) is not one more
 * thread to draw: the thread drawn takes it one time in 8.  Drawn like
 * the rest, a walk through Go's runtime, with such a store at most of its
 * racy points, ran under the window's emulation a third of the time (a
 * step 1.8 times as long).
 *
 * Timeouts (a sleep, a timed wait or a timer ending while a thread can
 * run) are drawn like threads in half of the runs, where time flows fast
 * against the work (a result that loses to its timeout).  In the other
 * half (rare_timeouts) a thread that can run is drawn and each timeout
 * is taken one time in 64, as the other samplers take it: drawn like a
 * thread, a background thread's periodic sleep (Go's sysmon, a
 * watchdog) woke at half of the choices and ran as much as the threads
 * doing the work (go_wg: 8,600 steps a run, against 2,100 so).
 */
static int random_draw(uint64_t *rng, bool rare_run, const struct choice *c)
{
	int plain = 0, timed = 0, i, k;

	for (i = 0; i < c->nalts; i++) {
		plain += c->alts[i].timeout != ALT_BUFFER;
		timed += c->alts[i].timeout == 1 && !c->alts[i].woken;
	}
	bool rare = rare_run && timed;

	if (c->kind != DEC_RUN || plain == 0 || plain == timed ||
	    (plain == c->nalts && !rare))
		return (int)(splitmix64(rng) % (uint64_t)c->nalts);
	/* the thread drawn: among the threads that can run (rare), or
	 * among every alternative but the buffered stores */
	k = (int)(splitmix64(rng) % (uint64_t)(rare ? plain - timed
							 : plain));
	for (i = 0; (rare ? timeout_only(&c->alts[i])
			  : c->alts[i].timeout == ALT_BUFFER) ||
		    k--;
	     i++)
		;
	for (int j = 0; rare && j < c->nalts; j++)
		if (c->alts[j].timeout == 1 && !c->alts[j].woken &&
		    splitmix64(rng) % 64 == 0)
			return j;
	if (plain < c->nalts && splitmix64(rng) % 8 == 0)
		for (int j = 0; j < c->nalts; j++)
			if (c->alts[j].timeout == ALT_BUFFER &&
			    c->alts[j].thread == c->alts[i].thread)
				return j;
	return i;
}

static int random_pick(struct sampler *s, const struct choice *c)
{
	return random_draw(&s->rng, s->rare_timeouts, c);
}

static int sampler_pick(void *ctx, const struct choice *c)
{
	struct sampler *s = ctx;

	if (c->kind == DEC_POLL)
		return poll_pick(s, c);
	if (s->kind == SAMPLER_RANDOM || c->kind != DEC_RUN)
		return random_pick(s, c);
	switch (s->kind) {
	case SAMPLER_PCT:
		return pct_pick(s, c);
	case SAMPLER_POS:
		return pos_pick(s, c);
	case SAMPLER_RR:
		return rr_pick(s, c);
	case SAMPLER_COV:
		return cov_pick(s, c);
	case SAMPLER_LATE:
		return late_pick(s, c);
	default:
		return surw_pick(s, c);
	}
}

/*
 * struct strategy.known: PCT picks the highest priority, which only a
 * change point, a new thread (its priority is drawn at its first choice)
 * or a timeout (maybe_timeout draws) can move; late takes the default
 * alternative (the running thread's) until its step; random draws one
 * number a choice, so its coming draws are known (a copy of its state
 * draws them); POS's next pick only (the priorities it redraws after it
 * depend on the next operation's object), drawn the same way; round
 * robin while the turn is the running thread's and until a thread blocks
 * in its first phase.
 */

/* Which alternative highest() would pick, drawing missing priorities
 * from a copy of the generator (left in *rng after them): s is left as
 * it is. */
static int highest_peek(const struct sampler *s, const struct choice *c,
			uint64_t *rng)
{
	uint64_t r = s->rng;
	int64_t drawn[MAX_ALTS];
	int best = -1;
	int64_t bp = 0;

	for (int i = 0; i < c->nalts; i++) {
		const struct alt *a = &c->alts[i];
		int t = a->thread < PCT_THREADS ? a->thread : PCT_THREADS - 1;
		int64_t p = s->prio[t];

		drawn[i] = -1;
		if (timeout_only(a) || a->yield)
			continue;
		if (!s->has_prio[t]) {
			/* prio_of() draws in this order, once a thread */
			int j = 0;

			while (j < i && (c->alts[j].thread != a->thread ||
					 drawn[j] < 0))
				j++;
			p = j < i ? drawn[j]
				  : 1000 + (int64_t)(splitmix64(&r) % 1000000);
		}
		drawn[i] = p;
		if (best < 0 || p > bp) {
			best = i;
			bp = p;
		}
	}
	*rng = r;
	return best;
}
int known_current(const struct choice *c, bool timeouts)
{
	int cur = -1;

	if (c->kind != DEC_RUN || c->current < 0)
		return -1;
	for (int i = 0; i < c->nalts; i++) {
		if (c->alts[i].timeout && (!timeouts || c->alts[i].timeout != 1))
			return -1;
		if (c->alts[i].thread == c->current && !c->alts[i].timeout)
			cur = i;
	}
	return cur;
}

/* PCT's (and POS's) known picks with timeouts among the alternatives: up
 * to k, while maybe_timeout's draws (from r, a copy of the generator)
 * take none. */
static uint64_t known_no_timeout(uint64_t r, const struct choice *c,
				 uint64_t k)
{
	uint64_t n = 0;
	bool any = false;

	for (int i = 0; i < c->nalts; i++)
		any |= timeout_only(&c->alts[i]);
	if (!any)
		return k;
	for (; n < k && n < 65536; n++)
		for (int i = 0; i < c->nalts; i++)
			if (timeout_only(&c->alts[i]) &&
			    splitmix64(&r) % 64 == 0)
				return n;
	return n;
}

static uint64_t sampler_known(void *ctx, const struct choice *c)
{
	struct sampler *s = ctx;
	/* each sampler's timeouts are its draws or never taken before its
	 * step (late), so they are known too (a timed wait's timeout is
	 * offered whatever the clock says: tracer/sched.c) */
	int cur = known_current(c, true);

	if (cur < 0)
		return 0;
	switch (s->kind) {
	case SAMPLER_RANDOM: {
		/* random_pick's own draws on a copy of the generator */
		uint64_t r = s->rng, k = 0;

		while (k < 65536 && random_draw(&r, s->rare_timeouts, c) == cur)
			k++;
		return k;
	}
	case SAMPLER_PCT: {
		uint64_t k = UINT64_MAX;

		if (c->alts[cur].yield)
			return 0;
		for (int i = 0; i < c->nalts; i++) {
			int t = c->alts[i].thread;

			if (!timeout_only(&c->alts[i]) &&
			    !s->has_prio[t < PCT_THREADS ? t : PCT_THREADS - 1])
				return 0;
		}
		if (highest(s, c) != cur)
			return 0;
		for (int i = 0; i < s->nchange; i++)
			if (s->change[i] >= c->step &&
			    s->change[i] - c->step < k)
				k = s->change[i] - c->step;
		return known_no_timeout(s->rng, c, k);
	}
	case SAMPLER_POS: {
		uint64_t r;

		return highest_peek(s, c, &r) == cur ? known_no_timeout(r, c, 1)
						     : 0;
	}
	case SAMPLER_RR: {
		/* rr_pick's own steps on copies of what it changes */
		uint64_t r = s->rng, k = 0;
		int used = s->used;

		if (s->wait_block)
			return cur == 0 && !c->alts[0].yield ? UINT64_MAX : 0;
		if (c->alts[cur].yield || s->turn != c->current)
			return 0;
		while (k < 65536) {
			if (s->noise && splitmix64(&r) % s->noise == 0) {
				if (splitmix64(&r) % (uint64_t)c->nalts !=
				    (uint64_t)cur)
					break;
			} else if (used < s->quantum) {
				used++;
			} else {
				break;
			}
			k++;
		}
		return k;
	}
	case SAMPLER_LATE:
		if (cur != 0)
			return 0;
		if (s->late_done)
			return UINT64_MAX;
		return c->step < s->late_step ? s->late_step - c->step : 0;
	default:
		return 0;
	}
}

/* struct strategy.peek: the random walk's draws, on a copy of its
 * generator (a thread's run choices only) */
static uint64_t sampler_peek_start(void *ctx)
{
	return ((const struct sampler *)ctx)->rng;
}

static int sampler_peek(void *ctx, const struct choice *c, uint64_t *state)
{
	const struct sampler *s = ctx;

	if (s->kind != SAMPLER_RANDOM || c->kind != DEC_RUN)
		return -1;
	return random_draw(state, s->rare_timeouts, c);
}

struct strategy sampler_strategy(struct sampler *s)
{
	bool random = s->kind == SAMPLER_RANDOM;

	return (struct strategy){ .ctx = s,
				  .pick = sampler_pick,
				  .executed = sampler_executed,
				  .known = sampler_known,
				  .peek_start = random ? sampler_peek_start
						       : NULL,
				  .peek = random ? sampler_peek : NULL };
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

	/* a wait's alternatives are all its thread's: by index */
	if (d->kind == DEC_POLL && c->kind == DEC_POLL)
		return d->index < c->nalts ? d->index : 0;
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
	/* a script's wait decision (no nalts): its index */
	if (found < 0 && !d->nalts && d->kind == DEC_POLL &&
	    c->kind == DEC_POLL && d->index < c->nalts &&
	    c->alts[d->index].thread == d->thread)
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
				 d->kind == DEC_WAKE   ? "wake"
				 : d->kind == DEC_POLL ? "a wait of"
						       : "run",
				 d->thread, d->timeout ? " (times out)" : "",
				 d->thread,
				 d->kind == DEC_WAKE   ? "be woken"
				 : d->kind == DEC_POLL ? "wait so"
						       : "run");
		}
		if (r->strict)
			return -1;
		r->pos++;
		return 0;
	}
	r->pos++;
	return found;
}

/*
 * struct strategy.known: a strict replay's coming decisions, while each
 * names c->current at its index among as many run alternatives (what
 * replay_pick would find); the pick made for each at the next stop checks
 * them against the real alternatives, as at a stop.
 */
static uint64_t replay_known(void *ctx, const struct choice *c)
{
	const struct replay_strategy *r = ctx;
	int cur = known_current(c, true);
	uint64_t k = 0;

	if (!r->strict || r->diverged_at >= 0 || cur < 0)
		return 0;
	for (size_t pos = r->pos; pos < r->ndec; pos++, k++) {
		const struct decision *d = &r->dec[pos];

		if (d->kind != DEC_RUN || d->timeout || d->nalts != c->nalts ||
		    d->index != cur || d->thread != c->current)
			break;
	}
	return k;
}

/* struct strategy.peek: a strict replay's coming run decisions, found
 * as replay_pick finds them (its position copied in *state) */
static uint64_t replay_peek_start(void *ctx)
{
	const struct replay_strategy *r = ctx;

	return r->strict && r->diverged_at < 0 ? r->pos : UINT64_MAX;
}

static int replay_peek(void *ctx, const struct choice *c, uint64_t *state)
{
	const struct replay_strategy *r = ctx;
	const struct decision *d;
	int found = -1;

	if (*state >= r->ndec)
		return -1;
	d = &r->dec[*state];
	if (d->kind != DEC_RUN || c->kind != DEC_RUN || d->timeout || !d->nalts)
		return -1;
	if (d->index < c->nalts && c->alts[d->index].thread == d->thread &&
	    !c->alts[d->index].timeout)
		found = d->index;
	for (int i = 0; found < 0 && i < c->nalts; i++)
		if (c->alts[i].thread == d->thread && !c->alts[i].timeout)
			found = i;
	if (found >= 0)
		(*state)++;
	return found;
}

struct strategy replay_strategy(struct replay_strategy *r)
{
	return (struct strategy){ .ctx = r, .pick = replay_pick,
				  .known = replay_known,
				  .peek_start = replay_peek_start,
				  .peek = replay_peek };
}
