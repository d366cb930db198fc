/*
 * A program that does not repeat itself, and hides it from a count of
 * threads: each run reads how many runs came before from a file in its
 * directory (which ptloom does not control), and every other run its
 * second thread makes other calls at the same places (semaphore calls
 * instead of mutex calls, none of them blocking), so every choice has as
 * many alternatives as in the run before, with other operations behind
 * them.  Correct; a systematic search cannot follow its prefixes: it must
 * say INCOMPLETE, never PASS "complete" over a tree it did not explore.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mine = PTHREAD_MUTEX_INITIALIZER;
static sem_t sem;
static int n, shared;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&lock);
		shared++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *other(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		if (n % 2) {
			pthread_mutex_lock(&mine);
			pthread_mutex_unlock(&mine);
		} else {
			sem_post(&sem);
			sem_trywait(&sem);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t t, u;

	sem_init(&sem, 0, 0);
	/* after the first thread: runs are not forked past the read */
	pthread_create(&t, NULL, worker, NULL);
	FILE *f = fopen("runs.txt", "r");

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	f = fopen("runs.txt", "w");
	if (f) {
		fprintf(f, "%d\n", n + 1);
		fclose(f);
	}
	pthread_create(&u, NULL, other, NULL);
	pthread_join(u, NULL);
	pthread_join(t, NULL);
	printf("done %d\n", shared);
	return 0;
}
