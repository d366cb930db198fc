/* Correct: main makes a SysV semaphore set (value 1, no SEM_UNDO) before
 * its first thread; two threads each try it (IPC_NOWAIT) and give it back
 * if they got it, so at least one gets it; main checks, then removes the
 * set (IPC_RMID).  A run must see the set as main made it: one that
 * shared the kernel's set with an earlier run (a fork of a template taken
 * at the first thread) would find it removed, and no thread would get it.
 * Prints "sysv_before_threads: took T, value 1".
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/sem.h>

static int semid, took;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *trier(void *arg)
{
	struct sembuf p = { 0, -1, IPC_NOWAIT }, v = { 0, 1, 0 };

	(void)arg;
	if (semop(semid, &p, 1) == 0) {
		pthread_mutex_lock(&lock);
		took++;
		pthread_mutex_unlock(&lock);
		assert(semop(semid, &v, 1) == 0);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	assert(semid >= 0);
	assert(semctl(semid, 0, SETVAL, 1) == 0);
	pthread_create(&a, NULL, trier, NULL);
	pthread_create(&b, NULL, trier, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	int value = semctl(semid, 0, GETVAL);

	semctl(semid, 0, IPC_RMID);
	printf("sysv_before_threads: took %d, value %d\n", took, value);
	assert(took >= 1 && value == 1 && "the set as main made it");
	return 0;
}
