/*
 * cmd_check.c - the check command: a schedule file's stored times
 * verified from first principles (check.c), each violation one line; of
 * a measured file, its measured timeline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "cmd.h"

/* The measured timeline of the file PATH (PROBLEM's, its stored OPS
 * [*NOPS]) in place of OPS, when it has one; *WHAT says which.  An enum
 * pw_exit after reporting a failure. */
static int
cmd_check_measured(const char *path, const struct pw_problem *problem,
    struct pw_timed_op **ops, size_t *nops, const char **what)
{
	struct pw_schedule *sched = NULL;
	struct pw_measured *m = NULL;
	struct pw_error err;
	int rc;

	*what = "";
	if ((rc = pw_measured_read(path, &m, &err)) != PW_OK ||
	    (m != NULL && (rc = pw_schedule_from_timed(problem, *ops, *nops,
	    &sched, &err)) != PW_OK)) {
		pw_cmd_say("%s", err.msg);
		pw_measured_free(m);
		return pw_cmd_status(rc);
	}
	if (m == NULL)
		return PW_EXIT_OK;
	free(*ops);
	*ops = pw_measured_timed(problem, sched, m, nops);
	*what = ", measured";
	pw_schedule_free(sched);
	pw_measured_free(m);
	return PW_EXIT_OK;
}

int
pw_cmd_check(const struct pw_cmd_args *a)
{
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_pin *pins = NULL;
	struct pw_error err;
	const char *what;
	char *label, *msg;
	size_t nops = 0, npins = 0;
	int i, status, rc;

	what = "";
	if (pw_torch_is_csv(a->pos[0])) {
		if ((status = pw_cmd_csv_read(a, a->pos[0], &problem, &ops,
		    &nops)) != PW_EXIT_OK)
			return status;
	} else if ((rc = pw_schedule_read_pins(a->pos[0], &problem, &ops,
	    &nops, &pins, &npins, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	} else if ((status = cmd_check_measured(a->pos[0], problem, &ops,
	    &nops, &what)) != PW_EXIT_OK) {
		free(ops);
		free(pins);
		pw_problem_free(problem);
		return status;
	}
	label = pw_escape(pw_cmd_label(a->pos[0]));
	/* The pins are the file's own orders, which launch also holds it
	 * to. */
	if (pw_check_file(problem, ops, nops, what[0] != '\0', pins, npins,
	    &v) == 0)
		printf("%s: valid (%zu ops%s)\n", label, nops, what);
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
	free(pins);
	pw_problem_free(problem);
	return status;
}
