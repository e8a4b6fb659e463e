/*
 * calibrate.c - fits a problem's costs to measured runs (docs/runtime.md,
 * "Calibration").
 *
 * Every stage's f, b and w is the least-squares constant of its op
 * durations over every measured iteration of every run; a fused BW
 * sample counts toward b + w, so where a stage has both split and fused
 * backwards the three kinds are fitted together.  A stage's comm is the
 * mean wait of a tensor between its device and the next (arrive less the
 * sender's end, in the shown iterations).  The link is one shared latency
 * and a bandwidth each way, by least squares over the transfers.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* The sums of one stage's samples. */
struct pw_cal_stage {
	double	sum[PW_NKINDS];	/* of durations, by kind (compute kinds) */
	int	n[PW_NKINDS];
	double	comm;		/* sum of hop waits */
	int	ncomm;
};

/* One transfer's duration and the bytes it moved. */
struct pw_cal_xfer {
	bool	h2d;		/* RELOAD, else OFFLOAD */
	double	bytes;
	double	y;
};

struct pw_cal {
	const struct pw_problem *base;
	struct pw_cal_stage *stage;	/* [nstages] */
	struct pw_cal_xfer *xfer;
	size_t	nxfer, cap;
};

/* Adds the wait of the tensor OP (an F after a device boundary, a
 * backward before one) to the hop's stage: OP's arrive less the end of
 * FROM, its sender, both in the shown iteration. */
static void
pw_cal_hop(struct pw_cal *c, const struct pw_measured *m, const size_t *at,
    const struct pw_measured_op *mo, struct pw_op from)
{
	const struct pw_problem *p = c->base;
	size_t k;
	int s = mo->op.stage < from.stage ? mo->op.stage : from.stage;

	if (isnan(mo->arrive) || p->stages[s].device ==
	    p->stages[s + 1].device)
		return;
	/* The next stage's backward is its B, or its BW when fused. */
	k = at[pw_op_index(p, from)];
	if (k == SIZE_MAX && from.kind == PW_B) {
		from.kind = PW_BW;
		k = at[pw_op_index(p, from)];
	}
	if (k == SIZE_MAX)
		return;
	c->stage[s].comm += mo->arrive - m->ops[k].end;
	c->stage[s].ncomm++;
}

/* Adds run M's samples.  AT is scratch of the problem's universe. */
static void
pw_cal_add(struct pw_cal *c, const struct pw_measured *m, size_t *at)
{
	const struct pw_problem *p = c->base;
	const struct pw_measured_op *mo;
	struct pw_cal_stage *st;
	size_t i;
	int s, it;

	pw_measured_index(p, m, at);
	for (i = 0; i < m->nops; i++) {
		mo = &m->ops[i];
		s = mo->op.stage;
		st = &c->stage[s];
		for (it = 0; it < m->iterations; it++) {
			if (!pw_kind_is_transfer(mo->op.kind)) {
				st->sum[mo->op.kind] += mo->durations[it];
				st->n[mo->op.kind]++;
				continue;
			}
			if (c->nxfer == c->cap) {
				c->cap = c->cap == 0 ? 64 : 2 * c->cap;
				c->xfer = pw_xreallocarray(c->xfer, c->cap,
				    sizeof *c->xfer);
			}
			c->xfer[c->nxfer++] = (struct pw_cal_xfer){
			    mo->op.kind == PW_RELOAD, p->stages[s].offload,
			    mo->durations[it] };
		}
		if (mo->op.kind == PW_F && s > 0)
			pw_cal_hop(c, m, at, mo, (struct pw_op){ PW_F, s - 1,
			    mo->op.mb });
		else if ((mo->op.kind == PW_B || mo->op.kind == PW_BW) &&
		    s + 1 < p->nstages)
			pw_cal_hop(c, m, at, mo, (struct pw_op){ PW_B, s + 1,
			    mo->op.mb });
	}
}

/* Least squares of b and w over B samples (b), W samples (w) and BW
 * samples (b + w).  With fused samples alone the two cannot be told
 * apart: their sum is split as BASE's b and w are. */
static int
pw_cal_backward(const struct pw_cal_stage *st, const struct pw_stage *base,
    int s, double *b, double *w, struct pw_error *err)
{
	double nb = st->n[PW_B], nw = st->n[PW_W], nf = st->n[PW_BW];
	double sb = st->sum[PW_B], sw = st->sum[PW_W], sf = st->sum[PW_BW];
	double det, share;

	if (nb + nf == 0 || nw + nf == 0) {
		pw_error_set(err, "calibrate: stage %d has no measured "
		    "backward (B and W, or BW)", s);
		return PW_ERR_INPUT;
	}
	if (nb == 0 && nw == 0) {
		share = base->b + base->w > 0 ? base->b / (base->b + base->w) :
		    0.5;
		*b = share * sf / nf;
		*w = sf / nf - *b;
		return PW_OK;
	}
	/* The normal equations: (nb + nf) b + nf w = sb + sf and
	 * nf b + (nw + nf) w = sw + sf. */
	det = nb * nw + nf * (nb + nw);
	*b = ((sb + sf) * (nw + nf) - nf * (sw + sf)) / det;
	*w = ((sw + sf) * (nb + nf) - nf * (sb + sf)) / det;
	/* Noise can push one below 0 where the other takes nearly all. */
	if (*b < 0 || *w < 0) {
		*b = fmax(*b, 0);
		*w = fmax(*w, 0);
	}
	return PW_OK;
}

/* The link's fit (docs/runtime.md): y = latency + bytes * a, with a =
 * 1 / d2h for offloads and 1 / h2d for reloads. */
static int
pw_cal_link(const struct pw_cal *c, struct pw_calibration *fit,
    struct pw_error *err)
{
	double n[2] = { 0 }, sx[2] = { 0 }, sy[2] = { 0 }, sxx[2] = { 0 };
	double sxy[2] = { 0 }, cxx[2] = { 0 }, cxy[2] = { 0 }, a[2];
	double num = 0, den = 0, lat = 0, lo = INFINITY, hi = -INFINITY;
	double mx, my;
	size_t i;
	int k;

	for (i = 0; i < c->nxfer; i++) {
		k = c->xfer[i].h2d;
		n[k]++;
		sx[k] += c->xfer[i].bytes;
		sy[k] += c->xfer[i].y;
		sxx[k] += c->xfer[i].bytes * c->xfer[i].bytes;
		sxy[k] += c->xfer[i].bytes * c->xfer[i].y;
		lo = fmin(lo, c->xfer[i].bytes);
		hi = fmax(hi, c->xfer[i].bytes);
	}
	/* Centred sums, for a latency that does not drown in rounding. */
	for (i = 0; i < c->nxfer; i++) {
		k = c->xfer[i].h2d;
		mx = sx[k] / n[k];
		my = sy[k] / n[k];
		cxx[k] += (c->xfer[i].bytes - mx) * (c->xfer[i].bytes - mx);
		cxy[k] += (c->xfer[i].bytes - mx) * (c->xfer[i].y - my);
	}
	fit->link_fit = lo < hi ? PW_LINK_FIT_APART : PW_LINK_FIT_SAME_BYTES;
	for (k = 0; k < 2 && fit->link_fit == PW_LINK_FIT_APART; k++)
		if (n[k] > 0) {
			num += (sy[k] * cxx[k] - sx[k] * cxy[k]) / sxx[k];
			den += n[k] * cxx[k] / sxx[k];
		}
	if (fit->link_fit == PW_LINK_FIT_APART)
		lat = num / den;
	for (k = 0; k < 2; k++)
		a[k] = n[k] > 0 ? (sxy[k] - lat * sx[k]) / sxx[k] : 0;
	/* A negative latency or a bandwidth that falls with the bytes is
	 * noise, not a link: fit through the origin instead. */
	if (fit->link_fit == PW_LINK_FIT_APART && (lat < 0 || (n[0] > 0 &&
	    a[0] <= 0) || (n[1] > 0 && a[1] <= 0))) {
		fit->link_fit = PW_LINK_FIT_NOISE;
		lat = 0;
		for (k = 0; k < 2; k++)
			a[k] = n[k] > 0 ? sxy[k] / sxx[k] : 0;
	}
	for (k = 0; k < 2; k++)
		if (n[k] > 0 && !(a[k] > 0)) {
			pw_error_set(err, "calibrate: the measured %s took no "
			    "time: the link's %s bandwidth cannot be fitted",
			    k == 0 ? "offloads" : "reloads", k == 0 ? "d2h" :
			    "h2d");
			return PW_ERR_INPUT;
		}
	fit->has_link = true;
	fit->latency = lat;
	fit->d2h = n[0] > 0 ? 1 / a[0] : c->base->link.d2h;
	fit->h2d = n[1] > 0 ? 1 / a[1] : c->base->link.h2d;
	return PW_OK;
}

/* The RMS of measured less fitted over RUNS' op durations, in seconds
 * and relative to the fitted (those fitted above 0), and over the
 * transfers alone. */
static void
pw_cal_residual(const struct pw_problem *p, const struct pw_measured *const *runs,
    size_t nruns, struct pw_calibration *fit)
{
	const struct pw_measured_op *mo;
	double ss = 0, rel = 0, link = 0, e, want;
	size_t r, i, n = 0, nrel = 0, nlink = 0;
	int it;

	for (r = 0; r < nruns; r++)
		for (i = 0; i < runs[r]->nops; i++) {
			mo = &runs[r]->ops[i];
			want = pw_op_duration(p, mo->op);
			for (it = 0; it < runs[r]->iterations; it++) {
				e = mo->durations[it] - want;
				ss += e * e;
				n++;
				if (want > 0) {
					rel += (e / want) * (e / want);
					nrel++;
				}
				if (pw_kind_is_transfer(mo->op.kind)) {
					link += e * e;
					nlink++;
				}
			}
		}
	fit->residual = n > 0 ? sqrt(ss / (double)n) : 0;
	fit->relative = nrel > 0 ? sqrt(rel / (double)nrel) : 0;
	fit->link_residual = nlink > 0 ? sqrt(link / (double)nlink) : 0;
}

/* Sets FIT's stage costs from C and writes them, with the link's, into
 * P. */
static int
pw_cal_apply(const struct pw_cal *c, struct pw_problem *p,
    struct pw_calibration *fit, struct pw_error *err)
{
	const struct pw_cal_stage *st;
	int s, k, rc;

	for (s = 0; s < p->nstages; s++) {
		st = &c->stage[s];
		if (st->n[PW_F] == 0) {
			pw_error_set(err, "calibrate: stage %d has no measured "
			    "F", s);
			return PW_ERR_INPUT;
		}
		fit->f[s] = st->sum[PW_F] / st->n[PW_F];
		if ((rc = pw_cal_backward(st, &c->base->stages[s], s, &fit->b[s],
		    &fit->w[s], err)) != PW_OK)
			return rc;
		for (k = PW_F; k <= PW_BW; k++)
			fit->samples[s] += st->n[k];
		if (s + 1 < p->nstages && p->stages[s].device ==
		    p->stages[s + 1].device)
			fit->comm[s] = 0;
		else if (st->ncomm > 0)
			fit->comm[s] = fmax(0, st->comm / st->ncomm);
		else
			fit->comm[s] = p->stages[s].comm;
		p->stages[s].f = fit->f[s];
		p->stages[s].b = fit->b[s];
		p->stages[s].w = fit->w[s];
		p->stages[s].comm = fit->comm[s];
	}
	if (c->nxfer > 0) {
		if ((rc = pw_cal_link(c, fit, err)) != PW_OK)
			return rc;
		p->link.d2h = fit->d2h;
		p->link.h2d = fit->h2d;
		p->link.latency = fit->latency;
	}
	return PW_OK;
}

bool
pw_workload_differs(const struct pw_workload *a, const struct pw_workload *b,
    char *why, size_t len)
{
	int s;

	if (a->hidden != b->hidden)
		snprintf(why, len, "workload hidden %d, run 1 hidden %d",
		    a->hidden, b->hidden);
	else if (a->ffn != b->ffn)
		snprintf(why, len, "workload ffn %d, run 1 ffn %d", a->ffn,
		    b->ffn);
	else if (a->tokens != b->tokens)
		snprintf(why, len, "workload tokens %d, run 1 tokens %d",
		    a->tokens, b->tokens);
	else if (a->nstages != b->nstages)
		snprintf(why, len, "workload of %d stages, run 1 %d",
		    a->nstages, b->nstages);
	else {
		for (s = 0; s < a->nstages; s++)
			if (a->layers[s] != b->layers[s]) {
				snprintf(why, len, "workload stage %d's layers"
				    " %d, run 1 %d", s, a->layers[s],
				    b->layers[s]);
				return true;
			}
		return false;
	}
	return true;
}

int
pw_calibrate(const struct pw_problem *base, const struct pw_measured *const *runs,
    size_t nruns, struct pw_problem **out, struct pw_calibration *fit,
    struct pw_error *err)
{
	struct pw_cal c = { .base = base };
	struct pw_problem *p = NULL;
	size_t r, *at = NULL;
	char where[64], why[128];
	int rc = PW_OK;

	*out = NULL;
	memset(fit, 0, sizeof *fit);
	if (nruns == 0) {
		pw_error_set(err, "calibrate: no measured run to fit");
		return PW_ERR_INPUT;
	}
	for (r = 0; r < nruns; r++) {
		snprintf(where, sizeof where, "measured run %zu", r + 1);
		if ((rc = pw_measured_validate(base, NULL, runs[r], where,
		    err)) != PW_OK)
			return rc;
		/* Runs of other sizes time other ops: one mean would fit
		 * neither. */
		if (r > 0 && pw_workload_differs(&runs[r]->workload,
		    &runs[0]->workload, why, sizeof why)) {
			pw_error_set(err, "calibrate: %s: %s", where, why);
			return PW_ERR_INPUT;
		}
	}
	fit->nstages = base->nstages;
	fit->runs = (int)nruns;
	fit->f = pw_xcalloc((size_t)base->nstages, sizeof *fit->f);
	fit->b = pw_xcalloc((size_t)base->nstages, sizeof *fit->b);
	fit->w = pw_xcalloc((size_t)base->nstages, sizeof *fit->w);
	fit->comm = pw_xcalloc((size_t)base->nstages, sizeof *fit->comm);
	fit->samples = pw_xcalloc((size_t)base->nstages, sizeof *fit->samples);
	c.stage = pw_xcalloc((size_t)base->nstages, sizeof *c.stage);
	at = pw_xreallocarray(NULL, pw_op_universe(base), sizeof *at);
	for (r = 0; r < nruns; r++)
		pw_cal_add(&c, runs[r], at);
	p = pw_problem_copy(base);
	/* The fitted costs are no longer what the model's cost model gives:
	 * splitting the model again would drop them. */
	pw_origin_free(p->origin);
	p->origin = NULL;
	if ((rc = pw_cal_apply(&c, p, fit, err)) != PW_OK ||
	    (rc = pw_problem_validate(p, "calibrate: the costs fitted to "
	    "the measured runs", err)) != PW_OK)
		goto out;
	pw_cal_residual(p, runs, nruns, fit);
	*out = p;
	p = NULL;
out:
	if (rc != PW_OK)
		pw_calibration_free(fit);
	pw_problem_free(p);
	free(at);
	free(c.stage);
	free(c.xfer);
	return rc;
}

void
pw_calibration_free(struct pw_calibration *fit)
{
	free(fit->f);
	free(fit->b);
	free(fit->w);
	free(fit->comm);
	free(fit->samples);
	memset(fit, 0, sizeof *fit);
}
