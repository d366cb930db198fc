/*
 * Correct: parent and child each open one named semaphore after a fork
 * (sem_open maps its file on its own in each process) and add to a
 * counter, in memory the fork copied, under it.  A named semaphore's file
 * is followed (its waits are futexes keyed by what they map): explored,
 * never unsupported.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	/* one name: a run ptloom ends early leaves one, not one each */
	const char *name = "/ptloom-sem-open-processes";
	sem_t *s;

	sem_unlink(name);
	s = sem_open(name, O_CREAT | O_EXCL, 0600, 1);

	if (s == SEM_FAILED)
		return 2;
	sem_close(s);
	volatile int *cnt = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid = fork();

	s = sem_open(name, 0);
	if (s == SEM_FAILED || cnt == MAP_FAILED)
		return 2;
	sem_wait(s);
	int v = *cnt;

	*cnt = v + 1;
	sem_post(s);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	sem_unlink(name);
	printf("cnt=%d\n", *cnt);
	assert(*cnt == 2);
	return 0;
}
