/*
 * layout.c - where the header, the ruler, the lanes, the details panel
 * and the message line go on a screen of a given size.  Drawing, mouse
 * clicks and scrolling read the same layout, so that a click lands on the
 * op drawn under it.
 */
#include <assert.h>
#include <stdlib.h>

#include "tui_int.h"

/* Columns of a lane's label ("d12 mem "). */
#define TUI_LAYOUT_LABEL_W	8
/* From this width on, the details panel stands at the right. */
#define TUI_LAYOUT_WIDE		130
#define TUI_LAYOUT_DETAILS_W	42
#define TUI_LAYOUT_DETAILS_H	6

/* Appends the lanes of DEVICE to OUT[*N] while rows remain; false when
 * full. */
static bool
tui_layout_device(const struct pw_plan *plan, const struct tui_view *v,
    int device, bool compute_only, bool measured, int *y, int end,
    struct tui_lane *out, int *n)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_schedule *s = pw_plan_timed(plan);
	int channels[2], nchannels = 0, c, k;
	bool moves = false;

	if (*y >= end)
		return false;
	out[(*n)++] = (struct tui_lane){ device, TUI_LANE_COMPUTE, -1, (*y)++ };
	/* Right under it, even folded: the two read as one comparison. */
	if (measured) {
		if (*y >= end)
			return false;
		out[(*n)++] = (struct tui_lane){ device, TUI_LANE_MEASURED, -1,
		    (*y)++ };
	}
	if (compute_only || (v->folded != NULL && v->folded[device]))
		return true;
	for (k = 0; k < p->nstages; k++) {
		if (p->stages[k].device == device && p->stages[k].offload > 0)
			moves = true;
	}
	/* A channel gets a lane where the schedule uses it: a schedule
	 * without transfers keeps its rows for devices. */
	if (p->link.present && moves) {
		c = pw_problem_channel(p, device, PW_OFFLOAD);
		if (s->channel[c].len > 0)
			channels[nchannels++] = c;
		c = pw_problem_channel(p, device, PW_RELOAD);
		if (s->channel[c].len > 0 && (nchannels == 0 || c != channels[0]))
			channels[nchannels++] = c;
	}
	for (k = 0; k < nchannels; k++) {
		if (*y >= end)
			return false;
		out[(*n)++] = (struct tui_lane){ device, TUI_LANE_TRANSFER,
		    channels[k], (*y)++ };
	}
	if (*y >= end)
		return false;
	out[(*n)++] = (struct tui_lane){ device, TUI_LANE_MEMORY, -1, (*y)++ };
	return true;
}

int
tui_layout_lanes(const struct pw_plan *plan, const struct tui_view *v,
    int y, int h, bool compute_only, bool measured, struct tui_lane *out,
    int *last)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	int dev, n = 0, end = y + h;

	*last = -1;
	/* A view of another plan (the compare view's) may start past it. */
	dev = v->top >= 0 && v->top < p->devices ? v->top : 0;
	for (; dev < p->devices; dev++) {
		if (y >= end)
			break;
		*last = dev;
		if (!tui_layout_device(plan, v, dev, compute_only, measured, &y,
		    end, out, &n))
			break;
	}
	return n;
}

bool
tui_too_small(int rows, int cols)
{
	return rows < TUI_MIN_ROWS || cols < TUI_MIN_COLS;
}

void
tui_layout(const struct tui *d, int rows, int cols, struct tui_layout *out)
{
	*out = (struct tui_layout){ .rows = rows, .cols = cols,
	    .label_w = TUI_LAYOUT_LABEL_W, .last_device = -1 };
	if (tui_too_small(rows, cols)) {
		out->too_small = true;
		return;
	}
	out->header = (struct tui_rect){ 0, 0, 2, cols };
	out->message = (struct tui_rect){ rows - 1, 0, 1, cols };
	if (cols >= TUI_LAYOUT_WIDE) {
		out->details = (struct tui_rect){ 2, cols - TUI_LAYOUT_DETAILS_W,
		    rows - 3, TUI_LAYOUT_DETAILS_W };
		out->ruler = (struct tui_rect){ 2, 0, 1,
		    cols - TUI_LAYOUT_DETAILS_W - 1 };
		out->timeline = (struct tui_rect){ 3, 0, rows - 4,
		    out->ruler.w };
	} else {
		out->details = (struct tui_rect){ rows - 1 -
		    TUI_LAYOUT_DETAILS_H, 0, TUI_LAYOUT_DETAILS_H, cols };
		out->ruler = (struct tui_rect){ 2, 0, 1, cols };
		out->timeline = (struct tui_rect){ 3, 0,
		    out->details.y - 3, cols };
	}
	out->panel = (struct tui_rect){ 2, 0, rows - 3, cols };
	assert(d->view.top >= 0 &&
	    d->view.top < pw_plan_problem(d->plan)->devices);
	/* At most one lane per row. */
	out->lanes = pw_xcalloc((size_t)out->timeline.h + 1, sizeof *out->lanes);
	out->nlanes = tui_layout_lanes(d->plan, &d->view, out->timeline.y,
	    out->timeline.h, false, tui_measured_of(d) != NULL, out->lanes,
	    &out->last_device);
}

void
tui_layout_free(struct tui_layout *l)
{
	free(l->lanes);
	l->lanes = NULL;
	l->nlanes = 0;
}

double
tui_view_time(const struct tui_view *v, int width, double col)
{
	assert(width > 0);
	return v->t0 + col * v->span / width;
}

double
tui_view_col(const struct tui_view *v, int width, double t)
{
	assert(v->span > 0);
	return (t - v->t0) * width / v->span;
}
