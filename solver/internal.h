/*
 * internal.h - what the optimizer's files share: private to solver/.
 * solver.c runs a solve; search.c and lns.c search (search.h); eval.c
 * judges schedules; heuristic.c builds incumbents; local.c walks device
 * orders; bound.c bounds the objective from below; milp.c (milp.h)
 * solves models.
 */
#ifndef PW_SOLVER_INTERNAL_H
#define PW_SOLVER_INTERNAL_H

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solver.h"

/* Relative tolerance for comparing objectives and memory levels, as the
 * checker compares times. */
#define PW_SOLVER_EPS	1e-9

/* The tolerance of a comparison at magnitude X: PW_SOLVER_EPS of it,
 * and absolute below 1. */
static inline double
pw_solver_tol(double x)
{
	return PW_SOLVER_EPS * fmax(1, fabs(x));
}

/* The tolerance of comparing objectives (makespans, spans) of magnitude
 * X: PW_SOLVER_EPS of it, relative alone, as the checker's: a step of
 * 17 ns is one of a few thousand sums of durations, rounded relative to
 * itself, and an absolute 1e-9 s would call a 3% gap closed. */
static inline double
pw_solver_objective_tol(double x)
{
	return PW_SOLVER_EPS * fabs(x);
}

/* A number in [0, N) from the generator X (splitmix64's state): the
 * seeded searches' choices. */
static inline size_t
pw_rng_below(uint64_t *x, size_t n)
{
	return n <= 1 ? 0 : (size_t)(pw_splitmix64(x) % n);
}

/* A number in [0, 1) from the generator X. */
static inline double
pw_rng_unit(uint64_t *x)
{
	return (double)(pw_splitmix64(x) >> 11) * 0x1.0p-53;
}

/* solver.c: the options pw_solve and pw_planner share, checked alike:
 * PW_OK, or PW_ERR_INPUT naming the option at fault, WHO ("solve",
 * "plan") first.  An infinite time limit is refused (<= 0 asks for the
 * default). */
int	pw_solve_check_common(const char *who, enum pw_objective,
	    enum pw_offload_mode, double time_limit, long iteration_limit,
	    struct pw_error *);
/* solver.c: PW_ERR_INPUT, WHO first, when OFFLOAD is on and the problem
 * HAS_LINK not: nothing could offload. */
int	pw_solve_check_link(const char *who, enum pw_offload_mode offload,
	    bool has_link, struct pw_error *);

/* solver.c: drops one of *REFS under LOCK.  Returns true for the last,
 * with LOCK and COND destroyed: the caller then frees what they shared. */
bool	pw_solver_unref(pthread_mutex_t *lock, pthread_cond_t *cond,
	    int *refs);

/* eval.c: whether SCHED moves any activation to or from the host (any
 * channel has a transfer). */
bool	pw_solver_moves(const struct pw_schedule *sched);

/* eval.c: whether OBJ is below INCUMBENT by more than rounding (every
 * finite OBJ is below an INCUMBENT of INFINITY). */
bool	pw_solver_better(double obj, double incumbent);

/* eval.c: the sum of every op's end in timing T: the tie-break between
 * schedules of one objective (the earlier everything ends, the more room
 * the next move has). */
double	pw_solver_ends(const struct pw_timing *t);

/* eval.c: the stages whose activations may move to host memory under
 * MODE and MAY_OFFLOAD (see pw_solve_opts): the link exists, the stage
 * has offload bytes and the options allow it.  Returns an [nstages]
 * array the caller frees, or NULL when no stage may offload. */
bool	*pw_solver_offloadable(const struct pw_problem *,
	    enum pw_offload_mode, const bool *may_offload);

/* How a schedule does against the solver's constraints. */
struct pw_eval {
	double	objective;
	double	ends;		/* pw_solver_ends */
	double	memory;		/* the sum of the devices' peaks */
	/* Within every limit, every pin holding, offloads only of
	 * OFFLOADABLE stages; WHY says what fails first when not. */
	bool	feasible;
	char	why[256];
};

/* eval.c: whether A beats B: a better objective, or the same and an
 * earlier sum of ends. */
bool	pw_eval_better(const struct pw_eval *a, const struct pw_eval *b);
/* eval.c: whether A beats B: a better objective, or the same and less
 * memory (the sum of the devices' peaks). */
bool	pw_eval_leaner(const struct pw_eval *a, const struct pw_eval *b);

/* eval.c: fills E for SCHED, whose simulated timing is T. */
void	pw_solver_judge(const struct pw_problem *, const struct pw_schedule *,
	    const struct pw_timing *, enum pw_objective,
	    const bool *offloadable, const struct pw_pin *, size_t npins,
	    struct pw_eval *);

/* eval.c: fills E for PLAN's timed orders, from the timing and the
 * metrics it holds. */
struct pw_plan;
void	pw_solver_judge_plan(const struct pw_plan *, enum pw_objective,
	    const bool *offloadable, const struct pw_pin *, size_t npins,
	    struct pw_eval *);

/* eval.c: simulates SCHED and fills E (pw_solver_judge).  Returns PW_OK,
 * or the simulator's error (malformed orders, deadlock) with its
 * message. */
int	pw_solver_eval(const struct pw_problem *, const struct pw_schedule *,
	    enum pw_objective, const bool *offloadable, const struct pw_pin *,
	    size_t npins, struct pw_eval *, struct pw_error *);

/* eval.c: true when SCHED, timed T by the simulator, passes the
 * independent checker. */
bool	pw_solver_checked(const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *);

/* bound_cross.c: what the crossing bound needs of stage S, which runs
 * alone on its device and may not offload: at most NA activations in
 * flight and NH holds, within CAP bytes; RF and RB its rows of the order
 * statistics ([m] each, from 0); QF and QB the least tails of its F and
 * B. */
struct pw_bcross_in {
	const struct pw_problem *p;
	int	s, na, nh;
	double	cap, qf, qb;
	const double *rf, *rb;
};

/* bound_cross.c: the crossing bound of IN, from LO (a bound already
 * proven, returned where it proves nothing more), spending at most
 * BUDGET[0] of its steps on its first pass and BUDGET[1] on its second,
 * which it lowers (docs/solver.md). */
double	pw_bound_crossing(const struct pw_bcross_in *in, double lo,
	    long budget[2]);

/* bound.c: bisects between *LO, an end known not to be reached, and
 * *HI, one known to be, until they are within REL of *HI or after ITERS
 * steps, keeping both known.  REACHES(ARG, END) says 1 where END is
 * reached, 0 where not, anything else where it cannot tell, which ends
 * the search; returns its last answer (1 where it never could not
 * tell).  Rounding only lowers *LO, so a bound taken from it holds. */
int	pw_bound_bisect(double *lo, double *hi, double rel, int iters,
	    int (*reaches)(void *, double), void *arg);

/* bound.c: the bytes DEVICE needs to run one microbatch alone through
 * its stages, with the activations of OFFLOADABLE stages ([nstages] or
 * NULL for none) on the host while the microbatch is elsewhere. */
double	pw_bound_need(const struct pw_problem *, int device,
	    const bool *offloadable);

/* bound.c: fills REL_F[s] and REL_B[s] ([nstages] each) with the
 * earliest start of stage s's F and B, counted from the first op's start:
 * one microbatch's undelayed path through the pipeline. */
void	pw_bound_releases(const struct pw_problem *, double *rel_f,
	    double *rel_b);

/* bound.c: pw_lower_bound with offloads only of OFFLOADABLE stages
 * (NULL: none), which raises the memory bound where fewer may move. */
double	pw_bound_problem(const struct pw_problem *, enum pw_objective,
	    const bool *offloadable);
/* bound.c: pw_lower_bound_terms, as pw_bound_problem counts offloads. */
int	pw_bound_terms(const struct pw_problem *, enum pw_objective,
	    const bool *offloadable, struct pw_bound_term out[PW_BOUND_TERMS]);

/* local.c: the local search over device orders (see there). */
struct pw_local_opts {
	enum pw_objective objective;
	const bool *offloadable;	/* [nstages] or NULL: no offload */
	const struct pw_pin *pins;
	size_t	npins;
	long	moves;		/* at most */
	uint64_t *rng;		/* splitmix64's state, advanced */
	/* Asked before each move: true stops the walk; may be NULL. */
	bool	(*stopped)(void *arg);
	void	*stopped_arg;
};

/* local.c: moves the op at FROM of Q to TO, the ops between closing up
 * (a move's rotation; tests/test_local.c's random reorderings). */
void	pw_local_rotate(struct pw_seq *q, int from, int to);
/* local.c: the search's iterations one move on SCHED counts (its
 * re-timing's worth of simplex iterations). */
long	pw_local_cost(const struct pw_schedule *sched);

/* local.c: simulated annealing over START's compute orders (START
 * feasible under O, judged START_EVAL by pw_solver_judge) for at most
 * O->moves moves, *MOVES set to those made.  Returns the walk's best
 * schedule (pw_eval_better) when its objective is below START's, the
 * caller's, with its evaluation in *BEST_EVAL; else NULL. */
struct pw_schedule *pw_local_search(const struct pw_problem *,
	    const struct pw_schedule *start, const struct pw_eval *start_eval,
	    const struct pw_local_opts *, struct pw_eval *best_eval,
	    long *moves);

/* heuristic.c */
struct pw_heuristic_opts {
	enum pw_objective objective;
	const bool *offloadable;	/* [nstages] or NULL: no offload */
	const struct pw_pin *pins;
	size_t	npins;
	/* Set non-zero: return the best schedule so far (after the first
	 * complete one). */
	atomic_int *stop;
	/* Bounds on the descent's passes over the devices after its first,
	 * for a caller with other work for the time.  Without SETTLE, passes
	 * until one lowers the objective no further; with it, a further
	 * pass only while the heuristic's best is below INCUMBENT (the
	 * caller's objective; INFINITY: none) and where the last pass's
	 * time would end it by SETTLE_BY (pw_now's clock; 0: the first pass
	 * only, the same on every run). */
	bool	settle;
	double	incumbent;
	double	settle_by;
};

/*
 * The memory-aware list scheduler: the best of its policies, else one
 * microbatch at a time.  Returns PW_OK with a schedule the caller owns in
 * *OUT (feasible: within every limit, pins holding); PW_ERR_INPUT when
 * none is (the message says why).
 */
int	pw_heuristic(const struct pw_problem *, const struct pw_heuristic_opts *,
	    struct pw_schedule **out, struct pw_error *);

#endif /* PW_SOLVER_INTERNAL_H */
