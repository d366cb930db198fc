/* Correct: prints clocks, randomness, addresses and a thread-order log. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <x86intrin.h>

/*
 * Every line printed here differs between two native runs.  Under ptloom the
 * same --seed must give byte-identical output, and different seeds must give
 * different thread logs.
 */

#define NTHREADS 3
#define NAPPENDS 5

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char order_log[NTHREADS * NAPPENDS + 1];
static int log_len;
static int a_global;

static void *appender(void *arg)
{
	char id = (char)('0' + (long)arg);

	for (int i = 0; i < NAPPENDS; i++) {
		pthread_mutex_lock(&log_lock);
		order_log[log_len++] = id;
		pthread_mutex_unlock(&log_lock);
		sched_yield();
	}
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];
	struct timespec ts;
	struct timeval tv;
	unsigned char rnd[16];
	int on_stack = 0;
	void *block;

	clock_gettime(CLOCK_REALTIME, &ts);
	printf("realtime=%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("monotonic=%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	gettimeofday(&tv, NULL);
	printf("gettimeofday=%lld.%06ld\n", (long long)tv.tv_sec,
	       (long)tv.tv_usec);
	printf("time=%lld\n", (long long)time(NULL));

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		perror("getrandom");
		return 1;
	}
	printf("getrandom=");
	for (size_t i = 0; i < sizeof(rnd); i++)
		printf("%02x", rnd[i]);
	printf("\n");

	/* the kernel's 16 random bytes of every exec (glibc's stack guard,
	 * Go's scheduler seed) */
	const unsigned char *at = (const unsigned char *)getauxval(AT_RANDOM);

	printf("at_random=");
	for (int i = 0; at && i < 16; i++)
		printf("%02x", at[i]);
	printf("\n");

	block = malloc(64);
	printf("malloc=%p\n", block);
	printf("stack=%p\n", (void *)&on_stack);
	printf("global=%p\n", (void *)&a_global);
	printf("rdtsc=%llu\n", (unsigned long long)__rdtsc());
	free(block);

	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&threads[i], NULL, appender, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);
	printf("log=%s\n", order_log);
	return 0;
}
