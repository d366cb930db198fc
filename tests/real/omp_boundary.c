/*
 * A parallel for whose iterations read the next element, which the other
 * thread's chunk writes: a race at the chunks' boundary (a[500], read in
 * the first thread's 500th iteration).  main reads that element right
 * after the region, and the region's join orders the read after every
 * write: no side of the race.
 */
#include <stdio.h>

static int a[1000];

int main(void)
{
	for (int i = 0; i < 1000; i++)
		a[i] = i;
#pragma omp parallel for num_threads(2) schedule(static)
	for (int i = 0; i < 999; i++)
		a[i] = a[i + 1] + 1;
	printf("%d\n", a[500]);
	return 0;
}
