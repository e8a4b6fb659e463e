/*
 * draw_header.c - the header's two rows: what is designed (problem,
 * devices, stages and placement, microbatches, where the schedule came
 * from), then the schedule's metrics (a launch's measured step beside
 * the makespan) and whether it is feasible.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

const char *
tui_source(const struct tui *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", d->source != NULL ? d->source :
	    "(unknown)", d->edits > 0 ? ", edited" : "");
	return buf;
}

const char *
tui_placement(const struct pw_problem *p, char *buf, size_t len)
{
	int v = p->nstages / p->devices;
	const char *how = pw_problem_is_v(p) ? "V" :
	    pw_problem_is_loop(p) ? "loop" : NULL;

	if (how == NULL)
		snprintf(buf, len, "custom placement");
	else
		snprintf(buf, len, "%s, %d chunk%s", how, v, v == 1 ? "" : "s");
	return buf;
}

/* The device with the highest peak and its limit, or the device
 * furthest over its limit where one is over, as "peak 30.5 GiB / 40 GiB
 * (d3)". */
static void
tui_header_peak(const struct pw_problem *p, const struct pw_metrics *m,
    char *buf, size_t len)
{
	char peak[32], lim[32];
	double limit;
	int nover, at = pw_metrics_tightest(p, m, &nover);

	/* Over a limit: the worst offender, which the status names; else
	 * the highest peak, as compare shows it. */
	if (at < 0 || nover == 0)
		at = pw_metrics_peak_device(m);
	limit = p->memory[at].limit;
	pw_fmt_bytes(peak, sizeof peak, m->device[at].peak);
	if (isfinite(limit))
		pw_fmt_bytes(lim, sizeof lim, limit);
	else
		snprintf(lim, sizeof lim, "no limit");
	snprintf(buf, len, "peak %s / %s (d%d)", peak, lim, at);
}

bool
tui_plan_verdict(const struct tui *d, char *buf, size_t len)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_metrics *m = pw_plan_metrics(d->plan);
	struct pw_error err;
	char *nl, why[160];
	int at, nover;

	if (pw_plan_status(d->plan, &err) == PW_ERR_DEADLOCK && d->nwaits > 0) {
		tui_deadlock_summary(d, buf, len);
		return false;
	}
	if (pw_plan_status(d->plan, &err) != PW_OK) {
		if ((nl = strchr(err.msg, '\n')) != NULL)
			*nl = '\0';
		snprintf(buf, len, "%s", err.msg);
		return false;
	}
	/* A file may carry pins its orders break; edits keep them. */
	if (!pw_pins_hold(p, pw_plan_timing(d->plan), d->pins, d->npins,
	    why, sizeof why)) {
		snprintf(buf, len, "breaks %s", why);
		return false;
	}
	/* Short: the metrics beside it give the peak and the limit. */
	at = pw_metrics_tightest(p, m, &nover);
	if (nover > 0) {
		snprintf(buf, len, "memory over on d%d", at);
		return false;
	}
	snprintf(buf, len, "feasible");
	return true;
}

/* Cuts LINE, fields parted by two blanks, after its last whole field
 * within WIDTH columns (the metrics are ASCII), so that no number loses
 * its unit. */
static void
tui_header_fit(char *line, int width)
{
	char *cut;

	while ((int)strlen(line) > width &&
	    (cut = strstr(line, "  ")) != NULL) {
		while (strstr(cut + 2, "  ") != NULL)
			cut = strstr(cut + 2, "  ");
		*cut = '\0';
	}
}

void
tui_draw_header(WINDOW *w, const struct tui *d, const struct tui_layout *l)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	const struct pw_metrics *m = pw_plan_metrics(d->plan);
	const struct tui_rect *r = &l->header;
	char line[1024], place[64], peak[128], status[4096], bound[64] = "";
	char mk[32], idle[32], b[32], ms[32], pr[32], measured[96] = "";
	char source[512];
	const struct tui_measured *mr;
	const char *name = p->name != NULL ? p->name : d->path != NULL ?
	    d->path : "(unnamed)";
	attr_t a = tui_attr(TUI_COLOR_HEADER);
	double lb, gap;
	bool ok;
	int sw;

	tui_draw_clear(w, *r, a);
	tui_placement(p, place, sizeof place);
	tui_source(d, source, sizeof source);
	snprintf(line, sizeof line, "%s  %d device%s, %d stage%s (%s), "
	    "%d microbatch%s  from %s", name, p->devices,
	    p->devices == 1 ? "" : "s", p->nstages, p->nstages == 1 ? "" :
	    "s", place, p->microbatches, p->microbatches == 1 ? "" : "es",
	    source);
	/* A narrow screen gets the short words rather than a cut source. */
	if ((int)strlen(line) > r->w)
		snprintf(line, sizeof line, "%s  %d dev, %d stages (%s), %d mb  "
		    "from %s", name, p->devices, p->nstages, place,
		    p->microbatches, source);
	tui_draw_text_more(w, r->y, r->x, r->w, a | A_BOLD, line,
	    tui_glyph(&d->glyphs, TUI_GLYPH_MORE));

	/* The verdict keeps the row's right end; the metrics get the rest. */
	ok = tui_plan_verdict(d, status, sizeof status);
	sw = (int)strlen(status) < r->w / 2 ? (int)strlen(status) : r->w / 2;
	tui_draw_text(w, r->y + 1, r->x + r->w - sw, sw, ok ? a | A_BOLD :
	    tui_attr(TUI_COLOR_ERROR), status);
	tui_header_peak(p, m, peak, sizeof peak);
	/* A search that ran knows a lower bound, for its problem; of the
	 * schedules that keep the limits and pins, so a schedule that does
	 * not has no gap to it. */
	if (tui_solve_bound(d, &lb, &gap)) {
		pw_fmt_seconds(b, sizeof b, lb);
		if (ok)
			snprintf(bound, sizeof bound, "  bound %s  gap %.1f%%",
			    b, gap * 100);
		else
			snprintf(bound, sizeof bound, "  bound %s", b);
	}
	/* A launch's figures next to the makespan they measure. */
	if ((mr = tui_measured_of(d)) != NULL)
		snprintf(measured, sizeof measured, "  measured: step %s "
		    "(predicted %s)", pw_fmt_seconds(ms, sizeof ms,
		    mr->cmp.step_measured), pw_fmt_seconds(pr, sizeof pr,
		    mr->cmp.step_predicted));
	/* Orders that do not time show what the last ones that did gave,
	 * saying so. */
	/* Most telling first: a narrow screen drops fields from the end,
	 * and the total idle is the bubble rate again in seconds. */
	snprintf(line, sizeof line, "%smakespan %s%s  bubble %.1f%%  %s%s  "
	    "idle %s", pw_plan_status(d->plan, NULL) != PW_OK ? "last timed: " :
	    "", pw_fmt_seconds(mk, sizeof mk, m->makespan), measured,
	    m->bubble_rate * 100, peak, bound, pw_fmt_seconds(idle,
	    sizeof idle, m->total_idle));
	tui_header_fit(line, r->w - sw - 2);
	tui_draw_text(w, r->y + 1, r->x, r->w - sw - 2, a, line);
}
