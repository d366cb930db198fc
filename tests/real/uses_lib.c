/*
 * Exits 1 after a thread, with a value from libptlx.so (next to it, by
 * $ORIGIN): ptloom saves its schedule, which records the library's
 * build-id; a replay after the library changed names it.
 */
#include <pthread.h>
#include <stdio.h>

int ptlx_value(void);

static void *worker(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	printf("value %d\n", ptlx_value());
	return 1;
}
