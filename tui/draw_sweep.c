/*
 * draw_sweep.c - the memory sweep's plot: step time or bubble rate (y,
 * "b" switches) against the memory limit (x, one column per limit of the
 * sweep's list, unlimited last), a glyph and a colour per series, the
 * feasible points only (a limit a schedule breaks is no point of its
 * curve), a combined mark where series share a cell, axes with units, a
 * legend, the progress, and the cursor's point with its numbers on the
 * status row.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* Columns of the y axis' labels ("123.4 ms"). */
#define TUI_SWEEP_YW	10

/* One glyph per series, ASCII so that a text capture reads the same in
 * every mode; the registry has fewer families than these.  None is
 * TUI_SWEEP_SHARED, the mark of a cell several series share. */
static const char tui_sweep_glyphs[] = "o+xs#@%&=$~^vnuwkyzq";
#define TUI_SWEEP_SHARED	'*'

static char
tui_sweep_glyph(size_t series)
{
	return tui_sweep_glyphs[series % (sizeof tui_sweep_glyphs - 1)];
}

static attr_t
tui_sweep_attr(size_t series)
{
	return tui_attr((enum tui_color)(TUI_COLOR_SERIES + series % 8));
}

/* The point (LIMIT, SERIES) when it is ready, built and within its
 * limit: a point of the plot. */
static const struct pw_sweep_point *
tui_sweep_plotted(const struct pw_sweep *sw, size_t limit, size_t series)
{
	const struct pw_sweep_point *pt = pw_sweep_get(sw, limit, series);

	return pt != NULL && pt->rc == PW_OK && pt->feasible ? pt : NULL;
}

/* The plot's geometry: its rows and columns on screen and its scale. */
struct tui_sweep_plot {
	bool	bubble;		/* y is the bubble rate, else the step time */
	int	top, rows;	/* the plot's rows (the x axis below) */
	int	x0, cols;	/* the columns after the y axis */
	double	ymin, ymax;	/* y at the bottom and top rows */
};

/* PT's y. */
static double
tui_sweep_y(const struct tui_sweep_plot *pl, const struct pw_sweep_point *pt)
{
	return pl->bubble ? pt->bubble_rate : pt->makespan;
}

/* Y with its unit ("72 s", "66.7%") into BUF, returned. */
static const char *
tui_sweep_fmt(const struct tui_sweep_plot *pl, double y, char *buf,
    size_t len)
{
	if (pl->bubble)
		snprintf(buf, len, "%.1f%%", 100 * y);
	else
		pw_fmt_seconds(buf, len, y);
	return buf;
}

static int
tui_sweep_col(const struct tui_sweep_plot *pl, const struct pw_sweep *sw,
    size_t limit)
{
	if (sw->nlimits < 2)
		return pl->x0 + pl->cols / 2;
	return pl->x0 + (int)lround((double)limit * (pl->cols - 1) /
	    (double)(sw->nlimits - 1));
}

static int
tui_sweep_row(const struct tui_sweep_plot *pl, double y)
{
	if (!(pl->ymax > pl->ymin))
		return pl->top + pl->rows / 2;
	return pl->top + (int)lround((pl->ymax - y) / (pl->ymax - pl->ymin) *
	    (pl->rows - 1));
}

/* The range of the plotted y. */
static void
tui_sweep_range(const struct pw_sweep *sw, struct tui_sweep_plot *pl)
{
	const struct pw_sweep_point *pt;
	size_t i, s;
	double y;

	pl->ymin = INFINITY;
	pl->ymax = -INFINITY;
	for (i = 0; i < sw->nlimits; i++)
		for (s = 0; s < sw->nseries; s++)
			if ((pt = tui_sweep_plotted(sw, i, s)) != NULL) {
				y = tui_sweep_y(pl, pt);
				if (y < pl->ymin)
					pl->ymin = y;
				if (y > pl->ymax)
					pl->ymax = y;
			}
}

/* The cell of SERIES' point at LIMIT: false when it is no point of the
 * plot. */
static bool
tui_sweep_cell(const struct tui_sweep_plot *pl, const struct pw_sweep *sw,
    size_t limit, size_t series, int *y, int *x)
{
	const struct pw_sweep_point *pt = tui_sweep_plotted(sw, limit, series);

	if (pt == NULL)
		return false;
	*y = tui_sweep_row(pl, tui_sweep_y(pl, pt));
	*x = tui_sweep_col(pl, sw, limit);
	return true;
}

/* How many series have a point in the cell Y, X. */
static int
tui_sweep_sharing(const struct tui_sweep_plot *pl, const struct pw_sweep *sw,
    int y, int x)
{
	size_t i, k;
	int n = 0, py, px;

	for (i = 0; i < sw->nlimits; i++)
		for (k = 0; k < sw->nseries; k++)
			n += tui_sweep_cell(pl, sw, i, k, &py, &px) &&
			    py == y && px == x;
	return n;
}

/* The axes: the y labels (top, middle, bottom), the rules, and each
 * limit's label where it does not overlap the one before. */
static void
tui_sweep_axes(WINDOW *w, const struct tui *d, const struct pw_sweep *sw,
    const struct tui_sweep_plot *pl, struct tui_rect r, size_t cursor)
{
	wchar_t h = tui_glyph(&d->glyphs, TUI_GLYPH_HLINE);
	wchar_t v = tui_glyph(&d->glyphs, TUI_GLYPH_VLINE);
	attr_t a = tui_attr(TUI_COLOR_RULER);
	const struct pw_sweep_point *pt;
	int y, x, col, len, next = r.x + r.w + 1;
	char label[32];
	size_t i;

	wattrset(w, a);
	for (y = pl->top; y < pl->top + pl->rows; y++)
		mvwaddnwstr(w, y, pl->x0 - 1, &v, 1);
	for (x = pl->x0 - 1; x < pl->x0 + pl->cols; x++)
		mvwaddnwstr(w, pl->top + pl->rows, x, &h, 1);
	wattrset(w, A_NORMAL);
	if (isfinite(pl->ymin)) {
		tui_draw_text(w, pl->top, r.x, TUI_SWEEP_YW - 1, a,
		    tui_sweep_fmt(pl, pl->ymax, label, sizeof label));
		if (pl->rows >= 3 && pl->ymax > pl->ymin)
			tui_draw_text(w, pl->top + (pl->rows - 1) / 2, r.x,
			    TUI_SWEEP_YW - 1, a, tui_sweep_fmt(pl,
			    (pl->ymax + pl->ymin) / 2, label, sizeof label));
		if (pl->ymax > pl->ymin)
			tui_draw_text(w, pl->top + pl->rows - 1, r.x,
			    TUI_SWEEP_YW - 1, a, tui_sweep_fmt(pl, pl->ymin,
			    label, sizeof label));
	}
	tui_draw_text(w, pl->top + pl->rows + 1, r.x, TUI_SWEEP_YW - 1, a,
	    "limit");
	/* Right to left, so that the unlimited case always has its label
	 * and a label that would overlap the one after it is left out. */
	for (i = sw->nlimits; i-- > 0;) {
		/* A default list's limits are known once a point has them. */
		if ((pt = pw_sweep_get(sw, i, 0)) == NULL)
			continue;
		if (isinf(pt->limit))
			snprintf(label, sizeof label, "none");
		else
			pw_fmt_bytes(label, sizeof label, pt->limit);
		len = (int)strlen(label);
		col = tui_sweep_col(pl, sw, i);
		if (col + len > r.x + r.w)
			col = r.x + r.w - len;
		if (col + len >= next)
			continue;
		tui_draw_text(w, pl->top + pl->rows + 1, col, len,
		    i == cursor ? a | A_REVERSE : a, label);
		next = col;
	}
}

/* The legend from row *Y: each series that has a schedule at some
 * limit, its glyph in its colour; the cursor's in bold. */
static void
tui_sweep_legend(WINDOW *w, const struct pw_sweep *sw, struct tui_rect r,
    int y, int rows, size_t cursor)
{
	int x = r.x, len, row = 0;
	char entry[64];
	size_t i, s;
	bool any;

	for (s = 0; s < sw->nseries; s++) {
		for (i = 0, any = false; i < sw->nlimits && !any; i++)
			any = tui_sweep_plotted(sw, i, s) != NULL;
		if (!any && s != cursor)
			continue;
		snprintf(entry, sizeof entry, "%c %s", tui_sweep_glyph(s),
		    pw_sweep_series_name(sw, s));
		len = (int)strlen(entry) + 2;
		if (x + len > r.x + r.w && x > r.x) {
			if (++row >= rows)
				return;
			x = r.x;
		}
		tui_draw_text(w, y + row, x, r.x + r.w - x, tui_sweep_attr(s) |
		    (s == cursor ? A_BOLD | A_UNDERLINE : 0), entry);
		x += len;
	}
}

/* The other series with a point in the cursor's cell, " (here too:
 * zb-h2, po)" into BUF (empty when none), returned. */
static const char *
tui_sweep_also(const struct tui_sweep *s, const struct tui_sweep_plot *pl,
    char *buf, size_t len)
{
	size_t i, k, used = 0;
	int y, x, py, px;

	buf[0] = '\0';
	if (!tui_sweep_cell(pl, s->sweep, s->limit, s->series, &y, &x))
		return buf;
	for (i = 0; i < s->sweep->nlimits; i++)
		for (k = 0; k < s->sweep->nseries && used < len; k++) {
			if ((i == s->limit && k == s->series) ||
			    !tui_sweep_cell(pl, s->sweep, i, k, &py, &px) ||
			    py != y || px != x)
				continue;
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
			    used == 0 ? " (here too: " : ", ",
			    pw_sweep_series_name(s->sweep, k));
		}
	if (used > 0 && used < len)
		snprintf(buf + used, len - used, ")");
	return buf;
}

/* Where the cursor's point PT is not the fastest that fits at its limit,
 * "; fastest that fits: zb-h2, 30 s" into BUF, returned; else empty. */
static const char *
tui_sweep_faster(const struct tui_sweep *s, const struct pw_sweep_point *pt,
    char *buf, size_t len)
{
	const struct pw_sweep_point *fastest;
	int k = pw_sweep_best(s->sweep, s->limit);
	char ms[32];

	buf[0] = '\0';
	if (k < 0 || (size_t)k == s->series)
		return buf;
	fastest = pw_sweep_get(s->sweep, s->limit, (size_t)k);
	if (pt->feasible && fastest->makespan >= pt->makespan)
		return buf;
	snprintf(buf, len, "; fastest that fits: %s, %s",
	    pw_sweep_series_name(s->sweep, (size_t)k),
	    pw_fmt_seconds(ms, sizeof ms, fastest->makespan));
	return buf;
}

/* The cursor's point, in words: the plotted y first, and the series
 * that share its cell before the numbers, which a narrow screen cuts. */
static void
tui_sweep_status(const struct tui_sweep *s, const struct tui_sweep_plot *pl,
    char *buf, size_t len)
{
	const struct pw_sweep_point *pt = pw_sweep_get(s->sweep, s->limit,
	    s->series);
	const char *name = pw_sweep_series_name(s->sweep, s->series);
	char lim[32], ms[32], peak[32], also[256], step[48], bubble[48];
	char faster[96];

	if (pt == NULL) {
		snprintf(buf, len, "%s: not computed yet", name);
		return;
	}
	if (isinf(pt->limit))
		snprintf(lim, sizeof lim, "no limit");
	else
		pw_fmt_bytes(lim, sizeof lim, pt->limit);
	if (pt->rc != PW_OK) {
		snprintf(buf, len, "%s, %s: %s", lim, name, pt->why);
		return;
	}
	snprintf(step, sizeof step, "step %s", pw_fmt_seconds(ms, sizeof ms,
	    pt->makespan));
	snprintf(bubble, sizeof bubble, "bubble %.1f%%", 100 * pt->bubble_rate);
	/* Enter loads the cursor's point, which the hint names: not the
	 * fastest that fits, named before it. */
	snprintf(buf, len, "%s, %s%s: %s, %s, peak %s (d%d), %s%s; Enter loads "
	    "%s", lim, name, tui_sweep_also(s, pl, also, sizeof also),
	    pl->bubble ? bubble : step, pl->bubble ? step : bubble,
	    pw_fmt_bytes(peak, sizeof peak, pt->peak), pt->peak_device,
	    pt->feasible ? "fits" : "over the limit",
	    tui_sweep_faster(s, pt, faster, sizeof faster), name);
}

void
tui_draw_sweep(WINDOW *w, struct tui *d, const struct tui_layout *l)
{
	struct tui_rect r = l->panel;
	const struct tui_sweep *s = d->sweep;
	struct tui_sweep_plot pl;
	char line[640];
	size_t i, k, done;
	int legend = 2, x, y, py, px;
	bool shared;

	tui_draw_clear(w, r, A_NORMAL);
	if (s == NULL) {
		tui_draw_text(w, r.y, r.x, r.w, tui_attr(TUI_COLOR_ERROR),
		    "no memory sweep: m starts one");
		return;
	}
	done = atomic_load(&s->sweep->done);
	x = tui_draw_text(w, r.y, r.x, r.w, tui_attr(TUI_COLOR_HEADER) |
	    A_BOLD, s->bubble ? "Memory sweep: bubble rate against memory "
	    "limit   " : "Memory sweep: step time against memory limit   ");
	if (done < s->sweep->total)
		snprintf(line, sizeof line, "sweep: %zu/%zu points%s", done,
		    s->sweep->total, atomic_load(&s->job.finished) && !s->complete ?
		    ", cancelled" : "");
	else
		snprintf(line, sizeof line, "sweep: %zu points", done);
	tui_draw_text(w, r.y, r.x + x, r.w - x, tui_attr(TUI_COLOR_HINT), line);

	/* Title, plot, x rule and labels, legend, status. */
	pl.bubble = s->bubble;
	pl.top = r.y + 1;
	pl.rows = r.h - 1 - 2 - legend - 1;
	pl.x0 = r.x + TUI_SWEEP_YW;
	pl.cols = r.w - TUI_SWEEP_YW - 1;
	if (pl.rows < 2 || pl.cols < 2)
		return;
	tui_sweep_range(s->sweep, &pl);
	tui_sweep_axes(w, d, s->sweep, &pl, r, s->limit);
	for (i = 0; i < s->sweep->nlimits; i++)
		for (k = 0; k < s->sweep->nseries; k++) {
			if (!tui_sweep_cell(&pl, s->sweep, i, k, &py, &px))
				continue;
			shared = tui_sweep_sharing(&pl, s->sweep, py, px) > 1;
			mvwaddch(w, py, px, shared ? (chtype)TUI_SWEEP_SHARED |
			    A_BOLD : (chtype)tui_sweep_glyph(k) |
			    tui_sweep_attr(k));
		}
	/* The cursor last, over whatever shares its cell. */
	if (tui_sweep_cell(&pl, s->sweep, s->limit, s->series, &py, &px)) {
		shared = tui_sweep_sharing(&pl, s->sweep, py, px) > 1;
		mvwaddch(w, py, px, (chtype)(shared ? TUI_SWEEP_SHARED :
		    tui_sweep_glyph(s->series)) | tui_attr(TUI_COLOR_SELECTED) |
		    A_REVERSE | A_BOLD);
	}
	y = pl.top + pl.rows + 2;
	tui_sweep_legend(w, s->sweep, r, y, legend, s->series);
	tui_sweep_status(s, &pl, line, sizeof line);
	tui_draw_text(w, r.y + r.h - 1, r.x, r.w, A_BOLD, line);
}
