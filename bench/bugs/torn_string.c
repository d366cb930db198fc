/* Buggy (a torn string): a writer changes a shared name from "aaa..." to
 * "bbb..." byte by byte while the main thread reads it with one of
 * libc's string functions and checks what it read.  The reads are
 * libc's, inside strcpy, strcmp, strchr, memcmp, strcat, strlen, strstr,
 * strspn or atol: a race whose reading side no instruction of the
 * program shows as an access.  The function is chosen by argv[1] ("copy",
 * the default, "compare", "find", "memcmp", "append", "search", "span",
 * "length": the name grows from empty instead, "parse": a number's
 * digits 1 become 2).  -DFIXED: both hold a mutex. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 24

static char name[LEN + 1];
static const char *mode = "copy";
#ifdef FIXED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif

static void *writer(void *arg)
{
	volatile char *w = name;
	int parse = !strcmp(mode, "parse");
	int n = strcmp(mode, "length") && !parse ? LEN : 8;

#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	for (int i = 0; i < n; i++)
		w[i] = parse ? '2' : 'b';
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	return arg;
}

/* s holds one letter only */
static int uniform(const char *s)
{
	for (int i = 1; s[i]; i++)
		if (s[i] != s[0])
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	static const char as[] = "aaaaaaaaaaaaaaaaaaaaaaaa";
	static const char bs[] = "bbbbbbbbbbbbbbbbbbbbbbbb";
	char buf[2 * LEN + 2];
	pthread_t t;
	int ok;

	if (argc > 1)
		mode = argv[1];
	if (!strcmp(mode, "parse"))
		memcpy(name, "11111111", 8);
	else if (strcmp(mode, "length"))
		memcpy(name, as, LEN);
	pthread_create(&t, NULL, writer, NULL);
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	if (!strcmp(mode, "compare")) {
		ok = !strcmp(name, as) || !strcmp(name, bs);
	} else if (!strcmp(mode, "find")) {
		ok = !strchr(name, 'a') || !strchr(name, 'b');
	} else if (!strcmp(mode, "memcmp")) {
		ok = !memcmp(name, as, LEN) || !memcmp(name, bs, LEN);
	} else if (!strcmp(mode, "append")) {
		strcpy(buf, "x");
		strcat(buf, name);
		ok = uniform(buf + 1);
	} else if (!strcmp(mode, "search")) {
		ok = !strstr(name, "ba");
	} else if (!strcmp(mode, "span")) {
		size_t n = strspn(name, "b");

		ok = n == 0 || n == LEN;
	} else if (!strcmp(mode, "parse")) {
		long v = atol(name);

		ok = v == 11111111 || v == 22222222;
	} else if (!strcmp(mode, "length")) {
		size_t n = strlen(name);

		ok = n == 0 || n == 8;
	} else {
		strcpy(buf, name);
		ok = uniform(buf);
	}
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
	pthread_join(t, NULL);
	assert(ok);
	printf("%s: read whole\n", mode);
	return 0;
}
