/*
 * bench_solver.c - the optimizer's quality against the anchors of issue
 * 4: each row has the anchor's figure beside ours, their ratio, the time
 * the case took and the gap it ended with.  One run per case (the search
 * is deterministic up to its time limit); times are wall seconds.
 *
 * (a) p=4, m=8, unit times, act 1, hold 0.5, limits 2-7: the optimum
 *     proven (gap 0) within 10 s, objective makespan.
 * (b) Zero Bubble Table 5 (tests/data/zb_table5.csv, read from $TESTDATA
 *     or tests/data), limits p*act and 2p*act, objective span, no
 *     offload: a bubble rate no higher than the published ZB-1p, ZB-2p,
 *     within 10 s (run here with 2 s).
 * (c) PipeOffload, m = 8d, unit times, one transfer taking (k/2)(f+b+w)
 *     per pair of devices (modelled as tests/test_offload.c does), k =
 *     0.5, 0.8 and 1, limits of 7, 8, 18 stage-activations: a bubble rate
 *     at most half the PO layout's (0.099, 0.105, 0.111), within 30 s;
 *     beside it the start's (po-auto's), which the search improves on.
 * (d) One stage per device, uneven stage costs (splitmix64), limits
 *     from p/2 to p activations: better than the best family within
 *     1 s (p=8, m=32; p=16, m=64) and 60 s (p=32, m=128), unless the
 *     family is proven optimal.
 * (e) The local search's speed: moves a second from zb-auto's schedule
 *     on (d)'s problems at p/2 and p (a move is a candidate re-timed
 *     and judged), and how far a fixed number of moves takes it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "csv.h"
#include "internal.h"
#include "plan.h"
#include "testlib.h"

static int	bench_met, bench_cases;

/* Solves P for at most SECONDS; fills R and returns the plan of its
 * result (the caller frees both), or prints why not and returns NULL. */
static struct pw_plan *
bench_solve(const struct pw_problem *p, enum pw_objective obj,
    enum pw_offload_mode offload, double seconds, struct pw_solve_result *r)
{
	struct pw_solve_opts o;
	struct pw_error err;
	struct pw_plan *plan;

	pw_solve_opts_init(&o);
	o.objective = obj;
	o.offload = offload;
	o.time_limit = seconds;
	if (pw_solve(p, &o, r, &err) != PW_OK) {
		printf("  error: %s\n", err.msg);
		return NULL;
	}
	if (pw_plan_new(pw_problem_copy(p), pw_schedule_copy(r->schedule),
	    &plan, &err) != PW_OK) {
		printf("  error: the result does not simulate: %s\n", err.msg);
		pw_solve_result_free(r);
		return NULL;
	}
	return plan;
}

/* "time-indexed, 641 binaries (whole)" into BUF. */
static const char *
bench_model(const struct pw_model_size *ms, char *buf, size_t len)
{
	if (ms->formulation == NULL)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%s, %d binaries (%s)", ms->formulation,
		    ms->binaries, ms->whole ? "whole" : "largest window");
	return buf;
}

/* Counts a case, which met its anchor when MET, and frees its problem P
 * and, when it was solved (PLAN not NULL), its plan and result R.
 * Returns MET. */
static bool
bench_done(struct pw_problem *p, struct pw_plan *plan,
    struct pw_solve_result *r, bool met)
{
	bench_cases++;
	bench_met += met;
	if (plan != NULL) {
		pw_plan_free(plan);
		pw_solve_result_free(r);
	}
	pw_problem_free(p);
	fflush(stdout);
	return met;
}

/* Returns a problem the caller frees: D devices, NSTAGES stages on loop
 * placement, M microbatches, all else zero. */
static struct pw_problem *
bench_problem(int d, int nstages, int m)
{
	struct pw_problem *p = pw_problem_new(d, nstages, m);
	struct pw_error err;

	if (pw_problem_place_loop(p, &err) != PW_OK)
		abort();
	return p;
}

static void
bench_unit(void)
{
	struct pw_solve_result r;
	struct pw_plan *plan;
	struct pw_problem *p;
	char model[96];
	int lim, s, met = 0;

	printf("(a) p=4, m=8, unit times, act 1, hold 0.5, makespan; anchor: "
	    "the optimum proven (gap 0) within 10 s\n");
	printf("%-6s %-8s %-8s %-7s %-6s %-7s %-8s %s\n", "limit", "anchor",
	    "ours", "bound", "ratio", "gap", "time", "model");
	for (lim = 2; lim <= 7; lim++) {
		p = bench_problem(4, 4, 8);
		for (s = 0; s < 4; s++) {
			p->stages[s].f = p->stages[s].b = p->stages[s].w = 1;
			p->stages[s].act = 1;
			p->stages[s].hold = 0.5;
			p->memory[s].limit = lim;
		}
		pw_problem_set_comm(p, 0);
		if ((plan = bench_solve(p, PW_OBJ_MAKESPAN, PW_OFFMODE_OFF,
		    10, &r)) != NULL)
			printf("%-6d %-8s %-8g %-7g %-6.3f %-7.4f %-8.2f %s\n",
			    lim, "gap 0", r.objective, r.bound, r.objective /
			    r.bound, r.gap, r.elapsed, bench_model(&r.model,
			    model, sizeof model));
		met += bench_done(p, plan, &r, plan != NULL && r.optimal);
	}
	printf("(a) %d of 6 proven optimal\n\n", met);
}

/* One stage per device from a Table 5 case, every limit FACTOR * p
 * activations. */
static struct pw_problem *
bench_zb_problem(const struct test_zb_case *c, int factor)
{
	struct pw_problem *p;
	int s;

	p = bench_problem(c->p, c->p, c->m);
	for (s = 0; s < c->p; s++) {
		p->stages[s].f = c->f;
		p->stages[s].b = c->b;
		p->stages[s].w = c->w;
		p->stages[s].act = c->act;
		p->stages[s].hold = c->hold;
		p->memory[s].limit = factor * c->p * c->act;
	}
	pw_problem_set_comm(p, c->comm);
	return p;
}

static void
bench_zb(void)
{
	static const char *const col[2] = { "bubble_zb_1p", "bubble_zb_2p" };
	struct pw_solve_result r;
	struct test_zb_case c;
	struct test_csv csv;
	const struct pw_metrics *m;
	struct pw_plan *plan;
	struct pw_problem *p;
	double anchor;
	bool ok;
	int k, met = 0, n = 0;

	printf("(b) Zero Bubble Table 5, span, no offload; anchor: the "
	    "published bubble rate at p*act (1p) and 2p*act (2p), within "
	    "10 s (run with 2 s)\n");
	printf("%-10s %-4s %-8s %-8s %-6s %-7s %-8s %s\n", "case", "mem",
	    "anchor", "ours", "ratio", "gap", "time", "start");
	if (!test_csv_open(&csv, "zb_table5.csv"))
		return;
	while (test_csv_next(&csv)) {
		test_zb_case_read(&csv, &c);
		for (k = 0; k < 2; k++) {
			anchor = test_csv_num(&csv, col[k]);
			p = bench_zb_problem(&c, k + 1);
			n++;
			ok = false;
			if ((plan = bench_solve(p, PW_OBJ_SPAN, PW_OFFMODE_OFF,
			    2, &r)) != NULL) {
				m = pw_plan_metrics(plan);
				/* The table's four decimals. */
				ok = round(m->bubble_rate * 1e4) <=
				    round(anchor * 1e4);
				printf("%-10s %-4s %-8.4f %-8.4f %-6.3f %-7.4f "
				    "%-8.2f %s\n", c.name, k == 0 ? "1p" :
				    "2p", anchor, m->bubble_rate,
				    m->bubble_rate / anchor, r.gap, r.elapsed,
				    r.start);
			}
			met += bench_done(p, plan, &r, ok);
		}
	}
	test_csv_close(&csv);
	printf("(b) %d of %d at or below the published bubble rate\n\n", met,
	    n);
}

static void
bench_offload(void)
{
	static const int dv[3][2] = { { 8, 5 }, { 16, 3 }, { 32, 2 } };
	static const double limit[3] = { 7, 8, 18 }, po[3] = { 0.099, 0.105,
	    0.111 }, ks[3] = { 0.5, 0.8, 1.0 };
	struct pw_solve_result r;
	const struct pw_metrics *m = NULL;
	struct pw_plan *plan;
	struct pw_problem *p;
	double peak, anchor;
	int i, k, d, met = 0;

	printf("(c) PipeOffload, m = 8d, span, offload on; anchor: half the "
	    "PO layout's bubble rate within 30 s; from: the start's\n");
	printf("%-12s %-4s %-6s %-8s %-8s %-8s %-6s %-7s %-8s %s\n", "case",
	    "k", "limit", "anchor", "from", "ours", "ratio", "gap", "time",
	    "peak, start");
	for (i = 0; i < 3; i++)
		for (k = 0; k < 3; k++) {
			p = test_po_problem(dv[i][0], dv[i][1],
			    8 * dv[i][0], ks[k], 1, limit[i]);
			anchor = po[i] / 2;
			if ((plan = bench_solve(p, PW_OBJ_SPAN, PW_OFFMODE_ON,
			    30, &r)) != NULL) {
				m = pw_plan_metrics(plan);
				peak = 0;
				for (d = 0; d < p->devices; d++)
					peak = fmax(peak, m->device[d].peak);
				/* Every schedule of the problem has the same
				 * busiest device: the start's rate from its
				 * span. */
				printf("d=%-2d v=%-5d %-4.1f %-6g %-8.4f %-8.4f "
				    "%-8.4f %-6.3f %-7.4f %-8.2f %g, %s\n",
				    dv[i][0], dv[i][1], ks[k], limit[i], anchor,
				    (r.start_objective - m->max_busy) /
				    r.start_objective, m->bubble_rate,
				    m->bubble_rate / anchor, r.gap, r.elapsed,
				    peak, r.start);
			}
			met += bench_done(p, plan, &r, plan != NULL &&
			    m->bubble_rate <= anchor);
		}
	printf("(c) %d of 9 at or below the anchor\n\n", met);
}

/* The best makespan of a family on P within every limit, and its name. */
static double
bench_best_family(const struct pw_problem *p, const char **name)
{
	const struct pw_metrics *m;
	struct pw_plan *plan;
	struct pw_error err;
	double best = INFINITY;
	size_t i;

	*name = "none";
	for (i = 0; i < pw_nfamilies; i++) {
		if (pw_plan_family(&pw_families[i], p, &plan, &err) != PW_OK)
			continue;
		m = pw_plan_metrics(plan);
		if (pw_problem_same(pw_plan_problem(plan), p) &&
		    m->feasible && m->makespan < best) {
			best = m->makespan;
			*name = pw_families[i].name;
		}
		pw_plan_free(plan);
	}
	return best;
}

/* Each scale at limits from half of 1F1B's p activations to all of
 * them: the issue names no limit, and where a family wins depends on
 * it.  A row is met when ours is below the best family, or when the
 * family's makespan is proven optimal (nothing is below it). */
static void
bench_scale(void)
{
	static const struct {
		int	p, m, eighths;
		double	seconds;
	} rows[] = {
		{ 8, 32, 4, 1 }, { 8, 32, 5, 1 }, { 8, 32, 6, 1 },
		{ 8, 32, 7, 1 }, { 8, 32, 8, 1 },
		{ 16, 64, 4, 1 }, { 16, 64, 5, 1 }, { 16, 64, 6, 1 },
		{ 16, 64, 7, 1 }, { 16, 64, 8, 1 },
		{ 32, 128, 4, 60 }, { 32, 128, 6, 60 },
	};
	const int nrows = (int)(sizeof rows / sizeof rows[0]);
	struct pw_solve_result r;
	struct pw_plan *plan;
	struct pw_problem *p;
	const char *name, *verdict;
	double anchor, limit;
	int i, better = 0, proven = 0;
	bool met;

	printf("(d) one stage per device, uneven costs, limits p/2 to p "
	    "activations, makespan; anchor: the best family within every "
	    "limit\n");
	printf("%-14s %-6s %-6s %-10s %-10s %-7s %-7s %-8s %-8s %s\n",
	    "case", "limit", "budget", "anchor", "ours", "ratio", "gap",
	    "time", "family", "verdict");
	for (i = 0; i < nrows; i++) {
		limit = rows[i].p * rows[i].eighths / 8.0;
		p = test_problem_uneven(rows[i].p, rows[i].m, limit);
		anchor = bench_best_family(p, &name);
		met = false;
		if ((plan = bench_solve(p, PW_OBJ_MAKESPAN, PW_OFFMODE_OFF,
		    rows[i].seconds, &r)) != NULL) {
			if (r.objective < anchor) {
				verdict = "better";
				better++;
				met = true;
			} else if (r.optimal) {
				verdict = "family optimal";
				proven++;
				met = true;
			} else
				verdict = "not better";
			printf("p=%-2d m=%-6d %-6g %-6g %-10.4f %-10.4f %-7.5f "
			    "%-7.4f %-8.2f %-8s %s\n", rows[i].p, rows[i].m,
			    limit, rows[i].seconds, anchor, r.objective,
			    r.objective / anchor, r.gap, r.elapsed, name,
			    verdict);
		}
		bench_done(p, plan, &r, met);
	}
	printf("(d) %d of %d better than the best family, %d where the "
	    "family is proven optimal\n\n", better, nrows, proven);
}

/* The local search alone from zb-auto's schedule on (d)'s problems:
 * MOVES moves from seed 1, their rate and the makespan they reach. */
static void
bench_local(void)
{
	static const struct {
		int	p, m, eighths;
		long	moves;
	} rows[] = {
		{ 8, 32, 4, 4000 }, { 8, 32, 8, 4000 },
		{ 32, 128, 4, 400 }, { 32, 128, 8, 400 },
	};
	struct pw_local_opts o;
	struct pw_schedule *start, *best;
	struct pw_eval e0, e;
	struct pw_plan *plan;
	struct pw_problem *p;
	struct pw_error err;
	uint64_t x;
	double t0, secs;
	long made;
	size_t i;

	printf("(e) the local search alone from zb-auto's schedule on (d)'s "
	    "problems, seed 1\n");
	printf("%-14s %-6s %-7s %-10s %-10s %-10s %s\n", "case", "limit",
	    "moves", "start", "reached", "moves/s", "iterations/move");
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		p = test_problem_uneven(rows[i].p, rows[i].m,
		    rows[i].p * rows[i].eighths / 8.0);
		if (pw_plan_family(pw_family_find("zb-auto"), p, &plan,
		    &err) != PW_OK) {
			printf("  error: %s\n", err.msg);
			pw_problem_free(p);
			continue;
		}
		pw_solver_judge_plan(plan, PW_OBJ_MAKESPAN, NULL, NULL, 0, &e0);
		start = pw_schedule_copy(pw_plan_timed(plan));
		pw_plan_free(plan);
		memset(&o, 0, sizeof o);
		o.objective = PW_OBJ_MAKESPAN;
		o.moves = rows[i].moves;
		x = 1;
		o.rng = &x;
		t0 = pw_now();
		best = pw_local_search(p, start, &e0, &o, &e, &made);
		secs = pw_now() - t0;
		printf("p=%-2d m=%-6d %-6g %-7ld %-10.4f %-10.4f %-10.0f %ld\n",
		    rows[i].p, rows[i].m, rows[i].p * rows[i].eighths / 8.0,
		    made, e0.objective, best != NULL ? e.objective :
		    e0.objective, made / secs, pw_local_cost(start));
		fflush(stdout);
		pw_schedule_free(best);
		pw_schedule_free(start);
		pw_problem_free(p);
	}
	printf("\n");
}

int
main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "abcde";

	printf("bench_solver: anchors of issue 4 beside ours; ratio = ours / "
	    "anchor; wall seconds\n\n");
	if (strchr(only, 'a') != NULL)
		bench_unit();
	if (strchr(only, 'b') != NULL)
		bench_zb();
	if (strchr(only, 'c') != NULL)
		bench_offload();
	if (strchr(only, 'd') != NULL)
		bench_scale();
	if (strchr(only, 'e') != NULL)
		bench_local();
	printf("%d of %d cases meet their anchor\n", bench_met, bench_cases);
	return 0;
}
