/*
 * The worker holds the lock while the stopper blocks on it, unlocks it
 * (waking the stopper: glibc's futex wake, taken in the program by the
 * fast path while nobody else can run) and computes until the stopper,
 * which then takes the lock, tells it to stop.  One thread runs at a
 * time, so the run ends only if the stopper gets a turn: past --timeout
 * it is INCOMPLETE, the stopper waiting for its turn.  The wake logged in
 * the program is the supervisor's to take at the worker's next stop,
 * which never comes: before, the stopper looked blocked and the run was
 * reported as a hang of the program with the fast path (a false FAIL),
 * INCOMPLETE without it.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int stop;
static volatile unsigned long work[8];

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	usleep(1000);
	pthread_mutex_unlock(&lock);
	for (unsigned long n = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED);
	     n++)
		work[n & 7] = n;
	return NULL;
}

static void *stopper(void *arg)
{
	(void)arg;
	usleep(100);
	pthread_mutex_lock(&lock);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, stopper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	puts("done");
	return 0;
}
