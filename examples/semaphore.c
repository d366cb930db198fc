/* Correct: producer/consumer over a ring buffer guarded by two semaphores. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define SLOTS 3
#define NITEMS 8

static sem_t free_slots; /* counts empty slots */
static sem_t filled; /* counts slots holding an item */
static int ring[SLOTS];

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 1; i <= NITEMS; i++) {
		sem_wait(&free_slots);
		ring[i % SLOTS] = i * i;
		sem_post(&filled);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	int *sum = arg;

	for (int i = 1; i <= NITEMS; i++) {
		int v;

		sem_wait(&filled);
		v = ring[i % SLOTS];
		sem_post(&free_slots);
		assert(v == i * i && "item read from the wrong slot");
		*sum += v;
	}
	return NULL;
}

int main(void)
{
	pthread_t p, c;
	int sum = 0;

	sem_init(&free_slots, 0, SLOTS);
	sem_init(&filled, 0, 0);
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, &sum);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	sem_destroy(&free_slots);
	sem_destroy(&filled);

	printf("items=%d sum=%d\n", NITEMS, sum);
	return 0;
}
