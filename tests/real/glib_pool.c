/*
 * glib: a GThreadPool of two threads, a GAsyncQueue, GMutex and GCond
 * (glib's own futex-based locks: an uncontended g_mutex_lock is an atomic
 * instruction in libglib, no pthread call and no syscall).
 * `glib_pool racy`: the counter is incremented without the mutex (a lost
 * update), found with default options.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

static GMutex mu;
static GCond cond;
static long counter;
static int done, racy;

static void work(gpointer data, gpointer user)
{
	GAsyncQueue *q = user;

	for (int i = 0; i < 3; i++) {
		if (!racy)
			g_mutex_lock(&mu);
		counter++;
		if (!racy)
			g_mutex_unlock(&mu);
	}
	g_async_queue_push(q, data);
	g_mutex_lock(&mu);
	done++;
	g_cond_signal(&cond);
	g_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
	racy = argc > 1 && !strcmp(argv[1], "racy");
	GAsyncQueue *q = g_async_queue_new();
	GThreadPool *pool = g_thread_pool_new(work, q, 2, FALSE, NULL);
	long sum = 0;

	for (long i = 1; i <= 3; i++)
		g_thread_pool_push(pool, (gpointer)i, NULL);
	for (int i = 0; i < 3; i++)
		sum += (long)g_async_queue_pop(q);
	g_mutex_lock(&mu);
	while (done < 3)
		g_cond_wait(&cond, &mu);
	g_mutex_unlock(&mu);
	g_thread_pool_free(pool, FALSE, TRUE);
	g_async_queue_unref(q);
	printf("sum %ld counter %ld\n", sum, counter);
	/* aborts in libglib (g_assertion_message): the failure is named
	 * by this line, the program's own frame */
	g_assert_cmpint(counter, ==, 9);
	return 0;
}
