/* Buggy, through the clock only: two workers add to a sum under a mutex,
 * so every schedule ends with the same memory, but a contended lock takes
 * more scheduling points, and the virtual clock advances by one quantum a
 * point.  main reads the clock after the joins and fails when the
 * microseconds have the parity -DPARITY (default 1).  A search whose
 * state keys left the clock out would merge the contended and the
 * uncontended paths where their memory meets and could miss the schedules
 * with the other parity; ptloom keys the clock once a run reads it after
 * its first choice (state caching, docs/INTERNALS.md).
 * -DFIXED: no parity fails (the same schedules, a correct program). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef FIXED
#define PARITY 2 /* never */
#else
#define PARITY 1
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int sum;

static void *worker(void *arg)
{
	for (int k = 0; k < 2; k++) {
		pthread_mutex_lock(&m);
		sum += (int)(long)arg;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	struct timespec ts;

	pthread_create(&a, NULL, worker, (void *)1L);
	pthread_create(&b, NULL, worker, (void *)2L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_nsec / 1000 % 2 == PARITY) {
		fprintf(stderr, "odd clock: %ld us\n", ts.tv_nsec / 1000);
		abort();
	}
	printf("sum=%d\n", sum);
	return 0;
}
