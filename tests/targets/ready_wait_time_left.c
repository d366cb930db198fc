/*
 * select, pselect6 and ppoll write back the time their timeout has left.
 * A wait that is ready when it runs has waited no virtual time, and one
 * woken by a thread's write has waited the virtual time that passed: the
 * kernel, which answers ready waits, wrote the machine's clock's rest
 * instead (0.999997 s of 1 s in one run, 0.999998 in the next), so the
 * same schedule printed different lines.  Prints the time left of a
 * select ready at once, of a raw ppoll woken by a writer that slept
 * 2 ms, and of a raw pselect6 ready at once.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];

static void *writer(void *arg)
{
	(void)arg;
	usleep(2000);
	if (write(fds[1], "xy", 2) != 2)
		abort();
	return NULL;
}

int main(void)
{
	pthread_t th;
	struct pollfd p;
	struct timespec ts = { 1, 500 };
	struct timeval tv = { 1, 0 };
	fd_set r;
	long n;

	if (pipe(fds) || pthread_create(&th, NULL, writer, NULL))
		return 2;
	p.fd = fds[0];
	p.events = POLLIN;
	n = syscall(SYS_ppoll, &p, 1, &ts, NULL, 8);
	printf("woken ppoll: %ld, %ld.%09ld s left\n", n, (long)ts.tv_sec,
	       ts.tv_nsec);
	if (pthread_join(th, NULL))
		return 2;
	FD_ZERO(&r);
	FD_SET(fds[0], &r);
	n = select(fds[0] + 1, &r, NULL, NULL, &tv);
	printf("ready select: %ld, %ld.%06ld s left\n", n, (long)tv.tv_sec,
	       (long)tv.tv_usec);
	ts.tv_sec = 2;
	ts.tv_nsec = 0;
	FD_ZERO(&r);
	FD_SET(fds[0], &r);
	n = syscall(SYS_pselect6, fds[0] + 1, &r, NULL, NULL, &ts, NULL);
	printf("ready pselect6: %ld, %ld.%09ld s left\n", n, (long)ts.tv_sec,
	       ts.tv_nsec);
	return 0;
}
