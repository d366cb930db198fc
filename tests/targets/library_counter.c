/* A shared library of the program's own build (library_counter_main.c
 * links it, found through its RPATH): a visit counter whose increment is
 * a read, then a write, without a lock, so two threads can lose a visit.
 * -DFIXED: a mutex around it. */
#include <pthread.h>

static long visits;
#ifdef FIXED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif

void counter_visit(void)
{
#ifdef FIXED
	pthread_mutex_lock(&lock);
#endif
	long seen = visits;

	visits = seen + 1;
#ifdef FIXED
	pthread_mutex_unlock(&lock);
#endif
}

long counter_visits(void)
{
	return visits;
}
