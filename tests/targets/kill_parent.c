/*
 * A program that signals its parent, natively a shell or a CI runner,
 * under ptloom ptloom itself: kill(getppid(), SIGKILL), or the signal
 * named by argv[1] (TERM, INT, USR1).  The signal is the program's doing,
 * never the user's interrupt (suite hardening).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "KILL";
	int sig = !strcmp(name, "TERM")	  ? SIGTERM
		  : !strcmp(name, "INT")  ? SIGINT
		  : !strcmp(name, "USR1") ? SIGUSR1
					  : SIGKILL;
	pthread_t t;

	pthread_create(&t, NULL, nothing, NULL);
	pthread_join(t, NULL);
	kill(getppid(), sig);
	puts("sent");
	return 0;
}
