/*
 * Correct: a flag word written before the threads start and only tested
 * after, by `test $imm, mem` (the instruction a compiler makes of
 * `if (flags & 5)`, here by hand so that every build has it).  Two
 * threads reading one word do not race.
 */
#include <pthread.h>
#include <stdio.h>

static unsigned char flags;
static int hits[2];

static void *reader(void *arg)
{
	int *h = arg;

	for (int i = 0; i < 4; i++) {
		unsigned char set;

		__asm__ volatile("testb $5, %1\n\tsetnz %0"
				 : "=r"(set)
				 : "m"(flags)
				 : "cc");
		*h += set;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	flags = 4;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, &hits[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%d %d\n", hits[0], hits[1]);
	return hits[0] == 4 && hits[1] == 4 ? 0 : 1;
}
