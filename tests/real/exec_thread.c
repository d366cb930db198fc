/*
 * Correct: a non-main thread calls execve while the main thread waits in
 * pthread_join; the kernel ends every other thread and the new program
 * (here /bin/echo, or argv[1]) goes on under ptloom.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static char **args;

static void *execer(void *arg)
{
	(void)arg;
	char *argv[] = { "echo", "exec from a thread", NULL };

	execv(args[1] ? args[1] : "/bin/echo", args[1] ? args + 1 : argv);
	perror("execv");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	(void)argc;
	args = argv;
	pthread_create(&t, NULL, execer, NULL);
	pthread_join(t, NULL);
	return 1; /* not reached: the exec replaced the program */
}
