/*
 * A writer publishes a new configuration with an atomic exchange and
 * frees the old one at once, while a reader may still hold it (an RCU
 * update without its grace period): the reader then reads freed memory,
 * which the allocator has already written into (its free list), so the
 * two fields it checks differ.  gcc -O2 drops a store just before a free,
 * so the free is the only "write" there is.  With "fixed" the old blocks
 * are freed by main after both threads are joined.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cfg {
	long a, b;
};

static struct cfg *cur;
static struct cfg *retired[2];
static int fixed;

static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		struct cfg *c = __atomic_load_n(&cur, __ATOMIC_ACQUIRE);
		long a = c->a, b = c->b;

		assert(a == b && "read a freed configuration");
	}
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		struct cfg *n = malloc(sizeof(*n));

		n->a = n->b = i + 1;
		struct cfg *old = __atomic_exchange_n(&cur, n,
						      __ATOMIC_ACQ_REL);
		if (fixed)
			retired[i] = old;
		else
			free(old);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t r, w;

	fixed = argc > 1 && !strcmp(argv[1], "fixed");
	cur = malloc(sizeof(*cur));
	cur->a = cur->b = 0;
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	free(retired[0]);
	free(retired[1]);
	free(cur);
	puts("ok");
	return 0;
}
