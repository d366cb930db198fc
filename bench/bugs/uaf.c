/* Buggy (ConVul class: use after free across threads): a worker looks up
 * the shared session under the lock, drops the lock to do its work and
 * then uses the session; a closer unpublishes and frees it meanwhile.
 * glibc's free overwrites the first 16 bytes of the chunk (the tcache
 * link and key), so the worker's check of the session's magic fails
 * instead of reading stale data silently.  -DFIXED: a reference count
 * keeps the session alive until the worker has finished. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAGIC 0x5e551011u

struct session {
	unsigned magic;
	int refs;
	long bytes;
};

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct session *current;

static void put(struct session *s)
{
	pthread_mutex_lock(&m);
	int last = --s->refs == 0;

	pthread_mutex_unlock(&m);
	if (last)
		free(s);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	struct session *s = current;
#ifdef FIXED
	if (s)
		s->refs++;
#endif
	pthread_mutex_unlock(&m);
	if (!s)
		return NULL;
	pthread_mutex_lock(&m); /* statistics, unrelated to the session */
	pthread_mutex_unlock(&m);
	assert(s->magic == MAGIC && "session used after free");
	s->bytes += 10;
#ifdef FIXED
	put(s);
#endif
	return NULL;
}

static void *closer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	struct session *s = current;

	current = NULL;
	pthread_mutex_unlock(&m);
	if (s)
		put(s);
	return NULL;
}

int main(void)
{
	pthread_t w, c;
	struct session *s = malloc(sizeof(*s));

	s->magic = MAGIC;
	s->refs = 1;
	s->bytes = 0;
	current = s;
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&c, NULL, closer, NULL);
	pthread_join(w, NULL);
	pthread_join(c, NULL);
	printf("ok\n");
	return 0;
}
