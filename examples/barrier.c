/* Correct: three threads meet at a pthread barrier in each of two rounds. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 3
#define NROUNDS 2

static pthread_barrier_t barrier;
static int values[NROUNDS][NTHREADS];
static int sums[NROUNDS][NTHREADS];

static void *worker(void *arg)
{
	int id = (int)(long)arg;

	for (int r = 0; r < NROUNDS; r++) {
		int sum = 0;

		values[r][id] = (id + 1) * (r + 1);
		/* After the barrier every thread sees every value of round r. */
		pthread_barrier_wait(&barrier);
		for (int i = 0; i < NTHREADS; i++)
			sum += values[r][i];
		sums[r][id] = sum;
	}
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];

	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&barrier);

	for (int r = 0; r < NROUNDS; r++) {
		for (int i = 1; i < NTHREADS; i++)
			assert(sums[r][i] == sums[r][0] &&
			       "all threads must see the same round total");
		printf("round=%d sum=%d\n", r, sums[r][0]);
	}
	return 0;
}
