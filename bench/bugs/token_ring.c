/* Buggy (SCTBench CS token_ring class): four threads hand values along a
 * ring of plain (unlocked) globals: each reads its predecessor's slot and
 * writes its own; the last one checks the value went round unchanged.
 * Correct only when the threads run one after another in creation order;
 * any thread overtaking its predecessor (after a preemption) breaks the
 * check.  -DFIXED: each thread waits for its predecessor's slot under a
 * mutex and condition variable. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define N 4

static int slot[N + 1];
#ifdef FIXED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
#endif

static void *stage(void *arg)
{
	long i = (long)arg;

#ifdef FIXED
	pthread_mutex_lock(&m);
	while (slot[i] == 0)
		pthread_cond_wait(&c, &m);
	slot[i + 1] = slot[i] + 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
#else
	int v = slot[i];

	slot[i + 1] = v + 1;
#endif
	return NULL;
}

static void *last(void *arg)
{
	(void)arg;
#ifdef FIXED
	pthread_mutex_lock(&m);
	while (slot[N] == 0)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
#endif
	int v = slot[N];

	assert(v == N + 1 || v == 0);
	return NULL;
}

int main(void)
{
	pthread_t t[N + 1];

	slot[0] = 1;
	for (long i = 0; i < N; i++)
		pthread_create(&t[i], NULL, stage, (void *)i);
	pthread_create(&t[N], NULL, last, NULL);
	for (int i = 0; i <= N; i++)
		pthread_join(t[i], NULL);
	printf("ok\n");
	return 0;
}
