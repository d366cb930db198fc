/*
 * A traced thread (tracer/thread.c): its registers, its pending operation
 * at a scheduling point, how it is stopped and must be resumed, what it
 * blocks on, and its signal state.  Everything that happens at one of its
 * ptrace stops starts in on_stop(): a seccomp stop becomes a scheduling
 * point, an int3 a breakpoint's operation, a signal is delivered or taken
 * as a group-stop; fork, clone and exec events go on in tracer/process.c.
 */
#ifndef PTLOOM_THREAD_H
#define PTLOOM_THREAD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>
#include "tracer.h"

struct session;
struct process;

/* How a stopped thread must be resumed. */
enum stop_kind {
	STOP_NONE = 0,
	STOP_SECCOMP,	/* at a syscall's seccomp stop: run or skip it */
	STOP_BP,	/* at a breakpoint: execute the original instruction */
	STOP_SIGSTOP,	/* a new thread's first stop: suppress it */
	STOP_SIGNAL,	/* a signal-delivery-stop with t->sig to deliver */
	STOP_GSTOP,	/* a group-stop (its process is stopped) */
};

enum block_kind {
	BLOCK_NONE = 0,
	BLOCK_FUTEX,
	BLOCK_SLEEP,
	BLOCK_FD,	/* read/write/accept/connect not ready */
	BLOCK_POLL,	/* poll/select/epoll_wait with nothing ready */
	BLOCK_SIGNAL,	/* sigwait family (tracer/signal.c) */
	BLOCK_WAIT,	/* wait4/waitid: no child has changed state */
	BLOCK_STOPPED,	/* its process is in a group-stop (SIGSTOP) */
	BLOCK_VFORK,	/* vfork parent: until the child execs or exits */
	BLOCK_HELD,	/* held at its exec by session_config.watch */
};

#define POLL_MAX 64

/* Descriptors whose readiness the kernel cannot judge from ptloom's copy:
 * a signalfd is ready for the thread that reads it, by its pending
 * signals (tracer/signal.c:signal_fd_ready()). */
enum { FDK_PLAIN = 0, FDK_SIGNALFD, FDK_EPOLL, FDK_TIMERFD,
       FDK_FLOCK, /* a flock(2) request: pev 1 shared, 2 exclusive */
       FDK_SEM, /* a SysV semop, msgsnd or msgrcv (tracer/sysvsem.c):
		 * pfd -1 */
       FDK_FIFO /* an open of a FIFO (tracer/fifo.c): pfd an O_PATH
		 * descriptor of it */ };

#define WAIT_PATH 48 /* instructions of a spin's turn remembered */
#define TSO_MAX 16 /* stores a thread's store buffer holds (tso.c) */

/*
 * A ranged access's operands as its stop found them (thread.c
 * ranged_access): a call of one of libc's memory or string functions
 * (enum disasm_memfn), or a rep string instruction.  How many bytes it
 * reads and writes can depend on memory (a string's length), read when
 * the access is made.
 */
struct ranged_op {
	uint8_t fn;	/* DISASM_MEMFN_*, or RANGED_CMPS, RANGED_SCAS */
	uint8_t el;	/* element size: 1 but for a rep's */
	bool repne;	/* a rep cmps or scas: stops at the first equal */
	uint64_t dst, src, n, c;
};

struct thread {
	int tid;
	int idx;		/* T-number in the whole tree (the trace's) */
	struct process *p;	/* its process */
	int ptidx;		/* T-number within its process */
	bool clone_thread;	/* its pending clone makes a thread */
	/* ... or a process that shares the whole memory (CLONE_VM, no
	 * thread, no vfork): not modelled (session.shared_vm) */
	bool clone_vm;
	bool own_sigstop;	/* ptloom sent it a SIGSTOP: suppress it */
	/* at its point (a trampolined call, STOP_BP), but waiting in the
	 * agent's park on its go word, not in a ptrace stop: its
	 * registers are in the page (agent.c agent_ho_materialise), a
	 * resume is a futex wake (agent_ho_wake) */
	bool ho_parked;
	int ho_resend;		/* a signal held back while it was parked */
	bool sig_rerun;		/* woken by a signal: runs if it is still there */
	int sig_block;		/* the wait it left, if the signal is gone */
	bool sig_timed;
	bool wait_nohang;	/* its pending wait4/waitid has WNOHANG */
	bool fork_return;	/* its pending OP_CLONE is a fork's return */
	/* its thread clone asks for the id its index had before
	 * (thread_clone_same_tid): the registers it had, put back at the
	 * clone's event (or, if the kernel refused the id, at the syscall's
	 * exit, from where the clone runs again as the program made it) */
	bool tid_clone, clone_retry;
	uint64_t clone_rdi, clone_rsi, clone_nr;
	/* a syscall ptloom rewrote to carry out its choice (a wait naming
	 * the child it picked, a kill sent to the thread it picked), or a
	 * wait with a rusage to answer: at its exit the program's argument
	 * registers are put back (the kernel keeps them, and compiled code
	 * may read them after an inline syscall) and a wait's rusage is the
	 * run's (thread_exit_fix) */
	bool exit_fix;
	uint64_t exit_args[4];	/* rdi, rsi, rdx, r10 as the program made them */
	/* a thread whose clone asked for its id: its first stop puts back
	 * these two registers of its creator's */
	bool fix_regs;
	uint64_t fix_rdi, fix_rsi;
	/* a lock request waited for (FDK_FLOCK): LK_*, and a record lock's
	 * byte range [lk_start, lk_end] */
	uint8_t lk_kind;
	int64_t lk_start, lk_end;
	/* a semop or semtimedop waited for (FDK_SEM): the set, the address
	 * and number of its operations; sem_waited once it blocked (a set
	 * removed then ends the wait with EIDRM).  A msgsnd or msgrcv
	 * (sem_nr) too: sem_id its queue; msg_size, msg_type and msg_flg
	 * its size, type and flags */
	long sem_nr;
	int sem_id;
	uint64_t sem_ops;
	uint32_t sem_nops;
	bool sem_waited;
	int msg_flg;
	int64_t msg_type;
	uint64_t msg_size;
	/* an open of a FIFO waited for (FDK_FIFO): the FIFO's file key, for
	 * writing (else reading); fifo_promised once another thread's open
	 * of the other end let the kernel complete it (it is counted as the
	 * kernel counts a sleeper in its open: ready, whatever comes);
	 * fifo_going from its execution to its exit (thread_exit_fix) */
	uint64_t fifo_key;
	bool fifo_write, fifo_promised, fifo_going;
	int st;			/* enum sched_state */
	bool starting;		/* cloned, its first stop not seen yet */
	bool held;		/* BLOCK_HELD: at its exec event stop */
	int stop;		/* enum stop_kind */
	int sig;		/* STOP_SIGNAL: signal to deliver */
	struct user_regs_struct regs;
	bool regs_valid, regs_dirty;
	/* the registers were read at this stop already (agent_stopped,
	 * before on_stop): on_stop keeps them, and what it changed */
	bool regs_this_stop;
	/* the kernel's registers as last read or written (regs_set writes
	 * only the words that differ, PTRACE_POKEUSER each, when few do) */
	struct user_regs_struct regs_kernel;
	bool regs_kernel_known;
	/* the pending operation (at a scheduling point) */
	uint8_t kind, fn;
	bool yield;
	uint64_t obj, pc;
	/* virtual ns + 1 of its last step (or of its birth): how long it has
	 * waited for the processor when able to run (session_stall_limit);
	 * 0: not yet */
	uint64_t ran_at;
	uint64_t obj2;		/* FUTEX_WAKE_OP/REQUEUE: the second word */
	/* its OP_READ or OP_WRITE is a regular file's (syscall.c
	 * file_point): no synchronisation for race discovery */
	bool file_io;
	bool futex_woken;	/* OP_WOKEN by a futex wake (not a signal) */
	bool pi_wait;		/* blocked in FUTEX_LOCK_PI: a signal restarts it */
	int64_t arg;
	/* a pending OP_KILL's signal and target (event.sent_sig, sent_to) */
	uint8_t sent_sig;
	uint16_t sent_to;
	/* syscall emulation: on resume, skip the syscall returning result */
	bool skip;
	int64_t result;
	/* blocking */
	int block;		/* enum block_kind */
	bool timed;
	uint64_t deadline;	/* virtual monotonic ns */
	uint64_t armed;		/* the step its deadline was set at */
	int64_t timeout_result;
	uint64_t sleep_ns;	/* OP_SLEEP: requested duration */
	bool sleep_abs;
	/* descriptors duplicated from the tracee for readiness checks */
	int pfd[POLL_MAX];
	int ptfd[POLL_MAX];	/* the program's numbers of them */
	short pev[POLL_MAX];
	uint8_t pkind[POLL_MAX]; /* FDK_*: whose readiness ptloom decides */
	int npfd;
	bool ext_known, ext;	/* syscall_fd_external() of these, cached */
	/* of these internal ones, one anyone on the machine could make ready
	 * (a loopback or Unix listening socket): a wait on nothing else
	 * waits in real time rather than deadlock (tracer/fdext.c) */
	bool ext_open;
	bool nonblock;
	/* a blocking write too large for a pipe's room, performed by
	 * ptloom in pieces (tracer/bigwrite.c): bytes written so far */
	bool wbig;
	uint64_t wdone;
	int64_t poll_timeout_ms; /* <0 infinite */
	/* select, pselect6 or ppoll with a time-left struct: its timeout
	 * exactly, and the virtual time the call first ran (UINT64_MAX:
	 * not yet); the time left it reports is the virtual clock's
	 * (syscall.c poll_time_left) */
	uint64_t poll_tmo_ns, poll_start;
	bool poll_left, poll_left_at_exit;
	/* a blocking read, write, accept or connect on a socket with
	 * SO_RCVTIMEO or SO_SNDTIMEO: the option's timeout, 0 for none */
	uint64_t fd_timeout_ns;
	/* an mq_timedsend or mq_timedreceive's deadline (virtual monotonic
	 * ns), when fd_abs */
	bool fd_abs;
	uint64_t fd_deadline;
	/* its zero-timeout waits in a row that saw only held sockets
	 * (tracer/evloop.c) */
	uint8_t evl_empty;
	uint64_t ctid;		/* CLONE_CHILD_CLEARTID address */
	/* race discovery: its stack [stk_lo, stk_hi) in image stk_img (main's
	 * [stack], a stack glibc allocated; empty: another kind), once
	 * stk_known (thread.c note_stack_shared) */
	uint64_t stk_lo, stk_hi;
	/* main's thread-local data: the anonymous mapping its thread
	 * pointer is in (another thread's is in its stack's) */
	uint64_t tls_lo, tls_hi;
	uint32_t stk_img;
	bool stk_known;
	uint64_t new_ctid;	/* ctid for the thread this one creates */
	uint64_t bp_addr;	/* STOP_BP */
	/* the last synchronisation call entered, for deadlock reports */
	uint8_t last_fn;
	uint64_t last_obj, last_site;
	char where[LOC_MAX];
	/* spin recognition: the same point again with nobody else run */
	struct { uint64_t pc, obj; } spin_ring[4]; /* reads since progress */
	int nspin;
	int sig_mode;		/* BLOCK_SIGNAL: SIGWAIT_* */
	uint64_t sig_set;	/* its set or mask */
	uint64_t sig_claim;	/* woken for these signals of its process */
	uint64_t sig_sent;	/* ptloom directed these to it since it ran */
	uint64_t sig_fix;	/* to be delivered with this siginfo: */
	int sig_fix_code;
	pid_t sig_fix_pid;
	/* process-directed signals ptloom moved to it (signal_redirect):
	 * their whole siginfo, put back at delivery */
	struct { int sig; siginfo_t si; } sig_moved[4];
	int nsig_moved;
	/* race discovery: handlers of caught signals it is running (nested
	 * ones count), and its stack pointer where the outermost one
	 * interrupted it (signal_handler_enter) */
	int sig_depth;
	uint64_t sig_sp;
	uint64_t cond_mutex;	/* a pthread call's second argument */
	uint64_t relock;	/* cond_wait's mutex, acquired at the wake */
	/* race discovery: the access of the point t stands at (at obs_pc),
	 * observed when t takes its step from there (thread_observe_step):
	 * what the others do meanwhile comes before it */
	bool obs_due, obs_write, obs_atomic, obs_word;
	int obs_size;
	uint64_t obs_pc, obs_ea;
	/* obs_ranged: a call of memcpy, strcpy, strcmp and the like or a
	 * rep string instruction: its operands (its ranges are read from
	 * memory at the step) */
	bool obs_ranged;
	struct ranged_op obs_rng;
	/* the rwlock of a pending write lock: its futex points acquire the
	 * readers' side (race discovery, world.c observe_rwlock) */
	uint64_t rw_writing;
	uint64_t spin_switch;
	int repeats;
	/* it left a spin, yield or read point: where it stops next, if that
	 * is an active point, the spinners may re-check (spinners_wake) */
	bool wake_due;
	/* at an OP_SPIN point: the 8-byte words one turn of its spin reads
	 * (spin.c spin_reads), for the registers it reached the point with;
	 * the others' stores to them are points while it spins (watch_arm) */
	uint64_t spin_words[4];
	int nspin_words;
	/* the last turn taken (spin_words): its registers, the words it
	 * read and their values, whether it waited */
	struct user_regs_struct turn_regs;
	uint64_t turn_words[4], turn_vals[4];
	int nturn_words;
	bool turn_known, turn_waits;
	/* the pcs of a turn from wait_path_at that waited (spin_reads) */
	uint64_t wait_path[WAIT_PATH];
	uint64_t wait_path_at;
	int nwait_path;
	/* the write watchpoints its debug registers hold (DR0-3), or the
	 * words its single steps watch where they do not trap (wstep: it
	 * was resumed by one, the words' values then in wvals) */
	uint64_t dr[4];
	int ndr;
	bool wstep;
	uint64_t wvals[4];
	/* a plain read-modify-write of memory (`addl $1, x`) split into
	 * its load and its store (bp_split_rmw): the value it loaded */
	bool split;
	uint8_t split_size;
	uint64_t split_addr, split_val;
	/* x86-TSO (POINTS_TSO, tracer/tso.c): the stores it made that no
	 * other thread sees yet, oldest first; tso_window: it stands at a
	 * memory access inside that window (or before its drain), which
	 * tso_step runs when it is picked; tso_steps: instructions run in
	 * the window */
	struct tso_store {
		uint64_t addr, val;
		uint8_t size;
	} sb[TSO_MAX];
	uint8_t nsb;
	bool tso_window, tso_drain; /* tso_drain: before the drain */
	uint16_t tso_steps;
};

/* t's pending operation waits for a file lock (tracer/flock.c) */
static inline bool waits_lock(const struct thread *t)
{
	return t->npfd == 1 && t->pkind[0] == FDK_FLOCK;
}

/* t's pending operation is a SysV semop, msgsnd or msgrcv
 * (tracer/sysvsem.c) */
static inline bool waits_sem(const struct thread *t)
{
	return t->npfd == 1 && t->pkind[0] == FDK_SEM;
}

/* t's pending operation is an open of a FIFO (tracer/fifo.c) */
static inline bool waits_fifo(const struct thread *t)
{
	return t->npfd == 1 && t->pkind[0] == FDK_FIFO;
}

struct thread *session_new_thread(struct session *s, pid_t tid,
				  struct process *p);
struct thread *find_thread(struct session *s, pid_t tid);
/* A stopped tid met before the clone that made it: claim it. */
bool take_stray(struct session *s, pid_t tid);
/* c was created by thread parent_idx's clone (fork: a new process's first
 * thread): it waits for its first stop; the parent is at the clone's
 * return.  Returns the parent. */
struct thread *thread_born(struct session *s, struct thread *c,
			   int parent_idx, bool fork);
/* Back from a wait at a point: t is enabled with its syscall's result. */
void thread_make_ready(struct session *s, struct thread *t, int kind,
		       int64_t result);
/* A skipped call's result that makes the thread make the call again
 * (the kernel's ERESTARTNOINTR): FUTEX_LOCK_PI after a signal. */
#define PTLOOM_RESTART_CALL (-513)
/* Resume a stopped thread (sig: a signal to deliver, or 0). */
void resume(struct session *s, struct thread *t, int sig);
/* resume()'s bookkeeping once t is sent on (by ptrace, or by its go word
 * in the program: agent_ho_wake): no stop, no skipped call, running */
void thread_set_running(struct session *s, struct thread *t);
/* A thread is gone: off every queue, its joiners woken. */
void thread_gone(struct session *s, struct thread *t);
/* t's exit runs: its robust futexes are marked OWNER_DIED, a waiter woken. */
void robust_release(struct session *s, struct thread *t);
/* A ptrace stop of tid (traced or not met yet). */
void on_stop(struct session *s, pid_t tid, int status);
/* Instruction points that are no choice (see thread.c). */
void drop_lifts_if_contended(struct session *s);
void lift_when_alone(struct session *s, struct thread *t);
/* t stands at a point: its pending operation is set (thread.c) */
void thread_reach_point(struct session *s, struct thread *t);
/* Race discovery: t takes its step from its point, whose access
 * (observe_point) is observed now. */
void thread_observe_step(struct session *s, struct thread *t);

/* t's point only reads memory (a racy read, an atomic load)? */
bool thread_point_reads(const struct thread *t);

/* t stands at a point: an access (OP_ACCESS of fn) of obj at pc, where no
 * breakpoint of ours need be (a watched store's next instruction, an
 * access inside a store buffer's window) */
void thread_access_point(struct session *s, struct thread *t, uint64_t pc,
			 uint64_t obj, bool write, uint8_t fn);
/* t's pending operation: the call at breakpoint b, with its first two
 * arguments and its return address */
struct bp;
void thread_call_point(struct thread *t, const struct bp *b, uint64_t rdi,
		       uint64_t rsi, uint64_t ret);
/* t's process's spinners whose spin words overlap one of the n stores
 * (addr[i], size[i] bytes) take their turn again; those that would now go
 * on stop yielding.  True when one does. */
bool spinners_recheck(struct session *s, const struct thread *t,
		      const uint64_t *addr, const uint8_t *size, int n);
/* A call of fn that may be a spin's (a trylock): a passive point */
bool call_fn_passive(int fn);

#endif
