/*
 * Signals between the program's threads, in the supervisor's model.
 *
 * A thread parked in an emulated wait (futex, sleep, descriptor, poll)
 * is stopped at its seccomp stop, so a signal sent to it only queues in
 * the kernel.  signal_recheck() looks at every blocked thread's pending
 * signals (/proc/PID/task/TID/status) when a signal may have been sent,
 * and ends the wait as the kernel would:
 *
 *   - an untimed futex wait is handed to the kernel with the signal
 *     pending, which returns at once: EINTR or a restart per the
 *     handler's SA_RESTART; a timed one returns EINTR (never restarted
 *     after a handler), a FUTEX_LOCK_PI restarts; a poll returns EINTR
 *     (never restarted after a handler);
 *   - a sleep returns EINTR with the time left written, from the virtual
 *     clock;
 *   - read/write/accept/connect are handed to the kernel with the signal
 *     pending: it runs the handler and restarts or fails the call with
 *     EINTR per the handler's SA_RESTART, as for any program;
 *   - a signal whose default action kills the process kills it the same
 *     way.
 *
 * The sigwait family (rt_sigtimedwait: sigwait, sigwaitinfo,
 * sigtimedwait; rt_sigsuspend; pause) are scheduling points: the call
 * runs in the kernel only once a signal it waits for is pending, so it
 * never blocks there with the other threads stopped; until then the
 * thread is blocked in ptloom's model (with a virtual deadline for
 * sigtimedwait) and the send wakes it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "process.h"
#include "session_int.h"
#include "signal.h"

#define BIT(sig) (1ull << ((sig) - 1))
/* default action: ignore (or stop, which ptloom does not model) */
#define DEFAULT_IGNORED                                                     \
	(BIT(SIGCHLD) | BIT(SIGURG) | BIT(SIGWINCH) | BIT(SIGCONT) |       \
	 BIT(SIGSTOP) | BIT(SIGTSTP) | BIT(SIGTTIN) | BIT(SIGTTOU))

struct sigstate {
	uint64_t pending; /* the thread's and the process's */
	uint64_t shared;  /* the process's alone (ShdPnd) */
	uint64_t blocked, ignored, caught;
};

/* The hex value after "\nKEY:\t" in a status file's text, else 0. */
static uint64_t status_hex(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

static int read_sigstate(struct session *s, struct thread *t,
			 struct sigstate *st)
{
	char name[64], text[4096];
	ssize_t n, got = 0;
	uint64_t thr, shd;

	(void)s;
	snprintf(name, sizeof(name), "/proc/%d/task/%d/status", t->p->pid,
		 t->tid);
	int fd = open(name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -ESRCH;
	/* one read gives the whole file (about 1.5 KiB); Go programs read
	 * it at most choices, where sscanf of every line was 8 % of
	 * ptloom's time */
	while (got < (ssize_t)sizeof(text) - 1 &&
	       (n = read(fd, text + got, sizeof(text) - 1 - (size_t)got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += n;
	}
	close(fd);
	if (got <= 0)
		return -ESRCH;
	text[got] = 0;
	memset(st, 0, sizeof(*st));
	thr = status_hex(text, "\nSigPnd:\t");
	shd = status_hex(text, "\nShdPnd:\t");
	st->blocked = status_hex(text, "\nSigBlk:\t");
	st->ignored = status_hex(text, "\nSigIgn:\t");
	st->caught = status_hex(text, "\nSigCgt:\t");
	st->pending = thr | shd;
	st->shared = shd & ~thr;
	return 0;
}

/* Pending signals that interrupt a wait when the mask is mask: caught,
 * or fatal by default. */
static uint64_t interrupting(const struct sigstate *st, uint64_t mask)
{
	uint64_t p = st->pending & ~mask & ~st->ignored;

	return p & (st->caught | ~DEFAULT_IGNORED);
}

uint64_t signal_wait_mask(struct thread *t)
{
	long nr = (long)t->regs.orig_rax;
	uint64_t ptr = 0, m;
	struct sigstate st;

	if (nr == SYS_ppoll)
		ptr = t->regs.r8 ? t->regs.r10 : 0;
	else if (nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2)
		ptr = t->regs.r8;
	else if (nr == SYS_pselect6 && t->regs.r9) {
		uint64_t pair[2];

		if (!mem_read(t->p, t->regs.r9, pair, sizeof(pair)))
			ptr = pair[0];
	}
	if (ptr && !mem_read(t->p, ptr, &m, sizeof(m)))
		return m;
	return read_sigstate(NULL, t, &st) ? 0 : st.blocked;
}

bool signal_deliverable(struct session *s, struct thread *t)
{
	struct sigstate st;

	if (read_sigstate(s, t, &st))
		return true; /* gone: let it go */
	return interrupting(&st, signal_wait_mask(t)) != 0;
}

/*
 * Race discovery's signal handlers (SYNC_HANDLER_ENTER, tracer.h): a
 * handler's accesses are a context of their own from its delivery to
 * its rt_sigreturn, or until its thread is seen back on the stack it
 * interrupted (a siglongjmp out of it).  Discovery's processes stop at
 * rt_sigreturn, rt_sigprocmask and rt_sigaction (spawn.c's second
 * filter); no other run does.  What the thread logged in the program
 * before a stop was taken at the stop (agent_stopped), so it is the
 * thread's, not the handler's.
 */
void signal_handler_leave(struct session *s, struct thread *t)
{
	const struct access_observer *o = s->cfg->observer;

	if (!t->sig_depth || !o)
		return;
	t->sig_depth = 0;
	o->sync(o->ctx, t->idx, SYNC_HANDLER_LEAVE, 0, -1);
}

void signal_release_to_handlers(struct session *s, struct thread *t)
{
	const struct access_observer *o = s->cfg->observer;

	if (o)
		o->sync(o->ctx, t->idx, SYNC_RELEASE, SYNC_SIGNALS_KEY, -1);
}

void signal_handler_enter(struct session *s, struct thread *t, int sig)
{
	const struct access_observer *o = s->cfg->observer;
	struct sigstate st;
	siginfo_t si;
	bool fault = false;

	if (sig <= 0 || sig > 64 || read_sigstate(NULL, t, &st) ||
	    !(st.caught & BIT(sig)))
		return;
	/* show: its step is the last event of t (a few back at most) */
	for (size_t i = s->nev, n = 0; i-- > 0 && n < 4096; n++)
		if (s->ev[i].thread == t->idx) {
			s->ev[i].handler_sig = (uint8_t)sig;
			break;
		}
	if (!o || regs_get(t))
		return;
	switch (sig) {
	case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGTRAP:
	case SIGSYS:
		/* the thread's own instruction's (si_code > 0: the
		 * kernel's), not sent */
		fault = !ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) &&
			si.si_code > 0;
		break;
	}
	if (!t->sig_depth++)
		t->sig_sp = t->regs.rsp;
	o->sync(o->ctx, t->idx, SYNC_HANDLER_ENTER, fault, -1);
}

/* Below where the outermost handler interrupted it, on the same stack
 * (the kernel leaves the 128-byte red zone), t still runs a handler; at
 * or above it, it jumped out.  A handler on an alternate stack above the
 * thread's is taken as left at once: its accesses are the thread's, as
 * before (an order that may hide a race, never invent one). */
void signal_handler_check(struct session *s, struct thread *t)
{
	uint64_t sp = t->regs.rsp;

	if (sp + 128 >= t->sig_sp && sp - t->sig_sp < (64ull << 20))
		signal_handler_leave(s, t);
}

/* discovery's stops at the calls that change a thread's signal state */
static void handler_calls(struct session *s, struct thread *t, long nr)
{
	const struct access_observer *o = s->cfg->observer;
	struct user_regs_struct *r = &t->regs;

	if (!o)
		return;
	switch (nr) {
	case SYS_rt_sigreturn:
		/* (a nested handler's return: the outer one goes on) */
		if (t->sig_depth > 1)
			t->sig_depth--;
		else
			signal_handler_leave(s, t);
		break;
	case SYS_rt_sigprocmask: {
		struct sigstate st;
		uint64_t set = 0;

		if (!r->rsi || r->r10 != 8 || mem_read(t->p, r->rsi, &set, 8))
			break; /* a question, or the kernel's EINVAL */
		/* (siglongjmp's mask: signal_enter looked at the stack) */
		/* only an unblock orders what came before it before a
		 * handler: one blocked at its sending runs at the first
		 * unblock after, one that was not may have run earlier
		 * (a block, or sigsuspend's mask, orders nothing) */
		if ((r->rdi == SIG_UNBLOCK && set) ||
		    (r->rdi == SIG_SETMASK && !read_sigstate(NULL, t, &st) &&
		     (st.blocked & ~set)))
			o->sync(o->ctx, t->idx, SYNC_SIGSTATE, 0, -1);
		break;
	}
	case SYS_rt_sigaction:
		/* what came before a handler was installed comes before it
		 * runs, in whichever thread */
		if (r->rsi)
			signal_release_to_handlers(s, t);
		break;
	}
}

void signal_note_send(struct session *s, struct thread *t, long nr)
{
	const struct user_regs_struct *r = &t->regs;
	long pid = (int)r->rdi, tid = 0, sig;
	struct thread *u;
	struct process *p;

	switch (nr) {
	case SYS_kill:
	case SYS_rt_sigqueueinfo:
		sig = (long)r->rsi;
		break;
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		tid = (int)r->rsi;
		sig = (long)r->rdx;
		break;
	case SYS_tkill:
		tid = pid;
		sig = (long)r->rsi;
		break;
	case SYS_pidfd_send_signal:
		pid = 0;
		sig = (long)r->rsi;
		break;
	default:
		sig = 0;
	}
	t->sent_sig = sig > 0 && sig <= 64 ? (uint8_t)sig : 0;
	t->sent_to = 0;
	if (nr == SYS_pidfd_send_signal)
		return;
	u = NULL;
	p = NULL;
	if (tid) {
		if (tid > 0 && (u = find_thread(s, (pid_t)tid)) &&
		    u->idx < 0x7fff)
			t->sent_to = EVENT_TO_THREAD(u->idx);
		if (u)
			p = u->p;
	} else if (pid > 0) {
		if ((p = process_find(s, (pid_t)pid)) && p->idx < 0x7fff)
			t->sent_to = (uint16_t)(EVENT_TO_PROC | p->idx);
	} else {
		t->sent_to = pid == -1 ? EVENT_TO_ALL : EVENT_TO_GROUP;
	}
	/* another process of one thread that catches it: its handler may
	 * come between any two of its instructions from now on */
	if (p && p != t->p && !p->dead && t->sent_sig) {
		struct thread *only = NULL;
		int live = 0;

		for (int i = 0; i < s->nth; i++)
			if (s->th[i].p == p && s->th[i].st != SCHED_DEAD &&
			    !s->th[i].starting) {
				only = &s->th[i];
				live++;
			}
		if (live == 1)
			signal_handler_may_run(s, only, t->sent_sig);
	}
}

/*
 * A handler of a timer's signal, or of a signal another process sends,
 * runs between any two instructions of the thread it interrupts.  In a
 * process of several threads its accesses are observed and its pairs
 * with the thread's own are points (SYNC_HANDLER_* above); a process of
 * one thread had no breakpoints (they go in at its first clone) and was
 * not observed (alone), so a timer's handler adding to what the loop it
 * interrupts adds to passed complete.  Once such a process arms a timer
 * whose signal it catches, or another process sends it a signal it
 * catches (signal_note_send, at the sender's point: followed from that
 * send on), its breakpoints go in (its libc calls points only on shared
 * objects while it stays alone, as for a file mapped apart) and its one
 * thread counts as two for race discovery (thread.c threads_racing);
 * sole_thread keeps the points while a timer is armed or the sender can
 * run.  A SIGCHLD handler is not followed so: every runner (bash, make,
 * ctest's libuv) has one, and observing them took ctest's race
 * discovery from 3.1 s to 11.9 s and cut make's from 24 runs to 6.
 */
void signal_handler_may_run(struct session *s, struct thread *t, int sig)
{
	struct process *p = t->p;
	struct sigstate st;

	if (p->handler_race || p->dead || sig <= 0 || sig > 64 ||
	    session_policy_process(s, p) || read_sigstate(NULL, t, &st) ||
	    !(st.caught & BIT(sig)))
		return;
	p->handler_race = true;
	bp_install_now(s, p, false);
}

bool signal_enter(struct session *s, struct thread *t, long nr, bool *point)
{
	struct user_regs_struct *r = &t->regs;
	uint64_t set = 0;

	if (t->sig_depth)
		signal_handler_check(s, t);
	switch (nr) {
	case SYS_rt_sigreturn:
	case SYS_rt_sigprocmask:
	case SYS_rt_sigaction:
		handler_calls(s, t, nr);
		*point = false;
		return true;
	case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
	case SYS_pidfd_send_signal:
		*point = true;
		t->kind = OP_KILL;
		t->fn = 0;
		t->obj = 0;
		t->arg = 0;
		t->pc = r->rip;
		t->yield = false;
		signal_note_send(s, t, nr);
		return true;
	case SYS_rt_sigtimedwait:
		if (r->r10 != 8 || mem_read(t->p, r->rdi, &set, 8)) {
			/* a bad set: the kernel reports it */
			*point = false;
			return true;
		}
		t->sig_mode = SIGWAIT_SET;
		t->sig_set = set;
		break;
	case SYS_rt_sigsuspend:
		if (r->rsi != 8 || mem_read(t->p, r->rdi, &set, 8)) {
			*point = false;
			return true;
		}
		t->sig_mode = SIGWAIT_MASK;
		t->sig_set = set;
		break;
	case SYS_pause:
		t->sig_mode = SIGWAIT_PAUSE;
		t->sig_set = 0;
		break;
	default:
		return false;
	}
	*point = true;
	t->kind = OP_SYSCALL;
	t->fn = 0;
	t->obj = 0;
	t->arg = nr;
	t->pc = r->rip;
	t->yield = false;
	return true;
}

/*
 * A signal sent to the process goes to one thread: the kernel wakes one
 * that does not block it, and the others never see it.  Those already
 * handed one (woken, not yet resumed) have these.
 */
static uint64_t claimed(struct session *s)
{
	uint64_t c = 0;

	for (int i = 0; i < s->nth; i++)
		if (s->th[i].st == SCHED_ENABLED && s->th[i].kind == OP_WOKEN)
			c |= s->th[i].sig_claim;
	return c;
}

/* The pending signals that make t's sigwait-family call return. */
static uint64_t sigwait_wants(const struct thread *t, const struct sigstate *st)
{
	switch (t->sig_mode) {
	case SIGWAIT_SET:
		return (st->pending & t->sig_set) |
		       interrupting(st, st->blocked | t->sig_set);
	case SIGWAIT_MASK:
		return interrupting(st, t->sig_set);
	default:
		return interrupting(st, st->blocked);
	}
}

/* Whether t's sigwait-family call would return now. */
static bool sigwait_ready(struct session *s, struct thread *t)
{
	struct sigstate st;

	if (read_sigstate(s, t, &st))
		return true; /* gone: let it go */
	uint64_t gone = claimed(s) & st.shared;

	st.pending &= ~gone;
	st.shared &= ~gone;
	return sigwait_wants(t, &st) != 0;
}

bool signal_execute(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;

	if (sigwait_ready(s, t)) {
		t->skip = false; /* the kernel returns at once */
		return true;
	}
	t->st = SCHED_BLOCKED;
	t->block = BLOCK_SIGNAL;
	t->timed = false;
	if (t->sig_mode == SIGWAIT_SET && r->rdx) {
		struct timespec ts;

		if (mem_read(t->p, r->rdx, &ts, sizeof(ts)) || ts.tv_sec < 0 ||
		    ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) {
			t->st = SCHED_ENABLED;
			t->block = BLOCK_NONE;
			t->skip = false; /* the kernel says EINVAL/EFAULT */
			return true;
		}
		uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull +
			      (uint64_t)ts.tv_nsec;

		if (!ns) {
			t->st = SCHED_ENABLED;
			t->block = BLOCK_NONE;
			t->skip = true;
			t->result = -EAGAIN; /* a poll: nothing pending */
			return true;
		}
		t->timed = true;
		time_observed(s);
		t->deadline = s->now + ns;
		t->armed = s->step;
		t->timeout_result = -EAGAIN;
	}
	return false;
}

/*
 * End t's emulated wait because of a pending signal.  A signal sent to the
 * process goes to whichever of its threads leaves a ptrace stop first, so
 * the wait is ended provisionally (sig_rerun): if another thread has taken
 * the signal by the time t is chosen to run, t waits on (world.c:
 * schedule), with its descriptors still open, instead of entering a call
 * that would block in the kernel (a hang) or failing it with a spurious
 * EINTR.
 */
static void interrupt(struct session *s, struct thread *t, bool fatal)
{
	int block = t->block;
	bool timed = t->timed, pi = t->pi_wait;
	uint64_t left = t->deadline > s->now ? t->deadline - s->now : 0;

	futex_remove(&s->ft, t->idx);
	if (block == BLOCK_FD && t->wbig && t->wdone) {
		/* ptloom wrote part of it (bigwrite.c): it returns that
		 * much, as an interrupted write does, and the handler runs */
		thread_make_ready(s, t, OP_WOKEN, (int64_t)t->wdone);
		t->sig_rerun = false;
		return;
	}
	/*
	 * An untimed futex wait the signal ends is the kernel's to end, as
	 * it would: with the signal pending its wait returns at once, and
	 * the handler's SA_RESTART makes it EINTR or a restart (the syscall
	 * again, met at its seccomp stop).  A timed one is EINTR after a
	 * handler whatever the flags (ERESTART_RESTARTBLOCK), which ptloom
	 * answers itself: the kernel would compare its deadline with the
	 * real clock, not ptloom's, and might say ETIMEDOUT.  An EINTR of
	 * ptloom's own for every wait was wrong twice: sem_wait under an
	 * SA_RESTART handler returned -1 EINTR, which natively never
	 * happens, and a waiter whose process-directed signal another
	 * thread took failed with EINTR too.  If the signal is gone by its
	 * turn, the call starts again (world.c).  FUTEX_LOCK_PI is never
	 * EINTR (ERESTARTNOINTR): ptloom restarts it, since the kernel must
	 * never wait for a PI lock ptloom models.
	 */
	bool futex_to_kernel = block == BLOCK_FUTEX && !pi && !timed;

	/* a PI lock restarts; a wait the kernel is to end restarts only if
	 * the signal is gone by its turn (world.c), else the kernel runs it */
	thread_make_ready(s, t, OP_WOKEN,
			  pi || futex_to_kernel ? PTLOOM_RESTART_CALL : -EINTR);
	if (!pi) {
		t->sig_rerun = true;
		t->sig_block = block;
		t->sig_timed = timed;
	}
	if (fatal || block == BLOCK_FD || block == BLOCK_SIGNAL ||
	    futex_to_kernel) {
		/* the kernel runs the call with the signal pending: the
		 * handler, SA_RESTART, or the process's death, as usual */
		t->skip = false;
		return;
	}
	if (block == BLOCK_SLEEP && !t->sleep_abs) {
		/* nanosleep's rem, clock_nanosleep's (relative only) */
		uint64_t rem = t->regs.orig_rax == SYS_nanosleep ? t->regs.rsi
								 : t->regs.r10;
		struct timespec ts = { (time_t)(left / 1000000000ull),
				       (long)(left % 1000000000ull) };

		if (rem)
			mem_write(t->p, rem, &ts, sizeof(ts));
	}
}

/* Blocked t's wait ended by a signal pending for it, if one is (taken:
 * the process's signals other threads were woken for); the new taken. */
static uint64_t recheck_one(struct session *s, struct thread *t,
			    uint64_t taken)
{
	struct sigstate st;

	if (t->st != SCHED_BLOCKED || t->starting || t->block == BLOCK_NONE ||
	    read_sigstate(s, t, &st))
		return taken;
	/* the process's signals another thread was woken for are not
	 * this one's */
	uint64_t gone = taken & st.shared;

	st.pending &= ~gone;
	st.shared &= ~gone;
	if (t->block == BLOCK_SIGNAL) {
		uint64_t want = sigwait_wants(t, &st);

		if (want) {
			thread_make_ready(s, t, OP_WOKEN, 0);
			t->skip = false;
			t->sig_claim = want & st.shared;
			taken |= t->sig_claim;
		}
		return taken;
	}
	uint64_t p = interrupting(&st, signal_wait_mask(t));

	if (p) {
		/* its own signal first; else one of the process's */
		uint64_t own = p & ~st.shared;
		uint64_t one = own ? 0 : p & -p;

		interrupt(s, t, !((own ? own : one) & st.caught));
		t->sig_claim = one;
		taken |= one;
	}
	return taken;
}

void signal_recheck(struct session *s, bool force)
{
	if (!s->sig_maybe && !force)
		return;
	if (s->sig_maybe)
		s->sig_any = true;
	s->sig_maybe = false;
	uint64_t taken = claimed(s);

	for (int i = 0; i < s->nth; i++)
		taken = recheck_one(s, &s->th[i], taken);
}

/*
 * t's call just blocked in ptloom's emulation (a futex wait, a sleep, a
 * read): with a signal already pending for it, the kernel's call would
 * have returned at once for the handler.  signal_recheck() looks only
 * when a signal was sent since the last choice, and this one may have
 * come before: a timer fired to main while it stood at its join's futex
 * wait, main then blocked there, and its SIGALRM handler, which would
 * have ended a worker's loop, never ran (a false hang).  Looked at only
 * in a run where signals were sent at all (a signal ptloom directed to t
 * set sig_maybe), and not when signal_recheck() is about to look at
 * every blocked thread anyway (sig_maybe).
 */
void signal_recheck_blocked(struct session *s, struct thread *t)
{
	if (s->sig_maybe || !s->sig_any)
		return;
	recheck_one(s, t, claimed(s));
}

/* The sigmask of a signalfd from its fdinfo (pid 0: ours). */
static uint64_t sfd_mask(pid_t pid, int fd)
{
	char name[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	if (pid)
		snprintf(name, sizeof(name), "/proc/%d/fdinfo/%d", pid, fd);
	else
		snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", fd);
	if (!(f = fopen(name, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "sigmask: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

static bool is_signalfd(pid_t pid, int fd)
{
	char name[64], link[64];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/%d/fd/%d", pid, fd);
	n = readlink(name, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return strstr(link, "[signalfd]") != NULL;
}

bool signal_epoll_has_sfd(pid_t pid, int ourfd)
{
	char name[64], line[256];
	bool has = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", ourfd);
	if (!(f = fopen(name, "re")))
		return false;
	while (!has && fgets(line, sizeof(line), f)) {
		int tfd;

		if (sscanf(line, "tfd: %d", &tfd) == 1 && is_signalfd(pid, tfd))
			has = true;
	}
	fclose(f);
	return has;
}

bool signal_fd_ready(struct session *s, struct thread *t, int ourfd,
		     bool epoll)
{
	struct sigstate st;
	bool ready = false;

	if (read_sigstate(s, t, &st))
		return false;
	if (!epoll)
		return (st.pending & sfd_mask(0, ourfd)) != 0;
	/* an epoll set holding a signalfd: never polled itself (its
	 * signalfd would be judged by ptloom's signals, and the item taken
	 * off the set's ready list), but member by member, by their numbers
	 * in the tracee (the one that added them) */
	char name[64], line[256];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", ourfd);
	if (!(f = fopen(name, "re")))
		return false;
	while (!ready && fgets(line, sizeof(line), f)) {
		int tfd, fd;
		unsigned ev;

		if (sscanf(line, "tfd: %d events: %x", &tfd, &ev) != 2)
			continue;
		if (is_signalfd(t->p->pid, tfd)) {
			ready = (ev & POLLIN) &&
				(st.pending & sfd_mask(t->p->pid, tfd));
			continue;
		}
		if (process_pidfd(t->p) < 0 ||
		    (fd = (int)syscall(SYS_pidfd_getfd, t->p->pidfd, tfd, 0)) <
			    0)
			continue;
		struct pollfd p = { .fd = fd,
				    .events = (short)(ev & 0xffff) };

		ready = poll(&p, 1, 0) > 0 &&
			(p.revents & (p.events | POLLERR | POLLHUP));
		close(fd);
	}
	fclose(f);
	return ready;
}

bool signal_takes(struct session *s, struct thread *t, int sig)
{
	struct sigstate st;
	uint64_t bit = BIT(sig);

	if (t->st == SCHED_DEAD || t->starting || read_sigstate(s, t, &st))
		return false;
	if (t->st == SCHED_BLOCKED && t->block == BLOCK_SIGNAL &&
	    t->sig_mode == SIGWAIT_SET && (t->sig_set & bit))
		return true;
	if (t->st == SCHED_BLOCKED && t->block == BLOCK_SIGNAL &&
	    t->sig_mode == SIGWAIT_MASK)
		return !(t->sig_set & bit);
	return !(st.blocked & bit);
}

const char *signal_wait_name(const struct thread *t)
{
	switch (t->sig_mode) {
	case SIGWAIT_SET: return "sigwait";
	case SIGWAIT_MASK: return "sigsuspend";
	default: return "pause";
	}
}

/*
 * Which thread takes a signal sent to a process is the kernel's to choose
 * (complete_signal(): any thread that does not block it, whichever
 * dequeues it first), so ptloom explores it: signal_takers() lists the
 * candidates for timers (timer.c) and for kill/sigqueue from the program
 * (signal_route()), and the chosen one is sent the signal as a
 * thread-directed one.
 */
int signal_takers(struct session *s, pid_t pid, int sig, int *out, int max)
{
	struct sigstate st;
	uint64_t bit = BIT(sig);
	bool read = false, sigwaiter = false;
	int n = 0;

	if (sig <= 0 || sig > 64 || sig == SIGKILL || sig == SIGSTOP)
		return 0;
	for (int i = 0; i < s->nth && n < max; i++) {
		struct thread *t = &s->th[i];

		if (t->p->pid != pid || !signal_takes(s, t, sig))
			continue;
		if (!read && !read_sigstate(s, t, &st))
			read = true; /* dispositions are the process's */
		sigwaiter |= t->st == SCHED_BLOCKED &&
			     t->block == BLOCK_SIGNAL &&
			     t->sig_mode == SIGWAIT_SET && (t->sig_set & bit);
		out[n++] = i;
	}
	/* neither caught nor waited for: ignored, or the process dies the
	 * same way whoever takes it */
	if (!read || (!(st.caught & bit) && !sigwaiter))
		return 0;
	return n;
}

void signal_directed(struct session *s, pid_t tid, int sig, int code,
		     pid_t from)
{
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->tid != tid || t->st == SCHED_DEAD)
			continue;
		t->sig_sent |= BIT(sig);
		if (code != SI_TKILL && !(t->sig_fix & BIT(sig))) {
			/* a standard signal queued twice is one: the first
			 * one's siginfo is the one delivered */
			t->sig_fix |= BIT(sig);
			t->sig_fix_code = code;
			t->sig_fix_pid = from;
		}
	}
	s->sig_maybe = true;
}

/* The entry of t->sig_moved for sig, or -1. */
static int moved_slot(const struct thread *t, int sig)
{
	for (int i = 0; i < t->nsig_moved; i++)
		if (t->sig_moved[i].sig == sig)
			return i;
	return -1;
}

/* A descriptor of p has a thread as its owner (F_SETOWN_EX F_OWNER_TID):
 * its SIGIO/SIGURG are thread-directed.  Read through ptloom's copies of
 * the descriptors, which share the open file and so its owner. */
static bool owner_is_thread(struct process *p)
{
	char name[64];
	DIR *d;
	struct dirent *e;
	bool found = false;
	int n = 0;

	snprintf(name, sizeof(name), "/proc/%d/fd", p->pid);
	if (process_pidfd(p) < 0 || !(d = opendir(name)))
		return true; /* cannot tell: leave it to the kernel */
	while (!found && (e = readdir(d)) && n++ < 1024) {
		struct f_owner_ex o;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, p->pidfd, atoi(e->d_name), 0);
		if (fd < 0)
			continue;
		found = fcntl(fd, F_GETOWN_EX, &o) == 0 &&
			o.type == F_OWNER_TID && o.pid > 0;
		close(fd);
	}
	closedir(d);
	return found;
}

/*
 * sig, with siginfo si, is being delivered to t: was it sent to t's whole
 * process, so that the kernel could have given it to another thread?
 * SIGCHLD from a child's change of state (CLD_*), SIGIO/SIGURG (or the
 * F_SETSIG signal) for an owner process, a signal the program sent to a
 * process group or through a pidfd (pd_open), one from a process outside
 * ptloom (SI_USER).  Not: what ptloom directed itself (sig_fix,
 * sig_moved), tkill/tgkill (SI_TKILL), and a kill ptloom routed already
 * (signal_route; its sender is one of the program's processes).
 */
static bool to_process(struct session *s, struct thread *t, int sig,
		       const siginfo_t *si)
{
	uint64_t bit = BIT(sig);
	int code = si->si_code;

	if (code == SI_TKILL)
		return false;
	if (t->p->pd_open & bit) {
		t->p->pd_open &= ~bit;
		return code <= 0; /* SI_USER, SI_QUEUE, ... (not SI_TKILL) */
	}
	if (sig == SIGCHLD)
		return code >= CLD_EXITED && code <= CLD_CONTINUED;
	if (sig == SIGIO || sig == SIGURG || sig >= 32)
		if (code == SI_KERNEL || (code >= POLL_IN && code <= POLL_HUP))
			return !owner_is_thread(t->p);
	return code == SI_USER && si->si_pid != getpid() &&
	       !process_find(s, si->si_pid);
}

bool signal_redirect(struct session *s, struct thread *t, int sig)
{
	siginfo_t si;
	int takers[MAX_ALTS], n;
	bool fixed = false;
	struct thread *to = t;

	if (sig <= 0 || sig > 64 || s->cfg->free_children ||
	    (t->sig_fix & BIT(sig)) || moved_slot(t, sig) >= 0 ||
	    ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) ||
	    !to_process(s, t, sig, &si))
		return false;
	/* t's call was interrupted to be restarted by restart_syscall
	 * (poll, nanosleep, a timed futex wait: ERESTART_RESTARTBLOCK),
	 * which ptloom does not trap: without the signal it would block in
	 * the kernel with everyone else stopped.  The kernel's taker keeps
	 * it. */
	if (!regs_get(t) && (long long)t->regs.orig_rax >= 0 &&
	    (long long)t->regs.rax == -516)
		return false;
	if (si.si_code == SI_USER && si.si_pid == getpid() &&
	    t->p->pd_from[sig]) {
		/* ptloom sent it for the program (kill -1) */
		si.si_pid = t->p->pd_from[sig];
		si.si_uid = getuid();
		fixed = true;
	}
	n = signal_takers(s, t->p->pid, sig, takers, MAX_ALTS);
	if (n >= MAX_ALTS - 1)
		session_note_capped(s, n + 1);
	if (n >= 2) {
		struct choice c;
		int pick;

		c.kind = DEC_WAKE;
		c.current = s->current;
		c.nalts = 0;
		/* the default: the thread the kernel gave it to */
		c.alts[c.nalts++] = (struct alt){ .thread = (uint16_t)t->idx,
						  .kind = OP_KILL };
		for (int i = 0; i < n; i++) {
			struct thread *u = &s->th[takers[i]];

			/* not a sigwaiter: its sigwaitinfo would return
			 * ptloom's SI_TKILL siginfo, with no delivery-stop to
			 * put the kernel's back at */
			if (u == t || (u->st == SCHED_BLOCKED &&
				       u->block == BLOCK_SIGNAL &&
				       u->sig_mode == SIGWAIT_SET))
				continue;
			c.alts[c.nalts++] = (struct alt){
				.thread = (uint16_t)takers[i],
				.kind = OP_KILL };
		}
		pick = c.nalts < 2 ? 0
				   : session_pick_or_fail(s, &c,
							  "a signal's thread");
		if (pick < 0)
			return false;
		to = &s->th[c.alts[pick].thread];
	}
	if (to != t && to->nsig_moved < 4 &&
	    !syscall(SYS_tgkill, t->p->pid, to->tid, sig)) {
		/* t goes on without it; to takes it at its next step, with
		 * this siginfo (signal_delivering) */
		to->sig_moved[to->nsig_moved].sig = sig;
		to->sig_moved[to->nsig_moved++].si = si;
		to->sig_sent |= BIT(sig);
		s->sig_maybe = true;
		resume(s, t, 0);
		return true;
	}
	if (fixed)
		ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si);
	return false;
}

void signal_delivering(struct session *s, struct thread *t, int sig)
{
	siginfo_t si;
	int k;

	(void)s;
	if (sig > 0 && sig <= 64 && (k = moved_slot(t, sig)) >= 0) {
		/* moved here by signal_redirect: the kernel's siginfo */
		if (!ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) &&
		    si.si_code == SI_TKILL)
			ptrace(PTRACE_SETSIGINFO, t->tid, 0,
			       &t->sig_moved[k].si);
		t->sig_moved[k] = t->sig_moved[--t->nsig_moved];
		return;
	}
	if (sig <= 0 || sig > 64 || !(t->sig_fix & BIT(sig)))
		return;
	t->sig_fix &= ~BIT(sig);
	/* our tgkill's SI_TKILL becomes what the kernel would have sent */
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) || si.si_code != SI_TKILL)
		return;
	si.si_code = t->sig_fix_code;
	si.si_pid = t->sig_fix_pid;
	si.si_uid = t->sig_fix_code == SI_USER ? getuid() : 0;
	ptrace(PTRACE_SETSIGINFO, t->tid, 0, &si);
}

/*
 * kill(0, sig), kill(-pgrp, sig), kill(-1, sig) from t: every process of
 * the group gets sig for the whole process, and which of its threads
 * takes it is explored at the delivery (signal_redirect).  The kernel
 * sends to a process group itself (ptloom is not in the program's);
 * kill(-1) would reach every process of the machine, ptloom's own
 * included, so ptloom sends it to the program's processes but t's own,
 * in P-number order, and answers the call (the rest of the machine is
 * not the program's to signal under ptloom).
 */
static void route_group(struct session *s, struct thread *t, pid_t pid,
			int sig)
{
	pid_t own = getpgid(t->p->pid);

	if (sig < 0 || sig > 64)
		return; /* EINVAL: the kernel says so */
	for (int i = 0; i < s->nprocs; i++) {
		struct process *q = s->procs[i];

		if (q->dead || (pid == -1 ? q == t->p
					  : getpgid(q->pid) !=
						    (pid ? -pid : own)))
			continue;
		if (pid != -1) {
			if (sig)
				q->pd_open |= BIT(sig);
			continue;
		}
		if (!sig || kill(q->pid, sig))
			continue;
		if (sig == SIGKILL) {
			session_reap_process(s, q); /* as for kill(pid) */
			continue;
		}
		q->pd_open |= BIT(sig);
		q->pd_from[sig] = t->p->pid;
		s->sig_maybe = true;
	}
	if (pid == -1) {
		/* process_kill_execute() continues the stopped ones;
		 * natively there is always another process: ptloom */
		t->skip = true;
		t->result = 0;
	}
}

/* pidfd_send_signal(fd, sig, info, 0) to one of the program's processes:
 * for the whole process, like a kill; its taker is explored at the
 * delivery.  The pid is the descriptor's (fdinfo). */
static void route_pidfd(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	int sig = (int)r->rsi;
	char name[64], line[128];
	pid_t pid = 0;
	struct process *q;
	FILE *f;

	if (r->r10 || sig <= 0 || sig > 64)
		return; /* a flag: the kernel's (PIDFD_SIGNAL_THREAD, ...) */
	snprintf(name, sizeof(name), "/proc/%d/fdinfo/%d", t->tid, (int)r->rdi);
	if (!(f = fopen(name, "re")))
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	if (pid > 0 && (q = process_find(s, pid)) && !q->dead)
		q->pd_open |= BIT(sig);
}

/* The parent of pid (/proc/PID/stat), or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *rp;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
	    sscanf(rp + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	fclose(f);
	return ppid;
}

/* Is pid a ptloom process: this one, the one it forked its launcher or
 * runs from (a -j worker's parent), or its launcher?  The program's
 * getppid() is one of them. */
static bool is_supervisor(pid_t pid)
{
	char path[64];
	struct stat a, b;

	if (pid <= 0)
		return false;
	if (pid == getpid())
		return true;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat("/proc/self/exe", &a) || stat(path, &b) ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return false;
	if (parent_of(pid) == getpid())
		return true;
	for (pid_t p = getppid(), n = 0; p > 1 && n < 64;
	     p = parent_of(p), n++)
		if (p == pid)
			return true;
	return false;
}

bool signal_to_supervisor(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	long nr = (long)r->orig_rax;
	pid_t pid = (pid_t)r->rdi;
	int sig = (int)(nr == SYS_tgkill ? r->rdx : r->rsi);
	char label[64], name[16];

	if ((nr != SYS_kill && nr != SYS_tgkill && nr != SYS_tkill) ||
	    sig <= 0 || sig > 64 || pid <= 0 || process_find(s, pid) ||
	    !is_supervisor(pid))
		return false;
	/*
	 * Natively the parent is a shell or a CI runner; here it is ptloom,
	 * which would die with no verdict (SIGKILL) or report the user's
	 * interrupt (SIGTERM).  The signal is the program's doing: it is
	 * not delivered, and the run ends naming it.  See
	 * tests/targets/kill_parent.c.
	 */
	t->skip = true;
	t->result = 0;
	process_thread_label(s, t, label, sizeof(label));
	snprintf(name, sizeof(name), "SIG%s",
		 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	session_fail(s, FAIL_UNSUPPORTED, t,
		     "unsupported: %s sends %s to its parent, ptloom (pid %d), "
		     "which runs it: not delivered",
		     label, sigabbrev_np(sig) ? name : "a signal", (int)pid);
	return true;
}

void signal_route(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	long nr = (long)r->orig_rax;
	pid_t pid = (pid_t)r->rdi;
	int sig = (int)r->rsi, code = SI_USER;
	int takers[MAX_ALTS], n, pick = 0;
	struct process *q;

	if (nr == SYS_rt_sigqueueinfo) {
		/* the kernel refuses a forged SI_USER/SI_TKILL to another
		 * thread: leave those to it */
		if (mem_read(t->p, r->rdx + 8, &code, sizeof(code)) ||
		    code >= 0 || code == SI_TKILL)
			return;
	} else if (nr == SYS_pidfd_send_signal) {
		route_pidfd(s, t);
		return;
	} else if (nr != SYS_kill) {
		return; /* to one thread already */
	}
	if (pid <= 0) {
		route_group(s, t, pid, sig);
		return;
	}
	if (!(q = process_find(s, pid)) || q->dead)
		return;
	n = signal_takers(s, pid, sig, takers, MAX_ALTS);
	if (n >= MAX_ALTS)
		session_note_capped(s, n);
	if (n < 2)
		return; /* the kernel's own choice is the only one */
	struct choice c;

	c.kind = DEC_WAKE;
	c.current = s->current;
	c.nalts = 0;
	/* the default: the sender takes its own signal on its way back, as
	 * the kernel does when no other thread runs */
	for (int i = 0; i < n; i++)
		if (takers[i] == t->idx)
			c.alts[c.nalts++] = (struct alt){
				.thread = (uint16_t)t->idx, .kind = OP_KILL };
	for (int i = 0; i < n; i++)
		if (takers[i] != t->idx)
			c.alts[c.nalts++] = (struct alt){
				.thread = (uint16_t)takers[i], .kind = OP_KILL };
	pick = session_pick_or_fail(s, &c, "a signal's thread");
	if (pick < 0)
		return;
	struct thread *to = &s->th[c.alts[pick].thread];

	if (to == t)
		return; /* the kernel does just that */
	/* the sender sends it to that thread: same sender, same siginfo
	 * (SI_QUEUE's value), but thread-directed; the program's registers
	 * are its own again at the exit */
	thread_fix_at_exit(t, r);
	if (nr == SYS_rt_sigqueueinfo) {
		r->r10 = r->rdx;
		r->orig_rax = SYS_rt_tgsigqueueinfo;
	} else {
		r->orig_rax = SYS_tgkill;
	}
	r->rdx = (uint64_t)sig;
	r->rsi = (uint64_t)to->tid;
	r->rdi = (uint64_t)pid;
	t->regs_dirty = true;
	signal_directed(s, to->tid, sig, code == SI_USER ? SI_USER : SI_TKILL,
			t->p->pid);
}
