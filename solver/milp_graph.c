/*
 * milp_graph.c - the model's ops and what holds in every solution.
 *
 * Precedences that need no decision: the dependencies (with
 * communication, as the simulator has them), same-kind ops of a stage in
 * the incumbent's microbatch order (symmetry breaking: with identical
 * microbatches and no offload or pins any schedule can be relabelled so,
 * otherwise it restricts the search), the incumbent's order between fixed
 * ops, and the pins.  Their transitive closure on each resource says which
 * pairs need no ordering binary; longest paths and the work each resource
 * must do before and after an op bound every start.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "milp_int.h"

static int
pw_mm_add_op(struct pw_mm *mm, struct pw_op op, int res, int pos, bool free)
{
	struct pw_mop *mo;
	size_t idx = pw_op_index(mm->p, op);

	assert(mm->op_of[idx] < 0);
	mo = &mm->ops[mm->nops];
	memset(mo, 0, sizeof *mo);
	mo->op = op;
	mo->res = res;
	mo->act = op.stage * mm->p->microbatches + op.mb;
	mo->dur = pw_op_duration(mm->p, op);
	mo->free = free;
	mo->pos = pos;
	mm->op_of[idx] = mm->nops;
	return mm->nops++;
}

static int
pw_mm_find(const struct pw_mm *mm, enum pw_kind kind, int stage, int mb)
{
	struct pw_op op = { kind, stage, mb };

	return mm->op_of[pw_op_index(mm->p, op)];
}

static bool
pw_mm_is_free(const struct pw_mm *mm, int i)
{
	return i >= 0 && mm->ops[i].free;
}

bool
pw_mm_limited(const struct pw_mm *mm, int device)
{
	return isfinite(mm->p->memory[device].limit);
}

bool
pw_mm_used(const struct pw_mm *mm, int i)
{
	const struct pw_mop *mo = &mm->ops[i];

	return mo->zone == PW_ZONE_IN && (!mo->maybe ||
	    mm->acts[mo->act].z == PW_Z_VAR);
}

/*
 * A window's zone: the time span of its free compute ops in the
 * incumbent.  A fixed op that ends by the span's start is PRE, one that
 * starts at or after its end is POST; on each resource those come first
 * and last (one op at a time), so the model keeps them there and holds
 * only the rest.  A free transfer outside the span (a reload long after
 * its offload) is fixed there too: else the zone would reach it.
 */
static void
pw_mm_zone(struct pw_mm *mm)
{
	const struct pw_timing *t = mm->inc;
	double from = INFINITY, to = -INFINITY, tol;
	size_t k;
	int i;

	if (mm->req->free == NULL)
		return;
	for (i = 0; i < mm->nops; i++) {
		k = pw_op_index(mm->p, mm->ops[i].op);
		if (!mm->ops[i].free || !pw_timing_has(t, k) ||
		    pw_kind_is_transfer(mm->ops[i].op.kind))
			continue;
		from = fmin(from, t->start[k]);
		to = fmax(to, t->end[k]);
	}
	if (from > to)
		return;
	tol = pw_solver_tol(to);
	for (i = 0; i < mm->nops; i++) {
		struct pw_mop *mo = &mm->ops[i];

		k = pw_op_index(mm->p, mo->op);
		if (!pw_timing_has(t, k))
			continue;
		if (t->end[k] <= from + tol && t->start[k] < from)
			mo->zone = PW_ZONE_PRE;
		else if (t->start[k] >= to - tol && t->end[k] > to)
			mo->zone = PW_ZONE_POST;
		else
			continue;
		/* Only a transfer can be free out here. */
		mo->free = false;
		mm->zoned = true;
	}
}

/* May the offload of activation A, of stage S, be decided here? */
static bool
pw_mm_may_move(const struct pw_mm *mm, int s, const struct pw_mact *a)
{
	const struct pw_milp_request *req = mm->req;
	const struct pw_problem *p = mm->p;
	bool free = pw_mm_is_free(mm, a->f) || pw_mm_is_free(mm, a->back) ||
	    pw_mm_is_free(mm, a->off) || pw_mm_is_free(mm, a->rel);

	/* A reload must end before its backward: not one after the zone. */
	return req->offload && free && p->link.present &&
	    mm->ops[a->back].zone != PW_ZONE_POST &&
	    p->stages[s].offload > 0 &&
	    (req->may_offload == NULL || req->may_offload[s]) &&
	    (a->off >= 0 || pw_mm_limited(mm, p->stages[s].device));
}

/* Model ops of the incumbent, in each resource's order, then the
 * transfers that offload decisions may add. */
static void
pw_mm_ops(struct pw_mm *mm)
{
	const struct pw_problem *p = mm->p;
	const struct pw_schedule *sched = mm->req->incumbent;
	const bool *free = mm->req->free;
	size_t universe = pw_op_universe(p), k;
	int r, i, s, j, m = p->microbatches;

	mm->op_of = pw_xmalloc(universe * sizeof *mm->op_of);
	for (k = 0; k < universe; k++)
		mm->op_of[k] = -1;
	mm->ops = pw_xcalloc(universe, sizeof *mm->ops);
	mm->nres = sched->ndevices + sched->nchannels;
	for (r = 0; r < mm->nres; r++) {
		const struct pw_seq *seq = pw_schedule_order(sched, r);

		for (i = 0; i < seq->len; i++)
			pw_mm_add_op(mm, seq->ops[i], r, i, free == NULL ||
			    free[pw_op_index(p, seq->ops[i])]);
	}
	pw_mm_zone(mm);
	mm->nacts = p->nstages * m;
	mm->acts = pw_xcalloc((size_t)mm->nacts, sizeof *mm->acts);
	for (s = 0; s < p->nstages; s++) {
		for (j = 0; j < m; j++) {
			struct pw_mact *a = &mm->acts[s * m + j];
			int dev = p->stages[s].device;

			a->f = pw_mm_find(mm, PW_F, s, j);
			a->back = pw_mm_find(mm, PW_BW, s, j);
			a->w = -1;
			if (a->back < 0) {
				a->back = pw_mm_find(mm, PW_B, s, j);
				a->w = pw_mm_find(mm, PW_W, s, j);
			}
			a->off = pw_mm_find(mm, PW_OFFLOAD, s, j);
			a->rel = pw_mm_find(mm, PW_RELOAD, s, j);
			a->z = a->off >= 0 ? PW_Z_YES : PW_Z_NO;
			if (!pw_mm_may_move(mm, s, a))
				continue;
			a->z = PW_Z_VAR;
			if (a->off < 0) {
				struct pw_op off = { PW_OFFLOAD, s, j };
				struct pw_op rel = { PW_RELOAD, s, j };

				a->off = pw_mm_add_op(mm, off, sched->ndevices +
				    pw_problem_channel(p, dev, PW_OFFLOAD), -1,
				    true);
				a->rel = pw_mm_add_op(mm, rel, sched->ndevices +
				    pw_problem_channel(p, dev, PW_RELOAD), -1,
				    true);
			}
			mm->ops[a->off].maybe = mm->ops[a->rel].maybe = true;
			mm->ops[a->off].free = mm->ops[a->rel].free = true;
			mm->ops[a->off].zone = mm->ops[a->rel].zone =
			    PW_ZONE_IN;
		}
	}
	mm->res = pw_xcalloc((size_t)mm->nres, sizeof *mm->res);
	for (i = 0; i < mm->nops; i++)
		mm->res[mm->ops[i].res].n++;
	for (r = 0; r < mm->nres; r++) {
		mm->res[r].ops = pw_xmalloc(((size_t)mm->res[r].n + 1) *
		    sizeof *mm->res[r].ops);
		mm->res[r].n = 0;
	}
	/* Ops were added resource by resource in the incumbent's order, the
	 * new transfers last. */
	for (i = 0; i < mm->nops; i++) {
		struct pw_mres *res = &mm->res[mm->ops[i].res];

		mm->ops[i].local = res->n;
		res->ops[res->n++] = i;
	}
}

/* Seconds per model unit: the largest unit of which every duration and
 * hop is a whole multiple (integral models prune by whole steps), else
 * the incumbent's objective so that times are about 1. */
static void
pw_mm_scale(struct pw_mm *mm)
{
	const struct pw_problem *p = mm->p;
	double *v, vmin = INFINITY, q, r;
	int n = 0, i, s, k;

	v = pw_xmalloc(((size_t)mm->nops + (size_t)p->nstages) * sizeof *v);
	for (i = 0; i < mm->nops; i++)
		if (mm->ops[i].dur > 0)
			v[n++] = mm->ops[i].dur;
	for (s = 0; s + 1 < p->nstages; s++)
		if (pw_problem_hop(p, s) > 0)
			v[n++] = pw_problem_hop(p, s);
	for (i = 0; i < n; i++)
		vmin = fmin(vmin, v[i]);
	mm->grid = false;
	mm->scale = mm->req->incumbent_objective;
	for (k = 1; k <= 16 && n > 0; k++) {
		q = vmin / k;
		for (i = 0; i < n; i++) {
			r = v[i] / q;
			if (fabs(r - round(r)) > pw_solver_tol(r))
				break;
		}
		/* Whole units only while they stay few: past that, steps of
		 * one unit prune nothing. */
		if (i == n && mm->req->incumbent_objective / q <= 1e5) {
			mm->grid = true;
			mm->scale = q;
			break;
		}
	}
	free(v);
	for (i = 0; i < mm->nops; i++)
		mm->ops[i].dur /= mm->scale;
	if (mm->grid)
		for (i = 0; i < mm->nops; i++)
			mm->ops[i].dur = round(mm->ops[i].dur);
}

static void
pw_mm_edge(struct pw_mm *mm, int *cap, int from, int to, bool from_start,
    double delay)
{
	struct pw_medge *e;

	assert(from >= 0 && to >= 0);
	if (mm->nedges == *cap) {
		*cap = *cap == 0 ? 1024 : *cap * 2;
		mm->edges = pw_xreallocarray(mm->edges, (size_t)*cap,
		    sizeof *mm->edges);
	}
	e = &mm->edges[mm->nedges++];
	e->from = from;
	e->to = to;
	e->from_start = from_start;
	e->delay = delay;
}

/* SECONDS in model units, whole ones on a grid. */
static double
pw_mm_delay(const struct pw_mm *mm, double seconds)
{
	double h = seconds / mm->scale;

	return mm->grid ? round(h) : h;
}

int
pw_mm_act_deps(const struct pw_mm *mm, const struct pw_mact *a,
    bool round_trip, struct pw_medge out[PW_MM_ACT_DEPS])
{
	struct pw_pred deps[PW_MAX_DEPS];
	int targets[3], t, i, k, from, n = 0;
	bool transfer;

	targets[0] = round_trip ? a->off : a->f;
	targets[1] = round_trip ? a->rel : a->back;
	targets[2] = round_trip ? a->back : a->w;
	for (t = 0; t < 3; t++) {
		if (targets[t] < 0)
			continue;
		k = pw_op_deps(mm->p, mm->ops[targets[t]].op, NULL, deps);
		for (i = 0; i < k; i++) {
			from = mm->op_of[pw_op_index(mm->p, deps[i].op)];
			transfer = pw_kind_is_transfer(deps[i].op.kind) ||
			    pw_kind_is_transfer(mm->ops[targets[t]].op.kind);
			if (from < 0 || transfer != round_trip)
				continue;
			assert(n < PW_MM_ACT_DEPS);
			out[n].from = from;
			out[n].to = targets[t];
			out[n].from_start = deps[i].from_start;
			out[n].delay = pw_mm_delay(mm, deps[i].delay);
			n++;
		}
	}
	return n;
}

/* The dependencies of pw_op_deps between the model's ops (reload anchors
 * aside: the rebuilt schedule sets its own), each activation's in the
 * order of pw_mm_act_deps; a round trip that is a decision is the
 * formulation's. */
static void
pw_mm_deps(struct pw_mm *mm, int *cap)
{
	struct pw_medge e[2 * PW_MM_ACT_DEPS];
	int u, i, n;

	for (u = 0; u < mm->nacts; u++) {
		const struct pw_mact *a = &mm->acts[u];

		n = pw_mm_act_deps(mm, a, false, e);
		if (a->z == PW_Z_YES)
			n += pw_mm_act_deps(mm, a, true, e + n);
		for (i = 0; i < n; i++)
			pw_mm_edge(mm, cap, e[i].from, e[i].to, e[i].from_start,
			    e[i].delay);
	}
}

/* Same-kind ops of a stage in microbatch order where the incumbent has
 * them so, and the incumbent's order between fixed ops. */
static void
pw_mm_orders(struct pw_mm *mm, int *cap)
{
	static const enum pw_kind kinds[] = { PW_F, PW_B, PW_W, PW_BW };
	const struct pw_problem *p = mm->p;
	int s, j, k, r, i, prev;

	for (s = 0; s < p->nstages; s++) {
		for (k = 0; k < 4; k++) {
			for (j = 0; j + 1 < p->microbatches; j++) {
				int a = pw_mm_find(mm, kinds[k], s, j);
				int b = pw_mm_find(mm, kinds[k], s, j + 1);

				if (a < 0 || b < 0 ||
				    mm->ops[a].pos > mm->ops[b].pos ||
				    (!mm->ops[a].free && !mm->ops[b].free))
					continue;
				pw_mm_edge(mm, cap, a, b, false, 0);
			}
		}
	}
	for (r = 0; r < mm->nres; r++) {
		int pre = -1, post = -1;

		prev = -1;
		for (i = 0; i < mm->res[r].n; i++) {
			int o = mm->res[r].ops[i];

			if (mm->ops[o].free)
				continue;
			if (prev >= 0)
				pw_mm_edge(mm, cap, prev, o, false, 0);
			prev = o;
			if (mm->ops[o].zone == PW_ZONE_PRE)
				pre = o;
			if (mm->ops[o].zone == PW_ZONE_POST && post < 0)
				post = o;
		}
		/* The zone's free ops stay between the ops before and after
		 * it. */
		for (i = 0; i < mm->res[r].n && (pre >= 0 || post >= 0); i++) {
			int o = mm->res[r].ops[i];

			if (!mm->ops[o].free)
				continue;
			if (pre >= 0)
				pw_mm_edge(mm, cap, pre, o, false, 0);
			if (post >= 0)
				pw_mm_edge(mm, cap, o, post, false, 0);
		}
	}
}

/* Whether stage S's ops of KIND all exist and the incumbent runs them in
 * microbatch order (then the model keeps that order). */
static bool
pw_mm_in_order(const struct pw_mm *mm, int s, enum pw_kind kind)
{
	int j, a, b;

	for (j = 0; j + 1 < mm->p->microbatches; j++) {
		a = pw_mm_find(mm, kind, s, j);
		b = pw_mm_find(mm, kind, s, j + 1);
		if (a < 0 || b < 0 || mm->ops[a].pos > mm->ops[b].pos)
			return false;
	}
	return pw_mm_find(mm, kind, s, 0) >= 0;
}

/* How many ops, each freeing UNIT bytes, must have ended before a level
 * of NEED bytes fits in AVAIL. */
static int
pw_mm_frees_needed(double need, double avail, double unit)
{
	if (unit <= 0 || need <= avail)
		return 0;
	return (int)ceil((need - avail) / unit - PW_SOLVER_EPS);
}

/*
 * Precedences that memory forces on a stage that never offloads and
 * whose F, B and W (or BW) keep microbatch order: when F(s, j) starts, the
 * j + 1 activations of the stage so far hold (j + 1) act less what the
 * backwards and Ws that ended freed, and the other stages of the device
 * hold nothing negative, so enough of the first backwards (and Ws) must
 * have ended.  The memory rows imply them; as edges they tighten every
 * bound and spare binaries.
 */
static void
pw_mm_memory_edges(struct pw_mm *mm, int *cap)
{
	const struct pw_problem *p = mm->p;
	int s, j, u, nb, nw, m = p->microbatches;

	for (s = 0; s < p->nstages; s++) {
		const struct pw_stage *st = &p->stages[s];
		int dev = st->device;
		double avail = p->memory[dev].limit -
		    p->memory[dev].static_bytes;
		bool fused = pw_mm_in_order(mm, s, PW_BW);

		if (!pw_mm_limited(mm, dev) || st->act <= 0 ||
		    !pw_mm_in_order(mm, s, PW_F) || (!fused &&
		    (!pw_mm_in_order(mm, s, PW_B) ||
		    !pw_mm_in_order(mm, s, PW_W))))
			continue;
		for (u = s * m; u < (s + 1) * m; u++)
			if (mm->acts[u].z != PW_Z_NO)
				break;
		if (u < (s + 1) * m)
			continue;
		for (j = 1; j < m; j++) {
			const struct pw_mact *a = &mm->acts[s * m + j];
			double need = (j + 1) * st->act;

			/* Each backward frees at most act (with its W). */
			nb = pw_mm_frees_needed(need, avail, st->act);
			if (nb > 0 && nb <= j)
				pw_mm_edge(mm, cap,
				    mm->acts[s * m + nb - 1].back, a->f, false,
				    0);
			if (fused)
				continue;
			/* With all j backwards done, the Ws free the rest. */
			nw = pw_mm_frees_needed(need - j * (st->act - st->hold),
			    avail, st->hold);
			if (nw > 0 && nw <= j)
				pw_mm_edge(mm, cap, mm->acts[s * m + nw - 1].w,
				    a->f, false, 0);
		}
	}
}

/* The model op of pinned OP as the incumbent holds it (pw_pin_other), or
 * -1. */
static int
pw_mm_find_pinned(const struct pw_mm *mm, struct pw_op op)
{
	int i = pw_mm_find(mm, op.kind, op.stage, op.mb);

	if (i < 0)
		op = pw_pin_other(op);
	return i >= 0 ? i : pw_mm_find(mm, op.kind, op.stage, op.mb);
}

static int
pw_mm_pins(struct pw_mm *mm, int *cap, struct pw_error *err)
{
	const struct pw_milp_request *req = mm->req;
	const struct pw_problem *p = mm->p;
	char a[64], b[64];
	size_t k;
	int i, o;

	for (k = 0; k < req->npins; k++) {
		struct pw_op before = req->pins[k].before;
		struct pw_op after = req->pins[k].after;

		if (!pw_op_in(p, before) || !pw_op_in(p, after)) {
			pw_error_set(err, "milp: pin %zu names an op outside "
			    "the problem", k);
			return PW_ERR_INPUT;
		}
		i = pw_mm_find_pinned(mm, before);
		o = pw_mm_find_pinned(mm, after);
		if (i < 0 || o < 0 || pw_kind_is_transfer(before.kind) ||
		    pw_kind_is_transfer(after.kind)) {
			pw_error_set(err, "milp: pin %zu (%s before %s) needs "
			    "two compute ops of the incumbent", k,
			    pw_op_name(a, sizeof a, before),
			    pw_op_name(b, sizeof b, after));
			return PW_ERR_INPUT;
		}
		/* A B or W pinned against its own fused backward holds;
		 * on one device, starting first means ending first. */
		if (i == o)
			continue;
		if (mm->ops[i].res == mm->ops[o].res)
			pw_mm_edge(mm, cap, i, o, false, 0);
		else
			pw_mm_edge(mm, cap, i, o, true, 0);
	}
	return PW_OK;
}

/* Kahn's order of the edges into TOPO; false on a cycle. */
static bool
pw_mm_topo(const struct pw_mm *mm, const size_t *first, const int *succ,
    int *topo)
{
	int *indeg = pw_xcalloc((size_t)mm->nops, sizeof *indeg);
	int i, n = 0, head = 0;
	size_t e;

	for (e = 0; e < (size_t)mm->nedges; e++)
		indeg[mm->edges[e].to]++;
	for (i = 0; i < mm->nops; i++)
		if (indeg[i] == 0)
			topo[n++] = i;
	while (head < n) {
		i = topo[head++];
		for (e = first[i]; e < first[i + 1]; e++)
			if (--indeg[mm->edges[succ[e]].to] == 0)
				topo[n++] = mm->edges[succ[e]].to;
	}
	free(indeg);
	return n == mm->nops;
}

/* Which ops of each resource must precede which: one pass in reverse
 * topological order per resource, bit sets as wide as the resource. */
static void
pw_mm_closure(struct pw_mm *mm, const size_t *first, const int *succ,
    const int *topo)
{
	uint64_t *bits;
	int r, t, w, i;
	size_t e;

	for (r = 0; r < mm->nres; r++) {
		struct pw_mres *res = &mm->res[r];

		res->words = (res->n + 63) / 64;
		bits = pw_xcalloc((size_t)mm->nops * (size_t)res->words,
		    sizeof *bits);
		for (t = mm->nops - 1; t >= 0; t--) {
			uint64_t *row = bits + (size_t)topo[t] * res->words;

			i = topo[t];
			for (e = first[i]; e < first[i + 1]; e++) {
				const struct pw_medge *edge =
				    &mm->edges[succ[e]];
				const uint64_t *to = bits +
				    (size_t)edge->to * res->words;
				int l = mm->ops[edge->to].local;

				if (edge->from_start)
					continue;
				for (w = 0; w < res->words; w++)
					row[w] |= to[w];
				if (mm->ops[edge->to].res == r)
					row[l / 64] |= (uint64_t)1 << (l % 64);
			}
		}
		res->desc = pw_xmalloc(((size_t)res->n * res->words + 1) *
		    sizeof *res->desc);
		for (i = 0; i < res->n; i++)
			memcpy(res->desc + (size_t)i * res->words,
			    bits + (size_t)res->ops[i] * res->words,
			    (size_t)res->words * sizeof *bits);
		free(bits);
	}
}

bool
pw_mm_reach(const struct pw_mm *mm, int i, int k)
{
	const struct pw_mres *res = &mm->res[mm->ops[i].res];
	int li = mm->ops[i].local, lk = mm->ops[k].local;

	assert(mm->ops[i].res == mm->ops[k].res);
	return (res->desc[(size_t)li * res->words + lk / 64] >> (lk % 64)) & 1;
}

/* Work each op's resource must do before and after it. */
static void
pw_mm_work(struct pw_mm *mm)
{
	int r, i, k;

	for (r = 0; r < mm->nres; r++) {
		const struct pw_mres *res = &mm->res[r];

		for (i = 0; i < res->n; i++) {
			struct pw_mop *mi = &mm->ops[res->ops[i]];

			mi->desc += mi->dur;
			for (k = 0; k < res->n; k++) {
				struct pw_mop *mk = &mm->ops[res->ops[k]];

				if (!pw_mm_reach(mm, res->ops[i], res->ops[k]))
					continue;
				mi->desc += mk->dur;
				mk->anc += mi->dur;
			}
		}
	}
}

double
pw_mm_len(const struct pw_mm *mm, const struct pw_medge *e)
{
	return (e->from_start ? 0 : mm->ops[e->from].dur) + e->delay;
}

/* Bounds on every start: longest paths, the work a resource must do
 * before an op after its earliest start, and after it before the
 * horizon; then the paths again from those. */
static void
pw_mm_bounds(struct pw_mm *mm, const size_t *first, const int *succ,
    const int *topo)
{
	double *tail = pw_xcalloc((size_t)mm->nops, sizeof *tail);
	double *minhead = pw_xmalloc((size_t)mm->nres * sizeof *minhead);
	double *mintail = pw_xmalloc((size_t)mm->nres * sizeof *mintail);
	int t, i, r, pass;
	size_t e;

	for (i = 0; i < mm->nops; i++)
		mm->ops[i].lb = mm->ops[i].zone != PW_ZONE_PRE ? 0 :
		    mm->inc->start[pw_op_index(mm->p, mm->ops[i].op)] /
		    mm->scale;
	for (pass = 0; pass < 2; pass++) {
		for (t = 0; t < mm->nops; t++) {
			i = topo[t];
			for (e = first[i]; e < first[i + 1]; e++) {
				const struct pw_medge *edge =
				    &mm->edges[succ[e]];
				struct pw_mop *to = &mm->ops[edge->to];

				to->lb = fmax(to->lb, mm->ops[i].lb +
				    pw_mm_len(mm, edge));
			}
		}
		if (pass == 1)
			break;
		for (t = mm->nops - 1; t >= 0; t--) {
			i = topo[t];
			for (e = first[i]; e < first[i + 1]; e++) {
				const struct pw_medge *edge =
				    &mm->edges[succ[e]];

				tail[i] = fmax(tail[i], pw_mm_len(mm, edge) -
				    mm->ops[i].dur + mm->ops[edge->to].dur +
				    tail[edge->to]);
			}
		}
		for (r = 0; r < mm->nres; r++)
			minhead[r] = mintail[r] = INFINITY;
		for (i = 0; i < mm->nops; i++) {
			if (mm->ops[i].maybe)
				continue;
			r = mm->ops[i].res;
			minhead[r] = fmin(minhead[r], mm->ops[i].lb);
			mintail[r] = fmin(mintail[r], tail[i]);
		}
		for (i = 0; i < mm->nops; i++) {
			struct pw_mop *mo = &mm->ops[i];

			if (mo->maybe)
				continue;
			mo->lb = fmax(mo->lb, minhead[mo->res] + mo->anc);
			mo->rest = fmax(mo->dur + tail[i],
			    mo->desc + mintail[mo->res]);
			mo->ub = mm->horizon - mo->rest;
		}
	}
	for (t = mm->nops - 1; t >= 0; t--) {
		i = topo[t];
		for (e = first[i]; e < first[i + 1]; e++) {
			const struct pw_medge *edge = &mm->edges[succ[e]];

			mm->ops[i].ub = fmin(mm->ops[i].ub,
			    mm->ops[edge->to].ub - pw_mm_len(mm, edge));
		}
	}
	for (i = 0; i < mm->nops; i++)
		if (mm->ops[i].zone == PW_ZONE_PRE)
			mm->ops[i].ub = mm->ops[i].lb;
	free(tail);
	free(minhead);
	free(mintail);
}

/* Where an activation's possible transfers may go; an activation whose
 * round trip cannot fit between its F and its backward stays put. */
static void
pw_mm_transfer_bounds(struct pw_mm *mm)
{
	int u;

	for (u = 0; u < mm->nacts; u++) {
		struct pw_mact *a = &mm->acts[u];
		struct pw_mop *off, *rel;

		if (a->z != PW_Z_VAR)
			continue;
		off = &mm->ops[a->off];
		rel = &mm->ops[a->rel];
		off->lb = mm->ops[a->f].lb + mm->ops[a->f].dur;
		rel->lb = off->lb + off->dur;
		rel->ub = mm->ops[a->back].ub - rel->dur;
		off->ub = rel->ub - off->dur;
		off->rest = mm->horizon - off->ub;
		rel->rest = mm->horizon - rel->ub;
		if (off->lb > off->ub + pw_solver_tol(mm->horizon))
			a->z = PW_Z_NO;
	}
}

/* Whole units where the model counts in them. */
static void
pw_mm_snap(struct pw_mm *mm)
{
	int i;

	if (!mm->grid)
		return;
	for (i = 0; i < mm->nops; i++) {
		struct pw_mop *mo = &mm->ops[i];

		mo->lb = ceil(mo->lb - pw_solver_tol(mo->lb));
		mo->ub = floor(mo->ub + pw_solver_tol(mo->ub));
	}
}

/* Raises the objective's least value to what the bounds already prove:
 * every op starts no earlier than its bound and then needs its rest. */
static void
pw_mm_floor(struct pw_mm *mm)
{
	double lo = mm->obj_lo;
	int i;

	if (mm->req->objective != PW_OBJ_MAKESPAN)
		return;
	for (i = 0; i < mm->nops; i++)
		if (!mm->ops[i].maybe)
			lo = fmax(lo, mm->ops[i].lb + mm->ops[i].rest);
	mm->obj_lo = mm->grid ? ceil(lo - pw_solver_tol(lo)) : lo;
}

/* The objective's range and the horizon every op ends by. */
static void
pw_mm_range(struct pw_mm *mm, double at_least, double better_than)
{
	const struct pw_milp_request *req = mm->req;
	const struct pw_problem *p = mm->p;
	double hi = better_than / mm->scale;
	double lo = fmax(0, at_least / mm->scale), sum = 0;
	double makespan = 0;
	size_t k;
	int i, s;

	if (mm->grid) {
		/* Only a strictly better schedule is of use (with ties, one of
		 * the same objective too). */
		hi = req->ties ? floor(hi + pw_solver_tol(hi)) :
		    ceil(hi - pw_solver_tol(hi)) - 1;
		lo = ceil(lo - pw_solver_tol(lo));
	}
	mm->obj_lo = lo;
	mm->obj_hi = hi;
	if (req->objective == PW_OBJ_MAKESPAN) {
		mm->horizon = hi;
		return;
	}
	/* Span: no schedule needs longer than all its work in a row; a
	 * window stays near the incumbent's length. */
	for (k = 0; k < mm->inc->universe; k++)
		if (pw_timing_has(mm->inc, k))
			makespan = fmax(makespan, mm->inc->end[k]);
	makespan /= mm->scale;
	if (req->free != NULL) {
		mm->horizon = makespan + req->incumbent_objective / mm->scale;
	} else {
		for (i = 0; i < mm->nops; i++)
			sum += mm->ops[i].dur;
		for (s = 0; s + 1 < p->nstages; s++)
			sum += 2 * p->microbatches *
			    pw_mm_delay(mm, pw_problem_hop(p, s));
		mm->horizon = fmax(sum, makespan);
	}
	if (mm->grid)
		mm->horizon = ceil(mm->horizon - PW_SOLVER_EPS * mm->horizon);
}

void
pw_mm_succ(const struct pw_mm *mm, size_t **firstp, int **succp)
{
	size_t *first = pw_xcalloc((size_t)mm->nops + 1, sizeof *first);
	int *succ = pw_xmalloc(((size_t)mm->nedges + 1) * sizeof *succ);
	size_t e;
	int i;

	for (e = 0; e < (size_t)mm->nedges; e++)
		first[mm->edges[e].from + 1]++;
	for (i = 0; i < mm->nops; i++)
		first[i + 1] += first[i];
	for (e = 0; e < (size_t)mm->nedges; e++)
		succ[first[mm->edges[e].from]++] = (int)e;
	for (i = mm->nops; i > 0; i--)
		first[i] = first[i - 1];
	first[0] = 0;
	*firstp = first;
	*succp = succ;
}

int
pw_mm_build(struct pw_mm *mm, const struct pw_milp_request *req,
    const struct pw_timing *inc, double at_least, double better_than,
    struct pw_error *err)
{
	size_t *first = NULL;
	int *succ = NULL, *topo = NULL, cap = 0, i, rc = PW_OK;

	memset(mm, 0, sizeof *mm);
	mm->req = req;
	mm->p = req->problem;
	mm->inc = inc;
	pw_mm_ops(mm);
	pw_mm_scale(mm);
	pw_mm_deps(mm, &cap);
	pw_mm_orders(mm, &cap);
	pw_mm_memory_edges(mm, &cap);
	if ((rc = pw_mm_pins(mm, &cap, err)) != PW_OK)
		return rc;
	pw_mm_succ(mm, &first, &succ);
	topo = pw_xmalloc(((size_t)mm->nops + 1) * sizeof *topo);
	if (!pw_mm_topo(mm, first, succ, topo)) {
		pw_error_set(err, "milp: the pins contradict the dependencies "
		    "or each other (they form a cycle)");
		rc = PW_ERR_INPUT;
		goto out;
	}
	for (i = 0; i < mm->nops; i++)
		mm->ops[topo[i]].rank = i;
	pw_mm_closure(mm, first, succ, topo);
	pw_mm_work(mm);
	pw_mm_range(mm, at_least, better_than);
	pw_mm_bounds(mm, first, succ, topo);
	pw_mm_transfer_bounds(mm);
	pw_mm_snap(mm);
	pw_mm_floor(mm);
out:
	free(first);
	free(succ);
	free(topo);
	return rc;
}

void
pw_mm_free(struct pw_mm *mm)
{
	int r;

	for (r = 0; r < mm->nres; r++) {
		free(mm->res[r].ops);
		free(mm->res[r].desc);
	}
	free(mm->res);
	free(mm->ops);
	free(mm->op_of);
	free(mm->acts);
	free(mm->edges);
	memset(mm, 0, sizeof *mm);
}
