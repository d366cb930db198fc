/* Correct: NWAIT (4) waiters and main (5 threads).  Each waiter waits
 * with an `if`-guarded pthread_cond_wait for a flag main sets once and
 * broadcasts; the flag is never cleared, so one wake-up is enough (the
 * `if` is safe here, unlike bench/bugs/cond_if.c). */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NWAIT
#define NWAIT 4
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, started;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	if (!ready)
		pthread_cond_wait(&c, &m);
	assert(ready && "woken before the flag was set");
	started++;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t[NWAIT];

	for (int i = 0; i < NWAIT; i++)
		pthread_create(&t[i], NULL, waiter, NULL);
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < NWAIT; i++)
		pthread_join(t[i], NULL);
	assert(started == NWAIT);
	printf("started=%d\n", started);
	return 0;
}
