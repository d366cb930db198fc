/* Bug: a writer changes a shared name from "aaa..." to "bbb..." byte by
 * byte while main compares it with `repe cmpsb` (an inlined memcmp, as
 * gcc -Os and hand-written code make one) or measures a growing one with
 * `repne scasb` (an inlined strlen): string instructions whose reads
 * stop where the data says.  argv[1] "length" measures; anything else
 * compares.  -DFIXED: both hold a mutex. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define LEN 24

static char name[LEN + 1];
static int measure;
#ifdef FIXED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif

static void *writer(void *arg)
{
	volatile char *w = name;

#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	for (int i = 0; i < (measure ? 8 : LEN); i++)
		w[i] = 'b';
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	return arg;
}

/* strlen(s) by repne scasb */
static size_t scas_length(const char *s)
{
	size_t left = (size_t)-1;

	__asm__ volatile("repne scasb"
			 : "+D"(s), "+c"(left)
			 : "a"(0)
			 : "memory", "cc");
	return ~left - 1;
}

/* the n bytes at a and b are equal, by repe cmpsb */
static int cmps_equal(const char *a, const char *b, size_t n)
{
	unsigned char eq;

	__asm__ volatile("repe cmpsb\n\tsete %0"
			 : "=q"(eq), "+S"(a), "+D"(b), "+c"(n)
			 :
			 : "memory", "cc");
	return eq;
}

int main(int argc, char **argv)
{
	static const char as[] = "aaaaaaaaaaaaaaaaaaaaaaaa";
	static const char bs[] = "bbbbbbbbbbbbbbbbbbbbbbbb";
	pthread_t t;
	int ok;

	measure = argc > 1 && !strcmp(argv[1], "length");
	if (!measure)
		memcpy(name, as, LEN);
	pthread_create(&t, NULL, writer, NULL);
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	if (measure) {
		size_t n = scas_length(name);

		ok = n == 0 || n == 8;
	} else {
		ok = cmps_equal(name, as, LEN) || cmps_equal(name, bs, LEN);
	}
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	pthread_join(t, NULL);
	assert(ok);
	printf("read whole\n");
	return 0;
}
