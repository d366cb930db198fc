/* Buggy (a torn snapshot): a writer fills a record of 64 words with one
 * value after another, element by element, while the main thread copies
 * the record with memcpy and then checks that the copy holds one value.
 * The copy is libc's (or, at -O2, a `rep movsq` gcc makes of it): a
 * race whose reading side no instruction of the program shows as an
 * access.  With "clear" the writer empties the record with memset
 * between its two values.  -DFIXED: both hold a mutex. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define WORDS 64

struct record {
	long word[WORDS];
};

static struct record shared;
#ifdef FIXED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif
static int clear;

static void *writer(void *arg)
{
	for (long v = 1; v <= 2; v++) {
#ifdef FIXED
		pthread_mutex_lock(&lock);
#endif
		if (clear)
			memset(&shared, 0, sizeof(shared));
		for (int i = 0; i < WORDS; i++)
			shared.word[i] = v;
#ifdef FIXED
		pthread_mutex_unlock(&lock);
#endif
	}
	return arg;
}

int main(int argc, char **argv)
{
	static struct record copy;
	pthread_t t;

	clear = argc > 1 && !strcmp(argv[1], "clear");
	pthread_create(&t, NULL, writer, NULL);
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	/* (its length from argc: a call, or a rep movsq, not moves the
	 * compiler unrolls) */
	memcpy(&copy, &shared, sizeof(copy) - (size_t)(argc > 9));
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	pthread_join(t, NULL);
	for (int i = 1; i < WORDS; i++)
		assert(copy.word[i] == copy.word[0]);
	printf("copied %ld\n", copy.word[0]);
	return 0;
}
