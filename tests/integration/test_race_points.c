/*
 * scheduling points beyond sync: atomics, racy accesses found by discovery,
 * the races command.
 */
#include "common.h"

TestSuite(race_points, .init = setup, .fini = teardown, .timeout = 180);

/* --- issue 5: atomics and races ----------------------------------------- */

Test(race_points, counter_race_missed_with_sync_points)
{
	struct res r = RUN(target("counter_race"), "--seed", SEED, "--points",
			   "sync");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS ");
	res_free(&r);
}

static void found_with(const char *program, const char *points,
		       const char *where)
{
	struct res r = RUN(program, "--seed", SEED, "--points", points,
			   "--timeout", "5");

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT");
	char *j = report();

	assert_json(j, "kind", "crash");
	assert_json(j, "signal", "SIGABRT");
	if (where)
		assert_contains(json_get(j, "location"), where,
				"the location");
	free(j);
	res_free(&r);
}

static void passes_complete_with(const char *program, const char *points)
{
	/* a spin's run single-steps its words where the debug registers do
	 * not trap: seconds on a loaded machine, too slow for a 5 s
	 * --timeout (INCOMPLETE, a CI run beside other tests) */
	struct res r = RUN(program, "--seed", SEED, "--points", points,
			   "--timeout", "30", "--max-time", "90");

	assert_exit(r, 0);
	char *s = summary(&r);

	assert_contains(s, "complete to preemption bound 2", "the summary");
	free(s);
	res_free(&r);
}

/* `ptloom races` on program (with arg, or none) finds a race whose
 * report holds object and, unless NULL, where */
static void race_reported(const char *program, const char *arg,
			  const char *object, const char *where)
{
	struct res r = arg ? PTL("races", "--seed", SEED, "--", program, arg)
			   : PTL("races", "--seed", SEED, "--", program);

	assert_exit(r, 1);
	assert_contains(r.out, object, "ptloom races' output (the object)");
	if (where)
		assert_contains(r.out, where,
				"ptloom races' output (the access)");
	res_free(&r);
}

/* bug is found (its failure located in where_found), its fixed twin
 * passes complete, and `ptloom races` on bug names object and where */
static void found_fixed_and_named(const char *bug, const char *fixed,
				  const char *where_found,
				  const char *object, const char *where)
{
	found_with(target(bug), "sync,races,tso", where_found);
	passes_complete_with(target(fixed), "sync,races,tso");
	race_reported(target(bug), NULL, object, where);
}

Test(race_points, counter_race_found_with_race_points)
{
	found_with(target("counter_race"), "races", "counter_race.c");
	found_with(target("counter_race_O2"), "races", "counter_race.c");
}

Test(race_points, bank_nolock_found_with_race_points)
{
	found_with(target("bank_nolock"), "races", NULL);
}

/*
 * At -O2 gcc loads balance once for the check and the subtraction, so the
 * overdraft the assert looks for cannot happen (two withdrawals race to a
 * lost update that leaves 0).  With race points every schedule of the
 * racy load and store must still be explored to the end and pass.
 */
Test(race_points, bank_nolock_O2_explored_with_race_points)
{
	passes_complete_with(target("bank_nolock_O2"), "races");
}

Test(race_points, bank_locked_passes_with_race_points)
{
	passes_complete_with(target("bank_locked"), "races");
}

Test(race_points, treiber_aba_found_with_atomic_points)
{
	found_with(target("treiber_aba"), "atomics", "treiber_aba.c");
}

Test(race_points, treiber_ok_passes_with_atomic_points)
{
	passes_complete_with(target("treiber_ok"), "atomics");
}

Test(race_points, peterson_passes_complete_without_hanging)
{
	passes_complete_with(target("peterson"), "races");
}

Test(race_points, spsc_ring_found_with_race_points)
{
	found_with(target("spsc_ring"), "races", "consumer");
}

Test(race_points, races_command_names_the_racy_source)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("counter_race"));

	assert_exit(r, 1);
	assert_contains(r.out, "counter_race.c", "ptloom races' output");
	res_free(&r);
}

/* More accesses than discovery can observe and no race: two runs that
 * each spend the whole budget (50,000 observation stops, no single-step:
 * the loads are emulated) end the discovery (six would cost three times
 * as much for nothing); the verdict stays PASS. */
/* Discovery ends after two runs that spent their budget without news;
 * what ran past the budget was not observed, so the verdict is no pass
 * (before: PASS, exit 0: a limit counted as a pass). */
Test(race_points, races_discovery_ends_after_two_full_runs_without_news)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("busy_private"));

	assert_exit(r, 3);
	assert_contains(r.out, "2 runs, 100000 accesses",
			"ptloom races' summary");
	assert_summary(&r, "ptloom: INCOMPLETE the observation budget");
	res_free(&r);
}

/* `test $imm, mem` only reads (capstone 4 reports its operand written):
 * two threads testing one flag do not race. */
Test(race_points, races_command_two_threads_testing_one_flag)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("flag_readers"));

	assert_exit(r, 0);
	assert_contains(r.out, "0 data races", "ptloom races' summary");
	res_free(&r);
}

Test(race_points, races_command_passes_a_locked_program)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("bank_locked"));

	assert_exit(r, 0);
	res_free(&r);
}

/* Condvars, rwlocks, barriers and semaphores synchronise partly inside
 * glibc (cond_wait unlocks and relocks its mutex, waiters sleep on
 * internal words): none of these correct programs has a race. */
Test(race_points, races_command_quiet_on_correct_blocking_programs)
{
	static const char *const progs[] = { "lost_wakeup_fixed",
					     "mutex_condvar", "rwlock",
					     "barrier", "semaphore", "sleeps",
					     NULL };

	for (int i = 0; progs[i]; i++) {
		struct res r = PTL("races", "--seed", SEED, "--",
				   example(progs[i]));

		cr_expect_eq(r.code, 0, "ptloom races on %s: exit %d\n%s",
			     progs[i], r.code, r.out);
		res_free(&r);
	}
}

Test(race_points, races_that_observed_nothing_is_incomplete)
{
	struct res r = PTL("races", "--seed", SEED, "--runs", "2", "--",
			   target("hostile_output"));

	assert_exit(r, 3);
	assert_summary(&r, "ptloom: INCOMPLETE");
	assert_contains(r.out, "no run observed", "summary");
	res_free(&r);
}

/* Two short threads whose race a lock at their start and at their end
 * hides in every run where one ends before the other starts: discovery's
 * cheap runs go on, some of them round-robin, until the two overlap.  The
 * lost update is found whatever the seed (with 6 random runs, 3 seeds of
 * 8 found it). */
Test(race_points, race_between_short_threads_found_whatever_the_seed)
{
	for (int seed = 0; seed < 8; seed++) {
		char sd[16];

		snprintf(sd, sizeof(sd), "%d", seed);
		struct res r = RUN(target("short_threads"), "--seed", sd,
				   "--no-minimize");

		assert_exit(r, 1);
		assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
				   "short_threads.c:");
		res_free(&r);
	}
}

/* ptloom races on each mode of tests/targets/handoffs.c, at -O0 and -O2:
 * exit code and what its output says. */
static void handoffs_races(const char *const *modes, int code,
			   const char *says)
{
	static const char *const builds[] = { "handoffs", "handoffs_O2" };

	for (int b = 0; b < 2; b++)
		for (size_t i = 0; modes[i]; i++) {
			struct res r = PTL("races", "--seed", SEED, "--",
					   target(builds[b]), modes[i]);

			cr_expect_eq(r.code, code, "ptloom races on %s %s: "
				     "exit %d\n%s", builds[b], modes[i],
				     r.code, r.out);
			cr_expect(strstr(r.out, says) != NULL, "%s %s: %s",
				  builds[b], modes[i], r.out);
			res_free(&r);
		}
}

/* Data handed over with no lock or libc call in between, as the hardware
 * and the kernel order it (tests/targets/handoffs.c): a global C11
 * _Atomic flag's release store and acquire load (plain movs on x86: its
 * DWARF type says atomic), _Atomic members of a global array, a pipe and
 * an eventfd, a detached worker's atomic counter read while main is
 * alone, the dead frames of detached threads on the stacks glibc gives
 * the next ones, a pthread_kill's handler.  Before, each of them was
 * reported as a race. */
Test(race_points, races_command_quiet_on_handoffs_through_atomics_descriptors_and_exits)
{
	static const char *const modes[] = { "c11_flag", "member_flags",
					     "descriptors", "detached",
					     "stack_reuse", "signal", NULL };

	handoffs_races(modes, 0, "0 data races");
}

/* ... and their racy twins are still reported: the flag a plain int, the
 * pipe written before the data, a detached worker's result read after a
 * sleep, the signal sent before the data is filled. */
Test(race_points, races_command_reports_the_racy_twins_of_the_handoffs)
{
	static const char *const modes[] = { "plain_flag", "pipe_late",
					     "sleep", "signal_late", NULL };

	handoffs_races(modes, 1, "race on data");
}

/* In a stripped program (no symbols, no debug information) an atomic's
 * load or release store is a plain mov like any other: a C11 _Atomic
 * flag handing data over (handoffs c11_flag, built stripped) was reported
 * as three data races, the flag's and the data's it orders (crossbeam's
 * channels in Debian's fd and b3sum alike).  ptloom races now calls them
 * possible, says why and what would judge them, and gives no pass and no
 * failure (exit 3); with -g the same program passes.  A race that stays
 * whatever those movs are is still a certain one: a pipe written after
 * the data was read, an unlocked `count++` (one read-modify-write, never
 * an atomic's). */
Test(race_points, races_in_code_without_debug_information_are_only_possible)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("handoffs_O2_stripped"), "c11_flag");

	assert_exit(r, 3);
	assert_contains(r.out, "possible race on", "the stripped flag's report");
	assert_contains(r.out, "without debug information",
			"the stripped flag's report");
	cr_expect(!strstr(r.out, "\nrace on") && !strstr(r.out, "RACES"),
		  "a certain race reported:\n%s", r.out);
	assert_summary(&r, "ptloom: INCOMPLETE 3 possible races");
	res_free(&r);

	r = PTL("races", "--seed", SEED, "--", target("handoffs_O2"),
		"c11_flag");
	assert_exit(r, 0);
	res_free(&r);

	r = PTL("races", "--seed", SEED, "--", target("handoffs_O2_stripped"),
		"pipe_late");
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: RACES 2 data races found");
	res_free(&r);

	r = PTL("races", "--seed", SEED, "--", target("plain_inc_O2_stripped"));
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: RACES 1 data race found");
	res_free(&r);
}

/* A program that ends with an exit status (grep finding nothing, a test
 * that fails) ran to its end: its runs were observed whole.  Before,
 * `ptloom races` said "no run observed the program to its end (... it
 * crashed, hung or was refused)", INCOMPLETE, whether it had seen a race
 * or not. */
Test(race_points, races_of_a_program_exiting_with_a_status_are_judged)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("status_after_threads"));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 0 data races found");
	res_free(&r);
	r = PTL("races", "--seed", SEED, "--", target("status_after_threads"),
		"racy");
	assert_exit(r, 1);
	assert_contains(r.out, "race on unlocked", "the racy mode's report");
	res_free(&r);
}

/* A writer frees the configuration it replaced while the reader may still
 * read it (tests/targets/free_while_read.c, an RCU update without its
 * grace period).  The free is the only write there (the allocator's
 * stores are libc's, not observed), and discovery forgot the block at the
 * free: no race, no race point, and `run` said "PASS complete to
 * preemption bound 2" (so did liburcu's readers with the writer's
 * synchronize_rcu left out).  A free is now a write of the whole block,
 * as ThreadSanitizer takes it: the race is reported ("free  by"), and the
 * read of freed memory fails; freeing after the joins has no race. */
Test(race_points, a_block_freed_while_another_thread_reads_it_races)
{
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("free_while_read_O2"));

	assert_exit(r, 1);
	assert_contains(r.out, "  free  by T2 at writer at free_while_read.c:",
			"ptloom races");
	assert_contains(r.out, "  read  by T1 at reader at free_while_read.c:",
			"ptloom races");
	res_free(&r);
	r = RUN(target("free_while_read_O2"), "--seed", SEED, "--no-minimize");
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T1 (reader at "
			   "free_while_read.c:");
	res_free(&r);
	r = PTL("races", "--seed", SEED, "--", target("free_while_read_O2"),
		"fixed");
	assert_exit(r, 0);
	res_free(&r);
	r = PTL("run", "--seed", SEED, "--", target("free_while_read_O2"),
		"fixed");
	assert_exit(r, 0);
	res_free(&r);
}

/*
 * A copy or a clear of many bytes that no instruction of the program
 * makes as an access: libc's memcpy and memset (-fno-builtin: called
 * through the PLT) and the `rep movsq` gcc makes of the copy.  Race
 * discovery takes their ranges at the call (at the instruction), so the
 * writer's stores become points and the torn snapshot is found, where
 * before the search said "PASS, complete to preemption bound 2"; the
 * locked twins pass complete.  `ptloom races` names the record and the
 * memset's and memcpy's lines; its global lies past the file's page of
 * the bss, where the heap's mapping begins (before: a bare address).
 */
Test(race_points, copies_and_clears_made_by_libc_or_a_string_instruction_race)
{
	static const char *const bugs[] = { "torn_copy_O0", "torn_copy_O2",
					    "torn_copy_libc" };
	static const char *const fixed[] = { "torn_copy_fixed_O0",
					     "torn_copy_fixed_O2",
					     "torn_copy_fixed_libc" };

	for (int i = 0; i < 3; i++) {
		/* (the default points) */
		found_with(target(bugs[i]), "sync,races,tso", "torn_copy.c");
		passes_complete_with(target(fixed[i]), "sync,races,tso");
	}
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("torn_copy_libc"), "clear");

	assert_exit(r, 1);
	assert_contains(r.out, "race on shared ", "ptloom races' output");
	assert_contains(r.out, "at writer at torn_copy.c:32",
			"ptloom races' output (the memset)");
	assert_contains(r.out, "at main at torn_copy.c:54",
			"ptloom races' output (the memcpy)");
	res_free(&r);
	r = PTL("races", "--seed", SEED, "--", target("torn_copy_fixed_libc"),
		"clear");
	assert_exit(r, 0);
	res_free(&r);
}

/*
 * A shared string that no instruction of the program reads: libc's
 * strcpy, strcmp, strchr, memcmp, strcat, strstr, strspn, atol and strlen
 * read it (-fno-builtin:
 * all called; -O0 and -O2 copy with strcpy or stpcpy), or a repe cmpsb
 * or repne scasb reads as far as the data says.  Race discovery
 * takes the bytes each reads (and writes) at its call, a string's length
 * from memory then, so the writer's stores become points and the torn
 * name is found, where each said "PASS, complete to preemption bound 2"
 * before; the locked twins pass complete, and `ptloom races` names the
 * strcmp's line.
 */
Test(race_points, strings_read_by_libc_string_functions_race)
{
	static const char *const modes[] = {
		"copy",	  "compare", "find",  "memcmp", "append",
		"search", "span",    "parse", "length",
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct res r = PTL("run", "--seed", SEED, "--timeout", "5",
				   "--", target("torn_string_libc"), modes[i]);

		assert_exit(r, 1);
		assert_summary(&r, "ptloom: FAIL crash SIGABRT");
		res_free(&r);
	}
	found_with(target("torn_string_O0"), "sync,races,tso",
		   "torn_string.c");
	found_with(target("torn_string_O2"), "sync,races,tso",
		   "torn_string.c");
	passes_complete_with(target("torn_string_fixed_libc"),
			     "sync,races,tso");
	struct res r = PTL("run", "--seed", SEED, "--",
			   target("torn_string_fixed_libc"), "append");

	assert_exit(r, 0);
	char *sum = summary(&r);

	assert_contains(sum, "complete to preemption bound 2", "the summary");
	free(sum);
	res_free(&r);
	/* string instructions: repe cmpsb (before: "PASS, complete"),
	 * repne scasb */
	r = PTL("run", "--seed", SEED, "--timeout", "5", "--",
		target("inline_string_ops"));
	assert_exit(r, 1);
	res_free(&r);
	r = PTL("run", "--seed", SEED, "--timeout", "5", "--",
		target("inline_string_ops"), "length");
	assert_exit(r, 1);
	res_free(&r);
	r = PTL("run", "--seed", SEED, "--", target("inline_string_ops_fixed"));
	assert_exit(r, 0);
	res_free(&r);
	race_reported(target("torn_string_libc"), "compare", "race on name",
		      "at writer at torn_string.c:34");
	race_reported(target("torn_string_libc"), "compare", "race on name",
		      "at main at torn_string.c:69");
}

/*
 * A race whose every instruction is in a shared library of the program's
 * own build (libcounter.so, found through the executable's RPATH, as a
 * CMake or meson project links its tests).  Such a library's code is the
 * program's: discovery observes it and its atomics are points, where only
 * the executable's were, and the search said "PASS, complete to
 * preemption bound 2" (126 runs).  The locked twin passes complete, and
 * `ptloom races` names the library's line.
 */
Test(race_points, races_in_the_programs_own_shared_libraries_are_found)
{
	found_fixed_and_named("library_counter", "library_counter_fixed",
			      "library_counter_main.c", "race on visits",
			      "at counter_visit at library_counter.c:19");
}

/*
 * A writer fills an array in one loop while main reads its last element
 * twice (-O2): the store that races is the loop's 400th run of one
 * instruction.  Race discovery kept 256 observations of an instruction,
 * so it never saw that store, and the search said "PASS, complete to
 * preemption bound 2" (8 runs); `ptloom races` said PASS, 0 races, even
 * at 1,000 elements.  Up to 4,096 observations of one instruction are
 * kept now (the run's budget still bounds its stops).  Reading after the
 * join passes complete.
 */
Test(race_points, races_at_the_end_of_a_long_loop_are_found)
{
	const char *prog = target("array_tail");

	found_with(prog, "sync,races,tso", "array_tail.c");
	struct res r = PTL("run", "--seed", SEED, "--timeout", "10", "--",
			   prog, "fixed");

	assert_exit(r, 0);
	assert_contains(r.out, "complete to preemption bound 2",
			"the summary");
	res_free(&r);
	race_reported(prog, "1000", "race on a+3996", "array_tail.c");
}

/*
 * The same library dlopen'ed by a program that already has threads (a
 * plugin): its code was mapped after race discovery swept the program,
 * so its race had no point (before: "PASS, complete to preemption bound
 * 2", 160 runs).  ptloom does not arm it where it is mapped, and says so:
 * INCOMPLETE naming it, serially, under -j and in `ptloom races`.  Loaded
 * before the first thread it is found; a system library loaded late
 * (libm) changes nothing.
 */
Test(race_points, a_plugin_loaded_after_the_first_thread_is_no_pass)
{
	const char *late = target("late_plugin");
	const char *const jobs[] = { "1", "2" };

	for (int j = 0; j < 2; j++) {
		struct res r = PTL("run", "--seed", SEED, "-j", jobs[j],
				   "--timeout", "10", "--", late);

		assert_exit(r, 3);
		assert_summary(&r, "ptloom: INCOMPLETE");
		assert_contains(r.out, "loaded after its first thread started "
				       "(libcounter.so, dlopen'ed)",
				"the summary");
		res_free(&r);
	}
	struct res r = PTL("races", "--seed", SEED, "--", late);

	assert_exit(r, 3);
	assert_contains(r.out, "(libcounter.so, dlopen'ed)", "the summary");
	res_free(&r);
	r = PTL("run", "--seed", SEED, "--timeout", "10", "--", late, "early");
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT");
	res_free(&r);
	r = PTL("run", "--seed", SEED, "--timeout", "10", "--", late,
		"system");
	assert_exit(r, 0);
	assert_contains(r.out, "complete to preemption bound 2",
			"the summary");
	res_free(&r);
}

/*
 * A race in the code of a system library that works on the program's
 * objects: two threads append to one std::string, and
 * basic_string::_M_append is libstdc++'s, not inlined; two threads insert
 * into one GHashTable (GLib's code; skipped, saying so, without
 * libglib2.0-dev).
 * Its accesses are observed as the program's (before: "PASS, complete to
 * preemption bound 2", 128 runs), but not what it does to its own state:
 * both threads print through std::cout, whose fields every << writes (an
 * object libstdc++ owns, copied into the executable's bss), and the
 * locked twin passes complete with no race reported.
 */
Test(race_points, races_in_system_libraries_code_on_the_programs_objects_are_found)
{
	found_with(target("shared_string"), "sync,races,tso", NULL);
	passes_complete_with(target("shared_string_fixed"),
			     "sync,races,tso");
	struct res r = PTL("races", "--seed", SEED, "--",
			   target("shared_string_fixed"));

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS 0 data races found");
	res_free(&r);
	race_reported(target("shared_string"), NULL, "race on log_line", NULL);
	/* (before: "PASS, complete to preemption bound 2", 128 runs) */
	if (access(target("glib_shared_table"), X_OK)) {
		skip_note("glib_shared_table was not built (no libglib2.0-dev; "
			  "scripts/setup.sh installs it): its part skipped");
		return;
	}
	struct res g = PTL("run", "--seed", SEED, "--timeout", "5", "--",
			   target("glib_shared_table"));

	assert_exit(g, 1);
	res_free(&g);
	passes_complete_with(target("glib_shared_table_fixed"),
			     "sync,races,tso");
}

/*
 * A race on libc's hidden state: strtok keeps its position in the string
 * it splits in libc, one for the process, and no instruction of the
 * program touches it.  A call of strtok (and of localtime, gmtime,
 * getenv/setenv, drand48, getpwnam, gethostbyname...) is
 * observed as an access to that state, named in the report (gmtime's
 * also as a write of the struct tm it returns); two threads splitting
 * their own lists was "PASS, complete to preemption bound 2" (128 runs),
 * and strtok_r's twin passes complete.
 */
Test(race_points, libc_functions_sharing_hidden_state_race)
{
	found_fixed_and_named("shared_strtok", "shared_strtok_fixed",
			      "shared_strtok.c", "race on strtok's position",
			      "at count_items at shared_strtok.c:23");
	/* gmtime's struct tm, which the program reads once the call
	 * returned: its read races with the other thread's call (before:
	 * "PASS, complete", 162 runs) */
	found_fixed_and_named("shared_tm", "shared_tm_fixed", "shared_tm.c",
			      "race on the struct tm of localtime and gmtime",
			      NULL);
}

/*
 * A buffer that libc's I/O functions fill or drain for the program: read,
 * recv, fread and fgets write it (the kernel's or libc's stores), write,
 * send, fwrite and puts read it, sprintf and strftime write a string into
 * it, qsort sorts it.  Their calls are observed as those ranges (a
 * sprintf's first byte: its length is known at the return).  main
 * filling a buffer with read() while a thread copies it byte by byte was
 * "PASS, complete to preemption bound 2" (10 runs); the locked twin
 * passes complete.
 */
Test(race_points, buffers_filled_by_libc_io_functions_race)
{
	found_fixed_and_named("read_into_shared", "read_into_shared_fixed",
			      "read_into_shared.c", "race on buf",
			      "at main at read_into_shared.c:45");
}

/* program with arg (NULL: none) passes complete to bound 2, and `ptloom
 * races` finds no race in it */
static void passes_complete_without_races(const char *program,
					  const char *arg)
{
	struct res r = RUN9("--seed", SEED, "--", program, arg);

	assert_exit(r, 0);
	assert_contains(r.out, "complete to preemption bound 2", "the summary");
	res_free(&r);
	r = PTL("races", "--seed", SEED, "--", program, arg);
	assert_exit(r, 0);
	assert_contains(r.out, "PASS 0 data races", "ptloom races");
	res_free(&r);
}

/* One process that maps one file twice (a memfd's two views, as a ring
 * buffer maps its pages back to back): the same byte at two addresses is
 * one object, named by the file's device, inode and offset.  Before, two
 * threads' lost update through the two views passed, "complete to
 * preemption bound 2", and `ptloom races` found none: the views'
 * addresses were two objects.  Now found and replayed exactly, and
 * raced; the twins that lock a process-shared mutex through the two
 * views, or run a ring of records that wrap into the second view, pass
 * complete with no race (a wait through one view meets the post through
 * the other), and the ring's producer that publishes early is found; a
 * second view that mremap makes is not followed: no pass; two windows of
 * the file (no byte in both) are no aliases and pass complete
 * (tests/targets/two_views.c). */
Test(race_points, one_file_mapped_twice_by_one_process_is_one_memory)
{
	const char *views = target("two_views");
	struct res r = RUN9("--seed", SEED, "--no-minimize", "--", views);

	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
			   "two_views.c:");
	replays_exactly(&r, "two_views.c:");
	res_free(&r);
	r = PTL("races", "--seed", SEED, "--", views);
	assert_exit(r, 1);
	assert_contains(r.out, "write by T1 at add at two_views.c:",
			"ptloom races' output");
	assert_contains(r.out, "write by T2 at add at two_views.c:",
			"ptloom races' output");
	res_free(&r);
	r = RUN9("--seed", SEED, "--no-minimize", "--", views, "early");
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (ring_main at "
			   "two_views.c:");
	res_free(&r);
	/* a second view made by mremap (old size 0): not followed; with
	 * -j 2 too, where the workers' reasons were lost ("bound 2 not
	 * exhausted") */
	static const char *const jobs[] = { "1", "2" };

	for (int j = 0; j < 2; j++) {
		r = RUN9("--seed", SEED, "-j", jobs[j], "--", views, "mremap");
		assert_exit(r, 3);
		assert_contains(summary(&r), "in a way ptloom does not follow",
				"the summary");
		res_free(&r);
	}
	/* (windows: two mappings of different offsets, no byte in both, no
	 * aliasing: it was INCOMPLETE, "beyond its first mapping", while
	 * this change was made) */
	static const char *const correct[] = { "locked", "ring", "windows" };

	for (int i = 0; i < 3; i++)
		passes_complete_without_races(views, correct[i]);
}

/* A SysV shared memory segment attached twice (shmat), by two threads of
 * one process at two addresses or by a parent and its child each after
 * the fork: one memory, named by the segment's inode and offset.  Before,
 * both lost updates passed "complete to preemption bound 2" (shmat was
 * not looked at); now found and raced, and the processes' additions under
 * a process-shared mutex in the segment pass complete with no race
 * (tests/targets/sysv_attached_twice.c). */
Test(race_points, a_sysv_segment_attached_twice_is_one_memory)
{
	const char *prog = target("sysv_attached_twice");
	static const char *const buggy[] = { "threads", "processes" };

	for (int i = 0; i < 2; i++) {
		struct res r = RUN9("--seed", SEED, "--no-minimize", "--", prog,
				    buggy[i]);

		assert_exit(r, 1);
		assert_summary(&r, "ptloom: FAIL crash SIGABRT in T0 (main at "
				   "sysv_attached_twice.c:");
		res_free(&r);
		r = PTL("races", "--seed", SEED, "--", prog, buggy[i]);
		assert_exit(r, 1);
		assert_contains(r.out, "sysv_attached_twice.c:",
				"ptloom races' output");
		res_free(&r);
	}
	passes_complete_without_races(prog, "locked");
}

/* A thread-local variable whose address reaches another thread: its
 * owner reaches it %fs-relative, which race discovery left out of its
 * points (as a thread's stack-relative accesses), so a worker's, or
 * main's, counter that another thread adds to through the pointer lost
 * its update under "PASS ..., complete to preemption bound 2", and
 * `ptloom races` found nothing.  Another thread's access to a thread's
 * thread-local data (main's: the loader's mapping its thread pointer is
 * in) now makes discovery observe the %fs-relative accesses too; the
 * twins that lock, or sum the counters between barriers, pass complete
 * with no race (tests/targets/thread_local_shared.c). */
Test(race_points, thread_local_data_reached_by_another_thread_races)
{
	const char *prog = target("thread_local_shared");
	static const char *const buggy[] = { "worker", "main" };
	static const char *const where[] = { "(owner at thread_local_shared.c:",
					     "(main at thread_local_shared.c:" };

	for (int i = 0; i < 2; i++) {
		struct res r = RUN9("--seed", SEED, "--no-minimize", "--", prog,
				    buggy[i]);

		assert_exit(r, 1);
		assert_contains(summary(&r), where[i], "the summary");
		replays_exactly(&r, "thread_local_shared.c:");
		res_free(&r);
		r = PTL("races", "--seed", SEED, "--", prog, buggy[i]);
		assert_exit(r, 1);
		assert_contains(r.out, "thread_local_shared.c:",
				"ptloom races' output");
		res_free(&r);
	}
	static const char *const correct[] = { "locked", "sum" };

	for (int i = 0; i < 2; i++)
		passes_complete_without_races(prog, correct[i]);
}

/* Memory unmapped and mapped again is a new object: two threads that each
 * map, fill, check and unmap a buffer in turn, which the kernel gives the
 * same addresses, got races reported on a correct program (and a search
 * that ran past two minutes where 126 runs complete bound 2): munmap is
 * now a free of its range for race discovery.  A worker still reading a
 * buffer main unmaps races with the unmap, named at main's call, and the
 * crash is found (tests/targets/unmapped_buffers.c). */
Test(race_points, memory_unmapped_and_mapped_again_is_a_new_object)
{
	const char *prog = target("unmapped_buffers");

	passes_complete_without_races(prog, NULL);
	struct res r = PTL("races", "--seed", SEED, "--", prog, "early");
	assert_exit(r, 1);
	assert_contains(r.out, "free  by T0 at main at unmapped_buffers.c:",
			"ptloom races' output");
	res_free(&r);
	r = RUN9("--seed", SEED, "--no-minimize", "--", prog, "early");
	assert_exit(r, 1);
	assert_summary(&r, "ptloom: FAIL crash SIGSEGV in T1 (reader at "
			   "unmapped_buffers.c:");
	res_free(&r);
}

/* prog's mode arg loses a handler's update: FAIL crash SIGABRT in who
 * ("T0") at where ("main at FILE.c:"), replayed exactly; `ptloom races`
 * counts the pair apart */
static void handler_race_in(const char *prog, const char *arg,
			    const char *who, const char *where)
{
	struct res r = RUN9("--seed", SEED, "--no-minimize", "--", prog, arg);
	char want[160];

	assert_exit(r, 1);
	snprintf(want, sizeof(want), "ptloom: FAIL crash SIGABRT in %s (%s",
		 who, where);
	assert_summary(&r, want);
	replays_exactly(&r, where);
	res_free(&r);
	r = PTL("races", "--seed", SEED, "--", prog, arg);
	assert_exit(r, 0);
	assert_contains(r.out, "between a thread and a signal handler "
			       "running in it", "ptloom races' output");
	res_free(&r);
}

static void handler_race_found(const char *prog, const char *arg,
			       const char *where)
{
	handler_race_in(prog, arg, "T0", where);
}

/* A signal handler comes between two instructions of the thread it
 * interrupts: a counter that a thread adds to (load, add, store) and its
 * own SIGUSR1 handler adds to, the signal sent by another thread, lost
 * the handler's increment under "PASS ..., complete to preemption bound
 * 2": race discovery ordered a handler after all its thread had done, so
 * the thread's load and store were no points.  A handler is now a
 * context of its own, ordered after what its thread did before it last
 * unblocked signals and after the sender's send; the pairs are points,
 * not reported as data races (a volatile sig_atomic_t flag is how C says
 * to talk to a handler).  Found in main and in a worker and replayed
 * exactly; the twins that block the signal around the increments, set
 * only a flag, take their own fault, or siglongjmp out of the handler pass
 * complete with no race (tests/targets/handler_in_its_thread.c). */
Test(race_points, a_signal_handler_between_two_instructions_of_its_thread)
{
	const char *prog = target("handler_in_its_thread");
	static const char *const buggy[] = { "main", "worker" };

	for (int i = 0; i < 2; i++)
		handler_race_found(prog, buggy[i],
				   "main at handler_in_its_thread.c:");
	static const char *const correct[] = { "blocked", "flag", "fault",
					       "longjmp" };

	for (int i = 0; i < 4; i++)
		passes_complete_without_races(prog, correct[i]);
}

/* The same in a process of one thread, the signal its own timer's
 * (setitimer every millisecond, or timer_create's SIGUSR1 once) or its
 * parent's kill: before, such a process had no breakpoints and was not
 * observed (alone), and the lost update passed "complete to preemption
 * bound 2" (58, 6 and 34 runs).  Now found and replayed
 * exactly; the twins that block the signal around the increment, or
 * whose handler only sets a volatile sig_atomic_t, pass complete with no
 * race. */
Test(race_points, a_handler_between_two_instructions_of_the_only_thread)
{
	const char *prog = target("handler_in_its_only_thread");
	static const char *const buggy[] = { "itimer", "posix" };

	for (int i = 0; i < 2; i++)
		handler_race_found(prog, buggy[i],
				   "main at handler_in_its_only_thread.c:");
	/* (the parent aborts on the child's exit status: the failure names
	 * the child, as for a runner) */
	handler_race_in(prog, "kill", "P1 handler_in_its_ T0",
			"signalled_child at handler_in_its_only_thread.c:");
	passes_complete_without_races(prog, "blocked");
	passes_complete_without_races(prog, "flag");
	passes_complete_without_races(prog, "kill_flag");
}
