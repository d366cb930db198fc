/*
 * Correct: a timerfd is its open file, not its descriptor number.  An
 * armed timerfd is closed and its number reused by a new one that is
 * never armed (a non-blocking read: EAGAIN); then a fork child reads
 * its parent's armed timerfd.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg)
{
	return arg;
}

int main(void)
{
	struct itimerspec its = { { 0, 0 }, { 0, 5000000 } };
	pthread_t t;
	uint64_t n = 0;
	int st;

	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);

	timerfd_settime(fd, 0, &its, NULL);
	close(fd);
	int fd2 = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	usleep(20000);
	int r = (int)read(fd2, &n, 8);

	printf("number reused %s, unarmed read %s\n", fd2 == fd ? "yes" : "no",
	       r < 0 && errno == EAGAIN ? "EAGAIN" : "returned");
	int fd3 = timerfd_create(CLOCK_MONOTONIC, 0);

	timerfd_settime(fd3, 0, &its, NULL);
	pid_t c = fork();

	if (c == 0)
		_exit(read(fd3, &n, 8) == 8 && n >= 1 ? 0 : 3);
	waitpid(c, &st, 0);
	printf("the child read it: %s\n",
	       WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no");
	return 0;
}
