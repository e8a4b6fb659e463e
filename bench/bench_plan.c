/*
 * bench_plan.c - the interactive questions a front end asks of a plan.
 *
 * The anchor is a designer redrawing at 30 frames a second: an edit with
 * its re-time, its undo, the slack and the critical path each within one
 * frame (1/30 s), and the per-cell questions (the op on a device at an
 * instant, a device's memory at an instant) within a frame for a
 * 200-column timeline of 64 devices, 12,800 questions: 2.6 us each.  Each
 * row is the median of RUNS runs on a family schedule of the given size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "bench.h"
#include "plan.h"

#define RUNS		7
#define FRAME		(1.0 / 30)
#define CELLS		(200 * 64)
/* Instants asked per run of a per-cell question. */
#define QUESTIONS	100000

/* The questions timed, one row each. */
enum bench_what {
	BENCH_EDIT,		/* a move and its re-time */
	BENCH_UNDO,		/* the move's inverse and its re-time */
	BENCH_SLACK,		/* pw_slack */
	BENCH_CRITICAL,		/* pw_critical_path */
	BENCH_OP_AT,		/* pw_op_at, per question */
	BENCH_MEMORY_AT,	/* pw_memory_at, per question */
	BENCH_NWHAT
};

static const char *const bench_names[] = { "edit", "undo", "slack",
    "critical", "op_at", "memory_at" };

/* Seconds of one run of WHAT on PLAN (per question for the per-cell
 * ones); negative after saying why it failed.  SINK keeps the answers
 * from being optimized away. */
static double
bench_once(struct pw_plan *plan, enum bench_what what, uint64_t *seed,
    double *sink)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_schedule *s = pw_plan_timed(plan);
	const struct pw_timing *t = pw_plan_timing(plan);
	const struct pw_metrics *m = pw_plan_metrics(plan);
	struct pw_edit edit, undo;
	struct pw_critical *path;
	struct pw_error err;
	struct pw_op op;
	double start, took, *slack, at;
	size_t n;
	int i, d;

	/* The last op of device 0 one place earlier: a valid move whose
	 * re-time succeeds or deadlocks, either way a whole re-time.  The
	 * edits free the timed orders that S, T and M point into: those are
	 * read only by the other questions. */
	memset(&edit, 0, sizeof edit);
	edit.kind = PW_EDIT_MOVE;
	edit.op = s->device[0].ops[s->device[0].len - 1];
	edit.to = s->device[0].len - 2;
	if (what == BENCH_EDIT || what == BENCH_UNDO) {
		start = pw_now();
		if (pw_plan_apply(plan, &edit, &undo, &err) != PW_OK) {
			fprintf(stderr, "bench_plan: %s\n", err.msg);
			return -1;
		}
		took = pw_now() - start;
		start = pw_now();
		if (pw_plan_apply(plan, &undo, NULL, &err) != PW_OK) {
			fprintf(stderr, "bench_plan: undo: %s\n", err.msg);
			return -1;
		}
		return what == BENCH_EDIT ? took : pw_now() - start;
	}
	start = pw_now();
	switch (what) {
	case BENCH_SLACK:
		slack = pw_slack(p, s, t);
		*sink += slack[0];
		free(slack);
		break;
	case BENCH_CRITICAL:
		path = pw_critical_path(p, s, t, &n);
		*sink += (double)n;
		free(path);
		break;
	case BENCH_OP_AT:
	case BENCH_MEMORY_AT:
		for (i = 0; i < QUESTIONS; i++) {
			at = m->makespan * (double)(pw_splitmix64(seed) >> 11) *
			    0x1p-53;
			d = (int)(pw_splitmix64(seed) % (uint64_t)p->devices);
			if (what == BENCH_MEMORY_AT)
				*sink += pw_memory_at(m, d, at);
			else if (pw_op_at(p, s, t, d, at, &op))
				*sink += op.mb;
		}
		return (pw_now() - start) / QUESTIONS;
	default:
		break;
	}
	return pw_now() - start;
}

static int
bench(const char *family, int devices, int microbatches)
{
	struct pw_stage st = { 0, 1, 1, 1, 1, 0.5, 0, 0.05 };
	struct pw_problem *p = pw_problem_new(devices, devices, microbatches);
	struct pw_plan *plan = NULL;
	struct pw_error err;
	double took[RUNS], ours, anchor, sink = 0;
	uint64_t seed = 1;
	size_t nops = 0;
	int s, i, w;

	for (s = 0; s < devices; s++) {
		p->stages[s] = st;
		p->stages[s].device = s;
	}
	pw_problem_set_comm(p, 0.05);
	if (pw_plan_family(pw_family_find(family), p, &plan, &err) != PW_OK) {
		fprintf(stderr, "bench_plan: %s: %s\n", family, err.msg);
		pw_problem_free(p);
		return 1;
	}
	pw_problem_free(p);
	for (i = 0; i < devices; i++)
		nops += (size_t)pw_plan_timed(plan)->device[i].len;
	for (w = 0; w < BENCH_NWHAT; w++) {
		for (i = 0; i < RUNS; i++)
			if ((took[i] = bench_once(plan, (enum bench_what)w,
			    &seed, &sink)) < 0) {
				pw_plan_free(plan);
				return 1;
			}
		ours = bench_median(took, RUNS);
		anchor = w >= BENCH_OP_AT ? FRAME / CELLS : FRAME;
		printf("%-8s %-10s %4d %6d %9zu %12.3g %12.3g %8.3f\n", family,
		    bench_names[w], devices, microbatches, nops, anchor, ours,
		    ours / anchor);
	}
	pw_plan_free(plan);
	/* Never true: keeps the questions' answers alive. */
	return sink == -1;
}

int
main(void)
{
	int rc = 0;

	printf("plan questions: median of %d runs; anchor = one frame at 30 Hz "
	    "(%.4f s), a cell's question %d to a frame\n", RUNS, FRAME, CELLS);
	printf("%-8s %-10s %4s %6s %9s %12s %12s %8s\n", "family", "what", "p",
	    "m", "ops", "anchor(s)", "ours(s)", "ratio");
	rc |= bench("1f1b", 8, 1024);
	rc |= bench("zb-h1", 32, 2048);
	rc |= bench("zb-h1", 64, 5209);
	return rc;
}
