/*
 * Names and properties of the operation kinds and libc functions in
 * event.h: the words that reports, traces and schedule scripts print, and
 * which operations commute with everything that does not touch their
 * object.
 */
#include <stddef.h>

#include "event.h"

static const char *const op_names[OP_KIND_MAX] = {
	[OP_NONE] = "none",
	[OP_START] = "start",
	[OP_EXIT] = "exit",
	[OP_EXIT_GROUP] = "exit_group",
	[OP_CLONE] = "clone",
	[OP_FUTEX_WAIT] = "futex_wait",
	[OP_FUTEX_WAKE] = "futex_wake",
	[OP_FUTEX_REQUEUE] = "futex_requeue",
	[OP_YIELD] = "sched_yield",
	[OP_SLEEP] = "nanosleep",
	[OP_READ] = "read",
	[OP_WRITE] = "write",
	[OP_POLL] = "poll",
	[OP_ACCEPT] = "accept",
	[OP_CONNECT] = "connect",
	[OP_WAIT4] = "wait4",
	[OP_KILL] = "kill",
	[OP_CALL] = "call",
	[OP_ANNOTATE] = "annotate",
	[OP_ATOMIC] = "atomic",
	[OP_ACCESS] = "access",
	[OP_TIMEOUT] = "timeout",
	[OP_WOKEN] = "woken",
	[OP_SPIN] = "spin",
	[OP_SYSCALL] = "syscall",
	[OP_PYCHECK] = "python",
	[OP_TIMER] = "timer",
	[OP_DELAY] = "delay",
};

static const char *const fn_names[FN_MAX] = {
	[FN_NONE] = "none",
	[FN_MUTEX_LOCK] = "pthread_mutex_lock",
	[FN_MUTEX_TRYLOCK] = "pthread_mutex_trylock",
	[FN_MUTEX_TIMEDLOCK] = "pthread_mutex_timedlock",
	[FN_MUTEX_UNLOCK] = "pthread_mutex_unlock",
	[FN_COND_WAIT] = "pthread_cond_wait",
	[FN_COND_TIMEDWAIT] = "pthread_cond_timedwait",
	[FN_COND_SIGNAL] = "pthread_cond_signal",
	[FN_COND_BROADCAST] = "pthread_cond_broadcast",
	[FN_RWLOCK_RDLOCK] = "pthread_rwlock_rdlock",
	[FN_RWLOCK_WRLOCK] = "pthread_rwlock_wrlock",
	[FN_RWLOCK_TRYRDLOCK] = "pthread_rwlock_tryrdlock",
	[FN_RWLOCK_TRYWRLOCK] = "pthread_rwlock_trywrlock",
	[FN_RWLOCK_TIMEDRDLOCK] = "pthread_rwlock_timedrdlock",
	[FN_RWLOCK_TIMEDWRLOCK] = "pthread_rwlock_timedwrlock",
	[FN_RWLOCK_UNLOCK] = "pthread_rwlock_unlock",
	[FN_SEM_WAIT] = "sem_wait",
	[FN_SEM_TRYWAIT] = "sem_trywait",
	[FN_SEM_TIMEDWAIT] = "sem_timedwait",
	[FN_SEM_POST] = "sem_post",
	[FN_BARRIER_WAIT] = "pthread_barrier_wait",
	[FN_SPIN_LOCK] = "pthread_spin_lock",
	[FN_SPIN_TRYLOCK] = "pthread_spin_trylock",
	[FN_SPIN_UNLOCK] = "pthread_spin_unlock",
	[FN_ONCE] = "pthread_once",
	[FN_CREATE] = "pthread_create",
	[FN_JOIN] = "pthread_join",
	[FN_MTX_LOCK] = "mtx_lock",
	[FN_MTX_TRYLOCK] = "mtx_trylock",
	[FN_MTX_TIMEDLOCK] = "mtx_timedlock",
	[FN_MTX_UNLOCK] = "mtx_unlock",
	[FN_CND_WAIT] = "cnd_wait",
	[FN_CND_TIMEDWAIT] = "cnd_timedwait",
	[FN_CND_SIGNAL] = "cnd_signal",
	[FN_CND_BROADCAST] = "cnd_broadcast",
	[FN_THRD_CREATE] = "thrd_create",
	[FN_THRD_JOIN] = "thrd_join",
	[FN_USLEEP] = "usleep",
};

/* "unknown" for a value outside the enum: names are printed, never NULL. */
const char *op_kind_name(int kind)
{
	if (kind < 0 || kind >= OP_KIND_MAX || !op_names[kind])
		return "unknown";
	return op_names[kind];
}

const char *call_fn_name(int fn)
{
	if (fn < 0 || fn >= FN_MAX || !fn_names[fn])
		return "unknown";
	return fn_names[fn];
}

/*
 * Local operations act on their object only (a futex word, a lock, an fd,
 * a memory location), so two of them on different objects commute.  The
 * others change what other threads can do or see as a whole: thread birth
 * and death, signals, child processes, the emulated clock (sleeps,
 * timeouts), a wake-up's resumption, and syscalls we do not model.
 * pthread/C11 create and join and usleep are calls, but they act on thread
 * lifetimes and the clock rather than on their object, so they count as
 * global too.  Answering false is always safe; true must be right.
 */
bool op_is_local(int kind, int fn)
{
	switch (kind) {
	case OP_FUTEX_WAIT:
	case OP_FUTEX_WAKE:
	case OP_FUTEX_REQUEUE:
	case OP_YIELD:
	case OP_READ:
	case OP_WRITE:
	case OP_POLL:
	case OP_ACCEPT:
	case OP_CONNECT:
	case OP_ANNOTATE:
	case OP_ATOMIC:
	case OP_ACCESS:
		return true;
	case OP_CALL:
		switch (fn) {
		case FN_CREATE:
		case FN_JOIN:
		case FN_THRD_CREATE:
		case FN_THRD_JOIN:
		case FN_USLEEP:
			return false;
		default:
			return fn > FN_NONE && fn < FN_MAX;
		}
	default:
		return false;
	}
}

/*
 * The bytes a call's object spans (glibc x86-64: its internal futex words
 * lie inside it), 64 for calls whose object size is not known here.
 */
uint64_t call_object_size(int fn)
{
	switch (fn) {
	case FN_MUTEX_LOCK:
	case FN_MUTEX_TRYLOCK:
	case FN_MUTEX_TIMEDLOCK:
	case FN_MUTEX_UNLOCK:
	case FN_MTX_LOCK:
	case FN_MTX_TRYLOCK:
	case FN_MTX_TIMEDLOCK:
	case FN_MTX_UNLOCK:
		return 40; /* pthread_mutex_t */
	case FN_COND_WAIT:
	case FN_COND_TIMEDWAIT:
	case FN_COND_SIGNAL:
	case FN_COND_BROADCAST:
	case FN_CND_WAIT:
	case FN_CND_TIMEDWAIT:
	case FN_CND_SIGNAL:
	case FN_CND_BROADCAST:
		return 48; /* pthread_cond_t */
	case FN_RWLOCK_RDLOCK:
	case FN_RWLOCK_WRLOCK:
	case FN_RWLOCK_TRYRDLOCK:
	case FN_RWLOCK_TRYWRLOCK:
	case FN_RWLOCK_TIMEDRDLOCK:
	case FN_RWLOCK_TIMEDWRLOCK:
	case FN_RWLOCK_UNLOCK:
		return 56; /* pthread_rwlock_t */
	case FN_SEM_WAIT:
	case FN_SEM_TRYWAIT:
	case FN_SEM_TIMEDWAIT:
	case FN_SEM_POST:
	case FN_BARRIER_WAIT:
		return 32; /* sem_t, pthread_barrier_t */
	case FN_SPIN_LOCK:
	case FN_SPIN_TRYLOCK:
	case FN_SPIN_UNLOCK:
		return 4;
	default:
		return 64;
	}
}
