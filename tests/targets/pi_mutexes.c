/*
 * Priority-inheritance mutexes (PTHREAD_PRIO_INHERIT): glibc locks and
 * unlocks them with FUTEX_LOCK_PI / FUTEX_UNLOCK_PI / FUTEX_TRYLOCK_PI,
 * whose futex word holds the owner's thread id.  pi_mutexes MODE:
 *   count       correct: two threads add under one PI mutex
 *   racy        one of them skips the lock (a lost update)
 *   owner_dies  correct: a robust PI mutex's owner dies while main waits;
 *               main gets EOWNERDEAD, makes it consistent
 *   signal      correct: a thread waiting for the lock takes a signal; its
 *               lock still returns 0 and owns the mutex
 *   timed       correct: a timed lock of a held mutex, 0 or ETIMEDOUT;
 *               either way the mutex works afterwards
 *   cond        correct: a condition variable with a PI mutex
 *   abba        two PI mutexes taken in opposite orders (a deadlock)
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m, m2;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long n;
static int ready;
static volatile sig_atomic_t handled;

static void pi_init(pthread_mutex_t *x, int robust, int type)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	if (robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutexattr_settype(&a, type);
	pthread_mutex_init(x, &a);
	pthread_mutexattr_destroy(&a);
}

static void *adder(void *arg)
{
	int locked = arg == NULL;

	for (int i = 0; i < 3; i++) {
		if (locked)
			assert(pthread_mutex_lock(&m) == 0);
		long v = n;
		n = v + 1;
		if (locked)
			assert(pthread_mutex_unlock(&m) == 0);
	}
	return NULL;
}

static void *dies_holding(void *arg)
{
	(void)arg;
	assert(pthread_mutex_lock(&m) == 0);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	handled = 1;
}

static void *waits(void *arg)
{
	(void)arg;
	assert(pthread_mutex_lock(&m) == 0);
	n++;
	assert(pthread_mutex_unlock(&m) == 0);
	return NULL;
}

static void *timed(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	int r = pthread_mutex_timedlock(&m, &ts);

	assert(r == 0 || r == ETIMEDOUT);
	if (r == 0)
		assert(pthread_mutex_unlock(&m) == 0);
	assert(pthread_mutex_lock(&m) == 0);
	n++;
	assert(pthread_mutex_unlock(&m) == 0);
	return NULL;
}

static void *producer(void *arg)
{
	(void)arg;
	assert(pthread_mutex_lock(&m) == 0);
	ready = 1;
	pthread_cond_signal(&c);
	assert(pthread_mutex_unlock(&m) == 0);
	return NULL;
}

static void *ba(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m2);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_unlock(&m2);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "count";
	pthread_t a, b;

	pi_init(&m, !strcmp(mode, "owner_dies"), PTHREAD_MUTEX_DEFAULT);
	pi_init(&m2, 0, PTHREAD_MUTEX_DEFAULT);
	if (!strcmp(mode, "count") || !strcmp(mode, "racy")) {
		pthread_create(&a, NULL, adder, NULL);
		pthread_create(&b, NULL, adder,
			       strcmp(mode, "racy") ? NULL : "racy");
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("%ld\n", n);
		assert(n == 6);
	} else if (!strcmp(mode, "owner_dies")) {
		pthread_create(&a, NULL, dies_holding, NULL);
		int r = pthread_mutex_lock(&m);

		assert(r == 0 || r == EOWNERDEAD);
		if (r == EOWNERDEAD)
			assert(pthread_mutex_consistent(&m) == 0);
		assert(pthread_mutex_unlock(&m) == 0);
		pthread_join(a, NULL);
		/* the owner may have died before main's lock, or after */
		r = pthread_mutex_lock(&m);
		assert(r == 0 || r == EOWNERDEAD);
		if (r == EOWNERDEAD)
			assert(pthread_mutex_consistent(&m) == 0);
		assert(pthread_mutex_unlock(&m) == 0);
		printf("consistent\n");
	} else if (!strcmp(mode, "signal")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		assert(pthread_mutex_lock(&m) == 0);
		pthread_create(&a, NULL, waits, NULL);
		usleep(1000);
		pthread_kill(a, SIGUSR1);
		usleep(1000);
		assert(pthread_mutex_unlock(&m) == 0);
		pthread_join(a, NULL);
		printf("%ld handled=%d\n", n, (int)handled);
		assert(n == 1 && handled);
	} else if (!strcmp(mode, "timed")) {
		pthread_create(&a, NULL, timed, NULL);
		assert(pthread_mutex_lock(&m) == 0);
		usleep(5000);
		n++;
		assert(pthread_mutex_unlock(&m) == 0);
		pthread_join(a, NULL);
		printf("%ld\n", n);
		assert(n == 2);
	} else if (!strcmp(mode, "cond")) {
		pthread_create(&a, NULL, producer, NULL);
		assert(pthread_mutex_lock(&m) == 0);
		while (!ready)
			assert(pthread_cond_wait(&c, &m) == 0);
		assert(pthread_mutex_unlock(&m) == 0);
		pthread_join(a, NULL);
		printf("ready\n");
	} else if (!strcmp(mode, "abba")) {
		pthread_create(&a, NULL, ba, NULL);
		pthread_mutex_lock(&m);
		pthread_mutex_lock(&m2);
		pthread_mutex_unlock(&m2);
		pthread_mutex_unlock(&m);
		pthread_join(a, NULL);
	}
	return 0;
}
