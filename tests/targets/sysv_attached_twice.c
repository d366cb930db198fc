/*
 * One SysV shared memory segment attached twice (shmat): by two threads
 * of one process at two addresses, or by a parent and its child each
 * after the fork.  ptloom names its bytes by the segment's inode and
 * offset, as for a file two processes map on their own
 * (tests/targets/shm_mapped_apart.c).
 *
 *   sysv_attached_twice            buggy: two threads add to a counter
 *                                  with a plain load and store, each
 *                                  through its own attachment
 *   sysv_attached_twice processes  buggy: parent and child do, each
 *                                  attaching after the fork
 *   sysv_attached_twice locked     correct: the processes' additions
 *                                  under a process-shared mutex in the
 *                                  segment (set up before the fork)
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	pthread_mutex_t lock;
	volatile int count;
};

static struct shared *view[2];

static void *add(void *arg)
{
	struct shared *v = view[arg != NULL];
	int n = v->count;

	v->count = n + 1;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

	assert(id >= 0);
	if (!strcmp(mode, "processes") || !strcmp(mode, "locked")) {
		int locked = !strcmp(mode, "locked");

		if (locked) {
			struct shared *s = shmat(id, NULL, 0);
			pthread_mutexattr_t at;

			pthread_mutexattr_init(&at);
			pthread_mutexattr_setpshared(&at,
						     PTHREAD_PROCESS_SHARED);
			pthread_mutex_init(&s->lock, &at);
			shmdt(s);
		}
		pid_t child = fork();
		struct shared *s = shmat(id, NULL, 0);

		assert(s != (void *)-1);
		if (locked)
			pthread_mutex_lock(&s->lock);
		int n = s->count;

		s->count = n + 1;
		if (locked)
			pthread_mutex_unlock(&s->lock);
		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
		int sum = s->count;

		shmdt(s);
		shmctl(id, IPC_RMID, NULL);
		assert(sum == 2 && "lost update between the processes");
		printf("count %d\n", sum);
		return 0;
	}
	pthread_t a, b;

	for (int i = 0; i < 2; i++) {
		view[i] = shmat(id, NULL, 0);
		assert(view[i] != (void *)-1);
	}
	shmctl(id, IPC_RMID, NULL);
	assert(view[0] != view[1]);
	pthread_create(&a, NULL, add, NULL);
	pthread_create(&b, NULL, add, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(view[1]->count == 2 && "lost update through two attachments");
	printf("count %d\n", view[0]->count);
	return 0;
}
