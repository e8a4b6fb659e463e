/*
 * cmd.c - what each subcommand does.  main.c holds the command table and
 * dispatches here; every handler returns an enum pw_exit and reports its
 * own errors as one line on stderr.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "cmd.h"
#include "pwlua.h"
#include "solver.h"

/* cmd_parse's answer when the command should go on. */
#define CMD_GO		(-1)
/* cmd_parse's MAXPOS for a command whose first positional argument ends
 * its options: that argument and all after it are the command's. */
#define CMD_REST	(-1)

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
	{ "write-dir", required_argument, NULL, 'd' },
	{ "from", required_argument, NULL, 'F' },
	{ "time-limit", required_argument, NULL, 'l' },
	{ "iteration-limit", required_argument, NULL, 'I' },
	{ "objective", required_argument, NULL, 'O' },
	{ "offload", required_argument, NULL, 'x' },
	{ "seed", required_argument, NULL, 's' },
	{ "write-lp", required_argument, NULL, 'W' },
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
	const char *write_dir;
	char	**rest;		/* CMD_REST: [nrest] */
	int	nrest;
	/* solve */
	const char *from;
	double	time_limit;	/* 0: the solver's default */
	long	iteration_limit;	/* 0: none */
	enum pw_objective objective;
	bool	objective_given;
	enum pw_offload_mode offload;
	unsigned long seed;
	const char *write_lp;
};

/* A schedule and everything computed from it; owns every member. */
struct cmd_plan {
	struct pw_problem *problem;
	struct pw_schedule *schedule;
	struct pw_timing *timing;
	struct pw_metrics *metrics;
};

/* Says FMT's message on stderr as pw_cmd_fail and pw_cmd_note do. */
static void
cmd_say(const char *fmt, va_list ap)
{
	char buf[sizeof ((struct pw_error *)NULL)->msg + 1024];
	char one[2 * sizeof buf], *line;
	const char *s;
	size_t n = 0;
	bool colon;

	vsnprintf(buf, sizeof buf, fmt, ap);

	/* One line: "blocked:\n  a\n  b" reads "blocked: a; b". */
	for (s = buf; *s != '\0'; s++) {
		if (*s != '\n') {
			one[n++] = *s;
			continue;
		}
		colon = s > buf && s[-1] == ':';
		while (s[1] == ' ' || s[1] == '\t' || s[1] == '\n')
			s++;
		if (s[1] != '\0' && colon)
			one[n++] = ' ';
		else if (s[1] != '\0') {
			one[n++] = ';';
			one[n++] = ' ';
		}
	}
	one[n] = '\0';
	/* Messages quote file contents and paths: nothing in them may act
	 * on the terminal. */
	line = pw_escape(one);
	fprintf(stderr, "pipewright: %s\n", line);
	free(line);
}

void
pw_cmd_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_say(fmt, ap);
	va_end(ap);
}

void
pw_cmd_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_say(fmt, ap);
	va_end(ap);
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

/* Reads an unsigned whole number from S within [MIN, MAX] into OUT (a
 * sign is refused: strtoull would wrap "-1"). */
static bool
cmd_whole(const char *s, unsigned long long min, unsigned long long max,
    unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && s[0] != '-' &&
	    *out >= min && *out <= max;
}

/* Parses the value of solve's option C into A; false after reporting
 * what is wrong. */
static bool
cmd_solve_option(const struct pw_command *cmd, int c, const char *v,
    struct cmd_args *a)
{
	unsigned long long n;
	char *end;

	switch (c) {
	case 'l':
		errno = 0;
		a->time_limit = strtod(v, &end);
		if (errno == 0 && end != v && *end == '\0' &&
		    isfinite(a->time_limit) && a->time_limit > 0)
			return true;
		pw_cmd_fail("%s: --time-limit '%s' is not a number of seconds "
		    "above 0", cmd->name, v);
		return false;
	case 'I':
		if (cmd_whole(v, 1, LONG_MAX, &n)) {
			a->iteration_limit = (long)n;
			return true;
		}
		pw_cmd_fail("%s: --iteration-limit '%s' is not a whole number "
		    "from 1 to %ld", cmd->name, v, LONG_MAX);
		return false;
	case 'O':
		if (strcmp(v, "makespan") == 0 || strcmp(v, "span") == 0) {
			a->objective = v[0] == 'm' ? PW_OBJ_MAKESPAN : PW_OBJ_SPAN;
			a->objective_given = true;
			return true;
		}
		pw_cmd_fail("%s: --objective '%s' is not makespan or span",
		    cmd->name, v);
		return false;
	case 'x':
		if (strcmp(v, "auto") == 0 || strcmp(v, "on") == 0 ||
		    strcmp(v, "off") == 0) {
			a->offload = v[1] == 'u' ? PW_OFFMODE_AUTO : v[1] == 'n' ?
			    PW_OFFMODE_ON : PW_OFFMODE_OFF;
			return true;
		}
		pw_cmd_fail("%s: --offload '%s' is not auto, on or off",
		    cmd->name, v);
		return false;
	default:
		assert(c == 's');
		if (cmd_whole(v, 0, ULONG_MAX, &n)) {
			a->seed = (unsigned long)n;
			return true;
		}
		pw_cmd_fail("%s: --seed '%s' is not a whole number from 0 to "
		    "%lu", cmd->name, v, ULONG_MAX);
		return false;
	}
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
	char shortopts[2 * CMD_NOPTIONS + 3];
	const char *bad;
	size_t i, nlong = 0, nshort = 0;
	int c, npos;

	assert(maxpos <= (int)(sizeof a->pos / sizeof a->pos[0]));
	memset(a, 0, sizeof *a);
	a->output = "-";
	a->objective = PW_OBJ_MAKESPAN;
	a->offload = PW_OFFMODE_AUTO;
	a->seed = 1;

	/* A leading ':' makes getopt tell a missing argument apart; '+'
	 * stops at the first positional argument. */
	if (maxpos == CMD_REST)
		shortopts[nshort++] = '+';
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
		case 'd':
			a->write_dir = optarg;
			break;
		case 'F':
			a->from = optarg;
			break;
		case 'W':
			a->write_lp = optarg;
			break;
		case 'l':
		case 'I':
		case 'O':
		case 'x':
		case 's':
			if (!cmd_solve_option(cmd, c, optarg, a))
				return PW_EXIT_INPUT;
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
	if (maxpos == CMD_REST) {
		a->rest = argv + optind;
		a->nrest = npos;
		return CMD_GO;
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

/* Returns the problem of PATH (a problem or a schedule file, or a Lua
 * problem script), or the built-in default one when PATH is NULL; the
 * caller owns it.  With PREFS (may be NULL), what a script states for the
 * optimizer, which the caller frees (pwlua_solve_prefs_free).  NULL after
 * reporting why. */
static struct pw_problem *
cmd_problem_load(const char *path, struct pwlua_solve_prefs *prefs)
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

static void
cmd_plan_free(struct cmd_plan *plan)
{
	pw_metrics_free(plan->metrics);
	pw_timing_free(plan->timing);
	pw_schedule_free(plan->schedule);
	pw_problem_free(plan->problem);
	memset(plan, 0, sizeof *plan);
}

/* The exit status of a failure RC (enum pw_rc), as docs/cli.md lists
 * them: a bug is 3, anything else the input's or the files' (2). */
static int
cmd_status(int rc)
{
	assert(rc != PW_OK);
	return rc == PW_ERR_INTERNAL ? PW_EXIT_INTERNAL : PW_EXIT_INPUT;
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
	if ((given = cmd_problem_load(path, NULL)) == NULL)
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
		return cmd_status(rc);
	}
	if (rc != PW_OK) {
		pw_cmd_fail("%s on %s: %s", name, label, err.msg);
		return cmd_status(rc);
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
	pw_cmd_note("%s: the stored times of %zu of %zu ops differ from the"
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
	int status, rc;

	if ((rc = pw_schedule_read(path, &plan->problem, &ops, &nops,
	    &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
		goto out;
	}
	if ((rc = pw_schedule_from_timed(plan->problem, ops, nops,
	    &plan->schedule, &err)) != PW_OK || (rc = pw_simulate(plan->problem,
	    plan->schedule, &plan->timing, &err)) != PW_OK) {
		pw_cmd_fail("%s: %s", cmd_label(path), err.msg);
		status = cmd_status(rc);
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
	int status, rc;

	if ((status = cmd_parse(cmd, argc, argv, "fo", 0, 1, &a)) != CMD_GO)
		return status;
	if (a.family == NULL) {
		pw_cmd_fail("schedule: --family NAME is required (try"
		    " 'pipewright schedule --help')");
		return PW_EXIT_INPUT;
	}
	if ((status = cmd_plan_build(&plan, a.pos[0], a.family)) != PW_EXIT_OK)
		goto out;
	if ((rc = pw_schedule_write(a.output, plan.problem, plan.schedule,
	    plan.timing, &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
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
	int status, rc;

	if ((status = cmd_parse(cmd, argc, argv, "o", 0, 1, &a)) != CMD_GO)
		return status;
	if ((problem = cmd_problem_load(a.pos[0], NULL)) == NULL)
		return PW_EXIT_INPUT;
	status = PW_EXIT_OK;
	if ((rc = pw_problem_write(a.output, problem, &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
	}
	pw_problem_free(problem);
	return status;
}

int
pw_cmd_eval(const struct pw_command *cmd, int argc, char **argv)
{
	struct cmd_plan plan = { NULL, NULL, NULL, NULL };
	struct cmd_args a;
	int status, rc;

	if ((status = cmd_parse(cmd, argc, argv, "jf", 1, 1, &a)) != CMD_GO)
		return status;
	if ((status = cmd_plan_load(&plan, a.pos[0], a.family)) != PW_EXIT_OK)
		goto out;
	if (!a.json)
		pw_metrics_print(stdout, plan.problem, plan.metrics);
	else if ((rc = pw_metrics_print_json(stdout, plan.problem,
	    plan.metrics)) != PW_OK) {
		pw_cmd_fail("eval: cannot write the metrics to stdout");
		status = cmd_status(rc);
	}
out:
	cmd_plan_free(&plan);
	return status;
}

int
pw_cmd_check(const struct pw_command *cmd, int argc, char **argv)
{
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_problem *problem = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	struct cmd_args a;
	char *label, *msg;
	size_t nops = 0;
	int i, status, rc;

	if ((status = cmd_parse(cmd, argc, argv, "", 1, 1, &a)) != CMD_GO)
		return status;
	if ((rc = pw_schedule_read(a.pos[0], &problem, &ops, &nops, &err)) !=
	    PW_OK) {
		pw_cmd_fail("%s", err.msg);
		return cmd_status(rc);
	}
	status = PW_EXIT_OK;
	label = pw_escape(cmd_label(a.pos[0]));
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

int
pw_cmd_compare(const struct pw_command *cmd, int argc, char **argv)
{
	struct pw_problem *problem;
	struct cmd_args a;
	int status;

	if ((status = cmd_parse(cmd, argc, argv, "", 0, 1, &a)) != CMD_GO)
		return status;
	if ((problem = cmd_problem_load(a.pos[0], NULL)) == NULL)
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
	int status, rc;

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
	if ((rc = pw_outfile_open(&out, a.output, &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
		goto out;
	}
	/* A failed write is the output's to explain (commit fails and names
	 * the cause); anything else the format's. */
	if ((rc = format->write(out.fp, plan.problem, plan.schedule,
	    plan.timing, plan.metrics, &err)) != PW_OK && !ferror(out.fp)) {
		pw_outfile_abort(&out);
		pw_cmd_fail("%s: %s", strcmp(a.output, "-") == 0 ? "<stdout>" :
		    a.output, err.msg);
		status = cmd_status(rc);
		goto out;
	}
	if ((rc = pw_outfile_commit(&out, &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
	}
out:
	cmd_plan_free(&plan);
	return status;
}

int
pw_cmd_script(const struct pw_command *cmd, int argc, char **argv)
{
	const char *dirs[] = { ".", NULL, NULL };
	const struct pwlua_config config = { 0, 0, dirs, 0 };
	struct pwlua *lua;
	struct pw_error err;
	struct cmd_args a;
	int status, rc;

	if ((status = cmd_parse(cmd, argc, argv, "d", 1, CMD_REST, &a)) !=
	    CMD_GO)
		return status;
	dirs[1] = a.write_dir;
	if ((lua = pwlua_new(&config, &err)) == NULL) {
		pw_cmd_fail("script: %s", err.msg);
		return PW_EXIT_INPUT;
	}
	status = PW_EXIT_OK;
	if ((rc = pwlua_run(lua, a.rest[0], a.nrest - 1, a.rest + 1,
	    &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
	}
	pwlua_free(lua);
	return status;
}

/* What solve last said on stderr, so that it says only what changed. */
struct cmd_progress {
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
	struct cmd_progress *last = arg;
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

/* The start schedule of --from FILE for PROBLEM in *OUT (the caller
 * frees it); false after reporting why. */
static bool
cmd_solve_from(const char *path, const struct pw_problem *problem,
    struct pw_schedule **out)
{
	struct pw_problem *given = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	size_t nops = 0;
	bool ok = false;

	*out = NULL;
	if (pw_schedule_read(path, &given, &ops, &nops, &err) != PW_OK) {
		pw_cmd_fail("solve: --from '%s' is no family (see 'pipewright "
		    "solve --help') and no schedule file: %s", path, err.msg);
		goto out;
	}
	if (!pw_problem_same(given, problem)) {
		pw_cmd_fail("solve: --from %s: its problem is not the one to "
		    "solve", cmd_label(path));
		goto out;
	}
	if (pw_schedule_from_timed(problem, ops, nops, out, &err) != PW_OK) {
		pw_cmd_fail("solve: --from %s: %s", cmd_label(path), err.msg);
		goto out;
	}
	ok = true;
out:
	free(ops);
	pw_problem_free(given);
	return ok;
}

/* Set by SIGINT or SIGTERM during a search: the search stops and its
 * best schedule is written.  A second one ends the program at once, as
 * any fatal signal does (removing temporary files). */
static atomic_int cmd_interrupted;

static void
cmd_interrupt(int sig)
{
	if (cmd_interrupted)
		pw_outfile_fatal(sig);
	cmd_interrupted = 1;
}

/* The solver's figures after the metrics. */
static void
cmd_solve_report(FILE *fp, const struct pw_solve_opts *o,
    const struct pw_solve_result *r)
{
	const struct pw_model_size *ms = &r->model;
	char b1[32], b2[32];

	fprintf(fp, "\n%-13s %s %s%s\n", "objective",
	    o->objective == PW_OBJ_SPAN ? "span" : "makespan",
	    pw_fmt_seconds(b1, sizeof b1, r->objective),
	    r->optimal ? " (optimal)" : r->ended == PW_END_CANCELLED ?
	    " (cancelled)" : "");
	fprintf(fp, "%-13s %s\n", "lower bound", pw_fmt_seconds(b1, sizeof b1,
	    r->bound));
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
	fprintf(fp, "%-13s %s\n", "time", pw_fmt_seconds(b1, sizeof b1,
	    r->elapsed));
	fprintf(fp, "%-13s %s%s\n", "ended", pw_solve_end_name(r->ended),
	    r->ended == PW_END_TIME || r->ended == PW_END_CANCELLED ?
	    " (the best so far: another run may differ)" : " (the same "
	    "schedule on every run)");
}

int
pw_cmd_solve(const struct pw_command *cmd, int argc, char **argv)
{
	struct pw_problem *problem = NULL;
	struct pw_schedule *start = NULL;
	struct pw_timing *timing = NULL;
	struct pw_metrics *metrics = NULL;
	struct pw_solve_result res;
	struct pw_solve_opts o;
	struct pw_outfile check;
	static const int cmd_cancel_signals[2] = { SIGINT, SIGTERM };
	struct sigaction interrupt, before[2];
	struct stat st;
	struct cmd_progress last = { NULL, 0, 0 };
	struct pwlua_solve_prefs prefs;
	struct pw_error err;
	struct cmd_args a;
	FILE *out;
	int i, status, rc;

	memset(&res, 0, sizeof res);
	if ((status = cmd_parse(cmd, argc, argv, "FlIOxsWo", 1, 1, &a)) !=
	    CMD_GO)
		return status;
	if ((problem = cmd_problem_load(a.pos[0], &prefs)) == NULL)
		return PW_EXIT_INPUT;
	status = PW_EXIT_INPUT;
	pw_solve_opts_init(&o);
	/* A Lua problem's own objective, time limit and pins, unless the
	 * command line says otherwise (it has no pins). */
	o.objective = !a.objective_given && prefs.has_objective ?
	    prefs.objective : a.objective;
	o.offload = a.offload;
	o.seed = a.seed;
	if (a.time_limit > 0 || prefs.time_limit > 0)
		o.time_limit = a.time_limit > 0 ? a.time_limit :
		    prefs.time_limit;
	o.iteration_limit = a.iteration_limit;
	o.pins = prefs.pins;
	o.npins = prefs.npins;
	o.write_lp = a.write_lp;
	o.progress = cmd_solve_progress;
	o.progress_arg = &last;
	/* An output that cannot be written fails before the search (a
	 * device or a FIFO is only opened to write the schedule). */
	if (strcmp(a.output, "-") != 0 && (stat(a.output, &st) != 0 ||
	    S_ISREG(st.st_mode))) {
		if ((rc = pw_outfile_open(&check, a.output, &err)) != PW_OK) {
			pw_cmd_fail("%s", err.msg);
			status = cmd_status(rc);
			goto out;
		}
		pw_outfile_abort(&check);
	}
	if (a.from != NULL && pw_family_find(a.from) != NULL)
		o.start_family = a.from;
	else if (a.from != NULL) {
		if (!cmd_solve_from(a.from, problem, &start))
			goto out;
		o.start = start;
	}
	cmd_interrupted = 0;
	o.cancel = &cmd_interrupted;
	memset(&interrupt, 0, sizeof interrupt);
	interrupt.sa_handler = cmd_interrupt;
	sigemptyset(&interrupt.sa_mask);
	interrupt.sa_flags = SA_RESTART;
	for (i = 0; i < 2; i++)
		pw_signal_catch(cmd_cancel_signals[i], &interrupt, &before[i]);
	rc = pw_solve(problem, &o, &res, &err);
	for (i = 0; i < 2; i++)
		sigaction(cmd_cancel_signals[i], &before[i], NULL);
	if (rc != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
		goto out;
	}
	if (pw_simulate(problem, res.schedule, &timing, &err) != PW_OK) {
		pw_cmd_fail("internal error: the solved schedule does not "
		    "simulate: %s", err.msg);
		status = PW_EXIT_INTERNAL;
		goto out;
	}
	if ((rc = pw_schedule_write(a.output, problem, res.schedule, timing,
	    &err)) != PW_OK) {
		pw_cmd_fail("%s", err.msg);
		status = cmd_status(rc);
		goto out;
	}
	metrics = pw_metrics_compute(problem, res.schedule, timing);
	out = strcmp(a.output, "-") == 0 ? stderr : stdout;
	pw_metrics_print(out, problem, metrics);
	cmd_solve_report(out, &o, &res);
	status = PW_EXIT_OK;
out:
	pw_metrics_free(metrics);
	pw_timing_free(timing);
	pw_solve_result_free(&res);
	pw_schedule_free(start);
	pw_problem_free(problem);
	pwlua_solve_prefs_free(&prefs);
	return status;
}
