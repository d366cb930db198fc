/* Buggy (condition variable misuse: `if` instead of `while`): two
 * consumers each take one item, a producer makes two.  A consumer woken
 * by the first signal may find the item already taken by the other
 * consumer, which got the mutex first, and takes from an empty queue.
 * -DFIXED: re-test in a while loop. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int items;

static void *consumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
#ifdef FIXED
	while (items == 0)
#else
	if (items == 0)
#endif
		pthread_cond_wait(&c, &m);
	items--;
	assert(items >= 0 && "took from an empty queue");
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&m);
		items++;
		pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b, p;

	pthread_create(&a, NULL, consumer, NULL);
	pthread_create(&b, NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(p, NULL);
	printf("ok\n");
	return 0;
}
