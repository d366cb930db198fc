/*
 * The program's state at a choice point, as one 64-bit key, for state
 * caching (analysis/dfs.c): two schedule prefixes that reach equal keys
 * have the same futures, so a search may explore only one of them.
 *
 * The key covers what the future of the run depends on:
 * - every thread's registers and ptloom's view of it (its pending
 *   operation, blocking, spin recognition, a skipped syscall's result);
 * - all writable memory of the process (the pages in memory or swap: one
 *   never touched is the zero page or the file's), except a thread
 *   stack's dead part below its stack pointer (and the 128-byte red
 *   zone) in the mappings that hold glibc's thread stacks or the main
 *   [stack], and an exited thread's frames (below the last stack pointer
 *   it had) in its glibc stack while no live thread runs on it;
 * - the futex queues, the virtual clock (unless left out until the run
 *   reads it, session_config.key_no_clock), getrandom's stream, the
 *   thread that ran last and how long it has run (fairness), breakpoint
 *   lifting.
 * Thread ids differ from run to run (each run is a new process): a
 * 32-bit word equal to one of the run's thread ids is hashed as its
 * T-number, so that equal states of two runs get equal keys.
 *
 * Kernel state ptloom does not see is not in memory: pending signals,
 * armed timers, other processes, descriptors' contents and positions.
 * The key is therefore 0 (unknown: no caching) while a signal may be
 * pending, a timer is armed, more than one process exists, a thread
 * waits on descriptors, a policy (Python) keeps its own state or race
 * discovery observes; and for the rest of the run once the program has
 * written anything but its output (/proc/PID/io's wchar against the
 * output's size) or performed a descriptor, poll, signal or wait
 * operation.  A program with more than KEY_MEM_MAX of such memory gets no
 * key, nor the rest of a run whose keys have read KEY_RUN_MAX.  A program that reads back its own output, or changes the
 * file system without writing (rename, unlink), is beyond the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "session_int.h"

#define KEY_MAPS 512
/* What a key may cost, in bytes of memory hashed: a larger program gets
 * no key (it would cost more than the runs it saves), nor does a run once
 * its keys have hashed KEY_RUN_MAX.  Bytes, not time, so that the same
 * exploration prunes the same runs on any machine. */
#define KEY_MEM_MAX (4ull << 20)
#define KEY_RUN_MAX (64ull << 20)
#define RED_ZONE 128

struct keyer {
	uint64_t h[4];
	uint32_t tid[64], tmin, tmax;
	int ntid;
};

static uint32_t norm32(const struct keyer *k, uint32_t v)
{
	if (v < k->tmin || v > k->tmax)
		return v;
	for (int i = 0; i < k->ntid; i++)
		if (v == k->tid[i])
			return 0x7fd10000u | (uint32_t)i;
	return v;
}

static uint64_t norm(const struct keyer *k, uint64_t w)
{
	return (uint64_t)norm32(k, (uint32_t)(w >> 32)) << 32 |
	       norm32(k, (uint32_t)w);
}

/* Could a half of w be a thread id (in [tmin, tmax])? */
static inline bool maybe_tid(const struct keyer *k, uint64_t w)
{
	uint32_t span = k->tmax - k->tmin;

	return (uint32_t)w - k->tmin <= span ||
	       (uint32_t)(w >> 32) - k->tmin <= span;
}

static void key_words(struct keyer *k, const uint64_t *w, size_t n)
{
	size_t i = 0;

	/* four lanes: the multiplications overlap; norm() only where a
	 * word may hold a thread id (few do) */
	for (; i + 4 <= n; i += 4) {
		uint64_t v0 = w[i], v1 = w[i + 1], v2 = w[i + 2], v3 = w[i + 3];

		if (maybe_tid(k, v0) || maybe_tid(k, v1) || maybe_tid(k, v2) ||
		    maybe_tid(k, v3)) {
			v0 = norm(k, v0);
			v1 = norm(k, v1);
			v2 = norm(k, v2);
			v3 = norm(k, v3);
		}
		hash_mix(&k->h[0], v0);
		hash_mix(&k->h[1], v1);
		hash_mix(&k->h[2], v2);
		hash_mix(&k->h[3], v3);
	}
	for (; i < n; i++)
		hash_mix(&k->h[0], norm(k, w[i]));
}

static void key_u64(struct keyer *k, uint64_t v)
{
	hash_mix(&k->h[0], v);
}

/* Fold the component hashed so far into the key, start the next one. */
static void key_part(struct keyer *k, uint64_t *key)
{
	uint64_t h = k->h[0];

	for (int l = 1; l < 4; l++)
		hash_mix(&h, k->h[l]);
	hash_mix(key, h);
	k->h[0] = 0x5054204c4f4f4dull;
	k->h[1] = 1;
	k->h[2] = 2;
	k->h[3] = 3;
}

/* The run has done something whose effect the key cannot see. */
static bool beyond(int kind)
{
	switch (kind) {
	case OP_READ:
	case OP_WRITE:
	case OP_POLL:
	case OP_ACCEPT:
	case OP_CONNECT:
	case OP_WAIT4:
	case OP_KILL:
	case OP_SYSCALL:
	case OP_PYCHECK:
	case OP_TIMER:
	case OP_EXIT_GROUP:
		return true;
	default:
		return false;
	}
}

/* /proc/PID/<what> of p, opened once a run and kept in *fd. */
static int key_fd(struct process *p, int *fd, const char *what)
{
	char name[64];

	if (*fd < 0) {
		snprintf(name, sizeof(name), "/proc/%d/%s", p->pid, what);
		*fd = open(name, O_RDONLY | O_CLOEXEC);
	}
	return *fd;
}

/* Bytes written by the process (all its threads), -1 if unknown. */
static long long proc_wchar(struct process *p)
{
	char buf[512];
	long long v = -1;
	int fd = key_fd(p, &p->iofd, "io");

	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *q = strstr(buf, "wchar:");

	if (q)
		v = strtoll(q + 6, NULL, 10);
	return v;
}

static long long out_size(struct session *s)
{
	struct stat st;

	if (s->outfd < 0 || fstat(s->outfd, &st))
		return -1;
	return (long long)st.st_size;
}

/* Has the program written elsewhere than to its output this run? */
static bool wrote_elsewhere(struct session *s, struct process *p)
{
	long long w = proc_wchar(p), o = out_size(s);

	if (w < 0 || o < 0)
		return true;
	if (!s->key.based) {
		s->key.based = true;
		s->key.wchar0 = w;
		s->key.out0 = o;
		return false;
	}
	return w - s->key.wchar0 != o - s->key.out0;
}

static void key_thread(struct keyer *k, struct session *s,
		       const struct thread *t)
{
	key_u64(k, (uint64_t)t->st << 40 | (uint64_t)t->block << 32 |
			   (uint64_t)t->kind << 24 | (uint64_t)t->fn << 16 |
			   (uint64_t)t->stop << 8 | (uint64_t)t->yield << 1 |
			   t->skip);
	key_u64(k, t->obj);
	key_u64(k, t->obj2);
	key_u64(k, t->pc);
	key_u64(k, norm(k, (uint64_t)t->arg));
	key_u64(k, t->skip ? norm(k, (uint64_t)t->result) : 0);
	key_u64(k, (uint64_t)t->sig << 32 | (uint64_t)t->sig_block << 8 |
			   (uint64_t)t->futex_woken << 4 |
			   (uint64_t)t->sig_rerun << 3 |
			   (uint64_t)t->wake_due << 7 |
			   (uint64_t)t->clone_thread << 2 |
			   (uint64_t)t->wait_nohang << 1 | t->fork_return);
	key_u64(k, (uint64_t)t->sig_mode);
	key_u64(k, t->sig_set);
	key_u64(k, t->sig_claim);
	key_u64(k, t->cond_mutex);
	key_u64(k, t->relock);
	key_u64(k, t->ctid);
	key_u64(k, t->new_ctid);
	key_u64(k, t->bp_addr);
	/* a split read-modify-write's loaded value is the thread's */
	key_u64(k, t->split ? t->split_addr ^ (uint64_t)t->split_size << 56
			    : 0);
	key_u64(k, t->split ? norm(k, t->split_val) : 0);
	/* its buffered stores are its until they drain (tso.c) */
	for (int i = 0; i < t->nsb; i++) {
		key_u64(k, t->sb[i].addr ^ (uint64_t)t->sb[i].size << 56);
		key_u64(k, norm(k, t->sb[i].val));
	}
	key_u64(k, t->timed ? t->deadline : 0);
	key_u64(k, t->sleep_ns << 1 | t->sleep_abs);
	/* spin recognition */
	key_u64(k, (uint64_t)t->nspin << 32 | (uint64_t)t->repeats << 1 |
			   (t->spin_switch == s->switches));
	for (int i = 0; i < t->nspin && i < 4; i++) {
		key_u64(k, t->spin_ring[i].pc);
		key_u64(k, t->spin_ring[i].obj);
	}
	const uint64_t *r = (const uint64_t *)&t->regs;

	for (size_t i = 0; i < sizeof(t->regs) / 8; i++)
		key_u64(k, norm(k, r[i]));
}

/*
 * What a key hashes of the memory, planned before anything is read: per
 * writable mapping its bounds (a map entry), then the runs of its pages
 * in memory or swap (a page never touched is the zero page or the
 * file's, the same in every run), each with its address.  The bytes of
 * all runs are then read in one process_vm_readv per IOV_MAX of them
 * instead of one read of /proc/PID/mem per run.
 */
struct key_span {
	uint64_t a, b;
	bool map;	/* a mapping's bounds, not bytes to read */
};

struct key_plan {
	struct key_span *sp;
	size_t n, cap;
	uint64_t bytes;	/* of the runs */
};

static bool plan_add(struct key_plan *pl, uint64_t a, uint64_t b, bool map)
{
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 256;
		struct key_span *n = realloc(pl->sp, cap * sizeof(*n));

		if (!n)
			return false;
		pl->sp = n;
		pl->cap = cap;
	}
	if (!map)
		pl->bytes += b - a;
	/* a run that goes on where the last one ended is that run: the
	 * same plan however the runs were found */
	if (!map && pl->n && !pl->sp[pl->n - 1].map &&
	    pl->sp[pl->n - 1].b == a) {
		pl->sp[pl->n - 1].b = b;
		return true;
	}
	pl->sp[pl->n++] = (struct key_span){ a, b, map };
	return true;
}

/* The runs of [lo, hi) of p's pages in memory or swap (all: every page),
 * in batches of 512 pagemap entries as they are read. */
static bool plan_range(struct key_plan *pl, int pagemap, uint64_t lo,
		       uint64_t hi, bool all, uint64_t *total)
{
	static uint64_t ent[512];
	uint64_t page = 4096, first = lo / page, last = (hi + page - 1) / page;

	for (uint64_t pg = first; pg < last;) {
		size_t n = last - pg < 512 ? (size_t)(last - pg) : 512;
		ssize_t got = pread(pagemap, ent, n * 8, (off_t)(pg * 8));

		if (got <= 0)
			return false;
		n = (size_t)got / 8;
		if (all)
			for (size_t i = 0; i < n; i++)
				ent[i] |= 1ull << 63;
		for (size_t i = 0; i < n;) {
			if (!(ent[i] >> 62)) {
				i++;
				continue;
			}
			size_t j = i;

			while (j < n && ent[j] >> 62)
				j++;
			uint64_t a = (pg + i) * page, b = (pg + j) * page;

			if (a < lo)
				a = lo;
			if (b > hi)
				b = hi;
			*total += b - a;
			if (*total > KEY_MEM_MAX || !plan_add(pl, a, b, false))
				return false;
			i = j;
		}
		pg += n;
	}
	return true;
}

/*
 * The runs of pages in memory or swap over [lo, hi), as Linux 6.7's
 * PAGEMAP_SCAN finds them: one ioctl on pagemap for the reads of its
 * entries that would take a read per mapping (the kernel's uapi,
 * linux/fs.h, spelled here for older headers).  NULL where the kernel
 * has none; sorted, each ended by its first page not in memory or swap.
 */
struct pm_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask;
	uint64_t return_mask;
};

#define PTLOOM_PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PM_PAGE_PRESENT (1ull << 3)
#define PM_PAGE_SWAPPED (1ull << 4)

static const struct pm_region *scan_regions(int pagemap, uint64_t lo,
					    uint64_t hi, size_t *n)
{
	static struct pm_region *r;
	static size_t cap;
	static int none = -1;

	/* PTLOOM_PAGEMAP_READ=1: pagemap read as older kernels need */
	if (none < 0)
		none = getenv("PTLOOM_PAGEMAP_READ") != NULL;
	*n = 0;
	while (!none) {
		if (cap - *n < 256) {
			size_t c = cap ? cap * 2 : 1024;
			struct pm_region *m = realloc(r, c * sizeof(*m));

			if (!m)
				return NULL;
			r = m;
			cap = c;
		}
		struct pm_scan_arg a = {
			.size = sizeof(a),
			.start = lo,
			.end = hi,
			.vec = (uint64_t)(uintptr_t)(r + *n),
			.vec_len = cap - *n,
			.category_anyof_mask = PM_PAGE_PRESENT | PM_PAGE_SWAPPED,
		};
		long got = ioctl(pagemap, PTLOOM_PAGEMAP_SCAN, &a);

		if (got < 0) {
			if (errno == ENOTTY || errno == EINVAL ||
			    errno == EOPNOTSUPP)
				none = true; /* an older kernel: read pagemap */
			return NULL;
		}
		*n += (size_t)got;
		if (a.walk_end >= hi)
			return r;
		if (a.walk_end <= lo)
			return NULL; /* no way on: pagemap read instead */
		lo = a.walk_end; /* the vector was full */
	}
	return NULL;
}

/* plan_range's runs from scan_regions' regions, *at the first region that
 * may meet [lo, hi) (mappings come in order). */
static bool plan_regions(struct key_plan *pl, const struct pm_region *r,
			 size_t n, size_t *at, uint64_t lo, uint64_t hi,
			 uint64_t *total)
{
	while (*at < n && r[*at].end <= lo)
		(*at)++;
	for (size_t i = *at; i < n && r[i].start < hi; i++) {
		uint64_t a = r[i].start > lo ? r[i].start : lo;
		uint64_t b = r[i].end < hi ? r[i].end : hi;

		if (a >= b)
			continue;
		*total += b - a;
		if (*total > KEY_MEM_MAX || !plan_add(pl, a, b, false))
			return false;
	}
	return true;
}

/* The bytes of the plan's runs into buf, in order. */
static bool plan_read(const struct key_plan *pl, struct process *p,
		      uint8_t *buf)
{
	struct iovec local, remote[1024];
	size_t i = 0;

	while (i < pl->n) {
		size_t nr = 0, first = i;
		uint64_t want = 0;

		for (; i < pl->n && nr < 1024; i++) {
			const struct key_span *sp = &pl->sp[i];

			if (sp->map)
				continue;
			remote[nr].iov_base = (void *)(uintptr_t)sp->a;
			remote[nr].iov_len = sp->b - sp->a;
			want += sp->b - sp->a;
			nr++;
		}
		local.iov_base = buf;
		local.iov_len = want;
		ssize_t got = nr ? process_vm_readv(p->pid, &local, 1, remote,
						    nr, 0)
				 : 0;

		if (got < 0)
			got = 0;
		if ((uint64_t)got == want) {
			buf += want;
			continue;
		}
		/* the rest through /proc/PID/mem, which reads what
		 * process_vm_readv may not (a write-only mapping) */
		uint64_t skip = (uint64_t)got;

		for (size_t j = first; j < i; j++) {
			const struct key_span *sp = &pl->sp[j];
			uint64_t a = sp->a, len = sp->map ? 0 : sp->b - sp->a;

			if (skip >= len) {
				skip -= len;
				buf += len;
				continue;
			}
			a += skip;
			buf += skip;
			len -= skip;
			skip = 0;
			while (len) {
				ssize_t r = pread(p->memfd, buf, len, (off_t)a);

				if (r <= 0)
					return false; /* unreadable */
				a += (uint64_t)r;
				buf += r;
				len -= (uint64_t)r;
			}
		}
	}
	return true;
}

static uint64_t key_memory(struct keyer *k, uint64_t *key,
			   struct session *s, struct process *p)
{
	static struct proc_map maps[KEY_MAPS];
	static struct key_plan pl;
	static uint8_t *buf;
	static size_t cap;
	uint64_t total = 0;
	bool more;
	int mfd = key_fd(p, &p->mapsfd, "maps");
	int n = mfd < 0 ? -1 : proc_maps_writable(mfd, maps, KEY_MAPS, &more);
	int pagemap = key_fd(p, &p->pagemapfd, "pagemap");

	if (n < 0 || more || pagemap < 0)
		return 0; /* unreadable, or too many to hash */
	pl.n = 0;
	pl.bytes = 0;
	size_t nreg = 0, ri = 0;
	const struct pm_region *reg =
		n ? scan_regions(pagemap, maps[0].lo, maps[n - 1].hi, &nreg)
		  : NULL;

	for (int i = 0; i < n; i++) {
		struct proc_map *m = &maps[i];
		uint64_t lo = m->lo;
		bool live = false;

		if (agent_page_at(p, m->lo))
			continue; /* ptloom's clock page: the clock is keyed
				   * apart (key_no_clock) */

		/* a stack's dead part: glibc's thread stacks (the thread's
		 * descriptor, at fs_base, lies at their top) and [stack] */
		for (int j = 0; j < s->nth; j++) {
			const struct thread *t = &s->th[j];
			uint64_t sp = t->regs.rsp;

			if (t->st == SCHED_DEAD || t->p != p)
				continue;
			if (t->regs.fs_base >= m->lo && t->regs.fs_base < m->hi)
				live = true;
			if (sp < m->lo || sp >= m->hi)
				continue;
			live = true;
			if (m->stack || (m->anon && t->regs.fs_base >= m->lo &&
					 t->regs.fs_base < m->hi))
				if (sp - RED_ZONE > lo)
					lo = (sp - RED_ZONE) & ~7ull;
		}
		/* an exited thread's glibc stack that no live thread uses
		 * (none was started on it from glibc's stack cache): its
		 * frames are all dead, only its descriptor and TLS, at the
		 * top above any stack pointer it had, are still read (by a
		 * join, by glibc); below its last known stack pointer lies
		 * nothing a program without undefined behaviour reads */
		for (int j = 0; j < s->nth && !live; j++) {
			const struct thread *t = &s->th[j];
			uint64_t sp = t->regs.rsp;

			/* (its guard looked up only here: a query more) */
			if (t->st != SCHED_DEAD || t->p != p || sp < m->lo ||
			    sp >= m->hi || proc_map_guard(mfd, m) < 0 ||
			    !proc_map_glibc_stack(m, t->regs.fs_base))
				continue;
			if (sp - RED_ZONE > lo)
				lo = (sp - RED_ZONE) & ~7ull;
		}
		/* a shared file mapping's page out of memory may have been
		 * written back: read them all */
		bool all = m->shared && !m->anon;

		if (!plan_add(&pl, m->lo, m->hi, true) ||
		    !(reg && !all ? plan_regions(&pl, reg, nreg, &ri, lo, m->hi,
						 &total)
				  : plan_range(&pl, pagemap, lo, m->hi, all,
					       &total))) {
			s->key.hashed += total;
			if (total > KEY_MEM_MAX)
				s->key.off = true; /* memory seldom shrinks */
			return 0;
		}
	}
	s->key.hashed += total;
	if (pl.bytes > cap) {
		uint8_t *b = realloc(buf, pl.bytes);

		if (!b)
			return 0;
		buf = b;
		cap = pl.bytes;
	}
	if (!plan_read(&pl, p, buf))
		return 0;
	/* hashed as the reads of 64 KiB each were before */
	const uint8_t *at = buf;
	bool open = false;

	for (size_t i = 0; i < pl.n; i++) {
		const struct key_span *sp = &pl.sp[i];

		if (sp->map) {
			if (open)
				key_part(k, key);
			key_u64(k, sp->a);
			key_u64(k, sp->b);
			open = true;
			continue;
		}
		key_u64(k, sp->a);
		for (uint64_t len = sp->b - sp->a; len;) {
			uint64_t piece = len < 65536 ? len : 65536;

			/* 8-aligned: every run starts at a page or at a
			 * stack's dead part, rounded down to 8 */
			key_words(k, (const uint64_t *)(const void *)at,
				  (size_t)piece / 8);
			at += piece;
			len -= piece;
		}
	}
	if (open)
		key_part(k, key);
	return 1;
}

uint64_t session_state_key(struct session *s)
{
	struct keyer k = { .h = { 0x5054204c4f4f4dull, 1, 2, 3 },
			   .tmin = UINT32_MAX };
	uint64_t key = 0x6b6579;

	if (s->key.off || s->key.hashed > KEY_RUN_MAX) {
		s->key.off = true;
		return 0;
	}
	for (; s->key.scanned < s->nev; s->key.scanned++)
		if (beyond(s->ev[s->key.scanned].kind)) {
			s->key.off = true;
			return 0;
		}
	if (s->nprocs != 1 || !s->procs[0] || s->procs[0]->dead ||
	    s->procs[0]->memfd < 0)
		return 0;
	struct process *p = s->procs[0];

	if (wrote_elsewhere(s, p)) {
		s->key.off = true;
		return 0;
	}
	if (s->nfreep || p->observing || s->sig_maybe || timer_armed(s) ||
	    s->nth > 64 || s->cfg->observer || session_policy_active(s))
		return 0;
	for (int i = 0; i < s->nth; i++) {
		uint32_t tid = (uint32_t)s->th[i].tid;

		k.tid[k.ntid++] = tid;
		if (tid < k.tmin)
			k.tmin = tid;
		if (tid > k.tmax)
			k.tmax = tid;
	}
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];
		if (t->st != SCHED_DEAD &&
		    (t->st == SCHED_RUNNING || t->starting || t->npfd ||
		     regs_get(t)))
			return 0;
		if (t->st == SCHED_DEAD)
			key_u64(&k, 0xdead);
		else
			key_thread(&k, s, t);
		key_part(&k, &key);
	}
	for (size_t i = 0; i < s->ft.n; i++) {
		key_u64(&k, (uint64_t)s->ft.w[i].thread << 32 |
				    s->ft.w[i].bitset);
		key_u64(&k, s->ft.w[i].addr);
	}
	key_part(&k, &key);
	key_u64(&k, (uint64_t)s->current);
	key_part(&k, &key);
	key_u64(&k, s->run_len < 1000 ? s->run_len : 1000);
	key_u64(&k, s->spin_len < SPIN_EXPIRIES ? s->spin_len : SPIN_EXPIRIES);
	key_part(&k, &key);
	/* the clock only while the program may read it: a search that
	 * leaves it out restarts with it once a run reads it
	 * (session_config.key_no_clock) */
	if (!s->cfg->key_no_clock || s->time_used) {
		key_u64(&k, s->now);
		/* which early expiries a stall explains (world.h) */
		for (int i = 0; i < s->nth; i++)
			key_u64(&k, s->th[i].ran_at);
	}
	key_part(&k, &key);
	key_u64(&k, s->rng);
	key_u64(&k, (uint64_t)s->sole_bps << 32 | (uint64_t)s->live);
	key_u64(&k, (uint64_t)p->nlifted << 8 | (uint64_t)p->bps_lifted << 1 |
			    p->bps_installed);
	if (p->nlifted)
		for (size_t i = 0; i < p->nbps; i++)
			if (p->bps[i].lifted)
				key_u64(&k, p->bps[i].addr);
	key_part(&k, &key);
	if (!key_memory(&k, &key, s, p))
		return 0;
	return key ? key : 1;
}
