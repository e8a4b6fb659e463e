/*
 * lns.c - large-neighbourhood search: windows of ops (time slices,
 * stretches of one device, a microbatch's ops, the critical path's
 * neighbourhood) freed with everything else fixed to the incumbent,
 * each solved by lp_solve under a short limit of simplex iterations
 * (search.c's pw_search_milp), improvements kept.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "milp.h"
#include "search.h"

/* Windows: ops freed at first, at least and at most; windows without
 * improvement before the window grows. */
#define PW_LNS_START		24
#define PW_LNS_MIN		8
#define PW_LNS_MAX		160
#define PW_LNS_PASS		12
/* A window's share of the search: a twentieth of its limit, within these
 * (seconds), counted in lp_solve's simplex iterations at PW_LNS_RATE per
 * second rather than read off the clock, so that a window stops at the
 * same point on every run.  Windows that used their whole share ran
 * 5,000 to 23,000 iterations a second on the 2-core development machine,
 * depending on the problem; 13,000 keeps the benchmark's figures from
 * when shares were seconds (6,500 lost 6.2B-24's 0.0021 at 2p, which
 * went back to zb-auto's 0.0025). */
#define PW_LNS_SECONDS_MIN	0.05
#define PW_LNS_SECONDS		1.0
#define PW_LNS_RATE		13000

/* A compute op of the incumbent and its start, for time slices. */
struct pw_lns_key {
	double	start;
	size_t	op;
};

/* The incumbent as the windows see it. */
struct pw_lns {
	struct pw_timing *t;
	struct pw_lns_key *key;	/* its compute ops by start */
	size_t	n;
	size_t	*crit;		/* positions in KEY of the critical ones */
	size_t	ncrit;
	struct pw_where *where;	/* where its ops are */
	size_t	*queue;		/* [universe], scratch */
	bool	*mark;		/* [universe], scratch */
	unsigned long loaded;	/* the search's ACCEPTED when loaded */

	/* The windows' course, kept from round to round. */
	uint64_t x;		/* the generator */
	bool	*window;	/* [universe] */
	size_t	size, most;
	long	share;		/* simplex iterations per window */
	bool	ties;
	int	fails, proven;
};

static int
pw_lns_cmp(const void *x, const void *y)
{
	const struct pw_lns_key *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->op < b->op ? -1 : a->op > b->op;
}

/* The order OP is in: its device's or its channel's. */
static const struct pw_seq *
pw_lns_seq(const struct pw_search *s, struct pw_op op)
{
	int d = s->p->stages[op.stage].device;

	if (!pw_kind_is_transfer(op.kind))
		return &s->best->device[d];
	return &s->best->channel[pw_problem_channel(s->p, d, op.kind)];
}

/* Marks and queues op K when it is present, not yet marked, and ends
 * (or, FROM_START, starts) DELAY before AT. */
static void
pw_lns_tight(struct pw_lns *l, size_t k, bool from_start, double delay,
    double at, size_t *nq)
{
	double t;

	if (!pw_timing_has(l->t, k) || l->mark[k])
		return;
	t = (from_start ? l->t->start[k] : l->t->end[k]) + delay;
	if (fabs(t - at) > pw_solver_tol(at))
		return;
	l->mark[k] = true;
	l->queue[(*nq)++] = k;
}

/*
 * Marks the critical ops of the incumbent: those ending where the
 * objective is measured (the last end; for the span, the widest
 * device's last op), and back from each the ops whose end (plus the
 * communication between them) is exactly its start.
 */
static void
pw_lns_critical(const struct pw_search *s, struct pw_lns *l)
{
	const struct pw_problem *p = s->p;
	const struct pw_timing *t = l->t;
	size_t u = pw_op_universe(p), k, head = 0, nq = 0;
	struct pw_pred pred[PW_MAX_PREDS];
	const struct pw_seq *seq;
	double last = -INFINITY, span, widest = -INFINITY;
	int d, i, npred, wd = 0;

	memset(l->mark, 0, u * sizeof *l->mark);
	for (d = 0; d < p->devices; d++) {
		seq = &s->best->device[d];
		if (seq->len == 0)
			continue;
		k = pw_op_index(p, seq->ops[seq->len - 1]);
		span = t->end[k] - t->start[pw_op_index(p, seq->ops[0])];
		if (span > widest)
			widest = span, wd = d;
	}
	for (k = 0; k < u; k++)
		if (pw_timing_has(t, k) && t->end[k] > last)
			last = t->end[k];
	if (s->o->objective == PW_OBJ_SPAN) {
		seq = &s->best->device[wd];
		k = pw_op_index(p, seq->ops[seq->len - 1]);
		pw_lns_tight(l, k, false, 0, t->end[k], &nq);
	} else
		for (k = 0; k < u; k++)
			pw_lns_tight(l, k, false, 0, last, &nq);
	while (head < nq) {
		k = l->queue[head++];
		npred = pw_preds(p, s->best, l->where, pw_op_from_index(p, k),
		    pred);
		for (i = 0; i < npred; i++)
			pw_lns_tight(l, pw_op_index(p, pred[i].op),
			    pred[i].from_start, pred[i].delay, t->start[k], &nq);
	}
	l->ncrit = 0;
	for (k = 0; k < l->n; k++)
		if (l->mark[l->key[k].op])
			l->crit[l->ncrit++] = k;
}

/* Loads the incumbent of S into L (allocated on first use). */
static void
pw_lns_load(const struct pw_search *s, struct pw_lns *l)
{
	const struct pw_schedule *b = s->best;
	size_t u = pw_op_universe(s->p), k;
	struct pw_error err;
	int r, i, rc;

	if (l->key == NULL) {
		l->key = pw_xcalloc(u, sizeof *l->key);
		l->crit = pw_xcalloc(u, sizeof *l->crit);
		l->queue = pw_xcalloc(u, sizeof *l->queue);
		l->mark = pw_xcalloc(u, sizeof *l->mark);
	}
	l->loaded = s->accepted;
	pw_timing_free(l->t);
	pw_where_free(l->where);
	rc = pw_simulate(s->p, b, &l->t, &err);
	assert(rc == PW_OK);
	rc = pw_where_build(s->p, b, &l->where, &err);
	assert(rc == PW_OK);
	(void)rc;
	l->n = 0;
	for (r = 0; r < b->ndevices; r++)
		for (i = 0; i < b->device[r].len; i++) {
			k = pw_op_index(s->p, b->device[r].ops[i]);
			l->key[l->n].start = l->t->start[k];
			l->key[l->n++].op = k;
		}
	qsort(l->key, l->n, sizeof *l->key, pw_lns_cmp);
	pw_lns_critical(s, l);
}

void
pw_lns_free(struct pw_lns *l)
{
	if (l == NULL)
		return;
	pw_timing_free(l->t);
	free(l->key);
	free(l->crit);
	pw_where_free(l->where);
	free(l->queue);
	free(l->mark);
	free(l->window);
	free(l);
}

/* The first of LEN consecutive positions of N around position C. */
static size_t
pw_lns_around(size_t c, size_t len, size_t n)
{
	if (len >= n || c < len / 2)
		return 0;
	c -= len / 2;
	return c + len > n ? n - len : c;
}

/* How many compute ops of the incumbent start within the time span of
 * the compute ops of MASK: what a window's model (its zone) holds. */
static size_t
pw_lns_zone(const struct pw_lns *l, const bool *mask)
{
	double from = INFINITY, to = -INFINITY;
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		if (mask[l->key[i].op]) {
			from = fmin(from, l->key[i].start);
			to = fmax(to, l->t->end[l->key[i].op]);
		}
	for (i = 0; i < l->n; i++)
		n += l->key[i].start >= from && l->key[i].start < to;
	return n;
}

/*
 * Frees a window of about SIZE compute ops of the incumbent in MASK,
 * around a critical op three times in four (else any): a time slice
 * across the devices (SIZE consecutive ops by start), a stretch of the
 * op's device, or whole microbatches around the op's on every device,
 * chosen by the generator X, with the transfers of every activation the
 * window touches.  A stretch or microbatches whose time span holds more
 * than a window's worth of ops per device (its model would hold them
 * all) give way to a time slice.
 */
static void
pw_lns_window(const struct pw_search *s, const struct pw_lns *l, uint64_t *x,
    size_t size, bool *mask)
{
	const struct pw_problem *p = s->p;
	const struct pw_seq *seq;
	size_t i, c, lo, len, kind;
	struct pw_op op;
	int st, j, k;

	memset(mask, 0, pw_op_universe(p) * sizeof *mask);
	if (l->ncrit > 0 && pw_rng_below(x, 4) != 0)
		c = l->crit[pw_rng_below(x, l->ncrit)];
	else
		c = pw_rng_below(x, l->n);
	kind = pw_rng_below(x, 3);
	if (kind == 2) {
		/* Whole microbatches around the op's, on every device. */
		op = pw_op_from_index(p, l->key[c].op);
		len = size / (3 * (size_t)p->nstages);
		len = len < 1 ? 1 : len > (size_t)p->microbatches ?
		    (size_t)p->microbatches : len;
		lo = pw_lns_around((size_t)op.mb, len,
		    (size_t)p->microbatches);
		for (i = 0; i < l->n; i++) {
			op = pw_op_from_index(p, l->key[i].op);
			if ((size_t)op.mb >= lo && (size_t)op.mb < lo + len)
				mask[l->key[i].op] = true;
		}
	}
	if (kind == 1) {
		op = pw_op_from_index(p, l->key[c].op);
		seq = pw_lns_seq(s, op);
		len = size < (size_t)seq->len ? size : (size_t)seq->len;
		lo = pw_lns_around((size_t)l->where->position[l->key[c].op], len,
		    (size_t)seq->len);
		for (i = lo; i < lo + len; i++)
			mask[pw_op_index(p, seq->ops[i])] = true;
	}
	if (kind != 0 && pw_lns_zone(l, mask) > size * (size_t)p->devices) {
		memset(mask, 0, pw_op_universe(p) * sizeof *mask);
		kind = 0;
	}
	if (kind == 0) {
		len = size < l->n ? size : l->n;
		lo = pw_lns_around(c, len, l->n);
		for (i = lo; i < lo + len; i++)
			mask[l->key[i].op] = true;
	}
	for (st = 0; st < p->nstages; st++)
		for (j = 0; j < p->microbatches; j++) {
			bool touched = false;

			op = (struct pw_op){ PW_F, st, j };
			for (k = PW_F; k <= PW_BW; k++) {
				op.kind = (enum pw_kind)k;
				touched = touched || mask[pw_op_index(p, op)];
			}
			if (!touched)
				continue;
			for (k = PW_OFFLOAD; k <= PW_RELOAD; k++) {
				op.kind = (enum pw_kind)k;
				mask[pw_op_index(p, op)] = true;
			}
		}
}

/*
 * The windows' course: windows from the seed's sequence, each solved for
 * its share of the search, counted in simplex iterations (so that the
 * same windows come out the same on every run).  A window's share is a
 * twentieth of the search's budget, within PW_LNS_SECONDS_MIN and
 * PW_LNS_SECONDS: the iteration limit where there is one (so that it
 * alone decides the schedule), else the time limit.
 */
struct pw_lns *
pw_lns_new(struct pw_search *s)
{
	struct pw_lns *l = pw_xcalloc(1, sizeof *l);
	double budget;

	l->x = (uint64_t)s->o->seed;
	l->window = pw_xcalloc(pw_op_universe(s->p), sizeof *l->window);
	pw_lns_load(s, l);
	l->most = l->n < PW_LNS_MAX ? l->n : PW_LNS_MAX;
	l->size = l->most < PW_LNS_START ? l->most : PW_LNS_START;
	budget = s->o->iteration_limit > 0 ?
	    (double)s->o->iteration_limit / PW_LNS_RATE : s->limit;
	l->share = (long)(PW_LNS_RATE * fmax(PW_LNS_SECONDS_MIN,
	    fmin(PW_LNS_SECONDS, budget / 20)));
	return l;
}

long
pw_lns_share(const struct pw_lns *l)
{
	return l->share;
}

void
pw_lns_renew(struct pw_lns *l)
{
	l->ties = false;
	l->fails = l->proven = 0;
}

/*
 * At most WINDOWS windows, until the search stops.  Windows look for a
 * better objective; after a pass without one, also for schedules of the
 * same objective that end earlier (ties), until the objective falls
 * again.  A window that lp_solve cannot finish shrinks the next ones; a
 * pass with ties without improvement grows them; such a pass at the
 * largest size in which every window was solved sets *DONE (nothing more
 * to find with these neighbourhoods until the incumbent changes
 * otherwise: pw_lns_renew).
 */
int
pw_lns_round(struct pw_search *s, struct pw_lns *l, int windows, bool *done)
{
	bool improved, optimal;
	double before;
	int rc = PW_OK, w;

	*done = false;
	if (l->loaded != s->accepted)
		pw_lns_load(s, l);
	for (w = 0; w < windows && !pw_search_stopped(s) &&
	    !pw_search_closed(s); w++) {
		pw_lns_window(s, l, &l->x, l->size, l->window);
		before = s->eval.objective;
		if ((rc = pw_search_milp(s, l->window, l->ties, l->share, NULL,
		    "lns", &improved, &optimal)) != PW_OK)
			break;
		if (improved)
			pw_lns_load(s, l);
		if (improved && pw_solver_better(s->eval.objective, before)) {
			/* Strict windows again once the objective fell. */
			pw_lns_renew(l);
			continue;
		}
		/* A window that only ends earlier counts as none found
		 * for the size: the objective needs larger ones. */
		l->fails++;
		/* With ties a window seeks, it proves nothing: one that
		 * finds nothing in its time does not shrink the next. */
		if ((optimal || l->ties) && !improved)
			l->proven++;
		else if (!optimal && !improved && l->size > PW_LNS_MIN)
			l->size = l->size * 2 / 3 < PW_LNS_MIN ? PW_LNS_MIN :
			    l->size * 2 / 3;
		if (l->fails < PW_LNS_PASS)
			continue;
		/* A pass without a better objective: the same size again,
		 * taking schedules that only end earlier (see ties). */
		if (!l->ties) {
			l->ties = true;
			l->fails = l->proven = 0;
			continue;
		}
		if (l->size >= l->most && l->proven == l->fails) {
			*done = true;
			break;
		}
		l->size = l->size * 3 / 2 > l->most ? l->most :
		    l->size * 3 / 2;
		l->fails = l->proven = 0;
	}
	return rc;
}
