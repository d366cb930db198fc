/*
 * clone() with CLONE_VM and SIGCHLD, no CLONE_THREAD: a child process
 * that shares its parent's whole memory.  Both add to one counter with a
 * plain load and store, so an update can be lost (the parent asserts 4).
 * ptloom schedules such a child as a process of its own and does not
 * interleave its accesses with its parent's: never a PASS.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static volatile int counter;

static void add_twice(void)
{
	for (int i = 0; i < 2; i++) {
		int seen = counter;

		counter = seen + 1;
	}
}

static int child(void *arg)
{
	(void)arg;
	add_twice();
	return 0;
}

int main(void)
{
	char *stack = malloc(1 << 16);

	if (!stack)
		return 2;
	pid_t pid = clone(child, stack + (1 << 16), CLONE_VM | SIGCHLD, NULL);

	if (pid < 0)
		return 2;
	add_twice();
	waitpid(pid, NULL, 0);
	printf("counter %d\n", counter);
	assert(counter == 4);
	return 0;
}
