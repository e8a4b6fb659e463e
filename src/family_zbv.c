/*
 * family_zbv.c - ZB-V (Zero Bubble Pipeline Parallelism, the arXiv
 * version's memory-efficient zero bubble schedule) on the V placement,
 * where device d holds stages d and 2p-1-d.
 *
 * A device's two stages are its two legs: leg 0 is the V's down stroke
 * (stage d, forwards flow from device 0 to device p-1), leg 1 its up
 * stroke (stage 2p-1-d, forwards flow back from device p-1 to device 0).
 * The turn at device p-1 stays on one device, and so does the start of
 * the backward at device 0, which holds the last stage.
 *
 * It splits the backward into B and W and builds compute orders only;
 * the simulator times them.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"

/* Device D's stage on LEG. */
int
pw_v_stage(const struct pw_problem *p, int d, int leg)
{
	return leg == 0 ? d : p->nstages - 1 - d;
}

/* PW_OK on V placement, else the reason. */
int
pw_v_applies(const char *name, const struct pw_problem *p,
    struct pw_error *err)
{
	if (pw_problem_is_v(p))
		return PW_OK;
	pw_error_set(err, "%s needs V placement (device d holds stages d and "
	    "2p-1-d); this problem has %d stages on %d devices%s", name,
	    p->nstages, p->devices, p->nstages == 2 * p->devices ?
	    " not in V placement" : "");
	return PW_ERR_NOT_APPLICABLE;
}

/*
 * ZB-V caps every device at 2p chunk activations (p whole-stage ones,
 * 1F1B's peak; the problem's limit is not read) and fills the pipeline
 * with a greedy that times every op as it places it, in the steps of the
 * Zero Bubble paper's description and of the authors' generator, whose
 * published bubble rates tests/test_family_v.c reproduces:
 *
 * - warm-up: the first microbatch's forward runs down and back up the V;
 *   while the up stroke's first forward travels back to device d, devices
 *   0..d run further down-stroke forwards as long as device d keeps room
 *   for d+1 more whole-stage activations; then, for d = 1..p-1, devices
 *   p-1..d run forwards, alternating the legs, until device d has run at
 *   least as many as device d-1 and more of the up stroke (device d feeds
 *   device d-1's up stroke);
 * - steady state: rounds of one B per device, then one F per device.  The
 *   B is the down stroke's once the device has done more up-stroke B's
 *   and the down stroke's input is there (always, on device p-1), else
 *   the up stroke's; down-stroke B's are placed from device p-1 back and
 *   up-stroke B's from device 0 on, the way their inputs flow.  The F is
 *   the up stroke's when it trails the down stroke and its input is
 *   there, else the down stroke's.  Before each, W's fill the wait for its
 *   input as far as they fit in it, and one more cuts the wait when it
 *   would exceed the idle time the worst device has already accrued; W's
 *   also make room when an F would pass the cap;
 * - the remaining W's close each device's order.
 *
 * Cutting waits has knobs (before up-stroke B's, before F's) and an idle
 * allowance per device; the build tries the four knob settings, each
 * refined by rerunning with the previous run's idle times as per-device
 * allowances while the worst idle falls, and keeps the schedule whose
 * worst device idles least.
 */
struct pw_zbv {
	const struct pw_problem *p;
	int	n, m;
	bool	fill_f;		/* a W may cut a long wait before an F */
	bool	fill_b;		/* ... before an up-stroke B */
	double	*approved;	/* [n]: last run's idle times, or NULL */
	double	eps;		/* seconds: equal within rounding */
	struct pw_schedule *sched;
	double	*end;		/* [universe]: ends of placed ops, else NAN */
	double	*now;		/* [n]: when each device is free again */
	double	*mem;		/* [n]: chunk activations held (pw_zbv_put) */
	double	*idle;		/* [n]: idle time since the device's first op */
	int	*nf, *nb;	/* [2n]: F's, B's placed per device, leg */
	struct pw_op *wq;	/* [n * 2m]: each device's B's: its W queue */
	int	*wlen, *whead;
	size_t	left;		/* ops still to place */
};

/* Returns an empty run of the greedy with the given knobs and idle
 * allowances (copied; NULL for none), to be freed with pw_zbv_free. */
static struct pw_zbv *
pw_zbv_new(const struct pw_problem *p, bool fill_f, bool fill_b,
    const double *approved)
{
	struct pw_zbv *z = pw_xcalloc(1, sizeof *z);
	size_t i, universe = pw_op_universe(p);
	int s;
	double scale = 0;

	z->p = p;
	z->n = p->devices;
	z->m = p->microbatches;
	z->fill_f = fill_f;
	z->fill_b = fill_b;
	if (approved != NULL) {
		z->approved = pw_xcalloc((size_t)z->n, sizeof *z->approved);
		memcpy(z->approved, approved, (size_t)z->n *
		    sizeof *z->approved);
	}
	for (s = 0; s < p->nstages; s++)
		scale = fmax(scale, fmax(fmax(p->stages[s].f, p->stages[s].b),
		    fmax(p->stages[s].w, p->stages[s].comm)));
	z->eps = 1e-9 * scale;
	z->sched = pw_schedule_new(p);
	z->end = pw_xmalloc(universe * sizeof *z->end);
	for (i = 0; i < universe; i++)
		z->end[i] = NAN;
	z->now = pw_xcalloc((size_t)z->n, sizeof *z->now);
	z->mem = pw_xcalloc((size_t)z->n, sizeof *z->mem);
	z->idle = pw_xcalloc((size_t)z->n, sizeof *z->idle);
	z->nf = pw_xcalloc(2 * (size_t)z->n, sizeof *z->nf);
	z->nb = pw_xcalloc(2 * (size_t)z->n, sizeof *z->nb);
	z->wq = pw_xcalloc((size_t)z->n * 2 * (size_t)z->m, sizeof *z->wq);
	z->wlen = pw_xcalloc((size_t)z->n, sizeof *z->wlen);
	z->whead = pw_xcalloc((size_t)z->n, sizeof *z->whead);
	z->left = (size_t)z->n * 6 * (size_t)z->m;
	return z;
}

/* Frees Z, and its schedule unless the caller took it (set it NULL). */
static void
pw_zbv_free(struct pw_zbv *z)
{
	if (z == NULL)
		return;
	pw_schedule_free(z->sched);
	free(z->end);
	free(z->now);
	free(z->mem);
	free(z->idle);
	free(z->nf);
	free(z->nb);
	free(z->wq);
	free(z->wlen);
	free(z->whead);
	free(z->approved);
	free(z);
}

/* Device D's next op of KIND (PW_F or PW_B) on LEG; its microbatch is m
 * when the leg has none left. */
static struct pw_op
pw_zbv_next(const struct pw_zbv *z, enum pw_kind kind, int d, int leg)
{
	struct pw_op op;

	op.kind = kind;
	op.stage = pw_v_stage(z->p, d, leg);
	op.mb = kind == PW_F ? z->nf[2 * d + leg] : z->nb[2 * d + leg];
	return op;
}

static bool
pw_zbv_placed(const struct pw_zbv *z, struct pw_op op)
{
	return op.mb < z->m && !isnan(z->end[pw_op_index(z->p, op)]);
}

/* Whether OP exists and its input is there, and when: READY is the
 * dependency's end plus the hop (0 for the very first forward). */
static bool
pw_zbv_ready(const struct pw_zbv *z, struct pw_op op, double *ready)
{
	struct pw_pred dep;

	if (op.mb >= z->m)
		return false;
	*ready = 0;
	if (!pw_zb_dep(z->p, op, &dep))
		return true;
	if (!pw_zbv_placed(z, dep.op))
		return false;
	*ready = z->end[pw_op_index(z->p, dep.op)] + dep.delay;
	return true;
}

/* When OP's input arrives from another device; false when it comes from
 * OP's own device (or nowhere), so that there is no wait to fill. */
static bool
pw_zbv_arrival(const struct pw_zbv *z, struct pw_op op, double *t)
{
	struct pw_pred dep;

	if (!pw_zb_dep(z->p, op, &dep) ||
	    z->p->stages[dep.op.stage].device == z->p->stages[op.stage].device)
		return false;
	return pw_zbv_ready(z, op, t);
}

/* Appends OP, whose input must be there, to its device's order. */
static void
pw_zbv_put(struct pw_zbv *z, struct pw_op op)
{
	const struct pw_stage *st = &z->p->stages[op.stage];
	int d = st->device, leg = op.stage == d ? 0 : 1;
	double ready, start, share;
	bool ok;

	ok = pw_zbv_ready(z, op, &ready);
	assert(ok);
	(void)ok;
	start = fmax(z->now[d], ready);
	if (z->sched->device[d].len > 0)
		z->idle[d] += start - z->now[d];
	z->now[d] = start + pw_op_duration(z->p, op);
	z->end[pw_op_index(z->p, op)] = z->now[d];
	/* Memory counts chunk activations: an F takes one, its B frees
	 * the share its W does not keep.  On alike chunks that is the
	 * bytes over act; on chunks of different sizes it keeps the greedy's
	 * count of activations in flight what it is on alike ones. */
	share = st->act > 0 ? st->hold / st->act : 0;
	switch (op.kind) {
	case PW_F:
		z->mem[d] += 1;
		z->nf[2 * d + leg]++;
		break;
	case PW_B:
		z->mem[d] -= 1 - share;
		z->nb[2 * d + leg]++;
		z->wq[(size_t)d * 2 * (size_t)z->m + (size_t)z->wlen[d]++] = op;
		break;
	default:
		z->mem[d] -= share;
		break;
	}
	pw_schedule_append(z->sched, z->p, op);
	z->left--;
}

static bool
pw_zbv_has_w(const struct pw_zbv *z, int d)
{
	return z->whead[d] < z->wlen[d];
}

/* Device D's oldest pending W. */
static struct pw_op
pw_zbv_w(const struct pw_zbv *z, int d)
{
	struct pw_op op;

	assert(pw_zbv_has_w(z, d));
	op = z->wq[(size_t)d * 2 * (size_t)z->m + (size_t)z->whead[d]];
	op.kind = PW_W;
	return op;
}

static void
pw_zbv_put_w(struct pw_zbv *z, int d)
{
	struct pw_op op = pw_zbv_w(z, d);

	z->whead[d]++;
	pw_zbv_put(z, op);
}

/* Whether device D can take N more chunk activations under its cap of 2p
 * (p whole-stage activations). */
static bool
pw_zbv_fits(const struct pw_zbv *z, int d, int n)
{
	return z->mem[d] + n <= 2 * z->n + 1e-9;
}

/* The idle time device D may still accrue: what the worst device has
 * accrued, or what the previous run allowed it. */
static double
pw_zbv_allowance(const struct pw_zbv *z, int d)
{
	double worst = 0, approved = 0;
	int e;

	for (e = 0; e < z->n; e++) {
		worst = fmax(worst, z->idle[e]);
		if (z->approved != NULL)
			approved = fmax(approved, z->approved[e]);
	}
	if (z->approved != NULL)
		worst = fmax(worst, approved - z->approved[d]);
	return worst - z->idle[d];
}

/*
 * Before OP on device D: W's that fit in the wait for OP's input; then,
 * when CUT and the wait would still exceed D's idle allowance, one more.
 */
static void
pw_zbv_fill(struct pw_zbv *z, int d, struct pw_op op, bool cut)
{
	double t;

	if (!pw_zbv_arrival(z, op, &t))
		return;
	while (pw_zbv_has_w(z, d) && t >= z->now[d] +
	    pw_op_duration(z->p, pw_zbv_w(z, d)) - z->eps)
		pw_zbv_put_w(z, d);
	if (cut && pw_zbv_has_w(z, d) &&
	    t - z->now[d] > pw_zbv_allowance(z, d) + z->eps)
		pw_zbv_put_w(z, d);
}

/* Puts forward OP when its input is there and its device has room;
 * whether it did. */
static bool
pw_zbv_try(struct pw_zbv *z, struct pw_op op)
{
	double ready;

	assert(op.kind == PW_F);
	if (!pw_zbv_ready(z, op, &ready) ||
	    !pw_zbv_fits(z, z->p->stages[op.stage].device, 1))
		return false;
	pw_zbv_put(z, op);
	return true;
}

static void
pw_zbv_warmup(struct pw_zbv *z)
{
	const struct pw_problem *p = z->p;
	struct pw_op first;
	double arrive;
	int d, j, leg, stuck;

	for (d = 0; d < z->n; d++)
		pw_zbv_put(z, pw_zbv_next(z, PW_F, d, 0));
	for (d = z->n - 1; d >= 0; d--) {
		first = pw_zbv_next(z, PW_F, d, 1);
		if (d < z->n - 1 && pw_zbv_ready(z, first, &arrive)) {
			/* Devices 0..d hold equally many forwards (all of the
			 * down stroke), so device d's room and count stand
			 * for them all. */
			while (pw_zbv_fits(z, d, 2 * (d + 1)) &&
			    z->now[d] + p->stages[d].f <= arrive + z->eps &&
			    z->nf[2 * d] < z->m)
				for (j = 0; j <= d; j++)
					pw_zbv_put(z, pw_zbv_next(z, PW_F, j,
					    0));
		}
		pw_zbv_put(z, first);
	}
	leg = 0;
	for (d = 1; d < z->n; d++) {
		stuck = 0;
		while (stuck < 2 && (z->nf[2 * d] + z->nf[2 * d + 1] <
		    z->nf[2 * d - 2] + z->nf[2 * d - 1] ||
		    (z->nf[2 * d + 1] <= z->nf[2 * d - 1] &&
		    z->nf[2 * d - 1] < z->m))) {
			stuck++;
			for (j = z->n - 1; j >= d; j--)
				if (pw_zbv_try(z, pw_zbv_next(z, PW_F, j, leg)))
					stuck = 0;
			leg = 1 - leg;
		}
	}
}

/* The leg of device D's next B, or -1 when it has none left. */
static int
pw_zbv_b_leg(const struct pw_zbv *z, int d)
{
	const int *nb = &z->nb[2 * d];
	struct pw_op below;

	if (nb[0] + nb[1] == 2 * z->m)
		return -1;
	if (nb[0] >= nb[1])
		return 1;
	if (d == z->n - 1 || nb[1] >= z->m)
		return 0;
	below = pw_zbv_next(z, PW_B, d + 1, 0);
	below.mb = nb[0];
	return pw_zbv_placed(z, below) ? 0 : 1;
}

/* The leg of device D's next forward, or -1 when none is due. */
static int
pw_zbv_f_leg(const struct pw_zbv *z, int d)
{
	const int *nf = &z->nf[2 * d];
	struct pw_op op;
	double ready;

	if (nf[1] >= z->m)
		return -1;
	if (nf[1] < nf[0] && (d == z->n - 1 ||
	    pw_zbv_ready(z, pw_zbv_next(z, PW_F, d, 1), &ready)))
		return 1;
	op = pw_zbv_next(z, PW_F, d, 0);
	return pw_zbv_ready(z, op, &ready) ? 0 : -1;
}

/* One steady round; whether it placed anything. */
static bool
pw_zbv_round(struct pw_zbv *z, int *legs)
{
	struct pw_op op;
	double ready;
	bool placed = false;
	int d, e, leg, pass;

	/* Every device picks its B before any is placed.  Down-stroke B's
	 * go from device p-1 back, then up-stroke B's from device 0 on: the
	 * way their inputs flow. */
	for (d = 0; d < z->n; d++)
		legs[d] = pw_zbv_b_leg(z, d);
	for (pass = 0; pass < 2; pass++)
		for (d = 0; d < z->n; d++) {
			e = pass == 0 ? z->n - 1 - d : d;
			if (legs[e] != pass)
				continue;
			op = pw_zbv_next(z, PW_B, e, pass);
			if (!pw_zbv_ready(z, op, &ready))
				continue;
			pw_zbv_fill(z, e, op, pass == 0 || z->fill_b);
			pw_zbv_put(z, op);
			placed = true;
		}
	for (d = 0; d < z->n; d++) {
		if ((leg = pw_zbv_f_leg(z, d)) < 0)
			continue;
		op = pw_zbv_next(z, PW_F, d, leg);
		while (!pw_zbv_fits(z, d, 1) && pw_zbv_has_w(z, d))
			pw_zbv_put_w(z, d);
		if (!pw_zbv_fits(z, d, 1))
			continue;
		pw_zbv_fill(z, d, op, z->fill_f);
		pw_zbv_put(z, op);
		placed = true;
	}
	return placed;
}

/* Runs the greedy; PW_OK, or PW_ERR_NOT_APPLICABLE when it stalls. */
static int
pw_zbv_run(struct pw_zbv *z, struct pw_error *err)
{
	int *legs = pw_xcalloc((size_t)z->n, sizeof *legs);
	int rc = PW_OK, d;

	pw_zbv_warmup(z);
	for (;;) {
		for (d = 0; d < z->n; d++)
			if (pw_zbv_b_leg(z, d) >= 0)
				break;
		if (d == z->n)
			break;
		if (!pw_zbv_round(z, legs)) {
			pw_error_set(err, "zb-v: the greedy finds no op to "
			    "place within the memory cap with %zu ops left",
			    z->left);
			rc = PW_ERR_NOT_APPLICABLE;
			goto out;
		}
	}
	for (d = 0; d < z->n; d++)
		while (pw_zbv_has_w(z, d))
			pw_zbv_put_w(z, d);
	assert(z->left == 0);
out:
	free(legs);
	return rc;
}

/* The most idle time of any device. */
static double
pw_zbv_worst(const struct pw_zbv *z)
{
	double worst = 0;
	int d;

	for (d = 0; d < z->n; d++)
		worst = fmax(worst, z->idle[d]);
	return worst;
}

int
pw_family_zb_v(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	struct pw_zbv *best = NULL, *z = NULL;
	double *approved = NULL, *idle, worst, last = 0;
	int rc, knobs;
	bool stop;

	*out = NULL;
	if ((rc = pw_v_applies("zb-v", p, err)) != PW_OK)
		return rc;
	for (knobs = 0; knobs < 4; knobs++) {
		/* A chain of runs, each allowing every device the idle time
		 * it had in the run before, while the worst idle falls. */
		free(approved);
		approved = NULL;
		do {
			z = pw_zbv_new(p, (knobs & 1) == 0, (knobs & 2) == 0,
			    approved);
			if ((rc = pw_zbv_run(z, err)) != PW_OK)
				goto out;
			worst = pw_zbv_worst(z);
			stop = approved != NULL && !(worst < last);
			idle = pw_xcalloc((size_t)p->devices, sizeof *idle);
			memcpy(idle, z->idle, (size_t)p->devices *
			    sizeof *idle);
			if (best == NULL || worst < pw_zbv_worst(best)) {
				pw_zbv_free(best);
				best = z;
			} else
				pw_zbv_free(z);
			z = NULL;
			free(approved);
			approved = idle;
			last = worst;
		} while (!stop);
	}
	best->sched->family = pw_xstrdup("zb-v");
	*out = best->sched;
	best->sched = NULL;
out:
	pw_zbv_free(z);
	pw_zbv_free(best);
	free(approved);
	return rc;
}
