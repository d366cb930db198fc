/*
 * Correct: a thread reads a periodic timerfd three times while another
 * waits for it in pthread_join.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <unistd.h>

static uint64_t total;

static void *reader(void *arg)
{
	int fd = *(int *)arg;

	for (int i = 0; i < 3; i++) {
		uint64_t n;

		if (read(fd, &n, sizeof(n)) != sizeof(n))
			return NULL;
		total += n;
	}
	return NULL;
}

int main(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
	pthread_t t;

	timerfd_settime(fd, 0, &its, NULL);
	pthread_create(&t, NULL, reader, &fd);
	pthread_join(t, NULL);
	printf("ticks %s\n", total >= 3 ? "ok" : "missing");
	return 0;
}
