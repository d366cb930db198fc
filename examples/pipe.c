/* Correct: two threads play ping-pong over a pair of blocking pipes. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NROUNDS 4

static int to_worker[2]; /* main writes requests, worker reads */
static int from_worker[2]; /* worker writes replies, main reads */

/* Returns 1 on a whole value, 0 at end of file. */
static int read_int(int fd, int *v)
{
	char *p = (char *)v;
	size_t left = sizeof(*v);

	while (left > 0) {
		ssize_t n = read(fd, p, left);

		if (n == 0 && left == sizeof(*v))
			return 0;
		if (n <= 0) {
			perror("read");
			exit(1);
		}
		p += n;
		left -= (size_t)n;
	}
	return 1;
}

static void write_int(int fd, int v)
{
	if (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
		perror("write");
		exit(1);
	}
}

static void *squarer(void *arg)
{
	int n;

	(void)arg;
	/* Serve requests until main closes its end of the pipe. */
	while (read_int(to_worker[0], &n))
		write_int(from_worker[1], n * n);
	close(from_worker[1]);
	return NULL;
}

int main(void)
{
	pthread_t worker;
	int reply;

	if (pipe(to_worker) || pipe(from_worker)) {
		perror("pipe");
		return 1;
	}
	pthread_create(&worker, NULL, squarer, NULL);

	for (int i = 1; i <= NROUNDS; i++) {
		write_int(to_worker[1], i);
		if (!read_int(from_worker[0], &reply)) {
			fprintf(stderr, "worker hung up early\n");
			return 1;
		}
		printf("ping=%d pong=%d\n", i, reply);
	}
	close(to_worker[1]);
	/* The worker closes its end once it sees end of file. */
	assert(!read_int(from_worker[0], &reply) && "unexpected extra reply");
	pthread_join(worker, NULL);
	close(to_worker[0]);
	close(from_worker[0]);
	return 0;
}
