/*
 * Writes its pid to argv[1], then computes until someone kills it: the
 * test SIGKILLs it from outside ptloom.
 */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile unsigned long x = 0;

	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	for (;;)
		x++;
}
