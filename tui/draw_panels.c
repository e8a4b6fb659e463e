/*
 * draw_panels.c - the message line and the panels drawn over the
 * timeline: the key table (help), the constraints form and the error
 * panel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

/* Columns of the help's key names and modes, and of the form's labels. */
#define TUI_PANELS_KEYS_W	15
#define TUI_PANELS_MODES_W	11
#define TUI_PANELS_LABEL_W	30

/* HINTS into BUF, whole hints only (two blanks part them), in WIDTH
 * columns. */
static void
tui_panels_hints_fit(char *buf, size_t len, const char *hints, int width)
{
	const char *end = hints + strlen(hints), *gap;

	if (end - hints > width) {
		end = hints;
		for (gap = strstr(hints, "  "); gap != NULL && gap - hints <= width;
		    gap = strstr(gap + 2, "  "))
			end = gap;
	}
	snprintf(buf, len, "%.*s", (int)(end - hints), hints);
}

void
tui_draw_message(WINDOW *w, const struct tui *d, const struct tui_layout *l)
{
	const struct pw_progress *pr = &d->solve.progress;
	struct tui_rect r = l->message;
	char line[1536], hints[512], inc[32], bound[32], el[32];
	wchar_t cursor = tui_glyph(&d->glyphs, TUI_GLYPH_CURSOR);
	attr_t a = tui_attr(TUI_COLOR_HINT);
	int x, text;

	tui_draw_clear(w, r, A_NORMAL);
	if (d->mode == TUI_MODE_PROMPT && d->prompt.refused) {
		tui_draw_text_more(w, r.y, r.x, r.w, tui_attr(TUI_COLOR_ERROR),
		    d->message, tui_glyph(&d->glyphs, TUI_GLYPH_MORE));
		return;
	}
	if (d->mode == TUI_MODE_PROMPT) {
		/* The answer's end, where the typing is, always shows; the
		 * question as much of its start as fits before it, ending in
		 * the more glyph where cut (its byte length bounds its
		 * columns). */
		snprintf(line, sizeof line, "%s %s", d->prompt.question,
		    d->prompt.text);
		text = (int)strlen(d->prompt.text);
		if ((int)strlen(line) > r.w - 1 && text + 2 < r.w - 1) {
			x = tui_draw_text_more(w, r.y, r.x, r.w - 2 - text,
			    A_BOLD, d->prompt.question, tui_glyph(&d->glyphs,
			    TUI_GLYPH_MORE));
			x += 1 + tui_draw_text(w, r.y, r.x + x + 1, text,
			    A_BOLD, d->prompt.text);
		} else {
			for (x = 0; (int)strlen(line + x) > r.w - 1; x++)
				;
			while (((unsigned char)line[x] & 0xc0) == 0x80)
				x++;
			x = tui_draw_text(w, r.y, r.x, r.w - 1, A_BOLD,
			    line + x);
		}
		wattrset(w, A_REVERSE);
		mvwaddnwstr(w, r.y, r.x + x, &cursor, 1);
		wattrset(w, A_NORMAL);
		return;
	}
	if (d->solve.run != NULL && !tui_solve_said_shown(d)) {
		snprintf(line, sizeof line, "optimizing: incumbent %s  bound %s  "
		    "gap %.1f%%  elapsed %s  %s  (Esc cancels)",
		    pw_fmt_seconds(inc, sizeof inc, pr->incumbent),
		    pw_fmt_seconds(bound, sizeof bound, pr->bound),
		    pr->gap * 100, pw_fmt_seconds(el, sizeof el, pr->elapsed),
		    pr->phase != NULL ? pr->phase : "start");
		a = tui_attr(TUI_COLOR_PANEL) | A_BOLD;
	} else if (d->message[0] != '\0') {
		snprintf(line, sizeof line, "%s", d->message);
		a = d->message_is_error ? tui_attr(TUI_COLOR_ERROR) :
		    tui_attr(TUI_COLOR_PANEL);
	} else {
		tui_keys_hints(hints, sizeof hints, d->mode, false);
		tui_panels_hints_fit(line, sizeof line, hints, r.w);
	}
	/* A message longer than the line says that it goes on. */
	tui_draw_text_more(w, r.y, r.x, r.w, a, line, tui_glyph(&d->glyphs,
	    TUI_GLYPH_MORE));
}

/* Writes one row of the key table, "names\tmodes\thelp" as
 * tui_keys_print prints it, in three columns at Y of IN. */
static void
tui_panels_key_row(WINDOW *w, struct tui_rect in, int y, char *row)
{
	static const int col[] = { 0, TUI_PANELS_KEYS_W,
	    TUI_PANELS_KEYS_W + TUI_PANELS_MODES_W };
	attr_t a = tui_attr(TUI_COLOR_PANEL);
	char *field, *next = row;
	int k;

	for (k = 0; k < 3 && (field = strsep(&next, "\t")) != NULL; k++)
		tui_draw_text(w, y, in.x + col[k], k < 2 ? col[k + 1] - col[k] -
		    1 : in.w - col[k], k == 0 ? a | A_BOLD : k == 1 ?
		    tui_attr(TUI_COLOR_HINT) : a, field);
}

void
tui_draw_help(WINDOW *w, const struct tui *d, const struct tui_layout *l)
{
	struct tui_rect in = tui_draw_box(w, d, l->panel,
	    "keys (Up/Down scroll, Esc closes)");
	int top = d->help_top, row;
	char *text = NULL, *line, *next;
	size_t len = 0;
	FILE *fp;

	/* The rows are what tui_keys_print prints, so that the screen and
	 * the documentation say the same. */
	if ((fp = open_memstream(&text, &len)) == NULL)
		return;
	tui_keys_print(fp);
	fclose(fp);
	if (top > (int)tui_nkeys - in.h)
		top = (int)tui_nkeys - in.h;
	if (top < 0)
		top = 0;
	next = text;
	for (row = -top; row < in.h && (line = strsep(&next, "\n")) != NULL &&
	    *line != '\0'; row++) {
		if (row >= 0)
			tui_panels_key_row(w, in, in.y + row, line);
	}
	free(text);
}

void
tui_draw_form(WINDOW *w, const struct tui *d, const struct tui_layout *l)
{
	struct tui_rect in = tui_draw_box(w, d, l->panel,
	    "constraints (Tab next, Enter edits, x removes a pin, Esc closes)");
	wchar_t cursor = tui_glyph(&d->glyphs, TUI_GLYPH_CURSOR);
	int n = tui_form_nfields(d), first = 0, f, row, x;
	char label[128], value[256];
	attr_t a;

	/* Scroll so that the focused field shows. */
	if (d->form.field >= in.h)
		first = d->form.field - in.h + 1;
	for (row = 0, f = first; row < in.h && f < n; row++, f++) {
		tui_draw_text(w, in.y + row, in.x, TUI_PANELS_LABEL_W,
		    tui_attr(TUI_COLOR_PANEL),
		    tui_form_label(d, f, label, sizeof label));
		a = tui_attr(f == d->form.field ? TUI_COLOR_FIELD_ACTIVE :
		    TUI_COLOR_FIELD);
		if (f == d->form.field && d->form.editing) {
			x = tui_draw_text(w, in.y + row, in.x +
			    TUI_PANELS_LABEL_W, in.w - TUI_PANELS_LABEL_W - 1,
			    a, d->form.text);
			wattrset(w, a | A_REVERSE);
			mvwaddnwstr(w, in.y + row, in.x + TUI_PANELS_LABEL_W + x,
			    &cursor, 1);
			wattrset(w, A_NORMAL);
		} else {
			tui_draw_text(w, in.y + row, in.x + TUI_PANELS_LABEL_W,
			    in.w - TUI_PANELS_LABEL_W, a,
			    tui_form_value(d, f, value, sizeof value));
		}
	}
}

void
tui_draw_error(WINDOW *w, const struct tui *d, const struct tui_layout *l)
{
	struct tui_rect in = tui_draw_box(w, d, l->panel, "error (Esc closes)");
	int row = 0;

	tui_draw_wrap(w, in, &row, tui_attr(TUI_COLOR_ERROR),
	    d->error_text != NULL ? d->error_text : "");
}
