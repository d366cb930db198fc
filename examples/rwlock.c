/* Correct: readers never see a half-done transfer under a pthread rwlock. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define NREADERS 3
#define NREADS 3
#define NTRANSFERS 3
#define TOTAL 100

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static int checking = TOTAL;
static int savings;

static void *reader(void *arg)
{
	int *reads = arg;

	for (int i = 0; i < NREADS; i++) {
		pthread_rwlock_rdlock(&lock);
		assert(checking + savings == TOTAL &&
		       "reader saw a transfer half done");
		(*reads)++;
		pthread_rwlock_unlock(&lock);
	}
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < NTRANSFERS; i++) {
		pthread_rwlock_wrlock(&lock);
		checking -= 10;
		savings += 10;
		pthread_rwlock_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t readers[NREADERS], w;
	int reads[NREADERS] = { 0 };
	int total_reads = 0;

	pthread_create(&w, NULL, writer, NULL);
	for (int i = 0; i < NREADERS; i++)
		pthread_create(&readers[i], NULL, reader, &reads[i]);
	pthread_join(w, NULL);
	for (int i = 0; i < NREADERS; i++) {
		pthread_join(readers[i], NULL);
		total_reads += reads[i];
	}

	printf("checking=%d savings=%d reads=%d\n", checking, savings,
	       total_reads);
	return 0;
}
