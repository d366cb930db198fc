/*
 * Helpers shared by the subcommands: options, the program and its fixed
 * environment, the symbolizer, schedule files, one-line event text.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "../analysis/escape.h"
#include "../analysis/minimize.h"
#include "../analysis/python.h"
#include "../analysis/report.h"
#include "../analysis/strategy.h"
#include "../tracer/elf.h"

extern char **environ;

static void python_setup(struct session_config *cfg, const struct program *p,
			 const struct common_opts *o);

void common_defaults(struct common_opts *o)
{
	memset(o, 0, sizeof(*o));
	/* races by default: most real concurrency bugs are data races, and
	 * discovery costs a few observed runs (see the issue 5 note) */
	/* and x86's store buffers at racy stores: a handshake without a
	 * fence fails on the hardware (tracer/tso.c) */
	o->points = POINTS_SYNC | POINTS_RACES | POINTS_TSO;
	o->max_steps = 100000;
	o->timeout = 10;
	o->out_dir = ".ptloom";
	o->report_format = "json";
	/* taken once: every run of the exploration starts at the same
	 * virtual time, and no file the program sees is in its future */
	struct timespec ts;

	if (!clock_gettime(CLOCK_REALTIME, &ts))
		o->clock_realtime_ns = (uint64_t)ts.tv_sec * 1000000000ull +
				       (uint64_t)ts.tv_nsec;
	if (o->clock_realtime_ns < CLOCK_REALTIME_MIN_NS ||
	    o->clock_realtime_ns > CLOCK_REALTIME_MAX_NS)
		o->clock_realtime_ns = CLOCK_REALTIME_DEFAULT_NS;
}

int parse_points(const char *s, unsigned *out)
{
	char buf[256];

	*out = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *sv, *t = strtok_r(buf, ",", &sv); t;
	     t = strtok_r(NULL, ",", &sv)) {
		if (!strcmp(t, "sync"))
			*out |= POINTS_SYNC;
		else if (!strcmp(t, "atomics"))
			*out |= POINTS_ATOMICS;
		else if (!strcmp(t, "races"))
			*out |= POINTS_RACES;
		else if (!strcmp(t, "tso"))
			*out |= POINTS_TSO;
		else if (!strcmp(t, "all"))
			*out |= POINTS_SYNC | POINTS_ATOMICS | POINTS_RACES |
				POINTS_TSO;
		else
			return -1;
	}
	return *out ? 0 : -1;
}

const char *points_name(unsigned p, char *buf, size_t len)
{
	static const struct {
		unsigned bit;
		const char *name;
	} sets[] = { { POINTS_SYNC, "sync" }, { POINTS_ATOMICS, "atomics" },
		     { POINTS_RACES, "races" }, { POINTS_TSO, "tso" } };
	size_t at = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		if ((p & sets[i].bit) && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
					       at ? "," : "", sets[i].name);
	return buf;
}

int parse_decimal(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	/* digits only: no sign, no spaces, no 0x, no octal-looking 010 */
	if (!s || !*s || (s[0] == '0' && s[1]))
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		unsigned d = (unsigned)(*p - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (x > max)
		return -1;
	*v = x;
	return 0;
}

int parse_seconds(const char *s, double max, double *v)
{
	const char *p = s;
	size_t digits = 0;

	/* "12", "0.5", "2.": no sign, exponent, nan, inf or spaces */
	if (!s || !*s)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (*p || !digits)
		return -1;
	char *end;
	double x = strtod(s, &end);

	if (*end || !(x > 0) || x > max)
		return -1;
	*v = x;
	return 0;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':')
		fprintf(stderr, "ptloom %s: option '%s' needs a value (see "
				"ptloom %s --help)\n", cmd, esc(arg), cmd);
	else if (optopt && !(arg[0] == '-' && arg[1] == '-'))
		fprintf(stderr, "ptloom %s: unknown option '-%c' (see ptloom "
				"%s --help)\n", cmd, optopt, cmd);
	else
		fprintf(stderr, "ptloom %s: unknown option '%s' (see ptloom "
				"%s --help)\n", cmd, esc(arg), cmd);
	return EXIT_USAGE;
}

/* Long-option codes shared by the subcommands (see run.c). */
int common_option(struct common_opts *o, int c, const char *arg)
{
	switch (c) {
	case 'P':
		if (parse_points(arg, &o->points)) {
			fprintf(stderr, "ptloom: --points takes a list of sync, "
					"atomics, races (got '%s')\n", arg);
			return -1;
		}
		o->points |= POINTS_CLEVEL; /* asked for: see python.c */
		return 1;
	case 'S':
		if (parse_decimal(arg, UINT64_MAX, &o->seed)) {
			fprintf(stderr, "ptloom: --seed takes a plain decimal "
					"number from 0 to %llu (got '%s')\n",
				(unsigned long long)UINT64_MAX, esc(arg));
			return -1;
		}
		return 1;
	case 'M':
		if (parse_decimal(arg, UINT32_MAX, &o->max_steps) ||
		    !o->max_steps) {
			fprintf(stderr, "ptloom: --max-steps takes a decimal "
					"number from 1 to %u (got '%s')\n",
				UINT32_MAX, esc(arg));
			return -1;
		}
		return 1;
	case 'T':
		if (parse_seconds(arg, SECONDS_MAX, &o->timeout)) {
			fprintf(stderr, "ptloom: --timeout takes seconds, a "
					"decimal number > 0 and <= %d (got "
					"'%s')\n", SECONDS_MAX, esc(arg));
			return -1;
		}
		return 1;
	case 'O':
		o->output = true;
		return 1;
	case 'q':
		o->quiet = true;
		return 1;
	case 'o':
		o->out_dir = (char *)arg;
		return 1;
	case 'R':
		o->report = (char *)arg;
		return 1;
	case 'F':
		if (strcmp(arg, "json") && strcmp(arg, "markdown") &&
		    strcmp(arg, "junit") && strcmp(arg, "sarif")) {
			fprintf(stderr, "ptloom: --report-format is json, "
					"markdown, junit or sarif (got '%s')\n",
				arg);
			return -1;
		}
		o->report_format = (char *)arg;
		return 1;
	case 'e':
		if (!strchr(arg, '=')) {
			fprintf(stderr, "ptloom: --env takes NAME=VALUE (got "
					"'%s')\n", arg);
			return -1;
		}
		o->env_extra = realloc(o->env_extra, (size_t)(o->nenv_extra + 1) *
							     sizeof(char *));
		o->env_extra[o->nenv_extra++] = (char *)arg;
		return 1;
	case 'K':
		o->keep_env = true;
		return 1;
	case 'W':
		o->free_children = true;
		return 1;
	case CHILD_CRASH_OPT:
		o->fail_on_child_crash = true;
		return 1;
	case NO_FAST_PATH_OPT:
		o->no_fast_path = true;
		return 1;
	case 'U':
		o->trust_env = true;
		return 1;
	case CLOCK_START_OPT: {
		uint64_t sec;

		if (parse_decimal(arg, CLOCK_REALTIME_MAX_NS / 1000000000ull,
				  &sec) ||
		    sec < CLOCK_REALTIME_MIN_NS / 1000000000ull) {
			fprintf(stderr, "ptloom: --clock-start takes seconds "
					"since 1970, a decimal number from "
					"%llu to %llu (got '%s')\n",
				CLOCK_REALTIME_MIN_NS / 1000000000ull,
				CLOCK_REALTIME_MAX_NS / 1000000000ull,
				esc(arg));
			return -1;
		}
		o->clock_realtime_ns = sec * 1000000000ull;
		return 1;
	}
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *const env_keep[] = {
	"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH",
	"LD_PRELOAD", "TMPDIR", "USER", "LOGNAME", "SHELL", "PWD",
	/* where a runtime finds the program's code: without them a program
	 * that runs natively cannot start (a Python test whose modules are
	 * on PYTHONPATH: ModuleNotFoundError, a FAIL of a correct program) */
	"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "NODE_PATH", "CLASSPATH",
	"JAVA_HOME", "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "PERL5LIB",
	"PERLLIB", "RUBYLIB", "GEM_HOME", "GEM_PATH", "LUA_PATH", "LUA_CPATH",
	"R_LIBS", "R_LIBS_USER",
};

static bool keep_var(const char *kv, bool all)
{
	if (all)
		return strncmp(kv, "GLIBC_TUNABLES=", 15) != 0;
	if (!strncmp(kv, "LC_", 3))
		return true;
	for (size_t i = 0; i < sizeof(env_keep) / sizeof(env_keep[0]); i++) {
		size_t n = strlen(env_keep[i]);

		if (!strncmp(kv, env_keep[i], n) && kv[n] == '=')
			return true;
	}
	return false;
}

void program_setenv(struct program *p, const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (int i = 0; i < p->nenv; i++)
		if (!strncmp(p->envp[i], kv, n) && p->envp[i][n] == '=') {
			free(p->envp[i]);
			p->envp[i] = strdup(kv);
			return;
		}
	p->envp = realloc(p->envp, (size_t)(p->nenv + 2) * sizeof(char *));
	p->envp[p->nenv++] = strdup(kv);
	p->envp[p->nenv] = NULL;
}

/* LSAN_OPTIONS gains detect_leaks=0 unless it names detect_leaks (the
 * user's choice stands): see PTLOOM_LSAN. */
static void leak_check_off(struct program *p)
{
	const size_t n = sizeof("LSAN_OPTIONS=") - 1;

	for (int i = 0; i < p->nenv; i++) {
		const char *v = p->envp[i] + n;
		char *kv;

		if (strncmp(p->envp[i], PTLOOM_LSAN, n))
			continue;
		if (strstr(v, "detect_leaks"))
			return;
		if (asprintf(&kv, "%s%s%s", p->envp[i], *v ? ":" : "",
			     &PTLOOM_LSAN[n]) < 0)
			return;
		free(p->envp[i]);
		p->envp[i] = kv;
		return;
	}
	program_setenv(p, PTLOOM_LSAN);
}

/*
 * Variables that make ld.so or libc load or run code, write files or
 * change what they parse: glibc's list of variables dropped in
 * secure-execution mode (sysdeps/generic/unsecvars.h, ld.so(8)) with
 * every LD_* and the MALLOC_* tunable aliases, but without TMPDIR (it
 * names where temporary files go and loads nothing).  A schedule file's
 * environment is data: these are refused on replay (env_refused()).
 */
static const char *const loader_vars[] = {
	"GCONV_PATH",	 "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES",
	"LOCALDOMAIN",	 "LOCPATH",	"MALLOC_TRACE",	  "NIS_PATH",
	"NLSPATH",	 "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
};

bool env_is_loader_var(const char *kv)
{
	size_t n = strcspn(kv, "=");

	if (!strncmp(kv, "LD_", 3) || !strncmp(kv, "MALLOC_", 7))
		return true;
	for (size_t i = 0; i < sizeof(loader_vars) / sizeof(loader_vars[0]);
	     i++)
		if (strlen(loader_vars[i]) == n &&
		    !strncmp(kv, loader_vars[i], n))
			return true;
	return false;
}

/*
 * The recorded entries a replay applies without being told: what the
 * environment's size (stack addresses) and the program's locale, time zone
 * and home need for exactness, and nothing a shell, an interpreter or the
 * loader runs or loads code from (BASH_ENV, BASH_FUNC_*, PERL5OPT,
 * PYTHONSTARTUP, GIT_*, LD_*, ...).  README "Schedule files are
 * untrusted" lists them; keep the two the same.
 */
static const char *const replay_safe[] = {
	"HOME", "LANG", "LANGUAGE", "LOGNAME", "PWD", "TMPDIR", "TZ", "USER",
};
/* PATH's directories and SHELL's, when they are these */
static const char *const std_dirs[] = {
	"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
	"/sbin",	   "/bin",	     "/usr/games", "/usr/local/games",
	"/snap/bin",
};

static bool std_dir(const char *d, size_t n)
{
	for (size_t i = 0; i < sizeof(std_dirs) / sizeof(std_dirs[0]); i++)
		if (strlen(std_dirs[i]) == n && !strncmp(d, std_dirs[i], n))
			return true;
	return false;
}

/* Is the directory d (n bytes) one ptloom's own PATH searches already?
 * Then a recorded PATH naming it adds no directory the user does not
 * trust (a replay from a shell whose PATH gained a directory since). */
static bool own_path_dir(const char *d, size_t n)
{
	const char *p = getenv("PATH");

	while (p && *p) {
		size_t k = strcspn(p, ":");

		if (k == n && n && !strncmp(p, d, n))
			return true;
		p += k + (p[k] == ':');
	}
	return false;
}

bool env_replay_safe(const char *kv)
{
	size_t n = strcspn(kv, "=");
	const char *v = kv + n + (kv[n] == '=');

	if (!strcmp(kv, PTLOOM_TUNABLES) || !strcmp(kv, PTLOOM_LSAN))
		return true;
	if (n == 4 && !strncmp(kv, "PATH", 4)) {
		/* every directory a standard one or one of ptloom's own PATH
		 * (an empty one is the current directory) */
		for (;;) {
			size_t k = strcspn(v, ":");

			if (!std_dir(v, k) && !own_path_dir(v, k))
				return false;
			if (!v[k])
				return true;
			v += k + 1;
		}
	}
	if (n == 5 && !strncmp(kv, "SHELL", 5)) {
		const char *sl = strrchr(v, '/');

		return sl && sl > v && std_dir(v, (size_t)(sl - v)) && sl[1];
	}
	/* a locale name, never a path to locale files */
	if ((n == 4 && !strncmp(kv, "LANG", 4)) || !strncmp(kv, "LC_", 3))
		return !strchr(v, '/') &&
		       strspn(kv + 3, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") >= n - 3;
	for (size_t i = 0; i < sizeof(replay_safe) / sizeof(replay_safe[0]);
	     i++)
		if (strlen(replay_safe[i]) == n && !strncmp(kv, replay_safe[i], n))
			return true;
	return false;
}

/* Every directory of path (a PATH value) standard or on our own PATH. */
static bool path_within_ours(const char *v)
{
	const char *ours = getenv("PATH");

	for (;;) {
		size_t k = strcspn(v, ":");
		bool found = k > 0 && std_dir(v, k);

		for (const char *o = ours; !found && k && o && *o;) {
			size_t m = strcspn(o, ":");

			found = m == k && !strncmp(o, v, k);
			o += m + (o[m] == ':');
		}
		if (!found)
			return false;
		if (!v[k])
			return true;
		v += k + 1;
	}
}

int env_refused(char *const *env, int n, char *const *given, int ngiven,
		char *names, size_t len)
{
	int refused = 0;
	size_t at = 0;

	if (len)
		names[0] = 0;
	for (int i = 0; i < n; i++) {
		const char *kv = env[i];
		size_t k = strcspn(kv, "=");
		bool ok = env_replay_safe(kv);

		/* what ptloom's own environment or -e already says is no
		 * new trust: an equal entry, or a PATH each of whose
		 * directories is a standard one or on ptloom's own PATH (the
		 * same shell with a directory more or less, a virtualenv
		 * left) */
		for (char **e = environ; !ok && *e; e++)
			ok = !strcmp(*e, kv);
		if (!ok && k == 4 && !strncmp(kv, "PATH", 4))
			ok = path_within_ours(kv + 5);
		for (int j = 0; !ok && j < ngiven; j++)
			ok = !strncmp(given[j], kv, k) && given[j][k] == '=';
		if (ok)
			continue;
		if (++refused <= 16 && at < len) {
			char name[256];

			snprintf(name, sizeof(name), "%.*s",
				 (int)(k < 200 ? k : 200), kv);
			at += (size_t)snprintf(names + at, len - at, "%s%s",
					       refused > 1 ? ", " : "",
					       esc(name));
		}
	}
	if (refused > 16 && at < len)
		snprintf(names + at, len - at, " and %d more", refused - 16);
	return refused;
}

int program_setup(struct program *p, int argc, char **argv,
		  const struct common_opts *o)
{
	memset(p, 0, sizeof(*p));
	if (argc < 1) {
		fprintf(stderr, "ptloom: no program given (usage: ... -- "
				"PROGRAM [ARGS...])\n");
		return -1;
	}
	p->path = tracer_find_program(argv[0]);
	if (!p->path) {
		fprintf(stderr, "ptloom: %s: %s\n", argv[0],
			errno == EACCES ? "not an executable file"
					: "program not found");
		return -1;
	}
	char why[512];

	if (elf_check_program(p->path, why, sizeof(why))) {
		fprintf(stderr, "ptloom: %s\n", why);
		free(p->path);
		p->path = NULL;
		return -1;
	}
	p->argc = argc;
	p->argv = calloc((size_t)argc + 1, sizeof(char *));
	p->exec_argv = calloc((size_t)argc + 1, sizeof(char *));
	for (int i = 0; i < argc; i++) {
		p->argv[i] = strdup(argv[i]);
		p->exec_argv[i] = p->argv[i];
	}
	p->exec_argv[0] = p->path;
	p->argv0 = p->argv[0]; /* what a shell would give it */
	p->envp = calloc(1, sizeof(char *));
	for (char **e = environ; *e; e++) {
		if (keep_var(*e, o->keep_env)) {
			program_setenv(p, *e);
			continue;
		}
		/* its name, for the note a failure on the first run gives */
		size_t n = strcspn(*e, "="), have = p->left_out ?
			strlen(p->left_out) : 0;

		if (!strncmp(*e, "GLIBC_TUNABLES=", 15))
			continue;
		p->nleft_out++;
		if (have + n > 4000)
			continue; /* (counted, not named) */
		p->left_out = realloc(p->left_out, have + n + 3);
		snprintf(p->left_out + have, n + 3, "%s%.*s", have ? ", " : "",
			 (int)n, *e);
		p->nnamed_out++;
	}
	/* rseq registration is not needed and cannot affect schedules */
	program_setenv(p, PTLOOM_TUNABLES);
	for (int i = 0; i < o->nenv_extra; i++)
		program_setenv(p, o->env_extra[i]);
	leak_check_off(p);
	qsort(p->envp, (size_t)p->nenv, sizeof(char *), cmp_str);
	char buf[4096];

	shell_join(buf, sizeof(buf), p->argv, p->argc);
	p->display = strdup(buf);
	return 0;
}

void program_free(struct program *p)
{
	for (int i = 0; i < p->argc; i++)
		free(p->argv[i]);
	for (int i = 0; i < p->nenv; i++)
		free(p->envp[i]);
	free(p->argv);
	free(p->exec_argv);
	free(p->envp);
	free(p->left_out);
	free(p->path);
	free(p->display);
	memset(p, 0, sizeof(*p));
}

int shell_split(const char *s, char ***out)
{
	size_t len = strlen(s), n = 0;
	char **argv = calloc(len / 2 + 2, sizeof(char *));
	char *buf = malloc(len + 1), *w = buf;

	if (!argv || !buf) {
		free(argv);
		free(buf);
		return -1;
	}
	*out = argv;
	for (const char *p = s;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		argv[n++] = w;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '\'') {
				const char *e = strchr(p + 1, '\'');

				if (!e)
					goto bad;
				memcpy(w, p + 1, (size_t)(e - p - 1));
				w += e - p - 1;
				p = e + 1;
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' && p[1] &&
					    strchr("\"\\$`", p[1]))
						p++;
					*w++ = *p;
				}
				if (*p != '"')
					goto bad;
				p++;
			} else if (*p == '\\' && p[1]) {
				*w++ = p[1];
				p += 2;
			} else {
				*w++ = *p++;
			}
		}
		*w++ = 0;
	}
	argv[n] = NULL;
	if (!n)
		goto bad;
	return (int)n;
bad:
	free(buf);
	free(argv);
	*out = NULL;
	return -1;
}

void shell_join(char *buf, size_t len, char *const *argv, int argc)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < argc && off < len; i++) {
		const char *a = argv[i];
		bool plain = *a != 0;

		for (const char *c = a; *c; c++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
				    "QRSTUVWXYZ0123456789-_./=:,+@%", *c))
				plain = false;
		off += (size_t)snprintf(buf + off, len - off, "%s", i ? " " : "");
		if (plain) {
			off += (size_t)snprintf(buf + off, len - off, "%s", a);
			continue;
		}
		off += (size_t)snprintf(buf + off, len - off, "'");
		for (const char *c = a; *c && off < len; c++)
			off += (size_t)snprintf(buf + off, len - off, "%s",
						*c == '\'' ? "'\\''"
							   : (char[]){ *c, 0 });
		off += (size_t)snprintf(buf + off, len - off, "'");
	}
}

/* The symbolizer: analysis/symbols.c on the live process. */
static struct symbols *sym_live;

static void sym_attach(void *ctx, int pid)
{
	(void)ctx;
	if (symbols_open(&sym_live, pid))
		sym_live = NULL;
}

static void sym_detach(void *ctx)
{
	(void)ctx;
	if (sym_live)
		symbols_close(sym_live);
	sym_live = NULL;
}

static void sym_location(void *ctx, int tid, char *buf, size_t len)
{
	(void)ctx;
	buf[0] = 0;
	if (sym_live)
		symbols_user_location(sym_live, tid, buf, len);
}

static void sym_backtrace(void *ctx, int tid, char *buf, size_t len)
{
	uint64_t pcs[64];
	size_t off = 0;

	(void)ctx;
	buf[0] = 0;
	if (!sym_live)
		return;
	int n = symbols_backtrace(sym_live, tid, pcs, 64);

	for (int i = 0; i < n && off + 1 < len; i++) {
		char f[LOC_MAX];

		/* a return address names the call before it */
		symbols_describe_code(sym_live, i ? pcs[i] - 1 : pcs[i], f,
				      sizeof(f));
		off += (size_t)snprintf(buf + off, len - off, "%s#%d %s",
					i ? "\n" : "", i, f);
	}
	if (off >= len && len > 4)
		memcpy(buf + len - 4, "...", 4); /* cut: say so */
}

static void sym_code(void *ctx, uint64_t pc, char *buf, size_t len)
{
	(void)ctx;
	if (sym_live)
		symbols_describe_code(sym_live, pc, buf, len);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)pc);
}

static void sym_data(void *ctx, uint64_t addr, char *buf, size_t len)
{
	(void)ctx;
	if (sym_live)
		symbols_describe_data(sym_live, addr, buf, len);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}

struct symbolizer *cli_symbolizer(void)
{
	static struct symbolizer s = {
		.attach = sym_attach,
		.detach = sym_detach,
		.location = sym_location,
		.backtrace = sym_backtrace,
		.code = sym_code,
		.data = sym_data,
	};

	return &s;
}

void agent_note(const char *why)
{
	if (why[0])
		fprintf(stderr, "ptloom: note: a process ran without the "
				"in-process agent (%s): its clock reads were "
				"ptrace stops\n",
			why);
}

void session_config_init(struct session_config *cfg, const struct program *p,
			 const struct common_opts *o)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->argv = p->exec_argv;
	cfg->argv0 = p->argv0;
	cfg->envp = p->envp;
	cfg->seed = o->seed;
	cfg->points = o->points;
	cfg->max_steps = o->max_steps;
	cfg->timeout = o->timeout;
	cfg->free_children = o->free_children;
	cfg->fail_on_child_crash = o->fail_on_child_crash;
	/* the environment's switch reaches every command (suite, through,
	 * minimize, races) */
	const char *nf = getenv("PTLOOM_NO_FAST_PATH");

	cfg->no_fast_path = o->no_fast_path || (nf && *nf && strcmp(nf, "0"));
	cfg->clock_realtime_ns = o->clock_realtime_ns;
	cfg->cpu = -1;
	cpu_set_t set;
	static cpu_set_t native;
	static bool have_native;

	/* the CPUs we were started with, before the pin below: the program
	 * is told them (tracer/syscall.c), and -j workers spread over them */
	if (!have_native) {
		CPU_ZERO(&native);
		if (sched_getaffinity(0, sizeof(native), &native))
			CPU_ZERO(&native);
		have_native = true;
	}
	cfg->cpus = native;
	/* the CPU we were started on among the allowed ones: parallel
	 * ptloom processes spread instead of all sharing the first CPU */
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int here = sched_getcpu();

		if (here >= 0 && CPU_ISSET(here, &set))
			cfg->cpu = here;
		for (int i = 0; cfg->cpu < 0 && i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				cfg->cpu = i;
	}
	if (cfg->cpu >= 0) {
		/* the supervisor and the tracee on one CPU: a wake-up across
		 * CPUs costs 20-50 us here, on one about 4 */
		CPU_ZERO(&set);
		CPU_SET(cfg->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	cfg->pass_output = false;
	cfg->interrupted = &cli_interrupted;
	cfg->sym = cli_symbolizer();
	cfg->spin_ms = 0;
	python_setup(cfg, p, o);
}

/*
 * A CPython program: Python-level scheduling under the GIL (its
 * eval-breaker checks are the preemption points, analysis/python.c), with
 * libc's synchronisation calls as non-preemptive points for the trace;
 * --points adds C-level points.  Said once when it cannot be done.
 */
static bool is_script(const char *path)
{
	char b[2] = "";
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	bool yes = fread(b, 1, 2, f) == 2 && b[0] == '#' && b[1] == '!';

	fclose(f);
	return yes;
}

static struct python_info pi;

void python_note_children(const struct session_config *cfg,
			  const struct common_opts *o)
{
	static bool said;
	const char *why = python_policy_why(cfg->policy);

	if (!why || said || o->quiet || (pi.why[0] && !strcmp(why, pi.why)))
		return;
	said = true;
	fprintf(stderr, "ptloom: %s; using C-level scheduling points in that "
			"process\n", why);
}

static void python_setup(struct session_config *cfg, const struct program *p,
			 const struct common_opts *o)
{
	static struct sched_policy *pol;
	static char done[4096];
	static bool said;
	static struct probe_exec pe;

	const char *knob = getenv("PTLOOM_PYTHON");
	const char *wrap = getenv("PTLOOM_WRAPPER");

	if (knob && !strcmp(knob, "off"))
		return; /* C-level scheduling (bench/python.sh compares) */
	if (strcmp(done, p->path)) {
		char exe[4096];
		bool keep = wrap && !strcmp(wrap, "keep");

		snprintf(done, sizeof(done), "%s", p->path);
		python_policy_free(pol);
		pol = NULL;
		free_strings(pe.argv);
		free_strings(pe.envp);
		memset(&pe, 0, sizeof(pe));
		/* a script that is no Python script (a pyenv shim): what it
		 * runs once it has threads, found by running it once */
		if (python_detect(p->path, &pi) == 0 && !pi.is_python &&
		    is_script(p->path) &&
		    python_probe(cfg, exe, sizeof(exe), keep ? NULL : &pe) == 0)
			python_detect(exe, &pi);
		/* every process of the tree that execs a CPython gets the
		 * Python level (the command's own, or a shell's, make's
		 * child): the policy decides at each exec */
		pol = python_policy_new(pi.usable ? &pi : NULL,
					o->points & POINTS_CLEVEL);
		if (!pi.is_python || !pe.argv) {
			free_strings(pe.argv);
			free_strings(pe.envp);
			pe.argv = pe.envp = NULL;
		}
		/*
		 * The wrapper (pyenv's shim runs some 40 processes of bash
		 * and coreutils before its last exec) ends by exec'ing the
		 * interpreter with nothing else left running and nothing
		 * else changed but argv and the environment: every run
		 * starts at that exec.  The wrapper's own processes ran in
		 * the probe; exploring their orders would be most of every
		 * run and of every bound, and none of the program's.
		 */
		if (pe.argv && !o->quiet)
			fprintf(stderr,
				"ptloom: %s is a wrapper that execs %s; each "
				"run starts at that exec (PTLOOM_WRAPPER=keep "
				"runs the wrapper in every run)\n",
				p->path, pe.argv[0]);
		else if (pi.is_python && pe.why[0] && !o->quiet)
			fprintf(stderr,
				"ptloom: %s: runs start with the wrapper: "
				"at its last exec %s\n",
				p->path, pe.why);
	}
	if (pe.argv) {
		cfg->argv = pe.argv;
		cfg->argv0 = NULL; /* the wrapper's exec, as it was made */
		cfg->envp = pe.envp;
	}
	if (!pi.usable) {
		if (pi.is_python && pi.why[0] && !said && !o->quiet)
			fprintf(stderr, "ptloom: %s; using C-level scheduling "
					"points\n", pi.why);
		said = true;
	}
	cfg->policy = pol;
	/* the interpreter's process gets no C-level points of its own code
	 * (tracer/bp.c), its child processes keep them
	 * (session_policy_process); race discovery observes the program's
	 * C extensions there, not the interpreter (observe_object) */
}

const char *signal_name(int sig)
{
	static char buf[32];
	const char *n = sigabbrev_np(sig);

	if (sanitizer_name(sig))
		return sanitizer_name(sig); /* a sanitizer's report */
	if (!n) {
		snprintf(buf, sizeof(buf), "signal %d", sig);
		return buf;
	}
	snprintf(buf, sizeof(buf), "SIG%s", n);
	return buf;
}

void describe_failure(const struct run_result *r, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "%s",
				      failure_kind_name(r->failure));

	if (r->failure == FAIL_CRASH && off < len)
		off += (size_t)snprintf(buf + off, len - off, " %s",
					signal_name(r->signal));
	if (r->failure == FAIL_EXIT && off < len)
		off += (size_t)snprintf(buf + off, len - off, " status %d",
					r->exit_status);
	if (r->thread_label[0] && off < len)
		off += (size_t)snprintf(buf + off, len - off, " in %s",
					r->thread_label);
	else if (r->thread >= 0 && off < len)
		off += (size_t)snprintf(buf + off, len - off, " in T%d",
					r->thread);
	if (r->location[0] && off < len)
		snprintf(buf + off, len - off, " (%s)", esc(r->location));
}

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

#define LD_SO_CACHE "/etc/ld.so.cache"

/*
 * The identity of path now; its content hashed only when it is a regular
 * file of at most max bytes with content (a /proc or /sys file, whose size
 * says 0, is never read: /proc/self/pagemap is terabytes), and stopping on
 * SIGINT/SIGTERM.  A schedule file names the objects, so max is the size
 * it recorded.
 */
static int identify(const char *path, struct loaded_object *o, uint64_t max)
{
	struct stat sb;
	int n;

	memset(o, 0, sizeof(*o));
	if (stat(path, &sb))
		return -errno;
	o->size = (uint64_t)sb.st_size;
	o->mtime_ns = (uint64_t)sb.st_mtim.tv_sec * 1000000000ull +
		      (uint64_t)sb.st_mtim.tv_nsec;
	if (!S_ISREG(sb.st_mode) || !sb.st_size)
		return 0;
	n = symbols_elf_build_id(path, o->build_id, sizeof(o->build_id));
	o->build_id_len = n > 0 ? (size_t)n : 0;
	if (!o->build_id_len && o->size <= max) {
		uint64_t size;

		schedule_hash_file_max(path, max, &cli_interrupted, &o->hash,
				       &size);
	}
	return 0;
}

int object_identify(const char *path, struct loaded_object *o)
{
	return identify(path, o, UINT64_MAX);
}

/* The objects of run r, then /etc/ld.so.cache, with their identity. */
static void objects_from_run(struct schedule *s, const struct run_result *r)
{
	int n = r->nobjects < SCHEDULE_MAX_OBJECTS - 1 ? r->nobjects
						       : SCHEDULE_MAX_OBJECTS - 1;

	s->objects = calloc((size_t)n + 1, sizeof(*s->objects));
	if (!s->objects)
		return;
	for (int i = 0; i <= n; i++) {
		const char *path = i < n ? r->objects[i] : LD_SO_CACHE;
		struct loaded_object *o = &s->objects[s->nobjects];

		if (!path || !*path || strlen(path) > SCHEDULE_MAX_PATH ||
		    (i == n && (!n || access(path, R_OK))))
			continue;
		object_identify(path, o); /* gone: all zero */
		if ((o->path = strdup(path)))
			s->nobjects++;
	}
}

static void hex8(char *buf, const uint8_t *id, size_t len)
{
	size_t k = len < 8 ? len : 8;

	for (size_t i = 0; i < k; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * k] = 0;
}

/* How o differs from the file as it is now: "" if it does not. */
static void object_change(const struct loaded_object *o, char *buf,
			  size_t len)
{
	struct loaded_object now;
	char a[20], b[20];

	buf[0] = 0;
	if (identify(o->path, &now, o->size)) {
		snprintf(buf, len, "%s is gone", esc(o->path));
		return;
	}
	if (o->build_id_len || now.build_id_len) {
		if (o->build_id_len != now.build_id_len ||
		    memcmp(o->build_id, now.build_id, o->build_id_len)) {
			hex8(a, o->build_id, o->build_id_len);
			hex8(b, now.build_id, now.build_id_len);
			snprintf(buf, len, "%s changed (build-id %s%s, now %s%s)",
				 esc(o->path), a[0] ? a : "none",
				 o->build_id_len > 8 ? "..." : "",
				 b[0] ? b : "none",
				 now.build_id_len > 8 ? "..." : "");
		}
		return;
	}
	if (o->hash ? o->hash != now.hash
		    : o->size != now.size || o->mtime_ns != now.mtime_ns)
		snprintf(buf, len, "%s changed (%llu bytes, now %llu%s)",
			 esc(o->path), (unsigned long long)o->size,
			 (unsigned long long)now.size,
			 o->size == now.size ? ", other content" : "");
}

int objects_changed(const struct schedule *s, char *buf, size_t len)
{
	char one[1200];
	int n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < s->nobjects && !cli_interrupted; i++) {
		object_change(&s->objects[i], one, sizeof(one));
		if (!one[0])
			continue;
		if (!n++)
			snprintf(buf, len, "%s since the recording", one);
	}
	if (n > 1) {
		size_t k = strlen(buf);

		snprintf(buf + k, len - k, " (and %d more loaded object%s)",
			 n - 1, n > 2 ? "s" : "");
	}
	return n;
}

int objects_differ(const struct schedule *s, const struct run_result *r,
		   char *buf, size_t len)
{
	buf[0] = 0;
	if (!s->nobjects || !r->objects)
		return 0;
	/* mapped now, not then */
	for (int i = 0; i < r->nobjects; i++) {
		bool found = false;

		for (size_t k = 0; k < s->nobjects && !found; k++)
			found = !strcmp(s->objects[k].path, r->objects[i]);
		if (!found) {
			snprintf(buf, len, "the program now maps %s, which "
					   "the recording did not",
				 esc(r->objects[i]));
			return 1;
		}
	}
	/* mapped then, not now (ld.so.cache is never mapped) */
	for (size_t k = 0; k < s->nobjects; k++) {
		bool found = !strcmp(s->objects[k].path, LD_SO_CACHE);

		for (int i = 0; i < r->nobjects && !found; i++)
			found = !strcmp(s->objects[k].path, r->objects[i]);
		if (!found) {
			snprintf(buf, len, "the program no longer maps %s, "
					   "which the recording did",
				 esc(s->objects[k].path));
			return 1;
		}
	}
	return 0;
}

int ids_differ(const struct schedule *s, const struct run_result *r,
	       char *buf, size_t len)
{
	int t = r->id_refused_thread;

	buf[0] = 0;
	if (!r->ids_refused || t < 0 || t >= s->nthread_ids)
		return 0;
	snprintf(buf, len, "T%d did not get its recorded %s %d (%s)%s: a "
			   "program that reads its ids (prints its pid, names "
			   "a file after it) runs differently",
		 t, t == 0 ? "pid" : "id", (int)s->thread_ids[t],
		 tracer_may_set_ids() ? "another process has it"
				      : "asking for an id takes root or "
					"CAP_CHECKPOINT_RESTORE",
		 r->ids_refused > 1 ? " and others did not either" : "");
	return 1;
}

void schedule_from_run(struct schedule *s, const struct program *p,
		       const struct common_opts *o, const char *strategy,
		       int bound, const struct run_result *r)
{
	memset(s, 0, sizeof(*s));
	s->format_version = SCHEDULE_FORMAT_VERSION;
	s->program = xstrdup(p->path);
	s->argc = p->argc;
	s->argv = calloc((size_t)p->argc + 1, sizeof(char *));
	for (int i = 0; i < p->argc; i++)
		s->argv[i] = xstrdup(p->argv[i]);
	s->nenv = p->nenv;
	s->env = calloc((size_t)p->nenv + 1, sizeof(char *));
	for (int i = 0; i < p->nenv; i++)
		s->env[i] = xstrdup(p->envp[i]);
	char cwd[PATH_MAX];

	s->cwd = getcwd(cwd, sizeof(cwd)) ? xstrdup(cwd) : NULL;
	int n = symbols_elf_build_id(p->path, s->build_id, sizeof(s->build_id));

	s->build_id_len = n > 0 ? (size_t)n : 0;
	schedule_hash_file(p->path, &s->program_hash, &s->program_size);
	s->points = o->points;
	s->seed = o->seed;
	s->strategy = xstrdup(strategy);
	s->preemption_bound = (uint32_t)bound;
	s->clock_start_realtime_ns = o->clock_realtime_ns
					     ? o->clock_realtime_ns
					     : CLOCK_REALTIME_DEFAULT_NS;
	s->clock_start_monotonic_ns = CLOCK_MONOTONIC_START_NS;
	s->clock_quantum_ns = 1000;
	s->ptloom_version = xstrdup(PTLOOM_VERSION);
	if (r->ndecisions) {
		s->decisions = malloc(r->ndecisions * sizeof(*s->decisions));
		memcpy(s->decisions, r->decisions,
		       r->ndecisions * sizeof(*s->decisions));
		s->ndecisions = r->ndecisions;
	}
	s->failure = r->failure;
	s->signal = r->signal;
	s->exit_status = r->exit_status;
	s->fail_thread = r->thread;
	s->location = xstrdup(r->location);
	s->message = xstrdup(r->message);
	s->preemptions = r->preemptions;
	s->trace_hash = r->trace_hash;
	if (r->nevents) {
		s->events = malloc(r->nevents * sizeof(*s->events));
		memcpy(s->events, r->events, r->nevents * sizeof(*s->events));
		s->nevents = r->nevents;
	}
	if (r->nsyms) {
		s->syms = calloc(r->nsyms, sizeof(*s->syms));
		for (size_t i = 0; i < r->nsyms; i++) {
			s->syms[i] = r->syms[i];
			s->syms[i].text = xstrdup(r->syms[i].text);
		}
		s->nsyms = r->nsyms;
	}
	if (r->nthreads) {
		s->thread_names = calloc((size_t)r->nthreads, sizeof(char *));
		s->nthread_names = r->nthreads;
		for (int i = 0; i < r->nthreads; i++)
			s->thread_names[i] = xstrdup(r->threads[i].name);
		s->thread_backtraces = calloc((size_t)r->nthreads,
					      sizeof(char *));
		s->nthread_backtraces = s->thread_backtraces ? r->nthreads : 0;
		for (int i = 0; i < s->nthread_backtraces; i++)
			s->thread_backtraces[i] = xstrdup(
				r->threads[i].backtrace);
	}
	if (r->nids > 0 && (s->thread_ids = calloc((size_t)r->nids,
						    sizeof(*s->thread_ids)))) {
		memcpy(s->thread_ids, r->ids,
		       (size_t)r->nids * sizeof(*s->thread_ids));
		s->nthread_ids = r->nids;
	}
	objects_from_run(s, r);
}

/* probe_dir(): a kernel file system (/proc, /sys, ...) */
#define E_PSEUDO_FS 4096

/* The reason for probe_dir's error e. */
static const char *probe_why(int e)
{
	return e == -E_PSEUDO_FS ? "it is a kernel file system (/proc, /sys, "
				   "...), where no file can be created"
				 : strerror(-e);
}

/* Can files be created in the existing directory dir?  0, -E_PSEUDO_FS
 * or -errno. */
static int probe_dir(const char *dir)
{
	char tmp[4200];
	struct stat sb;
	struct statfs fs;

	if (stat(dir, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	if (!statfs(dir, &fs) &&
	    (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC ||
	     fs.f_type == CGROUP_SUPER_MAGIC || fs.f_type == CGROUP2_SUPER_MAGIC ||
	     fs.f_type == DEBUGFS_MAGIC || fs.f_type == TRACEFS_MAGIC ||
	     fs.f_type == SECURITYFS_MAGIC || fs.f_type == DEVPTS_SUPER_MAGIC ||
	     fs.f_type == BPF_FS_MAGIC))
		return -E_PSEUDO_FS;
	snprintf(tmp, sizeof(tmp), "%s/.ptloom-probe.XXXXXX", dir);
	int fd = mkstemp(tmp);

	if (fd < 0)
		return -errno;
	close(fd);
	unlink(tmp);
	return 0;
}

/* The directory part of path ("." for none), in buf. */
static const char *dir_of(const char *path, char *buf, size_t len)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		return ".";
	if (sl == path)
		return "/";
	snprintf(buf, len, "%.*s", (int)(sl - path), path);
	return buf;
}

/*
 * Temporary files of earlier saves killed before their rename (".NAME.XXXXXX"
 * beside NAME, replayer/schedule.c and analysis/report.c): removed when
 * older than a minute, so a save in progress elsewhere is left alone.
 * match says which names are ours.
 */
static void clean_stale_temps(const char *dir, bool (*match)(const char *,
							       const void *),
			      const void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);

	while (d && (e = readdir(d))) {
		struct stat sb;
		char path[4400];

		if (!match(e->d_name, arg))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!lstat(path, &sb) && S_ISREG(sb.st_mode) &&
		    sb.st_mtime + 60 < now)
			unlink(path);
	}
	if (d)
		closedir(d);
}

/* ".<hex id>-<suffix>.pb.XXXXXX" */
static bool schedule_temp(const char *n, const void *arg)
{
	size_t len = strlen(n);

	(void)arg;
	if (n[0] != '.' || len < 12)
		return false;
	const char *dash = strchr(n, '-'), *pb = strstr(n, ".pb.");

	return dash && pb && pb > dash && strlen(pb + 4) == 6 &&
	       strspn(n + 1, "0123456789abcdef") == (size_t)(dash - n - 1);
}

/* ".ptloom-tmp.REPORT.XXXXXX" for the report's base name (write_atomically):
 * only ptloom's own prefix, never a user's "REPORT.backup" */
static bool report_temp(const char *n, const void *arg)
{
	const char *base = arg;
	size_t p = strlen(REPORT_TEMP_PREFIX), k = strlen(base);

	if (strncmp(n, REPORT_TEMP_PREFIX, p))
		return false;
	n += p;
	return !strncmp(n, base, k) && n[k] == '.' &&
	       strlen(n + k + 1) == 6 &&
	       strspn(n + k + 1, "abcdefghijklmnopqrstuvwxyz"
				 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == 6;
}

int check_output_paths(const struct common_opts *o, bool out_dir)
{
	char buf[4096];
	struct stat sb;
	int e;

	if (out_dir && o->out_dir) {
		/* the directory, or the nearest ancestor that exists */
		snprintf(buf, sizeof(buf), "%s", o->out_dir);
		while (stat(buf, &sb) && errno == ENOENT && strchr(buf, '/') &&
		       strcmp(buf, "/"))
			*strrchr(buf, '/') = 0;
		if (!buf[0])
			snprintf(buf, sizeof(buf), "%s",
				 o->out_dir[0] == '/' ? "/" : ".");
		if (stat(buf, &sb) && errno == ENOENT)
			snprintf(buf, sizeof(buf), ".");
		e = probe_dir(buf);
		if (e) {
			fprintf(stderr, "ptloom: -o %s: cannot write schedule "
					"files there: %s%s%s\n",
				esc(o->out_dir), probe_why(e),
				strcmp(buf, o->out_dir) ? " in " : "",
				strcmp(buf, o->out_dir) ? esc(buf) : "");
			return -1;
		}
		if (!strcmp(buf, o->out_dir))
			clean_stale_temps(buf, schedule_temp, NULL);
	}
	if (o->report) {
		char d[4096];
		const char *dir = dir_of(o->report, d, sizeof(d));
		const char *base = strrchr(o->report, '/');

		base = base ? base + 1 : o->report;
		if (!*base || (!stat(o->report, &sb) && S_ISDIR(sb.st_mode))) {
			fprintf(stderr, "ptloom: --report %s: is a directory, "
					"not a file\n", esc(o->report));
			return -1;
		}
		e = probe_dir(dir);
		if (e) {
			fprintf(stderr, "ptloom: --report %s: cannot write "
					"there: %s\n", esc(o->report),
				e == -ENOENT ? "its directory does not exist"
				: e == -ENOTDIR ? "its parent is not a directory"
						: probe_why(e));
			return -1;
		}
		clean_stale_temps(dir, report_temp, base);
	}
	return 0;
}

int save_schedule(const struct schedule *s, const char *dir, const char *id,
		  const char *suffix, char *path, size_t len)
{
	int e;

	snprintf(path, len, "%s/%s-%s.pb", dir, id, suffix);
	if ((e = make_dirs(dir, 0777)))
		return e;
	return schedule_save(path, s);
}

uint64_t sym_probes;

/*
 * The symbol index's hash: SipHash-1-3 of (addr, data) under a key drawn
 * once per process.  A schedule file is untrusted, and with a fixed hash
 * a crafted symbol table whose addresses all land in one probe chain made
 * `show` quadratic (50,000 symbols: minutes); with a secret key the file
 * cannot aim at a chain.  See tests/integration/test_hardening.c.
 */
static uint64_t sip_k0, sip_k1;

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                            \
	do {                                                                \
		v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32);   \
		v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                      \
		v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                      \
		v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32);   \
	} while (0)

static uint64_t sym_hash(uint64_t addr, bool data)
{
	uint64_t v0 = sip_k0 ^ 0x736f6d6570736575ull;
	uint64_t v1 = sip_k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = sip_k0 ^ 0x6c7967656e657261ull;
	uint64_t v3 = sip_k1 ^ 0x7465646279746573ull;
	uint64_t m[2] = { addr, (uint64_t)data | (16ull << 56) };

	for (int i = 0; i < 2; i++) {
		v3 ^= m[i];
		SIPROUND;
		v0 ^= m[i];
	}
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static void sym_key(void)
{
	uint64_t k[2];

	if (sip_k0 | sip_k1)
		return;
	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k)) {
		struct timespec ts;

		/* no entropy: still not a constant a file can aim at */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		k[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^
		       (uint64_t)getpid();
		k[1] = (uint64_t)ts.tv_sec ^ (uintptr_t)&ts;
	}
	sip_k0 = k[0];
	sip_k1 = k[1] | 1;
}

int sym_index_build(struct sym_index *ix, const struct sym_entry *syms,
		    size_t n)
{
	memset(ix, 0, sizeof(*ix));
	sym_key();
	ix->syms = syms;
	ix->n = n;
	if (n < 16)
		return 0; /* a scan is as quick */
	size_t cap = 32;

	while (cap < 2 * n)
		cap *= 2;
	ix->slot = malloc(cap * sizeof(*ix->slot));
	if (!ix->slot)
		return -ENOMEM; /* still usable: lookups scan */
	memset(ix->slot, 0xff, cap * sizeof(*ix->slot));
	ix->cap = cap;
	for (size_t i = 0; i < n; i++) {
		size_t k = sym_hash(syms[i].addr, syms[i].data) & (cap - 1);

		if (cli_interrupted)
			return -EINTR;
		sym_probes++;
		while (ix->slot[k] != UINT32_MAX) {
			const struct sym_entry *o = &syms[ix->slot[k]];

			sym_probes++;
			if (o->addr == syms[i].addr && o->data == syms[i].data)
				break; /* the first one wins, as in a scan */
			k = (k + 1) & (cap - 1);
		}
		if (ix->slot[k] == UINT32_MAX)
			ix->slot[k] = (uint32_t)i;
	}
	return 0;
}

int sym_index_build_view(struct sym_index *ix, const struct schedule_view *v)
{
	size_t cap = 32, at = v->syms_at, where, w2;
	uint64_t addr, a2;
	bool data, d2;

	memset(ix, 0, sizeof(*ix));
	sym_key();
	ix->view = v;
	ix->n = v->s.nsyms;
	while (cap < 2 * ix->n)
		cap *= 2;
	ix->slot = malloc(cap * sizeof(*ix->slot));
	if (!ix->slot)
		return -ENOMEM; /* no names then */
	memset(ix->slot, 0xff, cap * sizeof(*ix->slot));
	ix->cap = cap;
	cli_test_interrupt("symbols");
	while (schedule_view_symbol(v, &at, &where, &addr, &data, NULL, 0) >
	       0) {
		size_t k = sym_hash(addr, data) & (cap - 1);

		if (cli_interrupted)
			return -EINTR; /* the caller stops too */
		sym_probes++;

		while (ix->slot[k] != UINT32_MAX) {
			size_t o = ix->slot[k];

			sym_probes++;
			if (schedule_view_symbol(v, &o, &w2, &a2, &d2, NULL,
						 0) > 0 &&
			    a2 == addr && d2 == data)
				break; /* the first one wins, as in a scan */
			k = (k + 1) & (cap - 1);
		}
		if (ix->slot[k] == UINT32_MAX)
			ix->slot[k] = (uint32_t)where;
	}
	return 0;
}

void sym_index_free(struct sym_index *ix)
{
	free(ix->slot);
	memset(ix, 0, sizeof(*ix));
}

/* The text of the symbol of addr (data: an object), or NULL; a view's
 * into buf. */
static const char *sym_find(const struct sym_index *ix, uint64_t addr,
			    bool data, char *buf, size_t len)
{
	if (ix->view) {
		for (size_t k = sym_hash(addr, data) & (ix->cap - 1);
		     ix->slot; k = (k + 1) & (ix->cap - 1)) {
			size_t at = ix->slot[k], where;
			uint64_t a;
			bool d;

			sym_probes++;
			if (at == UINT32_MAX ||
			    schedule_view_symbol(ix->view, &at, &where, &a, &d,
						 buf, len) <= 0)
				return NULL;
			if (a == addr && d == data)
				return buf;
		}
		return NULL;
	}
	if (!ix->slot) {
		for (size_t i = 0; i < ix->n; i++) {
			sym_probes++;
			if (ix->syms[i].addr == addr &&
			    ix->syms[i].data == data)
				return ix->syms[i].text;
		}
		return NULL;
	}
	for (size_t k = sym_hash(addr, data) & (ix->cap - 1);;
	     k = (k + 1) & (ix->cap - 1)) {
		sym_probes++;
		if (ix->slot[k] == UINT32_MAX)
			return NULL;
		const struct sym_entry *e = &ix->syms[ix->slot[k]];

		if (e->addr == addr && e->data == data)
			return e->text;
	}
}

static void event_line_raw(const struct event *e,
			   const struct sym_index *ix, char *buf, size_t len)
{
	char obj[160] = "", tname[48];
	char ob[SCHEDULE_MAX_SYMBOL_TEXT + 1], wb[SCHEDULE_MAX_SYMBOL_TEXT + 1];
	const char *o = e->obj && !(e->obj >> 63)
				? sym_find(ix, e->obj, true, ob, sizeof(ob))
				: NULL;
	const char *where = NULL;

	if (EVENT_PC_IS_POLICY(e->pc)) /* a Python frame */
		where = sym_find(ix, e->pc, false, wb, sizeof(wb));
	else if (e->kind == OP_CALL || e->kind == OP_ATOMIC ||
		 e->kind == OP_ACCESS || e->kind == OP_SPIN)
		where = sym_find(ix, e->pc + (e->kind != OP_CALL), false, wb,
				 sizeof(wb));
	if (o && *o)
		snprintf(obj, sizeof(obj), "%s%s",
			 o[0] == '0' ? "" : "&", o);
	else if (e->obj >> 63)
		snprintf(obj, sizeof(obj), "fd %lld", (long long)e->arg);
	else if (e->obj)
		snprintf(obj, sizeof(obj), "0x%llx",
			 (unsigned long long)e->obj);
	snprintf(tname, sizeof(tname), "T%u", e->thread);
	const char *op = e->kind == OP_CALL ? call_fn_name(e->fn)
					     : op_kind_name(e->kind);

	const char *at = where && *where ? " at " : "";

	if (!where)
		where = "";
	if (e->kind == OP_ACCESS && e->fn == TSO_BUFFERED) {
		snprintf(buf, len, "%s stores to %s%s%s into its store buffer: "
			 "no other thread sees it yet", tname,
			 obj[0] ? obj : "memory", at, where);
		return;
	}
	if (e->kind == OP_ACCESS && e->fn == TSO_DRAIN) {
		snprintf(buf, len, "%s's store buffer drains: its stores reach "
			 "memory (%s first)%s%s", tname,
			 obj[0] ? obj : "?", at, where);
		return;
	}
	if (e->kind == OP_ACCESS && e->fn == TSO_WINDOW) {
		snprintf(buf, len, "%s access(%s)%s%s, its stores still in its "
			 "store buffer", tname, obj, at, where);
		return;
	}
	switch (e->kind) {
	case OP_START:
	case OP_WOKEN:
	case OP_TIMEOUT:
	case OP_YIELD:
		snprintf(buf, len, "%s %s%s%s", tname,
			 e->kind == OP_START   ? "starts"
			 : e->kind == OP_WOKEN ? "is woken"
			 : e->kind == OP_TIMEOUT ? "times out"
						 : "yields",
			 at, where);
		return;
	case OP_TIMER:
		if (e->arg > 0 && e->arg < 65)
			snprintf(buf, len, "a timer fires: SIG%s to %s",
				 sigabbrev_np((int)e->arg)
					 ? sigabbrev_np((int)e->arg)
					 : "RT",
				 tname);
		else
			snprintf(buf, len, "a timer fires (%s's process)",
				 tname);
		return;
	case OP_DELAY: { /* an event loop's wait (tracer/evloop.c) */
		static const char *const waits[] = {
			"poll",	      "ppoll",	     "select",	     "pselect6",
			"epoll_wait", "epoll_pwait", "epoll_pwait2",
		};
		int w = e->fn ? EVL_FN_WAIT(e->fn) : 7;
		const char *wn = w < 7 ? waits[w] : "wait";
		const char *d = e->obj ? sym_find(ix, e->obj, true, ob,
						  sizeof(ob))
				       : NULL;

		if (e->fn && EVL_FN_TIMER(e->fn))
			snprintf(buf, len,
				 "%s %s: its timeout (%lld ms) comes first, "
				 "before what is ready%s%s",
				 tname, wn, (long long)e->arg, at, where);
		else
			snprintf(buf, len, "%s %s: %s%s(fd %lld) is seen later%s%s",
				 tname, wn, d && *d ? d : "", d && *d ? " " : "",
				 (long long)e->arg, at, where);
		return;
	}
	case OP_PYCHECK: /* where it may drop the GIL */
		snprintf(buf, len, "%s python%s%s", tname, at, where);
		return;
	case OP_EXIT:
		snprintf(buf, len, "%s exits", tname);
		return;
	case OP_EXIT_GROUP:
		snprintf(buf, len, "%s exit_group(%lld)", tname,
			 (long long)e->arg);
		return;
	case OP_CLONE:
		if (e->arg > 0)
			snprintf(buf, len, "%s has created T%lld", tname,
				 (long long)e->arg);
		else
			snprintf(buf, len, "%s creates a thread", tname);
		return;
	case OP_KILL:
		if (e->sent_sig) {
			const char *n = sigabbrev_np(e->sent_sig);
			char to[48];

			if (!e->sent_to)
				snprintf(to, sizeof(to), "a process");
			else if (e->sent_to == EVENT_TO_ALL)
				snprintf(to, sizeof(to),
					 "every process it may signal");
			else if (e->sent_to == EVENT_TO_GROUP)
				snprintf(to, sizeof(to), "a process group");
			else if (e->sent_to & EVENT_TO_PROC)
				snprintf(to, sizeof(to), "P%u",
					 e->sent_to & ~EVENT_TO_PROC);
			else if (e->sent_to - 1u == e->thread)
				snprintf(to, sizeof(to), "itself");
			else
				snprintf(to, sizeof(to), "T%u",
					 e->sent_to - 1u);
			if (n)
				snprintf(buf, len, "%s sends SIG%s to %s",
					 tname, n, to);
			else
				snprintf(buf, len, "%s sends signal %u to %s",
					 tname, e->sent_sig, to);
			return;
		}
		break;
	default:
		break;
	}
	snprintf(buf, len, "%s %s(%s)%s%s", tname, op, obj, at, where);
}

/* event_line_raw(), and the handler t ran in that step */
static void event_line_sig(const struct event *e,
			   const struct sym_index *ix, char *buf, size_t len)
{
	char raw[1024], tname[48];
	const char *n = e->handler_sig ? sigabbrev_np(e->handler_sig) : NULL;
	size_t tl;

	event_line_raw(e, ix, raw, sizeof(raw));
	tl = (size_t)snprintf(tname, sizeof(tname), "T%u ", e->thread);
	if (!e->handler_sig || e->kind == OP_TIMER ||
	    strncmp(raw, tname, tl)) {
		snprintf(buf, len, "%s", raw);
		return;
	}
	/* between this point and the thread's next one: before or after
	 * the operation depends on how ptloom carried it out (a syscall
	 * made, an instruction emulated or single-stepped), so no order
	 * is claimed */
	if (n)
		snprintf(buf, len, "%s; its SIG%s handler runs in this step",
			 raw, n);
	else
		snprintf(buf, len,
			 "%s; its handler of signal %u runs in this step", raw,
			 e->handler_sig);
}

void event_line(const struct event *e, const struct sym_entry *syms,
		size_t nsyms, const char *const *names, int nnames, char *buf,
		size_t len)
{
	struct sym_index ix = { .syms = syms, .n = nsyms };

	(void)names;
	(void)nnames;
	event_line_ix(e, &ix, buf, len);
}

void event_line_ix(const struct event *e, const struct sym_index *ix,
		   char *buf, size_t len)
{
	char raw[1024];

	/* symbol texts come from the program or a file */
	event_line_sig(e, ix, raw, sizeof(raw));
	esc_text(buf, len, raw, 0);
}

long trace_departure(const struct event *a, size_t na, const struct event *b,
		     size_t nb)
{
	size_t n = na < nb ? na : nb;

	for (size_t i = 0; i < n; i++)
		if (a[i].thread != b[i].thread || a[i].kind != b[i].kind ||
		    a[i].fn != b[i].fn || a[i].obj != b[i].obj)
			return (long)i;
	return na == nb ? -1 : (long)n;
}

void schedule_set_points(struct schedule *s, const struct user_point *p,
			 size_t n)
{
	free(s->user_points);
	s->user_points = NULL;
	s->nuser_points = 0;
	if (!n)
		return;
	s->user_points = malloc(n * sizeof(*p));
	if (!s->user_points)
		return;
	memcpy(s->user_points, p, n * sizeof(*p));
	s->nuser_points = n;
}

void schedule_failure(const struct schedule *s, struct run_result *r)
{
	memset(r, 0, sizeof(*r));
	r->failure = s->failure;
	r->signal = s->signal;
	r->exit_status = s->exit_status;
	r->thread = s->fail_thread;
	snprintf(r->location, sizeof(r->location), "%s",
		 s->location ? s->location : "");
	/* a thread of another process is saved by its label, "P1 racy T2" */
	if (s->fail_thread >= 0 && s->fail_thread < s->nthread_names &&
	    s->thread_names[s->fail_thread] &&
	    s->thread_names[s->fail_thread][0] == 'P' &&
	    strchr(s->thread_names[s->fail_thread], ' '))
		snprintf(r->thread_label, sizeof(r->thread_label), "%s",
			 s->thread_names[s->fail_thread]);
}

void describe_schedule_failure(const struct schedule *s, char *buf, size_t len)
{
	struct run_result r;

	schedule_failure(s, &r);
	describe_failure(&r, buf, len);
}

void cli_test_interrupt(const char *where)
{
	const char *v = getenv("PTLOOM_TEST_INTERRUPT");
	size_t n = strlen(where);

	if (v && !strncmp(v, where, n) && (!v[n] || v[n] == ':'))
		raise(strcmp(v + n, ":TERM") ? SIGINT : SIGTERM);
}

int exit_interrupted(void)
{
	return 128 + (cli_interrupted ? cli_interrupted : SIGINT);
}

/* Minimisation's progress line (cli_progress_begin). */
static struct {
	const char *what;
	double t0, last;
	unsigned runs;
} prog;

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_begin(const char *what, bool on)
{
	prog.what = on && isatty(2) ? what : NULL;
	prog.t0 = prog.last = wall();
	prog.runs = 0;
	if (prog.what) {
		fprintf(stderr, "\r\033[Kptloom: %s...", prog.what);
		fflush(stderr);
	}
}

void cli_progress_end(void)
{
	if (prog.what)
		fputs("\r\033[K", stderr);
	prog.what = NULL;
}

static void progress_run(void)
{
	double t = wall();

	prog.runs++;
	if (!prog.what || t - prog.last < 0.2)
		return;
	prog.last = t;
	fprintf(stderr, "\r\033[Kptloom: %s: %.1f s, %u runs, %.0f runs/s",
		prog.what, t - prog.t0, prog.runs,
		t > prog.t0 ? prog.runs / (t - prog.t0) : 0.0);
	fflush(stderr);
}

double cli_wall(void)
{
	return wall();
}

static struct {
	double until;	 /* wall() at the bound, 0 = none */
	double cap;	 /* wall() at a phase's own shorter end, 0 = none */
	double timeout;	 /* the configuration's own --timeout */
	bool hit;	 /* the bound stopped a run (or none started) */
	bool capped;	 /* the phase's cap did */
} bound;

/* Where runs under the bound must end: the bound, or a phase's cap. */
static double bound_end(void)
{
	return bound.cap > 0 && bound.cap < bound.until ? bound.cap
							: bound.until;
}

void cli_bound_begin(struct session_config *cfg, double seconds)
{
	bound.until = wall() + (seconds > 0 ? seconds : 0.001);
	bound.cap = 0;
	bound.timeout = cfg->timeout;
	bound.hit = false;
	bound.capped = false;
	cfg->stop_wall = bound.until;
}

void cli_bound_end(struct session_config *cfg)
{
	if (bound.until) {
		cfg->timeout = bound.timeout;
		cfg->stop_wall = 0;
	}
	bound.until = 0;
	bound.cap = 0;
}

void cli_bound_cap(struct session_config *cfg, double seconds)
{
	if (!bound.until)
		return;
	bound.cap = seconds > 0 ? wall() + seconds : 0;
	bound.capped = false;
	cfg->stop_wall = bound_end();
}

bool cli_bound_capped(void)
{
	return bound.capped;
}

bool cli_bound_hit(void)
{
	return cli_bound_expired();
}

bool cli_bound_expired(void)
{
	if (bound.until && wall() >= bound.until)
		bound.hit = true;
	if (bound.cap && wall() >= bound.cap && bound.cap < bound.until)
		bound.capped = true;
	return bound.hit;
}

double cli_bound_left(void)
{
	if (!bound.until)
		return -1;
	double left = bound_end() - wall();

	return left > 0 ? left : 0;
}

double cli_bound_timeout(void)
{
	return bound.timeout;
}

/* Before a run under the bound: -ETIME past it (or past the phase's cap),
 * else --timeout cut to what is left and the run stopped where the bound
 * ends (a run over it is not the failure: not kept). */
static int bound_check(struct session_config *cfg)
{
	if (!bound.until)
		return 0;
	double end = bound_end(), left = end - wall();

	if (left <= 0) {
		cli_bound_expired();
		return -ETIME;
	}
	cfg->timeout = bound.timeout > 0 && bound.timeout < left
			       ? bound.timeout
			       : left;
	cfg->stop_wall = end;
	return 0;
}

int run_by_step(void *cfg, const struct decision *dec, size_t n,
		struct run_result *out)
{
	struct replay_strategy r;
	int e;

	progress_run();
	if (cli_interrupted) {
		memset(out, 0, sizeof(*out)); /* no more runs: stop quickly */
		return -EINTR;
	}
	if ((e = bound_check(cfg))) {
		memset(out, 0, sizeof(*out));
		return e;
	}
	replay_init(&r, dec, n, false);
	struct strategy s = replay_strategy(&r);

	return session_run(cfg, &s, out);
}

uint64_t minimize_cap_steps(struct session_config *cfg,
			    const struct run_result *best)
{
	uint64_t was = cfg->max_steps;
	uint64_t cap = best->steps * MINIMIZE_STEPS_FACTOR +
		       MINIMIZE_STEPS_SLACK;

	if (best->failure != FAIL_LIVELOCK &&
	    best->steps < UINT64_MAX / (2 * MINIMIZE_STEPS_FACTOR) &&
	    (!was || cap < was))
		cfg->max_steps = cap;
	return was;
}

int run_with_strategy(void *cfg, struct strategy *s, struct run_result *out)
{
	int e = bound_check(cfg);

	if (e) {
		memset(out, 0, sizeof(*out));
		return e;
	}
	return session_run(cfg, s, out);
}

/*
 * A failure inside one process of a tree, sampled with many preemptions
 * (a test runner's worker, hundreds of preemptions in the runner's own
 * threads): dropping them costs a run each, a second a run behind
 * Criterion.  First that process's own switches alone, as few as the
 * failure needs (minimize_process); failing that, with many preemptions,
 * the same failure among placements of few preemptions on default paths,
 * the failing process's own first (minimize_search orders them so).
 */
#define PROCESS_FIRST_MIN 2   /* preemptions, at least */
#define PROCESS_SEARCH_MIN 16 /* preemptions, for the placement search */
#define PROCESS_FIRST_RUNS 60 /* runs at most */

void minimize_process_first(struct session_config *cfg,
			    struct run_result *best, struct minimize_stats *ms)
{
	struct minimize_stats more = { 0 };
	bool tree = false;

	for (int i = 0; i < best->nthreads; i++)
		tree |= best->threads[i].proc > 0;
	if (!tree || best->preemptions < PROCESS_FIRST_MIN)
		return;
	if (minimize_process(run_with_strategy, cfg, best, &more) >= 0) {
		ms->preemptions_after = best->preemptions;
		ms->runs += more.runs;
		return;
	}
	if (best->preemptions < PROCESS_SEARCH_MIN || cli_bound_expired() ||
	    cli_interrupted) {
		ms->runs += more.runs;
		return;
	}
	if (minimize_search(run_with_strategy, cfg, best, PROCESS_FIRST_RUNS,
			    &more) >= 0)
		ms->preemptions_after = best->preemptions;
	ms->runs += more.runs;
}

void minimize_reorder_first(struct session_config *cfg, struct run_result *best,
			    unsigned max_runs, struct minimize_stats *ms)
{
	struct minimize_stats more = { 0 };
	unsigned pb = best->preemptions;
	size_t db = minimize_count_decisions(best);

	while (best->preemptions > 1 && !cli_interrupted &&
	       !cli_bound_expired() &&
	       minimize_reorder(run_with_strategy, cfg, best, &more) >= 0)
		;
	minimize(run_by_step, cfg, best, max_runs, ms);
	ms->runs += more.runs;
	ms->preemptions_before = pb;
	ms->decisions_before = db;
}

void print_backtraces(FILE *f, char *const *bts, char *const *names, int n,
		      const char *indent)
{
	bool any = false;

	for (int i = 0; i < n; i++)
		any |= bts[i] && bts[i][0];
	if (!any)
		return;
	fprintf(f, "threads at the failure:\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%sT%d", indent, i);
		if (names && names[i] && names[i][0])
			fprintf(f, " (%s)", esc(names[i]));
		if (!bts[i] || !bts[i][0]) {
			fprintf(f, ": no stack (exited or running)\n");
			continue;
		}
		fprintf(f, ":\n");
		for (const char *l = bts[i]; *l;) {
			size_t k = strcspn(l, "\n");

			fprintf(f, "%s    ", indent);
			esc_fwrite(f, l, k, 0);
			fputc('\n', f);
			l += k + (l[k] == '\n');
		}
	}
}

void print_failure_output(const struct run_result *r, bool with_output)
{
	if (r->message[0] && !(r->output && strstr(r->output, r->message))) {
		esc_fputs(stdout, r->message, ESC_LINES);
		putchar('\n');
	}
	if (r->nthreads) {
		char **bts = calloc((size_t)r->nthreads, sizeof(char *));
		char **nm = calloc((size_t)r->nthreads, sizeof(char *));

		for (int i = 0; bts && nm && i < r->nthreads; i++) {
			bts[i] = (char *)r->threads[i].backtrace;
			nm[i] = (char *)r->threads[i].name;
		}
		if (bts && nm)
			print_backtraces(stdout, bts, nm, r->nthreads, "  ");
		free(bts);
		free(nm);
	}
	if (!with_output || !r->output_len)
		return;
	const char *o = r->output;
	size_t n = r->output_len;

	if (n > 2000) {
		o += n - 2000;
		n = 2000;
	}
	printf("program output (tail):\n");
	esc_fwrite(stdout, o, n, ESC_LINES);
	printf("%s", o[n - 1] == '\n' ? "" : "\n");
}

void report_failure(struct report *rep, const struct run_result *r,
		    bool failed, char *sigbuf, size_t len)
{
	rep->has_failure = failed;
	rep->kind = failure_kind_name(r->failure);
	rep->signal = NULL;
	if (r->failure == FAIL_CRASH) {
		snprintf(sigbuf, len, "%s", signal_name(r->signal));
		rep->signal = sigbuf;
	}
	rep->exit_status = r->failure == FAIL_EXIT ? r->exit_status : -1;
	rep->thread = r->thread;
	rep->location = r->location;
	rep->message = r->message;
	rep->output = r->output;
	rep->preemptions = (int)r->preemptions;
	/* every thread's backtrace: pointers into r, which outlives rep */
	static const char **bts, **names;

	free(bts);
	free(names);
	bts = calloc((size_t)r->nthreads + 1, sizeof(*bts));
	names = calloc((size_t)r->nthreads + 1, sizeof(*names));
	rep->nthreads = 0;
	for (int i = 0; bts && names && i < r->nthreads; i++) {
		bts[i] = r->threads[i].backtrace;
		names[i] = r->threads[i].name;
		rep->nthreads = i + 1;
	}
	rep->backtraces = bts;
	rep->thread_names = names;
}
