/*
 * Blocking writes larger than a pipe's or a socket's free space.
 *
 * A read or write on a pipe or socket is a scheduling point that runs
 * only once its descriptor is ready (syscall.c).  For a write, "ready"
 * (POLLOUT) means some room, not room for the whole write: a blocking
 * write of 100 KB to a pipe with 64 KB free fills it and then sleeps in
 * the kernel until a reader drains it, while ptloom holds the reader at
 * its next point.  The run then waits for --timeout.
 *
 * So a blocking write of more than PIPE_BUF bytes (the largest a
 * POLLOUT pipe always takes whole) to a pipe, a FIFO or a stream socket
 * is performed by ptloom itself, piece by piece and never blocking: the
 * bytes are read from the tracee and written to a non-blocking
 * descriptor of the same pipe (a fresh open of it) or sent with
 * MSG_DONTWAIT on the same socket.  What does not fit waits as a blocked
 * write (BLOCK_FD on POLLOUT, so a reader can run, and a deadlock of the
 * program's own threads is reported as one); once everything is written
 * the call returns its whole length, as the kernel's would.  How much
 * each piece takes depends only on what the program's threads read and
 * wrote before, so the run stays a function of its schedule.
 *
 * Left to the kernel, as before: writes of at most PIPE_BUF bytes, non-
 * blocking descriptors, datagram and seqpacket sockets (a message is not
 * split), sendto with an address, sendmsg with a name or ancillary data.
 * An error of a piece (EPIPE, EFAULT) with nothing written yet lets the
 * kernel run the call, so it fails (and raises SIGPIPE) natively; after
 * some bytes the call returns those, as an interrupted write does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "session_int.h"

#define IOV_LIMIT 1024
#define PIECE (64 * 1024)

/* The tracee's buffers of t's pending write, flags for send(). */
static int write_iov(struct thread *t, struct iovec *iov, int *flags)
{
	const struct user_regs_struct *r = &t->regs;
	long nr = (long)r->orig_rax;
	struct msghdr mh;

	*flags = 0;
	switch (nr) {
	case SYS_write:
		iov[0] = (struct iovec){ (void *)r->rsi, r->rdx };
		return 1;
	case SYS_sendto:
		if (r->r8)
			return -1;
		*flags = (int)r->r10;
		iov[0] = (struct iovec){ (void *)r->rsi, r->rdx };
		return 1;
	case SYS_writev:
		if (r->rdx == 0 || r->rdx > IOV_LIMIT ||
		    mem_read(t->p, r->rsi, iov, r->rdx * sizeof(*iov)))
			return -1;
		return (int)r->rdx;
	case SYS_sendmsg:
		if (mem_read(t->p, r->rsi, &mh, sizeof(mh)) || mh.msg_name ||
		    mh.msg_controllen || mh.msg_iovlen == 0 ||
		    mh.msg_iovlen > IOV_LIMIT ||
		    mem_read(t->p, (uint64_t)mh.msg_iov, iov,
			     mh.msg_iovlen * sizeof(*iov)))
			return -1;
		*flags = (int)r->rdx;
		return (int)mh.msg_iovlen;
	}
	return -1;
}

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t sum = 0;

	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > SSIZE_MAX - sum)
			return 0; /* the kernel's EINVAL */
		sum += iov[i].iov_len;
	}
	return sum;
}

/* A pipe or FIFO: 1; a stream socket: 2; anything else: 0. */
static int stream_kind(int ourfd)
{
	struct stat sb;
	int type = 0;
	socklen_t len = sizeof(type);

	if (fstat(ourfd, &sb) < 0)
		return 0;
	if (S_ISFIFO(sb.st_mode))
		return 1;
	if (S_ISSOCK(sb.st_mode) &&
	    !getsockopt(ourfd, SOL_SOCKET, SO_TYPE, &type, &len) &&
	    type == SOCK_STREAM)
		return 2;
	return 0;
}

void bigwrite_prepare(struct thread *t)
{
	struct iovec iov[IOV_LIMIT];
	int flags, n;

	t->wbig = false;
	t->wdone = 0;
	if (t->nonblock || t->npfd != 1 || t->pfd[0] < 0 ||
	    (n = write_iov(t, iov, &flags)) <= 0 || (flags & MSG_DONTWAIT) ||
	    iov_total(iov, n) <= PIPE_BUF || !stream_kind(t->pfd[0]))
		return;
	t->wbig = true;
}

/* One piece from the tracee's buffers at offset `at`, at most PIECE. */
static ssize_t gather(struct thread *t, const struct iovec *iov, int n,
		      size_t at, char *buf)
{
	size_t got = 0;

	for (int i = 0; i < n && got < PIECE; i++) {
		if (at >= iov[i].iov_len) {
			at -= iov[i].iov_len;
			continue;
		}
		size_t k = iov[i].iov_len - at;

		if (k > PIECE - got)
			k = PIECE - got;
		if (mem_read(t->p, (uint64_t)iov[i].iov_base + at, buf + got,
			     k))
			return got ? (ssize_t)got : -EFAULT;
		got += k;
		at = 0;
	}
	return (ssize_t)got;
}

int bigwrite_step(struct thread *t)
{
	static char buf[PIECE];
	struct iovec iov[IOV_LIMIT];
	int flags, n = write_iov(t, iov, &flags);
	size_t total = n > 0 ? iov_total(iov, n) : 0;
	int kind = stream_kind(t->pfd[0]), wfd = -1, err = 0;

	if (n <= 0 || !kind || t->wdone >= total)
		return t->wdone ? BIGWRITE_DONE : BIGWRITE_KERNEL;
	if (kind == 1) {
		char name[64];

		snprintf(name, sizeof(name), "/proc/self/fd/%d", t->pfd[0]);
		wfd = open(name, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (wfd < 0) /* no reader (ENXIO): EPIPE, natively */
			return t->wdone ? BIGWRITE_DONE : BIGWRITE_KERNEL;
	}
	while (t->wdone < total) {
		ssize_t k = gather(t, iov, n, t->wdone, buf), w;

		if (k <= 0) {
			err = EFAULT;
			break;
		}
		if (kind == 1)
			w = write(wfd, buf, (size_t)k);
		else
			w = send(t->pfd[0], buf, (size_t)k,
				 flags | MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			err = errno;
			break;
		}
		t->wdone += (uint64_t)w;
		if (w < k)
			break; /* full */
	}
	if (wfd >= 0)
		close(wfd);
	if (t->wdone >= total)
		return BIGWRITE_DONE;
	if (err && err != EAGAIN && err != EINTR)
		return t->wdone ? BIGWRITE_DONE : BIGWRITE_KERNEL;
	return BIGWRITE_BLOCKED;
}
