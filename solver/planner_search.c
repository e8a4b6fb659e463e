/*
 * planner_search.c - the planner's three phases (planner.c says what they
 * are): splits timed exactly with every family of a layout, the split
 * moves, and the optimizer on the most promising designs.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "planner_int.h"
#include "search.h"

/* ------------------------------------------------------------------ */
/* Time, progress, stopping                                            */

void
pw_planner_tick(struct pw_planner_run *r, double best, const char *name,
    bool force)
{
	struct pw_planner_progress pr;
	double now = pw_now();

	if (r->o.progress == NULL || (!force && now - r->last_tick <
	    PW_PLANNER_TICK))
		return;
	r->last_tick = now;
	pr.tried = r->tried;
	pr.builds = r->builds;
	pr.skipped = r->skipped;
	pr.best = best;
	pr.best_name = isfinite(best) ? name : NULL;
	pr.elapsed = now - r->t0;
	pr.phase = r->phase;
	r->o.progress(&pr, r->o.progress_arg);
}

bool
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
	if (pw_now() >= until) {
		r->timed_out = true;
		return true;
	}
	return false;
}

/* When the families must stop: at the split moves' deadline (half the
 * limit) once some design has a schedule for the optimizer to work on,
 * else at the limit. */
static double
pw_planner_families_until(const struct pw_planner_run *r)
{
	return isfinite(r->best) ? r->split_deadline : r->deadline;
}

/* Whether SCHED's transfers suit SL's design: none without offload (a
 * problem with given stages keeps its link in every design), some where
 * SL needs them. */
static bool
pw_planner_moves_ok(const struct pw_planner_slot *sl,
    const struct pw_schedule *sched)
{
	bool moves = pw_solver_moves(sched);

	return sl->design.offload ? moves || !sl->need_transfer : !moves;
}

static enum pw_layout
pw_planner_layout(const struct pw_design *d)
{
	if (d->placement == PW_PLACE_V)
		return PW_LAYOUT_V;
	return d->chunks == 1 ? PW_LAYOUT_SINGLE : PW_LAYOUT_LOOP;
}

/* Notes OBJECTIVE, of the schedule NAME, as the best so far when it is. */
static void
pw_planner_best(struct pw_planner_run *r, double objective, const char *name)
{
	if (objective < r->best) {
		r->best = objective;
		snprintf(r->best_name, sizeof r->best_name, "%s", name);
	}
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
	pw_planner_best(r, objective, name);
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
	share = pw_metrics_share(q, m, d);
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
 * Work on a thread of its own.  A family cannot be stopped, and one build
 * of a large problem takes seconds (zb-auto on 32 devices x 32,000
 * microbatches, 80 s), as do a bound and a candidate's checks there; so
 * the planner's thread keeps reporting, watching the clock and the cancel
 * flag while the work runs, and may leave it: the job is owned by both
 * (REFS) and freed by the last to let go.
 */
struct pw_planner_job {
	void	(*work)(void *);
	void	(*drop)(void *);	/* frees ARG when the planner left */
	void	*arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int	refs;
	bool	done;			/* under the lock */
	bool	left;			/* under the lock */
};

static void
pw_planner_job_release(struct pw_planner_job *j)
{
	if (!pw_solver_unref(&j->lock, &j->cond, &j->refs))
		return;
	free(j);
}

static void *
pw_planner_job_run(void *arg)
{
	struct pw_planner_job *j = arg;
	bool left;

	j->work(j->arg);
	pthread_mutex_lock(&j->lock);
	j->done = true;
	left = j->left;
	pthread_cond_signal(&j->cond);
	pthread_mutex_unlock(&j->lock);
	if (left)
		j->drop(j->arg);
	pw_planner_job_release(j);
	return NULL;
}

/* Waits up to PW_PLANNER_POLL seconds for J.  Returns whether it is done,
 * else marks it left when LEAVE. */
static bool
pw_planner_job_wait(struct pw_planner_job *j, bool leave)
{
	bool done;

	pthread_mutex_lock(&j->lock);
	if (!j->done)
		pw_sync_wait(&j->cond, &j->lock, PW_PLANNER_POLL);
	done = j->done;
	if (!done && leave)
		j->left = true;
	pthread_mutex_unlock(&j->lock);
	return done;
}

int
pw_planner_thread(struct pw_planner_run *r, void (*work)(void *),
    void (*drop)(void *), void *arg, double leave, struct pw_error *err)
{
	struct pw_planner_job *j = pw_xcalloc(1, sizeof *j);
	pthread_t th;
	bool done = false, go;

	j->work = work;
	j->drop = drop;
	j->arg = arg;
	j->refs = 2;
	pw_sync_init(&j->lock, &j->cond);
	if (pw_thread_start(&th, pw_planner_job_run, j) != 0) {
		j->refs = 1;
		pw_planner_job_release(j);
		pw_error_set(err, "plan: no thread to work on");
		return PW_ERR_INTERNAL;
	}
	pthread_detach(th);
	for (;;) {
		go = isfinite(leave) && (pw_planner_cancelled(r) ||
		    pw_now() >= leave);
		if ((done = pw_planner_job_wait(j, go)) || go)
			break;
		pw_planner_tick(r, r->best, r->best_name, false);
	}
	pw_planner_job_release(j);
	return done ? 1 : 0;
}

/* A family's build and pw_planner_shave where its schedule is over its
 * limits, moves nothing, and its OBJECTIVE is below SHAVE_BELOW (shaving
 * moves no compute op, so it never shortens a schedule): the job's own
 * problem Q, and what the build gave. */
struct pw_planner_build {
	const struct pw_family *fam;
	struct pw_problem *q;
	enum pw_objective objective;
	double	shave_below;
	int	rc;
	struct pw_plan *plan;	/* set only when RC is PW_OK */
	struct pw_error err;
};

static void
pw_planner_build_work(void *arg)
{
	struct pw_planner_build *b = arg;
	const struct pw_metrics *m;

	b->rc = pw_plan_family(b->fam, b->q, &b->plan, &b->err);
	if (b->rc != PW_OK)
		return;
	m = pw_plan_metrics(b->plan);
	if (!m->feasible && !pw_solver_moves(pw_plan_schedule(b->plan)) &&
	    pw_objective_value(b->objective, m) < b->shave_below)
		pw_planner_shave(&b->plan);
}

static void
pw_planner_build_drop(void *arg)
{
	struct pw_planner_build *b = arg;

	if (b->rc == PW_OK)
		pw_plan_free(b->plan);
	pw_problem_free(b->q);
	free(b);
}

/*
 * Builds family FAM (pw_families[I]) on Q into *PLAN (the caller's),
 * shaved where it is over its limits below SHAVE_BELOW (struct
 * pw_planner_build).  Skips a build that its family's measured seconds
 * per op say cannot end before UNTIL plus PW_PLANNER_OVERRUN, and leaves
 * one still running then or on cancel.  Returns the family's code, PW_OK
 * with *PLAN NULL when skipped or left, or PW_ERR_INTERNAL.
 */
static int
pw_planner_build_family(struct pw_planner_run *r, size_t i,
    const struct pw_problem *q, double shave_below, double until,
    struct pw_plan **plan, struct pw_error *err)
{
	struct pw_planner_build *b;
	double ops = (double)pw_op_universe(q), t0 = pw_now(), t;
	int rc;

	*plan = NULL;
	if (r->rate[i] > 0 && t0 + r->rate[i] * ops > until +
	    PW_PLANNER_OVERRUN) {
		r->skipped++;
		r->timed_out = true;
		return PW_OK;
	}
	b = pw_xcalloc(1, sizeof *b);
	b->fam = &pw_families[i];
	b->q = pw_problem_copy(q);
	b->objective = r->o.objective;
	b->shave_below = shave_below;
	rc = pw_planner_thread(r, pw_planner_build_work, pw_planner_build_drop,
	    b, until + PW_PLANNER_OVERRUN, err);
	if (rc < 0) {
		pw_planner_build_drop(b);
		return rc;
	}
	r->builds++;
	/* Seconds per op of this family: what the next build's estimate
	 * scales; at least what a left build has taken. */
	t = (pw_now() - t0) / ops;
	r->rate[i] = rc == 1 ? t : fmax(r->rate[i], t);
	if (rc == 0) {
		r->timed_out |= !pw_planner_cancelled(r);
		return PW_OK;
	}
	rc = b->rc;
	if (rc == PW_OK) {
		*plan = b->plan;
		b->plan = NULL;
	} else
		*err = b->err;
	pw_planner_build_drop(b);
	return rc;
}

/*
 * Keeps PLAN, built by family NAME, as SL's best of this split in *BEST
 * when it is feasible, its transfers suit SL and it beats *BEST_OBJ, or
 * ties it moving nothing where *BEST moves something (no PCIe traffic for
 * the same step time); else frees it.
 */
static void
pw_planner_offer(struct pw_planner_run *r, const struct pw_planner_slot *sl,
    struct pw_plan *plan, const char *name, struct pw_plan **best,
    double *best_obj, const char **best_name)
{
	const struct pw_metrics *m = pw_plan_metrics(plan);
	double obj = pw_objective_value(r->o.objective, m);
	bool better = obj < *best_obj || (obj == *best_obj && *best != NULL &&
	    !pw_solver_moves(pw_plan_schedule(plan)) &&
	    pw_solver_moves(pw_plan_schedule(*best)));

	if (!m->feasible || !better ||
	    !pw_planner_moves_ok(sl, pw_plan_schedule(plan))) {
		pw_plan_free(plan);
		return;
	}
	pw_plan_free(*best);
	*best = plan;
	*best_obj = obj;
	*best_name = name;
	/* The best so far already, for the reports while the next builds
	 * run (SL takes it at the end). */
	pw_planner_best(r, obj, name);
}

/*
 * Times every family of SL's layout (every family when the split is
 * fixed) on Q, which it frees, and keeps the best feasible schedule in SL
 * when it beats SL's; LAYERS is Q's split (NULL when fixed).  With the
 * link, a schedule over its limits that moves nothing is first shaved by
 * offloading (pw_planner_shave) where it could beat the split's best so
 * far and SL's.  Returns PW_OK, or PW_ERR_INTERNAL with ERR when a
 * family's schedule does not simulate (a bug).
 */
static int
pw_planner_time(struct pw_planner_run *r, struct pw_planner_slot *sl,
    struct pw_problem *q, const int *layers, struct pw_error *err)
{
	const struct pw_metrics *m;
	struct pw_plan *plan = NULL, *best = NULL;
	const char *best_fam = NULL;
	double best_obj = INFINITY, until;
	size_t i;
	int rc = PW_OK;
	/* Whether a build gave a plan, and whether one was skipped or left
	 * for time: a split timed by none is not a candidate tried. */
	bool built = false, cut = false;

	for (i = 0; i < pw_nfamilies; i++) {
		if (layers != NULL && pw_families[i].layout !=
		    pw_planner_layout(&sl->design))
			continue;
		until = pw_planner_families_until(r);
		/* Stopped before a build: the split is not timed. */
		if (pw_planner_stopped(r, until)) {
			cut = true;
			break;
		}
		rc = pw_planner_build_family(r, i, q, sl->design.offload ?
		    fmin(best_obj, sl->objective) : -INFINITY, until, &plan,
		    err);
		if (rc == PW_ERR_INTERNAL)
			goto out;
		cut |= rc == PW_OK && plan == NULL;
		rc = PW_OK;
		if (plan == NULL)
			continue;
		built = true;
		m = pw_plan_metrics(plan);
		if (!m->feasible)
			pw_planner_note_over(r, pw_plan_problem(plan), m);
		pw_planner_offer(r, sl, plan, pw_families[i].name, &best,
		    &best_obj, &best_fam);
		plan = NULL;
		pw_planner_tick(r, r->best, r->best_name, false);
	}
	if (built || !cut)
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
	if (pw_cost_problem(&sl->model, &r->origin->hardware, &sp, &q,
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

/* SP's balanced split of SL's model into LAYERS: with 1F1B's
 * activations in flight, else with one (what any schedule needs).
 * False, the reason kept for the error when nothing fits, when neither
 * fits. */
static bool
pw_planner_balance(struct pw_planner_run *r, const struct pw_planner_slot *sl,
    const struct pw_split *sp, int *layers)
{
	const struct pw_hardware *hw = &r->origin->hardware;
	struct pw_error why;
	int *ones = pw_xcalloc((size_t)sp->devices, sizeof *ones);
	char layout[32];
	double need;
	long most;
	bool ok;
	int d;

	for (d = 0; d < sp->devices; d++)
		ones[d] = 1;
	ok = pw_split_balance(&sl->model, hw, sp, NULL, layers, NULL,
	    &why) == PW_OK || pw_split_balance(&sl->model, hw, sp, ones,
	    layers, NULL, &why) == PW_OK;
	/* The reason kept is the design that holds the most layers, whose
	 * count bounds every design's; of those holding none, the one
	 * whose short device needs the least: the nearest to fitting.  A
	 * split of the design's model on one chunk (SP another split) is
	 * a design of its own, whose balance gives its own reason. */
	if (!ok && sp == &sl->split && ((most = pw_split_most_layers(
	    &sl->model, hw, sp, ones, &need)) > r->why_most ||
	    (most == 0 && r->why_most == 0 && need < r->why_need))) {
		pw_error_set(&r->why, "%s, %s recomputation: %s",
		    pw_design_layout_name(&sl->design, layout, sizeof layout),
		    sl->design.recompute == PW_RECOMPUTE_NONE ? "no" :
		    pw_recompute_label(sl->design.recompute), why.msg);
		r->why_most = most;
		r->why_need = need;
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
	if (pw_cost_problem(&sl->model, &r->origin->hardware, &sp, &q,
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
 * Times SL's starting splits: the split given (the given layout's
 * designs, where the problem has one), its even split, its balanced one
 * and, with several chunks, the even and the balanced one-chunk splits
 * shared among the chunks (what the families that split a model again
 * run), each once.  A problem with given stages is timed as it is, its
 * link kept (a design without offload only takes schedules that move
 * nothing).
 */
static int
pw_planner_start(struct pw_planner_run *r, struct pw_planner_slot *sl,
    struct pw_error *err)
{
	const int n = sl->split.devices * sl->split.chunks;
	struct pw_split one = sl->split, even = sl->split;
	int *start, *bal1, nstart = 0, i, j, s, rc = PW_OK;

	if (r->origin == NULL)
		return pw_planner_time(r, sl, pw_problem_copy(r->p), NULL,
		    err);
	start = pw_xcalloc(PW_PLANNER_STARTS * (size_t)n, sizeof *start);
	bal1 = pw_xcalloc((size_t)sl->split.devices, sizeof *bal1);
	even.layers_per_stage = NULL;
	if (sl->split.layers_per_stage != NULL)
		memcpy(start + n * nstart++, sl->split.layers_per_stage,
		    (size_t)n * sizeof *start);
	for (s = 0; s < n; s++)
		start[n * nstart + s] = pw_split_layers(&even,
		    sl->model.layers, s);
	nstart++;
	if (pw_planner_balance(r, sl, &sl->split, start + nstart * n))
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

/* One pw_solve of SL from its best schedule for SECONDS; of the given
 * problem from none (the solver's own starts and heuristic) where no
 * family's schedule of it fits. */
static int
pw_planner_solve(struct pw_planner_run *r, struct pw_planner_slot *sl,
    double seconds, struct pw_error *err)
{
	const struct pw_problem *q = sl->problem != NULL ? sl->problem : r->p;
	struct pw_solve_opts so;
	struct pw_solve_result res;
	bool improved;
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
	if ((rc = pw_solve(q, &so, &res, err)) != PW_OK) {
		sl->active = false;
		return rc == PW_ERR_INTERNAL ? rc : PW_OK;
	}
	sl->optimized = true;
	if (res.ended == PW_END_TIME)
		r->timed_out = true;
	/* A schedule the design does not take (one that moves nothing,
	 * in a design that must move something) is no improvement: the
	 * next run would find it again. */
	improved = res.objective < sl->objective &&
	    pw_planner_moves_ok(sl, res.schedule);
	sl->active = improved && !res.optimal &&
	    res.ended != PW_END_SEARCHED && res.ended != PW_END_CANCELLED;
	if (improved) {
		pw_planner_take(r, sl, q, res.schedule, "solve", NULL,
		    res.objective);
		res.schedule = NULL;
	}
	pw_solve_result_free(&res);
	return PW_OK;
}

/* Orders slot pointers by their key, then by design order. */
static int
pw_planner_cmp(const void *a, const void *b)
{
	const struct pw_planner_slot *x = *(const struct pw_planner_slot *const *)a;
	const struct pw_planner_slot *y = *(const struct pw_planner_slot *const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x > y) - (x < y);
}

/* Returns the slots that hold a schedule, best first, their count in *N
 * (an array the caller frees). */
struct pw_planner_slot **
pw_planner_ranked(const struct pw_planner_run *r, size_t *n)
{
	struct pw_planner_slot **v = pw_xcalloc(r->nslot + 1, sizeof *v);
	size_t i;

	*n = 0;
	for (i = 0; i < r->nslot; i++)
		if (r->slot[i].schedule != NULL) {
			r->slot[i].key = r->slot[i].objective;
			v[(*n)++] = &r->slot[i];
		}
	qsort(v, *n, sizeof *v, pw_planner_cmp);
	return v;
}

/* Where no family's schedule of the given problem fits (a tight limit
 * that only offloading the families never do meets), the optimizer from
 * no start on each of its designs, the time left shared: its heuristic
 * plans its own transfers. */
static int
pw_planner_rescue(struct pw_planner_run *r, struct pw_error *err)
{
	size_t i, left = r->nslot;
	int rc = PW_OK;

	for (i = 0; i < r->nslot && rc == PW_OK; i++, left--) {
		if (pw_planner_stopped(r, r->deadline))
			break;
		rc = pw_planner_solve(r, &r->slot[i], (r->deadline - pw_now()) /
		    (double)left, err);
	}
	return rc;
}

/* A design's bound on the job's own copy Q of its problem, with
 * offloads where the design OFFLOADs. */
struct pw_planner_bound {
	struct pw_problem *q;
	enum pw_objective objective;
	bool	offload;
	double	bound;
};

static void
pw_planner_bound_work(void *arg)
{
	struct pw_planner_bound *b = arg;
	struct pw_bound_term terms[PW_BOUND_TERMS];

	pw_planner_bound_terms(b->q, b->offload, b->objective, terms);
	b->bound = terms[0].value;
}

static void
pw_planner_bound_drop(void *arg)
{
	struct pw_planner_bound *b = arg;

	pw_problem_free(b->q);
	free(b);
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
	struct pw_planner_bound *b;
	size_t n, i, k, end, left;
	int round, rc = PW_OK;
	double share;

	v = pw_planner_ranked(r, &n);
	if (n == 0 && r->origin == NULL) {
		rc = pw_planner_rescue(r, err);
		goto out;
	}
	for (i = k = 0; i < n; i++) {
		if (pw_planner_stopped(r, r->deadline))
			goto out;
		pw_planner_tick(r, r->best, r->best_name, false);
		b = pw_xcalloc(1, sizeof *b);
		b->q = pw_problem_copy(v[i]->problem);
		b->objective = r->o.objective;
		b->offload = v[i]->design.offload;
		if ((rc = pw_planner_thread(r, pw_planner_bound_work,
		    pw_planner_bound_drop, b, r->deadline + PW_PLANNER_OVERRUN,
		    err)) != 1) {
			if (rc < 0)
				pw_planner_bound_drop(b);
			else
				r->timed_out |= !pw_planner_cancelled(r);
			goto out;
		}
		rc = PW_OK;
		v[i]->key = (v[i]->objective + b->bound) / 2;
		if (!pw_objective_meets_bound(v[i]->objective, b->bound))
			v[k++] = v[i];
		pw_planner_bound_drop(b);
	}
	n = k;
	qsort(v, n, sizeof *v, pw_planner_cmp);
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
				share = (r->deadline - pw_now()) /
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

/* The three phases on R's designs. */
int
pw_planner_search(struct pw_planner_run *r, struct pw_error *err)
{
	struct pw_planner_slot **v;
	size_t i, n;
	int rc = PW_OK;

	r->phase = "families";
	pw_planner_tick(r, r->best, r->best_name, true);
	for (i = 0; i < r->nslot && rc == PW_OK; i++) {
		if (pw_planner_stopped(r, pw_planner_families_until(r)))
			goto optimize;
		rc = pw_planner_start(r, &r->slot[i], err);
	}
	if (rc != PW_OK || r->origin == NULL)
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
