/*
 * The supervisor's internals, shared by the files of tracer/: one struct
 * session per execution, one struct thread per traced task.
 */
#ifndef PTLOOM_SESSION_INT_H
#define PTLOOM_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/user.h>
#include "disasm.h"
#include "futex.h"
#include "process.h"
#include "sched.h"
#include "signal.h"
#include "spin.h"
#include "timer.h"
#include "tracer.h"

/* The number the annotation in include/ptloom.h uses. */
#define PTLOOM_SYSCALL_NR 0x7074

/*
 * A timeout or timer more than this far ahead of the virtual clock is not
 * "the machine was slow": it may expire only when nobody can run.  A stall
 * that long is what ptloom's own default --timeout calls a hang; protocol
 * resend timers (nanomsg's 60 s request resend under Criterion: the runner
 * saw a test phase twice) and test runners' watchdogs (ctest's, under
 * random sampling) would otherwise make correct programs fail.
 */
#define TIMEOUT_HORIZON_NS (10ull * 1000000000ull)

/* Observations of one instruction per run in race discovery (sampling). */
#define OBSERVE_PC_CAP 256

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
};

#define POLL_MAX 64

/* Descriptors whose readiness the kernel cannot judge from ptloom's copy:
 * a signalfd is ready for the thread that reads it, by its pending
 * signals (tracer/signal.c:signal_fd_ready()). */
enum { FDK_PLAIN = 0, FDK_SIGNALFD, FDK_EPOLL, FDK_TIMERFD };

struct thread {
	int tid;
	int idx;		/* T-number in the whole tree (the trace's) */
	struct process *p;	/* its process */
	int ptidx;		/* T-number within its process */
	bool clone_thread;	/* its pending clone makes a thread */
	bool own_sigstop;	/* ptloom sent it a SIGSTOP: suppress it */
	bool sig_rerun;		/* woken by a signal: runs if it is still there */
	int sig_block;		/* the wait it left, if the signal is gone */
	bool sig_timed;
	bool wait_nohang;	/* its pending wait4/waitid has WNOHANG */
	bool fork_return;	/* its pending OP_CLONE is a fork's return */
	int st;			/* enum sched_state */
	bool starting;		/* cloned, its first stop not seen yet */
	int stop;		/* enum stop_kind */
	int sig;		/* STOP_SIGNAL: signal to deliver */
	struct user_regs_struct regs;
	bool regs_valid, regs_dirty;
	/* the pending operation (at a scheduling point) */
	uint8_t kind, fn;
	bool yield;
	uint64_t obj, pc;
	uint64_t obj2;		/* FUTEX_WAKE_OP/REQUEUE: the second word */
	bool futex_woken;	/* OP_WOKEN by a futex wake (not a signal) */
	int64_t arg;
	/* syscall emulation: on resume, skip the syscall returning result */
	bool skip;
	int64_t result;
	/* blocking */
	int block;		/* enum block_kind */
	bool timed;
	uint64_t deadline;	/* virtual monotonic ns */
	int64_t timeout_result;
	uint64_t sleep_ns;	/* OP_SLEEP: requested duration */
	bool sleep_abs;
	/* descriptors duplicated from the tracee for readiness checks */
	int pfd[POLL_MAX];
	short pev[POLL_MAX];
	uint8_t pkind[POLL_MAX]; /* FDK_*: whose readiness ptloom decides */
	int npfd;
	bool ext_known, ext;	/* syscall_fd_external() of these, cached */
	bool nonblock;
	int64_t poll_timeout_ms; /* <0 infinite */
	uint64_t ctid;		/* CLONE_CHILD_CLEARTID address */
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
	uint64_t cond_mutex;	/* a pthread call's second argument */
	uint64_t relock;	/* cond_wait's mutex, acquired at the wake */
	uint64_t spin_switch;
	int repeats;
};

struct bp {
	uint64_t addr;
	uint8_t orig[16];	/* original bytes (orig[0] is under the int3) */
	uint8_t kind;		/* OP_CALL, OP_ATOMIC, OP_ACCESS, OP_SPIN */
	uint8_t fn;		/* OP_CALL: enum call_fn */
	uint8_t emul;		/* how to execute the original instruction */
	uint8_t emul_reg;	/* EMUL_PUSH: register */
	uint8_t len;		/* instruction length when emulated */
	struct {
		uint8_t kind, reg, base;
		bool wide, rip;
		int32_t disp;
		uint64_t imm;
	} mov;			/* EMUL_MOV */
	bool observe;		/* race discovery: observe, not a point */
	bool lifted;		/* original byte back while no one could
				 * preempt (bp_lift) */
	bool retired;		/* original byte back for the run */
	bool shared;		/* observed in two threads */
	int first_tid;
	uint32_t hits;		/* observations this run */
	bool policy;		/* a point of cfg->policy */
	bool decoded;		/* insn is valid */
	struct insn_info *insn;	/* decoded instruction (user points) */
};

enum { EMUL_STEP = 0, EMUL_PUSH, EMUL_SKIP, EMUL_MOV };
enum { MOV_IMM = 1, MOV_RR_LOAD, MOV_RR_STORE, MOV_LOAD, MOV_STORE };

struct session {
	const struct session_config *cfg;
	struct strategy *strat;
	struct run_result *res;
	pid_t pid;		/* P0's leader */
	struct process **procs;	/* indexed by P-number */
	int nprocs, capprocs;
	uint32_t nimg;		/* process images so far */
	uint64_t *fdobj;	/* pipes met, by (dev, inode): their objects */
	size_t nfdobj, capfdobj;
	pid_t sym_pid;		/* the process the symbolizer is attached to */
	int outfd;		/* memfd with the program's output */
	struct thread *th;	/* indexed by T-number */
	int nth, cap;
	int current;		/* T-number that runs or ran last, -1 */
	struct futex_table ft;
	uint64_t now;		/* virtual monotonic ns */
	uint64_t realtime_base;	/* realtime = realtime_base + now */
	uint64_t quantum;
	uint64_t rng;		/* getrandom's stream */
	uint64_t step;
	uint32_t preemptions;
	struct event *ev;
	size_t nev, capev;
	struct decision *dec;
	size_t ndec, capdec;
	uint64_t hash;
	pid_t stray[64];	/* stopped tids not yet claimed by a clone */
	int nstray;
	pid_t freep[64];	/* the program's own child processes */
	int nfreep;
	bool ended;		/* the process is gone */
	bool failed;		/* res->failure is set; kill and stop */
	bool need_schedule;
	int fatal_thread;	/* thread that got the last fatal signal */
	int fatal_sig;
	char fatal_where[LOC_MAX];
	int exit_thread;
	char exit_where[LOC_MAX];
	double t0;
	double self_cpu0;	/* ptloom's CPU seconds at the start */
	uint64_t run_len;	/* points the current thread took in a row */
	int timeout_kind;	/* FAIL_HANG or FAIL_SLOW past --timeout */
	char timeout_why[MSG_MAX];
	bool exec_seen;
	double resume_time;	/* when the current thread was chosen */
	double resume_cpu;	/* its CPU time then */
	int seen_ticks;		/* timer ticks already checked */
	uint64_t observed;	/* accesses reported to the observer */
	int live;		/* threads alive */
	uint64_t switches;	/* times another thread was chosen */
	uint64_t join_off;	/* pthread_t + join_off = its tid word */
	int spin_ms;		/* CPU ms before the next spin probe */
	bool self_kill;		/* the program sent a SIGKILL itself */
	bool sig_maybe;		/* a signal may have been sent */
	struct timers *timers;	/* virtual alarms, timerfds (timer.c) */
	struct livelock ll;	/* past --max-steps (tracer/spin.c) */
	bool from_checkpoint;	/* a fork of the template (checkpoint.c) */
	unsigned sole_bps;	/* breakpoint stops of a sole thread in a row */
	bool outfd_shared;	/* outfd belongs to the checkpoint */
	/* the last abnormal end of a process other than P0 (a crash or a
	 * non-zero exit): what a runner's failure most likely reports */
	int child_thread;	/* T-number, -1 if none */
	int child_sig, child_status;
	char child_where[LOC_MAX];
	char child_label[64];
	bool handed_over;	/* stop_at reached: no longer ours */
	struct {		/* state keys (tracer/state.c) */
		bool off;	/* beyond the key for the rest of the run */
		bool based;
		size_t scanned;	/* events checked */
		long long wchar0, out0;
	} key;
};

/* tracer/mem.c */
int mem_read(struct process *p, uint64_t addr, void *buf, size_t len);
int mem_write(struct process *p, uint64_t addr, const void *buf,
	      size_t len);
int mem_access_user(struct process *p, uint64_t addr, void *buf, size_t len,
		    bool write);
int regs_get(struct thread *t);
int regs_set(struct thread *t);

/* tracer/spawn.c */
int spawn_program(const struct session_config *cfg, int outfd, pid_t *pid);
void spawn_register(pid_t pid);
void spawn_unregister(pid_t pid);
double now_seconds(void);

/* tracer/detach.c: stop_at reached */
int session_hand_over(struct session *s);

/* tracer/bp.c */
int bp_install(struct session *s, struct process *p);
struct bp *bp_find(struct process *p, uint64_t addr);
int bp_step_over(struct session *s, struct thread *t);
int bp_remove_all_in(struct process *p, pid_t pid);
int bp_remove_observers(struct process *p);
/* An instruction point hit while no other thread could run is no choice:
 * put its original byte back until another thread could (bp_drop_lifts). */
void bp_lift(struct process *p, struct bp *b);
void bp_drop_lifts(struct process *p);
/* A sampled observation point done for the run: never traps again. */
void bp_retire(struct process *p, struct bp *b);
int bp_lift_all(struct process *p);
/* Effective address of the memory operand at breakpoint b for t. */
uint64_t bp_operand(struct session *s, struct thread *t, struct bp *b,
		    int *size, bool *write);

/* tracer/syscall.c: classify a seccomp stop; returns true when it is a
 * scheduling point (t's pending operation is set), false when handled. */
bool syscall_enter(struct session *s, struct thread *t);
/* Execute t's pending operation. Returns true if t now runs, false if it
 * blocked (the scheduler picks again). */
bool syscall_execute(struct session *s, struct thread *t);
/* Re-check a blocked fd/poll wait; true if it became ready. */
bool syscall_fd_ready(struct session *s, struct thread *t);
void syscall_close_fds(struct thread *t);
/* Can the world outside the program make t's descriptors ready?
 * (tracer/fdext.c) */
bool syscall_fd_external(struct session *s, struct thread *t);
bool syscall_emulate_rdtsc(struct session *s, struct thread *t);
void futex_wake_addr(struct session *s, uint64_t addr, int n,
		     uint32_t bitset, int *woken);

/* tracer/checkpoint.c: at t's seccomp stop, take the checkpoint if this
 * is the first thread's clone; true when the session now runs a fork of
 * the template (the stop is not handled further). */
bool checkpoint_at(struct session *s, struct thread *t);
/* Start the session from the checkpoint: 0, or 1 when it does not apply
 * (spawn as usual). */
int checkpoint_start(struct session *s);

/* tracer/state.c: the state at a choice point (0: unknown) */
uint64_t session_state_key(struct session *s);

/* tracer/session.c */
void session_fail(struct session *s, int kind, struct thread *t,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void thread_make_ready(struct session *s, struct thread *t, int kind,
		       int64_t result);
int session_pick(struct session *s, struct choice *c);
void session_where(struct session *s, struct thread *t, char *buf,
		   size_t len);
/* A data address by name ("balance"), or in hex without symbols. */
void session_describe_data(struct session *s, struct process *p,
			   uint64_t addr, char *buf, size_t len);
struct thread *session_new_thread(struct session *s, pid_t tid,
				  struct process *p);
/* Reap every thread of p, which is dying (SIGKILL, exit_group). */
void session_reap_process(struct session *s, struct process *p);
/* Symbolise the events of p's current image while p is alive. */
void session_symbolize_process(struct session *s, struct process *p);

#endif
