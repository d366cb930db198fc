/*
 * Bug: the memory a finished thread ran on (a stack the program gave with
 * pthread_attr_setstack) is the program's again after the join; two
 * writers then leave their mark in it, and main checks who was last.
 * A state key that dropped an exited thread's stack would take the two
 * orders of the writers for one state and miss the failing one.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/mman.h>

#define STACK (256 << 10)

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile char *mem;
static volatile int done;
static sem_t posted;

static void *first(void *arg)
{
	(void)arg;
	return NULL;
}

static void *writer(void *arg)
{
	pthread_mutex_lock(&m);
	mem[4096] = (char)(long)arg; /* far below where first() ran */
	pthread_mutex_unlock(&m);
	sem_post(&posted);
	return NULL;
}

static void *bystander(void *arg)
{
	(void)arg;
	/* after both writers: the orders of the two meet here */
	sem_wait(&posted);
	sem_wait(&posted);
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&m);
		done++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	pthread_attr_t a;
	pthread_t t, w1, w2, b;

	mem = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 2;
	sem_init(&posted, 0, 0);
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, (void *)mem, STACK);
	pthread_create(&t, &a, first, NULL);
	pthread_join(t, NULL);
	pthread_create(&b, NULL, bystander, NULL);
	pthread_create(&w1, NULL, writer, (void *)1L);
	pthread_create(&w2, NULL, writer, (void *)2L);
	pthread_join(w1, NULL);
	pthread_join(w2, NULL);
	pthread_join(b, NULL);
	assert(mem[4096] == 2 && "the second writer ran first");
	printf("ok\n");
	return 0;
}
