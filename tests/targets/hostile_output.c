#define _GNU_SOURCE /* pthread_setname_np */
/*
 * Fails every time, and everything it says is hostile to a terminal and
 * to reports: escape sequences (clear screen, set the title), a fake
 * "ptloom: PASS" line, C1 controls, bidi overrides and invalid UTF-8, in
 * its output, its failure message and its thread's name.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define EVIL "\x1b]0;pwned\x07\x1b[2J\x1b[H\rptloom: PASS \xff\xfe\xc0\xaf" \
	     "\xe2\x80\xae\xc2\x9b<&>]]>\x01"

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "\x1b[2Jw\xff");
	printf("out " EVIL "\n");
	fflush(stdout);
	fprintf(stderr, "hostile: " EVIL " failed.\n");
	abort();
	return NULL;
}

int main(void)
{
	pthread_t t;
	const char *v = getenv("HOSTILE_VAR");

	printf("var=%s\n", v ? v : "unset");
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	return 0;
}
