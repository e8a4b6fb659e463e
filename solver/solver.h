/*
 * solver.h - the optimizer: memory-constrained schedule optimization with
 * lp_solve (MILP), a memory-aware list-scheduling heuristic,
 * large-neighbourhood search and local search over device orders.  Uses the core (src/pipewright.h) and
 * nothing else of pipewright.
 *
 * Every result carries a lower bound and the gap (objective - bound) /
 * objective, and every schedule it returns passes pw_check.
 */
#ifndef PW_SOLVER_H
#define PW_SOLVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "pipewright.h"

enum pw_objective {
	PW_OBJ_MAKESPAN,	/* one iteration: first start to last end */
	PW_OBJ_SPAN,		/* the largest per-device span (Zero Bubble's) */
};

enum pw_offload_mode {
	/* Offload where it helps and the problem allows; start from
	 * offloading families too when a limit binds (some family's schedule
	 * without offload reaches a device's limit). */
	PW_OFFMODE_AUTO,
	PW_OFFMODE_ON,		/* as AUTO, and always start from offloading
				 * families */
	PW_OFFMODE_OFF,		/* never offload */
};
/* The names of enum pw_objective's and enum pw_offload_mode's values by
 * value, NULL after the last: the one table every front end reads. */
extern const char *const pw_objective_names[];
extern const char *const pw_offload_mode_names[];

/* What the solver reports while it works (pw_solve: at least every
 * 100 ms; pw_solve_poll: whenever asked). */
struct pw_progress {
	double	incumbent;	/* objective of the best schedule so far */
	double	bound;		/* best lower bound so far */
	double	gap;		/* (incumbent - bound) / incumbent */
	double	elapsed;	/* seconds since the search started */
	/* "start", "heuristic", "milp", "lns", "local", "done" */
	const char *phase;
};

struct pw_solve_opts {
	enum pw_objective objective;
	enum pw_offload_mode offload;
	double	time_limit;		/* seconds of wall time; <= 0: 10 s */
	/* 0, or the search's iterations in all: lp_solve's simplex
	 * iterations, plus the local search's moves, each counted as the
	 * simplex iterations its re-timing is worth (one per 256 ops of
	 * the schedule, and one more; docs/solver.md).  Unlike the time
	 * limit, it stops the search at the same point on every run, and it
	 * alone sizes the windows (the time limit still stops a search that
	 * reaches it first). */
	long	iteration_limit;
	/* Same input, options and seed: the same schedule, unless the time
	 * limit or a cancel cuts the search short (pw_solve_result.ended);
	 * with an iteration limit, whatever the time limit. */
	unsigned long seed;
	/* Where to start: a schedule for the problem (the caller keeps it),
	 * or a family name; both NULL: the best feasible family. */
	const struct pw_schedule *start;
	const char *start_family;
	/* [nstages]: stages whose activations may be offloaded; NULL: every
	 * stage with offload bytes (when the problem has a link). */
	const bool *may_offload;
	const struct pw_pin *pins;
	size_t	npins;
	/* Writes the whole model (when one is built) in LP format, readable
	 * by lp_solve's command-line tool; NULL: none. */
	const char *write_lp;
	/* Called on the thread that called pw_solve; may be NULL.  Not
	 * called by a run (pw_solve_start). */
	void	(*progress)(const struct pw_progress *, void *arg);
	void	*progress_arg;
	/* Another thread sets *cancel non-zero to stop within 100 ms once the
	 * search holds a schedule (else at its first; a run: from its next
	 * poll); the best schedule so far is returned.  May be NULL. */
	atomic_int *cancel;
};

/* The size of the MILP that was built (whole or the largest window). */
struct pw_model_size {
	int	variables;
	int	binaries;
	int	rows;
	bool	whole;		/* the whole problem was one model */
	/* "big-M" (ordering binaries) or "time-indexed" (a binary per op
	 * and time slot: small models in whole time units); NULL when no
	 * model was built.  A static string. */
	const char *formulation;
};

/* Why a search ended. */
enum pw_solve_end {
	PW_END_OPTIMAL,		/* the schedule meets the bound: gap 0 */
	PW_END_SEARCHED,	/* no neighbourhood it tries holds better */
	PW_END_ITERATIONS,	/* the iteration limit */
	PW_END_TIME,		/* the time limit: a faster or idler machine
				 * may get further (and another schedule) */
	PW_END_CANCELLED,	/* the cancel flag: the best so far */
};

struct pw_solve_result {
	/* Owned by the result: of the schedules of the best objective the
	 * search held, the one whose devices' peaks add up to the least. */
	struct pw_schedule *schedule;
	double	objective;
	double	bound;
	double	gap;
	bool	optimal;	/* gap 0 proven */
	/* The first three give the same schedule on every run,
	 * the last two the best found so far. */
	enum pw_solve_end ended;
	double	elapsed;
	char	start[64];	/* where it started: a family name (with " in the
				 * pins' order" when pins reorder it) or
				 * "given" */
	double	start_objective;
	struct pw_model_size model;
	/* Why the model file of OPTS' write_lp was not written (a static
	 * string); NULL when it was, or none was asked for. */
	const char *lp_unwritten;
	/* The problem's link could move activations that the search kept
	 * on their devices (offload off): the bound and "optimal" hold among
	 * the schedules that move none of those. */
	bool	offload_excluded;
};

/* Fills OPTS with the defaults: makespan, offload auto, 10 s, no
 * iteration limit, seed 1. */
void	pw_solve_opts_init(struct pw_solve_opts *);

/* "optimal", "searched", "iteration limit", "time limit", "cancelled". */
const char *pw_solve_end_name(enum pw_solve_end);
/* What END means for the user, in every front end's words: "optimal for
 * this split and layout" (the bound is the problem's, whose split and
 * layout were fixed), "searched", ... (static strings). */
const char *pw_solve_end_words(enum pw_solve_end);
/* What END means for R, as pw_solve_end_words says it, "optimal" with
 * what R's search left out: "optimal for this split and layout, without
 * offload" (static strings).  END is R's ended, or PW_END_OPTIMAL for a
 * result proven optimal though it ended otherwise. */
const char *pw_solve_result_words(const struct pw_solve_result *r,
	    enum pw_solve_end end);
/* Whether OBJECTIVE meets BOUND within the solver's tolerance: the one
 * test of "optimal" (for this split and layout) everywhere. */
bool	pw_objective_meets_bound(double objective, double bound);
/* The gap of OBJECTIVE over BOUND as every front end reports it:
 * (objective - bound) / objective; 0 where the two meet
 * (pw_objective_meets_bound: BOUND above OBJECTIVE too) or OBJECTIVE is
 * not positive, and 1 while OBJECTIVE is infinite (no schedule yet). */
double	pw_objective_gap(double objective, double bound);

/* Optimizes PROBLEM's schedule under its memory limits, blocking until
 * the search ends (pw_solve_start, then pw_solve_poll and pw_solve_wait
 * with O's progress callback after each poll, then pw_solve_finish).
 * Returns PW_OK and a result the caller frees with pw_solve_result_free;
 * PW_ERR_INPUT for bad options (naming the option) or an infeasible
 * problem (naming the device, what it needs and what it has);
 * PW_ERR_INTERNAL when a result fails the solver's own checks (a bug) or
 * the search thread cannot start, never with a schedule. */
int	pw_solve(const struct pw_problem *, const struct pw_solve_opts *,
	    struct pw_solve_result *, struct pw_error *);
void	pw_solve_result_free(struct pw_solve_result *);

/*
 * The same search without blocking, for a front end's event loop: start
 * it, poll it (at 20 Hz, or after each pw_solve_wait), take its best
 * schedule so far whenever it is wanted, cancel it, finish it.  A run is
 * used from one thread, except pw_solve_cancel, which any thread may call
 * while the run exists.  The search's worker keeps its own copies of the
 * problem and the options; of the caller's, only the cancel flag
 * (opts.cancel) is read after pw_solve_start, and must live until
 * pw_solve_finish.  The progress callback is pw_solve's alone: a run
 * never calls it.
 */
struct pw_solve_run;

/* Starts searching PROBLEM under O.  Returns PW_OK and a run in *OUT,
 * which pw_solve_finish frees; else pw_solve's errors of the input, the
 * options and the thread (*OUT NULL).  The worker's errors (a start
 * family that does not apply, a start that does not simulate) come from
 * pw_solve_finish. */
int	pw_solve_start(const struct pw_problem *, const struct pw_solve_opts *,
	    struct pw_solve_run **out, struct pw_error *);

/* Never blocks (the lock it takes the worker holds only to publish).
 * Fills PR (may be NULL) with the latest numbers, INFINITY for the
 * incumbent before the first schedule; sets the stop when the time limit
 * has passed or the cancel flag is set, as pw_solve does.  Returns
 * whether the search is still working: false once the worker has ended,
 * or has been stopped for 30 ms holding a schedule (pw_solve_finish then
 * returns at once). */
bool	pw_solve_poll(struct pw_solve_run *, struct pw_progress *pr);

/* Blocks for at most SECONDS, returning early when the worker publishes
 * (a new incumbent, bound or phase) or ends, on a pw_solve_cancel, at
 * the time limit and when a stopped search may be left (pw_solve_poll's
 * false), and at once when any of these came since the last poll.  A
 * change of the cancel flag does not wake it: wait at most 50 ms at a
 * time to honour the flag within 100 ms. */
void	pw_solve_wait(struct pw_solve_run *, double seconds);

/* Returns a copy the caller owns of the schedule pw_solve_finish would
 * return now (the leanest of the best objective so far; family "solve"),
 * with its objective in *OBJECTIVE (may be NULL); NULL (and INFINITY)
 * before the first schedule. */
struct pw_schedule *pw_solve_take(struct pw_solve_run *, double *objective);

/* Asks the search to stop at the next poll (pw_solve_finish polls), as
 * the cancel flag does: the result then ends PW_END_CANCELLED, unless the
 * search had ended already. */
void	pw_solve_cancel(struct pw_solve_run *);

/* Waits, polling, for the search to end (the time limit, the cancel flag
 * and pw_solve_cancel still stop it), then fills RES as pw_solve does and
 * frees the run.  A search stopped while inside a unit it cannot leave
 * is left 30 ms after the stop with a copy of its incumbent, to finish
 * on its own.  Returns pw_solve's codes. */
int	pw_solve_finish(struct pw_solve_run *, struct pw_solve_result *,
	    struct pw_error *);

/* The objective of a timed schedule. */
double	pw_objective_value(enum pw_objective, const struct pw_metrics *);

/* The largest of the solver's problem-only lower bounds
 * (pw_lower_bound_terms'): per-device work with the pipeline's head and
 * tail, the warmup, the head-body-tail and the single-device relaxation
 * (also with the crossings of the microbatches in flight),
 * one microbatch's critical path, the memory bound (each activation held
 * for its round trip within the limit) with its offload-bandwidth
 * relaxation, and the slot bound (the order in which a device's limited
 * activations come back; see docs/solver.md). */
double	pw_lower_bound(const struct pw_problem *, enum pw_objective);

/* One of those bounds, by name ("work", "warmup", "head-body-tail",
 * "device", "crossing", "path", "memory", "slot": docs/solver.md gives
 * each one's argument). */
struct pw_bound_term {
	const char *name;	/* a static string */
	double	value;		/* seconds; 0 where it proves nothing */
};
#define PW_BOUND_TERMS	12

/* Fills OUT with every problem-only bound for OBJ (the strongest first)
 * and returns how many; pw_lower_bound is the first one's value. */
int	pw_lower_bound_terms(const struct pw_problem *, enum pw_objective,
	    struct pw_bound_term out[PW_BOUND_TERMS]);

/*
 * The memory sweep: step time against the memory limit, for every family
 * of the registry and for the optimizer.  At each limit L every device's
 * limit is set to L (and a model's split, so that a family splitting the
 * model again keeps it); a point is feasible when every device's peak is
 * at most L.  Built once (pw_sweep_new), computed by pw_sweep_run on any
 * one thread, read meanwhile by another: a point is published, whole,
 * once pw_sweep_get returns it.
 */

/* The default list's length: one limit below the smallest the problem
 * validates with, the rest up to the largest peak of the families at
 * no limit, then INFINITY. */
#define PW_SWEEP_POINTS	12

struct pw_sweep_point {
	double	limit;		/* bytes; INFINITY: unlimited */
	int	rc;		/* PW_OK, else why there is no schedule */
	char	*why;		/* rc != PW_OK: one line, owned */
	double	makespan;	/* s; rc == PW_OK */
	double	bubble_rate;
	double	peak;		/* bytes: the highest device's, static included */
	int	peak_device;
	bool	feasible;	/* every device's peak <= limit */
	/* Owned by the sweep, rc == PW_OK: the schedule and the problem it
	 * is for (at LIMIT; a family's may be the model split again). */
	struct pw_problem *problem;
	struct pw_schedule *schedule;
	atomic_bool ready;	/* published: pw_sweep_get's to read */
};

struct pw_sweep;

struct pw_sweep_opts {
	/* The limits in bytes (INFINITY allowed), NLIMITS of them; NULL:
	 * the default list of PW_SWEEP_POINTS. */
	const double *limits;
	size_t	nlimits;
	/* The optimizer series: seconds and lp_solve iterations per point
	 * (pw_solve_opts'); both 0: no optimizer series. */
	double	time_limit;
	long	iteration_limit;
	enum pw_objective objective;	/* the optimizer's */
	/* Another thread sets *CANCEL non-zero to stop the run at the next
	 * point (an optimizer's search within 100 ms).  May be NULL; must
	 * live until pw_sweep_run returns. */
	atomic_int *cancel;
	/* Called on pw_sweep_run's thread after each point is published,
	 * with the points done so far; may be NULL (another thread polls
	 * pw_sweep.done instead). */
	void	(*progress)(const struct pw_sweep *, size_t done, void *arg);
	void	*progress_arg;
};

struct pw_sweep {
	struct pw_problem *problem;	/* a copy of the swept one */
	struct pw_sweep_opts opts;	/* limits: NULL; LIMITS below */
	size_t	nlimits;
	double	*limits;	/* [nlimits], ascending; for the default list
				 * written by pw_sweep_run (read them through
				 * the points) */
	bool	default_limits;	/* LIMITS is the default list */
	size_t	nseries;	/* pw_nfamilies, and the optimizer last */
	bool	optimizer;	/* the last series is the optimizer's */
	/* [nlimits * nseries], limit-major: pw_sweep_get's */
	struct pw_sweep_point *point;
	size_t	total;		/* nlimits * nseries */
	atomic_size_t done;	/* points computed so far */
};

/* Returns PW_OK and a sweep of PROBLEM under O (copied) the caller frees
 * with pw_sweep_free, nothing computed yet; PW_ERR_INPUT naming a bad
 * option (no limits, a limit not positive, a negative optimizer
 * limit). */
int	pw_sweep_new(const struct pw_problem *, const struct pw_sweep_opts *,
	    struct pw_sweep **out, struct pw_error *);
/* Computes every point (the default list's unlimited one first, as it
 * places the others), publishing each as it is done.  Returns true when
 * all were computed, false when the cancel flag stopped it. */
bool	pw_sweep_run(struct pw_sweep *);
/* Series SERIES' point at the limit of index LIMIT, or NULL while it is
 * not computed.  Series i < pw_nfamilies is pw_families[i]; the last,
 * when SWEEP->optimizer, the optimizer's. */
const struct pw_sweep_point *pw_sweep_get(const struct pw_sweep *,
	    size_t limit, size_t series);
/* The series' name: the family's, or "optimizer" (a static string). */
const char *pw_sweep_series_name(const struct pw_sweep *, size_t series);
/* Of the feasible points at the limit of index LIMIT computed so far,
 * the series of the one with the least makespan (the first among ties);
 * -1 when none. */
int	pw_sweep_best(const struct pw_sweep *, size_t limit);
void	pw_sweep_free(struct pw_sweep *);

/*
 * The planner: for a problem built from a model (it has an origin), the
 * fastest design within memory over the layer split (pw_split_balance
 * and moves of layers between neighbouring stages, each split timed
 * exactly), stages per device, loop or V placement, recomputation,
 * offload and the schedule (every family that applies, then the
 * optimizer on the most promising candidates).  For a problem with given
 * stages only the schedule and offload are searched (SPLIT_FIXED).
 * The same result on every run of a build, for its input, options and
 * seed, whenever result.ended is ITERATIONS or SEARCHED (no phase was
 * stopped by the clock); TIME says the clock stopped some phase.
 */

/* What a candidate's design is. */
struct pw_design {
	int	chunks;		/* stages per device */
	enum pw_placement placement;
	/* Given stages placed neither as loop nor as V (PLACEMENT is then
	 * no description of them). */
	bool	custom_placement;
	enum pw_recompute recompute;
	bool	offload;	/* the model's PCIe link is there */
	int	*layers_per_stage;	/* [devices * chunks], owned; NULL when
					 * the split is fixed */
};

struct pw_planner_candidate {
	struct pw_design design;
	struct pw_problem *problem;	/* owned: the design's problem */
	struct pw_schedule *schedule;	/* owned: its best schedule */
	char	schedule_name[32];	/* the family's name, or "solve" */
	double	objective;	/* seconds, of the options' objective */
	double	makespan;	/* seconds */
	double	bubble_rate;
	double	idle_share;	/* total idle over devices * makespan */
	double	peak;		/* bytes, the device nearest its limit */
	int	peak_device;
	double	limit;		/* that device's limit, INFINITY for none */
	/* pw_lower_bound of PROBLEM, as keeping every activation on
	 * its device where SCHEDULE moves nothing */
	double	bound;
	const char *bound_name;	/* the strongest term's (static) */
	double	gap;		/* (objective - bound) / objective */
	bool	optimized;	/* the optimizer ran on it */
	/* Its schedule offloads something: else it is bound as keeping
	 * every activation on its device, in any design. */
	bool	moves;
};

/* One layer per chunk is tried up to this many chunks a device (Llama
 * 3.1 405B's 126 layers on 4 devices): beyond, each design is a problem
 * of thousands of stages whose bounds and families alone outlast any
 * time limit (375 chunks on a 3,000-layer model: 9.4 s under a 3 s
 * limit, 63 s at 10,000 layers). */
#define PW_PLANNER_MAX_FINE_CHUNKS	32

struct pw_planner_progress {
	size_t	tried;		/* candidates timed so far */
	size_t	builds;		/* family builds so far (several a candidate) */
	/* Family builds skipped: their family's measured seconds per op
	 * said they could not end within a second of the deadline. */
	size_t	skipped;
	double	best;		/* the best objective so far, INFINITY: none */
	const char *best_name;	/* its schedule's name, or NULL */
	double	elapsed;	/* seconds */
	const char *phase;	/* "splits", "families", "optimizer", "done" */
};

struct pw_planner_opts {
	enum pw_objective objective;
	double	time_limit;	/* seconds of wall time; <= 0: 60 */
	/* 0, or lp_solve's iterations (and the local search's moves) per
	 * optimizer run, and the split moves tried in all: with it the
	 * result is the same on every run that ends by it (result.ended
	 * ITERATIONS or SEARCHED, not TIME). */
	long	iteration_limit;
	size_t	top;		/* candidates kept, best first; 0: 10 */
	unsigned long seed;
	/* AUTO: designs with and without the model's offload link (when
	 * its hardware has one); ON: only with; OFF: only without. */
	enum pw_offload_mode offload;
	/* Called at least once a second on pw_planner's thread; may be
	 * NULL. */
	void	(*progress)(const struct pw_planner_progress *, void *arg);
	void	*progress_arg;
	/* Another thread sets *cancel non-zero to stop the search within
	 * 100 ms; the best candidates so far are returned once checked
	 * (their simulation, the checker and their bounds, which take
	 * seconds on problems of millions of ops).  May be NULL. */
	atomic_int *cancel;
};

struct pw_planner_result {
	struct pw_planner_candidate *cand;	/* [ncand], best first, owned */
	size_t	ncand;
	size_t	tried;		/* candidates timed */
	size_t	builds, skipped;	/* as in pw_planner_progress */
	bool	split_fixed;	/* the problem's stages were given */
	enum pw_solve_end ended; /* SEARCHED, ITERATIONS, TIME or CANCELLED */
	double	elapsed;
};

/* Fills O with the defaults: makespan, 60 s, no iteration limit, top 10,
 * seed 1, offload auto. */
void	pw_planner_opts_init(struct pw_planner_opts *);

/* Why the planner takes no pins (a problem's precede pairs): what the
 * front ends say when a problem comes with some. */
#define PW_PLANNER_NO_PINS	"its precede pairs name ops of its own " \
	"split, which plan changes (solve honours them)"

/* Plans PROBLEM under O, blocking.  Returns PW_OK and a result the
 * caller frees with pw_planner_result_free (at least one candidate, each
 * schedule within its problem's limits and passing pw_check, each
 * problem with PROBLEM's name);
 * PW_ERR_INPUT for bad options or when no design fits memory (naming the
 * tightest device and what it needs). */
int	pw_planner(const struct pw_problem *, const struct pw_planner_opts *,
	    struct pw_planner_result *, struct pw_error *);
/* The same for the model MODEL on HW split as SPLIT, without building
 * SPLIT's own problem first: a model whose even split does not fit its
 * limits may still have designs that do (another split, recomputation,
 * offload).  SPLIT's layers_per_stage, chunks, placement and the model's
 * recomputation are where the search starts, not constraints. */
int	pw_planner_model(const struct pw_model *, const struct pw_hardware *,
	    const struct pw_split *, const struct pw_planner_opts *,
	    struct pw_planner_result *, struct pw_error *);
void	pw_planner_result_free(struct pw_planner_result *);
/* The most stages a device has in the designs pw_planner_model tries for
 * ORIGIN's model and split: what a caller sizes the search's memory by. */
int	pw_planner_most_chunks(const struct pw_origin *);
/* One line for a progress report ("12 candidates (140 builds), best
 * 4.602 s (solve), optimizer, 3.2 s"; "..., 3 skipped for time" after the
 * builds when some were) into BUF, returned: what every front end
 * prints. */
char	*pw_planner_progress_text(const struct pw_planner_progress *,
	    char *buf, size_t len);
/* "1 chunk", "loop x4", "V", "custom" into BUF, returned. */
char	*pw_design_layout_name(const struct pw_design *, char *buf, size_t len);
/* "loop", "v" or "custom" (given stages placed neither way): a static
 * string. */
const char *pw_design_placement_name(const struct pw_design *);
/* The split as "4,4,4,5,5,4,4,2" (or "given") into BUF, returned
 * (shortened with "..." when it does not fit; with LEN below 4, what of
 * that fits, and nothing for 0). */
char	*pw_design_split_name(const struct pw_design *, int nstages,
	    char *buf, size_t len);

/* eval.c: false (and the first broken pin in WHY) unless every pin holds
 * in timing T; a pin naming B or W of a fused backward means its BW, one
 * naming BW of a split backward its B. */
bool	pw_pins_hold(const struct pw_problem *, const struct pw_timing *,
	    const struct pw_pin *, size_t npins, char *why, size_t len);

#endif /* PW_SOLVER_H */
