/*
 * solver.c - the optimizer's driver: options, the start, the heuristic,
 * the MILP (whole or in large-neighbourhood windows), bounds, progress
 * and cancellation.
 *
 * pw_solve runs the search on a worker thread and stays on the calling
 * thread to report progress every 50 ms and to watch the cancel flag and
 * the time limit; either sets the worker's stop flag, which the worker
 * checks between units of work and lp_solve polls through milp.c's abort
 * callback.  Only the stop flag crosses from this thread to the worker;
 * what the result is made of comes back under a lock, so the result
 * depends on timing only through when the search stops.
 *
 * Some units of work cannot be interrupted (a family's build, the offload
 * planner on a large problem, a model handed to lp_solve), and take
 * seconds on the largest problems.  So once the search is stopped and
 * has a schedule, the calling thread waits PW_SOLVE_GRACE for the worker
 * and then returns a copy of its incumbent, leaving the worker to finish
 * its unit on its own copies of the problem and options; the last of the
 * two to leave frees the search.
 *
 * The search is deterministic up to the time limit: the families, the
 * heuristic and the order of the windows (a splitmix64 sequence from the
 * seed) depend on the input alone.  What a time limit cuts short (the
 * whole search, or a window that lp_solve does not finish within its
 * share) can make two runs differ; a search that finishes before its
 * limit (a proven optimum, or every window solved without improvement at
 * the largest window size) gives the same schedule every time.
 */
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "milp.h"

/* Progress reports come at least this often (seconds). */
#define PW_SOLVE_TICK		0.05
/* How long a stopped search may take to finish before pw_solve returns a
 * copy of its incumbent (seconds): with the tick, a cancel takes effect
 * within 100 ms. */
#define PW_SOLVE_GRACE		0.03
/* The default time limit (seconds). */
#define PW_SOLVE_DEFAULT_LIMIT	10.0
/* The whole model is solved when it has at most this many ordering
 * binaries (estimated before building it): lp_solve proves small
 * pipeline models in seconds and loses its way in large ones. */
#define PW_SOLVE_WHOLE_BINARIES	1000
/* A model is written for --write-lp only up to this size. */
#define PW_SOLVE_WRITE_BINARIES	200000
/* Large-neighbourhood windows: ops freed at first, at least and at most;
 * seconds per window at most and at least; windows without improvement
 * before the window grows. */
#define PW_LNS_START		24
#define PW_LNS_MIN		8
#define PW_LNS_MAX		160
#define PW_LNS_SECONDS		1.0
#define PW_LNS_SECONDS_MIN	0.05
#define PW_LNS_PASS		12

/*
 * One solve: the worker's state and what it shares with the reporter,
 * on the heap and owned by both (REFS): the reporter may leave first.
 */
struct pw_search {
	const struct pw_problem *p;	/* PROBLEM */
	const struct pw_solve_opts *o;	/* &OPTS */
	bool	*offloadable;	/* [nstages] or NULL */
	double	t0;		/* monotonic seconds at the start */
	double	limit;		/* seconds */
	volatile sig_atomic_t stop;

	/* The worker's copies of the caller's problem and options, and what
	 * OPTS points to (no progress callback, no cancel flag). */
	struct pw_problem *problem;
	struct pw_solve_opts opts;
	struct pw_schedule *own_start;
	char	*own_start_family;
	bool	*own_may_offload;
	struct pw_pin *own_pins;
	char	*own_write_lp;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under the lock: the numbers of the last report, who still holds
	 * the search, whether the worker is done. */
	double	pub_incumbent;
	double	pub_bound;
	const char *pub_phase;
	int	refs;
	bool	finished;

	/* Written by the worker under the lock, which the reporter reads
	 * them under; the worker reads them freely. */
	struct pw_schedule *best;	/* feasible, checked */
	struct pw_eval eval;
	double	bound;
	char	start[64];
	double	start_objective;
	struct pw_model_size model;
	/* The worker's, read once it has finished. */
	int	rc;
	struct pw_error err;
};

static double
pw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void
pw_solve_opts_init(struct pw_solve_opts *o)
{
	memset(o, 0, sizeof *o);
	o->objective = PW_OBJ_MAKESPAN;
	o->offload = PW_OFFLOAD_AUTO;
	o->time_limit = PW_SOLVE_DEFAULT_LIMIT;
	o->seed = 1;
}

void
pw_solve_result_free(struct pw_solve_result *r)
{
	if (r == NULL)
		return;
	pw_schedule_free(r->schedule);
	r->schedule = NULL;
}

double
pw_objective_value(enum pw_objective obj, const struct pw_metrics *m)
{
	return obj == PW_OBJ_SPAN ? m->max_span : m->makespan;
}

bool
pw_solver_better(double obj, double incumbent)
{
	return obj < incumbent - PW_SOLVER_EPS * fmax(1, fabs(incumbent));
}

double
pw_solver_ends(const struct pw_timing *t)
{
	double sum = 0;
	size_t k;

	for (k = 0; k < t->universe; k++)
		if (pw_timing_has(t, k))
			sum += t->end[k];
	return sum;
}

bool
pw_eval_better(const struct pw_eval *a, const struct pw_eval *b)
{
	if (pw_solver_better(a->objective, b->objective))
		return true;
	return !pw_solver_better(b->objective, a->objective) &&
	    pw_solver_better(a->ends, b->ends);
}

bool *
pw_solver_offloadable(const struct pw_problem *p, enum pw_offload_mode mode,
    const bool *may_offload)
{
	bool *ok, any = false;
	int s;

	if (mode == PW_OFFLOAD_OFF || !p->link.present)
		return NULL;
	ok = pw_xcalloc((size_t)p->nstages, sizeof *ok);
	for (s = 0; s < p->nstages; s++) {
		ok[s] = p->stages[s].offload > 0 &&
		    (may_offload == NULL || may_offload[s]);
		any = any || ok[s];
	}
	if (!any) {
		free(ok);
		return NULL;
	}
	return ok;
}

/* The op of a pin as SCHED holds it: a named B or W that SCHED fuses is
 * its BW, a named BW that SCHED splits is its B. */
static struct pw_op
pw_pin_resolve(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op)
{
	struct pw_op alt = op;

	if (pw_timing_has(t, pw_op_index(p, op)))
		return op;
	alt.kind = op.kind == PW_BW ? PW_B : PW_BW;
	return alt;
}

/* False (and the first broken pin in WHY) unless every pin holds. */
static bool
pw_pins_hold(const struct pw_problem *p, const struct pw_timing *t,
    const struct pw_pin *pins, size_t npins, char *why, size_t len)
{
	struct pw_op a, b;
	char na[32], nb[32];
	double sa, sb;
	size_t i;

	for (i = 0; i < npins; i++) {
		a = pw_pin_resolve(p, t, pins[i].before);
		b = pw_pin_resolve(p, t, pins[i].after);
		sa = t->start[pw_op_index(p, a)];
		sb = t->start[pw_op_index(p, b)];
		if (sa <= sb + PW_SOLVER_EPS * fmax(1, fabs(sb)))
			continue;
		snprintf(why, len, "pin %zu: %s starts at %.9g, after %s at "
		    "%.9g", i, pw_op_name(na, sizeof na, pins[i].before), sa,
		    pw_op_name(nb, sizeof nb, pins[i].after), sb);
		return false;
	}
	return true;
}

int
pw_solver_eval(const struct pw_problem *p, const struct pw_schedule *sched,
    enum pw_objective obj, const bool *offloadable, const struct pw_pin *pins,
    size_t npins, struct pw_eval *e, struct pw_error *err)
{
	struct pw_timing *t;
	struct pw_metrics *m;
	char b1[32], b2[32];
	int rc, d, c, i;

	memset(e, 0, sizeof *e);
	if ((rc = pw_simulate(p, sched, &t, err)) != PW_OK)
		return rc;
	m = pw_metrics_compute(p, sched, t);
	e->objective = pw_objective_value(obj, m);
	e->ends = pw_solver_ends(t);
	e->feasible = true;
	for (d = 0; d < p->devices && e->feasible; d++) {
		if (m->device[d].within_limit)
			continue;
		e->feasible = false;
		snprintf(e->why, sizeof e->why, "device %d peaks at %s over its "
		    "limit %s", d, pw_fmt_bytes(b1, sizeof b1,
		    m->device[d].peak), pw_fmt_bytes(b2, sizeof b2,
		    p->memory[d].limit));
	}
	for (c = 0; c < sched->nchannels && e->feasible; c++)
		for (i = 0; i < sched->channel[c].len && e->feasible; i++) {
			int s = sched->channel[c].ops[i].stage;

			if (offloadable != NULL && offloadable[s])
				continue;
			e->feasible = false;
			snprintf(e->why, sizeof e->why, "it offloads stage %d, "
			    "which the options keep on the device", s);
		}
	if (e->feasible)
		e->feasible = pw_pins_hold(p, t, pins, npins, e->why,
		    sizeof e->why);
	pw_metrics_free(m);
	pw_timing_free(t);
	return PW_OK;
}

struct pw_schedule *
pw_solver_copy(const struct pw_problem *p, const struct pw_schedule *sched)
{
	struct pw_schedule *copy = pw_schedule_new(p);
	int r, i;

	/* Sequence by sequence, ops as they are: a start schedule is copied
	 * before the simulator has said whether its ops make sense. */
	assert(sched->ndevices == copy->ndevices &&
	    sched->nchannels == copy->nchannels &&
	    sched->nstages == copy->nstages &&
	    sched->microbatches == copy->microbatches);
	for (r = 0; r < sched->ndevices; r++)
		for (i = 0; i < sched->device[r].len; i++)
			pw_seq_push(&copy->device[r], sched->device[r].ops[i]);
	for (r = 0; r < sched->nchannels; r++)
		for (i = 0; i < sched->channel[r].len; i++)
			pw_seq_push(&copy->channel[r], sched->channel[r].ops[i]);
	memcpy(copy->anchor, sched->anchor, (size_t)p->nstages *
	    (size_t)p->microbatches * sizeof *copy->anchor);
	if (sched->family != NULL)
		copy->family = pw_xstrdup(sched->family);
	return copy;
}

/* True when SCHED passes the independent checker; else the first
 * violation in WHY. */
static bool
pw_solver_checked(const struct pw_problem *p, const struct pw_schedule *sched,
    char *why, size_t len)
{
	struct pw_timing *t;
	struct pw_timed_op *ops;
	struct pw_violations v;
	struct pw_error err;
	size_t n;
	bool ok;

	if (pw_simulate(p, sched, &t, &err) != PW_OK) {
		snprintf(why, len, "%.200s", err.msg);
		return false;
	}
	ops = pw_timed_ops(p, sched, t, &n);
	ok = pw_check(p, ops, n, &v) == 0;
	if (!ok)
		snprintf(why, len, "%.200s", v.msg[0]);
	pw_violations_free(&v);
	free(ops);
	pw_timing_free(t);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Options and the problem                                             */

static bool
pw_solve_pin_op(const struct pw_problem *p, struct pw_op op)
{
	return op.kind >= PW_F && op.kind <= PW_BW && op.stage >= 0 &&
	    op.stage < p->nstages && op.mb >= 0 && op.mb < p->microbatches;
}

/* One line naming the option at fault. */
static int
pw_solve_check_opts(const struct pw_problem *p, const struct pw_solve_opts *o,
    struct pw_error *err)
{
	char na[32], nb[32];
	size_t i;
	int s;

	if (o->objective != PW_OBJ_MAKESPAN && o->objective != PW_OBJ_SPAN) {
		pw_error_set(err, "solve: objective %d is not makespan or span",
		    (int)o->objective);
		return PW_ERR_INPUT;
	}
	if (o->offload != PW_OFFLOAD_AUTO && o->offload != PW_OFFLOAD_ON &&
	    o->offload != PW_OFFLOAD_OFF) {
		pw_error_set(err, "solve: offload mode %d is not auto, on or "
		    "off", (int)o->offload);
		return PW_ERR_INPUT;
	}
	if (isnan(o->time_limit) || isinf(o->time_limit)) {
		pw_error_set(err, "solve: time_limit %g is not a finite number "
		    "of seconds", o->time_limit);
		return PW_ERR_INPUT;
	}
	if (o->start != NULL && o->start_family != NULL) {
		pw_error_set(err, "solve: start and start_family are both set "
		    "(give one)");
		return PW_ERR_INPUT;
	}
	if (o->start != NULL && (o->start->ndevices != p->devices ||
	    o->start->nstages != p->nstages ||
	    o->start->microbatches != p->microbatches ||
	    o->start->nchannels != pw_problem_nchannels(p))) {
		pw_error_set(err, "solve: start: the schedule is shaped for %d "
		    "devices, %d stages, %d microbatches and %d channels, the "
		    "problem has %d, %d, %d and %d", o->start->ndevices,
		    o->start->nstages, o->start->microbatches,
		    o->start->nchannels, p->devices, p->nstages,
		    p->microbatches, pw_problem_nchannels(p));
		return PW_ERR_INPUT;
	}
	if (o->npins > 0 && o->pins == NULL) {
		pw_error_set(err, "solve: npins is %zu but pins is NULL",
		    o->npins);
		return PW_ERR_INPUT;
	}
	for (i = 0; i < o->npins; i++) {
		struct pw_op a = o->pins[i].before, b = o->pins[i].after;

		if (!pw_solve_pin_op(p, a) || !pw_solve_pin_op(p, b)) {
			pw_error_set(err, "solve: pin %zu: both ops must be "
			    "compute ops (F, B, W, BW) of stages 0-%d and "
			    "microbatches 0-%d", i, p->nstages - 1,
			    p->microbatches - 1);
			return PW_ERR_INPUT;
		}
		pw_op_name(na, sizeof na, a);
		pw_op_name(nb, sizeof nb, b);
		if (p->stages[a.stage].device != p->stages[b.stage].device) {
			pw_error_set(err, "solve: pin %zu: %s (device %d) and %s "
			    "(device %d) are not on one device", i, na,
			    p->stages[a.stage].device, nb,
			    p->stages[b.stage].device);
			return PW_ERR_INPUT;
		}
		if (a.kind == b.kind && a.stage == b.stage && a.mb == b.mb) {
			pw_error_set(err, "solve: pin %zu pins %s before itself",
			    i, na);
			return PW_ERR_INPUT;
		}
	}
	if (o->may_offload != NULL && o->offload == PW_OFFLOAD_OFF)
		for (s = 0; s < p->nstages; s++)
			if (o->may_offload[s]) {
				pw_error_set(err, "solve: may_offload allows "
				    "stage %d but offload is off", s);
				return PW_ERR_INPUT;
			}
	return PW_OK;
}

/* PW_ERR_INPUT naming the first device whose limit cannot hold one
 * microbatch even with every allowed activation on the host. */
static int
pw_solve_feasible(const struct pw_problem *p, const bool *offloadable,
    struct pw_error *err)
{
	char b1[32], b2[32], b3[32];
	double need, limit;
	bool moves;
	int d, s;

	for (d = 0; d < p->devices; d++) {
		need = pw_bound_need(p, d, offloadable);
		limit = p->memory[d].limit;
		if (need <= limit + PW_SOLVER_EPS * fmax(1, fabs(limit)))
			continue;
		moves = false;
		for (s = 0; s < p->nstages; s++)
			moves = moves || (p->stages[s].device == d &&
			    offloadable != NULL && offloadable[s]);
		pw_error_set(err, "infeasible: device %d needs %s to run one "
		    "microbatch through its %d stages (static %s included)%s, "
		    "but its limit is %s", d, pw_fmt_bytes(b1, sizeof b1, need),
		    pw_problem_chunks(p, d), pw_fmt_bytes(b2, sizeof b2,
		    p->memory[d].static_bytes), moves ? " even with every "
		    "allowed activation offloaded" : " with nothing offloaded",
		    pw_fmt_bytes(b3, sizeof b3, limit));
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* The search (worker thread)                                          */

static double
pw_search_elapsed(const struct pw_search *s)
{
	return pw_now() - s->t0;
}

static bool
pw_search_stopped(const struct pw_search *s)
{
	return s->stop != 0 || pw_search_elapsed(s) >= s->limit;
}

/* Publishes the incumbent, the bound and PHASE for the next report. */
static void
pw_search_publish(struct pw_search *s, const char *phase)
{
	pthread_mutex_lock(&s->lock);
	s->pub_incumbent = s->best != NULL ? s->eval.objective : INFINITY;
	s->pub_bound = s->bound;
	s->pub_phase = phase;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static bool
pw_search_closed(const struct pw_search *s)
{
	double obj = s->eval.objective;

	return s->best != NULL && obj - s->bound <= PW_SOLVER_EPS * fmax(1,
	    fabs(obj));
}

/*
 * Offers SCHED as the incumbent, taking it over: kept when it is
 * feasible, passes the checker and beats the incumbent, else freed.
 * Returns whether it was kept.
 */
static bool
pw_search_offer(struct pw_search *s, struct pw_schedule *sched,
    const char *phase)
{
	struct pw_schedule *old;
	struct pw_eval e;
	struct pw_error err;
	char why[256];

	if (pw_solver_eval(s->p, sched, s->o->objective, s->offloadable,
	    s->o->pins, s->o->npins, &e, &err) != PW_OK || !e.feasible ||
	    (s->best != NULL && !pw_eval_better(&e, &s->eval)) ||
	    !pw_solver_checked(s->p, sched, why, sizeof why)) {
		pw_schedule_free(sched);
		return false;
	}
	pthread_mutex_lock(&s->lock);
	old = s->best;
	s->best = sched;
	s->eval = e;
	pthread_mutex_unlock(&s->lock);
	pw_schedule_free(old);
	pw_search_publish(s, phase);
	return true;
}

/* Where a start stands: its schedule (owned) and evaluation. */
struct pw_start {
	struct pw_schedule *sched;
	struct pw_eval eval;
};

/* True when SCHED moves any activation. */
static bool
pw_solver_offloads(const struct pw_schedule *sched)
{
	int c;

	for (c = 0; c < sched->nchannels; c++)
		if (sched->channel[c].len > 0)
			return true;
	return false;
}

/*
 * Builds family FAM on the problem as given into *ST.  Returns PW_OK,
 * PW_ERR_NOT_APPLICABLE with the reason (the family refuses, needs
 * another split, or its schedule does not simulate).
 */
static int
pw_search_family(struct pw_search *s, const struct pw_family *fam,
    struct pw_start *st, struct pw_error *err)
{
	struct pw_problem *used = NULL;
	struct pw_schedule *sched = NULL;
	int rc;

	memset(st, 0, sizeof *st);
	if ((rc = pw_family_build(fam, s->p, &used, &sched, err)) != PW_OK)
		goto out;
	rc = PW_ERR_NOT_APPLICABLE;
	if (!pw_problem_same(used, s->p)) {
		pw_error_set(err, "%s needs its stages laid out otherwise (it "
		    "splits the model into %d stages); the solver keeps the "
		    "problem as given", fam->name, used->nstages);
		goto out;
	}
	if (pw_solver_eval(s->p, sched, s->o->objective, s->offloadable,
	    s->o->pins, s->o->npins, &st->eval, err) != PW_OK)
		goto out;
	st->sched = sched;
	sched = NULL;
	rc = PW_OK;
out:
	pw_schedule_free(sched);
	pw_problem_free(used);
	return rc;
}

/* Records where the search started (under the lock: the result reads it). */
static void
pw_search_set_start(struct pw_search *s, const char *name, double objective,
    bool feasible)
{
	pthread_mutex_lock(&s->lock);
	snprintf(s->start, sizeof s->start, "%s%s", name, feasible ? "" :
	    " (infeasible)");
	s->start_objective = objective;
	pthread_mutex_unlock(&s->lock);
}

/*
 * The start: the given schedule, the named family, or the best feasible
 * family (offloading ones only with offload on), recorded in s->start.
 * Each feasible start is offered as soon as it is built, so that a stop
 * finds a schedule; without one the heuristic's schedule is the start.
 */
static int
pw_search_start(struct pw_search *s)
{
	const struct pw_solve_opts *o = s->o;
	const struct pw_family *fam;
	const char *name;
	struct pw_start st, cand;
	struct pw_error err;
	size_t i;
	int rc;

	memset(&st, 0, sizeof st);
	if (o->start != NULL) {
		name = "given";
		if ((rc = pw_solver_eval(s->p, o->start, o->objective,
		    s->offloadable, o->pins, o->npins, &st.eval,
		    &err)) != PW_OK) {
			pw_error_set(&s->err, "solve: start: %s", err.msg);
			return PW_ERR_INPUT;
		}
		st.sched = pw_solver_copy(s->p, o->start);
	} else if (o->start_family != NULL) {
		name = o->start_family;
		if ((fam = pw_family_find(o->start_family)) == NULL) {
			pw_error_set(&s->err, "solve: start_family: unknown "
			    "family '%s'", o->start_family);
			return PW_ERR_INPUT;
		}
		if (pw_search_family(s, fam, &st, &err) != PW_OK) {
			pw_error_set(&s->err, "solve: start_family: %s does "
			    "not apply: %s", fam->name, err.msg);
			return PW_ERR_INPUT;
		}
	} else {
		for (i = 0; i < pw_nfamilies; i++) {
			/* Stopped: the first feasible start will do. */
			if (s->best != NULL && pw_search_stopped(s))
				break;
			if (pw_search_family(s, &pw_families[i], &cand,
			    &err) != PW_OK)
				continue;
			/* The first family of the best objective. */
			if (!cand.eval.feasible || (pw_solver_offloads(
			    cand.sched) && o->offload != PW_OFFLOAD_ON) ||
			    (s->best != NULL && !pw_solver_better(
			    cand.eval.objective, s->eval.objective)))
				pw_schedule_free(cand.sched);
			else if (pw_search_offer(s, cand.sched, "start"))
				pw_search_set_start(s, pw_families[i].name,
				    cand.eval.objective, true);
		}
		return PW_OK;
	}
	pw_search_set_start(s, name, st.eval.objective, st.eval.feasible);
	if (st.eval.feasible)
		pw_search_offer(s, st.sched, "start");
	else
		pw_schedule_free(st.sched);
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* The MILP, whole or in windows                                       */

/* Whether op class (KA, SA) precedes (KB, SB) within one microbatch. */
static bool
pw_class_precedes(enum pw_kind ka, int sa, enum pw_kind kb, int sb)
{
	switch (ka) {
	case PW_F:
		return kb != PW_F || sb > sa;
	case PW_B:
		return (kb == PW_B && sb < sa) || (kb == PW_W && sb <= sa);
	default:
		return false;
	}
}

/*
 * The ordering binaries of the whole model, estimated before building
 * it: pairs of ops on one device whose order no dependency implies,
 * with the ops of one kind of a stage in microbatch order (so a class
 * that precedes another within a microbatch leaves only the pairs where
 * the later class has the earlier microbatch), plus one offload binary
 * per movable activation.
 */
static double
pw_search_binaries(const struct pw_search *s)
{
	static const enum pw_kind kinds[] = { PW_F, PW_B, PW_W };
	const struct pw_problem *p = s->p;
	double m = p->microbatches, n = 0;
	int sa, sb, ka, kb;

	for (sa = 0; sa < p->nstages; sa++) {
		if (s->offloadable != NULL && s->offloadable[sa])
			n += m;
		for (sb = sa; sb < p->nstages; sb++) {
			if (p->stages[sa].device != p->stages[sb].device)
				continue;
			for (ka = 0; ka < 3; ka++)
				for (kb = sa == sb ? ka + 1 : 0; kb < 3; kb++) {
					if (pw_class_precedes(kinds[ka], sa,
					    kinds[kb], sb) || pw_class_precedes(
					    kinds[kb], sb, kinds[ka], sa))
						n += m * (m - 1) / 2;
					else
						n += m * m;
				}
		}
	}
	return n;
}

/*
 * The binaries the whole model adds for activations that may be away
 * from their device at a compute op of it (milp.c checks memory at every
 * compute op where a reload could start): per device, its compute ops
 * times its movable activations.
 */
static double
pw_search_away(const struct pw_search *s)
{
	const struct pw_problem *p = s->p;
	double *acts, n = 0;
	int d, st;

	acts = pw_xcalloc((size_t)p->devices, sizeof *acts);
	for (st = 0; st < p->nstages && s->offloadable != NULL; st++)
		if (s->offloadable[st])
			acts[p->stages[st].device] += p->microbatches;
	for (d = 0; d < p->devices; d++)
		n += acts[d] * 3 * p->microbatches * pw_problem_chunks(p, d);
	free(acts);
	return n;
}

/*
 * Solves the model with the ops of MASK free (NULL: the whole model) for
 * at most SECONDS, offering what it finds as the incumbent (with TIES,
 * also one of the same objective that ends earlier: pw_milp_request).
 * *IMPROVED says whether it was taken, *OPTIMAL whether lp_solve
 * finished.
 */
static int
pw_search_milp(struct pw_search *s, const bool *mask, bool ties,
    double seconds, const char *write_lp, const char *phase, bool *improved,
    bool *optimal)
{
	struct pw_milp_request rq;
	struct pw_milp_result res;
	int rc;

	memset(&rq, 0, sizeof rq);
	rq.problem = s->p;
	rq.objective = s->o->objective;
	rq.incumbent = s->best;
	rq.incumbent_objective = s->eval.objective;
	rq.free = mask;
	rq.offload = s->offloadable != NULL;
	rq.may_offload = s->offloadable;
	rq.pins = s->o->pins;
	rq.npins = s->o->npins;
	rq.lower_bound = s->bound;
	rq.time_limit = seconds;
	rq.cancel = &s->stop;
	rq.write_lp = write_lp;
	rq.ties = ties;
	memset(&res, 0, sizeof res);
	*improved = *optimal = false;
	if ((rc = pw_milp_solve(&rq, &res, &s->err)) != PW_OK)
		return rc;
	pthread_mutex_lock(&s->lock);
	if (mask == NULL || (!s->model.whole && res.size.binaries >=
	    s->model.binaries))
		s->model = res.size;
	pthread_mutex_unlock(&s->lock);
	*optimal = res.optimal;
	if (res.schedule != NULL)
		*improved = pw_search_offer(s, res.schedule, phase);
	/* lp_solve's bound counts for the problem only when the model
	 * restricted nothing (milp.h: exact); nothing can be below the
	 * incumbent's objective. */
	if (res.exact && s->best != NULL && !isnan(res.bound)) {
		pthread_mutex_lock(&s->lock);
		s->bound = fmax(s->bound, res.optimal ? s->eval.objective :
		    fmin(res.bound, s->eval.objective));
		pthread_mutex_unlock(&s->lock);
		pw_search_publish(s, phase);
	}
	return PW_OK;
}

static uint64_t
pw_rng_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A number in [0, N) from the generator X. */
static size_t
pw_rng_below(uint64_t *x, size_t n)
{
	return n <= 1 ? 0 : (size_t)(pw_rng_next(x) % n);
}

/* A compute op of the incumbent and its start, for time slices. */
struct pw_lns_key {
	double	start;
	size_t	op;
};

/* The incumbent as the windows see it. */
struct pw_lns {
	struct pw_timing *t;
	struct pw_lns_key *key;	/* its compute ops by start */
	size_t	n;
	size_t	*crit;		/* positions in KEY of the critical ones */
	size_t	ncrit;
	int	*where;		/* [universe]: position in its resource's order */
	size_t	*queue;		/* [universe], scratch */
	bool	*mark;		/* [universe], scratch */
};

static int
pw_lns_cmp(const void *x, const void *y)
{
	const struct pw_lns_key *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->op < b->op ? -1 : a->op > b->op;
}

/* The order OP is in: its device's or its channel's. */
static const struct pw_seq *
pw_lns_seq(const struct pw_search *s, struct pw_op op)
{
	int d = s->p->stages[op.stage].device;

	if (!pw_kind_is_transfer(op.kind))
		return &s->best->device[d];
	return &s->best->channel[pw_problem_channel(s->p, d, op.kind)];
}

/* Marks and queues op K when it is present, not yet marked, and ends
 * (or, FROM_START, starts) DELAY before AT. */
static void
pw_lns_tight(struct pw_lns *l, size_t k, bool from_start, double delay,
    double at, size_t *nq)
{
	double t;

	if (!pw_timing_has(l->t, k) || l->mark[k])
		return;
	t = (from_start ? l->t->start[k] : l->t->end[k]) + delay;
	if (fabs(t - at) > PW_SOLVER_EPS * fmax(1, fabs(at)))
		return;
	l->mark[k] = true;
	l->queue[(*nq)++] = k;
}

/*
 * Marks the critical ops of the incumbent: those ending where the
 * objective is measured (the last end; for the span, the widest
 * device's last op), and back from each the ops whose end (plus the
 * communication between them) is exactly its start.
 */
static void
pw_lns_critical(const struct pw_search *s, struct pw_lns *l)
{
	const struct pw_problem *p = s->p;
	const struct pw_timing *t = l->t;
	size_t u = pw_op_universe(p), k, head = 0, nq = 0;
	struct pw_op op, pred, anchor;
	const struct pw_seq *seq;
	double last = -INFINITY, span, widest = -INFINITY;
	int d, wd = 0;

	memset(l->mark, 0, u * sizeof *l->mark);
	for (d = 0; d < p->devices; d++) {
		seq = &s->best->device[d];
		if (seq->len == 0)
			continue;
		k = pw_op_index(p, seq->ops[seq->len - 1]);
		span = t->end[k] - t->start[pw_op_index(p, seq->ops[0])];
		if (span > widest)
			widest = span, wd = d;
	}
	for (k = 0; k < u; k++)
		if (pw_timing_has(t, k) && t->end[k] > last)
			last = t->end[k];
	if (s->o->objective == PW_OBJ_SPAN) {
		seq = &s->best->device[wd];
		k = pw_op_index(p, seq->ops[seq->len - 1]);
		pw_lns_tight(l, k, false, 0, t->end[k], &nq);
	} else
		for (k = 0; k < u; k++)
			pw_lns_tight(l, k, false, 0, last, &nq);
	while (head < nq) {
		k = l->queue[head++];
		op = pw_op_from_index(p, k);
		seq = pw_lns_seq(s, op);
		if (l->where[k] > 0)
			pw_lns_tight(l, pw_op_index(p, seq->ops[l->where[k] - 1]),
			    false, 0, t->start[k], &nq);
		pred = op;
		switch (op.kind) {
		case PW_F:
			if (op.stage == 0)
				break;
			pred.stage--;
			pw_lns_tight(l, pw_op_index(p, pred), false,
			    pw_problem_hop(p, op.stage - 1), t->start[k], &nq);
			break;
		case PW_B:
		case PW_BW:
			pred.kind = PW_RELOAD;
			pw_lns_tight(l, pw_op_index(p, pred), false, 0,
			    t->start[k], &nq);
			if (op.stage == p->nstages - 1) {
				pred.kind = PW_F;
				pw_lns_tight(l, pw_op_index(p, pred), false, 0,
				    t->start[k], &nq);
				break;
			}
			pred.stage++;
			for (pred.kind = PW_B; pred.kind <= PW_BW;
			    pred.kind = (enum pw_kind)(pred.kind + 2))
				pw_lns_tight(l, pw_op_index(p, pred), false,
				    pw_problem_hop(p, op.stage), t->start[k],
				    &nq);
			break;
		case PW_W:
			pred.kind = PW_B;
			pw_lns_tight(l, pw_op_index(p, pred), false, 0,
			    t->start[k], &nq);
			break;
		case PW_OFFLOAD:
			pred.kind = PW_F;
			pw_lns_tight(l, pw_op_index(p, pred), false, 0,
			    t->start[k], &nq);
			break;
		case PW_RELOAD:
			pred.kind = PW_OFFLOAD;
			pw_lns_tight(l, pw_op_index(p, pred), false, 0,
			    t->start[k], &nq);
			if (pw_schedule_anchor(s->best, op.stage, op.mb,
			    &anchor))
				pw_lns_tight(l, pw_op_index(p, anchor), true, 0,
				    t->start[k], &nq);
			break;
		case PW_NKINDS:
			assert(!"unknown op kind");
		}
	}
	l->ncrit = 0;
	for (k = 0; k < l->n; k++)
		if (l->mark[l->key[k].op])
			l->crit[l->ncrit++] = k;
}

/* Loads the incumbent of S into L (allocated on first use). */
static void
pw_lns_load(const struct pw_search *s, struct pw_lns *l)
{
	const struct pw_schedule *b = s->best;
	size_t u = pw_op_universe(s->p), k;
	struct pw_error err;
	int r, i, rc;

	if (l->key == NULL) {
		l->key = pw_xcalloc(u, sizeof *l->key);
		l->crit = pw_xcalloc(u, sizeof *l->crit);
		l->where = pw_xcalloc(u, sizeof *l->where);
		l->queue = pw_xcalloc(u, sizeof *l->queue);
		l->mark = pw_xcalloc(u, sizeof *l->mark);
	}
	pw_timing_free(l->t);
	rc = pw_simulate(s->p, b, &l->t, &err);
	assert(rc == PW_OK);
	(void)rc;
	l->n = 0;
	for (r = 0; r < b->ndevices; r++)
		for (i = 0; i < b->device[r].len; i++) {
			k = pw_op_index(s->p, b->device[r].ops[i]);
			l->where[k] = i;
			l->key[l->n].start = l->t->start[k];
			l->key[l->n++].op = k;
		}
	for (r = 0; r < b->nchannels; r++)
		for (i = 0; i < b->channel[r].len; i++)
			l->where[pw_op_index(s->p, b->channel[r].ops[i])] = i;
	qsort(l->key, l->n, sizeof *l->key, pw_lns_cmp);
	pw_lns_critical(s, l);
}

static void
pw_lns_free(struct pw_lns *l)
{
	pw_timing_free(l->t);
	free(l->key);
	free(l->crit);
	free(l->where);
	free(l->queue);
	free(l->mark);
}

/* The first of LEN consecutive positions of N around position C. */
static size_t
pw_lns_around(size_t c, size_t len, size_t n)
{
	if (len >= n || c < len / 2)
		return 0;
	c -= len / 2;
	return c + len > n ? n - len : c;
}

/* How many compute ops of the incumbent start within the time span of
 * the compute ops of MASK: what a window's model (its zone) holds. */
static size_t
pw_lns_zone(const struct pw_lns *l, const bool *mask)
{
	double from = INFINITY, to = -INFINITY;
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		if (mask[l->key[i].op]) {
			from = fmin(from, l->key[i].start);
			to = fmax(to, l->t->end[l->key[i].op]);
		}
	for (i = 0; i < l->n; i++)
		n += l->key[i].start >= from && l->key[i].start < to;
	return n;
}

/*
 * Frees a window of about SIZE compute ops of the incumbent in MASK,
 * around a critical op three times in four (else any): a time slice
 * across the devices (SIZE consecutive ops by start), a stretch of the
 * op's device, or whole microbatches around the op's on every device,
 * chosen by the generator X, with the transfers of every activation the
 * window touches.  A stretch or microbatches whose time span holds more
 * than a window's worth of ops per device (its model would hold them
 * all) give way to a time slice.
 */
static void
pw_lns_window(const struct pw_search *s, const struct pw_lns *l, uint64_t *x,
    size_t size, bool *mask)
{
	const struct pw_problem *p = s->p;
	const struct pw_seq *seq;
	size_t i, c, lo, len, kind;
	struct pw_op op;
	int st, j, k;

	memset(mask, 0, pw_op_universe(p) * sizeof *mask);
	if (l->ncrit > 0 && pw_rng_below(x, 4) != 0)
		c = l->crit[pw_rng_below(x, l->ncrit)];
	else
		c = pw_rng_below(x, l->n);
	kind = pw_rng_below(x, 3);
	if (kind == 2) {
		/* Whole microbatches around the op's, on every device. */
		op = pw_op_from_index(p, l->key[c].op);
		len = size / (3 * (size_t)p->nstages);
		len = len < 1 ? 1 : len > (size_t)p->microbatches ?
		    (size_t)p->microbatches : len;
		lo = pw_lns_around((size_t)op.mb, len,
		    (size_t)p->microbatches);
		for (i = 0; i < l->n; i++) {
			op = pw_op_from_index(p, l->key[i].op);
			if ((size_t)op.mb >= lo && (size_t)op.mb < lo + len)
				mask[l->key[i].op] = true;
		}
	}
	if (kind == 1) {
		op = pw_op_from_index(p, l->key[c].op);
		seq = pw_lns_seq(s, op);
		len = size < (size_t)seq->len ? size : (size_t)seq->len;
		lo = pw_lns_around((size_t)l->where[l->key[c].op], len,
		    (size_t)seq->len);
		for (i = lo; i < lo + len; i++)
			mask[pw_op_index(p, seq->ops[i])] = true;
	}
	if (kind != 0 && pw_lns_zone(l, mask) > size * (size_t)p->devices) {
		memset(mask, 0, pw_op_universe(p) * sizeof *mask);
		kind = 0;
	}
	if (kind == 0) {
		len = size < l->n ? size : l->n;
		lo = pw_lns_around(c, len, l->n);
		for (i = lo; i < lo + len; i++)
			mask[l->key[i].op] = true;
	}
	for (st = 0; st < p->nstages; st++)
		for (j = 0; j < p->microbatches; j++) {
			bool touched = false;

			op = (struct pw_op){ PW_F, st, j };
			for (k = PW_F; k <= PW_BW; k++) {
				op.kind = (enum pw_kind)k;
				touched = touched || mask[pw_op_index(p, op)];
			}
			if (!touched)
				continue;
			for (k = PW_OFFLOAD; k <= PW_RELOAD; k++) {
				op.kind = (enum pw_kind)k;
				mask[pw_op_index(p, op)] = true;
			}
		}
}

/*
 * Large-neighbourhood search: windows from the seed's sequence, each
 * solved for its share of the time limit.  Windows look for a better
 * objective; after a pass without one, also for schedules of the same
 * objective that end earlier (ties), until the objective falls again.  A
 * window that lp_solve cannot finish shrinks the next ones; a pass with
 * ties without improvement grows them; such a pass at the largest size
 * in which every window was solved ends the search (nothing more to find
 * with these neighbourhoods).
 */
static int
pw_search_lns(struct pw_search *s)
{
	struct pw_lns l;
	uint64_t x = (uint64_t)s->o->seed;
	bool *window, improved, optimal, ties = false;
	size_t size, most;
	double left, share, before;
	int rc = PW_OK, fails = 0, proven = 0;

	memset(&l, 0, sizeof l);
	window = pw_xcalloc(pw_op_universe(s->p), sizeof *window);
	pw_lns_load(s, &l);
	most = l.n < PW_LNS_MAX ? l.n : PW_LNS_MAX;
	size = most < PW_LNS_START ? most : PW_LNS_START;
	/* A window's share of the time: a twentieth of the limit, within
	 * PW_LNS_SECONDS_MIN and PW_LNS_SECONDS. */
	share = fmax(PW_LNS_SECONDS_MIN, fmin(PW_LNS_SECONDS, s->limit / 20));
	while (!pw_search_stopped(s) && !pw_search_closed(s)) {
		left = s->limit - pw_search_elapsed(s);
		pw_lns_window(s, &l, &x, size, window);
		before = s->eval.objective;
		if ((rc = pw_search_milp(s, window, ties, fmin(share, left),
		    NULL, "lns", &improved, &optimal)) != PW_OK)
			break;
		if (improved)
			pw_lns_load(s, &l);
		if (improved && pw_solver_better(s->eval.objective, before)) {
			/* Strict windows again once the objective fell. */
			ties = false;
			fails = proven = 0;
			continue;
		}
		/* A window that only ends earlier counts as none found
		 * for the size: the objective needs larger ones. */
		fails++;
		/* With ties a window seeks, it proves nothing: one that
		 * finds nothing in its time does not shrink the next. */
		if ((optimal || ties) && !improved)
			proven++;
		else if (!optimal && !improved && size > PW_LNS_MIN)
			size = size * 2 / 3 < PW_LNS_MIN ? PW_LNS_MIN :
			    size * 2 / 3;
		if (fails < PW_LNS_PASS)
			continue;
		/* A pass without a better objective: the same size again,
		 * taking schedules that only end earlier (see ties). */
		if (!ties) {
			ties = true;
			fails = proven = 0;
			continue;
		}
		if (size >= most && proven == fails)
			break;
		size = size * 3 / 2 > most ? most : size * 3 / 2;
		fails = proven = 0;
	}
	pw_lns_free(&l);
	free(window);
	return rc;
}

/* The whole search; the result stays in S. */
static int
pw_search_run(struct pw_search *s)
{
	struct pw_heuristic_opts ho;
	struct pw_schedule *sched;
	struct pw_eval he;
	struct pw_error err;
	double bound, binaries, left;
	bool improved, optimal;
	int rc;

	bound = pw_bound_problem(s->p, s->o->objective, s->offloadable);
	pthread_mutex_lock(&s->lock);
	s->bound = bound;
	pthread_mutex_unlock(&s->lock);
	pw_search_publish(s, "start");
	if ((rc = pw_search_start(s)) != PW_OK)
		return rc;

	/* Stopped already: the start will do if it is feasible. */
	if (!pw_search_closed(s) && (s->best == NULL ||
	    !pw_search_stopped(s))) {
		pw_search_publish(s, "heuristic");
		memset(&ho, 0, sizeof ho);
		ho.objective = s->o->objective;
		ho.offloadable = s->offloadable;
		ho.pins = s->o->pins;
		ho.npins = s->o->npins;
		ho.stop = &s->stop;
		rc = pw_heuristic(s->p, &ho, &sched, &he, &err);
		if (rc != PW_OK && s->best == NULL) {
			pw_error_set(&s->err, "solve: %s", err.msg);
			return rc;
		}
		if (rc == PW_OK)
			pw_search_offer(s, sched, "heuristic");
		if (s->best == NULL) {
			pw_error_set(&s->err, "solve: internal error: no "
			    "schedule passed the checker");
			return PW_ERR_INTERNAL;
		}
		if (s->start[0] == '\0')
			pw_search_set_start(s, "heuristic", s->eval.objective,
			    true);
	}
	if (pw_search_closed(s) || pw_search_stopped(s))
		return PW_OK;

	binaries = pw_search_binaries(s) + pw_search_away(s);
	left = s->limit - pw_search_elapsed(s);
	if (binaries <= PW_SOLVE_WHOLE_BINARIES) {
		pw_search_publish(s, "milp");
		return pw_search_milp(s, NULL, false, left, s->o->write_lp,
		    "milp",
		    &improved, &optimal);
	}
	if (s->o->write_lp != NULL && binaries <= PW_SOLVE_WRITE_BINARIES) {
		/* Built for the file; the search goes on in windows. */
		pw_search_publish(s, "milp");
		if ((rc = pw_search_milp(s, NULL, false, fmin(PW_LNS_SECONDS,
		    left),
		    s->o->write_lp, "milp", &improved, &optimal)) != PW_OK)
			return rc;
		pthread_mutex_lock(&s->lock);
		s->model.whole = false;
		pthread_mutex_unlock(&s->lock);
	}
	pw_search_publish(s, "lns");
	return pw_search_lns(s);
}

/*
 * Returns a search of P under O that the caller and the worker share
 * (two references), with the worker's own copies of both.
 */
static struct pw_search *
pw_search_new(const struct pw_problem *p, const struct pw_solve_opts *o,
    bool *offloadable)
{
	struct pw_search *s = pw_xcalloc(1, sizeof *s);
	pthread_condattr_t ca;

	s->problem = pw_problem_copy(p);
	s->p = s->problem;
	s->opts = *o;
	s->opts.progress = NULL;
	s->opts.progress_arg = NULL;
	s->opts.cancel = NULL;
	if (o->start != NULL)
		s->opts.start = s->own_start = pw_solver_copy(p, o->start);
	if (o->start_family != NULL)
		s->opts.start_family = s->own_start_family =
		    pw_xstrdup(o->start_family);
	if (o->may_offload != NULL) {
		s->own_may_offload = pw_xmalloc((size_t)p->nstages *
		    sizeof *s->own_may_offload);
		memcpy(s->own_may_offload, o->may_offload, (size_t)p->nstages *
		    sizeof *s->own_may_offload);
		s->opts.may_offload = s->own_may_offload;
	}
	if (o->npins > 0) {
		s->own_pins = pw_xmalloc(o->npins * sizeof *s->own_pins);
		memcpy(s->own_pins, o->pins, o->npins * sizeof *s->own_pins);
		s->opts.pins = s->own_pins;
	}
	if (o->write_lp != NULL)
		s->opts.write_lp = s->own_write_lp = pw_xstrdup(o->write_lp);
	s->o = &s->opts;
	s->offloadable = offloadable;
	s->limit = o->time_limit > 0 ? o->time_limit : PW_SOLVE_DEFAULT_LIMIT;
	s->pub_incumbent = INFINITY;
	s->pub_phase = "start";
	s->refs = 2;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	return s;
}

/* Drops one reference to S, freeing it with the last. */
static void
pw_search_release(struct pw_search *s)
{
	bool last;

	pthread_mutex_lock(&s->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	pw_schedule_free(s->best);
	free(s->offloadable);
	pw_problem_free(s->problem);
	pw_schedule_free(s->own_start);
	free(s->own_start_family);
	free(s->own_may_offload);
	free(s->own_pins);
	free(s->own_write_lp);
	free(s);
}

static void *
pw_search_main(void *arg)
{
	struct pw_search *s = arg;
	int rc;

	rc = pw_search_run(s);
	pthread_mutex_lock(&s->lock);
	s->rc = rc;
	s->finished = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pw_search_release(s);
	return NULL;
}

/* Calls O's progress callback with S's numbers. */
static void
pw_search_report(const struct pw_search *s, const struct pw_solve_opts *o,
    double incumbent, double bound, const char *phase)
{
	struct pw_progress pr;

	if (o->progress == NULL)
		return;
	pr.incumbent = incumbent;
	pr.bound = bound;
	pr.gap = isinf(incumbent) ? 1 : incumbent > 0 ?
	    fmax(0, (incumbent - bound) / incumbent) : 0;
	pr.elapsed = pw_search_elapsed(s);
	pr.phase = phase;
	o->progress(&pr, o->progress_arg);
}

/*
 * The reporter's loop on the calling thread: a report at least every
 * PW_SOLVE_TICK and after each publication, the stop flag set on O's
 * cancel or at the time limit.  Returns, with the lock held, when the
 * worker has finished, or PW_SOLVE_GRACE after the stop once the search
 * has a schedule.  *CANCELLED tells whether the caller cancelled.
 */
static void
pw_search_watch(struct pw_search *s, const struct pw_solve_opts *o,
    bool *cancelled)
{
	struct timespec ts;
	double inc, bound, at;
	double stopped = s->stop != 0 ? 0 : INFINITY;
	const char *phase;

	pthread_mutex_lock(&s->lock);
	while (!s->finished && (s->best == NULL ||
	    pw_search_elapsed(s) < stopped + PW_SOLVE_GRACE)) {
		at = pw_now() + fmin(PW_SOLVE_TICK, fmax(0, stopped +
		    PW_SOLVE_GRACE - pw_search_elapsed(s)));
		ts.tv_sec = (time_t)at;
		ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		inc = s->pub_incumbent;
		bound = s->pub_bound;
		phase = s->pub_phase;
		pthread_mutex_unlock(&s->lock);
		if (o->cancel != NULL && *o->cancel)
			*cancelled = true;
		if (s->stop == 0 && (*cancelled ||
		    pw_search_elapsed(s) >= s->limit)) {
			s->stop = 1;
			stopped = pw_search_elapsed(s);
		}
		pw_search_report(s, o, inc, bound, phase);
		pthread_mutex_lock(&s->lock);
	}
}

int
pw_solve(const struct pw_problem *p, const struct pw_solve_opts *o,
    struct pw_solve_result *res, struct pw_error *err)
{
	struct pw_search *s;
	bool *offloadable;
	pthread_t worker;
	bool finished;
	int rc;

	memset(res, 0, sizeof *res);
	if ((rc = pw_problem_validate(p, "solve: problem", err)) != PW_OK ||
	    (rc = pw_solve_check_opts(p, o, err)) != PW_OK)
		return rc;
	offloadable = pw_solver_offloadable(p, o->offload, o->may_offload);
	if ((rc = pw_solve_feasible(p, offloadable, err)) != PW_OK) {
		free(offloadable);
		return rc;
	}
	s = pw_search_new(p, o, offloadable);
	if (o->cancel != NULL && *o->cancel) {
		s->stop = 1;
		res->cancelled = true;
	}
	s->t0 = pw_now();
	if ((rc = pthread_create(&worker, NULL, pw_search_main, s)) != 0) {
		pw_error_set(err, "solve: cannot start the search thread: %s",
		    strerror(rc));
		s->refs = 1;
		pw_search_release(s);
		return PW_ERR_INTERNAL;
	}
	pw_search_watch(s, o, &res->cancelled);
	/* The lock is held: the worker's result, or a copy of its incumbent
	 * (every incumbent passed the checker when it was offered). */
	finished = s->finished;
	if (finished && s->rc != PW_OK) {
		*err = s->err;
		rc = s->rc;
	} else {
		if (finished) {
			res->schedule = s->best;
			s->best = NULL;
		} else {
			assert(s->best != NULL);
			res->schedule = pw_solver_copy(s->p, s->best);
		}
		free(res->schedule->family);
		res->schedule->family = pw_xstrdup("solve");
		res->objective = s->eval.objective;
		res->bound = fmin(s->bound, res->objective);
		res->gap = res->objective > 0 ? (res->objective -
		    res->bound) / res->objective : 0;
		res->optimal = res->gap <= PW_SOLVER_EPS;
		if (res->optimal)
			res->gap = 0;
		snprintf(res->start, sizeof res->start, "%s", s->start);
		res->start_objective = s->start_objective;
		res->model = s->model;
	}
	pthread_mutex_unlock(&s->lock);
	if (finished)
		pthread_join(worker, NULL);
	else
		pthread_detach(worker);
	if (rc == PW_OK) {
		res->elapsed = pw_search_elapsed(s);
		pw_search_report(s, o, res->objective, res->bound, "done");
	}
	pw_search_release(s);
	return rc;
}
