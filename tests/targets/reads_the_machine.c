/*
 * A program whose run depends on what the machine's momentary state
 * answers, as a runtime's may (a pool sized by free memory, a loop that
 * backs off with the load average, a test that prints its CPU time):
 * its main thread locks a mutex as many times as getrusage, times and
 * sysinfo say, then two threads lose an update (exit status 1).  Natively
 * these differ from run to run; under ptloom they are the run's.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int counter;

static void lock_times(unsigned long n)
{
	for (unsigned long i = 0; i < n % 61 + 1; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
}

static void *worker(void *arg)
{
	struct rusage ru;

	(void)arg;
	getrusage(RUSAGE_THREAD, &ru);
	lock_times((unsigned long)(ru.ru_utime.tv_usec + ru.ru_nvcsw +
				   ru.ru_nivcsw + ru.ru_minflt));
	int v = counter;

	sched_yield();
	counter = v + 1;
	return NULL;
}

int main(void)
{
	struct rusage ru;
	struct sysinfo si;
	struct tms tm;
	pthread_t a, b;

	getrusage(RUSAGE_SELF, &ru);
	lock_times((unsigned long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec +
				   ru.ru_minflt + ru.ru_nvcsw + ru.ru_nivcsw));
	lock_times((unsigned long)times(&tm) + (unsigned long)tm.tms_stime);
	sysinfo(&si);
	lock_times(si.loads[0] + si.freeram / 4096 + (unsigned long)si.uptime +
		   si.procs);
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("counter %d\n", counter);
	return counter == 2 ? 0 : 1;
}
