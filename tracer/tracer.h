/*
 * The supervisor's public interface: run one execution of a program under
 * ptrace, with exactly one thread running at a time, asking a strategy at
 * every choice point which thread goes next.
 *
 * One call of session_run() is one execution (rr's Session): it spawns the
 * program, follows all its threads, emulates futexes, sleeps, clocks and
 * randomness, and returns how the execution ended together with its trace.
 * The tracer knows nothing of exploration, schedule files or reports.
 */
#ifndef PTLOOM_TRACER_H
#define PTLOOM_TRACER_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "event.h"

struct taddr {
	uint64_t v; /* an address in the tracee, never ours */
};

/* The strategy: a struct of function pointers the tracer calls. */
struct strategy {
	void *ctx;
	/* Called at every choice point with at least two alternatives.
	 * Returns the index of the chosen alternative, or -1 to abandon the
	 * run (e.g. a replayed schedule that cannot be followed). */
	int (*pick)(void *ctx, const struct choice *c);
	/* Optional: told of every event as it is recorded, chosen or not. */
	void (*executed)(void *ctx, const struct event *e);
	/* Optional: asked at a run choice with one alternative before it is
	 * taken; false abandons the run (a reduction saw it is redundant). */
	bool (*single)(void *ctx, const struct choice *c);
	/* Set choice.state at run choices (tracer/state.c; it costs a
	 * read of the program's writable memory) where want_state says
	 * so, told the choice without its state; NULL: never. */
	bool (*want_state)(void *ctx, const struct choice *c);
	/* Optional: decisions known in advance.  The number of run choices
	 * from c->step on at which, offered c's alternatives each time
	 * (c->current's next operation in its place), pick would choose
	 * c->current again, touching nothing pick would not; 0: cannot
	 * tell.  The in-process agent lets the thread pass that many
	 * points without a stop (tracer/agent.c); pick is still asked for
	 * each, at the next stop.  Only choices at which want_state would
	 * say no may be counted: the program has run on by then. */
	uint64_t (*known)(void *ctx, const struct choice *c);
	/* Optional: the pick pick would make at c, drawn from *state (a
	 * copy of the strategy's own, peek_start's), which moves on as
	 * pick's would, the strategy left as it is; -1: cannot tell.  The
	 * agent's hand-off between threads follows a plan of such picks
	 * (tracer/agent.c); pick is still asked for each at the next
	 * stop. */
	uint64_t (*peek_start)(void *ctx);
	int (*peek)(void *ctx, const struct choice *c, uint64_t *state);
	/* Optional: after pick or single abandoned the run, whether that
	 * was a prune (a state or a sleep set the search has covered),
	 * whose result nobody reads: the run then ends without describing
	 * where its threads were (their stacks, the trace's symbols). */
	bool (*pruned)(void *ctx);
};

/* Scheduling-point sets (--points). */
enum {
	POINTS_SYNC = 1u << 0,
	POINTS_ATOMICS = 1u << 1,
	POINTS_RACES = 1u << 2,
	/* --points was given: under a policy (Python), C-level points
	 * outside the interpreter stay preemption points */
	POINTS_CLEVEL = 1u << 3,
	/* x86-TSO: a racy store followed by a racy load may stay in its
	 * thread's store buffer past that load (tracer/tso.c) */
	POINTS_TSO = 1u << 4,
};

/* A code address in the program that is made a scheduling point. */
struct user_point {
	uint64_t addr; /* absolute address (ASLR is off) */
	uint8_t kind;  /* OP_ATOMIC, OP_ACCESS or OP_SPIN */
};

/* Observer of memory accesses, for race discovery (may be NULL). */
struct access_observer {
	void *ctx;
	/* every instruction address in [lo, hi) of the program's own text
	 * that may access memory is reported before it executes, with the
	 * effective address it accesses, when more than one thread exists;
	 * untyped_word: the instruction is one plain load or one plain store
	 * (no read-modify-write, string or vector-indexed access) of 1, 2, 4
	 * or 8 bytes aligned to their size, in code of atomic_exe that no
	 * debug information covers (session_config.typed_code): what an
	 * atomic's load or store is on x86, with nothing to say whether it
	 * is one */
	void (*access)(void *ctx, int thread, uint64_t pc, uint64_t addr,
		       int size, bool write, bool atomic, bool untyped_word);
	/* synchronisation: release/acquire on an object, fork/join */
	void (*sync)(void *ctx, int thread, int kind, uint64_t obj,
		     int other_thread);
	/* a heap block freed (free, realloc: its address and usable
	 * size) by a call that returns to pc: a write of all of it, after
	 * which its memory is whoever's gets it next (NULL: sync's
	 * SYNC_FREE) */
	void (*freed)(void *ctx, int thread, uint64_t pc, uint64_t addr,
		      uint64_t size);
	uint64_t max_accesses; /* budget per run; 0 = unlimited */
	/* the process is about to end and still alive (symbolise now) */
	void (*alive)(void *ctx, int pid);
	/* does every access reported of thread other (one that ended)
	 * happen before thread's next?  NULL: take it that it does */
	bool (*after)(void *ctx, int thread, int other);
};

/*
 * A scheduling policy layered over the tracer (may be NULL): a language
 * runtime's own view of which points matter (analysis/python.c: CPython's
 * GIL).  The tracer only calls it; the policy reads and writes the tracee
 * through the session_* accessors below.
 */
struct session;
struct run_result;
/* What a policy applies to one process image (an interpreter's). */
struct policy_image {
	/* code points installed with the other breakpoints (the process's
	 * first clone); kind is the event kind their hits get */
	const struct user_point *points;
	size_t npoints;
	/* its points replace the libc synchronisation calls' in the
	 * process: the calls would never be choices under this policy, so
	 * their breakpoints are not installed there (each hit is a stop) */
	bool own_points;
	/* NULL: points[].addr are addresses.  Else the path (as
	 * /proc/PID/maps names it) of a shared object the points are in:
	 * each addr is an offset from the start of that object's first
	 * mapping in the process (a libpython), added when the points are
	 * installed; not mapped there at its first thread: the run is
	 * unsupported (never a run without the policy's points) */
	const char *object;
};

struct sched_policy {
	void *ctx;
	/* a process runs a new image: at each exec of any process of the
	 * tree, the program's own first one included (exe as /proc/PID/exe
	 * names it).  Returns the policy's image for it, or NULL: the
	 * policy does not apply to that process, which keeps every C-level
	 * point.  A forked child keeps its parent's.  Called once per exec;
	 * the policy may cache by path. */
	const struct policy_image *(*adopt)(void *ctx, const char *exe);
	/* what "complete to bound N" covers under this policy, for the
	 * verdict ("GIL switches in ..."); NULL: every point */
	const char *coverage;
	/* a new execution starts (per-run state) */
	void (*begin)(void *ctx);
	/* thread hit one of its image's points: true makes it a scheduling
	 * point, false steps over it */
	bool (*want_point)(void *ctx, struct session *s, int thread);
	/* every choice, also with one alternative, before the strategy: may
	 * drop or reorder alternatives and change their costs; must leave
	 * at least one */
	void (*shape)(void *ctx, struct session *s, struct choice *c);
	/* thread, of a process the policy applies to, is about to run */
	void (*resume)(void *ctx, struct session *s, int thread);
	/* where a stopped thread is, in the policy's terms ("withdraw at
	 * bank.py:8"), and its name; "" when unknown */
	void (*where)(void *ctx, struct session *s, int thread, char *buf,
		      size_t len);
	void (*name)(void *ctx, struct session *s, int thread, char *buf,
		     size_t len);
	/* the run goes on in a fork of a checkpoint template
	 * (checkpoint.c): thread 0 is a copy of the template's thread
	 * old_tid, and ids the program stored before its first thread are
	 * old_tid's; may fix them in the tracee (may be NULL) */
	void (*forked)(void *ctx, struct session *s, int old_tid);
	/* the run is over (output read): may refine the failure's location */
	void (*conclude)(void *ctx, struct run_result *res);
	/* race discovery in the program's first process: the memory
	 * accesses observed are those of the code of the mapped objects
	 * this accepts (path as /proc/PID/maps names it; CPython's
	 * extension modules) instead of the executable's.  NULL: the
	 * executable's */
	bool (*observe_object)(void *ctx, const char *path);
};

/* What a policy may see of a thread. */
struct session_thread {
	int tid;
	int proc;	/* P-number: 0 is the program's own process */
	bool policy;	/* the policy applies to its process */
	const struct policy_image *image; /* ... with this image */
	bool first;	/* its process's first thread (T-number 0 in it) */
	int state;	/* enum sched_state (sched.h) */
	bool timed;	/* blocked with a deadline */
	uint8_t kind, fn; /* pending operation */
	uint64_t obj, pc;
};

/* For policies: the tracee's memory and threads (0 or -errno).
 * session_peek/poke: the program's own process, P0; the _in forms:
 * process proc (a P-number, session_thread.proc). */
int session_peek(struct session *s, uint64_t addr, void *buf, size_t len);
int session_poke(struct session *s, uint64_t addr, const void *buf,
		 size_t len);
int session_peek_in(struct session *s, int proc, uint64_t addr, void *buf,
		    size_t len);
int session_poke_in(struct session *s, int proc, uint64_t addr,
		    const void *buf, size_t len);
int session_thread_info(struct session *s, int thread,
			struct session_thread *out);
int session_nthreads(struct session *s);
/* The run is a race-discovery run (session_config.observer). */
bool session_observing(struct session *s);
/* The code at pc of process proc (a P-number), symbolised ("bump at
 * ext.c:17"); "" if unknown or not symbolising. */
void session_code_location(struct session *s, int proc, uint64_t pc,
			   char *buf, size_t len);
/* Where the first mapping of the shared object at `path` (as
 * /proc/PID/maps names it) starts in the program's process; 0: not
 * mapped (or the process is gone).  Reads /proc/PID/maps. */
uint64_t session_object_start(struct session *s, const char *path);
uint64_t session_object_start_in(struct session *s, int proc,
				 const char *path);

/* Event pcs with this tag name a policy-described location (a Python
 * frame): run_result.syms maps them to text. */
#define EVENT_PC_POLICY (0x7079ull << 48)
#define EVENT_PC_IS_POLICY(pc) (((pc) >> 48) == 0x7079)
/* An event's address without its image's tag (process_tag: bits 48 up) */
#define EVENT_ADDR(a) ((uint64_t)(a) & ((1ull << 48) - 1))

/* Synchronisation kinds passed to access_observer.sync.  SYNC_OBJECT is
 * none: a call names a synchronisation object of other_thread bytes at obj
 * (its futex words lie inside it). */
enum {
	SYNC_ACQUIRE = 1,
	SYNC_RELEASE,
	SYNC_FORK,
	SYNC_JOIN,
	SYNC_ACQREL,
	SYNC_OBJECT,
	/* an atomic read-modify-write at obj by a shared object's code,
	 * whose other accesses are not observed (a lock's), after which
	 * the word is not 0: its thread may release it later by a plain
	 * store nobody sees (SYNC_ATOMIC), or it is 0 (SYNC_ATOMIC_FREE:
	 * a lock's release) */
	SYNC_ATOMIC,
	SYNC_ATOMIC_FREE,
	/* free() or realloc() of the heap block at obj, other_thread bytes
	 * long: whoever gets its memory next is a new owner */
	SYNC_FREE,
	/* a pthread rwlock's readers' side: a read unlock releases into
	 * it, a write lock acquires it (as it acquires the lock object,
	 * which only write unlocks release): two read sections are not
	 * ordered by the lock */
	SYNC_RELEASE_READERS,
	SYNC_ACQUIRE_READERS,
	/* the thread creates another while no other thread of its process
	 * lives: its accesses since the others exited were not observed,
	 * and any of them may have read an atomic they released (a
	 * detached worker's counter, read before starting the next
	 * thread): it acquires every atomic's release */
	SYNC_ACQUIRE_ATOMICS,
	/* a caught signal's handler starts running in the thread: what it
	 * does until SYNC_HANDLER_LEAVE is a context of its own, which may
	 * come between any two instructions of the thread after the
	 * signal could be delivered, not after them (obj 1: a fault of the
	 * thread's own instruction, which it follows; 0: sent); it
	 * acquires what SYNC_SIGSTATE released and SYNC_SIGNALS_KEY */
	SYNC_HANDLER_ENTER,
	/* the handler returned (rt_sigreturn) or was left (siglongjmp):
	 * the thread goes on after all it did */
	SYNC_HANDLER_LEAVE,
	/* the thread unblocked signals: a handler that runs in it later
	 * comes after all it did so far (a section it ran with the signal
	 * blocked is no handler's to interrupt) */
	SYNC_SIGSTATE
};

/* The object a kill, tgkill or tkill releases and a handler's delivery
 * acquires (SYNC_RELEASE, SYNC_ACQUIRE): what the sender did before it
 * sent happens before the handler.  One for every signal (more order
 * than there is, never less); bit 63 as a descriptor's object, no
 * address. */
#define SYNC_SIGNALS_KEY ((1ull << 63) | (1ull << 61))
/* ... and SYNC_SIGSTATE's object of T-number t: released by t, acquired
 * by the handlers that run in t */
#define SYNC_SIGSTATE_KEY(t)                                                \
	((1ull << 63) | (1ull << 61) | (1ull << 60) | (uint64_t)(t))

/* Symbolisation of a live tracee, provided by the caller (analysis/). */
struct symbolizer {
	void *ctx;
	void (*attach)(void *ctx, int pid);   /* after the first clone */
	void (*detach)(void *ctx);
	/* the first frame of a stopped thread in user code */
	void (*location)(void *ctx, int tid, char *buf, size_t len);
	void (*code)(void *ctx, uint64_t pc, char *buf, size_t len);
	/* a stopped thread's whole backtrace, one frame a line (may be
	 * NULL) */
	void (*backtrace)(void *ctx, int tid, char *buf, size_t len);
	void (*data)(void *ctx, uint64_t addr, char *buf, size_t len);
};

/* The virtual clocks at a run's start: CLOCK_MONOTONIC reads 1000 s;
 * CLOCK_REALTIME what the configuration says, by default 2026-01-01 (a
 * schedule file records it, schedule-format.md), never earlier than the
 * monotonic clock nor later than 2100-01-01. */
#define CLOCK_MONOTONIC_START_NS (1000ull * 1000000000ull)
#define CLOCK_REALTIME_DEFAULT_NS (1767225600ull * 1000000000ull)
#define CLOCK_REALTIME_MIN_NS CLOCK_MONOTONIC_START_NS
#define CLOCK_REALTIME_MAX_NS (4102444800ull * 1000000000ull)

/*
 * A watcher of the process tree (may be NULL): test-suite mode
 * (cli/suite.c) learns from it which process runs which program and
 * what the processes exchange.  The tracer only reports; the callbacks
 * run while the whole tree is stopped and may take long (an exploration
 * of the new program): the run's --timeout clock starts again after an
 * exec callback.
 */
struct proc_watch {
	void *ctx;
	/* process pidx (leader pid) of parent ppidx (-1: none) was forked */
	void (*fork)(void *ctx, int pidx, int ppidx);
	/* process pidx exec'd and is stopped at its exec event (its
	 * /proc/PID files describe the new image); thread is the T-number
	 * that goes on in it.  true holds it there: it is not scheduled
	 * until held() names it */
	bool (*exec)(void *ctx, int pidx, int ppidx, pid_t pid, int thread);
	/* thread T-number thread was made in process pidx (a process's
	 * first thread after its fork() callback), in creation order */
	void (*thread)(void *ctx, int thread, int pidx);
	/* process pidx installs its breakpoints (its first thread-creating
	 * clone; a fork child inherits its parent's): code points to add
	 * for it, as session_config.user_points are for the program's own
	 * process, or NULL */
	const struct user_point *(*points)(void *ctx, int pidx, size_t *n);
	/* asked at every choice while processes are held: the P-numbers of
	 * those to let go now into pidx (at most max); with block, nothing
	 * else can run: wait until one may go.  Returns their number, or
	 * -1 to let every held process go */
	int (*held)(void *ctx, int *pidx, int max, bool block);
	/* the leader of process pidx was reaped with wait status */
	void (*died)(void *ctx, int pidx, int status);
	/* its parent's wait consumed the death of process pidx */
	void (*reaped)(void *ctx, int pidx);
	/* a thread of process pidx is about to read (write false) or
	 * write descriptor fd (read/readv/recv*, write/writev/send*) */
	void (*io)(void *ctx, int pidx, pid_t pid, int fd, bool write);
	/* a thread of process pidx sends a signal: kill(target) with
	 * tid false, tgkill/tkill(target) with tid true */
	void (*kill)(void *ctx, int pidx, pid_t target, bool tid);
};

/* The inode of the socket at the other end of descriptor fd of process
 * pid (Unix, TCP or connected UDP on this machine), 0 when none or not
 * known (tracer/fdext.c): for watchers matching the two ends of a
 * connection. */
long fdext_socket_peer(pid_t pid, int fd);

/* /proc/PID/NAME read whole, malloc'd and NUL-terminated (its length
 * into *len when len is not NULL); NULL if unreadable (tracer/process.c) */
char *tracer_proc_file(pid_t pid, const char *name, size_t *len);

struct session_config {
	char *const *argv;	/* argv[0] is the resolved program path */
	/* the argv[0] the program is given, as the user typed it (a
	 * multi-call binary reads its name there, a venv's python its
	 * directory); NULL: argv[0], the file exec'd */
	const char *argv0;
	char *const *envp;	/* the environment given to the program */
	uint64_t seed;		/* the program's randomness */
	unsigned points;	/* POINTS_* */
	uint64_t max_steps;	/* livelock cap, 0 = none */
	double timeout;		/* wall-clock seconds, 0 = none */
	int cpu;		/* CPU to pin to, -1 = do not pin */
	/* the CPUs the program would have natively (ptloom's affinity
	 * before it pinned itself): what sched_getaffinity answers while
	 * the pin is the task's mask; empty = the kernel's answer */
	cpu_set_t cpus;
	bool pass_output;	/* let the program's output through */
	const struct user_point *user_points; /* extra points, sorted */
	size_t nuser_points;
	struct access_observer *observer;
	/* spin detection: a thread running longer than this (ms) without a
	 * scheduling point is sampled and its spin PC reported */
	int spin_ms;
	volatile int *interrupted; /* set asynchronously to stop the run */
	/* CLOCK_MONOTONIC seconds past which the run stops as interrupted
	 * (FAIL_INTERRUPTED), wherever it is: a time bound that a run in
	 * flight must not overrun; 0 = none */
	double stop_wall;
	struct symbolizer *sym;	/* may be NULL */
	uint64_t clock_quantum_ns; /* virtual time per step, 0 = default */
	/* state keys (choice.state) leave the virtual clock out until the
	 * run reads it or waits on it (run_result.time_used): for a search
	 * that starts again with the clock in the key when a run does */
	bool key_no_clock;
	/* CLOCK_REALTIME at the start of the run (ns since the epoch), at
	 * least CLOCK_REALTIME_MIN; 0 = the built-in 2026-01-01 */
	uint64_t clock_realtime_ns;
	size_t output_max;	/* bytes of output kept, 0 = default */
	bool symbolize_trace;	/* symbolise the events' code and objects */
	/* with symbolize_trace: code addresses to name too, as the trace's
	 * are keyed (an event's pc, plus one unless it is a call's return
	 * address; an image's tag in the top 16 bits), whether this run's
	 * events reach them or not */
	const uint64_t *name_code;
	size_t nname_code;
	struct sched_policy *policy; /* may be NULL */
	/* note P0's execs for run_result's exec_argv (costs /proc reads at
	 * each of them: for one probing run) */
	bool note_execs;
	/* runs of an exploration start as forks of one template stopped at
	 * the first thread's creation (tracer/checkpoint.c); NULL: exec */
	struct checkpoint *checkpoint;
	/* told of forks, execs, deaths and I/O of every process */
	struct proc_watch *watch;
	/* the program's child processes run freely, unscheduled (today's
	 * --free-children); else every process is under ptloom */
	bool free_children;
	/* the kernel id (pid of a process's first thread, else tid) each
	 * T-number is to have, as the run a schedule file recorded had them
	 * (index = T-number; 0 or past nids: the first run's of this
	 * process, as without): asked for with clone3's set_tid, which
	 * needs CAP_CHECKPOINT_RESTORE or root, and an id still free */
	const int32_t *ids;
	int nids;
	/* a process other than the first that dies of a crash signal
	 * (run_result.child_crash_sig) fails the run as FAIL_CRASH, whatever
	 * the command's exit status (--fail-on-child-crash) */
	bool fail_on_child_crash;
	/* stop before step stop_step and hand the program over, every
	 * thread stopped where it is (tracer/detach.c, replay --gdb) */
	bool stop_at;
	uint64_t stop_step;
	/* race discovery: the code of the executable atomic_exe whose
	 * memory accesses are atomic operations by their source (a
	 * std::atomic's load or release store is a plain mov;
	 * symbols_elf_atomic_code), link-time pairs [lo, hi), sorted: its
	 * observed accesses are atomic */
	const char *atomic_exe;
	const uint64_t *atomic_code;
	size_t natomic_code;
	/* ... the code of atomic_exe its debug information covers
	 * (symbols_elf_unit_code), when typed_known: elsewhere in it an
	 * access's type cannot be known (access_observer.access's
	 * untyped_word) */
	const uint64_t *typed_code;
	size_t ntyped_code;
	bool typed_known;
	/* ... and its static data that are atomic objects by their type
	 * (a C11 _Atomic, a std::atomic: symbols_elf_atomic_data),
	 * link-time pairs [lo, hi), sorted: every access to them is
	 * atomic */
	const uint64_t *atomic_data;
	size_t natomic_data;
	/* race discovery: the code of the executable runtime_exe that is a
	 * language runtime's own (Go's: symbols_elf_runtime_code),
	 * link-time pairs [lo, hi), sorted: with runtime_atomics_only only
	 * its atomic instructions are observed, else its other instructions
	 * are sampled more sparsely than the program's (each retired after
	 * a few observations) */
	const char *runtime_exe;
	const uint64_t *runtime_code;
	size_t nruntime_code;
	bool runtime_atomics_only;
	/* race discovery: observe the executable's stack-relative accesses
	 * too (rsp-based, rbp-based in a frame-pointer function), which it
	 * leaves out by default: a run saw a thread touch another's stack
	 * (run_result.stack_shared), so a thread's own accesses to its
	 * locals may race */
	bool observe_stack;
	/* no in-process agent (--no-fast-path, PTLOOM_NO_FAST_PATH): clock
	 * reads are answered at syscall stops; the same run either way */
	bool no_fast_path;
};

enum failure_kind {
	FAIL_NONE = 0,
	FAIL_CRASH,
	FAIL_EXIT,
	FAIL_DEADLOCK,
	FAIL_HANG,
	FAIL_LIVELOCK,
	FAIL_DIVERGED,	  /* the strategy abandoned the run */
	FAIL_UNSUPPORTED, /* an operation ptloom cannot make deterministic */
	FAIL_INTERNAL,	  /* ptloom's own error (e.g. spawn failed) */
	FAIL_SPIN,	  /* a spin loop was found; rerun with new points */
	FAIL_INTERRUPTED, /* ptloom was interrupted (Ctrl-C) */
	FAIL_STEPS,	  /* past --max-steps, no livelock shown: too long */
	FAIL_KILLED,	  /* SIGKILLed by someone else: not the program's */
	FAIL_SLOW,	  /* past --timeout while a thread could still run:
			   * the machine or the program is slow, no hang */
};

#define LOC_MAX 256
#define MSG_MAX 4096
#define BT_MAX 2048

struct thread_report {
	int thread;
	int proc;	      /* its process: 0 the first, 1 its first child */
	char name[32];
	char state[64];	      /* "blocked", "exited", ... */
	char what[LOC_MAX];   /* e.g. pthread_mutex_lock(&orders) */
	char where[LOC_MAX];  /* e.g. migrate_users at bank.c:12 */
	char backtrace[BT_MAX]; /* "#0 withdraw at bank.c:23\n#1 ..." or "" */
};

/* A symbolised address of a trace: code ("withdraw at bank.c:23") or data
 * ("balance"). */
struct sym_entry {
	uint64_t addr;
	uint8_t data;
	char *text;
};

/*
 * What a tracee stop was, for PTLOOM_STATS: where a runtime's stops go.
 * Every stop the session handles (a wait that reported one) counts once,
 * by what it turned out to be; STOPK_FORK counts the stops of forking a
 * run from the checkpoint's template, which run_result.stops leaves out.
 */
enum stop_count_kind {
	STOPK_FUTEX_WAIT,	/* futex wait, futex_waitv, lock_pi */
	STOPK_FUTEX_WAKE,	/* futex wake, wake_op, requeue */
	STOPK_YIELD,		/* sched_yield, ptloom_yield */
	STOPK_SLEEP,		/* nanosleep, clock_nanosleep */
	STOPK_CLOCK,		/* clock_gettime, gettimeofday, time, getrandom,
				 * getrusage, times, sysinfo */
	STOPK_IO,		/* read, write, send, recv, accept, connect */
	STOPK_POLL,		/* poll, select, epoll_wait */
	STOPK_CLONE,		/* clone, clone3 (threads and forks) */
	STOPK_EXIT,		/* exit, exit_group */
	STOPK_PROC,		/* wait4, waitid, kill, tgkill, tkill */
	STOPK_SYSCALL,		/* another trapped syscall (set_tid_address) */
	STOPK_CALL,		/* breakpoint at a libc sync function */
	STOPK_ATOMIC,		/* breakpoint at an atomic instruction */
	STOPK_ACCESS,		/* breakpoint at a racy access */
	STOPK_SPIN,		/* breakpoint at a spin's yield point */
	STOPK_POLICY,		/* a scheduling policy's breakpoint (Python) */
	STOPK_OBSERVE,		/* race discovery's observation point */
	STOPK_TRAP,		/* a SIGTRAP not at a breakpoint of ptloom's */
	STOPK_TSC,		/* an int3 at an rdrand, or rdtsc (tsc.c) */
	STOPK_WATCH_STEP,	/* a step watching spin words (no DR traps) */
	STOPK_EVENT,		/* clone, fork, vfork, exec events */
	STOPK_START,		/* a new thread's first SIGSTOP */
	STOPK_SIGNAL,		/* any other signal, a group-stop */
	STOPK_DEATH,		/* a task's exit reported by a wait */
	STOPK_CHILD,		/* a stop of a free child process or a stray */
	STOPK_FORK,		/* forking the run from the template */
	/* not a stop: the clock reads the in-process agent answered
	 * (tracer/agent.c), each a STOPK_CLOCK stop without it */
	STOPK_AGENT_CLOCK,
	/* not a stop: the calls the agent's trampolines logged
	 * (tracer/tramp.c), each a STOPK_CALL stop without them */
	STOPK_AGENT_CALL,
	/* not a stop: the accesses race discovery's access slots logged
	 * (tracer/tramp.c), each a STOPK_OBSERVE stop without them */
	STOPK_AGENT_OBSERVE,
	/* not a stop: the futex wakes the agent's futex slots logged
	 * (tracer/tramp.c), each a STOPK_FUTEX_WAKE stop without them */
	STOPK_AGENT_FUTEX,
	/* not a stop: the hand-overs from one thread to another the
	 * agent's hand-off made (tracer/agent.c), each a STOPK_CALL stop
	 * without it */
	STOPK_AGENT_HANDOFF,
	STOPK_N
};

/* What this machine's CPU does (tracer/probe.c, found out once): rdtsc
 * faults under PR_SET_TSC; a debug-register write watchpoint traps.
 * Where not, ptloom makes up for it (int3s at rdtsc sites, single steps
 * watching spin words). */
bool tracer_tsc_traps(void);
bool tracer_watch_traps(void);

/* The short name of a stop kind ("futex-wait"), for PTLOOM_STATS. */
const char *stop_kind_name(int kind);

struct run_result {
	int failure;		/* enum failure_kind */
	int signal;		/* for FAIL_CRASH */
	int exit_status;	/* the program's exit status */
	int thread;		/* failing thread's T-number, -1 if none */
	char location[LOC_MAX]; /* failing thread's symbolised location */
	char thread_label[64];	/* "P1 racy T2" outside the first process */
	char message[MSG_MAX];	/* detail: deadlock report, unsupported op */
	/* FAIL_SLOW with a running thread asleep in a syscall ptloom does
	 * not schedule: which ("T1 sleeps in the kernel in semop(2), ..."),
	 * else "" */
	char kernel_wait[256];
	char *output;		/* captured stdout+stderr tail (malloc) */
	size_t output_len;
	uint64_t output_total;	/* bytes the run wrote; more than output_len
				 * when only the tail (output_max) is kept */
	struct event *events;	/* the trace (malloc) */
	size_t nevents;
	struct decision *decisions; /* decisions taken (malloc) */
	size_t ndecisions;
	uint32_t preemptions;
	uint64_t trace_hash;
	uint64_t steps;
	/* the tracee stops ptloom handled (a wait that reported one), and
	 * the decisions among two or more alternatives: how many stops a run
	 * really needs against how many it takes (PTLOOM_STATS) */
	uint64_t stops, choices;
	/* the program states hashed for the strategy (choice.state) */
	uint64_t state_keys;
	/* the run read the virtual clock or waited on it: a clock read,
	 * rdtsc, a timed wait, sleep or poll, a timer (session_config
	 * key_no_clock) */
	bool time_used;
	/* every handled stop by kind (enum stop_count_kind) */
	uint64_t stop_kinds[STOPK_N];
	/* race discovery: accesses observed, stops at observation points
	 * and single-steps over them (the budget counts the last two) */
	uint64_t observed, obs_stops, obs_steps;
	/* stops and steps at shared objects' atomics and free() (their own
	 * budget, as large) */
	uint64_t obs_sync;
	/* of obs_stops, those at stack-relative accesses (observe_stack) */
	uint64_t obs_stack;
	uint64_t spin_pc;	/* FAIL_SPIN: where a thread spins */
	/* choices with more alternatives than MAX_ALTS offers (threads able
	 * to run, waiters a wake may pick, a signal's takers, a wait's
	 * children): the others were never tried, and the most there were */
	uint32_t capped, capped_most;
	/* processes cloned with the whole memory shared (CLONE_VM, not a
	 * thread, not a vfork): ptloom keys their memory per process, so
	 * their accesses are not interleaved as threads' would be */
	uint32_t shared_vm;
	/* a file mapped shared and writable by two processes each on its
	 * own (shm_open, a file mapped after a fork): ptloom follows the
	 * shared memory a fork copies, at one address, not this */
	uint32_t shared_apart;
	/* race discovery: observed accesses by a thread to another live
	 * thread's stack (main's [stack], a stack glibc allocated): data on
	 * a stack escaped to another thread, whose owner reaches it with
	 * stack-relative accesses only session_config.observe_stack
	 * observes */
	uint32_t stack_shared;
	/* race discovery: the program's own shared objects mapped after its
	 * first thread (a plugin dlopen'ed then): their code was neither
	 * observed nor armed, and the run does not cover it; the first's
	 * file name */
	uint32_t late_objects;
	char late_object[64];
	/* a thread ran on with spin words unwatched: the debug registers
	 * do not trap here and the run spent its single steps */
	bool watch_capped;
	/* forks of a process under the scheduling policy (an interpreter)
	 * with writable shared memory other than semaphores (a
	 * multiprocessing Value or Array, shared_memory): the policy's
	 * points do not interleave the interpreters' accesses to it */
	uint32_t py_shared;
	struct thread_report *threads; /* per-thread state at the end */
	int nthreads;
	/* each T-number's kernel id in this run (index = T-number) */
	int32_t *ids;
	int nids;
	/* session_config.ids the kernel did not give: how many, and the
	 * first (its T-number, -1: none) */
	int ids_refused;
	int id_refused_thread;
	double seconds;		/* wall-clock duration */
	struct sym_entry *syms;	/* with cfg->symbolize_trace */
	size_t nsyms;
	/* stop_at reached: the pid of the program, detached and left in a
	 * group-stop (the caller kills it); 0 otherwise */
	int handed_over;
	/* with handed_over: the threads stopped between the load and the
	 * store of a split read-modify-write (bp_split_rmw), one a line
	 * ("T1 0x5555... 4 0"), thread, address, size and the value its
	 * load took; "" if none */
	char split_note[512];
	/* the shared objects (executable file mappings other than the
	 * program) of the first process when it first created a thread, or
	 * at its exit_group; address order, malloc'd */
	char **objects;
	int nobjects;
	/* the first process's executable when it created its first thread
	 * (after the execs a shell shim makes); NULL if it created none, and
	 * in a run forked from a checkpoint */
	char *exe;
	/* when P0 had exec'd more than once by then, or by its end if it
	 * created no thread (a wrapper script that ends by exec'ing the
	 * program), and session_config.note_execs: the last exec's argv and
	 * environment, NULL-terminated, malloc'd, so that a run can start
	 * there; NULL with exec_why saying why it cannot */
	char **exec_argv, **exec_envp;
	char exec_why[128];
	/* the first process other than P0 that died of a crash signal
	 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) it raised itself or got
	 * from the kernel, not one another process sent it, whatever the
	 * verdict (a parent may hide it behind its own exit status): the
	 * signal (0: none), "P1 racy T0" and where that thread was */
	int child_crash_sig;	/* or SIG_SANITIZER + SANITIZER_* */
	char child_crash_label[64];
	/* under a policy (Python): the processes that kept C-level points,
	 * "P1 racy, P2 sh" ("" if none), and those the policy applied to,
	 * "P0 python3" ("" if none) */
	char clevel[160];
	char plevel[160];
	char child_crash_where[LOC_MAX];
	/* why a process had no in-process agent ("" if every one had) */
	char agent_note[128];
	/* processes of the tree still running when P0 ended by itself
	 * ("P1 bank, P2 sh"): killed then, and what they would have done
	 * after is not in the run; "" if none */
	char outlived[128];
};

/*
 * A process ended by a sanitizer's report (AddressSanitizer,
 * ThreadSanitizer, ... print it and exit through their runtime's Die with
 * a non-zero status instead of a signal; with abort_on_error they abort:
 * SIGABRT).  run_result.child_crash_sig and, with --fail-on-child-crash,
 * run_result.signal are then SIG_SANITIZER + one of these, beyond every
 * real signal number: a crash signal of its own, named after the
 * sanitizer (sanitizer_name).
 */
#define SIG_SANITIZER 0x100
enum {
	SANITIZER_OTHER = 1,
	SANITIZER_ADDRESS,
	SANITIZER_THREAD,
	SANITIZER_UNDEFINED,
	SANITIZER_LEAK,
	SANITIZER_MEMORY,
	SANITIZER_HWADDRESS,
	SANITIZER_MAX
};
/* "AddressSanitizer", ... for SIG_SANITIZER + k; NULL for a real signal */
const char *sanitizer_name(int sig);

/* Why session_run could not start the program, for e (-errno): EAGAIN
 * names the process limit that makes fork fail (ulimit -u, pids.max). */
const char *tracer_start_error(int e);

/* Runs one execution.  Returns 0 and fills *res (see res->failure), or
 * -errno if the program could not be started at all. */
int session_run(const struct session_config *cfg, struct strategy *s,
		struct run_result *res);
void run_result_free(struct run_result *res);

/* Frees a NULL-terminated vector of malloc'd strings (and NULL). */
void free_strings(char **v);

/* "crash", "exit", ... */
const char *failure_kind_name(int kind);

/* Fork checkpoints (tracer/checkpoint.c): one per exploration and
 * process; taken by the first run that reaches the first thread. */
struct checkpoint;
struct checkpoint *checkpoint_new(void);
void checkpoint_free(struct checkpoint *cp); /* ends the template */
/* Why the exploration runs from exec after all, or NULL. */
const char *checkpoint_note(const struct checkpoint *cp);
unsigned checkpoint_forks(const struct checkpoint *cp);
/* runs that started from exec because another process held the template's
 * pid when they forked */
unsigned checkpoint_pid_taken(const struct checkpoint *cp);

/* Resolve a program name on PATH like a shell. Returns a malloc'd path or
 * NULL (errno set). */
char *tracer_find_program(const char *name);

/* Kill every process the tracer started and still traces (atexit/signal
 * safe). */
void tracer_kill_all(void);

/* Forget the thread ids earlier runs gave each thread index: -j worker
 * number worker (1, 2, ...) asks for its own (tracer/thread.c). */
void tracer_forget_tids(int worker);
/* The worker number given there (1, 2, ...), 0 in ptloom itself. */
int tracer_worker(void);
/* May this process choose its programs' ids (clone3's set_tid: root or
 * CAP_CHECKPOINT_RESTORE; PTLOOM_NO_SET_TID=1 says no, for tests)? */
bool tracer_may_set_ids(void);

/* Seccomp filters this process installed (one per launcher: see
 * tracer/spawn.c); PTLOOM_STATS reports it. */
unsigned tracer_filters_installed(void);

/*
 * Analyses of files that every ptloom process would otherwise make again
 * (libc's synchronisation entry points, their trampolines and futex
 * sites; the sweep of an executable's or library's instructions: a few to
 * a hundred milliseconds of capstone at a process's first run), kept
 * between processes by whoever installs this (analysis/filecache.c, on
 * disk).  name (a file's path) picks the entry, so that a newer analysis
 * of the same file replaces the older; key is everything the analysis
 * depends on besides ptloom's own build.  load returns a malloc'd copy of
 * what was stored under the same kind, name and key (its length in *len),
 * else NULL.  NULL: no cache.
 */
struct tracer_file_cache {
	void *(*load)(const char *kind, const char *name, const void *key,
		      size_t keylen, size_t *len);
	void (*store)(const char *kind, const char *name, const void *key,
		      size_t keylen, const void *buf, size_t len);
};
void tracer_set_file_cache(const struct tracer_file_cache *fc);

/* Is addr in one of the n sorted, disjoint pairs [lo, hi) of r (the
 * link-time ranges of session_config.atomic_code, runtime_code, ...)? */
bool ranges_contain(const uint64_t *r, size_t n, uint64_t addr);

#endif
