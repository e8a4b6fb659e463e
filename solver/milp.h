/*
 * milp.h - the mixed-integer program of a schedule (or of a window of it)
 * with lp_solve.  Private to solver/: solver.c drives it, whole or in
 * large-neighbourhood windows.
 */
#ifndef PW_MILP_H
#define PW_MILP_H

#include "solver.h"

struct pw_milp_request {
	const struct pw_problem *problem;
	enum pw_objective objective;
	/* A feasible schedule (within every limit) to improve: its objective
	 * gives big-M and the "objective <= incumbent" row. */
	const struct pw_schedule *incumbent;
	double	incumbent_objective;
	/* [pw_op_universe]: ops free to move; NULL: all (the whole model).
	 * The relative order of two ops on one resource is a decision only
	 * when at least one of them is free; otherwise it stays the
	 * incumbent's.  Start times are always variables. */
	const bool *free;
	/* Whether offload decisions of free activations may change; those of
	 * fixed ones stay the incumbent's. */
	bool	offload;
	const bool *may_offload;	/* [nstages] or NULL: see pw_solve_opts */
	const struct pw_pin *pins;
	size_t	npins;
	double	lower_bound;	/* a valid bound: adds "objective >= bound" */
	double	time_limit;	/* seconds for lp_solve */
	/* 0, or a budget of simplex iterations over every solve: unlike
	 * time_limit it stops at the same point on every run. */
	long	iteration_limit;
	/* Also take a schedule of the incumbent's objective whose ops end
	 * earlier in sum (pw_solver_ends): the model then minimizes the
	 * objective and, far behind, the free ops' starts.  For windows:
	 * where several critical paths run side by side, shortening one
	 * at a time is how the objective falls. */
	bool	ties;
	atomic_int *cancel;
	const char *write_lp;	/* NULL or a path: the model in LP format */
	bool	write_only;	/* build and write the model, solve nothing */
};

struct pw_milp_result {
	/* A schedule better than the incumbent (the caller owns it), or NULL
	 * when none was found. */
	struct pw_schedule *schedule;
	double	objective;	/* of schedule, or the incumbent's */
	double	ends;		/* its sum of ends (pw_solver_ends) */
	/* lp_solve's bound on this model: a bound for the whole problem only
	 * when exact. */
	double	bound;
	/* The bound holds for every schedule of the problem: the model was
	 * whole (free == NULL), the incumbent splits every backward into B
	 * and W (fusing never helps), no pins, no offload.  Other models
	 * restrict the search: fixed orders, a backward fused or not as in
	 * the incumbent, transfers of a stage in microbatch order, a
	 * reload counted from the op after the last it skipped,
	 * microbatch order against pinned ops. */
	bool	exact;
	/* objective == bound within the model; with ties, the model was
	 * solved to the end */
	bool	optimal;
	/* The model file the request asked for was written: a model that
	 * there is nothing to gain from, or no time for, is never built. */
	bool	written;
	struct pw_model_size size;
	long	iterations;	/* lp_solve's simplex iterations, every solve */
};

/* Builds and solves the model.  Returns PW_OK (with or without an
 * improvement), PW_ERR_INPUT for a malformed request, PW_ERR_INTERNAL
 * when lp_solve fails or a solution's schedule fails the simulator or the
 * checker (our bug; the message says how), PW_ERR_IO when write_lp
 * cannot be written. */
int	pw_milp_solve(const struct pw_milp_request *, struct pw_milp_result *,
	    struct pw_error *);

#endif /* PW_MILP_H */
