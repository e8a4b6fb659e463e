/*
 * eval.c - how a schedule does against the solver's constraints: its
 * objective, the limits, the pins, the offloads allowed, the checker.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "plan.h"

double
pw_objective_value(enum pw_objective obj, const struct pw_metrics *m)
{
	return obj == PW_OBJ_SPAN ? m->max_span : m->makespan;
}

bool
pw_solver_moves(const struct pw_schedule *sched)
{
	int c;

	for (c = 0; c < sched->nchannels; c++)
		if (sched->channel[c].len > 0)
			return true;
	return false;
}

bool
pw_solver_better(double obj, double incumbent)
{
	/* No incumbent (INFINITY): its tolerance would be infinite too,
	 * and INFINITY - INFINITY compares false with everything. */
	if (isinf(incumbent))
		return obj < incumbent;
	return obj < incumbent - pw_solver_objective_tol(incumbent);
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

/* Whether A beats B: a better objective, or the same and a lower
 * A_TIE than B_TIE. */
static bool
pw_eval_ahead(const struct pw_eval *a, const struct pw_eval *b, double a_tie,
    double b_tie)
{
	if (pw_solver_better(a->objective, b->objective))
		return true;
	return !pw_solver_better(b->objective, a->objective) &&
	    pw_solver_better(a_tie, b_tie);
}

bool
pw_eval_better(const struct pw_eval *a, const struct pw_eval *b)
{
	return pw_eval_ahead(a, b, a->ends, b->ends);
}

bool
pw_eval_leaner(const struct pw_eval *a, const struct pw_eval *b)
{
	return pw_eval_ahead(a, b, a->memory, b->memory);
}

bool *
pw_solver_offloadable(const struct pw_problem *p, enum pw_offload_mode mode,
    const bool *may_offload)
{
	bool *ok, any = false;
	int s;

	if (mode == PW_OFFMODE_OFF || !p->link.present)
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

/* The op of a pin as the schedule timed T holds it (pw_pin_other). */
static struct pw_op
pw_eval_pin_resolve(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op)
{
	if (pw_timing_has(t, pw_op_index(p, op)))
		return op;
	return pw_pin_other(op);
}

bool
pw_pins_hold(const struct pw_problem *p, const struct pw_timing *t,
    const struct pw_pin *pins, size_t npins, char *why, size_t len)
{
	struct pw_op a, b;
	char na[32], nb[32];
	double sa, sb;
	size_t i;

	for (i = 0; i < npins; i++) {
		a = pw_eval_pin_resolve(p, t, pins[i].before);
		b = pw_eval_pin_resolve(p, t, pins[i].after);
		sa = t->start[pw_op_index(p, a)];
		sb = t->start[pw_op_index(p, b)];
		if (sa <= sb + pw_solver_tol(sb))
			continue;
		snprintf(why, len, "pin %zu: %s starts at %.9g s, after %s at "
		    "%.9g s", i, pw_op_name(na, sizeof na, pins[i].before), sa,
		    pw_op_name(nb, sizeof nb, pins[i].after), sb);
		return false;
	}
	return true;
}

/* Fills E for SCHED, timed T, whose metrics are M. */
static void
pw_solver_judge_metrics(const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t,
    const struct pw_metrics *m, enum pw_objective obj,
    const bool *offloadable, const struct pw_pin *pins, size_t npins,
    struct pw_eval *e)
{
	char b1[32], b2[32];
	int d, c, i;

	memset(e, 0, sizeof *e);
	e->objective = pw_objective_value(obj, m);
	e->ends = pw_solver_ends(t);
	for (d = 0; d < p->devices; d++)
		e->memory += m->device[d].peak;
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
}

void
pw_solver_judge(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, enum pw_objective obj,
    const bool *offloadable, const struct pw_pin *pins, size_t npins,
    struct pw_eval *e)
{
	struct pw_metrics *m = pw_metrics_compute(p, sched, t);

	pw_solver_judge_metrics(p, sched, t, m, obj, offloadable, pins, npins,
	    e);
	pw_metrics_free(m);
}

void
pw_solver_judge_plan(const struct pw_plan *plan, enum pw_objective obj,
    const bool *offloadable, const struct pw_pin *pins, size_t npins,
    struct pw_eval *e)
{
	pw_solver_judge_metrics(pw_plan_problem(plan), pw_plan_timed(plan),
	    pw_plan_timing(plan), pw_plan_metrics(plan), obj, offloadable,
	    pins, npins, e);
}

int
pw_solver_eval(const struct pw_problem *p, const struct pw_schedule *sched,
    enum pw_objective obj, const bool *offloadable, const struct pw_pin *pins,
    size_t npins, struct pw_eval *e, struct pw_error *err)
{
	struct pw_timing *t;
	int rc;

	memset(e, 0, sizeof *e);
	if ((rc = pw_simulate(p, sched, &t, err)) != PW_OK)
		return rc;
	pw_solver_judge(p, sched, t, obj, offloadable, pins, npins, e);
	pw_timing_free(t);
	return PW_OK;
}

bool
pw_solver_checked(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t)
{
	struct pw_timed_op *ops;
	struct pw_violations v;
	size_t n;
	bool ok;

	ops = pw_timed_ops(p, sched, t, &n);
	ok = pw_check(p, ops, n, &v) == 0;
	pw_violations_free(&v);
	free(ops);
	return ok;
}

