/*
 * bench_tui.c - the designer's frame: drawing a 100,000-op schedule at
 * any zoom, and an order edit on a 10,000-op schedule with its re-time
 * and redraw, against the 60 Hz frame (16.7 ms) and the 50 ms.
 *
 * The screen is an off-screen ncurses one (newterm on /dev/null) of
 * 200x60; a frame is tui_draw of every panel and the update that writes
 * it out.  Each row is the median of REPS frames after a first one.
 * Instruction counts (stable on a noisy machine) come from callgrind,
 * collecting inside tui_draw only, at two repetition counts:
 *
 *     valgrind --tool=callgrind --toggle-collect=tui_draw \
 *         bench/bench_tui --reps 3 --case mid-1/1000
 *
 * and again with --reps 8: the difference of the two totals over 5 is
 * one frame's, the setup and the first frame cancelling out (the edit:
 * add --toggle-collect=pw_plan_apply; docs/designer.md, "Speed").
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "plan.h"
#include "tui_int.h"

#define BENCH_ROWS	60
#define BENCH_COLS	200
#define BENCH_FRAME	(1.0 / 60)
#define BENCH_EDIT_BUDGET	0.050
/* zb-h1 on 8 devices: 8 stages x 3 ops x microbatches. */
#define BENCH_DEVICES	8
#define BENCH_BIG_MB	4200	/* 100,800 ops */
#define BENCH_EDIT_MB	417	/* 10,008 ops */

/* A zoom: the window's width as a share of the makespan, and where its
 * middle lies (0: the start, 1: the end). */
struct bench_zoom {
	const char *name;
	double	share;
	double	at;
};

static const struct bench_zoom bench_zooms[] = {
	{ "fit", 1, 0.5 },
	{ "start-1/10", 0.1, 0 },
	{ "mid-1/10", 0.1, 0.5 },
	{ "end-1/10", 0.1, 1 },
	{ "start-1/1000", 0.001, 0 },
	{ "mid-1/1000", 0.001, 0.5 },
	{ "end-1/1000", 0.001, 1 },
};

/* Writes zb-h1's schedule of MB microbatches on unit stages to a
 * temporary file and opens the designer on it.  Returns the state, or
 * NULL after saying why. */
static struct tui *
bench_open(int mb, char *path, size_t len)
{
	struct pw_problem *p = pw_problem_new(BENCH_DEVICES, BENCH_DEVICES, mb);
	struct pw_plan *plan = NULL;
	struct pw_error err;
	struct tui *d = NULL;
	int s, fd;

	snprintf(path, len, "/tmp/bench_tui.XXXXXX");
	if ((fd = mkstemp(path)) < 0) {
		perror("bench_tui: mkstemp");
		pw_problem_free(p);
		return NULL;
	}
	close(fd);
	for (s = 0; s < p->nstages; s++) {
		p->stages[s].device = s;
		p->stages[s].f = p->stages[s].b = p->stages[s].w = 1e-3;
		p->stages[s].act = 1 << 20;
		p->stages[s].hold = 1 << 19;
		p->stages[s].comm = 1e-4;
	}
	p->comm = 1e-4;
	if (pw_plan_family(pw_family_find("zb-h1"), p, &plan, &err) != PW_OK ||
	    pw_schedule_write(path, pw_plan_problem(plan), pw_plan_schedule(plan),
	    pw_plan_timing(plan), &err) != PW_OK ||
	    (d = tui_new(path, BENCH_ROWS, BENCH_COLS, &err)) == NULL)
		fprintf(stderr, "bench_tui: %s\n", err.msg);
	pw_plan_free(plan);
	pw_problem_free(p);
	unlink(path);
	return d;
}

/* One frame: every panel into the off-screen screen and out. */
static double
bench_frame(struct tui *d)
{
	double start = pw_now();

	tui_draw(stdscr, d, TUI_DRAW_ALL);
	wnoutrefresh(stdscr);
	doupdate();
	return pw_now() - start;
}

static void
bench_line(const char *what, size_t ops, double median, double budget,
    int frames)
{
	printf("| %-14s | %7zu | %9.3f ms | %7.1f ms | %6.3f | %6d |\n", what,
	    ops, median * 1e3, budget * 1e3, median / budget, frames);
}

/* The zoom rows: REPS frames of each view (only ONLY, when set). */
static int
bench_zoom_rows(struct tui *d, int reps, const char *only, double *v)
{
	const struct pw_metrics *m = pw_plan_metrics(d->plan);
	size_t ops = pw_schedule_nops(pw_plan_schedule(d->plan));
	const struct bench_zoom *z;
	size_t i;
	int r;

	for (i = 0; i < sizeof bench_zooms / sizeof bench_zooms[0]; i++) {
		z = &bench_zooms[i];
		if (only != NULL && strcmp(only, z->name) != 0)
			continue;
		d->view.span = m->makespan * z->share;
		d->view.t0 = m->start + (m->makespan - d->view.span) * z->at;
		/* The first frame also computes what the plan keeps until
		 * its next change (the slack): not a redraw's cost. */
		bench_frame(d);
		for (r = 0; r < reps; r++)
			v[r] = bench_frame(d);
		bench_line(z->name, ops, bench_median(v, (size_t)reps),
		    BENCH_FRAME, reps);
	}
	return 0;
}

/* The edit row: a W in the middle of device 0's order one place later
 * (nothing waits for a W, so it times), its re-time and a frame, then
 * back, alternately. */
static int
bench_edit_row(struct tui *d, int reps, double *v)
{
	const struct pw_seq *seq = &pw_plan_schedule(d->plan)->device[0];
	struct pw_edit edit = { .kind = PW_EDIT_MOVE }, undo;
	struct pw_error err;
	double start;
	int pos, r;

	for (pos = seq->len / 2; pos + 1 < seq->len &&
	    seq->ops[pos].kind != PW_W; pos++)
		;
	edit.op = seq->ops[pos];
	edit.to = pos + 1;
	tui_view_fit(d);
	for (r = 0; r < reps; r++) {
		start = pw_now();
		if (pw_plan_apply(d->plan, &edit, &undo, &err) != PW_OK) {
			fprintf(stderr, "bench_tui: edit: %s\n", err.msg);
			return -1;
		}
		bench_frame(d);
		v[r] = pw_now() - start;
		edit = undo;
	}
	bench_line("edit+redraw", pw_schedule_nops(pw_plan_schedule(d->plan)), bench_median(v, (size_t)reps), BENCH_EDIT_BUDGET, reps);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *only = NULL;
	char path[64];
	struct tui *d;
	SCREEN *scr;
	FILE *out, *in;
	double *v;
	int reps = 25, i, rc = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: bench_tui [--reps N] "
			    "[--case fit|start-1/10|...|end-1/1000|edit]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	setlocale(LC_ALL, "");
	if ((out = fopen("/dev/null", "w")) == NULL ||
	    (in = fopen("/dev/null", "r")) == NULL) {
		perror("bench_tui: /dev/null");
		return 1;
	}
	scr = newterm("xterm-256color", out, in);
	resizeterm(BENCH_ROWS, BENCH_COLS);
	v = pw_xcalloc((size_t)reps, sizeof *v);
	printf("| %-14s | %7s | %12s | %10s | %6s | %6s |\n", "frame", "ops",
	    "median", "budget", "ratio", "frames");
	printf("|----------------|---------|--------------|------------|"
	    "--------|--------|\n");
	if (only == NULL || strcmp(only, "edit") != 0) {
		if ((d = bench_open(BENCH_BIG_MB, path, sizeof path)) == NULL)
			rc = 1;
		else {
			tui_colors_init(&d->glyphs);
			rc |= bench_zoom_rows(d, reps, only, v);
			tui_free(d);
		}
	}
	if (only == NULL || strcmp(only, "edit") == 0) {
		if ((d = bench_open(BENCH_EDIT_MB, path, sizeof path)) == NULL)
			rc = 1;
		else {
			tui_colors_init(&d->glyphs);
			rc |= bench_edit_row(d, reps, v);
			tui_free(d);
		}
	}
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	free(v);
	return rc != 0;
}
