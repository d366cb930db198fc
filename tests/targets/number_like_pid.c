/*
 * A number in memory that equals the main thread's id in one run and is
 * not its id: the first run stores its own pid in the file argv[1] names
 * and keeps it; every later run keeps the number it reads back from that
 * file.  Without set_tid, ptloom's fork checkpoint must tell this from a
 * thread id a run needs as its own (tracer/checkpoint.c tid_in_memory):
 * the second exec'd run still holds the first run's number.  Two threads
 * add under a lock.  Correct: exits 0.
 */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned number;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int shared;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	shared++;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	FILE *f;

	if (argc < 2)
		return 2;
	if ((f = fopen(argv[1], "r"))) {
		unsigned v = 0;

		if (fscanf(f, "%u", &v) != 1)
			return 2;
		number = v;
		fclose(f);
	} else {
		number = (unsigned)getpid();
		if (!(f = fopen(argv[1], "w")))
			return 2;
		fprintf(f, "%u\n", number);
		fclose(f);
	}
	if (pthread_create(&t, NULL, worker, NULL))
		return 2;
	pthread_mutex_lock(&m);
	shared++;
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	return shared != 2;
}
