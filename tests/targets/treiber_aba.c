/* Bug: ABA in Treiber stack pop; a node ends up both popped and stacked. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#define NNODES 3

struct node {
	_Atomic(struct node *) next;
	char name;
};

static struct node nodes[NNODES] = {
	{ .name = 'A' },
	{ .name = 'B' },
	{ .name = 'C' },
};
static _Atomic(struct node *) top;
static struct node *held[2]; /* what each thread keeps, read after join */

static void push(struct node *n)
{
	struct node *old = atomic_load(&top);

	do
		atomic_store_explicit(&n->next, old, memory_order_relaxed);
	while (!atomic_compare_exchange_strong(&top, &old, n));
}

static struct node *pop(void)
{
	struct node *old = atomic_load(&top);
	struct node *next;

	do {
		if (!old)
			return NULL;
		next = atomic_load_explicit(&old->next, memory_order_relaxed);
		/*
		 * If old is popped and pushed back before the exchange, the
		 * exchange still succeeds and installs a stale next.
		 */
	} while (!atomic_compare_exchange_strong(&top, &old, next));
	return old;
}

static void *taker(void *arg)
{
	(void)arg;
	held[0] = pop();
	return NULL;
}

static void *juggler(void *arg)
{
	struct node *x, *y;

	(void)arg;
	x = pop();
	y = pop();
	push(x);
	held[1] = y;
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	bool seen[NNODES] = { false };
	int count = 0;

	for (int i = NNODES - 1; i >= 0; i--)
		push(&nodes[i]); /* top: A -> B -> C */

	pthread_create(&t1, NULL, taker, NULL);
	pthread_create(&t2, NULL, juggler, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);

	for (int i = 0; i < 2; i++) {
		assert(held[i] && "pop found the stack empty");
		seen[held[i] - nodes] = true;
		count++;
	}
	for (struct node *n = atomic_load(&top); n && count <= NNODES;
	     n = atomic_load(&n->next)) {
		assert(!seen[n - nodes] && "node both popped and on the stack");
		seen[n - nodes] = true;
		count++;
	}
	assert(count == NNODES && "nodes lost or duplicated");
	printf("nodes=%d\n", count);
	return 0;
}
