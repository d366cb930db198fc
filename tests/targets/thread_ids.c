/*
 * Threads that append "index thread-id" to the file argv[1]: the ids a
 * run's threads get (tests/integration: issue10 thread ids).  With "raw"
 * as argv[2], the thread is made by a bare clone syscall whose child
 * takes its stack pointer from %rsi, as Go's runtime does: a supervisor
 * that changed the clone's registers must have put them back.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *path;

static void note(long i)
{
	char b[64];
	int n = snprintf(b, sizeof(b), "%ld %ld\n", i, (long)syscall(SYS_gettid));
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);

	if (fd < 0 || write(fd, b, (size_t)n) != n)
		abort();
	close(fd);
}

static void *worker(void *a)
{
	note((long)a);
	return NULL;
}

static volatile int child_tid = 1;

/* the raw thread's code: on the stack the child set from %rsi */
static void raw_body(void)
{
	note(9);
	/* exit the thread only (CLONE_CHILD_CLEARTID wakes the parent) */
	for (;;)
		syscall(SYS_exit, 0);
}

static long raw_clone(void *stack_top)
{
	long r;
	register long r10 __asm__("r10") = (long)&child_tid;
	register long r8 __asm__("r8") = 0;
	register void (*r12)(void) __asm__("r12") = raw_body;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "mov %%rsi, %%rsp\n\t"
			 "call *%%r12\n\t"
			 "ud2\n"
			 "1:"
			 : "=a"(r)
			 : "0"((long)SYS_clone),
			   "D"((long)(CLONE_VM | CLONE_FS | CLONE_FILES |
				      CLONE_SIGHAND | CLONE_THREAD |
				      CLONE_SYSVSEM | CLONE_CHILD_CLEARTID)),
			   "S"(stack_top), "d"(0L), "r"(r10), "r"(r8),
			   "r"(r12)
			 : "rcx", "r11", "memory");
	return r;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	if (argc < 2)
		return 2;
	path = argv[1];
	if (argc > 2 && !strcmp(argv[2], "raw")) {
		char *stack = malloc(1 << 16);

		if (!stack || raw_clone(stack + (1 << 16) - 64) < 0)
			return 1;
		while (child_tid)
			syscall(SYS_futex, &child_tid, FUTEX_WAIT, child_tid,
				NULL, NULL, 0);
		return 0;
	}
	for (long i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
