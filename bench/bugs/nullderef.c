/* Buggy (ConVul class: NULL dereference after a racy reset): a reader
 * tests a shared cache pointer (a plain global, no lock), counts the hit
 * under a statistics lock and then reads through the pointer again; a
 * resetter sets the pointer to NULL in between.  The dereference crashes
 * (SIGSEGV) at every -O level: the lock call makes the compiler reload
 * the global.  -DFIXED: read the pointer once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct cache {
	int value;
};

static struct cache the_cache = { 42 };
static struct cache *cache = &the_cache;
static pthread_mutex_t stats = PTHREAD_MUTEX_INITIALIZER;
static int hits, total;

static void *reader(void *arg)
{
	(void)arg;
#ifdef FIXED
	struct cache *c = cache;

	if (c) {
		pthread_mutex_lock(&stats);
		hits++;
		pthread_mutex_unlock(&stats);
		total += c->value;
	}
#else
	if (cache) {
		pthread_mutex_lock(&stats);
		hits++;
		pthread_mutex_unlock(&stats);
		total += cache->value;
	}
#endif
	return NULL;
}

static void *resetter(void *arg)
{
	(void)arg;
	cache = NULL;
	return NULL;
}

int main(void)
{
	pthread_t r, s;

	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&s, NULL, resetter, NULL);
	pthread_join(r, NULL);
	pthread_join(s, NULL);
	printf("ok %d %d\n", hits, total);
	return 0;
}
