/*
 * plan.c - a plan: a problem, its orders as edited, and the timing,
 * metrics and index of the last orders that timed, owned together.
 *
 * Every change goes through one re-time (pw_plan_time): the new orders
 * are simulated and, only when they time, become the timed ones; else the
 * plan keeps what it had and records why.  So a front end always has a
 * consistent timed schedule to draw while the user edits through
 * malformed or deadlocked orders.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

struct pw_plan {
	struct pw_problem *problem;
	struct pw_schedule *sched;	/* the orders as edited */
	/* The last orders that timed, and what was computed from them. */
	struct pw_schedule *timed;
	struct pw_timing *timing;
	struct pw_metrics *metrics;
	struct pw_where *where;
	/* The last re-time's code and, when it failed, its message. */
	int	status;
	struct pw_error msg;
	/* Asked for on demand, of the timed orders (NULL until then). */
	double	*slack;
	struct pw_critical *critical;
	size_t	ncritical;
};

/* What each edit is called in its messages. */
static const char *const pw_plan_edit_names[] = { "move", "insert",
    "remove", "anchor" };

static void
pw_plan_forget(struct pw_plan *plan)
{
	free(plan->slack);
	free(plan->critical);
	plan->slack = NULL;
	plan->critical = NULL;
	plan->ncritical = 0;
}

/*
 * Times PLAN's orders.  When they time they become the timed orders (a
 * copy) with a new timing, metrics and index, and the status is cleared;
 * else the status and its message say why and the rest stays.  Returns
 * the status.
 */
static int
pw_plan_time(struct pw_plan *plan, struct pw_error *err)
{
	struct pw_timing *timing = NULL;
	struct pw_where *where = NULL;
	int rc;

	if ((rc = pw_simulate(plan->problem, plan->sched, &timing,
	    &plan->msg)) == PW_OK)
		rc = pw_where_build(plan->problem, plan->sched, &where,
		    &plan->msg);
	plan->status = rc;
	if (rc != PW_OK) {
		pw_timing_free(timing);
		if (err != NULL)
			*err = plan->msg;
		return rc;
	}
	pw_plan_forget(plan);
	pw_schedule_free(plan->timed);
	pw_timing_free(plan->timing);
	pw_metrics_free(plan->metrics);
	pw_where_free(plan->where);
	plan->timed = pw_schedule_copy(plan->sched);
	plan->timing = timing;
	plan->where = where;
	plan->metrics = pw_metrics_compute(plan->problem, plan->timed, timing);
	return PW_OK;
}

/* A plan of PROBLEM and SCHED (taken), timed; the simulator's error and
 * no plan when the orders do not time. */
static int
pw_plan_make(struct pw_problem *problem, struct pw_schedule *sched,
    struct pw_plan **out, struct pw_error *err)
{
	struct pw_plan *plan = pw_xcalloc(1, sizeof *plan);
	int rc;

	plan->problem = problem;
	plan->sched = sched;
	if ((rc = pw_plan_time(plan, err)) != PW_OK) {
		pw_plan_free(plan);
		plan = NULL;
	}
	*out = plan;
	return rc;
}

int
pw_plan_new(struct pw_problem *problem, struct pw_schedule *sched,
    struct pw_plan **out, struct pw_error *err)
{
	int rc;

	*out = NULL;
	if ((rc = pw_problem_validate(problem, "problem", err)) != PW_OK) {
		pw_schedule_free(sched);
		pw_problem_free(problem);
		return rc;
	}
	return pw_plan_make(problem, sched, out, err);
}

int
pw_plan_family(const struct pw_family *family, const struct pw_problem *p,
    struct pw_plan **out, struct pw_error *err)
{
	struct pw_problem *used;
	struct pw_schedule *sched;
	int rc;

	*out = NULL;
	if ((rc = pw_family_build(family, p, &used, &sched, err)) != PW_OK)
		return rc;
	if (sched->family == NULL)
		sched->family = pw_xstrdup(family->name);
	/* A family's own schedule that cannot be timed is our bug. */
	if (pw_plan_make(used, sched, out, err) != PW_OK)
		return PW_ERR_INTERNAL;
	return PW_OK;
}

int
pw_plan_from_timed(struct pw_problem *problem, const struct pw_timed_op *ops,
    size_t n, char *family, const char *label, struct pw_plan **out,
    struct pw_error *err)
{
	struct pw_schedule *sched;
	struct pw_error why;
	int rc;

	*out = NULL;
	if ((rc = pw_schedule_from_timed(problem, ops, n, &sched,
	    &why)) != PW_OK) {
		pw_problem_free(problem);
		free(family);
		pw_error_set(err, "%s: %s", label, why.msg);
		return rc;
	}
	sched->family = family;
	if ((rc = pw_plan_make(problem, sched, out, &why)) != PW_OK)
		pw_error_set(err, "%s: %s", label, why.msg);
	return rc;
}

/* pw_plan_read, or with MEASURED pw_plan_read_run: one reading of the
 * file either way. */
static int
pw_plan_read_file(const char *path, struct pw_plan **out,
    struct pw_timed_op **stored, size_t *nstored,
    struct pw_measured **measured, struct pw_error *err)
{
	const char *label = strcmp(path, "-") == 0 ? "<stdin>" : path;
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	char *family = NULL;
	size_t nops = 0;
	int rc;

	*out = NULL;
	rc = measured != NULL ? pw_schedule_read_run(path, &problem, &ops,
	    &nops, &family, measured, err) : pw_schedule_read(path, &problem,
	    &ops, &nops, &family, err);
	if (rc != PW_OK)
		return rc;
	if (measured != NULL && *measured == NULL) {
		pw_problem_free(problem);
		free(family);
		free(ops);
		return PW_OK;
	}
	rc = pw_plan_from_timed(problem, ops, nops, family, label, out, err);
	if (rc == PW_OK && stored != NULL) {
		*stored = ops;
		*nstored = nops;
	} else
		free(ops);
	if (rc != PW_OK && measured != NULL) {
		pw_measured_free(*measured);
		*measured = NULL;
	}
	return rc;
}

int
pw_plan_read(const char *path, struct pw_plan **out,
    struct pw_timed_op **stored, size_t *nstored, struct pw_error *err)
{
	return pw_plan_read_file(path, out, stored, nstored, NULL, err);
}

int
pw_plan_read_run(const char *path, struct pw_plan **out,
    struct pw_measured **measured, struct pw_error *err)
{
	*measured = NULL;
	return pw_plan_read_file(path, out, NULL, NULL, measured, err);
}

struct pw_plan *
pw_plan_copy(const struct pw_plan *plan)
{
	struct pw_plan *copy;
	struct pw_error err;
	int rc;

	/* The timed orders timed once, so they time again, the same. */
	rc = pw_plan_make(pw_problem_copy(plan->problem),
	    pw_schedule_copy(plan->timed), &copy, &err);
	assert(rc == PW_OK);
	(void)rc;
	pw_schedule_free(copy->sched);
	copy->sched = pw_schedule_copy(plan->sched);
	copy->status = plan->status;
	copy->msg = plan->msg;
	return copy;
}

void
pw_plan_free(struct pw_plan *plan)
{
	if (plan == NULL)
		return;
	pw_plan_forget(plan);
	pw_where_free(plan->where);
	pw_metrics_free(plan->metrics);
	pw_timing_free(plan->timing);
	pw_schedule_free(plan->timed);
	pw_schedule_free(plan->sched);
	pw_problem_free(plan->problem);
	free(plan);
}

const struct pw_problem *
pw_plan_problem(const struct pw_plan *plan)
{
	return plan->problem;
}

const struct pw_schedule *
pw_plan_schedule(const struct pw_plan *plan)
{
	return plan->sched;
}

const struct pw_schedule *
pw_plan_timed(const struct pw_plan *plan)
{
	return plan->timed;
}

const struct pw_timing *
pw_plan_timing(const struct pw_plan *plan)
{
	return plan->timing;
}

const struct pw_metrics *
pw_plan_metrics(const struct pw_plan *plan)
{
	return plan->metrics;
}

const struct pw_where *
pw_plan_where(const struct pw_plan *plan)
{
	return plan->where;
}

int
pw_plan_status(const struct pw_plan *plan, struct pw_error *err)
{
	if (plan->status != PW_OK && err != NULL)
		*err = plan->msg;
	return plan->status;
}

/* The caches are filled on a const plan: they are of the timed orders,
 * which asking does not change (so a plan is not for concurrent askers). */
const double *
pw_plan_slack(const struct pw_plan *plan)
{
	struct pw_plan *p = (struct pw_plan *)plan;

	if (p->slack == NULL)
		p->slack = pw_slack(p->problem, p->timed, p->timing);
	return p->slack;
}

const struct pw_critical *
pw_plan_critical(const struct pw_plan *plan, size_t *n)
{
	struct pw_plan *p = (struct pw_plan *)plan;

	if (p->critical == NULL)
		p->critical = pw_critical_path(p->problem, p->timed, p->timing,
		    &p->ncritical);
	*n = p->ncritical;
	return p->critical;
}

/* The order OP belongs to in PLAN's schedule. */
static struct pw_seq *
pw_plan_seq(struct pw_plan *plan, struct pw_op op)
{
	const struct pw_problem *p = plan->problem;
	int device = p->stages[op.stage].device;

	if (pw_kind_is_transfer(op.kind))
		return &plan->sched->channel[pw_problem_channel(p, device,
		    op.kind)];
	return &plan->sched->device[device];
}

/* Refuses EDIT unless it applies to PLAN's schedule (naming what is
 * wrong); else PW_OK with OP's order and position (-1: absent). */
static int
pw_plan_check(struct pw_plan *plan, const struct pw_edit *e,
    struct pw_seq **seqp, int *atp, struct pw_error *err)
{
	const struct pw_problem *p = plan->problem;
	const char *what;
	struct pw_seq *seq;
	char name[64], other[64];
	int at, device;

	if ((int)e->kind < 0 || e->kind > PW_EDIT_ANCHOR) {
		pw_error_set(err, "edit: unknown kind %d", (int)e->kind);
		return PW_ERR_INPUT;
	}
	what = pw_plan_edit_names[e->kind];
	if (!pw_op_in(p, e->op)) {
		pw_error_set(err, "%s: op (kind %d, stage %d, microbatch %d) is"
		    " out of range", what, (int)e->op.kind, e->op.stage,
		    e->op.mb);
		return PW_ERR_INPUT;
	}
	pw_op_name(name, sizeof name, e->op);
	if (pw_kind_is_transfer(e->op.kind) && !p->link.present) {
		pw_error_set(err, "%s: %s: the problem has no offload link",
		    what, name);
		return PW_ERR_INPUT;
	}
	device = p->stages[e->op.stage].device;
	if (e->kind == PW_EDIT_ANCHOR) {
		if (e->op.kind != PW_RELOAD) {
			pw_error_set(err, "anchor: %s is not a RELOAD", name);
			return PW_ERR_INPUT;
		}
		if (!e->has_anchor)
			return PW_OK;
		if (!(p->stages[e->op.stage].offload > 0)) {
			pw_error_set(err, "anchor: %s cannot exist (stage %d "
			    "offloads 0 bytes)", name, e->op.stage);
			return PW_ERR_INPUT;
		}
		if (!pw_op_in(p, e->anchor.op) ||
		    pw_kind_is_transfer(e->anchor.op.kind)) {
			pw_error_set(err, "anchor: %s: the anchor is not a "
			    "compute op of the problem", name);
			return PW_ERR_INPUT;
		}
		if (p->stages[e->anchor.op.stage].device != device) {
			pw_error_set(err, "anchor: %s is on device %d, its "
			    "anchor %s on device %d", name, device,
			    pw_op_name(other, sizeof other, e->anchor.op),
			    p->stages[e->anchor.op.stage].device);
			return PW_ERR_INPUT;
		}
		return PW_OK;
	}
	seq = pw_plan_seq(plan, e->op);
	at = pw_seq_find(seq, e->op);
	if (e->kind != PW_EDIT_INSERT && at < 0) {
		pw_error_set(err, "%s: %s is not in the schedule", what, name);
		return PW_ERR_INPUT;
	}
	if (e->kind == PW_EDIT_INSERT && at >= 0) {
		pw_error_set(err, "insert: %s is in the schedule already (at "
		    "%d)", name, at);
		return PW_ERR_INPUT;
	}
	if (e->kind == PW_EDIT_INSERT && pw_kind_is_transfer(e->op.kind) &&
	    !(p->stages[e->op.stage].offload > 0)) {
		pw_error_set(err, "insert: %s moves nothing (stage %d offloads"
		    " 0 bytes)", name, e->op.stage);
		return PW_ERR_INPUT;
	}
	/* A move's positions are of the order without the op. */
	if (e->kind != PW_EDIT_REMOVE && (e->to < 0 || e->to >
	    seq->len - (e->kind == PW_EDIT_MOVE))) {
		pw_error_set(err, "%s: %s: position %d is out of range (0 to "
		    "%d)", what, name, e->to, seq->len - (e->kind ==
		    PW_EDIT_MOVE));
		return PW_ERR_INPUT;
	}
	*seqp = seq;
	*atp = at;
	return PW_OK;
}

static void
pw_plan_seq_remove(struct pw_seq *seq, int at)
{
	memmove(&seq->ops[at], &seq->ops[at + 1], (size_t)(seq->len - at - 1) *
	    sizeof *seq->ops);
	seq->len--;
}

static void
pw_plan_seq_insert(struct pw_seq *seq, int at, struct pw_op op)
{
	pw_seq_push(seq, op);
	memmove(&seq->ops[at + 1], &seq->ops[at], (size_t)(seq->len - 1 - at) *
	    sizeof *seq->ops);
	seq->ops[at] = op;
}

int
pw_plan_apply(struct pw_plan *plan, const struct pw_edit *edit,
    struct pw_edit *undo, struct pw_error *err)
{
	struct pw_seq *seq = NULL;
	struct pw_edit inverse;
	int at = -1, rc;

	if ((rc = pw_plan_check(plan, edit, &seq, &at, err)) != PW_OK)
		return rc;
	inverse = *edit;
	switch (edit->kind) {
	case PW_EDIT_MOVE:
		pw_plan_seq_remove(seq, at);
		pw_plan_seq_insert(seq, edit->to, edit->op);
		inverse.to = at;
		break;
	case PW_EDIT_INSERT:
		pw_plan_seq_insert(seq, edit->to, edit->op);
		inverse.kind = PW_EDIT_REMOVE;
		break;
	case PW_EDIT_REMOVE:
		pw_plan_seq_remove(seq, at);
		inverse.kind = PW_EDIT_INSERT;
		inverse.to = at;
		break;
	case PW_EDIT_ANCHOR:
		inverse.has_anchor = pw_schedule_anchor(plan->sched,
		    edit->op.stage, edit->op.mb, &inverse.anchor);
		pw_schedule_set_anchor(plan->sched, edit->op.stage,
		    edit->op.mb, edit->has_anchor ? edit->anchor :
		    (struct pw_anchor){ { PW_NKINDS, 0, 0 }, false });
		break;
	}
	if (undo != NULL)
		*undo = inverse;
	/* The edit stands whether or not the new orders time. */
	(void)pw_plan_time(plan, NULL);
	return PW_OK;
}

/*
 * Whether SCHED's orders are ones that edits could have made from PLAN's:
 * every op once, on its own resource, each anchor one that an anchor edit
 * would set.  Edits keep orders so, which is what lets every edit's
 * inverse apply; orders that merely fail to time (a deadlock, an op
 * missing) are admitted.
 */
static int
pw_plan_admit(struct pw_plan *plan, const struct pw_schedule *sched,
    struct pw_error *err)
{
	const struct pw_problem *p = plan->problem;
	struct pw_where *where = NULL;
	struct pw_error why;
	struct pw_edit e;
	struct pw_seq *seq;
	int rc, s, j, at;

	if ((rc = pw_where_build(p, sched, &where, &why)) != PW_OK) {
		pw_error_set(err, "replace: %s", why.msg);
		return rc;
	}
	pw_where_free(where);
	memset(&e, 0, sizeof e);
	e.kind = PW_EDIT_ANCHOR;
	e.has_anchor = true;
	for (s = 0; s < p->nstages; s++)
		for (j = 0; j < p->microbatches; j++) {
			if (!pw_schedule_anchor(sched, s, j, &e.anchor))
				continue;
			e.op = (struct pw_op){ PW_RELOAD, s, j };
			if ((rc = pw_plan_check(plan, &e, &seq, &at, &why)) !=
			    PW_OK) {
				pw_error_set(err, "replace: %s", why.msg);
				return rc;
			}
		}
	return PW_OK;
}

int
pw_plan_replace(struct pw_plan *plan, struct pw_schedule *sched,
    struct pw_error *err)
{
	const struct pw_problem *p = plan->problem;
	int rc;

	if (sched->ndevices != p->devices || sched->nchannels !=
	    pw_problem_nchannels(p) || sched->nstages != p->nstages ||
	    sched->microbatches != p->microbatches) {
		pw_error_set(err, "replace: the schedule is shaped for %d "
		    "devices, %d channels, %d stages and %d microbatches, the "
		    "problem has %d, %d, %d and %d", sched->ndevices,
		    sched->nchannels, sched->nstages, sched->microbatches,
		    p->devices, pw_problem_nchannels(p), p->nstages,
		    p->microbatches);
		pw_schedule_free(sched);
		return PW_ERR_INPUT;
	}
	if ((rc = pw_plan_admit(plan, sched, err)) != PW_OK) {
		pw_schedule_free(sched);
		return rc;
	}
	pw_schedule_free(plan->sched);
	plan->sched = sched;
	return pw_plan_time(plan, err);
}
