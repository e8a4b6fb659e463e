/*
 * test_offload.c - PipeOffload's layouts (GIS, GIS with a group size,
 * GIS-H, PO), the offload planner and the offloading families (PO-H, PO-F,
 * PO-sel, PO-auto), against shared/reference/pipeoffload.md.
 *
 * The reference's setting: m = 8d microbatches, f = b = w = 1 per stage,
 * act = hold = offload = 1 per stage (so peaks count stage-activations),
 * no comm, no static memory.  Its link, at offload ratio k: the authors
 * pair GPUs behind one PCIe switch, and in each slot of (k/2)(f+b+w) both
 * GPUs of a pair move one activation (slots alternate D2H and H2D).  Our
 * channel carries one transfer at a time, so each pair {0,1}, {2,3}, ...
 * shares one half-duplex channel on which a transfer takes half a slot,
 * 3k/4 with unit times: d2h = h2d = 4/(3k) bytes/s, no latency.  A pair
 * moves as much per unit of time as the authors' pair does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"
#include "tap.h"
#include "testlib.h"

/* Returns a problem the caller frees: D devices, V chunks each on loop
 * placement, M microbatches, the reference's unit stages; with K > 0 the
 * paired link above. */
static struct pw_problem *
test_problem(int d, int v, int m, double k)
{
	return test_po_problem(d, v, m, k, 1, INFINITY);
}

/* FAMILY's schedule for PROB (the caller frees it), or NULL after a
 * failed test line. */
static struct pw_schedule *
test_build(const char *family, const struct pw_problem *prob)
{
	const struct pw_family *fam = pw_family_find(family);
	struct pw_schedule *sched = NULL;
	struct pw_error err;

	if (!tap_ok(fam != NULL, "family %s is registered", family))
		return NULL;
	if (fam->build(prob, &sched, &err) != PW_OK) {
		tap_ok(false, "%s builds on %d devices, %d stages, %d "
		    "microbatches", family, prob->devices, prob->nstages,
		    prob->microbatches);
		tap_diag("%s", err.msg);
		return NULL;
	}
	return sched;
}

/* The PO layout on PROB with PipeOffload's rule on the C lowest chunks
 * (SELECT as given, margin 1); the caller frees it. */
static struct pw_schedule *
test_po_chunks(const struct pw_problem *prob, enum pw_offload_select select,
    int c, bool gis_h)
{
	struct pw_offload_opts opts = { select, 1, NULL };
	struct pw_schedule *sched;
	struct pw_error err;
	bool *rule;
	int s, j, m = prob->microbatches;

	if ((gis_h ? pw_family_gis_h(prob, &sched, &err) :
	    pw_family_po(prob, &sched, &err)) != PW_OK)
		abort();
	rule = pw_xcalloc((size_t)prob->nstages * (size_t)m, sizeof *rule);
	for (s = 0; s < prob->nstages; s++)
		for (j = 0; j < m; j++)
			rule[s * m + j] = s / prob->devices < c;
	opts.rule = rule;
	if (!tap_ok(pw_offload_plan(prob, sched, &opts, &err) == PW_OK,
	    "plan: %d chunks on %d devices, %d stages", c, prob->devices,
	    prob->nstages))
		tap_diag("%s", err.msg);
	free(rule);
	return sched;
}

/* What a schedule comes to: whether it simulated and passed the checker,
 * its makespan, bubble rate, highest and summed device peaks, and how
 * many activations it moves. */
struct test_result {
	bool	ok;
	double	makespan;
	double	bubble;
	double	peak;
	double	sum;
	int	moved;
	char	fail[512];
};

/* Simulates SCHED, runs the independent checker on its timed ops and
 * fills R (no test line: callers aggregate). */
static void
test_run(const struct pw_problem *prob, const struct pw_schedule *sched,
    struct test_result *r)
{
	struct pw_timing *t = NULL;
	struct pw_metrics *m;
	struct pw_error err;
	char *fail;
	int d, c;

	memset(r, 0, sizeof *r);
	if (pw_simulate(prob, sched, &t, &err) != PW_OK) {
		snprintf(r->fail, sizeof r->fail, "simulate: %.400s", err.msg);
		return;
	}
	m = pw_metrics_compute(prob, sched, t);
	r->makespan = m->makespan;
	r->bubble = m->bubble_rate;
	for (d = 0; d < prob->devices; d++) {
		r->peak = fmax(r->peak, m->device[d].peak);
		r->sum += m->device[d].peak;
	}
	for (c = 0; c < sched->nchannels; c++)
		r->moved += sched->channel[c].len;
	r->moved /= 2;
	fail = test_checker(prob, sched, t);
	r->ok = fail == NULL;
	if (fail != NULL)
		snprintf(r->fail, sizeof r->fail, "%s", fail);
	free(fail);
	pw_metrics_free(m);
	pw_timing_free(t);
}

/* Runs SCHED with one test line for the checker; frees SCHED. */
static bool
test_checked(const struct pw_problem *prob, struct pw_schedule *sched,
    struct test_result *r, const char *what)
{
	if (sched == NULL) {
		memset(r, 0, sizeof *r);
		return false;
	}
	test_run(prob, sched, r);
	pw_schedule_free(sched);
	if (!tap_ok(r->ok, "%s: simulates and passes the checker", what))
		tap_diag("%s", r->fail);
	return r->ok;
}

static const char *test_names[] = {
	"gis", "gis-h", "po", "po-h", "po-f", "po-sel", "po-auto"
};
#define TEST_NNAMES (sizeof test_names / sizeof test_names[0])

static void
test_registry(void)
{
	size_t i;

	for (i = 0; i < TEST_NNAMES; i++)
		test_registered(test_names[i]);
}

static void
test_exact(const char *family, int d, int v, int m, int dev, const char *want)
{
	struct pw_problem *prob = test_problem(d, v, m, 0);
	struct pw_schedule *sched = test_build(family, prob);
	char *got;

	if (sched != NULL) {
		got = test_order(&sched->device[dev]);
		tap_str(got, want, "%s d=%d v=%d m=%d: order of device %d",
		    family, d, v, m, dev);
		tap_str(sched->family, family, "%s: names its family", family);
		free(got);
	}
	pw_schedule_free(sched);
	pw_problem_free(prob);
}

/*
 * Orders worked out from the building block (family_offload.c): F of
 * chunk c, microbatch r of group q at slot 3 pos(c), B at 3 (pos(v-1) +
 * d-1-i + pos(v-1-c)) + 1, W after it; pos(c) = k g c + g floor(c/P) +
 * g v q + r.
 *
 * GIS, d=2, v=2 (g=2, k=1, P=2): pos = 2c + 4q + r.  Device 0 runs F at
 * 0,3,..,21 in the order F(0,0) F(0,1) F(2,0) F(2,1) F(0,2) F(0,3) F(2,2)
 * F(2,3); B(2,j) at 10,13,22,25 and B(0,j) at 16,19,28,31 (warm-up 4 =
 * d(v-1) + d).  Device 1's B start one group earlier: B(3,j) at 7,10,19,22,
 * B(1,j) at 13,16,25,28 (warm-up 3).
 *
 * PO, d=4, v=2 (g=1, k=2, gcd(2,2)=2 so P=1): pos = 3c + 2mb.  Device 0:
 * F(0,j) at 0,6,12,18, F(4,j) at 9,15,21,27; B(4,j) at 19,25,31,37,
 * B(0,j) at 28,34,40,46.
 */
static void
test_orders(void)
{
	test_exact("gis", 2, 2, 4, 0,
	    "F(0,0) F(0,1) F(2,0) F(2,1) B(2,0) W(2,0) F(0,2) B(2,1) W(2,1) "
	    "F(0,3) B(0,0) W(0,0) F(2,2) B(0,1) W(0,1) F(2,3) B(2,2) W(2,2) "
	    "B(2,3) W(2,3) B(0,2) W(0,2) B(0,3) W(0,3)");
	test_exact("gis", 2, 2, 4, 1,
	    "F(1,0) F(1,1) F(3,0) B(3,0) W(3,0) F(3,1) B(3,1) W(3,1) F(1,2) "
	    "B(1,0) W(1,0) F(1,3) B(1,1) W(1,1) F(3,2) B(3,2) W(3,2) F(3,3) "
	    "B(3,3) W(3,3) B(1,2) W(1,2) B(1,3) W(1,3)");
	test_exact("po", 4, 2, 4, 0,
	    "F(0,0) F(0,1) F(4,0) F(0,2) F(4,1) F(0,3) B(4,0) W(4,0) F(4,2) "
	    "B(4,1) W(4,1) F(4,3) B(0,0) W(0,0) B(4,2) W(4,2) B(0,1) W(0,1) "
	    "B(4,3) W(4,3) B(0,2) W(0,2) B(0,3) W(0,3)");
}

/* GIS's warm-up on rank i (0-based) is d(v-1) + d - i forwards. */
static void
test_warmup(void)
{
	struct pw_problem *prob;
	struct pw_schedule *sched;
	struct pw_error err;
	int d, v, i, n, bad = 0, cases = 0;

	for (d = 1; d <= 8; d++)
		for (v = 1; v <= 4; v++) {
			prob = test_problem(d, v, 2 * d, 0);
			if (pw_family_gis(prob, &sched, &err) != PW_OK)
				abort();
			for (i = 0; i < d; i++, cases++) {
				for (n = 0; sched->device[i].ops[n].kind == PW_F;
				    n++)
					continue;
				if (n != d * (v - 1) + d - i && bad++ == 0)
					tap_diag("d=%d v=%d rank %d: %d forwards",
					    d, v, i, n);
			}
			pw_schedule_free(sched);
			pw_problem_free(prob);
		}
	tap_ok(bad == 0, "gis: rank i runs d(v-1)+d-i forwards first "
	    "(d 1..8, v 1..4, m = 2d: %d of %d ranks)", cases - bad, cases);
}

/* The highest device peak of the schedule of group size G. */
static void
test_group_peak(int d, int v, int g, int want)
{
	struct pw_problem *prob = test_problem(d, v, 8 * d, 0);
	struct pw_schedule *sched;
	struct test_result r;
	struct pw_error err;
	char what[64];

	snprintf(what, sizeof what, "group size %d, d=%d v=%d m=%d", g, d, v,
	    8 * d);
	if (!tap_ok(pw_family_group_interleaved(prob, g, &sched, &err) ==
	    PW_OK, "%s builds", what))
		tap_diag("%s", err.msg);
	else if (test_checked(prob, sched, &r, what))
		tap_near(r.peak, want, 0, "%s: peak g(v-1)+d = %d", what, want);
	pw_problem_free(prob);
}

/*
 * The reference peaks (m = 8d): d=8, v=5: interleaved 1F1B 47, GIS 40,
 * GIS-H 24, the PO layout 24; d=8, v=16: the PO layout 71; group sizes
 * g(v-1)+d: d=16, v=3: 8 -> 32, 16 -> 48; d=32, v=2: 16 -> 48, 32 -> 64.
 */
static void
test_reference_peaks(void)
{
	static const struct {
		const char *family;
		int	d, v, peak;
	} cases[] = {
		{ "1f1b-interleaved", 8, 5, 47 },
		{ "gis", 8, 5, 40 },
		{ "gis-h", 8, 5, 24 },
		{ "po", 8, 5, 24 },
		{ "po", 8, 16, 71 },
	};
	struct pw_problem *prob;
	struct test_result r;
	char what[64];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		prob = test_problem(cases[i].d, cases[i].v, 8 * cases[i].d, 0);
		snprintf(what, sizeof what, "%s d=%d v=%d m=%d",
		    cases[i].family, cases[i].d, cases[i].v, 8 * cases[i].d);
		if (test_checked(prob, test_build(cases[i].family, prob), &r,
		    what)) {
			tap_near(r.peak, cases[i].peak, 0, "%s: peak %d", what,
			    cases[i].peak);
			tap_diag("%s: makespan %g, bubble rate %.4f", what,
			    r.makespan, r.bubble);
		}
		pw_problem_free(prob);
	}
	test_group_peak(16, 3, 8, 32);
	test_group_peak(16, 3, 16, 48);
	test_group_peak(32, 2, 16, 48);
	test_group_peak(32, 2, 32, 64);
}

/*
 * Both closed forms of the reference over a grid: group size g in
 * [ceil(d/2), d] peaks at g(v-1) + d, and its bubble is GIS's (d-1)(f+b)
 * plus (d-g)(v-1) slots, so with g dividing m the makespan is
 * 3mv + 2(d-1) + (d-g)(v-1).
 */
static void
test_closed_forms(void)
{
	struct pw_problem *prob;
	struct pw_schedule *sched;
	struct test_result r;
	struct pw_error err;
	int d, v, g, m, cases = 0, bad = 0;

	for (d = 1; d <= 8; d++)
		for (v = 1; v <= 4; v++)
			for (g = (d + 1) / 2; g <= d; g++) {
				m = 2 * g * ((d + g - 1) / g);
				prob = test_problem(d, v, m, 0);
				if (pw_family_group_interleaved(prob, g, &sched,
				    &err) != PW_OK)
					abort();
				test_run(prob, sched, &r);
				cases++;
				if ((!r.ok || r.peak != g * (v - 1) + d ||
				    r.makespan != 3 * m * v + 2 * (d - 1) +
				    (d - g) * (v - 1)) && bad++ == 0)
					tap_diag("d=%d v=%d g=%d m=%d: peak %g, "
					    "makespan %g %s", d, v, g, m, r.peak,
					    r.makespan, r.fail);
				pw_schedule_free(sched);
				pw_problem_free(prob);
			}
	tap_ok(bad == 0, "group sizes: peak g(v-1)+d and makespan "
	    "3mv+2(d-1)+(d-g)(v-1) (%d of %d cases)", cases - bad, cases);
}

/* The peak of the layout (PO, or GIS-H) with C chunks offloaded by the
 * paper's rule at k; its makespan in *MAKESPAN.  -1 after a failure. */
static double
test_rule_peak(const struct pw_problem *prob, int c, bool gis_h,
    double *makespan)
{
	struct test_result r;
	char what[64];

	snprintf(what, sizeof what, "%s d=%d v=%d, %d chunks offloaded",
	    gis_h ? "gis-h" : "po", prob->devices,
	    prob->nstages / prob->devices, c);
	if (!test_checked(prob, test_po_chunks(prob, PW_OFFSEL_LAZY, c,
	    gis_h), &r, what))
		return -1;
	*makespan = r.makespan;
	return r.peak;
}

/*
 * The reference's offloaded peaks at k = 0.5, which ours must not exceed:
 * d=8, v=5 with 0..5 chunks offloaded, the PO layout 24 17 12 7 4 3 and
 * GIS-H 24 19 15 11 7 4.  Under the PO layout the peak falls faster than
 * linearly in the chunks offloaded, and faster than under GIS-H, which
 * starts from the same peak.  No offload changes the makespan.
 */
static void
test_offload_table(void)
{
	static const int po_ref[] = { 24, 17, 12, 7, 4, 3 };
	static const int gish_ref[] = { 24, 19, 15, 11, 7, 4 };
	struct pw_problem *prob = test_problem(8, 5, 64, 0.5);
	double po[6], gish[6], mk = 0, mk0 = 0, mk0h = 0, line;
	int c;

	for (c = 0; c <= 5; c++) {
		po[c] = test_rule_peak(prob, c, false, &mk);
		if (c == 0)
			mk0 = mk;
		tap_ok(po[c] >= 0 && po[c] <= po_ref[c], "po d=8 v=5 k=0.5, "
		    "%d chunks offloaded: peak %g, the reference's %d", c,
		    po[c], po_ref[c]);
		tap_near(mk, mk0, 1e-9 * mk0, "po d=8 v=5, %d chunks: the "
		    "makespan stays %g", c, mk0);
		gish[c] = test_rule_peak(prob, c, true, &mk);
		if (c == 0)
			mk0h = mk;
		tap_ok(gish[c] >= 0 && gish[c] <= gish_ref[c], "gis-h d=8 v=5 "
		    "k=0.5, %d chunks offloaded: peak %g, the reference's %d",
		    c, gish[c], gish_ref[c]);
		tap_near(mk, mk0h, 1e-9 * mk0h, "gis-h d=8 v=5, %d chunks: the "
		    "makespan stays %g", c, mk0h);
	}
	tap_near(po[0], gish[0], 0, "po and gis-h start from one peak");
	for (c = 1; c < 5; c++) {
		line = po[0] + (po[5] - po[0]) * c / 5;
		tap_ok(po[c] < line, "po: %d chunks offloaded peak %g, below "
		    "the line from %g to %g (%g): better than linear", c, po[c],
		    po[0], po[5], line);
		tap_ok(po[c] <= gish[c], "po falls faster than gis-h: %d chunks "
		    "%g <= %g", c, po[c], gish[c]);
	}
	pw_problem_free(prob);
}

/* FAMILY on D devices, V chunks, m = 8d, k: peak at most WANT and the
 * makespan of the layout without offload. */
static void
test_family_peak(const char *family, int d, int v, double k, int want)
{
	struct pw_problem *prob = test_problem(d, v, 8 * d, k);
	struct test_result r, base;
	char what[64];

	snprintf(what, sizeof what, "%s d=%d v=%d k=%g", family, d, v, k);
	if (test_checked(prob, test_build("po", prob), &base, "po") &&
	    test_checked(prob, test_build(family, prob), &r, what)) {
		tap_ok(r.peak <= want, "%s: peak %g, the reference's %d", what,
		    r.peak, want);
		tap_near(r.makespan, base.makespan, 1e-9 * base.makespan,
		    "%s: makespan %g, the po layout's", what, r.makespan);
		tap_diag("%s: %d activations moved, bubble rate %.4f", what,
		    r.moved, r.bubble);
	}
	pw_problem_free(prob);
}

/* The reference's PO-H / PO-F at k = 0.5 (and PO with 8 of 16 chunks). */
static void
test_offload_families(void)
{
	struct pw_problem *prob;
	double mk, peak;

	test_family_peak("po-h", 16, 3, 0.5, 8);
	test_family_peak("po-f", 16, 3, 0.5, 3);
	test_family_peak("po-h", 32, 2, 0.5, 18);
	test_family_peak("po-f", 32, 2, 0.5, 3);
	test_family_peak("po-sel", 16, 3, 0.5, 3);
	prob = test_problem(8, 16, 64, 0.5);
	peak = test_rule_peak(prob, 8, false, &mk);
	tap_ok(peak >= 0 && peak <= 21, "po d=8 v=16 k=0.5, 8 chunks "
	    "offloaded: peak %g, the reference's 21", peak);
	peak = test_rule_peak(prob, 16, false, &mk);
	tap_ok(peak >= 0 && peak <= 3, "po d=8 v=16 k=0.5, 16 chunks "
	    "offloaded: peak %g, the reference's 3", peak);
	pw_problem_free(prob);
}

/*
 * PO-sel against the paper's rule: d=4, v=3, m=32 at k = 0.7, where the
 * pairs' channels cannot take every activation.  The rule on the c lowest
 * chunks, c = 0..3, peaks at best at 4 stage-activations; PO-sel reaches
 * 3 with the same makespan.
 */
static void
test_sel_beats_rule(void)
{
	struct pw_problem *prob = test_problem(4, 3, 32, 0.7);
	struct test_result r;
	double best = INFINITY, mk = 0, mk_best = 0, peak;
	int c;

	for (c = 0; c <= 3; c++) {
		peak = test_rule_peak(prob, c, false, &mk);
		tap_diag("the rule on %d chunks: peak %g, makespan %g", c, peak,
		    mk);
		if (peak >= 0 && peak < best) {
			best = peak;
			mk_best = mk;
		}
	}
	tap_near(best, 4, 0, "the rule's best peak on d=4 v=3 k=0.7 is 4");
	if (test_checked(prob, test_build("po-sel", prob), &r, "po-sel d=4 "
	    "v=3 k=0.7")) {
		tap_near(r.peak, 3, 0, "po-sel d=4 v=3 k=0.7: peak 3, below "
		    "the rule's best");
		tap_near(r.makespan, mk_best, 1e-9 * mk_best, "po-sel d=4 v=3 "
		    "k=0.7: the same makespan %g", mk_best);
	}
	pw_problem_free(prob);
}

/* PROB's layout of group size G as it is (maybe over the limits): its
 * result in *R (false after a failed test line). */
static bool
test_group(const struct pw_problem *prob, int g, struct test_result *r)
{
	struct pw_schedule *sched = NULL;
	struct pw_error err;

	if (!tap_ok(pw_family_group_interleaved(prob, g, &sched, &err) ==
	    PW_OK, "gis-g%d builds", g)) {
		tap_diag("%s", err.msg);
		return false;
	}
	test_run(prob, sched, r);
	pw_schedule_free(sched);
	return true;
}

/* PO-auto on PROB with every limit LIMIT: within the limits, the
 * makespan of group size WANT_G, WANT_MOVED activations moved (-1: some). */
static void
test_po_auto_case(struct pw_problem *prob, double limit, int want_g,
    int want_moved, const char *what)
{
	struct test_result r, g;
	int i;

	for (i = 0; i < prob->devices; i++)
		prob->memory[i].limit = limit;
	if (!test_group(prob, want_g, &g) ||
	    !test_checked(prob, test_build("po-auto", prob), &r, what))
		return;
	tap_near(r.makespan, g.makespan, 0, "%s: makespan %g, group size "
	    "%d's", what, r.makespan, want_g);
	tap_ok(r.peak <= limit, "%s: peak %g within %g", what, r.peak, limit);
	if (want_moved >= 0)
		tap_ok(r.moved == want_moved, "%s: %d activations moved, want "
		    "%d", what, r.moved, want_moved);
	else
		tap_ok(r.moved > 0, "%s: %d activations moved", what, r.moved);
	tap_diag("%s: bubble rate %.4f, peak %g", what, r.bubble, r.peak);
}

/*
 * PO-auto: the fastest group size that fits (on even stages, the
 * largest).  d=8, v=5, m=64 at k=1.0 with limits of 7 (the PO-H peak at
 * k=0.5): PO-H holds the limit with the PO layout's bubble, 56 per
 * device (makespan 1016); group size 2 fits with offloads (bubble 48:
 * makespan 1008, a rate of 0.0476, below half the paper's PO bubble,
 * 0.0495), 3 does not.  At a limit of 4 nothing fits: PO-sel's plan (the
 * lowest peak of the PO layout's).  Without a limit it is
 * GIS (974); without a link, limit 24: GIS-H's g = 4 (peak g(v-1)+d = 24,
 * makespan 990), nothing moved; limit 20: not even the PO layout (peak
 * 24) fits, so it is that layout as it is.
 */
static void
test_po_auto(void)
{
	struct pw_problem *prob = test_problem(8, 5, 64, 1.0);
	struct pw_schedule *sched, *other;
	struct test_result r, g;
	int i;

	test_po_auto_case(prob, 7, 2, -1, "po-auto d=8 v=5 k=1 limit 7");
	if (test_checked(prob, test_build("po-auto", prob), &r, "po-auto "
	    "d=8 v=5 k=1 limit 7"))
		tap_near(r.makespan, 1008, 0, "po-auto d=8 v=5 k=1 limit 7: "
		    "makespan 1008 (bubble %.4f)", r.bubble);
	if (test_group(prob, 3, &r))
		tap_ok(r.peak > 7, "gis-g3 d=8 v=5: peak %g over 7 before "
		    "offload", r.peak);
	for (i = 0; i < prob->devices; i++)
		prob->memory[i].limit = 4;
	sched = test_build("po-auto", prob);
	other = test_build("po-sel", prob);
	if (sched != NULL && other != NULL) {
		test_run(prob, sched, &r);
		test_run(prob, other, &g);
		/* Both over the limit, which the checker reports. */
		tap_ok(r.makespan > 0 && r.peak > 4 &&
		    r.makespan == g.makespan && r.peak == g.peak &&
		    r.sum == g.sum && r.moved == g.moved,
		    "po-auto d=8 v=5 k=1 limit 4: nothing fits, PO-sel's plan "
		    "(makespan %g, peak %g, %d moved; PO-sel %g, %g, %d)",
		    r.makespan, r.peak, r.moved, g.makespan, g.peak, g.moved);
	}
	pw_schedule_free(sched);
	pw_schedule_free(other);
	test_po_auto_case(prob, INFINITY, 8, 0, "po-auto d=8 v=5 no limit");
	pw_problem_free(prob);
	prob = test_problem(8, 5, 64, 0);
	test_po_auto_case(prob, 24, 4, 0, "po-auto d=8 v=5 no link limit 24");
	if (test_checked(prob, test_build("po-auto", prob), &r, "po-auto "
	    "d=8 v=5 no link limit 24"))
		tap_near(r.makespan, 990, 0, "po-auto no link limit 24: "
		    "makespan 990, GIS-H's");
	for (i = 0; i < prob->devices; i++)
		prob->memory[i].limit = 20;
	if ((sched = test_build("po-auto", prob)) != NULL &&
	    test_group(prob, 1, &g)) {
		test_run(prob, sched, &r);
		tap_ok(r.makespan == g.makespan && r.peak == 24 && r.moved == 0,
		    "po-auto no link limit 20: the PO layout as it is "
		    "(makespan %g, peak %g, %d moved)", r.makespan, r.peak,
		    r.moved);
	}
	pw_schedule_free(sched);
	pw_problem_free(prob);
}

/*
 * The planner on a case worked out by hand: one device, one stage,
 * GPipe, m = 3; f = b = w = 1 (BW 2); transfers 0.25 s on one channel;
 * margin 0.  Compute: F0 [0,1] F1 [1,2] F2 [2,3] BW0 [3,5] BW1 [5,7]
 * BW2 [7,9].  Every gap from F end to B (2, 3, 4) exceeds three round
 * trips (1.5).  Offloads go right after each F: [1,1.25] [2,2.25]
 * [3,3.25].  Reloads from the last back: (0,2) latest start 6.75, at BW1's
 * start 5; (0,1) latest 4.75: BW0 starts at 3 but offload (0,2) ends at
 * 3.25, so it follows that (anchor BW0); (0,0) latest 2.75: after offload
 * (0,1) at 2.25 (anchor F2).  Memory: 1, 2, then 2 at every allocation:
 * peak 2 instead of 3, makespan 9.
 */
static void
test_planner_exact(void)
{
	static const char *want_order =
	    "OFFLOAD(0,0) OFFLOAD(0,1) RELOAD(0,0) OFFLOAD(0,2) RELOAD(0,1) "
	    "RELOAD(0,2)";
	static const struct { int mb; double start; const char *anchor; }
	    rel[] = { { 0, 2.25, "F(0,2)" }, { 1, 3.25, "BW(0,0)" },
	    { 2, 5, "BW(0,1)" } };
	struct pw_offload_opts opts = { PW_OFFSEL_LAZY, 0, NULL };
	struct pw_problem *prob = test_problem(1, 1, 3, 0);
	struct pw_schedule *sched;
	struct pw_timing *t;
	struct pw_error err;
	struct test_result r;
	struct pw_anchor anchor;
	char *got, name[64];
	size_t i;

	pw_problem_set_link(prob, 4, 4, 0, false);
	if (pw_family_gpipe(prob, &sched, &err) != PW_OK ||
	    !tap_ok(pw_offload_plan(prob, sched, &opts, &err) == PW_OK,
	    "planner: gpipe, one device, m=3")) {
		tap_diag("%s", err.msg);
		pw_problem_free(prob);
		return;
	}
	got = test_order(&sched->channel[0]);
	tap_str(got, want_order, "planner: the channel's order");
	free(got);
	if (pw_simulate(prob, sched, &t, &err) == PW_OK) {
		for (i = 0; i < 3; i++) {
			struct pw_op op = { PW_RELOAD, 0, rel[i].mb };

			tap_near(t->start[pw_op_index(prob, op)], rel[i].start,
			    0, "planner: RELOAD(0,%d) starts at %g", rel[i].mb,
			    rel[i].start);
			tap_ok(pw_schedule_anchor(sched, 0, rel[i].mb, &anchor),
			    "planner: RELOAD(0,%d) is anchored", rel[i].mb);
			tap_str(pw_op_name(name, sizeof name, anchor.op),
			    rel[i].anchor, "planner: RELOAD(0,%d)'s anchor",
			    rel[i].mb);
			tap_ok(!anchor.at_end, "planner: RELOAD(0,%d) at its "
			    "anchor's start", rel[i].mb);
		}
		pw_timing_free(t);
	}
	if (test_checked(prob, sched, &r, "planner: gpipe, one device")) {
		tap_near(r.peak, 2, 0, "planner: peak 2 (3 without offload)");
		tap_near(r.makespan, 9, 0, "planner: makespan stays 9");
	}
	pw_problem_free(prob);
}

/*
 * A reload that must wait for what an op frees, with the backward next
 * in the device's order: 2 devices, stages 0-3 on loop placement, one
 * microbatch, unit times but W(2) of 0.25, act 1, hold 0.75, stage 0's
 * activation movable (0.5 each way), device 0's limit 1.5.  F(2,0) at 2
 * needs stage 0's activation away; after B(2,0) (5-6) the hold stays
 * until W(2,0) ends at 6.25, so the reload, due by B(0,0) at 7, fits only
 * from W(2,0)'s end (from its start at 6 the level would be 1.75).
 */
static void
test_planner_end_anchor(void)
{
	static const struct pw_op order[] = {
		{ PW_F, 0, 0 }, { PW_F, 2, 0 }, { PW_B, 2, 0 }, { PW_W, 2, 0 },
		{ PW_B, 0, 0 }, { PW_W, 0, 0 },
		{ PW_F, 1, 0 }, { PW_F, 3, 0 }, { PW_B, 3, 0 }, { PW_W, 3, 0 },
		{ PW_B, 1, 0 }, { PW_W, 1, 0 },
	};
	struct pw_offload_opts opts = { PW_OFFSEL_PEAK, 0, NULL };
	struct pw_problem *prob = pw_problem_new(2, 4, 1);
	struct pw_schedule *sched;
	struct pw_op rel = { PW_RELOAD, 0, 0 };
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_anchor a;
	struct pw_error err;
	struct test_result r;
	size_t i;
	int s;

	pw_problem_place_loop(prob, &err);
	for (s = 0; s < 4; s++)
		prob->stages[s] = (struct pw_stage){ .device = s % 2, .f = 1,
		    .b = 1, .w = s == 2 ? 0.25 : 1, .act = 1, .hold = 0.75 };
	prob->stages[0].offload = 1;
	prob->memory[0].limit = 1.5;
	prob->memory[1].limit = INFINITY;
	pw_problem_set_link(prob, 2, 2, 0, true);
	sched = pw_schedule_new(prob);
	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		pw_schedule_append(sched, prob, order[i]);
	if (!tap_int(pw_offload_plan(prob, sched, &opts, &err), PW_OK,
	    "end anchor: planned") ||
	    !tap_int(pw_simulate(prob, sched, &t, &err), PW_OK,
	    "end anchor: simulates")) {
		tap_diag("%s", err.msg);
		goto out;
	}
	m = pw_metrics_compute(prob, sched, t);
	tap_ok(pw_schedule_anchor(sched, 0, 0, &a) && a.at_end &&
	    a.op.kind == PW_W && a.op.stage == 2 && a.op.mb == 0,
	    "end anchor: RELOAD(0,0) after W(2,0) ends");
	tap_near(t->start[pw_op_index(prob, rel)], 6.25, 0,
	    "end anchor: the reload starts at 6.25");
	tap_near(m->device[0].peak, 1, 0, "end anchor: device 0 peaks at 1");
	tap_near(m->makespan, 9, 0, "end anchor: makespan stays 9");
	pw_metrics_free(m);
	pw_timing_free(t);
	test_checked(prob, sched, &r, "end anchor");
	sched = NULL;
out:
	pw_schedule_free(sched);
	pw_problem_free(prob);
}

/* pw_offload_plan_timed on a layout the caller timed: the same plan as
 * pw_offload_plan's, with the planned schedule's own metrics, and the
 * same refusals. */
static void
test_planner_timed(void)
{
	struct pw_offload_opts opts = { PW_OFFSEL_PEAK, 1, NULL };
	struct pw_problem *prob = test_problem(4, 3, 16, 0.7);
	struct pw_schedule *plain, *timed;
	struct pw_timing *t, *after;
	struct pw_metrics *m, *result, *want;
	struct pw_error err;
	int d;
	bool same = true;

	if (pw_family_po(prob, &plain, &err) != PW_OK ||
	    pw_simulate(prob, plain, &t, &err) != PW_OK)
		abort();
	m = pw_metrics_compute(prob, plain, t);
	timed = pw_schedule_copy(plain);
	tap_int(pw_offload_plan(prob, plain, &opts, &err), PW_OK,
	    "timed: the plain planner plans");
	tap_int(pw_offload_plan_timed(prob, timed, t, m, &opts, &result,
	    &err), PW_OK, "timed: the timed one too");
	tap_ok(test_same_schedule(plain, timed) && plain->channel[0].len > 0,
	    "timed: the same transfers (%d)", plain->channel[0].len);
	if (pw_simulate(prob, timed, &after, &err) != PW_OK)
		abort();
	want = pw_metrics_compute(prob, timed, after);
	for (d = 0; d < prob->devices; d++)
		same = same && result->device[d].peak == want->device[d].peak;
	tap_ok(same && result->makespan == want->makespan &&
	    result->feasible == want->feasible, "timed: its metrics are the "
	    "planned schedule's");
	pw_metrics_free(result);
	tap_int(pw_offload_plan_timed(prob, timed, t, m, &opts, &result,
	    &err), PW_ERR_INPUT, "timed: a schedule with transfers refused");
	tap_ok(result == NULL, "timed: no metrics with the refusal");
	pw_metrics_free(want);
	pw_timing_free(after);
	pw_metrics_free(m);
	pw_timing_free(t);
	pw_schedule_free(timed);
	pw_schedule_free(plain);
	pw_problem_free(prob);
}

static void
test_planner_errors(void)
{
	struct pw_offload_opts opts = { PW_OFFSEL_LAZY, 1, NULL };
	struct pw_problem *prob = test_problem(2, 2, 4, 0.5);
	struct pw_schedule *sched;
	struct pw_error err;

	if (pw_family_po_f(prob, &sched, &err) != PW_OK)
		abort();
	tap_int(pw_offload_plan(prob, sched, &opts, &err), PW_ERR_INPUT,
	    "planner refuses a schedule with transfers");
	tap_ok(strncmp(err.msg, "offload planner: the schedule already has "
	    "transfers (", 52) == 0, "planner: the reason (%s)", err.msg);
	pw_schedule_free(sched);

	if (pw_family_po(prob, &sched, &err) != PW_OK)
		abort();
	opts.margin = -1;
	tap_int(pw_offload_plan(prob, sched, &opts, &err), PW_ERR_INPUT,
	    "planner refuses a negative margin");
	tap_str(err.msg, "offload planner: margin must be a finite number "
	    ">= 0 (got -1)", "planner: the margin's reason");
	opts.margin = NAN;
	tap_int(pw_offload_plan(prob, sched, &opts, &err), PW_ERR_INPUT,
	    "planner refuses a margin that is not a number");
	opts.margin = 1;
	/* Device 0 waits for its own last backward first: a deadlock. */
	sched->device[0].ops[0] = sched->device[0].ops[sched->device[0].len - 1];
	sched->device[0].ops[sched->device[0].len - 1] =
	    (struct pw_op){ PW_F, 0, 0 };
	tap_int(pw_offload_plan(prob, sched, &opts, &err), PW_ERR_DEADLOCK,
	    "planner passes on a deadlock");
	tap_ok(sched->channel[0].len == 0, "planner: no transfers after an "
	    "error");
	pw_schedule_free(sched);
	pw_problem_free(prob);
}

/*
 * The planner on other families' schedules (fused and split backwards,
 * one stage or several per device) with a full-duplex link in one group,
 * latency, partial offload, comm and uneven costs: the makespan never
 * moves, the checker passes, and no device's peak rises.
 */
static void
test_planner_general(void)
{
	static const char *families[] = {
		"1f1b", "zb-h1", "zb-h2", "1f1b-interleaved", "gis-h", "po"
	};
	static const enum pw_offload_select selects[] = {
		PW_OFFSEL_LAZY, PW_OFFSEL_PEAK
	};
	struct pw_offload_opts opts = { PW_OFFSEL_LAZY, 0.5, NULL };
	struct pw_problem *prob;
	struct pw_schedule *sched;
	struct test_result r, base;
	struct pw_error err;
	size_t i, k;
	int s, d, v;

	for (i = 0; i < sizeof families / sizeof families[0]; i++)
		for (k = 0; k < 2; k++) {
			v = strncmp(families[i], "1f1b-", 5) == 0 ||
			    strncmp(families[i], "gis", 3) == 0 ||
			    strcmp(families[i], "po") == 0 ? 2 : 1;
			prob = test_problem(4, v, 12, 0);
			for (s = 0; s < prob->nstages; s++) {
				prob->stages[s].f = 1 + 0.25 * (s % 3);
				prob->stages[s].b = 1.5 + 0.5 * (s % 2);
				prob->stages[s].w = 0.75;
				prob->stages[s].act = 3;
				prob->stages[s].hold = 1.5;
				prob->stages[s].offload = 2;
			}
			pw_problem_set_comm(prob, 0.125);
			pw_problem_set_link(prob, 8, 6, 0.05, true);
			prob->link.ngroups = 1;
			for (d = 0; d < 4; d++)
				prob->link.group[d] = 0;
			if (!test_checked(prob, test_build(families[i], prob),
			    &base, families[i])) {
				pw_problem_free(prob);
				continue;
			}
			sched = test_build(families[i], prob);
			opts.select = selects[k];
			if (sched != NULL && !tap_ok(pw_offload_plan(prob, sched,
			    &opts, &err) == PW_OK, "plan %s", families[i]))
				tap_diag("%s", err.msg);
			if (test_checked(prob, sched, &r, families[i])) {
				tap_ok(r.moved > 0, "%s (%s): moves %d "
				    "activations", families[i], k ? "peak" :
				    "rule", r.moved);
				tap_near(r.makespan, base.makespan, 1e-9 *
				    base.makespan, "%s (%s): makespan %g stays",
				    families[i], k ? "peak" : "rule",
				    base.makespan);
				tap_ok(r.peak <= base.peak && r.sum <= base.sum,
				    "%s (%s): peak %g <= %g, sum %g <= %g",
				    families[i], k ? "peak" : "rule", r.peak,
				    base.peak, r.sum, base.sum);
			}
			pw_problem_free(prob);
		}
}

static void
test_refusals(void)
{
	struct pw_problem *prob;
	struct pw_schedule *sched = NULL;
	struct pw_error err;
	size_t i;
	int s;

	prob = test_problem(4, 2, 8, 0.5);
	if (pw_problem_place_v(prob, &err) != PW_OK)
		abort();
	for (i = 0; i < TEST_NNAMES; i++) {
		char want[256];

		snprintf(want, sizeof want, "%s needs loop placement (stage s "
		    "on device s mod p, the same number of stages on every "
		    "device); this problem has 8 stages on 4 devices not in "
		    "loop placement", test_names[i]);
		test_refusal(test_names[i], prob, want);
	}
	pw_problem_free(prob);

	prob = test_problem(4, 2, 8, 0);
	test_refusal("po-h", prob, "po-h needs an offload link and stages "
	    "with offload bytes; this problem has no link");
	pw_problem_set_link(prob, 1, 1, 0, true);
	for (s = 0; s < prob->nstages; s++)
		prob->stages[s].offload = 0;
	test_refusal("po-sel", prob, "po-sel needs an offload link and stages "
	    "with offload bytes; this problem has offload 0 on every stage");
	tap_int(pw_family_group_interleaved(prob, 5, &sched, &err),
	    PW_ERR_NOT_APPLICABLE, "group size above the devices is refused");
	tap_str(err.msg, "group interleaving needs a group size from 1 to the "
	    "devices (4); got 5", "group size: the reason");
	tap_ok(sched == NULL, "group size: no schedule when refused");
	pw_problem_free(prob);
}

/*
 * Every family over a grid (d 1..6, v 1..3, several m, uneven costs and
 * comm, the paired link at k = 0.8): builds, has every op once (F, B, W),
 * simulates and passes the checker; the offloading families keep the PO
 * layout's makespan (PO-auto, without limits, GIS's), and PO-sel peaks
 * no higher than PO-H or PO-F.
 */
static void
test_grid(void)
{
	static const int ms[] = { 1, 2, 3, 5, 8, 13 };
	struct pw_problem *prob;
	struct pw_schedule *sched;
	struct test_result r[TEST_NNAMES];
	char fail[640] = "";
	size_t i, k;
	int d, v, s, cases = 0, bad = 0;

	for (d = 1; d <= 6; d++)
		for (v = 1; v <= 3; v++)
			for (k = 0; k < sizeof ms / sizeof ms[0]; k++) {
				prob = test_problem(d, v, ms[k] * (1 + d / 3), 0.8);
				for (s = 0; s < prob->nstages; s++) {
					prob->stages[s].f = 1 + 0.5 * (s % 2);
					prob->stages[s].b = 1.25 + 0.25 * (s % 3);
					prob->stages[s].w = 0.5 + 0.5 * (s % 2);
				}
				pw_problem_set_comm(prob, 0.1);
				cases++;
				for (i = 0; i < TEST_NNAMES; i++) {
					const struct pw_family *fam =
					    pw_family_find(test_names[i]);
					struct pw_error err;

					if (fam->build(prob, &sched, &err) !=
					    PW_OK) {
						snprintf(r[i].fail, sizeof r[i].fail,
						    "refused: %.400s", err.msg);
						r[i].ok = false;
						continue;
					}
					test_run(prob, sched, &r[i]);
					for (s = 0; s < d; s++)
						if (sched->device[s].len !=
						    3 * v * prob->microbatches) {
							r[i].ok = false;
							snprintf(r[i].fail,
							    sizeof r[i].fail,
							    "device %d has %d "
							    "ops", s, sched->
							    device[s].len);
						}
					pw_schedule_free(sched);
				}
				/* PO-auto, without limits: GIS. */
				for (i = 0; i < TEST_NNAMES; i++)
					if (!r[i].ok || (i >= 3 && r[i].makespan !=
					    r[i == 6 ? 0 : 2].makespan))
						break;
				if (i == TEST_NNAMES && (r[5].peak > r[3].peak ||
				    r[5].peak > r[4].peak))
					i = 5;
				if (i < TEST_NNAMES && bad++ == 0)
					snprintf(fail, sizeof fail, "%s d=%d v=%d "
					    "m=%d: %s (makespan %g, po %g; peak "
					    "%g)", test_names[i], d, v,
					    prob->microbatches, r[i].fail,
					    r[i].makespan, r[2].makespan,
					    r[i].peak);
				pw_problem_free(prob);
			}
	if (!tap_ok(bad == 0, "every family on d 1..6, v 1..3, 6 values of m: "
	    "%d of %d problems", cases - bad, cases))
		tap_diag("%s", fail);
}

int
main(void)
{
	test_registry();
	test_orders();
	test_warmup();
	test_reference_peaks();
	test_closed_forms();
	test_offload_table();
	test_offload_families();
	test_sel_beats_rule();
	test_po_auto();
	test_planner_exact();
	test_planner_end_anchor();
	test_planner_errors();
	test_planner_timed();
	test_planner_general();
	test_refusals();
	test_grid();
	return tap_done();
}
