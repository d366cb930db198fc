/*
 * CPU-time timers have no virtual equivalent: `itimer_prof arm` arms
 * ITIMER_PROF (ptloom says `unsupported:`, never runs it on the real
 * clock); `itimer_prof query` only reads and disarms ITIMER_VIRTUAL and
 * ITIMER_PROF, which is answered (both are disarmed).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t profs;

static void on_prof(int sig)
{
	(void)sig;
	profs++;
}

static volatile unsigned long sink;

static void *worker(void *arg)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i;
	return arg;
}

int main(int argc, char **argv)
{
	struct itimerval v = { { 0, 1000 }, { 0, 1000 } }, z = { 0 }, g;
	pthread_t t;

	signal(SIGPROF, on_prof);
	if (argc > 1 && !strcmp(argv[1], "arm"))
		setitimer(ITIMER_PROF, &v, NULL);
	else
		setitimer(ITIMER_VIRTUAL, &z, NULL);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	getitimer(ITIMER_PROF, &g);
	printf("prof timer %s\n", g.it_value.tv_sec || g.it_value.tv_usec
					  ? "armed"
					  : "disarmed");
	return 0;
}
