/*
 * test_sweep.c - the memory sweep (pw_sweep_*): the default list of
 * limits, which families fit at which limit (1F1B's peak is static + p
 * activations on device 0, GPipe's static + m), the refusal below the
 * smallest limit, a best step time that never rises with the limit, the
 * unlimited point against pw_compare_rows, the optimizer's series
 * (deterministic at an iteration limit, never worse than the families),
 * a point's schedule loading as a plan, the options' errors,
 * cancellation before and during a run, and a model split again at the
 * sweep's limits.  No wall-clock time is asserted.
 */
#include <math.h>
#include <string.h>

#include "plan.h"
#include "solver.h"
#include "tap.h"
#include "testlib.h"

/* Optimizer iterations per point: enough to search, the same on every
 * run. */
#define TEST_ITERATIONS	2000

/* Returns a problem the caller frees: 4 devices, one stage each, 8
 * microbatches, f = b = w = 1, act 1, hold 0.5, static 2 per device. */
static struct pw_problem *
test_sweep_problem(void)
{
	static const struct pw_stage st = { .f = 1, .b = 1, .w = 1,
	    .act = 1, .hold = 0.5 };
	struct pw_problem *p = test_problem_uniform(4, 1, 8, PW_PLACE_LOOP,
	    &st);
	int d;

	for (d = 0; d < p->devices; d++)
		p->memory[d].static_bytes = 2;
	return p;
}

/* The series of the family NAME. */
static size_t
test_series(const char *name)
{
	return (size_t)(pw_family_find(name) - pw_families);
}

/* Returns a computed sweep the caller frees, or NULL after a failed
 * line. */
static struct pw_sweep *
test_run(const struct pw_problem *p, const double *limits, size_t n,
    long iterations)
{
	struct pw_sweep_opts o = { .limits = limits, .nlimits = n,
	    .iteration_limit = iterations,
	    .time_limit = iterations > 0 ? 60 : 0 };
	struct pw_sweep *sw;
	struct pw_error err;

	if (pw_sweep_new(p, &o, &sw, &err) != PW_OK) {
		tap_ok(false, "sweep_new: %s", err.msg);
		return NULL;
	}
	tap_ok(pw_sweep_run(sw), "the run computes every point");
	tap_ok(atomic_load(&sw->done) == sw->total, "done counts %zu of %zu",
	    (size_t)atomic_load(&sw->done), sw->total);
	return sw;
}

static void
test_default_limits(void)
{
	struct pw_problem *p = test_sweep_problem();
	struct pw_sweep *sw = test_run(p, NULL, 0, 0);
	const struct pw_sweep_point *pt;
	size_t s;

	if (sw == NULL)
		goto out;
	/* From static 2 + act 1 = 3 up to GPipe's 10 in 9 steps of 7/9,
	 * one step below 3 first, INFINITY last. */
	tap_ok(sw->nlimits == PW_SWEEP_POINTS, "%zu limits", sw->nlimits);
	tap_ok(!sw->optimizer && sw->nseries == pw_nfamilies,
	    "no optimizer series without its limits");
	tap_ok(fabs(sw->limits[0] - (3 - 7.0 / 9)) < 1e-12,
	    "first limit %.17g: one step below 3", sw->limits[0]);
	tap_ok(sw->limits[1] == 3, "then the smallest valid limit, 3 B");
	tap_ok(fabs(sw->limits[10] - 10) < 1e-12, "up to the largest peak, %g",
	    sw->limits[10]);
	tap_ok(isinf(sw->limits[11]), "and the unlimited case last");
	for (s = 0; s < sw->nseries; s++) {
		pt = pw_sweep_get(sw, 0, s);
		if (pt == NULL || pt->rc != PW_ERR_INPUT || strcmp(pt->why,
		    "problem: memory[0].limit: 2.222 B is below what one "
		    "microbatch needs on device 0 (static 2 B + act of stage 0 "
		    "1 B)") != 0) {
			tap_ok(false, "series %s below the smallest limit: %s",
			    pw_sweep_series_name(sw, s), pt ? pt->why : "none");
			break;
		}
	}
	if (s == sw->nseries)
		tap_ok(true, "below 3 every series is refused with the reason");
	tap_ok(pw_sweep_best(sw, 0) == -1, "no best below the smallest limit");
	tap_ok(pw_sweep_best(sw, 1) == (int)test_series("zb-auto"),
	    "at 3 B the best is zb-auto");
out:
	pw_sweep_free(sw);
	pw_problem_free(p);
}

static void
test_feasibility(void)
{
	static const double limits[] = { 9.5, 6, 5.5, 10, INFINITY };
	struct pw_problem *p = test_sweep_problem();
	struct pw_sweep *sw = test_run(p, limits, 5, 0);
	const struct pw_sweep_point *pt;
	size_t f1 = test_series("1f1b"), gp = test_series("gpipe");

	if (sw == NULL)
		goto out;
	tap_ok(sw->limits[0] == 5.5 && sw->limits[1] == 6 && sw->limits[2] ==
	    9.5 && sw->limits[3] == 10 && isinf(sw->limits[4]),
	    "the limits are sorted");
	pt = pw_sweep_get(sw, 0, f1);
	tap_ok(pt->rc == PW_OK && pt->peak == 6 && pt->peak_device == 0 &&
	    !pt->feasible, "1f1b at 5.5 B: peak 6 on device 0, over");
	pt = pw_sweep_get(sw, 1, f1);
	tap_ok(pt->rc == PW_OK && pt->peak == 6 && pt->feasible &&
	    pt->makespan == 33, "1f1b at 6 B: static + p activations, fits, "
	    "33 s");
	tap_ok(fabs(pt->bubble_rate - 9.0 / 33) < 1e-12, "1f1b's bubble 9/33");
	pt = pw_sweep_get(sw, 2, gp);
	tap_ok(pt->peak == 10 && !pt->feasible, "gpipe at 9.5 B: static + m, "
	    "over");
	pt = pw_sweep_get(sw, 3, gp);
	tap_ok(pt->feasible, "gpipe at 10 B fits");
	pt = pw_sweep_get(sw, 0, test_series("zb-auto"));
	tap_ok(pt->rc == PW_OK && pt->feasible && pt->peak == 5.5 &&
	    pt->makespan == 29, "zb-auto at 5.5 B fills it: 29 s");
	pt = pw_sweep_get(sw, 1, test_series("zb-v"));
	tap_ok(pt->rc == PW_ERR_NOT_APPLICABLE && strncmp(pt->why, "zb-v needs "
	    "V placement", 19) == 0 && pt->schedule == NULL,
	    "zb-v does not apply, with its reason");
	tap_ok(pw_sweep_get(sw, 5, 0) == NULL && pw_sweep_get(sw, 0,
	    sw->nseries) == NULL, "no point out of range");
	tap_ok(strcmp(pw_sweep_series_name(sw, 0), "gpipe") == 0,
	    "series 0 is the registry's first family");
out:
	pw_sweep_free(sw);
	pw_problem_free(p);
}

static void
test_optimizer(void)
{
	struct pw_problem *p = test_sweep_problem();
	struct pw_sweep *a = test_run(p, NULL, 0, TEST_ITERATIONS);
	struct pw_sweep *b = test_run(p, NULL, 0, TEST_ITERATIONS);
	const struct pw_sweep_point *pa, *pb, *best, *fam;
	struct pw_compare_row *rows;
	double want = INFINITY, last = INFINITY;
	struct pw_plan *plan;
	struct pw_error err;
	size_t i, s, opt;
	bool same = true, mono = true, worse = false;
	int k;

	if (a == NULL || b == NULL)
		goto out;
	opt = pw_nfamilies;
	tap_ok(a->optimizer && a->nseries == pw_nfamilies + 1 &&
	    strcmp(pw_sweep_series_name(a, opt), "optimizer") == 0,
	    "the optimizer is the last series");
	for (i = 0; i < a->nlimits; i++) {
		pa = pw_sweep_get(a, i, opt);
		pb = pw_sweep_get(b, i, opt);
		same = same && pa->rc == pb->rc && (pa->rc != PW_OK ||
		    (pa->makespan == pb->makespan &&
		    test_same_schedule(pa->schedule, pb->schedule)));
		k = pw_sweep_best(a, i);
		if (k < 0)
			continue;
		best = pw_sweep_get(a, i, (size_t)k);
		mono = mono && best->makespan <= last;
		last = best->makespan;
		for (s = 0; s < pw_nfamilies; s++) {
			fam = pw_sweep_get(a, i, s);
			worse = worse || (fam->rc == PW_OK && fam->feasible &&
			    pa->rc == PW_OK && pa->makespan > fam->makespan);
		}
	}
	tap_ok(same, "the optimizer's series is the same on every run");
	tap_ok(mono, "the best step time never rises with the limit");
	tap_ok(!worse, "the optimizer is never worse than a feasible family");
	pa = pw_sweep_get(a, 1, opt);
	tap_ok(pa->rc == PW_OK && pa->feasible && pa->makespan <= 72,
	    "the optimizer fits the smallest limit (%g s)", pa->makespan);

	rows = pw_compare_rows(p, NULL, NULL);
	for (s = 0; s < pw_nfamilies; s++)
		if (rows[s].rc == PW_OK && rows[s].metrics->makespan < want)
			want = rows[s].metrics->makespan;
	pw_compare_rows_free(rows);
	k = pw_sweep_best(a, a->nlimits - 1);
	best = k < 0 ? NULL : pw_sweep_get(a, a->nlimits - 1, (size_t)k);
	tap_ok(best != NULL && best->makespan == want && want == 27,
	    "the unlimited point's best is compare's best makespan, 27 s");

	pa = pw_sweep_get(a, 5, test_series("zb-h1"));
	if (pw_plan_new(pw_problem_copy(pa->problem),
	    pw_schedule_copy(pa->schedule), &plan, &err) != PW_OK)
		tap_ok(false, "a point's schedule loads: %s", err.msg);
	else {
		tap_ok(pw_plan_metrics(plan)->makespan == pa->makespan &&
		    pw_plan_problem(plan)->memory[3].limit == a->limits[5],
		    "a point's schedule and problem load as a plan at its "
		    "limit");
		pw_plan_free(plan);
	}
out:
	pw_sweep_free(a);
	pw_sweep_free(b);
	pw_problem_free(p);
}

static void
test_options(void)
{
	static const double bad[] = { 4, 0 };
	struct pw_problem *p = test_sweep_problem();
	struct pw_sweep_opts o = { .limits = bad, .nlimits = 0 };
	struct pw_sweep *sw;
	struct pw_error err;

	tap_ok(pw_sweep_new(p, &o, &sw, &err) == PW_ERR_INPUT && sw == NULL &&
	    strcmp(err.msg, "sweep: limits: the list is empty") == 0,
	    "an empty list: %s", err.msg);
	o.nlimits = 2;
	tap_ok(pw_sweep_new(p, &o, &sw, &err) == PW_ERR_INPUT && strcmp(err.msg,
	    "sweep: limits: limit 2 must be a positive number of bytes "
	    "(got 0)") == 0, "a zero limit: %s", err.msg);
	o.limits = NULL;
	o.iteration_limit = -1;
	tap_ok(pw_sweep_new(p, &o, &sw, &err) == PW_ERR_INPUT && strcmp(err.msg,
	    "sweep: the optimizer's iteration limit must not be negative") ==
	    0, "a negative iteration limit: %s", err.msg);
	pw_problem_free(p);
}

/* Cancels the run once it has published AT points. */
struct test_cancel {
	atomic_int flag;
	size_t	at;
	size_t	calls;
};

static void
test_cancel_progress(const struct pw_sweep *sw, size_t done, void *arg)
{
	struct test_cancel *c = arg;

	(void)sw;
	c->calls++;
	if (done == c->at)
		atomic_store(&c->flag, 1);
}

static void
test_cancel(void)
{
	struct pw_problem *p = test_sweep_problem();
	struct test_cancel c = { .at = 5 };
	struct pw_sweep_opts o = { .iteration_limit = TEST_ITERATIONS,
	    .cancel = &c.flag, .progress = test_cancel_progress,
	    .progress_arg = &c };
	struct pw_sweep *sw;
	struct pw_error err;
	size_t i, s, ready = 0;

	atomic_init(&c.flag, 1);
	if (pw_sweep_new(p, &o, &sw, &err) != PW_OK) {
		tap_ok(false, "sweep_new: %s", err.msg);
		goto out;
	}
	tap_ok(!pw_sweep_run(sw) && atomic_load(&sw->done) == 0 && c.calls == 0,
	    "a flag set before the run: nothing computed");
	pw_sweep_free(sw);

	atomic_store(&c.flag, 0);
	if (pw_sweep_new(p, &o, &sw, &err) != PW_OK) {
		tap_ok(false, "sweep_new: %s", err.msg);
		goto out;
	}
	tap_ok(!pw_sweep_run(sw), "a flag set during the run stops it");
	for (i = 0; i < sw->nlimits; i++)
		for (s = 0; s < sw->nseries; s++)
			ready += pw_sweep_get(sw, i, s) != NULL;
	tap_ok(atomic_load(&sw->done) == 5 && ready == 5 && c.calls == 5,
	    "after the fifth point: %zu done, %zu published, %zu calls",
	    (size_t)atomic_load(&sw->done), ready, c.calls);
	tap_ok(pw_sweep_get(sw, sw->nlimits - 1, 4) != NULL &&
	    pw_sweep_get(sw, sw->nlimits - 1, 5) == NULL,
	    "the unlimited row came first, up to its fifth series");
	pw_sweep_free(sw);
out:
	pw_problem_free(p);
}

static void
test_resplit(void)
{
	static const double limits[] = { 1e9, INFINITY };
	const struct pw_split sp = { .devices = 2, .chunks = 1,
	    .placement = PW_PLACE_LOOP, .microbatches = 4 };
	const struct pw_sweep_point *pt[2];
	struct pw_problem *p;
	struct pw_sweep *sw;
	struct pw_error err;
	size_t i;

	if (pw_cost_problem(&test_tiny_model, &test_toy_hw, &sp, &p, &err) !=
	    PW_OK) {
		tap_ok(false, "the tiny model splits: %s", err.msg);
		return;
	}
	if ((sw = test_run(p, limits, 2, 0)) != NULL) {
		for (i = 0; i < 2; i++)
			pt[i] = pw_sweep_get(sw, i, test_series(
			    "1f1b-interleaved"));
		tap_ok(pt[0]->rc == PW_OK && pt[0]->problem->nstages == 4 &&
		    pt[0]->problem->memory[1].limit == 1e9,
		    "a family splitting the model again keeps the limit (1e9)");
		tap_ok(pt[1]->rc == PW_OK && isinf(pt[1]->problem->memory[0].
		    limit) && isinf(pt[1]->problem->memory[1].limit),
		    "and no limit stays none");
	}
	pw_sweep_free(sw);
	pw_problem_free(p);
}

int
main(void)
{
	test_default_limits();
	test_feasibility();
	test_optimizer();
	test_options();
	test_cancel();
	test_resplit();
	return tap_done();
}
