/*
 * A program whose heap layout follows its pid's width, as node's does (its
 * inspector names the main context "/usr/bin/node[PID]", kept in UTF-16 on
 * the heap): it keeps its name with its pid in it, wide, then allocates the
 * mutex its two threads lock.  With a pid of another number of digits the
 * mutex is elsewhere, and a replay that saw it there would diverge.  It
 * always ends with exit status 1 (a failing test: every run saves its
 * schedule).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t *lock;
static int counter;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(lock);
		counter++;
		pthread_mutex_unlock(lock);
	}
	return NULL;
}

int main(void)
{
	char name[64];
	int n = snprintf(name, sizeof(name), "pid_in_a_name[%d]",
			 (int)getpid());
	/* 16 bytes a character: each width of pid in a size class of its
	 * own (node's UTF-16 name changes class only at 5 digits) */
	unsigned short *wide = malloc(((size_t)n + 1) * 16);
	pthread_t a, b;

	for (int i = 0; i <= n; i++)
		wide[i] = (unsigned char)name[i];
	lock = malloc(sizeof(*lock));
	pthread_mutex_init(lock, NULL);
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("counter %d\n", counter);
	free(wide);
	return 1;
}
