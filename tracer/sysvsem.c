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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include "session_int.h"

#define SEM_OPS_MAX 4096 /* operations judged; more: the kernel's E2BIG */
#define SEM_VMAX 32767	/* SEMVMX */
#define MSG_SCAN_MAX 4096 /* messages looked at for msgrcv's type */

union semun_ {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

/* A message in queue id that msgrcv's type and flags take (MSG_COPY
 * reads the queue's messages in place, by index: a kernel without it
 * (CONFIG_CHECKPOINT_RESTORE) leaves it to the kernel, 1). */
static int msg_match(int id, unsigned long qnum, int64_t type, int flg)
{
	/* a copy needs room for the whole message: msgmax bytes */
	static long *m;
	static size_t room;

	if (type == 0)
		return qnum > 0;
	if (!m) {
		FILE *f = fopen("/proc/sys/kernel/msgmax", "r");
		long max = 8192;

		if (f) {
			if (fscanf(f, "%ld", &max) != 1)
				max = 8192;
			fclose(f);
		}
		room = max > 0 && max < (1l << 20) ? (size_t)max : (1u << 20);
		m = malloc(sizeof(long) + room);
		if (!m)
			return 1;
	}
	for (unsigned long i = 0; i < qnum && i < MSG_SCAN_MAX; i++) {
		if (msgrcv(id, m, room, (long)i,
			   MSG_COPY | IPC_NOWAIT | MSG_NOERROR) < 0)
			return errno == ENOMSG ? 0 : 1;
		if (type > 0 ? ((flg & MSG_EXCEPT) ? m[0] != type
						   : m[0] == type)
			     : m[0] <= -type)
			return 1;
	}
	return qnum >= MSG_SCAN_MAX;
}

/* The same for a msgsnd or msgrcv (the kernel's rules: a message fits
 * while the queue's bytes and messages stay within msg_qbytes). */
static int judge_msg(struct thread *t)
{
	struct msqid_ds ds;

	if (msgctl(t->sem_id, IPC_STAT, &ds) < 0)
		return errno == EINVAL || errno == EIDRM ? -1 : 1;
	if (t->msg_flg & (IPC_NOWAIT | MSG_COPY))
		return 1;
	if (t->sem_nr == SYS_msgsnd)
		return t->msg_size > ds.msg_qbytes ||
		       (ds.msg_cbytes + t->msg_size <= ds.msg_qbytes &&
			ds.msg_qnum + 1 <= ds.msg_qbytes);
	return msg_match(t->sem_id, ds.msg_qnum, t->msg_type, t->msg_flg);
}

/* 1: t's pending semop (msgsnd, msgrcv) would complete now (or fail at
 * once: the kernel's to say how); 0: it would wait; -1: the set (queue)
 * is gone. */
static int judge(struct thread *t)
{
	struct semid_ds ds;
	size_t n = t->sem_nops;
	struct sembuf *ops;
	unsigned short *val;
	int ready = 1;

	if (t->sem_nr == SYS_msgsnd || t->sem_nr == SYS_msgrcv)
		return judge_msg(t);
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
	long made = t->sem_nr == SYS_msgsnd || t->sem_nr == SYS_msgrcv
			    ? SYS_msgget
			    : SYS_semget;

	for (int i = 0; i < s->nipc; i++)
		if (s->ipc[i].nr == made && s->ipc[i].id == t->sem_id)
			return false; /* the run's own, by IPC_PRIVATE */
	return true;
}
