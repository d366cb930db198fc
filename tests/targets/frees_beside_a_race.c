/*
 * Two threads allocate, fill and free heap blocks of many sizes (malloc,
 * realloc, free) while both bump an unsynchronised counter: one data race
 * (on `racy`), none on the blocks, whose memory each thread hands back to
 * malloc and takes again.  Race discovery observes free and realloc to
 * forget a block's accesses (tests/integration/test_fast_path.c: the
 * same races and observations whether the agent logs those calls in the
 * program or they stop).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long racy;
static long sums[2];

static void *worker(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < 150; i++) {
		size_t n = 16 + (size_t)((i * 37 + id * 11) % 200);
		char *p = malloc(n);

		if (!p)
			abort();
		memset(p, i, n);
		sums[id] += p[n - 1];
		if (i % 3 == 0) {
			char *q = realloc(p, n * 2);

			if (!q)
				abort();
			q[n] = 1;
			sums[id] += q[0];
			p = q;
		}
		free(p);
		racy++;
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, worker, (void *)0);
	pthread_create(&b, NULL, worker, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld %ld %ld\n", sums[0], sums[1], racy);
	return 0;
}
