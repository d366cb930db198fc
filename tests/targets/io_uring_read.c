/* Buggy: main reads a file through io_uring (raw syscalls, no liburing)
 * with IOSQE_ASYNC, so the kernel's io-wq worker fills the buffer while
 * main runs on, and main asserts the buffer is still empty after a short
 * busy loop (natively that fails about one run in four); a second thread
 * counts under a mutex meanwhile.  Without a kernel with io_uring, prints
 * "io_uring_read: no io_uring" and exits 0.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static char buf[4096];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *counter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	count++;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	char path[] = "/tmp/ptloom-io-uring-XXXXXX";
	int fd = mkstemp(path);
	struct io_uring_params p;
	pthread_t t;

	assert(fd >= 0);
	unlink(path);
	memset(buf, 'z', sizeof(buf));
	assert(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	memset(buf, 0, sizeof(buf));
	pthread_create(&t, NULL, counter, NULL);
	memset(&p, 0, sizeof(p));
	int ring = (int)syscall(SYS_io_uring_setup, 4, &p);

	if (ring < 0) {
		pthread_join(t, NULL);
		puts("io_uring_read: no io_uring");
		return 0;
	}
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
	struct io_uring_sqe *sqes =
		mmap(NULL, p.sq_entries * sizeof(*sqes),
		     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
		     IORING_OFF_SQES);

	assert(sq != MAP_FAILED && sqes != MAP_FAILED);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_READ;
	sqes[0].flags = IOSQE_ASYNC;
	sqes[0].fd = fd;
	sqes[0].addr = (unsigned long)buf;
	sqes[0].len = sizeof(buf);
	unsigned *tail = (unsigned *)(sq + p.sq_off.tail);
	unsigned *array = (unsigned *)(sq + p.sq_off.array);

	array[*tail & *(unsigned *)(sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	assert(syscall(SYS_io_uring_enter, ring, 1, 0, 0, NULL, 0) == 1);
	for (volatile int i = 0; i < 20000; i++)
		;
	int early = ((volatile char *)buf)[0] == 'z';

	/* wait for the completion before the buffer goes */
	assert(syscall(SYS_io_uring_enter, ring, 0, 1, IORING_ENTER_GETEVENTS,
		       NULL, 0) >= 0);
	pthread_join(t, NULL);
	printf("io_uring_read: early %d, count %d\n", early, count);
	assert(!early && "the kernel filled the buffer before main looked");
	return 0;
}
