/*
 * Schedule files: struct schedule <-> the bytes of proto/schedule.proto.
 *
 * A file is the magic "PTLOOM\0\1" followed by one serialized Schedule
 * message.  Files are untrusted input (they are shared in bug reports and
 * CI artefacts), so decoding goes in this order and stops at the first
 * problem with -EINVAL and one line in err:
 *
 *   1. size and magic: is it a ptloom schedule at all;
 *   2. a scan of the top-level fields, which reads format_version before
 *      anything is decoded and counts the repeated fields, so that a file
 *      of another version is named as such and a small file cannot make
 *      us allocate gigabytes;
 *   3. protobuf-c decodes the message, with an allocator that has a budget,
 *      all but its decisions, events and symbols, which are most of a large
 *      file: those are decoded one element at a time straight into their
 *      compact arrays, within the same budget (decode_streamed; a view, for
 *      `ptloom show`, checks its events and leaves them in the file);
 *   4. every value is checked against what ptloom can produce while it is
 *      copied into struct schedule.
 *
 * Saving runs the same checks on the struct, so ptloom never writes a file
 * it would refuse to read, and writes atomically (temp file, fsync,
 * rename) so that an interrupted run never leaves half a schedule.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf, strdup, strndup */
#endif
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../proto/schedule_pb.h"
#include "schedule.h"

#define BUILD_ID_MAX sizeof(((struct schedule *)0)->build_id)
#define SIGNAL_MAX 64
/* a process ended by a sanitizer's report (tracer.h SIG_SANITIZER +
 * SANITIZER_*): 257 .. 263 */
#define SANITIZER_SIG_MIN 257
#define SANITIZER_SIG_MAX 263
#define POINTS_ALL \
	(POINTS_SYNC | POINTS_ATOMICS | POINTS_RACES | POINTS_CLEVEL | \
	 POINTS_TSO)

/* Top-level field numbers the scan needs (see proto/schedule.proto). */
enum {
	F_FORMAT_VERSION = 1,
	F_ARGV = 3,
	F_ENV = 4,
	F_DECISIONS = 16,
	F_USER_POINTS = 17,
	F_EVENTS = 21,
	F_THREAD_NAMES = 22,
	F_SYMBOLS = 23,
	F_OBJECTS = 25,
	F_NOT_COVERED = 29,
	F_COUNTED = 30,
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* --- checks shared by decoding and saving -------------------------------- */

/*
 * Each check takes the values at their widest, before they are narrowed
 * into struct schedule, so that a file's 70000 is refused rather than
 * wrapped to a valid T-number.  Indexes in messages count from 0, like
 * steps and T-numbers.
 */
static int check_count(const char *what, uint64_t n, uint64_t max, char *err,
		       size_t errlen)
{
	if (n <= max)
		return 0;
	seterr(err, errlen, "%llu %s, more than the limit of %llu",
	       (unsigned long long)n, what, (unsigned long long)max);
	return -EINVAL;
}

static int check_decision(size_t i, uint64_t kind, uint64_t timeout,
			  uint64_t thread, uint64_t index, uint64_t nalts,
			  char *err, size_t errlen)
{
	if (kind != DEC_RUN && kind != DEC_WAKE && kind != DEC_POLL) {
		seterr(err, errlen, "decision %zu: unknown decision kind %llu",
		       i, (unsigned long long)kind);
		return -EINVAL;
	}
	if (thread >= SCHEDULE_MAX_THREADS) {
		seterr(err, errlen,
		       "decision %zu: thread T%llu is out of range (T0..T%u)",
		       i, (unsigned long long)thread, SCHEDULE_MAX_THREADS - 1);
		return -EINVAL;
	}
	if (nalts > MAX_ALTS) {
		seterr(err, errlen,
		       "decision %zu: %llu alternatives, more than the %d a "
		       "choice point can have",
		       i, (unsigned long long)nalts, MAX_ALTS);
		return -EINVAL;
	}
	if (nalts && index >= nalts) {
		seterr(err, errlen,
		       "decision %zu: chose alternative %llu of only %llu", i,
		       (unsigned long long)index, (unsigned long long)nalts);
		return -EINVAL;
	}
	if (index >= MAX_ALTS) {
		seterr(err, errlen,
		       "decision %zu: chose alternative %llu, more than the %d "
		       "a choice point can have",
		       i, (unsigned long long)index, MAX_ALTS);
		return -EINVAL;
	}
	/* a script's wait decision names its alternative alone */
	if (!nalts && index && kind != DEC_POLL) {
		seterr(err, errlen,
		       "decision %zu: alternative %llu given without the "
		       "number of alternatives",
		       i, (unsigned long long)index);
		return -EINVAL;
	}
	if (timeout > ALT_BUFFER) {
		seterr(err, errlen, "decision %zu: it is both a timeout and a "
				    "buffered store", i);
		return -EINVAL;
	}
	if (timeout && kind == DEC_WAKE) {
		seterr(err, errlen,
		       "decision %zu: a wake decision cannot be a timeout", i);
		return -EINVAL;
	}
	if (timeout == ALT_BUFFER && kind != DEC_RUN) {
		seterr(err, errlen,
		       "decision %zu: only a run decision buffers a store", i);
		return -EINVAL;
	}
	return 0;
}

static int check_user_point(size_t i, uint64_t kind, char *err,
			    size_t errlen)
{
	if (kind == OP_ATOMIC || kind == OP_ACCESS || kind == OP_SPIN)
		return 0;
	seterr(err, errlen,
	       "user point %zu: kind %llu is not atomic, access or spin", i,
	       (unsigned long long)kind);
	return -EINVAL;
}

static int check_event(size_t i, uint64_t thread, uint64_t kind, uint64_t fn,
		       char *err, size_t errlen)
{
	if (thread >= SCHEDULE_MAX_THREADS) {
		seterr(err, errlen,
		       "event %zu: thread T%llu is out of range (T0..T%u)", i,
		       (unsigned long long)thread, SCHEDULE_MAX_THREADS - 1);
		return -EINVAL;
	}
	if (kind >= OP_KIND_MAX) {
		seterr(err, errlen, "event %zu: unknown operation kind %llu",
		       i, (unsigned long long)kind);
		return -EINVAL;
	}
	if (fn >= FN_MAX) {
		seterr(err, errlen, "event %zu: unknown libc function %llu", i,
		       (unsigned long long)fn);
		return -EINVAL;
	}
	return 0;
}

static int check_symbol(size_t i, uint64_t text_len, char *err,
			size_t errlen)
{
	if (text_len <= SCHEDULE_MAX_SYMBOL_TEXT)
		return 0;
	seterr(err, errlen, "symbol %zu: text of %llu bytes, more than %d", i,
	       (unsigned long long)text_len, SCHEDULE_MAX_SYMBOL_TEXT);
	return -EINVAL;
}

static int check_failure(uint64_t kind, int64_t sig, int64_t thread,
			 char *err, size_t errlen)
{
	if (kind > FAIL_SPIN) {
		seterr(err, errlen, "unknown failure kind %llu",
		       (unsigned long long)kind);
		return -EINVAL;
	}
	if (sig < 0 ||
	    (sig > SIGNAL_MAX &&
	     (sig < SANITIZER_SIG_MIN || sig > SANITIZER_SIG_MAX))) {
		seterr(err, errlen, "failure signal %lld is out of range",
		       (long long)sig);
		return -EINVAL;
	}
	if (thread < -1 || thread >= SCHEDULE_MAX_THREADS) {
		seterr(err, errlen, "failing thread %lld is out of range",
		       (long long)thread);
		return -EINVAL;
	}
	return 0;
}

static int check_settings(uint64_t points, uint64_t build_id_len, char *err,
			  size_t errlen)
{
	if (points & ~(uint64_t)POINTS_ALL) {
		seterr(err, errlen, "unknown scheduling-point sets 0x%llx",
		       (unsigned long long)points);
		return -EINVAL;
	}
	if (build_id_len > BUILD_ID_MAX) {
		seterr(err, errlen, "build id of %llu bytes, more than %zu",
		       (unsigned long long)build_id_len, BUILD_ID_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The counts the scan of a file and a struct to save are both held to. */
static int check_counts(uint64_t nargv, uint64_t nenv, uint64_t ndec,
			uint64_t nup, uint64_t nev, uint64_t nthr,
			uint64_t nsym, char *err, size_t errlen)
{
	int r;

	if ((r = check_count("arguments", nargv, SCHEDULE_MAX_ARGS, err,
			     errlen)) ||
	    (r = check_count("environment entries", nenv, SCHEDULE_MAX_ARGS,
			     err, errlen)) ||
	    (r = check_count("decisions", ndec, SCHEDULE_MAX_DECISIONS, err,
			     errlen)) ||
	    (r = check_count("user points", nup, SCHEDULE_MAX_USER_POINTS, err,
			     errlen)) ||
	    (r = check_count("events", nev, SCHEDULE_MAX_EVENTS, err,
			     errlen)) ||
	    (r = check_count("thread names", nthr, SCHEDULE_MAX_THREADS, err,
			     errlen)) ||
	    (r = check_count("symbols", nsym, SCHEDULE_MAX_SYMBOLS, err,
			     errlen)))
		return r;
	return 0;
}

static int check_object(size_t i, size_t path_len, size_t build_id_len,
			char *err, size_t errlen)
{
	if (!path_len || path_len > SCHEDULE_MAX_PATH) {
		seterr(err, errlen, "loaded object %zu has a path of %zu bytes "
				    "(1 to %u)",
		       i, path_len, SCHEDULE_MAX_PATH);
		return -EINVAL;
	}
	if (build_id_len > BUILD_ID_MAX) {
		seterr(err, errlen, "loaded object %zu has a build id of %zu "
				    "bytes, more than %zu",
		       i, build_id_len, BUILD_ID_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The coverage counts: covered <= pairs, and no more pairs listed as not
 * covered than there are. */
static int check_coverage(uint64_t pairs, uint64_t covered, uint64_t nlisted,
			  char *err, size_t errlen)
{
	if (covered > pairs) {
		seterr(err, errlen, "coverage of %llu pairs in both orders out "
				    "of %llu",
		       (unsigned long long)covered, (unsigned long long)pairs);
		return -EINVAL;
	}
	if (nlisted > SCHEDULE_MAX_COVERAGE || nlisted > pairs - covered) {
		seterr(err, errlen, "%llu pairs listed as not covered (at most "
				    "%llu)",
		       (unsigned long long)nlisted,
		       (unsigned long long)(pairs - covered <
						    SCHEDULE_MAX_COVERAGE
					    ? pairs - covered
					    : SCHEDULE_MAX_COVERAGE));
		return -EINVAL;
	}
	return 0;
}

static int check_pair(size_t i, uint64_t a, uint64_t b, uint32_t seen,
		      uint32_t what, size_t len_a, size_t len_b, char *err,
		      size_t errlen)
{
	if (a > b || seen > 2 || what < 1 || what > 4) {
		seterr(err, errlen, "coverage pair %zu is malformed (keys "
				    "%llx %llx, seen %u, what %u)",
		       i, (unsigned long long)a, (unsigned long long)b, seen,
		       what);
		return -EINVAL;
	}
	if (len_a > SCHEDULE_MAX_SYMBOL_TEXT ||
	    len_b > SCHEDULE_MAX_SYMBOL_TEXT) {
		seterr(err, errlen, "coverage pair %zu has a name longer than "
				    "%d bytes",
		       i, SCHEDULE_MAX_SYMBOL_TEXT);
		return -EINVAL;
	}
	return 0;
}

static int check_schedule(const struct schedule *s, char *err, size_t errlen)
{
	size_t i;
	int r;

	if (s->argc < 0 || s->nenv < 0 || s->nthread_names < 0 ||
	    s->nthread_backtraces < 0 ||
	    s->nthread_backtraces > SCHEDULE_MAX_THREADS ||
	    (s->nthread_backtraces && !s->thread_backtraces) ||
	    s->nthread_ids < 0 || s->nthread_ids > SCHEDULE_MAX_THREADS ||
	    (s->nthread_ids && !s->thread_ids) ||
	    (s->argc && !s->argv) || (s->nenv && !s->env) ||
	    (s->nthread_names && !s->thread_names) ||
	    (s->ndecisions && !s->decisions) ||
	    (s->nuser_points && !s->user_points) ||
	    (s->nevents && !s->events) || (s->nsyms && !s->syms) ||
	    (s->nobjects && !s->objects)) {
		seterr(err, errlen, "inconsistent counts and arrays");
		return -EINVAL;
	}
	if (s->nobjects > SCHEDULE_MAX_OBJECTS) {
		seterr(err, errlen, "%zu loaded objects (at most %u)",
		       s->nobjects, SCHEDULE_MAX_OBJECTS);
		return -EINVAL;
	}
	for (i = 0; i < (size_t)s->nthread_ids; i++)
		if (s->thread_ids[i] < 0 || s->thread_ids[i] > SCHEDULE_MAX_ID) {
			seterr(err, errlen, "thread id %zu is %d (0 to %u)", i,
			       (int)s->thread_ids[i], SCHEDULE_MAX_ID);
			return -EINVAL;
		}
	if (s->nuncovered && !s->uncovered) {
		seterr(err, errlen, "inconsistent counts and arrays");
		return -EINVAL;
	}
	r = check_coverage(s->cov_pairs, s->cov_covered, s->nuncovered, err,
			   errlen);
	for (i = 0; !r && i < s->nuncovered; i++) {
		const struct schedule_pair *q = &s->uncovered[i];

		r = check_pair(i, q->a, q->b, q->seen, q->what,
			       q->where_a ? strlen(q->where_a) : 0,
			       q->where_b ? strlen(q->where_b) : 0, err,
			       errlen);
	}
	if (r)
		return r;
	for (i = 0; i < s->nobjects; i++) {
		r = check_object(i, s->objects[i].path
					    ? strlen(s->objects[i].path)
					    : 0,
				 s->objects[i].build_id_len, err, errlen);
		if (r)
			return r;
	}
	r = check_counts((uint64_t)s->argc, (uint64_t)s->nenv, s->ndecisions,
			 s->nuser_points, s->nevents,
			 (uint64_t)s->nthread_names, s->nsyms, err, errlen);
	if (r)
		return r;
	for (i = 0; i < (size_t)s->argc; i++)
		if (!s->argv[i]) {
			seterr(err, errlen, "argument %zu is missing", i);
			return -EINVAL;
		}
	for (i = 0; i < (size_t)s->nenv; i++) {
		if (!s->env[i]) {
			seterr(err, errlen, "environment entry %zu is missing",
			       i);
			return -EINVAL;
		}
		/* execve passes anything; getenv and a replay's overrides
		 * need NAME=VALUE */
		if (!strchr(s->env[i], '=') || s->env[i][0] == '=') {
			seterr(err, errlen, "environment entry %zu is not "
					    "NAME=VALUE", i);
			return -EINVAL;
		}
	}
	r = check_settings(s->points, s->build_id_len, err, errlen);
	if (r)
		return r;
	for (i = 0; i < s->ndecisions; i++) {
		const struct decision *d = &s->decisions[i];

		r = check_decision(i, d->kind, d->timeout, d->thread,
				   d->index, d->nalts, err, errlen);
		if (r)
			return r;
	}
	for (i = 0; i < s->nuser_points; i++) {
		r = check_user_point(i, s->user_points[i].kind, err, errlen);
		if (r)
			return r;
	}
	for (i = 0; i < s->nevents; i++) {
		const struct event *e = &s->events[i];

		r = check_event(i, e->thread, e->kind, e->fn, err, errlen);
		if (r)
			return r;
	}
	for (i = 0; i < s->nsyms; i++) {
		if (!s->syms[i].text) {
			seterr(err, errlen, "symbol %zu has no text", i);
			return -EINVAL;
		}
		r = check_symbol(i, strlen(s->syms[i].text), err, errlen);
		if (r)
			return r;
	}
	return check_failure(s->failure < 0 ? UINT64_MAX : (uint64_t)s->failure,
			     s->signal, s->fail_thread, err, errlen);
}

/* --- the top-level scan ------------------------------------------------ */

struct scan {
	bool has_version;
	uint64_t version;
	uint64_t count[F_COUNTED];
	size_t bad_at;	 /* offset in the payload where the scan stopped */
	bool bad;
};

static bool get_varint(const uint8_t *p, size_t len, size_t *pos,
		       uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift;

	for (shift = 0; shift < 64 && *pos < len; shift += 7) {
		uint8_t b = p[(*pos)++];

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/*
 * One top-level field from *pos: its number, wire type and, for a
 * length-delimited one, its bytes.  *pos moves past it.  1, or 0 at the
 * end, or -1 for bytes that are no field (*pos unchanged).
 */
static int next_field(const uint8_t *p, size_t len, size_t *pos,
		      uint64_t *field, unsigned *wt, uint64_t *value,
		      const uint8_t **data, size_t *dlen)
{
	size_t at = *pos;
	uint64_t tag, v = 0;

	if (at >= len)
		return 0;
	if (!get_varint(p, len, &at, &tag))
		return -1;
	*field = tag >> 3;
	*wt = tag & 7;
	*data = NULL;
	*dlen = 0;
	if (!*field || *field > 0x1fffffff)
		return -1;
	switch (*wt) {
	case 0: /* varint */
		if (!get_varint(p, len, &at, &v))
			return -1;
		break;
	case 1: /* 64-bit */
		if (len - at < 8)
			return -1;
		at += 8;
		break;
	case 2: /* length-delimited */
		if (!get_varint(p, len, &at, &v) || v > len - at)
			return -1;
		*data = p + at;
		*dlen = v;
		at += v;
		break;
	case 5: /* 32-bit */
		if (len - at < 4)
			return -1;
		at += 4;
		break;
	default: /* groups (3, 4) are not used; 6, 7 do not exist */
		return -1;
	}
	*value = v;
	*pos = at;
	return 1;
}

/*
 * Walks the top-level fields without decoding them: finds format_version
 * and counts the elements of each repeated field.  Nested messages are
 * left to protobuf-c.
 */
static void scan_fields(const uint8_t *p, size_t len, struct scan *sc)
{
	size_t pos = 0, dlen;
	const uint8_t *data;
	uint64_t field, v;
	unsigned wt;
	int k;

	memset(sc, 0, sizeof(*sc));
	while ((k = next_field(p, len, &pos, &field, &wt, &v, &data,
			       &dlen)) > 0) {
		if (field == F_FORMAT_VERSION && wt == 0) {
			sc->has_version = true;
			sc->version = v;
		}
		if (field < F_COUNTED)
			sc->count[field]++;
	}
	if (k < 0) {
		sc->bad = true;
		sc->bad_at = pos;
	}
}

/* --- protobuf-c allocator with a budget -------------------------------- */

/*
 * The scan bounds the element counts, but an element as small as two bytes
 * on disk decodes to a ~90-byte struct.  The budget keeps a crafted file
 * within a small multiple of its size; real schedules need under 16x (an
 * event is at least 6 bytes on disk and 88 in memory).
 */
struct budget {
	size_t left;
	bool exceeded;
};

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;

	if (size > b->left) {
		b->exceeded = true;
		return NULL;
	}
	b->left -= size;
	return malloc(size);
}

static void budget_free(void *data, void *ptr)
{
	(void)data;
	free(ptr);
}

/* --- decoding ------------------------------------------------------------ */

/* Copies a bytes field to a C string; a NUL inside is refused. */
static int dup_bytes(const ProtobufCBinaryData *b, char **out,
		     const char *what, long idx, char *err, size_t errlen)
{
	char *c;

	if (b->len && memchr(b->data, 0, b->len)) {
		if (idx >= 0)
			seterr(err, errlen, "%s %ld contains a NUL byte", what,
			       idx);
		else
			seterr(err, errlen, "%s contains a NUL byte", what);
		return -EINVAL;
	}
	c = malloc(b->len + 1);
	if (!c) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (b->len)
		memcpy(c, b->data, b->len);
	c[b->len] = '\0';
	*out = c;
	return 0;
}

static int dup_str(const char *src, char **out, char *err, size_t errlen)
{
	*out = strdup(src ? src : "");
	if (*out)
		return 0;
	seterr(err, errlen, "out of memory");
	return -ENOMEM;
}

static int dup_list(const ProtobufCBinaryData *b, size_t n, char ***out,
		    const char *what, char *err, size_t errlen)
{
	size_t i;
	int r;

	/* NULL-terminated, so argv and env can be passed to execve */
	*out = calloc(n + 1, sizeof(**out));
	if (!*out) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		r = dup_bytes(&b[i], &(*out)[i], what, (long)i, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

static void *alloc_array(size_t n, size_t size, char *err, size_t errlen)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		seterr(err, errlen, "out of memory");
	return p;
}

static int convert(const Ptloom__Schedule *m, struct schedule *s, char *err,
		   size_t errlen)
{
	const Ptloom__Failure *f = m->failure;
	size_t i;
	int r;

	s->format_version = m->format_version;

	s->argc = (int)m->n_argv;
	s->nenv = (int)m->n_env;
	if ((r = dup_bytes(&m->program, &s->program, "program path", -1, err,
			   errlen)) ||
	    (r = dup_list(m->argv, m->n_argv, &s->argv, "argument", err,
			  errlen)) ||
	    (r = dup_list(m->env, m->n_env, &s->env, "environment entry", err,
			  errlen)))
		return r;
	if (m->cwd.len > SCHEDULE_MAX_PATH) {
		seterr(err, errlen, "working directory of %zu bytes (at most "
		       "%d)", m->cwd.len, SCHEDULE_MAX_PATH);
		return -EINVAL;
	}
	if (m->cwd.len &&
	    (r = dup_bytes(&m->cwd, &s->cwd, "working directory", -1, err,
			   errlen)))
		return r;
	for (i = 0; i < m->n_env; i++)
		if (!strchr(s->env[i], '=') || s->env[i][0] == '=') {
			seterr(err, errlen, "environment entry %zu is not "
					    "NAME=VALUE", i);
			return -EINVAL;
		}
	r = check_settings(m->points, m->build_id.len, err, errlen);
	if (r)
		return r;
	if (m->build_id.len)
		memcpy(s->build_id, m->build_id.data, m->build_id.len);
	s->build_id_len = m->build_id.len;
	s->program_size = m->program_size;
	s->program_hash = m->program_hash;

	s->points = m->points;
	s->seed = m->seed;
	s->preemption_bound = m->preemption_bound;
	/* 0: not recorded (a script, a hand-made file): the default */
	if (m->clock_start_realtime_ns &&
	    (m->clock_start_realtime_ns < CLOCK_REALTIME_MIN_NS ||
	     m->clock_start_realtime_ns > CLOCK_REALTIME_MAX_NS)) {
		seterr(err, errlen,
		       "clock_start_realtime_ns %llu outside %llu..%llu",
		       (unsigned long long)m->clock_start_realtime_ns,
		       (unsigned long long)CLOCK_REALTIME_MIN_NS,
		       (unsigned long long)CLOCK_REALTIME_MAX_NS);
		return -EINVAL;
	}
	s->clock_start_realtime_ns = m->clock_start_realtime_ns;
	s->clock_start_monotonic_ns = m->clock_start_monotonic_ns;
	s->clock_quantum_ns = m->clock_quantum_ns;
	if ((r = dup_str(m->strategy, &s->strategy, err, errlen)) ||
	    (r = dup_str(m->ptloom_version, &s->ptloom_version, err, errlen)))
		return r;

	s->user_points = alloc_array(m->n_user_points, sizeof(*s->user_points),
				     err, errlen);
	if (!s->user_points)
		return -ENOMEM;
	s->nuser_points = m->n_user_points;
	for (i = 0; i < m->n_user_points; i++) {
		const Ptloom__UserPoint *u = m->user_points[i];

		r = check_user_point(i, u->kind, err, errlen);
		if (r)
			return r;
		s->user_points[i].addr = u->addr;
		s->user_points[i].kind = (uint8_t)u->kind;
	}

	s->fail_thread = -1;
	if (f) {
		r = check_failure(f->kind, f->signal, f->thread, err, errlen);
		if (r)
			return r;
		s->failure = (int)f->kind;
		s->signal = f->signal;
		s->exit_status = f->exit_status;
		s->fail_thread = f->thread;
	}
	if ((r = dup_bytes(f ? &f->location : &(ProtobufCBinaryData){ 0 },
			   &s->location, "failure location", -1, err,
			   errlen)) ||
	    (r = dup_bytes(f ? &f->message : &(ProtobufCBinaryData){ 0 },
			   &s->message, "failure message", -1, err, errlen)))
		return r;
	s->preemptions = m->preemptions;
	s->trace_hash = m->trace_hash;

	/* an empty name is "no name": NULL, as the tracer leaves it */
	s->thread_names = alloc_array(m->n_thread_names,
				      sizeof(*s->thread_names), err, errlen);
	if (!s->thread_names)
		return -ENOMEM;
	s->nthread_names = (int)m->n_thread_names;
	for (i = 0; i < m->n_thread_names; i++) {
		if (!m->thread_names[i].len)
			continue;
		r = dup_bytes(&m->thread_names[i], &s->thread_names[i],
			      "thread name", (long)i, err, errlen);
		if (r)
			return r;
	}

	if (m->n_thread_backtraces > SCHEDULE_MAX_THREADS) {
		seterr(err, errlen, "%zu thread backtraces (at most %u)",
		       m->n_thread_backtraces, SCHEDULE_MAX_THREADS);
		return -EINVAL;
	}
	s->thread_backtraces = alloc_array(m->n_thread_backtraces,
					   sizeof(*s->thread_backtraces), err,
					   errlen);
	if (!s->thread_backtraces)
		return -ENOMEM;
	s->nthread_backtraces = (int)m->n_thread_backtraces;
	for (i = 0; i < m->n_thread_backtraces; i++) {
		if (!m->thread_backtraces[i].len)
			continue;
		r = dup_bytes(&m->thread_backtraces[i],
			      &s->thread_backtraces[i], "thread backtrace",
			      (long)i, err, errlen);
		if (r)
			return r;
	}

	if (m->n_thread_ids > SCHEDULE_MAX_THREADS) {
		seterr(err, errlen, "%zu thread ids (at most %u)",
		       m->n_thread_ids, SCHEDULE_MAX_THREADS);
		return -EINVAL;
	}
	s->thread_ids = alloc_array(m->n_thread_ids, sizeof(*s->thread_ids),
				    err, errlen);
	if (!s->thread_ids)
		return -ENOMEM;
	for (i = 0; i < m->n_thread_ids; i++) {
		if (m->thread_ids[i] > SCHEDULE_MAX_ID) {
			seterr(err, errlen, "thread id %zu is %" PRIu32
			       " (at most %u)", i, m->thread_ids[i],
			       SCHEDULE_MAX_ID);
			return -EINVAL;
		}
		s->thread_ids[i] = (int32_t)m->thread_ids[i];
	}
	s->nthread_ids = (int)m->n_thread_ids;

	if (m->n_loaded_objects > SCHEDULE_MAX_OBJECTS) {
		seterr(err, errlen, "%zu loaded objects (at most %u)",
		       m->n_loaded_objects, SCHEDULE_MAX_OBJECTS);
		return -EINVAL;
	}
	s->objects = alloc_array(m->n_loaded_objects, sizeof(*s->objects), err,
				 errlen);
	if (!s->objects)
		return -ENOMEM;
	for (i = 0; i < m->n_loaded_objects; i++) {
		const Ptloom__LoadedObject *o = m->loaded_objects[i];
		struct loaded_object *d = &s->objects[i];

		r = check_object(i, o->path.len, o->build_id.len, err, errlen);
		if (r)
			return r;
		r = dup_bytes(&o->path, &d->path, "loaded object", (long)i, err,
			      errlen);
		if (r)
			return r;
		s->nobjects = i + 1;
		if (o->build_id.len)
			memcpy(d->build_id, o->build_id.data, o->build_id.len);
		d->build_id_len = o->build_id.len;
		d->size = o->size;
		d->mtime_ns = o->mtime_ns;
		d->hash = o->hash;
	}

	r = check_coverage(m->coverage_pairs, m->coverage_covered,
			   m->n_not_covered, err, errlen);
	if (r)
		return r;
	s->cov_pairs = m->coverage_pairs;
	s->cov_covered = m->coverage_covered;
	s->uncovered = alloc_array(m->n_not_covered, sizeof(*s->uncovered),
				   err, errlen);
	if (!s->uncovered)
		return -ENOMEM;
	for (i = 0; i < m->n_not_covered; i++) {
		const Ptloom__CoveragePair *q = m->not_covered[i];
		struct schedule_pair *d = &s->uncovered[i];

		r = check_pair(i, q->a, q->b, q->seen, q->what,
			       q->where_a.len, q->where_b.len, err, errlen);
		if (r)
			return r;
		s->nuncovered = i + 1;
		r = dup_bytes(&q->where_a, &d->where_a, "coverage pair name",
			      (long)i, err, errlen);
		if (!r)
			r = dup_bytes(&q->where_b, &d->where_b,
				      "coverage pair name", (long)i, err,
				      errlen);
		if (r)
			return r;
		d->a = q->a;
		d->b = q->b;
		d->seen = (uint8_t)q->seen;
		d->what = (uint8_t)q->what;
	}
	return 0;
}

/* --- the large repeated fields, one element at a time ------------------ */

/*
 * Decisions, events and symbols are most of a large file.  protobuf-c's
 * unpack of the whole message would hold each as a ~90-byte struct behind
 * a pointer, next to our copy: ~7x the file.  They are left out of that
 * unpack and decoded here one element at a time, each straight into its
 * compact struct (or, for a view, an event only checked and dropped).
 */
static bool streamed(uint64_t field)
{
	return field == F_DECISIONS || field == F_EVENTS ||
	       field == F_SYMBOLS;
}

static int not_decoded(const char *what, size_t i, char *err, size_t errlen)
{
	seterr(err, errlen,
	       "damaged or truncated schedule: %s %zu does not decode", what,
	       i);
	return -EINVAL;
}

static int decode_decision(const uint8_t *d, size_t dl, size_t i,
			   struct decision *out, char *err, size_t errlen)
{
	Ptloom__Decision *m = ptloom__decision__unpack(NULL, dl, d);
	int r;

	if (!m)
		return not_decoded("decision", i, err, errlen);
	/* 1 a timeout, ALT_BUFFER a buffered store, above it both */
	uint64_t variant = m->buffered ? ALT_BUFFER + (m->timeout ? 1 : 0)
				       : m->timeout ? 1 : 0;

	r = check_decision(i, m->kind, variant, m->thread, m->index,
			   m->nalts, err, errlen);
	if (!r)
		*out = (struct decision){
			.step = m->step,
			.kind = (uint8_t)m->kind,
			.timeout = (uint8_t)variant,
			.thread = (uint16_t)m->thread,
			.index = (uint16_t)m->index,
			.nalts = (uint16_t)m->nalts,
		};
	ptloom__decision__free_unpacked(m, NULL);
	return r;
}

static int decode_event(const uint8_t *d, size_t dl, size_t i,
			struct event *out, char *err, size_t errlen)
{
	Ptloom__Event *m = ptloom__event__unpack(NULL, dl, d);
	int r;

	if (!m)
		return not_decoded("event", i, err, errlen);
	r = check_event(i, m->thread, m->kind, m->fn, err, errlen);
	if (!r)
		*out = (struct event){
			.step = m->step,
			.thread = (uint16_t)m->thread,
			.kind = (uint8_t)m->kind,
			.fn = (uint8_t)m->fn,
			.preempt = m->preempt ? 1 : 0,
			.decided = m->decided ? 1 : 0,
			.obj = m->obj,
			.pc = m->pc,
			.arg = m->arg,
			/* what show says of signals: out of range, nothing */
			.handler_sig = m->handler_signal <= 64
					       ? (uint8_t)m->handler_signal
					       : 0,
			.sent_sig = m->sent_signal <= 64
					    ? (uint8_t)m->sent_signal
					    : 0,
			.sent_to = m->sent_to <= 0xffff ? (uint16_t)m->sent_to
							: 0,
		};
	ptloom__event__free_unpacked(m, NULL);
	return r;
}

static int decode_symbol(const uint8_t *d, size_t dl, size_t i,
			 struct sym_entry *out, char *err, size_t errlen)
{
	Ptloom__Symbol *m = ptloom__symbol__unpack(NULL, dl, d);
	int r;

	if (!m)
		return not_decoded("symbol", i, err, errlen);
	r = check_symbol(i, m->text.len, err, errlen);
	if (!r)
		r = dup_bytes(&m->text, &out->text, "symbol", (long)i, err,
			      errlen);
	if (!r) {
		out->addr = m->addr;
		out->data = m->data ? 1 : 0;
	}
	ptloom__symbol__free_unpacked(m, NULL);
	return r;
}

/*
 * The second pass over the top-level fields: decisions into s (whose
 * placeholder arrays convert left empty), and events and symbols into
 * s->events and s->syms when keep, else (a view) only checked and counted;
 * first_at[0] and [1] are the offsets of the first event and the first
 * symbol (len if none).
 */
static int decode_streamed(const uint8_t *p, size_t len,
			   const struct scan *sc, struct schedule *s,
			   bool keep, size_t *first_at, char *err,
			   size_t errlen)
{
	size_t pos = 0, at, dlen, nd = 0, ne = 0, ny = 0;
	const uint8_t *data;
	uint64_t field, v;
	unsigned wt;
	int k, r;

	/* the budget of the whole-message unpack, for the compact arrays
	 * (a symbol's text: one small allocation each) */
	uint64_t need = sc->count[F_DECISIONS] * sizeof(struct decision) +
			(keep ? sc->count[F_EVENTS] * sizeof(struct event) +
					sc->count[F_SYMBOLS] *
						(sizeof(struct sym_entry) + 32)
			      : 0);

	if (need > 32 * (uint64_t)len + (16u << 20)) {
		seterr(err, errlen, "schedule needs too much memory to decode");
		return -EINVAL;
	}
	free(s->decisions);
	free(s->events);
	free(s->syms);
	s->decisions = alloc_array(sc->count[F_DECISIONS],
				   sizeof(*s->decisions), err, errlen);
	s->events = keep ? alloc_array(sc->count[F_EVENTS], sizeof(*s->events),
				       err, errlen)
			 : NULL;
	s->syms = keep ? alloc_array(sc->count[F_SYMBOLS], sizeof(*s->syms),
				     err, errlen)
		       : NULL;
	if (!s->decisions || (keep && (!s->syms || !s->events)))
		return -ENOMEM;
	first_at[0] = first_at[1] = len;
	for (at = pos; (k = next_field(p, len, &pos, &field, &wt, &v, &data,
				       &dlen)) > 0; at = pos) {
		if (!streamed(field))
			continue;
		if (wt != 2)
			return not_decoded(field == F_EVENTS	  ? "event"
					   : field == F_SYMBOLS ? "symbol"
								: "decision",
					   field == F_EVENTS    ? ne
					   : field == F_SYMBOLS ? ny
								: nd,
					   err, errlen);
		if (field == F_DECISIONS) {
			if (nd >= sc->count[F_DECISIONS])
				return not_decoded("decision", nd, err, errlen);
			r = decode_decision(data, dlen, nd, &s->decisions[nd],
					    err, errlen);
			if (r)
				return r;
			s->ndecisions = ++nd;
		} else if (field == F_EVENTS) {
			struct event e;

			if (ne >= sc->count[F_EVENTS])
				return not_decoded("event", ne, err, errlen);
			if (!ne)
				first_at[0] = at;
			r = decode_event(data, dlen, ne,
					 keep ? &s->events[ne] : &e, err,
					 errlen);
			if (r)
				return r;
			ne++;
			if (keep)
				s->nevents = ne;
		} else {
			struct sym_entry y;

			if (ny >= sc->count[F_SYMBOLS])
				return not_decoded("symbol", ny, err, errlen);
			if (!ny)
				first_at[1] = at;
			r = decode_symbol(data, dlen, ny,
					  keep ? &s->syms[ny] : &y, err,
					  errlen);
			if (r)
				return r;
			if (!keep)
				free(y.text);
			ny++;
			if (keep)
				s->nsyms = ny;
		}
	}
	if (k < 0)
		return not_decoded("field at byte", at + SCHEDULE_MAGIC_LEN,
				   err, errlen);
	s->nevents = ne;
	s->nsyms = ny;
	return 0;
}

static int decode(const uint8_t *buf, size_t len, struct schedule *s,
		  bool keep, size_t *first_at, char *err, size_t errlen)
{
	struct budget b;
	ProtobufCAllocator a = {
		.alloc = budget_alloc,
		.free = budget_free,
		.allocator_data = &b,
	};
	Ptloom__Schedule *m;
	const uint8_t *p;
	struct scan sc;
	size_t n;
	int r;

	memset(s, 0, sizeof(*s));
	seterr(err, errlen, "%s", "");
	if (!buf || !len) {
		seterr(err, errlen, "empty file, not a ptloom schedule");
		return -EINVAL;
	}
	if (len > SCHEDULE_MAX_BYTES) {
		seterr(err, errlen,
		       "schedule of %zu bytes is larger than the limit of "
		       "%u MiB",
		       len, SCHEDULE_MAX_BYTES >> 20);
		return -EINVAL;
	}
	if (len < SCHEDULE_MAGIC_LEN ||
	    memcmp(buf, SCHEDULE_MAGIC, SCHEDULE_MAGIC_LEN)) {
		static const char script[] = "# ptloom schedule script";

		if (len >= sizeof(script) - 1 &&
		    !memcmp(buf, script, sizeof(script) - 1))
			seterr(err, errlen,
			       "not a ptloom schedule file (it is a schedule "
			       "script)");
		else
			seterr(err, errlen, "not a ptloom schedule file");
		return -EINVAL;
	}
	p = buf + SCHEDULE_MAGIC_LEN;
	n = len - SCHEDULE_MAGIC_LEN;
	if (!n) {
		seterr(err, errlen, "truncated schedule: nothing after the "
				    "file header");
		return -EINVAL;
	}

	scan_fields(p, n, &sc);
	if (sc.has_version && sc.version != SCHEDULE_FORMAT_VERSION) {
		seterr(err, errlen,
		       "schedule format version %llu is not supported (this "
		       "ptloom reads version %d)",
		       (unsigned long long)sc.version, SCHEDULE_FORMAT_VERSION);
		return -EINVAL;
	}
	if (sc.bad) {
		seterr(err, errlen,
		       "damaged or truncated schedule: bad field at byte %zu",
		       sc.bad_at + SCHEDULE_MAGIC_LEN);
		return -EINVAL;
	}
	if (!sc.has_version) {
		seterr(err, errlen,
		       "schedule format version 0 is not supported (this "
		       "ptloom reads version %d)",
		       SCHEDULE_FORMAT_VERSION);
		return -EINVAL;
	}
	r = check_counts(sc.count[F_ARGV], sc.count[F_ENV],
			 sc.count[F_DECISIONS], sc.count[F_USER_POINTS],
			 sc.count[F_EVENTS], sc.count[F_THREAD_NAMES],
			 sc.count[F_SYMBOLS], err, errlen);
	if (r)
		return r;
	if (sc.count[F_OBJECTS] > SCHEDULE_MAX_OBJECTS) {
		seterr(err, errlen, "%llu loaded objects (at most %u)",
		       (unsigned long long)sc.count[F_OBJECTS],
		       SCHEDULE_MAX_OBJECTS);
		return -EINVAL;
	}
	if (sc.count[F_NOT_COVERED] > SCHEDULE_MAX_COVERAGE) {
		seterr(err, errlen, "%llu pairs listed as not covered (at "
				    "most %u)",
		       (unsigned long long)sc.count[F_NOT_COVERED],
		       SCHEDULE_MAX_COVERAGE);
		return -EINVAL;
	}

	/* the rest of the message, without the fields decode_streamed reads */
	uint8_t *rest = malloc(n);
	size_t pos = 0, at = 0, nrest = 0, dlen;
	const uint8_t *data;
	uint64_t field, v;
	unsigned wt;

	if (!rest) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (next_field(p, n, &pos, &field, &wt, &v, &data, &dlen) > 0) {
		if (!streamed(field)) {
			memcpy(rest + nrest, p + at, pos - at);
			nrest += pos - at;
		}
		at = pos;
	}
	b.left = 32 * nrest + (16u << 20);
	b.exceeded = false;
	m = ptloom__schedule__unpack(&a, nrest, rest);
	free(rest);
	if (!m) {
		if (b.exceeded)
			seterr(err, errlen,
			       "schedule needs too much memory to decode");
		else
			seterr(err, errlen,
			       "damaged or truncated schedule: the protobuf "
			       "message does not decode");
		return -EINVAL;
	}
	r = convert(m, s, err, errlen);
	ptloom__schedule__free_unpacked(m, &a);
	if (!r)
		r = decode_streamed(p, n, &sc, s, keep, first_at, err, errlen);
	if (r) {
		if (!keep)
			s->nevents = s->nsyms = 0;
		schedule_free(s);
		return r;
	}
	return 0;
}

int schedule_decode(const uint8_t *buf, size_t len, struct schedule *s,
		    char *err, size_t errlen)
{
	size_t at[2];

	return decode(buf, len, s, true, at, err, errlen);
}

/* Reads at most max + 1 bytes, so an oversized file is seen as such.
 * Returns 0 with *out set, or -errno (never 0) with *out NULL. */
static int read_bounded(int fd, size_t max, uint8_t **out, size_t *outlen)
{
	size_t cap = 64 << 10, len = 0;
	uint8_t *buf = malloc(cap), *nb;
	ssize_t k;

	*out = NULL;
	*outlen = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > max) {
				break;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;

			free(buf);
			return e ? -e : -EIO;
		}
		if (!k)
			break;
		len += (size_t)k;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Opens for reading without blocking on a FIFO; regular files only.
 * *fdp is -1 unless 0 is returned. */
static int open_regular(const char *path, int *fdp, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	*fdp = -1;
	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
	}
	*fdp = fd;
	return 0;
}

int schedule_load(const char *path, struct schedule *s, char *err,
		  size_t errlen)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd = -1, r;

	memset(s, 0, sizeof(*s));
	r = open_regular(path, &fd, &st);
	if (r == -EINVAL) {
		seterr(err, errlen, "not a regular file");
		return r;
	}
	if (r) {
		seterr(err, errlen, "cannot open: %s", strerror(-r));
		return r;
	}
	if ((uint64_t)st.st_size > SCHEDULE_MAX_BYTES) {
		close(fd);
		seterr(err, errlen,
		       "schedule of %llu bytes is larger than the limit of %u "
		       "MiB",
		       (unsigned long long)st.st_size,
		       SCHEDULE_MAX_BYTES >> 20);
		return -EINVAL;
	}
	r = read_bounded(fd, SCHEDULE_MAX_BYTES, &buf, &len);
	close(fd);
	if (r) {
		seterr(err, errlen, "cannot read: %s", strerror(-r));
		return r;
	}
	r = schedule_decode(buf, len, s, err, errlen);
	free(buf);
	return r;
}

/* --- views: the events read one at a time ----------------------------- */

int schedule_view_decode(const uint8_t *buf, size_t len,
			 struct schedule_view *v, char *err, size_t errlen)
{
	int r;

	memset(v, 0, sizeof(*v));
	size_t at[2];

	r = decode(buf, len, &v->s, false, at, err, errlen);
	if (r)
		return r;
	v->events_at = at[0];
	v->syms_at = at[1];
	v->msg = buf + SCHEDULE_MAGIC_LEN;
	v->msglen = len - SCHEDULE_MAGIC_LEN;
	return 0;
}

int schedule_view_open(const char *path, struct schedule_view *v, char *err,
		       size_t errlen)
{
	struct stat st;
	void *map;
	int fd, r;

	memset(v, 0, sizeof(*v));
	r = open_regular(path, &fd, &st);
	if (r == -EINVAL) {
		seterr(err, errlen, "not a regular file");
		return r;
	}
	if (r) {
		seterr(err, errlen, "cannot open: %s", strerror(-r));
		return r;
	}
	if ((uint64_t)st.st_size > SCHEDULE_MAX_BYTES || !st.st_size) {
		close(fd);
		if (st.st_size)
			seterr(err, errlen,
			       "schedule of %llu bytes is larger than the "
			       "limit of %u MiB",
			       (unsigned long long)st.st_size,
			       SCHEDULE_MAX_BYTES >> 20);
		else
			seterr(err, errlen,
			       "empty file, not a ptloom schedule");
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	r = errno;
	close(fd);
	if (map == MAP_FAILED) {
		seterr(err, errlen, "cannot read: %s", strerror(r));
		return -r;
	}
	r = schedule_view_decode(map, (size_t)st.st_size, v, err, errlen);
	if (r) {
		munmap(map, (size_t)st.st_size);
		return r;
	}
	v->map = map;
	v->maplen = (size_t)st.st_size;
	return 0;
}

void schedule_view_of(struct schedule_view *v, struct schedule *s)
{
	memset(v, 0, sizeof(*v));
	v->s = *s;
	memset(s, 0, sizeof(*s));
	v->s.nevents = 0;
	free(v->s.events);
	v->s.events = NULL;
}

void schedule_view_close(struct schedule_view *v)
{
	v->s.nevents = v->s.nsyms = 0;
	schedule_free(&v->s);
	if (v->map)
		munmap(v->map, v->maplen);
	memset(v, 0, sizeof(*v));
}

int schedule_view_symbol(const struct schedule_view *v, size_t *at,
			 size_t *where, uint64_t *addr, bool *data, char *text,
			 size_t len)
{
	size_t pos = *at, dlen;
	const uint8_t *d;
	uint64_t field, val;
	unsigned wt;
	char err[160];
	int k;

	if (!v->msg)
		return 0;
	while ((k = next_field(v->msg, v->msglen, at, &field, &wt, &val, &d,
			       &dlen)) > 0) {
		if (field != F_SYMBOLS) {
			pos = *at;
			continue;
		}
		Ptloom__Symbol *m = wt == 2 ? ptloom__symbol__unpack(NULL, dlen,
								      d)
					    : NULL;

		if (!m || check_symbol(0, m->text.len, err, sizeof(err))) {
			if (m)
				ptloom__symbol__free_unpacked(m, NULL);
			return -EINVAL;
		}
		*where = pos;
		*addr = m->addr;
		*data = m->data;
		if (len) {
			size_t n = m->text.len < len ? m->text.len : len - 1;

			if (n)
				memcpy(text, m->text.data, n);
			text[n] = 0; /* a NUL inside (changed file): cut */
		}
		ptloom__symbol__free_unpacked(m, NULL);
		return 1;
	}
	return k < 0 ? -EINVAL : 0;
}

void event_cursor_start(struct event_cursor *c, const struct schedule_view *v)
{
	event_cursor_at(c, v, v->events_at);
	c->index = 0;
}

void event_cursor_at(struct event_cursor *c, const struct schedule_view *v,
		     size_t at)
{
	c->v = v;
	c->pos = at;
	c->index = 0;
	c->last_at = at;
}

int event_cursor_next(struct event_cursor *c, struct event *e)
{
	const struct schedule_view *v = c->v;
	size_t at = c->pos, dlen;
	const uint8_t *data;
	uint64_t field, val;
	unsigned wt;
	char err[160];
	int k;

	if (c->index >= v->s.nevents || !v->msg)
		return 0;
	while ((k = next_field(v->msg, v->msglen, &c->pos, &field, &wt, &val,
			       &data, &dlen)) > 0) {
		if (field != F_EVENTS) {
			at = c->pos;
			continue;
		}
		if (wt != 2 || decode_event(data, dlen, c->index, e, err,
					    sizeof(err)))
			return -EINVAL;
		c->last_at = at;
		c->index++;
		return 1;
	}
	return -EINVAL; /* fewer events than at the check */
}

/* --- encoding ------------------------------------------------------------ */

static char empty[] = "";

static ProtobufCBinaryData bin(const char *c)
{
	return (ProtobufCBinaryData){
		.len = c ? strlen(c) : 0,
		.data = (uint8_t *)(uintptr_t)c,
	};
}

static char *str(const char *c)
{
	return c ? (char *)(uintptr_t)c : empty;
}

/* The message borrows the struct's strings; only the arrays are ours. */
struct wire {
	Ptloom__Schedule m;
	Ptloom__Failure f;
	ProtobufCBinaryData *argv, *env, *names, *bts;
	Ptloom__LoadedObject *obj, **objp;
	Ptloom__Decision *dec, **decp;
	Ptloom__UserPoint *up, **upp;
	Ptloom__Event *ev, **evp;
	Ptloom__Symbol *sym, **symp;
	Ptloom__CoveragePair *pair, **pairp;
};

static void wire_free(struct wire *w)
{
	free(w->pair);
	free(w->pairp);
	free(w->obj);
	free(w->objp);
	free(w->argv);
	free(w->env);
	free(w->names);
	free(w->bts);
	free(w->dec);
	free(w->decp);
	free(w->up);
	free(w->upp);
	free(w->ev);
	free(w->evp);
	free(w->sym);
	free(w->symp);
}

static int wire_fill(struct wire *w, const struct schedule *s)
{
	size_t i, nd = s->ndecisions, nu = s->nuser_points, ne = s->nevents;
	size_t na = (size_t)s->argc, nv = (size_t)s->nenv;
	size_t nt = (size_t)s->nthread_names, ny = s->nsyms;

	w->argv = calloc(na + 1, sizeof(*w->argv));
	w->env = calloc(nv + 1, sizeof(*w->env));
	w->names = calloc(nt + 1, sizeof(*w->names));
	w->bts = calloc((size_t)s->nthread_backtraces + 1, sizeof(*w->bts));
	w->dec = calloc(nd + 1, sizeof(*w->dec));
	w->decp = calloc(nd + 1, sizeof(*w->decp));
	w->up = calloc(nu + 1, sizeof(*w->up));
	w->upp = calloc(nu + 1, sizeof(*w->upp));
	w->ev = calloc(ne + 1, sizeof(*w->ev));
	w->evp = calloc(ne + 1, sizeof(*w->evp));
	w->sym = calloc(ny + 1, sizeof(*w->sym));
	w->symp = calloc(ny + 1, sizeof(*w->symp));
	w->obj = calloc(s->nobjects + 1, sizeof(*w->obj));
	w->objp = calloc(s->nobjects + 1, sizeof(*w->objp));
	if (!w->obj || !w->objp)
		return -ENOMEM;
	if (!w->argv || !w->env || !w->names || !w->dec || !w->decp ||
	    !w->up || !w->upp || !w->ev || !w->evp || !w->sym || !w->symp)
		return -ENOMEM;

	ptloom__schedule__init(&w->m);
	w->m.format_version = SCHEDULE_FORMAT_VERSION;
	w->m.program = bin(s->program);
	for (i = 0; i < na; i++)
		w->argv[i] = bin(s->argv[i]);
	w->m.n_argv = na;
	w->m.argv = w->argv;
	for (i = 0; i < nv; i++)
		w->env[i] = bin(s->env[i]);
	w->m.n_env = nv;
	w->m.env = w->env;
	w->m.build_id.len = s->build_id_len;
	w->m.build_id.data = (uint8_t *)(uintptr_t)s->build_id;
	if (s->cwd)
		w->m.cwd = bin(s->cwd);
	w->m.program_size = s->program_size;
	w->m.program_hash = s->program_hash;

	w->m.points = s->points;
	w->m.seed = s->seed;
	w->m.strategy = str(s->strategy);
	w->m.preemption_bound = s->preemption_bound;
	w->m.clock_start_realtime_ns = s->clock_start_realtime_ns;
	w->m.clock_start_monotonic_ns = s->clock_start_monotonic_ns;
	w->m.clock_quantum_ns = s->clock_quantum_ns;
	w->m.ptloom_version = str(s->ptloom_version);

	for (i = 0; i < nd; i++) {
		const struct decision *d = &s->decisions[i];

		ptloom__decision__init(&w->dec[i]);
		w->dec[i].step = d->step;
		w->dec[i].kind = d->kind;
		w->dec[i].timeout = d->timeout == 1;
		w->dec[i].buffered = d->timeout == ALT_BUFFER;
		w->dec[i].thread = d->thread;
		w->dec[i].index = d->index;
		w->dec[i].nalts = d->nalts;
		w->decp[i] = &w->dec[i];
	}
	w->m.n_decisions = nd;
	w->m.decisions = w->decp;
	for (i = 0; i < nu; i++) {
		ptloom__user_point__init(&w->up[i]);
		w->up[i].addr = s->user_points[i].addr;
		w->up[i].kind = s->user_points[i].kind;
		w->upp[i] = &w->up[i];
	}
	w->m.n_user_points = nu;
	w->m.user_points = w->upp;

	ptloom__failure__init(&w->f);
	w->f.kind = (uint32_t)s->failure;
	w->f.signal = s->signal;
	w->f.exit_status = s->exit_status;
	w->f.thread = s->fail_thread;
	w->f.location = bin(s->location);
	w->f.message = bin(s->message);
	w->m.failure = &w->f;
	w->m.preemptions = s->preemptions;
	w->m.trace_hash = s->trace_hash;

	for (i = 0; i < ne; i++) {
		const struct event *e = &s->events[i];

		ptloom__event__init(&w->ev[i]);
		w->ev[i].step = e->step;
		w->ev[i].thread = e->thread;
		w->ev[i].kind = e->kind;
		w->ev[i].fn = e->fn;
		w->ev[i].preempt = e->preempt;
		w->ev[i].decided = e->decided;
		w->ev[i].obj = e->obj;
		w->ev[i].pc = e->pc;
		w->ev[i].arg = e->arg;
		w->ev[i].handler_signal = e->handler_sig;
		w->ev[i].sent_signal = e->sent_sig;
		w->ev[i].sent_to = e->sent_to;
		w->evp[i] = &w->ev[i];
	}
	w->m.n_events = ne;
	w->m.events = w->evp;
	for (i = 0; i < nt; i++)
		w->names[i] = bin(s->thread_names[i]);
	w->m.n_thread_names = nt;
	w->m.thread_names = w->names;
	for (i = 0; w->bts && i < (size_t)s->nthread_backtraces; i++)
		w->bts[i] = bin(s->thread_backtraces[i]);
	w->m.n_thread_backtraces = w->bts ? (size_t)s->nthread_backtraces : 0;
	w->m.thread_backtraces = w->bts;
	/* the same bits: check_schedule refused a negative id */
	w->m.n_thread_ids = (size_t)s->nthread_ids;
	w->m.thread_ids = (uint32_t *)s->thread_ids;
	for (i = 0; i < ny; i++) {
		ptloom__symbol__init(&w->sym[i]);
		w->sym[i].addr = s->syms[i].addr;
		w->sym[i].data = s->syms[i].data != 0;
		w->sym[i].text = bin(s->syms[i].text);
		w->symp[i] = &w->sym[i];
	}
	w->m.n_symbols = ny;
	w->m.symbols = w->symp;
	for (i = 0; i < s->nobjects; i++) {
		const struct loaded_object *o = &s->objects[i];

		ptloom__loaded_object__init(&w->obj[i]);
		w->obj[i].path = bin(o->path);
		w->obj[i].build_id.len = o->build_id_len;
		w->obj[i].build_id.data = (uint8_t *)(uintptr_t)o->build_id;
		w->obj[i].size = o->size;
		w->obj[i].mtime_ns = o->mtime_ns;
		w->obj[i].hash = o->hash;
		w->objp[i] = &w->obj[i];
	}
	w->m.n_loaded_objects = s->nobjects;
	w->m.loaded_objects = w->objp;
	w->m.coverage_pairs = s->cov_pairs;
	w->m.coverage_covered = s->cov_covered;
	w->pair = calloc(s->nuncovered + 1, sizeof(*w->pair));
	w->pairp = calloc(s->nuncovered + 1, sizeof(*w->pairp));
	if (!w->pair || !w->pairp)
		return -ENOMEM;
	for (i = 0; i < s->nuncovered; i++) {
		const struct schedule_pair *q = &s->uncovered[i];

		ptloom__coverage_pair__init(&w->pair[i]);
		w->pair[i].a = q->a;
		w->pair[i].b = q->b;
		w->pair[i].seen = q->seen;
		w->pair[i].what = q->what;
		w->pair[i].where_a = bin(q->where_a);
		w->pair[i].where_b = bin(q->where_b);
		w->pairp[i] = &w->pair[i];
	}
	w->m.n_not_covered = s->nuncovered;
	w->m.not_covered = w->pairp;
	return 0;
}

int schedule_encode(const struct schedule *s, uint8_t **buf, size_t *len)
{
	struct wire w = { 0 };
	char err[256];
	size_t n;
	uint8_t *out;
	int r;

	*buf = NULL;
	*len = 0;
	r = check_schedule(s, err, sizeof(err));
	if (r)
		return r;
	r = wire_fill(&w, s);
	if (r)
		goto out_free_wire;
	n = ptloom__schedule__get_packed_size(&w.m);
	if (n > SCHEDULE_MAX_BYTES - SCHEDULE_MAGIC_LEN) {
		r = -EFBIG;
		goto out_free_wire;
	}
	out = malloc(SCHEDULE_MAGIC_LEN + n);
	if (!out) {
		r = -ENOMEM;
		goto out_free_wire;
	}
	memcpy(out, SCHEDULE_MAGIC, SCHEDULE_MAGIC_LEN);
	ptloom__schedule__pack(&w.m, out + SCHEDULE_MAGIC_LEN);
	*buf = out;
	*len = SCHEDULE_MAGIC_LEN + n;
out_free_wire:
	wire_free(&w);
	return r;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Makes the rename durable; failure here loses nothing already written. */
static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int schedule_save(const char *path, const struct schedule *s)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) : 0;
	char *tmp, *dir;
	uint8_t *buf;
	size_t len;
	int fd, r;

	if (!*path || (slash && !slash[1]))
		return -EINVAL;
	r = schedule_encode(s, &buf, &len);
	if (r)
		return r;
	/* ".NAME.XXXXXX" beside the target, so rename(2) stays in one fs */
	if (asprintf(&tmp, "%.*s%s.%s.XXXXXX", (int)dirlen, path,
		     slash ? "/" : "", slash ? slash + 1 : path) < 0) {
		r = -ENOMEM;
		goto out_free_buf;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		r = -errno;
		goto out_free_tmp;
	}
	if (fchmod(fd, 0644) || (r = write_all(fd, buf, len)) || fsync(fd)) {
		r = r ? r : -errno;
		close(fd);
		goto out_unlink;
	}
	if (close(fd) || rename(tmp, path)) {
		r = -errno;
		goto out_unlink;
	}
	dir = slash ? strndup(path, dirlen ? dirlen : 1) : strdup(".");
	if (dir) {
		sync_dir(dir);
		free(dir);
	}
	goto out_free_tmp;
out_unlink:
	unlink(tmp);
out_free_tmp:
	free(tmp);
out_free_buf:
	free(buf);
	return r;
}

void schedule_free(struct schedule *s)
{
	size_t j;
	int i;

	if (!s)
		return;
	free(s->program);
	free(s->cwd);
	for (i = 0; s->argv && i < s->argc; i++)
		free(s->argv[i]);
	free(s->argv);
	for (i = 0; s->env && i < s->nenv; i++)
		free(s->env[i]);
	free(s->env);
	free(s->strategy);
	free(s->ptloom_version);
	free(s->decisions);
	free(s->user_points);
	free(s->location);
	free(s->message);
	free(s->events);
	for (i = 0; s->thread_names && i < s->nthread_names; i++)
		free(s->thread_names[i]);
	free(s->thread_names);
	for (i = 0; s->thread_backtraces && i < s->nthread_backtraces; i++)
		free(s->thread_backtraces[i]);
	free(s->thread_backtraces);
	free(s->thread_ids);
	for (j = 0; s->syms && j < s->nsyms; j++)
		free(s->syms[j].text);
	free(s->syms);
	for (j = 0; s->objects && j < s->nobjects; j++)
		free(s->objects[j].path);
	free(s->objects);
	for (j = 0; s->uncovered && j < s->nuncovered; j++) {
		free(s->uncovered[j].where_a);
		free(s->uncovered[j].where_b);
	}
	free(s->uncovered);
	memset(s, 0, sizeof(*s));
}

int schedule_hash_file(const char *path, uint64_t *hash, uint64_t *size)
{
	return schedule_hash_file_max(path, UINT64_MAX, NULL, hash, size);
}

int schedule_hash_file_max(const char *path, uint64_t max,
			   const volatile int *stop, uint64_t *hash,
			   uint64_t *size)
{
	uint64_t h = 0xcbf29ce484222325ull, n = 0, want;
	uint8_t buf[64 << 10];
	struct stat st;
	ssize_t k, i;
	int fd = -1, r;

	r = open_regular(path, &fd, &st);
	if (r)
		return r;
	/* the size it has: a /proc or /sys file says 0 and would read on
	 * (/proc/self/pagemap: terabytes) */
	want = (uint64_t)st.st_size;
	if (want > max) {
		close(fd);
		return -EFBIG;
	}
	while (n < want) {
		if (stop && *stop) {
			close(fd);
			return -EINTR;
		}
		k = read(fd, buf,
			 want - n < sizeof(buf) ? (size_t)(want - n)
						: sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		if (!k)
			break;
		for (i = 0; i < k; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ull;
		}
		n += (uint64_t)k;
	}
	close(fd);
	*hash = h;
	*size = n;
	return 0;
}
