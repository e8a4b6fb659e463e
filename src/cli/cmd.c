/*
 * cmd.c - what every command shares: its one-line messages, the
 * registries it names, and the exit status of a failure.  main.c holds the
 * command table and dispatches to the handlers (cmd_*.c); every handler
 * returns an enum pw_exit and reports its own errors as one line on
 * stderr.
 */
#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "cmd.h"

/* The stage-microbatch pairs from which a comparison of every family says
 * how it goes: 8 stages by 512 microbatches take about a second here,
 * the default problem's 512 pairs a tenth.  By size, not by time, so that
 * what a command prints does not depend on the machine's load. */
#define CMD_COMPARE_SAY_PAIRS	4096

/* pw_cmd_silence's: nothing is said while it is set. */
static bool cmd_silent;

void
pw_cmd_silence(bool silent)
{
	cmd_silent = silent;
}

void
pw_cmd_say_cause(const char *what, int error)
{
	pw_cmd_say("%s%s%s", what, error != 0 ? ": " : "", error != 0 ?
	    strerror(error) : "");
}

void
pw_cmd_say(const char *fmt, ...)
{
	va_list ap;
	char buf[sizeof ((struct pw_error *)NULL)->msg + 1024];
	char one[2 * sizeof buf], *line;

	if (cmd_silent)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	pw_one_line(buf, one, sizeof one);
	/* Messages quote file contents and paths: nothing in them may act
	 * on the terminal. */
	line = pw_escape(one);
	fprintf(stderr, "pipewright: %s\n", line);
	free(line);
}

/* The size of registry WHICH; fills the name and summary of its entry I
 * when I is below it (a preset's summary is written into a buffer that
 * the next call overwrites). */
static size_t
cmd_registry(int which, size_t i, const char **name, const char **summary)
{
	static char buf[160];
	const struct pw_hardware *hw;
	const struct pw_model *m;
	char bytes[32];

	switch (which) {
	case PW_CMD_LIST_FAMILIES:
		if (i < pw_nfamilies) {
			*name = pw_families[i].name;
			*summary = pw_families[i].summary;
		}
		return pw_nfamilies;
	case PW_CMD_REG_MODELS:
		if (i < pw_nmodel_presets) {
			m = &pw_model_presets[i];
			snprintf(buf, sizeof buf, "%d layers, hidden %d, %d "
			    "heads, vocabulary %d, sequence %d", m->layers,
			    m->hidden, m->heads, m->vocab, m->seq);
			*name = m->name;
			*summary = buf;
		}
		return pw_nmodel_presets;
	case PW_CMD_REG_HARDWARE:
		if (i < pw_nhardware_presets) {
			hw = &pw_hardware_presets[i];
			snprintf(buf, sizeof buf, "%.0f TFLOP/s bf16, %s",
			    hw->peak_flops / 1e12, pw_fmt_bytes(bytes,
			    sizeof bytes, hw->memory));
			*name = hw->name;
			*summary = buf;
		}
		return pw_nhardware_presets;
	default:
		assert(which == PW_CMD_LIST_FORMATS);
		if (i < pw_nexport_formats) {
			*name = pw_export_formats[i].name;
			*summary = pw_export_formats[i].summary;
		}
		return pw_nexport_formats;
	}
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

void
pw_cmd_unknown(int which, const char *what, const char *name)
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
	pw_cmd_say("unknown %s '%s' (one of: %s)", what, name, names);
	free(names);
}

void
pw_cmd_table(FILE *fp, const char (*cell)[PW_CMD_CELL], size_t nrows,
    int ncols, int *widths)
{
	pw_table_print(fp, cell, nrows, ncols, widths);
}

/* The cancel flag of the run pw_cmd_cancellable is in. */
static atomic_int *cmd_cancel;

static void
cmd_interrupt(int sig)
{
	if (*cmd_cancel)
		pw_outfile_fatal(sig);
	*cmd_cancel = 1;
}

int
pw_cmd_cancellable(atomic_int *cancel, int (*fn)(void *), void *arg)
{
	static const int signals[2] = { SIGINT, SIGTERM };
	struct sigaction interrupt, before[2];
	int i, rc;

	*cancel = 0;
	cmd_cancel = cancel;
	memset(&interrupt, 0, sizeof interrupt);
	interrupt.sa_handler = cmd_interrupt;
	sigemptyset(&interrupt.sa_mask);
	interrupt.sa_flags = SA_RESTART;
	for (i = 0; i < 2; i++)
		pw_signal_catch(signals[i], &interrupt, &before[i]);
	rc = fn(arg);
	for (i = 0; i < 2; i++)
		sigaction(signals[i], &before[i], NULL);
	return rc;
}

void
pw_cmd_compare_say_init(struct pw_cmd_compare_say *say, const char *cmd)
{
	*say = (struct pw_cmd_compare_say){ cmd, pw_now(),
	    isatty(STDERR_FILENO) != 0 };
}

bool
pw_cmd_compare_progress(void *arg, const struct pw_problem *p, size_t done)
{
	struct pw_cmd_compare_say *say = arg;
	char took[32];

	if ((double)p->nstages * p->microbatches < CMD_COMPARE_SAY_PAIRS)
		return true;
	pw_fmt_seconds(took, sizeof took, pw_now() - say->start);
	if (done < pw_nfamilies)
		fprintf(stderr, "%s%s: %zu of %zu families built in %s, "
		    "building %s%s", say->tty ? "\r" : "", say->cmd, done,
		    pw_nfamilies, took, pw_families[done].name,
		    say->tty ? "\033[K" : "\n");
	else
		fprintf(stderr, "%s%s: %zu families built in %s%s\n",
		    say->tty ? "\r" : "", say->cmd, pw_nfamilies, took,
		    say->tty ? "\033[K" : "");
	fflush(stderr);
	return true;
}

void
pw_cmd_ended_print(FILE *fp, double elapsed, enum pw_solve_end end,
    const char *words, const char *what)
{
	char b1[32];

	fprintf(fp, "%-13s %s\n", "time", pw_fmt_seconds(b1, sizeof b1,
	    elapsed));
	if (end == PW_END_TIME || end == PW_END_CANCELLED)
		fprintf(fp, "%-13s %s (the best so far: another run may "
		    "differ)\n", "ended", words);
	else
		fprintf(fp, "%-13s %s (the same %s on every run)\n", "ended",
		    words, what);
}

int
pw_cmd_json_print(FILE *fp, struct json_t *root, const char *fail)
{
	int rc;

	errno = 0;
	if ((rc = pw_json_print(fp, root)) == PW_OK)
		return PW_EXIT_OK;
	pw_cmd_say_cause(fail, errno);
	return pw_cmd_status(rc);
}

/* A bug is 3, anything else the input's or the files' (2), as docs/cli.md
 * lists them. */
int
pw_cmd_status(int rc)
{
	assert(rc != PW_OK);
	if (rc == PW_ERR_CANCELLED || rc == PW_ERR_RUNTIME)
		return PW_EXIT_RUNTIME;
	return rc == PW_ERR_INTERNAL ? PW_EXIT_INTERNAL : PW_EXIT_INPUT;
}

const char *
pw_cmd_label(const char *path)
{
	if (path == NULL)
		return "the built-in default problem";
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

bool
pw_cmd_pipeline_other(const struct pw_problem *a, const struct pw_problem *b,
    const char *other, char *why, size_t len)
{
	const struct { const char *what; int x, y; } count[] = {
		{ "devices", a->devices, b->devices },
		{ "microbatches", a->microbatches, b->microbatches },
		{ "stages", a->nstages, b->nstages },
	};
	int s, k;

	for (k = 0; k < (int)(sizeof count / sizeof count[0]); k++)
		if (count[k].x != count[k].y) {
			snprintf(why, len, "%d %s, %s %d", count[k].x,
			    count[k].what, other, count[k].y);
			return true;
		}
	for (s = 0; s < a->nstages; s++)
		if (a->stages[s].device != b->stages[s].device) {
			snprintf(why, len, "stage %d on device %d, %s %d", s,
			    a->stages[s].device, other, b->stages[s].device);
			return true;
		}
	return false;
}

bool
pw_cmd_problem_other(const struct pw_problem *a, const struct pw_problem *b,
    const char *other, char *why, size_t len)
{
	static const char *const name[] = { "f", "b", "w", "act", "hold",
	    "offload", "comm" };
	const struct pw_stage *x, *y;
	double va[7], vb[7];
	char bx[32], by[32], shape[160];
	int s, k, d;

	if (pw_problem_same(a, b))
		return false;
	if (pw_cmd_pipeline_other(a, b, other, shape, sizeof shape)) {
		snprintf(why, len, "another problem (%s)", shape);
		return true;
	}
	for (s = 0; s < a->nstages; s++) {
		x = &a->stages[s];
		y = &b->stages[s];
		memcpy(va, (double[7]){ x->f, x->b, x->w, x->act, x->hold,
		    x->offload, x->comm }, sizeof va);
		memcpy(vb, (double[7]){ y->f, y->b, y->w, y->act, y->hold,
		    y->offload, y->comm }, sizeof vb);
		for (k = 0; k < 7; k++)
			if (va[k] != vb[k]) {
				snprintf(why, len, "another problem (stage %d's"
				    " %s %.6g, %s %.6g)", s, name[k], va[k],
				    other, vb[k]);
				return true;
			}
	}
	if (a->comm != b->comm) {
		snprintf(why, len, "another problem (comm %.6g, %s %.6g)",
		    a->comm, other, b->comm);
		return true;
	}
	for (d = 0; d < a->devices; d++) {
		const struct pw_device_memory *ma = &a->memory[d];
		const struct pw_device_memory *mb = &b->memory[d];
		bool fixed = ma->static_bytes != mb->static_bytes;

		if (!fixed && ma->limit == mb->limit)
			continue;
		pw_fmt_bytes(bx, sizeof bx, fixed ? ma->static_bytes :
		    ma->limit);
		pw_fmt_bytes(by, sizeof by, fixed ? mb->static_bytes :
		    mb->limit);
		snprintf(why, len, "another problem (device %d's %s %s, %s "
		    "%s)", d, fixed ? "static bytes" : "memory limit",
		    isinf(ma->limit) && !fixed ? "none" : bx, other,
		    isinf(mb->limit) && !fixed ? "none" : by);
		return true;
	}
	snprintf(why, len, "another problem%s", a->link.present !=
	    b->link.present ? " (its PCIe link)" : a->link.present ?
	    " (its link's bandwidths, latency or groups)" : "");
	return true;
}
