/*
 * export_svg.c - a standalone SVG: a Gantt chart with a row per device and
 * per channel, a time axis, and under it each device's memory curve
 * against its limit, all on one time scale.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#define SVG_WIDTH	1200	/* the default width */
#define SVG_LEFT	150	/* room for row labels */
#define SVG_RIGHT	30
#define SVG_TOP		92	/* the lanes' top under one line of keys */
#define SVG_KEY_W	140	/* a key's width */
#define SVG_KEY_H	18	/* another line of keys */
#define SVG_ROW_H	20	/* the default sizes, scaled for --height */
#define SVG_ROW_PITCH	24
#define SVG_AXIS_H	26	/* the time axis and its labels */
#define SVG_MEM_HEAD	36	/* the memory heading above the plots */
#define SVG_MEM_H	56
#define SVG_MEM_PAD	6	/* headroom above the largest value */
#define SVG_MEM_PITCH	76
#define SVG_MIN_ROW	4	/* the thinnest lane --height may make */
#define SVG_TICK_GAP	80	/* pixels between time ticks, at least */
#define SVG_MEM_TICK	14	/* pixels between memory ticks, at least */
#define SVG_DIGIT_W	7	/* width of a digit at the label size */
#define SVG_TEXT_PX	11	/* the text's font size (svg_style) */
#define SVG_TITLE_PX	16	/* the title's */
#define SVG_CHAR_EM	0.6	/* a character's width, of its font size,
				   generously */
#define SVG_MIN_PX	5	/* the least a squeezed label shrinks to */
#define SVG_WIDE	3	/* an op this wide (pixels) is drawn alone */
#define SVG_PURE	0.75	/* share of a column's busy time one kind
				   needs to colour it; else it is "busy" */

/* Fill colours by kind; light enough that black numbers read on them. */
static const char svg_style[] =
    "text{font-family:sans-serif;font-size:11px;fill:#222}\n"
    ".title{font-size:16px;font-weight:bold}\n"
    ".end{text-anchor:end}.mid{text-anchor:middle}\n"
    ".mb{font-size:10px;text-anchor:middle}\n"
    ".lane{fill:#f2f2f2}.frame{fill:#fafafa;stroke:#bbb}\n"
    ".op{stroke:#fff;stroke-width:0.5}.odd{fill-opacity:0.55}\n"
    ".F{fill:#8cb3e0}.B{fill:#f7b267}.W{fill:#8fd18a}.BW{fill:#c9a0dc}\n"
    ".OFFLOAD{fill:#7fd1cc}.RELOAD{fill:#f2dc6b}\n"
    ".busy{fill:#9aa3b5}\n"
    ".axis{stroke:#444}.grid,.level{stroke:#ddd}\n"
    ".tick{font-size:9px;text-anchor:end}.lim{font-size:9px;fill:#555}\n"
    ".limit{stroke:#555;stroke-dasharray:6 4}\n"
    ".mem{fill:none;stroke:#1f77b4;stroke-width:1.5}.over{stroke:#d62728}\n"
    "text.bad{fill:#d62728}\n";

static const char *const svg_key[PW_NKINDS] = {
	"F forward", "B input gradient", "W weight gradient", "BW fused B+W",
	"OFFLOAD to host", "RELOAD from host",
};

/* The picture's geometry, the time scale shared by the chart and the
 * memory plots, and the byte scale the memory plots share. */
struct svg_map {
	struct pw_view v;	/* the time across the plot */
	double	ymax;		/* bytes at the top of a memory plot */
	int	width;		/* of the picture */
	int	plot;		/* of the time axis */
	int	keys;		/* keys a line */
	double	top;		/* of the first lane */
	double	row_h, row_pitch, mem_h, mem_pitch;
};

static double
svg_x(const struct svg_map *m, double t)
{
	return SVG_LEFT + pw_view_at(m->v.t0, m->v.span, t) * m->plot;
}

/* The y of BYTES in the memory plot whose bottom is at BOTTOM. */
static double
svg_y(const struct svg_map *m, double bottom, double bytes)
{
	return bottom - pw_view_at(0, m->ymax, bytes) *
	    (m->mem_h - SVG_MEM_PAD * m->mem_h / SVG_MEM_H);
}

/*
 * Lays out NROWS lanes and NDEV memory plots at O's size: the default pitches,
 * or, for a given height, the lanes and plots scaled to fill it.  PW_ERR_INPUT
 * when the height leaves a lane thinner than SVG_MIN_ROW pixels.
 */
static int
svg_layout(struct svg_map *m, const struct pw_export_options *o, int nrows,
    int ndev, int *height, struct pw_error *err)
{
	/* The gaps between memory plots keep room for their labels. */
	double fixed, k = 1, per = nrows * SVG_ROW_PITCH + ndev * SVG_MEM_H;
	int lines;

	m->width = o->width != 0 ? o->width : SVG_WIDTH;
	m->plot = m->width - SVG_LEFT - SVG_RIGHT;
	m->keys = m->plot / SVG_KEY_W > 1 ? m->plot / SVG_KEY_W : 1;
	lines = (PW_NKINDS + 1 + m->keys - 1) / m->keys;
	m->top = SVG_TOP + (lines - 1) * SVG_KEY_H;
	fixed = m->top + SVG_AXIS_H + SVG_MEM_HEAD + ndev * (SVG_MEM_PITCH -
	    SVG_MEM_H);
	if (o->height != 0) {
		k = (o->height - fixed) / per;
		if (!(k * SVG_ROW_H >= SVG_MIN_ROW)) {
			pw_error_set(err, "svg: --height %d is too small for "
			    "%d lanes and %d memory plots: at least %d",
			    o->height, nrows, ndev, (int)ceil(fixed + per *
			    SVG_MIN_ROW / SVG_ROW_H));
			return PW_ERR_INPUT;
		}
	}
	m->row_h = SVG_ROW_H * k;
	m->row_pitch = SVG_ROW_PITCH * k;
	m->mem_h = SVG_MEM_H * k;
	m->mem_pitch = SVG_MEM_H * k + SVG_MEM_PITCH - SVG_MEM_H;
	*height = o->height != 0 ? o->height :
	    (int)ceil(fixed + per);
	return PW_OK;
}

/* Writes TEXT, UTF-8, as XML character data; what XML 1.0 cannot carry,
 * control characters and the noncharacters U+FFFE and U+FFFF, becomes
 * '?'. */
static void
svg_escape(FILE *fp, const char *text)
{
	for (; *text != '\0'; text++) {
		if (memcmp(text, "\xef\xbf", 2) == 0 &&
		    (text[2] == '\xbe' || text[2] == '\xbf')) {
			fputc('?', fp);
			text += 2;
			continue;
		}
		switch (*text) {
		case '&':
			fputs("&amp;", fp);
			break;
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		case '\'':
			fputs("&#39;", fp);
			break;
		default:
			if ((unsigned char)*text < 0x20 && *text != '\t' &&
			    *text != '\n')
				fputc('?', fp);
			else
				fputc(*text, fp);
		}
	}
}

/* TEXT at X, Y in class CLS (NULL: plain text), whose font is PX
 * pixels.  Where ROOM > 0 and TEXT would be wider, its font shrinks to
 * fit ROOM pixels (down to SVG_MIN_PX): on a narrow picture a label
 * would otherwise run over its neighbour or off the edge.  A smaller
 * font, not textLength, which rsvg-convert 2.54 ignores. */
static void
svg_text_fit(FILE *fp, double x, double y, const char *cls, const char *text,
    double room, double px)
{
	const char *c;
	size_t chars = 0;

	fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\"", x, y);
	if (cls != NULL)
		fprintf(fp, " class=\"%s\"", cls);
	for (c = text; *c != '\0'; c++)
		chars += ((unsigned char)*c & 0xc0) != 0x80;
	if (room > 0 && chars * SVG_CHAR_EM * px > room)
		fprintf(fp, " style=\"font-size:%.1fpx\"", fmax(SVG_MIN_PX,
		    room / (chars * SVG_CHAR_EM)));
	fputc('>', fp);
	svg_escape(fp, text);
	fputs("</text>\n", fp);
}

static void
svg_text(FILE *fp, double x, double y, const char *cls, const char *text)
{
	svg_text_fit(fp, x, y, cls, text, 0, SVG_TEXT_PX);
}

static void
svg_header(FILE *fp, const struct svg_map *m, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_metrics *mt,
    const char *timeline, bool interleaved)
{
	char *title, *line, b1[32], b2[32], counts[96];
	double x, y;
	int k;

	title = pw_view_title(p, s, timeline);
	svg_text_fit(fp, SVG_LEFT, 26, "title", title, m->plot + SVG_RIGHT,
	    SVG_TITLE_PX);
	line = pw_xasprintf("makespan %s, bubble rate %.2f%%, total idle %s; "
	    "%s%s", pw_fmt_seconds(b1, sizeof b1, mt->makespan),
	    100 * mt->bubble_rate, pw_fmt_seconds(b2, sizeof b2,
	    mt->total_idle), pw_problem_counts(p, counts, sizeof counts),
	    mt->feasible ? "" : "; over a memory limit");
	svg_text_fit(fp, SVG_LEFT, 46, mt->feasible ? NULL : "bad", line,
	    m->plot + SVG_RIGHT, SVG_TEXT_PX);
	/* The kinds, then the merged columns' colour, then the chunks. */
	for (k = 0; k <= PW_NKINDS; k++) {
		x = SVG_LEFT + SVG_KEY_W * (k % m->keys);
		y = 58 + SVG_KEY_H * (k / m->keys);
		fprintf(fp, "<rect class=\"key %s\" x=\"%.0f\" y=\"%.0f\" "
		    "width=\"12\" height=\"12\"/>\n", k < PW_NKINDS ?
		    pw_kind_name((enum pw_kind)k) : "busy", x, y);
		svg_text(fp, x + 16, y + 10, NULL, k < PW_NKINDS ?
		    svg_key[k] : "mixed kinds");
	}
	if (interleaved)
		svg_text(fp, SVG_LEFT, m->top - 8, NULL,
		    "lighter: odd chunks");
	free(line);
	free(title);
}

static void
svg_op(FILE *fp, const struct svg_map *m, double y, struct pw_op op,
    double start, double end, const int *chunks)
{
	char name[64], b1[32], b2[32], num[16];
	double x = svg_x(m, start), w = svg_x(m, end) - x;
	int n;

	fprintf(fp, "<rect class=\"op %s%s\" x=\"%.2f\" y=\"%.2f\" "
	    "width=\"%.2f\" height=\"%.2f\"><title>%s %s to %s</title>"
	    "</rect>\n", pw_kind_name(op.kind),
	    !pw_kind_is_transfer(op.kind) && chunks[op.stage] % 2 == 1 ?
	    " odd" : "", x, y, w, m->row_h,
	    pw_op_name(name, sizeof name, op),
	    pw_fmt_seconds(b1, sizeof b1, start),
	    pw_fmt_seconds(b2, sizeof b2, end));
	n = snprintf(num, sizeof num, "%d", op.mb);
	if (w >= SVG_DIGIT_W * n + 4 && m->row_h >= 14)
		svg_text(fp, x + w / 2, y + m->row_h / 2 + 4, "mb", num);
}

/* Adds the part of [X0, X1) inside each pixel column to COVER, NKINDS
 * pixels of the plot a kind each, under KIND. */
static void
svg_cover(double *cover, int plot, enum pw_kind kind, double x0, double x1)
{
	int c;

	x0 -= SVG_LEFT;
	x1 -= SVG_LEFT;
	for (c = (int)floor(x0); c < plot && c < x1; c++) {
		if (c >= 0)
			cover[(size_t)c * PW_NKINDS + kind] +=
			    fmin(x1, c + 1) - fmax(x0, c);
	}
}

/* The class of column C of COVER: "" when it is idle for at least half
 * a pixel, a kind's name when that kind has SVG_PURE of its busy time,
 * else "busy". */
static const char *
svg_column(const double *cover, int c)
{
	const double *col = cover + (size_t)c * PW_NKINDS;
	double sum = 0, most = 0;
	int k, best = 0;

	for (k = 0; k < PW_NKINDS; k++) {
		sum += col[k];
		if (col[k] > most) {
			most = col[k];
			best = k;
		}
	}
	if (sum < 0.5)
		return "";
	return most >= SVG_PURE * sum ? pw_kind_name((enum pw_kind)best) :
	    "busy";
}

/*
 * One lane: ops at least SVG_WIDE pixels wide alone, with their border
 * and tooltip; the narrower ones as whole pixel columns, a run of columns
 * of one class a rect, so that thousands of thin ops read as solid bars
 * of their kind (no border to wash them out) and cost a rect a run.
 */
static void
svg_lane(FILE *fp, const struct svg_map *m, const struct pw_problem *p,
    const struct pw_timing *t, const struct pw_seq *seq, double y,
    const int *chunks, double *cover)
{
	const char *cls, *run = "";
	double start, end;
	struct pw_op op;
	int i, c, from = 0;

	memset(cover, 0, (size_t)m->plot * PW_NKINDS * sizeof *cover);
	for (i = 0; i < seq->len; i++) {
		op = seq->ops[i];
		if (!pw_view_times(p, t, op, &start, &end))
			continue;
		if (svg_x(m, end) - svg_x(m, start) >= SVG_WIDE)
			svg_op(fp, m, y, op, start, end, chunks);
		else
			svg_cover(cover, m->plot, op.kind, svg_x(m, start),
			    svg_x(m, end));
	}
	for (c = 0; c <= m->plot; c++) {
		cls = c < m->plot ? svg_column(cover, c) : "";
		if (strcmp(cls, run) == 0)
			continue;
		if (run[0] != '\0')
			fprintf(fp, "<rect class=\"%s\" x=\"%d\" y=\"%.2f\" "
			    "width=\"%d\" height=\"%.2f\"/>\n", run,
			    SVG_LEFT + from, y, c - from, m->row_h);
		run = cls;
		from = c;
	}
}

/* Draws the lanes, the time axis with its grid, then the ops over them. */
static void
svg_gantt(FILE *fp, const struct svg_map *m, const struct pw_problem *p,
    const struct pw_timing *t, const struct pw_view_row *rows, int nrows,
    const int *chunks)
{
	double axis = m->top + nrows * m->row_pitch + 2;
	double y, step, x, when, *cover;
	char buf[64], name[32];
	int r, k, nticks;

	for (r = 0; r < nrows; r++) {
		y = m->top + r * m->row_pitch;
		fprintf(fp, "<rect class=\"lane\" x=\"%d\" y=\"%.2f\" "
		    "width=\"%d\" height=\"%.2f\"/>\n", SVG_LEFT, y, m->plot,
		    m->row_h);
		if (rows[r].channel >= 0)
			snprintf(buf, sizeof buf, "%s %s", rows[r].label,
			    pw_view_link_devices(p, rows[r].channel, name,
			    sizeof name));
		svg_text(fp, SVG_LEFT - 8, y + m->row_h / 2 + 4, "end",
		    rows[r].channel >= 0 ? buf : rows[r].label);
	}
	fprintf(fp, "<line class=\"axis\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" "
	    "y2=\"%.2f\"/>\n", SVG_LEFT, axis, SVG_LEFT + m->plot, axis);
	nticks = pw_view_ticks(m->v.span, m->plot / SVG_TICK_GAP > 1 ?
	    m->plot / SVG_TICK_GAP : 1, &step);
	for (k = 0; k < nticks; k++) {
		x = SVG_LEFT + pw_view_tick(&m->v, step, k, &when) * m->plot;
		fprintf(fp, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, m->top - 2, x, axis);
		fprintf(fp, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, axis, x, axis + 5);
		svg_text(fp, x, axis + 18, "mid",
		    pw_fmt_seconds(buf, sizeof buf, when));
	}
	cover = pw_xcalloc((size_t)m->plot * PW_NKINDS, sizeof *cover);
	for (r = 0; r < nrows; r++)
		svg_lane(fp, m, p, t, rows[r].seq, m->top + r * m->row_pitch,
		    chunks, cover);
	free(cover);
}

/* The y axis of a memory plot from TOP to BOTTOM: round steps of the
 * binary unit of the plots' top, a label and a grid line each. */
static void
svg_mem_ticks(FILE *fp, const struct svg_map *m, double bottom)
{
	static const double scale[] = { 1099511627776.0, 1073741824.0,
	    1048576.0, 1024.0, 1 };
	static const char *const unit[] = { "TiB", "GiB", "MiB", "KiB", "B" };
	double step, y;
	char label[48];
	size_t u = 0;
	int k, n, most = (int)(m->mem_h / SVG_MEM_TICK);

	while (u + 1 < sizeof scale / sizeof scale[0] && m->ymax < scale[u])
		u++;
	n = pw_view_ticks(m->ymax / scale[u], most > 1 ? most : 1, &step);
	for (k = 0; k < n; k++) {
		y = svg_y(m, bottom, k * step * scale[u]);
		fprintf(fp, "<line class=\"level\" x1=\"%d\" y1=\"%.2f\" "
		    "x2=\"%d\" y2=\"%.2f\"/>\n", SVG_LEFT, y, SVG_LEFT + m->plot,
		    y);
		snprintf(label, sizeof label, "%g %s", k * step, unit[u]);
		svg_text(fp, SVG_LEFT - 4, y + 3, "tick", label);
	}
}

/*
 * The points of DM's step curve in the plot whose bottom is BOTTOM; the
 * steps within one pixel column as one vertical stroke over their range,
 * so that the points are at most four a column, three where columns
 * follow each other.  Returns the last y.
 */
static double
svg_curve(FILE *fp, const struct svg_map *m,
    const struct pw_device_metrics *dm, double bottom)
{
	double y = bottom, x0, x, lo, hi, last = 0;
	int i, j;

	for (i = 0; i < dm->ncurve; i = j) {
		x0 = svg_x(m, dm->curve[i].t);
		lo = hi = svg_y(m, bottom, dm->curve[i].bytes);
		for (j = i + 1; j < dm->ncurve &&
		    floor(x = svg_x(m, dm->curve[j].t)) == floor(x0); j++) {
			lo = fmin(lo, svg_y(m, bottom, dm->curve[j].bytes));
			hi = fmax(hi, svg_y(m, bottom, dm->curve[j].bytes));
		}
		/* The step into this column, unless the last one was the
		 * column next to it. */
		if (i > 0 && x0 - last >= 1)
			fprintf(fp, "%.1f,%.1f ", x0, y);
		if (j - i > 1)
			fprintf(fp, "%.1f,%.1f %.1f,%.1f ", x0, lo, x0, hi);
		y = svg_y(m, bottom, dm->curve[j - 1].bytes);
		last = svg_x(m, dm->curve[j - 1].t);
		fprintf(fp, "%.1f,%.1f ", last, y);
	}
	return y;
}

/*
 * One device's memory plot: the step curve, drawn twice from one
 * definition, the second time in red and clipped to the band above the
 * limit, so the curve turns red exactly where it exceeds the limit.
 */
static void
svg_memory(FILE *fp, const struct svg_map *m, const struct pw_problem *p,
    const struct pw_metrics *mt, int d, double top)
{
	const struct pw_device_metrics *dm = &mt->device[d];
	double bottom = top + m->mem_h, limit = p->memory[d].limit, y;
	char *label, b1[32], b2[32], dev[32];

	snprintf(dev, sizeof dev, "dev %d", d);
	svg_text(fp, SVG_LEFT, top - 3, NULL, dev);
	fprintf(fp, "<rect class=\"frame\" x=\"%d\" y=\"%.2f\" width=\"%d\" "
	    "height=\"%.2f\"/>\n", SVG_LEFT, top, m->plot, m->mem_h);
	svg_mem_ticks(fp, m, bottom);
	fprintf(fp, "<defs><polyline id=\"mem%d\" points=\"", d);
	y = svg_curve(fp, m, dm, bottom);
	fprintf(fp, "%.2f,%.2f\"/>\n", svg_x(m, m->v.t0 + mt->makespan), y);
	if (isfinite(limit)) {
		/* Up to a pixel above the line: a curve at the limit stays
		 * blue. */
		fprintf(fp, "<clipPath id=\"over%d\"><rect x=\"%d\" y=\"%.2f\" "
		    "width=\"%d\" height=\"%.2f\"/></clipPath>\n", d, SVG_LEFT,
		    top - 2, m->plot, fmax(0, svg_y(m, bottom, limit) - 1 -
		    (top - 2)));
	}
	fputs("</defs>\n", fp);
	fprintf(fp, "<use xlink:href=\"#mem%d\" class=\"mem\"/>\n", d);
	pw_fmt_bytes(b1, sizeof b1, dm->peak);
	if (isfinite(limit)) {
		y = svg_y(m, bottom, limit);
		fprintf(fp, "<line class=\"limit\" x1=\"%d\" y1=\"%.2f\" "
		    "x2=\"%d\" y2=\"%.2f\"/>\n", SVG_LEFT, y,
		    SVG_LEFT + m->plot, y);
		label = pw_xasprintf("limit %s", pw_fmt_bytes(b2, sizeof b2,
		    limit));
		svg_text(fp, SVG_LEFT + 4, y + 10, "lim", label);
		free(label);
		fprintf(fp, "<use xlink:href=\"#mem%d\" class=\"mem over\" "
		    "clip-path=\"url(#over%d)\"/>\n", d, d);
		label = pw_xasprintf("peak %s, limit %s%s", b1, b2,
		    dm->within_limit ? "" : " (over)");
	} else {
		label = pw_xasprintf("peak %s, no limit", b1);
	}
	/* Right of the plot's name, "dev 3". */
	svg_text_fit(fp, SVG_LEFT + m->plot, top - 3,
	    dm->within_limit ? "end" : "end bad", label, m->plot -
	    (double)strlen(dev) * SVG_CHAR_EM * SVG_TEXT_PX - 8, SVG_TEXT_PX);
	free(label);
}

int
pw_export_svg(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *mt, const struct pw_export_options *options,
    struct pw_error *err)
{
	const struct pw_export_options *o =
	    pw_export_options_or_default(options);
	struct pw_view_row *rows;
	struct svg_map m;
	char *head, b1[32];
	int *chunks;
	int nrows, d, rc;
	double top;
	int height;

	rows = pw_view_rows(p, s, &nrows);
	if ((rc = svg_layout(&m, o, nrows, mt->ndevices, &height,
	    err)) != PW_OK) {
		free(rows);
		return rc;
	}
	chunks = pw_view_chunks(p);
	m.v = pw_view_of(mt);
	m.ymax = 0;
	for (d = 0; d < mt->ndevices; d++) {
		m.ymax = fmax(m.ymax, mt->device[d].peak);
		if (isfinite(p->memory[d].limit))
			m.ymax = fmax(m.ymax, p->memory[d].limit);
	}
	if (!(m.ymax > 0))
		m.ymax = 1;
	top = m.top + nrows * m.row_pitch + SVG_AXIS_H;

	fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\">\n<style>\n%s</style>\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	    m.width, height, m.width, height, svg_style);
	svg_header(fp, &m, p, s, mt, o->timeline,
	    pw_view_interleaved(chunks, p->nstages));
	svg_gantt(fp, &m, p, t, rows, nrows, chunks);
	head = pw_xasprintf("memory (0 to %s near the top of every plot; "
	    "dashed: limit; red: above it)", pw_fmt_bytes(b1, sizeof b1,
	    m.ymax));
	svg_text_fit(fp, SVG_LEFT, top + 12, NULL, head, m.plot + SVG_RIGHT,
	    SVG_TEXT_PX);
	free(head);
	for (d = 0; d < mt->ndevices; d++)
		svg_memory(fp, &m, p, mt, d,
		    top + SVG_MEM_HEAD + d * m.mem_pitch);
	fputs("</svg>\n", fp);
	free(chunks);
	free(rows);
	if (ferror(fp)) {
		pw_error_set(err, "svg: write failed");
		return PW_ERR_IO;
	}
	return PW_OK;
}
