/*
 * milp_lp.c - columns and rows collected before lp_solve sees them.
 *
 * lp_solve wants every column before the rows that use them, and the
 * formulations create binaries as they find rows that need them, so the
 * model is collected here first.  Rows are kept sorted by column with
 * duplicates merged; a row left without columns is checked on the spot.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "milp_int.h"

void
pw_lpb_init(struct pw_lpb *b, bool names)
{
	memset(b, 0, sizeof *b);
	b->names = names;
	b->capcols = 64;
	b->col = pw_xcalloc((size_t)b->capcols, sizeof *b->col);
	b->caprows = 64;
	b->rowstart = pw_xcalloc((size_t)b->caprows + 1, sizeof *b->rowstart);
	b->rowtype = pw_xmalloc((size_t)b->caprows * sizeof *b->rowtype);
	b->rhs = pw_xmalloc((size_t)b->caprows * sizeof *b->rhs);
	b->capnnz = 1024;
	b->idx = pw_xmalloc(b->capnnz * sizeof *b->idx);
	b->val = pw_xmalloc(b->capnnz * sizeof *b->val);
}

void
pw_lpb_free(struct pw_lpb *b)
{
	int c;

	for (c = 1; c <= b->ncols; c++)
		free(b->col[c].name);
	free(b->col);
	free(b->rowstart);
	free(b->rowtype);
	free(b->rhs);
	free(b->idx);
	free(b->val);
	memset(b, 0, sizeof *b);
}

static int
pw_lpb_vcol(struct pw_lpb *b, double lo, double hi, bool integer,
    const char *fmt, va_list ap)
{
	struct pw_lpcol *c;
	char name[64];

	if (b->ncols + 1 == b->capcols) {
		b->capcols *= 2;
		b->col = pw_xreallocarray(b->col, (size_t)b->capcols,
		    sizeof *b->col);
	}
	c = &b->col[++b->ncols];
	c->lo = lo;
	c->hi = hi;
	c->integer = integer;
	c->branch = 0;
	c->name = NULL;
	if (b->names) {
		vsnprintf(name, sizeof name, fmt, ap);
		c->name = pw_xstrdup(name);
	}
	return b->ncols;
}

/* Returns a new column; FMT names it (used only when writing the model). */
int
pw_lpb_col(struct pw_lpb *b, double lo, double hi, bool integer,
    const char *fmt, ...)
{
	va_list ap;
	int c;

	va_start(ap, fmt);
	c = pw_lpb_vcol(b, lo, hi, integer, fmt, ap);
	va_end(ap);
	return c;
}

int
pw_lpb_binary(struct pw_lpb *b, const char *fmt, ...)
{
	va_list ap;
	int c;

	va_start(ap, fmt);
	c = pw_lpb_vcol(b, 0, 1, true, fmt, ap);
	va_end(ap);
	b->nbinaries++;
	return c;
}

void
pw_lpb_hint(struct pw_lpb *b, int col, bool value)
{
	assert(col >= 1 && col <= b->ncols);
	b->col[col].branch = value ? 1 : -1;
}

void
pw_lpb_term(struct pw_lpb *b, int col, double coef)
{
	assert(col >= 1 && col <= b->ncols);
	if (b->nnz == b->capnnz) {
		b->capnnz *= 2;
		b->idx = pw_xreallocarray(b->idx, b->capnnz, sizeof *b->idx);
		b->val = pw_xreallocarray(b->val, b->capnnz, sizeof *b->val);
	}
	b->idx[b->nnz] = col;
	b->val[b->nnz] = coef;
	b->nnz++;
}

void
pw_lpb_const(struct pw_lpb *b, double c)
{
	b->pending += c;
}

void
pw_lpb_lit(struct pw_lpb *b, struct pw_lit l, double coef)
{
	if (l.col == 0) {
		if (l.val)
			pw_lpb_const(b, coef);
	} else if (l.neg) {
		pw_lpb_const(b, coef);
		pw_lpb_term(b, l.col, -coef);
	} else {
		pw_lpb_term(b, l.col, coef);
	}
}

/* Sorts the open row by column and merges repeated columns. */
static size_t
pw_lpb_merge(struct pw_lpb *b, size_t from)
{
	size_t i, j, n = from;

	for (i = from + 1; i < b->nnz; i++) {
		int c = b->idx[i];
		double v = b->val[i];

		for (j = i; j > from && b->idx[j - 1] > c; j--) {
			b->idx[j] = b->idx[j - 1];
			b->val[j] = b->val[j - 1];
		}
		b->idx[j] = c;
		b->val[j] = v;
	}
	for (i = from; i < b->nnz; i++) {
		if (n > from && b->idx[n - 1] == b->idx[i]) {
			b->val[n - 1] += b->val[i];
			continue;
		}
		b->idx[n] = b->idx[i];
		b->val[n++] = b->val[i];
	}
	/* Drop what cancelled out. */
	for (i = j = from; i < n; i++) {
		if (b->val[i] == 0)
			continue;
		b->idx[j] = b->idx[i];
		b->val[j++] = b->val[i];
	}
	return j;
}

void
pw_lpb_row(struct pw_lpb *b, enum pw_rowtype type, double rhs)
{
	size_t from = b->rowstart[b->nrows];
	double r = rhs - b->pending, tol = pw_solver_tol(rhs);

	b->pending = 0;
	b->nnz = pw_lpb_merge(b, from);
	if (b->nnz == from) {
		if ((type == PW_ROW_LE && r < -tol) ||
		    (type == PW_ROW_GE && r > tol) ||
		    (type == PW_ROW_EQ && fabs(r) > tol))
			b->infeasible = true;
		return;
	}
	if (b->nrows == b->caprows) {
		b->caprows *= 2;
		b->rowstart = pw_xreallocarray(b->rowstart,
		    (size_t)b->caprows + 1, sizeof *b->rowstart);
		b->rowtype = pw_xreallocarray(b->rowtype, (size_t)b->caprows,
		    sizeof *b->rowtype);
		b->rhs = pw_xreallocarray(b->rhs, (size_t)b->caprows,
		    sizeof *b->rhs);
	}
	b->rowtype[b->nrows] = type;
	b->rhs[b->nrows] = r;
	b->rowstart[++b->nrows] = b->nnz;
}

void
pw_lpb_discard(struct pw_lpb *b)
{
	b->nnz = b->rowstart[b->nrows];
	b->pending = 0;
}

struct pw_lit
pw_lit_const(bool v)
{
	struct pw_lit l = { 0, false, v };

	return l;
}

struct pw_lit
pw_lit_col(int col, bool neg)
{
	struct pw_lit l = { col, neg, false };

	assert(col > 0);
	return l;
}

struct pw_lit
pw_lit_not(struct pw_lit l)
{
	if (l.col == 0)
		l.val = !l.val;
	else
		l.neg = !l.neg;
	return l;
}

bool
pw_lit_value(struct pw_lit l, const double *values)
{
	if (l.col == 0)
		return l.val;
	return (values[l.col - 1] > 0.5) != l.neg;
}

void
pw_lpb_span_cols(struct pw_lpb *b, int devices, double horizon, int **first,
    int **last)
{
	int dev;

	*first = pw_xcalloc((size_t)devices, sizeof **first);
	*last = pw_xcalloc((size_t)devices, sizeof **last);
	for (dev = 0; dev < devices; dev++) {
		(*first)[dev] = pw_lpb_col(b, 0, horizon, false, "first_%d",
		    dev);
		(*last)[dev] = pw_lpb_col(b, 0, horizon, false, "last_%d",
		    dev);
	}
}

void
pw_lpb_span_rows(struct pw_lpb *b, int first, int last, double busy)
{
	pw_lpb_term(b, last, 1);
	pw_lpb_term(b, first, -1);
	pw_lpb_row(b, PW_ROW_GE, busy);
	pw_lpb_term(b, b->objcol, 1);
	pw_lpb_term(b, last, -1);
	pw_lpb_term(b, first, 1);
	pw_lpb_row(b, PW_ROW_GE, 0);
}
