/*
 * plan.h - the core's interactive API: a plan (a problem, its schedule and
 * everything computed from them, owned together), edits of its orders,
 * and the questions a front end asks of a timed schedule.
 *
 * The command line, Lua, the solver's start and the designer all stand on
 * these objects, so that "build, simulate, measure" is written once.  A
 * plan's timing and metrics are never set by a caller: they are computed
 * from its problem and schedule after every change.
 *
 * Undo is by inverses, not snapshots: every edit answers with the edit
 * that reverses it (a move with a move back, an insert with a remove, an
 * anchor with the anchor before), so a front end's history is a stack of
 * small edits and undoing re-times the orders like any other edit.
 *
 * Conventions as in pipewright.h: PW_OK or a negative enum pw_rc with a
 * struct pw_error; the caller owns what "new", "copy" and "read" return.
 */
#ifndef PW_PLAN_H
#define PW_PLAN_H

#include "pipewright.h"

/* ------------------------------------------------------------------ */
/* Questions about a timed schedule: each in O(ops) or better          */
/* (of a plan, ask them of pw_plan_timed with pw_plan_timing and        */
/* pw_plan_metrics: after a failed re-time its edited orders are not    */
/* the ones timed)                                                      */

/* The op running on resource R (pw_where's numbering) at instant T: the
 * one with start <= T < end, found by binary search on R's order.
 * Returns false when R is idle at T. */
bool	pw_op_at(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_timing *, int resource, double t, struct pw_op *out);

/* DEVICE's memory in bytes at instant T (after every event at T, frees
 * first), from its curve by binary search; before the curve's first
 * point (the metrics' start) that point's level: static memory unless an
 * op allocates at the start itself. */
double	pw_memory_at(const struct pw_metrics *, int device, double t);

/* Every op's slack: how much later than its start it could start with
 * every other op free to move later too, and the last end (the makespan)
 * kept.  A backward pass over pw_preds' graph from the last end; values
 * within 1e-9 of the makespan of 0 are 0.  Returns an [universe] array
 * the caller frees, NAN for absent ops; never negative. */
double	*pw_slack(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_timing *);

/* One op of the critical path and the constraint that binds it. */
struct pw_critical {
	struct pw_op op;
	double	start;
	double	end;
	bool	bound;		/* false for the first op: nothing binds it */
	struct pw_pred by;	/* when BOUND: the predecessor and the edge */
};

/* The critical path: from the op that ends last (the lowest index among
 * ties) back along the simulator's binding predecessors to an op that
 * starts at 0, listed first to last.  The durations and delays of its
 * edges add up to the makespan, and each of its ops has slack 0.
 * Returns an array of *N entries the caller frees. */
struct pw_critical *pw_critical_path(const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *, size_t *n);

/* "device", "channel", "dependency", "anchor". */
const char *pw_pred_kind_name(enum pw_pred_kind);

/* ------------------------------------------------------------------ */
/* Plans                                                               */

struct pw_plan;

/* Takes PROBLEM and SCHED (the plan owns them from the call on, whatever
 * it returns), validates the problem, simulates and measures.  Returns
 * PW_OK and a plan the caller owns; else the simulator's error (malformed
 * orders: PW_ERR_INPUT, PW_ERR_DEADLOCK), with no plan. */
int	pw_plan_new(struct pw_problem *problem, struct pw_schedule *sched,
	    struct pw_plan **out, struct pw_error *);

/* FAMILY's schedule for PROBLEM (pw_family_build: the plan's problem may
 * be PROBLEM split again; compare the stage counts).  Returns PW_OK and a
 * plan the caller owns; PW_ERR_NOT_APPLICABLE with the reason; a family
 * schedule that does not simulate is PW_ERR_INTERNAL. */
int	pw_plan_family(const struct pw_family *, const struct pw_problem *,
	    struct pw_plan **out, struct pw_error *);

/* The schedule file PATH: its orders (pw_schedule_from_timed), timed
 * again.  With STORED, also the file's timed ops (*STORED and *NSTORED,
 * the caller frees them) to compare against the plan's timing.  Returns
 * PW_OK and a plan the caller owns, or the reader's or simulator's error
 * naming the file. */
int	pw_plan_read(const char *path, struct pw_plan **out,
	    struct pw_timed_op **stored, size_t *nstored, struct pw_error *);
/* The measured run of the file PATH (*MEASURED, the caller's; NULL when
 * it has none, a problem file's included) and, when it has one, its
 * schedule as pw_plan_read reads it (*OUT, else NULL), in one reading of
 * the file: a file replaced meanwhile cannot give the two apart. */
int	pw_plan_read_run(const char *path, struct pw_plan **out,
	    struct pw_measured **measured, struct pw_error *);

/* The orders of a schedule file's timed OPS[N] (pw_schedule_from_timed)
 * for PROBLEM, built by FAMILY (the file's "family", NULL for none; both
 * taken, whatever this returns), timed: pw_plan_read's work after the
 * reading, for a caller that read the file itself.  Errors start with
 * LABEL (the file's name).  Returns PW_OK and a plan the caller owns,
 * or the error. */
int	pw_plan_from_timed(struct pw_problem *problem,
	    const struct pw_timed_op *ops, size_t n, char *family,
	    const char *label, struct pw_plan **out, struct pw_error *);

/* Returns a deep copy the caller owns, failed re-time and all. */
struct pw_plan *pw_plan_copy(const struct pw_plan *);
void	pw_plan_free(struct pw_plan *);

/* The plan's members, owned by it, valid until its next change.  The
 * schedule is the orders as last edited; the timing and the metrics are
 * of the last orders that timed (pw_plan_timed): the schedule's own
 * unless the last re-time failed. */
const struct pw_problem *pw_plan_problem(const struct pw_plan *);
const struct pw_schedule *pw_plan_schedule(const struct pw_plan *);
const struct pw_schedule *pw_plan_timed(const struct pw_plan *);
const struct pw_timing *pw_plan_timing(const struct pw_plan *);
const struct pw_metrics *pw_plan_metrics(const struct pw_plan *);
/* Where each op of pw_plan_timed is. */
const struct pw_where *pw_plan_where(const struct pw_plan *);

/* PW_OK when the timing is the schedule's; else the code of the last
 * failed re-time, with its message in ERR (may be NULL). */
int	pw_plan_status(const struct pw_plan *, struct pw_error *err);

/* pw_slack and pw_critical_path of the timed orders, computed on first
 * ask and kept until the next change; owned by the plan. */
const double *pw_plan_slack(const struct pw_plan *);
const struct pw_critical *pw_plan_critical(const struct pw_plan *, size_t *n);

/* ------------------------------------------------------------------ */
/* Edits: each validated, each answered with the edit that undoes it    */

enum pw_edit_kind {
	PW_EDIT_MOVE,		/* OP to position TO of its order */
	PW_EDIT_INSERT,		/* OP, absent, at position TO of its order */
	PW_EDIT_REMOVE,		/* OP out of its order */
	PW_EDIT_ANCHOR,		/* RELOAD OP's anchor: ANCHOR, or none */
};

struct pw_edit {
	enum pw_edit_kind kind;
	struct pw_op op;
	int	to;		/* MOVE, INSERT: position after the edit */
	bool	has_anchor;	/* ANCHOR: set (true) or clear */
	struct pw_anchor anchor;
};

/*
 * Applies EDIT to PLAN's schedule and re-times it.  An edit that cannot
 * apply (an op out of range or of the wrong kind, a MOVE or REMOVE of an
 * absent op, an INSERT of a present one or of a transfer moving nothing,
 * a position out of range, an anchor off the reload's device or on
 * the reload of a stage that offloads nothing) returns
 * PW_ERR_INPUT and changes nothing.  Otherwise it returns PW_OK with the
 * edit that reverses it in *UNDO (may be NULL), whether or not the new
 * orders time: a remove leaves them malformed until the op is inserted
 * again, a move may deadlock them.  Then pw_plan_status says what failed
 * and the plan keeps the last good timing.  Undoing every edit in
 * reverse order gives the orders back exactly.
 */
int	pw_plan_apply(struct pw_plan *, const struct pw_edit *edit,
	    struct pw_edit *undo, struct pw_error *);

/* Replaces PLAN's orders by SCHED (taken: the plan owns it, whatever this
 * returns), shaped for the plan's problem, and re-times them; as
 * pw_plan_apply, the plan keeps its last good timing when they fail, and
 * the code is pw_plan_status's.  Orders no edits could make are refused
 * with PW_ERR_INPUT, SCHED freed and nothing changed, so that every
 * edit's inverse applies later: another shape (devices, channels, stages,
 * microbatches), an op out of range, on a wrong resource, moving nothing
 * or listed twice (pw_where_build), or an anchor an anchor edit would
 * refuse.  Orders that merely fail to time (an op missing, a deadlock)
 * are taken. */
int	pw_plan_replace(struct pw_plan *, struct pw_schedule *sched,
	    struct pw_error *);

/* ------------------------------------------------------------------ */
/* Comparison rows: every family on a problem, as data                 */

struct pw_compare_row {
	const struct pw_family *family;
	int	rc;		/* PW_OK, else why there is no schedule */
	char	*why;		/* rc != PW_OK: the reason, owned */
	int	nstages;	/* of the problem it ran on (split again when
				 * not the given one's); rc == PW_OK */
	struct pw_metrics *metrics;	/* rc == PW_OK, owned; else NULL */
	/* From the metrics, when rc == PW_OK: */
	double	max_peak;	/* bytes, static included */
	int	tightest;	/* the device with the largest share of its
				 * limit; -1 when no device has one */
	double	share;		/* its peak over its limit (1 = at it) */
	int	nover;		/* devices above their limits */
};

/* The device that uses the largest share of its limit (a device over its
 * limit always has the largest, so this is also the worst offender); -1
 * when no device has a limit.  *NOVER (NOVER may be NULL) counts the
 * devices over their limits. */
int	pw_metrics_tightest(const struct pw_problem *, const struct pw_metrics *,
	    int *nover);
/* Device D's peak over its limit: NAN without a limit; at a limit of 0,
 * 1 for a peak of 0 (full) and INFINITY above it. */
double	pw_metrics_share(const struct pw_problem *, const struct pw_metrics *,
	    int d);
/* The device with the highest peak, the first among equals. */
int	pw_metrics_peak_device(const struct pw_metrics *);

/* Told as pw_compare_rows goes on PROBLEM: DONE families of the registry
 * are built, pw_families[DONE] is next (DONE == pw_nfamilies: all are).
 * Returns false to stop there (a designer's Esc). */
typedef bool pw_compare_progress_fn(void *arg,
	    const struct pw_problem *problem, size_t done);

/* One row per family of the registry, in its order, on PROBLEM; PROGRESS
 * (NULL: none) is called with ARG before each family and once after the
 * last, since one family alone may take long on a large problem.  Where it
 * stops the comparison, the families not built have rc PW_ERR_CANCELLED.
 * Returns an array of pw_nfamilies rows the caller frees with
 * pw_compare_rows_free. */
struct pw_compare_row *pw_compare_rows(const struct pw_problem *,
	    pw_compare_progress_fn *progress, void *arg);
void	pw_compare_rows_free(struct pw_compare_row *);
/* The family a problem runs when none is named (the designer's and
 * launch's choice): the fastest of ROWS that keeps every limit, else
 * the fastest.  Its index in the registry, or -1 when no family builds
 * a schedule. */
int	pw_compare_best(const struct pw_compare_row *);

/* The compare command's report of ROWS (pw_compare_rows of PROBLEM) in
 * FORM, sorted by SORT (families without a schedule last, ties in the
 * registry's order): as text the best line, the table, why a family has
 * no schedule, and the peaks per device.  Returns PW_OK, or PW_ERR_IO
 * when FP could not be written. */
int	pw_compare_rows_print(FILE *, const struct pw_problem *,
	    const struct pw_compare_row *, enum pw_compare_sort,
	    enum pw_compare_form);

#endif /* PW_PLAN_H */
