/*
 * main waits on an atomic flag that a worker sets after a 1 ms sleep:
 * argv[1] "spin" spins on the load alone, "yield" calls sched_yield()
 * between loads; "nosleep" as spin, with no sleep.  The worker stores the
 * data, then the flag (release), and main reads the data (acquire).
 * -DEARLY: the worker sets the flag first and the data after it, so main
 * may read the data before it is written (an assertion), and only after
 * the worker has ended can main read it in most runs: the race is with a
 * thread that ended before its join.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static atomic_int flag;
static int data;
static int sleeps = 1;

static void *worker(void *arg)
{
	(void)arg;
	if (sleeps)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
#ifdef EARLY
	atomic_store_explicit(&flag, 1, memory_order_release);
	data = 42;
#else
	data = 42;
	atomic_store_explicit(&flag, 1, memory_order_release);
#endif
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	int yields = strcmp(mode, "yield") == 0;
	pthread_t t;

	sleeps = strcmp(mode, "nosleep") != 0;
	pthread_create(&t, NULL, worker, NULL);
	while (!atomic_load_explicit(&flag, memory_order_acquire))
		if (yields)
			sched_yield();
	assert(data == 42);
	pthread_join(t, NULL);
	printf("data %d\n", data);
	return 0;
}
