/*
 * bench/speed.sh --goals: two threads take and release one mutex in a
 * loop (argv[1] times each, default 200), the smallest program made of
 * synchronisation points: a run is about 4 * N points (each lock and each
 * unlock), so ptloom's us/step on it is its cost per point.  Correct;
 * every schedule passes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long count, n = 200;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		count++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		n = atol(argv[1]);
	pthread_create(&a, NULL, work, NULL);
	pthread_create(&b, NULL, work, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (count != 2 * n) {
		fprintf(stderr, "lost an update: %ld\n", count);
		abort();
	}
	return 0;
}
