/*
 * planner_int.h - what the planner's two files share: a design's slot and
 * the run.  solver/planner.c has the API, the designs and the result,
 * solver/planner_search.c the three phases of the search.
 */
#ifndef PW_PLANNER_INT_H
#define PW_PLANNER_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "solver.h"

/* Designs the optimizer works on at a time, and its rounds over them.
 * Three at a time: the first design in order of promise is often not the
 * one the optimizer improves most, and a batch of three shares the time
 * left three ways, still a useful share each on the 60 s default.  Three
 * rounds: a round gives each design still improving a share of the time
 * left; a design that stops improving (or reaches its bound) gives its
 * later shares to the others, which by the third round have the batch's
 * time between them.  Both are judgement, not measured optima:
 * docs/planner.md has the benchmark they were tuned on. */
#define PW_PLANNER_OPTIMIZE	3
#define PW_PLANNER_ROUNDS	3
/* A design's starting splits: the given one (of the given layout), its
 * even and balanced ones, and with chunks the even and balanced one-chunk
 * splits shared among them. */
#define PW_PLANNER_STARTS	5
/* Seconds between progress reports (the contract asks for one a second). */
#define PW_PLANNER_TICK		0.25
/* Seconds between looks at the clock and the cancel flag while a family
 * builds (the contract stops a cancelled planner within 100 ms). */
#define PW_PLANNER_POLL		0.05
/* Seconds a family build may run past its phase's deadline, by its
 * estimate before it starts and on the clock while it runs. */
#define PW_PLANNER_OVERRUN	1.0
/* The designs the split moves climb from: those within 10% of the best
 * after the families (their starts include the balanced splits; the rest
 * rarely climb that far, and the optimizer has better use for the time). */
#define PW_PLANNER_CLIMB	1.1
/* The share of the time limit the families and the split moves may use
 * when the optimizer has designs to work on. */
#define PW_PLANNER_SPLIT_SHARE	0.5

/* One design and the best it has found. */
struct pw_planner_slot {
	struct pw_design design;	/* its layers: the best split's */
	struct pw_model model;		/* the origin's, this recomputation */
	struct pw_split split;		/* the origin's, this layout */
	/* The design uses the link where another design, without it, is
	 * searched too: only schedules that move something count. */
	bool	need_transfer;
	struct pw_problem *problem;	/* the best schedule's; NULL: none */
	struct pw_schedule *schedule;
	char	name[32];
	double	objective;		/* INFINITY: none yet */
	bool	optimized;
	bool	active;			/* the optimizer's to work on */
	/* What the slots are ordered by: the objective, or for the
	 * optimizer the promise, midway between the objective and the
	 * bound (a low bound promises, a schedule far above it may not get
	 * there). */
	double	key;
};

struct pw_planner_run {
	/* One of the two: the problem with given stages, or the model's
	 * origin (model, hardware, the split the search starts from). */
	const struct pw_problem *p;
	const struct pw_origin *origin;
	struct pw_planner_opts o;
	double	t0, deadline, split_deadline;
	long	moves;			/* split moves left; -1: no limit */
	size_t	tried;
	size_t	builds, skipped;	/* family builds run, skipped for time */
	/* [pw_nfamilies]: each family's seconds per op of the universe in
	 * its last build, 0 before one. */
	double	*rate;
	double	best;
	char	best_name[32];
	double	last_tick;
	const char *phase;
	bool	timed_out, out_of_moves;
	struct pw_planner_slot *slot;
	size_t	nslot;
	/* Of the schedules over their limits, the least over: what the
	 * error says when no design fits. */
	double	tight_share;
	int	tight_device;
	double	tight_peak, tight_limit;
	/* Why the design nearest to a split has none, the layers its
	 * limits hold (pw_split_most_layers; -1 before any) and, when
	 * none, what its short device needs. */
	struct pw_error why;
	long	why_most;
	double	why_need;
};

/* planner.c: R's designs into its slots, the problem's own first (its
 * chunks, placement, recomputation and link: where the search starts);
 * PW_OK, or PW_ERR_INPUT for a link asked of hardware without one.
 * pw_planner_slots_free frees them. */
int	pw_planner_designs(struct pw_planner_run *, struct pw_error *);
void	pw_planner_slots_free(struct pw_planner_run *);
/* planner.c: why R has no design with a schedule, into ERR: cancelled,
 * or the clock, before any design was timed, before one that fits (what
 * was tried says nothing of the rest: a family still building may fit)
 * or before one gave a schedule; a split that fits nothing, or the
 * schedule nearest its limit. */
void	pw_planner_none(const struct pw_planner_run *, struct pw_error *);
/* planner.c: Q's bounds for OBJ into OUT, the strongest first, as a design
 * that OFFLOADs (or keeps every activation on its device) is bound:
 * pw_lower_bound_terms's count. */
int	pw_planner_bound_terms(const struct pw_problem *q, bool offload,
	    enum pw_objective obj, struct pw_bound_term out[PW_BOUND_TERMS]);

/* planner_search.c: reports progress (every PW_PLANNER_TICK seconds, or
 * at once when FORCE) with BEST and its schedule's NAME. */
void	pw_planner_tick(struct pw_planner_run *, double best, const char *name,
	    bool force);
/* planner_search.c: runs WORK(ARG) on a thread of its own, reporting
 * R's best every quarter second until it ends; with LEAVE finite (a time
 * on pw_now's clock), leaves it at LEAVE or on a cancel (DROP then
 * frees ARG once WORK ends).  Returns 1 when WORK ended (ARG is the
 * caller's again), 0 when left, or PW_ERR_INTERNAL with ERR when no
 * thread starts (WORK not run, ARG the caller's). */
int	pw_planner_thread(struct pw_planner_run *, void (*work)(void *),
	    void (*drop)(void *), void *arg, double leave, struct pw_error *);
/* planner_search.c: whether the cancel flag is set. */
bool	pw_planner_cancelled(const struct pw_planner_run *);
/* planner_search.c: the slots that hold a schedule, best first, their
 * count in *N (an array the caller frees). */
struct pw_planner_slot **pw_planner_ranked(const struct pw_planner_run *,
	    size_t *n);
/* planner_search.c: the three phases on the run's designs.  Returns
 * PW_OK, or PW_ERR_INTERNAL with ERR (a family or the optimizer failing
 * its own checks). */
int	pw_planner_search(struct pw_planner_run *, struct pw_error *);

#endif /* PW_PLANNER_INT_H */
