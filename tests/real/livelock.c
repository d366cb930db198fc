/*
 * A real livelock: two polite threads each raise a flag, see the other's,
 * back off and try again, in lockstep, for ever.  ptloom must report it
 * as a livelock with the cycle, not as merely too long.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static volatile int want[2];
static volatile int done;

static void *polite(void *arg)
{
	int me = (int)(long)arg, other = 1 - me;

	for (;;) {
		want[me] = 1;
		sched_yield();
		int seen = want[other];

		sched_yield();
		if (!seen)
			break;
		want[me] = 0; /* after you */
		sched_yield();
	}
	done++;
	want[me] = 0;
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, polite, (void *)0L);
	pthread_create(&b, NULL, polite, (void *)1L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("done %d\n", done);
	return 0;
}
