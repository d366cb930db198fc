/* Buggy (the plain counter of SCTBench's and SV-COMP's simplest racy
 * programs): two threads each add to a shared counter with `count++`, no
 * lock and no atomics; an update can be lost.  At -O2 gcc compiles the
 * increment to one `addl $1, count(%rip)`: one instruction, but not an
 * atomic one (no lock prefix), so two CPUs can still lose an update.
 * -DFIXED: atomic increments. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static int count;

static void *worker(void *arg)
{
	(void)arg;
#ifdef FIXED
	__atomic_fetch_add(&count, 1, __ATOMIC_SEQ_CST);
#else
	count++;
#endif
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(count == 2 && "an update was lost");
	printf("ok\n");
	return 0;
}
