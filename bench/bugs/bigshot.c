/* Buggy (SV-COMP bigshot_p class, an order violation on a plain pointer):
 * one thread allocates the shared buffer, another fills it if it is
 * there; main checks after the joins that it was filled.  It is not when
 * the filler runs first.  -DFIXED: the filler waits for the buffer. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *v;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *alloc(void *arg)
{
	(void)arg;
	char *p = calloc(16, 1);

	pthread_mutex_lock(&m);
	v = p;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *fill(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
#ifdef FIXED
	while (!v)
		pthread_cond_wait(&c, &m);
#endif
	if (v)
		strcpy(v, "Bigshot");
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, alloc, NULL);
	pthread_create(&b, NULL, fill, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(v[0] == 'B');
	free(v);
	printf("ok\n");
	return 0;
}
