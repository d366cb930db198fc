/*
 * looking at a failure: replay --gdb, backtraces of every thread, core
 * files, the HTML view.
 */
#include "common.h"

TestSuite(debugging, .init = setup, .fini = teardown, .timeout = 180);

/* gdb, or a skip with a message (scripts/setup.sh installs it). */
static bool have_gdb(void)
{
	if (access("/usr/bin/gdb", X_OK) == 0)
		return true;
	skip_note("skipping: no /usr/bin/gdb (scripts/setup.sh installs "
		    "it)");
	return false;
}

Test(debugging, replay_gdb_shows_every_thread_at_the_stop)
{
	if (!have_gdb())
		return;
	struct res r = RUN(example("deadlock"), "--seed", SEED);

	assert_exit(r, 1);
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));

	free(j);
	res_free(&r);
	/* the default stop: before the last step, every thread alive and
	 * where the schedule left it (the two lockers in their futex wait,
	 * main in pthread_join) */
	char *argv[] = { (char *)ptloom(), "replay", "--gdb", sched, "--",
			 (char *)example("deadlock"), NULL };

	r = run_argv(argv, "PTLOOM_GDB=gdb -batch -ex 'thread apply all bt'",
		     CMD_TIMEOUT);
	assert_exit(r, 0);
	assert_contains(r.out, "migrate_users", "gdb's backtraces");
	assert_contains(r.out, "audit_orders", "gdb's backtraces");
	assert_contains(r.out, "main ()", "gdb's backtraces");
	assert_contains(r.out, "Thread 3 ", "gdb's backtraces");
	assert_contains(r.err, "stopped before step", "stderr");
	/* the limit, said where it matters */
	assert_contains(r.err, "for inspection only", "stderr");
	assert_contains(r.err, "fail with ENOSYS", "stderr");
	res_free(&r);	/* run_argv checked that nothing is left behind */

	/* an early step: only main exists yet */
	char *argv2[] = { (char *)ptloom(), "replay", "--gdb", "--stop-at",
			  "0", sched, "--", (char *)example("deadlock"),
			  NULL };

	r = run_argv(argv2, "PTLOOM_GDB=gdb -batch -ex 'info threads'",
		     CMD_TIMEOUT);
	assert_exit(r, 0);
	cr_assert_null(strstr(r.out, "  2    Thread"), "%s", r.out);
	res_free(&r);
	/* bad stops */
	one_line_usage_error(PTL("replay", "--gdb", "--stop-at", "x", sched,
				 "--", example("deadlock")));
	one_line_usage_error(PTL("replay", "--stop-at", "3", sched, "--",
				 example("deadlock")));
	r = PTL("replay", "--gdb", "--stop-at", "100000", sched, "--",
		example("deadlock"));
	assert_exit(r, 4);
	assert_contains(r.err, "before step 100000", "stderr");
	res_free(&r);
	free(sched);
}

/*
 * `count++` at -O2 is one `addl $1, count(%rip)`, explored as two points
 * (its load, its store: bp_split_rmw).  Stopped between them, the thread
 * sits at the instruction, whose load ptloom already made: replay --gdb
 * says so, with the value it read, instead of showing a thread that
 * continued would read memory again and lose nothing.
 */
Test(debugging, replay_gdb_between_the_halves_of_a_split_increment)
{
	if (!have_gdb())
		return;
	struct res r = RUN(target("plain_inc_O2"), "--seed", SEED);

	assert_exit(r, 1);
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));

	free(j);
	res_free(&r);
	r = PTL("show", sched);
	/* the first thread's two access points: its load, then its store */
	const char *a = strstr(r.out, " access(");
	cr_assert_not_null(a, "%s", r.out);
	const char *ln = a;

	while (ln > r.out && ln[-1] != '\n')
		ln--;
	unsigned long s1 = 0, s2 = 0;
	int th = -1;

	cr_assert_eq(sscanf(ln, " %lu T%d", &s1, &th), 2, "%.80s", ln);
	char pat[32];

	snprintf(pat, sizeof(pat), "  T%d access(", th);
	const char *b = strstr(a + 1, pat);

	cr_assert_not_null(b, "%s", r.out);
	for (ln = b; ln > r.out && ln[-1] != '\n'; ln--)
		;
	cr_assert_eq(sscanf(ln, " %lu", &s2), 1, "%.80s", ln);
	cr_assert_gt(s2, s1 + 1, "%s", r.out);
	res_free(&r);
	char step[32];

	snprintf(step, sizeof(step), "%lu", s2);
	char *argv[] = { (char *)ptloom(), "replay", "--gdb", "--stop-at",
			 step, sched, "--", (char *)target("plain_inc_O2"),
			 NULL };

	r = run_argv(argv, "PTLOOM_GDB=gdb -batch -ex 'info threads'",
		     CMD_TIMEOUT);
	assert_exit(r, 0);
	snprintf(pat, sizeof(pat), "T%d stopped between the load", th);
	assert_contains(r.err, pat, "stderr");
	assert_contains(r.err, "it has read 0", "stderr");
	res_free(&r);
	free(sched);
}

Test(debugging, failure_reports_carry_every_threads_backtrace)
{
	struct res r = RUN(example("deadlock"), "--seed", SEED);

	assert_exit(r, 1);
	assert_contains(r.out, "threads at the failure:", "stdout");
	assert_contains(r.out, "#2 migrate_users at deadlock.c:17", "stdout");
	assert_contains(r.out, "audit_orders at deadlock.c:28", "stdout");
	assert_json_loads(in_tmp("report.json"));
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));
	const char *th = json_raw(j, "threads");

	cr_assert_not_null(th, "%s", j);
	assert_contains(th, "\"thread\": \"T2\"", "report threads");
	assert_contains(th, "migrate_users at deadlock.c:17", "report threads");
	assert_contains(th, "main at deadlock.c:41", "report threads");
	free(j);
	res_free(&r);
	/* kept in the schedule file: show has them in every format */
	r = PTL("show", "--format", "json", sched);
	assert_exit(r, 0);
	spit(in_tmp("show.json"), r.out);
	assert_json_loads(in_tmp("show.json"));
	assert_contains(r.out, "\"backtrace\": [", "show --format json");
	assert_contains(r.out, "audit_orders at deadlock.c:28",
			"show --format json");
	res_free(&r);
	r = PTL("show", sched);
	assert_exit(r, 0);
	assert_contains(r.out, "threads at the failure:", "show");
	res_free(&r);
	free(sched);
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* The trace says who sent a signal to whom and in which step a handler
 * ran: handler_in_its_thread's lost update reads "T1 sends SIGUSR1 to
 * T0", then T0's access with "its SIGUSR1 handler runs in this step" (the
 * handler's increment between the thread's load and its store), and
 * abort's raise "sends SIGABRT to itself"; a timer's handler between a
 * worker's two stores the same way; in the text and in JSON.  The trace
 * hash does not change with it: the replay is exact. */
static void shows_signal(const char *prog, const char *arg,
			 const char *where, const char *sent,
			 const char *handler, int signo)
{
	char *argv[] = { (char *)ptloom(), "run", "-o", in_tmp("out"),
			 "--report", in_tmp("report.json"), "--report-format",
			 "json", "--seed", SEED, "--", (char *)prog,
			 (char *)arg, NULL };
	struct res r = run_argv(argv, NULL, CMD_TIMEOUT);

	assert_exit(r, 1);
	replays_exactly(&r, where);
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));

	free(j);
	res_free(&r);
	r = PTL("show", sched);
	assert_exit(r, 0);
	if (sent)
		assert_contains(r.out, sent, "show");
	assert_contains(r.out, handler, "show");
	assert_contains(r.out, "sends SIGABRT to itself", "show");
	res_free(&r);
	r = PTL("show", "--format", "json", sched);
	assert_exit(r, 0);
	spit(in_tmp("show.json"), r.out);
	assert_json_loads(in_tmp("show.json"));
	char want[48];

	snprintf(want, sizeof(want), "\"handler_signal\": %d", signo);
	assert_contains(r.out, want, "show --format json");
	res_free(&r);
	free(sched);
}

Test(debugging, show_names_signals_sent_and_the_steps_their_handlers_ran_in)
{
	shows_signal(target("handler_in_its_thread"), "main",
		     "handler_in_its_thread.c:", "T1 sends SIGUSR1 to T0",
		     "; its SIGUSR1 handler runs in this step", SIGUSR1);
	shows_signal(target("alarm_between_stores"), NULL,
		     "alarm_between_stores.c:", "a timer fires: SIGALRM to T1",
		     "T1 access(&items) at worker at alarm_between_stores.c:28; "
		     "its SIGALRM handler runs in this step",
		     SIGALRM);
}

/*
 * Renders a page of `show --format html` in headless chromium (Debian's,
 * which scripts/setup.sh --tests installs; as root it needs --no-sandbox)
 * and checks what it built: the lane of every thread (lane-T0..) and the
 * group of every process (process-P0..) in the DOM, no parse error, and
 * nothing logged to the console.  With png, also a screenshot there.
 * Returns false after a printed note when there is no chromium.
 */
static bool chromium_renders(const char *page, int nlanes, int nprocs,
			     const char *png)
{
	static const char *const flags[] = {
		"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-quic", "--no-first-run",
		"--disable-background-networking",
		"--disable-component-update", "--disable-sync",
		"--enable-logging=stderr", "--v=0",
	};
	const char *chromium = access("/usr/bin/chromium", X_OK) == 0
				       ? "/usr/bin/chromium"
				       : NULL;

	if (!chromium) {
		skip_note("skipping the headless-browser check: no "
			  "/usr/bin/chromium (scripts/setup.sh --tests, as "
			  "scripts/test.sh runs it, installs Debian's "
			  "chromium; apt-get could not)");
		return false;
	}
	char url[PATH_MAX + 16], dir[PATH_MAX + 32], shot[PATH_MAX + 32];
	char *argv[20];
	size_t n = 0;

	snprintf(url, sizeof(url), "file://%s", page);
	snprintf(dir, sizeof(dir), "--user-data-dir=%s", in_tmp("chromium"));
	argv[n++] = (char *)chromium;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		argv[n++] = (char *)flags[i];
	argv[n++] = dir;
	argv[n++] = "--dump-dom";
	argv[n++] = url;
	argv[n] = NULL;

	struct res r = run_argv(argv, NULL, 120);

	assert_exit(r, 0);
	cr_assert_null(strstr(r.out, "parsererror"), "%s", r.out);
	assert_contains(r.out, "<svg", "the rendered DOM");
	for (int t = 0; t < nlanes + 1; t++) {
		char id[32];

		snprintf(id, sizeof(id), "id=\"lane-T%d\"", t);
		if (t < nlanes)
			assert_contains(r.out, id, "the rendered DOM");
		else
			cr_assert_null(strstr(r.out, id), "an extra lane");
	}
	for (int p = 0; p < nprocs + 1; p++) {
		char id[32];

		snprintf(id, sizeof(id), "id=\"process-P%d\"", p);
		if (p < nprocs)
			assert_contains(r.out, id, "the rendered DOM");
		else
			cr_assert_null(strstr(r.out, id), "an extra process");
	}
	/* a script error, a blocked load or a CSP complaint: a console line */
	cr_assert_null(strstr(r.err, ":CONSOLE"), "%s", r.err);
	cr_assert_null(strstr(r.err, "Uncaught"), "%s", r.err);
	res_free(&r);
	if (!png)
		return true;
	snprintf(shot, sizeof(shot), "--screenshot=%s", in_tmp(png));
	argv[n - 2] = "--window-size=1000,400";
	argv[n - 1] = shot;
	argv[n++] = url;
	argv[n] = NULL;
	r = run_argv(argv, NULL, 120);
	assert_exit(r, 0);
	res_free(&r);
	return true;
}

Test(debugging, show_html_is_one_self_contained_page_with_every_lane)
{
	struct res r = RUN(example("deadlock"), "--seed", SEED);

	assert_exit(r, 1);
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));

	free(j);
	res_free(&r);
	r = PTL("show", "--format", "html", sched);
	assert_exit(r, 0);
	spit(in_tmp("page.html"), r.out);
	cr_assert_null(strstr(r.out, "<script"), "a script in the page");
	cr_assert_null(strstr(r.out, "src="), "a fetched resource");
	cr_assert_null(strstr(r.out, "href=\"http"), "a fetched resource");
	res_free(&r);
	/* well-formed, a lane per thread, hover text with the source line,
	 * the failing step marked */
	if (access(PYTHON3, X_OK) == 0) {
		char *argv[] = {
			PYTHON3, "-c",
			"import sys, xml.etree.ElementTree as E\n"
			"t = E.parse(sys.argv[1])\n"
			"ns = '{http://www.w3.org/2000/svg}'\n"
			"g = [e for e in t.iter(ns + 'g')]\n"
			"lanes = [e for e in g if e.get('class') == 'lane']\n"
			"marks = [e for e in g if 'mark' in e.get('class', '')]\n"
			"fail = [e for e in marks if 'failing' in e.get('class')]\n"
			"titles = ' '.join(e.text or '' for e in t.iter(ns + 'title'))\n"
			"assert len(lanes) == 3, len(lanes)\n"
			"assert len(fail) == 1, len(fail)\n"
			"assert 'deadlock.c:17' in titles, titles\n"
			"assert any('preempt' in e.get('class', '') for e in g)\n"
			"print('ok', len(lanes), len(marks))\n",
			in_tmp("page.html"), NULL
		};
		r = run_argv(argv, NULL, 60);
		cr_assert(r.code == 0, "the page: %s%s", r.out, r.err);
		res_free(&r);
	} else {
		skip_note("skipping the page's structure check: no %s",
			  PYTHON3);
	}
	/* a real browser renders it: every lane in the DOM, no error */
	if (chromium_renders(in_tmp("page.html"), 3, 1, "chromium.png"))
		cr_assert_gt(file_size(in_tmp("chromium.png")), 1000,
			     "chromium's screenshot of the page");
	free(sched);
}

Test(debugging, show_html_has_a_lane_per_thread_of_every_process)
{
	struct res r = RUN(target("fork_race"), "--seed", SEED);

	assert_exit(r, 1);
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));

	free(j);
	res_free(&r);
	r = PTL("show", "--format", "html", sched);
	assert_exit(r, 0);
	spit(in_tmp("fork.html"), r.out);
	/* T0 in the first process, T1-T3 in the forked worker */
	assert_contains(r.out, "<title>process P1: T1 T2 T3</title>",
			"the page");
	res_free(&r);
	chromium_renders(in_tmp("fork.html"), 4, 2, NULL);
	free(sched);
}

Test(debugging, replay_core_writes_the_failing_moment)
{
	if (!have_gdb())
		return;
	struct res r = RUN(example("deadlock"), "--seed", SEED);

	assert_exit(r, 1);
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));

	free(j);
	res_free(&r);
	r = PTL("replay", "--core", in_tmp("dl.core"), sched, "--",
		example("deadlock"));
	assert_exit(r, 0);
	assert_contains(r.out, "core: ", "stdout");
	res_free(&r);
	/* gdb reads it: three threads, the lockers in their futex wait */
	char *argv[] = { "/usr/bin/gdb", "-batch", "-nx", "-ex",
			 "thread apply all bt", (char *)example("deadlock"),
			 in_tmp("dl.core"), NULL };

	r = run_argv(argv, NULL, 120);
	assert_contains(r.out, "migrate_users", "gdb on the core");
	assert_contains(r.out, "audit_orders", "gdb on the core");
	res_free(&r);
	one_line_usage_error(PTL("replay", "--core", in_tmp("no/dir/core"),
				 sched, "--", example("deadlock")));
	free(sched);
}
