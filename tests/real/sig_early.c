/*
 * Buggy twin of sig_pingpong.c: the worker blocks SIGUSR1 itself, after
 * it started, so a signal that arrives before that kills the process
 * (SIGUSR1's default action) -- the set-up race ptloom must find.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static void *worker(void *arg)
{
	sigset_t set;
	int sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* too late, sometimes */
	sigwait(&set, &sig);
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	puts("done");
	return 0;
}
