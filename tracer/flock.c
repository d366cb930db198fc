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
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "session_int.h"

#define FLOCK_MAX 256

struct held_lock {
	bool write;
	long pid;
	char text[96]; /* as the kernel shows it, less its number */
};

/* The FLOCK entries of file (dev, ino) in a /proc locks listing; lines
 * starting "lock:" in an fdinfo file when fdinfo. */
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
		char *p = line, kind[16], mode[16], type[16];
		long pid;

		if (fdinfo) {
			if (strncmp(p, "lock:", 5))
				continue;
			p += 5;
		}
		/* "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INO 0 EOF";
		 * "N: -> FLOCK ..." is a waiter, not a holder */
		p = strchr(p, ':');
		if (!p || strstr(p, "->") || !strstr(p, want))
			continue;
		if (sscanf(p + 1, "%15s %15s %15s %ld", kind, mode, type,
			   &pid) != 4 ||
		    strcmp(kind, "FLOCK"))
			continue;
		out[n].write = !strcmp(type, "WRITE");
		out[n].pid = pid;
		snprintf(out[n].text, sizeof(out[n].text), "%s", p + 1);
		n++;
	}
	fclose(f);
	return n;
}

/* The locks conflicting with t's pending request (t->pfd[i], exclusive
 * when t->pev[i] says so) that other open file descriptions hold; their
 * holders' pids in pid[] (at most max).  -1 when it cannot tell. */
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

		for (int j = 0; j < no && !mine; j++)
			if (own[j].pid >= 0 &&
			    !strcmp(own[j].text, all[k].text)) {
				own[j].pid = -1; /* one entry each */
				mine = true;
			}
		if (mine || (!excl && !all[k].write))
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
	int n = conflicts(t, i, pid, 16);

	if (n <= 0 || n > 16)
		return n != 0;
	for (int k = 0; k < n; k++) {
		bool ours = false;

		for (int p = 0; p < s->nprocs && !ours; p++)
			ours = s->procs[p] && !s->procs[p]->dead &&
			       s->procs[p]->pid == pid[k];
		if (ours)
			return false; /* the program's own: it can let go */
	}
	return true; /* another process's, or a free child's: the world */
}
