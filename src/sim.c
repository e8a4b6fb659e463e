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

#define PW_NO_RESOURCE INT32_MIN

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
	/* Per op: resource (device d >= 0, channel c as -1 - c) and position,
	 * PW_NO_RESOURCE for absent ops. */
	int32_t	*resource;
	int32_t	*position;
	/* Successor lists in CSR form. */
	size_t	*first;
	struct pw_edge *edge;
	size_t	nedges;
	uint32_t *indegree;
};

static bool
pw_sim_has(const struct pw_sim *sim, int kind, int stage, int mb)
{
	struct pw_op op = { (enum pw_kind)kind, stage, mb };

	return sim->resource[pw_op_index(sim->p, op)] != PW_NO_RESOURCE;
}

static size_t
pw_sim_index(const struct pw_sim *sim, int kind, int stage, int mb)
{
	struct pw_op op = { (enum pw_kind)kind, stage, mb };

	return pw_op_index(sim->p, op);
}

/* Places every op of one resource's order, rejecting ops that belong
 * elsewhere or appear twice. */
static int
pw_sim_place(struct pw_sim *sim, const struct pw_seq *seq, int32_t resource,
    struct pw_error *err)
{
	const struct pw_problem *p = sim->p;
	char name[64], res[32];
	size_t idx;
	int i, device;
	bool want_transfer = resource < 0;

	if (resource >= 0)
		snprintf(res, sizeof res, "device %d", resource);
	else
		pw_channel_name(p, -1 - resource, res, sizeof res);
	for (i = 0; i < seq->len; i++) {
		struct pw_op op = seq->ops[i];

		if (op.stage < 0 || op.stage >= p->nstages || op.mb < 0 ||
		    op.mb >= p->microbatches || op.kind < 0 ||
		    op.kind >= PW_NKINDS) {
			pw_error_set(err, "schedule: %s position %d: op (%d,%d) "
			    "out of range", res, i, op.stage, op.mb);
			return PW_ERR_INPUT;
		}
		device = p->stages[op.stage].device;
		if (pw_kind_is_transfer(op.kind) != want_transfer ||
		    (resource >= 0 && device != resource) ||
		    (resource < 0 &&
		     pw_problem_channel(p, device, op.kind) != -1 - resource)) {
			pw_error_set(err, "schedule: %s is ordered on %s but "
			    "belongs to %s %d", pw_op_name(name, sizeof name,
			    op), res,
			    pw_kind_is_transfer(op.kind) ? "the link of device" :
			    "device", device);
			return PW_ERR_INPUT;
		}
		if (want_transfer && p->stages[op.stage].offload <= 0) {
			pw_error_set(err, "schedule: %s moves nothing (stage %d "
			    "has offload 0)", pw_op_name(name, sizeof name, op),
			    op.stage);
			return PW_ERR_INPUT;
		}
		idx = pw_op_index(p, op);
		if (sim->resource[idx] != PW_NO_RESOURCE) {
			pw_error_set(err, "schedule: %s appears twice",
			    pw_op_name(name, sizeof name, op));
			return PW_ERR_INPUT;
		}
		sim->resource[idx] = resource;
		sim->position[idx] = i;
	}
	return PW_OK;
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
				    "%s%s)", s, j, f ? " F" : "", b ? " B" : "",
				    w ? " W" : "", bw ? " BW" : "",
				    off ? " OFFLOAD" : "", rel ? " RELOAD" : "");
				return PW_ERR_INPUT;
			}
			if (!pw_schedule_anchor(sim->sched, s, j, &anchor))
				continue;
			a = anchor.op;
			if (!rel || a.stage < 0 || a.stage >= p->nstages ||
			    a.mb < 0 || a.mb >= p->microbatches ||
			    pw_kind_is_transfer(a.kind) ||
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

/* The backward op of (stage, mb) that later ops wait for: B or BW. */
static size_t
pw_sim_backward(const struct pw_sim *sim, int stage, int mb)
{
	return pw_sim_index(sim, pw_sim_has(sim, PW_BW, stage, mb) ? PW_BW :
	    PW_B, stage, mb);
}

/* Calls EMIT for every constraint that op IDX must wait for; the one list
 * of dependencies, used both to count and to fill the edges. */
static void
pw_sim_preds(const struct pw_sim *sim, size_t idx,
    void (*emit)(struct pw_sim *, size_t from, size_t to, bool from_start,
    double delay), struct pw_sim *arg)
{
	const struct pw_problem *p = sim->p;
	struct pw_op op = pw_op_from_index(p, idx);
	struct pw_anchor anchor;
	int32_t res = sim->resource[idx], pos = sim->position[idx];
	const struct pw_seq *seq;
	int s = op.stage, j = op.mb;

	if (pos > 0) {
		seq = res >= 0 ? &sim->sched->device[res] :
		    &sim->sched->channel[-1 - res];
		emit(arg, pw_op_index(p, seq->ops[pos - 1]), idx, false, 0);
	}
	switch (op.kind) {
	case PW_F:
		if (s > 0)
			emit(arg, pw_sim_index(sim, PW_F, s - 1, j), idx, false,
			    pw_problem_hop(p, s - 1));
		break;
	case PW_B:
	case PW_BW:
		if (s == p->nstages - 1)
			emit(arg, pw_sim_index(sim, PW_F, s, j), idx, false, 0);
		else
			emit(arg, pw_sim_backward(sim, s + 1, j), idx, false,
			    pw_problem_hop(p, s));
		if (pw_sim_has(sim, PW_RELOAD, s, j))
			emit(arg, pw_sim_index(sim, PW_RELOAD, s, j), idx,
			    false, 0);
		break;
	case PW_W:
		emit(arg, pw_sim_index(sim, PW_B, s, j), idx, false, 0);
		break;
	case PW_OFFLOAD:
		emit(arg, pw_sim_index(sim, PW_F, s, j), idx, false, 0);
		break;
	case PW_RELOAD:
		emit(arg, pw_sim_index(sim, PW_OFFLOAD, s, j), idx, false, 0);
		if (pw_schedule_anchor(sim->sched, s, j, &anchor))
			emit(arg, pw_op_index(p, anchor.op), idx,
			    !anchor.at_end, 0);
		break;
	case PW_NKINDS:
		assert(!"unknown op kind");
	}
}

static void
pw_sim_count(struct pw_sim *sim, size_t from, size_t to, bool from_start,
    double delay)
{
	(void)to;
	(void)from_start;
	(void)delay;
	sim->first[from + 1]++;
	sim->nedges++;
}

static void
pw_sim_fill(struct pw_sim *sim, size_t from, size_t to, bool from_start,
    double delay)
{
	struct pw_edge *e = &sim->edge[sim->first[from]++];

	e->to = (uint32_t)to;
	e->from_start = from_start;
	e->delay = delay;
	sim->indegree[to]++;
}

static void
pw_sim_build(struct pw_sim *sim)
{
	size_t i, u = sim->universe;

	sim->first = pw_xcalloc(u + 1, sizeof *sim->first);
	sim->indegree = pw_xcalloc(u, sizeof *sim->indegree);
	for (i = 0; i < u; i++)
		if (sim->resource[i] != PW_NO_RESOURCE)
			pw_sim_preds(sim, i, pw_sim_count, sim);
	for (i = 0; i < u; i++)
		sim->first[i + 1] += sim->first[i];
	sim->edge = pw_xmalloc(sim->nedges * sizeof *sim->edge);
	for (i = 0; i < u; i++)
		if (sim->resource[i] != PW_NO_RESOURCE)
			pw_sim_preds(sim, i, pw_sim_fill, sim);
	/* Filling advanced each first[i] to first[i + 1]; shift back. */
	memmove(sim->first + 1, sim->first, u * sizeof *sim->first);
	sim->first[0] = 0;
}

/* Names the first blocked op of every resource and what it waits for. */
static void
pw_sim_deadlock(const struct pw_sim *sim, const struct pw_timing *t,
    size_t blocked, struct pw_error *err)
{
	const struct pw_problem *p = sim->p;
	const struct pw_schedule *sched = sim->sched;
	char name[64], wait[64], res[32];
	size_t idx, from;
	int r, i, nres = sched->ndevices + sched->nchannels;
	bool any;

	pw_error_set(err, "deadlock: %zu ops can never start:", blocked);
	for (r = 0; r < nres; r++) {
		const struct pw_seq *seq = r < sched->ndevices ?
		    &sched->device[r] : &sched->channel[r - sched->ndevices];

		for (i = 0; i < seq->len; i++)
			if (isnan(t->start[pw_op_index(p, seq->ops[i])]))
				break;
		if (i == seq->len)
			continue;
		idx = pw_op_index(p, seq->ops[i]);
		if (r < sched->ndevices)
			snprintf(res, sizeof res, "device %d", r);
		else
			pw_channel_name(p, r - sched->ndevices, res, sizeof res);
		pw_error_append(err, "\n  %s: %s waits for", res,
		    pw_op_name(name, sizeof name, seq->ops[i]));
		any = false;
		/* Scan predecessors: an edge into idx from an unfinished op. */
		for (from = 0; from < sim->universe; from++) {
			size_t e;

			if (sim->resource[from] == PW_NO_RESOURCE ||
			    !isnan(t->end[from]))
				continue;
			for (e = sim->first[from]; e < sim->first[from + 1]; e++) {
				if (sim->edge[e].to != idx)
					continue;
				pw_error_append(err, "%s %s", any ? "," : "",
				    pw_op_name(wait, sizeof wait,
				    pw_op_from_index(p, from)));
				any = true;
			}
		}
	}
}

int
pw_simulate(const struct pw_problem *p, const struct pw_schedule *sched,
    struct pw_timing **out, struct pw_error *err)
{
	struct pw_sim sim;
	struct pw_timing *t = NULL;
	uint32_t *ready = NULL;
	size_t i, e, nready = 0, present = 0, done = 0;
	int r, rc;

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
	sim.resource = pw_xmalloc(sim.universe * sizeof *sim.resource);
	sim.position = pw_xmalloc(sim.universe * sizeof *sim.position);
	for (i = 0; i < sim.universe; i++)
		sim.resource[i] = PW_NO_RESOURCE;
	for (r = 0; r < sched->ndevices; r++)
		if ((rc = pw_sim_place(&sim, &sched->device[r], r, err)) != PW_OK)
			goto out;
	for (r = 0; r < sched->nchannels; r++)
		if ((rc = pw_sim_place(&sim, &sched->channel[r], -1 - r,
		    err)) != PW_OK)
			goto out;
	if ((rc = pw_sim_complete(&sim, err)) != PW_OK)
		goto out;
	pw_sim_build(&sim);

	t = pw_xmalloc(sizeof *t);
	t->universe = sim.universe;
	t->start = pw_xmalloc(sim.universe * sizeof *t->start);
	t->end = pw_xmalloc(sim.universe * sizeof *t->end);
	t->bind = pw_xmalloc(sim.universe * sizeof *t->bind);
	ready = pw_xmalloc(sim.universe * sizeof *ready);
	for (i = 0; i < sim.universe; i++) {
		t->start[i] = t->end[i] = NAN;
		t->bind[i].pred = PW_NO_BIND;
		t->bind[i].kind = PW_PRED_DEP;
		if (sim.resource[i] == PW_NO_RESOURCE)
			continue;
		present++;
		t->start[i] = 0;
		if (sim.indegree[i] == 0)
			ready[nready++] = (uint32_t)i;
	}
	/* Kahn's order: an op's start is final once all its constraints are. */
	while (nready > 0) {
		size_t idx = ready[--nready];

		t->end[idx] = t->start[idx] +
		    pw_op_duration(p, pw_op_from_index(p, idx));
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
			if (sim.resource[i] != PW_NO_RESOURCE &&
			    sim.indegree[i] != 0)
				t->start[i] = t->end[i] = NAN;
		pw_sim_deadlock(&sim, t, present - done, err);
		pw_timing_free(t);
		t = NULL;
		rc = PW_ERR_DEADLOCK;
		goto out;
	}
	*out = t;
	rc = PW_OK;
out:
	free(ready);
	free(sim.resource);
	free(sim.position);
	free(sim.first);
	free(sim.edge);
	free(sim.indegree);
	return rc;
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
