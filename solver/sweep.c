/*
 * sweep.c - the memory sweep: every family and the optimizer at a list of
 * memory limits, for the trade-off between memory and step time.
 *
 * The run publishes each point through its READY flag (release) once the
 * point is whole, so that another thread (the designer's) may draw the
 * points as they come without a lock: pw_sweep_get reads the flag with
 * acquire.  The default list depends on the families' peaks at no limit,
 * so its unlimited points are computed first.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "solver.h"

int
pw_sweep_new(const struct pw_problem *p, const struct pw_sweep_opts *o,
    struct pw_sweep **out, struct pw_error *err)
{
	struct pw_sweep *sw;
	size_t i, n;

	*out = NULL;
	if (o->limits != NULL && o->nlimits == 0) {
		pw_error_set(err, "sweep: limits: the list is empty");
		return PW_ERR_INPUT;
	}
	for (i = 0; o->limits != NULL && i < o->nlimits; i++)
		if (!(o->limits[i] > 0)) {
			pw_error_set(err, "sweep: limits: limit %zu must be a "
			    "positive number of bytes (got %g)", i + 1,
			    o->limits[i]);
			return PW_ERR_INPUT;
		}
	if (!(o->time_limit >= 0) || o->iteration_limit < 0) {
		pw_error_set(err, "sweep: the optimizer's %s must not be "
		    "negative", o->iteration_limit < 0 ? "iteration limit" :
		    "time limit");
		return PW_ERR_INPUT;
	}
	n = o->limits != NULL ? o->nlimits : PW_SWEEP_POINTS;
	sw = pw_xcalloc(1, sizeof *sw);
	sw->problem = pw_problem_copy(p);
	sw->opts = *o;
	sw->opts.limits = NULL;
	sw->nlimits = n;
	sw->limits = pw_xcalloc(n, sizeof *sw->limits);
	if (o->limits != NULL) {
		memcpy(sw->limits, o->limits, n * sizeof *sw->limits);
		qsort(sw->limits, n, sizeof *sw->limits, pw_double_cmp);
	} else {
		sw->limits[n - 1] = INFINITY;
		sw->default_limits = true;
	}
	sw->optimizer = o->time_limit > 0 || o->iteration_limit > 0;
	sw->nseries = pw_nfamilies + (sw->optimizer ? 1 : 0);
	sw->total = sw->nlimits * sw->nseries;
	sw->point = pw_xcalloc(sw->total, sizeof *sw->point);
	for (i = 0; i < sw->total; i++)
		atomic_init(&sw->point[i].ready, false);
	atomic_init(&sw->done, 0);
	*out = sw;
	return PW_OK;
}

void
pw_sweep_free(struct pw_sweep *sw)
{
	size_t i;

	if (sw == NULL)
		return;
	for (i = 0; i < sw->total; i++) {
		free(sw->point[i].why);
		pw_problem_free(sw->point[i].problem);
		pw_schedule_free(sw->point[i].schedule);
	}
	free(sw->point);
	free(sw->limits);
	pw_problem_free(sw->problem);
	free(sw);
}

/* Returns a copy of P the caller frees with every device's limit LIMIT,
 * and its model's split too, so that a family splitting the model again
 * keeps the limit (a split has no infinite limit: the largest finite
 * one stands for none). */
static struct pw_problem *
pw_sweep_limited(const struct pw_problem *p, double limit)
{
	struct pw_problem *q = pw_problem_copy(p);
	int d;

	for (d = 0; d < q->devices; d++)
		q->memory[d].limit = limit;
	if (q->origin != NULL)
		q->origin->split.memory_limit = isfinite(limit) ? limit :
		    DBL_MAX;
	return q;
}

/* Fills PT from PLAN, which it frees: the numbers, and copies of the
 * problem and the schedule for loading. */
static void
pw_sweep_take(struct pw_sweep_point *pt, struct pw_plan *plan)
{
	const struct pw_metrics *m = pw_plan_metrics(plan);

	pt->rc = PW_OK;
	pt->makespan = m->makespan;
	pt->bubble_rate = m->bubble_rate;
	pt->peak_device = pw_metrics_peak_device(m);
	pt->peak = m->device[pt->peak_device].peak;
	/* The metrics' verdict, with their tolerance, as every view has it. */
	pt->feasible = m->feasible;
	pt->problem = pw_problem_copy(pw_plan_problem(plan));
	pt->schedule = pw_schedule_copy(pw_plan_schedule(plan));
	pw_plan_free(plan);
}

static void
pw_sweep_fail(struct pw_sweep_point *pt, int rc, const struct pw_error *err)
{
	pt->rc = rc;
	pt->why = pw_xstrdup(err->msg);
}

/* The optimizer's point at Q's limit, from the best feasible family (the
 * optimizer's own start).  Returns false when the cancel flag cut the
 * search short: that point is not one to show. */
static bool
pw_sweep_solve(const struct pw_sweep *sw, struct pw_sweep_point *pt,
    const struct pw_problem *q)
{
	struct pw_solve_opts o;
	struct pw_solve_result res;
	struct pw_plan *plan;
	struct pw_error err;
	struct pw_schedule *sched;
	int rc;

	pw_solve_opts_init(&o);
	o.objective = sw->opts.objective;
	o.time_limit = sw->opts.time_limit;
	o.iteration_limit = sw->opts.iteration_limit;
	o.cancel = sw->opts.cancel;
	if ((rc = pw_solve(q, &o, &res, &err)) != PW_OK) {
		pw_sweep_fail(pt, rc, &err);
		return true;
	}
	if (res.ended == PW_END_CANCELLED) {
		pw_solve_result_free(&res);
		return false;
	}
	sched = res.schedule;
	res.schedule = NULL;
	pw_solve_result_free(&res);
	/* The solver's results pass its own checks: they time. */
	if ((rc = pw_plan_new(pw_problem_copy(q), sched, &plan, &err)) != PW_OK)
		pw_sweep_fail(pt, PW_ERR_INTERNAL, &err);
	else
		pw_sweep_take(pt, plan);
	return true;
}

static bool
pw_sweep_cancelled(const struct pw_sweep *sw)
{
	return sw->opts.cancel != NULL && atomic_load(sw->opts.cancel) != 0;
}

/* Computes and publishes every series' point at the limit of index LI.
 * Returns false when cancelled. */
static bool
pw_sweep_at(struct pw_sweep *sw, size_t li)
{
	struct pw_sweep_point *row = sw->point + li * sw->nseries, *pt;
	struct pw_problem *q;
	struct pw_plan *plan;
	struct pw_error err, bad;
	bool valid, ok = true;
	size_t s, done;
	int rc;

	q = pw_sweep_limited(sw->problem, sw->limits[li]);
	/* The point names the sweep and the limit; the problem is what
	 * is wrong at it. */
	valid = pw_problem_validate(q, "problem", &bad) == PW_OK;
	for (s = 0; s < sw->nseries && ok; s++) {
		if (pw_sweep_cancelled(sw)) {
			ok = false;
			break;
		}
		pt = &row[s];
		pt->limit = sw->limits[li];
		if (!valid)
			pw_sweep_fail(pt, PW_ERR_INPUT, &bad);
		else if (s == pw_nfamilies)
			ok = pw_sweep_solve(sw, pt, q);
		else if ((rc = pw_plan_family(&pw_families[s], q, &plan,
		    &err)) != PW_OK)
			pw_sweep_fail(pt, rc, &err);
		else
			pw_sweep_take(pt, plan);
		if (ok) {
			atomic_store_explicit(&pt->ready, true,
			    memory_order_release);
			done = atomic_fetch_add(&sw->done, 1) + 1;
			if (sw->opts.progress != NULL)
				sw->opts.progress(sw, done, sw->opts.progress_arg);
		}
	}
	pw_problem_free(q);
	return ok;
}

/* The default list below the unlimited point: one step below the
 * smallest limit the problem validates with (a device's static memory
 * and its largest activation), then steps up to the highest peak of the
 * unlimited row, where every series fits. */
static void
pw_sweep_default_limits(struct pw_sweep *sw)
{
	const struct pw_problem *p = sw->problem;
	const struct pw_sweep_point *row;
	double lo = 0, hi = 0, need, step;
	size_t n = sw->nlimits, i, s;
	int d, st;

	for (d = 0; d < p->devices; d++) {
		need = 0;
		for (st = 0; st < p->nstages; st++)
			if (p->stages[st].device == d && p->stages[st].act > need)
				need = p->stages[st].act;
		if (p->memory[d].static_bytes + need > lo)
			lo = p->memory[d].static_bytes + need;
	}
	row = sw->point + (n - 1) * sw->nseries;
	for (s = 0; s < sw->nseries; s++)
		if (row[s].rc == PW_OK && row[s].peak > hi)
			hi = row[s].peak;
	/* Equal ends (one microbatch, say) still get distinct points. */
	step = hi - lo > lo * 1e-3 ? (hi - lo) / (double)(n - 3) : lo / 16;
	if (!(lo > 0))
		lo = step = 1;
	sw->limits[0] = lo - step > 0 ? lo - step : lo / 2;
	for (i = 1; i + 1 < n; i++)
		sw->limits[i] = lo + step * (double)(i - 1);
}

bool
pw_sweep_run(struct pw_sweep *sw)
{
	size_t i, n = sw->nlimits;

	if (sw->default_limits) {
		if (!pw_sweep_at(sw, n - 1))
			return false;
		pw_sweep_default_limits(sw);
		n--;
	}
	for (i = 0; i < n; i++)
		if (!pw_sweep_at(sw, i))
			return false;
	return true;
}

const struct pw_sweep_point *
pw_sweep_get(const struct pw_sweep *sw, size_t limit, size_t series)
{
	const struct pw_sweep_point *pt;

	if (limit >= sw->nlimits || series >= sw->nseries)
		return NULL;
	pt = &sw->point[limit * sw->nseries + series];
	return atomic_load_explicit(&pt->ready, memory_order_acquire) ? pt :
	    NULL;
}

const char *
pw_sweep_series_name(const struct pw_sweep *sw, size_t series)
{
	return series < pw_nfamilies ? pw_families[series].name :
	    sw->optimizer && series == pw_nfamilies ? "optimizer" : "?";
}

int
pw_sweep_best(const struct pw_sweep *sw, size_t limit)
{
	const struct pw_sweep_point *pt, *best = NULL;
	size_t s;
	int at = -1;

	for (s = 0; s < sw->nseries; s++) {
		pt = pw_sweep_get(sw, limit, s);
		if (pt != NULL && pt->rc == PW_OK && pt->feasible &&
		    (best == NULL || pt->makespan < best->makespan)) {
			best = pt;
			at = (int)s;
		}
	}
	return at;
}
