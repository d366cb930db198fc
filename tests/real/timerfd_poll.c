/*
 * Correct: timerfd and signalfd readiness in poll, epoll and select.
 *   T1 polls a periodic timerfd and reads it until three expirations,
 *      then sends SIGUSR1 to the process;
 *   T2 waits in epoll_wait on a one-shot timerfd and a signalfd for
 *      SIGUSR2, which main sends it with pthread_kill;
 *   main waits in select on a signalfd for SIGUSR1.
 * Both signals are blocked in every thread, so only the signalfds see
 * them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

static int timer_fd(long first_ms, long every_ms)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec its = {
		{ 0, every_ms * 1000000 },
		{ 0, first_ms * 1000000 },
	};

	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL)) {
		perror("timerfd");
		exit(2);
	}
	return fd;
}

static int signal_fd(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	int fd = signalfd(-1, &set, SFD_CLOEXEC);

	if (fd < 0) {
		perror("signalfd");
		exit(2);
	}
	return fd;
}

static void *poller(void *arg)
{
	int fd = timer_fd(2, 2);
	uint64_t total = 0, n;

	(void)arg;
	while (total < 3) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, -1) != 1 || !(p.revents & POLLIN))
			return "poll failed";
		if (read(fd, &n, 8) != 8)
			return "read failed";
		total += n;
	}
	kill(getpid(), SIGUSR1);
	return "poll ticks ok";
}

static void *epoller(void *arg)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int tfd = timer_fd(7, 0), sfd = signal_fd(SIGUSR2);
	struct epoll_event ev = { .events = EPOLLIN };
	int seen = 0;

	(void)arg;
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	while (seen != 3) {
		struct epoll_event out[2];
		int k = epoll_wait(ep, out, 2, -1);

		for (int i = 0; i < k; i++) {
			if (out[i].data.fd == tfd) {
				uint64_t n;

				if (read(tfd, &n, 8) == 8)
					seen |= 1;
			} else {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
				    si.ssi_signo == SIGUSR2)
					seen |= 2;
			}
		}
		if (k < 0)
			return "epoll failed";
	}
	return "epoll timer and signal ok";
}

int main(void)
{
	sigset_t block;
	pthread_t a, b;
	void *ra, *rb;

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	int sfd = signal_fd(SIGUSR1);

	pthread_create(&a, NULL, poller, NULL);
	pthread_create(&b, NULL, epoller, NULL);
	pthread_kill(b, SIGUSR2);

	fd_set rd;

	FD_ZERO(&rd);
	FD_SET(sfd, &rd);
	const char *sel = "select failed";

	if (select(sfd + 1, &rd, NULL, NULL, NULL) == 1 &&
	    FD_ISSET(sfd, &rd)) {
		struct signalfd_siginfo si;

		if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo == SIGUSR1)
			sel = "select signal ok";
	}
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	printf("%s, %s, %s\n", (char *)ra, (char *)rb, sel);
	return 0;
}
