/*
 * bench_sim.c - simulator throughput.
 *
 * The anchor is the requirement that a 1,000,000-op schedule simulates in
 * well under a second; each row times pw_simulate (median of 7 runs) on a
 * family schedule of the given size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pipewright.h"

#define RUNS 7

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct pw_problem *
uniform(int devices, int microbatches)
{
	struct pw_problem *p = pw_problem_new(devices, devices, microbatches);
	int s;

	for (s = 0; s < devices; s++) {
		p->stages[s] = (struct pw_stage){ s, 1, 1, 1, 1, 0.5, 0, 0 };
	}
	pw_problem_set_comm(p, 0.05);
	return p;
}

static int
bench(const char *family, int devices, int microbatches)
{
	struct pw_problem *p = uniform(devices, microbatches);
	const struct pw_family *fam = pw_family_find(family);
	struct pw_schedule *s = NULL;
	struct pw_timing *t;
	struct pw_error err;
	double took[RUNS], start, median;
	size_t nops = 0;
	int i, rc = 1;

	if (fam == NULL || fam->build(p, &s, &err) != PW_OK) {
		fprintf(stderr, "bench_sim: %s: %s\n", family,
		    fam == NULL ? "no such family" : err.msg);
		goto out;
	}
	for (i = 0; i < s->ndevices; i++)
		nops += (size_t)s->device[i].len;
	for (i = 0; i < RUNS; i++) {
		start = now();
		if (pw_simulate(p, s, &t, &err) != PW_OK) {
			fprintf(stderr, "bench_sim: %s\n", err.msg);
			goto out;
		}
		took[i] = now() - start;
		pw_timing_free(t);
	}
	qsort(took, RUNS, sizeof took[0], cmp_double);
	median = took[RUNS / 2];
	/* Scale the 1 s anchor to this size: the anchor is 1e6 ops/s. */
	printf("%-8s %4d %6d %9zu %12.4f %12.4f %8.3f %12.0f\n", family,
	    devices, microbatches, nops, (double)nops / 1e6, median,
	    median / ((double)nops / 1e6), (double)nops / median);
	rc = 0;
out:
	pw_schedule_free(s);
	pw_problem_free(p);
	return rc;
}

int
main(void)
{
	int rc = 0;

	printf("simulator: median of %d runs; anchor = 1,000,000 ops in 1 s "
	    "(\"well under a second\")\n", RUNS);
	printf("%-8s %4s %6s %9s %12s %12s %8s %12s\n", "family", "p", "m",
	    "ops", "anchor(s)", "ours(s)", "ratio", "ops/s");
	rc |= bench("1f1b", 8, 1024);
	rc |= bench("zb-h1", 32, 2048);
	rc |= bench("zb-h1", 64, 5209);
	rc |= bench("zb-h2", 64, 5209);
	return rc;
}
