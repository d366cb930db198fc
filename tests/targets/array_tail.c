/* A writer fills an array in one loop while main reads its last element
 * twice: the two reads differ when the writer's last store falls between
 * them.  That store is the loop's N-th run of one instruction, past the
 * 256 observations of an instruction race discovery kept before session
 * 41 (then: "PASS, complete to preemption bound 2").
 *   array_tail [N]     N elements (default 400, at most 4096)
 *   array_tail fixed   main reads after joining the writer */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int a[4096];
static int n = 400;

static void *writer(void *arg)
{
	volatile int *p = a;

	for (int i = 0; i < n; i++)
		p[i] = 1;
	return arg;
}

int main(int argc, char **argv)
{
	int fixed = argc > 1 && !strcmp(argv[1], "fixed");
	volatile int *last;
	pthread_t t;

	if (argc > 1 && !fixed)
		n = atoi(argv[1]);
	if (n < 1 || n > 4096)
		return 2;
	last = &a[n - 1];
	pthread_create(&t, NULL, writer, NULL);
	if (fixed)
		pthread_join(t, NULL);
	int x = *last;
	int y = *last;

	assert(x == y);
	if (!fixed)
		pthread_join(t, NULL);
	printf("%d %d\n", x, y);
	return 0;
}
