/*
 * Clock reads in every form glibc offers, from two threads that race on a
 * counter under a mutex: clock_gettime (monotonic, realtime, coarse, boot,
 * CPU-time, an invalid id), gettimeofday, time, clock_getres, timespec_get
 * and sched_getcpu.  Prints what it read: under ptloom a pure function of
 * the schedule, whether the in-process agent answers the reads or the
 * supervisor does at stops (tests/integration/test_fast_path.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long long sum;

static long long ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return -errno;
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *reader(void *arg)
{
	long long x = 0;

	for (int i = 0; i < 200; i++) {
		x += ns(CLOCK_MONOTONIC) / 1000 % 7919;
		if (i % 50 == 0) {
			pthread_mutex_lock(&m);
			sum += x;
			pthread_mutex_unlock(&m);
		}
	}
	return arg;
}

int main(void)
{
	pthread_t t[2];
	struct timeval tv;
	struct timespec res, tg;

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	gettimeofday(&tv, NULL);
	clock_getres(CLOCK_MONOTONIC, &res);
	timespec_get(&tg, TIME_UTC);
	printf("sum %lld\n", sum);
	printf("monotonic %lld realtime %lld coarse %lld boot %lld cpu %lld\n",
	       ns(CLOCK_MONOTONIC), ns(CLOCK_REALTIME),
	       ns(CLOCK_MONOTONIC_COARSE), ns(CLOCK_BOOTTIME),
	       ns(CLOCK_PROCESS_CPUTIME_ID));
	printf("invalid %lld\n", ns((clockid_t)77));
	printf("gettimeofday %ld.%06ld time %ld\n", (long)tv.tv_sec,
	       (long)tv.tv_usec, (long)time(NULL));
	printf("getres %ld.%09ld timespec_get %ld.%09ld\n", (long)res.tv_sec,
	       res.tv_nsec, (long)tg.tv_sec, tg.tv_nsec);
	printf("cpu %d\n", sched_getcpu() >= 0);
	return 0;
}
