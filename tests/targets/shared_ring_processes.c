/*
 * A lock-free single-producer single-consumer ring in a MAP_SHARED page
 * between two single-threaded processes: the parent produces 1..6, the
 * forked child consumes them, spinning on the indices (C11 acquire and
 * release), and exits 0 when their sum is 21; the parent asserts that.
 * Built at -O2 (tests/meson.build).  -DRACY: the producer publishes the
 * slot (head) before it stores the item, so the consumer can read a stale
 * slot.
 */
#define _DEFAULT_SOURCE
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4

struct ring {
	_Atomic unsigned head, tail;
	int slot[N];
};

static int consume(struct ring *r)
{
	int sum = 0;

	for (int i = 0; i < 6; i++) {
		unsigned t = atomic_load_explicit(&r->tail,
						  memory_order_relaxed);

		while (atomic_load_explicit(&r->head, memory_order_acquire) ==
		       t)
			;
		sum += r->slot[t % N];
		atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	}
	return sum;
}

static void produce(struct ring *r)
{
	for (int i = 1; i <= 6; i++) {
		unsigned h = atomic_load_explicit(&r->head,
						  memory_order_relaxed);

		while (h - atomic_load_explicit(&r->tail,
						memory_order_acquire) == N)
			;
#ifdef RACY
		atomic_store_explicit(&r->head, h + 1, memory_order_release);
		r->slot[h % N] = i;
#else
		r->slot[h % N] = i;
		atomic_store_explicit(&r->head, h + 1, memory_order_release);
#endif
	}
}

int main(void)
{
	struct ring *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0;

	if (r == MAP_FAILED)
		return 2;
	pid_t child = fork();

	if (child < 0)
		return 2;
	if (child == 0)
		_exit(consume(r) == 21 ? 0 : 1);
	produce(r);
	waitpid(child, &status, 0);
	assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	puts("sum 21");
	return 0;
}
