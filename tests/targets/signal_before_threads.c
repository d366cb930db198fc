/* Correct: main blocks SIGUSR1 and raises it before its first thread, so
 * it is pending there; a worker counts under a mutex; main then takes the
 * pending signal with sigwait.  A run must have the signal pending as main
 * left it: a fork of a template taken at the first thread starts with no
 * signal pending, and its sigwait would wait forever.
 * Prints "signal_before_threads: got 10, count 1".
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static int count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	count++;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	sigset_t set;
	pthread_t t;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR1);
	pthread_create(&t, NULL, worker, NULL);
	assert(sigwait(&set, &sig) == 0 && sig == SIGUSR1);
	pthread_join(t, NULL);
	printf("signal_before_threads: got %d, count %d\n", sig, count);
	return 0;
}
