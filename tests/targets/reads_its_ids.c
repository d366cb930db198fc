/*
 * A program whose run depends on its ids, as a real one may (a pid in a
 * file name or a log line, a thread id hashed into a table): the main
 * thread, each of two threads and a forked child lock one of 37 mutexes,
 * the one their id picks, as many times as their id says (two moduli,
 * so that ids a whole number of 31s apart, which the kernel's ids of a
 * replay often are, still differ), and the two threads add to a counter
 * without the lock.  It always ends with exit status 1 (a failing test:
 * every run saves its schedule).  A replay that gave them other ids would
 * make other scheduling points and diverge.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCKS 37
static pthread_mutex_t m[LOCKS];
static volatile int counter;

/* id % mod + 1 times, the mutex id picks */
static void lock_times(long id, long mod)
{
	pthread_mutex_t *l = &m[id % LOCKS];

	for (long i = 0; i < id % mod + 1; i++) {
		pthread_mutex_lock(l);
		pthread_mutex_unlock(l);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	lock_times(syscall(SYS_gettid), 31);
	int v = counter;

	sched_yield();
	counter = v + 1;
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	int st;

	for (int i = 0; i < LOCKS; i++)
		pthread_mutex_init(&m[i], NULL);
	lock_times(getpid(), 97);
	pid_t c = fork();

	if (c == 0) {
		lock_times(getpid(), 89);
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
