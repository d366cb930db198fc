/* Correct: the main thread exits (pthread_exit) holding a robust mutex a
 * thread waits for; the waiter gets EOWNERDEAD and the process exits 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m;

static void *waiter(void *arg)
{
	(void)arg;
	int r = pthread_mutex_lock(&m);
	if (r == EOWNERDEAD)
		pthread_mutex_consistent(&m);
	printf("lock: %s\n", r == EOWNERDEAD ? "EOWNERDEAD" : r ? "error" : "0");
	exit(r == EOWNERDEAD ? 0 : 1);
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m, &a);
	pthread_mutex_lock(&m);
	pthread_create(&t, NULL, waiter, NULL);
	usleep(1000);
	pthread_exit(NULL);
}
