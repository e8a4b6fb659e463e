/*
 * show.c - the text Gantt chart of pipewright show: plain ASCII, one row
 * per device and per channel that carries transfers, kinds told apart by
 * glyphs rather than colour.
 */
#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#define SHOW_MIN_WIDTH	40
#define SHOW_TICK_GAP	12	/* columns between time ticks, at least */

/* Indexed by enum pw_kind. */
static const char show_glyph[PW_NKINDS] = { 'F', 'B', 'W', 'X', '>', '<' };

static const char *const show_legend[] = {
	"F forward", "B input gradient", "W weight gradient", "X fused B+W",
	"> offload", "< reload", ". idle",
	"digits: microbatch",
};

/* Maps times to columns: column c covers the c-th of NCOLS equal parts
 * of [t0, t0 + span]; span 0 puts everything in column 0. */
struct show_map {
	struct pw_view v;
	int	ncols;
};

/* Comma-separated items wrapped at a width, continuation lines indented
 * under the first item (or less, after a long head); an item fits only
 * with room left for the comma that may follow it. */
struct show_wrap {
	FILE	*fp;
	int	width;
	int	indent;
	int	col;
	bool	first;
};

static void
show_wrap_begin(struct show_wrap *w, FILE *fp, int width, const char *head)
{
	w->fp = fp;
	w->width = width;
	w->col = (int)strlen(head);
	w->indent = w->col < width / 4 ? w->col : width / 4;
	w->first = true;
	fputs(head, fp);
}

static void __attribute__((format(printf, 2, 3)))
show_wrap_item(struct show_wrap *w, const char *fmt, ...)
{
	char item[256];
	va_list ap;
	int len;

	va_start(ap, fmt);
	vsnprintf(item, sizeof item, fmt, ap);
	va_end(ap);
	len = (int)strlen(item);

	if (!w->first && w->col + 2 + len + 1 > w->width) {
		fprintf(w->fp, ",\n%*s", w->indent, "");
		w->col = w->indent;
	} else if (!w->first) {
		fputs(", ", w->fp);
		w->col += 2;
	}
	fputs(item, w->fp);
	w->col += len;
	w->first = false;
}

/* The edge nearest to T, clamped to the chart. */
static int
show_column(const struct show_map *m, double at)
{
	return (int)floor(at * m->ncols + 0.5);
}

static int
show_edge(const struct show_map *m, double t)
{
	return show_column(m, pw_view_at(m->v.t0, m->v.span, t));
}

/* True when OP is timed and takes time, so that it can own columns. */
static bool
show_visible(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op, double *start, double *end)
{
	return pw_view_times(p, t, op, start, end) && *end > *start;
}

static void
show_own(int *owner, int *width, int c, int i)
{
	if (owner[c] >= 0)
		width[owner[c]]--;
	owner[c] = i;
	width[i]++;
}

/* Writes an op's run of W cells: its microbatch number first when it fits
 * with room for one glyph, the kind glyph in every other cell; lowercase
 * marks compute ops of a device's odd chunks. */
static void
show_label(char *cells, int w, struct pw_op op, const int *chunks)
{
	char glyph = show_glyph[op.kind], num[16];
	int n;

	if (!pw_kind_is_transfer(op.kind) && chunks[op.stage] % 2 == 1)
		glyph = (char)tolower((unsigned char)glyph);
	memset(cells, glyph, (size_t)w);
	n = snprintf(num, sizeof num, "%d", op.mb);
	if (w > n)
		memcpy(cells, num, (size_t)n);
}

/*
 * Fills CELLS[ncols] for one row.  An op owns the columns whose midpoints
 * it covers, which is deterministic and never lets two ops of a resource
 * claim one column.  An op too short to cover any midpoint then takes the
 * column around its own midpoint, but only when that column is idle or its
 * owner keeps another column, so no op ever erases a neighbour; ties go to
 * the earlier op of the row.
 */
static void
show_row(char *cells, const struct show_map *m, const struct pw_problem *p,
    const struct pw_timing *t, const struct pw_seq *seq, const int *chunks)
{
	int *owner, *width;
	int c, c1, i, j;
	double s, e, mid;

	owner = pw_xmalloc((size_t)m->ncols * sizeof *owner);
	for (c = 0; c < m->ncols; c++)
		owner[c] = -1;
	width = pw_xcalloc((size_t)seq->len, sizeof *width);
	for (i = 0; i < seq->len; i++) {
		if (!show_visible(p, t, seq->ops[i], &s, &e))
			continue;
		for (c = show_edge(m, s); c < show_edge(m, e); c++)
			show_own(owner, width, c, i);
	}
	for (i = 0; i < seq->len; i++) {
		if (width[i] > 0 || !show_visible(p, t, seq->ops[i], &s, &e))
			continue;
		/* Halves first: s + e may overflow. */
		mid = floor(pw_view_at(m->v.t0, m->v.span, s / 2 + e / 2) *
		    m->ncols);
		c = mid >= m->ncols ? m->ncols - 1 : (int)mid;
		j = owner[c];
		if (j < 0 || width[j] > 1)
			show_own(owner, width, c, i);
	}
	for (c = 0; c < m->ncols; c = c1) {
		i = owner[c];
		for (c1 = c + 1; c1 < m->ncols && owner[c1] == i; c1++)
			continue;
		if (i < 0)
			memset(cells + c, '.', (size_t)(c1 - c));
		else
			show_label(cells + c, c1 - c, seq->ops[i], chunks);
	}
	free(width);
	free(owner);
}

/* A ruler with '+' at round times and, under it, the times of the ticks
 * whose labels fit without touching the previous one. */
static void
show_axis(FILE *fp, const struct show_map *m, int labelw)
{
	char *ruler, *labels, buf[64];
	int len = labelw + m->ncols + 2, pos, next = 0, k, n, nticks;
	double step, t;

	ruler = pw_xmalloc((size_t)len + 1);
	labels = pw_xmalloc((size_t)len + 1);
	memset(ruler, ' ', (size_t)len);
	memset(ruler + labelw + 1, '-', (size_t)m->ncols + 1);
	memset(labels, ' ', (size_t)len);
	nticks = pw_view_ticks(m->v.span, m->ncols / SHOW_TICK_GAP > 0 ?
	    m->ncols / SHOW_TICK_GAP : 1, &step);
	for (k = 0; k < nticks; k++) {
		pos = labelw + 1 + show_column(m, pw_view_tick(&m->v, step, k,
		    &t));
		ruler[pos] = '+';
		pw_fmt_seconds(buf, sizeof buf, t);
		n = (int)strlen(buf);
		if (pos >= next && pos + n <= len) {
			memcpy(labels + pos, buf, (size_t)n);
			next = pos + n + 1;
		}
	}
	ruler[len] = labels[len] = '\0';
	for (pos = len; pos > 0 && labels[pos - 1] == ' '; pos--)
		labels[pos - 1] = '\0';
	fprintf(fp, "%s\n%s\n", ruler, labels);
	free(labels);
	free(ruler);
}

static void
show_header(FILE *fp, const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_metrics *mt, int width)
{
	struct show_wrap w;
	const struct pw_device_metrics *dm;
	char *title, *shown, *head, b1[32], b2[32];
	int d;

	title = pw_view_title(p, s);
	shown = pw_escape(title);
	head = pw_xasprintf("%s: ", shown);
	free(shown);
	show_wrap_begin(&w, fp, width, head);
	show_wrap_item(&w, "%d devices", p->devices);
	show_wrap_item(&w, "%d stages", p->nstages);
	show_wrap_item(&w, "%d microbatches", p->microbatches);
	fputc('\n', fp);
	free(head);
	free(title);
	show_wrap_begin(&w, fp, width, "");
	show_wrap_item(&w, "makespan %s",
	    pw_fmt_seconds(b1, sizeof b1, mt->makespan));
	show_wrap_item(&w, "bubble rate %.2f%%", 100 * mt->bubble_rate);
	show_wrap_item(&w, "total idle %s",
	    pw_fmt_seconds(b1, sizeof b1, mt->total_idle));
	fputc('\n', fp);
	show_wrap_begin(&w, fp, width, "peak: ");
	for (d = 0; d < mt->ndevices; d++) {
		dm = &mt->device[d];
		pw_fmt_bytes(b1, sizeof b1, dm->peak);
		if (isinf(p->memory[d].limit))
			show_wrap_item(&w, "dev %d %s", d, b1);
		else
			show_wrap_item(&w, "dev %d %s (limit %s%s)", d, b1,
			    pw_fmt_bytes(b2, sizeof b2, p->memory[d].limit),
			    dm->within_limit ? "" : ", OVER");
	}
	fputc('\n', fp);
}

static void
show_legend_print(FILE *fp, int width, bool interleaved)
{
	struct show_wrap w;
	size_t i;

	show_wrap_begin(&w, fp, width, "legend: ");
	for (i = 0; i < sizeof show_legend / sizeof show_legend[0]; i++)
		show_wrap_item(&w, "%s", show_legend[i]);
	if (interleaved)
		show_wrap_item(&w, "lowercase: odd chunks");
	fputc('\n', fp);
}

void
pw_show(FILE *fp, const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_timing *t, const struct pw_metrics *mt, int width)
{
	struct pw_view_row *rows;
	struct show_map m;
	char *cells;
	int *chunks;
	int nrows, r, labelw = 0;

	assert(mt->ndevices == p->devices);
	if (width < SHOW_MIN_WIDTH)
		width = SHOW_MIN_WIDTH;
	rows = pw_view_rows(p, s, &nrows);
	chunks = pw_view_chunks(p);
	for (r = 0; r < nrows; r++) {
		if ((int)strlen(rows[r].label) > labelw)
			labelw = (int)strlen(rows[r].label);
	}
	labelw++;
	m.ncols = width - labelw - 2;
	assert(m.ncols > 0);
	m.v = pw_view_of(mt);

	show_header(fp, p, s, mt, width);
	cells = pw_xmalloc((size_t)m.ncols + 1);
	cells[m.ncols] = '\0';
	for (r = 0; r < nrows; r++) {
		show_row(cells, &m, p, t, rows[r].seq, chunks);
		fprintf(fp, "%-*s|%s|\n", labelw, rows[r].label, cells);
	}
	show_axis(fp, &m, labelw);
	show_legend_print(fp, width, pw_view_interleaved(chunks, p->nstages));
	free(cells);
	free(chunks);
	free(rows);
}
