/*
 * heuristic.c - the memory-aware list scheduler that gives the optimizer
 * its first incumbent, for any placement of stages on devices.
 *
 * An event-driven list scheduler writes every device's order in time
 * order (the scheduler of family_zb.c, generalized): each device decides
 * its next op among those whose inputs are committed, starting when the
 * device is free and the input has arrived, and the device whose decided
 * op starts first commits it.  Every time it uses is therefore exact (the
 * simulator's), and so is its memory level: a device runs one op at a
 * time, so the level at an F's start is static + the F's in flight + the
 * holds of W owed.  The backward is always split (never slower than
 * fused), and the ops of one kind of a stage run in microbatch order.
 *
 * Memory look-ahead: an F goes only if it fits now (after W that free
 * what it needs) and leaves the device able to progress.  Microbatch j
 * is in flight on a device when some but not all of its F there are
 * done; its remaining F need R(j) more, and nothing of it or of a younger
 * microbatch is freed before they run, while older ones always drain (B
 * and W allocate nothing).  So an F is admitted only if afterwards every
 * in-flight j has static + (what j and the younger in-flight hold) +
 * R(j) within the limit: the oldest unfinished microbatch can then
 * always progress, and the orders never deadlock on memory.
 *
 * Policies (a grid searched exhaustively): F or B first when both can
 * start at once; whether an F may delay a B that has arrived (the guard);
 * among a device's stages, the lower or higher stage's F and B first;
 * whether W only fill gaps they fit, fill gaps at least half of them
 * fits, fill every gap, or follow their B; and how much of its memory a
 * device may keep for the W it owes before the oldest goes first.  The
 * last two set how late a device's W run, which is what memory-bound
 * pipelines turn on: owing W lets a device return its B sooner (the
 * first device then starts the next F sooner), but a device that owes
 * as many as its memory holds must run one W per microbatch from then
 * on, and the gaps the arrivals leave are rarely a whole W long
 * (docs/solver.md, step 3, has what the rules give on bench_solver's
 * case (d)).  After the grid, where nothing moves to the host, each
 * device in turn tries the other W rules with the best policy.
 * Offload: where activations may move, the orders may keep an extra
 * number of stage-activations above the limit, and pw_offload_plan
 * (which moves no compute op) moves what it must, by peak shaving alone
 * and after PipeOffload's rule on every activation; each policy searches
 * the largest extra whose plan still fits.  The best feasible schedule
 * by the objective wins.  When no policy finds one, the grid runs again
 * with one microbatch in the pipeline at a time (the F of j on the first
 * stage waits for the B of j - 1 there): where one microbatch alone fits
 * with its lower stages' activations on the host, this often does when
 * the pipelined orders cannot.  (Caps from half the devices down to two
 * never fit where one did not, on 25 random problems that needed it.)
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum pw_htie {
	PW_HT_B,		/* B first when both can start at once */
	PW_HT_F,
	PW_HT_N
};

enum pw_hfill {
	PW_HW_FIT,		/* W only where they end before the next F/B */
	PW_HW_FILL,		/* W in every gap, delaying the next op */
	PW_HW_EAGER,		/* W right after their B (least memory) */
	PW_HW_HALF,		/* W where they delay the next F/B by at most
				 * half their time */
	PW_HW_N
};

/* The W rules of the grid: the classic three, then the ones that cap
 * what a device owes (after them, so that where they find nothing
 * better the classic policy's schedule stands). */
static const struct pw_hwrule {
	enum pw_hfill fill;
	/* The share of a device's memory (limit less static) the holds of
	 * the W it owes may reach before its oldest W goes first; 0: no
	 * cap but the limit. */
	double	owe;
} pw_heur_wrules[] = {
	{ PW_HW_FIT, 0 }, { PW_HW_FILL, 0 }, { PW_HW_EAGER, 0 },
	{ PW_HW_HALF, 0 },
	{ PW_HW_FIT, 0.25 }, { PW_HW_FIT, 0.35 }, { PW_HW_FIT, 0.45 },
	{ PW_HW_FIT, 0.55 },
	{ PW_HW_HALF, 0.25 }, { PW_HW_HALF, 0.35 }, { PW_HW_HALF, 0.45 },
	{ PW_HW_HALF, 0.55 },
};

#define PW_HEUR_CLASSIC	3	/* the first rules, one block of the grid */
#define PW_HEUR_NRULES	(sizeof pw_heur_wrules / sizeof pw_heur_wrules[0])

/* Among one device's stages, whose F and whose B go first. */
enum pw_horder {
	PW_HO_CRIT,		/* F low, B high: the longer remaining path */
	PW_HO_DEPTH,		/* F high, B high: fewer microbatches in flight */
	PW_HO_BREADTH,		/* F low, B low */
	PW_HO_DRAIN,		/* F high, B low */
	PW_HO_N
};

/* How many ops back the bound on an arrival follows the dependencies. */
#define PW_HEUR_DEPTH	12

struct pw_hpolicy {
	enum pw_htie tie;
	bool	guard;
	enum pw_horder order;
	struct pw_hwrule w;
	/* [devices]: each device's own W rule (the descent's), or NULL: W
	 * for every device. */
	const struct pw_hwrule *per_device;
	bool	one;		/* one microbatch in the pipeline at a time */
};

struct pw_hdev {
	int	*stage;		/* its stages, in pipeline order */
	int	nstage;
	double	*below;		/* [nstage + 1]: act of its first i stages */
	double	limit;		/* what the orders keep to, tolerance included */
	double	free;		/* end of its last committed op */
	double	level;		/* bytes after its last committed op */
	/* The next commit, decided again when the device or a neighbour
	 * commits. */
	bool	decided;
	struct pw_op next;
	double	start;
};

struct pw_heur {
	const struct pw_problem *p;
	const struct pw_hpolicy *pol;
	struct pw_schedule *sched;
	int	S, m, n;
	double	*hop;			/* [S]: pw_problem_hop */
	/* [S]: the earliest start of any F, any B of the stage. */
	double	*rel_f, *rel_b;
	int	*nf, *nb, *nw;		/* [S]: committed F, B, W */
	double	*fend, *bend;		/* [S * m] */
	struct pw_hdev *dev;		/* [n] */
	/* Pins by their later op (CSR over the op universe): the ops that
	 * must be committed first. */
	size_t	*pin_first;
	size_t	*pin_before;
	bool	*done;			/* [universe] */
	size_t	left;
	bool	bitten;		/* the limit refused an F, or forced a W */
	/* Set (once a schedule is in hand): a run polls it and gives up,
	 * so that a stop takes effect within a fraction of a run. */
	atomic_int *stop;
};

/* A candidate of one device's decision. */
struct pw_hcand {
	struct pw_op op;
	double	est;		/* when it would start */
	int	forced;		/* W to run first so that an F fits */
};

/* A pinned op as the heuristic's orders hold it: a fused backward is its
 * B, which starts when the fused op would. */
static struct pw_op
pw_heur_split(struct pw_op op)
{
	if (op.kind == PW_BW)
		op.kind = PW_B;
	return op;
}

static bool
pw_heur_pins_ok(const struct pw_heur *h, struct pw_op op)
{
	size_t i, k = pw_op_index(h->p, op);

	for (i = h->pin_first[k]; i < h->pin_first[k + 1]; i++)
		if (!h->done[h->pin_before[i]])
			return false;
	return true;
}

/* When the input of the next op of KIND on stage S is there; false while
 * it is not committed. */
static bool
pw_heur_ready(const struct pw_heur *h, enum pw_kind kind, int s, double *r)
{
	int j;

	switch (kind) {
	case PW_F:
		j = h->nf[s];
		if (j == h->m || (s > 0 && h->nf[s - 1] <= j))
			return false;
		if (s == 0 && h->pol->one && h->nb[0] < j)
			return false;
		*r = s == 0 ? 0 : h->fend[(s - 1) * h->m + j] + h->hop[s - 1];
		return true;
	case PW_B:
		j = h->nb[s];
		if (j == h->nf[s] || (s < h->S - 1 && h->nb[s + 1] <= j))
			return false;
		*r = s == h->S - 1 ? h->fend[s * h->m + j] :
		    h->bend[(s + 1) * h->m + j] + h->hop[s];
		return true;
	case PW_W:
		j = h->nw[s];
		if (j == h->nb[s])
			return false;
		*r = h->bend[s * h->m + j];
		return true;
	default:
		break;
	}
	assert(!"not a compute kind");
	return false;
}

/* The larger and the smaller of two times (no NaN here). */
static double
pw_heur_max(double a, double b)
{
	return a > b ? a : b;
}

static double
pw_heur_min(double a, double b)
{
	return a < b ? a : b;
}

/* A lower bound on the end of F or B of (S, J): exact once committed,
 * else from its device's free time and its input's bound, down to DEPTH
 * ops (then the op's static release). */
static double
pw_heur_lb_end(const struct pw_heur *h, enum pw_kind kind, int s, int j,
    int depth)
{
	const struct pw_stage *st = &h->p->stages[s];
	double in;

	if (kind == PW_F) {
		if (j < h->nf[s])
			return h->fend[s * h->m + j];
		if (depth == 0 || s == 0)
			in = h->rel_f[s];
		else
			in = pw_heur_lb_end(h, PW_F, s - 1, j, depth - 1) +
			    h->hop[s - 1];
		return pw_heur_max(h->dev[st->device].free, in) + st->f;
	}
	if (j < h->nb[s])
		return h->bend[s * h->m + j];
	if (depth == 0)
		in = h->rel_b[s];
	else if (s == h->S - 1)
		in = pw_heur_lb_end(h, PW_F, s, j, depth - 1);
	else
		in = pw_heur_lb_end(h, PW_B, s + 1, j, depth - 1) + h->hop[s];
	return pw_heur_max(h->dev[st->device].free, in) + st->b;
}

/* A lower bound on when the next op of KIND on stage S can start. */
static double
pw_heur_lb_start(const struct pw_heur *h, enum pw_kind kind, int s)
{
	if (kind == PW_F)
		return s == 0 ? 0 : pw_heur_lb_end(h, PW_F, s - 1, h->nf[s],
		    PW_HEUR_DEPTH) + h->hop[s - 1];
	if (s == h->S - 1)
		return pw_heur_lb_end(h, PW_F, s, h->nb[s], PW_HEUR_DEPTH);
	return pw_heur_lb_end(h, PW_B, s + 1, h->nb[s], PW_HEUR_DEPTH) +
	    h->hop[s];
}

/* The stage of device D's oldest W that may run (least B end), or -1. */
static int
pw_heur_oldest_w(const struct pw_heur *h, int d, const int *nw)
{
	const struct pw_hdev *v = &h->dev[d];
	int i, s, best = -1;

	for (i = 0; i < v->nstage; i++) {
		s = v->stage[i];
		if (nw[s] >= h->nb[s] ||
		    !pw_heur_pins_ok(h, (struct pw_op){ PW_W, s, nw[s] }))
			continue;
		if (best < 0 || h->bend[s * h->m + nw[s]] <
		    h->bend[best * h->m + nw[best]])
			best = s;
	}
	return best;
}

/*
 * True when the next F of stage S may go on device D: it fits after the
 * oldest W run first (their number in *FORCED, their time in *WTIME) and
 * leaves every in-flight microbatch able to finish its F (see the top).
 */
static bool
pw_heur_admit(struct pw_heur *h, int d, int s, int *forced,
    double *wtime)
{
	const struct pw_problem *p = h->p;
	const struct pw_hdev *v = &h->dev[d];
	double act = p->stages[s].act, level = v->level, held = 0;
	int *nw, k, j, lo, hi, ws;

	/* The in-flight microbatches after this F: [lo, hi). */
	if (v->nstage > 1) {
		lo = h->nf[v->stage[v->nstage - 1]] +
		    (s == v->stage[v->nstage - 1]);
		hi = h->nf[v->stage[0]] + (s == v->stage[0]);
		k = 0;
		for (j = hi - 1; j >= lo; j--) {
			/* k: the stages of D whose F of j is done. */
			while (k < v->nstage && h->nf[v->stage[k]] +
			    (s == v->stage[k]) > j)
				k++;
			held += v->below[k];
			if (p->memory[d].static_bytes + held +
			    v->below[v->nstage] - v->below[k] > v->limit) {
				h->bitten = true;
				return false;
			}
		}
	}
	*forced = 0;
	*wtime = 0;
	if (level + act <= v->limit)
		return true;
	h->bitten = true;
	nw = pw_xmalloc((size_t)h->S * sizeof *nw);
	memcpy(nw, h->nw, (size_t)h->S * sizeof *nw);
	while (level + act > v->limit && (ws = pw_heur_oldest_w(h, d, nw)) >= 0) {
		level -= p->stages[ws].hold;
		*wtime += p->stages[ws].w;
		nw[ws]++;
		(*forced)++;
	}
	free(nw);
	return level + act <= v->limit;
}

/* True when candidate A goes before B under the policy. */
static bool
pw_heur_prefer(const struct pw_heur *h, const struct pw_hcand *a,
    const struct pw_hcand *b)
{
	bool high;

	if (fabs(a->est - b->est) > pw_solver_tol(a->est))
		return a->est < b->est;
	if (a->op.kind != b->op.kind)
		return (a->op.kind == PW_B) == (h->pol->tie == PW_HT_B);
	if (a->op.kind == PW_F)
		high = h->pol->order == PW_HO_DEPTH ||
		    h->pol->order == PW_HO_DRAIN;
	else
		high = h->pol->order == PW_HO_CRIT ||
		    h->pol->order == PW_HO_DEPTH;
	return high ? a->op.stage > b->op.stage : a->op.stage < b->op.stage;
}

/* Device D's W rule under the run's policy. */
static const struct pw_hwrule *
pw_heur_wrule(const struct pw_heur *h, int d)
{
	return h->pol->per_device != NULL ? &h->pol->per_device[d] :
	    &h->pol->w;
}

/* True when the holds of the W device D owes reach its rule's cap. */
static bool
pw_heur_owes_cap(const struct pw_heur *h, int d)
{
	const struct pw_hdev *v = &h->dev[d];
	double owed = 0, cap, owe = pw_heur_wrule(h, d)->owe;
	int i, s;

	if (owe <= 0 || !isfinite(v->limit))
		return false;
	for (i = 0; i < v->nstage; i++) {
		s = v->stage[i];
		owed += (h->nb[s] - h->nw[s]) * h->p->stages[s].hold;
	}
	cap = owe * (v->limit - h->p->memory[d].static_bytes);
	return owed >= cap - pw_solver_tol(cap);
}

/* Sets device D's next commit to W of stage S. */
static void
pw_heur_decide_w(struct pw_heur *h, int d, int s)
{
	struct pw_hdev *v = &h->dev[d];

	v->decided = true;
	v->next = (struct pw_op){ PW_W, s, h->nw[s] };
	v->start = v->free;
}

/*
 * Decides device D's next commit: the best F or B by start and policy,
 * the W that policy runs before it, or nothing while the device waits
 * for a neighbour.  FORCE (when every device waits) drops the guard and
 * lets a W run whenever one can.
 */
static void
pw_heur_decide(struct pw_heur *h, int d, bool force)
{
	struct pw_hdev *v = &h->dev[d];
	const struct pw_hpolicy *pol = h->pol;
	enum pw_hfill fill = pw_heur_wrule(h, d)->fill;
	struct pw_hcand best, bestb, c;
	double r, arrive = INFINITY, next = INFINITY, wtime;
	bool have = false, haveb = false, pending = false;
	int i, s, ws;

	v->decided = false;
	for (i = 0; i < v->nstage; i++) {
		s = v->stage[i];
		if (h->nb[s] < h->nf[s]) {
			pending = true;
			if (pw_heur_ready(h, PW_B, s, &r) &&
			    pw_heur_pins_ok(h, (struct pw_op){ PW_B, s,
			    h->nb[s] })) {
				c.op = (struct pw_op){ PW_B, s, h->nb[s] };
				c.est = pw_heur_max(v->free, r);
				c.forced = 0;
				if (!have || pw_heur_prefer(h, &c, &best))
					best = c, have = true;
				if (!haveb || pw_heur_prefer(h, &c, &bestb))
					bestb = c, haveb = true;
				arrive = pw_heur_min(arrive, r);
			} else if (!force)
				arrive = pw_heur_min(arrive, pw_heur_lb_start(h, PW_B,
				    s));
		}
		if (h->nf[s] == h->m)
			continue;
		pending = true;
		if (!pw_heur_ready(h, PW_F, s, &r)) {
			if (!force)
				next = pw_heur_min(next, pw_heur_lb_start(h, PW_F,
				    s));
			continue;
		}
		if (!pw_heur_pins_ok(h, (struct pw_op){ PW_F, s, h->nf[s] }) ||
		    !pw_heur_admit(h, d, s, &c.forced, &wtime))
			continue;
		c.op = (struct pw_op){ PW_F, s, h->nf[s] };
		c.est = pw_heur_max(v->free + wtime, r);
		if (!have || pw_heur_prefer(h, &c, &best))
			best = c, have = true;
	}
	next = pw_heur_min(next, arrive);
	/* The guard: an F must not delay a B on its way here. */
	if (have && best.op.kind == PW_F && pol->guard && !force &&
	    best.est + h->p->stages[best.op.stage].f > arrive +
	    pw_solver_tol(arrive)) {
		have = haveb;
		best = bestb;
	}
	ws = pw_heur_oldest_w(h, d, h->nw);
	if (ws >= 0) {
		/* The part of the W that must end before the next F/B. */
		double w = h->p->stages[ws].w *
		    (fill == PW_HW_HALF ? 0.5 : 1);
		bool run;

		if (have && best.forced > 0)
			run = true;
		else if (fill == PW_HW_EAGER || !pending || force ||
		    pw_heur_owes_cap(h, d))
			run = true;
		else if (have)
			run = fill == PW_HW_FILL ? v->free < best.est :
			    v->free + w <= best.est + pw_solver_tol(best.est);
		else
			run = fill == PW_HW_FILL ||
			    v->free + w <= next + pw_solver_tol(next);
		if (run) {
			pw_heur_decide_w(h, d, ws);
			return;
		}
	}
	if (!have)
		return;
	v->decided = true;
	v->next = best.op;
	v->start = best.est;
}

/* Commits device D's decided op. */
static void
pw_heur_commit(struct pw_heur *h, int d)
{
	const struct pw_problem *p = h->p;
	struct pw_hdev *v = &h->dev[d];
	struct pw_op op = v->next;
	struct pw_mem_effect mem = pw_op_memory(p, op);
	int s = op.stage, k = s * h->m + op.mb;

	assert(v->decided && p->stages[s].device == d);
	v->free = v->start + pw_op_duration(p, op);
	v->level += mem.alloc - mem.freed;
	switch (op.kind) {
	case PW_F:
		assert(op.mb == h->nf[s]);
		h->fend[k] = v->free;
		h->nf[s]++;
		break;
	case PW_B:
		assert(op.mb == h->nb[s]);
		h->bend[k] = v->free;
		h->nb[s]++;
		break;
	default:
		assert(op.kind == PW_W && op.mb == h->nw[s]);
		h->nw[s]++;
		break;
	}
	h->done[pw_op_index(p, op)] = true;
	h->left--;
	pw_schedule_append(h->sched, p, op);
	v->decided = false;
}

/* The device with the earliest decided commit (the lowest on ties), or
 * -1. */
static int
pw_heur_first(const struct pw_heur *h)
{
	int d, best = -1;

	for (d = 0; d < h->n; d++)
		if (h->dev[d].decided && (best < 0 ||
		    h->dev[d].start < h->dev[best].start))
			best = d;
	return best;
}

/*
 * Runs policy POL into a new schedule (compute orders only) in *OUT.
 * Returns false when the orders cannot complete (pins against the
 * dependencies or the microbatch order) or H's stop cut the run short.
 */
static bool
pw_heur_run(struct pw_heur *h, const struct pw_hpolicy *pol,
    struct pw_schedule **out)
{
	const struct pw_problem *p = h->p;
	int d, s, i, near[3];

	h->pol = pol;
	h->bitten = false;
	h->sched = pw_schedule_new(p);
	h->left = (size_t)h->S * (size_t)h->m * 3;
	memset(h->nf, 0, (size_t)h->S * sizeof *h->nf);
	memset(h->nb, 0, (size_t)h->S * sizeof *h->nb);
	memset(h->nw, 0, (size_t)h->S * sizeof *h->nw);
	memset(h->done, 0, pw_op_universe(p) * sizeof *h->done);
	for (d = 0; d < h->n; d++) {
		h->dev[d].free = 0;
		h->dev[d].level = p->memory[d].static_bytes;
	}
	for (d = 0; d < h->n; d++)
		pw_heur_decide(h, d, false);
	while (h->left > 0) {
		if ((d = pw_heur_first(h)) < 0) {
			for (d = 0; d < h->n; d++)
				pw_heur_decide(h, d, true);
			if ((d = pw_heur_first(h)) < 0)
				break;
		}
		if (h->stop != NULL && h->left % 1024 == 0 && *h->stop)
			break;
		s = h->dev[d].next.stage;
		pw_heur_commit(h, d);
		/* Who may decide differently now: this device and those
		 * of the neighbouring stages. */
		near[0] = d;
		near[1] = s > 0 ? p->stages[s - 1].device : d;
		near[2] = s < h->S - 1 ? p->stages[s + 1].device : d;
		for (i = 0; i < 3; i++)
			if (i == 0 || near[i] != d)
				pw_heur_decide(h, near[i], false);
	}
	if (h->left > 0) {
		pw_schedule_free(h->sched);
		h->sched = NULL;
		return false;
	}
	*out = h->sched;
	h->sched = NULL;
	return true;
}

/* Sets up H for P: device stage lists and pins; nothing allocated per
 * run. */
static void
pw_heur_init(struct pw_heur *h, const struct pw_problem *p,
    const struct pw_heuristic_opts *o)
{
	size_t u = pw_op_universe(p), i, k;
	int d, s;

	memset(h, 0, sizeof *h);
	h->p = p;
	h->S = p->nstages;
	h->m = p->microbatches;
	h->n = p->devices;
	h->nf = pw_xcalloc((size_t)h->S, sizeof *h->nf);
	h->nb = pw_xcalloc((size_t)h->S, sizeof *h->nb);
	h->nw = pw_xcalloc((size_t)h->S, sizeof *h->nw);
	h->hop = pw_xcalloc((size_t)h->S, sizeof *h->hop);
	h->rel_f = pw_xcalloc((size_t)h->S, sizeof *h->rel_f);
	h->rel_b = pw_xcalloc((size_t)h->S, sizeof *h->rel_b);
	for (s = 0; s < h->S - 1; s++)
		h->hop[s] = pw_problem_hop(p, s);
	pw_bound_releases(p, h->rel_f, h->rel_b);
	h->fend = pw_xcalloc((size_t)h->S * (size_t)h->m, sizeof *h->fend);
	h->bend = pw_xcalloc((size_t)h->S * (size_t)h->m, sizeof *h->bend);
	h->dev = pw_xcalloc((size_t)h->n, sizeof *h->dev);
	for (d = 0; d < h->n; d++) {
		struct pw_hdev *v = &h->dev[d];

		v->stage = pw_xcalloc((size_t)h->S, sizeof *v->stage);
		v->below = pw_xcalloc((size_t)h->S + 1, sizeof *v->below);
	}
	for (s = 0; s < h->S; s++) {
		struct pw_hdev *v = &h->dev[p->stages[s].device];

		v->below[v->nstage + 1] = v->below[v->nstage] +
		    p->stages[s].act;
		v->stage[v->nstage++] = s;
	}
	h->done = pw_xcalloc(u, sizeof *h->done);
	h->pin_first = pw_xcalloc(u + 1, sizeof *h->pin_first);
	h->pin_before = pw_xcalloc(o->npins + 1, sizeof *h->pin_before);
	/* A pin between a B and its own fused backward holds anyway. */
	for (i = 0; i < o->npins; i++) {
		k = pw_op_index(p, pw_heur_split(o->pins[i].after));
		if (k != pw_op_index(p, pw_heur_split(o->pins[i].before)))
			h->pin_first[k + 1]++;
	}
	for (k = 0; k < u; k++)
		h->pin_first[k + 1] += h->pin_first[k];
	for (i = 0; i < o->npins; i++) {
		k = pw_op_index(p, pw_heur_split(o->pins[i].after));
		if (k != pw_op_index(p, pw_heur_split(o->pins[i].before)))
			h->pin_before[h->pin_first[k]++] = pw_op_index(p,
			    pw_heur_split(o->pins[i].before));
	}
	/* Filling advanced each first[k] to first[k + 1]; shift back. */
	memmove(h->pin_first + 1, h->pin_first, u * sizeof *h->pin_first);
	h->pin_first[0] = 0;
}

static void
pw_heur_free(struct pw_heur *h)
{
	int d;

	for (d = 0; d < h->n; d++) {
		free(h->dev[d].stage);
		free(h->dev[d].below);
	}
	free(h->dev);
	free(h->hop);
	free(h->rel_f);
	free(h->rel_b);
	free(h->nf);
	free(h->nb);
	free(h->nw);
	free(h->fend);
	free(h->bend);
	free(h->done);
	free(h->pin_first);
	free(h->pin_before);
}

/* Sets *POL to the I-th policy of the grid, with one microbatch in the
 * pipeline at a time when ONE (only the first stage order when every
 * device has one stage); false past the end.  The grid is a block of the
 * classic W rules, then one block per other rule, each block over every
 * guard, tie and stage order. */
static bool
pw_heur_policy(int i, bool orders, bool one, struct pw_hpolicy *pol)
{

	static const enum pw_horder order[PW_HO_N] = { PW_HO_DEPTH,
	    PW_HO_DRAIN, PW_HO_CRIT, PW_HO_BREADTH };
	int rules, block = 2 * PW_HT_N * (orders ? PW_HO_N : 1);
	size_t rule;

	/* Rules in the block of I, and the first of them. */
	if (i < PW_HEUR_CLASSIC * block) {
		rules = PW_HEUR_CLASSIC;
		rule = 0;
	} else {
		i -= PW_HEUR_CLASSIC * block;
		rules = 1;
		rule = PW_HEUR_CLASSIC + (size_t)(i / block);
		if (rule >= PW_HEUR_NRULES)
			return false;
		i %= block;
	}
	pol->one = one;
	rule += (size_t)(i % rules);
	pol->w = pw_heur_wrules[rule];
	pol->per_device = NULL;
	i /= rules;
	pol->guard = i % 2 == 0;
	i /= 2;
	pol->tie = (enum pw_htie)(i % PW_HT_N);
	i /= PW_HT_N;
	pol->order = order[0];
	if (orders) {
		pol->order = order[i % PW_HO_N];
		i /= PW_HO_N;
	}
	return i == 0;
}

/* The offload search of one policy: what the orders may hold on each
 * device and how high the extra may go. */
struct pw_hsearch {
	const struct pw_problem *p;
	const struct pw_heuristic_opts *o;
	struct pw_problem *plan;	/* P with only offloadable bytes */
	double	*need;		/* [devices]: one microbatch, nothing moved */
	double	*unit;		/* [devices]: the largest activation */
	double	*full;		/* [devices]: every activation at once */
	/* The best so far, the policy that gave it, and how many times
	 * it was replaced (a freed best's address may come back). */
	struct pw_schedule *best;
	struct pw_eval eval;
	struct pw_hpolicy policy;
	size_t	nbest;
	char	why[256];	/* why the last failed attempt failed */
	/* Orders already tried (policies often agree): a hash of each
	 * and whether its plan was feasible. */
	uint64_t *seen;
	bool	*seen_ok;
	size_t	nseen;
	size_t	capseen;
};

/* True when the caller's stop is set and a schedule is in hand. */
static bool
pw_hsearch_stopped(const struct pw_hsearch *hs)
{
	return hs->best != NULL && hs->o->stop != NULL && *hs->o->stop;
}

/* FNV-1a over SCHED's compute orders. */
static uint64_t
pw_hsearch_hash(const struct pw_schedule *sched)
{
	uint64_t x = 0xcbf29ce484222325ULL;
	int d, i;

	for (d = 0; d < sched->ndevices; d++)
		for (i = 0; i < sched->device[d].len; i++) {
			const struct pw_op *op = &sched->device[d].ops[i];

			x = (x ^ (uint64_t)(d + 1)) * 0x100000001b3ULL;
			x = (x ^ (uint64_t)op->kind) * 0x100000001b3ULL;
			x = (x ^ (uint64_t)op->stage) * 0x100000001b3ULL;
			x = (x ^ (uint64_t)op->mb) * 0x100000001b3ULL;
		}
	return x;
}

/* Whether orders of hash X were tried before (their result in *OK). */
static bool
pw_hsearch_seen(const struct pw_hsearch *hs, uint64_t x, bool *ok)
{
	size_t i;

	for (i = 0; i < hs->nseen; i++)
		if (hs->seen[i] == x) {
			*ok = hs->seen_ok[i];
			return true;
		}
	return false;
}

static void
pw_hsearch_remember(struct pw_hsearch *hs, uint64_t x, bool ok)
{
	if (hs->nseen == hs->capseen) {
		hs->capseen = hs->capseen == 0 ? 64 : 2 * hs->capseen;
		hs->seen = pw_xreallocarray(hs->seen, hs->capseen,
		    sizeof *hs->seen);
		hs->seen_ok = pw_xreallocarray(hs->seen_ok, hs->capseen,
		    sizeof *hs->seen_ok);
	}
	hs->seen[hs->nseen] = x;
	hs->seen_ok[hs->nseen++] = ok;
}

/* Sets each device's limit for extra EXTRA; false when no device's
 * limit can rise further (nothing then changes). */
static bool
pw_hsearch_limits(const struct pw_hsearch *hs, struct pw_heur *h, int extra)
{
	const struct pw_problem *p = hs->p;
	double lim;
	bool grows = false;
	int d;

	for (d = 0; d < p->devices; d++) {
		lim = p->memory[d].limit;
		if (hs->plan != NULL && !isinf(lim)) {
			lim = fmax(lim, hs->need[d]);
			if (lim + (extra - 1) * hs->unit[d] < hs->full[d])
				grows = true;
			lim += extra * hs->unit[d];
		}
		h->dev[d].limit = lim + pw_solver_tol(lim);
	}
	return extra == 0 || grows;
}

/* Keeps SCHED (taking it over) if it is feasible and the best so far.
 * Returns whether it was feasible. */
static bool
pw_hsearch_keep(struct pw_hsearch *hs, struct pw_schedule *sched)
{
	struct pw_eval e;
	struct pw_error err;

	if (pw_solver_eval(hs->p, sched, hs->o->objective, hs->o->offloadable,
	    hs->o->pins, hs->o->npins, &e, &err) != PW_OK) {
		snprintf(hs->why, sizeof hs->why, "%.200s", err.msg);
		pw_schedule_free(sched);
		return false;
	}
	if (!e.feasible) {
		snprintf(hs->why, sizeof hs->why, "%s", e.why);
		pw_schedule_free(sched);
		return false;
	}
	if (hs->best == NULL || pw_eval_better(&e, &hs->eval)) {
		pw_schedule_free(hs->best);
		hs->best = sched;
		hs->eval = e;
		hs->nbest++;
	} else
		pw_schedule_free(sched);
	return true;
}

/*
 * Plans offloads on a copy of the compute orders SCHED with the rule
 * RULE (NULL: every activation; else none, peak shaving only) and keeps
 * it if it is the best feasible schedule.  Returns whether it was
 * feasible.
 */
static bool
pw_hsearch_plan(struct pw_hsearch *hs, const struct pw_schedule *sched,
    const bool *rule)
{
	struct pw_offload_opts oo;
	struct pw_schedule *plan = pw_schedule_copy(sched);
	struct pw_error err;
	bool ok;

	oo.select = PW_OFFSEL_PEAK;
	oo.margin = 0;
	oo.rule = rule;
	if (pw_offload_plan(hs->plan, plan, &oo, &err) != PW_OK) {
		snprintf(hs->why, sizeof hs->why, "%.200s", err.msg);
		pw_schedule_free(plan);
		return false;
	}
	ok = pw_hsearch_keep(hs, plan);
	return ok;
}

/*
 * Runs POL with the limits set and keeps the result if it is the best
 * feasible one: where the orders go above a limit, with offloads planned
 * by peak shaving alone and by PipeOffload's rule on every activation
 * first.  Returns whether it was feasible; *AGAIN says whether the same
 * orders were tried before (nothing is then planned again).
 */
static bool
pw_hsearch_try(struct pw_hsearch *hs, struct pw_heur *h,
    const struct pw_hpolicy *pol, bool *again)
{
	struct pw_schedule *sched = NULL;
	uint64_t x;
	bool *rule, over = false, ok = false;
	int d;

	*again = false;
	h->stop = hs->best != NULL ? hs->o->stop : NULL;
	if (!pw_heur_run(h, pol, &sched)) {
		snprintf(hs->why, sizeof hs->why, "the pins cannot hold with "
		    "the dependencies and the microbatch order");
		return false;
	}
	x = pw_hsearch_hash(sched);
	if ((*again = pw_hsearch_seen(hs, x, &ok))) {
		pw_schedule_free(sched);
		return ok;
	}
	for (d = 0; d < hs->p->devices; d++)
		over = over || h->dev[d].limit > hs->p->memory[d].limit +
		    pw_solver_tol(hs->p->memory[d].limit);
	if (over && hs->plan != NULL) {
		rule = pw_xcalloc((size_t)hs->p->nstages *
		    (size_t)hs->p->microbatches, sizeof *rule);
		ok = pw_hsearch_plan(hs, sched, rule);
		if (h->stop == NULL || !*h->stop)
			ok = pw_hsearch_plan(hs, sched, NULL) || ok;
		free(rule);
		pw_schedule_free(sched);
	} else
		ok = pw_hsearch_keep(hs, sched);
	pw_hsearch_remember(hs, x, ok);
	return ok;
}

/*
 * The largest extra for which POL's plan is feasible, searched from
 * HINT (the step up doubling while feasible and while the limits still
 * refuse something, then bisecting), or -1; every feasible run is
 * offered as the best.
 */
static int
pw_hsearch_extra(struct pw_hsearch *hs, struct pw_heur *h,
    const struct pw_hpolicy *pol, int hint)
{
	int good = -1, bad = -1, e = hint, step = 1;
	bool again;

	while (pw_hsearch_limits(hs, h, e)) {
		if (!pw_hsearch_try(hs, h, pol, &again)) {
			bad = e;
			break;
		}
		good = e;
		/* Orders another policy made (its search went on from
		 * here), or limits that refused nothing (more would change
		 * nothing). */
		if ((again && e == hint) || !h->bitten)
			return good;
		if (hs->o->stop != NULL && *hs->o->stop)
			return good;
		e += step;
		step *= 2;
	}
	/* Bisect between what fits and what does not (below HINT when
	 * even it failed). */
	while (bad > good + 1) {
		e = good + (bad - good) / 2;
		pw_hsearch_limits(hs, h, e);
		if (pw_hsearch_try(hs, h, pol, &again))
			good = e;
		else
			bad = e;
		if (hs->o->stop != NULL && *hs->o->stop)
			break;
	}
	return good;
}

/*
 * Runs every policy of the grid (with one microbatch in the pipeline at a
 * time when ONE).  Without offload each runs once; with it, each searches
 * how far above the limits its orders may go, from where the last policy
 * with its W rule got.
 */
static void
pw_hsearch_grid(struct pw_hsearch *hs, struct pw_heur *h, bool orders,
    bool one)
{
	struct pw_hpolicy pol;
	size_t nbest;
	bool again;
	int i, e, hint[PW_HW_N] = { 0 };

	for (i = 0; pw_heur_policy(i, orders, one, &pol); i++) {
		if (pw_hsearch_stopped(hs))
			break;
		nbest = hs->nbest;
		if (hs->plan == NULL) {
			pw_hsearch_limits(hs, h, 0);
			pw_hsearch_try(hs, h, &pol, &again);
		} else if ((e = pw_hsearch_extra(hs, h, &pol,
		    hint[pol.w.fill])) >= 0)
			hint[pol.w.fill] = e;
		if (hs->nbest != nbest)
			hs->policy = pol;
	}
}

/*
 * One pass of the descent over the devices: each device in turn tries
 * every other W rule, the others keeping theirs (RULE, per device), and
 * keeps one that gives a better schedule.  Returns whether the objective
 * fell (a pass that only breaks ties does not earn another).
 */
static bool
pw_hsearch_pass(struct pw_hsearch *hs, struct pw_heur *h,
    const struct pw_hpolicy *pol, struct pw_hwrule *rule)
{
	struct pw_hwrule kept;
	double before = hs->eval.objective;
	size_t r, nbest;
	bool again;
	int d;

	for (d = 0; d < h->n && !pw_hsearch_stopped(hs); d++) {
		kept = rule[d];
		for (r = 0; r < PW_HEUR_NRULES && !pw_hsearch_stopped(hs);
		    r++) {
			if (pw_heur_wrules[r].fill == kept.fill &&
			    pw_heur_wrules[r].owe == kept.owe)
				continue;
			rule[d] = pw_heur_wrules[r];
			nbest = hs->nbest;
			pw_hsearch_try(hs, h, pol, &again);
			if (hs->nbest != nbest)
				kept = rule[d];
		}
		rule[d] = kept;
	}
	return pw_solver_better(hs->eval.objective, before);
}

/* Whether the descent may make another pass after one that took TOOK
 * seconds (the caller's bounds, pw_heuristic_opts.settle). */
static bool
pw_hsearch_another(const struct pw_hsearch *hs, double took)
{
	const struct pw_heuristic_opts *o = hs->o;

	if (pw_hsearch_stopped(hs))
		return false;
	if (!o->settle)
		return true;
	return o->settle_by > 0 && pw_now() + took <= o->settle_by &&
	    pw_solver_better(hs->eval.objective, o->incumbent);
}

/*
 * The W rules device by device, from the grid's best policy: passes over
 * the devices until one lowers the objective no further.  Which rule
 * suits a device depends on where the arrivals leave it gaps, so one rule
 * for all is rarely the best, and a device's best rule moves with its
 * neighbours': on bench_solver's case (d), p=16 with 12 activations, the
 * grid's 239.4995 becomes 237.6373 in the first pass (the second finds
 * nothing), and p=32 with 24 goes from 488.4215 to 486.1120 in the first
 * and 480.9292 after four (13 s on the development machine, against 2.9
 * s for the grid and one pass).  The caller's bounds keep the passes to
 * its share of a time limit, and to where the heuristic leads its
 * incumbent.  Without offloads only: with them each try searches its
 * extra again.
 */
static void
pw_hsearch_descend(struct pw_hsearch *hs, struct pw_heur *h)
{
	struct pw_hpolicy pol = hs->policy;
	struct pw_hwrule *rule;
	double began, took;
	bool better;
	int d;

	rule = pw_xmalloc((size_t)h->n * sizeof *rule);
	for (d = 0; d < h->n; d++)
		rule[d] = pol.w;
	pol.per_device = rule;
	pw_hsearch_limits(hs, h, 0);
	do {
		began = pw_now();
		better = pw_hsearch_pass(hs, h, &pol, rule);
		took = pw_now() - began;
	} while (better && pw_hsearch_another(hs, took));
	free(rule);
}

int
pw_heuristic(const struct pw_problem *p, const struct pw_heuristic_opts *o,
    struct pw_schedule **out, struct pw_error *err)
{
	struct pw_hsearch hs;
	struct pw_heur h;
	char why[sizeof hs.why];
	bool orders = false;
	int d, s;

	*out = NULL;
	memset(&hs, 0, sizeof hs);
	hs.p = p;
	hs.o = o;
	snprintf(hs.why, sizeof hs.why, "no policy completed");
	pw_heur_init(&h, p, o);
	for (d = 0; d < p->devices; d++)
		orders = orders || h.dev[d].nstage > 1;
	if (o->offloadable != NULL) {
		hs.plan = pw_problem_copy(p);
		for (s = 0; s < p->nstages; s++)
			if (!o->offloadable[s])
				hs.plan->stages[s].offload = 0;
		hs.need = pw_xcalloc((size_t)p->devices, sizeof *hs.need);
		hs.unit = pw_xcalloc((size_t)p->devices, sizeof *hs.unit);
		hs.full = pw_xcalloc((size_t)p->devices, sizeof *hs.full);
		for (d = 0; d < p->devices; d++) {
			hs.need[d] = pw_bound_need(p, d, NULL);
			hs.full[d] = p->memory[d].static_bytes;
		}
		for (s = 0; s < p->nstages; s++) {
			d = p->stages[s].device;
			hs.unit[d] = fmax(hs.unit[d], p->stages[s].act);
			hs.full[d] += p->microbatches * p->stages[s].act;
		}
	}
	pw_hsearch_grid(&hs, &h, orders, false);
	if (hs.best != NULL && hs.plan == NULL)
		pw_hsearch_descend(&hs, &h);
	if (hs.best == NULL) {
		/* Failing too, one at a time leaves the pipelined reason,
		 * which says more. */
		memcpy(why, hs.why, sizeof why);
		pw_hsearch_grid(&hs, &h, orders, true);
		if (hs.best == NULL)
			memcpy(hs.why, why, sizeof why);
	}
	pw_heur_free(&h);
	pw_problem_free(hs.plan);
	free(hs.need);
	free(hs.unit);
	free(hs.full);
	free(hs.seen);
	free(hs.seen_ok);
	if (hs.best == NULL) {
		pw_error_set(err, "the heuristic found no schedule within the "
		    "limits: %s", hs.why);
		return PW_ERR_INPUT;
	}
	*out = hs.best;
	return PW_OK;
}
