/* A lock-free single-producer single-consumer ring that lives on the main
 * thread's stack: main produces, a thread consumes, and each side
 * busy-waits on the other's volatile index (the producer inline, the
 * consumer through ring_empty(), a call at -O0 and inlined at -O2).
 * Correct as written.  -DRACY: the producer publishes the slot (advances
 * writer) before it stores the item, so the consumer can read a stale
 * slot and the assertion fails. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define SIZE 4
#define NITEMS 8

struct ring {
	volatile unsigned writer; /* written by the producer only */
	volatile unsigned reader; /* written by the consumer only */
	volatile int slot[SIZE];
};

static int ring_empty(struct ring *r)
{
	return r->reader == r->writer;
}

static void *consumer(void *arg)
{
	struct ring *r = arg;
	long sum = 0;

	for (int expect = 1; expect <= NITEMS;) {
		if (ring_empty(r))
			continue;
		int v = r->slot[r->reader];

		assert(v == expect && "consumer read a slot before it was written");
		r->slot[r->reader] = 0;
		r->reader = (r->reader + 1) % SIZE;
		sum += v;
		expect++;
	}
	return (void *)sum;
}

static void produce(struct ring *r, int v)
{
	while ((r->writer + 1) % SIZE == r->reader)
		; /* full */
#ifdef RACY
	unsigned w = r->writer;

	r->writer = (w + 1) % SIZE; /* publishes the slot ... */
	r->slot[w] = v;		    /* ... before it holds the item */
#else
	r->slot[r->writer] = v;
	r->writer = (r->writer + 1) % SIZE;
#endif
}

int main(void)
{
	struct ring ring = { 0 };
	pthread_t c;
	void *sum;

	pthread_create(&c, NULL, consumer, &ring);
	for (int i = 1; i <= NITEMS; i++)
		produce(&ring, i);
	pthread_join(c, &sum);
	printf("sum=%ld\n", (long)sum);
	return 0;
}
