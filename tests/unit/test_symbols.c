/*
 * analysis/symbols.c against a live tracee: tests/unit/symbols_target.c is
 * compiled at -O0 and -O2 into a temporary directory, started as our
 * tracee, and symbolised while it sits in a ptrace-stop.  The fixture's
 * teardown kills and reaps it, so no stopped process outlives a failed
 * assertion (and the target asks for SIGKILL should we die first).
 *
 * The target's source comes from SYMBOLS_TARGET_SRC (set by meson), or the
 * PTLOOM_SYMBOLS_TARGET_SRC environment variable; $CC (default cc) builds it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../analysis/symbols.h"

#ifndef SYMBOLS_TARGET_SRC
#define SYMBOLS_TARGET_SRC "tests/unit/symbols_target.c"
#endif

#define BUILD_ID "0123456789abcdef0123456789abcdef01234567"

struct target {
	pid_t pid;
	char dir[64];
	char exe[PATH_MAX];
	uint64_t balance, account1, heap; /* as printed by the target */
};

static struct target tg = { .pid = -1 };
static struct symbols *syms;

static const char *target_src(void)
{
	const char *src = getenv("PTLOOM_SYMBOLS_TARGET_SRC");

	return src ? src : SYMBOLS_TARGET_SRC;
}

static void setup(void)
{
	strcpy(tg.dir, "/tmp/ptloom-symbols-XXXXXX");
	cr_assert_not_null(mkdtemp(tg.dir));
}

static void teardown(void)
{
	int st;

	symbols_close(syms);
	syms = NULL;
	if (tg.pid > 0) {
		kill(tg.pid, SIGKILL);
		/* the process and every thread it had */
		while (waitpid(-1, &st, __WALL) > 0 || errno == EINTR)
			;
		tg.pid = -1;
	}
	if (tg.exe[0])
		unlink(tg.exe);
	rmdir(tg.dir);
}

TestSuite(symbols, .init = setup, .fini = teardown, .timeout = 60);

static void build(const char *opt)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char cmd[PATH_MAX * 3];

	snprintf(tg.exe, sizeof(tg.exe), "%s/target%s", tg.dir, opt);
	snprintf(cmd, sizeof(cmd),
		 "%s -g %s -pthread -Wl,--build-id=0x" BUILD_ID
		 " -o '%s' '%s'",
		 cc, opt, tg.exe, target_src());
	cr_assert_eq(system(cmd), 0, "cannot build the target: %s", cmd);
}

/* Starts the target and waits for its first stop; returns the signal. */
static int start(const char *mode)
{
	char *argv[] = { tg.exe, (char *)mode, NULL };
	int fds[2], st;
	FILE *out;
	void *a, *b, *c;

	cr_assert_eq(pipe(fds), 0);
	tg.pid = fork();
	cr_assert_geq(tg.pid, 0);
	if (tg.pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(tg.exe, argv);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	cr_assert_eq(fscanf(out, "%p %p %p", &a, &b, &c), 3);
	fclose(out);
	tg.balance = (uintptr_t)a;
	tg.account1 = (uintptr_t)b;
	tg.heap = (uintptr_t)c;
	cr_assert_eq(waitpid(tg.pid, &st, 0), tg.pid);
	cr_assert(WIFSTOPPED(st), "target did not stop: %#x", st);
	cr_assert_eq(symbols_open(&syms, tg.pid), 0);
	return WSTOPSIG(st);
}

/* Starts the target traced from its exec, and opens the symbols there,
 * before ld.so has mapped the libraries, as the tracer does. */
static void start_at_exec(void)
{
	int devnull, st;

	tg.pid = fork();
	cr_assert_geq(tg.pid, 0);
	if (tg.pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, STDOUT_FILENO);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(tg.exe, tg.exe, "pretraced", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(tg.pid, &st, 0), tg.pid);
	cr_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP, "%#x", st);
	cr_assert_eq(symbols_open(&syms, tg.pid), 0);
	cr_assert_eq(ptrace(PTRACE_CONT, tg.pid, NULL, NULL), 0);
	cr_assert_eq(waitpid(tg.pid, &st, 0), tg.pid);
	cr_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "%#x", st);
}

static int mark_line(const char *mark)
{
	FILE *f = fopen(target_src(), "r");
	char line[512];
	int n = 0;

	cr_assert_not_null(f, "cannot read %s", target_src());
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, mark)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("no %s in %s", mark, target_src());
	return -1;
}

static uint64_t regs_pc(pid_t tid)
{
	struct user_regs_struct r;

	cr_assert_eq(ptrace(PTRACE_GETREGS, tid, NULL, &r), 0);
	return r.rip;
}

static void expect_location(const char *loc, const char *func,
			    const char *mark)
{
	char want[256];

	snprintf(want, sizeof(want), "%s at symbols_target.c:%d", func,
		 mark_line(mark));
	cr_assert_str_eq(loc, want);
}

/* The frame of `func` in a backtrace, described at its call site. */
static int find_frame(const uint64_t *pcs, int n, const char *func,
		      int *line)
{
	for (int i = 0; i < n; i++) {
		const char *f, *file;

		if (symbols_lookup(syms, i ? pcs[i] - 1 : pcs[i], &f, &file,
				   line) == 0 &&
		    f && strcmp(f, func) == 0)
			return i;
	}
	return -1;
}

static void check_stop_in_victim(void)
{
	uint64_t pcs[64];
	char buf[256];
	int n, i, line;

	cr_assert_eq(start(NULL), SIGSTOP);

	/* stopped inside raise(): the top frame is the runtime's */
	cr_assert(symbols_is_runtime(syms, regs_pc(tg.pid)));
	symbols_describe_code(syms, regs_pc(tg.pid), buf, sizeof(buf));
	cr_assert_not_null(strstr(buf, "libc.so.6"), "top frame: %s", buf);

	symbols_user_location(syms, tg.pid, buf, sizeof(buf));
	expect_location(buf, "victim_function", "MARK:victim");

	n = symbols_backtrace(syms, tg.pid, pcs, 64);
	cr_assert_gt(n, 2, "backtrace: %d", n);
	cr_assert_eq(pcs[0], regs_pc(tg.pid));
	i = find_frame(pcs, n, "victim_function", &line);
	cr_assert_gt(i, 0);
	cr_assert_eq(line, mark_line("MARK:victim"));
	cr_assert(!symbols_is_runtime(syms, pcs[i]));
	cr_assert_eq(find_frame(pcs, n, "main", &line), i + 1);
	cr_assert_eq(line, mark_line("MARK:call"));

	/* a truncated backtrace */
	cr_assert_eq(symbols_backtrace(syms, tg.pid, pcs, 1), 1);
	cr_assert_eq(pcs[0], regs_pc(tg.pid));
}

Test(symbols, stop_in_victim_O0)
{
	build("-O0");
	check_stop_in_victim();
}

Test(symbols, stop_in_victim_O2)
{
	build("-O2");
	check_stop_in_victim();
}

static void check_crash(void)
{
	const char *func, *file;
	char buf[256];
	int line;

	cr_assert_eq(start("crash"), SIGSEGV);
	symbols_describe_code(syms, regs_pc(tg.pid), buf, sizeof(buf));
	expect_location(buf, "crash_function", "MARK:crash");
	symbols_user_location(syms, tg.pid, buf, sizeof(buf));
	expect_location(buf, "crash_function", "MARK:crash");

	cr_assert_eq(symbols_lookup(syms, regs_pc(tg.pid), &func, &file,
				    &line), 0);
	cr_assert_str_eq(func, "crash_function");
	cr_assert_str_eq(strrchr(file, '/') ? strrchr(file, '/') + 1 : file,
			 "symbols_target.c");
	cr_assert_eq(line, mark_line("MARK:crash"));
}

Test(symbols, crash_O0)
{
	build("-O0");
	check_crash();
}

Test(symbols, crash_O2)
{
	build("-O2");
	check_crash();
}

/* The innermost inlined function names the location; the unwinder's
 * frames are physical ones. */
static void check_inline(void)
{
	uint64_t pcs[64];
	char buf[256];
	int n, line;

	cr_assert_eq(start("inline"), SIGSEGV);
	symbols_describe_code(syms, regs_pc(tg.pid), buf, sizeof(buf));
	expect_location(buf, "store_through", "MARK:inline");
	n = symbols_backtrace(syms, tg.pid, pcs, 64);
	cr_assert_gt(n, 1);
	cr_assert_eq(find_frame(pcs, n, "main", &line), 1);
}

Test(symbols, inline_O0)
{
	build("-O0");
	check_inline();
}

Test(symbols, inline_O2)
{
	build("-O2");
	check_inline();
}

/* Finds the executable mapping of a file in /proc/PID/maps. */
static void find_text_map(const char *name, char *path, uint64_t *start,
			  uint64_t *off)
{
	char fn[64], line[PATH_MAX + 128], perms[8], p[PATH_MAX];
	unsigned long long s, e, o;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/maps", tg.pid);
	f = fopen(fn, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		p[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e,
			   perms, &o, p) < 4 ||
		    strcmp(perms, "r-xp") != 0)
			continue;
		if (strcmp(p, name) == 0 ||
		    (strrchr(p, '/') && !strcmp(strrchr(p, '/') + 1, name))) {
			strcpy(path, p);
			*start = s;
			*off = o;
			fclose(f);
			return;
		}
	}
	fclose(f);
	cr_assert_fail("%s is not mapped", name);
}

/* The load bias of a mapped ELF file, from its executable segment. */
static uint64_t load_bias(const char *name, char *path)
{
	struct elf_text text[4];
	uint64_t start, off;
	int n;

	find_text_map(name, path, &start, &off);
	n = symbols_elf_text(path, text, 4);
	cr_assert_geq(n, 1);
	for (int i = 0; i < n; i++)
		if (text[i].offset >= off && text[i].offset - off < 4096)
			return start - (text[i].vaddr - text[i].offset + off);
	cr_assert_fail("no executable segment at offset %#" PRIx64, off);
	return 0;
}

/* Code mapped after symbols_open() is found without an explicit refresh. */
Test(symbols, opened_at_exec)
{
	uint64_t pcs[64];
	char buf[256];
	int n, line;

	build("-O2");
	start_at_exec();
	symbols_user_location(syms, tg.pid, buf, sizeof(buf));
	expect_location(buf, "victim_function", "MARK:victim");
	n = symbols_backtrace(syms, tg.pid, pcs, 64);
	cr_assert_gt(find_frame(pcs, n, "main", &line), 1);
	cr_assert(symbols_is_runtime(syms, pcs[0]));
}

Test(symbols, data)
{
	char buf[256], path[PATH_MAX];
	uint64_t v[4];

	build("-O0");
	cr_assert_eq(start(NULL), SIGSTOP);

	symbols_describe_data(syms, tg.balance, buf, sizeof(buf));
	cr_assert_str_eq(buf, "balance");
	symbols_describe_data(syms, tg.account1, buf, sizeof(buf));
	cr_assert_str_eq(buf, "accounts+8");
	symbols_describe_data(syms, tg.balance + 4, buf, sizeof(buf));
	cr_assert_str_eq(buf, "balance+4");
	symbols_describe_data(syms, tg.heap, buf, sizeof(buf));
	snprintf(path, sizeof(path), "0x%" PRIx64, tg.heap);
	cr_assert_str_eq(buf, path);

	/* the file's symbol value plus the load bias is the live address */
	cr_assert_eq(symbols_elf_lookup(tg.exe, "balance", v, 4), 1);
	cr_assert_eq(v[0] + load_bias(strrchr(tg.exe, '/') + 1, path),
		     tg.balance);
	cr_assert_str_eq(path, tg.exe);
	cr_assert_eq(symbols_elf_lookup(tg.exe, "no_such_symbol", v, 4), 0);

	/* a name a symbol has in its name: the first of them that one has;
	 * undefined ones count (a program linked to the library that has
	 * it) */
	const char *subs[] = { "no_such_thing", "alanc", "pthread_create" };

	cr_assert_eq(symbols_elf_naming(tg.exe, subs, 2), 1);
	cr_assert_eq(symbols_elf_naming(tg.exe, subs + 2, 1), 0);
	cr_assert_eq(symbols_elf_naming(tg.exe, subs, 1), -1);

	/* a section's bytes: gcc names itself in .comment */
	cr_assert_eq(symbols_elf_section_has(tg.exe, ".comment", "GCC: "), 1);
	cr_assert_eq(symbols_elf_section_has(tg.exe, ".comment", "no such"),
		     0);
	cr_assert_eq(symbols_elf_section_has(tg.exe, ".no_such", "GCC"), 0);
}

Test(symbols, libc_symbols)
{
	char path[PATH_MAX], buf[256];
	uint64_t v[8], bias;
	const char *func;
	int n;

	build("-O0");
	cr_assert_eq(start(NULL), SIGSTOP);
	bias = load_bias("libc.so.6", path);

	n = symbols_elf_lookup(path, "pthread_mutex_lock", v, 8);
	cr_assert_geq(n, 1);
	cr_assert(symbols_is_runtime(syms, bias + v[0]));
	cr_assert_eq(symbols_lookup(syms, bias + v[0], &func, NULL, NULL), 0);
	cr_assert_not_null(strstr(func, "pthread_mutex_lock"), "%s", func);
	symbols_describe_code(syms, bias + v[0], buf, sizeof(buf));
	cr_assert_not_null(strstr(buf, "pthread_mutex_lock (libc.so.6)"),
			   "%s", buf);

	/* two versions, two implementations */
	n = symbols_elf_lookup(path, "pthread_cond_wait", v, 8);
	cr_assert_geq(n, 2);
	cr_assert_neq(v[0], v[1]);
	cr_assert_eq(symbols_elf_lookup(path, "pthread_cond_wait", v, 1), 1);
}

Test(symbols, build_id)
{
	uint8_t id[64];
	char hex[2 * sizeof(id) + 1];
	int n;

	build("-O0");
	n = symbols_elf_build_id(tg.exe, id, sizeof(id));
	cr_assert_eq(n, 20);
	for (int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	cr_assert_str_eq(hex, BUILD_ID);
	cr_assert_eq(symbols_elf_build_id(tg.exe, id, 4), -ENOSPC);
}

Test(symbols, thread)
{
	uint64_t pcs[64];
	char buf[256];
	pid_t tid = -1, w;
	int st, line, n;

	build("-O2");
	cr_assert_eq(start("thread"), SIGSTOP);
	cr_assert_eq(ptrace(PTRACE_SETOPTIONS, tg.pid, NULL,
			    PTRACE_O_TRACECLONE), 0);
	cr_assert_eq(ptrace(PTRACE_CONT, tg.pid, NULL, NULL), 0);
	while (tid < 0) {
		w = waitpid(-1, &st, __WALL);
		cr_assert_gt(w, 0);
		cr_assert(WIFSTOPPED(st), "%d: %#x", w, st);
		if (w != tg.pid && WSTOPSIG(st) == SIGUSR1)
			tid = w;
		else /* the clone event and the new thread's first stop */
			cr_assert_eq(ptrace(PTRACE_CONT, w, NULL, NULL), 0);
	}
	/* the maps now hold what the thread's creation mapped */
	cr_assert_eq(symbols_refresh(syms), 0);

	symbols_user_location(syms, tid, buf, sizeof(buf));
	expect_location(buf, "thread_victim", "MARK:thread");
	n = symbols_backtrace(syms, tid, pcs, 64);
	cr_assert_gt(n, 2);
	cr_assert_geq(find_frame(pcs, n, "thread_main", &line), 0);

	/* main is blocked in pthread_join, not in a ptrace-stop */
	cr_assert_eq(symbols_backtrace(syms, tg.pid, pcs, 64), -ESRCH);
	symbols_user_location(syms, tg.pid, buf, sizeof(buf));
	cr_assert_str_eq(buf, "?");
}

Test(symbols, cached_strings_outlive_refresh)
{
	const char *f1, *f2, *file1, *file2;
	char a[256], b[256];
	uint64_t pcs[64];
	uint64_t pc;
	int n, i, line;

	build("-O0");
	cr_assert_eq(start(NULL), SIGSTOP);
	n = symbols_backtrace(syms, tg.pid, pcs, 64);
	cr_assert_gt(n, 2);
	i = find_frame(pcs, n, "victim_function", &line);
	cr_assert_gt(i, 0);
	pc = pcs[i] - 1;

	symbols_describe_code(syms, pc, a, sizeof(a));
	symbols_describe_code(syms, pc, b, sizeof(b));
	cr_assert_str_eq(a, b);
	cr_assert_eq(symbols_lookup(syms, pc, &f1, &file1, &line), 0);
	cr_assert_eq(symbols_lookup(syms, pc, &f2, &file2, &line), 0);
	cr_assert_eq(f1, f2);
	cr_assert_eq(file1, file2);

	cr_assert_eq(symbols_refresh(syms), 0);
	cr_assert_eq(symbols_backtrace(syms, tg.pid, pcs, 64), n);
	cr_assert_eq(find_frame(pcs, n, "victim_function", &line), i);
	cr_assert_eq(pcs[i] - 1, pc);
	cr_assert_eq(symbols_lookup(syms, pc, &f2, &file2, &line), 0);
	cr_assert_str_eq(f1, f2);
	cr_assert_str_eq(file1, file2);
	symbols_describe_code(syms, pc, b, sizeof(b));
	cr_assert_str_eq(a, b);

	/* nothing at all, and a truncating buffer */
	cr_assert_eq(symbols_lookup(syms, 0, &f1, &file1, &line), -ENOENT);
	cr_assert_null(f1);
	symbols_describe_code(syms, 0x10, a, sizeof(a));
	cr_assert_str_eq(a, "0x10");
	symbols_describe_code(syms, pc, a, 4);
	cr_assert_eq(strlen(a), 3);
}

Test(symbols, errors)
{
	struct symbols *s;
	uint64_t v[1];
	uint8_t id[20];
	struct elf_text t[1];
	pid_t dead = fork();

	cr_assert_geq(dead, 0);
	if (dead == 0)
		_exit(0);
	cr_assert_eq(waitpid(dead, NULL, 0), dead);
	cr_assert_lt(symbols_open(&s, dead), 0);
	cr_assert_null(s);

	cr_assert_eq(symbols_elf_lookup("/nonexistent", "x", v, 1), -ENOENT);
	cr_assert_eq(symbols_elf_lookup(target_src(), "x", v, 1), -EINVAL);
	const char *x = "x";

	cr_assert_eq(symbols_elf_naming("/nonexistent", &x, 1), -ENOENT);
	cr_assert_eq(symbols_elf_naming(target_src(), &x, 1), -EINVAL);
	cr_assert_eq(symbols_elf_section_has("/nonexistent", ".text", "x"),
		     -ENOENT);
	cr_assert_eq(symbols_elf_build_id(target_src(), id, 20), -EINVAL);
	cr_assert_eq(symbols_elf_text("/nonexistent", t, 1), -ENOENT);
}

/* Is [lo, hi) inside one of the n sorted pairs of r? */
static bool within(const uint64_t *r, int n, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < n; i++)
		if (lo >= r[2 * i] && hi <= r[2 * i + 1])
			return true;
	return false;
}

/* Static data of an atomic type, by DWARF: a global _Atomic, an _Atomic
 * member of a global structure and of each element of a global array of
 * them; not a plain global, nor a structure's plain members. */
Test(symbols, atomic_data_by_type)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char src[PATH_MAX], cmd[PATH_MAX * 3];
	uint64_t flag, plain, one, many, *r = NULL;
	FILE *f;

	snprintf(src, sizeof(src), "%s/atomics.c", tg.dir);
	snprintf(tg.exe, sizeof(tg.exe), "%s/atomics", tg.dir);
	cr_assert_not_null(f = fopen(src, "w"));
	fputs("#include <stdatomic.h>\n"
	      "_Atomic int flag;\n"
	      "int plain;\n"
	      "struct s { long a; _Atomic long b; int c; } one, many[3];\n"
	      "int main(void) { return flag + plain + (int)one.b +\n"
	      "                 (int)many[2].b + (int)one.a; }\n", f);
	cr_assert_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "%s -g -O2 -o '%s' '%s'", cc, tg.exe, src);
	cr_assert_eq(system(cmd), 0, "cannot build: %s", cmd);
	cr_assert_eq(symbols_elf_lookup(tg.exe, "flag", &flag, 1), 1);
	cr_assert_eq(symbols_elf_lookup(tg.exe, "plain", &plain, 1), 1);
	cr_assert_eq(symbols_elf_lookup(tg.exe, "one", &one, 1), 1);
	cr_assert_eq(symbols_elf_lookup(tg.exe, "many", &many, 1), 1);

	int n = symbols_elf_atomic_data(tg.exe, &r);

	cr_assert_gt(n, 0);
	cr_expect(within(r, n, flag, flag + 4));
	cr_expect(!within(r, n, plain, plain + 1));
	cr_expect(within(r, n, one + 8, one + 16));
	cr_expect(!within(r, n, one, one + 1));
	cr_expect(!within(r, n, one + 16, one + 17));
	for (int i = 0; i < 3; i++) {
		cr_expect(within(r, n, many + 24 * i + 8, many + 24 * i + 16),
			  "many[%d].b", i);
		cr_expect(!within(r, n, many + 24 * i, many + 24 * i + 1),
			  "many[%d].a", i);
	}
	free(r);
	/* no DWARF: nothing known */
	snprintf(cmd, sizeof(cmd), "%s -O2 -o '%s' '%s'", cc, tg.exe, src);
	cr_assert_eq(system(cmd), 0, "cannot build: %s", cmd);
	cr_assert_eq(symbols_elf_atomic_data(tg.exe, &r), 0);
	free(r);
	unlink(src); /* the teardown removes the executable and the dir */
}
