/*
 * Buggy: the SIGUSR1 handler takes the stats lock, written as if it ran
 * in the main thread, which sends the signal with the lock free.  But a
 * signal sent to the process (kill, sigqueue) may be taken by any thread
 * that does not block it: when the worker takes it while it holds the
 * lock (across its slow "I/O"), the handler waits for the lock its own
 * thread holds, and the program deadlocks.  With FIXED the worker is
 * created with SIGUSR1 blocked, so only main can take it.
 * argv[1] how the signal is sent to the process: "queue" sigqueue,
 * "zero" kill(0, ...) (its process group), "pgrp" kill(-pgrp, ...),
 * "pidfd" pidfd_send_signal; else kill(getpid(), ...).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long stats, reports;

static void on_usr1(int sig)
{
	(void)sig;
	pthread_mutex_lock(&m);
	reports++;
	pthread_mutex_unlock(&m);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&m);
		stats++;
		usleep(100); /* slow work under the lock */
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t set;
	pthread_t t;

	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
#ifdef FIXED
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* the worker inherits it */
#endif
	pthread_create(&t, NULL, worker, NULL);
#ifdef FIXED
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
#endif
	const char *how = argc > 1 ? argv[1] : "kill";

	if (!strcmp(how, "queue")) {
		sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = 7 });
	} else if (!strcmp(how, "zero")) {
		kill(0, SIGUSR1);
	} else if (!strcmp(how, "pgrp")) {
		kill(-getpgrp(), SIGUSR1);
	} else if (!strcmp(how, "pidfd")) {
		int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

		if (fd < 0 || syscall(SYS_pidfd_send_signal, fd, SIGUSR1, NULL, 0))
			perror("pidfd_send_signal");
		close(fd);
	} else {
		kill(getpid(), SIGUSR1); /* ask for a report */
	}
	pthread_join(t, NULL);
	printf("stats %ld reports %ld\n", stats, reports);
	return 0;
}
