/*
 * A test's failing schedule followed through its runner (through.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "through.h"

struct target {
	struct schedule sch;
	char *name;
	int scope;		/* P-number whose subtree it may be in, -1 */
	struct follower *f;
	int id;			/* in the follow set */
	int pidx;		/* the process it follows, -1: not yet */
	bool ended;
	int status;
};

struct tproc {
	int parent;
	int target;		/* followed for this target, -1 */
	bool own_image;		/* the target's recorded program (not a
				 * later exec of another) */
};

struct through {
	struct follow_set *fs;
	struct target **t;
	int nt;
	struct tproc *p;
	int np;
};

static struct tproc *tproc(struct through *t, int pidx)
{
	if (pidx < 0)
		return NULL;
	if (pidx >= t->np) {
		int n = pidx + 16;
		struct tproc *q = realloc(t->p, (size_t)n * sizeof(*q));

		if (!q)
			return NULL;
		for (int i = t->np; i < n; i++)
			q[i] = (struct tproc){ .parent = -1, .target = -1 };
		t->p = q;
		t->np = n;
	}
	return &t->p[pidx];
}

struct through *through_new(void)
{
	struct through *t = calloc(1, sizeof(*t));

	if (t && !(t->fs = follow_set_new())) {
		free(t);
		return NULL;
	}
	return t;
}

void through_free(struct through *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nt; i++) {
		follower_free(t->t[i]->f);
		schedule_free(&t->t[i]->sch);
		free(t->t[i]->name);
		free(t->t[i]);
	}
	free(t->t);
	free(t->p);
	follow_set_free(t->fs);
	free(t);
}

int through_add(struct through *t, struct schedule *sch, const char *name,
		int scope)
{
	struct target **n = realloc(t->t, (size_t)(t->nt + 1) * sizeof(*n));
	struct target *x = n ? calloc(1, sizeof(*x)) : NULL;

	if (n)
		t->t = n;
	if (!x) {
		schedule_free(sch);
		return -1;
	}
	x->sch = *sch;
	memset(sch, 0, sizeof(*sch));
	x->f = follower_new(x->sch.events, x->sch.nevents, x->sch.decisions,
			    x->sch.ndecisions);
	x->id = x->f ? follow_set_add(t->fs, x->f) : -1;
	x->name = strdup(name ? name : "");
	if (x->id < 0 || !x->name) {
		follower_free(x->f);
		schedule_free(&x->sch);
		free(x->name);
		free(x);
		return -1;
	}
	x->scope = scope;
	x->pidx = -1;
	t->t[t->nt] = x;
	return t->nt++;
}

void through_fork(struct through *t, int pidx, int ppidx)
{
	struct tproc *p = tproc(t, pidx), *pp = tproc(t, ppidx);

	if (!p)
		return;
	p->parent = ppidx;
	p->target = pp ? pp->target : -1;
	p->own_image = pp && pp->own_image;
}

static bool in_scope(struct through *t, int pidx, int scope)
{
	for (int k = 0; scope >= 0 && pidx >= 0 && k < 4096; k++) {
		if (pidx == scope)
			return true;
		struct tproc *p = tproc(t, pidx);

		pidx = p ? p->parent : -1;
	}
	return scope < 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !strcmp(a, b) || (stat(a, &x) == 0 && stat(b, &y) == 0 &&
				 x.st_dev == y.st_dev && x.st_ino == y.st_ino);
}

/* Does process pid run sch's recorded command line in its directory? */
static bool runs_recorded(pid_t pid, const struct schedule *sch)
{
	size_t len = 0;
	char *cmd = tracer_proc_file(pid, "cmdline", &len);
	char path[64], cwd[PATH_MAX], exe[PATH_MAX], rec0[2 * PATH_MAX];
	bool match = cmd != NULL && sch->argc > 0;
	size_t at = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
	n = readlink(path, cwd, sizeof(cwd) - 1);
	cwd[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	if (match && sch->cwd && sch->cwd[0] && !same_file(sch->cwd, cwd))
		match = false;
	for (int i = 0; match && i < sch->argc; i++) {
		if (at >= len) {
			match = false;
			break;
		}
		const char *a = cmd + at;

		if (i == 0 && strcmp(a, sch->argv[0])) {
			/* the recording's argv[0] is the program as found:
			 * the same file as the one running */
			const char *r = sch->argv[0];

			if (r[0] != '/' && sch->cwd && sch->cwd[0])
				snprintf(rec0, sizeof(rec0), "%s/%s", sch->cwd,
					 r);
			else
				snprintf(rec0, sizeof(rec0), "%s", r);
			match = strchr(r, '/') && exe[0] &&
				same_file(rec0, exe);
		} else if (i > 0 && strcmp(a, sch->argv[i])) {
			match = false;
		}
		at += strlen(a) + 1;
	}
	if (match && at < len)
		match = false; /* more arguments */
	free(cmd);
	return match;
}

static void attach(struct through *t, int ti, int pidx, int thread)
{
	struct target *x = t->t[ti];
	struct tproc *p = tproc(t, pidx);

	if (!p)
		return;
	x->pidx = pidx;
	p->target = ti;
	p->own_image = true;
	follow_set_thread(t->fs, thread, x->id);
}

void through_exec(struct through *t, int pidx, pid_t pid, int thread)
{
	struct tproc *p = tproc(t, pidx);

	if (!p)
		return;
	/* a followed process that runs another program: still the test's
	 * (its threads stay followed), not the recorded image */
	p->own_image = false;
	if (p->target >= 0)
		return;
	for (int i = 0; i < t->nt; i++) {
		struct target *x = t->t[i];

		if (x->pidx >= 0 || !in_scope(t, pidx, x->scope) ||
		    !runs_recorded(pid, &x->sch))
			continue;
		attach(t, i, pidx, thread);
		return;
	}
}

void through_thread(struct through *t, int thread, int pidx)
{
	struct tproc *p = tproc(t, pidx);

	/* the exec'ing thread joins at through_exec */
	if (p && p->target >= 0 && follow_set_of(t->fs, thread) < 0)
		follow_set_thread(t->fs, thread, t->t[p->target]->id);
}

void through_died(struct through *t, int pidx, int status)
{
	for (int i = 0; i < t->nt; i++)
		if (t->t[i]->pidx == pidx && !t->t[i]->ended) {
			t->t[i]->ended = true;
			t->t[i]->status = status;
		}
}

const struct user_point *through_points(struct through *t, int pidx,
					size_t *n)
{
	struct tproc *p = tproc(t, pidx);

	*n = 0;
	if (!p || p->target < 0 || !p->own_image)
		return NULL;
	*n = t->t[p->target]->sch.nuser_points;
	return t->t[p->target]->sch.user_points;
}

struct strategy through_strategy(struct through *t)
{
	return follow_set_strategy(t->fs);
}

int through_count(const struct through *t)
{
	return t->nt;
}

static void status_text(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by %s",
			 signal_name(WTERMSIG(st)));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
}

void through_result(const struct through *t, int i, struct through_result *r)
{
	const struct target *x = t->t[i];
	const struct schedule *s = &x->sch;
	char st[96], rec[96];

	memset(r, 0, sizeof(*r));
	r->name = x->name;
	r->found = x->pidx >= 0;
	r->pidx = x->pidx;
	r->ended = x->ended;
	r->status = x->status;
	follower_status(x->f, &r->st);
	if (s->failure == FAIL_CRASH)
		snprintf(rec, sizeof(rec), "killed by %s",
			 signal_name(s->signal));
	else if (s->failure == FAIL_EXIT)
		snprintf(rec, sizeof(rec), "exit status %d", s->exit_status);
	else
		snprintf(rec, sizeof(rec), "%s", failure_kind_name(s->failure));
	if (!r->found) {
		char q[1024];

		shell_join(q, sizeof(q), s->argv, s->argc);
		snprintf(r->what, sizeof(r->what),
			 "not reproduced: its recorded command line (%s%s%s) "
			 "never ran", q, s->cwd && s->cwd[0] ? " in " : "",
			 s->cwd ? s->cwd : "");
		return;
	}
	bool all = r->st.followed == r->st.recorded && !r->st.diverged;

	if (s->failure == FAIL_CRASH)
		r->reproduced = x->ended && WIFSIGNALED(x->status) &&
				WTERMSIG(x->status) == s->signal;
	else if (s->failure == FAIL_EXIT)
		r->reproduced = x->ended && WIFEXITED(x->status) &&
				WEXITSTATUS(x->status) == s->exit_status;
	else
		r->reproduced = all && !(x->ended && WIFEXITED(x->status) &&
					 WEXITSTATUS(x->status) == 0);
	if (x->ended)
		status_text(x->status, st, sizeof(st));
	else
		snprintf(st, sizeof(st), "did not end");
	char *follow = r->follow;
	size_t fl = sizeof(r->follow);

	if (all)
		snprintf(follow, fl,
			 "all %zu recorded steps followed", r->st.recorded);
	else if (r->st.diverged)
		snprintf(follow, fl,
			 "%zu of %zu recorded steps followed, then not: %s",
			 r->st.followed, r->st.recorded, r->st.why);
	else
		snprintf(follow, fl,
			 "%zu of %zu recorded steps followed", r->st.followed,
			 r->st.recorded);
	snprintf(r->what, sizeof(r->what), "%s: P%d %s (recorded: %s); %s",
		 r->reproduced ? "reproduced" : "not reproduced", x->pidx, st,
		 rec, follow);
}
