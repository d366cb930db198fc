/* Buggy: two threads take ten turns each at one lock, and each turn notes
 * whether the other thread had the turn before.  The program claims the
 * lock never changes hands at every one of its 19 chances: true of every
 * schedule but the strict alternation of all twenty turns, 19 switches
 * (beyond any preemption bound; a walk that picks the next thread at
 * random makes it about once in 2^19 runs).
 * -DFIXED: the claim is the true bound, at most 19 hand-overs. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define TURNS 10

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int last = -1, handovers;

static void *player(void *arg)
{
	int me = (int)(long)arg;

	for (int k = 0; k < TURNS; k++) {
		pthread_mutex_lock(&lock);
		if (last >= 0 && last != me)
			handovers++;
		last = me;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, player, (void *)0L);
	pthread_create(&b, NULL, player, (void *)1L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("handovers=%d\n", handovers);
#ifdef FIXED
	assert(handovers <= 2 * TURNS - 1);
#else
	assert(handovers < 2 * TURNS - 1 && "the lock never alternates");
#endif
	return 0;
}
