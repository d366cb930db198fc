/*
 * What every integration test uses: running ptloom and programs with a
 * timeout, reading their output, summary lines and JSON reports, and a
 * temporary directory per test.
 *
 * The ptloom binary on the examples and tests/targets, against the
 * user-facing contract (exit codes, summary lines, JSON report fields,
 * replay commands).  Each test_<capability>.c holds the Criterion suite of
 * one capability; tests/meson.build runs each suite as its own meson test,
 * named after it.
 *
 * Every exploration passes a fixed --seed; assertions are on outcomes,
 * never on timing.  Each test runs in its own temporary directory (ptloom's
 * cwd, its -o directory and its report file), and every command is checked
 * for leftovers: the test process is a child subreaper, so a tracee that
 * outlives ptloom is reparented to it and found (tests fail on it).
 *
 * Paths come from the environment (tests/meson.build sets them):
 *   PTLOOM           the ptloom binary
 *   PTLOOM_TARGETS   the built tests/targets programs
 *   PTLOOM_EXAMPLES  the built examples
 *   PTLOOM_CORPUS    tests/corpus
 */
#ifndef PTLOOM_TESTS_COMMON_H
#define PTLOOM_TESTS_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#define SEED "1"
/* seconds per ptloom command; PTLOOM_TEST_SLOWDOWN=N multiplies it for
 * sanitizer builds, which run ptloom several times slower */
#define CMD_TIMEOUT (60 * slowdown())
#define MAXARGS 64

/* --- running a command --------------------------------------------------- */

struct res {
	int code;	/* exit status, or -1 if killed */
	int sig;	/* the signal that killed it, 0 if none */
	char *out, *err;
	size_t outlen, errlen;
	char cmd[1024];	/* for messages */
};

#define PTL(...) ptl(__VA_ARGS__, (const char *)NULL)

#define assert_json(json, key, want)                                        \
	do {                                                                \
		const char *got_ = json_get(json, key);                     \
		cr_assert(got_ && !strcmp(got_, want),                      \
			  "report field \"%s\": want %s, got %s\n%s", key,  \
			  want, got_ ? got_ : "(missing)", json);           \
	} while (0)

#define assert_exit(r, want)                                                \
	cr_assert((r).code == (want), "`%s`: exit %d%s%s, want %d\n"       \
		  "stdout:\n%s\nstderr:\n%s", (r).cmd, (r).code,            \
		  (r).sig ? ", signal " : "",                               \
		  (r).sig ? strsignal((r).sig) : "", (want), (r).out,      \
		  (r).err)

#define assert_contains(hay, needle, what)                                  \
	cr_assert(strstr(hay, needle), "%s lacks \"%s\":\n%s", what,       \
		  needle, hay)

#define RUN(program, ...)                                                   \
	run_opts(program, (const char *const[]){ __VA_ARGS__, NULL })

/* --- issue 4: schedule files ------------------------------------------- */

struct found {
	char *replay;	  /* the replay command as printed */
	char *report;	  /* run's JSON report */
	char *original;	  /* schedule files */
	char *minimized;
};

/* The system python3 (a python3 first on PATH may be a shell shim). */
#define PYTHON3 "/usr/bin/python3"

#define RUN9(...) run9(__VA_ARGS__, (const char *)NULL)

/* --- common.c ------------------------------------------------------------ */

int slowdown(void);
/* true in the run against the sanitizer build (PTLOOM_TEST_SANITIZED=1,
 * tests/sanitized.sh): a test may repeat less there (one seed of three,
 * 4 replays of 20), since the normal run makes every repetition and
 * ASan and UBSan watch ptloom's memory, which repeating changes little */
bool sanitized_run(void);
const char *env_or(const char *name, const char *dflt);
const char *ptloom(void);
const char *prog(const char *dir_env, const char *dflt,
			const char *name);
const char *target(const char *name);
const char *example(const char *name);
extern char tmp[PATH_MAX];
char *in_tmp(const char *name);
int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw);
void setup(void);
void teardown(void);
void res_free(struct res *r);
double now(void);
void append(char **buf, size_t *len, size_t *cap, const char *d,
		   size_t n);
int leftovers(char *names, size_t len);
void check_leftovers(const char *cmd);
struct res run_argv(char *const argv[], const char *extra_env,
			   int timeout_s);
struct res ptl(const char *first, ...);
struct res sh(const char *cmdline);
char *slurp(const char *path);
void spit(const char *path, const char *text);
const char *json_raw(const char *json, const char *key);
char *json_get(const char *json, const char *key);
long json_num(const char *json, const char *key);
char *line_with(const char *s, const char *prefix);
char *summary(const struct res *r);
long pass_runs(const struct res *r);
void assert_summary(const struct res *r, const char *want);
char *program_lines(const char *s);
struct res run_opts(const char *program, const char *const *opts);
char *report(void);
char *native(const char *program);
void found_free(struct found *f);
struct found find(const char *program);
char *with_report(const char *replay, const char *json);
long filters_of(const struct res *r);
struct res run_out(const char *out, const char *const *opts,
			  const char *program, const char *env);
struct res run_stats(const char *const *opts, const char *program);
void skip_note(const char *fmt, ...);
const char *schedtool(void);
void craft(const char *in, const char *out, const char *op,
		  const char *arg);
char *hostile_schedule(const char *env);
void assert_json_loads(const char *path);
void one_line_usage_error(struct res r);
long forks_of(const struct res *r);
long pid_taken_of(const struct res *r);
const char *script(const char *name);
struct res run9(const char *first, ...);
struct res run9_within(int timeout_s, const char *first, ...);
const char *py_example(const char *name);
/* CPython "3.11" (Debian's), "3.12" or "3.13" (pyenv's), or NULL after a
 * skip_note saying why it is absent (static: one at a time). */
const char *python_interpreter(const char *ver);
void replays_exactly(const struct res *r, const char *where);
/* The schedule file in the replay: command r printed (PATH_MAX bytes). */
void replay_file(const struct res *r, char *file);
/* The replay: command r printed reproduces its failure exactly. */
void replay_line_exact(const struct res *r, const char *what);

#endif
