/*
 * Crafts schedule files for the hardening tests (tests/integration,
 * suites schedule_files and hardening), as a hostile user would:
 *
 *   schedtool IN OUT env NAME=VALUE   IN with one more environment entry
 *   schedtool IN OUT objects PATH SIZE N
 *                                     IN with N more loaded objects PATH
 *                                     of SIZE bytes, hashed on replay
 *   schedtool IN OUT noeq TEXT        IN with the environment entry
 *                                     PTLOOM_NOEQ_TEXT (no '=')
 *   schedtool IN OUT fence            IN with ```` as its message, a
 *                                     backtrace line and a value
 *   schedtool IN OUT hostile          IN with escape sequences and invalid
 *                                     UTF-8 in every string a file holds
 *   schedtool - OUT big N             a schedule of N events over 4
 *                                     threads, each with its own symbol
 *   schedtool - OUT bigevents N       the same without symbols
 *   schedtool - OUT collide N         N events and symbols whose addresses
 *                                     collide in an unkeyed symbol hash
 *   schedtool - OUT random N SEED     N events of random shapes
 *   schedtool IN OUT clock NS         IN starting CLOCK_REALTIME at NS
 *
 * The files are written with schedule_save(), so they load: only their
 * content is hostile.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../replayer/schedule.h"

#define EVIL "\x1b]0;pwned\x07\x1b[2J\x1b[H\r\nptloom: PASS \xff\xfe\xc0\xaf" \
	     "\xe2\x80\xae\xc2\x9b"

static void die(const char *what)
{
	fprintf(stderr, "schedtool: %s\n", what);
	exit(1);
}

static char *evil(const char *prefix)
{
	char *s = malloc(strlen(prefix) + sizeof(EVIL) + 1);

	if (!s)
		die("out of memory");
	sprintf(s, "%s%s", prefix, EVIL);
	return s;
}

static void add_env(struct schedule *s, const char *kv)
{
	s->env = realloc(s->env, (size_t)(s->nenv + 2) * sizeof(char *));
	if (!s->env)
		die("out of memory");
	s->env[s->nenv++] = strdup(kv);
	s->env[s->nenv] = NULL;
}

/* n more loaded objects named path, recorded as size bytes without a
 * build-id (so a replay hashes them) */
static void add_objects(struct schedule *s, const char *path, uint64_t size,
			size_t n)
{
	s->objects = realloc(s->objects,
			     (s->nobjects + n) * sizeof(*s->objects));
	if (!s->objects)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		struct loaded_object *o = &s->objects[s->nobjects++];

		memset(o, 0, sizeof(*o));
		o->path = strdup(path);
		o->size = size;
		o->hash = 0x1234567890abcdefull;
	}
}

/* Markdown fences in the message, a backtrace and the environment */
static void fence(struct schedule *s)
{
	free(s->message);
	s->message = strdup("````");
	for (int i = 0; i < s->nthread_backtraces; i++)
		free(s->thread_backtraces[i]);
	free(s->thread_backtraces);
	s->thread_backtraces = calloc(1, sizeof(char *));
	if (!s->message || !s->thread_backtraces)
		die("out of memory");
	s->thread_backtraces[0] = strdup("````\n```` injected");
	s->nthread_backtraces = 1;
	add_env(s, "FENCE=````");
}

/* After saving: the bytes of "PTLOOM_NOEQ=" in the file become
 * "PTLOOM_NOEQ_" (the same length, so the file still parses): an
 * environment entry without '=', which schedule_save refuses to write. */
static void patch_noeq(const char *path)
{
	static const char key[] = "PTLOOM_NOEQ=";
	FILE *f = fopen(path, "r+b");
	char *buf = NULL;
	long n = 0;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) || !(buf = malloc((size_t)n + 1)) ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n)
		die("cannot read back the file");
	char *p = memmem(buf, (size_t)n, key, sizeof(key) - 1);

	if (!p)
		die("no PTLOOM_NOEQ= entry");
	p[sizeof(key) - 2] = '_';
	if (fseek(f, 0, SEEK_SET) || fwrite(buf, 1, (size_t)n, f) != (size_t)n ||
	    fclose(f))
		die("cannot write the file back");
	free(buf);
}

static void hostile(struct schedule *s)
{
	free(s->message);
	s->message = evil("message ");
	free(s->location);
	s->location = evil("location ");
	for (int i = 1; i < s->argc; i++) {
		free(s->argv[i]);
		s->argv[i] = evil("arg ");
	}
	add_env(s, "EVIL=" EVIL);
	for (int i = 0; i < s->nthread_names; i++) {
		free(s->thread_names[i]);
		s->thread_names[i] = evil("name ");
	}
	for (size_t i = 0; i < s->nsyms; i++) {
		free(s->syms[i].text);
		s->syms[i].text = evil("sym ");
	}
}

static void big(struct schedule *s, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->format_version = SCHEDULE_FORMAT_VERSION;
	s->program = strdup("/bin/true");
	s->argc = 1;
	s->argv = calloc(2, sizeof(char *));
	s->argv[0] = strdup("true");
	s->env = calloc(1, sizeof(char *));
	s->strategy = strdup("dfs");
	s->location = strdup("");
	s->message = strdup("");
	s->ptloom_version = strdup("test");
	s->events = calloc(n, sizeof(*s->events));
	s->syms = calloc(n, sizeof(*s->syms));
	if (!s->events || !s->syms)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		struct event *e = &s->events[i];
		char text[64];

		e->step = (uint32_t)i;
		e->thread = (uint16_t)(i / 7 % 4);
		e->kind = OP_CALL;
		e->fn = 1;
		e->obj = 0x1000 + 8 * i;
		e->pc = 0x400000 + 16 * i;
		e->preempt = i % 7 == 0 && i;
		s->syms[i].addr = e->obj;
		s->syms[i].data = 1;
		snprintf(text, sizeof(text), "object_%zu", i);
		s->syms[i].text = strdup(text);
	}
	s->nevents = n;
	s->nsyms = n;
}

/* n events of random kinds, threads and flags (some with symbols): every
 * shape show draws, from seed */
static void random_trace(struct schedule *s, size_t n, unsigned long seed)
{
	static const uint8_t kinds[] = { OP_CALL, OP_FUTEX_WAIT, OP_FUTEX_WAKE,
					 OP_WOKEN, OP_ATOMIC, OP_ACCESS,
					 OP_START, OP_EXIT, OP_YIELD, OP_SPIN };
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	unsigned t = 0;

	big(s, 0);
	s->events = calloc(n + 1, sizeof(*s->events));
	s->syms = calloc(n + 1, sizeof(*s->syms));
	s->failure = FAIL_CRASH;
	s->signal = 6;
	if (!s->events || !s->syms)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		struct event *e = &s->events[i];

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (x % 5 == 0)
			t = (unsigned)(x >> 8) % 5;
		e->step = (uint32_t)i;
		e->thread = (uint16_t)t;
		e->kind = kinds[(x >> 16) % (x % 3 ? 6 : sizeof(kinds))];
		if (x % 4 == 0)
			e->kind = OP_ATOMIC; /* quiet stretches */
		e->fn = e->kind == OP_CALL ? 1 : 0;
		e->preempt = x % 11 == 0;
		e->decided = x % 13 == 0;
		e->obj = 0x1000 + 8 * ((x >> 24) % 16);
		e->pc = 0x400000 + 16 * ((x >> 32) % 64);
		if (x % 7 == 0) {
			char text[64];

			snprintf(text, sizeof(text), "fn_%zu at r.c:%zu", i, i);
			s->syms[s->nsyms].addr = e->pc;
			s->syms[s->nsyms++].text = strdup(text);
		}
	}
	s->nevents = n;
}

/*
 * n events, each with its own object symbol, whose addresses all land in
 * one probe chain of a symbol index hashed with the fixed function ptloom
 * used before its hash had a key (h = (addr ^ K) * C, h ^= h >> 29, the
 * slot is h's low bits): every lookup and insertion walked the chain.
 */
static void colliding(struct schedule *s, size_t n)
{
	const uint64_t c = 0xff51afd7ed558ccdull, k = 0x9e3779b97f4a7c15ull;
	uint64_t inv = c, j = 0;

	for (int i = 0; i < 6; i++) /* Newton: c * inv == 1 mod 2^64 */
		inv *= 2 - c * inv;
	big(s, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t addr;

		do { /* low 24 bits 0: one slot in any table up to 2^24 */
			uint64_t y = ++j << 24;
			uint64_t h = y ^ (y >> 29) ^ (y >> 58);

			addr = (h * inv) ^ k;
		} while (!addr || addr >> 63);
		s->syms[i].addr = addr;
		s->events[i].obj = addr;
	}
}

/* n events and no symbols: almost all of the file is its trace */
static void big_events(struct schedule *s, size_t n)
{
	big(s, n);
	for (size_t i = 0; i < s->nsyms; i++)
		free(s->syms[i].text);
	s->nsyms = 0;
}

int main(int argc, char **argv)
{
	struct schedule s;
	char err[512];

	if (argc < 4)
		die("usage: schedtool IN OUT env KV | noeq TEXT | fence | "
		    "objects PATH SIZE N | "
		    "hostile | big N | "
		    "bigevents N | collide N | random N SEED | clock NS");
	if (!strcmp(argv[3], "big") && argc == 5) {
		big(&s, strtoul(argv[4], NULL, 10));
	} else if (!strcmp(argv[3], "collide") && argc == 5) {
		colliding(&s, strtoul(argv[4], NULL, 10));
	} else if (!strcmp(argv[3], "bigevents") && argc == 5) {
		big_events(&s, strtoul(argv[4], NULL, 10));
	} else if (!strcmp(argv[3], "random") && argc == 6) {
		random_trace(&s, strtoul(argv[4], NULL, 10),
			     strtoul(argv[5], NULL, 10));
	} else {
		if (schedule_load(argv[1], &s, err, sizeof(err)))
			die(err);
		if (!strcmp(argv[3], "env") && argc == 5)
			add_env(&s, argv[4]);
		else if (!strcmp(argv[3], "objects") && argc == 7)
			add_objects(&s, argv[4], strtoull(argv[5], NULL, 10),
				    strtoul(argv[6], NULL, 10));
		else if (!strcmp(argv[3], "noeq") && argc == 5) {
			char kv[4200];

			snprintf(kv, sizeof(kv), "PTLOOM_NOEQ=%s", argv[4]);
			add_env(&s, kv);
		} else if (!strcmp(argv[3], "fence"))
			fence(&s);
		else if (!strcmp(argv[3], "hostile"))
			hostile(&s);
		else if (!strcmp(argv[3], "clock") && argc == 5)
			s.clock_start_realtime_ns =
				strtoull(argv[4], NULL, 10);
		else
			die("unknown operation");
	}
	int e = schedule_save(argv[2], &s);

	if (e) {
		snprintf(err, sizeof(err), "cannot save %s: %s", argv[2],
			 strerror(-e));
		die(err);
	}
	if (!strcmp(argv[3], "noeq"))
		patch_noeq(argv[2]);
	schedule_free(&s);
	return 0;
}
