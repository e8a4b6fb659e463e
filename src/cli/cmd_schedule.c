/*
 * cmd_schedule.c - the commands that start from a problem: schedule (a
 * family's schedule, written and measured), problem (the problem itself,
 * written) and compare (every family in one table).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pipewright.h"
#include "plan.h"
#include "cmd.h"

int
pw_cmd_schedule(const struct pw_cmd_args *a)
{
	struct pw_plan *plan = NULL;
	const char *output = pw_cmd_schedule_output(a);
	FILE *report;
	int status;

	if (a->family == NULL) {
		pw_cmd_say("schedule: --family NAME is required (try"
		    " 'pipewright schedule --help')");
		return PW_EXIT_INPUT;
	}
	if (output != NULL && (status = pw_cmd_json_output_check(output)) !=
	    PW_EXIT_OK)
		return status;
	if ((status = pw_cmd_plan_build(a, &plan)) == PW_EXIT_OK &&
	    (status = pw_cmd_plan_write(plan, output, &report)) == PW_EXIT_OK)
		pw_megatron_print(report, pw_plan_problem(plan),
		    pw_plan_schedule(plan));
	pw_plan_free(plan);
	return status;
}

int
pw_cmd_problem(const struct pw_cmd_args *a)
{
	struct pw_problem *problem;
	int status;

	if ((problem = pw_cmd_problem_load(a, NULL)) == NULL)
		return PW_EXIT_INPUT;
	status = pw_cmd_problem_save(a->output, problem);
	pw_problem_free(problem);
	return status;
}

int
pw_cmd_compare(const struct pw_cmd_args *a)
{
	struct pw_cmd_compare_say say;
	struct pw_compare_row *rows;
	struct pw_problem *problem;
	enum pw_compare_form form;
	char *replan;
	int status = PW_EXIT_OK;

	if (a->json && a->csv) {
		pw_cmd_say("compare: --json and --csv are two forms of one "
		    "table: give one");
		return PW_EXIT_INPUT;
	}
	if ((problem = pw_cmd_problem_load(a, NULL)) == NULL)
		return PW_EXIT_INPUT;
	form = a->json ? PW_COMPARE_JSON : a->csv ? PW_COMPARE_CSV :
	    PW_COMPARE_TEXT;
	pw_cmd_compare_say_init(&say, "compare");
	rows = pw_compare_rows(problem, pw_cmd_compare_progress, &say);
	errno = 0;
	if (pw_compare_rows_print(stdout, problem, rows, a->sort, form) !=
	    PW_OK) {
		pw_cmd_say_cause("compare: cannot write the table", errno);
		status = PW_EXIT_INPUT;
	}
	pw_compare_rows_free(rows);
	/* Beside machine-read output the warning goes to stderr. */
	replan = pw_cmd_model_replan(a);
	pw_compare_warn(form == PW_COMPARE_TEXT ? stdout : stderr, problem,
	    replan);
	free(replan);
	pw_problem_free(problem);
	return status;
}
