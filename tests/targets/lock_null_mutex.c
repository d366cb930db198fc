/*
 * A thread locks a null mutex while the main thread waits in join: the
 * fault is in pthread_mutex_lock's first instruction, which the fast
 * path's trampoline runs displaced (tracer/tramp.c).  Crashes with
 * SIGSEGV in every schedule.
 */
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t *volatile mutex;

static void *worker(void *arg)
{
	pthread_mutex_lock(mutex);
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	return 0;
}
