/* Correct except "order": threads meet at a SysV semaphore set
 * (IPC_PRIVATE, removed at the end).
 *   pc        a worker sleeps 20 ms, then posts with semop; main waits with
 *             semtimedop and a 10 s timeout and treats EAGAIN as a failure
 *   timeout   semtimedop on a semaphore nobody posts, 50 ms: EAGAIN, and
 *             not before 50 ms of CLOCK_MONOTONIC have passed
 *   handoff   two workers hand a token back and forth through two
 *             semaphores (semop, no timeout) 3 times each; main joins
 *   removed   a worker removes the set while main waits on it: main's
 *             semop fails with EIDRM (EINVAL if the removal came first)
 *   nobody    main waits with semop and nobody ever posts: the program
 *             hangs (a deadlock)
 *   order     (buggy) two workers each post their own semaphore; main
 *             waits for the first's post and asserts that the second has
 *             not posted yet, though it may have
 * Prints "sysv_sem_threads MODE ok".
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

static int id;

static int op(unsigned short num, short delta, const struct timespec *ts)
{
	struct sembuf b = { .sem_num = num, .sem_op = delta, .sem_flg = 0 };

	return ts ? semtimedop(id, &b, 1, ts) : semop(id, &b, 1);
}

static void *poster(void *arg)
{
	(void)arg;
	usleep(20000);
	assert(op(0, 1, NULL) == 0);
	return NULL;
}

static void *player(void *arg)
{
	int me = (int)(long)arg;

	for (int i = 0; i < 3; i++) {
		assert(op((unsigned short)me, -1, NULL) == 0);
		assert(op((unsigned short)!me, 1, NULL) == 0);
	}
	return NULL;
}

static void *remover(void *arg)
{
	(void)arg;
	usleep(1000);
	assert(semctl(id, 0, IPC_RMID) == 0);
	return NULL;
}

static void *own(void *arg)
{
	assert(op((unsigned short)(long)arg, 1, NULL) == 0);
	return NULL;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pc";
	pthread_t t[2];

	id = semget(IPC_PRIVATE, 2, 0600);
	assert(id >= 0);
	if (!strcmp(mode, "pc")) {
		struct timespec ts = { 10, 0 };

		pthread_create(&t[0], NULL, poster, NULL);
		assert(op(0, -1, &ts) == 0 && "the worker posted in time");
		pthread_join(t[0], NULL);
	} else if (!strcmp(mode, "timeout")) {
		struct timespec ts = { 0, 50000000 };
		double t0 = mono();

		assert(op(0, -1, &ts) == -1 && errno == EAGAIN);
		assert(mono() - t0 >= 0.05 && "waited the timeout");
	} else if (!strcmp(mode, "handoff")) {
		assert(op(0, 1, NULL) == 0);
		for (long i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, player, (void *)i);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		assert(semctl(id, 0, GETVAL) == 1);
	} else if (!strcmp(mode, "removed")) {
		pthread_create(&t[0], NULL, remover, NULL);
		assert(op(0, -1, NULL) == -1 &&
		       (errno == EIDRM || errno == EINVAL));
		pthread_join(t[0], NULL);
		printf("sysv_sem_threads %s ok\n", mode);
		return 0;
	} else if (!strcmp(mode, "nobody")) {
		op(0, -1, NULL);
	} else if (!strcmp(mode, "order")) {
		for (long i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, own, (void *)i);
		assert(op(0, -1, NULL) == 0);
		assert(semctl(id, 1, GETVAL) == 0 && "worker 2 posts later");
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	} else {
		return 2;
	}
	semctl(id, 0, IPC_RMID);
	printf("sysv_sem_threads %s ok\n", mode);
	return 0;
}
