/*
 * Race discovery: see discover.h.  Synchronisation is taken as
 * acquire+release on the object of every scheduling point (a mutex, a
 * futex word, an atomic's address), plus fork at thread creation and a
 * release of the thread's tid word at its exit (pthread_join acquires
 * it).  That over-approximates happens-before a little: it can miss a
 * race, never invent one.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "discover.h"
#include "../tracer/disasm.h"
#include "symbols.h"
#include "strategy.h"
#include "../tracer/disasm.h"

/* Every (instruction, address) pair observed, so that every instruction
 * touching a racy address becomes a point, not only the two of the pair
 * seen racing (the check of a check-then-act may race in no observed run). */
struct seen {
	uint64_t *pc, *addr;
	size_t cap, n;
};

/* The slot of (pc, addr) in h (cap > 0): its own, or the free one where
 * it would go. */
static size_t seen_slot(const struct seen *h, uint64_t pc, uint64_t addr)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) ^ (addr >> 3) *
					 0xc2b2ae3d27d4eb4full) &
		   (h->cap - 1);

	for (; h->pc[i]; i = (i + 1) & (h->cap - 1))
		if (h->pc[i] == pc && h->addr[i] == addr)
			break;
	return i;
}

static bool seen_add(struct seen *h, uint64_t pc, uint64_t addr)
{
	if (h->n * 2 >= h->cap) {
		if (h->cap >= (1u << 22))
			return false;
		struct seen nh = { .cap = h->cap ? h->cap * 2 : 4096 };

		nh.pc = calloc(nh.cap, sizeof(uint64_t));
		nh.addr = calloc(nh.cap, sizeof(uint64_t));
		if (!nh.pc || !nh.addr) {
			free(nh.pc);
			free(nh.addr);
			return false;
		}
		for (size_t i = 0; i < h->cap; i++)
			if (h->pc[i])
				seen_add(&nh, h->pc[i], h->addr[i]);
		free(h->pc);
		free(h->addr);
		*h = nh;
	}
	size_t i = seen_slot(h, pc, addr);

	if (!h->pc[i]) {
		h->pc[i] = pc;
		h->addr[i] = addr;
		h->n++;
	}
	return true;
}

static bool seen_has(const struct seen *h, uint64_t pc, uint64_t addr)
{
	return h->cap && h->pc[seen_slot(h, pc, addr)];
}

/* The synchronisation objects calls named: [lo, hi), sorted by lo,
 * disjoint (a newer object replaces the ones it overlaps). */
struct objects {
	uint64_t *lo, *hi;
	size_t n, cap;
};

struct obs_ctx {
	struct objects objs;
	uint64_t *atomics;	/* open-addressing set of 8-byte blocks */
	int *atomic_thr;	/* its first thread + 1, or -1 for several */
	uint8_t *atomic_mask;	/* the bytes of it atomics touched */
	size_t atomics_cap, natomics;
	struct seen seen;
	/* in a Go executable (runtime_code): the instructions seen storing
	 * with a plain mov (key: pc, 0) */
	struct seen stores;
	struct race_detector *rd;
	/* the same accesses and synchronisation, with every untyped word
	 * access (access_observer.access) taken as an atomic's: the races
	 * that stay are certain whatever those are (NULL: no code without
	 * debug information known) */
	struct race_detector *rd2;
	/* the same accesses and synchronisation as rd without its lazy
	 * joins (races_touch_unseen's held taken as false): a pair of its
	 * that rd does not have is ordered only by "the thread that left a
	 * shared object's word nonzero may have released it since, by a
	 * store nobody saw", which joins that thread's clock as it is at
	 * the acquire, the accesses it made after its release included
	 * (hidden_pairs) */
	struct race_detector *rd_strict;
	const struct session_config *cfg;
	struct discovery *d;
	size_t named;	/* races named so far */
	/* the language runtime's code (symbols_elf_runtime_code: link-time
	 * ranges), and its executable's load bias once a live process
	 * showed it (runtime_bias_known) */
	const char *runtime_exe;
	const uint64_t *runtime_code;
	size_t nruntime_code;
	uint64_t runtime_bias;
	bool runtime_bias_known;
	/* by T-number: running a handler of a caught signal (this run) */
	uint8_t *in_handler;
	size_t nin_handler;
};

/*
 * The detectors' contexts: T-number t is 2t, a handler of a signal
 * running in it 2t + 1 (SYNC_HANDLER_ENTER to SYNC_HANDLER_LEAVE).  A
 * handler may come between any two instructions of its thread once the
 * signal can be delivered, so its accesses are ordered after only what
 * its thread did before it last changed its signal mask
 * (SYNC_SIGSTATE_KEY), what the signal's sender did before sending and
 * what earlier handlers did; its thread's later code comes after it.
 * Before, a handler's accesses were its thread's, after all it did, and
 * a lost update between a thread's load and store and its own handler's
 * increment had no point: "PASS, complete".
 */
static int ctx_of(const struct obs_ctx *o, int thread)
{
	if (thread < 0)
		return thread;
	return 2 * thread + ((size_t)thread < o->nin_handler &&
			     o->in_handler[thread]);
}

/* A detector's pair with its contexts given back as T-numbers. */
static struct race_pair pair_of_threads(const struct race_pair *p)
{
	struct race_pair q = *p;

	q.thread[0] /= 2;
	q.thread[1] /= 2;
	return q;
}

static void set_in_handler(struct obs_ctx *o, int thread, bool on)
{
	if (thread < 0)
		return;
	if ((size_t)thread >= o->nin_handler) {
		size_t n = (size_t)thread + 64;
		uint8_t *a;

		if (!on)
			return;
		a = realloc(o->in_handler, n);
		if (!a)
			return; /* its thread's, as before */
		memset(a + o->nin_handler, 0, n - o->nin_handler);
		o->in_handler = a;
		o->nin_handler = n;
	}
	o->in_handler[thread] = on;
}

/* pc (a run-time address) in the language runtime's own code? */
static bool runtime_pc(const struct obs_ctx *o, uint64_t pc)
{
	return o->nruntime_code && o->runtime_bias_known &&
	       ranges_contain(o->runtime_code, o->nruntime_code,
		       EVENT_ADDR(pc) - o->runtime_bias);
}

/* Addresses an atomic instruction touched: on x86 an atomic load or
 * release store is a plain mov, so later plain accesses to these are taken
 * as atomic too (acquire on load, release on store). */
static long atomic_slot(struct obs_ctx *o, uint64_t a)
{
	size_t cap = o->atomics_cap;

	if (!cap)
		return -1;
	size_t j = (a * 0x9e3779b97f4a7c15ull) >> 40 & (cap - 1);

	for (; o->atomics[j]; j = (j + 1) & (cap - 1))
		if (o->atomics[j] == a)
			return (long)j;
	return -(long)j - 2;
}

/* The bytes [addr, addr + size) has in addr's 8-byte block (all of them
 * for a size not known, 0). */
static uint8_t block_mask(uint64_t addr, int size)
{
	unsigned int lo = (unsigned int)(addr & 7), hi;

	if (size <= 0)
		return 0xff;
	hi = lo + (unsigned int)(size < 8 ? size : 8);
	if (hi > 8)
		hi = 8;
	return (uint8_t)(((1u << hi) - 1) & ~((1u << lo) - 1));
}

/*
 * add: the bytes [addr, addr + size) an atomic touched join the set;
 * else: does a plain access of them touch an atomic's bytes?  By bytes,
 * not blocks: a plain int beside an atomic one in the same 8 bytes (data
 * published by a flag next to it) was taken as atomic, and its race
 * hidden.
 */
static bool atomic_addr(struct obs_ctx *o, uint64_t addr, int size,
			int thread, bool add)
{
	uint64_t a = addr & ~7ull;
	uint8_t m = block_mask(addr, size);
	size_t cap = o->atomics_cap;

	if (add && (o->natomics + 1) * 2 > cap) {
		size_t nc = cap ? cap * 2 : 256;
		uint64_t *old = o->atomics;
		int *oldt = o->atomic_thr;
		uint8_t *oldm = o->atomic_mask;

		o->atomics = calloc(nc, sizeof(uint64_t));
		o->atomic_thr = calloc(nc, sizeof(int));
		o->atomic_mask = calloc(nc, 1);
		if (!o->atomics || !o->atomic_thr || !o->atomic_mask) {
			free(o->atomics);
			free(o->atomic_thr);
			free(o->atomic_mask);
			o->atomics = old;
			o->atomic_thr = oldt;
			o->atomic_mask = oldm;
			return false;
		}
		o->atomics_cap = nc;
		for (size_t i = 0; i < cap; i++)
			if (old[i]) {
				long j = -atomic_slot(o, old[i]) - 2;

				o->atomics[j] = old[i];
				o->atomic_thr[j] = oldt[i];
				o->atomic_mask[j] = oldm[i];
			}
		free(old);
		free(oldt);
		free(oldm);
	}
	long j = atomic_slot(o, a);

	if (j >= 0 && !add)
		return (o->atomic_mask[j] & m) != 0;
	if (j >= 0) {
		if (o->atomic_thr[j] != thread + 1)
			o->atomic_thr[j] = -1;
		o->atomic_mask[j] |= m;
		return true;
	}
	if (!add || j == -1)
		return false;
	j = -j - 2;
	o->atomics[j] = a;
	o->atomic_thr[j] = thread + 1;
	o->atomic_mask[j] = m;
	o->natomics++;
	return true;
}

/* An access the detector takes as an atomic's: it acquires the atomics'
 * key of its bytes before a load and releases it after a store (a plain
 * mov on an atomic's bytes; ordered both ways: an atomic instruction). */
static void access_atomic(struct race_detector *rd, int thread, uint64_t pc,
			  uint64_t addr, int size, bool write, bool load,
			  bool store)
{
	uint64_t key = (1ull << 62) | (addr & ~7ull);

	if (load)
		races_acquire(rd, thread, key);
	races_access(rd, thread, pc, addr, size ? size : 1, write, true);
	if (store)
		races_release(rd, thread, key);
}

static void on_access(void *ctx, int thread, uint64_t pc, uint64_t addr,
		      int size, bool write, bool atomic, bool untyped_word)
{
	struct obs_ctx *o = ctx;
	uint64_t a = addr & ~7ull;
	int c = ctx_of(o, thread);

	seen_add(&o->seen, pc, a);
	if (!atomic && write && o->nruntime_code)
		seen_add(&o->stores, pc, 0);
	o->d->accesses++;
	if (atomic) {
		atomic_addr(o, addr, size, thread, true);
		access_atomic(o->rd, c, pc, addr, size, write, true,
			      true);
		access_atomic(o->rd_strict, c, pc, addr, size, write,
			      true, true);
		if (o->rd2)
			access_atomic(o->rd2, c, pc, addr, size, write,
				      true, true);
		return;
	}
	if (atomic_addr(o, addr, size, thread, false)) {
		access_atomic(o->rd, c, pc, addr, size, write, !write,
			      write);
		access_atomic(o->rd_strict, c, pc, addr, size, write,
			      !write, write);
		if (o->rd2)
			access_atomic(o->rd2, c, pc, addr, size, write,
				      !write, write);
		return;
	}
	races_access(o->rd, c, pc, addr, size ? size : 1, write, false);
	races_access(o->rd_strict, c, pc, addr, size ? size : 1, write,
		     false);
	if (o->rd2 && untyped_word)
		access_atomic(o->rd2, c, pc, addr, size, write, !write,
			      write);
	else if (o->rd2)
		races_access(o->rd2, c, pc, addr, size ? size : 1, write,
			     false);
}

/* The index of the last object starting at or below a, or -1. */
static long object_below(const struct objects *t, uint64_t a)
{
	size_t l = 0, h = t->n;

	while (l < h) {
		size_t m = (l + h) / 2;

		if (t->lo[m] <= a)
			l = m + 1;
		else
			h = m;
	}
	return (long)l - 1;
}

static void object_add(struct objects *t, uint64_t lo, uint64_t size)
{
	uint64_t hi = lo + size;
	long i = object_below(t, lo);

	if (i >= 0 && t->lo[i] == lo && t->hi[i] == hi)
		return;
	/* drop what it overlaps: [first, last) */
	size_t first = i >= 0 && t->hi[i] > lo ? (size_t)i : (size_t)(i + 1);
	size_t last = (size_t)(i + 1);

	while (last < t->n && t->lo[last] < hi)
		last++;
	if (first == last && t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		uint64_t *nlo = realloc(t->lo, nc * sizeof(*nlo));

		if (!nlo)
			return;
		t->lo = nlo;
		uint64_t *nhi = realloc(t->hi, nc * sizeof(*nhi));

		if (!nhi)
			return;
		t->hi = nhi;
		t->cap = nc;
	}
	/* one slot at first, the overlapped ones gone */
	size_t tail = t->n - last;

	memmove(t->lo + first + 1, t->lo + last, tail * sizeof(*t->lo));
	memmove(t->hi + first + 1, t->hi + last, tail * sizeof(*t->hi));
	t->lo[first] = lo;
	t->hi[first] = hi;
	t->n = first + 1 + tail;
}

/*
 * A pthread object and the futex words inside it are one sync object: a
 * waiter is woken on an internal word (a condvar's sequence, an rwlock's
 * readers) while the call entry names the object.  An address inside an
 * object a call named is keyed by that object's start; any other by its
 * 64-byte block (which may merge two neighbouring objects: more
 * happens-before, which can hide a race, never invent one).  Before, every
 * address was keyed by its block, and two mutexes next to each other (a
 * program taking the wrong one of two) were one: its race was hidden.
 */
static uint64_t sync_key(const struct obs_ctx *o, uint64_t obj)
{
	long i = object_below(&o->objs, obj);

	if (obj >> 63)
		return obj; /* a descriptor's object, no address */
	if (i >= 0 && obj < o->objs.hi[i])
		return o->objs.lo[i];
	return obj & ~63ull;
}

#define SYNC_KEY(obj) sync_key(o, (obj))

/* on_sync's work on one detector (lazy: with its lazy joins) */
static void sync_one(struct obs_ctx *o, struct race_detector *rd, int thread,
		     int kind, uint64_t obj, int other, bool lazy)
{
	switch (kind) {
	case SYNC_OBJECT:
		break;
	case SYNC_FORK:
		races_thread_create(rd, thread, 2 * other);
		break;
	case SYNC_JOIN:
		/* (a handler of its that it never left: its code after) */
		races_thread_join(rd, thread, 2 * other);
		races_thread_join(rd, thread, 2 * other + 1);
		break;
	case SYNC_ATOMIC:
	case SYNC_ATOMIC_FREE:
		/* keyed as the program's own atomics (on_access) */
		races_touch_unseen(rd, thread, (1ull << 62) | (obj & ~7ull),
				   kind == SYNC_ATOMIC && lazy);
		break;
	case SYNC_FREE:
		races_forget(rd, obj, (uint64_t)other);
		break;
	case SYNC_ACQUIRE_ATOMICS:
		/* the atomics' keys (on_access): bits 63..61 are 010 */
		races_acquire_all(rd, thread, 7ull << 61, 1ull << 62);
		break;
	case SYNC_ACQUIRE:
		races_acquire(rd, thread, SYNC_KEY(obj));
		break;
	case SYNC_RELEASE:
		races_release(rd, thread, SYNC_KEY(obj));
		break;
	case SYNC_ACQUIRE_READERS:
		races_acquire(rd, thread, (1ull << 60) | SYNC_KEY(obj));
		break;
	case SYNC_RELEASE_READERS:
		races_release(rd, thread, (1ull << 60) | SYNC_KEY(obj));
		break;
	default:
		races_acquire(rd, thread, SYNC_KEY(obj));
		races_release(rd, thread, SYNC_KEY(obj));
	}
}

static void on_freed(void *ctx, int thread, uint64_t pc, uint64_t addr,
		     uint64_t size)
{
	struct obs_ctx *o = ctx;
	int c = ctx_of(o, thread);

	races_freed(o->rd, c, pc, addr, size);
	races_freed(o->rd_strict, c, pc, addr, size);
	if (o->rd2)
		races_freed(o->rd2, c, pc, addr, size);
}

/* A handler starts (sync: at a fault of its thread's instruction, after
 * it), returns, or its thread changes its mask: on each detector. */
static void handler_sync(struct obs_ctx *o, struct race_detector *rd,
			 int thread, int kind, bool sync)
{
	int t = 2 * thread, h = t + 1;

	switch (kind) {
	case SYNC_HANDLER_ENTER:
		if (sync)
			races_thread_create(rd, t, h);
		races_acquire(rd, h, SYNC_SIGSTATE_KEY(thread));
		break;
	case SYNC_HANDLER_LEAVE:
		races_thread_join(rd, t, h);
		break;
	case SYNC_SIGSTATE:
		races_release(rd, ctx_of(o, thread), SYNC_SIGSTATE_KEY(thread));
		break;
	}
}

static void on_sync(void *ctx, int thread, int kind, uint64_t obj, int other)
{
	struct obs_ctx *o = ctx;

	if (kind == SYNC_HANDLER_ENTER || kind == SYNC_HANDLER_LEAVE ||
	    kind == SYNC_SIGSTATE) {
		bool nested = kind == SYNC_HANDLER_ENTER &&
			      ctx_of(o, thread) & 1;

		if (nested || thread < 0)
			return; /* one context for nested handlers */
		handler_sync(o, o->rd, thread, kind, obj == 1);
		handler_sync(o, o->rd_strict, thread, kind, obj == 1);
		if (o->rd2)
			handler_sync(o, o->rd2, thread, kind, obj == 1);
		if (kind != SYNC_SIGSTATE)
			set_in_handler(o, thread, kind == SYNC_HANDLER_ENTER);
		return;
	}
	if (kind == SYNC_OBJECT && other > 0)
		object_add(&o->objs, obj, (uint64_t)other);
	if (kind == SYNC_ATOMIC || kind == SYNC_ATOMIC_FREE)
		atomic_addr(o, obj, 0, thread, true);
	int c = ctx_of(o, thread);

	sync_one(o, o->rd, c, kind, obj, other, true);
	sync_one(o, o->rd_strict, c, kind, obj, other, false);
	if (o->rd2)
		sync_one(o, o->rd2, c, kind, obj, other, true);
}

/* The address of the instruction after the one at pc in process pid, 0
 * if it cannot be read or decoded.  Read from the file mapped there, not
 * the process's memory, which holds the observation breakpoints' int3. */
static uint64_t next_insn(int pid, uint64_t pc)
{
	char path[64], line[4096 + 128], file[4096];
	uint8_t code[16];
	struct insn_info in;
	uint64_t raw = EVENT_ADDR(pc), lo, hi, off;
	ssize_t got = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi,
			   perms, &off, file) != 5 ||
		    raw < lo || raw >= hi)
			continue;
		int fd = perms[2] == 'x' && file[0] == '/'
				 ? open(file, O_RDONLY | O_CLOEXEC)
				 : -1;

		if (fd >= 0) {
			got = pread(fd, code, sizeof(code),
				    (off_t)(raw - lo + off));
			close(fd);
		}
		break;
	}
	fclose(f);
	if (got <= 0 || disasm_decode(code, (size_t)got, raw, &in) ||
	    !in.len)
		return 0;
	return pc + in.len;
}

/* The load bias of exe in process pid (its run-time address minus its
 * link-time one), from the executable mapping of exe's file and the ELF's
 * executable segments; false if not found. */
static bool load_bias(int pid, const char *exe, uint64_t *bias)
{
	char path[64], line[4096 + 128], file[4096], want[4096], got[4096];
	struct elf_text seg[8];
	int nseg = symbols_elf_text(exe, seg, 8);
	uint64_t lo, hi, off;
	bool found = false;
	FILE *f;

	if (nseg <= 0 || !realpath(exe, want))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi,
			   perms, &off, file) != 5 ||
		    perms[2] != 'x' || !realpath(file, got) ||
		    strcmp(got, want))
			continue;
		for (int i = 0; i < nseg && !found; i++)
			if (off >= seg[i].offset &&
			    off < seg[i].offset + seg[i].size) {
				*bias = lo - (seg[i].vaddr + (off - seg[i].offset));
				found = true;
			}
	}
	fclose(f);
	return found;
}

/* A store raced by a load of another thread: the point after the store
 * (the load's own point is before it). */
static void mark_after_stores(struct race_entry *e, int pid)
{
	for (int k = 0; k < 2; k++)
		if (e->pair.write[k] && !e->pair.write[!k] && !e->after[k])
			e->after[k] = next_insn(pid, e->pair.pc[k]);
}

/* Copy the detector's pairs and name the new ones while the process is
 * still alive. */
static void collect(struct obs_ctx *o, int pid)
{
	const struct race_pair *p;
	size_t n;

	races_pairs(o->rd, &p, &n);
	struct discovery *d = o->d;

	if (n > d->nraces) {
		struct race_entry *r = realloc(d->races, n * sizeof(*r));

		if (!r)
			return;
		d->races = r;
		memset(d->races + d->nraces, 0,
		       (n - d->nraces) * sizeof(*r));
	}
	for (size_t i = 0; i < n; i++) {
		d->races[i].pair = pair_of_threads(&p[i]);
		/* two contexts of one thread (ctx_of) */
		d->races[i].own_handler = d->races[i].pair.thread[0] ==
					  d->races[i].pair.thread[1];
		if (pid > 0)
			mark_after_stores(&d->races[i], pid);
	}
	d->nraces = n;
	struct symbolizer *sym = o->cfg->sym;

	if (o->nruntime_code && pid > 0 && !o->runtime_bias_known)
		o->runtime_bias_known = load_bias(pid, o->runtime_exe,
						  &o->runtime_bias);
	if (!sym || pid <= 0 || o->named >= n)
		return;
	sym->attach(sym->ctx, pid);
	for (size_t i = o->named; i < n; i++) {
		struct race_entry *e = &d->races[i];

		for (int k = 0; k < 2; k++)
			sym->code(sym->ctx, e->pair.pc[k], e->where[k],
				  sizeof(e->where[k]));
		const char *state = disasm_state_name(e->pair.addr);

		if (state)
			snprintf(e->what, sizeof(e->what), "%s", state);
		else
			sym->data(sym->ctx, e->pair.addr, e->what,
				  sizeof(e->what));
	}
	sym->detach(sym->ctx);
	o->named = n;
}

/* A symbolised location in Rust std's channels ("std::sync::mpmc::
 * array::Channel<T>::send+0x3f7 (prog)", "<std::sync::mpsc::...>::..."). */
static bool rust_channel(const char *where)
{
	if (where[0] == '<')
		where++;
	return !strncmp(where, "std::sync::mpmc::", 17) ||
	       !strncmp(where, "std::sync::mpsc::", 17);
}

/* The race pair p (of o->rd) is one of o->rd2's: it stays when every
 * untyped word access is taken as an atomic's.  (rd2 has more order, so
 * its pairs are rd's, save where its shadow kept other accesses: such a
 * pair of rd2's alone is not reported, which can hide a race, never
 * invent one.) */
static bool sure_pair(struct obs_ctx *o, const struct race_pair *p)
{
	const struct race_pair *q;
	size_t n = 0;

	if (races_pairs(o->rd2, &q, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((q[i].addr & ~7ull) == (p->addr & ~7ull) &&
		    ((q[i].pc[0] == p->pc[0] && q[i].pc[1] == p->pc[1]) ||
		     (q[i].pc[0] == p->pc[1] && q[i].pc[1] == p->pc[0])))
			return true;
	return false;
}

/*
 * Which races are not the program's data races, once every run is seen
 * (they stay points: discovery_points).  A race on bytes an atomic
 * instruction touched in some run: an atomic load or a release store is
 * a plain mov on x86, so the accesses after an atomic instruction are
 * taken as atomics (on_access), and the ones before it are too, here:
 * which came first was the schedule's doing (Rust's Condvar loads its
 * futex word with a mov before the first notify's `lock inc`; a
 * channel's select word was read with a mov before a sender's `lock
 * cmpxchg`).  A race with both sides in the language runtime's own code:
 * Go's race detector does not instrument those packages, as its runtime
 * races by design (sysmon reads the Ps' state unlocked).  A race with both
 * sides in Rust std's channels (by their symbols: the binary has no
 * DWARF, else their atomics were known): a channel hands a value over
 * whole, and its slots' atomics are only ever loaded and stored (plain
 * movs), so no instruction showed them atomic (rs_many: 7 races of a
 * sync_channel in a release build, none with -g).  Of the ones reported,
 * a pair whose two sides are plain word loads or stores in code no debug
 * information covers, or one that only such accesses leave unordered, is
 * only possible (race_entry.possible): crossbeam's channel stamps in
 * Debian's stripped fd and b3sum were reported as data races, and so
 * would any stripped program's acquire/release atomics and the data they
 * hand over.
 */
static void classify(struct obs_ctx *o)
{
	struct discovery *d = o->d;

	for (size_t i = 0; i < d->nraces; i++) {
		struct race_entry *e = &d->races[i];
		bool rt = runtime_pc(o, e->pair.pc[0]) &&
			  runtime_pc(o, e->pair.pc[1]);

		e->runtime = rt;
		e->unreported = atomic_addr(o, e->pair.addr, 1, 0, false)
					? RACE_ON_ATOMIC
				: e->own_handler ? RACE_WITH_OWN_HANDLER
				: rt ? RACE_IN_RUNTIME
				: rust_channel(e->where[0]) &&
						rust_channel(e->where[1])
					? RACE_IN_RUST_CHANNEL
					: RACE_REPORTED;
		e->possible = o->rd2 && !e->unreported &&
			      !sure_pair(o, &e->pair);
	}
}

/*
 * The pairs of rd_strict that rd does not have (d->hidden): ordered only
 * by a lazy join (races.c lazy_join), which takes a thread that left a
 * shared object's word nonzero to have released it, by a store nobody
 * saw, as late as the next acquire of the word, and so orders before
 * that acquire what the thread did after its release too.  Words left
 * nonzero with no lock held (libtbbmalloc's, and those of the blocks it
 * hands libtbb) ordered a lost update on a plain counter between two
 * chunks of a oneTBB parallel_for in every run, and
 * the search, with no point at its load or store, said "PASS, complete
 * to preemption bound 2".  They are not reported (the release may have
 * come late: a false race on every correct program with a lock in a
 * shared object whose unlock is a plain store), but their instructions
 * are points: the search interleaves there, and a real lost update
 * fails.  More points, never a false verdict.
 */
static void hidden_pairs(struct obs_ctx *o)
{
	struct discovery *d = o->d;
	const struct race_pair *q;
	size_t n = 0;

	if (races_pairs(o->rd_strict, &q, &n) || !n)
		return;
	d->hidden = malloc(n * sizeof(*d->hidden));
	if (!d->hidden)
		return;
	for (size_t i = 0; i < n; i++) {
		bool known = false;

		for (size_t k = 0; k < d->nraces && !known; k++) {
			const struct race_pair *p = &d->races[k].pair;

			known = (p->pc[0] == q[i].pc[0] &&
				 p->pc[1] == q[i].pc[1]) ||
				(p->pc[0] == q[i].pc[1] &&
				 p->pc[1] == q[i].pc[0]);
		}
		if (!known && !(runtime_pc(o, q[i].pc[0]) &&
				runtime_pc(o, q[i].pc[1])))
			d->hidden[d->nhidden++] = pair_of_threads(&q[i]);
	}
}

static bool on_after(void *ctx, int thread, int other)
{
	const struct obs_ctx *o = ctx;
	int c = ctx_of(o, thread);

	return races_after(o->rd, c, 2 * other) &&
	       races_after(o->rd, c, 2 * other + 1);
}

static void on_alive(void *ctx, int pid)
{
	collect(ctx, pid);
}

/* Discovery's runs from this one on interleave at the racy instructions
 * found by the runs before (feedback_points). */
#define FEEDBACK_FROM 3
/* at most this many racy instructions become such points (else none) */
#define FEEDBACK_MAX 256
/*
 * The cost guard on the races feedback runs found.  Runs with racy points
 * run differently (Go's run longer in virtual time, so its runtime's
 * monitor thread preempts goroutines), and what they find can be data hot
 * code touches: Go's stack guard, read in every function's prologue, and
 * the scheduler's fields.  As points those multiplied a Go run's stops by
 * 4.6 (3,589 to 16,516).  So when a feedback run whose points include
 * feedback-found races makes more than FEEDBACK_STEPS steps more than the
 * first feedback run (whose points are the plain runs' races) and more than
 * twice as many, the feedback ends and no race found in a feedback run
 * becomes a point (d->feedback_costly; `ptloom races` still reports them).
 * The work-stealing queue's steal race costs 4 steps.
 */
#define FEEDBACK_STEPS 256

static int cmp_point(const void *a, const void *b)
{
	const struct user_point *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The points a later discovery run interleaves at: the spin points and
 * every instruction seen touching a racy 8-byte granule so far.  A race
 * that only an interleaving of racy accesses exposes (a steal that
 * succeeds only when the owner is preempted between two plain stores)
 * shows in no run with synchronisation points alone.  Not the pairs
 * only lazy joins order (hidden_pairs): interleaved there, a oneTBB
 * parallel_for's lost update was reported, and so were two false races
 * (a task's fields its spawner wrote and published by a plain store,
 * main's read after the wait), what no lazy join happened to order in
 * those runs.  Returns the count; *out is malloc'd.
 */
static size_t feedback_points(const struct obs_ctx *o,
			      const struct discovery *d,
			      struct user_point **out)
{
	uint64_t *gran = malloc((d->nraces + 1) * sizeof(*gran));
	struct user_point *p = NULL;
	size_t n = 0, cap = d->nspin + 16;

	*out = NULL;
	if (!gran)
		return 0;
	/* the runtime's own races too (classify leaves them out of the
	 * search's points): as points here they interleave Go's threads
	 * finely enough for two goroutines' accesses to meet on two of
	 * them (without: go_lost_update's race in no run of seeds 0 to 3) */
	for (size_t k = 0; k < d->nraces; k++)
		gran[k] = d->races[k].pair.addr & ~7ull;
	qsort(gran, d->nraces, sizeof(*gran), cmp_u64);
	p = malloc(cap * sizeof(*p));
	for (size_t i = 0; p && i < d->nspin; i++)
		p[n++] = d->spin[i];
	for (size_t i = 0; p && d->nraces && i < o->seen.cap; i++) {
		uint64_t a = o->seen.addr[i];

		if (!o->seen.pc[i] ||
		    !bsearch(&a, gran, d->nraces, sizeof(*gran), cmp_u64))
			continue;
		if (n == cap) {
			struct user_point *np = realloc(p, 2 * cap * sizeof(*p));

			if (!np)
				break;
			p = np;
			cap *= 2;
		}
		p[n++] = (struct user_point){ o->seen.pc[i], OP_ACCESS };
	}
	free(gran);
	if (p && n - d->nspin > FEEDBACK_MAX) {
		free(p); /* a program with this many is not interleaved here */
		p = NULL;
	}
	if (!p)
		return 0;
	qsort(p, n, sizeof(*p), cmp_point);
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!k || p[k - 1].addr != p[i].addr)
			p[k++] = p[i];
		else if (p[i].kind == OP_SPIN)
			p[k - 1].kind = OP_SPIN; /* a spin stays a yield */
	*out = p;
	return k;
}

/* A race whose instructions are no points (the feedback's cost guard). */
static bool race_left_out(const struct discovery *d, size_t i)
{
	if (d->races[i].runtime)
		return true; /* the runtime's own (classify) */
	return d->feedback_costly && d->races[i].by_feedback;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int discover_races(const struct session_config *base, int runs,
		   int max_runs, uint64_t seed, uint64_t budget,
		   bool fork_runs, struct discovery *d)
{
	struct obs_ctx o = { .cfg = base, .d = d };
	struct session_config cfg = *base;
	struct access_observer obs = {
		.ctx = &o,
		.access = on_access,
		.sync = on_sync,
		.freed = on_freed,
		.max_accesses = budget,
		.alive = on_alive,
		.after = on_after,
	};
	double t0 = now();

	memset(d, 0, sizeof(*d));
	/* the executable's code its debug information covers: elsewhere
	 * an atomic's load or store looks like any other */
	uint64_t *tcode = NULL;
	int ntcode = base->argv && base->argv[0]
			     ? symbols_elf_unit_code(base->argv[0], &tcode)
			     : -ENOENT;

	if (races_new(&o.rd) || races_new(&o.rd_strict) ||
	    (ntcode >= 0 && races_new(&o.rd2))) {
		races_free(o.rd);
		races_free(o.rd_strict);
		free(tcode);
		return -ENOMEM;
	}
	if (ntcode >= 0) {
		cfg.atomic_exe = base->argv[0];
		cfg.typed_known = true;
		cfg.typed_code = tcode;
		cfg.ntyped_code = (size_t)ntcode;
	}
	cfg.observer = &obs;
	/* a template of discovery's own: its runs' points, observers and
	 * agent's regions are not the search's (observation starts at the
	 * first thread, where the template stands) */
	struct checkpoint *cp = fork_runs ? checkpoint_new() : NULL;

	cfg.checkpoint = cp;
	/* std::atomic's plain movs are atomics (the program's own
	 * executable, when built with DWARF) */
	uint64_t *acode = NULL;
	int nacode = base->argv && base->argv[0]
			     ? symbols_elf_atomic_code(base->argv[0], &acode)
			     : 0;

	/* and a C11 _Atomic's (a global one: by its type) */
	uint64_t *adata = NULL;
	int nadata = base->argv && base->argv[0]
			     ? symbols_elf_atomic_data(base->argv[0], &adata)
			     : 0;

	if (nacode > 0) {
		cfg.atomic_exe = base->argv[0];
		cfg.atomic_code = acode;
		cfg.natomic_code = (size_t)nacode;
	}
	if (nadata > 0) {
		cfg.atomic_exe = base->argv[0];
		cfg.atomic_data = adata;
		cfg.natomic_data = (size_t)nadata;
	}
	/* Go's runtime: after the first run only its atomics are observed
	 * (cfg.nruntime_code, set per run below) */
	uint64_t *rcode = NULL;
	int nrcode = base->argv && base->argv[0]
			     ? symbols_elf_runtime_code(base->argv[0], &rcode)
			     : 0;

	if (nrcode > 0) {
		cfg.runtime_exe = o.runtime_exe = base->argv[0];
		cfg.runtime_code = o.runtime_code = rcode;
		o.nruntime_code = (size_t)nrcode;
	}
	cfg.points = POINTS_SYNC;
	cfg.symbolize_trace = false;
	struct sampler *smp = sampler_new(false, seed, 1);

	if (!smp) {
		races_free(o.rd);
		races_free(o.rd_strict);
		races_free(o.rd2);
		free(tcode);
		free(acode);
		free(adata);
		free(rcode);
		checkpoint_free(cp);
		return -ENOMEM;
	}
	/* time flows fast against the work in every run: the random walk
	 * wakes sleepers as often as it runs threads, so a background
	 * thread's periodic work (Go's sysmon preempting goroutines) comes
	 * between the threads' accesses.  With the exploration's rare
	 * timeouts in half of the runs, go_wg's 6 runs found 1 race of
	 * its runtime's 7 and a goroutines' lost update none (seed 2) */
	sampler_timeouts_always(smp);
	struct strategy s = sampler_strategy(smp);
	/* the runs past runs (cheap programs): every other one round-robin,
	 * whose turns make short threads overlap, where a random walk mostly
	 * runs each to its end before the next starts */
	struct sampler *rr = max_runs > runs
				     ? sampler_new_kind(SAMPLER_RR, seed, 1)
				     : NULL;
	struct strategy srr = rr ? sampler_strategy(rr) : s;
	/* runs in a row that spent the whole budget and found no new race:
	 * a program whose accesses are too many to observe whole, where
	 * more runs of the same cost (zstd: 25 s each) keep finding
	 * nothing; two of them end the discovery */
	int idle = 0;
	struct user_point *pts = NULL;
	size_t npts = 0;
	bool no_feedback = false;
	/* the feedback's cost guard: the races the plain runs found, the
	 * steps of the first run with them as points, and whether the next
	 * run's points include what feedback runs found */
	size_t plain_races = 0;
	uint64_t ref_steps = 0;
	bool fb_points = false;

	for (int i = 0;; i++) {
		struct run_result r;
		size_t races0 = d->nraces;

		/* runs owed to a stack seen shared: at least
		 * DISCOVERY_STACK_RUNS observing its stack-relative accesses */
		bool stack_owed = d->stack_shared &&
				  d->stack_runs < DISCOVERY_STACK_RUNS &&
				  i < max_runs + DISCOVERY_STACK_RUNS;
		/* past runs, on while the runs are cheap (DISCOVERY_CHEAP;
		 * their stops at stack-relative accesses left out: a
		 * program's runs are as cheap as they were before its
		 * stack was seen shared) and observe something: runs that
		 * observed no access at all (processes of one thread each:
		 * a build, a shell script) have no short threads to catch
		 * overlapping; gcc's 24 such runs took 5.9 s before two
		 * 0.2 s runs */
		uint64_t seen = d->obs_stops - d->obs_stack + d->obs_steps +
				d->obs_sync;

		if (i >= runs && !stack_owed &&
		    (i >= max_runs || !d->runs ||
		     seen + d->obs_stack + d->obs_logged == 0 ||
		     seen >= (uint64_t)DISCOVERY_CHEAP * (uint64_t)d->runs))
			break;

		if (base->interrupted && *base->interrupted)
			break;
		/* --max-time (base->stop_wall) is for the whole command: 24
		 * runs of a build (7 s each) took 170 s of --max-time 120 */
		if (base->stop_wall > 0 && i > 0 && now() >= base->stop_wall) {
			d->time_up = true;
			d->limit_run = i;
			break;
		}
		/* seeded random samples */
		bool turns = rr && i >= runs && (i - runs) % 2 == 0;

		sampler_begin(turns ? rr : smp, (uint64_t)i, 100);
		races_reset_execution(o.rd);
		races_reset_execution(o.rd_strict);
		if (o.rd2)
			races_reset_execution(o.rd2);
		if (o.nin_handler)
			memset(o.in_handler, 0, o.nin_handler);
		free(pts);
		pts = NULL;
		npts = 0;
		if (i >= FEEDBACK_FROM && !no_feedback)
			npts = feedback_points(&o, d, &pts);
		cfg.user_points = pts ? pts : d->spin;
		cfg.nuser_points = pts ? npts : d->nspin;
		cfg.spin_ms = d->nspin < 16 ? 100 : 0;
		/* Go's runtime in full in the first run only: its races
		 * (sysmon reading the Ps' state unlocked) are the same in
		 * every run, and the plain accesses of its start-up were
		 * 95 % of go_wg's 170,000 observation stops in 6 runs */
		cfg.nruntime_code = nrcode > 0 ? (size_t)nrcode : 0;
		cfg.runtime_atomics_only = i > 0;
		d->runtime_atomics_runs += i > 0 && nrcode > 0;
		int e = session_run(&cfg, turns ? &srr : &s, &r);

		if (!e && r.seconds > d->longest_run)
			d->longest_run = r.seconds;
		if (e && base->interrupted && *base->interrupted)
			break; /* killed while starting: keep what was seen */
		if (!e && r.failure == FAIL_INTERRUPTED) {
			/* (the caller's time bound, cfg.stop_wall, stops a
			 * run in flight: --max-time ran out) */
			if (!(base->interrupted && *base->interrupted) &&
			    base->stop_wall > 0 && i > 0) {
				d->time_up = true;
				d->limit_run = i;
			}
			run_result_free(&r);
			break; /* not a run that observed the program */
		}
		if (e) {
			free(pts);
			free(o.objs.lo);
			free(o.objs.hi);
			sampler_free(smp);
			sampler_free(rr);
			races_free(o.rd);
			races_free(o.rd_strict);
			races_free(o.rd2);
			free(tcode);
			free(acode);
			free(adata);
			free(rcode);
			checkpoint_free(cp);
			return e;
		}
		if (r.failure == FAIL_SPIN && r.spin_pc) {
			/* the same run again with a yield point in the spin */
			struct user_point *sp = realloc(
				d->spin, (d->nspin + 1) * sizeof(*sp));

			if (sp) {
				d->spin = sp;
				d->spin[d->nspin++] =
					(struct user_point){ r.spin_pc, OP_SPIN };
				qsort(d->spin, d->nspin, sizeof(*sp),
				      cmp_point);
				i--;
			}
			run_result_free(&r);
			continue;
		}
		d->runs++;
		d->stack_runs += cfg.observe_stack;
		if (r.late_objects && !d->late_runs++)
			memcpy(d->late_object, r.late_object,
			       sizeof(d->late_object));
		if (r.stack_shared && !cfg.observe_stack) {
			/* data on a thread's stack reached another thread:
			 * its owner's stack-relative accesses to it are
			 * what the runs so far left out */
			d->stack_shared = true;
			cfg.observe_stack = true;
		}
		/* a policy that names the observed objects (a Python
		 * program's C extensions) and none was there to observe:
		 * nothing more to discover */
		bool none = i == 0 && cfg.policy && r.plevel[0] &&
			    cfg.policy->observe_object && !r.obs_stops;

		d->failed_runs += r.failure != FAIL_NONE;
		d->exit_runs += r.failure == FAIL_EXIT;
		d->obs_stops += r.obs_stops;
		d->obs_steps += r.obs_steps;
		d->obs_logged += r.stop_kinds[STOPK_AGENT_OBSERVE];
		d->obs_sync += r.obs_sync;
		d->obs_stack += r.obs_stack;
		/* either budget spent ends the run's observation */
		bool spent = r.obs_stops + r.obs_steps >= budget ||
			     r.obs_sync >= budget;

		d->spent_runs += spent;
		collect(&o, 0);
		for (size_t k = races0; k < d->nraces; k++)
			d->races[k].by_feedback = pts != NULL;
		if (pts && !fb_points) {
			ref_steps = r.steps; /* at the plain runs' races */
		} else if (pts && r.steps > ref_steps + FEEDBACK_STEPS &&
			   r.steps > 2 * ref_steps) {
			/* the feedback's races are in hot code */
			no_feedback = true;
			d->feedback_costly = true;
		}
		fb_points = fb_points || (pts && d->nraces > plain_races);
		if (!pts && !no_feedback)
			plain_races = d->nraces;
		if (!d->have_fail && (r.failure == FAIL_CRASH ||
				      r.failure == FAIL_EXIT ||
				      r.failure == FAIL_DEADLOCK)) {
			d->fail = r;
			d->have_fail = true;
			/* the points it ran with replay it */
			d->fail_points = malloc((cfg.nuser_points + 1) *
						sizeof(*d->fail_points));
			if (d->fail_points && cfg.nuser_points)
				memcpy(d->fail_points, cfg.user_points,
				       cfg.nuser_points *
					       sizeof(*d->fail_points));
			d->nfail_points =
				d->fail_points ? cfg.nuser_points : 0;
			if (none)
				break;
			continue;
		}
		bool too_long = r.failure == FAIL_SLOW ||
				r.failure == FAIL_HANG ||
				r.failure == FAIL_STEPS;

		if (too_long && pts) {
			/* the extra points made it too long (a real program
			 * with hot racy loops): what it saw counts, the limit
			 * is the points', not the program's; plain runs on */
			no_feedback = true;
			run_result_free(&r);
			continue;
		}
		if (too_long) {
			d->limit_kind = r.failure;
			d->limit_run = i + 1;
			snprintf(d->limit_why, sizeof(d->limit_why), "%s",
				 r.message);
		}
		run_result_free(&r);
		if (too_long || none)
			break; /* each further run would wait as long */
		bool owed = d->stack_shared &&
			    d->stack_runs < DISCOVERY_STACK_RUNS;

		if (d->obs_stops + d->obs_steps >= DISCOVERY_TOTAL * budget &&
		    i + 1 < runs && !owed) {
			d->cut_short = true; /* spent what the runs may */
			break;
		}
		if (spent && d->nraces == races0) {
			if (++idle >= 2 && i + 1 < runs && !owed) {
				d->cut_short = true;
				break;
			}
		} else {
			idle = 0;
		}
	}
	/* a stack seen shared, and no run observed its stack-relative
	 * accesses: what its owner did there is unknown */
	d->stack_unobserved = d->stack_shared && !d->stack_runs;
	free(pts);
	sampler_free(smp);
	sampler_free(rr);
	races_free(o.rd);
	free(acode);
	free(adata);
	classify(&o);
	hidden_pairs(&o);
	races_free(o.rd_strict);
	races_free(o.rd2);
	free(tcode);
	d->forked = (int)checkpoint_forks(cp);
	d->from_exec = (int)checkpoint_pid_taken(cp);
	checkpoint_free(cp);
	/* the instructions that touched a racy address, or one of a pair
	 * only the lazy joins order */
	for (size_t i = 0; i < o.seen.cap; i++) {
		if (!o.seen.pc[i])
			continue;
		for (size_t k = 0; k < d->nraces + d->nhidden; k++) {
			uint64_t a = (k < d->nraces ? d->races[k].pair.addr
						    : d->hidden[k - d->nraces]
							      .addr) &
				     ~7ull;

			if (o.seen.addr[i] != a ||
			    (k < d->nraces && race_left_out(d, k)))
				continue;
			uint64_t *n = realloc(d->extra_pcs,
					      (d->nextra + 1) * sizeof(*n));

			if (n) {
				d->extra_pcs = n;
				d->extra_pcs[d->nextra++] = o.seen.pc[i];
			}
			break;
		}
	}
	/* atomic instructions on data more than one thread touches */
	for (size_t i = 0; i < o.seen.cap; i++) {
		if (!o.seen.pc[i])
			continue;
		long j = atomic_slot(&o, o.seen.addr[i]);

		if (j < 0 || o.atomic_thr[j] != -1)
			continue;
		/* the runtime's atomics order its own data (Go's lock2, its
		 * scheduler's and allocator's words): as points they were
		 * 2,762 of go_wg's 4,724 stops a run, and a goroutines'
		 * check-then-act on a sync.Mutex took 400 runs and 60 s of
		 * the default search to fail, 88 runs and 8 s without them */
		if (runtime_pc(&o, o.seen.pc[i])) {
			d->runtime_atomics_left++;
			continue;
		}
		/* Go's atomic stores are all XCHG (sequentially consistent),
		 * so a plain store is none: it met an atomic's bytes because
		 * the collector gave them to another object (net.IP.Mask's
		 * byte stores were 288 atomic stops of a go_tcp_lost_update
		 * run) */
		if (o.nruntime_code && seen_has(&o.stores, o.seen.pc[i], 0))
			continue;
		uint64_t *n = realloc(d->atomic_pcs,
				      (d->natomic + 1) * sizeof(*n));

		if (n) {
			d->atomic_pcs = n;
			d->atomic_pcs[d->natomic++] = o.seen.pc[i];
		}
	}
	free(rcode);
	free(o.seen.pc);
	free(o.seen.addr);
	free(o.stores.pc);
	free(o.stores.addr);
	free(o.atomics);
	free(o.atomic_thr);
	free(o.atomic_mask);
	free(o.objs.lo);
	free(o.objs.hi);
	d->seconds = now() - t0;
	return 0;
}

void discovery_free(struct discovery *d)
{
	free(d->races);
	if (d->have_fail)
		run_result_free(&d->fail);
	free(d->fail_points);
	free(d->extra_pcs);
	free(d->hidden);
	free(d->atomic_pcs);
	free(d->spin);
	memset(d, 0, sizeof(*d));
}

size_t discovery_points(const struct discovery *d, struct user_point **out)
{
	struct user_point *p = calloc(4 * d->nraces + 2 * d->nhidden +
					      d->nextra + d->natomic + 1,
				      sizeof(*p));
	size_t n = 0;

	*out = p;
	if (!p)
		return 0;
	for (size_t i = 0; i < d->nraces; i++)
		for (int k = 0; k < 2 && !race_left_out(d, i); k++)
			p[n++] = (struct user_point){ d->races[i].pair.pc[k],
						      OP_ACCESS };
	for (size_t i = 0; i < d->nraces; i++)
		for (int k = 0; k < 2 && !race_left_out(d, i); k++)
			if (d->races[i].after[k])
				p[n++] = (struct user_point){
					d->races[i].after[k], OP_ACCESS
				};
	for (size_t i = 0; i < d->nhidden; i++)
		for (int k = 0; k < 2; k++)
			p[n++] = (struct user_point){ d->hidden[i].pc[k],
						      OP_ACCESS };
	for (size_t i = 0; i < d->nextra; i++)
		p[n++] = (struct user_point){ d->extra_pcs[i], OP_ACCESS };
	for (size_t i = 0; i < d->natomic; i++)
		p[n++] = (struct user_point){ d->atomic_pcs[i], OP_ATOMIC };
	qsort(p, n, sizeof(*p), cmp_point);
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!k || p[k - 1].addr != p[i].addr)
			p[k++] = p[i];
	return k;
}
