/*
 * milp_disj.c - the disjunctive formulation: a start column per op, an
 * ordering binary per pair of ops on one resource whose order is open,
 * big-M rows from the bounds of the two starts.
 *
 * Memory is checked when an op of a device starts: at its F starts, and
 * at every compute op of a device with movable activations, since a
 * reload may start with any of them.  On one device compute ops run one
 * at a time, so "x ended before a started" is the ordering binary of x
 * and a, and the level at a is linear in the binaries.  An activation
 * counts as away at a (its offloaded bytes off the device) only through a
 * binary rho <= z that makes its OFFLOAD end by a's start and its RELOAD
 * start after it; otherwise it counts as present, which never
 * undercounts.  The rebuilt schedule anchors a reload at the op after the
 * last one where it counted as away.  The simulator can still disagree:
 * it has no way to make a compute op wait for an offload, and starts
 * every op as early as it can; pw_disj_mismatch names the binaries it
 * contradicts, and milp.c solves again with them at 0.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "milp_int.h"

/* What the pair (i, k), i < k, of one resource is known to be. */
#define PW_PAIR_BEFORE	(-1)	/* i ends before k starts */
#define PW_PAIR_AFTER	(-2)

/* Open-addressing map from a pair of model ops to a PW_PAIR_* or the
 * binary column saying i goes first. */
struct pw_pairs {
	size_t	cap;		/* a power of two */
	size_t	n;
	uint64_t *key;		/* 0: empty (keys are pairs i < k) */
	int	*val;
};

/* An activation that may count as away at a compute op. */
struct pw_away {
	int	act;
	int	op;
	int	col;		/* its binary */
};

struct pw_disj {
	int	*tcol;		/* [nops]: start column, 0 if unused */
	struct pw_pairs pairs;
	int	naway, capaway;
	struct pw_away *away;
	int	*firstcol, *lastcol;	/* span: [devices] */
};

static uint64_t
pw_pairs_key(int i, int k)
{
	assert(i < k);
	return ((uint64_t)(uint32_t)(i + 1) << 32) | (uint32_t)k;
}

static size_t
pw_pairs_slot(const struct pw_pairs *h, uint64_t key)
{
	size_t s = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & (h->cap - 1);

	while (h->key[s] != 0 && h->key[s] != key)
		s = (s + 1) & (h->cap - 1);
	return s;
}

static void
pw_pairs_put(struct pw_pairs *h, int i, int k, int val)
{
	uint64_t key = pw_pairs_key(i, k);
	size_t s, c;

	if (2 * (h->n + 1) > h->cap) {
		struct pw_pairs old = *h;

		h->cap = old.cap == 0 ? 1024 : old.cap * 2;
		h->n = 0;
		h->key = pw_xcalloc(h->cap, sizeof *h->key);
		h->val = pw_xmalloc(h->cap * sizeof *h->val);
		for (c = 0; c < old.cap; c++) {
			if (old.key[c] == 0)
				continue;
			s = pw_pairs_slot(h, old.key[c]);
			h->key[s] = old.key[c];
			h->val[s] = old.val[c];
			h->n++;
		}
		free(old.key);
		free(old.val);
	}
	s = pw_pairs_slot(h, key);
	if (h->key[s] == 0)
		h->n++;
	h->key[s] = key;
	h->val[s] = val;
}

static bool
pw_pairs_get(const struct pw_pairs *h, int i, int k, int *val)
{
	size_t s;

	if (h->cap == 0)
		return false;
	s = pw_pairs_slot(h, pw_pairs_key(i, k));
	if (h->key[s] == 0)
		return false;
	*val = h->val[s];
	return true;
}

static double
pw_disj_tol(const struct pw_mm *mm)
{
	return pw_solver_tol(mm->horizon);
}

/* How much later than an op's start a reload must start for the model
 * to count its bytes as not yet back then: well above lp_solve's
 * tolerances, well below any duration. */
static double
pw_disj_eps(const struct pw_mm *mm)
{
	return 1e-6 * fmax(1, mm->horizon);
}

/* "X ends before A starts" (X and A on one resource, X != A). */
static struct pw_lit
pw_disj_before(const struct pw_mm *mm, const struct pw_disj *d, int x, int a)
{
	int v;
	bool found;

	assert(x != a);
	if (pw_mm_reach(mm, x, a))
		return pw_lit_const(true);
	if (pw_mm_reach(mm, a, x))
		return pw_lit_const(false);
	found = pw_pairs_get(&d->pairs, x < a ? x : a, x < a ? a : x, &v);
	assert(found);
	if (!found || v < 0)
		return pw_lit_const((v == PW_PAIR_BEFORE) == (x < a));
	return pw_lit_col(v, x > a);
}

/* The existence of op I: true, or its activation's z. */
static struct pw_lit
pw_disj_exists(const struct pw_mm *mm, int i)
{
	const struct pw_mact *a = &mm->acts[mm->ops[i].act];

	if (!mm->ops[i].maybe)
		return pw_lit_const(true);
	assert(a->z == PW_Z_VAR);
	return pw_lit_col(a->zcol, false);
}

/* Adds COEF times op I's start to the open row: its column, or its
 * start where it is fixed before the zone.  False for an op after the
 * zone, which the model does not hold (the caller drops the row). */
static bool
pw_disj_start(const struct pw_mm *mm, struct pw_lpb *b, const struct pw_disj *d,
    int i, double coef)
{
	if (d->tcol[i] != 0)
		pw_lpb_term(b, d->tcol[i], coef);
	else if (mm->ops[i].zone == PW_ZONE_PRE)
		pw_lpb_const(b, coef * mm->ops[i].lb);
	else
		return false;
	return true;
}

/* start(K) >= start(I) + LEN unless one of LITS is false; the big-M is
 * the most the bounds let the row fail by.  Nothing when neither start
 * is a column. */
static void
pw_disj_prec(const struct pw_mm *mm, struct pw_lpb *b, const struct pw_disj *d,
    int i, int k, double len, const struct pw_lit *lits, int nlits)
{
	double bigm = len + mm->ops[i].ub - mm->ops[k].lb;
	int l;

	if (bigm <= pw_disj_tol(mm) || (d->tcol[i] == 0 && d->tcol[k] == 0))
		return;
	for (l = 0; l < nlits; l++)
		if (lits[l].col == 0 && !lits[l].val)
			return;
	if (!pw_disj_start(mm, b, d, k, 1) ||
	    !pw_disj_start(mm, b, d, i, -1)) {
		pw_lpb_discard(b);
		return;
	}
	for (l = 0; l < nlits; l++)
		pw_lpb_lit(b, pw_lit_not(lits[l]), bigm);
	pw_lpb_row(b, PW_ROW_GE, len);
}

static void
pw_disj_columns(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d)
{
	const struct pw_problem *p = mm->p;
	char name[64];
	int i, u;

	for (u = 0; u < mm->nacts; u++) {
		struct pw_mact *a = &mm->acts[u];

		if (a->z != PW_Z_VAR)
			continue;
		a->zcol = pw_lpb_binary(b, "z_%d_%d", u / p->microbatches,
		    u % p->microbatches);
		pw_lpb_hint(b, a->zcol, mm->ops[a->off].pos >= 0);
	}
	for (i = 0; i < mm->nops; i++) {
		const struct pw_mop *mo = &mm->ops[i];

		if (!pw_mm_used(mm, i))
			continue;
		if (mo->lb > mo->ub + pw_disj_tol(mm))
			b->infeasible = true;
		pw_op_name(name, sizeof name, mo->op);
		name[strcspn(name, "(")] = '\0';
		d->tcol[i] = pw_lpb_col(b, mo->lb, fmax(mo->lb, mo->ub), false,
		    "t_%s_%d_%d", name, mo->op.stage, mo->op.mb);
	}
	if (mm->obj_lo > mm->obj_hi + pw_disj_tol(mm))
		b->infeasible = true;
	b->objcol = pw_lpb_col(b, mm->obj_lo, fmax(mm->obj_lo, mm->obj_hi),
	    mm->grid, "obj");
	if (mm->req->objective != PW_OBJ_SPAN)
		return;
	pw_lpb_span_cols(b, p->devices, mm->horizon, &d->firstcol,
	    &d->lastcol);
}

/* The precedences that hold in every solution, and the transfers of
 * activations whose offload is decided here. */
static void
pw_disj_precedences(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d)
{
	struct pw_medge trip[PW_MM_ACT_DEPS];
	int e, u, i, n;

	for (e = 0; e < mm->nedges; e++) {
		const struct pw_medge *edge = &mm->edges[e];

		pw_disj_prec(mm, b, d, edge->from, edge->to,
		    pw_mm_len(mm, edge), NULL, 0);
	}
	for (u = 0; u < mm->nacts; u++) {
		const struct pw_mact *a = &mm->acts[u];
		struct pw_lit z;

		if (a->z != PW_Z_VAR)
			continue;
		z = pw_lit_col(a->zcol, false);
		n = pw_mm_act_deps(mm, a, true, trip);
		for (i = 0; i < n; i++)
			pw_disj_prec(mm, b, d, trip[i].from, trip[i].to,
			    pw_mm_len(mm, &trip[i]), &z, 1);
	}
}

/* Decides how the pair I, K (I < K, one resource, not implied) is
 * ordered: by the bounds when they leave one way, else by a binary. */
static void
pw_disj_pair(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d, int i,
    int k)
{
	const struct pw_mop *mi = &mm->ops[i], *mk = &mm->ops[k];
	struct pw_lit lits[3];
	double tol = pw_disj_tol(mm);
	bool ik = mi->lb + mi->dur <= mk->ub + tol;
	bool ki = mk->lb + mk->dur <= mi->ub + tol;
	int n = 0, y;

	if (mi->ub + mi->dur <= mk->lb + tol) {
		pw_pairs_put(&d->pairs, i, k, PW_PAIR_BEFORE);
		return;
	}
	if (mk->ub + mk->dur <= mi->lb + tol) {
		pw_pairs_put(&d->pairs, i, k, PW_PAIR_AFTER);
		return;
	}
	if (mi->maybe)
		lits[n++] = pw_disj_exists(mm, i);
	if (mk->maybe)
		lits[n++] = pw_disj_exists(mm, k);
	if (!ik && !ki) {
		/* They cannot both exist. */
		pw_pairs_put(&d->pairs, i, k, PW_PAIR_BEFORE);
		for (y = 0; y < n; y++)
			pw_lpb_lit(b, lits[y], 1);
		pw_lpb_row(b, PW_ROW_LE, n - 1);
		return;
	}
	if (!ik || !ki) {
		pw_pairs_put(&d->pairs, i, k, ik ? PW_PAIR_BEFORE :
		    PW_PAIR_AFTER);
		if (ik)
			pw_disj_prec(mm, b, d, i, k, mi->dur, lits, n);
		else
			pw_disj_prec(mm, b, d, k, i, mk->dur, lits, n);
		return;
	}
	y = pw_lpb_binary(b, "y_%d_%d", i, k);
	if (mi->pos >= 0 && mk->pos >= 0)
		pw_lpb_hint(b, y, mi->pos < mk->pos);
	pw_pairs_put(&d->pairs, i, k, y);
	lits[n] = pw_lit_col(y, false);
	pw_disj_prec(mm, b, d, i, k, mi->dur, lits, n + 1);
	lits[n] = pw_lit_col(y, true);
	pw_disj_prec(mm, b, d, k, i, mk->dur, lits, n + 1);
}

/*
 * Transfers of one kind and stage go in microbatch order, as their Fs and
 * backwards do (a restriction: it keeps the search off orders that differ
 * only in which of two alike activations moves first), unless the
 * incumbent orders them otherwise.  Returns whether it ordered I and K.
 */
static bool
pw_disj_fifo(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d, int i,
    int k)
{
	const struct pw_mop *mi = &mm->ops[i], *mk = &mm->ops[k];
	struct pw_lit lits[2];
	int first = mi->op.mb < mk->op.mb ? i : k;
	int second = first == i ? k : i;
	int n = 0;

	if (!pw_kind_is_transfer(mi->op.kind) || mi->op.kind != mk->op.kind ||
	    mi->op.stage != mk->op.stage || (mm->ops[first].pos >= 0 &&
	    mm->ops[second].pos >= 0 &&
	    mm->ops[first].pos > mm->ops[second].pos))
		return false;
	if (mi->maybe)
		lits[n++] = pw_disj_exists(mm, i);
	if (mk->maybe)
		lits[n++] = pw_disj_exists(mm, k);
	pw_pairs_put(&d->pairs, i, k, first == i ? PW_PAIR_BEFORE :
	    PW_PAIR_AFTER);
	pw_disj_prec(mm, b, d, first, second, mm->ops[first].dur, lits, n);
	return true;
}

static void
pw_disj_pairs(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d)
{
	int r, x, y;

	for (r = 0; r < mm->nres; r++) {
		const struct pw_mres *res = &mm->res[r];

		for (x = 0; x < res->n; x++) {
			int i = res->ops[x];

			if (!pw_mm_used(mm, i))
				continue;
			for (y = x + 1; y < res->n; y++) {
				int k = res->ops[y], lo = i < k ? i : k;
				int hi = i < k ? k : i;
				const struct pw_mop *mi = &mm->ops[i];
				const struct pw_mop *mk = &mm->ops[k];

				if (!pw_mm_used(mm, k) ||
				    pw_mm_reach(mm, i, k) ||
				    pw_mm_reach(mm, k, i))
					continue;
				assert(mi->free || mk->free);
				/* An activation's own transfers on one
				 * channel: the offload comes first. */
				if (mi->act == mk->act) {
					pw_pairs_put(&d->pairs, lo, hi,
					    (mm->ops[lo].op.kind ==
					    PW_OFFLOAD) ? PW_PAIR_BEFORE :
					    PW_PAIR_AFTER);
					continue;
				}
				if (!pw_disj_fifo(mm, b, d, lo, hi))
					pw_disj_pair(mm, b, d, lo, hi);
			}
		}
	}
}

static void
pw_disj_record(struct pw_disj *d, int act, int op, int col)
{
	if (d->naway == d->capaway) {
		d->capaway = d->capaway == 0 ? 256 : 2 * d->capaway;
		d->away = pw_xreallocarray(d->away, (size_t)d->capaway,
		    sizeof *d->away);
	}
	d->away[d->naway].act = act;
	d->away[d->naway].op = op;
	d->away[d->naway].col = col;
	d->naway++;
}

/* True when the activation and op A are all fixed: its away status at A
 * stays the incumbent's. */
static bool
pw_disj_fixed(const struct pw_mm *mm, const struct pw_mact *u, int a)
{
	return u->z == PW_Z_YES && !mm->ops[a].free && !mm->ops[u->f].free &&
	    !mm->ops[u->back].free && !mm->ops[u->off].free &&
	    !mm->ops[u->rel].free;
}

/* Whether timing T (the incumbent's, or a solution's) has activation U
 * away when op A starts (its offload ended by then, its reload not
 * started). */
static bool
pw_disj_was_away(const struct pw_mm *mm, const struct pw_timing *t,
    const struct pw_mact *u, int a)
{
	size_t io = pw_op_index(mm->p, mm->ops[u->off].op);
	size_t ir = pw_op_index(mm->p, mm->ops[u->rel].op);
	size_t ia = pw_op_index(mm->p, mm->ops[a].op);
	double tol = pw_solver_tol(t->start[ia]);

	return pw_timing_has(t, io) && t->end[io] <= t->start[ia] + tol &&
	    t->start[ir] > t->start[ia] + tol;
}

/* Whether activation U is away through the whole zone: it left before
 * the zone, and its reload waits for an op after it (its anchor). */
static bool
pw_disj_away_throughout(const struct pw_mm *mm, const struct pw_mact *u)
{
	struct pw_anchor anchor;
	const struct pw_op *rel = &mm->ops[u->rel].op;
	int at;

	if (u->z != PW_Z_YES || mm->ops[u->off].zone != PW_ZONE_PRE ||
	    mm->ops[u->rel].zone != PW_ZONE_POST ||
	    !pw_schedule_anchor(mm->req->incumbent, rel->stage, rel->mb,
	    &anchor))
		return false;
	at = mm->op_of[pw_op_index(mm->p, anchor.op)];
	return at >= 0 && mm->ops[at].zone == PW_ZONE_POST;
}

/* Adds to the open memory row of op A the bytes of U that may be away
 * (negative coefficient COEF per byte unit). */
static void
pw_disj_away(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d, int u,
    int a, double coef)
{
	const struct pw_mact *act = &mm->acts[u];
	const struct pw_mop *ma = &mm->ops[a], *off, *rel;
	struct pw_lit f, back;
	double tol = pw_disj_tol(mm);
	bool away;
	int col;

	if (act->z == PW_Z_NO || a == act->f || a == act->back)
		return;
	f = pw_disj_before(mm, d, act->f, a);
	back = pw_disj_before(mm, d, act->back, a);
	off = &mm->ops[act->off];
	rel = &mm->ops[act->rel];
	if ((f.col == 0 && !f.val) || (back.col == 0 && back.val) ||
	    off->lb + off->dur > ma->ub + tol ||
	    ma->lb + ma->dur > rel->ub + tol)
		return;
	if (pw_disj_away_throughout(mm, act)) {
		pw_lpb_const(b, coef);
		return;
	}
	away = pw_disj_was_away(mm, mm->inc, act, a);
	if (pw_disj_fixed(mm, act, a) && !away)
		return;
	col = pw_lpb_binary(b, "r_%d_%d", u, a);
	pw_lpb_hint(b, col, away);
	/* Fixed: as in the incumbent, until the simulator disagrees (see
	 * pw_disj_mismatch). */
	if (pw_disj_fixed(mm, act, a))
		b->col[col].lo = 1;
	pw_disj_record(d, u, a, col);
	pw_lpb_term(b, col, coef);
}

/* The rows that tie each away binary to its activation and times; kept
 * apart from the memory row they serve, which is open meanwhile. */
static void
pw_disj_away_rows(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d,
    int from)
{
	int k;

	for (k = from; k < d->naway; k++) {
		const struct pw_away *w = &d->away[k];
		const struct pw_mact *act = &mm->acts[w->act];
		struct pw_lit rho, f, back;

		rho = pw_lit_col(w->col, false);
		if (act->z == PW_Z_VAR) {
			pw_lpb_term(b, w->col, 1);
			pw_lpb_term(b, act->zcol, -1);
			pw_lpb_row(b, PW_ROW_LE, 0);
		}
		f = pw_disj_before(mm, d, act->f, w->op);
		if (f.col != 0) {
			pw_lpb_term(b, w->col, 1);
			pw_lpb_lit(b, f, -1);
			pw_lpb_row(b, PW_ROW_LE, 0);
		}
		back = pw_disj_before(mm, d, act->back, w->op);
		if (back.col != 0) {
			pw_lpb_term(b, w->col, 1);
			pw_lpb_lit(b, back, 1);
			pw_lpb_row(b, PW_ROW_LE, 1);
		}
		pw_disj_prec(mm, b, d, act->off, w->op,
		    mm->ops[act->off].dur, &rho, 1);
		pw_disj_prec(mm, b, d, w->op, act->rel, pw_disj_eps(mm), &rho,
		    1);
	}
}

/* The level of DEVICE at op A's start, as terms of the open row, in
 * units of its limit; returns the most it can reach. */
static double
pw_disj_level(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d,
    int dev, int a)
{
	const struct pw_problem *p = mm->p;
	double limit = p->memory[dev].limit, unit = limit > 0 ? limit : 1;
	double most = p->memory[dev].static_bytes / unit;
	struct pw_lit l;
	int s, j, m = p->microbatches;

	pw_lpb_const(b, p->memory[dev].static_bytes / unit);
	for (s = 0; s < p->nstages; s++) {
		const struct pw_stage *st = &p->stages[s];

		if (st->device != dev)
			continue;
		for (j = 0; j < m; j++) {
			const struct pw_mact *u = &mm->acts[s * m + j];
			double c;

			l = u->f == a ? pw_lit_const(true) :
			    pw_disj_before(mm, d, u->f, a);
			pw_lpb_lit(b, l, st->act / unit);
			most += (l.col != 0 || l.val) ? st->act / unit : 0;
			if (u->back != a) {
				c = (u->w >= 0 ? st->act - st->hold : st->act) /
				    unit;
				l = pw_disj_before(mm, d, u->back, a);
				pw_lpb_lit(b, l, -c);
				most -= (l.col == 0 && l.val) ? c : 0;
			}
			if (u->w >= 0 && u->w != a) {
				l = pw_disj_before(mm, d, u->w, a);
				pw_lpb_lit(b, l, -st->hold / unit);
				most -= (l.col == 0 && l.val) ?
				    st->hold / unit : 0;
			}
		}
	}
	return most;
}

/* Whether an activation of DEVICE may move or has moved. */
static bool
pw_disj_moves(const struct pw_mm *mm, int dev)
{
	int u;

	for (u = 0; u < mm->nacts; u++)
		if (mm->acts[u].z != PW_Z_NO &&
		    mm->p->stages[u / mm->p->microbatches].device == dev)
			return true;
	return false;
}

static void
pw_disj_memory(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d)
{
	const struct pw_problem *p = mm->p;
	int dev, x, u, from, m = p->microbatches;

	for (dev = 0; dev < p->devices; dev++) {
		const struct pw_mres *res = &mm->res[dev];
		double unit = p->memory[dev].limit > 0 ?
		    p->memory[dev].limit : 1;
		bool moves = pw_disj_moves(mm, dev);

		if (!pw_mm_limited(mm, dev))
			continue;
		for (x = 0; x < res->n; x++) {
			int a = res->ops[x];

			if ((!moves && mm->ops[a].op.kind != PW_F) ||
			    mm->ops[a].zone != PW_ZONE_IN)
				continue;
			if (pw_disj_level(mm, b, d, dev, a) <=
			    p->memory[dev].limit / unit + 1e-9) {
				/* It cannot exceed the limit. */
				pw_lpb_discard(b);
				continue;
			}
			from = d->naway;
			for (u = 0; u < mm->nacts; u++)
				if (p->stages[u / m].device == dev)
					pw_disj_away(mm, b, d, u, a,
					    -p->stages[u / m].offload / unit);
			pw_lpb_row(b, PW_ROW_LE, p->memory[dev].limit / unit);
			pw_disj_away_rows(mm, b, d, from);
		}
	}
}

/* The objective: past every op's start at least the time that op needs
 * to let everything end (its chain and its resource's remaining work),
 * or, for span, each device's last end less its first start. */
static void
pw_disj_objective(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d)
{
	const struct pw_problem *p = mm->p;
	int i, dev;

	if (mm->req->objective != PW_OBJ_SPAN) {
		for (i = 0; i < mm->nops; i++) {
			if (!pw_mm_used(mm, i) || mm->ops[i].maybe)
				continue;
			pw_lpb_term(b, b->objcol, 1);
			pw_lpb_term(b, d->tcol[i], -1);
			pw_lpb_row(b, PW_ROW_GE, mm->ops[i].rest);
		}
		return;
	}
	for (dev = 0; dev < p->devices; dev++) {
		const struct pw_mres *res = &mm->res[dev];
		double busy = 0;

		for (i = 0; i < res->n; i++) {
			const struct pw_mop *mo = &mm->ops[res->ops[i]];

			busy += mo->dur;
			/* An op after the zone: its device's last end is
			 * bounded through the ops before it (desc). */
			if (mo->zone == PW_ZONE_POST)
				continue;
			pw_lpb_term(b, d->lastcol[dev], 1);
			pw_disj_start(mm, b, d, res->ops[i], -1);
			pw_lpb_row(b, PW_ROW_GE, mo->desc);
			pw_disj_start(mm, b, d, res->ops[i], 1);
			pw_lpb_term(b, d->firstcol[dev], -1);
			pw_lpb_row(b, PW_ROW_GE, mo->anc);
		}
		pw_lpb_span_rows(b, d->firstcol[dev], d->lastcol[dev], busy);
	}
}

/* With ties: a column for the sum of the free ops' starts, minimized
 * with a weight small enough that no change of it outweighs the least
 * change of the objective (a whole unit, or a thousandth of the
 * horizon). */
static void
pw_disj_ties(struct pw_mm *mm, struct pw_lpb *b, struct pw_disj *d)
{
	double room = fmax(1, mm->horizon);
	int i, n = 0;

	if (!mm->req->ties)
		return;
	for (i = 0; i < mm->nops; i++)
		if (mm->ops[i].free && d->tcol[i] != 0 && !mm->ops[i].maybe) {
			pw_lpb_term(b, d->tcol[i], 1);
			b->tiebase += mm->inc->start[pw_op_index(mm->p,
			    mm->ops[i].op)] / mm->scale;
			n++;
		}
	if (n == 0) {
		pw_lpb_discard(b);
		return;
	}
	b->tiecol = pw_lpb_col(b, 0, n * room, false, "ties");
	pw_lpb_term(b, b->tiecol, -1);
	pw_lpb_row(b, PW_ROW_EQ, 0);
	b->tieweight = (mm->grid ? 0.5 : 1e-3) / (n * room);
}

static void
pw_disj_build(struct pw_mm *mm, struct pw_lpb *b, void **state)
{
	struct pw_disj *d = pw_xcalloc(1, sizeof *d);

	*state = d;
	d->tcol = pw_xcalloc((size_t)mm->nops, sizeof *d->tcol);
	pw_disj_columns(mm, b, d);
	pw_disj_precedences(mm, b, d);
	pw_disj_pairs(mm, b, d);
	pw_disj_memory(mm, b, d);
	pw_disj_objective(mm, b, d);
	pw_disj_ties(mm, b, d);
}

static void
pw_disj_read(const struct pw_mm *mm, void *state, const double *values,
    struct pw_msol *sol)
{
	const struct pw_disj *d = state;
	int i, k;

	for (i = 0; i < mm->nops; i++) {
		sol->start[i] = NAN;
		if (d->tcol[i] != 0 &&
		    pw_lit_value(pw_disj_exists(mm, i), values))
			sol->start[i] = values[d->tcol[i] - 1];
	}
	for (k = 0; k < d->naway; k++) {
		const struct pw_away *w = &d->away[k];
		int *last = &sol->away_last[w->act];

		if (values[w->col - 1] < 0.5)
			continue;
		if (*last < 0 || sol->start[w->op] > sol->start[*last])
			*last = w->op;
	}
}

/* The away binaries set in VALUES whose activation the simulated
 * schedule T does not have away at the op's start: the simulator started
 * the op before the offload ended (it has no way to make a compute op
 * wait for a transfer) or the reload before the op.  Stores their
 * columns in COLS (room for every binary); returns how many. */
static int
pw_disj_mismatch(const struct pw_mm *mm, void *state, const double *values,
    const struct pw_timing *t, int *cols)
{
	const struct pw_disj *d = state;
	int k, n = 0;

	for (k = 0; k < d->naway; k++) {
		const struct pw_away *w = &d->away[k];

		if (values[w->col - 1] >= 0.5 && !pw_disj_was_away(mm, t,
		    &mm->acts[w->act], w->op))
			cols[n++] = w->col;
	}
	return n;
}

static int
pw_disj_order(const struct pw_mm *mm, void *state, const double *values,
    int i, int k)
{
	const struct pw_disj *d = state;

	return pw_lit_value(pw_disj_before(mm, d, i, k), values) ? -1 : 1;
}

static void
pw_disj_free(void *state)
{
	struct pw_disj *d = state;

	if (d == NULL)
		return;
	free(d->tcol);
	free(d->pairs.key);
	free(d->pairs.val);
	free(d->away);
	free(d->firstcol);
	free(d->lastcol);
	free(d);
}

const struct pw_form pw_form_disj = {
	"big-M", pw_disj_build, pw_disj_read, pw_disj_order, pw_disj_mismatch,
	pw_disj_free, NULL,
};
