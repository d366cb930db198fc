/*
 * Syscalls at their seccomp stop: which are scheduling points, and the
 * emulation of those whose outcome ptloom decides (futex waits and wakes,
 * sleeps, clocks, randomness, blocking on descriptors).
 *
 * syscall_enter() runs when a thread reaches the stop; it either handles
 * the call at once (clocks, getrandom, ordinary I/O) or records it as the
 * thread's pending operation.  syscall_execute() runs when the scheduler
 * has chosen the thread to perform that operation.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session_int.h"

#ifndef CLONE_THREAD
#define CLONE_THREAD 0x00010000
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#ifndef CLONE_VM
#define CLONE_VM 0x00000100
#endif
#ifndef CLONE_VFORK
#define CLONE_VFORK 0x00004000
#endif
#ifndef CLONE_CHILD_CLEARTID
#define CLONE_CHILD_CLEARTID 0x00200000
#endif

uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void skip(struct thread *t, int64_t result)
{
	t->skip = true;
	t->result = result;
}

/* Resume the current thread straight away (not a scheduling point). */
static bool handled(void)
{
	return false;
}

/*
 * Futex waits are keyed by process and address: private futexes of two
 * processes at one address are different words.  A shared futex in a
 * MAP_SHARED mapping is keyed by what it maps (device, inode, offset), as
 * the kernel does, so waiters in two processes meet.
 */
static uint64_t fkey_op(struct session *s, struct thread *t, uint64_t addr,
			int op)
{
	char name[64], line[512];
	uint64_t key = addr ^ ((uint64_t)t->p->idx << 48);
	FILE *f;

	/* (one process: by address, unless it maps a file twice) */
	if ((op & FUTEX_PRIVATE_FLAG) || (s->nprocs < 2 && !s->napart))
		return key;
	snprintf(name, sizeof(name), "/proc/%d/maps", t->p->pid);
	if (!(f = fopen(name, "re")))
		return key;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		char perm[8];

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perm,
			   &off, &maj, &min, &ino) != 7 ||
		    addr < lo || addr >= hi)
			continue;
		if (perm[3] == 's') {
			uint64_t h = 0xcbf29ce484222325ull;
			uint64_t v[3] = { (uint64_t)maj << 32 | min, ino,
					  off + (addr - lo) };

			for (int i = 0; i < 3; i++)
				h = (h ^ v[i]) * 0x100000001b3ull;
			key = (1ull << 62) | (h & ((1ull << 62) - 1));
		}
		break;
	}
	fclose(f);
	return key;
}

#define fkey(t, addr) fkey_op(s, (t), (addr), (int)(t)->regs.rsi)

static bool point(struct thread *t, int kind, uint64_t obj, int64_t arg)
{
	t->kind = (uint8_t)kind;
	t->fn = 0;
	t->obj = obj;
	t->obj2 = 0;
	t->file_io = false;
	t->futex_woken = false;
	t->arg = arg;
	t->pc = t->regs.rip;
	t->yield = kind == OP_YIELD;
	t->wbig = false;
	t->wdone = 0;
	return true;
}

static int read_ts(struct thread *t, uint64_t addr, uint64_t *ns)
{
	struct timespec ts;

	if (mem_read(t->p, addr, &ts, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
		return -EINVAL;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

static uint64_t clock_now(struct session *s, int clk)
{
	time_observed(s);
	switch (clk) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_TAI:
		return s->realtime_base + s->now;
	default:
		return s->now;
	}
}

static void emulate_clock_gettime(struct session *s, struct thread *t)
{
	int clk = (int)t->regs.rdi;
	uint64_t v;

	s->now += s->quantum;
	if (clk < 0 || clk > CLOCK_TAI) {
		skip(t, -EINVAL);
		return;
	}
	v = clock_now(s, clk);
	struct timespec ts = { (time_t)(v / 1000000000ull),
			       (long)(v % 1000000000ull) };

	if (!t->regs.rsi)
		skip(t, -EFAULT);
	else
		skip(t, mem_write(t->p, t->regs.rsi, &ts, sizeof(ts)) ? -EFAULT
								   : 0);
}

static void emulate_gettimeofday(struct session *s, struct thread *t)
{
	s->now += s->quantum;
	uint64_t v = clock_now(s, CLOCK_REALTIME);
	struct timeval tv = { (time_t)(v / 1000000000ull),
			      (suseconds_t)(v % 1000000000ull / 1000) };

	if (t->regs.rdi && mem_write(t->p, t->regs.rdi, &tv, sizeof(tv))) {
		skip(t, -EFAULT);
		return;
	}
	if (t->regs.rsi) {
		struct timezone tz = { 0, 0 };

		mem_write(t->p, t->regs.rsi, &tz, sizeof(tz));
	}
	skip(t, 0);
}

static void emulate_time(struct session *s, struct thread *t)
{
	s->now += s->quantum;
	int64_t v = (int64_t)(clock_now(s, CLOCK_REALTIME) / 1000000000ull);

	if (t->regs.rdi)
		mem_write(t->p, t->regs.rdi, &v, sizeof(v));
	skip(t, v);
}

/*
 * What the machine's momentary state would answer, answered from the run:
 * a native run's CPU times, context switches and page faults, its load
 * average, free memory and uptime change from run to run and with the
 * load beside it, and a program that reads them (a runtime sizing a pool
 * by free memory, a test printing its CPU time) would otherwise run
 * differently in a replay.  CPU time is the virtual clock's (as
 * CLOCK_PROCESS_CPUTIME_ID), the counters 0; the machine's constants
 * (total memory and swap) stay the kernel's.
 */
static void emulate_getrusage(struct session *s, struct thread *t)
{
	int who = (int)t->regs.rdi;
	struct rusage ru;

	s->now += s->quantum;
	if (who != RUSAGE_SELF && who != RUSAGE_THREAD &&
	    who != RUSAGE_CHILDREN) {
		skip(t, -EINVAL);
		return;
	}
	memset(&ru, 0, sizeof(ru));
	if (who != RUSAGE_CHILDREN) {
		uint64_t v = clock_now(s, CLOCK_PROCESS_CPUTIME_ID);

		ru.ru_utime.tv_sec = (time_t)(v / 1000000000ull);
		ru.ru_utime.tv_usec = (suseconds_t)(v % 1000000000ull / 1000);
	}
	skip(t, mem_write(t->p, t->regs.rsi, &ru, sizeof(ru)) ? -EFAULT : 0);
}

static void emulate_times(struct session *s, struct thread *t)
{
	s->now += s->quantum;
	/* clock ticks of 10 ms (sysconf(_SC_CLK_TCK) is 100 on Linux) */
	int64_t ticks = (int64_t)(clock_now(s, CLOCK_MONOTONIC) / 10000000ull);
	struct tms tm = { .tms_utime = (clock_t)ticks };

	if (t->regs.rdi && mem_write(t->p, t->regs.rdi, &tm, sizeof(tm))) {
		skip(t, -EFAULT);
		return;
	}
	skip(t, ticks);
}

static void emulate_sysinfo(struct session *s, struct thread *t)
{
	struct sysinfo si;
	int live = 0;

	s->now += s->quantum;
	if (sysinfo(&si)) {
		skip(t, -errno);
		return;
	}
	for (int i = 0; i < s->nth; i++)
		live += s->th[i].st != SCHED_DEAD;
	si.uptime = (long)(clock_now(s, CLOCK_MONOTONIC) / 1000000000ull);
	memset(si.loads, 0, sizeof(si.loads));
	si.freeram = si.totalram / 2;
	si.sharedram = 0;
	si.bufferram = 0;
	si.freeswap = si.totalswap;
	si.procs = (unsigned short)live;
	si.freehigh = si.totalhigh / 2;
	skip(t, mem_write(t->p, t->regs.rdi, &si, sizeof(si)) ? -EFAULT : 0);
}

/* len bytes of the --seed stream to addr: the call's result */
static void emulate_random(struct session *s, struct thread *t,
			   uint64_t addr, size_t len)
{
	size_t done = 0;
	uint8_t buf[256];

	if (len > (1u << 25))
		len = 1u << 25;
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);

		for (size_t i = 0; i < n; i += 8) {
			uint64_t r = splitmix(&s->rng);

			memcpy(buf + i, &r, n - i < 8 ? n - i : 8);
		}
		if (mem_write(t->p, addr + done, buf, n)) {
			skip(t, done ? (int64_t)done : -EFAULT);
			return;
		}
		done += n;
	}
	skip(t, (int64_t)len);
}

static void emulate_getrandom(struct session *s, struct thread *t)
{
	emulate_random(s, t, t->regs.rdi, t->regs.rsi);
}

/*
 * sched_getaffinity(pid, len, mask): every process of the program is
 * pinned to ptloom's CPU (a wake-up across CPUs costs 20-50 us), but a
 * native run may use every CPU ptloom was started with, and runtimes size
 * their pools by this mask: libgomp's default team, oneTBB's arena, Go's
 * GOMAXPROCS, Rust's available_parallelism, nproc, make -j's load.  Told
 * one CPU, they run one worker, and a PASS would cover none of the
 * concurrency a native run has.  So while the task's kernel mask is
 * still exactly the pin, the call answers with the native CPUs (as many
 * bytes as the kernel would copy: the call made here for the same task
 * and length says how many, and gives the kernel's own error if any).
 * A mask the program set itself (sched_setaffinity, OMP_PROC_BIND), a
 * task outside the program, or no pin: the kernel answers.
 */
static bool is_pin(const struct session_config *c, const unsigned char *mask,
		   size_t n)
{
	if (c->cpu < 0 || (size_t)c->cpu / 8 >= n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (mask[i] != (i == (size_t)c->cpu / 8 ?
				1u << (c->cpu % 8) : 0))
			return false;
	return true;
}

static void emulate_getaffinity(struct session *s, struct thread *t)
{
	const struct session_config *c = s->cfg;
	pid_t tid = (pid_t)t->regs.rdi ? (pid_t)t->regs.rdi : t->tid;
	size_t len = t->regs.rsi;
	unsigned char mask[1024], ans[1024];
	struct thread *of = find_thread(s, tid);

	if (c->cpu < 0 || c->cpu >= CPU_SETSIZE || !CPU_COUNT(&c->cpus) ||
	    (len & (sizeof(long) - 1)) || !of || of->p->set_pin)
		return;
	long n = syscall(SYS_sched_getaffinity, tid,
			 len < sizeof(mask) ? len : sizeof(mask), mask);

	if (n <= 0 || !is_pin(c, mask, (size_t)n))
		return;
	memset(ans, 0, (size_t)n);
	memcpy(ans, &c->cpus,
	       (size_t)n < sizeof(c->cpus) ? (size_t)n : sizeof(c->cpus));
	skip(t, mem_write(t->p, t->regs.rdx, ans, (size_t)n) ? -EFAULT : n);
}

/* sched_setaffinity to exactly the pin: from then on that process's
 * masks may be its own, and the kernel answers (a fork inherits it;
 * which thread set it is not told apart).  The kernel runs the call. */
static void note_setaffinity(struct session *s, struct thread *t)
{
	pid_t tid = (pid_t)t->regs.rdi ? (pid_t)t->regs.rdi : t->tid;
	size_t len = t->regs.rsi;
	unsigned char mask[1024];
	struct thread *of = find_thread(s, tid);

	if (len > sizeof(mask))
		len = sizeof(mask);
	if (of && s->cfg->cpu >= 0 &&
	    !mem_read(t->p, t->regs.rdx, mask, len) &&
	    is_pin(s->cfg, mask, len))
		of->p->set_pin = true;
}

/* Duplicate the tracee's descriptor fd into ours. -1 if it is closed. */
static int grab_fd(struct thread *t, int fd)
{
	if (fd < 0 || process_pidfd(t->p) < 0)
		return -1;
	return (int)syscall(SYS_pidfd_getfd, t->p->pidfd, fd, 0);
}

enum { READ_OTHER, READ_RANDOM, READ_STATUS };

/*
 * What t's read of fd reads: /dev/random or /dev/urandom, a task's
 * /proc/PID/status or /proc/PID/task/TID/status, or anything else.  A
 * read of /dev/urandom or /dev/random is getrandom by another name (perl
 * seeds its hashes so, after getrandom): answered from --seed too, or a
 * replay, a fresh exec, would hash differently from the runs forked past
 * the read.  A status file's: emulate_status_read.
 */
static int read_kind(const struct thread *t, int fd)
{
	char name[64], link[96];
	struct stat sb;
	unsigned a, b;
	int end = 0;

	snprintf(name, sizeof(name), "/proc/%d/task/%d/fd/%d", t->p->pid,
		 t->tid, fd);
	if (fd < 0 || stat(name, &sb))
		return READ_OTHER;
	if (S_ISCHR(sb.st_mode) &&
	    (sb.st_rdev == makedev(1, 8) || sb.st_rdev == makedev(1, 9)))
		return READ_RANDOM;
	/* procfs's files are regular and of size 0 */
	if (!S_ISREG(sb.st_mode) || sb.st_size)
		return READ_OTHER;
	ssize_t n = readlink(name, link, sizeof(link) - 1);

	if (n <= 0)
		return READ_OTHER;
	link[n] = 0;
	if ((sscanf(link, "/proc/%u/status%n", &a, &end) == 1 && end == n) ||
	    (sscanf(link, "/proc/%u/task/%u/status%n", &a, &b, &end) == 2 &&
	     end == n))
		return READ_STATUS;
	return READ_OTHER;
}

/*
 * t's read of a task's /proc status file, made here on the same open file
 * (its offset moves as the program's read would move it) and answered
 * with what the kernel gave, but for a "TracerPid:" that names this
 * ptloom process (every traced task's tracer), which reads 0 as in a
 * native run: a test framework that finds a debugger there breaks into it
 * at a failed check (doctest's WARN, CHECK and expected failures execute
 * an int3, SIGTRAP without a debugger), and a program may refuse to run
 * under one.  false: the kernel's read, as any other.
 */
static bool emulate_status_read(struct thread *t, int fd, uint64_t addr,
				size_t len)
{
	int ours = grab_fd(t, fd);

	if (ours < 0)
		return false;
	if (len > (1u << 20))
		len = 1u << 20;
	char *buf = malloc(len + 1);

	if (!buf) {
		close(ours);
		return false;
	}
	ssize_t n = read(ours, buf, len);
	int err = errno;

	close(ours);
	if (n < 0) {
		free(buf);
		skip(t, -err);
		return true;
	}
	buf[n] = 0;
	/* the line whole in this read: "TracerPid:\t" and its digits up to
	 * the newline */
	char *p = strstr(buf, "\nTracerPid:\t");
	char *d = p ? p + 12 : NULL;
	size_t nd = d ? strspn(d, "0123456789") : 0;
	char mine[24];

	snprintf(mine, sizeof(mine), "%d", (int)getpid());
	if (nd && d[nd] == '\n' && nd == strlen(mine) &&
	    !strncmp(d, mine, nd)) {
		d[0] = '0';
		memmove(d + 1, d + nd, (size_t)(buf + n - (d + nd)) + 1);
		n -= (ssize_t)nd - 1;
	}
	if (n && mem_write(t->p, addr, buf, (size_t)n))
		skip(t, -EFAULT);
	else
		skip(t, n);
	free(buf);
	return true;
}

/* Descriptors on which a read or write can block: pipes, sockets and
 * anonymous inodes (eventfd, ...), not files or devices. */
static bool can_block(int ourfd)
{
	struct stat sb;

	if (fstat(ourfd, &sb) < 0)
		return false;
	return !(S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode) ||
		 S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode));
}

/*
 * The pipe itself, so both ends are one object; the two ends of a socket
 * have distinct inodes, so every socket is one object.  A pipe's inode
 * number is the kernel's (new for every run): the object is the order in
 * which the run first met it, so the trace stays a function of the
 * schedule.
 */
static uint64_t key_object(struct session *s, uint64_t key);

/* A file's object key: its device and inode (a pipe's too) */
static uint64_t file_key(const struct stat *sb)
{
	return ((uint64_t)sb->st_dev << 40) ^ sb->st_ino;
}

uint64_t syscall_file_key(const struct stat *sb)
{
	return file_key(sb);
}

/* Is descriptor fd (its name in /proc/PID/fd) of process pid open for
 * want's access (its fdinfo's flags)? */
static bool holds_for(pid_t pid, const char *fd, int want)
{
	char name[320], line[128];
	unsigned long flags = 0;
	bool got = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/fdinfo/%s", pid, fd);
	if (!(f = fopen(name, "r")))
		return false;
	while (!got && fgets(line, sizeof(line), f))
		got = sscanf(line, "flags: %lo", &flags) == 1;
	fclose(f);
	if (!got)
		return false;
	flags &= O_ACCMODE;
	return flags == O_RDWR ||
	       flags == (want == HOLD_WRITE ? O_WRONLY : O_RDONLY);
}

static uint64_t fd_object(struct session *s, int ourfd)
{
	struct stat sb;

	if (fstat(ourfd, &sb) < 0)
		return 0;
	if (S_ISSOCK(sb.st_mode))
		return (1ull << 63) | 1;
	return key_object(s, file_key(&sb));
}

/* A SysV semaphore set's object: its id is the kernel's (new for every
 * run of an IPC_PRIVATE set), so the order the run first met it in too. */
static uint64_t sem_object(struct session *s, int id)
{
	return key_object(s, (0xfffeull << 48) | (uint32_t)id);
}

static uint64_t key_object(struct session *s, uint64_t key)
{
	size_t i;

	for (i = 0; i < s->nfdobj; i++)
		if (s->fdobj[i] == key)
			return (1ull << 63) | (i + 2);
	if (s->nfdobj == s->capfdobj) {
		size_t cap = s->capfdobj ? s->capfdobj * 2 : 16;
		uint64_t *n = realloc(s->fdobj, cap * sizeof(*n));

		if (!n)
			return (1ull << 63) | key;
		s->fdobj = n;
		s->capfdobj = cap;
	}
	s->fdobj[s->nfdobj++] = key;
	return (1ull << 63) | (i + 2);
}

/* FDK_* of one of our copies of the tracee's descriptors. */
static uint8_t fd_kind(struct thread *t, int ourfd)
{
	char name[64], link[64];
	struct stat sb;
	ssize_t n;

	if (ourfd < 0 || fstat(ourfd, &sb) < 0 || (sb.st_mode & S_IFMT))
		return FDK_PLAIN; /* anonymous inodes have no file type */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", ourfd);
	n = readlink(name, link, sizeof(link) - 1);
	if (n <= 0)
		return FDK_PLAIN;
	link[n] = 0;
	if (strstr(link, "[signalfd]"))
		return FDK_SIGNALFD;
	if (strstr(link, "[timerfd]"))
		return FDK_TIMERFD; /* ours is kept readable (timer.c) */
	if (strstr(link, "[eventpoll]") &&
	    signal_epoll_has_sfd(t->p->pid, ourfd))
		return FDK_EPOLL;
	return FDK_PLAIN;
}

/* t's select, pselect6 or ppoll timed out: the time left it reports
 * (select's timeval, glibc's copy of it, a raw ppoll's timespec) is none,
 * as the kernel writes it.  Before, a select that timed out left the
 * timeval as given (20000 us left after waiting them all). */
void syscall_poll_timed_out(struct thread *t)
{
	if (!regs_get(t))
		syscall_poll_left_write(t, 0);
}

void syscall_close_fds(struct thread *t)
{
	for (int i = 0; i < t->npfd; i++)
		if (t->pfd[i] >= 0)
			close(t->pfd[i]);
	t->npfd = 0;
	t->ext_known = false;
}

/*
 * A descriptor of a file or device, on which a read or write never
 * blocks, from its /proc entry: one stat instead of duplicating it,
 * fstat and close (the output, at every write).  False: a pipe, a
 * socket, an anonymous inode, or cannot tell.  *sb: what it is.
 */
static bool never_blocks(const struct thread *t, int fd, struct stat *sb)
{
	char name[64];

	snprintf(name, sizeof(name), "/proc/%d/task/%d/fd/%d", t->p->pid,
		 t->tid, fd);
	if (fd < 0 || stat(name, sb) < 0)
		return false;
	return S_ISREG(sb->st_mode) || S_ISDIR(sb->st_mode) ||
	       S_ISCHR(sb->st_mode) || S_ISBLK(sb->st_mode);
}

/* Has t's process another thread alive? */
static bool not_alone(const struct session *s, const struct thread *t)
{
	for (int i = 0; i < s->nth; i++)
		if (&s->th[i] != t && s->th[i].p == t->p &&
		    s->th[i].st != SCHED_DEAD)
			return true;
	return false;
}

/* Does another process of the program live? */
static bool other_process(const struct session *s, const struct thread *t)
{
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i] && s->procs[i] != t->p && !s->procs[i]->dead)
			return true;
	return false;
}

void syscall_file_opened(struct thread *t, int fd)
{
	struct process *p = t->p;
	struct stat sb;
	char name[64];

	snprintf(name, sizeof(name), "/proc/%d/fd/%d", p->pid, fd);
	if (stat(name, &sb) < 0 || !S_ISREG(sb.st_mode))
		return;
	for (int i = 0; i < p->nwfile; i++)
		if (p->wfile[i] == file_key(&sb))
			return;
	if (p->nwfile == PROC_WFILES)
		p->wfile_all = true;
	else
		p->wfile[p->nwfile++] = file_key(&sb);
}

/* Has process pid a descriptor of the file whose key is key, open for
 * reading (want HOLD_READ), writing (HOLD_WRITE) or either (HOLD_ANY)? */
bool syscall_holds_open(pid_t pid, uint64_t key, int want)
{
	char name[64];
	DIR *d;
	struct dirent *e;
	bool found = false;

	snprintf(name, sizeof(name), "/proc/%d/fd", pid);
	if (!(d = opendir(name)))
		return false;
	while (!found && (e = readdir(d))) {
		char fd[300];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(fd, sizeof(fd), "%s/%s", name, e->d_name);
		found = stat(fd, &sb) == 0 && file_key(&sb) == key &&
			(want == HOLD_ANY || holds_for(pid, e->d_name, want));
	}
	closedir(d);
	return found;
}

/* Is t's I/O on regular file sb shared: another thread of its process
 * lives, or a process of the program opened the file to write (or
 * create) and another live process holds it open now?  Two processes'
 * read-modify-write of a file (each its pread, then its pwrite) was a
 * PASS complete to bound 2, their I/O no point.  (A file written by one
 * process and read by the next, which a build does through names, is
 * held by one process at a time: no point, no new schedule.) */
static bool io_shared(const struct session *s, const struct thread *t,
		      const struct stat *sb)
{
	uint64_t key = file_key(sb);
	bool written = false;

	if (not_alone(s, t))
		return true;
	if (!other_process(s, t))
		return false;
	for (int i = 0; i < s->nprocs && !written; i++) {
		const struct process *q = s->procs[i];

		if (!q || q->dead)
			continue;
		written = q->wfile_all;
		for (int k = 0; k < q->nwfile && !written; k++)
			written = q->wfile[k] == key;
	}
	for (int i = 0; i < s->nprocs && written; i++)
		if (s->procs[i] && s->procs[i] != t->p && !s->procs[i]->dead &&
		    syscall_holds_open(s->procs[i]->pid, key, HOLD_ANY))
			return true;
	return false;
}

/*
 * A read, write or truncation of a regular file (sb) by t: a point while
 * its process has another thread, so that a read-modify-write of a file
 * by two threads (a counter, a log's length) can be interleaved between
 * its read and its write; before, file I/O was no point, and such a lost
 * update passed complete.  Its object is the file (device and inode, as a
 * pipe's): I/O on two files commutes, and two reads at a position of
 * their own (FILE_PREAD) too.  Never a wait (the kernel's at once).  Not
 * points: a single-threaded process's file I/O (no cost, no new event),
 * the standard descriptors and ptloom's output capture (the program's
 * output is not its state), pipes, sockets and devices (fd_point's).
 */
static bool file_point(struct session *s, struct thread *t, int kind,
		       bool pread, const struct stat *sb)
{
	int fd = (int)t->regs.rdi;
	struct stat out;

	if (!S_ISREG(sb->st_mode) || fd <= 2 || !io_shared(s, t, sb))
		return handled();
	if (s->outfd >= 0 && fstat(s->outfd, &out) == 0 &&
	    out.st_dev == sb->st_dev && out.st_ino == sb->st_ino)
		return handled();
	t->npfd = 0;
	t->ext_known = false;
	t->nonblock = true;
	t->fd_abs = false;
	point(t, kind, key_object(s, file_key(sb)), fd);
	t->fn = pread ? FILE_PREAD : 0;
	t->file_io = true;
	return true;
}

/* pread64, preadv, preadv2, their writes and ftruncate: file_point's */
static bool file_at_point(struct session *s, struct thread *t, long nr)
{
	struct stat sb;
	bool read = nr == SYS_pread64 || nr == SYS_preadv ||
		    nr == SYS_preadv2;

	if ((!not_alone(s, t) && !other_process(s, t)) ||
	    !never_blocks(t, (int)t->regs.rdi, &sb))
		return handled(); /* alone: the cost is this stop's */
	/* a preadv2 at offset -1 uses and moves the offset */
	return file_point(s, t, read ? OP_READ : OP_WRITE,
			  read && !(nr == SYS_preadv2 &&
				    (int64_t)t->regs.r10 == -1),
			  &sb);
}

/* t's wait on one descriptor fd (ptloom's copy of the tracee's, or -1 for
 * an object with no descriptor) for events ev, whose readiness kind
 * (FDK_*) says who judges: no poll timeout, the descriptor's own
 * (timeout_ns, absolute when abs) */
static void one_fd_wait(struct thread *t, int fd, short ev, uint8_t kind,
			bool nonblock, uint64_t timeout_ns, bool abs)
{
	t->pfd[0] = fd;
	t->pev[0] = ev;
	t->pkind[0] = kind;
	t->npfd = 1;
	t->ext_known = false;
	t->nonblock = nonblock;
	t->poll_timeout_ms = -1;
	t->fd_timeout_ns = timeout_ns;
	t->fd_abs = abs;
}

/*
 * The timeout a blocking operation of this kind waits on socket ourfd for
 * (SO_RCVTIMEO for a read or an accept, SO_SNDTIMEO for a write or a
 * connect), in ns; 0 for none or not a socket.  The kernel's wait ends
 * with EAGAIN (a connect's with EINPROGRESS) once it passes: a timed wait
 * like a poll's, never a deadlock.
 */
static uint64_t sock_timeout_ns(int ourfd, int kind)
{
	struct stat sb;
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (fstat(ourfd, &sb) < 0 || !S_ISSOCK(sb.st_mode) ||
	    getsockopt(ourfd, SOL_SOCKET,
		       kind == OP_READ || kind == OP_ACCEPT ? SO_RCVTIMEO
							    : SO_SNDTIMEO,
		       &tv, &len) < 0 ||
	    tv.tv_sec < 0 || tv.tv_usec < 0)
		return 0;
	return (uint64_t)tv.tv_sec * 1000000000ull +
	       (uint64_t)tv.tv_usec * 1000ull;
}

static bool fd_point(struct session *s, struct thread *t, int kind,
		     short events, bool dontwait)
{
	struct stat sb;

	if (never_blocks(t, (int)t->regs.rdi, &sb))
		return kind == OP_READ || kind == OP_WRITE
			       ? file_point(s, t, kind, false, &sb)
			       : handled();
	int fd = grab_fd(t, (int)t->regs.rdi);

	if (fd < 0)
		return handled();
	if (!can_block(fd)) {
		close(fd);
		return handled();
	}
	bool nb = dontwait || (fcntl(fd, F_GETFL) & O_NONBLOCK);

	one_fd_wait(t, fd, events, fd_kind(t, fd), nb,
		    nb ? 0 : sock_timeout_ns(fd, kind), false);
	point(t, kind, fd_object(s, fd), (int64_t)t->regs.rdi);
	if (kind == OP_WRITE)
		bigwrite_prepare(t);
	return true;
}

/* The time-left struct of t's select, pselect6 or ppoll (nr), which the
 * kernel writes back (select's timeval, pselect6's and ppoll's timespec),
 * or 0. */
static uint64_t poll_left_at(const struct thread *t, long nr)
{
	return nr == SYS_select || nr == SYS_pselect6 ? t->regs.r8
	       : nr == SYS_ppoll			? t->regs.rdx
							: 0;
}

/* select, pselect6 and ppoll write back the time their timeout has left
 * (glibc's pselect and ppoll copy the timeout first; a raw call and
 * select do not): that time must be the virtual clock's, as the timeout
 * is.  The timeout exactly (select's microseconds are not the wait's
 * milliseconds), and not started yet. */
static void poll_left_prepare(struct thread *t, long nr)
{
	uint64_t at = poll_left_at(t, nr), ns = 0;
	struct timeval tv;

	t->poll_left = t->poll_left_at_exit = false;
	t->poll_start = UINT64_MAX;
	if (!at)
		return;
	if (nr == SYS_select) {
		if (mem_read(t->p, at, &tv, sizeof(tv)) || tv.tv_sec < 0 ||
		    tv.tv_usec < 0 || tv.tv_usec >= 1000000)
			return; /* the kernel's EINVAL or EFAULT */
		ns = (uint64_t)tv.tv_sec * 1000000000ull +
		     (uint64_t)tv.tv_usec * 1000ull;
	} else if (read_ts(t, at, &ns)) {
		return;
	}
	t->poll_tmo_ns = ns;
	t->poll_left = true;
}

void syscall_poll_left_write(struct thread *t, uint64_t ns)
{
	long nr = (long)t->regs.orig_rax;
	uint64_t at = poll_left_at(t, nr);

	if (!at)
		return;
	if (nr == SYS_select) {
		struct timeval tv = { .tv_sec = (time_t)(ns / 1000000000ull),
				      .tv_usec = (suseconds_t)(ns % 1000000000ull /
							       1000) };

		mem_write(t->p, at, &tv, sizeof(tv));
	} else {
		struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
				       .tv_nsec = (long)(ns % 1000000000ull) };

		mem_write(t->p, at, &ts, sizeof(ts));
	}
}

/* t's ready select, pselect6 or ppoll goes on: the time left on the
 * virtual clock since it first ran (none once it timed out), written now
 * when ptloom answers it, or at its exit over the kernel's (the machine's
 * clock: 0.999997 s left of 1 s in one run, 0.999998 in the next, which a
 * program waiting out the rest saw as a different run). */
static void poll_time_left(struct session *s, struct thread *t)
{
	uint64_t left = 0, ran;

	if (!t->poll_left || regs_get(t))
		return;
	ran = t->poll_start <= s->now ? s->now - t->poll_start : 0;
	if (!(t->skip && t->result == 0) && ran < t->poll_tmo_ns)
		left = t->poll_tmo_ns - ran;
	if (t->skip) {
		if (t->result >= 0)
			syscall_poll_left_write(t, left);
		return;
	}
	t->poll_tmo_ns = left;
	t->poll_left_at_exit = true;
	thread_fix_at_exit(t, &t->regs);
}

/* poll/ppoll/select/pselect6/epoll_wait: duplicate the descriptors waited
 * on and read the timeout. */
static bool poll_point(struct session *s, struct thread *t, long nr)
{
	struct user_regs_struct *r = &t->regs;
	int64_t tmo = -1;

	t->npfd = 0;
	t->ext_known = false;
	if (nr == SYS_poll || nr == SYS_ppoll) {
		struct pollfd p[POLL_MAX];
		size_t n = r->rsi;

		if (n > POLL_MAX ||
		    (n && mem_read(t->p, r->rdi, p, n * sizeof(p[0]))))
			return handled();
		for (size_t i = 0; i < n; i++) {
			t->pfd[t->npfd] = p[i].fd >= 0 ? grab_fd(t, p[i].fd)
						       : -1;
			t->ptfd[t->npfd] = p[i].fd;
			t->pev[t->npfd++] = p[i].events;
		}
		if (nr == SYS_poll) {
			tmo = (int)r->rdx < 0 ? -1 : (int)r->rdx;
		} else if (r->rdx) {
			uint64_t ns;

			tmo = read_ts(t, r->rdx, &ns) ? -1
						      : (int64_t)(ns / 1000000);
		}
	} else if (nr == SYS_select || nr == SYS_pselect6) {
		int n = (int)r->rdi;
		fd_set sets[3];
		uint64_t ptr[3] = { r->rsi, r->rdx, r->r10 };
		static const short ev[3] = { POLLIN, POLLOUT, POLLPRI };

		if (n < 0 || n > FD_SETSIZE)
			return handled();
		for (int k = 0; k < 3; k++) {
			FD_ZERO(&sets[k]);
			if (ptr[k] && mem_read(t->p, ptr[k], &sets[k],
					       (size_t)(n + 7) / 8))
				return handled();
		}
		for (int fd = 0; fd < n && t->npfd < POLL_MAX; fd++) {
			short e = 0;

			for (int k = 0; k < 3; k++)
				if (ptr[k] && FD_ISSET(fd, &sets[k]))
					e |= ev[k];
			if (!e)
				continue;
			t->pfd[t->npfd] = grab_fd(t, fd);
			t->ptfd[t->npfd] = fd;
			t->pev[t->npfd++] = e;
		}
		if (r->r8) {
			if (nr == SYS_select) {
				struct timeval tv;

				if (!mem_read(t->p, r->r8, &tv, sizeof(tv)))
					tmo = tv.tv_sec * 1000 +
					      tv.tv_usec / 1000;
			} else {
				uint64_t ns;

				if (!read_ts(t, r->r8, &ns))
					tmo = (int64_t)(ns / 1000000);
			}
		}
	} else { /* epoll_wait, epoll_pwait, epoll_pwait2 */
		t->pfd[0] = grab_fd(t, (int)r->rdi);
		t->ptfd[0] = (int)r->rdi;
		t->pev[0] = POLLIN;
		t->npfd = 1;
		if (nr == SYS_epoll_pwait2) {
			uint64_t ns;

			if (r->r10 && !read_ts(t, r->r10, &ns))
				tmo = (int64_t)(ns / 1000000);
		} else {
			tmo = (int)r->r10 < 0 ? -1 : (int)r->r10;
		}
	}
	for (int i = 0; i < t->npfd; i++)
		t->pkind[i] = fd_kind(t, t->pfd[i]);
	poll_left_prepare(t, nr);
	t->poll_timeout_ms = tmo;
	t->nonblock = tmo == 0;
	return point(t, OP_POLL, t->npfd ? fd_object(s, t->pfd[0]) : 0, tmo);
}

/*
 * mq_timedsend and mq_timedreceive (mq_send and mq_receive too): a wait on
 * the queue's descriptor, which poll says is ready to receive (a message
 * is there) or to send (there is room), as a pipe's read or write.  Its
 * absolute CLOCK_REALTIME deadline (r8) is on the virtual clock: past it
 * the call fails with ETIMEDOUT, as the kernel's wait does.  A bad
 * deadline is the kernel's to refuse.
 */
static bool mq_point(struct session *s, struct thread *t, int kind,
		     short events)
{
	uint64_t ns = 0;
	int fd = grab_fd(t, (int)t->regs.rdi);

	if (fd < 0)
		return handled();
	if (!fd_is_mqueue(fd) ||
	    (t->regs.r8 && read_ts(t, t->regs.r8, &ns))) {
		close(fd);
		return handled();
	}
	one_fd_wait(t, fd, events, FDK_PLAIN, fcntl(fd, F_GETFL) & O_NONBLOCK,
		    0, t->regs.r8 != 0);
	if (t->fd_abs) {
		time_observed(s);
		t->fd_deadline = ns > s->realtime_base ? ns - s->realtime_base
						       : 0;
	}
	return point(t, kind, fd_object(s, fd), (int64_t)t->regs.rdi);
}

bool syscall_fd_ready(struct session *s, struct thread *t)
{
	struct pollfd p[POLL_MAX];
	int n = 0;

	for (int i = 0; i < t->npfd; i++) {
		if (t->pkind[i] == FDK_FLOCK) {
			if (flock_ready(t, i))
				return true;
			continue;
		}
		if (t->pkind[i] == FDK_SEM) {
			if (sem_ready(t))
				return true;
			continue;
		}
		if (t->pkind[i] == FDK_FIFO) {
			if (fifo_ready(s, t, false))
				return true;
			continue;
		}
		if (t->pkind[i] == FDK_EPOLL)
			continue; /* judged member by member, below */
		p[n].fd = t->pfd[i];
		p[n].events = t->pev[i];
		p[n++].revents = 0;
	}
	if (n && poll(p, (nfds_t)n, 0) > 0)
		return true;
	if (evloop_pending(s, t))
		return true;
	/* ours say "not ready" for a signalfd: ask the model */
	for (int i = 0; i < t->npfd; i++)
		if ((t->pkind[i] == FDK_SIGNALFD ||
		     t->pkind[i] == FDK_EPOLL) &&
		    (t->pev[i] & POLLIN) &&
		    signal_fd_ready(s, t, t->pfd[i], t->pkind[i] == FDK_EPOLL))
			return true;
	return false;
}

/* A lock request on our copy fd of the tracee's descriptor as t's
 * pending point: kind LK_*, exclusive or shared, never waiting. */
static bool lock_point(struct session *s, struct thread *t, int fd, int kind,
		       bool excl, bool nonblock)
{
	one_fd_wait(t, fd, excl ? 2 : 1, FDK_FLOCK, nonblock, 0, false);
	t->lk_kind = (uint8_t)kind;
	return point(t, OP_SYSCALL, fd_object(s, fd), (int64_t)t->regs.rdi);
}

/*
 * semop(id, ops, n) and semtimedop(id, ops, n, timeout): a point whose
 * readiness ptloom judges (tracer/sysvsem.c), a wait like a read's until
 * the operations can complete, its relative timeout on the virtual clock
 * (EAGAIN past it, as the kernel's).  A bad timeout is the kernel's to
 * refuse.  msgsnd and msgrcv on a SysV message queue are the same point,
 * a wait until the message fits or one its type takes is there.
 */
static bool sem_point(struct session *s, struct thread *t, long nr)
{
	uint64_t ns = 0;
	bool timed = nr == SYS_semtimedop && t->regs.r10;

	if (timed && read_ts(t, t->regs.r10, &ns))
		return handled();
	one_fd_wait(t, -1, 0, FDK_SEM, false, 0, timed);
	if (timed) {
		time_observed(s);
		t->fd_deadline = s->now + ns;
	}
	t->sem_nr = nr;
	t->sem_id = (int)t->regs.rdi;
	t->sem_ops = t->regs.rsi;
	t->sem_nops = (uint32_t)t->regs.rdx;
	t->sem_waited = false;
	if (nr == SYS_msgsnd || nr == SYS_msgrcv) {
		/* msgsnd(id, msgp, size, flg), msgrcv(id, msgp, size, type,
		 * flg): no timeout */
		t->msg_size = t->regs.rdx;
		t->msg_type = nr == SYS_msgrcv ? (int64_t)t->regs.r10 : 0;
		t->msg_flg = (int)(nr == SYS_msgrcv ? t->regs.r8
						     : t->regs.r10);
		t->nonblock = (t->msg_flg & IPC_NOWAIT) != 0;
	}
	/* the id is the kernel's, another every run: not in the trace */
	return point(t, OP_SYSCALL, sem_object(s, t->sem_id), 0);
}

/* flock(fd, op): a point; one that may block waits, as a read does,
 * until the lock is free (tracer/flock.c). */
static bool flock_point(struct session *s, struct thread *t)
{
	int op = (int)t->regs.rsi, fd = grab_fd(t, (int)t->regs.rdi);

	if (fd < 0)
		return handled(); /* EBADF: the kernel's */
	return lock_point(s, t, fd, LK_FLOCK, op & LOCK_EX,
			  (op & LOCK_NB) || (op & LOCK_UN) ||
				  !(op & (LOCK_SH | LOCK_EX)));
}

/* fcntl(fd, F_SETLKW or F_OFD_SETLKW, &flock): a record lock; the same
 * wait as flock's, for its byte range (tracer/flock.c). */
static bool record_lock_point(struct session *s, struct thread *t)
{
	struct flock fl;
	int fd;
	int64_t start;

	if (mem_read(t->p, t->regs.rdx, &fl, sizeof(fl)) ||
	    (fd = grab_fd(t, (int)t->regs.rdi)) < 0)
		return handled(); /* EFAULT, EBADF: the kernel's */
	if (fl.l_whence == SEEK_CUR)
		start = (int64_t)lseek(fd, 0, SEEK_CUR);
	else if (fl.l_whence == SEEK_END) {
		struct stat sb;

		start = fstat(fd, &sb) ? -1 : (int64_t)sb.st_size;
	} else
		start = fl.l_whence == SEEK_SET ? 0 : -1;
	if (start < 0 || fl.l_type == F_UNLCK) {
		close(fd); /* EINVAL or an unlock: never waits */
		return handled();
	}
	start += fl.l_start;
	t->lk_start = fl.l_len < 0 ? start + fl.l_len : start;
	t->lk_end = fl.l_len > 0   ? start + fl.l_len - 1
		    : fl.l_len < 0 ? start - 1
				   : INT64_MAX;
	return lock_point(s, t, fd,
			  (int)t->regs.rsi == F_OFD_SETLKW ? LK_OFD : LK_POSIX,
			  fl.l_type == F_WRLCK, false);
}

/* path as t's process names it, relative to its descriptor dirfd (or
 * its directory, or its root), as ptloom can look it up; -1: too long */
static int at_path(const struct thread *t, int dirfd, const char *path,
		   char *out, size_t n)
{
	int w;

	if (path[0] == '/')
		w = snprintf(out, n, "/proc/%d/root%s", t->tid, path);
	else if (dirfd == AT_FDCWD)
		w = snprintf(out, n, "/proc/%d/cwd/%s", t->tid, path);
	else
		w = snprintf(out, n, "/proc/%d/fd/%d/%s", t->tid, dirfd, path);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

static void read_path(struct thread *t, uint64_t addr, char *buf, size_t len);

/*
 * open or openat of a FIFO the run made, for reading or for writing and
 * without O_NONBLOCK: a point, a wait as a read's until the other end is
 * open or opening (tracer/fifo.c).  Any other open is the kernel's.
 */
static bool fifo_point(struct session *s, struct thread *t, long nr)
{
	struct user_regs_struct *r = &t->regs;
	uint64_t flags = nr == SYS_openat ? r->rdx : r->rsi, key;
	bool nofollow = flags & O_NOFOLLOW;
	char path[PATH_MAX], full[PATH_MAX + 64];
	struct stat sb;
	int fd;

	/* a child that runs freely opens its end in the kernel, where its
	 * wait shows in no descriptor: the kernel's, as before */
	if (!s->nfifo_made || s->cfg->free_children ||
	    (flags & (O_NONBLOCK | O_PATH | O_DIRECTORY)) ||
	    ((flags & O_CREAT) && (flags & O_EXCL)) ||
	    ((flags & O_ACCMODE) != O_RDONLY &&
	     (flags & O_ACCMODE) != O_WRONLY))
		return false; /* it never waits */
	read_path(t, nr == SYS_openat ? r->rsi : r->rdi, path, sizeof(path));
	if (!path[0] ||
	    at_path(t, nr == SYS_openat ? (int)r->rdi : AT_FDCWD, path, full,
		    sizeof(full)) ||
	    (nofollow ? lstat(full, &sb) : stat(full, &sb)) ||
	    !S_ISFIFO(sb.st_mode) || !fifo_is_runs(s, syscall_file_key(&sb)))
		return false;
	key = syscall_file_key(&sb);
	fd = open(full, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return false;
	if (fstat(fd, &sb) || syscall_file_key(&sb) != key) {
		close(fd); /* renamed meanwhile: the kernel's */
		return false;
	}
	one_fd_wait(t, fd, 0, FDK_FIFO, false, 0, false);
	t->fifo_key = key;
	t->fifo_write = (flags & O_ACCMODE) == O_WRONLY;
	t->fifo_promised = false;
	t->fifo_going = false;
	return point(t, OP_SYSCALL, key_object(s, key), 0);
}

/* t's mknod or mknodat returned: a FIFO it made is the run's */
void syscall_mknod_exit(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	bool at = r->orig_rax == SYS_mknodat;
	char path[PATH_MAX], full[PATH_MAX + 64];

	read_path(t, at ? r->rsi : r->rdi, path, sizeof(path));
	if (path[0] && !at_path(t, at ? (int)r->rdi : AT_FDCWD, path, full,
				sizeof(full)))
		fifo_made(s, t, full);
}

/* A temporary directory of the run's: /tmp, /var/tmp, /dev/shm or $TMPDIR
 * itself (not a project that lives below one), or a directory the run
 * made there (mkdtemp's). */
static bool temp_dir(const struct session *s, int dirfd)
{
	char self[64], real[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	const char *const dirs[] = { "/tmp", "/var/tmp", "/dev/shm",
				     tmp && tmp[0] == '/' ? tmp : NULL };
	struct stat sb;
	ssize_t n;

	if (!fstat(dirfd, &sb))
		for (int i = 0; i < s->ntemp; i++)
			if (s->temp[i].dir && s->temp[i].dev == sb.st_dev &&
			    s->temp[i].ino == sb.st_ino)
				return true;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dirfd);
	n = readlink(self, real, sizeof(real) - 1);
	if (n <= 0)
		return false;
	real[n] = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t k = dirs[i] ? strlen(dirs[i]) : 0;

		while (k > 1 && dirs[i][k - 1] == '/')
			k--;
		if (k > 1 && strlen(real) == k && !strncmp(real, dirs[i], k))
			return true;
	}
	return false;
}

void syscall_created_exit(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	long nr = (long)r->orig_rax;
	bool at = nr == SYS_openat || nr == SYS_mkdirat;
	char path[PATH_MAX], full[PATH_MAX + 64];
	struct stat sb;

	if (s->ntemp == (int)(sizeof(s->temp) / sizeof(s->temp[0])))
		return; /* (the rest stay, as before) */
	read_path(t, at ? r->rsi : r->rdi, path, sizeof(path));
	if (!path[0] ||
	    at_path(t, at ? (int)r->rdi : AT_FDCWD, path, full, sizeof(full)))
		return;
	/* its directory and name, as ptloom can name them once the
	 * process is gone */
	size_t e = strlen(full);

	while (e > 1 && full[e - 1] == '/')
		full[--e] = 0;
	char *slash = strrchr(full, '/');

	if (!slash || strlen(slash + 1) >= sizeof(s->temp[0].name) ||
	    !strcmp(slash + 1, ".") || !strcmp(slash + 1, ".."))
		return;
	*slash = 0;
	int dfd = open(full, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return;
	bool dir = nr == SYS_mkdir || nr == SYS_mkdirat;

	if (!temp_dir(s, dfd) ||
	    fstatat(dfd, slash + 1, &sb, AT_SYMLINK_NOFOLLOW) ||
	    (dir ? !S_ISDIR(sb.st_mode) : !S_ISREG(sb.st_mode))) {
		close(dfd);
		return;
	}
	struct run_temp *m = &s->temp[s->ntemp++];

	m->dirfd = dfd;
	m->dir = dir;
	m->dev = sb.st_dev;
	m->ino = sb.st_ino;
	snprintf(m->name, sizeof(m->name), "%s", slash + 1);
}

static bool futex_point(struct session *s, struct thread *t)
{
	int op = (int)t->regs.rsi;
	int cmd = op & FUTEX_CMD_MASK;

	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		return point(t, OP_FUTEX_WAIT, t->regs.rdi, (int64_t)t->regs.rdx);
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
		return point(t, OP_FUTEX_WAKE, t->regs.rdi, (int64_t)t->regs.rdx);
	case FUTEX_WAKE_OP:
		point(t, OP_FUTEX_WAKE, t->regs.rdi, (int64_t)t->regs.rdx);
		t->obj2 = t->regs.r8; /* uaddr2, changed too */
		return true;
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
		point(t, OP_FUTEX_REQUEUE, t->regs.rdi, (int64_t)t->regs.rdx);
		t->obj2 = t->regs.r8; /* waiters move there */
		return true;
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_TRYLOCK_PI:
		/* a lock: it may wait (trylock never does) */
		return point(t, OP_FUTEX_WAIT, t->regs.rdi, 0);
	case FUTEX_UNLOCK_PI:
		return point(t, OP_FUTEX_WAKE, t->regs.rdi, 0);
	case FUTEX_WAIT_REQUEUE_PI:
	case FUTEX_CMP_REQUEUE_PI: {
		/* glibc's condition variables stopped using them in 2.25 */
		session_fail(s, FAIL_UNSUPPORTED, t,
			     "unsupported: futex %s (op %d) on 0x%llx",
			     cmd == FUTEX_WAIT_REQUEUE_PI
				     ? "FUTEX_WAIT_REQUEUE_PI"
				     : "FUTEX_CMP_REQUEUE_PI",
			     op, (unsigned long long)t->regs.rdi);
		return true;
	}
	default:
		/* FUTEX_FD (gone since Linux 2.6.26) and unknown commands:
		 * the kernel's ENOSYS, which blocks nobody */
		return handled();
	}
}

/* Tell session_config.watch what a process reads, writes or signals. */
static void watch_syscall(struct session *s, struct thread *t, long nr)
{
	const struct proc_watch *w = s->cfg->watch;
	struct user_regs_struct *r = &t->regs;

	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_write:
	case SYS_writev:
	case SYS_sendto:
	case SYS_sendmsg:
		if (w->io)
			w->io(w->ctx, t->p->idx, t->p->pid, (int)r->rdi,
			      nr == SYS_write || nr == SYS_writev ||
				      nr == SYS_sendto || nr == SYS_sendmsg);
		break;
	case SYS_mmap:
		/* a file mapped shared (the filter stops no other mmap):
		 * read and written through memory as the protection allows */
		if (w->io && (r->r10 & MAP_SHARED) && (int)r->r8 >= 0) {
			if (r->rdx & (PROT_READ | PROT_EXEC))
				w->io(w->ctx, t->p->idx, t->p->pid, (int)r->r8,
				      false);
			if (r->rdx & PROT_WRITE)
				w->io(w->ctx, t->p->idx, t->p->pid, (int)r->r8,
				      true);
		}
		break;
	case SYS_kill:
	case SYS_tgkill:
	case SYS_tkill:
		if (w->kill)
			w->kill(w->ctx, t->p->idx,
				(pid_t)(nr == SYS_tgkill ? r->rsi : r->rdi),
				nr != SYS_kill);
		break;
	}
}

/* A case of a file mapped apart ptloom does not follow: the run is no
 * pass (explore.c), its failure still one. */
static void apart_fence(struct session *s)
{
	s->shared_apart++;
}

static struct apart_file *apart_file(struct session *s, uint64_t dev,
				     uint64_t ino)
{
	for (int i = 0; i < s->napart; i++)
		if (s->apart_files[i].dev == dev && s->apart_files[i].ino == ino)
			return &s->apart_files[i];
	return NULL;
}

#define MAPS_MAX 256

/* Process q's mappings of the file dev:ino and of the files mapped apart
 * (session.apart_files), up to MAPS_MAX of them: their number; -1: its
 * maps cannot be read (gone); -2: more than that (not followed). */
static int read_maps(struct session *s, const struct process *q,
		     uint64_t dev, uint64_t ino, struct map_line *m)
{
	char name[64], line[640];
	int n = 0;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)q->pid);
	if (!(f = fopen(name, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct map_line l;

		if (!map_line_parse(line, &l) || !l.ino ||
		    (!(l.dev == dev && l.ino == ino) &&
		     !apart_file(s, l.dev, l.ino)))
			continue;
		if (n == MAPS_MAX) {
			n = -2;
			break;
		}
		m[n++] = l;
	}
	fclose(f);
	return n;
}

/* Name the mapping m of p as the file's first mapping a names it (p's
 * shm list); false: it cannot be (a fence counted). */
static bool apart_name(struct session *s, struct process *p,
		       const struct map_line *m, const struct apart_file *a)
{
	struct shm_range r = {
		m->lo, m->hi, a->img, .apart = true,
		.delta = (int64_t)(a->base + m->off - m->lo),
		.dev = m->dev, .ino = m->ino, .off = m->off,
		.sem = !strncmp(m->path, "/dev/shm/sem.", 13),
	};
	int k = 0;

	if (m->off < a->off_lo || m->off + (m->hi - m->lo) > a->off_hi) {
		apart_fence(s); /* offsets the first mapping does not name */
		return false;
	}
	for (int i = 0; i < p->nshm; i++) {
		struct shm_range *o = &p->shm[i];

		if (o->lo == r.lo && o->hi == r.hi && o->dev == r.dev &&
		    o->ino == r.ino && o->off == r.off) {
			if (o->img == r.img && o->delta == r.delta)
				return true; /* named so already */
			apart_fence(s);
			return false;
		}
		if (o->lo < r.hi && r.lo < o->hi) {
			/* a mapping this one replaced (MAP_FIXED): gone, all
			 * of it, or part of it stays and is not followed */
			if (o->lo < r.lo || o->hi > r.hi) {
				apart_fence(s);
				return false;
			}
			continue;
		}
		p->shm[k++] = *o;
	}
	p->nshm = k;
	if (p->nshm == 16) {
		apart_fence(s);
		return false;
	}
	p->shm[p->nshm++] = r;
	return true;
}

/* p's points and observation, one thread or not (as at a fork of shared
 * memory: world.c), with a file mapped apart; while it has one thread,
 * its libc calls are points only on objects in shared memory (a
 * process-shared mutex in the file: bp.shm_alone), as before its points
 * its calls were none */
static void apart_points(struct session *s, struct process *p,
			 const struct map_line *m)
{
	/* an interpreter's own stores to it are no points (as at a fork of
	 * its shared memory: world.c); a semaphore's file is only waited
	 * on and posted */
	if (session_policy_process(s, p) &&
	    strncmp(m->path, "/dev/shm/sem.", 13)) {
		s->py_shared++;
	}
	bp_install_now(s, p, true);
}

/*
 * p has just mapped a file shared (mmap with MAP_SHARED of a descriptor,
 * at the call's exit: m, as its maps list it).  If another mapping of
 * the file is live in a process of the program (another process's, made
 * on its own: shm_open in each, a file mapped after a fork; or one of
 * p's), the two share memory at addresses of their own: every mapping of
 * the file is named as its first one names it (session.apart_files:
 * device, inode and offset name the byte), in p's and each mapper's shm
 * list, so their loads and stores there are one object's in events,
 * coverage and race discovery, as a fork's shared memory is
 * (process.shm), and each mapper gets its points and observation now,
 * one thread or not.  What cannot be named so (offsets beyond the first
 * mapping's, a mapping it replaced in part, a 17th range or file) is
 * fenced: such a run is no pass.
 */
static void apart_mapped(struct session *s, struct process *p,
			 const struct map_line *m, bool can_write)
{
	static struct map_line maps[MAPS_MAX];
	struct process *who[64];
	struct map_line mine[64];
	int nwho = 0;
	struct apart_file *a = apart_file(s, m->dev, m->ino);
	struct apart_file first = { 0 };
	bool have_first = a != NULL;

	if (a)
		first = *a;
	/* a mapping that can never be written (read-only, of a descriptor
	 * open only to read: glibc's gconv cache) shares nothing while
	 * nobody maps the file to write, which a mapping that may would
	 * have put in the table, or a fork in a shm list */
	for (int i = 0; !a && !can_write && i < s->nprocs; i++) {
		const struct process *q = s->procs[i];

		for (int k = 0; q && !q->dead && k < q->nshm; k++)
			can_write |= q->shm[k].dev == m->dev &&
				     q->shm[k].ino == m->ino;
	}
	if (!a && !can_write)
		return;
	/* the file's mappings in the program's live processes */
	for (int i = 0; i < s->nprocs; i++) {
		struct process *q = s->procs[i];
		int n;

		if (!q || q->dead ||
		    (n = read_maps(s, q, m->dev, m->ino, maps)) == -1)
			continue;
		if (n < 0) {
			apart_fence(s);
			return;
		}
		for (int k = 0; k < n; k++) {
			const struct map_line *l = &maps[k];

			if (l->dev != m->dev || l->ino != m->ino)
				continue;
			if (nwho == 64) {
				apart_fence(s); /* not all named */
				return;
			}
			if (!l->shared) {
				/* private: its pages the file's until it
				 * writes them, not followed */
				apart_fence(s);
				return;
			}
			if (q == p && l->lo < m->hi && m->lo < l->hi)
				continue; /* the new one (maybe merged) */
			if (s->nprocs < 2 && !a &&
			    !(l->off < m->off + (m->hi - m->lo) &&
			      m->off < l->off + (l->hi - l->lo)))
				continue; /* one process's other window of
					   * the file: no byte in both */
			who[nwho] = q;
			mine[nwho++] = *l;
		}
	}
	if (!nwho && !a) {
		/* mapped alone: the first mapping, whose accesses another
		 * process's mapping may come between from now on; in a
		 * program of one process, nobody's yet: a second mapping of
		 * the file, this process's or a fork's own, finds this one in
		 * the maps and names both then (a fork's copy of it is
		 * shared memory as any: process.shm) */
		if (s->nprocs < 2)
			return;
		if (s->napart == 16) {
			apart_fence(s);
			return;
		}
		a = &s->apart_files[s->napart++];
		*a = (struct apart_file){ m->dev, m->ino, m->lo - m->off, m->off,
					  m->off + (m->hi - m->lo), p->img };
		if (apart_name(s, p, m, a))
			apart_points(s, p, m);
		return;
	}
	/* the first mapping: the table's, else one a fork shared (its
	 * naming stands), else the first other mapping found */
	for (int i = 0; !have_first && i < s->nprocs; i++) {
		const struct process *q = s->procs[i];

		for (int k = 0; q && !q->dead && k < q->nshm; k++) {
			const struct shm_range *r = &q->shm[k];

			if (r->dev != m->dev || r->ino != m->ino)
				continue;
			first = (struct apart_file){
				m->dev, m->ino,
				r->lo + (uint64_t)r->delta - r->off, r->off,
				r->off + (r->hi - r->lo), r->img,
			};
			have_first = true;
			break;
		}
	}
	if (!have_first)
		first = (struct apart_file){
			m->dev, m->ino, mine[0].lo - mine[0].off, mine[0].off,
			mine[0].off + (mine[0].hi - mine[0].lo),
			who[0]->img,
		};
	if (!a) {
		if (s->napart == 16) {
			apart_fence(s);
			return;
		}
		s->apart_files[s->napart++] = first;
		a = &s->apart_files[s->napart - 1];
	}
	if (!apart_name(s, p, m, a))
		return;
	for (int i = 0; i < nwho; i++)
		if (!apart_name(s, who[i], &mine[i], a))
			return;
	/* points and observation in each mapper, one thread or not (as at
	 * a fork of shared memory: world.c) */
	for (int i = -1; i < nwho; i++)
		apart_points(s, i < 0 ? p : who[i], m);
}

/*
 * Is what p maps of the files mapped apart still what its shm list
 * says?  A range no longer mapped (munmap) is dropped; a mapping of such
 * a file the list does not hold (moved by mremap, mapped private) is
 * fenced.  At p's mmaps of shared files and at its exit_group.
 */
static void apart_check(struct session *s, struct process *p)
{
	static struct map_line maps[MAPS_MAX];
	int n, k = 0;
	bool any = false;

	for (int i = 0; i < p->nshm; i++)
		any |= p->shm[i].apart;
	if (!any || p->dead || (n = read_maps(s, p, 0, 0, maps)) == -1)
		return;
	if (n < 0) {
		apart_fence(s);
		return;
	}
	for (int i = 0; i < p->nshm; i++) {
		struct shm_range *r = &p->shm[i];
		bool found = !r->apart;

		for (int j = 0; !found && j < n; j++)
			found = maps[j].dev == r->dev &&
				maps[j].ino == r->ino && maps[j].shared &&
				maps[j].lo <= r->lo && r->hi <= maps[j].hi &&
				maps[j].off + (r->lo - maps[j].lo) == r->off;
		if (found)
			p->shm[k++] = *r;
	}
	p->nshm = k;
	for (int j = 0; j < n; j++) {
		uint64_t at = maps[j].lo; /* named up to here */
		bool more = true;

		if (!apart_file(s, maps[j].dev, maps[j].ino))
			continue;
		/* (a line may be two ranges the kernel merged) */
		while (more && at < maps[j].hi) {
			more = false;
			for (int i = 0; i < p->nshm; i++)
				if (p->shm[i].dev == maps[j].dev &&
				    p->shm[i].ino == maps[j].ino &&
				    p->shm[i].lo <= at && at < p->shm[i].hi) {
					at = p->shm[i].hi;
					more = true;
					break;
				}
		}
		if (at < maps[j].hi) {
			apart_fence(s);
			return;
		}
	}
}

/*
 * t's process maps a file shared (mmap with MAP_SHARED of a descriptor;
 * the filter stops no other mmap): its exit (thread_exit_fix,
 * syscall_mmap_exit) sees where, and names it with the file's other live
 * mappings if there are (apart_mapped), another process's or its own.
 * Before, such memory was two objects at two addresses whose plain loads
 * and stores were neither points nor races (a lost update between two
 * processes passed, "complete to preemption bound 2", then a fence; and
 * between two threads of one process that map a memfd twice, a ring
 * buffer's two views, until this looked at one process's mappings too).
 * ptloom's own page is not the program's data.
 */
static void shared_apart(struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	char name[64], link[256];
	struct stat sb;
	ssize_t n;

	if (!(r->r10 & MAP_SHARED) || (int)r->r8 < 0)
		return;
	snprintf(name, sizeof(name), "/proc/%d/fd/%d", (int)t->p->pid,
		 (int)r->r8);
	n = readlink(name, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	if (stat(name, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    !strncmp(link, "/memfd:ptloom-", 14))
		return;
	thread_fix_at_exit(t, r);
}

void syscall_mmap_exit(struct session *s, struct thread *t)
{
	char name[64], line[640];
	bool shmat = t->regs.orig_rax == SYS_shmat;
	uint64_t at = t->regs.rax, len = t->exit_args[1];
	FILE *f;

	if ((int64_t)at < 0 && (int64_t)at > -4096)
		return; /* failed */
	/* writable, or may be made so (mprotect): a descriptor open to
	 * write (its registers are the call's still: r8); a segment
	 * attached to write */
	bool can_write = shmat ? !(t->exit_args[2] & SHM_RDONLY)
			       : (t->exit_args[2] & PROT_WRITE) != 0;

	snprintf(name, sizeof(name), "/proc/%d/fdinfo/%d", (int)t->p->pid,
		 (int)t->regs.r8);
	if (!can_write && !shmat && (f = fopen(name, "re"))) {
		unsigned flags = O_RDWR;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "flags: %o", &flags) == 1)
				break;
		fclose(f);
		can_write = (flags & O_ACCMODE) != O_RDONLY;
	}
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)t->p->pid);
	if (!(f = fopen(name, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		struct map_line m;

		if (!map_line_parse(line, &m) || at < m.lo || at >= m.hi ||
		    !m.shared || !m.ino)
			continue;
		/* the call's part of a line the kernel merged (a SysV
		 * segment's attachment: all of its line) */
		m.off += at - m.lo;
		m.lo = at;
		if (!shmat && m.hi > at + ((len + 4095) & ~4095ull))
			m.hi = at + ((len + 4095) & ~4095ull);
		apart_mapped(s, t->p, &m, can_write);
		break;
	}
	fclose(f);
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i])
			apart_check(s, s->procs[i]);
}

/* t moves or resizes memory (mremap) at rdi: a range of a file mapped
 * apart or shared with a fork there is not followed where it goes. */
static void mremap_enter(struct session *s, struct thread *t)
{
	uint64_t lo = t->regs.rdi, hi = lo + t->regs.rsi;

	if (!t->regs.rsi) {
		/* old size 0: a second view of a shared mapping, which no
		 * name follows (one process's, not in any shm list) */
		apart_fence(s);
		return;
	}

	if (shm_overlapping(t->p, lo, hi))
		apart_fence(s);
}

/*
 * t unmaps [rdi, rdi + rsi) of its process's private memory: race
 * discovery forgets what was accessed there (SYNC_FREE, as for a freed
 * heap block or a dead thread's stack), since the kernel gives the
 * addresses to the next mapping, whose accesses are a new object's.
 * Before, two threads that each mapped, used and unmapped a buffer met
 * at the address the kernel gave both in turn: races reported on a
 * correct program.  A range shared with another mapping (process.shm)
 * lives on there and is left as it is.
 */
static void munmap_enter(struct session *s, struct thread *t)
{
	const struct access_observer *o = s->cfg->observer;
	uint64_t lo = t->regs.rdi, len = (t->regs.rsi + 4095) & ~4095ull;
	const uint64_t chunk = 1ull << 30;

	if (!o || !len || (lo & 4095) || lo + len < lo ||
	    lo + len > 1ull << 47 || shm_overlapping(t->p, lo, lo + len))
		return; /* (the kernel refuses it; shared memory) */
	uint64_t ret = 0;

	/* a free of every byte by the thread, as free()'s, at the call's
	 * return address when the libc wrapper made it (a thread still
	 * reading the memory races with it) */
	if (o->freed && !mem_read(t->p, t->regs.rsp, &ret, sizeof(ret)) &&
	    ret) {
		o->freed(o->ctx, t->idx, ret, lo | process_tag(t->p), len);
		return;
	}
	for (uint64_t a = lo; a < lo + len; a += chunk)
		o->sync(o->ctx, t->idx, SYNC_FREE, a | process_tag(t->p),
			(int)(lo + len - a < chunk ? lo + len - a : chunk));
}

/* a truncation (ftruncate of descriptor fd, else truncate of path) of a
 * file mapped apart: its pages change (zeroed, gone) by no access */
static void truncate_enter(struct session *s, struct thread *t, int fd,
			   const char *path)
{
	char name[64];
	struct stat sb;

	if (!s->napart)
		return;
	char rel[320];

	if (!path) {
		snprintf(name, sizeof(name), "/proc/%d/fd/%d", (int)t->p->pid,
			 fd);
		path = name;
	} else if (path[0] != '/') {
		/* relative to the process's directory */
		snprintf(rel, sizeof(rel), "/proc/%d/cwd/%s", (int)t->p->pid,
			 path);
		path = rel;
	}
	if (stat(path, &sb) == 0 &&
	    apart_file(s, (uint64_t)major(sb.st_dev) << 32 | minor(sb.st_dev),
		       sb.st_ino))
		apart_fence(s);
}

/* The path at addr in t's process, "" if it cannot be read. */
static void read_path(struct thread *t, uint64_t addr, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	while (addr && n + 1 < len) {
		char c[64];
		size_t want = sizeof(c) - (addr + n) % sizeof(c);

		if (mem_read(t->p, addr + n, c, want))
			break;
		for (size_t i = 0; i < want && n + 1 < len; i++) {
			buf[n++] = c[i];
			if (!c[i])
				return;
		}
	}
	buf[n < len ? n : len - 1] = 0;
}

/* Python's bytecode cache: a .pyc written (by a temporary name, then
 * renamed) changes nothing a program sees but its start-up's speed */
static bool cache_path(const char *path)
{
	return !strncmp(path, "__pycache__/", 12) ||
	       strstr(path, "/__pycache__/") != NULL;
}

/*
 * The named files before a fork checkpoint: runs forked from its template
 * share the file system's state after what the program did before its
 * first thread, where runs from exec each do it again.  A file made (or
 * written) there and removed by the run ("create a temporary file, start
 * the threads, remove it at the end": the next forked run failed its
 * unlink, a false FAIL of a hardening report) must mean exec.  A file
 * opened to write is remembered (checkpoint.c looks whether it is still
 * a regular file there), its unlink forgotten with it; any other removal,
 * rename, new directory or link is a change (process.fs_changed).  Once
 * the first thread exists nothing is recorded.
 */
static void fs_change(struct session *s, struct thread *t, long nr)
{
	struct user_regs_struct *r = &t->regs;
	struct process *p = t->p;
	char path[256];

	if (p->idx != 0 || s->nth > 1 || p->fs_changed)
		return;
	switch (nr) {
	case SYS_open:
	case SYS_creat:
	case SYS_openat: {
		uint64_t flags = nr == SYS_openat ? r->rdx
				 : nr == SYS_open ? r->rsi
						  : 0;

		if ((flags & O_TMPFILE) == O_TMPFILE)
			return; /* no name */
		read_path(t, nr == SYS_openat ? r->rsi : r->rdi, path,
			  sizeof(path));
		if (cache_path(path))
			return;
		for (int i = 0; i < p->nfs_made; i++)
			if (!strcmp(p->fs_made[i], path))
				return;
		if (!path[0] || p->nfs_made == 8) {
			p->fs_changed = true;
			return;
		}
		snprintf(p->fs_made[p->nfs_made++], sizeof(p->fs_made[0]),
			 "%s", path);
		return;
	}
	case SYS_unlink:
	case SYS_unlinkat:
		read_path(t, nr == SYS_unlink ? r->rdi : r->rsi, path,
			  sizeof(path));
		for (int i = 0; i < p->nfs_made; i++)
			if (path[0] && !strcmp(p->fs_made[i], path) &&
			    (nr == SYS_unlink || (int)r->rdi == AT_FDCWD ||
			     path[0] == '/')) {
				/* one it made: gone again */
				memmove(p->fs_made[i], p->fs_made[i + 1],
					(size_t)(p->nfs_made - i - 1) *
						sizeof(p->fs_made[0]));
				p->nfs_made--;
				return;
			}
		p->fs_changed = true;
		return;
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
		read_path(t, nr == SYS_rename ? r->rsi : r->r10, path,
			  sizeof(path));
		if (!cache_path(path))
			p->fs_changed = true;
		return;
	default:
		p->fs_changed = true;
	}
}

bool syscall_enter(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	long nr = (long)r->orig_rax;

	t->skip = false;
	bool sig_point;

	if (t->clone_retry && (nr == SYS_clone || nr == SYS_clone3)) {
		/* again after the kernel refused the thread id it asked for
		 * (thread_clone_same_tid): the clone decided before runs */
		t->clone_retry = false;
		return handled();
	}

	if (s->cfg->watch)
		watch_syscall(s, t, nr);
	if (signal_enter(s, t, nr, &sig_point) ||
	    timer_enter(s, t, nr, &sig_point))
		return sig_point;
	switch (nr) {
	case SYS_mmap:
		shared_apart(t);
		return handled();
	case SYS_shmat:
		/* a SysV segment attached: shared memory as a file mapped
		 * shared (its exit names it with its other attachments) */
		thread_fix_at_exit(t, r);
		return handled();
	case SYS_mremap:
		mremap_enter(s, t);
		return handled();
	case SYS_munmap:
		munmap_enter(s, t);
		return handled();
	case SYS_clock_gettime:
		emulate_clock_gettime(s, t);
		return handled();
	case SYS_clock_getres:
		if (r->rsi) {
			struct timespec ts = { 0, 1 };

			mem_write(t->p, r->rsi, &ts, sizeof(ts));
		}
		skip(t, 0);
		return handled();
	case SYS_gettimeofday:
		emulate_gettimeofday(s, t);
		return handled();
	case SYS_time:
		emulate_time(s, t);
		return handled();
	case SYS_getrandom:
		emulate_getrandom(s, t);
		return handled();
	case SYS_getrusage:
		emulate_getrusage(s, t);
		return handled();
	case SYS_times:
		emulate_times(s, t);
		return handled();
	case SYS_sysinfo:
		emulate_sysinfo(s, t);
		return handled();
	case SYS_sched_getaffinity:
		emulate_getaffinity(s, t);
		return handled();
	case SYS_sched_setaffinity:
		note_setaffinity(s, t);
		return handled();
	case SYS_set_tid_address:
		t->ctid = r->rdi;
		/* ld.so's TLS set-up: its objects are mapped, their
		 * constructors not run yet */
		tsc_install(s, t->p);
		return handled();
	case SYS_futex:
		return futex_point(s, t);
	case SYS_flock:
		return flock_point(s, t);
	case SYS_fcntl:
		if ((int)r->rsi == F_SETLKW || (int)r->rsi == F_OFD_SETLKW)
			return record_lock_point(s, t);
		return handled();
	case SYS_futex_waitv:
		session_fail(s, FAIL_UNSUPPORTED, t,
			     "unsupported: futex_waitv cannot be made "
			     "deterministic yet");
		return true;
	case SYS_io_uring_setup:
		/*
		 * The kernel completes a ring's requests on its own time
		 * (inline, at a later syscall, or in its io-wq workers,
		 * which ptrace cannot stop), writing the program's buffers
		 * and the completion queue outside the schedule: a run
		 * would not be a function of its schedule (a failure that
		 * does not replay, a pass that did not cover the orders).
		 */
		session_fail(s, FAIL_UNSUPPORTED, t,
			     "unsupported: P%d %s uses io_uring (the kernel "
			     "completes its requests outside ptloom's "
			     "schedule)",
			     t->p->idx, t->p->comm);
		return true;
	case SYS_clone:
		t->clone_thread = r->rdi & CLONE_THREAD;
		t->clone_vm = (r->rdi & CLONE_VM) &&
			      !(r->rdi & (CLONE_THREAD | CLONE_VFORK));
		if (!t->clone_thread && s->cfg->free_children)
			return handled(); /* fork: the child runs freely */
		t->new_ctid = (r->rdi & CLONE_CHILD_CLEARTID) ? r->r10 : 0;
		t->fork_return = false;
		return point(t, OP_CLONE, 0, 0);
	case SYS_clone3: {
		uint64_t args[8] = { 0 };

		if (mem_read(t->p, r->rdi, args, sizeof(args)))
			return handled();
		t->clone_thread = args[0] & CLONE_THREAD;
		t->clone_vm = (args[0] & CLONE_VM) &&
			      !(args[0] & (CLONE_THREAD | CLONE_VFORK));
		if (!t->clone_thread && s->cfg->free_children)
			return handled();
		/* clone_args: child_tid at 16, tls at 56; glibc passes the
		 * thread's struct pthread as tls and &pd->tid as child_tid */
		if (t->clone_thread && (args[0] & CLONE_CHILD_CLEARTID) &&
		    args[7] && args[2] > args[7])
			t->p->join_off = args[2] - args[7];
		t->new_ctid = (args[0] & CLONE_CHILD_CLEARTID) ? args[2] : 0;
		t->fork_return = false;
		return point(t, OP_CLONE, 0, 0);
	}
	case SYS_exit:
		return point(t, OP_EXIT, 0, (int64_t)r->rdi);
	case SYS_exit_group:
		apart_check(s, t->p);
		bp_late_objects(s, t->p);
		if (t->p->idx > 0 && (r->rdi & 0xff) && !t->p->san_sig) {
			/* a sanitizer's report ends this way: its runtime
			 * exits itself (its own exit_group, not libc's) */
			int k = sanitizer_at(t->p->pid, r->rip - 1);

			if (k) {
				t->p->san_sig = SIG_SANITIZER + k;
				t->p->san_thread = t->idx;
				session_where(s, t, t->p->san_where,
					      sizeof(t->p->san_where));
			}
		}
		return point(t, OP_EXIT_GROUP, 0, (int)r->rdi);
	case SYS_sched_yield:
		return point(t, OP_YIELD, 0, 0);
	case SYS_nanosleep:
	case SYS_clock_nanosleep: {
		uint64_t ns, addr = nr == SYS_nanosleep ? r->rdi : r->rdx;

		t->sleep_abs = nr == SYS_clock_nanosleep &&
			       (r->rsi & TIMER_ABSTIME);
		if (read_ts(t, addr, &ns))
			return handled(); /* the kernel reports the error */
		if (t->sleep_abs && nr == SYS_clock_nanosleep &&
		    ((int)r->rdi == CLOCK_REALTIME ||
		     (int)r->rdi == CLOCK_TAI))
			ns = ns > s->realtime_base ? ns - s->realtime_base : 0;
		t->sleep_ns = ns;
		return point(t, OP_SLEEP, 0, (int64_t)ns);
	}
	case SYS_read:
		switch (read_kind(t, (int)r->rdi)) {
		case READ_RANDOM:
			emulate_random(s, t, r->rsi, r->rdx);
			return handled();
		case READ_STATUS:
			if (emulate_status_read(t, (int)r->rdi, r->rsi,
						r->rdx))
				return handled();
			break;
		}
		return fd_point(s, t, OP_READ, POLLIN, false);
	case SYS_readv:
		return fd_point(s, t, OP_READ, POLLIN, false);
	case SYS_recvfrom:
	case SYS_recvmsg:
		return fd_point(s, t, OP_READ, POLLIN,
				(nr == SYS_recvfrom ? r->r10 : r->rdx) &
					MSG_DONTWAIT);
	case SYS_write:
	case SYS_writev:
		return fd_point(s, t, OP_WRITE, POLLOUT, false);
	case SYS_sendto:
	case SYS_sendmsg:
		return fd_point(s, t, OP_WRITE, POLLOUT,
				(nr == SYS_sendto ? r->r10 : r->rdx) &
					MSG_DONTWAIT);
	case SYS_open:
	case SYS_openat:
		/* to read: the filter stops it only for a FIFO's open */
		if (!((nr == SYS_openat ? r->rdx : r->rsi) &
		      (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)))
			return fifo_point(s, t, nr);
	/* fall through */
	case SYS_openat2:
	case SYS_creat:
	case SYS_unlink:
	case SYS_unlinkat:
	case SYS_rename:
	case SYS_renameat:
	case SYS_renameat2:
	case SYS_mkdir:
	case SYS_mkdirat:
	case SYS_rmdir:
	case SYS_link:
	case SYS_linkat:
	case SYS_symlink:
	case SYS_symlinkat:
	case SYS_truncate:
	case SYS_mknod:
	case SYS_mknodat:
		if (nr == SYS_truncate && s->napart) {
			char path[256];

			read_path(t, r->rdi, path, sizeof(path));
			truncate_enter(s, t, -1, path);
		}
		fs_change(s, t, nr);
		/* an open the filter stops writes or creates: its file, at
		 * the exit (thread_exit_fix), for file_point */
		if (nr == SYS_open || nr == SYS_openat || nr == SYS_openat2 ||
		    nr == SYS_creat)
			thread_fix_at_exit(t, r);
		/* a directory made: the run's, at the exit
		 * (syscall_created_exit) */
		if (nr == SYS_mkdir || nr == SYS_mkdirat)
			thread_fix_at_exit(t, r);
		/* a FIFO made: the run's, at the exit (syscall_mknod_exit) */
		if ((nr == SYS_mknod && (r->rsi & S_IFMT) == S_IFIFO) ||
		    (nr == SYS_mknodat && (r->rdx & S_IFMT) == S_IFIFO))
			thread_fix_at_exit(t, r);
		if (nr == SYS_open || nr == SYS_openat)
			return fifo_point(s, t, nr);
		return handled();
	case SYS_semget:
	case SYS_msgget:
	case SYS_shmget:
		/* a semaphore set, message queue or shared memory segment is
		 * the kernel's: runs forked from a template that has one
		 * would share its values, messages and removal */
		t->p->sysv_ipc = true;
		/* a private one's id, at the exit (thread_exit_fix), for its
		 * removal at the run's end */
		if (r->rdi == IPC_PRIVATE)
			thread_fix_at_exit(t, r);
		return handled();
	case SYS_mq_timedreceive:
		return mq_point(s, t, OP_READ, POLLIN);
	case SYS_mq_timedsend:
		return mq_point(s, t, OP_WRITE, POLLOUT);
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_msgsnd:
	case SYS_msgrcv:
		return sem_point(s, t, nr);
	case SYS_pread64:
	case SYS_pwrite64:
	case SYS_preadv:
	case SYS_pwritev:
	case SYS_preadv2:
	case SYS_pwritev2:
	case SYS_ftruncate:
		if (nr == SYS_ftruncate)
			truncate_enter(s, t, (int)r->rdi, NULL);
		return file_at_point(s, t, nr);
	case SYS_accept:
	case SYS_accept4:
		return fd_point(s, t, OP_ACCEPT, POLLIN, false);
	case SYS_connect:
		return fd_point(s, t, OP_CONNECT, POLLOUT, true);
	case SYS_poll:
	case SYS_ppoll:
	case SYS_select:
	case SYS_pselect6:
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
		return poll_point(s, t, nr);
	case SYS_wait4:
	case SYS_waitid:
		t->wait_nohang = (nr == SYS_wait4 ? r->rdx : r->r10) & WNOHANG;
		return point(t, OP_WAIT4, 0, 0);
	case SYS_kill:
	case SYS_tgkill:
	case SYS_tkill:
		if ((nr == SYS_tgkill ? r->rdx : r->rsi) == SIGKILL)
			s->self_kill = true;
		point(t, OP_KILL, 0, 0);
		signal_note_send(s, t, nr);
		return true;
	case PTLOOM_SYSCALL_NR:
		point(t, OP_ANNOTATE, r->rdi, 0);
		return true;
	case SYS_ptrace:
		/*
		 * A debugger, strace, a PTRACE_TRACEME child: every
		 * process is ptloom's tracee already, so the kernel would
		 * refuse (EPERM) what natively works, a different run.
		 */
		session_fail(s, FAIL_UNSUPPORTED, t,
			     "unsupported: P%d %s uses ptrace (ptloom is the "
			     "tracer of every process it runs)",
			     t->p->idx, t->p->comm);
		return true;
	default:
		return handled();
	}
}

/* Wake up to n waiters of addr.  A wake of one among several is a choice
 * (DEC_WAKE).  Woken threads become ready to return 0 from their wait. */
void futex_wake_addr(struct session *s, uint64_t addr, int n, uint32_t bitset,
		     int *woken)
{
	int w[MAX_ALTS];
	int k = futex_waiters(&s->ft, addr, bitset, w, MAX_ALTS);

	*woken = 0;
	if (n <= 0 || !k)
		return;
	if (n == 1 && k == MAX_ALTS &&
	    futex_count(&s->ft, addr) > MAX_ALTS)
		session_note_capped(s, futex_count(&s->ft, addr));
	if (n == 1 && k > 1) {
		struct choice c;

		c.kind = DEC_WAKE;
		c.current = s->current;
		c.nalts = 0;
		for (int i = 0; i < k; i++) {
			struct thread *x = &s->th[w[i]];

			c.alts[c.nalts++] = (struct alt){
				.thread = (uint16_t)x->idx, .kind = OP_WOKEN,
				.obj = addr };
		}
		int pick = session_pick_or_fail(s, &c, "a wake");

		if (pick < 0)
			return;
		w[0] = w[pick];
		k = 1;
	}
	/* up to n, MAX_ALTS at a time: a wake of all (a barrier, a
	 * broadcast) over more waiters than that left the rest asleep, a
	 * false deadlock (tests/targets/threads_n.c with 300 threads) */
	for (;;) {
		for (int i = 0; i < k && *woken < n; i++) {
			futex_remove(&s->ft, w[i]);
			thread_make_ready(s, &s->th[w[i]], OP_WOKEN, 0);
			s->th[w[i]].futex_woken = true;
			(*woken)++;
		}
		if (*woken >= n || k < MAX_ALTS)
			break;
		k = futex_waiters(&s->ft, addr, bitset, w, MAX_ALTS);
		if (!k)
			break;
	}
}

/* FUTEX_WAKE_OP: *uaddr2 = op(*uaddr2, oparg); wake uaddr; if cmp(old,
 * cmparg) wake uaddr2 too. */
static int64_t futex_wake_op(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	uint32_t enc = (uint32_t)r->r9, old, nv;
	int op = (enc >> 28) & 7, cmp = (enc >> 24) & 15;
	int oparg = (int32_t)(enc << 8) >> 20, cmparg = (int32_t)(enc << 20) >> 20;
	int a = 0, b = 0;

	if ((enc >> 28) & 8)
		oparg = 1 << (oparg & 31);
	if (mem_read(t->p, r->r8, &old, 4))
		return -EFAULT;
	switch (op) {
	case FUTEX_OP_SET: nv = (uint32_t)oparg; break;
	case FUTEX_OP_ADD: nv = old + (uint32_t)oparg; break;
	case FUTEX_OP_OR: nv = old | (uint32_t)oparg; break;
	case FUTEX_OP_ANDN: nv = old & ~(uint32_t)oparg; break;
	case FUTEX_OP_XOR: nv = old ^ (uint32_t)oparg; break;
	default: return -ENOSYS;
	}
	if (mem_write(t->p, r->r8, &nv, 4))
		return -EFAULT;
	futex_wake_addr(s, fkey(t, r->rdi), (int)r->rdx, ~0u, &a);
	bool c;

	switch (cmp) {
	case FUTEX_OP_CMP_EQ: c = (int)old == cmparg; break;
	case FUTEX_OP_CMP_NE: c = (int)old != cmparg; break;
	case FUTEX_OP_CMP_LT: c = (int)old < cmparg; break;
	case FUTEX_OP_CMP_LE: c = (int)old <= cmparg; break;
	case FUTEX_OP_CMP_GT: c = (int)old > cmparg; break;
	case FUTEX_OP_CMP_GE: c = (int)old >= cmparg; break;
	default: return -ENOSYS;
	}
	if (c)
		futex_wake_addr(s, fkey(t, r->r8), (int)r->r10, ~0u, &b);
	return a + b;
}

static void block(struct session *s, struct thread *t, int kind, bool timed,
		  uint64_t deadline, int64_t timeout_result)
{
	t->st = SCHED_BLOCKED;
	t->block = kind;
	t->timed = timed;
	if (timed)
		time_observed(s);
	t->deadline = deadline;
	t->armed = s->step;
	t->timeout_result = timeout_result;
}

/* A futex call's deadline on the virtual clock from its timeout (r10):
 * relative, or absolute on CLOCK_REALTIME or CLOCK_MONOTONIC.  0, or
 * the call's error (-EINVAL, or -ETIMEDOUT when it is past). */
static int futex_deadline(struct session *s, struct thread *t, bool relative,
			  bool realtime, uint64_t *deadline)
{
	uint64_t ns;

	time_observed(s);
	if (read_ts(t, t->regs.r10, &ns))
		return -EINVAL;
	if (relative)
		*deadline = s->now + ns;
	else if (realtime)
		*deadline = ns > s->realtime_base ? ns - s->realtime_base : 0;
	else
		*deadline = ns;
	return *deadline <= s->now ? -ETIMEDOUT : 0;
}

/*
 * Hand a priority-inheritance lock to its oldest waiter, as the kernel's
 * unlock (and its owner's death) does: the word names the new owner with
 * FUTEX_WAITERS kept (the kernel keeps it while it holds PI state, so the
 * next unlock comes to it), and the waiter's FUTEX_LOCK_PI returns 0.
 * died: FUTEX_OWNER_DIED stays set (a robust owner died).  Waiters of
 * equal priority are served in FIFO order by the kernel's rt_mutex (every
 * non-real-time thread has the default priority there), so this is no
 * choice.  False: nobody waits.
 */
static bool pi_hand_over(struct session *s, struct process *p, uint64_t key,
			 uint64_t uaddr, bool died)
{
	bool more;
	int w = futex_pi_first(&s->ft, key, &more);
	uint32_t nv;

	if (w < 0)
		return false;
	nv = (uint32_t)s->th[w].tid | FUTEX_WAITERS |
	     (died ? FUTEX_OWNER_DIED : 0);
	if (mem_write(p, uaddr, &nv, 4))
		return false;
	futex_remove(&s->ft, w);
	thread_make_ready(s, &s->th[w], OP_WOKEN, 0);
	s->th[w].futex_woken = true;
	return true;
}

/*
 * A thread is gone: a priority-inheritance lock it owned passes to its
 * oldest waiter, with FUTEX_OWNER_DIED when the robust list marked it
 * (the kernel's exit_pi_state_list, then the waiter's fix-up of the
 * word).  A waiter's futex address is its own call's (it waits at its
 * seccomp stop).
 */
void futex_pi_owner_gone(struct session *s, const struct thread *dead)
{
	for (size_t i = 0; i < s->ft.n; i++) {
		struct futex_waiter fw = s->ft.w[i];
		struct thread *w = &s->th[fw.thread];
		uint32_t word;

		if (fw.bitset != FUTEX_PI_WAITER ||
		    mem_read(w->p, w->regs.rdi, &word, 4))
			continue;
		if ((word & FUTEX_TID_MASK) != (uint32_t)dead->tid &&
		    (word & FUTEX_TID_MASK))
			continue;
		if (pi_hand_over(s, w->p, fw.addr, w->regs.rdi,
				 word & FUTEX_OWNER_DIED))
			i = (size_t)-1; /* the table changed: look again */
	}
}

/*
 * FUTEX_LOCK_PI, LOCK_PI2, TRYLOCK_PI and UNLOCK_PI, as the kernel does
 * them (kernel/futex/pi.c): the word holds the owner's kernel thread id,
 * FUTEX_WAITERS and FUTEX_OWNER_DIED; a lock of a held word sets
 * FUTEX_WAITERS and waits until the owner's unlock hands it over.  Not
 * modelled: the kernel's deadlock detection along chains of PI owners
 * (EDEADLK for a cycle through other threads: glibc then waits forever,
 * or asserts for error-checking and recursive mutexes); here the cycle is
 * a deadlock.
 */
static bool futex_pi_execute(struct session *s, struct thread *t, int cmd)
{
	struct user_regs_struct *r = &t->regs;
	uint64_t key = fkey(t, r->rdi), deadline = 0;
	uint32_t val, nv, me = (uint32_t)t->tid, owner;
	int op = (int)r->rsi;
	bool more, timed = r->r10 != 0 && cmd != FUTEX_TRYLOCK_PI &&
			   cmd != FUTEX_UNLOCK_PI;

	if ((op & FUTEX_CLOCK_REALTIME) && cmd != FUTEX_LOCK_PI2) {
		skip(t, -ENOSYS);
		return true;
	}
	if (r->rdi & 3) {
		skip(t, -EINVAL);
		return true;
	}
	if (mem_read(t->p, r->rdi, &val, 4)) {
		skip(t, -EFAULT);
		return true;
	}
	owner = val & FUTEX_TID_MASK;
	if (cmd == FUTEX_UNLOCK_PI) {
		if (owner != me) {
			skip(t, -EPERM);
			return true;
		}
		if (!pi_hand_over(s, t->p, key, r->rdi, false)) {
			nv = 0;
			if (mem_write(t->p, r->rdi, &nv, 4)) {
				skip(t, -EFAULT);
				return true;
			}
		}
		skip(t, 0);
		return true;
	}
	if (owner == me) {
		skip(t, -EDEADLK);
		return true;
	}
	if (!owner) {
		/* free (or its robust owner died): ours */
		nv = me | (val & FUTEX_OWNER_DIED) |
		     (futex_pi_first(&s->ft, key, &more) >= 0 ? FUTEX_WAITERS
							      : 0);
		skip(t, mem_write(t->p, r->rdi, &nv, 4) ? -EFAULT : 0);
		return true;
	}
	if (cmd == FUTEX_TRYLOCK_PI) {
		skip(t, -EWOULDBLOCK);
		return true;
	}
	struct thread *holder = find_thread(s, (pid_t)owner);

	if (!holder || holder->st == SCHED_DEAD) {
		/* an owner that is gone without its robust list saying so */
		skip(t, -ESRCH);
		return true;
	}
	if (timed) {
		/* absolute: LOCK_PI's on CLOCK_REALTIME, LOCK_PI2's on
		 * CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME */
		int e = futex_deadline(s, t, false,
				       cmd == FUTEX_LOCK_PI ||
					       (op & FUTEX_CLOCK_REALTIME),
				       &deadline);

		if (e) {
			skip(t, e);
			return true;
		}
	}
	nv = val | FUTEX_WAITERS;
	if (nv != val && mem_write(t->p, r->rdi, &nv, 4)) {
		skip(t, -EFAULT);
		return true;
	}
	futex_wait(&s->ft, key, FUTEX_PI_WAITER, t->idx);
	block(s, t, BLOCK_FUTEX, timed, deadline, -ETIMEDOUT);
	t->pi_wait = true;
	return false;
}

static bool futex_execute(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	int op = (int)r->rsi, cmd = op & FUTEX_CMD_MASK;
	uint32_t val;
	int woken = 0;

	switch (cmd) {
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_TRYLOCK_PI:
	case FUTEX_UNLOCK_PI:
		return futex_pi_execute(s, t, cmd);
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET: {
		uint32_t bitset = cmd == FUTEX_WAIT ? ~0u : (uint32_t)r->r9;
		uint64_t deadline = 0;
		bool timed = r->r10 != 0;

		if (!bitset) {
			skip(t, -EINVAL);
			return true;
		}
		if (mem_read(t->p, r->rdi, &val, 4)) {
			skip(t, -EFAULT);
			return true;
		}
		if (val != (uint32_t)r->rdx) {
			skip(t, -EAGAIN);
			return true;
		}
		if (timed) {
			int e = futex_deadline(s, t, cmd == FUTEX_WAIT,
					       op & FUTEX_CLOCK_REALTIME,
					       &deadline);

			if (e) {
				skip(t, e);
				return true;
			}
		}
		futex_wait(&s->ft, fkey(t, r->rdi), bitset, t->idx);
		block(s, t, BLOCK_FUTEX, timed, deadline, -ETIMEDOUT);
		return false;
	}
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET: {
		uint32_t bitset = cmd == FUTEX_WAKE ? ~0u : (uint32_t)r->r9;

		if (!bitset) {
			skip(t, -EINVAL);
			return true;
		}
		futex_wake_addr(s, fkey(t, r->rdi), (int)r->rdx, bitset, &woken);
		skip(t, woken);
		return true;
	}
	case FUTEX_WAKE_OP:
		skip(t, futex_wake_op(s, t));
		return true;
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE: {
		if (cmd == FUTEX_CMP_REQUEUE) {
			if (mem_read(t->p, r->rdi, &val, 4)) {
				skip(t, -EFAULT);
				return true;
			}
			if (val != (uint32_t)r->r9) {
				skip(t, -EAGAIN);
				return true;
			}
		}
		futex_wake_addr(s, fkey(t, r->rdi), (int)r->rdx, ~0u, &woken);
		int moved = futex_requeue(&s->ft, fkey(t, r->rdi),
					  fkey(t, r->r8), (int)r->r10);

		skip(t, cmd == FUTEX_CMP_REQUEUE ? woken + moved : woken);
		return true;
	}
	}
	return true;
}

/* A descriptor operation ready (or non-blocking) is the kernel's to
 * perform; otherwise t waits for its descriptor. */
static bool fd_execute(struct session *s, struct thread *t)
{
	if (waits_sem(t) && t->sem_waited && sem_gone(t)) {
		/* its set (queue) was removed while it waited */
		syscall_close_fds(t);
		skip(t, -EIDRM);
		return true;
	}
	if (t->nonblock || syscall_fd_ready(s, t)) {
		if (waits_fifo(t))
			fifo_go(s, t);
		syscall_close_fds(t);
		return true;
	}
	if (t->fd_abs) {
		/* a message queue's deadline, a semtimedop's timeout (a
		 * SysV message queue's calls have none) */
		int64_t late = waits_sem(t) ? -EAGAIN : -ETIMEDOUT;

		time_observed(s);
		if (t->fd_deadline <= s->now) {
			syscall_close_fds(t);
			skip(t, late);
			return true;
		}
		t->sem_waited = waits_sem(t);
		block(s, t, BLOCK_FD, true, t->fd_deadline, late);
		return false;
	}
	t->sem_waited = waits_sem(t);
	/* a socket's SO_RCVTIMEO or SO_SNDTIMEO: it times out as the
	 * kernel's wait would, on the virtual clock */
	block(s, t, BLOCK_FD, t->fd_timeout_ns > 0,
	      s->now + t->fd_timeout_ns,
	      t->kind == OP_CONNECT ? -EINPROGRESS : -EAGAIN);
	return false;
}

bool syscall_execute(struct session *s, struct thread *t)
{
	switch (t->kind) {
	case OP_FUTEX_WAIT:
	case OP_FUTEX_WAKE:
	case OP_FUTEX_REQUEUE:
		return futex_execute(s, t);
	case OP_YIELD:
		skip(t, 0);
		return true;
	case OP_ANNOTATE:
		skip(t, 0);
		return true;
	case OP_SYSCALL:
		/* a lock free now, or no wait (LOCK_NB, LOCK_UN), a FIFO's
		 * other end open: the kernel's to take, as a ready
		 * descriptor's operation */
		if (waits_lock(t) || waits_sem(t) || waits_fifo(t))
			return fd_execute(s, t);
		return signal_execute(s, t);
	case OP_WAIT4:
		return s->cfg->free_children || process_wait_execute(s, t);
	case OP_KILL:
		if (!regs_get(t) && signal_to_supervisor(s, t))
			return true;
		s->sig_maybe = true; /* the kernel sends it now */
		if (!regs_get(t))
			signal_route(s, t);
		if (!s->cfg->free_children)
			process_kill_execute(s, t);
		return true;
	case OP_SLEEP: {
		time_observed(s);
		uint64_t deadline = t->sleep_abs ? t->sleep_ns
						 : s->now + t->sleep_ns;

		if (deadline <= s->now) {
			skip(t, 0);
			return true;
		}
		block(s, t, BLOCK_SLEEP, true, deadline, 0);
		return false;
	}
	case OP_READ: {
		bool runs;

		if (timer_read(s, t, &runs)) {
			if (runs)
				syscall_close_fds(t);
			return runs;
		}
	}
	/* fall through */
	case OP_WRITE:
		if (t->kind == OP_WRITE && t->wbig) {
			int w = bigwrite_step(t);

			if (w == BIGWRITE_BLOCKED) {
				block(s, t, BLOCK_FD, false, 0, 0);
				return false;
			}
			if (w == BIGWRITE_DONE) {
				skip(t, (int64_t)t->wdone);
				syscall_close_fds(t);
				return true;
			}
		}
	/* fall through */
	case OP_ACCEPT:
	case OP_CONNECT:
		return fd_execute(s, t);
	case OP_POLL:
		if (t->poll_left && t->poll_start == UINT64_MAX)
			t->poll_start = s->now;
		if (t->nonblock || syscall_fd_ready(s, t)) {
			evloop_poll(s, t);
			poll_time_left(s, t);
			syscall_close_fds(t);
			return true;
		}
		block(s, t, BLOCK_POLL, t->poll_timeout_ms >= 0,
		      s->now + (uint64_t)t->poll_timeout_ms * 1000000ull, 0);
		return false;
	default:
		return true;
	}
}

/* The answer of the rdtsc (or rdtscp) at t's pc, from the virtual clock:
 * t goes on after it (len bytes).  Its registers are read. */
void syscall_answer_rdtsc(struct session *s, struct thread *t, bool rdtscp,
			  int len)
{
	time_observed(s);
	uint64_t tsc = s->now * 3;

	s->now += s->quantum;
	t->regs.rip += (uint64_t)len;
	if (rdtscp)
		t->regs.rcx = 0;
	t->regs.rax = tsc & 0xffffffffu;
	t->regs.rdx = tsc >> 32;
	t->regs_dirty = true;
}

/* rdtsc/rdtscp trapped by PR_SET_TSC arrive as SIGSEGV: answer them from
 * the virtual clock. */
bool syscall_emulate_rdtsc(struct session *s, struct thread *t)
{
	uint8_t c[3];

	if (regs_get(t) || mem_read(t->p, t->regs.rip, c, 3))
		return false;
	if (c[0] == 0x0f && c[1] == 0x31)
		syscall_answer_rdtsc(s, t, false, 2);
	else if (c[0] == 0x0f && c[1] == 0x01 && c[2] == 0xf9)
		syscall_answer_rdtsc(s, t, true, 3);
	else
		return false;
	return true;
}
