#include <stdio.h>
#include "cli.h"

int cmd_show(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return EXIT_USAGE;
}

int cmd_races(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return EXIT_USAGE;
}
