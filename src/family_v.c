/*
 * family_v.c - the schedules of the V placement, where device d holds
 * stages d and 2p-1-d: ZB-V (Zero Bubble Pipeline Parallelism, the arXiv
 * version's memory-efficient zero bubble schedule) and V-Half and V-Min
 * (Pipeline Parallelism with Controllable Memory, NeurIPS 2024).
 *
 * A device's two stages are its two legs: leg 0 is the V's down stroke
 * (stage d, forwards flow from device 0 to device p-1), leg 1 its up
 * stroke (stage 2p-1-d, forwards flow back from device p-1 to device 0).
 * The turn at device p-1 stays on one device, and so does the start of
 * the backward at device 0, which holds the last stage.
 *
 * All three split the backward into B and W and build compute orders
 * only; the simulator times them.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"

/* Device D's stage on LEG. */
static int
pw_v_stage(const struct pw_problem *p, int d, int leg)
{
	return leg == 0 ? d : p->nstages - 1 - d;
}

/* PW_OK on V placement, else the reason. */
static int
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
 * The op OP waits for, on its own or the neighbouring device; false for
 * the first forward, which waits for nothing.  A W waits for its B, the
 * last stage's B for its F.
 */
static bool
pw_v_dep(const struct pw_problem *p, struct pw_op op, struct pw_op *dep)
{
	int last = p->nstages - 1;

	dep->mb = op.mb;
	dep->stage = op.stage;
	switch (op.kind) {
	case PW_F:
		if (op.stage == 0)
			return false;
		dep->kind = PW_F;
		dep->stage = op.stage - 1;
		return true;
	case PW_B:
		dep->kind = op.stage == last ? PW_F : PW_B;
		if (op.stage != last)
			dep->stage = op.stage + 1;
		return true;
	default:
		assert(op.kind == PW_W);
		dep->kind = PW_B;
		return true;
	}
}

/* Seconds between the end of OP's dependency DEP and OP's input being
 * there: the hop when they are on different devices. */
static double
pw_v_hop(const struct pw_problem *p, struct pw_op op, struct pw_op dep)
{
	if (op.kind == PW_W || dep.kind != op.kind)
		return 0;
	return pw_problem_hop(p, op.stage < dep.stage ? op.stage : dep.stage);
}

/* ------------------------------------------------------------------ */
/* ZB-V                                                                */

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
	struct pw_op dep;

	if (op.mb >= z->m)
		return false;
	*ready = 0;
	if (!pw_v_dep(z->p, op, &dep))
		return true;
	if (!pw_zbv_placed(z, dep))
		return false;
	*ready = z->end[pw_op_index(z->p, dep)] + pw_v_hop(z->p, op, dep);
	return true;
}

/* When OP's input arrives from another device; false when it comes from
 * OP's own device (or nowhere), so that there is no wait to fill. */
static bool
pw_zbv_arrival(const struct pw_zbv *z, struct pw_op op, double *t)
{
	struct pw_op dep;

	if (!pw_v_dep(z->p, op, &dep) ||
	    z->p->stages[dep.stage].device == z->p->stages[op.stage].device)
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

/* ------------------------------------------------------------------ */
/* V-Half and V-Min                                                    */

/*
 * Controllable Memory builds a schedule from a building block: the passes
 * of one microbatch laid out in unit time slots (one slot per pass).  The
 * block repeats every PW_VBLOCK_PERIOD slots, since a device runs six
 * passes per microbatch (F, B and W of two legs); the four F and B passes
 * take their block slots and the two W's the free slots after their B.
 * The lifespan of a microbatch's activations on a device (F to W) then
 * decides the peak: about lifespan/6 chunk activations are alive at once.
 *
 * V-Min makes the block as tight as dependencies allow: every pass starts
 * the slot after its input's pass, so on device d the down-stroke F is at
 * d, the up-stroke F at 2p-1-d, the up-stroke B at 2p+d and the
 * down-stroke B at 4p-1-d.  The two legs' lifespans (F to B) sum to 4p
 * slots on every device: 2p/3 chunk activations, a third of 1F1B's 2p.
 * V-Half spaces the down-stroke forwards and up-stroke backwards two slots
 * apart: F at 2d and 3p-2-d, B at 3p-1+2d and 6p-2-d, lifespans summing
 * to 6p-1 slots: p chunk activations, half of 1F1B's.
 * A block must also repeat without collisions: its four slots must differ
 * modulo 6.  In V-Min all differences are odd but two, F down to B up
 * and F up to B down, which are 2p; in V-Half none is a multiple of 3 but
 * F up to B down, 3p.  Where 3 divides p (V-Min) or 2 divides p (V-Half)
 * those collide, and a gap starting the backwards 2 (2p+2) or 3 (3p+3,
 * odd) slots later parts them.
 *
 * With these blocks and enough microbatches the peak is (with W's run as
 * they fall in free slots, in whole-stage activations, i.e. two chunks):
 *   p        4   8  16  32
 *   V-Half   3   5   9  17   = (p+2)/2
 *   V-Min    2   4   6  12   = floor((p+4)/3)
 * (tests/test_family_v.c checks them).  Each block is a valid unit-time
 * schedule (every pass after its input's), and so is their repetition,
 * so the orders never deadlock, for any p and m >= 1.
 *
 * The repetition leaves holes in the warm-up and the cool-down, where
 * microbatches are missing.  Squeezing them out is the simulator's job;
 * reordering is the generator's: outside the steady phase (from device
 * 0's first down-stroke B to its last forward), every F and B in turn,
 * in slot order, moves to the earliest free slot its inputs allow where
 * its device's peak does not grow; W's keep falling in the free slots,
 * so moving a B ahead of them lets the cool-down's backwards run first.
 */
#define PW_VBLOCK_PERIOD 6

/* A block's passes (its W's take the free slots). */
enum pw_vpass {
	PW_VF0,		/* down-stroke F */
	PW_VF1,		/* up-stroke F */
	PW_VB1,		/* up-stroke B */
	PW_VB0,		/* down-stroke B */
	PW_NVPASS
};

struct pw_vblock {
	const char *name;
	/* Slots of microbatch 0's passes on device D of N. */
	void	(*slots)(int n, int d, int slot[PW_NVPASS]);
};

static void
pw_vblock_min(int n, int d, int slot[PW_NVPASS])
{
	int gap = n % 3 == 0 ? 2 : 0;

	slot[PW_VF0] = d;
	slot[PW_VF1] = 2 * n - 1 - d;
	slot[PW_VB1] = 2 * n + gap + d;
	slot[PW_VB0] = 4 * n + gap - 1 - d;
}

static void
pw_vblock_half(int n, int d, int slot[PW_NVPASS])
{
	int gap = n % 2 == 0 ? 3 : 0;

	slot[PW_VF0] = 2 * d;
	slot[PW_VF1] = 3 * n - 2 - d;
	slot[PW_VB1] = 3 * n - 1 + gap + 2 * d;
	slot[PW_VB0] = 6 * n - 2 + gap - d;
}

static const struct pw_vblock pw_vmin = { "v-min", pw_vblock_min };
static const struct pw_vblock pw_vhalf = { "v-half", pw_vblock_half };

/* The slot grid: each device's F and B passes by slot. */
struct pw_vgrid {
	const struct pw_problem *p;
	int	n, m;
	int	len;		/* slots per device */
	struct pw_op *cell;	/* [n * len]: kind PW_NKINDS where free */
	int	*at;		/* [(n * PW_NVPASS) * m]: slot of each pass */
	struct pw_op *wq;	/* [2m]: a walk's pending W's */
};

static struct pw_op
pw_vpass_op(const struct pw_problem *p, int d, enum pw_vpass pass, int mb)
{
	struct pw_op op;

	op.kind = pass == PW_VF0 || pass == PW_VF1 ? PW_F : PW_B;
	op.stage = pw_v_stage(p, d, pass == PW_VF0 || pass == PW_VB0 ? 0 : 1);
	op.mb = mb;
	return op;
}

static int *
pw_vgrid_at(struct pw_vgrid *g, int d, enum pw_vpass pass, int mb)
{
	return &g->at[((size_t)d * PW_NVPASS + pass) * (size_t)g->m +
	    (size_t)mb];
}

static struct pw_op *
pw_vgrid_cell(struct pw_vgrid *g, int d, int slot)
{
	assert(slot >= 0 && slot < g->len);
	return &g->cell[(size_t)d * (size_t)g->len + (size_t)slot];
}

/* Returns the grid of BLOCK repeated for P's microbatches (caller frees
 * with pw_vgrid_free). */
static struct pw_vgrid *
pw_vgrid_new(const struct pw_problem *p, const struct pw_vblock *block)
{
	struct pw_vgrid *g = pw_xcalloc(1, sizeof *g);
	int slot[PW_NVPASS], d, k, j, last = 0;
	size_t i, ncells;

	g->p = p;
	g->n = p->devices;
	g->m = p->microbatches;
	for (d = 0; d < g->n; d++) {
		block->slots(g->n, d, slot);
		for (k = 0; k < PW_NVPASS; k++)
			if (slot[k] > last)
				last = slot[k];
	}
	g->len = last + PW_VBLOCK_PERIOD * (g->m - 1) + 1;
	ncells = (size_t)g->n * (size_t)g->len;
	g->cell = pw_xmalloc(ncells * sizeof *g->cell);
	for (i = 0; i < ncells; i++)
		g->cell[i].kind = PW_NKINDS;
	g->at = pw_xcalloc((size_t)g->n * PW_NVPASS * (size_t)g->m,
	    sizeof *g->at);
	g->wq = pw_xcalloc(2 * (size_t)g->m, sizeof *g->wq);
	for (d = 0; d < g->n; d++) {
		block->slots(g->n, d, slot);
		for (k = 0; k < PW_NVPASS; k++)
			for (j = 0; j < g->m; j++) {
				int t = slot[k] + PW_VBLOCK_PERIOD * j;

				assert(pw_vgrid_cell(g, d, t)->kind ==
				    PW_NKINDS);
				*pw_vgrid_cell(g, d, t) = pw_vpass_op(p, d, k,
				    j);
				*pw_vgrid_at(g, d, k, j) = t;
			}
	}
	return g;
}

static void
pw_vgrid_free(struct pw_vgrid *g)
{
	if (g == NULL)
		return;
	free(g->cell);
	free(g->at);
	free(g->wq);
	free(g);
}

/*
 * Walks device D's slots as its order runs them: its passes by slot, in
 * each free slot the oldest pending W, the W's still pending at the end
 * last.  Appends that order to SCHED unless it is NULL; returns the peak
 * in chunk activations.
 */
static int
pw_vgrid_walk(struct pw_vgrid *g, int d, struct pw_schedule *sched)
{
	struct pw_op op;
	int t, head = 0, len = 0, live = 0, peak = 0;

	for (t = 0; t < g->len || (sched != NULL && head < len); t++) {
		op = t < g->len ? *pw_vgrid_cell(g, d, t) :
		    (struct pw_op){ PW_NKINDS, 0, 0 };
		if (op.kind == PW_NKINDS) {
			if (head == len)
				continue;
			op = g->wq[head++];
			op.kind = PW_W;
			live--;
		} else if (op.kind == PW_B)
			g->wq[len++] = op;
		else if (++live > peak)
			peak = live;
		if (sched != NULL)
			pw_schedule_append(sched, g->p, op);
	}
	return peak;
}

/* The pass whose output PASS of microbatch MB on device D consumes, as
 * (device, pass); false for the first forward. */
static bool
pw_vpass_dep(int n, int d, enum pw_vpass pass, int *dd, enum pw_vpass *dp)
{
	switch (pass) {
	case PW_VF0:
		*dd = d - 1;
		*dp = PW_VF0;
		return d > 0;
	case PW_VF1:
		*dd = d == n - 1 ? d : d + 1;
		*dp = d == n - 1 ? PW_VF0 : PW_VF1;
		return true;
	case PW_VB1:
		*dd = d == 0 ? d : d - 1;
		*dp = d == 0 ? PW_VF1 : PW_VB1;
		return true;
	default:
		*dd = d == n - 1 ? d : d + 1;
		*dp = d == n - 1 ? PW_VB1 : PW_VB0;
		return true;
	}
}

/* The earliest slot for PASS of microbatch MB on device D: after its
 * input's pass and after the same pass of the microbatch before. */
static int
pw_vgrid_earliest(struct pw_vgrid *g, int d, enum pw_vpass pass, int mb)
{
	enum pw_vpass dp;
	int dd, lo = 0;

	if (pw_vpass_dep(g->n, d, pass, &dd, &dp))
		lo = *pw_vgrid_at(g, dd, dp, mb) + 1;
	if (mb > 0 && *pw_vgrid_at(g, d, pass, mb - 1) + 1 > lo)
		lo = *pw_vgrid_at(g, d, pass, mb - 1) + 1;
	return lo;
}

/* Moves the pass at slot T of device D to the earliest free slot that its
 * inputs allow and that keeps D's peak at most PEAK. */
static void
pw_vgrid_advance(struct pw_vgrid *g, int d, int t, int peak)
{
	struct pw_op op = *pw_vgrid_cell(g, d, t);
	enum pw_vpass pass;
	int c;

	pass = op.kind == PW_F ? (op.stage == d ? PW_VF0 : PW_VF1) :
	    (op.stage == d ? PW_VB0 : PW_VB1);
	for (c = pw_vgrid_earliest(g, d, pass, op.mb); c < t; c++) {
		if (pw_vgrid_cell(g, d, c)->kind != PW_NKINDS)
			continue;
		*pw_vgrid_cell(g, d, c) = op;
		pw_vgrid_cell(g, d, t)->kind = PW_NKINDS;
		if (pw_vgrid_walk(g, d, NULL) <= peak) {
			*pw_vgrid_at(g, d, pass, op.mb) = c;
			return;
		}
		*pw_vgrid_cell(g, d, t) = op;
		pw_vgrid_cell(g, d, c)->kind = PW_NKINDS;
	}
}

/*
 * Reorders the warm-up and the cool-down.  Passes go in slot order (then
 * device order); a pass only ever moves earlier and only once, when its
 * turn comes, so the one at slot T of device D is still where the block
 * put it, and its inputs have found their final slots before it.
 */
static void
pw_vgrid_reorder(struct pw_vgrid *g)
{
	int *peak = pw_xcalloc((size_t)g->n, sizeof *peak);
	int d, t, lo, hi;

	for (d = 0; d < g->n; d++)
		peak[d] = pw_vgrid_walk(g, d, NULL);
	lo = *pw_vgrid_at(g, 0, PW_VB0, 0);
	hi = *pw_vgrid_at(g, 0, PW_VF0, g->m - 1);
	for (t = 0; t < g->len; t++)
		for (d = 0; d < g->n; d++)
			if ((t < lo || t > hi) &&
			    pw_vgrid_cell(g, d, t)->kind != PW_NKINDS)
				pw_vgrid_advance(g, d, t, peak[d]);
	free(peak);
}

static int
pw_vblock_build(const struct pw_vblock *block, const struct pw_problem *p,
    struct pw_schedule **out, struct pw_error *err)
{
	struct pw_vgrid *g;
	struct pw_schedule *sched;
	int rc, d;

	*out = NULL;
	if ((rc = pw_v_applies(block->name, p, err)) != PW_OK)
		return rc;
	g = pw_vgrid_new(p, block);
	pw_vgrid_reorder(g);
	sched = pw_schedule_new(p);
	sched->family = pw_xstrdup(block->name);
	for (d = 0; d < p->devices; d++)
		pw_vgrid_walk(g, d, sched);
	pw_vgrid_free(g);
	*out = sched;
	return PW_OK;
}

int
pw_family_v_half(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_vblock_build(&pw_vhalf, p, out, err);
}

int
pw_family_v_min(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_vblock_build(&pw_vmin, p, out, err);
}
