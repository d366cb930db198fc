/*
 * A program that traces its own child, as a debugger or strace does: the
 * child asks to be traced (PTRACE_TRACEME) and stops; the parent sees the
 * stop and lets it go on.
 * Under ptloom every process is ptloom's tracee already, so the kernel
 * would refuse the program's own tracing: ptloom says so (unsupported:)
 * instead of running something else than natively.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
			perror("PTRACE_TRACEME");
			_exit(3);
		}
		raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		return 4;
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 5;
	puts("traced the child");
	return WEXITSTATUS(status);
}
