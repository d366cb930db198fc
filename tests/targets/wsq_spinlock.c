/* A work-stealing deque guarded by a test-and-test-and-set spin lock (no
 * yield, no futex): the owner (main) pushes items into a deque that lives
 * on its stack and pops them back, a thief thread polls and steals from
 * the head.  Every item must be taken exactly once.  Correct as written.
 * -DRACY: the owner's pop checks for an item and reads it before taking
 * the lock, so on a one-item deque the owner and the thief can both take
 * the same item. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define ITEMS 4

struct deque {
	volatile int lock;
	volatile long head, tail;
	volatile int items[ITEMS];
	int taken[ITEMS + 1];
	volatile int done;
};

static void spin_lock(volatile int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (*l)
			; /* held: wait until it looks free */
}

static void spin_unlock(volatile int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static void push(struct deque *q, int x)
{
	spin_lock(&q->lock);
	q->items[q->tail] = x;
	q->tail = q->tail + 1;
	spin_unlock(&q->lock);
}

static int pop(struct deque *q)
{
	int x;
#ifdef RACY
	if (q->head >= q->tail)
		return 0;
	long t = q->tail - 1;

	x = q->items[t]; /* read before the lock: a thief may take it too */
	spin_lock(&q->lock);
	q->tail = t;
	spin_unlock(&q->lock);
#else
	spin_lock(&q->lock);
	if (q->head >= q->tail) {
		spin_unlock(&q->lock);
		return 0;
	}
	q->tail = q->tail - 1;
	x = q->items[q->tail];
	spin_unlock(&q->lock);
#endif
	return x;
}

static int steal(struct deque *q)
{
	int x = 0;

	spin_lock(&q->lock);
	if (q->head < q->tail) {
		x = q->items[q->head];
		q->head = q->head + 1;
	}
	spin_unlock(&q->lock);
	return x;
}

static void take(struct deque *q, int x)
{
	__atomic_fetch_add(&q->taken[x], 1, __ATOMIC_RELAXED);
}

static void *thief(void *arg)
{
	struct deque *q = arg;

	while (!q->done) {
		int x = steal(q);

		if (x)
			take(q, x);
	}
	return NULL;
}

int main(void)
{
	struct deque q = { 0 };
	pthread_t t;
	int x;

	pthread_create(&t, NULL, thief, &q);
	for (int i = 1; i <= ITEMS; i++)
		push(&q, i);
	while ((x = pop(&q)))
		take(&q, x);
	q.done = 1;
	pthread_join(t, NULL);
	for (int i = 1; i <= ITEMS; i++)
		assert(q.taken[i] == 1 && "an item was taken twice or lost");
	printf("all %d items taken once\n", ITEMS);
	return 0;
}
