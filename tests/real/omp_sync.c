/*
 * OpenMP synchronisation on globals, for `ptloom races`: a critical
 * section, omp locks (plain and nested), barriers, single, master,
 * ordered, sections, tasks under a lock, tasks waited for with taskwait
 * and taskgroup, and copyprivate.  libgomp implements all of
 * them with its own atomics and futexes (an uncontended critical section
 * is one lock cmpxchg in libgomp; its barrier's last thread stores the
 * generation with a plain mov), so none of it is a pthread call: every
 * access below is ordered, and no race may be reported.
 * `omp_sync racy`: one more counter incremented with no synchronisation,
 * which is a race.
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

long a[64], b[4], waited, grouped, copied, crit, locked, nested, after, ord, sec1, sec2, total, racy_count;
int flag;
omp_lock_t lk;
omp_nest_lock_t nl;

int main(int argc, char **argv)
{
	int racy = argc > 1 && !strcmp(argv[1], "racy");

	omp_set_num_threads(3);
	omp_init_lock(&lk);
	omp_init_nest_lock(&nl);
#pragma omp parallel
	{
#pragma omp critical
		crit++;
		omp_set_lock(&lk);
		locked++;
		omp_unset_lock(&lk);
		if (racy)
			racy_count++;
#pragma omp barrier
#pragma omp single
		after = crit + locked;
#pragma omp for schedule(dynamic, 4)
		for (int i = 0; i < 64; i++)
			a[i] = i * 2;
#pragma omp for ordered schedule(static, 1)
		for (int i = 0; i < 12; i++) {
#pragma omp ordered
			ord = ord * 3 + i;
		}
#pragma omp sections
		{
#pragma omp section
			sec1 = a[10] + a[20];
#pragma omp section
			sec2 = a[30] + a[40];
		}
#pragma omp master
		total = sec1 + sec2;
#pragma omp barrier
		omp_set_nest_lock(&nl);
		omp_set_nest_lock(&nl);
		nested += total;
		omp_unset_nest_lock(&nl);
		omp_unset_nest_lock(&nl);
#pragma omp single
		{
			for (int t = 0; t < 6; t++) {
#pragma omp task firstprivate(t)
				{
					omp_set_lock(&lk);
					a[t] += 1;
					omp_unset_lock(&lk);
				}
			}
#pragma omp taskwait
			flag = (int)a[0];
		}
#pragma omp single
		{
			/* tasks without a lock: what they wrote is ordered
			 * before what follows only by the wait for them (a
			 * taskwait whose tasks are done returns after one
			 * acquire load, a plain mov) */
			for (int t = 0; t < 4; t++) {
#pragma omp task firstprivate(t)
				b[t] = t + 1;
			}
#pragma omp taskwait
			for (int t = 0; t < 4; t++)
				waited += b[t];
#pragma omp taskgroup
			{
				for (int t = 0; t < 4; t++) {
#pragma omp task firstprivate(t)
					b[t] *= 2;
				}
			}
			for (int t = 0; t < 4; t++)
				grouped += b[t];
		}
		/* a value one thread computes, copied into every thread's
		 * own variable */
		long mine;
#pragma omp single copyprivate(mine)
		mine = grouped + 1;
#pragma omp atomic
		copied += mine;
	}
	printf("crit %ld locked %ld after %ld ord %ld total %ld nested %ld "
	       "flag %d waited %ld grouped %ld copied %ld\n", crit, locked, after,
	       ord, total, nested, flag, waited, grouped, copied);
	return 0;
}
