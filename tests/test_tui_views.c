/*
 * test_tui_views.c - the designer's compare view and memory sweep: their
 * state without a screen (opening, each slot source, cycling, refusals, a
 * file; the sweep's thread polled to its end, the cursor, loading a point
 * as one undoable change, a refused point, a stale sweep cancelled; the
 * design search's thread polled to its end, its candidates, opening one
 * as one undoable change, a cancel) and
 * their drawing on an off-screen screen (newterm on /dev/null), rows
 * compared with the exact expected text.  The sweep's optimizer and the
 * planner run at an iteration limit, so every figure is the same on every run; the
 * polls wait for the thread as long as it takes, never for a set time.
 */
#include <locale.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "tap.h"
#include "testlib.h"
#include "tui_int.h"

/* Ten cells of the plot's rule (UTF-8's box drawing). */
#define VIEWS_RULE10	"\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80" \
	"\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80" \
	"\xe2\x94\x80"

static char problem_path[64] = "/tmp/test_tui_views.XXXXXX.json";
static char schedule_path[64] = "/tmp/test_tui_views.XXXXXX.json";
static char model_path[64] = "/tmp/test_tui_views.XXXXXX.lua";

/* Writes 4 devices x 8 microbatches of unit stages (act 1 B, hold 0.5 B,
 * static 2 B) to PROBLEM_PATH; false after a failed line. */
static bool
views_write_problem(void)
{
	static const struct pw_stage st = { .f = 1, .b = 1, .w = 1,
	    .act = 1, .hold = 0.5 };
	struct pw_problem *p = test_problem_uniform(4, 1, 8, PW_PLACE_LOOP,
	    &st);
	struct pw_error err;
	int fd, d, rc;

	for (d = 0; d < p->devices; d++)
		p->memory[d].static_bytes = 2;
	p->name = pw_xstrdup("unit");
	if ((fd = mkstemps(problem_path, 5)) >= 0)
		close(fd);
	rc = fd >= 0 ? pw_problem_write(problem_path, p, &err) : PW_ERR_IO;
	pw_problem_free(p);
	return tap_ok(rc == PW_OK, "the problem file is written");
}

/* Returns the designer on PROBLEM_PATH, or NULL after a failed line. */
static struct tui *
views_open(void)
{
	struct pw_error err;
	struct tui *d = tui_new(problem_path, 24, 80, &err);

	if (!tap_ok(d != NULL, "the designer opens the problem"))
		tap_diag("%s", err.msg);
	else
		d->iteration_limit = 2000;
	return d;
}

/* Screen row Y as UTF-8 text without its trailing blanks, in BUF. */
static const char *
views_row(int y, char *buf, size_t len)
{
	wchar_t w[256];
	int n = mvinnwstr(y, 0, w, 255);
	size_t k;

	w[n > 0 ? n : 0] = L'\0';
	k = wcstombs(buf, w, len - 1);
	if (k == (size_t)-1)
		k = 0;
	while (k > 0 && buf[k - 1] == ' ')
		k--;
	buf[k] = '\0';
	return buf;
}

/* Tests that screen row Y reads WANT. */
static void
views_expect_row(int y, const char *want, const char *what)
{
	char got[1024];

	tap_str(views_row(y, got, sizeof got), want, "%s: row %d", what, y);
}

static void
views_draw(struct tui *d)
{
	werase(stdscr);
	tui_colors_init(&d->glyphs);
	tui_draw(stdscr, d, TUI_DRAW_ALL);
}

static size_t
views_family(const char *name)
{
	return (size_t)(pw_family_find(name) - pw_families);
}

static void
test_compare_state(struct tui *d)
{
	struct pw_plan *plan;
	struct pw_error err;
	char name[128];
	int fd;

	tap_int(d->family, (long long)views_family("zb-h1"),
	    "the designer starts from zb-h1");
	tui_compare_open(d);
	tap_ok(d->mode == TUI_MODE_COMPARE, "c opens the compare view");
	tap_int(d->compare.source[0], (long long)views_family("zb-h1"),
	    "the top is the best family");
	tap_int(d->compare.source[1], TUI_CMP_CURRENT,
	    "the bottom is the current schedule");
	tap_ok(d->compare.plan[1] != NULL && d->compare.plan[1] != d->plan &&
	    pw_plan_metrics(d->compare.plan[1])->makespan == 27,
	    "the current schedule is a copy of its own, 27 s");
	tap_str(tui_compare_name(d, 0, name, sizeof name), "family zb-h1",
	    "the top's name");

	tui_compare_cycle(d, 1);
	tap_int(d->compare.source[0], (long long)views_family("zb-h2"),
	    "Right: the next family");
	tui_compare_cycle(d, -2);
	tap_int(d->compare.source[0],
	    (long long)views_family("1f1b-interleaved"),
	    "Left twice: the one before zb-h1");
	tap_ok(d->compare.plan[0] == NULL && d->compare.why[0] != NULL &&
	    strncmp(d->compare.why[0], "1f1b-interleaved needs loop "
	    "placement", 36) == 0, "a family that does not apply keeps its "
	    "refusal");
	tui_compare_set(d, 0, TUI_CMP_CURRENT);
	tui_compare_cycle(d, -1);
	tap_int(d->compare.source[0], TUI_CMP_OPTIMIZER,
	    "before the current schedule: the optimizer, without a file");
	tap_str(d->compare.why[0], "no optimizer result yet",
	    "no search ran yet");
	tui_compare_set(d, 0, TUI_CMP_FILE);
	tap_str(d->compare.why[0], "no schedule file chosen",
	    "the file slot without a file");

	d->compare.file = pw_xstrdup("/nonexistent/x.json");
	tui_compare_set(d, 0, TUI_CMP_FILE);
	tap_ok(d->compare.plan[0] == NULL && d->compare.why[0] != NULL &&
	    strncmp(d->compare.why[0], "cannot open: ", 13) == 0,
	    "an unreadable file: %s", d->compare.why[0]);
	tap_str(tui_compare_name(d, 0, name, sizeof name),
	    "file /nonexistent/x.json", "... named once, by the slot's title");
	free(d->compare.file);
	d->compare.file = pw_xstrdup("model.lua");
	tui_compare_set(d, 0, TUI_CMP_FILE);
	tap_str(d->compare.why[0], "a Lua script is no schedule file "
	    "(pipewright schedule writes one)", "a script: said so, not read");
	if ((fd = mkstemps(schedule_path, 5)) >= 0)
		close(fd);
	if (pw_plan_family(pw_family_find("1f1b"), pw_plan_problem(d->plan),
	    &plan, &err) != PW_OK || pw_schedule_write(schedule_path,
	    pw_plan_problem(plan), pw_plan_schedule(plan), pw_plan_timing(plan),
	    &err) != PW_OK)
		tap_ok(false, "1f1b's schedule file: %s", err.msg);
	pw_plan_free(plan);
	free(d->compare.file);
	d->compare.file = pw_xstrdup(schedule_path);
	tui_compare_set(d, 0, TUI_CMP_FILE);
	tap_ok(d->compare.plan[0] != NULL &&
	    pw_plan_metrics(d->compare.plan[0])->makespan == 33,
	    "a schedule file compares: 1f1b's 33 s");
	tui_compare_cycle(d, 1);
	tap_int(d->compare.source[0], TUI_CMP_CURRENT,
	    "after the file: the current schedule again");
	tui_compare_cycle(d, -1);
	tap_int(d->compare.source[0], TUI_CMP_FILE, "and back to the file");
}

/* Screen rows FROM.. as WANT (NULL-terminated). */
static void
views_expect_rows(int from, const char *const *want, const char *what)
{
	int k;

	for (k = 0; want[k] != NULL; k++)
		views_expect_row(from + k, want[k], what);
}

static void
test_compare_draw(struct tui *d)
{
	static const char *const table[] = {
		"              top               bottom            bottom - top",
		"makespan      33 s              27 s              -6 s",
		"bubble rate   27.3%             11.1%             -16.2 pp",
		"total idle    36 s              12 s              -24 s",
		"peak          d0 6 B \xe2\x86\x92 6 B (0 B)       d1 5 B "
		    "\xe2\x86\x92 5.5 B (+0.5 B)",
		"              d2 4 B \xe2\x86\x92 5 B (+1 B)      d3 3 B "
		    "\xe2\x86\x92 4.5 B (+1.5 B)",
		"",
		NULL
	};

	tui_compare_set(d, 0, (int)views_family("1f1b"));
	views_draw(d);
	views_expect_row(2, "        |0 s                 |10 s                 "
	    "|20 s                 |30 s", "compare");
	views_expect_row(3, "\xe2\x96\xb6 top: family 1f1b: 33 s, bubble "
	    "27.3%, idle 36 s, peak 6 B (d0)", "compare");
	views_expect_row(8, "  bottom: current schedule: 27 s, bubble 11.1%, "
	    "idle 12 s, peak 6 B (d0)", "compare");
	views_expect_row(4,
	    "d0      0F1F2F\xe2\x96\x8c" "3F            \xe2\x96"
	    "\x95" "0XXX4F1XXX\xe2\x96\x8a" "5F2XXX6F3XXX\xe2"
	    "\x96\x89" "7F4XXX\xe2\x96\x8d \xe2\x96\x90" "5XX"
	    "\xe2\x96\x89  6XXX\xe2\x96\x8c \xe2\x96\x90" "7"
	    "XXX",
	    "compare: 1f1b's device 0 on the "
	    "shared axis");
	views_expect_rows(13, table, "compare");

	/* ASCII: the focus mark and the arrows; the bottom has the focus. */
	d->glyphs.ascii = true;
	d->compare.focus = 1;
	views_draw(d);
	views_expect_row(3, "  top: family 1f1b: 33 s, bubble 27.3%, idle 36 s, "
	    "peak 6 B (d0)", "compare, ASCII");
	views_expect_row(8, "> bottom: current schedule: 27 s, bubble 11.1%, "
	    "idle 12 s, peak 6 B (d0)", "compare, ASCII");
	views_expect_row(17, "peak          d0 6 B -> 6 B (0 B)       d1 5 B -> "
	    "5.5 B (+0.5 B)", "compare, ASCII");
	d->glyphs.ascii = false;
	d->compare.focus = 0;

	/* The same schedule in both: differences without signs. */
	tui_compare_set(d, 0, (int)views_family("zb-h1"));
	views_draw(d);
	views_expect_row(14, "makespan      27 s              27 s              0 s",
	    "compare, the same");
	views_expect_row(15, "bubble rate   11.1%             11.1%             "
	    "0.0 pp", "compare, the same");

	/* A slot without a schedule: its reason, no lanes, "-" in the
	 * table. */
	tui_compare_set(d, 0, TUI_CMP_OPTIMIZER);
	views_draw(d);
	views_expect_row(3, "\xe2\x96\xb6 top: optimizer result: no optimizer "
	    "result yet", "compare, no schedule");
	views_expect_row(4, "  bottom: current schedule: 27 s, bubble 11.1%, "
	    "idle 12 s, peak 6 B (d0)", "compare, no schedule");
	views_expect_row(10, "makespan      -                 27 s              -",
	    "compare, no schedule");
	views_expect_row(13, "peak          d0 - \xe2\x86\x92 6 B (-)    d1 - "
	    "\xe2\x86\x92 5.5 B (-)  d2 - \xe2\x86\x92 5 B (-)",
	    "compare, no schedule: as many devices a row as fit");
	views_expect_row(14, "              d3 - \xe2\x86\x92 4.5 B (-)",
	    "compare, no schedule");
}

/* Polls D's sweep until its thread is over, as the loop does (each
 * poll after the thread's next point). */
static unsigned
views_sweep_finish(struct tui *d)
{
	unsigned redraw = 0;

	while (d->sweep != NULL && !d->sweep->joined) {
		redraw |= tui_sweep_tick(d);
		sched_yield();
	}
	return redraw;
}

static void
test_sweep_state(struct tui *d)
{
	const struct pw_sweep_point *pt;
	struct tui_sweep *s;
	unsigned redraw;

	d->mode = TUI_MODE_TIMELINE;
	redraw = tui_sweep_open(d);
	tap_ok(d->mode == TUI_MODE_SWEEP && d->sweep != NULL &&
	    (redraw & TUI_DRAW_ALL) == TUI_DRAW_ALL, "m opens the sweep");
	tap_str(d->message, "sweep: computing 228 points in the background; "
	    "Enter loads the point under the cursor", "it says what it does");
	redraw = views_sweep_finish(d);
	s = d->sweep;
	tap_ok(s != NULL && s->complete && (redraw & TUI_DRAW_PANEL) &&
	    atomic_load(&s->sweep->done) == 228, "the thread computes every "
	    "point, and the polls redraw the panel");
	if (s == NULL)
		return;
	tap_str(d->message, "sweep: 228 of 228 points", "and say so at the end");
	tap_ok(s->limit == 11 && s->series == views_family("zb-h1"),
	    "the cursor starts at no limit, on the plan's family");
	tap_int((long long)tui_sweep_tick(d), 0, "a poll with nothing new "
	    "redraws nothing");

	tui_sweep_move(d, -100, 0);
	tap_int((long long)s->limit, 0, "Left stops at the first limit");
	tui_sweep_move(d, 0, 100);
	tap_int((long long)s->series, (long long)pw_nfamilies,
	    "Down stops at the optimizer");
	tui_sweep_move(d, 0, -(int)pw_nfamilies);
	tui_sweep_load(d);
	tap_ok(d->message_is_error && d->mode == TUI_MODE_SWEEP &&
	    pw_plan_metrics(d->plan)->makespan == 27,
	    "a point below the smallest limit does not load");
	tap_str(d->message, "sweep: gpipe at 2.222 B: problem: memory[0].limit: "
	    "2.222 B is below what one microbatch needs on device 0 (static "
	    "2 B + act of stage 0 1 B)", "and says why");

	tui_sweep_move(d, 1, (int)views_family("zb-auto"));
	pt = pw_sweep_get(s->sweep, 1, views_family("zb-auto"));
	tap_ok(pt != NULL && pt->limit == 3 && pt->makespan == 72,
	    "the cursor's point: zb-auto at 3 B, 72 s");
	tui_sweep_load(d);
	tap_ok(d->mode == TUI_MODE_TIMELINE && pw_plan_metrics(d->plan)->
	    makespan == 72 && pw_plan_problem(d->plan)->memory[2].limit == 3 &&
	    d->family == (int)views_family("zb-auto"), "Enter loads it: the "
	    "schedule and its limit");
	tap_str(d->source, "sweep point 3 B, zb-auto", "the header says where "
	    "it came from");
	tap_ok(tui_sweep_tick(d) == 0 && d->sweep == s, "the loaded point "
	    "keeps the sweep");
	tui_sweep_open(d);
	tap_ok(d->sweep == s && d->mode == TUI_MODE_SWEEP, "m again shows the "
	    "same sweep at once");
	tui_undo(d);
	tap_ok(pw_plan_metrics(d->plan)->makespan == 27 &&
	    isinf(pw_plan_problem(d->plan)->memory[2].limit),
	    "undo brings the schedule before back");
}

static void
test_sweep_draw(struct tui *d)
{
	static const char *const plot[] = {
		"Memory sweep: step time against memory limit   sweep: 228 "
		    "points",
		"72 s     \xe2\x94\x82      *",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82            *",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"49.5 s   \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82                   *",
		"         \xe2\x94\x82                               +     +"
		    "     +     +      +     *     *",
		"         \xe2\x94\x82                         *     *     *"
		    "     *     *      *     *     *",
		"27 s     \xe2\x94\x82                               *     *"
		    "     *     *      *     *     *",
		"         " VIEWS_RULE10 VIEWS_RULE10 VIEWS_RULE10 VIEWS_RULE10
		    VIEWS_RULE10 VIEWS_RULE10 VIEWS_RULE10,
		"limit           3 B          4.556 B     6.111 B     7.667"
		    " B      9.222 B   none",
		"o gpipe  + 1f1b  s zb-h1  # zb-h2  @ zb-auto  % zb-1p  &"
		    " zb-2p  ^ gis  v gis-h",
		"n po  y po-auto  z optimizer",
		"3 B, zb-auto (here too: zb-1p, zb-2p, optimizer): step 72 s, "
		    "bubble 66.7%, peak",
		NULL
	};

	static const char *const bubble[] = {
		"Memory sweep: bubble rate against memory limit  "
		    " sweep: 228 points",
		"66.7%    \xe2\x94\x82      *",
		"         \xe2\x94\x82            *",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82",
		"33.3%    \xe2\x94\x82                   *",
		"         \xe2\x94\x82                               + "
		    "    +     +     +      +     *     *",
		"         \xe2\x94\x82                         *",
		"         \xe2\x94\x82                               * "
		    "    *     *     *      *     *     *",
		"         \xe2\x94\x82",
		"         \xe2\x94\x82                               * "
		    "    *     *     *      *     *     *",
		"         \xe2\x94\x82                                 "
		    "                *",
		"0.0%     \xe2\x94\x82                                 "
		    "                       *     *     *",
		"         " VIEWS_RULE10 VIEWS_RULE10 VIEWS_RULE10 VIEWS_RULE10
		    VIEWS_RULE10 VIEWS_RULE10 VIEWS_RULE10,
		"limit           3 B          4.556 B     6.111 B    "
		    " 7.667 B      9.222 B   none",
		"o gpipe  + 1f1b  s zb-h1  # zb-h2  @ zb-auto  % zb-1p "
		    " & zb-2p  ^ gis  v gis-h",
		"n po  y po-auto  z optimizer",
		"3 B, zb-auto (here too: zb-1p, zb-2p, optimizer):"
		    " bubble 66.7%, step 72 s, peak",
		NULL
	};

	d->mode = TUI_MODE_SWEEP;
	d->sweep->limit = 1;
	d->sweep->series = views_family("zb-auto");
	views_draw(d);
	views_expect_rows(2, plot, "sweep");
	tap_int((long long)tui_key(d, 'b'), TUI_DRAW_PANEL,
	    "b switches the plot's y");
	tap_ok(d->sweep->bubble, "... to the bubble rate");
	views_draw(d);
	views_expect_rows(2, bubble, "sweep, bubble rate");
	tui_key(d, 'b');
	tap_ok(!d->sweep->bubble, "b again: the step time");
	d->sweep->limit = 5;
	d->sweep->series = views_family("1f1b");
	resizeterm(24, 160);
	views_draw(d);
	views_expect_row(22, "6.111 B, 1f1b: step 33 s, bubble 27.3%, peak 6 B "
	    "(d0), fits; fastest that fits: zb-h1, 27 s; Enter loads 1f1b",
	    "sweep, a cell of one series, and the fastest at its limit");
	d->sweep->series = views_family("zb-auto");
	views_draw(d);
	views_expect_row(22, "6.111 B, zb-auto (here too: zb-h1, zb-1p, zb-2p, "
	    "optimizer): step 27 s, bubble 11.1%, peak 6 B (d0), fits; Enter "
	    "loads zb-auto", "sweep, as fast as the fastest at its limit");
	d->sweep->limit = 1;
	d->sweep->series = views_family("gpipe");
	views_draw(d);
	views_expect_row(22, "3 B, gpipe: step 33 s, bubble 27.3%, peak 10 B "
	    "(d0), over the limit; fastest that fits: zb-auto, 72 s; Enter "
	    "loads gpipe", "sweep, over the limit: the fastest that fits, "
	    "and which Enter loads");
	resizeterm(24, 80);
	d->glyphs.ascii = true;
	views_draw(d);
	views_expect_row(3, "72 s     |      *", "sweep, ASCII");
	views_expect_row(18, "         ------------------------------------------"
	    "----------------------------", "sweep, ASCII");
	d->glyphs.ascii = false;
}

/* Cancels the run at its fifth point. */
static void
views_cancel_at_5(const struct pw_sweep *sw, size_t done, void *arg)
{
	(void)sw;
	if (done == 5)
		atomic_store((atomic_int *)arg, 1);
}

static void
test_sweep_partial(struct tui *d)
{
	struct tui_sweep *s = tui_sweep_alloc();
	struct pw_sweep_opts o = { .iteration_limit = 2000,
	    .progress = views_cancel_at_5 };
	struct pw_error err;

	o.cancel = &s->job.cancel;
	o.progress_arg = &s->job.cancel;
	if (pw_sweep_new(pw_plan_problem(d->plan), &o, &s->sweep, &err) !=
	    PW_OK) {
		tap_ok(false, "sweep_new: %s", err.msg);
		s->joined = true;	/* no thread was started */
		tui_sweep_free(s);
		return;
	}
	/* A run cut short, as the thread would leave it. */
	s->complete = pw_sweep_run(s->sweep);
	atomic_store(&s->job.finished, true);
	s->joined = true;
	s->key = pw_problem_copy(pw_plan_problem(d->plan));
	s->limit = 11;
	s->series = 5;
	tui_sweep_free(d->sweep);
	d->sweep = s;
	d->mode = TUI_MODE_SWEEP;
	views_draw(d);
	views_expect_row(2, "Memory sweep: step time against memory limit   "
	    "sweep: 5/228 points, cancelled", "a cancelled sweep");
	views_expect_row(3, "33 s     \xe2\x94\x82                          "
	    "                                          *", "a cancelled sweep: "
	    "gpipe and 1f1b share a cell at no limit");
	views_expect_row(17, "27 s     \xe2\x94\x82                          "
	    "                                          *", "a cancelled sweep: "
	    "zb-h1 and zb-h2 too");
	views_expect_row(19, "limit                                           "
	    "                            none", "a cancelled sweep");
	views_expect_row(20, "o gpipe  + 1f1b  s zb-h1  # zb-h2  @ zb-auto",
	    "a cancelled sweep: the legend has the series with a point, "
	    "and the cursor's");
	views_expect_row(22, "zb-auto: not computed yet", "a cancelled sweep");
}

static void
test_sweep_stale(struct tui *d)
{
	struct pw_problem *p = pw_problem_copy(pw_plan_problem(d->plan));
	struct pw_plan *plan;
	struct pw_error err;

	tui_sweep_free(d->sweep);
	d->sweep = NULL;
	tui_sweep_open(d);
	p->stages[0].f = 2;
	if (pw_plan_family(pw_family_find("1f1b"), p, &plan, &err) != PW_OK) {
		tap_ok(false, "1f1b on the slower problem: %s", err.msg);
		pw_problem_free(p);
		return;
	}
	pw_problem_free(p);
	tui_plan_set(d, plan, "slower", "family 1f1b", (int)views_family("1f1b"));
	d->mode = TUI_MODE_SWEEP;
	tap_int((long long)tui_sweep_tick(d), TUI_DRAW_ALL,
	    "a poll after the problem changed redraws all");
	tap_ok(d->sweep == NULL && d->mode == TUI_MODE_TIMELINE,
	    "and the stale sweep is cancelled and gone");
	tap_str(d->message, "sweep cancelled: the problem changed",
	    "the message says why");
}

/* Writes a model's problem, 4 layers on 2 devices, 4 microbatches
 * within 190,000 bytes a device, to
 * MODEL_PATH and returns the designer on it; NULL after a failed line. */
static struct tui *
views_open_model(void)
{
	static const char script[] =
	    "local tiny = pw.model.gpt{ name = 'tiny', layers = 4, hidden = 16,"
	    " heads = 2, seq = 8, vocab = 100, micro_batch = 2 }\n"
	    "local toy = pw.hardware{ name = 'toy', peak_flops = 1048576,"
	    " efficiency = 0.5, memory = 1e9, pcie_d2h = 64, pcie_h2d = 32,"
	    " pcie_latency = 0.125, p2p_bandwidth = 1024, p2p_latency = 0.25 }\n"
	    "return pw.problem{ model = tiny, hardware = toy, devices = 2,"
	    " microbatches = 4, memory_limit = 190000 }\n";
	struct pw_error err;
	struct tui *d;
	FILE *fp;
	int fd;

	if ((fd = mkstemps(model_path, 4)) >= 0)
		close(fd);
	fp = fd >= 0 ? fopen(model_path, "w") : NULL;
	if (!tap_ok(fp != NULL && fputs(script, fp) != EOF && fclose(fp) == 0,
	    "the model's problem script is written"))
		return NULL;
	if (!tap_ok((d = tui_new(model_path, 24, 80, &err)) != NULL,
	    "the designer opens the model's problem"))
		tap_diag("%s", err.msg);
	else {
		/* The iteration limit ends the search, never the clock. */
		d->iteration_limit = 500;
		d->time_limit = 600;
	}
	return d;
}

/* Polls D's design search until its thread is over, as the loop does;
 * returns what the polls asked to redraw. */
static unsigned
views_planner_finish(struct tui *d)
{
	unsigned redraw = 0;

	while (tui_planner_running(d)) {
		redraw |= tui_planner_tick(d);
		sched_yield();
	}
	return redraw;
}

static void
test_planner_state(struct tui *d)
{
	const struct pw_planner_candidate *c;
	unsigned redraw;
	size_t n;

	tap_ok(!tui_planner_running(d) && d->planner == NULL,
	    "no design search before D");
	redraw = tui_key(d, 'D');
	tap_ok(d->mode == TUI_MODE_PLANNER && d->planner != NULL &&
	    (redraw & TUI_DRAW_ALL) == TUI_DRAW_ALL, "D opens the design search");
	tap_str(d->message, "design search: planning split, layout and "
	    "schedule in the background (Esc cancels)", "and says so");
	redraw = views_planner_finish(d);
	tap_ok((redraw & TUI_DRAW_PANEL) != 0 && d->planner->joined &&
	    d->planner->rc == PW_OK, "the thread ends with candidates");
	n = d->planner->result.ncand;
	tap_int((long long)n, 9, "nine candidates");
	tap_ok(!d->planner->result.split_fixed, "the model's split is "
	    "searched");
	tap_str(d->message, "design search: 19 candidates tried (searched), "
	    "best 7.203 s; Enter opens the one under the cursor",
	    "the end's message");
	tap_int((long long)tui_planner_tick(d), 0, "a poll with nothing new "
	    "redraws nothing");
	tui_key(d, KEY_UP);
	tap_int((long long)d->planner->cursor, 0, "Up at the first stays");
	tui_key(d, 'j');
	tui_key(d, KEY_DOWN);
	tap_int((long long)d->planner->cursor, 2, "Down twice: the third");
	for (n = 0; n < 20; n++)
		tui_key(d, 'j');
	tap_int((long long)d->planner->cursor,
	    (long long)d->planner->result.ncand - 1, "Down stops at the last");
	d->planner->cursor = 3;
	c = &d->planner->result.cand[3];
	redraw = tui_key(d, '\n');
	tap_ok(d->mode == TUI_MODE_TIMELINE && (redraw & TUI_DRAW_ALL) ==
	    TUI_DRAW_ALL, "Enter opens the candidate on the timeline");
	tap_ok(pw_plan_metrics(d->plan)->makespan == c->makespan &&
	    pw_problem_same(pw_plan_problem(d->plan), c->problem),
	    "its schedule with its problem");
	tap_str(d->source, "design split 1,1,1,1, loop x2, selective, solve",
	    "the header says where it came from");
	tui_key(d, 'D');
	tap_ok(d->mode == TUI_MODE_PLANNER && !tui_planner_running(d) &&
	    d->planner->rc == PW_OK, "D again shows the same search at once");
	tui_key(d, TUI_KEY_ESC);
	tap_int(d->mode, TUI_MODE_TIMELINE, "Esc on a search that ended "
	    "closes the panel");
	tui_undo(d);
	tap_ok(pw_problem_same(pw_plan_problem(d->plan), d->planner->problem),
	    "undo brings the problem before back");
	/* As if it had ended with no candidate (a failed search has no
	 * result to free): D searches again. */
	pw_planner_result_free(&d->planner->result);
	d->planner->rc = PW_ERR_INPUT;
	tui_key(d, 'D');
	tap_ok(d->mode == TUI_MODE_PLANNER && !d->planner->joined,
	    "D after a search that gave no candidate starts a new one");
	tap_str(d->message, "design search: planning split, layout and "
	    "schedule in the background (Esc cancels)", "and says so");
	views_planner_finish(d);
	tap_ok(d->planner->joined && d->planner->rc == PW_OK &&
	    d->planner->result.ended != PW_END_CANCELLED,
	    "... which ends with its candidates");
	tui_key(d, TUI_KEY_ESC);
}

/* The panel at 80 columns: the layout, saving and schedule columns as
 * wide as their longest text ("selective", the command line's word,
 * for saving; "schedule" here, every name being shorter), the split
 * the rest. */
static void
test_planner_draw(struct tui *d)
{
	static const char *const panel[] = {
		"Design search   19 tried, searched",
		"split, layout, recomputation, offload and schedule searched",
		"  split              layout  saving    schedule step     bubble "
		    " peak/lim    gap",
		"  2,2                1 chunk selective zb-auto  7.203 s  12.0%  "
		    " 89.6%      0.0%",
		"> 1,1,1,1            V       selective solve    7.492 s  19.3%  "
		    " 98.5%      2.0%",
		"  2,2                1 chunk -         zb-h2    7.516 s  19.5%  "
		    " 95.8%      0.0%",
		"  1,1,1,1            loop x2 selective solve    8.422 s  28.2%  "
		    " 90.4%      0.0%",
		"  2,2                1 chunk full      zb-auto  8.906 s  13.9%  "
		    " 71.8%      0.0%",
		"  1,1,1,1            V       full      solve    8.969 s  14.5%  "
		    " 85.3%      0.0%",
		"  1,1,1,1            loop x2 -         solve    9.297 s  35.0%  "
		    " 97.3%      3.9%",
		"  1,1,1,1            V       -         solve    9.887 s  38.8%  "
		    " 97.0%     15.5%",
		"  1,1,1,1            loop x2 full      solve    9.938 s  22.8%  "
		    " 71.8%      0.9%",
		"",
		NULL
	};

	d->mode = TUI_MODE_PLANNER;
	d->planner->cursor = 1;
	d->message[0] = '\0';
	views_draw(d);
	views_expect_rows(2, panel, "design search");
	tap_ok((mvwinch(stdscr, 6, 4) & A_REVERSE) && !(mvwinch(stdscr, 5, 4) &
	    A_REVERSE), "the cursor's row only is reversed");
	views_expect_row(21, "recompute selective, offload no, peak 182.8 KiB "
	    "of 185.5 KiB (d0), idle 27.1%", "design search: the cursor's "
	    "figures");
	views_expect_row(22, "bound 7.344 s, gap 2.0% for this design, "
	    "optimized; Enter opens it", "design search: the cursor's "
	    "figures");
	views_expect_row(23, "Up/Down select  Enter opens  Esc closes",
	    "design search: the hints");
	d->mode = TUI_MODE_TIMELINE;
}

/* Polls D's design search, as the loop does, until it has timed a
 * candidate; false (and a failed line) if it ended first. */
static bool
views_planner_first(struct tui *d)
{
	char name[32], phase[16];

	while (tui_planner_running(d) &&
	    tui_planner_progress(d->planner, name, phase).tried == 0) {
		tui_planner_tick(d);
		sched_yield();
	}
	return tap_ok(tui_planner_running(d), "the search runs with a "
	    "candidate timed");
}

/* Esc while a search runs cancels it and keeps the panel.  The default
 * problem's search (no iteration limit) runs to the time limit, 600 s
 * here, so it is certainly running when a poll has seen its first
 * candidate, and Esc ends it cancelled with candidates. */
static void
test_planner_cancel(void)
{
	struct pw_error err;
	struct tui *d = tui_new(NULL, 24, 80, &err);

	if (!tap_ok(d != NULL, "the designer opens the default problem"))
		return;
	d->time_limit = 600;
	tui_key(d, 'D');
	if (!tap_ok(tui_planner_running(d), "D starts the search") ||
	    !views_planner_first(d))
		goto out;
	tap_int((long long)tui_key(d, TUI_KEY_ESC), TUI_DRAW_MESSAGE,
	    "Esc while the search runs cancels it");
	tap_ok(d->mode == TUI_MODE_PLANNER, "... and keeps the panel");
	tap_str(d->message, "cancelling the design search: the best "
	    "candidates so far stay", "... saying so");
	views_planner_finish(d);
	tap_ok(d->planner->joined, "the thread ends");
	tap_int(d->planner->rc, PW_OK, "with candidates");
	tap_str(pw_solve_end_name(d->planner->result.ended), "cancelled",
	    "the search ends cancelled");
	tui_key(d, 'q');
	tap_int(d->mode, TUI_MODE_TIMELINE, "q closes the panel");
out:
	tui_free(d);
}

/* A search whose problem is edited away while it runs is cancelled at
 * the next poll, as a sweep is, without waiting for its thread; quitting
 * with one running does not wait either. */
static void
test_planner_stale(void)
{
	struct pw_error err;
	struct tui *d = tui_new(NULL, 24, 80, &err);
	struct pw_problem *p;
	struct pw_plan *plan;

	if (!tap_ok(d != NULL, "the designer opens the default problem"))
		return;
	d->time_limit = 600;
	tui_key(d, 'D');
	if (!views_planner_first(d))
		goto out;
	p = pw_problem_copy(pw_plan_problem(d->plan));
	p->stages[0].f *= 2;
	if (pw_plan_family(pw_family_find("1f1b"), p, &plan, &err) != PW_OK) {
		tap_ok(false, "1f1b on the slower problem: %s", err.msg);
		pw_problem_free(p);
		goto out;
	}
	pw_problem_free(p);
	tui_plan_set(d, plan, "slower", "family 1f1b", (int)views_family("1f1b"));
	d->mode = TUI_MODE_PLANNER;
	tap_int((long long)tui_planner_tick(d), TUI_DRAW_ALL,
	    "a poll after the problem changed redraws all");
	tap_ok(d->planner == NULL && d->mode == TUI_MODE_TIMELINE,
	    "and the stale search is cancelled and gone");
	tap_str(d->message, "design search cancelled: the problem changed",
	    "the message says why");
	tui_key(d, 'D');
	tap_ok(tui_planner_running(d), "D starts a new search");
out:
	/* Lets go of the running one: its thread frees it. */
	tui_free(d);
	tap_ok(true, "quitting with a search running does not wait on it");
}

int
main(void)
{
	SCREEN *scr;
	FILE *in, *out;
	struct tui *d;

	setlocale(LC_ALL, "C.UTF-8");
	out = fopen("/dev/null", "w");
	in = fopen("/dev/null", "r");
	if (!tap_ok(out != NULL && in != NULL, "/dev/null opens"))
		return tap_done();
	scr = newterm("xterm-256color", out, in);
	resizeterm(24, 80);
	if (views_write_problem() && (d = views_open()) != NULL) {
		test_compare_state(d);
		test_compare_draw(d);
		test_sweep_state(d);
		test_sweep_draw(d);
		test_sweep_partial(d);
		test_sweep_stale(d);
		tui_free(d);
	}
	if ((d = views_open_model()) != NULL) {
		test_planner_state(d);
		test_planner_draw(d);
		tui_free(d);
	}
	test_planner_cancel();
	test_planner_stale();
	endwin();
	delscreen(scr);
	fclose(in);
	fclose(out);
	unlink(problem_path);
	unlink(schedule_path);
	unlink(model_path);
	return tap_done();
}
