/*
 * Coverage: see coverage.h.  Two open-addressing tables: the pairs of the
 * whole exploration, and per run the last operation on each object.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "coverage.h"

struct pair_slot {
	struct cov_pair p;
	bool used;
};

/* The last operations on one object in the run being added. */
struct obj_slot {
	uint64_t obj;
	uint64_t key, wkey;	/* last access, last write */
	int thread, wthread;	/* -1: none */
	uint32_t gen;		/* the run it belongs to */
};

/* The libc call a thread is in: its futex operations (on the call's
 * object, or on a condition variable's mutex as it is relocked) are the
 * call's, at its location, until the thread's next other operation. */
struct in_call {
	uint64_t key;
};

struct coverage {
	struct pair_slot *pairs;
	size_t cap, n, covered;
	struct obj_slot *objs;
	size_t ocap, on;
	uint32_t gen;
	struct in_call *calls;
	size_t ncalls;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

struct coverage *coverage_new(void)
{
	return calloc(1, sizeof(struct coverage));
}

void coverage_free(struct coverage *c)
{
	if (!c)
		return;
	free(c->pairs);
	free(c->objs);
	free(c->calls);
	free(c);
}

uint64_t coverage_key(const struct event *e)
{
	return e->pc + (e->kind != OP_CALL);
}

const char *coverage_what_name(int what)
{
	switch (what) {
	case COV_LOCK: return "lock";
	case COV_FUTEX: return "futex word";
	case COV_MEMORY: return "memory";
	case COV_FD: return "descriptor";
	default: return "object";
	}
}

int coverage_what_of(const char *name)
{
	for (int w = COV_LOCK; w <= COV_FD; w++)
		if (name && !strcmp(name, coverage_what_name(w)))
			return w;
	return 0;
}

static bool grow_pairs(struct coverage *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256;
	struct pair_slot *n = calloc(cap, sizeof(*n));

	if (!n)
		return false;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->pairs[i].used)
			continue;
		size_t h = mix(c->pairs[i].p.a * 31 + c->pairs[i].p.b) &
			   (cap - 1);

		while (n[h].used)
			h = (h + 1) & (cap - 1);
		n[h] = c->pairs[i];
	}
	free(c->pairs);
	c->pairs = n;
	c->cap = cap;
	return true;
}

static bool is_covered(const struct cov_pair *p)
{
	return p->seen == 3;
}

/* Adds seen-bits to pair (a, b); returns 1 if it became covered. */
static int add(struct coverage *c, uint64_t a, uint64_t b, uint8_t seen,
	       uint8_t what)
{
	if (a > b) {
		uint64_t t = a;

		a = b;
		b = t;
		seen = (uint8_t)(((seen & 1) << 1) | ((seen & 2) >> 1));
	}
	if (a == b)
		seen = 3;
	if ((c->n + 1) * 2 > c->cap && !grow_pairs(c))
		return 0;
	size_t h = mix(a * 31 + b) & (c->cap - 1);

	while (c->pairs[h].used &&
	       (c->pairs[h].p.a != a || c->pairs[h].p.b != b))
		h = (h + 1) & (c->cap - 1);
	struct pair_slot *s = &c->pairs[h];

	if (!s->used) {
		*s = (struct pair_slot){ { a, b, 0, what }, true };
		c->n++;
	}
	bool was = is_covered(&s->p);

	s->p.seen |= seen;
	if (!was && is_covered(&s->p)) {
		c->covered++;
		return 1;
	}
	return 0;
}

void coverage_add_pair(struct coverage *c, const struct cov_pair *p)
{
	add(c, p->a, p->b, p->seen & 3, p->what);
}

void coverage_add(struct coverage *c, const struct coverage *from)
{
	for (size_t i = 0; from && i < from->cap; i++)
		if (from->pairs[i].used)
			coverage_add_pair(c, &from->pairs[i].p);
}

static bool grow_objs(struct coverage *c)
{
	size_t cap = c->ocap ? c->ocap * 2 : 256;
	struct obj_slot *n = calloc(cap, sizeof(*n));

	if (!n)
		return false;
	for (size_t i = 0; i < c->ocap; i++) {
		if (c->objs[i].gen != c->gen)
			continue;
		size_t h = mix(c->objs[i].obj) & (cap - 1);

		while (n[h].gen == c->gen)
			h = (h + 1) & (cap - 1);
		n[h] = c->objs[i];
	}
	free(c->objs);
	c->objs = n;
	c->ocap = cap;
	return true;
}

static struct obj_slot *obj_of(struct coverage *c, uint64_t obj)
{
	if ((c->on + 1) * 2 > c->ocap && !grow_objs(c))
		return NULL;
	size_t h = mix(obj) & (c->ocap - 1);

	while (c->objs[h].gen == c->gen && c->objs[h].obj != obj)
		h = (h + 1) & (c->ocap - 1);
	struct obj_slot *o = &c->objs[h];

	if (o->gen != c->gen) {
		*o = (struct obj_slot){ .obj = obj, .thread = -1,
					.wthread = -1, .gen = c->gen };
		c->on++;
	}
	return o;
}

/* A libc synchronisation call on an object another thread may share. */
static bool sync_call(int fn)
{
	switch (fn) {
	case FN_NONE:
	case FN_CREATE:
	case FN_JOIN:
	case FN_THRD_CREATE:
	case FN_THRD_JOIN:
	case FN_USLEEP:
		return false;
	default:
		return fn < FN_MAX;
	}
}

/* One operation of thread t on obj at key: pair it with the last
 * conflicting one of another thread.  Returns pairs newly covered. */
static size_t op(struct coverage *c, uint64_t obj, int t, uint64_t key,
		 bool write, uint8_t what)
{
	struct obj_slot *o = obj ? obj_of(c, obj) : NULL;
	size_t got = 0;

	if (!o)
		return 0;
	/* a read conflicts with the last write, a write with any access */
	int pt = write ? o->thread : o->wthread;
	uint64_t pk = write ? o->key : o->wkey;

	if (pt >= 0 && pt != t)
		got += (size_t)add(c, pk, key, 1, what);
	o->thread = t;
	o->key = key;
	if (write) {
		o->wthread = t;
		o->wkey = key;
	}
	return got;
}

static struct in_call *call_of(struct coverage *c, int t)
{
	if ((size_t)t >= c->ncalls) {
		size_t n = (size_t)t * 2 + 8;
		struct in_call *m = realloc(c->calls, n * sizeof(*m));

		if (!m)
			return NULL;
		memset(m + c->ncalls, 0, (n - c->ncalls) * sizeof(*m));
		c->calls = m;
		c->ncalls = n;
	}
	return &c->calls[t];
}

size_t coverage_add_run(struct coverage *c, const struct event *ev,
			size_t n)
{
	size_t got = 0;

	if (!c)
		return 0;
	c->gen++;
	c->on = 0;
	if (c->gen == 0) {
		/* wrapped: no slot may look current */
		memset(c->objs, 0, c->ocap * sizeof(*c->objs));
		c->gen = 1;
	}
	if (c->calls)
		memset(c->calls, 0, c->ncalls * sizeof(*c->calls));
	for (size_t i = 0; i < n; i++) {
		const struct event *e = &ev[i];
		uint64_t key = coverage_key(e);
		int t = e->thread;
		struct in_call *ic;

		ic = call_of(c, t);
		switch (e->kind) {
		case OP_CALL:
			if (!sync_call(e->fn)) {
				if (ic)
					ic->key = 0;
				break;
			}
			if (ic)
				ic->key = key;
			got += op(c, e->obj, t, key, true, COV_LOCK);
			break;
		case OP_FUTEX_WAIT:
		case OP_FUTEX_WAKE:
		case OP_FUTEX_REQUEUE:
			if (ic && ic->key)
				got += op(c, e->obj, t, ic->key, true,
					  COV_LOCK);
			else
				got += op(c, e->obj, t, key, true, COV_FUTEX);
			break;
		case OP_WOKEN:
		case OP_TIMEOUT:
			continue;
		case OP_ATOMIC:
			got += op(c, e->obj, t, key, true, COV_MEMORY);
			break;
		case OP_ACCESS:
			got += op(c, e->obj, t, key, e->arg != 0, COV_MEMORY);
			break;
		case OP_READ:
		case OP_WRITE:
		case OP_POLL:
		case OP_ACCEPT:
		case OP_CONNECT:
			/* a file's pread only reads it */
			got += op(c, e->obj, t, key,
				  !(e->kind == OP_READ && e->fn == FILE_PREAD),
				  COV_FD);
			break;
		default:
			break;
		}
		if (ic && e->kind != OP_CALL && e->kind != OP_FUTEX_WAIT &&
		    e->kind != OP_FUTEX_WAKE && e->kind != OP_FUTEX_REQUEUE)
			ic->key = 0; /* out of the call */
	}
	return got;
}

bool coverage_seen(const struct coverage *c, uint64_t first, uint64_t then)
{
	uint64_t a = first < then ? first : then, b = first ^ then ^ a;

	if (!c || !c->cap)
		return false;
	size_t h = mix(a * 31 + b) & (c->cap - 1);

	while (c->pairs[h].used) {
		const struct cov_pair *p = &c->pairs[h].p;

		if (p->a == a && p->b == b)
			return a == b || (p->seen & (first == a ? 1 : 2));
		h = (h + 1) & (c->cap - 1);
	}
	return false;
}

int coverage_what_of_event(int kind, int fn, int64_t arg, bool *write)
{
	*write = true;
	switch (kind) {
	case OP_CALL:
		return sync_call(fn) ? COV_LOCK : 0;
	case OP_FUTEX_WAIT:
	case OP_FUTEX_WAKE:
	case OP_FUTEX_REQUEUE:
		return COV_FUTEX;
	case OP_ATOMIC:
		return COV_MEMORY;
	case OP_ACCESS:
		*write = arg != 0;
		return COV_MEMORY;
	case OP_READ:
		*write = fn != FILE_PREAD;
		return COV_FD;
	case OP_WRITE:
	case OP_POLL:
	case OP_ACCEPT:
	case OP_CONNECT:
		return COV_FD;
	default:
		return 0;
	}
}

size_t coverage_pairs(const struct coverage *c)
{
	return c ? c->n : 0;
}

size_t coverage_covered(const struct coverage *c)
{
	return c ? c->covered : 0;
}

double coverage_ratio(const struct coverage *c)
{
	return c && c->n ? (double)c->covered / (double)c->n : 1.0;
}

static int cmp_pair(const void *x, const void *y)
{
	const struct cov_pair *a = x, *b = y;
	int ca = is_covered(a), cb = is_covered(b);

	if (ca != cb)
		return ca - cb;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	return 0;
}

size_t coverage_list(const struct coverage *c, struct cov_pair **out)
{
	size_t k = 0;

	*out = NULL;
	if (!c || !c->n)
		return 0;
	*out = malloc(c->n * sizeof(**out));
	if (!*out)
		return 0;
	for (size_t i = 0; i < c->cap; i++)
		if (c->pairs[i].used)
			(*out)[k++] = c->pairs[i].p;
	qsort(*out, k, sizeof(**out), cmp_pair);
	return k;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

size_t coverage_keys(const struct coverage *c, uint64_t **out)
{
	size_t k = 0, u = 0;

	*out = NULL;
	if (!c || !c->n || !(*out = malloc(2 * c->n * sizeof(**out))))
		return 0;
	for (size_t i = 0; i < c->cap; i++)
		if (c->pairs[i].used) {
			(*out)[k++] = c->pairs[i].p.a;
			(*out)[k++] = c->pairs[i].p.b;
		}
	qsort(*out, k, sizeof(**out), cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (!u || (*out)[u - 1] != (*out)[i])
			(*out)[u++] = (*out)[i];
	return u;
}

void coverage_put(FILE *f, const struct coverage *c)
{
	fprintf(f, "pairs %zu\n", coverage_pairs(c));
	for (size_t i = 0; c && i < c->cap; i++)
		if (c->pairs[i].used)
			fprintf(f, "%llx %llx %u %u\n",
				(unsigned long long)c->pairs[i].p.a,
				(unsigned long long)c->pairs[i].p.b,
				c->pairs[i].p.seen, c->pairs[i].p.what);
}

int coverage_get(FILE *f, struct coverage *c)
{
	size_t n;

	if (fscanf(f, " pairs %zu", &n) != 1 || n > (1u << 24))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned long long a, b;
		unsigned seen, what;

		if (fscanf(f, "%llx %llx %u %u", &a, &b, &seen, &what) != 4 ||
		    seen > 3)
			return -EINVAL;
		add(c, a, b, (uint8_t)seen, (uint8_t)what);
	}
	return 0;
}
