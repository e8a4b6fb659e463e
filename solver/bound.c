/*
 * bound.c - lower bounds on the objective from the problem alone.
 *
 * Every bound holds for schedules whose backward is split into B and W:
 * a fused BW is never faster (splitting it removes constraints and frees
 * memory earlier), so the bounds hold for every schedule.  Times count
 * from the first op's start, which is an F of stage 0.
 *
 * - Work: a device runs one op at a time, so for any set of its op
 *   classes (F, B, W of its stages) the earliest release in the set, the
 *   set's total work and the least tail after any of them add up
 *   (the pipeline's head and tail).
 * - Critical path: one microbatch's forwards down the pipeline and its
 *   backwards back, then its W of stage 0.
 * - Memory: the activation of (s, j) is resident at least from F's start
 *   to B's end (its round trip) and its hold for W after that, so a
 *   device's memory integral over the iteration is at least m times the
 *   sum over its stages, and at most (limit - static) times the time the
 *   device can hold anything.  An offloaded activation is resident only
 *   for F, the two transfers and B, which costs channel time: the least
 *   time for which enough activations can move (fractional knapsack per
 *   device, channel time shared by a link group) bounds the objective
 *   (the offload-bandwidth bound).
 * - Slots: on a device that holds one stage whose activations stay, at
 *   most n = (limit - static) / act microbatches are resident at once.
 *   Number its F in the order they start, at s_1 <= s_2 <= ...: when the
 *   (i+n)-th starts, at least i of the earlier ones have ended their B,
 *   one of which started its F at s_i or later, so s_(i+n) >= s_i + round
 *   trip.  Where n activations and one hold do not fit, those i must also
 *   have ended their W, or i+1 their B, which adds min(w, f).  With
 *   s_(i+1) >= s_i + f, the last F starts no earlier than the recurrence
 *   says, and its round trip and tail follow.  The memory bound counts
 *   the same residence as an area; this one also counts the order.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "internal.h"

/* Op classes of a stage, in the order of the arrays below. */
enum { PW_BF, PW_BB, PW_BWT, PW_BNCLASS };

/* What every schedule must respect for one stage, measured from the
 * first op's start. */
struct pw_bstage {
	double	r[PW_BNCLASS];	/* earliest start of its F, B, W */
	double	q[PW_BNCLASS];	/* least time from the op's end to the last end */
	double	d[PW_BNCLASS];	/* durations */
	double	rt;		/* least time from F's start to B's end */
};

/* An activation class the memory bound may move: m units of SAVE
 * byte-seconds each for COST seconds of channel time. */
struct pw_bitem {
	double	save;
	double	cost;
};

/* Fills the per-stage facts of P (an array of nstages the caller frees). */
static struct pw_bstage *
pw_bound_stages(const struct pw_problem *p)
{
	struct pw_bstage *bs;
	double *head, *up;
	int s, n = p->nstages;

	bs = pw_xcalloc((size_t)n, sizeof *bs);
	head = pw_xcalloc((size_t)n, sizeof *head);
	up = pw_xcalloc((size_t)n, sizeof *up);
	for (s = 1; s < n; s++)
		head[s] = head[s - 1] + p->stages[s - 1].f +
		    pw_problem_hop(p, s - 1);
	/* From F(s)'s end to B(s)'s start: up the pipeline and back. */
	for (s = n - 2; s >= 0; s--)
		up[s] = 2 * pw_problem_hop(p, s) + p->stages[s + 1].f +
		    up[s + 1] + p->stages[s + 1].b;
	for (s = 0; s < n; s++) {
		const struct pw_stage *st = &p->stages[s];
		struct pw_bstage *b = &bs[s];

		b->d[PW_BF] = st->f;
		b->d[PW_BB] = st->b;
		b->d[PW_BWT] = st->w;
		b->r[PW_BF] = head[s];
		b->r[PW_BB] = head[s] + st->f + up[s];
		b->r[PW_BWT] = b->r[PW_BB] + st->b;
		b->rt = st->f + up[s] + st->b;
		/* After B(s): its own W, and every B below with its W. */
		b->q[PW_BWT] = 0;
		b->q[PW_BB] = st->w;
		if (s > 0)
			b->q[PW_BB] = fmax(st->w, pw_problem_hop(p, s - 1) +
			    p->stages[s - 1].b + bs[s - 1].q[PW_BB]);
		b->q[PW_BF] = up[s] + st->b + b->q[PW_BB];
	}
	free(head);
	free(up);
	return bs;
}

/* The work bound of device D: the best over subsets of its op classes of
 * earliest release + total work + least tail. */
static double
pw_bound_work(const struct pw_problem *p, const struct pw_bstage *bs, int d)
{
	double best = 0, r, q, sum;
	int mask, s, k;
	bool any;

	for (mask = 1; mask < 1 << PW_BNCLASS; mask++) {
		r = q = INFINITY;
		sum = 0;
		any = false;
		for (s = 0; s < p->nstages; s++) {
			if (p->stages[s].device != d)
				continue;
			for (k = 0; k < PW_BNCLASS; k++) {
				if (!(mask & (1 << k)))
					continue;
				any = true;
				r = fmin(r, bs[s].r[k]);
				q = fmin(q, bs[s].q[k]);
				sum += p->microbatches * bs[s].d[k];
			}
		}
		if (any)
			best = fmax(best, r + sum + q);
	}
	return best;
}

/* What device D may hold beyond its static memory: its limit with the
 * tolerance the metrics allow (so that no bound exceeds a schedule they
 * accept); INFINITY for none. */
static double
pw_bound_cap(const struct pw_problem *p, int d)
{
	double limit = p->memory[d].limit;

	return limit + pw_solver_tol(limit) -
	    p->memory[d].static_bytes;
}

/* Byte-seconds device D holds for one microbatch when nothing moves. */
static double
pw_bound_integral(const struct pw_problem *p, const struct pw_bstage *bs,
    int d)
{
	double sum = 0;
	int s;

	for (s = 0; s < p->nstages; s++)
		if (p->stages[s].device == d)
			sum += p->stages[s].act * bs[s].rt +
			    p->stages[s].hold * p->stages[s].w;
	return sum;
}

/* The item of stage S: what moving one activation saves and costs on
 * its channel (duplex links carry the two directions at once, so at
 * least half their sum lies on the busier channel). */
static struct pw_bitem
pw_bound_item(const struct pw_problem *p, const struct pw_bstage *bs, int s)
{
	const struct pw_stage *st = &p->stages[s];
	struct pw_op off = { PW_OFFLOAD, s, 0 }, rel = { PW_RELOAD, s, 0 };
	struct pw_bitem it;
	double t_off = pw_op_duration(p, off), t_rel = pw_op_duration(p, rel);

	it.save = st->offload * fmax(0, bs[s].rt - (st->f + t_off + t_rel +
	    st->b));
	it.cost = (t_off + t_rel) / (p->link.duplex ? 2 : 1);
	return it;
}

static int
pw_bitem_cmp(const void *x, const void *y)
{
	const struct pw_bitem *a = x, *b = y;
	double ra = a->save / a->cost, rb = b->save / b->cost;

	if (ra != rb)
		return ra > rb ? -1 : 1;
	return 0;
}

/* The least channel time that saves NEED byte-seconds with M units of
 * each of the N items (sorted best first), fractions allowed; INFINITY
 * when they cannot. */
static double
pw_bound_knapsack(const struct pw_bitem *it, int n, int m, double need)
{
	double cost = 0, take;
	int i;

	for (i = 0; i < n && need > 0; i++) {
		take = fmin(need, m * it[i].save);
		cost += take / it[i].save * it[i].cost;
		need -= take;
	}
	return need > 0 ? INFINITY : cost;
}

/* The memory and offload-bandwidth bound, shared by both objectives. */
struct pw_bmem {
	const struct pw_problem *p;
	bool	span;		/* per-device spans: no head, own channel */
	int	n;		/* devices */
	double	*cap;		/* [n]: limit - static; INFINITY for none */
	double	*base;		/* [n]: m * byte-seconds with nothing moved */
	double	*head;		/* [n]: earliest start on the device */
	int	*group;		/* [n]: whose channel time adds up */
	double	*t0;		/* [groups]: earliest transfer start */
	int	ngroups;
	struct pw_bitem **item;	/* [n]: movable classes, best first */
	int	*nitem;
	double	*load;		/* [groups], scratch */
};

/* True when no device needs more than its limit allows by time T. */
static bool
pw_bmem_fits(const struct pw_bmem *bm, double t)
{
	double need;
	int d, g;

	for (g = 0; g < bm->ngroups; g++)
		bm->load[g] = 0;
	for (d = 0; d < bm->n; d++) {
		if (isinf(bm->cap[d]))
			continue;
		need = bm->base[d] - bm->cap[d] * (t - bm->head[d]);
		if (need <= 0)
			continue;
		bm->load[bm->group[d]] += pw_bound_knapsack(bm->item[d],
		    bm->nitem[d], bm->p->microbatches, need);
	}
	for (g = 0; g < bm->ngroups; g++)
		if (bm->load[g] > 0 && bm->load[g] > t - bm->t0[g])
			return false;
	return true;
}

static void
pw_bmem_init(struct pw_bmem *bm, const struct pw_problem *p,
    const struct pw_bstage *bs, const bool *offloadable, bool span)
{
	int d, s, g;

	bm->p = p;
	bm->span = span;
	bm->n = p->devices;
	bm->cap = pw_xcalloc((size_t)bm->n, sizeof *bm->cap);
	bm->base = pw_xcalloc((size_t)bm->n, sizeof *bm->base);
	bm->head = pw_xcalloc((size_t)bm->n, sizeof *bm->head);
	bm->group = pw_xcalloc((size_t)bm->n, sizeof *bm->group);
	bm->item = pw_xcalloc((size_t)bm->n, sizeof *bm->item);
	bm->nitem = pw_xcalloc((size_t)bm->n, sizeof *bm->nitem);
	bm->ngroups = span || !p->link.present ? bm->n : p->link.ngroups;
	bm->t0 = pw_xcalloc((size_t)bm->ngroups, sizeof *bm->t0);
	bm->load = pw_xcalloc((size_t)bm->ngroups, sizeof *bm->load);
	for (g = 0; g < bm->ngroups; g++)
		bm->t0[g] = span ? 0 : INFINITY;
	for (d = 0; d < bm->n; d++) {
		bm->cap[d] = pw_bound_cap(p, d);
		bm->base[d] = p->microbatches * pw_bound_integral(p, bs, d);
		bm->head[d] = INFINITY;
		bm->group[d] = bm->ngroups == bm->n ? d : p->link.group[d];
		bm->item[d] = pw_xcalloc((size_t)p->nstages,
		    sizeof *bm->item[d]);
	}
	for (s = 0; s < p->nstages; s++) {
		struct pw_bitem it;

		d = p->stages[s].device;
		bm->head[d] = span ? 0 : fmin(bm->head[d], bs[s].r[PW_BF]);
		if (offloadable == NULL || !offloadable[s])
			continue;
		it = pw_bound_item(p, bs, s);
		if (it.save <= 0 || !(it.cost > 0))
			continue;
		bm->item[d][bm->nitem[d]++] = it;
		g = bm->group[d];
		if (!span)
			bm->t0[g] = fmin(bm->t0[g], bs[s].r[PW_BF] +
			    p->stages[s].f);
	}
	for (d = 0; d < bm->n; d++)
		qsort(bm->item[d], (size_t)bm->nitem[d], sizeof *bm->item[d],
		    pw_bitem_cmp);
}

static void
pw_bmem_free(struct pw_bmem *bm)
{
	int d;

	for (d = 0; d < bm->n; d++)
		free(bm->item[d]);
	free(bm->item);
	free(bm->nitem);
	free(bm->cap);
	free(bm->base);
	free(bm->head);
	free(bm->group);
	free(bm->t0);
	free(bm->load);
}

/*
 * The least T the memory allows, at least LO.  Without movable
 * activations it is each device's head plus its integral over its
 * capacity; with them, bisection keeps the largest T known not to fit,
 * so rounding can only weaken the bound.
 */
static double
pw_bmem_bound(const struct pw_bmem *bm, double lo)
{
	double hi, t;
	int d, i;
	bool movable = false;

	for (d = 0; d < bm->n; d++) {
		if (isinf(bm->cap[d]))
			continue;
		if (bm->nitem[d] > 0)
			movable = true;
		else if (bm->cap[d] > 0)
			lo = fmax(lo, bm->head[d] + bm->base[d] / bm->cap[d]);
	}
	if (!movable || pw_bmem_fits(bm, lo))
		return lo;
	hi = fmax(2 * lo, 1);
	for (i = 0; i < 200 && !pw_bmem_fits(bm, hi); i++)
		hi *= 2;
	if (i == 200)
		return lo;
	for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		t = lo + (hi - lo) / 2;
		if (t <= lo || t >= hi)
			break;
		if (pw_bmem_fits(bm, t))
			hi = t;
		else
			lo = t;
	}
	return lo;
}

/*
 * The slot bound of device D (0 where it does not apply): its one stage's
 * last F start by the recurrence above, then the round trip and the least
 * tail (the span: from the device's first F to that microbatch's W).
 */
static double
pw_bound_slots(const struct pw_problem *p, const struct pw_bstage *bs, int d,
    const bool *offloadable, bool span)
{
	const struct pw_stage *st;
	double cap, slots, *start, step, bound;
	int s = -1, i, n, m = p->microbatches;

	for (i = 0; i < p->nstages; i++)
		if (p->stages[i].device == d) {
			if (s >= 0)
				return 0;
			s = i;
		}
	if (s < 0 || (offloadable != NULL && offloadable[s]))
		return 0;
	st = &p->stages[s];
	cap = pw_bound_cap(p, d);
	if (isinf(cap) || !(st->act > 0))
		return 0;
	slots = floor(cap / st->act);
	if (slots < 1 || slots >= m)
		return 0;
	n = (int)slots;
	step = bs[s].rt;
	if (n * st->act + st->hold > cap)
		step += fmin(st->w, st->f);
	start = pw_xcalloc((size_t)m, sizeof *start);
	start[0] = span ? 0 : bs[s].r[PW_BF];
	for (i = 1; i < m; i++)
		start[i] = fmax(start[i - 1] + st->f, i >= n ?
		    start[i - n] + step : 0);
	bound = start[m - 1] + bs[s].rt + (span ? st->w : bs[s].q[PW_BB]);
	free(start);
	return bound;
}

double
pw_bound_problem(const struct pw_problem *p, enum pw_objective obj,
    const bool *offloadable)
{
	struct pw_bstage *bs = pw_bound_stages(p);
	struct pw_bmem bm;
	double lb = 0, work;
	int s, d;

	for (d = 0; d < p->devices; d++) {
		if (obj == PW_OBJ_MAKESPAN) {
			lb = fmax(lb, pw_bound_work(p, bs, d));
			continue;
		}
		/* A device's span holds all its work, and one microbatch's
		 * round trip from each of its stages with that stage's W. */
		work = 0;
		for (s = 0; s < p->nstages; s++)
			if (p->stages[s].device == d) {
				work += p->microbatches * (p->stages[s].f +
				    p->stages[s].b + p->stages[s].w);
				lb = fmax(lb, bs[s].rt + p->stages[s].w);
			}
		lb = fmax(lb, work);
	}
	for (d = 0; d < p->devices; d++)
		lb = fmax(lb, pw_bound_slots(p, bs, d, offloadable,
		    obj == PW_OBJ_SPAN));
	/* The critical path (also inside the work bound of stage 0's
	 * device for the makespan). */
	lb = fmax(lb, bs[0].rt + p->stages[0].w);
	pw_bmem_init(&bm, p, bs, offloadable, obj == PW_OBJ_SPAN);
	lb = pw_bmem_bound(&bm, lb);
	pw_bmem_free(&bm);
	free(bs);
	return lb;
}

double
pw_lower_bound(const struct pw_problem *p, enum pw_objective obj)
{
	bool *offloadable;
	double lb;

	offloadable = pw_solver_offloadable(p, PW_OFFMODE_AUTO, NULL);
	lb = pw_bound_problem(p, obj, offloadable);
	free(offloadable);
	return lb;
}

void
pw_bound_releases(const struct pw_problem *p, double *rel_f, double *rel_b)
{
	struct pw_bstage *bs = pw_bound_stages(p);
	int s;

	for (s = 0; s < p->nstages; s++) {
		rel_f[s] = bs[s].r[PW_BF];
		rel_b[s] = bs[s].r[PW_BB];
	}
	free(bs);
}

double
pw_bound_need(const struct pw_problem *p, int device, const bool *offloadable)
{
	double below = 0, need = 0;
	int s;

	assert(device >= 0 && device < p->devices);
	/* The microbatch alone: when its F (or the reload before its B)
	 * allocates on stage s, the device holds what its lower stages on
	 * it could not move. */
	for (s = 0; s < p->nstages; s++) {
		const struct pw_stage *st = &p->stages[s];

		if (st->device != device)
			continue;
		need = fmax(need, below + st->act);
		below += st->act - (offloadable != NULL && offloadable[s] ?
		    st->offload : 0);
	}
	return p->memory[device].static_bytes + need;
}
