/*
 * cmd_plan.c - the inputs of the commands: a problem from a file, a
 * script or the built-in default, and a schedule with everything computed
 * from it, read from a file or built by a family.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "cmd.h"
#include "pwlua.h"

struct pw_problem *
pw_cmd_problem_load(const char *path, struct pwlua_solve_prefs *prefs)
{
	struct pw_problem *problem;
	struct pw_error err;

	if (prefs != NULL)
		memset(prefs, 0, sizeof *prefs);
	if (path == NULL)
		return pw_problem_default();
	problem = pwlua_is_script(path) ? pwlua_problem_read(path, prefs,
	    &err) : pw_problem_read(path, &err);
	if (problem == NULL)
		pw_cmd_fail("%s", err.msg);
	return problem;
}

void
pw_cmd_plan_free(struct pw_cmd_plan *plan)
{
	pw_metrics_free(plan->metrics);
	pw_timing_free(plan->timing);
	pw_schedule_free(plan->schedule);
	pw_problem_free(plan->problem);
	memset(plan, 0, sizeof *plan);
}

int
pw_cmd_plan_build(struct pw_cmd_plan *plan, const char *path,
    const char *name)
{
	const struct pw_family *family;
	const char *label = pw_cmd_label(path);
	struct pw_problem *given;
	struct pw_error err;
	int rc;

	if ((family = pw_family_find(name)) == NULL) {
		pw_cmd_unknown(PW_CMD_LIST_FAMILIES, "family", name);
		return PW_EXIT_INPUT;
	}
	if ((given = pw_cmd_problem_load(path, NULL)) == NULL)
		return PW_EXIT_INPUT;
	rc = pw_family_build(family, given, &plan->problem, &plan->schedule,
	    &err);
	if (rc == PW_OK && plan->problem->nstages != given->nstages)
		pw_cmd_note("%s splits %s again: %d stages, %d per device",
		    name, label, plan->problem->nstages,
		    plan->problem->nstages / plan->problem->devices);
	pw_problem_free(given);
	if (rc == PW_ERR_NOT_APPLICABLE) {
		pw_cmd_fail("%s does not apply to %s: %s", name, label,
		    err.msg);
		return pw_cmd_status(rc);
	}
	if (rc != PW_OK) {
		pw_cmd_fail("%s on %s: %s", name, label, err.msg);
		return pw_cmd_status(rc);
	}
	if (plan->schedule->family == NULL)
		plan->schedule->family = pw_xstrdup(family->name);
	/* A family's own schedule that cannot be timed is our bug. */
	if (pw_simulate(plan->problem, plan->schedule, &plan->timing,
	    &err) != PW_OK) {
		pw_cmd_fail("internal error: the %s schedule of %s does not"
		    " simulate: %s", name, label, err.msg);
		return PW_EXIT_INTERNAL;
	}
	plan->metrics = pw_metrics_compute(plan->problem, plan->schedule,
	    plan->timing);
	return PW_EXIT_OK;
}

/* Says on stderr, in one line, when the times stored in PATH differ from
 * the simulated ones (by more than 1e-9 of the larger of the makespan and
 * the time). */
static void
cmd_plan_compare_times(const struct pw_cmd_plan *plan, const char *path,
    const struct pw_timed_op *ops, size_t nops)
{
	const struct pw_timing *t = plan->timing;
	double scale, tol;
	size_t i, k, first = 0, ndiffer = 0;
	char name[64];

	for (i = 0; i < nops; i++) {
		k = pw_op_index(plan->problem, ops[i].op);
		scale = fmax(plan->metrics->makespan,
		    fmax(fabs(ops[i].start), fabs(ops[i].end)));
		tol = 1e-9 * scale;
		if (pw_timing_has(t, k) && fabs(t->start[k] - ops[i].start) <=
		    tol && fabs(t->end[k] - ops[i].end) <= tol)
			continue;
		if (ndiffer++ == 0)
			first = i;
	}
	if (ndiffer == 0)
		return;
	k = pw_op_index(plan->problem, ops[first].op);
	pw_cmd_note("%s: the stored times of %zu of %zu ops differ from the"
	    " simulated ones (first %s: stored %.9g-%.9g, simulated %.9g-%.9g);"
	    " the orders are kept and the times recomputed", pw_cmd_label(path),
	    ndiffer,
	    nops, pw_op_name(name, sizeof name, ops[first].op),
	    ops[first].start, ops[first].end, t->start[k], t->end[k]);
}

/* Fills PLAN from the schedule file PATH: its orders, re-simulated. */
static int
cmd_plan_read(struct pw_cmd_plan *plan, const char *path)
{
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	size_t nops = 0;
	int status, rc;

	if ((rc = pw_schedule_read(path, &plan->problem, &ops, &nops,
	    &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	if ((rc = pw_schedule_from_timed(plan->problem, ops, nops,
	    &plan->schedule, &err)) != PW_OK || (rc = pw_simulate(plan->problem,
	    plan->schedule, &plan->timing, &err)) != PW_OK) {
		pw_cmd_fail("%s: %s", pw_cmd_label(path), err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	plan->metrics = pw_metrics_compute(plan->problem, plan->schedule,
	    plan->timing);
	cmd_plan_compare_times(plan, path, ops, nops);
	status = PW_EXIT_OK;
out:
	free(ops);
	return status;
}

int
pw_cmd_plan_load(struct pw_cmd_plan *plan, const char *path,
    const char *family)
{
	if (family != NULL)
		return pw_cmd_plan_build(plan, path, family);
	return cmd_plan_read(plan, path);
}

