/*
 * test_runtime.c - the engine (pw_launch) on the in-process CPU backend:
 * every family and the optimizer's output compute what the sequential
 * computation does, with the predicted peaks, on a timeline the checker
 * accepts; faults, cancels and bad schedules end in one line, never a
 * hang.  Nothing here depends on how fast the machine is.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "pipewright.h"
#include "rt_int.h"
#include "runtime.h"
#include "solver.h"
#include "tap.h"
#include "testlib.h"

#define TEST_DEVICES	4
#define TEST_M		8

/* A problem of TEST_DEVICES devices, V stages each in PLACE, TEST_M
 * microbatches, unit times, with a half-duplex link shared by each pair
 * of devices (so that the offloading families apply and channels are
 * shared). */
static struct pw_problem *
test_base(int v, enum pw_placement place)
{
	const struct pw_stage unit = { .f = 1, .b = 1, .w = 1, .act = 1,
	    .hold = 0.5, .offload = 1, .comm = 0.1 };
	struct pw_problem *p = test_problem_uniform(TEST_DEVICES, v, TEST_M,
	    place, &unit);
	int d;

	pw_problem_set_link(p, 4, 4, 0, false);
	p->link.ngroups = TEST_DEVICES / 2;
	for (d = 0; d < TEST_DEVICES; d++)
		p->link.group[d] = d / 2;
	return p;
}

/* The workload's own problem of BASE (the caller frees it) and its
 * workload in *WORK. */
static struct pw_problem *
test_workload_problem(const struct pw_problem *base, struct pw_workload *work)
{
	struct pw_problem *wp;
	struct pw_error err;

	if (pw_workload_for(base, NULL, PW_RT_CPU, work, &err) != PW_OK) {
		tap_diag("workload: %s", err.msg);
		return NULL;
	}
	if ((wp = pw_workload_problem(base, work, INFINITY, &err)) == NULL) {
		tap_diag("workload problem: %s", err.msg);
		return NULL;
	}
	/* A transfer takes a quarter of an F, so that offloading pays. */
	wp->link.d2h = wp->link.h2d = 4 * wp->stages[0].offload;
	return wp;
}

struct test_count {
	int	calls;
	int	measured;
};

static void
test_progress(const struct pw_rt_progress *pr, void *arg)
{
	struct test_count *c = arg;

	c->calls++;
	if (!pr->warmup)
		c->measured++;
}

/* Launches SCHED on P with the reference and holds the run to it: the
 * gradients and the loss, every device's peak against the simulator's,
 * the measured timeline through the checker, the progress.  HOST_WIRE:
 * the hand-offs go through the sequenced transport on the host wire (the
 * NCCL path's order and matching), not the local mailboxes. */
static void
test_run(const char *name, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_workload *work,
    bool host_wire)
{
	char what[64];
	struct pw_rt_opts o;
	struct pw_rt_result r;
	struct pw_timing *t = NULL;
	struct pw_metrics *met;
	struct pw_timed_op *ops;
	struct pw_violations v = { 0 };
	struct test_count count = { 0, 0 };
	struct pw_error err;
	size_t n;
	int d, same = 0, nv;

	snprintf(what, sizeof what, "%s%s", name, host_wire ?
	    " on the host wire" : "");
	pw_rt_opts_init(&o);
	o.iterations = 2;
	o.warmup = 1;
	o.reference = true;
	o.host_wire = host_wire;
	o.progress = test_progress;
	o.progress_arg = &count;
	if (!tap_int(pw_launch(p, sched, work, &o, &r, &err), PW_OK, "%s: runs",
	    what)) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_ok(r.grad_error < 1e-5, "%s: weight gradients as the sequential "
	    "computation's (%.3g)", what, r.grad_error);
	tap_ok(r.loss_error < 1e-5, "%s: loss as the sequential computation's "
	    "(%.3g)", what, r.loss_error);
	tap_int(r.math, PW_RT_FP32, "%s: computed in fp32, the CPU's", what);
	tap_int(count.calls, 3, "%s: progress after each of the 3 iterations",
	    what);
	tap_int(count.measured, 2, "%s: 2 of them measured", what);
	if (pw_simulate(p, sched, &t, &err) == PW_OK) {
		met = pw_metrics_compute(p, sched, t);
		for (d = 0; d < p->devices; d++) {
			if (r.measured->peak[d] == met->device[d].peak)
				same++;
			else
				tap_diag("device %d: measured %.0f, predicted %.0f",
				    d, r.measured->peak[d], met->device[d].peak);
		}
		pw_metrics_free(met);
		pw_timing_free(t);
	}
	tap_int(same, p->devices, "%s: every device's measured peak is the "
	    "simulator's", what);
	ops = pw_measured_timed(p, sched, r.measured, &n);
	nv = ops != NULL ? pw_check_measured(p, ops, n, &v) : -1;
	if (!tap_int(nv, 0, "%s: the measured timeline passes the checker",
	    what) && nv > 0)
		tap_diag("%s", v.msg[0]);
	pw_violations_free(&v);
	free(ops);
	tap_int((long long)r.measured->nops, (long long)pw_schedule_nops(sched),
	    "%s: every op measured once", what);
	pw_rt_result_free(&r);
}

/* Sets every device's limit of P to SCHED's peak there: the run keeps
 * them, and its measured timeline must replay within them (a reload
 * recorded as starting before the offload it waited for had freed its
 * bytes broke this now and then). */
static void
test_limits_at_peaks(struct pw_problem *p, const struct pw_schedule *sched)
{
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	int d;

	if (pw_simulate(p, sched, &t, &err) != PW_OK)
		return;
	m = pw_metrics_compute(p, sched, t);
	for (d = 0; d < p->devices; d++)
		p->memory[d].limit = m->device[d].peak;
	pw_metrics_free(m);
	pw_timing_free(t);
}

/* Every family on the base its layout needs, each device's limit its
 * peak. */
static void
test_families(void)
{
	struct pw_problem *base[3], *wp[3], *used;
	struct pw_workload work[3];
	struct pw_schedule *sched;
	struct pw_error err;
	size_t i;
	int ran = 0, moved = 0, rc, k, c;

	memset(work, 0, sizeof work);
	base[PW_LAYOUT_SINGLE] = test_base(1, PW_PLACE_LOOP);
	base[PW_LAYOUT_LOOP] = test_base(2, PW_PLACE_LOOP);
	base[PW_LAYOUT_V] = test_base(2, PW_PLACE_V);
	for (k = 0; k < 3; k++)
		wp[k] = test_workload_problem(base[k], &work[k]);
	for (i = 0; i < pw_nfamilies; i++) {
		const struct pw_family *fam = &pw_families[i];

		k = fam->layout;
		if (wp[k] == NULL)
			continue;
		rc = pw_family_build(fam, wp[k], &used, &sched, &err);
		if (rc == PW_ERR_NOT_APPLICABLE) {
			tap_diag("%s does not apply: %s", fam->name, err.msg);
			continue;
		}
		if (!tap_int(rc, PW_OK, "%s: builds", fam->name)) {
			tap_diag("%s", err.msg);
			continue;
		}
		test_limits_at_peaks(used, sched);
		test_run(fam->name, used, sched, &work[k], false);
		test_run(fam->name, used, sched, &work[k], true);
		ran++;
		for (c = 0; c < sched->nchannels; c++)
			if (sched->channel[c].len > 0) {
				moved++;
				break;
			}
		pw_schedule_free(sched);
		pw_problem_free(used);
	}
	tap_int(ran, (long long)pw_nfamilies, "every family ran");
	/* po-h, po-f and po-sel move activations: the copy workers, the
	 * shared channels and the memory order of transfers are exercised. */
	tap_int(moved, 3, "three families offload");
	for (k = 0; k < 3; k++) {
		pw_problem_free(base[k]);
		pw_problem_free(wp[k]);
		pw_workload_clear(&work[k]);
	}
}

/* The optimizer's output, its search cut by an iteration limit. */
static void
test_optimizer(void)
{
	struct pw_problem *base = test_base(1, PW_PLACE_LOOP), *wp;
	struct pw_workload work = { 0 };
	struct pw_solve_opts so;
	struct pw_solve_result sr;
	struct pw_error err;

	wp = test_workload_problem(base, &work);
	pw_solve_opts_init(&so);
	so.iteration_limit = 2000;
	if (wp != NULL && tap_int(pw_solve(wp, &so, &sr, &err), PW_OK,
	    "the optimizer solves the workload's problem")) {
		test_run("the optimizer's schedule", wp, sr.schedule, &work, true);
		pw_solve_result_free(&sr);
	} else if (wp != NULL)
		tap_diag("%s", err.msg);
	pw_problem_free(wp);
	pw_problem_free(base);
	pw_workload_clear(&work);
}

/* 1F1B on the single-stage base: *WP and *WORK the caller's. */
static struct pw_schedule *
test_1f1b(struct pw_problem **wp, struct pw_workload *work)
{
	struct pw_problem *base = test_base(1, PW_PLACE_LOOP);
	struct pw_schedule *sched = NULL;
	struct pw_error err;

	*wp = test_workload_problem(base, work);
	pw_problem_free(base);
	if (*wp != NULL &&
	    test_registered("1f1b")->build(*wp, &sched, &err) != PW_OK)
		tap_diag("1f1b: %s", err.msg);
	return sched;
}

/* Whether the last test_launch's error began in its process. */
static bool test_originated;
/* Whether test_launch hands tensors over the host wire. */
static bool test_on_wire;

/* Launches with FAIL_AT and CANCEL; the return code, the message in
 * ERR, pw_rt_result.originated in test_originated. */
static int
test_launch(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_workload *work, const char *fail_at, atomic_int *cancel,
    struct pw_error *err)
{
	struct pw_rt_opts o;
	struct pw_rt_result r;
	int rc;

	pw_rt_opts_init(&o);
	o.fail_at = fail_at;
	o.cancel = cancel;
	o.host_wire = test_on_wire;
	rc = pw_launch(p, sched, work, &o, &r, err);
	test_originated = r.originated;
	pw_rt_result_free(&r);
	return rc;
}

static void
test_faults(void)
{
	struct pw_problem *wp, *tight;
	struct pw_workload work = { 0 };
	struct pw_schedule *sched = test_1f1b(&wp, &work), *broken;
	struct pw_timing *t;
	struct pw_metrics *met;
	struct pw_error err, why;
	struct pw_op op;
	atomic_int cancel = 1;
	char want[sizeof err.msg + 32];
	char b1[32], b2[32];
	int i;

	if (sched == NULL) {
		tap_ok(false, "1f1b for the faults");
		return;
	}
	/* A failure injected at one op of one device stops them all. */
	tap_int(test_launch(wp, sched, &work, "2:B(2,3)", NULL, &err),
	    PW_ERR_RUNTIME, "an injected failure fails the run");
	tap_str(err.msg, "device 2, BW(2,3): injected failure "
	    "(PIPEWRIGHT_FAIL_AT)", "it names the device and the op (B of a "
	    "fused backward is its BW)");
	tap_ok(test_originated, "the failure began in this process: the "
	    "program says it");
	tap_int(test_launch(wp, sched, &work, "0:F(0,0)", NULL, &err),
	    PW_ERR_RUNTIME, "a failure at the first op fails the run");
	tap_str(err.msg, "device 0, F(0,0): injected failure "
	    "(PIPEWRIGHT_FAIL_AT)", "it names device 0's F(0,0)");

	/* A cancel set before the start stops it before the first weights
	 * are made (a large workload takes seconds a layer to fill). */
	tap_int(test_launch(wp, sched, &work, NULL, &cancel, &err),
	    PW_ERR_CANCELLED, "a cancel stops the run");
	tap_str(err.msg, "cancelled while stage 0's weights were made",
	    "it says where");
	tap_ok(!test_originated, "a cancel is no process's error");

	/* The same on the host wire: the sequenced transport's threads end
	 * with the run, whichever device fails. */
	test_on_wire = true;
	for (i = 0; i < TEST_DEVICES; i++) {
		snprintf(want, sizeof want, "%d:F(%d,5)", i, i);
		tap_int(test_launch(wp, sched, &work, want, NULL, &err),
		    PW_ERR_RUNTIME, "on the host wire, a failure at %s fails "
		    "the run", want);
		snprintf(want, sizeof want, "device %d, F(%d,5): injected "
		    "failure (PIPEWRIGHT_FAIL_AT)", i, i);
		tap_str(err.msg, want, "it names device %d and its op", i);
	}
	tap_int(test_launch(wp, sched, &work, NULL, &cancel, &err),
	    PW_ERR_CANCELLED, "on the host wire, a cancel stops the run");
	test_on_wire = false;

	/* What PIPEWRIGHT_FAIL_AT may say. */
	tap_int(test_launch(wp, sched, &work, "B(0,3)", NULL, &err),
	    PW_ERR_INPUT, "a failure without a device is refused");
	tap_str(err.msg, "PIPEWRIGHT_FAIL_AT=\"B(0,3)\": must be DEVICE:OP, "
	    "as 0:F(0,0)", "it names the variable and the value, with an "
	    "example the schedule has");
	tap_int(test_launch(wp, sched, &work, "0:F(0,0)", NULL, &err),
	    PW_ERR_RUNTIME, "the example is taken");
	tap_int(test_launch(wp, sched, &work, "7:B(0,3)", NULL, &err),
	    PW_ERR_INPUT, "a device out of range is refused");
	tap_str(err.msg, "PIPEWRIGHT_FAIL_AT=\"7:B(0,3)\": device \"7\": must "
	    "be in 0..3", "it names the device");
	tap_int(test_launch(wp, sched, &work, "1:B(0,3)", NULL, &err),
	    PW_ERR_INPUT, "an op of another device is refused");
	tap_str(err.msg, "PIPEWRIGHT_FAIL_AT=\"1:B(0,3)\": BW(0,3) runs on "
	    "device 0, not device 1", "it says where the op runs");
	tap_int(test_launch(wp, sched, &work, "0:OFFLOAD(0,3)", NULL, &err),
	    PW_ERR_INPUT, "an op the schedule does not have is refused");
	tap_str(err.msg, "PIPEWRIGHT_FAIL_AT=\"0:OFFLOAD(0,3)\": OFFLOAD(0,3) "
	    "is not in the schedule", "it says so");
	tap_int(test_launch(wp, sched, &work, "1:Q(0,3)", NULL, &err),
	    PW_ERR_INPUT, "an unknown op is refused");
	tap_ok(strncmp(err.msg, "PIPEWRIGHT_FAIL_AT=\"1:Q(0,3)\": ", 31) == 0,
	    "it names the value: %s", err.msg);

	/* A limit below the predicted peak. */
	tight = pw_problem_copy(wp);
	if (pw_simulate(wp, sched, &t, &why) == PW_OK) {
		met = pw_metrics_compute(wp, sched, t);
		tight->memory[1].limit = met->device[1].peak - 1;
		snprintf(want, sizeof want, "refused: device 1's "
		    "predicted peak of %s exceeds its limit of %s by 1 B",
		    pw_fmt_bytes(b1, sizeof b1, met->device[1].peak),
		    pw_fmt_bytes(b2, sizeof b2, met->device[1].peak - 1));
		pw_metrics_free(met);
		pw_timing_free(t);
	}
	tap_int(test_launch(tight, sched, &work, NULL, NULL, &err),
	    PW_ERR_INPUT, "a schedule over a limit is refused");
	tap_str(err.msg, want, "it names the device, the peak and the limit");
	pw_problem_free(tight);

	/* A problem that halves what the workload's activations really
	 * take: the pre-check passes at its predicted peak, the arena then
	 * refuses an F during the run, and every worker stops. */
	tight = pw_problem_copy(wp);
	for (i = 0; i < tight->nstages; i++) {
		tight->stages[i].act /= 2;
		tight->stages[i].hold /= 2;
		tight->stages[i].offload /= 2;
	}
	if (pw_simulate(tight, sched, &t, &why) == PW_OK) {
		met = pw_metrics_compute(tight, sched, t);
		tight->memory[1].limit = met->device[1].peak;
		pw_metrics_free(met);
		pw_timing_free(t);
	}
	tap_int(test_launch(tight, sched, &work, NULL, NULL, &err),
	    PW_ERR_RUNTIME, "an allocation the arena refuses fails the run");
	tap_str(err.msg, "device 1, F(1,1): out of memory: 72 KiB asked, "
	    "40 KiB of the limit of 408 KiB left", "in one line naming the "
	    "device, the op and the bytes");
	tap_ok(test_originated, "the refusal began in this process");
	pw_problem_free(tight);

	/* Device 1's first backward before its first forward: a deadlock. */
	broken = pw_schedule_copy(sched);
	for (i = 0; i < broken->device[1].len; i++)
		if (broken->device[1].ops[i].kind != PW_F)
			break;
	op = broken->device[1].ops[0];
	broken->device[1].ops[0] = broken->device[1].ops[i];
	broken->device[1].ops[i] = op;
	if (pw_simulate(wp, broken, &t, &why) == PW_OK)
		pw_timing_free(t);
	snprintf(want, sizeof want, "refused: %s", why.msg);
	tap_int(test_launch(wp, broken, &work, NULL, NULL, &err), PW_ERR_INPUT,
	    "a deadlocking schedule is refused");
	tap_str(err.msg, want, "it names the blocked ops");
	/* An op missing. */
	broken->device[1].len--;
	if (pw_simulate(wp, broken, &t, &why) == PW_OK)
		pw_timing_free(t);
	snprintf(want, sizeof want, "refused: %s", why.msg);
	tap_int(test_launch(wp, broken, &work, NULL, NULL, &err), PW_ERR_INPUT,
	    "a schedule missing an op is refused");
	tap_str(err.msg, want, "it names the op");
	pw_schedule_free(broken);

	pw_schedule_free(sched);
	pw_problem_free(wp);
	pw_workload_clear(&work);
}

/* The last stage's ops cost nothing: its F and B of a microbatch share
 * an instant, where the simulator frees first.  The engine's order is
 * causal instead (F's allocation, then B's free), so the run does not
 * deadlock, computes what the sequential computation does, and the last
 * device's peak is the simulator's plus that F's allocation. */
static void
test_zero_cost(void)
{
	struct pw_problem *base = test_base(1, PW_PLACE_LOOP), *wp;
	struct pw_workload work = { 0 };
	struct pw_schedule *sched = NULL;
	struct pw_timing *t = NULL;
	struct pw_metrics *met = NULL;
	struct pw_rt_opts o;
	struct pw_rt_result r;
	struct pw_error err;
	struct pw_op f = { PW_F, TEST_DEVICES - 1, 0 };
	int last = TEST_DEVICES - 1, d, same = 0;

	wp = test_workload_problem(base, &work);
	pw_problem_free(base);
	if (wp == NULL)
		return;
	wp->stages[last].f = wp->stages[last].b = wp->stages[last].w = 0;
	if (test_registered("1f1b")->build(wp, &sched, &err) != PW_OK ||
	    pw_simulate(wp, sched, &t, &err) != PW_OK) {
		tap_ok(false, "zero-cost last stage: 1f1b: %s", err.msg);
		goto out;
	}
	met = pw_metrics_compute(wp, sched, t);
	pw_rt_opts_init(&o);
	o.iterations = 1;
	o.reference = true;
	if (!tap_int(pw_launch(wp, sched, &work, &o, &r, &err), PW_OK,
	    "zero-cost last stage: runs")) {
		tap_diag("%s", err.msg);
		goto out;
	}
	tap_ok(r.grad_error < 1e-5, "zero-cost last stage: the sequential "
	    "computation's gradients (%.3g)", r.grad_error);
	for (d = 0; d < last; d++)
		same += r.measured->peak[d] == met->device[d].peak;
	tap_int(same, last, "zero-cost last stage: the other devices' peaks "
	    "are the simulator's");
	tap_ok(r.measured->peak[last] == met->device[last].peak +
	    pw_op_memory(wp, f).alloc, "zero-cost last stage: its device's "
	    "peak is the simulator's plus an F's allocation (%.0f, %.0f)",
	    r.measured->peak[last], met->device[last].peak);
	pw_rt_result_free(&r);
out:
	pw_metrics_free(met);
	pw_timing_free(t);
	pw_schedule_free(sched);
	pw_problem_free(wp);
	pw_workload_clear(&work);
}

/* A deep model trains: W2 scaled by the model's layers keeps the
 * residual stream bounded (at 1/sqrt(ffn) alone 24 layers of the default
 * shape gave a loss of 3138, then NaN, which the launch reported as an
 * internal error). */
static void
test_deep(void)
{
	struct pw_problem *base = test_base(1, PW_PLACE_LOOP), *wp = NULL;
	struct pw_workload work = { 0 };
	struct pw_schedule *sched = NULL;
	struct pw_rt_opts o;
	struct pw_rt_result r;
	struct pw_error err;
	int k, finite = 0;

	if (pw_workload_parse("layers=24", NULL, base->nstages, &work,
	    &err) != PW_OK ||
	    (wp = pw_workload_problem(base, &work, INFINITY, &err)) == NULL ||
	    test_registered("1f1b")->build(wp, &sched, &err) != PW_OK) {
		tap_ok(false, "24 layers a stage: %s", err.msg);
		goto out;
	}
	pw_rt_opts_init(&o);
	o.iterations = 4;
	o.reference = true;
	if (!tap_int(pw_launch(wp, sched, &work, &o, &r, &err), PW_OK,
	    "24 layers a stage, 96 in all: runs")) {
		tap_diag("%s", err.msg);
		goto out;
	}
	for (k = 0; k < o.iterations; k++)
		finite += isfinite(r.measured->loss[k]) &&
		    r.measured->loss[k] < 1;
	tap_int(finite, o.iterations, "...every iteration's loss below 1 "
	    "(the last %.4f)", r.measured->loss[o.iterations - 1]);
	tap_ok(r.grad_error < 1e-5, "...the sequential computation's "
	    "gradients (%.3g)", r.grad_error);
	pw_rt_result_free(&r);
out:
	pw_schedule_free(sched);
	pw_problem_free(wp);
	pw_problem_free(base);
	pw_workload_clear(&work);
}

/* Iterations beyond PW_MAX_ITERATIONS, and records beyond the budget,
 * are refused before anything runs. */
static void
test_iterations(void)
{
	const struct pw_stage unit = { .f = 1, .b = 1, .w = 1, .act = 1 };
	struct pw_problem *base = test_problem_uniform(16, 1, 256,
	    PW_PLACE_LOOP, &unit), *wp;
	struct pw_workload work = { 0 };
	struct pw_schedule *sched = NULL;
	struct pw_rt_opts o;
	struct pw_rt_result r;
	struct pw_error err;
	char want[sizeof err.msg];

	pw_rt_opts_init(&o);
	o.iterations = PW_MAX_ITERATIONS + 1;
	tap_int(pw_launch(base, NULL, &work, &o, &r, &err), PW_ERR_INPUT,
	    "iterations beyond PW_MAX_ITERATIONS are refused");
	snprintf(want, sizeof want, "iterations %d: must be in 1..%d",
	    PW_MAX_ITERATIONS + 1, PW_MAX_ITERATIONS);
	tap_str(err.msg, want, "it names the iterations and the range");

	wp = test_workload_problem(base, &work);
	if (wp == NULL ||
	    test_registered("1f1b")->build(wp, &sched, &err) != PW_OK) {
		tap_ok(false, "16 x 256 1f1b: %s", err.msg);
		goto out;
	}
	o.iterations = PW_MAX_ITERATIONS;
	tap_int(pw_launch(wp, sched, &work, &o, &r, &err), PW_ERR_INPUT,
	    "the records of 100000 iterations of 8192 ops are refused");
	tap_str(err.msg, "iterations 100000: the records of 8192 ops over "
	    "100000 iterations (18.31 GiB) exceed the runtime's budget "
	    "of 1 GiB; at most 5461 iterations of this schedule",
	    "it names the iterations, the bytes and the budget");
out:
	pw_schedule_free(sched);
	pw_problem_free(wp);
	pw_problem_free(base);
	pw_workload_clear(&work);
}

/* On the CPU the devices share the host's memory: a workload of 8 TB
 * weights per stage is refused before anything is taken. */
static void
test_host_memory(void)
{
	struct pw_problem *base = test_base(1, PW_PLACE_LOOP), *wp;
	struct pw_workload work = { 0 };
	struct pw_schedule *sched = NULL;
	struct pw_error err;
	static const char want[] = "refused: the predicted peaks of the 4 "
	    "devices this process runs on the CPU add up to ";

	if (pw_workload_parse("hidden=1048576,ffn=1048576,tokens=1,layers=1",
	    NULL, base->nstages, &work, &err) != PW_OK ||
	    (wp = pw_workload_problem(base, &work, INFINITY, &err)) == NULL) {
		tap_ok(false, "an 8 TB workload: %s", err.msg);
		pw_problem_free(base);
		pw_workload_clear(&work);
		return;
	}
	if (test_registered("1f1b")->build(wp, &sched, &err) != PW_OK)
		tap_diag("1f1b: %s", err.msg);
	tap_int(test_launch(wp, sched, &work, NULL, NULL, &err), PW_ERR_INPUT,
	    "peaks beyond the host's memory are refused");
	tap_ok(strncmp(err.msg, want, sizeof want - 1) == 0 &&
	    strstr(err.msg, "iB of host memory available") != NULL,
	    "it names the bytes: %s", err.msg);
	pw_schedule_free(sched);
	pw_problem_free(wp);
	pw_problem_free(base);
	pw_workload_clear(&work);
}

static void
test_names(void)
{
	enum pw_rt_backend b;
	enum pw_rt_transport t;
	struct pw_rt_opts o;
	char why[64];

	tap_int(pw_rt_backend_parse("CPU", &b), PW_OK, "cpu parses");
	tap_str(pw_rt_backend_name(b), "cpu", "and names itself");
	tap_int(pw_rt_backend_parse("tpu", &b), PW_ERR_INPUT, "tpu does not");
	tap_int(pw_rt_transport_parse("mpi", &t), PW_OK, "mpi parses");
	tap_str(pw_rt_transport_name(t), "mpi", "and names itself");
	tap_ok(pw_rt_backend_available(PW_RT_CPU, why, sizeof why),
	    "the CPU backend is always there");
	/* CUDA's availability and its refusals: tests/test_cuda. */
	tap_int(pw_rt_backend_default(), pw_rt_backend_available(PW_RT_CUDA,
	    NULL, 0) ? PW_RT_CUDA : PW_RT_CPU,
	    "the default is CUDA where it can run, else the CPU");
	pw_rt_opts_init(&o);
	tap_int(o.iterations, 5, "default: 5 iterations");
	tap_int(o.warmup, 1, "default: 1 warm-up");
	tap_int((long long)o.seed, 1, "default: seed 1");
}

/* The pinned pool's size: the most offloaded bytes waiting at once, by
 * hand on four transfers, then on po-f's schedule against every
 * instant an offload starts. */
static void
test_host_peak(void)
{
	const struct pw_timed_op hand[] = {
		{ { PW_OFFLOAD, 0, 0 }, 0, 0, 1, 10, false, { { 0 }, 0 } },
		{ { PW_OFFLOAD, 0, 1 }, 0, 2, 3, 20, false, { { 0 }, 0 } },
		{ { PW_RELOAD, 0, 0 }, 0, 5, 6, 10, false, { { 0 }, 0 } },
		{ { PW_OFFLOAD, 0, 2 }, 0, 6, 7, 5, false, { { 0 }, 0 } },
		{ { PW_RELOAD, 0, 1 }, 0, 8, 9, 20, false, { { 0 }, 0 } },
		{ { PW_OFFLOAD, 1, 0 }, 1, 0, 1, 99, false, { { 0 }, 0 } },
	};
	struct pw_problem *base = test_base(2, PW_PLACE_LOOP), *wp, *used;
	struct pw_workload work = { 0 };
	struct pw_schedule *sched = NULL;
	struct pw_timing *t = NULL;
	struct pw_timed_op *ops;
	struct pw_error err;
	size_t n, i, j;
	int d, same = 0;

	tap_ok(pw_rt_host_peak(hand, 6, 0) == 35, "by hand: 10 + 20 held, "
	    "and an offload starting as a reload ends counts first: 35");
	tap_ok(pw_rt_host_peak(hand, 6, 1) == 99, "another device's own: 99");
	tap_ok(pw_rt_host_peak(hand, 6, 2) == 0, "a device that offloads "
	    "nothing: 0");
	wp = test_workload_problem(base, &work);
	if (wp == NULL || pw_family_build(test_registered("po-f"), wp, &used,
	    &sched, &err) != PW_OK || pw_simulate(used, sched, &t,
	    &err) != PW_OK) {
		tap_ok(false, "po-f for the pinned pool: %s", err.msg);
		goto out;
	}
	ops = pw_timed_ops(used, sched, t, &n);
	for (d = 0; d < used->devices; d++) {
		double most = 0, held;

		for (i = 0; i < n; i++) {
			if (ops[i].device != d || ops[i].op.kind != PW_OFFLOAD)
				continue;
			for (held = 0, j = 0; j < n; j++) {
				const struct pw_timed_op *r = &ops[j], *o;
				size_t k;

				if (r->device != d || r->op.kind != PW_OFFLOAD)
					continue;
				for (o = NULL, k = 0; k < n; k++)
					if (ops[k].op.kind == PW_RELOAD &&
					    ops[k].op.stage == r->op.stage &&
					    ops[k].op.mb == r->op.mb)
						o = &ops[k];
				if (r->start <= ops[i].start && (o == NULL ||
				    o->end >= ops[i].start))
					held += r->bytes;
			}
			most = fmax(most, held);
		}
		same += pw_rt_host_peak(ops, n, d) == most;
	}
	tap_int(same, used->devices, "po-f: every device's pinned peak is "
	    "the most held at an offload's start");
	free(ops);
	pw_problem_free(used);
out:
	pw_timing_free(t);
	pw_schedule_free(sched);
	pw_problem_free(wp);
	pw_problem_free(base);
	pw_workload_clear(&work);
}

/* A stand-in for MPI's rank 0: counts the broadcasts and keeps the
 * length of each. */
struct test_share_net {
	int	calls;
	size_t	lens[2];
};

static int
test_share_bcast(struct pw_rt_net *net, char **buf, size_t *len,
    struct pw_error *err)
{
	struct test_share_net *seen = net->ctx;

	(void)buf;
	(void)err;
	if (seen->calls < 2)
		seen->lens[seen->calls] = *len;
	seen->calls++;
	return PW_OK;
}

/* Rank 0 takes part in both broadcasts, sending nothing, when it cannot
 * write the schedule (here a name that is not UTF-8), and returns the
 * writer's error; with a good schedule it sends both and returns OK. */
static void
test_share(void)
{
	struct test_share_net seen = { 0 };
	struct pw_rt_net net = { .kind = PW_RT_MPI, .rank = 0, .size = 2,
	    .ctx = &seen, .bcast = test_share_bcast };
	struct pw_workload work = { 0 }, got = { 0 };
	struct pw_problem *wp, *op = NULL;
	struct pw_schedule *sched = test_1f1b(&wp, &work), *os = NULL;
	struct pw_timing *t = NULL;
	struct pw_error err;
	int rc;

	if (sched == NULL || pw_simulate(wp, sched, &t, &err) != PW_OK) {
		tap_ok(false, "share: a schedule to send");
		goto out;
	}
	rc = pw_engine_share(&net, false, wp, sched, t, &work, &op, &os,
	    &got, &err);
	tap_ok(rc == PW_OK && seen.calls == 2 && seen.lens[0] > 0 &&
	    seen.lens[1] > 0, "share: rank 0 sends the schedule and the "
	    "workload");
	free(wp->name);
	wp->name = pw_xstrdup("bad \xff name");
	seen.calls = 0;
	rc = pw_engine_share(&net, false, wp, sched, t, &work, &op, &os,
	    &got, &err);
	tap_ok(rc != PW_OK, "share: a schedule rank 0 cannot write fails "
	    "there");
	tap_ok(strstr(err.msg, "UTF-8") != NULL, "share: the writer's error "
	    "is said (%s)", err.msg);
	tap_ok(seen.calls == 2 && seen.lens[0] == 0 && seen.lens[1] == 0,
	    "share: both broadcasts still go, empty, so the others end");
out:
	pw_timing_free(t);
	pw_schedule_free(sched);
	pw_problem_free(wp);
	pw_workload_clear(&work);
}

int
main(void)
{
	test_share();
	test_host_peak();
	test_names();
	test_faults();
	test_deep();
	test_zero_cost();
	test_iterations();
	test_host_memory();
	test_families();
	test_optimizer();
	return tap_done();
}
