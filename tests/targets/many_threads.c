/* Correct: 64 threads each increment a mutex-protected counter once. */
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int total;

static void *increment(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	total++;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];

	for (int i = 0; i < NTHREADS; i++) {
		if (pthread_create(&threads[i], NULL, increment, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);

	printf("total=%d\n", total);
	return total == NTHREADS ? 0 : 1;
}
