/* Buggy: an atomicity violation among 16 threads.  Each checks under the
 * lock that a seat is left, and takes it in a second critical section;
 * with 15 seats, the last two threads can both see one seat left.  One
 * preemption, but late in a run of 16 threads. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define NTHREADS 16
#define SEATS 15

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int taken, refused;

static void *book(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	int left = SEATS - taken;
	pthread_mutex_unlock(&lock);
	if (left > 0) {
		pthread_mutex_lock(&lock);
		taken++;
		pthread_mutex_unlock(&lock);
	} else {
		pthread_mutex_lock(&lock);
		refused++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, book, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("taken=%d refused=%d\n", taken, refused);
	assert(taken <= SEATS && "overbooked");
	return 0;
}
