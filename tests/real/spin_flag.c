/*
 * Correct: a thread busy-waits on a flag another thread sets.  The spin
 * must be recognised (a load-only loop another thread can end).
 */
#include <pthread.h>
#include <stdio.h>

static volatile int flag;
static int data;

static void *spinner(void *arg)
{
	(void)arg;
	while (!flag)
		;
	printf("data %d\n", data);
	return NULL;
}

static void *setter(void *arg)
{
	(void)arg;
	data = 42;
	flag = 1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, spinner, NULL);
	pthread_create(&b, NULL, setter, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
