/* Buggy: 8 threads each read a shared counter in one critical section and
 * write it back incremented in a second one; one preemption between the two
 * loses an update.  Bound 0 alone has 8! orders of the blocked threads. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *increment(void *arg)
{
	int seen;

	(void)arg;
	pthread_mutex_lock(&lock);
	seen = counter;
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&lock);
	counter = seen + 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&threads[i], NULL, increment, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);
	printf("counter=%d\n", counter);
	assert(counter == NTHREADS && "lost update");
	return 0;
}
