/*
 * family_zb.c - Zero Bubble's automatic schedule under a memory limit
 * (Qi, Wan, Huang, Lin; ICLR 2024, section 3.1): one stage per device,
 * backward split into B and W, no offload.
 *
 * An event-driven list scheduler writes every device's order in time
 * order: among the devices, the one whose next F or B can start first
 * commits it.  A device runs its next F or B as soon as it can (the warm-up
 * takes as many F as memory and an in-flight cap allow before the first B
 * arrives; the steady state then alternates F and B); W go into the idle
 * gap before an op, or free the memory an F needs, or keep a rhythm; the
 * remaining W close the order.  An op is decided only once its input is
 * committed, so a device takes an F only when the device above has taken
 * it (stage i stays an F ahead of stage i+1), and every time the scheduler
 * uses is exact: its times are the simulator's.  A device runs one op at
 * a time, so its order-based memory level at each F (static + act per F
 * in flight + hold per W owed) is the model's peak, kept within the limit.
 *
 * The heuristic's choices form a grid searched exhaustively, keeping the
 * smallest largest device span (the table's metric: a device that starts
 * late is not charged for it): how fast the in-flight cap falls along the
 * pipeline; whether warm-up F may delay the first B; F or B first when
 * both can start (or strict alternation); the W policy for a gap shorter
 * than W (leave it idle, fill it, or fill it when idling would make this
 * device the idlest, the paper's rule); and whether W also follow B in
 * ZB-H1/H2's rhythm.  Device 0's cap starts at what its memory holds; for
 * the best policy the smallest cap with the same span is then kept, so
 * the warm-up is no longer than is useful.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"

/* What to do with a gap before an op that is shorter than a W. */
enum pw_zb_fill {
	PW_ZB_FIT,		/* leave it idle */
	PW_ZB_FILL,		/* run a W anyway, delaying the op */
	PW_ZB_SLACK,		/* run a W when idling would make this device
				 * the idlest so far (the paper's rule) */
	PW_ZB_NFILLS
};

/* Which of F and B goes first when both can start at once. */
enum pw_zb_tie {
	PW_ZB_B_FIRST,		/* B: it carries the critical path */
	PW_ZB_F_FIRST,
	PW_ZB_ALTERNATE,	/* the kind not run last: 1F1B's rhythm */
	PW_ZB_STRICT,		/* that rhythm even when the other could start
				 * first, as ZB-H1 and H2 run */
	PW_ZB_NTIES
};

struct pw_zb_policy {
	int	cap;		/* F in flight on device 0 */
	int	slope;		/* the cap falls by this much per device */
	enum pw_zb_fill fill;
	bool	rhythm;		/* device d owing more than slope * d W runs
				 * one after each B (ZB-H1 and H2's rhythm) */
	bool	guard;		/* no warm-up F that ends after the first B
				 * could start */
	enum pw_zb_tie tie;
};

struct pw_zb_dev {
	double	limit;		/* bytes, after the family's cap */
	int	cap;		/* F in flight (committed, B not yet) */
	double	free;		/* end of the last committed op */
	double	first;		/* start of F of microbatch 0 */
	double	idle;		/* gaps after the first op */
	double	peak;		/* bytes, the highest level at an F */
	int	nf, nb, nw;	/* committed F, B, W, each in mb order */
	bool	last_f;		/* the last F or B committed was an F */
	/* The next commit; decided again after this device or a neighbour
	 * commits. */
	bool	decided;	/* false: done, or waits for a neighbour */
	enum pw_kind kind;
	double	ready;		/* when its input is there */
	double	start;
	int	nwait;		/* W to run before it */
};

struct pw_zb {
	const struct pw_problem *p;
	const struct pw_zb_policy *pol;
	struct pw_schedule *sched;	/* NULL while searching */
	int	n, m;
	struct pw_zb_dev *dev;		/* [n] */
	double	*fend, *bend;		/* [n * m]: ends of committed F, B */
	double	maxidle;
	/* A tournament over the devices' decided commits: node i >= 1 holds
	 * the device whose commit starts first under it (the lower device on
	 * ties) and that start, INFINITY for none; device d's leaf is
	 * nleaves + d. */
	int	nleaves;
	int	*win;				/* [2 * nleaves] */
	double	*key;				/* [2 * nleaves] */
};

/* How good a run is: the largest device span first, then the largest
 * activation peak (no more warm-up than is useful), then the sum of the
 * spans. */
struct pw_zb_score {
	double	span;
	double	peak;
	double	sum;
};

/* Bytes on device D after an F starts with NF forwards, NB backwards and
 * NW weight gradients done. */
static double
pw_zb_level(const struct pw_zb *z, int d, int nf, int nb, int nw)
{
	const struct pw_stage *st = &z->p->stages[d];

	return z->p->memory[d].static_bytes + (nf - nb) * st->act +
	    (nb - nw) * st->hold;
}

/* The W device D must run before its next F fits its limit, or -1 when
 * the F cannot fit before more B. */
static int
pw_zb_forced(const struct pw_zb *z, int d)
{
	const struct pw_zb_dev *v = &z->dev[d];
	double limit = v->limit + 1e-9 * fmax(1, fabs(v->limit));
	int k;

	for (k = 0; v->nw + k <= v->nb; k++)
		if (pw_zb_level(z, d, v->nf + 1, v->nb, v->nw + k) <= limit)
			return k;
	return -1;
}

bool
pw_zb_dep(const struct pw_problem *p, struct pw_op op, struct pw_pred *dep)
{
	struct pw_pred deps[PW_MAX_DEPS];
	int i, n = pw_op_deps(p, op, NULL, deps);

	for (i = 0; i < n; i++)
		if (deps[i].op.kind != PW_BW &&
		    !pw_kind_is_transfer(deps[i].op.kind)) {
			*dep = deps[i];
			return true;
		}
	return false;
}

/* Whether F or B OP is committed (stage s on device s). */
static bool
pw_zb_committed(const struct pw_zb *z, struct pw_op op)
{
	const struct pw_zb_dev *v = &z->dev[op.stage];

	return op.mb < (op.kind == PW_F ? v->nf : v->nb);
}

static double pw_zb_end(const struct pw_zb *, struct pw_op);

/*
 * When F or B OP's input is there: 0 for the first forward, else its
 * dependency's end (pw_zb_end) plus the hop, a lower bound until that is
 * committed.  With EXACT, false while it is not.
 */
static bool
pw_zb_input(const struct pw_zb *z, struct pw_op op, bool exact, double *r)
{
	struct pw_pred dep;

	*r = 0;
	if (!pw_zb_dep(z->p, op, &dep))
		return true;
	if (exact && !pw_zb_committed(z, dep.op))
		return false;
	*r = pw_zb_end(z, dep.op) + dep.delay;
	return true;
}

/* Lower bound on the end of F or B OP: exact once committed, otherwise
 * from its device's free time and its input's own bound. */
static double
pw_zb_end(const struct pw_zb *z, struct pw_op op)
{
	double in;

	if (pw_zb_committed(z, op))
		return (op.kind == PW_F ? z->fend : z->bend)[op.stage * z->m +
		    op.mb];
	pw_zb_input(z, op, false, &in);
	return fmax(z->dev[op.stage].free, in) + pw_op_duration(z->p, op);
}

/* True when device D's next F is allowed and its input committed; sets
 * *R to when the input is there. */
static bool
pw_zb_ready_f(const struct pw_zb *z, int d, double *r)
{
	const struct pw_zb_dev *v = &z->dev[d];
	struct pw_op op = { PW_F, d, v->nf };

	if (op.mb == z->m || op.mb - v->nb >= v->cap)
		return false;
	return pw_zb_input(z, op, true, r);
}

/* The same for device D's next B. */
static bool
pw_zb_ready_b(const struct pw_zb *z, int d, double *r)
{
	const struct pw_zb_dev *v = &z->dev[d];
	struct pw_op op = { PW_B, d, v->nb };

	if (op.mb == v->nf)
		return false;
	return pw_zb_input(z, op, true, r);
}

/* True when the policy runs a W in a gap of GAP seconds before device D's
 * next op, shorter than the W. */
static bool
pw_zb_overlap(const struct pw_zb *z, int d, double gap)
{
	switch (z->pol->fill) {
	case PW_ZB_FIT:
		return false;
	case PW_ZB_FILL:
		return true;
	case PW_ZB_SLACK:
		return z->dev[d].idle + gap > z->maxidle;
	case PW_ZB_NFILLS:
		break;
	}
	assert(!"unknown fill policy");
	return false;
}

/*
 * Plans the W device D runs before an op whose input is there at READY:
 * the FORCED that free memory or the rhythm's due, those that end by
 * READY, and one more if the policy fills the rest of the gap.  Returns
 * how many; *START gets when the op then starts.
 */
static int
pw_zb_plan(const struct pw_zb *z, int d, double ready, int forced,
    double *start)
{
	const struct pw_zb_dev *v = &z->dev[d];
	double w = z->p->stages[d].w, t;
	int k = forced, lag = z->pol->slope * d;

	if (z->pol->rhythm && v->nb - v->nw - k > lag)
		k = v->nb - v->nw - lag;
	t = v->free + k * w;
	while (v->nw + k < v->nb && t + w <= ready) {
		t += w;
		k++;
	}
	if (v->nw + k < v->nb && t < ready && pw_zb_overlap(z, d, ready - t)) {
		t += w;
		k++;
	}
	*start = fmax(t, ready);
	return k;
}

/* True when device D's next F goes before its next B, both able to start
 * at once. */
static bool
pw_zb_f_wins(const struct pw_zb *z, int d)
{
	switch (z->pol->tie) {
	case PW_ZB_B_FIRST:
		return false;
	case PW_ZB_F_FIRST:
		return true;
	case PW_ZB_ALTERNATE:
	case PW_ZB_STRICT:
		return !z->dev[d].last_f;
	case PW_ZB_NTIES:
		break;
	}
	assert(!"unknown tie rule");
	return false;
}

/*
 * Decides device D's next commit.  The guard keeps warm-up forwards from
 * delaying the first B on its way to device 0: an F goes only if it ends
 * by the time that B could start, known exactly once its input is
 * committed and bounded before; while the bound cannot tell, the device
 * waits for more commits.  Device 0's B feeds no other device, and the
 * last device's first B needs its own F, so neither is guarded.
 */
static void
pw_zb_decide(struct pw_zb *z, int d)
{
	struct pw_zb_dev *v = &z->dev[d];
	const struct pw_stage *st = &z->p->stages[d];
	struct pw_op first_b = { PW_B, d, 0 };
	double rb = 0, rf = 0, tb = INFINITY, tf = INFINITY, bound;
	bool hb, hf, f;
	int forced = -1, wb = 0, wf = 0;

	v->decided = false;
	if (v->nb == z->m)
		return;
	hb = pw_zb_ready_b(z, d, &rb);
	hf = pw_zb_ready_f(z, d, &rf) && (forced = pw_zb_forced(z, d)) >= 0;
	if (hb)
		wb = pw_zb_plan(z, d, rb, 0, &tb);
	if (hf)
		wf = pw_zb_plan(z, d, rf, forced, &tf);
	if (hf && hb && z->pol->tie == PW_ZB_STRICT)
		f = !v->last_f;
	else
		f = hf && (!hb || tf < tb || (tf == tb && pw_zb_f_wins(z, d)));
	if (f && z->pol->guard && v->nb == 0 && v->nf > 0 && d > 0 &&
	    d < z->n - 1) {
		/* Exact, rb, once the B's input is committed. */
		pw_zb_input(z, first_b, false, &bound);
		if (tf + st->f > bound) {
			if (!hb)
				return;
			f = false;
		}
	}
	if (f) {
		v->kind = PW_F;
		v->ready = rf;
		v->start = tf;
		v->nwait = wf;
	} else if (hb) {
		v->kind = PW_B;
		v->ready = rb;
		v->start = tb;
		v->nwait = wb;
	} else
		return;
	v->decided = true;
}

/* Appends the next op of KIND to device D, starting as soon as the device
 * is free and its input (there at READY) is. */
static void
pw_zb_push(struct pw_zb *z, int d, enum pw_kind kind, double ready)
{
	struct pw_zb_dev *v = &z->dev[d];
	struct pw_op op = { kind, d, 0 };
	double start = fmax(v->free, ready);

	if (v->nf > 0)
		v->idle += start - v->free;
	z->maxidle = fmax(z->maxidle, v->idle);
	v->free = start + pw_op_duration(z->p, op);
	switch (kind) {
	case PW_F:
		if (v->nf == 0)
			v->first = start;
		v->peak = fmax(v->peak, pw_zb_level(z, d, v->nf + 1, v->nb,
		    v->nw));
		op.mb = v->nf;
		z->fend[d * z->m + v->nf++] = v->free;
		v->last_f = true;
		break;
	case PW_B:
		v->last_f = false;
		op.mb = v->nb;
		z->bend[d * z->m + v->nb++] = v->free;
		break;
	default:
		assert(kind == PW_W && v->nw < v->nb);
		op.mb = v->nw++;
		break;
	}
	if (z->sched != NULL)
		pw_schedule_append(z->sched, z->p, op);
}

/* Decides device D's next commit again and replays its matches. */
static void
pw_zb_refresh(struct pw_zb *z, int d)
{
	int i, l;

	pw_zb_decide(z, d);
	i = z->nleaves + d;
	z->key[i] = z->dev[d].decided ? z->dev[d].start : INFINITY;
	for (i /= 2; i >= 1; i /= 2) {
		l = 2 * i + (z->key[2 * i + 1] < z->key[2 * i]);
		z->win[i] = z->win[l];
		z->key[i] = z->key[l];
	}
}

/* Commits device D's decided op with the W before it. */
static void
pw_zb_commit(struct pw_zb *z, int d)
{
	struct pw_zb_dev *v = &z->dev[d];
	int i;

	assert(v->decided);
	for (i = 0; i < v->nwait; i++)
		pw_zb_push(z, d, PW_W, -INFINITY);
	pw_zb_push(z, d, v->kind, v->ready);
	for (i = d - 1; i <= d + 1; i++)
		if (i >= 0 && i < z->n)
			pw_zb_refresh(z, i);
}

/*
 * Runs policy POL (appending to SCHED unless NULL) and scores it.  The
 * orders always complete: the lowest device with a committed F not yet
 * backward either can run its B or waits for a device below it, and the
 * last device's B needs only its own F; a device with none in flight has
 * its next F as soon as the device above has committed it.
 */
static void
pw_zb_run(struct pw_zb *z, const struct pw_zb_policy *pol,
    struct pw_schedule *sched, struct pw_zb_score *score)
{
	struct pw_zb_dev *v;
	double span;
	int d, i;

	z->pol = pol;
	z->sched = sched;
	z->maxidle = 0;
	for (i = 0; i < 2 * z->nleaves; i++) {
		z->win[i] = -1;
		z->key[i] = INFINITY;
	}
	for (d = 0; d < z->n; d++) {
		v = &z->dev[d];
		v->cap = pol->cap - pol->slope * d;
		if (v->cap < 1)
			v->cap = 1;
		v->free = v->first = v->idle = 0;
		v->peak = z->p->memory[d].static_bytes;
		v->nf = v->nb = v->nw = 0;
		v->last_f = false;
		z->win[z->nleaves + d] = d;
	}
	for (d = 0; d < z->n; d++)
		pw_zb_refresh(z, d);
	while (z->key[1] < INFINITY)
		pw_zb_commit(z, z->win[1]);
	memset(score, 0, sizeof *score);
	for (d = 0; d < z->n; d++) {
		v = &z->dev[d];
		assert(v->nb == z->m);
		while (v->nw < z->m)
			pw_zb_push(z, d, PW_W, -INFINITY);
		span = v->free - v->first;
		score->span = fmax(score->span, span);
		score->sum += span;
		score->peak = fmax(score->peak, v->peak -
		    z->p->memory[d].static_bytes);
	}
}

/* True when A and B have the same span but for rounding. */
static bool
pw_zb_same_span(const struct pw_zb_score *a, const struct pw_zb_score *b)
{
	return fabs(a->span - b->span) <= 1e-9 * fmax(a->span, b->span);
}

/* True when A beats B. */
static bool
pw_zb_better(const struct pw_zb_score *a, const struct pw_zb_score *b)
{
	if (!pw_zb_same_span(a, b))
		return a->span < b->span;
	if (a->peak != b->peak)
		return a->peak < b->peak;
	return a->sum < b->sum;
}

/* Sets *POL, but for its cap, to the I-th policy of the grid; false past
 * the end. */
static bool
pw_zb_policy(int i, struct pw_zb_policy *pol)
{
	pol->slope = i % 3;
	i /= 3;
	pol->fill = (enum pw_zb_fill)(i % PW_ZB_NFILLS);
	i /= PW_ZB_NFILLS;
	pol->rhythm = i % 2 == 1;
	i /= 2;
	pol->guard = i % 2 == 1;
	i /= 2;
	pol->tie = (enum pw_zb_tie)(i % PW_ZB_NTIES);
	return i < PW_ZB_NTIES;
}

/* PW_OK when Z's problem has one stage per device in order and every
 * device's limit holds its static memory and one activation. */
static int
pw_zb_applies(const struct pw_zb *z, const char *name, struct pw_error *err)
{
	const struct pw_problem *p = z->p;
	char b1[32], b2[32], b3[32];
	double limit;
	int d;

	if (p->nstages != p->devices || !pw_problem_is_loop(p)) {
		pw_error_set(err, "%s needs one stage per device in order "
		    "(stage s on device s); this problem has %d stages on %d "
		    "devices", name, p->nstages, p->devices);
		return PW_ERR_NOT_APPLICABLE;
	}
	for (d = 0; d < p->devices; d++) {
		limit = z->dev[d].limit;
		if (p->memory[d].static_bytes + p->stages[d].act >
		    limit + 1e-9 * fmax(1, fabs(limit))) {
			pw_error_set(err, "%s: device %d's limit %s does not "
			    "hold its static memory %s plus one activation %s",
			    name, d, pw_fmt_bytes(b1, sizeof b1, limit),
			    pw_fmt_bytes(b2, sizeof b2,
			    p->memory[d].static_bytes), pw_fmt_bytes(b3,
			    sizeof b3, p->stages[d].act));
			return PW_ERR_NOT_APPLICABLE;
		}
	}
	return PW_OK;
}

/*
 * Builds the schedule for P with every device's limit capped at static +
 * FACTOR * devices * act of its stage (FACTOR 0: the problem's limits).
 */
static int
pw_zb_build(const struct pw_problem *p, const char *name, int factor,
    struct pw_schedule **out, struct pw_error *err)
{
	struct pw_zb z;
	struct pw_zb_policy pol, best;
	struct pw_zb_score score, best_score;
	double act, room;
	int d, i, full, lo, hi, rc;

	*out = NULL;
	memset(&z, 0, sizeof z);
	z.p = p;
	z.n = p->devices;
	z.m = p->microbatches;
	z.dev = pw_xcalloc((size_t)z.n, sizeof *z.dev);
	for (d = 0; d < z.n; d++) {
		z.dev[d].limit = p->memory[d].limit;
		if (factor > 0)
			z.dev[d].limit = fmin(z.dev[d].limit,
			    p->memory[d].static_bytes +
			    factor * p->devices * p->stages[d].act);
	}
	if ((rc = pw_zb_applies(&z, name, err)) != PW_OK)
		goto out;
	z.fend = pw_xmalloc((size_t)z.n * (size_t)z.m * sizeof *z.fend);
	z.bend = pw_xmalloc((size_t)z.n * (size_t)z.m * sizeof *z.bend);
	/* Two leaves at least: a leaf is never the root. */
	for (z.nleaves = 2; z.nleaves < z.n; z.nleaves *= 2)
		continue;
	z.win = pw_xmalloc(2 * (size_t)z.nleaves * sizeof *z.win);
	z.key = pw_xmalloc(2 * (size_t)z.nleaves * sizeof *z.key);
	/* Every policy with device 0's cap at as many F as its memory
	 * holds; then, for the best, the smallest cap that keeps its span
	 * (no more warm-up than is useful). */
	act = p->stages[0].act;
	room = (z.dev[0].limit - p->memory[0].static_bytes) / act;
	full = act > 0 && room < z.m ? (int)floor(room * (1 + 1e-12)) : z.m;
	for (i = 0; pw_zb_policy(i, &pol); i++) {
		pol.cap = full;
		pw_zb_run(&z, &pol, NULL, &score);
		if (i == 0 || pw_zb_better(&score, &best_score)) {
			best = pol;
			best_score = score;
		}
	}
	for (lo = 1, hi = full - 1; lo <= hi; ) {
		pol = best;
		pol.cap = lo + (hi - lo) / 2;
		pw_zb_run(&z, &pol, NULL, &score);
		if (!pw_zb_same_span(&score, &best_score)) {
			lo = pol.cap + 1;
			continue;
		}
		hi = pol.cap - 1;
		if (pw_zb_better(&score, &best_score)) {
			best = pol;
			best_score = score;
		}
	}
	*out = pw_schedule_new(p);
	(*out)->family = pw_xstrdup(name);
	pw_zb_run(&z, &best, *out, &score);
out:
	free(z.dev);
	free(z.fend);
	free(z.bend);
	free(z.win);
	free(z.key);
	return rc;
}

int
pw_family_zb_auto(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_zb_build(p, "zb-auto", 0, out, err);
}

int
pw_family_zb_1p(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_zb_build(p, "zb-1p", 1, out, err);
}

int
pw_family_zb_2p(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_zb_build(p, "zb-2p", 2, out, err);
}
