/* The helpers of common.h. */
#include "common.h"

int slowdown(void)
{
	const char *s = getenv("PTLOOM_TEST_SLOWDOWN");
	int n = s ? atoi(s) : 1;

	return n > 0 && n < 100 ? n : 1;
}

bool sanitized_run(void)
{
	const char *s = getenv("PTLOOM_TEST_SANITIZED");

	return s && !strcmp(s, "1");
}

/* --- environment -------------------------------------------------------- */

const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

const char *ptloom(void)
{
	return env_or("PTLOOM", "build/ptloom");
}

/* A built program: a target (tests/targets) or an example. */
const char *prog(const char *dir_env, const char *dflt,
			const char *name)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *p = buf[k++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", env_or(dir_env, dflt), name);
	cr_assert(access(p, X_OK) == 0, "%s is not built", p);
	return p;
}

const char *target(const char *name)
{
	return prog("PTLOOM_TARGETS", "build/tests", name);
}

const char *example(const char *name)
{
	return prog("PTLOOM_EXAMPLES", "build/examples", name);
}

/* --- the per-test directory ---------------------------------------------- */

char tmp[PATH_MAX];

char *in_tmp(const char *name)
{
	static char buf[8][2 * PATH_MAX];
	static int k;
	char *p = buf[k++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmp, name);
	return p;
}

int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/ptloom-cli-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	/* orphaned tracees come to us, not to init: see check_leftovers */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void teardown(void)
{
	if (tmp[0] && !getenv("PTLOOM_KEEP_TMP"))
		nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void res_free(struct res *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void append(char **buf, size_t *len, size_t *cap, const char *d,
		   size_t n)
{
	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		*buf = realloc(*buf, *cap);
		cr_assert_not_null(*buf);
	}
	memcpy(*buf + *len, d, n);
	*len += n;
	(*buf)[*len] = 0;
}

/* Our children other than the one we ran: orphans reparented to us. */
int leftovers(char *names, size_t len)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	size_t k = 0;

	names[0] = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], buf[512];
		int pid = atoi(e->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		FILE *f = fopen(path, "r");

		if (!f)
			continue;
		size_t m = fread(buf, 1, sizeof(buf) - 1, f);

		fclose(f);
		buf[m] = 0;
		/* pid (comm) state ppid ... ; comm may hold spaces */
		char *rp = strrchr(buf, ')'), *lp = strchr(buf, '(');
		char state;
		int ppid;

		if (!rp || !lp ||
		    sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
			continue;
		if (ppid != getpid() || state == 'Z')
			continue;
		*rp = 0;
		k += (size_t)snprintf(names + k, len > k ? len - k : 0,
				      "%s%d %s (state %c)", n ? ", " : "",
				      pid, lp + 1, state);
		n++;
	}
	closedir(d);
	return n;
}

/* After a command: nothing it started may be left, stopped or running. */
void check_leftovers(const char *cmd)
{
	char names[2048];
	int n = 0;

	for (int i = 0; i < 100; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		n = leftovers(names, sizeof(names));
		if (!n)
			return;
		usleep(30000);
	}
	/* kill them so the next test starts clean, then fail */
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		int pid = atoi(e->d_name);
		char path[300];
		FILE *f;
		int ppid = 0;
		char state;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (!(f = fopen(path, "r")))
			continue;
		char buf[512];
		size_t m = fread(buf, 1, sizeof(buf) - 1, f);

		fclose(f);
		buf[m] = 0;
		char *rp = strrchr(buf, ')');

		if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 &&
		    ppid == getpid())
			kill(pid, SIGKILL);
	}
	if (d)
		closedir(d);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	cr_assert_fail("`%s` left %d process%s behind: %s", cmd, n,
		       n == 1 ? "" : "es", names);
}

/* Run argv (NULL-terminated) in the test directory; stdin is /dev/null.
 * extra_env ("K=V", "K=V K2=V2", or NULL) is added to the environment. */
struct res run_argv(char *const argv[], const char *extra_env,
			   int timeout_s)
{
	struct res r = { 0 };
	int po[2], pe[2];
	size_t k = 0, ocap = 0, ecap = 0;

	for (int i = 0; argv[i] && k < sizeof(r.cmd) - 1; i++)
		k += (size_t)snprintf(r.cmd + k, sizeof(r.cmd) - k, "%s%s",
				      i ? " " : "", argv[i]);
	append(&r.out, &r.outlen, &ocap, "", 0);
	append(&r.err, &r.errlen, &ecap, "", 0);
	cr_assert(pipe2(po, O_CLOEXEC) == 0 && pipe2(pe, O_CLOEXEC) == 0);
	fflush(NULL);
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setpgid(0, 0);
		dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(tmp) < 0)
			_exit(126);
		/* "K=V" or "K=V K2=V2 ...": a space before a NAME= starts
		 * the next assignment; any other space is the value's */
		for (char *e = extra_env ? strdup(extra_env) : NULL, *w = e;
		     w && *w;) {
			char *end = w + strlen(w);

			for (char *sp = strchr(w, ' '); sp;
			     sp = strchr(sp + 1, ' ')) {
				size_t k = strspn(sp + 1,
						  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
						  "abcdefghijklmnopqrstuvwxyz"
						  "0123456789_");
				if (k && sp[1 + k] == '=') {
					end = sp;
					break;
				}
			}
			bool more = *end != 0;

			*end = 0;
			putenv(w);
			w = more ? end + 1 : NULL;
		}
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(po[1]);
	close(pe[1]);

	double deadline = now() + timeout_s, exited_at = 0;
	bool killed = false, reaped = false;
	int status = 0;
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };

	while (fds[0].fd >= 0 || fds[1].fd >= 0 || !reaped) {
		if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
			reaped = true;
			exited_at = now();
		}
		/* a leftover holding our pipes must not hang us */
		if (reaped && now() - exited_at > 2)
			break;
		if (!killed && now() > deadline) {
			cr_log_error("`%s` timed out after %d s: killing it",
				     r.cmd, timeout_s);
			kill(-pid, SIGTERM);
			usleep(500000);
			kill(-pid, SIGKILL);
			killed = true;
		}
		int n = poll(fds, 2, 50);

		for (int i = 0; n > 0 && i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			char buf[65536];
			ssize_t m = read(fds[i].fd, buf, sizeof(buf));

			if (m <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
			} else if (i == 0) {
				append(&r.out, &r.outlen, &ocap, buf,
				       (size_t)m);
			} else {
				append(&r.err, &r.errlen, &ecap, buf,
				       (size_t)m);
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	if (WIFEXITED(status)) {
		r.code = WEXITSTATUS(status);
	} else {
		r.code = -1;
		r.sig = WTERMSIG(status);
	}
	cr_log_info("$ %s  => %s %d", r.cmd, r.sig ? "signal" : "exit",
		    r.sig ? r.sig : r.code);
	check_leftovers(r.cmd);
	cr_assert_not(killed, "`%s` did not finish in %d s", r.cmd, timeout_s);
	return r;
}

/* ptloom with the given arguments (NULL-terminated). */
struct res ptl(const char *first, ...)
{
	char *argv[MAXARGS];
	int n = 0;
	va_list ap;

	argv[n++] = (char *)ptloom();
	va_start(ap, first);
	for (const char *a = first; a && n < MAXARGS - 1;
	     a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	return run_argv(argv, NULL, CMD_TIMEOUT);
}

/* A shell command line, with ptloom's directory first on PATH (so the
 * `ptloom replay ...` line that run prints works as printed). */
struct res sh(const char *cmdline)
{
	static char path[4 * PATH_MAX];
	char dir[PATH_MAX];
	char *argv[] = { "/bin/sh", "-c", (char *)cmdline, NULL };

	cr_assert_not_null(realpath(ptloom(), dir), "%s", ptloom());
	*strrchr(dir, '/') = 0;
	snprintf(path, sizeof(path), "PATH=%s:%s", dir,
		 env_or("PATH", "/usr/bin:/bin"));
	return run_argv(argv, path, CMD_TIMEOUT);
}

/* --- reading outputs ----------------------------------------------------- */

char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char chunk[4096];
	size_t n;

	cr_assert_not_null(f, "cannot read %s: %s", path, strerror(errno));
	append(&buf, &len, &cap, "", 0);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		append(&buf, &len, &cap, chunk, n);
	fclose(f);
	return buf;
}

void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* The value of the first "key": in json, as written (string values with
 * their quotes, objects and arrays up to their first comma). */
const char *json_raw(const char *json, const char *key)
{
	char pat[128];
	const char *p = json;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	while ((p = strstr(p, pat))) {
		const char *q = p + strlen(pat);

		while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
			q++;
		if (*q == ':') {
			q++;
			while (*q == ' ' || *q == '\t' || *q == '\n' ||
			       *q == '\r')
				q++;
			return q;
		}
		p = q;
	}
	return NULL;
}

/* The value as text: strings unquoted (escapes kept), else the token. */
char *json_get(const char *json, const char *key)
{
	static char buf[8][4096];
	static int k;
	char *out = buf[k++ % 8];
	const char *v = json_raw(json, key);
	size_t n = 0;

	out[0] = 0;
	if (!v)
		return NULL;
	if (*v == '"') {
		for (v++; *v && *v != '"' && n < 4095; v++) {
			if (*v == '\\' && v[1])
				out[n++] = *v++;
			out[n++] = *v;
		}
	} else {
		while (*v && !strchr(",}]\n\r \t", *v) && n < 4095)
			out[n++] = *v++;
	}
	out[n] = 0;
	return out;
}

long json_num(const char *json, const char *key)
{
	const char *v = json_get(json, key);

	cr_assert(v && *v, "report has no \"%s\":\n%s", key, json);
	return strtol(v, NULL, 10);
}

/* The last line of s that starts with prefix (malloc'd), or NULL. */
char *line_with(const char *s, const char *prefix)
{
	const char *found = NULL;

	for (const char *p = s; p && *p;) {
		if (!strncmp(p, prefix, strlen(prefix)))
			found = p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!found)
		return NULL;
	return strndup(found, strcspn(found, "\n"));
}

/* ptloom's summary line: the last "ptloom: " line of stdout. */
char *summary(const struct res *r)
{
	char *s = line_with(r->out, "ptloom: ");

	cr_assert_not_null(s, "no summary line from `%s`\nstdout:\n%s\n"
			      "stderr:\n%s", r->cmd, r->out, r->err);
	return s;
}

/* The runs of a PASS summary ("ptloom: PASS N runs, ..."), -1 if none. */
long pass_runs(const struct res *r)
{
	char *s = summary(r);
	long n = -1;

	if (sscanf(s, "ptloom: PASS %ld runs", &n) != 1)
		n = -1;
	free(s);
	return n;
}

/* The summary line starts with want. */
void assert_summary(const struct res *r, const char *want)
{
	char *s = summary(r);

	cr_assert(!strncmp(s, want, strlen(want)),
		  "`%s`: summary \"%s\" does not start with \"%s\"\n"
		  "stdout:\n%s\nstderr:\n%s", r->cmd, s, want, r->out, r->err);
	free(s);
}

/* The lines of s without ptloom's own summary line. */
char *program_lines(const char *s)
{
	char *out = NULL;
	size_t len = 0, cap = 0;

	append(&out, &len, &cap, "", 0);
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "\n");

		if (strncmp(p, "ptloom: ", 8))
			append(&out, &len, &cap, p, n + (p[n] == '\n'));
		p += n + (p[n] == '\n');
	}
	return out;
}

/* --- ptloom run helpers -------------------------------------------------- */

/* ptloom run with options (NULL-terminated, then "--" and the program),
 * the report in <tmp>/report.json, schedules in <tmp>/out. */
struct res run_opts(const char *program, const char *const *opts)
{
	char *argv[MAXARGS];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = "run";
	argv[n++] = "-o";
	argv[n++] = in_tmp("out");
	argv[n++] = "--report";
	argv[n++] = in_tmp("report.json");
	argv[n++] = "--report-format";
	argv[n++] = "json";
	for (int i = 0; opts && opts[i] && n < MAXARGS - 3; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "--";
	argv[n++] = (char *)program;
	argv[n] = NULL;
	return run_argv(argv, NULL, CMD_TIMEOUT);
}

char *report(void)
{
	return slurp(in_tmp("report.json"));
}

/* A native run's output (stdout only), which must exit 0. */
char *native(const char *program)
{
	char *argv[] = { (char *)program, NULL };
	struct res r = run_argv(argv, NULL, 60);

	assert_exit(r, 0);
	char *out = strdup(r.out);

	res_free(&r);
	return out;
}

void found_free(struct found *f)
{
	free(f->replay);
	free(f->report);
	free(f->original);
	free(f->minimized);
}

/* Explore program with dfs, expecting a failure. */
struct found find(const char *program)
{
	struct res r = RUN(program, "--seed", SEED);
	struct found f = { 0 };

	assert_exit(r, 1);
	char *line = line_with(r.out, "replay: ");

	cr_assert_not_null(line, "no replay: line:\n%s", r.out);
	f.replay = strdup(line + strlen("replay: "));
	free(line);
	cr_assert(!strncmp(f.replay, "ptloom replay ", 14), "%s", f.replay);
	f.report = report();
	const char *o = json_get(f.report, "schedule_file");

	cr_assert(o && o[0] && strcmp(o, "null"), "no schedule_file:\n%s",
		  f.report);
	f.original = strdup(o);
	const char *m = json_get(f.report, "minimized_file");

	f.minimized = m && strcmp(m, "null") ? strdup(m) : NULL;
	res_free(&r);
	return f;
}

/* The replay command with a JSON report added (after "ptloom replay"). */
char *with_report(const char *replay, const char *json)
{
	char *cmd;

	cr_assert(asprintf(&cmd, "ptloom replay --report '%s' "
				 "--report-format json %s", json,
			   replay + strlen("ptloom replay ")) > 0);
	return cmd;
}

/* The seccomp filters an exploration installed, from PTLOOM_STATS. */
long filters_of(const struct res *r)
{
	const char *p = strstr(r->err, " seccomp filter");

	cr_assert_not_null(p, "no stats line in: %s", r->err);
	while (p > r->err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atol(p);
}

/* ptloom run -o <tmp>/OUT OPTS -- PROGRAM, with env ("K=V" or NULL). */
struct res run_out(const char *out, const char *const *opts,
			  const char *program, const char *env)
{
	char *argv[MAXARGS];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = "run";
	argv[n++] = "-o";
	argv[n++] = in_tmp(out);
	for (int i = 0; opts[i] && n < MAXARGS - 3; i++)
		argv[n++] = (char *)opts[i];
	argv[n++] = "--";
	argv[n++] = (char *)program;
	argv[n] = NULL;
	return run_argv(argv, env, CMD_TIMEOUT * 2);
}

struct res run_stats(const char *const *opts, const char *program)
{
	return run_out("out", opts, program, "PTLOOM_STATS=1");
}

/* A check skipped for a missing tool: said on stderr (cr_log_warn would
 * make Criterion exit non-zero although every test passed). */
void skip_note(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[SKIP] ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

const char *schedtool(void)
{
	return env_or("PTLOOM_SCHEDTOOL", "build/tests/schedtool");
}

/* schedtool IN OUT ARGS...: crafts a hostile schedule file. */
void craft(const char *in, const char *out, const char *op,
		  const char *arg)
{
	char *argv[] = { (char *)schedtool(), (char *)in, (char *)out,
			 (char *)op, (char *)arg, NULL };
	struct res r = run_argv(argv, NULL, 60);

	assert_exit(r, 0);
	res_free(&r);
}

/* A failing schedule of tests/targets/hostile_output in <tmp>/out. */
char *hostile_schedule(const char *env)
{
	static char path[PATH_MAX];
	struct res r = env ? RUN(target("hostile_output"), "--seed", SEED,
				 "--no-minimize", "-e", env)
			   : RUN(target("hostile_output"), "--seed", SEED,
				 "--no-minimize");

	assert_exit(r, 1);
	char *j = report();

	snprintf(path, sizeof(path), "%s", json_get(j, "schedule_file"));
	free(j);
	res_free(&r);
	return path;
}

/* A file that is not valid for python3's json.load fails the test. */
void assert_json_loads(const char *path)
{
	if (access(PYTHON3, X_OK)) {
		skip_note("skipping the json.load check: no %s", PYTHON3);
		return;
	}
	char *argv[] = { PYTHON3, "-c",
			 "import json,sys; json.load(open(sys.argv[1], "
			 "encoding='utf-8'))",
			 (char *)path, NULL };
	struct res r = run_argv(argv, NULL, 60);

	cr_assert(r.code == 0, "json.load refuses %s:\n%s\n%s", path, r.err,
		  slurp(path));
	res_free(&r);
}

/* Exit 2 and one line on stderr. */
void one_line_usage_error(struct res r)
{
	assert_exit(r, 2);
	cr_assert(r.errlen && strchr(r.err, '\n') == r.err + r.errlen - 1,
		  "`%s`: not one line on stderr:\n%s", r.cmd, r.err);
	res_free(&r);
}

/* PTLOOM_STATS: "ptloom: N runs forked from a checkpoint[; why not]". */
/* Runs a checkpointed exploration started from exec because the pid they
 * ask for was another process's then (the stats' note), 0 if none. */
long pid_taken_of(const struct res *r)
{
	const char *p = strstr(r->err, " from exec: the pid they ask for");

	if (!p)
		return 0;
	while (p > r->err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	fprintf(stderr, "[NOTE] %ld runs from exec: their pid was taken\n",
		atol(p));
	return atol(p);
}

long forks_of(const struct res *r)
{
	const char *p = strstr(r->err, " runs forked from a checkpoint");

	cr_assert_not_null(p, "no checkpoint stats in: %s", r->err);
	while (p > r->err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atol(p);
}

/* --- issue 9: the whole process tree ----------------------------------- */

const char *script(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, PATH_MAX, "%s/tests/targets/%s",
		 env_or("PTLOOM_SOURCE_ROOT", "."), name);
	cr_assert(access(p, R_OK) == 0, "%s is missing", p);
	return p;
}

static struct res run9_va(int timeout_s, const char *first, va_list ap)
{
	char *argv[MAXARGS];
	int n = 0;

	argv[n++] = (char *)ptloom();
	argv[n++] = "run";
	argv[n++] = "-o";
	argv[n++] = in_tmp("out");
	argv[n++] = "--report";
	argv[n++] = in_tmp("report.json");
	argv[n++] = "--report-format";
	argv[n++] = "json";
	for (const char *a = first; a && n < MAXARGS - 1;
	     a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	argv[n] = NULL;
	return run_argv(argv, NULL, timeout_s);
}

/* `ptloom run` with its report in <tmp>/report.json: the options, then
 * "--" and the command (one NULL-terminated list, "--" included). */
struct res run9(const char *first, ...)
{
	va_list ap;

	va_start(ap, first);
	struct res r = run9_va(CMD_TIMEOUT, first, ap);

	va_end(ap);
	return r;
}

/* The same, cut after timeout_s seconds instead of CMD_TIMEOUT. */
struct res run9_within(int timeout_s, const char *first, ...)
{
	va_list ap;

	va_start(ap, first);
	struct res r = run9_va(timeout_s, first, ap);

	va_end(ap);
	return r;
}

/* The schedule file in the replay: command r printed (PATH_MAX bytes). */
void replay_file(const struct res *r, char *file)
{
	const char *rp = strstr(r->out, "replay: ptloom replay ");

	cr_assert_not_null(rp, "no replay: line:\n%s", r->out);
	cr_assert_eq(sscanf(rp, "replay: ptloom replay %4095s", file), 1,
		     "%s", r->out);
}

/* The replay: command r printed reproduces its failure exactly (what is
 * the label of the assertion). */
void replay_line_exact(const struct res *r, const char *what)
{
	char *cmd = line_with(r->out, "replay: ");

	cr_assert_not_null(cmd, "no replay: line:\n%s", r->out);
	struct res rp = sh(cmd + strlen("replay: "));

	assert_exit(rp, 1);
	assert_contains(rp.out, "identical to the recording", what);
	res_free(&rp);
	free(cmd);
}

/* A failure found by r replays exactly (three times) by the printed
 * command, naming the same process and place. */
void replays_exactly(const struct res *r, const char *where)
{
	char *line = line_with(r->out, "replay: ");
	char *rep = report();

	cr_assert_not_null(line, "no replay: line:\n%s", r->out);
	assert_contains(rep, where, "the run's report");
	char *cmd = with_report(line + strlen("replay: "),
				in_tmp("replay.json"));

	for (int i = 0; i < 3; i++) {
		struct res x = sh(cmd);

		assert_exit(x, 1);
		char *j = slurp(in_tmp("replay.json"));

		assert_json(j, "exact", "true");
		cr_assert_str_eq(json_get(j, "location"),
				 json_get(rep, "location"));
		assert_contains(summary(&x), where, "the replay's summary");
		free(j);
		res_free(&x);
	}
	free(cmd);
	free(rep);
	free(line);
}

static const char *pyenv_root(void)
{
	static char root[PATH_MAX];
	const char *e = getenv("PYENV_ROOT"), *home = getenv("HOME");
	struct stat st;

	if (e && e[0] && !stat(e, &st))
		return e;
	if (home && home[0]) {
		snprintf(root, sizeof(root), "%s/.pyenv", home);
		if (!stat(root, &st))
			return root;
	}
	if (!stat("/root/.pyenv", &st))
		return "/root/.pyenv";
	return NULL;
}

/*
 * The interpreter for "3.11" (Debian's /usr/bin/python3 when it is 3.11)
 * or "3.12", "3.13" (pyenv's newest 3.X.N, found without its shell
 * integration: $PYENV_ROOT, else ~/.pyenv, else /root/.pyenv); NULL after
 * printing why it is skipped.
 */
const char *python_interpreter(const char *ver)
{
	static char path[PATH_MAX];
	char want[32];

	if (!strcmp(ver, "3.11")) {
		struct res r = sh("/usr/bin/python3 -c 'import sys; "
				  "print(\"%d.%d\" % sys.version_info[:2])'");
		bool ok = r.code == 0 && !strncmp(r.out, "3.11", 4);

		res_free(&r);
		if (!ok) {
			skip_note("no Debian python3 3.11 "
				  "at /usr/bin/python3");
			return NULL;
		}
		return "/usr/bin/python3";
	}
	const char *root = pyenv_root();

	if (!root) {
		skip_note("pyenv not found ($PYENV_ROOT, "
			  "~/.pyenv, /root/.pyenv): CPython %s skipped", ver);
		return NULL;
	}
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *e;
	long best = -1;

	snprintf(dir, sizeof(dir), "%s/versions", root);
	snprintf(want, sizeof(want), "%s.", ver);
	if (!(d = opendir(dir))) {
		skip_note("%s has no versions/: CPython %s "
			  "skipped", root, ver);
		return NULL;
	}
	while ((e = readdir(d))) {
		char *end;
		size_t n = strlen(want);

		if (strncmp(e->d_name, want, n))
			continue;
		long patch = strtol(e->d_name + n, &end, 10);

		/* 3.13.0 yes; 3.13.0t (free-threaded), 3.13-dev no */
		if (end == e->d_name + n || *end || patch <= best)
			continue;
		char exe[PATH_MAX];

		snprintf(exe, sizeof(exe), "%s/%s/bin/python%s", dir,
			 e->d_name, ver);
		if (access(exe, X_OK))
			continue;
		best = patch;
		snprintf(path, sizeof(path), "%s", exe);
	}
	closedir(d);
	if (best < 0) {
		skip_note("pyenv at %s has no CPython %s.N "
			  "installed: skipped", root, ver);
		return NULL;
	}
	return path;
}

/* examples/python/NAME in the source tree. */
const char *py_example(const char *name)
{
	static char buf[8][PATH_MAX];
	static int k;
	char *b = buf[k++ % 8];

	snprintf(b, PATH_MAX, "%s/examples/python/%s",
		 env_or("PTLOOM_SOURCE_ROOT", "."), name);
	return b;
}

