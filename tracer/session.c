/*
 * One execution under the supervisor: the wait/dispatch loop and the
 * scheduler.  docs/INTERNALS.md tells the life of a scheduling point; in
 * short:
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

#define REALTIME_BASE_NS (1767225600ull * 1000000000ull) /* 2026-01-01 */
#define MONOTONIC_BASE_NS (1000ull * 1000000000ull)
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

static struct thread *find_thread(struct session *s, pid_t tid)
{
	/* newest first: recently created threads are the busy ones */
	for (int i = s->nth - 1; i >= 0; i--)
		if (s->th[i].tid == tid)
			return &s->th[i];
	return NULL;
}

struct thread *session_new_thread(struct session *s, pid_t tid,
				  struct process *p)
{
	if (s->nth == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		struct thread *n = realloc(s->th, (size_t)cap * sizeof(*n));

		if (!n)
			return NULL;
		s->th = n;
		s->cap = cap;
	}
	struct thread *t = &s->th[s->nth];

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->idx = s->nth++;
	t->p = p;
	t->ptidx = p->nthreads++;
	t->st = SCHED_RUNNING;
	return t;
}

static bool is_free_process(struct session *s, pid_t pid)
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

static bool take_stray(struct session *s, pid_t tid)
{
	for (int i = 0; i < s->nstray; i++)
		if (s->stray[i] == tid) {
			s->stray[i] = s->stray[--s->nstray];
			return true;
		}
	return false;
}

static void symbolize_trace(struct session *s);

/* The symbolizer looks at one process at a time. */
static void ensure_symbols(struct session *s, struct process *p)
{
	if (!s->cfg->sym || s->sym_pid == p->pid || p->dead)
		return;
	if (s->sym_pid)
		s->cfg->sym->detach(s->cfg->sym->ctx);
	s->cfg->sym->attach(s->cfg->sym->ctx, p->pid);
	s->sym_pid = p->pid;
}

static void drop_symbols(struct session *s)
{
	if (s->sym_pid)
		s->cfg->sym->detach(s->cfg->sym->ctx);
	s->sym_pid = 0;
}

/* A policy sees the program's own process, P0. */
int session_peek(struct session *s, uint64_t addr, void *buf, size_t len)
{
	if (!s->nprocs || s->procs[0]->dead)
		return -ESRCH;
	return mem_read(s->procs[0], addr, buf, len);
}

int session_poke(struct session *s, uint64_t addr, const void *buf,
		 size_t len)
{
	if (!s->nprocs || s->procs[0]->dead)
		return -ESRCH;
	return mem_write(s->procs[0], addr, buf, len);
}

int session_nthreads(struct session *s)
{
	return s->nth;
}

int session_thread_info(struct session *s, int thread,
			struct session_thread *out)
{
	if (thread < 0 || thread >= s->nth)
		return -ENOENT;
	struct thread *t = &s->th[thread];

	*out = (struct session_thread){ .tid = t->tid, .proc = t->p->idx,
					.state = t->st,
					.timed = t->st == SCHED_BLOCKED &&
						 t->timed,
					.kind = t->kind, .fn = t->fn,
					.obj = t->obj, .pc = t->pc };
	return 0;
}

/* Where a stopped thread is, in user code: "withdraw at bank.c:23" (or
 * the policy's terms: "withdraw at bank.py:8"). */
void session_where(struct session *s, struct thread *t, char *buf, size_t len)
{
	struct sched_policy *p = s->cfg->policy;

	buf[0] = 0;
	if (p && p->where && t->p->idx == 0) {
		p->where(p->ctx, s, t->idx, buf, len);
		if (buf[0])
			return;
	}
	if (!s->cfg->sym || t->p->dead)
		return;
	ensure_symbols(s, t->p);
	s->cfg->sym->location(s->cfg->sym->ctx, t->tid, buf, len);
}

static void describe_data(struct session *s, struct process *p, uint64_t addr,
			  char *buf, size_t len)
{
	if (s->cfg->sym && !p->dead) {
		ensure_symbols(s, p);
		s->cfg->sym->data(s->cfg->sym->ctx, addr, buf, len);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	}
}

void session_describe_data(struct session *s, struct process *p,
			   uint64_t addr, char *buf, size_t len)
{
	describe_data(s, p, addr, buf, len);
}

static void report_threads(struct session *s);

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
	if (t && (t->st != SCHED_RUNNING || t->stop != STOP_NONE) &&
	    t->st != SCHED_DEAD)
		session_where(s, t, r->location, sizeof(r->location));
	symbolize_trace(s);
}

void thread_make_ready(struct session *s, struct thread *t, int kind,
		       int64_t result)
{
	(void)s;
	t->st = SCHED_ENABLED;
	t->block = BLOCK_NONE;
	t->timed = false;
	t->sig_claim = 0;
	t->kind = (uint8_t)kind;
	t->fn = 0;
	t->arg = 0;
	t->obj2 = 0;
	t->futex_woken = false;
	t->yield = false;
	t->skip = true;
	t->result = result;
}

static void hash_u64(uint64_t *h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		*h ^= (v >> (8 * i)) & 0xff;
		*h *= 0x100000001b3ull;
	}
}

static void policy_locate(struct session *s, struct thread *t,
			  struct event *e);

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
		e->obj |= tag;
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

static void record_event(struct session *s, struct thread *t, bool preempt,
			 bool decided)
{
	struct event e = {
		.kind = t->kind,
		.fn = t->fn,
		.obj = t->obj,
		.pc = t->pc,
		.arg = t->arg,
	};

	push_event(s, t, &e, preempt, decided);
}

/* A policy that describes threads in its own terms (a Python frame) names
 * the event's location: the pc becomes a tagged key of run_result.syms.
 * Only when symbolising, so the trace hash (over the real pc) is the same
 * either way. */
static void policy_locate(struct session *s, struct thread *t,
			  struct event *e)
{
	struct sched_policy *p = s->cfg->policy;
	struct run_result *r = s->res;
	char buf[LOC_MAX] = "";
	uint64_t h = 0xcbf29ce484222325ull;

	if (!p || !p->where || !s->cfg->symbolize_trace)
		return;
	p->where(p->ctx, s, t->idx, buf, sizeof(buf));
	if (!buf[0])
		return;
	for (const char *c = buf; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	e->pc = EVENT_PC_POLICY | (h & 0xffffffffffffull);
	for (size_t i = 0; i < r->nsyms; i++)
		if (r->syms[i].addr == e->pc && !r->syms[i].data)
			return;
	if ((r->nsyms & (r->nsyms - 1)) == 0 || !r->syms) {
		struct sym_entry *n = realloc(
			r->syms, (r->nsyms ? r->nsyms * 2 : 16) * sizeof(*n));

		if (!n)
			return;
		r->syms = n;
	}
	r->syms[r->nsyms++] = (struct sym_entry){ e->pc, 0, strdup(buf) };
}

int session_pick(struct session *s, struct choice *c)
{
	c->step = (uint32_t)s->step;
	c->preemptions = s->preemptions;
	c->state = s->strat->want_state && c->kind == DEC_RUN
			   ? session_state_key(s)
			   : 0;
	int i = s->strat->pick(s->strat->ctx, c);

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

static bool fatal_signal(int sig);

/* Resume a stopped thread: apply a skipped syscall's result, step over a
 * breakpoint, deliver a pending signal. */
static void resume(struct session *s, struct thread *t, int sig)
{
	if (t->stop == STOP_SECCOMP && t->skip) {
		if (!regs_get(t)) {
			t->regs.orig_rax = (uint64_t)-1;
			t->regs.rax = (uint64_t)t->result;
			t->regs_dirty = true;
		}
	} else if (t->stop == STOP_BP) {
		t->stop = STOP_NONE;
		if (bp_step_over(s, t) == 0 && t->stop == STOP_SIGNAL) {
			sig = t->sig;
			/* the instruction under the breakpoint faulted */
			if (fatal_signal(sig)) {
				s->fatal_thread = t->idx;
				s->fatal_sig = sig;
				session_where(s, t, s->fatal_where,
					      sizeof(s->fatal_where));
				symbolize_trace(s);
			}
		}
	} else if (t->stop == STOP_SIGNAL && !sig) {
		sig = t->sig;
	}
	regs_set(t);
	t->skip = false;
	t->stop = STOP_NONE;
	t->regs_valid = false;
	t->st = SCHED_RUNNING;
	if (ptrace(PTRACE_CONT, t->tid, 0, sig) < 0 && errno == ESRCH)
		t->st = SCHED_DEAD; /* killed meanwhile; its exit follows */
}

static void reach_point(struct session *s, struct thread *t)
{
	/*
	 * A thread that reaches the same read or trylock on the same object
	 * again, with only reads in between and no other thread run, is
	 * spinning (a busy-wait on flags, a trylock loop): treat the point as a yield, so the others run
	 * first and the spin cannot starve them.  See tests/targets/peterson.
	 */
	bool passive = (t->kind == OP_ACCESS && !t->arg) ||
		       (t->kind == OP_CALL &&
			(t->fn == FN_MUTEX_TRYLOCK || t->fn == FN_SPIN_TRYLOCK ||
			 t->fn == FN_RWLOCK_TRYRDLOCK ||
			 t->fn == FN_RWLOCK_TRYWRLOCK ||
			 t->fn == FN_SEM_TRYWAIT || t->fn == FN_MTX_TRYLOCK));

	if (!passive || s->switches != t->spin_switch) {
		t->nspin = 0; /* it wrote, or someone else ran: progress */
		t->repeats = 0;
	}
	if (passive) {
		bool again = false;

		for (int i = 0; i < t->nspin; i++)
			again |= t->spin_ring[i].pc == t->pc &&
				 t->spin_ring[i].obj == t->obj;
		if (again) {
			if (++t->repeats >= 2)
				t->yield = true;
		} else if (t->nspin < 4) {
			t->spin_ring[t->nspin].pc = t->pc;
			t->spin_ring[t->nspin++].obj = t->obj;
		}
	}
	t->spin_switch = s->switches;
	t->st = SCHED_ENABLED;
	s->need_schedule = true;
}

/* Rewrite AT_SYSINFO_EHDR to AT_IGNORE so that glibc makes real clock
 * syscalls instead of using the vDSO. */
static void hide_vdso(struct session *s, struct thread *t)
{
	uint64_t sp, argc, w[2];

	(void)s;
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
		if (w[0] == 33 /* AT_SYSINFO_EHDR */) {
			uint64_t ignore = 1; /* AT_IGNORE */

			mem_write(t->p, sp, &ignore, 8);
		}
}

static void on_exec(struct session *s, struct thread *t)
{
	struct process *p = t->p;
	char name[64];
	struct stat sb;

	if (s->sym_pid == p->pid)
		drop_symbols(s); /* a new image */
	process_exec(s, p);
	hide_vdso(s, t);
	if (p->idx == 0)
		s->exec_seen = true;
	timer_exec(s, p->pid);
	snprintf(name, sizeof(name), "/proc/%d/exe", p->pid);
	if (p->idx > 0 && stat(name, &sb) == 0 &&
	    (sb.st_mode & (S_ISUID | S_ISGID))) {
		char label[64];

		process_thread_label(s, t, label, sizeof(label));
		session_fail(s, FAIL_UNSUPPORTED, t,
			     "unsupported: %s execs a set-user-ID or "
			     "set-group-ID program (ptloom runs it without "
			     "its privileges)",
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
static void thread_gone(struct session *s, struct thread *t);

static struct thread *exec_from_thread(struct session *s, struct thread *t)
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

static bool fatal_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	       sig == SIGILL || sig == SIGABRT || sig == SIGSYS ||
	       sig == SIGTRAP;
}

/* Stops of the program's own child processes: they run freely. */
static void free_process_stop(struct session *s, pid_t pid, int status)
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

/* A thread is gone: off every queue, its joiners woken. */
static void thread_gone(struct session *s, struct thread *t)
{
	if (t->st == SCHED_DEAD && t->block == BLOCK_NONE && !t->npfd)
		return;
	t->st = SCHED_DEAD;
	t->block = BLOCK_NONE;
	syscall_close_fds(t);
	futex_remove(&s->ft, t->idx);
	if (t->ctid && s->cfg->observer)
		s->cfg->observer->sync(s->cfg->observer->ctx, t->idx,
				       SYNC_RELEASE, t->ctid | process_tag(t->p),
				       -1);
	if (t->ctid) {
		/* The kernel cleared the tid word and woke nobody we model:
		 * wake the joiners. See tests/targets/join_many. */
		int woken;

		futex_wake_addr(s, t->ctid ^ ((uint64_t)t->p->idx << 48),
				INT_MAX, ~0u, &woken);
	}
}

static void on_status(struct session *s, pid_t tid, int status);

/* The leader of a process other than P0 was reaped. */
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
	if (s->sym_pid == p->pid)
		drop_symbols(s);
	process_died(s, p, status);
}

static int check_limits(struct session *s, pid_t only);

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

static void on_death(struct session *s, pid_t tid, int status)
{
	struct thread *t = find_thread(s, tid);

	if (tid == s->pid) {
		s->ended = true;
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

static void on_clone_event(struct session *s, int parent_idx)
{
	unsigned long msg;
	struct thread *p = &s->th[parent_idx];

	if (ptrace(PTRACE_GETEVENTMSG, p->tid, 0, &msg) < 0)
		return;
	uint64_t ctid = p->new_ctid;
	struct thread *c = session_new_thread(s, (pid_t)msg, p->p);

	if (!c)
		return;
	c->ctid = ctid;
	c->st = SCHED_BLOCKED; /* not schedulable before its first stop */
	c->starting = true;
	if (take_stray(s, c->tid)) {
		c->starting = false;
		c->st = SCHED_ENABLED;
		c->kind = OP_START;
		c->stop = STOP_SIGSTOP;
	}
	if (s->cfg->observer && s->cfg->observer->sync)
		s->cfg->observer->sync(s->cfg->observer->ctx, parent_idx,
				       SYNC_FORK, 0, c->idx);
	/*
	 * The return from clone is a scheduling point too: the new thread
	 * may run before its creator goes on (an order violation: the
	 * creator initialises what the thread reads only after
	 * pthread_create).  See tests/targets/order_violation.c.
	 */
	p = &s->th[parent_idx];
	p->stop = STOP_NONE;
	p->kind = OP_CLONE;
	p->fork_return = false;
	p->fn = 0;
	p->yield = false;
	p->obj = 0;
	p->arg = c->idx;
	reach_point(s, p);
}

/*
 * fork, vfork, clone without CLONE_THREAD: a new process in the same
 * world.  Its first thread starts like a new thread; a fork child inherits
 * the int3 bytes of its parent, so it gets the same breakpoints.  A vfork
 * parent cannot run before the child execs or exits.
 */
static void on_fork_event(struct session *s, int parent_idx, int ev)
{
	unsigned long msg;
	struct thread *pt = &s->th[parent_idx];

	if (ptrace(PTRACE_GETEVENTMSG, pt->tid, 0, &msg) < 0) {
		resume(s, pt, 0);
		return;
	}
	struct process *q = process_new(s, (pid_t)msg, pt->p);
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
	c->st = SCHED_BLOCKED;
	c->starting = true;
	if (take_stray(s, c->tid)) {
		c->starting = false;
		c->st = SCHED_ENABLED;
		c->kind = OP_START;
		c->stop = STOP_SIGSTOP;
	}
	if (s->cfg->observer && s->cfg->observer->sync)
		s->cfg->observer->sync(s->cfg->observer->ctx, parent_idx,
				       SYNC_FORK, 0, c->idx);
	pt->stop = STOP_NONE;
	pt->kind = OP_CLONE;
	pt->fork_return = true;
	pt->fn = 0;
	pt->yield = false;
	pt->obj = 0;
	pt->arg = c->idx;
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

/* A thread that cannot run before some other thread's scheduling point
 * wakes it: dead, or blocked with no deadline and no descriptor (which the
 * world could make ready). */
static bool quiet(const struct thread *o)
{
	/* (a vfork parent shares its memory, bytes and all, with the
	 * child: never lift while one waits) */
	return o->st == SCHED_DEAD ||
	       (o->st == SCHED_BLOCKED && !o->timed && !o->starting &&
		o->block != BLOCK_FD && o->block != BLOCK_POLL &&
		o->block != BLOCK_VFORK);
}

/* No thread but t could run: an instruction point of t is no choice. */
static bool quiet_others(struct session *s, const struct thread *t)
{
	if (s->nfreep)
		return false; /* free children run meanwhile */
	for (int i = 0; i < s->nth; i++)
		if (&s->th[i] != t && !quiet(&s->th[i]))
			return false;
	return true;
}

/* Put lifted instruction points back once two threads could run. */
static void drop_lifts_if_contended(struct session *s)
{
	bool any = false;
	int live = 0;

	for (int i = 0; i < s->nprocs && !any; i++)
		any = s->procs[i] && !s->procs[i]->dead &&
		      s->procs[i]->nlifted;
	if (!any)
		return;
	for (int i = 0; i < s->nth; i++)
		live += !quiet(&s->th[i]);
	if (live < 2 && !s->nfreep)
		return;
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i] && !s->procs[i]->dead)
			bp_drop_lifts(s->procs[i]);
}

static void on_breakpoint(struct session *s, struct thread *t)
{
	if (regs_get(t)) {
		resume(s, t, 0);
		return;
	}
	uint64_t addr = t->regs.rip - 1;
	struct bp *b = bp_find(t->p, addr);

	if (!b) {
		/* not ours: the program's own int3 or a single-step trap */
		resume(s, t, SIGTRAP);
		return;
	}
	t->regs.rip = addr;
	t->regs_dirty = true;
	t->stop = STOP_BP;
	t->bp_addr = addr;
	if (b->observe) {
		struct access_observer *o = s->cfg->observer;
		int size = 0, live = 0;
		bool write = false;
		uint64_t ea = bp_operand(s, t, b, &size, &write);

		for (int i = 0; i < s->nth; i++)
			live += s->th[i].st != SCHED_DEAD && s->th[i].p == t->p;
		if (o && ea && live > 1) {
			o->access(o->ctx, t->idx, addr, ea | process_tag(t->p),
				  size, write, b->insn && b->insn->is_atomic);
			s->observed++;
			/* a hot instruction is sampled, not followed: once two
			 * threads ran it OBSERVE_PC_CAP times (one thread 16
			 * times that), it stops trapping for the run (the
			 * budget below ended every observation before) */
			if (b->hits == 0)
				b->first_tid = t->idx;
			else if (b->first_tid != t->idx)
				b->shared = true;
			if (++b->hits >= (b->shared ? OBSERVE_PC_CAP
						    : 16 * OBSERVE_PC_CAP))
				bp_retire(t->p, b);
		} else if (o && live <= 1) {
			/* alone in its process: no race yet; back when a
			 * thread is born */
			bp_lift(t->p, b);
		}
		if (b->lifted || b->retired)
			t->stop = STOP_NONE; /* its own byte is back: run it */
		if (o && o->max_accesses && s->observed >= o->max_accesses) {
			bp_remove_observers(t->p); /* (moves b) */
			t->stop = STOP_NONE;
		}
		resume(s, t, 0);
		return;
	}
	if (b->policy) {
		struct sched_policy *p = s->cfg->policy;

		if (!p->want_point || !p->want_point(p->ctx, s, t->idx)) {
			resume(s, t, 0);
			return;
		}
	}
	if ((b->kind == OP_ACCESS || b->kind == OP_ATOMIC) &&
	    !s->cfg->observer && !s->cfg->policy && quiet_others(s, t)) {
		/* nobody could run instead: no choice here, and none until
		 * another thread could run (schedule() puts it back) */
		bp_lift(t->p, b);
		t->stop = STOP_NONE;
		resume(s, t, 0);
		return;
	}
	t->kind = b->kind;
	t->fn = b->fn;
	t->yield = b->kind == OP_SPIN || b->fn == FN_SPIN_LOCK;
	t->arg = 0;
	if (b->kind == OP_CALL) {
		uint64_t ret = 0;

		mem_read(t->p, t->regs.rsp, &ret, 8);
		t->obj = t->regs.rdi;
		t->cond_mutex = t->regs.rsi; /* for pthread_cond_wait */
		t->pc = ret;
		if (b->fn == FN_JOIN || b->fn == FN_THRD_JOIN) {
			/* join's object is the joined thread's tid word */
			t->obj = t->regs.rdi + t->p->join_off;
		}
	} else {
		int size = 0;
		bool write = false;

		t->obj = b->kind == OP_SPIN || b->policy
				 ? 0
				 : bp_operand(s, t, b, &size, &write);
		t->arg = write;
		t->pc = addr;
	}
	reach_point(s, t);
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

static void on_stop(struct session *s, pid_t tid, int status)
{
	struct thread *t = find_thread(s, tid);
	int sig = WSTOPSIG(status), ev = status >> 16;

	if (!t) {
		if (is_free_process(s, tid))
			free_process_stop(s, tid, status);
		else if (s->nstray < 64)
			s->stray[s->nstray++] = tid;
		return;
	}
	t->regs_valid = false;
	if (ev == PTRACE_EVENT_SECCOMP) {
		t->stop = STOP_SECCOMP;
		if (regs_get(t)) {
			resume(s, t, 0);
			return;
		}
		if (s->cfg->checkpoint && checkpoint_at(s, t))
			return; /* a fork of the template goes on */
		if (syscall_enter(s, t)) {
			if (!s->failed)
				reach_point(s, t);
		} else {
			resume(s, t, 0);
		}
	} else if (!s->cfg->free_children &&
		   (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
		    (ev == PTRACE_EVENT_CLONE && !t->clone_thread))) {
		on_fork_event(s, t->idx, ev);
	} else if (ev == PTRACE_EVENT_CLONE) {
		on_clone_event(s, t->idx);
	} else if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK) {
		unsigned long msg;

		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
		    s->nfreep < 64) {
			s->freep[s->nfreep++] = (pid_t)msg;
			if (ev == PTRACE_EVENT_FORK && t->p->nbps)
				bp_remove_all_in(t->p, (pid_t)msg);
			if (take_stray(s, (pid_t)msg))
				ptrace(PTRACE_CONT, (pid_t)msg, 0, 0);
		}
		resume(s, t, 0);
	} else if (ev == PTRACE_EVENT_EXEC) {
		t = exec_from_thread(s, t);
		on_exec(s, t);
		resume(s, t, 0);
	} else if (ev) {
		resume(s, t, 0);
	} else if (sig == SIGTRAP) {
		on_breakpoint(s, t);
	} else if (sig == SIGSTOP && t->starting) {
		t->starting = false;
		t->st = SCHED_ENABLED;
		t->kind = OP_START;
		t->obj = 0;
		t->stop = STOP_SIGSTOP;
	} else if (sig == SIGSTOP && t->own_sigstop) {
		t->own_sigstop = false;
		resume(s, t, 0);
	} else if (stop_signal(sig) && !s->cfg->free_children &&
		   t->p->idx > 0) {
		siginfo_t si;

		if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0) {
			/* deliver it: the process stops as natively */
			resume(s, t, sig);
			return;
		}
		/*
		 * A group-stop: the process is stopped, its parent may see it
		 * (WUNTRACED); it stays stopped until a SIGCONT.  See
		 * tests/targets/stop_handshake.c.
		 */
		t->stop = STOP_GSTOP;
		t->st = SCHED_BLOCKED;
		t->block = BLOCK_STOPPED;
		t->timed = false;
		process_stopped(s, t->p);
		if (t->idx == s->current)
			s->need_schedule = true;
	} else if (sig == SIGSTOP) {
		resume(s, t, 0);
	} else if (sig == SIGSEGV && syscall_emulate_rdtsc(s, t)) {
		resume(s, t, 0);
	} else {
		if (fatal_signal(sig)) {
			s->fatal_thread = t->idx;
			s->fatal_sig = sig;
			t->st = SCHED_ENABLED; /* stopped, for the unwinder */
			session_where(s, t, s->fatal_where,
				      sizeof(s->fatal_where));
			symbolize_trace(s);
			if (s->cfg->symbolize_trace)
				report_threads(s); /* all stopped: their stacks */
		}
		s->sig_maybe = true; /* signals are about */
		resume(s, t, sig);
	}
}

static void on_status(struct session *s, pid_t tid, int status)
{
	if (WIFEXITED(status) || WIFSIGNALED(status))
		on_death(s, tid, status);
	else if (WIFSTOPPED(status))
		on_stop(s, tid, status);
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
 * Returns such a task, or 0.
 */
static pid_t runnable_task(struct session *s)
{
	for (int i = 0; i < s->nth; i++) {
		if (s->th[i].st != SCHED_RUNNING)
			continue;
		char c = task_state(s->th[i].tid);

		if (c == 'R' || c == 'D' || c == 't' || c == 'T')
			return s->th[i].tid;
	}
	for (int i = 0; i < s->nfreep; i++) {
		char c = task_state(s->freep[i]);

		if (c == 'R' || c == 'D')
			return s->freep[i];
	}
	return 0;
}

/* CPU seconds ptloom itself has used. */
static double self_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
	double self = self_cpu() - s->self_cpu0;

	if (rt && (cpu + self < wall / 2 || cpu >= self) &&
	    wall < lim * TIMEOUT_SLOW_FACTOR)
		return false;
	s->timeout_kind = FAIL_SLOW;
	if (rt)
		snprintf(s->timeout_why, sizeof(s->timeout_why),
			 "the run took %.0f s of wall-clock time, the "
			 "program %.1f s of CPU (--timeout %g): the machine "
			 "is too loaded or ptloom too slow for this run; "
			 "raise --timeout",
			 wall, cpu, lim);
	else
		snprintf(s->timeout_why, sizeof(s->timeout_why),
			 "the run took longer than %g s (--timeout) with "
			 "every running thread asleep in the kernel, in a "
			 "wait ptloom does not model; raise --timeout",
			 lim);
	return true;
}

/* Wait for the next stop; -ETIMEDOUT when --timeout passed, -EINTR when
 * interrupted, -ECHILD when nothing is left. */
/*
 * A sole thread's breakpoints are trace, not choices: with one thread in
 * one process, no timer armed and no observer, nothing can run between
 * its steps.  After SOLE_LIFT breakpoint stops in a row like that (a
 * program's shutdown after its last join: an interpreter's finalisation
 * is hundreds), they are lifted, as they were before its first thread,
 * and its next clone installs them again.  A few
 * in a gap between a join and the next create cost less than the lift.
 */
#define SOLE_LIFT 32

static bool sole_thread(struct session *s, const struct thread *t)
{
	if (s->nprocs != 1 || s->nfreep || s->cfg->observer ||
	    t->p->observing || timer_armed(s))
		return false;
	for (int i = 0; i < s->nth; i++)
		if (i != t->idx && s->th[i].st != SCHED_DEAD)
			return false;
	return true;
}

static void lift_when_alone(struct session *s, struct thread *t)
{
	if (!t->p->bps_installed || !t->p->nbps || t->stop != STOP_BP)
		return;
	if (!sole_thread(s, t)) {
		s->sole_bps = 0;
	} else if (++s->sole_bps >= SOLE_LIFT) {
		/* resume() finds no breakpoint to step over: the thread
		 * runs the original instruction itself */
		bp_lift_all(t->p);
		s->sole_bps = 0;
	}
}

/* The limits checked on every timer tick: Ctrl-C, --timeout, a spin. */
static int check_limits(struct session *s, pid_t only)
{
	if (s->cfg->interrupted && *s->cfg->interrupted)
		return -EINTR;
	if (s->cfg->timeout > 0 && now_seconds() - s->t0 > s->cfg->timeout &&
	    timeout_reached(s))
		return -ETIMEDOUT;
	if (s->cfg->spin_ms > 0 && only == -1 && s->current >= 0 &&
	    s->current < s->nth && s->th[s->current].st == SCHED_RUNNING &&
	    (now_seconds() - s->resume_time) * 1000 > s->spin_ms &&
	    (process_cpu(s->th[s->current].p->pid) - s->resume_cpu) * 1000 >
		    s->spin_ms) {
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
		st->obj2 = t->obj2;
	if (t->kind == OP_CALL ? is_cond_wait(t->fn) : is_cond_wait(t->last_fn)) {
		if (st->obj2 || !t->cond_mutex)
			st->global = true;
		st->obj2 = t->cond_mutex;
	}
	if (t->kind == OP_EXIT)
		st->obj2 = t->ctid;
	if (t->kind == OP_WOKEN && !t->futex_woken)
		st->global = true;
}

/* Points in a row after which a thread yields to the others (fairness). */
#define FAIR_STEPS 1000

static void build_sched(struct session *s, struct sched_thread *st)
{
	bool any = false;

	for (int i = 0; i < s->nth; i++)
		any |= !s->th[i].starting && (s->th[i].st == SCHED_ENABLED ||
					      s->th[i].st == SCHED_RUNNING);
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		st[i] = (struct sched_thread){
			.state = t->st == SCHED_RUNNING ? SCHED_ENABLED : t->st,
			.yield = t->yield,
			.timed = t->st == SCHED_BLOCKED && t->timed,
			.deadline = t->deadline,
			.kind = t->kind,
			.fn = t->kind == OP_CALL ? t->fn
			      : t->kind == OP_WAIT4 && !t->wait_nohang
				      ? WAIT_BLOCKING
			      : t->kind == OP_CLONE && t->fork_return
				      ? FORK_RETURN
				      : 0,
			.obj = t->obj,
		};
		pending_objects(t, &st[i]);
		if (t->starting)
			st[i].state = SCHED_BLOCKED;
		if (any && st[i].timed &&
		    t->deadline > s->now + TIMEOUT_HORIZON_NS)
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
			if (i != cur && st[i].state == SCHED_ENABLED) {
				st[cur].yield = true;
				break;
			}
}

static void report_threads(struct session *s);

/* Name one address of the trace; addr carries its image's tag. */
static void add_sym(struct session *s, uint64_t addr, bool data)
{
	struct run_result *r = s->res;
	char buf[LOC_MAX];
	uint64_t raw = addr & ((1ull << 48) - 1);

	if (!raw)
		return;
	for (size_t i = 0; i < r->nsyms; i++)
		if (r->syms[i].addr == addr && r->syms[i].data == data)
			return;
	if ((r->nsyms & (r->nsyms - 1)) == 0 || !r->syms) {
		struct sym_entry *n = realloc(
			r->syms, (r->nsyms ? r->nsyms * 2 : 16) * sizeof(*n));

		if (!n)
			return;
		r->syms = n;
	}
	buf[0] = 0;
	if (data)
		s->cfg->sym->data(s->cfg->sym->ctx, raw, buf, sizeof(buf));
	else
		s->cfg->sym->code(s->cfg->sym->ctx, raw - 1, buf, sizeof(buf));
	r->syms[r->nsyms++] = (struct sym_entry){ addr, data, strdup(buf) };
}

/* While the process is still alive: name the code and objects of its
 * image's events, so the trace can be explained after the run. */
void session_symbolize_process(struct session *s, struct process *p)
{
	uint64_t tag = process_tag(p);

	if (!s->cfg->symbolize_trace || !s->cfg->sym || p->symbolized ||
	    p->dead)
		return;
	p->symbolized = true;
	ensure_symbols(s, p);
	for (size_t i = 0; i < s->nev; i++) {
		struct event *e = &s->ev[i];

		/* other images' events, and a policy's (Python) locations */
		if (s->th[e->thread].p != p || (e->pc >> 48) != tag >> 48 ||
		    EVENT_PC_IS_POLICY(e->pc))
			continue;
		if (e->kind == OP_CALL || e->kind == OP_ATOMIC ||
		    e->kind == OP_ACCESS || e->kind == OP_SPIN)
			add_sym(s, e->pc + (e->kind != OP_CALL), false);
		if (e->obj && !(e->obj >> 63))
			add_sym(s, e->obj, true);
	}
}

static void symbolize_trace(struct session *s)
{
	for (int i = 0; i < s->nprocs; i++)
		session_symbolize_process(s, s->procs[i]);
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

/*
 * Happens-before for race discovery: every operation acquires and
 * releases its object.  pthread_cond_wait also releases its mutex at the
 * call and acquires it again at the thread's next operation (the wake),
 * since glibc unlocks and relocks it internally, out of our sight.
 */
static void observe_sync(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;

	/* not at the futex wait inside cond_wait: only once it is over */
	if (t->relock && t->kind != OP_FUTEX_WAIT) {
		o->sync(o->ctx, t->idx, SYNC_ACQUIRE, t->relock, -1);
		t->relock = 0;
	}
	if (t->obj && !(t->obj >> 63))
		o->sync(o->ctx, t->idx, SYNC_ACQREL, t->obj, -1);
	if (t->kind == OP_CALL &&
	    (t->fn == FN_COND_WAIT || t->fn == FN_COND_TIMEDWAIT ||
	     t->fn == FN_CND_WAIT || t->fn == FN_CND_TIMEDWAIT) &&
	    t->cond_mutex) {
		o->sync(o->ctx, t->idx, SYNC_RELEASE, t->cond_mutex, -1);
		t->relock = t->cond_mutex;
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
 */
static void wake_spinners(struct session *s, const struct thread *t)
{
	if (t->yield || t->kind == OP_SPIN || t->kind == OP_YIELD ||
	    (t->kind == OP_ACCESS && !t->arg))
		return;
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
static bool outside_wait(struct session *s, const struct choice *c)
{
	struct pollfd p[4 * POLL_MAX];
	int n = 0, who = -1;

	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];

		if (t->st != SCHED_BLOCKED ||
		    (t->block != BLOCK_FD && t->block != BLOCK_POLL) ||
		    !syscall_fd_external(s, t))
			continue;
		if (who < 0)
			who = t->idx;
		for (int k = 0; k < t->npfd && n < 4 * POLL_MAX; k++)
			if (t->pfd[k] >= 0)
				p[n++] = (struct pollfd){ .fd = t->pfd[k],
							  .events = t->pev[k] };
	}
	if (!n)
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
		if (s->cfg->interrupted && *s->cfg->interrupted) {
			session_fail(s, FAIL_INTERRUPTED, NULL, "interrupted");
			return true;
		}
		double now = now_seconds(), ms = 200;

		if (budget >= 0 && now - start >= budget)
			return false; /* the nearest timeout is due */
		if (s->cfg->timeout > 0 && now - s->t0 >= s->cfg->timeout) {
			session_fail(s, FAIL_SLOW, NULL,
				     "the run waited %g s (--timeout) for the "
				     "world outside the program (T%d waits on a "
				     "descriptor only another process, a server "
				     "or a terminal can make ready); raise "
				     "--timeout",
				     s->cfg->timeout, who);
			return true;
		}
		if (budget >= 0 && (budget - (now - start)) * 1000 < ms)
			ms = (budget - (now - start)) * 1000;
		if (s->cfg->timeout > 0 &&
		    (s->cfg->timeout - (now - s->t0)) * 1000 < ms)
			ms = (s->cfg->timeout - (now - s->t0)) * 1000;
		if (poll(p, (nfds_t)n, ms < 1 ? 1 : (int)ms) > 0)
			return true;
	}
}

/*
 * The files P0 maps executable, but the program itself: ld.so, libc and
 * the other shared objects, so that a schedule file can name the one that
 * changed when a replay diverges.  Once per run.
 */
static void collect_objects(struct session *s, struct process *p)
{
	struct run_result *r = s->res;
	char name[64], exe[PATH_MAX], line[PATH_MAX + 128];
	ssize_t n;
	FILE *f;

	if (r->objects)
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
}

/* Choose and execute pending operations until some thread runs. */
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
		/* a timer or a signal sent since the last choice may end a
		 * wait */
		int fired = timer_tick(s);

		signal_recheck(s, false);
		drop_lifts_if_contended(s);
		build_sched(s, st);
		sched_alternatives(st, s->nth, s->current, c);
		timer_alternatives(s, c);
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
		bool only_timeouts = true;

		for (int i = 0; i < c->nalts; i++)
			only_timeouts &= c->alts[i].timeout;
		if (only_timeouts && outside_wait(s, c)) {
			sig_forced = false;
			continue;
		}
		if (s->cfg->policy && s->cfg->policy->shape && c->nalts) {
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
				if (s->cfg->timeout > 0 &&
				    now_seconds() - s->t0 > s->cfg->timeout &&
				    timeout_reached(s)) {
					session_fail(s, s->timeout_kind, NULL,
						     "%s", s->timeout_why);
					break;
				}
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
		int pick = c->nalts == 1 ? 0 : session_pick(s, c);

		if (c->nalts == 1 && s->strat->single) {
			c->step = (uint32_t)s->step;
			c->preemptions = s->preemptions;
			if (!s->strat->single(s->strat->ctx, c))
				pick = -1;
		}
		if (pick < 0) {
			session_fail(s, FAIL_DIVERGED, NULL,
				     "the schedule could not be followed at "
				     "step %llu",
				     (unsigned long long)s->step);
			break;
		}
		struct alt a = c->alts[pick];
		struct thread *t = &s->th[a.thread];

		if (a.cost)
			s->preemptions++;
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
			syscall_close_fds(t);
			if (t->deadline > s->now)
				s->now = t->deadline;
			thread_make_ready(s, t, OP_TIMEOUT, t->timeout_result);
		}
		record_event(s, t, a.cost, c->nalts > 1);
		wake_spinners(s, t);
		if (s->strat->executed && s->nev)
			s->strat->executed(s->strat->ctx, &s->ev[s->nev - 1]);
		if (s->cfg->observer)
			observe_sync(s, t);
		s->step++;
		s->now += s->quantum;
		if (s->current != t->idx) {
			s->switches++;
			s->run_len = 0;
		}
		s->run_len++;
		s->resume_time = now_seconds();
		s->resume_cpu = process_cpu(t->p->pid); /* spin detection */
		s->current = t->idx;
		if (s->cfg->max_steps && s->step > s->cfg->max_steps &&
		    too_many_steps(s, t))
			break;
		bool runs = true;

		lift_when_alone(s, t);
		switch (t->kind) {
		case OP_CLONE:
			/* the first thread of a process: now choices exist
			 * inside it; or a thread or process after the
			 * breakpoints were lifted */
			if ((t->clone_thread || t->p->bps_lifted) &&
			    !t->p->bps_installed)
				bp_install(s, t->p);
			if (t->p->idx == 0)
				collect_objects(s, t->p);
			break;
		case OP_CALL:
			t->last_fn = t->fn;
			t->last_obj = t->obj;
			t->last_site = t->pc;
			break;
		case OP_EXIT_GROUP:
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
			if (!t->sig_rerun) {
				syscall_close_fds(t);
				break;
			}
			t->sig_rerun = false;
			if (!signal_deliverable(s, t) &&
			    !(t->sig_block == BLOCK_FD &&
			      syscall_fd_ready(s, t))) {
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
		case OP_START:
		case OP_TIMEOUT:
		case OP_EXIT:
		case OP_ATOMIC:
		case OP_ACCESS:
		case OP_SPIN:
		case OP_PYCHECK:
			break;
		default:
			runs = syscall_execute(s, t);
			/* cond_wait's futex wait returned at once: the mutex
			 * is taken again from here on */
			if (runs && t->kind == OP_FUTEX_WAIT && t->relock &&
			    s->cfg->observer) {
				s->cfg->observer->sync(s->cfg->observer->ctx,
						       t->idx, SYNC_ACQUIRE,
						       t->relock, -1);
				t->relock = 0;
			}
		}
		if (!runs)
			continue; /* it blocked: pick again */
		if (s->cfg->policy && s->cfg->policy->resume)
			s->cfg->policy->resume(s->cfg->policy->ctx, s, t->idx);
		resume(s, t, 0);
		if (t->kind == OP_EXIT && t->tid == t->p->pid) {
			/* the leader's exit is reported only with the last
			 * thread's; it no longer runs */
			t->st = SCHED_DEAD;
			continue;
		}
		break;
	}
out_free:
	free(st);
	free(c);
}

static const char *block_name(struct thread *t)
{
	switch (t->block) {
	case BLOCK_SLEEP: return "sleep";
	case BLOCK_FD: return "read/write";
	case BLOCK_POLL: return "poll";
	case BLOCK_SIGNAL: return signal_wait_name(t);
	case BLOCK_WAIT: return "wait";
	case BLOCK_STOPPED: return "stopped";
	case BLOCK_VFORK: return "vfork";
	default: return "futex_wait";
	}
}

static void report_threads(struct session *s)
{
	struct run_result *r = s->res;

	free(r->threads);
	r->threads = calloc((size_t)s->nth + 1, sizeof(*r->threads));
	r->nthreads = 0;
	if (!r->threads)
		return;
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];
		struct thread_report *p = &r->threads[r->nthreads++];
		char name[64], obj[128];

		p->thread = t->idx;
		snprintf(name, sizeof(name), "/proc/%d/task/%d/comm",
			 t->p->pid, t->tid);
		if (s->cfg->policy && s->cfg->policy->name && t->p->idx == 0)
			s->cfg->policy->name(s->cfg->policy->ctx, s, t->idx,
					     p->name, sizeof(p->name));
		FILE *f = t->st != SCHED_DEAD && t->p->idx == 0 && !p->name[0]
				  ? fopen(name, "re")
				  : NULL;

		if (f) {
			if (fgets(p->name, sizeof(p->name), f))
				p->name[strcspn(p->name, "\n")] = 0;
			fclose(f);
		}
		if (t->p->idx > 0) /* "P1 racy T2" */
			process_thread_label(s, t, p->name, sizeof(p->name));
		if (t->st == SCHED_DEAD) {
			snprintf(p->state, sizeof(p->state), "exited");
			continue;
		}
		snprintf(p->state, sizeof(p->state), "%s",
			 t->st == SCHED_BLOCKED ? "blocked"
			 : t->st == SCHED_RUNNING ? "running"
						  : "ready");
		if (t->st == SCHED_BLOCKED && t->block == BLOCK_FUTEX &&
		    t->last_fn) {
			describe_data(s, t->p, t->last_obj, obj, sizeof(obj));
			if (t->last_fn == FN_JOIN || t->last_fn == FN_THRD_JOIN) {
				int j = -1;

				for (int k = 0; k < s->nth; k++)
					if (s->th[k].ctid && s->th[k].p == t->p &&
					    s->th[k].ctid == t->last_obj)
						j = k;
				if (j >= 0)
					process_thread_label(s, &s->th[j], obj,
							     sizeof(obj));
			}
			snprintf(p->what, sizeof(p->what), "%s(%s%s)",
				 call_fn_name(t->last_fn),
				 obj[0] == '0' || obj[0] == 'T' ? "" : "&",
				 obj);
		} else if (t->st == SCHED_BLOCKED) {
			if (t->block == BLOCK_WAIT || t->block == BLOCK_STOPPED ||
			    t->block == BLOCK_VFORK || t->block == BLOCK_SIGNAL)
				obj[0] = 0;
			else if (t->block == BLOCK_FD)
				/* the descriptor, not its encoded object */
				timer_describe_fd(t->p->pid, (int)t->arg, obj,
						  sizeof(obj));
			else
				describe_data(s, t->p, t->obj, obj, sizeof(obj));
			snprintf(p->what, sizeof(p->what), "%s(%s)",
				 block_name(t), obj);
		} else {
			snprintf(p->what, sizeof(p->what), "%s",
				 op_kind_name(t->kind));
		}
		if (t->st != SCHED_RUNNING)
			session_where(s, t, p->where, sizeof(p->where));
		/* every stopped thread's frames, for the failure report */
		if (t->st != SCHED_RUNNING && s->cfg->symbolize_trace &&
		    s->cfg->sym && s->cfg->sym->backtrace)
			s->cfg->sym->backtrace(s->cfg->sym->ctx, t->tid,
					       p->backtrace,
					       sizeof(p->backtrace));
	}
}

/* Kill the process group and reap everything, so nothing is left behind. */
static void kill_and_reap(struct session *s)
{
	int status;

	if (s->handed_over)
		return; /* the caller's now, stopped; it kills it */
	kill(-s->pid, SIGKILL);
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
	while (waitpid(-s->pid, &status, __WALL) > 0 || errno == EINTR)
		;
	for (int i = 0; i < s->nfreep; i++)
		while (waitpid(s->freep[i], &status, __WALL) > 0 ||
		       errno == EINTR)
			;
	/*
	 * A program that left its process group (setsid).  Newest first: a
	 * traced leader is reported only after the other threads of its
	 * group are reaped, so waiting for it first would block for ever.
	 */
	for (int i = s->nth - 1; i >= 0; i--)
		while (s->th[i].tid > 0 &&
		       (waitpid(s->th[i].tid, &status, __WALL) > 0 ||
			errno == EINTR))
			;
	while (waitpid(-1, &status, __WALL | WNOHANG) > 0)
		;
	spawn_unregister(s->pid);
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
	r->output[r->output_len] = 0;
}

static void conclude(struct session *s)
{
	struct run_result *r = s->res;

	if (s->handed_over)
		return;
	if (!s->failed && s->cfg->interrupted && *s->cfg->interrupted) {
		/* ptloom was told to stop and killed the program itself */
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

int session_run(const struct session_config *cfg, struct strategy *strat,
		struct run_result *res)
{
	struct session s_, *s = &s_;
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } }, old_it;
	pid_t tid;
	int status, r;

	memset(res, 0, sizeof(*res));
	res->thread = -1;
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->strat = strat;
	s->res = res;
	s->current = 0;
	s->child_thread = -1;
	s->now = MONOTONIC_BASE_NS;
	s->realtime_base = REALTIME_BASE_NS - MONOTONIC_BASE_NS;
	s->quantum = cfg->clock_quantum_ns ? cfg->clock_quantum_ns
					   : DEFAULT_QUANTUM_NS;
	s->rng = cfg->seed ^ 0x5054204c4f4f4dull;
	s->hash = 0xcbf29ce484222325ull;
	s->fatal_thread = -1;
	s->exit_thread = -1;
	s->spin_ms = cfg->spin_ms;
	futex_init(&s->ft);
	if (cfg->policy && cfg->policy->begin)
		cfg->policy->begin(cfg->policy->ctx);
	s->t0 = now_seconds();
	s->self_cpu0 = self_cpu();
	s->resume_time = s->t0;
	s->resume_cpu = 0;
	if (!cfg->checkpoint || checkpoint_start(s)) {
		s->outfd = cfg->pass_output
				   ? -1
				   : memfd_create("ptloom-output", MFD_CLOEXEC);
		r = spawn_program(cfg, s->outfd, &s->pid);
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
			for (;;) {
				pid_t w = waitpid(c->tid, &status, __WALL);

				if (w == c->tid || (w < 0 && errno != EINTR))
					break;
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
				if (v == SPIN_COMPUTE &&
				    ptrace(PTRACE_CONT, c->tid, 0, 0) < 0 &&
				    errno == ESRCH)
					c->st = SCHED_DEAD;
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
	/* names of other processes' threads go into the schedule file, and
	 * a policy's (Python threading names) */
	if ((s->failed ||
	     (res->failure && (s->nprocs > 1 || cfg->policy))) &&
	    !res->nthreads)
		report_threads(s);
	if (s->sym_pid)
		drop_symbols(s);
	kill_and_reap(s);
	setitimer(ITIMER_REAL, &old_it, NULL);
	sigaction(SIGALRM, &old_sa, NULL);

	read_output(s);
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
	if (cfg->policy && cfg->policy->conclude)
		cfg->policy->conclude(cfg->policy->ctx, res);
	if (getenv("PTLOOM_DEBUG_EVENTS"))
		for (size_t i = 0; i < s->nev; i++)
			fprintf(stderr, "ev %u T%u k%u f%u o%llx pc%llx a%lld\n",
				s->ev[i].step, s->ev[i].thread, s->ev[i].kind,
				s->ev[i].fn, (unsigned long long)s->ev[i].obj,
				(unsigned long long)s->ev[i].pc,
				(long long)s->ev[i].arg);
	res->events = s->ev;
	res->nevents = s->nev;
	res->decisions = s->dec;
	res->ndecisions = s->ndec;
	res->preemptions = s->preemptions;
	res->trace_hash = s->hash;
	res->steps = s->step;
	res->seconds = now_seconds() - s->t0;
	if (!s->exec_seen && !s->failed) {
		res->failure = FAIL_INTERNAL;
		snprintf(res->message, sizeof(res->message),
			 "the program could not be started");
	}
	for (int i = 0; i < s->nth; i++)
		syscall_close_fds(&s->th[i]);
	free(s->th);
	free(s->fdobj);
	process_free_all(s);
	timer_free(s);
	futex_destroy(&s->ft);
	if (s->outfd >= 0 && !s->outfd_shared)
		close(s->outfd);
	return 0;
}

void run_result_free(struct run_result *res)
{
	for (int i = 0; i < res->nobjects; i++)
		free(res->objects[i]);
	free(res->objects);
	for (size_t i = 0; i < res->nsyms; i++)
		free(res->syms[i].text);
	free(res->syms);
	free(res->output);
	free(res->events);
	free(res->decisions);
	free(res->threads);
	memset(res, 0, sizeof(*res));
}
