/* Buggy (SCTBench CS stack / SV-COMP stack class without its lock): two
 * pusher threads push onto an array stack whose top index is a plain
 * global; two pushes that read the same top overwrite one slot and the
 * main thread, popping after the joins, misses a value.
 * -DFIXED: push under a mutex. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define PER 3
#define SIZE (2 * PER)

static int stack[SIZE];
static int top;
#ifdef FIXED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
#endif

static void push(int v)
{
#ifdef FIXED
	pthread_mutex_lock(&m);
#endif
	int t = top;

	stack[t] = v;
	top = t + 1;
#ifdef FIXED
	pthread_mutex_unlock(&m);
#endif
}

static void *pusher(void *arg)
{
	int base = (int)(long)arg;

	for (int i = 0; i < PER; i++)
		push(base + i);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	int sum = 0;

	pthread_create(&a, NULL, pusher, (void *)1L);
	pthread_create(&b, NULL, pusher, (void *)101L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(top == SIZE && "a push was lost");
	while (top > 0)
		sum += stack[--top];
	assert(sum == 1 + 2 + 3 + 101 + 102 + 103);
	printf("ok\n");
	return 0;
}
