/*
 * test_svg_render.c - the SVG as a reader sees it: rasterised by
 * rsvg-convert and read back with libpng, every compute lane of a busy
 * schedule is coloured for at least its device's busy share of the
 * makespan (thin ops merge into solid bars, no white border washes them
 * out); and at 50,000 ops the file stays within a bound from its lanes.
 */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pipewright.h"
#include "tap.h"
#include "testlib.h"

/* How far under its busy share a lane's coloured share may fall: the
 * antialiased ends of bars and the white borders of wide ops. */
#define RENDER_MARGIN	0.05

struct render_case {
	int	m;		/* microbatches, on 8 devices */
	int	width;		/* pixels; 0 for the default */
};

/* Writes SCHED's SVG at SIZE to PATH; false after a failed line. */
static bool
render_svg(const char *path, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *mt, const struct pw_export_options *size)
{
	struct pw_error err;
	FILE *fp = fopen(path, "w");
	int rc;

	if (!tap_ok(fp != NULL, "%s opens", path))
		return false;
	rc = pw_export_svg(fp, p, s, t, mt, size, &err);
	return tap_ok(fclose(fp) == 0 && rc == PW_OK, "%s is written", path);
}

/* Whether the pixel is a colour: neither white nor the lane's grey (nor
 * anything as light), whatever antialiasing left. */
static bool
render_coloured(const png_byte *px)
{
	return px[0] < 230 || px[1] < 230 || px[2] < 230;
}

static void
render_case(const struct render_case *c)
{
	const struct pw_export_options size = { c->width, 0, NULL };
	struct pw_problem *p = test_problem_unit(8, c->m, 0, INFINITY);
	struct pw_timing *t;
	struct pw_schedule *s;
	struct pw_metrics *mt = NULL;
	png_image img;
	png_bytep px = NULL;
	char *svg = NULL, *cmd, *at, svgpath[64], pngpath[64];
	int d, x, y, x0, w, coloured, all, nops = 0;
	double top, h, share;

	s = test_simulate("1f1b", p, "render", &t);
	if (s == NULL)
		goto out;
	mt = pw_metrics_compute(p, s, t);
	for (d = 0; d < s->ndevices; d++)
		nops += s->device[d].len;
	snprintf(svgpath, sizeof svgpath, "test_svg_render.%d.svg", c->m);
	snprintf(pngpath, sizeof pngpath, "test_svg_render.%d.png", c->m);
	if (!render_svg(svgpath, p, s, t, mt, &size))
		goto free;
	cmd = pw_xasprintf("rsvg-convert --format png -o %s %s", pngpath,
	    svgpath);
	if (!tap_ok(system(cmd) == 0, "%d ops: rsvg-convert renders it",
	    nops)) {
		free(cmd);
		goto free;
	}
	free(cmd);
	memset(&img, 0, sizeof img);
	img.version = PNG_IMAGE_VERSION;
	if (!tap_ok(png_image_begin_read_from_file(&img, pngpath) != 0,
	    "%d ops: libpng reads the PNG", nops))
		goto free;
	img.format = PNG_FORMAT_RGB;
	px = pw_xmalloc(PNG_IMAGE_SIZE(img));
	if (!tap_ok(png_image_finish_read(&img, NULL, px, 0, NULL) != 0,
	    "%d ops: the PNG decodes", nops))
		goto free;
	tap_int(img.width, c->width != 0 ? c->width : 1200,
	    "%d ops: the picture is as wide as asked", nops);
	svg = test_read_file(svgpath);
	at = svg;
	for (d = 0; d < s->ndevices; d++) {
		at = strstr(at, "<rect class=\"lane\"");
		if (!tap_ok(at != NULL && sscanf(at, "<rect class=\"lane\" "
		    "x=\"%d\" y=\"%lf\" width=\"%d\" height=\"%lf\"", &x0, &top,
		    &w, &h) == 4, "%d ops: lane %d is in the SVG", nops, d))
			goto free;
		at++;
		coloured = all = 0;
		/* The band inside the lane, a pixel in from its edges. */
		for (y = (int)ceil(top) + 1; y < (int)floor(top + h) - 1; y++)
			for (x = x0 + 1; x < x0 + w - 1; x++, all++)
				coloured += render_coloured(px +
				    3 * ((size_t)y * img.width + (size_t)x));
		share = mt->device[d].busy / mt->makespan;
		tap_ok(all > 0 && (double)coloured / all >= share -
		    RENDER_MARGIN, "%d ops: dev %d is %.1f%% coloured, busy "
		    "%.1f%%", nops, d, 100.0 * coloured / (all > 0 ? all : 1),
		    100 * share);
	}
free:
	remove(svgpath);
	remove(pngpath);
	free(svg);
	free(px);
	pw_metrics_free(mt);
	pw_timing_free(t);
	pw_schedule_free(s);
out:
	pw_problem_free(p);
}

/*
 * At 50,000 ops each lane is one busy bar and each memory curve at most
 * three points a pixel column (some 13 bytes each): with the header's
 * 4,096 bytes the file is bounded by its plots' columns, not by its ops
 * (unmerged, the ops alone would take some 3.5 MB).
 */
static void
render_size(void)
{
	const struct pw_export_options size = { 0, 0, NULL };
	struct pw_problem *p = test_problem_unit(8, 3125, 0, INFINITY);
	struct pw_timing *t;
	struct pw_schedule *s;
	struct pw_metrics *mt = NULL;
	struct pw_error err;
	char *buf = NULL;
	size_t len = 0, bound;
	FILE *fp;
	int d, nops = 0, rc;

	s = test_simulate("1f1b", p, "50,000 ops", &t);
	if (s == NULL) {
		pw_problem_free(p);
		return;
	}
	mt = pw_metrics_compute(p, s, t);
	for (d = 0; d < s->ndevices; d++)
		nops += s->device[d].len;
	tap_int(nops, 50000, "50,000 ops");
	fp = open_memstream(&buf, &len);
	rc = pw_export_svg(fp, p, s, t, mt, &size, &err);
	fclose(fp);
	tap_int(rc, PW_OK, "the SVG of 50,000 ops is written");
	bound = 4096 + (size_t)s->ndevices * 1020 * 3 * 13;
	tap_ok(len <= bound, "%zu bytes, within %zu for %d lanes", len, bound,
	    s->ndevices);
	free(buf);
	pw_metrics_free(mt);
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(p);
}

int
main(void)
{
	static const struct render_case cases[] = {
		{ 64, 0 },	/* 1,024 ops: wide ones, borders and all */
		{ 750, 800 },	/* 12,000 ops: thin ones merged */
	};
	size_t i;

	if (system("command -v rsvg-convert >/dev/null 2>&1") != 0)
		tap_skip("rsvg-convert missing", "the renders");
	else
		for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
			render_case(&cases[i]);
	render_size();
	return tap_done();
}
