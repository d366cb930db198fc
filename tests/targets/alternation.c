/* Buggy (SV-COMP fib_bench style): two threads each do K lock-protected
 * updates, i += j and j += i; only a strict alternation of all 2K updates
 * reaches fib(2K+2), which the assertion forbids.  It needs about 2K-1
 * preemptions: far beyond preemption bounding, and PCT of depth 3 cannot
 * express it.  K = 5 by default (-DK=N). */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef K
#define K 5
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long i = 1, j = 1;

static void *add_j(void *arg)
{
	(void)arg;
	for (int k = 0; k < K; k++) {
		pthread_mutex_lock(&lock);
		i = i + j;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *add_i(void *arg)
{
	(void)arg;
	for (int k = 0; k < K; k++) {
		pthread_mutex_lock(&lock);
		j = j + i;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static long fib(int n)
{
	long a = 1, b = 1;

	while (n-- > 2) {
		long c = a + b;

		a = b;
		b = c;
	}
	return b;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, add_j, NULL);
	pthread_create(&b, NULL, add_i, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("i=%ld j=%ld\n", i, j);
	assert(i < fib(2 * K + 2) && j < fib(2 * K + 2) &&
	       "strict alternation");
	return 0;
}
