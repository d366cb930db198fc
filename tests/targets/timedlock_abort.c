/* Bug: a 100 ms mutex timedlock "cannot" expire, so its fallback aborts. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int cache_entries;

static void *refresher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cache_lock);
	cache_entries += 10; /* holds the lock only briefly */
	pthread_mutex_unlock(&cache_lock);
	return NULL;
}

static void *lookup(void *arg)
{
	struct timespec deadline;
	int rc;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += 100 * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	rc = pthread_mutex_timedlock(&cache_lock, &deadline);
	if (rc == ETIMEDOUT) {
		/* Untested fallback: "never happens". */
		fprintf(stderr, "lookup: cache lock timed out\n");
		abort();
	}
	cache_entries++;
	pthread_mutex_unlock(&cache_lock);
	return NULL;
}

int main(void)
{
	pthread_t r, l;

	pthread_create(&r, NULL, refresher, NULL);
	pthread_create(&l, NULL, lookup, NULL);
	pthread_join(r, NULL);
	pthread_join(l, NULL);
	printf("entries=%d\n", cache_entries);
	return 0;
}
