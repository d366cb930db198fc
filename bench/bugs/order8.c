/* Buggy: an order violation among 8 threads.  The first worker created
 * builds the shared table; the others assume it already exists because
 * it was created first, and read it under the lock without checking.  One
 * preemption of the first worker before it builds the table crashes a
 * later one; bound 0 alone has thousands of orders of the other seven. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int *table;
static int sum;

static void *builder(void *arg)
{
	(void)arg;
	int *t = calloc(16, sizeof(*t));

	pthread_mutex_lock(&lock);
	table = t;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *user(void *arg)
{
	long id = (long)arg;

	pthread_mutex_lock(&lock);
	sum += table[id]; /* assumes builder ran first */
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	pthread_create(&t[0], NULL, builder, NULL);
	for (long i = 1; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, user, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("sum=%d\n", sum);
	free(table);
	return 0;
}
