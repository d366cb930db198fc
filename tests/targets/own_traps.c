/*
 * The program's own SIGTRAPs are the program's: a thread and main each
 * execute an int3, main also raises SIGTRAP, and a handler counts them in
 * a thread-local counter (main asserts 2 for itself and 1 for the
 * worker).  ptloom plants int3s of its own and single-steps, and must
 * tell those traps from these; its fork checkpoint is taken inside
 * pthread_create, where every signal is blocked.  -DUNCAUGHT: no handler,
 * so the first int3 kills the process (a crash, SIGTRAP).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local volatile sig_atomic_t traps;
static int count;

#ifndef UNCAUGHT
static void on_trap(int sig)
{
	(void)sig;
	traps++;
}
#endif

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&lock);
		count++;
		pthread_mutex_unlock(&lock);
	}
	__asm__ volatile("int3");
	return (void *)(intptr_t)traps;
}

int main(void)
{
	pthread_t t;
	void *wtraps;

#ifndef UNCAUGHT
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
#endif
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&lock);
		count++;
		pthread_mutex_unlock(&lock);
	}
	__asm__ volatile("int3");
	raise(SIGTRAP);
	pthread_join(t, &wtraps);
	printf("count %d, traps %d and %d\n", count, (int)traps,
	       (int)(intptr_t)wtraps);
	assert(count == 6 && traps == 2 && (intptr_t)wtraps == 1);
	return 0;
}
