/*
 * Correct (for a generous timeout): main waits on a condition variable
 * with a timeout of SECS seconds (argv[1], default 60) for a worker that
 * sleeps 10 ms and then sets the flag.  Natively the timeout never
 * expires; it could only if the worker were starved for SECS seconds.
 */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int done;

static void *worker(void *arg)
{
	struct timespec ms10 = { 0, 10000000 };

	(void)arg;
	nanosleep(&ms10, NULL);
	pthread_mutex_lock(&m);
	done = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 60, r = 0;
	struct timespec ts;
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&m);
	while (!done && r == 0)
		r = pthread_cond_timedwait(&c, &m, &ts);
	assert(done);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return 0;
}
