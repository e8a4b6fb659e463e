/*
 * cmd.c - what each subcommand does.  main.c holds the command table and
 * dispatches here; every handler returns an enum pw_exit and reports its
 * own errors as one line on stderr.
 */
#include <sys/ioctl.h>

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "cmd.h"

/* cmd_parse's answer when the command should go on. */
#define CMD_GO		(-1)

/* Widths for show (it decides how to draw in few columns). */
#define CMD_WIDTH_MAX	100000
#define CMD_WIDTH_DEFAULT 100

/* Every option of every command; each command accepts a subset. */
static const struct option cmd_options[] = {
	{ "family", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "to", required_argument, NULL, 't' },
	{ "width", required_argument, NULL, 'w' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

#define CMD_NOPTIONS	(sizeof cmd_options / sizeof cmd_options[0])

/* A command line after parsing; the strings point into argv. */
struct cmd_args {
	const char *pos[2];	/* positional arguments, NULL when absent */
	const char *family;
	const char *output;	/* "-" unless given */
	const char *format;
	int	width;		/* 0: from the terminal */
	bool	json;
};

/* A schedule and everything computed from it; owns every member. */
struct cmd_plan {
	struct pw_problem *problem;
	struct pw_schedule *schedule;
	struct pw_timing *timing;
	struct pw_metrics *metrics;
};

void
pw_cmd_fail(const char *fmt, ...)
{
	char buf[sizeof ((struct pw_error *)NULL)->msg + 1024];
	const char *s;
	bool colon;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);

	fputs("pipewright: ", stderr);
	for (s = buf; *s != '\0'; s++) {
		if (*s != '\n') {
			fputc(*s, stderr);
			continue;
		}
		/* "blocked:\n  a\n  b" reads "blocked: a; b". */
		colon = s > buf && s[-1] == ':';
		while (s[1] == ' ' || s[1] == '\t' || s[1] == '\n')
			s++;
		if (s[1] != '\0')
			fputs(colon ? " " : "; ", stderr);
	}
	fputc('\n', stderr);
}

/* The size of registry WHICH; fills the name and summary of its entry I
 * when I is below it. */
static size_t
cmd_registry(int which, size_t i, const char **name, const char **summary)
{
	if (which == PW_CMD_LIST_FAMILIES) {
		if (i < pw_nfamilies) {
			*name = pw_families[i].name;
			*summary = pw_families[i].summary;
		}
		return pw_nfamilies;
	}
	assert(which == PW_CMD_LIST_FORMATS);
	if (i < pw_nexport_formats) {
		*name = pw_export_formats[i].name;
		*summary = pw_export_formats[i].summary;
	}
	return pw_nexport_formats;
}

void
pw_cmd_list(FILE *fp, int which)
{
	const char *name, *summary;
	size_t i;
	int width = 0;

	for (i = 0; i < cmd_registry(which, i, &name, &summary); i++) {
		if ((int)strlen(name) > width)
			width = (int)strlen(name);
	}
	for (i = 0; i < cmd_registry(which, i, &name, &summary); i++)
		fprintf(fp, "  %-*s  %s\n", width, name, summary);
}

/* Reports that NAME is not in registry WHICH, naming those that are. */
static void
cmd_unknown(int which, const char *what, const char *name)
{
	const char *entry, *summary;
	char *names, *longer;
	size_t i;

	names = pw_xstrdup("");
	for (i = 0; i < cmd_registry(which, i, &entry, &summary); i++) {
		longer = pw_xasprintf("%s%s%s", names, i > 0 ? ", " : "",
		    entry);
		free(names);
		names = longer;
	}
	pw_cmd_fail("unknown %s '%s' (one of: %s)", what, name, names);
	free(names);
}

/* Reads a whole number from S within [MIN, MAX] into OUT. */
static bool
cmd_int(const char *s, long min, long max, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || n < min || n > max)
		return false;
	*out = (int)n;
	return true;
}

/*
 * Parses a command line: the options named in ACCEPTED (short letters;
 * --help always), then between MINPOS and MAXPOS (at most 2) positional
 * arguments.  Returns CMD_GO, or the exit status when the command is done
 * (its help printed, or an error reported).
 */
static int
cmd_parse(const struct pw_command *cmd, int argc, char **argv,
    const char *accepted, int minpos, int maxpos, struct cmd_args *a)
{
	struct option longopts[CMD_NOPTIONS];
	char shortopts[2 * CMD_NOPTIONS + 2];
	const char *bad;
	size_t i, nlong = 0, nshort = 0;
	int c, npos;

	assert(maxpos <= (int)(sizeof a->pos / sizeof a->pos[0]));
	memset(a, 0, sizeof *a);
	a->output = "-";

	/* A leading ':' makes getopt tell a missing argument apart. */
	shortopts[nshort++] = ':';
	for (i = 0; cmd_options[i].name != NULL; i++) {
		if (cmd_options[i].val != 'h' &&
		    strchr(accepted, cmd_options[i].val) == NULL)
			continue;
		longopts[nlong++] = cmd_options[i];
		shortopts[nshort++] = (char)cmd_options[i].val;
		if (cmd_options[i].has_arg == required_argument)
			shortopts[nshort++] = ':';
	}
	longopts[nlong] = cmd_options[CMD_NOPTIONS - 1];
	shortopts[nshort] = '\0';

	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			pw_command_usage(stdout, cmd);
			return PW_EXIT_OK;
		case 'f':
			a->family = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 't':
			a->format = optarg;
			break;
		case 'w':
			if (!cmd_int(optarg, 1, CMD_WIDTH_MAX, &a->width)) {
				pw_cmd_fail("%s: --width '%s' is not a whole"
				    " number from 1 to %d", cmd->name, optarg,
				    CMD_WIDTH_MAX);
				return PW_EXIT_INPUT;
			}
			break;
		case 'j':
			a->json = true;
			break;
		case ':':
			bad = argv[optind - 1];
			if (strncmp(bad, "--", 2) == 0)
				pw_cmd_fail("%s: option '%s' needs a value (try"
				    " 'pipewright %s --help')", cmd->name, bad,
				    cmd->name);
			else
				pw_cmd_fail("%s: option '-%c' needs a value"
				    " (try 'pipewright %s --help')",
				    cmd->name, optopt, cmd->name);
			return PW_EXIT_INPUT;
		default:
			/* Long options leave optopt 0 and have been passed. */
			if (optopt != 0)
				pw_cmd_fail("%s: unknown option '-%c' (try"
				    " 'pipewright %s --help')", cmd->name,
				    optopt, cmd->name);
			else
				pw_cmd_fail("%s: unknown option '%s' (try"
				    " 'pipewright %s --help')", cmd->name,
				    argv[optind - 1], cmd->name);
			return PW_EXIT_INPUT;
		}
	}

	npos = argc - optind;
	if (npos < minpos) {
		pw_cmd_fail("%s: missing an argument (usage: pipewright %s %s)",
		    cmd->name, cmd->name, cmd->synopsis);
		return PW_EXIT_INPUT;
	}
	if (npos > maxpos) {
		pw_cmd_fail("%s: unexpected argument '%s' (usage: pipewright"
		    " %s %s)", cmd->name, argv[optind + maxpos], cmd->name,
		    cmd->synopsis);
		return PW_EXIT_INPUT;
	}
	for (c = 0; c < npos; c++)
		a->pos[c] = argv[optind + c];
	return CMD_GO;
}

/* What to call the input PATH in messages ("-" is stdin, NULL the
 * default problem). */
static const char *
cmd_label(const char *path)
{
	if (path == NULL)
		return "the built-in default problem";
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* Returns the problem of PATH (a problem or a schedule file), or the
 * built-in default one when PATH is NULL; the caller owns it.  NULL after
 * reporting why. */
static struct pw_problem *
cmd_problem_load(const char *path)
{
	struct pw_problem *problem;
	struct pw_error err;

	if (path == NULL)
		return pw_problem_default();
	if ((problem = pw_problem_read(path, &err)) == NULL)
		pw_cmd_fail("%s", err.msg);
	return problem;
}

static void
cmd_plan_free(struct cmd_plan *plan)
{
	pw_metrics_free(plan->metrics);
	pw_timing_free(plan->timing);
	pw_schedule_free(plan->schedule);
	pw_problem_free(plan->problem);
	memset(plan, 0, sizeof *plan);
}

/* Fills PLAN with family NAME's schedule for the problem of PATH (NULL:
 * the default problem). */
static int
cmd_plan_build(struct cmd_plan *plan, const char *path, const char *name)
{
	const struct pw_family *family;
	const char *label = cmd_label(path);
	struct pw_problem *given;
	struct pw_error err;
	int rc;

	if ((family = pw_family_find(name)) == NULL) {
		cmd_unknown(PW_CMD_LIST_FAMILIES, "family", name);
		return PW_EXIT_INPUT;
	}
	if ((given = cmd_problem_load(path)) == NULL)
		return PW_EXIT_INPUT;
	rc = pw_family_build(family, given, &plan->problem, &plan->schedule,
	    &err);
	if (rc == PW_OK && plan->problem->nstages != given->nstages)
		fprintf(stderr, "pipewright: %s splits %s again: %d stages, "
		    "%d per device\n", name, label, plan->problem->nstages,
		    plan->problem->nstages / plan->problem->devices);
	pw_problem_free(given);
	if (rc == PW_ERR_NOT_APPLICABLE) {
		pw_cmd_fail("%s does not apply to %s: %s", name, label,
		    err.msg);
		return PW_EXIT_INPUT;
	}
	if (rc != PW_OK) {
		pw_cmd_fail("%s on %s: %s", name, label, err.msg);
		return PW_EXIT_INPUT;
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
cmd_plan_compare_times(const struct cmd_plan *plan, const char *path,
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
	pw_cmd_fail("%s: the stored times of %zu of %zu ops differ from the"
	    " simulated ones (first %s: stored %.9g-%.9g, simulated %.9g-%.9g);"
	    " the orders are kept and the times recomputed", cmd_label(path),
	    ndiffer,
	    nops, pw_op_name(name, sizeof name, ops[first].op),
	    ops[first].start, ops[first].end, t->start[k], t->end[k]);
}

/* Fills PLAN from the schedule file PATH: its orders, re-simulated. */
static int
cmd_plan_read(struct cmd_plan *plan, const char *path)
{
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	size_t nops = 0;
	int status = PW_EXIT_INPUT;

	if (pw_schedule_read(path, &plan->problem, &ops, &nops, &err) !=
	    PW_OK) {
		pw_cmd_fail("%s", err.msg);
		goto out;
	}
	if (pw_schedule_from_timed(plan->problem, ops, nops, &plan->schedule,
	    &err) != PW_OK || pw_simulate(plan->problem, plan->schedule,
	    &plan->timing, &err) != PW_OK) {
		pw_cmd_fail("%s: %s", cmd_label(path), err.msg);
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

/* A schedule file, or with FAMILY a problem (or schedule) file whose
 * problem gets that family's schedule. */
static int
cmd_plan_load(struct cmd_plan *plan, const char *path, const char *family)
{
	if (family != NULL)
		return cmd_plan_build(plan, path, family);
	return cmd_plan_read(plan, path);
}

/* Columns for show: the terminal's, else $COLUMNS, else the default. */
static int
cmd_width(void)
{
	struct winsize ws;
	const char *columns;
	int width;

	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	columns = getenv("COLUMNS");
	if (columns != NULL && cmd_int(columns, 1, CMD_WIDTH_MAX, &width))
		return width;
	return CMD_WIDTH_DEFAULT;
}

int
pw_cmd_schedule(const struct pw_command *cmd, int argc, char **argv)
{
	struct cmd_plan plan = { NULL, NULL, NULL, NULL };
	struct cmd_args a;
	struct pw_error err;
	int status;

	if ((status = cmd_parse(cmd, argc, argv, "fo", 0, 1, &a)) != CMD_GO)
		return status;
	if (a.family == NULL) {
		pw_cmd_fail("schedule: --family NAME is required (try"
		    " 'pipewright schedule --help')");
		return PW_EXIT_INPUT;
	}
	if ((status = cmd_plan_build(&plan, a.pos[0], a.family)) != PW_EXIT_OK)
		goto out;
	if (pw_schedule_write(a.output, plan.problem, plan.schedule,
	    plan.timing, &err) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = PW_EXIT_INPUT;
		goto out;
	}
	pw_metrics_print(strcmp(a.output, "-") == 0 ? stderr : stdout,
	    plan.problem, plan.metrics);
out:
	cmd_plan_free(&plan);
	return status;
}

int
pw_cmd_problem(const struct pw_command *cmd, int argc, char **argv)
{
	struct pw_problem *problem;
	struct cmd_args a;
	struct pw_error err;
	int status;

	if ((status = cmd_parse(cmd, argc, argv, "o", 0, 1, &a)) != CMD_GO)
		return status;
	if ((problem = cmd_problem_load(a.pos[0])) == NULL)
		return PW_EXIT_INPUT;
	status = PW_EXIT_OK;
	if (pw_problem_write(a.output, problem, &err) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = PW_EXIT_INPUT;
	}
	pw_problem_free(problem);
	return status;
}

int
pw_cmd_eval(const struct pw_command *cmd, int argc, char **argv)
{
	struct cmd_plan plan = { NULL, NULL, NULL, NULL };
	struct cmd_args a;
	int status;

	if ((status = cmd_parse(cmd, argc, argv, "jf", 1, 1, &a)) != CMD_GO)
		return status;
	if ((status = cmd_plan_load(&plan, a.pos[0], a.family)) != PW_EXIT_OK)
		goto out;
	if (!a.json)
		pw_metrics_print(stdout, plan.problem, plan.metrics);
	else if (pw_metrics_print_json(stdout, plan.problem,
	    plan.metrics) != PW_OK) {
		pw_cmd_fail("eval: cannot write the metrics to stdout");
		status = PW_EXIT_INPUT;
	}
out:
	cmd_plan_free(&plan);
	return status;
}

int
pw_cmd_check(const struct pw_command *cmd, int argc, char **argv)
{
	struct pw_violations v = { 0, 0, NULL };
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	struct cmd_args a;
	const char *label;
	size_t nops = 0;
	int i, status;

	if ((status = cmd_parse(cmd, argc, argv, "", 1, 1, &a)) != CMD_GO)
		return status;
	if (pw_schedule_read(a.pos[0], &problem, &ops, &nops, &err) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		return PW_EXIT_INPUT;
	}
	status = PW_EXIT_OK;
	label = cmd_label(a.pos[0]);
	if (pw_check(problem, ops, nops, &v) == 0)
		printf("%s: valid (%zu ops)\n", label, nops);
	else {
		for (i = 0; i < v.n; i++)
			printf("%s: %s\n", label, v.msg[i]);
		printf("%s: %d violation%s\n", label, v.n,
		    v.n == 1 ? "" : "s");
		status = PW_EXIT_INVALID;
	}
	pw_violations_free(&v);
	free(ops);
	pw_problem_free(problem);
	return status;
}

int
pw_cmd_compare(const struct pw_command *cmd, int argc, char **argv)
{
	struct pw_problem *problem;
	struct cmd_args a;
	int status;

	if ((status = cmd_parse(cmd, argc, argv, "", 0, 1, &a)) != CMD_GO)
		return status;
	if ((problem = cmd_problem_load(a.pos[0])) == NULL)
		return PW_EXIT_INPUT;
	pw_compare_print(stdout, problem);
	pw_problem_free(problem);
	return PW_EXIT_OK;
}

int
pw_cmd_show(const struct pw_command *cmd, int argc, char **argv)
{
	struct cmd_plan plan = { NULL, NULL, NULL, NULL };
	struct cmd_args a;
	int status;

	if ((status = cmd_parse(cmd, argc, argv, "wf", 1, 1, &a)) != CMD_GO)
		return status;
	if ((status = cmd_plan_load(&plan, a.pos[0], a.family)) == PW_EXIT_OK)
		pw_show(stdout, plan.problem, plan.schedule, plan.timing,
		    plan.metrics, a.width != 0 ? a.width : cmd_width());
	cmd_plan_free(&plan);
	return status;
}

int
pw_cmd_export(const struct pw_command *cmd, int argc, char **argv)
{
	struct cmd_plan plan = { NULL, NULL, NULL, NULL };
	const struct pw_export_format *format;
	struct pw_outfile out;
	struct pw_error err;
	struct cmd_args a;
	int status;

	if ((status = cmd_parse(cmd, argc, argv, "tof", 1, 1, &a)) != CMD_GO)
		return status;
	if (a.format == NULL) {
		pw_cmd_fail("export: --to FORMAT is required (try 'pipewright"
		    " export --help')");
		return PW_EXIT_INPUT;
	}
	if ((format = pw_export_find(a.format)) == NULL) {
		cmd_unknown(PW_CMD_LIST_FORMATS, "format", a.format);
		return PW_EXIT_INPUT;
	}
	if ((status = cmd_plan_load(&plan, a.pos[0], a.family)) != PW_EXIT_OK)
		goto out;
	status = PW_EXIT_INPUT;
	if (pw_outfile_open(&out, a.output, &err) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		goto out;
	}
	if (format->write(out.fp, plan.problem, plan.schedule, plan.timing,
	    plan.metrics, &err) != PW_OK) {
		pw_outfile_abort(&out);
		pw_cmd_fail("%s: %s", strcmp(a.output, "-") == 0 ? "<stdout>" :
		    a.output, err.msg);
		goto out;
	}
	if (pw_outfile_commit(&out, &err) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		goto out;
	}
	status = PW_EXIT_OK;
out:
	cmd_plan_free(&plan);
	return status;
}
