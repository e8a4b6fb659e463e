/*
 * solve.c - the optimizer in the background: pw_solve_start from the
 * schedule on screen, polled by the loop; each better schedule replaces
 * the one shown as it arrives, and the end is one undoable change whose
 * undo returns to the schedule the search started from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

bool
tui_solve_running(const struct tui *d)
{
	return d->solve.run != NULL;
}

unsigned
tui_solve_begin(struct tui *d)
{
	struct tui_solve *s = &d->solve;
	struct pw_solve_opts o;
	struct pw_error err;
	char from[160], verdict[4096];

	if (s->run != NULL) {
		tui_message(d, true, "the optimizer is running already (Esc "
		    "cancels it)");
		return TUI_DRAW_MESSAGE;
	}
	/* The last timed orders are not the ones shown. */
	if (pw_plan_status(d->plan, &err) != PW_OK) {
		tui_message(d, true, "optimize: the orders do not time (undo "
		    "first): %s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	pw_solve_opts_init(&o);
	o.objective = d->objective;
	o.time_limit = d->time_limit;
	o.iteration_limit = d->iteration_limit;
	o.start = pw_plan_timed(d->plan);
	o.pins = d->pins;
	o.npins = d->npins;
	if (pw_solve_start(pw_plan_problem(d->plan), &o, &s->run, &err) !=
	    PW_OK) {
		s->run = NULL;
		tui_message(d, true, "optimize: %s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	tui_snapshot_free(&s->before);
	s->before = tui_snapshot_take(d);
	/* A start over its limits or breaking a pin gives way to the first
	 * incumbent, which keeps them, however slower. */
	s->shown = tui_plan_verdict(d, verdict, sizeof verdict) ?
	    pw_objective_value(d->objective, pw_plan_metrics(d->plan)) :
	    INFINITY;
	s->improved = false;
	s->progress = (struct pw_progress){ .incumbent = INFINITY,
	    .bound = 0, .phase = "start" };
	tui_message(d, false, "optimizing from %s (Esc cancels)",
	    tui_source(d, from, sizeof from));
	return TUI_DRAW_MESSAGE;
}

/* Seconds a message said during the search (a key refused, a file
 * exported) stays on the message line before the progress. */
#define TUI_SOLVE_SAID_SHOWN	3.0

bool
tui_solve_said_shown(const struct tui *d)
{
	return pw_now() - d->message_at < TUI_SOLVE_SAID_SHOWN;
}

/* The message line while the search runs. */
static void
tui_solve_say_progress(struct tui *d)
{
	const struct pw_progress *pr = &d->solve.progress;
	char inc[32], bound[32], el[32];

	/* A key refused for room holds the input line until the next. */
	if (tui_solve_said_shown(d) || (d->mode == TUI_MODE_PROMPT &&
	    d->prompt.refused))
		return;
	if (isinf(pr->incumbent))
		snprintf(inc, sizeof inc, "none yet");
	else
		pw_fmt_seconds(inc, sizeof inc, pr->incumbent);
	tui_progress(d, "optimizing: incumbent %s, bound %s, gap %.1f%%, %s, "
	    "%s (Esc cancels)", inc, pw_fmt_seconds(bound, sizeof bound,
	    pr->bound), isfinite(pr->gap) ? 100 * pr->gap : 100.0,
	    pw_fmt_seconds(el, sizeof el, pr->elapsed),
	    pr->phase ? pr->phase : "start");
}

/* The search ended: its result as one change, or back to the start. */
static unsigned
tui_solve_end(struct tui *d)
{
	struct tui_solve *s = &d->solve;
	const struct pw_problem *p = pw_plan_problem(d->plan);
	struct pw_solve_result res;
	struct pw_plan *plan;
	struct pw_error err;
	char obj[32], bound[32];
	int rc;

	rc = pw_solve_finish(s->run, &res, &err);
	s->run = NULL;
	if (rc == PW_OK && (rc = pw_plan_new(pw_problem_copy(p),
	    pw_schedule_copy(res.schedule), &plan, &err)) != PW_OK)
		pw_solve_result_free(&res);
	if (rc != PW_OK) {
		if (s->improved) {
			tui_plan_show(d, s->before.plan);
			s->before.plan = NULL;
		}
		tui_snapshot_free(&s->before);
		tui_message(d, true, "optimize: %s", err.msg);
		return TUI_DRAW_ALL;
	}
	pw_schedule_free(s->last);
	pw_problem_free(s->last_problem);
	s->last = res.schedule;
	s->last_problem = pw_problem_copy(p);
	res.schedule = NULL;
	free(s->bound_pins);
	s->bound = res.bound;
	s->bound_objective = d->objective;
	s->bound_npins = d->npins;
	s->bound_pins = tui_pins_copy(d->pins, d->npins);
	pw_fmt_seconds(obj, sizeof obj, res.objective);
	pw_fmt_seconds(bound, sizeof bound, res.bound);
	if (pw_schedule_same_orders(pw_plan_timed(plan),
	    pw_plan_timed(s->before.plan), NULL, NULL)) {
		/* Nothing to undo: the start, as it was, stays. */
		pw_plan_free(plan);
		tui_plan_show(d, s->before.plan);
		s->before.plan = NULL;
		tui_snapshot_free(&s->before);
		tui_message(d, false, "optimized: the start is the best found "
		    "(%s %s, bound %s, gap %.1f%%, %s): nothing changed",
		    d->objective == PW_OBJ_SPAN ? "span" : "makespan", obj,
		    bound, 100 * res.gap, pw_solve_end_words(res.ended));
		pw_solve_result_free(&res);
		return TUI_DRAW_ALL;
	}
	tui_plan_show(d, plan);
	free(d->source);
	d->source = pw_xasprintf("optimizer (gap %.1f%%, %s)", 100 * res.gap,
	    pw_solve_end_words(res.ended));
	d->edits = 0;
	d->family = -1;
	tui_plan_record(d, &s->before, "optimize");
	tui_message(d, false, "optimized: %s %s, bound %s, gap %.1f%% (%s)",
	    d->objective == PW_OBJ_SPAN ? "span" : "makespan", obj, bound,
	    100 * res.gap, pw_solve_end_words(res.ended));
	pw_solve_result_free(&res);
	return TUI_DRAW_ALL;
}

unsigned
tui_solve_tick(struct tui *d)
{
	struct tui_solve *s = &d->solve;
	struct pw_schedule *sched;
	struct pw_plan *plan;
	struct pw_error err;
	unsigned redraw = TUI_DRAW_MESSAGE;
	const char *question;
	double obj;
	bool working;

	if (s->run == NULL)
		return 0;
	working = pw_solve_poll(s->run, &s->progress);
	if (s->progress.incumbent < s->shown &&
	    (sched = pw_solve_take(s->run, &obj)) != NULL) {
		if (pw_plan_new(pw_problem_copy(pw_plan_problem(d->plan)), sched,
		    &plan, &err) == PW_OK) {
			tui_plan_show(d, plan);
			s->improved = true;
			redraw = TUI_DRAW_ALL;
		}
		/* A schedule that does not time is never shown twice. */
		s->shown = obj;
	}
	if (!working) {
		redraw = tui_solve_end(d);
		/* A quit question asked while it ran says what q drops now
		 * (q, answering what was asked, asks again first), or goes
		 * when nothing is left to lose. */
		question = tui_quit_question(d);
		if (d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
		    TUI_PROMPT_QUIT && question != NULL)
			snprintf(d->prompt.question, sizeof d->prompt.question,
			    "%s", question);
		else if (d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
		    TUI_PROMPT_QUIT) {
			tui_prompt_close(d);
			tui_message(d, false, "the optimizer ended with nothing "
			    "to save: q quits");
		}
		return redraw;
	}
	tui_solve_say_progress(d);
	return redraw;
}

bool
tui_solve_bound(const struct tui *d, double *bound, double *gap)
{
	const struct tui_solve *s = &d->solve;
	double obj;

	if (s->run != NULL)
		*bound = s->progress.bound;
	else if (s->last_problem != NULL && s->bound_objective ==
	    d->objective && s->bound_npins == d->npins && (d->npins == 0 ||
	    memcmp(s->bound_pins, d->pins, d->npins * sizeof *d->pins) ==
	    0) && pw_problem_same(s->last_problem, pw_plan_problem(d->plan)))
		*bound = s->bound;
	else
		return false;
	if (!(isfinite(*bound) && *bound > 0))
		return false;
	obj = pw_objective_value(d->objective, pw_plan_metrics(d->plan));
	*gap = pw_objective_gap(obj, *bound);
	return true;
}

unsigned
tui_solve_cancel(struct tui *d)
{
	if (d->solve.run == NULL)
		return 0;
	pw_solve_cancel(d->solve.run);
	tui_message(d, false, "cancelling the optimizer: the best schedule so "
	    "far stays");
	return TUI_DRAW_MESSAGE;
}

void
tui_solve_settle(struct tui *d)
{
	if (d->solve.run == NULL)
		return;
	pw_solve_cancel(d->solve.run);
	while (tui_solve_running(d)) {
		tui_solve_wait(d, 0.05);
		tui_solve_tick(d);
	}
}

void
tui_solve_wait(struct tui *d, double seconds)
{
	if (d->solve.run != NULL)
		pw_solve_wait(d->solve.run, seconds);
}
