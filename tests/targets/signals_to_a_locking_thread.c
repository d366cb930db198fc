/*
 * main sends a worker SIGUSR1 a hundred times while both lock and unlock
 * mutexes (correct: the count is 300, the handler ran).  Under the random
 * walk the worker is often waiting at its lock for the turn when the
 * signal comes, and main hands it the turn right after (the agent's
 * hand-off between threads): the signal meets the thread in the agent's
 * own code.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t handled;
static long n;

static void on_usr1(int sig)
{
	(void)sig;
	handled = 1;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&m2);
		n++;
		pthread_mutex_unlock(&m2);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 100; i++) {
		pthread_kill(t, SIGUSR1);
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		pthread_mutex_lock(&m2);
		n++;
		pthread_mutex_unlock(&m2);
	}
	pthread_join(t, NULL);
	printf("%ld %d\n", n, (int)handled);
	assert(n == 300 && handled);
	return 0;
}
