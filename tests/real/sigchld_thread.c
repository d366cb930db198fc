/*
 * Buggy: the SIGCHLD handler takes a lock (not async-signal-safe), written
 * as if it ran in main, which kills the child with the lock free.  But the
 * kernel sends SIGCHLD to the whole process, and any thread that does not
 * block it may take it: when the worker takes it inside its critical
 * section, the handler waits for the lock its own thread holds and the
 * program deadlocks.  Before, ptloom always gave it to main (the thread
 * the kernel wakes when nobody else runs) and this got a PASS.  With FIXED
 * the worker is created with SIGCHLD blocked, so only main can take it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t reaped;
static long work;

static void on_chld(int sig)
{
	int st;

	(void)sig;
	pthread_mutex_lock(&m);
	while (waitpid(-1, &st, WNOHANG) > 0)
		reaped++;
	pthread_mutex_unlock(&m);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&m);
		work++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_chld,
				.sa_flags = SA_RESTART };
	sigset_t set;
	pthread_t t;
	pid_t c;

	sigaction(SIGCHLD, &sa, NULL);
	c = fork();
	if (c == 0)
		for (;;)
			pause();
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
#ifdef FIXED
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* the worker inherits it */
#endif
	pthread_create(&t, NULL, worker, NULL);
#ifdef FIXED
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
#endif
	kill(c, SIGKILL);
	pthread_join(t, NULL);
	while (!reaped) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	printf("reaped %d, work %ld\n", (int)reaped, work);
	return 0;
}
