/*
 * Correct: the main thread waits (poll, read, sem_wait or epoll_wait: the
 * first argument) for what a SIGCHLD handler does when the forked child
 * exits, as libuv's and ctest's child handling does; with a second
 * argument, another thread is blocked on a mutex all along, so the signal
 * may reach either thread.
 */
#define _DEFAULT_SOURCE /* SA_RESTART with -std=c17 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

static int sp[2];
static sem_t sem;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void on_chld(int sig)
{
	int e = errno;
	char c = (char)sig;

	if (write(sp[1], &c, 1) != 1)
		_exit(5);
	sem_post(&sem);
	errno = e;
}

static void *blocked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static int wait_for_handler(const char *mode)
{
	char c;
	int n;

	if (!strcmp(mode, "read")) {
		while ((n = (int)read(sp[0], &c, 1)) < 0 && errno == EINTR)
			;
		return n == 1;
	}
	if (!strcmp(mode, "sem")) {
		while (sem_wait(&sem) && errno == EINTR)
			;
		return 1;
	}
	if (!strcmp(mode, "epoll")) {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0);

		epoll_ctl(ep, EPOLL_CTL_ADD, sp[0], &ev);
		while ((n = epoll_wait(ep, &out, 1, -1)) < 0 && errno == EINTR)
			;
		return n == 1;
	}
	struct pollfd p = { .fd = sp[0], .events = POLLIN };

	while ((n = poll(&p, 1, -1)) < 0 && errno == EINTR)
		;
	return n == 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "poll";
	struct sigaction sa = { .sa_handler = on_chld };
	int status, threaded = argc > 2;
	pthread_t th;
	pid_t pid;

	if (pipe(sp) || sem_init(&sem, 0, 0))
		return 2;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	if (threaded) {
		pthread_mutex_lock(&m);
		pthread_create(&th, NULL, blocked, NULL);
	}
	pid = fork();
	if (pid == 0)
		_exit(7);
	if (!wait_for_handler(mode))
		return 3;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 7)
		return 4;
	if (threaded) {
		pthread_mutex_unlock(&m);
		pthread_join(th, NULL);
	}
	printf("%s: child reaped\n", mode);
	return 0;
}
