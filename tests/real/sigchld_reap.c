/*
 * Correct: a SIGCHLD handler reaps children (waitpid WNOHANG in a loop)
 * while worker threads run; main waits for all three with sigsuspend,
 * SIGCHLD blocked in between, and checks their exit statuses.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t reaped, status_sum;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long work;

static void on_chld(int sig)
{
	int saved = errno, st;

	(void)sig;
	while (waitpid(-1, &st, WNOHANG) > 0) {
		reaped++;
		if (WIFEXITED(st))
			status_sum += WEXITSTATUS(st);
	}
	errno = saved;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&m);
		work++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_chld,
				.sa_flags = SA_RESTART | SA_NOCLDSTOP };
	sigset_t block, old;
	pthread_t t[2];

	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	sigaction(SIGCHLD, &sa, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	/* the workers inherited the blocked mask: the handler runs in main */
	for (int i = 1; i <= 3; i++) {
		pid_t c = fork();

		if (c == 0)
			_exit(i);
		if (c < 0)
			return 2;
	}
	while (reaped < 3)
		sigsuspend(&old);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("reaped %d, statuses %d, work %ld\n", (int)reaped,
	       (int)status_sum, work);
	return 0;
}
