/*
 * sim.c - the exact simulator.
 *
 * Every op starts at the earliest instant its resource order, its data
 * dependencies (plus communication) and its reload anchor allow.  These are
 * all "start >= other's end + delay" or "start >= other's start" relations,
 * so the timing is a longest path over a DAG; an order with a cycle is a
 * deadlock.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

_Static_assert(PW_MAX_PAIRS * PW_NKINDS <= UINT32_MAX,
    "an edge names its op in 32 bits");

/* A constraint "start(to) >= end(from) + delay" (or start(from) + delay
 * when from_start is set). */
struct pw_edge {
	uint32_t to;
	bool	from_start;
	double	delay;
};

struct pw_sim {
	const struct pw_problem *p;
	const struct pw_schedule *sched;
	size_t	universe;
	struct pw_where *where;
	/* Successor lists in CSR form. */
	size_t	*first;
	struct pw_edge *edge;
	size_t	nedges;
	uint32_t *indegree;
	/* The timing being built; the ops KEEP times before AFTER keep
	 * those times (KEEP NULL: none). */
	struct pw_timing *t;
	const struct pw_timing *keep;
	double	after;
};

static bool
pw_sim_has(const struct pw_sim *sim, int kind, int stage, int mb)
{
	struct pw_op op = { (enum pw_kind)kind, stage, mb };

	return pw_where_has(sim->where, sim->p, op);
}

static bool
pw_sim_present(const struct pw_sim *sim, size_t idx)
{
	return sim->where->resource[idx] != PW_NOWHERE;
}

/* Whether op IDX keeps its time from SIM's earlier timing. */
static bool
pw_sim_kept(const struct pw_sim *sim, size_t idx)
{
	return sim->keep != NULL && sim->keep->start[idx] < sim->after;
}

/* Every (stage, mb) needs F, a backward (BW, or B and W) and, if it
 * offloads, both transfers. */
static int
pw_sim_complete(const struct pw_sim *sim, struct pw_error *err)
{
	const struct pw_problem *p = sim->p;
	struct pw_anchor anchor;
	struct pw_op a;
	int s, j;
	bool f, b, w, bw, off, rel;

	for (s = 0; s < p->nstages; s++) {
		for (j = 0; j < p->microbatches; j++) {
			f = pw_sim_has(sim, PW_F, s, j);
			b = pw_sim_has(sim, PW_B, s, j);
			w = pw_sim_has(sim, PW_W, s, j);
			bw = pw_sim_has(sim, PW_BW, s, j);
			off = pw_sim_has(sim, PW_OFFLOAD, s, j);
			rel = pw_sim_has(sim, PW_RELOAD, s, j);
			if (!f || (bw ? b || w : !(b && w)) || off != rel) {
				pw_error_set(err, "schedule: stage %d microbatch "
				    "%d needs F, then BW or both B and W, and "
				    "OFFLOAD with RELOAD or neither (has%s%s%s%s"
				    "%s%s%s)", s, j, f ? " F" : "", b ? " B" : "",
				    w ? " W" : "", bw ? " BW" : "",
				    off ? " OFFLOAD" : "", rel ? " RELOAD" : "",
				    f || b || w || bw || off || rel ? "" :
				    " none of them");
				return PW_ERR_INPUT;
			}
			if (!pw_schedule_anchor(sim->sched, s, j, &anchor))
				continue;
			a = anchor.op;
			/* pw_sim_has refuses an op out of range first. */
			if (!rel || pw_kind_is_transfer(a.kind) ||
			    !pw_sim_has(sim, a.kind, a.stage, a.mb) ||
			    p->stages[a.stage].device != p->stages[s].device) {
				pw_error_set(err, "schedule: the anchor of "
				    "RELOAD(%d,%d) must be a scheduled compute op "
				    "on device %d%s", s, j, p->stages[s].device,
				    rel ? "" : " (and the reload must exist)");
				return PW_ERR_INPUT;
			}
		}
	}
	return PW_OK;
}

/* Counts (FILL false) or fills the edges of every op's predecessors:
 * one walk for both, so the two cannot disagree.  A kept op needs none,
 * and a kept predecessor is final already: filling takes its
 * constraint into the start at once instead of an edge. */
static void
pw_sim_edges(struct pw_sim *sim, bool fill)
{
	struct pw_pred pred[PW_MAX_PREDS];
	struct pw_timing *t = sim->t;
	size_t i, from;
	double at;
	int k, n;

	for (i = 0; i < sim->universe; i++) {
		if (!pw_sim_present(sim, i) || pw_sim_kept(sim, i))
			continue;
		n = pw_preds(sim->p, sim->sched, sim->where,
		    pw_op_from_index(sim->p, i), pred);
		for (k = 0; k < n; k++) {
			from = pw_op_index(sim->p, pred[k].op);
			if (pw_sim_kept(sim, from)) {
				at = (pred[k].from_start ? t->start[from] :
				    t->end[from]) + pred[k].delay;
				if (fill && at > t->start[i])
					t->start[i] = at;
			} else if (fill) {
				struct pw_edge *e = &sim->edge[sim->first[from]++];

				e->to = (uint32_t)i;
				e->from_start = pred[k].from_start;
				e->delay = pred[k].delay;
				sim->indegree[i]++;
			} else {
				sim->first[from + 1]++;
				sim->nedges++;
			}
		}
	}
}

static void
pw_sim_build(struct pw_sim *sim)
{
	size_t i, u = sim->universe;

	sim->first = pw_xcalloc(u + 1, sizeof *sim->first);
	sim->indegree = pw_xcalloc(u, sizeof *sim->indegree);
	pw_sim_edges(sim, false);
	for (i = 0; i < u; i++)
		sim->first[i + 1] += sim->first[i];
	sim->edge = pw_xmalloc(sim->nedges * sizeof *sim->edge);
	pw_sim_edges(sim, true);
	/* Filling advanced each first[i] to first[i + 1]; shift back. */
	memmove(sim->first + 1, sim->first, u * sizeof *sim->first);
	sim->first[0] = 0;
}

/* The binding predecessor of op IDX, whose start is final: the first in
 * pw_preds order whose constraint equals the start (computed as the
 * forward pass did, so equality is exact). */
static struct pw_bind
pw_sim_bind(const struct pw_sim *sim, const struct pw_timing *t, size_t idx)
{
	struct pw_pred pred[PW_MAX_PREDS];
	struct pw_bind bind = { PW_NO_BIND, PW_PRED_DEP };
	size_t from;
	double at;
	int k, n;

	n = pw_preds(sim->p, sim->sched, sim->where,
	    pw_op_from_index(sim->p, idx), pred);
	for (k = 0; k < n; k++) {
		from = pw_op_index(sim->p, pred[k].op);
		at = (pred[k].from_start ? t->start[from] : t->end[from]) +
		    pred[k].delay;
		if (at == t->start[idx]) {
			bind.pred = (uint32_t)from;
			bind.kind = (uint8_t)pred[k].kind;
			break;
		}
	}
	return bind;
}

/*
 * The first op of every resource's order that never starts (T holds NAN
 * for those) and the first of its pw_preds that never ends: one exists,
 * since what never starts waits for something unfinished, and the op
 * before it in its order has ended.  Returns how many, with the array
 * in *OUT (the caller frees it).
 */
static size_t
pw_sim_waits(const struct pw_sim *sim, const struct pw_timing *t,
    struct pw_wait **out)
{
	const struct pw_problem *p = sim->p;
	const struct pw_schedule *sched = sim->sched;
	struct pw_pred pred[PW_MAX_PREDS];
	struct pw_wait *waits;
	size_t n = 0;
	int r, i, k, npred, nres = sched->ndevices + sched->nchannels;

	waits = pw_xmalloc((size_t)nres * sizeof *waits);
	for (r = 0; r < nres; r++) {
		const struct pw_seq *seq = pw_schedule_order(sched, r);

		for (i = 0; i < seq->len; i++)
			if (isnan(t->start[pw_op_index(p, seq->ops[i])]))
				break;
		if (i == seq->len)
			continue;
		npred = pw_preds(p, sched, sim->where, seq->ops[i], pred);
		for (k = 0; k < npred; k++)
			if (isnan(t->end[pw_op_index(p, pred[k].op)]))
				break;
		assert(k < npred);
		waits[n].op = seq->ops[i];
		waits[n].on = pred[k];
		n++;
	}
	*out = waits;
	return n;
}

/* Names the BLOCKED ops' count and, from the NWAITS WAITS, the first
 * blocked op of every resource and what it waits for. */
static void
pw_sim_deadlock(const struct pw_sim *sim, size_t blocked,
    const struct pw_wait *waits, size_t nwaits, struct pw_error *err)
{
	const struct pw_problem *p = sim->p;
	char name[64], wait[64], res[32];
	size_t i;
	int r;

	pw_error_set(err, "deadlock: %zu ops can never start:", blocked);
	for (i = 0; i < nwaits; i++) {
		r = sim->where->resource[pw_op_index(p, waits[i].op)];
		pw_resource_name(p, r, res, sizeof res);
		pw_error_append(err, "\n  %s: %s waits for %s", res,
		    pw_op_name(name, sizeof name, waits[i].op),
		    pw_op_name(wait, sizeof wait, waits[i].on.op));
	}
}

/*
 * Times SCHED: PW_OK with the timing in *OUT (the caller owns it), else
 * the error; the ops KEEP (or NULL) starts before AFTER keep its times
 * (pw_simulate_after).  A deadlock also gives what each resource waits for in
 * *WAITS and *NWAITS (the caller frees it) when WAITS is not NULL: the
 * list and the message come from one walk.
 */
static int
pw_sim_run(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *keep, double after, struct pw_timing **out,
    struct pw_wait **waits, size_t *nwaits, struct pw_error *err)
{
	struct pw_sim sim;
	struct pw_timing *t = NULL;
	struct pw_wait *w;
	uint32_t *ready = NULL;
	size_t i, e, nw, nready = 0, present = 0, done = 0;
	int rc;

	*out = NULL;
	assert(sched->ndevices == p->devices && sched->nstages == p->nstages &&
	    sched->microbatches == p->microbatches &&
	    sched->nchannels == pw_problem_nchannels(p));
	memset(&sim, 0, sizeof sim);
	sim.p = p;
	sim.sched = sched;
	/* The problem's one limit on its size, which also keeps every op
	 * index within an edge's 32 bits. */
	if ((rc = pw_problem_check_counts(p->devices, p->nstages,
	    p->microbatches, "schedule", err)) != PW_OK)
		return rc;
	sim.universe = pw_op_universe(p);
	if ((rc = pw_where_build(p, sched, &sim.where, err)) != PW_OK)
		return rc;
	if ((rc = pw_sim_complete(&sim, err)) != PW_OK)
		goto out;
	assert(keep == NULL || keep->universe == sim.universe);
	sim.keep = keep;
	sim.after = after;

	t = pw_xmalloc(sizeof *t);
	t->universe = sim.universe;
	t->start = pw_xmalloc(sim.universe * sizeof *t->start);
	t->end = pw_xmalloc(sim.universe * sizeof *t->end);
	t->bind = pw_xmalloc(sim.universe * sizeof *t->bind);
	for (i = 0; i < sim.universe; i++) {
		t->start[i] = t->end[i] = NAN;
		t->bind[i].pred = PW_NO_BIND;
		t->bind[i].kind = PW_PRED_DEP;
		if (!pw_sim_present(&sim, i))
			continue;
		present++;
		t->start[i] = 0;
		if (pw_sim_kept(&sim, i)) {
			t->start[i] = keep->start[i];
			t->end[i] = keep->end[i];
			t->bind[i] = keep->bind[i];
			done++;
		}
	}
	sim.t = t;
	pw_sim_build(&sim);
	ready = pw_xmalloc(sim.universe * sizeof *ready);
	for (i = 0; i < sim.universe; i++)
		if (pw_sim_present(&sim, i) && !pw_sim_kept(&sim, i) &&
		    sim.indegree[i] == 0)
			ready[nready++] = (uint32_t)i;
	/* Kahn's order: an op's start is final once all its constraints are. */
	while (nready > 0) {
		size_t idx = ready[--nready];

		t->end[idx] = t->start[idx] +
		    pw_op_duration(p, pw_op_from_index(p, idx));
		t->bind[idx] = pw_sim_bind(&sim, t, idx);
		done++;
		for (e = sim.first[idx]; e < sim.first[idx + 1]; e++) {
			const struct pw_edge *edge = &sim.edge[e];
			double at = (edge->from_start ? t->start[idx] :
			    t->end[idx]) + edge->delay;

			if (at > t->start[edge->to])
				t->start[edge->to] = at;
			if (--sim.indegree[edge->to] == 0)
				ready[nready++] = edge->to;
		}
	}
	if (done < present) {
		for (i = 0; i < sim.universe; i++)
			if (pw_sim_present(&sim, i) && !pw_sim_kept(&sim, i) &&
			    sim.indegree[i] != 0)
				t->start[i] = t->end[i] = NAN;
		nw = pw_sim_waits(&sim, t, &w);
		pw_sim_deadlock(&sim, present - done, w, nw, err);
		if (waits != NULL) {
			*waits = w;
			*nwaits = nw;
		} else
			free(w);
		pw_timing_free(t);
		t = NULL;
		rc = PW_ERR_DEADLOCK;
		goto out;
	}
	*out = t;
	rc = PW_OK;
out:
	free(ready);
	pw_where_free(sim.where);
	free(sim.first);
	free(sim.edge);
	free(sim.indegree);
	return rc;
}

int
pw_simulate(const struct pw_problem *p, const struct pw_schedule *sched,
    struct pw_timing **out, struct pw_error *err)
{
	return pw_sim_run(p, sched, NULL, 0, out, NULL, NULL, err);
}

int
pw_simulate_after(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *before, double after, struct pw_timing **out,
    struct pw_error *err)
{
	return pw_sim_run(p, sched, before, after, out, NULL, NULL, err);
}

size_t
pw_deadlock_waits(const struct pw_problem *p, const struct pw_schedule *sched,
    struct pw_wait **out)
{
	struct pw_timing *t;
	struct pw_error err;
	size_t n = 0;

	*out = NULL;
	if (pw_sim_run(p, sched, NULL, 0, &t, out, &n, &err) == PW_OK)
		pw_timing_free(t);
	return n;
}

void
pw_timing_free(struct pw_timing *t)
{
	if (t == NULL)
		return;
	free(t->start);
	free(t->end);
	free(t->bind);
	free(t);
}

bool
pw_timing_has(const struct pw_timing *t, size_t index)
{
	return index < t->universe && !isnan(t->start[index]);
}
