/*
 * Correct: the parent sleeps 20 ms in a nanosleep that resumes with the
 * time left after a signal (as rsync's msleep does), and its SIGCHLD
 * handler reaps the child that exits meanwhile.  It prints the times it
 * slept, so that a time left that came from the machine's clock (the
 * kernel's, with its timer slack: up to 50 us more than was asked)
 * shows as another output and another trace from one schedule.  With
 * the argument "select" it waits in select(2) instead, which leaves the
 * time left in its timeval (glibc copies pselect6's there).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_chld(int sig)
{
	int e = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = e;
}

/* select's time left, printed as nanosleep's is */
static void select_rest(void)
{
	struct timeval tv = { 0, 20000 };

	while (select(0, NULL, NULL, NULL, &tv) < 0 && errno == EINTR)
		printf("interrupted: %ld.%06ld s left\n", (long)tv.tv_sec,
		       (long)tv.tv_usec);
	/* it timed out: nothing left, as the kernel writes it */
	printf("selected: %ld.%06ld s left\n", (long)tv.tv_sec,
	       (long)tv.tv_usec);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct timespec ts = { 0, 20000000 };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	pid_t pid = fork();

	if (pid < 0)
		return 2;
	if (pid == 0)
		_exit(0);
	if (argc > 1 && !strcmp(argv[1], "select")) {
		select_rest();
		return 0;
	}
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
		printf("interrupted: %ld.%09ld s left\n", (long)ts.tv_sec,
		       ts.tv_nsec);
	}
	puts("slept");
	return 0;
}
