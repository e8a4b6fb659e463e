/* timed.c - between a schedule with its timing and a list of timed ops. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "pipewright.h"

/* A timed op with its place in the list it came from. */
struct pw_timed_placed {
	struct pw_timed_op to;
	size_t	place;
};

/* Orders by start, then end, then the place in the list: ops that
 * start and end together (ops taking no time) keep their list's order,
 * which is the schedule's when the list is its orders one after another
 * (a channel that devices share included), and a file's when it is
 * read. */
static int
pw_timed_cmp(const void *a, const void *b)
{
	const struct pw_timed_placed *x = a, *y = b;

	if (x->to.start != y->to.start)
		return x->to.start < y->to.start ? -1 : 1;
	if (x->to.end != y->to.end)
		return x->to.end < y->to.end ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

/* OPS[N] sorted by pw_timed_cmp into OUT[N], which may be OPS. */
static void
pw_timed_sort(const struct pw_timed_op *ops, size_t n,
    struct pw_timed_op *out)
{
	struct pw_timed_placed *placed;
	size_t i;

	placed = pw_xreallocarray(NULL, n, sizeof *placed);
	for (i = 0; i < n; i++) {
		placed[i].to = ops[i];
		placed[i].place = i;
	}
	qsort(placed, n, sizeof *placed, pw_timed_cmp);
	for (i = 0; i < n; i++)
		out[i] = placed[i].to;
	free(placed);
}

struct pw_timed_op *
pw_timed_ops(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, size_t *n)
{
	struct pw_timed_op *ops;
	size_t total = pw_schedule_nops(sched), k = 0, idx;
	int r, i;

	ops = pw_xcalloc(total, sizeof *ops);
	for (r = 0; r < sched->ndevices + sched->nchannels; r++) {
		const struct pw_seq *seq = pw_schedule_order(sched, r);

		for (i = 0; i < seq->len; i++) {
			struct pw_timed_op *to = &ops[k++];

			to->op = seq->ops[i];
			idx = pw_op_index(p, to->op);
			assert(pw_timing_has(t, idx));
			to->device = p->stages[to->op.stage].device;
			to->start = t->start[idx];
			to->end = t->end[idx];
			if (pw_kind_is_transfer(to->op.kind))
				to->bytes = p->stages[to->op.stage].offload;
			if (to->op.kind == PW_RELOAD)
				to->has_anchor = pw_schedule_anchor(sched,
				    to->op.stage, to->op.mb, &to->anchor);
		}
	}
	pw_timed_sort(ops, total, ops);
	*n = total;
	return ops;
}

/* Checks that a timed op can be placed at all; the simulator and the
 * checker judge everything else. */
static int
pw_timed_placeable(const struct pw_problem *p, const struct pw_timed_op *to,
    size_t i, struct pw_error *err)
{
	if (to->op.kind < 0 || to->op.kind >= PW_NKINDS) {
		pw_error_set(err, "ops[%zu].kind: unknown kind", i);
		return PW_ERR_INPUT;
	}
	if (to->op.stage < 0 || to->op.stage >= p->nstages) {
		pw_error_set(err, "ops[%zu].stage: stage %d does not exist "
		    "(stages = %d)", i, to->op.stage, p->nstages);
		return PW_ERR_INPUT;
	}
	if (to->op.mb < 0 || to->op.mb >= p->microbatches) {
		pw_error_set(err, "ops[%zu].mb: microbatch %d does not exist "
		    "(microbatches = %d)", i, to->op.mb, p->microbatches);
		return PW_ERR_INPUT;
	}
	if (to->device != p->stages[to->op.stage].device) {
		pw_error_set(err, "ops[%zu].device: %d, but stage %d runs on "
		    "device %d", i, to->device, to->op.stage,
		    p->stages[to->op.stage].device);
		return PW_ERR_INPUT;
	}
	if (!isfinite(to->start) || !isfinite(to->end)) {
		pw_error_set(err, "ops[%zu]: start and end must be finite", i);
		return PW_ERR_INPUT;
	}
	if (pw_kind_is_transfer(to->op.kind) && !p->link.present) {
		pw_error_set(err, "ops[%zu].kind: %s needs a link, and the "
		    "problem has none", i, pw_kind_name(to->op.kind));
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

int
pw_schedule_from_timed(const struct pw_problem *p, const struct pw_timed_op *ops,
    size_t n, struct pw_schedule **out, struct pw_error *err)
{
	struct pw_schedule *sched;
	struct pw_timed_op *sorted;
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < n; i++)
		if ((rc = pw_timed_placeable(p, &ops[i], i, err)) != PW_OK)
			return rc;
	sorted = pw_xreallocarray(NULL, n, sizeof *sorted);
	pw_timed_sort(ops, n, sorted);
	sched = pw_schedule_new(p);
	for (i = 0; i < n; i++) {
		pw_schedule_append(sched, p, sorted[i].op);
		if (sorted[i].op.kind == PW_RELOAD && sorted[i].has_anchor)
			pw_schedule_set_anchor(sched, sorted[i].op.stage,
			    sorted[i].op.mb, sorted[i].anchor);
	}
	free(sorted);
	*out = sched;
	return PW_OK;
}
