/*
 * Buggy: a SIGALRM handler checks two counters the worker updates one
 * after the other with no syscall between (items first, then bytes), while
 * the main thread waits in pthread_join.  The alarm can fire between the
 * two updates, one preemption: only a scheduling point at the racy
 * accesses lets it, and such points were lifted while every other thread
 * was quiet, although the armed alarm's expiry was an alternative there.
 */
#define _DEFAULT_SOURCE /* SA_RESTART with -std=c17 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long items, bytes; /* bytes == 512 * items */

static void on_alarm(int sig)
{
	(void)sig;
	if (bytes != 512 * items)
		abort();
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		items++;
		bytes += 512;
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm,
				.sa_flags = SA_RESTART };
	pthread_t t;

	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	alarm(0);
	return 0;
}
