/*
 * report.c - metrics and the family comparison as text, metrics as JSON,
 * and the comparison's rows as data.  Everything here only reads what the
 * simulator and metrics computed.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pipewright.h"
#include "plan.h"

/* Devices per line of the comparison's per-device block: the family
 * column and 8 cells of 10 fit 100 columns for names up to 20. */
#define REPORT_DEVICES_PER_LINE	8
#define REPORT_CELL		10

/* Notes under the table are wrapped at this width. */
#define REPORT_WIDTH		100
#define REPORT_INDENT		4
/* compare warns when the busiest device's work exceeds what a rebalance
 * reaches by more than this share of it. */
#define REPORT_IMBALANCE	0.10

int
pw_metrics_tightest(const struct pw_problem *p, const struct pw_metrics *m,
    int *nover)
{
	double share, best = -1;
	int d, tightest = -1;

	if (nover != NULL)
		*nover = 0;
	for (d = 0; d < m->ndevices; d++) {
		if (!m->device[d].within_limit && nover != NULL)
			(*nover)++;
		if (!isfinite(p->memory[d].limit) || p->memory[d].limit <= 0)
			continue;
		share = m->device[d].peak / p->memory[d].limit;
		if (share > best) {
			best = share;
			tightest = d;
		}
	}
	return tightest;
}

int
pw_metrics_peak_device(const struct pw_metrics *m)
{
	int d, at = 0;

	for (d = 1; d < m->ndevices; d++)
		if (m->device[d].peak > m->device[at].peak)
			at = d;
	return at;
}

static double
report_share(const struct pw_problem *p, const struct pw_metrics *m, int d)
{
	return 100 * (m->device[d].peak / p->memory[d].limit);
}

static void
report_seconds(FILE *fp, const char *label, double seconds)
{
	char buf[32];

	fprintf(fp, "%-13s %s\n", label, pw_fmt_seconds(buf, sizeof buf,
	    seconds));
}

void
pw_metrics_print(FILE *fp, const struct pw_problem *p,
    const struct pw_metrics *m)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	const struct pw_device_metrics *dm;
	int d, nover, t;

	report_seconds(fp, "makespan", m->makespan);
	fprintf(fp, "%-13s %.4f\n", "bubble rate", m->bubble_rate);
	report_seconds(fp, "total idle", m->total_idle);
	report_seconds(fp, "max span", m->max_span);
	report_seconds(fp, "max busy", m->max_busy);

	t = pw_metrics_tightest(p, m, &nover);
	if (t < 0)
		fprintf(fp, "%-13s no limits; largest peak %s\n", "memory",
		    pw_fmt_bytes(b1, sizeof b1,
		    m->device[pw_metrics_peak_device(m)].peak));
	else if (nover == 0)
		fprintf(fp, "%-13s within every limit; tightest device %d at"
		    " %.1f%%\n", "memory", t, report_share(p, m, t));
	else
		fprintf(fp, "%-13s OVER THE LIMIT on %d device%s; worst device"
		    " %d by %s (peak %s, limit %s)\n", "memory", nover,
		    nover == 1 ? "" : "s", t, pw_fmt_bytes(b1, sizeof b1,
		    m->device[t].peak - p->memory[t].limit), pw_fmt_bytes(b2,
		    sizeof b2, m->device[t].peak), pw_fmt_bytes(b3, sizeof b3,
		    p->memory[t].limit));

	fprintf(fp, "\n%-7s %-11s %-11s %-11s %-11s %-11s %s\n", "device",
	    "span", "busy", "idle", "peak", "limit", "use");
	for (d = 0; d < m->ndevices; d++) {
		dm = &m->device[d];
		fprintf(fp, "%-7d %-11s %-11s %-11s %-11s ", d,
		    pw_fmt_seconds(b1, sizeof b1, dm->span),
		    pw_fmt_seconds(b2, sizeof b2, dm->busy),
		    pw_fmt_seconds(b3, sizeof b3, dm->idle),
		    pw_fmt_bytes(b4, sizeof b4, dm->peak));
		if (!isfinite(p->memory[d].limit))
			fprintf(fp, "%-11s -\n", "none");
		else
			fprintf(fp, "%-11s %.1f%%%s\n", pw_fmt_bytes(b5,
			    sizeof b5, p->memory[d].limit),
			    report_share(p, m, d),
			    dm->within_limit ? "" : " OVER");
	}
}

/* A JSON number, or null where JSON has none (infinite, NaN). */
static json_t *
report_json_number(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

struct json_t *
pw_metrics_json(const struct pw_problem *p, const struct pw_metrics *m)
{
	const struct pw_device_metrics *dm;
	json_t *root, *devices, *dev;
	int d;

	root = json_object();
	json_object_set_new(root, "makespan", report_json_number(m->makespan));
	json_object_set_new(root, "bubble_rate",
	    report_json_number(m->bubble_rate));
	json_object_set_new(root, "total_idle",
	    report_json_number(m->total_idle));
	json_object_set_new(root, "max_span", report_json_number(m->max_span));
	json_object_set_new(root, "max_busy", report_json_number(m->max_busy));
	json_object_set_new(root, "feasible", json_boolean(m->feasible));
	devices = json_array();
	for (d = 0; d < m->ndevices; d++) {
		dm = &m->device[d];
		dev = json_object();
		json_object_set_new(dev, "span", report_json_number(dm->span));
		json_object_set_new(dev, "busy", report_json_number(dm->busy));
		json_object_set_new(dev, "idle", report_json_number(dm->idle));
		json_object_set_new(dev, "peak", report_json_number(dm->peak));
		json_object_set_new(dev, "limit",
		    report_json_number(p->memory[d].limit));
		json_object_set_new(dev, "within_limit",
		    json_boolean(dm->within_limit));
		json_array_append_new(devices, dev);
	}
	json_object_set_new(root, "devices", devices);
	return root;
}

int
pw_metrics_print_json(FILE *fp, const struct pw_problem *p,
    const struct pw_metrics *m)
{
	json_t *root = pw_metrics_json(p, m);
	int rc = PW_OK;

	if (json_dumpf(root, fp, JSON_INDENT(2)) != 0 || fputc('\n', fp) == EOF)
		rc = PW_ERR_IO;
	json_decref(root);
	return rc;
}

/* Builds, times and measures ROW's family on P; a family that does not
 * apply (or fails) gets the reason instead. */
static void
report_row_run(struct pw_compare_row *row, const struct pw_problem *p)
{
	const struct pw_problem *used;
	const struct pw_metrics *m;
	struct pw_plan *plan;
	struct pw_error err;
	int t;

	row->tightest = -1;
	if ((row->rc = pw_plan_family(row->family, p, &plan, &err)) != PW_OK) {
		row->why = pw_xstrdup(err.msg);
		return;
	}
	/* The row outlives the plan: its metrics are measured again. */
	used = pw_plan_problem(plan);
	row->nstages = used->nstages;
	row->metrics = pw_metrics_compute(used, pw_plan_timed(plan),
	    pw_plan_timing(plan));
	m = row->metrics;
	row->max_peak = m->device[pw_metrics_peak_device(m)].peak;
	row->tightest = t = pw_metrics_tightest(p, m, &row->nover);
	row->share = t < 0 ? NAN : m->device[t].peak / p->memory[t].limit;
	pw_plan_free(plan);
}

struct pw_compare_row *
pw_compare_rows(const struct pw_problem *p)
{
	struct pw_compare_row *rows;
	size_t i;

	rows = pw_xcalloc(pw_nfamilies, sizeof *rows);
	for (i = 0; i < pw_nfamilies; i++) {
		rows[i].family = &pw_families[i];
		report_row_run(&rows[i], p);
	}
	return rows;
}

void
pw_compare_rows_free(struct pw_compare_row *rows)
{
	size_t i;

	if (rows == NULL)
		return;
	for (i = 0; i < pw_nfamilies; i++) {
		pw_metrics_free(rows[i].metrics);
		free(rows[i].why);
	}
	free(rows);
}

/* What a row without a schedule says it is. */
static const char *
report_verdict(const struct pw_compare_row *row)
{
	return row->rc == PW_ERR_NOT_APPLICABLE ? "not applicable" : "error";
}

/* The status column: "ok", how the schedule breaks a limit, or the verdict
 * that there is none.  Writes into BUF and returns it. */
static const char *
report_status(char *buf, size_t len, const struct pw_problem *p,
    const struct pw_compare_row *row)
{
	char excess[32];
	int nover = row->nover, t = row->tightest;

	if (row->rc != PW_OK)
		return report_verdict(row);
	if (nover == 0)
		return "ok";
	assert(t >= 0);
	pw_fmt_bytes(excess, sizeof excess, row->metrics->device[t].peak -
	    p->memory[t].limit);
	if (nover == 1)
		snprintf(buf, len, "over: d%d by %s", t, excess);
	else
		snprintf(buf, len, "over: %d devices, d%d by %s", nover, t,
		    excess);
	return buf;
}

static void
report_table_line(FILE *fp, int namew, const char *family,
    const char *makespan, const char *bubble, const char *idle,
    const char *peak, const char *share, const char *status)
{
	fprintf(fp, "%-*s %-8s %-7s %-11s %-10s %-10s %s\n", namew, family,
	    makespan, bubble, idle, peak, share, status);
}

static void
report_table(FILE *fp, const struct pw_problem *p,
    const struct pw_compare_row *rows, int namew)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], status[128];
	const struct pw_metrics *m;
	const char *name;
	size_t i;

	report_table_line(fp, namew, "family", "makespan", "bubble",
	    "total idle", "max peak", "peak/limit", "status");
	for (i = 0; i < pw_nfamilies; i++) {
		name = rows[i].family->name;
		if ((m = rows[i].metrics) == NULL) {
			report_table_line(fp, namew, name, "-", "-", "-", "-",
			    "-", report_status(status, sizeof status, p,
			    &rows[i]));
			continue;
		}
		snprintf(b2, sizeof b2, "%.4f", m->bubble_rate);
		if (rows[i].tightest < 0)
			snprintf(b5, sizeof b5, "no limit");
		else
			snprintf(b5, sizeof b5, "d%d %.1f%%", rows[i].tightest,
			    100 * rows[i].share);
		report_table_line(fp, namew, name,
		    pw_fmt_seconds(b1, sizeof b1, m->makespan), b2,
		    pw_fmt_seconds(b3, sizeof b3, m->total_idle),
		    pw_fmt_bytes(b4, sizeof b4, rows[i].max_peak), b5,
		    report_status(status, sizeof status, p, &rows[i]));
	}
}

/* Prints LABEL and TEXT as a paragraph wrapped at REPORT_WIDTH columns,
 * continuation lines indented. */
static void
report_wrap(FILE *fp, const char *label, const char *text)
{
	static const char space[] = " \t\n";
	int col, len;

	col = fprintf(fp, "%s", label);
	for (text += strspn(text, space); *text != '\0';
	    text += strspn(text, space)) {
		len = (int)strcspn(text, space);
		if (col + 1 + len > REPORT_WIDTH && col > REPORT_INDENT) {
			fprintf(fp, "\n%*s", REPORT_INDENT, "");
			col = REPORT_INDENT;
		} else {
			fputc(' ', fp);
			col++;
		}
		col += fprintf(fp, "%.*s", len, text);
		text += len;
	}
	fputc('\n', fp);
}

/* Why each family without a schedule has none. */
static void
report_notes(FILE *fp, const struct pw_problem *p,
    const struct pw_compare_row *rows)
{
	bool first = true;
	char *label, *why;
	size_t i;

	for (i = 0; i < pw_nfamilies; i++) {
		if (rows[i].metrics != NULL && rows[i].nstages == p->nstages)
			continue;
		if (first) {
			fputc('\n', fp);
			first = false;
		}
		if (rows[i].metrics != NULL) {
			label = pw_xasprintf("%s:", rows[i].family->name);
			why = pw_xasprintf("ran on the model split again, %d "
			    "stages (%d per device)", rows[i].nstages,
			    rows[i].nstages / p->devices);
		} else {
			label = pw_xasprintf("%s %s:", rows[i].family->name,
			    report_verdict(&rows[i]));
			why = pw_escape(rows[i].why);
		}
		report_wrap(fp, label, why);
		free(label);
		free(why);
	}
}

/* The lines of the per-device block. */
enum report_line {
	REPORT_LINE_DEVICE,	/* the device names */
	REPORT_LINE_LIMIT,	/* each device's limit */
	REPORT_LINE_PEAK	/* a family's peaks: shares of the limits */
};

/* One line of the per-device block: LABEL, then a cell for each device
 * in [FIRST, LAST); M is the family's metrics on a REPORT_LINE_PEAK. */
static void
report_device_line(FILE *fp, const struct pw_problem *p,
    const struct pw_metrics *m, enum report_line what, const char *label,
    int namew, int first, int last)
{
	char cell[32];
	double limit;
	int d, pad = namew - (int)strlen(label);

	fputs(label, fp);
	for (d = first; d < last; d++) {
		limit = p->memory[d].limit;
		if (what == REPORT_LINE_DEVICE)
			snprintf(cell, sizeof cell, "d%d", d);
		else if (what == REPORT_LINE_LIMIT && !isfinite(limit))
			snprintf(cell, sizeof cell, "none");
		else if (what == REPORT_LINE_LIMIT)
			pw_fmt_bytes(cell, sizeof cell, limit);
		else if (!isfinite(limit))	/* bytes where there is none */
			pw_fmt_bytes(cell, sizeof cell, m->device[d].peak);
		else
			snprintf(cell, sizeof cell, "%.1f%%",
			    report_share(p, m, d));
		/* Padding goes before a cell, so no line ends in blanks. */
		fprintf(fp, "%*s%s", pad > 0 ? pad + 1 : 1, "", cell);
		pad = REPORT_CELL - 1 - (int)strlen(cell);
	}
	fputc('\n', fp);
}

/* Each device's peak as a share of its limit (its bytes where it has
 * none), REPORT_DEVICES_PER_LINE devices to a block. */
static void
report_devices(FILE *fp, const struct pw_problem *p,
    const struct pw_compare_row *rows, int namew)
{
	int first, last;
	size_t i;

	fprintf(fp, "\npeak memory per device (share of its limit; bytes where"
	    " it has none):\n");
	for (first = 0; first < p->devices; first = last) {
		last = first + REPORT_DEVICES_PER_LINE;
		if (last > p->devices)
			last = p->devices;
		fputc('\n', fp);
		report_device_line(fp, p, NULL, REPORT_LINE_DEVICE, "device",
		    namew, first, last);
		report_device_line(fp, p, NULL, REPORT_LINE_LIMIT, "limit",
		    namew, first, last);
		for (i = 0; i < pw_nfamilies; i++) {
			if (rows[i].metrics != NULL)
				report_device_line(fp, p, rows[i].metrics,
				    REPORT_LINE_PEAK, rows[i].family->name,
				    namew, first, last);
		}
	}
}

void
pw_compare_rows_print(FILE *fp, const struct pw_problem *p,
    const struct pw_compare_row *rows)
{
	char *name;
	size_t i;
	int namew = (int)strlen("family");

	for (i = 0; i < pw_nfamilies; i++)
		if ((int)strlen(pw_families[i].name) > namew)
			namew = (int)strlen(pw_families[i].name);
	name = p->name != NULL ? pw_escape(p->name) : NULL;
	fprintf(fp, "%s%s%d devices, %d stages, %d microbatches\n\n",
	    name != NULL ? name : "", name != NULL ? ": " : "",
	    p->devices, p->nstages, p->microbatches);
	free(name);
	report_table(fp, p, rows, namew);
	report_notes(fp, p, rows);
	report_devices(fp, p, rows, namew);
}

void
pw_compare_warn(FILE *fp, const struct pw_problem *p, const char *replan)
{
	int worst;
	double ref, ratio = pw_problem_imbalance(p, &worst, &ref);
	char work[32], best[32], *text;

	if (!(ratio > 1 + REPORT_IMBALANCE))
		return;
	pw_fmt_seconds(work, sizeof work, ratio * ref);
	pw_fmt_seconds(best, sizeof best, ref);
	/* A split of given stages is the file's: only a model's problem can
	 * be split again.  The command goes on a line of its own, whole, to
	 * be copied. */
	if (p->origin != NULL)
		text = pw_xasprintf("device %d's work (f + b + w of its stages "
		    "= %s) is %.0f%% above the bottleneck of the best split on "
		    "this layout (%s); to rebalance the split, run:", worst,
		    work, 100 * (ratio - 1), best);
	else
		text = pw_xasprintf("device %d's work (f + b + w of its stages "
		    "= %s) is %.0f%% above the mean of the %d devices'; its "
		    "stages were given, so to rebalance the split describe the "
		    "model and run:", worst, work, 100 * (ratio - 1),
		    p->devices);
	fputc('\n', fp);
	report_wrap(fp, "warning:", text);
	fprintf(fp, "%*s%s\n", REPORT_INDENT, "", p->origin != NULL ? replan :
	    "pipewright plan --model NAME --hardware NAME --devices P "
	    "--microbatches M");
	free(text);
}

int
pw_compare_best(const struct pw_compare_row *rows)
{
	int best = -1;
	bool fits, best_fits = false;
	size_t i;

	for (i = 0; i < pw_nfamilies; i++) {
		if (rows[i].rc != PW_OK)
			continue;
		fits = rows[i].nover == 0;
		if (best < 0 || (fits && !best_fits) || (fits == best_fits &&
		    rows[i].metrics->makespan < rows[best].metrics->makespan)) {
			best = (int)i;
			best_fits = fits;
		}
	}
	return best;
}

void
pw_compare_print(FILE *fp, const struct pw_problem *p)
{
	struct pw_compare_row *rows = pw_compare_rows(p);

	pw_compare_rows_print(fp, p, rows);
	pw_compare_rows_free(rows);
}
