/*
 * milp.c - builds the model of a request (milp_graph.c), picks a
 * formulation, solves it with lp_solve and turns the solution back into a
 * schedule.
 *
 * The simulator, not the model, has the last word: the solution's starts
 * only order each resource and place the reload anchors; the rebuilt
 * schedule is simulated, must pass the independent checker (anything else
 * is a bug here) and is returned only when it is within every limit and
 * strictly better than the incumbent.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lpsolve/lp_lib.h>

#include "milp_int.h"

/* What the abort callback watches. */
struct pw_milp_clock {
	double	t0;		/* pw_now */
	double	limit;
	long	iteration_limit;
	long	iterations;	/* of the solves before this one */
	atomic_int *cancel;
};

/* lp_solve polls this often (also inside long simplex runs); non-zero
 * stops the solve with the best solution so far.  LP is NULL between
 * solves. */
static int __WINAPI
pw_milp_abort(lprec *lp, void *arg)
{
	struct pw_milp_clock *clock = arg;
	long iterations = clock->iterations;

	if (lp != NULL)
		iterations += (long)get_total_iter(lp);

	return (clock->cancel != NULL && *clock->cancel) ||
	    (clock->iteration_limit > 0 &&
	    iterations >= clock->iteration_limit) ||
	    pw_now() - clock->t0 >= clock->limit;
}

/* Returns lp_solve's copy of the collected model (the caller deletes it),
 * or NULL when lp_solve cannot take it or CANCEL was set meanwhile (a
 * large model takes a while: rows go in one at a time). */
static lprec *
pw_milp_lp(const struct pw_lpb *b, atomic_int *cancel)
{
	lprec *lp;
	REAL weight[2] = { 1, b->tieweight };
	int c, r, objcols[2] = { b->objcol, b->tiecol };

	if ((lp = make_lp(0, b->ncols)) == NULL)
		return NULL;
	/* Otherwise lp_solve prints to stdout while it solves. */
	set_verbose(lp, NEUTRAL);
	for (c = 1; c <= b->ncols; c++) {
		const struct pw_lpcol *col = &b->col[c];

		if (!set_bounds(lp, c, col->lo, col->hi) ||
		    !set_int(lp, c, col->integer) ||
		    (col->name != NULL && !set_col_name(lp, c, col->name)) ||
		    (col->branch != 0 && !set_var_branch(lp, c,
		    col->branch > 0 ? BRANCH_CEILING : BRANCH_FLOOR)))
			goto fail;
	}
	if (!set_add_rowmode(lp, TRUE))
		goto fail;
	for (r = 0; r < b->nrows; r++) {
		size_t at = b->rowstart[r];

		if (r % 4096 == 0 && cancel != NULL && *cancel)
			goto fail;
		if (!add_constraintex(lp, (int)(b->rowstart[r + 1] - at),
		    b->val + at, b->idx + at, b->rowtype[r], b->rhs[r]))
			goto fail;
	}
	if (!set_add_rowmode(lp, FALSE) ||
	    !set_obj_fnex(lp, b->tiecol > 0 ? 2 : 1, weight, objcols))
		goto fail;
	set_minim(lp);
	return lp;
fail:
	delete_lp(lp);
	return NULL;
}

static int __WINAPI
pw_milp_put(void *arg, char *buf)
{
	return fputs(buf, arg) >= 0;
}

/* Writes the model in LP format, atomically. */
static int
pw_milp_write(lprec *lp, const char *path, struct pw_error *err)
{
	struct pw_outfile out;
	int rc;

	if ((rc = pw_outfile_open(&out, path, err)) != PW_OK)
		return rc;
	if (!write_lpex(lp, out.fp, pw_milp_put) || ferror(out.fp)) {
		pw_error_set(err, "%s: cannot write the model", path);
		pw_outfile_abort(&out);
		return PW_ERR_IO;
	}
	return pw_outfile_commit(&out, err);
}

/* How each resource's ops are ordered in the rebuilt schedule: as the
 * formulation decided, else by solved start, then in one topological
 * order of the graph; or (POS) in POS's order of every op.  Ops of no
 * duration may start together, and a formulation's decisions between
 * them may then cross between resources in a cycle that its rows allow,
 * as may starts within the tolerance of one another that noise put out
 * of the graph's order; POS's order is one of the graph's. */
struct pw_milp_sorter {
	const struct pw_mm *mm;
	const struct pw_form *form;
	void	*state;
	const double *values;
	const double *start;
	const int *pos;
};

static int
pw_milp_cmp(const struct pw_milp_sorter *s, int i, int k)
{
	double tol = pw_solver_tol(s->mm->horizon);
	int o;

	if (s->pos != NULL)
		return s->pos[i] < s->pos[k] ? -1 : 1;
	if (s->form->order != NULL &&
	    (o = s->form->order(s->mm, s->state, s->values, i, k)) != 0)
		return o;
	if (fabs(s->start[i] - s->start[k]) > tol)
		return s->start[i] < s->start[k] ? -1 : 1;
	return s->mm->ops[i].rank < s->mm->ops[k].rank ? -1 : 1;
}

/* A stable merge sort of N ops (qsort has no context argument). */
static void
pw_milp_sort(const struct pw_milp_sorter *s, int *ops, int *tmp, int n)
{
	int half = n / 2, a = 0, b = half, k = 0;

	if (n < 2)
		return;
	pw_milp_sort(s, ops, tmp, half);
	pw_milp_sort(s, ops + half, tmp, n - half);
	while (a < half && b < n)
		tmp[k++] = pw_milp_cmp(s, ops[b], ops[a]) < 0 ? ops[b++] :
		    ops[a++];
	while (a < half)
		tmp[k++] = ops[a++];
	while (b < n)
		tmp[k++] = ops[b++];
	memcpy(ops, tmp, (size_t)n * sizeof *ops);
}

/*
 * The anchor of the reload of activation U: the device's compute op that
 * started last by the reload's start, or the one after it when the model
 * counted U away during it (the simulator could otherwise start the
 * reload with that op, where the model did not count it), unless that is
 * the backward the reload is for, or starts after the transfer that
 * follows the reload on its channel, NEXT (model start; INFINITY for
 * none).  Every other edge of the rebuilt schedule goes forward in the
 * model's time, so only such a later anchor can close a cycle: the
 * reload waits for the op, which may wait for that transfer (its own
 * backward's reload, say), which waits for the reload.
 */
static void
pw_milp_anchor(const struct pw_mm *mm, const struct pw_msol *sol,
    struct pw_schedule *sched, const int *order, int n, int u, double next)
{
	const struct pw_mact *a = &mm->acts[u];
	double tol = pw_solver_tol(mm->horizon);
	int x, at = -1;

	for (x = 0; x < n; x++)
		if (sol->start[order[x]] <= sol->start[a->rel] + tol)
			at = x;
	if (at >= 0 && order[at] == sol->away_last[u] && at + 1 < n &&
	    order[at + 1] != a->back && sol->start[order[at + 1]] <=
	    next + tol)
		at++;
	if (at >= 0)
		pw_schedule_set_anchor(sched, mm->ops[a->rel].op.stage,
		    mm->ops[a->rel].op.mb, (struct pw_anchor){
		    mm->ops[order[at]].op, false });
}

/* Whether op I of START goes before op K in pw_milp_graph_order: the
 * earlier start (an op the model does not hold last), then the rank. */
static bool
pw_milp_sooner(const struct pw_mm *mm, const double *start, int i, int k)
{
	double si = isnan(start[i]) ? INFINITY : start[i];
	double sk = isnan(start[k]) ? INFINITY : start[k];

	if (si != sk)
		return si < sk;
	return mm->ops[i].rank < mm->ops[k].rank;
}

/* Sifts HEAP[AT] down HEAP's N ops to where it is no later than what is
 * below it (pw_milp_sooner). */
static void
pw_milp_sift(const struct pw_mm *mm, const double *start, int *heap, int n,
    int at)
{
	int x = heap[at], c;

	for (; (c = 2 * at + 1) < n; at = c) {
		if (c + 1 < n && pw_milp_sooner(mm, start, heap[c + 1],
		    heap[c]))
			c++;
		if (!pw_milp_sooner(mm, start, heap[c], x))
			break;
		heap[at] = heap[c];
	}
	heap[at] = x;
}

/* Returns every op's place in one topological order of MM's graph, the
 * one that takes, of the ops whose predecessors are placed, the soonest
 * to start (the caller frees it): the schedule's resources ordered by it
 * meet every edge of the graph and close no cycle. */
static int *
pw_milp_graph_order(const struct pw_mm *mm, const double *start)
{
	int *pos = pw_xmalloc(((size_t)mm->nops + 1) * sizeof *pos);
	int *indeg = pw_xcalloc((size_t)mm->nops + 1, sizeof *indeg);
	/* A binary heap of the ops ready to place, the soonest first. */
	int *heap = pw_xmalloc(((size_t)mm->nops + 1) * sizeof *heap);
	int i, k, to, n = 0, placed = 0;
	size_t *first, e;
	int *succ;

	pw_mm_succ(mm, &first, &succ);
	for (e = 0; e < (size_t)mm->nedges; e++)
		indeg[mm->edges[e].to]++;
	for (i = 0; i < mm->nops; i++)
		if (indeg[i] == 0)
			heap[n++] = i;
	for (k = n / 2 - 1; k >= 0; k--)
		pw_milp_sift(mm, start, heap, n, k);
	while (n > 0) {
		i = heap[0];
		pos[i] = placed++;
		heap[0] = heap[--n];
		pw_milp_sift(mm, start, heap, n, 0);
		for (e = first[i]; e < first[i + 1]; e++) {
			if (--indeg[to = mm->edges[succ[e]].to] > 0)
				continue;
			for (k = n++; k > 0 && pw_milp_sooner(mm, start, to,
			    heap[(k - 1) / 2]); k = (k - 1) / 2)
				heap[k] = heap[(k - 1) / 2];
			heap[k] = to;
		}
	}
	/* The graph is acyclic: pw_mm_build refused it otherwise. */
	assert(placed == mm->nops);
	free(first);
	free(succ);
	free(indeg);
	free(heap);
	return pos;
}

/* Returns the schedule the solution describes, its resources ordered as
 * the formulation decided, or (POS) in that order of every op (the
 * caller owns it). */
static struct pw_schedule *
pw_milp_rebuild(const struct pw_mm *mm, const struct pw_form *form,
    void *state, const double *values, const struct pw_msol *sol,
    const int *pos)
{
	const struct pw_problem *p = mm->p;
	struct pw_milp_sorter s = { mm, form, state, values, sol->start,
	    pos };
	struct pw_schedule *sched = pw_schedule_new(p);
	int *order = pw_xmalloc(((size_t)mm->nops + 1) * sizeof *order);
	int *tmp = pw_xmalloc(((size_t)mm->nops + 1) * sizeof *tmp);
	/* Per transfer: the model start of the next on its channel. */
	double *next = pw_xmalloc(((size_t)mm->nops + 1) * sizeof *next);
	int r, x, n, u;

	for (r = mm->nres - 1; r >= 0; r--) {
		const struct pw_mres *res = &mm->res[r];

		n = 0;
		for (x = 0; x < res->n; x++)
			if (!isnan(sol->start[res->ops[x]]))
				order[n++] = res->ops[x];
		pw_milp_sort(&s, order, tmp, n);
		for (x = 0; x < n; x++) {
			pw_schedule_append(sched, p, mm->ops[order[x]].op);
			next[order[x]] = x + 1 < n ?
			    sol->start[order[x + 1]] : INFINITY;
		}
		if (r >= p->devices)
			continue;
		/* Devices come last: ORDER still holds this one's.  A
		 * reload outside the zone keeps the incumbent's anchor. */
		for (u = 0; u < mm->nacts; u++) {
			int rel = mm->acts[u].rel;
			struct pw_anchor anchor;
			struct pw_op op;

			if (rel < 0 || isnan(sol->start[rel]) ||
			    p->stages[mm->ops[rel].op.stage].device != r)
				continue;
			op = mm->ops[rel].op;
			if (mm->ops[rel].zone == PW_ZONE_IN)
				pw_milp_anchor(mm, sol, sched, order, n, u,
				    next[rel]);
			else if (pw_schedule_anchor(mm->req->incumbent,
			    op.stage, op.mb, &anchor))
				pw_schedule_set_anchor(sched, op.stage, op.mb,
				    anchor);
		}
	}
	free(order);
	free(tmp);
	free(next);
	return sched;
}

/* Simulates and checks SCHED (which it takes); keeps it in RES when it
 * is within every limit and strictly better (with ties, maybe only in its
 * sum of ends).  When it breaks a limit,
 * *BROKE is its timing (the caller frees it), else NULL.  PW_ERR_DEADLOCK
 * when the rebuilt schedule does not simulate, PW_ERR_INTERNAL when it
 * is malformed or fails the checker: a bug in the model. */
static int
pw_milp_accept(const struct pw_milp_request *req, struct pw_schedule *sched,
    struct pw_milp_result *res, struct pw_timing **broke,
    struct pw_error *err)
{
	const struct pw_problem *p = req->problem;
	struct pw_timing *t = NULL;
	struct pw_metrics *m = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_eval cand, inc;
	struct pw_error serr;
	char why[256];
	double obj;
	size_t n;
	int rc;

	*broke = NULL;
	if ((rc = pw_simulate(p, sched, &t, &serr)) != PW_OK) {
		pw_error_set(err, "milp: the solution's schedule does not "
		    "simulate: %s", serr.msg);
		if (rc != PW_ERR_DEADLOCK)
			rc = PW_ERR_INTERNAL;
		goto out;
	}
	m = pw_metrics_compute(p, sched, t);
	obj = pw_objective_value(req->objective, m);
	if (!m->feasible) {
		*broke = t;
		t = NULL;
		goto out;
	}
	cand.objective = obj;
	cand.ends = pw_solver_ends(t);
	inc.objective = res->objective;
	inc.ends = res->ends;
	if (!pw_pins_hold(p, t, req->pins, req->npins, why, sizeof why) ||
	    !(req->ties ? pw_eval_better(&cand, &inc) :
	    pw_solver_better(obj, res->objective)))
		goto out;
	ops = pw_timed_ops(p, sched, t, &n);
	if (pw_check(p, ops, n, &v) > 0) {
		pw_error_set(err, "milp: the solution's schedule fails the "
		    "checker: %s", v.msg[0]);
		rc = PW_ERR_INTERNAL;
		goto out;
	}
	pw_schedule_free(res->schedule);
	res->schedule = sched;
	res->objective = obj;
	res->ends = cand.ends;
	sched = NULL;
out:
	pw_schedule_free(sched);
	pw_timing_free(t);
	pw_metrics_free(m);
	free(ops);
	pw_violations_free(&v);
	return rc;
}

/* A window's model is not handed to lp_solve past this many rows: it
 * would take longer to build than a window has (lp_solve takes rows at
 * about 7 us each) and to solve than that. */
#define PW_MILP_WINDOW_ROWS	40000

/* One model: the graph, a formulation over it and lp_solve's copy (NULL
 * when a window's model was too large or the request was cancelled
 * while building it: then nothing is solved). */
struct pw_milp_model {
	struct pw_mm mm;
	const struct pw_form *form;
	struct pw_lpb b;
	void	*state;
	lprec	*lp;
};

static void
pw_milp_model_free(struct pw_milp_model *md)
{
	if (md->lp != NULL)
		delete_lp(md->lp);
	if (md->form != NULL)
		md->form->free(md->state);
	pw_lpb_free(&md->b);
	pw_mm_free(&md->mm);
	memset(md, 0, sizeof *md);
}

/* Builds the model of schedules with an objective of at least AT_LEAST
 * and below BETTER_THAN seconds: time-indexed where it fits, else
 * big-M. */
static int
pw_milp_model(struct pw_milp_model *md, const struct pw_milp_request *req,
    const struct pw_timing *inc, double at_least, double better_than,
    struct pw_error *err)
{
	atomic_int *cancel;
	int rc;

	memset(md, 0, sizeof *md);
	pw_lpb_init(&md->b, req->write_lp != NULL);
	if ((rc = pw_mm_build(&md->mm, req, inc, at_least, better_than,
	    err)) != PW_OK)
		return rc;
	md->form = !req->ties && !md->mm.zoned && pw_form_time.fits(&md->mm) ?
	    &pw_form_time : &pw_form_disj;
	md->form->build(&md->mm, &md->b, &md->state);
	/* A model asked for in a file is built whatever the time. */
	cancel = req->write_lp == NULL ? req->cancel : NULL;
	if ((req->free != NULL && md->b.nrows > PW_MILP_WINDOW_ROWS) ||
	    (cancel != NULL && *cancel))
		return PW_OK;
	if ((md->lp = pw_milp_lp(&md->b, cancel)) == NULL &&
	    !(cancel != NULL && *cancel)) {
		pw_error_set(err, "milp: lp_solve refused a model of %d "
		    "columns and %d rows", md->b.ncols, md->b.nrows);
		return PW_ERR_INTERNAL;
	}
	return PW_OK;
}

enum pw_milp_outcome {
	PW_MILP_NONE,		/* proven: nothing in the model */
	PW_MILP_SOLVED,		/* its optimum, maybe no better than before */
	PW_MILP_STOPPED,	/* out of time or cancelled */
	PW_MILP_FAILED,		/* lp_solve's arithmetic failed: nothing
				 * proven, and another run fails alike */
};

/* Starts for the ops outside a window's zone, which keep their places:
 * before it as they were, after it in their order past every other. */
static void
pw_milp_outside(const struct pw_mm *mm, struct pw_msol *sol)
{
	const struct pw_timing *t = mm->inc;
	double past = 2 * fmax(1, mm->horizon);
	size_t k;
	int i;

	for (i = 0; i < mm->nops; i++) {
		k = pw_op_index(mm->p, mm->ops[i].op);
		if (mm->ops[i].zone == PW_ZONE_PRE)
			sol->start[i] = mm->ops[i].lb;
		else if (mm->ops[i].zone == PW_ZONE_POST)
			sol->start[i] = past + t->start[k] / mm->scale;
	}
}

/* Turns lp_solve's solution into a schedule and offers it to RES.  When
 * the schedule breaks a limit because the simulator times something as
 * the model could not, holds the binaries that said otherwise at 0 and
 * sets *AGAIN (solve once more). */
static int
pw_milp_take(const struct pw_milp_request *req, struct pw_milp_model *md,
    const double *values, struct pw_milp_result *res, bool *again,
    struct pw_error *err)
{
	const struct pw_mm *mm = &md->mm;
	struct pw_msol sol;
	struct pw_timing *broke = NULL;
	int *cols = NULL, *pos, n = 0, k, u, rc;

	*again = false;
	sol.start = pw_xmalloc(((size_t)mm->nops + 1) * sizeof *sol.start);
	sol.away_last = pw_xmalloc(((size_t)mm->nacts + 1) *
	    sizeof *sol.away_last);
	for (u = 0; u < mm->nacts; u++)
		sol.away_last[u] = -1;
	md->form->read(mm, md->state, values, &sol);
	pw_milp_outside(mm, &sol);
	rc = pw_milp_accept(req, pw_milp_rebuild(mm, md->form, md->state,
	    values, &sol, NULL), res, &broke, err);
	/* Rebuilt in the graph's order, a schedule that breaks a limit is
	 * not the binaries' to blame: none is held. */
	if (rc == PW_ERR_DEADLOCK) {
		pos = pw_milp_graph_order(mm, sol.start);
		rc = pw_milp_accept(req, pw_milp_rebuild(mm, md->form,
		    md->state, values, &sol, pos), res, &broke, err);
		pw_timing_free(broke);
		broke = NULL;
		free(pos);
	}
	if (rc == PW_ERR_DEADLOCK)
		rc = PW_ERR_INTERNAL;
	if (broke != NULL && md->form->mismatch != NULL) {
		cols = pw_xmalloc(((size_t)md->b.nbinaries + 1) *
		    sizeof *cols);
		n = md->form->mismatch(mm, md->state, values, broke, cols);
		for (k = 0; k < n; k++)
			set_bounds(md->lp, cols[k], 0, 0);
		*again = n > 0;
	}
	free(cols);
	pw_timing_free(broke);
	free(sol.start);
	free(sol.away_last);
	return rc;
}

/* Solves MD within CLOCK; keeps a better schedule in RES and raises its
 * bound by what the model proves (objectives below CAP seconds are all
 * it holds). */
static int
pw_milp_run(const struct pw_milp_request *req, struct pw_milp_model *md,
    struct pw_milp_clock *clock, double cap, struct pw_milp_result *res,
    enum pw_milp_outcome *outcome, struct pw_error *err)
{
	const struct pw_mm *mm = &md->mm;
	REAL *values;
	double bound = mm->obj_lo;
	bool again, first = true;
	int status, rc = PW_OK;

	*outcome = PW_MILP_STOPPED;
	if (md->b.infeasible) {
		*outcome = PW_MILP_NONE;
		res->bound = fmax(res->bound, cap);
		return PW_OK;
	}
	if (md->lp == NULL)
		return PW_OK;
	put_abortfunc(md->lp, pw_milp_abort, clock);
	/* Depth first, lowest column first, each binary's incumbent value
	 * first where it has one (pw_lpb_hint): the first dive lands next
	 * to the incumbent.  Measured on the unit pipelines, this beat
	 * NODE_FRACTIONSELECT by far. */
	set_bb_rule(md->lp, NODE_FIRSTSELECT);
	set_bb_floorfirst(md->lp, BRANCH_CEILING);
	/* Reaching the bound ends the search; with ties, so does any
	 * schedule the model values below the incumbent (the next window
	 * goes on from it). */
	if (!req->ties)
		set_break_at_value(md->lp, mm->obj_lo + (mm->grid ? 0.5 :
		    pw_solver_tol(mm->obj_lo)));
	else if (md->b.tiecol > 0)
		set_break_at_value(md->lp, req->incumbent_objective /
		    mm->scale + md->b.tieweight * (md->b.tiebase - 1e-3));
	do {
		status = solve(md->lp);
		clock->iterations += (long)get_total_iter(md->lp);
		switch (status) {
		case INFEASIBLE:
			if (first) {
				*outcome = PW_MILP_NONE;
				res->bound = fmax(res->bound, cap);
			}
			return PW_OK;
		case OPTIMAL:
			if (first)
				*outcome = PW_MILP_SOLVED;
			bound = get_objective(md->lp);
			break;
		case SUBOPTIMAL:
		case USERABORT:
		case TIMEOUT:
			/* The root relaxation, once solved, bounds every
			 * node. */
			if (md->lp->real_solution < get_infinite(md->lp))
				bound = fmax(bound, md->lp->real_solution);
			break;
		case NUMFAILURE:
		case ACCURACYERROR:
			/* Durations of very different sizes can defeat
			 * lp_solve's arithmetic: it then proves and offers
			 * nothing, and what the search has stands. */
			*outcome = PW_MILP_FAILED;
			return PW_OK;
		default:
			pw_error_set(err, "milp: lp_solve failed on a model of "
			    "%d columns and %d rows (status %d)", md->b.ncols,
			    md->b.nrows, status);
			return PW_ERR_INTERNAL;
		}
		/* Later solves hold some binaries at 0: they bound less; with
		 * ties the model's objective is not the schedule's. */
		if (first && !req->ties) {
			if (mm->grid)
				bound = ceil(bound - 1e-6);
			res->bound = fmax(res->bound,
			    fmin(bound * mm->scale, cap));
		}
		first = false;
		if (get_solutioncount(md->lp) < 1 ||
		    !get_ptr_variables(md->lp, &values))
			return PW_OK;
		rc = pw_milp_take(req, md, values, res, &again, err);
	} while (rc == PW_OK && again && !pw_milp_abort(md->lp, clock));
	return rc;
}

/*
 * Whole units: proves the optimum from below.  Each step asks the model
 * for a schedule of makespan T, from the least the bounds allow upward;
 * below the optimum the windows are narrow and infeasibility is quick,
 * and the first T that holds is the optimum.  TOP is the model up to
 * the incumbent, the last step.
 */
static int
pw_milp_ladder(const struct pw_milp_request *req, const struct pw_timing *inc,
    struct pw_milp_model *top, struct pw_milp_clock *clock,
    struct pw_milp_result *res, struct pw_error *err)
{
	struct pw_milp_model md;
	enum pw_milp_outcome outcome = PW_MILP_NONE;
	double t, scale = top->mm.scale;
	int rc = PW_OK;

	for (t = top->mm.obj_lo; t < top->mm.obj_hi &&
	    outcome == PW_MILP_NONE; t++) {
		if (pw_milp_abort(NULL, clock))
			return PW_OK;
		if ((rc = pw_milp_model(&md, req, inc, t * scale,
		    (t + 1) * scale, err)) == PW_OK)
			rc = pw_milp_run(req, &md, clock, (t + 1) * scale, res,
			    &outcome, err);
		pw_milp_model_free(&md);
		if (rc != PW_OK)
			return rc;
	}
	if (outcome == PW_MILP_NONE)
		rc = pw_milp_run(req, top, clock, req->incumbent_objective, res,
		    &outcome, err);
	return rc;
}

/*
 * Big-M in whole units looks from the top for a better schedule, and
 * stops at the first (lp_solve's break at first: where is up to the
 * model, not the clock).  The time-indexed model grows with the makespan,
 * so from a better schedule it may fit, and then proves from below with
 * what is left; else big-M goes on from the better schedule.
 */
static int
pw_milp_descend(const struct pw_milp_request *req, struct pw_milp_model *top,
    struct pw_milp_clock *clock, struct pw_milp_result *res,
    struct pw_error *err)
{
	struct pw_milp_request again = *req;
	struct pw_milp_model md;
	struct pw_schedule *best;
	struct pw_timing *inc = NULL;
	struct pw_error serr;
	enum pw_milp_outcome outcome;
	int rc;

	if (top->lp != NULL)
		set_break_at_first(top->lp, TRUE);
	rc = pw_milp_run(req, top, clock, req->incumbent_objective, res,
	    &outcome, err);
	/* The first was not better once simulated: search on, whole. */
	if (rc == PW_OK && outcome == PW_MILP_STOPPED && res->schedule ==
	    NULL && top->lp != NULL && !pw_milp_abort(NULL, clock)) {
		set_break_at_first(top->lp, FALSE);
		rc = pw_milp_run(req, top, clock, req->incumbent_objective,
		    res, &outcome, err);
	}
	if (rc != PW_OK || outcome != PW_MILP_STOPPED ||
	    res->schedule == NULL || pw_milp_abort(NULL, clock))
		return rc;
	/* The better schedule is the incumbent now: kept here, handed back
	 * unless something better still replaces it. */
	best = res->schedule;
	res->schedule = NULL;
	again.incumbent = best;
	again.incumbent_objective = res->objective;
	again.write_lp = NULL;
	memset(&md, 0, sizeof md);
	if (pw_simulate(req->problem, best, &inc, &serr) != PW_OK) {
		pw_error_set(err, "milp: the accepted schedule does not "
		    "simulate: %s", serr.msg);
		rc = PW_ERR_INTERNAL;
	} else if ((rc = pw_milp_model(&md, &again, inc, req->lower_bound,
	    res->objective, err)) == PW_OK) {
		rc = md.form == &pw_form_time ?
		    pw_milp_ladder(&again, inc, &md, clock, res, err) :
		    pw_milp_run(&again, &md, clock, res->objective, res,
		    &outcome, err);
	}
	pw_milp_model_free(&md);
	pw_timing_free(inc);
	if (res->schedule == NULL)
		res->schedule = best;
	else
		pw_schedule_free(best);
	return rc;
}

/* See pw_milp_result.exact. */
static bool
pw_milp_exact(const struct pw_milp_request *req, const struct pw_mm *mm)
{
	int u;

	if (req->free != NULL || req->npins > 0)
		return false;
	for (u = 0; u < mm->nacts; u++)
		if (mm->acts[u].w < 0 || mm->acts[u].z != PW_Z_NO)
			return false;
	return true;
}

static int
pw_milp_validate(const struct pw_milp_request *req, struct pw_error *err)
{
	if (req->problem == NULL || req->incumbent == NULL) {
		pw_error_set(err, "milp: the request needs a problem and an "
		    "incumbent");
		return PW_ERR_INPUT;
	}
	if (!isfinite(req->incumbent_objective) ||
	    req->incumbent_objective < 0) {
		pw_error_set(err, "milp: incumbent objective %g is not a "
		    "finite time", req->incumbent_objective);
		return PW_ERR_INPUT;
	}
	if (!(req->time_limit >= 0)) {
		pw_error_set(err, "milp: time limit %g is not a number of "
		    "seconds", req->time_limit);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

int
pw_milp_solve(const struct pw_milp_request *req, struct pw_milp_result *res,
    struct pw_error *err)
{
	struct pw_milp_clock clock;
	struct pw_milp_model top;
	struct pw_timing *inc = NULL;
	struct pw_error serr;
	enum pw_milp_outcome outcome;
	int rc;

	memset(res, 0, sizeof *res);
	memset(&top, 0, sizeof top);
	res->objective = req->incumbent_objective;
	res->ends = NAN;
	res->bound = req->lower_bound;
	res->size.whole = req->free == NULL;
	if ((rc = pw_milp_validate(req, err)) != PW_OK)
		return rc;
	/* Nothing to gain, or no time to gain it in. */
	if (req->incumbent_objective <= 0 ||
	    req->lower_bound >= req->incumbent_objective ||
	    (req->cancel != NULL && *req->cancel)) {
		res->optimal = req->incumbent_objective <= req->lower_bound;
		res->bound = fmin(res->bound, res->objective);
		return PW_OK;
	}
	memset(&clock, 0, sizeof clock);
	clock.t0 = pw_now();
	clock.limit = req->time_limit;
	clock.iteration_limit = req->iteration_limit;
	clock.cancel = req->cancel;
	if (pw_simulate(req->problem, req->incumbent, &inc, &serr) != PW_OK) {
		pw_error_set(err, "milp: incumbent: %s", serr.msg);
		return PW_ERR_INPUT;
	}
	res->ends = pw_solver_ends(inc);
	rc = pw_milp_model(&top, req, inc, req->lower_bound,
	    req->incumbent_objective, err);
	res->size.variables = top.b.ncols;
	res->size.binaries = top.b.nbinaries;
	res->size.rows = top.b.nrows;
	res->size.formulation = top.form != NULL ? top.form->name : NULL;
	if (rc != PW_OK)
		goto out;
	res->bound = fmax(res->bound, top.mm.obj_lo * top.mm.scale);
	if (req->write_lp != NULL) {
		if ((rc = pw_milp_write(top.lp, req->write_lp, err)) != PW_OK)
			goto out;
		res->written = true;
	}
	res->exact = pw_milp_exact(req, &top.mm);
	outcome = PW_MILP_STOPPED;
	if (req->write_only)
		;	/* the file was all it was built for */
	else if (req->ties)
		rc = pw_milp_run(req, &top, &clock, req->incumbent_objective,
		    res, &outcome, err);
	else if (top.form == &pw_form_time &&
	    req->objective == PW_OBJ_MAKESPAN)
		rc = pw_milp_ladder(req, inc, &top, &clock, res, err);
	else if (top.mm.grid && req->objective == PW_OBJ_MAKESPAN)
		rc = pw_milp_descend(req, &top, &clock, res, err);
	else
		rc = pw_milp_run(req, &top, &clock, req->incumbent_objective,
		    res, &outcome, err);
	res->bound = fmin(res->bound, res->objective);
	res->optimal = req->ties ? outcome == PW_MILP_NONE ||
	    outcome == PW_MILP_SOLVED :
	    pw_objective_meets_bound(res->objective, res->bound);
out:
	res->iterations = clock.iterations;
	pw_milp_model_free(&top);
	pw_timing_free(inc);
	return rc;
}
