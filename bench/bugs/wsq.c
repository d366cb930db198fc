/* Buggy (Chess work-stealing queue class): an owner pushes and pops at
 * the tail of a THE-protocol deque, a thief steals at the head under a
 * lock.  The thief tests head < tail and only then advances head (the
 * protocol needs the advance first), so on a one-element queue the owner's
 * lock-free pop and the steal take the same item.  Every item must be
 * taken exactly once.  -DFIXED: the THE protocol (advance, then test;
 * the owner retries under the lock on a conflict), with the full fence
 * each side needs between its store and its load on x86: without them
 * the CPU's store buffer lets both read the old value of the other's
 * index, and both take the last item (tracer/tso.c). */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define ITEMS 4

static volatile long head, tail;
static int items[ITEMS];
static int taken[ITEMS + 1];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void push(int x)
{
	items[tail] = x;
	tail = tail + 1;
}

static int pop(void)
{
	long t = tail - 1;

	tail = t;
#ifdef FIXED
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	if (head <= t)
		return items[t];
	tail = t + 1;
	pthread_mutex_lock(&lock);
	t = tail - 1;
	tail = t;
	if (head <= t) {
		pthread_mutex_unlock(&lock);
		return items[t];
	}
	tail = t + 1;
	pthread_mutex_unlock(&lock);
	return 0;
}

static int steal(void)
{
	int x = 0;

	pthread_mutex_lock(&lock);
	long h = head;
#ifdef FIXED
	head = h + 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (h + 1 <= tail)
		x = items[h];
	else
		head = h;
#else
	if (h < tail) {
		x = items[h];
		head = h + 1;
	}
#endif
	pthread_mutex_unlock(&lock);
	return x;
}

static void take(int x)
{
	if (x)
		__atomic_fetch_add(&taken[x], 1, __ATOMIC_SEQ_CST);
}

static void *thief(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++)
		take(steal());
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, thief, NULL);
	for (int i = 1; i <= ITEMS; i++)
		push(i);
	for (int i = 0; i < ITEMS; i++)
		take(pop());
	pthread_join(t, NULL);
	for (int i = 1; i <= ITEMS; i++)
		assert(taken[i] <= 1 && "an item was taken twice");
	printf("ok\n");
	return 0;
}
