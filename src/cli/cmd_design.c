/*
 * cmd_design.c - the design command: the terminal designer (tui/) on a
 * problem, a problem script or a schedule file, and whether this terminal
 * can have it (what the main job asks).  Built without ncursesw, the
 * command says so and does nothing else.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "cmd.h"
#ifdef HAVE_DESIGNER
#include "tui.h"
#endif

bool
pw_cmd_design_usable(void)
{
#ifdef HAVE_DESIGNER
	const char *term = getenv("TERM");

	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
	    term != NULL && term[0] != '\0' && strcmp(term, "dumb") != 0;
#else
	return false;
#endif
}

int
pw_cmd_design(const struct pw_cmd_args *a)
{
#ifdef HAVE_DESIGNER
	struct pw_cmd_compare_say say;
	struct pw_problem *problem = NULL;
	struct tui_options opts;
	struct pw_error err;
	int status;

	if (a->keys) {
		tui_keys_print(stdout);
		return PW_EXIT_OK;
	}
	/* The model options' problem is built here, its errors the
	 * command line's; a file is the designer's to load (and reload). */
	if (a->model[PW_CMD_M_MODEL] != NULL &&
	    (problem = pw_cmd_model_problem(a)) == NULL)
		return PW_EXIT_INPUT;
	memset(&opts, 0, sizeof opts);
	opts.path = a->pos[0];
	opts.problem = problem;
	opts.ascii = a->ascii;
	opts.mono = a->mono;
	pw_cmd_compare_say_init(&say, "design");
	opts.choosing = pw_cmd_compare_progress;
	opts.choosing_arg = &say;
	if ((status = tui_design(&opts, &err)) != PW_EXIT_OK)
		pw_cmd_say("design: %s", err.msg);
	pw_problem_free(problem);
	return status;
#else
	(void)a;
	pw_cmd_say("design: this pipewright was built without the terminal"
	    " designer (configure found no ncursesw)");
	return PW_EXIT_INPUT;
#endif
}
