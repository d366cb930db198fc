/*
 * The command-line front end: one file per subcommand (run.c, replay.c,
 * show.c, races.c), shared helpers in common.c.  Only cli/ calls exit().
 */
#ifndef PTLOOM_CLI_H
#define PTLOOM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include "../tracer/tracer.h"
#include "../replayer/schedule.h"
#include "../analysis/symbols.h"

/* Exit codes (../shared/CONTRACT.md). */
enum {
	EXIT_PASS = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_INCOMPLETE = 3,
	EXIT_DIVERGED = 4,
};

/* The signal (SIGINT, SIGTERM, SIGHUP) that interrupted ptloom, or 0. */
extern volatile int cli_interrupted;
/* 128 + that signal: 130 for SIGINT, 143 for SIGTERM. */
int exit_interrupted(void);
/* Test hook: PTLOOM_TEST_INTERRUPT=WHERE (or WHERE:TERM) raises SIGINT
 * (SIGTERM) at the point named WHERE, for steps too quick to interrupt
 * from outside in a test ("minimize", "replay"; tracer/checkpoint.c has
 * "checkpoint:TERM", as the first fork checkpoint is made, and
 * "worker-checkpoint:TERM", in the first -j worker only). */
void cli_test_interrupt(const char *where);

/* The program under test, as the user named it and as it is run. */
struct program {
	char *path;	   /* resolved absolute path */
	char **argv;	   /* argv[0] as typed, then the arguments */
	char **exec_argv;  /* argv with argv[0] = path */
	const char *argv0; /* the argv[0] the program gets (argv[0]) */
	int argc;
	char **envp;	   /* the fixed environment */
	int nenv;
	char *left_out;	   /* names of the variables it left out, or NULL */
	int nleft_out, nnamed_out; /* how many, how many of them named */
	char *display;	   /* "./bank arg" for messages */
};

/* Options shared by run/replay/minimize/races. */
struct common_opts {
	unsigned points;
	uint64_t seed;
	uint64_t max_steps;
	double timeout;
	bool output;
	bool quiet;
	char *out_dir;
	char *report;
	char *report_format;
	char **env_extra;
	int nenv_extra;
	bool keep_env;
	bool free_children;	/* --free-children: today's free child runs */
	/* --fail-on-child-crash: a process of the program that dies of a
	 * crash signal fails the run, whatever the exit status */
	bool fail_on_child_crash;
	bool trust_env;	   /* --trust-env: a file's loader variables too */
	/* --no-fast-path or PTLOOM_NO_FAST_PATH: clock reads at stops */
	bool no_fast_path;
	/* the virtual CLOCK_REALTIME at every run's start: the real time
	 * when the command started (run, races), a replayed file's own */
	uint64_t clock_realtime_ns;
};

/* --clock-start's getopt value (run, races) */
#define CLOCK_START_OPT ('k' + 256)
/* --fail-on-child-crash's (run, replay, minimize) */
#define CHILD_CRASH_OPT ('x' + 256)
/* --no-fast-path's (run, replay) */
#define NO_FAST_PATH_OPT ('f' + 256)
/* Seconds options take at most this many seconds. */
#define SECONDS_MAX 100000000
/* The tunable ptloom adds to every program's environment. */
#define PTLOOM_TUNABLES "GLIBC_TUNABLES=glibc.pthread.rseq=0"
/* LeakSanitizer's exit-time check stops the world with ptrace, which a
 * traced process cannot use: it would end every sanitizer build with
 * "LeakSanitizer has encountered a fatal error" and exit 1 (a false
 * FAIL).  Added to LSAN_OPTIONS unless it names detect_leaks already. */
#define PTLOOM_LSAN "LSAN_OPTIONS=detect_leaks=0"

void common_defaults(struct common_opts *o);
/* Parse one of the shared long options; returns 1 if handled, 0 if not,
 * -1 after printing an error. */
int common_option(struct common_opts *o, int c, const char *arg);
int parse_points(const char *s, unsigned *out);
/* A plain decimal number (digits only, no sign, space or leading zero) up
 * to max; 0 or -1. */
int parse_decimal(const char *s, uint64_t max, uint64_t *v);
/* Seconds > 0 and <= max, a plain decimal with an optional fraction
 * (never nan, inf, a sign or an exponent); 0 or -1. */
int parse_seconds(const char *s, double max, double *v);
/* After getopt returned '?' or ':' (opterr = 0, optstring "+:..."):
 * one line naming the option and the --help hint; returns EXIT_USAGE. */
int cli_bad_option(const char *cmd, int c, char **argv);

/* Is "NAME=VALUE" a variable that makes the loader or libc load or run
 * code (LD_*, GLIBC_TUNABLES, GCONV_PATH, ...: see common.c)? */
bool env_is_loader_var(const char *kv);
/* Does a replay apply the recorded "NAME=VALUE" without being told (PATH
 * of standard directories, HOME, LANG, LC_*, TZ, USER, TMPDIR, SHELL,
 * PWD, ...: see common.c)? */
bool env_replay_safe(const char *kv);
/* How many entries of env (from a schedule file) a replay refuses: not
 * env_replay_safe(), not in ptloom's own environment with the same value
 * and not named in given (-e NAME=VALUE).  names gets their names, escaped
 * and comma-separated (the first 16, then "and N more"). */
int env_refused(char *const *env, int n, char *const *given, int ngiven,
		char *names, size_t len);
const char *points_name(unsigned p, char *buf, size_t len);

/* Resolve PROGRAM and build the environment; prints the error and
 * returns -1 when the program cannot be found. */
int program_setup(struct program *p, int argc, char **argv,
		  const struct common_opts *o);
void program_free(struct program *p);
/* Set (or replace) one "NAME=VALUE" of the program's environment. */
void program_setenv(struct program *p, const char *kv);

/* A symbolizer backed by analysis/symbols.c. */
struct symbolizer *cli_symbolizer(void);

void session_config_init(struct session_config *cfg, const struct program *p,
			 const struct common_opts *o);
/* The one line saying a process ran without the in-process agent
 * (run_result.agent_note, explore_result.agent_note); nothing if "". */
void agent_note(const char *why);
/* After runs: says once why a CPython a process of the tree exec'd was
 * left at the C level (3.14, a free-threaded build, ...), when it is not
 * the command's own, already said. */
void python_note_children(const struct session_config *cfg,
			  const struct common_opts *o);

/* Fill a schedule from a run (takes no ownership of r). */
void schedule_from_run(struct schedule *s, const struct program *p,
		       const struct common_opts *o, const char *strategy,
		       int bound, const struct run_result *r);
/* The identity of the file at path now (build-id, size, mtime; a content
 * hash without build-id).  0 or -errno. */
int object_identify(const char *path, struct loaded_object *o);
/* How many of the schedule's loaded objects changed on disk since the
 * recording; buf names the first ("" if none). */
int objects_changed(const struct schedule *s, char *buf, size_t len);
/* The replay r mapped other objects than the recording: 1 and why. */
int objects_differ(const struct schedule *s, const struct run_result *r,
		   char *buf, size_t len);
/* The replay r did not get the ids the recording's threads had (replay's
 * session_config.ids): 1 and which. */
int ids_differ(const struct schedule *s, const struct run_result *r,
	       char *buf, size_t len);
void schedule_set_points(struct schedule *s, const struct user_point *p,
			 size_t n);
/* Before the first run: can the schedule files (out_dir: o->out_dir) and
 * the --report file be written?  Prints the reason and returns -1 if not.
 * Also removes temporary files that earlier, killed saves left there. */
int check_output_paths(const struct common_opts *o, bool out_dir);
/* Save under dir as ID-suffix.pb; the path is written to path. */
int save_schedule(const struct schedule *s, const char *dir, const char *id,
		  const char *suffix, char *path, size_t len);

/* The failure a schedule recorded, as a run result (fingerprint fields
 * only), and described like describe_failure(). */
void schedule_failure(const struct schedule *s, struct run_result *r);
void describe_schedule_failure(const struct schedule *s, char *buf,
			       size_t len);
/* A progress line on stderr for work outside explore() (minimisation,
 * race discovery) when on and stderr is a terminal: what, elapsed, runs
 * (run_by_step counts them), runs/s.  _end clears it. */
void cli_progress_begin(const char *what, bool on);
void cli_progress_end(void);
/*
 * Minimisation's time bound.  cli_bound_begin(cfg, seconds): from now on
 * run_by_step() and run_with_strategy() start no run after `seconds`
 * (they return -ETIME, and cli_bound_hit() says so), each run's
 * --timeout is cut to the time left, and a run still going at the bound
 * is stopped there (session_config.stop_wall: FAIL_INTERRUPTED, never
 * kept), so the bound holds within a timer tick.  cli_bound_end() puts cfg's --timeout
 * back.  Without a bound (the default) nothing changes.
 */
void cli_bound_begin(struct session_config *cfg, double seconds);
void cli_bound_end(struct session_config *cfg);
bool cli_bound_hit(void); /* the bound stopped the work (past it now) */
bool cli_bound_expired(void); /* past the bound now: hit from now on */
double cli_bound_left(void); /* seconds; -1 without a bound */
/* A phase under the bound that may not finish (the search proving a
 * minimum) ends `seconds` from now, or with the bound if sooner; 0 lifts
 * the cap.  cli_bound_capped(): the cap (not the bound) stopped it. */
void cli_bound_cap(struct session_config *cfg, double seconds);
bool cli_bound_capped(void);
double cli_bound_timeout(void); /* the configuration's own --timeout */
double cli_wall(void);	     /* CLOCK_MONOTONIC seconds */
/* Run the program following dec by step (lenient); cfg is a
 * struct session_config.  The minimiser's run function. */
int run_by_step(void *cfg, const struct decision *dec, size_t n,
		struct run_result *out);
/* minimize_strategy_fn over session_run(); ctx is a struct session_config */
int run_with_strategy(void *cfg, struct strategy *s, struct run_result *out);
/*
 * Minimise *best: the found order of effects with fewer switches first
 * (minimize_reorder, one run each, to a fixed point), then preemptions and
 * decisions dropped one at a time (minimize, at most max_runs runs).  A
 * sample through a runner carries hundreds of needless preemptions: one
 * by one they cost a run each, at a second a run behind Criterion.
 */
struct minimize_stats;
void minimize_reorder_first(struct session_config *cfg, struct run_result *best,
			    unsigned max_runs, struct minimize_stats *ms);
/*
 * A failure inside one process of a tree (a test runner's worker): that
 * process's own switches first, as few as it needs (minimize_process),
 * else, with many preemptions, a short placement search.  Nothing for a
 * single process or fewer than two preemptions.
 */
void minimize_process_first(struct session_config *cfg,
			    struct run_result *best, struct minimize_stats *ms);
/*
 * A candidate schedule of minimisation replays the failure or is
 * dropped: one that runs far longer than the failing run (a spin the
 * found order never met, a loop around two spinners) is not the same
 * failure, and used to run to --timeout (10 s a candidate).  The cap:
 * MINIMIZE_STEPS_FACTOR times the failing run's points plus
 * MINIMIZE_STEPS_SLACK, never above --max-steps; none for a livelock,
 * whose length is its failure.  Returns cfg's max_steps before, which the
 * caller puts back (and the bounded search keeps: its runs prove).
 */
#define MINIMIZE_STEPS_FACTOR 4
#define MINIMIZE_STEPS_SLACK 2000
uint64_t minimize_cap_steps(struct session_config *cfg,
			    const struct run_result *best);
/* Minimisation's default time bound (run and minimize): the larger of
 * MINIMIZE_TIME_MIN seconds and MINIMIZE_TIME_FACTOR times the time the
 * failure took to find; --minimize-time SEC sets it. */
#define MINIMIZE_TIME_MIN 60
#define MINIMIZE_TIME_FACTOR 10
#define MINIMIZE_TIME_OPT ('t' + 256)
/* The search below a minimised count (placements of fewer preemptions,
 * then the bounded dfs that proves the minimum) may never finish behind a
 * runner (bound 0 of a Criterion binary is thousands of runs of a second):
 * it gets at most as long as the minimisation before it took, and at
 * least MINIMIZE_PROOF_MIN seconds, within the default bound (all that is
 * left of a --minimize-time the user gave). */
#define MINIMIZE_PROOF_MIN 30.0

/* The failure's message (unless the output holds it) and, with_output,
 * the tail of the program's output. */
void print_failure_output(const struct run_result *r, bool with_output);
/* "threads at the failure:" and each thread's frames (nothing when no
 * backtrace is known); bts and names indexed by T-number. */
void print_backtraces(FILE *f, char *const *bts, char *const *names, int n,
		      const char *indent);

/* The failure fields of a report from a run (the signal's name goes to
 * sigbuf, which must outlive the report). */
struct report;
void report_failure(struct report *rep, const struct run_result *r,
		    bool failed, char *sigbuf, size_t len);

/* "crash SIGABRT in T2 (withdraw at bank.c:23)" */
void describe_failure(const struct run_result *r, char *buf, size_t len);
const char *signal_name(int sig);

/* One line for an event: "T1 pthread_mutex_lock(&lock) at bank.c:19". */
void event_line(const struct event *e, const struct sym_entry *syms,
		size_t nsyms, const char *const *names, int nnames, char *buf,
		size_t len);
/* A hash index of a trace's symbols, so that explaining n events costs
 * O(n), not O(n * symbols).  Below 16 entries (or out of memory) lookups
 * scan.  sym_probes counts the entries looked at, for the tests. */
struct sym_index {
	const struct sym_entry *syms;
	size_t n, cap;
	uint32_t *slot;	/* index into syms, UINT32_MAX empty */
	/* or the symbols of a view, left in its file: slot = offset */
	const struct schedule_view *view;
};
int sym_index_build(struct sym_index *ix, const struct sym_entry *syms,
		    size_t n);
/* The index of a view's symbols (ptloom show): only the slots are in
 * memory, a lookup reads its symbol from the file. */
int sym_index_build_view(struct sym_index *ix, const struct schedule_view *v);
void sym_index_free(struct sym_index *ix);
extern uint64_t sym_probes;
/* event_line() with an index. */
void event_line_ix(const struct event *e, const struct sym_index *ix,
		   char *buf, size_t len);
/* The first event where two traces part; -1 if none. */
long trace_departure(const struct event *a, size_t na, const struct event *b,
		     size_t nb);

/* Split s into words as a shell would (blanks; '...', "..." and \
 * quoting; no expansion).  *argv (malloc'd, NULL-terminated; argv[0]
 * points at the one buffer holding every word).  The number of words, or
 * -1 for none or an unterminated quote. */
int shell_split(const char *s, char ***argv);
/* Shell-quote argv into buf (for the replay command). */
void shell_join(char *buf, size_t len, char *const *argv, int argc);

/*
 * ptloom show reads the trace one event at a time (cli/show.c): a window
 * holds the event at i (e[1]) with the one before (e[0], when i > 0) and
 * the two after (e[2], e[3], when there are); k counts the preemptions
 * before i.  win_next is false at the end, on SIGINT/SIGTERM and when the
 * file changed underneath (show_stopped).
 */
struct win {
	struct event_cursor c;
	struct event e[4];
	size_t i, n, k;
};
void win_start(struct win *w);
bool win_next(struct win *w);
bool show_stopped(void);

/* show --format html: a self-contained timeline page (cli/show_html.c). */
void show_html(FILE *f, const struct schedule_view *v, const char *path,
	       const struct sym_index *ix, int nthreads);

int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_minimize(int argc, char **argv);
int cmd_show(int argc, char **argv);
/* `show --format markdown` of a schedule file into f; -1 if unreadable. */
int show_markdown_path(FILE *f, const char *path);

/* cli/github.c: with GITHUB_ACTIONS=true, a job summary appended to
 * $GITHUB_STEP_SUMMARY and ::error/::warning workflow commands. */
bool github_enabled(void);
void github_report(const struct report *r);
int cmd_races(int argc, char **argv);
int cmd_merge(int argc, char **argv);

/* cli/coverage.c.  The pairs of c with their locations, named by one more
 * run (cfg, following like's decisions where it can; like may be NULL):
 * *out and *names are malloc'd (free both).  Returns the count or -1. */
struct coverage;
struct report_pair;
int cli_coverage_pairs(struct session_config *cfg, const struct coverage *c,
		       const struct run_result *like,
		       struct report_pair **out, char **names);
/* "183 of 190 conflicting pairs seen in both orders", with list: "; the
 * 7 not: A / B (lock), ..." (three of them, then how many more). */
void cli_coverage_text(char *buf, size_t len, const struct report_pair *ps,
		       size_t n, uint64_t pairs, uint64_t covered, bool list);
/* Records the exploration's coverage in a schedule about to be saved:
 * the counts and the pairs of ps not seen in both orders (copied, at most
 * SCHEDULE_MAX_COVERAGE), for show to mark.  Returns 0 or -ENOMEM. */
int cli_coverage_to_schedule(struct schedule *s, const struct report_pair *ps,
			     size_t n, uint64_t pairs, uint64_t covered);

#endif
