/* Buggy (SCTBench CS twostage_N class): NWORK threads publish data1 in
 * one critical section and data2 = data1 + 1 in a second one; a reader
 * created last reads data1 and then data2 in two critical sections and
 * asserts they agree.  A worker preempted between its two stages fails
 * (atomicity violation, 1 preemption, among many threads).
 * -DFIXED: one critical section per side. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NWORK
#define NWORK 8
#endif

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static int data1, data2;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m1);
	data1 = 1;
#ifndef FIXED
	pthread_mutex_unlock(&m1);
#endif
	pthread_mutex_lock(&m2);
	data2 = data1 + 1;
	pthread_mutex_unlock(&m2);
#ifdef FIXED
	pthread_mutex_unlock(&m1);
#endif
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	int t1, t2;

	pthread_mutex_lock(&m1);
	if (data1 == 0) {
		pthread_mutex_unlock(&m1);
		return NULL;
	}
	t1 = data1;
#ifndef FIXED
	pthread_mutex_unlock(&m1);
#endif
	pthread_mutex_lock(&m2);
	t2 = data2;
	pthread_mutex_unlock(&m2);
#ifdef FIXED
	pthread_mutex_unlock(&m1);
#endif
	assert(t2 == t1 + 1);
	return NULL;
}

int main(void)
{
	pthread_t t[NWORK + 1];

	for (int i = 0; i < NWORK; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_create(&t[NWORK], NULL, reader, NULL);
	for (int i = 0; i <= NWORK; i++)
		pthread_join(t[i], NULL);
	printf("ok\n");
	return 0;
}
