/*
 * fuzz_json.c - libFuzzer target: the bytes as a problem or schedule file,
 * through everything that works on what a file holds.  A schedule file's
 * stated ops go to the checker, its orders to the simulator, the metrics,
 * every view and exporter and the writer; a small problem file goes
 * through every family the same way, and through compare.
 *
 * One oracle beyond the sanitizers: on a schedule the simulator timed,
 * the independent checker finds a violation exactly when the metrics
 * find a device over its limit (families may break limits; nothing else
 * may be wrong).
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipewright.h"
#include "fuzz.h"

/* Families on problems up to this many (stage, microbatch) pairs: enough
 * for every rule to branch, small enough for hundreds of runs a second
 * (at 256 the default problem's families and their splits again took
 * 0.3 s a run, and the fuzzer made 66 runs a second). */
#define FUZZ_FAMILY_PAIRS	64

static FILE *fuzz_sink;

/* Simulates SCHED and sends the result through every view, exporter and
 * the writer; a simulated schedule the checker refuses is a bug. */
static void
fuzz_views(const struct pw_problem *p, const struct pw_schedule *sched)
{
	struct pw_timing *timing;
	struct pw_metrics *metrics;
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_timed_op *ops;
	struct pw_error err;
	size_t i, n;

	if (pw_simulate(p, sched, &timing, &err) != PW_OK)
		return;
	metrics = pw_metrics_compute(p, sched, timing);
	pw_show(fuzz_sink, p, sched, timing, metrics, 100);
	pw_metrics_print(fuzz_sink, p, metrics);
	pw_metrics_print_json(fuzz_sink, p, metrics);
	for (i = 0; i < pw_nexport_formats; i++)
		pw_export_formats[i].write(fuzz_sink, p, sched, timing,
		    metrics, &err);
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
	pw_metrics_free(metrics);
	pw_timing_free(timing);
}

/* Every family's schedule of a small problem, and the comparison. */
static void
fuzz_families(const struct pw_problem *p)
{
	struct pw_problem *used;
	struct pw_schedule *sched;
	struct pw_error err;
	size_t i;

	if ((size_t)p->nstages * (size_t)p->microbatches > FUZZ_FAMILY_PAIRS)
		return;
	for (i = 0; i < pw_nfamilies; i++) {
		if (pw_family_build(&pw_families[i], p, &used, &sched,
		    &err) != PW_OK)
			continue;
		fuzz_views(used, sched);
		pw_schedule_free(sched);
		pw_problem_free(used);
	}
	pw_compare_print(fuzz_sink, p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_problem *p = NULL;
	struct pw_schedule *sched;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	size_t nops = 0;

	if (fuzz_sink == NULL && (fuzz_sink = fopen("/dev/null", "w")) == NULL)
		abort();
	if (pw_file_read(fuzz_input_file(data, size, ".json"), &p, &ops,
	    &nops, &err) != PW_OK)
		return 0;
	pw_problem_write("/dev/null", p, &err);
	if (ops != NULL) {
		pw_check(p, ops, nops, &v);
		pw_violations_free(&v);
		if (pw_schedule_from_timed(p, ops, nops, &sched, &err) ==
		    PW_OK) {
			fuzz_views(p, sched);
			pw_schedule_free(sched);
		}
	} else
		fuzz_families(p);
	free(ops);
	pw_problem_free(p);
	return 0;
}
