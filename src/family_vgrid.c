/*
 * family_vgrid.c - V-Half and V-Min (Pipeline Parallelism with
 * Controllable Memory, NeurIPS 2024) on the V placement, where device d
 * holds stages d and 2p-1-d, built on a grid of unit time slots.
 *
 * A device's two stages are its two legs: leg 0 is the V's down stroke
 * (stage d, forwards flow from device 0 to device p-1), leg 1 its up
 * stroke (stage 2p-1-d, forwards flow back from device p-1 to device 0).
 * The turn at device p-1 stays on one device, and so does the start of
 * the backward at device 0, which holds the last stage.
 *
 * Both split the backward into B and W and build compute orders only;
 * the simulator times them.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"


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

/* The pass of OP on device D, one of D's stages. */
static enum pw_vpass
pw_vpass_of(struct pw_op op, int d)
{
	if (op.kind == PW_F)
		return op.stage == d ? PW_VF0 : PW_VF1;
	return op.stage == d ? PW_VB0 : PW_VB1;
}

/* The pass whose output PASS of microbatch MB on device D consumes (its
 * op's pw_zb_dep), as (device, pass); false for the first forward. */
static bool
pw_vpass_dep(const struct pw_problem *p, int d, enum pw_vpass pass, int mb,
    int *dd, enum pw_vpass *dp)
{
	struct pw_pred dep;

	if (!pw_zb_dep(p, pw_vpass_op(p, d, pass, mb), &dep))
		return false;
	*dd = p->stages[dep.op.stage].device;
	*dp = pw_vpass_of(dep.op, *dd);
	return true;
}

/* The earliest slot for PASS of microbatch MB on device D: after its
 * input's pass and after the same pass of the microbatch before. */
static int
pw_vgrid_earliest(struct pw_vgrid *g, int d, enum pw_vpass pass, int mb)
{
	enum pw_vpass dp;
	int dd, lo = 0;

	if (pw_vpass_dep(g->p, d, pass, mb, &dd, &dp))
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
	enum pw_vpass pass = pw_vpass_of(op, d);
	int c;

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
