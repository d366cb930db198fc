/*
 * Ends with exit status 1, as grep finding nothing or a failing test does,
 * after two threads each add to a counter under a lock and one of them
 * also to a plain one without it: a data race, seen in every run that ran
 * to that end.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int locked, unlocked;

static void *worker(void *arg)
{
	pthread_mutex_lock(&lock);
	locked++;
	pthread_mutex_unlock(&lock);
	if (arg)
		unlocked++;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	(void)argv;
	pthread_create(&a, NULL, worker, argc > 1 ? &a : NULL);
	pthread_create(&b, NULL, worker, NULL);
	unlocked++;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%d %d\n", locked, unlocked);
	return 1;
}
