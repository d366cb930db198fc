/*
 * Correct: POSIX timers on the virtual clock while threads run.
 *   - SIGEV_SIGNAL: a periodic timer whose handler counts ticks; main
 *     waits for three with sigsuspend (the signal blocked in between);
 *   - SIGEV_THREAD_ID: a periodic timer aimed at a worker, which takes
 *     three expirations with sigwaitinfo;
 *   - SIGEV_THREAD: glibc's helper thread runs a callback that posts a
 *     semaphore main waits on;
 * then timer_gettime, timer_getoverrun and timer_delete.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TICK (SIGRTMIN + 1)

static volatile sig_atomic_t ticks;
static sem_t ready, fired;
static pid_t waiter_tid;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_TIMER && si->si_value.sival_int == 7)
		ticks++;
}

static void on_expiry(union sigval v)
{
	if (v.sival_int == 9)
		sem_post(&fired);
}

static void *waiter(void *arg)
{
	sigset_t set;
	siginfo_t si;
	long n = 0;

	(void)arg;
	waiter_tid = gettid();
	sem_post(&ready);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (n < 3)
		if (sigwaitinfo(&set, &si) == SIGUSR1 &&
		    si.si_code == SI_TIMER && si.si_value.sival_int == 8)
			n++;
	return (void *)n;
}

static timer_t make(int notify, int sig, int value, pid_t tid)
{
	struct sigevent ev = { .sigev_notify = notify, .sigev_signo = sig };
	timer_t id;

	ev.sigev_value.sival_int = value;
	if (notify == SIGEV_THREAD)
		ev.sigev_notify_function = on_expiry;
	if (notify == SIGEV_THREAD_ID)
		ev._sigev_un._tid = tid;
	if (timer_create(CLOCK_MONOTONIC, &ev, &id)) {
		perror("timer_create");
		exit(2);
	}
	return id;
}

static void arm(timer_t id, long first_ms, long every_ms)
{
	struct itimerspec its = {
		{ every_ms / 1000, every_ms % 1000 * 1000000 },
		{ first_ms / 1000, first_ms % 1000 * 1000000 },
	};

	if (timer_settime(id, 0, &its, NULL)) {
		perror("timer_settime");
		exit(2);
	}
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_tick,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	sigset_t block, old;
	pthread_t t;
	void *got;

	sem_init(&ready, 0, 0);
	sem_init(&fired, 0, 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, TICK);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	sigaction(TICK, &sa, NULL);
	pthread_create(&t, NULL, waiter, NULL);
	sem_wait(&ready);

	timer_t a = make(SIGEV_SIGNAL, TICK, 7, 0);
	timer_t b = make(SIGEV_THREAD_ID, SIGUSR1, 8, waiter_tid);
	timer_t c = make(SIGEV_THREAD, 0, 9, 0);

	arm(a, 5, 5);
	arm(b, 3, 3);
	arm(c, 20, 0);
	while (ticks < 3)
		sigsuspend(&old);
	sem_wait(&fired);
	pthread_join(t, &got);

	struct itimerspec left;

	arm(a, 0, 0);
	timer_gettime(a, &left);
	int over = timer_getoverrun(c);

	if (timer_delete(a) || timer_delete(b) || timer_delete(c))
		perror("timer_delete");
	printf("ticks %s, waiter %ld, callback ran, disarmed %s, "
	       "overrun %s\n",
	       ticks >= 3 ? "3+" : "missing", (long)got,
	       left.it_value.tv_sec == 0 && left.it_value.tv_nsec == 0 ? "yes"
									: "no",
	       over >= 0 ? "ok" : "error");
	return 0;
}
