/* Correct: NTHREADS (6) workers add their index to a mutex-protected sum;
 * main joins them in turn and checks the sum. */
#include <pthread.h>
#include <stdio.h>

#ifndef NTHREADS
#define NTHREADS 6
#endif

static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;
static int sum;

static void *add_index(void *arg)
{
	int index = (int)(long)arg;

	pthread_mutex_lock(&sum_lock);
	sum += index;
	pthread_mutex_unlock(&sum_lock);
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];

	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&threads[i], NULL, add_index, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);
	printf("sum=%d\n", sum);
	return sum == NTHREADS * (NTHREADS - 1) / 2 ? 0 : 1;
}
