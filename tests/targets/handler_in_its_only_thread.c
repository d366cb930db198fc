/*
 * One thread and the handler of its own timer's signal: the handler runs
 * between any two instructions of the thread it interrupts.
 *   itimer   buggy: a setitimer every millisecond; its SIGALRM handler
 *            adds to the counter the loop adds to (load, add, store):
 *            the handler's increment between the loop's load and store
 *            is lost, and the count no longer adds up (abort)
 *   posix    buggy: the same with timer_create's SIGUSR1, armed once
 *   blocked  correct: the loop blocks SIGALRM around its increment
 *   flag     correct: the handler sets a volatile sig_atomic_t the loop
 *            reads, and counts nothing the loop counts
 *   sigchld  buggy: main counts the children it forks up, its SIGCHLD
 *            handler reaps them and counts them down: a child's end
 *            between main's load and store leaves the count at 1.  Not
 *            found: a SIGCHLD handler is not followed in a process of one
 *            thread (docs/INTERNALS.md §12: every runner has one)
 *   sigchld_blocked  correct: main blocks SIGCHLD around its fork and
 *            its count
 *   kill     buggy: a child of one thread counts in its loop and in its
 *            SIGUSR1 handler, which its parent sends it twice: the child
 *            exits 1 when an update was lost, and the parent aborts
 *   kill_flag  correct: the child's handler only sets a flag
 * Before, a process of one thread had no breakpoints and was not
 * observed: the buggy modes passed complete to bound 2.
 */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long counter, ticks, running, reaped;
static volatile sig_atomic_t flag;
static const char *mode = "itimer";

static void on_tick(int sig)
{
	(void)sig;
	if (!strcmp(mode, "flag")) {
		flag = 1;
		return;
	}
	counter++;
	ticks++;
}

static void on_child(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
		running--;
		reaped++;
	}
}

static int children(bool block)
{
	struct sigaction sa = { .sa_handler = on_child,
				.sa_flags = SA_RESTART };
	sigset_t set;

	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (int i = 0; i < 2; i++) {
		if (block)
			sigprocmask(SIG_BLOCK, &set, NULL);
		if (fork() == 0)
			_exit(0);
		running++;
		if (block)
			sigprocmask(SIG_UNBLOCK, &set, NULL);
	}
	while (reaped < 2)
		usleep(1000);
	printf("running %ld\n", running);
	if (running)
		abort();
	return 0;
}

/* kill and kill_flag: the parent's side */
static int signalled_child(void)
{
	int fd[2], st;
	char c;
	pid_t pid;

	if (pipe(fd))
		return 2;
	pid = fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_tick,
					.sa_flags = SA_RESTART };

		sigaction(SIGUSR1, &sa, NULL);
		if (write(fd[1], "r", 1) != 1)
			_exit(2);
		for (int i = 0; i < 3; i++) {
			counter++;
			usleep(1000);
		}
		usleep(5000);
		_exit(counter == 3 + ticks ? 0 : 1);
	}
	if (read(fd[0], &c, 1) != 1)
		return 2;
	for (int i = 0; i < 2; i++) {
		kill(pid, SIGUSR1);
		usleep(1000);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		abort();
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_tick, .sa_flags = SA_RESTART };
	int sig = SIGALRM;
	sigset_t set;
	timer_t tm;

	if (argc > 1)
		mode = argv[1];
	if (!strncmp(mode, "sigchld", 7))
		return children(!strcmp(mode, "sigchld_blocked"));
	if (!strcmp(mode, "kill") || !strcmp(mode, "kill_flag")) {
		if (!strcmp(mode, "kill_flag"))
			mode = "flag";
		return signalled_child();
	}
	if (!strcmp(mode, "posix"))
		sig = SIGUSR1;
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (!strcmp(mode, "posix")) {
		struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
				       .sigev_signo = SIGUSR1 };
		struct itimerspec its = { .it_value = { 0, 1000000 } };

		if (timer_create(CLOCK_MONOTONIC, &ev, &tm))
			return 2;
		timer_settime(tm, 0, &its, NULL);
	} else {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (int i = 0; i < 3; i++) {
		if (!strcmp(mode, "blocked"))
			sigprocmask(SIG_BLOCK, &set, NULL);
		counter++;
		if (!strcmp(mode, "blocked"))
			sigprocmask(SIG_UNBLOCK, &set, NULL);
		usleep(2000);
	}
	if (strcmp(mode, "posix")) {
		struct itimerval z = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &z, NULL);
	}
	if (!strcmp(mode, "flag")) {
		printf("flag %d, counter %ld\n", (int)flag, counter);
		return counter == 3 ? 0 : 1;
	}
	printf("counter %ld, ticks %ld\n", counter, ticks);
	if (counter != 3 + ticks)
		abort();
	return 0;
}
