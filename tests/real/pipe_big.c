/*
 * Writes far larger than a pipe's 64 KiB, each in one call (write,
 * writev, send), while the other end reads: between two processes
 * ("procs"), between two threads through a pipe ("threads") and through
 * a stream socketpair ("socket").  Correct: the reader gets every byte.
 * Natively the writer sleeps in the kernel until the reader drains the
 * pipe; under ptloom that must be a wait the reader can end.
 * "racy" is "threads" with a bug: the reader expects a flag the writer
 * sets only after closing its end (exit status 1 when it is not yet).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOTAL (1024 * 1024)

static unsigned char *buf;
static int fds[2];
static int use_send, racy, flag;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void fill(void)
{
	uint32_t x = 2463534242u;

	buf = malloc(TOTAL);
	for (int i = 0; i < TOTAL; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
}

/* Half in one write (or send), half in one writev of two pieces. */
static void produce(int fd)
{
	size_t half = TOTAL / 2;
	ssize_t n = use_send ? send(fd, buf, half, 0) : write(fd, buf, half);
	struct iovec iov[2] = { { buf + half, half / 3 },
				{ buf + half + half / 3, half - half / 3 } };
	ssize_t m = writev(fd, iov, 2);

	if (n != (ssize_t)half || m != (ssize_t)half) {
		fprintf(stderr, "short write: %zd %zd\n", n, m);
		exit(2);
	}
	close(fd);
}

static void *producer(void *arg)
{
	(void)arg;
	produce(fds[1]);
	pthread_mutex_lock(&mu);
	flag = 1;
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* Reads to EOF; prints the byte count and a checksum. */
static void consume(int fd)
{
	static unsigned char in[16384];
	uint64_t sum = 0, got = 0;
	ssize_t n;

	while ((n = read(fd, in, sizeof(in))) > 0)
		for (ssize_t i = 0; i < n; i++, got++)
			sum = sum * 31 + in[i] + (got == 0);
	uint64_t want = 0;

	for (int i = 0; i < TOTAL; i++)
		want = want * 31 + buf[i] + (i == 0);
	printf("%llu bytes, %s\n", (unsigned long long)got,
	       got == TOTAL && sum == want ? "intact" : "CORRUPT");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";

	fill();
	if (!strcmp(mode, "procs")) {
		if (pipe(fds))
			return 2;
		pid_t pid = fork();

		if (pid == 0) {
			close(fds[0]);
			produce(fds[1]);
			_exit(0);
		}
		close(fds[1]);
		consume(fds[0]);
		int st;

		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
	}
	if (!strcmp(mode, "socket")) {
		use_send = 1;
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
			return 2;
	} else if (pipe(fds)) {
		return 2;
	}
	racy = !strcmp(mode, "racy");
	pthread_t th;

	pthread_create(&th, NULL, producer, NULL);
	consume(fds[0]);
	pthread_mutex_lock(&mu);
	int seen = flag;

	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	return racy && !seen;
}
