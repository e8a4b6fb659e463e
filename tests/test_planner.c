/*
 * test_planner.c - the partition search (pw_split_balance) against brute
 * force and hand-checked splits, and the planner on a small model with an
 * iteration limit.
 *
 * test_tiny_model on test_toy_hw (testlib.h): a layer costs 0.609375 s
 * (f + b + w), keeps 9984 activation bytes and adds 49152 static bytes;
 * the embedding adds 25600 static bytes to stage 0, the LM head 0.29296875
 * s, 6912 activation bytes and 25600 static bytes to the last stage.  All
 * exact in binary, so loads tie exactly where they should.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "solver.h"
#include "internal.h"
#include "planner_int.h"
#include "tap.h"
#include "testlib.h"

/* ------------------------------------------------------------------ */
/* The partition search                                                */

static struct pw_split
split_of(int devices, int chunks, enum pw_placement place, double limit)
{
	struct pw_split sp = { 0 };

	sp.devices = devices;
	sp.chunks = chunks;
	sp.placement = place;
	sp.microbatches = 8;
	sp.memory_limit = limit;
	return sp;
}

static struct pw_model
tiny(int layers)
{
	struct pw_model m = test_tiny_model;

	m.layers = layers;
	return m;
}

/* What the brute force makes of one split. */
struct brute {
	bool	fits;
	double	bottleneck;
	double	sumsq;
	double	need;		/* the largest device's bytes */
};

/* The documented in-flight count of device D. */
static int
inflight_of(const struct pw_split *sp, int d)
{
	long p = sp->devices, v = sp->chunks, n;

	n = v == 1 ? p - d : 2 * (p - d - 1) + (v - 1) * p + 1;
	return (int)(n < v * sp->microbatches ? n : v * sp->microbatches);
}

/*
 * Judges device counts COUNTS of M under SP from the problem the cost
 * model builds (not from pw_cost_stage): one chunk per device, then
 * pw_problem_resplit shares each device's layers among its chunks.
 * False when the cost model refuses the counts.
 */
static bool
brute_judge(const struct pw_model *m, const struct pw_split *sp,
    const int *counts, struct brute *out)
{
	struct pw_split one = *sp;
	struct pw_problem *p, *q = NULL;
	struct pw_error err;
	double load, act, need, room;
	int d, s;

	one.chunks = 1;
	one.placement = PW_PLACE_LOOP;
	one.layers_per_stage = counts;
	one.memory_limit = DBL_MAX;
	if (pw_cost_problem(m, &test_toy_hw, &one, &p, &err) != PW_OK)
		return false;
	if (sp->chunks > 1) {
		if (pw_problem_resplit(p, sp->placement, sp->chunks, &q,
		    &err) != PW_OK) {
			pw_problem_free(p);
			return false;
		}
		pw_problem_free(p);
		p = q;
	}
	room = sp->memory_limit >= DBL_MAX ? INFINITY : sp->memory_limit -
	    pw_split_reserve(sp, sp->memory_limit);
	memset(out, 0, sizeof *out);
	for (d = 0; d < sp->devices; d++) {
		load = act = 0;
		for (s = 0; s < p->nstages; s++)
			if (p->stages[s].device == d) {
				load += p->stages[s].f + p->stages[s].b +
				    p->stages[s].w;
				act = fmax(act, p->stages[s].act);
			}
		need = p->memory[d].static_bytes + inflight_of(sp, d) * act;
		out->need = fmax(out->need, need);
		out->bottleneck = fmax(out->bottleneck, load);
		out->sumsq += load * load;
	}
	out->fits = out->need <= room;
	pw_problem_free(p);
	return true;
}

/* The device counts of LAYERS (pipeline order) under SP. */
static void
device_counts(const struct pw_split *sp, const int *layers, int *counts)
{
	int s, d, n = sp->devices * sp->chunks;

	for (d = 0; d < sp->devices; d++)
		counts[d] = 0;
	for (s = 0; s < n; s++) {
		d = sp->placement == PW_PLACE_V && s >= sp->devices ? n - 1 - s :
		    s % sp->devices;
		counts[d] += layers[s];
	}
}

/* The brute force's search: every composition of the layers into device
 * counts, each at least the chunks. */
struct brute_search {
	const struct pw_model *m;
	const struct pw_split *sp;
	int	counts[8];
	bool	found;
	struct brute best;	/* the least bottleneck, then sum of squares
				 * (relative tolerance 1e-12), of those that
				 * fit */
	double	least;		/* the least need of any composition */
};

static void
brute_rec(struct brute_search *bs, int d, int left)
{
	const int p = bs->sp->devices, v = bs->sp->chunks;
	struct brute b;
	int n;

	if (d == p - 1) {
		bs->counts[d] = left;
		if (!brute_judge(bs->m, bs->sp, bs->counts, &b))
			return;
		bs->least = fmin(bs->least, b.need);
		if (b.fits && (!bs->found || b.bottleneck <
		    bs->best.bottleneck * (1 - 1e-12) || (b.bottleneck <=
		    bs->best.bottleneck * (1 + 1e-12) &&
		    b.sumsq < bs->best.sumsq))) {
			bs->best = b;
			bs->found = true;
		}
		return;
	}
	for (n = v; n <= left - (p - 1 - d) * v; n++) {
		bs->counts[d] = n;
		brute_rec(bs, d + 1, left - n);
	}
}

static void
brute_best(const struct pw_model *m, const struct pw_split *sp,
    struct brute_search *bs)
{
	memset(bs, 0, sizeof *bs);
	bs->m = m;
	bs->sp = sp;
	bs->least = INFINITY;
	brute_rec(bs, 0, m->layers);
}

/* pw_split_balance against brute force on every case with L <= 12 and
 * p <= 4, one to three chunks, loop and V: no limit, a limit of exactly
 * the least any split needs, and a byte below it (no split). */
static void
test_balance_brute(void)
{
	static const struct { int chunks; enum pw_placement place; } lay[] = {
		{ 1, PW_PLACE_LOOP }, { 2, PW_PLACE_LOOP },
		{ 2, PW_PLACE_V }, { 3, PW_PLACE_LOOP },
	};
	struct pw_model m;
	struct pw_split sp;
	struct brute_search bs;
	struct brute got;
	struct pw_error err;
	int layers[48], counts[8], p, l, i, k, rc, cases = 0, bad = 0;
	double bottleneck, least;

	for (i = 0; i < 4; i++)
		for (p = lay[i].place == PW_PLACE_V ? 2 : 1; p <= 4; p++)
			for (l = p * lay[i].chunks; l <= 12; l++) {
				m = tiny(l);
				sp = split_of(p, lay[i].chunks, lay[i].place,
				    DBL_MAX);
				brute_best(&m, &sp, &bs);
				least = bs.least;
				for (k = 0; k < 3; k++) {
					sp.memory_limit = k == 0 ? DBL_MAX :
					    k == 1 ? least : least - 1;
					brute_best(&m, &sp, &bs);
					cases++;
					rc = pw_split_balance(&m, &test_toy_hw,
					    &sp, NULL, layers, &bottleneck,
					    &err);
					if (!bs.found) {
						if (rc != PW_ERR_NOT_APPLICABLE) {
							bad++;
							tap_diag("p=%d v=%d l=%d "
							    "limit %.0f: rc %d, "
							    "want no split", p,
							    sp.chunks, l,
							    sp.memory_limit, rc);
						}
						continue;
					}
					device_counts(&sp, layers, counts);
					if (rc != PW_OK || !brute_judge(&m, &sp,
					    counts, &got) || !got.fits ||
					    fabs(got.bottleneck -
					    bs.best.bottleneck) > 1e-9 *
					    bs.best.bottleneck ||
					    fabs(bottleneck -
					    bs.best.bottleneck) > 1e-9 *
					    bs.best.bottleneck || got.sumsq >
					    bs.best.sumsq * (1 + 1e-9)) {
						bad++;
						tap_diag("p=%d v=%d%s l=%d limit "
						    "%.0f: rc %d %s", p,
						    sp.chunks, sp.placement ==
						    PW_PLACE_V ? " V" : "", l,
						    sp.memory_limit, rc,
						    rc != PW_OK ? err.msg : "");
					}
				}
			}
	tap_ok(cases > 200, "brute force: %d cases", cases);
	tap_int(bad, 0, "pw_split_balance has brute force's bottleneck and "
	    "least sum of squares on every case");
}

/* One hand-checked case: M's layers under SP give WANT. */
static void
balance_case(int layers, const struct pw_split *sp, const int *inflight,
    const int *want, double bottleneck, const char *what)
{
	struct pw_model m = tiny(layers);
	struct pw_error err;
	int got[16], n = sp->devices * sp->chunks, s;
	double b = -1;
	bool same;

	if (!tap_int(pw_split_balance(&m, &test_toy_hw, sp, inflight, got,
	    &b, &err), PW_OK, "%s: balances", what)) {
		tap_diag("%s", err.msg);
		return;
	}
	for (same = true, s = 0; s < n; s++)
		same &= got[s] == want[s];
	if (!tap_ok(same, "%s: the split", what))
		for (s = 0; s < n; s++)
			tap_diag("stage %d: %d layers, want %d", s, got[s],
			    want[s]);
	tap_near(b, bottleneck, 0, "%s: the bottleneck", what);
}

static void
balance_refused(int layers, const struct pw_split *sp, int rc,
    const char *want, const char *what)
{
	struct pw_model m = tiny(layers);
	struct pw_error err;
	int got[16];
	int inflight[4] = { 1, -1, 1, 1 };

	tap_int(pw_split_balance(&m, &test_toy_hw, sp, rc == PW_ERR_INPUT &&
	    want[0] == 's' && strstr(want, "inflight") != NULL ? inflight :
	    NULL, got, NULL, &err), rc, "%s: refused", what);
	tap_str(err.msg, want, "%s: the reason", what);
}

/*
 * By hand, 9 layers on 4 devices (in flight 4, 3, 2, 1):
 *  - no limit: any split with a 3-layer stage has the bottleneck 1.828125
 *    (3 layers); 3,2,2,2 and its moves of the 3 tie on the sum of squares
 *    (the last stage at 2 layers plus the head, 1.51171875), 3,3,2,1 is
 *    worse; among ties the later devices take the most: 2,2,3,2;
 *  - 210000 bytes: device 0 fits 2 layers (123904 + 4 x 19968 = 203776,
 *    3 would need 292864), device 1 fits 2 (3 need 237312), devices 2 and
 *    3 fit 3 (207360, 209920): the last stage at 2 leaves 2,2,3,2;
 *  - 205000 bytes: every device fits 2, 8 layers in all: no split;
 *  - 210000 bytes less a 5000-byte reserve: the same;
 *  - 100000 bytes: device 0 needs 74752 + 4 x 9984 = 114688 for one;
 *  - 205000 bytes with one activation in flight each: 2,2,3,2 again.
 * With chunks (2 devices): loop puts stages 0, 2 on device 0 and 1, 3 on
 * device 1, whose load is its layers plus the head: 5 + 4 layers gives
 * 3.046875 (4 + 5: 3.33984375); device 0's extra layer goes to stage 2,
 * the plain chunk: 2,2,3,2.  V puts stages 0, 3 on device 0 (the head's):
 * 4 + 5 layers, device 1's extra on stage 1: 2,3,2,2.
 */
static void
test_balance_hand(void)
{
	static const int a[] = { 2, 2, 3, 2 };
	static const int loop[] = { 2, 2, 3, 2 }, v[] = { 2, 3, 2, 2 };
	static const int ones[] = { 1, 1, 1, 1 };
	struct pw_split sp = split_of(4, 1, PW_PLACE_LOOP, DBL_MAX);

	balance_case(9, &sp, NULL, a, 1.828125, "9 layers, no limit");
	sp.memory_limit = 210000;
	balance_case(9, &sp, NULL, a, 1.828125, "9 layers, 210000 bytes");
	sp.memory_limit = 205000;
	balance_refused(9, &sp, PW_ERR_NOT_APPLICABLE, "split: the devices' "
	    "limits hold at most 8 of the model's 9 layers", "205000 bytes");
	balance_case(9, &sp, ones, a, 1.828125,
	    "205000 bytes, one activation in flight");
	sp.memory_limit = 210000;
	sp.reserve_bytes = 5000;
	balance_refused(9, &sp, PW_ERR_NOT_APPLICABLE, "split: the devices' "
	    "limits hold at most 8 of the model's 9 layers",
	    "210000 bytes less 5000");
	sp.reserve_bytes = 0;
	sp.memory_limit = 100000;
	balance_refused(9, &sp, PW_ERR_NOT_APPLICABLE, "split: device 0 cannot "
	    "hold even a stage of one layer per chunk: it needs 112 KiB, "
	    "its limit less the reserve is 97.66 KiB", "100000 bytes");
	sp.memory_limit = DBL_MAX;
	balance_refused(9, &sp, PW_ERR_INPUT, "split: inflight[1]: must not "
	    "be negative (got -1)", "a negative inflight");
	sp.chunks = 3;
	sp.placement = PW_PLACE_V;
	balance_refused(9, &sp, PW_ERR_INPUT, "split: chunks: V placement "
	    "needs 2 chunks per device (got 3)", "V with 3 chunks");

	sp = split_of(2, 2, PW_PLACE_LOOP, DBL_MAX);
	balance_case(9, &sp, NULL, loop, 3.046875, "loop x2");
	sp.placement = PW_PLACE_V;
	balance_case(9, &sp, NULL, v, 3.046875, "V");
}

/* ------------------------------------------------------------------ */
/* The planner                                                         */

/* The small model of the planner's tests: 10 layers on 4 devices, 8
 * microbatches, a limit of LIMIT bytes. */
static struct pw_problem *
small_problem_at(double limit)
{
	struct pw_model m = tiny(10);
	struct pw_split sp = split_of(4, 1, PW_PLACE_LOOP, limit);
	struct pw_hardware hw = test_toy_hw;
	struct pw_problem *p;
	struct pw_error err;

	/* A link fast enough to move an activation (9984 bytes) within a
	 * few layers' time, so that designs with it have schedules. */
	hw.pcie_d2h = hw.pcie_h2d = 65536;
	if (!tap_int(pw_cost_problem(&m, &hw, &sp, &p, &err), PW_OK,
	    "the small model builds"))
		tap_diag("%s", err.msg);
	return p;
}

/* The small model at 300000 bytes, a limit that binds. */
static struct pw_problem *
small_problem(void)
{
	return small_problem_at(300000);
}

static struct pw_planner_opts
small_opts(void)
{
	struct pw_planner_opts o;

	pw_planner_opts_init(&o);
	o.iteration_limit = 300;
	return o;
}

/* The best feasible makespan of every family on P (compare's rows:
 * split again where a family needs it). */
static double
best_family(const struct pw_problem *p)
{
	struct pw_compare_row *rows = pw_compare_rows(p, NULL, NULL);
	double best = INFINITY;
	size_t i;

	for (i = 0; i < pw_nfamilies; i++)
		if (rows[i].rc == PW_OK && rows[i].metrics->feasible)
			best = fmin(best, rows[i].metrics->makespan);
	pw_compare_rows_free(rows);
	return best;
}

/* Every candidate: its schedule simulates on its problem within the
 * limits and passes the checker; its numbers are its own; its problem is
 * its design. */
static void
check_candidates(const struct pw_planner_result *r, const char *what)
{
	const struct pw_planner_candidate *c;
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	char *why;
	size_t i;
	int bad = 0, s, sum;

	for (i = 0; i < r->ncand; i++) {
		c = &r->cand[i];
		if (pw_simulate(c->problem, c->schedule, &t, &err) != PW_OK) {
			tap_diag("%s: candidate %zu: %s", what, i, err.msg);
			bad++;
			continue;
		}
		m = pw_metrics_compute(c->problem, c->schedule, t);
		if ((why = test_checker(c->problem, c->schedule, t)) != NULL) {
			tap_diag("%s: candidate %zu: %s", what, i, why);
			free(why);
			bad++;
		}
		if (!m->feasible || m->makespan != c->makespan ||
		    (i > 0 && c->objective < r->cand[i - 1].objective) ||
		    c->bound > c->objective || c->gap < 0 ||
		    c->peak > c->limit) {
			tap_diag("%s: candidate %zu: feasible %d, makespan %g "
			    "(%g), bound %g", what, i, m->feasible, m->makespan,
			    c->makespan, c->bound);
			bad++;
		}
		if (c->design.layers_per_stage != NULL) {
			for (sum = 0, s = 0; s < c->problem->nstages; s++) {
				sum += c->design.layers_per_stage[s];
				if (c->problem->origin->split.layers_per_stage[s]
				    != c->design.layers_per_stage[s])
					bad++;
			}
			if (sum != c->problem->origin->model.layers ||
			    c->problem->origin->split.chunks != c->design.chunks ||
			    c->problem->origin->model.recompute !=
			    c->design.recompute ||
			    c->problem->link.present != c->design.offload)
				bad++;
		}
		pw_metrics_free(m);
		pw_timing_free(t);
	}
	tap_int(bad, 0, "%s: every candidate feasible, checked, sorted and "
	    "its design's", what);
}

/* The phases the reports came in, each named once in order (ARG: a
 * buffer of 64). */
static void
progress_phases(const struct pw_planner_progress *pr, void *arg)
{
	char *seen = arg, *last = strrchr(seen, ' ');

	if (strcmp(last != NULL ? last + 1 : seen, pr->phase) != 0)
		snprintf(seen + strlen(seen), 64 - strlen(seen), "%s%s",
		    seen[0] != '\0' ? " " : "", pr->phase);
}

/* Whether two candidates of one objective (the solver's tolerance) are
 * kept where the later one's peak is no lower: a duplicate the table
 * must fold. */
static int
unfolded(const struct pw_planner_result *r)
{
	size_t i, j;
	int n = 0;

	for (i = 0; i < r->ncand; i++)
		for (j = i + 1; j < r->ncand; j++)
			if (fabs(r->cand[i].objective - r->cand[j].objective) <=
			    1e-9 * fmax(1, r->cand[j].objective) &&
			    r->cand[j].peak >= r->cand[i].peak)
				n++;
	return n;
}

static bool
same_result(const struct pw_planner_result *a,
    const struct pw_planner_result *b)
{
	size_t i;
	int s;

	if (a->ncand != b->ncand || a->tried != b->tried)
		return false;
	for (i = 0; i < a->ncand; i++) {
		if (a->cand[i].objective != b->cand[i].objective ||
		    strcmp(a->cand[i].schedule_name, b->cand[i].schedule_name)
		    != 0 || !test_same_schedule(a->cand[i].schedule,
		    b->cand[i].schedule) || a->cand[i].design.chunks !=
		    b->cand[i].design.chunks)
			return false;
		for (s = 0; s < a->cand[i].problem->nstages; s++)
			if (a->cand[i].design.layers_per_stage[s] !=
			    b->cand[i].design.layers_per_stage[s])
				return false;
	}
	return true;
}

/* The one progress line every front end prints, exact. */
static void
test_progress_text(void)
{
	struct pw_planner_progress pr = { 1, 1, 0, INFINITY, NULL, 0.25,
	    "families" };
	char buf[160];

	tap_str(pw_planner_progress_text(&pr, buf, sizeof buf),
	    "1 candidate (1 build), none fits yet, families, 250 ms",
	    "progress: none yet");
	pr.tried = 12;
	pr.builds = 140;
	pr.skipped = 3;
	pr.best = 4.6021;
	pr.best_name = "solve";
	pr.phase = "optimizer";
	pr.elapsed = 3.21;
	tap_str(pw_planner_progress_text(&pr, buf, sizeof buf),
	    "12 candidates (140 builds, 3 skipped for time), best 4.602 s "
	    "(solve), optimizer, 3.21 s", "progress: the builds and what was "
	    "skipped");
}

static void
test_planner_model(void)
{
	struct pw_problem *p = small_problem(), *q;
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r, again, top;
	struct pw_split sp;
	struct pw_error err;
	int layers[4];
	char buf[64], phases[64] = "";

	if (p == NULL)
		return;
	free(p->name);
	p->name = pw_xstrdup("my-run");
	o.progress = progress_phases;
	o.progress_arg = phases;
	if (!tap_int(pw_planner(p, &o, &r, &err), PW_OK, "plans the small "
	    "model")) {
		tap_diag("%s", err.msg);
		pw_problem_free(p);
		return;
	}
	tap_int((long long)r.ncand, 10, "ten candidates");
	tap_str(r.cand[r.ncand - 1].problem->name, "my-run", "the candidates "
	    "keep the problem's name");
	tap_ok(!r.split_fixed, "the split is the planner's");
	/* Starts that coincide (the even split and a balanced one) are
	 * tried once. */
	tap_int((long long)r.tried, 38, "every design's splits tried");
	tap_int((long long)r.builds, 232, "every family of each split built: 232");
	tap_int((long long)r.skipped, 0, "no build skipped (no clock)");
	tap_int(r.ended, PW_END_SEARCHED, "ended searched: by the iteration "
	    "limits, not the clock");
	tap_str(phases, "families splits optimizer done", "progress reported "
	    "in every phase, and once done");
	tap_str(r.cand[0].bound_name, "device", "the best's bound: device");
	check_candidates(&r, "small model");
	/* The anchors are exact: families on fixed splits.  The planner's
	 * best is the optimizer's (today selective recomputation on
	 * 2,3,3,2, one chunk), which starts from the families' schedules
	 * and keeps only improvements. */
	tap_near(best_family(p), 20.078125, 0, "every family on the even "
	    "split: zb-auto's 20.078125");
	sp = p->origin->split;
	tap_int(pw_split_balance(&p->origin->model, &p->origin->hardware, &sp,
	    NULL, layers, NULL, &err), PW_OK, "the balanced split");
	sp.layers_per_stage = layers;
	if (tap_int(pw_cost_problem(&p->origin->model, &p->origin->hardware,
	    &sp, &q, &err), PW_OK, "the balanced split builds")) {
		tap_str(pw_design_split_name(&(struct pw_design){ .chunks = 1,
		    .layers_per_stage = layers }, 4, buf, sizeof buf),
		    "2,3,3,2", "the balanced split is 2,3,3,2");
		tap_near(best_family(q), 20.078125, 0, "every family on the "
		    "balanced split: 20.078125");
		pw_problem_free(q);
	}
	tap_near(r.cand[0].makespan, 17.359375, 0, "the best: 17.359375");
	tap_ok(r.cand[0].optimized, "the best was optimized");

	o.progress = NULL;
	if (tap_int(pw_planner(p, &o, &again, &err), PW_OK, "plans again")) {
		tap_ok(same_result(&r, &again) && again.ended ==
		    PW_END_SEARCHED, "the same result twice, ended searched");
		pw_planner_result_free(&again);
	}
	o.top = 2;
	if (tap_int(pw_planner(p, &o, &top, &err), PW_OK, "plans top 2")) {
		tap_int((long long)top.ncand, 2, "top 2: two candidates");
		tap_ok(top.cand[0].objective == r.cand[0].objective &&
		    top.cand[1].objective == r.cand[1].objective, "top 2: the "
		    "first two of ten");
		pw_planner_result_free(&top);
	}
	pw_planner_result_free(&r);
	pw_problem_free(p);
}

/* Four stages of ST on two devices as DEVICE says: the given layout is
 * named LAYOUT, its placement PLACEMENT. */
static void
test_planner_fixed_placement(const struct pw_stage *st, const int *device,
    const char *layout, const char *placement)
{
	struct pw_problem *p = test_problem_uniform(2, 2, 4, PW_PLACE_LOOP,
	    st);
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_error err;
	char buf[16];
	int s;

	for (s = 0; s < 4; s++)
		p->stages[s].device = device[s];
	if (tap_int(pw_planner(p, &o, &r, &err), PW_OK, "plans stages on "
	    "devices %d,%d,%d,%d", device[0], device[1], device[2],
	    device[3])) {
		tap_str(pw_design_layout_name(&r.cand[0].design, buf,
		    sizeof buf), layout, "... its layout");
		tap_str(pw_design_placement_name(&r.cand[0].design),
		    placement, "... its placement");
		pw_planner_result_free(&r);
	}
	pw_problem_free(p);
}

static void
test_planner_fixed(void)
{
	struct pw_stage st = { 0, 1, 1, 1, 1, 0.5, 1, 0 };
	struct pw_problem *p = test_problem_uniform(4, 1, 8, PW_PLACE_LOOP,
	    &st);
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_error err;
	char buf[16];
	int d;

	for (d = 0; d < 4; d++)
		p->memory[d].limit = 3;
	if (tap_int(pw_planner(p, &o, &r, &err), PW_OK, "plans given stages")) {
		tap_ok(r.split_fixed, "given stages: split_fixed");
		tap_int((long long)r.ncand, 1, "given stages: one design "
		    "(no link)");
		tap_ok(r.cand[0].design.layers_per_stage == NULL,
		    "given stages: no layers");
		tap_str(pw_design_split_name(&r.cand[0].design, 4, buf,
		    sizeof buf), "given", "given stages: the split's name");
		tap_str(pw_design_layout_name(&r.cand[0].design, buf,
		    sizeof buf), "1 chunk", "... its layout");
		check_candidates(&r, "given stages");
		pw_planner_result_free(&r);
	}
	test_planner_fixed_placement(&st, (const int[]){ 0, 1, 0, 1 },
	    "loop x2", "loop");
	test_planner_fixed_placement(&st, (const int[]){ 0, 1, 1, 0 }, "V",
	    "v");
	test_planner_fixed_placement(&st, (const int[]){ 0, 0, 1, 1 },
	    "custom", "custom");
	test_planner_fixed_placement(&st, (const int[]){ 1, 0, 1, 0 },
	    "custom", "custom");
	o.offload = PW_OFFMODE_ON;
	tap_int(pw_planner(p, &o, &r, &err), PW_ERR_INPUT, "offload on "
	    "without a link: refused");
	tap_str(err.msg, "plan: offload on: the problem has no offload link "
	    "(its file names no link, or its hardware no PCIe bandwidth)",
	    "offload on: the reason");
	pw_problem_free(p);
}

static void
test_planner_refusals(void)
{
	struct pw_problem *p = small_problem();
	struct pw_planner_opts o;
	struct pw_planner_result r;
	struct pw_error err;
	atomic_int cancel;

	if (p == NULL)
		return;
	o = small_opts();
	o.iteration_limit = -1;
	tap_int(pw_planner(p, &o, &r, &err), PW_ERR_INPUT, "a negative "
	    "iteration limit: refused");
	tap_str(err.msg, "plan: iteration_limit -1 is negative (0: none)",
	    "the iteration limit: the reason");
	o = small_opts();
	o.objective = (enum pw_objective)7;
	tap_int(pw_planner(p, &o, &r, &err), PW_ERR_INPUT, "an unknown "
	    "objective: refused");
	tap_str(err.msg, "plan: objective 7 is not makespan or span",
	    "the objective: the reason");
	o = small_opts();
	o.time_limit = NAN;
	tap_int(pw_planner(p, &o, &r, &err), PW_ERR_INPUT, "a time limit not "
	    "a number: refused");
	o = small_opts();
	atomic_init(&cancel, 1);
	o.cancel = &cancel;
	tap_int(pw_planner(p, &o, &r, &err), PW_ERR_INPUT, "cancelled before "
	    "the start: nothing to return");
	tap_str(err.msg, "plan: cancelled before any design was timed",
	    "cancelled: the reason");
	tap_ok(r.ncand == 0 && r.cand == NULL, "cancelled: no candidates");
	pw_problem_free(p);
}

/* pw_planner_model on the small model at 160000 bytes, where its even
 * split without recomputation does not hold one microbatch (the problem
 * does not build): the planner still finds the designs that fit. */
static void
test_planner_unfit(void)
{
	static const int ones[4] = { 1, 1, 1, 1 };
	double need;
	struct pw_model m = tiny(10);
	struct pw_hardware hw = test_toy_hw;
	struct pw_split sp = split_of(4, 1, PW_PLACE_LOOP, 160000);
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_problem *p;
	struct pw_error err;

	hw.pcie_d2h = hw.pcie_h2d = 65536;
	tap_int(pw_cost_problem(&m, &hw, &sp, &p, &err), PW_ERR_INPUT,
	    "160000 bytes: the even split does not build");
	if (!tap_int(pw_planner_model(&m, &hw, &sp, &o, &r, &err), PW_OK,
	    "160000 bytes: pw_planner_model plans")) {
		tap_diag("%s", err.msg);
		return;
	}
	/* Six designs fit; two of them reach 25.898438, and the table
	 * keeps the leaner. */
	tap_int((long long)r.ncand, 5, "160000 bytes: five candidates");
	tap_near(r.cand[0].objective, 22.859375, 0, "160000 bytes: the best "
	    "22.859375");
	tap_int(r.cand[0].design.recompute, PW_RECOMPUTE_FULL, "160000 bytes: "
	    "with full recomputation");
	tap_int(r.ended, PW_END_SEARCHED, "160000 bytes: ended searched");
	check_candidates(&r, "160000 bytes");
	pw_planner_result_free(&r);
	sp.memory_limit = 100000;
	tap_int(pw_planner_model(&m, &hw, &sp, &o, &r, &err), PW_ERR_INPUT,
	    "100000 bytes: no design fits");
	/* The reason is the design holding the most layers (without
	 * recomputation 4 of them), whose count bounds every design's. */
	tap_str(err.msg, "plan: no design fits memory: 1 chunk, full "
	    "recomputation: split: the devices' limits hold at most 6 of the "
	    "model's 10 layers", "100000 bytes: the reason");
	tap_int(pw_split_most_layers(&m, &hw, &sp, ones, NULL), 4,
	    "100000 bytes: 4 layers without recomputation");
	tap_int(pw_split_most_layers(&m, &hw, &sp, NULL, &need), 0,
	    "100000 bytes: none with 1F1B's activations in flight");
	tap_ok(need > 100000, "... its short device needing more (%g)", need);
	m = tiny(7);
	tap_int(pw_planner_model(&m, &hw, &sp, &o, &r, &err), PW_ERR_INPUT,
	    "100000 bytes, 7 layers: no design fits");
	m = tiny(6);
	if (tap_int(pw_planner_model(&m, &hw, &sp, &o, &r, &err), PW_OK,
	    "100000 bytes, 6 layers: plans, as the reason said"))
		pw_planner_result_free(&r);
}

/* The search starts at the designs given: 2 chunks in a V, of 18 (3
 * recomputations x 1 chunk loop, 2 chunks loop or V x 2 links), which
 * come after the 1-chunk designs in the search's order, are moved first,
 * without the link before with it though the given problem has one (its
 * families rarely move anything, which a design with the link needs
 * under auto), the others keeping their order; designs already first
 * stay; with offload on, the given layout with its link alone. */
static void
test_planner_given_first(void)
{
	struct pw_planner_run r;
	struct pw_origin origin;
	struct pw_error err;

	memset(&r, 0, sizeof r);
	origin.model = tiny(10);
	origin.hardware = test_toy_hw;
	origin.split = split_of(4, 2, PW_PLACE_V, DBL_MAX);
	origin.split.offload = true;
	r.origin = &origin;
	pw_planner_opts_init(&r.o);
	if (!tap_int(pw_planner_designs(&r, &err), PW_OK, "given first: the "
	    "designs"))
		return;
	tap_ok(r.nslot == 18 && r.slot[0].design.chunks == 2 &&
	    r.slot[0].design.placement == PW_PLACE_V &&
	    !r.slot[0].design.offload && r.slot[0].design.recompute ==
	    PW_RECOMPUTE_NONE && r.slot[1].design.chunks == 2 &&
	    r.slot[1].design.placement == PW_PLACE_V &&
	    r.slot[1].design.offload, "given first: 2 chunks, V, without "
	    "the link then with it, first of %zu", r.nslot);
	tap_ok(r.slot[2].design.chunks == 1 && !r.slot[2].design.offload &&
	    r.slot[3].design.chunks == 1 && r.slot[3].design.offload,
	    "given first: then the others in order, 1 chunk first");
	pw_planner_slots_free(&r);
	origin.split = split_of(4, 1, PW_PLACE_LOOP, DBL_MAX);
	origin.split.offload = true;
	if (tap_int(pw_planner_designs(&r, &err), PW_OK, "given first: the "
	    "designs of 1 chunk")) {
		tap_ok(r.slot[0].design.chunks == 1 && !r.slot[0].design.offload
		    && r.slot[1].design.offload, "given first: 1 chunk "
		    "without the link stays first");
		pw_planner_slots_free(&r);
	}
	origin.split = split_of(4, 2, PW_PLACE_V, DBL_MAX);
	origin.split.offload = true;
	r.o.offload = PW_OFFMODE_ON;
	if (tap_int(pw_planner_designs(&r, &err), PW_OK, "given first: the "
	    "designs with offload on")) {
		tap_ok(r.nslot == 9 && r.slot[0].design.chunks == 2 &&
		    r.slot[0].design.placement == PW_PLACE_V &&
		    r.slot[0].design.offload && r.slot[1].design.chunks == 1,
		    "given first: with offload on, 2 chunks, V, the link, "
		    "first of %zu", r.nslot);
		pw_planner_slots_free(&r);
	}
}

/* The chunk counts: the powers of two to 8 and one layer per chunk to
 * 32, each with a layer a stage, and the count given in its place (to
 * 32); the given split kept by the given layout's designs alone. */
static void
test_planner_chunks_given(void)
{
	static const int given[4] = { 1, 4, 4, 1 };
	struct pw_planner_run r;
	struct pw_origin origin;
	struct pw_error err;
	size_t i;
	int bad = 0;

	memset(&r, 0, sizeof r);
	origin.model = tiny(12);
	origin.hardware = test_toy_hw;
	origin.split = split_of(4, 3, PW_PLACE_LOOP, DBL_MAX);
	r.origin = &origin;
	pw_planner_opts_init(&r.o);
	r.o.offload = PW_OFFMODE_OFF;
	if (tap_int(pw_planner_designs(&r, &err), PW_OK, "chunks given: the "
	    "designs of 3 chunks")) {
		tap_ok(r.nslot == 12 && r.slot[0].design.chunks == 3 &&
		    r.slot[1].design.chunks == 1 && r.slot[2].design.chunks ==
		    2 && r.slot[3].design.placement == PW_PLACE_V &&
		    r.slot[7].design.chunks == 3, "chunks given: 3 chunks a "
		    "device tried (first), beside 1, 2 and V: %zu designs",
		    r.nslot);
		pw_planner_slots_free(&r);
	}
	tap_int(pw_planner_most_chunks(&origin), 3, "most chunks: 3 given "
	    "of 12 layers on 4");
	origin.split.chunks = 4;
	tap_int(pw_planner_most_chunks(&origin), 2, "most chunks: 4 given "
	    "of 12 layers on 4 has a stage without a layer: 2");
	origin.model = tiny(128);
	origin.split.chunks = 1;
	tap_int(pw_planner_most_chunks(&origin), 32, "most chunks: 128 "
	    "layers on 4, one a chunk: 32");
	origin.model = tiny(400);
	origin.split.chunks = 16;
	tap_int(pw_planner_most_chunks(&origin), 16, "most chunks: 400 "
	    "layers on 4, 16 given: 16");
	origin.split.chunks = 64;
	tap_int(pw_planner_most_chunks(&origin), 8, "most chunks: 64 given "
	    "is beyond 32: 8");

	origin.model = tiny(10);
	origin.split = split_of(4, 1, PW_PLACE_LOOP, DBL_MAX);
	origin.split.layers_per_stage = given;
	r.o.offload = PW_OFFMODE_AUTO;
	if (tap_int(pw_planner_designs(&r, &err), PW_OK, "split given: the "
	    "designs")) {
		for (i = 0; i < r.nslot; i++)
			bad += (r.slot[i].split.layers_per_stage == given) !=
			    (r.slot[i].design.chunks == 1 &&
			    r.slot[i].design.recompute == PW_RECOMPUTE_NONE);
		tap_ok(bad == 0 && r.slot[0].split.layers_per_stage == given &&
		    r.slot[1].split.layers_per_stage == given, "split given: "
		    "kept by the given layout's designs (with the link and "
		    "without), by no other");
		pw_planner_slots_free(&r);
	}
}

/* The small model split as given (1,4,4,1, no start of the planner's
 * own): one split more timed than from the even split in each design of
 * the given layout (with the link and without), the rest as there. */
static void
test_planner_split_given(void)
{
	static const int given[4] = { 1, 4, 4, 1 };
	struct pw_problem *p = small_problem(), *q;
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_split sp;
	struct pw_error err;

	if (p == NULL)
		return;
	sp = p->origin->split;
	sp.layers_per_stage = given;
	if (!tap_int(pw_cost_problem(&p->origin->model, &p->origin->hardware,
	    &sp, &q, &err), PW_OK, "split given: builds")) {
		pw_problem_free(p);
		return;
	}
	if (tap_int(pw_planner(q, &o, &r, &err), PW_OK, "split given: "
	    "plans")) {
		tap_int((long long)r.tried, 40, "split given: timed too, in "
		    "both designs of its layout (38 from the even split)");
		tap_near(r.cand[0].makespan, 17.359375, 0, "split given: the "
		    "best as from the even split");
		pw_planner_result_free(&r);
	}
	pw_problem_free(q);
	pw_problem_free(p);
}

/* Why no design has a schedule, for a stop by the cancel and by the
 * clock, before any design was timed, before one that fits, and before
 * one gave a schedule. */
static void
test_planner_none(void)
{
	struct pw_planner_run r;
	struct pw_error err;
	atomic_int cancel;

	memset(&r, 0, sizeof r);
	pw_planner_opts_init(&r.o);
	atomic_init(&cancel, 1);
	r.o.cancel = &cancel;
	r.tight_device = -1;
	r.why_most = -1;
	pw_planner_none(&r, &err);
	tap_str(err.msg, "plan: cancelled before any design was timed",
	    "none: cancelled before any design was timed");
	r.tried = 2;
	r.tight_device = 1;
	r.tight_peak = 313651;
	r.tight_limit = 300000;
	pw_planner_none(&r, &err);
	tap_str(err.msg, "plan: cancelled before any design that fits memory "
	    "was timed; the nearest so far, on device 1, needs 306.3 KiB of "
	    "its 293 KiB", "none: cancelled after designs over the limit");
	r.tight_device = -1;
	pw_planner_none(&r, &err);
	tap_str(err.msg, "plan: cancelled before any design gave a schedule",
	    "none: cancelled after designs without a schedule");
	atomic_store(&cancel, 0);
	r.timed_out = true;
	r.o.time_limit = 2;
	r.tight_device = 1;
	pw_planner_none(&r, &err);
	tap_str(err.msg, "plan: the time limit of 2 s ended before any design "
	    "that fits memory was timed (raise the time limit); the nearest so "
	    "far, on device 1, needs 306.3 KiB of its 293 KiB", "none: the "
	    "clock after designs over the limit");
	r.timed_out = false;
	pw_planner_none(&r, &err);
	tap_str(err.msg, "plan: no design fits memory: the nearest, on device "
	    "1, needs 306.3 KiB of its 293 KiB", "none: every design over "
	    "the limit");
}

/* With no limit, selective recomputation (no compute in the model) and
 * none tie, with the link or without: the table keeps the leanest. */
static void
test_planner_folds(void)
{
	struct pw_model m = tiny(10);
	struct pw_hardware hw = test_toy_hw;
	struct pw_split sp = split_of(4, 1, PW_PLACE_LOOP, DBL_MAX);
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_error err;

	hw.pcie_d2h = hw.pcie_h2d = 65536;
	o.top = 100;
	if (!tap_int(pw_planner_model(&m, &hw, &sp, &o, &r, &err), PW_OK,
	    "no limit: plans")) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_int((long long)r.ncand, 8, "no limit: 8 candidates of %zu "
	    "after folding", r.tried);
	tap_int(unfolded(&r), 0, "no limit: no tie kept at a peak no lower");
	tap_int(r.cand[0].design.recompute, PW_RECOMPUTE_PIPEOFFLOAD,
	    "no limit: the best (17.359375) with selective, none folded");
	check_candidates(&r, "no limit");
	pw_planner_result_free(&r);
}

/* Given stages with a link: every design's problem keeps it (without
 * offload means no transfers, not no link). */
static void
test_planner_fixed_link(void)
{
	struct pw_model m = tiny(10);
	struct pw_hardware hw = test_toy_hw;
	struct pw_split sp = split_of(4, 1, PW_PLACE_LOOP, 300000);
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_problem *p, *q;
	struct pw_error err;
	size_t i;
	int bad = 0;

	hw.pcie_d2h = hw.pcie_h2d = 65536;
	sp.offload = true;
	if (!tap_int(pw_cost_problem(&m, &hw, &sp, &p, &err), PW_OK,
	    "given stages with a link: the problem builds"))
		return;
	q = pw_problem_copy(p);
	pw_origin_free(q->origin);
	q->origin = NULL;
	if (tap_int(pw_planner(q, &o, &r, &err), PW_OK, "given stages with a "
	    "link: plans")) {
		for (i = 0; i < r.ncand; i++)
			bad += !r.cand[i].problem->link.present;
		tap_int(bad, 0, "given stages: every candidate keeps the link "
		    "(%zu)", r.ncand);
		tap_int((long long)r.ncand, 2, "given stages: with and without "
		    "offload");
		pw_planner_result_free(&r);
	}
	pw_problem_free(q);
	pw_problem_free(p);
}

/* One device, 4 microbatches (f 1, b 2) at a limit of three activations,
 * a fast link, offload on: GPipe (first in the registry) holds four
 * activations and fits once shaved by offloading (microbatches 0 and 1,
 * back a backward ahead), at 1F1B's makespan, 12; 1F1B fits as it is.
 * At the same step time the schedule without transfers wins, where the
 * first family's shave used to. */
static void
test_planner_tie_unmoved(void)
{
	static const struct pw_stage st = { .f = 1, .b = 2, .act = 1,
	    .offload = 1 };
	struct pw_problem *p = test_problem_uniform(1, 1, 4, PW_PLACE_LOOP,
	    &st);
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_error err;

	pw_problem_set_link(p, 16, 16, 0, false);
	p->memory[0].limit = 3;
	o.offload = PW_OFFMODE_ON;
	if (tap_int(pw_planner(p, &o, &r, &err), PW_OK, "tie: plans")) {
		tap_ok(r.ncand == 1 && strcmp(r.cand[0].schedule_name, "1f1b")
		    == 0 && r.cand[0].objective == 12 &&
		    !pw_solver_moves(r.cand[0].schedule), "tie: 1f1b "
		    "at 12, nothing moved (%s at %g)", r.cand[0].schedule_name,
		    r.cand[0].objective);
		pw_planner_result_free(&r);
	}
	pw_problem_free(p);
}

/* Given stages at a limit of one activation (tests/data/
 * plan_offload_only.json: 4 devices, 8 stages in a loop, 2 microbatches,
 * unit costs, a link): no family's schedule fits, even shaved by
 * offloading, and the optimizer's heuristic, offloading every activation,
 * does; the plan is that schedule (34 s, as solve's), not "no design
 * fits". */
static void
test_planner_offload_only(void)
{
	const char *dir = getenv("TESTDATA");
	struct pw_planner_opts o = small_opts();
	struct pw_planner_result r;
	struct pw_problem *p;
	struct pw_error err;
	char *path;
	int rc;

	path = pw_xasprintf("%s/plan_offload_only.json", dir != NULL ? dir :
	    "tests/data");
	p = pw_problem_read(path, &err);
	free(path);
	if (!tap_ok(p != NULL, "offload only: the problem reads (%s)",
	    p == NULL ? err.msg : "ok"))
		return;
	rc = pw_planner(p, &o, &r, &err);
	if (tap_int(rc, PW_OK, "offload only: plans (%s)", rc == PW_OK ? "ok" :
	    err.msg)) {
		tap_ok(r.ncand >= 1 && r.cand[0].makespan == 34 &&
		    strcmp(r.cand[0].schedule_name, "solve") == 0 &&
		    r.cand[0].design.offload, "offload only: the optimizer's "
		    "34 s, offloading");
		pw_planner_result_free(&r);
	}
	pw_problem_free(p);
}

int
main(void)
{

	test_balance_hand();
	test_balance_brute();
	test_progress_text();
	test_planner_model();
	test_planner_fixed();
	test_planner_refusals();
	test_planner_unfit();
	test_planner_folds();
	test_planner_given_first();
	test_planner_chunks_given();
	test_planner_none();
	test_planner_split_given();
	test_planner_fixed_link();
	test_planner_offload_only();
	test_planner_tie_unmoved();
	return tap_done();
}
