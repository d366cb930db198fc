/*
 * Synchronisation calls while a background thread sleeps in a loop (a
 * watchdog, a pool's timed wait, Go's sysmon): that thread's timeout is
 * an alternative at every choice, so no call is a point with one
 * alternative, and the fast path can take one in the program only where
 * the strategy knows in advance that it would not take the timeout.
 *
 * A watchdog thread sleeps 1 ms at a time until the work is done; two
 * workers add to a counter ROUNDS times each under a mutex.  With the
 * argument "split" a worker reads the counter in one critical section and
 * writes it in the next (a lost update: the program exits 1 when the
 * count is short).  Prints what it counted.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ROUNDS 200

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static int split;
static atomic_int done;

static void *watchdog(void *arg)
{
	struct timespec ts = { 0, 1000000 };

	(void)arg;
	while (!atomic_load(&done))
		nanosleep(&ts, NULL);
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&m);
		long v = counter;

		if (split) {
			pthread_mutex_unlock(&m);
			pthread_mutex_lock(&m);
		}
		counter = v + 1;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, t[2];

	split = argc > 1 && !strcmp(argv[1], "split");
	pthread_create(&w, NULL, watchdog, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	atomic_store(&done, 1);
	pthread_join(w, NULL);
	printf("%ld\n", counter);
	return counter != 2 * ROUNDS;
}
