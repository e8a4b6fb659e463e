/*
 * test_tui_state.c - the designer's state without any screen: every
 * action of the key table through tui_key, undo and redo of each kind of
 * change, pins, a deadlock after an edit, the constraints form's
 * validation, families, the optimizer under an iteration limit, saving,
 * exporting, reloading an edited file, the quit prompt, and launching the
 * schedule on the runtime (L) with its measured run.
 */
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pwlua.h"
#include "tap.h"
#include "testlib.h"
#include "tui_int.h"

static const char *testdata;
static char tmpdir[] = "/tmp/pw-tui-state.XXXXXX";

/* A file of the temporary directory, a string the caller frees. */
static char *
tmp_path(const char *name)
{
	return pw_xasprintf("%s/%s", tmpdir, name);
}

static struct tui *
open_file(const char *name)
{
	struct pw_error err;
	char *path = name ? pw_xasprintf("%s/%s", testdata, name) : NULL;
	struct tui *d = tui_new(path, 40, 120, &err);

	if (!tap_ok(d != NULL, "tui_new %s", name ? name : "(default)"))
		tap_diag("%s", err.msg);
	free(path);
	return d;
}

/* Sends the characters of S as keys; returns what the last asked. */
static unsigned
type(struct tui *d, const char *s)
{
	unsigned r = 0;

	for (; *s != '\0'; s++)
		r = tui_key(d, (unsigned char)*s);
	return r;
}

/* x with TEXT typed is refused with the error WANT. */
static void
export_refused(struct tui *d, const char *text, const char *want,
    const char *what)
{
	tui_key(d, 'x');
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, text);
	tui_key(d, '\n');
	tap_str(d->message, want, "%s", what);
	tap_ok(d->message_is_error, "... as an error");
}

static const char *
sel_name(const struct tui *d)
{
	static char buf[48];

	return d->has_sel ? pw_op_name(buf, sizeof buf, d->sel) : "(none)";
}

/* DEV's edited order, compared with WANT. */
static void
check_order(const struct tui *d, int dev, const char *want, const char *what)
{
	char *got = test_order(&pw_plan_schedule(d->plan)->device[dev]);

	tap_str(got, want, "%s: device %d's order", what, dev);
	free(got);
}

static double
makespan(const struct tui *d)
{
	return pw_plan_metrics(d->plan)->makespan;
}

/* Makes the state saved (the file holds it) or not, as a save or a
 * change elsewhere would: a saved id no change has stands for a file
 * that holds none of them. */
static void
set_unsaved(struct tui *d, bool unsaved)
{
	const struct tui_history *h = &d->history;

	d->history.saved_id = unsaved ? ULONG_MAX : h->nundo > 0 ?
	    h->undo[h->nundo - 1].id : 0;
}

static void
select_op(struct tui *d, const char *name)
{
	struct pw_op op;
	struct pw_error err;

	if (pw_op_parse(name, pw_plan_problem(d->plan), &op, &err) != PW_OK)
		tap_diag("bad op %s: %s", name, err.msg);
	tui_select(d, op);
}

/* Polls a search until it ends (the iteration limit ends it). */
static void
solve_until_done(struct tui *d)
{
	int n = 0;

	while (tui_solve_running(d) && n++ < 100000) {
		tui_solve_wait(d, 0.05);
		tui_solve_tick(d);
	}
}

/* zb-h2 on tui_small.json: device 0 runs F(0,0) F(0,1) F(0,2) from 0 s,
 * idles 3 to 4 s, then B(0,0) 4-6 W(0,0) 6-7 F(0,3) 7-8 B(0,1) 8-10 ...
 * W(0,3) 16-17; device 1 idles to 1 s, then F(1,0) 1-2 B(1,0) 2-4
 * F(1,1) 4-5 B(1,1) 5-7 F(1,2) 7-8 B(1,2) 8-10 W(1,0) 10-11 ... */
static const char SMALL_ZBH2_D0[] = "F(0,0) F(0,1) F(0,2) B(0,0) W(0,0) "
    "F(0,3) B(0,1) W(0,1) B(0,2) W(0,2) B(0,3) W(0,3)";

/* Counts what the designer told of its choice of a family. */
static bool
chose_count(void *arg, const struct pw_problem *p, size_t done)
{
	size_t *calls = arg;

	(void)p;
	if (done == *calls)
		(*calls)++;
	return true;
}

static void
test_load(void)
{
	struct tui *d = open_file("tui_small.json");
	struct tui_options opts = { .path = NULL };
	struct tui *dd;
	struct tui_layout l;
	struct pw_error err;
	size_t calls = 0;
	char *small;

	if (d == NULL)
		return;
	tap_str(d->source, "family zb-h2", "a problem gets its best feasible "
	    "family (zb-h2: 17 s, the first of the least makespan)");
	tap_str(pw_families[d->family].name, "zb-h2", "family index");
	tap_str(pw_families[d->cycle].name, "zb-auto", "f goes on from it");
	tap_near(makespan(d), 17, 1e-12, "its makespan");
	tap_near(d->view.t0, 0, 0, "view fitted: t0 at the start");
	tap_near(d->view.span, 17, 1e-12, "view fitted: span the makespan");
	tap_int(d->view.nfolded, 2, "a fold per device");
	tap_str(sel_name(d), "F(0,0)", "the first op is selected");
	tap_ok(!tui_unsaved(d) && d->changes == 0, "nothing changed yet");
	tap_int(d->objective, PW_OBJ_MAKESPAN, "objective makespan");
	tap_near(d->time_limit, 10, 0, "time limit 10 s");
	tap_ok(d->save_path == NULL && !d->path_is_schedule,
	    "a problem has no schedule file to save to yet");
	check_order(d, 0, SMALL_ZBH2_D0, "zb-h2");
	tui_free(d);

	opts.path = small = pw_xasprintf("%s/tui_small.json", testdata);
	opts.choosing = chose_count;
	opts.choosing_arg = &calls;
	if ((d = tui_new_given(&opts, 40, 120, &err)) != NULL) {
		tap_str(d->source, "family zb-h2", "opened with its choice "
		    "told as it goes");
		tap_ok(calls == pw_nfamilies + 1, "told before each family and "
		    "after the last, in order (%zu calls)", calls);
		tui_free(d);
	} else
		tap_ok(false, "tui_new_given: %s", err.msg);
	free(small);

	/* A model's session keeps its own recovery file, not the default
	 * problem's, which another session would offer to restore. */
	{
		struct tui_options given = { 0 };
		struct pw_problem *q = pw_problem_default();
		char *rec;

		free(q->name);
		q->name = pw_xstrdup("gpt3-1.3b-4xA100/80GB");
		given.problem = q;
		if ((d = tui_new_given(&given, 40, 120, &err)) != NULL) {
			rec = tui_recover_name(d, NULL);
			tap_str(rec, ".pipewright-gpt3-1.3b-4xA100_80GB.pw-recover",
			    "a given problem's recovery file is named by it");
			free(rec);
			tui_free(d);
		} else
			tap_ok(false, "tui_new_given: %s", err.msg);
		pw_problem_free(q);
		rec = tui_recover_name(NULL, NULL);
		tap_str(rec, ".pipewright-default.pw-recover",
		    "the default problem's, as before");
		free(rec);
	}

	dd = tui_new("/nonexistent/x.json", 40, 120, &err);
	tap_ok(dd == NULL && strstr(err.msg, "/nonexistent/x.json") != NULL,
	    "a file that cannot be read is an error naming it: %s", err.msg);

	d = open_file(NULL);
	if (d == NULL)
		return;
	tap_ok(d->path == NULL && d->view.nfolded == 8,
	    "the default problem: 8 devices");
	tap_ok(strncmp(d->source, "family ", 7) == 0, "from a family (%s)",
	    d->source);
	d->rows = 24;
	d->cols = 80;
	tui_layout(d, d->rows, d->cols, &l);
	tap_ok(l.last_device < 7, "not every device fits 80x24 (%d do)",
	    l.last_device + 1);
	tui_layout_free(&l);
	tui_key(d, 'g');
	type(d, "d0\n");
	tap_ok(d->has_sel && d->sel.stage == 0, "g d0: as the lanes label "
	    "the devices");
	tui_key(d, 'g');
	type(d, "7\n");
	tui_layout(d, d->rows, d->cols, &l);
	tap_ok(d->view.top > 0 && l.last_device == 7, "g 7 scrolls device 7 "
	    "into view (top %d)", d->view.top);
	tui_layout_free(&l);
	tui_key(d, 'g');
	type(d, "0\n");
	tap_int(d->view.top, 0, "g 0 scrolls back");
	tui_free(d);
}

static void
test_navigation(void)
{
	struct tui *d = open_file("tui_small.json");
	unsigned r;
	int i;

	if (d == NULL)
		return;
	r = tui_key(d, KEY_RIGHT);
	tap_str(sel_name(d), "F(0,1)", "Right: the next op of the device");
	tap_ok(r & TUI_DRAW_DETAILS, "... redraws the details");
	tui_key(d, 'l');
	tap_str(sel_name(d), "F(0,2)", "l: the next again");
	tui_key(d, 'h');
	tap_str(sel_name(d), "F(0,1)", "h: back");
	tui_key(d, KEY_LEFT);
	tui_key(d, KEY_LEFT);
	tap_str(sel_name(d), "F(0,0)", "Left stops at the first op");
	select_op(d, "B(0,0)");
	tui_key(d, KEY_DOWN);
	tap_str(sel_name(d), "F(1,1)", "Down: the op of device 1 running at "
	    "B(0,0)'s start (4 s)");
	select_op(d, "W(1,0)");
	tui_key(d, 'k');
	tap_str(sel_name(d), "W(0,1)", "k: the op of device 0 running at "
	    "W(1,0)'s start (10 s)");
	tui_key(d, 'k');
	tap_str(sel_name(d), "W(0,1)", "Up on the first device stays");
	select_op(d, "F(0,0)");
	tui_key(d, 'j');
	tap_str(sel_name(d), "F(1,0)", "j where device 1 is idle: its next "
	    "op");
	select_op(d, "B(0,0)");
	tui_key(d, KEY_UP);
	tap_str(sel_name(d), "B(0,0)", "Up from device 0 stays");
	select_op(d, "W(0,0)");
	tui_key(d, KEY_DOWN);
	tap_str(sel_name(d), "B(1,1)", "Down at 6 s: B(1,1), 5 to 7 s");

	select_op(d, "F(0,2)");
	tui_key(d, '+');
	tap_near(d->view.span, 8.5, 0, "+ halves the span");
	tui_key(d, '-');
	tap_near(d->view.span, 17, 0, "- doubles it");
	tap_near(d->view.t0, 0, 0, "about the selection: back where it was");
	tui_key(d, '+');
	tui_key(d, '+');
	tap_near(d->view.span, 4.25, 0, "+ twice: a quarter");
	tap_near(d->view.t0, 2 - 2 * 0.25, 1e-12,
	    "the selection's start (2 s) stays put on screen");
	tui_key(d, KEY_END);
	tap_near(d->view.t0, 17 - 4.25, 1e-12, "End: the last window");
	tui_key(d, KEY_PPAGE);
	tap_near(d->view.t0, 17 - 8.5, 1e-12, "PgUp: one window left");
	tui_key(d, KEY_NPAGE);
	tui_key(d, KEY_NPAGE);
	tap_near(d->view.t0, 17 - 4.25, 1e-12, "PgDn stops at the end");
	/* The selection (F(0,2), 2 s) off screen: the zoom is about the
	 * window's middle, kept within the schedule. */
	tui_key(d, '-');
	tap_ok(d->view.span == 8.5 && d->view.t0 == 17 - 8.5, "- at the end "
	    "with the selection off screen: about the middle, the end kept "
	    "(%g from %g)", d->view.span, d->view.t0);
	tui_key(d, '-');
	tui_key(d, '-');
	tap_ok(d->view.span == 34 && d->view.t0 == 0, "- past the whole: "
	    "from the start, not past the end (%g from %g)", d->view.span,
	    d->view.t0);
	tui_key(d, '0');
	tui_key(d, '+');
	tui_key(d, '+');
	tui_key(d, KEY_END);
	tui_key(d, KEY_HOME);
	tap_near(d->view.t0, 0, 0, "Home: the start");
	tui_key(d, '0');
	tap_ok(d->view.t0 == 0 && d->view.span == 17, "0 fits the schedule");
	for (i = 0; i < 100; i++)
		tui_key(d, '+');
	tap_ok(d->view.span >= 1e-9 && d->view.span < 2e-9,
	    "zooming in stops at a nanosecond (%g s)", d->view.span);
	tap_str(d->message, "zoom: as far as it goes", "... saying so");
	for (i = 0; i < 100; i++)
		tui_key(d, '-');
	tap_ok(d->view.span <= 17e3 && d->view.span > 17e3 / 2,
	    "zooming out stops at a thousand schedules (%g s)", d->view.span);
	tui_key(d, '0');

	r = tui_key(d, 'g');
	tap_int(d->mode, TUI_MODE_PROMPT, "g asks for a device");
	type(d, "1\n");
	tap_int(d->mode, TUI_MODE_TIMELINE, "Enter closes the prompt");
	tap_str(sel_name(d), "B(1,0)", "g 1: device 1's op at F(0,2)'s "
	    "start (2 s)");
	tui_key(d, 'g');
	type(d, "7\n");
	tap_str(d->message, "go to: \"7\" is no device (0 to 1)",
	    "g refuses a device out of range");
	tui_key(d, '/');
	type(d, "b(1,3)\n");
	tap_str(sel_name(d), "B(1,3)", "/ finds an op by name");
	tui_key(d, '/');
	type(d, "X(0,1)\n");
	tap_str(sel_name(d), "B(0,1)", "/ takes X, the fused backward's "
	    "glyph, for BW (which a split schedule runs as B)");
	tui_key(d, '/');
	type(d, "b(1,3)\n");
	tui_key(d, '/');
	type(d, "xyz\n");
	tap_ok(strstr(d->message, "'xyz'") != NULL, "/ quotes what was typed "
	    "(X is BW only before its parenthesis): %s", d->message);
	tui_key(d, '/');
	type(d, "Q(1,3)\n");
	tap_ok(d->message_is_error && strncmp(d->message, "find: ", 6) == 0,
	    "/ with a bad name says why: %s", d->message);
	tap_str(sel_name(d), "B(1,3)", "... and keeps the selection");
	tui_key(d, '/');
	type(d, "F(0");
	tui_key(d, KEY_BACKSPACE);
	tui_key(d, KEY_BACKSPACE);
	tap_str(d->prompt.text, "F", "Backspace deletes in the prompt");
	/* Its line holds 1023 bytes: the next key is refused, and the
	 * refusal holds the line (the prompt's) until the next key. */
	for (i = 1; i < 1023; i++)
		tui_key(d, 'a');
	tap_ok(d->prompt.len == 1023 && !d->prompt.refused, "1023 bytes fit");
	tui_key(d, 'a');
	tap_ok(d->prompt.len == 1023 && d->prompt.refused &&
	    strcmp(d->message, "the line holds 1023 bytes: the key is not "
	    "taken (Ctrl-U clears it)") == 0, "the 1024th is refused, saying "
	    "so: %s", d->message);
	tui_key(d, KEY_BACKSPACE);
	tap_ok(d->prompt.len == 1022 && !d->prompt.refused, "the next key "
	    "gives the line back to the prompt");
	tui_key(d, TUI_KEY_ESC);
	tap_int(d->mode, TUI_MODE_TIMELINE, "Esc cancels the prompt");

	tui_key(d, 'z');
	tap_ok(d->view.folded[1] && !d->view.folded[0],
	    "z folds the selected op's device");
	tui_key(d, 'z');
	tap_ok(!d->view.folded[1], "z again unfolds it");
	tui_key(d, 'C');
	tap_ok(d->show_critical, "C shows the critical path");
	tui_key(d, 'C');
	tap_ok(!d->show_critical, "C hides it");
	tui_key(d, '?');
	tap_int(d->mode, TUI_MODE_HELP, "? opens the help");
	tap_str(d->message, "", "...and the message line gives way to its "
	    "key hints");
	tui_key(d, KEY_DOWN);
	tui_key(d, 'j');
	tap_int(d->help_top, 2, "Down scrolls the help");
	tui_key(d, KEY_NPAGE);
	tap_int(d->help_top, (int)tui_nkeys - 35, "PgDn: no further than the "
	    "last page (35 rows of the 40)");
	tui_key(d, KEY_NPAGE);
	tui_key(d, 'j');
	tap_int(d->help_top, (int)tui_nkeys - 35, "...PgDn and Down there: "
	    "still the last page");
	tui_key(d, KEY_UP);
	tap_int(d->help_top, (int)tui_nkeys - 36, "...and Up moves at once");
	tui_key(d, KEY_PPAGE);
	tap_int(d->help_top, 0, "PgUp back to the first");
	tui_key(d, 'q');
	tap_int(d->mode, TUI_MODE_TIMELINE, "q closes the help");
	tap_int(tui_key(d, TUI_KEY_CTRL('z')) & TUI_DO_SUSPEND, TUI_DO_SUSPEND,
	    "Ctrl-Z suspends");
	tap_int(tui_key(d, TUI_KEY_CTRL('l')), TUI_DO_REPAINT | TUI_DRAW_ALL,
	    "Ctrl-L repaints every cell");
	/* The terminal's keys act while typing too, and type nothing. */
	tui_key(d, '/');
	tap_int(tui_key(d, TUI_KEY_CTRL('z')) & TUI_DO_SUSPEND, TUI_DO_SUSPEND,
	    "Ctrl-Z suspends from the input line");
	tap_ok(d->mode == TUI_MODE_PROMPT && d->prompt.len == 0,
	    "Ctrl-Z leaves the input line open and empty");
	tui_key(d, TUI_KEY_ESC);
	tui_key(d, '?');
	tap_int(tui_key(d, TUI_KEY_CTRL('z')) & TUI_DO_SUSPEND, TUI_DO_SUSPEND,
	    "Ctrl-Z suspends from the help");
	tui_key(d, TUI_KEY_ESC);
	tap_int(tui_key(d, 'Z'), 0, "an unbound key does nothing");
	tui_key(d, 'L');
	tap_ok(tui_launch_running(d) && strncmp(d->message, "launch: ", 8) == 0,
	    "L launches in the background: %s", d->message);
	/* Quitting stops it, waiting for its thread (bounded). */
	tui_free(d);
}

static void
test_moves(void)
{
	struct tui *d = open_file("tui_small.json");
	unsigned r;

	if (d == NULL)
		return;
	select_op(d, "F(0,2)");
	r = tui_key(d, '<');
	tap_int(r, TUI_DRAW_ALL, "< re-times and redraws");
	check_order(d, 0, "F(0,0) F(0,2) F(0,1) B(0,0) W(0,0) F(0,3) B(0,1) "
	    "W(0,1) B(0,2) W(0,2) B(0,3) W(0,3)", "<");
	tap_ok(tui_unsaved(d) && d->changes == 1, "one change, unsaved");
	tap_str(d->message, "move F(0,2) earlier: makespan 17 s",
	    "the message says what and the new makespan");
	tui_key(d, '>');
	tui_key(d, '>');
	check_order(d, 0, "F(0,0) F(0,1) B(0,0) F(0,2) W(0,0) F(0,3) B(0,1) "
	    "W(0,1) B(0,2) W(0,2) B(0,3) W(0,3)", "> twice");
	tui_key(d, 'u');
	tui_key(d, 'u');
	tui_key(d, 'u');
	check_order(d, 0, SMALL_ZBH2_D0, "u three times: the start");
	tap_str(d->message, "undo move F(0,2) earlier: makespan 17 s",
	    "undo says what it undid");
	tui_key(d, 'u');
	tap_str(d->message, "nothing to undo", "nothing more to undo");
	tui_key(d, TUI_KEY_CTRL('r'));
	tui_key(d, TUI_KEY_CTRL('r'));
	check_order(d, 0, SMALL_ZBH2_D0, "redo twice: < and the first >");
	tui_key(d, '<');
	tap_int(d->history.nredo, 0, "a new change clears redo");
	tui_key(d, TUI_KEY_CTRL('r'));
	tap_str(d->message, "nothing to redo", "nothing to redo");

	select_op(d, "F(0,0)");
	tui_key(d, '<');
	tap_str(d->message, "F(0,0) is already the first op of device 0",
	    "< on the first op refuses");
	select_op(d, "W(1,3)");
	tui_key(d, '>');
	tap_str(d->message, "W(1,3) is already the last op of device 1",
	    "> on the last op refuses");
	tui_free(d);
}

static void
test_pins(void)
{
	struct tui *d = open_file("tui_small.json");
	struct pw_pin pin;

	if (d == NULL)
		return;
	select_op(d, "F(0,2)");
	tui_key(d, 'p');
	tap_ok(d->pin_pending, "p remembers the first op");
	select_op(d, "B(0,0)");
	tui_key(d, 'p');
	tap_int((long long)d->npins, 1, "the second p adds the pin");
	pin = d->pins[0];
	tap_ok(pin.before.kind == PW_F && pin.before.stage == 0 &&
	    pin.before.mb == 2 && pin.after.kind == PW_B &&
	    pin.after.mb == 0, "before is the earlier in the order");
	tap_str(d->message, "pin F(0,2) before B(0,0)", "the message");
	select_op(d, "F(0,2)");
	tui_key(d, '>');
	tap_str(d->message, "move F(0,2) later refused: it would break the "
	    "pin F(0,2) before B(0,0) (P removes it)", "a move breaking a pin "
	    "is refused");
	select_op(d, "B(0,0)");
	tui_key(d, '<');
	tap_str(d->message, "move B(0,0) earlier refused: it would break the "
	    "pin F(0,2) before B(0,0) (P removes it)", "from either side");
	check_order(d, 0, SMALL_ZBH2_D0, "... and changes nothing");
	select_op(d, "F(0,1)");
	tui_key(d, '>');
	check_order(d, 0, "F(0,0) F(0,2) F(0,1) B(0,0) W(0,0) F(0,3) B(0,1) "
	    "W(0,1) B(0,2) W(0,2) B(0,3) W(0,3)", "a move keeping the pin is "
	    "made");
	tui_key(d, 'u');
	tui_key(d, 'p');
	select_op(d, "F(1,0)");
	tui_key(d, 'p');
	tap_str(d->message, "pin F(0,1): pins join ops of one device; select "
	    "another op of device 0 and press p (Esc cancels)", "a pin across "
	    "devices is refused");
	tap_ok(d->npins == 1 && d->pin_pending, "... and the first op kept");
	tui_key(d, TUI_KEY_ESC);
	tap_ok(!d->pin_pending, "Esc cancels a pending pin");
	select_op(d, "B(0,0)");
	tui_key(d, 'P');
	tap_int((long long)d->npins, 0, "P removes the op's pins");
	tap_str(d->message, "unpin F(0,2) before B(0,0)", "... saying which");
	tui_key(d, 'P');
	tap_str(d->message, "B(0,0) has no pin", "P without pins says so");
	tui_key(d, 'u');
	tap_int((long long)d->npins, 1, "undo puts the pin back");
	tui_key(d, 'u');
	tap_int((long long)d->npins, 0, "undo again removes it");
	tui_key(d, TUI_KEY_CTRL('r'));
	tap_ok(d->npins == 1 && d->pins[0].after.mb == 0, "redo adds it");
	select_op(d, "B(0,0)");
	tui_key(d, 'p');
	select_op(d, "F(0,2)");
	tui_key(d, 'p');
	tap_str(d->message, "F(0,2) before B(0,0) is pinned already",
	    "the same pin again is refused, whichever op went first");
	/* A file's pin may name the backward fused (BW) where this schedule
	 * splits it: the same pin. */
	d->pins[0].after.kind = PW_BW;
	select_op(d, "F(0,2)");
	tui_key(d, 'p');
	select_op(d, "B(0,0)");
	tui_key(d, 'p');
	tap_ok(d->npins == 1 && strcmp(d->message, "F(0,2) before B(0,0) is "
	    "pinned already") == 0, "... and so is one naming its BW");
	tui_free(d);
}

static void
test_deadlock(void)
{
	struct tui *d = open_file("tui_small.json");
	char a[48], b[48];

	if (d == NULL)
		return;
	select_op(d, "B(0,0)");
	tui_key(d, '<');
	tui_key(d, '<');
	tui_key(d, '<');
	check_order(d, 0, "B(0,0) F(0,0) F(0,1) F(0,2) W(0,0) F(0,3) B(0,1) "
	    "W(0,1) B(0,2) W(0,2) B(0,3) W(0,3)", "B(0,0) first");
	tap_ok(d->message_is_error && strncmp(d->message, "deadlock: ", 10) ==
	    0, "the message line says deadlock: %s", d->message);
	tap_ok(strchr(d->message, '\n') == NULL && strstr(d->message,
	    "can never start: device ") != NULL, "on one line, the waits "
	    "after the colon (%s)", d->message);
	if (tap_int((long long)d->nwaits, 2, "two orders stop")) {
		tap_str(pw_op_name(a, sizeof a, d->waits[0].op), "B(0,0)",
		    "device 0 stops at B(0,0)");
		tap_str(pw_op_name(b, sizeof b, d->waits[0].on.op), "B(1,0)",
		    "... which waits for B(1,0)");
		tap_str(pw_op_name(a, sizeof a, d->waits[1].op), "F(1,0)",
		    "device 1 stops at F(1,0)");
		tap_str(pw_op_name(b, sizeof b, d->waits[1].on.op), "F(0,0)",
		    "... which waits for F(0,0)");
	}
	tap_near(makespan(d), 20, 1e-12, "the timing of the last orders that "
	    "timed (B(0,0) second) stays shown");
	tui_key(d, 'S');
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, "/nonexistent/never.json\n");
	tap_str(d->message, "/nonexistent/never.json: not saved: the edited "
	    "orders do not time (undo the edit first)", "orders that deadlock "
	    "are not saved");
	tap_ok(tui_unsaved(d), "... and stay unsaved");
	export_refused(d, "svg /nonexistent/never.svg", "export: not exported: "
	    "the edited orders do not time (undo the edit first)",
	    "orders that deadlock are not exported");
	tui_compare_set(d, 0, TUI_CMP_CURRENT);
	tap_ok(d->compare.plan[0] == NULL && d->compare.why[0] != NULL &&
	    strncmp(d->compare.why[0], "the edited orders do not time", 29) ==
	    0, "nor compared: %s", d->compare.why[0] != NULL ?
	    d->compare.why[0] : "(compared)");
	tap_ok(d->compare.why[0] != NULL && strchr(d->compare.why[0], '\n') ==
	    NULL && strstr(d->compare.why[0], "; device 1: F(1,0) waits for "
	    "F(0,0)") != NULL, "... in one line, every wait said");
	tui_compare_clear(d);
	tui_key(d, 'o');
	tap_ok(!tui_solve_running(d) && strncmp(d->message, "optimize: the "
	    "orders do not time (undo first): deadlock: 24 ops can never "
	    "start: device 0: B(0,0) waits for B(1,0); device 1", 104) == 0,
	    "nor optimized from the last timed orders: %s", d->message);
	tui_key(d, 'u');
	tap_int((long long)d->nwaits, 0, "undo: no deadlock");
	tui_key(d, TUI_KEY_CTRL('r'));
	tap_int((long long)d->nwaits, 2, "redo: the deadlock again");
	tui_key(d, 'u');
	tap_ok(pw_plan_status(d->plan, NULL) == PW_OK, "the orders time");
	tui_free(d);
}

/* The form's field labelled LABEL. */
static int
field(const struct tui *d, const char *label)
{
	char buf[64];
	int i;

	for (i = 0; i < tui_form_nfields(d); i++) {
		if (strcmp(tui_form_label(d, i, buf, sizeof buf), label) == 0)
			return i;
	}
	tap_diag("no field %s", label);
	return 0;
}

static const char *
value(const struct tui *d, const char *label)
{
	static char buf[64];

	return tui_form_value(d, field(d, label), buf, sizeof buf);
}

/* Sets LABEL to TEXT; expects the error WANT (NULL: none). */
static void
set_field(struct tui *d, const char *label, const char *text,
    const char *want)
{
	struct pw_error err;
	int rc = tui_form_set(d, field(d, label), text, &err);

	if (want == NULL)
		tap_ok(rc == PW_OK, "%s = %s%s%s", label, text,
		    rc ? ": " : "", rc ? err.msg : "");
	else
		tap_ok(rc == PW_ERR_INPUT && strcmp(err.msg, want) == 0,
		    "%s = %s refused: %s", label, text, rc ? err.msg : "ok");
}

/* Values the form refuses on tui_small.json, with the reasons. */
static const struct {
	const char *label, *text, *want;
} refused[] = {
	{ "devices", "4", "devices: this problem's stages are given: edit "
	    "its file to split it differently" },
	{ "placement", "v", "placement: this problem's stages are given: "
	    "edit its file to split it differently" },
	{ "placement", "zigzag", "placement: \"zigzag\" is neither loop nor "
	    "v" },
	{ "microbatches", "0", "microbatches: \"0\" is no whole number of at "
	    "least 1" },
	{ "memory limit", "lots", "memory limit: \"lots\" is no amount of "
	    "memory (as 40 GiB, or inf)" },
	{ "memory limit", "0x40", "memory limit: \"0x40\" is no amount of "
	    "memory (as 40 GiB, or inf)" },
	{ "time limit", "+5 s", "time limit: \"+5 s\" is no time (as 12 s "
	    "or 500 ms)" },
	{ "offload", "on", "offload: set the D2H and H2D bandwidths first" },
	{ "objective", "fast", "objective: \"fast\" is neither makespan nor "
	    "span" },
	{ "time limit", "soon", "time limit: \"soon\" is no time (as 12 s or "
	    "500 ms)" },
	{ "family", "zb-x", "family: \"zb-x\" is no family (f cycles through "
	    "them)" },
	{ "memory limit", "10 B", "memory limit: memory[0].limit: 10 B is below "
	    "what one microbatch needs on device 0 (static 8 B + act of stage "
	    "0 4 B)" },
};

static void
test_form_given(void)
{
	struct tui *d = open_file("tui_small.json");
	struct pw_problem *before;
	const struct pw_problem *p;
	size_t i;
	int k;

	if (d == NULL)
		return;
	tap_int(tui_form_nfields(d), 13, "5 + one limit per device + 6 fields");
	tap_str(value(d, "devices"), "2", "devices");
	tap_str(value(d, "chunks per device"), "1", "chunks");
	tap_str(value(d, "placement"), "loop", "placement");
	tap_str(value(d, "microbatches"), "4", "microbatches");
	tap_str(value(d, "memory limit"), "64 B", "memory limit");
	tap_str(value(d, "memory limit of device 1"), "64 B",
	    "a device's limit");
	tap_str(value(d, "offload"), "off", "offload");
	tap_str(value(d, "D2H bandwidth"), "none", "no link");
	tap_str(value(d, "objective"), "makespan", "objective");
	tap_str(value(d, "time limit"), "10 s", "time limit");
	tap_str(value(d, "family"), "zb-h2", "family");

	for (i = 0; i < sizeof refused / sizeof refused[0]; i++)
		set_field(d, refused[i].label, refused[i].text, refused[i].want);
	tap_int((long long)d->changes, 0, "refused values change nothing");
	tap_str(value(d, "memory limit"), "64 B", "... the old one stays");

	before = pw_problem_copy(pw_plan_problem(d->plan));
	set_field(d, "memory limit", " 20B ", NULL);
	p = pw_plan_problem(d->plan);
	tap_ok(p->memory[0].limit == 20 && p->memory[1].limit == 20,
	    "a good limit changes every device's");
	tap_str(d->message, "memory limit 20 B: makespan 17 s",
	    "one change, named by the field and value with its unit");
	set_field(d, "memory limit of device 1", "inf", NULL);
	tap_ok(isinf(pw_plan_problem(d->plan)->memory[1].limit) &&
	    pw_plan_problem(d->plan)->memory[0].limit == 20,
	    "a device's own limit");
	tap_str(value(d, "memory limit"), "per device", "limits now differ");
	set_field(d, "microbatches", "6", NULL);
	tap_int(pw_plan_problem(d->plan)->microbatches, 6, "microbatches");
	tap_str(d->source, "family zb-h2", "a new shape: the family's "
	    "schedule");
	set_field(d, "D2H bandwidth", "25 GB/s", NULL);
	p = pw_plan_problem(d->plan);
	tap_ok(p->link.present && p->link.d2h == 25e9 && p->link.h2d == 25e9,
	    "a bandwidth adds a link, both ways until the other is set");
	tap_ok(strncmp(d->message, "D2H bandwidth 25 GB/s: makespan ", 31) ==
	    0 && strstr(d->message, " (a new link, offload on: both ways at "
	    "this rate until the other is set)") != NULL, "... and says so: "
	    "%s", d->message);
	set_field(d, "H2D bandwidth", "12.5", NULL);
	tap_near(pw_plan_problem(d->plan)->link.h2d, 12.5e9, 0,
	    "GB/s when no unit is given");
	set_field(d, "offload", "off", NULL);
	tap_ok(!pw_plan_problem(d->plan)->link.present, "offload off");
	set_field(d, "objective", "span", NULL);
	tap_int(d->objective, PW_OBJ_SPAN, "objective span");
	set_field(d, "time limit", "500 ms", NULL);
	tap_near(d->time_limit, 0.5, 0, "time limit 500 ms");
	set_field(d, "family", "1f1b", NULL);
	tap_str(d->source, "family 1f1b", "family by name");
	tap_int((long long)d->changes, 9, "nine changes");
	/* A value a field has already is no change to undo. */
	set_field(d, "time limit", "0.5", NULL);
	set_field(d, "objective", "span", NULL);
	set_field(d, "offload", "off", NULL);
	tap_int((long long)d->changes, 9, "the values they have: no change");
	tap_str(d->message, "offload off: unchanged", "... saying so");

	while (d->history.nundo > 0)
		tui_undo(d);
	tap_ok(pw_problem_same(pw_plan_problem(d->plan), before),
	    "undoing every change restores the problem");
	tap_ok(d->objective == PW_OBJ_MAKESPAN && d->time_limit == 10,
	    "... and the optimizer's options");
	tap_str(d->source, "family zb-h2", "... and the source");
	check_order(d, 0, SMALL_ZBH2_D0, "... and the orders");
	while (d->history.nredo > 0)
		tui_redo(d);
	tap_str(d->source, "family 1f1b", "redoing all: the last state");
	tap_ok(d->objective == PW_OBJ_SPAN && d->time_limit == 0.5,
	    "... with its options");
	pw_problem_free(before);

	/* The form's keys. */
	tui_key(d, 't');
	tap_int(d->mode, TUI_MODE_FORM, "t opens the form");
	tui_key(d, KEY_DOWN);
	tui_key(d, '\t');
	tap_int(d->form.field, 2, "Down and Tab: the next fields");
	tui_key(d, KEY_BTAB);
	tui_key(d, KEY_UP);
	tui_key(d, KEY_UP);
	tap_int(d->form.field, 12, "Shift-Tab and Up wrap to the last");
	d->form.field = field(d, "microbatches");
	tui_key(d, '\n');
	tap_ok(d->form.editing && strcmp(d->form.text, "6") == 0,
	    "Enter edits the field, starting from its value");
	tui_key(d, KEY_BACKSPACE);
	type(d, "x\n");
	tap_ok(!d->form.editing && d->message_is_error &&
	    pw_plan_problem(d->plan)->microbatches == 6,
	    "a bad value: its reason on the message line, the old one kept");
	tui_key(d, '\n');
	tui_key(d, KEY_BACKSPACE);
	type(d, "3\n");
	tap_int(pw_plan_problem(d->plan)->microbatches, 3, "Enter again sets "
	    "it");
	tui_key(d, '\n');
	type(d, "9");
	tui_key(d, TUI_KEY_ESC);
	tap_ok(!d->form.editing && d->mode == TUI_MODE_FORM &&
	    pw_plan_problem(d->plan)->microbatches == 3, "Esc cancels typing");
	/* A line past its room says so, not dropping keys unseen. */
	tui_key(d, '\n');
	tui_key(d, TUI_KEY_CTRL('u'));
	for (k = 0; k < 127; k++)
		tui_key(d, '1');
	tap_ok(!d->message_is_error, "127 characters fit");
	tap_int(tui_key(d, 'B'), TUI_DRAW_PANEL | TUI_DRAW_MESSAGE,
	    "the 128th redraws the message line");
	tap_ok(d->message_is_error && strcmp(d->message, "the line holds 127 "
	    "bytes: the key is not taken (Ctrl-U clears it)") == 0 &&
	    d->form.len == 127, "... saying it is not taken");
	tui_key(d, TUI_KEY_ESC);
	tui_key(d, TUI_KEY_ESC);
	tap_int(d->mode, TUI_MODE_TIMELINE, "Esc again closes the form");
	tui_free(d);
}

static void
test_form_model(void)
{
	struct tui *d = open_file(NULL);
	const struct pw_problem *p;
	int chunks;

	if (d == NULL)
		return;
	/* The best family's split of the default problem. */
	chunks = pw_problem_chunks(pw_plan_problem(d->plan), 0);
	d->form.field = field(d, "family");
	set_field(d, "devices", "4", NULL);
	tap_int(d->form.field, 14, "the focus stays on a field that exists");
	p = pw_plan_problem(d->plan);
	tap_ok(p->devices == 4 && p->nstages == 4 * chunks && p->origin != NULL,
	    "the model split again on 4 devices, %d chunks each", chunks);
	tap_int(d->view.nfolded, 4, "folds follow the device count");
	tap_int(tui_form_nfields(d), 15, "a limit field per device");
	/* In any case, as the command line's --placement takes it. */
	set_field(d, "placement", "V", NULL);
	p = pw_plan_problem(d->plan);
	tap_ok(p->nstages == 8 && pw_problem_is_v(p), "V: 2 chunks each");
	tap_str(value(d, "placement"), "v", "the field shows the name, v");
	d->family = pw_family_find("zb-v") - pw_families;
	set_field(d, "chunks per device", "3", NULL);
	p = pw_plan_problem(d->plan);
	tap_ok(p->nstages == 8 && pw_problem_is_v(p) && strncmp(d->message,
	    "chunks per device 3, but zb-v lays the model out as V, 2 chunks "
	    "(f picks another family): makespan ", 99) == 0,
	    "a family with its own layout says it overrides the one asked "
	    "for: %s", d->message);
	set_field(d, "chunks per device", "16", "chunks per device: split: "
	    "32 layers cannot fill 64 stages (4 devices x 16 chunks) with at "
	    "least one each");
	set_field(d, "offload", "off", NULL);
	tap_ok(!pw_plan_problem(d->plan)->link.present,
	    "offload off rebuilds without the link");
	/* The model's link is its hardware's: a rate set with offload off
	 * is kept for offload on. */
	set_field(d, "H2D bandwidth", "7", NULL);
	tap_str(value(d, "H2D bandwidth"), "7 GB/s", "a rate set with offload "
	    "off is kept");
	set_field(d, "offload", "on", NULL);
	tap_ok(pw_plan_problem(d->plan)->link.present &&
	    pw_plan_problem(d->plan)->link.h2d == 7e9, "... and is the link's "
	    "with offload on");
	tui_undo(d);
	tui_undo(d);
	set_field(d, "memory limit", "40", NULL);
	tap_near(pw_plan_problem(d->plan)->memory[3].limit, 40.0 * (1 << 30),
	    0, "memory limit 40 GiB on every device");
	tap_ok(strncmp(d->message, "memory limit 40 GiB: makespan ", 30) == 0,
	    "a bare number is GiB, and the message says so: %s", d->message);
	set_field(d, "microbatches", "16", NULL);
	p = pw_plan_problem(d->plan);
	tap_ok(p->microbatches == 16 && p->memory[0].limit == 40.0 * (1 << 30),
	    "microbatches rebuild the problem, the limits kept");
	set_field(d, "family", "1f1b", NULL);
	p = pw_plan_problem(d->plan);
	tap_ok(p->nstages == 4 && p->memory[2].limit == 40.0 * (1 << 30),
	    "a family splitting the model again keeps the limits");
	/* Seven changes: devices, placement, chunks, offload, the limit,
	 * microbatches, the family. */
	for (int k = 0; k < 7; k++)
		tui_undo(d);
	p = pw_plan_problem(d->plan);
	tap_ok(p->devices == 8 && d->view.nfolded == 8,
	    "undo: 8 devices again");
	tui_free(d);
}

static void
test_families(void)
{
	struct tui *d = open_file("tui_small.json");
	int i;

	if (d == NULL)
		return;
	tui_key(d, 'f');
	tap_str(d->source, "family zb-auto", "f: the next family");
	tap_str(d->message, "family zb-auto: makespan 17 s", "its makespan");
	tap_near(d->view.span, makespan(d), 0, "a view that showed the whole "
	    "schedule shows the new one whole");
	tui_key(d, '=');
	tui_key(d, 'f');
	tap_near(d->view.span, 17.0 / 2, 1e-12, "a zoomed view keeps its span");
	tui_key(d, 'f');
	tap_str(d->source, "family zb-2p", "f twice more");
	tui_key(d, 'f');
	tap_ok(d->message_is_error && strncmp(d->message, "family zb-v: "
	    "zb-v needs V placement", 34) == 0, "a refusal shows its reason: %s",
	    d->message);
	tap_str(d->source, "family zb-2p", "... and keeps the schedule");
	tui_key(d, 'f');
	tap_ok(d->message_is_error && strncmp(d->message, "family v-half", 13)
	    == 0, "the next f goes on to the following family");
	for (i = 0; i < 8; i++)
		tui_key(d, 'f');
	tap_str(d->source, "family po-auto", "on through the registry");
	tui_key(d, 'f');
	tap_str(d->source, "family gpipe", "and around");
	tap_int((long long)d->changes, 8, "each switch one change");
	tui_key(d, 'u');
	tap_str(d->source, "family po-auto", "undo: the family before");
	tui_free(d);
}

/* Whether the header's bound is shown (WANT), and its gap is the plan's
 * objective against it. */
static void
check_bound(const struct tui *d, bool want, const char *what)
{
	double bound = -1, gap = -1, obj = makespan(d);

	if (!want) {
		tap_ok(!tui_solve_bound(d, &bound, &gap), "%s: no bound", what);
		return;
	}
	bool shown = tui_solve_bound(d, &bound, &gap);

	tap_ok(shown && bound == d->solve.bound && bound > 0 &&
	    fabs(gap - (obj - bound) / obj) < 1e-12, "%s: bound %g, gap %g",
	    what, bound, gap);
}

/* Optimizing from a schedule over its limit: the first incumbent, which
 * keeps the limit, replaces it on screen however slower. */
static void
test_optimize_over_limit(void)
{
	struct tui *d = open_file("tui_small.json");
	char verdict[4096];

	if (d == NULL)
		return;
	d->iteration_limit = 2000;
	set_field(d, "memory limit", "16 B", NULL);
	tap_ok(!tui_plan_verdict(d, verdict, sizeof verdict) &&
	    strcmp(verdict, "memory over on d0") == 0, "zb-h2 is over a limit "
	    "of 16 B: %s", verdict);
	tui_key(d, 'o');
	tap_ok(tui_solve_running(d) && isinf(d->solve.shown), "o from it: "
	    "any incumbent is shown, being within the limit");
	solve_until_done(d);
	tap_ok(tui_plan_verdict(d, verdict, sizeof verdict) &&
	    strncmp(d->source, "optimizer", 9) == 0, "the result fits: %s, "
	    "%s", verdict, d->source);
	tui_free(d);
}

static void
test_optimize(void)
{
	struct tui *d = open_file("tui_small.json");
	struct pw_schedule *start;
	char src[160];

	if (d == NULL)
		return;
	d->iteration_limit = 2000;
	select_op(d, "F(0,2)");
	tui_key(d, '>');
	tap_str(tui_source(d, src, sizeof src), "family zb-h2, edited",
	    "an edit: the header's source says so");
	start = pw_schedule_copy(pw_plan_schedule(d->plan));
	tui_key(d, 'o');
	tap_ok(tui_solve_running(d), "o starts the optimizer");
	tui_key(d, 'o');
	tap_str(d->message, "the optimizer is running already (Esc cancels "
	    "it)", "a second o says so");
	tui_key(d, '<');
	tap_str(d->message, "the optimizer is running: Esc cancels it first",
	    "edits wait for the optimizer");
	tap_ok(tui_solve_said_shown(d), "... saying so on the message line "
	    "before the progress");
	solve_until_done(d);
	tap_ok(!tui_solve_running(d), "the iteration limit ends it");
	tap_ok(strncmp(d->source, "optimizer (gap ", 15) == 0,
	    "the source names the optimizer: %s", d->source);
	tap_ok(makespan(d) <= 17 + 1e-9, "no worse than the start (%g s)",
	    makespan(d));
	tap_ok(d->solve.last != NULL && d->solve.last_problem != NULL,
	    "the result is kept for compare");
	tap_str(d->history.undo[d->history.nundo - 1].what, "optimize",
	    "one change");
	check_bound(d, true, "after the search");
	set_field(d, "microbatches", "5", NULL);
	check_bound(d, false, "another problem");
	tui_key(d, 'u');
	check_bound(d, true, "undo back to its problem");
	d->objective = PW_OBJ_SPAN;
	check_bound(d, false, "another objective");
	d->objective = PW_OBJ_MAKESPAN;
	select_op(d, "F(0,0)");
	tui_key(d, 'p');
	select_op(d, "F(0,1)");
	tui_key(d, 'p');
	tap_int((long long)d->npins, 1, "a pin");
	check_bound(d, false, "another pin");
	tui_key(d, 'u');
	check_bound(d, true, "the pin undone");
	tui_key(d, 'u');
	tap_ok(test_same_schedule(pw_plan_schedule(d->plan), start),
	    "undo returns the start");
	tap_str(tui_source(d, src, sizeof src), "family zb-h2, edited",
	    "... and its source, edited");
	tui_key(d, 'u');
	tap_str(tui_source(d, src, sizeof src), "family zb-h2",
	    "the edit undone: the family's own schedule");
	tui_key(d, TUI_KEY_CTRL('r'));
	tui_key(d, TUI_KEY_CTRL('r'));
	tap_ok(strncmp(d->source, "optimizer", 9) == 0 &&
	    strstr(tui_source(d, src, sizeof src), "edited") == NULL,
	    "redo: the result, not edited (%s)", src);
	select_op(d, "F(0,0)");
	tui_key(d, '>');
	tap_ok(strncmp(src, "optimizer", 9) == 0 && strstr(tui_source(d,
	    src, sizeof src), "), edited") != NULL, "its words hold no more "
	    "after an edit: %s", src);
	tui_key(d, 'u');
	set_field(d, "memory limit", "1 TiB", NULL);
	tap_ok(strstr(tui_source(d, src, sizeof src), "), edited") != NULL,
	    "... nor under another problem: %s", src);
	tui_key(d, 'u');
	tap_ok(strstr(tui_source(d, src, sizeof src), "edited") == NULL,
	    "undo: they hold again (%s)", src);

	d->iteration_limit = 0;
	d->time_limit = 60;
	tui_key(d, 'o');
	set_unsaved(d, false);
	tap_int(tui_key(d, 'q') & TUI_DO_QUIT, 0, "q while it runs asks");
	tap_str(d->prompt.question, "the optimizer is running: q quits and "
	    "drops it, Esc stays ", "... saying it drops the search");
	tui_key(d, TUI_KEY_ESC);
	tap_ok(d->mode == TUI_MODE_TIMELINE && tui_solve_running(d),
	    "Esc stays, the search goes on");
	set_unsaved(d, true);
	tui_key(d, 'q');
	tap_str(d->prompt.question, "the optimizer is running and changes are "
	    "unsaved: s saves and quits, q quits and drops both, Esc stays ",
	    "unsaved too: both said");
	tap_int(tui_key(d, 'q') & TUI_DO_QUIT, TUI_DO_QUIT, "q quits");
	/* s at that question saves what undo knows: the search ends first
	 * and its result is a change (the save-as question comes next). */
	tui_key(d, 'q');
	tui_key(d, 's');
	tap_ok(!tui_solve_running(d) && d->mode == TUI_MODE_PROMPT &&
	    d->prompt.kind == TUI_PROMPT_SAVE_AS, "s ends the search, then "
	    "asks where to save");
	tap_ok(d->history.nundo > 0 && strncmp(d->source, "optimizer", 9) == 0,
	    "... its result is the plan, as a change: %s", d->source);
	tui_key(d, TUI_KEY_ESC);
	tui_key(d, 'o');
	tui_key(d, TUI_KEY_ESC);
	solve_until_done(d);
	tap_ok(!tui_solve_running(d) && pw_plan_status(d->plan, NULL) ==
	    PW_OK, "Esc cancels; the best so far is kept and times");
	tap_ok(strstr(d->source, "cancelled") != NULL || strstr(d->source,
	    "optimal") != NULL || strstr(d->source, "searched") != NULL,
	    "the source says how it ended: %s", d->source);
	/* q asked while it ran, then it ended with a better schedule: that
	 * is a change now, which the question says and q does not drop. */
	d->iteration_limit = 2000;
	select_op(d, "F(0,2)");
	tui_key(d, '<');
	tui_key(d, '<');
	set_unsaved(d, false);
	tui_key(d, 'o');
	tui_key(d, 'q');
	tap_str(d->prompt.question, "the optimizer is running: q quits and "
	    "drops it, Esc stays ", "q while it runs on a saved state");
	solve_until_done(d);
	tap_ok(tui_unsaved(d) && d->mode == TUI_MODE_PROMPT &&
	    strcmp(d->prompt.question, "unsaved changes: s saves and quits, "
	    "q quits without saving, Esc stays ") == 0, "it ended with a "
	    "change: the open question says so (%s)", d->prompt.question);
	tap_int(tui_key(d, 'q') & TUI_DO_QUIT, 0, "q, answering the question "
	    "asked before the result came, does not quit");
	tap_str(d->prompt.question, "the optimizer ended: its result is not "
	    "saved; unsaved changes: s saves and quits, q quits without "
	    "saving, Esc stays ", "... it asks again, saying why in the "
	    "question (which holds the message line)");
	tap_int(tui_key(d, 'q') & TUI_DO_QUIT, TUI_DO_QUIT, "q then quits");
	pw_schedule_free(start);
	tui_free(d);
}

static void
test_files(void)
{
	struct tui *d = open_file("tui_small.json");
	char *want, *refused, *mine;
	struct pw_problem *p = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_pin *pins = NULL;
	struct pw_error err;
	size_t nops = 0, npins = 0, i;
	char *saved = tmp_path("saved.json"), *svg = tmp_path("x.svg");
	char *trace = tmp_path("x.json"), *csv = tmp_path("x.csv"), *text;
	struct tui *again;
	unsigned r;

	if (d == NULL)
		return;
	select_op(d, "F(0,2)");
	tui_key(d, 'p');
	select_op(d, "W(0,0)");
	tui_key(d, 'p');
	r = tui_key(d, 's');
	tap_ok(d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
	    TUI_PROMPT_SAVE_AS, "s without a schedule file asks for a name");
	tap_int(r & TUI_DO_QUIT, 0, "... and does not quit");
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, saved);
	tui_key(d, '\n');
	tap_ok(!tui_unsaved(d) && d->save_path && strcmp(d->save_path, saved) == 0,
	    "saved: clean, and s now saves there");
	/* Which an export would replace with another format. */
	want = pw_xasprintf("svg %s", saved);
	tui_prompt_open(d, TUI_PROMPT_EXPORT, "? ", "");
	type(d, want);
	tui_key(d, '\n');
	free(want);
	tap_ok(strstr(d->message, "is a file the designer reads or saves to")
	    != NULL, "x refuses the file s saves to (%s)", d->message);
	if (tap_ok(pw_file_read_pins(saved, &p, &ops, &nops, &pins, &npins,
	    NULL, &err) == PW_OK, "the file reads back")) {
		tap_int((long long)nops, 24, "with every op");
		tap_ok(npins == 1 && pins[0].before.kind == PW_F &&
		    pins[0].before.mb == 2 && pins[0].after.kind == PW_W,
		    "and the pin");
	}
	pw_problem_free(p);
	free(ops);
	free(pins);

	again = tui_new(saved, 40, 120, &err);
	if (tap_ok(again != NULL, "a saved schedule opens")) {
		tap_ok(again->path_is_schedule && again->npins == 1 &&
		    strcmp(again->save_path, saved) == 0,
		    "as a schedule file with its pins, saving back to it");
		tap_str(again->source, "file saved.json", "its source");
		check_order(again, 0, SMALL_ZBH2_D0, "its orders");
		select_op(again, "F(0,1)");
		tui_key(again, '>');
		tui_recover_write(again);
		tui_free(again);
	}
	again = tui_new(saved, 40, 120, &err);
	if (again != NULL) {
		tui_prompt_open(again, TUI_PROMPT_RESTORE, "restore? ", "");
		tap_int(tui_key(again, 'x'), 0, "the restore prompt wants y or "
		    "n");
		tui_key(again, 'y');
		check_order(again, 0, "F(0,0) F(0,2) F(0,1) B(0,0) W(0,0) "
		    "F(0,3) B(0,1) W(0,1) B(0,2) W(0,2) B(0,3) W(0,3)",
		    "y restores the recovery file's orders");
		tap_ok(tui_unsaved(again) && again->mode == TUI_MODE_TIMELINE,
		    "unsaved, back on the timeline");
		tui_key(again, 'u');
		check_order(again, 0, SMALL_ZBH2_D0, "undo: the file's own");
		tui_prompt_open(again, TUI_PROMPT_RESTORE, "restore? ", "");
		tui_key(again, 'n');
		{
			char *rec = tui_recover_name(NULL, saved);
			char *aside = pw_xasprintf("%s~", rec);
			char *want = pw_xasprintf("recovery file kept as %s, "
			    "not restored", aside);
			char *kept, *mine;

			tap_str(again->message, want, "n keeps it aside");
			kept = test_read_file(aside);
			tap_ok(kept != NULL && access(rec, F_OK) != 0,
			    "moved to NAME~");
			tui_key(again, '>');
			tui_recover_write(again);
			mine = test_read_file(aside);
			tap_ok(kept != NULL && mine != NULL &&
			    strcmp(kept, mine) == 0 && access(rec, F_OK) == 0,
			    "this session's recovery file leaves it alone");
			tui_prompt_open(again, TUI_PROMPT_RESTORE, "? ", "");
			tui_key(again, 'n');
			free(want);
			want = pw_xasprintf("recovery file kept as %s~2, not "
			    "restored", rec);
			tap_str(again->message, want, "a second one: NAME~2");
			free(mine);
			mine = pw_xasprintf("%s~2", rec);
			unlink(mine);
			unlink(aside);
			free(want);
			free(kept);
			free(mine);
			free(aside);
			free(rec);
		}
		tui_recover_remove(again);
		tui_free(again);
	}

	tui_key(d, 'c');
	tui_key(d, 'F');
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, saved);
	tui_key(d, '\n');
	tap_ok(d->mode == TUI_MODE_COMPARE && d->compare.file != NULL &&
	    strcmp(d->compare.file, saved) == 0 &&
	    d->compare.source[d->compare.focus] == TUI_CMP_FILE &&
	    d->compare.plan[d->compare.focus] != NULL,
	    "F in the compare view loads a schedule file into the slot");
	tui_key(d, TUI_KEY_ESC);

	tui_key(d, 'x');
	tap_str(d->prompt.question, "export to FORMAT FILE (chrome, svg, png, "
	    "torch-csv, torch-csv-offload): ", "x asks for a format and a file");
	for (i = 0; i < pw_nexport_formats; i++)
		tap_ok(strstr(d->prompt.question, pw_export_formats[i].name) !=
		    NULL, "x offers %s", pw_export_formats[i].name);
	tap_str(d->prompt.text, "svg schedule.svg", "... SVG by default");
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, "svg ");
	type(d, svg);
	tui_key(d, '\n');
	text = test_read_file(svg);
	tap_ok(text != NULL && strstr(text, "<svg") != NULL, "x exports SVG");
	free(text);
	tui_key(d, 'x');
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, "chrome ");
	type(d, trace);
	tui_key(d, '\n');
	text = test_read_file(trace);
	tap_ok(text != NULL && strstr(text, "traceEvents") != NULL,
	    "x exports a Chrome trace");
	free(text);
	tui_key(d, 'x');
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, "torch-csv ");
	type(d, csv);
	tui_key(d, '\n');
	text = test_read_file(csv);
	tap_ok(text != NULL && strncmp(text, "0F0,", 4) == 0,
	    "x exports PyTorch's CSV: %.20s", text != NULL ? text : "");
	free(text);
	tui_key(d, 'x');
	d->prompt.len = 0;
	d->prompt.text[0] = '\0';
	type(d, "gif x.gif\n");
	tap_str(d->message, "export: unknown format 'gif' (chrome, svg, png, "
	    "torch-csv, torch-csv-offload)",
	    "x refuses a format not in the registry");
	tap_ok(d->message_is_error, "... as an error");
	export_refused(d, "svg", "export: svg to which file? (FORMAT, a blank, "
	    "FILE)", "x without a file");
	export_refused(d, "chrome -", "export: - is the screen: choose another "
	    "name", "x refuses -, the designer's screen");
	export_refused(d, "torch-csv p.lua", "export: p.lua is a script's "
	    "name: choose another name", "x refuses a script's name");
	text = test_read_file(d->path);
	want = pw_xasprintf("torch-csv %s", d->path);
	refused = pw_xasprintf("export: %s is a file the designer reads or "
	    "saves to: choose another name", d->path);
	export_refused(d, want, refused, "x refuses the problem's own file");
	mine = test_read_file(d->path);
	tap_ok(text != NULL && mine != NULL && strcmp(text, mine) == 0,
	    "... which stays as it was");
	free(mine);
	free(refused);
	free(want);
	free(text);

	tap_int(tui_key(d, 'q'), TUI_DO_QUIT, "q quits when saved");
	select_op(d, "B(1,0)");
	tui_key(d, '>');
	tui_key(d, 'q');
	tap_ok(d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
	    TUI_PROMPT_QUIT, "q asks when there are unsaved changes");
	tap_int(tui_key(d, 'x'), 0, "other keys do nothing there");
	tui_key(d, TUI_KEY_ESC);
	tap_int(d->mode, TUI_MODE_TIMELINE, "Esc stays");
	tui_key(d, 'q');
	tap_int(tui_key(d, 'q') & TUI_DO_QUIT, TUI_DO_QUIT,
	    "q again quits without saving");
	tap_ok(tui_unsaved(d), "... unsaved");
	tui_key(d, 'q');
	tap_int(tui_key(d, 's') & TUI_DO_QUIT, TUI_DO_QUIT, "s saves and quits");
	tap_ok(!tui_unsaved(d), "... saved");
	r = tui_key(d, 'S');
	tap_str(d->prompt.text, saved, "S offers the file to save as");
	tui_key(d, TUI_KEY_ESC);
	free(saved);
	free(svg);
	free(csv);
	free(trace);
	tui_free(d);
}

/* Writes TEXT to PATH. */
static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp == NULL) {
		tap_diag("cannot write %s", path);
		return;
	}
	fputs(text, fp);
	fclose(fp);
}

static const char SMALL_LUA[] = "return pw.problem{\n"
    "\tname = \"lua-small\", devices = 2, microbatches = %d,\n"
    "\tstages = {\n"
    "\t\t{ f = 1, b = 2, w = 1, act = 4, hold = 2 },\n"
    "\t\t{ f = 1, b = 2, w = 1, act = 4, hold = 2 },\n"
    "\t},\n"
    "\tobjective = \"span\", time_limit = 3,\n"
    "\tprecede = { { { \"F\", 1, 3 }, { \"B\", 1, 2 } } },\n"
    "}\n";

/* A problem script's print and pw.show would land on the designer's
 * screen: what it prints is caught and said on the message line, its
 * first line (escaped) and how many more. */
static void
test_script_prints(void)
{
	char *lua = tmp_path("prints.lua"), *text, *want;
	struct tui *d;
	struct pw_error err;

	text = pw_xasprintf("print('hello', 42)\nprint('two\\nthree')\n%s",
	    SMALL_LUA);
	want = pw_xasprintf(text, 4);
	write_file(lua, want);
	free(want);
	d = tui_new(lua, 40, 120, &err);
	if (!tap_ok(d != NULL, "a printing script opens")) {
		tap_diag("%s", err.msg);
		free(text);
		free(lua);
		return;
	}
	want = pw_xasprintf("loaded %s; it printed \"hello\\x0942\" and 2 more "
	    "lines", lua);
	tap_str(d->message, want, "its first line and the count on the "
	    "message line");
	free(want);
	write_file(lua, "print('\\27[2J')\n"
	    "return pw.problem{ devices = 2, microbatches = 6, stages = {\n"
	    "{ f = 1, b = 2, w = 1, act = 4, hold = 2 },\n"
	    "{ f = 1, b = 2, w = 1, act = 4, hold = 2 } } }\n");
	tui_edit_done(d);
	tap_ok(pw_plan_problem(d->plan)->microbatches == 6 &&
	    strstr(d->message, "it printed \"\\x1b[2J\"") != NULL &&
	    strstr(d->message, "more line") == NULL, "a reload says what it "
	    "printed, the escape sequence escaped (%s)", d->message);
	/* A failed reload keeps what the script printed: it may say why. */
	write_file(lua, "print('checking')\nerror('boom')\n");
	tui_edit_done(d);
	tap_ok(d->mode == TUI_MODE_ERROR && strstr(d->message, "did not load")
	    != NULL && strstr(d->message, "; it printed \"checking\"") !=
	    NULL, "a failed reload says what it printed (%s)", d->message);
	/* A long first line (escaped: four bytes each) is cut to leave
	 * the count of the others on the message line. */
	write_file(lua, "print(string.rep('\\1', 250))\nprint('x')\n"
	    "return pw.problem{ devices = 2, microbatches = 6, stages = {\n"
	    "{ f = 1, b = 2, w = 1, act = 4, hold = 2 },\n"
	    "{ f = 1, b = 2, w = 1, act = 4, hold = 2 } } }\n");
	d->mode = TUI_MODE_TIMELINE;
	tui_edit_done(d);
	tap_ok(strlen(d->message) < sizeof d->message - 1 &&
	    strstr(d->message, "\\x01...\" and 1 more line") != NULL,
	    "a long first line is cut before the count of the others (%zu "
	    "bytes)", strlen(d->message));
	tui_free(d);
	/* Nor does a script that fails as the designer opens lose it. */
	write_file(lua, "print('opening')\nerror('boom')\n");
	d = tui_new(lua, 40, 120, &err);
	tap_ok(d == NULL && strstr(err.msg, "boom") != NULL &&
	    strstr(err.msg, "; it printed \"opening\"") != NULL,
	    "a script failing as it opens says what it printed (%s)", err.msg);
	tui_free(d);
	/* A script whose instructions each take longer (a vararg list one
	 * longer at every call) meets the designer's clock of 10 s long
	 * before its instruction budget, on any machine. */
	write_file(lua, "local function g(...) return g(1, ...) end\ng()\n");
	d = tui_new(lua, 40, 120, &err);
	tap_ok(d == NULL && strstr(err.msg, "time limit of 10 s exceeded") !=
	    NULL, "a script running on as the designer opens stops after "
	    "10 s (%s)", err.msg);
	tui_free(d);
	free(text);
	free(lua);
}

static void
test_edit(void)
{
	char *lua = tmp_path("edit.lua"), *text, *fresh = tmp_path("new.lua");
	struct pw_problem *def;
	struct tui *d;
	struct pw_error err;
	unsigned r;

	text = pw_xasprintf(SMALL_LUA, 4);
	write_file(lua, text);
	free(text);
	d = tui_new(lua, 40, 120, &err);
	if (!tap_ok(d != NULL, "a Lua problem opens")) {
		tap_diag("%s", err.msg);
		free(lua);
		free(fresh);
		return;
	}
	tap_ok(pwlua_is_script(d->path) && d->objective == PW_OBJ_SPAN &&
	    d->time_limit == 3, "its objective and time limit are the state's");
	tap_ok(d->npins == 1 && d->pins[0].before.kind == PW_F &&
	    d->pins[0].before.mb == 2 && d->pins[0].after.kind == PW_B &&
	    d->pins[0].after.mb == 1, "its precede pair is a pin");
	r = tui_key(d, 'e');
	tap_ok((r & TUI_DO_EDITOR) && strcmp(d->edit_path, lua) == 0,
	    "e edits the problem's file");

	write_file(lua, "return pw.problem{ devices = 2,\n  microbatches = "
	    "nil + 1 }\n");
	tui_edit_done(d);
	tap_int(d->mode, TUI_MODE_ERROR, "a Lua error opens the error panel");
	tap_ok(d->error_text != NULL && strstr(d->error_text, "edit.lua:2:") !=
	    NULL && strstr(d->error_text, "traceback") != NULL,
	    "with file:line and the traceback");
	tap_ok(d->changes == 0 && pw_plan_problem(d->plan)->microbatches == 4,
	    "the problem and schedule stay");
	tui_key(d, TUI_KEY_ESC);
	tap_int(d->mode, TUI_MODE_TIMELINE, "Esc closes it");
	tap_str(d->message, "error closed: the problem and schedule are as "
	    "they were", "... and the message line no longer says Esc");

	text = pw_xasprintf(SMALL_LUA, 6);
	write_file(lua, text);
	free(text);
	tui_edit_done(d);
	tap_int(pw_plan_problem(d->plan)->microbatches, 6, "a good edit "
	    "reloads the problem");
	tap_ok(d->changes == 1 && strncmp(d->history.undo[0].what, "reload ",
	    7) == 0, "as one change");
	tui_key(d, 'u');
	tap_int(pw_plan_problem(d->plan)->microbatches, 4, "undo: the problem "
	    "before");
	tui_free(d);

	d = open_file(NULL);
	if (d != NULL) {
		r = tui_key(d, 'e');
		tap_ok(d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
		    TUI_PROMPT_NEW_FILE, "e on the default problem asks for a "
		    "file");
		d->prompt.len = 0;
		d->prompt.text[0] = '\0';
		type(d, "x.txt\n");
		tap_ok(d->message_is_error && d->path == NULL,
		    "a name that is neither .lua nor .json is refused");
		tui_key(d, 'e');
		d->prompt.len = 0;
		d->prompt.text[0] = '\0';
		type(d, fresh);
		r = tui_key(d, '\n');
		tap_ok((r & TUI_DO_EDITOR) && d->path && strcmp(d->path, fresh)
		    == 0 && strcmp(d->edit_path, fresh) == 0,
		    "writes it and edits it");
		def = pw_problem_copy(pw_plan_problem(d->plan));
		tui_edit_done(d);
		tap_ok(d->mode == TUI_MODE_TIMELINE && pw_problem_same(
		    pw_plan_problem(d->plan), def) && pw_plan_problem(
		    d->plan)->origin != NULL, "the written file reloads as the "
		    "same problem, from the same model");
		tap_ok(d->history.nundo == 0 && d->edits == 0 &&
		    strncmp(d->source, "family ", 7) == 0, "its schedule "
		    "kept, no change recorded (%s): the problem is the same",
		    d->source);
		tap_ok(strstr(d->message, ": unchanged") != NULL, "... saying "
		    "so: %s", d->message);
		pw_problem_free(def);
		tui_free(d);
	}
	free(lua);
	free(fresh);
}

static void
test_mouse_and_views(void)
{
	struct tui *d = open_file("tui_small.json");
	struct tui_layout l;
	unsigned long changes;
	int row = -1, i, width;
	double col;

	if (d == NULL)
		return;
	tui_layout(d, d->rows, d->cols, &l);
	for (i = 0; i < l.nlanes; i++) {
		if (l.lanes[i].device == 1 && l.lanes[i].kind ==
		    TUI_LANE_COMPUTE)
			row = l.lanes[i].y;
	}
	width = l.timeline.w - l.label_w;
	/* The middle of W(1,0), 10 s to 11 s. */
	col = tui_view_col(&d->view, width, 10.5);
	tui_mouse(d, &l, row, l.timeline.x + l.label_w + (int)col,
	    BUTTON1_PRESSED);
	tap_str(sel_name(d), "W(1,0)", "a click selects the op under it");
	/* Released over F(1,2), 7 s to 8 s. */
	tui_mouse(d, &l, row, l.timeline.x + l.label_w + (int)tui_view_col(
	    &d->view, width, 7.5), BUTTON1_RELEASED);
	check_order(d, 1, "F(1,0) B(1,0) F(1,1) B(1,1) W(1,0) F(1,2) B(1,2) "
	    "F(1,3) B(1,3) W(1,1) W(1,2) W(1,3)", "a drag moves it");
	tap_int((long long)d->changes, 1, "as one edit");
	tui_key(d, 'u');
	changes = d->changes;
	/* Under a panel the mouse does nothing to the hidden timeline, and
	 * a drag begun before the panel opened is over. */
	tui_mouse(d, &l, row, l.timeline.x + l.label_w + (int)col,
	    BUTTON1_PRESSED);
	tui_key(d, '?');
	tap_int(tui_mouse(d, &l, row, l.timeline.x + l.label_w +
	    (int)tui_view_col(&d->view, width, 7.5), BUTTON1_RELEASED), 0,
	    "help: a release does nothing");
	tui_key(d, TUI_KEY_ESC);
	tui_mouse(d, &l, row, l.timeline.x + l.label_w + (int)col,
	    BUTTON1_PRESSED);
	tui_key(d, '?');
	tui_key(d, TUI_KEY_ESC);
	tap_int(tui_mouse(d, &l, row, l.timeline.x + l.label_w +
	    (int)tui_view_col(&d->view, width, 7.5), BUTTON1_RELEASED), 0,
	    "a drag across a mode change is over");
	tui_key(d, 't');
	select_op(d, "F(1,0)");
	tap_int(tui_mouse(d, &l, row, l.timeline.x + l.label_w + (int)col,
	    BUTTON1_PRESSED), 0, "form: a click selects nothing");
	tap_str(sel_name(d), "F(1,0)", "... the selection stays");
	tap_int(tui_mouse(d, &l, 0, 0, BUTTON4_PRESSED), 0,
	    "... nor does the wheel zoom");
	tui_key(d, TUI_KEY_ESC);
	tap_int((long long)d->changes, (long long)changes,
	    "no change under the panels");
	tap_int(tui_mouse(d, &l, 0, 0, BUTTON4_PRESSED), TUI_DRAW_TIMELINE,
	    "the timeline's wheel zooms again");
	tap_near(d->view.span, 8.5, 0, "the wheel zooms");
	tui_layout_free(&l);

	tui_key(d, 'c');
	tap_int(d->mode, TUI_MODE_COMPARE, "c opens the compare view");
	tap_str(d->message, "comparing family zb-h2 with current schedule "
	    "(Tab switches, Left and Right change a slot's source, Esc "
	    "closes)", "the message line says what it compares, and how to "
	    "change it");
	tui_key(d, '\t');
	tap_int(d->compare.focus, 1, "Tab: the other slot");
	tui_key(d, KEY_RIGHT);
	tui_key(d, 'F');
	tap_ok(d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
	    TUI_PROMPT_COMPARE_FILE, "F asks for a schedule file");
	tui_key(d, TUI_KEY_ESC);
	tui_key(d, TUI_KEY_ESC);
	tap_int(d->mode, TUI_MODE_TIMELINE, "Esc leaves the compare view");
	tap_str(d->message, "compare closed (c opens it again)", "and the "
	    "message line no longer speaks of its keys");
	tui_key(d, 'c');
	tui_key(d, KEY_LEFT);
	tap_int(d->compare.source[0], 3, "Left: the top slot (the best "
	    "family, zb-h2) shows the family before it, zb-h1");
	tap_ok(strncmp(d->message, "comparing family zb-h1 with ", 28) == 0,
	    "and the message line says so (%s)", d->message);
	tui_key(d, TUI_KEY_ESC);

	/* The iteration limit makes the sweep's optimizer series end at the
	 * same point on every run. */
	d->iteration_limit = 200;
	tui_key(d, 'm');
	tap_int(d->mode, TUI_MODE_SWEEP, "m opens the memory sweep");
	for (i = 0; i < 600000 && !atomic_load(&d->sweep->job.finished); i++) {
		usleep(1000);
		tui_sweep_tick(d);
	}
	tap_ok(atomic_load(&d->sweep->job.finished), "the sweep ends");
	tap_ok(d->sweep->limit == d->sweep->sweep->nlimits - 1 &&
	    d->sweep->series == 4, "the cursor: no limit, the family shown");
	tui_key(d, KEY_LEFT);
	tap_int((long long)d->sweep->limit,
	    (long long)d->sweep->sweep->nlimits - 2, "Left: a smaller limit");
	tui_key(d, KEY_RIGHT);
	tui_key(d, KEY_UP);
	tap_int((long long)d->sweep->series, 3, "Up: the previous series");
	tui_key(d, KEY_DOWN);
	tap_int((long long)d->sweep->series, 4, "Down: the next");
	changes = d->changes;
	tui_key(d, '\n');
	tap_ok(d->mode == TUI_MODE_TIMELINE && d->changes == changes + 1 &&
	    strncmp(d->source, "sweep point ", 12) == 0, "Enter loads the "
	    "point as one change: %s", d->source);
	tui_key(d, 'u');
	tap_str(d->source, "family zb-h2", "undo: the schedule before");
	tui_key(d, 'm');
	tui_key(d, TUI_KEY_ESC);
	tap_int(d->mode, TUI_MODE_TIMELINE, "Esc leaves it");
	tui_free(d);
}

static void
test_keys_print(void)
{
	char *path = tmp_path("keys.txt"), *text, *line;
	FILE *fp = fopen(path, "w");
	size_t n = 0, i, j, k;

	if (fp == NULL)
		return;
	tui_keys_print(fp);
	fclose(fp);
	text = test_read_file(path);
	for (line = text; line && *line; line = strchr(line, '\n') + 1)
		n++;
	tap_int((long long)n, (long long)tui_nkeys, "one line per row");
	tap_ok(text && strncmp(text, "Left h\ttimeline\tselect the previous op "
	    "of the device\n", 46) == 0, "KEYS, MODES and HELP by tabs");
	tap_ok(text && strstr(text, "\nD\ttimeline\tdesign search: split, "
	    "layout and schedule\n") != NULL &&
	    strstr(text, "\nEnter\tdesign\topen the candidate: its schedule "
	    "with its problem\n") != NULL, "D and the design search's keys "
	    "are listed");
	/* No key is bound twice in one mode. */
	for (i = 0; i < tui_nkeys; i++)
		for (j = i + 1; j < tui_nkeys; j++)
			for (k = 0; k < 4 && tui_keys[i].keys[k]; k++) {
				int m;

				for (m = 0; m < 4 && tui_keys[j].keys[m]; m++)
					if (tui_keys[i].keys[k] ==
					    tui_keys[j].keys[m] &&
					    (tui_keys[i].modes &
					    tui_keys[j].modes))
						tap_ok(false, "%s and %s share "
						    "a key", tui_keys[i].names,
						    tui_keys[j].names);
			}
	free(text);
	free(path);
}

/* The message line's hints come from the table's rows of the keys that
 * act in the mode (tui_keys_hints asserts that each does). */
static void
test_key_hints(void)
{
	static const struct {
		enum tui_mode mode;
		const char *want;
	} cases[] = {
		{ TUI_MODE_TIMELINE, "? help  q quit  arrows select  +/- zoom  "
		  "< > move  p pin  u undo  o optimize  f family  c compare  "
		  "m sweep  s save  D design" },
		{ TUI_MODE_HELP, "Up/Down scroll  Esc closes" },
		{ TUI_MODE_FORM, "Tab next field  Enter edits  Esc closes" },
		{ TUI_MODE_COMPARE, "Tab other schedule  Left/Right source  "
		  "F file  Esc closes" },
		{ TUI_MODE_SWEEP, "Left/Right limit  Up/Down series  Enter "
		  "opens  b axis  Esc closes" },
		{ TUI_MODE_PLANNER, "Up/Down select  Enter opens  Esc closes" },
		{ TUI_MODE_ERROR, "Esc closes" },
	};
	char buf[512];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tui_keys_hints(buf, sizeof buf, cases[i].mode, false);
		tap_str(buf, cases[i].want, "hints of mode %d", cases[i].mode);
	}
	tui_keys_hints(buf, sizeof buf, TUI_MODE_TIMELINE, true);
	tap_str(buf, "? help  o optimize  t constraints  q quit", "the "
	    "greeting's hints");
	tui_keys_hints(buf, 15, TUI_MODE_TIMELINE, false);
	tap_str(buf, "? help  q quit", "hints that fit the buffer, whole");
	tui_keys_hints(buf, 14, TUI_MODE_TIMELINE, false);
	tap_str(buf, "? help", "a hint cut short is left out");
}

/* Opens prompt KIND, types TEXT and Enter; returns what it asked. */
static unsigned
answer(struct tui *d, enum tui_prompt_kind kind, const char *text)
{
	tui_prompt_open(d, kind, "? ", "");
	type(d, text);
	return tui_key(d, '\n');
}

/* "-" is stdin or stdout to the readers and pw_outfile: the designer's
 * keyboard and screen, so it is never a file name there. */
static void
test_dash(void)
{
	static const enum tui_prompt_kind kinds[] = { TUI_PROMPT_SAVE_AS,
	    TUI_PROMPT_EXPORT, TUI_PROMPT_NEW_FILE, TUI_PROMPT_COMPARE_FILE };
	struct tui *d = open_file("tui_small.json");
	struct pw_error err;
	char *fifo, *want;
	size_t i;

	if (d == NULL)
		return;
	select_op(d, "F(0,1)");
	tui_key(d, '>');
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		tap_int(answer(d, kinds[i], "-") & TUI_DO_EDITOR, 0,
		    "prompt %zu: no editor on -", i);
		tap_str(d->message, "\"-\" is no file name here: the screen "
		    "is the designer's (name a file)", "prompt %zu refuses -",
		    i);
		tap_ok(tui_unsaved(d) && d->save_path == NULL && d->path != NULL &&
		    strcmp(d->path, "-") != 0, "prompt %zu: nothing saved or "
		    "renamed", i);
	}
	tap_int(tui_save(d, "-", &err), PW_ERR_INPUT, "tui_save refuses -");
	tap_str(err.msg, "-: not saved: \"-\" is stdout, the designer's "
	    "screen (name a file)", "... saying why");
	tap_ok(tui_new("-", 40, 120, &err) == NULL, "tui_new refuses -");
	tap_str(err.msg, "-: the designer reads no problem from stdin (name a"
	    " file)", "... saying why");

	/* Nor a FIFO, whose opening would wait for another program (the
	 * test would hang where the check is missing). */
	fifo = tmp_path("fifo");
	if (tap_int(mkfifo(fifo, 0600), 0, "a FIFO to refuse")) {
		for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
			answer(d, kinds[i], fifo);
			want = pw_xasprintf("%s: not a regular file (a FIFO "
			    "or a device would hold the designer until "
			    "another program opened it): name a file", fifo);
			tap_str(d->message, want, "prompt %zu refuses a FIFO",
			    i);
			free(want);
		}
		want = pw_xasprintf("svg %s", fifo);
		answer(d, TUI_PROMPT_EXPORT, want);
		free(want);
		want = pw_xasprintf("export: %s: not a regular file (a FIFO "
		    "or a device would hold the designer until another "
		    "program opened it): name a file", fifo);
		tap_str(d->message, want, "export refuses a FIFO after its "
		    "format");
		free(want);
		tap_int(tui_save(d, fifo, &err), PW_ERR_INPUT, "tui_save "
		    "refuses a FIFO");
		tap_ok(strstr(err.msg, ": not saved: not a regular file") !=
		    NULL, "... saying why: %s", err.msg);
		/* The schedule file replaced by a FIFO: s asks no replace
		 * question, it says why it does not write. */
		free(d->save_path);
		d->save_path = pw_xstrdup(fifo);
		tui_key(d, 's');
		want = pw_xasprintf("%s: not saved: not a regular file (a FIFO "
		    "or a device would hold the designer until another "
		    "program opened it): name a file", fifo);
		tap_str(d->message, want, "s refuses a FIFO");
		tap_ok(d->mode != TUI_MODE_PROMPT && tui_unsaved(d),
		    "... asking nothing, saving nothing");
		free(want);
		unlink(fifo);
	}
	free(fifo);
	tui_free(d);
}

/* A pin the schedule breaks already refuses no move; one that holds
 * refuses the move that would break it. */
static void
test_broken_pin(void)
{
	struct tui *d = open_file("tui_small.json");
	struct pw_pin pin;

	if (d == NULL)
		return;
	pin.before = (struct pw_op){ PW_W, 0, 3 };
	pin.after = (struct pw_op){ PW_F, 0, 0 };
	d->pins = pw_xmalloc(sizeof *d->pins);
	d->pins[0] = pin;
	d->npins = 1;
	select_op(d, "F(0,1)");
	tui_key(d, '>');
	tap_str(d->message, "move F(0,1) later: makespan 17 s",
	    "a pin broken already does not refuse a move");
	tui_key(d, 'u');
	d->pins[0].before = (struct pw_op){ PW_F, 0, 1 };
	d->pins[0].after = (struct pw_op){ PW_F, 0, 2 };
	tui_key(d, '>');
	tap_str(d->message, "move F(0,1) later refused: it would break the "
	    "pin F(0,1) before F(0,2) (P removes it)",
	    "a pin that holds refuses the move that breaks it");
	/* Two microbatches: F(0,2) is gone, and so is the pin, which the
	 * change says (undo brings both back). */
	set_field(d, "microbatches", "2", NULL);
	tap_ok(d->npins == 0 && strstr(d->message, "microbatches 2 (1 pin "
	    "dropped: its ops are gone)") == d->message, "fewer microbatches "
	    "drop the pin, saying so (%s)", d->message);
	tui_key(d, 'u');
	tap_int((long long)d->npins, 1, "undo brings the pin back");
	tui_free(d);
}

/* "No limit" reaches the model's split: a re-split afterwards has none,
 * for all devices at once or one device at a time. */
static void
test_form_no_limit(void)
{
	struct tui *d = open_file(NULL);
	int i;

	if (d == NULL)
		return;
	set_field(d, "memory limit", "20 GiB", NULL);
	set_field(d, "memory limit", "inf", NULL);
	set_field(d, "devices", "1", NULL);
	tap_ok(pw_plan_problem(d->plan)->devices == 1 &&
	    isinf(pw_plan_problem(d->plan)->memory[0].limit),
	    "devices 1 after inf: one device, no limit");
	tui_undo(d);
	tui_undo(d);
	for (i = 0; i < pw_plan_problem(d->plan)->devices; i++) {
		char label[64];

		snprintf(label, sizeof label, "memory limit of device %d", i);
		set_field(d, label, "inf", NULL);
	}
	set_field(d, "devices", "1", NULL);
	tap_ok(pw_plan_problem(d->plan)->devices == 1 &&
	    isinf(pw_plan_problem(d->plan)->memory[0].limit),
	    "devices 1 after inf on each device: one device, no limit");
	tui_free(d);
}

/* Save-as of NAME refused with the message NAME then WHY, saving
 * nothing. */
static void
save_as_refused(struct tui *d, const char *name, const char *why)
{
	char *want = pw_xasprintf("%s%s", name, why);

	answer(d, TUI_PROMPT_SAVE_AS, name);
	tap_str(d->message, want, "save as %s refused", name);
	tap_ok(d->save_path == NULL, "... and saves nothing");
	free(want);
}

/* The new-file prompt never replaces a file; save-as never writes
 * schedule JSON over a script or the problem file. */
static void
test_file_names(void)
{
	struct tui *d = open_file(NULL);
	char *taken = tmp_path("taken.lua"), *want, *text;
	char *problem = pw_xasprintf("%s/tui_small.json", testdata);
	FILE *fp;

	if (d == NULL)
		return;
	if ((fp = fopen(taken, "w")) != NULL) {
		fputs("-- mine\n", fp);
		fclose(fp);
	}
	tap_int(answer(d, TUI_PROMPT_NEW_FILE, taken) & TUI_DO_EDITOR, 0,
	    "new file: an existing name opens no editor");
	want = pw_xasprintf("%s exists: choose another name", taken);
	tap_str(d->message, want, "... and says so");
	free(want);
	text = test_read_file(taken);
	tap_str(text, "-- mine\n", "... leaving the file as it was");
	tap_ok(d->path == NULL, "... and the problem without a file");
	free(text);
	save_as_refused(d, taken, ": a schedule is saved as JSON: name a .json "
	    "file");
	tui_free(d);

	d = tui_new(problem, 40, 120, &(struct pw_error){ 0 });
	if (tap_ok(d != NULL, "a problem file opens")) {
		save_as_refused(d, problem, " is the problem file: choose "
		    "another name");
		tui_free(d);
	}
	free(problem);
	free(taken);
}

/* Save-as and export ask before they write over a file the designer
 * has not written itself: n leaves it as it was, y writes it, and the
 * file just written is written again without a question. */
static void
test_replace_asks(void)
{
	struct tui *d = open_file("tui_small.json");
	char *mine = tmp_path("mine.json"), *pic = tmp_path("mine.svg");
	char *other = tmp_path("other.json");
	char *line = pw_xasprintf("svg %s", pic), *text;
	FILE *fp;

	if (d == NULL)
		goto out;
	if ((fp = fopen(mine, "w")) != NULL) {
		fputs("keep\n", fp);
		fclose(fp);
	}
	if ((fp = fopen(pic, "w")) != NULL) {
		fputs("keep\n", fp);
		fclose(fp);
	}
	answer(d, TUI_PROMPT_SAVE_AS, mine);
	tap_ok(d->mode == TUI_MODE_PROMPT &&
	    d->prompt.kind == TUI_PROMPT_REPLACE &&
	    strstr(d->prompt.question, "exists: replace it? (y / n)") != NULL,
	    "save as an existing file asks first");
	tui_key(d, 'x');
	tap_ok(d->prompt.kind == TUI_PROMPT_REPLACE && d->mode ==
	    TUI_MODE_PROMPT, "... other keys leave the question open");
	tui_key(d, 'n');
	tap_str(d->message, "not written: the file is as it was", "n: not "
	    "written");
	text = test_read_file(mine);
	tap_str(text, "keep\n", "... and the file is as it was");
	free(text);
	tap_ok(d->save_path == NULL && d->mode == TUI_MODE_TIMELINE,
	    "... no file to save to, back at the timeline");
	answer(d, TUI_PROMPT_SAVE_AS, mine);
	tui_key(d, 'y');
	tap_ok(d->save_path != NULL && strcmp(d->save_path, mine) == 0,
	    "y: saved, the file is the schedule's now");
	text = test_read_file(mine);
	tap_ok(text != NULL && strstr(text, "pipewright.schedule.v1") !=
	    NULL, "... holding the schedule");
	free(text);
	answer(d, TUI_PROMPT_SAVE_AS, mine);
	tap_ok(d->mode == TUI_MODE_TIMELINE && strncmp(d->message, "saved ",
	    6) == 0, "saving to it again asks nothing");

	/* Another program replaced it (a new file renamed over it): s asks. */
	if ((fp = fopen(other, "w")) != NULL) {
		fputs("other\n", fp);
		fclose(fp);
	}
	rename(other, mine);
	tui_key(d, 's');
	tap_ok(d->prompt.kind == TUI_PROMPT_REPLACE && d->mode ==
	    TUI_MODE_PROMPT && strstr(d->prompt.question, "changed on disk "
	    "since it was read: replace it? (y / n)") != NULL,
	    "s over a file replaced since asks first: %s",
	    d->prompt.question);
	tui_key(d, 'n');
	text = test_read_file(mine);
	tap_str(text, "other\n", "n: the other program's file stays");
	free(text);
	tui_key(d, 's');
	tui_key(d, 'y');
	tui_key(d, 's');
	tap_ok(d->mode == TUI_MODE_TIMELINE && strncmp(d->message, "saved ",
	    6) == 0, "y saves; s then asks nothing");
	/* Written in place (its time changed): s asks too. */
	utimensat(AT_FDCWD, mine, (const struct timespec[2]){ { 0, 0 },
	    { 0, 0 } }, 0);
	tui_key(d, 's');
	tap_ok(d->prompt.kind == TUI_PROMPT_REPLACE && d->mode ==
	    TUI_MODE_PROMPT, "s over a file written since asks first");
	tui_key(d, TUI_KEY_ESC);

	answer(d, TUI_PROMPT_EXPORT, line);
	tap_ok(d->prompt.kind == TUI_PROMPT_REPLACE &&
	    d->mode == TUI_MODE_PROMPT, "export over a file asks first");
	tui_key(d, TUI_KEY_ESC);
	text = test_read_file(pic);
	tap_str(text, "keep\n", "Esc: the file is as it was");
	free(text);
	answer(d, TUI_PROMPT_EXPORT, line);
	tui_key(d, 'Y');
	text = test_read_file(pic);
	tap_ok(text != NULL && strstr(text, "<svg") != NULL,
	    "Y: exported over it");
	free(text);
	answer(d, TUI_PROMPT_EXPORT, line);
	tap_ok(d->mode == TUI_MODE_TIMELINE && strncmp(d->message,
	    "exported ", 9) == 0, "exporting to it again asks nothing");
	if ((fp = fopen(pic, "w")) != NULL) {
		fputs("mine now\n", fp);
		fclose(fp);
	}
	answer(d, TUI_PROMPT_EXPORT, line);
	tap_ok(d->prompt.kind == TUI_PROMPT_REPLACE && d->mode ==
	    TUI_MODE_PROMPT && strstr(d->prompt.question, "changed on disk")
	    != NULL, "unless another program wrote it since: %s",
	    d->prompt.question);
	tui_key(d, 'n');

	/* Ctrl-U empties the line, as in a shell. */
	tui_prompt_open(d, TUI_PROMPT_FIND, "? ", "F(0,1)");
	tui_key(d, TUI_KEY_CTRL('u'));
	tap_ok(d->prompt.len == 0 && d->prompt.text[0] == '\0',
	    "Ctrl-U empties the answer");
	tui_key(d, TUI_KEY_ESC);

	/* The quit prompt's save, over a file, quits once it is written
	 * (its answer starts as schedule.json: Ctrl-U clears it). */
	tui_free(d);
	if ((d = open_file("tui_small.json")) == NULL)
		goto out;
	select_op(d, "F(0,1)");
	tui_key(d, '>');
	if ((fp = fopen(mine, "w")) != NULL) {
		fputs("keep\n", fp);
		fclose(fp);
	}
	tui_key(d, 'q');
	tui_key(d, 's');
	tui_key(d, TUI_KEY_CTRL('u'));
	type(d, mine);
	tap_int(tui_key(d, '\n') & TUI_DO_QUIT, 0, "quit, save as an "
	    "existing file: no quitting yet");
	tap_int(tui_key(d, 'y') & TUI_DO_QUIT, TUI_DO_QUIT, "... y saves "
	    "and quits");
	tap_ok(!tui_unsaved(d), "... with the changes saved");

	tui_free(d);
out:
	free(line);
	free(other);
	free(pic);
	free(mine);
}

/* Below 80x24 the screen shows only its notice and the input line: q
 * and the keys that act everywhere act, the others wait unseen. */
static void
test_too_small(void)
{
	struct tui *d = open_file("tui_small.json");
	size_t nundo;
	int family;

	if (d == NULL)
		return;
	select_op(d, "F(0,1)");
	tui_key(d, '>');
	nundo = d->history.nundo;
	family = d->family;
	d->cols = 79;
	tap_int(tui_key(d, 'f') | tui_key(d, 'u') | tui_key(d, '>'), 0,
	    "at 79 columns f, u and > wait");
	tap_ok(d->family == family && d->history.nundo == nundo,
	    "... changing nothing");
	tap_int(tui_key(d, TUI_KEY_CTRL('l')) & TUI_DO_REPAINT,
	    TUI_DO_REPAINT, "Ctrl-L repaints");
	tui_key(d, 'q');
	tap_ok(d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
	    TUI_PROMPT_QUIT, "q asks about the unsaved change");
	tui_key(d, TUI_KEY_ESC);
	tap_ok(d->mode == TUI_MODE_TIMELINE, "Esc answers it: not quitting");
	d->cols = 120;
	tui_key(d, '?');
	d->cols = 79;
	tui_key(d, 'q');
	tap_ok(d->mode == TUI_MODE_PROMPT && d->prompt.kind ==
	    TUI_PROMPT_QUIT, "q from a panel there quits too, as the notice "
	    "says: it asks");
	tui_key(d, TUI_KEY_ESC);
	d->cols = 120;
	tui_key(d, 'u');
	tap_ok(d->history.nundo == nundo - 1, "at 120 columns u undoes");
	tui_free(d);
}

/* The recovery file is the designer's: export and save-as refuse it,
 * and one that cannot be restored is moved aside, not left for this
 * session's first change to replace. */
static void
test_recovery_guarded(void)
{
	char *problem = tmp_path("guard.json");
	char *src = pw_xasprintf("%s/tui_small.json", testdata);
	char *rec = tui_recover_name(NULL, problem), *aside, *text, *line, *want;
	struct pw_error err;
	struct tui *d;
	FILE *fp;

	text = test_read_file(src);
	if (text != NULL && (fp = fopen(problem, "w")) != NULL) {
		fputs(text, fp);
		fclose(fp);
	}
	free(text);
	if (!tap_ok((d = tui_new(problem, 40, 120, &err)) != NULL,
	    "a copied problem opens"))
		goto out;
	/* Before it exists, by another spelling and through a link. */
	line = pw_xasprintf("%s/./.guard.json.pw-recover", tmpdir);
	answer(d, TUI_PROMPT_SAVE_AS, line);
	tap_ok(strstr(d->message, "is the recovery file") != NULL &&
	    access(rec, F_OK) != 0, "save-as refuses the recovery file to "
	    "be, by another name (%s)", d->message);
	free(line);
	line = tmp_path("to-recovery.json");
	if (symlink(rec, line) == 0) {
		answer(d, TUI_PROMPT_SAVE_AS, line);
		tap_ok(strstr(d->message, "is the recovery file") != NULL,
		    "... and through a link to it (%s)", d->message);
		unlink(line);
	}
	free(line);
	line = tmp_path("a-directory");
	if (mkdir(line, 0700) == 0) {
		answer(d, TUI_PROMPT_SAVE_AS, line);
		tap_ok(d->mode == TUI_MODE_TIMELINE && strstr(d->message,
		    "Is a directory") != NULL, "a directory: refused, no "
		    "question first (%s)", d->message);
		rmdir(line);
	}
	free(line);
	select_op(d, "F(0,1)");
	tui_key(d, '>');
	tui_recover_write(d);
	line = pw_xasprintf("chrome %s", rec);
	answer(d, TUI_PROMPT_EXPORT, line);
	free(line);
	tap_ok(strstr(d->message, "is a file the designer reads or saves to")
	    != NULL, "export refuses the recovery file (%s)", d->message);
	answer(d, TUI_PROMPT_SAVE_AS, rec);
	tap_ok(strstr(d->message, "is the recovery file") != NULL,
	    "save-as refuses it (%s)", d->message);
	text = test_read_file(rec);
	tap_ok(text != NULL && strstr(text, "pipewright.schedule.v1") != NULL,
	    "... which holds the change still");
	free(text);
	tui_free(d);

	if ((fp = fopen(rec, "w")) != NULL) {
		fputs("{}\n", fp);
		fclose(fp);
	}
	if ((d = tui_new(problem, 40, 120, &err)) == NULL)
		goto out;
	tui_prompt_open(d, TUI_PROMPT_RESTORE, "restore? ", "");
	tui_key(d, 'y');
	aside = pw_xasprintf("%s~", rec);
	want = pw_xasprintf("recovery file kept as %s, not restored: ", aside);
	tap_ok(strncmp(d->message, want, strlen(want)) == 0 && access(rec,
	    F_OK) != 0 && access(aside, F_OK) == 0, "a recovery file that "
	    "does not read is moved aside: %s", d->message);
	unlink(aside);
	free(want);
	/* A FIFO of its name is set aside, never opened (it would wait). */
	if (mkfifo(rec, 0600) == 0) {
		tui_prompt_open(d, TUI_PROMPT_RESTORE, "restore? ", "");
		tui_key(d, 'y');
		tap_ok(strstr(d->message, "not restored: not a regular file") !=
		    NULL && access(aside, F_OK) == 0, "a FIFO in its place is "
		    "moved aside unopened: %s", d->message);
		unlink(aside);
	}
	free(aside);
	tui_free(d);

	/* torch-csv has no transfers: the export says what it left out. */
	if ((d = open_file(NULL)) == NULL)
		goto out;
	set_field(d, "family", "po-h", NULL);
	text = tmp_path("po.csv");
	line = pw_xasprintf("torch-csv %s", text);
	free(text);
	answer(d, TUI_PROMPT_EXPORT, line);
	tap_ok(strstr(d->message, "which has no offload or reload: ") != NULL &&
	    strstr(d->message, "transfers left out (torch-csv-offload keeps "
	    "them)") != NULL, "torch-csv says what it left out: %s",
	    d->message);
	free(line);
	tui_recover_remove(d);
	tui_free(d);
out:
	unlink(rec);
	free(rec);
	free(src);
	free(problem);
}

/* Undo and redo back to what the file holds leave nothing unsaved, as
 * an editor has it. */
static void
test_clean_again(void)
{
	struct tui *d = open_file("tui_small.json");
	char *saved = tmp_path("clean.json");

	if (d == NULL)
		goto out;
	select_op(d, "F(0,1)");
	tui_key(d, '>');
	tap_ok(tui_unsaved(d), "a move: unsaved");
	tui_key(d, 'u');
	tap_ok(!tui_unsaved(d), "undone: back to what was loaded, nothing unsaved");
	tui_key(d, TUI_KEY_CTRL('r'));
	tap_ok(tui_unsaved(d), "redone: unsaved again");
	answer(d, TUI_PROMPT_SAVE_AS, saved);
	tap_ok(!tui_unsaved(d), "saved");
	tui_key(d, 'u');
	tap_ok(tui_unsaved(d), "undone past the save: unsaved");
	tui_key(d, TUI_KEY_CTRL('r'));
	tap_ok(!tui_unsaved(d), "redone to the save: nothing unsaved");
	tap_int(tui_key(d, 'q') & TUI_DO_QUIT, TUI_DO_QUIT, "q quits at once");
	/* The design search changes the split the pins name. */
	select_op(d, "F(0,0)");
	tui_key(d, 'p');
	select_op(d, "F(0,1)");
	tui_key(d, 'p');
	tui_key(d, 'D');
	tap_ok(d->mode == TUI_MODE_TIMELINE && d->planner == NULL &&
	    strncmp(d->message, "design search: the pins name ops of this "
	    "split", 41) == 0, "D with pins: refused, saying why (%s)",
	    d->message);
	tui_free(d);
out:
	free(saved);
}

/* A copy of tui_small.json in the temporary directory as NAME: its path,
 * which the caller frees. */
static char *
small_copy(const char *name)
{
	char *path = tmp_path(name);
	char *src = pw_xasprintf("%s/tui_small.json", testdata);
	char *text = test_read_file(src);
	FILE *fp;

	if (text != NULL && (fp = fopen(path, "w")) != NULL) {
		fputs(text, fp);
		fclose(fp);
	}
	free(text);
	free(src);
	return path;
}

/* Once the schedule has a file, the recovery file is beside it. */
static void
test_recover_follows(void)
{
	char *problem = small_copy("follow.json"), *sched = tmp_path("s.json");
	char *old_rec = tui_recover_name(NULL, problem), *new_rec;
	struct pw_error err;
	struct tui *d;

	new_rec = tui_recover_name(NULL, sched);
	d = tui_new(problem, 40, 120, &err);
	if (tap_ok(d != NULL, "a copied problem opens")) {
		select_op(d, "F(0,1)");
		tui_key(d, '>');
		tui_recover_write(d);
		tap_ok(access(old_rec, F_OK) == 0, "recovery beside the problem");
		answer(d, TUI_PROMPT_SAVE_AS, sched);
		tap_ok(!tui_unsaved(d) && access(old_rec, F_OK) != 0,
		    "saved as: the problem's recovery file is gone");
		tui_key(d, '<');
		tui_recover_write(d);
		tap_ok(access(new_rec, F_OK) == 0 && access(old_rec, F_OK) != 0,
		    "the next change's recovery file is beside the schedule");
		tui_recover_remove(d);
		tui_free(d);
	}
	free(old_rec);
	free(new_rec);
	free(problem);
	free(sched);
}

/* Two designers of one file: the first to write its recovery file holds
 * the lock beside it; the second may not claim it, writes nothing over
 * it and removes nothing; once the first has gone (its lock file with
 * it, its recovery file left as a killed designer's is), the second's
 * next change keeps that file aside and writes its own. */
static void
test_recover_locked(void)
{
	char *problem = small_copy("locked.json"), *text;
	char *other = tmp_path("locked-other.json");
	char *rec = tui_recover_name(NULL, problem), *lock, *first, *kept;
	struct pw_error err;
	struct tui *a, *b, *c;

	lock = pw_xasprintf("%s.lock", rec);
	a = tui_new(problem, 40, 120, &err);
	b = tui_new(problem, 40, 120, &err);
	if (!tap_ok(a != NULL && b != NULL, "one file, two designers"))
		goto out;
	select_op(a, "F(0,1)");
	tui_key(a, '>');
	tui_recover_write(a);
	first = test_read_file(rec);
	tap_ok(first != NULL && access(lock, F_OK) == 0, "the first writes "
	    "the recovery file and holds the lock beside it");
	tap_ok(!tui_recover_claim(b, rec), "the second may not claim it");
	select_op(b, "F(0,2)");
	tui_key(b, '>');
	tui_recover_write(b);
	kept = test_read_file(rec);
	tap_ok(first != NULL && kept != NULL && strcmp(first, kept) == 0,
	    "the second's change leaves the first's file as it was");
	text = pw_xasprintf("recovery file not written: another designer is "
	    "editing with %s (s saves)", rec);
	tap_str(b->message, text, "and says why");
	free(text);
	free(kept);
	b->recover_path = pw_xstrdup(rec);
	tui_recover_remove(b);
	tap_ok(access(rec, F_OK) == 0, "nor does its quit remove it");
	/* A third, saved under another name, writes its recovery file
	 * there and leaves the first's, whose name its start had taken. */
	c = tui_new(problem, 40, 120, &err);
	if (c != NULL) {
		c->recover_path = pw_xstrdup(rec);
		answer(c, TUI_PROMPT_SAVE_AS, other);
		select_op(c, "F(0,2)");
		tui_key(c, '>');
		tui_recover_write(c);
		kept = test_read_file(rec);
		tap_ok(first != NULL && kept != NULL && strcmp(first, kept) ==
		    0 && c->recover_path != NULL && strcmp(c->recover_path,
		    rec) != 0 && access(c->recover_path, F_OK) == 0,
		    "a third, saved as another file, leaves the first's alone");
		free(kept);
		tui_recover_remove(c);
		tui_free(c);
	}
	tui_free(a);
	a = NULL;
	tap_ok(access(rec, F_OK) == 0 && access(lock, F_OK) != 0, "the first "
	    "gone, its recovery file stays and its lock file goes");
	tui_recover_write(b);
	kept = test_read_file(rec);
	tap_ok(kept != NULL && first != NULL && strcmp(first, kept) != 0 &&
	    access(lock, F_OK) == 0, "the second's next write is its own, "
	    "under its lock");
	free(kept);
	text = pw_xasprintf("%s~", rec);
	kept = test_read_file(text);
	tap_ok(kept != NULL && first != NULL && strcmp(first, kept) == 0,
	    "the first's kept aside as NAME~");
	tap_ok(strstr(b->message, "not restored: another session's, left "
	    "when it ended") != NULL, "saying so (%s)", b->message);
	unlink(text);
	free(text);
	free(kept);
	free(first);
	tui_recover_remove(b);
	tap_ok(access(rec, F_OK) != 0, "and its quit removes it");
out:
	tui_free(a);
	tui_free(b);
	free(lock);
	free(rec);
	free(other);
	free(problem);
}

/* What tui_busy had drawn, as the loop's busy_draw would. */
static char busy_seen[512];

static bool
busy_record(struct tui *d, bool stop)
{
	(void)stop;
	snprintf(busy_seen, sizeof busy_seen, "%s", d->message);
	return false;
}

/* The busy messages seen, and Esc typed as the third family is built. */
static size_t busy_calls;

static bool
busy_escape(struct tui *d, bool stop)
{
	busy_record(d, stop);
	return stop && ++busy_calls == 3;
}

/* The form's counts stop at the designer's limits, and a slow step
 * shows what it does first. */
static void
test_form_caps(void)
{
	struct tui *d = open_file(NULL);
	unsigned long changes;

	if (d == NULL)
		return;
	set_field(d, "devices", "257", "devices: 257 is more than the "
	    "designer builds (at most 256)");
	set_field(d, "chunks per device", "17", "chunks per device: 17 is "
	    "more than the designer builds (at most 16)");
	set_field(d, "microbatches", "65536", "microbatches: 65536 is more "
	    "than the designer builds (at most 4096)");
	tap_int((long long)d->changes, 0, "refused: nothing changed");
	d->busy_draw = busy_record;
	set_field(d, "microbatches", "12", NULL);
	tap_str(busy_seen, "building microbatches 12 ...",
	    "a form change is announced before it builds");
	busy_seen[0] = '\0';
	tui_key(d, 'f');
	tap_ok(strncmp(busy_seen, "building family ", 16) == 0,
	    "f is announced: %s", busy_seen);

	/* Esc while the compare view looks for the best family stops it
	 * there: no view, nothing built after, nothing changed. */
	d->busy_draw = busy_escape;
	changes = d->changes;
	tui_key(d, 'c');
	tap_int((long long)busy_calls, 3, "compare: stopped at the third "
	    "family's announcement");
	tap_str(busy_seen, "finding the best family: 2 of 18 built, building "
	    "1f1b-interleaved (Esc stops) ...", "which says how far it got "
	    "and how to stop");
	tap_ok(d->mode == TUI_MODE_TIMELINE && d->compare.plan[0] == NULL &&
	    d->compare.plan[1] == NULL && d->changes == changes,
	    "Esc there: no compare view, nothing changed");
	tap_str(d->message, "compare: stopped before it found the best "
	    "family (c opens it again)", "the message line says so");
	d->busy_draw = busy_record;
	tui_key(d, 'c');
	tap_ok(d->mode == TUI_MODE_COMPARE && d->compare.plan[0] != NULL,
	    "c again opens it");
	tui_free(d);
}

/* D on a problem with given stages: the planner searches the schedule
 * only, its one candidate says the split is fixed, and opening it is one
 * undoable change of the same problem. */
static void
test_design_fixed(void)
{
	struct tui *d = open_file("tui_small.json");
	const struct pw_planner_candidate *c;

	if (d == NULL)
		return;
	d->iteration_limit = 2000;
	tui_key(d, 'D');
	while (tui_planner_running(d)) {
		tui_planner_tick(d);
		sched_yield();
	}
	if (!tap_ok(d->mode == TUI_MODE_PLANNER && d->planner->rc == PW_OK,
	    "D: the design search ends with candidates"))
		goto out;
	c = &d->planner->result.cand[0];
	tap_ok(d->planner->result.split_fixed && d->planner->result.ncand == 1 &&
	    c->design.layers_per_stage == NULL && c->makespan == 17 &&
	    c->gap == 0, "given stages: one candidate, the split fixed, 17 s "
	    "at gap 0");
	tui_key(d, '\n');
	tap_str(d->source, "design split given, 1 chunk, -, zb-h2",
	    "Enter opens it");
	tap_ok(d->mode == TUI_MODE_TIMELINE && d->history.nundo == 1 &&
	    pw_problem_same(pw_plan_problem(d->plan), d->planner->problem),
	    "as one change, of the same problem");
	tui_key(d, 'u');
	tap_int((long long)d->history.nundo, 0, "undo takes it back");
out:
	tui_free(d);
}

/* A search that ends on its start's orders records no change. */
static void
test_optimize_same(void)
{
	struct tui *d = open_file("tui_small.json");
	unsigned long changes;
	size_t nundo;

	if (d == NULL)
		return;
	d->iteration_limit = 2000;
	tui_key(d, 'o');
	solve_until_done(d);
	set_unsaved(d, false);
	changes = d->changes;
	nundo = d->history.nundo;
	tui_key(d, 'o');
	solve_until_done(d);
	tap_str(d->message, "optimized: the start is the best found (makespan "
	    "17 s, bound 17 s, gap 0.0%, optimal for this split and layout): "
	    "nothing changed", "the same orders again, optimal for what was "
	    "fixed, never a bare optimal");
	tap_ok(!tui_unsaved(d) && d->changes == changes &&
	    d->history.nundo == nundo, "no change, nothing unsaved, no undo entry");
	tui_free(d);
}

/* The form lists the pins after its fields: x removes one as a change,
 * Enter selects its first op; they are not typed. */
static void
test_form_pins(void)
{
	struct tui *d = open_file("tui_small.json");
	struct pw_error err;
	int n, row;

	if (d == NULL)
		return;
	n = tui_form_nfields(d);
	select_op(d, "F(0,0)");
	tui_key(d, 'p');
	select_op(d, "F(0,2)");
	tui_key(d, 'p');
	select_op(d, "F(1,1)");
	tui_key(d, 'p');
	select_op(d, "B(1,1)");
	tui_key(d, 'p');
	tap_int(tui_form_nfields(d), n + 2, "a row per pin");
	tap_str(tui_form_label(d, n, (char[64]){ 0 }, 64), "pin 0",
	    "the first pin's label: from 0, as the file's pins count");
	tap_str(value(d, "pin 0"), "F(0,0) before F(0,2)", "its value");
	tap_str(value(d, "pin 1"), "F(1,1) before B(1,1)", "the second's");
	tap_int(tui_form_pin(d, n - 1), -1, "the last field is no pin");
	tap_int(tui_form_pin(d, n + 1), 1, "the second pin's row");
	tap_int(tui_form_set(d, n, "x", &err), PW_ERR_INPUT,
	    "a pin's row is not typed");
	tap_str(err.msg, "pin 0: a pin is not typed: x or Delete removes it, "
	    "Enter selects its first op", "... saying so");
	tui_key(d, 't');
	d->form.field = 0;
	tui_key(d, 'x');
	tap_str(d->message, "only a pin's row is removed (the pins follow the "
	    "fields)", "x on a field removes nothing");
	tap_int((long long)d->npins, 2, "... both pins stay");
	row = n + 1;
	d->form.field = row;
	tui_key(d, KEY_DC);
	tap_ok(d->npins == 1 && d->pins[0].before.stage == 0,
	    "Delete removes that row's pin");
	tap_str(d->message, "unpin F(1,1) before B(1,1)", "... as a change");
	tap_int(d->form.field, n, "the focus on the last row left");
	tap_int(d->mode, TUI_MODE_FORM, "... still in the form");
	tui_key(d, 'x');
	tap_int((long long)d->npins, 0, "x removes the other");
	tui_key(d, TUI_KEY_ESC);
	tui_key(d, 'u');
	tap_int((long long)d->npins, 1, "undo brings one back");
	select_op(d, "W(0,3)");
	tui_key(d, 't');
	d->form.field = n;
	tui_key(d, '\n');
	tap_ok(d->mode == TUI_MODE_TIMELINE && !d->form.editing,
	    "Enter on a pin: back to the timeline");
	tap_str(sel_name(d), "F(0,0)", "... its first op selected");
	tui_free(d);
}

/* Polls a launch until it ends: a bounded loop of short sleeps, so that a
 * run that never ends fails the test instead of hanging it. */
static bool
launch_until_done(struct tui *d)
{
	struct timespec nap = { 0, 1000000 };
	int n;

	for (n = 0; tui_launch_running(d) && n < 120000; n++) {
		tui_launch_tick(d);
		nanosleep(&nap, NULL);
	}
	return tap_ok(!tui_launch_running(d), "the launch ends");
}

/* M written as a measured schedule file (as pipewright launch -o does)
 * opens in the designer with its run attached. */
static void
launch_file(const struct tui_measured *m)
{
	char *path = tmp_path("measured.json");
	struct pw_measured *back = NULL;
	struct pw_error err;
	struct tui *d;

	if (!tap_ok(pw_schedule_write_with(path, pw_plan_problem(m->plan),
	    pw_plan_schedule(m->plan), pw_plan_timing(m->plan), NULL, 0, m->run,
	    &err) == PW_OK, "the run writes as a measured file"))
		tap_diag("%s", err.msg);
	else if ((d = tui_new(path, 40, 120, &err)) == NULL)
		tap_ok(false, "the measured file opens: %s", err.msg);
	else {
		tap_ok(tui_measured_of(d) != NULL && d->measured->cmp.nops ==
		    m->cmp.nops && d->measured->run->iterations ==
		    m->run->iterations, "the measured file opens with its run "
		    "attached");
		/* The run came from hardware: s keeps it while the schedule
		 * is the one run. */
		tap_int(tui_save(d, NULL, &err), PW_OK, "s saves it");
		tap_ok(pw_measured_read(path, &back, &err) == PW_OK &&
		    back != NULL && back->iterations == m->run->iterations,
		    "with its run");
		pw_measured_free(back);
		tui_free(d);
	}
	free(path);
}

/* L on tui_small.json runs the schedule to its end: the measured run is
 * attached to the plan, every op measured once, its peaks the predicted
 * ones (docs/model.md's bytes, at its instants), its timeline passing
 * the checker; an edit of the schedule drops it. */
static void
test_launch(void)
{
	struct tui *d = open_file("tui_small.json");
	const struct tui_measured *m;
	const struct pw_problem *wp;
	struct pw_violations viol = { 0 };
	struct pw_timed_op *ops;
	char *want, step[32];
	size_t n;
	int k, same = 0;

	if (d == NULL)
		return;
	tui_key(d, 'L');
	want = pw_xasprintf("launch: family zb-h2 on %s, MLP blocks 64x256, 32 "
	    "tokens, no attention (Esc stops)", pw_rt_backend_name(
	    pw_rt_backend_default()));
	tap_str(d->message, want, "L: the message line says what runs");
	free(want);
	tap_int(tui_key(d, 'L'), TUI_DRAW_MESSAGE, "L again while it runs");
	tap_str(d->message, "a launch is running: Esc stops it first",
	    "... is refused");
	if (!launch_until_done(d))
		goto out;
	m = tui_measured_of(d);
	if (!tap_ok(m != NULL && m == d->measured, "its measured run is "
	    "attached to the plan")) {
		tap_diag("%s", d->message);
		goto out;
	}
	/* tui_small.json's given stages take seconds, the workload's ops
	 * milliseconds: by the comparison's own figures, whatever the
	 * machine's speed, the message says whether they are 10x apart. */
	pw_fmt_seconds(step, sizeof step, m->cmp.step_measured);
	want = pw_xasprintf(m->cmp.step_predicted > 10 * m->cmp.step_measured ?
	    "launch: %s measured, 17 s predicted: over 10x apart, calibrate "
	    "to compare (pipewright calibrate); 5 iterations, loss %.4f" :
	    "launch: step %s measured against 17 s predicted, 5 iterations, "
	    "loss %.4f; the run lanes show it", step, m->run->loss[4]);
	tap_str(d->message, want, "the message line says how it went, and "
	    "whether the two compare");
	free(want);
	wp = pw_plan_problem(m->plan);
	tap_int((long long)m->run->nops, (long long)pw_schedule_nops(
	    pw_plan_schedule(d->plan)), "every op measured once");
	tap_int((long long)m->cmp.nops, (long long)m->run->nops,
	    "... and compared with the prediction");
	tap_ok(m->cmp.step_predicted == 17, "the prediction is the plan's "
	    "makespan, 17 s");
	for (k = 0; k < wp->devices; k++)
		same += m->cmp.peak_measured[k] == m->cmp.peak_predicted[k];
	tap_int(same, wp->devices, "each device's measured peak is the "
	    "predicted one");
	ops = pw_measured_timed(wp, pw_plan_schedule(m->plan), m->run, &n);
	tap_int(pw_check_measured(wp, ops, n, &viol), 0, "the measured "
	    "timeline passes the checker");
	pw_violations_free(&viol);
	free(ops);
	tap_ok(tui_measured_op(m, (struct pw_op){ PW_W, 1, 3 }) != NULL,
	    "W(1,3) has its row");
	tap_ok(tui_view_whole(d) >= 17, "the view spans both");
	launch_file(m);
	select_op(d, "F(0,2)");
	tui_key(d, '<');
	tap_ok(tui_measured_of(d) == NULL, "an edit of the schedule: the run "
	    "no longer describes it");
	tui_launch_tick(d);
	tap_ok(d->measured == NULL, "... and is dropped");
out:
	tui_free(d);
}

/* Esc stops a running launch: no measured run, and the message says so.
 * The launch holds after its first iteration until cancelled
 * (tui.launch_hold), so Esc finds it running on any machine, and only
 * Esc's cancel lets it end. */
static void
test_launch_cancel(void)
{
	struct tui *d = open_file("tui_small.json");
	struct timespec nap = { 0, 1000000 };
	int n;

	if (d == NULL)
		return;
	d->launch_hold = true;
	tui_key(d, 'L');
	/* Until the message line shows its first iteration, bounded. */
	for (n = 0; n < 120000 && strncmp(d->message, "launch: iteration ",
	    18) != 0; n++) {
		tui_launch_tick(d);
		nanosleep(&nap, NULL);
	}
	tap_ok(strncmp(d->message, "launch: iteration 1/6 (warm-up), ", 33) ==
	    0, "its first iteration shown: %s", d->message);
	tap_ok(tui_launch_running(d) && !atomic_load(&d->launch->job.finished),
	    "... and it is held there, running");
	tui_key(d, TUI_KEY_ESC);
	tap_str(d->message, "stopping the launch", "Esc stops it");
	if (launch_until_done(d))
		tap_str(d->message, "launch stopped: cancelled at iteration 2 "
		    "of 6", "stopped before the next iteration starts");
	tap_ok(d->measured == NULL, "... nothing measured");
	tui_free(d);
}

/* Quitting's stop of a running launch cancels it and joins its thread:
 * the held launch ends only by that cancel.  Here with a bound of 60 s,
 * which the machine's load never reaches, where tui_free has
 * TUI_LAUNCH_STOP. */
static void
test_launch_quit(void)
{
	struct tui *d = open_file("tui_small.json");

	if (d == NULL)
		return;
	d->launch_hold = true;
	tui_key(d, 'L');
	tap_ok(tui_launch_running(d), "a held launch runs");
	tap_ok(tui_job_stop(&d->launch->job, 60), "a stop cancels it and "
	    "joins its thread");
	d->launch = NULL;
	tui_free(d);
}

/* A failure during the run (PIPEWRIGHT_FAIL_AT) is the message line's
 * error in one line, and nothing is measured. */
static void
test_launch_fail(void)
{
	struct tui *d = open_file("tui_small.json");

	if (d == NULL)
		return;
	setenv("PIPEWRIGHT_FAIL_AT", "1:B(1,2)", 1);
	tui_key(d, 'L');
	unsetenv("PIPEWRIGHT_FAIL_AT");
	if (launch_until_done(d))
		tap_ok(d->message_is_error && d->measured == NULL &&
		    strncmp(d->message, "launch: ", 8) == 0 &&
		    strstr(d->message, "B(1,2)") != NULL &&
		    strstr(d->message, "injected failure") != NULL &&
		    strchr(d->message, '\n') == NULL, "an injected failure: "
		    "one line naming the op: %s", d->message);
	tui_free(d);
}

/* A problem change cancels a launch not yet polled to its end, without
 * waiting on it. */
static void
test_launch_problem(void)
{
	struct tui *d = open_file("tui_small.json");

	if (d == NULL)
		return;
	tui_key(d, 'L');
	set_field(d, "microbatches", "6", NULL);
	tui_launch_tick(d);
	tap_ok(!tui_launch_running(d), "a problem change lets go of the "
	    "launch");
	tap_str(d->message, "launch cancelled: the problem changed",
	    "... saying so");
	tui_free(d);
}

int
main(void)
{
	if ((testdata = getenv("TESTDATA")) == NULL)
		testdata = "tests/data";
	if (mkdtemp(tmpdir) == NULL) {
		tap_ok(false, "mkdtemp");
		return tap_done();
	}
	setenv("HOME", tmpdir, 1);
	test_load();
	test_navigation();
	test_moves();
	test_pins();
	test_deadlock();
	test_form_given();
	test_form_model();
	test_families();
	test_optimize();
	test_optimize_over_limit();
	test_files();
	test_edit();
	test_script_prints();
	test_mouse_and_views();
	test_keys_print();
	test_key_hints();
	test_dash();
	test_broken_pin();
	test_form_no_limit();
	test_file_names();
	test_replace_asks();
	test_too_small();
	test_recovery_guarded();
	test_clean_again();
	test_recover_follows();
	test_recover_locked();
	test_form_caps();
	test_optimize_same();
	test_design_fixed();
	test_form_pins();
	test_launch();
	test_launch_cancel();
	test_launch_quit();
	test_launch_fail();
	test_launch_problem();
	{
		char *cmd = pw_xasprintf("rm -rf '%s'", tmpdir);

		if (system(cmd) != 0)
			tap_diag("could not remove %s", tmpdir);
		free(cmd);
	}
	return tap_done();
}
