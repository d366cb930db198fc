/*
 * A queue under a mutex and a condition variable: the consumer reads it
 * after pthread_cond_wait returns, the mutex held (correct).  glibc's
 * cond_wait that finds a signal already there returns without a futex
 * wait and relocks the mutex inside: happens-before must still come from
 * the producer's unlock.  "racy": the consumer counts the queue's tail
 * after unlocking, while the producer pushes (a real data race on tail).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N 20

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int q[N], head, tail, done, racy;
static long sum, peeks;

static void *consumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	for (;;) {
		while (head == tail && !done)
			pthread_cond_wait(&cv, &m);
		while (head != tail)
			sum += q[head++];
		if (done)
			break;
		if (racy) {
			pthread_mutex_unlock(&m);
			peeks += tail; /* unlocked: races with the push */
			pthread_mutex_lock(&m);
		}
	}
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	racy = argc > 1 && !strcmp(argv[1], "racy");
	pthread_create(&t, NULL, consumer, NULL);
	for (int i = 0; i < N; i++) {
		pthread_mutex_lock(&m);
		q[tail++] = i;
		pthread_mutex_unlock(&m);
		pthread_cond_signal(&cv);
	}
	pthread_mutex_lock(&m);
	done = 1;
	pthread_mutex_unlock(&m);
	pthread_cond_signal(&cv);
	pthread_join(t, NULL);
	printf("sum %ld\n", sum);
	return 0;
}
