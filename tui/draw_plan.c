/*
 * draw_plan.c - the design search's panel: what is searched and how far
 * it got (candidates tried, best so far, phase), then the candidates as
 * they rank, one row each (split, layout, schedule, step time, bubble,
 * peak against the limit, gap), the cursor's in reverse, and its other
 * figures on the status row.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* Columns of the step time, bubble, peak/limit and gap fields; the
 * layout, saving and schedule fields are as wide as their longest
 * text, and the split gets the rest. */
#define TUI_PLAN_STEP_W		9
#define TUI_PLAN_BUBBLE_W	8
#define TUI_PLAN_PEAK_W		9
#define TUI_PLAN_GAP_W		6

/* A candidate's fields as text. */
struct tui_plan_fields {
	char	layout[32], saving[32], step[32], bubble[16], peak[16];
};

static void
tui_plan_fields(const struct pw_planner_candidate *c,
    struct tui_plan_fields *f)
{
	pw_design_layout_name(&c->design, f->layout, sizeof f->layout);
	tui_planner_saving(&c->design, f->saving, sizeof f->saving);
	pw_fmt_seconds(f->step, sizeof f->step, c->makespan);
	snprintf(f->bubble, sizeof f->bubble, "%.1f%%", 100 * c->bubble_rate);
	if (isfinite(c->limit) && c->limit > 0)
		snprintf(f->peak, sizeof f->peak, "%.1f%%", 100 * c->peak /
		    c->limit);
	else
		snprintf(f->peak, sizeof f->peak, "-");
}

/* The column widths of R's candidates. */
struct tui_plan_cols {
	int	split, layout, saving, schedule;
};

static int
tui_plan_widest(int w, const char *s)
{
	return (int)strlen(s) + 1 > w ? (int)strlen(s) + 1 : w;
}

static struct tui_plan_cols
tui_plan_cols(const struct pw_planner_result *r, int width)
{
	struct tui_plan_cols cols = { 0, 7, 7, 9 };
	struct tui_plan_fields f;
	size_t i;

	for (i = 0; i < r->ncand; i++) {
		tui_plan_fields(&r->cand[i], &f);
		cols.layout = tui_plan_widest(cols.layout, f.layout);
		cols.saving = tui_plan_widest(cols.saving, f.saving);
		cols.schedule = tui_plan_widest(cols.schedule,
		    r->cand[i].schedule_name);
	}
	cols.split = width - 2 - cols.layout - cols.saving - cols.schedule -
	    TUI_PLAN_STEP_W - TUI_PLAN_BUBBLE_W - TUI_PLAN_PEAK_W -
	    TUI_PLAN_GAP_W;
	return cols;
}

/* The title's second half: how far the search got, into BUF. */
static void
tui_plan_state(struct tui_planner *s, char *buf, size_t len)
{
	struct pw_planner_progress pr;
	char name[32], phase[16], text[128];

	if (s->joined) {
		if (s->rc != PW_OK)
			snprintf(buf, len, "no design: %s", s->err.msg);
		else
			snprintf(buf, len, "%zu tried, %s", s->result.tried,
			    pw_solve_end_words(s->result.ended));
		return;
	}
	pr = tui_planner_progress(s, name, phase);
	snprintf(buf, len, "running: %s", pw_planner_progress_text(&pr, text,
	    sizeof text));
}

/* Candidate C's row in the columns COLS, into BUF. */
static void
tui_plan_row(const struct pw_planner_candidate *c,
    const struct tui_plan_cols *cols, char *buf, size_t len)
{
	struct tui_plan_fields f;
	char split[256];

	pw_design_split_name(&c->design, c->problem->nstages, split,
	    (size_t)cols->split < sizeof split ? (size_t)cols->split :
	    sizeof split);
	tui_plan_fields(c, &f);
	snprintf(buf, len, "  %-*s%-*s%-*s%-*s%-*s%-*s%-*s%5.1f%%",
	    cols->split, split, cols->layout, f.layout, cols->saving, f.saving,
	    cols->schedule, c->schedule_name, TUI_PLAN_STEP_W, f.step,
	    TUI_PLAN_BUBBLE_W, f.bubble, TUI_PLAN_PEAK_W, f.peak, 100 * c->gap);
}

/* The cursor's candidate's other figures, the status rows' two lines. */
static void
tui_plan_status(const struct pw_planner_candidate *c, char *one, char *two,
    size_t len)
{
	char peak[32], lim[32], bound[32];

	pw_fmt_bytes(peak, sizeof peak, c->peak);
	if (isfinite(c->limit))
		pw_fmt_bytes(lim, sizeof lim, c->limit);
	else
		snprintf(lim, sizeof lim, "no limit");
	snprintf(one, len, "recompute %s, offload %s, peak %s of %s (d%d), "
	    "idle %.1f%%", pw_recompute_label(c->design.recompute),
	    c->moves ? "yes" : "no", peak, lim, c->peak_device,
	    100 * c->idle_share);
	snprintf(two, len, "bound %s, gap %.1f%% for this design%s; Enter "
	    "opens it", pw_fmt_seconds(bound, sizeof bound, c->bound),
	    100 * c->gap, c->optimized ? ", optimized" : "");
}

void
tui_draw_planner(WINDOW *w, struct tui *d, const struct tui_layout *l)
{
	struct tui_rect r = l->panel;
	struct tui_planner *s = d->planner;
	const struct pw_planner_result *res;
	struct tui_plan_cols cols;
	char line[sizeof ((struct pw_error *)NULL)->msg + 64], two[256];
	int x, rows, i, top;

	tui_draw_clear(w, r, A_NORMAL);
	if (s == NULL) {
		tui_draw_text(w, r.y, r.x, r.w, tui_attr(TUI_COLOR_ERROR),
		    "no design search: D starts one");
		return;
	}
	x = tui_draw_text(w, r.y, r.x, r.w, tui_attr(TUI_COLOR_HEADER) |
	    A_BOLD, "Design search   ");
	tui_plan_state(s, line, sizeof line);
	tui_draw_text(w, r.y, r.x + x, r.w - x, tui_attr(TUI_COLOR_HINT), line);
	if (!s->joined || s->rc != PW_OK) {
		/* The planner reports no candidates before its end: the
		 * title has the best so far. */
		tui_draw_text(w, r.y + 2, r.x, r.w, A_NORMAL, s->joined ?
		    "no candidate fits" : "the candidates are listed when the "
		    "search ends (Esc ends it now)");
		return;
	}
	res = &s->result;
	tui_draw_text(w, r.y + 1, r.x, r.w, A_NORMAL, res->split_fixed ?
	    "split fixed (the problem's stages are given): schedule and "
	    "offload searched" : "split, layout, recomputation, offload and "
	    "schedule searched");
	cols = tui_plan_cols(res, r.w);
	if (cols.split < 6)
		return;
	snprintf(line, sizeof line, "  %-*s%-*s%-*s%-*s%-*s%-*s%-*s%*s",
	    cols.split, "split", cols.layout, "layout", cols.saving, "saving",
	    cols.schedule, "schedule", TUI_PLAN_STEP_W, "step",
	    TUI_PLAN_BUBBLE_W, "bubble", TUI_PLAN_PEAK_W, "peak/lim",
	    TUI_PLAN_GAP_W, "gap");
	tui_draw_text(w, r.y + 2, r.x, r.w, tui_attr(TUI_COLOR_LABEL) | A_BOLD,
	    line);
	rows = r.h - 5;
	top = (int)s->cursor >= rows ? (int)s->cursor - rows + 1 : 0;
	for (i = 0; i < rows && (size_t)(top + i) < res->ncand; i++) {
		tui_plan_row(&res->cand[top + i], &cols, line, sizeof line);
		if ((size_t)(top + i) == s->cursor)
			line[0] = '>';
		tui_draw_text(w, r.y + 3 + i, r.x, r.w, (size_t)(top + i) ==
		    s->cursor ? tui_attr(TUI_COLOR_SELECTED) | A_REVERSE :
		    A_NORMAL, line);
	}
	tui_plan_status(&res->cand[s->cursor], line, two, sizeof two);
	tui_draw_text(w, r.y + r.h - 2, r.x, r.w, A_BOLD, line);
	tui_draw_text(w, r.y + r.h - 1, r.x, r.w, A_BOLD, two);
}
