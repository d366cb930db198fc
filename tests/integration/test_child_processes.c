/*
 * the whole process tree: forked children, shells, scripts, a process that
 * ptraces.
 */
#include "common.h"

TestSuite(child_processes, .init = setup, .fini = teardown, .timeout = 120);

Test(child_processes, bug_in_forked_child_found_and_replayed)
{
	struct res r = RUN9("--seed", SEED, "--", target("fork_race"));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in P1 fork_race T0");
	assert_contains(summary(&r), "fork_race.c:", "the summary");
	replays_exactly(&r, "P1 fork_race T0");
	res_free(&r);
}

Test(child_processes, bug_behind_sh_c_found_and_replayed)
{
	struct res r = RUN9("--seed", SEED, "--no-minimize", "--", "sh", "-c",
			    target("fork_race"));

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in P");
	assert_contains(summary(&r), "fork_race T0 (worker at fork_race.c:",
			"the summary");
	replays_exactly(&r, "fork_race T0");
	res_free(&r);
}

Test(child_processes, bug_behind_two_level_script_found_and_replayed)
{
	struct res r = RUN9("-s", "random", "-n", "50", "--seed", "2",
			    "--no-minimize", "--", "sh", script("outer.sh"),
			    target("fork_race"));

	assert_exit(r, 1);
	assert_contains(summary(&r), "fork_race T0 (worker at fork_race.c:",
			"the summary");
	assert_contains(r.out, "inner: ", "the program's output");
	replays_exactly(&r, "fork_race T0");
	res_free(&r);
}

Test(child_processes, fixed_twin_behind_shell_passes_complete)
{
	struct res r = RUN9("-p", "1", "--seed", SEED, "--", "sh", "-c",
			    target("fork_race_fixed"));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(summary(&r), "complete to preemption bound 1",
			"the summary");
	res_free(&r);
}

/*
 * Two single-threaded processes that add to one counter in a MAP_SHARED
 * page were a false PASS, "complete to preemption bound 2" in 2 runs: a
 * process had points only from its first thread on, and race discovery
 * took the same address in two processes for two things.  Now a fork
 * with writable shared memory gives both processes points, the parent
 * and the child name that memory alike, and the lost update is found by
 * the default search and by the systematic one alone, and replays.
 */
static void shared_counter_failed(struct res r)
{
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
			   "shared_memory_processes.c:");
	replays_exactly(&r, "shared_memory_processes.c");
	res_free(&r);
}

Test(child_processes, lost_update_between_processes_through_shared_memory)
{
	shared_counter_failed(RUN9("--seed", SEED, "--",
				   target("shared_memory_processes")));
	shared_counter_failed(RUN9("--dfs-only", "--seed", SEED, "--",
				   target("shared_memory_processes")));
}

/* The race across the processes is reported, on the shared page; the
 * twin whose additions hold a process-shared mutex has none, and its
 * mutex calls are points in both processes (their orders are explored:
 * before, 2 runs and "0 of 0 conflicting pairs") */
Test(child_processes, shared_memory_race_between_processes_reported)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("shared_memory_processes"));

	assert_exit(r, 1);
	assert_contains(r.out, "(zero (deleted)+0x28)", "ptloom races");
	assert_contains(r.out, "add at shared_memory_processes.c:",
			"ptloom races");
	res_free(&r);
	r = PTL("races", "--seed", SEED, "--",
		target("shared_memory_processes_fixed"));
	assert_exit(r, 0);
	assert_contains(r.out, "0 data races", "ptloom races");
	res_free(&r);
	r = RUN9("--seed", SEED, "--",
		 target("shared_memory_processes_fixed"));
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(summary(&r), "complete to preemption bound 2",
			"the summary");
	cr_assert(!strstr(summary(&r), " 0 of 0 conflicting pairs"),
		  "the mutex calls of both processes are points: %s",
		  summary(&r));
	res_free(&r);
}

/*
 * A lock-free ring between two single-threaded processes (-O2), each
 * spinning on the other's index in the shared page: the correct one was
 * INCOMPLETE (its first run spun until --timeout: no process had a
 * point), now a PASS complete to bound 1; the twin that publishes a slot
 * before storing its item fails, and replays.
 */
Test(child_processes, spsc_ring_between_processes)
{
	struct res r = RUN9("-p", "1", "--seed", SEED, "--",
			    target("shared_ring_processes"));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(summary(&r), "complete to preemption bound 1",
			"the summary");
	res_free(&r);
	r = RUN9("--seed", SEED, "--", target("shared_ring_processes_racy"));
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL ");
	assert_contains(summary(&r), "shared_ring_processes.c:", "the summary");
	replays_exactly(&r, "shared_ring_processes.c");
	res_free(&r);
}

/* A forked child that ends with SYS_exit (as a clone()'s function that
 * returns does) was a false deadlock: its only thread's exit was taken
 * for a thread's, and its parent's waitpid never returned. */
Test(child_processes, child_ending_with_the_exit_syscall_is_waited_for)
{
	struct res r = RUN9("--seed", SEED, "--", target("exit_syscall_child"));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	res_free(&r);
}

/* A process cloned to share its parent's whole memory (CLONE_VM, not a
 * thread) is not modelled: was a PASS "complete to bound 2" on a lost
 * update between the two; now never a pass. */
Test(child_processes, clone_sharing_the_whole_memory_is_never_a_pass)
{
	struct res r = RUN9("--seed", SEED, "--", target("clone_vm_counter"));

	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE ");
	assert_contains(summary(&r), "share its parent's whole memory",
			"the summary");
	res_free(&r);
}

/* Two processes that each map one shm_open object after a fork, at
 * addresses of their own, share memory ptloom names by the file's device,
 * inode and offset (tracer/syscall.c apart_mapped): a lost update between
 * them with no point in its window (tests/targets/shm_mapped_apart.c
 * "nosleep") was a PASS "complete to preemption bound 2", then
 * INCOMPLETE; now found, and its replay exact.  The correct twins (a
 * process-shared mutex in the object, an atomic add) pass, complete; a
 * named semaphore's file, mapped the same way, too. */
Test(child_processes, memory_shared_by_mappings_made_apart_is_modelled)
{
	struct res r = RUN9("--seed", SEED, "--no-minimize", "--",
			    target("shm_mapped_apart"), "nosleep");

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0");
	assert_contains(summary(&r), "shm_mapped_apart.c:", "the summary");
	replays_exactly(&r, "shm_mapped_apart.c:");
	res_free(&r);
	r = RUN9("--seed", SEED, "--no-minimize", "--",
		 target("shm_mapped_apart"));
	assert_exit(r, 1);
	res_free(&r);
	r = RUN9("--seed", SEED, "--", target("shm_mapped_apart_fixed"));
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	assert_contains(summary(&r), "complete to preemption bound 2",
			"the summary");
	res_free(&r);
	r = RUN9("--seed", SEED, "--", target("shm_mapped_apart_fixed"),
		 "atomic");
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	res_free(&r);
	r = RUN9("--seed", SEED, "--", target("sem_open_processes"));
	assert_exit(r, 0);
	res_free(&r);
}

/* What ptloom cannot name of a file mapped apart stays fenced: a mapping
 * moved by mremap, the file truncated while both map it, a private
 * mapping of it beside the shared ones (tests/targets/
 * shm_apart_unfollowed.c, correct, with a process-shared mutex: it passes
 * complete when none of those happens). */
Test(child_processes, mappings_made_apart_not_followed_are_never_a_pass)
{
	static const char *const how[] = { "mremap", "truncate", "private" };
	struct res r = RUN9("--seed", SEED, "--",
			    target("shm_apart_unfollowed"), "none");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	res_free(&r);
	for (int i = 0; i < 3; i++) {
		r = RUN9("--seed", SEED, "--", target("shm_apart_unfollowed"),
			 how[i]);
		assert_exit(r, 3);
		assert_summary(&r, "ptloom: INCOMPLETE ");
		assert_contains(summary(&r),
				"in a way ptloom does not follow",
				"the summary");
		res_free(&r);
	}
}

/* Was a false PASS: the shell's child ran freely. */
Test(child_processes, free_children_says_so)
{
	struct res r = RUN9("--free-children", "--seed", SEED, "--", "sh",
			    "-c", target("fork_race"));

	assert_contains(summary(&r), "(children not explored)", "the summary");
	res_free(&r);
}

static char *pipe_order(const char *seed)
{
	struct res r = RUN9("-s", "random", "-n", "1", "--seed", seed,
			    "--output", "--", target("pipe_writers"));

	assert_exit(r, 0);
	char *l = line_with(r.out, "order ");

	cr_assert_not_null(l, "no order line:\n%s", r.out);
	res_free(&r);
	return l;
}

Test(child_processes, pipe_writers_interleave_by_seed)
{
	char *first = pipe_order("1");
	char *again = pipe_order("1");
	bool differs = false;

	cr_assert_str_eq(first, again, "one seed, two interleavings");
	for (int k = 2; k <= 6 && !differs; k++) {
		char seed[8];

		snprintf(seed, sizeof(seed), "%d", k);
		char *o = pipe_order(seed);

		differs = strcmp(o, first) != 0;
		free(o);
	}
	cr_assert(differs, "seeds 1..6 all gave %s", first);
	free(first);
	free(again);
}

/*
 * A process that traces another (a debugger, strace, a hand-written
 * PTRACE_TRACEME child): ptloom is already the tracer of every process, so
 * the kernel would refuse it; the run says so, naming the process, instead
 * of a run unlike the native one (it was a false "exit status 4"), and the
 * verdict is INCOMPLETE (exit 3): ptloom's limit, not the program's
 * failure (it was "FAIL unsupported", exit 1).
 */
Test(child_processes, a_process_that_ptraces_is_unsupported)
{
	struct res r = RUN9("--no-minimize", "--seed", SEED, "--",
			    target("ptrace_child"));

	assert_exit(r, 3);
	assert_contains(r.out, "unsupported: P1 ptrace_child uses ptrace",
			"the output");
	assert_summary(&r, "ptloom: INCOMPLETE after 1 run: unsupported: P1 "
			   "ptrace_child uses ptrace");
	res_free(&r);
	if (system("command -v strace >/dev/null 2>&1")) {
		skip_note("strace missing: its check skipped");
		return;
	}
	r = RUN9("--no-minimize", "--seed", SEED, "--", "strace", "-f", "-o",
		 "/dev/null", "true");
	assert_exit(r, 3);
	assert_contains(r.out, "unsupported: P0 strace uses ptrace",
			"the output");
	res_free(&r);
}

/*
 * A wait ptloom answers by naming the child it picked in the call's
 * registers leaves them as the program wrote them (compiled code may read
 * them after the call: the kernel keeps them), and its rusage is the run's
 * (the program's points follow it).  Before, the program saw its own
 * wait4(-1)'s register hold the child's pid: a false failure.
 */
Test(child_processes, a_wait_gives_back_the_programs_registers)
{
	struct res r = RUN(target("reads_the_machine"), "--seed", SEED);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL exit status 1 in T0");
	replays_exactly(&r, "exit"); /* three times */
	res_free(&r);
}

/* So does a kill() to its own process whose signal ptloom sends to the
 * thread it picked (tgkill, other registers): the sender reads its own
 * back, in every sampled run and in the whole bounded search. */
Test(child_processes, a_routed_signal_gives_back_the_senders_registers)
{
	struct res r = RUN(target("kill_as_written"), "-s", "random", "-n",
			   "40", "--seed", SEED);

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 40 runs");
	res_free(&r);
	r = RUN(target("kill_as_written"), "--seed", SEED);
	assert_exit(r, 0);
	assert_contains(summary(&r), "complete to preemption bound",
			"the summary");
	res_free(&r);
}

/*
 * A process the program leaves running when its first process ends is
 * killed there: what it would have done after is in no run, and the
 * command says so.  `setsid` forks when it is a group leader (as every
 * program is under ptloom) and its parent exits at once.
 */
Test(child_processes, a_process_left_running_at_the_end_is_named)
{
	if (access("/usr/bin/setsid", X_OK))
		cr_skip_test("no /usr/bin/setsid (util-linux)");
	struct res r = PTL("run", "-s", "random", "-n", "3", "--seed", SEED,
			   "--", "/usr/bin/setsid", example("bank_fixed"));

	assert_exit(r, 0);
	/* P1 is setsid before its exec, bank_fixed after: as scheduled */
	assert_contains(r.err, "ptloom: note: P1 ", "stderr");
	assert_contains(r.err, " still ran when P0 ended (in 3 of 3 runs)",
			"stderr");
	res_free(&r);
	r = PTL("run", "-s", "random", "-n", "3", "--seed", SEED, "--",
		example("bank_fixed"));
	assert_exit(r, 0);
	cr_assert_null(strstr(r.err, "still ran"), "%s", r.err);
	res_free(&r);
}
