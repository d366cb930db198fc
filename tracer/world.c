/*
 * The world: one execution under the supervisor, the wait/dispatch loop
 * and the scheduler, with the run's limits and its verdict.  A thread's
 * stops are tracer/thread.c's, a process's fork, exec and end
 * tracer/process.c's.  docs/INTERNALS.md tells the life of a scheduling
 * point; in short:
 *
 *   the current thread runs (PTRACE_CONT) until it stops at a scheduling
 *   point (a seccomp stop of a synchronising syscall, or an int3 at a
 *   libc synchronisation function or a user point); its operation becomes
 *   its *pending operation* and it stays stopped.  schedule() then builds
 *   the alternatives (tracer/sched.c), asks the strategy when there is more
 *   than one, records the event, and *executes* the chosen thread's
 *   pending operation: a futex wait that must block parks the thread in
 *   ptloom's own wait queue (its syscall is skipped later, when woken) and
 *   the scheduler picks again; anything else resumes the chosen thread,
 *   which becomes the current thread.
 *
 * Exactly one thread of the program runs at any time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session_int.h"
#include "tramp.h"

#define MONOTONIC_BASE_NS CLOCK_MONOTONIC_START_NS
#define DEFAULT_QUANTUM_NS 1000ull
#define DEFAULT_OUTPUT_MAX (1u << 20)

static volatile sig_atomic_t alarm_ticks;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_ticks++;
}

const char *failure_kind_name(int kind)
{
	static const char *const names[] = {
		[FAIL_NONE] = "pass",	     [FAIL_CRASH] = "crash",
		[FAIL_EXIT] = "exit",	     [FAIL_DEADLOCK] = "deadlock",
		[FAIL_HANG] = "hang",	     [FAIL_LIVELOCK] = "livelock",
		[FAIL_DIVERGED] = "diverged",
		[FAIL_UNSUPPORTED] = "unsupported",
		[FAIL_INTERNAL] = "internal", [FAIL_SPIN] = "spin",
		[FAIL_INTERRUPTED] = "interrupted",
		[FAIL_STEPS] = "too long", [FAIL_KILLED] = "killed",
		[FAIL_SLOW] = "too slow",
	};

	if (kind < 0 || kind >= (int)(sizeof(names) / sizeof(names[0])))
		return "unknown";
	return names[kind];
}

bool session_policy_process(const struct session *s, const struct process *p)
{
	return s->cfg->policy && p && p->pimg;
}

bool session_policy_active(const struct session *s)
{
	return s->cfg->policy && s->policy_procs;
}

void session_policy_exec(struct session *s, struct process *p)
{
	const struct sched_policy *sp = s->cfg->policy;
	char link[64], exe[4096];
	ssize_t n;

	p->pimg = NULL;
	if (!sp || !sp->adopt)
		return;
	snprintf(link, sizeof(link), "/proc/%d/exe", p->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	p->pimg = sp->adopt(sp->ctx, exe);
	p->ever_c |= !p->pimg;
	if (p->pimg && !p->ever_policy) {
		p->ever_policy = true;
		s->policy_procs++;
	}
}

/* A policy reads the processes it applies to (session_policy_process). */
int session_peek_in(struct session *s, int proc, uint64_t addr, void *buf,
		    size_t len)
{
	if (proc < 0 || proc >= s->nprocs || s->procs[proc]->dead)
		return -ESRCH;
	return mem_read(s->procs[proc], addr, buf, len);
}

int session_poke_in(struct session *s, int proc, uint64_t addr,
		    const void *buf, size_t len)
{
	if (proc < 0 || proc >= s->nprocs || s->procs[proc]->dead)
		return -ESRCH;
	return mem_write(s->procs[proc], addr, buf, len);
}

int session_peek(struct session *s, uint64_t addr, void *buf, size_t len)
{
	return session_peek_in(s, 0, addr, buf, len);
}

int session_poke(struct session *s, uint64_t addr, const void *buf,
		 size_t len)
{
	return session_poke_in(s, 0, addr, buf, len);
}

int session_nthreads(struct session *s)
{
	return s->nth;
}

bool session_observing(struct session *s)
{
	return s->cfg->observer != NULL;
}

int session_thread_info(struct session *s, int thread,
			struct session_thread *out)
{
	if (thread < 0 || thread >= s->nth)
		return -ENOENT;
	struct thread *t = &s->th[thread];

	*out = (struct session_thread){ .tid = t->tid, .proc = t->p->idx,
					.policy = session_policy_process(s,
									 t->p),
					.image = session_policy_process(s, t->p)
							 ? t->p->pimg
							 : NULL,
					.first = t->ptidx == 0,
					.state = t->st,
					.timed = t->st == SCHED_BLOCKED &&
						 t->timed,
					.kind = t->kind, .fn = t->fn,
					.obj = t->obj, .pc = t->pc };
	return 0;
}

void session_note_capped(struct session *s, int n)
{
	s->capped++;
	if ((uint32_t)n > s->capped_most)
		s->capped_most = (uint32_t)n;
}

void session_fail(struct session *s, int kind, struct thread *t,
		  const char *fmt, ...)
{
	struct run_result *r = s->res;
	va_list ap;

	if (s->failed)
		return;
	s->failed = true;
	r->failure = kind;
	r->thread = t ? t->idx : -1;
	if (t && t->p->idx > 0)
		process_thread_label(s, t, r->thread_label,
				     sizeof(r->thread_label));
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(r->message, sizeof(r->message), fmt, ap);
		va_end(ap);
	}
	if (s->pruned)
		return; /* nobody reads where it was */
	if (t && (t->st != SCHED_RUNNING || t->stop != STOP_NONE) &&
	    t->st != SCHED_DEAD)
		session_where(s, t, r->location, sizeof(r->location));
	symbolize_trace(s);
}

/* pick or single abandoned the run: a prune? (strategy.pruned) */
static void note_prune(struct session *s)
{
	if (!s->failed && s->strat->pruned && s->strat->pruned(s->strat->ctx))
		s->pruned = true;
}

static void hash_u64(uint64_t *h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		*h ^= (v >> (8 * i)) & 0xff;
		*h *= 0x100000001b3ull;
	}
}

/* Append e (kind, fn, obj, pc, arg filled in) as t's event. */
static void push_event(struct session *s, struct thread *t,
		       const struct event *proto, bool preempt, bool decided)
{
	if (s->nev == s->capev) {
		size_t cap = s->capev ? s->capev * 2 : 1024;
		struct event *n = realloc(s->ev, cap * sizeof(*n));

		if (!n)
			return;
		s->ev = n;
		s->capev = cap;
	}
	struct event *e = &s->ev[s->nev++];

	*e = *proto;
	e->step = (uint32_t)s->step;
	e->thread = (uint16_t)t->idx;
	e->preempt = preempt;
	e->decided = decided;
	/* the same address in two process images is two things */
	uint64_t tag = process_tag(t->p);

	if (e->kind != OP_TIMER)
		e->pc |= tag;
	if (e->obj && !(e->obj >> 63) && e->kind != OP_TIMER)
		e->obj = mem_name(t->p, e->obj);
	hash_u64(&s->hash, e->thread);
	hash_u64(&s->hash, (uint64_t)e->kind << 8 | e->fn);
	hash_u64(&s->hash, e->obj);
	hash_u64(&s->hash, e->pc);
	/* a futex word's value may hold a kernel thread id, which is not
	 * ours to fix: leave it out */
	if (e->kind != OP_FUTEX_WAIT && e->kind != OP_FUTEX_WAKE &&
	    e->kind != OP_FUTEX_REQUEUE)
		hash_u64(&s->hash, (uint64_t)e->arg);
	if (e->kind != OP_TIMER)
		policy_locate(s, t, e);
}

void session_push_event(struct session *s, struct thread *t,
			const struct event *e, bool preempt, bool decided)
{
	push_event(s, t, e, preempt, decided);
	if (s->strat->executed && s->nev)
		s->strat->executed(s->strat->ctx, &s->ev[s->nev - 1]);
}

static void record_event(struct session *s, struct thread *t, bool preempt,
			 bool decided)
{
	struct event e = {
		.kind = t->kind,
		.fn = t->fn,
		.obj = t->obj,
		.pc = t->pc,
		.arg = t->arg,
		.sent_sig = t->kind == OP_KILL ? t->sent_sig : 0,
		.sent_to = t->kind == OP_KILL ? t->sent_to : 0,
	};

	push_event(s, t, &e, preempt, decided);
}

int session_pick(struct session *s, struct choice *c)
{
	c->step = (uint32_t)s->step;
	c->preemptions = s->preemptions;
	bool key = c->kind == DEC_RUN && s->strat->want_state &&
		   s->strat->want_state(s->strat->ctx, c);

	c->state = key ? session_state_key(s) : 0;
	s->state_keys += key;
	int i = s->strat->pick(s->strat->ctx, c);

	s->choices++;

	if (i < 0 || i >= c->nalts)
		return -1;
	if (s->ndec == s->capdec) {
		size_t cap = s->capdec ? s->capdec * 2 : 256;
		struct decision *n = realloc(s->dec, cap * sizeof(*n));

		if (!n)
			return -1;
		s->dec = n;
		s->capdec = cap;
	}
	s->dec[s->ndec++] = (struct decision){
		.step = c->step,
		.kind = c->kind,
		.timeout = c->alts[i].timeout,
		.thread = c->alts[i].thread,
		.index = (uint16_t)i,
		.nalts = (uint16_t)c->nalts,
	};
	return i;
}

int session_pick_or_fail(struct session *s, struct choice *c,
			 const char *what)
{
	int pick = session_pick(s, c);

	if (pick < 0) {
		note_prune(s);
		session_fail(s, FAIL_DIVERGED, NULL,
			     "the schedule could not be followed at step %llu "
			     "(%s)",
			     (unsigned long long)s->step, what);
	}
	return pick;
}

void on_status(struct session *s, pid_t tid, int status)
{
	/* every stop and death goes through here, whoever waited for it:
	 * the clock reads the program made meanwhile first */
	bool failed = s->failed;

	if (agent_stopped(s, tid, status))
		return;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		on_death(s, tid, status);
	else if (WIFSTOPPED(status) && (failed || !s->failed))
		on_stop(s, tid, status); /* (a logged point ended the run:
					  * this stop never came) */
}

/*
 * CPU time the program has used, in seconds: spin detection counts what
 * it ran, not how long a loaded machine made it wait.  The kernel refuses
 * per-thread clocks of another process, but only one thread runs at a
 * time, so the process clock measures the running thread.
 */
static double process_cpu(pid_t pid)
{
	struct timespec ts;
	clockid_t clk = (clockid_t)((~(unsigned)pid << 3) | 2);

	if (clock_gettime(clk, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The kernel's state letter of task tid ('R' running or runnable, 'S', 'D',
 * 't' traced, ...), or 0 when it is gone.
 */
static char task_state(pid_t tid)
{
	char buf[512];
	const char *t = proc_stat_tail(tid, buf, sizeof(buf));

	return t ? t[0] : 0;
}

/*
 * Past --timeout, a hang is shown only when nothing of the program could
 * go on: every thread ptloom let run sleeps in the kernel (state S).  One
 * still running or waiting for a CPU (R), in disk I/O (D) or stopped with
 * an event ptloom has not read yet (t) means a loaded machine or a long
 * computation: that run is too slow for the limit, not known to hang.
 * So does any other thread of the program in R or D, which ptloom waits
 * for although it did not let it run: one dying of its process's exit
 * (node's last step done, its leader a zombie, T6 still on its way out
 * under load 12), one cloned before its first stop.  Those held at a
 * point are in t.  Returns such a task, or 0.
 */
static pid_t runnable_task(struct session *s)
{
	for (int i = 0; i < s->nth; i++) {
		if (s->th[i].st == SCHED_DEAD)
			continue;
		char c = task_state(s->th[i].tid);

		if (c == 'R' || c == 'D' ||
		    (s->th[i].st == SCHED_RUNNING && (c == 't' || c == 'T')))
			return s->th[i].tid;
	}
	for (int i = 0; i < s->nfreep; i++) {
		char c = task_state(s->freep[i]);

		if (c == 'R' || c == 'D')
			return s->freep[i];
	}
	return 0;
}

/* The name of a syscall a thread can sleep in that ptloom does not
 * schedule, for the message of a run that waits in one; NULL if none. */
static const char *unmodelled_wait(long nr)
{
	switch (nr) {
	case SYS_flock: return "flock";
	case SYS_fcntl: return "fcntl";
	case SYS_msgrcv: return "msgrcv";
	case SYS_msgsnd: return "msgsnd";
	case SYS_semop: return "semop";
	case SYS_semtimedop: return "semtimedop";
	case SYS_mq_timedreceive: return "mq_timedreceive";
	case SYS_mq_timedsend: return "mq_timedsend";
	case SYS_splice: return "splice";
	case SYS_tee: return "tee";
	case SYS_vmsplice: return "vmsplice";
	case SYS_sendfile: return "sendfile";
	case SYS_copy_file_range: return "copy_file_range";
	case SYS_recvmmsg: return "recvmmsg";
	case SYS_sendmmsg: return "sendmmsg";
	case SYS_io_uring_enter: return "io_uring_enter";
	case SYS_io_getevents: return "io_getevents";
	case SYS_open: return "open";
	case SYS_openat: return "openat";
	case SYS_ioctl: return "ioctl";
	default: return NULL;
	}
}

/* A running thread asleep in the kernel, and the syscall it sleeps in
 * (from /proc/TID/syscall); -1 for none. */
static int kernel_sleeper(struct session *s, long *nr)
{
	for (int i = 0; i < s->nth; i++) {
		char path[64];
		FILE *f;
		long n = -1;

		if (s->th[i].st != SCHED_RUNNING)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/syscall", s->th[i].tid);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
		if (n >= 0) {
			*nr = n;
			return i;
		}
	}
	return -1;
}

/* CPU seconds the program's processes have used in this run. */
static double tree_cpu(struct session *s)
{
	double sum = 0;

	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i] && !s->procs[i]->dead)
			sum += process_cpu(s->procs[i]->pid);
	for (int i = 0; i < s->nfreep; i++)
		sum += process_cpu(s->freep[i]);
	return sum;
}

/*
 * A thread other than the running one that could still go on if it had its
 * turn: enabled, in a timed wait (virtual time only moves at points) or
 * waiting for a descriptor.  Its T-number, or -1.  (Narrower than
 * !quiet(): starting threads and vfork parents are left out.)
 */
static int other_could_run(struct session *s)
{
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (i == s->current || t->st == SCHED_DEAD)
			continue;
		if (t->st == SCHED_ENABLED || t->st == SCHED_RUNNING ||
		    (t->st == SCHED_BLOCKED &&
		     (t->timed || t->block == BLOCK_FD ||
		      t->block == BLOCK_POLL)))
			return t->idx;
	}
	return -1;
}

/*
 * Past --timeout of wall-clock time: is that a hang?  Wall time alone shows
 * nothing on a loaded machine, so a hang needs the program itself to have
 * run --timeout seconds of CPU time in this run (an endless computation or
 * a spin no point caught).  While something of it could still run (waits
 * for a CPU, for ptloom, or computes) and has used less, the run goes on, up
 * to TIMEOUT_SLOW_FACTOR times --timeout; then, or when every thread sleeps
 * in the kernel in a wait ptloom does not model, the run is too slow for
 * the limit: not covered, never a failure.  Sets s->timeout_kind and
 * s->timeout_why; false to go on waiting.
 */
#define TIMEOUT_SLOW_FACTOR 20

static bool timeout_reached(struct session *s)
{
	double wall = now_seconds() - s->t0, cpu = tree_cpu(s);
	double lim = s->cfg->timeout;
	pid_t rt = runnable_task(s);

	/* the running thread took no step for half the limit or more (the
	 * steps it logged in the program, taken below, came before) */
	bool long_step = now_seconds() - s->step_wall >= lim / 2;

	/* a judgement: what the running thread logged in the program (a
	 * wake of another thread, before its long computation) counts, as
	 * its stop would have made it count; so does a signal pending for
	 * a blocked thread */
	if (cpu >= lim) {
		agent_take_log(s);
		signal_recheck(s, true);
	}
	int waiting = other_could_run(s);

	if (cpu >= lim && waiting >= 0) {
		s->timeout_kind = FAIL_SLOW;
		snprintf(s->timeout_why, sizeof(s->timeout_why),
			 "the program used %.1f s of CPU time in this run "
			 "(--timeout %g) while T%d waited for its turn (one "
			 "thread runs at a time and the running one reached "
			 "no point); raise --timeout",
			 cpu, lim, waiting);
		return true;
	}
	if (cpu >= lim && timer_armed(s) && long_step) {
		/* a computation a timer's signal would end (alarm(1), then
		 * work until SIGALRM sets a flag): the virtual clock moves at
		 * steps, and none was taken for half the limit or more, so
		 * the timer never comes due; no hang of the program's is
		 * shown */
		s->timeout_kind = FAIL_SLOW;
		snprintf(s->timeout_why, sizeof(s->timeout_why),
			 "the program used %.1f s of CPU time in this run "
			 "(--timeout %g) without a scheduling point while a "
			 "timer of its own was armed: ptloom's clock moves "
			 "only at scheduling points, so a computation that "
			 "only the timer's signal ends does not end here "
			 "(not modelled)",
			 cpu, lim);
		return true;
	}
	if (cpu >= lim) {
		s->timeout_kind = FAIL_HANG;
		snprintf(s->timeout_why, sizeof(s->timeout_why),
			 "hang: the program used %.1f s of CPU time in this "
			 "run (--timeout %g) without finishing",
			 cpu, lim);
		return true;
	}
	/* starved (neither the program nor ptloom got half the wall time of
	 * CPU: a loaded machine), or computing more than ptloom works (its
	 * CPU time will show a hang soon): give it longer.  A run where
	 * ptloom's own work dominates is just too slow for the limit. */
	double self = self_cpu_seconds() - s->self_cpu0;

	if (rt && (cpu + self < wall / 2 || cpu >= self) &&
	    wall < lim * TIMEOUT_SLOW_FACTOR)
		return false;
	s->timeout_kind = FAIL_SLOW;
	long nr = -1;
	int k = rt ? -1 : kernel_sleeper(s, &nr);
	const char *name = k >= 0 ? unmodelled_wait(nr) : NULL;

	/* nothing runnable at this instant, but the program and ptloom
	 * used half the wall time or more: a busy run caught between two
	 * steps (node's, 70,000 stops a run), not one asleep */
	if (rt || (!name && cpu + self >= wall / 2))
		snprintf(s->timeout_why, sizeof(s->timeout_why),
			 "the run took %.0f s of wall-clock time, the "
			 "program %.1f s of CPU (--timeout %g): the machine "
			 "is too loaded or ptloom too slow for this run; "
			 "raise --timeout",
			 wall, cpu, lim);
	else {
		if (name) {
			/* a FIFO's open between two threads: the one that
			 * would end it is held by ptloom, no limit helps */
			snprintf(s->res->kernel_wait,
				 sizeof(s->res->kernel_wait),
				 "T%d sleeps in the kernel in %s(2), a wait "
				 "ptloom does not schedule (if another thread "
				 "or process under ptloom is what it waits "
				 "for, no --timeout helps)",
				 k, name);
			snprintf(s->timeout_why, sizeof(s->timeout_why),
				 "the run took longer than %g s (--timeout): "
				 "%s",
				 lim, s->res->kernel_wait);
		} else if (k >= 0)
			snprintf(s->timeout_why, sizeof(s->timeout_why),
				 "the run took longer than %g s (--timeout) "
				 "with every running thread asleep in the "
				 "kernel (T%d in syscall %ld), in a wait "
				 "ptloom does not model; raise --timeout",
				 lim, k, nr);
		else
			/* nothing runnable and no sleeper found: a run that
			 * got little CPU (a loaded machine, a cold analysis
			 * cache's sweep), not a wait of the program's (a
			 * hardening report: qemu-img under load was said to
			 * sleep in a wait no thread was in) */
			snprintf(s->timeout_why, sizeof(s->timeout_why),
				 "the run took %.0f s of wall-clock time, the "
				 "program %.1f s of CPU and ptloom %.1f s "
				 "(--timeout %g), and no thread was found "
				 "asleep in the kernel: the machine is likely "
				 "too loaded for this run; raise --timeout",
				 wall, cpu, self, lim);
	}
	return true;
}

void session_restart_clock(struct session *s)
{
	s->t0 = now_seconds();
	s->self_cpu0 = self_cpu_seconds();
	s->resume_time = s->step_wall = s->t0;
	s->resume_cpu = -1;
	bp_analysis_seconds(&s->analysis_wall, &s->analysis_cpu);
}

/*
 * The time ptloom spent sweeping a file's code since the last look (an
 * exec's executable, at most once per file and ptloom process) is not
 * the run's: --timeout, the spin probe and the step clock start that
 * much later.  node's sweep for race discovery is 5-8 s, and its run went
 * past the default --timeout of 10 s on a loaded machine ("too slow").
 */
static void session_absorb_analysis(struct session *s)
{
	double w, c;

	bp_analysis_seconds(&w, &c);
	if (w <= s->analysis_wall && c <= s->analysis_cpu)
		return;
	s->t0 += w - s->analysis_wall;
	s->resume_time += w - s->analysis_wall;
	s->step_wall += w - s->analysis_wall;
	s->self_cpu0 += c - s->analysis_cpu;
	s->analysis_wall = w;
	s->analysis_cpu = c;
}

/* Let held threads go (session_config.watch's held()); how many. */
static int release_held(struct session *s, bool block)
{
	const struct proc_watch *w = s->cfg->watch;
	int pidx[64], n = w && w->held ? w->held(w->ctx, pidx, 64, block) : -1;
	int done = 0;

	if (block)
		session_restart_clock(s);
	if (block && n == 0)
		n = -1; /* it has nothing to wait for: no hang */
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];
		bool go = n < 0;

		if (!t->held)
			continue;
		for (int k = 0; k < n && !go; k++)
			go = t->p->idx == pidx[k];
		if (!go)
			continue;
		t->held = false;
		s->nheld--;
		t->st = SCHED_ENABLED;
		t->kind = OP_START;
		t->fn = 0;
		t->obj = 0;
		t->obj2 = 0;
		done++;
	}
	return done;
}

/* Ctrl-C, or the time bound (--max-time's stop_wall) passed: the run
 * stops, not a failure */
bool session_stop_due(const struct session *s)
{
	return (s->cfg->interrupted && *s->cfg->interrupted) ||
	       (s->cfg->stop_wall > 0 && now_seconds() >= s->cfg->stop_wall);
}

/* The limits checked on every timer tick: Ctrl-C, --timeout, a spin. */
int check_limits(struct session *s, pid_t only)
{
	session_absorb_analysis(s);
	if (session_stop_due(s))
		return -EINTR;
	if (s->cfg->timeout > 0 && now_seconds() - s->t0 > s->cfg->timeout &&
	    timeout_reached(s))
		return -ETIMEDOUT;
	if (agent_logged(s)) {
		/* points passed in the program: no long step */
		s->resume_time = now_seconds();
		s->resume_cpu = -1;
	}
	/* a long step while threads hand over in the program: the plan
	 * ends first, so that the running thread is the one whose turn it
	 * is (agent.c) */
	if (s->ho_active && s->cfg->spin_ms > 0 && only == -1 &&
	    (now_seconds() - s->resume_time) * 1000 > s->spin_ms &&
	    !agent_ho_freeze(s))
		return 0;
	if (s->cfg->spin_ms <= 0 || only != -1 || s->current < 0 ||
	    s->current >= s->nth || s->th[s->current].st != SCHED_RUNNING ||
	    session_policy_process(s, s->th[s->current].p) ||
	    (now_seconds() - s->resume_time) * 1000 <= s->spin_ms)
		return 0;
	pid_t pid = s->th[s->current].p->pid;

	if (s->resume_cpu < 0) {
		/* a long step: its CPU time counts from now */
		s->resume_cpu = process_cpu(pid);
		s->resume_time = now_seconds();
	} else if ((process_cpu(pid) - s->resume_cpu) * 1000 > s->spin_ms) {
		/* only another thread can end a spin */
		int live = 0;

		for (int i = 0; i < s->nth; i++)
			live += s->th[i].st != SCHED_DEAD;
		if (live > 1)
			return -EAGAIN;
	}
	return 0;
}

/*
 * Wait for the next stop; -ETIMEDOUT when --timeout passed, -EINTR when
 * interrupted, -EAGAIN for a spin, -ECHILD when nothing is left.  The
 * limits are checked at every tick of the interval timer, also when
 * events keep coming so fast that the tick never interrupts waitpid.
 */
static int wait_any(struct session *s, pid_t only, pid_t *tid, int *status)
{
	for (;;) {
		if (alarm_ticks != s->seen_ticks) {
			int r;

			s->seen_ticks = alarm_ticks;
			if ((r = check_limits(s, only)))
				return r;
		}
		pid_t w = waitpid(only, status, __WALL);

		if (w > 0) {
			*tid = w;
			s->stops++;
			return 0;
		}
		if (errno != EINTR)
			return -errno;
	}
}

static bool is_cond_wait(int fn)
{
	return fn == FN_COND_WAIT || fn == FN_COND_TIMEDWAIT ||
	       fn == FN_CND_WAIT || fn == FN_CND_TIMEDWAIT;
}

/*
 * What the reduction (analysis/dfs.c) needs beyond the pending operation's
 * object: a second object its stretch of code touches, or that it may
 * touch anything.  A cond_wait unlocks its mutex and relocks it when woken:
 * from the call until the thread's next call every point of it also acts
 * on the mutex.  An exit clears and wakes its tid word.  A thread woken by
 * a signal or a group-stop's end runs a handler or whatever it was doing:
 * anything.
 */
static void pending_objects(const struct thread *t, struct sched_thread *st)
{
	if (t->kind == OP_FUTEX_WAKE || t->kind == OP_FUTEX_REQUEUE)
		st->obj2 = mem_sync_key(t->p, t->obj2);
	if (t->kind == OP_CALL ? is_cond_wait(t->fn) : is_cond_wait(t->last_fn)) {
		if (st->obj2 || !t->cond_mutex)
			st->global = true;
		st->obj2 = mem_sync_key(t->p, t->cond_mutex);
	}
	if (t->kind == OP_EXIT)
		st->obj2 = mem_sync_key(t->p, t->ctid);
	if ((t->kind == OP_WOKEN && !t->futex_woken) || t->sig_sent)
		st->global = true;
}

/*
 * A reader's pending rwlock call (rdlock, or an unlock where no writer
 * holds the lock) and the lock as it is now, for the reduction
 * (struct alt readers, analysis/dfs.c): glibc's pthread_rwlock_t (2.25 on)
 * keeps in __readers (offset 0) the readers << 3 and the bits WRPHASE 1,
 * WRLOCKED 2, RWAITING 4, and the write owner's tid in __cur_writer (24).
 * With all three bits clear and no owner, rdlock is a fetch-and-add that
 * returns at once and a reader's unlock a decrement that wakes nobody (it
 * sets WRPHASE only under WRLOCKED and wakes only on RWAITING or WRPHASE):
 * any two of them commute and leave the bits clear.  0 when not so, not
 * readable, or not that glibc.
 */
static uint8_t rwlock_readers(const struct thread *t)
{
	uint32_t w[7];

	if (t->kind != OP_CALL || !t->p->rwlock_known || !t->obj ||
	    (t->st != SCHED_ENABLED && t->st != SCHED_RUNNING) ||
	    (t->fn != FN_RWLOCK_RDLOCK && t->fn != FN_RWLOCK_UNLOCK))
		return 0;
	if (mem_read(t->p, t->obj, w, sizeof(w)))
		return 0;
	uint32_t n = w[0] >> 3;

	if ((w[0] & 7) || w[6] || n >= 1u << 27)
		return 0;
	return (uint8_t)(1 + (n < 254 ? n : 254));
}

/* Points in a row after which a thread yields to the others (fairness). */
#define FAIR_STEPS 1000

/*
 * v stands at its spin point and its turn, taken and undone
 * (thread.c spin_words), waits: run now it would only spin again, since
 * every store cur has made to the words it reads since then was a
 * watchpoint's trap that took the turn again.  The fairness yield waits
 * (up to 4 x FAIR_STEPS) for a point where the spinner would go on:
 * otherwise a thread polling a spin lock (lock, look, unlock) whose
 * number of points per turn divides FAIR_STEPS hands over at the same
 * place every time, always while it holds the lock, and the repeating
 * cycle is reported as a livelock of a correct program.
 */
static bool waits_now(const struct thread *v, const struct thread *cur)
{
	return v->p == cur->p && v->kind == OP_SPIN && v->turn_known &&
	       v->turn_waits && v->nspin_words > 0;
}

uint64_t session_stall_limit(const struct session *s)
{
	uint64_t base = s->now;
	bool busy = false;

	for (int i = 0; i < s->nth; i++) {
		const struct thread *t = &s->th[i];

		if (t->starting || t->st != SCHED_ENABLED || t->yield)
			continue;
		busy = true;
		if (i != s->current && t->ran_at && t->ran_at - 1 < base)
			base = t->ran_at - 1;
	}
	if (!busy && s->spin_len >= SPIN_EXPIRIES)
		return s->now;
	return base + MAX_STALL_NS;
}

bool session_may_expire_early(struct session *s, const struct process *p,
			      uint64_t armed)
{
	if (!p || p->child_reaped > armed)
		return false; /* a child ended since it was armed */
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i]->parent == p->idx && !s->procs[i]->reaped)
			return false; /* a child it waits for, or will */
	for (int i = 0; i < s->nth; i++) {
		const struct thread *t = &s->th[i];

		if (!t->starting && t->st == SCHED_ENABLED && !t->yield &&
		    t->p != p)
			return false;
	}
	return true;
}

/* Has p writable shared memory other than semaphores' (process.shm)? */
static bool shares_data(const struct process *p)
{
	for (int i = 0; i < p->nshm; i++)
		if (!p->shm[i].sem)
			return true;
	return false;
}

/* Is t the last live thread of its process? */
static bool last_of_process(const struct session *s, const struct thread *t)
{
	for (int i = 0; i < s->nth; i++)
		if (&s->th[i] != t && s->th[i].p == t->p &&
		    s->th[i].st != SCHED_DEAD)
			return false;
	return true;
}

static void build_sched(struct session *s, struct sched_thread *st)
{
	bool any = false;
	uint64_t limit = session_stall_limit(s);

	for (int i = 0; i < s->nth; i++)
		any |= !s->th[i].starting && s->th[i].st == SCHED_ENABLED;
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		st[i] = (struct sched_thread){
			.state = t->st,
			.yield = t->yield,
			.timed = t->st == SCHED_BLOCKED && t->timed,
			.due = t->deadline <= s->now,
			.deadline = t->deadline,
			.kind = t->kind,
			.fn = t->kind == OP_CALL ? t->fn
			      : t->kind == OP_WAIT4 && !t->wait_nohang
				      ? WAIT_BLOCKING
			      : t->kind == OP_CLONE && t->fork_return
				      ? FORK_RETURN
			      : t->kind == OP_CLONE && t->clone_thread
				      ? THREAD_CLONE
				      : 0,
			/* a file's bytes mapped apart: as its first mapping
			 * names them (process.h) */
			.obj = mem_sync_key(t->p, t->obj),
			.pc = t->pc,
		};
		pending_objects(t, &st[i]);
		st[i].readers = rwlock_readers(t);
		st[i].reads = thread_point_reads(t);
		st[i].tso = t->st == SCHED_ENABLED && !t->starting &&
			    tso_may_buffer(s, t);
		if (t->starting)
			st[i].state = SCHED_BLOCKED;
		if (any && st[i].timed &&
		    (t->deadline > limit ||
		     (t->deadline > s->now &&
		      !session_may_expire_early(s, t->p, t->armed))))
			st[i].timed = false;
		/* a wait for the world times out only when real time has
		 * passed (outside_wait), never as a choice */
		if (any && st[i].timed &&
		    (t->block == BLOCK_FD || t->block == BLOCK_POLL) &&
		    syscall_fd_external(s, t))
			st[i].timed = false;
	}
	/*
	 * Fairness: a thread that has taken FAIR_STEPS points in a row while
	 * another could run yields, so leaving it is free and staying costs a
	 * preemption.  Without this a thread polling a flag between points
	 * (a worker loop until "stop") runs forever once the preemption bound
	 * is spent, a hang of the search and not of the program.
	 */
	int cur = s->current;

	if (cur >= 0 && cur < s->nth && s->run_len >= FAIR_STEPS &&
	    st[cur].state == SCHED_ENABLED)
		for (int i = 0; i < s->nth; i++)
			if (i != cur && st[i].state == SCHED_ENABLED &&
			    !(s->run_len < 4 * FAIR_STEPS &&
			      waits_now(&s->th[i], &s->th[cur]))) {
				st[cur].yield = true;
				break;
			}
}

static const char *label_of(struct session *s, int idx)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "T%d", idx);
	(void)s;
	return buf;
}

static void deadlock(struct session *s)
{
	char msg[MSG_MAX], loc[LOC_MAX] = "";
	size_t off = 0;
	report_threads(s);
	symbolize_trace(s);
	off += (size_t)snprintf(msg, sizeof(msg),
				"deadlock: every live thread is blocked");
	for (int i = 0; i < s->res->nthreads; i++) {
		struct thread_report *r = &s->res->threads[i];

		if (strcmp(r->state, "blocked"))
			continue;
		if (off < sizeof(msg))
			off += (size_t)snprintf(
				msg + off, sizeof(msg) - off,
				"\n  %s blocked in %s%s%s", r->name[0] == 'P' ?
				r->name : label_of(s, r->thread), r->what,
				r->where[0] ? " from " : "", r->where);
		size_t l = strlen(loc);

		if (l < sizeof(loc) - 2)
			snprintf(loc + l, sizeof(loc) - l, "%s%s%s",
				 l ? "; " : "", r->what,
				 r->where[0] ? " from " : "");
		l = strlen(loc);
		if (r->where[0] && l < sizeof(loc) - 2)
			snprintf(loc + l, sizeof(loc) - l, "%s", r->where);
	}
	s->failed = true;
	s->res->failure = FAIL_DEADLOCK;
	s->res->thread = -1; /* every blocked thread is named */
	snprintf(s->res->message, sizeof(s->res->message), "%s", msg);
	snprintf(s->res->location, sizeof(s->res->location), "%s", loc);
}

static void release_pending_wakes(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;

	for (int i = 0; i < s->nth; i++) {
		struct thread *u = &s->th[i];

		if (u == t || u->p != t->p || u->st != SCHED_ENABLED ||
		    (u->kind != OP_FUTEX_WAKE && u->kind != OP_FUTEX_REQUEUE) ||
		    (u->obj != t->obj && u->obj2 != t->obj))
			continue;
		o->sync(o->ctx, u->idx, SYNC_RELEASE,
			mem_sync_key(t->p, t->obj), -1);
	}
}

void session_acquire_everyone(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;
	/* a key of t's own, no address (bit 62: atomics' keys) */
	uint64_t key = (1ull << 61) | ((uint64_t)t->idx << 6);

	for (int i = 0; i < s->nth; i++) {
		struct thread *u = &s->th[i];

		/* an ended thread's stores too: the spin may be on a flag
		 * it set before it ended (not joined yet) */
		if (u != t && u->p == t->p)
			o->sync(o->ctx, u->idx, SYNC_RELEASE, key, -1);
	}
	o->sync(o->ctx, t->idx, SYNC_ACQUIRE, key, -1);
}

/*
 * A call on a glibc pthread_rwlock_t (rwlock_known: the layout of
 * rwlock_readers): readers are not ordered with each other, so that a
 * write under a read lock is a race even in runs whose read sections do
 * not overlap (bench/bugs/rdlock_write.c: before, each reader's unlock
 * ordered it before the next reader's rdlock, and discovery never saw
 * the race).  A read lock acquires what write unlocks released (the lock
 * object); a write lock acquires that and what read unlocks released
 * (the readers' side).  An unlock is a writer's when __cur_writer
 * (offset 24) is set: glibc's test is that it is the caller's tid, and a
 * reader's unlock finds it 0, as no writer holds the lock while a reader
 * does.  A writer that finds readers inside waits on a futex word of the
 * lock until the last one leaves, and readers may leave after its call
 * point: each futex point of its call (a wait, the wake-up) acquires the
 * readers' side again (rw_writing, until its next other point).  The futex words inside the lock still acquire and release the
 * object (more order than readers have, which can hide a race, never
 * invent one).  False: not such a call (the usual acquire and release).
 */
static bool observe_rwlock(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;
	uint32_t w[7];
	uint64_t key = mem_sync_key(t->p, t->obj);

	if (t->kind != OP_CALL || !t->p->rwlock_known || !t->obj ||
	    (t->obj >> 63))
		return false;
	switch (t->fn) {
	case FN_RWLOCK_RDLOCK:
	case FN_RWLOCK_TRYRDLOCK:
	case FN_RWLOCK_TIMEDRDLOCK:
		o->sync(o->ctx, t->idx, SYNC_ACQUIRE, key, -1);
		return true;
	case FN_RWLOCK_WRLOCK:
	case FN_RWLOCK_TRYWRLOCK:
	case FN_RWLOCK_TIMEDWRLOCK:
		o->sync(o->ctx, t->idx, SYNC_ACQUIRE, key, -1);
		o->sync(o->ctx, t->idx, SYNC_ACQUIRE_READERS, key, -1);
		t->rw_writing = key;
		return true;
	case FN_RWLOCK_UNLOCK:
		if (mem_read(t->p, t->obj, w, sizeof(w)))
			return false;
		/* a writer's (any owner: never less order than there is) */
		if (w[6])
			o->sync(o->ctx, t->idx, SYNC_RELEASE, key, -1);
		o->sync(o->ctx, t->idx, SYNC_RELEASE_READERS, key, -1);
		return true;
	default:
		return false;
	}
}

/*
 * Happens-before for race discovery: every operation acquires and
 * releases its object (rwlock calls: observe_rwlock).  pthread_cond_wait
 * also releases its mutex at the call and acquires it again, since glibc
 * unlocks and relocks it internally, out of our sight: at every operation
 * of the thread until the call is known to be over, that is until its
 * next libc call or an access of its own code (thread.c
 * relock_before_access).  The operations inside
 * the call (the mutex's FUTEX_WAKE as glibc unlocks it, the wait, the
 * wake) come before the relock, and what they acquire was released before
 * it: true happens-before.  Before, the first of them took the relock and
 * the relock after the wait was lost: a consumer reading a queue after a
 * cond_wait that found its signal already there raced with the producer's
 * last push (races invented on every condvar queue).
 */
static void observe_sync(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;
	/* keyed as the file's first mapping names it if mapped apart */
	uint64_t obj = mem_sync_key(t->p, t->obj);
	uint64_t cm = mem_sync_key(t->p, t->cond_mutex);

	if (t->rw_writing && (t->kind == OP_FUTEX_WAIT || t->kind == OP_WOKEN ||
			      t->kind == OP_FUTEX_WAKE))
		o->sync(o->ctx, t->idx, SYNC_ACQUIRE_READERS, t->rw_writing,
			-1);
	else
		t->rw_writing = 0;
	/* not at the futex wait inside cond_wait: only once it is over */
	if (t->relock && t->kind != OP_FUTEX_WAIT) {
		o->sync(o->ctx, t->idx, SYNC_ACQUIRE, t->relock, -1);
		if (t->kind == OP_CALL)
			t->relock = 0; /* the program's next call: it returned */
	}
	if (t->kind == OP_CALL && t->obj && !(t->obj >> 63) &&
	    call_object_size(t->fn) < 64)
		o->sync(o->ctx, t->idx, SYNC_OBJECT, obj,
			(int)call_object_size(t->fn));
	if (t->kind == OP_CALL && t->cond_mutex && !(t->cond_mutex >> 63) &&
	    (t->fn == FN_COND_WAIT || t->fn == FN_COND_TIMEDWAIT ||
	     t->fn == FN_CND_WAIT || t->fn == FN_CND_TIMEDWAIT))
		o->sync(o->ctx, t->idx, SYNC_OBJECT, cm,
			(int)call_object_size(FN_MUTEX_LOCK));
	/* what a wait or a spin reads may have been stored by code nobody
	 * observes (libgomp's barrier stores its generation with a plain
	 * mov, then wakes): a thread stopped at a wake of the word has
	 * stored it, so it releases now; a spinner's re-check may see
	 * anything any thread stored, so it acquires everyone's (more
	 * happens-before than there may be, never less) */
	if (t->obj && !(t->obj >> 63) && t->kind != OP_ACCESS &&
	    t->kind != OP_ATOMIC)
		release_pending_wakes(s, t);
	if (t->kind == OP_SPIN)
		session_acquire_everyone(s, t);
	/* a signal sent: its handler, when delivered, acquires (thread.c) */
	if (t->kind == OP_KILL)
		signal_release_to_handlers(s, t);
	/* every operation acquires and releases its object (an rwlock
	 * call its own way), a descriptor's too (fd_object's keys, bit 63:
	 * a pipe, the sockets, an eventfd): what a thread did before it
	 * wrote there happens before what a thread does after it has read
	 * (or polled) what was written, as the kernel orders them (a
	 * worker's result announced to an event loop; more order than a
	 * read that found nothing has, never less).  An access or atomic
	 * point's object is data, observed as an access (thread.c
	 * observe_point), no synchronisation; nor is a regular file's I/O
	 * (syscall.c file_point: as before it was a point, and as
	 * ThreadSanitizer takes files, two threads' log lines order none
	 * of their other accesses) */
	if (t->obj && t->kind != OP_ACCESS && t->kind != OP_ATOMIC &&
	    !(t->file_io && (t->kind == OP_READ || t->kind == OP_WRITE)) &&
	    ((t->obj >> 63) ? t->kind != OP_CALL : !observe_rwlock(s, t)))
		o->sync(o->ctx, t->idx, SYNC_ACQREL, obj, -1);
	if (t->kind == OP_CALL &&
	    (t->fn == FN_COND_WAIT || t->fn == FN_COND_TIMEDWAIT ||
	     t->fn == FN_CND_WAIT || t->fn == FN_CND_TIMEDWAIT) &&
	    t->cond_mutex) {
		o->sync(o->ctx, t->idx, SYNC_RELEASE, cm, -1);
		t->relock = cm;
	}
}

/*
 * Past --max-steps: a livelock only when the run provably repeats the same
 * state (tracer/spin.c), else the run is merely too long for the limit.
 * Returns true when the run ends.
 */
static bool too_many_steps(struct session *s, struct thread *t)
{
	static char msg[MSG_MAX];
	int v = livelock_check(s, msg, sizeof(msg));

	if (v == LIVELOCK_PROVEN)
		session_fail(s, FAIL_LIVELOCK, t, "%s", msg);
	else if (v == LIVELOCK_UNKNOWN)
		session_fail(s, FAIL_STEPS, t,
			     "more than %llu scheduling points (--max-steps) "
			     "and no livelock shown: raise --max-steps",
			     (unsigned long long)s->cfg->max_steps);
	return v != LIVELOCK_MAYBE;
}

/*
 * A spinning thread yields (reach_point, OP_SPIN) so that the others run
 * first.  Once another thread that is not spinning itself takes a step
 * (which may write what the spinner reads: the stores between points are
 * not points), the spinner's re-check is a thread like any other again,
 * instead of a forced switch to whoever runs: a sampler may choose it
 * right after the step, e.g. between a producer publishing an index and
 * writing the slot.  Its next re-check yields again, so a spinner takes
 * at most one step per step of the others, and spinners alone never
 * un-yield each other.
 *
 * A step from a spin, yield or read point is not known to write when it
 * is taken; if it ends at an active point (not a read, spin or yield
 * point: the thread left its loop, e.g. a producer past its "full" check
 * that stored the index on the way), it may have written, and the
 * spinners are woken there (reach_point, wake_due).  A loop of reads and
 * spin points never ends at an active point, so spinners still cannot
 * un-yield each other forever.
 */
static void wake_spinners(struct session *s, struct thread *t)
{
	if (t->yield || t->kind == OP_SPIN || t->kind == OP_YIELD ||
	    thread_point_reads(t)) {
		t->wake_due = true;
		return;
	}
	t->wake_due = false;
	spinners_wake(s, t);
}

void spinners_wake(struct session *s, const struct thread *t)
{
	for (int i = 0; i < s->nth; i++) {
		struct thread *u = &s->th[i];

		if (u != t && u->yield && u->p == t->p &&
		    u->st == SCHED_ENABLED && u->kind != OP_YIELD)
			u->yield = false;
	}
}

/*
 * Every thread waits, and some wait for the world outside the program (a
 * server, a FIFO, a terminal: tracer/fdext.c).  Wait for it in real time,
 * up to the nearest virtual deadline (a timeout then fires as it would
 * natively) and at most until --timeout.  The virtual clock stands still
 * meanwhile, so a run stays a function of its schedule and its input.
 * Returns true when something became ready or the run ended.
 */
static bool outside_wait(struct session *s, const struct choice *c,
			 bool open)
{
	struct pollfd p[4 * POLL_MAX];
	int n = 0, who = -1;
	bool flk = false; /* a flock another process holds: look again */
	bool sem = false; /* who waits on a semaphore set */
	bool fifo = false; /* who waits in a FIFO's open */

	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st != SCHED_BLOCKED ||
		    (t->block != BLOCK_FD && t->block != BLOCK_POLL) ||
		    (!syscall_fd_external(s, t) && !(open && t->ext_open)))
			continue;
		if (who < 0) {
			who = t->idx;
			sem = waits_sem(t);
			fifo = waits_fifo(t);
		}
		for (int k = 0; k < t->npfd && n < 4 * POLL_MAX; k++)
			if (t->pkind[k] == FDK_FLOCK ||
			    t->pkind[k] == FDK_SEM || t->pkind[k] == FDK_FIFO)
				flk = true;
			else if (t->pfd[k] >= 0)
				p[n++] = (struct pollfd){ .fd = t->pfd[k],
							  .events = t->pev[k] };
	}
	if (!n && !flk)
		return false;
	double budget = -1; /* seconds, <0 none */

	for (int i = 0; i < c->nalts; i++) {
		if (!c->alts[i].timeout)
			continue;
		uint64_t d = s->th[c->alts[i].thread].deadline;

		if (d <= s->now)
			return false;
		double b = (double)(d - s->now) * 1e-9;

		if (budget < 0 || b < budget)
			budget = b;
	}
	double start = now_seconds();

	for (;;) {
		if (session_stop_due(s)) {
			session_fail(s, FAIL_INTERRUPTED, NULL, "interrupted");
			return true;
		}
		session_absorb_analysis(s);
		double now = now_seconds(), ms = 200;

		if (budget >= 0 && now - start >= budget)
			return false; /* the nearest timeout is due */
		if (s->cfg->timeout > 0 && now - s->t0 >= s->cfg->timeout) {
			if (open)
				session_fail(s, FAIL_SLOW, NULL,
					     "the run waited %g s (--timeout) "
					     "with nothing left to run but T%d, "
					     "which waits on a socket listening "
					     "on the machine (only a client "
					     "outside the program can still "
					     "connect); raise --timeout",
					     s->cfg->timeout, who);
			else
				session_fail(s, FAIL_SLOW, NULL,
				     "the run waited %g s (--timeout) for the "
				     "world outside the program (T%d waits on a "
				     "%s); raise --timeout",
				     s->cfg->timeout, who,
				     sem ? "SysV semaphore set or message "
					   "queue found by its key, which "
					   "another process may post or send to"
				     : fifo ? "FIFO's open, whose other end "
					      "only a process outside the "
					      "program can still open"
					    : "descriptor only another process, "
					      "a server or a terminal can make "
					      "ready");
			return true;
		}
		if (budget >= 0 && (budget - (now - start)) * 1000 < ms)
			ms = (budget - (now - start)) * 1000;
		if (s->cfg->timeout > 0 &&
		    (s->cfg->timeout - (now - s->t0)) * 1000 < ms)
			ms = (s->cfg->timeout - (now - s->t0)) * 1000;
		if (flk && ms > 20)
			ms = 20; /* no descriptor says when a flock is free,
				  * a semaphore posted or a FIFO opened */
		if (poll(p, (nfds_t)n, ms < 1 ? 1 : (int)ms) > 0)
			return true;
		for (int i = 0; flk && i < s->nth; i++) {
			struct thread *t = &s->th[i];

			if (t->st == SCHED_BLOCKED && t->block == BLOCK_FD &&
			    ((waits_lock(t) && flock_ready(t, 0)) ||
			     (waits_sem(t) && sem_ready(t)) ||
			     (waits_fifo(t) && fifo_ready(s, t, true))))
				return true;
		}
	}
}

/* Choose and execute pending operations until some thread runs. */
/* The strategy's decision at c (its single hook's word on a lone
 * alternative): the alternative's index, or -1 after failing the run when
 * the schedule cannot be followed. */
static int decide(struct session *s, struct choice *c)
{
	int pick = c->nalts == 1 ? 0 : session_pick(s, c);

	if (c->nalts == 1 && s->strat->single) {
		c->step = (uint32_t)s->step;
		c->preemptions = s->preemptions;
		if (!s->strat->single(s->strat->ctx, c))
			pick = -1;
	}
	if (pick < 0) {
		note_prune(s);
		session_fail(s, FAIL_DIVERGED, NULL,
			     "the schedule could not be followed at step %llu",
			     (unsigned long long)s->step);
	}
	return pick;
}

/* t takes the step it was chosen for (preempt: at a preemption's cost;
 * decided: among two or more): its event, told to the strategy and the
 * observer, the step counted, the virtual clock a quantum on unless the
 * program's agent advanced it already, t the running thread. */
static void take_step(struct session *s, struct thread *t, bool preempt,
		      bool decided, bool clock)
{
	record_event(s, t, preempt, decided);
	wake_spinners(s, t);
	if (s->strat->executed && s->nev)
		s->strat->executed(s->strat->ctx, &s->ev[s->nev - 1]);
	if (s->cfg->observer) {
		thread_observe_step(s, t);
		observe_sync(s, t);
	}
	s->step++;
	s->step_wall = now_seconds();
	if (clock)
		s->now += s->quantum;
	t->ran_at = s->now + 1;
	s->spin_len = t->yield ? s->spin_len + 1 : 0;
	if (s->current != t->idx) {
		s->switches++;
		s->run_len = 0;
		if (t->p->ndormant)
			bp_wake_dormant(t->p, t->idx);
	}
	s->run_len++;
	s->resume_time = now_seconds();
	/* spin detection samples the CPU clock (a syscall) only once the
	 * step has taken spin_ms of wall time: check_limits */
	s->resume_cpu = -1;
	s->current = t->idx;
}

/* Threads blocked on descriptors that are ready now can run. */
static void wake_ready_fds(struct session *s)
{
	if (s->nfifo_bridge)
		fifo_settle(s); /* a promised open's thread gone */
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st == SCHED_BLOCKED &&
		    (t->block == BLOCK_FD || t->block == BLOCK_POLL) &&
		    syscall_fd_ready(s, t)) {
			t->st = SCHED_ENABLED;
			t->block = BLOCK_NONE;
			t->timed = false;
		}
	}
}

static void schedule(struct session *s)
{
	struct sched_thread *st = malloc((size_t)(s->nth + 1) * sizeof(*st));
	struct choice *c = malloc(sizeof(*c));
	bool sig_forced = false;
	int idle_fired = 0; /* timers fired in a row while nobody ran */

	if (!st || !c)
		goto out_free;
	for (;;) {
		if (s->failed || s->ended)
			break;
		/* a new thread must have reached its first stop */
		for (int i = 0; i < s->nth; i++) {
			pid_t w;
			int status;

			while (s->th[i].starting && !s->ended && !s->failed) {
				if (wait_any(s, s->th[i].tid, &w, &status))
					break;
				on_status(s, w, status);
			}
		}
		st = realloc(st, (size_t)(s->nth + 1) * sizeof(*st));
		if (!st)
			break;
		wake_ready_fds(s);
		/*
		 * A wait for children none of whom can be reported blocks
		 * now: taking it later would block the same way until a
		 * child dies, stops or continues, so it is no alternative
		 * (a shell waiting for its child multiplied the schedules).
		 */
		for (int i = 0; i < s->nth && !s->cfg->free_children; i++) {
			struct thread *t = &s->th[i];

			if (t->st == SCHED_ENABLED && t->kind == OP_WAIT4 &&
			    !t->wait_nohang && process_wait_blocks(s, t)) {
				t->st = SCHED_BLOCKED;
				t->block = BLOCK_WAIT;
				t->timed = false;
			}
		}
		/* a signal sent since the last choice may end a wait (a
		 * child's end: its SIGCHLD), which is work to do before time
		 * may jump to a timer; then a timer may end a wait too */
		signal_recheck(s, false);
		int fired = timer_tick(s);

		/* a timerfd that came due may be what a reader or a poll
		 * waits for: before, a reader blocked on a 2 ms timerfd
		 * beside main's 3 s sem_timedwait stayed blocked, and main's
		 * timeout, the only alternative left, failed a correct
		 * program at bound 0
		 * (tests/targets/timerfd_beside_a_timed_wait.c) */
		if (fired)
			wake_ready_fds(s);
		signal_recheck(s, false);
		drop_lifts_if_contended(s);
		/* a choice is made only while every thread is stopped: one
		 * still running would be offered as able to run its pending
		 * operation (build_sched), which it has not reached.  Never
		 * seen (the whole suite, logged); if it ever happens the run
		 * is ptloom's error, never a verdict */
		for (int i = 0; i < s->nth && !s->failed; i++)
			if (!s->th[i].starting &&
			    s->th[i].st == SCHED_RUNNING)
				session_fail(s, FAIL_INTERNAL, &s->th[i],
					     "internal error: T%d runs while "
					     "the next thread is chosen", i);
		if (s->failed)
			break;
		build_sched(s, st);
		sched_alternatives(st, s->nth, s->current, c);
		timer_alternatives(s, c);
		if (c->nalts >= MAX_ALTS) {
			/* full: threads (or timers) beyond it were not
			 * offered (tracer/sched.c add) */
			int able = 0;

			for (int i = 0; i < s->nth; i++)
				able += st[i].state == SCHED_ENABLED;
			session_note_capped(s, able > c->nalts ? able
							       : c->nalts);
		}
		if (c->nalts == 0 && fired && idle_fired++ < 64) {
			/* time jumped to a timer: did it wake anyone? */
			signal_recheck(s, true);
			continue;
		}
		if (c->nalts)
			idle_fired = 0;
		if (c->nalts == 0 && !sig_forced) {
			/* before calling it a deadlock: any signal at all? */
			sig_forced = true;
			signal_recheck(s, true);
			continue;
		}
		/* processes held at their exec (test-suite mode): let go
		 * those the watcher is done with; wait for one when nothing
		 * else can run */
		bool only_timeouts = true;

		for (int i = 0; i < c->nalts; i++)
			only_timeouts &= c->alts[i].timeout;
		/* (a held process would run natively: time does not jump to
		 * a timeout past it, which would end a runner's wait for the
		 * test as a timeout of the test) */
		if (s->nheld && release_held(s, c->nalts == 0 ||
						      only_timeouts)) {
			sig_forced = false;
			continue;
		}
		if (only_timeouts && outside_wait(s, c, false)) {
			sig_forced = false;
			continue;
		}
		if (session_policy_active(s) && s->cfg->policy->shape &&
		    c->nalts) {
			c->step = (uint32_t)s->step;
			c->preemptions = s->preemptions;
			s->cfg->policy->shape(s->cfg->policy->ctx, s, c);
		}
		if (c->nalts == 0) {
			bool alive = false;

			for (int i = 0; i < s->nth; i++)
				alive |= s->th[i].st != SCHED_DEAD;
			if (!alive)
				break; /* the leader's exit follows */
			if (s->nfreep && s->cfg->free_children) {
				/* a child process may still make a descriptor
				 * ready: let real time pass */
				usleep(1000);
				s->sig_maybe = true; /* SIGCHLD, ... */
				int status;
				pid_t w = waitpid(-1, &status, __WALL | WNOHANG);

				if (w > 0)
					on_status(s, w, status);
				session_absorb_analysis(s);
				if (s->cfg->timeout > 0 &&
				    now_seconds() - s->t0 > s->cfg->timeout &&
				    timeout_reached(s)) {
					session_fail(s, s->timeout_kind, NULL,
						     "%s", s->timeout_why);
					break;
				}
				continue;
			}
			/* a wait on a listening socket of the program's
			 * alone: a client outside may still connect */
			if (outside_wait(s, c, true)) {
				sig_forced = false;
				continue;
			}
			deadlock(s);
			break;
		}
		if (s->cfg->stop_at && s->step == s->cfg->stop_step) {
			session_hand_over(s); /* replay --gdb */
			break;
		}
		sig_forced = false;
		int pick = decide(s, c);

		if (pick < 0)
			break;
		struct alt a = c->alts[pick];
		struct thread *t = &s->th[a.thread];

		if (a.cost)
			s->preemptions++;
		if (a.timeout == ALT_BUFFER) {
			/* its store enters its store buffer (tso.c) */
			t->fn = TSO_BUFFERED;
			take_step(s, t, a.cost, c->nalts > 1, true);
			if (s->cfg->max_steps && s->step > s->cfg->max_steps &&
			    too_many_steps(s, t))
				break;
			if (tso_buffer(s, t) == TSO_POINT) {
				s->need_schedule = false; /* it is this */
				continue;
			}
			resume(s, t, 0);
			break;
		}
		if (a.timeout && a.kind == OP_TIMER) {
			/* a timer fires; nobody runs yet */
			struct event e = {
				.kind = OP_TIMER,
				.obj = a.obj,
				.arg = timer_fire_alt(s, &a),
			};

			push_event(s, t, &e, a.cost, c->nalts > 1);
			if (s->strat->executed)
				s->strat->executed(s->strat->ctx,
						   &s->ev[s->nev - 1]);
			s->step++;
			if (s->cfg->max_steps && s->step > s->cfg->max_steps &&
			    too_many_steps(s, t))
				break;
			continue;
		}
		if (a.timeout) {
			futex_remove(&s->ft, t->idx);
			if (t->block == BLOCK_POLL)
				syscall_poll_timed_out(t);
			syscall_close_fds(t);
			if (t->deadline > s->now)
				s->now = t->deadline;
			thread_make_ready(s, t, OP_TIMEOUT, t->timeout_result);
		}
		take_step(s, t, a.cost, c->nalts > 1, true);
		if (s->cfg->max_steps && s->step > s->cfg->max_steps &&
		    too_many_steps(s, t))
			break;
		bool runs = true, shm_fork;

		lift_when_alone(s, t);
		switch (t->kind) {
		case OP_CLONE:
			/* the first thread of a process: now choices exist
			 * inside it; or a thread or process after the
			 * breakpoints were lifted; or a fork of a process
			 * with writable shared memory: the processes share
			 * it, as threads would (points and race discovery's
			 * observation in each of them, one thread or not) */
			shm_fork = !t->clone_thread && !t->fork_return &&
				   process_shm_refresh(s, t->p);
			if (shm_fork && session_policy_process(s, t->p) &&
			    shares_data(t->p))
				s->py_shared++;
			if ((t->clone_thread || t->p->bps_lifted ||
			     shm_fork) &&
			    !t->p->bps_installed &&
			    bp_install(s, t->p) == -ENOENT)
				session_fail(s, FAIL_UNSUPPORTED, t,
					     "%s is not mapped in the program "
					     "at its %s: the scheduling "
					     "policy's points are in it",
					     t->p->pimg->object,
					     shm_fork ? "fork" : "first thread");
			if (t->clone_vm && !t->fork_return)
				s->shared_vm++;
			if (t->p->idx == 0)
				collect_objects(s, t->p);
			if (t->clone_thread && !s->from_checkpoint)
				note_exe(s, t->p);
			if (!t->fork_return)
				thread_clone_same_tid(s, t);
			break;
		case OP_CALL:
			t->last_fn = t->fn;
			t->last_obj = t->obj;
			t->last_site = t->pc;
			break;
		case OP_EXIT_GROUP:
			tso_drain_process(s, t->p);
			if (t->p->idx == 0)
				collect_objects(s, t->p);
			session_symbolize_process(s, t->p);
			if (s->cfg->observer && s->cfg->observer->alive) {
				drop_symbols(s); /* it attaches its own */
				s->cfg->observer->alive(s->cfg->observer->ctx,
							t->p->pid);
			}
			if (t->arg != 0 && t->p->idx > 0 && !s->child_sig &&
			    !s->child_status) {
				s->child_thread = t->idx;
				s->child_sig = 0;
				s->child_status = (int)(t->arg & 0xff);
				session_where(s, t, s->child_where,
					      sizeof(s->child_where));
				process_thread_label(s, t, s->child_label,
						     sizeof(s->child_label));
			} else if (t->arg != 0) {
				s->exit_thread = t->idx;
				session_where(s, t, s->exit_where,
					      sizeof(s->exit_where));
				/* past main, the first user frame is _start */
				if (!strncmp(s->exit_where, "_start", 6) ||
				    !s->exit_where[0])
					snprintf(s->exit_where,
						 sizeof(s->exit_where),
						 "return from main");
			}
			break;
		case OP_WOKEN:
			/* the kernel runs the call, with a signal pending: a
			 * FIFO's open that can complete does (fifo_go), as a
			 * partnered sleeper's does */
			if (waits_fifo(t) && fifo_ready(s, t, false))
				fifo_go(s, t);
			if (!t->sig_rerun) {
				syscall_close_fds(t);
				break;
			}
			t->sig_rerun = false;
			if (!signal_deliverable(s, t) &&
			    !(t->sig_block == BLOCK_FD &&
			      syscall_fd_ready(s, t))) {
				if (t->sig_block == BLOCK_FUTEX) {
					/* another thread took the signal: the
					 * wait starts again (met at its
					 * seccomp stop) */
					t->skip = true;
					t->result = PTLOOM_RESTART_CALL;
					break;
				}
				/* another thread took the signal: wait on; the
				 * kernel runs the call once it can return */
				t->st = SCHED_BLOCKED;
				t->block = t->sig_block;
				t->timed = t->sig_timed;
				t->skip = false;
				runs = false;
				break;
			}
			syscall_close_fds(t);
			break;
		case OP_ACCESS:
			/* a plain read-modify-write: its load now, its store
			 * is the next point (bp.c) */
			if (bp_split_rmw(t))
				runs = false;
			break;
		case OP_EXIT:
			robust_release(s, t);
			break;
		case OP_START:
		case OP_TIMEOUT:
		case OP_ATOMIC:
		case OP_SPIN:
		case OP_PYCHECK:
			break;
		default:
			runs = syscall_execute(s, t);
			/* cond_wait's futex wait returned at once: the mutex
			 * is taken again from here on (and again where the
			 * call is known to be over: observe_sync) */
			if (runs && t->kind == OP_FUTEX_WAIT && t->relock &&
			    s->cfg->observer)
				s->cfg->observer->sync(s->cfg->observer->ctx,
						       t->idx, SYNC_ACQUIRE,
						       t->relock, -1);
		}
		if (!runs) {
			/* it blocked: pick again (a signal pending for it
			 * ends the wait at once) */
			signal_recheck_blocked(s, t);
			continue;
		}
		/* an access while its stores are buffered: run under the
		 * buffer, up to its next load or the drain (tso.c) */
		if (t->tso_window && tso_step(s, t) == TSO_POINT) {
			s->need_schedule = false; /* it is this */
			continue;
		}
		if (session_policy_process(s, t->p) &&
		    s->cfg->policy->resume)
			s->cfg->policy->resume(s->cfg->policy->ctx, s, t->idx);
		/* what t did may have made another thread able to run (a
		 * futex wake): the points lifted while t was alone trap
		 * again before t runs on through them.  Before, they came
		 * back at the next choice only, and t's next instruction
		 * points until its next call were no choices (atomics and
		 * racy accesses after a condition variable's signal) */
		drop_lifts_if_contended(s);
		resume(s, t, 0);
		if (t->kind == OP_EXIT && t->tid == t->p->pid &&
		    !last_of_process(s, t)) {
			/* the leader's exit is reported only with the last
			 * thread's; it no longer runs.  (The last thread's
			 * own exit is its process's end, which comes next:
			 * a fork child ending with SYS_exit, a clone()'s
			 * function returning, was marked dead here, and its
			 * parent's wait a deadlock) */
			t->st = SCHED_DEAD;
			continue;
		}
		break;
	}
out_free:
	free(st);
	free(c);
}

/*
 * How many points t, about to run while other threads could, may pass
 * without a stop because the strategy knows it would choose t at each
 * (struct strategy.known): the alternatives are what they are now, with
 * t's next call in its place, as long as nothing but t changes: every
 * other thread waits without a descriptor, and with a deadline only
 * with its timeout offered already (a strategy whose
 * hook knows its timeouts: random and PCT draw them, dfs and replay
 * follow recorded ones), or can run and neither yields nor spins (a
 * step of t could wake a spinner); no timer;
 * no state key wanted (it reads memory at the choice); t's points are
 * not passive ones (agent.c leaves trylocks to stops: spin recognition
 * may make t yield) and stay short of the fairness yield.  0: none.
 */
uint64_t session_known_budget(struct session *s, struct thread *t)
{
	struct sched_thread *st;
	struct choice *c;
	uint64_t n = 0;

	if (!s->strat->known || s->nfreep ||
	    timer_armed(s) || t->yield || s->run_len >= FAIR_STEPS)
		return 0;
	for (int i = 0; i < s->nth; i++) {
		const struct thread *o = &s->th[i];

		if (o == t || o->st == SCHED_DEAD)
			continue;
		if (o->starting || o->yield || o->kind == OP_SPIN ||
		    o->wake_due ||
		    (o->st == SCHED_BLOCKED &&
		     (o->block == BLOCK_FD ||
		      o->block == BLOCK_POLL || o->block == BLOCK_VFORK)) ||
		    (o->st != SCHED_BLOCKED && o->st != SCHED_ENABLED))
			return 0;
	}
	st = malloc((size_t)(s->nth + 1) * sizeof(*st));
	c = malloc(sizeof(*c));
	if (st && c) {
		/* the schedule as at t's next point, where t is enabled
		 * (build_sched's horizon depends on that) */
		int was = t->st;

		t->st = SCHED_ENABLED;
		build_sched(s, st);
		t->st = was;
		st[t->idx].yield = false;
		st[t->idx].tso = false;
		/* a timed wait whose timeout is offered now stays offered
		 * while the clock advances (the horizon only admits more),
		 * so the alternatives stay these; one not offered yet could
		 * come in mid-way */
		for (int i = 0; i < s->nth; i++)
			if (i != t->idx && s->th[i].st == SCHED_BLOCKED &&
			    s->th[i].timed && !st[i].timed)
				goto out;
		sched_alternatives(st, s->nth, t->idx, c);
		timer_alternatives(s, c);
		c->step = (uint32_t)s->step;
		c->preemptions = s->preemptions;
		if (c->nalts > 1 && c->nalts < MAX_ALTS)
			n = s->strat->known(s->strat->ctx, c);
	}
out:
	free(st);
	free(c);
	if (n > FAIR_STEPS - s->run_len)
		n = FAIR_STEPS - s->run_len;
	return n;
}

/*
 * The choice at a point t passed in the program (what): t reached it
 * (thread_reach_point), and the alternatives must be t's alone or a
 * decision known in advance that picks t (asked now: the strategy's
 * `single`, `decide` and `executed` as at a stop); then the step, without
 * the clock (the slot advanced it).  false: the run ended or failed.
 */
static bool agent_take_choice(struct session *s, struct thread *t,
			      const char *what, int expect)
{
	bool need = s->need_schedule, ok = false;

	thread_reach_point(s, t);
	s->need_schedule = need; /* the choice is made here */

	struct sched_thread *st = malloc((size_t)(s->nth + 1) * sizeof(*st));
	struct choice *c = malloc(sizeof(*c));
	int pick = 0;

	if (!st || !c) {
		session_fail(s, FAIL_INTERNAL, t, "out of memory");
		goto out;
	}
	build_sched(s, st);
	sched_alternatives(st, s->nth, s->current, c);
	timer_alternatives(s, c);
	/* (more than one: a decision known in advance, asked now) */
	if (c->nalts >= 1 && c->nalts < MAX_ALTS && (pick = decide(s, c)) < 0)
		goto out;
	if (c->nalts < 1 || c->nalts >= MAX_ALTS ||
	    c->alts[pick].thread != expect || c->alts[pick].timeout) {
		session_fail(s, FAIL_INTERNAL, t,
			     "internal error: %s taken in the program had "
			     "%d alternatives and went to T%d at step %llu",
			     what, c->nalts,
			     c->nalts ? c->alts[pick].thread : -1,
			     (unsigned long long)s->step);
		goto out;
	}
	if (c->alts[pick].cost)
		s->preemptions++;
	take_step(s, &s->th[expect], c->alts[pick].cost, c->nalts > 1, false);
	lift_when_alone(s, &s->th[expect]);
	ok = true;
out:
	free(st);
	free(c);
	return ok;
}

/*
 * A point t passed in a trampoline (agent.c): the call of libc's function
 * at site with rdi and rsi, returning to ret.  What its breakpoint's stop
 * (thread.c on_breakpoint) and the choice after it (schedule) would have
 * done, in the same order; t runs on meanwhile.  The agent advanced the
 * clock by the step's quantum itself (the program may have read it since);
 * session_solo_budget() let it log only points with one alternative, or
 * known ones, which is checked here.
 */
void session_agent_point(struct session *s, struct thread *t, uint64_t site,
			 uint64_t rdi, uint64_t rsi, uint64_t ret)
{
	struct bp *b = bp_find(t->p, site);

	if (!b || s->failed || s->ended)
		return;
	s->stop_kinds[STOPK_AGENT_CALL]++;
	t->stop = STOP_BP;
	t->bp_addr = site;
	thread_call_point(t, b, rdi, rsi, ret);
	if (agent_take_choice(s, t, "a point", t->idx)) {
		t->last_fn = t->fn;
		t->last_obj = t->obj;
		t->last_site = t->pc;
	}
	t->st = SCHED_RUNNING;
	t->stop = STOP_NONE;
}

/*
 * A point t passed in the hand-off's code (agent.c): as
 * session_agent_point, but the plan's pick there is `to`, which may be
 * another thread: t then stays at its point, parked in the program, and
 * `to`, parked at its own, goes on from it (its call runs).
 */
void session_agent_handoff_point(struct session *s, struct thread *t,
				 uint64_t site, uint64_t rdi, uint64_t rsi,
				 uint64_t ret, int to)
{
	struct bp *b = bp_find(t->p, site);
	struct thread *w = to >= 0 && to < s->nth ? &s->th[to] : NULL;

	if (s->failed || s->ended)
		return;
	if (!b || !w) {
		session_fail(s, FAIL_INTERNAL, t,
			     "internal error: a hand-off point at %#llx to "
			     "T%d is no point of ptloom's",
			     (unsigned long long)site, to);
		return;
	}
	s->stop_kinds[STOPK_AGENT_CALL]++;
	t->stop = STOP_BP;
	t->bp_addr = site;
	thread_call_point(t, b, rdi, rsi, ret);
	if (!agent_take_choice(s, t, "a hand-off point", to))
		return;
	if (w == t) {
		t->last_fn = t->fn;
		t->last_obj = t->obj;
		t->last_site = t->pc;
		t->st = SCHED_RUNNING;
		t->stop = STOP_NONE;
		return;
	}
	/* t waits at its point as a stopped thread would (its registers
	 * in the page); w goes on from its own, as resume() would have
	 * sent it on from its breakpoint */
	s->stop_kinds[STOPK_AGENT_HANDOFF]++;
	t->st = SCHED_ENABLED;
	t->ho_parked = true;
	t->regs_valid = false;
	w->last_fn = w->fn;
	w->last_obj = w->obj;
	w->last_site = w->pc;
	w->st = SCHED_RUNNING;
	w->stop = STOP_NONE;
	w->ho_parked = false;
	w->sig_sent = 0;
	w->skip = false;
	w->regs_valid = false;
	s->ag_solo = w->idx;
}

/*
 * The hand-off's plan (agent.c), for t about to run while other threads
 * wait at points: the strategy's picks at t's coming points and at those
 * of whoever it picks (struct strategy.peek), up to max, each offered
 * the alternatives it would be offered then, which stay what they are
 * while every thread that can run waits at a trampolined call (a lock, an
 * unlock, a condition variable's call: not a trylock, where spin
 * recognition may make it yield) and every other one waits without a
 * deadline or a descriptor: one process, no timer, no buffered store, no
 * free child; the plan stops short of a timeout pick and of the fairness
 * yield.  Its length (0: none); picks[k] is a thread's index.
 */
int session_handoff_plan(struct session *s, struct thread *t,
			 uint16_t *picks, int max)
{
	struct sched_thread *st;
	struct choice *c;
	int others = 0, n = 0;
	bool parkable[64] = { false };

	if (!s->strat->peek || !s->strat->peek_start || s->nprocs != 1 ||
	    s->nfreep || timer_armed(s) || t->yield || t->idx >= 64 ||
	    s->run_len >= FAIR_STEPS)
		return 0;
	for (int i = 0; i < s->nth; i++) {
		struct thread *o = &s->th[i];
		struct bp *b;

		if (o == t || o->st == SCHED_DEAD)
			continue;
		if (o->starting || o->yield || o->wake_due || o->p != t->p)
			return 0;
		if (o->st == SCHED_BLOCKED) {
			if (o->timed || o->block == BLOCK_FD ||
			    o->block == BLOCK_POLL || o->block == BLOCK_VFORK)
				return 0;
			continue;
		}
		if (o->st != SCHED_ENABLED)
			return 0;
		/* one that waits at a trampolined call can be parked and
		 * picked; one stopped at another point (a futex call the
		 * supervisor carries out) only stays what it is: the plan
		 * ends where it would be picked */
		if (i < 64 && o->kind == OP_CALL && !call_fn_passive(o->fn) &&
		    o->stop == STOP_BP && !o->skip && !o->sig_sent &&
		    !o->ho_resend &&
		    (b = bp_find(o->p, o->bp_addr)) && b->tramp)
			parkable[i] = true;
		else if (o->ho_parked)
			return 0;
		others += i < 64 && parkable[i];
	}
	if (!others)
		return 0;
	/* a stop must be at --max-steps and at replay --gdb's step */
	max = (int)session_steps_before_stop(s, (uint64_t)max);
	st = malloc((size_t)(s->nth + 1) * sizeof(*st));
	c = malloc(sizeof(*c));
	if (st && c) {
		int was = t->st, cur = t->idx;
		uint64_t run_len = (uint64_t)s->run_len;
		uint64_t state = s->strat->peek_start(s->strat->ctx);

		t->st = SCHED_ENABLED;
		build_sched(s, st);
		t->st = was;
		st[t->idx].yield = false;
		st[t->idx].tso = false;
		for (int i = 0; i < s->nth; i++)
			if (st[i].tso || st[i].timed || st[i].yield)
				goto out;
		for (; n < max && run_len < FAIR_STEPS; n++) {
			int pick;

			sched_alternatives(st, s->nth, cur, c);
			timer_alternatives(s, c);
			c->step = (uint32_t)(s->step + (uint64_t)n);
			c->preemptions = s->preemptions;
			if (c->nalts < 1 || c->nalts >= MAX_ALTS)
				break;
			pick = c->nalts == 1 ? 0
					     : s->strat->peek(s->strat->ctx, c,
							      &state);
			if (pick < 0 || c->alts[pick].timeout ||
			    (c->alts[pick].thread != t->idx &&
			     (c->alts[pick].thread >= 64 ||
			      !parkable[c->alts[pick].thread])))
				break;
			picks[n] = c->alts[pick].thread;
			if (picks[n] != cur)
				run_len = 0;
			run_len++;
			cur = picks[n];
		}
	}
out:
	free(st);
	free(c);
	return n;
}

/*
 * A futex wake t passed in a futex slot (tramp.h): what its seccomp stop
 * (thread.c on_stop, syscall.c) and the choice and execution after it
 * (schedule) would have done, with the registers the stop would have
 * seen; t runs on meanwhile, with the slot's answer, which must be the
 * emulation's.  The slot advanced the clock.
 */
void session_agent_futex(struct session *s, struct thread *t, uint64_t site,
			 uint64_t rdi, uint64_t rsi, uint64_t rdx, int answer)
{
	struct user_regs_struct keep = t->regs;
	bool valid = t->regs_valid, dirty = t->regs_dirty;

	if (s->failed || s->ended)
		return;
	s->stop_kinds[STOPK_AGENT_FUTEX]++;
	memset(&t->regs, 0, sizeof(t->regs));
	t->regs.orig_rax = SYS_futex;
	t->regs.rax = (uint64_t)-ENOSYS;
	t->regs.rdi = rdi;
	t->regs.rsi = rsi;
	t->regs.rdx = rdx;
	t->regs.rip = t->regs.rcx = site + TRAMP_FUTEX_LEN;
	t->regs_valid = true;
	t->regs_dirty = false;
	t->stop = STOP_SECCOMP;
	if (!syscall_enter(s, t) || t->kind != OP_FUTEX_WAKE)
		session_fail(s, FAIL_INTERNAL, t,
			     "internal error: a futex wake taken in the program "
			     "was no point");
	else if (agent_take_choice(s, t, "a futex wake", t->idx) &&
		 (!syscall_execute(s, t) || !t->skip || t->result != answer))
		session_fail(s, FAIL_INTERNAL, t,
			     "internal error: a futex wake taken in the program "
			     "answered %d, the emulation %lld",
			     answer, (long long)t->result);
	t->skip = false;
	t->regs = keep;
	t->regs_valid = valid;
	t->regs_dirty = dirty;
	t->st = SCHED_RUNNING;
	t->stop = STOP_NONE;
}

static void read_output(struct session *s)
{
	struct run_result *r = s->res;
	size_t max = s->cfg->output_max ? s->cfg->output_max
					: DEFAULT_OUTPUT_MAX;
	off_t end;

	if (s->outfd < 0 || (end = lseek(s->outfd, 0, SEEK_END)) <= 0)
		return;
	off_t start = (size_t)end > max ? end - (off_t)max : 0;

	r->output = malloc((size_t)(end - start) + 1);
	if (!r->output)
		return;
	ssize_t n = pread(s->outfd, r->output, (size_t)(end - start), start);

	r->output_len = n > 0 ? (size_t)n : 0;
	r->output_total = (uint64_t)end;
	r->output[r->output_len] = 0;
}

static void conclude(struct session *s)
{
	struct run_result *r = s->res;

	if (s->handed_over)
		return;
	if (s->cfg->interrupted && *s->cfg->interrupted &&
	    (!s->failed || r->failure == FAIL_INTERNAL)) {
		/* ptloom was told to stop and killed the program itself; an
		 * internal error on the way (a wait the signal cut short: a
		 * fork checkpoint's template forking) is the interrupt's */
		r->failure = FAIL_INTERRUPTED;
		snprintf(r->message, sizeof(r->message), "interrupted");
		return;
	}
	if (s->failed)
		return;
	if (r->signal == SIGKILL && !s->self_kill) {
		/* the program never sent it: another process or the OOM
		 * killer did, which says nothing about the program */
		r->failure = FAIL_KILLED;
		snprintf(r->message, sizeof(r->message),
			 "killed from outside ptloom (SIGKILL)");
	} else if (r->signal) {
		r->failure = FAIL_CRASH;
		if (s->fatal_sig == r->signal) {
			r->thread = s->fatal_thread;
			snprintf(r->location, sizeof(r->location), "%s",
				 s->fatal_where);
		}
		snprintf(r->message, sizeof(r->message), "killed by SIG%s",
			 sigabbrev_np(r->signal) ? sigabbrev_np(r->signal)
						 : "?");
	} else if (r->exit_status) {
		r->failure = FAIL_EXIT;
		r->thread = s->exit_thread;
		snprintf(r->location, sizeof(r->location), "%s",
			 s->exit_where);
		snprintf(r->message, sizeof(r->message), "exit status %d",
			 r->exit_status);
	}
	if (r->failure && (s->child_sig || s->child_status)) {
		/*
		 * A runner (a shell, make, a test driver) failed after one of
		 * its processes crashed or failed: name that process, the
		 * runner's own code is rarely the interesting place.
		 */
		char what[64];

		if (s->child_sig)
			snprintf(what, sizeof(what), "killed by SIG%s",
				 sigabbrev_np(s->child_sig)
					 ? sigabbrev_np(s->child_sig)
					 : "?");
		else
			snprintf(what, sizeof(what), "exit status %d",
				 s->child_status);
		r->thread = s->child_thread;
		snprintf(r->thread_label, sizeof(r->thread_label), "%s",
			 s->child_label);
		snprintf(r->location, sizeof(r->location), "%s",
			 s->child_where);
		snprintf(r->message, sizeof(r->message), "%s: %s",
			 s->child_label, what);
	}
}

/* ", P1 name" onto the list b of cap bytes, if it fits. */
static void list_process(char *b, size_t cap, const struct process *p)
{
	size_t k = strlen(b);

	if (k + strlen(p->comm) + 8 < cap)
		snprintf(b + k, cap - k, "%sP%d %s", k ? ", " : "", p->idx,
			 p->comm);
}

/* P0 ended by itself (its exit, a signal) while others of its tree still
 * ran: name them (run_result.outlived). */
static void note_outlived(struct session *s)
{
	char *b = s->res->outlived;

	b[0] = 0;
	if (!s->leader_reaped || s->handed_over)
		return;
	for (int i = 1; i < s->nprocs; i++)
		if (!s->procs[i]->dead)
			list_process(b, sizeof(s->res->outlived), s->procs[i]);
	if (b[0])
		symbolize_trace(s); /* their code, before they are killed */
}

static int run_once(const struct session_config *cfg, struct strategy *strat,
		    struct run_result *res, bool *again)
{
	struct session s_, *s = &s_;
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } }, old_it;
	pid_t tid;
	int status, r;

	memset(res, 0, sizeof(*res));
	res->thread = -1;
	res->id_refused_thread = -1;
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->strat = strat;
	s->res = res;
	s->current = 0;
	s->child_thread = -1;
	s->now = MONOTONIC_BASE_NS;
	s->realtime_base = (cfg->clock_realtime_ns >= CLOCK_REALTIME_MIN_NS &&
					    cfg->clock_realtime_ns <=
						    CLOCK_REALTIME_MAX_NS
				    ? cfg->clock_realtime_ns
				    : CLOCK_REALTIME_DEFAULT_NS) -
			   MONOTONIC_BASE_NS;
	s->quantum = cfg->clock_quantum_ns ? cfg->clock_quantum_ns
					   : DEFAULT_QUANTUM_NS;
	s->rng = cfg->seed ^ 0x5054204c4f4f4dull;
	s->hash = 0xcbf29ce484222325ull;
	s->fatal_thread = -1;
	s->exit_thread = -1;
	s->spin_ms = cfg->spin_ms;
	/* (tests: spin probes as often as this, which must change nothing
	 * a run does) */
	const char *look = getenv("PTLOOM_SPIN_LOOK_MS");

	if (s->spin_ms > 0 && look && atoi(look) > 0)
		s->spin_ms = atoi(look);
	s->ag_solo = -1;
	futex_init(&s->ft);
	if (cfg->policy && cfg->policy->begin)
		cfg->policy->begin(cfg->policy->ctx);
	s->t0 = now_seconds();
	s->self_cpu0 = self_cpu_seconds();
	s->resume_time = s->step_wall = s->t0;
	s->resume_cpu = 0;
	bp_analysis_seconds(&s->analysis_wall, &s->analysis_cpu);
	if (!cfg->checkpoint || checkpoint_start(s)) {
		s->outfd = cfg->pass_output
				   ? -1
				   : memfd_create("ptloom-output", MFD_CLOEXEC);
		r = spawn_program(cfg, s->outfd,
				  tracer_may_set_ids() ? thread_id_to_ask(s, 0)
						       : 0,
				  &s->pid);
		if (r) {
			if (s->outfd >= 0)
				close(s->outfd);
			return r;
		}
		struct process *p0 = process_new(s, s->pid, NULL);
		struct thread *t0 =
			p0 ? session_new_thread(s, s->pid, p0) : NULL;

		if (!t0) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, &status, __WALL);
			spawn_unregister(s->pid);
			if (s->outfd >= 0)
				close(s->outfd);
			free(s->procs);
			return -ENOMEM;
		}
	}
	thread_note_id(s, 0, s->pid);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_sa);
	setitimer(ITIMER_REAL, &it, &old_it);

	while (!s->ended && !s->failed) {
		if (s->need_schedule) {
			s->need_schedule = false;
			schedule(s);
			continue;
		}
		r = wait_any(s, -1, &tid, &status);
		if (r == -ETIMEDOUT) {
			struct thread *c = s->current >= 0 &&
							   s->current < s->nth
						   ? &s->th[s->current]
						   : NULL;

			if (c && c->st == SCHED_RUNNING) {
				/* stop it to say where it spins */
				syscall(SYS_tgkill, c->p->pid, c->tid, SIGSTOP);
				alarm_ticks = 0;
				while (waitpid(c->tid, &status, __WALL) < 0 &&
				       errno == EINTR && alarm_ticks < 10)
					;
				if (WIFSTOPPED(status))
					c->st = SCHED_ENABLED;
			}
			session_fail(s, s->timeout_kind, c, "%s",
				     s->timeout_why);
			break;
		}
		if (r == -EAGAIN) {
			/* a thread runs on without reaching a scheduling
			 * point: say where it spins, the explorer makes that a
			 * yield point and starts again */
			struct thread *c = &s->th[s->current];

			if (getenv("PTLOOM_DEBUG_SPIN")) {
				char nm[64], buf[256] = "";

				snprintf(nm, sizeof(nm), "/proc/%d/stat", c->tid);
				FILE *f = fopen(nm, "r");

				if (f) {
					if (!fgets(buf, sizeof(buf), f))
						buf[0] = 0;
					fclose(f);
				}
				fprintf(stderr, "spin? T%d stat: %.60s\n", c->idx,
					buf);
			}
			syscall(SYS_tgkill, c->p->pid, c->tid, SIGSTOP);
			c->own_sigstop = true;
			if (wait_task(c->tid, &status) != c->tid) {
				/* gone: its death comes to this loop */
				s->resume_time = now_seconds();
				continue;
			}
			c->regs_valid = false;
			if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP ||
			    (status >> 16)) {
				/* it reached a stop of its own first: handle
				 * that; the SIGSTOP is suppressed later */
				s->resume_time = now_seconds();
				on_status(s, c->tid, status);
				continue;
			}
			c->own_sigstop = false; /* taken here */
			/* a stop like any other first: what the agent
			 * logged before it is taken (the probe may observe
			 * t's next accesses), a slot's sequence put back */
			agent_stopped(s, c->tid, status);
			regs_set(c);
			/* evidence, not time: is it a spin another thread
			 * could end, or a computation? */
			uint64_t pc = 0;
			int v = spin_probe(s, c, &pc, &status);

			c->regs_valid = false;
			if (v == SPIN_EVENT) {
				s->resume_time = now_seconds();
				on_status(s, c->tid, status);
				continue;
			}
			if (v != SPIN_LOOP) {
				/* computing: let it go on, look again later
				 * (and less often) */
				if (s->spin_ms < 1600)
					s->spin_ms *= 2;
				s->resume_time = now_seconds();
				s->resume_cpu = process_cpu(s->pid);
				if (v == SPIN_COMPUTE)
					resume_running(s, c);
				continue;
			}
			res->spin_pc = pc;
			if (getenv("PTLOOM_DEBUG_SPIN"))
				fprintf(stderr, "spin: T%d at 0x%llx after %.3f s, "
					"step %llu\n", c->idx,
					(unsigned long long)res->spin_pc,
					now_seconds() - s->resume_time,
					(unsigned long long)s->step);
			session_fail(s, FAIL_SPIN, NULL,
				     "T%d runs without a scheduling point at "
				     "0x%llx",
				     c->idx, (unsigned long long)res->spin_pc);
			break;
		}
		if (r == -EINTR) {
			session_fail(s, FAIL_INTERRUPTED, NULL, "interrupted");
			break;
		}
		if (r) {
			s->ended = true;
			break;
		}
		on_status(s, tid, status);
	}
	conclude(s);
	if ((res->ids = calloc((size_t)s->nth + 1, sizeof(*res->ids)))) {
		for (int i = 0; i < s->nth; i++)
			res->ids[i] = s->th[i].tid;
		res->nids = s->nth;
	}
	/* names of other processes' threads go into the schedule file, and
	 * a policy's (Python threading names); a tree's threads by process
	 * also when it passed (the minimiser maps one run's T-numbers to
	 * another's by process) */
	if ((s->failed || s->nprocs > 1 ||
	     (res->failure && session_policy_active(s))) &&
	    !res->nthreads && !s->pruned)
		report_threads(s);
	if (s->sym_pid)
		drop_symbols(s);
	note_outlived(s);
	kill_and_reap(s);
	setitimer(ITIMER_REAL, &old_it, NULL);
	sigaction(SIGALRM, &old_sa, NULL);

	read_output(s);
	describe_output_failure(s);
	if ((res->failure == FAIL_CRASH ||
	     (res->failure == FAIL_EXIT && s->child_sig)) &&
	    res->output_len) {
		/* abort() and assert() say why on stderr: the last line */
		size_t e = res->output_len;

		while (e && (res->output[e - 1] == '\n' ||
			     res->output[e - 1] == '\r'))
			e--;
		size_t b = e;

		while (b && res->output[b - 1] != '\n')
			b--;
		if (e > b && (res->signal == SIGABRT || s->child_sig == SIGABRT ||
			      memmem(res->output + b, e - b, "ssert", 5)))
			snprintf(res->message, sizeof(res->message), "%.*s",
				 (int)(e - b), res->output + b);
	}
	if (session_policy_active(s) && cfg->policy->conclude)
		cfg->policy->conclude(cfg->policy->ctx, res);
	/* under a policy: the processes it applied to (at any time of the
	 * run) and those that kept C-level points */
	for (int i = 0; session_policy_active(s) && i < s->nprocs; i++) {
		struct process *p = s->procs[i];
		/* exec'd an interpreter, or is one at the end (a fork
		 * that runs on in Python, not one that exec'd a test);
		 * C-level: any other, and an interpreter that exec'd a
		 * native program (in both lists) */
		bool pl = p->ever_policy || p->pimg;
		bool cl = !pl || p->ever_c;

		if (pl)
			list_process(res->plevel, sizeof(res->plevel), p);
		if (cl)
			list_process(res->clevel, sizeof(res->clevel), p);
	}
	if (getenv("PTLOOM_DEBUG_EVENTS")) {
		for (size_t i = 0; i < s->nev; i++)
			fprintf(stderr, "ev %u T%u k%u f%u o%llx pc%llx a%lld\n",
				s->ev[i].step, s->ev[i].thread, s->ev[i].kind,
				s->ev[i].fn, (unsigned long long)s->ev[i].obj,
				(unsigned long long)s->ev[i].pc,
				(long long)s->ev[i].arg);
		fprintf(stderr, "end h%llx steps %llu\n",
			(unsigned long long)s->hash,
			(unsigned long long)s->step);
	}
	res->events = s->ev;
	res->nevents = s->nev;
	res->decisions = s->dec;
	res->ndecisions = s->ndec;
	res->preemptions = s->preemptions;
	res->trace_hash = s->hash;
	res->steps = s->step;
	res->capped = s->capped;
	res->capped_most = s->capped_most;
	res->shared_vm = s->shared_vm;
	res->shared_apart = s->shared_apart;
	res->stack_shared = s->stack_shared;
	res->late_objects = s->late_objects;
	memcpy(res->late_object, s->late_object, sizeof(res->late_object));
	res->watch_capped = s->watch_capped;
	res->py_shared = s->py_shared;
	res->stops = s->stops;
	memcpy(res->stop_kinds, s->stop_kinds, sizeof(res->stop_kinds));
	res->choices = s->choices;
	res->state_keys = s->state_keys;
	res->time_used = s->time_used;
	session_absorb_analysis(s);
	res->seconds = now_seconds() - s->t0;
	res->observed = s->observed;
	res->obs_stops = s->obs_stops;
	res->obs_steps = s->obs_steps;
	res->obs_sync = s->obs_sync;
	res->obs_stack = s->obs_stack;
	snprintf(res->agent_note, sizeof(res->agent_note), "%s", s->ag_note);
	if (!s->exec_seen && !s->failed) {
		char how[48] = "";

		if (s->leader_reaped && res->signal)
			snprintf(how, sizeof(how),
				 " (killed by SIG%s before its exec)",
				 sigabbrev_np(res->signal) ? sigabbrev_np(res->signal)
							   : "?");
		else if (s->leader_reaped)
			snprintf(how, sizeof(how),
				 " (exit status %d before its exec)",
				 res->exit_status);
		res->failure = FAIL_INTERNAL;
		snprintf(res->message, sizeof(res->message),
			 "the program could not be started%s", how);
		/* nothing of the program ran and nothing was decided: a
		 * start the machine refused once is tried again */
		*again = s->nev == 0 && s->ndec == 0 && !res->handed_over;
	}
	for (int i = 0; i < s->nth; i++)
		syscall_close_fds(&s->th[i]);
	fifo_free(s);
	free(s->th);
	free(s->fdobj);
	process_note_last_exec(s);
	free(s->root_ctx);
	free(s->root_exe);
	free(s->root_cmd);
	free(s->root_env);
	process_free_all(s);
	timer_free(s);
	evloop_free(s);
	futex_destroy(&s->ft);
	if (s->outfd >= 0 && !s->outfd_shared)
		close(s->outfd);
	return 0;
}

/*
 * One execution.  A start that ended before the program's exec (the exec
 * or the launcher's set-up refused by the machine: seen once in CI, not
 * reproduced) is not a verdict on the program: it is tried once more.
 */
int session_run(const struct session_config *cfg, struct strategy *strat,
		struct run_result *res)
{
	bool again = false;
	int r = run_once(cfg, strat, res, &again);

	if (r == 0 && again) {
		run_result_free(res);
		again = false;
		r = run_once(cfg, strat, res, &again);
	}
	return r;
}

void run_result_free(struct run_result *res)
{
	for (int i = 0; i < res->nobjects; i++)
		free(res->objects[i]);
	free(res->objects);
	free(res->exe);
	free_strings(res->exec_argv);
	free_strings(res->exec_envp);
	for (size_t i = 0; i < res->nsyms; i++)
		free(res->syms[i].text);
	free(res->syms);
	free(res->output);
	free(res->events);
	free(res->decisions);
	free(res->threads);
	free(res->ids);
	memset(res, 0, sizeof(*res));
}
