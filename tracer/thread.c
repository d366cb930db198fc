/*
 * A thread: its stops, how it is resumed, and its pending operation.
 *
 * A traced thread stops (on_stop) at a seccomp stop of a syscall ptloom
 * handles, an int3 of a breakpoint (on_breakpoint), a signal, a group-stop
 * or a ptrace event.  At a scheduling point (reach_point) its operation
 * becomes its pending operation and it stays stopped until the world
 * (tracer/world.c) chooses it; resume() then applies what ptloom decided
 * (a skipped syscall's result, the instruction under a breakpoint, a
 * signal to deliver) and lets it run.  A signal reaches a thread here as a
 * signal-delivery-stop; whether it is deliverable to a thread blocked in
 * ptloom's model is tracer/signal.c's.  Fork and exec events go on in
 * tracer/process.c, a new thread of the same process (clone) here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session_int.h"
#include "tramp.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

/* Observations of one instruction per run in race discovery (sampling),
 * and how often one that dozed is woken (observe_hit).  A loop's accesses
 * to the end of an array of thousands, so that its last ones, which
 * another thread's may race with, are seen: at 256, a writer filling
 * a[0..399] while main read a[399] twice was never seen storing a[399],
 * and the search said "PASS, complete" (tests/targets/array_tail.c).
 * The same with the program's access slots and without (the run's budget
 * still bounds a run's stops). */
#define OBSERVE_PC_CAP 4096
/* a language runtime's plain access (bp.runtime): its races are the same
 * in every run, its start-up is most of what a Go program observes */
#define OBSERVE_RUNTIME_CAP 16
#define OBSERVE_WAKES 8

struct thread *find_thread(struct session *s, pid_t tid)
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
	if (s->cfg->watch && s->cfg->watch->thread)
		s->cfg->watch->thread(s->cfg->watch->ctx, t->idx, p->idx);
	return t;
}

bool take_stray(struct session *s, pid_t tid)
{
	for (int i = 0; i < s->nstray; i++)
		if (s->stray[i] == tid) {
			s->stray[i] = s->stray[--s->nstray];
			return true;
		}
	return false;
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
	t->pi_wait = false;
	t->yield = false;
	t->wake_due = false;
	t->skip = true;
	t->result = result;
}

static bool fatal_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	       sig == SIGILL || sig == SIGABRT || sig == SIGSYS ||
	       sig == SIGTRAP;
}

/*
 * Stores to the words a spinner reads are scheduling points.  A spin's
 * re-check can see another thread's store the moment it is made, and the
 * code after the store (a producer filling the slot it has just
 * published) may not be what the re-check expects: without a point right
 * after the store, the spinner only ever re-checks where the storing
 * thread next stops on its own, and such a window is never run
 * (tests/targets/spsc_stack_ring.c -DRACY; a race point cannot stand in,
 * since an -O2 producer on its own stack is never observed).  Whatever
 * the code, the addressing or the library that stores, the x86 debug
 * registers trap right after a write to a watched word: while a thread
 * waits at its spin point, every other thread of its process runs with
 * write watchpoints on the words of that spin (up to four, DR0-3), and a
 * trap is an access point (a write, no object: dependent on everything)
 * that wakes the spinners.  Which words are watched is a function of
 * the run's schedule (the spinners' registers and memory at their
 * points), so runs stay replayable.
 */
#define DR_OFF(i) offsetof(struct user, u_debugreg[i])

static void watch_set(struct thread *t, const uint64_t *a, int n)
{
	uint64_t dr7 = 0;
	int k = 0;

	if (!watch_traps()) {
		/* the words, watched by single steps (resume, watch_step) */
		memcpy(t->dr, a, (size_t)n * sizeof(*a));
		t->ndr = n;
		return;
	}
	ptrace(PTRACE_POKEUSER, t->tid, DR_OFF(7), 0);
	for (int i = 0; i < n; i++) {
		if (ptrace(PTRACE_POKEUSER, t->tid, DR_OFF(k), a[i]) < 0)
			continue;
		/* local enable; break on writes (01), 8 bytes long (10) */
		dr7 |= (1ull << (2 * k)) | (9ull << (16 + 4 * k));
		t->dr[k++] = a[i];
	}
	if (k && ptrace(PTRACE_POKEUSER, t->tid, DR_OFF(7), dr7) < 0)
		k = 0;
	t->ndr = k;
}

/* Before t runs: watchpoints on the words its process's spinners read. */
static void watch_arm(struct session *s, struct thread *t)
{
	uint64_t a[4];
	int n = 0;

	if (!s->watching && !t->ndr)
		return;
	for (int i = 0; i < s->nth && n < 4; i++) {
		const struct thread *v = &s->th[i];

		if (v == t || v->p != t->p || v->st != SCHED_ENABLED ||
		    v->kind != OP_SPIN)
			continue;
		for (int k = 0; k < v->nspin_words && n < 4; k++) {
			bool dup = false;

			for (int j = 0; j < n; j++)
				dup |= a[j] == v->spin_words[k];
			if (!dup)
				a[n++] = v->spin_words[k];
		}
	}
	if (n == t->ndr && !memcmp(a, t->dr, (size_t)n * sizeof(a[0])))
		return;
	watch_set(t, a, n);
}

/* t reached its spin point: the words its spin reads while it waits, for
 * watch_arm.  The same registers and the same values in the words the
 * last turn read: the same turn, not taken again. */
static void spin_words(struct session *s, struct thread *t)
{
	uint64_t v[4] = { 0 };
	bool same;
	int n;

	t->nspin_words = 0;
	/* race discovery's runs keep the interleavings they had: the points
	 * they find are the explored runs' own (a watchpoint's point there
	 * made every plain index of a correct ring a race point) */
	if (s->cfg->observer || regs_get(t))
		return;
	same = t->turn_known &&
	       !memcmp(&t->turn_regs, &t->regs, sizeof(t->regs));
	for (int i = 0; same && i < t->nturn_words; i++)
		same = !mem_read(t->p, t->turn_words[i], &v[i], 8) &&
		       v[i] == t->turn_vals[i];
	if (!same) {
		t->turn_regs = t->regs;
		n = spin_reads(s, t, t->turn_words, 4, &t->turn_waits);
		t->nturn_words = n > 0 ? n : 0;
		t->turn_known = n >= 0;
		for (int i = 0; i < t->nturn_words; i++)
			if (mem_read(t->p, t->turn_words[i], &t->turn_vals[i],
				     8))
				t->turn_known = false;
	}
	if (!t->nturn_words)
		return;
	memcpy(t->spin_words, t->turn_words, sizeof(t->spin_words));
	t->nspin_words = t->nturn_words;
	s->watching = true;
}

/*
 * t stopped right after a store to a watched word (the words in hit[]).
 * The spinners that read one take their turn again (undone, as always):
 * those that would now go on are woken, and t's stop is a point, where
 * the scheduler may run one of them before t goes on.  When none would
 * (a spin lock's word set to "held", an index moved that the wait does
 * not end on), the store changed nothing a spinner acts on: no point.
 * Returns true when t stopped at a point.
 */
static void reach_point(struct session *s, struct thread *t);

bool spinners_recheck(struct session *s, const struct thread *t,
		      const uint64_t *addr, const uint8_t *size, int n)
{
	bool woken = false;

	for (int i = 0; i < s->nth; i++) {
		struct thread *v = &s->th[i];
		bool reads = false;

		if (v == t || v->p != t->p || v->st != SCHED_ENABLED ||
		    v->kind != OP_SPIN || !v->nspin_words)
			continue;
		for (int k = 0; k < v->nspin_words; k++)
			for (int j = 0; j < n; j++)
				reads |= v->spin_words[k] < addr[j] + size[j] &&
					 addr[j] < v->spin_words[k] + 8;
		if (!reads)
			continue;
		bool waited = v->turn_waits;

		spin_words(s, v);
		if (waited && !v->turn_waits) {
			v->yield = false;
			woken = true;
		}
	}
	return woken;
}

static bool watch_point(struct session *s, struct thread *t,
			const uint64_t *hit, int nhit)
{
	uint8_t sizes[4] = { 8, 8, 8, 8 };

	ptrace(PTRACE_POKEUSER, t->tid, DR_OFF(6), 0);
	if (!spinners_recheck(s, t, hit, sizes, nhit))
		return false;
	t->wake_due = false;
	s->stop_kinds[STOPK_ACCESS]++;
	thread_access_point(s, t, t->regs.rip, 0, true /* it wrote */, 0);
	return true;
}

/*
 * Where the debug registers do not trap (probe.c watch_traps: an AMD EPYC
 * VM here, whose hypervisor takes DR7 and never traps), a thread that
 * would run with watchpoints runs by single steps instead, and a step
 * that changed a watched word is the trap: a store of the same value
 * would have trapped too, but it changes nothing a spinner's turn sees,
 * so spinners_recheck() would have found no spinner to wake.  Before,
 * the words went unwatched: the publish-early ring passed its search,
 * complete to bound 2.  Steps are ~20 us each; past WATCH_STEPS_MAX in a
 * run the thread runs on unwatched and the run says so (watch_capped:
 * the verdict is no PASS).
 */
#define WATCH_STEPS_MAX 200000

static void watch_values(struct thread *t, uint64_t *v)
{
	for (int i = 0; i < t->ndr; i++)
		if (mem_read(t->p, t->dr[i], &v[i], 8))
			v[i] = 0;
}

/* The request that resumes t: a single step while it watches by steps
 * (resume_request() has cleared t->wstep). */
static int watch_request(struct session *s, struct thread *t)
{
	if (!t->ndr || watch_traps())
		return PTRACE_CONT;
	if (s->watch_steps >= WATCH_STEPS_MAX) {
		s->watch_capped = true;
		return PTRACE_CONT;
	}
	s->watch_steps++;
	watch_values(t, t->wvals);
	t->wstep = true;
	return PTRACE_SINGLESTEP;
}

/* t stopped with SIGTRAP after a watching step (si_code: the step's or
 * a syscall's exit under it): the words that step changed, in hit[];
 * -1 when the trap is not the step's (an int3 it ran into). */
static int watch_stepped(struct thread *t, uint64_t *hit)
{
	siginfo_t si;
	uint64_t v[4];
	int n = 0;

	t->wstep = false;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) ||
	    (si.si_code != TRAP_TRACE && si.si_code != TRAP_BRKPT))
		return -1;
	watch_values(t, v);
	for (int i = 0; i < t->ndr; i++)
		if (v[i] != t->wvals[i])
			hit[n++] = t->dr[i];
	return n;
}

/* A trap of t's own watchpoints (DR6 B0-B3): the words in hit[]. */
static int watch_trapped(struct thread *t, uint64_t *hit)
{
	long d6;
	int n = 0;

	if (!t->ndr || !watch_traps())
		return 0;
	errno = 0;
	d6 = ptrace(PTRACE_PEEKUSER, t->tid, DR_OFF(6), 0);
	if (errno)
		return 0;
	for (int i = 0; i < t->ndr; i++)
		if (d6 & (1l << i))
			hit[n++] = t->dr[i];
	return n;
}

/* The instruction under t's breakpoint stores to a watched word: the
 * breakpoint is stepped over by emulation or a single step, neither of
 * which leaves the watchpoint's trap to see. */
int thread_watched(const struct thread *t, uint64_t ea, int size,
		   uint64_t *hit)
{
	int n = 0;

	for (int i = 0; i < t->ndr; i++)
		if (ea < t->dr[i] + 8 && ea + (uint64_t)size > t->dr[i]) {
			if (hit)
				hit[n] = t->dr[i];
			n++;
		}
	return n;
}

static int watched_store(struct session *s, struct thread *t, uint64_t *hit)
{
	struct bp *b = bp_find(t->p, t->bp_addr);
	int size = 0;
	bool write = false;
	uint64_t ea;

	if (!t->ndr || !b || b->policy)
		return 0;
	ea = bp_operand(s, t, b, &size, &write);
	if (!ea || !write)
		return 0;
	if (size <= 0)
		size = 8;
	return thread_watched(t, ea, size, hit);
}

/* A watching step's trap: a point where it changed a word a spinner
 * would now go on at, else the next step.  false: not the step's trap. */
static bool watch_step_done(struct session *s, struct thread *t)
{
	uint64_t hit[4];
	int n = watch_stepped(t, hit);

	if (n < 0)
		return false;
	t->regs_valid = false;
	s->stop_kinds[STOPK_WATCH_STEP]++;
	if (n > 0 && !regs_get(t) && watch_point(s, t, hit, n))
		return true;
	resume(s, t, 0);
	return true;
}

/* How t goes on: to its syscall's exit (a clone's id, a wait's exit put
 * back), by a watching step, or running. */
static int resume_request(struct session *s, struct thread *t)
{
	t->wstep = false; /* (a syscall's stops are no watching step's) */
	return t->tid_clone || t->exit_fix ? PTRACE_SYSCALL
					   : watch_request(s, t);
}

/* Resume a stopped thread: apply a skipped syscall's result, step over a
 * breakpoint, deliver a pending signal. */
void resume(struct session *s, struct thread *t, int sig)
{
	/* parked in the program at its point: its go word sends it on
	 * (agent.c), else it is brought to its ptrace stop first */
	if (t->ho_parked && !sig && agent_ho_wake(s, t))
		return;
	if (t->ho_parked)
		agent_ho_materialise(t);
	watch_arm(s, t);
	if (t->stop == STOP_SECCOMP && t->skip) {
		if (!regs_get(t)) {
			if (t->result == PTLOOM_RESTART_CALL) {
				/* the call again, after a handler if one runs
				 * (the kernel's ERESTARTNOINTR): back to its
				 * syscall */
				t->regs.rax = t->regs.orig_rax;
				t->regs.rip -= 2;
			} else {
				t->regs.rax = (uint64_t)t->result;
			}
			t->regs.orig_rax = (uint64_t)-1;
			t->regs_dirty = true;
		}
	} else if (t->stop == STOP_BP) {
		uint64_t hit[4];
		int nhit = watched_store(s, t, hit);

		t->stop = STOP_NONE;
		if (bp_step_over(s, t) == 0 && t->stop == STOP_NONE && nhit &&
		    !regs_get(t) && watch_point(s, t, hit, nhit)) {
			t->sig_sent = 0;
			t->skip = false;
			return;
		}
		if (t->stop == STOP_SIGNAL) {
			sig = t->sig;
			/* the instruction under the breakpoint faulted */
			if (fatal_signal(sig)) {
				s->fatal_thread = t->idx;
				s->fatal_sig = sig;
				s->fatal_foreign = false; /* a fault */
				session_where(s, t, s->fatal_where,
					      sizeof(s->fatal_where));
				symbolize_trace(s);
				/* all stopped: their stacks, as for a fault
				 * met running (on_stop) */
				if (s->cfg->symbolize_trace)
					report_threads(s);
			}
		}
	} else if (t->stop == STOP_SIGNAL && !sig) {
		sig = t->sig;
	}
	regs_set(t);
	thread_set_running(s, t); /* (a handler runs now) */
	if (ptrace(resume_request(s, t), t->tid, 0, sig) < 0 &&
	    errno == ESRCH)
		t->st = SCHED_DEAD; /* killed meanwhile; its exit follows */
}

void thread_set_running(struct session *s, struct thread *t)
{
	t->sig_sent = 0;
	t->skip = false;
	t->stop = STOP_NONE;
	t->regs_valid = false;
	t->regs_this_stop = false;
	t->st = SCHED_RUNNING;
	agent_resume(s, t);
}

void resume_running(struct session *s, struct thread *t)
{
	t->regs_valid = false;
	if (ptrace(resume_request(s, t), t->tid, 0, 0) < 0 && errno == ESRCH)
		t->st = SCHED_DEAD;
}

bool call_fn_passive(int fn)
{
	return fn == FN_MUTEX_TRYLOCK || fn == FN_SPIN_TRYLOCK ||
	       fn == FN_RWLOCK_TRYRDLOCK || fn == FN_RWLOCK_TRYWRLOCK ||
	       fn == FN_SEM_TRYWAIT || fn == FN_MTX_TRYLOCK;
}

bool thread_point_reads(const struct thread *t)
{
	/* a racy read, or an atomic load (a plain mov of an _Atomic, Go's
	 * atomic.Load): not a locked read-modify-write, which writes */
	return (t->kind == OP_ACCESS || t->kind == OP_ATOMIC) && !t->arg;
}

static void reach_point(struct session *s, struct thread *t)
{
	/*
	 * A thread that reaches the same read or trylock on the same object
	 * again, with only reads in between and no other thread run, is
	 * spinning (a busy-wait on flags, a trylock loop): treat the point as a yield, so the others run
	 * first and the spin cannot starve them.  See tests/targets/peterson.
	 */
	bool passive = thread_point_reads(t) ||
		       (t->kind == OP_CALL && call_fn_passive(t->fn));

	/* a sched_yield or a spin point changes nothing a spin reads: a
	 * loop of loads and yields is a spin too */
	if ((!passive && t->kind != OP_YIELD && t->kind != OP_SPIN) ||
	    s->switches != t->spin_switch) {
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
	if (t->wake_due) {
		t->wake_due = false;
		if (!passive && !t->yield && t->kind != OP_SPIN)
			spinners_wake(s, t);
	}
	t->st = SCHED_ENABLED;
	s->need_schedule = true;
}

void thread_reach_point(struct session *s, struct thread *t)
{
	reach_point(s, t);
}

void thread_access_point(struct session *s, struct thread *t, uint64_t pc,
			 uint64_t obj, bool write, uint8_t fn)
{
	t->stop = STOP_NONE;
	t->kind = OP_ACCESS;
	t->fn = fn;
	t->arg = write;
	t->obj = obj;
	t->pc = pc;
	t->yield = false;
	reach_point(s, t);
}

void thread_call_point(struct thread *t, const struct bp *b, uint64_t rdi,
		       uint64_t rsi, uint64_t ret)
{
	t->kind = OP_CALL;
	t->fn = b->fn;
	t->yield = false;
	t->arg = 0;
	t->obj = rdi;
	t->cond_mutex = rsi; /* for pthread_cond_wait */
	t->pc = ret;
	if (b->fn == FN_JOIN || b->fn == FN_THRD_JOIN) {
		/* join's object is the joined thread's tid word */
		t->obj = rdi + t->p->join_off;
	}
}

/*
 * Thread t's exit runs now: what the kernel does with its robust list as
 * it dies, done here first (the kernel then finds nothing of t's).  Each
 * futex t owns gets FUTEX_OWNER_DIED, and where FUTEX_WAITERS was set one
 * waiter is woken: the kernel would wake one of its own waiters, and it
 * has none (ptloom holds them), so the waiter would wait forever, a false
 * deadlock.  Done before the exit runs, it is the same in every run.  The
 * list as the kernel reads it (struct robust_list_head: next,
 * futex_offset, list_op_pending), at most ROBUST_LIST_LIMIT entries.
 */
void robust_release(struct session *s, struct thread *t)
{
	struct process *p = t->p;
	uint64_t head[3], e, tag = (uint64_t)p->idx << 48, addr = 0;
	size_t len = 0;

	if (syscall(SYS_get_robust_list, t->tid, &addr, &len) || !addr ||
	    mem_read(p, addr, head, sizeof(head)))
		return;
	e = head[0];
	for (int n = 0; n <= 2048; n++) {
		bool pending = n == 2048 || e == addr;
		uint64_t entry = pending ? head[2] : e, next = 0;
		uint32_t word;
		int woken;

		if (!pending && e == head[2])
			head[2] = 0; /* in the list: not twice */
		if (entry && !mem_read(p, entry + head[1], &word, 4) &&
		    (word & FUTEX_TID_MASK) == (uint32_t)t->tid) {
			uint32_t dead = (word & FUTEX_WAITERS) |
					FUTEX_OWNER_DIED;

			if (!mem_write(p, entry + head[1], &dead, 4) &&
			    (word & FUTEX_WAITERS))
				futex_wake_addr(s, (entry + head[1]) ^ tag, 1,
						~0u, &woken);
		}
		if (pending || mem_read(p, e, &next, 8))
			break;
		e = next;
	}
}

/*
 * Race discovery: t has exited, and the stack glibc allocated for it
 * holds nothing anybody may read but its descriptor; glibc gives it to a
 * thread created later once the kernel has cleared t's tid (a plain load
 * in pthread_create, which nobody observes), so its next owner does not
 * race with t (SYNC_FREE, as for a freed heap block).  Before, the
 * frames of detached threads made way for the next ones' in races
 * reported on the reused stack.
 */
static void forget_dead_stack(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;
	enum { MAX = 1024 };
	struct proc_map *m;
	int n;

	if (t->p->dead || !t->regs.fs_base || !(m = malloc(MAX * sizeof(*m))))
		return;
	n = proc_maps(t->p->pid, m, MAX, NULL);
	for (int i = 0; i < n; i++)
		if (proc_map_glibc_stack(&m[i], t->regs.fs_base) &&
		    m[i].hi - m[i].lo <= INT_MAX) {
			o->sync(o->ctx, t->idx, SYNC_FREE,
				m[i].lo | process_tag(t->p),
				(int)(m[i].hi - m[i].lo));
			break;
		}
	free(m);
}

/* A thread is gone: off every queue, its joiners woken. */
void thread_gone(struct session *s, struct thread *t)
{
	if (t->st == SCHED_DEAD && t->block == BLOCK_NONE && !t->npfd)
		return;
	t->st = SCHED_DEAD;
	t->block = BLOCK_NONE;
	syscall_close_fds(t);
	futex_remove(&s->ft, t->idx);
	futex_pi_owner_gone(s, t);
	if (t->ctid && s->cfg->observer)
		s->cfg->observer->sync(s->cfg->observer->ctx, t->idx,
				       SYNC_RELEASE, t->ctid | process_tag(t->p),
				       -1);
	if (s->cfg->observer && t->tid != t->p->pid)
		forget_dead_stack(s, t);
	if (t->ctid) {
		/* The kernel cleared the tid word and woke nobody we model:
		 * wake the joiners. See tests/targets/join_many. */
		int woken;

		futex_wake_addr(s, t->ctid ^ ((uint64_t)t->p->idx << 48),
				INT_MAX, ~0u, &woken);
	}
}

/*
 * The same thread ids in every run of an exploration.  A run's threads
 * would get whatever ids the kernel's allocator hands out next, different
 * in every run; the state key (tracer/state.c) hashes a word equal to one
 * of the run's thread ids as that thread's number, so a word that only
 * happens to equal an id in one run (a malloc chunk's size, a counter)
 * hashed differently there, and equal states were missed by chance: the
 * same exploration could explore a few more schedules one time than the
 * next.  So thread i of a run asks (clone3's set_tid) for the id thread i
 * had in the first run that created it.  That id is free again (the
 * kernel's allocator hands out ids cyclically, so another process gets
 * it only after the ids wrapped round).  Only where the kernel lets this
 * process choose ids (CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN over the
 * pid namespace), for thread clones outside new namespaces; a clone the
 * kernel refuses then runs again as the program made it.  Every -j worker
 * has its own table (tracer_forget_tids).
 */
#define TID_SLOTS 256
#define CLONE_ARGS_VER1 80
#define CLONE_ARGS_VER2 88
#define RED_ZONE 128
static pid_t tid_slot[TID_SLOTS];
static int may_set_tid = -1;
/* the canonical ids: T-number i of a first run asks for id_base + i, in a
 * block of ID_BLOCK ids that the command line picks from the middle half
 * of the id space (-j worker w: the w-th block after it), so that two
 * explorations of a program that reads its ids (prints its pid, hashes a
 * tid) run alike, as do their runs and replays, and two programs explored
 * side by side rarely want the same ones; an id another process holds is
 * left to the kernel */
#define ID_BLOCK TID_SLOTS
static long id_base = -1, id_max;
static int id_worker;

void tracer_forget_tids(int worker)
{
	memset(tid_slot, 0, sizeof(tid_slot));
	id_worker = worker;
	id_base = -1;
}

int tracer_worker(void)
{
	return id_worker;
}

static pid_t canonical_id(const struct session_config *c, int idx)
{
	if (id_base < 0) {
		FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
		uint64_t h = 0xcbf29ce484222325ull;
		long blocks;

		id_max = 32768;
		if (f) {
			if (fscanf(f, "%ld", &id_max) != 1 || id_max < 4096)
				id_max = 32768;
			fclose(f);
		}
		for (char *const *a = c->argv; a && *a; a++)
			for (const char *p = *a;; p++) {
				h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
				if (!*p)
					break;
			}
		blocks = id_max / 2 / ID_BLOCK;
		id_base = id_max / 4 +
			  (long)((h + (uint64_t)id_worker) % (uint64_t)blocks) *
				  ID_BLOCK;
	}
	if (idx < 0 || idx >= ID_BLOCK || id_base + idx >= id_max)
		return 0;
	return (pid_t)(id_base + idx);
}

/* Can this process choose a new process's id?  Asking for its own id
 * says: EEXIST yes, EPERM no.  PTLOOM_NO_SET_TID=1: no (tests). */
static bool set_tid_allowed(void)
{
	if (may_set_tid < 0) {
		pid_t me = getpid();
		uint64_t a[CLONE_ARGS_VER1 / 8] = { 0 };
		long r;

		a[4] = SIGCHLD;
		a[8] = (uint64_t)(uintptr_t)&me;
		a[9] = 1;
		r = getenv("PTLOOM_NO_SET_TID")
			    ? (errno = EPERM, -1)
			    : syscall(SYS_clone3, a, sizeof(a));
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, NULL, __WALL);
		may_set_tid = r < 0 && errno == EEXIST;
	}
	return may_set_tid == 1;
}

/* The id T-number idx asks the kernel for: the recording's
 * (session_config.ids), else the one it had in this process's first run
 * that made it, else the canonical one; 0: none. */
pid_t thread_wanted_id(const struct session *s, int idx)
{
	const struct session_config *c = s->cfg;

	if (idx >= 0 && idx < c->nids && c->ids && c->ids[idx] > 0)
		return c->ids[idx];
	if (idx >= 0 && idx < TID_SLOTS && tid_slot[idx])
		return tid_slot[idx];
	return canonical_id(c, idx);
}

static bool id_free(pid_t id)
{
	return kill(id, 0) < 0 && errno == ESRCH;
}

static int id_digits(long id)
{
	int d = 1;

	while (id >= 10) {
		id /= 10;
		d++;
	}
	return d;
}

/* The id T-number idx asks the kernel for now: its wanted one
 * (thread_wanted_id) if free, else the nearest free one with as many
 * decimal digits that no other T-number wants; 0: none.  Another process
 * may hold the wanted one (a wrap of the ids on a busy machine, another
 * exploration of the same command line), and the kernel then gave any:
 * node names its main context "/usr/bin/node[PID]" in UTF-16 on the heap,
 * so a replay of a recording at pid 16640 that got a 4-digit pid saw all
 * its later objects 48 bytes off and diverged at V8's code-object mutex.
 * A program's layout follows its ids' widths (a pid in a name, a log
 * line) far more often than their values. */
pid_t thread_id_to_ask(const struct session *s, int idx)
{
	pid_t want = thread_wanted_id(s, idx);

	if (want <= 0 || id_free(want))
		return want;
	(void)canonical_id(s->cfg, 0); /* id_max read */
	long lo = 1, hi;
	int d = id_digits(want);

	for (int i = 1; i < d; i++)
		lo *= 10;
	hi = lo * 10 - 1;
	if (id_max > 0 && hi >= id_max)
		hi = id_max - 1;
	for (long k = 1; k <= 4 * ID_BLOCK; k++)
		for (int sign = -1; sign <= 1; sign += 2) {
			long c = want + sign * k;
			bool other = false;

			if (c < lo || c > hi || c < 2)
				continue;
			for (int j = 0; j < TID_SLOTS && !other; j++)
				other = j != idx && thread_wanted_id(s, j) == c;
			if (!other && id_free((pid_t)c))
				return (pid_t)c;
		}
	return 0;
}

/* T-number idx got kernel id got: later runs ask for it (a process that
 * took the first run's after a wrap keeps it: the kernel's id is this
 * index's from then on); one the recording had is counted if it is not. */
void thread_note_id(struct session *s, int idx, pid_t got)
{
	const struct session_config *c = s->cfg;

	if (idx < 0)
		return;
	if (idx < TID_SLOTS)
		tid_slot[idx] = got;
	if (idx < c->nids && c->ids && c->ids[idx] > 0 &&
	    c->ids[idx] != got && !s->res->ids_refused++)
		s->res->id_refused_thread = idx;
}

bool tracer_may_set_ids(void)
{
	return set_tid_allowed();
}

/* Thread t's clone (a thread's or a process's) asks for the id the new
 * T-number is to have (thread_wanted_id). */
void thread_clone_same_tid(struct session *s, struct thread *t)
{
	struct user_regs_struct *r = &t->regs;
	uint64_t a[CLONE_ARGS_VER2 / 8 + 1] = { 0 }, size, addr;
	const uint64_t new_ns = 0x20000000ull /* CLONE_NEWPID */ |
				0x10000000ull /* CLONE_NEWUSER */;
	int idx = s->nth;
	pid_t want;

	if (idx <= 0 || !thread_wanted_id(s, idx) ||
	    t->stop != STOP_SECCOMP || regs_get(t) || !set_tid_allowed())
		return;
	if (r->orig_rax == SYS_clone3) {
		size = r->rsi;
		if (size < 64 || size > CLONE_ARGS_VER2 ||
		    mem_read(t->p, r->rdi, a, size) ||
		    (size >= CLONE_ARGS_VER1 && (a[8] || a[9])))
			return; /* its own ids, or a struct we do not know */
		size = size == CLONE_ARGS_VER2 ? size : CLONE_ARGS_VER1;
	} else if (r->orig_rax == SYS_clone) {
		uint64_t fl = r->rdi;

		/* clone's flags, stack, parent_tid, child_tid, tls as
		 * struct clone_args; CLONE_DETACHED is clone3's EINVAL, and
		 * CLONE_PIDFD with CLONE_PARENT_SETTID clone's */
		if ((fl & 0x00400000ull) ||
		    ((fl & CLONE_PIDFD) && (fl & CLONE_PARENT_SETTID)))
			return;
		a[0] = fl & ~0xffull;
		a[1] = (fl & CLONE_PIDFD) ? r->rdx : 0;
		a[2] = r->r10;
		a[3] = (fl & CLONE_PARENT_SETTID) ? r->rdx : 0;
		a[4] = (fl & (CLONE_THREAD | CLONE_PARENT)) ? 0 : fl & 0xff;
		if (r->rsi) {
			a[5] = r->rsi - 1; /* the child starts at rsi */
			a[6] = 1;
		}
		a[7] = r->r8;
		size = CLONE_ARGS_VER1;
	} else {
		return;
	}
	if (a[0] & new_ns)
		return;
	/* free now, or one like it (thread_id_to_ask); PTLOOM_SET_TID_TAKEN=1
	 * asks for a taken one, so that the kernel refuses (tests) */
	if (getenv("PTLOOM_SET_TID_TAKEN"))
		want = getpid();
	else if (!(want = thread_id_to_ask(s, idx)))
		return;
	/* the struct and the id under the red zone of the creator's stack,
	 * dead space (nothing runs there before the syscall reads it) */
	addr = (r->rsp - RED_ZONE - sizeof(a)) & ~15ull;
	a[8] = addr + CLONE_ARGS_VER2;
	a[9] = 1;
	a[CLONE_ARGS_VER2 / 8] = (uint32_t)want;
	if (mem_write(t->p, addr, a, sizeof(a)))
		return;
	t->clone_rdi = r->rdi;
	t->clone_rsi = r->rsi;
	t->clone_nr = r->orig_rax;
	r->orig_rax = SYS_clone3;
	r->rdi = addr;
	r->rsi = size;
	t->regs_dirty = true;
	t->tid_clone = true;
}

/* Put back the registers thread_clone_same_tid changed (the clone has
 * been made or refused). */
static void clone_regs_back(struct thread *t)
{
	if (regs_get(t))
		return;
	t->regs.rdi = t->clone_rdi;
	t->regs.rsi = t->clone_rsi;
	t->regs.orig_rax = t->clone_nr;
	t->regs_dirty = true;
	t->tid_clone = false;
}

void thread_clone_made(struct session *s, struct thread *parent,
		       struct thread *c)
{
	thread_note_id(s, c->idx, c->tid);
	if (parent->tid_clone)
		clone_regs_back(parent);
}

void thread_fix_at_exit(struct thread *t, const struct user_regs_struct *was)
{
	t->exit_fix = true;
	t->exit_args[0] = was->rdi;
	t->exit_args[1] = was->rsi;
	t->exit_args[2] = was->rdx;
	t->exit_args[3] = was->r10;
}

bool thread_exit_fix(struct session *s, struct thread *t)
{
	uint64_t nr;

	t->exit_fix = false;
	if (regs_get(t))
		return false;
	nr = t->regs.orig_rax;
	if (nr == SYS_open || nr == SYS_openat || nr == SYS_openat2 ||
	    nr == SYS_creat || nr == SYS_semget || nr == SYS_msgget ||
	    nr == SYS_shmget || nr == SYS_mmap || nr == SYS_shmat ||
	    nr == SYS_mknod || nr == SYS_mknodat || nr == SYS_mkdir ||
	    nr == SYS_mkdirat) {
		if (t->fifo_going)
			/* a FIFO's open returned: a promise kept */
			fifo_opened(s, t);
		if (nr == SYS_mmap || nr == SYS_shmat) {
			/* a file mapped shared, a SysV segment attached:
			 * named with its other mappings */
			syscall_mmap_exit(s, t);
		} else if ((int64_t)t->regs.rax < 0) {
			/* (failed: nothing to note) */
		} else if (nr == SYS_mknod || nr == SYS_mknodat) {
			/* a FIFO made: the run's (tracer/fifo.c) */
			syscall_mknod_exit(s, t);
		} else if (nr == SYS_mkdir || nr == SYS_mkdirat) {
			/* a directory made: the run's */
			syscall_created_exit(s, t);
		} else if (nr == SYS_semget || nr == SYS_msgget ||
			   nr == SYS_shmget) {
			/* a SysV IPC object of IPC_PRIVATE's: the run's
			 * alone */
			if (s->nipc < 32) {
				s->ipc[s->nipc].nr = (long)nr;
				s->ipc[s->nipc++].id = (int)t->regs.rax;
			}
		} else {
			/* a regular file opened to write or create */
			uint64_t fl = nr == SYS_openat ? t->regs.rdx
				      : nr == SYS_open ? t->regs.rsi
						       : 0;

			syscall_file_opened(t, (int)t->regs.rax);
			if ((fl & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
				syscall_created_exit(s, t);
		}
		t->stop = STOP_NONE;
		resume(s, t, 0);
		return true;
	}
	bool poll = nr == SYS_select || nr == SYS_pselect6 || nr == SYS_ppoll;

	if (nr != SYS_wait4 && nr != SYS_waitid && nr != SYS_tgkill &&
	    nr != SYS_rt_tgsigqueueinfo && !poll)
		return false; /* not the syscall's exit (missed): a trap */
	s->stop_kinds[poll ? STOPK_POLL : STOPK_PROC]++;
	if ((int64_t)t->regs.rax <= -512 && (int64_t)t->regs.rax >= -516) {
		/* interrupted, to be restarted: as ptloom rewrote it */
		t->exit_fix = true;
		t->stop = STOP_NONE;
		resume(s, t, 0);
		return true;
	}
	if (poll && t->poll_left_at_exit) {
		/* the kernel answered a ready wait: the time left is the
		 * virtual clock's (syscall.c poll_time_left) */
		t->poll_left_at_exit = false;
		syscall_poll_left_write(t, t->poll_tmo_ns);
	}
	uint64_t ru = nr == SYS_wait4 ? t->regs.r10
		      : nr == SYS_waitid ? t->regs.r8 : 0;

	if (ru && (int64_t)t->regs.rax >= 0) {
		/* as getrusage(RUSAGE_CHILDREN) answers (syscall.c) */
		struct rusage zero;

		memset(&zero, 0, sizeof(zero));
		mem_write(t->p, ru, &zero, sizeof(zero));
	}
	t->regs.rdi = t->exit_args[0];
	t->regs.rsi = t->exit_args[1];
	t->regs.rdx = t->exit_args[2];
	t->regs.r10 = t->exit_args[3];
	t->regs_dirty = true;
	t->stop = STOP_NONE;
	resume(s, t, 0);
	return true;
}

void thread_clone_retry(struct session *s, struct thread *t)
{
	if (regs_get(t))
		return;
	/* back to the syscall instruction, as the program made the call;
	 * its seccomp stop comes again (syscall_enter lets it run) */
	t->regs.rip -= 2;
	t->regs.rax = t->clone_nr;
	clone_regs_back(t);
	t->clone_retry = true;
	if (s->nth < TID_SLOTS)
		tid_slot[s->nth] = 0;
	t->stop = STOP_NONE;
	resume(s, t, 0);
}

/* A thread's first stop: what its creator's clone changed put back. */
static void fix_child_regs(struct thread *c)
{
	if (!c->fix_regs || regs_get(c))
		return;
	c->regs.rdi = c->fix_rdi;
	c->regs.rsi = c->fix_rsi;
	c->regs_dirty = true;
	c->fix_regs = false;
}

/* The live threads that share ea with t (its process's; with ea, those
 * of processes sharing its memory too: every process for a file's
 * pages): t alone when 1. */
static int threads_sharing(struct session *s, const struct thread *t,
			   uint64_t ea)
{
	const struct shm_range *r = ea ? shm_at(t->p, ea) : NULL;
	int live = 0;

	/* a file's pages: any process may map it (apart), or have mapped
	 * it before this one did */
	for (int i = 0; i < s->nth; i++)
		live += s->th[i].st != SCHED_DEAD &&
			(s->th[i].p == t->p ||
			 (r && (!r->anon || s->th[i].p->nshm)));
	return live;
}

/*
 * Does a thread of t's process that ended (not joined) have accesses the
 * observer does not order before t's next?  Then t, though alone, races
 * with them: a worker that published a flag and then wrote the data, read
 * by main once the worker was gone (before its join).  Threads of other
 * processes that shared memory with t are left out: what orders their
 * end for t (a pipe's end of file, a signal) is not all observed.
 */
static bool unordered_dead(struct session *s, const struct thread *t)
{
	const struct access_observer *o = s->cfg->observer;

	if (!o || !o->after)
		return false;
	for (int i = 0; i < s->nth; i++)
		if (s->th[i].st == SCHED_DEAD && i != t->idx &&
		    s->th[i].p == t->p && !o->after(o->ctx, t->idx, i))
			return true;
	return false;
}

/* As threads_sharing, but at least two while a thread of t's process that
 * ended has accesses not ordered before t's (unordered_dead): the threads
 * t's access at ea may race with, itself included. */
static int threads_racing(struct session *s, const struct thread *t,
			  uint64_t ea)
{
	int live = threads_sharing(s, t, ea);

	if (live <= 1 && t->p->handler_race)
		return 2; /* and its handler (signal_handler_may_run) */
	return live <= 1 && ea && unordered_dead(s, t) ? 2 : live;
}

/*
 * c was just created by the clone or fork of thread parent_idx: it is not
 * schedulable before its first stop (unless that stop came first, a
 * stray), and the parent's pending operation is the clone's return.
 * Returns the parent.
 */
struct thread *thread_born(struct session *s, struct thread *c,
			   int parent_idx, bool fork)
{
	struct thread *p = &s->th[parent_idx];

	c->st = SCHED_BLOCKED; /* not schedulable before its first stop */
	c->starting = true;
	c->ran_at = s->now + 1; /* it waits for the processor from here */
	if (p->tid_clone) {
		c->fix_regs = true;
		c->fix_rdi = p->clone_rdi;
		c->fix_rsi = p->clone_rsi;
	}
	if (take_stray(s, c->tid)) {
		c->starting = false;
		c->st = SCHED_ENABLED;
		c->kind = OP_START;
		c->stop = STOP_SIGSTOP;
		fix_child_regs(c);
	}
	if (s->cfg->observer && s->cfg->observer->sync) {
		struct access_observer *o = s->cfg->observer;
		const struct thread *pt = &s->th[parent_idx];

		/* alone as observe_access judges it (its accesses were not
		 * observed), the thread being born not counted */
		if (threads_sharing(s, pt, 0) - (c->p == pt->p) <= 1)
			o->sync(o->ctx, parent_idx, SYNC_ACQUIRE_ATOMICS, 0,
				-1);
		o->sync(o->ctx, parent_idx, SYNC_FORK, 0, c->idx);
	}
	p = &s->th[parent_idx];
	p->stop = STOP_NONE;
	p->kind = OP_CLONE;
	p->fork_return = fork;
	p->fn = 0;
	p->yield = false;
	p->obj = 0;
	p->arg = c->idx;
	return p;
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
	bp_calls_all(c->p); /* a second thread: every call a point */
	p = thread_born(s, c, parent_idx, false);
	thread_clone_made(s, p, c);
	/*
	 * The return from clone is a scheduling point too: the new thread
	 * may run before its creator goes on (an order violation: the
	 * creator initialises what the thread reads only after
	 * pthread_create).  See tests/targets/order_violation.c.
	 */
	reach_point(s, p);
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

/* No thread but t could run and no timer can fire: an instruction point
 * of t is no choice (an armed timer's expiry is an alternative at every
 * point, tests/targets/alarm_between_stores.c). */
static bool quiet_others(struct session *s, const struct thread *t)
{
	if (s->nfreep)
		return false; /* free children run meanwhile */
	if (timer_armed(s))
		return false;
	for (int i = 0; i < s->nth; i++)
		if (&s->th[i] != t && !quiet(&s->th[i]))
			return false;
	return true;
}

/* Put lifted instruction points back once two threads could run. */
void drop_lifts_if_contended(struct session *s)
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
	if (live < 2 && !s->nfreep && !timer_armed(s))
		return;
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i] && !s->procs[i]->dead)
			bp_drop_lifts(s->procs[i]);
}

/*
 * Race discovery's observation breakpoint b, hit by t at addr: report the
 * access and step over it.  Every such stop, and every single-step over
 * one, counts against the run's budget (cfg->observer->max_accesses):
 * once it is spent, no observation point traps again in any process and
 * the run goes on at the speed of a sync-points run, so a discovery run
 * costs at most the budget's stops more than one.  A hot instruction is
 * sampled, not followed: after OBSERVE_PC_CAP observations it stops
 * trapping, for the run when two threads ran it; when only one thread
 * did, it dozes until another thread of its process is scheduled (which
 * may race with the first one's last access), at most OBSERVE_WAKES
 * times.  All of it counts stops, never time: a run's observations are a
 * function of its schedule.
 */
/* The word an atomic at b is about to change is 0 after it (a lock's
 * release: xchg of 0, a decrement to 0), computed by emulating it on a
 * copy of t's registers; false when that cannot be told. */
static bool atomic_leaves_zero(struct thread *t, struct bp *b)
{
	struct user_regs_struct r = t->regs;
	uint64_t mem = 0, a;

	if (b->emul != EMUL_INSN || !emul_writes(&b->ei) || b->ei.size > 8)
		return false;
	r.rip = b->addr;
	a = emul_addr(&b->ei, &r, b->addr);
	if (mem_read(t->p, a, &mem, b->ei.size))
		return false;
	emul_run(&b->ei, &r, &mem);
	if (b->ei.size < 8)
		mem &= (1ull << (8 * b->ei.size)) - 1;
	return mem == 0;
}

/* At free(p) or realloc(p, n): the bytes malloc gave p (its chunk's
 * size less the header, as malloc_usable_size), 0 for NULL or a header
 * that cannot be read. */
static int64_t chunk_size(uint64_t p, uint64_t hdr)
{
	uint64_t size = hdr & ~7ull;

	if (!p || p < 16 || (p & 15) || size < 16 || size > (1ull << 30))
		return 0;
	return (int64_t)(size - (hdr & 2 ? 16 : 8));
}

static int64_t block_size(struct thread *t)
{
	uint64_t p, hdr = 0;

	if (regs_get(t) || !(p = t->regs.rdi) || p < 16 || (p & 15) ||
	    mem_read(t->p, p - 8, &hdr, 8))
		return 0;
	return chunk_size(p, hdr);
}

/*
 * A pthread_cond_wait that found a signal already there returns without a
 * futex wait, and glibc relocks its mutex inside, out of sight: world.c
 * takes that relock at the thread's next operation, which is after what
 * the thread reads under the mutex first (a consumer's queue: races
 * invented).  An observed access by the thread is past the return, so the
 * relock is taken before it.
 */
static void relock_before_access(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;

	if (o && t->relock) {
		o->sync(o->ctx, t->idx, SYNC_ACQUIRE, t->relock, -1);
		t->relock = 0;
	}
}

/*
 * The live threads that may touch the memory at ea of t's process: its
 * own, and those of every process it shares a writable mapping with when
 * ea is in one (a fork's parent and child, single-threaded or not).
 */
/*
 * t's access to ea at observation point b (at addr), as its stop takes it:
 * to the detector, and b sampled out when hot.  false: the run's budget
 * is spent, every observation point is gone (b with them).
 */
/* b's instruction is one plain load or store of an aligned 1, 2, 4 or 8
 * bytes at ea in code no debug information covers
 * (access_observer.access's `untyped_word`) */
static bool untyped_word(const struct bp *b, uint64_t ea, int size)
{
	const struct insn_info *in = b->insn;

	return b->untyped && in && in->nmem == 1 && !in->is_string_op &&
	       !in->vsib && in->mem_read != in->mem_write &&
	       (size == 1 || size == 2 || size == 4 || size == 8) &&
	       !(ea & (uint64_t)(size - 1));
}

/* The stacks of p's live threads that do not know theirs yet, from one
 * read of p's maps: main's [stack] (and the 8 MiB below its top it may
 * grow into), a stack glibc allocated (the mapping its thread pointer's
 * descriptor tops, its thread-local data below the descriptor); any
 * other kind (pthread_attr_setstack's, a language runtime's own) stays
 * empty.  And main's thread-local data: the anonymous mapping its
 * thread pointer is in (the loader's allocation of its TLS block and
 * descriptor). */
static void learn_stacks(struct session *s, struct process *p)
{
	enum { MAX = 1024, GROWS = 8 << 20 };
	struct proc_map *m = malloc(MAX * sizeof(*m));
	int n = m ? proc_maps(p->pid, m, MAX, NULL) : -1;

	for (int i = 0; i < s->nth; i++) {
		struct thread *u = &s->th[i];

		if (u->p != p || u->st == SCHED_DEAD ||
		    (u->stk_known && u->stk_img == p->img))
			continue;
		u->stk_known = true;
		u->stk_img = p->img;
		u->stk_lo = u->stk_hi = u->tls_lo = u->tls_hi = 0;
		for (int k = 0; u->tid == p->pid && k < n; k++)
			if (m[k].anon && u->regs.fs_base >= m[k].lo &&
			    u->regs.fs_base < m[k].hi) {
				u->tls_lo = m[k].lo;
				u->tls_hi = m[k].hi;
			}
		for (int k = 0; k < n; k++) {
			if (u->tid == p->pid && m[k].stack) {
				u->stk_hi = m[k].hi;
				u->stk_lo = m[k].hi - m[k].lo > GROWS
						    ? m[k].lo
						    : m[k].hi - GROWS;
				break;
			}
			if (u->tid != p->pid && u->regs.fs_base &&
			    proc_map_glibc_stack(&m[k], u->regs.fs_base)) {
				u->stk_lo = m[k].lo;
				u->stk_hi = m[k].hi;
				break;
			}
		}
	}
	free(m);
}

/*
 * Race discovery: t's observed access at ea is to the stack or the
 * thread-local data of another live thread of its process: data on a
 * stack escaped to another thread (a counter on main's stack handed to a
 * worker), or a __thread variable's address did.  Its owner reaches it
 * with stack-relative or %fs-relative accesses, which discovery leaves
 * out of its points unless session_config.observe_stack: the run says so
 * (run_result.stack_shared), and discovery observes them from then on.
 */
static void note_stack_shared(struct session *s, struct thread *t,
			      uint64_t ea)
{
	if (s->stack_shared || s->cfg->observe_stack)
		return;
	for (int i = 0; i < s->nth; i++) {
		struct thread *u = &s->th[i];

		if (u == t || u->p != t->p || u->st == SCHED_DEAD)
			continue;
		if (!u->stk_known || u->stk_img != t->p->img)
			learn_stacks(s, t->p);
		if ((ea >= u->stk_lo && ea < u->stk_hi) ||
		    (ea >= u->tls_lo && ea < u->tls_hi)) {
			s->stack_shared++;
			return;
		}
	}
}

/* A call of free or realloc (b->freeing) as its slot logged it: the
 * block's address, its chunk header then, the return address. */
struct logged_free {
	uint64_t p, hdr, ret;
};

/* An access at ea by the instruction at pc that is an object library's
 * to its own state (bp.c add_object_libraries): pc in one's span, and ea
 * in one's too or in an object the executable holds a copy of */
static bool library_internal(const struct process *p, uint64_t pc,
			     uint64_t ea)
{
	bool in_lib = false;

	for (int i = 0; i < p->rt.n && !in_lib; i++)
		in_lib = pc >= p->rt.span[i][0] && pc < p->rt.span[i][1];
	if (!in_lib)
		return false;
	for (int i = 0; i < p->rt.n; i++)
		if (ea >= p->rt.span[i][0] && ea < p->rt.span[i][1])
			return true;
	for (int i = 0; i < p->rt.ncopies; i++)
		if (ea >= p->rt.copies[i][0] + p->rt.copies_bias &&
		    ea < p->rt.copies[i][1] + p->rt.copies_bias)
			return true;
	return false;
}

/* An OpenMP runtime's synchronisation (enum bp_omp): its keys have no
 * address (bit 63), one of each kind per process; the kinds come in
 * pairs, acquire then release */
_Static_assert(BP_OMP_RELEASE_FORK == BP_OMP_ACQUIRE_FORK + 1 &&
		       BP_OMP_ACQUIRE_BARRIER == BP_OMP_ACQUIRE_FORK + 2 &&
		       BP_OMP_RELEASE_BARRIER == BP_OMP_ACQUIRE_FORK + 3 &&
		       BP_OMP_ACQUIRE_MUTEX == BP_OMP_ACQUIRE_FORK + 4 &&
		       BP_OMP_RELEASE_MUTEX == BP_OMP_ACQUIRE_FORK + 5,
	       "omp_sync takes a kind's key and direction from its place");
static void omp_sync(struct session *s, struct thread *t, uint8_t kind)
{
	struct access_observer *o = s->cfg->observer;
	int k = kind - BP_OMP_ACQUIRE_FORK;
	uint64_t key = (1ull << 63) | (0x7075ull << 44) |
		       ((uint64_t)t->p->idx << 4) | (uint64_t)(k / 2);

	if (kind == BP_OMP_EVERYONE)
		session_acquire_everyone(s, t);
	else
		o->sync(o->ctx, t->idx, k & 1 ? SYNC_RELEASE : SYNC_ACQUIRE,
			key, -1);
}

static bool observe_call(struct session *s, struct thread *t, struct bp *b,
			 uint64_t addr, uint64_t ea, int size, bool write,
			 const struct logged_free *lf)
{
	struct access_observer *o = s->cfg->observer;
	int live = 0;
	bool atomic = (b->insn && b->insn->is_atomic) || b->src_atomic ||
		      (ea && bp_atomic_datum(t->p, s->cfg, ea));

	/* an OpenMP runtime's synchronisation: at every hit */
	bool pinned = b->omp != BP_OMP_NONE;

	if (o && pinned) {
		omp_sync(s, t, b->omp);
		if (b->sync) { /* (the entry of a runtime's function) */
			s->obs_sync++;
			return true;
		}
	}
	relock_before_access(s, t);
	live = threads_racing(s, t, ea);
	if (b->sync)
		s->obs_sync++;
	else
		s->obs_stops++;
	s->obs_stack += b->stack && !b->sync;
	if (o && b->freeing) {
		int64_t size = lf ? chunk_size(lf->p, lf->hdr) : block_size(t);
		uint64_t ret = lf ? lf->ret : 0, p = lf ? lf->p : t->regs.rdi;

		/* at the function's entry: its return address on top */
		if (size > 0 && o->freed &&
		    (lf || !mem_read(t->p, t->regs.rsp, &ret, sizeof(ret))) &&
		    ret)
			o->freed(o->ctx, t->idx, ret, p | process_tag(t->p),
				 (uint64_t)size);
		else if (size > 0)
			o->sync(o->ctx, t->idx, SYNC_FREE,
				p | process_tag(t->p), (int)size);
	} else if (o && ea && b->sync) {
		/* a shared object's lock: synchronisation only, and never
		 * sampled out (a lock seen 256 times and then no more would
		 * leave what it orders unordered: races invented), not even
		 * while its thread is alone: what it takes from threads that
		 * have exited (malloc's free lists) orders their accesses
		 * before the ones it makes once a new thread runs */
		o->sync(o->ctx, t->idx,
			atomic_leaves_zero(t, b) ? SYNC_ATOMIC_FREE
						 : SYNC_ATOMIC,
			mem_name(t->p, ea), -1);
	} else if (o && ea && library_internal(t->p, addr, ea)) {
		/* (sampled as any other) */
		if (++b->hits >= OBSERVE_PC_CAP && !pinned)
			bp_retire(t->p, b);
	} else if (o && ea && (live > 1 || atomic)) {
		if (live > 1)
			note_stack_shared(s, t, ea);
		o->access(o->ctx, t->idx, addr, mem_name(t->p, ea), size,
			  write, atomic, untyped_word(b, ea, size));
		s->observed++;
		if (b->hits == 0)
			b->first_tid = t->idx;
		else if (b->first_tid != t->idx)
			b->shared = true;
		/* an atomic orders what it is seen with: never sampled */
		if (pinned) {
			/* (never sampled out) */
		} else if (b->runtime && ++b->hits >= OBSERVE_RUNTIME_CAP) {
			bp_retire(t->p, b);
		} else if (!b->runtime && ++b->hits >= OBSERVE_PC_CAP &&
			   !atomic) {
			if (b->shared || b->wakes >= OBSERVE_WAKES)
				bp_retire(t->p, b);
			else
				bp_doze(t->p, b);
		}
	} else if (o && live <= 1 && !pinned) {
		/* alone in its process: no race yet; back when a thread is
		 * born */
		bp_lift(t->p, b);
	} else if (o && !ea && !pinned) {
		bp_retire(t->p, b); /* no operand to observe */
	}
	if (o && o->max_accesses &&
	    (s->obs_stops + s->obs_steps >= o->max_accesses ||
	     s->obs_sync >= o->max_accesses)) {
		s->obs_spent = true;
		for (int i = 0; i < s->nprocs; i++)
			if (s->procs[i] && !s->procs[i]->dead &&
			    s->procs[i]->observing)
				bp_remove_observers(s->procs[i]);
		return false;
	}
	return true;
}

static bool observe_access(struct session *s, struct thread *t, struct bp *b,
			   uint64_t addr, uint64_t ea, int size, bool write)
{
	return observe_call(s, t, b, addr, ea, size, write, NULL);
}

/* The bytes of a memcpy or memset call observed (the detector keeps at
 * most 64 KiB of one access as well) */
#define MEMFN_OBSERVE_MAX 65536

/* struct ranged_op.fn of a rep cmps and a rep scas (_ALL: from the last
 * element down, taken whole) */
enum {
	RANGED_CMPS = DISASM_MEMFN_COUNT,
	RANGED_SCAS,
	RANGED_CMPS_ALL,
	RANGED_SCAS_ALL
};
_Static_assert((int)RANGED_SCAS_ALL < (int)DISASM_MEMFN_STATE,
	       "a rep's kinds lie between the functions' and the states'");

/*
 * An access of many bytes at b, as t is about to make it: a call of one
 * of libc's memory or string functions (bp.memfn: libc's accesses, which
 * no observation point sees, taken as the program's at its call), or a
 * rep string instruction (a struct copy gcc makes of memcpy, an inlined
 * strlen or memcmp).  Its operands into *op, from t's registers; false
 * when b is no such access.
 */
static bool ranged_access(struct thread *t, struct bp *b,
			  struct ranged_op *op)
{
	int size = 0;
	bool write = false;

	memset(op, 0, sizeof(*op));
	op->el = 1;
	if (b->memfn) {
		if (regs_get(t))
			return false;
		op->fn = b->memfn;
		op->dst = t->regs.rdi;
		op->src = t->regs.rsi;
		op->n = t->regs.rdx;
		op->c = t->regs.rsi & 0xff;
		if (op->fn == DISASM_MEMFN_BZERO || op->fn == DISASM_MEMFN_STRNLEN)
			op->n = t->regs.rsi;
		else if ((op->fn == DISASM_MEMFN_FREAD ||
			  op->fn == DISASM_MEMFN_FWRITE) &&
			 __builtin_mul_overflow(t->regs.rsi, t->regs.rdx,
						&op->n))
			op->n = MEMFN_OBSERVE_MAX;
		return true;
	}
	if (!bp_operand_kind(b, &size, &write) || !b->insn->is_string_op ||
	    !b->insn->has_rep)
		return false;
	const struct insn_info *in = b->insn;
	const struct disasm_mem *m = in->mem;
	bool movs = in->nmem == 2 && m[0].write && !m[0].read && m[1].read &&
		    !m[1].write;
	bool stos = in->nmem == 1 && m[0].write && !m[0].read;
	bool cmps = in->nmem == 2 && !m[0].write && !m[1].write;
	bool scas = in->nmem == 1 && !m[0].write && m[0].read;
	uint64_t el = m[0].size ? m[0].size : 1;

	if ((!movs && !stos && !cmps && !scas) || el > 8 || regs_get(t))
		return false;
	uint64_t cnt = m[0].addr32 ? (uint32_t)t->regs.rcx : t->regs.rcx;

	if (cnt > MEMFN_OBSERVE_MAX / el)
		cnt = MEMFN_OBSERVE_MAX / el;
	op->el = (uint8_t)el;
	op->dst = t->regs.rdi;
	op->src = t->regs.rsi;
	op->n = cnt;
	op->c = t->regs.rax;
	op->repne = in->repne;
	op->fn = movs ? DISASM_MEMFN_COPY
		 : stos ? DISASM_MEMFN_SET
		 : cmps ? RANGED_CMPS
			: RANGED_SCAS;
	if (t->regs.eflags & 0x400) {
		/* DF set: from the last element down, taken whole */
		op->dst = op->dst + el - cnt * el;
		op->src = op->src + el - cnt * el;
		if (cmps || scas)
			op->fn = cmps ? RANGED_CMPS_ALL : RANGED_SCAS_ALL;
	}
	if (movs || stos)
		op->n = cnt * el;
	return true;
}

/* how a string function's scan goes (mem_scan) */
struct scan_how {
	bool two;	/* compares a with b (else a with c) */
	bool nul;	/* ends after a's NUL */
	bool fold;	/* ASCII case folded */
	uint8_t until;	/* 1: ends after the first difference; 2: after
			 * the first equal; 0 neither */
	uint8_t el;
	uint64_t c;
};

static uint64_t el_value(const uint8_t *v, int el, bool fold)
{
	uint64_t x = 0;

	memcpy(&x, v, (size_t)el);
	if (fold && el == 1 && x >= 'A' && x <= 'Z')
		x += 'a' - 'A';
	return x;
}

/*
 * The number of elements a function that scans memory from a (and b)
 * reads, at most max: up to and with the element its scan ends at.  What
 * cannot be read ends it (the program faults there itself).
 */
static uint64_t mem_scan(struct process *p, uint64_t a, uint64_t b,
			 uint64_t max, const struct scan_how *h)
{
	uint8_t ba[512], bb[512];
	uint64_t done = 0, el = h->el ? h->el : 1;
	uint64_t mask = el == 8 ? ~0ull : (1ull << (8 * el)) - 1;

	while (done < max) {
		uint64_t pa = a + done * el, pb = b + done * el;
		uint64_t chunk = sizeof(ba), room = 4096 - (pa & 4095);

		if (room < chunk)
			chunk = room;
		if (h->two && 4096 - (pb & 4095) < chunk)
			chunk = 4096 - (pb & 4095);
		chunk -= chunk % el;
		if (!chunk)
			chunk = el; /* (an element across two pages) */
		if ((max - done) * el < chunk)
			chunk = (max - done) * el;
		if (mem_read(p, pa, ba, chunk) ||
		    (h->two && mem_read(p, pb, bb, chunk)))
			return done;
		for (uint64_t k = 0; k < chunk; k += el) {
			uint64_t x = el_value(ba + k, (int)el, h->fold);
			uint64_t y = h->two ? el_value(bb + k, (int)el, h->fold)
					    : h->c & mask;

			done++;
			if ((h->until == 1 && x != y) ||
			    (h->until == 2 && x == y) || (h->nul && !x))
				return done;
		}
	}
	return max;
}

/* The string at a (at most max bytes) into buf: its length with its NUL,
 * or what could be read of it (then not NUL-terminated: buf holds max
 * bytes at most, and max + 1 are there) */
static uint64_t mem_string(struct process *p, uint64_t a, char *buf,
			   uint64_t max)
{
	uint64_t done = 0;

	while (done < max) {
		uint64_t chunk = 4096 - ((a + done) & 4095);

		if (chunk > max - done)
			chunk = max - done;
		if (mem_read(p, a + done, buf + done, chunk))
			break;
		const char *z = memchr(buf + done, 0, chunk);

		if (z)
			return (uint64_t)(z - buf) + 1;
		done += chunk;
	}
	buf[done] = 0;
	return done;
}

/* How far a function that scans the string at s reads it (strstr,
 * strspn, strcspn, atoi: DISASM_MEMFN_STRSTR...), arg its other string
 * (the needle, the set; 0 none): the bytes of s, and of arg into *alen */
static uint64_t scan_extent(struct process *p, uint8_t fn, uint64_t s,
			    uint64_t arg, uint64_t *alen)
{
	static char hay[65536 + 1], set[65536 + 1];
	uint64_t n = mem_string(p, s, hay, 65536);
	uint64_t k = 0;

	*alen = arg ? mem_string(p, arg, set, 65536) : 0;
	if (!n)
		return 0;
	switch (fn) {
	case DISASM_MEMFN_STRSTR: {
		const char *m = *alen ? strstr(hay, set) : NULL;

		/* to the end of the first match, else all of it */
		return m ? (uint64_t)(m - hay) + strlen(set) : n;
	}
	case DISASM_MEMFN_STRSPN:
		k = strspn(hay, set);
		break;
	case DISASM_MEMFN_STRCSPN:
		k = strcspn(hay, set);
		break;
	default:
		/* a number's: blanks, then what a number of any base or a
		 * float can hold */
		while (k < n && (hay[k] == ' ' || (hay[k] >= '\t' &&
						    hay[k] <= '\r')))
			k++;
		while (k < n && hay[k] &&
		       ((hay[k] >= '0' && hay[k] <= '9') ||
			(hay[k] >= 'a' && hay[k] <= 'z') ||
			(hay[k] >= 'A' && hay[k] <= 'Z') || hay[k] == '.' ||
			hay[k] == '+' || hay[k] == '-'))
			k++;
		break;
	}
	/* and the byte that ended it */
	return k < n ? k + 1 : n;
}

/* a read or a write of n bytes at addr */
struct mrange {
	uint64_t addr, n;
	bool write;
};

/* The ranges of op (ranged_access) into r[3], reads first: how many */
static int ranged_ranges(struct process *p, const struct ranged_op *op,
			 struct mrange r[3])
{
	const uint64_t max = MEMFN_OBSERVE_MAX;
	uint64_t n = op->n < max ? op->n : max;
	struct scan_how str = { .nul = true, .el = 1 };
	struct scan_how cmp = { .two = true, .until = 1, .el = 1 };
	uint64_t len, dlen;
	int k = 0;

#define RANGE(a, len, w) \
	do { \
		uint64_t a_ = (a), n_ = (len); \
		if (a_ && n_) \
			r[k++] = (struct mrange){ a_, n_, (w) }; \
	} while (0)
	if (op->fn >= DISASM_MEMFN_STATE) {
		/* a libc function's hidden state */
		int f = (op->fn - DISASM_MEMFN_STATE) / 2;

		r[k++] = (struct mrange){ DISASM_STATE_ADDR(f), 8,
					  (op->fn - DISASM_MEMFN_STATE) & 1 };
		/* localtime's and gmtime's struct tm, which the program
		 * reads once the call returned (sizeof(struct tm)) */
		if (f == DISASM_STATE_TM && p->rt.tmbuf)
			r[k++] = (struct mrange){ p->rt.tmbuf, 56, true };
		return k;
	}
	switch (op->fn) {
	case DISASM_MEMFN_COPY:
		RANGE(op->src, n, false);
		RANGE(op->dst, n, true);
		break;
	case DISASM_MEMFN_SET:
	case DISASM_MEMFN_BZERO:
		RANGE(op->dst, n, true);
		break;
	case DISASM_MEMFN_PRINT:
		/* its first byte (the length is the output's, known at the
		 * return): enough for a reader of the string to race with
		 * it */
		RANGE(op->dst, 1, true);
		break;
	case DISASM_MEMFN_FREAD:
		RANGE(op->dst, n, true);
		break;
	case DISASM_MEMFN_FWRITE:
		RANGE(op->dst, n, false);
		break;
	case DISASM_MEMFN_READ:
		RANGE(op->src, n, true);
		break;
	case DISASM_MEMFN_WRITE:
		RANGE(op->src, n, false);
		break;
	case DISASM_MEMFN_PUTS:
		RANGE(op->dst, mem_scan(p, op->dst, 0, max, &str), false);
		break;
	case DISASM_MEMFN_STRSTR:
	case DISASM_MEMFN_STRSPN:
	case DISASM_MEMFN_STRCSPN:
	case DISASM_MEMFN_NUMBER:
		len = scan_extent(p, op->fn, op->dst,
				  op->fn == DISASM_MEMFN_NUMBER ? 0 : op->src,
				  &dlen);
		RANGE(op->dst, len, false);
		RANGE(op->src, dlen, false);
		break;
	case DISASM_MEMFN_STRCPY:
		len = mem_scan(p, op->src, 0, max, &str);
		RANGE(op->src, len, false);
		RANGE(op->dst, len, true);
		break;
	case DISASM_MEMFN_STRNCPY:
		len = mem_scan(p, op->src, 0, n, &str);
		RANGE(op->src, len, false);
		RANGE(op->dst, n, true);
		break;
	case DISASM_MEMFN_STRCAT:
	case DISASM_MEMFN_STRNCAT:
		len = mem_scan(p, op->src, 0,
			       op->fn == DISASM_MEMFN_STRCAT ? max : n, &str);
		dlen = mem_scan(p, op->dst, 0, max, &str);
		RANGE(op->src, len, false);
		if (dlen) {
			uint8_t last = 0;
			uint64_t w = len;

			/* (strncat's n characters get a NUL of their own) */
			if (op->fn == DISASM_MEMFN_STRNCAT && len &&
			    (mem_read(p, op->src + len - 1, &last, 1) || last))
				w = len + 1;
			/* (dst's NUL is written over) */
			RANGE(op->dst, dlen - 1, false);
			RANGE(op->dst + dlen - 1, w, true);
		}
		break;
	case DISASM_MEMFN_STRLEN:
		RANGE(op->dst, mem_scan(p, op->dst, 0, max, &str), false);
		break;
	case DISASM_MEMFN_STRNLEN:
		RANGE(op->dst, mem_scan(p, op->dst, 0, n, &str), false);
		break;
	case DISASM_MEMFN_STRCMP:
	case DISASM_MEMFN_STRNCMP:
	case DISASM_MEMFN_STRCASECMP:
	case DISASM_MEMFN_STRNCASECMP:
	case DISASM_MEMFN_MEMCMP:
		cmp.nul = op->fn != DISASM_MEMFN_MEMCMP;
		cmp.fold = op->fn == DISASM_MEMFN_STRCASECMP ||
			   op->fn == DISASM_MEMFN_STRNCASECMP;
		len = mem_scan(p, op->dst, op->src,
			       op->fn == DISASM_MEMFN_STRCMP ||
					       op->fn == DISASM_MEMFN_STRCASECMP
				       ? max
				       : n,
			       &cmp);
		RANGE(op->dst, len, false);
		RANGE(op->src, len, false);
		break;
	case DISASM_MEMFN_STRCHR:
	case DISASM_MEMFN_MEMCHR:
		str.until = 2;
		str.c = op->c;
		str.nul = op->fn == DISASM_MEMFN_STRCHR;
		len = mem_scan(p, op->dst, 0,
			       op->fn == DISASM_MEMFN_STRCHR ? max : n, &str);
		RANGE(op->dst, len, false);
		break;
	case RANGED_CMPS:
	case RANGED_SCAS:
		cmp.two = op->fn == RANGED_CMPS;
		cmp.until = op->repne ? 2 : 1;
		cmp.el = op->el;
		cmp.c = op->c;
		len = mem_scan(p, op->dst, op->src, op->n, &cmp) * op->el;
		RANGE(op->dst, len, false);
		if (op->fn == RANGED_CMPS)
			RANGE(op->src, len, false);
		break;
	case RANGED_CMPS_ALL:
	case RANGED_SCAS_ALL:
		RANGE(op->dst, op->n * op->el, false);
		if (op->fn == RANGED_CMPS_ALL)
			RANGE(op->src, op->n * op->el, false);
		break;
	}
#undef RANGE
	for (int i = 0; i < k; i++)
		if (r[i].n > max)
			r[i].n = max;
	return k;
}

/* op's ranged access at b (ranged_access, ranged_ranges): its reads, then
 * its write.  false as observe_access. */
static bool observe_range(struct session *s, struct thread *t, struct bp *b,
			  uint64_t addr, const struct ranged_op *op)
{
	struct mrange r[3];
	int k = ranged_ranges(t->p, op, r);

	for (int i = 0; i < k; i++)
		if (!observe_access(s, t, b, addr, r[i].addr, (int)r[i].n,
				    r[i].write))
			return false;
	return true;
}

static void observe_hit(struct session *s, struct thread *t, struct bp *b,
			uint64_t addr)
{
	int size = 0;
	bool write = false;
	struct ranged_op op;

	if (ranged_access(t, b, &op)) {
		/* (its instruction is stepped over as any other) */
		if (!observe_range(s, t, b, addr, &op) || b->lifted ||
		    b->retired || b->dormant)
			t->stop = STOP_NONE;
		else
			s->obs_steps++;
		resume(s, t, 0);
		return;
	}
	uint64_t ea = bp_operand(s, t, b, &size, &write);

	if (!observe_access(s, t, b, addr, ea, size, write) || b->lifted ||
	    b->retired || b->dormant)
		t->stop = STOP_NONE; /* its own bytes are back: run them */
	else if (b->access && bp_would_step(b, ea))
		s->obs_steps++; /* as the step over an int3 would count */
	resume(s, t, 0);
}

/* b is an observation point armed in t's process: its instruction traps
 * or logs when t runs it */
static bool observing_at(struct session *s, struct thread *t, struct bp *b)
{
	return b && b->observe && !b->lifted && !b->retired && !b->dormant &&
	       t->p->observing && !s->failed && !s->ended;
}

void session_agent_access(struct session *s, struct thread *t, uint64_t site,
			  uint64_t ea)
{
	struct bp *b = bp_find(t->p, site);
	int size = 0;
	bool write = false;

	/* (an entry after its point was sampled out, or after the
	 * budget: the int3 path would not have stopped there) */
	if (!observing_at(s, t, b) || !b->access ||
	    !bp_operand_kind(b, &size, &write))
		return;
	s->stop_kinds[STOPK_AGENT_OBSERVE]++;
	s->ag_taken = true; /* (a breakpoint may go: on_breakpoint) */
	if (observe_access(s, t, b, site, ea, size, write) && !b->lifted &&
	    !b->retired && !b->dormant && bp_would_step(b, ea))
		s->obs_steps++;
}

void session_agent_free(struct session *s, struct thread *t, uint64_t site,
			uint64_t p, uint64_t hdr, uint64_t ret)
{
	struct bp *b = bp_find(t->p, site);
	struct logged_free lf = { p, hdr, ret };

	/* (an entry after the budget removed the point: the int3 path
	 * would not have stopped there) */
	if (!observing_at(s, t, b) || !b->freeing)
		return;
	s->stop_kinds[STOPK_AGENT_OBSERVE]++;
	s->ag_taken = true;
	/* (the operand of free's first instruction: nothing a free's
	 * observation reads) */
	observe_call(s, t, b, site, 0, 0, false, &lf);
}

bool session_probe_observes(struct session *s, struct thread *t,
			    uint64_t *ea)
{
	struct bp *b = bp_find(t->p, t->regs.rip);
	int size = 0;
	bool write = false;

	if (!observing_at(s, t, b) || t->regs.rip != b->addr)
		return false;
	struct ranged_op op;

	*ea = ranged_access(t, b, &op) ? op.dst
				       : bp_operand(s, t, b, &size, &write);
	return true;
}

void session_probe_access(struct session *s, struct thread *t, uint64_t site,
			  uint64_t ea)
{
	struct bp *b = bp_find(t->p, site);
	int size = 0;
	bool write = false;

	if (!observing_at(s, t, b) || b->addr != site)
		return;
	struct ranged_op op;

	if (ranged_access(t, b, &op)) {
		s->stop_kinds[STOPK_OBSERVE]++;
		if (observe_range(s, t, b, site, &op) && !b->lifted &&
		    !b->retired && !b->dormant)
			s->obs_steps++;
		return;
	}
	bp_operand_kind(b, &size, &write);
	s->stop_kinds[b->access && b->tramp && !b->by_int3
			      ? STOPK_AGENT_OBSERVE
			      : STOPK_OBSERVE]++;
	if (!observe_access(s, t, b, site, ea, size, write) || b->lifted ||
	    b->retired || b->dormant || !bp_would_step(b, ea))
		return;
	/* as observe_hit, or bp_step_over's single step, counts it */
	if (b->sync && !b->access)
		s->obs_sync++;
	else
		s->obs_steps++;
}

/*
 * Race discovery with access points (its later runs interleave at the
 * racy instructions found so far): a point's access is observed too, seen
 * at its stop and reported when the thread takes its step from the point
 * (thread_observe_step), with the clock it happens at: the others may run
 * in between.  Reported at the stop, a spin's load that found the flag
 * still clear acquired nothing, then read it set once the writer had run
 * and ended, and the data the flag published was reported as a race.
 */
static void observe_point(struct session *s, struct thread *t, struct bp *b)
{
	struct access_observer *o = s->cfg->observer;
	int size = 0;
	bool write = false;

	t->obs_due = false;
	t->obs_ranged = false;
	if (!o || !t->p->observing)
		return;
	/* the return from an OpenMP wait that is also a point (its
	 * instruction raced): what the wait ordered, before its access */
	if (b->omp)
		omp_sync(s, t, b->omp);
	if (b->kind != OP_ACCESS && b->kind != OP_ATOMIC)
		return;
	if (ranged_access(t, b, &t->obs_rng)) {
		/* a memcpy's, a strcmp's or a rep movs's bytes: how many,
		 * from memory when the access is made */
		if (!t->obs_rng.dst)
			return;
		t->obs_due = true;
		t->obs_ranged = true;
		t->obs_pc = b->addr;
		t->obs_ea = t->obs_rng.dst;
		return;
	}
	uint64_t ea = bp_operand(s, t, b, &size, &write);

	if (!ea)
		return;
	t->obs_due = true;
	t->obs_pc = b->addr;
	t->obs_ea = ea;
	t->obs_size = size;
	t->obs_write = write;
	t->obs_atomic = b->kind == OP_ATOMIC ||
			(b->insn && b->insn->is_atomic) || b->src_atomic;
	t->obs_word = untyped_word(b, ea, size);
}

void thread_observe_step(struct session *s, struct thread *t)
{
	struct access_observer *o = s->cfg->observer;
	uint64_t ea = t->obs_ea;

	if (!t->obs_due)
		return;
	t->obs_due = false;
	if (!o || s->obs_spent || !t->p->observing || t->pc != t->obs_pc ||
	    (t->kind != OP_ACCESS && t->kind != OP_ATOMIC) ||
	    threads_racing(s, t, ea) <= 1 ||
	    library_internal(t->p, t->obs_pc, ea))
		return;
	relock_before_access(s, t);
	s->obs_stops++;
	if (t->obs_ranged) {
		struct mrange r[3];
		int k = ranged_ranges(t->p, &t->obs_rng, r);

		for (int i = 0; i < k; i++) {
			o->access(o->ctx, t->idx, t->obs_pc,
				  mem_name(t->p, r[i].addr), (int)r[i].n,
				  r[i].write, false, false);
			s->observed++;
		}
		return;
	}
	o->access(o->ctx, t->idx, t->obs_pc, mem_name(t->p, ea),
		  t->obs_size, t->obs_write, t->obs_atomic, t->obs_word);
	s->observed++;
}

/* t's trap at addr was an int3 (the kernel's) whose byte is no longer
 * there */
static bool trap_taken_since(struct thread *t, uint64_t addr)
{
	uint8_t now = 0xcc;
	siginfo_t si;

	return !mem_read(t->p, addr, &now, 1) && now != 0xcc &&
	       !ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) &&
	       si.si_code == SI_KERNEL;
}

/*
 * A SIGTRAP at no breakpoint of ours that only ptloom can have caused, so
 * that delivering it would kill a correct program (a false crash): a
 * kernel trap (int3) whose byte at addr is no int3 now (ours, taken out
 * since: the instruction there runs, *rip = addr), a single-step trap
 * while the program's own trap flag is clear, or a debug-register hit
 * that no watch of ours claims (the program cannot set those registers
 * itself; perf's breakpoints say TRAP_PERF).  The program's own int3
 * (its byte is there), raise(SIGTRAP), kill and a trap flag it set are
 * delivered.
 */
static bool stray_trap(struct thread *t, uint64_t addr, uint64_t *rip)
{
	siginfo_t si;
	uint8_t byte = 0xcc;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si))
		return false;
	if (si.si_code == SI_KERNEL) {
		if (mem_read(t->p, addr, &byte, 1) || byte == 0xcc)
			return false;
		*rip = addr;
		return true;
	}
	if (si.si_code == TRAP_TRACE)
		return !(t->regs.eflags & 0x100);
	return si.si_code == TRAP_HWBKPT;
}

/* t's trap is no point: t goes on at rip (a stop of kind) */
static void pass_on(struct session *s, struct thread *t, uint64_t rip,
		    int kind)
{
	t->regs.rip = rip;
	t->regs_dirty = true;
	s->stop_kinds[kind]++;
	resume(s, t, 0);
}

/*
 * The program's own signal sig, met at t's signal-delivery stop (or its
 * int3 or raise(SIGTRAP), on_breakpoint), is delivered: to t, or to
 * another thread that takes it.  A fatal one names its thread, its
 * source line and every stack first, while they are all stopped.
 */
static void program_signal(struct session *s, struct thread *t, int sig)
{
	if (signal_redirect(s, t, sig))
		return; /* another thread takes it */
	if (fatal_signal(sig)) {
		siginfo_t si;

		s->fatal_thread = t->idx;
		s->fatal_sig = sig;
		/* sent by another process (a runner's kill), or the
		 * process's own (abort, a fault) */
		s->fatal_foreign = !ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) &&
				   si.si_code <= 0 && si.si_pid != t->p->pid;
		t->st = SCHED_ENABLED; /* stopped, for the unwinder */
		agent_fault_pc(t, sig);
		session_where(s, t, s->fatal_where, sizeof(s->fatal_where));
		symbolize_trace(s);
		if (s->cfg->symbolize_trace)
			report_threads(s); /* all stopped: their stacks */
	}
	s->sig_maybe = true; /* signals are about */
	signal_handler_enter(s, t, sig);
	if (s->cfg->observer) /* its handler acquires what senders released */
		s->cfg->observer->sync(s->cfg->observer->ctx, t->idx,
				       SYNC_ACQUIRE, SYNC_SIGNALS_KEY, -1);
	signal_delivering(s, t, sig);
	resume(s, t, sig);
}

static void on_breakpoint(struct session *s, struct thread *t)
{
	if (regs_get(t)) {
		resume(s, t, 0);
		return;
	}
	if (t->sig_depth)
		signal_handler_check(s, t);
	uint64_t addr = t->regs.rip - 1, site = 0;
	struct bp *b;

	bool access = false;

	if (agent_slot_at(t->p, addr, &site, &access) == TRAMP_INT3) {
		/* a trampoline's int3 (tracer/tramp.c): the breakpoint at
		 * site, with every register as at its entry */
		b = bp_find(t->p, site);
		if (!b || b->tramp != addr - TRAMP_INT3 ||
		    (access && (b->lifted || b->retired || b->dormant))) {
			/* lifted since: the call or access goes on */
			pass_on(s, t, addr + 1,
				access ? STOPK_OBSERVE : STOPK_CALL);
			return;
		}
		addr = site;
	} else {
		b = bp_find(t->p, addr);
		if (b && b->observe && (b->lifted || b->retired || b->dormant)) {
			/* sampled out or lifted since by the observations
			 * logged before it (taken at this stop): as without
			 * the log it does not trap.  Its byte is back, or,
			 * for a jump over several instructions (an access
			 * point entered through its int3: another thread
			 * ran beside), the jump stays and so does the int3:
			 * it goes on in its slot */
			pass_on(s, t, b->multi ? b->tramp + TRAMP_DISP : addr,
				STOPK_OBSERVE);
			return;
		}
	}
	if (!b && t->p->tsc.n && tsc_hit(s, t, addr)) {
		/* an rdtsc PR_SET_TSC did not trap (tracer/tsc.c) */
		s->stop_kinds[STOPK_TSC]++;
		resume(s, t, 0);
		return;
	}
	uint64_t hit[4];
	int nhit = b ? 0 : watch_trapped(t, hit);

	if (nhit) {
		if (!watch_point(s, t, hit, nhit))
			resume(s, t, 0); /* no spinner would go on */
		return;
	}
	if (!b && s->ag_taken && trap_taken_since(t, addr)) {
		/* an int3 of ours taken out since the thread met it: the
		 * observations logged before it, taken at this stop, spent
		 * the budget; its instruction goes on, as it would have */
		pass_on(s, t, addr, STOPK_OBSERVE);
		return;
	}
	if (!b) {
		uint64_t rip = t->regs.rip;

		if (stray_trap(t, addr, &rip)) {
			/* ours, late: the program goes on as it would */
			pass_on(s, t, rip, STOPK_TRAP);
			return;
		}
		/* not ours: the program's own int3 or trap */
		s->stop_kinds[STOPK_TRAP]++;
		program_signal(s, t, SIGTRAP);
		return;
	}
	t->regs.rip = addr;
	t->regs_dirty = true;
	t->stop = STOP_BP;
	t->bp_addr = addr;
	s->stop_kinds[b->observe ? STOPK_OBSERVE
		      : b->policy ? STOPK_POLICY
		      : b->kind == OP_CALL ? STOPK_CALL
		      : b->kind == OP_ATOMIC ? STOPK_ATOMIC
		      : b->kind == OP_SPIN ? STOPK_SPIN
					   : STOPK_ACCESS]++;
	if (b->observe) {
		observe_hit(s, t, b, addr);
		return;
	}
	if (!b->policy)
		observe_point(s, t, b);
	if (b->policy) {
		struct sched_policy *p = s->cfg->policy;

		if (!p->want_point || !p->want_point(p->ctx, s, t->idx)) {
			resume(s, t, 0);
			return;
		}
	}
	if ((b->shm_only || b->shm_alone) && !mem_shared(t->p, t->regs.rdi)) {
		resume(s, t, 0); /* not on the memory it shares */
		return;
	}
	if ((b->kind == OP_ACCESS || b->kind == OP_ATOMIC) &&
	    !s->cfg->observer && !session_policy_active(s) &&
	    quiet_others(s, t)) {
		/* nobody could run instead: no choice here, and none until
		 * another thread could run (schedule() puts it back) */
		bp_lift(t->p, b);
		t->stop = STOP_NONE;
		resume(s, t, 0);
		return;
	}
	if (b->kind == OP_CALL) {
		uint64_t ret = 0;

		mem_read(t->p, t->regs.rsp, &ret, 8);
		thread_call_point(t, b, t->regs.rdi, t->regs.rsi, ret);
	} else {
		int size = 0;
		bool write = false;

		t->kind = b->kind;
		t->fn = b->fn;
		t->yield = b->kind == OP_SPIN;
		t->arg = 0;

		t->obj = b->kind == OP_SPIN || b->policy
				 ? 0
				 : bp_operand(s, t, b, &size, &write);
		t->arg = write;
		t->pc = addr;
		if (b->kind == OP_SPIN && !b->policy)
			spin_words(s, t);
	}
	reach_point(s, t);
}

/* What a seccomp stop of t is (PTLOOM_STATS), by its syscall. */
static int syscall_stop_kind(const struct thread *t)
{
	uint64_t nr = t->regs.orig_rax;
	int op = (int)(t->regs.rsi & 0x7f); /* FUTEX_CMD_MASK */

	switch (nr) {
	case SYS_futex:
		return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET ||
			       op == FUTEX_LOCK_PI || op == FUTEX_LOCK_PI2 ||
			       op == FUTEX_WAIT_REQUEUE_PI
			       ? STOPK_FUTEX_WAIT
			       : STOPK_FUTEX_WAKE;
#ifdef SYS_futex_waitv
	case SYS_futex_waitv:
		return STOPK_FUTEX_WAIT;
#endif
	case SYS_sched_yield:
	case PTLOOM_SYSCALL_NR:
		return STOPK_YIELD;
	case SYS_nanosleep:
	case SYS_clock_nanosleep:
		return STOPK_SLEEP;
	case SYS_clock_gettime:
	case SYS_clock_getres:
	case SYS_gettimeofday:
	case SYS_time:
	case SYS_getrandom:
	case SYS_getrusage:
	case SYS_times:
	case SYS_sysinfo:
		return STOPK_CLOCK;
	case SYS_read:
	case SYS_readv:
	case SYS_write:
	case SYS_writev:
	case SYS_pread64:
	case SYS_pwrite64:
	case SYS_preadv:
	case SYS_pwritev:
	case SYS_preadv2:
	case SYS_pwritev2:
	case SYS_ftruncate:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_accept:
	case SYS_accept4:
	case SYS_connect:
		return STOPK_IO;
	case SYS_poll:
	case SYS_ppoll:
	case SYS_select:
	case SYS_pselect6:
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
		return STOPK_POLL;
	case SYS_clone:
	case SYS_clone3:
		return STOPK_CLONE;
	case SYS_exit:
	case SYS_exit_group:
		return STOPK_EXIT;
	case SYS_wait4:
	case SYS_waitid:
	case SYS_kill:
	case SYS_tgkill:
	case SYS_tkill:
		return STOPK_PROC;
	default:
		return STOPK_SYSCALL;
	}
}

const char *stop_kind_name(int kind)
{
	static const char *const names[STOPK_N] = {
		[STOPK_FUTEX_WAIT] = "futex-wait",
		[STOPK_FUTEX_WAKE] = "futex-wake",
		[STOPK_YIELD] = "yield",
		[STOPK_SLEEP] = "sleep",
		[STOPK_CLOCK] = "clock",
		[STOPK_IO] = "io",
		[STOPK_POLL] = "poll",
		[STOPK_CLONE] = "clone",
		[STOPK_EXIT] = "exit",
		[STOPK_PROC] = "wait/kill",
		[STOPK_SYSCALL] = "other-syscall",
		[STOPK_CALL] = "sync-call",
		[STOPK_ATOMIC] = "atomic",
		[STOPK_ACCESS] = "racy-access",
		[STOPK_SPIN] = "spin",
		[STOPK_POLICY] = "policy",
		[STOPK_OBSERVE] = "observation",
		[STOPK_TRAP] = "other-trap",
		[STOPK_TSC] = "rdtsc-rdrand-site",
		[STOPK_WATCH_STEP] = "watch-step",
		[STOPK_EVENT] = "ptrace-event",
		[STOPK_START] = "thread-start",
		[STOPK_SIGNAL] = "signal",
		[STOPK_DEATH] = "death",
		[STOPK_CHILD] = "free-child",
		[STOPK_FORK] = "template-fork",
		[STOPK_AGENT_CLOCK] = "clock-in-program(no stop)",
		[STOPK_AGENT_CALL] = "sync-call-in-program(no stop)",
		[STOPK_AGENT_FUTEX] = "futex-wake-in-program(no stop)",
		[STOPK_AGENT_HANDOFF] = "hand-over-in-program(no stop)",
		[STOPK_AGENT_OBSERVE] = "observed-in-program(no stop)",
	};

	return kind >= 0 && kind < STOPK_N && names[kind] ? names[kind] : "?";
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

void on_stop(struct session *s, pid_t tid, int status)
{
	struct thread *t = find_thread(s, tid);
	int sig = WSTOPSIG(status), ev = status >> 16;

	/* a dead thread stops no more: a new one with its tid (reused),
	 * whose attach stop came before its creator's clone event */
	if (t && t->st == SCHED_DEAD && !ev && sig == SIGSTOP)
		t = NULL;
	if (!t) {
		s->stop_kinds[STOPK_CHILD]++;
		if (is_free_process(s, tid))
			free_process_stop(s, tid, status);
		else if (s->nstray < 64)
			s->stray[s->nstray++] = tid;
		return;
	}
	if (!t->regs_this_stop)
		t->regs_valid = false;
	t->regs_this_stop = false;
	if (ev == PTRACE_EVENT_SECCOMP) {
		t->stop = STOP_SECCOMP;
		if (regs_get(t)) {
			s->stop_kinds[STOPK_SYSCALL]++;
			resume(s, t, 0);
			return;
		}
		s->stop_kinds[syscall_stop_kind(t)]++;
		if (s->stub_pending && t->idx == 0)
			checkpoint_child_started(s, t);
		if (s->cfg->checkpoint && checkpoint_at(s, t))
			return; /* a fork of the template goes on */
		if (syscall_enter(s, t)) {
			if (!s->failed)
				reach_point(s, t);
		} else {
			resume(s, t, 0);
		}
		return;
	}
	if (ev)
		s->stop_kinds[STOPK_EVENT]++;
	else if (sig == SIGTRAP)
		; /* on_breakpoint() counts it */
	else if (sig == SIGSTOP && t->starting)
		s->stop_kinds[STOPK_START]++;
	else
		s->stop_kinds[STOPK_SIGNAL]++;
	if (!s->cfg->free_children &&
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
			/* its clock is the kernel's again (as it was before
			 * the agent), not the run's */
			if (ev == PTRACE_EVENT_FORK)
				agent_disable_in(t->p, (pid_t)msg);
			if (take_stray(s, (pid_t)msg))
				ptrace(PTRACE_CONT, (pid_t)msg, 0, 0);
		}
		resume(s, t, 0);
	} else if (ev == PTRACE_EVENT_EXEC) {
		t = exec_from_thread(s, t);
		on_exec(s, t);
		if (!t->held)
			resume(s, t, 0);
	} else if (ev) {
		resume(s, t, 0);
	} else if (sig == SIGTRAP && t->exit_fix && thread_exit_fix(s, t)) {
		; /* a rewritten syscall's exit, put back */
	} else if (sig == SIGTRAP && t->tid_clone) {
		thread_clone_retry(s, t); /* the kernel refused the id */
	} else if (sig == SIGTRAP && t->wstep && watch_step_done(s, t)) {
		; /* a watching step's trap (watch_request) */
	} else if (sig == SIGTRAP) {
		on_breakpoint(s, t);
	} else if (sig == SIGSTOP && t->starting) {
		t->starting = false;
		t->st = SCHED_ENABLED;
		t->kind = OP_START;
		t->obj = 0;
		t->stop = STOP_SIGSTOP;
		fix_child_regs(t);
	} else if (sig == SIGSTOP && t->own_sigstop) {
		t->own_sigstop = false;
		resume(s, t, 0);
	} else if (stop_signal(sig) && !s->cfg->free_children &&
		   t->p->idx > 0) {
		siginfo_t si;

		if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0) {
			/* ptloom's own SIGSTOP (the spin probe's tgkill)
			 * or the kernel's attach stop (no sender, no
			 * queued siginfo) that came after the state that
			 * expected it: never the program's, suppressed
			 * (delivered, a process of the tree stopped whole:
			 * a false deadlock seen once under load) */
			if (sig == SIGSTOP &&
			    (si.si_pid == getpid() ||
			     (si.si_code == SI_USER && si.si_pid == 0))) {
				t->own_sigstop = false;
				resume(s, t, 0);
				return;
			}
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
		program_signal(s, t, sig);
	}
}

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

/*
 * How many points t, about to run, may pass in its trampolines without a
 * stop (agent.c logs them, session_agent_point takes them at the next
 * stop): while it is the one thread that can run, no timer can fire, no
 * signal may be pending and nobody (race discovery, a policy, a watcher,
 * a held process) acts at points, each of its points is the stop's
 * single choice with nothing else to do; while others can run, as many
 * as the strategy knows it would choose t at (world.c
 * session_known_budget, s->ag_known); up to --max-steps and
 * replay --gdb's step, where a stop must be.  A sole thread is left to
 * the lift (lift_when_alone).  0: none.
 */
uint64_t session_steps_before_stop(const struct session *s, uint64_t n)
{
	const struct session_config *c = s->cfg;

	if (c->max_steps) {
		if (s->step >= c->max_steps)
			return 0;
		if (c->max_steps - s->step < n)
			n = c->max_steps - s->step;
	}
	if (c->stop_at) {
		if (s->step >= c->stop_step)
			return 0;
		if (c->stop_step - s->step < n)
			n = c->stop_step - s->step;
	}
	return n;
}

uint64_t session_solo_budget(struct session *s, struct thread *t)
{
	const struct session_config *c = s->cfg;
	uint64_t n = UINT64_MAX;

	s->ag_known = false;
	if (c->no_fast_path || c->observer || session_policy_active(s) ||
	    c->watch || s->nheld || s->sig_maybe || s->failed || s->ended ||
	    s->handed_over || t->p->observing || s->current != t->idx ||
	    t->st != SCHED_RUNNING || sole_thread(s, t))
		return 0;
	s->ag_known = !quiet_others(s, t);
	if (s->ag_known) /* others can run: a strategy that knows */
		n = session_known_budget(s, t);
	return session_steps_before_stop(s, n);
}

void lift_when_alone(struct session *s, struct thread *t)
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
