/*
 * The time stamp counter read from two threads between lock operations:
 * rdtsc (with the instructions after it that ptloom moves into the
 * agent's slot, tracer/tsc.c), rdtscp, and an rdtsc between a comparison
 * and the setcc instructions that read its flags.  Prints what it read:
 * under ptloom a pure function of the schedule, whether the agent answers
 * in the program or the supervisor at a stop.  Exits 1 if an rdtsc
 * changed the flags, or the counter went back.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long last, sum;
static unsigned aux_seen;
static int bad;

/* x + y, then insn (an rdtsc, or two nops of its size), then setcc's
 * reading the flags of the addition */
#define FLAGS_AFTER(insn)                                                  \
	__asm__ volatile("add %[y], %[x]\n\t" insn "\n\t"                   \
			 "seto %[o]\n\tsets %[s]\n\tsetz %[z]\n\t"             \
			 "setc %[c]\n\tsetp %[p]"                               \
			 : [x] "+r"(x), [o] "=q"(o), [s] "=q"(s), [z] "=q"(z), \
			   [c] "=q"(c), [p] "=q"(p), "=a"(lo), "=d"(hi)         \
			 : [y] "r"(y)                                         \
			 : "cc")

/* The flags of x + y read after an rdtsc (tsc) or not: overflow, sign,
 * zero, carry, parity as a 5-bit number. */
static __attribute__((noinline)) unsigned flags_after(long x, long y, int tsc)
{
	unsigned char o, s, z, c, p;
	unsigned lo, hi;

	if (tsc)
		FLAGS_AFTER("rdtsc");
	else
		FLAGS_AFTER("nop\n\tnop");
	(void)lo;
	(void)hi;
	return (unsigned)(o << 4 | s << 3 | z << 2 | c << 1 | p);
}

static void *reader(void *arg)
{
	static const long cases[][2] = {
		{ 1, 2 },  { -1, 1 }, { 0x7fffffffffffffffl, 1 },
		{ -1, -1 }, { 3, 4 }, { (long)0x8000000000000000ul, -1 },
	};

	for (int i = 0; i < 30; i++) {
		const long *k = cases[(i + (long)arg) % 6];

		if (flags_after(k[0], k[1], 1) != flags_after(k[0], k[1], 0))
			bad = 1;
		pthread_mutex_lock(&m);
		unsigned aux;
		unsigned long long t = (i & 1) ? __rdtscp(&aux) : __rdtsc();

		if (i & 1)
			aux_seen |= aux;
		if (t < last)
			bad = 1;
		sum += t - last;
		last = t;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	last = __rdtsc();
	pthread_create(&a, NULL, reader, (void *)0);
	pthread_create(&b, NULL, reader, (void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("ticks %llu aux %u %s\n", sum, aux_seen,
	       bad ? "WRONG" : "ok");
	return bad;
}
