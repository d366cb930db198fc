/*
 * Correct: N threads (argv[1], default 1000) alive at once, each adds one
 * to a mutex-protected counter; main joins them all.  The supervisor's
 * memory per thread (bench/threads_rss.sh, suite hardening).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_alive;
static int total;

static void *add_one(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	total++;
	pthread_mutex_unlock(&lock);
	pthread_barrier_wait(&all_alive);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	pthread_t *t = calloc((size_t)(n > 0 ? n : 1), sizeof(*t));
	pthread_attr_t a;

	if (n <= 0 || !t)
		return 2;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	pthread_barrier_init(&all_alive, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &a, add_one, NULL)) {
			fprintf(stderr, "pthread_create failed at %d\n", i);
			return 1;
		}
	pthread_barrier_wait(&all_alive);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", total);
	return total == n ? 0 : 1;
}
