/*
 * OpenMP (libgomp): a thread pool reused by three parallel regions, a
 * reduction, a critical section, barriers, single + tasks, an atomic;
 * libgomp's own locks and its spin-then-futex barriers, none of them
 * pthread calls.  `omp_work racy`: a parallel for summing into a shared
 * variable without reduction (a lost update), found with default options.
 */
#include <assert.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	long sum = 0, crit = 0, tasks = 0;
	int n = 64;

	omp_set_num_threads(3);
	if (argc > 1 && !strcmp(argv[1], "racy")) {
		long s = 0;

#pragma omp parallel for
		for (int i = 0; i < n; i++)
			s += i;
		printf("sum %ld\n", s);
		assert(s == (long)n * (n - 1) / 2);
		return 0;
	}
#pragma omp parallel for reduction(+ : sum)
	for (int i = 0; i < n; i++)
		sum += i;
#pragma omp parallel
	{
#pragma omp critical
		crit++;
#pragma omp barrier
#pragma omp single
		{
			for (int t = 0; t < 4; t++) {
#pragma omp task
				{
#pragma omp atomic
					tasks++;
				}
			}
		}
	}
#pragma omp parallel for reduction(+ : sum)
	for (int i = 0; i < n; i++)
		sum += i;
	printf("sum %ld crit %ld tasks %ld\n", sum, crit, tasks);
	assert(sum == (long)n * (n - 1) && crit == 3 && tasks == 4);
	return 0;
}
