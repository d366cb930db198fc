/*
 * main arms alarm(1), starts a worker that computes until SIGALRM's
 * handler sets `rang`, and joins it: natively it ends after a second.
 * Under a serialising supervisor its worker's loop, which stores, is a
 * computation (no spin): the run only ends if the handler has run before
 * the worker reads `rang`.  The timer may fire while main stands at its
 * join's futex wait; the wait then ends at once for the handler (the
 * kernel's futex wait returns for a pending signal) instead of blocking:
 * blocked, with the handler never run, the worker computed on and the run
 * was reported as a hang of the program (a false FAIL).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t rang;
static volatile unsigned long work[8];

static void on_alarm(int sig)
{
	(void)sig;
	rang = 1;
}

static void *worker(void *arg)
{
	(void)arg;
	for (unsigned long n = 0; !rang; n++)
		work[n & 7] = n;
	return NULL;
}

int main(void)
{
	pthread_t w;

	signal(SIGALRM, on_alarm);
	alarm(1);
	pthread_create(&w, NULL, worker, NULL);
	pthread_join(w, NULL);
	puts("done");
	return 0;
}
