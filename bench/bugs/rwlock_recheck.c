/* Buggy (check-then-act across rwlock sections, the class of a reader
 * that "upgrades"): NTHREADS threads each check under the read lock that
 * a seat is left, release it, and take the seat under the write lock
 * without checking again, so two of them can take the last seat; the main
 * thread checks the count never went below zero.  Several readers are in
 * their read sections together, which is where a reduction may treat
 * their calls as commuting.  -DFIXED: the check is repeated under the
 * write lock. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NTHREADS
#define NTHREADS 3
#endif

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static int seats = NTHREADS - 1;
static int taken[NTHREADS];

static void *booker(void *arg)
{
	long id = (long)arg;

	pthread_rwlock_rdlock(&lock);
	int left = seats;
	pthread_rwlock_unlock(&lock);
	if (left <= 0)
		return NULL;
	pthread_rwlock_wrlock(&lock);
#ifdef FIXED
	if (seats > 0) {
		seats--;
		taken[id] = 1;
	}
#else
	seats--;
	taken[id] = 1;
#endif
	pthread_rwlock_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, booker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("seats left %d\n", seats);
	assert(seats >= 0 && "a seat was taken twice");
	return 0;
}
