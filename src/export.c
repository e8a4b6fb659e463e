/* export.c - the export format registry and the layout facts views share. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

const struct pw_export_format pw_export_formats[] = {
	{ "chrome", "Chrome/Perfetto trace: a track per device and channel, "
	    "memory as counters", pw_export_chrome, false, false, false },
	{ "svg", "standalone SVG Gantt chart with each device's memory curve "
	    "against its limit", pw_export_svg, true, false, false },
	{ "png", "the SVG rasterised by rsvg-convert (Debian: librsvg2-bin)",
	    pw_export_png, true, false, true },
	{ "torch-csv", "PyTorch's compute_only schedule CSV (torch."
	    "distributed.pipelining, torchtitan); drops offload and reload",
	    pw_export_torch, false, true, false },
	{ "torch-csv-offload", "torch-csv with a row of offload and reload"
	    " tokens per channel (ours; PyTorch does not read it)",
	    pw_export_torch_offload, false, false, false },
};
const size_t pw_nexport_formats =
    sizeof pw_export_formats / sizeof pw_export_formats[0];

/* Returns a registry row (static), or NULL for an unknown name. */
const struct pw_export_format *
pw_export_find(const char *name)
{
	size_t i;

	for (i = 0; i < pw_nexport_formats; i++) {
		if (strcmp(pw_export_formats[i].name, name) == 0)
			return &pw_export_formats[i];
	}
	return NULL;
}

struct pw_view_row *
pw_view_rows(const struct pw_problem *p, const struct pw_schedule *s, int *n)
{
	struct pw_view_row *rows, *r;
	int d, c;

	assert(s->ndevices == p->devices);
	rows = pw_xcalloc((size_t)s->ndevices + (size_t)s->nchannels,
	    sizeof *rows);
	r = rows;
	for (d = 0; d < s->ndevices; d++, r++) {
		snprintf(r->label, sizeof r->label, "dev %d", d);
		r->device = d;
		r->channel = -1;
		r->seq = &s->device[d];
	}
	for (c = 0; c < s->nchannels; c++) {
		if (s->channel[c].len == 0)
			continue;
		pw_channel_name(p, c, r->label, sizeof r->label);
		r->device = -1;
		r->channel = c;
		r->seq = &s->channel[c];
		r++;
	}
	*n = (int)(r - rows);
	return rows;
}

char *
pw_view_link_devices(const struct pw_problem *p, int channel, char *buf,
    size_t len)
{
	const int group = p->link.duplex ? channel / 2 : channel;
	const char *fmt = !p->link.duplex ? "%s<->host" : channel % 2 == 0 ?
	    "%s->host" : "host->%s";
	char list[64] = "", *at = list;
	int d, e;

	for (d = 0; d < p->devices; d = e) {
		e = d + 1;
		if (p->link.group == NULL || p->link.group[d] != group)
			continue;
		while (e < p->devices && p->link.group[e] == group)
			e++;
		if ((size_t)(at - list) + 24 >= sizeof list) {
			strcpy(at, "+");
			break;
		}
		at += sprintf(at, "%sd%d", at == list ? "" : ",", d);
		if (e - d > 1)
			at += sprintf(at, "-%d", e - 1);
	}
	snprintf(buf, len, fmt, list);
	return buf;
}

int *
pw_view_chunks(const struct pw_problem *p)
{
	int *chunks, *seen;
	int s;

	chunks = pw_xcalloc((size_t)p->nstages, sizeof *chunks);
	seen = pw_xcalloc((size_t)p->devices, sizeof *seen);
	for (s = 0; s < p->nstages; s++) {
		assert(p->stages[s].device >= 0 &&
		    p->stages[s].device < p->devices);
		chunks[s] = seen[p->stages[s].device]++;
	}
	free(seen);
	return chunks;
}

char *
pw_view_op_label(char *buf, size_t len, struct pw_op op, const int *chunks)
{
	snprintf(buf, len, "%s s%d.c%d mb%d", pw_kind_name(op.kind), op.stage,
	    chunks[op.stage], op.mb);
	return buf;
}

bool
pw_view_interleaved(const int *chunks, int nstages)
{
	int s;

	for (s = 0; s < nstages; s++) {
		if (chunks[s] > 0)
			return true;
	}
	return false;
}

char *
pw_view_title(const struct pw_problem *p, const struct pw_schedule *s,
    const char *timeline)
{
	char *title, *full;

	if (p->name != NULL && s->family != NULL)
		title = pw_xasprintf("%s (%s)", p->name, s->family);
	else
		title = pw_xstrdup(p->name != NULL ? p->name :
		    s->family != NULL ? s->family : "schedule");
	if (timeline == NULL)
		return title;
	full = pw_xasprintf("%s, %s", title, timeline);
	free(title);
	return full;
}

const struct pw_export_options *
pw_export_options_or_default(const struct pw_export_options *options)
{
	static const struct pw_export_options defaults = { 0, 0, NULL };

	return options != NULL ? options : &defaults;
}

bool
pw_view_times(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op, double *start, double *end)
{
	size_t i;

	i = pw_op_index(p, op);
	if (!pw_timing_has(t, i))
		return false;
	*start = t->start[i];
	*end = t->end[i];
	return true;
}

double
pw_view_at(double t0, double span, double t)
{
	double x;

	if (!(span > 0) || !isfinite(span))
		return 0;
	/* t - t0 may overflow to infinity (then x is 1) but, both being
	 * finite, never to NaN; the division of denormals stays exact
	 * enough for a picture. */
	x = (t - t0) / span;
	if (!(x > 0))
		return 0;
	return x < 1 ? x : 1;
}

struct pw_view
pw_view_of(const struct pw_metrics *mt)
{
	struct pw_view v = { isfinite(mt->start) ? mt->start : 0,
	    mt->makespan };

	return v;
}

double
pw_view_tick(const struct pw_view *v, double step, int k, double *t)
{
	*t = k * step;
	return pw_view_at(v->t0, v->span, v->t0 + *t);
}

int
pw_view_ticks(double span, int maxticks, double *step)
{
	static const double mult[] = { 1, 2, 5, 10 };
	double unit, raw;
	size_t i;

	assert(maxticks > 0);
	*step = 1;
	if (!(span > 0) || !isfinite(span))
		return 1;
	raw = span / maxticks;
	/* Near the ends of the doubles, a power of ten can underflow to 0 or
	 * a multiple of it overflow: one interval then, the whole span. */
	unit = pow(10, floor(log10(raw)));
	*step = span;
	for (i = 0; i < sizeof mult / sizeof mult[0]; i++) {
		if (mult[i] * unit >= raw * (1 - 1e-9) &&
		    isfinite(mult[i] * unit) && mult[i] * unit > 0) {
			*step = mult[i] * unit;
			break;
		}
	}
	raw = floor(span / *step * (1 + 1e-9));
	return raw < maxticks ? (int)raw + 1 : maxticks + 1;
}
