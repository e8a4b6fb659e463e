/*
 * cmd_launch.c - the commands of the runtime: launch (a schedule run for
 * real, measured and compared with its prediction) and calibrate (a
 * problem's costs fitted to measured runs); and the comparison of a
 * measured run with its prediction that launch and eval --against print.
 */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "plan.h"
#include "runtime.h"
#include "cmd.h"
#include "pwlua.h"
#include "solver.h"

/* The ops launch lists against their prediction. */
#define CMD_LAUNCH_TOP_OPS	5

/* measured / predicted as a cell, "-" without a prediction; three
 * decimals, or three digits far from 1 (an uncalibrated problem's). */
static void
cmd_launch_ratio(char *buf, size_t len, double measured, double predicted)
{
	double r = measured / predicted;

	if (!(predicted > 0) || !isfinite(measured))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, r >= 0.01 && r < 1000 ? "%.3f" : "%.4g", r);
}

/* One row of the step-and-devices table: NAME, the two values (seconds
 * or, with BYTES, bytes) and their ratio. */
static void
cmd_launch_row(char (*row)[PW_CMD_CELL], const char *name, double measured,
    double predicted, bool bytes)
{
	snprintf(row[0], PW_CMD_CELL, "%s", name);
	if (bytes) {
		pw_fmt_bytes(row[1], PW_CMD_CELL, measured);
		pw_fmt_bytes(row[2], PW_CMD_CELL, predicted);
	} else {
		pw_fmt_seconds(row[1], PW_CMD_CELL, measured);
		pw_fmt_seconds(row[2], PW_CMD_CELL, predicted);
	}
	cmd_launch_ratio(row[3], PW_CMD_CELL, measured, predicted);
}

void
pw_cmd_measured_print(FILE *fp, const struct pw_measured_cmp *cmp,
    size_t nops)
{
	static const char head[4][PW_CMD_CELL] = { "", "measured", "predicted",
	    "ratio" };
	static const char ophead[5][PW_CMD_CELL] = { "op", "device",
	    "measured", "predicted", "ratio" };
	char (*cells)[PW_CMD_CELL], name[64];
	size_t i, nrows;
	int d;

	nrows = 2 + 2 * (size_t)cmp->devices;
	cells = pw_xcalloc(nrows * 4, sizeof *cells);
	memcpy(cells, head, sizeof head);
	cmd_launch_row(&cells[4], "step time", cmp->step_measured,
	    cmp->step_predicted, false);
	for (d = 0; d < cmp->devices; d++) {
		snprintf(name, sizeof name, "device %d busy", d);
		cmd_launch_row(&cells[(2 + 2 * (size_t)d) * 4], name,
		    cmp->busy_measured[d], cmp->busy_predicted[d], false);
		snprintf(name, sizeof name, "device %d peak", d);
		cmd_launch_row(&cells[(3 + 2 * (size_t)d) * 4], name,
		    cmp->peak_measured[d], cmp->peak_predicted[d], true);
	}
	fprintf(fp, "measured against predicted:\n");
	pw_cmd_table(fp, (const char (*)[PW_CMD_CELL])cells, nrows, 4, NULL);
	free(cells);

	if (nops == 0 || nops > cmp->nops)
		nops = cmp->nops;
	cells = pw_xcalloc((nops + 1) * 5, sizeof *cells);
	memcpy(cells, ophead, sizeof ophead);
	for (i = 0; i < nops; i++) {
		const struct pw_op_error *e = &cmp->ops[i];
		char (*row)[PW_CMD_CELL] = &cells[(i + 1) * 5];

		pw_op_name(row[0], PW_CMD_CELL, e->op);
		snprintf(row[1], PW_CMD_CELL, "%d", e->device);
		pw_fmt_seconds(row[2], PW_CMD_CELL, e->measured);
		pw_fmt_seconds(row[3], PW_CMD_CELL, e->predicted);
		cmd_launch_ratio(row[4], PW_CMD_CELL, e->measured, e->predicted);
	}
	fprintf(fp, "\n%s:\n", nops == cmp->nops ? "ops by error" :
	    "the ops that differ most");
	pw_cmd_table(fp, (const char (*)[PW_CMD_CELL])cells, nops + 1, 5, NULL);
	free(cells);
	fprintf(fp, "\nmean absolute error  %.1f%% of the predicted durations"
	    " (%zu ops)\n", 100 * cmp->mean_abs_error, cmp->nops);
}

json_t *
pw_cmd_measured_json(const struct pw_measured_cmp *cmp)
{
	json_t *root = json_object(), *devices = json_array(),
	    *ops = json_array(), *o;
	char name[64];
	size_t i;
	int d;

	json_object_set_new(root, "step_measured",
	    json_real(cmp->step_measured));
	json_object_set_new(root, "step_predicted",
	    json_real(cmp->step_predicted));
	for (d = 0; d < cmp->devices; d++) {
		o = json_object();
		json_object_set_new(o, "device", json_integer(d));
		json_object_set_new(o, "busy_measured",
		    json_real(cmp->busy_measured[d]));
		json_object_set_new(o, "busy_predicted",
		    json_real(cmp->busy_predicted[d]));
		json_object_set_new(o, "peak_measured",
		    json_real(cmp->peak_measured[d]));
		json_object_set_new(o, "peak_predicted",
		    json_real(cmp->peak_predicted[d]));
		json_array_append_new(devices, o);
	}
	json_object_set_new(root, "devices", devices);
	for (i = 0; i < cmp->nops; i++) {
		const struct pw_op_error *e = &cmp->ops[i];

		o = json_object();
		json_object_set_new(o, "op", json_string(pw_op_name(name,
		    sizeof name, e->op)));
		json_object_set_new(o, "device", json_integer(e->device));
		json_object_set_new(o, "measured", json_real(e->measured));
		json_object_set_new(o, "predicted", json_real(e->predicted));
		json_object_set_new(o, "measured_start",
		    json_real(e->measured_start));
		json_object_set_new(o, "predicted_start",
		    json_real(e->predicted_start));
		json_array_append_new(ops, o);
	}
	json_object_set_new(root, "ops", ops);
	json_object_set_new(root, "mean_abs_error",
	    json_real(cmp->mean_abs_error));
	return root;
}

/* ------------------------------------------------------------------ */
/* launch                                                              */

/* What a launch runs and what it predicts, rank 0's; one cleanup. */
struct cmd_launch_run {
	struct pw_plan *plan;		/* the schedule and its problem */
	const char *family;		/* the family chosen or NAMED */
	char *named;			/* a schedule file's family */
	struct pw_problem *input;	/* a problem to choose a family for */
	struct pw_measured *recorded;	/* a measured file's run */
	struct pw_workload work;
	struct pw_problem *problem;	/* the workload's own */
	struct pw_plan *pred;		/* the schedule on PROBLEM */
	struct pw_pin *pins;		/* a schedule file's, kept in -o */
	size_t	npins;
};

static void
cmd_launch_run_free(struct cmd_launch_run *r)
{
	pw_plan_free(r->plan);
	free(r->named);
	pw_problem_free(r->input);
	pw_measured_free(r->recorded);
	pw_workload_clear(&r->work);
	pw_problem_free(r->problem);
	pw_plan_free(r->pred);
	free(r->pins);
}

/* The best family's plan for the workload's problem R->problem, whose
 * bytes and limits are what the run keeps, into R. */
static int
cmd_launch_best(const struct pw_cmd_args *a, struct cmd_launch_run *r)
{
	struct pw_cmd_compare_say say;
	struct pw_compare_row *rows;
	struct pw_error err;
	int best, rc;

	pw_cmd_compare_say_init(&say, "launch");
	rows = pw_compare_rows(r->problem, pw_cmd_compare_progress, &say);
	if ((best = pw_compare_best(rows)) < 0) {
		pw_cmd_say("launch: no schedule family builds a schedule for"
		    " the workload of %s (%s)",
		    pw_cmd_input_label(a), rows[0].why);
		pw_compare_rows_free(rows);
		return PW_EXIT_INPUT;
	}
	pw_compare_rows_free(rows);
	r->family = pw_families[best].name;
	if ((rc = pw_plan_family(&pw_families[best], r->problem, &r->plan,
	    &err)) != PW_OK) {
		pw_cmd_say("launch: %s on %s: %s", r->family,
		    pw_cmd_input_label(a), err.msg);
		return pw_cmd_status(rc);
	}
	return PW_EXIT_OK;
}

/* The schedule file PATH's plan into R, its pins checked and its
 * measured run kept; or, without ops, its problem in R->input. */
static int
cmd_launch_file(const char *path, struct cmd_launch_run *r)
{
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_pin *pins = NULL;
	size_t nops = 0, npins = 0;
	struct pw_error err;
	const char *built_by;
	char why[160], *family = NULL;
	int rc;

	if ((rc = pw_file_read_pins(path, &problem, &ops, &nops, &pins, &npins,
	    &family, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	/* A problem file; a schedule file without ops is refused below. */
	if (ops == NULL) {
		r->input = problem;
		return PW_EXIT_OK;
	}
	rc = pw_plan_from_timed(problem, ops, nops, family, pw_cmd_label(path),
	    &r->plan, &err);
	/* It runs the orders; stored times that differ are said, as eval
	 * and show say them. */
	if (rc == PW_OK)
		pw_cmd_compare_times(r->plan, path, ops, nops);
	free(ops);
	if (rc != PW_OK) {
		free(pins);
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	built_by = pw_plan_timed(r->plan)->family;
	r->family = r->named = built_by != NULL ? pw_xasprintf("%s (from %s)",
	    built_by, pw_cmd_label(path)) : pw_xasprintf("%s (no family "
	    "recorded)", pw_cmd_label(path));
	if (!pw_pins_hold(pw_plan_problem(r->plan), pw_plan_timing(r->plan),
	    pins, npins, why, sizeof why)) {
		free(pins);
		pw_cmd_say("launch: %s: the schedule breaks its %s",
		    pw_cmd_label(path), why);
		return PW_EXIT_INPUT;
	}
	r->pins = pins;
	r->npins = npins;
	if ((rc = pw_measured_read(path, &r->recorded, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	return PW_EXIT_OK;
}

/* Says on stderr when the schedule of file A->pos[0], PLAN, breaks its
 * own problem's memory limits: the run keeps the workload's bytes, which
 * --memory-limit bounds, so it runs all the same. */
static void
cmd_launch_limits_note(const struct pw_cmd_args *a, const struct pw_plan *plan)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_metrics *m = pw_plan_metrics(plan);
	char peak[32], lim[32];
	int nover, d = pw_metrics_tightest(p, m, &nover);

	if (nover == 0)
		return;
	pw_cmd_say("launch: %s breaks its problem's memory limit on %d "
	    "device%s (device %d: peak %s, limit %s); the run keeps the "
	    "workload's bytes, which --memory-limit bounds",
	    pw_cmd_label(a->pos[0]), nover, nover == 1 ? "" : "s", d,
	    pw_fmt_bytes(peak, sizeof peak, m->device[d].peak),
	    pw_fmt_bytes(lim, sizeof lim, p->memory[d].limit));
}

/* What A's input runs: a schedule file's plan, --family's, or a problem
 * (R->input) whose family is chosen on its workload. */
static int
cmd_launch_plan(const struct pw_cmd_args *a, struct cmd_launch_run *r)
{
	const char *path = a->pos[0];
	struct pw_error err;
	bool named = a->model[PW_CMD_M_MODEL] == NULL && path != NULL;
	bool csv = named && pw_torch_is_csv(path);
	bool json = named && !csv && !pwlua_is_script(path);
	int rc, status;

	if (a->family != NULL) {
		r->family = a->family;
		/* Another family on a measured file's problem runs on the
		 * workload it recorded, as the file's own schedule would. */
		if (json && (rc = pw_measured_read(path, &r->recorded,
		    &err)) != PW_OK) {
			pw_cmd_say("%s", err.msg);
			return pw_cmd_status(rc);
		}
		return pw_cmd_plan_build(a, &r->plan);
	}
	if (!json && !csv) {
		if ((r->input = pw_cmd_problem_load(a, NULL)) == NULL)
			return PW_EXIT_INPUT;
		return PW_EXIT_OK;
	}
	if (csv) {
		r->family = r->named = pw_xasprintf("%s (a PyTorch schedule"
		    " CSV)", pw_cmd_label(path));
		status = pw_cmd_csv_plan(a, path, &r->plan);
	} else
		status = cmd_launch_file(path, r);
	/* A problem file gives no plan yet: its family is chosen on the
	 * workload's problem, within its limits. */
	if (status == PW_EXIT_OK && r->plan != NULL)
		cmd_launch_limits_note(a, r->plan);
	return status;
}

/* The workload of FROM into R->work: a measured file's recorded one
 * (saying so), else pw_workload_for's default, with what --workload
 * sets in place of its keys. */
static int
cmd_launch_workload(const struct pw_cmd_args *a, enum pw_rt_backend backend,
    const struct pw_problem *from, struct cmd_launch_run *r)
{
	struct pw_workload given = { 0 }, base = { 0 };
	const struct pw_workload *use = NULL;
	struct pw_error err;
	int rc;

	if (a->workload != NULL) {
		/* The keys it does not set keep what would run without it. */
		if (r->recorded != NULL)
			rc = pw_workload_parse(a->workload,
			    &r->recorded->workload, from->nstages, &given, &err);
		else if ((rc = pw_workload_for(from, NULL, backend, &base,
		    &err)) == PW_OK)
			rc = pw_workload_parse(a->workload, &base,
			    from->nstages, &given, &err);
		pw_workload_clear(&base);
		if (rc != PW_OK) {
			pw_cmd_say("launch: --workload '%s': %s", a->workload,
			    err.msg);
			return pw_cmd_status(rc);
		}
		use = &given;
	} else if (r->recorded != NULL) {
		use = &r->recorded->workload;
		fprintf(stderr, "launch: the workload recorded in %s (--workload "
		    "sets another)\n", pw_cmd_input_label(a));
	}
	rc = pw_workload_for(from, use, backend, &r->work, &err);
	pw_workload_clear(&given);
	if (rc != PW_OK) {
		pw_cmd_say("launch: the workload of %s: %s",
		    pw_cmd_input_label(a), err.msg);
		return pw_cmd_status(rc);
	}
	return PW_EXIT_OK;
}

/* Everything rank 0 knows before the run: the plan, the workload, its
 * problem (with LIMIT on every device) and the schedule's prediction on
 * it.  A problem's family is chosen on the workload's problem: its bytes
 * and the limit are what the run keeps. */
static int
cmd_launch_prepare(const struct pw_cmd_args *a, enum pw_rt_backend backend,
    double limit, struct cmd_launch_run *r)
{
	const struct pw_problem *from;
	struct pw_error err;
	int status, rc;

	if ((status = cmd_launch_plan(a, r)) != PW_EXIT_OK)
		return status;
	from = r->plan != NULL ? pw_plan_problem(r->plan) : r->input;
	if ((status = cmd_launch_workload(a, backend, from, r)) != PW_EXIT_OK)
		return status;
	if ((r->problem = pw_workload_problem(from, &r->work, limit,
	    &err)) == NULL) {
		pw_cmd_say("launch: the workload's problem: %s", err.msg);
		return PW_EXIT_INPUT;
	}
	if (r->plan == NULL && (status = cmd_launch_best(a, r)) != PW_EXIT_OK)
		return status;
	/* The same orders on the workload's problem: the same stages and
	 * times, the bytes the workload keeps. */
	if ((rc = pw_plan_new(pw_problem_copy(r->problem), pw_schedule_copy(
	    pw_plan_schedule(r->plan)), &r->pred, &err)) != PW_OK) {
		pw_cmd_say("launch: the schedule on the workload's problem:"
		    " %s", err.msg);
		return pw_cmd_status(rc);
	}
	return PW_EXIT_OK;
}

/* What the run runs on, for pw_cmd_cancellable: rank 0's inputs, or
 * NULL on the other ranks; on rank 0, what writes its results (FINISH)
 * and the status that gives. */
struct cmd_launch_job {
	const struct pw_problem *problem;
	const struct pw_schedule *sched;
	const struct pw_workload *work;
	const struct pw_rt_opts *opts;
	struct pw_rt_result *res;
	struct pw_error *err;
	const struct pw_cmd_args *a;
	FILE	*fp;
	const struct cmd_launch_run *finish;	/* NULL: not this rank */
	int	status;
};

static int cmd_launch_finish(const struct pw_cmd_args *, FILE *,
    const struct cmd_launch_run *, const struct pw_rt_result *);

/* The run, then on rank 0 its report and file, and under MPI the wait
 * for every rank to end: within one cancellable call, so that a stop
 * once the run has ended (the first; a second still quits at once)
 * waits for them, written in a fraction of a second, rather than lose
 * them or end a rank by the signal. */
static int
cmd_launch_go(void *arg)
{
	struct cmd_launch_job *job = arg;
	int rc;

	rc = pw_launch(job->problem, job->sched, job->work, job->opts,
	    job->res, job->err);
	if (rc == PW_OK && job->finish != NULL)
		job->status = cmd_launch_finish(job->a, job->fp, job->finish,
		    job->res);
	/* Under MPI every rank then waits for the others to end: a stop
	 * meanwhile comes after the run too. */
	if (rc == PW_OK && job->status == PW_EXIT_OK &&
	    job->opts->transport == PW_RT_MPI)
		pw_rt_mpi_stop();
	return rc;
}

/* One line per iteration on stderr, the first after ARG (the line that
 * says the run is an emulation, or NULL): said once the run has passed
 * its checks, so that a refused one says only why. */
static void
cmd_launch_progress(const struct pw_rt_progress *p, void *arg)
{
	char step[32];

	(void)arg;
	if (p->iteration == 1 && p->emulation != NULL)
		fprintf(stderr, "launch: %s\n", p->emulation);
	fprintf(stderr, "iteration %d/%d%s: %s, loss %.4f\n", p->iteration,
	    p->total, p->warmup ? " (warm-up)" : "", pw_fmt_seconds(step,
	    sizeof step, p->step), p->loss);
}

/* Whether the run computed what the sequential computation does, within
 * what its arithmetic allows. */
static bool
cmd_launch_agrees(const struct pw_rt_result *res)
{
	double tol = pw_rt_math_tolerance(res->math);

	return isnan(res->grad_error) || (res->grad_error < tol &&
	    res->loss_error < tol);
}

/* The report after the run, on FP. */
static void
cmd_launch_print(FILE *fp, const struct cmd_launch_run *r,
    const struct pw_rt_result *res, const struct pw_measured_cmp *cmp)
{
	const struct pw_measured *m = res->measured;
	char b1[32], *shown;

	/* A file's name and its recorded family are the user's text. */
	if (r->family != NULL) {
		shown = pw_escape(r->family);
		fprintf(fp, "%-11s %s\n", "schedule", shown);
		free(shown);
	}
	fprintf(fp, "%-11s %s on %s, %s (median of %d iteration%s after %d"
	    " warm-up%s)\n", "step time", pw_fmt_seconds(b1, sizeof b1,
	    pw_measured_step(m)), m->backend, m->transport, m->iterations,
	    m->iterations == 1 ? "" : "s", m->warmup, m->warmup == 1 ? "" :
	    "s");
	fprintf(fp, "%-11s %.6g (the last iteration's mean)\n", "loss",
	    m->loss[m->iterations - 1]);
	if (isnan(res->grad_error))
		fprintf(fp, "%-11s not checked (--no-check)\n", "gradients");
	else
		fprintf(fp, "%-11s max relative error %.2g against the "
		    "sequential computation (%s: below %s); loss error %.2g\n",
		    "gradients", res->grad_error, pw_rt_math_name(res->math),
		    pw_rt_math_tolerance_text(res->math), res->loss_error);
	fputc('\n', fp);
	pw_cmd_measured_print(fp, cmp, CMD_LAUNCH_TOP_OPS);
}

/* The report as one JSON object, which the caller owns. */
static json_t *
cmd_launch_json(const struct cmd_launch_run *r, const struct pw_rt_result *res,
    const struct pw_measured_cmp *cmp)
{
	const struct pw_measured *m = res->measured;
	json_t *root = json_object(), *losses = json_array(), *schedule;
	char *shown;
	int i;

	/* JSON strings are UTF-8: a name that is not is shown escaped. */
	if (r->family == NULL)
		schedule = json_null();
	else if ((schedule = json_string(r->family)) == NULL) {
		shown = pw_escape(r->family);
		schedule = json_string(shown);
		free(shown);
	}
	json_object_set_new(root, "schedule", schedule);
	json_object_set_new(root, "backend", json_string(m->backend));
	json_object_set_new(root, "transport", json_string(m->transport));
	json_object_set_new(root, "iterations", json_integer(m->iterations));
	json_object_set_new(root, "warmup", json_integer(m->warmup));
	json_object_set_new(root, "step", json_real(pw_measured_step(m)));
	for (i = 0; i < m->iterations; i++)
		json_array_append_new(losses, json_real(m->loss[i]));
	json_object_set_new(root, "loss", losses);
	json_object_set_new(root, "grad_error", isnan(res->grad_error) ?
	    json_null() : json_real(res->grad_error));
	json_object_set_new(root, "loss_error", isnan(res->loss_error) ?
	    json_null() : json_real(res->loss_error));
	json_object_set_new(root, "math", json_string(pw_rt_math_name(res->math)));
	json_object_set_new(root, "against_predicted",
	    pw_cmd_measured_json(cmp));
	return root;
}

/* After a run on rank 0: the report on FP, the measured file, and the
 * verdict of the gradient check. */
static int
cmd_launch_finish(const struct pw_cmd_args *a, FILE *fp,
    const struct cmd_launch_run *r, const struct pw_rt_result *res)
{
	struct pw_measured_cmp cmp;
	struct pw_error err;
	int status = PW_EXIT_OK, rc;

	if ((rc = pw_measured_compare(r->problem, pw_plan_schedule(r->pred),
	    pw_plan_timing(r->pred), pw_plan_metrics(r->pred), res->measured,
	    &cmp, &err)) != PW_OK) {
		pw_cmd_say("internal error: launch: the run does not match its"
		    " schedule: %s", err.msg);
		return PW_EXIT_INTERNAL;
	}
	if (a->json)
		status = pw_cmd_json_print(fp, cmd_launch_json(r, res, &cmp),
		    "launch: cannot write the report");
	else
		cmd_launch_print(fp, r, res, &cmp);
	pw_measured_cmp_free(&cmp);
	if (a->output_given && (rc = pw_schedule_write_with(a->output,
	    r->problem, pw_plan_schedule(r->pred), pw_plan_timing(r->pred),
	    r->pins, r->npins, res->measured, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	if (status == PW_EXIT_OK && !cmd_launch_agrees(res)) {
		pw_cmd_say("launch: the run's gradients differ from the "
		    "sequential computation: max relative error %.2g, loss error"
		    " %.2g"
		    " (%s allows %s)", res->grad_error, res->loss_error,
		    pw_rt_math_name(res->math),
		    pw_rt_math_tolerance_text(res->math));
		status = PW_EXIT_RUNTIME;
	}
	return status;
}

/* The options every rank reads alike from its command line into OPTS
 * and *LIMIT; when QUIET (ranks but 0) a failure is left to rank 0 to
 * report. */
static int
cmd_launch_options(const struct pw_cmd_args *a, bool quiet,
    struct pw_rt_opts *opts, double *limit)
{
	struct pw_error err;
	char why[512];

	if (a->dry_run && a->output_given) {
		if (!quiet)
			pw_cmd_say("launch: --dry-run runs nothing, so -o would "
			    "have no measured run to write (give one of them)");
		return PW_EXIT_INPUT;
	}
	if (a->backend == NULL)
		opts->backend = pw_rt_backend_default();
	else if (pw_rt_backend_parse(a->backend, &opts->backend) != PW_OK) {
		if (!quiet)
			pw_cmd_say("launch: --backend '%s' is not cpu or cuda",
			    a->backend);
		return PW_EXIT_INPUT;
	}
	if (!pw_rt_backend_available(opts->backend, why, sizeof why)) {
		if (!quiet)
			pw_cmd_say("launch: --backend %s cannot run here: %s",
			    pw_rt_backend_name(opts->backend), why);
		return PW_EXIT_INPUT;
	}
	if (a->gpus > 0 && opts->backend != PW_RT_CUDA) {
		if (!quiet)
			pw_cmd_say("launch: --gpus needs --backend cuda");
		return PW_EXIT_INPUT;
	}
	opts->gpus = a->gpus;
	if (a->iterations > 0)
		opts->iterations = a->iterations;
	if (a->warmup >= 0)
		opts->warmup = a->warmup;
	opts->seed = a->seed;
	opts->reference = !a->no_check;
	opts->fail_at = getenv("PIPEWRIGHT_FAIL_AT");
	if (pw_rt_wire_env(getenv("PIPEWRIGHT_WIRE"), opts, &err) != PW_OK) {
		if (!quiet)
			pw_cmd_say("launch: %s", err.msg);
		return PW_EXIT_INPUT;
	}
	/* Only rank 0's problem has limits. */
	*limit = INFINITY;
	if (quiet)
		return PW_EXIT_OK;
	if (!pw_cmd_model_limit(a, limit))
		return PW_EXIT_INPUT;
	if (*limit == DBL_MAX)
		*limit = INFINITY;
	return PW_EXIT_OK;
}

/* Launch on one rank (RANK 0 under the local transport): rank 0 reads,
 * prepares and reports, the others run what it broadcasts.  *STRANDED
 * says whether the other ranks may be left waiting in pw_launch for a
 * rank 0 that failed before it (the options every rank reads alike fail
 * on all of them, and pw_launch ends every rank together). */
static int
cmd_launch_rank(const struct pw_cmd_args *a, struct pw_rt_opts *opts, int rank,
    bool *stranded)
{
	struct cmd_launch_run r = { 0 };
	struct pw_rt_result res = { 0 };
	struct cmd_launch_job job = { NULL, NULL, NULL, opts, &res, NULL,
	    a, NULL, NULL, PW_EXIT_OK };
	atomic_int cancel;
	struct pw_error err;
	double limit;
	FILE *fp;
	int status, rc;

	if ((status = cmd_launch_options(a, rank != 0, opts, &limit)) !=
	    PW_EXIT_OK)
		return status;
	*stranded = true;
	/* The measured file on stdout puts the report on stderr. */
	fp = a->output_given && pw_cmd_output_is_stdout(a->output) ? stderr :
	    stdout;
	if (rank == 0) {
		/* The measured file in place of the schedule or the costs
		 * it runs would lose them. */
		const char *inputs[2] = { a->pos[0], a->problem };

		if (a->output_given && ((status = pw_cmd_output_spares(
		    "launch", a->output, inputs, 2, "the input")) !=
		    PW_EXIT_OK || (status = pw_cmd_json_output_check(
		    a->output)) != PW_EXIT_OK))
			goto out;
		if ((status = cmd_launch_prepare(a, opts->backend, limit,
		    &r)) != PW_EXIT_OK)
			goto out;
		pw_workload_print(a->json || a->dry_run ? stderr : fp, &r.work,
		    r.input != NULL ? r.input : pw_plan_problem(r.plan));
		if (a->dry_run) {
			if ((rc = pw_problem_write("-", r.problem, &err)) !=
			    PW_OK) {
				pw_cmd_say("%s", err.msg);
				status = pw_cmd_status(rc);
			}
			goto out;
		}
		job.problem = r.problem;
		job.sched = pw_plan_schedule(r.plan);
		job.work = &r.work;
		job.fp = fp;
		job.finish = &r;
		opts->progress = cmd_launch_progress;
	} else if (a->dry_run)
		goto out;
	opts->cancel = &cancel;
	job.err = &err;
	rc = pw_cmd_cancellable(&cancel, cmd_launch_go, &job);
	*stranded = false;
	if (rc != PW_OK) {
		status = pw_cmd_status(rc);
		/* Under MPI a refusal before the run is every rank's (rank 0
		 * checked what they all run): rank 0 says it and each ends as
		 * it would alone.  Any other error, the rank where it began
		 * says it, then ends the job; the others stay silent. */
		if (opts->transport != PW_RT_MPI ||
		    (rc == PW_ERR_INPUT && rank == 0))
			pw_cmd_say("launch: %s", err.msg);
		else if (rc != PW_ERR_INPUT && (res.originated ||
		    res.own_cancel)) {
			/* A rank signalled alone (not through mpirun) ends
			 * the job too: the others, in an iteration's
			 * barrier, would wait for it for ever.  Its own
			 * cancel was the run's first stop (else the run
			 * says what stopped it first), so a rank another's
			 * failure stopped stays silent, signalled or not. */
			pw_cmd_say("rank %d: %s", rank, err.msg);
			pw_rt_mpi_abort(PW_EXIT_RUNTIME);
		}
		goto out;
	}
	status = job.status;
	if (rank == 0 && status == PW_EXIT_OK && atomic_load(&cancel))
		pw_cmd_say("launch: the stop came after the run had ended: its "
		    "results are %s", a->output_given ? "written" : "reported");
	pw_rt_result_free(&res);
out:
	cmd_launch_run_free(&r);
	return status;
}

int
pw_cmd_launch(const struct pw_cmd_args *a)
{
	struct pw_rt_opts opts;
	struct pw_error err;
	int rank = 0, size, status, rc;
	bool stranded = false;

	pw_rt_opts_init(&opts);
	if (a->transport != NULL && pw_rt_transport_parse(a->transport,
	    &opts.transport) != PW_OK) {
		pw_cmd_say("launch: --transport '%s' is not local or mpi",
		    a->transport);
		return PW_EXIT_INPUT;
	}
	if (opts.transport != PW_RT_MPI)
		return cmd_launch_rank(a, &opts, 0, &stranded);
	if ((rc = pw_rt_mpi_start(&rank, &size, &err)) != PW_OK) {
		pw_cmd_say("launch: --transport mpi: %s", err.msg);
		return pw_cmd_status(rc);
	}
	status = cmd_launch_rank(a, &opts, rank, &stranded);
	/* Rank 0 has said why; the others would wait on it for ever. */
	if (status != PW_EXIT_OK && rank == 0 && stranded)
		pw_rt_mpi_abort(status);
	pw_rt_mpi_stop();
	return status;
}

/* ------------------------------------------------------------------ */
/* calibrate                                                           */

/* The report's workload line, when the runs' workload RAN is not what
 * launch runs on the calibrated problem by default (a model's problem,
 * whose shape the fitted costs no longer carry): the --workload that
 * runs RAN again, written to OUTPUT (NULL: not written). */
static void
cmd_calibrate_workload(FILE *fp, const char *output,
    const struct pw_problem *calibrated, const struct pw_workload *ran)
{
	struct pw_workload def = { 0 };
	struct pw_error err;
	int s;
	bool even = true;

	if (pw_workload_for(calibrated, NULL, PW_RT_CPU, &def, &err) != PW_OK ||
	    !pw_workload_differs(ran, &def, NULL, 0)) {
		pw_workload_clear(&def);
		return;
	}
	pw_workload_clear(&def);
	for (s = 1; s < ran->nstages; s++)
		even = even && ran->layers[s] == ran->layers[0];
	fprintf(fp, "%-10s the runs' is not the calibrated problem's default: "
	    "launch %s --workload hidden=%d,ffn=%d,tokens=%d", "workload",
	    output != NULL ? output : "CALIBRATED", ran->hidden, ran->ffn,
	    ran->tokens);
	if (even)
		fprintf(fp, ",layers=%d runs it again\n", ran->layers[0]);
	else
		fprintf(fp, " runs it again but for its stages' layers, which "
		    "differ (--workload sets one count for all)\n");
}

/* Why the link's latency is 0, by enum pw_link_fit. */
static const char *const cmd_calibrate_link_why[] = {
	[PW_LINK_FIT_APART] = "",
	[PW_LINK_FIT_SAME_BYTES] = " (every transfer moved the same bytes: "
	    "no latency apart)",
	[PW_LINK_FIT_NOISE] = " (the fit with a latency apart was noise: a "
	    "latency below 0 or times falling with the bytes)",
};

/* The fit per stage, the link and the residual. */
static void
cmd_calibrate_print(FILE *fp, const struct pw_calibration *fit)
{
	static const char head[6][PW_CMD_CELL] = { "stage", "f", "b", "w",
	    "comm", "samples" };
	char (*cells)[PW_CMD_CELL], b1[32], b2[32], b3[32], b4[32];
	int s;

	cells = pw_xcalloc(((size_t)fit->nstages + 1) * 6, sizeof *cells);
	memcpy(cells, head, sizeof head);
	for (s = 0; s < fit->nstages; s++) {
		char (*row)[PW_CMD_CELL] = &cells[((size_t)s + 1) * 6];

		snprintf(row[0], PW_CMD_CELL, "%d", s);
		pw_fmt_seconds(row[1], PW_CMD_CELL, fit->f[s]);
		pw_fmt_seconds(row[2], PW_CMD_CELL, fit->b[s]);
		pw_fmt_seconds(row[3], PW_CMD_CELL, fit->w[s]);
		pw_fmt_seconds(row[4], PW_CMD_CELL, fit->comm[s]);
		snprintf(row[5], PW_CMD_CELL, "%d", fit->samples[s]);
	}
	fprintf(fp, "fit over %d run%s:\n", fit->runs, fit->runs == 1 ? "" :
	    "s");
	pw_cmd_table(fp, (const char (*)[PW_CMD_CELL])cells,
	    (size_t)fit->nstages + 1, 6, NULL);
	free(cells);
	if (!fit->has_link)
		fprintf(fp, "%-10s none (no transfers)\n", "link");
	else
		fprintf(fp, "%-10s d2h %s/s, h2d %s/s, latency %s%s (residual"
		    " %s)\n", "link", pw_fmt_bytes(b1, sizeof b1, fit->d2h),
		    pw_fmt_bytes(b2, sizeof b2, fit->h2d), pw_fmt_seconds(b3,
		    sizeof b3, fit->latency), cmd_calibrate_link_why[
		    fit->link_fit], pw_fmt_seconds(b4, sizeof b4,
		    fit->link_residual));
	fprintf(fp, "%-10s %s RMS over the op durations (%.1f%% relative)\n",
	    "residual", pw_fmt_seconds(b1, sizeof b1, fit->residual),
	    100 * fit->relative);
}

/* The makespan of PLAN's schedule on PROBLEM into *OUT. */
static int
cmd_calibrate_predict(const struct pw_problem *problem,
    const struct pw_plan *plan, double *out, struct pw_error *err)
{
	struct pw_plan *on;
	int rc;

	if ((rc = pw_plan_new(pw_problem_copy(problem),
	    pw_schedule_copy(pw_plan_schedule(plan)), &on, err)) != PW_OK)
		return rc;
	*out = pw_plan_metrics(on)->makespan;
	pw_plan_free(on);
	return PW_OK;
}

/* Reads A's files, each once, into PLANS and RUNS: the measured runs of
 * one problem, the first's, and one workload (a mean over other
 * problems fits none).  Returns an exit status, having said why. */
static int
cmd_calibrate_runs(const struct pw_cmd_args *a, struct pw_plan **plans,
    struct pw_measured **runs)
{
	struct pw_error err;
	char why[192];
	int i, rc;

	for (i = 0; i < a->nrest; i++) {
		if ((rc = pw_plan_read_run(a->rest[i], &plans[i], &runs[i],
		    &err)) != PW_OK) {
			pw_cmd_say("%s", err.msg);
			return pw_cmd_status(rc);
		}
		if (runs[i] == NULL) {
			pw_cmd_say("calibrate: %s has no measured run (launch"
			    " -o writes one)", pw_cmd_label(a->rest[i]));
			return PW_EXIT_INPUT;
		}
		if (i > 0 && (pw_workload_differs(&runs[i]->workload,
		    &runs[0]->workload, why, sizeof why) ||
		    pw_cmd_problem_other(pw_plan_problem(plans[i]),
		    pw_plan_problem(plans[0]), "run 1", why, sizeof why))) {
			pw_cmd_say("calibrate: measured run %d (%s): %s", i + 1,
			    pw_cmd_label(a->rest[i]), why);
			return PW_EXIT_INPUT;
		}
	}
	return PW_EXIT_OK;
}

/* One run's calibrated prediction: the makespan of its file's schedule
 * before calibration and on the calibrated problem, each against the
 * run's measured step. */
struct cmd_calibrate_pred {
	double	before, after, measured;
};

/* The prediction of run RUN, of file PATH's PLAN, into *OUT.  Returns an
 * exit status, having said why. */
static int
cmd_calibrate_pred_of(const char *path, const struct pw_problem *calibrated,
    const struct pw_plan *plan, const struct pw_measured *run,
    struct cmd_calibrate_pred *out)
{
	struct pw_error err;
	char b1[32], b2[32];
	int rc;

	out->before = pw_plan_metrics(plan)->makespan;
	if ((rc = cmd_calibrate_predict(calibrated, plan, &out->after,
	    &err)) != PW_OK) {
		pw_cmd_say("calibrate: %s on the calibrated problem: %s",
		    pw_cmd_label(path), err.msg);
		return pw_cmd_status(rc);
	}
	out->measured = pw_measured_step(run);
	if (!(out->measured > 0) || !isfinite(out->after) ||
	    !isfinite(out->measured)) {
		pw_cmd_say("calibrate: %s: the measured step is %s and the "
		    "calibrated prediction %s: no ratio to report",
		    pw_cmd_label(path), pw_fmt_seconds(b1, sizeof b1,
		    out->measured), pw_fmt_seconds(b2, sizeof b2, out->after));
		return PW_EXIT_INPUT;
	}
	return PW_EXIT_OK;
}

int
pw_cmd_calibrate(const struct pw_cmd_args *a)
{
	struct pw_calibration fit = { 0 };
	struct pw_measured **runs;
	struct pw_problem *calibrated = NULL, *given;
	struct pw_plan **plans;
	struct cmd_calibrate_pred *pred;
	struct pw_error err;
	char b1[32], b2[32], b3[32], *which;
	int status = PW_EXIT_INPUT, rc, i;

	if (a->output_given && !pw_path_ends(a->output, ".json") &&
	    !pwlua_is_script(a->output)) {
		pw_cmd_say("calibrate: -o '%s' must be NAME.json (a problem "
		    "file) or NAME.lua (a problem script)", a->output);
		return PW_EXIT_INPUT;
	}
	if (a->output_given && ((status = pw_cmd_output_spares("calibrate",
	    a->output, (const char *const *)a->rest, a->nrest,
	    "the measured run")) != PW_EXIT_OK ||
	    (status = pw_cmd_output_check(a->output)) != PW_EXIT_OK))
		return status;
	runs = pw_xcalloc((size_t)a->nrest, sizeof *runs);
	plans = pw_xcalloc((size_t)a->nrest, sizeof *plans);
	pred = pw_xcalloc((size_t)a->nrest, sizeof *pred);
	if ((status = cmd_calibrate_runs(a, plans, runs)) != PW_EXIT_OK)
		goto out;
	if ((rc = pw_calibrate(pw_plan_problem(plans[0]),
	    (const struct pw_measured *const *)runs, (size_t)a->nrest,
	    &calibrated, &fit, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	/* The runs may be of several schedules of the problem: each
	 * stands against its own prediction. */
	for (i = 0; i < a->nrest; i++)
		if ((status = cmd_calibrate_pred_of(a->rest[i], calibrated,
		    plans[i], runs[i], &pred[i])) != PW_EXIT_OK)
			goto out;
	cmd_calibrate_print(stdout, &fit);
	for (i = 0; i < a->nrest; i++) {
		which = a->nrest == 1 ? pw_xstrdup("the run's step") :
		    pw_xasprintf("the step of run %d, %s", i + 1,
		    pw_cmd_label(a->rest[i]));
		printf("%-10s predicted %s against measured %s (%s): ratio "
		    "%.4g; before calibration predicted %s, ratio %.4g\n",
		    "prediction", pw_fmt_seconds(b1, sizeof b1,
		    pred[i].after), pw_fmt_seconds(b2, sizeof b2,
		    pred[i].measured), which, pred[i].after / pred[i].measured,
		    pw_fmt_seconds(b3, sizeof b3, pred[i].before),
		    pred[i].before / pred[i].measured);
		free(which);
	}
	cmd_calibrate_workload(stdout, a->output_given ? a->output : NULL,
	    calibrated, &runs[0]->workload);
	for (i = 0; i < a->nrest; i++)
		if (runs[i]->emulated)
			fprintf(stderr, "calibrate: %s was an emulation (its "
			    "devices shared GPUs or CPU cores): its op times "
			    "include that sharing, so the fit does too, and "
			    "the prediction leaves it out\n",
			    pw_cmd_label(a->rest[i]));
	if (a->output_given && pwlua_is_script(a->output)) {
		/* A script of a problem with an origin is its model's, whose
		 * costs are the cost model's: the fitted ones are given
		 * stages. */
		given = pw_problem_copy(calibrated);
		pw_origin_free(given->origin);
		given->origin = NULL;
		status = pw_cmd_problem_save(a->output, given);
		pw_problem_free(given);
	} else if (a->output_given)
		status = pw_cmd_problem_save(a->output, calibrated);
out:
	for (i = 0; i < a->nrest; i++) {
		pw_measured_free(runs[i]);
		pw_plan_free(plans[i]);
	}
	free(runs);
	free(plans);
	free(pred);
	pw_calibration_free(&fit);
	pw_problem_free(calibrated);
	return status;
}
