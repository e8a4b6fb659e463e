/*
 * bench_planner.c - the planner against issue 15's anchors, on the
 * llama3-8b preset (32 layers, hidden 4096, 32 heads, 8 KV heads, ffn
 * 14336, vocabulary 128256, sequence 8192, micro-batch 1) on 8 x
 * H100-SXM with 32 microbatches, at 60 GiB and 40 GiB:
 *
 *   even:  the best feasible family on the even split (families that
 *          need another layout split the model again, as compare does);
 *   rebal: the best feasible family on every split with A layers on the
 *          first stage, Z on the last and the rest spread evenly, for
 *          every (A, Z);
 *   ours:  pw_planner's best design within the time limit (60 s, or
 *          the first argument), objective makespan, offload auto (so
 *          designs with the PCIe link too).
 *
 * Both anchors are given without the link and with it (the families on
 * the problem with the hardware's PCIe link, where the offloading ones
 * apply).  Target: ours at least 15% faster than the better even
 * anchor, and no slower than the better rebal one.  The median of three
 * planner runs per case: its iteration count is not bounded here, so a
 * run stopped by the clock may differ from another.  The anchors are
 * exact (no search), computed once.  Times are wall seconds.  Last, the cancel's latency: the flag set while the
 * planner works, which must return within 100 ms.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "plan.h"
#include "solver.h"

#define BENCH_DEVICES	8
#define BENCH_MICROBATCHES 32
#define BENCH_GIB	(1024.0 * 1024.0 * 1024.0)
/* Planner runs per case: two cases of three 60 s runs and the anchors
 * keep the whole bench near 7 minutes. */
#define BENCH_RUNS	3

struct bench_best {
	double	makespan;	/* INFINITY: none feasible */
	const char *family;
	int	first, last;	/* the rebalanced split's ends */
};

/* The best feasible family of the registry on P (compare's rows) into B
 * when it beats B's; FIRST and LAST name the split. */
static void
bench_families(const struct pw_problem *p, int first, int last,
    struct bench_best *b)
{
	struct pw_compare_row *rows = pw_compare_rows(p, NULL, NULL);
	const struct pw_metrics *m;
	size_t i;

	for (i = 0; i < pw_nfamilies; i++) {
		m = rows[i].metrics;
		if (rows[i].rc == PW_OK && m->feasible &&
		    m->makespan < b->makespan) {
			b->makespan = m->makespan;
			b->family = pw_families[i].name;
			b->first = first;
			b->last = last;
		}
	}
	pw_compare_rows_free(rows);
}

/* The split of L layers with A first, Z last and the rest even (the
 * remainder on the middle stages) into LAYERS; false when it does not
 * leave every stage a layer. */
static bool
bench_ends(int l, int a, int z, int *layers)
{
	const int mid = BENCH_DEVICES - 2, rest = l - a - z;
	int extra, first, s;

	if (rest < mid)
		return false;
	extra = rest % mid;
	first = (mid - extra) / 2;
	layers[0] = a;
	layers[BENCH_DEVICES - 1] = z;
	for (s = 0; s < mid; s++)
		layers[s + 1] = rest / mid + (s >= first && s < first + extra);
	return true;
}

/* The anchors on MODEL at SP's limit, with the link when SP says so:
 * the even split's best family into EVEN, every (A, Z) split's into
 * REBAL.  Returns 0, or 1 when the even split does not build. */
static int
bench_anchors(const struct pw_model *model, const struct pw_hardware *hw,
    struct pw_split sp, struct bench_best *even, struct bench_best *rebal)
{
	struct pw_problem *p;
	struct pw_error err;
	int layers[BENCH_DEVICES], a, z;

	sp.layers_per_stage = NULL;
	if (pw_cost_problem(model, hw, &sp, &p, &err) != PW_OK) {
		printf("%3.0f GiB%s: %s\n", sp.memory_limit / BENCH_GIB,
		    sp.offload ? " with the link" : "", err.msg);
		return 1;
	}
	bench_families(p, 0, 0, even);
	pw_problem_free(p);
	sp.layers_per_stage = layers;
	for (a = 1; a < model->layers; a++)
		for (z = 1; a + z < model->layers; z++) {
			if (!bench_ends(model->layers, a, z, layers) ||
			    pw_cost_problem(model, hw, &sp, &p, &err) != PW_OK)
				continue;
			bench_families(p, a, z, rebal);
			pw_problem_free(p);
		}
	return 0;
}

static void
bench_anchor_line(const char *what, const struct bench_best *even,
    const struct bench_best *rebal)
{
	printf("         %-9s even %8.4f %-8s  rebal %8.4f %-8s (%d..%d)\n",
	    what, even->makespan, even->family != NULL ? even->family : "-",
	    rebal->makespan, rebal->family != NULL ? rebal->family : "-",
	    rebal->first, rebal->last);
}

/*
 * One case: the anchors without and with the PCIe link (the planner's
 * offload auto searches designs with it: po-auto on the even split with
 * the link is 5.694 s at 40 GiB, a number only the link gives), then
 * BENCH_RUNS planner runs, their median makespan and wall time (the
 * median run's design printed).  The targets compare ours with the best
 * anchor of either kind.
 */
static int
bench_case(const struct pw_model *model, const struct pw_hardware *hw,
    double gib, double seconds)
{
	struct pw_split sp = { 0 };
	struct pw_problem *p;
	struct pw_planner_opts o;
	struct pw_planner_result res[BENCH_RUNS];
	struct pw_error err;
	struct bench_best even[2], rebal[2];
	const struct bench_best *be, *br;
	char lay[32], split[64], name[48];
	const struct pw_planner_candidate *c;
	double t0, t[BENCH_RUNS], ms[BENCH_RUNS], mid, mid_t;
	int k, run, at;

	sp.devices = BENCH_DEVICES;
	sp.chunks = 1;
	sp.placement = PW_PLACE_LOOP;
	sp.microbatches = BENCH_MICROBATCHES;
	sp.memory_limit = gib * BENCH_GIB;
	for (k = 0; k < 2; k++) {
		even[k] = rebal[k] = (struct bench_best){ INFINITY, NULL, 0, 0 };
		sp.offload = k == 1;
		if (bench_anchors(model, hw, sp, &even[k], &rebal[k]) != 0)
			return 1;
	}
	be = &even[even[1].makespan < even[0].makespan];
	br = &rebal[rebal[1].makespan < rebal[0].makespan];

	sp.offload = false;
	if (pw_cost_problem(model, hw, &sp, &p, &err) != PW_OK)
		return 1;
	pw_planner_opts_init(&o);
	o.time_limit = seconds;
	o.top = 1;
	for (run = 0; run < BENCH_RUNS; run++) {
		t0 = pw_now();
		if (pw_planner(p, &o, &res[run], &err) != PW_OK) {
			printf("%3.0f GiB: plan: %s\n", gib, err.msg);
			while (run-- > 0)
				pw_planner_result_free(&res[run]);
			pw_problem_free(p);
			return 1;
		}
		t[run] = pw_now() - t0;
		ms[run] = res[run].cand[0].makespan;
	}
	/* The run of the median makespan is the one printed. */
	mid = bench_median(ms, BENCH_RUNS);
	mid_t = bench_median(t, BENCH_RUNS);
	for (at = 0; res[at].cand[0].makespan != mid; at++)
		;
	c = &res[at].cand[0];
	snprintf(name, sizeof name, "%s%s", c->schedule_name,
	    c->design.offload ? " +offload" : "");
	printf("%3.0f GiB  ours %8.4f %s %s %s r%d  %5.3f %5.3f  %5.1f s  "
	    "(median of %d; %zu tried, %s)\n", gib, c->makespan,
	    pw_design_layout_name(&c->design, lay, sizeof lay),
	    pw_design_split_name(&c->design, c->problem->nstages, split,
	    sizeof split), name, (int)c->design.recompute,
	    c->makespan / be->makespan, c->makespan / br->makespan, mid_t,
	    BENCH_RUNS, res[at].tried, pw_solve_end_name(res[at].ended));
	bench_anchor_line("no link", &even[0], &rebal[0]);
	bench_anchor_line("link", &even[1], &rebal[1]);
	printf("         target: ours <= 0.85 x even %s, ours <= rebal %s "
	    "(the better anchor of each)\n",
	    c->makespan <= 0.85 * be->makespan ? "met" : "MISSED",
	    c->makespan <= br->makespan * (1 + 1e-12) ? "met" : "MISSED");
	for (run = 0; run < BENCH_RUNS; run++)
		pw_planner_result_free(&res[run]);
	pw_problem_free(p);
	return 0;
}

/* The cancel's latency: another thread sets the flag after a second and
 * a half (in the splits phase) and the planner must return within 100
 * ms. */
struct bench_cancel {
	atomic_int flag;
	double	set_at;
};

static void *
bench_cancel_thread(void *arg)
{
	struct bench_cancel *bc = arg;
	struct timespec ts = { 1, 500000000 };

	nanosleep(&ts, NULL);
	bc->set_at = pw_now();
	atomic_store(&bc->flag, 1);
	return NULL;
}

static int
bench_cancel(const struct pw_model *model, const struct pw_hardware *hw)
{
	struct pw_split sp = { 0 };
	struct pw_problem *p;
	struct pw_planner_opts o;
	struct pw_planner_result res;
	struct pw_error err;
	struct bench_cancel bc;
	pthread_t th;
	double late;
	int rc;

	sp.devices = BENCH_DEVICES;
	sp.chunks = 1;
	sp.microbatches = BENCH_MICROBATCHES;
	sp.memory_limit = 60 * BENCH_GIB;
	if (pw_cost_problem(model, hw, &sp, &p, &err) != PW_OK)
		return 1;
	atomic_init(&bc.flag, 0);
	pw_planner_opts_init(&o);
	o.cancel = &bc.flag;
	if (pw_thread_start(&th, bench_cancel_thread, &bc) != 0) {
		pw_problem_free(p);
		return 1;
	}
	rc = pw_planner(p, &o, &res, &err);
	late = pw_now() - bc.set_at;
	pthread_join(th, NULL);
	printf("cancel: returned %.3f s after the flag (target 0.100), %s, "
	    "%zu candidates\n", late, rc == PW_OK ?
	    pw_solve_end_name(res.ended) : err.msg, rc == PW_OK ? res.ncand :
	    0);
	if (rc == PW_OK)
		pw_planner_result_free(&res);
	pw_problem_free(p);
	return late <= 0.1 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	const struct pw_model *model = pw_model_find("llama3-8b");
	const struct pw_hardware *hw = pw_hardware_find("H100-SXM");
	double seconds = 60;
	char *end;
	int bad = 0;

	if (argc > 2 || (argc == 2 && (seconds = strtod(argv[1], &end),
	    end == argv[1] || *end != '\0' || !isfinite(seconds) ||
	    !(seconds > 0)))) {
		fprintf(stderr, "usage: bench_planner [SECONDS]: plan's time "
		    "limit, a positive number (default 60)\n");
		return 2;
	}

	if (model == NULL || hw == NULL) {
		fprintf(stderr, "bench_planner: the llama3-8b or H100-SXM "
		    "preset is missing\n");
		return 1;
	}
	printf("planner: llama3-8b on %d x %s, %d microbatches, plan's time "
	    "limit %.0f s\n", BENCH_DEVICES, hw->name, BENCH_MICROBATCHES,
	    seconds);
	printf("columns: limit, ours (layout, split, schedule, recompute), "
	    "ours/even, ours/rebal (the better anchors), plan's wall time; "
	    "then the even split's best family and the best (first, last) "
	    "split's, without the link and with it\n");
	bad |= bench_case(model, hw, 60, seconds);
	bad |= bench_case(model, hw, 40, seconds);
	bad |= bench_cancel(model, hw);
	return bad;
}
