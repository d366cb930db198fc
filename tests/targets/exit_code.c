/* Bug: "last one out" check races, so cleanup can run twice; main returns 3. */
#include <pthread.h>
#include <stdio.h>

#define NWORKERS 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int active = NWORKERS;
static int cleanups;

static void release_resources(void)
{
	pthread_mutex_lock(&lock);
	cleanups++;
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	int last;

	(void)arg;
	pthread_mutex_lock(&lock);
	active--;
	pthread_mutex_unlock(&lock);

	/* Checked in a second critical section: both may see zero. */
	pthread_mutex_lock(&lock);
	last = active == 0;
	pthread_mutex_unlock(&lock);
	if (last)
		release_resources();
	return NULL;
}

int main(void)
{
	pthread_t threads[NWORKERS];

	for (int i = 0; i < NWORKERS; i++)
		pthread_create(&threads[i], NULL, worker, NULL);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(threads[i], NULL);

	if (cleanups != 1) {
		fprintf(stderr, "resources released %d times\n", cleanups);
		return 3;
	}
	printf("cleanups=%d\n", cleanups);
	return 0;
}
