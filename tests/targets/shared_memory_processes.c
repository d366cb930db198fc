/*
 * Two processes, one counter: the parent maps an anonymous MAP_SHARED
 * page, forks, and each process adds 1 to the counter in it twice with a
 * plain load and store; the parent waits for the child and checks that
 * both processes' additions are there.  Each process has a single thread,
 * and the race is between the processes, through the memory they share.
 * -DFIXED: a process-shared mutex in the same page guards each addition.
 */
#define _DEFAULT_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	pthread_mutex_t lock;
	volatile int count;
};

static void add(struct shared *sh)
{
#ifdef FIXED
	pthread_mutex_lock(&sh->lock);
#endif
	int seen = sh->count;

	sh->count = seen + 1;
#ifdef FIXED
	pthread_mutex_unlock(&sh->lock);
#endif
}

int main(void)
{
	struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_mutexattr_t attr;

	if (sh == MAP_FAILED)
		return 2;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->lock, &attr);

	pid_t child = fork();

	if (child < 0)
		return 2;
	for (int i = 0; i < 2; i++)
		add(sh);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	printf("count %d\n", sh->count);
	assert(sh->count == 4);
	return 0;
}
