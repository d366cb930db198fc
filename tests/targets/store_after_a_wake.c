/*
 * The reader waits on a semaphore while main stores to a shared word:
 * nobody else can run, so the store's race point is lifted (a point with
 * one alternative is no choice).  Main's post wakes the reader, and the
 * same store instruction runs again: now it is a choice, and the reader
 * may see the 1 between main's two stores (found at bound 1).  Before,
 * the lifted points came back at main's next choice only (its join), so
 * the stores after the post were no points and the bug took two
 * preemptions; and with the fast path, whose futex slot took the wake in
 * the program, when they came back depended on which choices the
 * systematic search knew in advance: the runs differed from those
 * without it, and a prefix replayed later did not repeat itself (Boost
 * asio's thread_pool with a strand: "the program does not repeat itself",
 * INCOMPLETE).
 */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static sem_t go, ready;
static volatile int data;

static void *reader(void *arg)
{
	(void)arg;
	sem_post(&ready);
	sem_wait(&go);
	int d = data;

	assert(d != 1);
	return NULL;
}

__attribute__((noinline)) static void store(int v)
{
	data = v;
}

int main(void)
{
	pthread_t t;

	sem_init(&go, 0, 0);
	sem_init(&ready, 0, 0);
	pthread_create(&t, NULL, reader, NULL);
	sem_wait(&ready);
	for (int i = 0; i < 2; i++) {
		store(1);
		store(2);
		if (i == 0)
			sem_post(&go);
	}
	pthread_join(t, NULL);
	printf("data %d\n", data);
	return 0;
}
