/* Correct except "late": blocking socket calls under SO_RCVTIMEO and
 * SO_SNDTIMEO end with EAGAIN (a connect with EINPROGRESS) once the
 * timeout passes, as the kernel's wait does, while a worker thread runs.
 *   recv    a recv on a socketpair nobody writes to: EAGAIN, not before
 *           50 ms of CLOCK_MONOTONIC
 *   accept  an accept on a listening Unix socket nobody connects to
 *   send    a send into a socketpair whose buffer is full
 *   served  the worker sends the byte; the receiver's 5 s timeout is a
 *           guard that never fires
 *   late    (buggy) the worker sleeps 100 ms before it sends, and the
 *           receiver's 50 ms timeout fires first: assert fails
 * Prints "socket_timeouts MODE ok".
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int sv[2];
static const char *mode;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int worked;

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	(void)arg;
	if (!strcmp(mode, "late"))
		usleep(100 * 1000);
	if (!strcmp(mode, "served") || !strcmp(mode, "late"))
		assert(send(sv[1], "x", 1, 0) == 1);
	pthread_mutex_lock(&lock);
	worked = 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void set_timeout(int fd, int opt, long usec)
{
	struct timeval tv = { usec / 1000000, usec % 1000000 };

	assert(setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)) == 0);
}

int main(int argc, char **argv)
{
	pthread_t t;
	char buf[4096];
	ssize_t n;
	int e, fd = -1;
	double t0, elapsed;

	mode = argc > 1 ? argv[1] : "recv";
	assert(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	if (!strcmp(mode, "accept")) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		/* an abstract name: nothing left in the file system */
		snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1,
			 "ptloom-socket-timeouts-%d", (int)getpid());
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		assert(fd >= 0);
		assert(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
		assert(listen(fd, 1) == 0);
		set_timeout(fd, SO_RCVTIMEO, 50000);
	} else if (!strcmp(mode, "send")) {
		int small = 4096;

		assert(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small,
				  sizeof(small)) == 0);
		set_timeout(sv[0], SO_SNDTIMEO, 50000);
		memset(buf, 'y', sizeof(buf));
		/* fill the buffer without waiting */
		while (send(sv[0], buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
	} else {
		set_timeout(sv[0], SO_RCVTIMEO,
			    !strcmp(mode, "served") ? 5000000 : 50000);
	}
	pthread_create(&t, NULL, worker, NULL);
	t0 = mono();
	if (!strcmp(mode, "accept"))
		n = accept(fd, NULL, NULL);
	else if (!strcmp(mode, "send"))
		n = send(sv[0], buf, sizeof(buf), 0);
	else
		n = recv(sv[0], buf, 1, 0);
	e = errno;
	elapsed = mono() - t0;
	pthread_join(t, NULL);
	assert(worked == 1);
	if (!strcmp(mode, "served") || !strcmp(mode, "late")) {
		assert(n == 1 && buf[0] == 'x' && "the byte came in time");
	} else {
		assert(n == -1 && (e == EAGAIN || e == EWOULDBLOCK));
		assert(elapsed >= 0.049 && "the wait lasted its timeout");
	}
	printf("socket_timeouts %s ok\n", mode);
	return 0;
}
