/*
 * cmd_view.c - the commands that draw a schedule: show (a text Gantt
 * chart) and export (a trace or a picture, in a registry's format); of a
 * measured file, its measured timeline.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <fcntl.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "plan.h"
#include "cmd.h"
#include "pwlua.h"

/* Columns for show unless the terminal or $COLUMNS says. */
#define CMD_VIEW_WIDTH	100

/* Columns for show: the terminal's, else $COLUMNS, else the default. */
static int
cmd_view_width(void)
{
	struct winsize ws;
	const char *columns;
	int width;

	if (isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	columns = getenv("COLUMNS");
	if (columns != NULL && pw_parse_int(columns, 1, PW_CMD_WIDTH_MAX, &width))
		return width;
	return CMD_VIEW_WIDTH;
}

/* One warning line on stderr when PATH's measured run M breaks the
 * checker's rules: its timeline still shows, idle below 0 and all. */
static void
cmd_view_check(const char *path, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_measured *m)
{
	struct pw_violations v = { 0 };
	struct pw_timed_op *ops;
	size_t n;

	ops = pw_measured_timed(p, sched, m, &n);
	if (pw_check_measured(p, ops, n, &v) > 0)
		fprintf(stderr, "pipewright: warning: the measured timeline "
		    "breaks %d rule%s: pipewright check %s\n", v.n, v.n == 1 ?
		    "" : "s", path);
	pw_violations_free(&v);
	free(ops);
}

/* Whether OUTPUT ("-": stdout) is a terminal: /dev/stdout, /dev/tty and
 * a pts too. */
static bool
cmd_view_terminal(const char *output)
{
	struct stat st;
	bool tty;
	int fd;

	if (strcmp(output, "-") == 0)
		return isatty(STDOUT_FILENO);
	if (stat(output, &st) != 0 || !S_ISCHR(st.st_mode) ||
	    (fd = open(output, O_WRONLY | O_NOCTTY | O_NONBLOCK |
	    O_CLOEXEC)) < 0)
		return false;
	tty = isatty(fd);
	close(fd);
	return tty;
}

int
pw_cmd_view_plan(const struct pw_cmd_args *a, bool measured,
    struct pw_plan **plan, struct pw_cmd_view *v)
{
	const struct pw_problem *p;
	struct pw_measured *m = NULL;
	struct pw_error err;
	int rc, status;

	memset(v, 0, sizeof *v);
	*plan = NULL;
	/* Only a schedule file has a measured run.  It is read first, so
	 * that a file whose run is bad is refused in one line, before any
	 * note on its stored times. */
	measured = measured && a->family == NULL &&
	    a->model[PW_CMD_M_MODEL] == NULL && !a->predicted &&
	    !pwlua_is_script(a->pos[0]) && !pw_torch_is_csv(a->pos[0]);
	if (measured && (rc = pw_measured_read(a->pos[0], &m, &err)) !=
	    PW_OK) {
		pw_cmd_say("%s", err.msg);
		return pw_cmd_status(rc);
	}
	if ((status = pw_cmd_plan_load(a, plan)) != PW_EXIT_OK)
		goto out;
	p = pw_plan_problem(*plan);
	v->timing = pw_plan_timing(*plan);
	v->metrics = pw_plan_metrics(*plan);
	if (m == NULL)
		goto out;
	if ((v->own_timing = pw_measured_timing(p, m, &err)) == NULL) {
		pw_cmd_say("%s: %s", pw_cmd_label(a->pos[0]), err.msg);
		status = PW_EXIT_INPUT;
		goto out;
	}
	cmd_view_check(a->pos[0], p, pw_plan_schedule(*plan), m);
	v->own_metrics = pw_metrics_compute(p, pw_plan_schedule(*plan),
	    v->own_timing);
	v->timing = v->own_timing;
	v->metrics = v->own_metrics;
	snprintf(v->head, sizeof v->head, "measured (%s, %d iteration%s, "
	    "median step)", m->backend, m->iterations, m->iterations == 1 ?
	    "" : "s");
out:
	pw_measured_free(m);
	return status;
}

void
pw_cmd_view_free(struct pw_cmd_view *v)
{
	pw_timing_free(v->own_timing);
	pw_metrics_free(v->own_metrics);
	memset(v, 0, sizeof *v);
}

/* Reads show's --NAME time S (NULL: absent, NAN) into *OUT; false after
 * saying what is wrong. */
static bool
cmd_view_time(const char *name, const char *s, double *out)
{
	char *end;

	*out = NAN;
	if (s == NULL)
		return true;
	errno = 0;
	*out = strtod(s, &end);
	/* Decimal only, as every other number of the command line. */
	if (errno == 0 && end != s && *end == '\0' && isfinite(*out) &&
	    strpbrk(s, "xX") == NULL)
		return true;
	pw_cmd_say("show: --%s '%s' is not a number of seconds", name, s);
	return false;
}

/* PW_EXIT_OK when VALUE, command CMD's option NAME, is 0 (not given) or
 * in [MIN, MAX] (of UNIT); else one line and PW_EXIT_INPUT. */
static int
cmd_view_range(const char *cmd, const char *name, int value,
    const char *text, int min, int max, const char *unit)
{
	if (value == 0 || (value >= min && value <= max))
		return PW_EXIT_OK;
	pw_cmd_say("%s: --%s %s is out of range: %d to %d %s", cmd, name,
	    text, min, max, unit);
	return PW_EXIT_INPUT;
}

int
pw_cmd_show(const struct pw_cmd_args *a)
{
	struct pw_cmd_view v = { 0 };
	struct pw_plan *plan = NULL;
	struct pw_error err;
	double from, to;
	int status, rc;

	if (!cmd_view_time("from", a->from, &from) ||
	    !cmd_view_time("to", a->format, &to) ||
	    cmd_view_range("show", "width", a->width, a->width_text, 1,
	    PW_CMD_WIDTH_MAX, "columns") != PW_EXIT_OK)
		return PW_EXIT_INPUT;
	if ((status = pw_cmd_view_plan(a, true, &plan, &v)) != PW_EXIT_OK)
		goto out;
	if (v.head[0] != '\0')
		printf("%s\n", v.head);
	if ((rc = pw_show_window(stdout, pw_plan_problem(plan),
	    pw_plan_schedule(plan), v.timing, v.metrics, a->width != 0 ?
	    a->width : cmd_view_width(), from, to, &err)) != PW_OK) {
		pw_cmd_say("show: %s", err.msg);
		status = pw_cmd_status(rc);
	}
out:
	pw_cmd_view_free(&v);
	pw_plan_free(plan);
	return status;
}

/* PW_EXIT_OK when --width and --height, if given, are in range and
 * FORMAT (a picture) takes them; else one line and PW_EXIT_INPUT. */
static int
cmd_view_size(const struct pw_cmd_args *a,
    const struct pw_export_format *format)
{
	int status;

	if ((a->width != 0 || a->height != 0) && !format->sized) {
		pw_cmd_say("export: --width and --height size a picture; "
		    "the format %s has no size", format->name);
		return PW_EXIT_INPUT;
	}
	if ((status = cmd_view_range("export", "width", a->width,
	    a->width_text, PW_EXPORT_WIDTH_MIN, PW_EXPORT_WIDTH_MAX,
	    "pixels")) != PW_EXIT_OK)
		return status;
	return cmd_view_range("export", "height", a->height, a->height_text,
	    PW_EXPORT_HEIGHT_MIN, PW_EXPORT_HEIGHT_MAX, "pixels");
}

int
pw_cmd_export(const struct pw_cmd_args *a)
{
	struct pw_cmd_view v = { 0 };
	struct pw_plan *plan = NULL;
	const struct pw_export_format *format;
	const char *inputs[2] = { a->pos[0], a->problem };
	struct pw_export_options options = { a->width, a->height, NULL };
	struct pw_outfile out;
	struct pw_error err;
	size_t dropped;
	int status, rc;

	if (a->format == NULL) {
		pw_cmd_say("export: --to FORMAT is required (try 'pipewright"
		    " export --help')");
		return PW_EXIT_INPUT;
	}
	if ((format = pw_export_find(a->format)) == NULL) {
		pw_cmd_unknown(PW_CMD_LIST_FORMATS, "format", a->format);
		return PW_EXIT_INPUT;
	}
	if (format->binary && cmd_view_terminal(a->output)) {
		pw_cmd_say("export: --to %s writes binary data, which a "
		    "terminal cannot show: give -o FILE", format->name);
		return PW_EXIT_INPUT;
	}
	/* A trace or a picture in place of the schedule or the costs it
	 * was made from would lose them. */
	if ((status = pw_cmd_output_spares("export", a->output, inputs, 2,
	    "the input")) != PW_EXIT_OK ||
	    (status = cmd_view_size(a, format)) != PW_EXIT_OK ||
	    (status = pw_cmd_view_plan(a, true, &plan, &v)) != PW_EXIT_OK)
		goto out;
	if ((rc = pw_outfile_open(&out, a->output, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	if (v.head[0] != '\0')
		options.timeline = v.head;
	/* A failed write is the output's to explain (commit fails and names
	 * the cause); anything else the format's. */
	if ((rc = format->write(out.fp, pw_plan_problem(plan),
	    pw_plan_schedule(plan), v.timing, v.metrics, &options,
	    &err)) != PW_OK && !ferror(out.fp)) {
		pw_outfile_abort(&out);
		pw_cmd_say("%s: %s", strcmp(a->output, "-") == 0 ? "<stdout>" :
		    a->output, err.msg);
		status = pw_cmd_status(rc);
		goto out;
	}
	if ((rc = pw_outfile_commit(&out, &err)) != PW_OK) {
		pw_cmd_say("%s", err.msg);
		status = pw_cmd_status(rc);
	} else if (format->drops_transfers &&
	    (dropped = pw_torch_dropped(pw_plan_schedule(plan))) > 0)
		pw_cmd_say("warning: %s has no offload or reload: %zu"
		    " transfer%s left out (--to %s-offload keeps them)",
		    format->name, dropped, dropped == 1 ? "" : "s",
		    format->name);
out:
	pw_cmd_view_free(&v);
	pw_plan_free(plan);
	return status;
}
