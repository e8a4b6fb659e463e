/*
 * test_milp.c - the MILP (solver/milp.h) on pipelines small enough to know
 * the optimum by hand.
 *
 * Unit pipelines: one stage per device, f = b = w = 1, act = 1 byte,
 * hold = 0.5, no static memory.  Device r of p can start no earlier than
 * r (its first F waits for the r before it) and then has 3m units of
 * work, so the makespan is at least p - 1 + 3m: 7 for p = 2, m = 2; 27
 * for p = 4, m = 8 (Zero Bubble's H1 reaches it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpsolve/lp_lib.h>

#include "milp.h"
#include "tap.h"
#include "testlib.h"

/* Returns a problem the caller frees: the unit pipeline with LIMIT bytes
 * per device and COMM seconds between devices. */
static struct pw_problem *
test_unit(int p, int m, double limit, double comm)
{
	struct pw_stage st = { .f = 1, .b = 1, .w = 1, .act = 1, .hold = 0.5,
	    .comm = comm };
	struct pw_problem *prob = test_problem_uniform(p, 1, m, PW_PLACE_LOOP,
	    &st);
	int d;

	for (d = 0; d < p; d++)
		prob->memory[d].limit = limit;
	return prob;
}

/* Returns a schedule the caller frees: 1F1B with each backward split
 * into B then W, at most CAP forwards of warm-up.  A device holds at
 * most its warm-up plus one activation. */
static struct pw_schedule *
test_1f1b(const struct pw_problem *prob, int cap)
{
	struct pw_schedule *s = pw_schedule_new(prob);
	int p = prob->devices, m = prob->microbatches, d, f, b, warm;

	for (d = 0; d < p; d++) {
		warm = p - d - 1 < cap ? p - d - 1 : cap;
		for (f = 0; f < warm && f < m; f++)
			pw_schedule_append(s, prob, test_op(PW_F, d, f));
		for (b = 0; b < m; b++) {
			if (f < m)
				pw_schedule_append(s, prob,
				    test_op(PW_F, d, f++));
			pw_schedule_append(s, prob, test_op(PW_B, d, b));
			pw_schedule_append(s, prob, test_op(PW_W, d, b));
		}
	}
	return s;
}

/* What a schedule comes to. */
struct test_eval {
	bool	ok;		/* simulates and passes the checker */
	bool	feasible;	/* within every limit */
	double	objective;
	int	moved;		/* offloaded activations */
};

static struct test_eval
test_eval(const struct pw_problem *prob, const struct pw_schedule *sched,
    enum pw_objective obj)
{
	struct test_eval e = { false, false, NAN, 0 };
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	char *fail;
	int c;

	if (pw_simulate(prob, sched, &t, &err) != PW_OK) {
		tap_diag("simulate: %s", err.msg);
		return e;
	}
	m = pw_metrics_compute(prob, sched, t);
	fail = test_checker(prob, sched, t);
	if (fail != NULL)
		tap_diag("%s", fail);
	e.ok = fail == NULL;
	e.feasible = m->feasible;
	e.objective = obj == PW_OBJ_SPAN ? m->max_span : m->makespan;
	for (c = 0; c < sched->nchannels; c++)
		for (int i = 0; i < sched->channel[c].len; i++)
			e.moved += sched->channel[c].ops[i].kind == PW_OFFLOAD;
	free(fail);
	pw_metrics_free(m);
	pw_timing_free(t);
	return e;
}

/* A request to improve SCHED on PROB, as good as the incumbent's
 * evaluation says, with a generous time limit (the cases here take well
 * under a second; the limit only keeps a broken build from hanging). */
static void
test_request(struct pw_milp_request *rq, const struct pw_problem *prob,
    const struct pw_schedule *sched, enum pw_objective obj)
{
	memset(rq, 0, sizeof *rq);
	rq->problem = prob;
	rq->objective = obj;
	rq->incumbent = sched;
	rq->incumbent_objective = test_eval(prob, sched, obj).objective;
	rq->time_limit = 60;
}

/* Solves RQ with a test line that it returns PW_OK; RES is the caller's
 * to free (its schedule). */
static bool
test_solve(const struct pw_milp_request *rq, struct pw_milp_result *res,
    const char *what)
{
	struct pw_error err;
	int rc = pw_milp_solve(rq, res, &err);

	if (!tap_int(rc, PW_OK, "%s: solves", what)) {
		tap_diag("%s", err.msg);
		return false;
	}
	tap_diag("%s: objective %g, bound %g, %s model, %d variables, %d "
	    "binaries, %d rows", what, res->objective, res->bound,
	    res->size.formulation != NULL ? res->size.formulation : "no",
	    res->size.variables, res->size.binaries, res->size.rows);
	return true;
}

/* The returned schedule: checked, within every limit, as good as said. */
static void
test_result(const struct pw_problem *prob, const struct pw_milp_result *res,
    enum pw_objective obj, const char *what)
{
	struct test_eval e;

	if (!tap_ok(res->schedule != NULL, "%s: improves", what))
		return;
	e = test_eval(prob, res->schedule, obj);
	tap_ok(e.ok, "%s: the schedule passes the checker", what);
	tap_ok(e.feasible, "%s: the schedule is within every limit", what);
	tap_near(e.objective, res->objective, 1e-9 * res->objective,
	    "%s: the objective is the simulated one", what);
}

/* p = 2, m = 2: the bound (7) is reached by F0 B0 F1 B1 W0 W1 on device 1
 * and F0 F1 B0 W0 B1 W1 on device 0; split 1F1B takes 8.  The whole model
 * (time-indexed here) proves it. */
static void
test_two_by_two(void)
{
	struct pw_problem *prob = test_unit(2, 2, INFINITY, 0);
	struct pw_schedule *inc = test_1f1b(prob, 100);
	struct pw_milp_request rq;
	struct pw_milp_result res;

	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	tap_near(rq.incumbent_objective, 8, 0, "2x2: split 1F1B takes 8");
	if (test_solve(&rq, &res, "2x2")) {
		test_result(prob, &res, PW_OBJ_MAKESPAN, "2x2");
		tap_near(res.objective, 7, 1e-9, "2x2: makespan 7");
		tap_near(res.bound, 7, 1e-9, "2x2: bound 7");
		tap_ok(res.optimal && res.exact, "2x2: proven for the problem");
		tap_ok(res.size.whole, "2x2: the whole model");
		tap_str(res.size.formulation, "time-indexed",
		    "2x2: whole time units, no offload: time-indexed");
		pw_schedule_free(res.schedule);
	}
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/* The same with comm 0.001 between the devices: a unit of 0.001 s makes
 * the time-indexed model too long, so big-M solves it.  The 7 of above
 * grows by the two hops on the chain F(0,0) -> F(1,0) -> ... -> B(1,1)
 * -> B(0,1) -> W(0,1): device 1 ends its fourth op at 5.001, device 0
 * finishes B(0,1) and W(0,1) from 5.002 to 7.002.  Device 0's span is
 * the same 7.002: from F(0,0) to B(0,0) it has only two units of work
 * for the three units and two hops to B(1,0)'s end. */
static void
test_big_m(void)
{
	static const enum pw_objective objs[] = {
		PW_OBJ_MAKESPAN, PW_OBJ_SPAN
	};
	static const char *const names[] = { "makespan", "span" };
	struct pw_problem *prob = test_unit(2, 2, INFINITY, 0.001);
	struct pw_schedule *inc = test_1f1b(prob, 100);
	struct pw_milp_request rq;
	struct pw_milp_result res;
	char what[64];
	int k;

	for (k = 0; k < 2; k++) {
		snprintf(what, sizeof what, "2x2 comm 0.001 %s", names[k]);
		test_request(&rq, prob, inc, objs[k]);
		if (!test_solve(&rq, &res, what))
			continue;
		tap_str(res.size.formulation, "big-M", "%s: big-M", what);
		test_result(prob, &res, objs[k], what);
		tap_near(res.objective, 7.002, 1e-9, "%s: 7.002", what);
		tap_near(res.bound, 7.002, 1e-6, "%s: proven", what);
		tap_ok(res.optimal && res.exact, "%s: for the problem", what);
		pw_schedule_free(res.schedule);
	}
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/* p = 4, m = 8 from split 1F1B (30): the bound 27, reached by ZB-H1. */
static void
test_four_by_eight(void)
{
	struct pw_problem *prob = test_unit(4, 8, INFINITY, 0);
	struct pw_schedule *inc = test_1f1b(prob, 100);
	struct pw_milp_request rq;
	struct pw_milp_result res;

	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	tap_near(rq.incumbent_objective, 30, 0, "4x8: split 1F1B takes 30");
	if (test_solve(&rq, &res, "4x8")) {
		tap_ok(res.objective <= 30, "4x8: no worse than the incumbent");
		tap_ok(res.bound <= 27 + 1e-9 && 27 <= res.objective + 1e-9,
		    "4x8: bound <= 27 <= objective");
		if (res.schedule != NULL)
			test_result(prob, &res, PW_OBJ_MAKESPAN, "4x8");
		pw_schedule_free(res.schedule);
	}
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/*
 * Memory limits of 2 and 4 bytes, from 1F1B with its warm-up capped so
 * that it fits (one forward ahead at 2, three at 4).  Whatever the model
 * returns stays within the limit; at 4 the bound is still 27 (ZB-H1 peaks
 * at 4).
 */
static void
test_limits(void)
{
	static const double limits[] = { 2, 4 };
	struct pw_milp_request rq;
	struct pw_milp_result res;
	char what[64];
	size_t k;

	for (k = 0; k < sizeof limits / sizeof limits[0]; k++) {
		struct pw_problem *prob = test_unit(4, 8, limits[k], 0);
		struct pw_schedule *inc = test_1f1b(prob, (int)limits[k] - 1);
		struct test_eval e = test_eval(prob, inc, PW_OBJ_MAKESPAN);

		snprintf(what, sizeof what, "4x8 limit %g", limits[k]);
		tap_ok(e.ok && e.feasible, "%s: the incumbent fits", what);
		test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
		if (test_solve(&rq, &res, what)) {
			tap_ok(res.objective <= e.objective,
			    "%s: no worse than the incumbent", what);
			tap_ok(res.bound <= res.objective + 1e-9 &&
			    res.bound >= 27 - 1e-9, "%s: 27 <= bound <= "
			    "objective", what);
			if (limits[k] >= 4)
				tap_ok(res.bound <= 27 + 1e-9,
				    "%s: bound <= 27", what);
			if (res.schedule != NULL)
				test_result(prob, &res, PW_OBJ_MAKESPAN, what);
			pw_schedule_free(res.schedule);
		}
		pw_schedule_free(inc);
		pw_problem_free(prob);
	}
}

/* The order of the ops of SEQ that MASK leaves fixed, as a string the
 * caller frees. */
static char *
test_fixed_order(const struct pw_problem *prob, const struct pw_seq *seq,
    const bool *mask)
{
	struct pw_seq fixed = { 0, 0, NULL };
	char *s;
	int i;

	for (i = 0; i < seq->len; i++)
		if (!mask[pw_op_index(prob, seq->ops[i])])
			pw_seq_push(&fixed, seq->ops[i]);
	s = test_order(&fixed);
	free(fixed.ops);
	return s;
}

/* Returns the mask (the caller frees it) of the ops INC starts in
 * [FROM, TO); their number in *N unless N is NULL. */
static bool *
test_window_mask(const struct pw_problem *prob, const struct pw_schedule *inc,
    double from, double to, int *n)
{
	size_t universe = pw_op_universe(prob), i;
	bool *mask = pw_xcalloc(universe, sizeof *mask);
	struct pw_timing *t;
	struct pw_error err;
	int count = 0;

	if (pw_simulate(prob, inc, &t, &err) != PW_OK)
		abort();
	for (i = 0; i < universe; i++)
		if (pw_timing_has(t, i) && t->start[i] >= from &&
		    t->start[i] < to)
			count += mask[i] = true;
	pw_timing_free(t);
	if (n != NULL)
		*n = count;
	return mask;
}

/*
 * A window of INC on PROB: only the ops it starts in [FROM, TO) are free.
 * The result improves, and fixed compute ops keep their order on every
 * device (a free activation's transfers are free with it).
 */
static void
test_window(const struct pw_problem *prob, const struct pw_schedule *inc,
    double from, double to, bool offload, long iterations, const char *what)
{
	struct pw_milp_request rq;
	struct pw_milp_result res;
	char *want, *got;
	int d, nfree;
	bool *mask = test_window_mask(prob, inc, from, to, &nfree);

	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	rq.free = mask;
	rq.offload = offload;
	rq.iteration_limit = iterations;
	tap_ok(nfree > 0, "%s: %d free ops", what, nfree);
	if (test_solve(&rq, &res, what)) {
		tap_ok(!res.size.whole && !res.exact, "%s: not the whole "
		    "model", what);
		test_result(prob, &res, PW_OBJ_MAKESPAN, what);
		for (d = 0; res.schedule != NULL && d < prob->devices; d++) {
			want = test_fixed_order(prob, &inc->device[d], mask);
			got = test_fixed_order(prob, &res.schedule->device[d],
			    mask);
			tap_str(got, want, "%s: device %d keeps its fixed ops' "
			    "order", what, d);
			free(want);
			free(got);
		}
		pw_schedule_free(res.schedule);
	}
	free(mask);
}

/* The sum of every op's end in SCHED (as pw_solver_ends counts). */
static double
test_ends(const struct pw_problem *prob, const struct pw_schedule *sched)
{
	struct pw_timing *t;
	struct pw_error err;
	double sum = 0;
	size_t k;

	if (pw_simulate(prob, sched, &t, &err) != PW_OK)
		return NAN;
	for (k = 0; k < t->universe; k++)
		if (pw_timing_has(t, k))
			sum += t->end[k];
	pw_timing_free(t);
	return sum;
}

/*
 * Ties: split 1F1B on 4x8 without a limit takes 30, its ops' ends sum
 * to 1488.  Freeing the ops that start in [0, 8): the makespan cannot
 * fall through that window, so without ties the model finds nothing;
 * with ties it finds a schedule of the same makespan whose ends sum to
 * 1485 (the first below the incumbent's it comes to).
 */
static void
test_ties(void)
{
	struct pw_problem *prob = test_unit(4, 8, INFINITY, 0);
	struct pw_schedule *inc = test_1f1b(prob, 100);
	struct pw_milp_request rq;
	struct pw_milp_result res;
	double ends = test_ends(prob, inc), obj;
	int k;
	bool *mask = test_window_mask(prob, inc, 0, 8, NULL);

	for (k = 0; k < 2; k++) {
		test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
		obj = rq.incumbent_objective;
		rq.free = mask;
		rq.ties = k == 1;
		if (!test_solve(&rq, &res, k ? "ties" : "no ties"))
			continue;
		tap_diag("%s: ends %g -> %g", k ? "ties" : "no ties", ends,
		    res.schedule != NULL ? test_ends(prob, res.schedule) :
		    ends);
		if (k == 0) {
			tap_ok(res.schedule == NULL && res.objective == obj,
			    "no ties: nothing below %g in [0, 8)", obj);
		} else {
			test_result(prob, &res, PW_OBJ_MAKESPAN, "ties");
			tap_ok(res.schedule != NULL && res.objective == 30 &&
			    ends == 1488 && res.ends == 1485 &&
			    res.ends == test_ends(prob, res.schedule),
			    "ties: makespan %g (30), ends %g -> %g (1488 -> "
			    "1485)", res.objective, ends, res.ends);
		}
		pw_schedule_free(res.schedule);
	}
	free(mask);
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/* Windows of split 1F1B under 3 bytes (38): time-indexed, being small. */
static void
test_windows(void)
{
	struct pw_problem *prob = test_unit(4, 8, 3, 0);
	struct pw_schedule *inc = test_1f1b(prob, 2);

	tap_near(test_eval(prob, inc, PW_OBJ_MAKESPAN).objective, 38, 0,
	    "window: the incumbent takes 38");
	test_window(prob, inc, 10, 20, false, 0, "window [10, 20)");
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/*
 * RQ (a model lp_solve does not finish in 1,000 simplex iterations) under
 * an iteration limit of 1,000, twice: lp_solve stops at the limit, at
 * the same iteration and with the same schedule both times, whatever
 * the clock says.
 */
static void
test_iteration_limit(struct pw_milp_request *rq)
{
	struct pw_milp_result res[2];
	int k;

	rq->iteration_limit = 1000;
	for (k = 0; k < 2; k++)
		if (!test_solve(rq, &res[k], "iteration limit"))
			return;
	for (k = 0; k < 2; k++)
		tap_ok(res[k].iterations >= 1000 && res[k].iterations < 1100,
		    "iteration limit: stopped at %ld, just past 1,000",
		    res[k].iterations);
	tap_ok(!res[0].optimal, "iteration limit: not finished");
	tap_int(res[1].iterations, res[0].iterations, "iteration limit: "
	    "the same iteration twice");
	tap_ok(res[0].objective == res[1].objective && (res[0].schedule ==
	    NULL) == (res[1].schedule == NULL) && (res[0].schedule == NULL ||
	    test_same_schedule(res[0].schedule, res[1].schedule)),
	    "iteration limit: the same schedule twice (%g)", res[0].objective);
	for (k = 0; k < 2; k++)
		pw_schedule_free(res[k].schedule);
	rq->iteration_limit = 0;
}

/*
 * Offload: 4x8 with a 3-byte limit and a link moving an activation in
 * 0.5 s each way.  Without offload the best under 3 bytes is 31 (every
 * F(s, j+3) waits for B(s, j); the time-indexed model proves 31 in a
 * fraction of a second), worse than the 30 of the incumbent, which
 * offloads (the planner's peak shaving) to fit.
 * So anything below 30 moves activations; the model (big-M: transfers)
 * finds one and the simulator confirms it within the limit.  So does a
 * window of the ops that start in [8, 30) (its zone: an activation whose
 * backward comes after the window keeps its transfers there, so a
 * narrower window finds nothing here).
 */
static void
test_offload(void)
{
	struct pw_problem *prob = test_unit(4, 8, INFINITY, 0);
	struct pw_offload_opts oo = { PW_OFFSEL_PEAK, 1, NULL };
	struct pw_schedule *inc;
	struct pw_milp_request rq;
	struct pw_milp_result res;
	struct pw_error err;
	struct test_eval e;
	int s;

	for (s = 0; s < 4; s++)
		prob->stages[s].offload = 1;
	pw_problem_set_link(prob, 2, 2, 0, true);
	inc = test_1f1b(prob, 100);
	if (!tap_int(pw_offload_plan(prob, inc, &oo, &err), PW_OK,
	    "offload: the planner shaves the incumbent's peaks"))
		tap_diag("%s", err.msg);
	for (s = 0; s < 4; s++)
		prob->memory[s].limit = 3;
	e = test_eval(prob, inc, PW_OBJ_MAKESPAN);
	tap_ok(e.ok && e.feasible && e.moved > 0, "offload: the incumbent "
	    "moves %d activations to fit 3 bytes", e.moved);
	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	rq.offload = true;
	if (test_solve(&rq, &res, "offload")) {
		tap_str(res.size.formulation, "big-M", "offload: big-M");
		tap_ok(!res.exact, "offload: the model restricts the search");
		test_result(prob, &res, PW_OBJ_MAKESPAN, "offload");
		tap_ok(res.objective < 30, "offload: better than 30 (%g)",
		    res.objective);
		if (res.schedule != NULL)
			tap_ok(test_eval(prob, res.schedule,
			    PW_OBJ_MAKESPAN).moved > 0,
			    "offload: it moves activations");
		tap_ok(res.bound <= res.objective + 1e-9 && res.bound >= 27 -
		    1e-9, "offload: 27 <= bound <= objective");
		pw_schedule_free(res.schedule);
	}
	test_window(prob, inc, 8, 30, true, 10000,
	    "offload window [8, 30)");
	test_iteration_limit(&rq);
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/* The model written in LP format reads back into lp_solve with as many
 * columns as it was built with, for both formulations. */
static void
test_write_lp(void)
{
	static const double comms[] = { 0, 0.001 };
	struct pw_milp_request rq;
	struct pw_milp_result res;
	char path[] = "/tmp/test_milp_XXXXXX";
	lprec *lp;
	FILE *fp;
	size_t k;
	int fd;

	if ((fd = mkstemp(path)) < 0) {
		tap_skip("no temporary file", "write_lp");
		return;
	}
	close(fd);
	for (k = 0; k < sizeof comms / sizeof comms[0]; k++) {
		struct pw_problem *prob = test_unit(2, 2, 3, comms[k]);
		struct pw_schedule *inc = test_1f1b(prob, 100);

		test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
		rq.write_lp = path;
		if (test_solve(&rq, &res, "write_lp")) {
			fp = fopen(path, "r");
			lp = fp != NULL ? read_lp(fp, NEUTRAL, NULL) : NULL;
			if (tap_ok(lp != NULL, "write_lp: lp_solve reads the "
			    "%s model back", res.size.formulation)) {
				tap_int(get_Ncolumns(lp), res.size.variables,
				    "write_lp: with its %d columns",
				    res.size.variables);
				delete_lp(lp);
			}
			if (fp != NULL)
				fclose(fp);
			pw_schedule_free(res.schedule);
		}
		pw_schedule_free(inc);
		pw_problem_free(prob);
	}
	unlink(path);
}

/* Cancelled before the call: back at once with the incumbent. */
static void
test_cancel(void)
{
	struct pw_problem *prob = test_unit(4, 8, INFINITY, 0);
	struct pw_schedule *inc = test_1f1b(prob, 100);
	atomic_int cancel = 1;
	struct pw_milp_request rq;
	struct pw_milp_result res;

	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	rq.cancel = &cancel;
	if (test_solve(&rq, &res, "cancelled")) {
		tap_ok(res.schedule == NULL, "cancelled: no schedule");
		tap_near(res.objective, 30, 0, "cancelled: the incumbent's "
		    "objective");
		tap_ok(!res.optimal, "cancelled: nothing proven");
	}
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/* Position of OP in SEQ, or -1. */
static int
test_position(const struct pw_seq *seq, struct pw_op op)
{
	int i;

	for (i = 0; i < seq->len; i++)
		if (seq->ops[i].kind == op.kind &&
		    seq->ops[i].stage == op.stage && seq->ops[i].mb == op.mb)
			return i;
	return -1;
}

/*
 * Pins on the 2x2 pipeline.  B(1,0) before F(1,1) is how the optimum runs
 * anyway: 7, pin kept.  W(1,0) before F(1,1) forces device 1 through
 * F0 B0 W0 F1 before B(1,1), which ends at 6 at the earliest, and device
 * 0 needs two more units after it: the incumbent's 8 is optimal.  F(1,1)
 * pinned before F(0,1) contradicts the dependency F(0,1) -> F(1,1).
 */
static void
test_pins(void)
{
	struct pw_problem *prob = test_unit(2, 2, INFINITY, 0);
	struct pw_schedule *inc = test_1f1b(prob, 100);
	struct pw_pin keep = { test_op(PW_B, 1, 0), test_op(PW_F, 1, 1) };
	struct pw_pin slow = { test_op(PW_W, 1, 0), test_op(PW_F, 1, 1) };
	struct pw_pin cycle = { test_op(PW_F, 1, 1), test_op(PW_F, 0, 1) };
	struct pw_milp_request rq;
	struct pw_milp_result res;
	struct pw_error err;

	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	rq.pins = &keep;
	rq.npins = 1;
	if (test_solve(&rq, &res, "pin kept")) {
		test_result(prob, &res, PW_OBJ_MAKESPAN, "pin kept");
		tap_near(res.objective, 7, 1e-9, "pin kept: 7");
		tap_ok(!res.exact, "pin kept: pins restrict the model");
		if (res.schedule != NULL) {
			const struct pw_seq *d1 = &res.schedule->device[1];

			tap_ok(test_position(d1, keep.before) <
			    test_position(d1, keep.after),
			    "pin kept: B(1,0) before F(1,1)");
		}
		pw_schedule_free(res.schedule);
	}
	rq.pins = &slow;
	if (test_solve(&rq, &res, "pin slow")) {
		tap_ok(res.schedule == NULL, "pin slow: nothing better");
		tap_near(res.bound, 8, 1e-9, "pin slow: the incumbent's 8 is "
		    "proven");
		tap_ok(res.optimal, "pin slow: optimal");
	}
	rq.pins = &cycle;
	tap_int(pw_milp_solve(&rq, &res, &err), PW_ERR_INPUT,
	    "pin against a dependency: refused");
	tap_str(err.msg, "milp: the pins contradict the dependencies or each "
	    "other (they form a cycle)", "pin against a dependency: says so");
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/*
 * Pins on an incumbent that fuses every backward (1F1B on the 2x2
 * pipeline, device 1: F0 BW0 F1 BW1, 9): a pin naming B(1,0) means
 * BW(1,0), as the solver's pin check reads it, and a pin between W(1,0)
 * and B(1,0) pins BW(1,0) against itself, which holds.  The model keeps
 * each backward fused, so 9 is its optimum.
 */
static void
test_pins_fused(void)
{
	struct pw_problem *prob = test_unit(2, 2, INFINITY, 0);
	struct pw_timing *t = NULL;
	struct pw_schedule *inc = test_simulate("1f1b", prob, "fused pins",
	    &t);
	struct pw_pin pins[2] = {
		{ test_op(PW_B, 1, 0), test_op(PW_F, 1, 1) },
		{ test_op(PW_W, 1, 0), test_op(PW_B, 1, 0) },
	};
	struct pw_milp_request rq;
	struct pw_milp_result res;

	if (inc == NULL)
		goto out;
	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	rq.pins = pins;
	rq.npins = 2;
	if (test_solve(&rq, &res, "fused pins")) {
		tap_ok(res.schedule == NULL, "fused pins: nothing better");
		tap_near(res.objective, 9, 1e-9, "fused pins: 9");
		tap_ok(res.optimal, "fused pins: optimal in the model");
		pw_schedule_free(res.schedule);
	}
out:
	pw_timing_free(t);
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/* Bad requests are refused with one line. */
static void
test_refusals(void)
{
	struct pw_problem *prob = test_unit(2, 2, INFINITY, 0);
	struct pw_schedule *inc = test_1f1b(prob, 100);
	struct pw_pin away = { test_op(PW_F, 5, 0), test_op(PW_F, 0, 1) };
	struct pw_milp_request rq;
	struct pw_milp_result res;
	struct pw_error err;

	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	rq.incumbent = NULL;
	tap_int(pw_milp_solve(&rq, &res, &err), PW_ERR_INPUT,
	    "no incumbent: refused");
	tap_str(err.msg, "milp: the request needs a problem and an incumbent",
	    "no incumbent: says so");
	rq.incumbent = inc;
	rq.pins = &away;
	rq.npins = 1;
	tap_int(pw_milp_solve(&rq, &res, &err), PW_ERR_INPUT,
	    "pin outside the problem: refused");
	tap_str(err.msg, "milp: pin 0 names an op outside the problem",
	    "pin outside the problem: says so");
	rq.npins = 0;
	rq.time_limit = NAN;
	tap_int(pw_milp_solve(&rq, &res, &err), PW_ERR_INPUT,
	    "time limit NaN: refused");
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

/* The same request twice gives the same schedule. */
static void
test_deterministic(void)
{
	struct pw_problem *prob = test_unit(4, 8, 3, 0);
	struct pw_schedule *inc = test_1f1b(prob, 2);
	struct pw_milp_request rq;
	struct pw_milp_result a, b;
	char *x, *y;
	int d;

	test_request(&rq, prob, inc, PW_OBJ_MAKESPAN);
	if (!test_solve(&rq, &a, "twice (1)"))
		goto out;
	if (test_solve(&rq, &b, "twice (2)") &&
	    tap_ok(a.schedule != NULL && b.schedule != NULL,
	    "twice: both improve")) {
		for (d = 0; d < prob->devices; d++) {
			x = test_order(&a.schedule->device[d]);
			y = test_order(&b.schedule->device[d]);
			tap_str(y, x, "twice: device %d runs the same order",
			    d);
			free(x);
			free(y);
		}
	}
	pw_schedule_free(a.schedule);
	pw_schedule_free(b.schedule);
out:
	pw_schedule_free(inc);
	pw_problem_free(prob);
}

int
main(void)
{
	test_two_by_two();
	test_big_m();
	test_four_by_eight();
	test_limits();
	test_windows();
	test_ties();
	test_offload();
	test_write_lp();
	test_cancel();
	test_pins();
	test_pins_fused();
	test_refusals();
	test_deterministic();
	return tap_done();
}
