/* Bug: unlocked counter++ from two threads can lose an update. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int counter;

static void *increment(void *arg)
{
	int tmp;

	(void)arg;
	tmp = counter;
	/*
	 * A compiler barrier, no instruction: keeps clang -O2 from fusing the
	 * load and the store into a single "addl $1, counter".
	 */
	atomic_signal_fence(memory_order_seq_cst);
	counter = tmp + 1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, increment, NULL);
	pthread_create(&b, NULL, increment, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);

	assert(counter == 2 && "lost update on counter");
	printf("counter=%d\n", counter);
	return 0;
}
