/*
 * test_families.c - the classic schedule families: the registry, exact op
 * orders written out by hand, applicability over a grid of problems (every
 * schedule built must simulate), and the unit case of the PipeOffload
 * reference (p=4, m=8, unit times: spans 33 / 27 / 24, peaks 4 / 4 / 7).
 */
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "tap.h"
#include "testlib.h"

/* Returns a problem the caller frees: P devices, V chunks each on loop
 * placement, every stage with the same times and act = hold = 1. */
static struct pw_problem *
test_problem(int p, int v, int m, double f, double b, double w, double comm)
{
	struct pw_stage st = { .f = f, .b = b, .w = w, .act = 1, .hold = 1,
	    .comm = comm };

	return test_problem_uniform(p, v, m, PW_PLACE_LOOP, &st);
}

/* Returns FAMILY's schedule for PROB (the caller frees it), or NULL after
 * a failed test line. */
static struct pw_schedule *
test_build(const char *family, const struct pw_problem *prob)
{
	const struct pw_family *fam;
	struct pw_schedule *sched = NULL;
	struct pw_error err;

	fam = pw_family_find(family);
	if (!tap_ok(fam != NULL, "family %s is registered", family))
		return NULL;
	if (!tap_ok(fam->build(prob, &sched, &err) == PW_OK,
	    "%s builds on %d devices, %d stages, %d microbatches", family,
	    prob->devices, prob->nstages, prob->microbatches)) {
		tap_diag("%s", err.msg);
		return NULL;
	}
	return sched;
}

static const char *test_classic[] = {
	"gpipe", "1f1b", "1f1b-interleaved", "zb-h1", "zb-h2"
};
#define TEST_NCLASSIC (sizeof test_classic / sizeof test_classic[0])

static void
test_registry(void)
{
	const struct pw_family *fam;
	size_t i, j;

	for (i = 0; i < TEST_NCLASSIC; i++)
		if ((fam = test_registered(test_classic[i])) != NULL)
			tap_str(fam->name, test_classic[i], "%s: row name",
			    test_classic[i]);
	tap_ok(pw_family_find("1F1B") == NULL && pw_family_find("") == NULL,
	    "unknown names are not found");
	for (i = 0; i < pw_nfamilies; i++)
		for (j = i + 1; j < pw_nfamilies; j++)
			if (strcmp(pw_families[i].name,
			    pw_families[j].name) == 0)
				tap_ok(false, "family %s registered twice",
				    pw_families[i].name);
}

/* Device D of FAMILY's schedule on P devices, V chunks, M microbatches
 * has exactly the order WANT. */
static void
test_exact(const char *family, int p, int v, int m, int d, const char *want)
{
	struct pw_problem *prob = test_problem(p, v, m, 1, 1, 1, 0);
	struct pw_schedule *sched;
	char *got;

	if ((sched = test_build(family, prob)) != NULL) {
		got = test_order(&sched->device[d]);
		tap_str(got, want, "%s p=%d v=%d m=%d: order of device %d",
		    family, p, v, m, d);
		free(got);
		tap_str(sched->family, family, "%s: schedule names its family",
		    family);
	}
	pw_schedule_free(sched);
	pw_problem_free(prob);
}

static void
test_orders(void)
{
	test_exact("1f1b", 4, 1, 8, 0,
	    "F(0,0) F(0,1) F(0,2) F(0,3) BW(0,0) F(0,4) BW(0,1) F(0,5) "
	    "BW(0,2) F(0,6) BW(0,3) F(0,7) BW(0,4) BW(0,5) BW(0,6) BW(0,7)");
	test_exact("1f1b", 4, 1, 8, 3,
	    "F(3,0) BW(3,0) F(3,1) BW(3,1) F(3,2) BW(3,2) F(3,3) BW(3,3) "
	    "F(3,4) BW(3,4) F(3,5) BW(3,5) F(3,6) BW(3,6) F(3,7) BW(3,7)");
	/* Fewer microbatches than the warm-up: it is cut to m. */
	test_exact("1f1b", 4, 1, 2, 0, "F(0,0) F(0,1) BW(0,0) BW(0,1)");
	test_exact("1f1b", 4, 1, 2, 2, "F(2,0) F(2,1) BW(2,0) BW(2,1)");
	test_exact("gpipe", 3, 1, 3, 1,
	    "F(1,0) F(1,1) F(1,2) BW(1,0) BW(1,1) BW(1,2)");
	test_exact("zb-h1", 4, 1, 8, 0,
	    "F(0,0) F(0,1) F(0,2) F(0,3) B(0,0) W(0,0) F(0,4) B(0,1) W(0,1) "
	    "F(0,5) B(0,2) W(0,2) F(0,6) B(0,3) W(0,3) F(0,7) B(0,4) W(0,4) "
	    "B(0,5) W(0,5) B(0,6) W(0,6) B(0,7) W(0,7)");
	test_exact("zb-h1", 4, 1, 8, 3,
	    "F(3,0) B(3,0) F(3,1) B(3,1) F(3,2) B(3,2) F(3,3) B(3,3) W(3,0) "
	    "F(3,4) B(3,4) W(3,1) F(3,5) B(3,5) W(3,2) F(3,6) B(3,6) W(3,3) "
	    "F(3,7) B(3,7) W(3,4) W(3,5) W(3,6) W(3,7)");
	test_exact("zb-h2", 4, 1, 8, 0,
	    "F(0,0) F(0,1) F(0,2) F(0,3) F(0,4) F(0,5) F(0,6) B(0,0) W(0,0) "
	    "F(0,7) B(0,1) W(0,1) B(0,2) W(0,2) B(0,3) W(0,3) B(0,4) W(0,4) "
	    "B(0,5) W(0,5) B(0,6) W(0,6) B(0,7) W(0,7)");
	test_exact("zb-h2", 4, 1, 8, 3,
	    "F(3,0) B(3,0) F(3,1) B(3,1) F(3,2) B(3,2) F(3,3) B(3,3) F(3,4) "
	    "B(3,4) F(3,5) B(3,5) F(3,6) B(3,6) W(3,0) F(3,7) B(3,7) W(3,1) "
	    "W(3,2) W(3,3) W(3,4) W(3,5) W(3,6) W(3,7)");
	/* Device 0 holds stages 0 and 2, device 1 stages 1 and 3; forwards
	 * go in groups of p = 2 microbatches per chunk, backwards through
	 * the chunks from last to first. */
	test_exact("1f1b-interleaved", 2, 2, 4, 0,
	    "F(0,0) F(0,1) F(2,0) F(2,1) F(0,2) BW(2,0) F(0,3) BW(2,1) "
	    "F(2,2) BW(0,0) F(2,3) BW(0,1) BW(2,2) BW(2,3) BW(0,2) BW(0,3)");
	test_exact("1f1b-interleaved", 2, 2, 4, 1,
	    "F(1,0) F(1,1) F(3,0) BW(3,0) F(3,1) BW(3,1) F(1,2) BW(1,0) "
	    "F(1,3) BW(1,1) F(3,2) BW(3,2) F(3,3) BW(3,3) BW(1,2) BW(1,3)");
}

static void
test_refusals(void)
{
	struct pw_problem *prob;
	struct pw_error err;

	prob = test_problem(8, 2, 16, 1, 1, 1, 0);
	test_refusal("1f1b", prob, "1f1b needs one stage per device in order "
	    "(stage s on device s); this problem has 16 stages on 8 devices");
	pw_problem_free(prob);

	prob = test_problem(4, 2, 8, 1, 1, 1, 0);
	if (!tap_ok(pw_problem_place_v(prob, &err) == PW_OK, "V placement"))
		tap_diag("%s", err.msg);
	test_refusal("1f1b-interleaved", prob, "1f1b-interleaved needs loop "
	    "placement (stage s on device s mod p) with at least 2 stages per "
	    "device; this problem has 8 stages on 4 devices not in loop "
	    "placement");
	pw_problem_free(prob);

	prob = test_problem(4, 1, 8, 1, 1, 1, 0);
	prob->stages[1].device = 2;
	prob->stages[2].device = 1;
	test_refusal("gpipe", prob, "gpipe needs one stage per device in "
	    "order (stage s on device s); this problem has stage 1 on "
	    "device 2");
	test_refusal("1f1b-interleaved", prob, "1f1b-interleaved needs loop "
	    "placement (stage s on device s mod p) with at least 2 stages per "
	    "device; this problem has 4 stages on 4 devices not in loop "
	    "placement");
	pw_problem_free(prob);

	prob = test_problem(4, 1, 8, 1, 1, 1, 0);
	test_refusal("1f1b-interleaved", prob, "1f1b-interleaved needs loop "
	    "placement (stage s on device s mod p) with at least 2 stages per "
	    "device; this problem has 4 stages on 4 devices");
	pw_problem_free(prob);

	prob = test_problem(4, 3, 10, 1, 1, 1, 0);
	test_refusal("1f1b-interleaved", prob, "1f1b-interleaved needs the "
	    "microbatches to be a multiple of the devices; this problem has "
	    "10 microbatches on 4 devices");
	pw_problem_free(prob);

	prob = test_problem(8, 1, 13, 1, 1, 1, 0);
	test_refusal("zb-h2", prob, "zb-h2 needs at least 14 microbatches "
	    "(device 0 runs 14 forwards before its first backward); this "
	    "problem has 13");
	pw_problem_free(prob);

	prob = test_problem(8, 1, 6, 1, 1, 1, 0);
	test_refusal("zb-h1", prob, "zb-h1 needs at least 7 microbatches "
	    "(device 0 runs 7 forwards before its first backward); this "
	    "problem has 6");
	pw_problem_free(prob);
}

/* Whether a classic family applies to P devices, V chunks, M microbatches:
 * one stage per device, except interleaving (v >= 2, m a multiple of p);
 * the Zero Bubble warm-ups of device 0, c(p-1) forwards, must exist. */
static bool
test_applies(const char *family, int p, int v, int m)
{
	if (strcmp(family, "1f1b-interleaved") == 0)
		return v >= 2 && m % p == 0;
	if (v != 1)
		return false;
	if (strcmp(family, "zb-h1") == 0)
		return m >= p - 1;
	if (strcmp(family, "zb-h2") == 0)
		return m >= 2 * (p - 1);
	return true;
}

/*
 * One problem of the grid: FAMILY builds exactly when it applies; what it
 * builds has every op once, no transfer, and simulates.  Returns NULL or
 * the first failure, a string the caller frees.
 */
static char *
test_grid_case(const struct pw_family *fam, int p, int v, int m)
{
	struct pw_problem *prob = test_problem(p, v, m, 1, 2, 1.5, 0.25);
	struct pw_schedule *sched = NULL;
	struct pw_timing *timing = NULL;
	struct pw_error err;
	char *fail = NULL;
	bool split = strncmp(fam->name, "zb-", 3) == 0;
	int rc;

	rc = fam->build(prob, &sched, &err);
	if (!test_applies(fam->name, p, v, m)) {
		if (rc != PW_ERR_NOT_APPLICABLE || sched != NULL ||
		    strncmp(err.msg, fam->name, strlen(fam->name)) != 0)
			fail = pw_xasprintf("not refused (rc %d)", rc);
		goto out;
	}
	if (rc != PW_OK) {
		fail = pw_xasprintf("refused: %s", err.msg);
		goto out;
	}
	if ((fail = test_compute_only(sched, m * v * (split ? 3 : 2))) != NULL)
		goto out;
	if (pw_simulate(prob, sched, &timing, &err) != PW_OK)
		fail = pw_xasprintf("does not simulate: %s", err.msg);
out:
	if (fail != NULL) {
		char *where = pw_xasprintf("p=%d v=%d m=%d: %s", p, v, m, fail);

		free(fail);
		fail = where;
	}
	pw_timing_free(timing);
	pw_schedule_free(sched);
	pw_problem_free(prob);
	return fail;
}

static void
test_grid(void)
{
	size_t i;
	int p, v, m, built, refused;

	for (i = 0; i < TEST_NCLASSIC; i++) {
		const struct pw_family *fam = pw_family_find(test_classic[i]);
		char *fail = NULL;

		if (!tap_ok(fam != NULL, "family %s is registered",
		    test_classic[i]))
			continue;

		built = refused = 0;
		for (p = 1; p <= 8; p++)
			for (v = 1; v <= 3; v++)
				for (m = 1; m <= 24; m++) {
					char *f = test_grid_case(fam, p, v, m);

					if (f != NULL && fail == NULL)
						fail = f;
					else
						free(f);
					if (test_applies(fam->name, p, v, m))
						built++;
					else
						refused++;
				}
		if (!tap_ok(fail == NULL, "%s: p 1..8, v 1..3, m 1..24: %d "
		    "built and simulated, %d refused", fam->name, built,
		    refused))
			tap_diag("%s", fail);
		free(fail);
	}
}

/* FAMILY on PROB: simulates; returns metrics the caller frees, or NULL
 * after a failed test line. */
static struct pw_metrics *
test_metrics(const char *family, const struct pw_problem *prob)
{
	struct pw_schedule *sched;
	struct pw_timing *timing = NULL;
	struct pw_metrics *met = NULL;
	struct pw_error err;

	if ((sched = test_build(family, prob)) == NULL)
		return NULL;
	if (tap_ok(pw_simulate(prob, sched, &timing, &err) == PW_OK,
	    "%s simulates", family))
		met = pw_metrics_compute(prob, sched, timing);
	else
		tap_diag("%s", err.msg);
	pw_timing_free(timing);
	pw_schedule_free(sched);
	return met;
}

/*
 * The unit case of the reference: p=4, m=8, f=b=w=1, no comm, act=hold=1
 * (B frees nothing, W all), one stage per device.
 */
static void
test_unit(void)
{
	static const struct {
		const char *family;
		double	span[4];
		double	bubble;
		double	peak;
	} cases[] = {
		{ "1f1b", { 33, 30, 27, 24 }, 9.0 / 33, 4 },
		{ "zb-h1", { 27, 26, 25, 24 }, 3.0 / 27, 4 },
		{ "zb-h2", { 24, 24, 24, 24 }, 0, 7 },
		/* GPipe keeps every microbatch's activation on device 0. */
		{ "gpipe", { 33, 30, 27, 24 }, 9.0 / 33, 8 },
	};
	struct pw_problem *prob = test_problem(4, 1, 8, 1, 1, 1, 0);
	struct pw_metrics *met;
	size_t i;
	int d;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if ((met = test_metrics(cases[i].family, prob)) == NULL)
			continue;
		for (d = 0; d < 4; d++)
			tap_near(met->device[d].span, cases[i].span[d], 1e-12,
			    "%s unit case: span of device %d",
			    cases[i].family, d);
		tap_near(met->max_span, cases[i].span[0], 1e-12,
		    "%s unit case: max span", cases[i].family);
		tap_near(met->bubble_rate, cases[i].bubble, 1e-12,
		    "%s unit case: bubble rate", cases[i].family);
		tap_near(met->device[0].peak, cases[i].peak, 1e-12,
		    "%s unit case: peak of device 0", cases[i].family);
		for (d = 1; d < 4; d++)
			tap_ok(met->device[d].peak <= met->device[0].peak,
			    "%s unit case: device %d peaks no higher than "
			    "device 0", cases[i].family, d);
		pw_metrics_free(met);
	}
	pw_problem_free(prob);
}

/*
 * Closed forms of the reference with unit times and no comm: 1F1B with
 * m <= p takes (m+p-1)(f+b+w); ZB with m <= p takes (m+p-1)(f+b) + w;
 * interleaved 1F1B has the bubble (p-1)(f+b+w) of one chunk and peaks at
 * p*v + p - 1 stage-activations.
 */
static void
test_closed_forms(void)
{
	struct pw_problem *prob;
	struct pw_metrics *met;
	int m;

	for (m = 1; m <= 4; m++) {
		prob = test_problem(4, 1, m, 1, 1, 1, 0);
		if ((met = test_metrics("1f1b", prob)) != NULL)
			tap_near(met->makespan, (m + 3) * 3, 1e-12,
			    "1f1b p=4 m=%d: makespan (m+p-1)(f+b+w)", m);
		pw_metrics_free(met);
		pw_problem_free(prob);
	}
	/* ZB-H1 needs m >= p-1. */
	for (m = 3; m <= 4; m++) {
		prob = test_problem(4, 1, m, 1, 1, 1, 0);
		if ((met = test_metrics("zb-h1", prob)) != NULL)
			tap_near(met->makespan, (m + 3) * 2 + 1, 1e-12,
			    "zb-h1 p=4 m=%d: makespan (m+p-1)(f+b)+w", m);
		pw_metrics_free(met);
		pw_problem_free(prob);
	}
	prob = test_problem(4, 2, 8, 1, 1, 1, 0);
	if ((met = test_metrics("1f1b-interleaved", prob)) != NULL) {
		tap_near(met->max_span, 8 * 2 * 3 + 3 * 3, 1e-12,
		    "1f1b-interleaved p=4 v=2 m=8: span m*v*3 + (p-1)*3");
		tap_near(met->device[0].peak, 4 * 2 + 3, 1e-12,
		    "1f1b-interleaved p=4 v=2 m=8: device 0 peaks at p*v+p-1");
	}
	pw_metrics_free(met);
	pw_problem_free(prob);
}

/* A family on a problem laid out for another one: the model is split
 * again when the problem knows it, else the family says why not. */
static void
test_resplit(void)
{
	static const struct {
		const char *family;
		int	nstages;
	} want[] = {
		{ "1f1b", 8 }, { "1f1b-interleaved", 32 }, { "zb-v", 16 },
		{ "po-h", 32 },
	};
	struct pw_problem *p = pw_problem_default(), *used, *bare;
	struct pw_schedule *s;
	struct pw_error err;
	size_t i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		if (!tap_int(pw_family_build(pw_family_find(want[i].family), p,
		    &used, &s, &err), PW_OK, "%s builds on the default problem",
		    want[i].family))
			continue;
		tap_int(used->nstages, want[i].nstages, "%s runs on %d stages",
		    want[i].family, want[i].nstages);
		/* Known before the build: 0 where it keeps the stages. */
		tap_int(pw_family_split_stages(pw_family_find(want[i].family),
		    p), want[i].nstages == p->nstages ? 0 : want[i].nstages,
		    "%s: the split is known before the build", want[i].family);
		tap_int(s->nstages, used->nstages, "%s: the schedule fits the "
		    "problem it ran on", want[i].family);
		pw_schedule_free(s);
		pw_problem_free(used);
	}
	bare = pw_problem_copy(p);
	pw_origin_free(bare->origin);
	bare->origin = NULL;
	tap_int(pw_family_build(pw_family_find("zb-v"), bare, &used, &s, &err),
	    PW_ERR_NOT_APPLICABLE, "zb-v refuses stages given directly");
	tap_str(err.msg, "zb-v needs V placement (device d holds stages d and "
	    "2p-1-d); this problem has 8 stages on 8 devices; splitting again: its stages were given directly, so "
	    "there is no model to split again", "and says why no split fits");
	tap_ok(used == NULL && s == NULL, "nothing is returned on refusal");
	tap_int(pw_family_split_stages(pw_family_find("zb-v"), bare), 0,
	    "no split is known for stages given directly");
	pw_problem_free(bare);
	pw_problem_free(p);
}

int
main(void)
{
	test_registry();
	test_orders();
	test_refusals();
	test_grid();
	test_unit();
	test_closed_forms();
	test_resplit();
	return tap_done();
}
