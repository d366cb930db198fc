/*
 * A signal with a handler reaches main while it waits in sem_wait for a
 * worker's post.  sem_wait_signal MODE:
 *   restart    SA_RESTART: the kernel restarts the futex wait, sem_wait
 *              never fails (correct)
 *   norestart  no SA_RESTART: sem_wait may fail with EINTR, which main
 *              reports as a failure (exit 1)
 *   timed      sem_timedwait under SA_RESTART: a timed futex wait is
 *              EINTR after a handler all the same (exit 1)
 *   other      the signal goes to the process while main and a third
 *              thread wait: whichever takes it, main's sem_wait under
 *              SA_RESTART never fails (correct)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sem_t s, idle;
static pthread_t mainth;
static volatile sig_atomic_t hits;
static int to_process;

static void on_usr1(int sig)
{
	(void)sig;
	hits++;
}

static void *poster(void *arg)
{
	(void)arg;
	usleep(1000);
	if (to_process)
		kill(getpid(), SIGUSR1);
	else
		pthread_kill(mainth, SIGUSR1);
	usleep(1000);
	sem_post(&s);
	return NULL;
}

static void *idler(void *arg)
{
	(void)arg;
	while (sem_wait(&idle) != 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "restart";
	struct sigaction sa;
	pthread_t t, u;
	int r;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = strcmp(mode, "norestart") ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	sem_init(&s, 0, 0);
	sem_init(&idle, 0, 0);
	mainth = pthread_self();
	to_process = !strcmp(mode, "other");
	if (to_process)
		pthread_create(&u, NULL, idler, NULL);
	pthread_create(&t, NULL, poster, NULL);
	if (!strcmp(mode, "timed")) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 60;
		r = sem_timedwait(&s, &ts);
	} else {
		r = sem_wait(&s);
	}
	if (r != 0) {
		printf("sem_wait: %s\n", strerror(errno));
		return 1;
	}
	pthread_join(t, NULL);
	if (to_process) {
		sem_post(&idle);
		pthread_join(u, NULL);
	}
	printf("posted, %d handler run%s\n", (int)hits, hits == 1 ? "" : "s");
	return 0;
}
