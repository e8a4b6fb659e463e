/*
 * actions.c - the one key table and its actions, the way htop's Action.c
 * does it: each key of each mode runs an action that changes the state
 * and returns what must be redrawn (TUI_DRAW_*) or what the loop must do
 * with the terminal (TUI_DO_*).  The help screen and docs/designer.md
 * are generated from the same table (tui_keys_print).
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

#define TUI_ALL_MODES	(TUI_MODE_BIT(TUI_MODE_TIMELINE) | \
	TUI_MODE_BIT(TUI_MODE_HELP) | TUI_MODE_BIT(TUI_MODE_FORM) | \
	TUI_MODE_BIT(TUI_MODE_COMPARE) | TUI_MODE_BIT(TUI_MODE_SWEEP) | \
	TUI_MODE_BIT(TUI_MODE_PLANNER) | TUI_MODE_BIT(TUI_MODE_ERROR))
#define TUI_TL		TUI_MODE_BIT(TUI_MODE_TIMELINE)
/* Also while typing (in the prompt or a form field): the terminal's own
 * keys, which must work whatever has the keyboard. */
#define TUI_EVERYWHERE	(TUI_ALL_MODES | TUI_MODE_BIT(TUI_MODE_PROMPT))

/* The narrowest window, seconds, and the widest, in whole schedules. */
#define TUI_ZOOM_MIN_SPAN	1e-9
#define TUI_ZOOM_MAX_FITS	1e3

/* The selected op's device. */
static int
tui_actions_device(const struct tui *d)
{
	return pw_plan_problem(d->plan)->stages[d->sel.stage].device;
}

static double
tui_actions_start(const struct tui *d, struct pw_op op)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);

	return pw_plan_timing(d->plan)->start[pw_op_index(p, op)];
}

/* Whether a change of the plan must wait: the optimizer replaces it. */
static bool
tui_actions_busy(struct tui *d)
{
	if (!tui_solve_running(d))
		return false;
	tui_message(d, true, "the optimizer is running: Esc cancels it first");
	return true;
}

/* Whether an op is selected, saying so when not. */
static bool
tui_actions_has_sel(struct tui *d)
{
	if (!d->has_sel)
		tui_message(d, true, "no op is selected");
	return d->has_sel;
}

/* ------------------------------------------------------------------ */
/* Navigation                                                          */

/* The op STEP places away from the selection in its order. */
static unsigned
tui_act_step(struct tui *d, int step)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_where *w = pw_plan_where(d->plan);
	const struct pw_seq *q;
	size_t i;
	int pos;

	if (!tui_actions_has_sel(d))
		return TUI_DRAW_MESSAGE;
	i = pw_op_index(p, d->sel);
	q = pw_schedule_order(pw_plan_timed(d->plan), w->resource[i]);
	pos = w->position[i] + step;
	if (pos < 0 || pos >= q->len)
		return 0;
	tui_select(d, q->ops[pos]);
	return TUI_DRAW_TIMELINE | TUI_DRAW_DETAILS;
}

static unsigned tui_act_left(struct tui *d) { return tui_act_step(d, -1); }
static unsigned tui_act_right(struct tui *d) { return tui_act_step(d, 1); }

/* The nearest op in time on the next device STEP away that runs any. */
static unsigned
tui_act_vertical(struct tui *d, int step)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	struct pw_op op;
	double t;
	int dev;

	if (!tui_actions_has_sel(d))
		return TUI_DRAW_MESSAGE;
	t = tui_actions_start(d, d->sel);
	for (dev = tui_actions_device(d) + step; dev >= 0 &&
	    dev < p->devices; dev += step) {
		if (tui_op_near(d, dev, t, &op)) {
			tui_select(d, op);
			return TUI_DRAW_TIMELINE | TUI_DRAW_DETAILS;
		}
	}
	return 0;
}

static unsigned tui_act_up(struct tui *d) { return tui_act_vertical(d, -1); }
static unsigned tui_act_down(struct tui *d) { return tui_act_vertical(d, 1); }

/* Pans to T0, kept between the schedule's start and its end less a
 * window. */
static unsigned
tui_actions_pan(struct tui *d, double t0)
{
	const struct pw_metrics *m = pw_plan_metrics(d->plan);
	double hi = fmax(m->start, m->start + tui_view_whole(d) - d->view.span);

	d->view.t0 = fmin(fmax(t0, m->start), hi);
	return TUI_DRAW_TIMELINE;
}

/* Zooms by FACTOR (the new span over the old) about the selection's
 * start, which stays where it is on screen; about the middle where no
 * selection shows.  The window stays within the schedule, as a pan
 * keeps it. */
static unsigned
tui_actions_zoom(struct tui *d, double factor)
{
	struct tui_view *v = &d->view;
	double c = d->has_sel ? tui_actions_start(d, d->sel) : NAN;
	double whole = tui_view_whole(d);

	/* From a nanosecond to a thousand schedules across. */
	if (v->span * factor < TUI_ZOOM_MIN_SPAN ||
	    v->span * factor > TUI_ZOOM_MAX_FITS * fmax(whole, 1e-9)) {
		tui_message(d, true, "zoom: as far as it goes");
		return TUI_DRAW_MESSAGE;
	}

	if (!(c >= v->t0 && c <= v->t0 + v->span))
		c = v->t0 + v->span / 2;
	v->span *= factor;
	v->whole = false;
	return tui_actions_pan(d, c - (c - v->t0) * factor);
}

static unsigned tui_act_zoom_in(struct tui *d) { return tui_actions_zoom(d, 0.5); }
static unsigned tui_act_zoom_out(struct tui *d) { return tui_actions_zoom(d, 2); }

static unsigned
tui_act_fit(struct tui *d)
{
	tui_view_fit(d);
	tui_view_follow(d);
	return TUI_DRAW_TIMELINE;
}

static unsigned
tui_act_home(struct tui *d)
{
	return tui_actions_pan(d, -INFINITY);
}

static unsigned
tui_act_end(struct tui *d)
{
	return tui_actions_pan(d, INFINITY);
}

static unsigned
tui_act_page_left(struct tui *d)
{
	return tui_actions_pan(d, d->view.t0 - d->view.span);
}

static unsigned
tui_act_page_right(struct tui *d)
{
	return tui_actions_pan(d, d->view.t0 + d->view.span);
}

static unsigned
tui_act_goto(struct tui *d)
{
	char q[64];

	snprintf(q, sizeof q, "device (0-%d): ",
	    pw_plan_problem(d->plan)->devices - 1);
	return tui_prompt_open(d, TUI_PROMPT_GOTO, q, "");
}

static unsigned
tui_act_find(struct tui *d)
{
	return tui_prompt_open(d, TUI_PROMPT_FIND, "find op (B(3,12)): ", "");
}

static unsigned
tui_act_fold(struct tui *d)
{
	int dev;

	if (!tui_actions_has_sel(d))
		return TUI_DRAW_MESSAGE;
	dev = tui_actions_device(d);
	d->view.folded[dev] = !d->view.folded[dev];
	tui_message(d, false, "device %d %s", dev,
	    d->view.folded[dev] ? "folded to its compute lane" : "unfolded");
	return TUI_DRAW_TIMELINE | TUI_DRAW_MESSAGE;
}

static unsigned
tui_act_critical(struct tui *d)
{
	size_t n;

	d->show_critical = !d->show_critical;
	if (d->show_critical) {
		pw_plan_critical(d->plan, &n);
		tui_message(d, false, "critical path: %zu ops with no slack",
		    n);
	} else {
		tui_message(d, false, "critical path hidden");
	}
	return TUI_DRAW_TIMELINE | TUI_DRAW_MESSAGE;
}

/* ------------------------------------------------------------------ */
/* Order edits and pins                                                */

/* Where an op at position Q of an order is once the op at FROM moved to
 * TO. */
static int
tui_actions_moved(int q, int from, int to)
{
	if (q == from)
		return to;
	if (from < to && q > from && q <= to)
		return q - 1;
	if (to < from && q >= to && q < from)
		return q + 1;
	return q;
}

/* The pin that holds and that moving the op at FROM of DEVICE's order to
 * TO breaks, or NULL.  A pin broken already (a file may carry one its
 * schedule breaks) refuses no move. */
static const struct pw_pin *
tui_actions_broken_pin(const struct tui *d, int device, int from, int to)
{
	const struct pw_seq *q = &pw_plan_schedule(d->plan)->device[device];
	struct pw_op a, b;
	int pa, pb;
	size_t i;

	for (i = 0; i < d->npins; i++) {
		if (!tui_op_find(d, d->pins[i].before, &a) ||
		    !tui_op_find(d, d->pins[i].after, &b))
			continue;
		pa = pw_seq_find(q, a);
		pb = pw_seq_find(q, b);
		if (pa < 0 || pb < 0 || pa > pb)
			continue;
		if (tui_actions_moved(pa, from, to) >
		    tui_actions_moved(pb, from, to))
			return &d->pins[i];
	}
	return NULL;
}

/* Moves the op at FROM of DEVICE's edited order to TO, as one edit WHAT,
 * unless that breaks a pin. */
static unsigned
tui_actions_move(struct tui *d, int device, int from, int to,
    const char *what)
{
	const struct pw_seq *q = &pw_plan_schedule(d->plan)->device[device];
	const struct pw_pin *pin;
	struct pw_edit e = { .kind = PW_EDIT_MOVE };
	char a[48], b[48];

	if ((pin = tui_actions_broken_pin(d, device, from, to)) != NULL) {
		tui_message(d, true, "%s refused: it would break the pin %s "
		    "before %s (P removes it)", what,
		    pw_op_name(a, sizeof a, pin->before),
		    pw_op_name(b, sizeof b, pin->after));
		return TUI_DRAW_MESSAGE;
	}
	e.op = q->ops[from];
	e.to = to;
	return tui_apply(d, &e, what);
}

/* Whether the selection is a compute op an edit may change now (its
 * name in NAME, of 48 bytes), saying why not; WHY: what transfers
 * cannot do. */
static bool
tui_actions_editable(struct tui *d, char *name, const char *why)
{
	if (tui_actions_busy(d) || !tui_actions_has_sel(d))
		return false;
	pw_op_name(name, 48, d->sel);
	if (!pw_kind_is_transfer(d->sel.kind))
		return true;
	tui_message(d, true, "%s is a transfer: %s", name, why);
	return false;
}

/* Moves the selected compute op STEP places in its device's order. */
static unsigned
tui_act_shift(struct tui *d, int step)
{
	const struct pw_seq *q;
	char name[48], what[80];
	int dev, pos;

	if (!tui_actions_editable(d, name, "only compute ops move"))
		return TUI_DRAW_MESSAGE;
	dev = tui_actions_device(d);
	q = &pw_plan_schedule(d->plan)->device[dev];
	pos = pw_seq_find(q, d->sel);
	if (pos + step < 0 || pos + step >= q->len) {
		tui_message(d, true, "%s is already the %s op of device %d",
		    name, step < 0 ? "first" : "last", dev);
		return TUI_DRAW_MESSAGE;
	}
	snprintf(what, sizeof what, "move %s %s", name,
	    step < 0 ? "earlier" : "later");
	return tui_actions_move(d, dev, pos, pos + step, what);
}

static unsigned tui_act_earlier(struct tui *d) { return tui_act_shift(d, -1); }
static unsigned tui_act_later(struct tui *d) { return tui_act_shift(d, 1); }

static unsigned
tui_act_pin(struct tui *d)
{
	const struct pw_seq *q;
	struct pw_pin pin;
	char a[48], b[48];
	int dev, pa, pb;
	size_t i;

	if (!tui_actions_editable(d, a, "pins join compute ops"))
		return TUI_DRAW_MESSAGE;
	if (!d->pin_pending) {
		d->pin_pending = true;
		d->pin_first = d->sel;
		tui_message(d, false, "pin %s: select another op of device %d "
		    "and press p (Esc cancels)", a, tui_actions_device(d));
		return TUI_DRAW_MESSAGE | TUI_DRAW_TIMELINE;
	}
	pw_op_name(b, sizeof b, d->pin_first);
	dev = tui_actions_device(d);
	q = &pw_plan_schedule(d->plan)->device[dev];
	pa = pw_seq_find(q, d->pin_first);
	pb = pw_seq_find(q, d->sel);
	if (pa < 0 || pa == pb) {
		tui_message(d, true, "pin %s: %s; select another op of device "
		    "%d and press p (Esc cancels)", b, pa < 0 ? "pins join ops "
		    "of one device" : "an op cannot precede itself",
		    pw_plan_problem(d->plan)->stages[d->pin_first.stage].device);
		return TUI_DRAW_MESSAGE;
	}
	d->pin_pending = false;
	pin.before = pa < pb ? d->pin_first : d->sel;
	pin.after = pa < pb ? d->sel : d->pin_first;
	for (i = 0; i < d->npins; i++) {
		if (pw_pin_same(&d->pins[i], &pin)) {
			tui_message(d, true, "%s before %s is pinned already",
			    pw_op_name(a, sizeof a, pin.before),
			    pw_op_name(b, sizeof b, pin.after));
			return TUI_DRAW_MESSAGE;
		}
	}
	return tui_pin_add(d, pin);
}

/* Whether pin op A names the op B of the schedule. */
static bool
tui_actions_names(const struct tui *d, struct pw_op a, struct pw_op b)
{
	struct pw_op found;

	return tui_op_find(d, a, &found) && pw_op_same(found, b);
}

static unsigned
tui_act_unpin(struct tui *d)
{
	unsigned redraw = 0;
	char name[48];
	size_t i;

	if (tui_actions_busy(d) || !tui_actions_has_sel(d))
		return TUI_DRAW_MESSAGE;
	for (i = d->npins; i-- > 0;) {
		if (tui_actions_names(d, d->pins[i].before, d->sel) ||
		    tui_actions_names(d, d->pins[i].after, d->sel))
			redraw |= tui_pin_remove(d, i);
	}
	if (redraw == 0) {
		tui_message(d, true, "%s has no pin",
		    pw_op_name(name, sizeof name, d->sel));
		return TUI_DRAW_MESSAGE;
	}
	return redraw;
}

static unsigned
tui_act_undo(struct tui *d)
{
	return tui_actions_busy(d) ? TUI_DRAW_MESSAGE : tui_undo(d);
}

static unsigned
tui_act_redo(struct tui *d)
{
	return tui_actions_busy(d) ? TUI_DRAW_MESSAGE : tui_redo(d);
}

/* ------------------------------------------------------------------ */
/* Optimizing, families, views                                         */

static unsigned
tui_act_optimize(struct tui *d)
{
	return tui_solve_begin(d);
}

/* Closes the open panel. */
static unsigned
tui_actions_close(struct tui *d)
{
	/* What the message line says instead of the panel's keys ("Esc
	 * closes"), which would outlive the panel they speak of. */
	static const char *const closed[TUI_NMODES] = {
		[TUI_MODE_HELP] = "help closed",
		[TUI_MODE_FORM] = "constraints closed",
		[TUI_MODE_COMPARE] = "compare closed (c opens it again)",
		[TUI_MODE_SWEEP] = "memory sweep closed (m opens it again)",
		[TUI_MODE_PLANNER] = "design search closed (D opens it "
		    "again)",
		[TUI_MODE_ERROR] = "error closed: the problem and schedule "
		    "are as they were",
	};

	if (d->mode == TUI_MODE_COMPARE)
		tui_compare_clear(d);
	if (closed[d->mode] != NULL)
		tui_message(d, false, "%s", closed[d->mode]);
	d->mode = TUI_MODE_TIMELINE;
	return TUI_DRAW_ALL;
}

/* Leaves what is open: a running search, a pending pin, a panel.  The
 * design search's panel shows it running: Esc there stops it first. */
static unsigned
tui_act_escape(struct tui *d)
{
	if (d->mode == TUI_MODE_PLANNER && tui_planner_running(d))
		return tui_planner_cancel(d);
	if (d->mode != TUI_MODE_TIMELINE)
		return tui_actions_close(d);
	if (tui_solve_running(d))
		return tui_solve_cancel(d);
	if (tui_planner_running(d))
		return tui_planner_cancel(d);
	if (tui_launch_running(d))
		return tui_launch_cancel(d);
	if (d->pin_pending) {
		d->pin_pending = false;
		tui_message(d, false, "pin cancelled");
		return TUI_DRAW_MESSAGE | TUI_DRAW_TIMELINE;
	}
	return 0;
}

static unsigned
tui_act_family(struct tui *d)
{
	const struct pw_family *f;
	struct pw_plan *plan;
	struct pw_error err;
	char what[96];
	int i;

	if (tui_actions_busy(d))
		return TUI_DRAW_MESSAGE;
	i = d->cycle;
	d->cycle = (i + 1) % (int)pw_nfamilies;
	f = &pw_families[i];
	tui_busy(d, "building family %s ...", f->name);
	if (tui_family_plan(pw_plan_problem(d->plan), i, &plan, NULL, &err) !=
	    PW_OK) {
		tui_message(d, true, "family %s: %s (f tries the next)",
		    f->name, err.msg);
		return TUI_DRAW_MESSAGE;
	}
	snprintf(what, sizeof what, "family %s", f->name);
	return tui_plan_set(d, plan, what, what, i);
}

static unsigned
tui_act_compare(struct tui *d)
{
	return tui_compare_open(d);
}

static unsigned
tui_act_sweep(struct tui *d)
{
	return tui_sweep_open(d);
}

static unsigned
tui_act_compare_slot(struct tui *d)
{
	d->compare.focus = !d->compare.focus;
	return TUI_DRAW_PANEL;
}

static unsigned tui_act_compare_back(struct tui *d) { return tui_compare_cycle(d, -1); }
static unsigned tui_act_compare_next(struct tui *d) { return tui_compare_cycle(d, 1); }

static unsigned
tui_act_compare_file(struct tui *d)
{
	return tui_prompt_open(d, TUI_PROMPT_COMPARE_FILE,
	    "schedule file to compare: ", d->compare.file ? d->compare.file :
	    "");
}

static unsigned tui_act_sweep_left(struct tui *d) { return tui_sweep_move(d, -1, 0); }
static unsigned tui_act_sweep_right(struct tui *d) { return tui_sweep_move(d, 1, 0); }
static unsigned tui_act_sweep_up(struct tui *d) { return tui_sweep_move(d, 0, -1); }
static unsigned tui_act_sweep_down(struct tui *d) { return tui_sweep_move(d, 0, 1); }

static unsigned
tui_act_sweep_load(struct tui *d)
{
	return tui_actions_busy(d) ? TUI_DRAW_MESSAGE : tui_sweep_load(d);
}

static unsigned
tui_act_design(struct tui *d)
{
	return tui_planner_open(d);
}

static unsigned tui_act_design_up(struct tui *d) { return tui_planner_move(d, -1); }
static unsigned tui_act_design_down(struct tui *d) { return tui_planner_move(d, 1); }

static unsigned
tui_act_design_load(struct tui *d)
{
	return tui_actions_busy(d) ? TUI_DRAW_MESSAGE : tui_planner_load(d);
}

/* ------------------------------------------------------------------ */
/* The constraints form, the help, the files                           */

static unsigned
tui_act_form(struct tui *d)
{
	if (tui_actions_busy(d))
		return TUI_DRAW_MESSAGE;
	d->mode = TUI_MODE_FORM;
	tui_message_clear(d);
	d->form.editing = false;
	if (d->form.field >= tui_form_nfields(d))
		d->form.field = 0;
	return TUI_DRAW_ALL;
}

static unsigned
tui_actions_field(struct tui *d, int step)
{
	int n = tui_form_nfields(d);

	d->form.field = (d->form.field + step + n) % n;
	return TUI_DRAW_PANEL;
}

static unsigned tui_act_field_prev(struct tui *d) { return tui_actions_field(d, -1); }
static unsigned tui_act_field_next(struct tui *d) { return tui_actions_field(d, 1); }

static unsigned
tui_act_field_edit(struct tui *d)
{
	int pin = tui_form_pin(d, d->form.field);
	struct pw_op op;
	char name[48];

	/* A pin's row is not typed: Enter shows its first op. */
	if (pin >= 0) {
		if (!tui_op_find(d, d->pins[pin].before, &op)) {
			tui_message(d, true, "the schedule has no %s",
			    pw_op_name(name, sizeof name, d->pins[pin].before));
			return TUI_DRAW_MESSAGE;
		}
		d->mode = TUI_MODE_TIMELINE;
		tui_select(d, op);
		tui_message(d, false, "%s", pw_op_name(name, sizeof name, op));
		return TUI_DRAW_ALL;
	}
	tui_form_value(d, d->form.field, d->form.text, sizeof d->form.text);
	d->form.len = strlen(d->form.text);
	d->form.editing = true;
	return TUI_DRAW_PANEL;
}

/* x or Delete on a pin's row of the form: the pin removed, one change. */
static unsigned
tui_act_field_unpin(struct tui *d)
{
	int pin = tui_form_pin(d, d->form.field);
	unsigned redraw;

	if (pin < 0) {
		tui_message(d, true, "only a pin's row is removed (the pins "
		    "follow the fields)");
		return TUI_DRAW_MESSAGE;
	}
	redraw = tui_pin_remove(d, (size_t)pin);
	if (d->form.field >= tui_form_nfields(d))
		d->form.field = tui_form_nfields(d) - 1;
	return redraw;
}

static unsigned
tui_act_edit(struct tui *d)
{
	if (tui_actions_busy(d))
		return TUI_DRAW_MESSAGE;
	if (d->path == NULL)
		return tui_prompt_open(d, TUI_PROMPT_NEW_FILE,
		    "write the problem to a new file (.lua or .json): ",
		    "problem.lua");
	free(d->edit_path);
	d->edit_path = pw_xstrdup(d->path);
	free(d->edit_before);
	d->edit_before = tui_seen_changed(&d->path_seen, d->path) ? NULL :
	    tui_file_bytes(d->edit_path, &d->edit_nbefore);
	return TUI_DO_EDITOR | TUI_DRAW_ALL;
}

static unsigned
tui_act_save_as(struct tui *d)
{
	/* The schedules the search shows are not a change until it ends. */
	if (tui_actions_busy(d))
		return TUI_DRAW_MESSAGE;
	return tui_prompt_open(d, TUI_PROMPT_SAVE_AS, "save the schedule as: ",
	    d->save_path ? d->save_path : "schedule.json");
}

static unsigned
tui_act_save(struct tui *d)
{
	if (tui_actions_busy(d))
		return TUI_DRAW_MESSAGE;
	if (d->save_path == NULL)
		return tui_act_save_as(d);
	return tui_prompt_save(d);
}

static unsigned
tui_act_export(struct tui *d)
{
	return tui_prompt_export_open(d);
}

static unsigned
tui_act_launch(struct tui *d)
{
	return tui_actions_busy(d) ? TUI_DRAW_MESSAGE : tui_launch_begin(d);
}

static unsigned
tui_act_help(struct tui *d)
{
	d->mode = TUI_MODE_HELP;
	tui_message_clear(d);
	d->help_top = 0;
	return TUI_DRAW_ALL;
}

/* A page of the help: the panel's rows less its frame. */
static int
tui_actions_help_page(const struct tui *d)
{
	struct tui_layout l;
	int rows;

	tui_layout(d, d->rows, d->cols, &l);
	rows = l.panel.h - 2;
	tui_layout_free(&l);
	return rows > 1 ? rows : 1;
}

/* Scrolls the help by STEP rows, no further than its last page. */
static unsigned
tui_actions_help_scroll(struct tui *d, int step)
{
	int top = d->help_top + step;
	int last = (int)tui_nkeys - tui_actions_help_page(d);

	if (top > last)
		top = last;
	d->help_top = top < 0 ? 0 : top;
	return TUI_DRAW_PANEL;
}

static unsigned tui_act_help_up(struct tui *d) { return tui_actions_help_scroll(d, -1); }
static unsigned tui_act_help_down(struct tui *d) { return tui_actions_help_scroll(d, 1); }

static unsigned
tui_act_help_page_up(struct tui *d)
{
	return tui_actions_help_scroll(d, -tui_actions_help_page(d));
}

static unsigned
tui_act_help_page_down(struct tui *d)
{
	return tui_actions_help_scroll(d, tui_actions_help_page(d));
}

const char *
tui_quit_question(const struct tui *d)
{
	bool running = tui_solve_running(d), unsaved = tui_unsaved(d);

	if (!unsaved && !running)
		return NULL;
	return !running ? "unsaved changes: s saves and quits, q quits "
	    "without saving, Esc stays " : !unsaved ? "the optimizer is "
	    "running: q quits and drops it, Esc stays " : "the optimizer is "
	    "running and changes are unsaved: s saves and quits, q quits "
	    "and drops both, Esc stays ";
}

/* q: closes the panel; on the timeline quits, asking when unsaved or
 * while the optimizer runs (its incumbents are shown, not yet a change). */
static unsigned
tui_act_quit(struct tui *d)
{
	const char *question = tui_quit_question(d);

	if (d->mode != TUI_MODE_TIMELINE)
		return tui_actions_close(d);
	if (question == NULL)
		return TUI_DO_QUIT;
	tui_prompt_open(d, TUI_PROMPT_QUIT, question, "");
	d->prompt.asked = question;
	return TUI_DRAW_MESSAGE | TUI_DRAW_PANEL;
}

static unsigned
tui_act_suspend(struct tui *d)
{
	(void)d;
	return TUI_DO_SUSPEND | TUI_DRAW_ALL;
}

static unsigned
tui_act_redraw(struct tui *d)
{
	(void)d;
	return TUI_DO_REPAINT | TUI_DRAW_ALL;
}

/* ------------------------------------------------------------------ */
/* The table                                                           */

#define TUI_HELP	TUI_MODE_BIT(TUI_MODE_HELP)
#define TUI_FORM	TUI_MODE_BIT(TUI_MODE_FORM)
#define TUI_CMP		TUI_MODE_BIT(TUI_MODE_COMPARE)
#define TUI_SWEEP	TUI_MODE_BIT(TUI_MODE_SWEEP)
#define TUI_PLANNER	TUI_MODE_BIT(TUI_MODE_PLANNER)
#define TUI_ERR		TUI_MODE_BIT(TUI_MODE_ERROR)

const struct tui_key tui_keys[] = {
	{ { KEY_LEFT, 'h' }, "Left h", TUI_TL, tui_act_left,
	    "select the previous op of the device", "arrows select" },
	{ { KEY_RIGHT, 'l' }, "Right l", TUI_TL, tui_act_right,
	    "select the next op of the device", NULL },
	{ { KEY_UP, 'k' }, "Up k", TUI_TL, tui_act_up,
	    "select the nearest op in time on the device above", NULL },
	{ { KEY_DOWN, 'j' }, "Down j", TUI_TL, tui_act_down,
	    "select the nearest op in time on the device below", NULL },
	{ { '+', '=' }, "+ =", TUI_TL, tui_act_zoom_in,
	    "zoom in about the selection (wheel up)", "+/- zoom" },
	{ { '-' }, "-", TUI_TL, tui_act_zoom_out,
	    "zoom out about the selection (wheel down)", NULL },
	{ { '0' }, "0", TUI_TL, tui_act_fit, "fit the whole schedule", NULL },
	{ { KEY_HOME }, "Home", TUI_TL, tui_act_home,
	    "pan to the start", NULL },
	{ { KEY_END }, "End", TUI_TL, tui_act_end, "pan to the end", NULL },
	{ { KEY_PPAGE }, "PgUp", TUI_TL, tui_act_page_left,
	    "pan one window left", NULL },
	{ { KEY_NPAGE }, "PgDn", TUI_TL, tui_act_page_right,
	    "pan one window right", NULL },
	{ { 'g' }, "g", TUI_TL, tui_act_goto, "go to a device", NULL },
	{ { '/' }, "/", TUI_TL, tui_act_find,
	    "find an op by name, as B(3,12)", NULL },
	{ { 'z' }, "z", TUI_TL, tui_act_fold,
	    "fold or unfold the device to its compute lane", NULL },
	{ { '<', ',' }, "< ,", TUI_TL, tui_act_earlier,
	    "move the op one place earlier on its device", "< > move" },
	{ { '>', '.' }, "> .", TUI_TL, tui_act_later,
	    "move the op one place later on its device", NULL },
	{ { 'p' }, "p", TUI_TL, tui_act_pin,
	    "pin: p on one op, then p on another of the device", "p pin" },
	{ { 'P' }, "P", TUI_TL, tui_act_unpin, "remove the op's pins", NULL },
	{ { 'C' }, "C", TUI_TL, tui_act_critical,
	    "show or hide the critical path", NULL },
	{ { 'u' }, "u", TUI_TL, tui_act_undo, "undo the last change",
	    "u undo" },
	{ { TUI_KEY_CTRL('r') }, "Ctrl-R", TUI_TL, tui_act_redo,
	    "redo what was undone", NULL },
	{ { 'o' }, "o", TUI_TL, tui_act_optimize,
	    "optimize from this schedule in the background (undo first if "
	    "it deadlocks)", "o optimize" },
	{ { 'D' }, "D", TUI_TL, tui_act_design,
	    "design search: split, layout and schedule", "D design" },
	{ { TUI_KEY_ESC }, "Esc", TUI_ALL_MODES, tui_act_escape,
	    "stop a search, a launch or a pin; close the panel",
	    "Esc closes" },
	{ { 'f' }, "f", TUI_TL, tui_act_family,
	    "switch to the next schedule family", "f family" },
	{ { 'c' }, "c", TUI_TL, tui_act_compare,
	    "compare two schedules", "c compare" },
	{ { 'm' }, "m", TUI_TL, tui_act_sweep,
	    "sweep the memory limit: step time against memory", "m sweep" },
	{ { '\t', KEY_UP, KEY_DOWN }, "Tab Up Down", TUI_CMP,
	    tui_act_compare_slot, "switch between the two schedules",
	    "Tab other schedule" },
	{ { KEY_LEFT, 'h' }, "Left h", TUI_CMP, tui_act_compare_back,
	    "show the previous source in this slot", "Left/Right source" },
	{ { KEY_RIGHT, 'l' }, "Right l", TUI_CMP, tui_act_compare_next,
	    "show the next source in this slot", NULL },
	{ { 'F' }, "F", TUI_CMP, tui_act_compare_file,
	    "compare with a schedule file", "F file" },
	{ { KEY_LEFT, 'h' }, "Left h", TUI_SWEEP, tui_act_sweep_left,
	    "the next smaller memory limit", "Left/Right limit" },
	{ { KEY_RIGHT, 'l' }, "Right l", TUI_SWEEP, tui_act_sweep_right,
	    "the next larger memory limit", NULL },
	{ { KEY_UP, 'k' }, "Up k", TUI_SWEEP, tui_act_sweep_up,
	    "the previous series", "Up/Down series" },
	{ { KEY_DOWN, 'j' }, "Down j", TUI_SWEEP, tui_act_sweep_down,
	    "the next series", NULL },
	{ { '\n', '\r', KEY_ENTER }, "Enter", TUI_SWEEP, tui_act_sweep_load,
	    "load the point's schedule", "Enter opens" },
	{ { 'b' }, "b", TUI_SWEEP, tui_sweep_axis,
	    "plot the bubble rate or the step time", "b axis" },
	{ { KEY_UP, 'k' }, "Up k", TUI_PLANNER, tui_act_design_up,
	    "the previous candidate", "Up/Down select" },
	{ { KEY_DOWN, 'j' }, "Down j", TUI_PLANNER, tui_act_design_down,
	    "the next candidate", NULL },
	{ { '\n', '\r', KEY_ENTER }, "Enter", TUI_PLANNER, tui_act_design_load,
	    "open the candidate: its schedule with its problem",
	    "Enter opens" },
	{ { 't' }, "t", TUI_TL, tui_act_form,
	    "edit the constraints", "t constraints" },
	{ { KEY_UP, KEY_BTAB, 'k' }, "Up Shift-Tab k", TUI_FORM,
	    tui_act_field_prev, "the previous field", NULL },
	{ { KEY_DOWN, '\t', 'j' }, "Down Tab j", TUI_FORM, tui_act_field_next,
	    "the next field", "Tab next field" },
	{ { '\n', '\r', KEY_ENTER }, "Enter", TUI_FORM, tui_act_field_edit,
	    "edit the field, Enter sets it; a pin: find its op",
	    "Enter edits" },
	{ { KEY_DC, 'x' }, "Delete x", TUI_FORM, tui_act_field_unpin,
	    "remove the pin of this row", NULL },
	{ { 'e' }, "e", TUI_TL, tui_act_edit,
	    "edit the problem file in $EDITOR, then reload it", NULL },
	{ { 's' }, "s", TUI_TL, tui_act_save,
	    "save the schedule with its pins", "s save" },
	{ { 'S' }, "S", TUI_TL, tui_act_save_as, "save the schedule as", NULL },
	{ { 'x' }, "x", TUI_TL, tui_act_export,
	    "export in any format of the export registry", NULL },
	{ { 'L' }, "L", TUI_TL, tui_act_launch,
	    "launch it for real (Esc stops): measured lanes", NULL },
	{ { '?' }, "?", TUI_TL, tui_act_help, "this help", "? help" },
	{ { KEY_UP, 'k' }, "Up k", TUI_HELP, tui_act_help_up,
	    "scroll the help up", "Up/Down scroll" },
	{ { KEY_DOWN, 'j' }, "Down j", TUI_HELP, tui_act_help_down,
	    "scroll the help down", NULL },
	{ { KEY_PPAGE }, "PgUp", TUI_HELP, tui_act_help_page_up,
	    "scroll the help one page up", NULL },
	{ { KEY_NPAGE, ' ' }, "PgDn Space", TUI_HELP, tui_act_help_page_down,
	    "scroll the help one page down", NULL },
	{ { 'q' }, "q", TUI_ALL_MODES, tui_act_quit,
	    "quit (asks when unsaved); in a panel, close it", "q quit" },
	{ { TUI_KEY_CTRL('z') }, "Ctrl-Z", TUI_EVERYWHERE, tui_act_suspend,
	    "suspend to the shell", NULL },
	{ { TUI_KEY_CTRL('l') }, "Ctrl-L", TUI_EVERYWHERE, tui_act_redraw,
	    "repaint the whole screen", NULL },
};
const size_t tui_nkeys = sizeof tui_keys / sizeof tui_keys[0];

/* The table's first row binding KEY in a mode of MODES; NULL when none
 * does. */
static const struct tui_key *
tui_actions_row(unsigned modes, int key)
{
	size_t i;
	int k;

	for (i = 0; i < tui_nkeys; i++) {
		if (!(tui_keys[i].modes & modes))
			continue;
		for (k = 0; k < 4 && tui_keys[i].keys[k] != 0; k++) {
			if (tui_keys[i].keys[k] == key)
				return &tui_keys[i];
		}
	}
	return NULL;
}

/* The action of tui_actions_row's row; NULL when none. */
static tui_action
tui_actions_find(unsigned modes, int key)
{
	const struct tui_key *row = tui_actions_row(modes, key);

	return row != NULL ? row->act : NULL;
}

/* The keys each mode's message line hints at, most wanted first (a
 * narrow line keeps the first that fit), 0-terminated; the prompt's
 * line is its question. */
static const int tui_actions_hinted[TUI_NMODES][14] = {
	[TUI_MODE_TIMELINE] = { '?', 'q', KEY_LEFT, '+', '<', 'p', 'u', 'o',
	    'f', 'c', 'm', 's', 'D' },
	[TUI_MODE_HELP] = { KEY_UP, TUI_KEY_ESC },
	[TUI_MODE_FORM] = { '\t', '\n', TUI_KEY_ESC },
	[TUI_MODE_COMPARE] = { '\t', KEY_LEFT, 'F', TUI_KEY_ESC },
	[TUI_MODE_SWEEP] = { KEY_LEFT, KEY_UP, '\n', 'b', TUI_KEY_ESC },
	[TUI_MODE_PLANNER] = { KEY_UP, '\n', TUI_KEY_ESC },
	[TUI_MODE_ERROR] = { TUI_KEY_ESC },
};

/* The keys a new session's first message names. */
static const int tui_actions_greeting[] = { '?', 'o', 't', 'q', 0 };

void
tui_keys_hints(char *buf, size_t len, enum tui_mode mode, bool greeting)
{
	const int *keys = greeting ? tui_actions_greeting :
	    tui_actions_hinted[mode];
	unsigned modes = TUI_MODE_BIT(greeting ? TUI_MODE_TIMELINE : mode);
	const struct tui_key *row;
	size_t at = 0, n;
	int i;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; keys[i] != 0; i++) {
		row = tui_actions_row(modes, keys[i]);
		/* A hint names a key that acts where it is shown. */
		assert(row != NULL && row->hint != NULL);
		/* Whole hints only: the rest does not fit. */
		n = (size_t)snprintf(buf + at, len - at, "%s%s", i > 0 ? "  " :
		    "", row->hint);
		if (n >= len - at) {
			buf[at] = '\0';
			return;
		}
		at += n;
	}
}

/* The key table's action for KEY in the current mode; while the user
 * types, only the rows that act everywhere come before the typing. */
static unsigned
tui_actions_key(struct tui *d, int key)
{
	bool typing = d->mode == TUI_MODE_PROMPT ||
	    (d->mode == TUI_MODE_FORM && d->form.editing);
	bool unseen = tui_too_small(d->rows, d->cols);
	tui_action act;

	if ((typing || unseen) && (act = tui_actions_find(
	    TUI_MODE_BIT(TUI_MODE_PROMPT), key)) != NULL)
		return act(d);
	/* Below the least screen only its notice shows, and the input line:
	 * what other keys did would go unseen, so q alone acts, and quits
	 * (as the notice says) from a panel too. */
	if (unseen && d->mode != TUI_MODE_PROMPT) {
		if (tui_actions_find(TUI_MODE_BIT(d->mode), key) !=
		    tui_act_quit || typing)
			return 0;
		if (d->mode != TUI_MODE_TIMELINE)
			tui_actions_close(d);
		return tui_act_quit(d) | TUI_DRAW_ALL;
	}
	if (d->mode == TUI_MODE_PROMPT)
		return tui_prompt_key(d, key);
	if (d->mode == TUI_MODE_FORM && d->form.editing)
		return tui_form_key(d, key);
	act = tui_actions_find(TUI_MODE_BIT(d->mode), key);
	return act != NULL ? act(d) : 0;
}

unsigned
tui_key(struct tui *d, int key)
{
	enum tui_mode was = d->mode;
	unsigned redraw = tui_actions_key(d, key);

	/* A button held across a panel is no drag on the timeline after. */
	if (d->mode != was)
		d->dragging = false;
	return redraw;
}

/* The resource of the lane at screen ROW and the time at COL in L, or
 * false when they are no op lane of the timeline. */
static bool
tui_actions_at(const struct tui *d, const struct tui_layout *l, int row,
    int col, int *resource, double *t)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	int i, x = col - l->timeline.x - l->label_w;
	int width = l->timeline.w - l->label_w;

	if (l->too_small || width <= 0 || x < 0 || x >= width)
		return false;
	for (i = 0; i < l->nlanes; i++) {
		if (l->lanes[i].y != row)
			continue;
		/* A measured lane's times are not the orders': it is read,
		 * not edited. */
		if (l->lanes[i].kind == TUI_LANE_MEMORY ||
		    l->lanes[i].kind == TUI_LANE_MEASURED)
			return false;
		*resource = l->lanes[i].kind == TUI_LANE_COMPUTE ?
		    l->lanes[i].device : p->devices + l->lanes[i].channel;
		*t = tui_view_time(&d->view, width, x + 0.5);
		return true;
	}
	return false;
}

/* Button 1 released at T on DEVICE's lane after a press on the drag op:
 * moves it to the position in the order under T, as one edit. */
static unsigned
tui_actions_drop(struct tui *d, int resource, double t)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_schedule *s = pw_plan_timed(d->plan);
	const struct pw_seq *q;
	struct pw_op under;
	char name[48], what[96];
	int from, to;

	if (resource >= p->devices || pw_kind_is_transfer(d->drag_op.kind) ||
	    p->stages[d->drag_op.stage].device != resource)
		return 0;
	if (tui_actions_busy(d))
		return TUI_DRAW_MESSAGE;
	if (pw_plan_status(d->plan, NULL) != PW_OK) {
		tui_message(d, true, "drag: the orders do not time: undo "
		    "first");
		return TUI_DRAW_MESSAGE;
	}
	q = &s->device[resource];
	from = pw_seq_find(q, d->drag_op);
	to = pw_order_seek(p, s, pw_plan_timing(d->plan), resource, t);
	/* Later into a gap: before the op after the gap, not after it. */
	if (to > from && !pw_op_at(p, s, pw_plan_timing(d->plan), resource,
	    t, &under))
		to--;
	if (to >= q->len)
		to = q->len - 1;
	if (from < 0 || to == from)
		return 0;
	snprintf(what, sizeof what, "drag %s to place %d",
	    pw_op_name(name, sizeof name, d->drag_op), to);
	return tui_actions_move(d, resource, from, to, what);
}

unsigned
tui_mouse(struct tui *d, const struct tui_layout *l, int row, int col,
    mmask_t buttons)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	struct pw_op op;
	unsigned redraw = 0;
	int resource = -1;
	double t = 0;
	bool at;

	/* A panel, a prompt or a question has the screen (or the notice
	 * below the least screen): the timeline under it is not the user's
	 * to click. */
	if (d->mode != TUI_MODE_TIMELINE || l->too_small) {
		d->dragging = false;
		return 0;
	}
	at = tui_actions_at(d, l, row, col, &resource, &t);
	if (buttons & BUTTON4_PRESSED)
		return tui_actions_zoom(d, 0.5);
#ifdef BUTTON5_PRESSED
	if (buttons & BUTTON5_PRESSED)
		return tui_actions_zoom(d, 2);
#endif
	if (buttons & (BUTTON1_PRESSED | BUTTON1_CLICKED)) {
		d->dragging = false;
		if (!at || !pw_op_at(p, pw_plan_timed(d->plan),
		    pw_plan_timing(d->plan), resource, t, &op))
			return 0;
		d->has_sel = true;
		d->sel = op;
		d->dragging = (buttons & BUTTON1_PRESSED) != 0;
		d->drag_op = op;
		redraw = TUI_DRAW_TIMELINE | TUI_DRAW_DETAILS;
	}
	if ((buttons & BUTTON1_RELEASED) && d->dragging) {
		d->dragging = false;
		if (at)
			redraw |= tui_actions_drop(d, resource, t);
	}
	return redraw;
}

/* "timeline,help": the modes of MODES. */
static void
tui_actions_modes(FILE *fp, unsigned modes)
{
	static const char *const name[TUI_NMODES] = { "timeline", "help",
	    "form", "compare", "sweep", "design", "error", "prompt" };
	const char *sep = "";
	int m;

	if (modes == TUI_ALL_MODES || modes == TUI_EVERYWHERE) {
		fputs(modes == TUI_ALL_MODES ? "all" : "everywhere", fp);
		return;
	}
	for (m = 0; m < TUI_NMODES; m++) {
		if (modes & TUI_MODE_BIT(m)) {
			fprintf(fp, "%s%s", sep, name[m]);
			sep = ",";
		}
	}
}

void
tui_keys_print(FILE *fp)
{
	size_t i;

	for (i = 0; i < tui_nkeys; i++) {
		fprintf(fp, "%s\t", tui_keys[i].names);
		tui_actions_modes(fp, tui_keys[i].modes);
		fprintf(fp, "\t%s\n", tui_keys[i].help);
	}
}
