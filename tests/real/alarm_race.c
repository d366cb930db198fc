/*
 * Buggy: a progress report from a SIGALRM handler reads the worker's two
 * counters while the worker is between its two updates (items is counted
 * before the item's bytes).  Found when the alarm fires while the worker
 * is in its usleep; tests/real/alarm_race_fixed.c is the fixed twin.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long items, bytes; /* bytes == 512 * items */

static void on_alarm(int sig)
{
	static const char msg[] = "progress: torn counters\n";

	(void)sig;
	if (bytes != 512 * items) {
		write(2, msg, sizeof(msg) - 1);
		abort();
	}
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
	printf("items %ld bytes %ld\n", items, bytes);
	return 0;
}
