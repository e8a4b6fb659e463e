/*
 * draw_details.c - the details panel of the selected op: what and where
 * it is, when it runs, its slack, its device's memory at its start, what
 * it waits for and what waits for it, and its pins; after a launch, its
 * measured start and duration against the predicted ones; after an edit
 * that deadlocks, which ops can never start and what each waits for.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

/* Rows of successors listed; the count says when there are more. */
#define TUI_DETAILS_MAX_SUCCS	16

/* Indexed by enum pw_kind. */
static const char *const tui_details_kind[PW_NKINDS] = {
	"forward", "input gradient", "weight gradient", "fused backward",
	"offload", "reload",
};

/* Appends "NAME edge +delay" rows of EDGES to BUF. */
static void
tui_details_edges(char *buf, size_t len, const char *head,
    const struct pw_pred *edges, int n, int total)
{
	char name[48], delay[32];
	size_t used;
	int k;

	used = (size_t)snprintf(buf, len, "%s", head);
	for (k = 0; k < n && used < len; k++) {
		delay[0] = '\0';
		if (edges[k].delay > 0) {
			snprintf(delay, sizeof delay, " +");
			pw_fmt_seconds(delay + 2, sizeof delay - 2,
			    edges[k].delay);
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s %s%s%s",
		    k > 0 ? ", " : " ", pw_op_name(name, sizeof name,
		    edges[k].op), pw_pred_kind_name(edges[k].kind),
		    edges[k].from_start ? " (start)" : "", delay);
	}
	if (n == 0 && used < len)
		snprintf(buf + used, len - used, " none");
	else if (total > n && used < len)
		snprintf(buf + used, len - used, ", and %d more", total - n);
}

/* "B(1,0) waits for F(1,0)", and " (dependency)" when KIND: WAIT into
 * BUF, returned. */
static const char *
tui_details_wait(const struct pw_wait *wait, bool kind, char *buf,
    size_t len)
{
	char a[48], b[48];

	snprintf(buf, len, "%s waits for %s%s%s%s", pw_op_name(a, sizeof a,
	    wait->op), pw_op_name(b, sizeof b, wait->on.op), kind ? " (" : "",
	    kind ? pw_pred_kind_name(wait->on.kind) : "", kind ? ")" : "");
	return buf;
}

/* "deadlock: N ops can never start" of D's deadlock into BUF, returned.
 * A wait is the first op of its order that never starts, so the ops from
 * it to the order's end are the ones that never start. */
static const char *
tui_details_stuck(const struct tui *d, char *buf, size_t len)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_schedule *s = pw_plan_schedule(d->plan);
	const struct pw_seq *seq;
	struct pw_op op;
	size_t i, n = 0;
	int dev, k;

	for (i = 0; i < d->nwaits; i++) {
		op = d->waits[i].op;
		dev = p->stages[op.stage].device;
		seq = pw_kind_is_transfer(op.kind) ?
		    &s->channel[pw_problem_channel(p, dev, op.kind)] :
		    &s->device[dev];
		/* Absent, it counts as at the end: none wait behind it. */
		if ((k = pw_seq_find(seq, op)) < 0)
			k = seq->len;
		n += (size_t)(seq->len - k);
	}
	snprintf(buf, len, "deadlock: %zu op%s can never start", n,
	    n == 1 ? "" : "s");
	return buf;
}

const char *
tui_deadlock_summary(const struct tui *d, char *buf, size_t len)
{
	if (d->nwaits == 0) {
		if (len > 0)
			buf[0] = '\0';
		return buf;
	}
	return tui_details_stuck(d, buf, len);
}

/* The deadlock's rows into R from *ROW on: what the selected op waits
 * for when it is stuck, else every wait, the first that fit shown. */
static void
tui_details_deadlock(WINDOW *w, const struct tui *d, struct tui_rect r,
    int *row)
{
	attr_t attr = tui_attr(TUI_COLOR_BLOCKED) | A_BOLD;
	char line[2048], wait[128];
	size_t used, i;

	for (i = 0; d->has_sel && i < d->nwaits; i++) {
		if (pw_op_same(d->waits[i].op, d->sel)) {
			snprintf(line, sizeof line, "blocked: %s",
			    tui_details_wait(&d->waits[i], true, wait,
			    sizeof wait));
			tui_draw_wrap(w, r, row, attr, line);
			return;
		}
	}
	tui_details_stuck(d, line, sizeof line);
	used = strlen(line);
	for (i = 0; i < d->nwaits && used < sizeof line; i++)
		used += (size_t)snprintf(line + used, sizeof line - used,
		    "%s%s", i > 0 ? "; " : ": ", tui_details_wait(&d->waits[i],
		    true, wait, sizeof wait));
	tui_draw_wrap(w, r, row, attr, line);
}

/* Appends OP's pins to BUF: what it must precede and follow. */
static void
tui_details_pins(const struct tui *d, struct pw_op op, char *buf, size_t len)
{
	const struct pw_pin *pin;
	char name[48];
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < d->npins && used < len; i++) {
		pin = &d->pins[i];
		if (tui_pin_names(pin->before, op))
			used += (size_t)snprintf(buf + used, len - used,
			    "%s before %s", used > 0 ? "," : "pinned:",
			    pw_op_name(name, sizeof name, pin->after));
		else if (tui_pin_names(pin->after, op))
			used += (size_t)snprintf(buf + used, len - used,
			    "%s after %s", used > 0 ? "," : "pinned:",
			    pw_op_name(name, sizeof name, pin->before));
	}
}

/* OP's row of the measured run, when one is shown: its measured start
 * and duration, the error against the prediction, and its device's peak
 * measured against predicted, labelled the workload's: its fp32
 * tensors' bytes, not the plan's problem's of the header. */
static void
tui_details_measured(WINDOW *w, const struct tui *d, struct pw_op op,
    struct tui_rect r, int *row)
{
	const struct tui_measured *m = tui_measured_of(d);
	const struct pw_op_error *e;
	char line[256], a[32], b[32], c[32], f[32], err[32], pm[32], pp[32];

	if (m == NULL || (e = tui_measured_op(m, op)) == NULL)
		return;
	if (e->predicted > 0)
		snprintf(err, sizeof err, "%+.1f%%", (e->measured -
		    e->predicted) / e->predicted * 100);
	else
		snprintf(err, sizeof err, "+%s", pw_fmt_seconds(f, sizeof f,
		    e->measured));
	snprintf(line, sizeof line, "measured: start %s  duration %s "
	    "(predicted %s at %s: %s)  d%d workload peak %s (predicted %s)",
	    pw_fmt_seconds(a, sizeof a, e->measured_start),
	    pw_fmt_seconds(b, sizeof b, e->measured),
	    pw_fmt_seconds(c, sizeof c, e->predicted),
	    pw_fmt_seconds(f, sizeof f, e->predicted_start), err, e->device,
	    pw_fmt_bytes(pm, sizeof pm, m->cmp.peak_measured[e->device]),
	    pw_fmt_bytes(pp, sizeof pp, m->cmp.peak_predicted[e->device]));
	tui_draw_wrap(w, r, row, tui_attr(TUI_COLOR_PANEL) | A_BOLD, line);
}

/* The selected OP's rows into R from *ROW on. */
static void
tui_details_op(WINDOW *w, const struct tui *d, struct pw_op op,
    struct tui_rect r, int *row)
{
	const struct pw_plan *plan = d->plan;
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_schedule *s = pw_plan_timed(plan);
	const struct pw_timing *t = pw_plan_timing(plan);
	const struct pw_where *where = pw_plan_where(plan);
	const double *slack = pw_plan_slack(plan);
	struct pw_pred preds[PW_MAX_PREDS], succs[TUI_DETAILS_MAX_SUCCS];
	char line[2048], where_s[96], a[32], b[32], c[32], e[32], name[64];
	attr_t attr = tui_attr(TUI_COLOR_PANEL);
	int dev = p->stages[op.stage].device, k, chunk = 0, n, total;
	double limit = p->memory[dev].limit;
	size_t i = pw_op_index(p, op);

	for (k = 0; k < op.stage; k++)
		chunk += p->stages[k].device == dev;
	if (pw_kind_is_transfer(op.kind))
		snprintf(where_s, sizeof where_s, "channel %s (d%d)",
		    pw_channel_name(p, pw_problem_channel(p, dev, op.kind),
		    name, sizeof name), dev);
	else
		snprintf(where_s, sizeof where_s, "device d%d", dev);
	snprintf(line, sizeof line, "stage %d, chunk %d, microbatch %d, %s",
	    op.stage, chunk, op.mb, where_s);
	tui_draw_wrap(w, r, row, attr, line);
	if (!pw_where_has(where, p, op) || !pw_timing_has(t, i)) {
		tui_draw_wrap(w, r, row, attr, "not in the timed orders");
		return;
	}
	snprintf(line, sizeof line, "start %s  end %s  duration %s  slack %s%s",
	    pw_fmt_seconds(a, sizeof a, t->start[i]),
	    pw_fmt_seconds(b, sizeof b, t->end[i]),
	    pw_fmt_seconds(c, sizeof c, t->end[i] - t->start[i]),
	    pw_fmt_seconds(e, sizeof e, slack[i]),
	    slack[i] == 0 ? " (critical)" : "");
	tui_draw_wrap(w, r, row, attr, line);
	/* The user's own constraints before the derived rows, which a short
	 * panel cuts first. */
	tui_details_pins(d, op, line, sizeof line);
	if (line[0] != '\0')
		tui_draw_wrap(w, r, row, attr | tui_attr(TUI_COLOR_PIN), line);
	tui_details_measured(w, d, op, r, row);
	pw_fmt_bytes(a, sizeof a, pw_memory_at(pw_plan_metrics(plan), dev,
	    t->start[i]));
	if (isfinite(limit))
		pw_fmt_bytes(b, sizeof b, limit);
	snprintf(line, sizeof line, "memory of d%d at its start %s of %s", dev,
	    a, isfinite(limit) ? b : "no limit");
	tui_draw_wrap(w, r, row, attr, line);
	n = pw_preds(p, s, where, op, preds);
	tui_details_edges(line, sizeof line, "preds:", preds, n, n);
	tui_draw_wrap(w, r, row, attr, line);
	total = pw_succs(p, s, where, op, succs, TUI_DETAILS_MAX_SUCCS);
	tui_details_edges(line, sizeof line, "succs:", succs,
	    total < TUI_DETAILS_MAX_SUCCS ? total : TUI_DETAILS_MAX_SUCCS, total);
	tui_draw_wrap(w, r, row, attr, line);
}

void
tui_draw_details(WINDOW *w, const struct tui *d, const struct tui_layout *l)
{
	struct tui_rect r = l->details, in;
	wchar_t h = tui_glyph(&d->glyphs, TUI_GLYPH_HLINE);
	wchar_t v = tui_glyph(&d->glyphs, TUI_GLYPH_VLINE);
	attr_t a = tui_attr(TUI_COLOR_PANEL);
	bool side = r.x > 0;	/* the wide layout's column at the right */
	char title[96], name[48], *line;
	int x, y, row = 0;

	tui_draw_clear(w, r, a);
	wattrset(w, a);
	for (x = r.x; x < r.x + r.w; x++)
		mvwaddnwstr(w, r.y, x, &h, 1);
	for (y = r.y + 1; side && y < r.y + r.h; y++)
		mvwaddnwstr(w, y, r.x, &v, 1);
	wattrset(w, A_NORMAL);
	if (d->has_sel)
		snprintf(title, sizeof title, " %s %s ", pw_op_name(name,
		    sizeof name, d->sel), tui_details_kind[d->sel.kind]);
	else
		snprintf(title, sizeof title, " details ");
	tui_draw_text(w, r.y, r.x + 2, r.w - 4, a | A_BOLD, title);
	in = (struct tui_rect){ r.y + 1, r.x + (side ? 2 : 1), r.h - 1,
	    r.w - (side ? 3 : 2) };
	if (d->nwaits > 0)
		tui_details_deadlock(w, d, in, &row);
	if (d->has_sel)
		tui_details_op(w, d, d->sel, in, &row);
	else if (d->nwaits == 0) {
		tui_draw_wrap(w, in, &row, a, "Nothing selected: the arrow "
		    "keys select an op, / finds one by name (B(3,12)), "
		    "? lists every key.");
		/* What the schedule is as a whole: the flags that run it. */
		line = pw_megatron_line(pw_plan_problem(d->plan),
		    pw_plan_schedule(d->plan));
		tui_draw_wrap(w, in, &row, a, line);
		free(line);
	}
}
