/* Buggy (condition variable misuse: a missed signal): the waiter tests
 * the ready flag outside the mutex and then waits; the signaller sets the
 * flag and signals.  If the signal comes between the test and the wait,
 * nobody wakes the waiter: a deadlock.  -DFIXED: test under the mutex in
 * a while loop. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;

static void *waiter(void *arg)
{
	(void)arg;
#ifdef FIXED
	pthread_mutex_lock(&m);
	while (!ready)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
#else
	if (!ready) {
		pthread_mutex_lock(&m);
		pthread_cond_wait(&c, &m);
		pthread_mutex_unlock(&m);
	}
#endif
	return NULL;
}

static void *signaller(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t w, s;

	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&s, NULL, signaller, NULL);
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	printf("ok\n");
	return 0;
}
