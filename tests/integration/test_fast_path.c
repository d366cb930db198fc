/*
 * The fast path: the in-process agent (tracer/agent.c) answers clock reads
 * inside the program instead of at ptrace stops, and its trampolines
 * (tracer/tramp.c) take libc's synchronisation calls there while no other
 * thread can run; nothing about a run changes: the same runs (trace
 * hashes), verdicts, output and schedule files with it on and off
 * (--no-fast-path, PTLOOM_NO_FAST_PATH=1).
 */
#include <math.h>

#include "common.h"

TestSuite(fast_path, .init = setup, .fini = teardown, .timeout = 300);

struct sampled {
	int code;
	char digest[40];  /* "trace digest ... over N runs" */
	char *out;	  /* stdout */
	char *err;	  /* stderr */
	double clock;	  /* clock stops a run */
	double in_prog;	  /* clock reads answered in the program a run */
	double calls;	  /* sync-call stops a run */
	double calls_in;  /* sync calls taken in the program a run */
	double wakes;	  /* futex-wake stops a run */
	double wakes_in;  /* futex wakes taken in the program a run */
	double handovers; /* hand-overs between threads in the program */
};

static double per_run(const char *err, const char *kind)
{
	const char *l = strstr(err, "ptloom: stops per run by kind:");
	char key[64];
	double v = 0;

	if (!l)
		return -1;
	snprintf(key, sizeof(key), " %s ", kind);
	const char *k = strstr(l, key);
	const char *eol = strchr(l, '\n');

	if (k && (!eol || k < eol))
		sscanf(k + strlen(key), "%lf", &v);
	return v;
}

/* Each of `off`'s stops of a kind is, with the agent, a stop (`on`) or
 * taken in the program (`in`): per-run means printed to a tenth, so
 * their sum may round apart by a tenth. */
static void expect_split(double on, double in, double off, const char *what)
{
	cr_expect(fabs(on + in - off) < 0.15,
		  "%.1f + %.1f %s with the agent, %.1f without", on, in, what,
		  off);
}

/* `ptloom run <opts> -- program`, with the agent or without it */
static struct sampled sample_argv(const char *program,
				  const char *const *opts, bool fast,
				  const char *const *args)
{
	char *argv[MAXARGS];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = "run";
	for (int i = 0; opts[i] && n < MAXARGS - 5; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "--";
	argv[n++] = (char *)program;
	for (int i = 0; args && args[i] && n < MAXARGS - 1; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	setenv("PTLOOM_STATS", "1", 1);
	struct res r = run_argv(argv, fast ? "PTLOOM_NO_FAST_PATH=0"
					   : "PTLOOM_NO_FAST_PATH=1",
				CMD_TIMEOUT);
	unsetenv("PTLOOM_STATS");
	struct sampled s = { .code = r.code };
	const char *d = strstr(r.err, "ptloom: trace digest ");

	cr_assert_not_null(d, "`%s` (fast path %s) printed no trace digest:\n"
			      "%s%s", r.cmd, fast ? "on" : "off", r.out, r.err);
	sscanf(d, "ptloom: trace digest %39[^\n]", s.digest);
	s.clock = per_run(r.err, "clock");
	s.in_prog = per_run(r.err, "clock-in-program(no stop)");
	s.calls = per_run(r.err, "sync-call");
	s.calls_in = per_run(r.err, "sync-call-in-program(no stop)");
	s.wakes = per_run(r.err, "futex-wake");
	s.wakes_in = per_run(r.err, "futex-wake-in-program(no stop)");
	s.handovers = per_run(r.err, "hand-over-in-program(no stop)");
	s.out = strdup(r.out);
	s.err = strdup(r.err);
	res_free(&r);
	return s;
}

/* The same exploration with the agent and without it: the same exit
 * code, the same runs, the same output; returns the two. */
static void same_runs(const char *program, const char *const *opts,
		      struct sampled *on, struct sampled *off)
{
	*on = sample_argv(program, opts, true, NULL);
	*off = sample_argv(program, opts, false, NULL);
	cr_expect_eq(on->code, off->code, "%s: exit %d with the fast path, %d "
		     "without", program, on->code, off->code);
	cr_expect_str_eq(on->digest, off->digest,
			 "%s: other runs with the fast path than without",
			 program);
	cr_expect_str_eq(on->out, off->out,
			 "%s: other output with the fast path", program);
	cr_expect(off->in_prog == 0, "%s: clock reads answered in the "
		  "program with --no-fast-path", program);
	cr_expect(off->calls_in == 0, "%s: sync calls taken in the "
		  "program with --no-fast-path", program);
}

static void sampled_free(struct sampled *s)
{
	free(s->out);
	free(s->err);
}

/* same_runs() when only its checks matter */
static void check_same_runs(const char *program, const char *const *opts)
{
	struct sampled on, off;

	same_runs(program, opts, &on, &off);
	sampled_free(&on);
	sampled_free(&off);
}

static const char *const RANDOM8[] = { "-s", "random", "-n", "8",
					"--seed", "5", "--clock-start",
					"1767225600", "--no-minimize", NULL };

/* Every example program, correct or not. */
Test(fast_path, same_runs_on_the_examples)
{
	static const char *const names[] = {
		"bank", "bank_fixed", "mutex_condvar", "sleeps", "pipe",
		"barrier", "rwlock", "semaphore", "join_many", "deadlock",
		"deadlock_fixed", "lost_wakeup", "lost_wakeup_fixed"
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		check_same_runs(example(names[i]), RANDOM8);
}

/* Programs whose runs read the clock, wait with deadlines, take timers
 * and signals, fork and exec, share memory between processes, handle
 * their own traps, and the bug corpus's. */
Test(fast_path, same_runs_on_clocks_timers_processes_and_the_bug_corpus)
{
	static const char *const names[] = {
		"clock_reads", "clock_reads_static", "alarm_between_stores",
		"sleep_assume",
		"timedlock_abort", "clock_after_merge", "clock_after_merge_fixed",
		"fork_exec", "fork_race", "sigchld_wait", "thread_ids",
		"determinism", "plain_inc_O2", "wsq_O2", "twostage_O0",
		"rwlock_recheck_fixed_O2",
		"shared_memory_processes_fixed", "shared_ring_processes",
		"own_traps", "handler_in_its_only_thread"
		/* (calls_while_others_wait under RANDOM8: the same
		 * exploration as sync_calls_taken_in_the_program_while_others_
		 * wait's, which checks the same runs and more) */
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		check_same_runs(target(names[i]), RANDOM8);
}

/* The systematic search (bounded DFS with its state cache and race
 * discovery) makes the same runs too. */
Test(fast_path, same_runs_in_the_systematic_search)
{
	static const char *const opts[] = { "-n", "120", "--seed", "5",
					     "--clock-start", "1767225600",
					     "--no-minimize", NULL };

	check_same_runs(target("clock_reads"), opts);
	check_same_runs(target("sleep_assume"), opts);
	/* (mutex_condvar, which reads no clock: futex_wakes_taken_in_the_
	 * program makes this exploration, the same trace digest without
	 * --clock-start, and checks the same runs and more) */
}

/* `ptloom races` of program with the access slots or without them: its
 * report with the first line (the seconds) cut, how many of the
 * observation stops were logged in the program instead, how many
 * discovery runs failed */
static char *races_budget(const char *program, const char *budget,
			  bool fast, unsigned long long *logged,
			  unsigned long long *stops, int *failed)
{
	char *argv[] = { (char *)ptloom(), "races", "--seed", "5", "--budget",
			 (char *)budget, "--", (char *)program, NULL };

	setenv("PTLOOM_STATS", "1", 1);
	struct res r = run_argv(argv, fast ? "PTLOOM_NO_FAST_PATH=0"
					   : "PTLOOM_NO_FAST_PATH=1",
				CMD_TIMEOUT);
	unsetenv("PTLOOM_STATS");
	const char *l = strstr(r.err, "observation stops (");
	const char *body = strchr(r.out, '\n');

	cr_assert_not_null(l, "`%s`: no discovery statistics\n%s", r.cmd,
			   r.err);
	const char *f = strstr(r.err, "ptloom: race discovery ");

	*failed = -1;
	if (f)
		sscanf(f, "ptloom: race discovery %*d runs (%d failed)", failed);
	*logged = *stops = 0;
	sscanf(l, "observation stops (%llu", logged);
	while (l > r.err && l[-1] != ',')
		l--;
	sscanf(l, " %llu", stops);
	char *report = strdup(body ? body : "");

	res_free(&r);
	return report;
}

static char *races_of(const char *program, bool fast,
		      unsigned long long *logged, unsigned long long *stops,
		      int *failed)
{
	return races_budget(program, "50000", fast, logged, stops, failed);
}

/* Race discovery's observation points on instructions of 5 bytes or more
 * are access slots (tracer/tramp.c) that log the address in the program:
 * the same races with them and without them, the same number of
 * observations, some of them logged (PIE and static executables, -O2
 * code, a work-stealing queue's). */
Test(fast_path, race_discovery_observes_in_the_program)
{
	static const char *const names[] = { "plain_inc_O2", "wsq_O2",
					     "bank_nolock_static",
					     "bank_nolock_O2",
					     "bank_nolock_O2_stripped",
					     "counter_race_O2_stripped" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		unsigned long long l_on, l_off, s_on, s_off;
		int f_on, f_off;
		char *on = races_of(target(names[i]), true, &l_on, &s_on,
				    &f_on);
		char *off = races_of(target(names[i]), false, &l_off, &s_off,
				     &f_off);

		cr_expect_str_eq(on, off, "%s: other races with the access "
				 "slots than without", names[i]);
		cr_expect_eq(s_on, s_off, "%s: %llu observations with the "
			     "slots, %llu without", names[i], s_on, s_off);
		cr_expect_eq(f_on, f_off, "%s: %d discovery runs failed with "
			     "the slots, %d without", names[i], f_on, f_off);
		cr_expect_gt(l_on, 0, "%s: no observation logged in the "
			     "program", names[i]);
		cr_expect_eq(l_off, 0, "%s: %llu observations logged without "
			     "the fast path", names[i], l_off);
		cr_expect(strstr(on, "race") != NULL, "%s: no race found:\n%s",
			  names[i], on);
		free(on);
		free(off);
	}
}

/* free() and realloc(), which race discovery observes to forget a block,
 * are logged in the program too (tramp_emit_free: the block, its chunk
 * header at the call, the return address): the same races and
 * observations as at their stops.  Of the about 6,900 observations
 * logged here some 3,200 are those calls (3,690 without them). */
Test(fast_path, race_discovery_takes_free_in_the_program)
{
	unsigned long long l_on, l_off, s_on, s_off;
	int f_on, f_off;
	char *on = races_of(target("frees_beside_a_race"), true, &l_on, &s_on,
			    &f_on);
	char *off = races_of(target("frees_beside_a_race"), false, &l_off,
			     &s_off, &f_off);

	cr_expect_str_eq(on, off, "other races with the slots than without");
	cr_expect_eq(s_on, s_off, "%llu observation stops with the slots, "
		     "%llu without", s_on, s_off);
	cr_expect_eq(f_on, f_off, "%d discovery runs failed with the slots, "
		     "%d without", f_on, f_off);
	cr_expect_geq(l_on, 5500, "%llu observations logged in the program: "
		      "free and realloc not among them?", l_on);
	assert_contains(on, "race on racy", "the report");
	for (const char *r = strstr(on, "race on"); r;
	     r = strstr(r + 1, "race on"))
		cr_expect(!strncmp(r, "race on racy", 12),
			  "a race on a heap block:\n%s", on);
	free(on);
	free(off);
}

/* A budget spent at a stop by the accesses logged before it: the
 * observation points go, and an int3 the thread had already met is not
 * the program's (before, it was sent SIGTRAP and died); the same
 * observations and races as at stops. */
Test(fast_path, a_budget_spent_by_logged_accesses_ends_observation_in_step)
{
	unsigned long long l_on, l_off, s_on, s_off;
	int f_on, f_off;
	char *on = races_budget(target("bank_nolock_static"), "40", true,
				&l_on, &s_on, &f_on);
	char *off = races_budget(target("bank_nolock_static"), "40", false,
				 &l_off, &s_off, &f_off);

	cr_expect_str_eq(on, off, "other races with the access slots");
	cr_expect_eq(s_on, s_off, "%llu observations with the slots, %llu "
		     "without", s_on, s_off);
	cr_expect_gt(l_on, 0, "no observation logged in the program");
	cr_expect_eq(f_on, f_off, "%d discovery runs failed with the slots, "
		     "%d without", f_on, f_off);
	free(on);
	free(off);
}

/* A program that recovers from its own fault (as Go recovers from a nil
 * dereference) at an instruction in an access slot: its handler sees the
 * fault at the program's instruction, as at the int3, so no discovery run
 * fails (tests/targets/fault_recovered.c exits 3 if its handler saw the
 * fault elsewhere), and the races are the same. */
Test(fast_path, a_fault_caught_in_an_access_slot_is_seen_in_place)
{
	char *argv[] = { (char *)ptloom(), "races", "--seed", "5", "--",
			 (char *)target("fault_recovered"), NULL };
	char *rep[2];

	for (int fast = 0; fast < 2; fast++) {
		setenv("PTLOOM_STATS", "1", 1);
		struct res r = run_argv(argv, fast ? "PTLOOM_NO_FAST_PATH=0"
						   : "PTLOOM_NO_FAST_PATH=1",
					CMD_TIMEOUT);
		unsetenv("PTLOOM_STATS");
		unsigned long long logged = 0;
		const char *l = strstr(r.err, "observation stops (");

		assert_contains(r.err, "race discovery 24 runs (0 failed)",
				r.cmd);
		cr_assert_not_null(l, "%s", r.err);
		sscanf(l, "observation stops (%llu", &logged);
		if (fast)
			cr_expect_gt(logged, 0, "no access logged:\n%s", r.err);
		const char *body = strchr(r.out, '\n');

		rep[fast] = strdup(body ? body : "");
		res_free(&r);
	}
	cr_expect_str_eq(rep[0], rep[1], "other races with the access slots");
	free(rep[0]);
	free(rep[1]);
}

/* glibc's futex wakes (a mutex's unlock finding a waiter, a condition
 * variable's signal) made while no other thread can run, or while the
 * strategy's coming picks are known, are taken in the program: the same
 * runs, each wake either a stop or taken in the program, and without the
 * agent every one a stop. */
Test(fast_path, futex_wakes_taken_in_the_program)
{
	static const char *const random[] = { "-s", "random", "-n", "8",
					      "--seed", "5", "--points", "sync",
					      "--no-minimize", NULL };
	static const char *const dfs[] = { "-n", "120", "--seed", "5",
					   "--no-minimize", NULL };
	struct sampled on, off;

	same_runs(target("lock_loop"), random, &on, &off);
	cr_expect_eq(on.code, 0, "exit %d:\n%s", on.code, on.err);
	cr_expect(on.wakes_in >= off.wakes / 3, "%.1f of %.1f futex wakes a "
		  "run taken in the program", on.wakes_in, off.wakes);
	expect_split(on.wakes, on.wakes_in, off.wakes, "futex wakes");
	cr_expect(off.wakes_in == 0, "%.1f futex wakes in the program "
		  "without the agent", off.wakes_in);
	sampled_free(&on);
	sampled_free(&off);
	/* condition variables, under the systematic search's state keys
	 * (the program's memory and registers after a wake taken in the
	 * program are the stop's) */
	same_runs(example("mutex_condvar"), dfs, &on, &off);
	cr_expect(on.wakes_in > 0, "no futex wake taken in the program");
	expect_split(on.wakes, on.wakes_in, off.wakes, "futex wakes");
	sampled_free(&on);
	sampled_free(&off);
	check_same_runs(example("semaphore"), dfs);
	check_same_runs(example("barrier"), dfs);
}

/* Clock reads are answered in the program: none is a stop with the
 * agent, every one is without it, and the program reads the same values
 * (the invalid clock id's error too). */
Test(fast_path, clock_reads_answered_in_the_program)
{
	static const char *const opts[] = { "-s", "random", "-n", "5", "--seed",
					    "5", "--clock-start", "1767225600",
					    "--output", NULL };
	struct sampled on, off;

	same_runs(target("clock_reads"), opts, &on, &off);
	cr_expect(on.in_prog >= 400, "%.1f clock reads a run in the program",
		  on.in_prog);
	/* the invalid id and clock_getres are the kernel's to answer: the
	 * agent makes the syscall, as the vDSO does */
	cr_expect(on.clock == 2, "%.1f clock stops a run with the agent",
		  on.clock);
	cr_expect(off.clock >= 400, "%.1f clock stops a run without it",
		  off.clock);
	assert_contains(on.out, "invalid -22", "the output");
	assert_contains(on.out, "monotonic 1000", "the output");
	assert_contains(on.out, "gettimeofday 1767225600.", "the output");
	sampled_free(&on);
	sampled_free(&off);
}

/* rdtsc and rdtscp are answered in the program (a slot of the agent's,
 * tracer/tsc.c): no stop with the agent where the CPU has BMI2, the same
 * runs and the same values as at the int3 or the fault without it, the
 * flags an rdtsc sits between left as they were. */
Test(fast_path, rdtsc_answered_in_the_program)
{
	static const char *const opts[] = { "-s", "random", "-n", "5", "--seed",
					    "5", "--output", NULL };
	struct sampled on, off;

	same_runs(target("rdtsc_reads"), opts, &on, &off);
	cr_expect_eq(on.code, 0, "rdtsc_reads exited %d with the agent:\n%s",
		     on.code, on.out);
	assert_contains(on.out, "aux 0 ok", "the output");
	__builtin_cpu_init();
	if (__builtin_cpu_supports("bmi2")) {
		double tsc = per_run(on.err, "rdtsc-rdrand-site");

		cr_expect(tsc == 0, "%.1f rdtsc stops a run with the agent",
			  tsc);
		cr_expect(on.in_prog >= 100, "%.1f clock reads a run in the "
			  "program", on.in_prog);
	} else {
		printf("fast_path: this CPU has no BMI2: rdtsc stays at its "
		       "int3 or fault; only the runs are compared\n");
	}
	sampled_free(&on);
	sampled_free(&off);
}

/* Libc's synchronisation calls made while every other thread waits are
 * taken in the program: nearly none is a stop with the trampolines, every
 * one without them, and the runs are the same. */
Test(fast_path, sync_calls_taken_in_the_program_while_others_wait)
{
	struct sampled on, off;

	same_runs(target("calls_while_others_wait"), RANDOM8, &on, &off);
	cr_expect_eq(on.code, 0, "exit %d:\n%s", on.code, on.err);
	cr_expect(on.calls_in >= 2000, "%.1f sync calls a run in the program",
		  on.calls_in);
	expect_split(on.calls, on.calls_in, off.calls, "sync calls");
	cr_expect(on.calls < off.calls / 4, "%.1f sync-call stops a run with "
		  "the trampolines, %.1f without", on.calls, off.calls);
	sampled_free(&on);
	sampled_free(&off);
}

/* Decisions known in advance: under PCT the highest-priority thread runs
 * until it blocks or a change point comes, so while another thread could
 * run its calls are still taken in the program (pick is asked for each
 * at the next stop); the same runs with and without, on the examples too,
 * and a failure found so replays exactly without the trampolines. */
Test(fast_path, pct_decisions_followed_in_the_program)
{
	static const char *const pct[] = { "-s", "pct", "-n", "8", "--seed",
					   "5", "--points", "sync",
					   "--no-minimize", NULL };
	static const char *const names[] = { "bank", "bank_fixed",
					     "mutex_condvar", "barrier",
					     "semaphore", "lost_wakeup" };
	struct sampled on, off;

	same_runs(target("lock_loop"), pct, &on, &off);
	cr_expect(on.calls_in >= 600, "%.1f of %.1f sync calls a run in the "
		  "program under PCT", on.calls_in, off.calls);
	expect_split(on.calls, on.calls_in, off.calls, "sync calls");
	sampled_free(&on);
	sampled_free(&off);
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		check_same_runs(example(names[i]), pct);
	check_same_runs(target("calls_while_others_wait"), pct);
}

/* A random walk's coming draws are known too (a copy of its generator
 * draws them), POS's next pick and round robin's turn: the runs are the
 * same, and some of lock_loop's calls made while the other thread could
 * run are taken in the program. */
Test(fast_path, sampler_decisions_followed_in_the_program)
{
	const char *const kinds[] = { "random", "pos", "rr" };
	/* rr's turns last 1 to 3 choices */
	const double least[] = { 100, 100, 1 };

	for (int k = 0; k < 3; k++) {
		const char *const opts[] = { "-s", kinds[k], "-n", "6",
					     "--seed", "5", "--points", "sync",
					     "--no-minimize", NULL };
		struct sampled on, off;

		same_runs(target("lock_loop"), opts, &on, &off);
		cr_expect(on.calls_in >= least[k], "%.1f of %.1f sync calls a "
			  "run in the program under %s", on.calls_in,
			  off.calls, kinds[k]);
		sampled_free(&on);
		sampled_free(&off);
		check_same_runs(example("bank"), opts);
		check_same_runs(example("mutex_condvar"), opts);
	}
}

/*
 * A random walk's picks are planned ahead (its generator's copy draws
 * them): where the turn passes from one thread to another at a call,
 * the thread hands over to the next in the program, which waits there
 * on a futex word of the agent's page instead of in a ptrace stop
 * (tracer/agent.c, the hand-off).  The same runs as without the agent;
 * threads locking mutexes of their own make almost every switch so
 * (389 sync-call stops a run became 11 when it was built).
 */
Test(fast_path, threads_hand_over_to_each_other_in_the_program)
{
	const char *const opts[] = { "-s", "random", "-n", "8", "--seed", "5",
				     "--points", "sync", "--no-minimize",
				     NULL };
	const char *const three[] = { "3", "150", NULL };

	for (int k = 0; k < 2; k++) {
		struct sampled on = sample_argv(target("own_lock_loops"), opts,
						true, k ? three : NULL);
		struct sampled off = sample_argv(target("own_lock_loops"),
						 opts, false,
						 k ? three : NULL);

		cr_expect_eq(on.code, 0, "exit %d with the agent:\n%s",
			     on.code, on.err);
		cr_expect_eq(off.code, 0, "exit %d without the agent:\n%s",
			     off.code, off.err);
		cr_expect_str_eq(on.digest, off.digest,
				 "other runs with the hand-off than without");
		cr_expect_str_eq(on.out, off.out, "other output");
		cr_expect(on.handovers >= 100,
			  "%.1f hand-overs a run in the program:\n%s",
			  on.handovers, on.err);
		cr_expect(on.calls < off.calls / 5,
			  "%.1f sync-call stops a run with the hand-off, %.1f "
			  "without", on.calls, off.calls);
		sampled_free(&on);
		sampled_free(&off);
	}
	check_same_runs(target("lock_loop"), opts);
	check_same_runs(example("bank"), opts);
	check_same_runs(example("mutex_condvar"), opts);
	/* more threads than the page has places for (64): the 65th is
	 * never planned (once it was, and a correct program crashed) */
	const char *const many[] = { "-s", "random", "-n", "20", "--seed", "1",
				     "--no-minimize", NULL };

	check_same_runs(target("many_threads"), many);
	/* a signal sent to a thread parked at its lock: it meets the
	 * thread at its point, as without the agent (once it was lost: the
	 * thread was handed the turn in the program, "n == 1 && handled"
	 * failed at run 189) */
	const char *const sig[] = { "-s", "random", "-n", "200", "--seed",
				    "1", "--no-minimize", NULL };
	const char *const sigarg[] = { "signal", NULL };
	struct sampled son = sample_argv(target("pi_mutexes"), sig, true,
					 sigarg);
	struct sampled soff = sample_argv(target("pi_mutexes"), sig, false,
					  sigarg);

	cr_expect_eq(son.code, 0, "pi_mutexes signal: exit %d with the "
		     "agent:\n%s%s", son.code, son.out, son.err);
	cr_expect_str_eq(son.digest, soff.digest,
			 "pi_mutexes signal: other runs with the agent");
	sampled_free(&son);
	sampled_free(&soff);
	/* a signal that meets a thread in the hand-off's own code (parked,
	 * and handed the turn before ptloom took its signal's stop): it
	 * goes on from its point, as the log says, with the signal there
	 * (it was "internal error: T1 stopped inside the agent's hand-off"
	 * in the first of 20 runs) */
	const char *const sigs[] = { "-s", "random", "-n", "30", "--seed",
				     "1", "--no-minimize", NULL };

	check_same_runs(target("signals_to_a_locking_thread"), sigs);
}

/* The systematic search's decisions are known where a run follows the
 * path of an earlier one (its item's prefix, the part of its stack it
 * replays), and so are a replay's: the same runs, and there a call made
 * while the other thread could run is taken in the program (without it,
 * only the calls while the other waited: a fifth of lock_loop's). */
Test(fast_path, search_and_replay_decisions_followed_in_the_program)
{
	static const char *const dfs[] = { "--dfs-only", "-n", "40", "--seed",
					   "5", "--points", "sync",
					   "--no-minimize", NULL };
	struct sampled on, off;

	same_runs(target("lock_loop"), dfs, &on, &off);
	cr_expect(on.calls_in >= 0.4 * off.calls, "%.1f of %.1f sync calls a "
		  "run in the program in the systematic search", on.calls_in,
		  off.calls);
	expect_split(on.calls, on.calls_in, off.calls, "sync calls");
	sampled_free(&on);
	sampled_free(&off);
	check_same_runs(example("bank_fixed"), dfs);
	check_same_runs(example("lost_wakeup"), dfs);

	/* a replay of a failure bank's search found */
	const char *out = in_tmp("known_replay");
	struct res r = ptl("run", "--points", "sync", "--seed", SEED,
			   "--no-minimize", "-o", out, "--", example("bank"),
			   NULL);
	char file[PATH_MAX];

	assert_exit(r, 1);
	replay_file(&r, file);
	setenv("PTLOOM_STATS", "1", 1);
	struct res p = ptl("replay", file, "--", example("bank"), NULL);
	unsetenv("PTLOOM_STATS");
	const char *k = strstr(p.err, "sync-call-in-program(no stop) ");
	const char *st = strstr(p.err, " sync-call ");
	long in = k ? atol(k + strlen("sync-call-in-program(no stop) ")) : 0;
	long stops = st ? atol(st + strlen(" sync-call ")) : 0;

	assert_exit(p, 1);
	assert_contains(p.out, "replay exact", p.cmd);
	/* (without its decisions known: none in the program, 19 stops;
	 * with them 8 and 11) */
	cr_expect(in * 2 >= stops, "%ld sync calls of the replay in the program, "
		  "%ld stops:\n%s", in, stops, p.err);
	res_free(&p);
	res_free(&r);
}

/* A fault in an instruction a trampoline moved (a null mutex) is reported
 * where it is without the trampolines: the same verdict, thread, frames. */
Test(fast_path, fault_in_a_moved_instruction_reported_in_place)
{
	static const char *const opts[] = { "-n", "5", "--no-minimize", NULL };
	struct sampled on, off;

	same_runs(target("lock_null_mutex"), opts, &on, &off);
	cr_expect_eq(on.code, 1, "exit %d:\n%s", on.code, on.out);
	assert_contains(on.out, "FAIL crash SIGSEGV in T1", "the summary");
	assert_contains(on.out, "#0 pthread_mutex_lock", "T1's frames");
	cr_expect(on.calls_in >= 1, "%.1f sync calls a run in the program: "
		  "the lock was not taken in its trampoline", on.calls_in);
	sampled_free(&on);
	sampled_free(&off);
}

/* A failing schedule of prog (with arg) found with the agent (way 0)
 * replays exactly without it, and one found without it (way 1) with it;
 * with the default search, or PCT (pct). */
static void replays_across(const char *prog, const char *arg, int way,
			   const char *dir, bool pct)
{
	const char *out = in_tmp(dir);
	const char *sw = way ? "--no-fast-path" : "--no-minimize";
	struct res r = pct ? ptl("run", sw, "-s", "pct", "--points", "sync",
				 "--seed", SEED, "--no-minimize", "-o", out,
				 "--", prog, arg, NULL)
			   : ptl("run", sw, "--seed", SEED, "--no-minimize",
				 "-o", out, "--", prog, arg, NULL);
	char file[PATH_MAX];

	assert_exit(r, 1);
	replay_file(&r, file);
	/* replayed the other way */
	struct res p = way ? ptl("replay", file, "--", prog, arg, NULL)
			   : ptl("replay", "--no-fast-path", file, "--", prog,
				 arg, NULL);

	assert_exit(p, 1);
	assert_contains(p.out, "replay exact", p.cmd);
	res_free(&p);
	res_free(&r);
}

/* A thread that sleeps in a loop (a watchdog) makes its timeout an
 * alternative at every choice: the decisions are still known where the
 * strategy draws its timeouts (random, PCT, POS, round robin) or follows
 * recorded ones (the search's replayed part), so the workers' calls are
 * taken in the program there; the same runs as with stops, and a lost update found beside the
 * sleeper replays exactly across the switch. */
Test(fast_path, decisions_known_beside_a_sleeping_thread)
{
	const char *const kinds[] = { "pct", "random", "dfs", "pos", "rr" };
	/* of the calls a run (measured 0.98, 0.38, 0.21, 0.33, 0.13); with
	 * the sleeper's timeout unknown, only calls while it was awake and
	 * the other worker waited: 0.23, 0.08, 0.15, 0.08, 0.005 */
	const double least[] = { 0.8, 0.2, 0.05, 0.2, 0.06 };

	/* (12 runs: round robin's first 8 take turns too short to gain) */
	for (int k = 0; k < 5; k++) {
		const char *const opts[] = { "-s", kinds[k], "-n", "12",
					     "--seed", "5", "--points", "sync",
					     "--no-minimize", NULL };
		struct sampled on, off;

		same_runs(target("calls_beside_a_sleeper"), opts, &on, &off);
		cr_expect(on.calls_in >= least[k] * off.calls,
			  "%.1f of %.1f sync calls a run in the program under "
			  "%s beside a sleeper", on.calls_in, off.calls,
			  kinds[k]);
		expect_split(on.calls, on.calls_in, off.calls, "sync calls");
		sampled_free(&on);
		sampled_free(&off);
	}
	replays_across(target("calls_beside_a_sleeper"), "split", 0,
		       "sleeper_on", true);
	replays_across(target("calls_beside_a_sleeper"), "split", 1,
		       "sleeper_off", true);
}

/* Failing schedules replay exactly across the switch: a clock read's,
 * a lost update after many calls taken in the program, and a PCT
 * failure found while its calls were followed in the program. */
Test(fast_path, schedules_replay_exactly_across_the_switch)
{
	replays_across(target("clock_after_merge"), NULL, 0, "clock_on", false);
	replays_across(target("clock_after_merge"), NULL, 1, "clock_off",
		       false);
	replays_across(target("calls_while_others_wait"), "racy", 0,
		       "calls_on", false);
	replays_across(target("calls_while_others_wait"), "racy", 1,
		       "calls_off", false);
	replays_across(example("bank"), NULL, 0, "pct_on", true);
	replays_across(example("bank"), NULL, 1, "pct_off", true);
}

/* A process the page cannot be mapped into falls back to stops, with a
 * one-line note and the same runs: a seccomp filter of the program's own
 * (one that kills the process at a shared mapping: the agent must not
 * try), and a stack without a limit (no room known to stay free above the
 * mmap base). */
Test(fast_path, no_page_falls_back_to_stops_with_a_note)
{
	static const char *const opts[] = { "-s", "random", "-n", "5", "--seed",
					    "5", "--clock-start", "1767225600",
					    "--output", NULL };
	char unlimited[2 * PATH_MAX];
	const char *why[2] = { "it runs under a seccomp filter of its own",
			       "no room for ptloom's page" };

	snprintf(unlimited, sizeof(unlimited), "ulimit -s unlimited && exec %s",
		 target("clock_reads"));
	const char *sandboxed[] = { target("no_shared_maps"),
				    target("clock_reads"), NULL };
	const char *shell[] = { "/bin/sh", "-c", unlimited, NULL };
	const char *const *cmds[2] = { sandboxed, shell };

	for (int i = 0; i < 2; i++) {
		struct sampled on = sample_argv(cmds[i][0], opts, true,
						cmds[i] + 1);
		struct sampled off = sample_argv(cmds[i][0], opts, false,
						 cmds[i] + 1);

		cr_expect_eq(on.code, 0, "exit %d:\n%s", on.code, on.err);
		cr_expect_eq(on.code, off.code, "exit %d with the agent, %d "
			     "without", on.code, off.code);
		cr_expect_str_eq(on.digest, off.digest, "other runs");
		cr_expect_str_eq(on.out, off.out, "other output");
		cr_expect(on.clock >= 400, "%.1f clock stops a run: the reads "
			  "were not stops", on.clock);
		assert_contains(on.err, "ptloom: note: a process ran without "
				"the in-process agent (", "stderr");
		assert_contains(on.err, why[i], "stderr");
		cr_expect(!strstr(off.err, "ptloom: note: a process ran "
				  "without"), "a note without the agent:\n%s",
			  off.err);
		sampled_free(&on);
		sampled_free(&off);
	}
}

/* What a process learns of the files it runs at its first run (each libc
 * entry point's trampoline plan, glibc's futex sites, the sweep of the
 * executable's and libraries' instructions) is kept on disk
 * (analysis/filecache.c) and read back by the next process. */
struct cached {
	int code;
	char digest[40];
	long read, made, stored, not_stored; /* -1: no cache line */
	double calls_in, wakes_in;
};

/* (bin: a ptloom) */
static struct cached run_cached_by(const char *bin, const char *dir,
				   const char *more_env)
{
	char env[4200];
	char *argv[] = { (char *)bin, "run", "-s", "random", "-n", "6",
			 "--seed", "3", "--no-minimize", "--",
			 (char *)example("bank_fixed"), NULL };

	snprintf(env, sizeof(env), "PTLOOM_STATS=1 PTLOOM_CACHE_DIR=%s%s%s",
		 dir, more_env ? " " : "", more_env ? more_env : "");
	struct res r = run_argv(argv, env, CMD_TIMEOUT);
	struct cached c = { .code = r.code, .read = -1, .made = -1,
			    .stored = -1, .not_stored = -1 };
	const char *d = strstr(r.err, "ptloom: trace digest ");
	const char *l = strstr(r.err, "ptloom: analysis cache ");

	cr_assert_not_null(d, "`%s` printed no trace digest:\n%s", r.cmd,
			   r.err);
	sscanf(d, "ptloom: trace digest %39[^\n]", c.digest);
	if (l && (l = strstr(l + strlen("ptloom: analysis cache "), ": ")))
		cr_assert_eq(sscanf(l, ": %ld read, %ld made, %ld stored, %ld "
				    "not stored", &c.read, &c.made, &c.stored,
				    &c.not_stored), 4, "%s", r.err);
	c.calls_in = per_run(r.err, "sync-call-in-program(no stop)");
	c.wakes_in = per_run(r.err, "futex-wake-in-program(no stop)");
	res_free(&r);
	return c;
}

static struct cached run_cached(const char *dir, const char *more_env)
{
	return run_cached_by(ptloom(), dir, more_env);
}

static void expect_counts(const struct cached *c, long read, long made,
			  long stored, long not_stored, const char *when)
{
	cr_expect(c->read == read && c->made == made &&
			  c->stored == stored && c->not_stored == not_stored,
		  "%s: analysis cache %ld read, %ld made, %ld stored, %ld not "
		  "stored; wanted %ld, %ld, %ld, %ld", when, c->read, c->made,
		  c->stored, c->not_stored, read, made, stored, not_stored);
}

/* the entries of dir; the first in *first */
static int entries(const char *dir, char **first)
{
	static char path[PATH_MAX + 300];
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "no cache directory %s", dir);
	path[0] = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && ++n == 1)
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
	closedir(d);
	if (first)
		*first = path;
	return n;
}

Test(fast_path, file_analyses_kept_on_disk_make_the_same_runs)
{
	const char *dir = in_tmp("cache/ptloom");
	struct cached first = run_cached(dir, NULL);
	struct cached again = run_cached(dir, NULL);
	struct cached none = run_cached(dir, "PTLOOM_NO_CACHE=1");

	cr_expect_eq(first.code, 0);
	/* libc's entry points and futex sites, the executable's sweep for
	 * race discovery, the libraries' atomics */
	cr_assert(first.made >= 2, "%ld analyses made", first.made);
	expect_counts(&first, 0, first.made, first.made, 0,
		      "the first process");
	expect_counts(&again, first.made, 0, 0, 0, "the second process");
	cr_expect_eq(none.read, -1, "PTLOOM_NO_CACHE=1 read the cache");
	cr_expect_str_eq(again.digest, first.digest,
			 "other runs with the analyses read from the cache");
	cr_expect_str_eq(none.digest, first.digest,
			 "other runs without the cache");
	cr_expect_eq(again.code, first.code);
	/* the trampolines were built from what was read */
	cr_expect(first.calls_in > 0, "no sync call taken in the program");
	cr_expect(again.calls_in == first.calls_in &&
			  again.wakes_in == first.wakes_in,
		  "calls %.1f and wakes %.1f taken in the program with the "
		  "cache read, %.1f and %.1f with it made", again.calls_in,
		  again.wakes_in, first.calls_in, first.wakes_in);
	cr_expect_eq(entries(dir, NULL), first.made);
}

/* Two builds of ptloom used side by side (CI's plain and sanitized
 * builds, two checkouts) keep their own entries: neither makes the other's
 * again at every command (when an entry was named by the file alone,
 * each replaced the other's). */
Test(fast_path, two_builds_of_ptloom_keep_their_own_file_analyses)
{
	const char *dir = in_tmp("cache/ptloom");
	char other[PATH_MAX], cmd[3 * PATH_MAX];

	/* another build: without a build id, its executable's size, mtime
	 * and inode name it */
	snprintf(other, sizeof(other), "%s", in_tmp("ptloom-other"));
	snprintf(cmd, sizeof(cmd),
		 "objcopy --remove-section .note.gnu.build-id '%s' '%s'",
		 ptloom(), other);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	struct cached a = run_cached_by(ptloom(), dir, NULL);
	struct cached b = run_cached_by(other, dir, NULL);
	struct cached a2 = run_cached_by(ptloom(), dir, NULL);
	struct cached b2 = run_cached_by(other, dir, NULL);

	cr_assert(a.made >= 2, "%ld analyses made", a.made);
	expect_counts(&b, 0, a.made, a.made, 0, "the other build's first");
	expect_counts(&a2, a.made, 0, 0, 0, "the first build again");
	expect_counts(&b2, a.made, 0, 0, 0, "the other build again");
	cr_expect_str_eq(b.digest, a.digest);
	cr_expect_str_eq(b2.digest, a.digest);
	cr_expect_eq(entries(dir, NULL), 2 * a.made);
}

Test(fast_path, a_damaged_or_unwritable_analysis_cache_is_made_again)
{
	const char *dir = in_tmp("cache");
	struct cached good = run_cached(dir, NULL);
	char *path;
	int n = entries(dir, &path);
	char *bytes = slurp(path);
	struct stat st;

	cr_assert_eq(n, good.made);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert(st.st_size > 64);
	/* one bit of an entry's payload: its sum no longer matches */
	FILE *f = fopen(path, "r+");

	cr_assert_not_null(f);
	fseek(f, st.st_size - 20, SEEK_SET);
	fputc(bytes[st.st_size - 20] ^ 0x10, f);
	fclose(f);
	struct cached flipped = run_cached(dir, NULL);

	expect_counts(&flipped, n - 1, 1, 1, 0, "a flipped bit");
	cr_expect_str_eq(flipped.digest, good.digest);
	cr_assert_eq(truncate(path, 40), 0);
	struct cached cut = run_cached(dir, NULL);

	expect_counts(&cut, n - 1, 1, 1, 0, "a truncated entry");
	cr_expect_str_eq(cut.digest, good.digest);
	struct cached mended = run_cached(dir, NULL);

	expect_counts(&mended, n, 0, 0, 0, "the entries made again");
	/* a directory that cannot be made: nothing stored, the same runs */
	struct cached nowhere = run_cached("/proc/self/no-such-dir", NULL);

	expect_counts(&nowhere, 0, n, 0, n, "an unwritable directory");
	cr_expect_str_eq(nowhere.digest, good.digest);
	cr_expect_eq(nowhere.code, good.code);
	free(bytes);
}

Test(fast_path, the_analysis_cache_stays_under_its_cap_and_spares_other_files)
{
	const char *dir = in_tmp("cache");
	char other[PATH_MAX + 300], like[PATH_MAX + 300];

	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(other, sizeof(other), "%s/notes.txt", dir);
	snprintf(like, sizeof(like), "%s/libc-0123456789abcdef", dir);
	spit(other, "a user's file\n");
	spit(like, "named like an entry, not one\n");
	/* a cap below one entry: every entry goes once stored */
	struct cached capped = run_cached(dir, "PTLOOM_CACHE_MAX=1");

	cr_expect(capped.made >= 2 && capped.stored == capped.made,
		  "%ld made, %ld stored", capped.made, capped.stored);
	cr_expect_eq(entries(dir, NULL), 2, "the cap left %d files in %s",
		     entries(dir, NULL), dir);
	char *a = slurp(other), *b = slurp(like);

	cr_expect_str_eq(a, "a user's file\n");
	cr_expect_str_eq(b, "named like an entry, not one\n");
	free(a);
	free(b);
	/* without the cap they stay */
	struct cached kept = run_cached(dir, NULL);

	cr_expect_eq(entries(dir, NULL), 2 + (int)kept.stored);
	cr_expect_str_eq(kept.digest, capped.digest);
}

/*
 * A wake taken in the program counts when the run is judged at --timeout
 * although its thread never stops again (tests/targets/wake_then_compute.c:
 * the worker wakes the stopper, then computes until the stopper runs).
 * The default schedule (an empty script) gives the same verdict with the
 * fast path and without: INCOMPLETE, the stopper waiting for its turn.
 * Before, with the fast path the stopper looked blocked and the replay
 * said "FAIL hang".
 */
Test(fast_path, a_wake_taken_in_the_program_counts_at_the_timeout)
{
	char *script = in_tmp("default.script");

	spit(script, "# ptloom schedule script v1\n");
	for (int fast = 0; fast < 2; fast++) {
		char *argv[] = { (char *)ptloom(), "replay", "--timeout", "1",
				 script, "--",
				 (char *)target("wake_then_compute"), NULL };
		struct res r = run_argv(argv, fast ? "PTLOOM_NO_FAST_PATH=0"
						   : "PTLOOM_NO_FAST_PATH=1",
					CMD_TIMEOUT);

		cr_expect_eq(r.code, 3, "`%s` (fast path %s) exit %d:\n%s%s",
			     r.cmd, fast ? "on" : "off", r.code, r.out,
			     r.err);
		cr_expect(strstr(r.out, "INCOMPLETE") &&
				  strstr(r.out, "while T2 waited for its turn"),
			  "`%s` (fast path %s):\n%s", r.cmd,
			  fast ? "on" : "off", r.out);
		res_free(&r);
	}
}

/* A store whose race point was lifted while its thread was alone (the
 * reader blocked on a semaphore) is a choice again once the post woke
 * the reader, with the wake taken at a stop or in the program: the bug
 * (the reader sees the 1 between two stores) at one preemption, the same
 * runs both ways.  Before, the lifts came back at main's next choice (its
 * join): bound 2, after 26 runs; and with the fast path when they came
 * back depended on which choices the search knew in advance, so that
 * Boost asio's thread pool with a strand did "not repeat itself". */
Test(fast_path, points_lifted_while_alone_trap_again_after_a_wake)
{
	static const char *const dfs[] = { "-n", "120", "--seed", "5",
					   "--no-minimize", NULL };
	struct sampled on, off;

	same_runs(target("store_after_a_wake"), dfs, &on, &off);
	cr_expect_eq(on.code, 1, "exit %d:\n%s%s", on.code, on.out, on.err);
	cr_expect(strstr(on.out, "FAIL crash SIGABRT in T1") &&
			  strstr(on.out, "bound 1;"),
		  "the store after the wake is no choice:\n%s", on.out);
	sampled_free(&on);
	sampled_free(&off);
}
