/*
 * show.c - the text Gantt chart of pipewright show: plain ASCII, one row
 * per device (one per chunk on a device of several stages) and per channel
 * that carries transfers, kinds told apart by glyphs rather than colour,
 * each op's glyph alternating with its neighbour's so that boundaries
 * show, over the whole schedule or a window of it.
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

/* Indexed by enum pw_kind: an op's glyph, and its neighbour's, so that
 * the boundary between two ops shows even where both are one column. */
static const char show_glyph[PW_NKINDS] = { 'F', 'B', 'W', 'X', '>', '<' };
static const char show_other[PW_NKINDS] = { 'f', 'b', 'w', 'x', '}', '{' };

static const char *const show_legend[] = {
	"F forward", "B input gradient", "W weight gradient", "X fused B+W",
	"> offload", "< reload", ". idle", "digits: microbatch",
	"from op to op: F f B b W w X x > } < {",
};

/* Maps times to columns: column c covers the c-th of NCOLS equal parts
 * of [t0, t0 + span], the window shown; span 0 puts everything in
 * column 0.  BASE is where the window starts, from the schedule's start
 * (SCHED_T0), where the axis counts from. */
struct show_map {
	struct pw_view v;
	int	ncols;
	double	sched_t0;
	double	base;
};

/* One chart line: a row of pw_view_rows, or on a device of several
 * stages one line per chunk. */
struct show_line {
	char	label[48];
	const struct pw_view_row *row;
	int	chunk;		/* the chunk it draws, -1: every op */
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

/* True when OP is timed, takes time and overlaps the window, so that
 * it can own columns. */
static bool
show_visible(const struct show_map *m, const struct pw_problem *p,
    const struct pw_timing *t, struct pw_op op, double *start, double *end)
{
	return pw_view_times(p, t, op, start, end) && *end > *start &&
	    *end > m->v.t0 && *start < m->v.t0 + m->v.span;
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
 * with room for one glyph, the kind glyph (or, for every other op of the
 * line, its neighbour's glyph) in every other cell. */
static void
show_label(char *cells, int w, struct pw_op op, bool other)
{
	char num[16];
	int n;

	memset(cells, other ? show_other[op.kind] : show_glyph[op.kind],
	    (size_t)w);
	n = snprintf(num, sizeof num, "%d", op.mb);
	if (w > n)
		memcpy(cells, num, (size_t)n);
}

/*
 * Returns [ncols] owners for one row, the index in SEQ of the op drawn
 * in each column or -1, in an array the caller frees.  An op owns the
 * columns whose midpoints it covers, which is deterministic and never
 * lets two ops of a resource claim one column.  An op too short to cover
 * any midpoint then takes the column around its own midpoint, but only
 * when that column is idle or its owner keeps another column, so no op
 * ever erases a neighbour; ties go to the earlier op of the row.
 */
static int *
show_owners(const struct show_map *m, const struct pw_problem *p,
    const struct pw_timing *t, const struct pw_seq *seq)
{
	int *owner, *width;
	int c, i, j;
	double s, e, mid;

	owner = pw_xmalloc((size_t)m->ncols * sizeof *owner);
	for (c = 0; c < m->ncols; c++)
		owner[c] = -1;
	width = pw_xcalloc((size_t)seq->len, sizeof *width);
	for (i = 0; i < seq->len; i++) {
		if (!show_visible(m, p, t, seq->ops[i], &s, &e))
			continue;
		for (c = show_edge(m, s); c < show_edge(m, e); c++)
			show_own(owner, width, c, i);
	}
	for (i = 0; i < seq->len; i++) {
		if (width[i] > 0 || !show_visible(m, p, t, seq->ops[i], &s, &e))
			continue;
		/* Halves first: s + e may overflow. */
		mid = floor(pw_view_at(m->v.t0, m->v.span, s / 2 + e / 2) *
		    m->ncols);
		c = mid >= m->ncols ? m->ncols - 1 : (int)mid;
		j = owner[c];
		if (j < 0 || width[j] > 1)
			show_own(owner, width, c, i);
	}
	free(width);
	return owner;
}

/* Fills CELLS[ncols] for line L from its row's OWNER: '.' where the
 * resource is idle, blank where it runs another chunk's op. */
static void
show_draw(char *cells, int ncols, const int *owner, const struct show_line *l,
    const int *chunks)
{
	const struct pw_seq *seq = l->row->seq;
	bool other = false;
	int c, c1, i;

	for (c = 0; c < ncols; c = c1) {
		i = owner[c];
		for (c1 = c + 1; c1 < ncols && owner[c1] == i; c1++)
			continue;
		if (i < 0)
			memset(cells + c, '.', (size_t)(c1 - c));
		else if (l->chunk >= 0 && chunks[seq->ops[i].stage] != l->chunk)
			memset(cells + c, ' ', (size_t)(c1 - c));
		else {
			show_label(cells + c, c1 - c, seq->ops[i], other);
			other = !other;
		}
	}
}

/* A ruler with '+' at round times and, under it, the times of the ticks
 * whose labels fit without touching the previous one. */
static void
show_axis(FILE *fp, const struct show_map *m, int labelw)
{
	char *ruler, *labels, buf[64];
	int len = labelw + m->ncols + 2, pos, next = 0, k, n, nticks;
	double step, t, first;

	ruler = pw_xmalloc((size_t)len + 1);
	labels = pw_xmalloc((size_t)len + 1);
	memset(ruler, ' ', (size_t)len);
	memset(ruler + labelw + 1, '-', (size_t)m->ncols + 1);
	memset(labels, ' ', (size_t)len);
	nticks = pw_view_ticks(m->v.span, m->ncols / SHOW_TICK_GAP > 0 ?
	    m->ncols / SHOW_TICK_GAP : 1, &step);
	/* A window's ticks are the round times from the schedule's start
	 * that fall inside it. */
	first = m->base > 0 ? ceil(m->base / step * (1 - 1e-9)) : 0;
	for (k = 0; k < nticks; k++) {
		t = (first + k) * step;
		if (m->base > 0 && t > (m->base + m->v.span) * (1 + 1e-9))
			break;
		pos = labelw + 1 + show_column(m, pw_view_at(m->v.t0, m->v.span,
		    m->sched_t0 + t));
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

	title = pw_view_title(p, s, NULL);
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
		show_wrap_item(&w, "dev D cN: device D's ops of its chunk N "
		    "(blank: another chunk's)");
	fputc('\n', fp);
}

/* Returns the chart's lines (a device of several stages gets one per
 * chunk) in an array the caller frees; *N is its length. */
static struct show_line *
show_lines(const struct pw_problem *p, const struct pw_view_row *rows,
    int nrows, int *n)
{
	struct show_line *lines, *l;
	int *nchunks;
	int r, c, st, total = 0;

	nchunks = pw_xcalloc((size_t)p->devices, sizeof *nchunks);
	for (st = 0; st < p->nstages; st++)
		nchunks[p->stages[st].device]++;
	for (r = 0; r < nrows; r++)
		total += rows[r].device >= 0 && nchunks[rows[r].device] > 1 ?
		    nchunks[rows[r].device] : 1;
	lines = l = pw_xcalloc((size_t)total, sizeof *lines);
	for (r = 0; r < nrows; r++) {
		if (rows[r].device < 0 || nchunks[rows[r].device] < 2) {
			snprintf(l->label, sizeof l->label, "%s", rows[r].label);
			l->row = &rows[r];
			l->chunk = -1;
			l++;
			continue;
		}
		for (c = 0; c < nchunks[rows[r].device]; c++, l++) {
			snprintf(l->label, sizeof l->label, "%s c%d",
			    rows[r].label, c);
			l->row = &rows[r];
			l->chunk = c;
		}
	}
	free(nchunks);
	*n = total;
	return lines;
}

/* Checks [FROM, TO] (NAN: the schedule's start or end), seconds from the
 * schedule's start, against the schedule V and sets M's window to it. */
static int
show_window(struct show_map *m, const struct pw_view *v, double from,
    double to, struct pw_error *err)
{
	char b1[32], b2[32], b3[32];

	m->sched_t0 = v->t0;
	m->base = 0;
	m->v = *v;
	/* The whole chart whatever its span: no span or none finite draws
	 * too. */
	if (isnan(from) && isnan(to))
		return PW_OK;
	if (isnan(from))
		from = 0;
	if (isnan(to))
		to = v->span;
	if (!(from < to)) {
		pw_error_set(err, "the window's start %s is not before its end "
		    "%s", pw_fmt_seconds(b1, sizeof b1, from),
		    pw_fmt_seconds(b2, sizeof b2, to));
		return PW_ERR_INPUT;
	}
	if (!(from >= 0 && to <= v->span)) {
		pw_fmt_seconds(b2, sizeof b2, to);
		pw_fmt_seconds(b3, sizeof b3, v->span);
		/* An end just past the span reads as the span at four
		 * digits: then both in full. */
		if (to > v->span && strcmp(b2, b3) == 0) {
			snprintf(b2, sizeof b2, "%.*g s", pw_exact_precision(to),
			    to);
			snprintf(b3, sizeof b3, "%.*g s",
			    pw_exact_precision(v->span), v->span);
		}
		pw_error_set(err, "the window %s to %s reaches outside the "
		    "schedule, 0 s to %s", pw_fmt_seconds(b1, sizeof b1, from),
		    b2, b3);
		return PW_ERR_INPUT;
	}
	m->base = from;
	m->v.t0 = v->t0 + from;
	m->v.span = to - from;
	return PW_OK;
}

int
pw_show_window(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *mt, int width, double from, double to,
    struct pw_error *err)
{
	struct pw_view_row *rows;
	struct show_line *lines;
	struct pw_view v;
	struct show_map m;
	char *cells, b1[32], b2[32];
	int *chunks, *owner = NULL;
	int nrows, nlines, i, rc, labelw = 0;

	assert(mt->ndevices == p->devices);
	v = pw_view_of(mt);
	if ((rc = show_window(&m, &v, from, to, err)) != PW_OK)
		return rc;
	if (width < SHOW_MIN_WIDTH)
		width = SHOW_MIN_WIDTH;
	rows = pw_view_rows(p, s, &nrows);
	chunks = pw_view_chunks(p);
	lines = show_lines(p, rows, nrows, &nlines);
	for (i = 0; i < nlines; i++) {
		if ((int)strlen(lines[i].label) > labelw)
			labelw = (int)strlen(lines[i].label);
	}
	labelw++;
	m.ncols = width - labelw - 2;
	assert(m.ncols > 0);

	show_header(fp, p, s, mt, width);
	if (m.base > 0 || m.v.span < v.span)
		fprintf(fp, "window: %s to %s\n", pw_fmt_seconds(b1, sizeof b1,
		    m.base), pw_fmt_seconds(b2, sizeof b2, m.base + m.v.span));
	cells = pw_xmalloc((size_t)m.ncols + 1);
	cells[m.ncols] = '\0';
	for (i = 0; i < nlines; i++) {
		if (i == 0 || lines[i].row != lines[i - 1].row) {
			free(owner);
			owner = show_owners(&m, p, t, lines[i].row->seq);
		}
		show_draw(cells, m.ncols, owner, &lines[i], chunks);
		fprintf(fp, "%-*s|%s|\n", labelw, lines[i].label, cells);
	}
	show_axis(fp, &m, labelw);
	show_legend_print(fp, width, pw_view_interleaved(chunks, p->nstages));
	free(owner);
	free(cells);
	free(lines);
	free(chunks);
	free(rows);
	return PW_OK;
}

void
pw_show(FILE *fp, const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_timing *t, const struct pw_metrics *mt, int width)
{
	struct pw_error err;
	int rc;

	rc = pw_show_window(fp, p, s, t, mt, width, NAN, NAN, &err);
	assert(rc == PW_OK);
	(void)rc;
}
