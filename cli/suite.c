/*
 * Test-suite mode (`ptloom run --per-test`): every test a runner starts is
 * explored on its own.
 *
 * The command runs once under ptloom (the *suite run*, the default
 * schedule), told of every fork, exec, death, read, write and kill of its
 * processes (session_config.watch).  A process that execs a program below
 * the command's own process is a *unit* (a test: ctest's, meson's or
 * make's child, a script's command).  At its exec, while the whole tree is
 * stopped, the unit is explored alone: a nested `ptloom run --per-test`
 * of its command line, in its working directory, with its environment and
 * its CPU mask, with the same options and budgets, so the runner and the
 * tests before it run once, and a unit that is a runner itself (make's
 * `sh -c`) is split the same way one level down.  Then the suite run goes
 * on.
 *
 * A unit is explored alone only when that is the same program in the same
 * state (which rule decided is kept per unit and printed):
 *  - at its exec, it inherits no descriptor but 0, 1 and 2, and its
 *    standard input is /dev/null or a regular file (a fresh start gives
 *    /dev/null and ptloom's output file, nothing else);
 *  - while it runs (from its fork until its parent reaped it), no other
 *    process of the tree outside it writes a file, pipe or socket it reads
 *    or reads one it writes when that other process is a test too (a
 *    runner reading its output is the runner's business), and no other
 *    test signals it.
 * A unit that breaks a rule is not split: after the suite run the whole
 * command is explored as one program (today's --whole-tree) and that
 * verdict is the unit's, with the reason.  When the command starts no
 * unit at all, it is one program and cmd_run() explores it as usual.
 *
 * The verdict: FAIL if a test failed, else INCOMPLETE if one was not
 * covered, PASS only if every test passed its exploration.  The runner's
 * own failure in the suite run is a test of its own ("runner") when no
 * test failed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <json-c/json.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "suite.h"
#include "through.h"
#include "../analysis/escape.h"
#include "../analysis/report.h"
#include "../analysis/symbols.h"

/* what the rule of a test program's own test says (split_harness; how
 * follow_failures knows one) */
#define IN_PROCESS_RULE "tests P0 runs in its one process"

/* A process of the suite run. */
struct sproc {
	pid_t pid;		/* 0 until its exec (not needed before) */
	int parent;		/* P-number, -1 */
	int unit;		/* the unit it belongs to, -1: the runner's */
	uint64_t born;		/* when its fork was seen */
	bool exec_seen;
	/* a worker a fork-per-test runner (Criterion) started for one of
	 * its tests, or a process below one: the runner's, never a unit */
	bool worker;
	bool runner_split;	/* its tests were made units (Criterion) */
};

/* One access to a file, pipe or socket by a process of the suite run. */
struct access {
	dev_t dev;
	ino_t ino;
	int unit;		/* -1: the runner's */
	bool write;
	uint64_t first, last;	/* when, in the run's order */
	char *name;		/* what /proc/PID/fd/N named */
};

/* What a nested exploration found for one test. */
struct test {
	char *name, *verdict, *summary, *command, *cwd, *rule;
	char *replay, *schedule, *message, *kind, *location, *output;
	char *in_runner;	/* its failing schedule in the runner's run */
	int target;		/* 1 + its index in suite.thr, 0: none */
	uint64_t runs;
	double seconds;
};

/* A descriptor a test inherits that a fresh start lacks. */
struct inh {
	dev_t dev;
	ino_t ino;
	int fd;
	char name[160];
};

struct unit {
	int pidx;
	pid_t pid;
	int thread;		/* the T-number that exec'd */
	char **argv, **envp;
	char *cwd, *cmdline;
	char name[512];
	char rule[1024];	/* which rule decided, for -v and reports */
	bool split;		/* explored alone */
	bool explored;
	uint64_t start, end;	/* fork and reap by its parent, in the
				 * run's order (never reaped: running to the
				 * run's end) */
	bool ended;
	struct test *tests;	/* one, or a nested runner's tests */
	int ntests;
	/* descriptors it inherits that a fresh start lacks: it must not use
	 * them (checked at the end) */
	struct inh inh[16];
	int ninh;
	uint64_t sigdiff;	/* signals ignored or blocked unlike a fresh
				 * start (EXTERNAL_SIGNALS only, if split) */
	/* a test of a fork-per-test runner (Criterion): no process of the
	 * suite run is its own; explored as the runner filtered to it */
	bool of_runner;
	/* a harness's tests together in its one process: the whole
	 * command's exploration is this unit's own */
	bool together;
	/* a harness's test: explored with --per-test (the programs it
	 * starts are units of their own; it lists one test: no split) */
	bool per_test;
};

/* A nested exploration under way. */
struct job {
	struct unit *u;		/* when not in su->units (may move): */
	int uidx;		/* its index there, else -1 */
	pid_t pid;
	int pidfd;		/* -1: none */
	bool whole, told;
	char rep[PATH_MAX + 32], errf[PATH_MAX + 48];
};

struct suite {
	char root_ctx[512];	/* what the command's process inherited: */
	uint64_t root_ign, root_blk; /* ignored and blocked signals */
	const struct program *prog;
	const struct common_opts *co;
	char *const *fwd;	/* options forwarded to nested runs */
	int nfwd;
	char self[PATH_MAX];	/* ptloom itself */
	char out_dir[PATH_MAX];	/* absolute -o */
	cpu_set_t cpus;		/* the native CPU mask */
	struct sproc *procs;
	int nprocs;
	struct unit *units;
	int nunits;
	struct access *acc;
	size_t nacc, capacc;
	uint64_t seq;
	int done;		/* tests finished, for the progress lines */
	bool verbose;
	/* -j: nested explorations under way, and the units of those that
	 * ended whose processes are still held */
	int njobs_max, njobs;
	struct job jobs_[64];
	int release[64], nrelease;
	/* failing tests' schedules, followed when the runner runs them */
	struct through *thr;
	/* --suite-time: seconds for every exploration, from t0, shared by
	 * the tests counted in a first run (expected), started so far */
	double budget, t0, max_time;
	int expected, started;
	bool counting;		/* that first run: units are only counted */
	bool harness_split;	/* the command's own tests are units */
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "ptloom: out of memory\n");
		exit(EXIT_USAGE);
	}
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d) {
		fprintf(stderr, "ptloom: out of memory\n");
		exit(EXIT_USAGE);
	}
	return d;
}

static struct sproc *sproc(struct suite *su, int pidx)
{
	if (pidx < 0)
		return NULL;
	if (pidx >= su->nprocs) {
		su->procs = xrealloc(su->procs,
				     (size_t)(pidx + 1) * sizeof(*su->procs));
		for (int i = su->nprocs; i <= pidx; i++)
			su->procs[i] = (struct sproc){ .parent = -1,
						       .unit = -1 };
		su->nprocs = pidx + 1;
	}
	return &su->procs[pidx];
}

static char **split_nul(const char *b, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += !b[i];
	if (len && b[len - 1])
		n++;
	char **v = xrealloc(NULL, (n + 1) * sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < len && k < n; k++) {
		v[k] = strndup(b + i, len - i);
		if (!v[k])
			break;
		i += strlen(v[k]) + 1;
	}
	v[k] = NULL;
	return v;
}

static int count(char *const *v)
{
	int n = 0;

	while (v && v[n])
		n++;
	return n;
}

static const char *env_get(char *const *env, const char *name)
{
	size_t l = strlen(name);

	for (int i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, l) && env[i][l] == '=')
			return env[i] + l + 1;
	return NULL;
}

/* ---- the rule at the exec: what the unit inherits ---- */

/*
 * What the process inherits besides 0-2 (and 0 when it is not /dev/null or
 * a regular file): objects it must not use for a fresh start to be the
 * same (ctest leaves its log open in every test: harmless unless used).
 * Their count into *n, the objects into inh (up to max).  "" in why if
 * the descriptors were readable.
 */
static int inherited(pid_t pid, struct inh *inh, int max, char *why,
		     size_t len)
{
	char path[64], link[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int n = 0;

	why[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d) {
		snprintf(why, len, "its descriptors were unreadable");
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		int fd = atoi(de->d_name);
		struct stat sb;
		ssize_t k;

		if (fd == 1 || fd == 2)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		k = readlink(path, link, sizeof(link) - 1);
		link[k > 0 ? k : 0] = 0;
		if (stat(path, &sb))
			continue;
		if (fd == 0 && (S_ISREG(sb.st_mode) ||
				!strcmp(link, "/dev/null")))
			continue;
		if (n == max) {
			snprintf(why, len, "it inherits more than %d "
				 "descriptors", max);
			break;
		}
		inh[n].dev = sb.st_dev;
		inh[n].ino = sb.st_ino;
		inh[n].fd = fd;
		snprintf(inh[n].name, sizeof(inh[n].name), "%s", link);
		n++;
	}
	closedir(d);
	return n;
}

/* Does argv0 name a program from cwd with PATH, as ptloom will look? */
static bool resolvable(const char *argv0, const char *cwd, const char *path)
{
	char buf[2 * PATH_MAX];

	if (strchr(argv0, '/')) {
		snprintf(buf, sizeof(buf), "%s/%s", argv0[0] == '/' ? "" : cwd,
			 argv0);
		return access(buf, X_OK) == 0;
	}
	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, argv0);
		if (n && access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* What a process inherits through exec besides descriptors, argv, the
 * environment and the directory: ignored and blocked signals, the umask,
 * the resource limits.  A fresh start gives a test what the command's own
 * process got from ptloom's launcher. */
static void exec_state(pid_t pid, char *buf, size_t len, uint64_t *ign,
		       uint64_t *blk)
{
	size_t n = 0, at = 0;
	char *st = tracer_proc_file(pid, "status", &n);
	char *lim = tracer_proc_file(pid, "limits", &n);

	buf[0] = 0;
	for (char *l = st; l && *l;) {
		char *e = strchr(l, '\n');

		if (e)
			*e = 0;
		if (!strncmp(l, "SigIgn:", 7))
			*ign = strtoull(l + 7, NULL, 16);
		else if (!strncmp(l, "SigBlk:", 7))
			*blk = strtoull(l + 7, NULL, 16);
		else if (!strncmp(l, "Umask:", 6) && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s ", l);
		l = e ? e + 1 : NULL;
	}
	/* the limits, hashed (FNV-1a) */
	uint64_t h = 1469598103934665603ull;

	for (char *c = lim; c && *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	if (at < len)
		snprintf(buf + at, len - at, "limits %016llx",
			 (unsigned long long)h);
	free(st);
	free(lim);
}

/*
 * Signals only another process sends (or a terminal, which a run under
 * ptloom has not), and glibc's internal 32 and 33 (it installs its own
 * handlers): ignored or blocked differently in a test than in a fresh
 * start, they change nothing unless someone signals the test, which the
 * watcher sees (on_kill).  SIGPIPE, SIGCHLD, SIGALRM and the faults are not
 * among them: the test's own actions raise those.
 */
#define SIGBIT(n) (1ull << ((n) - 1))
#define EXTERNAL_SIGNALS                                                   \
	(SIGBIT(SIGHUP) | SIGBIT(SIGINT) | SIGBIT(SIGQUIT) |               \
	 SIGBIT(SIGUSR1) | SIGBIT(SIGUSR2) | SIGBIT(SIGTERM) |             \
	 SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU) | SIGBIT(32) | \
	 SIGBIT(33))

/* ---- names as the runner knows them ---- */

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !strcmp(a, b) || (stat(a, &x) == 0 && stat(b, &y) == 0 &&
				 x.st_dev == y.st_dev && x.st_ino == y.st_ino);
}

/* /proc/PID/LINK (exe, cwd) into buf; false if unreadable ("" then). */
static bool proc_link(pid_t pid, const char *link, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, link);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	return n > 0;
}

/* A path's last component. */
static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* The next cmake argument at *p: [=[...]=], "..." or a bare word. */
static char *cmake_arg(const char **p)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == ')')
		return NULL;
	char *out;

	if (s[0] == '[') {
		int eq = 0;

		while (s[1 + eq] == '=')
			eq++;
		if (s[1 + eq] != '[')
			return NULL;
		char close[80];

		snprintf(close, sizeof(close), "]%.*s]", eq,
			 "==================================================");
		const char *b = s + 2 + eq, *e = strstr(b, close);

		if (!e)
			return NULL;
		out = strndup(b, (size_t)(e - b));
		*p = e + strlen(close);
		return out;
	}
	if (s[0] == '"') {
		size_t n = 0;

		out = xrealloc(NULL, strlen(s) + 1);
		for (s++; *s && *s != '"'; s++) {
			if (*s == '\\' && s[1])
				s++;
			out[n++] = *s;
		}
		out[n] = 0;
		*p = *s ? s + 1 : s;
		return out;
	}
	size_t n = strcspn(s, " \t)");

	out = strndup(s, n);
	*p = s + n;
	return out;
}

/* ctest: the add_test() of CTestTestfile.cmake in the test's directory
 * whose command is its command line. */
static bool ctest_name(const struct unit *u, char *name, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/CTestTestfile.cmake", u->cwd);
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		const char *p = line;

		if (strncmp(p, "add_test(", 9))
			continue;
		p += 9;
		char *n = cmake_arg(&p), *a;
		int k = 0;
		bool match = n != NULL;

		while (match && (a = cmake_arg(&p))) {
			if (!u->argv[k] ||
			    (k == 0 ? !same_file(a, u->argv[0])
				    : strcmp(a, u->argv[k])))
				match = false;
			k++;
			free(a);
		}
		if (match && k > 0 && !u->argv[k]) {
			snprintf(name, len, "%s", n);
			found = true;
		}
		free(n);
	}
	free(line);
	fclose(f);
	return found;
}

/* meson: meson-info/intro-tests.json of the build directory (the test's
 * directory or one above it). */
static bool meson_name(const struct unit *u, char *name, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 40];
	bool found = false;

	snprintf(dir, sizeof(dir), "%s", u->cwd);
	for (int up = 0; up < 4 && !found; up++) {
		snprintf(path, sizeof(path), "%s/meson-info/intro-tests.json",
			 dir);
		if (access(path, R_OK) == 0) {
			json_object *root = json_object_from_file(path);
			size_t n = root && json_object_is_type(root,
							       json_type_array)
					   ? json_object_array_length(root)
					   : 0;

			for (size_t i = 0; i < n && !found; i++) {
				json_object *t = json_object_array_get_idx(
					root, i), *cmd, *nm;

				if (!json_object_object_get_ex(t, "cmd", &cmd) ||
				    !json_object_object_get_ex(t, "name", &nm) ||
				    !json_object_is_type(cmd, json_type_array))
					continue;
				size_t k = json_object_array_length(cmd);
				bool match = k == (size_t)count(u->argv);

				for (size_t j = 0; match && j < k; j++) {
					const char *a = json_object_get_string(
						json_object_array_get_idx(cmd,
									  j));

					match = a && (j == 0
							      ? same_file(a, u->argv[0])
							      : !strcmp(a, u->argv[j]));
				}
				if (match) {
					snprintf(name, len, "%s",
						 json_object_get_string(nm));
					found = true;
				}
			}
			json_object_put(root);
		}
		char *slash = strrchr(dir, '/');

		if (!slash || slash == dir)
			break;
		*slash = 0;
	}
	return found;
}

/* The test's own name where the runner's files say it, else the command
 * line. */
static void unit_name(struct unit *u)
{
	const char *py = env_get(u->envp, "PYTEST_CURRENT_TEST");

	if (ctest_name(u, u->name, sizeof(u->name)) ||
	    meson_name(u, u->name, sizeof(u->name)))
		return;
	if (py) {
		/* "test_x.py::test_y (call)": the test, then the command */
		size_t n = strcspn(py, " ");

		snprintf(u->name, sizeof(u->name), "%.*s: %s", (int)n, py,
			 u->cmdline);
		return;
	}
	snprintf(u->name, sizeof(u->name), "%s", u->cmdline);
}

/* ---- the nested exploration ---- */

static char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	return xstrdup(json_object_get_string(v));
}

static void test_from_json(struct test *t, json_object *o)
{
	json_object *v, *fail = NULL;

	t->verdict = jstr(o, "verdict");
	t->summary = jstr(o, "summary");
	t->replay = jstr(o, "replay_command");
	t->schedule = jstr(o, "minimized_file");
	if (!t->schedule)
		t->schedule = jstr(o, "schedule_file");
	if (json_object_object_get_ex(o, "runs", &v))
		t->runs = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "seconds", &v))
		t->seconds = json_object_get_double(v);
	if (json_object_object_get_ex(o, "failure", &fail) &&
	    json_object_is_type(fail, json_type_object)) {
		t->message = jstr(fail, "message");
		t->kind = jstr(fail, "kind");
		t->location = jstr(fail, "location");
		t->output = jstr(fail, "output");
	}
	/* a nested suite's test */
	if (!t->name)
		t->name = jstr(o, "name");
	if (!t->command)
		t->command = jstr(o, "command");
	if (!t->cwd)
		t->cwd = jstr(o, "cwd");
	if (!t->rule)
		t->rule = jstr(o, "rule");
	if (!t->kind)
		t->kind = jstr(o, "kind");
	if (!t->message)
		t->message = jstr(o, "message");
	if (!t->location)
		t->location = jstr(o, "location");
	if (!t->output)
		t->output = jstr(o, "output");
}

static void test_error(struct test *t, const char *why)
{
	t->verdict = xstrdup("incomplete");
	t->summary = xstrdup(why);
}

static void nested_finish(struct suite *su, struct job *j, int st);

/*
 * Start `ptloom run --per-test` (whole: --whole-tree) on argv in cwd with
 * env; its report goes to j->rep.  j->pid is 0 when it could not start
 * (u's tests say why).
 */
static void nested_start(struct suite *su, struct unit *u, char *const *argv,
			 char *const *envp, const char *cwd, bool whole,
			 struct job *j)
{
	char *rep = j->rep, *errf = j->errf, clock[32];
	int ra = 0, cap = su->nfwd + count(envp) * 2 + count(argv) + 32;
	char **args = xrealloc(NULL, (size_t)cap * sizeof(*args));
	char **env = xrealloc(NULL, (size_t)(count(envp) + 2) * sizeof(*env));
	int ne = 0;

	j->u = u;
	j->uidx = u >= su->units && u < su->units + su->nunits
			  ? (int)(u - su->units)
			  : -1;
	j->pid = 0;
	j->pidfd = -1;
	j->whole = whole;
	j->told = false;
	snprintf(rep, sizeof(j->rep), "%s/.suite-XXXXXX", su->out_dir);
	int fd = mkstemp(rep);

	if (fd < 0) {
		u->tests = xrealloc(NULL, sizeof(*u->tests));
		memset(u->tests, 0, sizeof(*u->tests));
		u->ntests = 1;
		test_error(&u->tests[0], "ptloom: INCOMPLETE the test's report "
					 "file could not be made");
		free(args);
		free(env);
		return;
	}
	close(fd);
	snprintf(errf, sizeof(j->errf), "%s.err", rep);
	snprintf(clock, sizeof(clock), "%llu",
		 (unsigned long long)(su->co->clock_realtime_ns /
				      1000000000ull));
	args[ra++] = "ptloom";
	args[ra++] = "run";
	for (int i = 0; i < su->nfwd; i++)
		args[ra++] = su->fwd[i];
	args[ra++] = whole ? "--whole-tree" : "--per-test";
	args[ra++] = "-q";
	/* --suite-time: what is left, shared by the tests left (-j: that
	 * many at once), capped by --max-time; after the forwarded options,
	 * so that it is the one that counts */
	char share[32];

	if (su->budget > 0) {
		int left = su->expected - su->started;

		if (left < 1)
			left = 1;
		int par = su->njobs_max < left ? su->njobs_max : left;
		double t = (su->budget - (cli_wall() - su->t0)) * par / left;

		if (t < 0.5)
			t = 0.5; /* out of time: a token run, INCOMPLETE */
		if (su->max_time > 0 && su->max_time < t)
			t = su->max_time;
		snprintf(share, sizeof(share), "%.3f", t);
		args[ra++] = "--max-time";
		args[ra++] = share;
		if (su->verbose && !whole)
			printf("ptloom: %s: --max-time %s, its share of "
			       "--suite-time %g with %d of %d tests left%s\n",
			       esc(u->name), share, su->budget, left,
			       su->expected, par > 1 ? " (-j)" : "");
		su->started++;
	}
	args[ra++] = "--keep-env";
	args[ra++] = "--clock-start";
	args[ra++] = clock;
	args[ra++] = "-o";
	args[ra++] = su->out_dir;
	args[ra++] = "--report";
	args[ra++] = rep;
	args[ra++] = "--report-format";
	args[ra++] = "json";
	/* ptloom's own behaviour must not follow the test's environment
	 * where it reads it: those go to the program through -e */
	for (int i = 0; envp[i]; i++) {
		bool ours = false;

		for (char **e = environ; !ours && *e; e++)
			ours = !strcmp(*e, envp[i]);
		if (!strncmp(envp[i], "PATH=", 5))
			env[ne++] = envp[i]; /* ptloom finds the program */
		if (!strncmp(envp[i], "GITHUB_", 7) ||
		    !strncmp(envp[i], "PTLOOM_", 7) ||
		    !strncmp(envp[i], "GLIBC_TUNABLES=", 15) || !ours) {
			/* not ours: the replay command must carry it */
			if (strcmp(envp[i], PTLOOM_TUNABLES) &&
			    strcmp(envp[i], PTLOOM_LSAN)) {
				args[ra++] = "-e";
				args[ra++] = envp[i];
			}
		} else if (strncmp(envp[i], "PATH=", 5)) {
			env[ne++] = envp[i];
		}
	}
	env[ne] = NULL;
	args[ra++] = "--";
	for (int i = 0; argv[i]; i++)
		args[ra++] = argv[i];
	args[ra] = NULL;

	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0) {
		/* never outlive us (its own tracees die with it) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(EXIT_USAGE);
		int o = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0600);
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (o >= 0)
			dup2(o, 2);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		sched_setaffinity(0, sizeof(su->cpus), &su->cpus);
		if (cwd && chdir(cwd)) {
			fprintf(stderr, "ptloom: cannot enter %s: %s\n", cwd,
				strerror(errno));
			_exit(EXIT_USAGE);
		}
		execve(su->self, args, env);
		fprintf(stderr, "ptloom: cannot run %s: %s\n", su->self,
			strerror(errno));
		_exit(EXIT_USAGE);
	}
	free(args);
	free(env);
	j->pid = pid > 0 ? pid : 0;
	if (pid > 0)
		j->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pid < 0)
		nested_finish(su, j, 0);
}

/* Run it to its end (serially) and read its report into u's tests. */
static void nested(struct suite *su, struct unit *u, char *const *argv,
		   char *const *envp, const char *cwd, bool whole)
{
	struct job j;
	int st = 0;

	nested_start(su, u, argv, envp, cwd, whole, &j);
	if (!j.pid)
		return;
	/* our interrupt is its interrupt: it reports what it found */
	while (waitpid(j.pid, &st, 0) < 0 && errno == EINTR)
		if (cli_interrupted && !j.told) {
			kill(j.pid, cli_interrupted);
			j.told = true;
		}
	nested_finish(su, &j, st);
}

/* Its report (or why there is none) into u's tests. */
static void nested_finish(struct suite *su, struct job *j, int st)
{
	struct unit *u = j->uidx >= 0 ? &su->units[j->uidx] : j->u;
	const char *rep = j->rep, *errf = j->errf;
	bool whole = j->whole;

	if (j->pidfd >= 0)
		close(j->pidfd);
	j->pidfd = -1;
	json_object *root = j->pid > 0 ? json_object_from_file(rep) : NULL;
	json_object *tests;

	if (root && json_object_object_get_ex(root, "tests", &tests) &&
	    json_object_is_type(tests, json_type_array) &&
	    json_object_array_length(tests) > 0) {
		/* a runner itself: its tests are ours */
		size_t n = json_object_array_length(tests);

		u->tests = xrealloc(NULL, n * sizeof(*u->tests));
		memset(u->tests, 0, n * sizeof(*u->tests));
		u->ntests = (int)n;
		for (size_t i = 0; i < n; i++)
			test_from_json(&u->tests[i],
				       json_object_array_get_idx(tests, i));
	} else {
		u->tests = xrealloc(NULL, sizeof(*u->tests));
		memset(u->tests, 0, sizeof(*u->tests));
		u->ntests = 1;
		if (root) {
			test_from_json(&u->tests[0], root);
		} else {
			FILE *f = fopen(errf, "re");
			char line[512] = "";

			if (f) {
				if (!fgets(line, sizeof(line), f))
					line[0] = 0;
				line[strcspn(line, "\n")] = 0;
				fclose(f);
			}
			char why[1024];

			snprintf(why, sizeof(why),
				 "ptloom: INCOMPLETE the test's exploration "
				 "ended without a report (exit %d)%s%s",
				 WIFEXITED(st) ? WEXITSTATUS(st)
					       : 128 + WTERMSIG(st),
				 line[0] ? ": " : "", line);
			test_error(&u->tests[0], why);
		}
	}
	if (root)
		json_object_put(root);
	unlink(rep);
	unlink(errf);
	for (int i = 0; i < u->ntests; i++) {
		struct test *t = &u->tests[i];
		char *at = t->replay && t->schedule
				   ? strstr(t->replay, t->schedule)
				   : NULL;
		char *dd = at ? strstr(at + strlen(t->schedule), " -- ")
			      : NULL;

		if (dd && dd != at + strlen(t->schedule))
			dd = NULL; /* not "FILE -- PROGRAM" */

		/* a test's file records its command line and directory:
		 * `ptloom replay FILE` reruns it alone from anywhere (the
		 * whole command's stays as it is) */
		if (dd && !whole)
			*dd = 0;

		if (!t->verdict)
			t->verdict = xstrdup("incomplete");
		if (!t->summary)
			t->summary = xstrdup("ptloom: INCOMPLETE no summary");
		if (u->ntests == 1 && !t->name) {
			t->name = xstrdup(u->name);
			t->command = xstrdup(u->cmdline);
			t->cwd = xstrdup(u->cwd);
		}
		if (!t->rule)
			t->rule = xstrdup(u->rule);
	}
}

/* A test's entry in the report (pointers into t). */
static struct report_test report_of(const struct test *t)
{
	return (struct report_test){
		.name = t->name,
		.verdict = t->verdict,
		.summary = t->summary,
		.command = t->command,
		.cwd = t->cwd,
		.rule = t->rule,
		.replay_command = t->replay,
		.schedule_file = t->schedule,
		.message = t->message,
		.kind = t->kind,
		.location = t->location,
		.output = t->output,
		.in_runner = t->in_runner,
		.runs = t->runs,
		.seconds = t->seconds,
	};
}

static void print_test(struct suite *su, const struct test *t)
{
	su->done++;
	if (su->co->quiet)
		return;
	printf("test %d: %s: %s\n", su->done, esc(t->name ? t->name : "?"),
	       esc(t->summary));
	if (t->replay)
		printf("  replay: %s\n", esc(t->replay));
	fflush(stdout);
}

/* ---- the watcher ---- */

static void on_fork(void *ctx, int pidx, int ppidx)
{
	struct suite *su = ctx;
	struct sproc *p = sproc(su, pidx), *pp = sproc(su, ppidx);

	p->parent = ppidx;
	p->unit = pp ? pp->unit : -1;
	p->worker = pp && pp->worker;
	p->born = ++su->seq;
	through_fork(su->thr, pidx, ppidx);
}

static void on_thread(void *ctx, int thread, int pidx)
{
	struct suite *su = ctx;

	through_thread(su->thr, thread, pidx);
}

static void on_died(void *ctx, int pidx, int status)
{
	struct suite *su = ctx;

	through_died(su->thr, pidx, status);
}

static const struct user_point *on_points(void *ctx, int pidx, size_t *n)
{
	struct suite *su = ctx;

	return through_points(su->thr, pidx, n);
}

/*
 * The runner goes on to run u: each of its failing tests' schedules is
 * followed in the process that runs that test's command line (u itself,
 * or a process below it when u is a runner too), so that the runner sees
 * the test fail as it would natively.
 */
static void follow_failures(struct suite *su, struct unit *u)
{
	for (int i = 0; i < u->ntests; i++) {
		struct test *t = &u->tests[i];
		struct schedule sch;
		char err[256];

		if (!t->verdict || strcmp(t->verdict, "fail") || !t->schedule)
			continue;
		if (schedule_load(t->schedule, &sch, err, sizeof(err))) {
			fprintf(stderr, "ptloom: %s: %s (the runner runs the "
					"test on ptloom's default schedule)\n",
				esc(t->schedule), esc(err));
			continue;
		}
		/* a test inside u's program (its own tests, split), recorded
		 * as the program narrowed to it: the runner never runs that
		 * command line, only u's, whose failure is the tests
		 * together's */
		if (t->rule && strstr(t->rule, IN_PROCESS_RULE)) {
			schedule_free(&sch);
			continue;
		}
		t->target = 1 + through_add(su->thr, &sch,
					    t->name ? t->name : u->name,
					    u->pidx);
	}
	/* u's own test follows from here */
	through_exec(su->thr, u->pidx, u->pid, u->thread);
}

/*
 * -j: wait for nested explorations to end (block: for at least one, while
 * any runs); each that ended gives its tests and its unit's process is
 * let go.  How many ended.
 */
static int reap_jobs(struct suite *su, bool block)
{
	int done = 0;

	while (su->njobs) {
		struct pollfd pf[64];
		int n = su->njobs < 64 ? su->njobs : 64;

		for (int i = 0; i < n; i++)
			pf[i] = (struct pollfd){ .fd = su->jobs_[i].pidfd,
						 .events = POLLIN };
		if (cli_interrupted)
			for (int i = 0; i < su->njobs; i++)
				if (!su->jobs_[i].told) {
					kill(su->jobs_[i].pid, cli_interrupted);
					su->jobs_[i].told = true;
				}
		int r = poll(pf, (nfds_t)n, block && !done ? 200 : 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (block && !done)
				continue;
			break;
		}
		for (int i = n; i-- > 0;) {
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			struct job j = su->jobs_[i];
			int st = 0;

			/* the suite's session may have reaped it already */
			if (waitpid(j.pid, &st, WNOHANG) <= 0)
				st = 0;
			su->jobs_[i] = su->jobs_[--su->njobs];
			nested_finish(su, &j, st);
			struct unit *u = j.uidx >= 0 ? &su->units[j.uidx] : j.u;

			u->explored = true;
			for (int k = 0; k < u->ntests; k++)
				print_test(su, &u->tests[k]);
			/* (a runner's test has no process of its own) */
			if (!u->of_runner) {
				follow_failures(su, u);
				if (su->nrelease < 64)
					su->release[su->nrelease++] = u->pidx;
			}
			done++;
		}
	}
	return done;
}

static int on_held(void *ctx, int *pidx, int max, bool block)
{
	struct suite *su = ctx;

	if (!su->nrelease)
		reap_jobs(su, block);
	if (!su->nrelease)
		return block ? -1 : 0;
	int n = su->nrelease < max ? su->nrelease : max;

	memcpy(pidx, su->release, (size_t)n * sizeof(*pidx));
	memmove(su->release, su->release + n,
		(size_t)(su->nrelease - n) * sizeof(*pidx));
	su->nrelease -= n;
	return n;
}

/* ---- fork-per-test runners (Criterion) ---- */

/*
 * Is process pid (just exec'd, child of pp) a worker its runner started
 * for one test and that re-executes the runner itself: the same
 * executable as its parent, started as BoxFort's "boxfort-worker" with the
 * BXFI_MAP naming the test's context, which the runner wrote into shared
 * memory for it (Criterion)?  Such a worker is no fresh start: it gets
 * its test from the runner, and reports to the runner's channel.
 */
static bool runner_worker(pid_t pid, const struct sproc *pp)
{
	char a[64], b[64], ea[PATH_MAX], eb[PATH_MAX];
	size_t la = 0, le = 0;
	bool yes = false;

	if (!pp || !pp->exec_seen || pp->pid <= 0)
		return false;
	snprintf(a, sizeof(a), "/proc/%d/exe", pid);
	snprintf(b, sizeof(b), "/proc/%d/exe", pp->pid);
	ssize_t na = readlink(a, ea, sizeof(ea) - 1),
		nb = readlink(b, eb, sizeof(eb) - 1);

	if (na <= 0 || nb <= 0)
		return false;
	ea[na] = eb[nb] = 0;
	if (!same_file(ea, eb))
		return false;
	char *cmd = tracer_proc_file(pid, "cmdline", &la);
	char *env = tracer_proc_file(pid, "environ", &le);

	if (cmd && la && !strcmp(cmd, "boxfort-worker") && env) {
		for (size_t i = 0; i < le && !yes; i += strlen(env + i) + 1)
			yes = !strncmp(env + i, "BXFI_MAP=", 9);
	}
	free(cmd);
	free(env);
	return yes;
}

/* What argv (a test program's list option) prints, run natively with
 * envp in cwd, its input and errors /dev/null: at most cap bytes in 30 s.
 * NULL if it could not run; *code (if asked) is its exit status when that
 * was all of it and it then exited, else -1. */
static char *native_listing_code(const char *exe, char *const *argv,
				 char *const *envp, const char *cwd,
				 int *code, size_t cap)
{
	bool eof = false;

	if (code)
		*code = -1;
	int fd[2];

	if (pipe2(fd, O_CLOEXEC))
		return NULL;
	fflush(NULL);
	pid_t pid = fork();

	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd[1], 1);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 2);
		}
		if (cwd && chdir(cwd))
			_exit(127);
		execve(exe, argv, envp);
		_exit(127);
	}
	close(fd[1]);
	if (pid < 0) {
		close(fd[0]);
		return NULL;
	}
	size_t len = 0, have = cap < 65536 ? cap : 65536;
	char *buf = xrealloc(NULL, have + 1);
	double t0 = cli_wall();

	for (;;) {
		struct pollfd pf = { .fd = fd[0], .events = POLLIN };
		int r = poll(&pf, 1, 200);

		if (r < 0 && errno == EINTR)
			continue;
		if (cli_wall() - t0 > 30 || cli_interrupted)
			break;
		if (r == 0)
			continue;
		if (len == have) {
			have = have * 2 < cap ? have * 2 : cap;
			buf = xrealloc(buf, have + 1);
		}
		ssize_t k = read(fd[0], buf + len, have - len);

		if (k < 0 && errno == EINTR)
			continue;
		eof = k == 0;
		if (k <= 0)
			break;
		len += (size_t)k;
		if (len == cap)
			break;
	}
	buf[len] = 0;
	close(fd[0]);
	int st = 0;
	pid_t w = 0;

	/* its output ended: its exit status, within 5 s */
	for (int i = 0; eof && w == 0 && i < 500 && !cli_interrupted; i++) {
		w = waitpid(pid, &st, WNOHANG);
		if (w == 0)
			usleep(10000);
	}
	if (w <= 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (code && eof && w > 0 && WIFEXITED(st))
		*code = WEXITSTATUS(st);
	return buf;
}

/* The same, *whole (if asked) saying whether that was all of it and the
 * program then exited with status 0. */
static char *native_listing(const char *exe, char *const *argv,
			    char *const *envp, const char *cwd, bool *whole,
			    size_t cap)
{
	int code = -1;
	char *buf = native_listing_code(exe, argv, envp, cwd, &code, cap);

	if (whole)
		*whole = code == 0;
	return buf;
}

/* `EXE --list` of a Criterion runner, run natively (it runs no test) with
 * the runner's environment in its directory: "suite/test" entries. */
static char **criterion_list(const char *exe, char *const *envp,
			     const char *cwd, int *n)
{
	char *argv[] = { (char *)exe, "--list", "--ascii", NULL };
	char *buf = native_listing(exe, argv, envp, cwd, NULL, 65536);
	char **out = NULL;

	*n = 0;
	if (!buf)
		return NULL;
	/* "SUITE: N tests" then "|-- TEST" / "`-- TEST" lines */
	char suite[256] = "";

	for (char *l = buf; *l;) {
		char *e = strchr(l, '\n');

		if (e)
			*e = 0;
		/* (--ascii's, or the box-drawing "├── " and "└── ") */
		size_t skip = !strncmp(l, "|-- ", 4) || !strncmp(l, "`-- ", 4)
				      ? 4
			      : !strncmp(l, "\u251c\u2500\u2500 ", 10) ||
					!strncmp(l, "\u2514\u2500\u2500 ", 10)
				      ? 10
				      : 0;

		if (skip) {
			char name[600];

			if (suite[0] && l[skip]) {
				snprintf(name, sizeof(name), "%s/%s", suite,
					 l + skip);
				out = xrealloc(out, (size_t)(*n + 2) *
							    sizeof(*out));
				out[(*n)++] = xstrdup(name);
				out[*n] = NULL;
			}
		} else {
			char *colon = strrchr(l, ':');

			suite[0] = 0;
			if (colon && strstr(colon, " test"))
				snprintf(suite, sizeof(suite), "%.*s",
					 (int)(colon - l), l);
		}
		l = e ? e + 1 : l + strlen(l);
	}
	free(buf);
	return out;
}

static void explore_unit(struct suite *su, struct unit *u);

/*
 * A new unit that is no process of the suite run (a runner's or a test
 * program's test): its command line (argv, taken; NULL: cmd's words, only
 * named), a copy of envp (NULL: none), cwd; ended when it starts.  Valid
 * until the next unit is added.
 */
static struct unit *test_unit(struct suite *su, char **argv, char **cmd,
			      char *const *envp, const char *cwd)
{
	char q[4096];

	su->units = xrealloc(su->units,
			     (size_t)(su->nunits + 1) * sizeof(*su->units));
	struct unit *u = &su->units[su->nunits++];

	memset(u, 0, sizeof(*u));
	u->pidx = -1;
	u->of_runner = true;
	u->argv = argv;
	if (envp) {
		u->envp = xrealloc(NULL, (size_t)(count(envp) + 1) *
						 sizeof(char *));
		for (int i = 0; envp[i]; i++)
			u->envp[i] = xstrdup(envp[i]);
		u->envp[count(envp)] = NULL;
	}
	u->cwd = xstrdup(cwd);
	u->start = u->end = ++su->seq;
	u->ended = true;
	shell_join(q, sizeof(q), argv ? argv : cmd, count(argv ? argv : cmd));
	u->cmdline = xstrdup(q);
	return u;
}

/*
 * The first worker of runner process rpidx was seen: the runner starts a
 * worker per test, which gets its test from the runner and reports to it,
 * so a worker is no program of its own, but each test is one when the
 * runner runs it alone: each test the runner lists (and its own --filter
 * keeps) is a unit, explored as the runner's command line filtered to that
 * test.  Named "suite::test", as Criterion names it.
 */
static void split_runner(struct suite *su, int rpidx, int wpidx)
{
	struct sproc *r = sproc(su, rpidx);
	size_t la = 0, le = 0;
	char cwd[PATH_MAX], exe[PATH_MAX];

	if (r->runner_split)
		return;
	r->runner_split = true;
	char *cmd = tracer_proc_file(r->pid, "cmdline", &la);
	char *env = tracer_proc_file(r->pid, "environ", &le);

	proc_link(r->pid, "cwd", cwd, sizeof(cwd));
	proc_link(r->pid, "exe", exe, sizeof(exe));
	char **argv = cmd && la ? split_nul(cmd, la) : NULL;
	char **envp = env ? split_nul(env, le) : NULL;
	size_t lm = 0;
	char *maps = tracer_proc_file(r->pid, "maps", &lm);
	/* `--list` is Criterion's: another program run with it natively
	 * might run its tests */
	bool criterion = maps && strstr(maps, "/libcriterion");

	free(maps);
	free(cmd);
	free(env);
	int ntests = 0;
	char **tests = criterion && argv && envp && exe[0] && cwd[0]
			       ? criterion_list(exe, envp, cwd, &ntests)
			       : NULL;

	if (!ntests) {
		/* its tests are covered by the whole command's exploration,
		 * which this unit asks for */
		struct unit *u = test_unit(su, NULL, argv, NULL, cwd);

		snprintf(u->name, sizeof(u->name), "%s", u->cmdline);
		snprintf(u->rule, sizeof(u->rule),
			 "not split: its worker P%d re-executes it for a test "
			 "(a fork-per-test runner), but %s", wpidx,
			 criterion ? "`--list` named no test"
				   : "it is no Criterion runner (no "
				     "libcriterion mapped): its tests cannot "
				     "be listed");
		free_strings(argv);
		free_strings(envp);
		free(tests);
		return;
	}
	/* the runner's own --filter: which of them it runs */
	const char *filter = NULL;
	int argc = count(argv);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--filter") && i + 1 < argc)
			filter = argv[i + 1];
		else if (!strncmp(argv[i], "--filter=", 9))
			filter = argv[i] + 9;
	}
	for (int t = 0; t < ntests; t++) {
		if (filter && fnmatch(filter, tests[t], 0))
			continue;
		char **av = xrealloc(NULL, (size_t)(argc + 3) * sizeof(*av));
		int k = 0;

		/* the runner's command line without its --filter, then the
		 * test's */
		av[k++] = xstrdup(exe);
		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
				i++;
				continue;
			}
			if (!strncmp(argv[i], "--filter=", 9))
				continue;
			av[k++] = xstrdup(argv[i]);
		}
		av[k++] = xstrdup("--filter");
		av[k++] = xstrdup(tests[t]);
		av[k] = NULL;
		struct unit *u = test_unit(su, av, NULL, envp, cwd);
		char *slash = strchr(tests[t], '/');

		snprintf(u->name, sizeof(u->name), "%.*s::%s",
			 (int)(slash - tests[t]), tests[t], slash + 1);
		u->split = true;
		snprintf(u->rule, sizeof(u->rule),
			 "split as a test of the fork-per-test runner P%d: its "
			 "worker P%d re-executes the runner for one test it "
			 "gets from it and reports to the runner's channel, so "
			 "a worker is no program alone, but the runner "
			 "filtered to the test is (explored as `%s --filter "
			 "%s`)",
			 rpidx, wpidx, esc(exe), esc(tests[t]));
		if (!su->counting)
			explore_unit(su, &su->units[su->nunits - 1]);
	}
	free_strings(argv);
	free_strings(envp);
	free_strings(tests);
}

/* A runner's test (no process of its own): explored now, or with -j as
 * a job while the suite goes on. */
static void explore_unit(struct suite *su, struct unit *u)
{
	if (su->njobs_max > 1) {
		while (su->njobs >= su->njobs_max && !cli_interrupted)
			reap_jobs(su, true);
		struct job *j = &su->jobs_[su->njobs];

		/* the runner filtered to one test is one program: not split
		 * again (its workers would name the same test) */
		nested_start(su, u, u->argv, u->envp, u->cwd, !u->per_test, j);
		if (j->pid && j->pidfd >= 0) {
			su->njobs++;
			return;
		}
		if (j->pid) {
			int st = 0;

			while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR)
				;
			nested_finish(su, j, st);
		}
	} else {
		nested(su, u, u->argv, u->envp, u->cwd, !u->per_test);
	}
	u->explored = true;
	for (int i = 0; i < u->ntests; i++)
		print_test(su, &u->tests[i]);
}

/* ---- in-process harnesses (Rust's libtest, Go's testing, GoogleTest) ---- */

/* a test program's list, at most (a suite of tens of thousands) */
#define LIST_MAX (8u << 20)

/*
 * A test program of these runs all its tests in its one process (in
 * threads at once, or one after the other), each test selected by a filter
 * option and listed by a list option that runs none.  Known by a symbol
 * only their binaries have, since a list option given to another program
 * might run it; pytest by its command line.
 */
enum harness {
	HARNESS_RUST, HARNESS_GO, HARNESS_GTEST, HARNESS_CATCH2,
	HARNESS_DOCTEST, HARNESS_BOOST, NSYMBOL,
	HARNESS_PYTEST = NSYMBOL, /* known by its command line */
	HARNESS_UNITTEST,	  /* the same */
	NHARNESS
};

static const char *const harness_symbol[NSYMBOL] = {
	"4test16test_main_static",	/* libtest's (legacy and v0 names) */
	"testing.(*M).Run",		/* what `go test -c` generates calls */
	"7testing14InitGoogleTest",	/* GoogleTest's (linked in or not) */
	"5Catch7Session",		/* Catch2's (compiled into the test) */
	"7doctest7Context",		/* doctest's (compiled into the test) */
	"9unit_test14unit_test_main",	/* Boost.Test's (linked in or not) */
};
static const char *const harness_name[NHARNESS] = {
	"Rust's libtest", "Go's testing package", "GoogleTest", "Catch2",
	"doctest", "Boost.Test", "pytest", "Python's unittest",
};
/* (doctest's options by their prefixed names, which a build that turns
 * the plain ones off still takes: a plain option it does not know is
 * ignored, and the listing would run every test) */
static const char *const harness_list[NHARNESS] = {
	"--list", "-test.list", "--gtest_list_tests", "--list-test-names-only",
	"--dt-list-test-cases", "--list_content=DOT", "--collect-only -q",
	"ptloom's lister, unittest having no list option",
};

/*
 * unittest has no list option: the command is run by this program
 * (`python -c` it, then the command's -m or script and its arguments),
 * which makes TestProgram print the ids of the tests it would run, after
 * parsing the arguments and loading the tests as it would, instead of
 * running them (sys.path[0] as the command would have it).  Exit status
 * 3 when the program never reached unittest.main().
 */
static const char unittest_lister[] =
	"import os, sys, runpy, unittest\n"
	"def ids(t):\n"
	"    if isinstance(t, unittest.TestSuite):\n"
	"        for x in t:\n"
	"            yield from ids(x)\n"
	"    else:\n"
	"        yield t.id()\n"
	"def listing(self):\n"
	"    for i in ids(self.test):\n"
	"        print('ptloom-unittest:', i)\n"
	"    sys.stdout.flush()\n"
	"    os._exit(0)\n"
	"unittest.TestProgram.runTests = listing\n"
	"a = sys.argv[1:]\n"
	"if a[0] == '-m':\n"
	"    sys.argv = a[1:]\n"
	"    runpy.run_module(a[1], run_name='__main__', alter_sys=True)\n"
	"else:\n"
	"    sys.argv = a\n"
	"    sys.path[0] = os.path.dirname(os.path.abspath(a[0]))\n"
	"    runpy.run_path(a[0], run_name='__main__')\n"
	"sys.stdout.flush()\n"
	"os._exit(3)\n";
/* a test's -k pattern is "*" + its id: this one's, "*ptloom-none", is
 * matched by no id (a method's name has no '-') */
#define UNITTEST_NONE "ptloom-none"


/* pytest's options that take a value (as "-k EXPR", "-kEXPR" or
 * "--opt=VALUE"); plugins add more, so a split command line is checked by
 * collecting it */
static const char *const pytest_valued[] = {
	"-k", "-m", "-p", "-c", "-o", "-W", "-r", "-n", "--tb", "--maxfail",
	"--rootdir", "--basetemp", "--junitxml", "--junit-xml",
	"--junit-prefix", "--confcutdir", "--ignore", "--ignore-glob",
	"--deselect", "--durations", "--durations-min", "--log-level",
	"--log-format", "--log-date-format", "--log-file", "--log-file-level",
	"--log-file-format", "--log-file-date-format", "--log-cli-level",
	"--log-cli-format", "--log-cli-date-format", "--import-mode",
	"--capture", "--override-ini", "--color", "--code-highlight",
	"--show-capture", "--doctest-glob", "--doctest-report", "--assert",
	"--numprocesses", "--dist", "--maxprocesses", "--timeout",
	"--reruns", "--cov", "--cov-report", "--cov-config", "--cov-fail-under",
	"--config-file", "--inifile", NULL,
};

/* Where a python command line's program is: the index of its "-m" (*mod)
 * or of its script, past the interpreter's own options; 0 when it has
 * none (-c, or not a python). */
static int python_program(const char *exe, char **argv, bool *mod)
{
	*mod = false;
	if (strncmp(base_of(exe), "python", 6) || !argv)
		return 0;
	for (int i = 1; argv[i]; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-m")) {
			*mod = true;
			return argv[i + 1] ? i : 0;
		}
		if (a[0] != '-')
			return i;
		/* the interpreter's options with a value */
		if ((!strcmp(a, "-W") || !strcmp(a, "-X")) && argv[i + 1])
			i++;
		else if (!strcmp(a, "-c"))
			return 0;
	}
	return 0;
}

/* Where pytest's own arguments start in a python command line (after
 * `-m pytest`, or a script named pytest or py.test), else 0. */
static int pytest_start(const char *exe, char **argv)
{
	bool mod = false;
	int i = python_program(exe, argv, &mod);
	const char *p = i ? (mod ? argv[i + 1] : base_of(argv[i])) : "";

	return !strcmp(p, "pytest") || !strcmp(p, "py.test") ? i + 1 + mod
							     : 0;
}

/* Where unittest's arguments start in a python command line (after `-m
 * unittest`, or a script that calls unittest.main(): its text says so,
 * read in cwd; without cwd any script), else 0. */
static int unittest_start(const char *exe, char **argv, const char *cwd)
{
	bool mod = false;
	int i = python_program(exe, argv, &mod);

	if (!i)
		return 0;
	if (mod)
		return !strcmp(argv[i + 1], "unittest") ? i + 2 : 0;
	if (!cwd)
		return i + 1;
	char path[2 * PATH_MAX], buf[1 << 16];
	bool calls = false;

	snprintf(path, sizeof(path), "%s%s%s", argv[i][0] == '/' ? "" : cwd,
		 argv[i][0] == '/' ? "" : "/", argv[i]);
	FILE *f = fopen(path, "re");

	/* (a call split across two reads is missed: not split) */
	for (size_t n; f && !calls && (n = fread(buf, 1, sizeof(buf) - 1, f));) {
		buf[n] = 0;
		calls = memmem(buf, n, "unittest.main(", 14) != NULL;
	}
	if (f)
		fclose(f);
	return calls ? i + 1 : 0;
}

/* a pytest option that only sets how much it prints */
static bool pytest_verbosity(const char *a)
{
	return !strcmp(a, "--quiet") || !strcmp(a, "--verbose") ||
	       (a[0] == '-' && a[1] && strspn(a + 1, "q") == strlen(a + 1)) ||
	       (a[0] == '-' && a[1] && strspn(a + 1, "v") == strlen(a + 1));
}

/* Is a (an argument of a harness's command line) option o, as "o" (its
 * value next: *sep = false) or "o=VALUE" (*sep = true)?  Go's flags take
 * one dash or two; pytest's short options their value attached too
 * ("-kEXPR"). */
static bool opt_is(enum harness h, const char *a, const char *o, bool *sep)
{
	if (h == HARNESS_GO && a[0] == '-' && a[1] == '-' && a[2] != '-')
		a++;
	size_t n = strlen(o);

	if (strncmp(a, o, n))
		return false;
	*sep = a[n] != 0;
	return !a[n] || a[n] == '=' || (h == HARNESS_PYTEST && o[1] != '-');
}

/* Is a one of the options of list (NULL-terminated) that take a value? */
static bool valued_opt(enum harness h, const char *a,
		       const char *const *list, bool *sep)
{
	for (int v = 0; list[v]; v++)
		if (opt_is(h, a, list[v], sep))
			return true;
	return false;
}

/* libtest's options that take a value (the others are flags; an argument
 * that is neither is a filter) */
static const char *const rust_valued[] = {
	"--test-threads", "--skip", "--logfile", "--color", "--format", "-Z",
	"--shuffle-seed", NULL,
};

/* Catch2's options that take a value (as "-o FILE", "--out FILE",
 * "--out=FILE" or "--out:FILE"); an argument that is none of its options
 * is a test spec */
static const char *const catch2_valued[] = {
	"-r", "--reporter", "-o", "--out", "-n", "--name", "-d", "--durations",
	"-D", "--min-duration", "-x", "--abortx", "-w", "--warn", "-c",
	"--section", "--order", "--rng-seed", "--use-colour",
	"--wait-for-keypress", "--verbosity", "--benchmark-samples",
	"--benchmark-resamples", "--benchmark-confidence-interval",
	"--benchmark-warmup-time", NULL,
};

/* Catch2's options that run no test or choose tests another way (a file
 * of specs) */
static const char *const catch2_other[] = {
	"-l", "--list-tests", "-t", "--list-tags", "--list-reporters",
	"--list-test-names-only", "--list-listeners", "-h", "-?", "--help",
	"--libidentify", "-f", "--input-file", NULL,
};

/* where Catch2 writes and how: the listing's must be the console's, on
 * stdout */
static const char *const catch2_output[] = { "-o", "--out", "-r",
					     "--reporter", NULL };

/* Is a Catch2's option o, alone (*sep = false: its value next) or with
 * its value ("o=V", "o:V": *sep = true)? */
static bool catch2_opt(const char *a, const char *const *list, bool *sep)
{
	for (int i = 0; list[i]; i++) {
		size_t n = strlen(list[i]);

		if (!strncmp(a, list[i], n) &&
		    (!a[n] || a[n] == '=' || a[n] == ':')) {
			*sep = a[n] != 0;
			return true;
		}
	}
	return false;
}

/* A doctest option's name: a's leading dashes and the "dt-" prefix left
 * out, up to its '=' (*nlen); NULL if a is no option */
static const char *doctest_opt(const char *a, size_t *nlen)
{
	if (a[0] != '-')
		return NULL;
	a += strspn(a, "-");
	if (!strncmp(a, "dt-", 3))
		a += 3;
	*nlen = strcspn(a, "=");
	return a;
}

/* Is doctest option a one of names? */
static bool doctest_is(const char *a, const char *const *names)
{
	size_t n = 0;
	const char *o = doctest_opt(a, &n);

	for (int i = 0; o && names[i]; i++)
		if (strlen(names[i]) == n && !strncmp(o, names[i], n))
			return true;
	return false;
}

/* doctest's options that run no test or pick tests by their order */
static const char *const doctest_other[] = {
	"help", "h", "?", "version", "v", "count", "c", "list-test-cases",
	"ltc", "list-test-suites", "lts", "list-reporters", "lr", "first",
	"f", "last", "l", "no-run", "nr", NULL,
};
static const char *const doctest_test_case[] = { "test-case", "tc", NULL };
/* where it writes and how: the listing's must be the console's, on stdout */
static const char *const doctest_output[] = { "out", "o", "reporters", "r",
					      NULL };

/* Boost.Test's parameters that run no test or choose the tests: its long
 * options may be abbreviated to a prefix no other parameter shares, so a
 * prefix of one of these is taken for it */
static const char *const boost_other[] = {
	"run_test", "list_content", "list_labels", "help", "usage",
	"version", NULL,
};

/* Is a Boost.Test's long option ("--NAME", "--NAME=V", "--no_NAME") one
 * of names, or a prefix of one at least min characters long? */
static bool boost_is(const char *a, const char *const *names, size_t min)
{
	if (strncmp(a, "--", 2) || !a[2])
		return false;
	a += 2;
	size_t n = strcspn(a, "=");

	if (n > 3 && !strncmp(a, "no_", 3)) {
		a += 3;
		n -= 3;
	}
	for (int i = 0; names[i]; i++)
		if (n >= min && n <= strlen(names[i]) &&
		    !strncmp(a, names[i], n))
			return true;
	return false;
}

/* where Boost.Test reports, and so lists: the listing's must be stdout */
static const char *const boost_output[] = { "report_sink", NULL };

/* name as the one test Catch2's command line runs: a test spec whose
 * special characters are escaped (a name is matched without case and
 * trimmed, a '*' at either end is a wildcard: split_harness checks that
 * the spec lists that test alone) */
static char *catch2_spec(const char *name)
{
	char *r = xrealloc(NULL, 2 * strlen(name) + 1), *q = r;

	for (const char *p = name; *p; p++) {
		if (strchr("\\,[]\"~", *p))
			*q++ = '\\';
		*q++ = *p;
	}
	*q = 0;
	return r;
}

/* doctest's --dt-test-case=NAME: commas and backslashes escaped (its
 * wildcards and its matching without case are checked as Catch2's are) */
static char *doctest_spec(const char *name)
{
	char *r = xrealloc(NULL, 2 * strlen(name) + 32), *q = r;

	q += sprintf(q, "--dt-test-case=");
	for (const char *p = name; *p; p++) {
		if (*p == ',' || *p == '\\')
			*q++ = '\\';
		*q++ = *p;
	}
	*q = 0;
	return r;
}

/*
 * The harness's command line for running the test named test alone (argv
 * without its own selection, then the test's), or without test, argv with
 * its own selection; with list, its list option added (pytest's verbosity
 * options left out, as they change what it prints).  NULL when the
 * command line does something else than run tests (lists them,
 * benchmarks, prints help), *why saying so.
 */
static char **harness_argv(enum harness h, const char *exe, char **argv,
			   const char *test, bool list, char *why,
			   size_t wlen)
{
	int argc = count(argv), k = 0;
	char **av = xrealloc(NULL, (size_t)(argc + 8) * sizeof(*av));
	const char *run = NULL; /* Go's own -test.run */
	bool py = h == HARNESS_PYTEST || h == HARNESS_UNITTEST, mod = false;
	int start = h == HARNESS_PYTEST	    ? pytest_start(exe, argv)
		    : h == HARNESS_UNITTEST ? unittest_start(exe, argv, NULL)
					    : 1;
	/* where unittest's lister goes: before -m or the script */
	int prog = h == HARNESS_UNITTEST && list
			   ? python_program(exe, argv, &mod)
			   : 0;
	int end = argc; /* Boost.Test's own arguments end at "--" */

	for (int i = start; h == HARNESS_BOOST && i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			end = i;
			break;
		}

	/* an interpreter as typed (a venv's python finds its venv by it) */
	av[k++] = xstrdup(py ? argv[0] : exe);
	/* the interpreter's part (python3 -m pytest) */
	for (int i = 1; i < start; i++) {
		if (i == prog) {
			av[k++] = xstrdup("-c");
			av[k++] = xstrdup(unittest_lister);
		}
		av[k++] = xstrdup(argv[i]);
	}
	for (int i = start; i < end; i++) {
		const char *a = argv[i];
		bool sep = false, drop = false;

		if (h == HARNESS_PYTEST) {
			bool valued = false;

			if (!strcmp(a, "--collect-only") ||
			    !strcmp(a, "--co") || !strcmp(a, "--help") ||
			    !strcmp(a, "-h") || !strcmp(a, "--version") ||
			    !strcmp(a, "-V") || !strcmp(a, "--fixtures") ||
			    !strcmp(a, "--markers") ||
			    !strcmp(a, "--fixtures-per-test")) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			valued = valued_opt(h, a, pytest_valued, &sep);
			if (valued && !sep && i + 1 < argc) {
				av[k++] = xstrdup(a);
				a = argv[++i];
			} else if (!valued && a[0] != '-') {
				drop = true; /* a path or node: the test's */
			} else if (list && pytest_verbosity(a)) {
				continue; /* the listing's own -q */
			}
		} else if (h == HARNESS_RUST) {
			bool valued = false;

			if (!strcmp(a, "--list") || !strcmp(a, "--bench") ||
			    !strcmp(a, "--help") || !strcmp(a, "-h")) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			valued = valued_opt(h, a, rust_valued, &sep);
			if (valued && !sep && i + 1 < argc) {
				/* the option and its value, kept */
				av[k++] = xstrdup(a);
				a = argv[++i];
			} else if (!strcmp(a, "--exact") || a[0] != '-') {
				drop = true; /* a filter: the test's instead */
			}
		} else if (h == HARNESS_GO) {
			if (opt_is(h, a, "-test.list", &sep) ||
			    opt_is(h, a, "-test.bench", &sep) ||
			    opt_is(h, a, "-test.fuzz", &sep) ||
			    opt_is(h, a, "-h", &sep) ||
			    opt_is(h, a, "-help", &sep)) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			if (opt_is(h, a, "-test.run", &sep)) {
				drop = true;
				run = sep ? strchr(a, '=') + 1
					  : i + 1 < argc ? argv[++i] : NULL;
			}
		} else if (h == HARNESS_CATCH2) {
			if (catch2_opt(a, catch2_other, &sep)) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			bool valued = catch2_opt(a, catch2_valued, &sep);
			/* (one of the valued ones: sep stays as it is) */
			bool out = list && catch2_opt(a, catch2_output, &sep);

			if (valued && !sep && i + 1 < argc) {
				if (!out)
					av[k++] = xstrdup(a);
				a = argv[++i];
			}
			if (out)
				continue;
			if (!valued && a[0] != '-')
				drop = true; /* a test spec: the test's */
		} else if (h == HARNESS_DOCTEST) {
			if (doctest_is(a, doctest_other)) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			if (list && doctest_is(a, doctest_output))
				continue;
			drop = doctest_is(a, doctest_test_case);
		} else if (h == HARNESS_UNITTEST) {
			if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			/* its -k patterns: the test's instead */
			if (!strcmp(a, "-k") && i + 1 < argc) {
				if (!test) {
					av[k++] = xstrdup(a);
					av[k++] = xstrdup(argv[i + 1]);
				}
				i++;
				continue;
			}
			drop = !strncmp(a, "-k", 2);
		} else if (h == HARNESS_BOOST) {
			/* (-t is --run_test's short name, -? --help's, -e
			 * --report_sink's; a short option's value comes
			 * next) */
			if (boost_is(a, boost_other, 1) || !strcmp(a, "-t") ||
			    !strcmp(a, "-?")) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			if (list && boost_is(a, boost_output, 8))
				continue;
			if (list && !strcmp(a, "-e")) {
				i++;
				continue;
			}
		} else {
			if (!strcmp(a, "--gtest_list_tests") ||
			    !strcmp(a, "--help") || !strcmp(a, "-h")) {
				snprintf(why, wlen, "its command line has %s",
					 a);
				goto other;
			}
			drop = !strncmp(a, "--gtest_filter=", 15) ||
			       !strncmp(a, "-gtest_filter=", 14);
		}
		/* listing: the harness's own filters choose (Go's
		 * -test.run becomes -test.list's pattern) */
		if (!drop || (!test && h != HARNESS_GO))
			av[k++] = xstrdup(a);
	}
	if (h == HARNESS_GO && run && strchr(run, '/')) {
		snprintf(why, wlen, "its -test.run selects subtests (%s)",
			 run);
		goto other;
	}
	/* the test's selection */
	if (test && h == HARNESS_RUST) {
		av[k++] = xstrdup("--exact");
		av[k++] = xstrdup(test);
	} else if (test && h == HARNESS_PYTEST) {
		av[k++] = xstrdup(test);
	} else if (test && h == HARNESS_CATCH2) {
		av[k++] = catch2_spec(test);
	} else if (test && h == HARNESS_DOCTEST) {
		av[k++] = doctest_spec(test);
	} else if (test && h == HARNESS_UNITTEST) {
		/* an id ends the pattern ("*" + id: used as it is, matching
		 * the whole of an id; "" none) */
		if (*test) {
			char *r = xrealloc(NULL, strlen(test) + 2);

			sprintf(r, "*%s", test);
			av[k++] = xstrdup("-k");
			av[k++] = r;
		}
	} else if (test && h == HARNESS_BOOST) {
		/* (a path of names without a filter's characters:
		 * boost_tests) */
		char *r = xrealloc(NULL, strlen(test) + 16);

		sprintf(r, "--run_test=%s", test);
		av[k++] = r;
	} else if (test) {
		char *r = xrealloc(NULL, strlen(test) + 16);

		/* a Go name is letters, digits and _: no quoting needed */
		sprintf(r, h == HARNESS_GO ? "-test.run=^%s$"
					   : "--gtest_filter=%s",
			test);
		av[k++] = r;
	}
	/* the list option, which runs no test (Go's -test.list takes
	 * -test.run's place) */
	if (list && h == HARNESS_RUST) {
		av[k++] = xstrdup("--list");
	} else if (list && h == HARNESS_PYTEST) {
		av[k++] = xstrdup("--collect-only");
		av[k++] = xstrdup("-q");
	} else if (list && h == HARNESS_GO) {
		av[k++] = xstrdup("-test.list");
		av[k++] = xstrdup(run ? run : ".*");
	} else if (list && (h == HARNESS_CATCH2 || h == HARNESS_DOCTEST)) {
		av[k++] = xstrdup(harness_list[h]);
	} else if (list && h == HARNESS_BOOST) {
		av[k++] = xstrdup(harness_list[h]);
		av[k++] = xstrdup("--report_sink=stdout");
	} else if (list && h == HARNESS_UNITTEST) {
		/* (unittest_lister lists) */
	} else if (list) {
		av[k++] = xstrdup("--gtest_list_tests");
	}
	/* the test module's own arguments, after Boost.Test's "--" */
	for (int i = end; i < argc; i++)
		av[k++] = xstrdup(argv[i]);
	av[k] = NULL;
	return av;
other:
	av[k] = NULL;
	free_strings(av);
	return NULL;
}

/* One unit of Boost.Test's DOT listing. */
struct bunit {
	unsigned long id, parent; /* parent 0: none (the master suite) */
	bool on;		  /* enabled by default ("color=green") */
	char *name;
};

/* Is name one --run_test takes as itself: not empty, no space at an end,
 * none of the characters its filters read (",/:@+!*"; Boost.Test has put
 * '_' in their place in test names since 1.67) or that would make the
 * listing's label ambiguous ("|\"\\")? */
static bool boost_plain(const char *name)
{
	size_t l = strlen(name);

	return l && name[0] != ' ' && name[l - 1] != ' ' &&
	       !strpbrk(name, ",/:@+!*|\"\\");
}

/*
 * The test cases Boost.Test's --list_content=DOT printed: a node a unit
 * (`tuID[shape=...,color=green,label="NAME|FILE(LINE)..."];`, yellow when
 * disabled), an edge from its suite (`tuP -> tuID;`); a case's id has
 * bits above the 16th (its type), a suite's not.  Each case enabled with
 * every suite above it, as its path of names below the master suite
 * ("suite/case", as --run_test takes it).  NULL (*n 0, why saying so)
 * when a label does not parse, a name is not boost_plain() or two paths
 * are alike: --run_test would not select that test alone.
 */
static char **boost_tests(char *buf, int *n, char *why, size_t wlen)
{
	struct bunit *u = NULL;
	size_t nu = 0;
	char **out = NULL;
	bool bad = false;

	*n = 0;
	for (char *l = buf; *l && !bad;) {
		char *e = strchr(l, '\n');
		unsigned long a = 0, b = 0;
		int used = 0;

		if (e)
			*e = 0;
		size_t len = strlen(l);
		char *lab = strstr(l, ",label=\"");

		if (lab && sscanf(l, "tu%lu[%n", &a, &used) == 1 && used &&
		    len >= 3 && !strcmp(l + len - 3, "\"];")) {
			char *name = lab + 8, *end = l + len - 3;
			char *bar = memchr(name, '|', (size_t)(end - name));
			/* the master suite's label is its name alone; a
			 * unit's "NAME|FILE(LINE)", maybe "|timeout=..."
			 * and more after */
			size_t nlen = bar ? (size_t)(bar - name)
					  : (size_t)(end - name);

			u = xrealloc(u, (nu + 1) * sizeof(*u));
			u[nu].id = a;
			u[nu].parent = 0;
			*lab = 0;
			u[nu].on = strstr(l, ",color=green") != NULL;
			u[nu].name = xrealloc(NULL, nlen + 1);
			memcpy(u[nu].name, name, nlen);
			u[nu].name[nlen] = 0;
			nu++;
			if (bar) {
				/* FILE(LINE) up to the end or a '|': a
				 * name with a '|' would not parse so */
				const char *f = bar + 1;

				*end = 0;
				size_t fl = strcspn(f, "|");

				bad = fl < 4 || f[fl - 1] != ')' ||
				      !memchr(f, '(', fl);
				if (bad)
					snprintf(why, wlen,
						 "its listing's label \"%s\" "
						 "does not parse",
						 esc(name));
			}
		} else if (!strchr(l, '[') &&
			   sscanf(l, "tu%lu -> tu%lu;%n", &a, &b, &used) ==
				   2 &&
			   used == (int)len) {
			for (size_t i = 0; i < nu; i++)
				if (u[i].id == b)
					u[i].parent = a;
		}
		l = e ? e + 1 : l + len;
	}
	for (size_t i = 0; i < nu && !bad; i++) {
		char path[1024] = "", tmp[1024];
		bool on = true;

		if (u[i].id < 0x10000)
			continue; /* a suite */
		/* up to the master suite, the one without a parent */
		for (size_t c = i; !bad && u[c].parent;) {
			size_t p = 0;

			while (p < nu && u[p].id != u[c].parent)
				p++;
			bad = p == nu || !boost_plain(u[c].name);
			if (bad) {
				snprintf(why, wlen,
					 p == nu ? "its listing has no suite "
						   "above %s"
						 : "a test's name (%s) is no "
						   "filter of --run_test that "
						   "selects it alone",
					 esc(u[c].name));
				break;
			}
			on &= u[c].on;
			snprintf(tmp, sizeof(tmp), "%s%s%s", u[c].name,
				 path[0] ? "/" : "", path);
			snprintf(path, sizeof(path), "%s", tmp);
			c = p;
		}
		if (bad || !on || !path[0])
			continue;
		for (int k = 0; k < *n && !bad; k++)
			if (!strcmp(out[k], path)) {
				bad = true;
				snprintf(why, wlen, "two tests are named %s",
					 esc(path));
			}
		out = xrealloc(out, (size_t)(*n + 2) * sizeof(*out));
		out[(*n)++] = xstrdup(path);
		out[*n] = NULL;
	}
	for (size_t i = 0; i < nu; i++)
		free(u[i].name);
	free(u);
	if (bad) {
		free_strings(out);
		*n = 0;
		return NULL;
	}
	return out;
}

/* The tests a harness's list option printed (NULL-terminated); why says
 * why not where a listing is refused. */
static char **harness_tests(enum harness h, char *buf, int *n, char *why,
			    size_t wlen)
{
	char **out = NULL, suite[512] = "";
	int rules = 0; /* doctest's rules of '=' met */

	if (h == HARNESS_BOOST)
		return boost_tests(buf, n, why, wlen);
	*n = 0;
	for (char *l = buf; *l;) {
		char *e = strchr(l, '\n');
		char name[1024] = "";

		if (e)
			*e = 0;
		size_t len = strlen(l);

		if (h == HARNESS_UNITTEST) {
			/* unittest_lister's lines among the program's */
			if (!strncmp(l, "ptloom-unittest: ", 17) && l[17])
				snprintf(name, sizeof(name), "%s", l + 17);
		} else if (h == HARNESS_PYTEST) {
			/* a node id a line ("file.py::test[param]"), then
			 * a blank line and "N tests collected" */
			if (!len)
				break;
			if (strstr(l, "::") && l[0] != ' ')
				snprintf(name, sizeof(name), "%s", l);
		} else if (h == HARNESS_RUST) {
			/* "NAME: test" (benchmarks are "NAME: benchmark") */
			if (len > 6 && !strcmp(l + len - 6, ": test"))
				snprintf(name, sizeof(name), "%.*s",
					 (int)(len - 6), l);
		} else if (h == HARNESS_GO) {
			/* a name a line; benchmarks run only with
			 * -test.bench, which is not split */
			if (len && !strchr(l, ' ') &&
			    strncmp(l, "Benchmark", 9))
				snprintf(name, sizeof(name), "%s", l);
		} else if (h == HARNESS_CATCH2) {
			/* a name a line (--list-test-names-only) */
			if (len)
				snprintf(name, sizeof(name), "%s", l);
		} else if (h == HARNESS_DOCTEST) {
			/* a name a line between two rules of '=', after
			 * "[doctest] listing all test case names" */
			if (!strncmp(l, "=====", 5))
				rules++;
			else if (rules == 1 && len)
				snprintf(name, sizeof(name), "%s", l);
		} else {
			/* "SUITE." then "  TEST", each maybe followed by
			 * "  # GetParam() = ..." */
			size_t w = strcspn(l, " \t#");

			if (l[0] != ' ' && w && l[w - 1] == '.')
				snprintf(suite, sizeof(suite), "%.*s", (int)w,
					 l);
			else if (l[0] != ' ')
				suite[0] = 0; /* gtest_main's own line */
			else if (l[0] == ' ' && suite[0]) {
				const char *t = l + strspn(l, " ");
				size_t tw = strcspn(t, " \t#");

				if (tw)
					snprintf(name, sizeof(name), "%s%.*s",
						 suite, (int)tw, t);
			}
		}
		if (name[0]) {
			out = xrealloc(out, (size_t)(*n + 2) * sizeof(*out));
			out[(*n)++] = xstrdup(name);
			out[*n] = NULL;
		}
		l = e ? e + 1 : l + len;
	}
	return out;
}

/*
 * Does each of unittest's tests run alone as its command line with "-k
 * *ID" in place of its own -k patterns?  The pattern matches the ids
 * that end with ID; so yes when, of the tests the command line without
 * its -k patterns lists, ID is the only one that ends so, and no test is
 * loaded whatever -k says (a test named on the command line, a suite
 * load_tests makes, doctests: listed with a -k that matches none).  Two
 * native listings (one where the command has no -k of its own); why says
 * why not.
 */
static bool unittest_narrows(const char *exe, char **argv, char **envp,
			     const char *cwd, char *const *tests, int ntests,
			     char *why, size_t wlen)
{
	const char *sel[2] = { "", UNITTEST_NONE };
	char **got[2] = { NULL, NULL };
	int n[2] = { 0, 0 };
	bool ok = true, same = true;
	/* without -k patterns of its own, the listing without them is the
	 * one made already */
	char **av0 = harness_argv(HARNESS_UNITTEST, exe, argv, "", true, why,
				  wlen);
	char **avu = harness_argv(HARNESS_UNITTEST, exe, argv, NULL, true, why,
				  wlen);

	for (int i = 0; same && av0 && avu && (av0[i] || avu[i]); i++)
		same = av0[i] && avu[i] && !strcmp(av0[i], avu[i]);
	same = same && av0 && avu;
	free_strings(av0);
	free_strings(avu);
	for (int s = same; s < 2 && ok; s++) {
		char **av = harness_argv(HARNESS_UNITTEST, exe, argv, sel[s],
					 true, why, wlen);
		int code = -1;
		char *buf = av ? native_listing_code(exe, av, envp, cwd, &code,
						     LIST_MAX)
			       : NULL;

		ok = buf && code == 0;
		if (ok)
			got[s] = harness_tests(HARNESS_UNITTEST, buf, &n[s],
					       why, wlen);
		else
			snprintf(why, wlen,
				 "its command line without its -k patterns "
				 "did not list its tests");
		free(buf);
		free_strings(av);
	}
	if (ok && n[1]) {
		ok = false;
		snprintf(why, wlen,
			 "its test %s is loaded whatever -k says (named on "
			 "its command line, or by a load_tests of its own)",
			 got[1][0]);
	}
	char *const *all = same ? tests : got[0];
	int nall = same ? ntests : n[0];

	for (int t = 0; ok && t < ntests; t++) {
		size_t lt = strlen(tests[t]);
		int m = 0;

		for (int i = 0; i < nall; i++) {
			size_t l = strlen(all[i]);

			m += l >= lt && !strcmp(all[i] + l - lt, tests[t]);
		}
		ok = m == 1 && !strpbrk(tests[t], "*?[");
		if (!ok)
			snprintf(why, wlen,
				 "its test %s is not the only one a -k "
				 "pattern ending with its id selects",
				 tests[t]);
	}
	free_strings(got[0]);
	free_strings(got[1]);
	return ok;
}

/*
 * P0, just exec'd as pid: if it is a harness whose command line runs two
 * tests or more, each test is a unit, explored as the harness running it
 * alone; and, since together in one process a test meets the threads and
 * the state of the others, one unit more is the tests together, which the
 * whole command's exploration covers (not split).  Returns whether it
 * split.
 */
static bool split_harness(struct suite *su, pid_t pid)
{
	char cwd[PATH_MAX], exe[PATH_MAX], why[512] = "";
	size_t la = 0, le = 0;

	if (!proc_link(pid, "exe", exe, sizeof(exe)))
		return false;
	char *cmd = tracer_proc_file(pid, "cmdline", &la);
	char **argv = cmd && la ? split_nul(cmd, la) : NULL;

	cwd[0] = 0;
	proc_link(pid, "cwd", cwd, sizeof(cwd));
	int h = pytest_start(exe, argv) ? HARNESS_PYTEST
		: cwd[0] && unittest_start(exe, argv, cwd)
			? HARNESS_UNITTEST
			: symbols_elf_naming(exe, harness_symbol, NSYMBOL);

	/* `go test` links its binaries stripped (-s -w): Go's own table of
	 * function names is still there */
	if (h < 0 && symbols_elf_section_has(exe, ".gopclntab",
					     harness_symbol[HARNESS_GO]) > 0)
		h = HARNESS_GO;

	free(cmd);
	if (h < 0) {
		free_strings(argv);
		return false;
	}
	char *env = tracer_proc_file(pid, "environ", &le);
	char **envp = env ? split_nul(env, le) : NULL;
	char **lav = argv && envp && cwd[0]
			     ? harness_argv(h, exe, argv, NULL, true, why,
					    sizeof(why))
			     : NULL;
	char **tests = NULL;
	int ntests = 0;
	bool whole = false;

	free(env);
	/* Boost.Test takes each parameter from the environment too (the
	 * command line's first): a selection there, or a listing */
	static const char *const boost_env[] = {
		"BOOST_TEST_RUN_FILTERS", "BOOST_TEST_LIST_CONTENT",
		"BOOST_TEST_LIST_LABELS", NULL,
	};
	for (int i = 0; lav && h == HARNESS_BOOST && boost_env[i]; i++)
		if (env_get(envp, boost_env[i])) {
			snprintf(why, sizeof(why), "its environment has %s",
				 boost_env[i]);
			free_strings(lav);
			lav = NULL;
		}
	if (lav) {
		int code = -1;
		char *buf = native_listing_code(exe, lav, envp, cwd, &code,
						LIST_MAX);

		/* Catch2 (2.x) ends its listing with the number of tests
		 * it listed as its exit status */
		if (buf && (code == 0 || (h == HARNESS_CATCH2 && code > 0)))
			tests = harness_tests(h, buf, &ntests, why,
					      sizeof(why));
		if (tests && h == HARNESS_CATCH2 && code != ntests % 256) {
			free_strings(tests);
			tests = NULL;
			ntests = 0;
		}
		if (!tests && !why[0])
			snprintf(why, sizeof(why),
				 "its list option (%s) did not end with "
				 "exit status %s within 30 s and 8 MiB",
				 harness_list[h],
				 h == HARNESS_CATCH2 ? "the number of tests "
						       "it listed"
						     : "0");
		free(buf);
	}
	/* the command line narrowed to a test must list just it: pytest's
	 * (a plugin's option with a value may look like a path: the first
	 * test is checked), Catch2's and doctest's (their names match
	 * without case, and with wildcards: each one is) */
	bool narrowed = h == HARNESS_PYTEST || h == HARNESS_CATCH2 ||
			h == HARNESS_DOCTEST;

	for (int t = 0; narrowed && t < ntests &&
			(t == 0 || h != HARNESS_PYTEST) && !cli_interrupted;
	     t++) {
		char **one = harness_argv(h, exe, argv, tests[t], true, why,
					  sizeof(why));
		int n1 = 0, code = -1;
		char **got = NULL;

		if (one) {
			char *buf = native_listing_code(exe, one, envp, cwd,
							&code, LIST_MAX);

			if (buf && (code == 0 ||
				    (h == HARNESS_CATCH2 && code == 1)))
				got = harness_tests(h, buf, &n1, why,
						    sizeof(why));
			free(buf);
		}
		if (n1 != 1 || strcmp(got[0], tests[t])) {
			snprintf(why, sizeof(why),
				 "its command line narrowed to %s %s %d "
				 "tests, not that one",
				 tests[t],
				 h == HARNESS_PYTEST ? "collected" : "listed",
				 n1);
			free_strings(tests);
			tests = NULL;
			ntests = 0;
		}
		free_strings(one);
		free_strings(got);
	}
	if (h == HARNESS_UNITTEST && ntests >= 2 &&
	    !unittest_narrows(exe, argv, envp, cwd, tests, ntests, why,
			      sizeof(why))) {
		free_strings(tests);
		tests = NULL;
		ntests = 0;
	}
	/* tests the program lists but does not run: libtest's #[ignore]d
	 * ones (without --ignored or --include-ignored: listed apart with
	 * --ignored), GoogleTest's DISABLED_ ones (without
	 * --gtest_also_run_disabled_tests); each would pass, running
	 * nothing */
	if (ntests >= 2 && (h == HARNESS_RUST || h == HARNESS_GTEST)) {
		bool all = false;
		char **skip = NULL;
		int nskip = 0;

		for (int i = 1; argv[i]; i++)
			all |= !strcmp(argv[i], "--ignored") ||
			       !strcmp(argv[i], "--include-ignored") ||
			       !strncmp(argv[i],
					"--gtest_also_run_disabled_tests", 31);
		if (!all && h == HARNESS_RUST) {
			int c = count(lav);
			char **iav = xrealloc(NULL,
					      (size_t)(c + 2) * sizeof(*iav));

			for (int i = 0; i < c; i++)
				iav[i] = xstrdup(lav[i]);
			iav[c] = xstrdup("--ignored");
			iav[c + 1] = NULL;
			char *buf = native_listing(exe, iav, envp, cwd, &whole,
						 LIST_MAX);

			if (buf && whole)
				skip = harness_tests(h, buf, &nskip, why,
						     sizeof(why));
			free(buf);
			free_strings(iav);
		}
		int k = 0;

		for (int t = 0; t < ntests; t++) {
			bool drop = !all && h == HARNESS_GTEST &&
				    (!strncmp(tests[t], "DISABLED_", 9) ||
				     strstr(tests[t], ".DISABLED_") ||
				     strstr(tests[t], "/DISABLED_"));

			for (int i = 0; i < nskip && !drop; i++)
				drop = !strcmp(skip[i], tests[t]);
			if (drop)
				free(tests[t]);
			else
				tests[k++] = tests[t];
		}
		tests[k] = NULL;
		ntests = k;
		free_strings(skip);
	}
	if (su->verbose && (!lav || ntests < 2))
		printf("ptloom: %s: a test program of %s, not split: %s\n",
		       esc(exe), harness_name[h],
		       why[0] ? why
		       : ntests ? "it runs one test"
				: "it lists no test");
	if (ntests < 2) {
		free_strings(lav);
		free_strings(tests);
		free_strings(argv);
		free_strings(envp);
		return false;
	}
	bool mod = false;
	int prog = h == HARNESS_UNITTEST ? python_program(exe, argv, &mod) : 0;
	/* (unittest's: its script's name, or unittest for -m) */
	const char *base = h == HARNESS_PYTEST ? "pytest"
			   : prog && !mod      ? base_of(argv[prog])
			   : prog	       ? "unittest"
					       : base_of(exe);

	for (int t = 0; t < ntests; t++) {
		char **av = harness_argv(h, exe, argv, tests[t], false, why,
					 sizeof(why));
		if (!av)
			continue;
		struct unit *u = test_unit(su, av, NULL, envp, cwd);

		snprintf(u->name, sizeof(u->name), "%s", tests[t]);
		u->split = true;
		u->per_test = true;
		snprintf(u->rule, sizeof(u->rule),
			 "split as one of the %d " IN_PROCESS_RULE " (%s): "
			 "explored as the program running it alone (`%s`)",
			 ntests, harness_name[h], esc(u->cmdline));
		if (!su->counting)
			explore_unit(su, &su->units[su->nunits - 1]);
	}
	/* the tests together: the whole command's exploration */
	struct unit *u = test_unit(su, NULL, argv, NULL, cwd);

	u->together = true;
	snprintf(u->name, sizeof(u->name), "%s: its %d tests together", base,
		 ntests);
	snprintf(u->rule, sizeof(u->rule),
		 "not split: %s runs its %d tests in one process, where a "
		 "test meets the threads and the state the others leave; "
		 "each was explored alone, and the whole command covers "
		 "them together",
		 harness_name[h], ntests);
	free_strings(lav);
	free_strings(tests);
	free_strings(argv);
	free_strings(envp);
	return true;
}

/*
 * A compiler a test runner starts to build the tests (`go test`'s compile,
 * link and vet, cargo's rustc) is no test: its processes are the
 * runner's, run once on the default schedule, never explored (a package's
 * build is dozens of them, each multithreaded).  The toolchain's name, or
 * NULL.
 */
static const char *build_tool(pid_t pid, char *tool, size_t len)
{
	char exe[PATH_MAX];

	if (!proc_link(pid, "exe", exe, sizeof(exe)))
		return NULL;
	const char *b = base_of(exe);
	static const char *const go_tools[] = {
		"compile", "link", "vet", "asm", "cgo", "buildid", "pack",
		"cover", NULL,
	};

	snprintf(tool, len, "%s", b);
	/* GOROOT/pkg/tool/GOOS_GOARCH/NAME */
	if (strstr(exe, "/pkg/tool/"))
		for (int i = 0; go_tools[i]; i++)
			if (!strcmp(b, go_tools[i]))
				return "Go's toolchain";
	if (!strcmp(b, "rustc"))
		return "Rust's compiler";
	return NULL;
}

static bool on_exec(void *ctx, int pidx, int ppidx, pid_t pid, int thread)
{
	struct suite *su = ctx;
	struct sproc *p = sproc(su, pidx);
	size_t la = 0, le = 0;

	(void)ppidx;
	/* a test below a test (a runner's): its failing schedule from here */
	through_exec(su->thr, pidx, pid, thread);
	p->pid = pid;
	p->exec_seen = true;
	if (pidx == 0 && !su->root_ctx[0])
		exec_state(pid, su->root_ctx, sizeof(su->root_ctx),
			   &su->root_ign, &su->root_blk);
	/* the command is a test program with tests of its own */
	if (pidx == 0 && !su->harness_split && !cli_interrupted)
		su->harness_split = split_harness(su, pid);
	if (pidx == 0 || p->unit >= 0 || p->worker || cli_interrupted)
		return false; /* the command itself, or inside a test */
	if (runner_worker(pid, sproc(su, p->parent))) {
		/* a fork-per-test runner's worker: its tests are units */
		p->worker = true;
		split_runner(su, p->parent, pidx);
		return false;
	}
	char tool[256];
	const char *chain = build_tool(pid, tool, sizeof(tool));

	if (chain) {
		/* the runner's, with what it starts */
		p->worker = true;
		if (su->verbose && !su->counting)
			printf("ptloom: P%d %s: not a test: a build step (%s), "
			       "run once as the runner's\n",
			       pidx, esc(tool), chain);
		return false;
	}
	char *cmd = tracer_proc_file(pid, "cmdline", &la);
	char *env = tracer_proc_file(pid, "environ", &le);
	char *cwd = NULL, link[PATH_MAX];
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = 0;
		cwd = xstrdup(link);
	}
	su->units = xrealloc(su->units,
			     (size_t)(su->nunits + 1) * sizeof(*su->units));
	struct unit *u = &su->units[su->nunits];

	memset(u, 0, sizeof(*u));
	u->pidx = pidx;
	u->pid = pid;
	u->thread = thread;
	u->start = p->born ? p->born : ++su->seq;
	u->argv = cmd && la ? split_nul(cmd, la) : NULL;
	u->envp = env ? split_nul(env, le) : NULL;
	u->cwd = cwd ? cwd : xstrdup("/");
	free(cmd);
	free(env);
	if (!u->argv || !u->argv[0] || !u->envp) {
		snprintf(u->rule, sizeof(u->rule),
			 "not split: its command line or environment was "
			 "unreadable");
		u->cmdline = xstrdup("?");
		snprintf(u->name, sizeof(u->name), "P%d", pidx);
	} else {
		char q[4096];

		/* an argv[0] no search finds (BoxFort's "boxfort-worker"):
		 * the executable itself */
		if (!resolvable(u->argv[0], u->cwd, env_get(u->envp, "PATH"))) {
			snprintf(path, sizeof(path), "/proc/%d/exe", pid);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0) {
				link[n] = 0;
				free(u->argv[0]);
				u->argv[0] = xstrdup(link);
			}
		}
		shell_join(q, sizeof(q), u->argv, count(u->argv));
		u->cmdline = xstrdup(q);
		unit_name(u);
		char why[1024];

		char st[512];
		uint64_t ign = 0, blk = 0;

		u->ninh = inherited(pid, u->inh, 16, why, sizeof(why));
		exec_state(pid, st, sizeof(st), &ign, &blk);
		uint64_t diff = (ign ^ su->root_ign) | (blk ^ su->root_blk);

		u->sigdiff = diff;
		if (!why[0] && strcmp(st, su->root_ctx))
			snprintf(why, sizeof(why),
				 "it inherits another umask or other limits "
				 "than a fresh start gives (%s; fresh: %s)",
				 st, su->root_ctx);
		else if (!why[0] && (diff & ~EXTERNAL_SIGNALS))
			snprintf(why, sizeof(why),
				 "it inherits other ignored or blocked "
				 "signals than a fresh start gives (ignored "
				 "%#llx, blocked %#llx; fresh: %#llx, %#llx), "
				 "some of which its own actions raise",
				 (unsigned long long)ign,
				 (unsigned long long)blk,
				 (unsigned long long)su->root_ign,
				 (unsigned long long)su->root_blk);
		if (why[0]) {
			snprintf(u->rule, sizeof(u->rule), "not split: %s",
				 why);
		} else {
			u->split = true;
			snprintf(u->rule, sizeof(u->rule),
				 "split at its exec (P%d, child of P%d)",
				 pidx, p->parent);
		}
	}
	p->unit = su->nunits++;
	if (!u->split || su->counting)
		return false;
	if (su->njobs_max > 1) {
		/* -j: explored while the suite goes on, the test held at its
		 * exec until then (so that its one run in the suite comes
		 * after its exploration, as serially) */
		while (su->njobs >= su->njobs_max && !cli_interrupted)
			reap_jobs(su, true);
		struct job *j = &su->jobs_[su->njobs];

		nested_start(su, u, u->argv, u->envp, u->cwd, false, j);
		if (j->pid && j->pidfd >= 0) {
			su->njobs++;
			return true;
		}
		if (j->pid) {
			/* no pidfd: serially */
			int st = 0;

			while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR)
				;
			nested_finish(su, j, st);
		}
	} else {
		nested(su, u, u->argv, u->envp, u->cwd, false);
	}
	follow_failures(su, u);
	u->explored = true;
	for (int i = 0; i < u->ntests; i++)
		print_test(su, &u->tests[i]);
	return false;
}

/* A test ends for its siblings when its parent's wait returns it: a
 * sibling started before that ran alongside it (natively they may
 * overlap even where ptloom's one schedule ran them one after the
 * other). */
static void on_reaped(void *ctx, int pidx)
{
	struct suite *su = ctx;
	struct sproc *p = sproc(su, pidx);

	if (p->unit >= 0 && su->units[p->unit].pidx == pidx) {
		su->units[p->unit].end = ++su->seq;
		su->units[p->unit].ended = true;
	}
}

static void on_io(void *ctx, int pidx, pid_t pid, int fd, bool write)
{
	struct suite *su = ctx;
	struct sproc *p = sproc(su, pidx);
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (stat(path, &sb) || S_ISCHR(sb.st_mode))
		return; /* a terminal, /dev/null: nobody's state */
	if (S_ISSOCK(sb.st_mode)) {
		/* a connection is one object: its two ends are two sockets,
		 * named here by the smaller inode (a test that talks to
		 * another test's server shares state with it) */
		long peer = fdext_socket_peer(pid, fd);

		if (peer > 0 && (ino_t)peer < sb.st_ino)
			sb.st_ino = (ino_t)peer;
	}
	/* one entry per (object, unit, direction) and latest time */
	for (size_t i = su->nacc; i-- > 0;) {
		struct access *a = &su->acc[i];

		if (a->dev == sb.st_dev && a->ino == sb.st_ino &&
		    a->unit == p->unit && a->write == write) {
			a->last = ++su->seq;
			return;
		}
	}
	if (su->nacc == su->capacc) {
		su->capacc = su->capacc ? 2 * su->capacc : 64;
		su->acc = xrealloc(su->acc, su->capacc * sizeof(*su->acc));
	}
	char link[PATH_MAX];
	ssize_t n = readlink(path, link, sizeof(link) - 1);

	link[n > 0 ? n : 0] = 0;
	su->seq++;
	su->acc[su->nacc++] = (struct access){ sb.st_dev, sb.st_ino, p->unit,
					       write, su->seq, su->seq,
					       xstrdup(link) };
}

static void on_kill(void *ctx, int pidx, pid_t target, bool tid)
{
	struct suite *su = ctx;
	struct sproc *p = sproc(su, pidx);

	(void)tid;
	if (target <= 0)
		return;
	for (int i = 0; i < su->nunits; i++) {
		struct unit *u = &su->units[i];

		/* the runner's signals are its business (a timeout's
		 * kill), unless the test ignores or blocks some unlike a
		 * fresh start */
		if (u->pid == target && i != p->unit && u->split &&
		    (p->unit >= 0 || u->sigdiff) && !u->ended) {
			u->split = false;
			snprintf(u->rule, sizeof(u->rule),
				 "not split: %s%s signals it while it runs",
				 p->unit >= 0 ? "test " : "the runner",
				 p->unit >= 0 ? su->units[p->unit].name : "");
		}
	}
}

/* Did [a, b] meet u's time (its fork to its reap)? */
static bool during(const struct unit *u, uint64_t a, uint64_t b)
{
	return b >= u->start && (!u->ended || a <= u->end);
}

/* The rule at the end: objects shared with others while it ran. */
static void shared_check(struct suite *su)
{
	for (int i = 0; i < su->nunits; i++) {
		struct unit *u = &su->units[i];

		if (!u->split)
			continue;
		size_t l = strlen(u->rule);

		snprintf(u->rule + l, sizeof(u->rule) - l,
			 "; it used no descriptor it inherited but 0-2, and "
			 "shared no file, pipe or signal with another test or "
			 "the runner while it ran");
		for (size_t a = 0; a < su->nacc && u->split; a++) {
			const struct access *x = &su->acc[a];

			for (int k = 0; x->unit == i && k < u->ninh; k++)
				if (u->inh[k].dev == x->dev &&
				    u->inh[k].ino == x->ino) {
					u->split = false;
					snprintf(u->rule, sizeof(u->rule),
						 "not split: it %s descriptor "
						 "%d (%s), inherited from its "
						 "parent (a fresh start has "
						 "only 0, 1 and 2)",
						 x->write ? "writes"
							  : "reads",
						 u->inh[k].fd, u->inh[k].name);
					break;
				}
		}
		for (size_t a = 0; a < su->nacc && u->split; a++) {
			const struct access *x = &su->acc[a];

			if (x->unit != i)
				continue;
			for (size_t b = 0; b < su->nacc; b++) {
				const struct access *y = &su->acc[b];

				if (y->unit == i || y->dev != x->dev ||
				    y->ino != x->ino)
					continue;
				/* data flows into u, or from u into another
				 * test (a runner reading u's output is the
				 * runner's business) */
				bool in = !x->write && y->write;
				bool out = x->write && !y->write && y->unit >= 0;

				if (!in && !out)
					continue;
				/* both while u ran: another test whose time
				 * overlaps u's, or the runner during u */
				bool overlap;

				if (y->unit >= 0) {
					const struct unit *v =
						&su->units[y->unit];

					overlap = during(u, v->start,
							 v->ended ? v->end
								  : UINT64_MAX);
				} else {
					overlap = during(u, y->first, y->last);
				}
				if (!overlap)
					continue;
				const char *obj = x->name;

				u->split = false;
				snprintf(u->rule, sizeof(u->rule),
					 "not split: it %s %s that %s %s while "
					 "both run",
					 x->write ? "writes" : "reads", obj,
					 y->unit >= 0 ? su->units[y->unit].name
						      : "the runner",
					 y->write ? "writes" : "reads");
				break;
			}
		}
	}
}

/* ---- the suite's verdict and reports ---- */

static int verdict_rank(const char *v)
{
	if (!strcmp(v, "fail"))
		return 2;
	if (!strcmp(v, "pass"))
		return 0;
	return 1;
}

/* --suite-time: the command's tests, counted in one run on the default
 * schedule without exploring them. */
static int count_tests(const struct program *prog,
		       const struct common_opts *co, struct session_config *cfg,
		       struct proc_watch *w)
{
	struct suite d = { 0 };
	struct run_result res;
	struct strategy st;

	d.prog = prog;
	d.co = co;
	d.counting = true;
	d.njobs_max = 1;
	d.thr = through_new();
	if (!d.thr)
		return 0;
	st = through_strategy(d.thr);
	w->ctx = &d;
	cfg->pass_output = false;
	sproc(&d, 0);
	memset(&res, 0, sizeof(res));
	int n = session_run(cfg, &st, &res) == 0 ? d.nunits : 0;

	run_result_free(&res);
	for (int i = 0; i < d.nunits; i++) {
		free_strings(d.units[i].argv);
		free_strings(d.units[i].envp);
		free(d.units[i].cwd);
		free(d.units[i].cmdline);
	}
	free(d.units);
	free(d.procs);
	for (size_t i = 0; i < d.nacc; i++)
		free(d.acc[i].name);
	free(d.acc);
	through_free(d.thr);
	return n;
}

int suite_run(const struct program *prog, const struct common_opts *co,
	      struct session_config *base, char *const *fwd, int nfwd,
	      bool verbose, int jobs, int bound, double suite_time,
	      double max_time, int *code)
{
	struct suite su = { 0 };
	struct proc_watch w = {
		.ctx = &su,
		.fork = on_fork,
		.exec = on_exec,
		.thread = on_thread,
		.died = on_died,
		.points = on_points,
		.reaped = on_reaped,
		.held = on_held,
		.io = on_io,
		.kill = on_kill,
	};
	struct session_config cfg = *base;
	struct strategy st;
	struct run_result res;
	ssize_t n;

	su.prog = prog;
	su.co = co;
	su.fwd = fwd;
	su.nfwd = nfwd;
	su.verbose = verbose;
	su.njobs_max = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
	su.cpus = base->cpus;
	n = readlink("/proc/self/exe", su.self, sizeof(su.self) - 1);
	su.self[n > 0 ? n : 0] = 0;
	if (mkdir(co->out_dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "ptloom: cannot make %s: %s\n", co->out_dir,
			strerror(errno));
		*code = EXIT_USAGE;
		return 1;
	}
	if (!realpath(co->out_dir, su.out_dir))
		snprintf(su.out_dir, sizeof(su.out_dir), "%s", co->out_dir);
	su.thr = through_new();
	if (!su.thr) {
		fprintf(stderr, "ptloom: out of memory\n");
		*code = EXIT_USAGE;
		return 1;
	}
	st = through_strategy(su.thr);
	cfg.watch = &w;
	cfg.checkpoint = NULL;
	cfg.observer = NULL;
	cfg.points &= ~POINTS_RACES;
	cfg.symbolize_trace = true;
	/* --output: the runner's own output, as it would print it */
	cfg.pass_output = co->output;
	if (suite_time > 0) {
		struct session_config c2 = cfg;

		su.t0 = cli_wall();
		su.budget = suite_time;
		su.max_time = max_time;
		c2.symbolize_trace = false;
		su.expected = count_tests(prog, co, &c2, &w);
		w.ctx = &su;
		if (cli_interrupted) {
			through_free(su.thr);
			*code = exit_interrupted();
			return 1;
		}
	}
	sproc(&su, 0);

	memset(&res, 0, sizeof(res));
	int e = session_run(&cfg, &st, &res);

	/* explorations still under way (the suite's run ended first) */
	while (su.njobs)
		reap_jobs(&su, true);
	if (e == 0)
		shared_check(&su);
	/* the failing tests as the runner ran them */
	for (int i = 0; i < su.nunits; i++)
		for (int k = 0; k < su.units[i].ntests; k++) {
			struct test *t = &su.units[i].tests[k];
			struct through_result tr;

			if (!t->target)
				continue;
			through_result(su.thr, t->target - 1, &tr);
			t->in_runner = xstrdup(tr.what);
			if (!co->quiet)
				printf("in the runner's run: %s: %s\n",
				       esc(t->name ? t->name : "?"),
				       esc(tr.what));
		}
	int rexit = -1;

	if (e == 0 && (res.failure == FAIL_NONE || res.failure == FAIL_EXIT))
		rexit = res.exit_status;
	else if (e == 0 && res.failure == FAIL_CRASH)
		rexit = 128 + res.signal;

	for (int i = 0; su.verbose && i < su.nunits; i++)
		printf("ptloom: %s: %s\n", esc(su.units[i].name),
		       esc(su.units[i].rule));
	if (!su.nunits) {
		run_result_free(&res);
		free(su.procs);
		free(su.acc);
		through_free(su.thr);
		return 0; /* one program: explored as usual */
	}
	if (!co->quiet && rexit >= 0)
		printf("runner: %s %s %d\n", esc(prog->display),
		       res.failure == FAIL_CRASH ? "was killed by signal"
						 : "exited with status",
		       res.failure == FAIL_CRASH ? rexit - 128 : rexit);
	else if (!co->quiet && e == 0)
		printf("runner: %s did not end: %s (the tests it had not "
		       "started yet were not run)\n",
		       esc(prog->display), failure_kind_name(res.failure));
	/* tests not split: the whole command, as one program */
	int joined = 0;

	for (int i = 0; i < su.nunits; i++)
		joined += !su.units[i].split;
	struct unit whole = { 0 };

	if (joined && !cli_interrupted) {
		char q[4096];

		shell_join(q, sizeof(q), prog->argv, prog->argc);
		whole.cmdline = xstrdup(q);
		snprintf(whole.name, sizeof(whole.name), "%s", q);
		whole.cwd = NULL;
		nested(&su, &whole, prog->argv, prog->envp, NULL, true);
	}
	/* the tests, in the order they started */
	struct report_test *rt = NULL;
	int nrt = 0, worst = 0, failed = 0, incomplete = 0;

	for (int i = 0; i < su.nunits; i++) {
		struct unit *u = &su.units[i];

		if (!u->split) {
			/* an explored one withdrawn at the end, or one never
			 * split: the whole command's verdict, and why */
			const struct test *wt = whole.ntests ? &whole.tests[0]
							     : NULL;
			for (int k = 0; k < u->ntests; k++) {
				free(u->tests[k].summary);
				free(u->tests[k].replay);
				free(u->tests[k].schedule);
				free(u->tests[k].in_runner);
				u->tests[k].in_runner = NULL;
			}
			if (!u->tests) {
				u->tests = xrealloc(NULL, sizeof(*u->tests));
				memset(u->tests, 0, sizeof(*u->tests));
				u->tests[0].name = xstrdup(u->name);
				u->tests[0].command = xstrdup(u->cmdline);
				u->tests[0].cwd = xstrdup(u->cwd);
			}
			u->ntests = 1;
			struct test *t = &u->tests[0];
			char s[2048];

			free(t->verdict);
			free(t->rule);
			free(t->name);
			free(t->command);
			t->name = xstrdup(u->name);
			t->command = xstrdup(u->cmdline);
			t->rule = xstrdup(u->rule);
			/* the whole command's pass covers the test; its
			 * failure may be another test's or the runner's: that
			 * is the "whole command" test's verdict, and this one
			 * is not covered */
			bool wfail = wt && !strcmp(wt->verdict, "fail") &&
				     !u->together;

			t->verdict = xstrdup(wt && !wfail ? wt->verdict
							  : "incomplete");
			if (wfail)
				snprintf(s, sizeof(s),
					 "ptloom: INCOMPLETE not covered on "
					 "its own: the whole command, explored "
					 "instead, failed (see \"whole "
					 "command\") (%s)",
					 u->rule);
			else
				snprintf(s, sizeof(s),
					 "%s (%s; explored with the whole "
					 "command)",
					 wt ? wt->summary
					    : "ptloom: INCOMPLETE not explored",
					 u->rule);
			t->summary = xstrdup(s);
			t->replay = wt && !wfail && wt->replay
					    ? xstrdup(wt->replay)
					    : NULL;
			t->schedule = wt && !wfail && wt->schedule
					      ? xstrdup(wt->schedule)
					      : NULL;
			t->runs = wt && !wfail ? wt->runs : 0;
			t->seconds = wt && !wfail ? wt->seconds : 0;
			if (wt && !wfail) {
				t->message = wt->message ? xstrdup(wt->message)
							 : NULL;
				t->kind = wt->kind ? xstrdup(wt->kind) : NULL;
				t->location = wt->location
						      ? xstrdup(wt->location)
						      : NULL;
				t->output = wt->output ? xstrdup(wt->output)
						       : NULL;
			}
			print_test(&su, t);
		}
		for (int k = 0; k < u->ntests; k++) {
			struct test *t = &u->tests[k];

			rt = xrealloc(rt, (size_t)(nrt + 1) * sizeof(*rt));
			rt[nrt++] = report_of(t);
			int r = verdict_rank(t->verdict);

			failed += r == 2;
			incomplete += r == 1;
			if (r > worst)
				worst = r;
		}
	}
	/* the whole command's failure, explored for tests not split (a
	 * harness's tests together have it as their own) */
	bool others = false;

	for (int i = 0; i < su.nunits; i++)
		others |= !su.units[i].split && !su.units[i].together;
	if (others && whole.ntests &&
	    !strcmp(whole.tests[0].verdict, "fail")) {
		struct test *t = &whole.tests[0];

		free(t->name);
		t->name = xstrdup("whole command");
		free(t->command);
		t->command = xstrdup(whole.cmdline);
		free(t->rule);
		t->rule = xstrdup("explored as one program because tests of "
				  "it were not split");
		rt = xrealloc(rt, (size_t)(nrt + 1) * sizeof(*rt));
		rt[nrt] = report_of(t);
		rt[nrt++].cwd = NULL; /* the whole command: no test directory */
		print_test(&su, t);
		failed++;
		worst = 2;
	}
	/* the runner's own run */
	char rsum[2048], rdesc[700];
	char *rsched = NULL;

	rsum[0] = 0;
	if (e) {
		snprintf(rsum, sizeof(rsum),
			 "ptloom: INCOMPLETE the command could not be run: %s",
			 strerror(-e));
	} else if (res.failure == FAIL_EXIT || res.failure == FAIL_CRASH ||
		   res.failure == FAIL_DEADLOCK || res.failure == FAIL_HANG ||
		   res.failure == FAIL_LIVELOCK) {
		/* a test's failing schedule followed in it: the runner's
		 * failure may be that test's, whose verdict is no FAIL any
		 * more (withdrawn: not split) */
		bool followed = false;

		for (int i = 0; i < through_count(su.thr); i++) {
			struct through_result tr;

			through_result(su.thr, i, &tr);
			followed |= tr.found;
		}
		if (!failed && followed) {
			describe_failure(&res, rdesc, sizeof(rdesc));
			snprintf(rsum, sizeof(rsum),
				 "ptloom: INCOMPLETE %s in the runner's own "
				 "run, which ran a test on that test's failing "
				 "schedule: not the runner's own failure",
				 rdesc);
		} else if (!failed) {
			describe_failure(&res, rdesc, sizeof(rdesc));
			snprintf(rsum, sizeof(rsum),
				 "ptloom: FAIL %s in the runner's own run "
				 "(its tests passed alone)",
				 rdesc);
		}
	} else if (res.failure != FAIL_NONE) {
		describe_failure(&res, rdesc, sizeof(rdesc));
		snprintf(rsum, sizeof(rsum),
			 "ptloom: INCOMPLETE the runner's own run: %s", rdesc);
	}
	char rreplay[8192] = "";

	if (rsum[0]) {
		bool fail = !strncmp(rsum, "ptloom: FAIL", 12);
		char path[PATH_MAX + 64] = "";

		if (fail) {
			struct schedule sch;
			char id[32];

			snprintf(id, sizeof(id), "%06llx",
				 (unsigned long long)(res.trace_hash &
						      0xffffff));
			schedule_from_run(&sch, prog, co, "dfs", 0, &res);
			if (save_schedule(&sch, co->out_dir, id, "runner",
					  path, sizeof(path)) == 0) {
				char q[4096];

				rsched = xstrdup(path);
				shell_join(q, sizeof(q), prog->argv,
					   prog->argc);
				snprintf(rreplay, sizeof(rreplay),
					 "ptloom replay %s -- %s", path, q);
			}
			schedule_free(&sch);
		}
		rt = xrealloc(rt, (size_t)(nrt + 1) * sizeof(*rt));
		rt[nrt++] = (struct report_test){
			.name = "runner",
			.verdict = fail ? "fail" : "incomplete",
			.summary = rsum,
			.command = prog->display,
			.rule = "the command's own processes, run once",
			.replay_command = rreplay[0] ? rreplay : NULL,
			.schedule_file = rsched,
			.message = res.message[0] ? res.message : NULL,
			.location = res.location[0] ? res.location : NULL,
			.runs = 1,
			.seconds = res.seconds,
		};
		struct test shown = { .name = "runner", .summary = rsum,
				      .replay = rreplay[0] ? rreplay : NULL };

		print_test(&su, &shown);
		if (fail) {
			failed++;
			worst = 2;
		} else {
			incomplete++;
			if (worst < 1)
				worst = 1;
		}
	}
	char summary[2048];
	uint64_t runs = 1;
	double secs = res.seconds;

	for (int i = 0; i < nrt; i++) {
		runs += rt[i].runs;
		secs += rt[i].seconds;
	}
	if (cli_interrupted) {
		snprintf(summary, sizeof(summary),
			 "ptloom: INTERRUPTED by %s after %d test%s%s",
			 signal_name(cli_interrupted), nrt, nrt == 1 ? "" : "s",
			 failed ? "; a failure was found" : "");
		*code = exit_interrupted();
	} else if (worst == 2) {
		char names[1024] = "";

		for (int i = 0; i < nrt; i++)
			if (verdict_rank(rt[i].verdict) == 2 &&
			    strlen(names) + strlen(rt[i].name) + 3 <
				    sizeof(names)) {
				if (names[0])
					strcat(names, ", ");
				strcat(names, rt[i].name);
			}
		char rest[96] = "";
		int passed = nrt - failed - incomplete, k = 0;

		/* what the others did: a limit is not a pass */
		if (incomplete)
			k = snprintf(rest, sizeof(rest),
				     "; %d not covered (a limit)", incomplete);
		if (passed)
			snprintf(rest + k, sizeof(rest) - (size_t)k,
				 "%s %d passed", k ? "," : ";", passed);
		snprintf(summary, sizeof(summary),
			 "ptloom: FAIL %d of %d test%s failed (%s)%s", failed,
			 nrt, nrt == 1 ? "" : "s", esc(names), rest);
		*code = EXIT_FAIL;
	} else if (worst == 1) {
		snprintf(summary, sizeof(summary),
			 "ptloom: INCOMPLETE %d of %d test%s not covered, %d "
			 "passed (a limit is not a pass)",
			 incomplete, nrt, nrt == 1 ? "" : "s",
			 nrt - incomplete);
		*code = EXIT_INCOMPLETE;
	} else {
		if (joined)
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %d test%s, %d explored on its "
				 "own, %d with the whole command (not split)",
				 nrt, nrt == 1 ? "" : "s", nrt - joined,
				 joined);
		else
			snprintf(summary, sizeof(summary),
				 "ptloom: PASS %d test%s, each explored on its "
				 "own",
				 nrt, nrt == 1 ? "" : "s");
		*code = EXIT_PASS;
	}
	printf("%s\n", summary);
	struct report rep = {
		.command = "run",
		.verdict = worst == 2 ? "fail" : worst == 1 ? "incomplete"
							    : "pass",
		.strategy = "per-test",
		.runs = runs,
		.complete = worst == 0,
		.preemption_bound = bound,
		.seed = co->seed,
		.seconds = secs,
		.summary = summary,
		.interrupted = cli_interrupted != 0,
		.exit_status = -1,
		.thread = -1,
		.diverged_at = -1,
		.program = prog->display,
		.tests = rt,
		.ntests = nrt,
		.runner_command = prog->display,
		.runner_exit = rexit,
		.runner_output = e == 0 ? res.output : NULL,
	};

	if (co->report && report_write(&rep, co->report_format, co->report))
		fprintf(stderr, "ptloom: cannot write %s\n", co->report);
	github_report(&rep);
	free(rt);
	free(rsched);
	run_result_free(&res);
	/* the units' memory goes with the process (cmd_run returns to
	 * exit) */
	free(su.procs);
	free(su.acc);
	through_free(su.thr);
	return 1;
}
