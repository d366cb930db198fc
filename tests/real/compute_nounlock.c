/*
 * Buggy twin of compute_lock.c: on one path the computing thread forgets
 * to unlock, and the waiter blocks for ever (a deadlock ptloom finds).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *buf;
static volatile int started;
static uint64_t result;

static void *compute(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	uint64_t h = 1469598103934665603ull;

	for (int r = 0; r < 6; r++)
		for (size_t i = 0; i < N; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	result = h;
	if (started) /* the waiter got here first: forgets to unlock */
		return NULL;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	started = 1;
	pthread_mutex_lock(&lock);
	result++;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	buf = calloc(1, N);
	pthread_create(&a, NULL, compute, NULL);
	pthread_create(&b, NULL, waiter, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%llx\n", (unsigned long long)result);
	return 0;
}
