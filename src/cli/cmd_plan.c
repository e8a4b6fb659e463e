/*
 * cmd_plan.c - the inputs of the commands: a problem from a file, a
 * script or the built-in default, and a schedule with everything computed
 * from it, read from a file or built by a family.
 */
#include <sys/stat.h>
#include <unistd.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "plan.h"
#include "cmd.h"
#include "pwlua.h"

/* The problem of the file PATH, a Lua problem script (its preferences
 * into PREFS, which may be NULL) or a problem or schedule file (its pins
 * into PINS, when not NULL); NULL after saying why. */
static struct pw_problem *
cmd_plan_problem_file(const char *path, struct pwlua_solve_prefs *prefs,
    struct pw_pin **pins, size_t *npins)
{
	struct pw_problem *problem = NULL;
	struct pw_error err;

	if (pwlua_is_script(path))
		problem = pwlua_problem_read(path, NULL, prefs, &err);
	else if (pins == NULL)
		problem = pw_problem_read(path, &err);
	else
		pw_file_read_pins(path, &problem, NULL, NULL, pins, npins,
		    NULL, &err);
	if (problem == NULL)
		pw_cmd_say("%s", err.msg);
	return problem;
}

struct pw_problem *
pw_cmd_problem_load(const struct pw_cmd_args *a,
    struct pwlua_solve_prefs *prefs)
{
	return pw_cmd_problem_load_pins(a, prefs, NULL, NULL);
}

struct pw_problem *
pw_cmd_problem_load_pins(const struct pw_cmd_args *a,
    struct pwlua_solve_prefs *prefs, struct pw_pin **pins, size_t *npins)
{
	const char *path = a->pos[0];

	if (prefs != NULL)
		memset(prefs, 0, sizeof *prefs);
	if (pins != NULL) {
		*pins = NULL;
		*npins = 0;
	}
	if (a->model[PW_CMD_M_MODEL] != NULL)
		return pw_cmd_model_problem(a);
	if (path == NULL)
		return pw_problem_default();
	/* Read as JSON it would fail on its first comma. */
	if (pw_torch_is_csv(path)) {
		pw_cmd_say("%s: %s is a schedule (a PyTorch CSV), not a "
		    "problem%s", a->cmd->name, path, a->family != NULL ?
		    " for --family to schedule" : "");
		return NULL;
	}
	return cmd_plan_problem_file(path, prefs, pins, npins);
}

void
pw_cmd_prefs_apply(const struct pw_cmd_args *a,
    const struct pwlua_solve_prefs *prefs, enum pw_objective *objective,
    double *time_limit)
{
	*objective = !a->objective_given && prefs->has_objective ?
	    prefs->objective : a->objective;
	if (a->time_limit > 0 || prefs->time_limit > 0)
		*time_limit = a->time_limit > 0 ? a->time_limit :
		    prefs->time_limit;
}

const char *
pw_cmd_input_label(const struct pw_cmd_args *a)
{
	static char buf[256];

	if (a->model[PW_CMD_M_MODEL] != NULL)
		return pw_cmd_model_label(a, buf, sizeof buf);
	return pw_cmd_label(a->pos[0]);
}

int
pw_cmd_plan_build(const struct pw_cmd_args *a, struct pw_plan **out)
{
	const struct pw_family *family;
	const char *label = pw_cmd_input_label(a), *name = a->family;
	const struct pw_problem *used;
	struct pw_problem *given;
	struct pw_error err;
	int rc, nstages;

	*out = NULL;
	if ((family = pw_family_find(name)) == NULL) {
		pw_cmd_unknown(PW_CMD_LIST_FAMILIES, "family", name);
		return PW_EXIT_INPUT;
	}
	if ((given = pw_cmd_problem_load(a, NULL)) == NULL)
		return PW_EXIT_INPUT;
	rc = pw_plan_family(family, given, out, &err);
	nstages = given->nstages;
	pw_problem_free(given);
	if (rc == PW_ERR_NOT_APPLICABLE) {
		pw_cmd_say("%s does not apply to %s: %s", name, label,
		    err.msg);
		return pw_cmd_status(rc);
	}
	/* pw_plan_family's one internal error: the family's own schedule
	 * does not simulate, our bug. */
	if (rc == PW_ERR_INTERNAL) {
		pw_cmd_say("internal error: the %s schedule of %s does not"
		    " simulate: %s", name, label, err.msg);
		return PW_EXIT_INTERNAL;
	}
	if (rc != PW_OK) {
		pw_cmd_say("%s on %s: %s", name, label, err.msg);
		return pw_cmd_status(rc);
	}
	used = pw_plan_problem(*out);
	if (used->nstages != nstages)
		pw_cmd_say("%s splits %s again: %d stages, %d per device",
		    name, label, used->nstages, used->nstages / used->devices);
	return PW_EXIT_OK;
}

void
pw_cmd_compare_times(const struct pw_plan *plan, const char *path,
    const struct pw_timed_op *ops, size_t nops)
{
	const struct pw_problem *p = pw_plan_problem(plan);
	const struct pw_timing *t = pw_plan_timing(plan);
	double scale, tol;
	size_t i, k, first = 0, ndiffer = 0;
	char name[64];

	for (i = 0; i < nops; i++) {
		k = pw_op_index(p, ops[i].op);
		scale = fmax(pw_plan_metrics(plan)->makespan,
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
	k = pw_op_index(p, ops[first].op);
	pw_cmd_say("%s: the stored times of %zu of %zu ops differ from the"
	    " simulated ones (first %s: stored %.9g to %.9g, simulated %.9g to"
	    " %.9g);"
	    " the orders are kept and the times recomputed",
	    pw_cmd_label(path), ndiffer, nops,
	    pw_op_name(name, sizeof name, ops[first].op), ops[first].start,
	    ops[first].end, t->start[k], t->end[k]);
}

int
pw_cmd_csv_plan(const struct pw_cmd_args *a, const char *path,
    struct pw_plan **out)
{
	struct pw_problem *problem;
	struct pw_schedule *sched;
	struct pw_error err;
	int rc;

	*out = NULL;
	if (a->problem == NULL) {
		pw_cmd_say("%s: a PyTorch schedule CSV has no costs: add"
		    " --problem PROBLEM (a problem or schedule file, or a "
		    "problem script)",
		    pw_cmd_label(path));
		return PW_EXIT_INPUT;
	}
	/* Read as JSON it would fail on its first comma. */
	if (pw_torch_is_csv(a->problem)) {
		pw_cmd_say("%s: --problem %s is a schedule (a PyTorch CSV), "
		    "not the problem or schedule file that gives its costs",
		    a->cmd->name, a->problem);
		return PW_EXIT_INPUT;
	}
	if ((problem = cmd_plan_problem_file(a->problem, NULL, NULL,
	    NULL)) == NULL)
		return PW_EXIT_INPUT;
	if ((rc = pw_torch_read_file(path, problem, &sched, &err)) != PW_OK) {
		pw_problem_free(problem);
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	/* The reader's refusals name the file and its line; what only the
	 * timing finds (a deadlock) is the file's as a whole. */
	if ((rc = pw_plan_new(problem, sched, out, &err)) != PW_OK) {
		pw_cmd_say("%s: %s%s", pw_cmd_label(path), rc ==
		    PW_ERR_DEADLOCK ? "its orders on the problem: " : "",
		    err.msg);
		return pw_cmd_status(rc);
	}
	return PW_EXIT_OK;
}

int
pw_cmd_csv_read(const struct pw_cmd_args *a, const char *path,
    struct pw_problem **problem, struct pw_timed_op **ops, size_t *nops)
{
	struct pw_plan *plan;
	int status;

	*problem = NULL;
	*ops = NULL;
	*nops = 0;
	if ((status = pw_cmd_csv_plan(a, path, &plan)) != PW_EXIT_OK)
		return status;
	*problem = pw_problem_copy(pw_plan_problem(plan));
	*ops = pw_timed_ops(*problem, pw_plan_schedule(plan),
	    pw_plan_timing(plan), nops);
	pw_plan_free(plan);
	return PW_EXIT_OK;
}

/* Whether PATH reads as a problem file, which a command that wants a
 * schedule is then told how to schedule; read again only on that
 * failure's path. */
static bool
cmd_plan_is_problem(const char *path)
{
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	size_t nops = 0;
	bool is;

	is = path != NULL && strcmp(path, "-") != 0 &&
	    pw_file_read(path, &problem, &ops, &nops, NULL, &err) == PW_OK &&
	    ops == NULL;
	pw_problem_free(problem);
	free(ops);
	return is;
}

int
pw_cmd_plan_load(const struct pw_cmd_args *a, struct pw_plan **out)
{
	struct pw_timed_op *ops = NULL;
	const char *path = a->pos[0];
	struct pw_error err;
	size_t nops = 0;
	int rc;

	*out = NULL;
	if (a->family != NULL)
		return pw_cmd_plan_build(a, out);
	if (a->model[PW_CMD_M_MODEL] != NULL) {
		pw_cmd_say("%s: --model needs --family NAME (a model's problem"
		    " has no schedule until a family builds one)",
		    a->cmd->name);
		return PW_EXIT_INPUT;
	}
	if (path != NULL && pw_torch_is_csv(path))
		return pw_cmd_csv_plan(a, path, out);
	if ((rc = pw_plan_read(path, out, &ops, &nops, &err)) != PW_OK) {
		if (cmd_plan_is_problem(path))
			pw_cmd_say("%s: %s is a problem, not a schedule: add "
			    "--family NAME to build one (schedule --help lists "
			    "the families)", a->cmd->name, path);
		else
			pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	pw_cmd_compare_times(*out, path, ops, nops);
	free(ops);
	return PW_EXIT_OK;
}

int
pw_cmd_problem_save(const char *path, const struct pw_problem *problem)
{
	struct pw_error err;
	int rc;

	rc = pwlua_is_script(path) ? pwlua_problem_write(path, problem, &err) :
	    pw_problem_write(path, problem, &err);
	if (rc != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	return PW_EXIT_OK;
}

int
pw_cmd_output_check(const char *output)
{
	struct pw_outfile check;
	struct pw_error err;
	struct stat st;
	int rc;

	/* A device or a FIFO is only opened to write the schedule (a
	 * directory is opened, and refused, now). */
	if (strcmp(output, "-") == 0 || (stat(output, &st) == 0 &&
	    !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
		return PW_EXIT_OK;
	if ((rc = pw_outfile_open(&check, output, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	pw_outfile_abort(&check);
	return PW_EXIT_OK;
}

int
pw_cmd_json_output_check(const char *output)
{
	struct pw_error err;
	int rc;

	if ((rc = pw_json_path_check(output, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	return pw_cmd_output_check(output);
}

static bool
cmd_plan_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether OUTPUT names the regular file INPUT names. */
static bool
cmd_plan_output_is(const char *output, const char *input)
{
	struct stat out, in;

	/* A terminal or /dev/null may be both and lose nothing. */
	if (output == NULL || input == NULL || strcmp(output, "-") == 0 ||
	    strcmp(input, "-") == 0)
		return false;
	return stat(output, &out) == 0 && S_ISREG(out.st_mode) &&
	    stat(input, &in) == 0 && cmd_plan_same_file(&out, &in);
}

bool
pw_cmd_outputs_same(const char *a, const char *b)
{
	const char *named = strcmp(a, "-") == 0 ? b : a;
	char *name[2] = { pw_xstrdup(a), pw_xstrdup(b) };
	char *dir[2] = { NULL, NULL }, *slash;
	struct stat sa, sb;
	bool same;
	int i;

	/* A device (/dev/null, a terminal) or a FIFO may be both and lose
	 * nothing; stdout is the file it is open on. */
	if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		same = strcmp(a, b) == 0 || (pw_cmd_output_is_stdout(named) &&
		    stat(named, &sa) == 0 && S_ISREG(sa.st_mode));
	else if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		same = S_ISREG(sa.st_mode) && cmd_plan_same_file(&sa, &sb);
	else {
		/* One yet to be made: the same name in one directory. */
		for (i = 0; i < 2; i++) {
			if ((slash = strrchr(name[i], '/')) == NULL) {
				dir[i] = realpath(".", NULL);
				continue;
			}
			*slash = '\0';
			dir[i] = realpath(slash == name[i] ? "/" : name[i],
			    NULL);
			memmove(name[i], slash + 1, strlen(slash + 1) + 1);
		}
		same = dir[0] != NULL && dir[1] != NULL &&
		    strcmp(dir[0], dir[1]) == 0 &&
		    strcmp(name[0], name[1]) == 0;
	}
	for (i = 0; i < 2; i++) {
		free(dir[i]);
		free(name[i]);
	}
	return same;
}

int
pw_cmd_output_spares(const char *cmd, const char *output,
    const char *const *inputs, int n, const char *what)
{
	int i;

	for (i = 0; i < n; i++)
		if (cmd_plan_output_is(output, inputs[i])) {
			pw_cmd_say("%s: -o '%s' is %s %s: it would be "
			    "replaced; write elsewhere", cmd, output, what,
			    inputs[i]);
			return PW_EXIT_INPUT;
		}
	return PW_EXIT_OK;
}

bool
pw_cmd_output_is_stdout(const char *output)
{
	struct stat st, out;

	if (output == NULL)
		return false;
	return strcmp(output, "-") == 0 || (stat(output, &st) == 0 &&
	    fstat(STDOUT_FILENO, &out) == 0 && cmd_plan_same_file(&st, &out));
}

const char *
pw_cmd_schedule_output(const struct pw_cmd_args *a)
{
	return a->output_given || !isatty(STDOUT_FILENO) ? a->output : NULL;
}

int
pw_cmd_plan_write(const struct pw_plan *plan, const char *output,
    FILE **report)
{
	return pw_cmd_plan_write_pins(plan, NULL, 0, output, report);
}

int
pw_cmd_plan_write_pins(const struct pw_plan *plan, const struct pw_pin *pins,
    size_t npins, const char *output, FILE **report)
{
	struct pw_error err;
	int rc;
	/* Asked before the file replaces what stdout was redirected to. */
	bool to_stdout = pw_cmd_output_is_stdout(output);

	if (output == NULL) {
		*report = stdout;
		pw_metrics_print(stdout, pw_plan_problem(plan),
		    pw_plan_metrics(plan));
		fprintf(stdout, "hint: stdout is a terminal, so the schedule's "
		    "JSON was not printed: write the schedule with -o FILE (or "
		    "-o - for stdout)\n");
		return PW_EXIT_OK;
	}
	if ((rc = pw_schedule_write_with(output, pw_plan_problem(plan),
	    pw_plan_schedule(plan), pw_plan_timing(plan), pins, npins, NULL,
	    &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	*report = to_stdout ? stderr : stdout;
	pw_metrics_print(*report, pw_plan_problem(plan), pw_plan_metrics(plan));
	return PW_EXIT_OK;
}
