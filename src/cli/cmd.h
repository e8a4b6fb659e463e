/*
 * cmd.h - the private interface of the command line: main.c (the command
 * table, help, dispatch), cmd_parse.c (each row's options), cmd.c (what
 * every command shares: messages, registries, exit statuses), cmd_plan.c
 * (loading problems and schedules) and the handlers in the other cmd_*.c
 * files.
 */
#ifndef PW_CMD_H
#define PW_CMD_H

#include <stdatomic.h>
#include <stdio.h>

#include "pipewright.h"
#include "solver.h"

/* Registries a command's help lists after its text. */
#define PW_CMD_LIST_FAMILIES	0x1
#define PW_CMD_LIST_FORMATS	0x2
#define PW_CMD_LIST_MODEL	0x4	/* the model options and presets */
/* The presets' registries, which pw_cmd_list and pw_cmd_unknown name
 * too. */
#define PW_CMD_REG_MODELS	0x8
#define PW_CMD_REG_HARDWARE	0x10
/* Not a registry: the row's --memory-limit also stands without --model
 * (launch: the limit of what it runs). */
#define PW_CMD_OWN_LIMIT	0x20

/*
 * The one-line model options (cmd_model.c), long options only, in one
 * table from which their enum, their letters in the option table
 * (cmd_parse.c) and which plan takes again all derive.  A row that takes
 * PROBLEM names PW_CMD_MODEL_OPTIONS, and "X" (the model's --offload
 * link, a flag) unless it has solve's --offload auto|on|off ("x"), which
 * then decides the link.  Their values go to pw_cmd_args.model by enum
 * pw_cmd_model_opt, their place in PW_CMD_MODEL_LETTERS.  Each row: the
 * enum, the letter, the long name, and whether plan takes it again (it
 * says what the model, the hardware or the memory are, not how they are
 * split: pw_cmd_model_replan).  OPT gets the options with a value, FLAG
 * the flag.
 */
#define PW_CMD_MODEL_TABLE(OPT, FLAG)					\
	OPT(PW_CMD_M_MODEL, M, "model", 1)	/* NAME|FILE.lua */	\
	OPT(PW_CMD_M_HARDWARE, H, "hardware", 1)	/* NAME */	\
	OPT(PW_CMD_M_DEVICES, P, "devices", 1)	/* P */			\
	OPT(PW_CMD_M_MICROBATCHES, N, "microbatches", 1)	/* M */	\
	OPT(PW_CMD_M_SEQ, S, "seq", 1)					\
	OPT(PW_CMD_M_MICRO_BATCH, b, "micro-batch", 1)			\
	OPT(PW_CMD_M_MEMORY_LIMIT, L, "memory-limit", 1) /* SIZE|none */ \
	OPT(PW_CMD_M_TP, T, "tp", 1)					\
	OPT(PW_CMD_M_DP, D, "dp", 1)					\
	OPT(PW_CMD_M_CHUNKS, C, "chunks", 0)				\
	OPT(PW_CMD_M_PLACEMENT, p, "placement", 0)	/* loop|v */	\
	OPT(PW_CMD_M_RECOMPUTE, r, "recompute", 0)			\
	OPT(PW_CMD_M_RESERVE, R, "reserve", 1)	/* SIZE|N% */		\
	OPT(PW_CMD_M_LAYERS, y, "layers-per-stage", 0)	/* N,N,... */	\
	FLAG(PW_CMD_M_OFFLOAD, X, "offload", 0)

#define PW_CMD_M_ENUM(opt, letter, name, replan)	opt,
#define PW_CMD_M_LETTER(opt, letter, name, replan)	#letter
#define PW_CMD_M_NONE(opt, letter, name, replan)

enum pw_cmd_model_opt {
	PW_CMD_MODEL_TABLE(PW_CMD_M_ENUM, PW_CMD_M_ENUM)
	PW_CMD_M_N
};

#define PW_CMD_MODEL_OPTIONS	PW_CMD_MODEL_TABLE(PW_CMD_M_LETTER, \
	    PW_CMD_M_NONE)
#define PW_CMD_MODEL_LETTERS	PW_CMD_MODEL_TABLE(PW_CMD_M_LETTER, \
	    PW_CMD_M_LETTER)
_Static_assert(sizeof PW_CMD_MODEL_LETTERS - 1 == PW_CMD_M_N,
    "one letter per model option");

/* A row's MAXPOS for a command whose first positional argument ends its
 * options: that argument and all after it are the command's (REST). */
#define PW_CMD_REST	(-1)
/* A row's MAXPOS for any number of positional arguments among the
 * options (calibrate's MEASURED...): they are the command's (REST). */
#define PW_CMD_MANY	(-2)

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
	bool	output_given;
	const char *format;	/* export --to; show --to, a time */
	int	width;		/* 0: from the terminal */
	int	height;		/* export's picture height; 0: the default */
	/* As written, for the range messages: a width too large for an
	 * int is kept as INT_MAX, out of every command's range. */
	const char *width_text;
	const char *height_text;
	bool	json;
	bool	csv;		/* compare */
	enum pw_compare_sort sort;	/* compare; PW_COMPARE_MAKESPAN */
	bool	critical;
	const char *write_dir;
	char	**rest;		/* PW_CMD_REST, PW_CMD_MANY: [nrest] */
	int	nrest;
	/* solve; show --from, a time */
	const char *from;
	double	time_limit;	/* 0: the solver's default */
	long	iteration_limit;	/* 0: none */
	enum pw_objective objective;
	bool	objective_given;
	enum pw_offload_mode offload;
	unsigned long seed;
	const char *write_lp;
	/* The model options' values as given (the flag's ""), NULL where
	 * absent; [PW_CMD_M_MODEL] NULL: no model. */
	const char *model[PW_CMD_M_N];
	/* plan */
	size_t	top;		/* 0: the planner's default */
	/* design */
	bool	ascii;
	bool	mono;
	bool	keys;
	/* launch */
	const char *backend;	/* NULL: pw_rt_backend_default */
	const char *transport;	/* NULL: local */
	const char *workload;	/* NULL: pw_workload_for's */
	int	iterations;	/* 0: the runtime's default */
	int	warmup;		/* -1: the runtime's default */
	int	gpus;		/* 0: every GPU visible (--gpus) */
	bool	no_check;
	bool	dry_run;
	/* eval --against; show, export, eval of a measured file */
	const char *against;
	bool	predicted;
	/* --problem: the costs of a PyTorch schedule CSV */
	const char *problem;
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
int	pw_cmd_plan(const struct pw_cmd_args *);
int	pw_cmd_launch(const struct pw_cmd_args *);
int	pw_cmd_calibrate(const struct pw_cmd_args *);

/* cmd_design.c: whether the designer can take this terminal: it is built,
 * stdin and stdout are terminals, and TERM is set and not "dumb".  What
 * decides between the designer and the report when no command is given. */
bool	pw_cmd_design_usable(void);

/* cmd.c: prints "pipewright: MESSAGE" as one line on stderr (newlines in
 * the message become "; "): an error, a warning or a note. */
void	pw_cmd_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cmd.c: says WHAT, a write that failed, with ERROR's words (an errno;
 * 0: none known). */
void	pw_cmd_say_cause(const char *what, int error);
/* cmd.c: whether A's pipeline differs from B's (its devices,
 * microbatches, stages or a stage's device): then WHY says "FIELD A's,
 * OTHER B's" for the first that does ("4 devices, against 8"). */
bool	pw_cmd_pipeline_other(const struct pw_problem *a,
	    const struct pw_problem *b, const char *other, char *why,
	    size_t len);
/* cmd.c: whether problem A differs from B: then WHY says "another
 * problem (FIELD A's, OTHER B's)" for the first field that does: the
 * pipeline's (pw_cmd_pipeline_other), then the rest in the order a
 * problem file lists them (OTHER names B: "run 1"). */
bool	pw_cmd_problem_other(const struct pw_problem *a,
	    const struct pw_problem *b, const char *other, char *why,
	    size_t len);
/* cmd.c: while SILENT, pw_cmd_say says nothing (a launcher's ranks
 * but the first, which says it for them all). */
void	pw_cmd_silence(bool silent);
/* cmd.c: a registry (PW_CMD_LIST_FAMILIES, _FORMATS, PW_CMD_REG_*), one
 * line per entry with its summary. */
void	pw_cmd_list(FILE *, int which);
/* cmd.c: reports that NAME is not in registry WHICH (a WHAT), naming
 * those that are. */
void	pw_cmd_unknown(int which, const char *what, const char *name);
/* cmd.c: the exit status of a failure RC (enum pw_rc). */
int	pw_cmd_status(int rc);
/* cmd.c: prints a table of NROWS rows of NCOLS cells (row-major, the
 * first row the header), each column as wide as its widest cell, two
 * blanks apart, no blank at the end of a line; the columns' widths go to
 * WIDTHS ([NCOLS]) unless it is NULL. */
#define PW_CMD_CELL	PW_TABLE_CELL
void	pw_cmd_table(FILE *, const char (*cell)[PW_CMD_CELL], size_t nrows,
	    int ncols, int *widths);
/* cmd.c: prints ROOT (a JSON value, taken) indented on FP; an enum
 * pw_exit after saying FAIL when it could not be written. */
int	pw_cmd_json_print(FILE *, struct json_t *root, const char *fail);
/* cmd.c: runs FN(ARG) with SIGINT and SIGTERM setting *CANCEL (cleared
 * first), a second one ending the program at once as any fatal signal
 * does; the dispositions before are restored after.  Returns FN's. */
int	pw_cmd_cancellable(atomic_int *cancel, int (*fn)(void *), void *arg);
/* cmd.c: a search's last two lines of a report: "time" (ELAPSED
 * seconds) and "ended" (WORDS, what END means), saying whether another
 * run gives the same WHAT ("schedule", "answer"). */
void	pw_cmd_ended_print(FILE *, double elapsed, enum pw_solve_end end,
	    const char *words, const char *what);

/* cmd.c: how a comparison of every family on a large problem (compare,
 * design's and launch's choice of one) goes, on stderr: before each
 * family which is next (on a terminal one line rewritten, else a line
 * each), and at the end how long it took.  A small problem's says
 * nothing. */
struct pw_cmd_compare_say {
	const char *cmd;	/* the command, first on each line */
	double	start;		/* pw_now() when the comparison began */
	bool	tty;		/* stderr is a terminal */
};
void	pw_cmd_compare_say_init(struct pw_cmd_compare_say *, const char *cmd);
/* A pw_compare_progress_fn: ARG is a pw_cmd_compare_say; it never stops. */
bool	pw_cmd_compare_progress(void *arg, const struct pw_problem *,
	    size_t done);


/* cmd_model.c: reads A's --memory-limit into *LIMIT (DBL_MAX for
 * "none"; kept when absent); false after reporting what is wrong. */
bool	pw_cmd_model_limit(const struct pw_cmd_args *a, double *limit);
/* cmd_model.c: checks the model options of A against its positional
 * arguments (--model with PROBLEM, another model option without
 * --model); false after reporting what is wrong. */
bool	pw_cmd_model_usage(const struct pw_cmd_args *a);
/* cmd_model.c: what A's model options describe, as pw_cost_problem
 * takes it. */
struct pw_cmd_model {
	struct pw_model model;	/* its name in NAME for a script's */
	const struct pw_hardware *hw;	/* a preset */
	struct pw_split split;	/* its layers_per_stage owned, or NULL */
	char	*name;		/* owned, or NULL */
};
/* cmd_model.c: reads A's model options (A->model[PW_CMD_M_MODEL] set)
 * into M, which the caller frees with pw_cmd_model_free; false, M
 * empty, after reporting in one line the option and the value at
 * fault. */
bool	pw_cmd_model_read(const struct pw_cmd_args *a, struct pw_cmd_model *m);
void	pw_cmd_model_free(struct pw_cmd_model *m);
/* cmd_model.c: the problem of A's model options, built by
 * pw_cost_problem; the caller owns it.  NULL after reporting, in one
 * line, the option and the value at fault, or the device that cannot
 * hold one microbatch and what it needs. */
struct pw_problem *pw_cmd_model_problem(const struct pw_cmd_args *a);
/* cmd_model.c: "llama3-8b on 8 H100-SXM" for messages, into BUF. */
char	*pw_cmd_model_label(const struct pw_cmd_args *a, char *buf,
	    size_t len);
/* cmd_model.c: the command line that plans A's input again, for
 * compare's imbalance warning: "pipewright plan FILE", or plan with the
 * model options as given (its split's own options left out).  The
 * caller frees it. */
char	*pw_cmd_model_replan(const struct pw_cmd_args *a);
/* cmd_model.c: the model options' paragraph of a command's help. */
void	pw_cmd_model_help(FILE *, const struct pw_command *);
/* cmd_parse.c: the long name of the option of letter C ("model"). */
const char *pw_cmd_option_name(int c);

/* cmd.c: what to call the input PATH in messages ("-" is stdin, NULL the
 * default problem). */
const char *pw_cmd_label(const char *path);

struct pw_plan;
struct pwlua_solve_prefs;

/* cmd_plan.c: returns the problem of A's input: the model options'
 * (cmd_model.c), PATH A->pos[0] (a problem or a schedule file, or a Lua
 * problem script), or the built-in default one when neither is given;
 * the caller owns it.  With PREFS (may be NULL), what a script states
 * for the optimizer, which the caller frees (pwlua_solve_prefs_free).
 * NULL after reporting why. */
struct pw_problem *pw_cmd_problem_load(const struct pw_cmd_args *a,
	    struct pwlua_solve_prefs *prefs);
/* cmd_plan.c: as pw_cmd_problem_load, also giving a schedule file's
 * pins in *PINS (the caller frees it; NULL and 0 when it has none, and
 * for every other kind of input). */
struct pw_problem *pw_cmd_problem_load_pins(const struct pw_cmd_args *a,
	    struct pwlua_solve_prefs *prefs, struct pw_pin **pins,
	    size_t *npins);
/* cmd_plan.c: the objective and time limit of a search of A's input
 * into *OBJECTIVE and *TIME_LIMIT: the command line's, else what a Lua
 * problem states (PREFS), else the command line's defaults (*TIME_LIMIT
 * kept when neither gives one). */
void	pw_cmd_prefs_apply(const struct pw_cmd_args *a,
	    const struct pwlua_solve_prefs *prefs,
	    enum pw_objective *objective, double *time_limit);
/* cmd_plan.c: what to call A's input in messages: the model's label
 * (pw_cmd_model_label), else pw_cmd_label of A->pos[0]. */
const char *pw_cmd_input_label(const struct pw_cmd_args *a);
/* cmd_plan.c: family A->family's plan for A's input (as
 * pw_cmd_problem_load) in *OUT, which the caller frees; returns an enum
 * pw_exit, with *OUT NULL after reporting a failure. */
int	pw_cmd_plan_build(const struct pw_cmd_args *a, struct pw_plan **out);
/* cmd_plan.c: the PyTorch schedule CSV PATH (docs/interop.md) read for
 * the problem of A's --problem and timed, in *OUT (the caller frees
 * it); as pw_cmd_plan_build. */
int	pw_cmd_csv_plan(const struct pw_cmd_args *a, const char *path,
	    struct pw_plan **out);
/* cmd_plan.c: the same as a schedule file reads: the problem and the
 * timed ops (the caller owns both), for the commands that take those. */
int	pw_cmd_csv_read(const struct pw_cmd_args *a, const char *path,
	    struct pw_problem **problem, struct pw_timed_op **ops,
	    size_t *nops);
/* cmd_plan.c: the plan of schedule file A->pos[0] (saying when its
 * stored times differ; a PyTorch CSV by pw_cmd_csv_plan), or with A->family of A's input, which gets that
 * family's schedule; as pw_cmd_plan_build. */
int	pw_cmd_plan_load(const struct pw_cmd_args *a, struct pw_plan **out);
/* cmd_plan.c: says on stderr, in one line, when the times stored in
 * PATH (OPS, NOPS) differ from PLAN's (by more than 1e-9 of the larger
 * of the makespan and the time). */
void	pw_cmd_compare_times(const struct pw_plan *plan, const char *path,
	    const struct pw_timed_op *ops, size_t nops);
/* cmd_plan.c: writes PROBLEM to PATH ("-": stdout), a problem script
 * where PATH ends in .lua, else a problem file; an enum pw_exit after
 * reporting what failed. */
int	pw_cmd_problem_save(const char *path, const struct pw_problem *problem);
/* cmd_plan.c: whether outputs A and B ("-": stdout, the file it is open
 * on) would write one regular file: the same one, or one name in one
 * directory where either is yet to be made. */
bool	pw_cmd_outputs_same(const char *a, const char *b);
/* cmd_plan.c: whether OUTPUT can be written, tried before a search so
 * that it fails first (a regular file, or a new one, is opened and
 * abandoned); an enum pw_exit after reporting why not. */
int	pw_cmd_output_check(const char *output);
/* cmd_plan.c: pw_cmd_output_check for a JSON file (a schedule, a
 * measured run), whose name must also read back as JSON
 * (pw_json_path_check). */
int	pw_cmd_json_output_check(const char *output);
/* cmd_plan.c: whether OUTPUT (NULL: none) is stdout: "-", or a name of
 * what stdout is open on (/dev/stdout, /dev/fd/1, the file it was
 * redirected to), where a report would mix with the file. */
bool	pw_cmd_output_is_stdout(const char *output);
/* cmd_plan.c: PW_EXIT_OK unless OUTPUT names the regular file one of
 * INPUTS[0..N) names (NULL or "-": none), by what the names lead to,
 * not by their text: then one line saying that CMD would replace WHAT
 * ("the input"), and PW_EXIT_INPUT. */
int	pw_cmd_output_spares(const char *cmd, const char *output,
	    const char *const *inputs, int n, const char *what);
/* cmd_plan.c: where schedule and solve write A's schedule: A->output, or
 * NULL when -o was not given and stdout is a terminal, where the JSON
 * would only scroll by. */
const char *pw_cmd_schedule_output(const struct pw_cmd_args *a);
/* cmd_plan.c: writes PLAN's schedule to OUTPUT ("-": stdout) and its
 * metrics to stdout, or to stderr when the schedule goes to stdout: the
 * stream in *REPORT, for what the command says after them.  OUTPUT NULL
 * (pw_cmd_schedule_output): the metrics and a hint to use -o on stdout,
 * no schedule.  Returns an enum pw_exit after reporting any failure. */
int	pw_cmd_plan_write(const struct pw_plan *plan, const char *output,
	    FILE **report);
/* cmd_plan.c: as pw_cmd_plan_write, with the user's pins in the
 * schedule file. */
int	pw_cmd_plan_write_pins(const struct pw_plan *plan,
	    const struct pw_pin *pins, size_t npins, const char *output,
	    FILE **report);

/* cmd_launch.c: a measured run against its prediction
 * (pw_measured_compare's CMP) on FP: the step time, each device's busy
 * time and peak (measured, predicted, ratio), the NOPS ops that differ
 * most (all of them when NOPS is 0), and the mean absolute error. */
void	pw_cmd_measured_print(FILE *, const struct pw_measured_cmp *cmp,
	    size_t nops);
/* cmd_launch.c: the same as a JSON object (all the ops), which the
 * caller owns. */
struct json_t *pw_cmd_measured_json(const struct pw_measured_cmp *cmp);

/* cmd_view.c: the timing and metrics that show, export and eval draw of
 * a plan: a measured file's measured timeline (unless --predicted), with
 * its header line ("measured (cpu, 5 iterations, median step)"), else
 * the plan's own, HEAD "". */
struct pw_cmd_view {
	const struct pw_timing *timing;		/* OWN_TIMING or the plan's */
	const struct pw_metrics *metrics;
	struct pw_timing *own_timing;		/* owned; NULL: the plan's */
	struct pw_metrics *own_metrics;
	char	head[128];
};
/* cmd_view.c: the plan of A's input in *PLAN (the caller frees it,
 * also on failure) and V for it, with the file's measured run where
 * MEASURED; an enum pw_exit after reporting a failure.  V is the
 * caller's (pw_cmd_view_free; the plan must outlive it). */
int	pw_cmd_view_plan(const struct pw_cmd_args *a, bool measured,
	    struct pw_plan **plan, struct pw_cmd_view *v);
void	pw_cmd_view_free(struct pw_cmd_view *v);

#endif /* PW_CMD_H */
