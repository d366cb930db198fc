/* Buggy (SCTBench CS bluetooth_driver class, the KISS driver model): a
 * stopper thread sets stoppingFlag, drops the driver's own reference and
 * waits for the pending-I/O count to reach zero, then marks the driver
 * stopped.  An I/O thread checks stoppingFlag (a plain read, no lock) and
 * only then takes a reference: preempted between the check and the
 * increment, it starts I/O on a stopped driver.
 * -DFIXED: the check and the increment are one critical section. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int pending_io = 1, stopping_flag, stopping_event, stopped;

static void dec(void)
{
	pthread_mutex_lock(&m);
	if (--pending_io == 0)
		stopping_event = 1;
	pthread_mutex_unlock(&m);
}

static int inc(void)
{
#ifdef FIXED
	pthread_mutex_lock(&m);
	if (stopping_flag) {
		pthread_mutex_unlock(&m);
		return -1;
	}
#else
	if (stopping_flag)
		return -1;
	pthread_mutex_lock(&m);
#endif
	pending_io++;
	pthread_mutex_unlock(&m);
	return 0;
}

static void *io(void *arg)
{
	(void)arg;
	if (inc() == 0) {
		assert(!stopped && "I/O on a stopped driver");
		dec();
	}
	return NULL;
}

static void *stopper(void *arg)
{
	(void)arg;
	stopping_flag = 1;
	dec();
	for (;;) {
		pthread_mutex_lock(&m);
		int ev = stopping_event;

		pthread_mutex_unlock(&m);
		if (ev)
			break;
		sched_yield();
	}
	stopped = 1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, io, NULL);
	pthread_create(&b, NULL, stopper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("ok\n");
	return 0;
}
