/* Correct: a thread dies holding a robust mutex another thread waits for;
 * the waiter gets EOWNERDEAD, makes it consistent and goes on. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m;
static pthread_barrier_t b;

static void *owner(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_barrier_wait(&b);
	usleep(1000); /* the waiter blocks meanwhile */
	return NULL;  /* dies holding m */
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m, &a);
	pthread_barrier_init(&b, NULL, 2);
	pthread_create(&t, NULL, owner, NULL);
	pthread_barrier_wait(&b);
	int r = pthread_mutex_lock(&m);
	if (r == EOWNERDEAD)
		pthread_mutex_consistent(&m);
	printf("lock: %s\n", r == EOWNERDEAD ? "EOWNERDEAD" : r ? "error" : "0");
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return r == EOWNERDEAD ? 0 : 1;
}
