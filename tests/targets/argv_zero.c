/*
 * Prints the argv[0] it was given, from two threads in turn; aborts when
 * ABORT_AFTER is set (a failing run to replay).  A multi-call binary (lld,
 * busybox) decides what it is from argv[0], a venv's python where its
 * environment is: a program under ptloom gets it as a shell gives it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int turns;

static void *worker(void *arg)
{
	pthread_mutex_lock(&m);
	turns++;
	pthread_mutex_unlock(&m);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	(void)argc;
	pthread_create(&t, NULL, worker, NULL);
	worker(NULL);
	pthread_join(t, NULL);
	printf("argv0=%s turns=%d\n", argv[0], turns);
	fflush(stdout);
	if (getenv("ABORT_AFTER"))
		abort();
	return 0;
}
