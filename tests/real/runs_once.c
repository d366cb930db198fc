/*
 * A program whose work is done once, as make's or ninja's: the first run
 * leaves its target file, and a run that finds it does nothing.  The work
 * is a lost update that one preemption shows (an assertion).  Runs started
 * from exec do not repeat the first: a search that counted their edges as
 * explored said "PASS, complete to preemption bound 2".  With "clock" the
 * workers read the clock, so the search starts again with the clock in its
 * state keys, and the new search's first run found the target made.
 */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter, read_clock;

static void *worker(void *arg)
{
	struct timespec ts;
	int v;

	(void)arg;
	pthread_mutex_lock(&lock);
	v = counter;
	pthread_mutex_unlock(&lock);
	if (read_clock)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&lock);
	counter = v + 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *target = argc > 1 ? argv[1] : "runs_once.done";
	pthread_t a, b;

	read_clock = argc > 2 && !strcmp(argv[2], "clock");
	if (access(target, F_OK) == 0) {
		printf("up to date\n");
		return 0;
	}
	close(open(target, O_CREAT | O_WRONLY, 0644));
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(counter == 2);
	printf("built\n");
	return 0;
}
