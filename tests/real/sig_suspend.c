/*
 * Correct: lbzip2's pattern.  The main thread waits in sigsuspend for a
 * worker's SIGUSR1, handled, with the signal blocked outside the wait; a
 * sigtimedwait with a long timeout is answered by the worker too.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t got;
static pthread_t main_t;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_kill(main_t, SIGUSR1);
	pthread_kill(main_t, SIGUSR2);
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t block, old, w;
	pthread_t t;

	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	main_t = pthread_self();
	pthread_create(&t, NULL, worker, NULL);
	sigset_t during = old;

	sigaddset(&during, SIGUSR2); /* it stays for sigtimedwait */
	while (!got)
		sigsuspend(&during); /* SIGUSR1 unblocked only here */
	sigemptyset(&w);
	sigaddset(&w, SIGUSR2);
	struct timespec ts = { 30, 0 };
	int sig = sigtimedwait(&w, NULL, &ts);

	pthread_join(t, NULL);
	printf("got %d, then %s\n", (int)got, sig == SIGUSR2 ? "SIGUSR2" : "?");
	return 0;
}
