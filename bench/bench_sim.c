/*
 * bench_sim.c - simulator and checker throughput, and how the offload
 * planner's families scale.
 *
 * The anchor is the requirement that a 1,000,000-op schedule simulates in
 * well under a second; each row times pw_simulate and pw_check (median of
 * 7 runs each) on a family schedule of the given size.
 *
 * The offloading families plan every activation's transfers; po-sel
 * plans its layout once for each number of chunks offloaded and shaves
 * each device's peaks one activation at a time, po-auto plans a layout
 * some 25 times over while it searches its group size.
 * Their anchor is linear growth in the microbatches from the smallest
 * row (the planner's work per activation should not grow with the
 * schedule's length), on the case that once took 81 s to start a 5 s
 * solve: Llama-3 70B over 16 H200 with 4 chunks each and the PCIe link;
 * and on one whose link cannot keep up (Llama-3 8B over 4 H100-SXM, in
 * the PO layout's 8 chunks a device), where every offload queues behind
 * the ones before it and finding a channel's free window once walked all
 * of them.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "pipewright.h"
#include "bench.h"

#define RUNS 7

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

/* Median seconds of RUNS simulations (CHECK false) or checks of the
 * simulated timed ops (CHECK true); negative on failure. */
static double
bench_sim_median(const struct pw_problem *p, const struct pw_schedule *s,
    bool check)
{
	struct pw_timing *t;
	struct pw_timed_op *ops = NULL;
	struct pw_violations v;
	struct pw_error err;
	double took[RUNS], start;
	size_t n = 0;
	int i;

	for (i = 0; i < RUNS; i++) {
		start = pw_now();
		if (pw_simulate(p, s, &t, &err) != PW_OK) {
			fprintf(stderr, "bench_sim: %s\n", err.msg);
			return -1;
		}
		if (check) {
			ops = pw_timed_ops(p, s, t, &n);
			start = pw_now();
			if (pw_check(p, ops, n, &v) != 0) {
				fprintf(stderr, "bench_sim: the checker rejects "
				    "a simulated schedule: %s\n", v.msg[0]);
				pw_violations_free(&v);
				free(ops);
				pw_timing_free(t);
				return -1;
			}
			pw_violations_free(&v);
			free(ops);
		}
		took[i] = pw_now() - start;
		pw_timing_free(t);
	}
	return bench_median(took, RUNS);
}

static int
bench(const char *family, int devices, int microbatches)
{
	struct pw_problem *p = uniform(devices, microbatches);
	const struct pw_family *fam = pw_family_find(family);
	struct pw_schedule *s = NULL;
	struct pw_error err;
	double median[2], anchor;
	size_t nops = 0;
	int i, rc = 1;

	if (fam == NULL || fam->build(p, &s, &err) != PW_OK) {
		fprintf(stderr, "bench_sim: %s: %s\n", family,
		    fam == NULL ? "no such family" : err.msg);
		goto out;
	}
	for (i = 0; i < s->ndevices; i++)
		nops += (size_t)s->device[i].len;
	/* The 1 s anchor scaled to this size: 1e6 ops per second. */
	anchor = (double)nops / 1e6;
	for (i = 0; i < 2; i++) {
		if ((median[i] = bench_sim_median(p, s, i == 1)) < 0)
			goto out;
		printf("%-8s %-9s %4d %6d %9zu %10.4f %10.4f %7.3f %11.0f\n",
		    family, i == 0 ? "simulate" : "check", devices,
		    microbatches, nops, anchor, median[i], median[i] / anchor,
		    (double)nops / median[i]);
	}
	rc = 0;
out:
	pw_schedule_free(s);
	pw_problem_free(p);
	return rc;
}

/* An offload planning case: a model on some hardware with the link, and
 * the microbatches of its rows. */
struct bench_offload_case {
	const char *model;
	const char *hardware;
	int	devices;
	int	chunks;
	int	sizes[4];
};

static const struct bench_offload_case bench_70b = { "llama3-70b", "H200",
    16, 4, { 128, 256, 512, 1024 } };
static const struct bench_offload_case bench_8b = { "llama3-8b",
    "H100-SXM", 4, 1, { 512, 1024, 2048, 4096 } };

/* Median seconds of RUNS_PLAN builds of FAMILY on case C with
 * MICROBATCHES; negative on failure. */
#define RUNS_PLAN 3

static double
bench_offload_median(const struct bench_offload_case *c, const char *family,
    int microbatches)
{
	struct pw_split sp = { .devices = c->devices, .chunks = c->chunks,
	    .placement = PW_PLACE_LOOP, .offload = true };
	const struct pw_family *fam = pw_family_find(family);
	struct pw_schedule *s;
	struct pw_problem *p, *used;
	struct pw_error err;
	double took[RUNS_PLAN], start;
	int i;

	sp.microbatches = microbatches;
	if (pw_cost_problem(pw_model_find(c->model),
	    pw_hardware_find(c->hardware), &sp, &p, &err) != PW_OK) {
		fprintf(stderr, "bench_sim: %s\n", err.msg);
		return -1;
	}
	/* As the commands build it: on the family's own layout (the PO
	 * layout's chunks), where the split is another. */
	for (i = 0; i < RUNS_PLAN; i++) {
		start = pw_now();
		if (pw_family_build(fam, p, &used, &s, &err) != PW_OK) {
			fprintf(stderr, "bench_sim: %s: %s\n", family, err.msg);
			pw_problem_free(p);
			return -1;
		}
		took[i] = pw_now() - start;
		pw_schedule_free(s);
		pw_problem_free(used);
	}
	pw_problem_free(p);
	return bench_median(took, RUNS_PLAN);
}

static int
bench_offload(const struct bench_offload_case *c, const char *family)
{
	const int *sizes = c->sizes;
	double first = 0, median;
	size_t i;

	for (i = 0; i < sizeof c->sizes / sizeof c->sizes[0]; i++) {
		if ((median = bench_offload_median(c, family, sizes[i])) < 0)
			return 1;
		if (i == 0)
			first = median;
		printf("%-8s %5d %12.3f %12.3f %7.2f\n", family, sizes[i],
		    first * sizes[i] / sizes[0], median,
		    median / (first * sizes[i] / sizes[0]));
	}
	return 0;
}

static void
bench_offload_head(const char *title)
{
	printf("\noffload planning: %s; median of %d builds; anchor = the "
	    "first row's time grown linearly in m\n", title, RUNS_PLAN);
	printf("%-8s %5s %12s %12s %7s\n", "family", "m", "anchor(s)",
	    "ours(s)", "ratio");
}

int
main(void)
{
	int rc = 0;

	printf("simulator: median of %d runs; anchor = 1,000,000 ops in 1 s "
	    "(\"well under a second\")\n", RUNS);
	printf("%-8s %-9s %4s %6s %9s %10s %10s %7s %11s\n", "family",
	    "what", "p", "m", "ops", "anchor(s)", "ours(s)", "ratio", "ops/s");
	rc |= bench("1f1b", 8, 1024);
	rc |= bench("zb-h1", 32, 2048);
	rc |= bench("zb-h1", 64, 5209);
	rc |= bench("zb-h2", 64, 5209);
	bench_offload_head("Llama-3 70B, 16 H200, 4 chunks, the PCIe link");
	rc |= bench_offload(&bench_70b, "po-h");
	rc |= bench_offload(&bench_70b, "po-sel");
	rc |= bench_offload(&bench_70b, "po-auto");
	bench_offload_head("Llama-3 8B, 4 H100-SXM, the PCIe link "
	    "(saturated)");
	rc |= bench_offload(&bench_8b, "po-sel");
	return rc;
}
