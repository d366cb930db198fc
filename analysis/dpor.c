/*
 * The race analysis of source-set DPOR with bounded POR's conservative
 * backtrack points (analysis/dpor.h).
 *
 * Happens-before is kept as vector clocks over step indices: vc(k)[t] is
 * the last step of thread t that happens before step k (or k itself),
 * -1 if none.  Step k of thread p races with an earlier step j of
 * another thread when the two are dependent and j is not ordered before
 * p's previous step, nor before a race of k already handled (the
 * immediate races of source-set DPOR; with DPOR_ALL_RACES every
 * dependent j counts).  Like Flanagan and Godefroid's "may be
 * co-enabled", a race counts only where it can be reversed: some initial
 * of v = notdep(j).k (a thread whose first step in v has no
 * happens-before predecessor in v) was an alternative at the choice
 * point before j.  A dependent j that cannot be reversed there (a lock
 * attempt that was blocked while another thread held the lock, released
 * at j) does not hide the earlier steps it is ordered after, so the race
 * with the lock acquisition itself is found.
 */
#include <stdlib.h>
#include <string.h>
#include "dpor.h"

struct ctx {
	const struct dpor_step *st;
	size_t n;
	int nt;		/* threads (dense) */
	uint16_t *tix;	/* T-number -> dense index */
	int32_t *vc;	/* n x nt */
	int32_t *firstv; /* per thread: its first step in v, -1 */
	int *cand;
};

static int32_t *vc_of(struct ctx *c, size_t k)
{
	return c->vc + k * (size_t)c->nt;
}

static void join(int32_t *a, const int32_t *b, int nt)
{
	for (int t = 0; t < nt; t++)
		if (b[t] > a[t])
			a[t] = b[t];
}

/*
 * v = the steps in (from, k) not ordered after step `from`, then k (whose
 * clock so far is vck); report the alternatives of `node` that start one
 * of v's initials.  Returns how many.
 */
static int initials(struct ctx *c, size_t from, size_t k, const int32_t *vck,
		    const struct dpor_node *node)
{
	int q = c->tix[c->st[from].op.thread], ncand = 0;

	for (int t = 0; t < c->nt; t++)
		c->firstv[t] = -1;
	for (size_t i = from + 1; i <= k; i++) {
		const int32_t *vi = i == k ? vck : vc_of(c, i);
		int r = c->tix[c->st[i].op.thread];

		if (i < k && vi[q] >= (int32_t)from)
			continue; /* ordered after `from`: not in v */
		if (c->firstv[r] >= 0)
			continue;
		c->firstv[r] = (int32_t)i;
		/* an initial: nothing earlier in v happens before it */
		bool initial = true;

		for (int s = 0; s < c->nt && initial; s++)
			if (s != r && c->firstv[s] >= 0 &&
			    c->firstv[s] < (int32_t)i && vi[s] >= c->firstv[s])
				initial = false;
		if (!initial)
			continue;
		const struct alt *op = &c->st[i].op;

		for (int a = 0; a < node->nalts; a++)
			if (node->alts[a].thread == op->thread &&
			    node->alts[a].timeout == op->timeout) {
				c->cand[ncand++] = a;
				break;
			}
	}
	return ncand;
}

int dpor_races(const struct dpor_step *steps, size_t n,
	       const struct dpor_node *nodes,
	       bool (*dep)(const struct alt *, const struct alt *),
	       unsigned flags, dpor_fn fn, void *ctx)
{
	struct ctx c = { .st = steps, .n = n };
	int32_t *last = NULL, *vck = NULL, *vcr = NULL, *creator = NULL;
	int maxalts = 1, rc = -1;

	if (!n)
		return 0;
	c.tix = malloc(65536 * sizeof(*c.tix));
	if (!c.tix)
		return -1;
	memset(c.tix, 0xff, 65536 * sizeof(*c.tix));
	for (size_t k = 0; k < n; k++) {
		uint16_t t = steps[k].op.thread;

		if (c.tix[t] == 0xffff)
			c.tix[t] = (uint16_t)c.nt++;
		if (steps[k].node >= 0 && nodes[steps[k].node].nalts > maxalts)
			maxalts = nodes[steps[k].node].nalts;
	}
	if ((uint64_t)n * (uint64_t)c.nt > (64u << 20))
		goto out; /* too long to analyse */
	c.vc = malloc(n * (size_t)c.nt * sizeof(*c.vc));
	last = malloc((size_t)c.nt * sizeof(*last)); /* last step per thread */
	vck = malloc((size_t)c.nt * sizeof(*vck));
	vcr = malloc((size_t)c.nt * sizeof(*vcr));
	c.firstv = malloc((size_t)c.nt * sizeof(*c.firstv));
	c.cand = malloc((size_t)(maxalts + c.nt) * sizeof(*c.cand));
	creator = malloc((size_t)c.nt * sizeof(*creator));
	if (!c.vc || !last || !vck || !vcr || !c.firstv || !c.cand ||
	    !creator)
		goto out;
	/* a thread made by a thread clone is there (tracer/world.c waits
	 * for its first stop) from the choice right after the clone's
	 * step: its first step is ordered after that step */
	for (int t = 0; t < c.nt; t++)
		last[t] = creator[t] = -1;
	for (size_t k = 0; k < n; k++) {
		const struct dpor_node *nd =
			steps[k].node >= 0 ? &nodes[steps[k].node] : NULL;
		bool after_clone = k > 0 && steps[k - 1].op.kind == OP_CLONE &&
				   steps[k - 1].op.fn == THREAD_CLONE;

		for (int a = 0; a <= (nd ? nd->nalts : 0); a++) {
			uint16_t th = a < (nd ? nd->nalts : 0) ? nd->alts[a].thread
							       : steps[k].op.thread;
			int t = c.tix[th];

			if (t == 0xffff || last[t] >= 0)
				continue;
			last[t] = (int32_t)k; /* seen */
			if (after_clone)
				creator[t] = (int32_t)(k - 1);
		}
	}
	for (int t = 0; t < c.nt; t++)
		last[t] = -1;
	for (size_t k = 0; k < n; k++) {
		const struct alt *op = &steps[k].op;
		int p = c.tix[op->thread];

		if (last[p] >= 0) {
			memcpy(vck, vc_of(&c, (size_t)last[p]),
			       (size_t)c.nt * sizeof(*vck));
		} else if (creator[p] >= 0) {
			memcpy(vck, vc_of(&c, (size_t)creator[p]),
			       (size_t)c.nt * sizeof(*vck));
		} else {
			for (int t = 0; t < c.nt; t++)
				vck[t] = -1;
		}
		memcpy(vcr, vck, (size_t)c.nt * sizeof(*vcr));
		for (size_t j = k; j-- > 0;) {
			const struct alt *oj = &steps[j].op;
			int q = c.tix[oj->thread];

			/* ordered before p's previous step, or (immediate
			 * races) before a race of k handled already */
			if (q == p || vcr[q] >= (int32_t)j)
				continue;
			if (!dep(oj, op))
				continue;
			if (vck[q] < (int32_t)j)
				join(vck, vc_of(&c, j), c.nt);
			int node = steps[j].node, nc = 0;

			if (node >= 0)
				nc = initials(&c, j, k, vck, &nodes[node]);
			if (!nc)
				continue; /* not reversible at j */
			fn(ctx, node, c.cand, nc);
			if (!(flags & DPOR_ALL_RACES))
				join(vcr, vc_of(&c, j), c.nt);
			if (!(flags & DPOR_BOUNDED))
				continue;
			/* where j's thread began its run of steps */
			size_t b = j;

			while (b > 0 && steps[b - 1].op.thread == oj->thread)
				b--;
			if (b == j || steps[b].node < 0)
				continue;
			nc = initials(&c, b, k, vck, &nodes[steps[b].node]);
			if (nc)
				fn(ctx, steps[b].node, c.cand, nc);
		}
		vck[p] = (int32_t)k;
		memcpy(vc_of(&c, k), vck, (size_t)c.nt * sizeof(*vck));
		last[p] = (int32_t)k;
	}
	rc = 0;
out:
	free(c.tix);
	free(c.vc);
	free(last);
	free(vck);
	free(vcr);
	free(c.firstv);
	free(c.cand);
	free(creator);
	return rc;
}
