/* Bug: SPSC ring producer publishes the index before writing the slot. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define SIZE 4
#define NITEMS 6

static volatile unsigned head; /* written by the producer only */
static volatile unsigned tail; /* written by the consumer only */
static volatile int slots[SIZE];

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 1; i <= NITEMS; i++) {
		unsigned h = head;

		while (h - tail == SIZE)
			; /* full: busy-wait for the consumer */
		head = h + 1; /* publishes the slot ... */
		slots[h % SIZE] = i; /* ... before it holds the item */
	}
	return NULL;
}

static void *consumer(void *arg)
{
	int *sum = arg;

	for (int i = 1; i <= NITEMS; i++) {
		unsigned t = tail;
		int v;

		while (t == head)
			; /* empty: busy-wait for the producer */
		v = slots[t % SIZE];
		assert(v == i && "consumer read a slot before it was written");
		*sum += v;
		tail = t + 1;
	}
	return NULL;
}

int main(void)
{
	pthread_t p, c;
	int sum = 0;

	pthread_create(&c, NULL, consumer, &sum);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);

	printf("sum=%d\n", sum);
	return 0;
}
