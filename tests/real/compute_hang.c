/*
 * A hang that only one order shows: when the worker takes the lock first
 * it marks itself started and computes until told to stop, but main then
 * sees it started and never tells it.  Under the default order main goes
 * first and the program ends at once.  The worker's loop stores, so it is
 * computing, not a spin: only its CPU time past --timeout shows the hang.
 * With -DFIXED main always tells it to stop.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started, stop, stop2;
static volatile unsigned long work;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	if (stop) {
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	started = 1;
	pthread_mutex_unlock(&lock);
	for (;;) {
		pthread_mutex_lock(&lock);
		int done = stop2;
		pthread_mutex_unlock(&lock);
		if (done)
			break;
		for (int i = 0; i < 1000000; i++)
			work++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_mutex_lock(&lock);
	if (!started)
		stop = 1;
#ifdef FIXED
	stop2 = 1;
#endif
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
	printf("done %d\n", work > 0);
	return 0;
}
