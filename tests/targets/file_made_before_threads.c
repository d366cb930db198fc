/*
 * Correct: main makes a temporary file (written and closed) before its
 * first thread and removes it at the end, as a test's fixture does.  A run
 * forked from a checkpoint after the file was made would find it removed
 * by the run before (the file system is not forked): each run must make
 * it again, from exec.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int x;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	x++;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	char path[] = "/tmp/ptloom-made-XXXXXX";
	int fd = mkstemp(path);
	pthread_t t;

	if (fd < 0 || write(fd, "hi", 2) != 2)
		return 2;
	close(fd);
	pthread_create(&t, NULL, worker, NULL);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	if (unlink(path)) {
		perror("unlink");
		return 1;
	}
	printf("ok\n");
	return 0;
}
