/* Buggy: a lock-free stack of free slots (Relacy's SafeStack pattern,
 * array indices instead of pointers, no version counter).  Three threads
 * each pop a slot, write their mark into it, check it and push it back,
 * twice.  pop reads head and next[head] and then CASes head: if between
 * the read and the CAS another thread pops that slot and a third pushes it
 * back after popping its successor, the CAS succeeds (ABA) and installs a
 * slot that is in use, so two threads own one slot.  Reaching it needs
 * preemptions at several atomic instructions. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NSLOTS 3
#define NTHREADS 3

static _Atomic int head;
static _Atomic int next[NSLOTS];
static _Atomic int owner[NSLOTS];

static int pop(void)
{
	for (;;) {
		int h = atomic_load(&head);

		if (h < 0)
			return -1;
		int n = atomic_load(&next[h]);

		if (atomic_compare_exchange_strong(&head, &h, n))
			return h;
	}
}

static void push(int i)
{
	int h = atomic_load(&head);

	do
		atomic_store(&next[i], h);
	while (!atomic_compare_exchange_strong(&head, &h, i));
}

static void *worker(void *arg)
{
	int me = (int)(long)arg + 1;

	for (int k = 0; k < 2; k++) {
		int i = pop();

		if (i < 0)
			continue;
		int was = atomic_exchange(&owner[i], me);

		assert(was == 0 && "slot owned twice");
		atomic_store(&owner[i], 0);
		push(i);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];

	for (int i = 0; i < NSLOTS; i++)
		atomic_store(&next[i], i + 1 < NSLOTS ? i + 1 : -1);
	atomic_store(&head, 0);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("ok\n");
	return 0;
}
