/* Buggy: N threads (NLOCKS, 3 by default) each take lock i and then lock
 * i+1 mod N: a cyclic lock order.  The deadlock needs every thread to hold
 * its first lock at once: N-1 preemptions (2 for 3 threads, 3 for 4). */
#include <pthread.h>
#include <stdio.h>

#ifndef NLOCKS
#define NLOCKS 3
#endif

static pthread_mutex_t locks[NLOCKS];
static int work;

static void *philosopher(void *arg)
{
	long i = (long)arg;

	pthread_mutex_lock(&locks[i]);
	pthread_mutex_lock(&locks[(i + 1) % NLOCKS]);
	work++;
	pthread_mutex_unlock(&locks[(i + 1) % NLOCKS]);
	pthread_mutex_unlock(&locks[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[NLOCKS];

	for (int i = 0; i < NLOCKS; i++)
		pthread_mutex_init(&locks[i], NULL);
	for (long i = 0; i < NLOCKS; i++)
		pthread_create(&t[i], NULL, philosopher, (void *)i);
	for (int i = 0; i < NLOCKS; i++)
		pthread_join(t[i], NULL);
	printf("work=%d\n", work);
	return 0;
}
