/*
 * Breakpoints: int3 at the entry of libc's synchronisation functions (an
 * uncontended pthread_mutex_lock makes no syscall, so without these a
 * critical section is never preempted) and at user points (atomics, racy
 * accesses, spin loops).
 *
 * They are installed at the first thread creation: before it the program
 * is single-threaded and no choice exists.  Only one thread runs at a time,
 * so stepping over a breakpoint may lift it for one instruction without any
 * other thread slipping past.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include "elf.h"
#include "session_int.h"
#include "tramp.h"

static const struct {
	const char *name;
	uint8_t fn;
} libc_fns[] = {
	{ "pthread_mutex_lock", FN_MUTEX_LOCK },
	{ "pthread_mutex_trylock", FN_MUTEX_TRYLOCK },
	{ "pthread_mutex_timedlock", FN_MUTEX_TIMEDLOCK },
	{ "pthread_mutex_clocklock", FN_MUTEX_TIMEDLOCK },
	{ "pthread_mutex_unlock", FN_MUTEX_UNLOCK },
	{ "pthread_cond_wait", FN_COND_WAIT },
	{ "pthread_cond_timedwait", FN_COND_TIMEDWAIT },
	{ "pthread_cond_clockwait", FN_COND_TIMEDWAIT },
	{ "pthread_cond_signal", FN_COND_SIGNAL },
	{ "pthread_cond_broadcast", FN_COND_BROADCAST },
	{ "pthread_rwlock_rdlock", FN_RWLOCK_RDLOCK },
	{ "pthread_rwlock_wrlock", FN_RWLOCK_WRLOCK },
	{ "pthread_rwlock_tryrdlock", FN_RWLOCK_TRYRDLOCK },
	{ "pthread_rwlock_trywrlock", FN_RWLOCK_TRYWRLOCK },
	{ "pthread_rwlock_timedrdlock", FN_RWLOCK_TIMEDRDLOCK },
	{ "pthread_rwlock_timedwrlock", FN_RWLOCK_TIMEDWRLOCK },
	{ "pthread_rwlock_unlock", FN_RWLOCK_UNLOCK },
	{ "sem_wait", FN_SEM_WAIT },
	{ "sem_trywait", FN_SEM_TRYWAIT },
	{ "sem_timedwait", FN_SEM_TIMEDWAIT },
	{ "sem_clockwait", FN_SEM_TIMEDWAIT },
	{ "sem_post", FN_SEM_POST },
	{ "pthread_barrier_wait", FN_BARRIER_WAIT },
	{ "pthread_spin_lock", FN_SPIN_LOCK },
	{ "pthread_spin_trylock", FN_SPIN_TRYLOCK },
	{ "pthread_spin_unlock", FN_SPIN_UNLOCK },
	{ "pthread_once", FN_ONCE },
	{ "pthread_create", FN_CREATE },
	{ "pthread_join", FN_JOIN },
	{ "mtx_lock", FN_MTX_LOCK },
	{ "mtx_trylock", FN_MTX_TRYLOCK },
	{ "mtx_timedlock", FN_MTX_TIMEDLOCK },
	{ "mtx_unlock", FN_MTX_UNLOCK },
	{ "cnd_wait", FN_CND_WAIT },
	{ "cnd_timedwait", FN_CND_TIMEDWAIT },
	{ "cnd_signal", FN_CND_SIGNAL },
	{ "cnd_broadcast", FN_CND_BROADCAST },
	{ "thrd_create", FN_THRD_CREATE },
	{ "thrd_join", FN_THRD_JOIN },
};

#define NFNS (sizeof(libc_fns) / sizeof(libc_fns[0]))

static int cmp_bp(const void *a, const void *b)
{
	const struct bp *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

struct bp *bp_find(struct process *p, uint64_t addr)
{
	struct bp key = { .addr = addr };

	if (!p->nbps)
		return NULL;
	return bsearch(&key, p->bps, p->nbps, sizeof(key), cmp_bp);
}

/* Decide how to execute the instruction under the int3 without stepping. */
static void classify(struct bp *b)
{
	const uint8_t *c = b->orig;

	b->emul = EMUL_STEP;
	if (emul_decode(b->orig, sizeof(b->orig), &b->ei)) {
		b->emul = EMUL_INSN;
		return;
	}
	if (c[0] >= 0x50 && c[0] <= 0x57) {
		b->emul = EMUL_PUSH;
		b->emul_reg = c[0] - 0x50;
		b->len = 1;
	} else if (c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) {
		b->emul = EMUL_PUSH;
		b->emul_reg = 8 + c[1] - 0x50;
		b->len = 2;
	} else if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e &&
		   c[3] == 0xfa) {
		b->emul = EMUL_SKIP; /* endbr64 */
		b->len = 4;
	}
}

static const struct tracer_file_cache *file_cache;

void tracer_set_file_cache(const struct tracer_file_cache *fc)
{
	file_cache = fc;
}

/* The key of an analysis of the file path: its name, size, modification
 * time and build id (ptloom's own build is the cache's part). */
static size_t file_key(const char *path, const struct stat *st,
		       uint8_t *key, size_t max)
{
	size_t n = strlen(path) + 1;
	int64_t t[3] = { (int64_t)st->st_size, (int64_t)st->st_mtim.tv_sec,
			 (int64_t)st->st_mtim.tv_nsec };
	uint8_t id[64];
	int nid = elf_build_id(path, id, sizeof(id));

	/* not an ELF file (a locale's data): its analysis fails at once,
	 * nothing worth keeping */
	if (nid == -EINVAL || n + sizeof(t) + sizeof(id) > max)
		return 0;
	memcpy(key, path, n);
	memcpy(key + n, t, sizeof(t));
	n += sizeof(t);
	if (nid > 0) {
		memcpy(key + n, id, (size_t)nid);
		n += (size_t)nid;
	}
	return n;
}

static bool bool_byte(const bool *b)
{
	uint8_t v;

	memcpy(&v, b, 1);
	return v <= 1;
}

/* An instruction read back from the file cache holds nothing the sweep
 * could not have made (the cache checks its own sum). */
static bool insn_sane(const struct insn_info *in)
{
	const bool *flags[] = { &in->is_atomic,	   &in->is_tsc,
				&in->is_rand,	   &in->mem_read,
				&in->mem_write,	   &in->rip_relative,
				&in->stack_relative, &in->tls,
				&in->vsib,	   &in->is_call,
				&in->is_ret,	   &in->is_jump,
				&in->is_string_op, &in->has_rep,
				&in->repne,
				&in->is_push_reg,  &in->reads_constant };

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!bool_byte(flags[i]))
			return false;
	if (!in->len || in->len > 15 || in->nmem > 2 || in->move_len > 20 ||
	    (in->memfn >= DISASM_MEMFN_COUNT &&
	     (in->memfn < DISASM_MEMFN_STATE ||
	      in->memfn >= DISASM_MEMFN_STATE + 2 * DISASM_STATE_COUNT) &&
	     (in->memfn < DISASM_MEMFN_OMP ||
	      in->memfn >= DISASM_MEMFN_OMP + DISASM_OMP_COUNT)) ||
	    in->push_reg < 0 || in->push_reg >= DISASM_REG_MAX)
		return false;
	for (int k = 0; k < 2; k++) {
		const struct disasm_mem *m = &in->mem[k];

		if (m->seg > DISASM_SEG_GS || m->base >= DISASM_REG_MAX ||
		    m->index >= DISASM_REG_MAX || m->scale > 8 ||
		    (m->scale & (m->scale - 1)) || !bool_byte(&m->read) ||
		    !bool_byte(&m->write) || !bool_byte(&m->addr32))
			return false;
	}
	return true;
}

struct scan_head {
	uint64_t n, min_vaddr, nfuncs, bytes;
	uint8_t pie, has_symtab, pad[6];
};

/* Wall-clock and CPU seconds of scan_elf so far (bp_analysis_seconds). */
static double scan_wall, scan_cpu;

void bp_analysis_seconds(double *wall, double *cpu)
{
	*wall = scan_wall;
	*cpu = scan_cpu;
}

static int scan_elf_timed(const char *path, int mode, struct insn_info **out,
			  struct disasm_elf_info *info);

/* scan_elf_timed, its time counted: the sweep of node's executable (1.2
 * million memory instructions, 96 MB) is 5-8 s of capstone in a run
 * without the file cache's entry, which is ptloom's work and not the
 * program's (world.c session_absorb_analysis). */
static int scan_elf(const char *path, int mode, struct insn_info **out,
		    struct disasm_elf_info *info)
{
	double w = now_seconds(), c = self_cpu_seconds();
	int n = scan_elf_timed(path, mode, out, info);

	scan_wall += now_seconds() - w;
	scan_cpu += self_cpu_seconds() - c;
	return n;
}

/* disasm_scan_elf(path, mode), kept in the file cache: the sweep of a
 * Rust or Go executable is 50-110 ms of capstone at each ptloom
 * process's first run. */
static int scan_elf_timed(const char *path, int mode, struct insn_info **out,
			  struct disasm_elf_info *info)
{
	struct stat st;
	uint8_t key[4096 + 128];
	size_t keylen = 0, len = 0;
	char kind[32];
	struct scan_head h;

	snprintf(kind, sizeof(kind), "scan%d", mode);
	if (file_cache && !stat(path, &st))
		keylen = file_key(path, &st, key, sizeof(key));
	uint8_t *b = keylen ? file_cache->load(kind, path, key, keylen, &len)
			    : NULL;

	if (b && len >= sizeof(h)) {
		memcpy(&h, b, sizeof(h));
		struct insn_info *v =
			h.n <= (uint64_t)INT32_MAX &&
					len == sizeof(h) + h.n * sizeof(*v) &&
					h.pie <= 1 && h.has_symtab <= 1
				? malloc(h.n ? h.n * sizeof(*v) : 1)
				: NULL;
		bool ok = v != NULL;

		if (v)
			memcpy(v, b + sizeof(h), h.n * sizeof(*v));
		for (uint64_t i = 0; ok && i < h.n; i++)
			ok = insn_sane(&v[i]);
		free(b);
		if (ok) {
			*info = (struct disasm_elf_info){
				.pie = h.pie,
				.has_symtab = h.has_symtab,
				.min_vaddr = h.min_vaddr,
				.nfuncs = h.nfuncs,
				.bytes = h.bytes,
			};
			*out = v;
			return (int)h.n;
		}
		free(v);
	} else {
		free(b);
	}
	int n = disasm_scan_elf(path, mode, out, info);

	if (n < 0 || !keylen)
		return n;
	h = (struct scan_head){ (uint64_t)n, info->min_vaddr, info->nfuncs,
				info->bytes, info->pie, info->has_symtab, { 0 } };
	len = sizeof(h) + (size_t)n * sizeof(**out);
	if ((b = malloc(len))) {
		memcpy(b, &h, sizeof(h));
		if (n)
			memcpy(b + sizeof(h), *out, (size_t)n * sizeof(**out));
		file_cache->store(kind, path, key, keylen, b, len);
		free(b);
	}
	return n;
}

/* The rdtsc, rdtscp, rdrand and rdseed of a file, swept (or read from
 * the file cache) once per ptloom process: every exec of every run asks. */
#define TSC_SCANS 64
static struct tsc_scan {
	char path[4096];
	struct insn_info *insns;
	int n;
	struct disasm_elf_info info;
} tsc_scans[TSC_SCANS];
static int ntsc_scans;

int bp_scan_tsc(const char *path, const struct insn_info **out,
		struct disasm_elf_info *info)
{
	struct tsc_scan *c = NULL;

	for (int i = 0; i < ntsc_scans && !c; i++)
		if (!strcmp(tsc_scans[i].path, path))
			c = &tsc_scans[i];
	if (!c && ntsc_scans < TSC_SCANS) {
		c = &tsc_scans[ntsc_scans++];
		snprintf(c->path, sizeof(c->path), "%s", path);
		c->n = scan_elf(path, DISASM_TSC, &c->insns, &c->info);
		if (c->n < 0) {
			c->n = 0;
			c->insns = NULL;
		}
	}
	if (!c) {
		*out = NULL;
		return 0;
	}
	*out = c->insns;
	*info = c->info;
	return c->n;
}

/*
 * The start of the first mapping (file offset 0) of a file in
 * /proc/PID/maps: the file named exactly `exact`, or libc when it is NULL.
 */
static int find_mapping(pid_t pid, const char *exact, char *path, size_t len,
			uint64_t *start)
{
	char name[64], line[4096];

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	FILE *f = fopen(name, "re");

	if (!f)
		return -errno;
	int r = -ENOENT;

	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2)
			continue;
		p[strcspn(p, "\n")] = 0;
		const char *base = strrchr(p, '/') + 1;

		if (exact ? strcmp(p, exact) != 0
			  : strncmp(base, "libc.so", 7) &&
				    strncmp(base, "libc-", 5))
			continue;
		if (!exact && off != 0)
			continue;
		snprintf(path, len, "%s", p);
		*start = lo;
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

uint64_t session_object_start_in(struct session *s, int proc,
				 const char *path)
{
	char found[4096];
	uint64_t at = 0;

	if (proc < 0 || proc >= s->nprocs || s->procs[proc]->dead)
		return 0;
	struct process *p = s->procs[proc];

	/* the policy's object stays mapped while its points are in it */
	if (p->policy_at && p->bps_installed && p->pimg && p->pimg->object &&
	    !strcmp(path, p->pimg->object))
		return p->policy_at;
	if (find_mapping(p->pid, path, found, sizeof(found), &at))
		return 0;
	return at;
}

uint64_t session_object_start(struct session *s, const char *path)
{
	return session_object_start_in(s, 0, path);
}

static int add_bp(struct process *s, size_t *cap, uint64_t addr,
		  uint8_t kind, uint8_t fn)
{
	if (s->nbps == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct bp *n = realloc(s->bps, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->bps = n;
		*cap = nc;
	}
	struct bp *b = &s->bps[s->nbps];

	memset(b, 0, sizeof(*b));
	b->addr = addr;
	b->kind = kind;
	b->fn = fn;
	s->nbps++; /* its bytes are read by arm_bps */
	return 0;
}

/*
 * Breakpoints by the thousand (race discovery plants one on every memory
 * access of the executable: millions in a large program) cost a syscall
 * each when written one by one.  Sorted breakpoints less than a page apart
 * are read and written as one span instead: every page of a span holds a
 * breakpoint, so no page is copied that single writes would not copy.
 */
#define SPAN_GAP 4096
#define SPAN_MAX (256 * 1024)

/* one span's bytes (and the last breakpoint's original bytes after it) */
static uint8_t span_buf[SPAN_MAX + sizeof(((struct bp *)0)->orig)];

/* The end of the span that starts at bps[i]: the breakpoints after it
 * that want selects (all when NULL), each less than a page from the one
 * before. */
static size_t span_end(const struct bp *bps, size_t i, size_t n,
		       bool (*want)(const struct bp *))
{
	size_t j = i + 1;

	while (j < n && bps[j].addr - bps[j - 1].addr < SPAN_GAP &&
	       bps[j].addr - bps[i].addr < SPAN_MAX &&
	       (!want || want(&bps[j])))
		j++;
	return j;
}

/* How many bytes at its address a breakpoint replaces: its int3's or
 * its jump's. */
static size_t bp_len(const struct bp *b)
{
	return b->tramp ? b->plen : 1;
}

/* The bytes a breakpoint puts at its address (arm) or takes back: its
 * int3 or jump, its original bytes.  Their length. */
static size_t bp_bytes(const struct bp *b, bool arm, uint8_t *out)
{
	if (arm && b->tramp && b->by_int3) {
		out[0] = 0xcc; /* the rest of the jump is never run */
		return 1;
	}
	if (arm && b->tramp)
		/* an access slot's way in is its stub (TRAMP_ASTUB) */
		tramp_jump(b->addr, b->access ? b->tramp + TRAMP_ASTUB
					      : b->tramp,
			   out);
	else if (arm)
		out[0] = 0xcc;
	else
		memcpy(out, b->orig, bp_len(b));
	return bp_len(b);
}

/* The original bytes back (the int3 or jump when arm) at every breakpoint
 * of bps[0..n) that want selects (all when NULL), through memfd: 0, or
 * -EIO if one could not be written (the others are written still). */
static int patch_bps(int memfd, const struct bp *bps, size_t n,
		     bool (*want)(const struct bp *), bool arm)
{
	uint8_t *buf = span_buf, one[16];
	int r = 0;

	for (size_t i = 0; i < n;) {
		while (i < n && want && !want(&bps[i]))
			i++; /* the first selected */
		if (i == n)
			break;
		size_t e = span_end(bps, i, n, want);
		uint64_t lo = bps[i].addr;
		size_t len = bps[e - 1].addr - lo + bp_len(&bps[e - 1]);

		if (e - i > 1 && pread(memfd, buf, len, (off_t)lo) ==
					 (ssize_t)len) {
			for (size_t m = i; m < e; m++)
				bp_bytes(&bps[m], arm, buf + (bps[m].addr - lo));
			if (pwrite(memfd, buf, len, (off_t)lo) ==
			    (ssize_t)len) {
				i = e;
				continue;
			}
		}
		for (size_t m = i; m < e; m++) {
			size_t k = bp_bytes(&bps[m], arm, one);

			if (pwrite(memfd, one, k, (off_t)bps[m].addr) !=
			    (ssize_t)k)
				r = -EIO;
		}
		i = e;
	}
	return r;
}

/* A thread of ss in p stands inside [lo, hi) (past lo): the bytes there
 * cannot be replaced by a jump (breakpoints armed again after a lift,
 * while threads of the process are stopped anywhere). */
static bool thread_inside(struct session *ss, struct process *p, uint64_t lo,
			  uint64_t hi)
{
	for (int i = 0; ss && i < ss->nth; i++) {
		struct thread *t = &ss->th[i];

		if (t->p != p || t->st == SCHED_DEAD || t->starting ||
		    regs_get(t))
			continue;
		if (t->regs.rip > lo && t->regs.rip < hi)
			return true;
	}
	return false;
}

/* the region's units a futex slot takes */
#define FUNITS (TRAMP_FSLOT / TRAMP_SLOT)

/* The first breakpoint at or after addr (bps are sorted), or NULL. */
static struct bp *bp_at_or_after(struct process *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nbps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->bps[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nbps ? &s->bps[lo] : NULL;
}

bool bp_near(struct process *p, uint64_t lo, uint64_t hi)
{
	struct bp *b = bp_at_or_after(p, lo > 15 ? lo - 15 : 0);

	return b && b->addr < hi;
}

/* glibc's `mov` of that kind (TRAMP_FUTEX_*) back at site, through fd
 * (a /proc/PID/mem) or, with fd < 0, p's memory. */
static void futex_site_restore(struct process *p, int fd, uint64_t site,
			       int kind)
{
	const uint8_t *mov = tramp_futex_moved[kind < TRAMP_FUTEX_KINDS ? kind
									 : 0];

	if (fd >= 0)
		(void)!pwrite(fd, mov, 5, (off_t)site);
	else
		mem_write(p, site, mov, 5);
}

/* Trampolines for the libc calls whose entries can move (tracer/tramp.c),
 * into s's code region, written in one piece (if they cannot be written,
 * every breakpoint stays an int3). */
static void place_tramps(struct session *ss, struct process *s)
{
	const uint64_t *fs = s->libc_fsites;
	const uint8_t *fk = s->libc_fkinds;
	int nfs = fs && fk ? s->libc_nfsites : 0;
	uint64_t bias = s->libc_bias;

	static uint8_t region[AGENT_TRAMPS * TRAMP_SLOT];
	uint64_t had[AGENT_TRAMPS];
	uint8_t hadk[AGENT_TRAMPS];
	int n = 0, nhad = 0;

	/* the futex sites the last placement jumped from (their slots
	 * change now) */
	for (int i = 0; i < s->ntramp; i++)
		if (s->tslot[i].futex && !s->tslot[i].second &&
		    s->tslot[i].site) {
			hadk[nhad] = s->tslot[i].fkind;
			had[nhad++] = s->tslot[i].site;
		}
	s->ntramp = 0;
	for (size_t i = 0; i < s->nbps; i++) {
		struct bp *b = &s->bps[i];
		const struct tramp_plan *pl = b->plan;

		b->plan = NULL;
		b->tramp = 0;
		b->plen = 0;
		b->access = b->by_int3 = false;
		/* (an rwlock's read side is looked at in memory at its
		 * point, world.c rwlock_readers: no trampoline) */
		/* (race discovery's free and realloc: tramp_emit_free) */
		bool fr = b->freeing && b->observe && b->kind == OP_ACCESS;

		if (!pl || !pl->ok || !s->ag_code || !s->ag_page ||
		    (!fr && (b->kind != OP_CALL || b->observe)) || b->policy ||
		    b->shm_only || b->shm_alone ||
		    b->fn == FN_RWLOCK_RDLOCK || b->fn == FN_RWLOCK_UNLOCK ||
		    n == AGENT_TRAMPS ||
		    /* the bytes are the file's (nobody else patched them) */
		    memcmp(b->orig, pl->bytes, pl->len) ||
		    /* no other breakpoint under the jump */
		    (i + 1 < s->nbps && s->bps[i + 1].addr < b->addr + pl->len) ||
		    thread_inside(ss, s, b->addr, b->addr + pl->len))
			continue;
		uint64_t slot = s->ag_code + (uint64_t)n * TRAMP_SLOT;

		if (!(fr ? tramp_emit_free : tramp_emit)(
			    pl, b->addr, slot, (uint32_t)n, s->ag_page,
			    region + (size_t)n * TRAMP_SLOT))
			continue;
		b->tramp = slot;
		b->plen = pl->len;
		s->tslot[n] = (struct tramp_slot){
			.site = b->addr,
			.passive = !fr && (call_fn_passive(b->fn) ||
					   b->fn == FN_SPIN_LOCK),
			.freeing = fr,
		};
		n++;
	}
	int ncall = n;
	uint64_t fsite[AGENT_TRAMPS];
	int nf = 0;

	/* glibc's futex wakes (tramp.h): the `mov` of each whose bytes are
	 * the file's or our jump, no breakpoint or stopped thread inside */
	for (int i = 0; s->ag_code && s->ag_page && i < nfs &&
			n + FUNITS <= AGENT_TRAMPS;
	     i++) {
		uint64_t site = bias + fs[i], slot;
		int kind = fk[i] < TRAMP_FUTEX_KINDS ? fk[i] : 0;
		uint8_t cur[TRAMP_FUTEX_LEN];
		/* (a breakpoint's moved or emulated bytes reach 16 on) */
		struct bp *b = bp_at_or_after(s, site - 16);

		if ((b && b->addr < site + TRAMP_FUTEX_LEN) ||
		    mem_read(s, site, cur, sizeof(cur)))
			continue;
		if (cur[0] == 0xe9) /* our jump: the mov is under it */
			memcpy(cur, tramp_futex_moved[kind], 5);
		if (!tramp_futex_site_at(cur, kind) ||
		    thread_inside(ss, s, site, site + 5))
			continue;
		slot = s->ag_code + (uint64_t)n * TRAMP_SLOT;
		if (!tramp_emit_futex(site, kind, slot, (uint32_t)n,
				      s->ag_page,
				      region + (size_t)n * TRAMP_SLOT))
			continue;
		for (int k = 0; k < FUNITS; k++)
			s->tslot[n + k] =
				(struct tramp_slot){ .site = site,
						     .futex = true,
						     .second = k > 0,
						     .fkind = (uint8_t)kind };
		fsite[nf++] = site;
		n += FUNITS;
	}
	if (n && mem_write(s, s->ag_code, region, (size_t)n * TRAMP_SLOT)) {
		for (size_t i = 0; i < s->nbps; i++)
			s->bps[i].tramp = 0;
		n = ncall = nf = 0;
	}
	/* the jumps: new ones, and the original bytes where a jump is no
	 * longer wanted */
	for (int i = 0; i < nhad; i++) {
		bool keep = false;

		for (int k = 0; k < nf && !keep; k++)
			keep = fsite[k] == had[i];
		if (!keep)
			futex_site_restore(s, -1, had[i], hadk[i]);
	}
	for (int i = ncall, k = 0; i < n; i += FUNITS, k++) {
		uint8_t j[5];

		tramp_jump(fsite[k], s->ag_code + (uint64_t)i * TRAMP_SLOT, j);
		if (mem_write(s, fsite[k], j, sizeof(j))) {
			/* its slot stays unused (the table says stop) */
			for (int u = 0; u < FUNITS; u++)
				s->tslot[i + u].site = 0;
		}
	}
	s->ntramp = n;
}

/*
 * The last placement of access slots: every discovery run of a program
 * installs the same breakpoints at the same addresses (no ASLR), and the
 * planning decodes each of them.  Kept when no thread stood inside what a
 * slot covers (the only input but the breakpoints and the region).
 */
static struct acc_cache {
	uint64_t key, near, page2;
	size_t nbps, cap, n;
	struct acc_out {
		uint64_t tramp;
		uint8_t plen;
		bool access, multi;
	} *out;
	uint8_t *buf;
} acc_cache;

static uint64_t acc_key(const struct process *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < s->nbps; i++) {
		const struct bp *b = &s->bps[i];
		uint64_t w[4] = { b->addr,
				  (uint64_t)b->observe | (uint64_t)b->sync << 1 |
					  (uint64_t)b->freeing << 2 |
					  (uint64_t)(b->policy != 0) << 3 |
					  (uint64_t)b->move << 8,
				  0, 0 };

		memcpy(&w[2], b->orig, 16);
		for (int k = 0; k < 4; k++)
			h = (h ^ w[k]) * 0x100000001b3ull;
	}
	return h;
}

/* Race discovery's access slots (tracer/tramp.c): an observation point
 * on an instruction of 5 bytes or more moves into a slot of s's near
 * region, written in one piece (if it cannot be, every point stays an
 * int3). */
static void place_access(struct session *ss, struct process *s)
{
	size_t cap = agent_near_access_len(s) / TRAMP_ASLOT, n = 0;
	uint8_t *buf;
	uint64_t key;
	bool keep = true;

	s->nacc = 0;
	s->acc_int3 = false;
	/* (none for a process whose points came with a file mapped apart:
	 * int3s, as without the agent, process.install_apart) */
	if (!cap || !s->ag_page2 || s->install_apart)
		return;
	key = acc_key(s);
	struct acc_cache *c = &acc_cache;

	if (c->out && c->key == key && c->near == s->ag_near &&
	    c->page2 == s->ag_page2 && c->nbps == s->nbps && c->cap == cap) {
		for (size_t i = 0; i < s->nbps; i++) {
			s->bps[i].tramp = c->out[i].tramp;
			s->bps[i].plen = c->out[i].plen;
			s->bps[i].access = c->out[i].access;
			s->bps[i].multi = c->out[i].multi;
		}
		n = c->n;
		buf = c->buf;
		goto write;
	}
	if (!(buf = malloc(cap * TRAMP_ASLOT)))
		return;
	for (size_t i = 0; i < s->nbps && n < cap; i++) {
		struct bp *b = &s->bps[i];
		struct insn_info ii;
		struct tramp_plan pl;
		uint64_t slot = s->ag_near + n * TRAMP_ASLOT;

		b->multi = false;
		if (!b->observe || b->sync || b->freeing || b->policy ||
		    disasm_decode(b->orig, sizeof(b->orig), b->addr, &ii) ||
		    (ii.len < 5 && b->move < 5) || !ii.nmem ||
		    ii.is_string_op || ii.vsib || ii.tls || ii.is_call ||
		    ii.is_jump || ii.is_ret ||
		    !(ii.len >= 5 ? tramp_plan_one(b->orig, sizeof(b->orig),
						   b->addr, &pl)
				  : tramp_plan_span(b->orig, sizeof(b->orig),
						    b->addr, b->move, &pl)) ||
		    /* no other breakpoint under the jump */
		    (i + 1 < s->nbps && s->bps[i + 1].addr < b->addr + pl.len) ||
		    /* nobody stands inside what it covers */
		    (pl.n > 1 &&
		     thread_inside(ss, s, b->addr, b->addr + pl.len) &&
		     !(keep = false)) || /* (and the plan is not kept) */
		    !tramp_emit_access(&pl, &ii.mem[0], b->addr, slot,
				       s->ag_page2, buf + n * TRAMP_ASLOT))
			continue;
		b->tramp = slot;
		b->plen = pl.len;
		b->access = true;
		b->multi = pl.n > 1;
		n++;
	}
	struct acc_out *o = keep ? malloc(s->nbps * sizeof(*o)) : NULL;

	free(c->out);
	free(c->buf);
	*c = (struct acc_cache){ 0 };
	if (o) {
		for (size_t i = 0; i < s->nbps; i++)
			o[i] = (struct acc_out){ s->bps[i].tramp,
						 s->bps[i].plen,
						 s->bps[i].access,
						 s->bps[i].multi };
		*c = (struct acc_cache){ key,	  s->ag_near, s->ag_page2,
					 s->nbps, cap,	      n,
					 o,	  buf };
	}
write:
	if (n && mem_write(s, s->ag_near, buf, n * TRAMP_ASLOT)) {
		for (size_t i = 0; i < s->nbps; i++)
			if (s->bps[i].access) {
				s->bps[i].tramp = 0;
				s->bps[i].plen = 0;
				s->bps[i].access = false;
			}
		n = 0;
	}
	if (buf != c->buf)
		free(buf);
	s->nacc = (int)n;
}

void bp_access_int3(struct process *p)
{
	for (size_t i = 0; i < p->nbps; i++) {
		struct bp *b = &p->bps[i];

		if (!b->access || b->by_int3)
			continue;
		b->by_int3 = true;
		/* armed again, as an int3 now (a jump over several
		 * instructions stays while sampled out: it becomes the
		 * int3 too) */
		if (b->multi || (!b->lifted && !b->retired && !b->dormant))
			bp_put(p, b, true);
	}
	p->acc_int3 = true;
}

bool bp_would_step(const struct bp *b, uint64_t ea)
{
	switch (b->emul) {
	case EMUL_PUSH:
	case EMUL_SKIP:
		return false;
	case EMUL_INSN:
		/* bp_step_over: across pages, the CPU's */
		return (emul_reads(&b->ei) || emul_writes(&b->ei)) &&
		       (ea & 4095) + b->ei.size > 4096;
	default:
		return true;
	}
}

/* Read every breakpoint's original bytes, then write its int3 (or its
 * jump to a trampoline); a breakpoint whose bytes cannot be read is
 * dropped.  0 or -errno. */
static int arm_bps(struct session *ss, struct process *s)
{
	uint8_t *buf = span_buf;
	size_t k = 0;

	/* an rdtsc's slot whose moved bytes a breakpoint's would meet goes
	 * back to its int3 first (tsc.c) */
	for (int i = 0; i < s->tsc.n && s->tsc.nslot; i++)
		if (s->tsc.slot[i] &&
		    bp_near(s, s->tsc.site[i],
			    s->tsc.site[i] + s->tsc.mlen[i]))
			tsc_unslot(s, s->tsc.site[i], s->tsc.site[i] + 1);
	for (size_t i = 0; i < s->nbps;) {
		size_t j = span_end(s->bps, i, s->nbps, NULL);
		uint64_t lo = s->bps[i].addr;
		size_t len = s->bps[j - 1].addr - lo + sizeof(span_buf) -
			     SPAN_MAX;
		bool whole = j - i > 1 && mem_read(s, lo, buf, len) == 0;

		for (size_t m = i; m < j; m++) {
			struct bp *b = &s->bps[m];

			if (whole)
				memcpy(b->orig, buf + (b->addr - lo),
				       sizeof(b->orig));
			else if (mem_read(s, b->addr, b->orig,
					  sizeof(b->orig)))
				continue;
			classify(b);
			s->bps[k++] = *b;
		}
		i = j;
	}
	s->nbps = k;
	place_tramps(ss, s);
	place_access(ss, s);
	return patch_bps(s->memfd, s->bps, s->nbps, NULL, true) ? -EFAULT : 0;
}

/* The program's own executable: path and load address, from the maps. */
static int find_exe(pid_t pid, char *path, size_t len, uint64_t *start)
{
	char name[64], exe[4096];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/exe", pid);
	n = readlink(name, exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	return find_mapping(pid, exe, path, len, start);
}

/* Instructions of the executable, scanned once per ptloom process. */
static struct scan_cache {
	char path[4096];
	int mode;
	struct insn_info *insns;
	int n;
	uint64_t min_vaddr;
	bool pie;
} scans[3];

/* mode: DISASM_ATOMICS, DISASM_MEMORY or, with the stack-relative
 * accesses too, DISASM_MEMORY | DISASM_STACK (each its own cache) */
static struct scan_cache *scan_exe(const char *path, int mode)
{
	struct scan_cache *c =
		&scans[(mode & DISASM_STACK) ? 2 : mode == DISASM_MEMORY];
	struct disasm_elf_info info;

	if (c->n >= 0 && c->mode == mode && !strcmp(c->path, path) && c->insns)
		return c;
	free(c->insns);
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	snprintf(c->path, sizeof(c->path), "%s", path);
	struct scan_cache *m = &scans[1];

	if (mode == DISASM_ATOMICS && m->mode == DISASM_MEMORY && m->insns &&
	    !strcmp(m->path, path)) {
		/* race discovery swept the file: its atomics are those
		 * (both sweeps find the same instruction boundaries) */
		c->insns = malloc((m->n ? m->n : 1) * sizeof(*c->insns));
		for (int i = 0; c->insns && i < m->n; i++)
			if (m->insns[i].is_atomic)
				c->insns[c->n++] = m->insns[i];
		if (c->insns) {
			c->min_vaddr = m->min_vaddr;
			c->pie = m->pie;
			return c;
		}
	}
	c->n = scan_elf(path, mode, &c->insns, &info);
	if (c->n < 0) {
		c->n = 0;
		c->insns = NULL;
		return c;
	}
	c->min_vaddr = info.min_vaddr;
	c->pie = info.pie;
	return c;
}

/* Atomic instructions of the shared objects, scanned once per ptloom
 * process (race discovery). */
#define LIB_SCANS 64
static struct lib_scan {
	char path[4096];
	struct insn_info *insns;
	int n;
	uint64_t min_vaddr;
} lib_scans[LIB_SCANS];
static int nlib_scans;

static struct lib_scan *scan_lib(const char *path)
{
	struct disasm_elf_info info;
	struct lib_scan *c;

	for (int i = 0; i < nlib_scans; i++)
		if (!strcmp(lib_scans[i].path, path))
			return &lib_scans[i];
	if (nlib_scans == LIB_SCANS)
		return NULL;
	c = &lib_scans[nlib_scans++];
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->n = scan_elf(path, DISASM_ATOMICS, &c->insns, &info);
	if (c->n < 0) {
		c->n = 0;
		c->insns = NULL;
	}
	c->min_vaddr = info.min_vaddr;
	return c;
}

/*
 * A shared object of the program's own: one outside the system's library
 * directories (a library its build made, found through its RPATH or
 * LD_LIBRARY_PATH; a plugin it loaded), and no toolchain runtime.  Its
 * code is the program's: race discovery observes its accesses and its
 * atomics are points, as the executable's (add_program_objects); the
 * system's libraries are seen at their calls.
 */
static bool program_object(const char *path, const char *exe)
{
	static const char *const sys[] = {
		"/lib/",     "/lib32/",	    "/lib64/",	      "/libx32/",
		"/usr/lib/", "/usr/lib32/", "/usr/lib64/",    "/usr/libx32/",
		"/usr/libexec/",
	};

	/* the toolchain's runtimes, wherever they were installed (a
	 * glibc of its own under /opt, a Nix store) */
	static const char *const runtimes[] = {
		"libc.so",     "libc-",	      "ld-",	     "ld64.so",
		"libpthread",  "libm.so",     "libm-",	     "libdl.",
		"libdl-",      "librt.",      "librt-",	     "libresolv",
		"libgcc_s",    "libstdc++",   "libc++",	     "libatomic",
		"libglib-2.0", "libgomp",     "libasan",     "libtsan",
		"libubsan",    "liblsan",     "libhwasan",
	};
	const char *base = strrchr(path, '/');

	if (path[0] != '/' || !strcmp(path, exe) ||
	    strstr(path, " (deleted)") || !strncmp(path, "/memfd:", 7) ||
	    !strncmp(path, "/dev/", 5))
		return false;
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		if (!strncmp(path, sys[i], strlen(sys[i])))
			return false;
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (!strncmp(base, runtimes[i], strlen(runtimes[i])))
			return false;
	return true;
}

/*
 * Every shared object but libc and the loader.  What libc promises to
 * synchronise is seen at its calls (libc_fns); its internal atomics order
 * more than POSIX does (the thread count a thread's exit decrements and
 * the next pthread_create increments would order every exited thread
 * before every later one: races hidden), and the one thing they carry
 * that matters, a heap block one thread freed and another gets, is
 * modelled at free() instead (add_free_hooks).
 */
static bool lib_observed(const char *path, const char *exe)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strcmp(path, exe) && strncmp(base, "ld-", 3) &&
	       strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5) &&
	       !strstr(path, " (deleted)") && !program_object(path, exe);
}

/* libc's free and realloc, looked up once per ptloom process, with the
 * plans of their slots (tramp_emit_free) */
static struct {
	char path[4096];
	uint64_t vals[3], more[8];
	int idx[8], nmore;
	bool ok;
	struct tramp_plan plans[11];
} frees;

static void plan_free_one(void *ctx, int i, const uint8_t *code, size_t size)
{
	(void)ctx;
	if (i >= 0 && i < 11)
		tramp_plan(code, size, i < 3 ? frees.vals[i] : frees.more[i - 3],
			   &frees.plans[i]);
}

static void plan_tmbuf(void *ctx, int i, const uint8_t *code, size_t size)
{
	uint64_t *at = ctx;

	/* gmtime: `lea _tmbuf(%rip), %rdx` among its first instructions
	 * (glibc's gmtime and localtime pass it to __tz_convert) */
	for (size_t k = 0; i == 0 && k + 7 <= size && k < 24; k++)
		if (code[k] == 0x48 && code[k + 1] == 0x8d &&
		    code[k + 2] == 0x15) {
			int32_t disp;

			memcpy(&disp, code + k + 3, 4);
			*at += k + 7 + (uint64_t)(int64_t)disp;
			return;
		}
	*at = 0;
}

/* libc's static struct tm that localtime and gmtime return (at path's
 * link-time addresses, 0: not found), once per ptloom process: the
 * program's reads of what they return race with the next call's writes
 * (ranged_ranges) */
static uint64_t libc_tmbuf(const char *path)
{
	static char known[4096];
	static uint64_t tmbuf;
	static const char *const names[] = { "gmtime" };

	if (!strcmp(known, path))
		return tmbuf;
	snprintf(known, sizeof(known), "%s", path);
	tmbuf = 0;
	uint64_t v = 0, more[4];
	int idx[4], nmore = 4;

	if (elf_symbols_lookup(path, names, 1, &v, more, idx, &nmore) ||
	    !v)
		return 0;
	tmbuf = v;
	if (elf_functions_code(path, &v, 1, plan_tmbuf, &tmbuf) ||
	    tmbuf == v)
		tmbuf = 0;
	return tmbuf;
}

/* A synchronisation-only observation point of race discovery at addr (a
 * shared object's atomic, free, an OpenMP runtime's order), or NULL */
static struct bp *add_sync_observer(struct process *s, size_t *cap,
				    uint64_t addr)
{
	if (add_bp(s, cap, addr, OP_ACCESS, 0))
		return NULL;
	s->bps[s->nbps - 1].observe = true;
	s->bps[s->nbps - 1].sync = true;
	return &s->bps[s->nbps - 1];
}

/*
 * Race discovery: free() and realloc() in libc are observation points
 * too: the block they are given is forgotten by the race detector
 * (SYNC_FREE), so that the next owner of its memory does not race with
 * the last one (malloc hands a block one thread freed to another through
 * its own atomics, which are not observed).
 */
static void add_free_hooks(struct process *s, size_t *cap)
{
	static const char *const names[] = { "free", "realloc", "cfree" };
	char path[4096];
	uint64_t start = 0, first = 0;

	if (find_mapping(s->pid, NULL, path, sizeof(path), &start) ||
	    elf_first_vaddr(path, &first))
		return;
	uint64_t tm = libc_tmbuf(path);

	s->rt.tmbuf = tm ? start - first + tm : 0;
	if (strcmp(frees.path, path)) {
		memset(&frees, 0, sizeof(frees));
		snprintf(frees.path, sizeof(frees.path), "%s", path);
		frees.nmore = 8;
		frees.ok = elf_symbols_lookup(path, names, 3, frees.vals,
					      frees.more, frees.idx,
					      &frees.nmore) == 0;
		if (frees.ok) {
			uint64_t all[11];

			memcpy(all, frees.vals, sizeof(frees.vals));
			memcpy(all + 3, frees.more,
			       (size_t)frees.nmore * sizeof(*all));
			elf_functions_code(path, all, 3 + frees.nmore,
					   plan_free_one, NULL);
		}
	}
	if (!frees.ok)
		return;
	for (int i = 0; i < 3 + frees.nmore; i++) {
		uint64_t v = i < 3 ? frees.vals[i] : frees.more[i - 3];
		struct bp *b = v ? add_sync_observer(s, cap, start - first + v)
				 : NULL;

		if (!b)
			continue;
		b->freeing = true;
		b->plan = &frees.plans[i];
	}
}

/*
 * Race discovery: an OpenMP runtime's synchronisation, which its own
 * atomics do not carry (enum bp_omp).  A taskwait or taskgroup end whose
 * tasks other threads have finished returns after one acquire load of a
 * count their ends stored (plain movs on x86, unobserved): at the entry of
 * libgomp's and LLVM libomp's task waits the thread acquires everyone (a
 * task that ends later ends the wait through libgomp's semaphore, whose
 * atomics are observed; libomp's spin is covered at the return,
 * add_omp_return).  LLVM libomp's fork, barriers and locks end on plain
 * loads of flags its threads store: the master's fork releases what it did
 * before, which each thread's start of the region's code acquires; a
 * thread entering a barrier releases, one leaving it acquires (at the
 * return); an unlock releases, a lock acquires (at the return), one key
 * for every lock of a process.  More happens-before than there may be,
 * never less.
 */
static const struct {
	const char *name;
	uint8_t omp;
} omp_entries[] = {
	{ "GOMP_taskwait", BP_OMP_EVERYONE },
	{ "GOMP_taskwait_depend", BP_OMP_EVERYONE },
	{ "GOMP_taskgroup_end", BP_OMP_EVERYONE },
	{ "__kmpc_omp_taskwait", BP_OMP_EVERYONE },
	{ "__kmpc_end_taskgroup", BP_OMP_EVERYONE },
	{ "__kmpc_omp_wait_deps", BP_OMP_EVERYONE },
	{ "__kmpc_fork_call", BP_OMP_RELEASE_FORK },
	{ "__kmpc_fork_teams", BP_OMP_RELEASE_FORK },
	{ "__kmp_invoke_microtask", BP_OMP_ACQUIRE_FORK },
	{ "__kmpc_barrier", BP_OMP_RELEASE_BARRIER },
	{ "__kmpc_cancel_barrier", BP_OMP_RELEASE_BARRIER },
	{ "__kmpc_copyprivate", BP_OMP_RELEASE_BARRIER },
	{ "__kmpc_end_critical", BP_OMP_RELEASE_MUTEX },
	{ "__kmpc_end_ordered", BP_OMP_RELEASE_MUTEX },
	{ "__kmpc_end_reduce", BP_OMP_RELEASE_MUTEX },
	{ "__kmpc_end_reduce_nowait", BP_OMP_RELEASE_MUTEX },
	{ "__kmpc_unset_lock", BP_OMP_RELEASE_MUTEX },
	{ "__kmpc_unset_nest_lock", BP_OMP_RELEASE_MUTEX },
	{ "omp_unset_lock", BP_OMP_RELEASE_MUTEX },
	{ "omp_unset_nest_lock", BP_OMP_RELEASE_MUTEX },
};

#define NOMP (sizeof(omp_entries) / sizeof(omp_entries[0]))

static struct omp_runtime {
	char path[4096];
	uint64_t first;
	uint64_t vals[NOMP], more[16];
	int idx[16], nmore;
	bool ok;
} omp_runtimes[4];

static void add_omp_entries(struct process *s, size_t *cap,
			    const struct mapped_file *libs, int nlibs)
{
	static int next;

	for (int i = 0; i < nlibs; i++) {
		const char *base = strrchr(libs[i].path, '/');
		struct omp_runtime *w = NULL;

		base = base ? base + 1 : libs[i].path;
		if (!libs[i].start ||
		    (strncmp(base, "libgomp", 7) && strncmp(base, "libomp", 6) &&
		     strncmp(base, "libiomp", 7)))
			continue;
		for (int k = 0; k < 4 && !w; k++)
			if (!strcmp(omp_runtimes[k].path, libs[i].path))
				w = &omp_runtimes[k];
		if (!w) {
			const char *names[NOMP];

			for (size_t k = 0; k < NOMP; k++)
				names[k] = omp_entries[k].name;
			w = &omp_runtimes[next++ % 4];
			memset(w, 0, sizeof(*w));
			snprintf(w->path, sizeof(w->path), "%s", libs[i].path);
			w->nmore = 16;
			w->ok = elf_first_vaddr(w->path, &w->first) == 0 &&
				elf_symbols_lookup(w->path, names, (int)NOMP,
						   w->vals, w->more, w->idx,
						   &w->nmore) == 0;
		}
		for (int k = 0; w->ok && k < (int)NOMP + w->nmore; k++) {
			uint64_t v = k < (int)NOMP ? w->vals[k]
						   : w->more[k - (int)NOMP];
			int e = k < (int)NOMP ? k : w->idx[k - (int)NOMP];
			uint64_t at = libs[i].start - w->first + v;
			struct bp *b = v ? add_sync_observer(s, cap, at) : NULL;

			if (b)
				b->omp = omp_entries[e].omp;
		}
	}
}

/* A call of an OpenMP runtime's wait in the program (in insn_info.memfn,
 * DISASM_MEMFN_OMP on; false for any other instruction, which is not
 * taken): when observing, the return from it, where what the thread does
 * next is ordered after what the wait waited for (add_omp_entries) */
static bool add_omp_return(struct process *s, size_t *cap,
			   const struct insn_info *in, uint64_t bias,
			   bool observe)
{
	static const uint8_t after[DISASM_OMP_COUNT] = {
		[DISASM_OMP_EVERYONE] = BP_OMP_EVERYONE,
		[DISASM_OMP_BARRIER] = BP_OMP_ACQUIRE_BARRIER,
		[DISASM_OMP_MUTEX] = BP_OMP_ACQUIRE_MUTEX,
		/* (its last barrier follows every copy) */
		[DISASM_OMP_COPYPRIVATE] = BP_OMP_EVERYONE,
	};

	struct bp *b;

	if (in->memfn < DISASM_MEMFN_OMP)
		return false;
	if (!observe)
		return true;
	/* a copyprivate's copy function runs inside it, after its
	 * barrier, and reads what the single thread wrote before */
	if (in->memfn == DISASM_MEMFN_OMP + DISASM_OMP_COPYPRIVATE &&
	    in->target && (b = add_sync_observer(s, cap, in->target + bias)))
		b->omp = BP_OMP_ACQUIRE_BARRIER;
	if ((b = add_sync_observer(s, cap, in->addr + in->len + bias)))
		b->omp = after[in->memfn - DISASM_MEMFN_OMP];
	return true;
}

/*
 * Race discovery: the atomic read-modify-writes of every shared object the
 * process has mapped (libgomp's, glib's, libstdc++'s locks, barriers and
 * reference counts: an uncontended lock is one such instruction and no
 * call ptloom knows) become synchronisation-only observation points, so
 * that the program's accesses they order are not reported as races.
 */
static void add_lib_atomics(struct process *s, size_t *cap, const char *exe,
			    const struct mapped_file *libs, int nlibs)
{
	for (int i = 0; i < nlibs; i++) {
		struct lib_scan *c;

		if (!libs[i].start || !lib_observed(libs[i].path, exe) ||
		    !(c = scan_lib(libs[i].path)))
			continue;
		for (int k = 0; k < c->n; k++)
			if (c->insns[k].is_atomic)
				add_sync_observer(s, cap,
						  libs[i].start - c->min_vaddr +
							  c->insns[k].addr);
	}
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return a && b && !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* Link-time addr is in the sorted pairs r[0..2n). */
bool ranges_contain(const uint64_t *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (addr < r[2 * m])
			hi = m;
		else if (addr >= r[2 * m + 1])
			lo = m + 1;
		else
			return true;
	}
	return false;
}

bool bp_atomic_datum(const struct process *p,
		     const struct session_config *cfg, uint64_t ea)
{
	return p->data_known && cfg->natomic_data &&
	       ranges_contain(cfg->atomic_data, cfg->natomic_data,
			 ea - p->data_bias);
}

/* The observation points in the executable's atomic operations by their
 * source (cfg->atomic_code) are atomics. */
static void mark_src_atomic(struct process *s, const struct session_config *cfg,
			    uint64_t bias, const struct scan_cache *c)
{
	if ((!cfg->natomic_code && !cfg->typed_known) || !c->n)
		return;
	uint64_t lo = c->insns[0].addr + bias,
		 hi = c->insns[c->n - 1].addr + bias + 16;

	for (size_t i = 0; i < s->nbps; i++) {
		struct bp *b = &s->bps[i];

		if (b->addr < lo || b->addr >= hi || b->sync)
			continue;
		b->src_atomic = cfg->natomic_code &&
				ranges_contain(cfg->atomic_code,
					       cfg->natomic_code,
					       b->addr - bias);
		/* ... and where nothing says whether it is one */
		b->untyped = cfg->typed_known &&
			     !ranges_contain(cfg->typed_code,
					     cfg->ntyped_code, b->addr - bias);
	}
}

/* An instruction of p's executable at addr, by the scan of that file:
 * user points recorded in another process image must never split an
 * instruction of this one. */
static bool exe_insn_at(struct process *p, uint64_t addr)
{
	char exe[4096];
	uint64_t start = 0;

	if (find_exe(p->pid, exe, sizeof(exe), &start))
		return false;
	/* a race point may be a stack-relative access (discovery observed
	 * them: observe_stack), which only the wider sweep holds */
	for (int k = 0; k < 2; k++) {
		struct scan_cache *c =
			scan_exe(exe, k ? DISASM_MEMORY | DISASM_STACK
				       : DISASM_MEMORY);
		uint64_t a = addr - (c->pie ? start - c->min_vaddr : 0);
		int lo = 0, hi = c->n - 1;

		while (lo <= hi) {
			int mid = (lo + hi) / 2;

			if (c->insns[mid].addr == a)
				return true;
			if (c->insns[mid].addr < a)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
	}
	return false;
}

/*
 * libc's synchronisation entry points, looked up once per libc file and
 * ptloom process: a lookup walks every symbol of the file, which cost more
 * than the rest of a run once runs fork from a checkpoint.
 */
static struct libc_cache {
	char path[4096];
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	int ok;			/* 0: lookup failed */
	uint64_t vals[NFNS], more[32];
	int idx[32], nmore;
	bool rwlock_known; /* struct process */
	/* how each entry moves into a trampoline (tracer/tramp.c) */
	struct tramp_plan plans[NFNS], more_plans[32];
	/* glibc's futex wakes (tramp_futex_sites), link-time addresses,
	 * and what moves at each (TRAMP_FUTEX_*) */
	uint64_t fsites[64];
	uint8_t fkinds[64];
	int nfsites;
} libc_cache;

/* ctx: the cache, with syscall()'s link-time address the one more site
 * (fsites[nfsites]) */
static void syscall_site_one(void *ctx, int i, const uint8_t *code,
			     size_t size)
{
	struct libc_cache *c = ctx;

	(void)i;
	if (c->nfsites < 64 &&
	    tramp_futex_syscall_site(code, size, c->fsites[c->nfsites],
				     &c->fsites[c->nfsites])) {
		c->fkinds[c->nfsites] = TRAMP_FUTEX_SYSCALL;
		c->nfsites++;
	}
}

static void fsites_one(void *ctx, const uint8_t *code, size_t size,
		       uint64_t vaddr, const uint64_t *starts, size_t n)
{
	struct libc_cache *c = ctx;

	c->nfsites += tramp_futex_sites(code, size, vaddr, starts, n,
					c->fsites + c->nfsites,
					64 - c->nfsites);
}

static void plan_one(void *ctx, int i, const uint8_t *code, size_t size)
{
	struct libc_cache *c = ctx;

	tramp_plan(code, size, i < (int)NFNS ? c->vals[i] : c->more[i - NFNS],
		   i < (int)NFNS ? &c->plans[i] : &c->more_plans[i - NFNS]);
}

/* What the analysis of libc found, from `ok` on: the part kept on disk */
#define LIBC_FOUND offsetof(struct libc_cache, ok)
#define LIBC_FOUND_LEN (sizeof(struct libc_cache) - LIBC_FOUND)

/* An entry read back from the file cache holds nothing a correct
 * analysis could not have made (the cache checks its own sum; this is
 * what a trampoline would be built from). */
static bool libc_found_sane(const struct libc_cache *c)
{
	if ((c->ok != 0 && c->ok != 1) || !bool_byte(&c->rwlock_known))
		return false;
	if (c->nmore < 0 || c->nmore > 32 || c->nfsites < 0 ||
	    c->nfsites > 64)
		return false;
	for (int i = 0; i < (int)NFNS + 32; i++) {
		const struct tramp_plan *p =
			i < (int)NFNS ? &c->plans[i] : &c->more_plans[i - NFNS];

		if (!bool_byte(&p->ok))
			return false;
		if (!p->ok)
			continue;
		if (p->len < 5 || p->len > sizeof(p->bytes) || !p->n ||
		    p->n > sizeof(p->insn) / sizeof(p->insn[0]))
			return false;
		for (int k = 0; k < p->n; k++)
			if (p->insn[k].off + p->insn[k].len > p->len ||
			    p->insn[k].kind > TI_JMP)
				return false;
	}
	for (int i = 0; i < c->nmore; i++)
		if (c->idx[i] < 0 || c->idx[i] >= (int)NFNS)
			return false;
	for (int i = 0; i < c->nfsites; i++)
		if (c->fkinds[i] >= TRAMP_FUTEX_KINDS)
			return false;
	return true;
}

static const struct libc_cache *libc_lookup(const char *path)
{
	struct libc_cache *c = &libc_cache;
	struct stat st;

	if (stat(path, &st))
		return NULL;
	if (c->path[0] && !strcmp(c->path, path) && c->dev == st.st_dev &&
	    c->ino == st.st_ino && c->size == st.st_size &&
	    c->mtime.tv_sec == st.st_mtim.tv_sec &&
	    c->mtime.tv_nsec == st.st_mtim.tv_nsec)
		return c->ok ? c : NULL;
	const char *names[NFNS];
	uint8_t key[4096 + 128];
	size_t keylen = file_cache ? file_key(path, &st, key, sizeof(key))
				   : 0;

	snprintf(c->path, sizeof(c->path), "%s", path);
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtime = st.st_mtim;
	size_t got;
	void *found = keylen ? file_cache->load("libc", path, key, keylen,
						&got)
			     : NULL;

	if (found && got == LIBC_FOUND_LEN) {
		memcpy((uint8_t *)c + LIBC_FOUND, found, LIBC_FOUND_LEN);
		free(found);
		if (libc_found_sane(c))
			return c->ok ? c : NULL;
		memset((uint8_t *)c + LIBC_FOUND, 0, LIBC_FOUND_LEN);
	} else {
		free(found);
	}
	for (size_t i = 0; i < NFNS; i++)
		names[i] = libc_fns[i].name;
	c->nmore = 32;
	c->ok = elf_symbols_lookup(path, names, NFNS, c->vals, c->more,
				   c->idx, &c->nmore) == 0;
	memset(c->plans, 0, sizeof(c->plans));
	memset(c->more_plans, 0, sizeof(c->more_plans));
	if (c->ok) {
		uint64_t all[NFNS + 32];

		memcpy(all, c->vals, sizeof(c->vals));
		memcpy(all + NFNS, c->more, (size_t)c->nmore * sizeof(*all));
		elf_functions_code(path, all, (int)NFNS + c->nmore, plan_one, c);
	}
	c->nfsites = 0;
	if (c->ok) {
		uint64_t v;

		elf_exec_sections(path, fsites_one, c);
		memset(c->fkinds, TRAMP_FUTEX_GLIBC, sizeof(c->fkinds));
		if (c->nfsites < 64 &&
		    elf_symbol_values(path, "syscall", &v, 1) > 0) {
			c->fsites[c->nfsites] = v;
			elf_functions_code(path, &v, 1, syscall_site_one, c);
		}
	}
	/* glibc 2.30 added pthread_rwlock_clockrdlock; its rwlock is the
	 * one of 2.25 on (musl and older glibc have another) */
	uint64_t v;

	c->rwlock_known =
		c->ok &&
		elf_symbol_values(path, "gnu_get_libc_version", &v, 1) > 0 &&
		elf_symbol_values(path, "pthread_rwlock_clockrdlock", &v, 1) > 0;
	if (keylen)
		file_cache->store("libc", path, key, keylen,
				  (const uint8_t *)c + LIBC_FOUND,
				  LIBC_FOUND_LEN);
	return c->ok ? c : NULL;
}

/* Memory instructions of the objects a policy has observed instead of the
 * executable (sched_policy.observe_object), scanned once per ptloom
 * process. */
#define OBJ_SCANS 16
static struct obj_scan {
	char path[4096];
	int mode;
	struct insn_info *insns;
	int n;
	uint64_t min_vaddr;
	bool pie;
} obj_scans[OBJ_SCANS];
static int next_obj_scan;

static struct obj_scan *scan_obj(const char *path, int mode)
{
	struct disasm_elf_info info;
	struct obj_scan *c;

	for (int i = 0; i < OBJ_SCANS; i++)
		if (obj_scans[i].path[0] && obj_scans[i].mode == mode &&
		    !strcmp(obj_scans[i].path, path))
			return &obj_scans[i];
	c = &obj_scans[next_obj_scan++ % OBJ_SCANS];
	free(c->insns);
	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->mode = mode;
	c->n = scan_elf(path, mode, &c->insns, &info);
	if (c->n < 0) {
		c->n = 0;
		c->insns = NULL;
		return c;
	}
	c->min_vaddr = info.min_vaddr;
	c->pie = info.pie;
	return c;
}

/* Observed points in the code of every mapped object the policy accepts
 * (race discovery): each file's first mapping (offset 0) gives its load
 * bias. */
static void add_object_observes(struct session *ss, struct process *s,
				size_t *cap)
{
	const struct sched_policy *pol = ss->cfg->policy;
	bool want_atomics = ss->cfg->points & POINTS_ATOMICS;
	char name[64], line[4096];

	snprintf(name, sizeof(name), "/proc/%d/maps", s->pid);
	FILE *f = fopen(name, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%lx-%*x %*s %lx", &lo, &off) != 2 ||
		    off != 0)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (!pol->observe_object(pol->ctx, p))
			continue;
		struct obj_scan *c = scan_obj(p, DISASM_MEMORY);
		uint64_t bias = c->pie ? lo - c->min_vaddr : 0;

		for (int i = 0; i < c->n; i++) {
			struct insn_info *in = &c->insns[i];
			bool atomic = want_atomics && in->is_atomic;

			/* observed, and scheduling points too: threads run
			 * such code without the interpreter's lock, and only
			 * a switch inside it makes two of them overlap */
			if (!add_bp(s, cap, in->addr + bias,
				    atomic ? OP_ATOMIC : OP_ACCESS, 0))
				s->bps[s->nbps - 1].memfn = in->memfn;
		}
	}
	fclose(f);
}

/*
 * The breakpoints of the instructions c swept, loaded at bias: its atomics
 * points when atomics, else observed with its other accesses when
 * observe, or left alone (skip_atomics: add_lib_atomics takes them as
 * synchronisation).  Reads of constant data are no access.
 */
static void add_scanned(struct process *s, size_t *cap,
			const struct obj_scan *c, uint64_t bias, bool atomics,
			bool observe, bool skip_atomics)
{
	for (int k = 0; k < c->n; k++) {
		const struct insn_info *in = &c->insns[k];
		bool point = atomics && in->is_atomic;

		if (add_omp_return(s, cap, in, bias, observe))
			continue;
		if (in->is_atomic ? skip_atomics || (!point && !observe)
				  : !observe || in->reads_constant)
			continue;
		if (add_bp(s, cap, in->addr + bias,
			   point ? OP_ATOMIC : OP_ACCESS, 0))
			continue;
		struct bp *b = &s->bps[s->nbps - 1];

		b->observe = !point;
		b->move = in->move_len;
		b->stack = in->stack_relative && !in->is_atomic;
		b->memfn = in->memfn;
	}
}

/*
 * The program's own shared objects (program_object) in a process of a
 * native program: their memory instructions observed (want_observe) and
 * their atomics points (want_atomics), as the executable's.  Without them
 * a race in a library the program's build made (a CMake project's
 * libfoo.so) had no point: "PASS, complete to preemption bound 2".
 */
static void add_program_objects(struct session *ss, struct process *s,
				size_t *cap, const char *exe,
				const struct mapped_file *libs, int nlibs,
				bool want_atomics, bool want_observe)
{
	int mode = !want_observe	 ? DISASM_ATOMICS
		   : ss->cfg->observe_stack ? DISASM_MEMORY | DISASM_STACK
					    : DISASM_MEMORY;

	memset(&s->swept, 0, sizeof(s->swept));
	for (int i = 0; i < nlibs; i++) {
		if (!libs[i].start || !libs[i].exec ||
		    !program_object(libs[i].path, exe))
			continue;
		struct obj_scan *c = scan_obj(libs[i].path, mode);

		add_scanned(s, cap, c,
			    c->pie ? libs[i].start - c->min_vaddr : 0,
			    want_atomics, want_observe, false);
		if (s->swept.n < SWEPT_OBJECTS)
			s->swept.start[s->swept.n] = libs[i].start;
		s->swept.n++;
	}
	s->swept.watch = want_observe && s->swept.n <= SWEPT_OBJECTS;
}

/*
 * At p's exit_group in race discovery: the program's own objects mapped
 * since its breakpoints were installed (a plugin dlopen'ed after the first
 * thread) have had neither their accesses observed nor their atomics
 * armed; they are counted in the run (run_result.late_objects), the first
 * named.  (Arming them where they are mapped would need the breakpoint
 * set, its trampolines and the checkpoints' copies to grow mid-run.)
 */
void bp_late_objects(struct session *ss, struct process *p)
{
	char exe[4096];
	uint64_t start;
	struct mapped_file *libs = NULL;
	int nlibs;

	if (!p->swept.watch || !p->observing)
		return;
	p->swept.watch = false; /* once a process */
	if (find_exe(p->pid, exe, sizeof(exe), &start) ||
	    (nlibs = proc_mapped_files(p->pid, &libs)) < 0)
		return;
	for (int i = 0; i < nlibs; i++) {
		int k = 0;

		if (!libs[i].start || !libs[i].exec ||
		    !program_object(libs[i].path, exe))
			continue;
		while (k < p->swept.n && p->swept.start[k] != libs[i].start)
			k++;
		if (k < p->swept.n)
			continue;
		if (!ss->late_objects++) {
			const char *base = strrchr(libs[i].path, '/');

			snprintf(ss->late_object, sizeof(ss->late_object), "%s",
				 base ? base + 1 : libs[i].path);
		}
	}
	mapped_files_free(libs, nlibs);
}

/* A system library whose code works on the program's own objects: the
 * C++ standard library (libstdc++, libc++: a std::string's append, a
 * container's rebalancing are its functions, not inlined) and GLib (a
 * GHashTable's insert, a GString's append) */
static bool object_library(const char *path)
{
	static const char *const names[] = { "libstdc++.so", "libc++.so",
					     "libglib-2.0.so" };
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

/* the objects executable path holds copies of (elf_copy_objects), read
 * once per ptloom process */
static const uint64_t (*exe_copies(const char *path, int *n))[2]
{
	static struct {
		char path[4096];
		uint64_t (*v)[2];
		int n;
	} cache[4];
	static int next;

	for (int i = 0; i < 4; i++)
		if (cache[i].path[0] && !strcmp(cache[i].path, path)) {
			*n = cache[i].n;
			return (const uint64_t(*)[2])cache[i].v;
		}
	int k = next++ % 4;

	free(cache[k].v);
	snprintf(cache[k].path, sizeof(cache[k].path), "%s", path);
	cache[k].n = elf_copy_objects(path, &cache[k].v);
	if (cache[k].n < 0)
		cache[k].n = 0;
	*n = cache[k].n;
	return (const uint64_t(*)[2])cache[k].v;
}

/*
 * Race discovery in the code of the system libraries that work on the
 * program's objects (object_library): a race on a std::string two threads
 * append to, or a GHashTable two threads insert into, had no access
 * anywhere in the program's own code ("PASS, complete to bound 2").
 * Their memory instructions are observed as the executable's (their
 * atomics stay synchronisation, add_lib_atomics), but what they do to
 * their own state is not the program's: libstdc++'s locale caches and
 * the streams' fields (std::cout's width, written by every <<, in its
 * mapping or copied into the executable's bss) race by its design, and
 * would be reported and made points.  Their spans and the executable's
 * copied objects (thread.c library_internal) tell them apart.
 */
static void add_object_libraries(struct process *s, size_t *cap,
				 const char *exe, uint64_t exe_bias,
				 const struct mapped_file *libs, int nlibs)
{
	for (int i = 0; i < nlibs && s->rt.n < OBJECT_LIBS; i++) {
		uint64_t lo, hi;

		if (!libs[i].start || !libs[i].exec ||
		    !object_library(libs[i].path) ||
		    elf_load_span(libs[i].path, &lo, &hi))
			continue;
		struct obj_scan *c = scan_obj(libs[i].path, DISASM_MEMORY);
		uint64_t bias = c->pie ? libs[i].start - c->min_vaddr : 0;

		add_scanned(s, cap, c, bias, false, true, true);
		s->rt.span[s->rt.n][0] = lo + bias;
		s->rt.span[s->rt.n][1] = hi + bias;
		s->rt.n++;
	}
	if (s->rt.n)
		s->rt.copies = exe_copies(exe, &s->rt.ncopies);
	s->rt.copies_bias = exe_bias;
}

void bp_install_now(struct session *s, struct process *p, bool apart)
{
	int live = 0;

	if (p->bps_installed || p->dead)
		return;
	for (int i = 0; i < s->nth; i++)
		live += s->th[i].p == p && s->th[i].st != SCHED_DEAD;
	p->install_alone = live == 1;
	p->install_apart = apart;
	(void)bp_install(s, p);
	p->install_alone = p->install_apart = false;
}

int bp_install(struct session *ss, struct process *s)
{
	size_t cap = 0;
	char path[4096];
	uint64_t start = 0, first = 0, at = 0;

	s->bps_installed = true;
	s->bps_lifted = false;
	s->rwlock_known = false;
	s->calls_alone = false;
	tsc_install(ss, s); /* the objects ld.so has mapped since the exec */
	/* the policy's points are offsets in a shared object: no run
	 * without them (the caller says unsupported) */
	s->policy_at = 0;
	s->libc_fsites = NULL;
	/* the policy's process: its points, the interpreter's calls, no
	 * points in its own code unless --points asked for C-level ones */
	bool pol = session_policy_process(ss, s);
	bool pol_c = !pol || (ss->cfg->points & POINTS_CLEVEL);
	const struct policy_image *pi = pol ? s->pimg : NULL;

	if (pol && pi->object) {
		if (find_mapping(s->pid, pi->object, path, sizeof(path), &at))
			return -ENOENT;
		s->policy_at = at;
	}
	/* the policy's own points replace the libc calls; race discovery
	 * needs the calls under a policy too: without them the
	 * interpreter's lock handoffs (CPython's GIL: a pthread mutex and
	 * condvar) order nothing, and every object it touches races */
	bool pol_calls = pol && pi->own_points &&
			 (!ss->cfg->observer || !pol_c);

	/* ... and a process and its forks that share writable memory (a
	 * multiprocessing Value and its lock, a POSIX semaphore in a shared
	 * page) have them for that memory only (shm_only): the policy
	 * orders the interpreter's threads (its own locks, the GIL), the
	 * calls order the processes */
	if ((ss->cfg->points & POINTS_SYNC) && (!pol_calls || s->nshm) &&
	    find_mapping(s->pid, NULL, path, sizeof(path), &start) == 0 &&
	    elf_first_vaddr(path, &first) == 0) {
		const struct libc_cache *c = libc_lookup(path);
		size_t nb0 = s->nbps;

		/* (no futex wake slots for a process whose points came
		 * with a file mapped apart: its wakes stop at the filter,
		 * process.install_apart) */
		s->libc_fsites = c && !s->install_apart ? c->fsites : NULL;
		s->libc_fkinds = c ? c->fkinds : NULL;
		s->libc_nfsites = c ? c->nfsites : 0;
		s->libc_bias = start - first;
		if (c) {
			s->rwlock_known = c->rwlock_known;
			for (size_t i = 0; i < NFNS; i++)
				if (c->vals[i] &&
				    !add_bp(s, &cap,
					    start - first + c->vals[i],
					    OP_CALL, libc_fns[i].fn))
					s->bps[s->nbps - 1].plan = &c->plans[i];
			for (int i = 0; i < c->nmore; i++)
				if (!add_bp(s, &cap, start - first + c->more[i],
					    OP_CALL, libc_fns[c->idx[i]].fn))
					s->bps[s->nbps - 1].plan =
						&c->more_plans[i];
		}
		for (size_t i = nb0; pol_calls && i < s->nbps; i++)
			s->bps[i].shm_only = true;
		/* one thread, its points for a file mapped apart: its
		 * calls on its own objects order nothing another process
		 * does (syscall.c apart_mapped) */
		for (size_t i = nb0; s->install_alone && i < s->nbps; i++)
			s->bps[i].shm_alone = true;
		s->calls_alone = s->install_alone;
	}
	char exe[4096];
	uint64_t exe_start = 0;
	bool want_atomics = (ss->cfg->points & POINTS_ATOMICS) && pol_c;
	bool want_observe = ss->cfg->observer != NULL && pol_c;
	/* the policy's process (an interpreter's): not its own code, but
	 * the objects the policy names (the program's C extensions) */
	bool obj_observe = ss->cfg->observer != NULL && pol && !pol_c &&
			   ss->cfg->policy->observe_object;
	struct scan_cache *exe_scan = NULL;
	uint64_t exe_bias = 0;

	if ((want_atomics || want_observe) &&
	    find_exe(s->pid, exe, sizeof(exe), &exe_start) == 0) {
		struct scan_cache *c =
			scan_exe(exe, !want_observe ? DISASM_ATOMICS
				 : ss->cfg->observe_stack
					 ? DISASM_MEMORY | DISASM_STACK
					 : DISASM_MEMORY);
		uint64_t bias = c->pie ? exe_start - c->min_vaddr : 0;
		bool rt = want_observe && ss->cfg->nruntime_code &&
			  same_file(exe, ss->cfg->runtime_exe);

		for (int i = 0; i < c->n; i++) {
			struct insn_info *in = &c->insns[i];

			bool in_rt = rt && !in->is_atomic &&
				     ranges_contain(ss->cfg->runtime_code,
					       ss->cfg->nruntime_code,
					       in->addr);

			if (obj_observe && !(want_atomics && in->is_atomic))
				continue;
			if (add_omp_return(s, &cap, in, bias, want_observe))
				continue;
			/* a read of constant data (the GOT, .rodata): no
			 * race, and no order, can come of it */
			if (!in->is_atomic &&
			    (!want_observe || in->reads_constant ||
			     (in_rt && ss->cfg->runtime_atomics_only)))
				continue;
			if (add_bp(s, &cap, in->addr + bias,
				   want_atomics && in->is_atomic ? OP_ATOMIC
								 : OP_ACCESS,
				   0))
				continue;
			s->bps[s->nbps - 1].observe =
				!(want_atomics && in->is_atomic);
			s->bps[s->nbps - 1].runtime = in_rt;
			s->bps[s->nbps - 1].move = in->move_len;
			s->bps[s->nbps - 1].stack =
				in->stack_relative && !in->is_atomic;
			s->bps[s->nbps - 1].memfn = in->memfn;
		}
		/* the mapped files, read once for the three */
		struct mapped_file *libs = NULL;
		int nlibs = proc_mapped_files(s->pid, &libs);

		add_program_objects(ss, s, &cap, exe, libs, nlibs,
				    want_atomics, want_observe);
		if (want_observe) {
			add_object_libraries(s, &cap, exe, bias, libs, nlibs);
			add_lib_atomics(s, &cap, exe, libs, nlibs);
			add_omp_entries(s, &cap, libs, nlibs);
			add_free_hooks(s, &cap);
		}
		mapped_files_free(libs, nlibs);
		s->observing = want_observe;
		if (want_observe && same_file(exe, ss->cfg->atomic_exe)) {
			exe_scan = c;
			exe_bias = bias;
		}
	}
	if (obj_observe) {
		add_object_observes(ss, s, &cap);
		add_free_hooks(s, &cap);
		s->observing = true;
	}
	for (size_t i = 0; i < ss->cfg->nuser_points && pol_c; i++)
		if (s->img == 0 ||
		    exe_insn_at(s, ss->cfg->user_points[i].addr))
			add_bp(s, &cap, ss->cfg->user_points[i].addr,
			       ss->cfg->user_points[i].kind, 0);
	/* a watcher's points for this process (test-suite mode: a test's
	 * recorded points where its failing schedule is followed) */
	if (ss->cfg->watch && ss->cfg->watch->points && pol_c) {
		size_t n = 0;
		const struct user_point *wp =
			ss->cfg->watch->points(ss->cfg->watch->ctx, s->idx, &n);

		for (size_t i = 0; wp && i < n; i++)
			add_bp(s, &cap, wp[i].addr, wp[i].kind, 0);
	}
	/* a policy's points (the Python interpreter's) are the program's */
	if (pol) {
		for (size_t i = 0; i < pi->npoints; i++)
			if (!add_bp(s, &cap, at + pi->points[i].addr,
				    pi->points[i].kind, 0))
				s->bps[s->nbps - 1].policy = true;
	}
	if (exe_scan)
		mark_src_atomic(s, ss->cfg, exe_bias, exe_scan);
	s->data_known = exe_scan != NULL;
	s->data_bias = exe_bias;
	if (s->nbps > 1)
		qsort(s->bps, s->nbps, sizeof(s->bps[0]), cmp_bp);
	/* drop duplicates (two names of one function) */
	size_t k = 0;

	for (size_t i = 0; i < s->nbps; i++) {
		if (k && s->bps[k - 1].addr == s->bps[i].addr) {
			struct bp *a = &s->bps[k - 1];
			uint8_t mf = a->memfn | s->bps[i].memfn;
			uint8_t om = a->omp ? a->omp : s->bps[i].omp;

			/* (a point over an observation, an access over the
			 * bare return from an OpenMP wait: add_omp_return) */
			if ((a->observe && !s->bps[i].observe) ||
			    (a->omp && a->sync && s->bps[i].observe &&
			     !s->bps[i].sync))
				*a = s->bps[i];
			a->memfn = mf;
			a->omp = om;
			continue;
		}
		s->bps[k++] = s->bps[i];
	}
	s->nbps = k;
	return arm_bps(ss, s);
}

/*
 * Execute the original instruction of the breakpoint t stopped at: emulate
 * it when it is a push or endbr64, else lift the int3 for one single-step.
 * On return t's registers are set and t is ready for PTRACE_CONT.
 */
int bp_step_over(struct session *ss, struct thread *t)
{
	struct process *s = t->p;
	struct bp *b = bp_find(s, t->bp_addr);
	int r, st;

	if (!b)
		return -ENOENT;
	if ((r = regs_get(t)))
		return r;
	if (b->tramp) {
		/* the displaced instructions, in its slot */
		t->regs.rip = b->tramp + TRAMP_DISP;
		t->regs_dirty = true;
		return regs_set(t);
	}
	if (b->emul == EMUL_PUSH) {
		uint64_t v = *emul_reg(&t->regs, b->emul_reg);

		t->regs.rsp -= 8;
		if ((r = mem_write(s, t->regs.rsp, &v, 8)))
			return r;
		t->regs.rip = b->addr + b->len;
		t->regs_dirty = true;
		return regs_set(t);
	}
	if (b->emul == EMUL_INSN) {
		/* as the program would: through page protection, so that a
		 * fault is left to the CPU (process_vm_readv/writev) */
		struct user_regs_struct nr = t->regs;
		uint64_t mem = 0, a = emul_addr(&b->ei, &nr, b->addr);

		if ((emul_reads(&b->ei) || emul_writes(&b->ei)) &&
		    (a & 4095) + b->ei.size > 4096)
			goto step; /* across pages: all or nothing is the CPU's */
		if (emul_reads(&b->ei) &&
		    mem_access_user(s, a, &mem, b->ei.size, false))
			goto step;
		nr.rip = b->addr;
		emul_run(&b->ei, &nr, &mem);
		if (emul_writes(&b->ei) &&
		    mem_access_user(s, a, &mem, b->ei.size, true))
			goto step;
		t->regs = nr;
		t->regs_dirty = true;
		return regs_set(t);
	}
	if (b->emul == EMUL_SKIP) {
		t->regs.rip = b->addr + b->len;
		t->regs_dirty = true;
		return regs_set(t);
	}
step:
	if (b->sync)
		ss->obs_sync++;
	else if (b->observe)
		ss->obs_steps++; /* counts against discovery's budget */
	t->regs.rip = b->addr;
	t->regs_dirty = true;
	if ((r = regs_set(t)))
		return r;
	if ((r = mem_write(s, b->addr, b->orig, 1)))
		return r;
	if ((r = thread_step_wait(t, &st)))
		return r;
	static const uint8_t int3 = 0xcc;

	mem_write(s, b->addr, &int3, 1);
	if (!WIFSTOPPED(st))
		return -ESRCH;
	if (WSTOPSIG(st) != SIGTRAP) {
		/* a signal arrived instead of the step: deliver it */
		t->stop = STOP_SIGNAL;
		t->sig = WSTOPSIG(st);
	}
	return 0;
}

/*
 * One single step of t, its status in *status.  ptloom's own SIGSTOP (a
 * spin probe's, sent while t reached a stop of its own first) may come
 * instead of the step: it is suppressed and the step made again.  Else t
 * went back to the breakpoint's int3 and trapped there once more: race
 * discovery observed one access twice, as often as a probe's timing made
 * it (go_wg: 30,058 accesses observed against 30,057, one invocation in
 * four with a probe every millisecond).
 */
int thread_step_wait(struct thread *t, int *status)
{
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0)
			return -errno;
		t->regs_valid = false;
		if (wait_task(t->tid, status) < 0)
			return -errno;
		if (!t->own_sigstop || !WIFSTOPPED(*status) ||
		    WSTOPSIG(*status) != SIGSTOP || (*status >> 16))
			return 0;
		t->own_sigstop = false;
	}
}

bool bp_operand_kind(struct bp *b, int *size, bool *write)
{
	if (!b->decoded) {
		b->insn = calloc(1, sizeof(*b->insn));
		if (!b->insn ||
		    disasm_decode(b->orig, sizeof(b->orig), b->addr, b->insn)) {
			free(b->insn);
			b->insn = NULL;
		}
		b->decoded = true;
	}
	if (!b->insn || !b->insn->nmem)
		return false;
	*size = b->insn->size;
	*write = b->insn->mem_write;
	return true;
}

uint64_t bp_operand(struct session *s, struct thread *t, struct bp *b,
		    int *size, bool *write)
{
	(void)s;
	if (!bp_operand_kind(b, size, write) || regs_get(t))
		return 0;
	return disasm_effective_addr(b->insn, &t->regs);
}

/*
 * A memory-destination read-modify-write without a lock prefix (`addl $1,
 * count(%rip)`, what gcc -O2 makes of `count++`) is one instruction but
 * two accesses: on two CPUs another store can fall between its load and
 * its store, and is then lost.  Executed whole it could never be, so such
 * an instruction at an access point is two points.  At the first (t was
 * picked at it) the load happens: the operand's value is kept in t and
 * true is returned (t stays at the point, as the store's point).  At the
 * second the kept value is put back if someone changed it meanwhile, and
 * the instruction runs on it: its result and flags are those of the value
 * loaded at the first point, and a store that came between is overwritten,
 * as on the hardware.  Returns false when t should run now.
 */
bool bp_split_rmw(struct thread *t)
{
	struct bp *b;
	uint64_t v = 0;

	if (t->stop != STOP_BP || t->kind != OP_ACCESS)
		return false;
	if (t->split) {
		t->split = false;
		if (!mem_read(t->p, t->split_addr, &v, t->split_size) &&
		    v != t->split_val)
			mem_write(t->p, t->split_addr, &t->split_val,
				  t->split_size);
		return false;
	}
	b = bp_find(t->p, t->bp_addr);
	if (!b || !b->decoded || !b->insn || b->policy)
		return false;
	if (!b->rmw) {
		const struct insn_info *in = b->insn;

		if (in->nmem != 1 || !in->mem[0].read || !in->mem[0].write ||
		    in->is_atomic || in->is_string_op || in->vsib ||
		    in->size > 8)
			return false;
		b->rmw = true;
	}
	if (!t->obj || (t->obj & 4095) + b->insn->size > 4096 ||
	    mem_read(t->p, t->obj, &v, b->insn->size))
		return false; /* across pages or unreadable: the CPU's */
	t->split = true;
	t->split_addr = t->obj;
	t->split_size = b->insn->size;
	t->split_val = v;
	return true;
}

static bool is_observer(const struct bp *b)
{
	return b->observe;
}

static bool is_lifted(const struct bp *b)
{
	return b->lifted;
}

/* The access budget is spent: lift every observation breakpoint. */
int bp_remove_observers(struct process *s)
{
	size_t k = 0;

	s->ndormant = 0;

	patch_bps(s->memfd, s->bps, s->nbps, is_observer, false);
	for (size_t i = 0; i < s->nbps; i++) {
		if (s->bps[i].observe) {
			free(s->bps[i].insn);
			continue;
		}
		s->bps[k++] = s->bps[i];
	}
	s->nbps = k;
	s->observing = false;
	return 0;
}

/* b's original bytes back (all its jump's) */
static int bp_unpatch(struct process *p, const struct bp *b)
{
	return mem_write(p, b->addr, b->orig, bp_len(b));
}

/* A jump over several instructions (bp.multi) stays while the process
 * observes; its slot's stub word says whether it logs (the slot's start)
 * or only runs what it moved (TRAMP_DISP). */
static void multi_logs(struct process *p, const struct bp *b, bool log)
{
	uint64_t to = b->tramp + (log ? 0 : TRAMP_DISP);

	if (b->multi && b->tramp && b->access)
		mem_write(p, b->tramp + TRAMP_AWORD, &to, sizeof(to));
}

void bp_lift(struct process *p, struct bp *b)
{
	if (!b->lifted && (b->multi || !bp_unpatch(p, b))) {
		multi_logs(p, b, false);
		b->lifted = true;
		p->nlifted++;
	}
}

void bp_retire(struct process *p, struct bp *b)
{
	if (b->lifted) {
		b->lifted = false; /* its byte is back already */
		p->nlifted--;
	} else if (!b->retired && !b->multi) {
		bp_unpatch(p, b);
	} else if (!b->retired && !b->dormant) {
		multi_logs(p, b, false);
	}
	b->retired = true;
}

void bp_doze(struct process *p, struct bp *b)
{
	if (b->lifted || b->retired || b->dormant)
		return;
	if (p->ndormant == p->capdormant) {
		size_t nc = p->capdormant ? 2 * p->capdormant : 64;
		uint64_t *d = realloc(p->dormant, nc * sizeof(*d));

		if (!d) {
			bp_retire(p, b);
			return;
		}
		p->dormant = d;
		p->capdormant = nc;
	}
	if (!b->multi && bp_unpatch(p, b))
		return;
	multi_logs(p, b, false);
	b->dormant = true;
	p->dormant[p->ndormant++] = b->addr;
}

/* thread is about to run: the points dozing for other threads trap
 * again (its own stay asleep) */
void bp_wake_dormant(struct process *p, int thread)
{
	size_t k = 0;

	for (size_t i = 0; i < p->ndormant; i++) {
		struct bp *b = bp_find(p, p->dormant[i]);

		if (!b || !b->dormant)
			continue;
		if (b->first_tid == thread) {
			p->dormant[k++] = p->dormant[i];
			continue;
		}
		b->dormant = false;
		b->wakes++;
		if (!b->multi)
			bp_put(p, b, true);
		else if (!b->retired && !b->lifted)
			multi_logs(p, b, true);
	}
	p->ndormant = k;
}

void bp_drop_lifts(struct process *p)
{
	if (!p->nlifted)
		return;
	patch_bps(p->memfd, p->bps, p->nbps, is_lifted, true);
	for (size_t i = 0; i < p->nbps; i++) {
		struct bp *b = &p->bps[i];

		if (b->lifted && b->multi && !b->retired && !b->dormant)
			multi_logs(p, b, true);
		b->lifted = false;
	}
	p->nlifted = 0;
}

/*
 * One thread is left and has passed many breakpoints with nobody to
 * interleave (thread.c, sole_thread): every breakpoint is lifted, as
 * before the program's first thread, until its next clone installs them
 * again.
 */
int bp_lift_all(struct process *s)
{
	patch_bps(s->memfd, s->bps, s->nbps, NULL, false);
	for (size_t i = 0; i < s->nbps; i++)
		free(s->bps[i].insn);
	s->nbps = 0;
	s->bps_installed = false;
	s->bps_lifted = true;
	s->nlifted = 0;
	s->ndormant = 0;
	s->observing = false;
	return 0;
}

void bp_calls_all(struct process *p)
{
	if (!p->calls_alone)
		return;
	for (size_t i = 0; i < p->nbps; i++)
		p->bps[i].shm_alone = false;
	p->calls_alone = false;
}

/* A forked child inherits our int3 bytes: put the originals back. */
int bp_remove_all_in(struct process *s, pid_t pid)
{
	char name[64];

	snprintf(name, sizeof(name), "/proc/%d/mem", pid);
	int fd = open(name, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	bp_restore_bytes(fd, s->bps, s->nbps);
	tsc_restore(s, fd);
	for (int i = 0; i < s->ntramp; i++)
		if (s->tslot[i].futex && !s->tslot[i].second && s->tslot[i].site)
			futex_site_restore(s, fd, s->tslot[i].site,
					   s->tslot[i].fkind);
	close(fd);
	return 0;
}

void bp_put(struct process *p, const struct bp *b, bool arm)
{
	uint8_t c[16];
	size_t n = bp_bytes(b, arm, c);

	mem_write(p, b->addr, c, n);
}

/* The original bytes of bps back through memfd (/proc/PID/mem): 0, or
 * -EIO if one could not be written (the others are written still). */
int bp_restore_bytes(int memfd, const struct bp *bps, size_t n)
{
	return patch_bps(memfd, bps, n, NULL, false);
}
