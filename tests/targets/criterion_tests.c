/*
 * A Criterion test binary (Criterion forks and re-execs one worker per
 * test, talks to it over nanomsg, and stops it with SIGSTOP handshakes).
 * Correct: suite/locked (two threads add under a mutex) and suite/plain.
 * -DRACY: suite/racy, a lost update across two threads in one test
 * (`v = counter; counter = v + 1;` unlocked); natively it nearly always
 * passes.  -DSUITE: the three tests in one binary (test-suite mode,
 * tests/integration/test_suite_mode.c, bench/suite.sh).  -DBARE: the correct tests without Criterion, one after the
 * other in main (what Criterion's fork costs, bench/processes.sh).
 */
#ifdef BARE
/* the same test bodies in one plain process, for bench/processes.sh */
#include <stdlib.h>
#define Test(suite, name) static void suite##_##name(void)
#define cr_assert_eq(a, b, ...)                                               \
	do {                                                                  \
		if ((a) != (b))                                               \
			abort();                                              \
	} while (0)
#else
#include <criterion/criterion.h>
#endif
#include <pthread.h>

static volatile int counter;

#if defined(RACY) || defined(SUITE)
static void *add_racy(void *arg)
{
	(void)arg;
	int v = counter;

	counter = v + 1;
	return NULL;
}

Test(suite, racy)
{
	pthread_t a, b;

	pthread_create(&a, NULL, add_racy, NULL);
	pthread_create(&b, NULL, add_racy, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	cr_assert_eq(counter, 2, "lost update: counter %d", counter);
}
#endif
#if !defined(RACY) || defined(SUITE)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *add_locked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	counter = counter + 1;
	pthread_mutex_unlock(&lock);
	return NULL;
}

Test(suite, locked)
{
	pthread_t a, b;

	pthread_create(&a, NULL, add_locked, NULL);
	pthread_create(&b, NULL, add_locked, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	cr_assert_eq(counter, 2, "counter %d", counter);
}

Test(suite, plain)
{
	cr_assert_eq(1 + 1, 2);
}
#endif

#ifdef BARE
int main(void)
{
	suite_locked();
	counter = 0;
	suite_plain();
	return 0;
}
#endif
