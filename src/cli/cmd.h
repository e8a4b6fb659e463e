/*
 * cmd.h - the private interface of the command line: main.c (the command
 * table, help, dispatch), cmd_parse.c (each row's options), cmd.c (what
 * every command shares: messages, registries, exit statuses), cmd_plan.c
 * (loading problems and schedules) and the handlers in the other cmd_*.c
 * files.
 */
#ifndef PW_CMD_H
#define PW_CMD_H

#include <stdio.h>

#include "pipewright.h"
#include "solver.h"

/* Registries a command's help lists after its text. */
#define PW_CMD_LIST_FAMILIES	0x1
#define PW_CMD_LIST_FORMATS	0x2

/* A row's MAXPOS for a command whose first positional argument ends its
 * options: that argument and all after it are the command's (REST). */
#define PW_CMD_REST	(-1)

/* pw_cmd_parse's answer when the command should go on. */
#define PW_CMD_GO	(-1)

/* The most columns show draws in. */
#define PW_CMD_WIDTH_MAX 100000

struct pw_command;

/* A command line after parsing; the strings point into argv. */
struct pw_cmd_args {
	const struct pw_command *cmd;	/* the command's row */
	const char *pos[2];	/* positional arguments, NULL when absent */
	const char *family;
	const char *output;	/* "-" unless given */
	const char *format;
	int	width;		/* 0: from the terminal */
	bool	json;
	bool	critical;
	const char *write_dir;
	char	**rest;		/* PW_CMD_REST: [nrest] */
	int	nrest;
	/* solve */
	const char *from;
	double	time_limit;	/* 0: the solver's default */
	long	iteration_limit;	/* 0: none */
	enum pw_objective objective;
	bool	objective_given;
	enum pw_offload_mode offload;
	unsigned long seed;
	const char *write_lp;
	/* design */
	bool	ascii;
	bool	mono;
	bool	keys;
};

/* One row of the command table in main.c. */
struct pw_command {
	const char *name;
	const char *synopsis;	/* the arguments after the name */
	const char *summary;	/* one line */
	const char *help;	/* the paragraphs of --help after the summary */
	int	lists;		/* PW_CMD_LIST_* */
	/* The options it accepts, as their short letters (--help always),
	 * and from MINPOS to MAXPOS (at most 2, or PW_CMD_REST) positional
	 * arguments.  OPTIONS NULL: none, not even --help; every argument
	 * is positional. */
	const char *options;
	int	minpos;
	int	maxpos;
	/* Returns an enum pw_exit. */
	int	(*run)(const struct pw_cmd_args *);
};

/* main.c: the full help of CMD. */
void	pw_command_usage(FILE *, const struct pw_command *);

/* cmd_parse.c: parses ARGV (ARGV[0] is the command's name) as CMD's row
 * says into A.  Returns PW_CMD_GO, or the exit status when the command is
 * done (its help printed, or an error reported). */
int	pw_cmd_parse(const struct pw_command *cmd, int argc, char **argv,
	    struct pw_cmd_args *a);

/* The handlers. */
int	pw_cmd_schedule(const struct pw_cmd_args *);
int	pw_cmd_problem(const struct pw_cmd_args *);
int	pw_cmd_compare(const struct pw_cmd_args *);
int	pw_cmd_eval(const struct pw_cmd_args *);
int	pw_cmd_check(const struct pw_cmd_args *);
int	pw_cmd_show(const struct pw_cmd_args *);
int	pw_cmd_export(const struct pw_cmd_args *);
int	pw_cmd_script(const struct pw_cmd_args *);
int	pw_cmd_solve(const struct pw_cmd_args *);
int	pw_cmd_design(const struct pw_cmd_args *);

/* cmd_design.c: whether the designer can take this terminal: it is built,
 * stdin and stdout are terminals, and TERM is set and not "dumb".  What
 * decides between the designer and the report when no command is given. */
bool	pw_cmd_design_usable(void);

/* cmd.c: prints "pipewright: MESSAGE" as one line on stderr (newlines in
 * the message become "; "). */
void	pw_cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cmd.c: the same for a note, which does not end the command. */
void	pw_cmd_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cmd.c: a registry (PW_CMD_LIST_FAMILIES or _FORMATS), one line per
 * entry with its summary. */
void	pw_cmd_list(FILE *, int which);
/* cmd.c: reports that NAME is not in registry WHICH (a WHAT), naming
 * those that are. */
void	pw_cmd_unknown(int which, const char *what, const char *name);
/* cmd.c: the exit status of a failure RC (enum pw_rc). */
int	pw_cmd_status(int rc);
/* cmd.c: what to call the input PATH in messages ("-" is stdin, NULL the
 * default problem). */
const char *pw_cmd_label(const char *path);

struct pw_plan;
struct pwlua_solve_prefs;

/* cmd_plan.c: returns the problem of PATH (a problem or a schedule file,
 * or a Lua problem script), or the built-in default one when PATH is
 * NULL; the caller owns it.  With PREFS (may be NULL), what a script
 * states for the optimizer, which the caller frees
 * (pwlua_solve_prefs_free).  NULL after reporting why. */
struct pw_problem *pw_cmd_problem_load(const char *path,
	    struct pwlua_solve_prefs *prefs);
/* cmd_plan.c: as pw_cmd_problem_load, also giving a schedule file's
 * pins in *PINS (the caller frees it; NULL and 0 when it has none, and
 * for every other kind of PATH). */
struct pw_problem *pw_cmd_problem_load_pins(const char *path,
	    struct pwlua_solve_prefs *prefs, struct pw_pin **pins,
	    size_t *npins);
/* cmd_plan.c: family NAME's plan for the problem of PATH (NULL: the
 * default problem) in *OUT, which the caller frees; returns an enum
 * pw_exit, with *OUT NULL after reporting a failure. */
int	pw_cmd_plan_build(const char *path, const char *name,
	    struct pw_plan **out);
/* cmd_plan.c: the plan of a schedule file (saying when its stored times
 * differ), or with FAMILY of a problem (or schedule) file whose problem
 * gets that family's schedule; as pw_cmd_plan_build. */
int	pw_cmd_plan_load(const char *path, const char *family,
	    struct pw_plan **out);
/* cmd_plan.c: writes PLAN's schedule to OUTPUT ("-": stdout) and its
 * metrics to stdout, or to stderr when the schedule goes to stdout: the
 * stream in *REPORT, for what the command says after them.  Returns an
 * enum pw_exit after reporting any failure. */
int	pw_cmd_plan_write(const struct pw_plan *plan, const char *output,
	    FILE **report);
/* cmd_plan.c: as pw_cmd_plan_write, with the user's pins in the
 * schedule file. */
int	pw_cmd_plan_write_pins(const struct pw_plan *plan,
	    const struct pw_pin *pins, size_t npins, const char *output,
	    FILE **report);

#endif /* PW_CMD_H */
