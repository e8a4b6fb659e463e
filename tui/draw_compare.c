/*
 * draw_compare.c - the compare view: the two slots' schedules one above
 * the other on one time axis (the longer fits the width), each under a
 * title with its source and metrics, then their differences: makespan,
 * bubble rate, total idle and each device's peak.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* Columns of the difference table's label and of each of its values. */
#define TUI_CMP_LABEL_W	14
#define TUI_CMP_VALUE_W	18

static const char *const tui_cmp_slot[2] = { "top", "bottom" };

/* Slot SLOT's title row at Y: the focus mark, the source, then its
 * metrics or why it has no schedule. */
static void
tui_cmp_title(WINDOW *w, const struct tui *d, int slot, int y,
    struct tui_rect r)
{
	const struct pw_plan *plan = d->compare.plan[slot];
	const struct pw_metrics *m;
	char name[320], line[640], ms[32], idle[32], peak[32];
	const char *mark = d->compare.focus != slot ? "  " :
	    d->glyphs.ascii ? "> " : "\xe2\x96\xb6 ";
	attr_t a = tui_attr(TUI_COLOR_HEADER) | A_BOLD;
	int x, k;

	tui_compare_name(d, slot, name, sizeof name);
	if (plan == NULL) {
		snprintf(line, sizeof line, "%s%s: %s: ", mark,
		    tui_cmp_slot[slot], name);
		x = tui_draw_text(w, y, r.x, r.w, a, line);
		tui_draw_text(w, y, r.x + x, r.w - x, tui_attr(TUI_COLOR_ERROR),
		    d->compare.why[slot] != NULL ? d->compare.why[slot] :
		    "no schedule");
		return;
	}
	m = pw_plan_metrics(plan);
	k = pw_metrics_peak_device(m);
	snprintf(line, sizeof line, "%s%s: %s: %s, bubble %.1f%%, idle %s, "
	    "peak %s (d%d)%s", mark, tui_cmp_slot[slot], name,
	    pw_fmt_seconds(ms, sizeof ms, m->makespan), 100 * m->bubble_rate,
	    pw_fmt_seconds(idle, sizeof idle, m->total_idle),
	    pw_fmt_bytes(peak, sizeof peak, m->device[k].peak), k,
	    m->feasible ? "" : ", over its limit");
	tui_draw_text(w, y, r.x, r.w, a, line);
}

/* A difference as text: "+1.5 ms", "-2 GiB", "0 s" (FMT the unit's
 * pw_fmt_seconds or pw_fmt_bytes). */
static const char *
tui_cmp_signed(char *buf, size_t len, double diff,
    char *(*fmt)(char *, size_t, double))
{
	char v[32];

	fmt(v, sizeof v, diff);
	snprintf(buf, len, "%s%s", diff > 0 ? "+" : "", v);
	return buf;
}

/* One row of the table at Y: LABEL, the two values and the difference
 * (NULL: "-"). */
static void
tui_cmp_row(WINDOW *w, int y, struct tui_rect r, attr_t a, const char *label,
    const char *top, const char *bottom, const char *diff)
{
	const char *cell[3] = { top, bottom, diff };
	int k, x = r.x + TUI_CMP_LABEL_W;

	tui_draw_text(w, y, r.x, TUI_CMP_LABEL_W, a, label);
	for (k = 0; k < 3 && x < r.x + r.w; k++, x += TUI_CMP_VALUE_W)
		tui_draw_text(w, y, x, r.x + r.w - x, a,
		    cell[k] != NULL ? cell[k] : "-");
}

/* The makespan, bubble and idle rows from Y. */
static void
tui_cmp_metrics(WINDOW *w, const struct tui *d, int y, struct tui_rect r)
{
	const struct pw_metrics *m[2] = { NULL, NULL };
	char v[3][3][40];
	double diff;
	bool both;
	int k;

	for (k = 0; k < 2; k++)
		if (d->compare.plan[k] != NULL)
			m[k] = pw_plan_metrics(d->compare.plan[k]);
	both = m[0] != NULL && m[1] != NULL;
	for (k = 0; k < 2; k++) {
		if (m[k] == NULL)
			continue;
		pw_fmt_seconds(v[0][k], sizeof v[0][k], m[k]->makespan);
		snprintf(v[1][k], sizeof v[1][k], "%.1f%%",
		    100 * m[k]->bubble_rate);
		pw_fmt_seconds(v[2][k], sizeof v[2][k], m[k]->total_idle);
	}
	if (both) {
		tui_cmp_signed(v[0][2], sizeof v[0][2], m[1]->makespan -
		    m[0]->makespan, pw_fmt_seconds);
		diff = 100 * (m[1]->bubble_rate - m[0]->bubble_rate);
		snprintf(v[1][2], sizeof v[1][2], fabs(diff) < 0.05 ?
		    "0.0 pp" : "%+.1f pp", diff);
		tui_cmp_signed(v[2][2], sizeof v[2][2], m[1]->total_idle -
		    m[0]->total_idle, pw_fmt_seconds);
	}
	tui_cmp_row(w, y, r, tui_attr(TUI_COLOR_LABEL) | A_BOLD, "",
	    tui_cmp_slot[0], tui_cmp_slot[1], "bottom - top");
	tui_cmp_row(w, y + 1, r, A_NORMAL, "makespan", m[0] ? v[0][0] : NULL,
	    m[1] ? v[0][1] : NULL, both ? v[0][2] : NULL);
	tui_cmp_row(w, y + 2, r, A_NORMAL, "bubble rate", m[0] ? v[1][0] : NULL,
	    m[1] ? v[1][1] : NULL, both ? v[1][2] : NULL);
	tui_cmp_row(w, y + 3, r, A_NORMAL, "total idle", m[0] ? v[2][0] : NULL,
	    m[1] ? v[2][1] : NULL, both ? v[2][2] : NULL);
}

/* Device K's peak entry: "d3 6 GiB -> 5 GiB (-1 GiB)". */
static void
tui_cmp_peak_entry(const struct tui *d, int k, char *buf, size_t len)
{
	const struct pw_plan *plan;
	const struct pw_metrics *m;
	double peak[2] = { NAN, NAN };
	char v[2][32], diff[40];
	int s;

	for (s = 0; s < 2; s++) {
		if ((plan = d->compare.plan[s]) == NULL)
			continue;
		m = pw_plan_metrics(plan);
		if (k < m->ndevices)
			peak[s] = m->device[k].peak;
	}
	for (s = 0; s < 2; s++)
		if (isnan(peak[s]))
			snprintf(v[s], sizeof v[s], "-");
		else
			pw_fmt_bytes(v[s], sizeof v[s], peak[s]);
	if (isnan(peak[0]) || isnan(peak[1]))
		snprintf(diff, sizeof diff, "-");
	else
		tui_cmp_signed(diff, sizeof diff, peak[1] - peak[0],
		    pw_fmt_bytes);
	snprintf(buf, len, "d%d %s %s %s (%s)", k, v[0],
	    d->glyphs.ascii ? "->" : "\xe2\x86\x92", v[1], diff);
}

/* The compute lanes slot SLOT has: one per device. */
static int
tui_cmp_lanes(const struct tui *d, int slot)
{
	return d->compare.plan[slot] != NULL ?
	    pw_plan_problem(d->compare.plan[slot])->devices : 0;
}

/* The devices of the slot that has more. */
static int
tui_cmp_devices(const struct tui *d)
{
	int a = tui_cmp_lanes(d, 0), b = tui_cmp_lanes(d, 1);

	return a > b ? a : b;
}

/* The columns S takes: its UTF-8 characters (each of the table's is one
 * column wide). */
static int
tui_cmp_columns(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The peak entries per row (as many as the widest fits) and the rows
 * all devices take. */
static int
tui_cmp_peak_rows(const struct tui *d, struct tui_rect r, int *per_row,
    int *col_w)
{
	int n = tui_cmp_devices(d), k, w, widest = 1;
	char entry[160];

	for (k = 0; k < n; k++) {
		tui_cmp_peak_entry(d, k, entry, sizeof entry);
		if ((w = tui_cmp_columns(entry) + 2) > widest)
			widest = w;
	}
	*per_row = (r.w - TUI_CMP_LABEL_W) / widest;
	if (*per_row < 1)
		*per_row = 1;
	*col_w = widest;
	return n == 0 ? 0 : (n + *per_row - 1) / *per_row;
}

/* The peak rows from Y, ROWS of them; a last entry says how many devices
 * did not fit. */
static void
tui_cmp_peaks(WINDOW *w, const struct tui *d, int y, int rows, int per_row,
    int col_w, struct tui_rect r)
{
	int n = tui_cmp_devices(d), k, x;
	char entry[160];

	for (k = 0; k < n && k / per_row < rows; k++) {
		x = r.x + TUI_CMP_LABEL_W + (k % per_row) * col_w;
		if (k % per_row == 0)
			tui_draw_text(w, y + k / per_row, r.x, TUI_CMP_LABEL_W,
			    A_NORMAL, k == 0 ? "peak" : "");
		if (k + 1 == rows * per_row && k + 1 < n)
			snprintf(entry, sizeof entry, "%d more devices",
			    n - k);
		else
			tui_cmp_peak_entry(d, k, entry, sizeof entry);
		tui_draw_text(w, y + k / per_row, x, r.x + r.w - x, A_NORMAL,
		    entry);
	}
}

static int
tui_cmp_min(int a, int b)
{
	return a < b ? a : b;
}

/* The time window both slots fit in: from the earlier start to the
 * later end. */
static struct tui_view
tui_cmp_view(const struct tui *d)
{
	struct tui_view v = { .t0 = INFINITY, .span = 0, .top = d->view.top };
	const struct pw_metrics *m;
	double end = -INFINITY;
	int s;

	for (s = 0; s < 2; s++) {
		if (d->compare.plan[s] == NULL)
			continue;
		m = pw_plan_metrics(d->compare.plan[s]);
		if (m->start < v.t0)
			v.t0 = m->start;
		if (m->start + m->makespan > end)
			end = m->start + m->makespan;
	}
	if (isfinite(v.t0))
		v.span = end - v.t0;
	return v;
}

void
tui_draw_compare(WINDOW *w, struct tui *d, const struct tui_layout *l)
{
	struct tui_rect r = l->panel, lane;
	struct tui_view v = tui_cmp_view(d);
	int per_row, col_w, peak_rows, table_h, avail, n[2], y, s;

	tui_draw_clear(w, r, A_NORMAL);
	peak_rows = tui_cmp_peak_rows(d, r, &per_row, &col_w);
	/* The ruler, two titles, the table's four rows and one of peaks
	 * come first; the lanes share what is left (the bottom takes what
	 * the top leaves), then more peaks. */
	avail = r.h - 3 - 4 - (peak_rows > 0 ? 1 : 0);
	if (avail < 0)
		avail = 0;
	n[0] = tui_cmp_min(tui_cmp_lanes(d, 0), avail / 2);
	n[1] = tui_cmp_min(tui_cmp_lanes(d, 1), avail - n[0]);
	table_h = r.h - 3 - n[0] - n[1];
	if (peak_rows > table_h - 4)
		peak_rows = table_h - 4;

	y = r.y;
	if (v.span > 0)
		tui_draw_ruler(w, &v, (struct tui_rect){ y, r.x, 1, r.w },
		    l->label_w);
	y++;
	for (s = 0; s < 2; s++) {
		tui_cmp_title(w, d, s, y++, r);
		lane = (struct tui_rect){ y, r.x, n[s], r.w };
		if (d->compare.plan[s] != NULL && n[s] > 0 && v.span > 0)
			tui_draw_lanes(w, d, d->compare.plan[s], &v, lane,
			    l->label_w, true);
		y += n[s];
	}
	if (y + 4 > r.y + r.h)
		return;
	tui_cmp_metrics(w, d, y, r);
	if (peak_rows > 0)
		tui_cmp_peaks(w, d, y + 4, peak_rows, per_row, col_w, r);
}
