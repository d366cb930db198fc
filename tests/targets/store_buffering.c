/*
 * Dekker's handshake: each thread raises its flag, then looks at the
 * other's, and goes in only if it is down.  With every store seen at once
 * (one thread at a time, sequentially consistent) at most one goes in.  An
 * x86 CPU keeps a store in its store buffer while the load after it reads
 * memory, so both may read the other's flag down and go in: the assertion
 * fails on the hardware now and then.
 *
 * -DFIXED: a full fence between the store and the load (mfence), as the
 * handshake needs.  -DC11: the flags as C11 atomics with release stores
 * and acquire loads (plain movs on x86: still broken); with -DFIXED too,
 * sequentially consistent ones (the store becomes a locked xchg or is
 * followed by mfence).  -DCALLS: the store and the load each in a
 * function of their own, called (the store's return and the load's call
 * lie between them).
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#ifdef C11
static _Atomic int want[2];
#ifdef FIXED
#define RAISE(me) atomic_store_explicit(&want[me], 1, memory_order_seq_cst)
#define LOOK(o) atomic_load_explicit(&want[o], memory_order_seq_cst)
#else
#define RAISE(me) atomic_store_explicit(&want[me], 1, memory_order_release)
#define LOOK(o) atomic_load_explicit(&want[o], memory_order_acquire)
#endif
#elif defined(CALLS)
static volatile int want[2];
static __attribute__((noinline)) void raise_flag(int me) { want[me] = 1; }
static __attribute__((noinline)) int flag_of(int o) { return want[o]; }
#define RAISE(me) raise_flag(me)
#define LOOK(o) flag_of(o)
#else
static volatile int want[2];
#define RAISE(me) (want[me] = 1)
#define LOOK(o) want[o]
#endif
static volatile int entered[2];

static void *worker(void *arg)
{
	int me = (int)(long)arg;

	RAISE(me);
#if defined(FIXED) && !defined(C11)
	atomic_thread_fence(memory_order_seq_cst);
#endif
	if (!LOOK(1 - me))
		entered[me] = 1; /* the critical section */
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("entered %d %d\n", entered[0], entered[1]);
	assert(!(entered[0] && entered[1]) && "both went in");
	return 0;
}
