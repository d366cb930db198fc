/*
 * A program whose run depends on its ids, as a real one may (a pid in a
 * file name or a log line, a thread id hashed into a table): the main
 * thread, each of two threads and a forked child lock a mutex as many
 * times as their id says, and the two threads add to a counter without
 * the lock.  It always ends with exit status 1 (a failing test: every run
 * saves its schedule).  A replay that gave them other ids would make
 * other scheduling points and diverge.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int counter;

static void lock_times(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	lock_times(syscall(SYS_gettid) % 31 + 1);
	int v = counter;

	sched_yield();
	counter = v + 1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	int st;

	lock_times(getpid() % 97 + 1);
	pid_t c = fork();

	if (c == 0) {
		lock_times(getpid() % 89 + 1);
		_exit(0);
	}
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	waitpid(c, &st, 0);
	printf("counter %d\n", counter);
	return 1;
}
