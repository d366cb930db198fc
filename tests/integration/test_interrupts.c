/*
 * SIGINT and SIGTERM: an interrupted exploration, replay or minimize says so
 * and keeps what it found.
 */
#include "common.h"

TestSuite(interrupts, .init = setup, .fini = teardown, .timeout = 180);

/* A shell line run with PTLOOM_TEST_INTERRUPT=where (see cli.h). */
static struct res with_interrupt(const char *where, char *const argv[])
{
	static char env[128];

	snprintf(env, sizeof(env), "PTLOOM_TEST_INTERRUPT=%s", where);
	return run_argv(argv, env, CMD_TIMEOUT);
}

Test(interrupts, interrupted_run_keeps_the_failure_it_found)
{
	char *argv[] = { (char *)ptloom(), "run", "--seed", SEED, "-o",
			 in_tmp("out"), "--report", in_tmp("report.json"),
			 "--", (char *)example("bank"), NULL };
	struct res r = with_interrupt("minimize", argv);

	assert_exit(r, 130);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT");
	assert_contains(r.out, "interrupted by SIGINT", "summary");
	assert_contains(r.out, "saved: ", "stdout");
	cr_assert_null(strstr(r.out, "could not be started"), "%s", r.out);
	char *j = report(), *saved = strdup(json_get(j, "schedule_file"));

	assert_json(j, "verdict", "fail");
	assert_json(j, "interrupted", "true");
	assert_json(j, "minimized_file", "null");
	cr_assert(access(in_tmp(saved), F_OK) == 0 || access(saved, F_OK) == 0,
		  "%s was not written", saved);
	free(j);
	res_free(&r);
	/* what was saved still replays to the failure */
	r = PTL("replay", saved, "--", example("bank"));
	assert_exit(r, 1);
	res_free(&r);
	free(saved);
}

Test(interrupts, interrupted_replay_and_minimize_say_so)
{
	char *sched = hostile_schedule(NULL);
	char *argv[] = { (char *)ptloom(), "replay", "--report",
			 in_tmp("replay.json"), sched, "--",
			 (char *)target("hostile_output"), NULL };
	struct res r = with_interrupt("replay:TERM", argv);

	assert_exit(r, 143);
	assert_summary(&r, "ptloom: INTERRUPTED by SIGTERM");
	cr_assert_null(strstr(r.out, "FAIL interrupted"), "%s", r.out);
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "verdict", "incomplete");
	assert_json(j, "interrupted", "true");
	free(j);
	res_free(&r);
	char *margv[] = { (char *)ptloom(), "minimize", "-o", in_tmp("min"),
			  sched, "--", (char *)target("hostile_output"), NULL };

	r = with_interrupt("minimize", margv);
	assert_exit(r, 130);
	assert_summary(&r, "ptloom: INTERRUPTED by SIGINT");
	cr_assert_null(strstr(r.out, "saved:"), "%s", r.out);
	cr_assert_null(strstr(r.err, "cannot write"), "%s", r.err);
	res_free(&r);
}

/* ptloom ARGS in the background, signalled after a second (a shell line:
 * the exit code is ptloom's). */
static struct res signalled(const char *sig, const char *args)
{
	char line[4096];

	snprintf(line, sizeof(line),
		 "%s %s >out.txt 2>err.txt & p=$!; sleep 1; kill -%s $p; "
		 "wait $p; c=$?; cat out.txt; cat err.txt >&2; exit $c",
		 ptloom(), args, sig);
	return sh(line);
}

Test(interrupts, signals_stop_an_exploration_with_130_or_143)
{
	char args[2048];

	/* many_threads: about 40 runs a second here, 1500 take long */
	snprintf(args, sizeof(args), "run --seed " SEED " -p 2 --max-runs "
		 "1500 --report %s -- %s", in_tmp("report.json"),
		 target("many_threads"));
	struct res r = signalled("INT", args);

	assert_exit(r, 130);
	assert_summary(&r, "ptloom: INTERRUPTED by SIGINT after ");
	cr_assert_null(strstr(r.out, "could not be started"), "%s", r.out);
	char *j = report();

	assert_json(j, "verdict", "incomplete");
	assert_json(j, "interrupted", "true");
	free(j);
	res_free(&r);
	r = signalled("TERM", args);
	assert_exit(r, 143);
	assert_summary(&r, "ptloom: INTERRUPTED by SIGTERM after ");
	res_free(&r);
}

/* A signal that reaches ptloom, or one of its -j workers, while a fork
 * checkpoint's template is being made (the handler kills the template
 * first) is an interrupt: never an internal error, and never a worker
 * the others wait for to the end of their search. */
Test(interrupts, interrupt_while_making_a_fork_checkpoint_is_an_interrupt)
{
	static const char *const strategies[][2] = { { "-s", "random" },
						     { "-p", "2" } };
	char *prog = (char *)target("many_threads");

	for (int i = 0; i < 2; i++) {
		char *argv[] = { (char *)ptloom(), "run", "--seed", SEED,
				 "-j", "2", (char *)strategies[i][0],
				 (char *)strategies[i][1], "-n", "100000", "--",
				 prog, NULL };
		struct res r = with_interrupt("worker-checkpoint:TERM", argv);

		assert_exit(r, 3);
		assert_summary(&r, "ptloom: INCOMPLETE worker 1 ");
		assert_contains(r.out, "interrupted by SIGTERM", "summary");
		res_free(&r);
	}
	char *argv[] = { (char *)ptloom(), "run", "--seed", SEED, "-p", "2",
			 "-n", "100000", "--", prog, NULL };
	struct res r = with_interrupt("checkpoint:TERM", argv);

	assert_exit(r, 143);
	assert_summary(&r, "ptloom: INTERRUPTED by SIGTERM");
	res_free(&r);
}
