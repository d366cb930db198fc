/*
 * Schedule files and scripts (replayer/schedule.c, replayer/script.c) and
 * the names in tracer/event.c.
 *
 * Files are untrusted input: besides round trips, these tests feed every
 * file of tests/corpus, every truncation and every byte flip of a real
 * schedule, and expect 0 or -EINVAL with a one-line message, never a
 * crash.  The corpus directory is CORPUS_DIR (set by meson) or
 * $PTLOOM_CORPUS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, open_memstream */
#endif
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../replayer/schedule.h"

#ifndef CORPUS_DIR
#define CORPUS_DIR "tests/corpus"
#endif

static const char *corpus_dir(void)
{
	const char *d = getenv("PTLOOM_CORPUS");

	return d && *d ? d : CORPUS_DIR;
}

/* A fresh directory per test: criterion runs tests in parallel. */
static char *tmpdir(void)
{
	char *d = strdup("/tmp/ptloom-test-XXXXXX");

	cr_assert(d && mkdtemp(d));
	return d;
}

static void rmtree(char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(dir);
}

static char *path_in(const char *dir, const char *name)
{
	char *p;

	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert(f, "%s", path);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	cr_assert(f, "%s", path);
	*len = 0;
	for (;;) {
		buf = realloc(buf, cap += 4096);
		cr_assert(buf);
		size_t k = fread(buf + *len, 1, cap - *len, f);
		*len += k;
		if (k == 0)
			break;
	}
	fclose(f);
	return buf;
}

/* An error must be one non-empty line. */
static void assert_one_line(const char *err)
{
	cr_assert(err[0], "empty error message");
	cr_assert_null(strchr(err, '\n'), "newline in \"%s\"", err);
}

/* --- a schedule with every field set ------------------------------------ */

static char *argv_full[] = { "./bank", "--accounts", "3 4", NULL };
static char *env_full[] = { "LC_ALL=C", "X=\xff\xfe", NULL };
static char *names_full[] = { "main", NULL, "worker-1" };

static const struct decision dec_full[] = {
	{ .step = 3, .kind = DEC_RUN, .thread = 1, .index = 1, .nalts = 2 },
	{ .step = 7, .kind = DEC_RUN, .thread = 2, .index = 0, .nalts = 3 },
	{ .step = 9, .kind = DEC_WAKE, .thread = 65535, .index = 255,
	  .nalts = 256 },
	{ .step = 12, .kind = DEC_RUN, .timeout = 1, .thread = 1, .index = 2,
	  .nalts = 3 },
	{ .step = SCHEDULE_STEP_UNKNOWN, .kind = DEC_RUN, .thread = 0 },
};

static const struct event ev_full[] = {
	{ .step = 0, .thread = 0, .kind = OP_START },
	{ .step = 3, .thread = 1, .kind = OP_CALL, .fn = FN_MUTEX_LOCK,
	  .decided = 1, .obj = 0x404060, .pc = 0x4011a2 },
	{ .step = 7, .thread = 2, .kind = OP_FUTEX_WAIT, .preempt = 1,
	  .decided = 1, .obj = 0x404064, .pc = UINT64_MAX, .arg = INT64_MIN },
	{ .step = 8, .thread = 2, .kind = OP_READ, .obj = 3, .arg = 4096 },
	{ .step = 9, .thread = 0, .kind = OP_FUTEX_WAKE, .obj = 0x404064,
	  .arg = 1 },
	{ .step = 12, .thread = 1, .kind = OP_TIMEOUT },
};

static const struct user_point up_full[] = {
	{ .addr = 0x401150, .kind = OP_ATOMIC },
	{ .addr = UINT64_MAX, .kind = OP_SPIN },
};

/* Code and data entries; the edges: empty text, non-UTF-8, the longest
 * text allowed (filled in by fill_full), the same address as code and as
 * data. */
static char sym_longest[SCHEDULE_MAX_SYMBOL_TEXT + 1];
static struct sym_entry syms_full[] = {
	{ .addr = 0x4011a2, .data = 0, .text = "withdraw at bank.c:23" },
	{ .addr = 0x404064, .data = 1, .text = "balance" },
	{ .addr = 0x404060, .data = 1, .text = "accounts[1].lock" },
	{ .addr = 0x404060, .data = 0, .text = "" },
	{ .addr = UINT64_MAX, .data = 0, .text = "f\xff\xfe at \x01.c:1" },
	{ .addr = 0, .data = 1, .text = sym_longest },
};

static struct loaded_object objs_full[2] = {
	{ .path = "/usr/lib/x86_64-linux-gnu/libc.so.6", .build_id_len = 20,
	  .size = 1922136, .mtime_ns = 1700000000123456789ull },
	{ .path = "/etc/ld.so.cache", .size = 43107, .mtime_ns = 1,
	  .hash = 0xded737a7747c4953ull },
};

static struct schedule_pair pairs_full[2] = {
	{ .a = 0x401126, .b = 0x401190, .seen = 1, .what = 1,
	  .where_a = "deposit at bank.c:12", .where_b = "withdraw at bank.c:23" },
	{ .a = 0x404061, .b = 0x404061, .seen = 0, .what = 3,
	  .where_a = "", .where_b = "f\xff at x.c:1" },
};

static void fill_full(struct schedule *s)
{
	memset(sym_longest, 's', SCHEDULE_MAX_SYMBOL_TEXT);
	memset(s, 0, sizeof(*s));
	s->format_version = SCHEDULE_FORMAT_VERSION;
	s->program = "/usr/local/bin/bank";
	s->argv = argv_full;
	s->argc = 3;
	s->env = env_full;
	s->nenv = 2;
	for (size_t i = 0; i < 64; i++)
		s->build_id[i] = (uint8_t)(i * 7);
	s->build_id_len = 64;
	s->program_size = 17640;
	s->program_hash = 0x8f3a5c2e91d04b77ull;
	s->points = POINTS_SYNC | POINTS_RACES;
	s->seed = UINT64_MAX;
	s->strategy = "pct";
	s->preemption_bound = 2;
	s->clock_start_realtime_ns = 1700000000000000000ull;
	s->clock_start_monotonic_ns = 1;
	s->clock_quantum_ns = 1000;
	s->ptloom_version = "0.1.0";
	s->decisions = (struct decision *)dec_full;
	s->ndecisions = sizeof(dec_full) / sizeof(dec_full[0]);
	s->user_points = (struct user_point *)up_full;
	s->nuser_points = 2;
	s->failure = FAIL_DEADLOCK;
	s->signal = 0;
	s->exit_status = -1;
	s->fail_thread = 2;
	s->location = "withdraw at bank.c:23";
	s->message = "T1 waits for T2\nT2 waits for T1";
	s->preemptions = 1;
	s->trace_hash = 0xfedcba9876543210ull;
	s->events = (struct event *)ev_full;
	s->nevents = sizeof(ev_full) / sizeof(ev_full[0]);
	s->thread_names = names_full;
	s->nthread_names = 3;
	s->syms = syms_full;
	s->nsyms = sizeof(syms_full) / sizeof(syms_full[0]);
	for (size_t i = 0; i < 20; i++)
		objs_full[0].build_id[i] = (uint8_t)(0x90 + i);
	s->objects = objs_full;
	s->nobjects = 2;
	s->cov_pairs = 9;
	s->cov_covered = 7;
	s->uncovered = pairs_full;
	s->nuncovered = 2;
}

static void assert_same(const struct schedule *a, const struct schedule *b)
{
	cr_assert_eq(b->format_version, SCHEDULE_FORMAT_VERSION);
	cr_assert_str_eq(b->program, a->program);
	cr_assert_eq(b->argc, a->argc);
	for (int i = 0; i < a->argc; i++)
		cr_assert_str_eq(b->argv[i], a->argv[i]);
	cr_assert_null(b->argv[b->argc], "argv is NULL-terminated");
	cr_assert_eq(b->nenv, a->nenv);
	for (int i = 0; i < a->nenv; i++)
		cr_assert_str_eq(b->env[i], a->env[i]);
	cr_assert_null(b->env[b->nenv]);
	cr_assert_eq(b->build_id_len, a->build_id_len);
	cr_assert_arr_eq(b->build_id, a->build_id, a->build_id_len);
	cr_assert_eq(b->program_size, a->program_size);
	cr_assert_eq(b->program_hash, a->program_hash);
	cr_assert_eq(b->points, a->points);
	cr_assert_eq(b->seed, a->seed);
	cr_assert_str_eq(b->strategy, a->strategy);
	cr_assert_eq(b->preemption_bound, a->preemption_bound);
	cr_assert_eq(b->clock_start_realtime_ns, a->clock_start_realtime_ns);
	cr_assert_eq(b->clock_start_monotonic_ns, a->clock_start_monotonic_ns);
	cr_assert_eq(b->clock_quantum_ns, a->clock_quantum_ns);
	cr_assert_str_eq(b->ptloom_version, a->ptloom_version);
	cr_assert_eq(b->ndecisions, a->ndecisions);
	for (size_t i = 0; i < a->ndecisions; i++) {
		const struct decision *x = &a->decisions[i];
		const struct decision *y = &b->decisions[i];

		cr_assert(x->step == y->step && x->kind == y->kind &&
				  x->timeout == y->timeout &&
				  x->thread == y->thread &&
				  x->index == y->index && x->nalts == y->nalts,
			  "decision %zu differs", i);
	}
	cr_assert_eq(b->nuser_points, a->nuser_points);
	for (size_t i = 0; i < a->nuser_points; i++) {
		cr_assert_eq(b->user_points[i].addr, a->user_points[i].addr);
		cr_assert_eq(b->user_points[i].kind, a->user_points[i].kind);
	}
	cr_assert_eq(b->failure, a->failure);
	cr_assert_eq(b->signal, a->signal);
	cr_assert_eq(b->exit_status, a->exit_status);
	cr_assert_eq(b->fail_thread, a->fail_thread);
	cr_assert_str_eq(b->location, a->location);
	cr_assert_str_eq(b->message, a->message);
	cr_assert_eq(b->preemptions, a->preemptions);
	cr_assert_eq(b->trace_hash, a->trace_hash);
	cr_assert_eq(b->nevents, a->nevents);
	for (size_t i = 0; i < a->nevents; i++) {
		const struct event *x = &a->events[i], *y = &b->events[i];

		cr_assert(x->step == y->step && x->thread == y->thread &&
				  x->kind == y->kind && x->fn == y->fn &&
				  x->preempt == y->preempt &&
				  x->decided == y->decided &&
				  x->obj == y->obj && x->pc == y->pc &&
				  x->arg == y->arg,
			  "event %zu differs", i);
	}
	cr_assert_eq(b->nthread_names, a->nthread_names);
	for (int i = 0; i < a->nthread_names; i++) {
		if (a->thread_names[i])
			cr_assert_str_eq(b->thread_names[i],
					 a->thread_names[i]);
		else
			cr_assert_null(b->thread_names[i]);
	}
	cr_assert_eq(b->nobjects, a->nobjects);
	for (size_t i = 0; i < a->nobjects; i++) {
		const struct loaded_object *x = &a->objects[i];
		const struct loaded_object *y = &b->objects[i];

		cr_assert_str_eq(y->path, x->path);
		cr_assert_eq(y->build_id_len, x->build_id_len);
		cr_assert_arr_eq(y->build_id, x->build_id, x->build_id_len);
		cr_assert(y->size == x->size && y->mtime_ns == x->mtime_ns &&
				  y->hash == x->hash,
			  "object %zu differs", i);
	}
	cr_assert_eq(b->cov_pairs, a->cov_pairs);
	cr_assert_eq(b->cov_covered, a->cov_covered);
	cr_assert_eq(b->nuncovered, a->nuncovered);
	for (size_t i = 0; i < a->nuncovered; i++) {
		const struct schedule_pair *x = &a->uncovered[i];
		const struct schedule_pair *y = &b->uncovered[i];

		cr_assert(x->a == y->a && x->b == y->b && x->seen == y->seen &&
				  x->what == y->what,
			  "coverage pair %zu differs", i);
		cr_assert_str_eq(y->where_a, x->where_a);
		cr_assert_str_eq(y->where_b, x->where_b);
	}
	cr_assert_eq(b->nsyms, a->nsyms);
	for (size_t i = 0; i < a->nsyms; i++) {
		cr_assert_eq(b->syms[i].addr, a->syms[i].addr, "symbol %zu", i);
		cr_assert_eq(b->syms[i].data, a->syms[i].data, "symbol %zu", i);
		cr_assert_str_eq(b->syms[i].text, a->syms[i].text,
				 "symbol %zu", i);
	}
}

/* --- files ---------------------------------------------------------------- */

static char *script_of(const struct schedule *s, size_t *len);

Test(schedule, save_load_round_trip)
{
	struct schedule a, b;
	char *dir = tmpdir(), *p = path_in(dir, "s.pb"), err[256];
	int n = 0;
	DIR *d;

	fill_full(&a);
	cr_assert_eq(schedule_save(p, &a), 0);
	cr_assert_eq(schedule_load(p, &b, err, sizeof(err)), 0, "%s", err);
	assert_same(&a, &b);
	schedule_free(&b);
	cr_assert_eq(b.ndecisions, 0, "schedule_free zeroes");
	schedule_free(&b);

	/* saving again replaces the file, and no temp file is left */
	a.seed = 7;
	cr_assert_eq(schedule_save(p, &a), 0);
	cr_assert_eq(schedule_load(p, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(b.seed, 7);
	schedule_free(&b);
	d = opendir(dir);
	cr_assert(d);
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	cr_assert_eq(n, 1);
	free(p);
	rmtree(dir);
}

/* A store that entered its store buffer (x86-TSO) is its own kind of
 * decision: kept through a file and a script, never on a wake, never a
 * timeout too. */
Test(schedule, buffered_store_decision_round_trips)
{
	struct schedule a, b;
	struct decision d[] = {
		{ .step = 4, .kind = DEC_RUN, .timeout = ALT_BUFFER,
		  .thread = 1, .index = 2, .nalts = 3 },
		{ .step = 9, .kind = DEC_RUN, .timeout = 1, .thread = 2,
		  .index = 1, .nalts = 2 },
	};
	char *dir = tmpdir(), *p = path_in(dir, "s.pb"), err[256], *text;
	size_t len;

	fill_full(&a);
	a.points |= POINTS_TSO;
	a.decisions = d;
	a.ndecisions = 2;
	cr_assert_eq(schedule_save(p, &a), 0);
	cr_assert_eq(schedule_load(p, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(b.points & POINTS_TSO, POINTS_TSO);
	cr_assert_eq(b.decisions[0].timeout, ALT_BUFFER);
	cr_assert_eq(b.decisions[1].timeout, 1);
	schedule_free(&b);

	text = script_of(&a, &len);
	cr_assert(strstr(text, "\nbuffer T1\n"), "%s", text);
	cr_assert_eq(schedule_parse_script(text, len, &b, err, sizeof(err)),
		     0, "%s\n%s", err, text);
	cr_assert_eq(b.decisions[0].timeout, ALT_BUFFER);
	cr_assert_eq(b.decisions[1].timeout, 1);
	schedule_free(&b);
	free(text);

	d[0].kind = DEC_WAKE;
	cr_assert_eq(schedule_save(p, &a), -EINVAL);
	d[0].kind = DEC_RUN;
	d[0].timeout = ALT_BUFFER + 1;
	cr_assert_eq(schedule_save(p, &a), -EINVAL);
	free(p);
	rmtree(dir);
}

Test(schedule, file_starts_with_magic)
{
	struct schedule a;
	uint8_t *buf;
	size_t len;

	fill_full(&a);
	cr_assert_eq(schedule_encode(&a, &buf, &len), 0);
	cr_assert_gt(len, 8);
	cr_assert_eq(memcmp(buf, "PTLOOM\0\1", 8), 0);
	free(buf);
}

Test(schedule, empty_schedule_round_trip)
{
	struct schedule a = { .fail_thread = -1 }, b;
	char err[256];
	uint8_t *buf;
	size_t len;

	cr_assert_eq(schedule_encode(&a, &buf, &len), 0);
	cr_assert_eq(schedule_decode(buf, len, &b, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(b.ndecisions, 0);
	cr_assert_eq(b.argc, 0);
	cr_assert_str_eq(b.program, "", "absent strings read as \"\"");
	cr_assert_str_eq(b.strategy, "");
	cr_assert_eq(b.fail_thread, -1);
	cr_assert_eq(b.nsyms, 0);
	schedule_free(&b);
	free(buf);
}

Test(schedule, save_refuses_what_load_would)
{
	struct schedule a;
	struct decision d = { .kind = DEC_RUN, .index = 3, .nalts = 2 };
	struct user_point u = { .kind = OP_FUTEX_WAIT };

	fill_full(&a);
	a.decisions = &d;
	a.ndecisions = 1;
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	d = (struct decision){ .kind = 5 };
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	d = (struct decision){ .kind = DEC_WAKE, .timeout = 1 };
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	fill_full(&a);
	a.user_points = &u;
	a.nuser_points = 1;
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	fill_full(&a);
	a.failure = 99;
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	fill_full(&a);
	a.ndecisions = SCHEDULE_MAX_DECISIONS + 1;
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	/* loaded objects: a path, a build-id of at most 64 bytes, a bound */
	struct loaded_object o = { .path = "" };

	fill_full(&a);
	a.objects = &o;
	a.nobjects = 1;
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	o = (struct loaded_object){ .path = "/lib/x.so", .build_id_len = 65 };
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	o.build_id_len = 64;
	a.nobjects = SCHEDULE_MAX_OBJECTS + 1;
	cr_assert_eq(schedule_save("/tmp/never-written.pb", &a), -EINVAL);
	cr_assert_neq(access("/tmp/never-written.pb", F_OK), 0);
}

Test(schedule, save_refuses_bad_symbols)
{
	static char too_long[SCHEDULE_MAX_SYMBOL_TEXT + 2];
	struct sym_entry y = { .addr = 1, .text = too_long };
	struct schedule a;
	uint8_t *buf;
	size_t len;

	memset(too_long, 'x', SCHEDULE_MAX_SYMBOL_TEXT + 1);
	fill_full(&a);
	a.syms = &y;
	a.nsyms = 1;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "4097 bytes");
	y.text = NULL;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "no text");
	fill_full(&a);
	a.syms = NULL;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "no array");
	fill_full(&a);
	a.nsyms = SCHEDULE_MAX_SYMBOLS + 1;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "too many");
	cr_assert_null(buf);
}

/* The coverage recorded for show: counts that add up, pairs well formed,
 * on save and (from crafted bytes) on load. */
Test(schedule, coverage_pairs_are_checked)
{
	static char too_long[SCHEDULE_MAX_SYMBOL_TEXT + 2];
	struct schedule_pair q = pairs_full[0];
	struct schedule a, b;
	char err[256];
	uint8_t *buf;
	size_t len;

	fill_full(&a);
	a.cov_covered = 10; /* more than the 9 pairs */
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL);
	fill_full(&a);
	a.cov_covered = 8; /* two listed, one not covered */
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL);
	fill_full(&a);
	a.uncovered = &q;
	a.nuncovered = 1;
	q.seen = 3;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "seen 3");
	q = pairs_full[0];
	q.what = 5;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "what 5");
	q = pairs_full[0];
	q.a = q.b + 1;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "a > b");
	q = pairs_full[0];
	memset(too_long, 'x', SCHEDULE_MAX_SYMBOL_TEXT + 1);
	q.where_b = too_long;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "long name");
	fill_full(&a);
	a.cov_pairs = UINT64_MAX;
	a.nuncovered = SCHEDULE_MAX_COVERAGE + 1;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "too many");
	fill_full(&a);
	a.uncovered = NULL;
	cr_assert_eq(schedule_encode(&a, &buf, &len), -EINVAL, "no array");

	/* the same from a file: a valid one with one byte changed */
	fill_full(&a);
	cr_assert_eq(schedule_encode(&a, &buf, &len), 0);
	cr_assert_eq(schedule_decode(buf, len, &b, err, sizeof(err)), 0, "%s",
		     err);
	schedule_free(&b);
	/* seen 1, what 1, where_a: seen 1 -> 3 */
	uint8_t *at = memmem(buf, len, "\x18\x01\x20\x01\x2a", 5);

	cr_assert(at);
	at[1] = 3;
	cr_assert_eq(schedule_decode(buf, len, &b, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "coverage pair 0 is malformed"), "%s", err);
	assert_one_line(err);
	at[1] = 1;
	/* a NUL in a name */
	at = memmem(buf, len, "bank.c:12", 9);
	cr_assert(at);
	at[4] = 0;
	cr_assert_eq(schedule_decode(buf, len, &b, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "NUL"), "%s", err);
	at[4] = '.';
	/* covered (field 28) above pairs: 7 -> 10 */
	at = memmem(buf, len, "\xe0\x01\x07", 3);
	cr_assert(at);
	at[2] = 10;
	cr_assert_eq(schedule_decode(buf, len, &b, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "coverage of 10 pairs"), "%s", err);
	free(buf);
}

Test(schedule, symbol_data_flag_is_0_or_1)
{
	struct sym_entry y = { .addr = 0x404064, .data = 7, .text = "x" };
	struct schedule a = { .fail_thread = -1, .syms = &y, .nsyms = 1 }, b;
	char err[256];
	uint8_t *buf;
	size_t len;

	cr_assert_eq(schedule_encode(&a, &buf, &len), 0);
	cr_assert_eq(schedule_decode(buf, len, &b, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(b.nsyms, 1);
	cr_assert_eq(b.syms[0].data, 1);
	cr_assert_str_eq(b.syms[0].text, "x");
	schedule_free(&b);
	cr_assert_null(b.syms);
	free(buf);
}

Test(schedule, save_into_missing_directory)
{
	struct schedule a;

	fill_full(&a);
	cr_assert_eq(schedule_save("/nonexistent-ptloom-dir/s.pb", &a),
		     -ENOENT);
}

Test(schedule, load_errors_are_one_line)
{
	struct schedule s;
	char *dir = tmpdir(), *fifo = path_in(dir, "fifo"), err[256];

	cr_assert_eq(schedule_load("/nonexistent/s.pb", &s, err, sizeof(err)),
		     -ENOENT);
	cr_assert(strstr(err, "cannot open"), "%s", err);
	assert_one_line(err);
	cr_assert_eq(schedule_load(dir, &s, err, sizeof(err)), -EISDIR);
	assert_one_line(err);
	/* a FIFO with no writer must not hang the loader */
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(schedule_load(fifo, &s, err, sizeof(err)), -EINVAL);
	assert_one_line(err);
	/* a tiny error buffer is fine, and so is none */
	cr_assert_eq(schedule_load("/nonexistent", &s, err, 4), -ENOENT);
	cr_assert_eq(strlen(err), 3);
	cr_assert_eq(schedule_load("/nonexistent", &s, NULL, 0), -ENOENT);
	free(fifo);
	rmtree(dir);
}

Test(schedule, oversized_file_is_refused_unread)
{
	struct schedule s;
	char *dir = tmpdir(), *p = path_in(dir, "huge.pb"), err[256];
	int fd = open(p, O_CREAT | O_WRONLY, 0600);

	/* sparse: costs nothing on disk */
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "PTLOOM\0\1", 8), 8);
	cr_assert_eq(ftruncate(fd, (off_t)SCHEDULE_MAX_BYTES + 1), 0);
	close(fd);
	cr_assert_eq(schedule_load(p, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "larger than"), "%s", err);
	assert_one_line(err);
	free(p);
	rmtree(dir);
}

Test(schedule, every_truncation_and_byte_flip_is_handled)
{
	struct schedule a, b;
	uint8_t *buf;
	size_t len;
	char err[256];
	int ok = 0;

	fill_full(&a);
	cr_assert_eq(schedule_encode(&a, &buf, &len), 0);
	for (size_t n = 0; n < len; n++) {
		int r = schedule_decode(buf, n, &b, err, sizeof(err));

		cr_assert(r == 0 || r == -EINVAL);
		if (r)
			assert_one_line(err);
		ok += r == 0;
		schedule_free(&b);
	}
	cr_assert_lt(ok, (int)len / 4, "most truncations are refused");
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1u << bit);
			int r = schedule_decode(buf, len, &b, err, sizeof(err));
			cr_assert(r == 0 || r == -EINVAL);
			if (r)
				assert_one_line(err);
			schedule_free(&b);
			buf[i] ^= (uint8_t)(1u << bit);
		}
	}
	free(buf);
}

Test(schedule, decode_checks_version_first)
{
	/* magic, format_version 3, then a field that cannot be decoded */
	static const uint8_t buf[] = { 'P', 'T', 'L', 'O', 'O', 'M', 0, 1,
				       0x08, 0x03, 0x0f, 0xff };
	struct schedule s;
	char err[256];

	cr_assert_eq(schedule_decode(buf, sizeof(buf), &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "schedule format version 3 is not supported "
			      "(this ptloom reads version 1)");
}

Test(schedule, script_is_not_a_schedule_file)
{
	static const char text[] = "# ptloom schedule script v1\nrun T1\n";
	struct schedule s;
	char err[256];

	cr_assert_eq(schedule_decode((const uint8_t *)text, sizeof(text) - 1,
				     &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "not a ptloom schedule file"), "%s", err);
}

Test(schedule, hash_file_is_fnv1a)
{
	char *dir = tmpdir(), *p = path_in(dir, "f");
	uint64_t h, n, want = 0xcbf29ce484222325ull;
	static uint8_t big[200000];

	write_file(p, "", 0);
	cr_assert_eq(schedule_hash_file(p, &h, &n), 0);
	cr_assert_eq(h, 0xcbf29ce484222325ull);
	cr_assert_eq(n, 0);
	write_file(p, "a", 1);
	cr_assert_eq(schedule_hash_file(p, &h, &n), 0);
	cr_assert_eq(h, 0xaf63dc4c8601ec8cull);
	/* larger than one read */
	for (size_t i = 0; i < sizeof(big); i++) {
		big[i] = (uint8_t)(i * 31 + (i >> 8));
		want = (want ^ big[i]) * 0x100000001b3ull;
	}
	write_file(p, big, sizeof(big));
	cr_assert_eq(schedule_hash_file(p, &h, &n), 0);
	cr_assert_eq(h, want);
	cr_assert_eq(n, sizeof(big));
	cr_assert_eq(schedule_hash_file("/nonexistent", &h, &n), -ENOENT);
	free(p);
	rmtree(dir);
}

/* --- the corpus ----------------------------------------------------------- */

/* Every file in tests/corpus with what loading it must say. */
static const struct {
	const char *name;
	const char *err; /* NULL: loads; else a part of the message */
} corpus[] = {
	{ "valid-full.pb", NULL },
	{ "valid-minimal.pb", NULL },
	{ "valid-from-script.pb", NULL },
	{ "valid-unknown-field.pb", NULL },
	{ "valid-no-symbols.pb", NULL },
	{ "valid-env-objects.pb", NULL },
	{ "bad-env-no-equals.pb", "environment entry 1 is not NAME=VALUE" },
	{ "bad-env-empty-name.pb", "environment entry 0 is not NAME=VALUE" },
	{ "bad-empty.pb", "empty file" },
	{ "bad-short.pb", "not a ptloom schedule file" },
	{ "bad-magic.pb", "not a ptloom schedule file" },
	{ "bad-no-magic.pb", "not a ptloom schedule file" },
	{ "bad-garbage.pb", "not a ptloom schedule file" },
	{ "bad-garbage-after-magic.pb", "damaged or truncated" },
	{ "bad-magic-only.pb", "truncated" },
	{ "bad-truncated.pb", "damaged or truncated" },
	{ "bad-truncated-last-byte.pb", "damaged or truncated" },
	{ "bad-huge-length.pb", "damaged or truncated" },
	{ "bad-nested.pb", "damaged or truncated" },
	{ "bad-group.pb", "damaged or truncated" },
	{ "bad-version.pb", "schedule format version 2 is not supported "
			    "(this ptloom reads version 1)" },
	{ "bad-version-then-garbage.pb", "schedule format version 2 is not "
					 "supported" },
	{ "bad-version-missing.pb", "schedule format version 0 is not "
				    "supported" },
	{ "bad-thread.pb", "decision 1: thread T70000 is out of range" },
	{ "bad-kind.pb", "decision 1: unknown decision kind 7" },
	{ "bad-index.pb", "decision 1: chose alternative 5 of only 3" },
	{ "bad-nalts.pb", "decision 1: 1000 alternatives" },
	{ "bad-index-no-nalts.pb", "without the number of alternatives" },
	{ "bad-poll-index.pb", "decision 0: chose alternative 1212131327, more than the 256" },
	{ "bad-wake-timeout.pb", "wake decision cannot be a timeout" },
	{ "bad-event-kind.pb", "event 3: unknown operation kind 99" },
	{ "bad-event-fn.pb", "event 3: unknown libc function 200" },
	{ "bad-event-thread.pb", "event 3: thread T1048576 is out of range" },
	{ "bad-user-point.pb", "user point 0: kind 5" },
	{ "bad-failure-kind.pb", "unknown failure kind 42" },
	{ "bad-failure-signal.pb", "failure signal 1000" },
	{ "bad-failure-thread.pb", "failing thread -7" },
	{ "bad-points.pb", "scheduling-point sets 0x80" },
	{ "bad-build-id.pb", "build id of 65 bytes" },
	{ "bad-nul-argv.pb", "argument 1 contains a NUL byte" },
	{ "bad-nul-name.pb", "thread name 0 contains a NUL byte" },
	{ "bad-huge-count.pb", "65537 arguments, more than the limit" },
	{ "bad-symbol-nul.pb", "symbol 1 contains a NUL byte" },
	{ "bad-symbol-long.pb", "symbol 2: text of 4097 bytes, more than "
				"4096" },
	{ "valid-script.txt", NULL },
	{ "valid-script-steps.txt", NULL },
	{ "bad-script-directive.txt", "line 4: unknown directive 'jump'" },
	{ "bad-script-thread.txt", "line 2: thread T70000 is out of range" },
	{ "bad-script-no-thread.txt", "line 3: 'wake' needs a thread" },
	{ "bad-script-trailing.txt", "line 2: unexpected 'T3' after" },
	{ "bad-script-version.txt", "line 1: schedule script version 2 is "
				    "not supported" },
	{ "bad-script-points.txt", "line 2: unknown point set 'memory'" },
	{ "bad-script-seed.txt", "line 1: bad seed '-1'" },
	{ "bad-script-step.txt", "line 3: expected ':' after 'step 12'" },
	{ "bad-script-nul.txt", "line 2: NUL byte" },
	{ "bad-script-binary.txt", "line 1: unknown directive" },
};

#define NCORPUS (sizeof(corpus) / sizeof(corpus[0]))

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static int load_any(const char *path, struct schedule *s, char *err,
		    size_t errlen)
{
	size_t len;
	char *text;
	int r;

	if (!ends_with(path, ".txt"))
		return schedule_load(path, s, err, errlen);
	text = read_text(path, &len);
	r = schedule_parse_script(text, len, s, err, errlen);
	free(text);
	return r;
}

Test(corpus, each_file_gives_its_result)
{
	for (size_t i = 0; i < NCORPUS; i++) {
		char *p = path_in(corpus_dir(), corpus[i].name), err[256];
		struct schedule s;
		int r = load_any(p, &s, err, sizeof(err));

		if (!corpus[i].err) {
			cr_assert_eq(r, 0, "%s: %s", corpus[i].name, err);
		} else {
			cr_assert_eq(r, -EINVAL, "%s: %d", corpus[i].name, r);
			cr_assert(strstr(err, corpus[i].err),
				  "%s: \"%s\" lacks \"%s\"", corpus[i].name,
				  err, corpus[i].err);
			assert_one_line(err);
			cr_assert_eq(s.ndecisions, 0, "left zeroed");
		}
		schedule_free(&s);
		free(p);
	}
}

/* A file added to the corpus must be given its expected result above. */
Test(corpus, every_file_is_listed)
{
	DIR *d = opendir(corpus_dir());
	int n = 0;

	cr_assert(d, "corpus %s", corpus_dir());
	for (struct dirent *e; (e = readdir(d));) {
		size_t i;

		if (strncmp(e->d_name, "valid-", 6) &&
		    strncmp(e->d_name, "bad-", 4))
			continue;
		for (i = 0; i < NCORPUS; i++)
			if (!strcmp(corpus[i].name, e->d_name))
				break;
		cr_assert_lt(i, NCORPUS, "%s is not in the table",
			     e->d_name);
		n++;
	}
	closedir(d);
	cr_assert_eq(n, (int)NCORPUS);
}

/* --- scripts -------------------------------------------------------------- */

static char *script_of(const struct schedule *s, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	cr_assert(f);
	cr_assert_eq(schedule_write_script(f, s), 0);
	cr_assert_eq(fclose(f), 0);
	return text;
}

static int parse(const char *text, struct schedule *s, char *err,
		 size_t errlen)
{
	return schedule_parse_script(text, strlen(text), s, err, errlen);
}

Test(script, round_trip)
{
	struct schedule a, b;
	char err[256], *text;
	size_t len;

	fill_full(&a);
	text = script_of(&a, &len);
	cr_assert_eq(schedule_parse_script(text, len, &b, err, sizeof(err)),
		     0, "%s\n%s", err, text);
	cr_assert_eq(b.ndecisions, a.ndecisions);
	for (size_t i = 0; i < a.ndecisions; i++) {
		cr_assert_eq(b.decisions[i].kind, a.decisions[i].kind);
		cr_assert_eq(b.decisions[i].thread, a.decisions[i].thread);
		cr_assert_eq(b.decisions[i].timeout, a.decisions[i].timeout);
		cr_assert_eq(b.decisions[i].step, SCHEDULE_STEP_UNKNOWN);
		cr_assert_eq(b.decisions[i].nalts, 0, "match by thread");
		cr_assert_eq(b.decisions[i].index, 0);
	}
	cr_assert_eq(b.seed, a.seed);
	cr_assert_eq(b.points, a.points);
	cr_assert_str_eq(b.strategy, "script");
	cr_assert_eq(b.format_version, SCHEDULE_FORMAT_VERSION);
	schedule_free(&b);
	free(text);
}

/* An event loop's wait decision names its alternative: "poll T1 2". */
Test(script, wait_decisions_keep_their_alternative)
{
	static const char text[] = "poll T1 2\npoll T1\nrun T0\n";
	struct schedule b;
	char err[256], *out;
	size_t len;

	cr_assert_eq(schedule_parse_script(text, sizeof(text) - 1, &b, err,
					   sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(b.ndecisions, 3);
	cr_assert_eq(b.decisions[0].kind, DEC_POLL);
	cr_assert_eq(b.decisions[0].thread, 1);
	cr_assert_eq(b.decisions[0].index, 2);
	cr_assert_eq(b.decisions[1].kind, DEC_POLL);
	cr_assert_eq(b.decisions[1].index, 0);
	cr_assert_eq(b.decisions[2].kind, DEC_RUN);
	out = script_of(&b, &len);
	cr_assert(strstr(out, "poll T1 2\n") && strstr(out, "poll T1 0\n"),
		  "%s", out);
	free(out);
	schedule_free(&b);
}

Test(script, writer_explains_each_decision)
{
	struct schedule a;
	char *text;
	size_t len;

	fill_full(&a);
	a.program = "./bank\nrun T9"; /* a newline must not inject a line */
	text = script_of(&a, &len);
	cr_assert(!strncmp(text, "# ptloom schedule script v1\n", 28), "%s",
		  text);
	cr_assert(strstr(text, "# program: ./bank\\nrun T9\n"), "%s", text);
	cr_assert(strstr(text, "\nseed 18446744073709551615\n"), "%s", text);
	cr_assert(strstr(text, "\npoints sync,races\n"), "%s", text);
	cr_assert(strstr(text, "# step 3: T1 pthread_mutex_lock(0x404060)\n"
			       "run T1\n"),
		  "%s", text);
	cr_assert(strstr(text, "# step 7: T2 futex_wait(0x404064)  "
			       "[preemption]\nrun T2\n"),
		  "%s", text);
	cr_assert(strstr(text, "# step 9: T0 futex_wake(0x404064)\n"
			       "wake T65535\n"),
		  "%s", text);
	cr_assert(strstr(text, "# step 12: T1 timeout\ntimeout T1\n"), "%s",
		  text);
	free(text);
}

Test(script, example_from_the_docs)
{
	static const char text[] =
		"# ptloom schedule script v1\n"
		"# program: ./bank\n"
		"seed 0\n"
		"points sync\n"
		"# step 12: T1 pthread_mutex_lock(0x404060)\n"
		"run T2\n"
		"run T1            # comments allowed after decisions\n"
		"wake T3\n"
		"timeout T1        # the timed wait of T1 times out here\n";
	struct schedule s;
	char err[256];

	cr_assert_eq(parse(text, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.ndecisions, 4);
	cr_assert_eq(s.decisions[0].kind, DEC_RUN);
	cr_assert_eq(s.decisions[0].thread, 2);
	cr_assert_eq(s.decisions[1].thread, 1);
	cr_assert_eq(s.decisions[2].kind, DEC_WAKE);
	cr_assert_eq(s.decisions[2].thread, 3);
	cr_assert_eq(s.decisions[3].kind, DEC_RUN);
	cr_assert_eq(s.decisions[3].timeout, 1);
	cr_assert_eq(s.decisions[3].thread, 1);
	cr_assert_eq(s.seed, 0);
	cr_assert_eq(s.points, POINTS_SYNC);
	schedule_free(&s);
}

Test(script, bom_steps_crlf_tabs_and_no_trailing_newline)
{
	static const char text[] = "\xef\xbb\xbfpoints atomics, races,sync\r\n"
				   "\tstep 4: run T0\r\n"
				   "step 5 :wake T12 # why\n"
				   "step 6:timeout T1\n"
				   "\n   # nothing\n"
				   "seed 0x10\n"
				   "run T65535";
	struct schedule s;
	char err[256];

	cr_assert_eq(parse(text, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.points, POINTS_SYNC | POINTS_ATOMICS | POINTS_RACES);
	cr_assert_eq(s.seed, 16);
	cr_assert_eq(s.ndecisions, 4);
	cr_assert_eq(s.decisions[0].step, 4);
	cr_assert_eq(s.decisions[1].step, 5);
	cr_assert_eq(s.decisions[1].kind, DEC_WAKE);
	cr_assert_eq(s.decisions[1].thread, 12);
	cr_assert_eq(s.decisions[2].step, 6);
	cr_assert_eq(s.decisions[2].timeout, 1);
	cr_assert_eq(s.decisions[3].step, SCHEDULE_STEP_UNKNOWN);
	cr_assert_eq(s.decisions[3].thread, 65535);
	schedule_free(&s);
}

Test(script, empty_script_is_the_default_schedule)
{
	struct schedule s;
	char err[256];

	cr_assert_eq(schedule_parse_script("", 0, &s, err, sizeof(err)), 0);
	cr_assert_eq(s.ndecisions, 0);
	cr_assert_eq(s.points, POINTS_SYNC);
	schedule_free(&s);
	cr_assert_eq(schedule_parse_script(NULL, 0, &s, err, sizeof(err)), 0);
	schedule_free(&s);
}

Test(script, parse_errors)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "run T1\nrun\n", "line 2: 'run' needs a thread, like T1" },
		{ "run 1\n", "line 1: expected a thread like T1, not '1'" },
		{ "run T\n", "line 1: expected a thread like T1, not 'T'" },
		{ "run T-1\n", "not 'T-1'" },
		{ "run T0x1\n", "not 'T0x1'" },
		{ "run T65536\n", "line 1: thread T65536 is out of range" },
		{ "run T99999999999999999999999\n", "expected a thread" },
		{ "run T1 T2\n", "line 1: unexpected 'T2' after the decision" },
		{ "\n\nfoo T1\n", "line 3: unknown directive 'foo'" },
		{ "Run T1\n", "unknown directive 'Run'" },
		{ "step\n", "line 1: 'step' needs a number" },
		{ "step x: run T1\n", "line 1: bad step number 'x'" },
		{ "step 4294967295: run T1\n", "bad step number" },
		{ "step 3 run T1\n", "expected ':' after 'step 3'" },
		{ "step 3:\n", "'step 3:' must be followed by run" },
		{ "step 3: seed 1\n",
		  "expected run, wake, poll, timeout or buffer" },
		{ "poll T1 x\n", "line 1: expected an alternative" },
		{ "poll T1 256\n", "expected an alternative (0 to 255)" },
		{ "seed\n", "line 1: 'seed' needs a number" },
		{ "seed 18446744073709551616\n", "bad seed" },
		{ "seed 1 2\n", "unexpected '2' after the seed" },
		{ "seed 1\nseed 2\n", "line 2: 'seed' given twice" },
		{ "points\n", "line 1: 'points' needs a list" },
		{ "points sync,,foo\n", "unknown point set 'foo'" },
		{ "points none,sync\n", "'none' cannot be combined" },
		{ "points sync\npoints races\n", "'points' given twice" },
		{ "# ptloom schedule script v2\n",
		  "line 1: schedule script version 2 is not supported" },
		{ "# ptloom schedule script vX\n", "bad script version 'X'" },
		/* "?" "?" "?": no trigraph */
		{ "run T1\nwake \x01\x02\xff\n", "not '?" "?" "?'" },
		{ "gggggggggggggggggggggggggggggggggggggggggggggggggg\n",
		  "'gggggggggggggggggggggggggggggggg...'" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct schedule s;
		int r = parse(cases[i].text, &s, err, sizeof(err));

		cr_assert_eq(r, -EINVAL, "\"%s\" parsed", cases[i].text);
		cr_assert(strstr(err, cases[i].err),
			  "\"%s\": \"%s\" lacks \"%s\"", cases[i].text, err,
			  cases[i].err);
		cr_assert(!strncmp(err, "line ", 5), "%s", err);
		assert_one_line(err);
		cr_assert_eq(s.ndecisions, 0);
		cr_assert_null(s.strategy, "left zeroed");
	}
}

Test(script, nul_byte_is_an_error)
{
	static const char text[] = "run T1\nrun T2\0run T3\n";
	struct schedule s;
	char err[256];

	cr_assert_eq(schedule_parse_script(text, sizeof(text) - 1, &s, err,
					   sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "line 2: NUL byte: not a text file");
}

Test(script, many_decisions)
{
	size_t n = 100000, len = 0;
	char *text = malloc(n * 12 + 1);
	struct schedule s;
	char err[256];

	cr_assert(text);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "run T%zu\n", i % 7);
	cr_assert_eq(schedule_parse_script(text, len, &s, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(s.ndecisions, n);
	cr_assert_eq(s.decisions[n - 1].thread, (n - 1) % 7);
	schedule_free(&s);
	free(text);
}

/* --- names ---------------------------------------------------------------- */

Test(event, names)
{
	cr_assert_str_eq(op_kind_name(OP_START), "start");
	cr_assert_str_eq(op_kind_name(OP_EXIT), "exit");
	cr_assert_str_eq(op_kind_name(OP_FUTEX_WAIT), "futex_wait");
	cr_assert_str_eq(op_kind_name(OP_SYSCALL), "syscall");
	cr_assert_str_eq(op_kind_name(-1), "unknown");
	cr_assert_str_eq(op_kind_name(OP_KIND_MAX), "unknown");
	cr_assert_str_eq(call_fn_name(FN_MUTEX_LOCK), "pthread_mutex_lock");
	cr_assert_str_eq(call_fn_name(FN_USLEEP), "usleep");
	cr_assert_str_eq(call_fn_name(FN_MAX), "unknown");
	for (int k = 0; k < OP_KIND_MAX; k++)
		cr_assert_str_neq(op_kind_name(k), "unknown", "kind %d", k);
	for (int f = 0; f < FN_MAX; f++)
		cr_assert_str_neq(call_fn_name(f), "unknown", "fn %d", f);
}

Test(event, locality)
{
	static const int local[] = { OP_FUTEX_WAIT, OP_FUTEX_WAKE,
				     OP_FUTEX_REQUEUE, OP_READ, OP_WRITE,
				     OP_ACCEPT, OP_CONNECT, OP_POLL,
				     OP_ATOMIC, OP_ACCESS, OP_ANNOTATE };
	static const int global[] = { OP_NONE, OP_START, OP_EXIT,
				      OP_EXIT_GROUP, OP_CLONE, OP_KILL,
				      OP_WAIT4, OP_TIMEOUT, OP_WOKEN, OP_SPIN,
				      OP_SYSCALL, OP_SLEEP, OP_KIND_MAX };

	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		cr_assert(op_is_local(local[i], FN_NONE), "%d", local[i]);
	for (size_t i = 0; i < sizeof(global) / sizeof(global[0]); i++)
		cr_assert(!op_is_local(global[i], FN_NONE), "%d", global[i]);
	cr_assert(op_is_local(OP_CALL, FN_MUTEX_LOCK));
	cr_assert(op_is_local(OP_CALL, FN_COND_WAIT));
	cr_assert(op_is_local(OP_CALL, FN_SEM_POST));
	cr_assert(!op_is_local(OP_CALL, FN_CREATE), "thread lifetime");
	cr_assert(!op_is_local(OP_CALL, FN_JOIN));
	cr_assert(!op_is_local(OP_CALL, FN_USLEEP), "the clock");
	cr_assert(!op_is_local(OP_CALL, FN_MAX));
}
