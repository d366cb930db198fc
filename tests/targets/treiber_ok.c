/* Correct: Treiber stack with a version tag in the top word, so no ABA. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define NNODES 3

/* Nodes are named by index + 1 so that 0 means "none". */
struct node {
	_Atomic uint32_t next;
	char name;
};

static struct node nodes[NNODES] = {
	{ .name = 'A' },
	{ .name = 'B' },
	{ .name = 'C' },
};
/* top: version in the high 32 bits, node index + 1 in the low 32 bits */
static _Atomic uint64_t top;
static uint32_t held[2]; /* what each thread keeps, read after join */

static uint64_t make_top(uint64_t old, uint32_t n)
{
	return ((old >> 32) + 1) << 32 | n;
}

static void push(uint32_t n)
{
	uint64_t old = atomic_load(&top);

	do
		atomic_store_explicit(&nodes[n - 1].next, (uint32_t)old,
				      memory_order_relaxed);
	while (!atomic_compare_exchange_strong(&top, &old, make_top(old, n)));
}

static uint32_t pop(void)
{
	uint64_t old = atomic_load(&top);
	uint32_t n, next;

	do {
		n = (uint32_t)old;
		if (!n)
			return 0;
		next = atomic_load_explicit(&nodes[n - 1].next,
					    memory_order_relaxed);
		/* A pop and push of n in between changes the version. */
	} while (!atomic_compare_exchange_strong(&top, &old,
						 make_top(old, next)));
	return n;
}

static void *taker(void *arg)
{
	(void)arg;
	held[0] = pop();
	return NULL;
}

static void *juggler(void *arg)
{
	uint32_t x, y;

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
	bool seen[NNODES + 1] = { false };
	int count = 0;

	for (uint32_t n = NNODES; n >= 1; n--)
		push(n); /* top: A -> B -> C */

	pthread_create(&t1, NULL, taker, NULL);
	pthread_create(&t2, NULL, juggler, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);

	for (int i = 0; i < 2; i++) {
		assert(held[i] && "pop found the stack empty");
		seen[held[i]] = true;
		count++;
	}
	for (uint32_t n = (uint32_t)atomic_load(&top); n && count <= NNODES;
	     n = atomic_load(&nodes[n - 1].next)) {
		assert(!seen[n] && "node both popped and on the stack");
		seen[n] = true;
		count++;
	}
	assert(count == NNODES && "nodes lost or duplicated");
	printf("nodes=%d\n", count);
	return 0;
}
