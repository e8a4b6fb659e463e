/*
 * milp_int.h - what the parts of the MILP share, private to milp*.c.
 *
 * milp_graph.c turns a request into the model's ops, the precedences that
 * hold in every solution (dependencies, same-kind microbatch order, the
 * incumbent's order of fixed ops, pins), what they imply on each resource
 * and bounds on every start.  milp_lp.c collects columns and rows and hands
 * them to lp_solve.  milp_disj.c (ordering binaries, big-M) and
 * milp_time.c (one binary per op and time slot) are the two formulations
 * over that graph; milp.c picks one, solves it and turns the solution back
 * into a schedule.
 */
#ifndef PW_MILP_INT_H
#define PW_MILP_INT_H

#include <stdint.h>

#include "internal.h"
#include "milp.h"

/* ------------------------------------------------------------------ */
/* The graph                                                           */

/* Whether an activation moves to host memory. */
enum pw_zmode {
	PW_Z_NO,		/* never (and it has no transfer ops) */
	PW_Z_YES,		/* as the incumbent does, fixed */
	PW_Z_VAR,		/* a decision: the binary column z */
};

/* Where an op stands against a window (free ops): the model holds the
 * ops the window's time span touches; on each resource the others come
 * before it or after it as in the incumbent. */
enum pw_zone {
	PW_ZONE_IN,		/* a start column of the model */
	PW_ZONE_PRE,		/* ends before the window: starts as it did */
	PW_ZONE_POST,		/* starts after it: counted in the tails
				 * (rest) of the ops before it */
};

/* An op of the model: every op of the incumbent, plus the OFFLOAD and
 * RELOAD an activation whose offload is a decision may get. */
struct pw_mop {
	struct pw_op op;
	int	res;		/* device d, or devices + channel */
	int	local;		/* its place in res's list */
	int	act;		/* its activation, stage * microbatches + mb */
	double	dur;		/* model time units */
	double	lb, ub;		/* bounds on its start */
	double	anc;		/* its resource's work that must come first */
	double	desc;		/* its own and its resource's work after it */
	double	rest;		/* from its start, the least time until all
				 * ops can have ended */
	bool	free;		/* its order against other ops is a decision */
	bool	maybe;		/* a transfer that exists only if z = 1 */
	int	pos;		/* position in the incumbent, -1 for new ops */
	int	rank;		/* its place in a topological order of the
				 * edges */
	enum pw_zone zone;
};

struct pw_mact {
	int	f, back, w;	/* model ops; w is -1 when back is a BW */
	int	off, rel;	/* -1 when the activation never moves */
	enum pw_zmode z;
	int	zcol;		/* the binary of PW_Z_VAR */
};

/* start(to) >= end(from) + delay, or start(from) + delay. */
struct pw_medge {
	int	from, to;
	bool	from_start;
	double	delay;
};

struct pw_mres {
	int	n;
	int	*ops;		/* model ops, the incumbent's order first */
	int	words;		/* per row of desc */
	uint64_t *desc;		/* [n * words]: bit k of row i: i precedes k */
};

struct pw_mm {
	const struct pw_milp_request *req;
	const struct pw_problem *p;
	const struct pw_timing *inc;	/* the incumbent simulated */
	int	nops;
	struct pw_mop *ops;
	int	*op_of;		/* [universe]: model op of an op index, or -1 */
	int	nacts;
	struct pw_mact *acts;
	int	nres;
	struct pw_mres *res;
	int	nedges;
	struct pw_medge *edges;
	double	scale;		/* seconds per model time unit */
	bool	grid;		/* every duration and hop whole units */
	double	horizon;	/* every op ends by it */
	bool	zoned;		/* some op is outside the window's zone */
	double	obj_lo, obj_hi;	/* the objective's range */
};

/* The graph of REQ for objectives of at least AT_LEAST seconds and below
 * BETTER_THAN (by a unit in whole units); INC is the incumbent
 * simulated. */
int	pw_mm_build(struct pw_mm *, const struct pw_milp_request *,
	    const struct pw_timing *inc, double at_least, double better_than,
	    struct pw_error *);
void	pw_mm_free(struct pw_mm *);
/* The length of edge E from the start of its source to the start of its
 * target. */
double	pw_mm_len(const struct pw_mm *, const struct pw_medge *e);
/* The dependencies (pw_op_deps) into activation A's ops as edges into
 * OUT, returning how many: those between its compute ops (into its F,
 * backward and W, in that order), or with ROUND_TRIP those of its
 * transfers (F to OFFLOAD to RELOAD to the backward).  Three at most:
 * of the next stage's B and BW, which pw_op_deps both names, a model
 * holds one, since its incumbent simulated (the simulator refuses a
 * backward that is both). */
#define PW_MM_ACT_DEPS	3
int	pw_mm_act_deps(const struct pw_mm *, const struct pw_mact *a,
	    bool round_trip, struct pw_medge out[PW_MM_ACT_DEPS]);
/* The edges by source: those of op I are edges[succ[first[I]]] up to
 * edges[succ[first[I + 1] - 1]] (the caller frees both arrays). */
void	pw_mm_succ(const struct pw_mm *, size_t **first, int **succ);
/* True when I ends before K starts in every solution (same resource). */
bool	pw_mm_reach(const struct pw_mm *, int i, int k);
/* Whether op I is part of the model (a transfer whose activation cannot
 * move is not, nor an op outside the window's zone). */
bool	pw_mm_used(const struct pw_mm *, int i);
/* DEVICE's memory limit is finite. */
bool	pw_mm_limited(const struct pw_mm *, int device);

/* ------------------------------------------------------------------ */
/* Columns and rows                                                    */

/* A 0/1 quantity: a constant (col 0) or a binary column, maybe 1 - x. */
struct pw_lit {
	int	col;
	bool	neg;
	bool	val;
};

enum pw_rowtype { PW_ROW_LE = 1, PW_ROW_GE = 2, PW_ROW_EQ = 3 };

struct pw_lpcol {
	double	lo, hi;
	bool	integer;
	int	branch;		/* branch first: 1 up, -1 down, 0 default */
	char	*name;		/* NULL unless the builder names columns */
};

/* The model as lp_solve will get it: columns are 1-based as there. */
struct pw_lpb {
	bool	names;
	int	ncols, capcols;
	struct pw_lpcol *col;	/* [ncols + 1], entry 0 unused */
	int	nbinaries;
	int	nrows, caprows;
	size_t	*rowstart;	/* [nrows + 1] into idx/val */
	int	*rowtype;
	double	*rhs;
	size_t	nnz, capnnz;
	int	*idx;
	double	*val;
	double	pending;	/* the open row's constant, left side */
	int	objcol;
	/* 0, or a column minimized with weight tieweight beside objcol;
	 * tiebase is its value in the incumbent */
	int	tiecol;
	double	tieweight;
	double	tiebase;
	bool	infeasible;	/* some row or bound cannot hold */
};

void	pw_lpb_init(struct pw_lpb *, bool names);
void	pw_lpb_free(struct pw_lpb *);
int	pw_lpb_col(struct pw_lpb *, double lo, double hi, bool integer,
	    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int	pw_lpb_binary(struct pw_lpb *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Asks branch-and-bound to try COL = VALUE first (the incumbent's). */
void	pw_lpb_hint(struct pw_lpb *, int col, bool value);
void	pw_lpb_term(struct pw_lpb *, int col, double coef);
void	pw_lpb_lit(struct pw_lpb *, struct pw_lit, double coef);
void	pw_lpb_const(struct pw_lpb *, double);
/* Closes the open row: terms + constant TYPE rhs. */
void	pw_lpb_row(struct pw_lpb *, enum pw_rowtype, double rhs);
/* Forgets the open row. */
void	pw_lpb_discard(struct pw_lpb *);
struct pw_lit pw_lit_const(bool);
struct pw_lit pw_lit_col(int col, bool neg);
struct pw_lit pw_lit_not(struct pw_lit);
/* Value of a literal in a solution (columns 1-based in VALUES[col - 1]). */
bool	pw_lit_value(struct pw_lit, const double *values);

/* The span objective, shared by the formulations: each of DEVICES's
 * first start and last end as columns in [0, HORIZON] (into *FIRST and
 * *LAST, arrays the caller frees); and a device's rows LAST - FIRST >=
 * BUSY and objective >= LAST - FIRST. */
void	pw_lpb_span_cols(struct pw_lpb *, int devices, double horizon,
	    int **first, int **last);
void	pw_lpb_span_rows(struct pw_lpb *, int first, int last, double busy);

/* ------------------------------------------------------------------ */
/* Formulations                                                        */

/* What a solution says, whichever formulation produced it. */
struct pw_msol {
	double	*start;		/* [nops]: model units, NAN for absent ops */
	/* [nacts]: the compute op with the latest start at which the
	 * activation was counted as away (its reload must begin after
	 * it), or -1. */
	int	*away_last;
};

struct pw_form {
	const char *name;
	/* Adds columns and rows; the objective is column b->objcol.  Sets
	 * b->infeasible when the model cannot hold (no better schedule
	 * within it), having built all of it all the same. */
	void	(*build)(struct pw_mm *, struct pw_lpb *, void **state);
	/* Reads lp_solve's column values into SOL. */
	void	(*read)(const struct pw_mm *, void *state, const double *values,
		    struct pw_msol *sol);
	/* Negative when op I goes before op K on their resource, positive
	 * after; NULL when the start times say it all. */
	int	(*order)(const struct pw_mm *, void *state,
		    const double *values, int i, int k);
	/* When the simulated schedule T of a solution breaks a limit: the
	 * binaries (into COLS) that said what T does not do, for the next
	 * solve to hold at 0; returns how many.  NULL: never. */
	int	(*mismatch)(const struct pw_mm *, void *state,
		    const double *values, const struct pw_timing *t, int *cols);
	void	(*free)(void *state);
	/* Whether it fits the request (NULL: always). */
	bool	(*fits)(const struct pw_mm *);
};

extern const struct pw_form pw_form_disj;
extern const struct pw_form pw_form_time;

#endif /* PW_MILP_INT_H */
