/* timed.c - between a schedule with its timing and a list of timed ops. */
#include <assert.h>
#include <math.h>
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

/* By device, then place: each device's ops of a tie side by side, in
 * their order. */
static int
pw_timed_device_cmp(const void *a, const void *b)
{
	const struct pw_timed_placed *x = a, *y = b;

	if (x->to.device != y->to.device)
		return x->to.device < y->to.device ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

/* One op of a device's tie, by its microbatch: AT is its position among
 * the device's ops, LO and HI bound its microbatch's ops in that order. */
struct pw_timed_mbop {
	int	mb;
	size_t	at;
	size_t	lo, hi;
};

static int
pw_timed_mbop_cmp(const void *a, const void *b)
{
	const struct pw_timed_mbop *x = a, *y = b;

	if (x->mb != y->mb)
		return x->mb < y->mb ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* A device's ops of one tie, OPS[K] in their order, being reordered:
 * each op's microbatch, what it still waits for, whether it is out. */
struct pw_untangle {
	const struct pw_timed_placed *ops;
	struct pw_timed_mbop *mb;	/* [k] by microbatch, then order */
	size_t	*rank;			/* [k]: op -> its index in mb */
	size_t	*waits;			/* [k] by op */
	bool	*out;			/* [k] by op */
	struct pw_timed_op *dst;	/* where the next op goes */
	const struct pw_timed_placed *slot;	/* its place, in order */
};

/* Puts op I out, next in the device's order, and tells its microbatch's
 * ops that wait for it. */
static void
pw_untangle_emit(struct pw_untangle *u, size_t i)
{
	const struct pw_timed_mbop *me = &u->mb[u->rank[i]];
	size_t r;

	u->dst[(u->slot++)->place] = u->ops[i].to;
	u->out[i] = true;
	for (r = me->lo; r < me->hi; r++)
		if (!u->out[u->mb[r].at] && pw_timed_before(&u->ops[i].to.op,
		    &u->ops[u->mb[r].at].to.op))
			u->waits[u->mb[r].at]--;
}

/* Reorders the ops of TIE[N] (one instant, sorted by place, which for
 * them is the index in the sorted list) so that none comes before one
 * it depends on: ops taking no time at one instant (a W right after its
 * B) may be listed either way round, and their order as listed would
 * deadlock.  Each device's ops keep the places they had and, in them,
 * their order but that an op listed before one it waits for goes right
 * after it: the stable order that keeps the dependencies, so a valid
 * order is left as it is. */
static void
pw_timed_untangle(struct pw_timed_placed *tie, size_t n,
    struct pw_timed_op *out)
{
	struct pw_timed_placed *by = pw_xreallocarray(NULL, n, sizeof *by);
	struct pw_untangle u;
	size_t lo, hi, k, i, r, j, first;

	u.mb = pw_xreallocarray(NULL, n, sizeof *u.mb);
	u.rank = pw_xreallocarray(NULL, n, sizeof *u.rank);
	u.waits = pw_xreallocarray(NULL, n, sizeof *u.waits);
	u.out = pw_xreallocarray(NULL, n, sizeof *u.out);
	u.dst = out;
	memcpy(by, tie, n * sizeof *by);
	qsort(by, n, sizeof *by, pw_timed_device_cmp);
	for (lo = 0; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && by[hi].to.device ==
		    by[lo].to.device; hi++)
			;
		k = hi - lo;
		u.ops = &by[lo];
		u.slot = &by[lo];
		for (i = 0; i < k; i++)
			u.mb[i] = (struct pw_timed_mbop){ by[lo + i].to.op.mb,
			    i, 0, 0 };
		qsort(u.mb, k, sizeof *u.mb, pw_timed_mbop_cmp);
		for (first = 0; first < k; first = j) {
			for (j = first + 1; j < k && u.mb[j].mb ==
			    u.mb[first].mb; j++)
				;
			for (r = first; r < j; r++) {
				u.mb[r].lo = first;
				u.mb[r].hi = j;
				u.rank[u.mb[r].at] = r;
			}
		}
		for (i = 0; i < k; i++) {
			u.out[i] = false;
			u.waits[i] = 0;
			for (r = u.mb[u.rank[i]].lo; r < u.mb[u.rank[i]].hi; r++)
				u.waits[i] += pw_timed_before(
				    &u.ops[u.mb[r].at].to.op, &u.ops[i].to.op);
		}
		/* In order; an op that waits is passed over, and goes out
		 * as soon as what it waits for has (before any op listed
		 * after it), as Kahn's order taking the first op listed
		 * among those free. */
		for (i = 0; i < k; i++) {
			if (u.out[i] || u.waits[i] != 0)
				continue;
			pw_untangle_emit(&u, i);
			for (r = u.mb[u.rank[i]].lo; r < u.mb[u.rank[i]].hi; ) {
				j = u.mb[r].at;
				if (j < i && !u.out[j] && u.waits[j] == 0) {
					pw_untangle_emit(&u, j);
					r = u.mb[u.rank[i]].lo;
				} else
					r++;
			}
		}
		assert(u.slot == &by[hi]);
	}
	free(u.out);
	free(u.waits);
	free(u.rank);
	free(u.mb);
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
