/*
 * Test-suite mode (cli/suite.c): `ptloom run --per-test` explores every
 * test a runner starts on its own.
 */
#ifndef PTLOOM_SUITE_H
#define PTLOOM_SUITE_H

#include <stdbool.h>
#include "cli.h"

/*
 * Run the command once, exploring each test it starts at the test's exec
 * (a nested ptloom with the options fwd; up to jobs at a time, each test
 * held at its exec until its own is done), then report one verdict per
 * test.  Returns 1 with the exit code in *code, or 0 when the command
 * started no test (one program: explore it as usual).
 */
/* suite_time > 0 (--suite-time): that many seconds of wall time for all
 * the tests' explorations, shared fairly (the command runs once first to
 * count its tests); max_time (--max-time, 0: none) caps each share. */
int suite_run(const struct program *prog, const struct common_opts *co,
	      struct session_config *base, char *const *fwd, int nfwd,
	      bool verbose, int jobs, int bound, double suite_time,
	      double max_time, int *code);

#endif
