/*
 * Correct: reads the CPU's random numbers (rdrand in 16, 32 and 64 bits,
 * rdseed), as libstdc++'s std::random_device does, and prints them with
 * the carry flag each left (1: a number is there) and the bits above a
 * 16-bit result, which rdrand keeps.  Under ptloom they come from the
 * run's --seed stream: the same output in every invocation with one seed.
 * Prints "unsupported" on a CPU without rdrand.
 */
#include <cpuid.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

static void *nothing(void *arg)
{
	return arg;
}

int main(void)
{
	unsigned a, b, c, d;
	uint64_t r64 = 0, s64 = 0;
	uint32_t r32 = 0;
	uint64_t r16 = 0xabcdef0000000000ull;
	unsigned char c64, c32, c16, cs = 0;
	int seed = 0;
	pthread_t t;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 30))) {
		printf("unsupported\n");
		return 0;
	}
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
		seed = (b >> 18) & 1;
	__asm__ volatile("rdrand %0; setc %1" : "=r"(r64), "=qm"(c64) : : "cc");
	__asm__ volatile("rdrand %0; setc %1" : "=r"(r32), "=qm"(c32) : : "cc");
	__asm__ volatile("rdrand %w0; setc %1"
			 : "+r"(r16), "=qm"(c16)
			 :
			 : "cc");
	if (seed)
		__asm__ volatile("rdseed %0; setc %1"
				 : "=r"(s64), "=qm"(cs)
				 :
				 : "cc");
	/* a thread, so that the run has a schedule */
	pthread_create(&t, NULL, nothing, NULL);
	pthread_join(t, NULL);
	printf("rdrand64=%016llx/%d rdrand32=%08x/%d rdrand16=%016llx/%d "
	       "rdseed=%016llx/%d\n",
	       (unsigned long long)r64, c64, r32, c32, (unsigned long long)r16,
	       c16, (unsigned long long)s64, cs);
	return 0;
}
