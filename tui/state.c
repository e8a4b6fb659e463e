/*
 * state.c - the designer's state: what is loaded, the plan on screen and
 * every change made to it, with undo and redo.
 *
 * A change is recorded as what undoes it: an order edit as its inverse
 * edit (pw_plan_apply answers with one), a pin as its removal or
 * insertion, and whatever replaces the plan (a constraint change, a
 * reload, an optimizer result, a family, a sweep point) as a snapshot of
 * the state before.  Undoing a change performs it and turns it into what
 * undoes the undo, so that undo and redo are one function between two
 * stacks.
 */
/* fopencookie: a problem script's output is caught in a bounded buffer. */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pwlua.h"
#include "tui_int.h"

/* What a file holds once read: a problem, or a schedule's plan. */
struct tui_state_file {
	struct pw_problem *problem;	/* NULL when PLAN is set */
	struct pw_plan *plan;		/* a schedule file's orders, timed */
	struct pw_pin *pins;
	size_t	npins;
	bool	is_schedule;
	bool	is_lua;
	char	*printed;	/* a script's first line of output, or NULL */
	long	printed_more;	/* how many more lines it printed */
	bool	has_objective;
	enum pw_objective objective;
	double	time_limit;		/* 0: not stated */
};

/* What a problem script prints while the designer reads it: the screen
 * is the designer's, so the output is caught here, its first line kept
 * (up to the buffer) and the rest counted by lines, never held, however
 * much an untrusted script prints within its budget. */
struct tui_printed {
	char	first[256];
	size_t	len;
	bool	ended;		/* the first line is complete */
	long	more;		/* lines begun after it */
	bool	at_start;	/* the next byte begins a line */
};

static ssize_t
tui_printed_write(void *cookie, const char *buf, size_t n)
{
	struct tui_printed *s = cookie;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s->at_start && s->ended)
			s->more++;
		s->at_start = buf[i] == '\n';
		if (buf[i] == '\n')
			s->ended = true;
		else if (!s->ended && s->len + 1 < sizeof s->first)
			s->first[s->len++] = buf[i];
	}
	return (ssize_t)n;
}

/* Runs the problem script PATH as pwlua_problem_read does, with what it
 * printed in OUT's printed and printed_more. */
static struct pw_problem *
tui_state_script_read(const char *path, struct pwlua_solve_prefs *prefs,
    struct tui_state_file *out, struct pw_error *err)
{
	static const cookie_io_functions_t io = { NULL, tui_printed_write, NULL,
	    NULL };
	struct pwlua_config config = { 0, 0, NULL, 0, NULL };
	struct tui_printed caught = { .at_start = true };
	struct pw_problem *p;

	/* The screen waits on it: a problem script that runs on is stopped
	 * sooner than a batch command's. */
	config.seconds = TUI_SCRIPT_SECONDS;
	if ((config.output = fopencookie(&caught, "w", io)) == NULL) {
		pw_error_set(err, "%s: cannot catch what it prints", path);
		return NULL;
	}
	p = pwlua_problem_read(path, &config, prefs, err);
	fclose(config.output);
	if (caught.len > 0 || caught.ended) {
		caught.first[caught.len] = '\0';
		out->printed = pw_escape(caught.first);
		out->printed_more = caught.more;
	}
	return p;
}

/* Reads PATH (NULL: the default problem) into OUT, which the caller
 * frees with tui_state_file_free.  Errors name the file (a Lua error its
 * line and traceback). */
static int
tui_state_file_read(const char *path, const struct pw_problem *given,
    struct tui_state_file *out, struct pw_error *err)
{
	struct pwlua_solve_prefs prefs = { 0 };
	struct pw_timed_op *ops = NULL;
	char *family = NULL;
	size_t nops = 0;
	int rc;

	*out = (struct tui_state_file){ 0 };
	if (path == NULL) {
		out->problem = given != NULL ? pw_problem_copy(given) :
		    pw_problem_default();
		return PW_OK;
	}
	if (pwlua_is_script(path)) {
		out->is_lua = true;
		out->problem = tui_state_script_read(path, &prefs, out, err);
		if (out->problem == NULL)
			return PW_ERR_INPUT;
		out->has_objective = prefs.has_objective;
		out->objective = prefs.objective;
		out->time_limit = prefs.time_limit;
		out->pins = prefs.pins;
		out->npins = prefs.npins;
		prefs.pins = NULL;
		prefs.npins = 0;
		pwlua_solve_prefs_free(&prefs);
		return PW_OK;
	}
	rc = pw_file_read_pins(path, &out->problem, &ops, &nops, &out->pins,
	    &out->npins, &family, err);
	if (rc != PW_OK || ops == NULL) {
		free(family);
		return rc;
	}
	out->is_schedule = true;
	rc = pw_plan_from_timed(out->problem, ops, nops, family, path,
	    &out->plan, err);
	out->problem = NULL;
	free(ops);
	return rc;
}

static void
tui_state_file_free(struct tui_state_file *f)
{
	pw_problem_free(f->problem);
	pw_plan_free(f->plan);
	free(f->pins);
	free(f->printed);
}

/* Appends to BUF (SIZE bytes, a string) what F's script printed, if
 * anything: its first line, cut (at a character, with "...") where
 * the count of the other lines would not fit after it.  The quote's
 * room is SIZE less what BUF holds, the count and the 19 bytes around
 * the quote ("; it printed \"", "...\"" and the terminator), with one
 * to spare. */
static void
tui_state_printed(char *buf, size_t size, const struct tui_state_file *f)
{
	char more[64] = "";
	size_t len = strlen(buf), room, cut, k;

	if (f->printed == NULL)
		return;
	if (f->printed_more > 0)
		snprintf(more, sizeof more, " and %ld more line%s",
		    f->printed_more, f->printed_more == 1 ? "" : "s");
	room = size - len;
	if (room < 40 + strlen(more))
		return;
	room -= 20 + strlen(more);
	cut = strlen(f->printed);
	if (cut > room) {
		for (cut = room; cut > 0 &&
		    ((unsigned char)f->printed[cut] & 0xc0) == 0x80; cut--)
			continue;
		/* Nor inside an escape (\xHH): before its backslash. */
		for (k = 1; k <= 3 && k <= cut; k++)
			if (f->printed[cut - k] == '\\') {
				cut -= k;
				break;
			}
	}
	snprintf(buf + len, size - len, "%sit printed \"%.*s%s\"%s",
	    len > 0 ? "; " : "", (int)cut, f->printed,
	    cut < strlen(f->printed) ? "..." : "", more);
}

int
tui_family_best(const struct pw_problem *p, pw_compare_progress_fn *progress,
    void *arg, int *best, struct pw_error *err)
{
	struct pw_compare_row *rows = pw_compare_rows(p, progress, arg);
	int rc = PW_OK;

	*best = pw_compare_best(rows);
	/* A stop leaves the last family unbuilt, whatever else was. */
	if (rows[pw_nfamilies - 1].rc == PW_ERR_CANCELLED) {
		pw_error_set(err, "cancelled");
		rc = PW_ERR_CANCELLED;
	} else if (*best < 0) {
		pw_error_set(err, "no schedule family builds a schedule for "
		    "this problem (%s)", rows[0].why);
		rc = PW_ERR_NOT_APPLICABLE;
	}
	pw_compare_rows_free(rows);
	return rc;
}

int
tui_family_plan(const struct pw_problem *p, int family, struct pw_plan **out,
    int *used, struct pw_error *err)
{
	const struct pw_problem *q;
	struct pw_problem *fixed;
	struct pw_plan *fixed_plan;
	int rc, dev;
	bool same = true;

	if (family < 0 && (rc = tui_family_best(p, NULL, NULL, &family,
	    err)) != PW_OK)
		return rc;
	if (used != NULL)
		*used = family;
	if ((rc = pw_plan_family(&pw_families[family], p, out, err)) != PW_OK)
		return rc;
	/* A split again has the model's limits, not P's. */
	q = pw_plan_problem(*out);
	if (q->devices != p->devices)
		return PW_OK;
	for (dev = 0; dev < p->devices; dev++)
		same = same && q->memory[dev].limit == p->memory[dev].limit;
	if (same)
		return PW_OK;
	fixed = pw_problem_copy(q);
	for (dev = 0; dev < p->devices; dev++)
		fixed->memory[dev].limit = p->memory[dev].limit;
	rc = pw_plan_new(fixed, pw_schedule_copy(pw_plan_schedule(*out)),
	    &fixed_plan, err);
	pw_plan_free(*out);
	*out = rc == PW_OK ? fixed_plan : NULL;
	return rc;
}

static void
tui_state_vmessage(struct tui *d, bool error, const char *fmt, va_list ap)
{
	char buf[sizeof d->message];

	/* The message line is one line: a deadlock's list of waits, a
	 * traceback, joined. */
	vsnprintf(buf, sizeof buf, fmt, ap);
	pw_one_line(buf, d->message, sizeof d->message);
	d->message_is_error = error;
	d->message_at = pw_now();
}

void
tui_message(struct tui *d, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tui_state_vmessage(d, error, fmt, ap);
	va_end(ap);
}

void
tui_message_clear(struct tui *d)
{
	d->message[0] = '\0';
	d->message_is_error = false;
}

void
tui_progress(struct tui *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tui_state_vmessage(d, false, fmt, ap);
	va_end(ap);
	d->message_at = 0;
}

/* tui_busy's message, drawn now; false when the step may STOP and the
 * user asked it to. */
static bool
tui_state_busy(struct tui *d, bool stop, const char *fmt, va_list ap)
{
	tui_state_vmessage(d, false, fmt, ap);
	return d->busy_draw == NULL || !d->busy_draw(d, stop);
}

void
tui_busy(struct tui *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tui_state_busy(d, false, fmt, ap);
	va_end(ap);
}

bool
tui_busy_stoppable(struct tui *d, const char *fmt, ...)
{
	va_list ap;
	bool go;

	va_start(ap, fmt);
	go = tui_state_busy(d, true, fmt, ap);
	va_end(ap);
	return go;
}

/* Drops the pins that name ops the plan's problem does not have on one
 * device (after a new problem).  Returns how many. */
static size_t
tui_state_pins_fit(struct tui *d)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	size_t i, n = 0, dropped;

	for (i = 0; i < d->npins; i++) {
		struct pw_pin pin = d->pins[i];

		if (pw_op_in(p, pin.before) &&
		    pw_op_in(p, pin.after) &&
		    p->stages[pin.before.stage].device ==
		    p->stages[pin.after.stage].device)
			d->pins[n++] = pin;
	}
	dropped = d->npins - n;
	d->npins = n;
	return dropped;
}

/* After the plan changed: folds sized by its devices, the deadlock list,
 * a selection it has.  Returns pw_plan_status, with the message line
 * saying what failed when it is not PW_OK. */
static int
tui_state_refresh(struct tui *d)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_schedule *s = pw_plan_timed(d->plan);
	const struct pw_where *w = pw_plan_where(d->plan);
	const struct pw_metrics *m = pw_plan_metrics(d->plan);
	struct pw_error err;
	int rc, dev;

	if (d->view.nfolded != p->devices) {
		free(d->view.folded);
		d->view.folded = pw_xcalloc((size_t)p->devices,
		    sizeof *d->view.folded);
		d->view.nfolded = p->devices;
	}
	if (d->view.top >= p->devices)
		d->view.top = 0;
	/* A window that showed all of the old schedule, or shows none of
	 * the new one, shows all of it. */
	if (d->view.whole || d->view.t0 >= m->start + m->makespan ||
	    d->view.t0 + d->view.span <= m->start)
		tui_view_fit(d);
	free(d->waits);
	d->waits = NULL;
	d->nwaits = 0;
	rc = pw_plan_status(d->plan, &err);
	if (rc == PW_ERR_DEADLOCK)
		d->nwaits = pw_deadlock_waits(p, pw_plan_schedule(d->plan),
		    &d->waits);
	if (rc != PW_OK)
		tui_message(d, true, "%s", err.msg);
	/* A pin or a drag begun on an op the plan lost is over. */
	if (d->pin_pending && !pw_where_has(w, p, d->pin_first))
		d->pin_pending = false;
	if (d->dragging && !pw_where_has(w, p, d->drag_op))
		d->dragging = false;
	if (d->has_sel && pw_where_has(w, p, d->sel))
		return rc;
	d->has_sel = false;
	for (dev = 0; dev < s->ndevices && !d->has_sel; dev++) {
		if (s->device[dev].len > 0) {
			d->sel = s->device[dev].ops[0];
			d->has_sel = true;
		}
	}
	return rc;
}

/* The message line after a change WHAT that timed. */
static void
tui_state_said(struct tui *d, const char *what)
{
	char buf[32];

	if (pw_plan_status(d->plan, NULL) != PW_OK)
		return;
	tui_message(d, false, "%s: makespan %s", what, pw_fmt_seconds(buf,
	    sizeof buf, pw_plan_metrics(d->plan)->makespan));
}

/* ------------------------------------------------------------------ */
/* Snapshots and the history                                           */

struct pw_pin *
tui_pins_copy(const struct pw_pin *pins, size_t n)
{
	struct pw_pin *copy;

	if (n == 0)
		return NULL;
	copy = pw_xreallocarray(NULL, n, sizeof *copy);
	memcpy(copy, pins, n * sizeof *copy);
	return copy;
}

struct tui_snapshot
tui_snapshot_take(const struct tui *d)
{
	struct tui_snapshot s = {
		.plan = pw_plan_copy(d->plan),
		.npins = d->npins,
		.source = pw_xstrdup(d->source),
		.edits = d->edits,
		.family = d->family,
		.objective = d->objective,
		.time_limit = d->time_limit,
		.pins = tui_pins_copy(d->pins, d->npins),
	};

	return s;
}

void
tui_snapshot_free(struct tui_snapshot *s)
{
	pw_plan_free(s->plan);
	free(s->pins);
	free(s->source);
	*s = (struct tui_snapshot){ .family = -1 };
}

/* Exchanges the state's plan, pins, source, family and options with S. */
static void
tui_state_swap(struct tui *d, struct tui_snapshot *s)
{
	struct tui_snapshot mine = {
		.plan = d->plan, .pins = d->pins, .npins = d->npins,
		.source = d->source, .edits = d->edits, .family = d->family,
		.objective = d->objective, .time_limit = d->time_limit,
	};

	d->plan = s->plan;
	d->pins = s->pins;
	d->npins = s->npins;
	d->source = s->source;
	d->edits = s->edits;
	d->family = s->family;
	d->objective = s->objective;
	d->time_limit = s->time_limit;
	*s = mine;
}

static void
tui_change_free(struct tui_change *c)
{
	free((char *)c->what);
	if (c->kind == TUI_CHANGE_PLAN)
		tui_snapshot_free(&c->snap);
}

static void
tui_history_push(struct tui_change **stack, size_t *n, size_t *cap,
    struct tui_change c)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*stack = pw_xreallocarray(*stack, *cap, sizeof **stack);
	}
	(*stack)[(*n)++] = c;
}

static void
tui_history_clear_redo(struct tui_history *h)
{
	while (h->nredo > 0)
		tui_change_free(&h->redo[--h->nredo]);
}

/* The number of the change on top of undo, 0 when none is. */
static unsigned long
tui_history_top(const struct tui_history *h)
{
	return h->nundo > 0 ? h->undo[h->nundo - 1].id : 0;
}

bool
tui_unsaved(const struct tui *d)
{
	return tui_history_top(&d->history) != d->history.saved_id;
}

/* The state is what the schedule file (tui.save_path) now holds. */
static void
tui_state_saved(struct tui *d)
{
	tui_seen_note(&d->save_seen, d->save_path);
	if (d->path != NULL && d->save_path != NULL &&
	    tui_same_file(d->path, d->save_path))
		tui_seen_note(&d->path_seen, d->path);
	d->history.saved_id = tui_history_top(&d->history);
}

/* Records C (taken) as the last change. */
static void
tui_state_record(struct tui *d, struct tui_change c)
{
	tui_history_clear_redo(&d->history);
	c.id = ++d->history.last_id;
	tui_history_push(&d->history.undo, &d->history.nundo,
	    &d->history.capundo, c);
	d->changes++;
}

unsigned
tui_plan_record(struct tui *d, struct tui_snapshot *before, const char *what)
{
	tui_state_record(d, (struct tui_change){ .kind = TUI_CHANGE_PLAN,
	    .what = pw_xstrdup(what), .snap = *before });
	*before = (struct tui_snapshot){ .family = -1 };
	tui_state_said(d, what);
	return TUI_DRAW_ALL;
}

void
tui_plan_show(struct tui *d, struct pw_plan *plan)
{
	pw_plan_free(d->plan);
	d->plan = plan;
	tui_state_pins_fit(d);
	tui_state_refresh(d);
}

unsigned
tui_plan_set(struct tui *d, struct pw_plan *plan, const char *what,
    const char *source, int family)
{
	struct tui_snapshot before = {
		.plan = d->plan, .npins = d->npins, .source = d->source,
		.edits = d->edits, .family = d->family, .objective = d->objective,
		.time_limit = d->time_limit,
		.pins = tui_pins_copy(d->pins, d->npins),
	};
	char *said = NULL;
	size_t dropped;
	unsigned redraw;

	d->plan = plan;
	d->source = pw_xstrdup(source != NULL ? source : before.source);
	d->edits = source != NULL ? 0 : before.edits + 1;
	d->family = family;
	/* Undo brings them back, so the change says it dropped them. */
	if ((dropped = tui_state_pins_fit(d)) > 0)
		what = said = pw_xasprintf("%s (%zu pin%s dropped: %s ops are "
		    "gone)", what, dropped, dropped == 1 ? "" : "s",
		    dropped == 1 ? "its" : "their");
	tui_state_refresh(d);
	redraw = tui_plan_record(d, &before, what);
	free(said);
	return redraw;
}

unsigned
tui_apply(struct tui *d, const struct pw_edit *edit, const char *what)
{
	struct pw_edit undo;
	struct pw_error err;

	if (pw_plan_apply(d->plan, edit, &undo, &err) != PW_OK) {
		tui_message(d, true, "%s: %s", what, err.msg);
		return TUI_DRAW_MESSAGE;
	}
	d->edits++;
	tui_state_record(d, (struct tui_change){ .kind = TUI_CHANGE_EDIT,
	    .what = pw_xstrdup(what), .edit = undo, .edit_step = -1 });
	tui_state_refresh(d);
	tui_state_said(d, what);
	return TUI_DRAW_ALL;
}

static void
tui_state_pin_insert(struct tui *d, size_t index, struct pw_pin pin)
{
	d->pins = pw_xreallocarray(d->pins, d->npins + 1, sizeof *d->pins);
	memmove(d->pins + index + 1, d->pins + index,
	    (d->npins - index) * sizeof *d->pins);
	d->pins[index] = pin;
	d->npins++;
}

static void
tui_state_pin_delete(struct tui *d, size_t index)
{
	memmove(d->pins + index, d->pins + index + 1,
	    (d->npins - index - 1) * sizeof *d->pins);
	d->npins--;
}

/* "pin F(0,1) < B(0,0)" into BUF. */
static const char *
tui_state_pin_name(char *buf, size_t len, const char *verb, struct pw_pin pin)
{
	char a[48], b[48];

	snprintf(buf, len, "%s %s before %s", verb,
	    pw_op_name(a, sizeof a, pin.before),
	    pw_op_name(b, sizeof b, pin.after));
	return buf;
}

unsigned
tui_pin_add(struct tui *d, struct pw_pin pin)
{
	char what[160];

	tui_state_pin_insert(d, d->npins, pin);
	tui_state_record(d, (struct tui_change){ .kind = TUI_CHANGE_PIN_ADD,
	    .what = pw_xstrdup(tui_state_pin_name(what, sizeof what, "pin",
	    pin)), .pin = pin, .index = d->npins - 1 });
	tui_message(d, false, "%s", what);
	return TUI_DRAW_ALL;
}

unsigned
tui_pin_remove(struct tui *d, size_t index)
{
	struct pw_pin pin = d->pins[index];
	char what[160];

	tui_state_pin_delete(d, index);
	tui_state_record(d, (struct tui_change){
	    .kind = TUI_CHANGE_PIN_REMOVE, .what = pw_xstrdup(
	    tui_state_pin_name(what, sizeof what, "unpin", pin)), .pin = pin,
	    .index = index });
	tui_message(d, false, "%s", what);
	return TUI_DRAW_ALL;
}

/* Performs what C records and turns C into what reverses that: the one
 * step of both undo and redo. */
static int
tui_state_invert(struct tui *d, struct tui_change *c, struct pw_error *err)
{
	struct pw_edit inverse;
	int rc;

	switch (c->kind) {
	case TUI_CHANGE_EDIT:
		if ((rc = pw_plan_apply(d->plan, &c->edit, &inverse, err)) !=
		    PW_OK)
			return rc;
		c->edit = inverse;
		d->edits += c->edit_step;
		c->edit_step = -c->edit_step;
		break;
	case TUI_CHANGE_PIN_ADD:
		tui_state_pin_delete(d, c->index);
		c->kind = TUI_CHANGE_PIN_REMOVE;
		break;
	case TUI_CHANGE_PIN_REMOVE:
		tui_state_pin_insert(d, c->index, c->pin);
		c->kind = TUI_CHANGE_PIN_ADD;
		break;
	case TUI_CHANGE_PLAN:
		tui_state_swap(d, &c->snap);
		break;
	}
	return PW_OK;
}

/* Moves the last change of FROM to TO, performing it; VERB for the
 * message line. */
static unsigned
tui_state_step(struct tui *d, struct tui_change *from, size_t *nfrom,
    struct tui_change **to, size_t *nto, size_t *capto, const char *verb)
{
	struct tui_change c;
	struct pw_error err;

	if (*nfrom == 0) {
		tui_message(d, true, "nothing to %s", verb);
		return TUI_DRAW_MESSAGE;
	}
	c = from[--*nfrom];
	if (tui_state_invert(d, &c, &err) != PW_OK) {
		/* An inverse always applies (pw_plan_apply's promise). */
		tui_message(d, true, "%s %s: %s", verb, c.what, err.msg);
		tui_change_free(&c);
		return TUI_DRAW_MESSAGE;
	}
	tui_history_push(to, nto, capto, c);
	d->changes++;
	tui_message(d, false, "%s %s", verb, c.what);
	if (tui_state_refresh(d) == PW_OK && c.kind != TUI_CHANGE_PIN_ADD &&
	    c.kind != TUI_CHANGE_PIN_REMOVE) {
		char buf[32];

		tui_message(d, false, "%s %s: makespan %s", verb, c.what,
		    pw_fmt_seconds(buf, sizeof buf,
		    pw_plan_metrics(d->plan)->makespan));
	}
	return TUI_DRAW_ALL;
}

unsigned
tui_undo(struct tui *d)
{
	struct tui_history *h = &d->history;

	return tui_state_step(d, h->undo, &h->nundo, &h->redo, &h->nredo,
	    &h->capredo, "undo");
}

unsigned
tui_redo(struct tui *d)
{
	struct tui_history *h = &d->history;

	return tui_state_step(d, h->redo, &h->nredo, &h->undo, &h->nundo,
	    &h->capundo, "redo");
}

/* ------------------------------------------------------------------ */
/* Problems                                                            */

/* Whether SCHED has the shape of P's schedules. */
static bool
tui_state_same_shape(const struct pw_schedule *s, const struct pw_problem *p)
{
	return s->ndevices == p->devices && s->nstages == p->nstages &&
	    s->microbatches == p->microbatches &&
	    s->nchannels == pw_problem_nchannels(p);
}

int
tui_problem_set(struct tui *d, struct pw_problem *problem, const char *what,
    struct pw_error *err)
{
	const struct pw_schedule *s = pw_plan_schedule(d->plan);
	struct pw_plan *plan = NULL;
	struct pw_error why;
	char source[96], asked[64], built[64], *note = NULL;
	int rc = PW_ERR_INPUT, family;

	if (tui_form_same(problem, pw_plan_problem(d->plan))) {
		tui_message(d, false, "%s: unchanged", what);
		rc = PW_OK;
		goto out;
	}
	if (tui_state_same_shape(s, problem) &&
	    pw_plan_new(pw_problem_copy(problem), pw_schedule_copy(s), &plan,
	    &why) == PW_OK) {
		tui_plan_set(d, plan, what, NULL, d->family);
		rc = PW_OK;
		goto out;
	}
	if (d->family >= 0)
		rc = tui_family_plan(problem, d->family, &plan, &family,
		    err);
	if (rc != PW_OK)
		rc = tui_family_plan(problem, -1, &plan, &family, err);
	if (rc != PW_OK)
		goto out;
	snprintf(source, sizeof source, "family %s",
	    pw_families[family].name);
	/* A family that lays the model out its own way overrides the
	 * layout asked for: say so rather than seem to apply it. */
	tui_placement(problem, asked, sizeof asked);
	tui_placement(pw_plan_problem(plan), built, sizeof built);
	if (strcmp(asked, built) != 0) {
		note = pw_xasprintf("%s, but %s lays the model out as %s "
		    "(f picks another family)", what, pw_families[family].name,
		    built);
		what = note;
	}
	tui_plan_set(d, plan, what, source, family);
out:
	free(note);
	pw_problem_free(problem);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Ops                                                                 */

bool
tui_op_find(const struct tui *d, struct pw_op op, struct pw_op *out)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_where *w = pw_plan_where(d->plan);
	struct pw_op other = pw_pin_other(op);

	if (!pw_op_in(p, op))
		return false;
	if (pw_where_has(w, p, op))
		*out = op;
	else if (pw_where_has(w, p, other))
		*out = other;
	else
		return false;
	return true;
}

bool
tui_op_near(const struct tui *d, int device, double t, struct pw_op *out)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_schedule *s = pw_plan_timed(d->plan);
	const struct pw_timing *tm = pw_plan_timing(d->plan);
	const struct pw_seq *q = &s->device[device];
	int pos;

	if (q->len == 0)
		return false;
	pos = pw_order_seek(p, s, tm, device, t);
	if (pos == q->len)
		pos--;
	/* The op at POS ends after T; the one before it ends by T. */
	if (pos > 0 && tm->start[pw_op_index(p, q->ops[pos])] > t &&
	    t - tm->end[pw_op_index(p, q->ops[pos - 1])] <
	    tm->start[pw_op_index(p, q->ops[pos])] - t)
		pos--;
	*out = q->ops[pos];
	return true;
}

/* ------------------------------------------------------------------ */
/* The view                                                            */

void
tui_view_fit(struct tui *d)
{
	double whole = tui_view_whole(d);

	d->view.t0 = pw_plan_metrics(d->plan)->start;
	d->view.span = whole > 0 ? whole : 1;
	d->view.whole = true;
}

double
tui_view_whole(const struct tui *d)
{
	const struct pw_metrics *m = pw_plan_metrics(d->plan);
	const struct tui_measured *mr = tui_measured_of(d);

	/* A measured iteration starts at 0, as the simulation does. */
	return mr != NULL ? fmax(m->makespan, mr->end - m->start) : m->makespan;
}

void
tui_view_follow(struct tui *d)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_metrics *m = pw_plan_metrics(d->plan);
	struct tui_layout l;
	double start, lo, hi;
	int dev;

	if (!d->has_sel)
		return;
	dev = p->stages[d->sel.stage].device;
	if (dev < d->view.top)
		d->view.top = dev;
	for (;;) {
		tui_layout(d, d->rows, d->cols, &l);
		if (l.too_small || l.last_device >= dev ||
		    d->view.top >= dev) {
			if (l.too_small)
				d->view.top = dev;
			tui_layout_free(&l);
			break;
		}
		tui_layout_free(&l);
		d->view.top++;
	}
	start = pw_plan_timing(d->plan)->start[pw_op_index(p, d->sel)];
	if (start >= d->view.t0 && start < d->view.t0 + d->view.span)
		return;
	lo = m->start;
	hi = fmax(lo, m->start + tui_view_whole(d) - d->view.span);
	d->view.t0 = fmin(fmax(start - d->view.span / 2, lo), hi);
}

void
tui_select(struct tui *d, struct pw_op op)
{
	d->has_sel = true;
	d->sel = op;
	tui_view_follow(d);
}

/* ------------------------------------------------------------------ */
/* Loading, reloading, saving                                          */

/* "file NAME", the header's source of a schedule read from PATH. */
static char *
tui_state_file_source(const char *path)
{
	const char *base = strrchr(path, '/');

	return pw_xasprintf("file %s", base ? base + 1 : path);
}

/* Takes what F states for the optimizer and its pins. */
static void
tui_state_take_prefs(struct tui *d, struct tui_state_file *f)
{
	if (f->has_objective)
		d->objective = f->objective;
	if (f->time_limit > 0)
		d->time_limit = f->time_limit;
	if (f->is_lua || f->is_schedule) {
		free(d->pins);
		d->pins = f->pins;
		d->npins = f->npins;
		f->pins = NULL;
		tui_state_pins_fit(d);
	}
}

/* A schedule file with a measured run (pipewright launch -o) shows it as
 * a launch's: its problem is the workload's own.  A run that does not
 * match the file's schedule is said, and the schedule shown alone. */
static void
tui_state_measured(struct tui *d)
{
	struct pw_measured *run;
	struct pw_error err;

	if (pw_measured_read(d->path, &run, &err) != PW_OK || (run != NULL &&
	    tui_measured_attach(d, pw_problem_copy(pw_plan_problem(d->plan)),
	    run, &err) != PW_OK))
		tui_message(d, true, "%s", err.msg);
}

struct tui *
tui_new(const char *path, int rows, int cols, struct pw_error *err)
{
	struct tui_options opts = { .path = path };

	return tui_new_given(&opts, rows, cols, err);
}

struct tui *
tui_new_given(const struct tui_options *opts, int rows, int cols,
    struct pw_error *err)
{
	const char *path = opts->path;
	const struct pw_problem *given = opts->problem;
	struct tui *d = pw_xcalloc(1, sizeof *d);
	struct tui_state_file f;
	char greeting[128];
	int family;

	d->rows = rows;
	d->cols = cols;
	d->recover_lock.fd = -1;
	d->family = -1;
	d->objective = PW_OBJ_MAKESPAN;
	d->time_limit = 10;
	d->compare.source[0] = d->compare.source[1] = TUI_CMP_CURRENT;
	f = (struct tui_state_file){ 0 };
	/* "-" is stdin to the readers: the designer's keyboard. */
	if (path != NULL && strcmp(path, "-") == 0) {
		pw_error_set(err, "-: the designer reads no problem from stdin"
		    " (name a file)");
		goto fail;
	}
	if (tui_state_file_read(path, given, &f, err) != PW_OK)
		goto fail;
	if (f.plan != NULL) {
		d->plan = f.plan;
		f.plan = NULL;
		d->source = tui_state_file_source(path);
		d->save_path = pw_xstrdup(path);
		tui_seen_note(&d->save_seen, d->save_path);
	} else {
		if (tui_family_best(f.problem, opts->choosing,
		    opts->choosing_arg, &family, err) != PW_OK ||
		    tui_family_plan(f.problem, family, &d->plan, &family,
		    err) != PW_OK)
			goto fail;
		d->family = family;
		d->cycle = (family + 1) % (int)pw_nfamilies;
		d->source = pw_xasprintf("family %s", pw_families[family].name);
	}
	d->path = path ? pw_xstrdup(path) : NULL;
	tui_seen_note(&d->path_seen, d->path);
	d->given = path == NULL && given != NULL ? pw_problem_copy(given) :
	    NULL;
	d->path_is_schedule = f.is_schedule;
	tui_state_take_prefs(d, &f);
	tui_state_refresh(d);
	tui_view_fit(d);
	if (f.printed != NULL) {
		tui_message(d, false, "loaded %s", path);
		tui_state_printed(d->message, sizeof d->message, &f);
	} else {
		tui_keys_hints(greeting, sizeof greeting, d->mode, true);
		tui_message(d, false, "%s", greeting);
	}
	tui_state_file_free(&f);
	if (d->path_is_schedule)
		tui_state_measured(d);
	return d;
fail:
	if (path != NULL && strncmp(err->msg, path, strlen(path)) != 0) {
		char *msg = pw_xasprintf("%s: %s", path, err->msg);

		pw_error_set(err, "%s", msg);
		free(msg);
	}
	/* What a script printed before it failed may say why. */
	tui_state_printed(err->msg, sizeof err->msg, &f);
	tui_state_file_free(&f);
	tui_free(d);
	return NULL;
}

void
tui_free(struct tui *d)
{
	struct pw_solve_result res;
	struct pw_error err;

	if (d == NULL)
		return;
	if (d->solve.run != NULL) {
		pw_solve_cancel(d->solve.run);
		if (pw_solve_finish(d->solve.run, &res, &err) == PW_OK)
			pw_solve_result_free(&res);
	}
	tui_snapshot_free(&d->solve.before);
	pw_schedule_free(d->solve.last);
	pw_problem_free(d->solve.last_problem);
	free(d->solve.bound_pins);
	tui_compare_clear(d);
	tui_sweep_free(d->sweep);
	tui_planner_free(d->planner);
	tui_launch_stop(d->launch);
	tui_measured_free(d->measured);
	while (d->history.nundo > 0)
		tui_change_free(&d->history.undo[--d->history.nundo]);
	tui_history_clear_redo(&d->history);
	free(d->history.undo);
	free(d->history.redo);
	pw_plan_free(d->plan);
	free(d->path);
	pw_problem_free(d->given);
	free(d->save_path);
	free(d->export_path);
	free(d->source);
	free(d->pins);
	free(d->view.folded);
	free(d->waits);
	free(d->error_text);
	free(d->edit_path);
	free(d->edit_before);
	free(d->recover_path);
	tui_recover_release(d);
	free(d);
}

unsigned
tui_edit_done(struct tui *d)
{
	struct tui_state_file f;
	struct pw_error err;
	char *what;
	unsigned redraw = TUI_DRAW_ALL;

	/* Said before the reading: a script may take its whole budget. */
	tui_busy(d, "reloading %s ...", d->path);
	if (tui_state_file_read(d->path, d->given, &f, &err) != PW_OK) {
		free(d->error_text);
		d->error_text = pw_xstrdup(err.msg);
		d->mode = TUI_MODE_ERROR;
		tui_message(d, true, "%s did not load: the problem and "
		    "schedule stay as they were (Esc closes)", d->path);
		tui_state_printed(d->message, sizeof d->message, &f);
		tui_state_file_free(&f);
		return TUI_DRAW_ALL;
	}
	what = pw_xasprintf("reload %s", d->path);
	if (f.plan != NULL) {
		char *source = tui_state_file_source(d->path);

		tui_plan_set(d, f.plan, what, source, -1);
		f.plan = NULL;
		free(source);
	} else if (tui_problem_set(d, f.problem, what, &err) != PW_OK) {
		tui_message(d, true, "%s: %s", d->path, err.msg);
		redraw = TUI_DRAW_MESSAGE;
	}
	f.problem = NULL;
	if (redraw == TUI_DRAW_ALL) {
		tui_seen_note(&d->path_seen, d->path);
		/* The file "s" writes, just read: what it holds is the state,
		 * as after a save. */
		if (d->save_path != NULL && tui_same_file(d->save_path,
		    d->path))
			tui_state_saved(d);
		tui_state_take_prefs(d, &f);
		tui_state_printed(d->message, sizeof d->message, &f);
	}
	tui_state_file_free(&f);
	free(what);
	return redraw;
}

int
tui_save(struct tui *d, const char *path, struct pw_error *err)
{
	const char *to = path ? path : d->save_path;
	const struct tui_measured *m;
	int rc;

	if (to == NULL) {
		pw_error_set(err, "no schedule file to save to: S saves as");
		return PW_ERR_INPUT;
	}
	if (strcmp(to, "-") == 0) {
		pw_error_set(err, "-: not saved: \"-\" is stdout, the "
		    "designer's screen (name a file)");
		return PW_ERR_INPUT;
	}
	if (pw_path_special(to)) {
		pw_error_set(err, "%s: not saved: %s", to, TUI_SPECIAL_WHY);
		return PW_ERR_INPUT;
	}
	if (pw_plan_status(d->plan, NULL) != PW_OK) {
		pw_error_set(err, "%s: not saved: the edited orders do not "
		    "time (undo the edit first)", to);
		return PW_ERR_INPUT;
	}
	/* The run is the schedule's while the schedule is the one run: a
	 * file read with its run keeps it (real hardware's times, which
	 * nothing here can make again). */
	m = tui_measured_of(d);
	rc = pw_schedule_write_with(to, pw_plan_problem(d->plan),
	    pw_plan_timed(d->plan), pw_plan_timing(d->plan), d->pins,
	    d->npins, m != NULL ? m->run : NULL, err);
	if (rc != PW_OK)
		return rc;
	if (path != NULL && path != d->save_path) {
		free(d->save_path);
		d->save_path = pw_xstrdup(path);
	}
	tui_state_saved(d);
	tui_recover_remove(d);
	return PW_OK;
}

void
tui_seen_note(struct tui_seen *seen, const char *path)
{
	struct stat st;

	seen->there = path != NULL && stat(path, &st) == 0;
	if (!seen->there)
		return;
	seen->dev = st.st_dev;
	seen->ino = st.st_ino;
	seen->size = st.st_size;
	seen->ctime = st.st_ctim;
}

char *
tui_file_bytes(const char *path, size_t *len)
{
	struct stat st;
	FILE *fp;
	char *buf = NULL;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (fp = fopen(path, "rb")) == NULL)
		return NULL;
	buf = pw_xmalloc((size_t)st.st_size + 1);
	*len = fread(buf, 1, (size_t)st.st_size + 1, fp);
	/* Grown or short since the stat: it was being written. */
	if (ferror(fp) || *len != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

bool
tui_seen_changed(const struct tui_seen *seen, const char *path)
{
	struct stat st;

	if (!seen->there || path == NULL || stat(path, &st) != 0)
		return false;
	return st.st_dev != seen->dev || st.st_ino != seen->ino ||
	    st.st_size != seen->size ||
	    st.st_ctim.tv_sec != seen->ctime.tv_sec ||
	    st.st_ctim.tv_nsec != seen->ctime.tv_nsec;
}
