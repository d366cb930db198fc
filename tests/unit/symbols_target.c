/*
 * The traced program of tests/unit/test_symbols.c, compiled by the test at
 * -O0 and -O2.  It makes its parent its tracer, prints the addresses of its
 * data, then stops where the test expects it:
 *   (no argument)  SIGSTOP raised inside victim_function(), called by main
 *   crash          SIGSEGV from a NULL store in crash_function()
 *   inline         SIGSEGV from a NULL store in store_through(), inlined
 *                  into inline_crash_function() at every -O level
 *   thread         SIGSTOP in main (the test sets PTRACE_O_TRACECLONE), then
 *                  a second thread raises SIGUSR1 inside thread_victim()
 *   pretraced      as with no argument, but the test made itself our tracer
 *                  before the exec
 * The test finds the expected lines by the MARK comments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <unistd.h>

/* keep the functions, their names and their frames at -O2 */
#if defined(__GNUC__) && !defined(__clang__)
#define NOINLINE __attribute__((noinline, noipa))
#else
#define NOINLINE __attribute__((noinline))
#endif

long balance = 100;
long accounts[4];
int *volatile null_pointer;

NOINLINE void victim_function(long n)
{
	balance += n;
	raise(SIGSTOP); /* MARK:victim */
	balance -= n;
}

NOINLINE void crash_function(int *p)
{
	*p = 42; /* MARK:crash */
	balance++;
}

static inline __attribute__((always_inline)) void store_through(int *p)
{
	*p = 7; /* MARK:inline */
}

NOINLINE void inline_crash_function(int *p)
{
	balance++;
	store_through(p);
	balance++;
}

NOINLINE void thread_victim(void)
{
	raise(SIGUSR1); /* MARK:thread */
	balance++;
}

static void *thread_main(void *arg)
{
	thread_victim();
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long *heap = malloc(64);
	pthread_t th;

	/* never outlive a test that died without reaping us */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 2;
	if (strcmp(mode, "pretraced") != 0 &&
	    ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
		return 2;
	printf("%p %p %p\n", (void *)&balance, (void *)&accounts[1],
	       (void *)heap);
	fflush(stdout);

	if (strcmp(mode, "crash") == 0) {
		crash_function(null_pointer);
	} else if (strcmp(mode, "inline") == 0) {
		inline_crash_function(null_pointer);
	} else if (strcmp(mode, "thread") == 0) {
		raise(SIGSTOP);
		pthread_create(&th, NULL, thread_main, NULL);
		pthread_join(th, NULL);
	} else {
		victim_function(argc); /* MARK:call */
	}
	free(heap);
	return 0;
}
