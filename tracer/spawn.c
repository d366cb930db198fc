/*
 * Starting the program under ptrace: a child that pins itself, turns off
 * ASLR, traps rdtsc, installs the seccomp filter that makes only the
 * interesting syscalls stop, and execs the program.
 *
 * Every started process is registered so that tracer_kill_all() (atexit,
 * SIGINT/SIGTERM) can end it; PTRACE_O_EXITKILL covers a crash of ptloom.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "session_int.h"

static const int traced_syscalls[] = {
	SYS_futex, SYS_clone, SYS_clone3, SYS_exit, SYS_exit_group,
	SYS_sched_yield, SYS_nanosleep, SYS_clock_nanosleep, SYS_read,
	SYS_write, SYS_readv, SYS_writev, SYS_recvfrom, SYS_recvmsg,
	SYS_sendto, SYS_sendmsg, SYS_accept, SYS_accept4, SYS_connect,
	SYS_poll, SYS_ppoll, SYS_select, SYS_pselect6, SYS_epoll_wait,
	SYS_epoll_pwait, SYS_epoll_pwait2, SYS_wait4, SYS_waitid, SYS_kill,
	SYS_tgkill, SYS_tkill, SYS_clock_gettime, SYS_gettimeofday, SYS_time,
	SYS_getrandom, SYS_set_tid_address, SYS_futex_waitv,
	SYS_clock_getres, PTLOOM_SYSCALL_NR,
};

#define NTRACED (sizeof(traced_syscalls) / sizeof(traced_syscalls[0]))

static int install_filter(void)
{
	struct sock_filter f[4 + NTRACED + 2];
	int k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < NTRACED; i++) {
		/* on a match, jump to the RET_TRACE at the end */
		f[k] = (struct sock_filter)BPF_JUMP(
			BPF_JMP | BPF_JEQ | BPF_K, (unsigned)traced_syscalls[i],
			(unsigned char)(NTRACED - i), 0);
		k++;
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_TRACE);
	struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void child(const struct session_config *cfg, int outfd)
{
	int devnull = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (devnull >= 0)
		dup2(devnull, 0);
	if (!cfg->pass_output && outfd >= 0) {
		dup2(outfd, 1);
		dup2(outfd, 2);
	}
	if (cfg->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cfg->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	personality(ADDR_NO_RANDOMIZE);
	prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
		_exit(126);
	raise(SIGSTOP);
	if (install_filter())
		_exit(126);
	execve(cfg->argv[0], cfg->argv, cfg->envp);
	_exit(127);
}

int spawn_program(const struct session_config *cfg, int outfd, pid_t *out)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		child(cfg, outfd);
	spawn_register(pid);
	if (waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st)) {
		spawn_unregister(pid);
		return -ECHILD;
	}
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACESECCOMP |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC;

	if (ptrace(PTRACE_SETOPTIONS, pid, 0, opts) < 0) {
		int e = -errno;

		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		spawn_unregister(pid);
		return e;
	}
	ptrace(PTRACE_CONT, pid, 0, 0);
	*out = pid;
	return 0;
}

/* The processes alive now, for tracer_kill_all(). */
static volatile pid_t live[64];

void spawn_register(pid_t pid)
{
	for (int i = 0; i < 64; i++)
		if (!live[i]) {
			live[i] = pid;
			return;
		}
}

void spawn_unregister(pid_t pid)
{
	for (int i = 0; i < 64; i++)
		if (live[i] == pid)
			live[i] = 0;
}

void tracer_kill_all(void)
{
	for (int i = 0; i < 64; i++)
		if (live[i] > 0)
			kill(live[i], SIGKILL);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *tracer_find_program(const char *name)
{
	char buf[PATH_MAX];
	struct stat sb;

	if (!name || !*name) {
		errno = ENOENT;
		return NULL;
	}
	if (strchr(name, '/')) {
		if (stat(name, &sb) < 0)
			return NULL;
		if (!S_ISREG(sb.st_mode) || access(name, X_OK)) {
			errno = EACCES;
			return NULL;
		}
		return realpath(name, NULL);
	}
	const char *path = getenv("PATH");

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n,
			 n ? path : ".", name);
		if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    !access(buf, X_OK))
			return realpath(buf, NULL);
		path += n + (c != NULL);
	}
	errno = ENOENT;
	return NULL;
}
