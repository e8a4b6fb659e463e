/*
 * offload.c - the offload planner: moves activations to host memory
 * between their forward and their backward without moving a compute op.
 *
 * The compute orders are simulated once and their times stay fixed.  A
 * moved activation gets an OFFLOAD in the first window its channel has
 * free after its F ends, and a RELOAD at the latest instant that lets it
 * end the margin before the backward starts with the channel free: the
 * start or the end of a compute op of its device (its anchor) or the end
 * of the transfer just before it on the channel.  Each transfer thus
 * starts where its own constraints (F end; anchor, offload end, channel
 * order) already put it, so simulating the result gives exactly the
 * planned times: the compute times, and with them the makespan, do not
 * change.
 *
 * For the same reason the planner knows the memory exactly.  A device's
 * peak is reached at an allocation: an F's start (a compute op's start)
 * or a reload's start.  The planner tracks each device's level at those
 * instants, and moving an activation lowers the levels from its
 * offload's end up to its reload's start.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bseq.h"
#include "plan.h"

/* One channel's planned transfers: disjoint busy intervals, each start
 * (the key) with its end (the value). */
struct pw_lane {
	struct pw_bseq busy;
};

/* A device: its compute ops' starts and ends (the anchors), and the
 * memory level right after each instant where it can allocate (every
 * event at that instant counted): its compute ops' starts and its
 * reloads' starts; also the ends of its offloads, where the level falls,
 * so that the moved activations away from the device are the same at an
 * instant and at the last tracked one before it. */
struct pw_track {
	const struct pw_seq *seq;
	double	*cstart;	/* [seq->len] */
	double	*cend;		/* [seq->len] */
	const struct pw_metrics *base;	/* the curves without transfers */
	struct pw_bseq levels;	/* instant -> level */
	/* As of the last pw_track_repeak (the peak shaving, which alone
	 * reads them, asks again after each move). */
	double	peak;		/* -INFINITY: nothing tracked */
	double	peak_t;		/* first instant reaching it */
};

/* An activation the planner may move. */
struct pw_act {
	int	stage;
	int	mb;
	int	device;
	int	jb;		/* its backward's position in the device order */
	double	f_end;
	double	b_start;
	double	deadline;	/* latest end of its reload */
	double	t_off, t_rel;	/* transfer durations */
	double	bytes;
	bool	rule;	/* PipeOffload's rule may move it */
	bool	rejected;	/* its transfers no longer fit */
	bool	moved;
	double	off_start;	/* planned, once moved */
	double	rel_start;
	int	anchor;		/* the reload's anchor point (pw_track_point) */
};

struct pw_xferplan {
	const struct pw_problem *p;
	struct pw_track *track;	/* [devices] */
	struct pw_lane *lane;	/* [channels] */
	struct pw_act *act;
	size_t	nact;
};

/* The first busy interval of LANE ending after T: intervals are
 * disjoint, so only the one starting last before T can start before T
 * and end after it. */
static struct pw_bpos
pw_lane_ending_after(const struct pw_lane *lane, double t)
{
	struct pw_bpos pos = pw_bseq_lower(&lane->busy, t);
	struct pw_bpos before = pw_bseq_prev(&lane->busy, pos);

	if (pw_bseq_valid(&lane->busy, before) &&
	    pw_bseq_value(&lane->busy, before) > t)
		return before;
	return pos;
}

/* The earliest start at or after RELEASE of a free window LEN long:
 * RELEASE itself, or the end of the interval that the first gap of LEN
 * follows. */
static double
pw_lane_window(struct pw_lane *lane, double release, double len)
{
	/* Intervals ending by the release cannot be in the way. */
	struct pw_bpos pos = pw_lane_ending_after(lane, release);

	if (!pw_bseq_valid(&lane->busy, pos) ||
	    pw_bseq_key(&lane->busy, pos) >= release + len)
		return release;
	return pw_bseq_value(&lane->busy, pw_bseq_gap(&lane->busy, pos, len));
}

/* The latest start from which a transfer LEN long ends by KEY as the
 * lane's test computes it (START + LEN <= KEY, rounded): KEY - LEN,
 * rounded, may be an ulp off either way, and every later start must
 * fail that test for a jump there to skip only what the walk one point
 * at a time would have refused. */
static double
pw_lane_latest_before(double key, double len)
{
	double t = key - len;

	while (t + len > key)
		t = nextafter(t, -INFINITY);
	while (nextafter(t, INFINITY) + len <= key)
		t = nextafter(t, INFINITY);
	return t;
}

/* The interval on LANE that [START, END) overlaps, or a position not
 * valid when it overlaps none. */
static struct pw_bpos
pw_lane_blocker(const struct pw_lane *lane, double start, double end)
{
	/* The first interval ending after START is the only one that can
	 * overlap. */
	struct pw_bpos pos = pw_lane_ending_after(lane, start);

	if (pw_bseq_valid(&lane->busy, pos) &&
	    pw_bseq_key(&lane->busy, pos) >= end)
		pos.blk = lane->busy.nblk;
	return pos;
}

static void
pw_track_repeak(struct pw_track *tr)
{
	tr->peak = pw_bseq_max(&tr->levels, &tr->peak_t);
}

/* Device D's track from the simulated TIMING and the memory curves BASE. */
static void
pw_track_init(struct pw_track *tr, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *timing,
    const struct pw_metrics *base, int d)
{
	int j;

	tr->seq = &sched->device[d];
	tr->base = base;
	tr->cstart = pw_xreallocarray(NULL, (size_t)tr->seq->len + 1,
	    sizeof *tr->cstart);
	tr->cend = pw_xreallocarray(NULL, (size_t)tr->seq->len + 1,
	    sizeof *tr->cend);
	pw_bseq_init(&tr->levels);
	for (j = 0; j < tr->seq->len; j++) {
		tr->cstart[j] = timing->start[pw_op_index(p, tr->seq->ops[j])];
		tr->cend[j] = timing->end[pw_op_index(p, tr->seq->ops[j])];
		/* Ops of zero duration can share an instant. */
		if (j > 0 && tr->cstart[j - 1] == tr->cstart[j])
			continue;
		pw_bseq_insert(&tr->levels, tr->cstart[j],
		    pw_memory_at(base, d, tr->cstart[j]));
	}
}

/* The backward of (stage, mb) in SCHED's orders: BW when fused, else B. */
static struct pw_op
pw_backward(const struct pw_problem *p, const struct pw_timing *timing,
    int stage, int mb)
{
	struct pw_op bw = { PW_BW, stage, mb }, b = { PW_B, stage, mb };

	return pw_timing_has(timing, pw_op_index(p, bw)) ? bw : b;
}

/* Position of OP in TR's order, found by its start time. */
static int
pw_track_find(const struct pw_track *tr, double start, struct pw_op op)
{
	const struct pw_op *ops = tr->seq->ops;
	int j = pw_first_at_least(tr->cstart, tr->seq->len, start);

	while (j < tr->seq->len && (ops[j].kind != op.kind ||
	    ops[j].stage != op.stage || ops[j].mb != op.mb))
		j++;
	assert(j < tr->seq->len);
	return j;
}

/* Fills PL's activations: every one whose stage has offload bytes. */
static void
pw_xferplan_acts(struct pw_xferplan *pl, const struct pw_timing *timing,
    const struct pw_offload_opts *opts)
{
	const struct pw_problem *p = pl->p;
	int s, j;

	pl->act = pw_xcalloc((size_t)p->nstages * (size_t)p->microbatches,
	    sizeof *pl->act);
	for (s = 0; s < p->nstages; s++) {
		const struct pw_stage *st = &p->stages[s];
		struct pw_op off = { PW_OFFLOAD, s, 0 }, rel = { PW_RELOAD, s, 0 };

		if (st->offload <= 0)
			continue;
		for (j = 0; j < p->microbatches; j++) {
			struct pw_act *a = &pl->act[pl->nact];
			struct pw_op f = { PW_F, s, j }, b;
			double b_len;

			b = pw_backward(p, timing, s, j);
			a->stage = s;
			a->mb = j;
			a->device = st->device;
			a->f_end = timing->end[pw_op_index(p, f)];
			a->b_start = timing->start[pw_op_index(p, b)];
			a->jb = pw_track_find(&pl->track[a->device], a->b_start,
			    b);
			b_len = pw_op_duration(p, b);
			a->deadline = a->b_start - opts->margin * b_len;
			a->t_off = pw_op_duration(p, off);
			a->t_rel = pw_op_duration(p, rel);
			/* A transfer shorter than the clock's resolution where
			 * it would run (4e-11 s at 4e7 s) would be an empty
			 * interval, and a channel's intervals must be
			 * disjoint and non-empty for their starts to order
			 * them: such an activation stays. */
			if (a->b_start + a->t_off == a->b_start ||
			    a->b_start + a->t_rel == a->b_start)
				continue;
			a->bytes = st->offload;
			a->rule = opts->rule == NULL ||
			    opts->rule[s * p->microbatches + j];
			pl->nact++;
		}
	}
}

/* The offload's start for A: the first window free on its channel after
 * its F ends. */
static double
pw_xferplan_offload_at(const struct pw_xferplan *pl, const struct pw_act *a)
{
	struct pw_lane *lane;

	lane = &pl->lane[pw_problem_channel(pl->p, a->device, PW_OFFLOAD)];
	return pw_lane_window(lane, a->f_end, a->t_off);
}

/* Anchor point K of TR: the start (K even) or the end (K odd) of the
 * compute op at position K / 2; non-decreasing in K. */
static double
pw_track_point(const struct pw_track *tr, int k)
{
	return k % 2 == 0 ? tr->cstart[k / 2] : tr->cend[k / 2];
}

/* The last point of TR at or before T among those up to K, or -1. */
static int
pw_track_last_by(const struct pw_track *tr, int k, double t)
{
	int lo = -1, mid;

	/* Points are non-decreasing: the answer lies in [LO, K]. */
	while (lo < k) {
		mid = lo + (k - lo + 1) / 2;
		if (pw_track_point(tr, mid) <= t)
			lo = mid;
		else
			k = mid - 1;
	}
	return lo;
}

/*
 * The reload's start for A, whose offload ends at OFF_END, in *REL and its
 * anchor point in *ANCHOR.  The reload may start at a compute op's start
 * or end before its backward (anchored there) or at the end of a
 * transfer on its channel (which it then follows, anchored at the last
 * compute op started by then): the latest of these from which it ends by
 * the deadline with the channel free.  An op's end is needed where the
 * reload must wait for what the op frees and the device's next op is
 * the backward itself.  False when there is none after OFF_END (starting
 * right at it would bring the activation back the instant it left).
 */
static bool
pw_xferplan_reload_at(const struct pw_xferplan *pl, const struct pw_act *a,
    double off_end, double *rel, int *anchor)
{
	const struct pw_track *tr = &pl->track[a->device];
	struct pw_lane *lane;
	struct pw_bseq *busy;
	struct pw_bpos i, blocker;
	double latest = a->deadline - a->t_rel, at;
	int k = 2 * a->jb - 1;

	lane = &pl->lane[pw_problem_channel(pl->p, a->device, PW_RELOAD)];
	busy = &lane->busy;
	for (;;) {
		k = pw_track_last_by(tr, k, latest);
		/* The last busy interval ending by LATEST. */
		i = pw_bseq_prev(busy, pw_lane_ending_after(lane, latest));
		at = fmax(k >= 0 ? pw_track_point(tr, k) : -INFINITY,
		    pw_bseq_valid(busy, i) ? pw_bseq_value(busy, i) :
		    -INFINITY);
		if (!(at > off_end))
			return false;
		blocker = pw_lane_blocker(lane, at, at + a->t_rel);
		if (!pw_bseq_valid(busy, blocker))
			break;
		/* Every start from the blocker's start less the reload's
		 * length up to AT overlaps the blocker, and every start
		 * after the first interval of the run of those before it
		 * with no gap the reload fits overlaps one of them: one step
		 * past them all, not one per point and interval (a lane
		 * full of reloads behind GPipe's backwards made the walk
		 * quadratic: 16 devices x 1,024 microbatches of Llama-3 8B,
		 * 2 s, and 4,096 over 20 s). */
		latest = pw_lane_latest_before(pw_bseq_key(busy,
		    pw_bseq_gap_before(busy, blocker, a->t_rel)), a->t_rel);
	}
	*rel = at;
	/* The last point by AT (a start on ties); an op's end only where
	 * the reload starts right at it, else that op's start. */
	while (k + 1 < 2 * a->jb && pw_track_point(tr, k + 1) <= at)
		k++;
	if (k % 2 == 1 && pw_track_point(tr, k) < at)
		k--;
	/* AT is after the offload, so after the F's start at least. */
	assert(k >= 0);
	*anchor = k;
	return true;
}

/* Adds instant T to TR (device DEVICE's) unless tracked: its level is
 * the base curve's less the moved activations away from the device at
 * T, which are those away at the last tracked instant before T (every
 * offload's end and reload's start is tracked), or none. */
static void
pw_xferplan_instant(struct pw_track *tr, int device, double t)
{
	struct pw_bpos pos = pw_bseq_lower(&tr->levels, t), before;
	double level = pw_memory_at(tr->base, device, t);

	if (pw_bseq_valid(&tr->levels, pos) &&
	    pw_bseq_key(&tr->levels, pos) == t)
		return;
	before = pw_bseq_prev(&tr->levels, pos);
	if (pw_bseq_valid(&tr->levels, before))
		level -= pw_memory_at(tr->base, device, pw_bseq_key(
		    &tr->levels, before)) - pw_bseq_value(&tr->levels, before);
	pw_bseq_insert(&tr->levels, t, level);
}

static void
pw_xferplan_add(struct pw_xferplan *pl, const struct pw_act *a,
    enum pw_kind kind, double start)
{
	pw_bseq_insert(&pl->lane[pw_problem_channel(pl->p, a->device,
	    kind)].busy, start, start + (kind == PW_OFFLOAD ? a->t_off :
	    a->t_rel));
}

/* Lowers A's device's levels by A's bytes from FROM to TO, where A is
 * now away; A must not yet count as moved over [FROM, TO). */
static void
pw_xferplan_lower(struct pw_xferplan *pl, const struct pw_act *a, double from,
    double to)
{
	struct pw_track *tr = &pl->track[a->device];

	pw_xferplan_instant(tr, a->device, from);
	pw_xferplan_instant(tr, a->device, to);
	pw_bseq_add(&tr->levels, from, to, -a->bytes);
}

/* Moves A: its transfers on their channels, its device's levels lower
 * from its offload's end to its reload's start. */
static void
pw_xferplan_move(struct pw_xferplan *pl, struct pw_act *a, double off,
    double rel, int anchor)
{
	pw_xferplan_add(pl, a, PW_OFFLOAD, off);
	pw_xferplan_add(pl, a, PW_RELOAD, rel);
	pw_xferplan_lower(pl, a, off + a->t_off, rel);
	a->moved = true;
	a->off_start = off;
	a->rel_start = rel;
	a->anchor = anchor;
}

static int
pw_act_by_f_end(const void *x, const void *y)
{
	const struct pw_act *a = x, *b = y;

	if (a->f_end != b->f_end)
		return a->f_end < b->f_end ? -1 : 1;
	if (a->stage != b->stage)
		return a->stage < b->stage ? -1 : 1;
	return a->mb < b->mb ? -1 : a->mb > b->mb;
}

/* Orders pointers to activations by their backward's start. */
static int
pw_actp_by_b_start(const void *x, const void *y)
{
	const struct pw_act *a = *(struct pw_act *const *)x;
	const struct pw_act *b = *(struct pw_act *const *)y;

	if (a->b_start != b->b_start)
		return a->b_start < b->b_start ? -1 : 1;
	return pw_act_by_f_end(a, b);
}

/*
 * PipeOffload's rule, placed as the authors place it: every activation
 * the rule names whose gap from F end to its deadline exceeds three round
 * trips gets its offload as early as it fits, in the order the forwards
 * end; then the reloads as late as they fit, from the last backward back.
 * Where a reload finds no room the activation stays and the placement
 * starts over without it (taking its offload out would let the transfers
 * behind it start earlier than planned).  What stayed then moves where it
 * still fits, one activation at a time.
 */
static void
pw_xferplan_lazy(struct pw_xferplan *pl)
{
	struct pw_act **by_b;
	size_t i, n = 0;
	bool again = true;
	double off, rel;
	int c, anchor;

	qsort(pl->act, pl->nact, sizeof *pl->act, pw_act_by_f_end);
	by_b = pw_xreallocarray(NULL, pl->nact + 1, sizeof *by_b);
	for (i = 0; i < pl->nact; i++) {
		struct pw_act *a = &pl->act[i];

		a->moved = a->rule &&
		    a->deadline - a->f_end > 3 * (a->t_off + a->t_rel);
		if (a->moved)
			by_b[n++] = a;
	}
	qsort(by_b, n, sizeof *by_b, pw_actp_by_b_start);
	while (again) {
		again = false;
		for (c = 0; c < pw_problem_nchannels(pl->p); c++)
			pw_bseq_clear(&pl->lane[c].busy);
		for (i = 0; i < pl->nact; i++) {
			struct pw_act *a = &pl->act[i];

			if (!a->moved)
				continue;
			a->off_start = pw_xferplan_offload_at(pl, a);
			pw_xferplan_add(pl, a, PW_OFFLOAD, a->off_start);
		}
		for (i = n; i-- > 0; ) {
			struct pw_act *a = by_b[i];

			if (!a->moved)
				continue;
			if (pw_xferplan_reload_at(pl, a, a->off_start +
			    a->t_off, &a->rel_start, &a->anchor))
				pw_xferplan_add(pl, a, PW_RELOAD, a->rel_start);
			else
				again = true, a->moved = false;
		}
	}
	for (i = 0; i < n; i++)
		if (by_b[i]->moved)
			pw_xferplan_lower(pl, by_b[i], by_b[i]->off_start +
			    by_b[i]->t_off, by_b[i]->rel_start);
	for (i = 0; i < pl->nact; i++) {
		struct pw_act *a = &pl->act[i];

		if (a->moved || !a->rule ||
		    a->deadline - a->f_end <= 3 * (a->t_off + a->t_rel))
			continue;
		off = pw_xferplan_offload_at(pl, a);
		if (pw_xferplan_reload_at(pl, a, off + a->t_off, &rel, &anchor))
			pw_xferplan_move(pl, a, off, rel, anchor);
	}
	free(by_b);
}

/* Orders pointers to moved activations by their reload's start. */
static int
pw_actp_by_rel(const void *x, const void *y)
{
	const struct pw_act *a = *(struct pw_act *const *)x;
	const struct pw_act *b = *(struct pw_act *const *)y;

	if (a->rel_start != b->rel_start)
		return a->rel_start < b->rel_start ? -1 : 1;
	return pw_act_by_f_end(a, b);
}

/*
 * Moves reloads later where transfers placed after them left room (a
 * reload placed early in the planning could not follow those), from the
 * last reload back so that each frees room for the ones before it.  A
 * reload that a transfer follows directly stays: moving it would let that
 * transfer start earlier than planned.  Returns whether any moved.
 */
static bool
pw_xferplan_delay(struct pw_xferplan *pl)
{
	struct pw_act **moved;
	struct pw_lane *lane;
	struct pw_bpos at, next;
	size_t i, n = 0;
	double rel, end;
	int anchor;
	bool any = false;

	moved = pw_xreallocarray(NULL, pl->nact + 1, sizeof *moved);
	for (i = 0; i < pl->nact; i++)
		if (pl->act[i].moved)
			moved[n++] = &pl->act[i];
	qsort(moved, n, sizeof *moved, pw_actp_by_rel);
	for (i = n; i-- > 0; ) {
		struct pw_act *a = moved[i];

		lane = &pl->lane[pw_problem_channel(pl->p, a->device,
		    PW_RELOAD)];
		end = a->rel_start + a->t_rel;
		at = pw_bseq_lower(&lane->busy, a->rel_start);
		assert(pw_bseq_valid(&lane->busy, at) &&
		    pw_bseq_key(&lane->busy, at) == a->rel_start);
		next = pw_bseq_next(&lane->busy, at);
		if (pw_bseq_valid(&lane->busy, next) &&
		    pw_bseq_key(&lane->busy, next) == end)
			continue;
		pw_bseq_remove(&lane->busy, at);
		if (!pw_xferplan_reload_at(pl, a, a->off_start + a->t_off, &rel,
		    &anchor) || rel <= a->rel_start) {
			pw_xferplan_add(pl, a, PW_RELOAD, a->rel_start);
			continue;
		}
		pw_xferplan_add(pl, a, PW_RELOAD, rel);
		pw_xferplan_lower(pl, a, a->rel_start, rel);
		a->rel_start = rel;
		a->anchor = anchor;
		any = true;
	}
	free(moved);
	return any;
}

static int
pw_act_by_gap(const void *x, const void *y)
{
	const struct pw_act *a = x, *b = y;
	double ga = a->b_start - a->f_end, gb = b->b_start - b->f_end;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (ga != gb)
		return ga > gb ? -1 : 1;
	return pw_act_by_f_end(x, y);
}

static int
pw_size_cmp(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * One device's activations for the peak shaving: their places in the
 * shaving's order (PL->act sorted by pw_act_by_gap, longest-lived first)
 * sorted by their F's end, with those ends, and the longest life: at an
 * instant only those whose F ended within that life before it can be
 * resident, which bounds the walk by the life, not by all of them (a
 * device holds a few at a time and may have tens of thousands).
 */
struct pw_shave_dev {
	size_t	*k;		/* [n] */
	double	*f_end;		/* [n] */
	int	n;
	double	longest;
	size_t	*cand;		/* [n]: room for a peak's candidates */
};

/*
 * Lowers the level of device DV's activations at tracked instant T, the
 * device's peak, if one of them resident there can move with its
 * offload ended by then and its reload later: moves the longest-lived
 * such activation and returns true.  Activations whose transfers no
 * longer fit are rejected for good (channels only fill up).
 */
static bool
pw_xferplan_shave_at(struct pw_xferplan *pl, const struct pw_shave_dev *dv,
    double t)
{
	size_t i, ncand = 0;
	double off, rel;
	int anchor, lo, hi, j;

	/* A resident activation's F ended by T and at most its life
	 * before its backward, after T (the margin: the lives are
	 * differences, rounded). */
	lo = pw_first_at_least(dv->f_end, dv->n, t - dv->longest * (1 +
	    1e-9) - 1e-12 * fabs(t));
	hi = pw_first_at_least(dv->f_end, dv->n, nextafter(t, INFINITY));
	for (j = lo; j < hi; j++) {
		const struct pw_act *a = &pl->act[dv->k[j]];

		if (!a->moved && !a->rejected && a->f_end <= t &&
		    a->b_start > t)
			dv->cand[ncand++] = dv->k[j];
	}
	qsort(dv->cand, ncand, sizeof *dv->cand, pw_size_cmp);
	for (i = 0; i < ncand; i++) {
		struct pw_act *a = &pl->act[dv->cand[i]];

		off = pw_xferplan_offload_at(pl, a);
		if (!pw_xferplan_reload_at(pl, a, off + a->t_off, &rel,
		    &anchor)) {
			a->rejected = true;
			continue;
		}
		if (off + a->t_off <= t && rel > t) {
			pw_xferplan_move(pl, a, off, rel, anchor);
			return true;
		}
	}
	return false;
}

/* pw_act_by_f_end on pointers to activations. */
static int
pw_actp_by_f_end(const void *x, const void *y)
{
	return pw_act_by_f_end(*(struct pw_act *const *)x,
	    *(struct pw_act *const *)y);
}

/* Peak shaving: always at the highest peak among the devices that can
 * still lower theirs. */
static void
pw_xferplan_shave(struct pw_xferplan *pl)
{
	const struct pw_problem *p = pl->p;
	struct pw_shave_dev *dev;
	struct pw_act **by_f;
	size_t i, at;
	bool *stuck;
	int d, best;

	qsort(pl->act, pl->nact, sizeof *pl->act, pw_act_by_gap);
	/* Each device's activations are a run of the order, its longest
	 * lived first. */
	dev = pw_xcalloc((size_t)p->devices, sizeof *dev);
	by_f = pw_xreallocarray(NULL, pl->nact + 1, sizeof *by_f);
	for (i = 0; i < pl->nact; i++) {
		by_f[i] = &pl->act[i];
		if (dev[pl->act[i].device].n++ == 0)
			dev[pl->act[i].device].longest = pl->act[i].b_start -
			    pl->act[i].f_end;
	}
	qsort(by_f, pl->nact, sizeof *by_f, pw_actp_by_f_end);
	for (d = 0; d < p->devices; d++) {
		dev[d].k = pw_xreallocarray(NULL, (size_t)dev[d].n + 1,
		    sizeof *dev[d].k);
		dev[d].f_end = pw_xreallocarray(NULL, (size_t)dev[d].n + 1,
		    sizeof *dev[d].f_end);
		dev[d].cand = pw_xreallocarray(NULL, (size_t)dev[d].n + 1,
		    sizeof *dev[d].cand);
		dev[d].n = 0;
	}
	for (i = 0; i < pl->nact; i++) {
		d = by_f[i]->device;
		at = (size_t)(by_f[i] - pl->act);
		dev[d].k[dev[d].n] = at;
		dev[d].f_end[dev[d].n++] = by_f[i]->f_end;
	}
	free(by_f);
	stuck = pw_xcalloc((size_t)p->devices, sizeof *stuck);
	for (d = 0; d < p->devices; d++) {
		pw_track_repeak(&pl->track[d]);
		stuck[d] = dev[d].n == 0 || pl->track[d].peak == -INFINITY;
	}
	for (;;) {
		best = -1;
		for (d = 0; d < p->devices; d++)
			if (!stuck[d] && (best < 0 ||
			    pl->track[d].peak > pl->track[best].peak))
				best = d;
		if (best < 0)
			break;
		if (!pw_xferplan_shave_at(pl, &dev[best],
		    pl->track[best].peak_t))
			stuck[best] = true;
		/* What it moved lowered this device's levels alone. */
		pw_track_repeak(&pl->track[best]);
	}
	for (d = 0; d < p->devices; d++) {
		free(dev[d].k);
		free(dev[d].f_end);
		free(dev[d].cand);
	}
	free(stuck);
	free(dev);
}

/* A planned transfer, for ordering each channel by start. */
struct pw_xfer {
	int	channel;
	double	start;
	struct pw_op op;
};

static int
pw_xfer_cmp(const void *x, const void *y)
{
	const struct pw_xfer *a = x, *b = y;

	if (a->channel != b->channel)
		return a->channel < b->channel ? -1 : 1;
	/* Busy intervals on one channel are disjoint, so starts differ. */
	assert(a->start != b->start);
	return a->start < b->start ? -1 : 1;
}

/* Writes the moved activations into SCHED: channel orders and anchors. */
static void
pw_xferplan_emit(const struct pw_xferplan *pl, struct pw_schedule *sched)
{
	const struct pw_problem *p = pl->p;
	struct pw_xfer *x;
	size_t i, n = 0;

	x = pw_xreallocarray(NULL, 2 * pl->nact + 1, sizeof *x);
	for (i = 0; i < pl->nact; i++) {
		const struct pw_act *a = &pl->act[i];
		const struct pw_track *tr = &pl->track[a->device];
		struct pw_op off = { PW_OFFLOAD, a->stage, a->mb };
		struct pw_op rel = { PW_RELOAD, a->stage, a->mb };

		if (!a->moved)
			continue;
		x[n].channel = pw_problem_channel(p, a->device, PW_OFFLOAD);
		x[n].start = a->off_start;
		x[n++].op = off;
		x[n].channel = pw_problem_channel(p, a->device, PW_RELOAD);
		x[n].start = a->rel_start;
		x[n++].op = rel;
		pw_schedule_set_anchor(sched, a->stage, a->mb,
		    (struct pw_anchor){ tr->seq->ops[a->anchor / 2],
		    a->anchor % 2 == 1 });
	}
	qsort(x, n, sizeof *x, pw_xfer_cmp);
	for (i = 0; i < n; i++)
		pw_schedule_append(sched, p, x[i].op);
	free(x);
}

/*
 * The planned schedule SCHED's metrics in *RESULT (the caller frees
 * them; RESULT NULL: not wanted), simulated where wanted or where
 * assertions are on: then also the planner's promise, checked on the
 * simulated result: every transfer starts when planned and the makespan
 * is the compute orders' own.  Returns PW_OK, or PW_ERR_INTERNAL (a bug)
 * when SCHED does not simulate.
 */
static int
pw_xferplan_result(const struct pw_xferplan *pl,
    const struct pw_schedule *sched, double makespan,
    struct pw_metrics **result, struct pw_error *err)
{
	const struct pw_problem *p = pl->p;
	struct pw_timing *t = NULL;
	struct pw_metrics *m;
	struct pw_error why;
	size_t i;

#ifdef NDEBUG
	if (result == NULL)
		return PW_OK;
#endif
	if (pw_simulate(p, sched, &t, &why) != PW_OK) {
		assert(!"an offload plan that does not simulate");
		pw_error_set(err, "the offload planner's schedule does not "
		    "simulate (a bug): %s", why.msg);
		return PW_ERR_INTERNAL;
	}
	for (i = 0; i < pl->nact; i++) {
		const struct pw_act *a = &pl->act[i];
		struct pw_op off = { PW_OFFLOAD, a->stage, a->mb };
		struct pw_op rel = { PW_RELOAD, a->stage, a->mb };

		if (!a->moved)
			continue;
		assert(t->start[pw_op_index(p, off)] == a->off_start);
		assert(t->start[pw_op_index(p, rel)] == a->rel_start);
	}
	m = pw_metrics_compute(p, sched, t);
	assert(m->makespan == makespan);
	(void)makespan;
	pw_timing_free(t);
	if (result != NULL)
		*result = m;
	else
		pw_metrics_free(m);
	return PW_OK;
}

/* PW_OK when OPTS are sound and SCHED has no transfers yet, else
 * PW_ERR_INPUT saying which. */
static int
pw_offload_check(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_offload_opts *opts, struct pw_error *err)
{
	char name[32];
	int c;

	if (!(opts->margin >= 0) || !isfinite(opts->margin)) {
		pw_error_set(err, "offload planner: margin must be a finite "
		    "number >= 0 (got %g)", opts->margin);
		return PW_ERR_INPUT;
	}
	for (c = 0; c < sched->nchannels; c++)
		if (sched->channel[c].len != 0) {
			pw_error_set(err, "offload planner: the schedule already "
			    "has transfers (%d on %s)", sched->channel[c].len,
			    pw_channel_name(p, c, name, sizeof name));
			return PW_ERR_INPUT;
		}
	return PW_OK;
}

/* The planner on SCHED, checked, timed as TIMING with metrics MET; the
 * planned schedule's metrics as pw_xferplan_result gives them. */
static int
pw_offload_run(const struct pw_problem *p, struct pw_schedule *sched,
    const struct pw_timing *timing, const struct pw_metrics *met,
    const struct pw_offload_opts *opts, struct pw_metrics **result,
    struct pw_error *err)
{
	struct pw_xferplan pl;
	int c, d, rc;

	memset(&pl, 0, sizeof pl);
	pl.p = p;
	pl.track = pw_xcalloc((size_t)p->devices, sizeof *pl.track);
	for (d = 0; d < p->devices; d++)
		pw_track_init(&pl.track[d], p, sched, timing, met, d);
	pl.lane = pw_xcalloc((size_t)sched->nchannels + 1, sizeof *pl.lane);
	if (p->link.present)
		pw_xferplan_acts(&pl, timing, opts);
	pw_xferplan_lazy(&pl);
	if (opts->select == PW_OFFSEL_PEAK) {
		pw_xferplan_delay(&pl);
		pw_xferplan_shave(&pl);
	}
	while (pw_xferplan_delay(&pl))
		continue;
	pw_xferplan_emit(&pl, sched);
	rc = pw_xferplan_result(&pl, sched, met->makespan, result, err);
	for (d = 0; d < p->devices; d++) {
		free(pl.track[d].cstart);
		free(pl.track[d].cend);
		pw_bseq_free(&pl.track[d].levels);
	}
	for (c = 0; c < sched->nchannels; c++)
		pw_bseq_free(&pl.lane[c].busy);
	free(pl.track);
	free(pl.lane);
	free(pl.act);
	return rc;
}

int
pw_offload_plan(const struct pw_problem *p, struct pw_schedule *sched,
    const struct pw_offload_opts *opts, struct pw_error *err)
{
	struct pw_timing *timing = NULL;
	struct pw_metrics *met;
	int rc;

	if ((rc = pw_offload_check(p, sched, opts, err)) != PW_OK ||
	    (rc = pw_simulate(p, sched, &timing, err)) != PW_OK)
		return rc;
	met = pw_metrics_compute(p, sched, timing);
	rc = pw_offload_run(p, sched, timing, met, opts, NULL, err);
	pw_metrics_free(met);
	pw_timing_free(timing);
	return rc;
}

int
pw_offload_plan_timed(const struct pw_problem *p, struct pw_schedule *sched,
    const struct pw_timing *timing, const struct pw_metrics *met,
    const struct pw_offload_opts *opts, struct pw_metrics **result,
    struct pw_error *err)
{
	int rc;

	if (result != NULL)
		*result = NULL;
	if ((rc = pw_offload_check(p, sched, opts, err)) != PW_OK)
		return rc;
	return pw_offload_run(p, sched, timing, met, opts, result, err);
}
