/* Correct: a file-system model (after Flanagan and Godefroid's DPOR
 * paper).  NWORK (26) workers each allocate an inode under its lock and
 * then a block under the block's lock, searching from 2i; every worker
 * has its own inode and the search ends at a free block, so the blocks
 * taken are disjoint.  27 threads with main. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NWORK
#define NWORK 26
#endif
#define NINODE 32
#define NBLOCK 64

static pthread_mutex_t inode_lock[NINODE];
static pthread_mutex_t block_lock[NBLOCK];
static int inode[NINODE];
static int busy[NBLOCK];

static void *worker(void *arg)
{
	int i = (int)(long)arg % NINODE;

	pthread_mutex_lock(&inode_lock[i]);
	if (inode[i] == 0) {
		int b = (i * 2) % NBLOCK;

		for (;;) {
			pthread_mutex_lock(&block_lock[b]);
			if (!busy[b]) {
				busy[b] = 1;
				inode[i] = b + 1;
				pthread_mutex_unlock(&block_lock[b]);
				break;
			}
			pthread_mutex_unlock(&block_lock[b]);
			b = (b + 1) % NBLOCK;
		}
	}
	pthread_mutex_unlock(&inode_lock[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[NWORK];
	int used = 0;

	for (int i = 0; i < NINODE; i++)
		pthread_mutex_init(&inode_lock[i], NULL);
	for (int i = 0; i < NBLOCK; i++)
		pthread_mutex_init(&block_lock[i], NULL);
	for (long i = 0; i < NWORK; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NWORK; i++)
		pthread_join(t[i], NULL);
	for (int b = 0; b < NBLOCK; b++)
		used += busy[b];
	assert(used == NWORK);
	printf("blocks=%d\n", used);
	return 0;
}
