/* A lock-free single-producer single-consumer FIFO as a linked list of
 * heap nodes: main allocates a node per item and links it behind the tail
 * (a release store of the previous node's next pointer), a thread
 * consumes, spinning on the next pointer of the node it stands on (an
 * acquire load), and checks each value.  The word it spins on is a new
 * heap address for every item.  Correct as written (-DFIXED): the value
 * is stored before the node is linked.  Without FIXED the producer links
 * the node first and fills it after, with no call or system call in
 * between: the consumer reads an unfilled node only if it is waiting on
 * that very pointer at the moment it is stored and runs before the next
 * store. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NITEMS 6

struct node {
	struct node *next;
	int value;
};

static struct node stub;

static void *consumer(void *arg)
{
	struct node *h = arg, *n;
	long sum = 0;

	for (int expect = 1; expect <= NITEMS; expect++) {
		while (!(n = __atomic_load_n(&h->next, __ATOMIC_ACQUIRE)))
			; /* empty: wait for the producer */
		assert(n->value == expect && "consumer read an unfilled node");
		sum += n->value;
		h = n;
	}
	return (void *)sum;
}

int main(void)
{
	struct node *tail = &stub, *all[NITEMS];
	pthread_t c;
	void *sum;

	pthread_create(&c, NULL, consumer, &stub);
	for (int i = 1; i <= NITEMS; i++) {
		struct node *n = calloc(1, sizeof(*n));

		if (!n)
			return 2;
		all[i - 1] = n;
#ifdef FIXED
		n->value = i;
		__atomic_store_n(&tail->next, n, __ATOMIC_RELEASE);
#else
		__atomic_store_n(&tail->next, n, __ATOMIC_RELEASE);
		__atomic_store_n(&n->value, i, __ATOMIC_RELAXED);
#endif
		tail = n;
	}
	pthread_join(c, &sum);
	printf("sum=%ld\n", (long)sum);
	for (int i = 0; i < NITEMS; i++)
		free(all[i]);
	return 0;
}
