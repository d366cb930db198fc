/*
 * A program that does not repeat itself: each run reads how many runs
 * came before from a file in its directory (a file an earlier run left,
 * which ptloom does not control) and every other run has a thread more.
 * Correct, but the runs of a systematic search cannot follow the prefixes
 * it gives them: INCOMPLETE, saying why, never an internal error.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int n, shared;

static void work(int times)
{
	for (int i = 0; i < times; i++) {
		pthread_mutex_lock(&lock);
		shared++;
		pthread_mutex_unlock(&lock);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	work(2);
	return NULL;
}

int main(void)
{
	pthread_t t;

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
	pthread_t u;

	if (n % 2) /* every other run has a thread more */
		pthread_create(&u, NULL, worker, NULL);
	work(1);
	if (n % 2)
		pthread_join(u, NULL);
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
