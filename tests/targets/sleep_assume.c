/* Bug: main sleeps 50 ms and assumes the worker has finished by then. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned checksum;
static int done;

static void *worker(void *arg)
{
	unsigned h = 2166136261u;

	(void)arg;
	for (int i = 0; i < 1000; i++)
		h = (h ^ (unsigned)i) * 16777619u;

	pthread_mutex_lock(&lock);
	checksum = h;
	done = 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int finished;

	pthread_create(&t, NULL, worker, NULL);
	usleep(50000); /* "plenty of time" for the worker */

	pthread_mutex_lock(&lock);
	finished = done;
	pthread_mutex_unlock(&lock);
	assert(finished && "worker not done after 50 ms");

	pthread_join(t, NULL);
	printf("checksum=%08x\n", checksum);
	return 0;
}
