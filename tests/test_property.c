/*
 * test_property.c - the simulator against the checker on random problems.
 *
 * Each case draws a problem (1 to 6 devices; loop, V or explicit placement;
 * costs, comm and offload, half the time on a grid so that instants tie)
 * and a random valid order: ops are appended one at a time, each picked at
 * random among those whose dependencies are already placed, so the orders
 * can never deadlock.  The simulated timing must pass the checker, every
 * start must be the earliest its constraints allow, and deliberately broken
 * copies must fail.  With every limit set to that schedule's peak (so that
 * it keeps them), the optimizer's lower bounds must not exceed its
 * objectives; the same for every family that builds on the problem as
 * given, whose tighter schedules test the bounds harder; and the optimizer
 * started from the random order must return a schedule that keeps those
 * limits.  Far from 0 on the clock the checker must judge as near it, and
 * times no double holds must be reported, once.  The questions of plan.h
 * (slack, the critical path, the op and the memory at an instant) must
 * agree with the timing they are asked of.  One TAP line per property,
 * with the first failure.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "plan.h"
#include "rt_int.h"
#include "solver.h"
#include "tap.h"
#include "testlib.h"

#define NCASES	400

static uint64_t rng_state;

/* The core's splitmix64: small, deterministic, good enough to shuffle
 * tests. */
static uint64_t
rng_next(void)
{
	return pw_splitmix64(&rng_state);
}

static int
rng_int(int n)
{
	return (int)(rng_next() % (uint64_t)n);
}

static double
rng_unit(void)
{
	return (double)(rng_next() >> 11) * 0x1.0p-53;
}

/* A cost in [lo, hi): on a quarter grid when GRID is set. */
static double
rng_cost(bool grid, double lo, double hi)
{
	double v = lo + (hi - lo) * rng_unit();

	return grid ? fmax(0.25, floor(v * 4) / 4) : v;
}

/* One property: how often it held, and the first case where it did not. */
struct prop {
	const char *name;
	int	runs;
	int	failures;
	char	first[1024];
};

static void	prop_fail(struct prop *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static void
prop_fail(struct prop *pr, int k, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (pr->failures++ > 0)
		return;
	len = snprintf(pr->first, sizeof pr->first, "case %d: ", k);
	va_start(ap, fmt);
	vsnprintf(pr->first + len, sizeof pr->first - (size_t)len, fmt, ap);
	va_end(ap);
}

static void
prop_report(const struct prop *pr)
{
	tap_ok(pr->runs > 0 && pr->failures == 0, "%s (%d of %d cases hold)",
	    pr->name, pr->runs - pr->failures, pr->runs);
	if (pr->failures > 0)
		tap_diag("first failure: %s", pr->first);
}

enum {
	P_SIMULATE,	/* a random valid order simulates */
	P_ACCEPT,	/* the checker accepts it, in any list order */
	P_EARLIEST,	/* every start is the max of its constraints, or 0 */
	P_ROUNDTRIP,	/* timed ops -> schedule -> the same timing */
	P_SHIFT,	/* rejects an op moved earlier */
	P_ANCHOR,	/* rejects a reload moved before its anchor */
	P_SHORTEN,	/* rejects an op made shorter */
	P_DROP,		/* rejects a missing op */
	P_SWAP,		/* rejects two ops of one device with swapped times */
	P_PEAK,		/* accepts limits at the metrics' peaks */
	P_BELOW,	/* rejects one limit just below its peak */
	P_BOUND,	/* lower bounds <= objectives at the peaks' limits */
	P_SOLVE,	/* the optimizer's result from it keeps the limits */
	P_FAR,		/* accepts it shifted to 1e6 s, and to 1e12 s if exact */
	P_FLAT,		/* names a zero-length op of it shifted to 1e12 s */
	P_NONFINITE,	/* reports an op with a non-finite time or duration */
	P_SLACK,	/* slack is never negative, NaN only for absent ops */
	P_CRITICAL,	/* the critical path adds up to the makespan, slack 0 */
	P_OP_AT,	/* pw_op_at names the op the timing says */
	P_MEMORY_AT,	/* pw_memory_at is the sum of the ops' effects */
	P_WIRE,		/* the sequenced transport's order cannot deadlock */
	P_COUNT
};

static struct prop props[P_COUNT] = {
	{ .name = "random valid orders simulate without deadlock" },
	{ .name = "the checker accepts every simulated schedule" },
	{ .name = "every simulated start is the earliest its constraints allow" },
	{ .name = "timed ops rebuild a schedule with the same timing" },
	{ .name = "the checker rejects an op moved earlier" },
	{ .name = "the checker rejects a reload moved before its anchor" },
	{ .name = "the checker rejects a shortened op" },
	{ .name = "the checker rejects a dropped op" },
	{ .name = "the checker rejects swapped times on a device" },
	{ .name = "the checker accepts limits equal to the metrics' peaks" },
	{ .name = "the checker rejects a limit just below a peak" },
	{ .name = "lower bounds at most the objectives of random orders and "
	    "families, limits at their peaks" },
	{ .name = "the optimizer, started from a random order with the limits "
	    "at its peaks and two pins it keeps, returns a schedule that "
	    "keeps them, passes the checker and is no worse" },
	{ .name = "the checker accepts a schedule shifted by 1e6 s, and by "
	    "1e12 s where every time moves exactly" },
	{ .name = "the checker names a zero-length op of a schedule shifted "
	    "by 1e12 s (the only violation where the shift is exact)" },
	{ .name = "the checker reports an op with a NaN or infinite time, or "
	    "one from 1e308 to -1e308, in one line and nothing else" },
	{ .name = "every present op's slack is finite and never negative, "
	    "every absent op's NaN" },
	{ .name = "the critical path runs from 0 along binding predecessors, "
	    "each of its ops has slack 0, and its durations and delays add "
	    "up to the makespan" },
	{ .name = "pw_op_at at every op's start and mid-point and at random "
	    "instants names the op running then, or none" },
	{ .name = "pw_memory_at at every event and at random instants is "
	    "static memory plus the effects of pw_op_memory up to then" },
	{ .name = "the sequenced transport's order (pw_rt_messages) has every "
	    "cross-device hand-off once, and every one a device receives "
	    "before every one it sends from that op on, also with every "
	    "compute op and hop taking no time" },
};

/* What the cases covered, so a generator that drifts shows in the log. */
static struct {
	size_t	ops, transfers, anchored, shared;
} seen;

static void
tally(const struct pw_problem *p, const struct pw_timed_op *ops, size_t n)
{
	size_t i;

	seen.ops += n;
	for (i = 0; i < n; i++) {
		seen.transfers += pw_kind_is_transfer(ops[i].op.kind);
		seen.anchored += ops[i].has_anchor;
	}
	seen.shared += p->link.present && p->link.ngroups < p->devices;
}

static struct pw_problem *
random_problem(void)
{
	struct pw_problem *p;
	struct pw_error err;
	int devices = 1 + rng_int(6), placement = rng_int(3), nstages, s, d, i;
	bool grid = rng_int(2) == 0;

	nstages = placement == 0 ? devices * (1 + rng_int(3)) :
	    placement == 1 ? 2 * devices : devices + rng_int(devices + 3);
	p = pw_problem_new(devices, nstages, 1 + rng_int(8));
	if (placement == 0) {
		pw_problem_place_loop(p, &err);
	} else if (placement == 1) {
		pw_problem_place_v(p, &err);
	} else {
		/* Every device gets a stage, then the order is shuffled. */
		for (s = 0; s < nstages; s++)
			p->stages[s].device = s < devices ? s : rng_int(devices);
		for (s = nstages - 1; s > 0; s--) {
			i = rng_int(s + 1);
			d = p->stages[s].device;
			p->stages[s].device = p->stages[i].device;
			p->stages[i].device = d;
		}
	}
	pw_problem_set_comm(p, rng_int(2) ? 0 : rng_cost(grid, 0, 0.75));
	if (rng_int(2) == 0)
		pw_problem_set_link(p, rng_cost(grid, 1, 8), rng_cost(grid, 1, 8),
		    rng_int(2) ? 0 : rng_cost(grid, 0, 0.5), rng_int(2) == 0);
	if (p->link.present) {
		p->link.ngroups = 1 + rng_int(devices);
		for (d = 0; d < devices; d++)
			p->link.group[d] = rng_int(p->link.ngroups);
	}
	for (s = 0; s < nstages; s++) {
		struct pw_stage *st = &p->stages[s];

		st->f = rng_cost(grid, 0.25, 2);
		st->b = rng_cost(grid, 0.25, 3);
		st->w = rng_cost(grid, 0.25, 2);
		st->act = rng_cost(grid, 1, 8);
		st->hold = st->act * (grid ? 0.5 : rng_unit());
		if (p->link.present && rng_int(3) > 0)
			st->offload = st->act * (grid ? 0.5 : 0.1 + 0.9 * rng_unit());
		if (rng_int(4) == 0)
			st->comm = rng_cost(grid, 0, 0.75);
	}
	for (d = 0; d < devices; d++)
		p->memory[d].static_bytes = rng_cost(grid, 0, 4);
	if (pw_problem_validate(p, "random", &err) != PW_OK)
		tap_diag("random problem invalid: %s", err.msg);
	return p;
}

/* The order generator: NEED counts each op's unplaced dependencies. */
struct gen {
	const struct pw_problem *p;
	struct pw_schedule *sched;
	bool	fused;
	bool	*offloaded;	/* [stage * mb] */
	int	*need;		/* [universe] */
	struct pw_op *ready;
	size_t	nready;
};

static size_t
ix(const struct pw_problem *p, enum pw_kind kind, int s, int j)
{
	return pw_op_index(p, (struct pw_op){ kind, s, j });
}

static enum pw_kind
gen_backward(const struct gen *g)
{
	return g->fused ? PW_BW : PW_B;
}

static void
gen_release(struct gen *g, enum pw_kind kind, int s, int j)
{
	if (--g->need[ix(g->p, kind, s, j)] == 0)
		g->ready[g->nready++] = (struct pw_op){ kind, s, j };
}

/* Places OP and releases what waited for it; a RELOAD may take as its
 * anchor the start or the end of any compute op already placed on its
 * device. */
static void
gen_place(struct gen *g, struct pw_op op)
{
	const struct pw_problem *p = g->p;
	const struct pw_seq *seq;
	int s = op.stage, j = op.mb, last = p->nstages - 1;

	if (op.kind == PW_RELOAD) {
		seq = &g->sched->device[p->stages[s].device];
		if (seq->len > 0 && rng_int(3) > 0)
			pw_schedule_set_anchor(g->sched, s, j,
			    (struct pw_anchor){ seq->ops[rng_int(seq->len)],
			    rng_int(2) == 1 });
	}
	pw_schedule_append(g->sched, p, op);
	switch (op.kind) {
	case PW_F:
		if (s < last)
			gen_release(g, PW_F, s + 1, j);
		else
			gen_release(g, gen_backward(g), s, j);
		if (g->offloaded[s * p->microbatches + j])
			gen_release(g, PW_OFFLOAD, s, j);
		break;
	case PW_B:
	case PW_BW:
		if (s > 0)
			gen_release(g, gen_backward(g), s - 1, j);
		if (op.kind == PW_B)
			gen_release(g, PW_W, s, j);
		break;
	case PW_OFFLOAD:
		gen_release(g, PW_RELOAD, s, j);
		break;
	case PW_RELOAD:
		gen_release(g, gen_backward(g), s, j);
		break;
	default:
		break;
	}
}

static struct pw_schedule *
random_schedule(const struct pw_problem *p)
{
	struct gen g;
	struct pw_op op;
	size_t u = pw_op_universe(p);
	int s, j, i, m = p->microbatches;
	bool off;

	g.p = p;
	g.sched = pw_schedule_new(p);
	g.fused = rng_int(2) == 0;
	g.offloaded = pw_xcalloc((size_t)(p->nstages * m), sizeof *g.offloaded);
	g.need = pw_xcalloc(u, sizeof *g.need);
	g.ready = pw_xcalloc(u, sizeof *g.ready);
	g.nready = 0;
	for (s = 0; s < p->nstages; s++) {
		for (j = 0; j < m; j++) {
			off = p->link.present && p->stages[s].offload > 0 &&
			    rng_int(4) > 0;
			g.offloaded[s * m + j] = off;
			g.need[ix(p, PW_F, s, j)] = s > 0;
			g.need[ix(p, gen_backward(&g), s, j)] = 1 + off;
			g.need[ix(p, PW_W, s, j)] = 1;
			g.need[ix(p, PW_OFFLOAD, s, j)] = 1;
			g.need[ix(p, PW_RELOAD, s, j)] = 1;
			if (s == 0)
				g.ready[g.nready++] = (struct pw_op){ PW_F, 0, j };
		}
	}
	while (g.nready > 0) {
		i = rng_int((int)g.nready);
		op = g.ready[i];

		g.ready[i] = g.ready[--g.nready];
		gen_place(&g, op);
	}
	free(g.offloaded);
	free(g.need);
	free(g.ready);
	return g.sched;
}

static double
hop(const struct pw_problem *p, int s)
{
	return p->stages[s].device == p->stages[s + 1].device ? 0 :
	    p->stages[s].comm;
}

static bool
same_time(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fmax(fabs(a), fabs(b)));
}

/* The latest constraint on OP's start (0 when none), PREV being the op
 * before it on its resource (or NULL). */
static double
earliest(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, struct pw_op op, const struct pw_op *prev)
{
	double e = 0;
	struct pw_anchor a;
	int s = op.stage, j = op.mb;
	size_t up;

	if (prev != NULL)
		e = fmax(e, t->end[pw_op_index(p, *prev)]);
	switch (op.kind) {
	case PW_F:
		if (s > 0)
			e = fmax(e, t->end[ix(p, PW_F, s - 1, j)] + hop(p, s - 1));
		break;
	case PW_B:
	case PW_BW:
		if (s == p->nstages - 1) {
			e = fmax(e, t->end[ix(p, PW_F, s, j)]);
		} else {
			up = ix(p, PW_BW, s + 1, j);
			if (!pw_timing_has(t, up))
				up = ix(p, PW_B, s + 1, j);
			e = fmax(e, t->end[up] + hop(p, s));
		}
		if (pw_timing_has(t, ix(p, PW_RELOAD, s, j)))
			e = fmax(e, t->end[ix(p, PW_RELOAD, s, j)]);
		break;
	case PW_W:
		e = fmax(e, t->end[ix(p, PW_B, s, j)]);
		break;
	case PW_OFFLOAD:
		e = fmax(e, t->end[ix(p, PW_F, s, j)]);
		break;
	case PW_RELOAD:
		e = fmax(e, t->end[ix(p, PW_OFFLOAD, s, j)]);
		if (pw_schedule_anchor(sched, s, j, &a))
			e = fmax(e, (a.at_end ? t->end : t->start)[pw_op_index(p,
			    a.op)]);
		break;
	default:
		break;
	}
	return e;
}

static void
prop_earliest(int k, const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t)
{
	const struct pw_seq *seq;
	char name[64];
	double want, got;
	int r, i;

	props[P_EARLIEST].runs++;
	for (r = 0; r < sched->ndevices + sched->nchannels; r++) {
		seq = r < sched->ndevices ? &sched->device[r] :
		    &sched->channel[r - sched->ndevices];
		for (i = 0; i < seq->len; i++) {
			want = earliest(p, sched, t, seq->ops[i],
			    i > 0 ? &seq->ops[i - 1] : NULL);
			got = t->start[pw_op_index(p, seq->ops[i])];
			if (same_time(got, want))
				continue;
			prop_fail(&props[P_EARLIEST], k, "%s starts at %.17g, "
			    "its constraints allow %.17g",
			    pw_op_name(name, sizeof name, seq->ops[i]), got, want);
			return;
		}
	}
}

static void
prop_roundtrip(int k, const struct pw_problem *p, const struct pw_timing *t,
    const struct pw_timed_op *ops, size_t n)
{
	struct pw_schedule *sched;
	struct pw_timing *t2;
	struct pw_error err;
	char name[64];
	size_t i;

	props[P_ROUNDTRIP].runs++;
	if (pw_schedule_from_timed(p, ops, n, &sched, &err) != PW_OK) {
		prop_fail(&props[P_ROUNDTRIP], k, "from_timed: %s", err.msg);
		return;
	}
	if (pw_simulate(p, sched, &t2, &err) != PW_OK) {
		prop_fail(&props[P_ROUNDTRIP], k, "simulate: %s", err.msg);
		pw_schedule_free(sched);
		return;
	}
	for (i = 0; i < t->universe; i++) {
		if (pw_timing_has(t, i) == pw_timing_has(t2, i) &&
		    (!pw_timing_has(t, i) || (t->start[i] == t2->start[i] &&
		    t->end[i] == t2->end[i])))
			continue;
		prop_fail(&props[P_ROUNDTRIP], k, "%s: %.17g..%.17g became "
		    "%.17g..%.17g", pw_op_name(name, sizeof name,
		    pw_op_from_index(p, i)), t->start[i], t->end[i],
		    t2->start[i], t2->end[i]);
		break;
	}
	pw_timing_free(t2);
	pw_schedule_free(sched);
}

/* Runs the checker; WANT is the exact count, or -1 for "at least one";
 * PREFIX, unless NULL, must begin some message. */
static void
expect_check(int which, int k, const struct pw_problem *p,
    const struct pw_timed_op *ops, size_t n, int want, const char *prefix,
    const char *what)
{
	struct pw_violations v;
	bool named = prefix == NULL;
	int got, i;

	props[which].runs++;
	got = pw_check(p, ops, n, &v);
	for (i = 0; i < v.n && !named; i++)
		named = strncmp(v.msg[i], prefix, strlen(prefix)) == 0;
	if (want >= 0 ? got != want : got == 0)
		prop_fail(&props[which], k, "%s: %d violations (want %s%d)%s%s",
		    what, got, want >= 0 ? "" : "> ", want >= 0 ? want : 0,
		    v.n > 0 ? "; first: " : "", v.n > 0 ? v.msg[0] : "");
	else if (!named)
		prop_fail(&props[which], k, "%s: no message begins \"%s\"; "
		    "first: %s", what, prefix, v.msg[0]);
	pw_violations_free(&v);
}

static struct pw_timed_op *
copy_ops(const struct pw_timed_op *ops, size_t n)
{
	struct pw_timed_op *c = pw_xcalloc(n, sizeof *c);

	memcpy(c, ops, n * sizeof *c);
	return c;
}

static void
prop_accept(int k, const struct pw_problem *p, const struct pw_timed_op *ops,
    size_t n)
{
	struct pw_timed_op *c = copy_ops(ops, n), tmp;
	size_t i, r;

	expect_check(P_ACCEPT, k, p, ops, n, 0, NULL, "as simulated");
	for (i = n; i > 1; i--) {
		r = (size_t)rng_int((int)i);
		tmp = c[i - 1];
		c[i - 1] = c[r];
		c[r] = tmp;
	}
	expect_check(P_ACCEPT, k, p, c, n, 0, NULL, "shuffled");
	free(c);
}

/* Moves a RELOAD that starts with its anchor (its start or end) a little
 * earlier. */
static void
prop_anchor(int k, const struct pw_problem *p, const struct pw_timing *t,
    const struct pw_timed_op *ops, size_t n, double shortest)
{
	struct pw_timed_op *c = copy_ops(ops, n);
	char what[96], name[64];
	size_t r, pick = n, seen = 0;
	double d;

	for (r = 0; r < n; r++)
		if (c[r].has_anchor && c[r].start > 1e-6 && c[r].start ==
		    (c[r].anchor.at_end ? t->end : t->start)[pw_op_index(p,
		    c[r].anchor.op)] &&
		    rng_int((int)++seen) == 0)
			pick = r;
	if (pick < n) {
		d = shortest * (0.1 + 0.8 * rng_unit());
		c[pick].start -= d;
		c[pick].end -= d;
		snprintf(what, sizeof what, "%s moved %g before its anchor",
		    pw_op_name(name, sizeof name, c[pick].op), d);
		expect_check(P_ANCHOR, k, p, c, n, -1, NULL, what);
	}
	free(c);
}

/* Breaks one op at a time.  A shift below the shortest duration cannot
 * jump past a whole op, so it always overlaps whatever bound the start. */
static void
prop_break(int k, const struct pw_problem *p, const struct pw_timing *t,
    const struct pw_timed_op *ops, size_t n)
{
	struct pw_timed_op *c;
	char what[160], name[64], other[64];
	double shortest = INFINITY, d;
	size_t r, a, b, tries;
	int dev;

	for (r = 0; r < n; r++)
		shortest = fmin(shortest, ops[r].end - ops[r].start);

	c = copy_ops(ops, n);
	do
		r = (size_t)rng_int((int)n);
	while (c[r].start < 1e-6);
	d = shortest * (0.1 + 0.8 * rng_unit());
	c[r].start -= d;
	c[r].end -= d;
	snprintf(what, sizeof what, "%s moved %g earlier",
	    pw_op_name(name, sizeof name, c[r].op), d);
	expect_check(P_SHIFT, k, p, c, n, -1, NULL, what);
	prop_anchor(k, p, t, ops, n, shortest);

	memcpy(c, ops, n * sizeof *c);
	r = (size_t)rng_int((int)n);
	c[r].end -= 0.5 * (c[r].end - c[r].start);
	snprintf(what, sizeof what, "%s shortened",
	    pw_op_name(name, sizeof name, c[r].op));
	expect_check(P_SHORTEN, k, p, c, n, -1, NULL, what);

	memcpy(c, ops, n * sizeof *c);
	r = (size_t)rng_int((int)n);
	snprintf(what, sizeof what, "%s dropped",
	    pw_op_name(name, sizeof name, c[r].op));
	memmove(&c[r], &c[r + 1], (n - r - 1) * sizeof *c);
	expect_check(P_DROP, k, p, c, n - 1, -1, NULL, what);

	/* Two compute ops of one device whose durations differ. */
	memcpy(c, ops, n * sizeof *c);
	dev = rng_int(p->devices);
	for (tries = 0; tries < 64; tries++) {
		a = (size_t)rng_int((int)n);
		b = (size_t)rng_int((int)n);
		if (c[a].device != dev || c[b].device != dev ||
		    pw_kind_is_transfer(c[a].op.kind) ||
		    pw_kind_is_transfer(c[b].op.kind) ||
		    same_time(c[a].end - c[a].start, c[b].end - c[b].start))
			continue;
		d = c[a].start;
		c[a].start = c[b].start;
		c[b].start = d;
		d = c[a].end;
		c[a].end = c[b].end;
		c[b].end = d;
		snprintf(what, sizeof what, "times of %s and %s swapped",
		    pw_op_name(name, sizeof name, c[a].op),
		    pw_op_name(other, sizeof other, c[b].op));
		expect_check(P_SWAP, k, p, c, n, -1, NULL, what);
		break;
	}
	free(c);
}

/* Returns a copy of OPS (the caller frees) with every time OFFSET
 * later; EXACT says whether each moved exactly. */
static struct pw_timed_op *
shift_ops(const struct pw_timed_op *ops, size_t n, double offset, bool *exact)
{
	struct pw_timed_op *c = copy_ops(ops, n);
	size_t i;

	*exact = true;
	for (i = 0; i < n; i++) {
		c[i].start += offset;
		c[i].end += offset;
		*exact &= c[i].start - offset == ops[i].start &&
		    c[i].end - offset == ops[i].end;
	}
	return c;
}

/*
 * The valid schedule OPS at 1e6 s, where its times round by about 1e-10 s
 * (far below 1e-9 of any cost here), is still valid; at 1e12 s only where
 * every time moves exactly (the grid's quarters), as rounding there is
 * 1e-4 s.  At 1e12 s, a random op made to last 0 must be named, and be
 * the only violation where the shift is exact.
 */
static void
prop_far(int k, const struct pw_problem *p, const struct pw_timed_op *ops,
    size_t n)
{
	struct pw_timed_op *c;
	char prefix[96], name[64];
	bool exact;
	size_t r;

	c = shift_ops(ops, n, 1e6, &exact);
	expect_check(P_FAR, k, p, c, n, 0, NULL, "shifted by 1e6 s");
	free(c);
	c = shift_ops(ops, n, 1e12, &exact);
	if (exact)
		expect_check(P_FAR, k, p, c, n, 0, NULL, "shifted by 1e12 s");
	r = (size_t)rng_int((int)n);
	c[r].end = c[r].start;
	snprintf(prefix, sizeof prefix, "%s lasts 0 s (",
	    pw_op_name(name, sizeof name, c[r].op));
	expect_check(P_FLAT, k, p, c, n, exact ? 1 : -1, prefix,
	    "shifted by 1e12 s, one op of zero length");
	free(c);
}

/* One op of OPS with a time no double holds, or a duration no double
 * holds (1e308 to -1e308): exactly one message, which says so. */
static void
prop_nonfinite(int k, const struct pw_problem *p, const struct pw_timed_op *ops,
    size_t n)
{
	static const double bad[][2] = { { NAN, 0 }, { 0, INFINITY },
	    { -INFINITY, 0 }, { NAN, NAN }, { 1e308, -1e308 } };
	struct pw_timed_op *c = copy_ops(ops, n);
	char want[160], name[64];
	size_t r = (size_t)rng_int((int)n);
	int v = rng_int((int)(sizeof bad / sizeof bad[0]));

	if (bad[v][0] != 0)
		c[r].start = bad[v][0];
	if (bad[v][1] != 0)
		c[r].end = bad[v][1];
	snprintf(want, sizeof want, "%s has a non-finite %s (start %g, end %g)",
	    pw_op_name(name, sizeof name, c[r].op), isfinite(c[r].start) &&
	    isfinite(c[r].end) ? "duration" : "time", c[r].start, c[r].end);
	expect_check(P_NONFINITE, k, p, c, n, 1, want, want);
	free(c);
}

/* Returns a copy of P the caller frees, every limit at its peak in M. */
static struct pw_problem *
at_peaks(const struct pw_problem *p, const struct pw_metrics *m)
{
	struct pw_problem *q = pw_problem_copy(p);
	int d;

	for (d = 0; d < p->devices; d++)
		q->memory[d].limit = m->device[d].peak;
	return q;
}

/* The lower bounds of Q (limits at the peaks of the schedule WHO built,
 * whose metrics are M) against its makespan and span. */
static void
prop_bound(int k, const struct pw_problem *q, const struct pw_metrics *m,
    const char *who)
{
	double lb, obj;
	int o;

	props[P_BOUND].runs++;
	for (o = PW_OBJ_MAKESPAN; o <= PW_OBJ_SPAN; o++) {
		lb = pw_lower_bound(q, (enum pw_objective)o);
		obj = pw_objective_value((enum pw_objective)o, m);
		if (lb > obj * (1 + 1e-9) + 1e-12) {
			prop_fail(&props[P_BOUND], k, "%s: %s bound %.17g above "
			    "its %.17g", who, o == PW_OBJ_MAKESPAN ? "makespan" :
			    "span", lb, obj);
			break;
		}
	}
}

static void
prop_limits(int k, const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, const struct pw_timed_op *ops, size_t n)
{
	struct pw_metrics *m = pw_metrics_compute(p, sched, t);
	struct pw_problem *q = at_peaks(p, m);
	char what[96];
	double peak;
	int d;

	expect_check(P_PEAK, k, q, ops, n, 0, NULL, "limits at the peaks");
	prop_bound(k, q, m, "random order");
	d = rng_int(p->devices);
	peak = m->device[d].peak;
	q->memory[d].limit = peak - 1e-6 * fmax(1, peak);
	snprintf(what, sizeof what, "device %d limit %.17g below peak %.17g",
	    d, q->memory[d].limit, peak);
	expect_check(P_BELOW, k, q, ops, n, 1, NULL, what);
	pw_metrics_free(m);
	pw_problem_free(q);
}

/* Up to two pins that hold in SCHED: on a random device, an earlier and
 * a later compute op of its order.  Returns how many (in PINS). */
static size_t
random_pins(const struct pw_problem *p, const struct pw_schedule *sched,
    struct pw_pin *pins)
{
	const struct pw_seq *seq = &sched->device[rng_int(p->devices)];
	size_t n = 0;
	int a, b;

	while (n < 2 && seq->len >= 2) {
		a = rng_int(seq->len - 1);
		b = a + 1 + rng_int(seq->len - a - 1);
		pins[n++] = (struct pw_pin){ seq->ops[a], seq->ops[b] };
	}
	return n;
}

/*
 * Every fourth case (the searches take a while): pw_solve on P with every
 * limit at the peaks of SCHED (timed T), starting from SCHED, with up to
 * two pins that hold in it, for 2,000 simplex iterations.  Its windows
 * and whole models rebuild schedules from lp_solve's solutions with
 * offloads, anchors, shared channels and pins, which is where a model and
 * the simulator can disagree.
 */
static void
prop_solve(int k, const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t)
{
	struct pw_metrics *m = pw_metrics_compute(p, sched, t), *rm = NULL;
	struct pw_problem *q = at_peaks(p, m);
	struct pw_timing *rt = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_violations v = { 0, 0, NULL, NULL };
	struct pw_solve_result r;
	struct pw_solve_opts o;
	struct pw_error err;
	struct pw_pin pins[2];
	size_t n, i;

	if (k % 4 != 0)
		goto out;
	props[P_SOLVE].runs++;
	pw_solve_opts_init(&o);
	o.objective = rng_int(2) ? PW_OBJ_MAKESPAN : PW_OBJ_SPAN;
	o.start = sched;
	o.time_limit = 60;
	o.iteration_limit = 2000;
	o.seed = (unsigned long)k;
	o.pins = pins;
	o.npins = random_pins(p, sched, pins);
	if (pw_solve(q, &o, &r, &err) != PW_OK) {
		prop_fail(&props[P_SOLVE], k, "%s", err.msg);
		goto out;
	}
	if (pw_simulate(q, r.schedule, &rt, &err) != PW_OK) {
		prop_fail(&props[P_SOLVE], k, "the result: %s", err.msg);
		goto done;
	}
	rm = pw_metrics_compute(q, r.schedule, rt);
	ops = pw_timed_ops(q, r.schedule, rt, &n);
	if (!rm->feasible)
		prop_fail(&props[P_SOLVE], k, "the result breaks a limit");
	else if (pw_check(q, ops, n, &v) > 0)
		prop_fail(&props[P_SOLVE], k, "the result fails the checker: "
		    "%s", v.msg[0]);
	else if (r.objective > pw_objective_value(o.objective, m) *
	    (1 + 1e-9))
		prop_fail(&props[P_SOLVE], k, "%.17g, worse than the start's "
		    "%.17g", r.objective, pw_objective_value(o.objective, m));
	for (i = 0; i < o.npins; i++)
		if (test_pinned_start(q, rt, pins[i].before) >
		    test_pinned_start(q, rt, pins[i].after) + 1e-9) {
			prop_fail(&props[P_SOLVE], k, "pin %zu broken", i);
			break;
		}
done:
	pw_violations_free(&v);
	free(ops);
	pw_metrics_free(rm);
	pw_timing_free(rt);
	pw_solve_result_free(&r);
out:
	pw_problem_free(q);
	pw_metrics_free(m);
}

/* prop_bound for every family that builds on P as given. */
static void
prop_family_bounds(int k, const struct pw_problem *p)
{
	struct pw_problem *used, *q;
	struct pw_schedule *sched;
	struct pw_metrics *m;
	struct pw_timing *t;
	struct pw_error err;
	size_t i;

	for (i = 0; i < pw_nfamilies; i++) {
		if (pw_family_build(&pw_families[i], p, &used, &sched,
		    &err) != PW_OK)
			continue;
		if (pw_problem_same(used, p) && pw_simulate(p, sched, &t,
		    &err) == PW_OK) {
			m = pw_metrics_compute(p, sched, t);
			q = at_peaks(p, m);
			prop_bound(k, q, m, pw_families[i].name);
			pw_problem_free(q);
			pw_metrics_free(m);
			pw_timing_free(t);
		}
		pw_schedule_free(sched);
		pw_problem_free(used);
	}
}

/* Slack of every op and the critical path. */
static void
prop_critical(int k, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t)
{
	double *slack = pw_slack(p, sched, t);
	struct pw_critical *path;
	const struct pw_critical *c;
	char name[64];
	double last = 0, sum = 0, at;
	size_t i, n;

	props[P_SLACK].runs++;
	props[P_CRITICAL].runs++;
	for (i = 0; i < t->universe; i++) {
		if (pw_timing_has(t, i) ? isfinite(slack[i]) && slack[i] >= 0 :
		    isnan(slack[i])) {
			if (pw_timing_has(t, i))
				last = fmax(last, t->end[i]);
			continue;
		}
		prop_fail(&props[P_SLACK], k, "%s has slack %.17g",
		    pw_op_name(name, sizeof name, pw_op_from_index(p, i)),
		    slack[i]);
		break;
	}
	path = pw_critical_path(p, sched, t, &n);
	if (n == 0 || path[0].bound || path[0].start != 0 ||
	    path[n - 1].end != last) {
		prop_fail(&props[P_CRITICAL], k, "%zu ops from %.17g to %.17g, "
		    "the makespan %.17g", n, n > 0 ? path[0].start : NAN,
		    n > 0 ? path[n - 1].end : NAN, last);
		goto out;
	}
	for (i = 0; i < n; i++) {
		c = &path[i];
		if (slack[pw_op_index(p, c->op)] != 0) {
			prop_fail(&props[P_CRITICAL], k, "%s on the path has "
			    "slack %.17g", pw_op_name(name, sizeof name, c->op),
			    slack[pw_op_index(p, c->op)]);
			goto out;
		}
		if (i + 1 < n && path[i + 1].by.from_start)
			continue;
		sum += c->end - c->start;
		if (i + 1 < n)
			sum += path[i + 1].by.delay;
	}
	for (i = 1; i < n; i++) {
		c = &path[i];
		at = (c->by.from_start ? path[i - 1].start : path[i - 1].end) +
		    c->by.delay;
		if (!c->bound || memcmp(&c->by.op, &path[i - 1].op,
		    sizeof c->op) != 0 || at != c->start) {
			prop_fail(&props[P_CRITICAL], k, "%s at %.17g is not "
			    "bound by the op before it on the path",
			    pw_op_name(name, sizeof name, c->op), c->start);
			goto out;
		}
	}
	if (fabs(sum - last) > 1e-9 * fmax(1, last))
		prop_fail(&props[P_CRITICAL], k, "the path adds up to %.17g, "
		    "the makespan is %.17g", sum, last);
out:
	free(path);
	free(slack);
}

/* The op of SEQ running at AT by a scan, or NULL. */
static const struct pw_op *
running_at(const struct pw_problem *p, const struct pw_seq *seq,
    const struct pw_timing *t, double at)
{
	size_t idx;
	int i;

	for (i = 0; i < seq->len; i++) {
		idx = pw_op_index(p, seq->ops[i]);
		if (t->start[idx] <= at && at < t->end[idx])
			return &seq->ops[i];
	}
	return NULL;
}

/* pw_op_at on resource R at AT against the scan; false on a mismatch. */
static bool
probe_op_at(int k, const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, int r, double at)
{
	const struct pw_seq *seq = r < p->devices ? &sched->device[r] :
	    &sched->channel[r - p->devices];
	const struct pw_op *want = running_at(p, seq, t, at);
	struct pw_op got;
	char name[64], wname[64];
	bool has = pw_op_at(p, sched, t, r, at, &got);

	if (has == (want != NULL) && (!has || memcmp(&got, want,
	    sizeof got) == 0))
		return true;
	prop_fail(&props[P_OP_AT], k, "resource %d at %.17g: %s, the timing "
	    "says %s", r, at, has ? pw_op_name(name, sizeof name, got) : "idle",
	    want != NULL ? pw_op_name(wname, sizeof wname, *want) : "idle");
	return false;
}

static void
prop_op_at(int k, const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, double makespan)
{
	const struct pw_seq *seq;
	size_t idx;
	int r, i;

	props[P_OP_AT].runs++;
	for (r = 0; r < p->devices + sched->nchannels; r++) {
		seq = r < p->devices ? &sched->device[r] :
		    &sched->channel[r - p->devices];
		for (i = 0; i < seq->len; i++) {
			idx = pw_op_index(p, seq->ops[i]);
			if (!probe_op_at(k, p, sched, t, r, t->start[idx]) ||
			    !probe_op_at(k, p, sched, t, r, (t->start[idx] +
			    t->end[idx]) / 2))
				return;
		}
		for (i = 0; i < 20; i++)
			if (!probe_op_at(k, p, sched, t, r,
			    rng_unit() * 1.1 * makespan))
				return;
	}
}

/* DEVICE's memory at AT summed from every op's effects: allocations at
 * starts up to AT, frees at ends up to AT. */
static double
memory_sum(const struct pw_problem *p, const struct pw_timing *t, int device,
    double at, double *scale)
{
	struct pw_mem_effect e;
	double bytes = p->memory[device].static_bytes;
	size_t i;

	*scale = fmax(1, bytes);
	for (i = 0; i < t->universe; i++) {
		struct pw_op op = pw_op_from_index(p, i);

		if (!pw_timing_has(t, i) || p->stages[op.stage].device != device)
			continue;
		e = pw_op_memory(p, op);
		*scale += e.alloc + e.freed;
		if (t->start[i] <= at)
			bytes += e.alloc;
		if (t->end[i] <= at)
			bytes -= e.freed;
	}
	return bytes;
}

static void
prop_memory_at(int k, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t,
    double makespan)
{
	struct pw_metrics *m = pw_metrics_compute(p, sched, t);
	double at, want, got, scale;
	size_t i;
	int d, probe;

	props[P_MEMORY_AT].runs++;
	for (d = 0; d < p->devices; d++)
		for (probe = 0; probe < 40; probe++) {
			/* Half the probes at an instant where events fall. */
			i = (size_t)rng_int((int)t->universe);
			at = probe % 2 == 1 ? rng_unit() * 1.1 * makespan :
			    !pw_timing_has(t, i) ? 0 : probe % 4 == 0 ?
			    t->start[i] : t->end[i];
			want = memory_sum(p, t, d, at, &scale);
			got = pw_memory_at(m, d, at);
			if (fabs(got - want) <= 1e-9 * scale)
				continue;
			prop_fail(&props[P_MEMORY_AT], k, "device %d at %.17g: "
			    "%.17g bytes, the ops' effects sum to %.17g", d, at,
			    got, want);
			goto out;
		}
out:
	pw_metrics_free(m);
}

/* The questions of plan.h against what the timing says. */
static void
prop_queries(int k, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t)
{
	double makespan = 0;
	size_t i;

	for (i = 0; i < t->universe; i++)
		if (pw_timing_has(t, i))
			makespan = fmax(makespan, t->end[i]);
	prop_critical(k, p, sched, t);
	prop_op_at(k, p, sched, t, makespan);
	prop_memory_at(k, p, sched, t, makespan);
}

/* The position in MSGS[N] of the hand-off of TAG to device TO, or -1. */
static long
wire_position(const struct pw_rt_message *msgs, size_t n, uint64_t tag,
    int to)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (msgs[i].tag == tag && msgs[i].to == to)
			return (long)i;
	return -1;
}

/* The lemma the sequenced transport's deadlock freedom stands on
 * (runtime/net_wire.c): walking each device's compute order, the
 * hand-off an op receives comes, in the global order, before every
 * hand-off that op or a later one sends. */
static void
prop_wire(int k, const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, const struct pw_timed_op *ops, size_t n)
{
	struct prop *pr = &props[P_WIRE];
	struct pw_rt_message *msgs;
	size_t count, expected = 0;
	struct pw_where *where;
	struct pw_error err;
	long *recv, *sent, least;
	int d, i, S = p->nstages, failed = pr->failures;

	pr->runs++;
	if (pw_where_build(p, sched, &where, &err) != PW_OK) {
		prop_fail(pr, k, "%s", err.msg);
		return;
	}
	msgs = pw_rt_messages(p, sched, where, ops, n, &count);
	pw_where_free(where);
	for (d = 0; d < p->devices && pr->failures == failed; d++) {
		const struct pw_seq *seq = &sched->device[d];

		recv = calloc((size_t)seq->len + 1, sizeof *recv);
		sent = calloc((size_t)seq->len + 1, sizeof *sent);
		for (i = 0; i < seq->len; i++) {
			struct pw_op op = seq->ops[i], to;
			int from, dst;
			bool fwd = op.kind == PW_F;

			recv[i] = sent[i] = -2;
			if (op.kind != PW_F && op.kind != PW_B && op.kind != PW_BW)
				continue;
			from = fwd ? op.stage - 1 : op.stage + 1;
			if (from >= 0 && from < S && p->stages[from].device != d)
				recv[i] = wire_position(msgs, count,
				    pw_rt_tag(op), d);
			to = fwd ? test_op(PW_F, op.stage + 1, op.mb) :
			    test_op(PW_B, op.stage - 1, op.mb);
			if (to.stage < 0 || to.stage >= S ||
			    (dst = p->stages[to.stage].device) == d)
				continue;
			if (!fwd && !pw_timing_has(t, pw_op_index(p, to)))
				to.kind = PW_BW;
			sent[i] = wire_position(msgs, count, pw_rt_tag(to), dst);
			expected++;
		}
		for (least = LONG_MAX, i = seq->len - 1; i >= 0; i--) {
			if (recv[i] == -1 || sent[i] == -1) {
				prop_fail(pr, k, "device %d: op %d's hand-off is "
				    "not in the order", d, i);
				break;
			}
			if (sent[i] >= 0 && sent[i] < least)
				least = sent[i];
			if (recv[i] >= 0 && recv[i] >= least) {
				prop_fail(pr, k, "device %d: op %d receives "
				    "hand-off %ld, after %ld it or a later op "
				    "sends", d, i, recv[i], least);
				break;
			}
		}
		free(recv);
		free(sent);
	}
	if (pr->failures == failed && count != expected)
		prop_fail(pr, k, "%zu hand-offs in the order, %zu across "
		    "devices", count, expected);
	free(msgs);
}

/* The same lemma where every compute op takes no time and no hop costs
 * any: each op ties with what it waits for, so only the causal depth
 * orders them. */
static void
prop_wire_timeless(int k, const struct pw_problem *p,
    const struct pw_schedule *sched)
{
	struct pw_problem *q = pw_problem_copy(p);
	struct pw_timed_op *ops;
	struct pw_timing *t;
	struct pw_error err;
	size_t n;
	int s;

	for (s = 0; s < q->nstages; s++)
		q->stages[s].f = q->stages[s].b = q->stages[s].w =
		    q->stages[s].comm = 0;
	q->comm = 0;
	if (pw_simulate(q, sched, &t, &err) != PW_OK) {
		prop_fail(&props[P_WIRE], k, "timeless: %s", err.msg);
		pw_problem_free(q);
		return;
	}
	ops = pw_timed_ops(q, sched, t, &n);
	prop_wire(k, q, sched, t, ops, n);
	free(ops);
	pw_timing_free(t);
	pw_problem_free(q);
}

static void
run_case(int k)
{
	struct pw_problem *p;
	struct pw_schedule *sched;
	struct pw_timing *t;
	struct pw_timed_op *ops;
	struct pw_error err;
	size_t n;

	rng_state = 0x5eed0000ULL + (uint64_t)k;
	p = random_problem();
	sched = random_schedule(p);
	props[P_SIMULATE].runs++;
	if (pw_simulate(p, sched, &t, &err) != PW_OK) {
		prop_fail(&props[P_SIMULATE], k, "%s", err.msg);
		goto out;
	}
	ops = pw_timed_ops(p, sched, t, &n);
	tally(p, ops, n);
	prop_accept(k, p, ops, n);
	prop_earliest(k, p, sched, t);
	prop_roundtrip(k, p, t, ops, n);
	prop_break(k, p, t, ops, n);
	prop_limits(k, p, sched, t, ops, n);
	prop_family_bounds(k, p);
	prop_solve(k, p, sched, t);
	prop_far(k, p, ops, n);
	prop_nonfinite(k, p, ops, n);
	prop_queries(k, p, sched, t);
	prop_wire(k, p, sched, t, ops, n);
	prop_wire_timeless(k, p, sched);
	free(ops);
	pw_timing_free(t);
out:
	pw_schedule_free(sched);
	pw_problem_free(p);
}

int
main(void)
{
	int k;

	for (k = 0; k < NCASES; k++)
		run_case(k);
	tap_diag("%d cases: %zu ops, %zu transfers, %zu anchored reloads, "
	    "%zu problems with shared link groups", NCASES, seen.ops,
	    seen.transfers, seen.anchored, seen.shared);
	for (k = 0; k < P_COUNT; k++)
		prop_report(&props[k]);
	return tap_done();
}
