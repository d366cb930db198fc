/*
 * A check-then-act race inside a forked child process: the parent forks a
 * worker whose two threads both withdraw from one balance after checking
 * it without a lock; the parent waits and exits with the worker's status.
 * Found only when the child process is scheduled too (a shell or test
 * runner in front of a racy program is the same situation).
 * -DFIXED: the worker's threads hold a mutex across check and withdraw.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int balance = 100;

static void *withdraw(void *arg)
{
	(void)arg;
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	int seen = balance;

	if (seen >= 80) {
#ifndef FIXED
		/* the check and the update are separate critical sections */
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
#endif
		balance = balance - 80;
	}
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	return NULL;
}

static int worker(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, withdraw, NULL);
	pthread_create(&b, NULL, withdraw, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(balance >= 0 && "overdrawn in the worker process");
	return 0;
}

int main(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 2;
	if (pid == 0)
		_exit(worker());
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	if (WIFSIGNALED(status)) {
		printf("worker killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	printf("worker exit %d\n", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}
