/*
 * Correct: main reads a signalfd (blocking read, no poll) for SIGUSR1,
 * sent to it with pthread_kill, and SIGUSR2, sent to the process with
 * kill; both are blocked, so only the signalfd sees them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <unistd.h>

static pthread_t main_thread;

static void *sender(void *arg)
{
	usleep(1000);
	pthread_kill(main_thread, SIGUSR1);
	kill(getpid(), SIGUSR2);
	return arg;
}

int main(void)
{
	sigset_t set;
	pthread_t t;
	int got = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	int fd = signalfd(-1, &set, SFD_CLOEXEC);

	main_thread = pthread_self();
	pthread_create(&t, NULL, sender, NULL);
	for (int i = 0; i < 2; i++) {
		struct signalfd_siginfo si;

		if (read(fd, &si, sizeof(si)) == sizeof(si))
			got |= si.ssi_signo == SIGUSR1 ? 1 : 2;
	}
	pthread_join(t, NULL);
	printf("signalfd read %s\n", got == 3 ? "both" : "not both");
	return got != 3;
}
