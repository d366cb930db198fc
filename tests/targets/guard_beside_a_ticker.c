/*
 * Correct for a guard of 2 s or more: main waits up to SECS seconds
 * (argv[1], default 2) on a condition variable for a worker that sleeps
 * 1 ms and then sets the flag, beside a watchdog thread that sleeps 10 ms
 * at a time until main is done (a test's guard beside a periodic thread:
 * Go's sysmon, a heartbeat).  Natively the guard never expires; it could
 * only if the worker, able to run, were starved for SECS seconds, which
 * ptloom takes as possible up to one second (tracer/world.h MAX_STALL_NS).
 */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int done;
static atomic_int stop;

static void *worker(void *arg)
{
	struct timespec ms1 = { 0, 1000000 };

	(void)arg;
	nanosleep(&ms1, NULL);
	pthread_mutex_lock(&m);
	done = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *watchdog(void *arg)
{
	struct timespec ms10 = { 0, 10000000 };

	(void)arg;
	while (!atomic_load(&stop))
		nanosleep(&ms10, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 2, r = 0;
	struct timespec ts;
	pthread_t w, d;

	pthread_create(&d, NULL, watchdog, NULL);
	pthread_create(&w, NULL, worker, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&m);
	while (!done && r == 0)
		r = pthread_cond_timedwait(&c, &m, &ts);
	pthread_mutex_unlock(&m);
	assert(done); /* the guard expired: the worker was starved */
	atomic_store(&stop, 1);
	pthread_join(w, NULL);
	pthread_join(d, NULL);
	return 0;
}
