/*
 * Correct: a periodic timerfd is armed and then closed, which releases
 * it (and its timer) in the kernel.  Two threads then take turns on a
 * mutex.  argv[1]: "none" arms no timerfd, "close" closes it, "dup" keeps
 * a dup of it open (still armed: it is read at the end).  A closed
 * timerfd must add no choice: "close" explores exactly the runs "none"
 * does (tests/real: timerfd_closed_is_disarmed).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int turns;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&m);
		turns++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "close";
	int keep = -1;
	pthread_t t;

	if (strcmp(mode, "none")) {
		int fd = timerfd_create(CLOCK_MONOTONIC, 0);
		struct itimerspec its = { { 0, 1000000 }, { 0, 1000000 } };

		timerfd_settime(fd, 0, &its, NULL);
		if (!strcmp(mode, "dup"))
			keep = dup(fd);
		close(fd);
	}
	pthread_create(&t, NULL, worker, NULL);
	worker(NULL);
	pthread_join(t, NULL);
	if (keep >= 0) {
		uint64_t n = 0;

		if (read(keep, &n, sizeof(n)) != sizeof(n) || !n)
			return 1;
	}
	printf("turns %d, %s\n", turns, mode);
	return 0;
}
