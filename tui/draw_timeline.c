/*
 * draw_timeline.c - the time ruler and the lanes: each device's compute
 * lane, after a launch its measured lane (the same ops at the times the
 * run measured, on the same axis), its transfer lanes and its memory
 * strip over the view's window.
 *
 * Only the window is drawn: a lane seeks its first op ending after the
 * window's left edge (pw_order_seek, a binary search) and walks until an
 * op starts past the right edge, so a redraw costs the ops on screen,
 * not the schedule.  A lane is first laid into a row of cells, then
 * written: an op owns the cells whose midpoints it covers (an op too
 * short for any takes the cell of its own midpoint when that is idle),
 * so two ops never claim one cell and the picture does not depend on the
 * order of drawing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "tui_int.h"

/* Rows of successors highlighted with the selection. */
#define TUI_TIMELINE_MAX_SUCCS	16

/* What every lane of one drawing reads. */
struct tui_timeline {
	const struct tui *d;		/* may be NULL */
	struct tui_glyphs glyphs;
	const struct pw_problem *p;
	const struct pw_schedule *s;	/* the timed orders */
	const struct pw_timing *t;
	const struct pw_timing *mt;	/* the measured run's, NULL: none */
	const struct pw_metrics *m;
	const struct tui_view *v;
	const double *slack;		/* when the critical path is shown */
	bool	current;		/* the plan is the designer's own, whose
					 * deadlock D's waits are */
	int	*chunk;			/* [nstages]: index among its device's */
	int	*nchunks;		/* [devices]: chunks of each device */
	int	nrelated;
	struct pw_op related[PW_MAX_PREDS + TUI_TIMELINE_MAX_SUCCS];
	int	x0, width;		/* the timeline's columns */
	double	scale;			/* bytes of a full memory cell when
					 * the device has no limit */
};

/* One cell of a lane; CH 0 is idle. */
struct tui_timeline_cell {
	wchar_t	ch;
	attr_t	attr;
};

/* ------------------------------------------------------------------ */
/* The ruler                                                           */

/* The round step (1, 2 or 5 x 10^k seconds) nearest above RAW. */
static double
tui_timeline_step(double raw)
{
	double base = pow(10, floor(log10(raw)));

	if (raw <= base)
		return base;
	if (raw <= 2 * base)
		return 2 * base;
	if (raw <= 5 * base)
		return 5 * base;
	return 10 * base;
}

/* T's label on a ruler of ticks STEP apart up to END: four significant
 * digits (pw_fmt_seconds) where they tell the ticks apart, else END's
 * unit with the decimals STEP needs, so that deep zooms still read as
 * distinct times. */
static void
tui_ruler_label(char *buf, size_t len, double t, double step, double end)
{
	static const double scale[] = { 1, 1e-3, 1e-6, 1e-9 };
	static const char *const unit[] = { "s", "ms", "us", "ns" };
	double top = fabs(end), digits;
	size_t u = 0;

	if (fabs(t) < step * 1e-9 || step >= pow(10, floor(log10(top)) - 3)) {
		/* Steps of 10^k print their multiples exactly. */
		pw_fmt_seconds(buf, len, fabs(t) < step * 1e-9 ? 0 : t);
		return;
	}
	while (u + 1 < sizeof scale / sizeof scale[0] && top < scale[u])
		u++;
	digits = ceil(log10(scale[u] / step) - 1e-9);
	/* Up to picoseconds of seconds: the deepest zoom's step of half a
	 * nanosecond at 17 s needs ten decimals. */
	snprintf(buf, len, "%.*f %s", (int)fmin(fmax(digits, 0), 12),
	    t / scale[u], unit[u]);
}

void
tui_draw_ruler(WINDOW *w, const struct tui_view *v, struct tui_rect area,
    int label_w)
{
	/* Ticks are '|' in every mode: the ruler has no state to ask. */
	int width = area.w - label_w, col, last = -1;
	attr_t a = tui_attr(TUI_COLOR_RULER);
	double step, t, end;
	char label[32];
	long k;

	if (width <= 0 || !(v->span > 0))
		return;
	/* Ticks at least 12 columns apart leave room for "12.5 ms". */
	step = tui_timeline_step(v->span * 12 / width);
	end = v->t0 + v->span;
	for (k = (long)ceil(v->t0 / step - 1e-9); (t = k * step) < end; k++) {
		col = (int)floor(tui_view_col(v, width, t) + 1e-9);
		if (col < 0 || col >= width || col <= last)
			continue;
		tui_ruler_label(label, sizeof label, t, step, end);
		mvwaddch(w, area.y, area.x + label_w + col, '|' | a);
		last = col;
		/* A label cut short would read as another time. */
		if (col + 1 + (int)strlen(label) <= width)
			last += tui_draw_text(w, area.y, area.x + label_w + col +
			    1, width - col - 1, a, label);
	}
}

/* ------------------------------------------------------------------ */
/* Which ops are highlighted                                           */

bool
tui_pin_names(struct pw_op pin, struct pw_op op)
{
	struct pw_op other = pw_pin_other(pin);

	return pin.stage == op.stage && pin.mb == op.mb &&
	    (pin.kind == op.kind || other.kind == op.kind);
}

static bool
tui_timeline_pinned(const struct tui *d, struct pw_op op)
{
	size_t i;

	for (i = 0; i < d->npins; i++) {
		if (tui_pin_names(d->pins[i].before, op) ||
		    tui_pin_names(d->pins[i].after, op))
			return true;
	}
	return false;
}

static bool
tui_timeline_blocked(const struct tui *d, struct pw_op op)
{
	size_t i;

	for (i = 0; i < d->nwaits; i++) {
		if (pw_op_same(d->waits[i].op, op) ||
		    pw_op_same(d->waits[i].on.op, op))
			return true;
	}
	return false;
}

/* The selection's predecessors and successors in the plan drawn. */
static void
tui_timeline_relate(struct tui_timeline *tl, const struct pw_plan *plan)
{
	struct pw_pred preds[PW_MAX_PREDS], succs[TUI_TIMELINE_MAX_SUCCS];
	const struct pw_where *where = pw_plan_where(plan);
	int n, k;

	tl->nrelated = 0;
	if (tl->d == NULL || !tl->d->has_sel ||
	    !pw_where_has(where, tl->p, tl->d->sel))
		return;
	n = pw_preds(tl->p, tl->s, where, tl->d->sel, preds);
	for (k = 0; k < n; k++)
		tl->related[tl->nrelated++] = preds[k].op;
	n = pw_succs(tl->p, tl->s, where, tl->d->sel, succs,
	    TUI_TIMELINE_MAX_SUCCS);
	for (k = 0; k < n && k < TUI_TIMELINE_MAX_SUCCS; k++)
		tl->related[tl->nrelated++] = succs[k].op;
}

static bool
tui_timeline_related(const struct tui_timeline *tl, struct pw_op op)
{
	int k;

	for (k = 0; k < tl->nrelated; k++) {
		if (pw_op_same(tl->related[k], op))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Compute and transfer lanes                                          */

/* OP's attribute, and whether it is off a critical path that is shown. */
static attr_t
tui_timeline_attr(const struct tui_timeline *tl, struct pw_op op, bool *dim,
    bool *blocked, bool *pinned)
{
	const struct tui *d = tl->d;
	attr_t a = tui_attr((enum tui_color)op.kind);
	size_t i = pw_op_index(tl->p, op);

	*dim = *blocked = *pinned = false;
	if (d == NULL)
		return a;
	if (tl->slack != NULL) {
		if (tl->slack[i] > 0) {
			*dim = true;
			a |= tui_attr(TUI_COLOR_OFF_PATH);
		} else
			a |= tui_attr(TUI_COLOR_CRITICAL);
	}
	if (tui_timeline_related(tl, op))
		a |= tui_attr(TUI_COLOR_RELATED);
	if (d->npins > 0 && (*pinned = tui_timeline_pinned(d, op)))
		a |= tui_attr(TUI_COLOR_PIN);
	if (tl->current && d->nwaits > 0 &&
	    (*blocked = tui_timeline_blocked(d, op)))
		a = tui_attr(TUI_COLOR_BLOCKED);
	if (d->has_sel && pw_op_same(d->sel, op))
		a = tui_attr(TUI_COLOR_SELECTED);
	return a;
}

/* The cell of a bar's edge: the block of EIGHTHS of it when it is idle
 * (UTF-8 only; the colour pair reversed so that the block takes the
 * bar's colour). */
static void
tui_timeline_edge(const struct tui_timeline *tl, struct tui_timeline_cell *c,
    wchar_t ch, attr_t a)
{
	if (tl->glyphs.ascii || c->ch != 0)
		return;
	c->ch = ch;
	c->attr = tl->glyphs.mono ? a : a | A_REVERSE;
}

/* Lays OP, from START to END, into the lane's cells. */
static void
tui_timeline_op(const struct tui_timeline *tl, struct tui_timeline_cell *cells,
    struct pw_op op, double start, double end)
{
	/* Columns far past the lane's ends count as a few past them: deep
	 * in a zoom they pass an int's range.  Whole columns, so that what
	 * lies past an end (a bar of two cells or more, no edge) stays. */
	double cs = fmin(fmax(tui_view_col(tl->v, tl->width, start), -4),
	    tl->width + 4.0);
	double ce = fmin(fmax(tui_view_col(tl->v, tl->width, end), -4),
	    tl->width + 4.0);
	int c0 = (int)ceil(cs - 0.5), c1 = (int)ceil(ce - 0.5), c, n, first;
	int chunk;
	bool dim, blocked, pinned;
	wchar_t glyph, kind;
	char num[16];
	attr_t a;
	double f;

	a = tui_timeline_attr(tl, op, &dim, &blocked, &pinned);
	glyph = (wchar_t)tui_kind_glyph(op.kind);
	chunk = tl->chunk[op.stage];
	if (!pw_kind_is_transfer(op.kind) && chunk % 2 == 1)
		glyph = (wchar_t)towlower((wint_t)glyph);
	kind = glyph;
	if (dim)
		glyph = tui_glyph(&tl->glyphs, TUI_GLYPH_DIM);
	if (c0 >= c1) {
		/* Too short to cover a midpoint. */
		c = (int)floor((cs + ce) / 2);
		if (c >= 0 && c < tl->width && cells[c].ch == 0)
			cells[c] = (struct tui_timeline_cell){ blocked ?
			    tui_glyph(&tl->glyphs, TUI_GLYPH_BLOCKED) : glyph, a };
		return;
	}
	/* The number goes first where the bar shows, so that an op running
	 * on from past the left edge still says which microbatch it is.
	 * Case tells two chunks apart; with more, "2:5" is chunk 2's
	 * microbatch 5. */
	first = c0 < 0 ? 0 : c0;
	if (!pw_kind_is_transfer(op.kind) &&
	    tl->nchunks[tl->p->stages[op.stage].device] > 2)
		n = snprintf(num, sizeof num, "%d:%d", chunk, op.mb);
	else
		n = snprintf(num, sizeof num, "%d", op.mb);
	if ((c1 < tl->width ? c1 : tl->width) - first <= n)
		n = 0;
	for (c = first; c < c1 && c < tl->width; c++) {
		cells[c].attr = a;
		cells[c].ch = c - first < n ? (wchar_t)num[c - first] : glyph;
	}
	/* An op off the critical path keeps its kind after its number,
	 * where a dot still follows: "4F··" reads as F and as off the
	 * chain, whose bars stay solid ("4FFF"), in a text capture too. */
	if (dim && first + n + 1 < (c1 < tl->width ? c1 : tl->width))
		cells[first + n].ch = kind;
	if (blocked && first < tl->width)
		cells[first].ch = tui_glyph(&tl->glyphs, TUI_GLYPH_BLOCKED);
	if (pinned && c1 - 1 >= 0 && c1 - 1 < tl->width)
		cells[c1 - 1].ch = tui_glyph(&tl->glyphs, TUI_GLYPH_PIN);
	/* The end: the bar's last cell, or the one after it, in eighths;
	 * not for a dimmed op, which should not catch the eye, nor for a
	 * bar of one cell, where the edges would be all there is. */
	if (dim || c1 - c0 < 2)
		return;
	f = ce - floor(ce);
	c = (int)floor(ce);
	if (f > 0 && c >= 0 && c < tl->width) {
		if (f < 0.5 && (int)lround(f * 8) >= 1) {
			tui_timeline_edge(tl, &cells[c],
			    tui_glyph_left((int)lround(f * 8)), a);
		} else if (f >= 0.5 && c == c1 - 1 && c1 - c0 > n + 1 &&
		    !pinned && lround(f * 8) < 8 && !tl->glyphs.ascii) {
			cells[c].ch = tui_glyph_left((int)lround(f * 8));
			cells[c].attr = tl->glyphs.mono ? a : a | A_REVERSE;
		}
	}
	/* The start, in a cell's second half: a right half or eighth. */
	f = cs - floor(cs);
	c = (int)floor(cs);
	if (f > 0.5 && c >= 0 && c < tl->width)
		tui_timeline_edge(tl, &cells[c], tui_glyph(&tl->glyphs,
		    f <= 0.75 ? TUI_GLYPH_RIGHT_HALF : TUI_GLYPH_RIGHT_EIGHTH), a);
}

/* RESOURCE's ops in the window (of DEVICE only, where devices share a
 * channel) at the times of T: the simulation's, or a measured run's,
 * whose ops of one resource also run in its order. */
static void
tui_timeline_ops(const struct tui_timeline *tl, struct tui_timeline_cell *cells,
    const struct pw_timing *t, int resource, int device)
{
	const struct pw_seq *seq = resource < tl->p->devices ?
	    &tl->s->device[resource] :
	    &tl->s->channel[resource - tl->p->devices];
	double t1 = tl->v->t0 + tl->v->span, start, end;
	struct pw_op op;
	size_t i;
	int k;

	k = pw_order_seek(tl->p, tl->s, t, resource, tl->v->t0);
	for (; k < seq->len; k++) {
		op = seq->ops[k];
		i = pw_op_index(tl->p, op);
		if (!pw_timing_has(t, i))
			continue;
		start = t->start[i];
		end = t->end[i];
		if (start >= t1)
			break;
		if (tl->p->stages[op.stage].device != device)
			continue;
		tui_timeline_op(tl, cells, op, start, end);
	}
}

/* ------------------------------------------------------------------ */
/* Memory strips                                                       */

/* The index of the last point of CURVE at or before T (0 before all). */
static int
tui_timeline_point(const struct pw_device_metrics *dm, double t)
{
	int lo = 0, hi = dm->ncurve - 1, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (dm->curve[mid].t <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Each column's highest level against the limit (or, with none, against
 * the highest peak of the plan). */
static void
tui_timeline_memory(const struct tui_timeline *tl, struct tui_timeline_cell *cells,
    int device)
{
	const struct pw_device_metrics *dm = &tl->m->device[device];
	double limit = tl->p->memory[device].limit, scale, level, t1;
	int k, c, eighths;
	bool over;

	if (dm->ncurve == 0)
		return;
	scale = isfinite(limit) ? limit : tl->scale;
	k = tui_timeline_point(dm, tl->v->t0);
	for (c = 0; c < tl->width; c++) {
		t1 = tui_view_time(tl->v, tl->width, c + 1);
		level = dm->curve[k].bytes;
		while (k + 1 < dm->ncurve && dm->curve[k + 1].t < t1) {
			k++;
			if (dm->curve[k].bytes > level)
				level = dm->curve[k].bytes;
		}
		over = isfinite(limit) && level > limit * (1 + 1e-9);
		eighths = scale > 0 ? (int)ceil(level / scale * 8 - 1e-9) : 0;
		cells[c].ch = over ? tui_glyph(&tl->glyphs, TUI_GLYPH_OVER) :
		    tui_glyph_level(&tl->glyphs, eighths);
		cells[c].attr = tui_attr(over ? TUI_COLOR_MEMORY_OVER :
		    TUI_COLOR_MEMORY);
	}
}

/* ------------------------------------------------------------------ */
/* Lanes                                                               */

/* The label of LANE: "d3", then its measured lane, its channels and its
 * memory indented. */
static void
tui_timeline_label(const struct pw_problem *p, const struct tui_lane *lane,
    char *buf, size_t len)
{
	char name[64], *dot;

	switch (lane->kind) {
	case TUI_LANE_COMPUTE:
		snprintf(buf, len, "d%d", lane->device);
		break;
	case TUI_LANE_TRANSFER:
		pw_channel_name(p, lane->channel, name, sizeof name);
		dot = strchr(name, '.');
		snprintf(buf, len, "  %s", dot != NULL ? dot + 1 : "link");
		break;
	case TUI_LANE_MEMORY:
		snprintf(buf, len, "  mem");
		break;
	case TUI_LANE_MEASURED:
		snprintf(buf, len, "  run");
		break;
	}
}

static void
tui_timeline_lane(WINDOW *w, const struct tui_timeline *tl,
    struct tui_timeline_cell *cells, const struct tui_lane *lane,
    struct tui_rect area, int label_w)
{
	wchar_t idle = tui_glyph(&tl->glyphs, TUI_GLYPH_IDLE);
	char label[32];
	int c;

	memset(cells, 0, (size_t)tl->width * sizeof *cells);
	switch (lane->kind) {
	case TUI_LANE_COMPUTE:
		tui_timeline_ops(tl, cells, tl->t, lane->device, lane->device);
		break;
	case TUI_LANE_TRANSFER:
		tui_timeline_ops(tl, cells, tl->t, tl->p->devices +
		    lane->channel, lane->device);
		break;
	case TUI_LANE_MEMORY:
		tui_timeline_memory(tl, cells, lane->device);
		break;
	case TUI_LANE_MEASURED:
		tui_timeline_ops(tl, cells, tl->mt, lane->device, lane->device);
		break;
	}
	tui_timeline_label(tl->p, lane, label, sizeof label);
	tui_draw_text(w, lane->y, area.x, label_w, tui_attr(TUI_COLOR_LABEL),
	    label);
	for (c = 0; c < tl->width; c++) {
		wattrset(w, cells[c].ch != 0 ? cells[c].attr : A_NORMAL);
		mvwaddnwstr(w, lane->y, tl->x0 + c,
		    cells[c].ch != 0 ? &cells[c].ch : &idle, 1);
	}
	wattrset(w, A_NORMAL);
}

void
tui_draw_lanes(WINDOW *w, const struct tui *d, const struct pw_plan *plan,
    const struct tui_view *view, struct tui_rect area, int label_w,
    bool compute_only)
{
	struct tui_timeline tl = { .d = d, .v = view };
	const struct tui_measured *mr = d != NULL && plan == d->plan &&
	    !compute_only ? tui_measured_of(d) : NULL;
	struct tui_timeline_cell *cells;
	struct tui_lane *lanes;
	int nlanes, last, k;

	tl.width = area.w - label_w;
	if (tl.width <= 0 || area.h <= 0 || !(view->span > 0))
		return;
	tl.glyphs = d != NULL ? d->glyphs : (struct tui_glyphs){ 0 };
	tl.current = d != NULL && plan == d->plan;
	tl.p = pw_plan_problem(plan);
	tl.s = pw_plan_timed(plan);
	tl.t = pw_plan_timing(plan);
	tl.m = pw_plan_metrics(plan);
	tl.mt = mr != NULL ? mr->timing : NULL;
	tl.x0 = area.x + label_w;
	if (d != NULL && d->show_critical)
		tl.slack = pw_plan_slack(plan);
	tl.chunk = pw_xcalloc((size_t)tl.p->nstages, sizeof *tl.chunk);
	tl.nchunks = pw_xcalloc((size_t)tl.p->devices, sizeof *tl.nchunks);
	for (k = 0; k < tl.p->nstages; k++)
		tl.chunk[k] = tl.nchunks[tl.p->stages[k].device]++;
	tl.scale = tl.m->device[pw_metrics_peak_device(tl.m)].peak;
	tui_timeline_relate(&tl, plan);
	lanes = pw_xcalloc((size_t)area.h, sizeof *lanes);
	cells = pw_xcalloc((size_t)tl.width, sizeof *cells);
	nlanes = tui_layout_lanes(plan, view, area.y, area.h, compute_only,
	    mr != NULL, lanes, &last);
	for (k = 0; k < nlanes; k++)
		tui_timeline_lane(w, &tl, cells, &lanes[k], area, label_w);
	free(cells);
	free(lanes);
	free(tl.nchunks);
	free(tl.chunk);
}
