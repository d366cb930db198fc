/*
 * A counter on main's stack, handed to a worker by its address: both add
 * one with a load and a store, and an update can be lost.  The worker
 * reaches it through a pointer; main through its own frame (rbp- or
 * rsp-relative accesses), which race discovery left out, so main's side
 * was never a point and the search said "PASS complete to preemption
 * bound 2" on this bug (-O0 and -O2).
 *
 * -DFIXED: the correct twin.  The updates are made under a mutex that
 * lives on main's stack too, and the worker's arguments come in a struct
 * on main's stack, read by the worker while main goes on (the common
 * pattern: nothing there is written again before the join).
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

struct args {
	long *count;
	pthread_mutex_t *lock;
	long step;
};

static void *adder(void *p)
{
	const struct args *a = p;

#ifdef FIXED
	pthread_mutex_lock(a->lock);
#endif
	long v = *a->count;
	*a->count = v + a->step;
#ifdef FIXED
	pthread_mutex_unlock(a->lock);
#endif
	return NULL;
}

int main(void)
{
	long count = 0;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct args a = { &count, &lock, 1 };
	pthread_t t;

	if (pthread_create(&t, NULL, adder, &a))
		return 2;
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	long v = count;
	count = v + 1;
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	pthread_join(t, NULL);
	printf("count %ld\n", count);
	assert(count == 2);
	return 0;
}
