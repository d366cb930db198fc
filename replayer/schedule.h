/*
 * A schedule in memory: what a schedule file (proto/schedule.proto) holds.
 * Loading treats the file as untrusted input: it never asserts, checks the
 * format version first, and returns -EINVAL with a message.
 */
#ifndef PTLOOM_SCHEDULE_H
#define PTLOOM_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "../tracer/event.h"
#include "../tracer/tracer.h"

#define SCHEDULE_FORMAT_VERSION 1
#define SCHEDULE_MAX_BYTES (64u << 20) /* larger files are refused */
/* Larger counts are refused on load and on save (untrusted input must not
 * make the loader allocate gigabytes from a small file). */
#define SCHEDULE_MAX_DECISIONS (1u << 23)
#define SCHEDULE_MAX_EVENTS (1u << 23)
#define SCHEDULE_MAX_USER_POINTS (1u << 20)
#define SCHEDULE_MAX_ARGS (1u << 16)	    /* argv and env entries, each */
#define SCHEDULE_MAX_THREADS 65536	    /* T-numbers are 0..65535 */
#define SCHEDULE_MAX_ID 4194304		    /* the kernel's PID_MAX_LIMIT */
#define SCHEDULE_MAX_SYMBOLS (SCHEDULE_MAX_EVENTS * 2) /* syms entries */
#define SCHEDULE_MAX_SYMBOL_TEXT 4096	    /* bytes of a sym's text */
#define SCHEDULE_MAX_OBJECTS 4096	    /* loaded objects */
#define SCHEDULE_MAX_PATH 4096		    /* bytes of an object's path */
#define SCHEDULE_STEP_UNKNOWN UINT32_MAX  /* decision.step from a script */
#define SCHEDULE_MAX_COVERAGE 4096	    /* pairs not covered, listed */

/* A pair of conflicting operations seen in at most one order
 * (analysis/coverage.h): code keys a <= b, seen 0 (none), 1 (a before b)
 * or 2 (b before a), what 1..4 (enum cov_what), where_a/where_b their
 * names (never NULL once loaded; "" = not named). */
struct schedule_pair {
	uint64_t a, b;
	uint8_t seen, what;
	char *where_a, *where_b;
};

/* A file the program mapped (or /etc/ld.so.cache), as it was. */
struct loaded_object {
	char *path;
	uint8_t build_id[64];
	size_t build_id_len;
	uint64_t size;
	uint64_t mtime_ns;
	uint64_t hash;		/* FNV-1a 64 when there is no build-id */
};

struct schedule {
	uint32_t format_version;
	/* the program's identity */
	char *program;		/* path as run */
	char **argv;		/* argv[0..argc-1] */
	int argc;
	char **env;		/* the environment that matters, "K=V" */
	int nenv;
	char *cwd;		/* where it ran; NULL: not recorded */
	uint8_t build_id[64];
	size_t build_id_len;
	uint64_t program_size;
	uint64_t program_hash;	/* FNV-1a 64 of the file's bytes */
	/* settings that shape execution */
	unsigned points;	/* POINTS_* */
	uint64_t seed;
	char *strategy;		/* "dfs", "random", "pct", "script" */
	uint32_t preemption_bound;
	uint64_t clock_start_realtime_ns;
	uint64_t clock_start_monotonic_ns;
	uint64_t clock_quantum_ns;
	char *ptloom_version;
	/* the schedule proper */
	struct decision *decisions;
	size_t ndecisions;
	struct user_point *user_points; /* adaptive and race points */
	size_t nuser_points;
	/* what happened */
	int failure;		/* enum failure_kind */
	int signal;
	int exit_status;
	int fail_thread;
	char *location;
	char *message;
	uint32_t preemptions;
	uint64_t trace_hash;
	struct event *events;
	size_t nevents;
	struct sym_entry *syms;	/* names of the events' code and objects;
				 * text never NULL, data 0 or 1 when loaded */
	size_t nsyms;
	char **thread_names;	/* index = T-number; may be NULL entries */
	int nthread_names;
	char **thread_backtraces; /* at the failure, index = T-number, one
				   * frame a line; may be NULL entries */
	int nthread_backtraces;
	struct loaded_object *objects; /* may be empty (older files) */
	size_t nobjects;
	/* what the exploration had covered when it saved the file: pairs
	 * seen, pairs seen in both orders (0, 0: not recorded), and the
	 * pairs not covered (at most SCHEDULE_MAX_COVERAGE) */
	uint64_t cov_pairs, cov_covered;
	struct schedule_pair *uncovered;
	size_t nuncovered;
	/* the kernel id of each T-number in the run (index = T-number;
	 * 0: not known), at most SCHEDULE_MAX_THREADS, each at most
	 * SCHEDULE_MAX_ID; empty in older files */
	int32_t *thread_ids;
	int nthread_ids;
};

/* Returns 0, or -EINVAL/-errno with a one-line reason in err (no newline,
 * without the file name: the caller prefixes it).  On error *s is left
 * zeroed, so schedule_free(s) is always safe.  A loaded (or parsed)
 * schedule's strings are never NULL (absent = ""), except thread_names
 * entries; argv and env are also NULL-terminated, ready for execve. */
int schedule_load(const char *path, struct schedule *s, char *err,
		  size_t errlen);
/* Decode from memory (used by schedule_load and the fuzzer). */
int schedule_decode(const uint8_t *buf, size_t len, struct schedule *s,
		    char *err, size_t errlen);
/*
 * A schedule file read to explain it without holding its trace (ptloom
 * show): the file mapped read-only, everything but the events decoded into
 * s (s.events is NULL, s.nevents their count; s.syms NULL, s.nsyms their
 * count), the events read one at a time with an event_cursor, the symbols
 * with schedule_view_symbol.  Opening checks the whole file as
 * schedule_load does and refuses what it refuses.  The mapping is read
 * again by the cursor, which checks every event anew (the file may change
 * underneath; a file cut short underneath raises SIGBUS, which the caller
 * handles).
 */
struct schedule_view {
	struct schedule s;
	void *map;		/* the mapping (NULL: a buffer or a script) */
	size_t maplen;
	const uint8_t *msg;	/* the message, after the magic */
	size_t msglen;
	size_t events_at;	/* offset in msg of the first event */
	size_t syms_at;		/* and of the first symbol */
};
struct event_cursor {
	const struct schedule_view *v;
	size_t pos;		/* offset in msg of the next field */
	size_t index;		/* events returned so far */
	size_t last_at;		/* offset of the last event returned */
};
int schedule_view_open(const char *path, struct schedule_view *v, char *err,
		       size_t errlen);
/* The same over bytes in memory, which must outlive v (the fuzzer). */
int schedule_view_decode(const uint8_t *buf, size_t len,
			 struct schedule_view *v, char *err, size_t errlen);
/* A view of a schedule already in memory (a parsed script, no events):
 * takes s over. */
void schedule_view_of(struct schedule_view *v, struct schedule *s);
void schedule_view_close(struct schedule_view *v);
/* From the first event; or from the event whose offset last_at gave. */
void event_cursor_start(struct event_cursor *c, const struct schedule_view *v);
void event_cursor_at(struct event_cursor *c, const struct schedule_view *v,
		     size_t at);
/* 1 with *e the next event, 0 after the last, -EINVAL if the bytes are
 * not what the view checked (the file changed). */
int event_cursor_next(struct event_cursor *c, struct event *e);
/* The view's symbol at or after offset *at (start: v->syms_at), which
 * moves past it: 1 with its offset in *where, its address, data flag and
 * text (NUL-terminated, cut to len), 0 after the last, -EINVAL if the
 * bytes changed. */
int schedule_view_symbol(const struct schedule_view *v, size_t *at,
			 size_t *where, uint64_t *addr, bool *data, char *text,
			 size_t len);

/* Writes atomically (temp file in the same directory, fsync, rename); the
 * directory must exist.  Returns 0, -EINVAL if s holds values a load would
 * refuse, -EFBIG if it encodes to more than SCHEDULE_MAX_BYTES, or -errno. */
int schedule_save(const char *path, const struct schedule *s);
/* The file's bytes (magic + message) in a malloc'd buffer; the same
 * checks and errors as schedule_save. */
int schedule_encode(const struct schedule *s, uint8_t **buf, size_t *len);
void schedule_free(struct schedule *s);

/* The editable text form ("script"): one decision per line.
 * schedule_write_script prints s; schedule_parse_script reads one (only the
 * decisions and settings; the program identity is optional).  Parsed
 * decisions have nalts = 0 (match by thread) and, unless a line gives
 * "step N:", step = SCHEDULE_STEP_UNKNOWN.  Parse errors are -EINVAL with
 * "line N: ..." in err. */
int schedule_write_script(FILE *f, const struct schedule *s);
int schedule_parse_script(const char *text, size_t len, struct schedule *s,
			  char *err, size_t errlen);
/* schedule_write_script of a view (its events read one at a time). */
int schedule_view_write_script(FILE *f, const struct schedule_view *v);

/* 64-bit FNV-1a of a regular file's bytes (as many as its size says: a
 * /proc file hashes as empty) and that size; 0 or -errno. */
int schedule_hash_file(const char *path, uint64_t *hash, uint64_t *size);
/* The same, -EFBIG without reading when the file is larger than max, and
 * -EINTR as soon as *stop (if given) is set. */
int schedule_hash_file_max(const char *path, uint64_t max,
			   const volatile int *stop, uint64_t *hash,
			   uint64_t *size);

#endif
