/*
 * export_svg.c - a standalone SVG: a Gantt chart with a row per device and
 * per channel, a time axis, and under it each device's memory curve
 * against its limit, all on one time scale.
 */
#include <math.h>
#include <stdlib.h>

#include "export.h"

#define SVG_WIDTH	1200
#define SVG_LEFT	110	/* room for row labels */
#define SVG_RIGHT	30
#define SVG_PLOT	(SVG_WIDTH - SVG_LEFT - SVG_RIGHT)
#define SVG_GANTT_TOP	92
#define SVG_ROW_H	20
#define SVG_ROW_PITCH	24
#define SVG_AXIS_H	26	/* the time axis and its labels */
#define SVG_MEM_HEAD	36	/* the memory heading above the plots */
#define SVG_MEM_H	56
#define SVG_MEM_PAD	6	/* headroom above the largest value */
#define SVG_MEM_PITCH	76
#define SVG_TICK_GAP	80	/* pixels between time ticks, at least */
#define SVG_DIGIT_W	7	/* width of a digit at the label size */

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
    ".axis{stroke:#444}.grid{stroke:#ddd}\n"
    ".limit{stroke:#555;stroke-dasharray:6 4}\n"
    ".mem{fill:none;stroke:#1f77b4;stroke-width:1.5}.over{stroke:#d62728}\n"
    "text.bad{fill:#d62728}\n";

static const char *const svg_key[PW_NKINDS] = {
	"F forward", "B input gradient", "W weight gradient", "BW fused B+W",
	"OFFLOAD to host", "RELOAD from host",
};

/* The time scale shared by the chart and the memory plots, and the byte
 * scale the memory plots share. */
struct svg_map {
	struct pw_view v;	/* the time across the plot */
	double	ymax;		/* bytes at the top of a memory plot */
};

static double
svg_x(const struct svg_map *m, double t)
{
	return SVG_LEFT + pw_view_at(m->v.t0, m->v.span, t) * SVG_PLOT;
}

/* The y of BYTES in the memory plot whose bottom is at BOTTOM. */
static double
svg_y(const struct svg_map *m, double bottom, double bytes)
{
	return bottom - pw_view_at(0, m->ymax, bytes) *
	    (SVG_MEM_H - SVG_MEM_PAD);
}

/* Writes TEXT as XML character data; control characters, which XML 1.0
 * cannot carry, become '?'. */
static void
svg_escape(FILE *fp, const char *text)
{
	for (; *text != '\0'; text++) {
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

/* CLS may be NULL for plain text. */
static void
svg_text(FILE *fp, double x, double y, const char *cls, const char *text)
{
	fprintf(fp, "<text x=\"%.2f\" y=\"%.2f\"", x, y);
	if (cls != NULL)
		fprintf(fp, " class=\"%s\"", cls);
	fputc('>', fp);
	svg_escape(fp, text);
	fputs("</text>\n", fp);
}

static void
svg_header(FILE *fp, const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_metrics *mt, bool interleaved)
{
	char *title, *line, b1[32], b2[32];
	int k;

	title = pw_view_title(p, s);
	svg_text(fp, SVG_LEFT, 26, "title", title);
	line = pw_xasprintf("makespan %s, bubble rate %.2f%%, total idle %s; "
	    "%d devices, %d stages, %d microbatches%s",
	    pw_fmt_seconds(b1, sizeof b1, mt->makespan), 100 * mt->bubble_rate,
	    pw_fmt_seconds(b2, sizeof b2, mt->total_idle), p->devices,
	    p->nstages, p->microbatches,
	    mt->feasible ? "" : "; over a memory limit");
	svg_text(fp, SVG_LEFT, 46, mt->feasible ? NULL : "bad", line);
	for (k = 0; k < PW_NKINDS; k++) {
		fprintf(fp, "<rect class=\"key %s\" x=\"%d\" y=\"58\" "
		    "width=\"12\" height=\"12\"/>\n",
		    pw_kind_name((enum pw_kind)k), SVG_LEFT + 140 * k);
		svg_text(fp, SVG_LEFT + 140 * k + 16, 68, NULL, svg_key[k]);
	}
	if (interleaved)
		svg_text(fp, SVG_LEFT + 140 * PW_NKINDS, 68, NULL,
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
	    "width=\"%.2f\" height=\"%d\"><title>%s %s to %s</title></rect>\n",
	    pw_kind_name(op.kind),
	    !pw_kind_is_transfer(op.kind) && chunks[op.stage] % 2 == 1 ?
	    " odd" : "", x, y, w, SVG_ROW_H,
	    pw_op_name(name, sizeof name, op),
	    pw_fmt_seconds(b1, sizeof b1, start),
	    pw_fmt_seconds(b2, sizeof b2, end));
	n = snprintf(num, sizeof num, "%d", op.mb);
	if (w >= SVG_DIGIT_W * n + 4)
		svg_text(fp, x + w / 2, y + 14, "mb", num);
}

/* Draws the lanes, the time axis with its grid, then the ops over them. */
static void
svg_gantt(FILE *fp, const struct svg_map *m, const struct pw_problem *p,
    const struct pw_timing *t, const struct pw_view_row *rows, int nrows,
    const int *chunks)
{
	double axis = SVG_GANTT_TOP + nrows * SVG_ROW_PITCH + 2;
	double y, step, x, start, end, when;
	struct pw_op op;
	char buf[32];
	int r, i, k, nticks;

	for (r = 0; r < nrows; r++) {
		y = SVG_GANTT_TOP + r * SVG_ROW_PITCH;
		fprintf(fp, "<rect class=\"lane\" x=\"%d\" y=\"%.2f\" "
		    "width=\"%d\" height=\"%d\"/>\n", SVG_LEFT, y, SVG_PLOT,
		    SVG_ROW_H);
		svg_text(fp, SVG_LEFT - 8, y + 14, "end", rows[r].label);
	}
	fprintf(fp, "<line class=\"axis\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" "
	    "y2=\"%.2f\"/>\n", SVG_LEFT, axis, SVG_LEFT + SVG_PLOT, axis);
	nticks = pw_view_ticks(m->v.span, SVG_PLOT / SVG_TICK_GAP, &step);
	for (k = 0; k < nticks; k++) {
		x = SVG_LEFT + pw_view_tick(&m->v, step, k, &when) * SVG_PLOT;
		fprintf(fp, "<line class=\"grid\" x1=\"%.2f\" y1=\"%d\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, SVG_GANTT_TOP - 2, x,
		    axis);
		fprintf(fp, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.2f\" "
		    "x2=\"%.2f\" y2=\"%.2f\"/>\n", x, axis, x, axis + 5);
		svg_text(fp, x, axis + 18, "mid",
		    pw_fmt_seconds(buf, sizeof buf, when));
	}
	for (r = 0; r < nrows; r++) {
		y = SVG_GANTT_TOP + r * SVG_ROW_PITCH;
		for (i = 0; i < rows[r].seq->len; i++) {
			op = rows[r].seq->ops[i];
			if (pw_view_times(p, t, op, &start, &end))
				svg_op(fp, m, y, op, start, end, chunks);
		}
	}
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
	double bottom = top + SVG_MEM_H, limit = p->memory[d].limit, y = bottom;
	char *label, b1[32], b2[32], dev[32];
	int i;

	snprintf(dev, sizeof dev, "dev %d", d);
	svg_text(fp, SVG_LEFT - 8, top + SVG_MEM_H / 2 + 4, "end", dev);
	fprintf(fp, "<rect class=\"frame\" x=\"%d\" y=\"%.2f\" width=\"%d\" "
	    "height=\"%d\"/>\n", SVG_LEFT, top, SVG_PLOT, SVG_MEM_H);
	fprintf(fp, "<defs><polyline id=\"mem%d\" points=\"", d);
	for (i = 0; i < dm->ncurve; i++) {
		if (i > 0)
			fprintf(fp, "%.2f,%.2f ", svg_x(m, dm->curve[i].t), y);
		y = svg_y(m, bottom, dm->curve[i].bytes);
		fprintf(fp, "%.2f,%.2f ", svg_x(m, dm->curve[i].t), y);
	}
	fprintf(fp, "%.2f,%.2f\"/>\n", svg_x(m, m->v.t0 + mt->makespan), y);
	if (isfinite(limit)) {
		/* Up to a pixel above the line: a curve at the limit stays
		 * blue. */
		fprintf(fp, "<clipPath id=\"over%d\"><rect x=\"%d\" y=\"%.2f\" "
		    "width=\"%d\" height=\"%.2f\"/></clipPath>\n", d, SVG_LEFT,
		    top - 2, SVG_PLOT, fmax(0, svg_y(m, bottom, limit) - 1 -
		    (top - 2)));
	}
	fputs("</defs>\n", fp);
	fprintf(fp, "<use xlink:href=\"#mem%d\" class=\"mem\"/>\n", d);
	pw_fmt_bytes(b1, sizeof b1, dm->peak);
	if (isfinite(limit)) {
		y = svg_y(m, bottom, limit);
		fprintf(fp, "<line class=\"limit\" x1=\"%d\" y1=\"%.2f\" "
		    "x2=\"%d\" y2=\"%.2f\"/>\n", SVG_LEFT, y,
		    SVG_LEFT + SVG_PLOT, y);
		fprintf(fp, "<use xlink:href=\"#mem%d\" class=\"mem over\" "
		    "clip-path=\"url(#over%d)\"/>\n", d, d);
		label = pw_xasprintf("peak %s, limit %s%s", b1,
		    pw_fmt_bytes(b2, sizeof b2, limit),
		    dm->within_limit ? "" : " (over)");
	} else {
		label = pw_xasprintf("peak %s, no limit", b1);
	}
	svg_text(fp, SVG_LEFT + SVG_PLOT, top - 3,
	    dm->within_limit ? "end" : "end bad", label);
	free(label);
}

int
pw_export_svg(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *mt, struct pw_error *err)
{
	struct pw_view_row *rows;
	struct svg_map m;
	char *head, b1[32];
	int *chunks;
	int nrows, d, top, height;

	rows = pw_view_rows(p, s, &nrows);
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
	top = SVG_GANTT_TOP + nrows * SVG_ROW_PITCH + SVG_AXIS_H;
	height = top + SVG_MEM_HEAD + mt->ndevices * SVG_MEM_PITCH;

	fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\">\n<style>\n%s</style>\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	    SVG_WIDTH, height, SVG_WIDTH, height, svg_style);
	svg_header(fp, p, s, mt, pw_view_interleaved(chunks, p->nstages));
	svg_gantt(fp, &m, p, t, rows, nrows, chunks);
	head = pw_xasprintf("memory (0 to %s near the top of every plot; "
	    "dashed: limit; red: above it)", pw_fmt_bytes(b1, sizeof b1,
	    m.ymax));
	svg_text(fp, SVG_LEFT, top + 12, NULL, head);
	free(head);
	for (d = 0; d < mt->ndevices; d++)
		svg_memory(fp, &m, p, mt, d,
		    top + SVG_MEM_HEAD + d * SVG_MEM_PITCH);
	fputs("</svg>\n", fp);
	free(chunks);
	free(rows);
	if (ferror(fp)) {
		pw_error_set(err, "svg: write failed");
		return PW_ERR_IO;
	}
	return PW_OK;
}
