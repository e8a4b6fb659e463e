/*
 * planner.c - the planner: the fastest design within memory for a model.
 *
 * A design is a layout (stages per device, loop or V placement), a
 * recomputation choice and whether the PCIe link is used.  Each design
 * gets its own problem built from the model (pw_cost_problem with the
 * design's split), never one a family splits again, so that a design is
 * what it says.  The search runs in three phases on one thread:
 *
 *   families: every design's even split and its balanced split
 *	(pw_split_balance), each timed exactly with every family of its
 *	layout (built, simulated, measured); a split counts by its best
 *	feasible family's objective;
 *   splits: from each design's best split, the best of the moves of one
 *	layer between neighbouring stages, repeated while it improves,
 *	designs in order of their objective (at most half the time);
 *   optimizer: pw_solve from the best schedules of the most promising
 *	designs; a round gives each one still improving a share of the
 *	time left, so the time goes where it improves.
 *
 * docs/planner.md states what is searched and what the numbers mean.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "search.h"
#include "solver.h"

/* Stages per device tried besides the model's one layer per chunk: 1, 2,
 * 4 and 8.  More chunks add a hop per chunk for a bubble already small at
 * 8, and the number of ops to time grows with them. */
#define PW_PLANNER_MAX_CHUNKS	8
/* Designs the optimizer works on at a time, and its rounds over them. */
#define PW_PLANNER_OPTIMIZE	3
#define PW_PLANNER_ROUNDS	3
/* Seconds between progress reports (the contract asks for one a second). */
#define PW_PLANNER_TICK		0.25
/* The designs the split moves climb from: those within 10% of the best
 * after the families (their starts include the balanced splits; the rest
 * rarely climb that far, and the optimizer has better use for the time). */
#define PW_PLANNER_CLIMB	1.1
/* The share of the time limit the families and the split moves may use
 * when the optimizer has designs to work on. */
#define PW_PLANNER_SPLIT_SHARE	0.5

/* One design and the best it has found. */
struct pw_planner_slot {
	struct pw_design design;	/* its layers: the best split's */
	struct pw_model model;		/* the origin's, this recomputation */
	struct pw_split split;		/* the origin's, this layout */
	/* The design uses the link where another design, without it, is
	 * searched too: only schedules that move something count. */
	bool	need_transfer;
	struct pw_problem *problem;	/* the best schedule's; NULL: none */
	struct pw_schedule *schedule;
	char	name[32];
	double	objective;		/* INFINITY: none yet */
	bool	optimized;
	bool	active;			/* the optimizer's to work on */
	/* Midway between the objective and the bound: the optimizer's order
	 * (a low bound promises, a schedule far above it may not get there) */
	double	promise;
};

struct pw_planner_run {
	const struct pw_problem *p;
	struct pw_planner_opts o;
	double	t0, deadline, split_deadline;
	long	moves;			/* split moves left; -1: no limit */
	size_t	tried;
	double	best;
	char	best_name[32];
	double	last_tick;
	const char *phase;
	bool	timed_out, out_of_moves;
	struct pw_planner_slot *slot;
	size_t	nslot;
	/* Of the schedules over their limits, the least over: what the
	 * error says when no design fits. */
	double	tight_share;
	int	tight_device;
	double	tight_peak, tight_limit;
	struct pw_error why;		/* a design that has no split */
	bool	has_why;
};

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

void
pw_planner_result_free(struct pw_planner_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->ncand; i++) {
		free(r->cand[i].design.layers_per_stage);
		pw_problem_free(r->cand[i].problem);
		pw_schedule_free(r->cand[i].schedule);
	}
	free(r->cand);
	r->cand = NULL;
	r->ncand = 0;
}

char *
pw_design_layout_name(const struct pw_design *d, char *buf, size_t len)
{
	if (d->placement == PW_PLACE_V)
		snprintf(buf, len, "V");
	else if (d->chunks == 1)
		snprintf(buf, len, "1 chunk");
	else
		snprintf(buf, len, "loop x%d", d->chunks);
	return buf;
}

char *
pw_design_split_name(const struct pw_design *d, int nstages, char *buf,
    size_t len)
{
	char num[16];
	size_t at = 0, n;
	int s;

	assert(len >= 4);
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
/* Time, progress, stopping                                            */

static void
pw_planner_tick(struct pw_planner_run *r, double best, const char *name,
    bool force)
{
	struct pw_planner_progress pr;
	double now = pw_search_now();

	if (r->o.progress == NULL || (!force && now - r->last_tick <
	    PW_PLANNER_TICK))
		return;
	r->last_tick = now;
	pr.tried = r->tried;
	pr.best = best;
	pr.best_name = isfinite(best) ? name : NULL;
	pr.elapsed = now - r->t0;
	pr.phase = r->phase;
	r->o.progress(&pr, r->o.progress_arg);
}

static bool
pw_planner_cancelled(const struct pw_planner_run *r)
{
	return r->o.cancel != NULL && atomic_load(r->o.cancel) != 0;
}

/* Whether the search must stop before UNTIL (a phase's deadline). */
static bool
pw_planner_stopped(struct pw_planner_run *r, double until)
{
	if (pw_planner_cancelled(r))
		return true;
	if (pw_search_now() >= until) {
		r->timed_out = true;
		return true;
	}
	return false;
}

/* Whether SCHED moves any activation to the host. */
static bool
pw_planner_moves(const struct pw_schedule *sched)
{
	int c;

	for (c = 0; c < sched->nchannels; c++)
		if (sched->channel[c].len > 0)
			return true;
	return false;
}

static enum pw_layout
pw_planner_layout(const struct pw_design *d)
{
	if (d->placement == PW_PLACE_V)
		return PW_LAYOUT_V;
	return d->chunks == 1 ? PW_LAYOUT_SINGLE : PW_LAYOUT_LOOP;
}

/* Takes a schedule of OBJECTIVE for SL: a copy of PLAN's problem and
 * schedule, NAME, and LAYERS (NULL when the split is fixed). */
static void
pw_planner_take(struct pw_planner_run *r, struct pw_planner_slot *sl,
    const struct pw_problem *q, struct pw_schedule *sched, const char *name,
    const int *layers, double objective)
{
	struct pw_problem *copy = pw_problem_copy(q);
	size_t n;

	/* Q may be SL's own problem: copied before it goes. */
	pw_problem_free(sl->problem);
	pw_schedule_free(sl->schedule);
	sl->problem = copy;
	sl->schedule = sched;
	snprintf(sl->name, sizeof sl->name, "%s", name);
	sl->objective = objective;
	if (layers != NULL && layers != sl->design.layers_per_stage) {
		n = (size_t)q->nstages;
		memcpy(sl->design.layers_per_stage, layers, n * sizeof *layers);
	}
	if (objective < r->best) {
		r->best = objective;
		snprintf(r->best_name, sizeof r->best_name, "%s", name);
	}
}

/* Remembers how far over its limit an infeasible schedule is, for the
 * error when nothing fits. */
static void
pw_planner_note_over(struct pw_planner_run *r, const struct pw_problem *q,
    const struct pw_metrics *m)
{
	double share;
	int d = pw_metrics_tightest(q, m, NULL);

	if (d < 0)
		return;
	share = m->device[d].peak / q->memory[d].limit;
	if (share < r->tight_share) {
		r->tight_share = share;
		r->tight_device = d;
		r->tight_peak = m->device[d].peak;
		r->tight_limit = q->memory[d].limit;
	}
}

/* PLAN's schedule with activations offloaded where they lower a
 * device's peak (pw_offload_plan's peak shaving: no compute op moves, so
 * the makespan stays), replacing *PLAN when that times; for a design with
 * the link whose family keeps everything on the device. */
static void
pw_planner_shave(struct pw_plan **plan)
{
	struct pw_offload_opts oo = { PW_OFFSEL_PEAK, 1.0, NULL };
	struct pw_schedule *sched = pw_schedule_copy(pw_plan_schedule(*plan));
	const struct pw_problem *q = pw_plan_problem(*plan);
	struct pw_plan *shaved;
	struct pw_error err;

	if (pw_offload_plan(q, sched, &oo, &err) != PW_OK) {
		pw_schedule_free(sched);
		return;
	}
	if (pw_plan_new(pw_problem_copy(q), sched, &shaved, &err) != PW_OK)
		return;
	pw_plan_free(*plan);
	*plan = shaved;
}

/*
 * Times every family of SL's layout (every family when the split is
 * fixed) on Q, which it frees, and keeps the best feasible schedule in SL
 * when it beats SL's (with the link, a schedule over its limits is shaved
 * by offloading first); LAYERS is Q's split (NULL when fixed).  Returns
 * PW_OK, or PW_ERR_INTERNAL with ERR when a family's schedule does not
 * simulate (a bug).
 */
static int
pw_planner_time(struct pw_planner_run *r, struct pw_planner_slot *sl,
    struct pw_problem *q, const int *layers, struct pw_error *err)
{
	const struct pw_family *fam;
	const struct pw_metrics *m;
	struct pw_plan *plan = NULL, *best = NULL;
	const char *best_fam = NULL;
	double obj, best_obj = INFINITY;
	size_t i;
	int rc = PW_OK;

	for (i = 0; i < pw_nfamilies; i++) {
		fam = &pw_families[i];
		if (layers != NULL && fam->layout !=
		    pw_planner_layout(&sl->design))
			continue;
		if (pw_planner_stopped(r, r->deadline))
			break;
		if ((rc = pw_plan_family(fam, q, &plan, err)) != PW_OK) {
			if (rc == PW_ERR_INTERNAL)
				goto out;
			rc = PW_OK;
			continue;
		}
		m = pw_plan_metrics(plan);
		if (sl->design.offload && !m->feasible &&
		    !pw_planner_moves(pw_plan_schedule(plan))) {
			pw_planner_shave(&plan);
			m = pw_plan_metrics(plan);
		}
		obj = pw_objective_value(r->o.objective, m);
		if (!m->feasible)
			pw_planner_note_over(r, pw_plan_problem(plan), m);
		if (m->feasible && obj < best_obj && (!sl->need_transfer ||
		    pw_planner_moves(pw_plan_schedule(plan)))) {
			pw_plan_free(best);
			best = plan;
			best_obj = obj;
			best_fam = fam->name;
		} else
			pw_plan_free(plan);
		plan = NULL;
		pw_planner_tick(r, fmin(r->best, best_obj), best_obj < r->best ?
		    best_fam : r->best_name, false);
	}
	r->tried++;
	if (best != NULL && best_obj < sl->objective)
		pw_planner_take(r, sl, pw_plan_problem(best),
		    pw_schedule_copy(pw_plan_schedule(best)), best_fam, layers,
		    best_obj);
out:
	pw_plan_free(best);
	pw_problem_free(q);
	return rc;
}

/* SL's problem with LAYERS, or NULL when the split does not validate
 * (a stage over its device's limit on its own). */
static struct pw_problem *
pw_planner_build(const struct pw_planner_run *r,
    const struct pw_planner_slot *sl, const int *layers)
{
	struct pw_split sp = sl->split;
	struct pw_problem *q;
	struct pw_error err;

	sp.layers_per_stage = layers;
	if (pw_cost_problem(&sl->model, &r->p->origin->hardware, &sp, &q,
	    &err) != PW_OK)
		return NULL;
	return q;
}

/* Times LAYERS for SL when it builds.  Returns pw_planner_time's code. */
static int
pw_planner_try(struct pw_planner_run *r, struct pw_planner_slot *sl,
    const int *layers, struct pw_error *err)
{
	struct pw_problem *q = pw_planner_build(r, sl, layers);

	return q == NULL ? PW_OK : pw_planner_time(r, sl, q, layers, err);
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
	if (r->o.offload == PW_OFFMODE_ON && !has_link) {
		pw_error_set(err, "plan: offload on: the problem has no offload "
		    "link (its hardware names no PCIe bandwidth)");
		return PW_ERR_INPUT;
	}
	return PW_OK;
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
	d.recompute = PW_RECOMPUTE_NONE;
	for (k = 0; k < 2; k++)
		if (use[k]) {
			d.offload = k == 1;
			pw_planner_add(r, &d, NULL, NULL, k == 1 && use[0]);
		}
	return PW_OK;
}

/* The chunk counts to try: 1, 2, 4, ... up to PW_PLANNER_MAX_CHUNKS,
 * and one layer per chunk (as families splitting the model again have
 * it), each with at least one layer a stage.  Returns how many. */
static int
pw_planner_chunk_counts(int layers, int devices, int out[8])
{
	int n = 0, v, fine = layers / devices;

	for (v = 1; v <= PW_PLANNER_MAX_CHUNKS && v * devices <= layers;
	    v *= 2)
		out[n++] = v;
	if (fine > PW_PLANNER_MAX_CHUNKS)
		out[n++] = fine;
	return n;
}

/* The designs of a problem built from a model: recomputation, chunks,
 * placement and link.  Returns PW_OK or the links' error. */
static int
pw_planner_model_designs(struct pw_planner_run *r, struct pw_error *err)
{
	static const enum pw_recompute recompute[] = { PW_RECOMPUTE_NONE,
	    PW_RECOMPUTE_PIPEOFFLOAD, PW_RECOMPUTE_FULL };
	const struct pw_origin *o = r->p->origin;
	struct pw_design d;
	struct pw_model m;
	struct pw_split sp;
	bool use[2], has_link;
	int counts[8], ncounts, i, k, rc, pl, places;
	size_t ri;

	has_link = o->hardware.pcie_d2h > 0 && o->hardware.pcie_h2d > 0;
	if ((rc = pw_planner_links(r, has_link, use, err)) != PW_OK)
		return rc;
	ncounts = pw_planner_chunk_counts(o->model.layers, o->split.devices,
	    counts);
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
					sp.layers_per_stage = NULL;
					memset(&d, 0, sizeof d);
					d.chunks = sp.chunks;
					d.placement = sp.placement;
					d.recompute = m.recompute;
					d.offload = sp.offload;
					d.layers_per_stage = pw_xcalloc(
					    (size_t)(sp.devices * sp.chunks),
					    sizeof *d.layers_per_stage);
					pw_planner_add(r, &d, &m, &sp,
					    k == 1 && use[0]);
				}
		}
	return PW_OK;
}

/* SP's balanced split of SL's model into LAYERS: with 1F1B's
 * activations in flight, else with one (what any schedule needs).
 * False, the reason kept for the error when nothing fits, when neither
 * fits. */
static bool
pw_planner_balance(struct pw_planner_run *r, const struct pw_planner_slot *sl,
    const struct pw_split *sp, int *layers)
{
	const struct pw_hardware *hw = &r->p->origin->hardware;
	struct pw_error why;
	int *ones = pw_xcalloc((size_t)sp->devices, sizeof *ones);
	bool ok;
	int d;

	for (d = 0; d < sp->devices; d++)
		ones[d] = 1;
	ok = pw_split_balance(&sl->model, hw, sp, NULL, layers, NULL,
	    &why) == PW_OK || pw_split_balance(&sl->model, hw, sp, ones,
	    layers, NULL, &why) == PW_OK;
	if (!ok && !r->has_why) {
		r->why = why;
		r->has_why = true;
	}
	free(ones);
	return ok;
}

/* The one-chunk split ONE (NULL: even) as SL's layout shares it (each
 * device keeps its layers: pw_problem_resplit), into LAYERS: what a
 * family splitting that model again would run.  False when it does not
 * split so. */
static bool
pw_planner_reshare(const struct pw_planner_run *r,
    const struct pw_planner_slot *sl, const int *one, int *layers)
{
	struct pw_split sp = sl->split;
	struct pw_problem *q, *q2;
	struct pw_error err;
	bool ok;

	sp.chunks = 1;
	sp.placement = PW_PLACE_LOOP;
	sp.layers_per_stage = one;
	/* Only the layers are wanted: no limit can refuse them. */
	sp.memory_limit = DBL_MAX;
	if (pw_cost_problem(&sl->model, &r->p->origin->hardware, &sp, &q,
	    &err) != PW_OK)
		return false;
	ok = pw_problem_resplit(q, sl->split.placement, sl->split.chunks, &q2,
	    &err) == PW_OK && q2->origin->split.layers_per_stage != NULL;
	if (ok)
		memcpy(layers, q2->origin->split.layers_per_stage,
		    (size_t)q2->nstages * sizeof *layers);
	pw_problem_free(q2);
	pw_problem_free(q);
	return ok;
}

/*
 * Times SL's starting splits: its even split, its balanced one and, with
 * several chunks, the even and the balanced one-chunk splits shared among
 * the chunks (what the families that split a model again run), each
 * once.  A problem with given stages is timed as it is (without its link
 * where SL does not use it).
 */
static int
pw_planner_start(struct pw_planner_run *r, struct pw_planner_slot *sl,
    struct pw_error *err)
{
	const int n = sl->split.devices * sl->split.chunks;
	struct pw_split one = sl->split;
	struct pw_problem *q;
	int *start, *bal1, nstart = 0, i, j, s, rc = PW_OK;

	if (r->p->origin == NULL) {
		q = pw_problem_copy(r->p);
		if (!sl->design.offload)
			q->link.present = false;
		return pw_planner_time(r, sl, q, NULL, err);
	}
	start = pw_xcalloc(4 * (size_t)n, sizeof *start);
	bal1 = pw_xcalloc((size_t)sl->split.devices, sizeof *bal1);
	for (s = 0; s < n; s++)
		start[s] = pw_split_layers(&sl->split, sl->model.layers, s);
	nstart = 1;
	if (pw_planner_balance(r, sl, &sl->split, start + n))
		nstart++;
	if (sl->split.chunks > 1) {
		one.chunks = 1;
		one.placement = PW_PLACE_LOOP;
		if (pw_planner_reshare(r, sl, NULL, start + nstart * n))
			nstart++;
		if (pw_planner_balance(r, sl, &one, bal1) &&
		    pw_planner_reshare(r, sl, bal1, start + nstart * n))
			nstart++;
	}
	for (i = 0; i < nstart && rc == PW_OK; i++) {
		for (j = 0; j < i; j++)
			if (memcmp(start + i * n, start + j * n, (size_t)n *
			    sizeof *start) == 0)
				break;
		if (j == i)
			rc = pw_planner_try(r, sl, start + i * n, err);
	}
	free(bal1);
	free(start);
	return rc;
}

/* The best of the moves of one layer between neighbouring stages from
 * SL's best split, again while it improves. */
static int
pw_planner_climb(struct pw_planner_run *r, struct pw_planner_slot *sl,
    struct pw_error *err)
{
	const int n = sl->problem->nstages;
	int *base = pw_xcalloc((size_t)n, sizeof *base);
	int *move = pw_xcalloc((size_t)n, sizeof *move);
	int s, dir, from, rc = PW_OK;
	double before;

	for (;;) {
		memcpy(base, sl->design.layers_per_stage, (size_t)n *
		    sizeof *base);
		before = sl->objective;
		for (s = 0; s + 1 < n; s++)
			for (dir = 0; dir < 2; dir++) {
				from = s + dir;
				if (base[from] <= 1)
					continue;
				if (pw_planner_stopped(r, r->split_deadline))
					goto out;
				if (r->moves == 0) {
					r->out_of_moves = true;
					goto out;
				}
				if (r->moves > 0)
					r->moves--;
				memcpy(move, base, (size_t)n * sizeof *move);
				move[from]--;
				move[dir == 0 ? s + 1 : s]++;
				if ((rc = pw_planner_try(r, sl, move, err)) !=
				    PW_OK)
					goto out;
			}
		if (!(sl->objective < before))
			break;
	}
out:
	free(move);
	free(base);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The optimizer                                                       */

static void
pw_planner_solve_progress(const struct pw_progress *pr, void *arg)
{
	struct pw_planner_run *r = arg;

	pw_planner_tick(r, fmin(r->best, pr->incumbent),
	    pr->incumbent < r->best ? "solve" : r->best_name, false);
}

/* One pw_solve of SL from its best schedule for SECONDS. */
static int
pw_planner_solve(struct pw_planner_run *r, struct pw_planner_slot *sl,
    double seconds, struct pw_error *err)
{
	struct pw_solve_opts so;
	struct pw_solve_result res;
	int rc;

	pw_solve_opts_init(&so);
	so.objective = r->o.objective;
	so.time_limit = seconds;
	so.iteration_limit = r->o.iteration_limit;
	so.seed = r->o.seed;
	so.offload = sl->design.offload ? PW_OFFMODE_AUTO : PW_OFFMODE_OFF;
	so.start = sl->schedule;
	so.progress = pw_planner_solve_progress;
	so.progress_arg = r;
	so.cancel = r->o.cancel;
	if ((rc = pw_solve(sl->problem, &so, &res, err)) != PW_OK) {
		sl->active = false;
		return rc == PW_ERR_INTERNAL ? rc : PW_OK;
	}
	sl->optimized = true;
	if (res.ended == PW_END_TIME)
		r->timed_out = true;
	sl->active = res.objective < sl->objective && !res.optimal &&
	    res.ended != PW_END_SEARCHED && res.ended != PW_END_CANCELLED;
	if (res.objective < sl->objective && (!sl->need_transfer ||
	    pw_planner_moves(res.schedule))) {
		pw_planner_take(r, sl, sl->problem, res.schedule, "solve", NULL,
		    res.objective);
		res.schedule = NULL;
	}
	pw_solve_result_free(&res);
	return PW_OK;
}

/* Orders slot pointers by objective, then by design order. */
static int
pw_planner_cmp(const void *a, const void *b)
{
	const struct pw_planner_slot *x = *(const struct pw_planner_slot *const *)a;
	const struct pw_planner_slot *y = *(const struct pw_planner_slot *const *)b;

	if (x->objective != y->objective)
		return x->objective < y->objective ? -1 : 1;
	return (x > y) - (x < y);
}

/* Returns the slots that hold a schedule, best first, their count in *N
 * (an array the caller frees). */
static struct pw_planner_slot **
pw_planner_ranked(const struct pw_planner_run *r, size_t *n)
{
	struct pw_planner_slot **v = pw_xcalloc(r->nslot + 1, sizeof *v);
	size_t i;

	*n = 0;
	for (i = 0; i < r->nslot; i++)
		if (r->slot[i].schedule != NULL)
			v[(*n)++] = &r->slot[i];
	qsort(v, *n, sizeof *v, pw_planner_cmp);
	return v;
}

/* Orders slot pointers by their promise, then by design order. */
static int
pw_planner_cmp_promise(const void *a, const void *b)
{
	const struct pw_planner_slot *x = *(const struct pw_planner_slot *const *)a;
	const struct pw_planner_slot *y = *(const struct pw_planner_slot *const *)b;

	if (x->promise != y->promise)
		return x->promise < y->promise ? -1 : 1;
	return (x > y) - (x < y);
}

/* The optimizer on the designs in order of their promise, a batch of
 * PW_PLANNER_OPTIMIZE at a time: rounds over the batch give each design
 * still improving a share of the time left; once none is, the next batch
 * gets what remains.  A design whose schedule meets its bound is left
 * out: it is optimal for its split and layout already. */
static int
pw_planner_optimize(struct pw_planner_run *r, struct pw_error *err)
{
	struct pw_planner_slot **v;
	size_t n, i, k, end, left;
	int round, rc = PW_OK;
	double share, bound;

	v = pw_planner_ranked(r, &n);
	for (i = k = 0; i < n; i++) {
		bound = pw_lower_bound(v[i]->problem, r->o.objective);
		v[i]->promise = (v[i]->objective + bound) / 2;
		if (v[i]->objective > bound * (1 + 1e-9))
			v[k++] = v[i];
	}
	n = k;
	qsort(v, n, sizeof *v, pw_planner_cmp_promise);
	for (k = 0; k < n; k = end) {
		end = n - k < PW_PLANNER_OPTIMIZE ? n : k + PW_PLANNER_OPTIMIZE;
		for (i = k; i < end; i++)
			v[i]->active = true;
		for (round = 0; round < PW_PLANNER_ROUNDS; round++) {
			for (left = 0, i = k; i < end; i++)
				left += v[i]->active;
			for (i = k; i < end && left > 0; i++) {
				if (!v[i]->active)
					continue;
				if (pw_planner_stopped(r, r->deadline))
					goto out;
				share = (r->deadline - pw_search_now()) /
				    (double)left;
				left--;
				if ((rc = pw_planner_solve(r, v[i], share,
				    err)) != PW_OK)
					goto out;
			}
		}
	}
out:
	free(v);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The result                                                          */

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
	c->bound = pw_lower_bound(c->problem, r->o.objective);
	c->gap = c->objective > 0 ? (c->objective - c->bound) / c->objective :
	    0;
	if (c->gap < 0)
		c->gap = 0;
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

/* Why no design has a schedule: cancelled, a split that fits nothing,
 * or the schedule nearest its limit. */
static void
pw_planner_none(const struct pw_planner_run *r, struct pw_error *err)
{
	char peak[32], limit[32];

	if (pw_planner_cancelled(r))
		pw_error_set(err, "plan: cancelled before any design was timed");
	else if (r->tight_device >= 0)
		pw_error_set(err, "plan: no design fits memory: the nearest, on "
		    "device %d, needs %s of its %s", r->tight_device,
		    pw_fmt_bytes(peak, sizeof peak, r->tight_peak),
		    pw_fmt_bytes(limit, sizeof limit, r->tight_limit));
	else if (r->has_why)
		pw_error_set(err, "plan: no design fits memory: %s", r->why.msg);
	else
		pw_error_set(err, "plan: no family gives a schedule for this "
		    "problem");
}

static int
pw_planner_check_opts(const struct pw_planner_opts *o, struct pw_error *err)
{
	if (o->objective != PW_OBJ_MAKESPAN && o->objective != PW_OBJ_SPAN) {
		pw_error_set(err, "plan: objective: unknown choice %d",
		    (int)o->objective);
		return PW_ERR_INPUT;
	}
	if (o->offload != PW_OFFMODE_AUTO && o->offload != PW_OFFMODE_ON &&
	    o->offload != PW_OFFMODE_OFF) {
		pw_error_set(err, "plan: offload: unknown choice %d",
		    (int)o->offload);
		return PW_ERR_INPUT;
	}
	if (isnan(o->time_limit)) {
		pw_error_set(err, "plan: time limit: must be a number of "
		    "seconds");
		return PW_ERR_INPUT;
	}
	if (o->iteration_limit < 0) {
		pw_error_set(err, "plan: iteration limit: must not be negative "
		    "(got %ld)", o->iteration_limit);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* The three phases on R's designs. */
static int
pw_planner_search(struct pw_planner_run *r, struct pw_error *err)
{
	struct pw_planner_slot **v;
	size_t i, n;
	int rc = PW_OK;

	r->phase = "families";
	pw_planner_tick(r, r->best, r->best_name, true);
	for (i = 0; i < r->nslot && rc == PW_OK; i++) {
		if (pw_planner_stopped(r, r->deadline))
			return PW_OK;
		rc = pw_planner_start(r, &r->slot[i], err);
	}
	if (rc != PW_OK || r->p->origin == NULL)
		goto optimize;
	r->phase = "splits";
	pw_planner_tick(r, r->best, r->best_name, true);
	v = pw_planner_ranked(r, &n);
	for (i = 0; i < n && rc == PW_OK; i++) {
		if (pw_planner_stopped(r, r->split_deadline) || r->out_of_moves)
			break;
		if (v[i]->objective <= PW_PLANNER_CLIMB * v[0]->objective)
			rc = pw_planner_climb(r, v[i], err);
	}
	free(v);
optimize:
	if (rc != PW_OK || pw_planner_cancelled(r))
		return rc;
	r->phase = "optimizer";
	pw_planner_tick(r, r->best, r->best_name, true);
	return pw_planner_optimize(r, err);
}

int
pw_planner(const struct pw_problem *p, const struct pw_planner_opts *o,
    struct pw_planner_result *res, struct pw_error *err)
{
	struct pw_planner_run r;
	struct pw_planner_slot **v = NULL;
	size_t i, n = 0;
	int rc;

	memset(res, 0, sizeof *res);
	if ((rc = pw_planner_check_opts(o, err)) != PW_OK ||
	    (rc = pw_problem_validate(p, "plan", err)) != PW_OK)
		return rc;
	memset(&r, 0, sizeof r);
	r.p = p;
	r.o = *o;
	if (!(r.o.time_limit > 0))
		r.o.time_limit = 60;
	if (r.o.top == 0)
		r.o.top = 10;
	r.t0 = r.last_tick = pw_search_now();
	r.deadline = r.t0 + r.o.time_limit;
	r.split_deadline = r.t0 + PW_PLANNER_SPLIT_SHARE * r.o.time_limit;
	r.moves = o->iteration_limit > 0 ? o->iteration_limit : -1;
	r.best = INFINITY;
	r.tight_share = INFINITY;
	r.tight_device = -1;
	rc = p->origin != NULL ? pw_planner_model_designs(&r, err) :
	    pw_planner_fixed_designs(&r, err);
	if (rc == PW_OK)
		rc = pw_planner_search(&r, err);
	if (rc != PW_OK)
		goto out;
	v = pw_planner_ranked(&r, &n);
	if (n == 0) {
		pw_planner_none(&r, err);
		rc = PW_ERR_INPUT;
		goto out;
	}
	if (n > r.o.top)
		n = r.o.top;
	res->cand = pw_xcalloc(n, sizeof *res->cand);
	for (i = 0; i < n; i++) {
		if ((rc = pw_planner_candidate(&r, v[i], &res->cand[i],
		    err)) != PW_OK) {
			res->ncand = i + 1;
			pw_planner_result_free(res);
			goto out;
		}
		res->ncand = i + 1;
	}
	res->tried = r.tried;
	res->split_fixed = p->origin == NULL;
	res->ended = pw_planner_cancelled(&r) ? PW_END_CANCELLED :
	    r.timed_out ? PW_END_TIME : r.out_of_moves ? PW_END_ITERATIONS :
	    PW_END_SEARCHED;
	res->elapsed = pw_search_now() - r.t0;
	r.phase = "done";
	pw_planner_tick(&r, res->cand[0].objective, res->cand[0].schedule_name,
	    true);
out:
	free(v);
	for (i = 0; i < r.nslot; i++) {
		free(r.slot[i].design.layers_per_stage);
		pw_problem_free(r.slot[i].problem);
		pw_schedule_free(r.slot[i].schedule);
	}
	free(r.slot);
	return rc;
}
