/*
 * plan.c - the design search: the planner (pw_planner) on a copy of the
 * plan's problem, on its own thread, polled by the loop; its progress is
 * copied under a lock as it comes, its ranked candidates listed once it
 * ends, and any of them opened as the designed plan (its problem and
 * schedule) as one undoable change, like a sweep point.  The designer
 * never waits on a running search: one it lets go of (a new search, a
 * changed problem, quitting) is cancelled and let go (job.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

void
tui_planner_saving(const struct pw_design *dg, char *buf, size_t len)
{
	const char *r = dg->recompute == PW_RECOMPUTE_NONE ? "" :
	    pw_recompute_label(dg->recompute);

	snprintf(buf, len, "%s%s%s", r, dg->offload && r[0] != '\0' ? "+" : "",
	    dg->offload ? "offload" : r[0] != '\0' ? "" : "-");
}

/* The planner's progress callback, on its thread. */
static void
tui_planner_report(const struct pw_planner_progress *pr, void *arg)
{
	struct tui_planner *s = arg;

	pthread_mutex_lock(&s->job.lock);
	s->progress = *pr;
	snprintf(s->best_name, sizeof s->best_name, "%s",
	    pr->best_name != NULL ? pr->best_name : "");
	snprintf(s->phase, sizeof s->phase, "%s",
	    pr->phase != NULL ? pr->phase : "start");
	s->progress.best_name = NULL;
	s->progress.phase = NULL;
	pthread_mutex_unlock(&s->job.lock);
}

/* Frees the search J, which no one else holds. */
static void
tui_planner_destroy(struct tui_job *j)
{
	struct tui_planner *s = (struct tui_planner *)j;

	if (s->rc == PW_OK)
		pw_planner_result_free(&s->result);
	pw_problem_free(s->problem);
	pw_problem_free(s->loaded);
	free(s);
}

static void
tui_planner_main(struct tui_job *j)
{
	struct tui_planner *s = (struct tui_planner *)j;

	s->rc = pw_planner(s->problem, &s->opts, &s->result, &s->err);
}

struct pw_planner_progress
tui_planner_progress(struct tui_planner *s, char best_name[32],
    char phase[16])
{
	struct pw_planner_progress pr;

	pthread_mutex_lock(&s->job.lock);
	pr = s->progress;
	snprintf(best_name, 32, "%s", s->best_name);
	snprintf(phase, 16, "%s", s->phase);
	pthread_mutex_unlock(&s->job.lock);
	pr.best_name = best_name[0] != '\0' ? best_name : NULL;
	pr.phase = phase;
	return pr;
}

bool
tui_planner_running(const struct tui *d)
{
	return d->planner != NULL && !d->planner->joined;
}

void
tui_planner_free(struct tui_planner *s)
{
	if (s == NULL)
		return;
	/* Never wait on it: a family build may take seconds before the
	 * planner sees the flag.  The thread owns its copies. */
	tui_job_drop(&s->job, s->joined);
}

/* Starts a search of D's problem.  Returns it, or NULL with the message
 * line saying why. */
static struct tui_planner *
tui_planner_start(struct tui *d)
{
	struct tui_planner *s;

	/* As plan refuses a problem's precede pairs. */
	if (d->npins > 0) {
		tui_message(d, true, "design search: the pins name ops of this "
		    "split, which the search changes (P removes them; o "
		    "honours them)");
		return NULL;
	}
	s = pw_xcalloc(1, sizeof *s);

	tui_job_init(&s->job, tui_planner_main, tui_planner_destroy);
	s->problem = pw_problem_copy(pw_plan_problem(d->plan));
	pw_planner_opts_init(&s->opts);
	s->opts.objective = d->objective;
	/* An iteration limit makes the candidates the same on every run;
	 * the planner's own time limit then only guards it. */
	s->opts.iteration_limit = d->iteration_limit;
	s->opts.time_limit = d->time_limit;
	s->opts.progress = tui_planner_report;
	s->opts.progress_arg = s;
	s->opts.cancel = &s->job.cancel;
	s->progress = (struct pw_planner_progress){ .best = INFINITY };
	snprintf(s->phase, sizeof s->phase, "start");
	s->best_shown = INFINITY;
	snprintf(s->phase_shown, sizeof s->phase_shown, "start");
	s->changes = d->changes;
	if (tui_job_start(&s->job) != 0) {
		tui_message(d, true, "design search: cannot start its thread");
		s->rc = PW_ERR_INTERNAL;
		tui_job_release(&s->job);
		return NULL;
	}
	return s;
}

/* Whether S searched another problem than the plan's (and the plan is
 * not a candidate loaded from it). */
static bool
tui_planner_stale(const struct tui_planner *s, const struct pw_problem *p)
{
	return !pw_problem_same(s->problem, p) && (s->loaded == NULL ||
	    !pw_problem_same(s->loaded, p));
}

unsigned
tui_planner_open(struct tui *d)
{
	/* A search of another problem, or one that ended with no
	 * candidate (failed, or cancelled before any), starts again; one
	 * that ended with some, cancelled too, shows them. */
	if (d->planner != NULL && (tui_planner_stale(d->planner,
	    pw_plan_problem(d->plan)) || (d->planner->joined &&
	    d->planner->rc != PW_OK))) {
		tui_planner_free(d->planner);
		d->planner = NULL;
	}
	if (d->planner == NULL) {
		if ((d->planner = tui_planner_start(d)) == NULL)
			return TUI_DRAW_MESSAGE;
		tui_message(d, false, "design search: planning split, layout "
		    "and schedule in the background (Esc cancels)");
	} else
		tui_message(d, false, "design search: Enter opens the "
		    "candidate under the cursor, Esc goes back");
	d->mode = TUI_MODE_PLANNER;
	return TUI_DRAW_ALL;
}

/* The thread is over: joined, and the message line says how it went. */
static void
tui_planner_join(struct tui *d, struct tui_planner *s)
{
	char best[32];

	pthread_join(s->job.thread, NULL);
	s->joined = true;
	if (s->rc != PW_OK) {
		tui_message(d, true, "design search: %s", s->err.msg);
		return;
	}
	pw_fmt_seconds(best, sizeof best, s->result.cand[0].objective);
	tui_message(d, false, "design search: %zu candidate%s tried (%s), "
	    "best %s; Enter opens the one under the cursor", s->result.tried,
	    s->result.tried == 1 ? "" : "s",
	    pw_solve_end_words(s->result.ended), best);
}

unsigned
tui_planner_tick(struct tui *d)
{
	struct tui_planner *s = d->planner;
	struct pw_planner_progress pr;
	char name[32], phase[16], text[128];
	unsigned redraw = 0;

	if (s == NULL || s->joined)
		return 0;
	if (s->changes != d->changes) {
		s->changes = d->changes;
		if (tui_planner_stale(s, pw_plan_problem(d->plan))) {
			tui_planner_free(s);
			d->planner = NULL;
			if (d->mode == TUI_MODE_PLANNER)
				d->mode = TUI_MODE_TIMELINE;
			tui_message(d, false, "design search cancelled: the "
			    "problem changed");
			return TUI_DRAW_ALL;
		}
	}
	if (atomic_load(&s->job.finished)) {
		tui_planner_join(d, s);
		redraw = TUI_DRAW_PANEL | TUI_DRAW_MESSAGE;
	} else {
		pr = tui_planner_progress(s, name, phase);
		/* Elapsed time alone is no news. */
		if (pr.tried == s->tried_shown && (pr.best == s->best_shown ||
		    (isinf(pr.best) && isinf(s->best_shown))) &&
		    strcmp(phase, s->phase_shown) == 0)
			return 0;
		s->tried_shown = pr.tried;
		s->best_shown = pr.best;
		snprintf(s->phase_shown, sizeof s->phase_shown, "%s", phase);
		tui_progress(d, "design search: %s (Esc cancels)",
		    pw_planner_progress_text(&pr, text, sizeof text));
		redraw = TUI_DRAW_PANEL | TUI_DRAW_MESSAGE;
	}
	return d->mode == TUI_MODE_PLANNER ? redraw : redraw & TUI_DRAW_MESSAGE;
}

unsigned
tui_planner_cancel(struct tui *d)
{
	if (!tui_planner_running(d))
		return 0;
	tui_job_cancel(&d->planner->job);
	tui_message(d, false, "cancelling the design search: the best "
	    "candidates so far stay");
	return TUI_DRAW_MESSAGE;
}

/* The candidates of a search that ended with some; NULL otherwise. */
static struct pw_planner_result *
tui_planner_result(struct tui *d)
{
	struct tui_planner *s = d->planner;

	if (s == NULL || !s->joined || s->rc != PW_OK)
		return NULL;
	return &s->result;
}

unsigned
tui_planner_move(struct tui *d, int step)
{
	struct pw_planner_result *r = tui_planner_result(d);
	long at;

	if (r == NULL)
		return 0;
	at = (long)d->planner->cursor + step;
	d->planner->cursor = at < 0 ? 0 : at >= (long)r->ncand ? r->ncand - 1 :
	    (size_t)at;
	return TUI_DRAW_PANEL;
}

unsigned
tui_planner_load(struct tui *d)
{
	struct pw_planner_result *r = tui_planner_result(d);
	const struct pw_planner_candidate *c;
	const struct pw_family *f;
	struct pw_plan *plan;
	struct pw_error err;
	char *split, layout[32], saving[32], *what;
	size_t splitlen;
	unsigned redraw;

	if (r == NULL) {
		tui_message(d, true, "design search: %s",
		    d->planner != NULL && d->planner->joined ? "it found no "
		    "candidate" : "no candidates yet (Esc cancels the search "
		    "and keeps the best so far)");
		return TUI_DRAW_MESSAGE;
	}
	c = &r->cand[d->planner->cursor];
	/* Every stage's count in full: up to 11 characters and a comma. */
	splitlen = (size_t)c->problem->nstages * 12 + 8;
	split = pw_xmalloc(splitlen);
	pw_design_split_name(&c->design, c->problem->nstages, split,
	    splitlen);
	pw_design_layout_name(&c->design, layout, sizeof layout);
	tui_planner_saving(&c->design, saving, sizeof saving);
	if (pw_plan_new(pw_problem_copy(c->problem),
	    pw_schedule_copy(c->schedule), &plan, &err) != PW_OK) {
		tui_message(d, true, "design search: split %s, %s, %s, %s: %s",
		    split, layout, saving, c->schedule_name, err.msg);
		free(split);
		return TUI_DRAW_MESSAGE;
	}
	pw_problem_free(d->planner->loaded);
	d->planner->loaded = pw_problem_copy(c->problem);
	what = pw_xasprintf("design split %s, %s, %s, %s", split, layout,
	    saving, c->schedule_name);
	free(split);
	f = pw_family_find(c->schedule_name);
	d->mode = TUI_MODE_TIMELINE;
	redraw = tui_plan_set(d, plan, what, what, f != NULL ?
	    (int)(f - pw_families) : -1);
	free(what);
	return redraw | TUI_DRAW_ALL;
}
