/* Correct: NWORK (13) workers insert their messages into a shared hash
 * table with compare-and-swap and linear probing (the indexer of
 * Flanagan and Godefroid's DPOR paper).  Each worker first peeks at the
 * slot with a plain load (a benign race: a stale value only costs a
 * failed CAS).  14 threads with main. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NWORK
#define NWORK 13
#endif
#define SIZE 128
#define MSGS 4

static int table[SIZE];

static void *worker(void *arg)
{
	int tid = (int)(long)arg;

	for (int m = 0; m < MSGS; m++) {
		int w = tid * 11 + m + 1;	/* never 0 */
		int h = (w * 7) % SIZE;

		for (;;) {
			int seen = *(volatile int *)&table[h];
			int zero = 0;

			if (seen == 0 &&
			    __atomic_compare_exchange_n(&table[h], &zero, w, 0,
							__ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				break;
			h = (h + 1) % SIZE;
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NWORK];
	int filled = 0;

	for (long i = 0; i < NWORK; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NWORK; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < SIZE; i++)
		filled += table[i] != 0;
	assert(filled == NWORK * MSGS);
	printf("filled=%d\n", filled);
	return 0;
}
