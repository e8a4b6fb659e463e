/*
 * export_chrome.c - a Chrome/Perfetto trace (the JSON trace event format):
 * one process, a thread per device and per channel carrying "X" events
 * named "F s2.c1 mb5" and coloured by kind, a flow ("s" to "f") for each
 * data dependency that crosses tracks and from each reload's anchor to
 * the reload (category "anchor": the two may be of other microbatches),
 * and each device's memory in GiB
 * as "C" counters beside its limit, a series of its own.
 *
 * Events are written one per line as jansson dumps them, so that a
 * million-op schedule never needs its whole trace as one tree in memory
 * and the file stays readable line by line.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "export.h"

/* Trace times are microseconds: 15 significant digits keep nanoseconds
 * over hours without binary noise such as 1100000.0000000002. */
#define CHROME_DUMP	(JSON_COMPACT | JSON_REAL_PRECISION(15))
#define CHROME_US	1e6
#define CHROME_GIB	1073741824.0

/* Each kind's colour, by enum pw_kind: names the trace viewer reserves
 * (catapult's color_scheme), which Perfetto's JSON import honours too. */
static const char *const chrome_cname[PW_NKINDS] = {
	"rail_load",		/* F: green */
	"rail_response",	/* B: blue */
	"rail_idle",		/* W: orange */
	"rail_animation",	/* BW: red */
	"grey",			/* OFFLOAD */
	"heap_dump_stack_frame",	/* RELOAD: dark grey */
};

struct chrome_out {
	FILE	*fp;
	bool	first;
	bool	unencodable;	/* jansson refused a value */
	long	flows;		/* flow ids given so far */
};

/* Writes EV (taking its reference); NULL means building it failed. */
static void
chrome_emit(struct chrome_out *o, json_t *ev)
{
	if (ev == NULL) {
		o->unencodable = true;
		return;
	}
	fputs(o->first ? "\n" : ",\n", o->fp);
	o->first = false;
	json_dumpf(ev, o->fp, CHROME_DUMP);
	json_decref(ev);
}

static void
chrome_meta(struct chrome_out *o, const char *name, int tid, const char *key,
    json_t *value)
{
	chrome_emit(o, json_pack("{s:s, s:s, s:i, s:i, s:{s:o}}", "name", name,
	    "ph", "M", "pid", 0, "tid", tid, "args", key, value));
}

static void
chrome_counter(struct chrome_out *o, const char *name, int device, double t,
    double bytes)
{
	char buf[48];

	snprintf(buf, sizeof buf, "%s dev %d", name, device);
	chrome_emit(o, json_pack("{s:s, s:s, s:i, s:f, s:{s:f}}", "name", buf,
	    "ph", "C", "pid", 0, "ts", t * CHROME_US, "args", "GiB",
	    bytes / CHROME_GIB));
}

static void
chrome_op(struct chrome_out *o, const struct pw_problem *p, const int *chunks,
    int tid, struct pw_op op, double start, double end)
{
	const struct pw_stage *st = &p->stages[op.stage];
	json_t *args;
	char name[48];

	args = json_pack("{s:i, s:i, s:i, s:s}", "stage", op.stage, "chunk",
	    chunks[op.stage], "mb", op.mb, "kind", pw_kind_name(op.kind));
	if (args != NULL && pw_kind_is_transfer(op.kind)) {
		json_object_set_new(args, "device", json_integer(st->device));
		json_object_set_new(args, "bytes", json_real(st->offload));
	}
	chrome_emit(o, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:f, "
	    "s:o}", "name", pw_view_op_label(name, sizeof name, op, chunks),
	    "cat", pw_kind_name(op.kind), "cname", chrome_cname[op.kind], "ph",
	    "X", "pid", 0, "tid", tid, "ts", start * CHROME_US, "dur",
	    (end - start) * CHROME_US, "args", args));
}

/* A row's thread: devices keep their number, channels follow them, as
 * the resources of struct pw_where are numbered. */
static int
chrome_tid(const struct pw_problem *p, const struct pw_view_row *row)
{
	return row->device >= 0 ? row->device : p->devices + row->channel;
}

/* The midpoint of a timed op that takes time, where a flow binds to it
 * without doubt (its ends may touch a neighbour's); false for others. */
static bool
chrome_mid(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op, double *mid)
{
	double start, end;

	if (!pw_view_times(p, t, op, &start, &end) || !(end > start))
		return false;
	/* Halves first: start + end may overflow. */
	*mid = start / 2 + end / 2;
	return true;
}

/* A flow from each data dependency and the anchor of OP (on track TID)
 * on another track to OP, both ends at their slices' midpoints. */
static void
chrome_flows(struct chrome_out *o, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_where *w, int tid, struct pw_op op)
{
	struct pw_pred preds[PW_MAX_PREDS];
	const char *cat;
	double to, from;
	int n, i, ptid;

	if (!chrome_mid(p, t, op, &to))
		return;
	n = pw_preds(p, s, w, op, preds);
	for (i = 0; i < n; i++) {
		if ((preds[i].kind != PW_PRED_DEP &&
		    preds[i].kind != PW_PRED_ANCHOR) ||
		    !chrome_mid(p, t, preds[i].op, &from))
			continue;
		cat = preds[i].kind == PW_PRED_DEP ? "dep" : "anchor";
		/* A reload anchored at a start may end before its anchor's
		 * midpoint; its own midpoint still lies inside the anchor,
		 * after the anchor's start, and keeps the arrow forward. */
		if (preds[i].kind == PW_PRED_ANCHOR && from > to)
			from = to;
		ptid = w->resource[pw_op_index(p, preds[i].op)];
		if (ptid == tid)
			continue;
		o->flows++;
		chrome_emit(o, json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:f}",
		    "name", cat, "cat", cat, "ph", "s", "id",
		    (json_int_t)o->flows, "pid", 0, "tid", ptid, "ts",
		    from * CHROME_US));
		chrome_emit(o, json_pack("{s:s, s:s, s:s, s:s, s:I, s:i, s:i, "
		    "s:f}", "name", cat, "cat", cat, "ph", "f", "bp", "e",
		    "id", (json_int_t)o->flows, "pid", 0, "tid", tid, "ts",
		    to * CHROME_US));
	}
}

int
pw_export_chrome(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *s, const struct pw_timing *t,
    const struct pw_metrics *mt, const struct pw_export_options *options,
    struct pw_error *err)
{
	struct chrome_out o = { fp, true, false, 0 };
	const struct pw_device_metrics *dm;
	struct pw_view_row *rows;
	struct pw_where *where;
	struct pw_op op;
	char *title, *pname;
	double start, end;
	int *chunks;
	int nrows, r, i, d, rc;

	if ((rc = pw_where_build(p, s, &where, err)) != PW_OK)
		return rc;
	rows = pw_view_rows(p, s, &nrows);
	chunks = pw_view_chunks(p);
	title = pw_view_title(p, s,
	    pw_export_options_or_default(options)->timeline);
	pname = pw_xasprintf("pipewright: %s", title);
	fputs("{\"traceEvents\": [", fp);
	chrome_meta(&o, "process_name", 0, "name", json_string(pname));
	for (r = 0; r < nrows; r++) {
		chrome_meta(&o, "thread_name", chrome_tid(p, &rows[r]), "name",
		    json_string(rows[r].label));
		chrome_meta(&o, "thread_sort_index", chrome_tid(p, &rows[r]),
		    "sort_index", json_integer(chrome_tid(p, &rows[r])));
	}
	for (r = 0; r < nrows; r++) {
		for (i = 0; i < rows[r].seq->len; i++) {
			op = rows[r].seq->ops[i];
			if (pw_view_times(p, t, op, &start, &end))
				chrome_op(&o, p, chunks, chrome_tid(p,
				    &rows[r]), op, start, end);
			chrome_flows(&o, p, s, t, where, chrome_tid(p,
			    &rows[r]), op);
		}
	}
	for (d = 0; d < mt->ndevices; d++) {
		dm = &mt->device[d];
		for (i = 0; i < dm->ncurve; i++)
			chrome_counter(&o, "mem", d, dm->curve[i].t,
			    dm->curve[i].bytes);
		if (isfinite(p->memory[d].limit)) {
			chrome_counter(&o, "limit", d, mt->start,
			    p->memory[d].limit);
			chrome_counter(&o, "limit", d, mt->start + mt->makespan,
			    p->memory[d].limit);
		}
	}
	fputs("\n],\n\"displayTimeUnit\": \"ms\"}\n", fp);
	free(pname);
	free(title);
	free(chunks);
	free(rows);
	pw_where_free(where);
	if (o.unencodable) {
		pw_error_set(err, "chrome trace: a value cannot be encoded (a "
		    "time beyond what microseconds can hold, about 1.8e302 s, "
		    "or a name that is not UTF-8)");
		return PW_ERR_INPUT;
	}
	if (ferror(fp)) {
		pw_error_set(err, "chrome trace: write failed");
		return PW_ERR_IO;
	}
	return PW_OK;
}
