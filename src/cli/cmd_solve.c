/*
 * cmd_solve.c - the solve command: the optimizer's options from the
 * command line and a Lua problem, its progress on stderr, Ctrl-C and
 * SIGTERM as "stop and keep the best", and its figures after the metrics.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "plan.h"
#include "cmd.h"
#include "pwlua.h"
#include "solver.h"

/* What solve last said on stderr, so that it says only what changed. */
struct cmd_solve_last {
	const char *phase;
	double	incumbent;
	double	bound;
};

/* One line per phase and per improvement of the incumbent or the
 * bound, and the last ("done"): a search that ends before its first
 * report still says what it found. */
static void
cmd_solve_progress(const struct pw_progress *pr, void *arg)
{
	struct cmd_solve_last *last = arg;
	char b1[32], b2[32], b3[32];

	if (last->phase != NULL && strcmp(last->phase, pr->phase) == 0 &&
	    pr->incumbent == last->incumbent && pr->bound == last->bound)
		return;
	last->phase = pr->phase;
	last->incumbent = pr->incumbent;
	last->bound = pr->bound;
	fprintf(stderr, "solve: %8s  %-9s incumbent %s, bound %s, gap %.2f%%\n",
	    pw_fmt_seconds(b1, sizeof b1, pr->elapsed), pr->phase,
	    isinf(pr->incumbent) ? "none" : pw_fmt_seconds(b2, sizeof b2,
	    pr->incumbent), pw_fmt_seconds(b3, sizeof b3, pr->bound),
	    100 * pr->gap);
}

/* Appends to *ALL (*N of them) each of the NADD pins of ADD that it does
 * not hold yet: a problem's and a start's pins may be the same file's,
 * a file may list one twice, or name one op as B and as BW. */
static void
cmd_solve_pins_add(struct pw_pin **all, size_t *n, const struct pw_pin *add,
    size_t nadd)
{
	size_t i, k;

	for (i = 0; i < nadd; i++) {
		for (k = 0; k < *n; k++)
			if (pw_pin_same(&(*all)[k], &add[i]))
				break;
		if (k < *n)
			continue;
		*all = pw_xreallocarray(*all, *n + 1, sizeof **all);
		(*all)[(*n)++] = add[i];
	}
}

/* The start schedule of --from FILE for PROBLEM in *OUT (the caller
 * frees it), and the file's pins added to *PINS; false after reporting
 * why. */
static bool
cmd_solve_from(const char *path, const struct pw_problem *problem,
    struct pw_schedule **out, struct pw_pin **pins, size_t *npins)
{
	struct pw_problem *given = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_pin *filepins = NULL;
	struct pw_error err;
	size_t nops = 0, nfilepins = 0;
	char why[256];
	bool ok = false;

	*out = NULL;
	if (pw_torch_is_csv(path)) {
		if (pw_torch_read_file(path, problem, out, &err) != PW_OK)
			pw_cmd_say("solve: --from %s", err.msg);
		return *out != NULL;
	}
	if (pw_file_read_pins(path, &given, &ops, &nops, &filepins,
	    &nfilepins, NULL, &err) != PW_OK || ops == NULL) {
		pw_cmd_say("solve: --from '%s' is no family (see 'pipewright "
		    "solve --help') and no schedule file: %s", path,
		    ops == NULL && given != NULL ? "it holds a problem only" :
		    err.msg);
		goto out;
	}
	if (pw_cmd_problem_other(given, problem, "the one to solve", why,
	    sizeof why)) {
		pw_cmd_say("solve: --from %s: %s", pw_cmd_label(path), why);
		goto out;
	}
	if (pw_schedule_from_timed(problem, ops, nops, out, &err) != PW_OK) {
		pw_cmd_say("solve: --from %s: %s", pw_cmd_label(path),
		    err.msg);
		goto out;
	}
	cmd_solve_pins_add(pins, npins, filepins, nfilepins);
	ok = true;
out:
	free(filepins);
	free(ops);
	pw_problem_free(given);
	return ok;
}

/* Reports the solver's error MSG in the command line's words: what it
 * calls the start (a schedule or a family) is what --from gave. */
static void
cmd_solve_fail(const struct pw_cmd_args *a, const char *msg)
{
	static const char *const start[] = { "solve: start: " };
	size_t i, n;

	for (i = 0; a->from != NULL && i < sizeof start / sizeof start[0];
	    i++) {
		n = strlen(start[i]);
		if (strncmp(msg, start[i], n) == 0) {
			pw_cmd_say("solve: --from %s: %s", pw_cmd_label(
			    a->from), msg + n);
			return;
		}
	}
	pw_cmd_say("%s", msg);
}

/* The strongest of P's problem-only bounds for OBJ (pw_lower_bound_terms'
 * first), "none" at 0 when there is none. */
static struct pw_bound_term
cmd_solve_bound(const struct pw_problem *p, enum pw_objective obj)
{
	struct pw_bound_term terms[PW_BOUND_TERMS];

	if (pw_lower_bound_terms(p, obj, terms) == 0)
		return (struct pw_bound_term){ "none", 0 };
	return terms[0];
}

/* The strongest bound of P for the makespan and for the span, each with
 * its name, as one line of a report ("bounds"). */
static void
cmd_solve_bounds_print(FILE *fp, const struct pw_problem *p)
{
	struct pw_bound_term makespan = cmd_solve_bound(p, PW_OBJ_MAKESPAN);
	struct pw_bound_term span = cmd_solve_bound(p, PW_OBJ_SPAN);
	char b1[32], b2[32];

	fprintf(fp, "%-13s makespan >= %s (%s), span >= %s (%s), for this "
	    "split and layout\n", "bounds", pw_fmt_seconds(b1, sizeof b1,
	    makespan.value), makespan.name, pw_fmt_seconds(b2, sizeof b2,
	    span.value), span.name);
}

/* The solver's figures after the metrics: the objective, what was
 * proven of it (for this split and layout: the stages are the
 * problem's), the problem's strongest bounds, the start, the model. */
static void
cmd_solve_report(FILE *fp, const struct pw_problem *p,
    const struct pw_solve_opts *o, const struct pw_solve_result *r)
{
	const struct pw_model_size *ms = &r->model;
	/* What was proven of the objective, or that the search stopped. */
	const char *proven = r->optimal ? pw_solve_result_words(r,
	    PW_END_OPTIMAL) : r->ended == PW_END_CANCELLED ?
	    pw_solve_end_words(r->ended) : NULL;
	char b1[32], b2[32];

	fprintf(fp, "\n%-13s %s %s%s%s%s\n", "objective",
	    o->objective == PW_OBJ_SPAN ? "span" : "makespan",
	    pw_fmt_seconds(b1, sizeof b1, r->objective),
	    proven != NULL ? " (" : "", proven != NULL ? proven : "",
	    proven != NULL ? ")" : "");
	fprintf(fp, "%-13s %s%s\n", "lower bound", pw_fmt_seconds(b1, sizeof b1,
	    r->bound), r->offload_excluded ? " (without offload)" : "");
	cmd_solve_bounds_print(fp, p);
	fprintf(fp, "%-13s %.2f%%\n", "gap", 100 * r->gap);
	fprintf(fp, "%-13s %s at %s\n", "start", r->start,
	    pw_fmt_seconds(b2, sizeof b2, r->start_objective));
	if (ms->formulation == NULL)
		fprintf(fp, "%-13s none built\n", "model");
	else
		fprintf(fp, "%-13s %s, %d variables, %d binaries, %d rows "
		    "(%s)\n", "model", ms->formulation, ms->variables,
		    ms->binaries, ms->rows, ms->whole ? "whole" :
		    "largest window");
	pw_cmd_ended_print(fp, r->elapsed, r->ended, pw_solve_result_words(r,
	    r->ended), "schedule");
}

/* Says, in one note, the family that splits PROBLEM's model again (a
 * model with one stage per device) and beats OBJECTIVE within its
 * limits, the best of them, with the command that searches such
 * splits: solve keeps the problem's stages, so nothing else in its
 * report would point there.  Only splits of at most
 * PW_PLANNER_MAX_FINE_CHUNKS chunks a device are built (plan's limit for
 * one layer a chunk: a model of thousands of layers would take minutes
 * a family); no family is started after SECONDS (the solve's own limit;
 * on a large problem the offloading ones take seconds each), and the
 * note is left out where they were not all built. */
static void
cmd_solve_resplit_note(const struct pw_cmd_args *a,
    const struct pw_problem *p, enum pw_objective obj, double objective,
    double seconds)
{
	const struct pw_family *best = NULL;
	const struct pw_problem *q;
	const struct pw_metrics *m;
	struct pw_plan *plan;
	struct pw_error err;
	double value, best_value = objective;
	char b1[32], b2[32], how[64] = "", *replan;
	int chunks = 1;
	bool v = false;
	size_t i;
	int nstages;
	double deadline = pw_now() + seconds;

	if (p->origin == NULL || p->nstages != p->devices)
		return;
	for (i = 0; i < pw_nfamilies; i++) {
		if (pw_now() > deadline)
			return;
		/* A family that keeps these stages is no split, and
		 * building it (zb-auto's search) can take long on a large
		 * problem. */
		nstages = pw_family_split_stages(&pw_families[i], p);
		if (nstages == 0 || nstages == p->nstages ||
		    nstages / p->devices > PW_PLANNER_MAX_FINE_CHUNKS ||
		    pw_plan_family(&pw_families[i], p, &plan, &err) != PW_OK)
			continue;
		q = pw_plan_problem(plan);
		m = pw_plan_metrics(plan);
		value = pw_objective_value(obj, m);
		if (m->feasible && value < best_value &&
		    !pw_objective_meets_bound(objective, value)) {
			best = &pw_families[i];
			best_value = value;
			chunks = q->nstages / q->devices;
			v = pw_problem_is_v(q);
		}
		pw_plan_free(plan);
	}
	if (best == NULL)
		return;
	if (a->model[PW_CMD_M_MODEL] != NULL)
		snprintf(how, sizeof how, ", or solve with %s", v ?
		    "--placement v" : "--chunks");
	if (a->model[PW_CMD_M_MODEL] != NULL && !v)
		snprintf(how + strlen(how), sizeof how - strlen(how), " %d",
		    chunks);
	/* Unquoted: its words are quoted for the shell already (a limit
	 * of '60 GiB'). */
	replan = pw_cmd_model_replan(a);
	pw_cmd_say("solve: %s splits the model again (%d stages per device%s) "
	    "and reaches %s within the limits, below this %s: try %s%s",
	    best->name, chunks, v ? ", V" : "", pw_fmt_seconds(b1, sizeof b1,
	    best_value), pw_fmt_seconds(b2, sizeof b2, objective), replan,
	    how);
	free(replan);
}

/* What the search runs on, for pw_cmd_cancellable. */
struct cmd_solve_job {
	const struct pw_problem *problem;
	struct pw_solve_opts *opts;
	struct pw_solve_result *res;
	struct pw_error *err;
	atomic_int cancel;
};

static int
cmd_solve_job(void *arg)
{
	struct cmd_solve_job *job = arg;

	job->opts->cancel = &job->cancel;
	return pw_solve(job->problem, job->opts, job->res, job->err);
}

int
pw_cmd_solve(const struct pw_cmd_args *a)
{
	struct pw_problem *problem = NULL;
	struct pw_schedule *start = NULL;
	struct pw_plan *plan = NULL;
	struct pw_solve_result res;
	struct pw_solve_opts o;
	struct cmd_solve_last last = { NULL, 0, 0 };
	struct pwlua_solve_prefs prefs;
	struct pw_pin *given = NULL, *pins = NULL, *all = NULL;
	struct pw_error err;
	struct cmd_solve_job job;
	size_t ngiven = 0, npins = 0, nall = 0;
	FILE *out;
	const char *output;
	int status, rc;

	memset(&res, 0, sizeof res);
	/* The pins of schedule files (PROBLEM, --from) are the user's, kept
	 * in the result; a Lua problem's are its script's. */
	if ((problem = pw_cmd_problem_load_pins(a, &prefs, &given,
	    &ngiven)) == NULL)
		return PW_EXIT_INPUT;
	/* A file may list a pin twice, or as B and as BW: kept once. */
	cmd_solve_pins_add(&pins, &npins, given, ngiven);
	free(given);
	pw_solve_opts_init(&o);
	pw_cmd_prefs_apply(a, &prefs, &o.objective, &o.time_limit);
	o.offload = a->offload;
	o.seed = a->seed;
	o.iteration_limit = a->iteration_limit;
	o.write_lp = a->write_lp;
	o.progress = cmd_solve_progress;
	o.progress_arg = &last;
	output = pw_cmd_schedule_output(a);
	if ((output != NULL && (status = pw_cmd_json_output_check(output)) !=
	    PW_EXIT_OK) || (a->write_lp != NULL && (status =
	    pw_cmd_output_check(a->write_lp)) != PW_EXIT_OK))
		goto out;
	if (output != NULL && a->write_lp != NULL &&
	    pw_cmd_outputs_same(output, a->write_lp)) {
		pw_cmd_say("solve: --write-lp '%s' is the schedule's output "
		    "too: one would replace the other; write elsewhere",
		    a->write_lp);
		status = PW_EXIT_INPUT;
		goto out;
	}
	status = PW_EXIT_INPUT;
	if (a->from != NULL && pw_family_find(a->from) != NULL)
		o.start_family = a->from;
	else if (a->from != NULL) {
		if (!cmd_solve_from(a->from, problem, &start, &pins, &npins))
			goto out;
		o.start = start;
	}
	cmd_solve_pins_add(&all, &nall, prefs.pins, prefs.npins);
	cmd_solve_pins_add(&all, &nall, pins, npins);
	o.pins = all;
	o.npins = nall;
	job = (struct cmd_solve_job){ problem, &o, &res, &err, 0 };
	if ((rc = pw_cmd_cancellable(&job.cancel, cmd_solve_job, &job)) !=
	    PW_OK) {
		cmd_solve_fail(a, err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	if (pw_plan_new(pw_problem_copy(problem),
	    pw_schedule_copy(res.schedule), &plan, &err) != PW_OK) {
		pw_cmd_say("internal error: the solved schedule does not "
		    "simulate: %s", err.msg);
		status = PW_EXIT_INTERNAL;
		goto out;
	}
	if ((status = pw_cmd_plan_write_pins(plan, pins, npins, output,
	    &out)) != PW_EXIT_OK)
		goto out;
	cmd_solve_report(out, problem, &o, &res);
	/* The notes after the report, where both reach one terminal. */
	fflush(out);
	if (res.lp_unwritten != NULL)
		pw_cmd_say("solve: --write-lp %s: nothing written: %s",
		    a->write_lp, res.lp_unwritten);
	/* A solve its time limit or an interrupt ended ends there: the
	 * hint's builds could take as long again, and none is cancellable
	 * (a minute on 64 devices and 1,024 microbatches). */
	if (res.ended != PW_END_CANCELLED && res.ended != PW_END_TIME)
		cmd_solve_resplit_note(a, problem, o.objective,
		    res.objective, o.time_limit);
out:
	pw_plan_free(plan);
	pw_solve_result_free(&res);
	pw_schedule_free(start);
	pw_problem_free(problem);
	pwlua_solve_prefs_free(&prefs);
	free(pins);
	free(all);
	return status;
}
