/*
 * Buggy: two short threads increment a counter without the lock, between
 * a lock taken at their start and one taken at their end (a runtime's
 * thread registry does that: Rust's std).  Whenever the first thread ends
 * before the second starts, the locks order the increments, so race
 * discovery sees the race only in runs where the two overlap.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);   /* a runtime's registry, at a thread's start */
	pthread_mutex_unlock(&m);
	counter++;                /* the bug: unlocked */
	pthread_mutex_lock(&m);   /* and at its end */
	pthread_mutex_unlock(&m);
	return NULL;
}
int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", counter);
	assert(counter == 2);
	return 0;
}
