/*
 * local.c - local search over the devices' compute orders: simulated
 * annealing from the incumbent, each candidate re-timed exactly by the
 * simulator and judged as every incumbent is (limits, pins, offloads).
 *
 * A move rotates ops within one device's order: an adjacent swap, a
 * shift of one op by a few places, a critical op (of the chain of binding
 * predecessors back from where the objective is measured) a few places
 * earlier, or the drain move, which steps the same microbatch's backward
 * (B or BW) or weight gradient (W) one place on every device at once, so
 * that the last microbatches' B and W are reordered across the pipeline
 * together (one device's step alone only waits for its neighbours').
 * docs/solver.md says why annealing.  A move that would put an op before
 * one it directly waits for, or reorder two ops of one kind of a stage,
 * is not tried (its candidate could only deadlock, or equal one in
 * microbatch order); a candidate that deadlocks further away is
 * rejected.
 *
 * Transfers stay as they are: the channels' orders and the reloads'
 * anchors are kept (an anchor names a compute op, which every move
 * keeps), so a moved op may make a reload start elsewhere in time but
 * never leaves the schedule malformed; one that then deadlocks or breaks
 * a limit is rejected.  The windows of lns.c are what place transfers
 * anew.
 *
 * A candidate is re-timed only from its move on: the ops that start
 * before the earliest op a rotation passes over keep their times
 * (pw_simulate_after, the same timing bit for bit), which raised the
 * move rate by half at p=8, m=32 and by a third at p=32, m=128.
 *
 * Every move counts toward the search's iterations at its re-timing's
 * worth (pw_local_cost), and every choice comes from the search's
 * splitmix64 sequence, so that a round is the same for a seed and an
 * iteration limit on every run.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search.h"

/* The walk's temperature: at first this share of the mean compute op's
 * duration, cooling geometrically to PW_LOCAL_COOL of it at the round's
 * last move.  The energy is the objective plus the mean end of the ops
 * (pw_solver_ends), which tells apart the many candidates of one
 * makespan and leads the walk toward the ones that leave room. */
#define PW_LOCAL_HEAT		0.05
#define PW_LOCAL_COOL		0.01
/* Proposals a move may take to find a rotation that can be made (the
 * ones refused cost no re-timing; a move whose proposals are all refused
 * counts, so that the walk ends). */
#define PW_LOCAL_TRIES		16
/* A move counts one of the search's iterations for every PW_LOCAL_OPS
 * ops it re-times (and one more): re-timing 768 ops (p=8, m=32) took
 * 0.2 ms and 12,288 (p=32, m=128) 3.5 ms on the development machine,
 * where lp_solve ran about 13,000 simplex iterations a second in the
 * windows (lns.c's PW_LNS_RATE), so that the iteration limit weighs a
 * move as the windows' time. */
#define PW_LOCAL_OPS		256
/* A shift moves an op at most this many places. */
#define PW_LOCAL_REACH		8

/* One rotation made by a move, undone in reverse. */
struct pw_local_rot {
	int	device;
	int	from;
	int	to;
};

struct pw_local {
	const struct pw_problem *p;
	const struct pw_local_opts *o;
	struct pw_schedule *cur;	/* the walk's schedule */
	struct pw_eval cur_eval;
	double	energy;
	struct pw_schedule *best;	/* the walk's best, NULL: the start's */
	struct pw_eval best_eval;
	struct pw_local_rot *rot;	/* [nstages + 1] */
	int	nrot;
	/* The earliest start in T of an op the move's rotations passed
	 * over: the ops that start before it keep their times. */
	double	after;
	size_t	nops;			/* ops with a timing */
	struct pw_timing *t;		/* CUR's */
	size_t	*crit;			/* [universe]: CUR's critical ops */
	size_t	ncrit;
};

/* A number in [0, N) from X. */
static int
pw_local_below(uint64_t *x, int n)
{
	return n <= 1 ? 0 : (int)pw_rng_below(x, (size_t)n);
}

/* Whether A may come before B on their device when B came first: A does
 * not wait for B directly, and they are not of one kind of one stage. */
static bool
pw_local_may_precede(const struct pw_problem *p, struct pw_op a,
    struct pw_op b)
{
	struct pw_pred deps[PW_MAX_DEPS];
	int i, n;

	if (a.kind == b.kind && a.stage == b.stage)
		return false;
	n = pw_op_deps(p, a, NULL, deps);
	for (i = 0; i < n; i++)
		if (pw_op_same(deps[i].op, b))
			return false;
	return true;
}

/* Whether the op at FROM of Q may move to TO, past the ops between. */
static bool
pw_local_may_move(const struct pw_problem *p, const struct pw_seq *q,
    int from, int to)
{
	int i;

	for (i = from < to ? from + 1 : to; i <= (from < to ? to : from - 1);
	    i++)
		if (from < to ? !pw_local_may_precede(p, q->ops[i],
		    q->ops[from]) : !pw_local_may_precede(p, q->ops[from],
		    q->ops[i]))
			return false;
	return true;
}

void
pw_local_rotate(struct pw_seq *q, int from, int to)
{
	struct pw_op op = q->ops[from];

	if (from < to)
		memmove(&q->ops[from], &q->ops[from + 1], (size_t)(to - from) *
		    sizeof op);
	else
		memmove(&q->ops[to + 1], &q->ops[to], (size_t)(from - to) *
		    sizeof op);
	q->ops[to] = op;
}

/* Rotates on device D from FROM to TO when that may be, recording it;
 * whether it was made. */
static bool
pw_local_try(struct pw_local *l, int d, int from, int to)
{
	struct pw_seq *q = &l->cur->device[d];
	int i;

	if (to < 0 || to >= q->len || to == from ||
	    !pw_local_may_move(l->p, q, from, to))
		return false;
	for (i = from < to ? from : to; i <= (from < to ? to : from); i++)
		l->after = fmin(l->after, l->t->start[pw_op_index(l->p,
		    q->ops[i])]);
	pw_local_rotate(q, from, to);
	l->rot[l->nrot++] = (struct pw_local_rot){ d, from, to };
	return true;
}

static void
pw_local_undo(struct pw_local *l)
{
	struct pw_local_rot *r;

	while (l->nrot > 0) {
		r = &l->rot[--l->nrot];
		pw_local_rotate(&l->cur->device[r->device], r->to, r->from);
	}
}

/* Whether OP is of the drain move's group: W, or (not W) a backward. */
static bool
pw_local_drain_kind(struct pw_op op, bool w)
{
	return w ? op.kind == PW_W : op.kind == PW_B || op.kind == PW_BW;
}

/*
 * The drain move: one of the last microbatches (as many as there are
 * stages), its W or its backwards, one place earlier or later on every
 * device that holds them.
 */
static void
pw_local_drain(struct pw_local *l, uint64_t *x)
{
	const struct pw_problem *p = l->p;
	int last = p->microbatches < p->nstages ? p->microbatches : p->nstages;
	int mb = p->microbatches - 1 - pw_local_below(x, last);
	bool w = pw_local_below(x, 2) == 0;
	int step = pw_local_below(x, 2) == 0 ? -1 : 1;
	const struct pw_seq *q;
	int d, i;

	for (d = 0; d < p->devices; d++) {
		q = &l->cur->device[d];
		for (i = 0; i < q->len; i++)
			if (q->ops[i].mb == mb && pw_local_drain_kind(q->ops[i],
			    w)) {
				/* A step later skips the op it just passed. */
				if (pw_local_try(l, d, i, i + step) && step > 0)
					i++;
			}
	}
}

/*
 * The compute ops of L's critical path: back from the op where the
 * objective is measured (the last end; for the span, the widest
 * device's last op) along each op's binding predecessor.
 */
static void
pw_local_critical(struct pw_local *l)
{
	enum pw_objective obj = l->o->objective;
	const struct pw_problem *p = l->p;
	const struct pw_timing *t = l->t;
	const struct pw_seq *q;
	double best = -INFINITY, v;
	size_t k, at = PW_NO_BIND;
	int d;

	for (d = 0; d < p->devices; d++) {
		q = &l->cur->device[d];
		if (q->len == 0)
			continue;
		k = pw_op_index(p, q->ops[q->len - 1]);
		v = t->end[k] - (obj == PW_OBJ_SPAN ?
		    t->start[pw_op_index(p, q->ops[0])] : 0);
		if (v > best) {
			best = v;
			at = k;
		}
	}
	l->ncrit = 0;
	while (at != PW_NO_BIND) {
		if (!pw_kind_is_transfer(pw_op_from_index(p, at).kind))
			l->crit[l->ncrit++] = at;
		at = t->bind[at].pred;
	}
}

/* The critical move: an op of the critical path, a few places earlier
 * on its device (where it waited for the device, the ops before it go
 * after it; where it waited for data, what follows it moves up). */
static void
pw_local_hurry(struct pw_local *l, uint64_t *x)
{
	struct pw_op op;
	const struct pw_seq *q;
	int d, i;

	if (l->ncrit == 0)
		return;
	op = pw_op_from_index(l->p, l->crit[pw_local_below(x,
	    (int)l->ncrit)]);
	d = l->p->stages[op.stage].device;
	q = &l->cur->device[d];
	i = pw_seq_find(q, op);
	assert(i >= 0);
	pw_local_try(l, d, i, i - 1 - pw_local_below(x, PW_LOCAL_REACH));
}

/* Makes one move on L's schedule from X: how many rotations it took
 * (0: none could be made). */
static int
pw_local_propose(struct pw_local *l, uint64_t *x)
{
	const struct pw_seq *q;
	int d, i, kind, reach;

	l->nrot = 0;
	l->after = INFINITY;
	kind = pw_local_below(x, 10);
	if (kind >= 8) {
		pw_local_drain(l, x);
		return l->nrot;
	}
	if (kind >= 5) {
		pw_local_hurry(l, x);
		return l->nrot;
	}
	d = pw_local_below(x, l->p->devices);
	q = &l->cur->device[d];
	if (q->len < 2)
		return 0;
	i = pw_local_below(x, q->len);
	if (kind < 3)
		pw_local_try(l, d, i, i + (pw_local_below(x, 2) == 0 ? -1 : 1));
	else {
		reach = 2 + pw_local_below(x, PW_LOCAL_REACH - 1);
		pw_local_try(l, d, i, i + (pw_local_below(x, 2) == 0 ? -reach :
		    reach));
	}
	return l->nrot;
}

static double
pw_local_energy(const struct pw_local *l, const struct pw_eval *e)
{
	return e->objective + e->ends / (double)l->nops;
}

/* Re-times L's schedule into *E and *T (the caller's, NULL when it
 * does not simulate): whether it runs within every limit.  Only what
 * follows the move is re-timed: the ops before it keep CUR's times. */
static bool
pw_local_judge(struct pw_local *l, struct pw_eval *e, struct pw_timing **t)
{
	const struct pw_local_opts *o = l->o;
	struct pw_error err;

	if (pw_simulate_after(l->p, l->cur, l->t, l->after, t, &err) !=
	    PW_OK) {
		*t = NULL;
		return false;
	}
	pw_solver_judge(l->p, l->cur, *t, o->objective, o->offloadable,
	    o->pins, o->npins, e);
	return e->feasible;
}

/* The mean duration of SCHED's compute ops. */
static double
pw_local_mean_op(const struct pw_problem *p, const struct pw_schedule *sched)
{
	double sum = 0;
	int d, i, n = 0;

	for (d = 0; d < sched->ndevices; d++)
		for (i = 0; i < sched->device[d].len; i++, n++)
			sum += pw_op_duration(p, sched->device[d].ops[i]);
	return n > 0 ? sum / n : 0;
}

long
pw_local_cost(const struct pw_schedule *sched)
{
	return (long)(pw_schedule_nops(sched) / PW_LOCAL_OPS) + 1;
}

/* Whether move I of N is accepted: not worse in energy (EN against the
 * walk's CUR), or by the walk's chance at temperature HEAT cooled to
 * move I. */
static bool
pw_local_accept(double en, double cur, double heat, long i, long n,
    uint64_t *x)
{
	double temp = heat * pow(PW_LOCAL_COOL, (double)i / (double)n);

	if (en <= cur)
		return true;
	return temp > 0 && pw_rng_unit(x) < exp((cur - en) / temp);
}

struct pw_schedule *
pw_local_search(const struct pw_problem *p, const struct pw_schedule *start,
    const struct pw_eval *start_eval, const struct pw_local_opts *o,
    struct pw_eval *best_eval, long *moves)
{
	struct pw_local l;
	struct pw_eval e;
	struct pw_timing *t;
	struct pw_error err;
	struct pw_schedule *best;
	double heat, en;
	bool ok;
	long i;
	int tries, rc;

	memset(&l, 0, sizeof l);
	l.p = p;
	l.o = o;
	l.cur = pw_schedule_copy(start);
	l.cur_eval = *start_eval;
	l.rot = pw_xcalloc((size_t)p->nstages + 1, sizeof *l.rot);
	l.nops = pw_schedule_nops(start);
	l.energy = pw_local_energy(&l, &l.cur_eval);
	l.crit = pw_xcalloc(pw_op_universe(p), sizeof *l.crit);
	rc = pw_simulate(p, l.cur, &l.t, &err);
	assert(rc == PW_OK);
	(void)rc;
	pw_local_critical(&l);
	heat = PW_LOCAL_HEAT * pw_local_mean_op(p, start);
	for (i = 0; i < o->moves && (o->stopped == NULL ||
	    !o->stopped(o->stopped_arg)); i++) {
		for (tries = 0; tries < PW_LOCAL_TRIES &&
		    pw_local_propose(&l, o->rng) == 0; tries++)
			continue;
		if (l.nrot == 0)
			continue;
		ok = pw_local_judge(&l, &e, &t);
		en = ok ? pw_local_energy(&l, &e) : INFINITY;
		if (!ok || !pw_local_accept(en, l.energy, heat, i, o->moves,
		    o->rng)) {
			pw_timing_free(t);
			pw_local_undo(&l);
			continue;
		}
		pw_timing_free(l.t);
		l.t = t;
		pw_local_critical(&l);
		l.energy = en;
		l.cur_eval = e;
		if (pw_eval_better(&e, l.best != NULL ? &l.best_eval :
		    start_eval)) {
			pw_schedule_free(l.best);
			l.best = pw_schedule_copy(l.cur);
			l.best_eval = e;
		}
	}
	*moves = i;
	/* Only a lower objective: a schedule that only ends earlier would
	 * move the windows' incumbent among ties, which they do themselves
	 * when they need it (it lost bench (b)'s 6.2B-24 at 2p its 0.0021). */
	best = NULL;
	if (l.best != NULL && pw_solver_better(l.best_eval.objective,
	    start_eval->objective)) {
		best = l.best;
		*best_eval = l.best_eval;
	} else
		pw_schedule_free(l.best);
	pw_schedule_free(l.cur);
	pw_timing_free(l.t);
	free(l.crit);
	free(l.rot);
	return best;
}

static bool
pw_local_stopped(void *arg)
{
	return pw_search_stopped(arg);
}

bool
pw_search_local(struct pw_search *s, long moves, uint64_t *x)
{
	struct pw_local_opts lo;
	struct pw_schedule *best;
	struct pw_eval e;
	double before = s->eval.objective;
	long cost = pw_local_cost(s->best), left, made;

	assert(s->best != NULL);
	/* Within the iteration limit: the round is cut where the limit
	 * falls, on every run. */
	if (s->o->iteration_limit > 0) {
		left = s->o->iteration_limit - s->iterations;
		left = left > 0 ? (left + cost - 1) / cost : 0;
		moves = moves < left ? moves : left;
	}
	memset(&lo, 0, sizeof lo);
	lo.objective = s->o->objective;
	lo.offloadable = s->offloadable;
	lo.pins = s->o->pins;
	lo.npins = s->o->npins;
	lo.moves = moves;
	lo.rng = x;
	lo.stopped = pw_local_stopped;
	lo.stopped_arg = s;
	best = pw_local_search(s->p, s->best, &s->eval, &lo, &e, &made);
	s->iterations += made * cost;
	return best != NULL && pw_search_offer(s, best, "local", NULL) &&
	    pw_solver_better(s->eval.objective, before);
}

/* ------------------------------------------------------------------ */
/* The graft: a faster schedule's fill on the incumbent                */

/* A graft's plan of transfers counts this many re-timings toward the
 * iteration limit: planning d=8, v=5, m=64 (7,680 compute ops) took
 * 24 ms on the development machine, 8 times re-timing its schedule. */
#define PW_LOCAL_GRAFT_PLAN_COST	8

/*
 * Returns a schedule the caller owns: on every device the first K ops of
 * DONOR's order, then INTO's other compute ops in INTO's order, without
 * transfers.
 */
static struct pw_schedule *
pw_local_graft_orders(const struct pw_problem *p,
    const struct pw_schedule *donor, const struct pw_schedule *into, int k)
{
	struct pw_schedule *g = pw_schedule_new(p);
	bool *taken = pw_xcalloc(pw_op_universe(p), sizeof *taken);
	const struct pw_seq *q;
	int d, i;

	for (d = 0; d < p->devices; d++) {
		q = &donor->device[d];
		for (i = 0; i < k && i < q->len; i++) {
			pw_seq_push(&g->device[d], q->ops[i]);
			taken[pw_op_index(p, q->ops[i])] = true;
		}
		q = &into->device[d];
		for (i = 0; i < q->len; i++)
			if (!taken[pw_op_index(p, q->ops[i])])
				pw_seq_push(&g->device[d], q->ops[i]);
	}
	free(taken);
	return g;
}

/*
 * ORDERS (taken over) within every limit, or NULL: as they are without
 * offloads, else with transfers planned as po-auto plans its layouts
 * (PipeOffload's rule on the c lowest chunks of the offloadable stages,
 * c = 0..v, then peak shaving; a margin of one backward, then of none):
 * the first plan that keeps every limit, judged into *E.
 */
static struct pw_schedule *
pw_local_graft_fit(struct pw_search *s, struct pw_schedule *orders,
    struct pw_eval *e)
{
	static const double margin[2] = { 1.0, 0.0 };
	const struct pw_problem *p = s->p;
	struct pw_offload_opts oo = { PW_OFFSEL_PEAK, 0, NULL };
	struct pw_schedule *cand = NULL;
	struct pw_error err;
	bool *rule = NULL;
	int k, c, st, j, v = p->nstages / p->devices;
	long cost = pw_local_cost(orders);

	s->iterations += cost;
	if (pw_solver_eval(p, orders, s->o->objective, s->offloadable,
	    s->o->pins, s->o->npins, e, &err) != PW_OK)
		goto out;
	if (e->feasible) {
		cand = orders;
		orders = NULL;
		goto out;
	}
	if (s->offloadable == NULL)
		goto out;
	rule = pw_xcalloc((size_t)p->nstages * (size_t)p->microbatches,
	    sizeof *rule);
	oo.rule = rule;
	for (k = 0; k < 2; k++)
		for (c = 0; c <= v && !pw_search_stopped(s); c++) {
			for (st = 0; st < p->nstages; st++)
				for (j = 0; j < p->microbatches; j++)
					rule[st * p->microbatches + j] =
					    s->offloadable[st] &&
					    st / p->devices < c;
			oo.margin = margin[k];
			cand = pw_schedule_copy(orders);
			s->iterations += PW_LOCAL_GRAFT_PLAN_COST * cost;
			if (pw_offload_plan(p, cand, &oo, &err) == PW_OK &&
			    pw_solver_eval(p, cand, s->o->objective,
			    s->offloadable, s->o->pins, s->o->npins, e,
			    &err) == PW_OK && e->feasible)
				goto out;
			pw_schedule_free(cand);
			cand = NULL;
		}
out:
	free(rule);
	pw_schedule_free(orders);
	return cand;
}

/* Whether SCHED runs fused backwards (BW) anywhere. */
static bool
pw_local_graft_fused(const struct pw_schedule *sched)
{
	int d, i;

	for (d = 0; d < sched->ndevices; d++)
		for (i = 0; i < sched->device[d].len; i++)
			if (sched->device[d].ops[i].kind == PW_BW)
				return true;
	return false;
}

/* The fill of SCHED: the most ops before a device's first backward. */
static int
pw_local_graft_fill(const struct pw_schedule *sched)
{
	const struct pw_seq *q;
	int d, i, most = 0;

	for (d = 0; d < sched->ndevices; d++) {
		q = &sched->device[d];
		for (i = 0; i < q->len && q->ops[i].kind == PW_F; i++)
			continue;
		most = i > most ? i : most;
	}
	return most;
}

bool
pw_search_graft(struct pw_search *s, const struct pw_schedule *donor)
{
	struct pw_schedule *into, *cand, *best = NULL;
	struct pw_eval e, best_eval;
	double before = s->eval.objective;
	int lo = 0, hi, mid;

	assert(s->best != NULL);
	/* A donor's fused backward beside the incumbent's split ones (or
	 * the other way) would run a microbatch's backward twice. */
	if (pw_local_graft_fused(donor) != pw_local_graft_fused(s->best))
		return false;
	into = pw_schedule_copy(s->best);
	/* The more of the donor's fill, the shorter and the fuller: the
	 * most that still fits, by bisection. */
	hi = pw_local_graft_fill(donor) + 1;
	while (hi - lo > 1 && !pw_search_stopped(s)) {
		mid = lo + (hi - lo) / 2;
		cand = pw_local_graft_fit(s, pw_local_graft_orders(s->p,
		    donor, into, mid), &e);
		if (cand == NULL) {
			hi = mid;
			continue;
		}
		lo = mid;
		if (best == NULL || pw_eval_better(&e, &best_eval)) {
			pw_schedule_free(best);
			best = cand;
			best_eval = e;
		} else
			pw_schedule_free(cand);
	}
	pw_schedule_free(into);
	if (best == NULL || !pw_solver_better(best_eval.objective, before)) {
		pw_schedule_free(best);
		return false;
	}
	return pw_search_offer(s, best, "local", NULL) &&
	    pw_solver_better(s->eval.objective, before);
}
