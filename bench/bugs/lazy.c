/* Buggy (SCTBench CS lazy01 / SV-COMP lazy01 class): three threads under
 * one mutex; two add 1 and 2 to data, the third asserts data < 3, which
 * holds only while not both adders have run before it.  A plain order
 * violation among three threads.  -DFIXED: the checker asserts data <= 3. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int data;

static void *add1(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	data++;
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *add2(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	data += 2;
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *check(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
#ifdef FIXED
	assert(data <= 3);
#else
	assert(data < 3);
#endif
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	pthread_create(&t[2], NULL, check, NULL);
	pthread_create(&t[0], NULL, add1, NULL);
	pthread_create(&t[1], NULL, add2, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("ok\n");
	return 0;
}
