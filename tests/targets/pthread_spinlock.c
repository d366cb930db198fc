/*
 * Three threads add to a counter under a POSIX spin lock (argv[1] "mutex":
 * under a mutex instead).  Correct as written; with -DSPLIT each increment
 * reads the counter in one critical section and stores it in the next, and
 * an update is lost when another thread's section comes between.
 */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NTHREADS 3
#define NINCS 3

static pthread_spinlock_t spin;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int use_mutex;
static int counter;

static void lock(void)
{
	if (use_mutex)
		pthread_mutex_lock(&mutex);
	else
		pthread_spin_lock(&spin);
}

static void unlock(void)
{
	if (use_mutex)
		pthread_mutex_unlock(&mutex);
	else
		pthread_spin_unlock(&spin);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < NINCS; i++) {
#ifdef SPLIT
		lock();
		int v = counter;
		unlock();
		lock();
		counter = v + 1;
		unlock();
#else
		lock();
		counter++;
		unlock();
#endif
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];

	use_mutex = argc > 1 && !strcmp(argv[1], "mutex");
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	assert(counter == NTHREADS * NINCS && "an update was lost");
	printf("%d\n", counter);
	return 0;
}
