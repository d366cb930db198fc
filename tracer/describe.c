/*
 * How a run is described: where a stopped thread is in user code (or in a
 * policy's terms), data addresses by name, the names of the trace's code
 * and objects (taken while each process is alive), and the report of every
 * thread at a failure (state, what it blocks in, where, its stack).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "session_int.h"

/* The symbolizer looks at one process at a time. */
static void ensure_symbols(struct session *s, struct process *p)
{
	if (!s->cfg->sym || s->sym_pid == p->pid || p->dead)
		return;
	if (s->sym_pid)
		s->cfg->sym->detach(s->cfg->sym->ctx);
	s->cfg->sym->attach(s->cfg->sym->ctx, p->pid);
	s->sym_pid = p->pid;
}

void drop_symbols(struct session *s)
{
	if (s->sym_pid)
		s->cfg->sym->detach(s->cfg->sym->ctx);
	s->sym_pid = 0;
}

/* Where a stopped thread is, in user code: "withdraw at bank.c:23" (or
 * the policy's terms: "withdraw at bank.py:8"). */
void session_where(struct session *s, struct thread *t, char *buf, size_t len)
{
	struct sched_policy *p = s->cfg->policy;

	buf[0] = 0;
	if (p && p->where && session_policy_process(s, t->p)) {
		p->where(p->ctx, s, t->idx, buf, len);
		if (buf[0])
			return;
	}
	if (!s->cfg->sym || t->p->dead)
		return;
	ensure_symbols(s, t->p);
	s->cfg->sym->location(s->cfg->sym->ctx, t->tid, buf, len);
}

void session_code_location(struct session *s, int proc, uint64_t pc,
			   char *buf, size_t len)
{
	buf[0] = 0;
	if (!s->cfg->sym || proc < 0 || proc >= s->nprocs ||
	    s->procs[proc]->dead)
		return;
	ensure_symbols(s, s->procs[proc]);
	s->cfg->sym->code(s->cfg->sym->ctx, pc, buf, len);
}

static void describe_data(struct session *s, struct process *p, uint64_t addr,
			  char *buf, size_t len)
{
	if (s->cfg->sym && !p->dead) {
		ensure_symbols(s, p);
		s->cfg->sym->data(s->cfg->sym->ctx, addr, buf, len);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	}
}

void session_describe_data(struct session *s, struct process *p,
			   uint64_t addr, char *buf, size_t len)
{
	describe_data(s, p, addr, buf, len);
}

/* A new entry of r->syms for (addr, data), to fill in and count; NULL
 * when it is there already or memory ran out. */
static struct sym_entry *sym_slot(struct run_result *r, uint64_t addr,
				  bool data)
{
	for (size_t i = 0; i < r->nsyms; i++)
		if (r->syms[i].addr == addr && r->syms[i].data == data)
			return NULL;
	if ((r->nsyms & (r->nsyms - 1)) == 0 || !r->syms) {
		struct sym_entry *n = realloc(
			r->syms, (r->nsyms ? r->nsyms * 2 : 16) * sizeof(*n));

		if (!n)
			return NULL;
		r->syms = n;
	}
	return &r->syms[r->nsyms];
}

void session_name_object(struct session *s, uint64_t key, const char *text)
{
	struct sym_entry *slot;

	if (!s->cfg->symbolize_trace || !(slot = sym_slot(s->res, key, true)))
		return;
	*slot = (struct sym_entry){ key, 1, strdup(text) };
	s->res->nsyms++;
}

/* Name one address of the trace; addr carries its image's tag. */
static void add_sym(struct session *s, uint64_t addr, bool data)
{
	struct run_result *r = s->res;
	char buf[LOC_MAX];
	uint64_t raw = EVENT_ADDR(addr);
	struct sym_entry *slot;

	if (!raw)
		return;
	if (!(slot = sym_slot(r, addr, data)))
		return;
	buf[0] = 0;
	if (data)
		s->cfg->sym->data(s->cfg->sym->ctx, raw, buf, sizeof(buf));
	else
		s->cfg->sym->code(s->cfg->sym->ctx, raw - 1, buf, sizeof(buf));
	*slot = (struct sym_entry){ addr, data, strdup(buf) };
	r->nsyms++;
}

/* A policy that describes threads in its own terms (a Python frame) names
 * the event's location: the pc becomes a tagged key of run_result.syms.
 * Only when symbolising, so the trace hash (over the real pc) is the same
 * either way. */
void policy_locate(struct session *s, struct thread *t,
			  struct event *e)
{
	struct sched_policy *p = s->cfg->policy;
	struct run_result *r = s->res;
	char buf[LOC_MAX] = "";
	uint64_t h = 0xcbf29ce484222325ull;
	struct sym_entry *slot;

	if (!p || !p->where || !s->cfg->symbolize_trace ||
	    !session_policy_process(s, t->p))
		return;
	p->where(p->ctx, s, t->idx, buf, sizeof(buf));
	if (!buf[0])
		return;
	for (const char *c = buf; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
	e->pc = EVENT_PC_POLICY | (h & 0xffffffffffffull);
	if (!(slot = sym_slot(r, e->pc, false)))
		return;
	*slot = (struct sym_entry){ e->pc, 0, strdup(buf) };
	r->nsyms++;
}

/* Name the code and objects of p's image's events with the symbols of
 * maps, a live process with the same code at the same addresses (p
 * itself, or the parent p is a fork copy of). */
static void symbolize_image(struct session *s, struct process *p,
			    struct process *maps)
{
	uint64_t tag = process_tag(p);

	p->symbolized = true;
	ensure_symbols(s, maps);
	for (size_t i = 0; i < s->nev; i++) {
		struct event *e = &s->ev[i];

		/* other images' events, and a policy's (Python) locations */
		if (s->th[e->thread].p != p || (e->pc >> 48) != tag >> 48 ||
		    EVENT_PC_IS_POLICY(e->pc))
			continue;
		if (e->kind == OP_CALL || e->kind == OP_ATOMIC ||
		    e->kind == OP_ACCESS || e->kind == OP_SPIN)
			add_sym(s, e->pc + (e->kind != OP_CALL), false);
		if (e->obj && !(e->obj >> 63))
			add_sym(s, e->obj, true);
	}
	for (size_t i = 0; i < s->cfg->nname_code; i++) {
		uint64_t a = s->cfg->name_code[i];

		if ((a >> 48) == tag >> 48 && !EVENT_PC_IS_POLICY(a))
			add_sym(s, a, false);
	}
}

/* While the process is still alive: name the code and objects of its
 * image's events, so the trace can be explained after the run. */
void session_symbolize_process(struct session *s, struct process *p)
{
	if (!s->cfg->symbolize_trace || !s->cfg->sym || p->symbolized ||
	    p->dead)
		return;
	symbolize_image(s, p, p);
}

/*
 * At p's exec, its old image is gone: a fork child that had not exec'd
 * yet (a shell's subshell before it runs a command) ran its parent's
 * code, named by the parent while that still holds the image it was
 * copied from.
 */
void session_symbolize_fork_image(struct session *s, struct process *p)
{
	struct process *q = p->parent >= 0 && p->parent < s->nprocs
				    ? s->procs[p->parent]
				    : NULL;

	if (!s->cfg->symbolize_trace || !s->cfg->sym || p->symbolized ||
	    !p->fork_copy || !q || q->dead || q->img != p->fork_img)
		return;
	symbolize_image(s, p, q);
}

void symbolize_trace(struct session *s)
{
	for (int i = 0; i < s->nprocs; i++)
		session_symbolize_process(s, s->procs[i]);
}

static const char *block_name(struct thread *t)
{
	switch (t->block) {
	case BLOCK_SLEEP: return "sleep";
	case BLOCK_FD:
		return waits_lock(t)   ? "flock"
		       : waits_fifo(t) ? "open"
		       : waits_sem(t)  ? (t->sem_nr == SYS_msgsnd   ? "msgsnd"
					  : t->sem_nr == SYS_msgrcv ? "msgrcv"
								    : "semop")
				       : "read/write";
	case BLOCK_POLL: return "poll";
	case BLOCK_SIGNAL: return signal_wait_name(t);
	case BLOCK_WAIT: return "wait";
	case BLOCK_STOPPED: return "stopped";
	case BLOCK_HELD: return "held at its exec";
	case BLOCK_VFORK: return "vfork";
	default: return "futex_wait";
	}
}

void report_threads(struct session *s)
{
	struct run_result *r = s->res;

	free(r->threads);
	r->threads = calloc((size_t)s->nth + 1, sizeof(*r->threads));
	r->nthreads = 0;
	if (!r->threads)
		return;
	for (int i = 0; i < s->nth; i++) {
		struct thread *t = &s->th[i];
		struct thread_report *p = &r->threads[r->nthreads++];
		char name[64], obj[128];

		p->thread = t->idx;
		p->proc = t->p->idx;
		snprintf(name, sizeof(name), "/proc/%d/task/%d/comm",
			 t->p->pid, t->tid);
		if (s->cfg->policy && s->cfg->policy->name &&
		    session_policy_process(s, t->p))
			s->cfg->policy->name(s->cfg->policy->ctx, s, t->idx,
					     p->name, sizeof(p->name));
		FILE *f = t->st != SCHED_DEAD && t->p->idx == 0 && !p->name[0]
				  ? fopen(name, "re")
				  : NULL;

		if (f) {
			if (fgets(p->name, sizeof(p->name), f))
				p->name[strcspn(p->name, "\n")] = 0;
			fclose(f);
		}
		if (t->p->idx > 0) { /* "P1 racy T2", "P1 python3 T1 Lucas" */
			char pn[sizeof(p->name)];
			size_t k;

			snprintf(pn, sizeof(pn), "%s",
				 session_policy_process(s, t->p) ? p->name
								 : "");
			process_thread_label(s, t, p->name, sizeof(p->name));
			k = strlen(p->name);
			if (pn[0] && k + 1 < sizeof(p->name))
				snprintf(p->name + k, sizeof(p->name) - k,
					 " %s", pn);
		}
		if (t->st == SCHED_DEAD) {
			snprintf(p->state, sizeof(p->state), "exited");
			continue;
		}
		snprintf(p->state, sizeof(p->state), "%s",
			 t->st == SCHED_BLOCKED ? "blocked"
			 : t->st == SCHED_RUNNING ? "running"
						  : "ready");
		if (t->st == SCHED_BLOCKED && t->block == BLOCK_FUTEX &&
		    t->last_fn) {
			describe_data(s, t->p, t->last_obj, obj, sizeof(obj));
			if (t->last_fn == FN_JOIN || t->last_fn == FN_THRD_JOIN) {
				int j = -1;

				for (int k = 0; k < s->nth; k++)
					if (s->th[k].ctid && s->th[k].p == t->p &&
					    s->th[k].ctid == t->last_obj)
						j = k;
				if (j >= 0)
					process_thread_label(s, &s->th[j], obj,
							     sizeof(obj));
			}
			snprintf(p->what, sizeof(p->what), "%s(%s%s)",
				 call_fn_name(t->last_fn),
				 obj[0] == '0' || obj[0] == 'T' ? "" : "&",
				 obj);
		} else if (t->st == SCHED_BLOCKED) {
			if (t->block == BLOCK_WAIT || t->block == BLOCK_STOPPED ||
			    t->block == BLOCK_VFORK || t->block == BLOCK_SIGNAL ||
			    (t->block == BLOCK_FD && waits_sem(t)))
				obj[0] = 0;
			else if (t->block == BLOCK_FD && waits_fifo(t))
				/* the FIFO's path */
				fifo_describe(t, obj, sizeof(obj));
			else if (t->block == BLOCK_FD)
				/* the descriptor, not its encoded object */
				timer_describe_fd(t->p->pid, (int)t->arg, obj,
						  sizeof(obj));
			else
				describe_data(s, t->p, t->obj, obj, sizeof(obj));
			snprintf(p->what, sizeof(p->what), "%s(%s)",
				 block_name(t), obj);
		} else {
			snprintf(p->what, sizeof(p->what), "%s",
				 op_kind_name(t->kind));
		}
		if (t->st != SCHED_RUNNING)
			session_where(s, t, p->where, sizeof(p->where));
		/* every stopped thread's frames, for the failure report */
		if (t->st != SCHED_RUNNING && s->cfg->symbolize_trace &&
		    s->cfg->sym && s->cfg->sym->backtrace)
			s->cfg->sym->backtrace(s->cfg->sym->ctx, t->tid,
					       p->backtrace,
					       sizeof(p->backtrace));
	}
}

/*
 * The last line of the output tail that reports a failed assertion or
 * test at a source line: "[----] tests/x.c:32: Assertion Failed"
 * (Criterion), "x.cc:32: Failure" (googletest), "x.c:12:test_a:FAIL"
 * (Unity).  Its file's base name and the line, or false.
 */
static bool output_assertion(const char *out, size_t len, char *file,
			     size_t flen, int *line)
{
	size_t e = len, seen = 0;

	while (e > 0 && seen++ < 64) {
		size_t b = e;

		while (b > 0 && out[b - 1] != '\n')
			b--;
		const char *l = out + b, *end = out + e;
		bool says = memmem(l, (size_t)(end - l), "ssert", 5) ||
			    memmem(l, (size_t)(end - l), "ail", 3) ||
			    memmem(l, (size_t)(end - l), "AIL", 3);

		for (const char *p = l; says && p < end; p++) {
			if (*p != ':' || p + 1 >= end ||
			    !isdigit((unsigned char)p[1]))
				continue;
			const char *q = p + 1, *w = p;

			while (q < end && isdigit((unsigned char)*q))
				q++;
			if (q >= end || *q != ':')
				continue;
			while (w > l && !isspace((unsigned char)w[-1]) &&
			       w[-1] != '/' && w[-1] != '(' && w[-1] != ']')
				w--;
			if (!memchr(w, '.', (size_t)(p - w)) || w == p ||
			    (size_t)(p - w) >= flen)
				continue;
			memcpy(file, w, (size_t)(p - w));
			file[p - w] = 0;
			*line = atoi(p + 1);
			if (*line > 0)
				return true;
		}
		e = b ? b - 1 : 0;
	}
	return false;
}

/* "func at file.c:12" (the symbolizer's code form): func and the line when
 * file is base. */
static bool code_in(const char *text, const char *base, char *func,
		    size_t len, int *line)
{
	const char *at = strstr(text, " at ");
	size_t n = strlen(base);

	if (!at || strncmp(at + 4, base, n) || at[4 + n] != ':' ||
	    (size_t)(at - text) >= len)
		return false;
	memcpy(func, text, (size_t)(at - text));
	func[at - text] = 0;
	*line = atoi(at + 5 + n);
	return *line > 0;
}

/*
 * The command failed with a non-zero exit, it started other processes and
 * none of them crashed or exited non-zero, but its output reports a failed
 * assertion at a source line: a test runner reports what one of its workers found
 * (Criterion's worker sends the failure over a socket and exits 0).  The
 * failure is at that line.  When the trace is symbolised, the thread is
 * named too: of the functions of that file the trace met, the one with an
 * event nearest above the line encloses it, and its last thread there is
 * the one that failed.  The location depends on the output alone, so that
 * runs with and without a symbolised trace have the same failure.  (A
 * policy, Python's, describes failures in its own terms.)
 */
void describe_output_failure(struct session *s)
{
	struct run_result *r = s->res;
	char base[128], func[LOC_MAX], best_func[LOC_MAX] = "";
	int line, best_line = 0, who = -1;

	if (r->failure != FAIL_EXIT || s->child_sig || s->child_status ||
	    s->nprocs < 2 || session_policy_active(s) || !r->output ||
	    !output_assertion(r->output, r->output_len, base, sizeof(base),
			      &line))
		return;
	snprintf(r->location, sizeof(r->location), "%s:%d", base, line);
	r->thread = -1;
	r->thread_label[0] = 0;
	if (!s->cfg->symbolize_trace)
		return;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nev; i++) {
			const struct event *e = &s->ev[i];
			const char *text = NULL;
			int l;

			if (e->kind != OP_CALL && e->kind != OP_ATOMIC &&
			    e->kind != OP_ACCESS && e->kind != OP_SPIN)
				continue;
			uint64_t key = e->pc + (e->kind != OP_CALL);

			for (size_t k = 0; k < r->nsyms && !text; k++)
				if (r->syms[k].addr == key && !r->syms[k].data)
					text = r->syms[k].text;
			if (!text ||
			    !code_in(text, base, func, sizeof(func), &l) ||
			    l > line)
				continue;
			if (pass == 0 && l > best_line) {
				best_line = l;
				snprintf(best_func, sizeof(best_func), "%s",
					 func);
			} else if (pass == 1 && !strcmp(func, best_func)) {
				who = e->thread;
			}
		}
	if (who < 0 || who >= s->nth)
		return;
	r->thread = who;
	if (s->th[who].p->idx > 0)
		process_thread_label(s, &s->th[who], r->thread_label,
				     sizeof(r->thread_label));
}
