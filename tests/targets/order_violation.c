/* Bug: the creator initialises the configuration only after pthread_create,
 * and the new thread reads it at once: an order violation (SIGSEGV). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct config {
	int workers;
};

static struct config *config;

static void *worker(void *arg)
{
	(void)arg;
	printf("workers=%d\n", config->workers);
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	config = malloc(sizeof(*config));
	config->workers = 4;
	pthread_join(t, NULL);
	free(config);
	return 0;
}
