/* Correct: consumer re-checks the predicate in a loop under the lock. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int ready;
static int message;

static void *producer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	message = 42;
	ready = 1;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *consumer(void *arg)
{
	int *got = arg;

	pthread_mutex_lock(&lock);
	while (!ready)
		pthread_cond_wait(&ready_cond, &lock);
	*got = message;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t c, p;
	int got = 0;

	pthread_create(&c, NULL, consumer, &got);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(c, NULL);
	pthread_join(p, NULL);

	printf("message=%d\n", got);
	return 0;
}
