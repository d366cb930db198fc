/*
 * Writes the schedule-file corpus in tests/corpus: valid files (valid-*.pb)
 * that must load, and malformed ones (bad-*.pb) that must be refused with
 * -EINVAL and a message.  tests/unit/test_schedule.c checks each file's
 * expected result; tests/fuzz/run.sh starts the fuzzer from this corpus.
 *
 * The files are committed; rerun this after changing the format:
 *
 *   gen_corpus tests/corpus
 *
 * (built as `gen_corpus` by meson, not by default).  The output is the
 * same on every run: no time, no randomness other than a fixed LCG.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../proto/schedule_pb.h"
#include "../../replayer/schedule.h"

static const char *outdir;

static void die(const char *what)
{
	fprintf(stderr, "gen_corpus: %s\n", what);
	exit(1);
}

static void put(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "wb");
	if (!f || (len && fwrite(buf, 1, len, f) != len) || fclose(f))
		die(path);
}

/* The payload of m behind the magic (or behind a wrong one). */
static void put_msg(const char *name, const Ptloom__Schedule *m,
		    const char *magic)
{
	size_t n = ptloom__schedule__get_packed_size(m);
	uint8_t *buf = malloc(SCHEDULE_MAGIC_LEN + n);

	if (!buf)
		die("out of memory");
	memcpy(buf, magic, SCHEDULE_MAGIC_LEN);
	ptloom__schedule__pack(m, buf + SCHEDULE_MAGIC_LEN);
	put(name, buf, SCHEDULE_MAGIC_LEN + n);
	free(buf);
}

static char *argv_full[] = { "./bank", "--accounts", "3", NULL };
static char *env_full[] = { "LC_ALL=C", "BANK_MODE=fast", NULL };
static char *names_full[] = { "main", NULL, "worker-1", "worker-2" };
static struct sym_entry syms_full[] = {
	{ .addr = 0x401136, .data = 0, .text = "main at bank.c:40" },
	{ .addr = 0x4011a3, .data = 0, .text = "withdraw at bank.c:23" },
	{ .addr = 0x4011c0, .data = 0, .text = "deposit at bank.c:17" },
	{ .addr = 0x404060, .data = 1, .text = "lock" },
	{ .addr = 0x404064, .data = 1, .text = "balance" },
};

/* A schedule with every field set, as `ptloom run` would save it. */
static void fill_full(struct schedule *s, struct decision *d,
		      struct event *e, struct user_point *u)
{
	static const struct decision dec[] = {
		{ .step = 3, .kind = DEC_RUN, .thread = 1, .index = 1,
		  .nalts = 2 },
		{ .step = 7, .kind = DEC_RUN, .thread = 2, .index = 0,
		  .nalts = 3 },
		{ .step = 9, .kind = DEC_WAKE, .thread = 3, .index = 1,
		  .nalts = 2 },
		{ .step = 12, .kind = DEC_RUN, .timeout = 1, .thread = 1,
		  .index = 2, .nalts = 3 },
	};
	static const struct event ev[] = {
		{ .step = 0, .thread = 0, .kind = OP_START },
		{ .step = 1, .thread = 0, .kind = OP_CLONE, .pc = 0x401136 },
		{ .step = 2, .thread = 1, .kind = OP_START },
		{ .step = 3, .thread = 1, .kind = OP_CALL, .fn = FN_MUTEX_LOCK,
		  .decided = 1, .obj = 0x404060, .pc = 0x4011a2 },
		{ .step = 7, .thread = 2, .kind = OP_FUTEX_WAIT, .preempt = 1,
		  .decided = 1, .obj = 0x404064, .pc = 0x4011c0, .arg = 2 },
		{ .step = 9, .thread = 0, .kind = OP_FUTEX_WAKE,
		  .obj = 0x404064, .arg = 1 },
		{ .step = 12, .thread = 1, .kind = OP_TIMEOUT, .decided = 1 },
		{ .step = 13, .thread = 2, .kind = OP_WRITE, .obj = 1,
		  .arg = -5 },
		{ .step = 14, .thread = 0, .kind = OP_EXIT_GROUP },
	};
	static const struct user_point up[] = {
		{ .addr = 0x401150, .kind = OP_ATOMIC },
		{ .addr = 0x4011f0, .kind = OP_ACCESS },
		{ .addr = 0x401230, .kind = OP_SPIN },
	};
	static const uint8_t bid[20] = { 0x3f, 0x2a, 0x9c, 0x01, 0xde, 0xad,
					 0xbe, 0xef, 0x00, 0x11, 0x22, 0x33,
					 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
					 0xaa, 0xbb };

	memset(s, 0, sizeof(*s));
	memcpy(d, dec, sizeof(dec));
	memcpy(e, ev, sizeof(ev));
	memcpy(u, up, sizeof(up));
	s->format_version = SCHEDULE_FORMAT_VERSION;
	s->program = "/usr/local/bin/bank";
	s->argv = argv_full;
	s->argc = 3;
	s->env = env_full;
	s->nenv = 2;
	memcpy(s->build_id, bid, sizeof(bid));
	s->build_id_len = sizeof(bid);
	s->program_size = 17640;
	s->program_hash = 0x8f3a5c2e91d04b77ull;
	s->points = POINTS_SYNC | POINTS_ATOMICS | POINTS_RACES;
	s->seed = 42;
	s->strategy = "dfs";
	s->preemption_bound = 2;
	s->clock_start_realtime_ns = 1700000000000000000ull;
	s->clock_start_monotonic_ns = 1000000000ull;
	s->clock_quantum_ns = 1000;
	s->ptloom_version = "0.1.0";
	s->decisions = d;
	s->ndecisions = sizeof(dec) / sizeof(dec[0]);
	s->user_points = u;
	s->nuser_points = sizeof(up) / sizeof(up[0]);
	s->failure = FAIL_CRASH;
	s->signal = 6;
	s->exit_status = 134;
	s->fail_thread = 2;
	s->location = "withdraw at bank.c:23";
	s->message = "bank: bank.c:31: main: Assertion `balance >= 0' failed.";
	s->preemptions = 1;
	s->trace_hash = 0x0123456789abcdefull;
	s->events = e;
	s->nevents = sizeof(ev) / sizeof(ev[0]);
	s->thread_names = names_full;
	s->nthread_names = 4;
	s->syms = syms_full;
	s->nsyms = sizeof(syms_full) / sizeof(syms_full[0]);
}

static void put_schedule(const char *name, const struct schedule *s,
			 uint8_t **bytes, size_t *len)
{
	int r = schedule_encode(s, bytes, len);

	if (r) {
		fprintf(stderr, "gen_corpus: %s: %s\n", name, strerror(-r));
		exit(1);
	}
	put(name, *bytes, *len);
}

static Ptloom__Schedule *unpack(const uint8_t *bytes, size_t len)
{
	Ptloom__Schedule *m = ptloom__schedule__unpack(
		NULL, len - SCHEDULE_MAGIC_LEN, bytes + SCHEDULE_MAGIC_LEN);

	if (!m)
		die("cannot unpack our own file");
	return m;
}

int main(int argc, char **argv)
{
	struct decision d[8];
	struct event e[16];
	struct user_point u[4];
	struct schedule s;
	uint8_t *full, *b, big[64], garbage[512];
	size_t full_len, len, i;
	uint32_t lcg = 12345;
	Ptloom__Schedule *m, mm = PTLOOM__SCHEDULE__INIT;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	outdir = argv[1];

	/* --- valid -------------------------------------------------------- */
	fill_full(&s, d, e, u);
	put_schedule("valid-full.pb", &s, &full, &full_len);

	memset(&s, 0, sizeof(s));
	s.fail_thread = -1;
	put_schedule("valid-minimal.pb", &s, &b, &len);
	free(b);

	/* what saving a parsed script gives: steps and nalts unknown */
	fill_full(&s, d, e, u);
	for (i = 0; i < s.ndecisions; i++) {
		d[i].step = SCHEDULE_STEP_UNKNOWN;
		d[i].index = 0;
		d[i].nalts = 0;
	}
	s.events = NULL;
	s.nevents = 0;
	s.syms = NULL;
	s.nsyms = 0;
	s.strategy = "script";
	put_schedule("valid-from-script.pb", &s, &b, &len);
	free(b);

	/* as written before the format had symbols (field 23) */
	fill_full(&s, d, e, u);
	s.syms = NULL;
	s.nsyms = 0;
	put_schedule("valid-no-symbols.pb", &s, &b, &len);
	free(b);

	/* the environment and loaded objects a hostile file would carry:
	 * they load (a replay refuses the entries, never reads the /proc
	 * object) */
	fill_full(&s, d, e, u);
	{
		static char *env_hostile[] = {
			"LC_ALL=C", "PATH=/tmp/evil:/usr/bin",
			"BASH_ENV=$(touch /tmp/pwned)",
			"BASH_FUNC_true%%=() { :; }", "LD_PRELOAD=/tmp/x.so",
			"EMPTY=", "FENCE=````", NULL
		};
		static struct loaded_object objs[] = {
			{ .path = "/proc/self/pagemap", .size = 1000000,
			  .hash = 0x1234567890abcdefull },
			{ .path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
			  .build_id = { 0x93, 0xac, 0x61, 0xec },
			  .build_id_len = 4 },
			{ .path = "/etc/ld.so.cache", .size = 45223,
			  .mtime_ns = 1700000000000000000ull,
			  .hash = 0x57b16ae4a3cda577ull },
		};

		s.env = env_hostile;
		s.nenv = 7;
		s.objects = objs;
		s.nobjects = 3;
		put_schedule("valid-env-objects.pb", &s, &b, &len);
		free(b);
	}

	/* a later 1.x writer's extra field is skipped */
	m = unpack(full, full_len);
	{
		/* protobuf-c keeps the length prefix in the data */
		static uint8_t extra[] = { 0x03, 'n', 'e', 'w' };
		ProtobufCMessageUnknownField uf = {
			.tag = 127,
			.wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
			.len = sizeof(extra),
			.data = extra,
		};

		m->base.n_unknown_fields = 1;
		m->base.unknown_fields = &uf;
		put_msg("valid-unknown-field.pb", m, SCHEDULE_MAGIC);
		m->base.n_unknown_fields = 0;
		m->base.unknown_fields = NULL;
	}
	ptloom__schedule__free_unpacked(m, NULL);

	/* --- not a schedule at all ---------------------------------------- */
	put("bad-empty.pb", "", 0);
	put("bad-short.pb", "PTLO", 4);
	m = unpack(full, full_len);
	put_msg("bad-magic.pb", m, "PTLOOX\0\1");
	ptloom__schedule__free_unpacked(m, NULL);
	/* a valid protobuf, but no magic */
	put("bad-no-magic.pb", full + SCHEDULE_MAGIC_LEN,
	    full_len - SCHEDULE_MAGIC_LEN);
	for (i = 0; i < sizeof(garbage); i++) {
		lcg = lcg * 1103515245u + 12345u;
		garbage[i] = (uint8_t)(lcg >> 16);
	}
	put("bad-garbage.pb", garbage, sizeof(garbage));
	memcpy(garbage, SCHEDULE_MAGIC, SCHEDULE_MAGIC_LEN);
	garbage[SCHEDULE_MAGIC_LEN] = 0x08; /* format_version 1 ... */
	garbage[SCHEDULE_MAGIC_LEN + 1] = 0x01;
	garbage[SCHEDULE_MAGIC_LEN + 2] = 0x07; /* ... then wire type 7 */
	put("bad-garbage-after-magic.pb", garbage, 64);
	put("bad-magic-only.pb", SCHEDULE_MAGIC, SCHEDULE_MAGIC_LEN);

	/* --- damaged ------------------------------------------------------ */
	put("bad-truncated.pb", full, full_len * 2 / 3);
	put("bad-truncated-last-byte.pb", full, full_len - 1);
	/* a string claiming 2^62 bytes */
	len = 0;
	memcpy(big, SCHEDULE_MAGIC, SCHEDULE_MAGIC_LEN);
	len = SCHEDULE_MAGIC_LEN;
	big[len++] = 0x08;
	big[len++] = 0x01;
	big[len++] = 0x12; /* program, length-delimited */
	for (i = 0; i < 8; i++)
		big[len++] = 0x80;
	big[len++] = 0x40;
	big[len++] = 'x';
	put("bad-huge-length.pb", big, len);
	/* a decision submessage whose inside is not a Decision */
	len = SCHEDULE_MAGIC_LEN;
	big[len++] = 0x08;
	big[len++] = 0x01;
	big[len++] = 0x82; /* field 16, length-delimited */
	big[len++] = 0x01;
	big[len++] = 0x03;
	big[len++] = 0x08;
	big[len++] = 0xff; /* varint that never ends */
	big[len++] = 0xff;
	put("bad-nested.pb", big, len);
	/* a group (wire type 3), which the format never uses */
	len = SCHEDULE_MAGIC_LEN;
	big[len++] = 0x08;
	big[len++] = 0x01;
	big[len++] = 0x1b;
	big[len++] = 0x1c;
	put("bad-group.pb", big, len);

	/* --- version ------------------------------------------------------ */
	m = unpack(full, full_len);
	m->format_version = 2;
	put_msg("bad-version.pb", m, SCHEDULE_MAGIC);
	/* version 2 and a body version 1 cannot parse: the version wins */
	{
		size_t n = ptloom__schedule__get_packed_size(m);

		b = malloc(SCHEDULE_MAGIC_LEN + n + 2);
		if (!b)
			die("out of memory");
		memcpy(b, SCHEDULE_MAGIC, SCHEDULE_MAGIC_LEN);
		ptloom__schedule__pack(m, b + SCHEDULE_MAGIC_LEN);
		b[SCHEDULE_MAGIC_LEN + n] = 0xff;
		b[SCHEDULE_MAGIC_LEN + n + 1] = 0xff;
		put("bad-version-then-garbage.pb", b,
		    SCHEDULE_MAGIC_LEN + n + 2);
		free(b);
	}
	m->format_version = 0;
	put_msg("bad-version-missing.pb", m, SCHEDULE_MAGIC);
	ptloom__schedule__free_unpacked(m, NULL);

	/* --- absurd values ------------------------------------------------ */
#define MUTATE(name, stmt)                                             \
	do {                                                           \
		m = unpack(full, full_len);                            \
		stmt;                                                  \
		put_msg(name, m, SCHEDULE_MAGIC);                      \
		ptloom__schedule__free_unpacked(m, NULL);              \
	} while (0)

	/* "BANK_MODE=fast" becomes "BANK_MODE_fast", "LC_ALL=C" "=C" */
	MUTATE("bad-env-no-equals.pb", m->env[1].data[9] = '_');
	MUTATE("bad-env-empty-name.pb",
	       (memmove(m->env[0].data, m->env[0].data + 6, 2),
		m->env[0].len = 2));
	MUTATE("bad-thread.pb", m->decisions[1]->thread = 70000);
	MUTATE("bad-kind.pb", m->decisions[1]->kind = 7);
	MUTATE("bad-index.pb", (m->decisions[1]->index = 5,
				m->decisions[1]->nalts = 3));
	MUTATE("bad-nalts.pb", m->decisions[1]->nalts = 1000);
	MUTATE("bad-index-no-nalts.pb", (m->decisions[1]->index = 1,
					 m->decisions[1]->nalts = 0));
	MUTATE("bad-wake-timeout.pb", m->decisions[2]->timeout = 1);
	MUTATE("bad-event-kind.pb", m->events[3]->kind = 99);
	MUTATE("bad-event-fn.pb", m->events[3]->fn = 200);
	MUTATE("bad-event-thread.pb", m->events[3]->thread = 1u << 20);
	MUTATE("bad-user-point.pb", m->user_points[0]->kind = OP_FUTEX_WAIT);
	MUTATE("bad-failure-kind.pb", m->failure->kind = 42);
	MUTATE("bad-failure-signal.pb", m->failure->signal = 1000);
	MUTATE("bad-failure-thread.pb", m->failure->thread = -7);
	MUTATE("bad-points.pb", m->points = 0x80);
	{
		static uint8_t long_id[65]; /* one byte too many */
		uint8_t *saved;

		m = unpack(full, full_len);
		saved = m->build_id.data;
		m->build_id.data = long_id;
		m->build_id.len = sizeof(long_id);
		put_msg("bad-build-id.pb", m, SCHEDULE_MAGIC);
		m->build_id.data = saved; /* free_unpacked frees it */
		ptloom__schedule__free_unpacked(m, NULL);
	}
	MUTATE("bad-nul-argv.pb", m->argv[1].data[2] = 0);
	MUTATE("bad-nul-name.pb", m->thread_names[0].data[1] = 0);
	MUTATE("bad-symbol-nul.pb", m->symbols[1]->text.data[8] = 0);
	{
		static uint8_t long_text[SCHEDULE_MAX_SYMBOL_TEXT + 1];
		ProtobufCBinaryData saved;

		memset(long_text, 'x', sizeof(long_text));
		m = unpack(full, full_len);
		saved = m->symbols[2]->text;
		m->symbols[2]->text.data = long_text;
		m->symbols[2]->text.len = sizeof(long_text);
		put_msg("bad-symbol-long.pb", m, SCHEDULE_MAGIC);
		m->symbols[2]->text = saved; /* free_unpacked frees it */
		ptloom__schedule__free_unpacked(m, NULL);
	}

	/* one argument more than the limit: 128 KiB of two-byte entries,
	 * refused by the scan before anything is allocated */
	mm.format_version = 1;
	mm.n_argv = SCHEDULE_MAX_ARGS + 1;
	mm.argv = calloc(mm.n_argv, sizeof(*mm.argv));
	if (!mm.argv)
		die("out of memory");
	put_msg("bad-huge-count.pb", &mm, SCHEDULE_MAGIC);
	free(mm.argv);

	free(full);
	return 0;
}
