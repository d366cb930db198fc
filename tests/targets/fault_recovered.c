/*
 * A program that recovers from its own faults, as a Go program recovers
 * from a nil dereference: a store through a null pointer at an
 * instruction of 11 bytes (race discovery moves it into an access slot,
 * tracer/tramp.c), a SIGSEGV handler that checks the fault's pc is in
 * the function that made it and jumps back out.  Prints what it saw;
 * exits 0, or 3 if a handler saw the fault elsewhere (the slot's
 * address).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static sigjmp_buf jb;
static volatile int inside, outside;
static long counter;

__attribute__((noinline)) static void touch(long *p)
{
	/* movq $42, 8000(%rdi) */
	__asm__ volatile("movq $42, 8000(%0)" : : "r"(p) : "memory");
}

static void on_segv(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	(void)si;
	if (pc >= (uintptr_t)touch && pc < (uintptr_t)touch + 32)
		inside++;
	else
		outside++;
	siglongjmp(jb, 1);
}

static void *worker(void *arg)
{
	for (int i = 0; i < 3; i++)
		counter++; /* the discovery's other thread */
	return arg;
}

int main(void)
{
	struct sigaction sa;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 3; i++) {
		if (!sigsetjmp(jb, 1))
			touch(NULL);
		counter++;
	}
	pthread_join(t, NULL);
	printf("faults seen in the program: %d, outside: %d\n", inside,
	       outside);
	return outside ? 3 : 0;
}
