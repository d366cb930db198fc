/*
 * Events and decisions: the vocabulary shared by the tracer (which emits
 * them), the strategies (which choose among them), the schedule files
 * (which store them) and the reports (which explain them).
 *
 * An *event* is one scheduling point reached by one thread: the operation
 * it is about to perform, on which object, from which code address.  A
 * *decision* is a choice the supervisor made where more than one
 * alternative existed: which thread runs next, which waiter a wake picks,
 * whether a timed wait times out now.
 */
#ifndef PTLOOM_EVENT_H
#define PTLOOM_EVENT_H

#include <stdbool.h>
#include <stdint.h>

/* Operation kinds.  The numeric values are stored in schedule files. */
enum op_kind {
	OP_NONE = 0,
	OP_START = 1,	    /* a new thread's first step */
	OP_EXIT = 2,	    /* exit(2) of one thread */
	OP_EXIT_GROUP = 3,  /* exit_group(2): the process ends */
	OP_CLONE = 4,	    /* clone/clone3: a thread is created */
	OP_FUTEX_WAIT = 5,  /* FUTEX_WAIT / WAIT_BITSET */
	OP_FUTEX_WAKE = 6,  /* FUTEX_WAKE / WAKE_BITSET / WAKE_OP */
	OP_FUTEX_REQUEUE = 7,
	OP_YIELD = 8,	    /* sched_yield */
	OP_SLEEP = 9,	    /* nanosleep / clock_nanosleep */
	OP_READ = 10,	    /* read/recv on a pipe or socket */
	OP_WRITE = 11,	    /* write/send on a pipe or socket */
	OP_POLL = 12,	    /* poll/select/epoll_wait */
	OP_ACCEPT = 13,
	OP_CONNECT = 14,
	OP_WAIT4 = 15,
	OP_KILL = 16,	    /* kill/tgkill/tkill */
	OP_CALL = 17,	    /* entry of a libc synchronisation function */
	OP_ANNOTATE = 18,   /* ptloom_yield("label") */
	OP_ATOMIC = 19,	    /* an atomic read-modify-write instruction */
	OP_ACCESS = 20,	    /* a racy memory access */
	OP_TIMEOUT = 21,    /* a timed wait timed out */
	OP_WOKEN = 22,	    /* a blocked thread was woken and resumes */
	OP_SPIN = 23,	    /* an adaptive yield point inside a spin loop */
	OP_SYSCALL = 24,    /* another synchronising syscall */
	OP_PYCHECK = 25,    /* CPython's eval-breaker check (the GIL) */
	OP_TIMER = 26,	    /* a timer expires (alarm, POSIX timer, timerfd) */
	OP_DELAY = 27,	    /* an event loop's wait: a socket is seen later, or
			       its timeout comes first (fn: EVL_FN) */
	OP_KIND_MAX
};

/* Libc synchronisation functions trapped at their entry (OP_CALL). */
enum call_fn {
	FN_NONE = 0,
	FN_MUTEX_LOCK,
	FN_MUTEX_TRYLOCK,
	FN_MUTEX_TIMEDLOCK,
	FN_MUTEX_UNLOCK,
	FN_COND_WAIT,
	FN_COND_TIMEDWAIT,
	FN_COND_SIGNAL,
	FN_COND_BROADCAST,
	FN_RWLOCK_RDLOCK,
	FN_RWLOCK_WRLOCK,
	FN_RWLOCK_TRYRDLOCK,
	FN_RWLOCK_TRYWRLOCK,
	FN_RWLOCK_TIMEDRDLOCK,
	FN_RWLOCK_TIMEDWRLOCK,
	FN_RWLOCK_UNLOCK,
	FN_SEM_WAIT,
	FN_SEM_TRYWAIT,
	FN_SEM_TIMEDWAIT,
	FN_SEM_POST,
	FN_BARRIER_WAIT,
	FN_SPIN_LOCK,
	FN_SPIN_TRYLOCK,
	FN_SPIN_UNLOCK,
	FN_ONCE,
	FN_CREATE,
	FN_JOIN,
	FN_MTX_LOCK,
	FN_MTX_TRYLOCK,
	FN_MTX_TIMEDLOCK,
	FN_MTX_UNLOCK,
	FN_CND_WAIT,
	FN_CND_TIMEDWAIT,
	FN_CND_SIGNAL,
	FN_CND_BROADCAST,
	FN_THRD_CREATE,
	FN_THRD_JOIN,
	FN_USLEEP,
	FN_MAX
};

/* Decision kinds. */
enum decision_kind {
	DEC_RUN = 0,	 /* which thread performs its next operation */
	DEC_WAKE = 1,	 /* which waiter a wake of fewer than all picks */
	DEC_POLL = 2,	 /* what a wait for several descriptors (poll,
			    select, epoll_wait) sees: all that are ready, one
			    of them later, or its timeout first
			    (tracer/evloop.c) */
};

/* event.fn of an OP_DELAY: the wait (0 poll, 1 ppoll, 2 select,
 * 3 pselect6, 4 epoll_wait, 5 epoll_pwait, 6 epoll_pwait2) and whether its
 * timeout came first (obj 0, arg its milliseconds) or a socket is seen
 * later (obj its object, arg the program's descriptor). */
#define EVL_FN(wait, timer) (1 + (wait) * 2 + ((timer) ? 1 : 0))
#define EVL_FN_WAIT(fn) (((fn) - 1) / 2)
#define EVL_FN_TIMER(fn) (((fn) - 1) % 2)

/* alt.fn of an OP_WAIT4 that may block (no WNOHANG): for the reduction,
 * it depends only on children's deaths, stops and continues. */
#define WAIT_BLOCKING 1
/* alt.fn of the OP_CLONE point at which a fork's parent goes on: it acts
 * on its own process only, like a thread's first step. */
#define FORK_RETURN 1
/* alt.fn of an OP_CLONE that makes a thread (CLONE_THREAD), at the
 * syscall and at its return in the parent: for the reduction, it acts on
 * the threads' bookkeeping only (analysis/dfs.c DEP_JOIN); the new
 * thread's first step follows it (analysis/dpor.c). */
#define THREAD_CLONE 2
/* alt.fn of an OP_READ of a regular file at a position of its own (pread,
 * preadv): it neither changes the file nor moves an offset, so two of
 * them on one file commute (analysis/dfs.c) */
#define FILE_PREAD 1

/* alt.timeout and decision.timeout of a store that enters its thread's
 * store buffer (x86-TSO, tracer/tso.c) instead of memory: the thread's
 * other alternative, a delay (cost 1); 1 is a timed wait's timeout */
#define ALT_BUFFER 2
/* event.fn of an OP_ACCESS: the store went into the thread's store buffer
 * (TSO_BUFFERED), or an access made while stores of the thread are still
 * in it (TSO_WINDOW) */
#define TSO_BUFFERED 1
#define TSO_WINDOW 2
/* ... or its buffered stores reach memory (obj: the first one's) */
#define TSO_DRAIN 3

/* One alternative at a choice point. */
struct alt {
	uint16_t thread;  /* T-number */
	uint8_t timeout;  /* 1: the thread's timed wait times out;
			     ALT_BUFFER: its store is buffered */
	uint8_t cost;	  /* 1 if taking it is a preemption */
	uint8_t kind;	  /* enum op_kind of the thread's pending operation */
	uint8_t yield;	  /* the pending operation is a yield */
	uint8_t fn;	  /* enum call_fn of a pending OP_CALL; WAIT_BLOCKING,
			     FORK_RETURN */
	uint8_t global;	  /* it may touch anything (a signal's handler) */
	uint8_t woken;	  /* a timeout whose deadline came while only
			     yielders could run: its thread is one that can
			     run, for the samplers too (sched.c) */
	uint8_t readers;  /* a pending glibc pthread_rwlock_rdlock or _unlock
			     call and its lock as read at this point: 1 +
			     its readers (at most 254) when no writer holds
			     or waits as primary and no reader waits; else
			     0 (state, not the operation: same_op ignores
			     it) */
	/* a pending racy access or atomic instruction that only reads (a
	 * load, not a store nor a locked read-modify-write): for samplers,
	 * not part of the operation (same_op ignores it) */
	uint8_t reads;
	uint64_t obj;	  /* the object that operation touches, 0 if none */
	uint64_t obj2;	  /* a second one: cond_wait's mutex, the tid word
			   * an exit clears, FUTEX_WAKE_OP's second word */
	uint64_t pc;	  /* where the pending operation is, as the event
			   * it becomes will say (event.pc); for samplers,
			   * not part of the operation (same_op ignores it) */
};

#define MAX_ALTS 256

/* A choice point offered to a strategy. */
struct choice {
	uint32_t step;	     /* index of the scheduling point in the run */
	uint8_t kind;	     /* enum decision_kind */
	int current;	     /* T-number of the thread that ran last, -1 */
	uint32_t preemptions; /* preemptions taken so far in this run */
	uint64_t state;	     /* the program's state, if the strategy asks
				(strategy.want_state); 0: unknown */
	int nalts;
	struct alt alts[MAX_ALTS]; /* default choice first */
};

/* event.sent_to of an OP_KILL: thread T (1 + T), process P
 * (EVENT_TO_PROC | P), or a group */
#define EVENT_TO_THREAD(t) ((uint16_t)(1 + (t)))
#define EVENT_TO_PROC 0x8000u
#define EVENT_TO_GROUP 0xfffeu /* a process group */
#define EVENT_TO_ALL 0xffffu   /* every process it may signal */

/* A decision as recorded in a schedule. */
struct decision {
	uint32_t step;
	uint8_t kind;	  /* enum decision_kind */
	uint8_t timeout;  /* the chosen alternative was a timeout (1) or a
			     buffered store (ALT_BUFFER) */
	uint16_t thread;  /* chosen T-number */
	uint16_t index;	  /* index of the chosen alternative */
	uint16_t nalts;	  /* how many alternatives there were */
};

/* One scheduling point as it happened. */
struct event {
	uint32_t step;
	uint16_t thread;  /* T-number */
	uint8_t kind;	  /* enum op_kind */
	uint8_t fn;	  /* enum call_fn for OP_CALL, else 0 */
	uint8_t preempt;  /* the thread was chosen by a preemption */
	uint8_t decided;  /* a decision with >1 alternative chose it */
	/* for show only, never in the trace hash nor compared by replay: */
	uint8_t handler_sig; /* the thread ran its handler of this signal
				in this step, before the operation */
	uint8_t sent_sig;    /* OP_KILL: the signal sent, 0 unknown */
	uint16_t sent_to;    /* OP_KILL: whom to (EVENT_TO_*), 0 unknown */
	uint64_t obj;	  /* object address (futex word, mutex, fd) */
	uint64_t pc;	  /* code address of the operation (call site) */
	int64_t arg;	  /* a second operand: wake count, length, ... */
};

const char *op_kind_name(int kind);
const char *call_fn_name(int fn);
/* True for operations that only touch their object (commute otherwise). */
bool op_is_local(int kind, int fn);
/* The bytes a call's object spans (glibc x86-64: its internal futex words
 * lie inside it), 64 for calls whose object size is not known. */
uint64_t call_object_size(int fn);

#endif
