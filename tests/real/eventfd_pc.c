/*
 * Correct: a producer and a consumer pass 20 items through an eventfd
 * (semaphore mode), the consumer blocking when it is empty.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define ITEMS 20
static int efd;

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITEMS; i++) {
		uint64_t one = 1;

		if (write(efd, &one, sizeof(one)) != sizeof(one))
			return NULL;
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	int got = 0;

	efd = eventfd(0, EFD_SEMAPHORE);
	pthread_create(&t, NULL, producer, NULL);
	for (int i = 0; i < ITEMS; i++) {
		uint64_t v;

		if (read(efd, &v, sizeof(v)) == sizeof(v))
			got += (int)v;
	}
	pthread_join(t, NULL);
	printf("consumed %d\n", got);
	return 0;
}
