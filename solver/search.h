/*
 * search.h - one solve's state, shared by solver.c (the caller's side, a
 * run: options, the worker thread, progress, the result), search.c (the
 * worker's search: the start, the heuristic, the whole model, the rounds
 * that share the rest), lns.c (the large-neighbourhood windows) and
 * local.c (the local search over device orders).  Private to solver/.
 */
#ifndef PW_SOLVER_SEARCH_H
#define PW_SOLVER_SEARCH_H

#include <pthread.h>
#include <stdint.h>

#include "internal.h"

/* pw_search_milp's ITERATIONS for a model built only to be written. */
#define PW_SEARCH_WRITE_ONLY	(-1L)

/*
 * One solve: the worker's state and what it shares with the run, on the
 * heap and owned by both (REFS): the run may leave first.
 */
struct pw_search {
	const struct pw_problem *p;	/* PROBLEM */
	const struct pw_solve_opts *o;	/* &OPTS */
	bool	*offloadable;	/* [nstages] or NULL */
	double	t0;		/* monotonic seconds at the start */
	double	limit;		/* seconds */
	atomic_int stop;
	/* So far (the worker's): lp_solve's simplex iterations plus the
	 * local search's moves, one each (pw_solve_opts.iteration_limit). */
	long	iterations;
	/* How many incumbents were taken (the worker's): a search part
	 * that keeps a view of the incumbent reloads it when this moved. */
	unsigned long accepted;

	/* The worker's copies of the caller's problem and options, and what
	 * OPTS points to (no progress callback, no cancel flag). */
	struct pw_problem *problem;
	struct pw_solve_opts opts;
	struct pw_schedule *own_start;
	char	*own_start_family;
	bool	*own_may_offload;
	struct pw_pin *own_pins;
	char	*own_write_lp;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under the lock: the numbers of the last publication, how many
	 * publications and signals there were (pw_search_signal, the
	 * worker's or a stop's from the run's thread), who still holds the
	 * search, whether the worker is writing the model file (and may not
	 * be left), whether the run left before the worker (which then
	 * writes no model file), whether the worker is done. */
	double	pub_incumbent;
	double	pub_bound;
	const char *pub_phase;
	unsigned long events;
	int	refs;
	bool	writing;
	bool	left;
	bool	finished;

	/* Written by the worker under the lock, which the run reads them
	 * under; the worker reads them freely. */
	struct pw_schedule *best;	/* feasible, checked */
	struct pw_eval eval;
	/* Why the model file asked for is not written (a static string);
	 * NULL once it is, or when none is asked for. */
	const char *lp_unwritten;
	/* What the solve returns: of the incumbents of the best objective,
	 * the one that needs the least memory (a copy).  The windows move
	 * among ties toward earlier ends, which may cost memory. */
	struct pw_schedule *answer;
	struct pw_eval answer_eval;
	double	bound;
	char	start[64];
	double	start_objective;
	struct pw_model_size model;
	/* The worker's, read once it has finished: its return code, and why
	 * it ended (PW_END_TIME also when it was stopped: the run knows
	 * whether it was cancelled). */
	int	rc;
	struct pw_error err;
	enum pw_solve_end ended;
};

/* search.c: seconds since S started. */
double	pw_search_elapsed(const struct pw_search *s);
/* search.c: whether S must stop (asked to, out of time, or out of
 * iterations). */
bool	pw_search_stopped(const struct pw_search *s);
/* search.c: under the lock, wakes the run for what the worker changed
 * (a publication, the end of a model file, its own end). */
void	pw_search_signal(struct pw_search *s);
/* search.c: publishes the incumbent, the bound and PHASE (NULL: the
 * phase as it was) for the next report; a search stopped before it holds
 * a schedule goes on to its first (a family's build cannot be cut short),
 * and its phase is "waiting" until then. */
void	pw_search_publish(struct pw_search *s, const char *phase);
/* search.c: whether the incumbent meets the bound. */
bool	pw_search_closed(const struct pw_search *s);
/* search.c: offers SCHED (taken over) as the incumbent, recording START
 * (or not: NULL) as where the search started; whether it was kept. */
bool	pw_search_offer(struct pw_search *s, struct pw_schedule *sched,
	    const char *phase, const char *start);
/* search.c: solves the model of the ops MASK frees (NULL: all); see
 * there. */
int	pw_search_milp(struct pw_search *s, const bool *mask, bool ties,
	    long iterations, const char *write_lp, const char *phase,
	    bool *improved, bool *optimal);
/* search.c: the whole search; the result stays in S, and why it ended
 * in S->ended. */
int	pw_search_run(struct pw_search *s);
/* lns.c: the windows' course over the rounds of one search. */
struct pw_lns;
/* lns.c: a course from S's incumbent (which must exist), freed with
 * pw_lns_free. */
struct pw_lns *pw_lns_new(struct pw_search *s);
/* lns.c: at most WINDOWS windows from the incumbent, improvements
 * offered; *DONE once a whole pass of the largest windows was solved
 * without improvement.  Returns PW_OK or pw_search_milp's error. */
int	pw_lns_round(struct pw_search *s, struct pw_lns *, int windows,
	    bool *done);
/* lns.c: a window's share of simplex iterations. */
long	pw_lns_share(const struct pw_lns *);
/* lns.c: after the incumbent's objective fell by other means: strict
 * windows again, a new pass. */
void	pw_lns_renew(struct pw_lns *);
void	pw_lns_free(struct pw_lns *);
/* local.c: a round of at most MOVES moves of local search from the
 * incumbent (which must exist) with the generator X, each counted as one
 * iteration; the walk's best is offered.  Returns whether the
 * incumbent's objective fell. */
bool	pw_search_local(struct pw_search *s, long moves, uint64_t *x);
/* local.c: grafts onto the incumbent (which must exist) the fill of
 * DONOR, a faster schedule of the problem that breaks a limit: the most
 * of its first ops on every device that, with the incumbent's order for
 * the rest and transfers planned anew, keeps every limit; offered.
 * Returns whether the incumbent's objective fell. */
bool	pw_search_graft(struct pw_search *s, const struct pw_schedule *donor);

#endif /* PW_SOLVER_SEARCH_H */
