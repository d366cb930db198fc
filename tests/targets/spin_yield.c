/* Correct: a C11 atomic_flag spinlock that calls sched_yield while spinning. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define NTHREADS 3
#define NINCS 3

static atomic_flag spin = ATOMIC_FLAG_INIT;
static int counter;

static void spin_lock(atomic_flag *f)
{
	while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
		sched_yield();
}

static void spin_unlock(atomic_flag *f)
{
	atomic_flag_clear_explicit(f, memory_order_release);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < NINCS; i++) {
		spin_lock(&spin);
		counter++;
		spin_unlock(&spin);
	}
	return NULL;
}

int main(void)
{
	pthread_t threads[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&threads[i], NULL, worker, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(threads[i], NULL);

	assert(counter == NTHREADS * NINCS && "spinlock lost an update");
	printf("counter=%d\n", counter);
	return 0;
}
