/*
 * bseq.c - a sorted sequence of (key, value) pairs in blocks (bseq.h).
 *
 * A block holds up to PW_BSEQ_BLOCK pairs, splits in two when an insert
 * finds it full and goes when its last pair is removed, so no block is
 * empty, and after only inserts (each split leaves two halves) a sequence
 * of n pairs has at most about 2n / PW_BSEQ_BLOCK blocks.  Removals merge
 * no blocks: the offload planner removes few pairs, and many removals
 * would leave sparse blocks for the scans to walk.  A block's values are
 * stored less its pending addition; any change to part of a block first
 * folds that addition into its values, so that a value read back is the
 * stored one plus at most the additions made to its whole block since.
 *
 * A channel's intervals (key the start, value the end) are searched for
 * the first gap that fits a transfer; where the channel is saturated
 * that walk went over every interval queued behind the release, once for
 * each transfer placed.  So each block also keeps its widest gap, from a
 * value to the next key within it, computed when asked after any change
 * to the block but an addition to all of it, which shifts it, and the
 * search skips the blocks too narrow.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "bseq.h"

/* Large enough that whole-sequence scans (the maximum, the search for a
 * block) stay short, small enough that moving a block's tail is. */
#define PW_BSEQ_BLOCK	256

struct pw_bseq_block {
	int	n;
	double	add;	/* pending: every value is val[i] + add */
	double	max;	/* of val[0 .. n), without ADD */
	double	gap;	/* of key[i + 1] - val[i], without ADD */
	bool	gap_stale;
	double	key[PW_BSEQ_BLOCK];
	double	val[PW_BSEQ_BLOCK];
};

void
pw_bseq_init(struct pw_bseq *s)
{
	memset(s, 0, sizeof *s);
}

void
pw_bseq_clear(struct pw_bseq *s)
{
	int b;

	for (b = 0; b < s->nblk; b++)
		free(s->blk[b]);
	s->nblk = 0;
}

void
pw_bseq_free(struct pw_bseq *s)
{
	pw_bseq_clear(s);
	free(s->blk);
	pw_bseq_init(s);
}

static void
pw_bseq_remax(struct pw_bseq_block *k)
{
	int i;

	k->max = -INFINITY;
	for (i = 0; i < k->n; i++)
		if (k->val[i] > k->max)
			k->max = k->val[i];
	k->gap_stale = true;
}

/* Folds block K's pending addition into its values. */
static void
pw_bseq_fold(struct pw_bseq_block *k)
{
	int i;

	if (k->add == 0)
		return;
	for (i = 0; i < k->n; i++)
		k->val[i] += k->add;
	k->add = 0;
	pw_bseq_remax(k);
}

/* Makes room for a block at index B and returns it, empty. */
static struct pw_bseq_block *
pw_bseq_new_block(struct pw_bseq *s, int b)
{
	struct pw_bseq_block *k;

	if (s->nblk == s->cap) {
		s->cap = s->cap == 0 ? 16 : 2 * s->cap;
		s->blk = pw_xreallocarray(s->blk, (size_t)s->cap,
		    sizeof *s->blk);
	}
	memmove(s->blk + b + 1, s->blk + b,
	    (size_t)(s->nblk - b) * sizeof *s->blk);
	k = pw_xmalloc(sizeof *k);
	k->n = 0;
	k->add = 0;
	k->max = -INFINITY;
	k->gap_stale = true;
	s->blk[b] = k;
	s->nblk++;
	return k;
}

int
pw_first_at_least(const double *v, int n, double x)
{
	int lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct pw_bpos
pw_bseq_lower(const struct pw_bseq *s, double key)
{
	const struct pw_bseq_block *k;
	int lo = 0, hi = s->nblk, mid;

	/* The first block whose last key is at least KEY holds the pair. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		k = s->blk[mid];
		if (k->key[k->n - 1] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->nblk)
		return (struct pw_bpos){ s->nblk, 0 };
	k = s->blk[lo];
	return (struct pw_bpos){ lo, pw_first_at_least(k->key, k->n,
	    key) };
}

struct pw_bpos
pw_bseq_next(const struct pw_bseq *s, struct pw_bpos pos)
{
	assert(pw_bseq_valid(s, pos));
	if (pos.i + 1 < s->blk[pos.blk]->n)
		return (struct pw_bpos){ pos.blk, pos.i + 1 };
	return (struct pw_bpos){ pos.blk + 1, 0 };
}

struct pw_bpos
pw_bseq_prev(const struct pw_bseq *s, struct pw_bpos pos)
{
	assert(pos.blk >= 0 && pos.blk <= s->nblk);
	if (pos.blk < s->nblk && pos.i > 0)
		return (struct pw_bpos){ pos.blk, pos.i - 1 };
	if (pos.blk == 0)
		return (struct pw_bpos){ -1, 0 };
	return (struct pw_bpos){ pos.blk - 1, s->blk[pos.blk - 1]->n - 1 };
}

bool
pw_bseq_valid(const struct pw_bseq *s, struct pw_bpos pos)
{
	return pos.blk >= 0 && pos.blk < s->nblk && pos.i >= 0 &&
	    pos.i < s->blk[pos.blk]->n;
}

double
pw_bseq_key(const struct pw_bseq *s, struct pw_bpos pos)
{
	assert(pw_bseq_valid(s, pos));
	return s->blk[pos.blk]->key[pos.i];
}

double
pw_bseq_value(const struct pw_bseq *s, struct pw_bpos pos)
{
	assert(pw_bseq_valid(s, pos));
	return s->blk[pos.blk]->val[pos.i] + s->blk[pos.blk]->add;
}

void
pw_bseq_insert(struct pw_bseq *s, double key, double value)
{
	struct pw_bseq_block *k, *upper;
	struct pw_bpos pos;
	int half;

	if (s->nblk == 0) {
		pos = (struct pw_bpos){ 0, 0 };
		k = pw_bseq_new_block(s, 0);
	} else {
		/* After every key: at the end of the last block. */
		pos = pw_bseq_lower(s, key);
		if (pos.blk == s->nblk)
			pos = (struct pw_bpos){ s->nblk - 1,
			    s->blk[s->nblk - 1]->n };
		k = s->blk[pos.blk];
	}
	assert(pos.i == k->n || k->key[pos.i] != key);
	if (k->n == PW_BSEQ_BLOCK) {
		pw_bseq_fold(k);
		half = k->n / 2;
		upper = pw_bseq_new_block(s, pos.blk + 1);
		upper->n = k->n - half;
		memcpy(upper->key, k->key + half, (size_t)upper->n *
		    sizeof *k->key);
		memcpy(upper->val, k->val + half, (size_t)upper->n *
		    sizeof *k->val);
		k->n = half;
		pw_bseq_remax(k);
		pw_bseq_remax(upper);
		if (pos.i > half) {
			pos.i -= half;
			k = upper;
		}
	}
	pw_bseq_fold(k);
	memmove(k->key + pos.i + 1, k->key + pos.i,
	    (size_t)(k->n - pos.i) * sizeof *k->key);
	memmove(k->val + pos.i + 1, k->val + pos.i,
	    (size_t)(k->n - pos.i) * sizeof *k->val);
	k->key[pos.i] = key;
	k->val[pos.i] = value;
	k->n++;
	if (value > k->max)
		k->max = value;
	k->gap_stale = true;
}

void
pw_bseq_remove(struct pw_bseq *s, struct pw_bpos pos)
{
	struct pw_bseq_block *k;

	assert(pw_bseq_valid(s, pos));
	k = s->blk[pos.blk];
	memmove(k->key + pos.i, k->key + pos.i + 1,
	    (size_t)(k->n - pos.i - 1) * sizeof *k->key);
	memmove(k->val + pos.i, k->val + pos.i + 1,
	    (size_t)(k->n - pos.i - 1) * sizeof *k->val);
	if (--k->n > 0) {
		pw_bseq_remax(k);
		return;
	}
	free(k);
	memmove(s->blk + pos.blk, s->blk + pos.blk + 1,
	    (size_t)(s->nblk - pos.blk - 1) * sizeof *s->blk);
	s->nblk--;
}

void
pw_bseq_add(struct pw_bseq *s, double from, double to, double delta)
{
	struct pw_bseq_block *k;
	struct pw_bpos pos = pw_bseq_lower(s, from);
	int b, i;

	for (b = pos.blk; b < s->nblk; b++) {
		k = s->blk[b];
		if (k->key[0] >= to)
			break;
		if (k->key[0] >= from && k->key[k->n - 1] < to) {
			k->add += delta;
			continue;
		}
		pw_bseq_fold(k);
		for (i = 0; i < k->n; i++)
			if (k->key[i] >= from && k->key[i] < to)
				k->val[i] += delta;
		pw_bseq_remax(k);
	}
}

/* Whether the pair at I of block K (the last of K: the first of NEXT,
 * NULL for none) has a key at least LEN after I's value, compared as
 * pw_bseq_gap promises. */
static bool
pw_bseq_gap_at(const struct pw_bseq_block *k, int i,
    const struct pw_bseq_block *next, double len)
{
	if (i + 1 < k->n)
		return k->key[i + 1] >= k->val[i] + k->add + len;
	return next == NULL || next->key[0] >= k->val[i] + k->add + len;
}

/* Whether no gap within block K can hold LEN.  The widest gap is a
 * difference, where the search compares a sum: a block is skipped only
 * where the two cannot disagree (their rounding is some 1e-16 of the
 * magnitudes; the margin is 1e-9 of them). */
static bool
pw_bseq_too_narrow(struct pw_bseq_block *k, double len)
{
	int i;

	if (k->gap_stale) {
		k->gap = -INFINITY;
		for (i = 0; i + 1 < k->n; i++)
			k->gap = fmax(k->gap, k->key[i + 1] - k->val[i]);
		k->gap_stale = false;
	}
	return k->gap - k->add + 1e-9 * (fabs(k->key[0]) +
	    fabs(k->key[k->n - 1]) + fabs(k->max) + fabs(k->add) +
	    fabs(len)) < len;
}

struct pw_bpos
pw_bseq_gap_before(struct pw_bseq *s, struct pw_bpos pos, double len)
{
	struct pw_bseq_block *k;
	int b = pos.blk, i = pos.i;

	assert(pw_bseq_valid(s, pos));
	for (;;) {
		k = s->blk[b];
		if (pw_bseq_too_narrow(k, len))
			i = 0;
		for (; i > 0; i--)
			if (pw_bseq_gap_at(k, i - 1, NULL, len))
				return (struct pw_bpos){ b, i };
		if (b == 0)
			return (struct pw_bpos){ 0, 0 };
		if (pw_bseq_gap_at(s->blk[b - 1], s->blk[b - 1]->n - 1, k, len))
			return (struct pw_bpos){ b, 0 };
		b--;
		i = s->blk[b]->n - 1;
	}
}

struct pw_bpos
pw_bseq_gap(struct pw_bseq *s, struct pw_bpos pos, double len)
{
	struct pw_bseq_block *k, *next;
	int b, i;

	assert(pw_bseq_valid(s, pos));
	for (b = pos.blk; b < s->nblk; b++) {
		k = s->blk[b];
		next = b + 1 < s->nblk ? s->blk[b + 1] : NULL;
		i = b == pos.blk ? pos.i : 0;
		if (b > pos.blk && pw_bseq_too_narrow(k, len))
			i = k->n - 1;
		for (; i < k->n; i++)
			if (pw_bseq_gap_at(k, i, next, len))
				return (struct pw_bpos){ b, i };
	}
	assert(!"the last pair always has room after it");
	return (struct pw_bpos){ s->nblk, 0 };
}

double
pw_bseq_max(const struct pw_bseq *s, double *key)
{
	const struct pw_bseq_block *k;
	double best = -INFINITY;
	int b, i, at = -1;

	for (b = 0; b < s->nblk; b++)
		if (s->blk[b]->max + s->blk[b]->add > best) {
			best = s->blk[b]->max + s->blk[b]->add;
			at = b;
		}
	if (at < 0)
		return best;
	k = s->blk[at];
	for (i = 0; i + 1 < k->n && k->val[i] + k->add != best; i++)
		continue;
	assert(k->val[i] + k->add == best);
	*key = k->key[i];
	return best;
}
