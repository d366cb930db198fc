/* Correct: producer/consumer on a bounded buffer with a mutex and condvars. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define CAPACITY 4
#define NITEMS 10

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_full;
	pthread_cond_t not_empty;
	int items[CAPACITY];
	int head; /* next slot to take */
	int count;
};

static struct queue q = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.not_full = PTHREAD_COND_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER,
};

static void queue_put(struct queue *q, int v)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == CAPACITY)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->items[(q->head + q->count) % CAPACITY] = v;
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

static int queue_get(struct queue *q)
{
	int v;

	pthread_mutex_lock(&q->lock);
	while (q->count == 0)
		pthread_cond_wait(&q->not_empty, &q->lock);
	v = q->items[q->head];
	q->head = (q->head + 1) % CAPACITY;
	q->count--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return v;
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 1; i <= NITEMS; i++)
		queue_put(&q, i);
	return NULL;
}

static void *consumer(void *arg)
{
	int *sum = arg;

	for (int i = 1; i <= NITEMS; i++) {
		int v = queue_get(&q);

		assert(v == i && "items must arrive in FIFO order");
		*sum += v;
	}
	return NULL;
}

int main(void)
{
	pthread_t p, c;
	int sum = 0;

	pthread_create(&c, NULL, consumer, &sum);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);

	printf("consumed=%d sum=%d\n", NITEMS, sum);
	return sum == NITEMS * (NITEMS + 1) / 2 ? 0 : 1;
}
