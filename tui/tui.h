/*
 * tui.h - the terminal designer: a full-screen ncursesw timeline of a
 * schedule that the user edits, re-optimizes and compares (docs/designer.md).
 * Uses src/ (pipewright.h, plan.h), solver/ (solver.h) and lua/ (pwlua.h)
 * through their public headers only; only the program's entry point
 * (src/cli/) calls it.
 */
#ifndef PW_TUI_H
#define PW_TUI_H

#include <stdbool.h>
#include <stdio.h>

#include "pipewright.h"
#include "plan.h"

struct tui_options {
	/* A problem (.json, .lua) or a schedule file; NULL: the built-in
	 * default problem. */
	const char *path;
	/* With PATH NULL: this problem (copied; the model options' of the
	 * command line) instead of the default one; NULL: the default. */
	const struct pw_problem *problem;
	bool	ascii;		/* force ASCII glyphs (else: by the locale) */
	bool	mono;		/* force monochrome (else: by TERM, NO_COLOR) */
	/* Told, before the screen, as the designer builds every family to
	 * open a problem with the best (pw_compare_rows' progress, given
	 * CHOOSING_ARG); NULL: nothing. */
	pw_compare_progress_fn *choosing;
	void	*choosing_arg;
};

/*
 * Runs the designer on the terminal (stdin and stdout) until the user
 * quits.  Returns an enum pw_exit: PW_EXIT_OK after a quit, PW_EXIT_INPUT
 * (with ERR set) when the file cannot be loaded or the terminal cannot be
 * used; the terminal is restored on every path, a fatal signal included.
 */
int	tui_design(const struct tui_options *, struct pw_error *);

/* Prints the key table (the help screen's rows) as text, one key per
 * line: what docs/designer.md lists and its test compares. */
void	tui_keys_print(FILE *);

#endif /* PW_TUI_H */
