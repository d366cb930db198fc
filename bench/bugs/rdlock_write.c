/* Buggy (a write under a read lock): NTHREADS readers each count their
 * visit in a shared counter while holding only the read lock, so two
 * readers inside together can lose an update (read, work, write back);
 * a writer changes the data in between.  The main thread checks every
 * visit was counted.  The readers' lock calls commute, their accesses to
 * the counter do not (race discovery makes them points).  -DFIXED: the
 * visit is counted under the write lock. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NTHREADS
#define NTHREADS 3
#endif

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static int data = 1;
static int visits;
static int seen[NTHREADS];

static void *reader(void *arg)
{
	long id = (long)arg;

	pthread_rwlock_rdlock(&lock);
	seen[id] = data;
#ifdef FIXED
	pthread_rwlock_unlock(&lock);
	pthread_rwlock_wrlock(&lock);
#endif
	int v = visits;

	seen[id] += v; /* the work between read and write */
	visits = v + 1;
	pthread_rwlock_unlock(&lock);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_rwlock_wrlock(&lock);
	data = 2;
	pthread_rwlock_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS], w;

	pthread_create(&w, NULL, writer, NULL);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, reader, (void *)i);
	pthread_join(w, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("visits %d\n", visits);
	assert(visits == NTHREADS && "a visit was lost");
	return 0;
}
