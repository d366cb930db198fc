/*
 * A two-stage pipeline among many threads: each of NWORK workers opens
 * the pipeline in stage one (under `in`) and publishes its output in
 * stage two (under `out`); an auditor created after all the workers reads
 * whether it is open, then the output, and checks that an open pipeline
 * has published.  Only the first worker's window matters (once any worker
 * has published, the output stays published): it must be stopped between
 * its two stages while the auditor reads both, an atomicity violation
 * that needs one preemption, at one step, handed to the one thread of
 * NWORK + 1 created last.  30 workers by default (the suite's time: 2,118
 * runs as with 100, found by the same late sample; bench/bugs/twostage.c
 * has the 100-worker form).  -DFIXED: each
 * worker holds `in` across both stages, and the auditor reads both under
 * it.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef NWORK
#define NWORK 30
#endif

static pthread_mutex_t in = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;
static int opened, published;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&in);
	opened = 1;
#ifndef FIXED
	pthread_mutex_unlock(&in);
#endif
	pthread_mutex_lock(&out);
	published = opened + 1;
	pthread_mutex_unlock(&out);
#ifdef FIXED
	pthread_mutex_unlock(&in);
#endif
	return NULL;
}

static void *auditor(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&in);
	int open = opened;
#ifndef FIXED
	pthread_mutex_unlock(&in);
#endif
	pthread_mutex_lock(&out);
	int out_now = published;
	pthread_mutex_unlock(&out);
#ifdef FIXED
	pthread_mutex_unlock(&in);
#endif
	assert(!open || out_now == open + 1);
	return NULL;
}

int main(void)
{
	pthread_t t[NWORK + 1];

	for (int i = 0; i < NWORK; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pthread_create(&t[NWORK], NULL, auditor, NULL);
	for (int i = 0; i <= NWORK; i++)
		pthread_join(t[i], NULL);
	printf("opened %d published %d\n", opened, published);
	return 0;
}
