/*
 * colors.c - the one table of colours (enum tui_color -> a colour pair and
 * a monochrome attribute, htop's CRT.h) and the glyphs of each mode.
 */
#include <assert.h>

#include "tui_int.h"

/* A colour of the table: FG on BG (-1: the terminal's default) with
 * EXTRA in colour mode; MONO without colour.  FG -2 means no pair: the
 * entry modifies the colour it is drawn over (the selection's relatives,
 * the critical path, a pin keep their kind's colour). */
struct tui_colors_row {
	short	fg, bg;
	attr_t	extra;
	attr_t	mono;
};

#define TUI_COLORS_NOPAIR	(-2)

static const struct tui_colors_row tui_colors_table[TUI_NCOLORS] = {
	[TUI_COLOR_F] = { COLOR_BLACK, COLOR_CYAN, 0, 0 },
	[TUI_COLOR_B] = { COLOR_BLACK, COLOR_GREEN, 0, 0 },
	[TUI_COLOR_W] = { COLOR_BLACK, COLOR_YELLOW, 0, 0 },
	[TUI_COLOR_BW] = { COLOR_BLACK, COLOR_MAGENTA, 0, 0 },
	[TUI_COLOR_OFFLOAD] = { COLOR_WHITE, COLOR_BLUE, 0, 0 },
	[TUI_COLOR_RELOAD] = { COLOR_BLUE, COLOR_WHITE, 0, 0 },
	[TUI_COLOR_SELECTED] = { COLOR_WHITE, COLOR_BLACK, A_BOLD,
	    A_REVERSE | A_BOLD },
	[TUI_COLOR_RELATED] = { TUI_COLORS_NOPAIR, 0, A_BOLD | A_UNDERLINE,
	    A_BOLD | A_UNDERLINE },
	[TUI_COLOR_CRITICAL] = { TUI_COLORS_NOPAIR, 0, A_BOLD, A_BOLD },
	[TUI_COLOR_OFF_PATH] = { TUI_COLORS_NOPAIR, 0, A_DIM, 0 },
	[TUI_COLOR_BLOCKED] = { COLOR_WHITE, COLOR_RED, A_BOLD,
	    A_REVERSE | A_BLINK },
	[TUI_COLOR_PIN] = { TUI_COLORS_NOPAIR, 0, A_UNDERLINE, A_UNDERLINE },
	[TUI_COLOR_MEMORY] = { COLOR_GREEN, -1, 0, 0 },
	[TUI_COLOR_MEMORY_OVER] = { COLOR_RED, -1, A_BOLD, A_REVERSE | A_BOLD },
	[TUI_COLOR_RULER] = { COLOR_CYAN, -1, 0, 0 },
	[TUI_COLOR_HEADER] = { COLOR_WHITE, COLOR_BLUE, A_BOLD, A_REVERSE },
	[TUI_COLOR_LABEL] = { COLOR_YELLOW, -1, 0, A_BOLD },
	[TUI_COLOR_HINT] = { COLOR_CYAN, -1, 0, 0 },
	[TUI_COLOR_ERROR] = { COLOR_WHITE, COLOR_RED, A_BOLD,
	    A_REVERSE | A_BOLD },
	[TUI_COLOR_PANEL] = { -1, -1, 0, 0 },
	[TUI_COLOR_FIELD] = { COLOR_CYAN, -1, 0, A_UNDERLINE },
	[TUI_COLOR_FIELD_ACTIVE] = { COLOR_BLACK, COLOR_YELLOW, 0, A_REVERSE },
	[TUI_COLOR_SERIES + 0] = { COLOR_CYAN, -1, A_BOLD, A_BOLD },
	[TUI_COLOR_SERIES + 1] = { COLOR_GREEN, -1, A_BOLD, 0 },
	[TUI_COLOR_SERIES + 2] = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	[TUI_COLOR_SERIES + 3] = { COLOR_MAGENTA, -1, A_BOLD, 0 },
	[TUI_COLOR_SERIES + 4] = { COLOR_RED, -1, A_BOLD, A_BOLD },
	[TUI_COLOR_SERIES + 5] = { COLOR_BLUE, -1, A_BOLD, 0 },
	[TUI_COLOR_SERIES + 6] = { COLOR_WHITE, -1, A_BOLD, A_BOLD },
	[TUI_COLOR_SERIES + 7] = { COLOR_CYAN, -1, 0, 0 },
};

/* The attribute of each colour in the mode tui_colors_init chose. */
static attr_t tui_colors_attr[TUI_NCOLORS];

void
tui_colors_init(struct tui_glyphs *g)
{
	const struct tui_colors_row *r;
	short pair = 1;
	int c;

	if (!g->mono && !has_colors())
		g->mono = true;
	if (!g->mono) {
		start_color();
		use_default_colors();
	}
	for (c = 0; c < TUI_NCOLORS; c++) {
		r = &tui_colors_table[c];
		if (g->mono) {
			tui_colors_attr[c] = r->mono;
		} else if (r->fg == TUI_COLORS_NOPAIR) {
			tui_colors_attr[c] = r->extra;
		} else {
			init_pair(pair, r->fg, r->bg);
			tui_colors_attr[c] = COLOR_PAIR(pair) | r->extra;
			pair++;
		}
	}
}

attr_t
tui_attr(enum tui_color c)
{
	assert(c >= 0 && c < TUI_NCOLORS);
	return tui_colors_attr[c];
}

char
tui_kind_glyph(enum pw_kind k)
{
	static const char glyph[PW_NKINDS] = { 'F', 'B', 'W', 'X', 'o', 'r' };

	assert(k >= 0 && k < PW_NKINDS);
	return glyph[k];
}

wchar_t
tui_glyph(const struct tui_glyphs *g, enum tui_glyph which)
{
	/* Indexed by enum tui_glyph: UTF-8, then ASCII. */
	static const wchar_t glyph[TUI_NGLYPHS][2] = {
		[TUI_GLYPH_HLINE] = { L'\x2500', L'-' },	/* ─ */
		[TUI_GLYPH_VLINE] = { L'\x2502', L'|' },	/* │ */
		[TUI_GLYPH_IDLE] = { L' ', L' ' },
		[TUI_GLYPH_DIM] = { L'\x00b7', L'.' },		/* · */
		[TUI_GLYPH_PIN] = { L'+', L'+' },
		[TUI_GLYPH_BLOCKED] = { L'?', L'?' },
		[TUI_GLYPH_OVER] = { L'!', L'!' },
		[TUI_GLYPH_CURSOR] = { L'_', L'_' },
		[TUI_GLYPH_RIGHT_HALF] = { L'\x2590', L' ' },	/* ▐ */
		[TUI_GLYPH_RIGHT_EIGHTH] = { L'\x2595', L' ' },	/* ▕ */
		[TUI_GLYPH_MORE] = { L'\x2026', L'>' },	/* … */
	};

	assert(which >= 0 && which < TUI_NGLYPHS);
	return glyph[which][g->ascii];
}

wchar_t
tui_glyph_level(const struct tui_glyphs *g, int eighths)
{
	static const wchar_t utf8[9] = L" \x2581\x2582\x2583\x2584\x2585"
	    L"\x2586\x2587\x2588";			/* ▁▂▃▄▅▆▇█ */
	static const wchar_t ascii[9] = L" .,:-=*#@";

	if (eighths < 0)
		eighths = 0;
	if (eighths > 8)
		eighths = 8;
	return g->ascii ? ascii[eighths] : utf8[eighths];
}

wchar_t
tui_glyph_left(int eighths)
{
	/* ▏▎▍▌▋▊▉: U+258F down to U+2589, then the full block. */
	assert(eighths >= 1 && eighths <= 8);
	return eighths == 8 ? L'\x2588' : (wchar_t)(0x2590 - eighths);
}
