/* Correct: Peterson's lock for two threads, busy-waiting with no syscalls. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NITERS 2

static volatile int interested[2];
static volatile int turn;
static volatile int in_critical; /* threads inside, must stay <= 1 */
static int counter;

static void peterson_lock(int me)
{
	int other = 1 - me;

	interested[me] = 1;
	turn = other;
	/* The store to turn must be visible before we read interested. */
	atomic_thread_fence(memory_order_seq_cst);
	while (interested[other] && turn == other)
		;
}

static void peterson_unlock(int me)
{
	atomic_thread_fence(memory_order_seq_cst);
	interested[me] = 0;
}

static void *worker(void *arg)
{
	int me = (int)(long)arg;

	for (int i = 0; i < NITERS; i++) {
		peterson_lock(me);
		in_critical++;
		assert(in_critical == 1 && "mutual exclusion violated");
		counter++;
		in_critical--;
		peterson_unlock(me);
	}
	return NULL;
}

int main(void)
{
	pthread_t t0, t1;

	pthread_create(&t0, NULL, worker, (void *)0L);
	pthread_create(&t1, NULL, worker, (void *)1L);
	pthread_join(t0, NULL);
	pthread_join(t1, NULL);

	assert(counter == 2 * NITERS && "lost update in critical section");
	printf("counter=%d\n", counter);
	return 0;
}
