/*
 * pwlua.h - Lua 5.4 scripting: problem scripts and experiment scripts run
 * in a sandboxed interpreter that sees the core and the optimizer as the
 * module "pipewright" (docs/lua.md).  Uses src/ and solver/; nothing in
 * src/ knows of it.
 *
 * Every Lua call runs under lua_pcall: a script's error, a runaway loop
 * (the instruction budget, the wall-clock limit) or a memory hog (the
 * memory cap) comes back as
 * an error code and a message naming the file and line, with the Lua
 * traceback; it never unwinds through the caller.  One interpreter per
 * thread.
 */
#ifndef PWLUA_H
#define PWLUA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pipewright.h"
#include "solver.h"

/* Defaults for a zero field of struct pwlua_config. */
#define PWLUA_INSTRUCTIONS	1000000000UL	/* Lua VM instructions per run */
#define PWLUA_MEMORY		((size_t)512 << 20)	/* bytes */
#define PWLUA_SECONDS		60.0	/* wall-clock seconds per run */
#define PWLUA_SECONDS_MAX	31622400.0	/* the most one may ask: a year */

struct pwlua_config {
	unsigned long instructions; /* budget for each run; 0: the default */
	/* Cap on the interpreter's memory, with the C objects it makes for
	 * the script (problems, schedules, ...); 0: the default. */
	size_t	memory;
	/* NULL-terminated list of directories below which pw.write_json and
	 * pw.write_csv may write and pw.load may read; NULL: scripts cannot
	 * write files and read below the current directory only. */
	const char *const *write_dirs;
	double	seconds;	/* wall-clock limit of each run; 0: the default */
	/* Where scripts' print and pw.show write; NULL: stdout, and stderr
	 * for a problem or model script (its command's stdout is its own).
	 * A front end that owns the terminal (the designer) passes a stream
	 * of its own. */
	FILE	*output;
};

struct pwlua;

/* Returns an interpreter the caller owns (CONFIG NULL: the defaults and
 * no writing), or NULL with ERR set when a write directory does not exist,
 * the memory cap is too small to start, or the time limit is not from 0
 * to PWLUA_SECONDS_MAX. */
struct pwlua *pwlua_new(const struct pwlua_config *, struct pw_error *);
void	pwlua_free(struct pwlua *);

/* Runs the script PATH with the global arg = { [0] = PATH, ARGV... } (the
 * arguments also reach the chunk as "...").  Returns PW_OK; PW_ERR_IO
 * when PATH cannot be read; PW_ERR_INPUT for anything the script does
 * wrong (syntax, a runtime error, bytecode, the budget, the time or the
 * cap); PW_ERR_INTERNAL when the watchdog thread cannot start.  Globals
 * persist between runs of one interpreter; the budget and the time do
 * not. */
int	pwlua_run(struct pwlua *, const char *path, int argc,
	    char *const *argv, struct pw_error *);

/* What a problem script's pw.problem{...} states for the optimizer
 * (objective, time_limit, precede): the defaults of a solve of it. */
struct pwlua_solve_prefs {
	bool	has_objective;
	enum pw_objective objective;
	double	time_limit;		/* seconds; 0: not stated */
	struct pw_pin *pins;		/* owned, [npins] */
	size_t	npins;
};

void	pwlua_solve_prefs_free(struct pwlua_solve_prefs *);

/* Runs the problem script PATH, which returns a problem (or a schedule,
 * whose problem is taken).  Returns PW_OK and a problem the caller owns
 * in *OUT, and with PREFS (may be NULL) what the problem states for the
 * optimizer (a schedule's, what its script's problem stated, but for
 * pins where the schedule split the model again), which the caller
 * frees with pwlua_solve_prefs_free; or an error as pwlua_run does. */
int	pwlua_problem(struct pwlua *, const char *path, struct pw_problem **out,
	    struct pwlua_solve_prefs *prefs, struct pw_error *);

/* The problem script PATH in a fresh interpreter of CONFIG (NULL: the
 * defaults), as pw_problem_read reads a JSON file: a problem the caller
 * owns, or NULL with ERR set; PREFS as for pwlua_problem. */
struct pw_problem *pwlua_problem_read(const char *path,
	    const struct pwlua_config *, struct pwlua_solve_prefs *prefs,
	    struct pw_error *);

/* Writes P to PATH (atomically) as a problem script that returns it:
 * a problem with an origin as pw.problem of its model, hardware and
 * split; one with given stages as its stages, memory and link, so that
 * pwlua_problem_read gives back the same problem.  Returns PW_OK, or
 * PW_ERR_IO naming the file. */
int	pwlua_problem_write(const char *path, const struct pw_problem *p,
	    struct pw_error *);

/* The model script PATH (it returns a model: a pw.model table, or a
 * plain table of a model's fields) in a fresh interpreter with the
 * defaults, for --model FILE.lua.  Returns PW_OK with the model in *OUT
 * and its name in *NAME (the caller frees it; OUT->name points to it, or
 * is NULL without one); else PW_ERR_INPUT or PW_ERR_IO naming the file
 * and the field. */
int	pwlua_model_read(const char *path, struct pw_model *out, char **name,
	    struct pw_error *);

/* Whether PATH names a Lua script (it ends in ".lua"). */
bool	pwlua_is_script(const char *path);

#endif /* PWLUA_H */
