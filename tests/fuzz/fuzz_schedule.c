/*
 * libFuzzer harness for the two readers of untrusted schedules: the file
 * decoder (schedule_decode) and the script parser (schedule_parse_script).
 * tests/fuzz/run.sh builds it with ASan and UBSan and runs it over a copy
 * of tests/corpus.
 *
 * Besides "never crash, never hang, never leak", it checks the contracts
 * the rest of ptloom relies on:
 *   - the view `ptloom show` reads (schedule_view_decode, its events one
 *     at a time) accepts exactly what schedule_decode accepts, with the
 *     same events and symbols;
 *   - a refusal is -EINVAL (or -ENOMEM) with one non-empty line in err;
 *   - whatever is accepted can be saved again, and reads back the same
 *     (so ptloom never writes a file it would refuse);
 *   - a parsed script, written out and parsed again, has the same
 *     decisions and settings;
 *   - the environment and the loaded objects, which a replay acts on
 *     (cli/common.c env_refused, object identities), are what the loader
 *     promises: every entry NAME=VALUE with a name, objects within their
 *     limits, and both the same after saving and reading back.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream */
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../replayer/schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int r, const char *err)
{
	if (r != -EINVAL && r != -ENOMEM)
		abort();
	if (!err[0] || strchr(err, '\n'))
		abort();
}

static void same_decisions(const struct schedule *a, const struct schedule *b,
			   int exact)
{
	size_t i;

	if (a->ndecisions != b->ndecisions || a->seed != b->seed ||
	    a->points != b->points)
		abort();
	for (i = 0; i < a->ndecisions; i++) {
		const struct decision *x = &a->decisions[i];
		const struct decision *y = &b->decisions[i];

		if (x->kind != y->kind || x->thread != y->thread ||
		    x->timeout != y->timeout)
			abort();
		if (exact && (x->step != y->step || x->index != y->index ||
			      x->nalts != y->nalts))
			abort();
	}
}

/* Writes s as a script and parses it back: same decisions, same settings,
 * whatever text the file's strings hold. */
static void script_round_trip(const struct schedule *s)
{
	struct schedule t;
	char err[256], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	if (schedule_write_script(f, s) || fclose(f))
		abort();
	if (schedule_parse_script(text, len, &t, err, sizeof(err)))
		abort();
	same_decisions(s, &t, 0);
	schedule_free(&t);
	free(text);
}

/* The view `show` reads (events one at a time) accepts what the decoder
 * accepts, and its events are the decoded ones, in order. */
static void same_view(const uint8_t *data, size_t size,
		      const struct schedule *s, int decoded)
{
	struct schedule_view v;
	struct event_cursor c;
	struct event e;
	char err[256];
	size_t i = 0;
	int r = schedule_view_decode(data, size, &v, err, sizeof(err));

	if ((r == 0) != (decoded == 0))
		abort();
	if (r) {
		check_refusal(r, err);
		schedule_view_close(&v);
		return;
	}
	if (v.s.nevents != s->nevents || v.s.ndecisions != s->ndecisions ||
	    v.s.nsyms != s->nsyms || v.s.events)
		abort();
	event_cursor_start(&c, &v);
	while ((r = event_cursor_next(&c, &e)) > 0) {
		const struct event *x = &s->events[i++];

		if (e.step != x->step || e.thread != x->thread ||
		    e.kind != x->kind || e.fn != x->fn ||
		    e.preempt != x->preempt || e.obj != x->obj ||
		    e.pc != x->pc || e.arg != x->arg)
			abort();
	}
	if (r || i != s->nevents)
		abort();
	/* and its symbols, read from the bytes, are the decoded ones */
	size_t at = v.syms_at, where;
	uint64_t addr;
	bool is_data;
	char text[SCHEDULE_MAX_SYMBOL_TEXT + 1];

	for (i = 0; (r = schedule_view_symbol(&v, &at, &where, &addr,
					      &is_data, text,
					      sizeof(text))) > 0;
	     i++)
		if (i >= s->nsyms || addr != s->syms[i].addr ||
		    is_data != (s->syms[i].data != 0) ||
		    strcmp(text, s->syms[i].text))
			abort();
	if (r || i != s->nsyms)
		abort();
	schedule_view_close(&v);
}

/* The loader's promises about the environment and the loaded objects. */
static void check_env_objects(const struct schedule *s)
{
	if (s->nenv < 0 || (s->nenv && !s->env) ||
	    s->nobjects > SCHEDULE_MAX_OBJECTS || (s->nobjects && !s->objects))
		abort();
	for (int i = 0; i < s->nenv; i++) {
		const char *eq = s->env[i] ? strchr(s->env[i], '=') : NULL;

		if (!eq || eq == s->env[i])
			abort();
	}
	if (s->env && s->env[s->nenv]) /* ready for execve */
		abort();
	for (size_t i = 0; i < s->nobjects; i++) {
		const struct loaded_object *o = &s->objects[i];

		if (!o->path || strlen(o->path) > SCHEDULE_MAX_PATH ||
		    o->build_id_len > sizeof(o->build_id))
			abort();
	}
}

static void same_env_objects(const struct schedule *a,
			     const struct schedule *b)
{
	if (a->nenv != b->nenv || a->nobjects != b->nobjects)
		abort();
	for (int i = 0; i < a->nenv; i++)
		if (strcmp(a->env[i], b->env[i]))
			abort();
	for (size_t i = 0; i < a->nobjects; i++) {
		const struct loaded_object *x = &a->objects[i];
		const struct loaded_object *y = &b->objects[i];

		if (strcmp(x->path, y->path) || x->size != y->size ||
		    x->mtime_ns != y->mtime_ns || x->hash != y->hash ||
		    x->build_id_len != y->build_id_len ||
		    memcmp(x->build_id, y->build_id, x->build_id_len))
			abort();
	}
}

static void fuzz_file(const uint8_t *data, size_t size)
{
	struct schedule s, t;
	char err[256];
	uint8_t *buf;
	size_t len;
	int r;

	r = schedule_decode(data, size, &s, err, sizeof(err));
	same_view(data, size, &s, r);
	if (r) {
		check_refusal(r, err);
		schedule_free(&s);
		return;
	}
	check_env_objects(&s);
	if (schedule_encode(&s, &buf, &len))
		abort();
	if (schedule_decode(buf, len, &t, err, sizeof(err)))
		abort();
	same_decisions(&s, &t, 1);
	same_env_objects(&s, &t);
	script_round_trip(&s);
	if (s.nevents != t.nevents || s.argc != t.argc ||
	    s.nthread_names != t.nthread_names ||
	    strcmp(s.program, t.program) || strcmp(s.message, t.message))
		abort();
	schedule_free(&t);
	free(buf);
	schedule_free(&s);
}

static void fuzz_script(const uint8_t *data, size_t size)
{
	struct schedule s;
	char err[256];
	int r;

	r = schedule_parse_script((const char *)data, size, &s, err,
				  sizeof(err));
	if (r) {
		check_refusal(r, err);
		if (r == -EINVAL && strncmp(err, "line ", 5))
			abort();
		schedule_free(&s);
		return;
	}
	script_round_trip(&s);
	schedule_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file(data, size);
	fuzz_script(data, size);
	return 0;
}
