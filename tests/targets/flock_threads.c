/*
 * Two threads take an exclusive flock(2) of one file through descriptors
 * of their own (so the second waits in the kernel while the first holds
 * it).  ptloom does not schedule flock: a run where the second waits
 * while ptloom holds the first is past --timeout, and the summary names
 * the syscall (tests/integration: issue10 flock).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

static const char *path;
static int counter;

static void *worker(void *arg)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);

	(void)arg;
	if (fd < 0)
		abort();
	for (int i = 0; i < 3; i++) {
		flock(fd, LOCK_EX);
		int c = counter;

		usleep(1000);
		counter = c + 1;
		flock(fd, LOCK_UN);
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc < 2)
		return 2;
	path = argv[1];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return counter != 6;
}
