/*
 * replay and minimize: a saved schedule reproduces its failure every time,
 * minimised schedules too, hand-written scripts.
 */
#include "common.h"

TestSuite(replay, .init = setup, .fini = teardown, .timeout = 120);

/* The replay command printed by run reproduces the failure 20 times (4
 * in the sanitizer build's run: common.h sanitized_run()). */
static void replays_20_of_20(const char *program, const char *kind)
{
	struct found f = find(program);
	char *cmd = with_report(f.replay, in_tmp("replay.json"));
	int times = sanitized_run() ? 4 : 20;

	cr_log_info("replay command: %s", f.replay);
	for (int i = 0; i < times; i++) {
		struct res r = sh(cmd);

		assert_exit(r, 1);
		char *j = slurp(in_tmp("replay.json"));

		assert_json(j, "exact", "true");
		assert_json(j, "kind", kind);
		assert_json(j, "verdict", "fail");
		cr_assert_str_eq(json_get(j, "location"),
				 json_get(f.report, "location"),
				 "replay %d failed elsewhere", i);
		free(j);
		res_free(&r);
		unlink(in_tmp("replay.json"));
	}
	free(cmd);
	found_free(&f);
}

Test(replay, bank_replays_20_of_20)
{
	replays_20_of_20(example("bank"), "crash");
}

Test(replay, deadlock_replays_20_of_20)
{
	replays_20_of_20(example("deadlock"), "deadlock");
}

Test(replay, lost_wakeup_replays_20_of_20)
{
	replays_20_of_20(example("lost_wakeup"), "deadlock");
}

Test(replay, crash_segv_replays_20_of_20)
{
	replays_20_of_20(target("crash_segv"), "crash");
}

Test(replay, timedlock_abort_replays_20_of_20)
{
	replays_20_of_20(target("timedlock_abort"), "crash");
}

Test(replay, sleep_assume_replays_20_of_20)
{
	replays_20_of_20(target("sleep_assume"), "crash");
}

Test(replay, exit_code_replays_20_of_20)
{
	replays_20_of_20(target("exit_code"), "exit");
}

/* reads_its_ids under a name of this test's own: the canonical ids follow
 * the command line, and the sanitizer build's run of this group explores
 * the same target beside this one (two explorations of one command line
 * want the same ids by design, and a replay whose recorded pid the other
 * holds at that moment diverges, saying so). */
static const char *ids_target(void)
{
	static char link[PATH_MAX];

	snprintf(link, sizeof(link), "%s", in_tmp("reads_its_ids"));
	if (access(link, X_OK))
		cr_assert(!symlink(target("reads_its_ids"), link), "%s: %s",
			  link, strerror(errno));
	return link;
}

/*
 * A program whose scheduling points depend on its pid and thread ids (and
 * its forked child's pid): the replay asks the kernel for the ids the
 * recording had, so it is exact even though the pids have moved on since.
 */
Test(replay, a_program_that_reads_its_ids_replays_exactly)
{
	if (geteuid() != 0)
		cr_skip_test("not root: the kernel lets only a process with "
			     "CAP_CHECKPOINT_RESTORE choose ids");
	struct res r = RUN(ids_target(), "--seed", SEED);

	assert_exit(r, 1);
	replays_exactly(&r, "exit"); /* three times */
	res_free(&r);
	/* show names them, to match the program's own logs to T-numbers */
	char *rep = report();
	struct res s = PTL("show", json_get(rep, "schedule_file"));

	assert_exit(s, 0);
	assert_contains(s.out, "kernel ids: T0 ", "show's header");
	res_free(&s);
	free(rep);
}

/* The "kernel ids:" line of the schedule file exploration r saved and its
 * "preemptions: ..., trace hash H" line, if every T-number had the
 * canonical id (T-number i: the first's plus i); NULL when another
 * process held one (the kernel gave its own). */
static char *canonical_ids(const struct res *r)
{
	char file[PATH_MAX], *ids = NULL;

	replay_file(r, file);
	struct res s = PTL("show", file);

	assert_exit(s, 0);
	ids = line_with(s.out, "kernel ids: ");
	cr_assert_not_null(ids, "show printed no kernel ids:\n%s", s.out);
	long first = -1, t, v;
	const char *p = ids + strlen("kernel ids:");
	int n;

	while (sscanf(p, " T%ld %ld%n", &t, &v, &n) == 2) {
		if (first < 0)
			first = v;
		if (v != first + t) {
			free(ids);
			ids = NULL;
			break;
		}
		p += n;
		p += *p == ',';
	}
	char *hash = line_with(s.out, "preemptions: "), *both = NULL;

	cr_assert_not_null(hash, "show printed no trace hash:\n%s", s.out);
	if (ids)
		cr_assert(asprintf(&both, "%s\n%s", ids, hash) > 0);
	free(ids);
	free(hash);
	res_free(&s);
	return both;
}

/* Two explorations of it see the same runs: every first run asks for the
 * same canonical ids, so they fail in the same schedule with the same
 * trace hash and their trace digests agree.  Unless another process held
 * one of the ids: then it says so and checks nothing. */
Test(replay, two_explorations_of_a_program_that_reads_its_ids_agree)
{
	if (geteuid() != 0)
		cr_skip_test("not root: the kernel lets only a process with "
			     "CAP_CHECKPOINT_RESTORE choose ids");
	const char *const opts[] = { "-s", "random", "-n", "8",
				     "--no-minimize", "--seed", SEED, NULL };
	struct res a = run_stats(opts, ids_target());
	struct res b = run_stats(opts, ids_target());
	char *ia = canonical_ids(&a), *ib = canonical_ids(&b);

	if (!ia || !ib) {
		skip_note("skipping the comparison: another process held a "
			  "canonical id");
	} else {
		char *da = line_with(a.err, "ptloom: trace digest ");
		char *db = line_with(b.err, "ptloom: trace digest ");

		cr_assert_str_eq(ib, ia);
		cr_assert_not_null(da, "%s", a.err);
		cr_assert_not_null(db, "%s", b.err);
		cr_assert_str_eq(db, da, "%s\nthen: %s", db, da);
		free(da);
		free(db);
	}
	free(ia);
	free(ib);
	res_free(&a);
	res_free(&b);
}

/* A program whose scheduling points depend on its CPU time, context
 * switches, page faults, load average, free memory and uptime (getrusage,
 * times, sysinfo) replays exactly: they are the run's, not the machine's. */
Test(replay, a_program_that_reads_the_machine_state_replays_exactly)
{
	struct res r = RUN(target("reads_the_machine"), "--seed", SEED);

	assert_exit(r, 1);
	replays_exactly(&r, "exit"); /* three times */
	res_free(&r);
}

/*
 * Another process holds the pid the recording had (the ids wrapped on a
 * busy machine, or another exploration of the same command line asks for
 * the same canonical ones): the replay's T0 asks for a free pid with as
 * many digits, so a program whose heap layout follows its pid's width
 * (node's "/usr/bin/node[PID]") replays exactly.  In a pid namespace of its
 * own, where the script holds the recorded pid and the kernel's next ids
 * have 3 digits: the replay took one of those and diverged at the
 * program's first mutex, 64 bytes off.
 */
Test(replay, a_recorded_pid_another_process_holds_is_replaced_by_one_as_wide)
{
	if (geteuid() != 0)
		cr_skip_test("not root: the kernel lets only a process with "
			     "CAP_CHECKPOINT_RESTORE choose ids");
	char *cmd;

	spit(in_tmp("held.sh"),
	     "cd \"$3\" || exit 2\n"
	     "\"$1\" run --seed 1 --no-minimize -o out -- \"$2\" >run.txt 2>&1\n"
	     "f=$(sed -n 's/^replay: ptloom replay \\([^ ]*\\) .*/\\1/p' "
	     "run.txt)\n"
	     "pid=$(\"$1\" show \"$f\" | "
	     "sed -n 's/^kernel ids: T0 \\([0-9]*\\).*/\\1/p')\n"
	     "echo \"recorded $pid\"\n"
	     "echo $((pid - 1)) >/proc/sys/kernel/ns_last_pid || exit 2\n"
	     "sleep 600 &\n"
	     "echo \"holder $!\"\n"
	     "echo 100 >/proc/sys/kernel/ns_last_pid || exit 2\n"
	     "\"$1\" replay --report replay.json \"$f\" -- \"$2\"\n");
	cr_assert(asprintf(&cmd, "unshare --pid --fork --mount-proc sh '%s' "
				 "'%s' '%s' '%s'",
			   in_tmp("held.sh"), ptloom(),
			   target("pid_in_a_name"), tmp) > 0);
	struct res r = sh(cmd);
	char *rec = line_with(r.out, "recorded "), *held = line_with(r.out,
								     "holder ");

	if (!rec)
		cr_skip_test("no pid namespace of its own (unshare: %s): "
			     "skipped", r.err);
	cr_assert_not_null(held, "%s\n%s", r.out, r.err);
	cr_assert_str_eq(held + strlen("holder "), rec + strlen("recorded "),
			 "the script did not get the recorded pid:\n%s",
			 r.out);
	assert_exit(r, 1);
	assert_contains(r.out, "counter 6", "the replay's output");
	char *j = slurp(in_tmp("replay.json"));

	assert_json(j, "exact", "true");
	free(j);
	free(rec);
	free(held);
	free(cmd);
	res_free(&r);
}

/* Where the recorded ids cannot be had, a replay that diverges says that
 * is the likely cause. */
Test(replay, a_replay_without_the_recorded_ids_names_them)
{
	struct found f = find(target("reads_its_ids"));
	char *cmd;

	cr_assert(asprintf(&cmd, "PTLOOM_NO_SET_TID=1 %s", f.replay) > 0);
	struct res r = sh(cmd);

	assert_contains(r.out, "diverged at step", "the replay's output");
	assert_contains(r.out, "did not get its recorded pid",
			"the replay's output");
	assert_contains(r.out, "CAP_CHECKPOINT_RESTORE", "the replay's output");
	res_free(&r);
	free(cmd);
	found_free(&f);
}

/* The failure's preemptions in a replay of schedule. */
static long replayed_preemptions(const char *schedule, const char *program)
{
	struct res r = PTL("replay", "--report", in_tmp("p.json"),
			   "--report-format", "json", schedule, "--",
			   program);

	assert_exit(r, 1);
	char *j = slurp(in_tmp("p.json"));
	long p = json_num(j, "preemptions");

	assert_json(j, "exact", "true");
	free(j);
	res_free(&r);
	return p;
}

static void minimized_no_worse(const char *program)
{
	struct found f = find(program);

	cr_assert_not_null(f.minimized, "no minimized file:\n%s", f.report);
	long orig = replayed_preemptions(f.original, program);
	long min = replayed_preemptions(f.minimized, program);

	cr_log_info("%s: %ld preemptions found, %ld minimized", program, orig,
		    min);
	cr_assert_leq(min, orig);
	cr_assert_eq(json_num(f.report, "preemptions"), min,
		     "run's report names the minimized failure");

	/* ptloom minimize on the original gets there too */
	struct res r = PTL("minimize", "--report", in_tmp("m.json"),
			   "--report-format", "json", f.original, "--",
			   program);

	assert_exit(r, 1);
	char *j = slurp(in_tmp("m.json"));

	cr_assert_leq(json_num(j, "preemptions"), orig);
	assert_json(j, "kind", json_get(f.report, "kind"));
	free(j);
	res_free(&r);
	found_free(&f);
}

Test(replay, minimized_has_no_more_preemptions)
{
	minimized_no_worse(example("bank"));
	minimized_no_worse(example("deadlock"));
	minimized_no_worse(example("lost_wakeup"));
}

Test(replay, bank_minimized_has_one_preemption)
{
	struct found f = find(example("bank"));

	cr_assert_not_null(f.minimized, "%s", f.report);
	cr_assert_eq(json_num(f.report, "preemptions"), 1, "%s", f.report);
	cr_assert_eq(replayed_preemptions(f.minimized, example("bank")), 1);
	found_free(&f);
}

Test(replay, bank_schedule_on_bank_fixed_diverges_or_passes)
{
	struct found f = find(example("bank"));
	struct res r = PTL("replay", "--report", in_tmp("d.json"),
			   "--report-format", "json", f.minimized ? f.minimized
							       : f.original,
			   "--", example("bank_fixed"));

	cr_assert_eq(r.sig, 0, "replay was killed by %s", strsignal(r.sig));
	cr_assert(r.code == 4 || r.code == 0,
		  "replaying bank's schedule on bank_fixed: exit %d, want 4 "
		  "(diverged) or 0 (pass)\nstdout:\n%s\nstderr:\n%s", r.code,
		  r.out, r.err);
	char *j = slurp(in_tmp("d.json"));

	assert_json(j, "verdict", r.code == 4 ? "diverged" : "pass");
	if (r.code == 4)
		assert_json(j, "exact", "false");
	free(j);
	res_free(&r);
	found_free(&f);
}

/*
 * A script written by hand: bank's failing interleaving, one decision per
 * choice point (T0 creates both customers and joins, T1 checks the
 * balance, then T2 preempts it and withdraws first).
 */
static const char bank_script[] =
	"# ptloom schedule script v1\n"
	"# bank: T2 withdraws between T1's check and T1's withdrawal\n"
	"seed 0\n"
	"points sync\n"
	"run T0   # pthread_create\n"
	"run T0\n"
	"run T0\n"
	"run T0   # clone\n"
	"run T0   # pthread_join\n"
	"run T0\n"
	"run T1   # T1 starts\n"
	"run T1   # can_withdraw: lock\n"
	"run T1   #               unlock\n"
	"run T2   # preempt T1 before it withdraws\n"
	"run T2\n"
	"run T2\n"
	"run T2\n"
	"run T2\n"
	"run T2   # T2 exits\n";

Test(replay, hand_written_script_replays)
{
	spit(in_tmp("bank.txt"), bank_script);
	struct res r = PTL("replay", "--report", in_tmp("s.json"),
			   "--report-format", "json", in_tmp("bank.txt"), "--",
			   example("bank"));

	assert_exit(r, 1);
	char *j = slurp(in_tmp("s.json"));

	assert_json(j, "kind", "crash");
	assert_json(j, "signal", "SIGABRT");
	free(j);
	res_free(&r);
}

Test(replay, shown_script_replays)
{
	struct found f = find(example("bank"));
	struct res r = PTL("show", "--format", "script", f.minimized);

	assert_exit(r, 0);
	assert_contains(r.out, "# ptloom schedule script v1", "the script");
	assert_contains(r.out, "run T", "the script");
	spit(in_tmp("shown.txt"), r.out);
	res_free(&r);
	for (int i = 0; i < 3; i++) {
		r = PTL("replay", in_tmp("shown.txt"), "--", example("bank"));
		assert_exit(r, 1);
		assert_summary(&r, "ptloom: ");
		res_free(&r);
	}
	found_free(&f);
}
