/*
 * ptloom replay / minimize: follow a recorded schedule.
 */
#include <stdio.h>
#include "cli.h"

int cmd_replay(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ptloom: replay: not yet\n");
	return EXIT_USAGE;
}

int cmd_minimize(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return EXIT_USAGE;
}
