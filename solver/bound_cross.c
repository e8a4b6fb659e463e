/*
 * bound_cross.c - the crossing bound: the single-device relaxation of a
 * device with one stage (bound.c's "device"), where each microbatch's
 * round trip also pays for the microbatches it crosses.
 *
 * Take stage s alone on its device, and two microbatches v and u whose F
 * of s start at sv <= su.  On each later stage k, F(k) of u and B(k) of
 * v share k's device, so one of them goes first.  With the bare chain's
 * lags (down(k): F(s) start to F(k) start; up(k): B(k) start to B(s)
 * start; rt: F(s) start to B(s) start):
 *
 *   F(k) of u first:  B(s) of v starts >= su + down(k) + f(k) + up(k)
 *   B(k) of v first:  B(s) of u starts >= sv + (rt - up(k)) + b(k)
 *                                          + (rt - down(k))
 *
 * (a delay only grows along a chain).  If B(k) of v goes first, so does
 * B(k+1), which ends before B(k) starts, while F(k+1) of u starts after
 * F(k): every schedule's orders on the pair are "F first on the stages
 * before some t, B first from t on".  The relaxation sequences the
 * device's F, B and W as bound.c's does, with each in-flight
 * microbatch's F start and least B start in its state; an F branches
 * over those thresholds for the microbatches in flight.
 *
 * A second pass carries the delays from crossing to crossing: each
 * in-flight B keeps how late it is behind its bare chain on the later
 * stages, and the new F how late it climbs, so where B of v goes first
 * at t, F(t) of u waits for B(t) of v as late as v is there, and where
 * F of u goes first at t - 1, B(t - 1) of v waits for F(t - 1) of u as
 * late as u is there.  The first pass keeps fewer states, which loses
 * less where a bucket overflows; the second sees more where none does.
 * (With at most PW_BCROSS_INFLIGHT in flight: beyond that the states
 * outrun what a bucket keeps, and the term has not been seen to gain.)
 * Every constraint has the form "a time >= another + a constant", so a
 * state with every time earlier leads wherever a later one does: states
 * are kept where none dominates them, and where a bucket overflows, two
 * are merged into their componentwise least (a relaxation, so still a
 * bound).  The bisection on the end keeps the largest end the
 * relaxation cannot meet, as bound.c's does; a last pass at the least
 * end it met, with each state's latest end plus tail among what it
 * compares, gives the relaxation's own least end where that is larger.
 * docs/solver.md gives the argument.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* States kept per bucket at most, the doubles a layer may take (fewer
 * states per bucket where they would take more: 20 MiB, as many states
 * as 8 MiB held before the delays joined them), and the most
 * activations in flight it runs for: an F branches on each pair in
 * flight, and with more the states it needs outrun what it may keep
 * (docs/solver.md). */
#define PW_BCROSS_KEEP	64
#define PW_BCROSS_CELLS	((size_t)5 << 19)
#define PW_BCROSS_INFLIGHT	5

/* A time before every other: what pw_bcross_canon gives times no future
 * tells apart (finite, so that differences stay numbers). */
#define PW_BCROSS_PAST	(-1e30)

/* A state's doubles: the time the device is free, the latest end plus
 * tail of its ops, then for each in-flight microbatch, in the order
 * their F started: its F start (SV), its least B start (RV) and the
 * least delay of its B on the later stages behind the bare chain, a
 * step down the pipeline: DA at stage index TAU (counted from s + 1),
 * DB on every stage below it, none above it (pw_bcross_delay). */
enum { PW_BCROSS_T, PW_BCROSS_Q, PW_BCROSS_ITEMS };
enum { PW_BCROSS_ISV, PW_BCROSS_IRV, PW_BCROSS_ITAU, PW_BCROSS_IDA,
    PW_BCROSS_IDB, PW_BCROSS_ITEM };
#define PW_BCROSS_AT(i, f)	(PW_BCROSS_ITEMS + PW_BCROSS_ITEM * (i) + (f))
#define PW_BCROSS_SV(i)	PW_BCROSS_AT(i, PW_BCROSS_ISV)
#define PW_BCROSS_RV(i)	PW_BCROSS_AT(i, PW_BCROSS_IRV)
#define PW_BCROSS_TAU(i)	PW_BCROSS_AT(i, PW_BCROSS_ITAU)
#define PW_BCROSS_DA(i)	PW_BCROSS_AT(i, PW_BCROSS_IDA)
#define PW_BCROSS_DB(i)	PW_BCROSS_AT(i, PW_BCROSS_IDB)

/* A layer: the buckets (in flight, held) of one count of F done, each
 * holding up to keep states. */
struct pw_bcross_layer {
	double	*v;
	int	*count;
};

struct pw_bcross {
	const struct pw_bcross_in *in;
	const struct pw_stage *st;
	int	m, nk, width, keep;
	double	rt;
	double	*ak, *ck;		/* [nk]: the two requirements' lags */
	struct pw_bcross_layer layer[2];
	double	end;
	bool	exact;		/* states compare their latest ends too */
	bool	accumulate;	/* the pass that carries the delays */
	int	nf;			/* the layer being run */
	long	*budget;		/* the pass's steps left */
	double	*scratch;		/* [width]: the state being built */
	double	*added;			/* [width]: pw_bcross_add's copy */
	double	*leaf;			/* [width]: pw_bcross_leaf's state */
	double	*late;			/* [nk]: the new F's least delay */
};

static size_t
pw_bcross_bucket(const struct pw_bcross *cx, int a, int h)
{
	return (size_t)a * (size_t)(cx->in->nh + 1) + (size_t)h;
}

static double *
pw_bcross_state(const struct pw_bcross *cx, struct pw_bcross_layer *l,
    size_t bucket, int i)
{
	return l->v + (bucket * (size_t)cx->keep + (size_t)i) *
	    (size_t)cx->width;
}

/* The doubles of a state with A in flight. */
static size_t
pw_bcross_len(int a)
{
	return PW_BCROSS_ITEMS + PW_BCROSS_ITEM * (size_t)a;
}

/* The least delay of item I's B on stage index K of state X. */
static double
pw_bcross_delay(const double *x, int i, int k)
{
	int tau = (int)x[PW_BCROSS_TAU(i)];

	return k < tau ? x[PW_BCROSS_DB(i)] : k == tau ? x[PW_BCROSS_DA(i)] :
	    0;
}

/* Item I of X given the delay steps TAU, DA and DB (a B is never less
 * late further down: it waits there for all it waited for above). */
static void
pw_bcross_set_delay(double *x, int i, int tau, double da, double db)
{
	assert(da <= db);
	x[PW_BCROSS_TAU(i)] = tau;
	x[PW_BCROSS_DA(i)] = da;
	x[PW_BCROSS_DB(i)] = db;
}

/* Whether state X (A in flight) is no later than Y anywhere that
 * counts: its times, and where they are carried, its delays on every
 * stage. */
static bool
pw_bcross_dominates(const struct pw_bcross *cx, const double *x,
    const double *y, int a)
{
	int i, k;

	if (x[PW_BCROSS_T] > y[PW_BCROSS_T] || (cx->exact &&
	    x[PW_BCROSS_Q] > y[PW_BCROSS_Q]))
		return false;
	for (i = 0; i < a; i++) {
		if (x[PW_BCROSS_SV(i)] > y[PW_BCROSS_SV(i)] ||
		    x[PW_BCROSS_RV(i)] > y[PW_BCROSS_RV(i)])
			return false;
		for (k = 0; cx->accumulate && k < cx->nk; k++)
			if (pw_bcross_delay(x, i, k) > pw_bcross_delay(y, i, k))
				return false;
	}
	return true;
}

/* How far apart states X and Y (A in flight) are: the sum of their
 * times' differences, each carried delay taken on every stage. */
static double
pw_bcross_distance(const struct pw_bcross *cx, const double *x,
    const double *y, int a)
{
	double dist = fabs(x[PW_BCROSS_T] - y[PW_BCROSS_T]);
	int i, k;

	if (cx->exact)
		dist += fabs(x[PW_BCROSS_Q] - y[PW_BCROSS_Q]);
	for (i = 0; i < a; i++) {
		dist += fabs(x[PW_BCROSS_SV(i)] - y[PW_BCROSS_SV(i)]) +
		    fabs(x[PW_BCROSS_RV(i)] - y[PW_BCROSS_RV(i)]);
		for (k = 0; cx->accumulate && k < cx->nk; k++)
			dist += fabs(pw_bcross_delay(x, i, k) -
			    pw_bcross_delay(y, i, k));
	}
	return dist;
}

/* Y's item I made the componentwise least of its own and X's, delays
 * included: one step at the higher of their TAU, and below it the least
 * of the two on the stage just below (the delays only grow down the
 * pipeline, so no stage further down has less). */
static void
pw_bcross_merge_item(double *y, const double *x, int i)
{
	int tau = (int)fmax(x[PW_BCROSS_TAU(i)], y[PW_BCROSS_TAU(i)]);
	double da, db;

	da = fmin(pw_bcross_delay(x, i, tau), pw_bcross_delay(y, i, tau));
	db = tau > 0 ? fmin(pw_bcross_delay(x, i, tau - 1),
	    pw_bcross_delay(y, i, tau - 1)) : da;
	y[PW_BCROSS_SV(i)] = fmin(y[PW_BCROSS_SV(i)], x[PW_BCROSS_SV(i)]);
	y[PW_BCROSS_RV(i)] = fmin(y[PW_BCROSS_RV(i)], x[PW_BCROSS_RV(i)]);
	pw_bcross_set_delay(y, i, tau, da, db);
}

/* State X's op just done, ending at T with tail Q. */
static void
pw_bcross_done(double *x, double t, double q)
{
	x[PW_BCROSS_T] = t;
	x[PW_BCROSS_Q] = fmax(x[PW_BCROSS_Q], t + q);
}

/* Whether an op ending at T with tail Q meets the end. */
static bool
pw_bcross_meets(const struct pw_bcross *cx, double t, double q)
{
	return t + q <= cx->end + pw_solver_objective_tol(cx->end);
}

/* Whether a state with NF forwards done, A in flight and H held, the
 * device free from T, can still meet the end: its remaining work runs
 * one op at a time, and the last B follows every remaining F. */
static bool
pw_bcross_can_end(const struct pw_bcross *cx, int nf, int a, int h, double t)
{
	const struct pw_stage *st = cx->st;
	int nfl = cx->m - nf, nbl = nfl + a;

	return pw_bcross_meets(cx, t + nfl * st->f + nbl * st->b +
	    (nbl + h) * st->w, 0) && (nbl == 0 ||
	    pw_bcross_meets(cx, t + nfl * st->f + nbl * st->b, cx->in->qb));
}

/* Whether a microbatch whose B starts no earlier than R can still meet
 * the end. */
static bool
pw_bcross_b_meets(const struct pw_bcross *cx, double r)
{
	return pw_bcross_meets(cx, r + cx->st->b, cx->in->qb);
}

/* Every time of state X (A in flight) that no future can tell from a
 * smaller one, made the same: a B start no later than the device is
 * free (every later use takes the larger), an F start so early that no
 * later F's pair with it costs anything (each F starts once the device
 * is free, and its B no earlier than a round trip after), and a delay
 * at the stage of the latest crossing too small to make a later pair
 * cost there.  The states that differ only there then dominate one
 * another.  (A later crossing may still delay such a B: dropping that
 * only relaxes.) */
static void
pw_bcross_canon(const struct pw_bcross *cx, double *x, int a)
{
	double avail = x[PW_BCROSS_T] + cx->rt;
	int i, tau;

	for (i = 0; i < a; i++) {
		tau = (int)x[PW_BCROSS_TAU(i)];
		if (x[PW_BCROSS_SV(i)] + cx->ck[0] + pw_bcross_delay(x, i, 0) <=
		    avail) {
			x[PW_BCROSS_SV(i)] = PW_BCROSS_PAST;
			pw_bcross_set_delay(x, i, cx->nk, 0, 0);
		} else if (tau < cx->nk && x[PW_BCROSS_SV(i)] + cx->ck[tau] +
		    x[PW_BCROSS_DA(i)] <= avail)
			x[PW_BCROSS_DA(i)] = 0;
		if (x[PW_BCROSS_RV(i)] <= x[PW_BCROSS_T])
			x[PW_BCROSS_RV(i)] = PW_BCROSS_PAST;
	}
}

/*
 * Adds state STATE (A in flight, H held), made canonical in a copy (the
 * caller's buffer goes on to build its siblings), to layer L unless one
 * there dominates it; drops those it dominates; where the bucket is
 * full, merges it into the state nearest it (componentwise least).
 */
static void
pw_bcross_add(struct pw_bcross *cx, struct pw_bcross_layer *l, int a, int h,
    const double *state)
{
	size_t b = pw_bcross_bucket(cx, a, h), len = pw_bcross_len(a), k;
	int i, n = l->count[b], near = 0;
	double *x = cx->added, *y, dist, best = INFINITY;

	if (!pw_bcross_can_end(cx, l == &cx->layer[cx->nf % 2] ? cx->nf :
	    cx->nf + 1, a, h, state[PW_BCROSS_T]))
		return;
	memcpy(x, state, len * sizeof *x);
	pw_bcross_canon(cx, x, a);
	for (i = 0; i < n; i++) {
		y = pw_bcross_state(cx, l, b, i);
		if (pw_bcross_dominates(cx, y, x, a))
			return;
		if (pw_bcross_dominates(cx, x, y, a)) {
			memcpy(y, pw_bcross_state(cx, l, b, n - 1),
			    len * sizeof *y);
			n--;
			i--;
		}
	}
	l->count[b] = n;
	if (n < cx->keep) {
		memcpy(pw_bcross_state(cx, l, b, n), x, len * sizeof *x);
		l->count[b] = n + 1;
		return;
	}
	for (i = 0; i < n; i++) {
		y = pw_bcross_state(cx, l, b, i);
		dist = pw_bcross_distance(cx, x, y, a);
		if (dist < best) {
			best = dist;
			near = i;
		}
	}
	y = pw_bcross_state(cx, l, b, near);
	for (k = 0; k < PW_BCROSS_ITEMS; k++)
		y[k] = fmin(y[k], x[k]);
	for (i = 0; i < a; i++)
		pw_bcross_merge_item(y, x, i);
}

/* One pair's choices: for the microbatch in flight at index I of state
 * X against a new F starting at SU with its B no earlier than RU, the
 * thresholds from *LO to *HI that cost something on both sides (none:
 * *LO >= *HI: one order costs neither, the pair is free).  The cost on
 * v is reckoned from the bare chain of u, which is what *LO stands for
 * (pw_bcross_leaf). */
static void
pw_bcross_choices(const struct pw_bcross *cx, const double *x, int i,
    double su, double ru, int *lo, int *hi)
{
	double sv = x[PW_BCROSS_SV(i)], rv = x[PW_BCROSS_RV(i)];
	int ta = 0, tb = cx->nk;

	/* F first on the stages below ta costs v nothing; B first from tb
	 * on costs u nothing. */
	while (ta < cx->nk && su + cx->ak[ta] <= rv)
		ta++;
	while (tb > 0 && sv + cx->ck[tb - 1] + pw_bcross_delay(x, i, tb - 1)
	    <= ru)
		tb--;
	*lo = ta;
	*hi = tb;
}

/* Item I of Y, whose B waits on stage index K for an F that ends there
 * at least D behind its bare chain: at least D late there and on every
 * stage below.  Where that leaves three steps, the higher two become
 * one at the lower's value (which only relaxes). */
static void
pw_bcross_delay_from(double *y, int i, int k, double d)
{
	int tau = (int)y[PW_BCROSS_TAU(i)];
	double db = y[PW_BCROSS_DB(i)];

	if (d <= pw_bcross_delay(y, i, k))
		return;
	if (k < tau || d >= db)
		pw_bcross_set_delay(y, i, k + 1, pw_bcross_delay(y, i, k + 1),
		    fmax(db, d));
	else
		pw_bcross_set_delay(y, i, tau, fmax(y[PW_BCROSS_DA(i)], d), db);
}

/*
 * The state the new F leads to once every pair in PAIRS[0..NP) has its
 * threshold PICK (RANGE: each pair's choices), its B no earlier than RU,
 * into layer L.  In the pass that carries delays, the F of u climbs the
 * stages, each B it lets go first delaying it (from that B's own delay
 * on), and each B that waits for it waits for it so delayed, from that
 * stage down.  The least threshold of a pair stands for every lower
 * one, so there it waits for nothing.  Returns false once the budget is
 * spent.
 */
static bool
pw_bcross_leaf(struct pw_bcross *cx, struct pw_bcross_layer *l, int a,
    int h, const int *pairs, const int (*range)[2], const int *pick, int np,
    double su, double ru)
{
	double *y = cx->leaf, *late = cx->late, req;
	int k, i, t, j;

	if (--*cx->budget < 0)
		return false;
	memcpy(y, cx->scratch, pw_bcross_len(a) * sizeof *y);
	if (cx->accumulate) {
		for (j = 0; j < cx->nk; j++)
			late[j] = 0;
		for (k = 0; k < np; k++) {
			i = pairs[k];
			if ((t = pick[k]) < cx->nk)
				late[t] = fmax(late[t], y[PW_BCROSS_SV(i)] +
				    cx->ck[t] + pw_bcross_delay(y, i, t) -
				    cx->rt - su);
		}
		for (j = 1; j < cx->nk; j++)
			late[j] = fmax(late[j], late[j - 1]);
	}
	for (k = 0; k < np; k++) {
		i = pairs[k];
		if ((t = pick[k]) == range[k][0] || t == 0)
			continue;
		req = su + cx->ak[t - 1] + (cx->accumulate ? late[t - 1] : 0);
		if (!pw_bcross_b_meets(cx, req))
			return true;
		y[PW_BCROSS_RV(i)] = fmax(y[PW_BCROSS_RV(i)], req);
		if (cx->accumulate)
			pw_bcross_delay_from(y, i, t - 1, req -
			    y[PW_BCROSS_SV(i)] - cx->rt);
	}
	y[PW_BCROSS_SV(a)] = su;
	y[PW_BCROSS_RV(a)] = ru;
	pw_bcross_set_delay(y, a, cx->nk, 0, cx->accumulate ?
	    late[cx->nk - 1] : 0);
	pw_bcross_add(cx, l, a + 1, h, y);
	return true;
}

/* The states an F leads to: for each choice on pairs PAIRS[K..NP) (the
 * earlier ones in PICK), those of pw_bcross_leaf, cut where the B of u
 * (no earlier than RU, from the choices so far) cannot meet the end.
 * Returns false once the budget is spent. */
static bool
pw_bcross_branch(struct pw_bcross *cx, struct pw_bcross_layer *l, int a,
    int h, const int *pairs, const int (*range)[2], int *pick, int k,
    int np, double su, double ru)
{
	const double *x = cx->scratch;
	int i, t;

	if (!pw_bcross_b_meets(cx, ru))
		return true;
	if (k == np)
		return pw_bcross_leaf(cx, l, a, h, pairs, range, pick, np, su,
		    ru);
	i = pairs[k];
	for (t = range[k][0]; t <= range[k][1]; t++) {
		pick[k] = t;
		if (!pw_bcross_b_meets(cx, t > 0 ? fmax(x[PW_BCROSS_RV(i)],
		    su + cx->ak[t - 1]) : x[PW_BCROSS_RV(i)]))
			continue;
		if (!pw_bcross_branch(cx, l, a, h, pairs, range, pick, k + 1,
		    np, su, t < cx->nk ? fmax(ru, x[PW_BCROSS_SV(i)] +
		    cx->ck[t] + pw_bcross_delay(x, i, t)) : ru))
			return false;
	}
	return true;
}

/* The F from state X (NF done, A in flight, H held) into layer NEXT,
 * branching on every pair that costs on both sides.  Returns false once
 * the budget is spent. */
static bool
pw_bcross_forward(struct pw_bcross *cx, struct pw_bcross_layer *next,
    const double *x, int nf, int a, int h)
{
	const struct pw_stage *st = cx->st;
	int pairs[PW_BCROSS_INFLIGHT], range[PW_BCROSS_INFLIGHT][2];
	int pick[PW_BCROSS_INFLIGHT], i, np = 0;
	double su, ru;

	su = fmax(x[PW_BCROSS_T], cx->in->rf[nf]);
	ru = su + cx->rt;
	if (!pw_bcross_meets(cx, su + st->f, cx->in->qf) ||
	    !pw_bcross_b_meets(cx, ru))
		return true;
	for (i = 0; i < a; i++) {
		pw_bcross_choices(cx, x, i, su, ru, &range[np][0],
		    &range[np][1]);
		if (range[np][0] < range[np][1])
			pairs[np++] = i;
	}
	memcpy(cx->scratch, x, pw_bcross_len(a) * sizeof *x);
	pw_bcross_done(cx->scratch, su + st->f, cx->in->qf);
	return pw_bcross_branch(cx, next, a, h, pairs,
	    (const int (*)[2])range, pick, 0, np, su, ru);
}

/*
 * The states of layer CUR (NF forwards done), in an order that puts each
 * after those it comes from (more B, then more W), leading to one
 * another and to layer NEXT.  Returns false once the budget is spent.
 */
static bool
pw_bcross_layer_run(struct pw_bcross *cx, int nf)
{
	const struct pw_bcross_in *in = cx->in;
	const struct pw_stage *st = cx->st;
	struct pw_bcross_layer *cur = &cx->layer[nf % 2];
	struct pw_bcross_layer *next = &cx->layer[(nf + 1) % 2];
	double *x, *y = cx->scratch, start;
	size_t b;
	int a, h, i, k, nb;

	for (a = in->na < nf ? in->na : nf; a >= 0; a--)
		for (h = in->nh < nf - a ? in->nh : nf - a; h >= 0; h--) {
			b = pw_bcross_bucket(cx, a, h);
			nb = nf - a;
			for (i = 0; i < cur->count[b]; i++) {
				x = pw_bcross_state(cx, cur, b, i);
				if (nf < cx->m && a < in->na && a * st->act +
				    h * st->hold + st->act <= in->cap &&
				    !pw_bcross_forward(cx, next, x, nf, a, h))
					return false;
				for (k = 0; h < in->nh && k < a; k++) {
					if (--*cx->budget < 0)
						return false;
					start = fmax(fmax(x[PW_BCROSS_T],
					    in->rb[nb]), x[PW_BCROSS_RV(k)]);
					if (!pw_bcross_meets(cx, start + st->b,
					    in->qb))
						continue;
					/* Item k leaves; the rest keep
					 * their order. */
					memcpy(y, x, pw_bcross_len(k) *
					    sizeof *y);
					memcpy(y + PW_BCROSS_SV(k), x +
					    PW_BCROSS_SV(k + 1),
					    PW_BCROSS_ITEM * (size_t)(a - k -
					    1) * sizeof *y);
					pw_bcross_done(y, start + st->b,
					    in->qb);
					pw_bcross_add(cx, cur, a - 1, h + 1, y);
				}
				if (h > 0 && pw_bcross_meets(cx,
				    x[PW_BCROSS_T] + st->w, 0)) {
					memcpy(y, x, pw_bcross_len(a) *
					    sizeof *y);
					pw_bcross_done(y, x[PW_BCROSS_T] +
					    st->w, 0);
					pw_bcross_add(cx, cur, a, h - 1, y);
				}
			}
		}
	return true;
}

/* Whether the relaxation meets END: 1 yes, 0 no, -1 the budget ran out
 * first.  Its states at the end are those of the last layer's first
 * bucket. */
static int
pw_bcross_meets_end(void *arg, double end)
{
	struct pw_bcross *cx = arg;
	const struct pw_bcross_in *in = cx->in;
	size_t nb = (size_t)(in->na + 1) * (size_t)(in->nh + 1);
	int nf;

	cx->end = end;
	memset(cx->layer[0].count, 0, nb * sizeof *cx->layer[0].count);
	cx->layer[0].v[PW_BCROSS_T] = 0;
	cx->layer[0].v[PW_BCROSS_Q] = 0;
	cx->layer[0].count[0] = 1;
	for (nf = 0; nf <= cx->m; nf++) {
		cx->nf = nf;
		memset(cx->layer[(nf + 1) % 2].count, 0, nb *
		    sizeof *cx->layer[0].count);
		if (!pw_bcross_layer_run(cx, nf))
			return -1;
	}
	return cx->layer[cx->m % 2].count[0] > 0;
}

/* The least latest end plus tail of the last pass's final states. */
static double
pw_bcross_least_end(struct pw_bcross *cx)
{
	struct pw_bcross_layer *l = &cx->layer[cx->m % 2];
	double least = INFINITY;
	int i;

	for (i = 0; i < l->count[0]; i++)
		least = fmin(least, pw_bcross_state(cx, l, 0, i)[PW_BCROSS_Q]);
	return least;
}

/* The largest end the relaxation of CX is known not to meet, from LO (a
 * bound already proven): up while it does not, then bisection between
 * the largest end known unreachable and the least known reachable. */
static double
pw_bcross_search(struct pw_bcross *cx, double lo)
{
	double hi, step;
	int i, r;

	cx->exact = false;
	step = fmax(lo, 1) / 64;
	hi = lo;
	for (i = 0; i < 40; i++) {
		r = pw_bcross_meets_end(cx, hi);
		if (r != 0)
			break;
		lo = hi;
		hi += step;
		step *= 2;
	}
	if (r == 1)
		r = pw_bound_bisect(&lo, &hi, 2e-5, 60, pw_bcross_meets_end,
		    cx);
	/* Every schedule that ends by HI is one of the last pass's paths,
	 * no later anywhere, so it ends no earlier than the least of their
	 * latest ends. */
	cx->exact = true;
	if (r == 1 && pw_bcross_meets_end(cx, hi) == 1)
		lo = fmax(lo, pw_bcross_least_end(cx));
	return lo;
}

double
pw_bound_crossing(const struct pw_bcross_in *in, double lo, long budget[2])
{
	const struct pw_problem *p = in->p;
	struct pw_bcross cx = { .in = in, .st = &p->stages[in->s],
	    .m = p->microbatches };
	double down = 0, up = 0, *down_k, *up_k;
	size_t nb, cells;
	int k, last = p->nstages - 1, i;

	cx.nk = last - in->s;
	cx.width = (int)pw_bcross_len(in->na);
	nb = (size_t)(in->na + 1) * (size_t)(in->nh + 1);
	cells = PW_BCROSS_CELLS / nb / (size_t)cx.width;
	cx.keep = cells < PW_BCROSS_KEEP ? (int)cells : PW_BCROSS_KEEP;
	if (cx.nk == 0 || in->na > PW_BCROSS_INFLIGHT || (budget[0] <= 0 &&
	    budget[1] <= 0) || cx.keep < 2)
		return lo;
	cx.ak = pw_xcalloc((size_t)cx.nk, sizeof *cx.ak);
	cx.ck = pw_xcalloc((size_t)cx.nk, sizeof *cx.ck);
	down_k = pw_xcalloc((size_t)cx.nk, sizeof *down_k);
	up_k = pw_xcalloc((size_t)cx.nk, sizeof *up_k);
	/* Lags from stage s to each later stage k = s + 1 + i. */
	for (i = 0; i < cx.nk; i++) {
		k = in->s + 1 + i;
		down += p->stages[k - 1].f + pw_problem_hop(p, k - 1);
		up += p->stages[k].b + pw_problem_hop(p, k - 1);
		down_k[i] = down;
		up_k[i] = up;
	}
	cx.rt = down + p->stages[last].f + up;
	for (i = 0; i < cx.nk; i++) {
		k = in->s + 1 + i;
		cx.ak[i] = down_k[i] + p->stages[k].f + up_k[i];
		cx.ck[i] = 2 * cx.rt - up_k[i] - down_k[i] + p->stages[k].b;
	}
	free(down_k);
	free(up_k);
	cells = nb * (size_t)cx.keep * (size_t)cx.width;
	for (i = 0; i < 2; i++) {
		cx.layer[i].v = pw_xcalloc(cells, sizeof *cx.layer[i].v);
		cx.layer[i].count = pw_xcalloc(nb, sizeof *cx.layer[i].count);
	}
	cx.scratch = pw_xcalloc((size_t)cx.width, sizeof *cx.scratch);
	cx.added = pw_xcalloc((size_t)cx.width, sizeof *cx.added);
	cx.leaf = pw_xcalloc((size_t)cx.width, sizeof *cx.leaf);
	cx.late = pw_xcalloc((size_t)cx.nk, sizeof *cx.late);

	/* The crossings one at a time, then with the delays they carry:
	 * the first keeps fewer states, so it loses less where a bucket
	 * overflows; the second sees more where none does. */
	for (i = 0; i < 2; i++) {
		cx.accumulate = i == 1;
		cx.budget = &budget[i];
		if (budget[i] > 0)
			lo = pw_bcross_search(&cx, lo);
	}
	for (i = 0; i < 2; i++) {
		free(cx.layer[i].v);
		free(cx.layer[i].count);
	}
	free(cx.scratch);
	free(cx.added);
	free(cx.leaf);
	free(cx.late);
	free(cx.ak);
	free(cx.ck);
	return lo;
}
