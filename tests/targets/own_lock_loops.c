/*
 * Threads that each lock and unlock a mutex of their own, N times (argv[2],
 * default 200), T threads (argv[1], default 2): every lock and unlock is a
 * point where another thread could run, and none of them waits for
 * another, so under a random walk the turn passes from thread to thread
 * at calls alone, which the agent's hand-off takes in the program.
 * Prints the total.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 4

static pthread_mutex_t m[MAXT] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
};
static long count[MAXT];
static int n = 200;

static void *worker(void *arg)
{
	long i = (long)arg;

	for (int k = 0; k < n; k++) {
		pthread_mutex_lock(&m[i]);
		count[i]++;
		pthread_mutex_unlock(&m[i]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAXT];
	int nt = argc > 1 ? atoi(argv[1]) : 2;
	long sum = 0;

	if (argc > 2)
		n = atoi(argv[2]);
	if (nt < 1 || nt > MAXT)
		return 2;
	for (long i = 0; i < nt; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 2;
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < nt; i++)
		sum += count[i];
	printf("%ld\n", sum);
	return sum == (long)nt * n ? 0 : 1;
}
