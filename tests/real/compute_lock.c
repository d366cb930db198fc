/*
 * Correct: one thread computes for a while (a hash over a buffer, then a
 * merge copy) while holding a lock, the others wait for the lock or in
 * pthread_join.  The computation is not a spin: no false livelock.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t N = 1 << 20;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *buf, *out;
static uint64_t result;
static int rounds = 12;

static uint64_t hash(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void *compute(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	uint64_t h = 0;

	for (int r = 0; r < rounds; r++) {
		h += hash(buf, N);	/* loads only, ever new addresses */
		for (size_t i = 0; i < N / 2; i++) { /* a merge: stores */
			out[2 * i] = buf[i];
			out[2 * i + 1] = buf[N / 2 + i];
		}
		memcpy(buf, out, N);
	}
	result += h;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	result += 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		N = (size_t)atoi(argv[2]) << 10; /* KiB */
	buf = malloc(N);
	out = malloc(N);
	for (size_t i = 0; i < N; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	pthread_create(&a, NULL, compute, NULL);
	pthread_create(&b, NULL, waiter, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%llx\n", (unsigned long long)result);
	return 0;
}
