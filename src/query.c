/*
 * query.c - questions about a timed schedule: which op runs on a resource
 * at an instant, a device's memory at an instant, every op's slack and
 * the critical path.
 *
 * Slack and the critical path read the same graph the simulator times,
 * through pw_preds, so that "what waits for what" has one answer.  Each
 * question is linear in the ops and their edges, or a binary search.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "plan.h"

static const char *const pw_query_pred_names[] = {
	"device", "channel", "dependency", "anchor"
};

const char *
pw_pred_kind_name(enum pw_pred_kind kind)
{
	assert(kind >= PW_PRED_DEVICE && kind <= PW_PRED_ANCHOR);
	return pw_query_pred_names[kind];
}

/* Resource R's order (pw_where's numbering), NULL when SCHED has no R. */
static const struct pw_seq *
pw_query_order(const struct pw_problem *p, const struct pw_schedule *sched,
    int r)
{
	if (r < 0 || r >= p->devices + sched->nchannels)
		return NULL;
	return pw_schedule_order(sched, r);
}

/* How many ops of SEQ have a TIMES entry (their starts or their ends) at
 * or before T.  An order runs in sequence, so both never decrease along
 * it: a binary search. */
static int
pw_query_count(const struct pw_problem *p, const struct pw_seq *seq,
    const double *times, double t)
{
	int lo = 0, hi = seq->len, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (times[pw_op_index(p, seq->ops[mid])] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool
pw_op_at(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, int resource, double at, struct pw_op *out)
{
	const struct pw_seq *seq = pw_query_order(p, sched, resource);
	size_t idx;
	int n;

	if (seq == NULL)
		return false;
	/* Of the ops started by AT, only the last can run at AT. */
	if ((n = pw_query_count(p, seq, t->start, at)) == 0)
		return false;
	idx = pw_op_index(p, seq->ops[n - 1]);
	if (!(at < t->end[idx]))
		return false;
	*out = seq->ops[n - 1];
	return true;
}

int
pw_order_seek(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, int resource, double at)
{
	const struct pw_seq *seq = pw_query_order(p, sched, resource);

	assert(seq != NULL);
	return pw_query_count(p, seq, t->end, at);
}

double
pw_memory_at(const struct pw_metrics *m, int device, double at)
{
	const struct pw_device_metrics *dm;
	int lo = 0, hi, mid;

	assert(device >= 0 && device < m->ndevices);
	dm = &m->device[device];
	assert(dm->ncurve > 0);
	/* The last point at or before AT; the first is at the start. */
	hi = dm->ncurve;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (dm->curve[mid].t <= at)
			lo = mid;
		else
			hi = mid;
	}
	return dm->curve[lo].bytes;
}

/* The index of SCHED's ops, which timed as T: it cannot fail. */
static struct pw_where *
pw_query_where(const struct pw_problem *p, const struct pw_schedule *sched)
{
	struct pw_where *w;
	struct pw_error err;
	int rc;

	rc = pw_where_build(p, sched, &w, &err);
	assert(rc == PW_OK);
	(void)rc;
	return w;
}

/*
 * Every present op, each after all its predecessors: the postorder of a
 * depth-first walk along pw_preds.  The walk keeps, per op on its stack,
 * the next predecessor to visit.  Returns an array of *N op indices the
 * caller frees.
 */
static uint32_t *
pw_query_topo(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_where *w, size_t *n)
{
	struct pw_pred pred[PW_MAX_PREDS];
	uint32_t *order, *stack;
	uint8_t *next, *seen;
	size_t i, u = w->universe, depth, idx, from;
	int npred;

	order = pw_xmalloc(u * sizeof *order);
	stack = pw_xmalloc(u * sizeof *stack);
	next = pw_xcalloc(u, sizeof *next);
	seen = pw_xcalloc(u, sizeof *seen);
	*n = 0;
	for (i = 0; i < u; i++) {
		if (w->resource[i] == PW_NOWHERE || seen[i])
			continue;
		seen[i] = 1;
		stack[0] = (uint32_t)i;
		depth = 1;
		while (depth > 0) {
			idx = stack[depth - 1];
			npred = pw_preds(p, sched, w, pw_op_from_index(p, idx),
			    pred);
			while (next[idx] < npred) {
				from = pw_op_index(p, pred[next[idx]++].op);
				if (!seen[from]) {
					seen[from] = 1;
					stack[depth++] = (uint32_t)from;
					break;
				}
			}
			if (stack[depth - 1] == idx) {
				order[(*n)++] = (uint32_t)idx;
				depth--;
			}
		}
	}
	free(stack);
	free(next);
	free(seen);
	return order;
}

/* The last end of T and the first start, over present ops. */
static void
pw_query_span(const struct pw_timing *t, double *first, double *last)
{
	size_t i;

	*first = INFINITY;
	*last = -INFINITY;
	for (i = 0; i < t->universe; i++)
		if (pw_timing_has(t, i)) {
			*first = fmin(*first, t->start[i]);
			*last = fmax(*last, t->end[i]);
		}
}

double *
pw_slack(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t)
{
	struct pw_pred pred[PW_MAX_PREDS];
	struct pw_where *w = pw_query_where(p, sched);
	uint32_t *order;
	double *late, first, last, tol, bound, dur;
	size_t i, n, idx, from;
	int k, npred;

	late = pw_xmalloc(t->universe * sizeof *late);
	pw_query_span(t, &first, &last);
	for (i = 0; i < t->universe; i++)
		late[i] = pw_timing_has(t, i) ? last - (t->end[i] - t->start[i]) :
		    NAN;
	/* Backwards: an op's latest start is final once every successor's
	 * is, and it bounds each predecessor's. */
	order = pw_query_topo(p, sched, w, &n);
	for (i = n; i-- > 0;) {
		idx = order[i];
		npred = pw_preds(p, sched, w, pw_op_from_index(p, idx), pred);
		for (k = 0; k < npred; k++) {
			from = pw_op_index(p, pred[k].op);
			dur = t->end[from] - t->start[from];
			bound = late[idx] - pred[k].delay -
			    (pred[k].from_start ? 0 : dur);
			if (bound < late[from])
				late[from] = bound;
		}
	}
	tol = 1e-9 * fmax(1, n > 0 ? last - first : 0);
	for (i = 0; i < t->universe; i++) {
		if (!pw_timing_has(t, i))
			continue;
		late[i] -= t->start[i];
		if (late[i] <= tol)
			late[i] = 0;
	}
	free(order);
	pw_where_free(w);
	return late;
}

/* The edge of W's graph by which BIND binds OP. */
static struct pw_pred
pw_query_bound_by(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_where *w, struct pw_op op, const struct pw_bind *bind)
{
	struct pw_pred pred[PW_MAX_PREDS];
	int k, npred;

	npred = pw_preds(p, sched, w, op, pred);
	for (k = 0; k < npred; k++)
		if (pw_op_index(p, pred[k].op) == bind->pred &&
		    pred[k].kind == (enum pw_pred_kind)bind->kind)
			return pred[k];
	assert(!"a binding predecessor is not a predecessor");
	return pred[0];
}

struct pw_critical *
pw_critical_path(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, size_t *n)
{
	struct pw_critical *path;
	struct pw_where *w;
	size_t i, len, idx = SIZE_MAX;

	for (i = 0; i < t->universe; i++)
		if (pw_timing_has(t, i) && (idx == SIZE_MAX ||
		    t->end[i] > t->end[idx]))
			idx = i;
	*n = 0;
	if (idx == SIZE_MAX)
		return pw_xmalloc(sizeof *path);
	len = 1;
	for (i = idx; t->bind[i].pred != PW_NO_BIND; i = t->bind[i].pred)
		len++;
	path = pw_xmalloc(len * sizeof *path);
	w = pw_query_where(p, sched);
	*n = len;
	for (i = idx; len-- > 0; i = t->bind[i].pred) {
		struct pw_critical *c = &path[len];

		c->op = pw_op_from_index(p, i);
		c->start = t->start[i];
		c->end = t->end[i];
		c->bound = t->bind[i].pred != PW_NO_BIND;
		c->by = (struct pw_pred){ .kind = PW_PRED_DEP };
		if (c->bound)
			c->by = pw_query_bound_by(p, sched, w, c->op,
			    &t->bind[i]);
	}
	pw_where_free(w);
	return path;
}
