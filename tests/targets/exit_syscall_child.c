/*
 * A forked child that ends with the exit system call (SYS_exit, the one a
 * thread ends with), not exit_group: its process ends with its only
 * thread, and the parent's waitpid sees status 3.  A clone()'s function
 * that returns ends the same way.  Correct: exit 0.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int status = 0;
	pid_t child = fork();

	if (child < 0)
		return 2;
	if (child == 0)
		syscall(SYS_exit, 3);
	waitpid(child, &status, 0);
	printf("child exit status %d\n", WEXITSTATUS(status));
	return WIFEXITED(status) && WEXITSTATUS(status) == 3 ? 0 : 1;
}
