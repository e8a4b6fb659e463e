/*
 * solver.c - pw_solve and the run it loops over (pw_solve_start, _poll,
 * _wait, _take, _cancel, _finish): options, the worker thread that runs
 * the search (search.c, lns.c), progress, cancellation and the result.
 *
 * A run starts the search on a worker thread; everything else of the run
 * happens on the caller's thread, each time the caller asks
 * (pw_solve_cancel, which any thread may call, only sets a flag for the
 * next poll and wakes a wait).  A poll reads what the worker last
 * published and watches the cancel flags and the time limit; either
 * sets the worker's stop flag, which the worker checks between units of
 * work and lp_solve polls through milp.c's abort callback.  Only the stop
 * flag crosses from the caller's thread to the worker; what the result
 * is made of comes back under a lock, so the result depends on timing
 * only through when the search stops.  pw_solve is the loop a front end
 * would write: wait a tick or for a publication, poll, report, until the
 * search is over; then finish.
 *
 * Some units of work cannot be interrupted (a family's build, the offload
 * planner on a large problem, a model handed to lp_solve), and take
 * seconds on the largest problems.  So once the search is stopped and
 * has a schedule, the run waits PW_SOLVE_GRACE for the worker and then
 * finishes with a copy of its incumbent, leaving the worker to finish
 * its unit on its own copies of the problem and options; the last of the
 * two to leave frees the search.
 *
 * The search is deterministic up to the time limit: the families, the
 * heuristic, the order of the windows (a splitmix64 sequence from the
 * seed) and where lp_solve stops in each (a share of simplex iterations,
 * not of seconds) depend on the input and options alone.  Only the time
 * limit and a cancel read the clock, so a search that ends otherwise (a
 * proven optimum, every window of the largest size solved without
 * improvement, or the iteration limit) gives the same schedule on every
 * run of the same build; result.ended says which.  (lp_solve's pivots,
 * and so its iterations, may differ between builds and architectures.)
 */
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search.h"

/* Progress reports come at least this often (seconds). */
#define PW_SOLVE_TICK		0.05
/* How long a stopped search may take to finish before the run leaves it
 * with a copy of its incumbent (seconds): with the tick, a cancel takes
 * effect within 100 ms. */
#define PW_SOLVE_GRACE		0.03
/* The default time limit (seconds). */
#define PW_SOLVE_DEFAULT_LIMIT	10.0

void
pw_solve_opts_init(struct pw_solve_opts *o)
{
	memset(o, 0, sizeof *o);
	o->objective = PW_OBJ_MAKESPAN;
	o->offload = PW_OFFMODE_AUTO;
	o->time_limit = PW_SOLVE_DEFAULT_LIMIT;
	o->seed = 1;
}

/* Each end's name and what it means for the user. */
static const struct {
	const char *name, *words;
} pw_solve_ends[] = {
	[PW_END_OPTIMAL] = { "optimal", "optimal for this split and layout" },
	[PW_END_SEARCHED] = { "searched", "searched" },
	[PW_END_ITERATIONS] = { "iteration limit", "iteration limit" },
	[PW_END_TIME] = { "time limit", "time limit" },
	[PW_END_CANCELLED] = { "cancelled", "cancelled" },
};

const char *const pw_objective_names[] = { "makespan", "span", NULL };
const char *const pw_offload_mode_names[] = { "auto", "on", "off", NULL };

const char *
pw_solve_end_name(enum pw_solve_end end)
{
	assert(end >= PW_END_OPTIMAL && end <= PW_END_CANCELLED);
	return pw_solve_ends[end].name;
}

const char *
pw_solve_end_words(enum pw_solve_end end)
{
	assert(end >= PW_END_OPTIMAL && end <= PW_END_CANCELLED);
	return pw_solve_ends[end].words;
}

const char *
pw_solve_result_words(const struct pw_solve_result *r, enum pw_solve_end end)
{
	if (end == PW_END_OPTIMAL && r->offload_excluded)
		return "optimal for this split and layout, without offload";
	return pw_solve_end_words(end);
}

/* Whether P's link could move an activation of a stage that OFFLOADABLE
 * (NULL: none) keeps on its device. */
static bool
pw_solve_excluded(const struct pw_problem *p, const bool *offloadable)
{
	int s;

	for (s = 0; p->link.present && s < p->nstages; s++)
		if (p->stages[s].offload > 0 &&
		    (offloadable == NULL || !offloadable[s]))
			return true;
	return false;
}

bool
pw_objective_meets_bound(double objective, double bound)
{
	return objective - bound <= pw_solver_objective_tol(objective);
}

double
pw_objective_gap(double objective, double bound)
{
	if (isinf(objective))
		return 1;
	if (!(objective > 0) || pw_objective_meets_bound(objective, bound))
		return 0;
	return (objective - bound) / objective;
}

void
pw_solve_result_free(struct pw_solve_result *r)
{
	if (r == NULL)
		return;
	pw_schedule_free(r->schedule);
	r->schedule = NULL;
}

/* ------------------------------------------------------------------ */
/* Options and the problem                                             */

int
pw_solve_check_common(const char *who, enum pw_objective objective,
    enum pw_offload_mode offload, double time_limit, long iteration_limit,
    struct pw_error *err)
{
	if (objective != PW_OBJ_MAKESPAN && objective != PW_OBJ_SPAN) {
		pw_error_set(err, "%s: objective %d is not makespan or span",
		    who, (int)objective);
		return PW_ERR_INPUT;
	}
	if (offload != PW_OFFMODE_AUTO && offload != PW_OFFMODE_ON &&
	    offload != PW_OFFMODE_OFF) {
		pw_error_set(err, "%s: offload mode %d is not auto, on or off",
		    who, (int)offload);
		return PW_ERR_INPUT;
	}
	if (isnan(time_limit) || isinf(time_limit)) {
		pw_error_set(err, "%s: time_limit %g is not a finite number of "
		    "seconds", who, time_limit);
		return PW_ERR_INPUT;
	}
	if (iteration_limit < 0) {
		pw_error_set(err, "%s: iteration_limit %ld is negative (0: "
		    "none)", who, iteration_limit);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

int
pw_solve_check_link(const char *who, enum pw_offload_mode offload,
    bool has_link, struct pw_error *err)
{
	if (offload != PW_OFFMODE_ON || has_link)
		return PW_OK;
	pw_error_set(err, "%s: offload on: the problem has no offload link "
	    "(its file names no link, or its hardware no PCIe bandwidth)",
	    who);
	return PW_ERR_INPUT;
}

/* One line naming the option at fault. */
static int
pw_solve_check_opts(const struct pw_problem *p, const struct pw_solve_opts *o,
    struct pw_error *err)
{
	struct pw_error why;
	size_t i;
	int s, rc;

	if ((rc = pw_solve_check_common("solve", o->objective, o->offload,
	    o->time_limit, o->iteration_limit, err)) != PW_OK ||
	    (rc = pw_solve_check_link("solve", o->offload, p->link.present,
	    err)) != PW_OK)
		return rc;
	if (o->start != NULL && o->start_family != NULL) {
		pw_error_set(err, "solve: start and start_family are both set "
		    "(give one)");
		return PW_ERR_INPUT;
	}
	if (o->start != NULL && (o->start->ndevices != p->devices ||
	    o->start->nstages != p->nstages ||
	    o->start->microbatches != p->microbatches ||
	    o->start->nchannels != pw_problem_nchannels(p))) {
		pw_error_set(err, "solve: start: the schedule is shaped for %d "
		    "devices, %d stages, %d microbatches and %d channels, the "
		    "problem has %d, %d, %d and %d", o->start->ndevices,
		    o->start->nstages, o->start->microbatches,
		    o->start->nchannels, p->devices, p->nstages,
		    p->microbatches, pw_problem_nchannels(p));
		return PW_ERR_INPUT;
	}
	if (o->npins > 0 && o->pins == NULL) {
		pw_error_set(err, "solve: npins is %zu but pins is NULL",
		    o->npins);
		return PW_ERR_INPUT;
	}
	for (i = 0; i < o->npins; i++) {
		if (pw_pin_check(p, &o->pins[i], &why) != PW_OK) {
			pw_error_set(err, "solve: pin %zu: %s", i, why.msg);
			return PW_ERR_INPUT;
		}
	}
	if (o->may_offload != NULL && o->offload == PW_OFFMODE_OFF)
		for (s = 0; s < p->nstages; s++)
			if (o->may_offload[s]) {
				pw_error_set(err, "solve: may_offload allows "
				    "stage %d but offload is off", s);
				return PW_ERR_INPUT;
			}
	return PW_OK;
}

/* PW_ERR_INPUT naming the first device whose limit cannot hold one
 * microbatch even with every allowed activation on the host. */
static int
pw_solve_feasible(const struct pw_problem *p, const bool *offloadable,
    struct pw_error *err)
{
	char b1[32], b2[32], b3[32];
	double need, limit;
	bool moves;
	int d, s;

	for (d = 0; d < p->devices; d++) {
		need = pw_bound_need(p, d, offloadable);
		limit = p->memory[d].limit;
		if (need <= limit + pw_solver_tol(limit))
			continue;
		moves = false;
		for (s = 0; s < p->nstages; s++)
			moves = moves || (p->stages[s].device == d &&
			    offloadable != NULL && offloadable[s]);
		pw_error_set(err, "infeasible: device %d needs %s to run one "
		    "microbatch through its %d stages (static %s included)%s, "
		    "but its limit is %s", d, pw_fmt_bytes(b1, sizeof b1, need),
		    pw_problem_chunks(p, d), pw_fmt_bytes(b2, sizeof b2,
		    p->memory[d].static_bytes), moves ? " even with every "
		    "allowed activation offloaded" : " with nothing offloaded",
		    pw_fmt_bytes(b3, sizeof b3, limit));
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/*
 * Returns a search of P under O that the caller and the worker share
 * (two references), with the worker's own copies of both.
 */
static struct pw_search *
pw_solve_search_new(const struct pw_problem *p, const struct pw_solve_opts *o,
    bool *offloadable)
{
	struct pw_search *s = pw_xcalloc(1, sizeof *s);

	atomic_init(&s->stop, 0);
	s->problem = pw_problem_copy(p);
	s->p = s->problem;
	s->opts = *o;
	s->opts.progress = NULL;
	s->opts.progress_arg = NULL;
	s->opts.cancel = NULL;
	if (o->start != NULL)
		s->opts.start = s->own_start = pw_schedule_copy(o->start);
	if (o->start_family != NULL)
		s->opts.start_family = s->own_start_family =
		    pw_xstrdup(o->start_family);
	if (o->may_offload != NULL) {
		s->own_may_offload = pw_xmalloc((size_t)p->nstages *
		    sizeof *s->own_may_offload);
		memcpy(s->own_may_offload, o->may_offload, (size_t)p->nstages *
		    sizeof *s->own_may_offload);
		s->opts.may_offload = s->own_may_offload;
	}
	if (o->npins > 0) {
		s->own_pins = pw_xmalloc(o->npins * sizeof *s->own_pins);
		memcpy(s->own_pins, o->pins, o->npins * sizeof *s->own_pins);
		s->opts.pins = s->own_pins;
	}
	if (o->write_lp != NULL) {
		s->opts.write_lp = s->own_write_lp = pw_xstrdup(o->write_lp);
		s->lp_unwritten = "the search stopped before it built one";
	}
	s->o = &s->opts;
	s->offloadable = offloadable;
	s->limit = o->time_limit > 0 ? o->time_limit : PW_SOLVE_DEFAULT_LIMIT;
	s->pub_incumbent = INFINITY;
	s->pub_phase = "start";
	s->refs = 2;
	pw_sync_init(&s->lock, &s->cond);
	return s;
}

bool
pw_solver_unref(pthread_mutex_t *lock, pthread_cond_t *cond, int *refs)
{
	bool last;

	pthread_mutex_lock(lock);
	last = --*refs == 0;
	pthread_mutex_unlock(lock);
	if (last) {
		pthread_cond_destroy(cond);
		pthread_mutex_destroy(lock);
	}
	return last;
}

/* Drops one reference to S, freeing it with the last. */
static void
pw_solve_search_release(struct pw_search *s)
{
	if (!pw_solver_unref(&s->lock, &s->cond, &s->refs))
		return;
	pw_schedule_free(s->best);
	pw_schedule_free(s->answer);
	free(s->offloadable);
	pw_problem_free(s->problem);
	pw_schedule_free(s->own_start);
	free(s->own_start_family);
	free(s->own_may_offload);
	free(s->own_pins);
	free(s->own_write_lp);
	free(s);
}

static void *
pw_solve_worker(void *arg)
{
	struct pw_search *s = arg;
	int rc;

	rc = pw_search_run(s);
	pthread_mutex_lock(&s->lock);
	s->rc = rc;
	s->finished = true;
	pw_search_signal(s);
	pthread_mutex_unlock(&s->lock);
	pw_solve_search_release(s);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* A run: the caller's side                                            */

struct pw_solve_run {
	struct pw_search *s;	/* one of its two references */
	pthread_t worker;
	atomic_int *flag;	/* the caller's cancel flag, or NULL */
	atomic_int cancel;	/* pw_solve_cancel's */
	/* A cancel is what stopped the search (not the time limit). */
	bool	cancelled;
	/* Seconds from the start to the stop; INFINITY while unstopped. */
	double	stopped;
	unsigned long seen;	/* s->events at the last poll */
};

/* Fills PR with these numbers and the gap between them. */
static void
pw_solve_progress(struct pw_progress *pr, double incumbent, double bound,
    double elapsed, const char *phase)
{
	pr->incumbent = incumbent;
	pr->bound = bound;
	pr->gap = pw_objective_gap(incumbent, bound);
	pr->elapsed = elapsed;
	pr->phase = phase;
}

/* Under the lock: whether the run may leave a search stopped at STOPPED
 * (seconds) with a copy of its incumbent. */
static bool
pw_solve_may_leave(const struct pw_search *s, double stopped)
{
	return s->best != NULL && !s->writing &&
	    pw_search_elapsed(s) >= stopped + PW_SOLVE_GRACE;
}

/* Returns SCHED, the caller's, named as the solve's. */
static struct pw_schedule *
pw_solve_named(struct pw_schedule *sched)
{
	free(sched->family);
	sched->family = pw_xstrdup("solve");
	return sched;
}

/* Stops RUN's search, ELAPSED seconds in (its phase then "waiting" if
 * it holds no schedule yet: pw_search_publish). */
static void
pw_solve_stop(struct pw_solve_run *run, double elapsed)
{
	run->s->stop = 1;
	run->stopped = elapsed;
	pw_search_publish(run->s, NULL);
}

int
pw_solve_start(const struct pw_problem *p, const struct pw_solve_opts *o,
    struct pw_solve_run **out, struct pw_error *err)
{
	struct pw_solve_run *run;
	struct pw_search *s;
	bool *offloadable;
	int rc;

	*out = NULL;
	if ((rc = pw_problem_validate(p, "solve: problem", err)) != PW_OK ||
	    (rc = pw_solve_check_opts(p, o, err)) != PW_OK)
		return rc;
	offloadable = pw_solver_offloadable(p, o->offload, o->may_offload);
	if ((rc = pw_solve_feasible(p, offloadable, err)) != PW_OK) {
		free(offloadable);
		return rc;
	}
	s = pw_solve_search_new(p, o, offloadable);
	run = pw_xcalloc(1, sizeof *run);
	run->s = s;
	run->flag = o->cancel;
	atomic_init(&run->cancel, 0);
	run->stopped = INFINITY;
	if (o->cancel != NULL && *o->cancel) {
		run->cancelled = true;
		pw_solve_stop(run, 0);
	}
	s->t0 = pw_now();
	if ((rc = pw_thread_start(&run->worker, pw_solve_worker, s)) != 0) {
		pw_error_set(err, "solve: cannot start the search thread: %s",
		    strerror(rc));
		s->refs = 1;
		pw_solve_search_release(s);
		free(run);
		return PW_ERR_INTERNAL;
	}
	*out = run;
	return PW_OK;
}

bool
pw_solve_poll(struct pw_solve_run *run, struct pw_progress *pr)
{
	struct pw_search *s = run->s;
	double inc, bound;
	const char *phase;
	bool finished, working;

	pthread_mutex_lock(&s->lock);
	run->seen = s->events;
	inc = s->pub_incumbent;
	bound = s->pub_bound;
	phase = s->pub_phase;
	finished = s->finished;
	/* A stop set below starts its grace period now: it cannot let the
	 * run leave yet. */
	working = !finished && !pw_solve_may_leave(s, run->stopped);
	pthread_mutex_unlock(&s->lock);
	/* A cancel counts only when it is what stops the search. */
	if (!finished && s->stop == 0 && (run->cancel != 0 ||
	    (run->flag != NULL && *run->flag != 0)))
		run->cancelled = true;
	if (!finished && s->stop == 0 && (run->cancelled ||
	    pw_search_elapsed(s) >= s->limit)) {
		pw_solve_stop(run, pw_search_elapsed(s));
		/* The stop's own publication (its phase) is read with the
		 * numbers it went with, and is no news to the next wait. */
		pthread_mutex_lock(&s->lock);
		run->seen = s->events;
		inc = s->pub_incumbent;
		bound = s->pub_bound;
		phase = s->pub_phase;
		pthread_mutex_unlock(&s->lock);
	}
	if (pr != NULL)
		pw_solve_progress(pr, inc, bound, pw_search_elapsed(s), phase);
	return working;
}

void
pw_solve_wait(struct pw_solve_run *run, double seconds)
{
	struct pw_search *s = run->s;
	double at, now;

	pthread_mutex_lock(&s->lock);
	at = pw_now() + fmax(0, seconds);
	if (s->stop == 0)
		at = fmin(at, s->t0 + s->limit);
	else if (s->best != NULL && !s->writing)
		at = fmin(at, s->t0 + run->stopped + PW_SOLVE_GRACE);
	/* The events that change what bounds AT wake the loop too. */
	while (s->events == run->seen && !s->finished &&
	    (now = pw_now()) < at)
		pw_sync_wait(&s->cond, &s->lock, at - now);
	pthread_mutex_unlock(&s->lock);
}

struct pw_schedule *
pw_solve_take(struct pw_solve_run *run, double *objective)
{
	struct pw_search *s = run->s;
	struct pw_schedule *sched = NULL;
	double obj = INFINITY;

	pthread_mutex_lock(&s->lock);
	if (s->answer != NULL) {
		sched = pw_solve_named(pw_schedule_copy(s->answer));
		obj = s->answer_eval.objective;
	}
	pthread_mutex_unlock(&s->lock);
	if (objective != NULL)
		*objective = obj;
	return sched;
}

void
pw_solve_cancel(struct pw_solve_run *run)
{
	run->cancel = 1;
	/* Wakes a pw_solve_wait, which then returns to its caller's poll. */
	pthread_mutex_lock(&run->s->lock);
	pw_search_signal(run->s);
	pthread_mutex_unlock(&run->s->lock);
}

int
pw_solve_finish(struct pw_solve_run *run, struct pw_solve_result *res,
    struct pw_error *err)
{
	struct pw_search *s = run->s;
	bool finished;
	int rc = PW_OK;

	memset(res, 0, sizeof *res);
	/* Checked under the lock that the result is taken under, so that the
	 * worker cannot begin a model file in between. */
	pthread_mutex_lock(&s->lock);
	while (!s->finished && !pw_solve_may_leave(s, run->stopped)) {
		pthread_mutex_unlock(&s->lock);
		pw_solve_wait(run, PW_SOLVE_TICK);
		pw_solve_poll(run, NULL);
		pthread_mutex_lock(&s->lock);
	}
	s->left = !s->finished;
	/* The worker's result, or a copy of its incumbent (every incumbent
	 * passed the checker when it was offered). */
	finished = s->finished;
	if (finished && s->rc != PW_OK) {
		*err = s->err;
		rc = s->rc;
	} else {
		if (finished) {
			res->schedule = pw_solve_named(s->answer);
			s->answer = NULL;
		} else {
			assert(s->answer != NULL);
			res->schedule = pw_solve_named(pw_schedule_copy(
			    s->answer));
		}
		res->objective = s->answer_eval.objective;
		res->bound = fmin(s->bound, res->objective);
		res->gap = pw_objective_gap(res->objective, res->bound);
		/* As the search tells a closed gap. */
		res->optimal = pw_objective_meets_bound(res->objective,
		    res->bound);
		/* A worker left behind or stopped was stopped by the time
		 * limit, or by the caller. */
		res->ended = finished && s->ended != PW_END_TIME ? s->ended :
		    run->cancelled ? PW_END_CANCELLED : PW_END_TIME;
		snprintf(res->start, sizeof res->start, "%s", s->start);
		res->start_objective = s->start_objective;
		res->model = s->model;
		res->lp_unwritten = s->lp_unwritten;
		res->offload_excluded = pw_solve_excluded(s->p,
		    s->offloadable);
	}
	pthread_mutex_unlock(&s->lock);
	if (finished)
		pthread_join(run->worker, NULL);
	else
		pthread_detach(run->worker);
	if (rc == PW_OK)
		res->elapsed = pw_search_elapsed(s);
	pw_solve_search_release(s);
	free(run);
	return rc;
}

int
pw_solve(const struct pw_problem *p, const struct pw_solve_opts *o,
    struct pw_solve_result *res, struct pw_error *err)
{
	struct pw_solve_run *run;
	struct pw_progress pr;
	bool working;
	int rc;

	memset(res, 0, sizeof *res);
	if ((rc = pw_solve_start(p, o, &run, err)) != PW_OK)
		return rc;
	/* A report at least every tick and after each publication. */
	do {
		pw_solve_wait(run, PW_SOLVE_TICK);
		working = pw_solve_poll(run, &pr);
		if (o->progress != NULL)
			o->progress(&pr, o->progress_arg);
	} while (working);
	rc = pw_solve_finish(run, res, err);
	if (rc == PW_OK && o->progress != NULL) {
		pw_solve_progress(&pr, res->objective, res->bound,
		    res->elapsed, "done");
		o->progress(&pr, o->progress_arg);
	}
	return rc;
}
