/*
 * cmd_check.c - the check command: a schedule file's stored times
 * verified from first principles (check.c), each violation one line.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipewright.h"
#include "cmd.h"

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
