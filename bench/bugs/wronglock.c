/* Buggy (SCTBench CS wronglock class): NTHREADS threads update one
 * counter, but each picks its lock by its index, so two locks guard the
 * same data.  Each update reads the value, does some work and writes it
 * back; the main thread checks no update was lost.  -DFIXED: one lock. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NTHREADS
#define NTHREADS 4
#endif

static pthread_mutex_t locks[2] = { PTHREAD_MUTEX_INITIALIZER,
				    PTHREAD_MUTEX_INITIALIZER };
static int value;
static int work[NTHREADS];

static void *worker(void *arg)
{
	long id = (long)arg;
#ifdef FIXED
	pthread_mutex_t *m = &locks[0];
#else
	pthread_mutex_t *m = &locks[id % 2];
#endif

	pthread_mutex_lock(m);
	int v = value;

	work[id] = v * 3 + (int)id; /* the work between read and write */
	value = v + 1;
	pthread_mutex_unlock(m);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	assert(value == NTHREADS && "an update was lost");
	printf("ok %d\n", work[0]);
	return 0;
}
