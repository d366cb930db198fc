/* Buggy (SCTBench CS circular_buffer class): a producer and a consumer
 * share a ring; the element count is a plain global that both update
 * with a read and a write (no lock).  A lost update of the count makes
 * the consumer read a slot that was never written (or the producer wait
 * for room that never comes).  -DFIXED: the count under a mutex. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define SIZE 2
#define ITEMS 4

static int buf[SIZE];
static volatile int count; /* volatile: else -O2 hoists the waits */
#ifdef FIXED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&m)
#define UNLOCK() pthread_mutex_unlock(&m)
#else
#define LOCK() (void)0
#define UNLOCK() (void)0
#endif

static int get_count(void)
{
	LOCK();
	int c = count;

	UNLOCK();
	return c;
}

static void add_count(int d)
{
	LOCK();
	int c = count;

	count = c + d;
	UNLOCK();
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0, in = 0; i < ITEMS; i++, in = (in + 1) % SIZE) {
		while (get_count() == SIZE)
			sched_yield();
		buf[in] = i + 1;
		add_count(1);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0, out = 0; i < ITEMS; i++, out = (out + 1) % SIZE) {
		while (get_count() == 0)
			sched_yield();
		int v = buf[out];

		assert(v == i + 1 && "read a slot that was not written");
		buf[out] = 0;
		add_count(-1);
	}
	return NULL;
}

int main(void)
{
	pthread_t p, c;

	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("ok\n");
	return 0;
}
