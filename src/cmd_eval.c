/*
 * cmd_eval.c - the commands that judge a schedule file: eval (its metrics,
 * from its orders timed again) and check (its stored times, from first
 * principles).
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipewright.h"
#include "plan.h"
#include "cmd.h"

int
pw_cmd_eval(const struct pw_cmd_args *a)
{
	struct pw_plan *plan = NULL;
	int status, rc;

	if ((status = pw_cmd_plan_load(a->pos[0], a->family, &plan)) !=
	    PW_EXIT_OK)
		goto out;
	if (!a->json)
		pw_metrics_print(stdout, pw_plan_problem(plan),
		    pw_plan_metrics(plan));
	else if ((rc = pw_metrics_print_json(stdout, pw_plan_problem(plan),
	    pw_plan_metrics(plan))) != PW_OK) {
		pw_cmd_fail("eval: cannot write the metrics to stdout");
		status = pw_cmd_status(rc);
	}
out:
	pw_plan_free(plan);
	return status;
}

int
pw_cmd_check(const struct pw_cmd_args *a)
{
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	char *label, *msg;
	size_t nops = 0;
	int i, status, rc;

	if ((rc = pw_schedule_read(a->pos[0], &problem, &ops, &nops, &err)) !=
	    PW_OK) {
		pw_cmd_fail("%s", err.msg);
		return pw_cmd_status(rc);
	}
	status = PW_EXIT_OK;
	label = pw_escape(pw_cmd_label(a->pos[0]));
	if (pw_check(problem, ops, nops, &v) == 0)
		printf("%s: valid (%zu ops)\n", label, nops);
	else {
		for (i = 0; i < v.n; i++) {
			msg = pw_escape(v.msg[i]);
			printf("%s: %s\n", label, msg);
			free(msg);
		}
		printf("%s: %d violation%s\n", label, v.n,
		    v.n == 1 ? "" : "s");
		status = PW_EXIT_INVALID;
	}
	free(label);
	pw_violations_free(&v);
	free(ops);
	pw_problem_free(problem);
	return status;
}
