/*
 * Processes: creation, exec, death, and what a parent learns about its
 * children through wait4/waitid.  See process.h.
 *
 * Waits never block in the kernel while ptloom holds every other thread
 * stopped: a wait whose answer is not known yet blocks in ptloom's model
 * (BLOCK_WAIT) and is woken when a child dies, stops or continues under
 * ptloom's control.  When it runs, its pid argument is rewritten to name
 * the one child ptloom chose (a choice when several could be reported), so
 * the kernel returns exactly that child's status at once.  The kernel
 * shows a traced child's exit to its real parent only after ptloom has
 * reaped it, which is when process_died() runs: the rewritten wait never
 * blocks.  See tests/targets/fork_race.c and tests/targets/stop_handshake.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "elf.h"
#include "session_int.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

struct process *process_new(struct session *s, pid_t pid,
			    struct process *parent)
{
	if (s->nprocs == s->capprocs) {
		int cap = s->capprocs ? s->capprocs * 2 : 8;
		struct process **n =
			realloc(s->procs, (size_t)cap * sizeof(*n));

		if (!n)
			return NULL;
		s->procs = n;
		s->capprocs = cap;
	}
	struct process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->idx = s->nprocs;
	p->pid = pid;
	p->parent = parent ? parent->idx : -1;
	p->memfd = -1;
	p->pidfd = -1;
	p->mapsfd = p->pagemapfd = p->iofd = -1;
	p->vfork_parent = -1;
	p->img = parent ? ++s->nimg : 0;
	p->fork_copy = parent != NULL;
	p->fork_img = parent ? parent->img : 0;
	p->join_off = parent ? parent->join_off : 720; /* glibc 2.36 */
	if (parent) {
		memcpy(p->comm, parent->comm, sizeof(p->comm));
		agent_inherit(p, parent);
		/* (its descriptors are the parent's) */
		memcpy(p->wfile, parent->wfile, sizeof(p->wfile));
		p->nwfile = parent->nwfile;
		p->wfile_all = parent->wfile_all;
	}
	s->procs[s->nprocs++] = p;
	return p;
}

struct process *process_find(struct session *s, pid_t pid)
{
	for (int i = s->nprocs - 1; i >= 0; i--)
		if (s->procs[i]->pid == pid)
			return s->procs[i];
	return NULL;
}

int process_open(struct process *p)
{
	char name[64];

	process_close(p);
	snprintf(name, sizeof(name), "/proc/%d/mem", p->pid);
	p->memfd = open(name, O_RDWR | O_CLOEXEC);
	return p->memfd < 0 ? -errno : 0;
}

int process_pidfd(struct process *p)
{
	if (p->pidfd < 0 && !p->pidfd_tried && !p->dead) {
		p->pidfd_tried = true;
		p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	}
	return p->pidfd;
}

void process_close(struct process *p)
{
	if (p->memfd >= 0)
		close(p->memfd);
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->mapsfd >= 0)
		close(p->mapsfd);
	if (p->pagemapfd >= 0)
		close(p->pagemapfd);
	if (p->iofd >= 0)
		close(p->iofd);
	p->memfd = -1;
	p->pidfd = -1;
	p->mapsfd = p->pagemapfd = p->iofd = -1;
	p->pidfd_tried = false;
}

static void free_bps(struct process *p)
{
	for (size_t i = 0; i < p->nbps; i++)
		free(p->bps[i].insn);
	free(p->bps);
	p->bps = NULL;
	p->nbps = 0;
	p->nlifted = 0;
	free(p->dormant);
	p->dormant = NULL;
	p->ndormant = p->capdormant = 0;
	p->bps_installed = false;
	p->bps_lifted = false;
	p->policy_at = 0;
	p->observing = false;
	p->data_known = false;
	memset(&p->rt, 0, sizeof(p->rt));
	memset(&p->swept, 0, sizeof(p->swept));
	p->rwlock_known = false;
	p->nshm = 0;
	p->calls_alone = false;
}

bool map_line_parse(const char *line, struct map_line *m)
{
	unsigned long lo, hi, off, ino;
	unsigned maj, min;
	char perm[8];
	int at = 0;

	if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu%n", &lo, &hi, perm, &off,
		   &maj, &min, &ino, &at) != 7)
		return false;
	m->lo = lo;
	m->hi = hi;
	m->off = off;
	m->dev = (uint64_t)maj << 32 | min;
	m->ino = ino;
	m->shared = perm[3] == 's';
	m->writable = perm[1] == 'w';
	while (line[at] == ' ')
		at++;
	snprintf(m->path, sizeof(m->path), "%s", line + at);
	m->path[strcspn(m->path, "\n")] = 0;
	return true;
}

int process_shm_refresh(struct session *s, struct process *p)
{
	struct shm_range old[16];
	char name[64], line[640];
	int nold = p->nshm;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)p->pid);
	if (!(f = fopen(name, "re")))
		return p->nshm;
	memcpy(old, p->shm, sizeof(old));
	p->nshm = 0;
	/* an interpreter maps hundreds of files, and the mmap area (a
	 * multiprocessing arena, a semaphore) is listed near the end */
	while (fgets(line, sizeof(line), f) && p->nshm < 16) {
		struct map_line m;
		struct shm_range r;

		if (!map_line_parse(line, &m) || !m.writable || !m.shared ||
		    (p->ag_page && p->ag_page >= m.lo && p->ag_page < m.hi) ||
		    (p->ag_page2 && p->ag_page2 >= m.lo && p->ag_page2 < m.hi))
			continue; /* the agent's page and its view are ours */
		uint64_t lo = m.lo, hi = m.hi, off = m.off;

		r = (struct shm_range){
			lo, hi, p->img,
			/* sem_open's file (glibc: /dev/shm/sem.NAME) */
			.sem = strstr(m.path, "/dev/shm/sem.") != NULL,
			.dev = m.dev, .ino = m.ino, .off = off,
			.anon = strstr(m.path, "/dev/zero") != NULL,
		};
		bool kept = false;

		for (int k = 0; k < nold; k++)
			if (old[k].lo == lo && old[k].hi == hi) {
				r.img = old[k].img;
				r.apart = old[k].apart;
				r.delta = old[k].delta;
				kept = true;
			}
		/* a file mapped apart elsewhere: named as its first mapping
		 * names it (syscall.c apart_mapped) */
		for (int k = 0; !kept && k < s->napart; k++) {
			const struct apart_file *a = &s->apart_files[k];

			if (a->dev != r.dev || a->ino != r.ino)
				continue;
			if (off < a->off_lo || off + (hi - lo) > a->off_hi)
				s->shared_apart++; /* beyond its naming */
			r.img = a->img;
			r.apart = true;
			r.delta = (int64_t)(a->base + off - lo);
		}
		p->shm[p->nshm++] = r;
	}
	fclose(f);
	return p->nshm;
}

/* The hex number at *p (advanced past it); *ok false when none. */
static unsigned long long hex_at(const char **p, bool *ok)
{
	unsigned long long v = 0;
	const char *q = *p;

	for (;; q++) {
		int d = *q >= '0' && *q <= '9'	 ? *q - '0'
			: *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
						 : -1;

		if (d < 0)
			break;
		v = v << 4 | (unsigned)d;
	}
	if (q == *p)
		*ok = false;
	*p = q;
	return v;
}

/* One line of /proc/PID/maps, "lo-hi perm off dev ino   path", into m. */
static bool parse_map(const char *l, const char *end, struct proc_map *m)
{
	bool ok = true;
	unsigned long long lo, hi, ino = 0;
	const char *perm;

	lo = hex_at(&l, &ok);
	if (!ok || *l++ != '-')
		return false;
	hi = hex_at(&l, &ok);
	if (!ok || *l++ != ' ' || end - l < 5)
		return false;
	perm = l;
	l += 4;
	if (*l++ != ' ')
		return false;
	hex_at(&l, &ok); /* offset */
	if (!ok || *l++ != ' ')
		return false;
	while (l < end && *l != ' ') /* device */
		l++;
	if (l >= end || *l++ != ' ' || *l < '0' || *l > '9')
		return false;
	while (*l >= '0' && *l <= '9')
		ino = ino * 10 + (unsigned)(*l++ - '0');
	while (l < end && *l == ' ')
		l++;
	*m = (struct proc_map){
		.lo = lo,
		.hi = hi,
		.writable = perm[1] == 'w',
		.none = !strncmp(perm, "---", 3),
		.shared = perm[3] == 's',
		.anon = ino == 0 && l >= end,
		.stack = end - l >= 7 && !strncmp(l, "[stack]", 7),
		.vdso = end - l >= 6 && !strncmp(l, "[vdso]", 6),
	};
	return true;
}

int proc_mapped_files(pid_t pid, struct mapped_file **out)
{
	char name[64], line[4096 + 128];
	struct mapped_file *v = NULL;
	int n = 0;
	FILE *f;

	*out = NULL;
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(name, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;
		char perms[8];
		char *p = strchr(line, '/');
		int i;

		if (!p || sscanf(line, "%lx-%*x %7s %lx", &lo, perms, &off) != 3)
			continue;
		p[strcspn(p, "\n")] = 0;
		for (i = 0; i < n && strcmp(v[i].path, p); i++)
			;
		if (i == n) {
			struct mapped_file *m = realloc(v, (size_t)(n + 1) *
								   sizeof(*v));
			char *path = m ? strdup(p) : NULL;

			if (m)
				v = m;
			if (!path)
				break;
			v[n++] = (struct mapped_file){ .path = path };
		}
		if (off == 0 && !v[i].start)
			v[i].start = lo;
		v[i].exec |= perms[2] == 'x';
	}
	fclose(f);
	*out = v;
	return n;
}

void mapped_files_free(struct mapped_file *f, int n)
{
	for (int i = 0; i < n; i++)
		free(f[i].path);
	free(f);
}

/*
 * The whole file in one buffer (a few reads, not one per KiB) and parsed
 * by hand: a state key reads the maps at every choice, and sscanf was a
 * few per cent of all CPU.
 */
static int proc_maps_fd(int fd, struct proc_map *m, int max, bool *more,
			bool writable);

/* how far below the top of its stack glibc puts a thread's descriptor */
#define GLIBC_TCB_SLACK (64u << 10)

bool proc_map_glibc_stack(const struct proc_map *m, uint64_t tp)
{
	return m->anon && m->guard_below && tp >= m->lo && tp < m->hi &&
	       m->hi - tp <= GLIBC_TCB_SLACK;
}

int proc_maps(pid_t pid, struct proc_map *m, int max, bool *more)
{
	char name[64];
	int n, fd;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = proc_maps_fd(fd, m, max, more, false);
	close(fd);
	return n;
}

static int proc_maps_fd(int fd, struct proc_map *m, int max, bool *more,
			bool writable)
{
	static char *buf;
	static size_t cap;
	size_t len = 0;
	int n = 0;

	for (;;) {
		if (cap - len < 4096) {
			size_t c = cap ? cap * 2 : 1 << 16;
			char *b = realloc(buf, c);

			if (!b)
				return -1;
			buf = b;
			cap = c;
		}
		/* pread: an open maps file is read again from its start */
		ssize_t got = pread(fd, buf + len, cap - len - 1, (off_t)len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		len += (size_t)got;
	}
	buf[len] = 0;
	if (more)
		*more = false;
	struct proc_map prev = { 0 };

	for (const char *l = buf; l < buf + len;) {
		const char *e = memchr(l, '\n', (size_t)(buf + len - l));
		struct proc_map pm;

		if (!e)
			e = buf + len;
		if (parse_map(l, e, &pm)) {
			pm.guard_below = prev.anon && prev.none &&
					 prev.hi == pm.lo;
			prev = pm;
			if (writable && !pm.writable) {
				l = e + 1;
				continue;
			}
			if (n == max) {
				if (more)
					*more = true;
				break;
			}
			m[n++] = pm;
		}
		l = e + 1;
	}
	return n;
}

/* linux/fs.h of Linux 6.11, which Debian 12's headers predate */
struct ptloom_procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PTLOOM_PROCMAP_QUERY _IOWR('f', 17, struct ptloom_procmap_query)
enum {
	PMQ_READABLE = 0x01,
	PMQ_WRITABLE = 0x02,
	PMQ_EXECUTABLE = 0x04,
	PMQ_SHARED = 0x08,
	PMQ_COVERING_OR_NEXT = 0x10,
};

/* The mapping at (or, next, after) addr with the query's flags: 0, or
 * -errno (-ENOENT: none). */
static int map_query(int fd, uint64_t addr, uint64_t flags,
		     struct proc_map *pm)
{
	static char name[PATH_MAX];
	struct ptloom_procmap_query q = {
		.size = sizeof(q),
		.query_flags = flags,
		.query_addr = addr,
		.vma_name_size = sizeof(name),
		.vma_name_addr = (uint64_t)(uintptr_t)name,
	};

	if (ioctl(fd, PTLOOM_PROCMAP_QUERY, &q))
		return -errno;
	/* what parse_map() makes of the same line */
	*pm = (struct proc_map){
		.lo = q.vma_start,
		.hi = q.vma_end,
		.writable = q.vma_flags & PMQ_WRITABLE,
		.none = !(q.vma_flags &
			  (PMQ_READABLE | PMQ_WRITABLE | PMQ_EXECUTABLE)),
		.shared = q.vma_flags & PMQ_SHARED,
		.anon = q.inode == 0 && q.vma_name_size == 0,
		.stack = q.vma_name_size && !strcmp(name, "[stack]"),
	};
	return 0;
}

/*
 * PROCMAP_QUERY asks for each writable mapping in turn (and, for an
 * anonymous one, the mapping below it) instead of the kernel printing
 * every mapping with its path: a state key reads them at every fresh
 * choice.
 */
int proc_map_guard(int fd, struct proc_map *m)
{
	struct proc_map below;
	int e;

	if (!m->guard_unknown)
		return 0; /* known already */
	m->guard_unknown = false;
	if (!m->anon || !m->lo)
		return 0;
	e = map_query(fd, m->lo - 1, 0, &below);
	if (e && e != -ENOENT)
		return -1;
	m->guard_below = !e && below.anon && below.none && below.hi == m->lo;
	return 0;
}

int proc_maps_writable(int fd, struct proc_map *m, int max, bool *more)
{
	static bool no_query;
	struct proc_map pm;
	uint64_t addr = 0;
	int n = 0, e;

	if (more)
		*more = false;
	while (!no_query) {
		e = map_query(fd, addr, PMQ_WRITABLE | PMQ_COVERING_OR_NEXT,
			      &pm);
		if (e == -ENOENT)
			return n;
		if (e == -ENOTTY || e == -EINVAL || e == -EOPNOTSUPP) {
			no_query = true; /* an older kernel: read the file */
			break;
		}
		if (e)
			return -1;
		pm.guard_below = false;
		pm.guard_unknown = true; /* proc_map_guard looks */
		if (n == max) {
			if (more)
				*more = true;
			return n;
		}
		m[n++] = pm;
		addr = pm.hi;
	}
	return proc_maps_fd(fd, m, max, more, true);
}

const char *proc_stat_tail(pid_t pid, char *buf, size_t len)
{
	char nm[64];

	snprintf(nm, sizeof(nm), "/proc/%d/stat", (int)pid);
	int fd = open(nm, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, len - 1);

	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	char *e = strrchr(buf, ')'); /* the name may hold spaces and ')' */

	return e && e[1] == ' ' ? e + 2 : NULL;
}

pid_t wait_task(pid_t tid, int *status)
{
	for (;;) {
		pid_t w = waitpid(tid, status, __WALL);

		if (w >= 0 || errno != EINTR)
			return w;
		/* (each tick of the run's timer interrupts the wait) */
		char buf[512];
		const char *t = proc_stat_tail(tid, buf, sizeof(buf));

		if (!t || t[0] == 'Z' || t[0] == 'X') {
			errno = ESRCH;
			return -1;
		}
	}
}

int process_copy_bps(struct process *child, const struct process *parent)
{
	free_bps(child);
	child->bps_installed = parent->bps_installed;
	child->bps_lifted = parent->bps_lifted;
	child->observing = parent->observing;
	child->calls_alone = parent->calls_alone;
	child->policy_at = parent->policy_at;
	child->pimg = parent->pimg;
	child->rwlock_known = parent->rwlock_known;
	child->data_known = parent->data_known;
	child->data_bias = parent->data_bias;
	child->rt = parent->rt;
	child->swept = parent->swept;
	child->join_off = parent->join_off;
	memcpy(child->shm, parent->shm, sizeof(child->shm));
	child->nshm = parent->nshm;
	child->tsc = parent->tsc; /* the same bytes */
	if (!parent->nbps)
		return 0;
	child->bps = malloc(parent->nbps * sizeof(*child->bps));
	if (!child->bps)
		return -ENOMEM;
	memcpy(child->bps, parent->bps, parent->nbps * sizeof(*child->bps));
	for (size_t i = 0; i < parent->nbps; i++)
		child->bps[i].insn = NULL, child->bps[i].decoded = false;
	child->nbps = parent->nbps;
	child->nlifted = parent->nlifted; /* and so are its bytes */
	if (parent->ndormant) {
		child->dormant = malloc(parent->ndormant * sizeof(uint64_t));
		if (!child->dormant)
			return -ENOMEM;
		memcpy(child->dormant, parent->dormant,
		       parent->ndormant * sizeof(uint64_t));
		child->ndormant = child->capdormant = parent->ndormant;
	}
	return 0;
}

static void read_comm(struct process *p)
{
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/comm", p->pid);
	f = fopen(name, "re");
	if (!f)
		return;
	if (fgets(p->comm, sizeof(p->comm), f))
		p->comm[strcspn(p->comm, "\n")] = 0;
	fclose(f);
}

/* Wake every thread that p's state change may answer: the waiters of its
 * parent process. */
static void wake_waiters(struct session *s, struct process *p)
{
	if (p->parent < 0)
		return;
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st != SCHED_BLOCKED || t->block != BLOCK_WAIT ||
		    t->p->idx != p->parent)
			continue;
		/* it runs its wait again and finds the child */
		t->st = SCHED_ENABLED;
		t->block = BLOCK_NONE;
		t->kind = OP_WAIT4;
	}
}

static void release_vfork_parent(struct session *s, struct process *p)
{
	if (p->vfork_parent < 0 || p->vfork_parent >= s->nth)
		return;
	struct thread *t = &s->th[p->vfork_parent];

	p->vfork_parent = -1;
	if (t->st != SCHED_BLOCKED || t->block != BLOCK_VFORK)
		return;
	/* the return from vfork: its own scheduling point */
	t->st = SCHED_ENABLED;
	t->block = BLOCK_NONE;
}

void process_exec(struct session *s, struct process *p)
{
	/* P0's first exec is the program itself: image 0 */
	if (p->exec_seen || p->idx > 0)
		p->img = ++s->nimg;
	p->exec_seen = true;
	p->fork_copy = false;
	free_bps(p);
	p->tsc.n = p->tsc.nobj = p->tsc.nslot = 0; /* a new image */
	p->join_off = 720;
	p->symbolized = false;
	process_open(p);
	read_comm(p);
	release_vfork_parent(s, p);
}

bool proc_status_value(const char *path, const char *name, int base,
		       uint64_t *v)
{
	char line[256];
	size_t n = strlen(name);
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			*v = strtoull(line + n + 1, NULL, base);
			found = true;
			break;
		}
	fclose(f);
	return found;
}

/* The hex mask after "name:" in a /proc status file, 0 if none. */
static uint64_t status_mask(const char *path, const char *name)
{
	uint64_t v = 0;

	return proc_status_value(path, name, 16, &v) ? v : 0;
}

static uint64_t sigbit(int sig)
{
	return 1ull << (sig - 1);
}

/*
 * The kernel sent SIGCHLD to p's process when ptloom reaped a child.  A
 * thread of p that catches it and waits in an emulated poll would
 * natively be interrupted (poll, select and epoll_wait are never
 * restarted): the lowest-numbered such thread is made ready to run its
 * call in the kernel, which returns -EINTR at once and runs the handler
 * (libuv's and make's child handling).  The minimum for processes; the
 * signals issue generalises it.  A sleep is not the kernel's to end: its
 * time left (nanosleep's rem) would be the machine's clock's, with its
 * timer slack (20.048 ms of 20 asked), another each run, and a program
 * that sleeps the rest (rsync) would not repeat itself.  signal_recheck()
 * (process_died sets sig_maybe) interrupts it instead, its rest taken
 * from the virtual clock.  So are the polls whose call writes the time
 * left back (writes_time_left): glibc's select copies pselect6's into the
 * program's timeval, 19997 us and then 19998 from one schedule; ended
 * by signal_recheck() with EINTR, the timeval is as ptloom's select
 * leaves it, whatever the machine's clock did.
 */
static bool writes_time_left(unsigned long long nr)
{
	return nr == SYS_select || nr == SYS_pselect6 || nr == SYS_ppoll;
}

static void sigchld(struct session *s, struct process *p)
{
	char path[64];

	if (p->dead)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	if (!(status_mask(path, "SigCgt") & sigbit(SIGCHLD)))
		return;
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->p != p || t->st != SCHED_BLOCKED ||
		    t->block != BLOCK_POLL ||
		    t->stop != STOP_SECCOMP || regs_get(t) ||
		    writes_time_left(t->regs.orig_rax) ||
		    (signal_wait_mask(t) & sigbit(SIGCHLD)))
			continue;
		t->sig_block = t->block;
		t->sig_timed = t->timed;
		t->st = SCHED_ENABLED;
		t->block = BLOCK_NONE;
		t->timed = false;
		t->kind = OP_WOKEN;
		t->fn = 0;
		t->arg = 0;
		t->yield = false;
		t->skip = false; /* the kernel runs the call: EINTR */
		t->sig_rerun = true;
		return;
	}
}

void process_died(struct session *s, struct process *p, int status)
{
	if (s->cfg->watch && s->cfg->watch->died)
		s->cfg->watch->died(s->cfg->watch->ctx, p->idx, status);
	p->dead = true;
	p->status = status;
	p->stopped = false;
	s->sig_maybe = true; /* the parent's SIGCHLD (tracer/signal.c) */
	process_close(p);
	release_vfork_parent(s, p);
	/* its children are reparented, beyond the reach of its waits */
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i]->parent == p->idx)
			s->procs[i]->parent = -1;
	wake_waiters(s, p);
	if (p->parent >= 0)
		sigchld(s, s->procs[p->parent]);
}

void process_stopped(struct session *s, struct process *p)
{
	if (!p->stopped) {
		p->stopped = true;
		p->stop_reported = false;
		p->continued = false;
	}
	wake_waiters(s, p);
}

void process_thread_label(struct session *s, struct thread *t, char *buf,
			  size_t len)
{
	(void)s;
	if (t->p->idx == 0) /* the trace's own T-number */
		snprintf(buf, len, "T%d", t->idx);
	else
		snprintf(buf, len, "P%d %s T%d", t->p->idx, t->p->comm,
			 t->ptidx);
}

/* The wait's parameters, decoded from wait4 or waitid. */
struct wait_args {
	int which;	/* 0 any, 1 pid, 2 process group */
	pid_t id;
	int options;
	bool exits, stops, conts;
};

static bool decode_wait(struct thread *t, struct wait_args *w)
{
	struct user_regs_struct *r = &t->regs;

	memset(w, 0, sizeof(*w));
	if ((long)r->orig_rax == SYS_wait4) {
		pid_t pid = (pid_t)r->rdi;

		w->options = (int)r->rdx;
		w->exits = true;
		w->stops = w->options & WUNTRACED;
		w->conts = w->options & WCONTINUED;
		if (pid > 0) {
			w->which = 1;
			w->id = pid;
		} else if (pid == 0) {
			w->which = 2;
			w->id = getpgid(t->p->pid);
		} else if (pid < -1) {
			w->which = 2;
			w->id = -pid;
		}
		return true;
	}
	int idtype = (int)r->rdi;

	w->options = (int)r->r10;
	w->exits = w->options & WEXITED;
	w->stops = w->options & WSTOPPED;
	w->conts = w->options & WCONTINUED;
	switch (idtype) {
	case P_ALL:
		return true;
	case P_PID:
		w->which = 1;
		w->id = (pid_t)r->rsi;
		return true;
	case P_PGID:
		w->which = 2;
		w->id = r->rsi ? (pid_t)r->rsi : getpgid(t->p->pid);
		return true;
	default:
		return false; /* pidfds: the kernel decides */
	}
}

static bool matches(const struct wait_args *w, struct process *q)
{
	if (w->which == 1)
		return q->pid == w->id;
	if (w->which == 2)
		return getpgid(q->pid) == w->id;
	return true;
}

static bool reportable(const struct wait_args *w, struct process *q)
{
	if (q->dead)
		return w->exits && !q->reaped;
	if (q->stopped && !q->stop_reported)
		return w->stops;
	return q->continued && w->conts;
}

/* The children t's wait may report now (at most MAX_ALTS into cand),
 * and how many children it waits for; -1 if ptloom cannot tell. */
static int wait_candidates(struct session *s, struct thread *t,
			   struct wait_args *w, struct process **cand,
			   int *children)
{
	int n = 0;

	*children = 0;
	if (regs_get(t) || !decode_wait(t, w))
		return -1;
	for (int i = 0; i < s->nprocs; i++) {
		struct process *q = s->procs[i];

		if (q->parent != t->p->idx || q->reaped || !matches(w, q))
			continue;
		(*children)++;
		if (reportable(w, q) && n < MAX_ALTS)
			cand[n++] = q;
	}
	return n;
}

bool process_wait_blocks(struct session *s, struct thread *t)
{
	struct wait_args w;
	struct process *cand[MAX_ALTS];
	int children, n = wait_candidates(s, t, &w, cand, &children);

	return n == 0 && children > 0 && !(w.options & WNOHANG);
}

bool process_wait_execute(struct session *s, struct thread *t)
{
	struct wait_args w;
	struct process *cand[MAX_ALTS];
	int children, n = wait_candidates(s, t, &w, cand, &children);

	if (n < 0)
		return true;
	if (!children)
		return true; /* ECHILD, or a child ptloom does not know */
	if (!n) {
		if (!(w.options & WNOHANG)) {
			t->st = SCHED_BLOCKED;
			t->block = BLOCK_WAIT;
			t->timed = false;
			return false;
		}
		/* nothing to report yet, as the kernel would say */
		t->skip = true;
		t->result = 0;
		if ((long)t->regs.orig_rax == SYS_waitid && t->regs.rdx) {
			uint8_t zero[32] = { 0 };

			mem_write(t->p, t->regs.rdx, zero, sizeof(zero));
		}
		return true;
	}
	int pick = 0;

	if (n >= MAX_ALTS)
		session_note_capped(s, children);
	if (n > 1) {
		/* which child the wait returns is a choice */
		struct choice c;

		c.kind = DEC_WAKE;
		c.current = s->current;
		c.nalts = 0;
		for (int i = 0; i < n; i++) {
			int leader = -1;

			for (int k = 0; k < s->nth && leader < 0; k++)
				if (s->th[k].p == cand[i])
					leader = k;
			c.alts[c.nalts++] = (struct alt){
				.thread = (uint16_t)(leader < 0 ? 0 : leader),
				.kind = OP_WAIT4,
			};
		}
		pick = session_pick_or_fail(s, &c, "a wait");
		if (pick < 0)
			return false;
	}
	struct process *q = cand[pick];
	bool w4 = (long)t->regs.orig_rax == SYS_wait4;
	struct user_regs_struct was = t->regs;

	/* name that child, so that the kernel returns it and no other */
	if (w4) {
		t->regs.rdi = (uint64_t)q->pid;
	} else {
		t->regs.rdi = P_PID;
		t->regs.rsi = (uint64_t)q->pid;
	}
	t->regs_dirty = true;
	/* the program's registers are its own again after the call (the
	 * kernel keeps them: compiled code may reuse them), and a rusage
	 * the kernel fills with the child's real figures is the run's */
	if (t->regs.rdi != was.rdi || t->regs.rsi != was.rsi ||
	    (w4 ? t->regs.r10 : t->regs.r8))
		thread_fix_at_exit(t, &was);
	if (q->dead && s->cfg->observer) {
		/* the child's whole life happens before the wait returns its
		 * death: what it stored in memory they share is ordered */
		const struct access_observer *o = s->cfg->observer;

		for (int i = 0; i < s->nth; i++)
			if (s->th[i].p == q)
				o->sync(o->ctx, t->idx, SYNC_JOIN, 0, i);
	}
	if (!(w.options & WNOWAIT)) {
		if (q->dead) {
			q->reaped = true;
			if (s->cfg->watch && s->cfg->watch->reaped)
				s->cfg->watch->reaped(s->cfg->watch->ctx,
						      q->idx);
			t->p->child_reaped = s->step + 1;
		} else if (q->stopped && !q->stop_reported && w.stops)
			q->stop_reported = true;
		else
			q->continued = false;
	}
	return true;
}

static void cont_process(struct session *s, struct process *q)
{
	if (!q->stopped)
		return;
	q->stopped = false;
	q->continued = true;
	for (int i = 0; i < s->nth; i++) {
		struct thread *u = &s->th[i];

		if (u->p == q && u->st == SCHED_BLOCKED &&
		    u->block == BLOCK_STOPPED)
			thread_make_ready(s, u, OP_WOKEN, 0);
	}
	wake_waiters(s, q);
}

void process_kill_execute(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	long nr;
	pid_t target;
	int sig;

	if (regs_get(t))
		return;
	nr = (long)r->orig_rax;
	if (nr == SYS_kill) {
		target = (pid_t)r->rdi;
		sig = (int)r->rsi;
	} else if (nr == SYS_tgkill) {
		target = (pid_t)r->rdi;
		sig = (int)r->rdx;
	} else {
		struct thread *u = NULL;

		for (int i = 0; i < s->nth && !u; i++)
			if (s->th[i].tid == (pid_t)r->rdi &&
			    s->th[i].st != SCHED_DEAD)
				u = &s->th[i];
		target = u ? u->p->pid : 0;
		sig = (int)r->rsi;
		if (!u)
			return;
	}
	if (sig == SIGKILL && target > 0 && target != t->p->pid) {
		struct process *q = process_find(s, target);

		/*
		 * The victim dies now, with everyone stopped, so that no later
		 * event depends on when the kernel reports its death.
		 */
		if (q && !q->dead) {
			t->skip = true;
			t->result = kill(target, SIGKILL) ? -errno : 0;
			session_reap_process(s, q);
		}
		return;
	}
	if (sig != SIGCONT)
		return;
	for (int i = 0; i < s->nprocs; i++) {
		struct process *q = s->procs[i];

		if (q->dead)
			continue;
		if (target > 0	  ? q->pid == target
		    : target < -1 ? getpgid(q->pid) == -target
		    : target == -1 ? q != t->p /* as far as ptloom goes */
				   : getpgid(q->pid) == getpgid(t->p->pid))
			cont_process(s, q);
	}
}

void process_free_all(struct session *s)
{
	for (int i = 0; i < s->nprocs; i++) {
		process_close(s->procs[i]);
		free_bps(s->procs[i]);
		free(s->procs[i]);
	}
	free(s->procs);
	s->procs = NULL;
	s->nprocs = 0;
}

/*
 * The events of a process's life as the world sees them: free children
 * (--free-children), exec (a new image: breakpoints, vDSO, setuid), a
 * fork's new process, its end and reaping, and the end of the run (kill
 * and reap everything).
 */

bool is_free_process(struct session *s, pid_t pid)
{
	for (int i = 0; i < s->nfreep; i++)
		if (s->freep[i] == pid)
			return true;
	return false;
}

static void drop_free_process(struct session *s, pid_t pid)
{
	for (int i = 0; i < s->nfreep; i++)
		if (s->freep[i] == pid) {
			s->freep[i] = s->freep[--s->nfreep];
			return;
		}
}

/*
 * The new image's auxiliary vector: AT_SYSINFO_EHDR becomes AT_IGNORE so
 * that glibc makes real clock syscalls instead of using the vDSO; the 16
 * bytes AT_RANDOM points to (the kernel's fresh randomness at every exec:
 * glibc's stack guard, Go's fastrand seed, which steers its scheduler)
 * become a function of the seed and the image number, as getrandom's
 * stream is, so that a run stays a function of its schedule.
 */
static void hide_vdso(struct session *s, struct thread *t, bool hide)
{
	uint64_t sp, argc, w[2];

	if (regs_get(t))
		return;
	sp = t->regs.rsp;
	if (mem_read(t->p, sp, &argc, 8))
		return;
	sp += 8 * (argc + 2); /* argc, argv[], NULL */
	for (int i = 0; i < 100000; i++, sp += 8) {
		if (mem_read(t->p, sp, w, 8))
			return;
		if (!w[0])
			break;
	}
	for (sp += 8; !mem_read(t->p, sp, w, 16) && w[0]; sp += 16)
		if (w[0] == 33 /* AT_SYSINFO_EHDR */ && hide) {
			uint64_t ignore = 1; /* AT_IGNORE */

			mem_write(t->p, sp, &ignore, 8);
		} else if (w[0] == 25 /* AT_RANDOM */ && w[1]) {
			uint64_t x = s->cfg->seed ^ 0x41545f52414e44ull ^
				     (uint64_t)t->p->img << 40,
				 b[2] = { splitmix(&x), splitmix(&x) };

			mem_write(t->p, w[1], b, sizeof(b));
		}
}

char *tracer_proc_file(pid_t pid, const char *name, size_t *len)
{
	char path[64];
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, 2 * cap)
						     : NULL;

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = n;
	}
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void free_strings(char **v)
{
	for (char **x = v; x && *x; x++)
		free(*x);
	free(v);
}

/*
 * What an exec'd image inherits besides its argv and environment, as text:
 * each open descriptor and what it names, the ignored and blocked signals,
 * the working directory, the umask.  Equal for P0's first and last exec:
 * the last image can be started directly with the same result.
 */
static char *exec_context(pid_t pid)
{
	char path[64], link[PATH_MAX], *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	char *st = tracer_proc_file(pid, "status", NULL);
	ssize_t n;

	if (!f) {
		free(st);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	DIR *d = opendir(path);
	struct dirent *de;
	char **fds = NULL;
	size_t nfds = 0;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%.16s", pid,
			 de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = 0;
		char **nf = realloc(fds, (nfds + 1) * sizeof(*fds));

		if (!nf)
			break;
		fds = nf;
		if (asprintf(&fds[nfds], "fd %s %s", de->d_name, link) < 0)
			break;
		nfds++;
	}
	if (d)
		closedir(d);
	qsort(fds, nfds, sizeof(*fds), cmp_str);
	for (size_t i = 0; i < nfds; i++) {
		fprintf(f, "%s\n", fds[i]);
		free(fds[i]);
	}
	free(fds);
	for (char *l = st; l && *l;) {
		char *e = strchr(l, '\n');

		if (e)
			*e = 0;
		if (!strncmp(l, "SigIgn:", 7) || !strncmp(l, "SigBlk:", 7) ||
		    !strncmp(l, "Umask:", 6) || !strncmp(l, "NoNewPrivs:", 11))
			fprintf(f, "%s\n", l);
		l = e ? e + 1 : NULL;
	}
	free(st);
	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	fprintf(f, "cwd %s\n", link);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* P0 exec'd (see struct session's root_*). */
static void note_root_exec(struct session *s, struct process *p)
{
	char *ctx = exec_context(p->pid);

	char exe[PATH_MAX], name[64];
	ssize_t n;

	s->root_execs++;
	free(s->root_cmd);
	free(s->root_env);
	free(s->root_exe);
	snprintf(name, sizeof(name), "/proc/%d/exe", p->pid);
	n = readlink(name, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	s->root_exe = n > 0 ? strdup(exe) : NULL;
	s->root_cmd = tracer_proc_file(p->pid, "cmdline", &s->root_cmd_len);
	s->root_env = tracer_proc_file(p->pid, "environ", &s->root_env_len);
	s->root_why[0] = 0;
	if (s->root_execs == 1) {
		free(s->root_ctx);
		s->root_ctx = ctx;
		return;
	}
	int others = s->nfreep + s->nstray;

	for (int i = 1; i < s->nprocs; i++)
		others += !s->procs[i]->dead;
	if (others)
		snprintf(s->root_why, sizeof(s->root_why),
			 "%d other process%s of it still ran", others,
			 others > 1 ? "es" : "");
	else if (!ctx || !s->root_ctx || strcmp(ctx, s->root_ctx))
		snprintf(s->root_why, sizeof(s->root_why),
			 "it changed what the program inherits (descriptors, "
			 "signals, directory or umask)");
	else if (!s->root_cmd || !s->root_env || !s->root_cmd_len)
		snprintf(s->root_why, sizeof(s->root_why),
			 "its command line was unreadable");
	free(ctx);
}

/* A NUL-separated list as a NULL-terminated vector (malloc'd, one block
 * of pointers and each string strdup'd), NULL on failure. */
static char **split_list(const char *buf, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += !buf[i];
	if (len && buf[len - 1])
		n++;
	char **v = calloc(n + 1, sizeof(*v));

	if (!v)
		return NULL;
	size_t k = 0;

	for (size_t i = 0; i < len && k < n; k++) {
		v[k] = strndup(buf + i, len - i);
		if (!v[k]) {
			free_strings(v);
			return NULL;
		}
		i += strlen(v[k]) + 1;
	}
	return v;
}

/* At P0's first thread: the last exec, when there was a wrapper before it
 * (run_result's exec_argv). */
static void note_last_exec(struct session *s, const char *exe)
{
	struct run_result *res = s->res;
	struct stat a, b;

	if (s->root_execs < 2)
		return;
	if (s->root_why[0]) {
		snprintf(res->exec_why, sizeof(res->exec_why), "%s",
			 s->root_why);
		return;
	}
	res->exec_argv = split_list(s->root_cmd, s->root_cmd_len);
	res->exec_envp = split_list(s->root_env, s->root_env_len);
	if (!res->exec_argv || !res->exec_envp || !res->exec_argv[0]) {
		free_strings(res->exec_argv);
		free_strings(res->exec_envp);
		res->exec_argv = res->exec_envp = NULL;
		snprintf(res->exec_why, sizeof(res->exec_why), "out of memory");
		return;
	}
	/* argv[0] is what the run execs: the executable itself unless it
	 * already names that file */
	char *a0 = res->exec_argv[0];

	if (a0[0] != '/' || stat(a0, &a) || stat(exe, &b) ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		char *e = strdup(exe);

		if (!e) {
			snprintf(res->exec_why, sizeof(res->exec_why),
				 "out of memory");
			free_strings(res->exec_argv);
			free_strings(res->exec_envp);
			res->exec_argv = res->exec_envp = NULL;
			return;
		}
		free(a0);
		res->exec_argv[0] = e;
	}
}

void process_note_last_exec(struct session *s)
{
	if (s->cfg->note_execs && s->root_exe && !s->res->exec_argv &&
	    !s->res->exec_why[0])
		note_last_exec(s, s->root_exe);
}

/*
 * Would the exec of the file at path (a process's /proc/PID/exe) run with
 * other privileges natively than under ptloom?  A set-user-ID or
 * set-group-ID file changes the process's credentials unless they are its
 * own already or the file system is mounted nosuid; under ptloom it never
 * does, whoever runs it: every process of a run has no_new_privs (the
 * launcher's, spawn.c), under which the kernel keeps the caller's ids
 * (and a traced exec changes them only when the tracer has
 * CAP_SYS_PTRACE).  Without the bit, root's runs would change them, but
 * the kernel then turns address randomisation back on for the new image
 * (PER_CLEAR_ON_SETID), and no two runs would be alike.  The same for
 * every process, the first one too.
 */
static bool exec_loses_privileges(const char *path, const struct stat *sb)
{
	struct statvfs vfs;

	if (!((sb->st_mode & S_ISUID) && sb->st_uid != geteuid()) &&
	    !((sb->st_mode & S_ISGID) && (sb->st_mode & S_IXGRP) &&
	      sb->st_gid != getegid()))
		return false;
	return statvfs(path, &vfs) || !(vfs.f_flag & ST_NOSUID);
}

void on_exec(struct session *s, struct thread *t)
{
	struct process *p = t->p;
	char name[64];
	struct stat sb;

	if (s->sym_pid == p->pid)
		drop_symbols(s); /* a new image */
	session_symbolize_fork_image(s, p);
	process_exec(s, p);
	session_policy_exec(s, p);
	hide_vdso(s, t, !agent_install(s, t));
	tsc_install(s, p); /* the executable's and ld.so's, before they run */
	if (p->idx == 0) {
		s->exec_seen = true;
		if (s->cfg->note_execs)
			note_root_exec(s, p);
	}
	timer_exec(s, p->pid);
	signal_handler_leave(s, t); /* a handler that execs */
	if (s->cfg->watch && s->cfg->watch->exec) {
		if (s->cfg->watch->exec(s->cfg->watch->ctx, p->idx, p->parent,
					p->pid, t->idx)) {
			/* held: resumed from this stop when let go */
			t->held = true;
			t->st = SCHED_BLOCKED;
			t->block = BLOCK_HELD;
			t->timed = false;
			s->nheld++;
			s->need_schedule = true;
		}
		session_restart_clock(s);
	}
	snprintf(name, sizeof(name), "/proc/%d/exe", p->pid);
	if (stat(name, &sb) == 0 && exec_loses_privileges(name, &sb)) {
		char label[64];

		process_thread_label(s, t, label, sizeof(label));
		session_fail(s, FAIL_UNSUPPORTED, t,
			     "unsupported: %s execs a set-user-ID or "
			     "set-group-ID program (ptloom runs it without "
			     "its privileges: no_new_privs)",
			     label);
	}
}

/*
 * execve from a thread that is not its process's leader: the kernel ended
 * every other thread and gave the exec'ing one the leader's tid (the
 * event message holds its former tid).  Follow it: the others are gone,
 * and the exec'ing thread goes on as the leader.  See
 * tests/real/exec_thread.c.
 */

struct thread *exec_from_thread(struct session *s, struct thread *t)
{
	unsigned long former;
	struct thread *x;

	if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former) < 0 ||
	    (pid_t)former == t->tid ||
	    !(x = find_thread(s, (pid_t)former)) || x->p != t->p)
		return t;
	for (int i = 0; i < s->nth; i++) {
		struct thread *o = &s->th[i];

		if (o->p != x->p || o == x || o->st == SCHED_DEAD)
			continue;
		o->ctid = 0; /* no joiner of theirs survives the exec */
		thread_gone(s, o);
		if (o->idx == s->current)
			s->current = x->idx;
	}
	t->tid = -1; /* the old leader's entry: never matched again */
	x->tid = t->p->pid;
	x->ctid = 0;
	x->stop = STOP_NONE;
	x->st = SCHED_RUNNING;
	x->regs_valid = false;
	s->current = x->idx;
	return x;
}

/* Stops of the program's own child processes: they run freely. */
void free_process_stop(struct session *s, pid_t pid, int status)
{
	int sig = WSTOPSIG(status), ev = status >> 16;
	unsigned long msg;

	if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
	    ev == PTRACE_EVENT_CLONE) {
		if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 &&
		    s->nfreep < 64) {
			s->freep[s->nfreep++] = (pid_t)msg;
			if (take_stray(s, (pid_t)msg))
				ptrace(PTRACE_CONT, (pid_t)msg, 0, 0);
		}
		sig = 0;
	} else if (ev || sig == SIGSTOP || sig == SIGTRAP) {
		sig = 0;
	} else if (sig == SIGSEGV) {
		/* rdtsc: PR_SET_TSC is inherited; answer from the clock */
		struct user_regs_struct r;
		char name[64];

		snprintf(name, sizeof(name), "/proc/%d/mem", pid);
		int fd = open(name, O_RDONLY | O_CLOEXEC);

		uint8_t c3[3] = { 0 };

		if (fd >= 0 && ptrace(PTRACE_GETREGS, pid, 0, &r) == 0 &&
		    pread(fd, c3, 3, (off_t)r.rip) >= 2 && c3[0] == 0x0f &&
		    (c3[1] == 0x31 || (c3[1] == 0x01 && c3[2] == 0xf9))) {
			/* not ours to make deterministic: the real counter,
			 * so the child's vDSO clock runs as it should */
			uint32_t lo, hi;

			__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
			if (c3[1] == 0x31) {
				r.rip += 2;
			} else {
				r.rip += 3;
				r.rcx = 0;
			}
			r.rax = lo;
			r.rdx = hi;
			ptrace(PTRACE_SETREGS, pid, 0, &r);
			sig = 0;
		}
		if (fd >= 0)
			close(fd);
	}
	ptrace(PTRACE_CONT, pid, 0, sig);
}

const char *sanitizer_name(int sig)
{
	static const char *const names[SANITIZER_MAX] = {
		[SANITIZER_OTHER] = "a sanitizer's report",
		[SANITIZER_ADDRESS] = "AddressSanitizer",
		[SANITIZER_THREAD] = "ThreadSanitizer",
		[SANITIZER_UNDEFINED] = "UndefinedBehaviorSanitizer",
		[SANITIZER_LEAK] = "LeakSanitizer",
		[SANITIZER_MEMORY] = "MemorySanitizer",
		[SANITIZER_HWADDRESS] = "HWAddressSanitizer",
	};
	int k = sig - SIG_SANITIZER;

	return k > 0 && k < SANITIZER_MAX ? names[k] : NULL;
}

/* Which sanitizer a runtime's file name says (libasan.so.8,
 * libclang_rt.tsan-x86_64.so, ...), 0 if none. */
static int sanitizer_of_name(const char *base)
{
	if (!strstr(base, "san") || !strstr(base, ".so"))
		return 0;
	if (strstr(base, "hwasan"))
		return SANITIZER_HWADDRESS;
	if (strstr(base, "asan"))
		return SANITIZER_ADDRESS;
	if (strstr(base, "tsan"))
		return SANITIZER_THREAD;
	if (strstr(base, "ubsan"))
		return SANITIZER_UNDEFINED;
	if (strstr(base, "lsan"))
		return SANITIZER_LEAK;
	if (strstr(base, "msan"))
		return SANITIZER_MEMORY;
	return 0;
}

int sanitizer_at(pid_t pid, uint64_t pc)
{
	char path[64], line[PATH_MAX + 128], file[PATH_MAX], fn[256];
	int k = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	file[0] = 0;
	unsigned long long lo, hi, off = 0;

	while (fgets(line, sizeof(line), f)) {
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off,
			   &n) < 3 || pc < lo || pc >= hi)
			continue;
		if (n > 0 && line[n] == '/') {
			snprintf(file, sizeof(file), "%s", line + n);
			file[strcspn(file, "\n")] = 0;
			off += pc - lo;
		}
		break;
	}
	fclose(f);
	if (!file[0])
		return 0;
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;

	if ((k = sanitizer_of_name(base)))
		return k;
	/* a runtime linked into the program (clang's default): the
	 * exiting code is one of its __sanitizer functions */
	if (elf_function_at(file, off, fn, sizeof(fn)) ||
	    !strstr(fn, "__sanitizer"))
		return 0;
	static const struct {
		const char *sym;
		int kind;
	} init[] = {
		{ "__hwasan_init", SANITIZER_HWADDRESS },
		{ "__asan_init", SANITIZER_ADDRESS },
		{ "__tsan_init", SANITIZER_THREAD },
		{ "__msan_init", SANITIZER_MEMORY },
		{ "__ubsan_handle_add_overflow", SANITIZER_UNDEFINED },
		{ "__lsan_do_leak_check", SANITIZER_LEAK },
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		if (elf_symbol_values(file, init[i].sym, &v, 1) > 0)
			return init[i].kind;
	return SANITIZER_OTHER;
}

/* The leader of a process other than P0 was reaped. */
/*
 * A process other than the first died of a crash signal of its own (not
 * one another process sent it): the command's exit status may hide it (a
 * shell's `./racy; true`), so the run says so whatever its verdict, and
 * with --fail-on-child-crash it is the run's failure.  Death tests crash
 * on purpose, hence a note and not a failure by default.
 */
static void child_crash(struct session *s, struct process *p, int sig)
{
	struct run_result *r = s->res;
	struct thread *t = NULL;

	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL &&
	    sig != SIGFPE && sig != SIGABRT && !sanitizer_name(sig))
		return;
	if (sanitizer_name(sig)) {
		/* the exit_group of its report */
		for (int i = 0; i < s->nth && !t; i++)
			if (s->th[i].idx == p->san_thread && s->th[i].p == p)
				t = &s->th[i];
	} else if (s->fatal_thread >= 0 && s->fatal_thread < s->nth &&
	    s->th[s->fatal_thread].p == p && s->fatal_sig == sig) {
		if (s->fatal_foreign)
			return; /* another process killed it: its business */
		t = &s->th[s->fatal_thread];
	}
	if (r->child_crash_sig)
		return; /* the first one a run */
	r->child_crash_sig = sig;
	if (t) {
		process_thread_label(s, t, r->child_crash_label,
				     sizeof(r->child_crash_label));
		snprintf(r->child_crash_where, sizeof(r->child_crash_where),
			 "%s", sanitizer_name(sig) ? p->san_where
						   : s->fatal_where);
	} else {
		snprintf(r->child_crash_label, sizeof(r->child_crash_label),
			 "P%d %s", p->idx, p->comm);
	}
	if (!s->cfg->fail_on_child_crash || s->failed)
		return;
	if (sanitizer_name(sig))
		session_fail(s, FAIL_CRASH, NULL, "ended by %s (exit status "
			     "%d; a process of the program; "
			     "--fail-on-child-crash)",
			     sanitizer_name(sig), WEXITSTATUS(p->status));
	else
		session_fail(s, FAIL_CRASH, NULL, "killed by SIG%s (a process "
			     "of the program; --fail-on-child-crash)",
			     sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	r->signal = sig;
	r->thread = t ? t->idx : -1;
	snprintf(r->thread_label, sizeof(r->thread_label), "%s",
		 r->child_crash_label);
	snprintf(r->location, sizeof(r->location), "%s",
		 r->child_crash_where);
}

static void process_end(struct session *s, struct process *p, int status)
{
	for (int i = 0; i < s->nth; i++)
		if (s->th[i].p == p) {
			if (s->th[i].idx == s->current)
				s->need_schedule = true;
			thread_gone(s, &s->th[i]);
		}
	if (WIFSIGNALED(status) && !s->child_sig) {
		/* what a runner reports as its failure, most likely: the
		 * first crash (a parent's exit status often passes it on) */
		s->child_thread = -1;
		s->child_sig = WTERMSIG(status);
		s->child_status = 0;
		s->child_where[0] = s->child_label[0] = 0;
		if (s->fatal_thread >= 0 && s->fatal_thread < s->nth &&
		    s->th[s->fatal_thread].p == p &&
		    s->fatal_sig == WTERMSIG(status)) {
			s->child_thread = s->fatal_thread;
			snprintf(s->child_where, sizeof(s->child_where), "%s",
				 s->fatal_where);
			process_thread_label(s, &s->th[s->fatal_thread],
					     s->child_label,
					     sizeof(s->child_label));
		} else {
			snprintf(s->child_label, sizeof(s->child_label),
				 "P%d %s", p->idx, p->comm);
		}
	}
	if (p->idx > 0 && WIFSIGNALED(status))
		child_crash(s, p, WTERMSIG(status));
	else if (p->idx > 0 && WIFEXITED(status) && WEXITSTATUS(status) &&
		 p->san_sig) {
		p->status = status;
		child_crash(s, p, p->san_sig);
	}
	if (s->sym_pid == p->pid)
		drop_symbols(s);
	process_died(s, p, status);
}

/*
 * Reap every thread of p, which is dying.  The leader is reported only
 * after every other thread, those ptloom has not met yet included (a
 * thread cloned just before the end), so the rest is collected with
 * waitpid(-1) and dispatched as usual until the leader is gone.  Ctrl-C
 * and --timeout still end the wait.
 */
void session_reap_process(struct session *s, struct process *p)
{
	int st;

	if (p->dead || p->reaping)
		return;
	p->reaping = true;
	for (int i = 0; i < s->nth && !p->dead; i++) {
		struct thread *u = &s->th[i];

		if (u->p != p || u->st == SCHED_DEAD || u->tid == p->pid)
			continue;
		for (;;) {
			pid_t w = waitpid(u->tid, &st, __WALL);

			if (w < 0 && errno == EINTR) {
				if (check_limits(s, 0))
					goto out;
				continue;
			}
			if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
				thread_gone(s, u);
				break;
			}
			/* a stop of a thread that is not dying after all */
			on_status(s, w, st);
			goto out;
		}
	}
	while (!p->dead && !s->ended) {
		pid_t w = waitpid(-1, &st, __WALL);

		if (w < 0 && errno == EINTR) {
			if (check_limits(s, 0))
				break;
			continue;
		}
		if (w < 0) {
			process_end(s, p, 0);
			break;
		}
		on_status(s, w, st);
	}
out:
	p->reaping = false;
}

void on_death(struct session *s, pid_t tid, int status)
{
	struct thread *t = find_thread(s, tid);

	s->stop_kinds[STOPK_DEATH]++;
	if (tid == s->pid) {
		s->ended = true;
		s->leader_reaped = true;
		if (WIFEXITED(status)) {
			s->res->exit_status = WEXITSTATUS(status);
		} else {
			s->res->signal = WTERMSIG(status);
			s->res->exit_status = 128 + WTERMSIG(status);
		}
		for (int i = 0; i < s->nth; i++)
			s->th[i].st = SCHED_DEAD;
		s->procs[0]->dead = true;
		return;
	}
	if (!t) {
		drop_free_process(s, tid);
		s->sig_maybe = true; /* its SIGCHLD */
		return;
	}
	struct process *p = t->p;
	bool was_current = t->idx == s->current;

	if (t->held) {
		t->held = false;
		s->nheld--;
	}
	/* a thread's own exit, not its process's end */
	bool own_exit = t->kind == OP_EXIT && t->st == SCHED_RUNNING;

	if (tid == p->pid) {
		if (!p->dead)
			process_end(s, p, status);
		return;
	}
	thread_gone(s, t);
	if (was_current)
		s->need_schedule = true;
	if (!own_exit)
		session_reap_process(s, p);
}

/*
 * fork, vfork, clone without CLONE_THREAD: a new process in the same
 * world.  Its first thread starts like a new thread; a fork child inherits
 * the int3 bytes of its parent, so it gets the same breakpoints.  A vfork
 * parent cannot run before the child execs or exits.
 */
void on_fork_event(struct session *s, int parent_idx, int ev)
{
	unsigned long msg;
	struct thread *pt = &s->th[parent_idx];

	if (ptrace(PTRACE_GETEVENTMSG, pt->tid, 0, &msg) < 0) {
		resume(s, pt, 0);
		return;
	}
	struct process *q = process_new(s, (pid_t)msg, pt->p);

	/* the watcher learns of the process before its first thread */
	if (q && s->cfg->watch && s->cfg->watch->fork)
		s->cfg->watch->fork(s->cfg->watch->ctx, q->idx, q->parent);
	struct thread *c = q ? session_new_thread(s, (pid_t)msg, q) : NULL;

	if (!c) {
		kill((pid_t)msg, SIGKILL);
		session_fail(s, FAIL_INTERNAL, pt, "out of memory");
		return;
	}
	pt = &s->th[parent_idx];
	process_open(q);
	process_copy_bps(q, pt->p);
	q->exec_seen = pt->p->exec_seen;
	q->set_pin = pt->p->set_pin;
	pt = thread_born(s, c, parent_idx, true);
	thread_clone_made(s, pt, c);
	if (ev == PTRACE_EVENT_VFORK) {
		q->vfork_parent = pt->idx;
		pt->st = SCHED_BLOCKED;
		pt->block = BLOCK_VFORK;
		pt->timed = false;
		s->need_schedule = true;
		return;
	}
	/*
	 * A fork's parent goes on without a scheduling point: from here the
	 * two address spaces are apart, so the child's first steps commute
	 * with the parent's until the parent's next point, where the child
	 * may run (a point there per fork multiplied the schedules behind
	 * every shell and runner).
	 */
	pt->kind = OP_NONE;
	pt->arg = 0;
	resume(s, pt, 0);
}

/*
 * The files P0 maps executable, but the program itself: ld.so, libc and
 * the other shared objects, so that a schedule file can name the one that
 * changed when a replay diverges.  Once per run.
 */
void collect_objects(struct session *s, struct process *p)
{
	struct run_result *r = s->res;
	char name[64], exe[PATH_MAX], line[PATH_MAX + 128];
	ssize_t n;
	FILE *f;

	if (r->objects || (p->idx == 0 && checkpoint_objects(s, r)))
		return;
	snprintf(name, sizeof(name), "/proc/%d/exe", p->pid);
	n = readlink(name, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(name, sizeof(name), "/proc/%d/maps", p->pid);
	if (!(f = fopen(name, "re")))
		return;
	r->objects = calloc(1, sizeof(*r->objects));
	while (r->objects && fgets(line, sizeof(line), f)) {
		char perm[8], *path;
		int off = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%*s %7s %*s %*s %*s%n", perm, &off) != 1 ||
		    !strchr(perm, 'x'))
			continue;
		path = line + off;
		path += strspn(path, " ");
		if (path[0] != '/' || !strcmp(path, exe))
			continue;
		bool seen = false;

		for (int i = 0; i < r->nobjects && !seen; i++)
			seen = !strcmp(r->objects[i], path);
		if (seen)
			continue;
		char **m = realloc(r->objects,
				   (size_t)(r->nobjects + 2) * sizeof(*m));

		if (!m)
			break;
		r->objects = m;
		if ((m[r->nobjects] = strdup(path)))
			r->nobjects++;
	}
	fclose(f);
	if (p->idx == 0)
		checkpoint_keep_objects(s, r);
}

/* The first process's executable when it creates its first thread. */
void note_exe(struct session *s, struct process *p)
{
	char name[64], exe[PATH_MAX];
	ssize_t n;

	if (p->idx || s->res->exe)
		return;
	snprintf(name, sizeof(name), "/proc/%d/exe", p->pid);
	n = readlink(name, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		s->res->exe = strdup(exe);
		note_last_exec(s, exe);
	}
}

/*
 * The SysV IPC objects the run made with IPC_PRIVATE, once its processes
 * are gone: nobody can find them by key, and a run that ptloom ended early
 * (the reduction cuts runs short, a failure, a limit) never removed its
 * own, so an exploration left one semaphore set per such run (154 after
 * a few explorations of a 186-run program).  One the program removed
 * itself is gone already (EINVAL, ignored).
 */
static void remove_private_ipc(struct session *s)
{
	for (int i = 0; i < s->nipc; i++) {
		int id = s->ipc[i].id;

		if (s->ipc[i].nr == SYS_semget)
			semctl(id, 0, IPC_RMID);
		else if (s->ipc[i].nr == SYS_msgget)
			msgctl(id, IPC_RMID, NULL);
		else
			shmctl(id, IPC_RMID, NULL);
	}
	s->nipc = 0;
}

/*
 * The files the run created exclusively and the directories it made in a
 * temporary directory (world.h run_temp), once its processes are gone:
 * every run makes the same names (the random stream is ptloom's), and a
 * run that ptloom ended early never removed its own, so the next run's
 * mkstemp met them and tried other names (a compiler under ptloom: 1,187
 * tries and 1,438 stops a run instead of 24) and a run's course hung on
 * what earlier ones left.  Newest first; only what still has the inode it
 * was made with; a directory only once empty.  discard: close only (the
 * processes live on, a debugger's).
 */
static void remove_run_temp_files(struct session *s, bool discard)
{
	for (int i = s->ntemp - 1; i >= 0; i--) {
		struct run_temp *m = &s->temp[i];
		struct stat sb;

		if (!discard &&
		    !fstatat(m->dirfd, m->name, &sb, AT_SYMLINK_NOFOLLOW) &&
		    sb.st_dev == m->dev && sb.st_ino == m->ino)
			unlinkat(m->dirfd, m->name, m->dir ? AT_REMOVEDIR : 0);
		close(m->dirfd);
	}
	s->ntemp = 0;
}

/* Kill the process group and reap everything, so nothing is left behind. */
void kill_and_reap(struct session *s)
{
	int status;

	if (s->handed_over) {
		remove_run_temp_files(s, true);
		return; /* the caller's now, stopped; it kills it */
	}
	remove_private_ipc(s);
	/*
	 * One process, its leader reaped: the kernel reports a traced
	 * leader's end only once its other threads are reaped, and the
	 * process made no other process ptloom did not see (a fork stops
	 * at its event first, and nothing else ran meanwhile): nothing is
	 * left to kill or reap.
	 */
	if (s->leader_reaped && s->nprocs == 1 && !s->nfreep && !s->nstray) {
		spawn_unregister(s->pid);
		remove_run_temp_files(s, false);
		return;
	}
	/*
	 * A reaped leader's pid, and its group's id once no member is left,
	 * may already be another process's (pid_max is 32768 on small
	 * machines, and a replay asks for its recorded pids): signal them
	 * only while something of ours pins them, the leader unreaped or a
	 * known process of the run still in the group.
	 */
	bool group_pinned = !s->leader_reaped;

	for (int i = 1; i < s->nprocs && !group_pinned; i++)
		group_pinned = !s->procs[i]->dead &&
			       getpgid(s->procs[i]->pid) == s->pid;
	if (group_pinned)
		kill(-s->pid, SIGKILL);
	if (!s->leader_reaped)
		kill(s->pid, SIGKILL);
	for (int i = 0; i < s->nfreep; i++)
		kill(s->freep[i], SIGKILL);
	/* every process of the tree, in whatever group it moved to */
	for (int i = 0; i < s->nprocs; i++)
		if (!s->procs[i]->dead)
			kill(s->procs[i]->pid, SIGKILL);
	/*
	 * Reap the run's threads and processes: its process group, then the
	 * children that left it.  Not waitpid(-1): the launcher (spawn.c) is
	 * our child too and lives on.
	 */
	while (group_pinned &&
	       (waitpid(-s->pid, &status, __WALL) > 0 || errno == EINTR))
		;
	for (int i = 0; i < s->nfreep; i++)
		while (waitpid(s->freep[i], &status, __WALL) > 0 ||
		       errno == EINTR)
			;
	/*
	 * A program that left its process group (setsid).  Newest first: a
	 * traced leader is reported only after the other threads of its
	 * group are reaped, so waiting for it first would block for ever.
	 * Not blocking, even so: a thread the session never saw (a clone
	 * whose event was not taken yet when the run ended, as an interrupt
	 * ends it) holds its leader's end back too, and only waitpid(-1)
	 * meets it; a task that will not die in 10 s is left to the kernel,
	 * which detaches it when ptloom exits.
	 */
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = s->nth - 1; i >= 0; i--) {
		pid_t tid = s->th[i].tid;

		while (tid > 0) {
			pid_t w = waitpid(tid, &status, __WALL | WNOHANG);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0 || (w > 0 && !WIFSTOPPED(status)))
				break; /* reaped, or not ours to wait for */
			while (waitpid(-1, &status, __WALL | WNOHANG) > 0)
				;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 10)
				break;
			usleep(1000);
		}
	}
	while (waitpid(-1, &status, __WALL | WNOHANG) > 0)
		;
	spawn_unregister(s->pid);
	remove_run_temp_files(s, false);
}
