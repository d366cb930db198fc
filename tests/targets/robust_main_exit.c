/*
 * The main thread dies holding a robust mutex (pthread_exit): the kernel
 * walks the thread's robust list at its exit and marks the mutex
 * OWNER_DIED, so the second thread's trylock returns EOWNERDEAD.  A run
 * forked from a fork checkpoint must have the main thread's robust list
 * registered as an exec'd run has (tracer/checkpoint.c): without it the
 * second thread would try forever.  Exits 0 when EOWNERDEAD was seen.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m;

static void *second(void *arg)
{
	int r;

	(void)arg;
	/* trylock, not lock: ptloom does not see the kernel's own wake of
	 * a robust mutex's waiter */
	while ((r = pthread_mutex_trylock(&m)) == EBUSY || r == 0) {
		if (r == 0)
			pthread_mutex_unlock(&m); /* before the main thread */
		sched_yield();
	}
	printf("trylock: %s\n", r == EOWNERDEAD ? "EOWNERDEAD" : "other");
	fflush(stdout);
	exit(r == EOWNERDEAD ? 0 : 1);
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m, &a);
	if (pthread_create(&t, NULL, second, NULL))
		return 2;
	pthread_mutex_lock(&m);
	pthread_exit(NULL);
}
