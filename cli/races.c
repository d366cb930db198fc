/*
 * ptloom races: report the data races of a program (happens-before over
 * serialised executions).
 */
#include <stdio.h>
#include "cli.h"

int cmd_races(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ptloom: races: not implemented yet\n");
	return EXIT_USAGE;
}
