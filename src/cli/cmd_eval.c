/*
 * cmd_eval.c - the eval command: a schedule's metrics, from its orders
 * timed again (or a measured file's measured timeline), with each op's
 * slack in JSON; or its critical path, the chain of constraints that sets
 * the makespan, as a table or JSON; or, --against, a measured run against
 * its prediction.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "plan.h"
#include "cmd.h"

/* Where OP runs, as "device D" or its channel's name ("link0.h2d", as
 * show and the checker name it), into BUF. */
static const char *
cmd_eval_on(char *buf, size_t len, const struct pw_plan *plan,
    struct pw_op op)
{
	const struct pw_problem *p = pw_plan_problem(plan);

	return pw_resource_name(p, pw_plan_where(plan)->resource[pw_op_index(p,
	    op)], buf, len);
}

/* What binds C's start, in words, into BUF. */
static void
cmd_eval_edge(char *buf, size_t len, const struct pw_critical *c)
{
	char name[64], delay[32];

	pw_op_name(name, sizeof name, c->by.op);
	pw_fmt_seconds(delay, sizeof delay, c->by.delay);
	if (!c->bound)
		snprintf(buf, len, "starts at 0");
	else if (c->by.kind == PW_PRED_DEP)
		snprintf(buf, len, "dependency on %s + %s", name, delay);
	else if (c->by.kind == PW_PRED_ANCHOR)
		snprintf(buf, len, "anchor at the %s of %s + %s",
		    c->by.from_start ? "start" : "end", name, delay);
	else
		snprintf(buf, len, "%s order after %s",
		    pw_pred_kind_name(c->by.kind), name);
}

/* What adds up to the last end of PATH[N]: the durations of its ops (but
 * of one whose successor is bound to its start) and the delays of its
 * edges. */
static void
cmd_eval_sums(const struct pw_critical *path, size_t n, double *durations,
    double *delays)
{
	size_t i;

	*durations = *delays = 0;
	for (i = 0; i < n; i++) {
		if (i + 1 == n || !path[i + 1].by.from_start)
			*durations += path[i].end - path[i].start;
		if (path[i].bound)
			*delays += path[i].by.delay;
	}
}

/* The critical path's table: op, on, start, end, bound by. */
#define CMD_EVAL_NCOLS	5

static const char cmd_eval_header[CMD_EVAL_NCOLS][PW_CMD_CELL] = {
	"op", "on", "start", "end", "bound by"
};

/* C's row of the table, into its CMD_EVAL_NCOLS cells ROW. */
static void
cmd_eval_row(char (*row)[PW_CMD_CELL], const struct pw_plan *plan,
    const struct pw_critical *c)
{
	pw_op_name(row[0], PW_CMD_CELL, c->op);
	cmd_eval_on(row[1], PW_CMD_CELL, plan, c->op);
	pw_fmt_seconds(row[2], PW_CMD_CELL, c->start);
	pw_fmt_seconds(row[3], PW_CMD_CELL, c->end);
	cmd_eval_edge(row[4], PW_CMD_CELL, c);
}

/* The critical path as a table, one row per op from first to last, and
 * the total that makes the makespan. */
static void
cmd_eval_print_critical(FILE *fp, const struct pw_plan *plan)
{
	const struct pw_critical *path;
	char (*cells)[PW_CMD_CELL];
	double durations, delays;
	int width[CMD_EVAL_NCOLS];
	char d1[32], d2[32], d3[32];
	size_t i, n;

	path = pw_plan_critical(plan, &n);
	cells = pw_xcalloc((n + 1) * CMD_EVAL_NCOLS, sizeof *cells);
	memcpy(cells, cmd_eval_header, sizeof cmd_eval_header);
	for (i = 0; i < n; i++)
		cmd_eval_row(&cells[(i + 1) * CMD_EVAL_NCOLS], plan, &path[i]);
	pw_cmd_table(fp, (const char (*)[PW_CMD_CELL])cells, n + 1,
	    CMD_EVAL_NCOLS, width);
	free(cells);
	cmd_eval_sums(path, n, &durations, &delays);
	fprintf(fp, "%-*s  durations %s + delays %s = makespan %s\n",
	    width[0], "total", pw_fmt_seconds(d1, sizeof d1, durations),
	    pw_fmt_seconds(d2, sizeof d2, delays), pw_fmt_seconds(d3,
	    sizeof d3, pw_plan_metrics(plan)->makespan));
}

/* OP as a JSON object: its name, kind, stage, microbatch, where it runs
 * and its times in PLAN. */
static json_t *
cmd_eval_json_op(const struct pw_plan *plan, struct pw_op op)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_timing *t = pw_plan_timing(plan);
	size_t k = pw_op_index(p, op);
	int r = pw_plan_where(plan)->resource[k];
	json_t *o = json_object();
	char name[64];

	json_object_set_new(o, "op", json_string(pw_op_name(name,
	    sizeof name, op)));
	json_object_set_new(o, "kind", json_string(pw_kind_name(op.kind)));
	json_object_set_new(o, "stage", json_integer(op.stage));
	json_object_set_new(o, "mb", json_integer(op.mb));
	if (r < p->devices)
		json_object_set_new(o, "device", json_integer(r));
	else
		json_object_set_new(o, "channel", json_integer(r - p->devices));
	json_object_set_new(o, "start", json_real(t->start[k]));
	json_object_set_new(o, "end", json_real(t->end[k]));
	return o;
}

/* Eval's JSON: the metrics, then every op (each device's order, then
 * each channel's) with its slack. */
static json_t *
cmd_eval_json_metrics(const struct pw_plan *plan)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_schedule *sched = pw_plan_timed(plan);
	const double *slack = pw_plan_slack(plan);
	const struct pw_seq *seq;
	json_t *root, *ops, *o;
	int r, i;

	root = pw_metrics_json(p, pw_plan_metrics(plan));
	ops = json_array();
	for (r = 0; r < p->devices + sched->nchannels; r++) {
		seq = pw_schedule_order(sched, r);
		for (i = 0; i < seq->len; i++) {
			o = cmd_eval_json_op(plan, seq->ops[i]);
			json_object_set_new(o, "slack",
			    json_real(slack[pw_op_index(p, seq->ops[i])]));
			json_array_append_new(ops, o);
		}
	}
	json_object_set_new(root, "ops", ops);
	return root;
}

/* The critical path as JSON: the sums that make the makespan, then each
 * op with the edge that binds it (null for the first). */
static json_t *
cmd_eval_json_critical(const struct pw_plan *plan)
{
	const struct pw_critical *path;
	double durations, delays;
	json_t *root, *ops, *o, *by;
	char name[64];
	size_t i, n;

	path = pw_plan_critical(plan, &n);
	cmd_eval_sums(path, n, &durations, &delays);
	root = json_object();
	json_object_set_new(root, "makespan",
	    json_real(pw_plan_metrics(plan)->makespan));
	json_object_set_new(root, "durations", json_real(durations));
	json_object_set_new(root, "delays", json_real(delays));
	ops = json_array();
	for (i = 0; i < n; i++) {
		o = cmd_eval_json_op(plan, path[i].op);
		by = json_null();
		if (path[i].bound) {
			by = json_object();
			json_object_set_new(by, "edge", json_string(
			    pw_pred_kind_name(path[i].by.kind)));
			json_object_set_new(by, "op", json_string(pw_op_name(
			    name, sizeof name, path[i].by.op)));
			json_object_set_new(by, "from", json_string(
			    path[i].by.from_start ? "start" : "end"));
			json_object_set_new(by, "delay",
			    json_real(path[i].by.delay));
		}
		json_object_set_new(o, "bound_by", by);
		json_array_append_new(ops, o);
	}
	json_object_set_new(root, "path", ops);
	return root;
}

/* Whether RUN (a measured file's schedule) holds the ops of PRED (the
 * predicted file's) on P, one pipeline: the orders may differ, not the
 * ops (a fused backward against a split one, an offload).  Else WHY
 * names the first op one holds and the other not. */
static bool
cmd_eval_same_ops(const struct pw_problem *p, const struct pw_schedule *run,
    const struct pw_schedule *pred, char *why, size_t len)
{
	const struct pw_schedule *both[2] = { run, pred };
	unsigned char *held = pw_xcalloc(pw_op_universe(p), 1);
	const struct pw_seq *seq;
	char name[48];
	size_t idx;
	int k, r, i;
	bool same = true;

	for (k = 0; k < 2 && same; k++)
		for (r = 0; same && r < both[k]->ndevices + both[k]->nchannels;
		    r++) {
			seq = pw_schedule_order(both[k], r);
			for (i = 0; same && i < seq->len; i++) {
				idx = pw_op_index(p, seq->ops[i]);
				held[idx] |= (unsigned char)(1u << k);
				/* PRED's ops come second: each must be
				 * RUN's too, and then the counts say all. */
				same = k == 0 || held[idx] == 3;
				if (!same)
					snprintf(why, len, "the run has no %s",
					    pw_op_name(name, sizeof name,
					    seq->ops[i]));
			}
		}
	if (same && pw_schedule_nops(run) != pw_schedule_nops(pred)) {
		for (idx = 0; held[idx] != 1; idx++)
			;
		snprintf(why, len, "the run has %s, the prediction not",
		    pw_op_name(name, sizeof name, pw_op_from_index(p, idx)));
		same = false;
	}
	free(held);
	return same;
}

/* Says on stderr where RUN's orders (MEASURED's) first differ from
 * PRED's (PREDICTED's), if they do: the prediction times PRED's. */
static void
cmd_eval_orders_note(const struct pw_cmd_args *a, const struct pw_plan *run,
    const struct pw_plan *pred)
{
	const struct pw_problem *p = pw_plan_problem(pred);
	const struct pw_schedule *x = pw_plan_schedule(run);
	const struct pw_schedule *y = pw_plan_schedule(pred);
	const struct pw_seq *qx, *qy;
	char on[64], ox[48] = "nothing", oy[48] = "nothing";
	int r, pos;

	if (pw_schedule_same_orders(x, y, &r, &pos))
		return;
	if (r < 0) {
		pw_cmd_say("eval: %s ran on other links than %s (%d channels, "
		    "against %d): the prediction times %s's",
		    pw_cmd_label(a->pos[0]), pw_cmd_label(a->against),
		    x->nchannels, y->nchannels, pw_cmd_label(a->against));
		return;
	}
	qx = pw_schedule_order(x, r);
	qy = pw_schedule_order(y, r);
	pw_resource_name(p, r, on, sizeof on);
	if (pos < qx->len)
		pw_op_name(ox, sizeof ox, qx->ops[pos]);
	if (pos < qy->len)
		pw_op_name(oy, sizeof oy, qy->ops[pos]);
	pw_cmd_say("eval: %s ran other orders than %s (%s's op %d: %s, "
	    "against %s): the prediction times %s's", pw_cmd_label(a->pos[0]),
	    pw_cmd_label(a->against), on, pos, ox, oy,
	    pw_cmd_label(a->against));
}

/* eval --against PREDICTED MEASURED: the measured run of A->pos[0]
 * against the simulation of the schedule file PREDICTED. */
static int
cmd_eval_against(const struct pw_cmd_args *a)
{
	struct pw_measured_cmp cmp;
	struct pw_measured *m = NULL;
	struct pw_plan *plan = NULL, *run = NULL;
	struct pw_error err;
	char why[128];
	int status = PW_EXIT_OK, rc;

	if (a->family != NULL || a->critical || a->predicted) {
		pw_cmd_say("eval: --against takes no --family, --critical or"
		    " --predicted (try 'pipewright eval --help')");
		return PW_EXIT_INPUT;
	}
	if ((rc = pw_plan_read(a->against, &plan, NULL, NULL, &err)) !=
	    PW_OK || (rc = pw_plan_read_run(a->pos[0], &run, &m, &err)) !=
	    PW_OK) {
		pw_cmd_say("%s", err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	if (m == NULL) {
		pw_cmd_say("eval: %s has no measured run (launch -o writes "
		    "one)", pw_cmd_label(a->pos[0]));
		status = PW_EXIT_INPUT;
		goto out;
	}
	/* A run's costs are its own workload's; only its pipeline must be
	 * the predicted one's. */
	if (pw_cmd_pipeline_other(pw_plan_problem(run),
	    pw_plan_problem(plan), "against", why, sizeof why)) {
		pw_cmd_say("eval: %s is a run of another pipeline than %s's "
		    "(%s): --against takes the schedule it ran",
		    pw_cmd_label(a->pos[0]), pw_cmd_label(a->against), why);
		status = PW_EXIT_INPUT;
		goto out;
	}
	if (!cmd_eval_same_ops(pw_plan_problem(plan), pw_plan_schedule(run),
	    pw_plan_schedule(plan), why, sizeof why)) {
		pw_cmd_say("eval: %s is a run of other ops than %s's (%s): "
		    "--against takes the schedule it ran",
		    pw_cmd_label(a->pos[0]), pw_cmd_label(a->against), why);
		status = PW_EXIT_INPUT;
		goto out;
	}
	if ((rc = pw_measured_compare(pw_plan_problem(plan),
	    pw_plan_schedule(plan), pw_plan_timing(plan), pw_plan_metrics(plan),
	    m, &cmp, &err)) != PW_OK) {
		pw_cmd_say("eval: %s against %s: %s", pw_cmd_label(a->pos[0]),
		    pw_cmd_label(a->against), err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	cmd_eval_orders_note(a, run, plan);
	if (a->json)
		status = pw_cmd_json_print(stdout, pw_cmd_measured_json(&cmp),
		    "eval: cannot write the comparison to stdout");
	else {
		printf("%s measured against the prediction of %s on its "
		    "problem\n\n", pw_cmd_label(a->pos[0]),
		    pw_cmd_label(a->against));
		pw_cmd_measured_print(stdout, &cmp, 0);
	}
	pw_measured_cmp_free(&cmp);
out:
	pw_measured_free(m);
	pw_plan_free(run);
	pw_plan_free(plan);
	return status;
}

int
pw_cmd_eval(const struct pw_cmd_args *a)
{
	struct pw_cmd_view v = { 0 };
	struct pw_plan *plan = NULL;
	json_t *root;
	int status;

	if (a->against != NULL)
		return cmd_eval_against(a);
	/* The critical path and the slack are the simulator's. */
	if ((status = pw_cmd_view_plan(a, !a->critical, &plan, &v)) !=
	    PW_EXIT_OK)
		goto out;
	if (a->critical && a->json)
		status = pw_cmd_json_print(stdout, cmd_eval_json_critical(plan),
		    "eval: cannot write the critical path to stdout");
	else if (a->critical)
		cmd_eval_print_critical(stdout, plan);
	else if (a->json && v.own_metrics != NULL) {
		root = pw_metrics_json(pw_plan_problem(plan), v.metrics);
		json_object_set_new(root, "measured", json_string(v.head));
		status = pw_cmd_json_print(stdout, root,
		    "eval: cannot write the metrics to stdout");
	} else if (a->json)
		status = pw_cmd_json_print(stdout, cmd_eval_json_metrics(plan),
		    "eval: cannot write the metrics to stdout");
	else {
		if (v.head[0] != '\0')
			printf("%s\n", v.head);
		pw_metrics_print(stdout, pw_plan_problem(plan), v.metrics);
	}
out:
	pw_cmd_view_free(&v);
	pw_plan_free(plan);
	return status;
}
