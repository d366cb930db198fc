/*
 * Memory unmapped and mapped again: the kernel gives the addresses of an
 * unmapped buffer to the next mapping, so two threads that each map,
 * fill, check and unmap a buffer in turn meet at the same addresses with
 * different objects.
 *
 *   unmapped_buffers        correct: two threads, three buffers each
 *   unmapped_buffers early  buggy: main unmaps a buffer a worker may
 *                           still be reading (SIGSEGV)
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS with -std=c17 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define SIZE (1 << 16)

static void *fill_and_check(void *arg)
{
	(void)arg;
	for (int k = 0; k < 3; k++) {
		char *b = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int sum = 0;

		assert(b != MAP_FAILED);
		for (int i = 0; i < 64; i++)
			b[i * 1024] = (char)i;
		for (int i = 0; i < 64; i++)
			sum += b[i * 1024];
		assert(sum == 2016);
		munmap(b, SIZE);
	}
	return NULL;
}

static volatile char *shared;

static void *reader(void *arg)
{
	volatile int sum = 0;

	(void)arg;
	for (int i = 0; i < 4; i++)
		sum += shared[i * 64];
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1 && !strcmp(argv[1], "early")) {
		shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert(shared != MAP_FAILED);
		shared[0] = 1;
		pthread_create(&a, NULL, reader, NULL);
		munmap((void *)shared, 4096); /* the bug: before the join */
		pthread_join(a, NULL);
		printf("read\n");
		return 0;
	}
	pthread_create(&a, NULL, fill_and_check, NULL);
	pthread_create(&b, NULL, fill_and_check, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("checked\n");
	return 0;
}
