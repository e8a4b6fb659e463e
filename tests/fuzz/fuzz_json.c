/*
 * fuzz_json.c - libFuzzer target: the bytes as a problem or schedule file,
 * through everything that works on what a file holds.  A schedule file's
 * stated ops go to the checker, its orders to the simulator, the metrics,
 * every view and exporter and the writer; a small problem file goes
 * through every family the same way, and through compare.
 *
 * Two oracles beyond the sanitizers: on a schedule the simulator timed,
 * the independent checker finds a violation exactly when the metrics
 * find a device over its limit (families may break limits; nothing else
 * may be wrong); and a family's schedule always times.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipewright.h"
#include "plan.h"
#include "fuzz.h"

/* Families on problems up to this many (stage, microbatch) pairs: enough
 * for every rule to branch, small enough for hundreds of runs a second
 * (at 256 the default problem's families and their splits again took
 * 0.3 s a run, and the fuzzer made 66 runs a second). */
#define FUZZ_FAMILY_PAIRS	64

static FILE *fuzz_sink;

/* Sends PLAN through every view, exporter and the writer; a timed
 * schedule the checker refuses is a bug. */
static void
fuzz_views(const struct pw_plan *plan)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_schedule *sched = pw_plan_schedule(plan);
	const struct pw_timing *timing = pw_plan_timing(plan);
	const struct pw_metrics *metrics = pw_plan_metrics(plan);
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_timed_op *ops;
	struct pw_error err;
	size_t i, n;

	pw_show(fuzz_sink, p, sched, timing, metrics, 100);
	pw_metrics_print(fuzz_sink, p, metrics);
	pw_json_print(fuzz_sink, pw_metrics_json(p, metrics));
	for (i = 0; i < pw_nexport_formats; i++)
		pw_export_formats[i].write(fuzz_sink, p, sched, timing,
		    metrics, NULL, &err);
	pw_schedule_write("/dev/null", p, sched, timing, &err);
	ops = pw_timed_ops(p, sched, timing, &n);
	if ((pw_check(p, ops, n, &v) == 0) != metrics->feasible) {
		fprintf(stderr, "fuzz_json: the checker and the metrics "
		    "disagree on a simulated schedule: %s\n", v.n > 0 ?
		    v.msg[0] : "no violation, yet a device is over its limit");
		abort();
	}
	pw_violations_free(&v);
	free(ops);
}

/* Every family's schedule of a small problem, and the comparison. */
static void
fuzz_families(const struct pw_problem *p)
{
	struct pw_compare_row *rows;
	struct pw_plan *plan;
	struct pw_error err;
	size_t i;
	int rc;

	if ((size_t)p->nstages * (size_t)p->microbatches > FUZZ_FAMILY_PAIRS)
		return;
	for (i = 0; i < pw_nfamilies; i++) {
		rc = pw_plan_family(&pw_families[i], p, &plan, &err);
		if (rc == PW_ERR_INTERNAL) {
			fprintf(stderr, "fuzz_json: %s's schedule does not "
			    "time: %s\n", pw_families[i].name, err.msg);
			abort();
		}
		if (rc != PW_OK)
			continue;
		fuzz_views(plan);
		pw_plan_free(plan);
	}
	/* Every order and form of the comparison, the CSV's quoting of
	 * each reason among them. */
	rows = pw_compare_rows(p, NULL, NULL);
	for (i = 0; i < PW_COMPARE_NSORTS; i++)
		pw_compare_rows_print(fuzz_sink, p, rows,
		    (enum pw_compare_sort)i, (enum pw_compare_form)(i % 3));
	pw_compare_rows_free(rows);
}

/* A schedule file's measured run, when it has one: its timeline through
 * the checker and the run written back. */
static void
fuzz_measured(const char *path, const struct pw_plan *plan)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_schedule *sched = pw_plan_schedule(plan);
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_measured *m;
	struct pw_timed_op *ops;
	struct pw_error err;
	size_t n;

	if (pw_measured_read(path, &m, &err) != PW_OK || m == NULL)
		return;
	ops = pw_measured_timed(p, sched, m, &n);
	pw_check_measured(p, ops, n, &v);
	pw_violations_free(&v);
	free(ops);
	pw_schedule_write_with("/dev/null", p, sched,
	    pw_plan_timing(plan), NULL, 0, m, &err);
	pw_measured_free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_problem *p = NULL;
	struct pw_schedule *sched;
	struct pw_plan *plan;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	const char *path;
	char *family = NULL;
	size_t nops = 0;

	if (fuzz_sink == NULL && (fuzz_sink = fopen("/dev/null", "w")) == NULL)
		abort();
	path = fuzz_input_file(data, size, ".json");
	if (pw_file_read(path, &p, &ops, &nops, &family, &err) != PW_OK)
		return 0;
	pw_problem_write("/dev/null", p, &err);
	if (ops != NULL) {
		pw_check(p, ops, nops, &v);
		pw_violations_free(&v);
		if (pw_schedule_from_timed(p, ops, nops, &sched, &err) ==
		    PW_OK) {
			/* The views title the plan with the file's family. */
			sched->family = family;
			family = NULL;
			if (pw_plan_new(pw_problem_copy(p), sched, &plan,
			    &err) == PW_OK) {
				fuzz_views(plan);
				fuzz_measured(path, plan);
				pw_plan_free(plan);
			}
		}
	} else
		fuzz_families(p);
	free(family);
	free(ops);
	pw_problem_free(p);
	return 0;
}
