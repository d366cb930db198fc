/*
 * What the machine does that ptloom relies on, found out once per ptloom
 * process by a child that tries it.  In a VM the answer is the
 * hypervisor's: on this project's AMD EPYC Firecracker VMs PR_SET_TSC is
 * accepted and rdtsc still runs (tsc.c makes up for it), and the debug
 * registers take a write watchpoint (PTRACE_POKEUSER of DR0 and DR7
 * succeeds, DR7 reads back) that never traps (thread.c then watches by
 * single steps).  PTLOOM_TSC_SITES=1 and PTLOOM_WATCH_STEPS=1 take the
 * other way on any machine (tests).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session_int.h"

static bool forced(const char *name)
{
	const char *e = getenv(name);

	return e && *e && strcmp(e, "0");
}

static int reap(pid_t pid)
{
	int st = 0;

	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
	return st;
}

static int g_traps = -1;

/* rdtsc faults once PR_SET_TSC says PR_TSC_SIGSEGV. */
bool tsc_traps(void)
{
	if (forced("PTLOOM_TSC_SITES"))
		return false;
	if (g_traps >= 0)
		return g_traps;
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		uint32_t lo, hi;

		setrlimit(RLIMIT_CORE, &none);
		signal(SIGSEGV, SIG_DFL);
		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
			_exit(2);
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		(void)lo;
		(void)hi;
		_exit(0);
	}
	if (pid < 0)
		return true; /* as before: the fault's way */
	int st = reap(pid);

	/* (exit 2: no PR_SET_TSC at all, which the sites make up for too) */
	g_traps = WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
	return g_traps;
}

static volatile uint64_t probe_word;

/* A write watchpoint in DR0 (8 bytes, as thread.c sets them) traps. */
bool watch_traps(void)
{
	static int works = -1;

	if (forced("PTLOOM_WATCH_STEPS"))
		return false;
	if (works >= 0)
		return works;
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0 && !raise(SIGSTOP))
			probe_word = 1;
		_exit(0);
	}
	if (pid < 0)
		return true; /* as before */
	int st = reap(pid);

	works = 0;
	if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP &&
	    !ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[0]),
		    &probe_word) &&
	    !ptrace(PTRACE_POKEUSER, pid, offsetof(struct user, u_debugreg[7]),
		    1ul | (9ul << 16)) &&
	    !ptrace(PTRACE_CONT, pid, 0, 0)) {
		st = reap(pid);
		errno = 0;
		long d6 = ptrace(PTRACE_PEEKUSER, pid,
				 offsetof(struct user, u_debugreg[6]), 0);

		works = WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && !errno &&
			(d6 & 1);
	}
	if (!WIFEXITED(st) && !WIFSIGNALED(st)) {
		kill(pid, SIGKILL);
		reap(pid);
	}
	return works;
}

bool tracer_tsc_traps(void)
{
	return tsc_traps();
}

bool tracer_watch_traps(void)
{
	return watch_traps();
}
