/*
 * planner.c - the planner: the fastest design within memory for a model
 * (its API, its designs and its result; planner_search.c searches).
 *
 * A design is a layout (stages per device, loop or V placement), a
 * recomputation choice and whether the PCIe link is used.  Each design
 * gets its own problem built from the model (pw_cost_problem with the
 * design's split), never one a family splits again, so that a design is
 * what it says.  The search runs in three phases on one thread:
 *
 *   families: every design's even and balanced splits (pw_split_balance;
 *	with chunks, also the one-chunk ones shared among the chunks),
 *	each timed exactly with every family of its layout (built,
 *	simulated, measured); a split counts by its best feasible family's
 *	objective;
 *   splits: from the best split of each design within 10% of the best,
 *	the best of the moves of one layer between neighbouring stages,
 *	repeated while it improves (at most half the time);
 *   optimizer: pw_solve from the best schedules of the designs in order
 *	of promise, a few at a time; a round gives each one still improving
 *	a share of the time left, so the time goes where it improves.
 *
 * docs/planner.md states what is searched and what the numbers mean.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "planner_int.h"
#include "search.h"

/* Stages per device tried besides the model's one layer per chunk: 1, 2,
 * 4 and 8.  More chunks add a hop per chunk for a bubble already small at
 * 8, and the number of ops to time grows with them. */
#define PW_PLANNER_MAX_CHUNKS	8
/* The chunk counts that gives at most: the powers of two up to it, one
 * layer per chunk, and the count given. */
#define PW_PLANNER_NCOUNTS	6

void
pw_planner_opts_init(struct pw_planner_opts *o)
{
	memset(o, 0, sizeof *o);
	o->objective = PW_OBJ_MAKESPAN;
	o->time_limit = 60;
	o->top = 10;
	o->seed = 1;
	o->offload = PW_OFFMODE_AUTO;
}

/* What a candidate and a slot own alike: the split of design D, a
 * problem and a schedule. */
static void
pw_planner_owned_free(struct pw_design *d, struct pw_problem *q,
    struct pw_schedule *sched)
{
	free(d->layers_per_stage);
	pw_problem_free(q);
	pw_schedule_free(sched);
}

static void
pw_planner_candidate_free(struct pw_planner_candidate *c)
{
	pw_planner_owned_free(&c->design, c->problem, c->schedule);
}

void
pw_planner_result_free(struct pw_planner_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->ncand; i++)
		pw_planner_candidate_free(&r->cand[i]);
	free(r->cand);
	r->cand = NULL;
	r->ncand = 0;
}

char *
pw_design_layout_name(const struct pw_design *d, char *buf, size_t len)
{
	if (d->custom_placement)
		snprintf(buf, len, "custom");
	else if (d->placement == PW_PLACE_V)
		snprintf(buf, len, "V");
	else if (d->chunks == 1)
		snprintf(buf, len, "1 chunk");
	else
		snprintf(buf, len, "loop x%d", d->chunks);
	return buf;
}

const char *
pw_design_placement_name(const struct pw_design *d)
{
	return d->custom_placement ? "custom" :
	    pw_placement_names[d->placement];
}

char *
pw_design_split_name(const struct pw_design *d, int nstages, char *buf,
    size_t len)
{
	char num[16];
	size_t at = 0, n;
	int s;

	if (len == 0)
		return buf;
	if (d->layers_per_stage == NULL) {
		snprintf(buf, len, "given");
		return buf;
	}
	buf[0] = '\0';
	for (s = 0; s < nstages; s++) {
		n = (size_t)snprintf(num, sizeof num, "%s%d", s > 0 ? "," : "",
		    d->layers_per_stage[s]);
		/* Room for this number, and for "..." unless it is the last. */
		if (at + n + (s + 1 < nstages ? 3 : 0) >= len) {
			snprintf(buf + at, len - at, "...");
			break;
		}
		memcpy(buf + at, num, n + 1);
		at += n;
	}
	return buf;
}

/* ------------------------------------------------------------------ */
/* The designs                                                         */

static void
pw_planner_add(struct pw_planner_run *r, const struct pw_design *d,
    const struct pw_model *m, const struct pw_split *sp, bool need_transfer)
{
	struct pw_planner_slot *sl;

	r->slot = pw_xreallocarray(r->slot, r->nslot + 1, sizeof *r->slot);
	sl = &r->slot[r->nslot++];
	memset(sl, 0, sizeof *sl);
	sl->design = *d;
	if (m != NULL)
		sl->model = *m;
	if (sp != NULL)
		sl->split = *sp;
	sl->need_transfer = need_transfer;
	sl->objective = INFINITY;
}

/* Which link choices O's offload mode and the hardware give: [0] without,
 * [1] with.  PW_ERR_INPUT when ON is asked of hardware without one. */
static int
pw_planner_links(const struct pw_planner_run *r, bool has_link, bool use[2],
    struct pw_error *err)
{
	use[0] = r->o.offload != PW_OFFMODE_ON;
	use[1] = has_link && r->o.offload != PW_OFFMODE_OFF;
	return pw_solve_check_link("plan", r->o.offload, has_link, err);
}

/* The designs of a problem with given stages: its own layout, with and
 * without its link as the options say. */
static int
pw_planner_fixed_designs(struct pw_planner_run *r, struct pw_error *err)
{
	struct pw_design d;
	bool use[2];
	int rc, k;

	if ((rc = pw_planner_links(r, r->p->link.present, use, err)) != PW_OK)
		return rc;
	memset(&d, 0, sizeof d);
	d.chunks = r->p->nstages / r->p->devices;
	d.placement = pw_problem_is_v(r->p) ? PW_PLACE_V : PW_PLACE_LOOP;
	d.custom_placement = !pw_problem_is_v(r->p) && !pw_problem_is_loop(r->p);
	d.recompute = PW_RECOMPUTE_NONE;
	for (k = 0; k < 2; k++)
		if (use[k]) {
			d.offload = k == 1;
			pw_planner_add(r, &d, NULL, NULL, k == 1 && use[0]);
		}
	return PW_OK;
}

/* The chunk counts to try for ORIGIN, ascending, each with at least one
 * layer a stage: 1, 2, 4, ... up to PW_PLANNER_MAX_CHUNKS, one layer per
 * chunk (as families splitting the model again have it) and the count
 * ORIGIN gives, those two up to PW_PLANNER_MAX_FINE_CHUNKS.  Returns how
 * many. */
static int
pw_planner_chunk_counts(const struct pw_origin *o,
    int out[PW_PLANNER_NCOUNTS])
{
	int fine = o->model.layers / o->split.devices, given = o->split.chunks;
	int n = 0, v, k;

	for (v = 1; v <= PW_PLANNER_MAX_CHUNKS && v <= fine; v *= 2)
		out[n++] = v;
	if (fine > PW_PLANNER_MAX_CHUNKS && fine <= PW_PLANNER_MAX_FINE_CHUNKS)
		out[n++] = fine;
	if (given > fine || given > PW_PLANNER_MAX_FINE_CHUNKS)
		return n;
	for (k = 0; k < n && out[k] < given; k++)
		continue;
	if (k < n && out[k] == given)
		return n;
	memmove(out + k + 1, out + k, (size_t)(n - k) * sizeof *out);
	out[k] = given;
	return n + 1;
}

int
pw_planner_most_chunks(const struct pw_origin *o)
{
	int counts[PW_PLANNER_NCOUNTS];
	int n = pw_planner_chunk_counts(o, counts);

	return n > 0 ? counts[n - 1] : 1;
}

/* Whether design D has the layout and recomputation of the problem as
 * given, with or without the link. */
static bool
pw_planner_is_given(const struct pw_origin *o, const struct pw_design *d)
{
	return d->chunks == o->split.chunks &&
	    d->placement == o->split.placement &&
	    d->recompute == o->model.recompute;
}

/* The designs of a problem built from a model: recomputation, chunks,
 * placement and link.  Returns PW_OK or the links' error. */
static int
pw_planner_model_designs(struct pw_planner_run *r, struct pw_error *err)
{
	static const enum pw_recompute recompute[] = { PW_RECOMPUTE_NONE,
	    PW_RECOMPUTE_PIPEOFFLOAD, PW_RECOMPUTE_FULL };
	const struct pw_origin *o = r->origin;
	struct pw_design d;
	struct pw_model m;
	struct pw_split sp;
	bool use[2], has_link;
	int counts[PW_PLANNER_NCOUNTS], ncounts, i, k, rc, pl, places;
	size_t ri;

	has_link = o->hardware.pcie_d2h > 0 && o->hardware.pcie_h2d > 0;
	if ((rc = pw_planner_links(r, has_link, use, err)) != PW_OK)
		return rc;
	ncounts = pw_planner_chunk_counts(o, counts);
	for (ri = 0; ri < sizeof recompute / sizeof recompute[0]; ri++)
		for (i = 0; i < ncounts; i++) {
			places = counts[i] == 2 ? 2 : 1;
			for (pl = 0; pl < places; pl++)
				for (k = 0; k < 2; k++) {
					if (!use[k])
						continue;
					m = o->model;
					m.recompute = recompute[ri];
					sp = o->split;
					sp.chunks = counts[i];
					sp.placement = pl == 0 ? PW_PLACE_LOOP :
					    PW_PLACE_V;
					sp.offload = k == 1;
					memset(&d, 0, sizeof d);
					d.chunks = sp.chunks;
					d.placement = sp.placement;
					d.recompute = m.recompute;
					d.offload = sp.offload;
					/* The given split is a start of
					 * the given layout's designs. */
					if (!pw_planner_is_given(o, &d))
						sp.layers_per_stage = NULL;
					d.layers_per_stage = pw_xcalloc(
					    (size_t)(sp.devices * sp.chunks),
					    sizeof *d.layers_per_stage);
					pw_planner_add(r, &d, &m, &sp,
					    k == 1 && use[0]);
				}
		}
	return PW_OK;
}

/* Moves the designs of the problem as given (its chunks, placement and
 * recomputation; without the link, then with it, as the offload mode
 * allows) to the front, so that the search starts there: where the time
 * runs out before every design's families are built, the answer is at
 * least as good as the given layout's best family.  Without the link
 * first even where the given problem has one: under --offload auto a
 * design with the link takes only schedules that move something, which
 * its families rarely do (16 H100 x 4,096 microbatches of Llama-3 8B:
 * none fitted in 20 s, where without the link zb-h1 fits within a
 * second). */
static void
pw_planner_given_first(struct pw_planner_run *r)
{
	struct pw_planner_slot given[2];
	size_t i, n = 0;

	for (i = 0; i < r->nslot; i++)
		if (pw_planner_is_given(r->origin, &r->slot[i].design))
			break;
	/* The designs of one layout are added side by side, without the
	 * link first. */
	while (i + n < r->nslot && n < 2 &&
	    pw_planner_is_given(r->origin, &r->slot[i + n].design))
		n++;
	if (i == 0 || n == 0)
		return;
	memcpy(given, &r->slot[i], n * sizeof *r->slot);
	memmove(&r->slot[n], &r->slot[0], i * sizeof *r->slot);
	memcpy(&r->slot[0], given, n * sizeof *r->slot);
}

int
pw_planner_designs(struct pw_planner_run *r, struct pw_error *err)
{
	int rc;

	if (r->origin == NULL)
		return pw_planner_fixed_designs(r, err);
	if ((rc = pw_planner_model_designs(r, err)) == PW_OK)
		pw_planner_given_first(r);
	return rc;
}

void
pw_planner_slots_free(struct pw_planner_run *r)
{
	size_t i;

	for (i = 0; i < r->nslot; i++)
		pw_planner_owned_free(&r->slot[i].design, r->slot[i].problem,
		    r->slot[i].schedule);
	free(r->slot);
	r->slot = NULL;
	r->nslot = 0;
}

/* ------------------------------------------------------------------ */
/* The result                                                          */

int
pw_planner_bound_terms(const struct pw_problem *q, bool offload,
    enum pw_objective obj, struct pw_bound_term out[PW_BOUND_TERMS])
{
	/* A design that keeps every activation on its device is bound as
	 * such: the memory terms then count every activation. */
	bool *offloadable = offload ? pw_solver_offloadable(q,
	    PW_OFFMODE_AUTO, NULL) : NULL;
	int n = pw_bound_terms(q, obj, offloadable, out);

	free(offloadable);
	return n;
}

/* Fills C from SL (whose problem, schedule and layers it takes), checking
 * the schedule against its limits and the checker.  Returns PW_OK, or
 * PW_ERR_INTERNAL naming the design (a bug). */
static int
pw_planner_candidate(const struct pw_planner_run *r,
    struct pw_planner_slot *sl, struct pw_planner_candidate *c,
    struct pw_error *err)
{
	const struct pw_metrics *m;
	struct pw_violations viol = { 0 };
	struct pw_bound_term terms[PW_BOUND_TERMS];
	struct pw_timed_op *ops;
	struct pw_plan *plan;
	char lay[32];
	size_t nops;
	int rc, d, nv;

	memset(c, 0, sizeof *c);
	c->design = sl->design;
	sl->design.layers_per_stage = NULL;
	c->problem = sl->problem;
	c->schedule = sl->schedule;
	sl->problem = NULL;
	sl->schedule = NULL;
	snprintf(c->schedule_name, sizeof c->schedule_name, "%s", sl->name);
	c->optimized = sl->optimized;
	if ((rc = pw_plan_new(pw_problem_copy(c->problem),
	    pw_schedule_copy(c->schedule), &plan, err)) != PW_OK)
		goto bad;
	m = pw_plan_metrics(plan);
	ops = pw_timed_ops(c->problem, c->schedule, pw_plan_timing(plan),
	    &nops);
	nv = pw_check(c->problem, ops, nops, &viol);
	free(ops);
	if (nv > 0 || !m->feasible) {
		pw_error_set(err, "%s", nv > 0 ? viol.msg[0] : "over a limit");
		pw_violations_free(&viol);
		pw_plan_free(plan);
		rc = PW_ERR_INTERNAL;
		goto bad;
	}
	pw_violations_free(&viol);
	c->objective = pw_objective_value(r->o.objective, m);
	c->makespan = m->makespan;
	c->bubble_rate = m->bubble_rate;
	c->idle_share = m->makespan > 0 ? m->total_idle / ((double)m->ndevices *
	    m->makespan) : 0;
	d = pw_metrics_tightest(c->problem, m, NULL);
	c->peak_device = d >= 0 ? d : pw_metrics_peak_device(m);
	c->peak = m->device[c->peak_device].peak;
	c->limit = c->problem->memory[c->peak_device].limit;
	/* A schedule that moves nothing is bound as one, even in a design
	 * with the link (--offload on): its gap then says what moving
	 * nothing costs, not what offloading might save. */
	c->moves = pw_solver_moves(c->schedule);
	pw_planner_bound_terms(c->problem, c->design.offload && c->moves,
	    r->o.objective, terms);
	/* Where the bound meets the objective it may pass it in the last
	 * digits (summed otherwise): never above, as solve's. */
	c->bound = fmin(terms[0].value, c->objective);
	c->bound_name = terms[0].name;
	c->gap = pw_objective_gap(c->objective, c->bound);
	pw_plan_free(plan);
	return PW_OK;
bad:
	{
		struct pw_error why = *err;

		pw_error_set(err, "plan: the %s schedule of the %s design fails "
		    "its checks: %s", c->schedule_name,
		    pw_design_layout_name(&c->design, lay, sizeof lay), why.msg);
	}
	return rc;
}

/* pw_planner_candidate's call, for a thread of its own. */
struct pw_planner_check {
	const struct pw_planner_run *r;
	struct pw_planner_slot *sl;
	struct pw_planner_candidate *c;
	struct pw_error *err;
	int	rc;
};

static void
pw_planner_check_work(void *arg)
{
	struct pw_planner_check *k = arg;

	k->rc = pw_planner_candidate(k->r, k->sl, k->c, k->err);
}

/* Fills C from SL as pw_planner_candidate does, on a thread of its own
 * (a large problem's checks and bounds take seconds) while R reports. */
static int
pw_planner_check(struct pw_planner_run *r, struct pw_planner_slot *sl,
    struct pw_planner_candidate *c, struct pw_error *err)
{
	struct pw_planner_check k = { r, sl, c, err, PW_OK };
	int rc;

	/* Never left: NULL drops nothing. */
	if ((rc = pw_planner_thread(r, pw_planner_check_work, NULL, &k,
	    INFINITY, err)) < 0) {
		memset(c, 0, sizeof *c);
		return rc;
	}
	return k.rc;
}

void
pw_planner_none(const struct pw_planner_run *r, struct pw_error *err)
{
	char peak[32], limit[32], secs[32], stop[64];
	bool cancelled = pw_planner_cancelled(r);

	pw_fmt_seconds(secs, sizeof secs, r->o.time_limit);
	if (cancelled || r->timed_out) {
		if (cancelled)
			snprintf(stop, sizeof stop, "cancelled");
		else
			snprintf(stop, sizeof stop, "the time limit of %s "
			    "ended", secs);
		if (r->tried == 0 || r->tight_device < 0)
			pw_error_set(err, "plan: %s before any design %s%s",
			    stop, r->tried == 0 ? "was timed" :
			    "gave a schedule", cancelled ? "" :
			    " (raise the time limit)");
		else
			pw_error_set(err, "plan: %s before any design that "
			    "fits memory was timed%s; the nearest so far, on "
			    "device %d, needs %s of its %s", stop, cancelled ?
			    "" : " (raise the time limit)", r->tight_device,
			    pw_fmt_bytes(peak, sizeof peak, r->tight_peak),
			    pw_fmt_bytes(limit, sizeof limit, r->tight_limit));
	} else if (r->tight_device >= 0)
		pw_error_set(err, "plan: no design fits memory: the nearest, on "
		    "device %d, needs %s of its %s", r->tight_device,
		    pw_fmt_bytes(peak, sizeof peak, r->tight_peak),
		    pw_fmt_bytes(limit, sizeof limit, r->tight_limit));
	else if (r->why_most >= 0)
		pw_error_set(err, "plan: no design fits memory: %s", r->why.msg);
	else
		pw_error_set(err, "plan: no family gives a schedule for this "
		    "problem");
}

/* Whether objectives A and B are one within the solver's tolerance. */
static bool
pw_planner_ties(double a, double b)
{
	return fabs(a - b) <= pw_solver_objective_tol(fmax(a, b));
}

/* Whether C's objective equals that of one of KEPT[0..N) and its peak
 * is no lower: a design the table already has in a leaner form (for
 * example selective recomputation, which costs no compute in the model,
 * beside none at the same step time). */
static bool
pw_planner_folded(const struct pw_planner_candidate *kept, size_t n,
    const struct pw_planner_candidate *c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pw_planner_ties(c->objective, kept[i].objective) &&
		    c->peak >= kept[i].peak)
			return true;
	return false;
}

/* Fills RES with R's best candidates, at most R->o.top after folding
 * equal objectives (pw_planner_folded); a later candidate leaner than
 * the kept ones of its objective takes their place. */
static int
pw_planner_results(struct pw_planner_run *r, struct pw_planner_result *res,
    struct pw_error *err)
{
	struct pw_planner_slot **v;
	struct pw_planner_candidate c;
	size_t i, j, n, k = 0;
	int rc = PW_OK;

	v = pw_planner_ranked(r, &n);
	if (n == 0) {
		free(v);
		pw_planner_none(r, err);
		return PW_ERR_INPUT;
	}
	res->cand = pw_xcalloc(r->o.top, sizeof *res->cand);
	for (i = 0; i < n; i++) {
		/* Ranked by objective: past a tie with the last kept one,
		 * none can take a place any more. */
		if (k == r->o.top && !pw_planner_ties(v[i]->objective,
		    res->cand[k - 1].objective))
			break;
		if ((rc = pw_planner_check(r, v[i], &c, err)) != PW_OK) {
			pw_planner_candidate_free(&c);
			break;
		}
		if (pw_planner_folded(res->cand, k, &c)) {
			pw_planner_candidate_free(&c);
			continue;
		}
		for (j = 0; j < k; )
			if (pw_planner_ties(c.objective, res->cand[j].objective)) {
				pw_planner_candidate_free(&res->cand[j]);
				memmove(&res->cand[j], &res->cand[j + 1],
				    (k - j - 1) * sizeof *res->cand);
				k--;
			} else
				j++;
		if (k == r->o.top)
			pw_planner_candidate_free(&c);
		else
			res->cand[k++] = c;
	}
	res->ncand = k;
	free(v);
	if (rc != PW_OK)
		pw_planner_result_free(res);
	return rc;
}

/* Runs R (its problem or origin set) into RES. */
static int
pw_planner_go(struct pw_planner_run *r, const struct pw_planner_opts *o,
    struct pw_planner_result *res, struct pw_error *err)
{
	int rc;

	r->o = *o;
	if (!(r->o.time_limit > 0))
		r->o.time_limit = 60;
	if (r->o.top == 0)
		r->o.top = 10;
	r->t0 = r->last_tick = pw_now();
	r->deadline = r->t0 + r->o.time_limit;
	r->split_deadline = r->t0 + PW_PLANNER_SPLIT_SHARE * r->o.time_limit;
	r->moves = o->iteration_limit > 0 ? o->iteration_limit : -1;
	r->best = INFINITY;
	r->tight_share = INFINITY;
	r->tight_device = -1;
	r->why_most = -1;
	r->rate = pw_xcalloc(pw_nfamilies, sizeof *r->rate);
	rc = pw_planner_designs(r, err);
	if (rc == PW_OK)
		rc = pw_planner_search(r, err);
	if (rc == PW_OK)
		rc = pw_planner_results(r, res, err);
	if (rc == PW_OK) {
		res->tried = r->tried;
		res->builds = r->builds;
		res->skipped = r->skipped;
		res->split_fixed = r->origin == NULL;
		res->ended = pw_planner_cancelled(r) ? PW_END_CANCELLED :
		    r->timed_out ? PW_END_TIME : r->out_of_moves ?
		    PW_END_ITERATIONS : PW_END_SEARCHED;
		res->elapsed = pw_now() - r->t0;
		r->phase = "done";
		pw_planner_tick(r, res->cand[0].objective,
		    res->cand[0].schedule_name, true);
	}
	pw_planner_slots_free(r);
	free(r->rate);
	return rc;
}

int
pw_planner(const struct pw_problem *p, const struct pw_planner_opts *o,
    struct pw_planner_result *res, struct pw_error *err)
{
	struct pw_planner_run r;
	size_t i;
	int rc;

	memset(res, 0, sizeof *res);
	if (p != NULL && p->origin != NULL) {
		rc = pw_planner_model(&p->origin->model, &p->origin->hardware,
		    &p->origin->split, o, res, err);
		/* The candidates keep the problem's name, which a model's
		 * problem built again would take from its model and
		 * hardware ("gpt3-6.7b-8xH100-SXM" for the default one). */
		for (i = 0; p->name != NULL && i < res->ncand; i++) {
			free(res->cand[i].problem->name);
			res->cand[i].problem->name = pw_xstrdup(p->name);
		}
		return rc;
	}
	if ((rc = pw_solve_check_common("plan", o->objective, o->offload,
	    o->time_limit, o->iteration_limit, err)) != PW_OK ||
	    (rc = pw_problem_validate(p, "plan", err)) != PW_OK)
		return rc;
	memset(&r, 0, sizeof r);
	r.p = p;
	return pw_planner_go(&r, o, res, err);
}

int
pw_planner_model(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, const struct pw_planner_opts *o,
    struct pw_planner_result *res, struct pw_error *err)
{
	struct pw_planner_run r;
	struct pw_origin origin;
	int rc;

	memset(res, 0, sizeof *res);
	if ((rc = pw_solve_check_common("plan", o->objective, o->offload,
	    o->time_limit, o->iteration_limit, err)) != PW_OK ||
	    (rc = pw_cost_check(m, hw, sp, err)) != PW_OK)
		return rc;
	/* Borrowed: the designs copy what they need of it. */
	origin.model = *m;
	origin.hardware = *hw;
	origin.split = *sp;
	memset(&r, 0, sizeof r);
	r.origin = &origin;
	return pw_planner_go(&r, o, res, err);
}

char *
pw_planner_progress_text(const struct pw_planner_progress *pr, char *buf,
    size_t len)
{
	char best[96], skipped[48] = "", t[32], elapsed[32];

	if (isfinite(pr->best))
		snprintf(best, sizeof best, "best %s (%s)", pw_fmt_seconds(t,
		    sizeof t, pr->best), pr->best_name != NULL ?
		    pr->best_name : "?");
	else
		snprintf(best, sizeof best, "none fits yet");
	if (pr->skipped > 0)
		snprintf(skipped, sizeof skipped, ", %zu skipped for time",
		    pr->skipped);
	snprintf(buf, len, "%zu candidate%s (%zu build%s%s), %s, %s, %s",
	    pr->tried, pr->tried == 1 ? "" : "s", pr->builds,
	    pr->builds == 1 ? "" : "s", skipped, best, pr->phase,
	    pw_fmt_seconds(elapsed, sizeof elapsed, pr->elapsed));
	return buf;
}
