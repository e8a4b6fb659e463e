/*
 * sweep.c - the memory sweep view's state: the solver's sweep of the
 * plan's problem on a thread (pw_sweep_run), polled by the loop, a cursor
 * among its limits and series, and a point loaded as the plan.
 *
 * The thread (a job, job.c) only runs pw_sweep_run; the designer reads
 * the points it publishes (pw_sweep_get) and joins it once JOB.FINISHED
 * is set, so the job's lock guards nothing here; a sweep dropped before
 * (a changed problem, quitting) is let go, not waited on.  A finished
 * sweep is kept for its problem: opening the view again shows it at
 * once.
 */
#include <math.h>
#include <stdlib.h>

#include "tui_int.h"

/* The optimizer's seconds per point when no iteration limit is set: a
 * short search beside the families, not the full one of "o". */
#define TUI_SWEEP_SECONDS	1.0

/* Whether the sweep is of another problem than the plan's (and the plan
 * is not a point loaded from it). */
static bool
tui_sweep_stale(const struct tui_sweep *s, const struct pw_problem *p)
{
	struct pw_problem *k = pw_problem_unlimited(p);
	bool stale = !pw_problem_same(s->key, k) &&
	    (s->loaded == NULL || !pw_problem_same(s->loaded, k));

	pw_problem_free(k);
	return stale;
}

static void
tui_sweep_main(struct tui_job *j)
{
	struct tui_sweep *s = (struct tui_sweep *)j;

	s->complete = pw_sweep_run(s->sweep);
}

/* Frees the sweep J, which no one else holds. */
static void
tui_sweep_destroy(struct tui_job *j)
{
	struct tui_sweep *s = (struct tui_sweep *)j;

	pw_sweep_free(s->sweep);
	pw_problem_free(s->key);
	pw_problem_free(s->loaded);
	free(s);
}

struct tui_sweep *
tui_sweep_alloc(void)
{
	struct tui_sweep *s = pw_xcalloc(1, sizeof *s);

	tui_job_init(&s->job, tui_sweep_main, tui_sweep_destroy);
	return s;
}

void
tui_sweep_free(struct tui_sweep *s)
{
	if (s == NULL)
		return;
	/* Never wait on it: the flag is seen between points, and one
	 * family's point on a large problem takes many seconds.  The
	 * thread works on the sweep's own copy of the problem. */
	tui_job_drop(&s->job, s->joined);
}

/* Starts a sweep of D's problem.  Returns it, or NULL with the message
 * line saying why. */
static struct tui_sweep *
tui_sweep_start(struct tui *d)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	struct pw_sweep_opts o = { .objective = d->objective };
	struct tui_sweep *s;
	struct pw_error err;

	/* An iteration limit makes the series the same on every run; the
	 * solver's default time limit then only guards it. */
	o.iteration_limit = d->iteration_limit;
	if (o.iteration_limit == 0)
		o.time_limit = d->time_limit > 0 &&
		    d->time_limit < TUI_SWEEP_SECONDS ? d->time_limit :
		    TUI_SWEEP_SECONDS;
	s = tui_sweep_alloc();
	o.cancel = &s->job.cancel;
	if (pw_sweep_new(p, &o, &s->sweep, &err) != PW_OK) {
		tui_message(d, true, "%s", err.msg);
		tui_job_release(&s->job);
		return NULL;
	}
	if (tui_job_start(&s->job) != 0) {
		tui_message(d, true, "sweep: cannot start its thread");
		tui_job_release(&s->job);
		return NULL;
	}
	s->key = pw_problem_unlimited(p);
	s->changes = d->changes;
	s->limit = s->sweep->nlimits - 1;
	s->series = d->family >= 0 ? (size_t)d->family : 0;
	return s;
}

unsigned
tui_sweep_open(struct tui *d)
{
	if (d->sweep != NULL && tui_sweep_stale(d->sweep,
	    pw_plan_problem(d->plan))) {
		tui_sweep_free(d->sweep);
		d->sweep = NULL;
	}
	if (d->sweep == NULL) {
		if ((d->sweep = tui_sweep_start(d)) == NULL)
			return TUI_DRAW_MESSAGE;
		tui_message(d, false, "sweep: computing %zu points in the "
		    "background; Enter loads the point under the cursor",
		    d->sweep->sweep->total);
	} else
		tui_message(d, false, "sweep: Enter loads the point under the "
		    "cursor, Esc goes back");
	d->mode = TUI_MODE_SWEEP;
	return TUI_DRAW_ALL;
}

unsigned
tui_sweep_tick(struct tui *d)
{
	struct tui_sweep *s = d->sweep;
	unsigned redraw = 0;
	size_t done;

	if (s == NULL)
		return 0;
	if (!s->joined && s->changes != d->changes) {
		s->changes = d->changes;
		if (tui_sweep_stale(s, pw_plan_problem(d->plan))) {
			tui_sweep_free(s);
			d->sweep = NULL;
			if (d->mode == TUI_MODE_SWEEP)
				d->mode = TUI_MODE_TIMELINE;
			tui_message(d, false, "sweep cancelled: the problem "
			    "changed");
			return TUI_DRAW_ALL;
		}
	}
	done = atomic_load(&s->sweep->done);
	if (done != s->shown) {
		s->shown = done;
		redraw |= TUI_DRAW_PANEL;
	}
	if (!s->joined && atomic_load(&s->job.finished)) {
		pthread_join(s->job.thread, NULL);
		s->joined = true;
		tui_message(d, false, "sweep: %zu of %zu points", done,
		    s->sweep->total);
		redraw |= TUI_DRAW_PANEL | TUI_DRAW_MESSAGE;
	}
	return d->mode == TUI_MODE_SWEEP ? redraw : redraw & TUI_DRAW_MESSAGE;
}

/* Moves *AT by STEP within [0, N). */
static void
tui_sweep_step(size_t *at, int step, size_t n)
{
	long v = (long)*at + step;

	*at = v < 0 ? 0 : v >= (long)n ? n - 1 : (size_t)v;
}

unsigned
tui_sweep_move(struct tui *d, int dx, int dy)
{
	struct tui_sweep *s = d->sweep;

	if (s == NULL)
		return 0;
	tui_sweep_step(&s->limit, dx, s->sweep->nlimits);
	tui_sweep_step(&s->series, dy, s->sweep->nseries);
	return TUI_DRAW_PANEL;
}

unsigned
tui_sweep_axis(struct tui *d)
{
	if (d->sweep == NULL)
		return 0;
	d->sweep->bubble = !d->sweep->bubble;
	return TUI_DRAW_PANEL;
}

unsigned
tui_sweep_load(struct tui *d)
{
	struct tui_sweep *s = d->sweep;
	const struct pw_sweep_point *pt;
	const char *name;
	struct pw_plan *plan;
	struct pw_error err;
	char lim[32], *what;
	unsigned redraw;

	if (s == NULL)
		return 0;
	name = pw_sweep_series_name(s->sweep, s->series);
	if ((pt = pw_sweep_get(s->sweep, s->limit, s->series)) == NULL) {
		tui_message(d, true, "sweep: %s's point is not computed yet",
		    name);
		return TUI_DRAW_MESSAGE;
	}
	pw_fmt_bytes(lim, sizeof lim, pt->limit);
	if (pt->rc != PW_OK) {
		tui_message(d, true, "sweep: %s at %s: %s", name, lim, pt->why);
		return TUI_DRAW_MESSAGE;
	}
	if (pw_plan_new(pw_problem_copy(pt->problem),
	    pw_schedule_copy(pt->schedule), &plan, &err) != PW_OK) {
		tui_message(d, true, "sweep: %s at %s: %s", name, lim, err.msg);
		return TUI_DRAW_MESSAGE;
	}
	pw_problem_free(s->loaded);
	s->loaded = pw_problem_unlimited(pt->problem);
	what = pw_xasprintf("sweep point %s, %s", lim, name);
	d->mode = TUI_MODE_TIMELINE;
	redraw = tui_plan_set(d, plan, what, what, s->series < pw_nfamilies ?
	    (int)s->series : -1);
	/* Loading is this sweep's own change: it stays for its problem. */
	s->changes = d->changes;
	free(what);
	return redraw | TUI_DRAW_ALL;
}
