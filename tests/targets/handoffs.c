/*
 * Data handed from one thread to another by means race discovery must
 * see as synchronisation, though no lock or libc call is in between:
 *
 *   c11_flag      a global C11 _Atomic flag, release store and acquire
 *                 load (plain movs on x86: only its type says atomic)
 *   member_flags  _Atomic members of a global array of structures
 *   descriptors   a pipe, then an eventfd (the kernel orders a write
 *                 before the read that takes what it wrote)
 *   detached      a detached worker counts itself done with an atomic;
 *                 main, alone once it has exited, starts a reader
 *   stack_reuse   detached workers end after posting; glibc gives their
 *                 stacks to the next ones (their frames are dead)
 *   signal        main fills the data, then pthread_kill: the worker's
 *                 handler reads it
 *
 * Each is correct: `ptloom races` reports nothing.  Their racy twins,
 * whose races must still be reported:
 *
 *   plain_flag    the flag a plain volatile int
 *   pipe_late     the worker writes to the pipe before its data
 *   sleep         a detached worker's result read after a sleep
 *   signal_late   main sends the signal before it fills the data
 */
#define _DEFAULT_SOURCE /* usleep */
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static long data[16];
static long check(void)
{
	long s = 0;

	for (int i = 0; i < 16; i++)
		s += data[i];
	return s;
}

static void fill(long v)
{
	for (int i = 0; i < 16; i++)
		data[i] = v * i;
}

/* --- c11_flag and plain_flag --- */
static atomic_int ready;
static volatile int plain_ready;

static void *flag_producer(void *arg)
{
	fill(1);
	if (arg)
		plain_ready = 1;
	else
		atomic_store_explicit(&ready, 1, memory_order_release);
	return NULL;
}

static void *flag_consumer(void *arg)
{
	if (arg)
		while (!plain_ready)
			sched_yield();
	else
		while (!atomic_load_explicit(&ready, memory_order_acquire))
			sched_yield();
	if (check() != 120)
		abort();
	return NULL;
}

/* --- member_flags --- */
struct slot {
	long payload[4];
	_Atomic int full;
	int pad;
};

static struct {
	int n;
	struct slot s[4];
} ring;

static void *ring_producer(void *arg)
{
	for (int i = 0; i < 4; i++) {
		for (int k = 0; k < 4; k++)
			ring.s[i].payload[k] = i * k;
		atomic_store_explicit(&ring.s[i].full, 1,
				      memory_order_release);
	}
	return arg;
}

static void *ring_consumer(void *arg)
{
	long sum = 0;

	for (int i = 0; i < 4; i++) {
		while (!atomic_load_explicit(&ring.s[i].full,
					     memory_order_acquire))
			sched_yield();
		for (int k = 0; k < 4; k++)
			sum += ring.s[i].payload[k];
	}
	if (sum != 36)
		abort();
	return arg;
}

/* --- descriptors and pipe_late --- */
static int fds[2], efd;
static long *heap;

static void *fd_worker(void *arg)
{
	char c = 1;
	uint64_t v;

	if (arg) {
		if (write(fds[1], &c, 1) != 1)
			abort();
		fill(1);
	} else {
		fill(1);
		if (write(fds[1], &c, 1) != 1)
			abort();
	}
	if (read(efd, &v, sizeof(v)) != sizeof(v) || heap[3] != 3)
		abort();
	return NULL;
}

static void descriptors(int late)
{
	pthread_t t;
	uint64_t one = 1;
	char c;

	if (pipe(fds) || (efd = eventfd(0, 0)) < 0)
		abort();
	pthread_create(&t, NULL, fd_worker, late ? &t : NULL);
	if (read(fds[0], &c, 1) != 1)
		abort();
	printf("%ld\n", check());
	heap = malloc(16 * sizeof(*heap));
	for (int i = 0; i < 16; i++)
		heap[i] = i;
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		abort();
	pthread_join(t, NULL);
}

/* --- detached and sleep --- */
static atomic_int done;

static void *detached_worker(void *arg)
{
	fill(1);
	if (!arg)
		atomic_fetch_add(&done, 1);
	return NULL;
}

static void *reader(void *arg)
{
	printf("%ld\n", check());
	return arg;
}

static void detached(int sleeps)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_create(&t, &a, detached_worker, sleeps ? &t : NULL);
	if (sleeps)
		usleep(10000);
	else
		while (atomic_load(&done) < 1)
			usleep(100);
	pthread_create(&t, NULL, reader, NULL);
	pthread_join(t, NULL);
}

/* --- stack_reuse --- */
static sem_t posted;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int quit;

__attribute__((noinline)) static long frame(int v)
{
	volatile char buf[2048];

	memset((char *)buf, v, sizeof(buf));
	return buf[7];
}

static void *short_worker(void *arg)
{
	sem_post(&posted);
	return (void *)frame((int)(long)arg);
}

static void *helper(void *arg)
{
	pthread_mutex_lock(&m);
	while (!quit)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	return arg;
}

static void stack_reuse(void)
{
	pthread_attr_t a;
	pthread_t h, t;

	sem_init(&posted, 0, 0);
	pthread_create(&h, NULL, helper, NULL);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < 4; i++) {
		pthread_create(&t, &a, short_worker, (void *)(long)i);
		sem_wait(&posted);
		usleep(1000); /* it ends meanwhile */
	}
	pthread_mutex_lock(&m);
	quit = 1;
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	pthread_join(h, NULL);
}

/* --- signal and signal_late --- */
static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	printf("%ld\n", check());
	got = 1;
}

static void *sig_worker(void *arg)
{
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
	while (!got)
		pause();
	return arg;
}

static void signal_handoff(int late)
{
	sigset_t ss;
	pthread_t t;

	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);
	signal(SIGUSR1, on_usr1);
	pthread_create(&t, NULL, sig_worker, NULL);
	if (!late)
		fill(1);
	pthread_kill(t, SIGUSR1);
	if (late)
		fill(1);
	pthread_join(t, NULL);
}

static void two(void *(*a)(void *), void *(*b)(void *), void *arg)
{
	pthread_t x, y;

	pthread_create(&x, NULL, a, arg);
	pthread_create(&y, NULL, b, arg);
	pthread_join(x, NULL);
	pthread_join(y, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "c11_flag";
	static int yes;

	if (!strcmp(mode, "c11_flag"))
		two(flag_consumer, flag_producer, NULL);
	else if (!strcmp(mode, "plain_flag"))
		two(flag_consumer, flag_producer, &yes);
	else if (!strcmp(mode, "member_flags"))
		two(ring_consumer, ring_producer, NULL);
	else if (!strcmp(mode, "descriptors"))
		descriptors(0);
	else if (!strcmp(mode, "pipe_late"))
		descriptors(1);
	else if (!strcmp(mode, "detached"))
		detached(0);
	else if (!strcmp(mode, "sleep"))
		detached(1);
	else if (!strcmp(mode, "stack_reuse"))
		stack_reuse();
	else if (!strcmp(mode, "signal"))
		signal_handoff(0);
	else if (!strcmp(mode, "signal_late"))
		signal_handoff(1);
	else
		return 2;
	puts("ok");
	return 0;
}
