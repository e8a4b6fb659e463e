/*
 * milp_time.c - the time-indexed formulation, for small models whose
 * durations and hops are whole units and that move no activation.
 *
 * S(i, t) = 1 when op i has started by slot t: non-decreasing in t, 1
 * from the last slot its bounds allow.  A precedence of length L is
 * S(k, t) <= S(i, t - L) for every t; a device runs op i in slot t when
 * S(i, t) - S(i, t - d_i) = 1, at most one at a time; the memory level at
 * t after t's events (frees first) is static + act S(F, t) - the frees of
 * the ops that ended by t.  Its linear relaxation is far tighter than the
 * big-M model's, which is what proves small memory-limited cases optimal;
 * solved bottom-up (milp.c) it needs a few seconds where big-M needs
 * minutes, but its size grows with the horizon in units.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "milp_int.h"

/* Past these the model is too big to beat the big-M one. */
#define PW_TIME_MAX_SLOTS	512
#define PW_TIME_MAX_BINARIES	20000

struct pw_time {
	long	*lo, *hi;	/* [nops]: each start's window, units */
	int	*first;		/* [nops]: column of S(i, lo), the next ones
				 * follow; 0 when the start is fixed */
	int	*firstcol, *lastcol;	/* span: [devices] */
};

static bool
pw_time_fits(const struct pw_mm *mm)
{
	double count = 0;
	int i;

	if (!mm->grid || mm->horizon > PW_TIME_MAX_SLOTS)
		return false;
	for (i = 0; i < mm->nops; i++) {
		if (!pw_mm_used(mm, i))
			continue;
		if (pw_kind_is_transfer(mm->ops[i].op.kind))
			return false;
		count += fmax(0, mm->ops[i].ub - mm->ops[i].lb);
	}
	return count <= PW_TIME_MAX_BINARIES;
}

static struct pw_lit
pw_time_started(const struct pw_time *st, int i, long t)
{
	if (t < st->lo[i])
		return pw_lit_const(false);
	if (t >= st->hi[i])
		return pw_lit_const(true);
	return pw_lit_col(st->first[i] + (int)(t - st->lo[i]), false);
}

/* Adds COEF * L to the open row and to *MOST what it can add at most. */
static void
pw_time_add(struct pw_lpb *b, struct pw_lit l, double coef, double *most)
{
	pw_lpb_lit(b, l, coef);
	if (l.col == 0 ? l.val : coef > 0)
		*most += coef;
}

/* The terms start(I) - hi(I) = -sum S(I, t) with coefficient COEF. */
static void
pw_time_start(struct pw_lpb *b, const struct pw_time *st, int i, double coef)
{
	long t;

	for (t = st->lo[i]; t < st->hi[i]; t++)
		pw_lpb_term(b, st->first[i] + (int)(t - st->lo[i]), -coef);
}

static void
pw_time_columns(struct pw_mm *mm, struct pw_lpb *b, struct pw_time *st)
{
	const struct pw_problem *p = mm->p;
	char name[64];
	long t;
	int i;

	for (i = 0; i < mm->nops; i++) {
		const struct pw_mop *mo = &mm->ops[i];

		st->lo[i] = lround(mo->lb);
		st->hi[i] = lround(mo->ub);
		if (st->lo[i] > st->hi[i]) {
			b->infeasible = true;
			st->hi[i] = st->lo[i];
		}
		pw_op_name(name, sizeof name, mo->op);
		name[strcspn(name, "(")] = '\0';
		for (t = st->lo[i]; t < st->hi[i]; t++) {
			int c = pw_lpb_binary(b, "s_%s_%d_%d_%ld", name,
			    mo->op.stage, mo->op.mb, t);

			if (t == st->lo[i])
				st->first[i] = c;
		}
	}
	if (mm->obj_lo > mm->obj_hi)
		b->infeasible = true;
	b->objcol = pw_lpb_col(b, mm->obj_lo, fmax(mm->obj_lo, mm->obj_hi),
	    true, "obj");
	if (mm->req->objective != PW_OBJ_SPAN)
		return;
	pw_lpb_span_cols(b, p->devices, mm->horizon, &st->firstcol,
	    &st->lastcol);
}

static void
pw_time_precedences(struct pw_mm *mm, struct pw_lpb *b, struct pw_time *st)
{
	int i, e;
	long t, len;

	for (i = 0; i < mm->nops; i++) {
		for (t = st->lo[i]; t + 1 < st->hi[i]; t++) {
			pw_lpb_lit(b, pw_time_started(st, i, t), 1);
			pw_lpb_lit(b, pw_time_started(st, i, t + 1), -1);
			pw_lpb_row(b, PW_ROW_LE, 0);
		}
	}
	for (e = 0; e < mm->nedges; e++) {
		const struct pw_medge *edge = &mm->edges[e];

		len = lround(pw_mm_len(mm, edge));
		for (t = st->lo[edge->to]; t < st->hi[edge->to]; t++) {
			struct pw_lit before = pw_time_started(st, edge->from,
			    t - len);

			if (before.col == 0 && before.val)
				continue;
			pw_lpb_lit(b, pw_time_started(st, edge->to, t), 1);
			pw_lpb_lit(b, before, -1);
			pw_lpb_row(b, PW_ROW_LE, 0);
		}
	}
}

/* One op at a time on each device, in every slot where two may run. */
static void
pw_time_devices(struct pw_mm *mm, struct pw_lpb *b, struct pw_time *st)
{
	int dev, x, n;
	long t, from, to;

	for (dev = 0; dev < mm->p->devices; dev++) {
		const struct pw_mres *res = &mm->res[dev];

		from = LONG_MAX;
		to = LONG_MIN;
		for (x = 0; x < res->n; x++) {
			int i = res->ops[x];

			from = st->lo[i] < from ? st->lo[i] : from;
			if (st->hi[i] + lround(mm->ops[i].dur) > to)
				to = st->hi[i] + lround(mm->ops[i].dur);
		}
		for (t = from; t < to; t++) {
			n = 0;
			for (x = 0; x < res->n; x++) {
				int i = res->ops[x];
				long d = lround(mm->ops[i].dur);

				if (d == 0 || t < st->lo[i] ||
				    t >= st->hi[i] + d)
					continue;
				pw_lpb_lit(b, pw_time_started(st, i, t), 1);
				pw_lpb_lit(b, pw_time_started(st, i, t - d),
				    -1);
				n++;
			}
			if (n < 2)
				pw_lpb_discard(b);
			else
				pw_lpb_row(b, PW_ROW_LE, 1);
		}
	}
}

/* The level of DEVICE after the events of slot T, in units of its limit,
 * as the open row; returns the most it can reach. */
static double
pw_time_level(struct pw_mm *mm, struct pw_lpb *b, const struct pw_time *st,
    int dev, long t)
{
	const struct pw_problem *p = mm->p;
	double unit = p->memory[dev].limit > 0 ? p->memory[dev].limit : 1;
	double most = p->memory[dev].static_bytes / unit;
	int s, j, m = p->microbatches;

	pw_lpb_const(b, most);
	for (s = 0; s < p->nstages; s++) {
		const struct pw_stage *sg = &p->stages[s];

		if (sg->device != dev)
			continue;
		for (j = 0; j < m; j++) {
			const struct pw_mact *u = &mm->acts[s * m + j];
			const struct pw_mop *back = &mm->ops[u->back];

			pw_time_add(b, pw_time_started(st, u->f, t),
			    sg->act / unit, &most);
			pw_time_add(b, pw_time_started(st, u->back,
			    t - lround(back->dur)), -(u->w >= 0 ?
			    sg->act - sg->hold : sg->act) / unit, &most);
			if (u->w >= 0)
				pw_time_add(b, pw_time_started(st, u->w,
				    t - lround(mm->ops[u->w].dur)),
				    -sg->hold / unit, &most);
		}
	}
	return most;
}

/* Memory at every slot where an F of the device may start. */
static void
pw_time_memory(struct pw_mm *mm, struct pw_lpb *b, struct pw_time *st)
{
	const struct pw_problem *p = mm->p;
	int dev, x;
	long t, from, to;

	for (dev = 0; dev < p->devices; dev++) {
		const struct pw_mres *res = &mm->res[dev];
		double unit = p->memory[dev].limit > 0 ?
		    p->memory[dev].limit : 1;

		if (!pw_mm_limited(mm, dev))
			continue;
		from = LONG_MAX;
		to = LONG_MIN;
		for (x = 0; x < res->n; x++) {
			int i = res->ops[x];

			if (mm->ops[i].op.kind != PW_F)
				continue;
			from = st->lo[i] < from ? st->lo[i] : from;
			to = st->hi[i] > to ? st->hi[i] : to;
		}
		for (t = from; t <= to; t++) {
			if (pw_time_level(mm, b, st, dev, t) <=
			    p->memory[dev].limit / unit + 1e-9)
				pw_lpb_discard(b);
			else
				pw_lpb_row(b, PW_ROW_LE,
				    p->memory[dev].limit / unit);
		}
	}
}

static void
pw_time_objective(struct pw_mm *mm, struct pw_lpb *b, struct pw_time *st)
{
	const struct pw_problem *p = mm->p;
	int i, x, dev;
	double busy;

	if (mm->req->objective != PW_OBJ_SPAN) {
		for (i = 0; i < mm->nops; i++) {
			pw_lpb_term(b, b->objcol, 1);
			pw_time_start(b, st, i, -1);
			pw_lpb_row(b, PW_ROW_GE, st->hi[i] + mm->ops[i].rest);
		}
		return;
	}
	for (dev = 0; dev < p->devices; dev++) {
		const struct pw_mres *res = &mm->res[dev];

		busy = 0;
		for (x = 0; x < res->n; x++) {
			const struct pw_mop *mo = &mm->ops[res->ops[x]];

			i = res->ops[x];
			busy += mo->dur;
			pw_lpb_term(b, st->lastcol[dev], 1);
			pw_time_start(b, st, i, -1);
			pw_lpb_row(b, PW_ROW_GE, st->hi[i] + mo->desc);
			pw_lpb_term(b, st->firstcol[dev], 1);
			pw_time_start(b, st, i, -1);
			pw_lpb_row(b, PW_ROW_LE, st->hi[i] - mo->anc);
		}
		pw_lpb_span_rows(b, st->firstcol[dev], st->lastcol[dev], busy);
	}
}

static void
pw_time_build(struct pw_mm *mm, struct pw_lpb *b, void **state)
{
	struct pw_time *st = pw_xcalloc(1, sizeof *st);

	*state = st;
	st->lo = pw_xcalloc((size_t)mm->nops, sizeof *st->lo);
	st->hi = pw_xcalloc((size_t)mm->nops, sizeof *st->hi);
	st->first = pw_xcalloc((size_t)mm->nops, sizeof *st->first);
	pw_time_columns(mm, b, st);
	pw_time_precedences(mm, b, st);
	pw_time_devices(mm, b, st);
	pw_time_memory(mm, b, st);
	pw_time_objective(mm, b, st);
}

static void
pw_time_read(const struct pw_mm *mm, void *state, const double *values,
    struct pw_msol *sol)
{
	const struct pw_time *st = state;
	long t;
	int i;

	for (i = 0; i < mm->nops; i++) {
		double start = (double)st->hi[i];

		for (t = st->lo[i]; t < st->hi[i]; t++)
			start -= values[st->first[i] + (int)(t - st->lo[i]) -
			    1];
		sol->start[i] = round(start);
	}
}

static void
pw_time_free(void *state)
{
	struct pw_time *st = state;

	if (st == NULL)
		return;
	free(st->lo);
	free(st->hi);
	free(st->first);
	free(st->firstcol);
	free(st->lastcol);
	free(st);
}

const struct pw_form pw_form_time = {
	"time-indexed", pw_time_build, pw_time_read, NULL, NULL, pw_time_free,
	pw_time_fits,
};
