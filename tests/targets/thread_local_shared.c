/*
 * A thread-local variable (__thread) whose address reaches another
 * thread: its owner reaches it %fs-relative, the other thread through
 * the pointer.  ptloom's race discovery leaves a thread's %fs-relative
 * accesses out, as its stack-relative ones, until it sees another thread
 * reach the owner's thread-local data or stack.
 *
 *   thread_local_shared          buggy: a worker's counter, which the
 *                                other worker also adds to through the
 *                                pointer, each with a plain load and
 *                                store between two barriers: an update
 *                                can be lost (the owner asserts it)
 *   thread_local_shared main     buggy: the same with main's counter
 *   thread_local_shared locked   correct: the additions to the worker's
 *                                counter under a mutex
 *   thread_local_shared sum      correct: each worker adds to its own
 *                                counter, then main sums them through
 *                                their pointers between two barriers
 */
#define _POSIX_C_SOURCE 200809L /* barriers with -std=c17 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static __thread volatile int counter;
static volatile int *volatile shared;
static volatile int *volatile mine[2];
static pthread_barrier_t b1, b2;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int locked;

static void add_to(volatile int *c)
{
	if (locked)
		pthread_mutex_lock(&lock);
	int v = *c;

	*c = v + 1;
	if (locked)
		pthread_mutex_unlock(&lock);
}

/* the owner's addition: its own counter, %fs-relative (not through a
 * pointer, as add_to's) */
static void add_own(void)
{
	if (locked)
		pthread_mutex_lock(&lock);
	int v = counter;

	counter = v + 1;
	if (locked)
		pthread_mutex_unlock(&lock);
}

static void *owner(void *arg)
{
	(void)arg;
	shared = &counter;
	pthread_barrier_wait(&b1);
	add_own();
	pthread_barrier_wait(&b2);
	assert(counter == 2 && "lost update on a thread-local counter");
	return NULL;
}

static void *other(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&b1);
	add_to(shared);
	pthread_barrier_wait(&b2);
	return NULL;
}

static void *summed(void *arg)
{
	mine[arg != NULL] = &counter;
	for (int i = 0; i < 3; i++)
		counter++;
	pthread_barrier_wait(&b1);
	pthread_barrier_wait(&b2);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_t a, b;

	locked = !strcmp(mode, "locked");
	if (!strcmp(mode, "sum")) {
		pthread_barrier_init(&b1, NULL, 3);
		pthread_barrier_init(&b2, NULL, 3);
		pthread_create(&a, NULL, summed, NULL);
		pthread_create(&b, NULL, summed, (void *)1);
		pthread_barrier_wait(&b1);
		int sum = *mine[0] + *mine[1];

		pthread_barrier_wait(&b2);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		assert(sum == 6);
		printf("sum %d\n", sum);
		return 0;
	}
	pthread_barrier_init(&b1, NULL, 2);
	pthread_barrier_init(&b2, NULL, 2);
	if (!strcmp(mode, "main")) {
		shared = &counter;
		pthread_create(&b, NULL, other, NULL);
		pthread_barrier_wait(&b1);
		add_own();
		pthread_barrier_wait(&b2);
		assert(counter == 2 &&
		       "lost update on main's thread-local counter");
		pthread_join(b, NULL);
		printf("count %d\n", counter);
		return 0;
	}
	pthread_create(&a, NULL, owner, NULL);
	pthread_create(&b, NULL, other, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("done\n");
	return 0;
}
