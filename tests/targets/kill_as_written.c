/*
 * A signal sent to its own process by an inline kill() that reads its
 * registers back after the call, as compiled code may (the kernel leaves
 * them as they were), while a second thread waits for the handler: which
 * thread takes the signal is ptloom's choice, which it carries out by
 * sending it to that thread with tgkill.  The program's registers must be
 * its own after the call: exit status 2 says they were not.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void handler(int sig)
{
	(void)sig;
	got = 1;
}

static void *waiter(void *arg)
{
	(void)arg;
	while (!got)
		sched_yield();
	return NULL;
}

int main(void)
{
	pthread_t t;
	long ret, rdi, rsi;
	long pid = getpid();

	signal(SIGUSR1, handler);
	pthread_create(&t, NULL, waiter, NULL);
	__asm__ volatile("syscall\n\t"
			 "mov %%rdi, %1\n\t"
			 "mov %%rsi, %2"
			 : "=a"(ret), "=&r"(rdi), "=&r"(rsi)
			 : "a"((long)SYS_kill), "D"(pid), "S"((long)SIGUSR1)
			 : "rcx", "r11", "rdx", "r10", "memory");
	if (ret != 0 || rdi != pid || rsi != SIGUSR1)
		return 2;
	pthread_join(t, NULL);
	return 0;
}
