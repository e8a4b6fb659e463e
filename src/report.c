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
		share = pw_metrics_share(p, m, d);
		if (share > best) {
			best = share;
			tightest = d;
		}
	}
	return tightest;
}

double
pw_metrics_share(const struct pw_problem *p, const struct pw_metrics *m,
    int d)
{
	double peak = m->device[d].peak, limit = p->memory[d].limit;

	if (!isfinite(limit))
		return NAN;
	if (limit > 0)
		return peak / limit;
	return peak > 0 ? INFINITY : 1;
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
	return 100 * pw_metrics_share(p, m, d);
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
	row->share = t < 0 ? NAN : pw_metrics_share(p, m, t);
	pw_plan_free(plan);
}

struct pw_compare_row *
pw_compare_rows(const struct pw_problem *p, pw_compare_progress_fn *progress,
    void *arg)
{
	struct pw_compare_row *rows;
	size_t i;
	bool go = true;

	rows = pw_xcalloc(pw_nfamilies, sizeof *rows);
	for (i = 0; i < pw_nfamilies; i++) {
		rows[i].family = &pw_families[i];
		if (go && progress != NULL)
			go = progress(arg, p, i);
		if (go)
			report_row_run(&rows[i], p);
		else {
			rows[i].rc = PW_ERR_CANCELLED;
			rows[i].why = pw_xstrdup("cancelled");
			rows[i].tightest = -1;
		}
	}
	if (go && progress != NULL)
		progress(arg, p, pw_nfamilies);
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

const char *const pw_compare_sorts[PW_COMPARE_NSORTS] = {
	"makespan", "memory", "bubble", "name"
};

void
pw_table_print(FILE *fp, const char (*cell)[PW_TABLE_CELL], size_t nrows,
    int ncols, int *widths)
{
	int *width = pw_xcalloc((size_t)ncols, sizeof *width), j;
	size_t i;

	for (i = 0; i < nrows; i++)
		for (j = 0; j < ncols; j++)
			if ((int)strlen(cell[i * ncols + j]) > width[j])
				width[j] = (int)strlen(cell[i * ncols + j]);
	for (i = 0; i < nrows; i++) {
		for (j = 0; j < ncols - 1; j++)
			fprintf(fp, "%-*s  ", width[j], cell[i * ncols + j]);
		fprintf(fp, "%s\n", cell[i * ncols + j]);
	}
	if (widths != NULL)
		memcpy(widths, width, (size_t)ncols * sizeof *width);
	free(width);
}

/* All devices' idle time over devices x makespan, as plan's idle share. */
static double
report_idle_share(const struct pw_metrics *m)
{
	return m->makespan > 0 ? m->total_idle / ((double)m->ndevices *
	    m->makespan) : 0;
}

/* ROW's key under SORT, smaller first. */
static double
report_key(const struct pw_compare_row *row, enum pw_compare_sort sort)
{
	switch (sort) {
	case PW_COMPARE_MEMORY:
		return row->max_peak;
	case PW_COMPARE_BUBBLE:
		return row->metrics->bubble_rate;
	default:
		return row->metrics->makespan;
	}
}

/* Whether row A goes after row B under SORT: rows without a schedule
 * last, equal keys in the registry's order (the caller's insertion keeps
 * it). */
static bool
report_after(const struct pw_compare_row *a, const struct pw_compare_row *b,
    enum pw_compare_sort sort)
{
	if ((a->metrics == NULL) != (b->metrics == NULL))
		return a->metrics == NULL;
	if (sort == PW_COMPARE_NAME)
		return strcmp(a->family->name, b->family->name) > 0;
	return a->metrics != NULL && report_key(a, sort) > report_key(b, sort);
}

/* ORDER[pw_nfamilies]: the rows' indices sorted by SORT (an insertion
 * sort: stable, and the registry is short). */
static void
report_order(const struct pw_compare_row *rows, enum pw_compare_sort sort,
    size_t *order)
{
	size_t i, j, k;

	for (i = 0; i < pw_nfamilies; i++) {
		k = i;
		for (j = i; j > 0 && report_after(&rows[order[j - 1]], &rows[k],
		    sort); j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
}

/* The table's columns. */
enum {
	REPORT_FAMILY, REPORT_MAKESPAN, REPORT_BUBBLE, REPORT_IDLE_SHARE,
	REPORT_IDLE, REPORT_PEAK, REPORT_SHARE, REPORT_STATUS, REPORT_NCOLS
};

static const char report_header[REPORT_NCOLS][PW_TABLE_CELL] = {
	"family", "makespan", "bubble", "idle share", "total idle", "max peak",
	"peak/limit", "status"
};

/* ROW's cells of the table into CELL[REPORT_NCOLS]. */
static void
report_cells(char (*cell)[PW_TABLE_CELL], const struct pw_problem *p,
    const struct pw_compare_row *row)
{
	const struct pw_metrics *m = row->metrics;
	char status[PW_TABLE_CELL];
	int j;

	snprintf(cell[REPORT_FAMILY], PW_TABLE_CELL, "%s", row->family->name);
	snprintf(cell[REPORT_STATUS], PW_TABLE_CELL, "%s", report_status(
	    status, sizeof status, p, row));
	if (m == NULL) {
		for (j = REPORT_MAKESPAN; j < REPORT_STATUS; j++)
			snprintf(cell[j], PW_TABLE_CELL, "-");
		return;
	}
	pw_fmt_seconds(cell[REPORT_MAKESPAN], PW_TABLE_CELL, m->makespan);
	snprintf(cell[REPORT_BUBBLE], PW_TABLE_CELL, "%.4f", m->bubble_rate);
	snprintf(cell[REPORT_IDLE_SHARE], PW_TABLE_CELL, "%.1f%%",
	    100 * report_idle_share(m));
	pw_fmt_seconds(cell[REPORT_IDLE], PW_TABLE_CELL, m->total_idle);
	pw_fmt_bytes(cell[REPORT_PEAK], PW_TABLE_CELL, row->max_peak);
	if (row->tightest < 0)
		snprintf(cell[REPORT_SHARE], PW_TABLE_CELL, "no limit");
	else
		snprintf(cell[REPORT_SHARE], PW_TABLE_CELL, "d%d %.1f%%",
		    row->tightest, 100 * row->share);
}

static void
report_table(FILE *fp, const struct pw_problem *p,
    const struct pw_compare_row *rows, const size_t *order)
{
	char (*cell)[PW_TABLE_CELL];
	size_t i;

	cell = pw_xcalloc((pw_nfamilies + 1) * REPORT_NCOLS, sizeof *cell);
	memcpy(cell, report_header, sizeof report_header);
	for (i = 0; i < pw_nfamilies; i++)
		report_cells(&cell[(i + 1) * REPORT_NCOLS], p, &rows[order[i]]);
	pw_table_print(fp, (const char (*)[PW_TABLE_CELL])cell,
	    pw_nfamilies + 1, REPORT_NCOLS, NULL);
	free(cell);
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
    const struct pw_compare_row *rows, const size_t *order)
{
	const struct pw_compare_row *row;
	bool first = true;
	char *label, *why;
	size_t i;

	for (i = 0; i < pw_nfamilies; i++) {
		row = &rows[order[i]];
		if (row->metrics != NULL && row->nstages == p->nstages)
			continue;
		if (first) {
			fputc('\n', fp);
			first = false;
		}
		if (row->metrics != NULL) {
			label = pw_xasprintf("%s:", row->family->name);
			why = pw_xasprintf("ran on the model split again, %d "
			    "stages (%d per device)", row->nstages,
			    row->nstages / p->devices);
		} else {
			label = pw_xasprintf("%s %s:", row->family->name,
			    report_verdict(row));
			why = pw_escape(row->why);
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
    const struct pw_compare_row *rows, const size_t *order, int namew)
{
	const struct pw_compare_row *row;
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
			row = &rows[order[i]];
			if (row->metrics != NULL)
				report_device_line(fp, p, row->metrics,
				    REPORT_LINE_PEAK, row->family->name,
				    namew, first, last);
		}
	}
}

/* The first line: the best schedule within every limit, or that none
 * keeps them. */
static void
report_best(FILE *fp, const struct pw_compare_row *rows)
{
	int best = pw_compare_best(rows);
	char buf[32];

	if (best >= 0 && rows[best].nover == 0)
		fprintf(fp, "best within every limit: %s (makespan %s)\n",
		    rows[best].family->name, pw_fmt_seconds(buf, sizeof buf,
		    rows[best].metrics->makespan));
	else
		fprintf(fp, "best within every limit: none (%s)\n", best < 0 ?
		    "no family builds a schedule" : "every schedule is over "
		    "a memory limit");
}

static void
report_text(FILE *fp, const struct pw_problem *p,
    const struct pw_compare_row *rows, const size_t *order)
{
	char *name, counts[96];
	size_t i;
	int namew = (int)strlen("family");

	for (i = 0; i < pw_nfamilies; i++)
		if ((int)strlen(pw_families[i].name) > namew)
			namew = (int)strlen(pw_families[i].name);
	report_best(fp, rows);
	name = p->name != NULL ? pw_escape(p->name) : NULL;
	fprintf(fp, "%s%s%s\n\n", name != NULL ? name : "",
	    name != NULL ? ": " : "", pw_problem_counts(p, counts,
	    sizeof counts));
	free(name);
	report_table(fp, p, rows, order);
	report_notes(fp, p, rows, order);
	report_devices(fp, p, rows, order, namew);
}

/* What a row's status is in one word for the machine forms. */
static const char *
report_state(const struct pw_compare_row *row)
{
	if (row->rc != PW_OK)
		return row->rc == PW_ERR_NOT_APPLICABLE ? "not-applicable" :
		    "error";
	return row->nover == 0 ? "ok" : "over";
}

static json_t *
report_json(const struct pw_problem *p, const struct pw_compare_row *rows,
    const size_t *order, enum pw_compare_sort sort)
{
	const struct pw_compare_row *row;
	const struct pw_metrics *m;
	json_t *root, *list, *o, *peaks;
	size_t i;
	int best = pw_compare_best(rows), d;

	root = json_object();
	json_object_set_new(root, "problem", p->name != NULL ?
	    json_string(p->name) : json_null());
	json_object_set_new(root, "devices", json_integer(p->devices));
	json_object_set_new(root, "stages", json_integer(p->nstages));
	json_object_set_new(root, "microbatches",
	    json_integer(p->microbatches));
	json_object_set_new(root, "sort", json_string(pw_compare_sorts[sort]));
	json_object_set_new(root, "best", best >= 0 && rows[best].nover == 0 ?
	    json_string(rows[best].family->name) : json_null());
	list = json_array();
	for (i = 0; i < pw_nfamilies; i++) {
		row = &rows[order[i]];
		m = row->metrics;
		o = json_object();
		json_object_set_new(o, "family", json_string(row->family->name));
		json_object_set_new(o, "status", json_string(report_state(row)));
		json_object_set_new(o, "reason", row->why != NULL ?
		    json_string(row->why) : json_null());
		if (m != NULL) {
			json_object_set_new(o, "stages",
			    json_integer(row->nstages));
			json_object_set_new(o, "makespan",
			    report_json_number(m->makespan));
			json_object_set_new(o, "bubble_rate",
			    report_json_number(m->bubble_rate));
			json_object_set_new(o, "idle_share",
			    report_json_number(report_idle_share(m)));
			json_object_set_new(o, "total_idle",
			    report_json_number(m->total_idle));
			json_object_set_new(o, "max_peak",
			    report_json_number(row->max_peak));
			json_object_set_new(o, "tightest_device", row->tightest <
			    0 ? json_null() : json_integer(row->tightest));
			json_object_set_new(o, "peak_share",
			    report_json_number(row->share));
			json_object_set_new(o, "over_devices",
			    json_integer(row->nover));
			peaks = json_array();
			for (d = 0; d < m->ndevices; d++)
				json_array_append_new(peaks, report_json_number(
				    m->device[d].peak));
			json_object_set_new(o, "peaks", peaks);
		}
		json_array_append_new(list, o);
	}
	json_object_set_new(root, "families", list);
	return root;
}

/* One CSV field as RFC 4180 quotes it: in double quotes, inner ones
 * doubled, when it holds a comma, a quote or a line break. */
static void
report_csv_field(FILE *fp, const char *s, bool last)
{
	if (strpbrk(s, ",\"\r\n") == NULL)
		fputs(s, fp);
	else {
		fputc('"', fp);
		for (; *s != '\0'; s++) {
			if (*s == '"')
				fputc('"', fp);
			fputc(*s, fp);
		}
		fputc('"', fp);
	}
	fputs(last ? "\r\n" : ",", fp);
}

static const char *const report_csv_header[] = {
	"family", "status", "makespan_s", "bubble_rate", "idle_share",
	"total_idle_s", "max_peak_bytes", "tightest_device", "peak_share",
	"over_devices", "reason"
};
#define REPORT_CSV_NCOLS \
	(sizeof report_csv_header / sizeof report_csv_header[0])

/* Numbers in full (%.17g), empty where a row has none. */
static void
report_csv(FILE *fp, const struct pw_compare_row *rows, const size_t *order)
{
	char cell[REPORT_CSV_NCOLS][64];
	const struct pw_compare_row *row;
	const struct pw_metrics *m;
	size_t i, j;

	for (j = 0; j < REPORT_CSV_NCOLS; j++)
		report_csv_field(fp, report_csv_header[j],
		    j + 1 == REPORT_CSV_NCOLS);
	for (i = 0; i < pw_nfamilies; i++) {
		row = &rows[order[i]];
		memset(cell, 0, sizeof cell);
		if ((m = row->metrics) != NULL) {
			snprintf(cell[2], sizeof cell[2], "%.17g", m->makespan);
			snprintf(cell[3], sizeof cell[3], "%.17g",
			    m->bubble_rate);
			snprintf(cell[4], sizeof cell[4], "%.17g",
			    report_idle_share(m));
			snprintf(cell[5], sizeof cell[5], "%.17g",
			    m->total_idle);
			snprintf(cell[6], sizeof cell[6], "%.17g",
			    row->max_peak);
			if (row->tightest >= 0) {
				snprintf(cell[7], sizeof cell[7], "%d",
				    row->tightest);
				snprintf(cell[8], sizeof cell[8], "%.17g",
				    row->share);
			}
			snprintf(cell[9], sizeof cell[9], "%d", row->nover);
		}
		report_csv_field(fp, row->family->name, false);
		report_csv_field(fp, report_state(row), false);
		for (j = 2; j < REPORT_CSV_NCOLS - 1; j++)
			report_csv_field(fp, cell[j], false);
		report_csv_field(fp, row->why != NULL ? row->why : "", true);
	}
}

int
pw_compare_rows_print(FILE *fp, const struct pw_problem *p,
    const struct pw_compare_row *rows, enum pw_compare_sort sort,
    enum pw_compare_form form)
{
	size_t *order = pw_xcalloc(pw_nfamilies, sizeof *order);
	int rc = PW_OK;

	report_order(rows, sort, order);
	if (form == PW_COMPARE_JSON)
		rc = pw_json_print(fp, report_json(p, rows, order, sort));
	else if (form == PW_COMPARE_CSV)
		report_csv(fp, rows, order);
	else
		report_text(fp, p, rows, order);
	free(order);
	return rc == PW_OK && ferror(fp) ? PW_ERR_IO : rc;
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
