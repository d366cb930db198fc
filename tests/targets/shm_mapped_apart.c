/*
 * Buggy: after a fork, parent and child each open one POSIX shared memory
 * object and map it on their own (not a mapping the fork copied), the
 * child at another address than the parent's, then both add to a counter
 * in it with a plain load and store: an update can be lost.  ptloom names
 * the two mappings' bytes by the file's offset (device, inode, offset), so
 * the two processes' accesses are one object's: the lost update is found,
 * with the sleep between the load and the store or without it
 * ("nosleep").
 * -DFIXED: correct, a process-shared mutex in the object guards the
 * addition (set up before the fork through a mapping of the parent's it
 * unmaps again); with "atomic", a lock-free atomic add instead.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	pthread_mutex_t lock;
	volatile int count;
};

int main(int argc, char **argv)
{
	int nosleep = argc > 1 && strcmp(argv[1], "nosleep") == 0;
	int atomic = argc > 1 && strcmp(argv[1], "atomic") == 0;
	/* one name: a run ptloom ends early leaves one object, not one
	 * each */
	const char *name = "/ptloom-shm-mapped-apart";
	int fd;

	(void)atomic;
	(void)nosleep;
	fd = shm_open(name, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, 4096))
		return 2;
#ifdef FIXED
	{
		struct shared *init = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					   MAP_SHARED, fd, 0);
		pthread_mutexattr_t attr;

		if (init == MAP_FAILED)
			return 2;
		pthread_mutexattr_init(&attr);
		pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&init->lock, &attr);
		munmap(init, 4096);
	}
#endif
	close(fd);
	pid_t pid = fork();

	/* the child's mapping at an address of its own */
	if (pid == 0 &&
	    mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0) == MAP_FAILED)
		return 2;
	fd = shm_open(name, O_RDWR, 0);
	struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);

	close(fd);
	if (sh == MAP_FAILED)
		return 2;
#ifdef FIXED
	if (atomic) {
		__atomic_fetch_add(&sh->count, 1, __ATOMIC_SEQ_CST);
	} else {
		pthread_mutex_lock(&sh->lock);
		int v = sh->count;

		sh->count = v + 1;
		pthread_mutex_unlock(&sh->lock);
	}
#else
	int v = sh->count;

	if (!nosleep)
		usleep(1000); /* the other process's turn now and then */
	sh->count = v + 1;
#endif
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	shm_unlink(name);
	printf("cnt=%d\n", sh->count);
	assert(sh->count == 2 && "lost update through shared memory");
	return 0;
}
