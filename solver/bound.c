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
 * - Warmup: a device's work, the idle before its first B that the
 *   forwards its memory admits cannot fill, and the idle after its last
 *   F that the backward work its memory then holds cannot fill.
 * - Head-body-tail: the one-machine bound over releases that are order
 *   statistics of the whole pipeline (the j-th F or B of a stage, not
 *   one microbatch's), which carry the slots of every stage.
 * - Device: a device with one stage as a single machine with its memory,
 *   solved exactly by a dynamic program where affordable.
 * - Crossing: the same, where each microbatch's round trip also pays for
 *   the microbatches in flight it crosses on later stages
 *   (bound_cross.c).
 * docs/solver.md gives each argument in full.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The fractional knapsack over M units of each of the N items (sorted
 * best first): takes the best until their save reaches NEED or their
 * cost BUDGET.  Returns the save taken, its cost in *COST and what of
 * NEED is left in *LEFT (counted down, so that a need met is 0). */
static double
pw_bound_greedy(const struct pw_bitem *it, int n, int m, double need,
    double budget, double *cost, double *left)
{
	double save = 0, take;
	int i;

	*cost = 0;
	*left = need;
	for (i = 0; i < n && *left > 0 && *cost < budget; i++) {
		take = fmin(*left, m * it[i].save);
		if (it[i].cost > 0)
			take = fmin(take, (budget - *cost) / it[i].cost *
			    it[i].save);
		*cost += take / it[i].save * it[i].cost;
		*left -= take;
		save += take;
	}
	return save;
}

/* The least channel time that saves NEED byte-seconds with the items;
 * INFINITY when they cannot. */
static double
pw_bound_knapsack(const struct pw_bitem *it, int n, int m, double need)
{
	double cost, left;

	pw_bound_greedy(it, n, m, need, INFINITY, &cost, &left);
	return left > 0 ? INFINITY : cost;
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

int
pw_bound_bisect(double *lo, double *hi, double rel, int iters,
    int (*reaches)(void *, double), void *arg)
{
	double mid;
	int i, r = 1;

	for (i = 0; r == 1 && i < iters && *hi - *lo > rel * *hi; i++) {
		mid = *lo + (*hi - *lo) / 2;
		if (mid <= *lo || mid >= *hi)
			break;
		if ((r = reaches(arg, mid)) == 0) {
			*lo = mid;
			r = 1;
		} else if (r == 1)
			*hi = mid;
	}
	return r;
}

/* pw_bmem_fits for pw_bound_bisect. */
static int
pw_bmem_reaches(void *bm, double t)
{
	return pw_bmem_fits(bm, t);
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
	double hi;
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
	pw_bound_bisect(&lo, &hi, 1e-12, 200, pw_bmem_reaches, (void *)bm);
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

/* The least times from the end of each op class of device D's stages to
 * the objective's end, into Q ([nstages][PW_BNCLASS], rows of D's
 * stages): the makespan's tails, or for the span those within the
 * device (a B's own W, or the backwards down to a lower stage of D and
 * its W). */
static void
pw_bound_tails(const struct pw_problem *p, const struct pw_bstage *bs, int d,
    bool span, double *q)
{
	double chain, best;
	int s, t;

	for (s = 0; s < p->nstages; s++) {
		if (p->stages[s].device != d)
			continue;
		if (!span) {
			for (t = 0; t < PW_BNCLASS; t++)
				q[s * PW_BNCLASS + t] = bs[s].q[t];
			continue;
		}
		best = p->stages[s].w;
		chain = 0;
		for (t = s - 1; t >= 0; t--) {
			chain += pw_problem_hop(p, t) + p->stages[t].b;
			if (p->stages[t].device == d)
				best = fmax(best, chain + p->stages[t].w);
		}
		q[s * PW_BNCLASS + PW_BWT] = 0;
		q[s * PW_BNCLASS + PW_BB] = best;
		q[s * PW_BNCLASS + PW_BF] = bs[s].rt - p->stages[s].f + best;
	}
}

/* The first stage of device D, which runs one. */
static int
pw_bound_first(const struct pw_problem *p, int d)
{
	int s;

	for (s = 0; s < p->nstages; s++)
		if (p->stages[s].device == d)
			break;
	assert(s < p->nstages);
	return s;
}

/* How many of stage S's activations can be resident at once (m where
 * memory does not limit them: offloadable, no limit, no bytes). */
static int
pw_bound_slot_count(const struct pw_problem *p, int s, const bool *offloadable)
{
	const struct pw_stage *st = &p->stages[s];
	double cap = pw_bound_cap(p, st->device), n;

	if ((offloadable != NULL && offloadable[s]) || isinf(cap) ||
	    !(st->act > 0))
		return p->microbatches;
	n = floor(cap / st->act);
	return n < 1 ? 1 : n >= p->microbatches ? p->microbatches : (int)n;
}

/* The single-device relaxation of a device with one stage: its ops in
 * some order, each at or after its release (the order statistics) and
 * its predecessor, within memory, each ending at least its tail before
 * the end. */
struct pw_bdev {
	const struct pw_stage *st;
	int	m, na, nh;	/* microbatches; in-flight and held counts */
	double	cap;
	const double *rf, *rb;	/* [m] order statistics */
	double	qf, qb;		/* tails of F and B (W: 0) */
	double	*t;		/* [(m + 1) * (na + 1) * (nh + 1)] */
	size_t	n;
};

/* The DP's states all devices together may cost, each once per
 * bisection step, so that a bound stays cheap enough to take for every
 * planner candidate. */
#define PW_BOUND_DP_STATES	((size_t)1 << 17)

/* The crossing bound's steps (states built) over all devices: of its
 * first pass, and of its second, which carries the delays (each its own,
 * so that one device's second pass cannot leave the next device's first
 * without). */
#define PW_BOUND_CROSS_STEPS	500000L
#define PW_BOUND_CROSS_CARRY_STEPS	100000L

/* Returns the relaxation of stage S the caller frees with pw_bdev_free
 * (Q its tails, RF and RB its rows of the order statistics), or NULL
 * where it does not apply (its device runs another stage, it may
 * offload, or it needs more states than *BUDGET, which it lowers). */
static struct pw_bdev *
pw_bdev_new(const struct pw_problem *p, int s, const bool *offloadable,
    const double *rf, const double *rb, const double *q, size_t *budget)
{
	const struct pw_stage *st = &p->stages[s];
	struct pw_bdev *dv;
	double cap = pw_bound_cap(p, st->device);
	int m = p->microbatches, nh;
	size_t n;

	if (pw_problem_chunks(p, st->device) != 1 ||
	    (offloadable != NULL && offloadable[s]))
		return NULL;
	nh = st->hold > 0 && !isinf(cap) && cap / st->hold < m ?
	    (int)(cap / st->hold) : m;
	n = (size_t)(m + 1) * (size_t)(pw_bound_slot_count(p, s,
	    offloadable) + 1) * (size_t)(nh + 1);
	if (n > *budget)
		return NULL;
	*budget -= n;
	dv = pw_xcalloc(1, sizeof *dv);
	dv->st = st;
	dv->m = m;
	dv->na = pw_bound_slot_count(p, s, offloadable);
	dv->nh = nh;
	dv->cap = cap;
	dv->rf = rf + s * m;
	dv->rb = rb + s * m;
	dv->qf = q[s * PW_BNCLASS + PW_BF];
	dv->qb = q[s * PW_BNCLASS + PW_BB];
	dv->n = n;
	dv->t = pw_xcalloc(n, sizeof *dv->t);
	return dv;
}

static void
pw_bdev_free(struct pw_bdev *dv)
{
	if (dv != NULL)
		free(dv->t);
	free(dv);
}

static size_t
pw_bdev_index(const struct pw_bdev *dv, int nf, int a, int h)
{
	return ((size_t)nf * (size_t)(dv->na + 1) + (size_t)a) *
	    (size_t)(dv->nh + 1) + (size_t)h;
}

/* Relaxes state (NF, A, H) to time T when that meets every deadline by
 * END and improves it. */
static void
pw_bdev_reach(struct pw_bdev *dv, int nf, int a, int h, double t, double q,
    double end)
{
	size_t i = pw_bdev_index(dv, nf, a, h);

	if (t + q <= end + pw_solver_objective_tol(end) && t < dv->t[i])
		dv->t[i] = t;
}

static void
pw_bdev_reset(struct pw_bdev *dv)
{
	size_t i;

	for (i = 0; i < dv->n; i++)
		dv->t[i] = INFINITY;
	dv->t[0] = 0;
}

/*
 * The states with NF forwards done (A of them in flight, H held for
 * their W), in an order that puts each after those it comes from within
 * them (more B, then more W), relaxing the states they lead to, with
 * deadlines by END.  A state's least time dominates: an op can only
 * start later after a later predecessor.  Returns the earliest the
 * next F can start from them (INFINITY: none can).
 */
static double
pw_bdev_block(struct pw_bdev *dv, int nf, double end)
{
	const struct pw_stage *st = dv->st;
	double t, mem, next = INFINITY;
	int a, h, nb;

	for (a = dv->na < nf ? dv->na : nf; a >= 0; a--)
		for (h = dv->nh < nf - a ? dv->nh : nf - a; h >= 0; h--) {
			t = dv->t[pw_bdev_index(dv, nf, a, h)];
			if (isinf(t))
				continue;
			nb = nf - a;
			mem = a * st->act + h * st->hold;
			if (nf < dv->m && a < dv->na &&
			    mem + st->act <= dv->cap) {
				next = fmin(next, fmax(t, dv->rf[nf]));
				pw_bdev_reach(dv, nf + 1, a + 1, h,
				    fmax(t, dv->rf[nf]) + st->f, dv->qf, end);
			}
			if (a > 0 && h < dv->nh)
				pw_bdev_reach(dv, nf, a - 1, h + 1,
				    fmax(t, dv->rb[nb]) + st->b, dv->qb, end);
			if (h > 0)
				pw_bdev_reach(dv, nf, a, h - 1, t + st->w, 0,
				    end);
		}
	return next;
}

/* The least end of the relaxation with deadlines by END (INFINITY: none
 * met). */
static double
pw_bdev_end(struct pw_bdev *dv, double end)
{
	int nf;

	pw_bdev_reset(dv);
	for (nf = 0; nf <= dv->m; nf++)
		pw_bdev_block(dv, nf, end);
	return dv->t[pw_bdev_index(dv, dv->m, 0, 0)];
}

/* Whether relaxation DV meets END, for pw_bound_bisect. */
static int
pw_bdev_reaches(void *dv, double end)
{
	return !isinf(pw_bdev_end(dv, end));
}

/*
 * The device bound of relaxation DV: its least end, found by bisection
 * from LO (a bound already proven, the head-body-tail's), keeping the
 * largest end known not to be reachable.
 */
static double
pw_bdev_bound(struct pw_bdev *dv, double lo)
{
	double hi;

	hi = pw_bdev_end(dv, INFINITY) + fmax(dv->qf, dv->qb);
	if (!isinf(pw_bdev_end(dv, lo)))
		return lo;
	pw_bound_bisect(&lo, &hi, 1e-12, 100, pw_bdev_reaches, dv);
	return lo;
}

/*
 * Order statistics of the pipeline from stage S0 on (times from the
 * first F of S0): RF[s * m + j] is at most the (j+1)-th earliest start of
 * an F of stage s, RB likewise for its B.  Each stage's ops run one after
 * another on its device, every microbatch's F of s follows its F of s-1
 * and the hop (so the j-th F of s follows the j-th end of s-1), its B of
 * s the B of s+1 (on the last stage, its F), and the device runs j + 1 F
 * and j B of s, none before the first F's release, before the j-th B
 * starts (each of the first j + 1 B follows its own F); and where n
 * activations of s
 * fill the device, the (j+n)-th F of s waits for the j-th B of s to end
 * (and, when n and a hold do not fit, for the (j+1)-th B or the j-th W).
 * Where DV[s] is not NULL, the single-device relaxation of s, run along,
 * raises each F to the earliest its device's own order lets it start
 * (its states with j forwards done need only the B before the j-th).
 */
static void
pw_bound_order(const struct pw_problem *p, const bool *offloadable, int s0,
    struct pw_bdev *const *dv, double *rf, double *rb)
{
	const struct pw_stage *st;
	double t, tight;
	int s, j, k, n, m = p->microbatches, last = p->nstages - 1;

	for (s = s0; s <= last; s++)
		if (dv[s] != NULL)
			pw_bdev_reset(dv[s]);
	for (j = 0; j < m; j++) {
		for (s = s0; s <= last; s++) {
			st = &p->stages[s];
			t = s == s0 ? 0 : rf[(s - 1) * m + j] +
			    p->stages[s - 1].f + pw_problem_hop(p, s - 1);
			if (j > 0)
				t = fmax(t, rf[s * m + j - 1] + st->f);
			n = pw_bound_slot_count(p, s, offloadable);
			if ((k = j - n) >= 0) {
				tight = n * st->act + st->hold >
				    pw_bound_cap(p, st->device);
				t = fmax(t, rb[s * m + k] + st->b + (!tight ? 0 :
				    n >= 2 ? fmin(rb[s * m + k + 1] -
				    rb[s * m + k], st->w) : fmin(st->b, st->w)));
			}
			rf[s * m + j] = t;
			if (dv[s] != NULL && !isinf(t = pw_bdev_block(dv[s], j,
			    INFINITY)))
				rf[s * m + j] = t;
		}
		for (s = last; s >= s0; s--) {
			st = &p->stages[s];
			t = s == last ? rf[s * m + j] + st->f :
			    rb[(s + 1) * m + j] + p->stages[s + 1].b +
			    pw_problem_hop(p, s);
			if (j > 0)
				t = fmax(t, rb[s * m + j - 1] + st->b);
			/* Its device runs j + 1 F and j B of s before it,
			 * none before the first F's release. */
			rb[s * m + j] = fmax(t, rf[s * m] + (j + 1) * st->f +
			    j * st->b);
		}
	}
}

/* One op class of a device for the head-body-tail bound: its releases
 * (R[j] + ADD, ascending), duration and tail. */
struct pw_bclass {
	const double *r;
	double	add, d, q;
};

/* The classes of device D from the order statistics and tails Q into C
 * (room for nstages * PW_BNCLASS); returns how many. */
static int
pw_bound_classes(const struct pw_problem *p, int d, const double *rf,
    const double *rb, const double *q, struct pw_bclass *c)
{
	int s, n = 0, m = p->microbatches;

	for (s = 0; s < p->nstages; s++) {
		const struct pw_stage *st = &p->stages[s];

		if (st->device != d)
			continue;
		c[n++] = (struct pw_bclass){ rf + s * m, 0, st->f,
		    q[s * PW_BNCLASS + PW_BF] };
		c[n++] = (struct pw_bclass){ rb + s * m, 0, st->b,
		    q[s * PW_BNCLASS + PW_BB] };
		c[n++] = (struct pw_bclass){ rb + s * m, st->b, st->w,
		    q[s * PW_BNCLASS + PW_BWT] };
	}
	return n;
}

/* A release of class K at T, for pw_bound_hbt's sweep. */
struct pw_brelease {
	double	t;
	int	k;
};

/* Latest first. */
static int
pw_brelease_cmp(const void *x, const void *y)
{
	const struct pw_brelease *a = x, *b = y;

	if (a->t != b->t)
		return a->t > b->t ? -1 : 1;
	return (a->k > b->k) - (a->k < b->k);
}

/*
 * The head-body-tail bound of a device with N classes C: for each set
 * of its kinds (F, B, W) and each release T of them, the ops of the set
 * that must start at T or later run one after another from T, and the
 * last one's tail follows.  One sweep a set over the releases, latest
 * first, adds each op as its release is passed: linear in the ops, not
 * in their square (a device of thousands of stages).
 */
static double
pw_bound_hbt(const struct pw_bclass *c, int n, int m)
{
	struct pw_brelease *rel;
	double best = 0, work, q, t;
	size_t nrel = (size_t)n * (size_t)m, i;
	int mask, k, j;
	bool any;

	if (nrel == 0)
		return 0;
	rel = pw_xreallocarray(NULL, nrel, sizeof *rel);
	for (i = 0, k = 0; k < n; k++)
		for (j = 0; j < m; j++)
			rel[i++] = (struct pw_brelease){ c[k].r[j] + c[k].add,
			    k };
	qsort(rel, nrel, sizeof *rel, pw_brelease_cmp);
	for (mask = 1; mask < 1 << PW_BNCLASS; mask++) {
		work = 0;
		q = INFINITY;
		any = false;
		for (i = 0; i < nrel; ) {
			/* Every op released at T or later is in. */
			t = rel[i].t;
			for (; i < nrel && rel[i].t == t; i++) {
				k = rel[i].k;
				if (!(mask & 1 << k % PW_BNCLASS))
					continue;
				work += c[k].d;
				q = fmin(q, c[k].q);
				any = true;
			}
			if (any)
				best = fmax(best, t + work + q);
		}
	}
	free(rel);
	return best;
}

/*
 * The warmup bound of device D (times from ORIGIN: 0 for the makespan,
 * the device's first F for the span): its work, plus the idle before its
 * first B (that B's release less the forwards memory lets it run before
 * any B frees memory: a knapsack of F time by activation bytes), plus
 * the idle after its last F (the tail of that F less the backward work
 * the memory at its end can hold: in-flight activations and holds).
 * Where every F may come before the first B the two may overlap, and
 * only the larger counts.
 */
static double
pw_bound_warmup(const struct pw_problem *p, const struct pw_bstage *bs, int d,
    const double *q, const bool *offloadable, bool span)
{
	struct pw_bitem *fwd, *bwd;
	double cap = pw_bound_cap(p, d), work = 0, release = INFINITY;
	double tail = INFINITY, bytes = 0, origin, fwork, vmax, cost, left;
	double before, after;
	int s, nf = 0, nb = 0, m = p->microbatches;
	bool off;

	fwd = pw_xcalloc((size_t)p->nstages, sizeof *fwd);
	bwd = pw_xcalloc(2 * (size_t)p->nstages, sizeof *bwd);
	origin = span ? bs[pw_bound_first(p, d)].r[PW_BF] : 0;
	for (s = 0; s < p->nstages; s++) {
		const struct pw_stage *st = &p->stages[s];

		if (st->device != d)
			continue;
		off = offloadable != NULL && offloadable[s];
		work += m * (st->f + st->b + st->w);
		release = fmin(release, bs[s].r[PW_BB] - origin);
		tail = fmin(tail, q[s * PW_BNCLASS + PW_BF]);
		if (!off)
			bytes += m * st->act;
		if (st->f > 0)
			fwd[nf++] = (struct pw_bitem){ st->f, off ? 0 :
			    st->act };
		if (st->b + st->w > 0)
			bwd[nb++] = (struct pw_bitem){ st->b + st->w, off ? 0 :
			    st->act };
		if (st->w > 0)
			bwd[nb++] = (struct pw_bitem){ st->w, st->hold };
	}
	qsort(fwd, (size_t)nf, sizeof *fwd, pw_bitem_cmp);
	qsort(bwd, (size_t)nb, sizeof *bwd, pw_bitem_cmp);
	fwork = pw_bound_greedy(fwd, nf, m, INFINITY, cap, &cost, &left);
	vmax = pw_bound_greedy(bwd, nb, m, INFINITY, cap, &cost, &left);
	free(fwd);
	free(bwd);
	before = fmax(0, release - fwork);
	after = fmax(0, tail - vmax);
	return work + (bytes > cap ? before + after : fmax(before, after));
}
/* The terms' names, in the order pw_bound_terms fills them before
 * sorting. */
enum { PW_TWORK, PW_TWARMUP, PW_THBT, PW_TDEVICE, PW_TCROSSING, PW_TPATH,
    PW_TMEMORY, PW_TSLOT, PW_NTERMS };
static const char *const pw_bound_term_names[PW_NTERMS] = {
	"work", "warmup", "head-body-tail", "device", "crossing", "path",
	"memory", "slot",
};
_Static_assert(PW_NTERMS <= PW_BOUND_TERMS, "room for every bound term");

static int
pw_bound_term_cmp(const void *x, const void *y)
{
	const struct pw_bound_term *a = x, *b = y;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The bounds of device D into V (PW_NTERMS), each raised to what D
 * proves, from the order statistics RF and RB, the tails Q and the
 * relaxation DV of its stage (NULL: none). */
static void
pw_bound_of_device(const struct pw_problem *p, const struct pw_bstage *bs,
    int d, const bool *offloadable, bool span, const double *rf,
    const double *rb, const double *q, struct pw_bdev *dv, long budget[2],
    double *v)
{
	struct pw_bcross_in cross;
	struct pw_bclass *c;
	double work = 0, hbt, dev, lo, cx;
	int s, n, i;

	if (!span)
		v[PW_TWORK] = fmax(v[PW_TWORK], pw_bound_work(p, bs, d));
	else
		/* A device's span holds all its work, and one microbatch's
		 * round trip from each of its stages with that stage's W. */
		for (s = 0; s < p->nstages; s++)
			if (p->stages[s].device == d) {
				work += p->microbatches * (p->stages[s].f +
				    p->stages[s].b + p->stages[s].w);
				v[PW_TWORK] = fmax(v[PW_TWORK], fmax(work,
				    bs[s].rt + p->stages[s].w));
			}
	v[PW_TWARMUP] = fmax(v[PW_TWARMUP], pw_bound_warmup(p, bs, d, q,
	    offloadable, span));
	c = pw_xcalloc((size_t)p->nstages * PW_BNCLASS, sizeof *c);
	n = pw_bound_classes(p, d, rf, rb, q, c);
	hbt = pw_bound_hbt(c, n, p->microbatches);
	free(c);
	v[PW_THBT] = fmax(v[PW_THBT], hbt);
	if (dv != NULL) {
		dev = pw_bdev_bound(dv, hbt);
		v[PW_TDEVICE] = fmax(v[PW_TDEVICE], dev);
		cross = (struct pw_bcross_in){ p, (int)(dv->st - p->stages),
		    dv->na, dv->nh, dv->cap, dv->qf, dv->qb, dv->rf, dv->rb };
		/* Only where it may raise the strongest term so far; it
		 * counts where it does. */
		for (lo = dev, i = 0; i < PW_NTERMS; i++)
			lo = fmax(lo, v[i]);
		if ((cx = pw_bound_crossing(&cross, lo, budget)) > lo)
			v[PW_TCROSSING] = cx;
	}
	v[PW_TSLOT] = fmax(v[PW_TSLOT], pw_bound_slots(p, bs, d, offloadable,
	    span));
}

/* Every bound of P for OBJ with offloads only of OFFLOADABLE stages
 * (NULL: none) into OUT, the strongest first; returns how many.  The
 * makespan's order statistics are the pipeline's from stage 0, with the
 * relaxation of every device that affords one; a span's, the device's
 * own from its first stage, with its own relaxation alone. */
int
pw_bound_terms(const struct pw_problem *p, enum pw_objective obj,
    const bool *offloadable, struct pw_bound_term out[PW_BOUND_TERMS])
{
	struct pw_bstage *bs = pw_bound_stages(p);
	struct pw_bdev **dv;
	struct pw_bmem bm;
	double v[PW_NTERMS] = { 0 }, *rf, *rb, *q;
	size_t budget = PW_BOUND_DP_STATES, cells;
	long steps[2] = { PW_BOUND_CROSS_STEPS, PW_BOUND_CROSS_CARRY_STEPS };
	bool span = obj == PW_OBJ_SPAN;
	int d, s, i;

	cells = (size_t)p->nstages * (size_t)p->microbatches;
	rf = pw_xcalloc(cells, sizeof *rf);
	rb = pw_xcalloc(cells, sizeof *rb);
	q = pw_xcalloc((size_t)p->nstages * PW_BNCLASS, sizeof *q);
	dv = pw_xcalloc((size_t)p->nstages, sizeof *dv);
	for (d = 0; d < p->devices; d++)
		pw_bound_tails(p, bs, d, span, q);
	for (s = 0; !span && s < p->nstages; s++)
		dv[s] = pw_bdev_new(p, s, offloadable, rf, rb, q, &budget);
	if (!span)
		pw_bound_order(p, offloadable, 0, dv, rf, rb);
	for (d = 0; d < p->devices; d++) {
		/* A device without stages (a problem not validated) bounds
		 * nothing. */
		if (pw_problem_chunks(p, d) == 0)
			continue;
		s = pw_bound_first(p, d);
		if (span) {
			dv[s] = pw_bdev_new(p, s, offloadable, rf, rb, q,
			    &budget);
			pw_bound_order(p, offloadable, s, dv, rf, rb);
		}
		pw_bound_of_device(p, bs, d, offloadable, span, rf, rb, q,
		    pw_problem_chunks(p, d) == 1 ? dv[s] : NULL, steps, v);
		if (span) {
			pw_bdev_free(dv[s]);
			dv[s] = NULL;
		}
	}
	for (s = 0; s < p->nstages; s++)
		pw_bdev_free(dv[s]);
	/* The critical path (also inside the work bound of stage 0's
	 * device for the makespan). */
	v[PW_TPATH] = bs[0].rt + p->stages[0].w;
	pw_bmem_init(&bm, p, bs, offloadable, span);
	v[PW_TMEMORY] = pw_bmem_bound(&bm, 0);
	pw_bmem_free(&bm);
	free(dv);
	free(q);
	free(rf);
	free(rb);
	free(bs);
	/* A term whose arithmetic overflowed (1e300 bytes held for 1e100
	 * s) proves nothing: inf would claim a finite schedule impossible. */
	for (i = 0; i < PW_NTERMS; i++) {
		out[i].name = pw_bound_term_names[i];
		out[i].value = isfinite(v[i]) ? v[i] : 0;
	}
	qsort(out, PW_NTERMS, sizeof *out, pw_bound_term_cmp);
	return PW_NTERMS;
}

double
pw_bound_problem(const struct pw_problem *p, enum pw_objective obj,
    const bool *offloadable)
{
	struct pw_bound_term t[PW_BOUND_TERMS];

	pw_bound_terms(p, obj, offloadable, t);
	return t[0].value;
}

int
pw_lower_bound_terms(const struct pw_problem *p, enum pw_objective obj,
    struct pw_bound_term out[PW_BOUND_TERMS])
{
	bool *offloadable;
	int n;

	offloadable = pw_solver_offloadable(p, PW_OFFMODE_AUTO, NULL);
	n = pw_bound_terms(p, obj, offloadable, out);
	free(offloadable);
	return n;
}

double
pw_lower_bound(const struct pw_problem *p, enum pw_objective obj)
{
	struct pw_bound_term t[PW_BOUND_TERMS];

	pw_lower_bound_terms(p, obj, t);
	return t[0].value;
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
