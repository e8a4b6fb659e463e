/* timed.c - between a schedule with its timing and a list of timed ops. */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
 * read, but for what pw_timed_untangle moves. */
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

/* Whether A must come before B in the order they share, both of one
 * microbatch on one device: a compute op before one that depends on it,
 * an activation's offload before its reload. */
static bool
pw_timed_before(const struct pw_op *a, const struct pw_op *b)
{
	bool ta = pw_kind_is_transfer(a->kind);

	if (ta != pw_kind_is_transfer(b->kind))
		return false;
	if (!ta)
		return pw_kind_precedes(a->kind, a->stage, b->kind, b->stage);
	return a->stage == b->stage && a->kind == PW_OFFLOAD &&
	    b->kind == PW_RELOAD;
}

/* By device, then microbatch, then place: the ops a tie may have to
 * reorder among themselves side by side, in their order. */
static int
pw_timed_cluster_cmp(const void *a, const void *b)
{
	const struct pw_timed_placed *x = a, *y = b;

	if (x->to.device != y->to.device)
		return x->to.device < y->to.device ? -1 : 1;
	if (x->to.op.mb != y->to.op.mb)
		return x->to.op.mb < y->to.op.mb ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

/* Reorders the ops of TIE[N] (one instant, sorted by place, which for
 * them is the index in the sorted list) so that none comes before one
 * it depends on: ops taking no time at one instant (a W right after its
 * B) may be listed either way round, and their order as listed would
 * deadlock.  Each device's ops of one microbatch take the places they
 * had, in the stable order that keeps the dependencies, so a valid
 * order is left as it is. */
static void
pw_timed_untangle(struct pw_timed_placed *tie, size_t n,
    struct pw_timed_op *out)
{
	struct pw_timed_placed *by = pw_xreallocarray(NULL, n, sizeof *by);
	size_t *waits = pw_xreallocarray(NULL, n, sizeof *waits);
	size_t lo, hi, c, r, slot;

	memcpy(by, tie, n * sizeof *by);
	qsort(by, n, sizeof *by, pw_timed_cluster_cmp);
	for (lo = 0; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && by[hi].to.device ==
		    by[lo].to.device && by[hi].to.op.mb == by[lo].to.op.mb;
		    hi++)
			;
		for (c = lo; c < hi; c++)
			for (waits[c] = 0, r = lo; r < hi; r++)
				waits[c] += pw_timed_before(&by[r].to.op,
				    &by[c].to.op);
		/* Each place takes the first op that waits for none left;
		 * a taken op waits for SIZE_MAX's worth, never 0 again. */
		for (slot = lo; slot < hi; slot++) {
			for (c = lo; c < hi && waits[c] != 0; c++)
				;
			assert(c < hi);
			waits[c] = SIZE_MAX;
			out[by[slot].place] = by[c].to;
			for (r = lo; r < hi; r++)
				if (waits[r] != SIZE_MAX &&
				    pw_timed_before(&by[c].to.op, &by[r].to.op))
					waits[r]--;
		}
	}
	free(waits);
	free(by);
}

/* OPS[N] sorted by pw_timed_cmp into OUT[N], which may be OPS. */
static void
pw_timed_sort(const struct pw_timed_op *ops, size_t n,
    struct pw_timed_op *out)
{
	struct pw_timed_placed *placed;
	size_t i, j;

	placed = pw_xreallocarray(NULL, n, sizeof *placed);
	for (i = 0; i < n; i++) {
		placed[i].to = ops[i];
		placed[i].place = i;
	}
	qsort(placed, n, sizeof *placed, pw_timed_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && placed[j].to.start ==
		    placed[i].to.start && placed[j].to.end == placed[i].to.end;
		    j++)
			placed[j].place = j;
		placed[i].place = i;
		if (j - i > 1)
			pw_timed_untangle(&placed[i], j - i, out);
		else
			out[i] = placed[i].to;
	}
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
