/*
 * The machine's limits for what ptloom does at every point and every run,
 * measured the way ptloom does them (bench/speed.sh prints ptloom's own
 * figures as fractions of these):
 *
 *   seccomp   a traced syscall: the RET_TRACE stop, GETREGS, CONT
 *   int3      a breakpoint hit whose instruction is emulated (no step)
 *   fork      a new process from a stopped single-threaded tracee, by an
 *             injected clone(CLONE_PARENT|SIGCHLD), reaped after it exits
 *   exec      fork + exec + wait of /bin/true under ptrace
 *   futex     one hand-off between two threads of one process on one CPU
 *             (a FUTEX_WAKE of the other, then a FUTEX_WAIT until it hands
 *             back): what a point costs when threads hand over to one
 *             another in-process, without a tracer
 *
 * Both processes pinned to one CPU.  Prints "name us" lines.  Not a test.
 *
 * `limits pair`: seccomp, fork and exec measured by two copies at once,
 * each on its own CPU (the first two the process may use), as `-j 2`
 * workers run; prints "seccomp2", "fork2" and "exec2", the mean of the
 * two copies.  A machine whose CPUs do not scale for these (a hypervisor
 * that serialises page-table work: fork and exec here) has a `-j 2`
 * floor above half the serial one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 20000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void pin(void)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(sched_getcpu(), &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void trap_getppid(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, f };

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p);
}

/* a child that loops on getppid (seccomp) or on an int3 (bp) */
static pid_t child(int mode)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	ptrace(PTRACE_TRACEME, 0, 0, 0);
	raise(SIGSTOP);
	if (mode == 0) {
		trap_getppid();
		for (;;)
			syscall(SYS_getppid);
	}
	for (;;)
		__asm__ volatile("int3\n\tnop");
}

static double seccomp_stop(void)
{
	pid_t c = child(0);
	int st;
	struct user_regs_struct r;

	waitpid(c, &st, 0);
	ptrace(PTRACE_SETOPTIONS, c, 0,
	       PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL);
	ptrace(PTRACE_CONT, c, 0, 0);
	waitpid(c, &st, 0);
	double t0 = now();

	for (int i = 0; i < N; i++) {
		ptrace(PTRACE_GETREGS, c, 0, &r);
		ptrace(PTRACE_CONT, c, 0, 0);
		waitpid(c, &st, 0);
	}
	double us = (now() - t0) / N;

	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	return us;
}

static double int3_hit(void)
{
	pid_t c = child(1);
	int st;
	struct user_regs_struct r;

	waitpid(c, &st, 0);
	ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_EXITKILL);
	ptrace(PTRACE_CONT, c, 0, 0);
	waitpid(c, &st, 0);
	double t0 = now();

	for (int i = 0; i < N; i++) {
		/* the emulated instruction: the nop after the int3 */
		ptrace(PTRACE_GETREGS, c, 0, &r);
		r.rip += 1;
		ptrace(PTRACE_SETREGS, c, 0, &r);
		ptrace(PTRACE_CONT, c, 0, 0);
		waitpid(c, &st, 0);
	}
	double us = (now() - t0) / N;

	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	return us;
}

static double fork_stopped(void)
{
	pid_t c = child(0);
	int st, n = 2000;
	struct user_regs_struct r, saved;
	unsigned long msg;

	waitpid(c, &st, 0);
	ptrace(PTRACE_SETOPTIONS, c, 0,
	       PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL);
	ptrace(PTRACE_CONT, c, 0, 0);
	waitpid(c, &st, 0); /* at getppid's seccomp stop */
	ptrace(PTRACE_GETREGS, c, 0, &saved);
	double t0 = now();

	for (int i = 0; i < n; i++) {
		r = saved;
		r.orig_rax = SYS_clone;
		r.rdi = CLONE_PARENT | SIGCHLD;
		r.rsi = r.rdx = r.r10 = r.r8 = 0;
		ptrace(PTRACE_SETREGS, c, 0, &r);
		ptrace(PTRACE_SYSCALL, c, 0, 0);
		waitpid(c, &st, __WALL); /* fork event */
		ptrace(PTRACE_GETEVENTMSG, c, 0, &msg);
		ptrace(PTRACE_SYSCALL, c, 0, 0);
		waitpid(c, &st, __WALL); /* syscall exit */
		r = saved;
		r.rip -= 2;
		r.rax = saved.orig_rax;
		ptrace(PTRACE_SETREGS, c, 0, &r);
		ptrace(PTRACE_CONT, c, 0, 0);
		waitpid(c, &st, __WALL); /* back at the seccomp stop */
		pid_t k = (pid_t)msg;

		waitpid(k, &st, __WALL);
		kill(k, SIGKILL);
		waitpid(k, &st, __WALL);
	}
	double us = (now() - t0) / n;

	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	return us;
}

static double exec_traced(void)
{
	int n = 500, st;
	double t0 = now();

	for (int i = 0; i < n; i++) {
		pid_t c = fork();

		if (!c) {
			ptrace(PTRACE_TRACEME, 0, 0, 0);
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		waitpid(c, &st, 0); /* exec stop */
		ptrace(PTRACE_CONT, c, 0, 0);
		waitpid(c, &st, 0);
	}
	return (now() - t0) / n;
}

/* the futex hand-off: turn is 0 (main's) or 1 (the other's) */
static volatile int turn;

static void futex_wait(volatile int *w, int val)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(volatile int *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *other(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		while (turn != 1)
			futex_wait(&turn, 0);
		turn = 0;
		futex_wake(&turn);
	}
	return NULL;
}

static double futex_handoff(void)
{
	long n = 4 * N;
	pthread_t t;

	turn = 0;
	if (pthread_create(&t, NULL, other, (void *)n))
		return 0;
	double t0 = now();

	for (long i = 0; i < n; i++) {
		turn = 1;
		futex_wake(&turn);
		while (turn != 0)
			futex_wait(&turn, 1);
	}
	double us = (now() - t0) / (2.0 * (double)n);

	pthread_join(t, NULL);
	return us;
}

/* two copies at once, on the first two CPUs allowed; 1: fewer CPUs */
static int pair(void)
{
	cpu_set_t s, one;
	int cpus[2], n = 0, fd[2], st;
	double mine[3], theirs[3] = { 0, 0, 0 };

	if (sched_getaffinity(0, sizeof(s), &s))
		return 1;
	for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &s))
			cpus[n++] = i;
	if (n < 2 || pipe(fd))
		return 1;
	pid_t other = fork();

	if (other < 0)
		return 1;
	CPU_ZERO(&one);
	CPU_SET(cpus[other == 0], &one);
	sched_setaffinity(0, sizeof(one), &one);
	mine[0] = seccomp_stop();
	mine[1] = fork_stopped();
	mine[2] = exec_traced();
	if (other == 0) {
		(void)!write(fd[1], mine, sizeof(mine));
		_exit(0);
	}
	if (read(fd[0], theirs, sizeof(theirs)) != sizeof(theirs))
		return 1;
	waitpid(other, &st, 0);
	printf("seccomp2 %.2f\n", (mine[0] + theirs[0]) / 2);
	printf("fork2 %.2f\n", (mine[1] + theirs[1]) / 2);
	printf("exec2 %.2f\n", (mine[2] + theirs[2]) / 2);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "pair"))
		return pair();
	pin();
	printf("seccomp %.2f\n", seccomp_stop());
	printf("int3 %.2f\n", int3_hit());
	printf("fork %.2f\n", fork_stopped());
	printf("exec %.2f\n", exec_traced());
	printf("futex %.2f\n", futex_handoff());
	return 0;
}
