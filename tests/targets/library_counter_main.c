/* Two threads visit a counter that lives in a shared library of the
 * program's own (library_counter.c): every instruction of the race is
 * the library's.  The visits must add up. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

void counter_visit(void);
long counter_visits(void);

static void *visitor(void *arg)
{
	counter_visit();
	return arg;
}

int main(void)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, visitor, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert(counter_visits() == 2);
	printf("%ld visits\n", counter_visits());
	return 0;
}
