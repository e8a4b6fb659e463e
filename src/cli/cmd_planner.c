/*
 * cmd_planner.c - the plan command: the planner (solver.h) on a model's
 * problem (or one with given stages, whose split stays fixed), its
 * progress on stderr, the ranked candidates as a table or one JSON
 * object, and the best candidate's schedule written atomically.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "plan.h"
#include "cmd.h"
#include "pwlua.h"
#include "solver.h"

/* The plan table's columns. */
enum cmd_planner_col {
	CMD_PLANNER_RANK,
	CMD_PLANNER_SPLIT,
	CMD_PLANNER_LAYOUT,
	CMD_PLANNER_RECOMPUTE,
	CMD_PLANNER_OFFLOAD,
	CMD_PLANNER_SCHEDULE,
	CMD_PLANNER_STEP,
	CMD_PLANNER_SPAN,	/* only where the span is the objective */
	CMD_PLANNER_BUBBLE,
	CMD_PLANNER_IDLE,
	CMD_PLANNER_PEAK,
	CMD_PLANNER_BOUND,
	CMD_PLANNER_GAP,
	CMD_PLANNER_NCOLS
};

static const char cmd_planner_header[CMD_PLANNER_NCOLS][PW_CMD_CELL] = {
	"#", "split", "layout", "recompute", "offload", "schedule",
	"step time", "span", "bubble", "idle", "peak / limit", "bound", "gap"
};

/* What plan last said on stderr. */
struct cmd_planner_say {
	bool	tty;		/* stderr is a terminal: one line rewritten */
	bool	said;
	bool	open;		/* a rewritten line waits for its newline */
	double	last;		/* the elapsed seconds of the last line */
};

/* The progress line: on a terminal one line rewritten at every report,
 * else a line whenever 0.75 s have passed since the last (the planner
 * reports every 0.25 s, so the lines come at least once a second); no
 * line before the first candidate unless that takes as long. */
static void
cmd_planner_progress(const struct pw_planner_progress *pr, void *arg)
{
	struct cmd_planner_say *say = arg;
	char text[160];

	if (say->said ? !say->tty && pr->elapsed - say->last < 0.75 :
	    pr->tried == 0 && pr->elapsed < 0.75)
		return;
	say->said = true;
	say->last = pr->elapsed;
	fprintf(stderr, "%splan: %s%s", say->tty ? "\r" : "",
	    pw_planner_progress_text(pr, text, sizeof text),
	    say->tty ? "\033[K" : "\n");
	say->open = say->tty;
	fflush(stderr);
}

/* Candidate C's row (rank RANK) into its cells ROW. */
static void
cmd_planner_row(char (*row)[PW_CMD_CELL], const struct pw_planner_candidate *c,
    size_t rank)
{
	char b1[32], b2[32];

	snprintf(row[CMD_PLANNER_RANK], PW_CMD_CELL, "%zu", rank);
	pw_design_split_name(&c->design, c->problem->nstages,
	    row[CMD_PLANNER_SPLIT], PW_CMD_CELL);
	pw_design_layout_name(&c->design, row[CMD_PLANNER_LAYOUT],
	    PW_CMD_CELL);
	/* "-" where the split was given (the stages' costs say nothing
	 * of it). */
	snprintf(row[CMD_PLANNER_RECOMPUTE], PW_CMD_CELL, "%s",
	    c->design.layers_per_stage == NULL ? "-" :
	    pw_recompute_label(c->design.recompute));
	/* What the schedule does: with the link, one may still move
	 * nothing (under --offload on). */
	snprintf(row[CMD_PLANNER_OFFLOAD], PW_CMD_CELL, "%s",
	    c->moves ? "yes" : "no");
	snprintf(row[CMD_PLANNER_SCHEDULE], PW_CMD_CELL, "%s",
	    c->schedule_name);
	pw_fmt_seconds(row[CMD_PLANNER_STEP], PW_CMD_CELL, c->makespan);
	pw_fmt_seconds(row[CMD_PLANNER_SPAN], PW_CMD_CELL, c->objective);
	snprintf(row[CMD_PLANNER_BUBBLE], PW_CMD_CELL, "%.4f", c->bubble_rate);
	snprintf(row[CMD_PLANNER_IDLE], PW_CMD_CELL, "%.1f%%",
	    100 * c->idle_share);
	snprintf(row[CMD_PLANNER_PEAK], PW_CMD_CELL, "%s / %s (d%d)",
	    pw_fmt_bytes(b1, sizeof b1, c->peak), isfinite(c->limit) ?
	    pw_fmt_bytes(b2, sizeof b2, c->limit) : "none", c->peak_device);
	snprintf(row[CMD_PLANNER_BOUND], PW_CMD_CELL, "%s (%s)",
	    pw_fmt_seconds(b1, sizeof b1, c->bound), c->bound_name);
	snprintf(row[CMD_PLANNER_GAP], PW_CMD_CELL, "%.2f%%", 100 * c->gap);
}

/* The ranked table, and what the search did. */
static void
cmd_planner_print(FILE *fp, const struct pw_cmd_args *a,
    const struct pw_planner_result *r, enum pw_objective obj)
{
	char (*cells)[PW_CMD_CELL];
	char best[96];
	size_t i, n;
	int k, ncols;

	cells = pw_xcalloc((r->ncand + 1) * CMD_PLANNER_NCOLS,
	    sizeof *cells);
	memcpy(cells, cmd_planner_header, sizeof cmd_planner_header);
	for (i = 0; i < r->ncand; i++)
		cmd_planner_row(&cells[(i + 1) * CMD_PLANNER_NCOLS],
		    &r->cand[i], i + 1);
	/* Ranked by step time, a span column would show what nothing
	 * else uses: it goes, the later columns moving left. */
	ncols = obj == PW_OBJ_SPAN ? CMD_PLANNER_NCOLS : CMD_PLANNER_NCOLS - 1;
	for (i = 0, n = 0; i <= r->ncand; i++)
		for (k = 0; k < CMD_PLANNER_NCOLS; k++)
			if (k != CMD_PLANNER_SPAN || obj == PW_OBJ_SPAN)
				memmove(cells[n++], cells[i *
				    CMD_PLANNER_NCOLS + k], sizeof *cells);
	if (r->ncand == 1)
		snprintf(best, sizeof best, "the best of %zu candidate%s",
		    r->tried, r->tried == 1 ? "" : "s");
	else
		snprintf(best, sizeof best, "the %zu best of %zu candidates",
		    r->ncand, r->tried);
	fprintf(fp, "%s: %s by %s\n\n", pw_cmd_input_label(a), best,
	    obj == PW_OBJ_SPAN ? "span" : "step time");
	pw_cmd_table(fp, (const char (*)[PW_CMD_CELL])cells, r->ncand + 1,
	    ncols, NULL);
	free(cells);
	fputc('\n', fp);
	pw_megatron_print(fp, r->cand[0].problem, r->cand[0].schedule);
	fprintf(fp, "\nbubble: (the longest device span - the busiest device's "
	    "work) / that span, as\ncompare's; idle: all devices' idle time / "
	    "(devices x step time).\nEach bound (the strongest of its "
	    "candidate's, named) and gap is for that\ncandidate's split and "
	    "layout%s.\n", obj == PW_OBJ_SPAN ? ", and for its span (the "
	    "longest device's, from\nits first op to its last)" : "");
	if (r->split_fixed)
		fprintf(fp, "The split is fixed: the problem's stages were "
		    "given, so plan searched the\nschedule and offload only "
		    "(describe the model with --model to search it).\n");
	pw_cmd_ended_print(fp, r->elapsed, r->ended,
	    pw_solve_end_words(r->ended), "answer");
}

/* The result as one JSON object (a new reference). */
static json_t *
cmd_planner_json(const struct pw_planner_result *r, enum pw_objective obj)
{
	const struct pw_planner_candidate *c;
	json_t *root, *list, *o, *split;
	struct pw_error err;
	char layout[32], *flags;
	size_t i;
	int s, rc;

	root = json_object();
	json_object_set_new(root, "objective", json_string(obj == PW_OBJ_SPAN ?
	    "span" : "makespan"));
	json_object_set_new(root, "split_fixed", json_boolean(r->split_fixed));
	json_object_set_new(root, "tried", json_integer((json_int_t)r->tried));
	json_object_set_new(root, "ended", json_string(pw_solve_end_name(
	    r->ended)));
	json_object_set_new(root, "elapsed", json_real(r->elapsed));
	list = json_array();
	for (i = 0; i < r->ncand; i++) {
		c = &r->cand[i];
		o = json_object();
		split = json_null();
		if (c->design.layers_per_stage != NULL) {
			split = json_array();
			for (s = 0; s < c->problem->nstages; s++)
				json_array_append_new(split, json_integer(
				    c->design.layers_per_stage[s]));
		}
		json_object_set_new(o, "layers_per_stage", split);
		json_object_set_new(o, "layout", json_string(
		    pw_design_layout_name(&c->design, layout, sizeof layout)));
		json_object_set_new(o, "chunks", json_integer(c->design.chunks));
		json_object_set_new(o, "placement", json_string(
		    pw_design_placement_name(&c->design)));
		json_object_set_new(o, "recompute",
		    c->design.layers_per_stage == NULL ? json_null() :
		    json_string(pw_recompute_name(c->design.recompute)));
		json_object_set_new(o, "offload", json_boolean(
		    c->design.offload));
		json_object_set_new(o, "moves", json_boolean(c->moves));
		json_object_set_new(o, "schedule", json_string(
		    c->schedule_name));
		json_object_set_new(o, "objective", json_real(c->objective));
		json_object_set_new(o, "makespan", json_real(c->makespan));
		json_object_set_new(o, "bubble_rate", json_real(c->bubble_rate));
		json_object_set_new(o, "idle_share", json_real(c->idle_share));
		json_object_set_new(o, "peak", json_real(c->peak));
		json_object_set_new(o, "peak_device", json_integer(
		    c->peak_device));
		json_object_set_new(o, "limit", isfinite(c->limit) ?
		    json_real(c->limit) : json_null());
		json_object_set_new(o, "bound", json_real(c->bound));
		json_object_set_new(o, "bound_name", json_string(
		    c->bound_name));
		json_object_set_new(o, "gap", json_real(c->gap));
		json_object_set_new(o, "optimized", json_boolean(c->optimized));
		rc = pw_megatron_flags(c->problem, c->schedule, &flags, &err);
		json_object_set_new(o, "megatron", json_string(rc == PW_OK ?
		    flags : err.msg));
		json_object_set_new(o, "megatron_equivalent",
		    json_boolean(rc == PW_OK));
		free(flags);
		json_array_append_new(list, o);
	}
	json_object_set_new(root, "candidates", list);
	return root;
}

/* Writes candidate C's schedule, with its problem, to OUTPUT; an enum
 * pw_exit after reporting a failure. */
static int
cmd_planner_write(const struct pw_planner_candidate *c, const char *output)
{
	struct pw_plan *plan = NULL;
	struct pw_error err;
	int rc, status = PW_EXIT_OK;

	if ((rc = pw_plan_new(pw_problem_copy(c->problem),
	    pw_schedule_copy(c->schedule), &plan, &err)) != PW_OK) {
		pw_cmd_say("internal error: the planner's best schedule does "
		    "not simulate: %s", err.msg);
		return PW_EXIT_INTERNAL;
	}
	if ((rc = pw_schedule_write(output, pw_plan_problem(plan),
	    pw_plan_schedule(plan), pw_plan_timing(plan), &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		status = pw_cmd_status(rc);
	}
	pw_plan_free(plan);
	return status;
}

/* What the search runs on, for pw_cmd_cancellable: PROBLEM, or MODEL
 * where it is NULL. */
struct cmd_planner_job {
	const struct pw_problem *problem;
	const struct pw_cmd_model *model;
	struct pw_planner_opts *opts;
	struct pw_planner_result *res;
	struct pw_error *err;
	atomic_int cancel;
};

static int
cmd_planner_job(void *arg)
{
	struct cmd_planner_job *job = arg;

	job->opts->cancel = &job->cancel;
	if (job->problem != NULL)
		return pw_planner(job->problem, job->opts, job->res, job->err);
	return pw_planner_model(&job->model->model, job->model->hw,
	    &job->model->split, job->opts, job->res, job->err);
}

int
pw_cmd_plan(const struct pw_cmd_args *a)
{
	struct cmd_planner_say say = { isatty(STDERR_FILENO) != 0, false,
	    false, 0 };
	struct pw_problem *problem = NULL;
	struct pw_cmd_model model;
	struct pwlua_solve_prefs prefs;
	struct pw_pin *pins = NULL;
	size_t npins = 0;
	struct pw_planner_result res;
	struct pw_planner_opts o;
	struct cmd_planner_job job;
	struct pw_error err;
	FILE *report;
	char label[160];
	const char *msg;
	int status, json_status = PW_EXIT_OK, rc;

	memset(&res, 0, sizeof res);
	memset(&model, 0, sizeof model);
	memset(&prefs, 0, sizeof prefs);
	/* A model is planned as it is described: its even split need not
	 * fit for some design to. */
	if (a->model[PW_CMD_M_MODEL] != NULL ? !pw_cmd_model_read(a, &model) :
	    (problem = pw_cmd_problem_load_pins(a, &prefs, &pins, &npins)) ==
	    NULL)
		return PW_EXIT_INPUT;
	/* A script's precede pairs, a schedule file's pins. */
	if (prefs.npins > 0 || npins > 0) {
		pw_cmd_say("plan: %s: %s", pw_cmd_input_label(a),
		    PW_PLANNER_NO_PINS);
		status = PW_EXIT_INPUT;
		goto out;
	}
	pw_planner_opts_init(&o);
	pw_cmd_prefs_apply(a, &prefs, &o.objective, &o.time_limit);
	o.offload = a->offload;
	o.seed = a->seed;
	o.iteration_limit = a->iteration_limit;
	if (a->top > 0)
		o.top = a->top;
	o.progress = cmd_planner_progress;
	o.progress_arg = &say;
	if (a->output_given && (status = pw_cmd_json_output_check(a->output)) !=
	    PW_EXIT_OK)
		goto out;
	job = (struct cmd_planner_job){ problem, &model, &o, &res, &err, 0 };
	rc = pw_cmd_cancellable(&job.cancel, cmd_planner_job, &job);
	if (say.open)
		fputc('\n', stderr);
	if (rc != PW_OK) {
		/* As compare names what it could not build; the planner's
		 * own errors already begin with "plan: ". */
		msg = strncmp(err.msg, "plan: ", 6) == 0 ? err.msg + 6 :
		    err.msg;
		if (problem == NULL)
			pw_cmd_say("plan: %s: %s", pw_cmd_model_label(a, label,
			    sizeof label), msg);
		else
			pw_cmd_say("plan: %s", msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	/* The schedule on stdout sends the report to stderr (asked before
	 * the file replaces what stdout was redirected to). */
	report = a->output_given && pw_cmd_output_is_stdout(a->output) ?
	    stderr : stdout;
	/* A failed write still leaves the ranking on the screen: a long
	 * search's result is not lost with the file. */
	status = a->output_given ? cmd_planner_write(&res.cand[0], a->output) :
	    PW_EXIT_OK;
	if (a->json)
		json_status = pw_cmd_json_print(report, cmd_planner_json(&res,
		    o.objective), "plan: cannot write the candidates");
	else
		cmd_planner_print(report, a, &res, o.objective);
	if (status == PW_EXIT_OK)
		status = json_status;
out:
	free(pins);
	pw_planner_result_free(&res);
	pw_problem_free(problem);
	pw_cmd_model_free(&model);
	pwlua_solve_prefs_free(&prefs);
	return status;
}
