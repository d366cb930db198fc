/*
 * Correct, but shared in a way ptloom does not follow: after a fork,
 * parent and child each map one POSIX shared memory object on their own
 * (tests/targets/shm_mapped_apart.c) and add to a counter in it under a
 * process-shared mutex, and then one of them changes its mapping in a way
 * ptloom does not name (argv[1]): "mremap" moves the child's mapping,
 * "truncate" truncates the object (and grows it again) while both map
 * it, "private" maps it private in the child too.  Never a pass:
 * INCOMPLETE, saying why.
 */
#define _GNU_SOURCE
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
	const char *how = argc > 1 ? argv[1] : "";
	const char *name = "/ptloom-shm-apart-unfollowed";
	pthread_mutexattr_t attr;
	struct shared *sh;
	int fd;

	fd = shm_open(name, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, 8192))
		return 2;
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		return 2;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&sh->lock, &attr);
	munmap(sh, 4096);
	close(fd);
	pid_t pid = fork();

	fd = shm_open(name, O_RDWR, 0);
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		return 2;
	if (pid == 0 && !strcmp(how, "mremap")) {
		sh = mremap(sh, 4096, 8192, MREMAP_MAYMOVE);
		if (sh == MAP_FAILED)
			return 2;
	}
	if (pid == 0 && !strcmp(how, "truncate") &&
	    (ftruncate(fd, 4096) || ftruncate(fd, 8192)))
		return 2;
	if (pid == 0 && !strcmp(how, "private") &&
	    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return 2;
	close(fd);
	pthread_mutex_lock(&sh->lock);
	sh->count = sh->count + 1;
	pthread_mutex_unlock(&sh->lock);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	shm_unlink(name);
	printf("count=%d\n", sh->count);
	return sh->count == 2 ? 0 : 1;
}
