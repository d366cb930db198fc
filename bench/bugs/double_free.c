/* Buggy (ConVul class: double free across threads): two threads release
 * a shared buffer with "if (buf) { free(buf); buf = NULL; }" without a
 * lock; both may pass the test before either clears the pointer, and
 * glibc aborts ("free(): double free detected").  -DFIXED: the test and
 * the reset under a mutex. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static char *buf;
#ifdef FIXED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
#endif

static void release(void)
{
#ifdef FIXED
	pthread_mutex_lock(&m);
#endif
	if (buf) {
		free(buf);
		buf = NULL;
	}
#ifdef FIXED
	pthread_mutex_unlock(&m);
#endif
}

static void *closer(void *arg)
{
	(void)arg;
	release();
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	buf = malloc(64);
	pthread_create(&a, NULL, closer, NULL);
	pthread_create(&b, NULL, closer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("ok\n");
	return 0;
}
