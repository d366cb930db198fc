/* Correct: NWORK (3) workers and main (4 threads) step a shared counter
 * through its states under a mutex: each worker adds three times, main reads
 * it once while they run; the final count is exact. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NWORK
#define NWORK 3
#endif
#ifndef STEPS
#define STEPS 3
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *worker(void *arg)
{
	(void)arg;
	for (int k = 0; k < STEPS; k++) {
		pthread_mutex_lock(&lock);
		count++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NWORK];
	int seen;

	for (int i = 0; i < NWORK; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_mutex_lock(&lock);
	seen = count;
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < NWORK; i++)
		pthread_join(t[i], NULL);
	assert(seen >= 0 && seen <= NWORK * STEPS);
	assert(count == NWORK * STEPS);
	printf("count=%d\n", count);
	return 0;
}
