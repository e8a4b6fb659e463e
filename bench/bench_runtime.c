/*
 * bench_runtime.c - the runtime against the targets of issue 16, on the
 * CPU backend of this machine; wall times are the point here, each the
 * median of repeated runs.
 *
 * (1) Engine overhead: a workload of zero-size GEMMs (tokens=0), 1F1B and
 *     ZB-H1 at p=8, m=64: the median over runs of the step time over the
 *     ops of the busiest device, the time per op beyond the math; anchor
 *     under 20 us.  Beside it the machine's floor: a token handed round
 *     a ring of as many threads by a mutex and a condition, per hand-off
 *     (a zero-size op's time is mostly such hand-offs along the step).
 * (2) Calibration closes the loop: a 4-device workload whose ops take
 *     milliseconds, for 1F1B, ZB-H1 and ZB-V: launch, calibrate on the
 *     run, predict the measured schedule on the calibrated problem; the
 *     ratio predicted / measured before and after; anchor within 10%.
 *     Where the machine has fewer than 4 cores, the device threads share
 *     them, which no prediction models; the same cases then run again
 *     with a device per core, beside the anchor's rows, not counted.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "plan.h"
#include "runtime.h"
#include "testlib.h"

/* Runs per case of (1), iterations per run. */
#define BENCH_RUNS		5
#define BENCH_ITERATIONS	5
/* (1)'s anchor, seconds per op; (2)'s, |ratio - 1|. */
#define BENCH_OVERHEAD_MAX	20e-6
#define BENCH_CALIBRATED_MAX	0.10
/* (2)'s workload: F is two GEMMs of 2 * 128 * 256 * 1024 FLOP, some
 * milliseconds each on one core, long enough against the wake-ups of a
 * loaded machine. */
#define BENCH_WORKLOAD		"hidden=256,ffn=1024,tokens=128,layers=1"

static int	bench_met, bench_cases;

/* What one case runs: FAMILY's plan of its problem and the workload's
 * problem; one cleanup. */
struct bench_case {
	struct pw_plan *plan;
	struct pw_workload work;
	struct pw_problem *problem;	/* the workload's */
};

static void
bench_case_free(struct bench_case *c)
{
	pw_plan_free(c->plan);
	pw_workload_clear(&c->work);
	pw_problem_free(c->problem);
}

/* FAMILY on P (taken) with the workload SPEC into C; false after saying
 * why. */
static bool
bench_case_new(const char *family, struct pw_problem *p, const char *spec,
    struct bench_case *c)
{
	const struct pw_problem *used;
	struct pw_error err;
	int rc;

	memset(c, 0, sizeof *c);
	rc = pw_plan_family(pw_family_find(family), p, &c->plan, &err);
	pw_problem_free(p);
	if (rc != PW_OK)
		goto fail;
	used = pw_plan_problem(c->plan);
	if (pw_workload_parse(spec, NULL, used->nstages, &c->work, &err) !=
	    PW_OK || (c->problem = pw_workload_problem(used, &c->work,
	    INFINITY, &err)) == NULL)
		goto fail;
	return true;
fail:
	printf("  %s: %s\n", family, err.msg);
	bench_case_free(c);
	return false;
}

/* One launch of C, its measured run in *OUT (the caller frees it); its
 * hand-offs over the host wire when HOST_WIRE. */
static bool
bench_launch(const struct bench_case *c, bool host_wire,
    struct pw_measured **out)
{
	struct pw_rt_result res;
	struct pw_rt_opts o;
	struct pw_error err;

	pw_rt_opts_init(&o);
	o.backend = PW_RT_CPU;
	o.host_wire = host_wire;
	o.iterations = BENCH_ITERATIONS;
	o.reference = false;
	if (pw_launch(c->problem, pw_plan_schedule(c->plan), &c->work, &o,
	    &res, &err) != PW_OK) {
		printf("  launch: %s\n", err.msg);
		return false;
	}
	*out = res.measured;
	res.measured = NULL;
	pw_rt_result_free(&res);
	return true;
}

/* The most ops one device of SCHED runs. */
static int
bench_max_ops(const struct pw_problem *p, const struct pw_schedule *sched)
{
	int d, most = 0;

	for (d = 0; d < p->devices; d++)
		if (sched->device[d].len > most)
			most = sched->device[d].len;
	return most;
}

/* The ring of (1)'s floor: thread I waits for the token at I, passes it
 * on; one cleanup. */
#define BENCH_RING	8
#define BENCH_HOPS	20000

struct bench_ring {
	pthread_mutex_t lock;
	pthread_cond_t passed[BENCH_RING];
	int	at;		/* whose turn */
	int	hops;		/* hand-offs left */
};

struct bench_seat {
	struct bench_ring *ring;
	int	i;
};

static void *
bench_ring_seat(void *arg)
{
	struct bench_seat *seat = arg;
	struct bench_ring *r = seat->ring;
	int next = (seat->i + 1) % BENCH_RING;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (r->at != seat->i && r->hops > 0)
			pthread_cond_wait(&r->passed[seat->i], &r->lock);
		if (r->hops <= 0)
			break;
		r->hops--;
		r->at = next;
		pthread_cond_signal(&r->passed[next]);
	}
	pthread_cond_signal(&r->passed[next]);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Seconds per hand-off round a ring of BENCH_RING threads; NAN when the
 * threads cannot start. */
static double
bench_floor(void)
{
	struct bench_seat seat[BENCH_RING];
	pthread_t thread[BENCH_RING];
	struct bench_ring r;
	double t0, secs = NAN;
	int i, started = 0;

	pthread_mutex_init(&r.lock, NULL);
	for (i = 0; i < BENCH_RING; i++)
		pthread_cond_init(&r.passed[i], NULL);
	r.at = -1;
	r.hops = BENCH_HOPS;
	for (i = 0; i < BENCH_RING; i++) {
		seat[i].ring = &r;
		seat[i].i = i;
		if (pthread_create(&thread[i], NULL, bench_ring_seat,
		    &seat[i]) != 0)
			break;
		started++;
	}
	t0 = pw_now();
	pthread_mutex_lock(&r.lock);
	if (started < BENCH_RING)
		r.hops = 0;
	r.at = 0;
	for (i = 0; i < BENCH_RING; i++)
		pthread_cond_signal(&r.passed[i]);
	pthread_mutex_unlock(&r.lock);
	for (i = 0; i < started; i++)
		pthread_join(thread[i], NULL);
	if (started == BENCH_RING)
		secs = (pw_now() - t0) / BENCH_HOPS;
	for (i = 0; i < BENCH_RING; i++)
		pthread_cond_destroy(&r.passed[i]);
	pthread_mutex_destroy(&r.lock);
	return secs;
}

/* The median over BENCH_RUNS launches of C (over the host wire when
 * HOST_WIRE) of its step per op of its busiest device, OPS; NAN when a
 * launch fails. */
static double
bench_per_op(const struct bench_case *c, bool host_wire, int ops)
{
	double per_op[BENCH_RUNS];
	struct pw_measured *m;
	int r;

	for (r = 0; r < BENCH_RUNS; r++) {
		if (!bench_launch(c, host_wire, &m))
			return NAN;
		per_op[r] = pw_measured_step(m) / ops;
		pw_measured_free(m);
	}
	return bench_median(per_op, BENCH_RUNS);
}

static void
bench_overhead(void)
{
	static const char *const families[] = { "1f1b", "zb-h1" };
	double per_op[BENCH_RUNS], us, wire;
	struct bench_case c;
	size_t f;
	int r, ops;
	bool met;

	printf("(1) engine overhead: tokens=0, p=8, m=64, %d runs of %d "
	    "iterations; anchor: under 20 us per op\n", BENCH_RUNS,
	    BENCH_ITERATIONS);
	for (r = 0; r < BENCH_RUNS; r++)
		per_op[r] = bench_floor();
	printf("the floor: a ring of %d threads hands a token on in %.2f us "
	    "(median of %d runs of %d hand-offs)\n", BENCH_RING,
	    bench_median(per_op, BENCH_RUNS) * 1e6, BENCH_RUNS, BENCH_HOPS);
	printf("%-8s %-8s %-10s %-8s %-4s %s\n", "family", "ops/dev", "us/op",
	    "ratio", "met", "us/op over the host wire (not counted)");
	for (f = 0; f < sizeof families / sizeof families[0]; f++) {
		if (!bench_case_new(families[f], test_problem_unit(8, 64, 0,
		    INFINITY), "tokens=0", &c)) {
			bench_cases++;
			continue;
		}
		ops = bench_max_ops(c.problem, pw_plan_schedule(c.plan));
		us = bench_per_op(&c, false, ops) * 1e6;
		/* The sequenced transport's cost: a thread per device more,
		 * and every hand-off in the global order. */
		wire = bench_per_op(&c, true, ops) * 1e6;
		met = us * 1e-6 < BENCH_OVERHEAD_MAX;
		if (!isnan(us))
			printf("%-8s %-8d %-10.2f %-8.3f %-4s %.2f\n",
			    families[f], ops, us, us * 1e-6 / BENCH_OVERHEAD_MAX,
			    met ? "yes" : "no", wire);
		bench_cases++;
		bench_met += met;
		bench_case_free(&c);
		fflush(stdout);
	}
	printf("\n");
}

/* The makespan of C's schedule on P. */
static double
bench_predict(const struct pw_problem *p, const struct bench_case *c)
{
	struct pw_metrics *metrics;
	struct pw_timing *t;
	struct pw_error err;
	double makespan;

	if (pw_simulate(p, pw_plan_schedule(c->plan), &t, &err) != PW_OK) {
		printf("  simulate: %s\n", err.msg);
		return NAN;
	}
	metrics = pw_metrics_compute(p, pw_plan_schedule(c->plan), t);
	makespan = metrics->makespan;
	pw_metrics_free(metrics);
	pw_timing_free(t);
	return makespan;
}

/* The loop closed: the best family on the calibrated problem CAL,
 * launched, its prediction against its measured step. */
static void
bench_reoptimize(const struct pw_problem *cal)
{
	struct pw_compare_row *rows = pw_compare_rows(cal, NULL, NULL);
	int best = pw_compare_best(rows);
	struct pw_measured *m = NULL;
	struct bench_case c;
	double predicted, measured;

	pw_compare_rows_free(rows);
	if (best < 0) {
		printf("  re-optimized: no family builds a schedule\n");
		return;
	}
	if (!bench_case_new(pw_families[best].name, pw_problem_copy(cal),
	    BENCH_WORKLOAD, &c))
		return;
	if (bench_launch(&c, false, &m)) {
		predicted = bench_predict(c.problem, &c);
		measured = pw_measured_step(m);
		printf("  re-optimized: %s, predicted %.2f ms, measured %.2f ms,"
		    " ratio %.3f\n", pw_families[best].name, predicted * 1e3,
		    measured * 1e3, predicted / measured);
	}
	pw_measured_free(m);
	bench_case_free(&c);
}

/* (2) on FAMILY's schedule of P (taken), toward the anchor when
 * COUNTED. */
static void
bench_calibrate_one(const char *family, struct pw_problem *p, bool counted)
{
	struct pw_calibration fit = { 0 };
	struct pw_problem *cal = NULL;
	struct pw_measured *m = NULL;
	const struct pw_measured *runs[1];
	struct pw_error err;
	struct bench_case c;
	double measured, before, after;
	bool met = false;

	bench_cases += counted;
	if (!bench_case_new(family, p, BENCH_WORKLOAD, &c))
		return;
	if (!bench_launch(&c, false, &m))
		goto out;
	runs[0] = m;
	if (pw_calibrate(c.problem, runs, 1, &cal, &fit, &err) != PW_OK) {
		printf("  calibrate: %s\n", err.msg);
		goto out;
	}
	measured = pw_measured_step(m);
	before = bench_predict(c.problem, &c);
	after = bench_predict(cal, &c);
	met = fabs(after / measured - 1) <= BENCH_CALIBRATED_MAX;
	printf("%-8s %-10.2f %-10.2f %-10.2f %-8.3f %-8.3f %-9.4f %s\n", family,
	    measured * 1e3, before * 1e3, after * 1e3, before / measured,
	    after / measured, fit.relative, met ? "yes" : "no");
	bench_reoptimize(cal);
out:
	bench_met += counted && met;
	pw_calibration_free(&fit);
	pw_problem_free(cal);
	pw_measured_free(m);
	bench_case_free(&c);
	fflush(stdout);
}

/* (2)'s cases on P devices, counted toward the anchor when COUNTED. */
static void
bench_calibrate_devices(int p, bool counted)
{
	struct pw_stage unit = { 0, 1, 1, 1, 1, 0.5, 0, 0 };
	int cores = pw_rt_host_cores();

	printf("(2) calibration: p=%d on %d core%s, m=8, workload %s, %d "
	    "iterations; ratio = predicted / measured; anchor: within 10%% "
	    "after%s\n", p, cores, cores == 1 ? "" : "s", BENCH_WORKLOAD,
	    BENCH_ITERATIONS, counted ? "" : " (a device per core: beside "
	    "the anchor, not counted)");
	printf("%-8s %-10s %-10s %-10s %-8s %-8s %-9s %s\n", "family",
	    "measured", "before", "after", "r.before", "r.after", "residual",
	    "met");
	printf("%-8s %-10s %-10s %-10s\n", "", "ms", "ms", "ms");
	bench_calibrate_one("1f1b", test_problem_unit(p, 8, 0, INFINITY),
	    counted);
	bench_calibrate_one("zb-h1", test_problem_unit(p, 8, 0, INFINITY),
	    counted);
	bench_calibrate_one("zb-v", test_problem_uniform(p, 2, 8, PW_PLACE_V,
	    &unit), counted);
	printf("\n");
}

static void
bench_calibrate(void)
{
	int cores = pw_rt_host_cores();

	bench_calibrate_devices(4, true);
	if (cores < 4)
		bench_calibrate_devices(cores, false);
}

int
main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "12";

	printf("bench_runtime: the runtime's targets of issue 16 on the CPU "
	    "backend; wall times, medians of repeated runs\n\n");
	if (strchr(only, '1') != NULL)
		bench_overhead();
	if (strchr(only, '2') != NULL)
		bench_calibrate();
	printf("%d of %d cases meet their anchor\n", bench_met, bench_cases);
	return 0;
}
