/*
 * The world (tracer/world.c): one scheduling world per run.  Every
 * process and thread of the program's tree is in it, one thread of the
 * whole tree runs at a time, and it holds what a run shares: the virtual
 * clock, the futex queues, the trace and the decisions, the limits
 * (--timeout, --max-steps, spins, Ctrl-C) and the run's verdict.
 */
#ifndef PTLOOM_WORLD_H
#define PTLOOM_WORLD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "futex.h"
#include "spin.h"
#include "tracer.h"

struct process;
struct thread;

/*
 * "The machine was slow": a deadline may expire early (its timeout taken
 * as a preemption while a thread could still run) only as far as a stall
 * of at most this much virtual time explains it, counted from the
 * earliest last step of the threads able to run that are not running
 * (session_stall_limit): no thread that could run waits longer for the
 * processor.  A second, as a loaded machine may give; a test's guard (a
 * 2 s `time.After` beside a goroutine's 1 ms sleep, `join(timeout=5)`,
 * `wait_for(5s)`) is then no failure, while a 50 ms or 1 s sleep that
 * assumes the worker finished still is.  Counted per wait before (ten
 * seconds ahead of the clock), the stalls added up: Go's sysmon sleeps
 * 10 ms at a time, each an early expiry, and a round-robin sample
 * starved a runnable goroutine for 2.5 s.  Protocol resend timers
 * (nanomsg's 60 s request resend under Criterion) and test runners'
 * watchdogs (ctest's) are far past it too.
 */
#define MAX_STALL_NS (1000ull * 1000000ull)
/*
 * Steps of yielding threads in a row (a spin, a sched_yield loop) beside
 * which a deadline may still expire early.  Past them, while every thread
 * that can run yields, only deadlines that came expire: the spin's steps
 * change nothing it reads, so the same expiry one step later is the same
 * state but for how often the loop looked (and the clock).  Offered at
 * every step, a 1 ms sleep beside a spin was a thousand runs at bound 1.
 */
#define SPIN_EXPIRIES 2
/* The latest deadline that may expire early now: MAX_STALL_NS past the
 * earliest last step of the threads able to run, not running and not
 * yielding (the clock when there are none); the clock itself past
 * SPIN_EXPIRIES steps of a spin. */
uint64_t session_stall_limit(const struct session *s);

struct session {
	const struct session_config *cfg;
	struct strategy *strat;
	struct run_result *res;
	pid_t pid;		/* P0's leader */
	struct process **procs;	/* indexed by P-number */
	int nprocs, capprocs;
	int policy_procs;	/* processes the policy was applied to */
	uint32_t nimg;		/* process images so far */
	uint64_t *fdobj;	/* pipes met, by (dev, inode): their objects */
	size_t nfdobj, capfdobj;
	/* SysV IPC objects the run made with IPC_PRIVATE (semget, msgget,
	 * shmget: the syscall, the id), removed when the run is over */
	struct { long nr; int id; } ipc[32];
	int nipc;
	/* FIFOs the run made (mknod, mknodat: their file keys), whose opens
	 * are waits of the model (tracer/fifo.c); ptloom's own descriptors
	 * of such FIFOs (in mode O_RDONLY, O_WRONLY or O_RDWR) while opens
	 * the kernel would count are pending (owner -1, for the promised
	 * opens of that mode) or while a promised open is in the kernel
	 * (owner its T-number) */
	uint64_t fifo_made[32];
	int nfifo_made;
	/* files the run created exclusively (O_CREAT|O_EXCL) and directories
	 * it made, in a temporary directory (/tmp, /var/tmp, /dev/shm,
	 * $TMPDIR, or one such directory of the run's: syscall.c temp_dir),
	 * removed when the run is over
	 * (process.c remove_run_temp_files), as every run makes the same
	 * names (the random stream is ptloom's) and a run ptloom ended early
	 * never removed its own.  Each its directory (an O_PATH descriptor
	 * of ptloom's), name and inode. */
	struct run_temp {
		int dirfd;
		bool dir;
		dev_t dev;
		ino_t ino;
		char name[256];
	} temp[32];
	int ntemp;
	struct { uint64_t key; int fd, mode, owner; } fifo_bridge[8];
	int nfifo_bridge;
	pid_t sym_pid;		/* the process the symbolizer is attached to */
	int outfd;		/* memfd with the program's output */
	struct thread *th;	/* indexed by T-number */
	int nth, cap;
	int current;		/* T-number that runs or ran last, -1 */
	struct futex_table ft;
	uint64_t now;		/* virtual monotonic ns */
	/* the run read or waited on the virtual clock (time_observed) */
	bool time_used;
	uint64_t realtime_base;	/* realtime = realtime_base + now */
	uint64_t quantum;
	uint64_t rng;		/* getrandom's stream */
	uint64_t step;
	/* choices that had more alternatives than MAX_ALTS (the rest were
	 * never offered: the run does not cover them), and the most
	 * candidates seen at one */
	uint32_t capped, capped_most;
	uint32_t shared_vm; /* clones of a process sharing the memory */
	/* mappings of a file two processes map shared on their own that
	 * ptloom does not follow (syscall.c apart_fence: moved, truncated,
	 * mapped private, too many): such a run is no pass */
	uint32_t shared_apart;
	/* the files two processes of the run mapped shared on their own
	 * (syscall.c apart_mapped): a byte at file offset x is named
	 * img << 48 | (base + x) in every process, as the mapping that
	 * was first (at least offsets [off_lo, off_hi)) names it */
	struct apart_file {
		uint64_t dev, ino, base, off_lo, off_hi;
		uint32_t img;
	} apart_files[16];
	int napart;
	/* observed accesses to another live thread's stack (run_result) */
	uint32_t stack_shared;
	/* the program's own objects mapped after the install (run_result) */
	uint32_t late_objects;
	char late_object[64];
	uint32_t py_shared; /* forks of a policy's process with shared data */
	uint64_t stops;		/* tracee stops reported by a wait */
	uint64_t stop_kinds[STOPK_N]; /* every handled stop, by kind */
	uint64_t tso_buffered; /* stores put into a store buffer (tso.c) */
	uint64_t choices;	/* session_pick()s: two or more alts */
	uint64_t state_keys;	/* of them, with choice.state computed */
	uint32_t preemptions;
	struct event *ev;
	size_t nev, capev;
	struct decision *dec;
	size_t ndec, capdec;
	uint64_t hash;
	pid_t stray[64];	/* stopped tids not yet claimed by a clone */
	int nstray;
	int nheld;		/* threads held at their exec (watch) */
	pid_t freep[64];	/* the program's own child processes */
	int nfreep;
	bool ended;		/* the process is gone */
	bool failed;		/* res->failure is set; kill and stop */
	bool pruned;		/* failed as the strategy's prune (pruned) */
	bool need_schedule;
	/* a spinner's words were found this run (thread.c watch_arm) */
	bool watching;
	/* single steps watching spin words (thread.c watch_request), and
	 * whether a thread ran on unwatched past their cap */
	uint64_t watch_steps;
	bool watch_capped;
	int fatal_thread;	/* thread that got the last fatal signal */
	int fatal_sig;
	char fatal_where[LOC_MAX];
	bool fatal_foreign;	/* it was sent by another process */
	int exit_thread;
	char exit_where[LOC_MAX];
	double t0;
	double self_cpu0;	/* ptloom's CPU seconds at the start */
	/* bp_analysis_seconds() when last absorbed into the clocks above */
	double analysis_wall, analysis_cpu;
	uint64_t run_len;	/* points the current thread took in a row */
	/* steps taken in a row by yielding threads (spinners, sched_yield):
	 * past SPIN_EXPIRIES nothing expires early (session_stall_limit) */
	uint64_t spin_len;
	int timeout_kind;	/* FAIL_HANG or FAIL_SLOW past --timeout */
	char timeout_why[MSG_MAX];
	bool exec_seen;
	/* P0's execs (process.c on_exec): what its first one inherited
	 * (descriptors, signal dispositions and mask, directory), and its
	 * last one's command line and environment, NUL-separated, with why
	 * the last could not be started directly ("" if it could) */
	int root_execs;
	char *root_ctx;
	char *root_cmd, *root_env, *root_exe;
	size_t root_cmd_len, root_env_len;
	char root_why[MSG_MAX];
	double resume_time;	/* when the current thread was chosen */
	double step_wall;	/* wall clock at the last step taken */
	double resume_cpu;	/* its CPU time then, < 0: not sampled yet */
	int seen_ticks;		/* timer ticks already checked */
	uint64_t observed;	/* accesses reported to the observer */
	uint64_t obs_stops;	/* race discovery's observation stops */
	uint64_t obs_steps;	/* and single-steps over them */
	uint64_t obs_stack;	/* of obs_stops, at stack-relative accesses */
	/* stops and steps at the shared objects' atomics (bp.sync): a
	 * budget of their own, as large, so that the accesses' stays the
	 * accesses' */
	uint64_t obs_sync;
	/* the budget is spent: no access is observed any more, a point's
	 * neither (what it would order is no longer seen) */
	bool obs_spent;
	int live;		/* threads alive */
	uint64_t switches;	/* times another thread was chosen */
	uint64_t join_off;	/* pthread_t + join_off = its tid word */
	int spin_ms;		/* CPU ms before the next spin probe */
	bool self_kill;		/* the program sent a SIGKILL itself */
	bool sig_maybe;		/* a signal may have been sent */
	bool sig_any;		/* signals were sent in this run */
	struct timers *timers;	/* virtual alarms, timerfds (timer.c) */
	struct evloop *evl;	/* held sockets, ... (evloop.c), or NULL */
	struct livelock ll;	/* past --max-steps (tracer/spin.c) */
	bool from_checkpoint;	/* a fork of the template (checkpoint.c) */
	bool leader_reaped;	/* P0's leader's end was reported */
	bool stub_pending;	/* its start-up stub's bytes are still in */
	unsigned sole_bps;	/* breakpoint stops of a sole thread in a row */
	bool outfd_shared;	/* outfd belongs to the checkpoint */
	/* the last abnormal end of a process other than P0 (a crash or a
	 * non-zero exit): what a runner's failure most likely reports */
	int child_thread;	/* T-number, -1 if none */
	int child_sig, child_status;
	char child_where[LOC_MAX];
	char child_label[64];
	bool handed_over;	/* stop_at reached: no longer ours */
	/* the in-process agent (tracer/agent.c): the page shared with
	 * the program, NULL while no process has it; its clock and reads
	 * as the last agent_resume() left them; clock reads the program
	 * made there; why a process has no page ("" if all have) */
	struct agent_data *ag;
	uint64_t ag_now, ag_reads;
	bool ag_synced;
	/* the thread allowed to log points in the page (-1: none), and the
	 * log's offset up to which they are taken */
	int ag_solo;
	uint64_t ag_flushed;
	uint64_t ag_looked; /* agent_logged's last look: the log's end */
	bool ag_known;	/* ag_solo's points are choices known in advance */
	bool ag_taken;	/* this stop's flush took logged accesses */
	/* the hand-off between threads in the program (agent.c): a plan
	 * runs; its picks, point by point from the log's start, and how
	 * many (threads are indexed by their index in th[]) */
	bool ho_active, ho_frozen;
	int ho_n;
	uint16_t ho_picks[1024];
	char ag_note[128];
	struct {		/* state keys (tracer/state.c) */
		bool off;	/* beyond the key for the rest of the run */
		bool based;
		size_t scanned;	/* events checked */
		long long wchar0, out0;
		uint64_t hashed; /* bytes of memory hashed this run */
	} key;
};

/*
 * Virtual time across processes.  A deadline of process p armed at step
 * `armed` (a timed wait of one of its threads, or one of its timers)
 * that the virtual clock has not reached may expire early, as a choice
 * ("the machine was slow"), only when it can race nothing but p's own
 * threads: a sleep that assumes a worker finished, an alarm between two
 * stores.  Not while another process has work to do (a `sleep N; kill`
 * watchdog's sleep while the test runs), and not when p waits for a
 * child: p has a child it has not reaped (alive, or ended and not yet
 * collected), or reaped one since the deadline was armed (timeout(1),
 * ctest's and meson's per-test timeouts, subprocess's timeout, a poll
 * loop with a deadline).  Such a deadline comes when the virtual clock
 * reaches it (the other processes' own steps and sleeps), or when nobody
 * can run, as a kernel timer would: a wrapper sees a child that ends
 * before its deadline end first.  Threads that only spin or yield are no
 * work.
 */
bool session_may_expire_early(struct session *s, const struct process *p,
			      uint64_t armed);

/*
 * Whether the scheduling policy (session_config.policy: CPython's GIL)
 * applies to process p.  Every process gets the scheduling of its own
 * image: at each exec of any process of the tree the policy says whether
 * it applies to the new image (sched_policy.adopt: a CPython it
 * supports); a forked child keeps its parent's; every other process (a
 * shell, make, a native test a Python parent runs) keeps the C-level
 * points.  The one place that decides it.
 */
bool session_policy_process(const struct session *s, const struct process *p);
/* A process of this run got the policy (so far): its run-wide effects
 * (no state keys, its conclusion) apply. */
bool session_policy_active(const struct session *s);
/* Process p ran exec: ask the policy about its new image. */
void session_policy_exec(struct session *s, struct process *p);

/* tracer/state.c: the program's state at a choice point, 0: unknown */
uint64_t session_state_key(struct session *s);

/* A choice had more candidates than MAX_ALTS alternatives (n: how many
 * were seen, at least MAX_ALTS): the run does not cover the others. */
void session_note_capped(struct session *s, int n);
void session_fail(struct session *s, int kind, struct thread *t,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int session_pick(struct session *s, struct choice *c);
/* Append e (kind, fn, obj, pc, arg filled in) to the trace as t's event,
 * and tell the strategy. */
void session_push_event(struct session *s, struct thread *t,
			const struct event *e, bool preempt, bool decided);
/* session_pick at a choice of `what` ("a wake"); when the strategy cannot
 * follow its schedule there, the run fails as diverged and -1 returns. */
int session_pick_or_fail(struct session *s, struct choice *c,
			 const char *what);
/* A wait status of tid: its death or one of its stops. */
void on_status(struct session *s, pid_t tid, int status);
/* The limits checked on every timer tick (0, -EINTR, -ETIMEDOUT,
 * -EAGAIN). */
int check_limits(struct session *s, pid_t only);
/* --timeout counts from now (after a watcher's long callback: the tree
 * was stopped meanwhile). */
void session_restart_clock(struct session *s);

#endif
