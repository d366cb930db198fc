/* Bug: two threads convert their own times with gmtime, which returns
 * libc's one static struct tm: the other thread's call can overwrite it
 * before this one reads its year.  -DFIXED: gmtime_r, into a struct tm of
 * the thread's own. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void *year_of(void *arg)
{
	time_t when = (time_t)(long)arg;
#ifdef FIXED
	struct tm mine;
	struct tm *tm = gmtime_r(&when, &mine);
#else
	struct tm *tm = gmtime(&when);
#endif
	int year = tm->tm_year + 1900;

	assert(year == (when ? 2000 : 1970));
	return arg;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, year_of, (void *)0L);
	pthread_create(&b, NULL, year_of, (void *)946684800L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("1970 and 2000\n");
	return 0;
}
