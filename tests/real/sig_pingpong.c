/*
 * Correct: two threads play ping-pong with pthread_kill and sigwait
 * (pbzip2's pattern), the signals blocked everywhere.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static pthread_t ping_t, pong_t;
static int rounds = 20, hits;

static void *pong(void *arg)
{
	sigset_t set;
	int sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (int i = 0; i < rounds; i++) {
		sigwait(&set, &sig);
		hits++;
		pthread_kill(ping_t, SIGUSR2);
	}
	return NULL;
}

int main(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by pong */
	ping_t = pthread_self();
	pthread_create(&pong_t, NULL, pong, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	for (int i = 0; i < rounds; i++) {
		pthread_kill(pong_t, SIGUSR1);
		sigwait(&set, &sig);
	}
	pthread_join(pong_t, NULL);
	printf("%d rounds\n", hits);
	return 0;
}
