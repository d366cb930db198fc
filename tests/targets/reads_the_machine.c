/*
 * A program whose run depends on what the machine's momentary state
 * answers, as a runtime's may (a pool sized by free memory, a loop that
 * backs off with the load average, a test that prints its CPU time):
 * its main thread locks a mutex as many times as getrusage, times,
 * sysinfo and its waits' rusage say, then two threads lose an update
 * (exit status 1).  Natively these differ from run to run; under ptloom
 * they are the run's.
 *
 * The waits, wait4(-1, ...) and waitid(P_ALL, ...), are inline syscalls
 * that read the pid and id registers back after the call, as compiled
 * code may (the kernel leaves them as they were): a supervisor that names
 * the child it picked in them must put them back (exit status 2 says one
 * did not).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int counter;

static void lock_times(unsigned long n)
{
	for (unsigned long i = 0; i < n % 61 + 1; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
}

static void *worker(void *arg)
{
	struct rusage ru;

	(void)arg;
	getrusage(RUSAGE_THREAD, &ru);
	lock_times((unsigned long)(ru.ru_utime.tv_usec + ru.ru_nvcsw +
				   ru.ru_nivcsw + ru.ru_minflt));
	int v = counter;

	sched_yield();
	counter = v + 1;
	return NULL;
}

static unsigned long figures(const struct rusage *ru)
{
	return (unsigned long)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec +
			       ru->ru_minflt + ru->ru_nvcsw + ru->ru_nivcsw);
}

/* Two children reaped by waits with a rusage; false: a wait's registers
 * were not the program's after the call. */
static int waits(void)
{
	struct rusage ru;
	siginfo_t si;
	int st;
	long ret, after, after2;

	for (int i = 0; i < 2; i++)
		if (fork() == 0) {
			for (volatile int k = 0; k < 100000; k++)
				;
			_exit(0);
		}
	/* wait4(-1, &st, 0, &ru) */
	{
		register long r10 __asm__("r10") = (long)&ru;

		__asm__ volatile("mov $-1, %%rdi\n\t"
				 "syscall\n\t"
				 "mov %%rdi, %1"
				 : "=a"(ret), "=r"(after)
				 : "a"((long)SYS_wait4), "S"(&st), "d"(0L),
				   "r"(r10)
				 : "rdi", "rcx", "r11", "memory");
	}
	if (ret <= 0 || after != -1)
		return 0;
	lock_times(figures(&ru));
	/* waitid(P_ALL, 0, &si, WEXITED, &ru) */
	{
		register long r10 __asm__("r10") = WEXITED;
		register long r8 __asm__("r8") = (long)&ru;

		__asm__ volatile("mov %4, %%rdi\n\t"
				 "xor %%esi, %%esi\n\t"
				 "syscall\n\t"
				 "mov %%rdi, %1\n\t"
				 "mov %%rsi, %2"
				 : "=a"(ret), "=r"(after), "=r"(after2)
				 : "a"((long)SYS_waitid), "i"((long)P_ALL),
				   "d"(&si), "r"(r10), "r"(r8)
				 : "rdi", "rsi", "rcx", "r11", "memory");
	}
	if (ret != 0 || after != P_ALL || after2 != 0)
		return 0;
	lock_times(figures(&ru));
	return 1;
}

int main(void)
{
	struct rusage ru;
	struct sysinfo si;
	struct tms tm;
	pthread_t a, b;

	if (!waits())
		return 2;

	getrusage(RUSAGE_SELF, &ru);
	lock_times(figures(&ru));
	getrusage(RUSAGE_CHILDREN, &ru);
	lock_times(figures(&ru));
	lock_times((unsigned long)times(&tm) + (unsigned long)tm.tms_stime);
	sysinfo(&si);
	lock_times(si.loads[0] + si.freeram / 4096 + (unsigned long)si.uptime +
		   si.procs);
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("counter %d\n", counter);
	return counter == 2 ? 0 : 1;
}
