/*
 * rules.c - the model's rules as functions: what each op waits for and
 * what it does to its device's memory (docs/model.md).
 *
 * The simulator, the metrics, the solver and the families ask these, so
 * that a rule is written once.  The checker keeps its own copy on purpose
 * (check.c): a wrong rule here must not pass its own test.
 */
#include <assert.h>
#include <stdlib.h>

#include "pipewright.h"

static struct pw_pred
pw_rules_dep(int kind, int stage, int mb, double delay)
{
	struct pw_pred pred;

	pred.op.kind = (enum pw_kind)kind;
	pred.op.stage = stage;
	pred.op.mb = mb;
	pred.kind = PW_PRED_DEP;
	pred.from_start = false;
	pred.delay = delay;
	return pred;
}

int
pw_op_deps(const struct pw_problem *p, struct pw_op op,
    const struct pw_anchor *anchor, struct pw_pred out[PW_MAX_DEPS])
{
	int n = 0, s = op.stage, j = op.mb;

	switch (op.kind) {
	case PW_F:
		if (s > 0)
			out[n++] = pw_rules_dep(PW_F, s - 1, j,
			    pw_problem_hop(p, s - 1));
		break;
	case PW_B:
	case PW_BW:
		if (s == p->nstages - 1)
			out[n++] = pw_rules_dep(PW_F, s, j, 0);
		else {
			out[n++] = pw_rules_dep(PW_B, s + 1, j,
			    pw_problem_hop(p, s));
			out[n++] = pw_rules_dep(PW_BW, s + 1, j,
			    pw_problem_hop(p, s));
		}
		out[n++] = pw_rules_dep(PW_RELOAD, s, j, 0);
		break;
	case PW_W:
		out[n++] = pw_rules_dep(PW_B, s, j, 0);
		break;
	case PW_OFFLOAD:
		out[n++] = pw_rules_dep(PW_F, s, j, 0);
		break;
	case PW_RELOAD:
		out[n++] = pw_rules_dep(PW_OFFLOAD, s, j, 0);
		if (anchor != NULL) {
			out[n].op = anchor->op;
			out[n].kind = PW_PRED_ANCHOR;
			out[n].from_start = !anchor->at_end;
			out[n].delay = 0;
			n++;
		}
		break;
	case PW_NKINDS:
		assert(!"unknown op kind");
	}
	assert(n <= PW_MAX_DEPS);
	return n;
}

/* Indexes one resource's order as resource R. */
static int
pw_rules_place(const struct pw_problem *p, struct pw_where *w,
    const struct pw_seq *seq, int r, struct pw_error *err)
{
	char name[64], res[32];
	size_t idx;
	int i, device;
	bool want_transfer = r >= p->devices;

	pw_resource_name(p, r, res, sizeof res);
	for (i = 0; i < seq->len; i++) {
		struct pw_op op = seq->ops[i];

		if (!pw_op_in(p, op)) {
			pw_error_set(err, "schedule: %s position %d: op (%d,%d) "
			    "out of range", res, i, op.stage, op.mb);
			return PW_ERR_INPUT;
		}
		device = p->stages[op.stage].device;
		if (pw_kind_is_transfer(op.kind) != want_transfer ||
		    (!want_transfer && device != r) ||
		    (want_transfer && pw_problem_channel(p, device, op.kind) !=
		     r - p->devices)) {
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
		if (w->resource[idx] != PW_NOWHERE) {
			pw_error_set(err, "schedule: %s appears twice",
			    pw_op_name(name, sizeof name, op));
			return PW_ERR_INPUT;
		}
		w->resource[idx] = r;
		w->position[idx] = i;
	}
	return PW_OK;
}

int
pw_where_build(const struct pw_problem *p, const struct pw_schedule *sched,
    struct pw_where **out, struct pw_error *err)
{
	struct pw_where *w;
	size_t i;
	int r, rc = PW_OK;

	assert(sched->ndevices == p->devices &&
	    sched->nchannels == pw_problem_nchannels(p));
	*out = NULL;
	w = pw_xmalloc(sizeof *w);
	w->universe = pw_op_universe(p);
	w->resource = pw_xmalloc(w->universe * sizeof *w->resource);
	w->position = pw_xmalloc(w->universe * sizeof *w->position);
	for (i = 0; i < w->universe; i++)
		w->resource[i] = PW_NOWHERE;
	for (r = 0; r < p->devices + sched->nchannels && rc == PW_OK; r++)
		rc = pw_rules_place(p, w, pw_schedule_order(sched, r), r,
		    err);
	if (rc != PW_OK) {
		pw_where_free(w);
		return rc;
	}
	*out = w;
	return PW_OK;
}

void
pw_where_free(struct pw_where *w)
{
	if (w == NULL)
		return;
	free(w->resource);
	free(w->position);
	free(w);
}

bool
pw_where_has(const struct pw_where *w, const struct pw_problem *p,
    struct pw_op op)
{
	return pw_op_in(p, op) && w->resource[pw_op_index(p, op)] !=
	    PW_NOWHERE;
}

int
pw_preds(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_where *w, struct pw_op op, struct pw_pred out[PW_MAX_PREDS])
{
	struct pw_pred deps[PW_MAX_DEPS];
	struct pw_anchor anchor;
	const struct pw_seq *seq;
	size_t idx = pw_op_index(p, op);
	int32_t r = w->resource[idx], pos = w->position[idx];
	int i, ndeps, n = 0;
	bool anchored;

	assert(r != PW_NOWHERE);
	if (pos > 0) {
		seq = pw_schedule_order(sched, r);
		out[n].op = seq->ops[pos - 1];
		out[n].kind = r < p->devices ? PW_PRED_DEVICE :
		    PW_PRED_CHANNEL;
		out[n].from_start = false;
		out[n].delay = 0;
		n++;
	}
	anchored = op.kind == PW_RELOAD &&
	    pw_schedule_anchor(sched, op.stage, op.mb, &anchor);
	ndeps = pw_op_deps(p, op, anchored ? &anchor : NULL, deps);
	for (i = 0; i < ndeps; i++)
		if (pw_where_has(w, p, deps[i].op)) {
			assert(n < PW_MAX_PREDS);
			out[n++] = deps[i];
		}
	return n;
}

/* Adds to OUT (room for MAX) the rows by which CAND, when W holds it,
 * waits for OP: its pw_op_deps rows naming OP, with ANCHOR (its reload
 * anchor, else NULL) only the anchor's row.  Asking pw_op_deps keeps the
 * successors the inverse of pw_preds by construction.  *N counts every
 * row, also those past MAX. */
static void
pw_rules_succ_add(const struct pw_problem *p, const struct pw_where *w,
    struct pw_op op, struct pw_op cand, const struct pw_anchor *anchor,
    struct pw_pred *out, int max, int *n)
{
	struct pw_pred deps[PW_MAX_DEPS];
	int i, ndeps;

	if (!pw_where_has(w, p, cand))
		return;
	ndeps = pw_op_deps(p, cand, anchor, deps);
	for (i = 0; i < ndeps; i++) {
		if (deps[i].op.kind != op.kind || deps[i].op.stage != op.stage ||
		    deps[i].op.mb != op.mb ||
		    (anchor != NULL && deps[i].kind != PW_PRED_ANCHOR))
			continue;
		if (*n < max) {
			out[*n] = deps[i];
			out[*n].op = cand;
		}
		(*n)++;
	}
}

int
pw_succs(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_where *w, struct pw_op op, struct pw_pred *out, int max)
{
	struct pw_anchor anchor;
	const struct pw_seq *seq;
	struct pw_op cand;
	size_t idx = pw_op_index(p, op);
	int32_t r = w->resource[idx], pos = w->position[idx];
	int n = 0, s, k, device;

	assert(r != PW_NOWHERE);
	seq = pw_schedule_order(sched, r);
	if (pos + 1 < seq->len) {
		if (max > 0) {
			out[0].op = seq->ops[pos + 1];
			out[0].kind = r < p->devices ? PW_PRED_DEVICE :
			    PW_PRED_CHANNEL;
			out[0].from_start = false;
			out[0].delay = 0;
		}
		n++;
	}
	/* Every dependency joins ops of one microbatch and neighbouring
	 * stages. */
	cand.mb = op.mb;
	for (s = op.stage > 0 ? op.stage - 1 : 0;
	    s <= op.stage + 1 && s < p->nstages; s++)
		for (k = 0; k < PW_NKINDS; k++) {
			cand.kind = (enum pw_kind)k;
			cand.stage = s;
			pw_rules_succ_add(p, w, op, cand, NULL, out, max, &n);
		}
	/* A reload's anchor is a compute op of its own device (pw_simulate
	 * refuses others), so only that device's stages can hold one. */
	if (sched->nchannels == 0 || pw_kind_is_transfer(op.kind))
		return n;
	device = p->stages[op.stage].device;
	cand.kind = PW_RELOAD;
	for (s = 0; s < p->nstages; s++) {
		if (p->stages[s].device != device)
			continue;
		cand.stage = s;
		for (cand.mb = 0; cand.mb < p->microbatches; cand.mb++)
			if (pw_schedule_anchor(sched, s, cand.mb, &anchor) &&
			    anchor.op.kind == op.kind &&
			    anchor.op.stage == op.stage &&
			    anchor.op.mb == op.mb)
				pw_rules_succ_add(p, w, op, cand, &anchor, out,
				    max, &n);
	}
	return n;
}

struct pw_mem_effect
pw_op_memory(const struct pw_problem *p, struct pw_op op)
{
	const struct pw_stage *st = &p->stages[op.stage];
	struct pw_mem_effect e = { 0, 0 };

	switch (op.kind) {
	case PW_F:
		e.alloc = st->act;
		break;
	case PW_B:
		e.freed = st->act - st->hold;
		break;
	case PW_W:
		e.freed = st->hold;
		break;
	case PW_BW:
		e.freed = st->act;
		break;
	case PW_OFFLOAD:
		e.freed = st->offload;
		break;
	case PW_RELOAD:
		e.alloc = st->offload;
		break;
	case PW_NKINDS:
		assert(!"unknown op kind");
	}
	return e;
}
