/*
 * Correct: a signal sent to the process is taken by one thread.  Two
 * threads sleep in a loop until main (which blocks SIGUSR1) has sent one
 * SIGUSR1 to the process and seen it handled: the handler runs once, and
 * at most one sleep is interrupted (the kernel wakes one thread for it,
 * never both).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled, done;
static int eintr[2];

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void *sleeper(void *arg)
{
	int *n = arg;

	while (!done) {
		struct timespec ts = { 0, 20000000 };

		if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
			(*n)++;
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t set;
	pthread_t t[2];

	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, sleeper, &eintr[i]);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	usleep(1000);
	kill(getpid(), SIGUSR1);
	while (!handled)
		usleep(1000);
	done = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (handled != 1 || eintr[0] + eintr[1] > 1) {
		fprintf(stderr, "handled %d, interrupted %d\n", (int)handled,
			eintr[0] + eintr[1]);
		abort();
	}
	printf("handled once, at most one sleep interrupted\n");
	return 0;
}
