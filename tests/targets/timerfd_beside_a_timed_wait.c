/*
 * Correct: a thread reads a periodic 2 ms timerfd until it has counted
 * three expirations, then posts a semaphore; main waits for the post with
 * a 3 s sem_timedwait.  When both wait, time must move to the timerfd's
 * expiry and wake its reader, not to main's deadline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int tfd;
static sem_t s;

static void *ticker(void *arg)
{
	uint64_t n;
	int got = 0;

	(void)arg;
	while (got < 3)
		if (read(tfd, &n, sizeof(n)) == sizeof(n))
			got += (int)n;
	sem_post(&s);
	return NULL;
}

int main(void)
{
	struct itimerspec its = { { 0, 2000000 }, { 0, 2000000 } };
	struct timespec ts;
	pthread_t t;

	sem_init(&s, 0, 0);
	tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL))
		return 2;
	pthread_create(&t, NULL, ticker, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 3;
	while (sem_timedwait(&s, &ts))
		if (errno != EINTR)
			abort(); /* the ticker was starved for 3 s */
	pthread_join(t, NULL);
	return 0;
}
