/*
 * Event loops: the order in which a loop built on epoll, poll or select
 * sees ready sockets and its own timers is explored (asyncio, node, GLib,
 * a hand-written epoll server), and a loopback connection whose two ends
 * are the program's is the program's, never a wait for the world.
 */
#include "common.h"

TestSuite(event_loops, .init = setup, .fini = teardown, .timeout = 900);

/* seconds per ptloom command on an interpreter's loop (every run starts
 * the interpreter) */
#define LOOP_TIMEOUT (300 * slowdown())

/* ptloom run with the report in <tmp>, a fixed seed and a --timeout that a
 * loaded machine does not reach, then opts, "--" and the command. */
#define LOOP_RUN(...)                                                        \
	run9_within(LOOP_TIMEOUT, "--seed", SEED, "--timeout", "120",         \
		    __VA_ARGS__, (const char *)NULL)

/* A correct twin: a pass, or a limit; never a failure. */
static void never_fails(const struct res *r)
{
	cr_assert(r->code == 0 || r->code == 3,
		  "`%s`: exit %d, want 0 or 3\nstdout:\n%s\nstderr:\n%s",
		  r->cmd, r->code, r->out, r->err);
	cr_assert(!strstr(r->out, "FAIL"), "%s", r->out);
}

/* The failure's explanation names the loop's choice. */
static void show_names_the_wait(const char *what)
{
	char *rep = report();
	const char *m = json_get(rep, "minimized_file");
	char *cmd;

	cr_assert(m && strcmp(m, "null"), "no minimized file:\n%s", rep);
	cr_assert(asprintf(&cmd, "'%s' show '%s'", ptloom(), m) > 0);
	struct res s = sh(cmd);

	assert_exit(s, 0);
	assert_contains(s.out, what, "show");
	res_free(&s);
	free(cmd);
	free(rep);
}

static void need(const char *path)
{
	if (access(path, X_OK))
		cr_skip_test("no %s: skipped", path);
}

Test(event_loops, asyncio_lost_update_over_loopback_is_found)
{
	need(PYTHON3);
	struct res r = LOOP_RUN("--", PYTHON3,
				script("asyncio_lost_update.py"));

	assert_exit(r, 1);
	assert_contains(r.out, "count 1", "the failing run's output");
	replays_exactly(&r, "exit");
	/* the 2 ms timer came due before the first client was done */
	show_names_the_wait("timeout (2 ms) comes first");
	res_free(&r);
}

/* to bound 1, where its twin fails (after 6 runs): 26 runs, where the
 * default bound 2 took 138 (four times the time) and asks nothing more
 * of the loop */
Test(event_loops, asyncio_without_lost_update_never_fails)
{
	need(PYTHON3);
	struct res r = LOOP_RUN("-p", "1", "--", PYTHON3,
				script("asyncio_lost_update.py"), "fixed");

	never_fails(&r);
	res_free(&r);
}

Test(event_loops, epoll_request_order_is_found)
{
	struct res r = LOOP_RUN("--", target("epoll_order"));

	assert_exit(r, 1);
	replays_exactly(&r, "exit");
	/* client A's request is the one that came later */
	show_names_the_wait("is seen later");
	show_names_the_wait("socket 127.0.0.1:");
	res_free(&r);
}

Test(event_loops, epoll_server_waiting_for_its_client_never_fails)
{
	struct res r = LOOP_RUN("--", target("epoll_order_fixed"));

	assert_exit(r, 0);
	res_free(&r);
}

/* The same with edge-triggered items: an event held back is delivered
 * later although the kernel reports an edge only once. */
Test(event_loops, edge_triggered_epoll_request_order_is_found)
{
	struct res r = LOOP_RUN("--", target("epoll_order_et"));

	assert_exit(r, 1);
	replays_exactly(&r, "exit");
	res_free(&r);
}

Test(event_loops, edge_triggered_epoll_server_never_fails)
{
	struct res r = LOOP_RUN("--", target("epoll_order_et_fixed"));

	assert_exit(r, 0);
	res_free(&r);
}

Test(event_loops, glib_timeout_racing_io_is_found)
{
	const char *p = target("glib_timer_io");

	if (access(p, X_OK))
		cr_skip_test("glib_timer_io was not built (no libglib2.0-dev; "
			     "scripts/setup.sh installs it): skipped");
	struct res r = LOOP_RUN("--", p);

	assert_exit(r, 1);
	replays_exactly(&r, "on_timeout");
	res_free(&r);
}

Test(event_loops, glib_io_before_timeout_never_fails)
{
	const char *p = target("glib_timer_io_fixed");

	if (access(p, X_OK))
		cr_skip_test("glib_timer_io_fixed was not built (no "
			     "libglib2.0-dev; scripts/setup.sh installs it): "
			     "skipped");
	struct res r = LOOP_RUN("--", p);

	assert_exit(r, 0);
	res_free(&r);
}

/* node: a net server and two clients in one process.  Race discovery
 * inside node's own code is off (--points sync): its runs are long. */
static const char *need_node(void)
{
	static const char *const where[] = { "/usr/bin/node", "/usr/bin/nodejs",
					     "/usr/local/bin/node" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (!access(where[i], X_OK))
			return where[i];
	cr_skip_test("no node: skipped");
	return NULL;
}

Test(event_loops, node_lost_update_over_loopback_is_found)
{
	const char *node = need_node();
	struct res r = LOOP_RUN("--points", "sync", "--no-minimize", "--",
				node, script("node_lost_update.js"));

	assert_exit(r, 1);
	assert_contains(r.out, "count 1", "the failing run's output");
	/* replayed exactly: the events of one epoll_wait are listed by
	 * descriptor, not in the order loopback delivered them */
	replays_exactly(&r, "exit");
	res_free(&r);
}

Test(event_loops, node_without_lost_update_never_fails)
{
	const char *node = need_node();
	/* the twin without the fix fails in its first run */
	struct res r = LOOP_RUN("--points", "sync", "--max-time", "20", "--",
				node, script("node_lost_update.js"), "fixed");

	never_fails(&r);
	res_free(&r);
}
