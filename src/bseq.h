/*
 * bseq.h - a sorted sequence of (key, value) pairs of doubles, for the
 * offload planner's channels and memory levels (offload.c).
 *
 * The planner inserts transfers and instants in the middle of sequences
 * tens of thousands long, lowers the levels over a range of instants at a
 * time and asks for the highest one after each move: with plain arrays
 * each of those was linear, and a plan of 2,048 microbatches spent most
 * of its time moving memory and rescanning.  Here the pairs sit in blocks
 * of a few hundred: an insert or a removal moves one block, a range
 * update adds to whole blocks at once (a pending addition per block) and
 * the highest value is the highest of the blocks' maxima.  Keys are
 * distinct and ascending; values are whatever the owner stores (a
 * channel's interval ends, a device's levels).
 *
 * A position names a pair: the end of the sequence where there is none;
 * pw_bseq_prev of the first pair is not valid.  Insertions and removals
 * make every position the caller holds invalid.
 */
#ifndef PW_BSEQ_H
#define PW_BSEQ_H

#include <stdbool.h>
#include <stddef.h>

struct pw_bseq_block;

struct pw_bseq {
	struct pw_bseq_block **blk;
	int	nblk;
	int	cap;
};

struct pw_bpos {
	int	blk;
	int	i;
};

/* The first index in the ascending V[0..n) whose value is at least X
 * (N when none is). */
int	pw_first_at_least(const double *v, int n, double x);

/* An empty sequence; pw_bseq_free releases what it grew. */
void	pw_bseq_init(struct pw_bseq *);
void	pw_bseq_free(struct pw_bseq *);
/* Empties the sequence and keeps its room. */
void	pw_bseq_clear(struct pw_bseq *);

/* The first pair whose key is at least KEY (the end when none is). */
struct pw_bpos pw_bseq_lower(const struct pw_bseq *, double key);
struct pw_bpos pw_bseq_next(const struct pw_bseq *, struct pw_bpos);
struct pw_bpos pw_bseq_prev(const struct pw_bseq *, struct pw_bpos);
/* Whether POS names a pair (not the end, not before the first). */
bool	pw_bseq_valid(const struct pw_bseq *, struct pw_bpos);
double	pw_bseq_key(const struct pw_bseq *, struct pw_bpos);
double	pw_bseq_value(const struct pw_bseq *, struct pw_bpos);

/* Inserts (KEY, VALUE); KEY must not be there yet. */
void	pw_bseq_insert(struct pw_bseq *, double key, double value);
void	pw_bseq_remove(struct pw_bseq *, struct pw_bpos);
/* Adds DELTA to the value of every pair with FROM <= key < TO. */
void	pw_bseq_add(struct pw_bseq *, double from, double to, double delta);
/* The first pair at or after POS (valid) whose value is LEN or more
 * before the next pair's key (next key >= value + LEN, as computed), or
 * the last pair: for pairs that are disjoint intervals [key, value), the
 * interval that the first gap of at least LEN follows. */
struct pw_bpos pw_bseq_gap(struct pw_bseq *, struct pw_bpos pos, double len);
/* The last pair at or before POS (valid) that is the first or whose
 * previous pair's value is LEN or more before its key (compared as
 * pw_bseq_gap compares): for disjoint intervals, the first of the run
 * that ends with POS's and leaves no gap of LEN between its intervals. */
struct pw_bpos pw_bseq_gap_before(struct pw_bseq *, struct pw_bpos pos,
	    double len);
/* The highest value (-INFINITY when empty) and the first key holding
 * it in *KEY (untouched when empty). */
double	pw_bseq_max(const struct pw_bseq *, double *key);

#endif
