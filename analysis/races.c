/*
 * Happens-before race detection (see races.h).
 *
 * Each thread has a vector clock; its own entry is its current epoch.  A
 * release joins the thread's clock into the object's and starts a new
 * epoch; an acquire joins the object's clock into the thread's.  An
 * access recorded at epoch c of thread u happens before the current step
 * of thread t exactly when c <= C_t[u], so the shadow memory stores an
 * epoch per access rather than a clock (FastTrack).
 *
 * Shadow memory is paged: a hash map from 4 KiB page to 512 granules of
 * four cells each, with the last page cached, because accesses cluster.
 * A cell is one access: epoch, pc, which bytes of its granule, write and
 * atomic bits.  A new access makes an older cell redundant when the older
 * one happens before it and is no stronger (a write covers reads and
 * writes, a non-atomic access covers atomic ones): any later access
 * concurrent with the older one is then concurrent with the new one too.
 * Concurrent cells stay, so a later access can race with several.
 */
#include "races.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GRANULE 8
#define CELLS 4 /* cells per granule */
#define PAGE_SHIFT 12
#define PAGE_GRANULES ((1u << PAGE_SHIFT) / GRANULE)

enum { CELL_WRITE = 1, CELL_ATOMIC = 2 };

struct cell {
	uint64_t pc;
	uint32_t clock;
	uint16_t tid;
	uint8_t mask;  /* bytes of the granule accessed; 0 = free cell */
	uint8_t flags; /* CELL_* */
};

struct shadow_page {
	struct cell cells[PAGE_GRANULES * CELLS];
};

struct vclock {
	uint32_t *c;
	uint32_t n; /* entries in use; missing ones are 0 */
	uint32_t cap;
	uint32_t last; /* a thread's: the epoch of its last access, 0 none */
};

/* Open addressing, uint64 key to a nonzero uint32 value (0 = empty). */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	uint32_t cap; /* a power of two, or 0 */
	uint32_t n;
};

struct race_detector {
	int err; /* first error met, sticky */

	struct vclock *threads; /* by T-number */
	uint32_t nthreads;

	struct vclock *locks; /* release clocks, by u64map value - 1 */
	uint64_t *lazy;	      /* per lock: races_touch_unseen threads */
	uint32_t nlocks, locks_cap;
	struct u64map lock_map;

	struct shadow_page **pages; /* allocated pages, reused across runs */
	uint32_t npages, pages_used, pages_cap;
	struct u64map page_map; /* page number -> index + 1 */
	uint64_t last_pageno;
	struct shadow_page *last_page;

	uint64_t seq;	/* accesses so far, to count a pair once each */
	uint32_t evict; /* round robin victim when a granule is full */

	struct race_pair *pairs;
	uint64_t *pair_seq; /* last access that counted each pair */
	uint32_t npairs, pairs_cap;
	uint32_t *pair_index; /* open addressing: pair index + 1 */
	uint32_t pair_index_cap;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static void fail(struct race_detector *r, int err)
{
	if (!r->err)
		r->err = err;
}

/* ---- hash map ---- */

static uint32_t map_get(const struct u64map *m, uint64_t key)
{
	uint32_t mask = m->cap - 1;

	if (!m->cap)
		return 0;
	for (uint32_t i = (uint32_t)mix(key) & mask;; i = (i + 1) & mask) {
		if (!m->vals[i])
			return 0;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static void map_insert(struct u64map *m, uint64_t key, uint32_t val)
{
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)mix(key) & mask;

	while (m->vals[i])
		i = (i + 1) & mask;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

/* Insert a key known to be absent.  Returns 0 or -ENOMEM. */
static int map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct u64map bigger = { 0 };

		bigger.cap = m->cap ? m->cap * 2 : 64;
		bigger.keys = malloc(bigger.cap * sizeof(*bigger.keys));
		bigger.vals = calloc(bigger.cap, sizeof(*bigger.vals));
		if (!bigger.keys || !bigger.vals) {
			free(bigger.keys);
			free(bigger.vals);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->vals[i])
				map_insert(&bigger, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		*m = bigger;
	}
	map_insert(m, key, val);
	return 0;
}

static void map_clear(struct u64map *m)
{
	if (m->cap)
		memset(m->vals, 0, m->cap * sizeof(*m->vals));
	m->n = 0;
}

static void map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- vector clocks ---- */

static uint32_t vc_get(const struct vclock *v, uint32_t t)
{
	return t < v->n ? v->c[t] : 0;
}

static int vc_grow(struct vclock *v, uint32_t n)
{
	if (n > v->cap) {
		uint32_t cap = v->cap ? v->cap : 8;
		uint32_t *c;

		while (cap < n)
			cap *= 2;
		c = realloc(v->c, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		v->c = c;
		v->cap = cap;
	}
	if (n > v->n) {
		memset(v->c + v->n, 0, (n - v->n) * sizeof(*v->c));
		v->n = n;
	}
	return 0;
}

static int vc_join(struct vclock *dst, const struct vclock *src)
{
	int err = vc_grow(dst, src->n);

	if (err)
		return err;
	for (uint32_t i = 0; i < src->n; i++)
		if (src->c[i] > dst->c[i])
			dst->c[i] = src->c[i];
	return 0;
}

/* Thread t's clock, created at epoch 1 on first sight; NULL on error. */
static struct vclock *thread_clock(struct race_detector *r, int thread)
{
	uint32_t t = (uint32_t)thread;
	struct vclock *v;

	if (thread < 0 || thread >= RACES_MAX_THREADS) {
		fail(r, -EINVAL);
		return NULL;
	}
	if (t >= r->nthreads) {
		uint32_t n = r->nthreads ? r->nthreads : 16;
		struct vclock *a;

		while (n <= t)
			n *= 2;
		a = realloc(r->threads, n * sizeof(*a));
		if (!a) {
			fail(r, -ENOMEM);
			return NULL;
		}
		memset(a + r->nthreads, 0, (n - r->nthreads) * sizeof(*a));
		r->threads = a;
		r->nthreads = n;
	}
	v = &r->threads[t];
	if (vc_get(v, t) == 0) {
		if (vc_grow(v, t + 1)) {
			fail(r, -ENOMEM);
			return NULL;
		}
		v->c[t] = 1;
	}
	return v;
}

/* Start a new epoch of thread t. */
static void tick(struct vclock *v, int thread)
{
	v->c[thread]++;
}

/* ---- synchronisation ---- */

void races_thread_create(struct race_detector *r, int parent, int child)
{
	struct vclock *pv, *cv;

	if (parent == child)
		return;
	/* both first: creating one may move the other */
	if (!thread_clock(r, parent) || !thread_clock(r, child))
		return;
	pv = &r->threads[parent];
	cv = &r->threads[child];
	if (vc_join(cv, pv)) {
		fail(r, -ENOMEM);
		return;
	}
	/* a reused T-number must not inherit what others know of it */
	tick(cv, child);
	tick(pv, parent);
}

bool races_after(const struct race_detector *r, int thread, int other)
{
	if (other < 0 || (uint32_t)other >= r->nthreads ||
	    !r->threads[other].last)
		return true; /* no access of other's recorded */
	if (thread < 0 || (uint32_t)thread >= r->nthreads)
		return false;
	return r->threads[other].last <= vc_get(&r->threads[thread],
						(uint32_t)other);
}

void races_thread_join(struct race_detector *r, int joiner, int joined)
{
	struct vclock *jv, *dv;

	if (joiner == joined)
		return;
	if (!thread_clock(r, joiner) || !thread_clock(r, joined))
		return;
	jv = &r->threads[joiner];
	dv = &r->threads[joined];
	if (vc_join(jv, dv)) {
		fail(r, -ENOMEM);
		return;
	}
	tick(dv, joined);
}

/*
 * The threads of mask (bit 63: any thread from 63 on) may have released
 * the object since their last seen touch, by a store nobody observed (an
 * unlock that is a plain store in a shared object): thread joins their
 * clocks as they are now, and they start a new epoch, so that what they
 * do later is not taken to happen before it.  More happens-before than
 * there may be: a race can be missed, none is invented.
 */
static void lazy_join(struct race_detector *r, int thread, uint64_t mask)
{
	for (uint32_t u = 0; mask && u < r->nthreads; u++) {
		struct vclock *uv = &r->threads[u];

		if ((int)u == thread || !vc_get(uv, u) ||
		    !(mask & (1ull << (u < 63 ? u : 63))))
			continue;
		if (vc_join(&r->threads[thread], uv)) {
			fail(r, -ENOMEM);
			return;
		}
		tick(uv, (int)u);
	}
}

void races_acquire(struct race_detector *r, int thread, uint64_t obj)
{
	struct vclock *v = thread_clock(r, thread);
	uint32_t i;

	if (!v)
		return;
	i = map_get(&r->lock_map, obj);
	if (!i)
		return;
	if (vc_join(v, &r->locks[i - 1]))
		fail(r, -ENOMEM);
	lazy_join(r, thread, r->lazy[i - 1]);
}

void races_acquire_all(struct race_detector *r, int thread, uint64_t mask,
		       uint64_t value)
{
	const struct u64map *m = &r->lock_map;

	for (uint32_t i = 0; i < m->cap; i++)
		if (m->vals[i] && (m->keys[i] & mask) == value)
			races_acquire(r, thread, m->keys[i]);
}

void races_release(struct race_detector *r, int thread, uint64_t obj)
{
	struct vclock *v = thread_clock(r, thread);
	uint32_t i;

	if (!v)
		return;
	i = map_get(&r->lock_map, obj);
	if (!i) {
		if (r->nlocks == r->locks_cap) {
			uint32_t cap = r->locks_cap ? r->locks_cap * 2 : 64;
			struct vclock *a = realloc(r->locks, cap * sizeof(*a));

			if (!a) {
				fail(r, -ENOMEM);
				return;
			}
			r->locks = a;
			uint64_t *z = realloc(r->lazy, cap * sizeof(*z));

			if (!z) {
				fail(r, -ENOMEM);
				return;
			}
			r->lazy = z;
			r->locks_cap = cap;
		}
		if (map_put(&r->lock_map, obj, r->nlocks + 1)) {
			fail(r, -ENOMEM);
			return;
		}
		memset(&r->locks[r->nlocks], 0, sizeof(*r->locks));
		r->lazy[r->nlocks] = 0;
		i = ++r->nlocks;
	}
	if (vc_join(&r->locks[i - 1], v)) {
		fail(r, -ENOMEM);
		return;
	}
	tick(v, thread);
}

void races_touch_unseen(struct race_detector *r, int thread, uint64_t obj,
			bool held)
{
	uint32_t i;
	uint64_t bit = 1ull << (thread < 63 ? thread : 63);

	races_acquire(r, thread, obj);
	races_release(r, thread, obj); /* creates the entry */
	i = map_get(&r->lock_map, obj);
	if (!i || thread < 0)
		return;
	if (held)
		r->lazy[i - 1] |= bit;
	else if (thread < 63)
		r->lazy[i - 1] &= ~bit;
}

/* ---- race pairs ---- */

static uint64_t pair_hash(uint64_t a, uint64_t b)
{
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;

	return mix(lo * 0x9e3779b97f4a7c15ULL ^ hi);
}

static bool pair_is(const struct race_pair *p, uint64_t a, uint64_t b)
{
	return (p->pc[0] == a && p->pc[1] == b) ||
	       (p->pc[0] == b && p->pc[1] == a);
}

static int pair_index_grow(struct race_detector *r)
{
	uint32_t cap = r->pair_index_cap ? r->pair_index_cap * 2 : 64;
	uint32_t *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (uint32_t k = 0; k < r->npairs; k++) {
		const struct race_pair *p = &r->pairs[k];
		uint32_t i = (uint32_t)pair_hash(p->pc[0], p->pc[1]);

		i &= cap - 1;

		while (idx[i])
			i = (i + 1) & (cap - 1);
		idx[i] = k + 1;
	}
	free(r->pair_index);
	r->pair_index = idx;
	r->pair_index_cap = cap;
	return 0;
}

static void report(struct race_detector *r, const struct cell *x, int thread,
		   uint64_t pc, uint64_t addr, int size, bool write,
		   bool freed)
{
	struct race_pair *p;
	uint32_t mask, i;

	if ((r->npairs + 1) * 2 > r->pair_index_cap && pair_index_grow(r)) {
		fail(r, -ENOMEM);
		return;
	}
	mask = r->pair_index_cap - 1;
	for (i = (uint32_t)pair_hash(x->pc, pc) & mask; r->pair_index[i];
	     i = (i + 1) & mask) {
		uint32_t k = r->pair_index[i] - 1;

		if (pair_is(&r->pairs[k], x->pc, pc)) {
			if (r->pair_seq[k] != r->seq) {
				r->pair_seq[k] = r->seq;
				r->pairs[k].count++;
			}
			return;
		}
	}
	if (r->npairs == r->pairs_cap) {
		uint32_t cap = r->pairs_cap ? r->pairs_cap * 2 : 32;
		struct race_pair *a = realloc(r->pairs, cap * sizeof(*a));
		uint64_t *s;

		if (!a) {
			fail(r, -ENOMEM);
			return;
		}
		r->pairs = a;
		s = realloc(r->pair_seq, cap * sizeof(*s));
		if (!s) {
			fail(r, -ENOMEM);
			return;
		}
		r->pair_seq = s;
		r->pairs_cap = cap;
	}
	p = &r->pairs[r->npairs];
	*p = (struct race_pair){
		.pc = { x->pc, pc },
		.thread = { x->tid, thread },
		.write = { x->flags & CELL_WRITE, write },
		.freed = freed,
		.addr = addr,
		.size = size,
		.count = 1,
	};
	r->pair_seq[r->npairs] = r->seq;
	r->pair_index[i] = ++r->npairs;
}

/* ---- shadow memory ---- */

static struct cell *granule_cells(struct race_detector *r, uint64_t addr)
{
	uint64_t pageno = addr >> PAGE_SHIFT;
	struct shadow_page *page;
	uint32_t i;

	if (r->last_page && r->last_pageno == pageno) {
		page = r->last_page;
		goto found;
	}
	i = map_get(&r->page_map, pageno);
	if (i) {
		page = r->pages[i - 1];
	} else {
		if (r->pages_used == r->npages) {
			if (r->npages == r->pages_cap) {
				uint32_t cap = r->pages_cap ? r->pages_cap * 2 :
							      64;
				struct shadow_page **a;

				a = realloc(r->pages, cap * sizeof(*a));
				if (!a)
					return NULL;
				r->pages = a;
				r->pages_cap = cap;
			}
			page = malloc(sizeof(*page));
			if (!page)
				return NULL;
			r->pages[r->npages++] = page;
		}
		page = r->pages[r->pages_used];
		if (map_put(&r->page_map, pageno, r->pages_used + 1))
			return NULL;
		r->pages_used++;
		memset(page, 0, sizeof(*page));
	}
	r->last_pageno = pageno;
	r->last_page = page;
found:
	return &page->cells[((addr >> 3) & (PAGE_GRANULES - 1)) * CELLS];
}

static void forget_range(struct race_detector *r, uint64_t addr,
			 uint64_t size, int thread, uint64_t pc);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* forget_range over [addr, end) when it spans far more pages than were
 * ever seen (munmap of a reservation of gigabytes): page by page, only
 * the pages the map holds, in address order; false if out of memory */
static bool forget_seen_pages(struct race_detector *r, uint64_t addr,
			      uint64_t end, int thread, uint64_t pc)
{
	uint64_t first = addr >> PAGE_SHIFT, last = (end - 1) >> PAGE_SHIFT;
	uint64_t *pn = malloc((r->page_map.n + 1) * sizeof(*pn));
	size_t n = 0;

	if (!pn)
		return false;
	for (uint32_t i = 0; i < r->page_map.cap; i++)
		if (r->page_map.vals[i] && r->page_map.keys[i] >= first &&
		    r->page_map.keys[i] <= last && n < r->page_map.n)
			pn[n++] = r->page_map.keys[i];
	qsort(pn, n, sizeof(*pn), cmp_u64);
	for (size_t k = 0; k < n; k++) {
		uint64_t lo = pn[k] << PAGE_SHIFT, hi = lo + (1u << PAGE_SHIFT);

		if (lo < addr)
			lo = addr;
		if (hi > end || hi < lo)
			hi = end;
		forget_range(r, lo, hi - lo, thread, pc);
	}
	free(pn);
	return true;
}

/* races_forget, and with thread >= 0 races_freed: the free is a write of
 * every byte first, by thread at pc */
static void forget_range(struct race_detector *r, uint64_t addr,
			 uint64_t size, int thread, uint64_t pc)
{
	uint64_t end = addr + size;
	struct vclock *v = thread >= 0 ? thread_clock(r, thread) : NULL;

	if (end < addr)
		end = UINT64_MAX;
	if (((end - addr) >> PAGE_SHIFT) > 2 * (uint64_t)r->page_map.cap + 64 &&
	    forget_seen_pages(r, addr, end, thread, pc))
		return; /* (an unmapped reservation: the pages seen in it) */
	if (v) {
		v->last = v->c[thread];
		r->seq++;
	}
	for (uint64_t g = addr & ~(uint64_t)(GRANULE - 1); g < end;) {
		uint64_t pageno = g >> PAGE_SHIFT;
		uint32_t i = map_get(&r->page_map, pageno);
		uint64_t next_page = (pageno + 1) << PAGE_SHIFT;

		if (!i) {
			if (next_page <= g)
				break;
			g = next_page; /* nothing seen in this page */
			continue;
		}
		struct cell *cells = &r->pages[i - 1]->cells[
			((g >> 3) & (PAGE_GRANULES - 1)) * CELLS];
		unsigned int lo = addr > g ? (unsigned int)(addr - g) : 0;
		unsigned int hi = end - g < GRANULE ? (unsigned int)(end - g) :
						      GRANULE;
		uint8_t mask = (uint8_t)(((1u << hi) - 1) & ~((1u << lo) - 1));

		for (int k = 0; k < CELLS; k++) {
			struct cell *x = &cells[k];

			if (v && (x->mask & mask) && x->tid != thread &&
			    x->clock > vc_get(v, x->tid))
				report(r, x, thread, pc,
				       g + (unsigned int)__builtin_ctz(x->mask &
								       mask),
				       (int)(hi - lo), true, true);
			x->mask &= (uint8_t)~mask;
		}
		if (g + GRANULE < g)
			break;
		g += GRANULE;
	}
}

void races_forget(struct race_detector *r, uint64_t addr, uint64_t size)
{
	forget_range(r, addr, size, -1, 0);
}

void races_freed(struct race_detector *r, int thread, uint64_t pc,
		 uint64_t addr, uint64_t size)
{
	forget_range(r, addr, size, thread, pc);
}

void races_access(struct race_detector *r, int thread, uint64_t pc,
		  uint64_t addr, int size, bool write, bool atomic)
{
	struct vclock *v = thread_clock(r, thread);
	uint8_t flags = (write ? CELL_WRITE : 0) | (atomic ? CELL_ATOMIC : 0);
	uint64_t end;
	uint32_t clock;

	if (!v)
		return;
	clock = v->c[thread];
	v->last = clock;
	if (size < 1)
		size = 1;
	if (size > RACES_MAX_ACCESS)
		size = RACES_MAX_ACCESS;
	end = addr + (uint64_t)size;
	if (end < addr)
		end = UINT64_MAX;
	r->seq++;

	for (uint64_t g = addr & ~(uint64_t)(GRANULE - 1); g < end;
	     g += GRANULE) {
		unsigned int lo = addr > g ? (unsigned int)(addr - g) : 0;
		unsigned int hi = end - g < GRANULE ? (unsigned int)(end - g) :
						      GRANULE;
		uint8_t mask = (uint8_t)(((1u << hi) - 1) & ~((1u << lo) - 1));
		struct cell *cells = granule_cells(r, g);
		int slot = -1;

		if (!cells) {
			fail(r, -ENOMEM);
			return;
		}
		for (int i = 0; i < CELLS; i++) {
			struct cell *x = &cells[i];
			bool hb, xw, xa;

			if (!(x->mask & mask)) {
				if (!x->mask && slot < 0)
					slot = i;
				continue;
			}
			xw = x->flags & CELL_WRITE;
			xa = x->flags & CELL_ATOMIC;
			hb = x->tid == thread || x->clock <= vc_get(v, x->tid);
			if (!hb && (write || xw) && !(atomic && xa)) {
				unsigned int b = (unsigned int)__builtin_ctz(
					x->mask & mask);

				report(r, x, thread, pc, g + b, size, write,
				       false);
			}
			/* covered by the new access: see the overview */
			if (hb && (write || !xw) && (!atomic || xa)) {
				x->mask &= (uint8_t)~mask;
				if (!x->mask && slot < 0)
					slot = i;
			}
		}
		if (slot < 0)
			slot = (int)(r->evict++ % CELLS);
		cells[slot] = (struct cell){
			.pc = pc,
			.clock = clock,
			.tid = (uint16_t)thread,
			.mask = mask,
			.flags = flags,
		};
		if (g + GRANULE < g)
			break;
	}
}

/* ---- lifetime ---- */

int races_new(struct race_detector **out)
{
	struct race_detector *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	*out = r;
	return 0;
}

void races_reset_execution(struct race_detector *r)
{
	for (uint32_t i = 0; i < r->nthreads; i++) {
		r->threads[i].n = 0;
		r->threads[i].last = 0;
	}
	for (uint32_t i = 0; i < r->nlocks; i++)
		free(r->locks[i].c);
	r->nlocks = 0;
	map_clear(&r->lock_map);
	map_clear(&r->page_map);
	r->pages_used = 0;
	r->last_page = NULL;
	r->evict = 0;
}

void races_free(struct race_detector *r)
{
	if (!r)
		return;
	races_reset_execution(r);
	for (uint32_t i = 0; i < r->nthreads; i++)
		free(r->threads[i].c);
	free(r->threads);
	free(r->locks);
	free(r->lazy);
	map_free(&r->lock_map);
	for (uint32_t i = 0; i < r->npages; i++)
		free(r->pages[i]);
	free(r->pages);
	map_free(&r->page_map);
	free(r->pairs);
	free(r->pair_seq);
	free(r->pair_index);
	free(r);
}

int races_pairs(struct race_detector *r, const struct race_pair **pairs,
		size_t *n)
{
	*pairs = r->pairs;
	*n = r->npairs;
	return r->err;
}
