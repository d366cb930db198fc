/*
 * The main thread holds a recursive mutex when it creates its first
 * thread, where ptloom takes its fork checkpoint, and locks and unlocks it
 * again after: glibc keeps the owner's thread id in the mutex, so a run
 * forked from the checkpoint must give the main thread the template's
 * thread id (tracer/checkpoint.c), or its second lock would wait for
 * itself.  Correct: exits 0.
 */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m;
static int shared;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	shared++;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_t t;
	int r;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&m, &a);
	pthread_mutex_lock(&m);
	if (pthread_create(&t, NULL, worker, NULL))
		return 2;
	pthread_mutex_lock(&m);
	shared++;
	pthread_mutex_unlock(&m);
	r = pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	printf("unlock %d, shared %d\n", r, shared);
	return r != 0 || shared != 2;
}
