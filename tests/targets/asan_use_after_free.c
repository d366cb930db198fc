/*
 * Built with -fsanitize=address by the process_trees tests (skipped when
 * the compiler cannot): without arguments, a heap use after free that
 * AddressSanitizer reports before it exits with status 1 (no signal);
 * with an argument, an ordinary exit(1) of the same instrumented program;
 * with "ok", a correct program that exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "ok")) {
		free(malloc(8)); /* correct: nothing leaks, nothing is used */
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "an ordinary failure\n");
		exit(1);
	}
	char *p = malloc(8);
	volatile int i = 0;

	p[0] = 'x';
	free(p);
	return p[i] == 'x'; /* heap-use-after-free */
}
