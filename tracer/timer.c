/*
 * Timers on the virtual clock: alarm, setitimer/getitimer(ITIMER_REAL)
 * and timerfd reads.
 *
 * The kernel never arms these: alarm and ITIMER_REAL are kept here per
 * process, in virtual nanoseconds, and fire (SIGALRM to the process, as
 * the kernel would send it) once the virtual clock reaches them.  Time
 * jumps to the earliest timer when no thread can run and no timed wait
 * ends sooner, as for a sleep.  A timerfd's expiry is kept the same way
 * (timerfd_settime/gettime are answered here); a read of a timerfd
 * blocks in ptloom's model until its virtual expiry and returns the
 * expiration count.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "session_int.h"
#include "timer.h"

#define NS 1000000000ull

struct ptimer {
	pid_t pid;		/* the process */
	int fd;			/* -1: its ITIMER_REAL (alarm), else a timerfd */
	uint64_t deadline;	/* virtual monotonic ns, 0 = disarmed */
	uint64_t interval;
	uint64_t expired;	/* timerfd: expirations not yet read */
};

struct timers {
	struct ptimer *t;
	int n, cap;
};

static struct ptimer *find(struct session *s, pid_t pid, int fd, bool make)
{
	struct timers *tm = s->timers;

	if (!tm) {
		if (!make || !(tm = s->timers = calloc(1, sizeof(*tm))))
			return NULL;
	}
	for (int i = 0; i < tm->n; i++)
		if (tm->t[i].pid == pid && tm->t[i].fd == fd)
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
	tm->t[tm->n] = (struct ptimer){ .pid = pid, .fd = fd };
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

static bool is_timerfd(pid_t pid, int fd)
{
	char name[64], link[64];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/fd/%d", pid, fd);
	n = readlink(name, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return strstr(link, "[timerfd]") != NULL;
}

bool timer_enter(struct session *s, struct thread *t, long nr, bool *point)
{
	struct user_regs_struct *r = &t->regs;
	pid_t pid = t->p->pid;
	struct ptimer *p;

	*point = false;
	switch (nr) {
	case SYS_alarm: {
		p = find(s, pid, -1, true);
		uint64_t was = left(s, p);

		if (p) {
			p->deadline = r->rdi ? s->now + r->rdi * NS : 0;
			p->interval = 0;
		}
		/* seconds left of the previous alarm, rounded up */
		skip(t, (int64_t)((was + NS - 1) / NS));
		return true;
	}
	case SYS_setitimer:
	case SYS_getitimer: {
		if ((int)r->rdi != ITIMER_REAL)
			return false; /* CPU-time timers: the kernel's */
		p = find(s, pid, -1, true);
		struct itimerval nv, ov;
		uint64_t old_addr = nr == SYS_getitimer ? r->rsi : r->rdx;

		memset(&ov, 0, sizeof(ov));
		to_tv(left(s, p), &ov.it_value);
		to_tv(p ? p->interval : 0, &ov.it_interval);
		if (nr == SYS_setitimer && r->rsi) {
			if (mem_read(t->p, r->rsi, &nv, sizeof(nv))) {
				skip(t, -EFAULT);
				return true;
			}
			if (nv.it_value.tv_usec < 0 ||
			    nv.it_value.tv_usec >= 1000000 ||
			    nv.it_interval.tv_usec < 0 ||
			    nv.it_interval.tv_usec >= 1000000) {
				skip(t, -EINVAL);
				return true;
			}
			uint64_t v = (uint64_t)nv.it_value.tv_sec * NS +
				     (uint64_t)nv.it_value.tv_usec * 1000;

			if (p) {
				p->deadline = v ? s->now + v : 0;
				p->interval =
					(uint64_t)nv.it_interval.tv_sec * NS +
					(uint64_t)nv.it_interval.tv_usec * 1000;
			}
		}
		if (old_addr && mem_write(t->p, old_addr, &ov, sizeof(ov))) {
			skip(t, -EFAULT);
			return true;
		}
		skip(t, 0);
		return true;
	}
	case SYS_timerfd_settime:
	case SYS_timerfd_gettime: {
		int fd = (int)r->rdi;

		if (!is_timerfd(pid, fd))
			return false; /* the kernel says EBADF/EINVAL */
		p = find(s, pid, fd, true);
		struct itimerspec nv, ov;
		uint64_t old_addr = nr == SYS_timerfd_gettime ? r->rsi : r->r10;

		memset(&ov, 0, sizeof(ov));
		to_ts(left(s, p), &ov.it_value);
		to_ts(p ? p->interval : 0, &ov.it_interval);
		if (nr == SYS_timerfd_settime) {
			if (mem_read(t->p, r->rdx, &nv, sizeof(nv))) {
				skip(t, -EFAULT);
				return true;
			}
			uint64_t v = (uint64_t)nv.it_value.tv_sec * NS +
				     (uint64_t)nv.it_value.tv_nsec;

			if (p) {
				if (v && (r->rsi & 1 /* TFD_TIMER_ABSTIME */))
					p->deadline = v; /* monotonic */
				else
					p->deadline = v ? s->now + v : 0;
				p->interval =
					(uint64_t)nv.it_interval.tv_sec * NS +
					(uint64_t)nv.it_interval.tv_nsec;
				p->expired = 0;
			}
		}
		if (old_addr && mem_write(t->p, old_addr, &ov, sizeof(ov))) {
			skip(t, -EFAULT);
			return true;
		}
		skip(t, 0);
		return true;
	}
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

/* A read of a timerfd: answered here.  Returns true if it is one. */
bool timer_read(struct session *s, struct thread *t, bool *runs)
{
	struct user_regs_struct *r = &t->regs;
	struct ptimer *p = find(s, t->p->pid, (int)r->rdi, false);

	if (!p || r->orig_rax != SYS_read)
		return false;
	p->expired += expire(s, p);
	if (p->expired) {
		if (r->rdx < 8) {
			skip(t, -EINVAL);
		} else if (mem_write(t->p, r->rsi, &p->expired, 8)) {
			skip(t, -EFAULT);
		} else {
			skip(t, 8);
			p->expired = 0;
		}
		*runs = true;
		return true;
	}
	if (t->nonblock || !p->deadline) {
		/* not armed and blocking: the kernel would wait for ever;
		 * ptloom's model does too (a deadlock report) */
		if (t->nonblock) {
			skip(t, -EAGAIN);
			*runs = true;
			return true;
		}
	}
	t->st = SCHED_BLOCKED;
	t->block = BLOCK_FD;
	t->timed = p->deadline != 0;
	t->deadline = p->deadline;
	t->timer_read = true;
	*runs = false;
	return true;
}

/* A timerfd read that timed out: its count. */
void timer_read_timeout(struct session *s, struct thread *t)
{
	bool runs;

	t->timer_read = false;
	if (t->deadline > s->now)
		s->now = t->deadline;
	if (!timer_read(s, t, &runs) || !runs)
		skip(t, -EINTR);
	t->st = SCHED_ENABLED;
	t->block = BLOCK_NONE;
	t->timed = false;
}

void timer_tick(struct session *s)
{
	struct timers *tm = s->timers;

	if (!tm)
		return;
	/* nobody can run: time may jump to the earliest alarm */
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
		if (tm->t[i].fd < 0 && tm->t[i].deadline &&
		    tm->t[i].deadline < first)
			first = tm->t[i].deadline;
	if (idle && first < earliest && first > s->now)
		s->now = first;
	for (int i = 0; i < tm->n; i++) {
		struct ptimer *p = &tm->t[i];

		if (p->fd >= 0 || !p->deadline)
			continue;
		if (expire(s, p)) {
			kill(p->pid, SIGALRM);
			s->sig_maybe = true;
		}
	}
}

void timer_free(struct session *s)
{
	struct timers *tm = s->timers;

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
