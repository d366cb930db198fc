/*
 * Correct: a thread sleeps (nanosleep) until a flag is set, another sets
 * it from a handled signal: the sleep returns EINTR early, as the kernel
 * does.  A thread blocked in a pipe read with an
 * SA_RESTART handler keeps reading.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t flag;
static pthread_t sleeper_t, reader_t;
static int fds[2];

static void on_sig(int sig)
{
	(void)sig;
	flag = 1;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!flag) {
		/* a signal before the call makes this a long sleep: still
		 * correct, and virtual under ptloom */
		struct timespec ts = { 100, 0 }, rem;

		if (nanosleep(&ts, &rem) && errno != EINTR)
			return NULL;
	}
	printf("sleeper: flag %d\n", (int)flag);
	return NULL;
}

static void *reader(void *arg)
{
	char c = 0;

	(void)arg;
	ssize_t n = read(fds[0], &c, 1);

	printf("read %zd %c\n", n, c);
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };

	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(fds))
		return 1;
	pthread_create(&sleeper_t, NULL, sleeper, NULL);
	pthread_create(&reader_t, NULL, reader, NULL);
	struct timespec ms = { 0, 20000000 };

	nanosleep(&ms, NULL); /* natively: let both block first */
	pthread_kill(sleeper_t, SIGUSR1);
	pthread_kill(reader_t, SIGUSR1);
	pthread_join(sleeper_t, NULL);
	if (write(fds[1], "x", 1) != 1)
		return 1;
	pthread_join(reader_t, NULL);
	return 0;
}
