/*
 * The open of a FIFO (named pipe) as a wait of the model.  An open for
 * reading (writing) without O_NONBLOCK sleeps in the kernel until a
 * writer (reader) exists; ptloom holds every thread but the running one,
 * so when the one that would open the other end was held, the opener
 * slept forever: the run was INCOMPLETE past --timeout.  Instead the open
 * of a FIFO the run made (mknod, mknodat: fifo_made) is a point
 * (OP_SYSCALL, FDK_FIFO) whose readiness ptloom judges: an open for
 * reading is ready when a process of the program holds the FIFO open for
 * writing (O_WRONLY or O_RDWR, its /proc/PID/fd and fdinfo) or another
 * thread waits in an open of it for writing (they meet), and the same
 * the other way round.  O_RDWR and O_NONBLOCK opens never wait (an
 * O_NONBLOCK open for writing without a reader is the kernel's ENXIO).
 * A ready open is the kernel's; one that is not blocks (BLOCK_FD) until
 * another thread's open or a fork makes it ready, judged again at every
 * scheduling round; one nobody in the program can end waits for the
 * world (fifo_external: a process outside may open the other end by the
 * FIFO's name; waited for in real time, up to --timeout: INCOMPLETE, never
 * a deadlock a correct server would get).  Opens for reading with
 * O_CLOEXEC, O_NOCTTY or O_DIRECTORY pass the seccomp filter without a
 * stop (spawn.c: ld.so's, interpreters' and compilers' reads): a FIFO
 * opened so is the kernel's.
 *
 * The kernel counts a thread asleep in its open as a reader (writer) at
 * once, and completes it as soon as the other end is opened, whatever
 * happens next; ptloom's waiter is held at its syscall's entry instead.
 * So when an open that meets waiting ones goes to the kernel, those are
 * promised (fifo_promised: ready from then on), and until each has
 * returned from its own open ptloom holds a descriptor of the FIFO
 * itself in their mode (a bridge): the kernel completes the first open,
 * the other end's reads and writes see the reader or writer the kernel
 * would count, and the promised opens complete when they run.
 *
 * FIFOs the run did not make (a test harness's, a shell's before the
 * run) stay the kernel's, as before: a process outside may be asleep in
 * its own open of one, which no descriptor shows, and a wait judged here
 * would never see it; so do all FIFOs under --free-children (a child
 * that runs freely opens its end in the kernel too).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "session_int.h"

#define FIFO_MADE_MAX (int)(sizeof(((struct session *)0)->fifo_made) / \
			    sizeof(uint64_t))
#define FIFO_BRIDGE_MAX (int)(sizeof(((struct session *)0)->fifo_bridge) / \
			      sizeof(((struct session *)0)->fifo_bridge[0]))

void fifo_made(struct session *s, struct thread *t, const char *path)
{
	struct stat sb;
	uint64_t key;

	(void)t;
	if (stat(path, &sb) || !S_ISFIFO(sb.st_mode))
		return;
	key = syscall_file_key(&sb);
	if (fifo_is_runs(s, key))
		return;
	if (s->nfifo_made == FIFO_MADE_MAX) {
		/* the oldest is forgotten: its opens are the kernel's */
		memmove(s->fifo_made, s->fifo_made + 1,
			sizeof(s->fifo_made) - sizeof(s->fifo_made[0]));
		s->nfifo_made--;
	}
	s->fifo_made[s->nfifo_made++] = key;
}

bool fifo_is_runs(const struct session *s, uint64_t key)
{
	for (int i = 0; i < s->nfifo_made; i++)
		if (s->fifo_made[i] == key)
			return true;
	return false;
}

/* Does another live thread wait in an open of t's FIFO for the other
 * end (the kernel would count it there already)? */
static bool other_end_waits(const struct session *s, const struct thread *t)
{
	for (int i = 0; i < s->nth; i++) {
		const struct thread *u = &s->th[i];

		if (u != t && u->st != SCHED_DEAD && waits_fifo(u) &&
		    u->fifo_key == t->fifo_key && u->fifo_write != t->fifo_write)
			return true;
	}
	return false;
}

bool fifo_ready(struct session *s, struct thread *t, bool world)
{
	int want = t->fifo_write ? HOLD_READ : HOLD_WRITE;

	if (t->fifo_promised || other_end_waits(s, t))
		return true;
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i] && !s->procs[i]->dead &&
		    syscall_holds_open(s->procs[i]->pid, t->fifo_key, want))
			return true;
	return world && fdext_held_outside(s, t->fifo_key, want);
}

bool fifo_external(struct session *s, struct thread *t)
{
	/* A FIFO has a name: a process outside the program may open its
	 * other end at any time, as a client may connect to a socket
	 * listening on the machine.  An open nobody in the program can
	 * complete waits for the world (INCOMPLETE past --timeout), never
	 * a deadlock: a server that makes its FIFO and waits for a client
	 * started apart from it is correct. */
	(void)s;
	(void)t;
	return true;
}

/* ptloom's own descriptor of FIFO fd (an O_PATH one) in mode (O_RDONLY,
 * O_WRONLY or O_RDWR) for owner (-1: the promised opens in the other
 * mode), if it has none; false if it cannot have one. */
static bool bridge(struct session *s, uint64_t key, int mode, int fd,
		   int owner)
{
	char name[64];
	int b, rw = -1;

	for (int i = 0; i < s->nfifo_bridge; i++)
		if (s->fifo_bridge[i].key == key &&
		    s->fifo_bridge[i].mode == mode &&
		    s->fifo_bridge[i].owner == owner)
			return true;
	if (s->nfifo_bridge == FIFO_BRIDGE_MAX)
		return false;
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	if (mode == O_WRONLY)
		/* O_NONBLOCK for writing needs a reader: one for a moment */
		rw = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	b = open(name, mode | O_NONBLOCK | O_CLOEXEC);
	if (rw >= 0)
		close(rw);
	if (b < 0)
		return false;
	s->fifo_bridge[s->nfifo_bridge].key = key;
	s->fifo_bridge[s->nfifo_bridge].mode = mode;
	s->fifo_bridge[s->nfifo_bridge].owner = owner;
	s->fifo_bridge[s->nfifo_bridge++].fd = b;
	return true;
}

void fifo_go(struct session *s, struct thread *t)
{
	bool met = false;

	/* the opens waiting at the other end: the kernel completes them
	 * all once this one is made */
	for (int i = 0; i < s->nth; i++) {
		struct thread *u = &s->th[i];

		if (u != t && u->st != SCHED_DEAD && waits_fifo(u) &&
		    u->fifo_key == t->fifo_key &&
		    u->fifo_write != t->fifo_write && !u->fifo_promised) {
			u->fifo_promised = true;
			met = true;
		}
	}
	/* they are the kernel's readers (writers) from now on */
	if (met)
		bridge(s, t->fifo_key, t->fifo_write ? O_RDONLY : O_WRONLY,
		       t->pfd[0], -1);
	/* a promised open completes even if the other end is closed
	 * again by now, as the kernel's sleeper does: both ends for the
	 * time of its syscall */
	if (t->fifo_promised)
		bridge(s, t->fifo_key, O_RDWR, t->pfd[0], t->idx);
	t->fifo_going = true;
	/* its exit ends its promise (fifo_opened) */
	thread_fix_at_exit(t, &t->regs);
}

void fifo_opened(struct session *s, struct thread *t)
{
	t->fifo_going = false;
	t->fifo_promised = false;
	fifo_settle(s);
}

void fifo_settle(struct session *s)
{
	for (int i = 0; i < s->nfifo_bridge; i++) {
		int owner = s->fifo_bridge[i].owner;
		bool need = false;

		if (owner >= 0)
			/* for the time of owner's open */
			need = owner < s->nth &&
			       s->th[owner].st != SCHED_DEAD &&
			       s->th[owner].fifo_going;
		for (int k = 0; k < s->nth && !need && owner < 0; k++) {
			const struct thread *u = &s->th[k];

			/* for the promised opens of its mode */
			need = u->st != SCHED_DEAD && u->fifo_promised &&
			       u->fifo_key == s->fifo_bridge[i].key &&
			       (u->fifo_write ? O_WRONLY : O_RDONLY) ==
				       s->fifo_bridge[i].mode;
		}
		if (need)
			continue;
		close(s->fifo_bridge[i].fd);
		s->fifo_bridge[i] = s->fifo_bridge[--s->nfifo_bridge];
		i--;
	}
}

void fifo_free(struct session *s)
{
	for (int i = 0; i < s->nfifo_bridge; i++)
		close(s->fifo_bridge[i].fd);
	s->nfifo_bridge = 0;
}

void fifo_describe(const struct thread *t, char *buf, size_t len)
{
	char name[64], path[256];
	ssize_t n;

	snprintf(name, sizeof(name), "/proc/self/fd/%d", t->pfd[0]);
	n = t->pfd[0] >= 0 ? readlink(name, path, sizeof(path) - 1) : -1;
	path[n > 0 ? n : 0] = 0;
	snprintf(buf, len, "FIFO %s, %s", path,
		 t->fifo_write ? "O_WRONLY" : "O_RDONLY");
}
