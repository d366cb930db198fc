/*
 * Correct: alarm(1) before sleep(5): the SIGALRM handler interrupts the
 * sleep after one (virtual) second, while a worker waits in join.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t rang;

static void on_alarm(int sig)
{
	(void)sig;
	rang = 1;
}

static void *worker(void *arg)
{
	(void)arg;
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	pthread_t t;

	sigaction(SIGALRM, &sa, NULL);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	alarm(1);
	unsigned left = sleep(5);

	printf("alarm %s, %u s of the sleep left\n", rang ? "rang" : "silent",
	       left);
	return 0;
}
