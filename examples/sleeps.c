/* Correct: sleeping threads, and a timed condvar wait that times out. */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed;
static bool shutdown_requested; /* nobody ever sets it */
static int finished; /* workers done, under lock */

static struct timespec deadline_after_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

static void finish(void)
{
	pthread_mutex_lock(&lock);
	finished++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static void *usleeper(void *arg)
{
	(void)arg;
	usleep(2000);
	finish();
	return NULL;
}

static void *nanosleeper(void *arg)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 3000000L };

	(void)arg;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	finish();
	return NULL;
}

int main(void)
{
	pthread_condattr_t attr;
	pthread_t a, b;
	struct timespec deadline;
	int rc = 0;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&changed, &attr);
	pthread_condattr_destroy(&attr);

	pthread_create(&a, NULL, usleeper, NULL);
	pthread_create(&b, NULL, nanosleeper, NULL);

	/* Wait for both workers, polling in slices: each slice may time out. */
	pthread_mutex_lock(&lock);
	while (finished < 2) {
		deadline = deadline_after_ms(10);
		rc = pthread_cond_timedwait(&changed, &lock, &deadline);
		assert((rc == 0 || rc == ETIMEDOUT) && "cond_timedwait failed");
	}
	pthread_mutex_unlock(&lock);

	/* Nobody requests a shutdown: this wait must time out. */
	deadline = deadline_after_ms(5);
	rc = 0;
	pthread_mutex_lock(&lock);
	while (!shutdown_requested && rc == 0)
		rc = pthread_cond_timedwait(&changed, &lock, &deadline);
	pthread_mutex_unlock(&lock);
	assert(rc == ETIMEDOUT && "the shutdown wait must time out");

	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_cond_destroy(&changed);
	printf("finished=%d shutdown_wait=timed out\n", finished);
	return 0;
}
