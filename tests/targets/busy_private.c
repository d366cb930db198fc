/* Correct and access-heavy: two threads each read a private heap array
 * through 1,000 distinct load instructions, many times (each instruction
 * executes 5,000 times a thread: even with each hot instruction sampled
 * only 256 times, more observation stops a run than race discovery's
 * budget).  The main thread reads both results after join.  No race:
 * discovery must end early, not repeat six runs for nothing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 128
#define ROUNDS 5000
#define X s += a[(__COUNTER__ * 7) % N];
#define X10 X X X X X X X X X X
#define X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10
#define X1000 X100 X100 X100 X100 X100 X100 X100 X100 X100 X100

static void *sum(void *arg)
{
	volatile long *a = arg;
	long s = 0;

	for (int r = 0; r < ROUNDS; r++) {
		X1000
	}
	a[0] = s;
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	long *a[2];

	for (int k = 0; k < 2; k++) {
		a[k] = calloc(N, sizeof(long));
		if (!a[k])
			return 1;
		for (int i = 0; i < N; i++)
			a[k][i] = i * (k + 1);
		pthread_create(&t[k], NULL, sum, a[k]);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	printf("%ld %ld\n", a[0][0], a[1][0]);
	free(a[0]);
	free(a[1]);
	return 0;
}
