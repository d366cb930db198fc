/* Correct: 16 threads add their index to a mutex-protected sum. */
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 16

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
