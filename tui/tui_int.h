/*
 * tui_int.h - the designer's private interface, shared by the files of
 * tui/ and its tests.
 *
 * The state (struct tui: the plan, selection, view window, undo list,
 * panels) is kept apart from drawing and from input.  Input is a key ->
 * action table (actions.c): an action changes the state and returns what
 * must be redrawn (TUI_DRAW_*), or what the loop must do with the terminal
 * (TUI_DO_*), the way htop's Action.c does.  Drawing (draw_*.c) reads the
 * state and writes into windows; it never changes the plan.  The loop
 * (loop.c) owns the terminal: it reads keys, runs actions, polls the
 * optimizer and the sweep, and redraws what the actions asked for.
 *
 * Files: state.c (the state, loading, plan changes, undo), actions.c (the
 * key table and its actions), form.c (the constraints panel), prompt.c
 * (the input line and its questions), solve.c (the optimizer in the
 * background), compare.c and sweep.c (the compare view and the memory
 * sweep), job.c (a background job's thread and holds), plan.c (the
 * design search: the planner on a thread), launch.c
 * (the schedule run for real on a thread, and the measured run it
 * leaves), recover.c (the recovery file), layout.c (where each panel and
 * lane goes), colors.c (the colour enum and the glyphs), draw_*.c (one
 * drawing function per panel), loop.c (the terminal and the event loop).
 */
#ifndef PW_TUI_INT_H
#define PW_TUI_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include <curses.h>

#include "pipewright.h"
#include "plan.h"
#include "runtime.h"
#include "solver.h"
#include "tui.h"

struct tui;

/* ------------------------------------------------------------------ */
/* What an action returns                                              */

#define TUI_DRAW_HEADER		0x001u	/* problem, source, metrics */
#define TUI_DRAW_TIMELINE	0x002u	/* ruler, lanes, memory strips */
#define TUI_DRAW_DETAILS	0x004u	/* the selected op's panel */
#define TUI_DRAW_MESSAGE	0x008u	/* the message line */
#define TUI_DRAW_PANEL		0x010u	/* the open panel, form or prompt */
#define TUI_DRAW_ALL		0x01fu
#define TUI_DO_QUIT		0x100u	/* leave the loop */
#define TUI_DO_EDITOR		0x200u	/* suspend the screen, run $EDITOR on
					 * tui.edit_path, then tui_edit_done */
#define TUI_DO_SUSPEND		0x400u	/* Ctrl-Z: restore the terminal, stop */
#define TUI_DO_REPAINT		0x800u	/* Ctrl-L: repaint every cell, as the
					 * terminal may hold another's output */

/* ------------------------------------------------------------------ */
/* Colours: one enum indexed by op kind and by state (htop's CRT.h)    */

enum tui_color {
	TUI_COLOR_F,		/* indexed by enum pw_kind: F .. RELOAD */
	TUI_COLOR_B,
	TUI_COLOR_W,
	TUI_COLOR_BW,
	TUI_COLOR_OFFLOAD,
	TUI_COLOR_RELOAD,
	TUI_COLOR_SELECTED,	/* the selected op */
	TUI_COLOR_RELATED,	/* its predecessors and successors */
	TUI_COLOR_CRITICAL,	/* an op of the critical path (toggle) */
	TUI_COLOR_OFF_PATH,	/* an op off it, while it is shown */
	TUI_COLOR_BLOCKED,	/* a deadlocked op and what it waits for */
	TUI_COLOR_PIN,		/* a pinned op */
	TUI_COLOR_MEMORY,	/* the memory strip within the limit */
	TUI_COLOR_MEMORY_OVER,	/* above the limit */
	TUI_COLOR_RULER,
	TUI_COLOR_HEADER,
	TUI_COLOR_LABEL,	/* lane labels */
	TUI_COLOR_HINT,		/* the message line's key hints */
	TUI_COLOR_ERROR,	/* the message line's error, the error panel */
	TUI_COLOR_PANEL,	/* panels' frames and text */
	TUI_COLOR_FIELD,	/* a form field */
	TUI_COLOR_FIELD_ACTIVE,	/* the field with the focus */
	TUI_COLOR_SERIES,	/* the sweep's plot: TUI_COLOR_SERIES + i */
	TUI_NCOLORS = TUI_COLOR_SERIES + 8
};

/* Which glyphs the terminal gets. */
struct tui_glyphs {
	bool	ascii;		/* no UTF-8: '#', '|', letters only */
	bool	mono;		/* no colour: reverse and bold only */
};

/* colors.c: the curses attribute of colour C in the current mode (after
 * tui_colors_init, which the loop calls once the screen exists). */
void	tui_colors_init(struct tui_glyphs *);
attr_t	tui_attr(enum tui_color c);
/* colors.c: the one-letter glyph of an op kind ('F', 'B', 'W', 'X' for
 * fused BW, 'o' offload, 'r' reload): the bar's fill where no microbatch
 * number fits, so that kinds read apart without colour. */
char	tui_kind_glyph(enum pw_kind);

/* The glyphs that differ between UTF-8 and ASCII. */
enum tui_glyph {
	TUI_GLYPH_HLINE,	/* panel rules */
	TUI_GLYPH_VLINE,
	TUI_GLYPH_IDLE,		/* a lane where nothing runs */
	TUI_GLYPH_DIM,		/* an op off the critical path, when shown:
				 * its bar's fill after its kind's glyph */
	TUI_GLYPH_PIN,		/* the last cell of a pinned op */
	TUI_GLYPH_BLOCKED,	/* the first cell of a deadlocked op */
	TUI_GLYPH_OVER,		/* a memory strip's column above the limit */
	TUI_GLYPH_CURSOR,	/* where typing goes */
	TUI_GLYPH_RIGHT_HALF,	/* a bar starting in a cell's second half */
	TUI_GLYPH_RIGHT_EIGHTH,	/* ... in its last eighth */
	TUI_GLYPH_MORE,		/* the end of a line cut short */
	TUI_NGLYPHS
};
/* colors.c: glyph WHICH in G's mode. */
wchar_t	tui_glyph(const struct tui_glyphs *g, enum tui_glyph which);
/* colors.c: a level of EIGHTHS eighths (0..8, clamped) of a cell's
 * height: the memory strip's and the sweep's (ASCII: " .,:-=*#@"). */
wchar_t	tui_glyph_level(const struct tui_glyphs *g, int eighths);
/* colors.c: the block filling the left EIGHTHS (1..8) of a cell, for a
 * bar's end (UTF-8 only). */
wchar_t	tui_glyph_left(int eighths);

/* ------------------------------------------------------------------ */
/* The view window                                                     */

struct tui_view {
	double	t0;		/* the time at the timeline's left edge, s */
	double	span;		/* seconds across the timeline's width */
	int	top;		/* first device block shown (scrolling) */
	bool	whole;		/* fitted, not zoomed since: every new
				 * schedule is shown whole again */
	bool	*folded;	/* [nfolded]: block folded to its compute lane */
	int	nfolded;	/* the devices of the plan (a new problem's
				 * count resizes FOLDED) */
};

/* ------------------------------------------------------------------ */
/* Layout: where panels and lanes go for a screen of ROWS x COLS       */

#define TUI_MIN_ROWS	24
#define TUI_MIN_COLS	80

struct tui_rect {
	int	y, x, h, w;
};

enum tui_lane_kind {
	TUI_LANE_COMPUTE,
	TUI_LANE_TRANSFER,	/* one per channel the device's transfers use */
	TUI_LANE_MEMORY,
	TUI_LANE_MEASURED,	/* the compute ops as a launch measured them */
};

struct tui_lane {
	int	device;
	enum tui_lane_kind kind;
	int	channel;	/* TRANSFER: the channel; else -1 */
	int	y;		/* screen row */
};

struct tui_layout {
	bool	too_small;	/* below TUI_MIN_ROWS x TUI_MIN_COLS */
	int	rows, cols;
	struct tui_rect header;
	struct tui_rect ruler;
	struct tui_rect timeline;	/* the lanes' area, labels included */
	int	label_w;		/* columns of lane labels in it */
	struct tui_rect details;
	struct tui_rect message;
	struct tui_rect panel;		/* the form, help, error, compare,
					 * sweep: over the timeline */
	int	nlanes;			/* the lanes that fit */
	struct tui_lane *lanes;		/* [nlanes], owned by the layout */
	int	last_device;		/* the last device with a lane shown */
};

/* layout.c: whether ROWS x COLS is below TUI_MIN_ROWS x TUI_MIN_COLS,
 * where only a notice shows. */
bool	tui_too_small(int rows, int cols);
/* layout.c: computes OUT for D's state; the caller frees it with
 * tui_layout_free.  Drawing, mouse clicks and scrolling all use it. */
void	tui_layout(const struct tui *, int rows, int cols,
	    struct tui_layout *out);
void	tui_layout_free(struct tui_layout *);
/* layout.c: the lanes of PLAN's devices from VIEW's top on (folded ones
 * to their compute lane; every one when COMPUTE_ONLY; with MEASURED, the
 * measured lane after each compute lane) on the H rows from Y, into OUT
 * (H entries at least).  Returns how many; *LAST is the last device with
 * a lane shown (-1: none). */
int	tui_layout_lanes(const struct pw_plan *, const struct tui_view *,
	    int y, int h, bool compute_only, bool measured, struct tui_lane *out,
	    int *last);
/* layout.c: the time at timeline column COL (0 = the first column after
 * the labels) of a WIDTH-column timeline, and the column of time T
 * (fractional: eighths of a cell come from its fraction). */
double	tui_view_time(const struct tui_view *, int width, double col);
double	tui_view_col(const struct tui_view *, int width, double t);

/* ------------------------------------------------------------------ */
/* History: undo and redo                                              */

/* A file as the designer last read or wrote it. */
struct tui_seen {
	bool	there;		/* noted, and it was there */
	dev_t	dev;
	ino_t	ino;
	off_t	size;
	/* Its change time: any write moves it, a copy that keeps the
	 * modification time (cp -p) too. */
	struct timespec ctime;
};

/* A whole state to go back to: changes that replace the plan (constraint
 * changes, reloads, optimizer results, family switches, a sweep point). */
struct tui_snapshot {
	struct pw_plan *plan;
	struct pw_pin *pins;
	size_t	npins;
	char	*source;	/* where the schedule came from, for the header */
	int	edits;		/* edits since SOURCE made it (the orders or
				 * the problem under them) */
	int	family;		/* index in pw_families, -1 when none */
	/* The optimizer's options: the constraints panel changes them. */
	enum pw_objective objective;
	double	time_limit;
};

enum tui_change_kind {
	TUI_CHANGE_EDIT,	/* an order or anchor edit: its inverse */
	TUI_CHANGE_PIN_ADD,	/* PIN added: undo removes it */
	TUI_CHANGE_PIN_REMOVE,	/* PIN removed at INDEX: undo inserts it */
	TUI_CHANGE_PLAN,	/* SNAP is the state before (or after) */
};

struct tui_change {
	enum tui_change_kind kind;
	const char *what;	/* "move F(0,3)", ...: for the message line;
				 * owned (pw_xstrdup) */
	unsigned long id;	/* numbered as recorded, from 1 */
	struct pw_edit edit;
	int	edit_step;	/* EDIT: what performing it adds to edits */
	struct pw_pin pin;
	size_t	index;
	struct tui_snapshot snap;
};

struct tui_history {
	struct tui_change *undo;	/* a stack, [nundo] */
	size_t	nundo, capundo;
	struct tui_change *redo;
	size_t	nredo, capredo;
	unsigned long last_id;	/* the number the last change recorded got */
	/* The number of the change on top of undo when the schedule was
	 * last saved or loaded (0: none was): undoing or redoing back to it
	 * is back to what the file holds. */
	unsigned long saved_id;
};

/* ------------------------------------------------------------------ */
/* Panels and prompts                                                  */

enum tui_mode {
	TUI_MODE_TIMELINE,	/* the timeline with the details panel */
	TUI_MODE_HELP,		/* the key table */
	TUI_MODE_FORM,		/* the constraints panel has the keys */
	TUI_MODE_COMPARE,
	TUI_MODE_SWEEP,
	TUI_MODE_PLANNER,	/* the design search's candidates */
	TUI_MODE_ERROR,		/* a multi-line error (Lua traceback) */
	TUI_MODE_PROMPT,	/* the input line has the keys */
	TUI_NMODES
};
#define TUI_MODE_BIT(m)	(1u << (m))

enum tui_prompt_kind {
	TUI_PROMPT_FIND,	/* "/": an op by name, B(3,12) */
	TUI_PROMPT_GOTO,	/* "g": a device number */
	TUI_PROMPT_SAVE_AS,	/* a schedule file name */
	TUI_PROMPT_EXPORT,	/* an export format and a file */
	TUI_PROMPT_NEW_FILE,	/* "e" without a file: a .lua or .json name */
	TUI_PROMPT_COMPARE_FILE, /* a schedule file for the compare view */
	TUI_PROMPT_QUIT,	/* unsaved changes: s(ave), q(uit), Esc */
	TUI_PROMPT_RESTORE,	/* a recovery file exists: y / n */
	TUI_PROMPT_REPLACE,	/* save or export over a file: y / n */
};

struct tui_prompt {
	enum tui_prompt_kind kind;
	enum tui_mode back;	/* the mode to return to */
	char	question[160];
	char	text[1024];	/* what the user typed */
	size_t	len;
	bool	then_quit;	/* SAVE_AS from the quit prompt: quit after */
	/* The last key was refused for room: its message holds the line,
	 * the prompt's own, until the next key. */
	bool	refused;
	/* QUIT: the question q answers (tui_quit_question's when it was
	 * asked; the text shown may have moved on since). */
	const char *asked;
	/* REPLACE: the SAVE_AS or EXPORT answer waiting for the yes. */
	enum tui_prompt_kind replacing;
	char	answer[1024];
};

/* The constraints panel: the fields are form.c's table. */
struct tui_form {
	int	field;		/* the field with the focus */
	bool	editing;	/* Enter opened it for typing */
	char	text[128];	/* the text being typed */
	size_t	len;
};

/* ------------------------------------------------------------------ */
/* The optimizer in the background (solve.c)                           */

struct tui_solve {
	struct pw_solve_run *run;	/* NULL: not running */
	struct pw_progress progress;
	double	shown;		/* objective of the schedule on screen */
	struct tui_snapshot before;	/* the state it started from (undo) */
	bool	improved;	/* a better schedule replaced the plan */
	struct pw_schedule *last;	/* the last result, for compare; owned */
	struct pw_problem *last_problem;	/* its problem; owned */
	/* The last search's lower bound holds for LAST_PROBLEM under this
	 * objective and these pins only (tui_solve_bound). */
	double	bound;
	enum pw_objective bound_objective;
	struct pw_pin *bound_pins;	/* owned */
	size_t	bound_npins;
};

/* ------------------------------------------------------------------ */
/* The compare view (compare.c)                                        */

/* What a compare slot shows: a family (index >= 0) or one of these. */
#define TUI_CMP_CURRENT		(-1)
#define TUI_CMP_OPTIMIZER	(-2)
#define TUI_CMP_FILE		(-3)

struct tui_compare {
	int	source[2];	/* top and bottom */
	struct pw_plan *plan[2];	/* NULL where the source has none */
	char	*why[2];	/* why not, owned */
	char	*file;		/* the schedule file of TUI_CMP_FILE */
	int	focus;		/* the slot the keys change */
};

/* ------------------------------------------------------------------ */
/* A background job (job.c): a sweep's, a search's or a launch's thread */

/* The first member of the job's own struct (tui_sweep, tui_planner,
 * tui_launch), whose RUN and DESTROY callbacks cast it back.  RUN, on
 * the job's thread, writes what the job's struct says before FINISHED is
 * set; the designer reads the rest once it has joined the thread. */
struct tui_job {
	pthread_t thread;
	/* 2 while the thread runs and the designer holds it; who drops it
	 * to 0 frees it (DESTROY), so that the designer lets go of a running
	 * job without waiting on it. */
	atomic_int refs;
	atomic_int cancel;	/* the job's cancel flag */
	atomic_bool finished;	/* RUN has returned */
	/* Guards what the job's progress callback writes; COND is signalled
	 * when CANCEL or FINISHED is set. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void	(*run)(struct tui_job *);
	void	(*destroy)(struct tui_job *);	/* frees the whole struct */
};

/* Initialises J, held once (by the designer), its thread not started. */
void	tui_job_init(struct tui_job *j, void (*run)(struct tui_job *),
	    void (*destroy)(struct tui_job *));
/* Starts J's thread, which holds J too.  -1 when it could not: J is
 * held once still, and tui_job_release frees it. */
int	tui_job_start(struct tui_job *);
/* Drops one hold on J: the last frees it. */
void	tui_job_release(struct tui_job *);
/* Sets J's cancel flag and wakes what waits on J->cond. */
void	tui_job_cancel(struct tui_job *);
/* The designer lets go of J's running thread: cancelled, detached, and
 * released, the thread freeing J when it ends. */
void	tui_job_let_go(struct tui_job *);
/* The designer's last hold on J, never waiting: released where its
 * thread is over and JOINED, else let go (tui_job_let_go). */
void	tui_job_drop(struct tui_job *, bool joined);
/* Cancels J and waits up to SECONDS for its thread: joined and J freed
 * when it ended in time (true), else let go (tui_job_let_go; false). */
bool	tui_job_stop(struct tui_job *, double seconds);

/* ------------------------------------------------------------------ */
/* The memory sweep (sweep.c): computed on a thread                    */

/* The solver's sweep (pw_sweep_*) of the plan's problem, run on a
 * thread; drawn (draw_sweep.c) from the points published so far. */
struct tui_sweep {
	struct tui_job job;	/* first: the job's callbacks cast it back */
	struct pw_sweep *sweep;
	bool	joined;		/* the thread is over and joined */
	bool	complete;	/* it computed every point (once JOINED) */
	/* The problem swept and the last point loaded, their limits set to
	 * INFINITY (the sweep sets them): a plan whose problem is neither
	 * makes the sweep stale. */
	struct pw_problem *key;
	struct pw_problem *loaded;
	unsigned long changes;	/* tui.changes when last checked */
	size_t	shown;		/* points done when last drawn */
	size_t	limit;		/* the cursor: a limit's index */
	size_t	series;		/* and a series (pw_sweep_series_name) */
	bool	bubble;		/* the plot's y is the bubble rate, not
				 * the step time */
};

/* ------------------------------------------------------------------ */
/* The design search (plan.c): the planner on a thread                 */

/* pw_planner on a copy of the plan's problem, run on its own thread.
 * The thread writes PROGRESS under JOB.LOCK (the planner's progress
 * callback) and RC, ERR and RESULT before it sets JOB.FINISHED; the
 * designer reads PROGRESS under JOB.LOCK and the rest only once it has
 * joined the thread.  Kept after it ends: D again shows its candidates
 * while the plan's problem is the one searched or a candidate's loaded
 * from it. */
struct tui_planner {
	struct tui_job job;	/* first: the job's callbacks cast it back */
	struct pw_problem *problem;	/* the problem searched, owned */
	bool	joined;		/* the thread is over and joined */
	/* JOB.LOCK guards PROGRESS, BEST_NAME and PHASE. */
	/* best_name: BEST_NAME, phase: PHASE */
	struct pw_planner_progress progress;
	char	best_name[32];
	char	phase[16];
	struct pw_planner_opts opts;
	int	rc;		/* pw_planner's, once JOINED */
	struct pw_error err;
	struct pw_planner_result result;	/* rc == PW_OK, once JOINED */
	struct pw_problem *loaded;	/* the last candidate's problem loaded,
					 * owned; NULL: none */
	/* The progress when last shown: a change of any redraws. */
	size_t	tried_shown;
	double	best_shown;
	char	phase_shown[16];
	unsigned long changes;	/* tui.changes when last checked */
	size_t	cursor;		/* the candidate selected */
};

/* ------------------------------------------------------------------ */
/* The launch (launch.c): the schedule run for real on a thread        */

/* pw_launch of a copy of the plan's schedule on the workload's own
 * problem, on its own thread, polled by the loop as the design search
 * is.  The thread writes PROGRESS under JOB.LOCK (the launch's progress
 * callback) and RC, ERR and RESULT before it sets JOB.FINISHED; the
 * designer reads PROGRESS under JOB.LOCK and the rest only once it has
 * joined. */
struct tui_launch {
	struct tui_job job;	/* first: the job's callbacks cast it back */
	struct pw_problem *key;		/* the plan's problem at L, owned */
	struct pw_problem *problem;	/* the workload's own, owned */
	struct pw_schedule *sched;	/* what runs, owned */
	struct pw_workload work;
	struct pw_rt_opts opts;
	char	*fail_at;	/* opts.fail_at's, owned; NULL: none */
	/* Tests only (tui.launch_hold): the thread holds after the first
	 * iteration until cancelled. */
	bool	hold;
	struct pw_rt_progress progress;	/* under JOB.LOCK; iteration 0: none
					 * yet */
	int	shown;		/* the iteration last shown */
	int	rc;		/* pw_launch's, once joined */
	struct pw_error err;
	struct pw_rt_result result;
};

/* A measured run, attached to the plan it was launched from: it is
 * shown while the plan's problem and schedule are those it ran. */
struct tui_measured {
	struct pw_problem *key;		/* the plan's problem, owned */
	struct pw_schedule *sched;	/* the schedule run, owned */
	/* The schedule on the workload's own problem: the prediction the
	 * run is compared with (the plan's times, the workload's bytes). */
	struct pw_plan *plan;
	struct pw_measured *run;	/* owned */
	struct pw_timing *timing;	/* the shown iteration, owned */
	double	end;			/* its last op's end */
	struct pw_measured_cmp cmp;
};

/* ------------------------------------------------------------------ */
/* The state                                                           */

struct tui {
	/* What is designed.  A problem is read-only once loaded: a change
	 * of constraints builds a new one and a new plan. */
	struct pw_plan *plan;
	char	*path;		/* the file it came from; NULL: default */
	/* With PATH NULL: the problem it came from instead of the default
	 * one (a reload reads it again); NULL: the default. */
	struct pw_problem *given;
	bool	path_is_schedule;	/* PATH is a schedule file */
	char	*save_path;	/* where "s" writes; NULL: ask */
	char	*export_path;	/* the file export last wrote: again, no
				 * question */
	/* SAVE_PATH and EXPORT_PATH as they were last read or written: a
	 * file changed since is not replaced without a question. */
	struct tui_seen save_seen, export_seen;
	/* PATH as the state last took it (read, reloaded or saved to): e
	 * reads it again after the editor whatever the editor did, where
	 * another program changed it since. */
	struct tui_seen path_seen;
	char	*source;	/* "family 1f1b", "file x.json", "optimizer
				 * (gap 2.1%)": the header's "from" */
	int	edits;		/* edits since SOURCE made the plan: its
				 * words no longer hold alone (tui_source) */
	int	family;		/* the family of the plan, -1 when none */
	int	cycle;		/* where "f" goes next in pw_families */
	struct pw_pin *pins;
	size_t	npins;
	unsigned long changes;	/* counts every change (the recovery file
				 * is written when it moves) */

	/* What the optimizer is asked (the constraints panel sets them). */
	enum pw_objective objective;
	double	time_limit;		/* seconds */
	long	iteration_limit;	/* 0: none (tests set it) */

	/* Selection and view. */
	bool	has_sel;
	struct pw_op sel;
	bool	pin_pending;	/* "p" pressed: the next select pins */
	struct pw_op pin_first;
	bool	show_critical;
	bool	dragging;	/* button 1 went down on DRAG_OP */
	struct pw_op drag_op;
	struct tui_view view;
	int	rows, cols;	/* the screen's size, set by the loop */
	struct tui_glyphs glyphs;

	/* A deadlock after an edit: the stuck ops and what they wait for
	 * (pw_deadlock_waits), NULL when the orders time. */
	struct pw_wait *waits;
	size_t	nwaits;

	struct tui_history history;

	enum tui_mode mode;
	struct tui_prompt prompt;
	struct tui_form form;
	int	help_top;	/* first help row shown */
	char	*error_text;	/* TUI_MODE_ERROR's text, owned */

	char	message[512];	/* the message line */
	bool	message_is_error;
	double	message_at;	/* pw_now() when it was set */
	/* Draws the message line at once (the loop's; NULL: none), so that
	 * a slow synchronous step shows tui_busy's message first.  For a
	 * step that can STOP, true when the user has asked since to stop it
	 * (Esc, taken); else false, Esc left for the loop. */
	bool	(*busy_draw)(struct tui *, bool stop);

	struct tui_solve solve;
	struct tui_compare compare;
	struct tui_sweep *sweep;
	struct tui_planner *planner;
	struct tui_launch *launch;	/* NULL: none running */
	struct tui_measured *measured;	/* the last launch's, NULL: none */
	/* A test seam, false in the program: L's launch holds its thread
	 * after its first iteration until it is cancelled, so that a test
	 * finds it running whatever the machine's speed. */
	bool	launch_hold;

	char	*edit_path;	/* TUI_DO_EDITOR's file */
	/* What the file e opens held before the editor ran, EDIT_BEFORE
	 * bytes (NULL: a new file, or one changed since the state took it,
	 * which is read whatever the editor did). */
	char	*edit_before;
	size_t	edit_nbefore;
	char	*recover_path;	/* the recovery file, NULL: none */
	/* Whether RECOVER_PATH holds this session's state: written by it,
	 * or restored into it (recover.c). */
	bool	recover_owned;
	/* The lock on the recovery file this session may write (its name
	 * and ".lock", held open), fd -1: none. */
	struct tui_lock {
		int	fd;
		char	*path;
	} recover_lock;
};

/* ------------------------------------------------------------------ */
/* state.c                                                             */

/* Returns a state the caller frees with tui_free, for the file PATH (a
 * problem .json or .lua, or a schedule file; NULL: the default problem)
 * with the best feasible family's schedule (a schedule file: its own),
 * the view fitted to a ROWS x COLS screen; NULL with ERR set when PATH
 * cannot be loaded. */
struct tui *tui_new(const char *path, int rows, int cols, struct pw_error *);
/* tui_new of OPTS' path, or of its problem (copied) when the path is
 * NULL and the problem is not, telling OPTS' choosing as it picks the
 * best family. */
struct tui *tui_new_given(const struct tui_options *opts, int rows, int cols,
	    struct pw_error *);
/* Frees D: a running search is let go, a running launch stopped
 * (tui_launch_stop, up to TUI_LAUNCH_STOP seconds). */
void	tui_free(struct tui *);

/* Notes in SEEN the file PATH as it is now, just read or written. */
void	tui_seen_note(struct tui_seen *seen, const char *path);
/* The bytes of the regular file PATH, *LEN of them, in a buffer the
 * caller owns; NULL when it cannot be read (or is not a regular file). */
char	*tui_file_bytes(const char *path, size_t *len);
/* Whether PATH changed (another program wrote or replaced it) since
 * SEEN's note; a file gone since is no change (writing it loses
 * nothing), nor is one never noted. */
bool	tui_seen_changed(const struct tui_seen *seen, const char *path);

/* form.c: whether A and B are the same problem, and the link rates the
 * form shows for them (a model's hardware's, without a link) are the
 * same. */
bool	tui_form_same(const struct pw_problem *a, const struct pw_problem *b);

/* Replaces the plan by PLAN (taken), recording the state before as one
 * undoable change WHAT; SOURCE and FAMILY say where it came from (SOURCE
 * NULL: PLAN is the old orders under an edited problem, one more edit of
 * the old source).  Keeps
 * the selection when PLAN has the op, clears redo (the state is unsaved),
 * refreshes the deadlock list.  Returns TUI_DRAW_ALL. */
unsigned tui_plan_set(struct tui *, struct pw_plan *plan, const char *what,
	    const char *source, int family);
/* Applies EDIT to the plan and records its inverse as WHAT.  A refused
 * edit sets the error message and changes nothing.  Returns what to
 * redraw. */
unsigned tui_apply(struct tui *, const struct pw_edit *edit, const char *what);
/* The state's plan, pins, source, family and optimizer options as a
 * snapshot the caller owns (copies) and frees with tui_snapshot_free. */
struct tui_snapshot tui_snapshot_take(const struct tui *);
/* Returns a copy of PINS[N] the caller frees; NULL when N is 0. */
struct pw_pin *tui_pins_copy(const struct pw_pin *pins, size_t n);
void	tui_snapshot_free(struct tui_snapshot *);
/* Shows PLAN (taken) in place of the plan without recording a change
 * (the optimizer's incumbents): selection, folds and deadlock list follow. */
void	tui_plan_show(struct tui *, struct pw_plan *plan);
/* Records that the current state replaced BEFORE (taken) as one undoable
 * change WHAT: clears redo, counts the change (the state is unsaved).
 * Returns TUI_DRAW_ALL. */
unsigned tui_plan_record(struct tui *, struct tui_snapshot *before,
	    const char *what);
/* Replaces the problem by PROBLEM (taken) as one change WHAT: the
 * schedule kept when it still fits (same shape, it times), else the
 * current family's, else the best family's; a PROBLEM the form would show
 * as the current one (tui_form_same) is no change, and the message line
 * says "WHAT: unchanged".  Returns PW_OK, or an error in ERR with nothing
 * changed. */
int	tui_problem_set(struct tui *, struct pw_problem *problem,
	    const char *what, struct pw_error *);
/* Sets *BEST to the index in pw_families of the best schedule for P: of
 * the families that build one, the least makespan among those within
 * every limit, else the least makespan.  PROGRESS (NULL: none) is told
 * as each is built.  Returns PW_OK, or with ERR set PW_ERR_CANCELLED
 * where PROGRESS stopped it, PW_ERR_NOT_APPLICABLE where none builds
 * one. */
int	tui_family_best(const struct pw_problem *, pw_compare_progress_fn *,
	    void *arg, int *best, struct pw_error *);
/* The plan the caller owns of family FAMILY (-1: tui_family_best) on P,
 * its index in *USED (may be NULL): pw_plan_family, with P's limits kept
 * on a problem split again (the model's split has its own). */
int	tui_family_plan(const struct pw_problem *, int family,
	    struct pw_plan **out, int *used, struct pw_error *);
/* The op of the timed schedule that OP names as the user sees it (B or
 * W of a fused backward is its BW, BW of a split one its B): true with
 * it in *OUT, false when the schedule has none. */
bool	tui_op_find(const struct tui *, struct pw_op op, struct pw_op *out);
/* The op of DEVICE's order nearest to instant T (the one running at T,
 * else the closer of its neighbours): false when DEVICE runs nothing. */
bool	tui_op_near(const struct tui *, int device, double t,
	    struct pw_op *out);
/* Adds PIN (as one change), or removes the pin at INDEX of tui.pins. */
unsigned tui_pin_add(struct tui *, struct pw_pin pin);
unsigned tui_pin_remove(struct tui *, size_t index);
/* Undo and redo of any change; the message line says what. */
unsigned tui_undo(struct tui *);
unsigned tui_redo(struct tui *);

/* Sets the message line (printf-like); ERROR colours it. */
void	tui_message(struct tui *, bool error, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Empties the message line, which then shows the current panel's key
 * hints (a panel opened with nothing to say). */
void	tui_message_clear(struct tui *);
/* A background job's progress on the message line: not said by a key,
 * so it holds the line no time against another's (tui_solve_said_shown). */
void	tui_progress(struct tui *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The wall-clock limit of a problem script the designer runs (on opening
 * and at each reload), which the screen waits on: a batch command's is
 * PWLUA_SECONDS. */
#define TUI_SCRIPT_SECONDS	10.0

/* Why the designer neither reads nor writes what pw_path_special names:
 * opening a FIFO waits for another program, and the designer would
 * wait with it. */
#define TUI_SPECIAL_WHY	"not a regular file (a FIFO or a device would " \
	"hold the designer until another program opened it): name a file"
/* Before a slow synchronous step (building every family, a reload):
 * sets the message line and has it drawn now (tui.busy_draw). */
void	tui_busy(struct tui *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* The same before a step that can stop there: false when the user asked
 * it to (Esc). */
bool	tui_busy_stoppable(struct tui *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The view fitted to the whole schedule's time (the rows scrolled to
 * stay), and kept so for every new schedule until a zoom. */
void	tui_view_fit(struct tui *);
/* The seconds from the plan's start that the view spans when fitted: its
 * makespan, or a measured run's span when that is longer (one time axis
 * for both). */
double	tui_view_whole(const struct tui *);
/* Scrolls and pans so that the selected op is on screen. */
void	tui_view_follow(struct tui *);
/* Selects OP (present in the plan) and follows it. */
void	tui_select(struct tui *, struct pw_op op);

/* Reloads the problem from tui.path after an edit of the file ($EDITOR):
 * a Lua or JSON error opens the error panel with file:line and the
 * traceback and keeps the state; else the new problem replaces the plan
 * (its schedule kept when it fits, else the family's) as one change. */
unsigned tui_edit_done(struct tui *);

/* Saves the plan's schedule with the pins to PATH (atomic); NULL: to
 * tui.save_path.  Makes the state the saved one and removes the recovery
 * file. */
int	tui_save(struct tui *, const char *path, struct pw_error *);
/* Whether the state has changes its schedule file does not hold: undo
 * or redo back to the last save or load is none. */
bool	tui_unsaved(const struct tui *);
/* actions.c: what q asks before quitting (unsaved changes, the
 * optimizer running, or both), NULL when it quits at once (static
 * text). */
const char *tui_quit_question(const struct tui *);

/* ------------------------------------------------------------------ */
/* actions.c: the key table                                            */

/* Keys that are not curses' (KEY_*) or characters. */
#define TUI_KEY_CTRL(c)	((c) & 0x1f)
#define TUI_KEY_ESC	27

typedef unsigned (*tui_action)(struct tui *);

struct tui_key {
	int	keys[4];	/* the codes, 0-terminated */
	const char *names;	/* "Left h" */
	unsigned modes;		/* TUI_MODE_BIT()s where it acts */
	tui_action act;
	const char *help;	/* what it does, one line */
	const char *hint;	/* its words on the message line ("? help"),
				 * NULL when it has none */
};

extern const struct tui_key tui_keys[];
extern const size_t tui_nkeys;

/* The hints of MODE's keys (the rows' hint words, two blanks apart, the
 * keys most wanted first) into BUF; the keys of the greeting when
 * GREETING. */
void	tui_keys_hints(char *buf, size_t len, enum tui_mode mode,
	    bool greeting);

/* Runs the action bound to KEY in the current mode (the prompt and the
 * form's typing first take their keys).  Returns what to redraw and do;
 * 0 for an unbound key. */
unsigned tui_key(struct tui *, int key);
/* A mouse event at screen ROW, COL (button 1 press: select; wheel:
 * zoom), on a layout of the current screen.  It acts in
 * TUI_MODE_TIMELINE only; a key that changes the mode ends a drag. */
unsigned tui_mouse(struct tui *, const struct tui_layout *, int row, int col,
	    mmask_t buttons);

/* ------------------------------------------------------------------ */
/* form.c: the constraints panel's fields                              */

/* How many fields the form has (one memory limit per device among
 * them), each field's label and current value as text. */
int	tui_form_nfields(const struct tui *);
const char *tui_form_label(const struct tui *, int field, char *buf,
	    size_t len);
const char *tui_form_value(const struct tui *, int field, char *buf,
	    size_t len);
/* The pin (its index in tui.pins) whose row FIELD is: the form lists
 * every pin after its fields, not editable as text.  -1: a field. */
int	tui_form_pin(const struct tui *, int field);
/* A key while the form has the keys and a field is being typed (Enter
 * sets it, Esc cancels).  Returns what to redraw. */
unsigned tui_form_key(struct tui *, int key);
/* Sets FIELD from TEXT ("40 GiB", "inf", "v", "span", "12 s"): a new
 * problem and plan as one change, or the optimizer's options.  A bad
 * value returns PW_ERR_INPUT with a one-line reason in ERR and changes
 * nothing; a field a problem with given stages cannot change says so. */
int	tui_form_set(struct tui *, int field, const char *text,
	    struct pw_error *);

/* ------------------------------------------------------------------ */
/* prompt.c                                                            */

/* Whether A and B name one file: both there and it, or where either is
 * not there (yet), the same place to write (./x and x, a link to x). */
bool	tui_same_file(const char *a, const char *b);
/* Opens the input line for KIND with QUESTION and TEXT typed already. */
unsigned tui_prompt_open(struct tui *, enum tui_prompt_kind,
	    const char *question, const char *text);
/* Closes the prompt, back to the mode it opened over. */
void	tui_prompt_close(struct tui *);
/* A key while the prompt is open: typing, Backspace, Enter (submit),
 * Esc (cancel). */
unsigned tui_prompt_key(struct tui *, int key);
/* "s": saves to SAVE_PATH (not NULL), asking first where another
 * program changed the file since it was read or written.  Returns what to
 * redraw. */
unsigned tui_prompt_save(struct tui *);
/* Line editing shared by the prompt and the form: a printable KEY is
 * appended to TEXT (of CAP bytes, *LEN used), Backspace removes the last
 * character, Ctrl-U all of them; a key past CAP is refused on D's
 * message line, not dropped unseen (a unit cut off changes the value).
 * Returns 1 where KEY was one of these, -1 where it was refused so, 0
 * for any other key. */
int	tui_prompt_type(struct tui *d, char *text, size_t *len, size_t cap,
	    int key);
/* Asks for "FORMAT FILE", naming the export registry's formats. */
unsigned tui_prompt_export_open(struct tui *);

/* ------------------------------------------------------------------ */
/* solve.c                                                             */

/* Starts the optimizer from the current schedule with the pins and the
 * form's objective and limits; the message line shows its progress. */
unsigned tui_solve_begin(struct tui *);
/* Polls a running search (the loop calls it at least 5 times a second):
 * shows each better schedule as it arrives, and the result when it ends
 * as one undoable change.  Returns what to redraw; 0 when idle. */
unsigned tui_solve_tick(struct tui *);
/* Esc: cancels the search, keeping the best schedule so far. */
unsigned tui_solve_cancel(struct tui *);
bool	tui_solve_running(const struct tui *);
/* Whether a message said lately by a key (a refusal while the search
 * runs, an export) keeps the message line from the progress: long
 * enough to be read. */
bool	tui_solve_said_shown(const struct tui *);
/* The lower bound the header shows: the running search's, else the last
 * search's while the plan's problem, the objective and the pins are
 * those it was computed under; *GAP is the current plan's objective
 * against it, (obj - bound) / obj.  False when there is none. */
bool	tui_solve_bound(const struct tui *, double *bound, double *gap);
/* Cancels a running search and waits (within pw_solve's 100 ms) for its
 * result to become the plan, as one change: before a save, so that what
 * is written is what undo knows. */
void	tui_solve_settle(struct tui *);
/* Blocks until the search has something new (at most SECONDS): what the
 * loop waits on instead of sleeping while a search runs. */
void	tui_solve_wait(struct tui *, double seconds);

/* ------------------------------------------------------------------ */
/* compare.c                                                           */

/* Opens the compare view: the best family and the current schedule. */
unsigned tui_compare_open(struct tui *);
/* Sets slot SLOT's source (TUI_CMP_* or a family index) and builds it. */
unsigned tui_compare_set(struct tui *, int slot, int source);
/* Cycles the focused slot's source forwards (STEP 1) or back (-1). */
unsigned tui_compare_cycle(struct tui *, int step);
/* Frees both slots and the file (tui_free, and on leaving the view). */
void	tui_compare_clear(struct tui *);
/* "family zb-h1", "current schedule", "optimizer result", "file x.json":
 * slot SLOT's source, written into BUF and returned. */
const char *tui_compare_name(const struct tui *, int slot, char *buf,
	    size_t len);

/* ------------------------------------------------------------------ */
/* sweep.c                                                             */

/* Opens the memory sweep, starting its thread when it has not run for
 * this problem. */
unsigned tui_sweep_open(struct tui *);
/* Polls the thread; returns what to redraw (0 when nothing new). */
unsigned tui_sweep_tick(struct tui *);
/* Moves the sweep's cursor (DX points along the limits, DY among the
 * series) and loads the point's schedule (LOAD). */
unsigned tui_sweep_move(struct tui *, int dx, int dy);
unsigned tui_sweep_load(struct tui *);
/* "b": switches the plot's y between step time and bubble rate. */
unsigned tui_sweep_axis(struct tui *);
/* Returns a sweep, its thread not started, that tui_sweep_free frees:
 * nothing set but its job (tests fill in one run to the end). */
struct tui_sweep *tui_sweep_alloc(void);
/* Frees S (NULL: nothing); a running sweep is cancelled and let go, its
 * thread freeing it when it ends, not waited on. */
void	tui_sweep_free(struct tui_sweep *);

/* ------------------------------------------------------------------ */
/* plan.c                                                              */

/* D: opens the design search's panel, starting the planner on the plan's
 * problem (the form's objective and time limit, tui.iteration_limit)
 * unless the last search is of it or of a candidate loaded from it. */
unsigned tui_planner_open(struct tui *);
/* Polls the thread (the loop calls it at least 5 times a second):
 * returns what to redraw, 0 when nothing is new (a change of the tried
 * count, the best or the phase is).  A running search whose problem is
 * no longer the plan's is cancelled, as a sweep is. */
unsigned tui_planner_tick(struct tui *);
bool	tui_planner_running(const struct tui *);
/* Esc: cancels a running search, whose best candidates so far are
 * listed once it stops (within the planner's 100 ms). */
unsigned tui_planner_cancel(struct tui *);
/* Moves the cursor STEP candidates; Enter opens the cursor's candidate
 * as the current schedule with its problem, as one undoable change. */
unsigned tui_planner_move(struct tui *, int step);
unsigned tui_planner_load(struct tui *);
/* What frees memory in design DG, into BUF: "-", the recomputation's
 * label (pw_recompute_label: "selective", "full"), each with "+offload"
 * ("offload" alone without recomputation). */
void	tui_planner_saving(const struct pw_design *dg, char *buf, size_t len);
/* A copy of the search's progress, taken under its lock, its best_name
 * in BEST_NAME and its phase in PHASE. */
struct pw_planner_progress tui_planner_progress(struct tui_planner *,
	    char best_name[32], char phase[16]);
/* Frees S (NULL: nothing) without waiting: a running search is
 * cancelled and let go, its thread freeing it when it ends. */
void	tui_planner_free(struct tui_planner *);

/* ------------------------------------------------------------------ */
/* launch.c                                                            */

/* L: launches the plan's schedule in the background on the default
 * backend (pw_rt_backend_default) with the workload pw_workload_for
 * gives on its own problem, without memory
 * limits; the message line shows its progress. */
unsigned tui_launch_begin(struct tui *);
/* Polls the launch (the loop calls it at least 5 times a second): its
 * progress, its end (the measured run attached, or its error), a problem
 * change (which cancels it); drops a measured run that no longer
 * describes the plan.  Returns what to redraw; 0 when nothing is new. */
unsigned tui_launch_tick(struct tui *);
bool	tui_launch_running(const struct tui *);
/* Esc: stops a running launch (within the engine's 100 ms). */
unsigned tui_launch_cancel(struct tui *);
/* Quitting: cancels a running launch and waits for its thread up to
 * TUI_LAUNCH_STOP seconds (the engine stops within 100 ms), so that its
 * workers and their BLAS are not still running when exit() runs the
 * libraries' destructors; then frees S (NULL: nothing): a launch
 * still running is let go, its thread freeing it when it ends. */
#define TUI_LAUNCH_STOP	2.0
void	tui_launch_stop(struct tui_launch *);
/* Attaches RUN (taken, whatever this returns), measured on PROBLEM (the
 * workload's own problem of the plan's; taken too) for the plan's
 * schedule, as the measured run shown; the view fits both spans.
 * PW_ERR_INPUT with ERR when RUN does not match them. */
int	tui_measured_attach(struct tui *, struct pw_problem *problem,
	    struct pw_measured *run, struct pw_error *);
/* The measured run while it describes the plan (its problem and
 * schedule those run), else NULL. */
const struct tui_measured *tui_measured_of(const struct tui *);
/* OP's row of M's comparison; NULL when it has none. */
const struct pw_op_error *tui_measured_op(const struct tui_measured *m,
	    struct pw_op op);
void	tui_measured_free(struct tui_measured *);

/* ------------------------------------------------------------------ */
/* recover.c                                                           */

/* The recovery file of PATH, a string the caller frees; for PATH NULL,
 * in the current directory, that of D's problem given by the model
 * options (by its name: two models' sessions keep two files) or of the
 * default problem (D NULL: the default problem's too). */
char	*tui_recover_name(const struct tui *d, const char *path);
/* Whether this session may write recovery file NAME: it holds the lock
 * beside it (taken now, the one held before let go), or none can be had
 * there (a read-only directory, a file system without flock); false
 * while another designer holds it. */
bool	tui_recover_claim(struct tui *, const char *name);
/* Lets go of the lock (tui_free). */
void	tui_recover_release(struct tui *);
/* Writes the state to its recovery file (atomic) after a change: the
 * recovery file of tui.save_path, else of tui.path; this session's of
 * another name written before is removed, and another session's left
 * there (one that ended while this one ran) is moved aside first.
 * Writes nothing, saying so, where another designer holds that file. */
void	tui_recover_write(struct tui *);
/* Removes it (after a save, or a clean quit) where it holds this
 * session's state. */
void	tui_recover_remove(struct tui *);
/* TUI_PROMPT_RESTORE's no: the recovery file moved aside, to the first
 * free NAME~, NAME~2, ..., so that this session's own does not replace
 * it; the message line says where.  Returns what to redraw. */
unsigned tui_recover_decline(struct tui *);
/* TUI_PROMPT_RESTORE's yes: replaces the plan and pins by the recovery
 * file's, as one change (unsaved).  Returns what to
 * redraw; a recovery file that cannot be read says so and is kept. */
unsigned tui_recover_restore(struct tui *);

/* ------------------------------------------------------------------ */
/* Drawing: each function reads the state and writes into W            */

/* Draws the parts of the screen FLAGS names (TUI_DRAW_*) for a layout
 * of W's size; below 80x24 a one-line notice instead. */
void	tui_draw(WINDOW *, struct tui *, unsigned flags);

/* The lanes of PLAN's devices from VIEW's top on (tui_layout_lanes) over
 * VIEW's window in AREA (labels in its first LABEL_W columns), compute
 * lanes only when COMPUTE_ONLY: what the timeline and the compare view
 * share.  D gives the glyphs, the selection, pins and highlights (NULL:
 * UTF-8, none), and, when PLAN is its plan, its measured run's lanes. */
void	tui_draw_lanes(WINDOW *, const struct tui *d, const struct pw_plan *plan,
	    const struct tui_view *view, struct tui_rect area, int label_w,
	    bool compute_only);
/* draw_timeline.c: whether a pin's op PIN names OP: B or W of a fused
 * backward is its BW, BW of a split one its B (pw_pin). */
bool	tui_pin_names(struct pw_op pin, struct pw_op op);
/* The time ruler with units over VIEW in AREA. */
void	tui_draw_ruler(WINDOW *, const struct tui_view *view,
	    struct tui_rect area, int label_w);

/* draw_header.c, draw_details.c, draw_panels.c: one function per panel,
 * drawing D into its rect of L. */
void	tui_draw_header(WINDOW *, const struct tui *d, const struct tui_layout *l);
void	tui_draw_details(WINDOW *, const struct tui *d, const struct tui_layout *l);
void	tui_draw_message(WINDOW *, const struct tui *d, const struct tui_layout *l);
void	tui_draw_help(WINDOW *, const struct tui *d, const struct tui_layout *l);
void	tui_draw_form(WINDOW *, const struct tui *d, const struct tui_layout *l);
void	tui_draw_error(WINDOW *, const struct tui *d, const struct tui_layout *l);
/* draw_header.c: whether D's schedule is feasible (BUF "feasible"), else
 * the first reason it is not into BUF: its failed re-time, a pin it
 * breaks, else the device furthest over its limit (the one the peak
 * names, as compare names it). */
bool	tui_plan_verdict(const struct tui *d, char *buf, size_t len);
/* draw_header.c: P's layout, "loop, 2 chunks", "V, 2 chunks" or "custom
 * placement", into BUF and returned. */
const char *tui_placement(const struct pw_problem *p, char *buf, size_t len);
/* draw_header.c: where D's schedule came from, "optimizer (gap 0.0%,
 * optimal), edited" once an edit followed (what the source said of it
 * held before the edit), into BUF and returned. */
const char *tui_source(const struct tui *d, char *buf, size_t len);
/* draw_details.c: "deadlock: 3 ops can never start", the header's line
 * (short enough for its half of an 80-column row; the details panel says
 * what each waits for), into BUF and returned; "" when D's orders time. */
const char *tui_deadlock_summary(const struct tui *d, char *buf, size_t len);
/* draw_compare.c, draw_sweep.c: the compare view and the memory sweep
 * in L's panel (tui_draw calls them in their modes). */
void	tui_draw_compare(WINDOW *, struct tui *d, const struct tui_layout *l);
void	tui_draw_sweep(WINDOW *, struct tui *d, const struct tui_layout *l);
/* draw_plan.c: the design search's progress and candidates in L's panel. */
void	tui_draw_planner(WINDOW *, struct tui *d, const struct tui_layout *l);

/* draw.c: what every panel writes with.  tui_draw_text writes the UTF-8
 * text S (bytes the locale cannot read as '?', a tab as a blank, other control characters as
 * '?') at Y, X in ATTR, clipped to W columns; returns the columns
 * written.  tui_draw_clear blanks R. tui_draw_box frames R with TITLE
 * in its top rule and returns the rect inside. tui_draw_wrap writes S
 * into R from row *ROW on, breaking lines at blanks (and at its
 * newlines), and advances *ROW; what does not fit is cut. */
int	tui_draw_text(WINDOW *, int y, int x, int w, attr_t attr, const char *s);
/* draw.c: tui_draw_text, where S does not fit ending in MORE (a glyph one
 * column wide) in the last column it writes. */
int	tui_draw_text_more(WINDOW *, int y, int x, int w, attr_t attr,
	    const char *s, wchar_t more);
void	tui_draw_clear(WINDOW *, struct tui_rect r, attr_t attr);
struct tui_rect tui_draw_box(WINDOW *, const struct tui *d, struct tui_rect r,
	    const char *title);
void	tui_draw_wrap(WINDOW *, struct tui_rect r, int *row, attr_t attr,
	    const char *s);

#endif /* PW_TUI_INT_H */
