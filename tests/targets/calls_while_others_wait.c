/*
 * Calls to libc's synchronisation functions while every other thread
 * waits (the fast path's trampolines take them in the program: points
 * with one alternative, no stop), then a race once the others run.
 *
 * Two workers wait on a condition variable; the main thread meanwhile
 * locks and unlocks a mutex, tries it, posts and takes a semaphore and
 * calls pthread_once, ROUNDS times each; then it lets the workers go.
 * With the argument "racy" each worker adds one to a shared counter
 * without holding the lock across the read and the write (a lost update:
 * the main thread aborts when the count is short); otherwise under the
 * lock.  Prints what it counted.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 400

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gap = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static sem_t sem;
static int go, racy, shared, inits;

static void init(void)
{
	inits++;
}

static void *worker(void *arg)
{
	pthread_mutex_lock(&m);
	while (!go)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	if (racy) {
		int v = shared;

		pthread_mutex_lock(&gap); /* a point between read and write */
		pthread_mutex_unlock(&gap);
		shared = v + 1;
	} else {
		pthread_mutex_lock(&m);
		shared++;
		pthread_mutex_unlock(&m);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long sum = 0;

	racy = argc > 1 && !strcmp(argv[1], "racy");
	sem_init(&sem, 0, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&m);
		sum += i;
		pthread_mutex_unlock(&m);
		if (pthread_mutex_trylock(&m) == 0)
			pthread_mutex_unlock(&m);
		sem_post(&sem);
		sem_trywait(&sem);
		pthread_once(&once, init);
	}
	pthread_mutex_lock(&m);
	go = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("sum %ld inits %d shared %d\n", sum, inits, shared);
	if (shared != 2)
		abort();
	return 0;
}
