/*
 * test_zb_auto.c - Zero Bubble's automatic schedule (zb-auto, zb-1p,
 * zb-2p): the paper's Table 5 (tests/data/zb_table5.csv) at limits of p
 * and 2p activations, the unit case of the reference (p=4, m=8, unit
 * times: ZB-H1 reaches span 27 at peak 4, ZB-H2 span 24 at peak 7), other
 * limits, and refusals.
 *
 * Every schedule must simulate, keep every device within its limit and
 * pass the independent checker.  The table's bubble rate is (max span -
 * m(t_f+t_b+t_w)) / max span, pw_metrics' bubble rate here since every
 * device is busy m(t_f+t_b+t_w).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "pipewright.h"
#include "tap.h"
#include "testlib.h"

/* How much worse than the published bubble rate a schedule may be. */
#define TEST_SLACK	0.002

/* Returns a problem the caller frees: one stage per device, stage s on
 * device s, every device with limit LIMIT (INFINITY for none). */
static struct pw_problem *
test_problem(const struct test_zb_case *c, double limit)
{
	struct pw_stage st = test_zb_stage(c, 1);
	struct pw_problem *prob;
	int d;

	prob = test_problem_uniform(c->p, 1, c->m, PW_PLACE_LOOP, &st);
	for (d = 0; d < c->p; d++)
		prob->memory[d].limit = limit;
	return prob;
}

/*
 * Builds FAMILY on PROB, simulates it and checks it: it simulates, every
 * device stays within its limit, the checker finds nothing.  Returns the
 * metrics (the caller frees them) and the schedule in *SCHED if not NULL,
 * or NULL after a failed test line.
 */
static struct pw_metrics *
test_run(const struct pw_problem *prob, const char *family, const char *what,
    struct pw_schedule **sched_out)
{
	struct pw_schedule *sched;
	struct pw_timing *timing;
	struct pw_metrics *met = NULL;
	char *fail;
	int d, bad = 0;

	if ((sched = test_simulate(family, prob, what, &timing)) == NULL)
		goto out;
	met = pw_metrics_compute(prob, sched, timing);
	for (d = 0; d < prob->devices; d++)
		if (!met->device[d].within_limit) {
			tap_diag("device %d peaks at %.17g over %.17g", d,
			    met->device[d].peak, prob->memory[d].limit);
			bad++;
		}
	tap_int(bad, 0, "%s: %s keeps every device within its limit", what,
	    family);
	if (!tap_ok((fail = test_checker(prob, sched, timing)) == NULL,
	    "%s: %s passes the checker", what, family))
		tap_diag("%s", fail);
	free(fail);
	pw_timing_free(timing);
out:
	if (sched_out != NULL)
		*sched_out = sched;
	else
		pw_schedule_free(sched);
	return met;
}

/*
 * zb-auto on case C at a limit of K*p activations against the published
 * bubble rate WANT, and FAMILY (zb-1p or zb-2p, which cap the limit
 * themselves) on the unlimited problem: the same schedule.  Returns our
 * bubble rate, NAN when there is none.
 */
static double
test_table(const struct test_zb_case *c, int k, const char *family,
    double want)
{
	struct pw_problem *limited, *free_;
	struct pw_metrics *met, *capped;
	char what[64];
	double work = c->m * (c->f + c->b + c->w), bubble = NAN;

	snprintf(what, sizeof what, "%s at %dp", c->name, k);
	limited = test_problem(c, k * c->p * c->act);
	free_ = test_problem(c, INFINITY);
	met = test_run(limited, "zb-auto", what, NULL);
	capped = test_run(free_, family, what, NULL);
	if (met != NULL) {
		bubble = (met->max_span - work) / met->max_span;
		tap_ok(bubble <= want + TEST_SLACK, "%s: bubble rate %.5f <= "
		    "published %.4f + %.3f", what, bubble, want, TEST_SLACK);
		tap_near(met->bubble_rate, bubble, 1e-12, "%s: pw_metrics "
		    "agrees", what);
	}
	if (met != NULL && capped != NULL)
		tap_near(capped->max_span, met->max_span, 0, "%s: %s on the "
		    "unlimited problem is zb-auto at the limit", what, family);
	pw_metrics_free(capped);
	pw_metrics_free(met);
	pw_problem_free(free_);
	pw_problem_free(limited);
	return bubble;
}

/* True when X rounded to 4 decimals, as the table is, is at most WANT. */
static bool
test_rounds_to(double x, double want)
{
	return round(x * 1e4) <= round(want * 1e4);
}

static void
test_table5(void)
{
	struct test_csv csv;
	struct test_zb_case c;
	double b1, b2, z1, z2;
	int ncases = 0, beaten = 0;

	if (!test_csv_open(&csv, "zb_table5.csv"))
		goto out;
	while (test_csv_next(&csv)) {
		test_zb_case_read(&csv, &c);
		if (!tap_ok(c.p > 1 && c.m > 0, "%s: sizes (p=%d, m=%d)",
		    c.name, c.p, c.m))
			continue;
		ncases++;
		z1 = test_csv_num(&csv, "bubble_zb_1p");
		z2 = test_csv_num(&csv, "bubble_zb_2p");
		b1 = test_table(&c, 1, "zb-1p", z1);
		b2 = test_table(&c, 2, "zb-2p", z2);
		beaten += test_rounds_to(b1, z1) + test_rounds_to(b2, z2);
		tap_diag("%-9s 1p %.6f (published %.4f)  2p %.6f (published "
		    "%.4f)", c.name, b1, z1, b2, z2);
	}
	tap_int(ncases, 12, "%s: all 12 settings read", csv.path);
	tap_diag("%d of 24 round to the published value or below", beaten);
out:
	test_csv_close(&csv);
}

/* The unit case: p=4, m=8, unit times, no comm, act = hold = 1 (so B
 * frees nothing). */
static const struct test_zb_case test_unit = {
	.name = "unit", .p = 4, .m = 8, .f = 1, .b = 1, .w = 1, .act = 1,
	.hold = 1
};

/* zb-auto's largest span on the unit case with static STAT and limit
 * STAT + ACTS activations (INFINITY for none); NAN when it fails. */
static double
test_unit_span(double stat, double acts)
{
	struct pw_problem *prob;
	struct pw_metrics *met;
	char what[64];
	double span = NAN;
	int d;

	snprintf(what, sizeof what, "unit case, static %g, limit +%g", stat,
	    acts);
	prob = test_problem(&test_unit, stat + acts);
	for (d = 0; d < prob->devices; d++)
		prob->memory[d].static_bytes = stat;
	if ((met = test_run(prob, "zb-auto", what, NULL)) != NULL) {
		span = met->max_span;
		for (d = 0; d < prob->devices; d++)
			if (met->device[d].busy != 24)
				break;
		tap_int(d, prob->devices, "%s: every device busy 24", what);
	}
	pw_metrics_free(met);
	pw_problem_free(prob);
	return span;
}

static void
test_unit_cases(void)
{
	double span;

	/* Memory of 1F1B and ZB-H1 (p activations): ZB-H1's span or better;
	 * static memory counts against the limit. */
	span = test_unit_span(0, 4);
	tap_ok(span <= 27, "unit case at limit 4: span %g <= 27 (ZB-H1)", span);
	tap_near(test_unit_span(5, 4), span, 0, "unit case: static 5 and "
	    "limit 9 give the same span");
	/* ZB-H2's peak (2p-1): its span, which is the work itself. */
	tap_near(test_unit_span(0, 7), 24, 0, "unit case at limit 7: span 24 "
	    "(ZB-H2)");
	tap_near(test_unit_span(0, INFINITY), 24, 0, "unit case without a "
	    "limit: span 24");
	/* Between them, no worse than at the smaller limit. */
	tap_ok(test_unit_span(0, 5) <= span, "unit case at limit 5: no worse "
	    "than at 4");
	tap_ok(test_unit_span(0, 1) < INFINITY, "unit case at limit 1: one "
	    "activation at a time still schedules");
}

/* Few microbatches: with m <= p the reference's closed form (m+p-1)(f+b)
 * + w is the span; one device runs F, B, W in turn. */
static void
test_small(void)
{
	struct test_zb_case c = test_unit;
	struct pw_problem *prob;
	struct pw_metrics *met;
	char what[64];

	for (c.m = 1; c.m <= c.p; c.m++) {
		snprintf(what, sizeof what, "unit case with m=%d", c.m);
		prob = test_problem(&c, INFINITY);
		if ((met = test_run(prob, "zb-auto", what, NULL)) != NULL)
			tap_near(met->max_span, (c.m + c.p - 1) * 2 + 1, 0,
			    "%s: span (m+p-1)(f+b) + w", what);
		pw_metrics_free(met);
		pw_problem_free(prob);
	}
	c.p = 1;
	c.m = 3;
	prob = test_problem(&c, 1);
	if ((met = test_run(prob, "zb-auto", "one device", NULL)) != NULL)
		tap_near(met->max_span, 9, 0, "one device: span 9, no gap");
	pw_metrics_free(met);
	pw_problem_free(prob);
}

/* A tight limit on one device only: the others may hold more, that one
 * must not exceed its own. */
static void
test_uneven_limits(void)
{
	struct test_zb_case c = test_unit;
	struct pw_problem *prob;
	struct pw_metrics *met;

	c.m = 12;
	prob = test_problem(&c, INFINITY);
	prob->memory[1].limit = 2;
	prob->memory[3].limit = 1;
	if ((met = test_run(prob, "zb-auto", "uneven limits", NULL)) != NULL) {
		tap_ok(met->device[1].peak <= 2 && met->device[3].peak <= 1,
		    "uneven limits: devices 1 and 3 peak at %g and %g",
		    met->device[1].peak, met->device[3].peak);
		tap_ok(met->device[0].peak > 2, "uneven limits: device 0 "
		    "uses the memory it has (peak %g)", met->device[0].peak);
	}
	pw_metrics_free(met);
	pw_problem_free(prob);
}

/* Two builds give the same orders. */
static void
test_deterministic(void)
{
	struct test_zb_case c = test_unit;
	struct pw_problem *prob;
	struct pw_schedule *s1 = NULL, *s2 = NULL;
	struct pw_metrics *m1, *m2;
	const struct pw_seq *a, *b;
	int d, same = 1;

	c.f = 1.25;
	c.b = 1.5;
	c.w = 0.75;
	c.comm = 0.125;
	c.m = 16;
	prob = test_problem(&c, 6);
	m1 = test_run(prob, "zb-auto", "determinism 1", &s1);
	m2 = test_run(prob, "zb-auto", "determinism 2", &s2);
	for (d = 0; s1 != NULL && s2 != NULL && d < c.p; d++) {
		a = &s1->device[d];
		b = &s2->device[d];
		same = same && a->len == b->len && memcmp(a->ops, b->ops,
		    (size_t)a->len * sizeof *a->ops) == 0;
	}
	tap_ok(s1 != NULL && s2 != NULL && same, "two builds give the same "
	    "orders");
	pw_schedule_free(s1);
	pw_schedule_free(s2);
	pw_metrics_free(m1);
	pw_metrics_free(m2);
	pw_problem_free(prob);
}

/* Where the family does not apply, it says why. */
static void
test_refusals(void)
{
	struct pw_stage unit = test_zb_stage(&test_unit, 1);
	struct pw_problem *prob;
	struct pw_schedule *sched = NULL;
	struct pw_error err;

	prob = test_problem_uniform(2, 2, 4, PW_PLACE_LOOP, &unit);
	tap_int(pw_family_find("zb-auto")->build(prob, &sched, &err),
	    PW_ERR_NOT_APPLICABLE, "zb-auto refuses 2 stages per device");
	tap_ok(sched == NULL && strstr(err.msg, "one stage per device") !=
	    NULL, "the reason names the placement: %s", err.msg);
	pw_problem_free(prob);

	prob = test_problem(&test_unit, 0.5);
	tap_int(pw_family_find("zb-2p")->build(prob, &sched, &err),
	    PW_ERR_NOT_APPLICABLE, "zb-2p refuses a limit below one "
	    "activation");
	tap_ok(sched == NULL, "... and builds nothing");
	tap_str(err.msg, "zb-2p: device 0's limit 0.5 B does not hold its "
	    "static memory 0 B plus one activation 1 B", "the reason names the "
	    "device and the bytes");
	pw_problem_free(prob);
}

int
main(void)
{
	test_table5();
	test_unit_cases();
	test_small();
	test_uneven_limits();
	test_deterministic();
	test_refusals();
	return tap_done();
}
