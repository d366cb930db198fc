/*
 * A pool sized by the CPUs the program may use (sched_getaffinity, as
 * libgomp, oneTBB, Go, Rust and nproc size theirs): ptloom pins the
 * program to one CPU, but must tell it the CPUs a native run has, or the
 * pool has one worker and nothing concurrent is explored.  Prints what a
 * native run prints: the count in main and in a worker, and after the
 * program pins itself to one CPU, the kernel's answer (1).
 * `cpus racy`: the workers add to a counter without the lock (found only
 * with two workers or more).
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#define MAXW 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;
static int racy, in_worker;

static void *work(void *arg)
{
	cpu_set_t set;

	if (arg == NULL &&
	    !pthread_getaffinity_np(pthread_self(), sizeof(set), &set))
		in_worker = CPU_COUNT(&set);
	if (racy) {
		long v = total;

		total = v + 1;
	} else {
		pthread_mutex_lock(&lock);
		total++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	cpu_set_t set, one;
	pthread_t th[MAXW];
	int n, first = -1;

	racy = argc > 1 && !strcmp(argv[1], "racy");
	if (sched_getaffinity(0, sizeof(set), &set))
		return 2;
	n = CPU_COUNT(&set);
	if (n > MAXW)
		n = MAXW;
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, work, i ? &th[i] : NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	assert(total == n);
	for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
		if (CPU_ISSET(i, &set))
			first = i;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	sched_setaffinity(0, sizeof(one), &one);
	sched_getaffinity(0, sizeof(set), &set);
	printf("cpus %d, in a worker %d, pinned %d\n", n, in_worker,
	       CPU_COUNT(&set));
	return 0;
}
