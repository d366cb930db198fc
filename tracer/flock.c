/*
 * flock(2) as a scheduling point.  A thread that asks for a lock another
 * open file description holds would sleep in the kernel while ptloom
 * holds the holder (one thread runs at a time), so every run where two
 * threads or processes contend for one was past --timeout.  Instead the
 * request is a point (OP_SYSCALL) whose readiness ptloom judges, like a
 * read's: the kernel's table of locks (/proc/locks) less those of the
 * thread's own open file description (its /proc/TID/fdinfo), against
 * the request (an exclusive lock conflicts with any other, a shared one
 * with an exclusive one).  A ready request is made by the kernel, which
 * then grants it at once; one that is not blocks (BLOCK_FD) until an
 * unlock, a close or an exit frees the lock (judged again at every
 * scheduling round).  A lock held by a process ptloom does not run is the
 * world's: waited for in real time, up to --timeout, never a deadlock;
 * one held by the program is a deadlock when nothing else can run.
 * LOCK_NB and LOCK_UN never block: points that the kernel performs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "session_int.h"

#define FLOCK_MAX 256

struct held_lock {
	int kind;	/* LK_* */
	bool write;
	long pid;
	int64_t start, end;
	char text[112]; /* as the kernel shows it, less its number */
};

/* The locks of file (dev, ino) in a /proc locks listing; lines starting
 * "lock:" in an fdinfo file when fdinfo.  Leases are no locks here. */
static int read_locks(const char *path, dev_t dev, ino_t ino, bool fdinfo,
		      struct held_lock *out, int max)
{
	char line[256], want[64];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), " %02x:%02x:%lu ", major(dev), minor(dev),
		 (unsigned long)ino);
	while (fgets(line, sizeof(line), f) && n < max) {
		char *p = line, kind[16], mode[16], type[16], end[24];
		long pid;
		long long start;

		if (fdinfo) {
			if (strncmp(p, "lock:", 5))
				continue;
			p += 5;
		}
		/* "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INO START END";
		 * "N: -> ..." is a waiter, not a holder */
		p = strchr(p, ':');
		if (!p || strstr(p, "->") || !strstr(p, want))
			continue;
		char *q = strstr(p, want) + strlen(want);

		if (sscanf(p + 1, "%15s %15s %15s %ld", kind, mode, type,
			   &pid) != 4 ||
		    sscanf(q, "%lld %23s", &start, end) != 2)
			continue;
		if (!strcmp(kind, "FLOCK"))
			out[n].kind = LK_FLOCK;
		else if (!strcmp(kind, "POSIX"))
			out[n].kind = LK_POSIX;
		else if (!strcmp(kind, "OFDLCK"))
			out[n].kind = LK_OFD;
		else
			continue;
		out[n].write = !strcmp(type, "WRITE");
		out[n].pid = pid;
		out[n].start = start;
		out[n].end = strcmp(end, "EOF") ? strtoll(end, NULL, 10)
						: INT64_MAX;
		snprintf(out[n].text, sizeof(out[n].text), "%s", p + 1);
		n++;
	}
	fclose(f);
	return n;
}

/* Does lock h stand in the way of t's request?  flock locks meet only
 * flock locks; record locks (POSIX and OFD) meet record locks of an
 * overlapping range; a POSIX lock of t's own process never does (its
 * process owns them all), an OFD lock of t's own description is taken
 * out by the caller. */
static bool in_the_way(const struct thread *t, const struct held_lock *h,
		       bool excl)
{
	if (!excl && !h->write)
		return false;
	if (t->lk_kind == LK_FLOCK)
		return h->kind == LK_FLOCK;
	if (h->kind == LK_FLOCK || h->end < t->lk_start ||
	    h->start > t->lk_end)
		return false;
	return !(t->lk_kind == LK_POSIX && h->kind == LK_POSIX &&
		 h->pid == t->p->pid);
}

/* The locks in the way of t's pending request (t->pfd[i], exclusive when
 * t->pev[i] says so) that other owners hold; their holders' pids in pid[]
 * (at most max).  -1 when it cannot tell. */
static int conflicts(struct thread *t, int i, long *pid, int max)
{
	static struct held_lock all[FLOCK_MAX], own[8];
	char path[64];
	struct stat sb;
	int na, no, n = 0;
	bool excl = t->pev[i] & 2;

	if (fstat(t->pfd[i], &sb) < 0)
		return -1;
	na = read_locks("/proc/locks", sb.st_dev, sb.st_ino, false, all,
			FLOCK_MAX);
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", t->tid,
		 (int)t->arg);
	no = read_locks(path, sb.st_dev, sb.st_ino, true, own, 8);
	if (na < 0 || no < 0)
		return -1;
	for (int k = 0; k < na; k++) {
		bool mine = false;

		/* the description's own flock or OFD lock */
		for (int j = 0; j < no && !mine; j++)
			if (own[j].pid != -2 && own[j].kind != LK_POSIX &&
			    own[j].kind == all[k].kind &&
			    !strcmp(own[j].text, all[k].text)) {
				own[j].pid = -2; /* one entry each */
				mine = true;
			}
		if (mine || !in_the_way(t, &all[k], excl))
			continue;
		if (n < max)
			pid[n] = all[k].pid;
		n++;
	}
	return n;
}

bool flock_ready(struct thread *t, int i)
{
	long pid[1];

	/* cannot tell: let the kernel decide (as before) */
	return conflicts(t, i, pid, 1) <= 0;
}

bool flock_external(struct session *s, struct thread *t, int i)
{
	long pid[16];
	int n;

	/* a POSIX lock wait is never a deadlock of ptloom's: the kernel
	 * would fail one of a cycle with EDEADLK, which the program may
	 * handle; so it is waited for as the world's */
	if (t->lk_kind == LK_POSIX)
		return true;
	n = conflicts(t, i, pid, 16);
	if (n <= 0 || n > 16)
		return n != 0;
	for (int k = 0; k < n; k++) {
		bool ours = false;

		if (pid[k] <= 0)
			return true; /* an OFD lock's holder is unknown */
		for (int p = 0; p < s->nprocs && !ours; p++)
			ours = s->procs[p] && !s->procs[p]->dead &&
			       s->procs[p]->pid == pid[k];
		if (ours)
			return false; /* the program's own: it can let go */
	}
	return true; /* another process's, or a free child's: the world */
}
