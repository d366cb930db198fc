/*
 * blocking waits ptloom schedules (file locks, SIGCHLD) and the ones it
 * names when it does not.
 */
#include "common.h"

TestSuite(blocking_waits, .init = setup, .fini = teardown, .timeout = 240);

/* ptloom run ... -- flock_threads TMP/lock MODE, under a shell */
static struct res flock_run(const char *opts, const char *mode)
{
	char line[3 * PATH_MAX];

	snprintf(line, sizeof(line), "rm -f %s/lock*; %s run %s --seed %s "
		 "--timeout 20 -- %s %s/lock %s", tmp, ptloom(), opts, SEED,
		 target("flock_threads"), tmp, mode);
	return sh(line);
}

/*
 * flock(2) and fcntl's record-lock waits (F_SETLKW, F_OFD_SETLKW) are
 * scheduling points whose readiness ptloom judges (tracer/flock.c):
 * before, a thread waiting in the kernel for a lock a thread ptloom held
 * kept every such run past --timeout (INCOMPLETE).
 * Two threads (and a parent and its child) under one lock: complete; a
 * thread that skips the lock: the lost update, replayed exactly; two
 * locks in opposite orders: a deadlock, which names the flock waits.
 */
Test(blocking_waits, flock_is_scheduled)
{
	struct res r = flock_run("--dfs-only -p 1", "");
	char *s = summary(&r);

	assert_exit(r, 0);
	assert_contains(s, "complete to preemption bound 1", "the summary");
	free(s);
	res_free(&r);
	/* a parent and its child under flock, under a POSIX record lock
	 * (lockf); two threads under an OFD record lock */
	static const char *const kinds[] = { "fork", "lockf", "ofd" };

	for (int i = 0; i < 3; i++) {
		r = flock_run("--dfs-only -p 1", kinds[i]);
		s = summary(&r);
		assert_exit(r, 0);
		assert_contains(s, "complete to preemption bound 1",
				"the summary");
		free(s);
		res_free(&r);
	}
	r = flock_run("", "abba");
	s = summary(&r);
	assert_exit(r, 1);
	assert_contains(s, "FAIL deadlock", "the summary");
	assert_contains(s, "flock(fd ", "the summary");
	free(s);
	res_free(&r);
	r = flock_run("", "racy");
	assert_exit(r, 1);
	char *line = line_with(r.out, "replay: ");

	cr_assert_not_null(line, "no replay: line:\n%s", r.out);
	char cmd[4 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -f %s/lock*; %s", tmp,
		 line + strlen("replay: "));
	struct res x = sh(cmd);

	assert_exit(x, 1);
	assert_contains(x.out, "identical to the recording", "the replay");
	free(line);
	res_free(&x);
	res_free(&r);
	/* a file main locked before its first thread: runs exec (a forked
	 * run shares the template's description and its lock) */
	r = flock_run("-s random -n 5", "held");
	assert_exit(r, 0);
	res_free(&r);
	/* util-linux's flock(1) in a shell: two subshells add to a file's
	 * count under it (before: every run INCOMPLETE past --timeout) */
	char script[PATH_MAX];

	snprintf(script, sizeof(script), "%s/count.sh", tmp);
	FILE *f = fopen(script, "w");

	cr_assert_not_null(f);
	fprintf(f, "cd %s && echo 0 >cnt\n"
		   "for i in 1 2; do (for j in 1 2; do flock lock sh -c "
		   "'c=$(cat cnt); echo $((c+1)) >cnt'; done) & done\n"
		   "wait; test \"$(cat cnt)\" = 4\n", tmp);
	fclose(f);
	if (system("command -v flock >/dev/null 2>&1")) {
		fprintf(stderr, "flock_is_scheduled: no flock(1) (util-linux):"
				" its shell part is skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "%s run -q -s random -n 3 --seed %s --timeout 20 -- sh %s",
		 ptloom(), SEED, script);
	x = sh(cmd);
	assert_exit(x, 0);
	res_free(&x);
}

/* A thread asleep in the kernel in a wait ptloom does not schedule (a
 * vmsplice into a full pipe another thread drains): not covered, and the
 * summary names the syscall rather than only "raise --timeout". */
Test(blocking_waits, a_wait_ptloom_does_not_schedule_is_named)
{
	char line[3 * PATH_MAX];

	snprintf(line, sizeof(line),
		 "%s run -s random -n 2 --seed %s --timeout 2 -- %s %s/lock "
		 "vmsplice",
		 ptloom(), SEED, target("flock_threads"), tmp);
	struct res r = sh(line);
	char *s = summary(&r);

	assert_exit(r, 3);
	assert_contains(s, "sleeps in the kernel in vmsplice(2), a wait "
			   "ptloom does not schedule", "the summary");
	free(s);
	res_free(&r);
}

/* ptloom run OPTS -- fifo_open TMP/fifo MODE */
static struct res fifo_run(const char *opts, const char *mode)
{
	char line[3 * PATH_MAX];

	snprintf(line, sizeof(line), "%s run %s --seed %s --timeout 20 -- %s "
		 "%s/fifo %s", ptloom(), opts, SEED, target("fifo_open"), tmp,
		 mode);
	return sh(line);
}

/*
 * The open of a FIFO the program made is a wait of the model
 * (tracer/fifo.c): an open for reading is ready once the FIFO is open
 * for writing or another thread waits in an open for writing, and the
 * other way round.  Before, the opener slept in the kernel while ptloom
 * held the thread that would open the other end: every such run was
 * INCOMPLETE past --timeout.  Two threads and a parent and its child
 * meeting on a FIFO: complete; an order bug behind the FIFO: found,
 * replayed exactly; an open nobody in the program completes: INCOMPLETE,
 * waiting for the world (a process outside may open the other end); a
 * shell's mkfifo between a subshell and its parent: complete.
 */
Test(blocking_waits, a_fifo_open_is_a_wait)
{
	static const char *const pass[] = { "threads", "fork" };
	struct res r;
	char *s;

	for (int i = 0; i < 2; i++) {
		r = fifo_run("", pass[i]);
		s = summary(&r);
		assert_exit(r, 0);
		assert_contains(s, "PASS", "the summary");
		assert_contains(s, "complete to preemption bound", "the summary");
		free(s);
		res_free(&r);
		r = fifo_run("-s random -n 10", pass[i]);
		assert_exit(r, 0);
		res_free(&r);
	}
	r = fifo_run("", "order");
	assert_exit(r, 1);
	assert_contains(r.out, "the byte came before the flag", "the output");
	char *line = line_with(r.out, "replay: ");

	cr_assert_not_null(line, "no replay: line:\n%s", r.out);
	struct res x = sh(line + strlen("replay: "));

	assert_exit(x, 1);
	assert_contains(x.out, "identical to the recording", "the replay");
	free(line);
	res_free(&x);
	res_free(&r);
	/* nobody in the program opens the other end: a process outside
	 * still may (a client started apart from its server), so the run
	 * waits for the world, up to --timeout: INCOMPLETE, never a false
	 * deadlock */
	char lonely[3 * PATH_MAX];

	snprintf(lonely, sizeof(lonely),
		 "%s run --seed %s --timeout 2 -- %s %s/fifo lonely", ptloom(),
		 SEED, target("fifo_open"), tmp);
	r = sh(lonely);
	s = summary(&r);
	assert_exit(r, 3);
	assert_contains(s, "INCOMPLETE", "the summary");
	assert_contains(s, "waits on a FIFO's open, whose other end only a "
			   "process outside the program can still open",
			"the summary");
	free(s);
	res_free(&r);
	/* a shell script's mkfifo, a subshell writing, its parent reading */
	char script[PATH_MAX], cmd[4 * PATH_MAX];

	snprintf(script, sizeof(script), "%s/fifo.sh", tmp);
	FILE *f = fopen(script, "w");

	cr_assert_not_null(f);
	fprintf(f, "cd %s && rm -f shf && mkfifo shf\n"
		   "(echo hello >shf) &\n"
		   "read x <shf; wait; rm -f shf; test \"$x\" = hello\n",
		   tmp);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "%s run -s random -n 3 --seed %s --timeout 20 -- sh %s",
		 ptloom(), SEED, script);
	x = sh(cmd);
	s = summary(&x);
	assert_exit(x, 0);
	assert_contains(s, "PASS", "the summary");
	free(s);
	res_free(&x);
}

/*
 * SIGCHLD reaches a thread blocked in an emulated poll, read, sem_wait or
 * epoll_wait, and its handler runs, while another thread is blocked too
 * (the signal may go to either: the one that does not take it waits on;
 * a read handed to the kernel without the signal hung).
 */
Test(blocking_waits, sigchld_reaches_blocked_waits)
{
	static const char *modes[] = { "poll", "read", "sem", "epoll" };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct res r = RUN9("-q", "-p", "1", "--seed", SEED, "--",
				    target("sigchld_wait"), modes[i], "t");

		assert_exit(r, 0);
		assert_contains(summary(&r), "complete to preemption bound 1",
				modes[i]);
		res_free(&r);
		r = RUN9("-q", "-s", "random", "-n", "20", "--seed", SEED,
			 "--", target("sigchld_wait"), modes[i], "t");
		assert_exit(r, 0);
		res_free(&r);
	}
}

/*
 * A sleep that SIGCHLD interrupts leaves the time left on the virtual
 * clock, as a sleep any other signal interrupts does
 * (tests/targets/sleep_rest_after_sigchld.c sleeps the rest, as rsync's
 * msleep does).  Before, the kernel ran the sleep with the signal
 * pending and wrote its own rest, from the machine's clock and its timer
 * slack (20.048627 ms of 20 ms asked, another value each run): the next
 * sleep's length differed from run to run, and every search stopped at
 * its second run, INCOMPLETE ("does not repeat itself"), rsync's too.
 */
Test(blocking_waits, a_sleep_sigchld_interrupts_leaves_the_virtual_rest)
{
	struct res r = RUN9("-q", "-p", "1", "--seed", SEED, "--",
			    target("sleep_rest_after_sigchld"));

	assert_exit(r, 0);
	assert_contains(summary(&r), "complete to preemption bound 1",
			"the summary");
	res_free(&r);
	r = RUN9("-q", "-s", "random", "-n", "20", "--seed", SEED, "--",
		 target("sleep_rest_after_sigchld"));
	assert_exit(r, 0);
	res_free(&r);
}

/*
 * A ready select, pselect6 or ppoll reports the virtual time its timeout
 * has left: all of it when it was ready at once (none when the schedule
 * took its timeout: time jumped to its deadline), the rest of the virtual
 * time it waited when a writer woke it; the same schedules print the same
 * lines.  The kernel answers ready waits and wrote the machine's clock's
 * rest (0.999998 s of 1 s, 1.999999559 of 2), a different line from the
 * same schedule.
 */
Test(blocking_waits, a_ready_wait_reports_virtual_time_left)
{
	struct res r = RUN9("-q", "--output", "-s", "random", "-n", "8",
			    "--seed", SEED, "--",
			    target("ready_wait_time_left"));
	struct res again = RUN9("-q", "--output", "-s", "random", "-n", "8",
				"--seed", SEED, "--",
				target("ready_wait_time_left"));
	int sel = 0, psel = 0;

	assert_exit(r, 0);
	assert_exit(again, 0);
	cr_expect_str_eq(r.out, again.out, "`%s` twice: different output",
			 r.cmd);
	for (const char *p = strstr(r.out, "ready select: "); p;
	     p = strstr(p + 1, "ready select: "), sel++)
		cr_expect(!strncmp(p, "ready select: 1, 1.000000 s left", 32) ||
				  !strncmp(p, "ready select: 1, 0.000000 s left",
					   32),
			  "`%s`: a ready select's time left:\n%s", r.cmd,
			  r.out);
	for (const char *p = strstr(r.out, "ready pselect6: "); p;
	     p = strstr(p + 1, "ready pselect6: "), psel++)
		cr_expect(!strncmp(p, "ready pselect6: 1, 2.000000000 s left",
				   37) ||
				  !strncmp(p,
					   "ready pselect6: 1, 0.000000000 s left",
					   37),
			  "`%s`: a ready pselect6's time left:\n%s", r.cmd,
			  r.out);
	cr_expect(sel == 8 && psel == 8, "`%s`: 8 runs' lines expected:\n%s%s",
		  r.cmd, r.out, r.err);
	res_free(&r);
	res_free(&again);
}

/*
 * The same for select(2), whose call writes the time left into the
 * program's timeval: the kernel ran it with SIGCHLD pending and wrote
 * the machine's clock's rest (19997 us, then 19998 from one schedule;
 * 20000 where the signal came by ptloom's own path).  Now every run of
 * `-s random -n 20 --output` prints one time left: ptloom's.
 */
Test(blocking_waits, a_select_sigchld_interrupts_leaves_no_machine_time)
{
	struct res r = RUN9("-q", "--output", "-s", "random", "-n", "20",
			    "--seed", SEED, "--",
			    target("sleep_rest_after_sigchld"), "select");
	const char *first = NULL;
	size_t len = 0;
	int lines = 0;

	assert_exit(r, 0);
	for (const char *p = strstr(r.out, "interrupted: "); p;
	     p = strstr(p + 1, "interrupted: ")) {
		size_t n = strcspn(p, "\n");

		lines++;
		if (!first) {
			first = p;
			len = n;
		}
		cr_expect(n == len && !strncmp(p, first, n),
			  "`%s`: two times left from one program:\n%s",
			  r.cmd, r.out);
	}
	cr_expect(lines > 0, "`%s`: no interrupted select:\n%s%s", r.cmd,
		  r.out, r.err);
	/* and once it timed out, none is left (before: the timeval as
	 * given, 20000 us left after waiting them all) */
	assert_contains(r.out, "selected: 0.000000 s left", "its output");
	for (const char *p = strstr(r.out, "selected: "); p;
	     p = strstr(p + 1, "selected: "))
		cr_expect(!strncmp(p, "selected: 0.000000 s left", 25),
			  "`%s`: time left after a timeout:\n%s", r.cmd,
			  r.out);
	res_free(&r);
}

/*
 * A signal pending for a thread when its wait blocks ends that wait at
 * once, as the kernel's does (tests/targets/alarm_ends_worker.c: the
 * timer fires to main at its join, the handler that ends the worker's
 * loop must run).  Before, main blocked with SIGALRM pending and the
 * worker computed on: "FAIL hang" after 4 runs of seed 0, on a program
 * that ends in a second.  Runs whose worker computes while main waits
 * for its turn are past --timeout: INCOMPLETE, never a failure.
 */
Test(blocking_waits, a_signal_pending_when_a_wait_blocks_ends_it)
{
	struct res r = RUN9("-q", "-s", "random", "-n", "20", "--seed", "0",
			    "--timeout", "0.5", "--points", "sync",
			    "--no-minimize", "--",
			    target("alarm_ends_worker"));

	cr_expect(r.code == 0 || r.code == 3, "`%s` exit %d:\n%s%s", r.cmd,
		  r.code, r.out, r.err);
	cr_expect(!strstr(r.out, "FAIL"), "`%s`:\n%s", r.cmd, r.out);
	res_free(&r);
}

/* ptloom run -- NAME ARG (a target's mode or number) */
static struct res target_run(const char *name, const char *arg)
{
	char line[3 * PATH_MAX];

	snprintf(line, sizeof(line),
		 "%s run --seed %s --timeout 20 -o %s -- %s %s", ptloom(),
		 SEED, in_tmp("out"), target(name), arg);
	return sh(line);
}

/* ptloom run -- NAME ARG exits with code, its summary saying want */
static void target_gives(const char *name, const char *arg, int code,
			 const char *want)
{
	struct res r = target_run(name, arg);
	char *s = summary(&r);

	cr_assert_eq(r.code, code, "%s %s: exit %d:\n%s%s", name, arg,
		     r.code, r.out, r.err);
	assert_contains(s, want, arg);
	free(s);
	res_free(&r);
}

/*
 * Priority-inheritance mutexes: glibc takes them with FUTEX_LOCK_PI,
 * FUTEX_TRYLOCK_PI and FUTEX_UNLOCK_PI, which ptloom emulates as the
 * kernel does (the owner's id in the word, FUTEX_WAITERS, the hand-over to
 * the oldest waiter, FUTEX_OWNER_DIED when a robust owner dies, a
 * restart after a signal, a timeout).  Before, the first such call ended
 * every run as "FAIL unsupported", a failure of a correct program.  The
 * correct modes are complete to bound 2; a lost update and a deadlock
 * are found, the lost update replayed exactly.
 */
Test(blocking_waits, priority_inheritance_mutexes_are_scheduled)
{
	static const char *const correct[] = { "count", "owner_dies",
					       "signal", "timed", "cond" };

	for (size_t i = 0; i < sizeof(correct) / sizeof(correct[0]); i++)
		target_gives("pi_mutexes", correct[i], 0,
			     "complete to preemption bound 2");
	struct res r = target_run("pi_mutexes", "racy");
	char *s = summary(&r);

	assert_exit(r, 1);
	assert_contains(s, "FAIL crash SIGABRT", "the lost update");
	replay_line_exact(&r, "the lost update's replay");
	free(s);
	res_free(&r);
	target_gives("pi_mutexes", "abba", 1, "FAIL deadlock");
}

/*
 * A socket's SO_RCVTIMEO and SO_SNDTIMEO make a blocking recv, accept or
 * send a timed wait: it ends with EAGAIN when the virtual clock reaches
 * its timeout, as the kernel's wait does.  Before, such a wait on a
 * socketpair nobody wrote to was a "FAIL deadlock" of a correct program
 * (recv, send), an accept nobody connected to waited out --timeout
 * (INCOMPLETE), and a receiver whose 50 ms timeout fires before a worker's
 * late send passed every schedule.
 */
Test(blocking_waits, a_socket_timeout_ends_its_wait)
{
	static const char *const correct[] = { "recv", "accept", "send",
					       "served" };

	for (size_t i = 0; i < sizeof(correct) / sizeof(correct[0]); i++)
		target_gives("socket_timeouts", correct[i], 0,
			     "complete to preemption bound 2");
	struct res r = target_run("socket_timeouts", "late");
	char *s = summary(&r);

	assert_exit(r, 1);
	assert_contains(s, "FAIL crash SIGABRT", "the late send");
	replay_line_exact(&r, "the late send's replay");
	free(s);
	res_free(&r);
}

/*
 * io_uring: the kernel completes a ring's requests on its own time (its
 * io-wq workers, which ptrace cannot stop, write the program's buffers
 * while it runs), so no run is a function of its schedule.  The first
 * io_uring_setup ends the run as unsupported: INCOMPLETE, never a pass.
 * Before, io_uring_read (whose buffer the kernel fills while main looks
 * at it: natively an assertion failure about one run in four) was "PASS
 * 8 runs, complete to preemption bound 2", and a failure found in such a
 * program did not replay.
 */
Test(blocking_waits, io_uring_is_unsupported_never_a_pass)
{
	/* refused at the call, whether the kernel has io_uring or not */
	struct res r = target_run("io_uring_read", "");
	char *s = summary(&r);

	assert_exit(r, 3);
	assert_contains(s, "unsupported: P0 io_uring_read uses io_uring",
			"the summary");
	free(s);
	res_free(&r);
	char line[3 * PATH_MAX];

	snprintf(line, sizeof(line), "%s races --seed %s -- %s", ptloom(),
		 SEED, target("io_uring_read"));
	r = sh(line);
	assert_exit(r, 3);
	res_free(&r);
}

/*
 * POSIX message queues: mq_timedsend and mq_timedreceive (mq_send and
 * mq_receive too) are waits on the queue's descriptor, ready when poll
 * says so, their absolute CLOCK_REALTIME deadline on the virtual clock
 * (ETIMEDOUT past it), and a wait on an unlinked queue nobody can send
 * to is a deadlock (one still named may get a message from outside).
 * Before, a receive or a send that had to wait slept in the kernel while
 * ptloom held the thread that would end it, so every such run went past
 * --timeout (INCOMPLETE), and a receive's 50 ms deadline, which the
 * kernel took on the real clock while the virtual one stood still, was a
 * failure of a correct program ("not before the deadline").
 */
Test(blocking_waits, message_queues_are_descriptor_waits)
{
	char line[3 * PATH_MAX];

	snprintf(line, sizeof(line),
		 "%s run --seed %s --timeout 20 --dfs-only -p 1 --points sync "
		 "-- %s pc", ptloom(), SEED, target("mq_threads"));
	struct res r = sh(line);
	char *s = summary(&r);

	assert_exit(r, 0);
	assert_contains(s, "complete to preemption bound 1", "the summary");
	free(s);
	res_free(&r);
	target_gives("mq_threads", "deadline", 0,
		     "complete to preemption bound 2");
	target_gives("mq_threads", "nobody", 1, "FAIL deadlock");
	r = target_run("mq_threads", "order");
	s = summary(&r);
	assert_exit(r, 1);
	assert_contains(s, "FAIL crash SIGABRT", "the order");
	replay_line_exact(&r, "the order's replay");
	free(s);
	res_free(&r);
}

/*
 * SysV semaphores: semop and semtimedop are points whose readiness ptloom
 * judges from the set's values, waits like a read's, semtimedop's timeout
 * on the virtual clock.  Before, the call slept in the kernel while
 * ptloom held the thread that would post: pc (a worker posts after 20 ms,
 * main waits 10 s) was 'FAIL crash SIGABRT' of a correct program at its
 * first run, timeout's 50 ms were not seen on the virtual clock (a FAIL
 * too), handoff and nobody waited out --timeout (INCOMPLETE).
 */
/* name's four correct modes complete, "nobody" a deadlock in the call
 * (deadlock: its summary), "order" a failure replayed exactly */
static void sysv_waits_give(const char *name, const char *const correct[4],
			    const char *deadlock)
{
	for (size_t i = 0; i < 4; i++)
		target_gives(name, correct[i], 0,
			     "complete to preemption bound 2");
	target_gives(name, "nobody", 1, deadlock);
	struct res r = target_run(name, "order");
	char *s = summary(&r);

	assert_exit(r, 1);
	assert_contains(s, "FAIL crash SIGABRT", "the order");
	replay_line_exact(&r, "the order's replay");
	free(s);
	res_free(&r);
}

Test(blocking_waits, sysv_semaphores_are_waits_on_the_virtual_clock)
{
	static const char *const correct[] = { "pc", "timeout", "handoff",
					       "removed" };

	sysv_waits_give("sysv_sem_threads", correct, "FAIL deadlock (semop()");
}

/*
 * SysV message queues: msgsnd and msgrcv are the same points, waits until
 * the message fits (msg_qbytes) or one msgrcv's type takes is there
 * (read in place with MSG_COPY); a queue removed under a waiter ends its
 * wait with EIDRM.  Before, msgrcv slept in the kernel while ptloom held
 * the thread that would send: pingpong was INCOMPLETE, "T1 sleeps in the
 * kernel in msgrcv(2)", after 41 s.
 */
Test(blocking_waits, sysv_message_queues_are_waits_of_the_model)
{
	static const char *const correct[] = { "pingpong", "typed", "full",
					       "removed" };

	sysv_waits_give("sysv_msg_threads", correct,
			"FAIL deadlock (msgrcv()");
}

/*
 * When nobody can run, time jumps to the earliest deadline, and only a
 * thread waiting until then may time out for free: a later deadline
 * passes only once that thread is woken, and timing out then, while it
 * can run, is a preemption ("the machine was slow"), offered only as far
 * as a stall of a second explains it.  Before, every timed wait's timeout
 * was a free choice when all threads waited, so main's 60 s wait for a
 * worker's 10 ms sleep timed out at bound 0: a failure of a correct
 * program; and a 5 s guard was a FAIL at bound 1 (a ten-second horizon).
 * A 1 s timeout is still found, at bound 1, as the slow machine it needs.
 */
Test(blocking_waits, a_timeout_never_passes_an_earlier_deadline_for_free)
{
	struct res r = target_run("generous_timeout", "60");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	res_free(&r);
	r = target_run("generous_timeout", "5");
	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	res_free(&r);
	r = target_run("generous_timeout", "1");
	assert_exit(r, 1);
	char *s = summary(&r);

	assert_contains(s, "FAIL crash SIGABRT", "the 1 s timeout");
	assert_contains(s, ", bound 1", "the 1 s timeout");
	free(s);
	res_free(&r);
}

/*
 * A test's guard beside a periodic thread: main waits 2 s for a worker's
 * 1 ms sleep while a watchdog sleeps 10 ms at a time.  No thread able to
 * run waits more than a second of virtual time for the processor
 * (world.h MAX_STALL_NS), counted from its last step, so neither main's
 * own timeout nor the watchdog's wake-ups taken early one after another
 * can starve the worker past the guard.  Before, every sampler failed it
 * within 10 runs (a ten-second horizon per wait).  A 1 s guard is still
 * found.
 */
Test(blocking_waits, a_guard_expires_only_for_a_stall_of_a_second)
{
	const char *samplers[] = { "rr", "pct", "random" };

	for (int i = 0; i < 3; i++) {
		struct res r = PTL("run", "-s", samplers[i], "-n", "200",
				   "--seed", SEED, "-o", in_tmp("out"), "--",
				   target("guard_beside_a_ticker"), "2");

		cr_expect_eq(r.code, 0, "`%s` exit %d:\n%s%s", r.cmd, r.code,
			     r.out, r.err);
		res_free(&r);
	}
	struct res r = target_run("guard_beside_a_ticker", "1");
	char *s = summary(&r);

	cr_expect_eq(r.code, 1, "`%s` exit %d:\n%s%s", r.cmd, r.code, r.out,
		     r.err);
	assert_contains(s, "FAIL crash SIGABRT", "the 1 s guard");
	free(s);
	res_free(&r);
}

/*
 * A timer that comes due while every thread waits wakes what waits for
 * it before anyone's timeout is chosen: a reader of a 2 ms timerfd beside
 * main's 3 s sem_timedwait.  Before, time jumped to the timerfd's expiry
 * but its reader was looked at only at the next choice, and main's
 * timeout, the one alternative left, failed the program at bound 0.
 */
Test(blocking_waits, a_timer_that_comes_due_wakes_its_reader_first)
{
	struct res r = target_run("timerfd_beside_a_timed_wait", "");

	assert_exit(r, 0);
	assert_summary(&r, "ptloom: PASS");
	res_free(&r);
}

/*
 * A signal with a handler ends a futex wait as the kernel does: the wait
 * is handed to the kernel with the signal pending, and an untimed one
 * under SA_RESTART is restarted, a timed one or one without SA_RESTART
 * fails with EINTR; a process-directed signal another thread takes
 * leaves the wait to go on.  Before, ptloom answered EINTR itself: the
 * first run of sem_wait under an SA_RESTART handler failed (a correct
 * program), as did a waiter whose signal a third thread took.
 */
Test(blocking_waits, a_signal_ends_a_futex_wait_as_the_kernel_would)
{
	static const struct {
		const char *mode;
		int code;
	} cases[] = { { "restart", 0 }, { "other", 0 }, { "norestart", 1 },
		      { "timed", 1 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		target_gives("sem_wait_signal", cases[i].mode, cases[i].code,
			     cases[i].code ? "FAIL exit status 1"
					   : "complete to preemption bound 2");
}
