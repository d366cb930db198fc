/*
 * SysV semaphores (semop, semtimedop) as scheduling points.  A semop that
 * cannot proceed sleeps in the kernel, and its timeout (semtimedop) runs
 * on the machine's clock: while it slept, ptloom held every other thread
 * as if it still ran, so the thread that would post never ran before the
 * timeout (a correct program's 10 s semtimedop failed with EAGAIN), an
 * untimed one waited out --timeout, and a timeout that should have passed
 * was never seen on the virtual clock.  Instead the call is a point
 * (OP_SYSCALL) whose readiness ptloom judges, as a flock's
 * (tracer/flock.c): the set's values (semctl GETALL) against the call's
 * operations, applied in order as the kernel does (all or none: a
 * negative one needs that much, a zero one a zero value).  A ready call
 * is the kernel's, which then completes it at once (nobody else runs
 * meanwhile); one that is not blocks (BLOCK_FD) until another thread's
 * semop, semctl or exit (SEM_UNDO) makes it ready, judged again at every
 * scheduling round, or until its timeout passes on the virtual clock
 * (EAGAIN, as the kernel's).  A set removed under a waiter ends its wait
 * with EIDRM.  A set the run made with IPC_PRIVATE is the program's: a
 * wait on it nobody can end is a deadlock; one found by its key may be
 * posted by any process on the machine: the world's, waited for in real
 * time up to --timeout.  When ptloom cannot read the set (no permission,
 * a bad id, more than SEM_OPS_MAX operations), the kernel decides, as
 * before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include "session_int.h"

#define SEM_OPS_MAX 4096 /* operations judged; more: the kernel's E2BIG */
#define SEM_VMAX 32767	/* SEMVMX */

union semun_ {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

/* 1: t's pending semop would complete now (or fail at once: the kernel's
 * to say how); 0: it would wait; -1: the set is gone. */
static int judge(struct thread *t)
{
	struct semid_ds ds;
	size_t n = t->sem_nops;
	struct sembuf *ops;
	unsigned short *val;
	int ready = 1;

	if (semctl(t->sem_id, 0, IPC_STAT, (union semun_){ .buf = &ds }) < 0)
		return errno == EINVAL || errno == EIDRM ? -1 : 1;
	if (!n || n > SEM_OPS_MAX || !ds.sem_nsems)
		return 1;
	ops = malloc(n * sizeof(*ops));
	val = malloc(ds.sem_nsems * sizeof(*val));
	if (!ops || !val ||
	    mem_read(t->p, t->sem_ops, ops, n * sizeof(ops[0])) ||
	    semctl(t->sem_id, 0, GETALL, (union semun_){ .array = val }) < 0)
		goto out; /* the kernel's to say */
	for (size_t i = 0; i < n; i++) {
		unsigned num = ops[i].sem_num;
		int v, r;

		if (num >= ds.sem_nsems)
			break; /* EFBIG */
		v = val[num];
		r = v + ops[i].sem_op;
		if ((ops[i].sem_op == 0 && v != 0) || r < 0) {
			/* it waits, unless it is IPC_NOWAIT's EAGAIN */
			ready = (ops[i].sem_flg & IPC_NOWAIT) ? 1 : 0;
			break;
		}
		if (r > SEM_VMAX)
			break; /* ERANGE */
		val[num] = (unsigned short)r;
	}
out:
	free(ops);
	free(val);
	return ready;
}

bool sem_ready(struct thread *t)
{
	return judge(t) != 0;
}

bool sem_gone(struct thread *t)
{
	return judge(t) < 0;
}

bool sem_external(struct session *s, struct thread *t)
{
	for (int i = 0; i < s->nipc; i++)
		if (s->ipc[i].nr == SYS_semget && s->ipc[i].id == t->sem_id)
			return false; /* the run's own, by IPC_PRIVATE */
	return true;
}
