/* Buggy (SCTBench CS reorder_N class): NSET setter threads each store
 * a = 1 and then b = -1 to plain (unlocked, non-atomic) globals; one
 * checker thread created last reads a and b and asserts it saw both
 * stores or neither.  A setter preempted between its two stores while the
 * checker runs fails; found only through race points (no locks at all).
 * -DFIXED: the setters store under a mutex, the checker reads under it. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NSET
#define NSET 9
#endif

static int a, b;
#ifdef FIXED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&m)
#define UNLOCK() pthread_mutex_unlock(&m)
#else
#define LOCK() (void)0
#define UNLOCK() (void)0
#endif

static void *setter(void *arg)
{
	(void)arg;
	LOCK();
	a = 1;
	b = -1;
	UNLOCK();
	return NULL;
}

static void *checker(void *arg)
{
	(void)arg;
	LOCK();
	int ta = a, tb = b;
	UNLOCK();

	assert((ta == 0 && tb == 0) || (ta == 1 && tb == -1));
	return NULL;
}

int main(void)
{
	pthread_t t[NSET + 1];

	for (int i = 0; i < NSET; i++)
		pthread_create(&t[i], NULL, setter, NULL);
	pthread_create(&t[NSET], NULL, checker, NULL);
	for (int i = 0; i <= NSET; i++)
		pthread_join(t[i], NULL);
	printf("ok\n");
	return 0;
}
