/*
 * draw.c - the screen: which panels a mode shows, the notice of a
 * terminal too small, and the text primitives every panel writes with.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "tui_int.h"

/* Writes at (Y, X) the characters of *S (*LEFT bytes, in the shift
 * state ST) while they fit in WIDTH columns, advancing all three;
 * returns the columns used.  W NULL only measures. */
static int
tui_draw_chars(WINDOW *w, int y, int x, int width, const char **s,
    size_t *left, mbstate_t *st)
{
	size_t n;
	wchar_t wc;
	int used = 0, cw;

	while (*left > 0 && used < width) {
		n = mbrtowc(&wc, *s, *left, st);
		if (n == (size_t)-1 || n == (size_t)-2) {
			memset(st, 0, sizeof *st);
			wc = L'?';
			n = 1;
		}
		if (wc == L'\t')
			wc = L' ';
		else if (iswcntrl((wint_t)wc))
			wc = L'?';
		cw = wcwidth(wc);
		if (cw < 0)
			wc = L'?', cw = 1;
		if (used + cw > width)
			break;
		if (w != NULL)
			mvwaddnwstr(w, y, x + used, &wc, 1);
		used += cw;
		*s += n;
		*left -= n;
	}
	return used;
}

int
tui_draw_text(WINDOW *w, int y, int x, int width, attr_t attr, const char *s)
{
	size_t left = strlen(s);
	mbstate_t st;
	int used;

	memset(&st, 0, sizeof st);
	wattrset(w, attr);
	used = tui_draw_chars(w, y, x, width, &s, &left, &st);
	wattrset(w, A_NORMAL);
	return used;
}

int
tui_draw_text_more(WINDOW *w, int y, int x, int width, attr_t attr,
    const char *s, wchar_t more)
{
	size_t left = strlen(s), rest_left;
	mbstate_t st, rest_st;
	const char *rest;
	int used;

	if (width < 1)
		return 0;
	memset(&st, 0, sizeof st);
	wattrset(w, attr);
	used = tui_draw_chars(w, y, x, width - 1, &s, &left, &st);
	if (left > 0) {
		/* The last column: the rest where it fits there, else MORE. */
		rest = s;
		rest_left = left;
		rest_st = st;
		tui_draw_chars(NULL, y, x, width - used, &rest, &rest_left,
		    &rest_st);
		if (rest_left == 0)
			used += tui_draw_chars(w, y, x + used, width - used, &s,
			    &left, &st);
		else {
			mvwaddnwstr(w, y, x + used, &more, 1);
			used++;
		}
	}
	wattrset(w, A_NORMAL);
	return used;
}

void
tui_draw_clear(WINDOW *w, struct tui_rect r, attr_t attr)
{
	int y;

	wattrset(w, attr);
	for (y = r.y; y < r.y + r.h; y++)
		mvwhline(w, y, r.x, ' ', r.w);
	wattrset(w, A_NORMAL);
}

struct tui_rect
tui_draw_box(WINDOW *w, const struct tui *d, struct tui_rect r,
    const char *title)
{
	wchar_t h = tui_glyph(&d->glyphs, TUI_GLYPH_HLINE);
	wchar_t v = tui_glyph(&d->glyphs, TUI_GLYPH_VLINE);
	attr_t a = tui_attr(TUI_COLOR_PANEL);
	char line[256];
	int x, y;

	tui_draw_clear(w, r, a);
	wattrset(w, a);
	for (x = r.x; x < r.x + r.w; x++) {
		mvwaddnwstr(w, r.y, x, &h, 1);
		mvwaddnwstr(w, r.y + r.h - 1, x, &h, 1);
	}
	for (y = r.y + 1; y < r.y + r.h - 1; y++) {
		mvwaddnwstr(w, y, r.x, &v, 1);
		mvwaddnwstr(w, y, r.x + r.w - 1, &v, 1);
	}
	wattrset(w, A_NORMAL);
	if (title != NULL) {
		snprintf(line, sizeof line, " %s ", title);
		tui_draw_text(w, r.y, r.x + 2, r.w - 4, a | A_BOLD, line);
	}
	return (struct tui_rect){ r.y + 1, r.x + 2, r.h - 2, r.w - 4 };
}

/* The bytes of S's first line that fit in WIDTH columns, broken at the
 * last blank that lets it fit (anywhere when none does). */
static size_t
tui_draw_break(const char *s, int width)
{
	size_t i = 0, blank = 0, n;
	mbstate_t st;
	wchar_t wc;
	int used = 0, cw;

	memset(&st, 0, sizeof st);
	while (s[i] != '\0' && s[i] != '\n') {
		n = mbrtowc(&wc, s + i, strlen(s + i), &st);
		if (n == (size_t)-1 || n == (size_t)-2) {
			memset(&st, 0, sizeof st);
			n = 1, wc = L'?';
		}
		cw = wcwidth(wc) < 0 ? 1 : wcwidth(wc);
		if (used + cw > width)
			return blank > 0 ? blank : i;
		if (wc == L' ')
			blank = i;
		used += cw;
		i += n;
	}
	return i;
}

void
tui_draw_wrap(WINDOW *w, struct tui_rect r, int *row, attr_t attr,
    const char *s)
{
	char line[1024];
	size_t n;

	while (*row < r.h) {
		n = tui_draw_break(s, r.w);
		if (n == 0 && s[0] != '\0' && s[0] != '\n')
			n = 1;	/* a glyph wider than the rect */
		if (n >= sizeof line)
			n = sizeof line - 1;
		memcpy(line, s, n);
		line[n] = '\0';
		tui_draw_text(w, r.y + *row, r.x, r.w, attr, line);
		(*row)++;
		s += n;
		while (*s == ' ')
			s++;
		if (*s == '\n')
			s++;
		else if (*s == '\0')
			break;
	}
}

/* The screen below TUI_MIN_ROWS x TUI_MIN_COLS: one line, no layout,
 * and the input line under it while a question is open (the keys that
 * act there, tui_actions_key, are the ones this screen shows). */
static void
tui_draw_too_small(WINDOW *w, const struct tui *d, int rows, int cols)
{
	struct tui_layout below = { .message = { 1, 0, 1, cols } };
	char line[96];

	werase(w);
	snprintf(line, sizeof line,
	    "pipewright needs at least %dx%d (this terminal is %dx%d); q quits",
	    TUI_MIN_COLS, TUI_MIN_ROWS, cols, rows);
	tui_draw_text_more(w, 0, 0, cols, A_NORMAL, line,
	    tui_glyph(&d->glyphs, TUI_GLYPH_MORE));
	if (d->mode == TUI_MODE_PROMPT && rows > 1)
		tui_draw_message(w, d, &below);
}

/* The timeline mode's ruler and lanes. */
static void
tui_draw_timeline(WINDOW *w, struct tui *d, const struct tui_layout *l)
{
	tui_draw_clear(w, l->ruler, A_NORMAL);
	tui_draw_clear(w, l->timeline, A_NORMAL);
	tui_draw_ruler(w, &d->view, l->ruler, l->label_w);
	tui_draw_lanes(w, d, d->plan, &d->view, l->timeline, l->label_w,
	    false);
}

/* The panel of MODE, over the timeline. */
static void
tui_draw_panel(WINDOW *w, struct tui *d, enum tui_mode mode,
    const struct tui_layout *l)
{
	switch (mode) {
	case TUI_MODE_HELP:	tui_draw_help(w, d, l); break;
	case TUI_MODE_FORM:	tui_draw_form(w, d, l); break;
	case TUI_MODE_ERROR:	tui_draw_error(w, d, l); break;
	case TUI_MODE_COMPARE:	tui_draw_compare(w, d, l); break;
	case TUI_MODE_SWEEP:	tui_draw_sweep(w, d, l); break;
	case TUI_MODE_PLANNER:	tui_draw_planner(w, d, l); break;
	default:		assert(!"a mode without a panel");
	}
}

void
tui_draw(WINDOW *w, struct tui *d, unsigned flags)
{
	struct tui_layout l;
	enum tui_mode mode = d->mode;
	int rows, cols;

	getmaxyx(w, rows, cols);
	tui_layout(d, rows, cols, &l);
	if (l.too_small) {
		tui_draw_too_small(w, d, rows, cols);
		return;
	}
	/* A prompt asks on the message line over the mode it came from. */
	if (mode == TUI_MODE_PROMPT)
		mode = d->prompt.back == TUI_MODE_PROMPT ? TUI_MODE_TIMELINE :
		    d->prompt.back;
	/* Everything: the cells no area owns (the gap beside the details
	 * panel) lose what a full-width panel left there. */
	if ((flags & TUI_DRAW_ALL) == TUI_DRAW_ALL)
		werase(w);
	if (flags & TUI_DRAW_HEADER)
		tui_draw_header(w, d, &l);
	if (mode == TUI_MODE_TIMELINE) {
		if (flags & TUI_DRAW_TIMELINE)
			tui_draw_timeline(w, d, &l);
		if (flags & TUI_DRAW_DETAILS)
			tui_draw_details(w, d, &l);
	} else if (flags & (TUI_DRAW_PANEL | TUI_DRAW_TIMELINE)) {
		tui_draw_panel(w, d, mode, &l);
	}
	if (flags & (TUI_DRAW_MESSAGE | TUI_DRAW_PANEL))
		tui_draw_message(w, d, &l);
	tui_layout_free(&l);
}
