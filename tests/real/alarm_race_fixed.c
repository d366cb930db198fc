/*
 * Correct twin of tests/real/alarm_race.c: the handler only records that
 * the alarm rang (async-signal-safe); the counters are read after the
 * join, where they are consistent.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long items, bytes;
static volatile sig_atomic_t rang;

static void on_alarm(int sig)
{
	(void)sig;
	rang = 1;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++) {
		items++;
		usleep(1000); /* the item's I/O */
		bytes += 512;
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_alarm,
				.sa_flags = SA_RESTART };
	pthread_t t;

	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	alarm(0);
	if (bytes != 512 * items)
		abort();
	printf("items %ld bytes %ld\n", items, bytes);
	return 0;
}
