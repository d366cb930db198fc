/* Correct: NPHIL (7) dining philosophers, each eating once; a global gate
 * (one mutex) is held while a philosopher picks up both forks, so no cycle
 * of waiting can form.  8 threads with main. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NPHIL
#define NPHIL 7
#endif

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fork_lock[NPHIL];
static int meals;

static void *philosopher(void *arg)
{
	int me = (int)(long)arg;
	int left = me, right = (me + 1) % NPHIL;

	pthread_mutex_lock(&gate);
	pthread_mutex_lock(&fork_lock[left]);
	pthread_mutex_lock(&fork_lock[right]);
	pthread_mutex_unlock(&gate);
	__atomic_fetch_add(&meals, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&fork_lock[right]);
	pthread_mutex_unlock(&fork_lock[left]);
	return NULL;
}

int main(void)
{
	pthread_t t[NPHIL];

	for (int i = 0; i < NPHIL; i++)
		pthread_mutex_init(&fork_lock[i], NULL);
	for (long i = 0; i < NPHIL; i++)
		pthread_create(&t[i], NULL, philosopher, (void *)i);
	for (int i = 0; i < NPHIL; i++)
		pthread_join(t[i], NULL);
	assert(meals == NPHIL);
	printf("meals=%d\n", meals);
	return 0;
}
