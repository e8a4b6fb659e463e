/*
 * test_tui_draw.c - the designer's renderer on an off-screen screen
 * (newterm on /dev/null streams, resized): each case builds a state by
 * hand, draws it and compares the screen's text with an expected screen
 * in tests/data/tui/NAME.txt; a few exact properties (where a bar starts,
 * which attributes the monochrome mode uses, the glyphs of pins, of a
 * deadlock and of memory over its limit) are checked apart from them.
 *
 * TUI_DRAW_WRITE=1 writes the expected screens instead of comparing.
 */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tap.h"
#include "testlib.h"
#include "tui_int.h"

/* A test's state: what tui_new would build, by hand. */
struct case_state {
	struct tui d;
};

static FILE *null_in, *null_out;
static SCREEN *screen;

static const struct pw_stage test_stage = { .f = 0.010, .b = 0.010,
    .w = 0.010, .act = 2.0 * (1 << 30), .hold = 1.0 * (1 << 30),
    .comm = 0.001 };

/* Returns a problem the caller frees: P devices, V chunks on PLACE, M
 * microbatches of test_stage, 10 GiB static and a 40 GiB limit. */
static struct pw_problem *
case_problem(int p, int v, int m, enum pw_placement place)
{
	struct pw_problem *prob = test_problem_uniform(p, v, m, place,
	    &test_stage);
	int k;

	for (k = 0; k < p; k++) {
		prob->memory[k].static_bytes = 10.0 * (1 << 30);
		prob->memory[k].limit = 40.0 * (1 << 30);
	}
	prob->name = pw_xstrdup("uniform");
	return prob;
}

/* Fills S for FAMILY on PROB (freed here), the view fitted; false after a
 * failed test line. */
static bool
case_open(struct case_state *s, const char *family, struct pw_problem *prob)
{
	const struct pw_family *fam = pw_family_find(family);
	const struct pw_metrics *m;
	struct pw_error err;
	int rc;

	memset(s, 0, sizeof *s);
	rc = fam != NULL ? pw_plan_family(fam, prob, &s->d.plan, &err) :
	    PW_ERR_INPUT;
	pw_problem_free(prob);
	if (!tap_ok(rc == PW_OK, "%s builds", family)) {
		tap_diag("%s", fam != NULL ? err.msg : "no such family");
		return false;
	}
	s->d.family = (int)(fam - pw_families);
	s->d.source = pw_xasprintf("family %s", family);
	m = pw_plan_metrics(s->d.plan);
	s->d.view.t0 = m->start;
	s->d.view.span = m->makespan;
	s->d.view.folded = pw_xcalloc((size_t)pw_plan_problem(s->d.plan)->devices,
	    sizeof (bool));
	s->d.mode = TUI_MODE_TIMELINE;
	return true;
}

static void
case_close(struct case_state *s)
{
	tui_measured_free(s->d.measured);
	pw_plan_free(s->d.plan);
	free(s->d.source);
	free(s->d.view.folded);
	free(s->d.error_text);
}

/* The screen as text: its rows, trailing blanks dropped, one a line;
 * the caller frees it. */
static char *
screen_text(void)
{
	wchar_t row[512];
	char line[2048];
	size_t used = 0, cap = 4096, n;
	char *out = pw_xmalloc(cap);
	int y, rows, cols, len;

	getmaxyx(stdscr, rows, cols);
	for (y = 0; y < rows; y++) {
		len = mvwinnwstr(stdscr, y, 0, row, cols < 511 ? cols : 511);
		if (len < 0)
			len = 0;
		row[len] = L'\0';
		n = wcstombs(line, row, sizeof line - 1);
		if (n == (size_t)-1)
			n = (size_t)snprintf(line, sizeof line, "(row %d: no text)", y);
		while (n > 0 && line[n - 1] == ' ')
			n--;
		line[n] = '\0';
		if (used + n + 2 > cap) {
			cap = 2 * (used + n + 2);
			out = pw_xreallocarray(out, cap, 1);
		}
		memcpy(out + used, line, n);
		used += n;
		out[used++] = '\n';
	}
	out[used] = '\0';
	return out;
}

/* Draws S on a ROWS x COLS screen in S's glyphs. */
static void
case_draw(struct case_state *s, int rows, int cols)
{
	resizeterm(rows, cols);
	werase(stdscr);
	s->d.rows = rows;
	s->d.cols = cols;
	tui_colors_init(&s->d.glyphs);
	tui_draw(stdscr, &s->d, TUI_DRAW_ALL);
}

/* The first row where GOT and WANT differ, for the diagnostics. */
static void
first_difference(const char *got, const char *want)
{
	const char *g = got, *w = want, *ge, *we;
	int row = 0;

	for (;;) {
		ge = strchr(g, '\n');
		we = strchr(w, '\n');
		if (ge == NULL || we == NULL || ge - g != we - w ||
		    memcmp(g, w, (size_t)(ge - g)) != 0) {
			tap_diag("row %d differs:", row);
			tap_diag(" got: %.*s", ge != NULL ? (int)(ge - g) :
			    (int)strlen(g), g);
			tap_diag("want: %.*s", we != NULL ? (int)(we - w) :
			    (int)strlen(w), w);
			return;
		}
		g = ge + 1;
		w = we + 1;
		row++;
	}
}

/* Compares the screen with tests/data/tui/NAME.txt (or writes it). */
static void
expect_screen(const char *name)
{
	const char *dir = getenv("TESTDATA");
	char path[1024], *got = screen_text(), *want;
	FILE *fp;

	snprintf(path, sizeof path, "%s/tui/%s.txt", dir != NULL ? dir :
	    "tests/data", name);
	if (getenv("TUI_DRAW_WRITE") != NULL) {
		fp = fopen(path, "w");
		tap_ok(fp != NULL && fputs(got, fp) >= 0 && fclose(fp) == 0,
		    "%s: written to %s", name, path);
		free(got);
		return;
	}
	want = test_read_file(path);
	if (!tap_ok(want != NULL, "%s: %s reads", name, path)) {
		free(got);
		return;
	}
	if (!tap_ok(strcmp(got, want) == 0, "%s: the screen is the expected one",
	    name))
		first_difference(got, want);
	free(got);
	free(want);
}

/* The character at Y, X and its attributes. */
static wchar_t
cell_at(int y, int x, attr_t *attr)
{
	cchar_t cc;
	wchar_t wc[CCHARW_MAX + 1];
	short pair;

	mvwin_wch(stdscr, y, x, &cc);
	getcchar(&cc, wc, attr, &pair, NULL);
	return wc[0];
}

/* The screen column where OP's bar begins on the screen S was drawn on
 * (lane labels of 8 columns). */
static int
op_column(const struct case_state *s, struct pw_op op)
{
	const struct pw_timing *t = pw_plan_timing(s->d.plan);
	size_t i = pw_op_index(pw_plan_problem(s->d.plan), op);

	return 8 + (int)ceil(tui_view_col(&s->d.view, s->d.cols - 8,
	    t->start[i]) - 0.5);
}

/* The screen's row Y as text, the caller frees it. */
static char *
row_text(int y)
{
	char *all = screen_text(), *p = all, *nl;
	char *row;
	int k;

	for (k = 0; k < y && (nl = strchr(p, '\n')) != NULL; k++)
		p = nl + 1;
	nl = strchr(p, '\n');
	row = pw_xasprintf("%.*s", nl != NULL ? (int)(nl - p) : (int)strlen(p), p);
	free(all);
	return row;
}

/* ------------------------------------------------------------------ */

static void
test_families_screens(void)
{
	static const struct {
		const char *name, *family;
		int v;
		enum pw_placement place;
	} cases[] = {
		{ "1f1b", "1f1b", 1, PW_PLACE_LOOP },
		{ "interleaved", "1f1b-interleaved", 2, PW_PLACE_LOOP },
		{ "zb-v", "zb-v", 2, PW_PLACE_V },
	};
	struct case_state s;
	char name[64], *text;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (!case_open(&s, cases[i].family, case_problem(4, cases[i].v,
		    8, cases[i].place)))
			continue;
		case_draw(&s, 24, 80);
		snprintf(name, sizeof name, "%s-80x24", cases[i].name);
		expect_screen(name);
		if (i == 0) {
			text = screen_text();
			tap_ok(strstr(text, "\n megatron: "
			    "--pipeline-model-parallel-size 4\n") != NULL,
			    "1f1b: nothing selected, the details give the "
			    "Megatron-LM flags");
			free(text);
		}
		case_draw(&s, 60, 200);
		snprintf(name, sizeof name, "%s-200x60", cases[i].name);
		expect_screen(name);
		case_close(&s);
	}
}

/* Four chunks per device: case alone would tell chunk 0 from 1 but not
 * from 2, so a bar that has room says its chunk too ("2:5"). */
static void
test_chunks_screen(void)
{
	struct case_state s;
	const struct pw_timing *t;
	struct pw_op op = test_op(PW_F, 4, 1);
	char *row;

	if (!case_open(&s, "1f1b-interleaved", case_problem(2, 4, 4,
	    PW_PLACE_LOOP)))
		return;
	t = pw_plan_timing(s.d.plan);
	s.d.view.span /= 4;
	s.d.view.t0 = t->start[pw_op_index(pw_plan_problem(s.d.plan), op)] -
	    s.d.view.span / 4;
	case_draw(&s, 24, 80);
	expect_screen("interleaved-4chunks-zoom4-80x24");
	row = row_text(3);
	tap_ok(strstr(row, "2:1FF") != NULL && strstr(row, "2:1ff") == NULL,
	    "F(4,1), d0's chunk 2, says so, in upper case: %s", row);
	free(row);
	case_close(&s);
}

/* PO-F on PipeOffload's setting: transfer lanes on shared channels. */
static void
test_offload_screen(void)
{
	struct case_state s;

	if (!case_open(&s, "po-f", test_po_problem(4, 2, 8, 0.5, 1, 3)))
		return;
	case_draw(&s, 40, 120);
	expect_screen("po-f-120x40");
	case_close(&s);
}

/* RULER's labels (taken): at least two, each unlike the one before. */
static void
ruler_distinct(char *ruler)
{
	char *label, *save = NULL, *end, *prev = NULL;
	bool distinct = true;
	int n = 0;

	/* What stands before the first tick is the device labels' column. */
	label = strchr(ruler, '|');
	for (label = label != NULL ? strtok_r(label, "|", &save) : NULL;
	    label != NULL; label = strtok_r(NULL, "|", &save)) {
		for (end = label + strlen(label); end > label && end[-1] == ' ';)
			*--end = '\0';
		distinct = distinct && (prev == NULL || strcmp(prev, label) != 0);
		prev = label;
		n++;
	}
	tap_ok(n >= 2 && distinct, "a deep zoom's %d ruler labels differ, the "
	    "last %s", n, prev != NULL ? prev : "(none)");
	free(ruler);
}

/* Two zoom levels of 1F1B, about a selected op, with its details. */
static void
test_zoom_and_selection(void)
{
	struct case_state s;
	const struct pw_timing *t;
	struct pw_stage unit;
	attr_t attr;
	size_t i;

	if (!case_open(&s, "1f1b", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	s.d.has_sel = true;
	s.d.sel = test_op(PW_BW, 1, 2);
	t = pw_plan_timing(s.d.plan);
	i = pw_op_index(pw_plan_problem(s.d.plan), s.d.sel);
	s.d.view.span /= 4;
	s.d.view.t0 = t->start[i] - s.d.view.span / 2;
	case_draw(&s, 24, 80);
	expect_screen("1f1b-zoom4-selected-80x24");
	s.d.view.span /= 8;
	s.d.view.t0 = t->start[i] - s.d.view.span / 3;
	case_draw(&s, 60, 200);
	expect_screen("1f1b-zoom32-selected-200x60");
	/* A hundred thousand times deeper, the labels still differ. */
	s.d.view.span /= 1e5;
	case_draw(&s, 24, 80);
	ruler_distinct(row_text(2));
	case_close(&s);

	/* The deepest zoom, 1.5 ns across, on unit times (1f1b's 33 s): at
	 * 16.5 s ticks a fraction of a nanosecond apart need ten decimals;
	 * in the middle of F(0,0) (0 to 1 s) its ends lie 10^10 columns
	 * away, past an int, yet it fills its lane. */
	unit = test_stage;
	unit.f = unit.b = unit.w = 1;
	if (!case_open(&s, "1f1b", test_problem_uniform(4, 1, 8,
	    PW_PLACE_LOOP, &unit)))
		return;
	s.d.view.t0 = 16.5;
	s.d.view.span = 1.5e-9;
	case_draw(&s, 24, 80);
	ruler_distinct(row_text(2));
	s.d.view.t0 = 0.5;
	case_draw(&s, 24, 80);
	tap_ok(cell_at(3, 8 + 36, &attr) == L'F', "deepest zoom: F(0,0) fills "
	    "d0's lane");
	case_close(&s);
}

/* A full-width panel closed: everything drawn again leaves nothing of it,
 * the gap beside the details panel included. */
static void
test_panel_closed(void)
{
	struct case_state s;
	char *fresh, *after;

	if (!case_open(&s, "1f1b", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	case_draw(&s, 45, 140);
	fresh = screen_text();
	tui_compare_open(&s.d);
	tui_draw(stdscr, &s.d, TUI_DRAW_ALL);
	tui_compare_clear(&s.d);
	s.d.mode = TUI_MODE_TIMELINE;
	s.d.message[0] = '\0';
	tui_draw(stdscr, &s.d, TUI_DRAW_ALL);
	after = screen_text();
	tap_str(after, fresh, "a closed compare view leaves no cell behind");
	free(fresh);
	free(after);
	case_close(&s);
}

/* The critical path, as text: an off-path op keeps its kind's glyph
 * after its microbatch, then dots ('.' in ASCII), dim in colour. */
static void
test_critical_ascii(void)
{
	struct case_state s;
	struct pw_op off = test_op(PW_F, 0, 1), on = test_op(PW_F, 0, 0);
	attr_t attr;

	if (!case_open(&s, "zb-h1", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	s.d.show_critical = true;
	case_draw(&s, 24, 100);
	expect_screen("zb-h1-critical-100x24");
	tap_ok(cell_at(3, op_column(&s, off) + 1, &attr) == L'F' &&
	    (attr & A_DIM) != 0 && (attr & A_BOLD) == 0,
	    "F(0,1), off the path: its glyph, dim");
	tap_ok(cell_at(3, op_column(&s, off) + 2, &attr) == L'\x00b7' &&
	    (attr & A_DIM) != 0, "... then a dot");
	tap_ok(cell_at(3, op_column(&s, on) + 1, &attr) == L'F' &&
	    (attr & A_BOLD) != 0 && (attr & A_DIM) == 0,
	    "F(0,0), on it: bold, not dim");
	s.d.glyphs.ascii = true;
	case_draw(&s, 24, 100);
	expect_screen("zb-h1-critical-ascii-100x24");
	case_close(&s);
}

/* A bar starts at the column its start maps to, its microbatch first;
 * each kind has its glyph. */
static void
test_bar_columns(void)
{
	struct case_state s;
	const struct pw_problem *p;
	const struct pw_timing *t;
	struct pw_op op = test_op(PW_F, 2, 3);
	attr_t attr;
	double col;
	int width;

	if (!case_open(&s, "1f1b", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	s.d.glyphs.ascii = true;
	case_draw(&s, 24, 80);
	p = pw_plan_problem(s.d.plan);
	t = pw_plan_timing(s.d.plan);
	width = 80 - 8;
	col = ceil(tui_view_col(&s.d.view, width, t->start[pw_op_index(p,
	    op)]) - 0.5);
	/* Device 2's compute lane: rows 3 (d0), 5 (d1), 7 (d2), memory
	 * strips between. */
	tap_int(cell_at(7, 8 + (int)col, &attr), L'3',
	    "F(2,3) starts at column %d with its microbatch", 8 + (int)col);
	tap_int(cell_at(7, 8 + (int)col + 1, &attr), L'F',
	    "then its kind's glyph");
	tap_int(cell_at(7, 8 + (int)col - 1, &attr) == L'F' ? 0 : 1, 1,
	    "the cell before it is not F(2,3)'s");
	tap_int(tui_kind_glyph(PW_BW), 'X', "fused BW draws as X");
	tap_int(tui_kind_glyph(PW_RELOAD), 'r', "a reload as r");
	case_close(&s);
}

/* Monochrome: the selection in reverse video, no colour pairs. */
static void
test_mono(void)
{
	struct case_state s;
	const struct pw_problem *p;
	const struct pw_timing *t;
	const double *slack;
	struct pw_op op;
	attr_t attr;
	double col;
	char *row;

	if (!case_open(&s, "1f1b", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	s.d.glyphs.mono = true;
	s.d.has_sel = true;
	s.d.sel = test_op(PW_F, 0, 0);
	case_draw(&s, 24, 80);
	expect_screen("1f1b-mono-80x24");
	t = pw_plan_timing(s.d.plan);
	col = ceil(tui_view_col(&s.d.view, 72, t->start[0]) - 0.5);
	cell_at(3, 8 + (int)col, &attr);
	tap_ok((attr & A_REVERSE) != 0 && PAIR_NUMBER(attr) == 0,
	    "mono: the selected F(0,0) is in reverse video, no colour");
	cell_at(3, op_column(&s, test_op(PW_F, 0, 1)), &attr);
	tap_ok((attr & A_UNDERLINE) != 0 && (attr & A_REVERSE) == 0 &&
	    PAIR_NUMBER(attr) == 0,
	    "mono: F(0,1), a successor of the selection, is underlined");
	s.d.has_sel = false;
	s.d.show_critical = true;
	case_draw(&s, 24, 80);
	slack = pw_plan_slack(s.d.plan);
	p = pw_plan_problem(s.d.plan);
	tap_ok(slack[pw_op_index(p, test_op(PW_BW, 0, 7))] == 0 &&
	    cell_at(3, op_column(&s, test_op(PW_BW, 0, 7)), &attr) == L'7' &&
	    attr == A_BOLD, "mono: BW(0,7), which ends last, is critical: bold");
	op = test_op(PW_BW, 1, 5);
	tap_ok(slack[pw_op_index(p, op)] > 0 &&
	    cell_at(5, op_column(&s, op) + 1, &attr) == L'X' &&
	    attr == A_NORMAL, "mono: BW(1,5), with slack, keeps its kind's "
	    "glyph after its microbatch, not bold");
	tap_ok(cell_at(5, op_column(&s, op) + 2, &attr) == L'\x00b7' &&
	    attr == A_NORMAL, "... and is dimmed to dots after it");
	row = row_text(5);
	tap_ok(strstr(row, "5X\xc2\xb7") != NULL, "d1's row reads BW(1,5) "
	    "as a fused backward off the path: %s", row);
	free(row);
	row = row_text(0);
	tap_ok(strstr(row, "uniform  4 devices, 4 stages (loop, 1 chunk), "
	    "8 microbatches  from family 1f1b") == row,
	    "the header names the problem and the source: %s", row);
	free(row);
	free(s.d.source);
	s.d.source = pw_xstrdup("plan: split 2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2 "
	    "on 16 devices, zb-auto");
	s.d.edits = 1;
	case_draw(&s, 24, 80);
	row = row_text(0);
	tap_ok(cell_at(0, 79, &attr) == L'\x2026' && strstr(row, "from plan: "
	    "split 2,2,") != NULL, "a source the header cuts ends in an "
	    "ellipsis: %s", row);
	free(row);
	case_close(&s);
}

/* Pins, a deadlock's waits and memory over its limit have glyphs. */
static void
test_marks(void)
{
	struct case_state s;
	struct pw_pin pin = { test_op(PW_F, 0, 1), test_op(PW_F, 0, 2) };
	struct pw_wait wait = { .op = test_op(PW_BW, 0, 0), .on = {
	    .op = test_op(PW_BW, 1, 0), .kind = PW_PRED_DEP } };
	struct pw_plan *other;
	char *row;

	if (!case_open(&s, "1f1b", test_po_problem(2, 1, 4, 0, 1, 1.5)))
		return;
	s.d.glyphs.ascii = true;
	s.d.pins = &pin;
	s.d.npins = 1;
	s.d.waits = &wait;
	s.d.nwaits = 1;
	case_draw(&s, 24, 80);
	expect_screen("marks-ascii-80x24");
	row = row_text(3);
	tap_ok(strstr(row, "+") != NULL && strstr(row, "?") != NULL,
	    "d0 shows its pins (+) and its blocked op (?): %s", row);
	free(row);
	/* Another plan drawn beside it (a compare slot) has none of the
	 * designer's deadlock. */
	other = pw_plan_copy(s.d.plan);
	werase(stdscr);
	tui_draw_lanes(stdscr, &s.d, other, &s.d.view, (struct tui_rect){
	    .y = 0, .x = 0, .h = 4, .w = 80 }, 8, true);
	row = row_text(0);
	tap_ok(strchr(row, '?') == NULL, "another plan drawn shows no blocked "
	    "op: %s", row);
	free(row);
	pw_plan_free(other);
	case_draw(&s, 24, 80);
	row = row_text(4);
	tap_ok(strstr(row, "!") != NULL, "d0's memory goes over 1.5 B: %s",
	    row);
	free(row);
	row = row_text(1);
	tap_ok(strstr(row, "memory over on d0") != NULL,
	    "the header says which device is over: %s", row);
	free(row);
	/* A file's pin that its orders break comes first. */
	pin = (struct pw_pin){ test_op(PW_F, 0, 2), test_op(PW_F, 0, 1) };
	case_draw(&s, 24, 120);
	row = row_text(1);
	tap_ok(strstr(row, "breaks pin 0: F(0,2) starts at ") != NULL,
	    "the header names a pin the orders break: %s", row);
	free(row);
	/* The details panel lists the selected op's pins before the rows
	 * a short panel cuts (what it waits for, what waits for it). */
	s.d.waits = NULL;
	s.d.nwaits = 0;
	s.d.has_sel = true;
	s.d.sel = test_op(PW_F, 0, 1);
	case_draw(&s, 24, 120);
	row = screen_text();
	tap_ok(strstr(row, "pinned: after F(0,2)") != NULL, "the details "
	    "panel lists F(0,1)'s pin at 120x24");
	free(row);
	s.d.has_sel = false;
	s.d.pins = NULL;
	s.d.npins = 0;
	s.d.waits = NULL;
	s.d.nwaits = 0;
	case_close(&s);
}

/* After an edit that deadlocks, the details panel says in words which
 * ops can never start and what each waits for. */
static void
test_deadlock_details(void)
{
	struct case_state s;
	struct pw_edit edit = { .kind = PW_EDIT_MOVE,
	    .op = test_op(PW_BW, 0, 0), .to = 0 };
	struct pw_error err;
	char buf[256], *row;

	if (!case_open(&s, "1f1b", case_problem(2, 1, 4, PW_PLACE_LOOP)))
		return;
	tap_str(tui_deadlock_summary(&s.d, buf, sizeof buf), "",
	    "orders that time: no deadlock summary");
	if (!tap_int(pw_plan_apply(s.d.plan, &edit, NULL, &err), PW_OK,
	    "BW(0,0) moves first on d0")) {
		tap_diag("%s", err.msg);
		case_close(&s);
		return;
	}
	s.d.nwaits = pw_deadlock_waits(pw_plan_problem(s.d.plan),
	    pw_plan_schedule(s.d.plan), &s.d.waits);
	tap_int((long long)s.d.nwaits, 2, "both orders stop");
	tap_str(tui_deadlock_summary(&s.d, buf, sizeof buf), "deadlock: 16 ops "
	    "can never start",
	    "the header's summary");
	case_draw(&s, 24, 80);
	expect_screen("deadlock-80x24");
	row = row_text(18);
	tap_str(row, " deadlock: 16 ops can never start: BW(0,0) waits for "
	    "BW(1,0) (dependency);", "nothing selected: every order's first stuck op");
	free(row);
	row = row_text(19);
	tap_str(row, " F(1,0) waits for F(0,0) (dependency)",
	    "... on as many rows as it takes");
	free(row);
	s.d.has_sel = true;
	s.d.sel = test_op(PW_BW, 0, 0);
	case_draw(&s, 24, 80);
	row = row_text(18);
	tap_str(row, " blocked: BW(0,0) waits for BW(1,0) (dependency)",
	    "the selected op is stuck: what it waits for");
	free(row);
	s.d.sel = test_op(PW_F, 0, 1);
	case_draw(&s, 24, 80);
	row = row_text(18);
	tap_str(row, " deadlock: 16 ops can never start: BW(0,0) waits for "
	    "BW(1,0) (dependency);", "another op selected: the deadlock first");
	free(row);
	row = row_text(20);
	tap_ok(strncmp(row, " stage 0, chunk 0, microbatch 1", 31) == 0,
	    "then the selected op's details: %s", row);
	free(row);
	free(s.d.waits);
	case_close(&s);
}

/* The help lists the key table; the form its fields, the focused one
 * in reverse video (mono), the one being edited with what is typed. */
static void
test_help_and_form(void)
{
	struct case_state s;
	char label[128], value[128], *row, *want;
	attr_t attr;
	size_t i;

	if (!case_open(&s, "1f1b", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	s.d.glyphs.mono = true;
	s.d.mode = TUI_MODE_HELP;
	s.d.help_top = 1;
	case_draw(&s, 24, 80);
	row = row_text(3);
	want = pw_xasprintf("\xe2\x94\x82 %-15s%-11s%s", tui_keys[1].names,
	    "timeline", tui_keys[1].help);
	tap_ok(strncmp(row, want, strlen(want)) == 0,
	    "help from its second row, with the modes it acts in: %s", row);
	free(want);
	free(row);
	/* The design search's key, from the one table. */
	for (i = 0; i < tui_nkeys && tui_keys[i].keys[0] != 'D'; i++)
		;
	s.d.help_top = (int)i;
	case_draw(&s, 24, 80);
	row = row_text(3);
	tap_str(row, "\xe2\x94\x82 D              timeline   design search: "
	    "split, layout and schedule          \xe2\x94\x82", "help lists D");
	free(row);
	s.d.help_top = 100000;
	case_draw(&s, 24, 80);
	row = row_text(21);
	want = pw_xasprintf("\xe2\x94\x82 %-15s", tui_keys[tui_nkeys - 1].names);
	tap_ok(strncmp(row, want, strlen(want)) == 0 &&
	    strstr(row, tui_keys[tui_nkeys - 1].help) != NULL,
	    "help scrolled past its end shows its last row last: %s", row);
	free(want);
	free(row);
	s.d.mode = TUI_MODE_FORM;
	s.d.form.field = 1;
	case_draw(&s, 24, 80);
	row = row_text(4);
	want = pw_xasprintf("\xe2\x94\x82 %-30s%s ", tui_form_label(&s.d, 1, label,
	    sizeof label), tui_form_value(&s.d, 1, value, sizeof value));
	tap_ok(strncmp(row, want, strlen(want)) == 0, "the form's second "
	    "field: %s", row);
	free(want);
	free(row);
	cell_at(4, 32, &attr);
	tap_ok((attr & A_REVERSE) != 0, "the focused field is in reverse video");
	cell_at(3, 32, &attr);
	tap_ok((attr & A_REVERSE) == 0, "the others are not");
	s.d.form.editing = true;
	snprintf(s.d.form.text, sizeof s.d.form.text, "12");
	s.d.form.len = 2;
	case_draw(&s, 24, 80);
	row = row_text(4);
	want = pw_xasprintf("\xe2\x94\x82 %-30s12_", tui_form_label(&s.d, 1,
	    label, sizeof label));
	tap_ok(strncmp(row, want, strlen(want)) == 0,
	    "the field being edited shows the text typed: %s", row);
	free(want);
	free(row);
	case_close(&s);
}

/* Returns a measured run the caller owns of S's schedule: each op's times
 * the prediction's times STRETCH, one iteration, the predicted peaks. */
static struct pw_measured *
case_measured(const struct case_state *s, double stretch)
{
	const struct pw_problem *p = pw_plan_problem(s->d.plan);
	const struct pw_schedule *sched = pw_plan_schedule(s->d.plan);
	const struct pw_timing *t = pw_plan_timing(s->d.plan);
	const struct pw_metrics *m = pw_plan_metrics(s->d.plan);
	struct pw_measured *run = pw_measured_new(p->devices,
	    pw_schedule_nops(sched), 1);
	struct pw_measured_op *mo = run->ops;
	const struct pw_seq *q;
	size_t i;
	int r, k;

	run->backend = pw_xstrdup("cpu");
	run->transport = pw_xstrdup("local");
	run->host = pw_xstrdup("test");
	run->step[0] = stretch * m->makespan;
	run->loss[0] = 0.5;
	for (k = 0; k < p->devices; k++)
		run->peak[k] = m->device[k].peak;
	run->workload = (struct pw_workload){ .hidden = 64, .ffn = 256,
	    .tokens = 32, .nstages = p->nstages,
	    .layers = pw_xcalloc((size_t)p->nstages, sizeof (int)) };
	for (k = 0; k < p->nstages; k++)
		run->workload.layers[k] = 1;
	for (r = 0; r < sched->ndevices + sched->nchannels; r++) {
		q = r < sched->ndevices ? &sched->device[r] :
		    &sched->channel[r - sched->ndevices];
		for (k = 0; k < q->len; k++, mo++) {
			i = pw_op_index(p, q->ops[k]);
			mo->op = q->ops[k];
			mo->device = p->stages[mo->op.stage].device;
			mo->start = stretch * t->start[i];
			mo->end = stretch * t->end[i];
			mo->durations[0] = mo->end - mo->start;
		}
	}
	return run;
}

/* After a launch: a run lane under each device's compute lane, both on
 * one axis that spans the longer (here the measured, 1.5 times the
 * prediction), the header's measured step, the details panel's measured
 * start and duration of the selected op against the prediction. */
static void
test_measured_screen(void)
{
	struct case_state s;
	struct pw_error err;
	char *row;

	if (!case_open(&s, "1f1b", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	if (!tap_ok(tui_measured_attach(&s.d, pw_problem_copy(pw_plan_problem(
	    s.d.plan)), case_measured(&s, 1.5), &err) == PW_OK,
	    "a measured run attaches")) {
		tap_diag("%s", err.msg);
		case_close(&s);
		return;
	}
	tap_ok(s.d.view.span == 1.5 * pw_plan_metrics(s.d.plan)->makespan,
	    "the view spans the longer of the two");
	s.d.has_sel = true;
	s.d.sel = (struct pw_op){ PW_F, 1, 2 };
	case_draw(&s, 40, 120);
	expect_screen("1f1b-measured-120x40");
	row = row_text(1);
	tap_ok(strstr(row, "measured: step 519 ms (predicted 346 ms)") != NULL,
	    "the header: %s", row);
	free(row);
	row = row_text(4);
	tap_ok(strncmp(row, "  run   ", 8) == 0, "d0's run lane follows its "
	    "compute lane: %s", row);
	free(row);
	case_draw(&s, 24, 80);
	row = row_text(1);
	tap_ok(strstr(row, "measured: step 519 ms") != NULL, "the measured "
	    "step fits 80 columns: %s", row);
	free(row);
	/* The launch's plan is the measured run's only. */
	s.d.sel = (struct pw_op){ PW_F, 0, 0 };
	pw_schedule_free(s.d.measured->sched);
	s.d.measured->sched = pw_schedule_new(pw_plan_problem(s.d.plan));
	case_draw(&s, 40, 120);
	row = row_text(1);
	tap_ok(strstr(row, "measured:") == NULL && tui_measured_of(&s.d) ==
	    NULL, "another schedule shows no measured run: %s", row);
	free(row);
	case_close(&s);
}

/* The error panel, a prompt, a message, the notice below 80x24. */
static void
test_panels(void)
{
	struct case_state s;
	attr_t attr;
	char *row;

	if (!case_open(&s, "1f1b", case_problem(4, 1, 8, PW_PLACE_LOOP)))
		return;
	s.d.mode = TUI_MODE_ERROR;
	s.d.error_text = pw_xstrdup("model.lua:12: attempt to call a nil "
	    "value (global 'layer')\nstack traceback:\n\tmodel.lua:12: in "
	    "main chunk");
	case_draw(&s, 24, 80);
	expect_screen("error-80x24");
	s.d.mode = TUI_MODE_PROMPT;
	s.d.prompt.back = TUI_MODE_TIMELINE;
	snprintf(s.d.prompt.question, sizeof s.d.prompt.question, "find op:");
	snprintf(s.d.prompt.text, sizeof s.d.prompt.text, "B(3,1");
	s.d.prompt.len = strlen(s.d.prompt.text);
	case_draw(&s, 24, 80);
	row = row_text(23);
	tap_str(row, "find op: B(3,1_", "the prompt asks on the message line");
	free(row);
	s.d.prompt.refused = true;
	snprintf(s.d.message, sizeof s.d.message, "the line holds 1023 bytes: "
	    "the key is not taken (Ctrl-U clears it)");
	case_draw(&s, 24, 80);
	row = row_text(23);
	tap_str(row, "the line holds 1023 bytes: the key is not taken (Ctrl-U "
	    "clears it)", "a key refused for room: the line says so");
	free(row);
	s.d.prompt.refused = false;
	s.d.mode = TUI_MODE_TIMELINE;
	snprintf(s.d.message, sizeof s.d.message, "moved F(0,3) earlier");
	case_draw(&s, 24, 80);
	row = row_text(23);
	tap_str(row, "moved F(0,3) earlier", "the message line's message");
	free(row);
	/* 80 columns exactly: no mark; 81: the last column says it goes on
	 * (a UTF-8 ellipsis, '>' in ASCII). */
	memset(s.d.message, 'x', 80);
	s.d.message[80] = '\0';
	case_draw(&s, 24, 80);
	tap_ok(cell_at(23, 79, &attr) == L'x', "a message of the line's "
	    "width is whole");
	s.d.message[79] = '\xc3';
	s.d.message[80] = '\xa9';
	s.d.message[81] = 'y';
	s.d.message[82] = '\0';
	case_draw(&s, 24, 80);
	tap_ok(cell_at(23, 78, &attr) == L'x' && cell_at(23, 79, &attr) ==
	    L'\x2026', "a longer one ends in an ellipsis");
	s.d.glyphs.ascii = true;
	case_draw(&s, 24, 80);
	tap_ok(cell_at(23, 79, &attr) == L'>', "... '>' in ASCII");
	s.d.glyphs.ascii = false;
	s.d.message[81] = '\0';
	case_draw(&s, 24, 80);
	tap_ok(cell_at(23, 79, &attr) == L'\x00e9', "one wide-enough "
	    "character left over is drawn, not marked");
	case_draw(&s, 23, 80);
	expect_screen("too-small");
	row = row_text(0);
	tap_str(row, "pipewright needs at least 80x24 (this terminal is 80x23)"
	    "; q quits", "below 80x24: the notice");
	free(row);
	row = row_text(1);
	tap_str(row, "", "... alone");
	free(row);
	tui_prompt_open(&s.d, TUI_PROMPT_QUIT, "unsaved changes: s saves and "
	    "quits, q quits, Esc stays", "");
	case_draw(&s, 23, 80);
	row = row_text(1);
	tap_ok(strncmp(row, "unsaved changes: s saves and quits, q quits, Esc "
	    "stays", 51) == 0, "... but for an open question, below it: %s",
	    row);
	free(row);
	/* Narrower than either: each keeps its start, ending in the more
	 * glyph, the answer's end after the question. */
	snprintf(s.d.prompt.text, sizeof s.d.prompt.text, "abc");
	case_draw(&s, 6, 20);
	row = row_text(0);
	tap_ok(strncmp(row, "pipewright needs at", 19) == 0 &&
	    cell_at(0, 19, &attr) == tui_glyph(&s.d.glyphs, TUI_GLYPH_MORE),
	    "at 20x6 the notice's start, marked cut: %s", row);
	free(row);
	row = row_text(1);
	tap_ok(strncmp(row, "unsaved change", 14) == 0 && cell_at(1, 14, &attr)
	    == tui_glyph(&s.d.glyphs, TUI_GLYPH_MORE) && strncmp(row + 14 +
	    strlen("\u2026"), " abc", 4) == 0, "... and the question's start, "
	    "marked cut, before the answer: %s", row);
	free(row);
	case_close(&s);
}

int
main(void)
{
	if (setlocale(LC_ALL, "C.UTF-8") == NULL) {
		tap_skip("no C.UTF-8 locale", "the renderer's screens");
		return tap_done();
	}
	null_in = fopen("/dev/null", "r");
	null_out = fopen("/dev/null", "w");
	screen = newterm("xterm-256color", null_out, null_in);
	if (!tap_ok(screen != NULL, "an off-screen xterm-256color screen"))
		return tap_done();
	test_families_screens();
	test_offload_screen();
	test_chunks_screen();
	test_zoom_and_selection();
	test_critical_ascii();
	test_panel_closed();
	test_bar_columns();
	test_mono();
	test_marks();
	test_deadlock_details();
	test_help_and_form();
	test_panels();
	test_measured_screen();
	endwin();
	delscreen(screen);
	fclose(null_in);
	fclose(null_out);
	return tap_done();
}
