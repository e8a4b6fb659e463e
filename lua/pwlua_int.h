/*
 * pwlua_int.h - the private interface between the files of lua/:
 * state.c (the sandbox), pattern.c (the metered string patterns),
 * path.c (which files scripts may read and write), module.c (the module
 * table, pw.load, helpers), model.c (pw.model, pw.hardware), problem.c
 * (pw.problem, problem objects), schedule.c (schedule objects,
 * pw.schedule, pw.solve, pw.show), plan.c (pw.plan) and write.c
 * (pw.write_*).
 *
 * Rule for every C function called from Lua: read and check all arguments
 * first, then push the userdata that will own any C memory, and only then
 * allocate it.  A Lua error (including a memory error) may unwind from
 * any Lua API call; C memory not yet owned by a userdata would leak.
 * C memory made for a script is charged to its memory cap (pwl_charge)
 * before it is allocated, and released by the userdata that owns it.
 * Work C does for a script out of proportion to the instructions that
 * asked for it is charged to the instruction budget (pwl_work), which
 * is also where the wall-clock deadline is read: nothing else of Lua's
 * is touched by the watchdog thread.
 *
 * No script may reach a metatable of ours (each has __metatable) or
 * free what C still uses: an object that points into another keeps that
 * one alive through a user value, and a collected object is all NULL,
 * which every method refuses.
 */
#ifndef PWLUA_INT_H
#define PWLUA_INT_H

#include <limits.h>
#include <math.h>

#include <lua.h>
#include <lauxlib.h>

#include "pipewright.h"
#include "plan.h"
#include "solver.h"
#include "pwlua.h"

/* Metatable names, which Lua's messages give as the objects' types:
 * the module's names for them. */
#define PWL_PROBLEM	"pw.problem"
#define PWL_SCHEDULE	"pw.schedule"
#define PWL_MODEL	"pw.model"
#define PWL_HARDWARE	"pw.hardware"
/* What getmetatable says of every metatable scripts could reach. */
#define PWL_LOCKED	"locked"

/* A problem object; its user value is a table caching derived fields. */
struct pwl_problem {
	struct pw_problem *p;	/* owned; NULL until built */
	size_t	charged;	/* bytes charged to the cap for it */
	/* Solver options stated in the script (pw.solve's defaults); its
	 * pins are owned. */
	struct pwlua_solve_prefs prefs;
};

/* A schedule object; user value 1 is the problem object of the plan's
 * problem (the script's own, or its split again), 2 a table caching
 * derived fields. */
struct pwl_schedule {
	struct pw_plan *plan;	/* owned; NULL until built */
	double	objective;	/* seconds */
	double	bound;		/* seconds */
	double	gap;
	bool	optimal;
	char	start[64];	/* where the optimizer started; "" for others */
	const char *ended;	/* why it ended (static); NULL for others */
	size_t	charged;	/* bytes charged to the cap for the plan */
};

/* state.c */
/* The directories scripts may write below (WRITE) or read below
 * (realpaths), NULL-terminated; NULL when this interpreter writes no
 * files. */
const char *const *pwl_dirs(lua_State *, bool write);
/* Loads PATH as Lua text (refusing bytecode); pushes the chunk and
 * returns LUA_OK, or pushes a message and returns an error status. */
int	pwl_loadfile(lua_State *, const char *path);
/* Charges BYTES of C memory made for the script to its memory cap and
 * adds them to *CHARGED, which the owner gives back with pwl_release;
 * raises "WHAT: ... exceeds the memory cap" when they do not fit. */
void	pwl_charge(lua_State *, size_t *charged, size_t bytes,
	    const char *what);
void	pwl_release(lua_State *, size_t *charged);
/* Charges STEPS of work done in C for the script to its instruction
 * budget, raising "WHAT: " and what is spent when the budget or the
 * run's time is ("time limit of 1 s exceeded"); every later instruction
 * then fails too, so that a pcall cannot swallow the stop. */
void	pwl_work(lua_State *, unsigned long steps, const char *what);
/* The seconds left of the run (raising when none are), and the flag
 * the watchdog sets at its deadline: pw.solve's cancel flag. */
double	pwl_time_left(lua_State *, const char *what);
atomic_int *pwl_cancel(lua_State *);

/* pattern.c */
/* What pattern matching is charged to. */
struct pwl_meter {
	/* Charges STEPS of matching: NULL, or what is spent when nothing is
	 * left (a static or long-lived string), and the matcher then raises
	 * "pattern too complex (WHY)".  The sandbox's is pwl_spend; a test
	 * runs the matcher on a bare lua_State with one that counts. */
	const char *(*charge)(struct pwl_meter *, lua_State *,
	    unsigned long steps);
	unsigned long pending;	/* steps not charged yet */
};
/* Replaces find, match, gmatch and gsub of the string library (open in
 * L) with the metered matcher, charged to METER (which outlives L). */
void	pwl_open_pattern(lua_State *, struct pwl_meter *meter);

/* path.c */
/* The string argument ARG of the function WHAT, a NOUN ("path",
 * "name"), refusing a NUL inside, which C would read as its end. */
const char *pwl_whole_arg(lua_State *, int arg, const char *what,
	    const char *noun);
/* Raises unless the script may read PATH: it exists and, links
 * resolved, lies below one of the read directories. */
void	pwl_path_read(lua_State *, const char *what, const char *path);
/* Raises unless the script may write PATH: "-" (stdout), or a file
 * whose directory resolves below one of the write directories and which
 * is not there yet or is a regular file (a link or a device could lead
 * elsewhere). */
void	pwl_path_write(lua_State *, const char *what, const char *path);

/* module.c */
int	pwl_open(lua_State *);
/* Raises the formatted message with the calling script's file:line, as
 * luaL_error does (whose format knows no %g or %zu); never returns. */
int	pwl_fail(lua_State *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Pushes a userdata that frees the pointer in its one slot when it is
 * collected, and returns the slot (NULL): the owner of C memory that is
 * built while Lua calls may still raise.  BYTES are charged to the cap
 * (raising, WHAT naming it, when they do not fit) until then.
 * pwl_box_with frees it with DESTROY instead of free. */
void	**pwl_box(lua_State *, size_t bytes, const char *what);
void	**pwl_box_with(lua_State *, size_t bytes, const char *what,
	    void (*destroy)(void *));
/* The bytes of N records of SIZE bytes, raising (WHAT naming them) when
 * they do not fit in a size_t. */
size_t	pwl_array_bytes(lua_State *, size_t n, size_t size, const char *what);
/* Locks the metatable at the top against scripts: getmetatable then
 * says PWL_LOCKED, and setmetatable refuses to replace it. */
void	pwl_lock(lua_State *);
/* Makes the metatable NAME with the functions META, locked against
 * scripts (its __metatable field), its objects read-only (a __newindex
 * that raises, unless META has one), and leaves the stack as it was. */
void	pwl_new_metatable(lua_State *, const char *name, const luaL_Reg *meta);
/* Raises "WHAT: unknown field 'x'" for a key of the table at IDX that is
 * not among NAMES: an array of records STRIDE bytes apart, each starting
 * with its name (a const char *), ended by a NULL name. */
void	pwl_check_fields(lua_State *, int idx, const char *what,
	    const void *names, size_t stride);
/* The field NAME of the table at IDX, or DEF when it is absent (nil); a
 * field of the wrong type raises an error naming WHAT and NAME, and so
 * does an absent one whose DEF is PWL_NEED_NUMBER, PWL_NEED_INT or
 * PWL_NEED_INTEGER.  An integer must also lie in [MIN, MAX]. */
#define PWL_NEED_NUMBER	(-HUGE_VAL)
#define PWL_NEED_INT	INT_MIN
#define PWL_NEED_INTEGER LUA_MININTEGER
double	pwl_get_number(lua_State *, int idx, const char *what,
	    const char *name, double def);
int	pwl_get_int(lua_State *, int idx, const char *what, const char *name,
	    int def, int min, int max);
/* Whether the value at IDX is a number with a whole value within Lua's
 * integers (4 and 4.0 alike), that value in *OUT. */
bool	pwl_whole(lua_State *, int idx, lua_Integer *out);
/* The number at IDX, a NaN as the positive one (0/0 is -nan on most
 * machines, which a message would print so). */
lua_Number pwl_tonumber(lua_State *, int idx);
/* The value at IDX as a message quotes it, pushed beside it as
 * luaL_tolstring does: its tostring, "nan" for any NaN. */
const char *pwl_got(lua_State *, int idx);
/* pwl_get_int over Lua's whole range (a seed's 63 bits). */
lua_Integer pwl_get_integer(lua_State *, int idx, const char *what,
	    const char *name, lua_Integer def, lua_Integer min, lua_Integer max);
bool	pwl_get_bool(lua_State *, int idx, const char *what, const char *name,
	    bool def);
/* Raises "WHAT: NAME: must be UTF-8 text without NUL bytes" unless the
 * LEN bytes at S are (they may reach a file). */
void	pwl_check_text(lua_State *, const char *s, size_t len,
	    const char *what, const char *name);
/* A string field, which must be valid UTF-8 (it may reach a file): the
 * table at IDX keeps it alive. */
const char *pwl_get_string(lua_State *, int idx, const char *what,
	    const char *name, const char *def);
/* The index in NAMES (NULL-terminated) of the string field NAME, or DEF
 * when it is absent. */
int	pwl_get_option(lua_State *, int idx, const char *what,
	    const char *name, int def, const char *const *names);

/* Leaves the options table at ARG, the last argument: an empty one in
 * place of none or nil; anything else but a table raises. */
void	pwl_opts_arg(lua_State *, int arg);

/* Pushes a list of the N doubles at FIRST, STRIDE bytes apart: one
 * member of each record of an array. */
void	pwl_push_doubles(lua_State *, const double *first, int n,
	    size_t stride);

/* model.c */
void	pwl_open_model(lua_State *);
/* Reads the model or hardware at IDX (named WHAT in errors): a table, or
 * a preset's name, which pushes the preset's table.  OUT's strings point
 * into the table, which must stay on the stack while OUT is used. */
void	pwl_model_get(lua_State *, int idx, const char *what,
	    struct pw_model *out);
void	pwl_hardware_get(lua_State *, int idx, const char *what,
	    struct pw_hardware *out);
/* Pushes a table like pw.model's or pw.hardware's. */
void	pwl_model_push(lua_State *, const struct pw_model *);
void	pwl_hardware_push(lua_State *, const struct pw_hardware *);

/* problem.c */
/* The limit ORIGIN's split states, before its reserve, that leaves LIMIT
 * bytes: the split's own when it does, exactly. */
double	pwl_split_limit(const struct pw_origin *, double limit);
void	pwl_open_problem(lua_State *);
/* Pushes an empty problem object and returns it. */
struct pwl_problem *pwl_problem_push(lua_State *);
/* Gives TO, a problem object of FROM's model split again, FROM's
 * objective and time limit; not its pins, which name FROM's stages. */
void	pwl_problem_inherit(struct pwl_problem *to,
	    const struct pwl_problem *from);
/* An estimate of the bytes of a problem of these counts. */
/* Where the running script's print and pw.show write (stdout, or
 * stderr for a script read as a problem or a model). */
FILE	*pwl_out(lua_State *);
size_t	pwl_problem_bytes(int devices, int nstages);
/* The bytes of P's names and origin beside pwl_problem_bytes: what a
 * copy of P holds of the script's strings. */
size_t	pwl_problem_text_bytes(const struct pw_problem *p);
/* Checks the counts of a problem about to be made for the script (WHAT
 * prefixes the message) and charges its bytes to PB. */
void	pwl_problem_charge(lua_State *, struct pwl_problem *pb, int devices,
	    int nstages, int microbatches, const char *what);
struct pwl_problem *pwl_problem_check(lua_State *, int arg);
struct pwl_problem *pwl_problem_test(lua_State *, int idx);
/* Pushes OP as {kind = "F", stage = s + 1, mb = j + 1}. */
void	pwl_op_push(lua_State *, struct pw_op);
/* The number of must-precede pairs in the list at IDX (named WHAT),
 * raising when it is more than P has ops. */
size_t	pwl_pins_count(lua_State *, int idx, const char *what,
	    const struct pw_problem *p);
/* Reads the N of them (pwl_pins_count), for problem P, into OUT. */
void	pwl_pins_read(lua_State *, int idx, const char *what, size_t n,
	    const struct pw_problem *, struct pw_pin *out);

/* schedule.c */
void	pwl_open_schedule(lua_State *);
/* Pushes NAME = X into the table at the top. */
void	pwl_set_number(lua_State *, const char *name, double x);
/* Pushes an empty schedule object for the problem object at PROBLEM,
 * charged for a schedule of P (WHAT names it), and returns it. */
struct pwl_schedule *pwl_schedule_push(lua_State *, int problem,
	    const struct pw_problem *p, const char *what);
struct pwl_schedule *pwl_schedule_test(lua_State *, int idx);
/* Makes S's plan of PROBLEM and SCHED (both taken, also when this
 * raises) and fills the solver's figures: RES's for a solved schedule,
 * else (RES NULL) the makespan as the objective with the optimizer's
 * lower bound on it; orders that do not time raise, prefixed by WHAT.
 * A run whose time ran out meanwhile stops at the next instruction. */
void	pwl_schedule_finish(lua_State *, struct pwl_schedule *s,
	    struct pw_problem *problem, struct pw_schedule *sched,
	    const struct pw_solve_result *res, const char *what);
/* An estimate of the bytes of a plan of a problem of DEVICES and
 * NSTAGES whose op universe is UNIVERSE (see pwl_schedule_bytes). */
size_t	pwl_plan_bytes(lua_State *, int devices, int nstages,
	    size_t universe, const char *what);

/* The search options pw.solve and pw.plan share, read from the table at
 * 2 by one rule: OBJECTIVE (default the problem's, else the one given),
 * OFFLOAD, TIME_LIMIT (positive seconds), ITERATION_LIMIT (0, the
 * default: none; up to INT_MAX) and SEED (0 to INT_MAX).  The caller
 * fills the defaults first. */
struct pwl_search_opts {
	enum pw_objective objective;
	enum pw_offload_mode offload;
	double	time_limit;
	long	iteration_limit;
	unsigned long seed;
};
void	pwl_search_opts(lua_State *, const struct pwl_problem *pb,
	    const char *who, struct pwl_search_opts *o);

/* plan.c */
void	pwl_open_plan(lua_State *);

/* write.c */
void	pwl_open_write(lua_State *);

/* The names of enum pw_recompute, by value, NULL-terminated: the core's. */
#define pwl_recompute_names	pw_recompute_names

#endif /* PWLUA_INT_H */
