/*
 * One file mapped twice by one process: a memfd's two views, as a ring
 * buffer maps its pages back to back so that a record that wraps is
 * contiguous.  The same byte has two addresses; ptloom names it by the
 * file's device, inode and offset, as it does for two processes' own
 * mappings (tests/targets/shm_mapped_apart.c).
 *
 *   two_views          buggy: two threads add to a counter with a plain
 *                      load and store, each through its own view: an
 *                      update can be lost (main asserts the sum)
 *   two_views locked   correct: the same under a process-shared mutex
 *                      in the file, each thread locking it through its
 *                      view, and a process-shared semaphore that main
 *                      waits on through the other view
 *   two_views ring     correct: a single-producer single-consumer ring of
 *                      1,000-byte records in 4,096 bytes mapped twice
 *                      back to back (records wrap into the second view),
 *                      published with release and acquire
 *   two_views early    buggy: the ring's producer publishes a record
 *                      before it writes it
 *   two_views mremap   buggy: the lost update, the second view made by
 *                      mremap with old size 0 (which ptloom does not
 *                      follow: no pass)
 *   two_views windows  correct: the two mappings are two windows of the
 *                      file (offsets 0 and 4,096), no byte in both; each
 *                      thread adds to its own window's counter
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SZ 4096
#define REC 1000
#define RECS 6

struct shared {
	pthread_mutex_t lock;
	sem_t done;
	int count;
};

static struct shared *view[2];
static int locked;

static void *add(void *arg)
{
	struct shared *v = view[arg != NULL];

	if (locked)
		pthread_mutex_lock(&v->lock);
	int n = v->count;

	v->count = n + 1;
	if (locked) {
		pthread_mutex_unlock(&v->lock);
		sem_post(&v->done);
	}
	return NULL;
}

static char *ring;
static _Atomic unsigned long head, tail;
static int early;

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < RECS; i++) {
		unsigned long h =
			atomic_load_explicit(&head, memory_order_relaxed);

		while (h - atomic_load_explicit(&tail, memory_order_acquire) +
			       REC >
		       SZ)
			sched_yield();
		if (early)
			atomic_store_explicit(&head, h + REC,
					      memory_order_release);
		memset(ring + h % SZ, 'a' + i, REC);
		if (!early)
			atomic_store_explicit(&head, h + REC,
					      memory_order_release);
	}
	return NULL;
}

static int ring_main(int fd)
{
	char *base = mmap(NULL, 2 * SZ, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t t;

	assert(base != MAP_FAILED);
	ring = mmap(base, SZ, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		    fd, 0);
	assert(ring == base);
	assert(mmap(base + SZ, SZ, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_FIXED, fd, 0) == base + SZ);
	pthread_create(&t, NULL, producer, NULL);
	for (int i = 0; i < RECS; i++) {
		unsigned long tl =
			atomic_load_explicit(&tail, memory_order_relaxed);

		while (atomic_load_explicit(&head, memory_order_acquire) - tl <
		       REC)
			sched_yield();
		const char *r = ring + tl % SZ;

		assert(r[0] == 'a' + i && r[REC - 1] == 'a' + i &&
		       "a record read before it was written");
		atomic_store_explicit(&tail, tl + REC, memory_order_release);
	}
	pthread_join(t, NULL);
	printf("%d records\n", RECS);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int fd = memfd_create("two-views", 0);
	pthread_t a, b;

	assert(fd >= 0 && ftruncate(fd, SZ) == 0);
	if (!strcmp(mode, "ring") || !strcmp(mode, "early")) {
		early = !strcmp(mode, "early");
		return ring_main(fd);
	}
	locked = !strcmp(mode, "locked");
	int windows = !strcmp(mode, "windows");

	assert(!windows || ftruncate(fd, 2 * SZ) == 0);
	for (int i = 0; i < 2; i++) {
		view[i] = i && !strcmp(mode, "mremap")
				  ? mremap(view[0], 0, SZ, MREMAP_MAYMOVE)
				  : mmap(NULL, SZ, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, windows ? i * SZ : 0);
		assert(view[i] != MAP_FAILED);
	}
	assert(view[0] != view[1]);
	if (locked) {
		pthread_mutexattr_t at;

		pthread_mutexattr_init(&at);
		pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&view[0]->lock, &at);
		sem_init(&view[0]->done, 1, 0);
	}
	pthread_create(&a, NULL, add, NULL);
	pthread_create(&b, NULL, add, (void *)1);
	if (locked) {
		sem_wait(&view[1]->done);
		sem_wait(&view[1]->done);
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (windows) {
		assert(view[0]->count == 1 && view[1]->count == 1);
		printf("counts 1 1\n");
		return 0;
	}
	assert(view[1]->count == 2 && "lost update through two views");
	printf("count %d\n", view[0]->count);
	return 0;
}
