/*
 * Timers on the virtual clock: alarm, setitimer/getitimer(ITIMER_REAL),
 * POSIX timers (timer_create/settime/gettime/getoverrun/delete) and
 * timerfds.
 *
 * The kernel never arms these: they are kept here per process, in
 * virtual monotonic nanoseconds.  An armed timer is a deadline like a
 * futex timeout: while a thread can run, its expiry is an explored
 * choice (an OP_TIMER alternative that costs a preemption,
 * timer_alternatives()); when nobody can run, time jumps to the earliest
 * timer for free (timer_tick()); and once the virtual clock has passed a
 * deadline the timer has fired (as the kernel's would have).
 *
 * Firing sends what the kernel would: SIGALRM to the process for alarm
 * and ITIMER_REAL; the sigevent's signal with an SI_TIMER siginfo (timer
 * id, overrun, sigev_value) to the process or, with SIGEV_THREAD_ID, to
 * one thread (glibc's SIGEV_THREAD is a helper thread in sigwaitinfo
 * woken that way, see tests/real/posix_timer.c).  A timerfd's
 * expirations are counted here and read from here; the kernel's own
 * timerfd is kept readable exactly while the count is non-zero, so poll,
 * select and epoll see it ready (tests/real/timerfd_poll.c).
 *
 * CPU-time timers (ITIMER_VIRTUAL, ITIMER_PROF, the CPU clocks of
 * timer_create) have no virtual equivalent: arming one ends the run as
 * `unsupported:`; they never run on the real clock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "process.h"
#include "session_int.h"
#include "signal.h"
#include "timer.h"

#define NS 1000000000ull

enum { PT_ITIMER, PT_POSIX, PT_TIMERFD };

struct ptimer {
	pid_t pid;		/* the process */
	int kind;		/* PT_* */
	int id;			/* timerfd: its fd; POSIX: the timer id */
	bool realtime;		/* absolute times are CLOCK_REALTIME's */
	int notify;		/* POSIX: SIGEV_SIGNAL, _NONE, _THREAD_ID */
	int signo;
	pid_t tid;		/* SIGEV_THREAD_ID: the thread */
	uint64_t value;		/* sigev_value */
	uint64_t deadline;	/* virtual monotonic ns, 0 = disarmed */
	uint64_t armed;		/* the step it was last set at */
	uint64_t interval;
	uint64_t expired;	/* timerfd: expirations not yet read */
	int overrun;		/* POSIX: of the last signal sent */
	bool dead;		/* deleted (or its process exec'd) */
	int file;		/* timerfd: our descriptor of its open file */
	uint64_t checked;	/* timerfd: step + 1 its holders were checked */
};

struct timers {
	struct ptimer *t;
	int n, cap;
};

static struct ptimer *find(struct session *s, pid_t pid, int kind, int id,
			   bool make)
{
	struct timers *tm = s->timers;

	if (!tm) {
		if (!make || !(tm = s->timers = calloc(1, sizeof(*tm))))
			return NULL;
	}
	for (int i = 0; i < tm->n; i++)
		if (tm->t[i].pid == pid && tm->t[i].kind == kind &&
		    tm->t[i].id == id && !tm->t[i].dead)
			return &tm->t[i];
	if (!make)
		return NULL;
	if (tm->n == tm->cap) {
		int cap = tm->cap ? tm->cap * 2 : 8;
		struct ptimer *n = realloc(tm->t, (size_t)cap * sizeof(*n));

		if (!n)
			return NULL;
		tm->t = n;
		tm->cap = cap;
	}
	tm->t[tm->n] = (struct ptimer){ .pid = pid, .kind = kind, .id = id,
					.file = -1 };
	return &tm->t[tm->n++];
}

static void skip(struct thread *t, int64_t result)
{
	t->skip = true;
	t->result = result;
}

static uint64_t left(struct session *s, const struct ptimer *p)
{
	return p && p->deadline > s->now ? p->deadline - s->now : 0;
}

static void to_tv(uint64_t ns, struct timeval *tv)
{
	tv->tv_sec = (time_t)(ns / NS);
	tv->tv_usec = (suseconds_t)(ns % NS / 1000);
}

static void to_ts(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / NS);
	ts->tv_nsec = (long)(ns % NS);
}

static bool ts_ok(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < (long)NS;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NS + (uint64_t)ts->tv_nsec;
}

static bool fd_is(pid_t pid, int fd, const char *what)
{
	char name[64], link[64];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/fd/%d", pid, fd);
	n = readlink(name, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return strstr(link, what) != NULL;
}

/* A timerfd's clock, from /proc/PID/fdinfo/FD. */
static int timerfd_clock(pid_t pid, int fd)
{
	char name[64], line[128];
	int clk = CLOCK_MONOTONIC;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/fdinfo/%d", pid, fd);
	if (!(f = fopen(name, "re")))
		return clk;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "clockid: %d", &clk) == 1)
			break;
	fclose(f);
	return clk;
}

static bool is_realtime(int clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_ALARM ||
	       clk == CLOCK_TAI;
}

/*
 * Make the kernel's timerfd readable exactly when expirations are
 * counted here: a one-nanosecond one-shot arms it (and we wait for it to
 * fire), a disarm resets its count.  Through our descriptor of the
 * program's open file.
 */
static void timerfd_sync(struct session *s, struct ptimer *p)
{
	struct itimerspec its = { { 0, 0 }, { 0, p->expired ? 1 : 0 } };

	(void)s;
	if (p->file >= 0 && timerfd_settime(p->file, 0, &its, NULL) == 0 &&
	    p->expired) {
		struct pollfd pf = { .fd = p->file, .events = POLLIN };

		poll(&pf, 1, 1000);
	}
}

/*
 * The timerfd whose open file ours (our descriptor of a tracee's fd)
 * is: a timerfd is its open file, shared by dup and fork, so entries are
 * matched with kcmp, never by descriptor number (which a close and a new
 * timerfd_create reuse).  make: a new entry keeps ours; else ours stays
 * the caller's.
 */
static struct ptimer *find_timerfd(struct session *s, pid_t pid, int fd,
				   int ours, bool make)
{
	struct timers *tm = s->timers;
	pid_t me = getpid();

	for (int i = 0; tm && i < tm->n; i++)
		if (tm->t[i].kind == PT_TIMERFD && tm->t[i].file >= 0 &&
		    syscall(SYS_kcmp, me, me, KCMP_FILE, tm->t[i].file, ours) ==
			    0)
			return &tm->t[i];
	if (!make)
		return NULL;
	/* find() would match a stale entry of the same number */
	struct ptimer *p = find(s, pid, PT_TIMERFD, -2, true);

	if (p) {
		p->id = fd;
		p->file = ours;
	}
	return p;
}

/* CPU-time timers cannot run on the virtual clock. */
static bool unsupported(struct session *s, struct thread *t, bool *point,
			const char *what)
{
	session_fail(s, FAIL_UNSUPPORTED, t,
		     "unsupported: %s (a CPU-time timer: ptloom's clock is "
		     "virtual, and the real one would make runs differ)",
		     what);
	*point = true;
	return true;
}

static bool itimer(struct session *s, struct thread *t, long nr, bool *point)
{
	struct user_regs_struct *r = &t->regs;
	pid_t pid = t->p->pid;
	int which = (int)r->rdi;
	struct itimerval nv, ov;
	uint64_t old_addr = nr == SYS_getitimer ? r->rsi : r->rdx;
	struct ptimer *p = NULL;

	if (which != ITIMER_REAL && which != ITIMER_VIRTUAL &&
	    which != ITIMER_PROF)
		return false; /* the kernel says EINVAL */
	memset(&ov, 0, sizeof(ov));
	if (which == ITIMER_REAL) {
		p = find(s, pid, PT_ITIMER, 0, true);
		to_tv(left(s, p), &ov.it_value);
		to_tv(p ? p->interval : 0, &ov.it_interval);
	}
	if (nr == SYS_setitimer && r->rsi) {
		if (mem_read(t->p, r->rsi, &nv, sizeof(nv))) {
			skip(t, -EFAULT);
			return true;
		}
		if (nv.it_value.tv_usec < 0 || nv.it_value.tv_usec >= 1000000 ||
		    nv.it_interval.tv_usec < 0 ||
		    nv.it_interval.tv_usec >= 1000000 ||
		    nv.it_value.tv_sec < 0 || nv.it_interval.tv_sec < 0) {
			skip(t, -EINVAL);
			return true;
		}
		uint64_t v = (uint64_t)nv.it_value.tv_sec * NS +
			     (uint64_t)nv.it_value.tv_usec * 1000;

		if (which != ITIMER_REAL) {
			if (v)
				return unsupported(
					s, t, point,
					which == ITIMER_PROF
						? "setitimer(ITIMER_PROF)"
						: "setitimer(ITIMER_VIRTUAL)");
			/* disarming one never armed: nothing to do */
		} else if (p) {
			p->deadline = v ? s->now + v : 0;
			p->armed = s->step;
			p->interval = (uint64_t)nv.it_interval.tv_sec * NS +
				      (uint64_t)nv.it_interval.tv_usec * 1000;
			if (v)
				signal_handler_may_run(s, t, SIGALRM);
		}
	}
	if (old_addr && mem_write(t->p, old_addr, &ov, sizeof(ov))) {
		skip(t, -EFAULT);
		return true;
	}
	skip(t, 0);
	return true;
}

/* struct sigevent as the kernel reads it */
struct ksigevent {
	uint64_t value;
	int signo;
	int notify;
	int tid;
};

static bool thread_of_process(struct session *s, pid_t pid, pid_t tid)
{
	for (int i = 0; i < s->nth; i++)
		if (s->th[i].tid == tid && s->th[i].p->pid == pid &&
		    s->th[i].st != SCHED_DEAD)
			return true;
	return false;
}

static int64_t posix_create(struct session *s, struct thread *t, bool *point)
{
	struct user_regs_struct *r = &t->regs;
	int clk = (int)r->rdi;
	struct ksigevent ev = { 0 };
	struct timers *tm;
	struct ptimer *p;

	if (clk < 0 || clk == CLOCK_PROCESS_CPUTIME_ID ||
	    clk == CLOCK_THREAD_CPUTIME_ID) {
		unsupported(s, t, point, "timer_create on a CPU-time clock");
		return 0;
	}
	if (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC &&
	    clk != CLOCK_BOOTTIME && clk != CLOCK_REALTIME_ALARM &&
	    clk != CLOCK_BOOTTIME_ALARM && clk != CLOCK_TAI)
		return -EINVAL;
	if (r->rsi) {
		if (mem_read(t->p, r->rsi, &ev, sizeof(ev)))
			return -EFAULT;
	} else {
		ev.notify = SIGEV_SIGNAL;
		ev.signo = SIGALRM;
	}
	switch (ev.notify) {
	case SIGEV_NONE:
		break;
	case SIGEV_SIGNAL | SIGEV_THREAD_ID:
		if (!thread_of_process(s, t->p->pid, ev.tid))
			return -EINVAL;
		/* fall through */
	case SIGEV_SIGNAL:
		if (ev.signo <= 0 || ev.signo > 64)
			return -EINVAL;
		break;
	default:
		return -EINVAL; /* SIGEV_THREAD is glibc's, not the kernel's */
	}
	if (!s->timers && !(s->timers = calloc(1, sizeof(*s->timers))))
		return -ENOMEM;
	tm = s->timers;
	int id = 0;

	/* the kernel's ids: the lowest free one of the process from 0 */
	for (bool used = true; used; id += used) {
		used = false;
		for (int i = 0; i < tm->n; i++)
			if (tm->t[i].pid == t->p->pid &&
			    tm->t[i].kind == PT_POSIX && !tm->t[i].dead &&
			    tm->t[i].id == id)
				used = true;
	}
	int32_t kid = id;

	if (mem_write(t->p, r->rdx, &kid, sizeof(kid)))
		return -EFAULT;
	if (!(p = find(s, t->p->pid, PT_POSIX, id, true)))
		return -ENOMEM;
	p->realtime = is_realtime(clk);
	p->notify = ev.notify;
	p->signo = ev.signo;
	p->tid = ev.tid;
	p->value = r->rsi ? ev.value : (uint64_t)id;
	return 0;
}

static int64_t posix_call(struct session *s, struct thread *t, long nr,
			  bool *point)
{
	struct user_regs_struct *r = &t->regs;
	struct ptimer *p;
	struct itimerspec nv, ov;

	if (nr == SYS_timer_create)
		return posix_create(s, t, point);
	p = find(s, t->p->pid, PT_POSIX, (int)r->rdi, false);
	if (!p)
		return -EINVAL;
	switch (nr) {
	case SYS_timer_delete:
		p->dead = true;
		p->deadline = 0;
		return 0;
	case SYS_timer_getoverrun:
		return p->overrun;
	case SYS_timer_gettime:
	case SYS_timer_settime: {
		uint64_t old_addr = nr == SYS_timer_gettime ? r->rsi : r->r10;

		memset(&ov, 0, sizeof(ov));
		to_ts(left(s, p), &ov.it_value);
		to_ts(p->interval, &ov.it_interval);
		if (nr == SYS_timer_settime) {
			if (mem_read(t->p, r->rdx, &nv, sizeof(nv)))
				return -EFAULT;
			if (!ts_ok(&nv.it_value) || !ts_ok(&nv.it_interval))
				return -EINVAL;
			uint64_t v = ts_ns(&nv.it_value);

			if (v && (r->rsi & TIMER_ABSTIME)) {
				if (p->realtime)
					v = v > s->realtime_base
						    ? v - s->realtime_base
						    : 0;
				/* already past: fires at once */
				p->deadline = v > s->now ? v : s->now;
			} else {
				p->deadline = v ? s->now + v : 0;
			}
			p->armed = s->step;
			p->interval = p->deadline ? ts_ns(&nv.it_interval) : 0;
			p->overrun = 0;
			if (p->deadline && (p->notify == SIGEV_SIGNAL ||
					    p->notify == SIGEV_THREAD_ID))
				signal_handler_may_run(s, t, p->signo);
		}
		if (old_addr && mem_write(t->p, old_addr, &ov, sizeof(ov)))
			return -EFAULT;
		return 0;
	}
	}
	return -ENOSYS;
}

static bool timerfd_call(struct session *s, struct thread *t, long nr)
{
	struct user_regs_struct *r = &t->regs;
	pid_t pid = t->p->pid;
	int fd = (int)r->rdi;
	struct itimerspec nv, ov;
	uint64_t old_addr = nr == SYS_timerfd_gettime ? r->rsi : r->r10;
	struct ptimer *p;

	if (!fd_is(pid, fd, "[timerfd]") || process_pidfd(t->p) < 0)
		return false; /* the kernel says EBADF/EINVAL */
	int ours = (int)syscall(SYS_pidfd_getfd, t->p->pidfd, fd, 0);

	if (ours < 0)
		return false;
	p = find_timerfd(s, pid, fd, ours, false);
	if (p) {
		close(ours);
	} else {
		if (!(p = find_timerfd(s, pid, fd, ours, true))) {
			close(ours);
			skip(t, -ENOMEM);
			return true;
		}
		p->realtime = is_realtime(timerfd_clock(pid, fd));
	}
	memset(&ov, 0, sizeof(ov));
	to_ts(left(s, p), &ov.it_value);
	to_ts(p->interval, &ov.it_interval);
	if (nr == SYS_timerfd_settime) {
		if (mem_read(t->p, r->rdx, &nv, sizeof(nv))) {
			skip(t, -EFAULT);
			return true;
		}
		if (!ts_ok(&nv.it_value) || !ts_ok(&nv.it_interval)) {
			skip(t, -EINVAL);
			return true;
		}
		uint64_t v = ts_ns(&nv.it_value);

		if (v && (r->rsi & TFD_TIMER_ABSTIME)) {
			if (p->realtime)
				v = v > s->realtime_base ? v - s->realtime_base
							 : 0;
			p->deadline = v > s->now ? v : s->now;
		} else {
			p->deadline = v ? s->now + v : 0;
		}
		p->armed = s->step;
		p->interval = p->deadline ? ts_ns(&nv.it_interval) : 0;
		if (p->expired) {
			p->expired = 0; /* settime resets the count */
			timerfd_sync(s, p);
		}
	}
	if (old_addr && mem_write(t->p, old_addr, &ov, sizeof(ov))) {
		skip(t, -EFAULT);
		return true;
	}
	skip(t, 0);
	return true;
}

bool timer_enter(struct session *s, struct thread *t, long nr, bool *point)
{
	struct user_regs_struct *r = &t->regs;
	pid_t pid = t->p->pid;
	struct ptimer *p;

	*point = false;
	switch (nr) {
	case SYS_alarm:
	case SYS_setitimer:
	case SYS_getitimer:
	case SYS_timer_create:
	case SYS_timer_settime:
	case SYS_timer_gettime:
	case SYS_timer_getoverrun:
	case SYS_timer_delete:
	case SYS_timerfd_settime:
	case SYS_timerfd_gettime:
		time_observed(s);
		break;
	default:
		break;
	}
	/* race discovery: what the thread did before it armed a timer
	 * comes before the handler of the signal the timer sends, in
	 * whichever thread (as a kill's send, world.c) */
	if (nr == SYS_alarm || nr == SYS_setitimer || nr == SYS_timer_settime)
		signal_release_to_handlers(s, t);
	switch (nr) {
	case SYS_alarm: {
		p = find(s, pid, PT_ITIMER, 0, true);
		uint64_t was = left(s, p);

		if (p) {
			p->deadline = r->rdi ? s->now + r->rdi * NS : 0;
			p->armed = s->step;
			p->interval = 0;
		}
		if (r->rdi)
			signal_handler_may_run(s, t, SIGALRM);
		/* seconds left of the previous alarm, rounded up */
		skip(t, (int64_t)((was + NS - 1) / NS));
		return true;
	}
	case SYS_setitimer:
	case SYS_getitimer:
		return itimer(s, t, nr, point);
	case SYS_timer_create:
	case SYS_timer_settime:
	case SYS_timer_gettime:
	case SYS_timer_getoverrun:
	case SYS_timer_delete: {
		int64_t res = posix_call(s, t, nr, point);

		if (!*point)
			skip(t, res);
		return true;
	}
	case SYS_timerfd_settime:
	case SYS_timerfd_gettime:
		return timerfd_call(s, t, nr);
	default:
		return false;
	}
}

/* Expirations of p up to now; re-arms an interval timer. */
static uint64_t expire(struct session *s, struct ptimer *p)
{
	uint64_t n = 0;

	if (!p->deadline || p->deadline > s->now)
		return 0;
	if (!p->interval) {
		p->deadline = 0;
		return 1;
	}
	n = 1 + (s->now - p->deadline) / p->interval;
	p->deadline += n * p->interval;
	return n;
}

/* Whether sig is pending for tid (or, tid 0, for the process pid). */
static bool pending(pid_t pid, pid_t tid, int sig)
{
	char name[64], line[128];
	unsigned long long v, set = 0;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/task/%d/status", pid,
		 tid ? tid : pid);
	if (!(f = fopen(name, "re")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, tid ? "SigPnd: %llx" : "ShdPnd: %llx", &v) ==
		    1)
			set = v;
	fclose(f);
	return set & (1ull << (sig - 1));
}

/* The virtual clock reached p: what the kernel would do.  A signal for
 * the process goes to thread to when it is not 0 (an explored choice of
 * the thread that takes it). */
static void fire_to(struct session *s, struct ptimer *p, pid_t to)
{
	uint64_t n = expire(s, p);

	if (!n)
		return;
	s->sig_maybe = true;
	switch (p->kind) {
	case PT_ITIMER:
		if (to) {
			syscall(SYS_tgkill, p->pid, to, SIGALRM);
			/* the kernel's SIGALRM comes from the kernel */
			signal_directed(s, to, SIGALRM, SI_KERNEL, 0);
		} else
			kill(p->pid, SIGALRM);
		break;
	case PT_TIMERFD:
		p->expired += n;
		timerfd_sync(s, p);
		break;
	case PT_POSIX: {
		pid_t tid = p->notify & SIGEV_THREAD_ID ? p->tid : to;

		if (p->notify == SIGEV_NONE)
			break;
		if (pending(p->pid, tid, p->signo)) {
			/* its one queued signal is not delivered yet */
			p->overrun += (int)n;
			break;
		}
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		si.si_signo = p->signo;
		si.si_code = SI_TIMER;
		si.si_timerid = p->id;
		si.si_overrun = (int)(n - 1);
		si.si_value.sival_ptr = (void *)(uintptr_t)p->value;
		p->overrun = (int)(n - 1);
		if (tid) {
			syscall(SYS_rt_tgsigqueueinfo, p->pid, tid, p->signo,
				&si);
			signal_directed(s, tid, p->signo, SI_TKILL, 0);
		} else
			syscall(SYS_rt_sigqueueinfo, p->pid, p->signo, &si);
		break;
	}
	}
}

static void fire(struct session *s, struct ptimer *p)
{
	fire_to(s, p, 0);
}

/* The signal p sends to its process (not to one thread), else 0. */
static int process_signal(const struct ptimer *p)
{
	if (p->kind == PT_ITIMER)
		return SIGALRM;
	if (p->kind == PT_POSIX && p->notify == SIGEV_SIGNAL)
		return p->signo;
	return 0;
}

static bool same_file(pid_t pid, int fd, int ours)
{
	pid_t me = getpid();

	return syscall(SYS_kcmp, me, pid, KCMP_FILE, ours, fd) == 0;
}

/* Some descriptor of a live process of the program is p's file: the one
 * it was last seen at, else any (dup, fork, SCM_RIGHTS received). */
static bool tfd_held(struct session *s, struct ptimer *p)
{
	struct process *q = process_find(s, p->pid);

	if (q && !q->dead && same_file(p->pid, p->id, p->file))
		return true;
	for (int i = 0; i < s->nprocs; i++) {
		char name[64];
		struct dirent *e;
		DIR *d;

		if ((q = s->procs[i])->dead)
			continue;
		snprintf(name, sizeof(name), "/proc/%d/fd", q->pid);
		if (!(d = opendir(name)))
			continue;
		while ((e = readdir(d))) {
			int fd = atoi(e->d_name);

			if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
			    !same_file(q->pid, fd, p->file))
				continue;
			p->pid = q->pid;
			p->id = fd;
			closedir(d);
			return true;
		}
		closedir(d);
	}
	/* a read or poll in progress holds the file too (ptloom keeps it
	 * parked before the call: its copy stands for the call's) */
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st != SCHED_BLOCKED ||
		    (t->block != BLOCK_FD && t->block != BLOCK_POLL))
			continue;
		for (int k = 0; k < t->npfd; k++)
			if (t->pkind[k] == FDK_TIMERFD &&
			    same_file(getpid(), t->pfd[k], p->file))
				return true;
	}
	return false;
}

/*
 * The kernel releases a timerfd with its last descriptor, and with it
 * the timer: an armed one closed fires nothing (no choice for nothing,
 * no deadline that keeps a run going).  Checked once per step while it
 * is armed or counting; our own descriptor of it is closed then.
 */
static void tfd_check(struct session *s, struct ptimer *p)
{
	if (p->kind != PT_TIMERFD || p->dead || p->file < 0 ||
	    (!p->deadline && !p->expired) || p->checked == s->step + 1)
		return;
	p->checked = s->step + 1;
	if (tfd_held(s, p))
		return;
	p->deadline = 0;
	p->expired = 0;
	p->dead = true;
	close(p->file);
	p->file = -1;
}

/* A timer whose expiry anyone could notice. */
static bool signals(struct session *s, struct ptimer *p)
{
	tfd_check(s, p);
	return p->deadline && !p->dead &&
	       !(p->kind == PT_POSIX && p->notify == SIGEV_NONE);
}

/* The thread that stands for p in a choice: the one its signal targets,
 * else its process's leader, else any live thread of it. */
static int owner(struct session *s, const struct ptimer *p)
{
	int leader = -1, any = -1;
	bool to_thread = p->kind == PT_POSIX && (p->notify & SIGEV_THREAD_ID);

	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st == SCHED_DEAD || t->p->pid != p->pid)
			continue;
		if (to_thread && t->tid == p->tid)
			return i;
		if (t->tid == p->pid)
			leader = i;
		else if (any < 0)
			any = i;
	}
	/* a thread-directed timer whose thread is gone signals nobody, as
	 * in the kernel */
	if (to_thread)
		return -1;
	if (leader < 0 && any < 0 && p->kind == PT_TIMERFD)
		for (int i = 0; i < s->nth; i++)
			if (s->th[i].st != SCHED_DEAD)
				return i; /* its file lives on elsewhere */
	return leader >= 0 ? leader : any;
}

/* An alternative's object: the timer's index + 1; bit 32: its signal
 * goes to the alternative's thread. */
#define TO_THREAD (1ull << 32)

static void add_alt(struct choice *c, int thread, uint64_t obj)
{
	if (c->nalts >= MAX_ALTS)
		return;
	c->alts[c->nalts++] = (struct alt){
		.thread = (uint16_t)thread,
		.timeout = 1,
		.cost = 1,
		.kind = OP_TIMER,
		.obj = obj,
	};
}

void timer_alternatives(struct session *s, struct choice *c)
{
	struct timers *tm = s->timers;
	bool enabled = false;

	if (!tm || !c->nalts)
		return;
	for (int i = 0; i < s->nth; i++)
		enabled |= !s->th[i].starting &&
			   (s->th[i].st == SCHED_ENABLED ||
			    s->th[i].st == SCHED_RUNNING);
	if (!enabled)
		return; /* timer_tick() moved time to the earliest */
	uint64_t limit = session_stall_limit(s);

	for (int i = 0; i < tm->n; i++) {
		struct ptimer *p = &tm->t[i];
		int o, sig, takers = 0, who[MAX_ALTS];

		if (!signals(s, p) || p->deadline > limit ||
		    (p->deadline > s->now &&
		     !session_may_expire_early(s, process_find(s, p->pid),
					       p->armed)) ||
		    (o = owner(s, p)) < 0)
			continue;
		/* which thread takes a signal sent to the process is the
		 * kernel's to choose: every one that could is an
		 * alternative (signal.c, as for a kill) */
		if ((sig = process_signal(p)))
			takers = signal_takers(s, p->pid, sig, who, MAX_ALTS);
		for (int k = 0; k < takers; k++)
			add_alt(c, who[k], (uint64_t)(i + 1) | TO_THREAD);
		if (!takers)
			add_alt(c, o, (uint64_t)(i + 1));
	}
}

int timer_fire_alt(struct session *s, const struct alt *a)
{
	struct timers *tm = s->timers;
	int i = (int)(a->obj & 0xffffffffu) - 1;

	if (!tm || i < 0 || i >= tm->n || !signals(s, &tm->t[i]))
		return 0;
	struct ptimer *p = &tm->t[i];
	int sig = p->kind == PT_ITIMER ? SIGALRM
		  : p->kind == PT_POSIX ? p->signo
					: 0;

	if (p->deadline > s->now)
		s->now = p->deadline;
	fire_to(s, p, (a->obj & TO_THREAD) && a->thread < s->nth
			      ? s->th[a->thread].tid
			      : 0);
	return sig;
}

bool timer_armed(struct session *s)
{
	struct timers *tm = s->timers;

	for (int i = 0; tm && i < tm->n; i++)
		if (signals(s, &tm->t[i]))
			return true;
	return false;
}

/* A read of a timerfd: answered here.  Returns true if it is one. */
bool timer_read(struct session *s, struct thread *t, bool *runs)
{
	struct user_regs_struct *r = &t->regs;
	struct ptimer *p;

	if (r->orig_rax != SYS_read || t->npfd != 1 ||
	    t->pkind[0] != FDK_TIMERFD ||
	    !(p = find_timerfd(s, t->p->pid, (int)r->rdi, t->pfd[0], false)))
		return false;
	if (p->expired) {
		if (r->rdx < 8) {
			skip(t, -EINVAL);
		} else if (mem_write(t->p, r->rsi, &p->expired, 8)) {
			skip(t, -EFAULT);
		} else {
			skip(t, 8);
			p->expired = 0;
			timerfd_sync(s, p);
		}
		*runs = true;
		return true;
	}
	if (t->nonblock) {
		skip(t, -EAGAIN);
		*runs = true;
		return true;
	}
	/* until an expiry (timer_alternatives/timer_tick) makes it
	 * readable; never armed: blocked for ever (a deadlock report) */
	t->st = SCHED_BLOCKED;
	t->block = BLOCK_FD;
	t->timed = false;
	*runs = false;
	return true;
}

int timer_tick(struct session *s)
{
	struct timers *tm = s->timers;
	int fired = 0;

	if (!tm)
		return 0;
	/* nobody can run: time may jump to the earliest timer */
	bool idle = true;
	uint64_t earliest = UINT64_MAX;

	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st == SCHED_ENABLED || t->st == SCHED_RUNNING ||
		    t->starting)
			idle = false;
		else if (t->st == SCHED_BLOCKED && t->timed &&
			 t->deadline < earliest)
			earliest = t->deadline;
	}
	uint64_t first = UINT64_MAX;

	for (int i = 0; i < tm->n; i++)
		if (signals(s, &tm->t[i]) && tm->t[i].deadline < first &&
		    owner(s, &tm->t[i]) >= 0)
			first = tm->t[i].deadline;
	if (idle && first < earliest && first > s->now)
		s->now = first;
	for (int i = 0; i < tm->n; i++) {
		struct ptimer *p = &tm->t[i];

		if (signals(s, p) && p->deadline <= s->now && owner(s, p) >= 0) {
			fire(s, p);
			fired++;
		}
	}
	return idle ? fired : 0;
}

void timer_exec(struct session *s, pid_t pid)
{
	struct timers *tm = s->timers;

	/* POSIX timers die with the image; alarm and ITIMER_REAL stay */
	for (int i = 0; tm && i < tm->n; i++)
		if (tm->t[i].pid == pid && tm->t[i].kind == PT_POSIX)
			tm->t[i].dead = true;
}

void timer_free(struct session *s)
{
	struct timers *tm = s->timers;

	for (int i = 0; tm && i < tm->n; i++)
		if (tm->t[i].file >= 0)
			close(tm->t[i].file);
	if (tm)
		free(tm->t);
	free(tm);
	s->timers = NULL;
}

void timer_describe_fd(pid_t pid, int fd, char *buf, size_t len)
{
	char name[64], link[128];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/fd/%d", pid, fd);
	n = readlink(name, link, sizeof(link) - 1);
	if (n < 0)
		n = 0;
	link[n] = 0;
	snprintf(buf, len, n ? "fd %d: %s" : "fd %d", fd, link);
}
