/*
 * check.c - the independent checker.
 *
 * It verifies timed ops against a problem from first principles and on
 * purpose shares no code with the simulator: durations, hops, channels and
 * memory events are recomputed here from the problem's fields, so a bug in
 * sim.c cannot hide by being called from here too.  Every pass is linear or
 * a sort, so a million ops check in about a second.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

/* Relative tolerance of every comparison. */
#define PW_CHECK_RTOL	1e-9

#define PW_CHECK_ABSENT	SIZE_MAX

struct pw_checker {
	const struct pw_problem *p;
	const struct pw_timed_op *ops;
	/* [PW_NKINDS * nstages * microbatches]: the position in ops of each
	 * op of the problem, PW_CHECK_ABSENT when the list lacks it. */
	size_t	*slot;
	size_t	 nslots;
	/* The problem's time scale (pw_check_scale), which sets every
	 * time tolerance. */
	double	 scale;
	struct pw_violations *out;
};

/* An op holding its device or channel from start to end. */
struct pw_check_busy {
	int	resource;	/* device d, or devices + channel */
	double	start;
	double	end;
	const struct pw_timed_op *t;
};

/* A change of a device's memory at an instant. */
struct pw_check_mem {
	int	device;
	double	t;
	double	delta;
	const struct pw_timed_op *op;
};

static void	pw_check_report(struct pw_checker *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
pw_check_report(struct pw_checker *c, const char *fmt, ...)
{
	struct pw_violations *v = c->out;
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (v->n == v->cap) {
		v->cap = v->cap == 0 ? 16 : v->cap * 2;
		v->msg = pw_xreallocarray(v->msg, (size_t)v->cap,
		    sizeof *v->msg);
	}
	v->msg[v->n++] = pw_xstrdup(buf);
}

/* True when memory LEVEL (finite) is above LIMIT by more than the
 * tolerance, which scales with the limit as the metrics' does. */
static bool
pw_check_over(double level, double limit)
{
	return level > limit + PW_CHECK_RTOL * fmax(1, limit);
}

/* True when instant A lies before B by more than TOL.  Finite A and B may
 * differ by more than a double holds; the difference then overflows to an
 * infinity of the right sign, which is all this needs. */
static bool
pw_check_before(double a, double b, double tol)
{
	return b - a > tol;
}

static bool
pw_check_in_problem(const struct pw_problem *p, struct pw_op op)
{
	return (unsigned)op.kind < PW_NKINDS && op.stage >= 0 &&
	    op.stage < p->nstages && op.mb >= 0 && op.mb < p->microbatches;
}

static bool
pw_check_is_compute(enum pw_kind kind)
{
	return kind == PW_F || kind == PW_B || kind == PW_W || kind == PW_BW;
}

static int
pw_check_device(const struct pw_problem *p, int stage)
{
	return p->stages[stage].device;
}

/* Seconds from stage S to stage S+1: its comm across devices, else 0. */
static double
pw_check_hop(const struct pw_problem *p, int s)
{
	if (pw_check_device(p, s) == pw_check_device(p, s + 1))
		return 0;
	return p->stages[s].comm;
}

static double
pw_check_duration(const struct pw_problem *p, struct pw_op op)
{
	const struct pw_stage *st = &p->stages[op.stage];

	switch (op.kind) {
	case PW_F:
		return st->f;
	case PW_B:
		return st->b;
	case PW_W:
		return st->w;
	case PW_BW:
		return st->b + st->w;
	case PW_OFFLOAD:
		return p->link.latency + st->offload / p->link.d2h;
	case PW_RELOAD:
		return p->link.latency + st->offload / p->link.h2d;
	case PW_NKINDS:
		break;
	}
	assert(!"op kind out of range");
	return NAN;
}

/* The larger of M and D, unless D is not finite. */
static double
pw_check_longer(double m, double d)
{
	return isfinite(d) ? fmax(m, d) : m;
}

/* The problem's time scale: the most compute time of any one device (F,
 * B and W of its stages for every microbatch, which the makespan of every
 * valid schedule spans), or a longer transfer or hop.  It comes from the
 * problem alone, so no schedule can widen a tolerance by where it lies on
 * the clock or by how far apart it puts its ops.  Sums and durations that
 * overflow do not count. */
static double
pw_check_scale(const struct pw_problem *p)
{
	double *work = pw_xcalloc((size_t)p->devices, sizeof *work);
	const struct pw_stage *st;
	double m = 0;
	int s, d;

	for (s = 0; s < p->nstages; s++) {
		st = &p->stages[s];
		work[st->device] += p->microbatches * (pw_check_duration(p,
		    (struct pw_op){ PW_F, s, 0 }) + pw_check_duration(p,
		    (struct pw_op){ PW_BW, s, 0 }));
		if (p->link.present && st->offload > 0) {
			m = pw_check_longer(m, pw_check_duration(p,
			    (struct pw_op){ PW_OFFLOAD, s, 0 }));
			m = pw_check_longer(m, pw_check_duration(p,
			    (struct pw_op){ PW_RELOAD, s, 0 }));
		}
		if (s + 1 < p->nstages)
			m = pw_check_longer(m, pw_check_hop(p, s));
	}
	for (d = 0; d < p->devices; d++)
		m = pw_check_longer(m, work[d]);
	free(work);
	return m;
}

/* The tolerance of a comparison of times of ops lasting up to SPAN:
 * PW_CHECK_RTOL of SPAN (at most the problem's scale, which a non-finite
 * SPAN gets) plus PW_CHECK_RTOL of the problem's scale, for the rounding
 * that times as far apart as a makespan carry (and ops of zero length).
 * Always finite. */
static double
pw_check_tol(const struct pw_checker *c, double span)
{
	return PW_CHECK_RTOL * (fmin(span, c->scale) + c->scale);
}

/* The tolerance of an ordering between ops A and B, with a hop of HOP
 * seconds between them: that of the longest of the three. */
static double
pw_check_order_tol(const struct pw_checker *c, struct pw_op a, struct pw_op b,
    double hop)
{
	return pw_check_tol(c, fmax(hop, fmax(pw_check_duration(c->p, a),
	    pw_check_duration(c->p, b))));
}

/* The channel of a transfer: its device's group, split by direction on a
 * full-duplex link. */
static int
pw_check_channel(const struct pw_problem *p, int device, enum pw_kind kind)
{
	int group;

	assert(p->link.present && p->link.group != NULL);
	group = p->link.group[device];
	return p->link.duplex ? 2 * group + (kind == PW_RELOAD) : group;
}

static size_t
pw_check_key(const struct pw_problem *p, enum pw_kind kind, int stage, int mb)
{
	return ((size_t)kind * (size_t)p->nstages + (size_t)stage) *
	    (size_t)p->microbatches + (size_t)mb;
}

static bool
pw_check_has(const struct pw_checker *c, enum pw_kind kind, int stage, int mb)
{
	return c->slot[pw_check_key(c->p, kind, stage, mb)] != PW_CHECK_ABSENT;
}

/* The listed op with a finite duration, or NULL: an absent op and one
 * without are reported once and otherwise skipped.  end - start is finite
 * only when both times are and their difference does not overflow, so
 * every timed check works on finite starts, ends and durations. */
static const struct pw_timed_op *
pw_check_timed(const struct pw_checker *c, size_t key)
{
	const struct pw_timed_op *t;

	if (c->slot[key] == PW_CHECK_ABSENT)
		return NULL;
	t = &c->ops[c->slot[key]];
	if (!isfinite(t->end - t->start))
		return NULL;
	return t;
}

static const struct pw_timed_op *
pw_check_find(const struct pw_checker *c, enum pw_kind kind, int stage, int mb)
{
	return pw_check_timed(c, pw_check_key(c->p, kind, stage, mb));
}

/* Enters op I in its slot unless it cannot be placed (outside the
 * problem, a transfer the problem cannot make, a repeat).  A wrong stated
 * device, wrong bytes, a non-finite time or duration or a stray anchor
 * are reported but leave the op in, so it counts as present: the problem
 * says where it runs, and only its timed checks are skipped. */
static void
pw_check_admit(struct pw_checker *c, size_t i)
{
	const struct pw_problem *p = c->p;
	const struct pw_timed_op *t = &c->ops[i];
	const struct pw_stage *st;
	char name[64];
	size_t key;

	if (!pw_check_in_problem(p, t->op)) {
		pw_check_report(c, "op %zu (kind %d, stage %d, mb %d) is not "
		    "an op of the problem (%d stages, %d microbatches)", i,
		    (int)t->op.kind, t->op.stage, t->op.mb, p->nstages,
		    p->microbatches);
		return;
	}
	pw_op_name(name, sizeof name, t->op);
	st = &p->stages[t->op.stage];
	if (pw_kind_is_transfer(t->op.kind)) {
		if (!p->link.present) {
			pw_check_report(c, "%s: the problem has no offload "
			    "link", name);
			return;
		}
		if (!(st->offload > 0)) {
			pw_check_report(c, "%s: stage %d has no offload bytes",
			    name, t->op.stage);
			return;
		}
		if (!(fabs(t->bytes - st->offload) <= PW_CHECK_RTOL *
		    st->offload))
			pw_check_report(c, "%s moves %.15g bytes, but stage %d "
			    "offloads %.15g", name, t->bytes, t->op.stage,
			    st->offload);
	}
	key = pw_check_key(p, t->op.kind, t->op.stage, t->op.mb);
	if (c->slot[key] != PW_CHECK_ABSENT) {
		pw_check_report(c, "%s appears more than once (ops %zu and "
		    "%zu)", name, c->slot[key], i);
		return;
	}
	if (t->device != st->device)
		pw_check_report(c, "%s is stated on device %d, but stage %d "
		    "runs on device %d", name, t->device, t->op.stage,
		    st->device);
	if (!isfinite(t->end - t->start))
		pw_check_report(c, "%s has a non-finite %s (start %g, end %g)",
		    name, isfinite(t->start) && isfinite(t->end) ? "duration" :
		    "time", t->start, t->end);
	if (t->has_anchor && t->op.kind != PW_RELOAD)
		pw_check_report(c, "%s names an anchor, but only a RELOAD "
		    "may", name);
	c->slot[key] = i;
}

/* Each (stage, mb): F, then BW or both B and W, and both transfers or
 * neither. */
static void
pw_check_presence(struct pw_checker *c, int s, int j)
{
	char a[64], b[64];
	struct pw_op op = { PW_F, s, j };
	bool bw, bb, w, off, rel;

	if (!pw_check_has(c, PW_F, s, j))
		pw_check_report(c, "missing %s", pw_op_name(a, sizeof a, op));
	bw = pw_check_has(c, PW_BW, s, j);
	bb = pw_check_has(c, PW_B, s, j);
	w = pw_check_has(c, PW_W, s, j);
	op.kind = PW_BW;
	pw_op_name(a, sizeof a, op);
	if (bw && (bb || w)) {
		op.kind = bb ? PW_B : PW_W;
		pw_check_report(c, "%s and %s both present: a backward is "
		    "fused or split, not both", a, pw_op_name(b, sizeof b,
		    op));
	} else if (!bw && !bb && !w) {
		pw_check_report(c, "missing %s (or B and W)", a);
	} else if (!bw && bb != w) {
		op.kind = bb ? PW_W : PW_B;
		pw_check_report(c, "missing %s", pw_op_name(b, sizeof b, op));
	}
	off = pw_check_has(c, PW_OFFLOAD, s, j);
	rel = pw_check_has(c, PW_RELOAD, s, j);
	if (off != rel) {
		op.kind = off ? PW_RELOAD : PW_OFFLOAD;
		pw_op_name(a, sizeof a, op);
		op.kind = off ? PW_OFFLOAD : PW_RELOAD;
		pw_check_report(c, "missing %s to match %s", a,
		    pw_op_name(b, sizeof b, op));
	}
}

static void
pw_check_duration_of(struct pw_checker *c, const struct pw_timed_op *t)
{
	double want = pw_check_duration(c->p, t->op);
	char name[64];

	/* False for a WANT that is not finite: no listed op lasts that. */
	if (fabs(t->end - t->start - want) <= pw_check_tol(c, want))
		return;
	pw_check_report(c, "%s lasts %.15g (from %.15g to %.15g), but should "
	    "last %.15g", pw_op_name(name, sizeof name, t->op),
	    t->end - t->start, t->start, t->end, want);
}

/* Reports when T starts before DEP ends plus COMM.  An absent DEP is
 * reported by the presence check already. */
static void
pw_check_after(struct pw_checker *c, const struct pw_timed_op *t,
    const struct pw_timed_op *dep, double comm)
{
	char a[64], b[64], lag[64] = "";

	if (dep == NULL || !pw_check_before(t->start, dep->end + comm,
	    pw_check_order_tol(c, t->op, dep->op, comm)))
		return;
	if (comm != 0)
		snprintf(lag, sizeof lag, " plus comm %.15g", comm);
	pw_check_report(c, "%s starts at %.15g before %s ends at %.15g%s",
	    pw_op_name(a, sizeof a, t->op), t->start,
	    pw_op_name(b, sizeof b, dep->op), dep->end, lag);
}

/* A RELOAD's anchor: a listed compute op on its device that has started
 * (ended, for an anchor at the end). */
static void
pw_check_anchor(struct pw_checker *c, const struct pw_timed_op *t)
{
	const struct pw_problem *p = c->p;
	const struct pw_timed_op *at;
	struct pw_op a = t->anchor.op;
	char name[64], an[64];
	double when;
	int device = pw_check_device(p, t->op.stage);

	pw_op_name(name, sizeof name, t->op);
	if (!pw_check_in_problem(p, a)) {
		pw_check_report(c, "%s is anchored at (kind %d, stage %d, mb "
		    "%d), which is no op of the problem", name, (int)a.kind,
		    a.stage, a.mb);
		return;
	}
	pw_op_name(an, sizeof an, a);
	if (!pw_check_is_compute(a.kind)) {
		pw_check_report(c, "%s is anchored at %s, which is no compute "
		    "op", name, an);
		return;
	}
	if (pw_check_device(p, a.stage) != device) {
		pw_check_report(c, "%s is anchored at %s on device %d, not on "
		    "its own device %d", name, an, pw_check_device(p, a.stage),
		    device);
		return;
	}
	if (!pw_check_has(c, a.kind, a.stage, a.mb)) {
		pw_check_report(c, "%s is anchored at %s, which is not listed",
		    name, an);
		return;
	}
	at = pw_check_find(c, a.kind, a.stage, a.mb);
	if (at == NULL)
		return;
	when = t->anchor.at_end ? at->end : at->start;
	if (pw_check_before(t->start, when, pw_check_order_tol(c, t->op,
	    at->op, 0)))
		pw_check_report(c, "%s starts at %.15g before its anchor %s "
		    "%s at %.15g", name, t->start, an, t->anchor.at_end ?
		    "ends" : "starts", when);
}

/* The data dependencies of T, with communication across devices. */
static void
pw_check_deps(struct pw_checker *c, const struct pw_timed_op *t)
{
	const struct pw_problem *p = c->p;
	const struct pw_timed_op *dep;
	int s = t->op.stage, j = t->op.mb;

	switch (t->op.kind) {
	case PW_F:
		if (s > 0)
			pw_check_after(c, t, pw_check_find(c, PW_F, s - 1, j),
			    pw_check_hop(p, s - 1));
		break;
	case PW_B:
	case PW_BW:
		if (s == p->nstages - 1) {
			pw_check_after(c, t, pw_check_find(c, PW_F, s, j), 0);
		} else {
			dep = pw_check_find(c, PW_B, s + 1, j);
			if (dep == NULL)
				dep = pw_check_find(c, PW_BW, s + 1, j);
			pw_check_after(c, t, dep, pw_check_hop(p, s));
		}
		pw_check_after(c, t, pw_check_find(c, PW_RELOAD, s, j), 0);
		break;
	case PW_W:
		pw_check_after(c, t, pw_check_find(c, PW_B, s, j), 0);
		break;
	case PW_OFFLOAD:
		pw_check_after(c, t, pw_check_find(c, PW_F, s, j), 0);
		break;
	case PW_RELOAD:
		pw_check_after(c, t, pw_check_find(c, PW_OFFLOAD, s, j), 0);
		if (t->has_anchor)
			pw_check_anchor(c, t);
		break;
	case PW_NKINDS:
		assert(!"op kind out of range");
	}
}

static int
pw_check_busy_cmp(const void *a, const void *b)
{
	const struct pw_check_busy *x = a, *y = b;

	if (x->resource != y->resource)
		return x->resource < y->resource ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	/* The list order breaks ties, so reports do not depend on qsort. */
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return 0;
}

static char *
pw_check_resource_name(const struct pw_problem *p, int resource, char *buf,
    size_t len)
{
	if (resource < p->devices)
		snprintf(buf, len, "device %d", resource);
	else
		pw_channel_name(p, resource - p->devices, buf, len);
	return buf;
}

/* One op at a time per device and per channel.  Sorted by start, each op
 * is compared with the one reaching furthest among those before it, so
 * every op that overlaps an earlier one is reported once. */
static void
pw_check_resources(struct pw_checker *c, struct pw_check_busy *busy, size_t n)
{
	char res[64], a[64], b[64];
	size_t i, last = 0;

	qsort(busy, n, sizeof *busy, pw_check_busy_cmp);
	for (i = 0; i < n; i++) {
		if (i == 0 || busy[i].resource != busy[last].resource) {
			last = i;
			continue;
		}
		if (pw_check_before(busy[i].start, busy[last].end,
		    pw_check_order_tol(c, busy[i].t->op,
		    busy[last].t->op, 0)))
			pw_check_report(c, "%s runs %s [%.15g, %.15g] and %s "
			    "[%.15g, %.15g] at once", pw_check_resource_name(c->p,
			    busy[i].resource, res, sizeof res),
			    pw_op_name(a, sizeof a, busy[last].t->op),
			    busy[last].start, busy[last].end,
			    pw_op_name(b, sizeof b, busy[i].t->op),
			    busy[i].start, busy[i].end);
		if (busy[i].end > busy[last].end)
			last = i;
	}
}

static int
pw_check_mem_cmp(const void *a, const void *b)
{
	const struct pw_check_mem *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->delta < y->delta ? -1 : x->delta > y->delta;
}

/* Appends T's allocation at its start and its free at its end, as its
 * kind defines them. */
static size_t
pw_check_mem_events(const struct pw_problem *p, const struct pw_timed_op *t,
    struct pw_check_mem *ev)
{
	const struct pw_stage *st = &p->stages[t->op.stage];
	double alloc = 0, freed = 0;
	size_t n = 0;

	switch (t->op.kind) {
	case PW_F:
		alloc = st->act;
		break;
	case PW_B:
		freed = st->act - st->hold;
		break;
	case PW_W:
		freed = st->hold;
		break;
	case PW_BW:
		freed = st->act;
		break;
	case PW_OFFLOAD:
		freed = st->offload;
		break;
	case PW_RELOAD:
		alloc = st->offload;
		break;
	case PW_NKINDS:
		assert(!"op kind out of range");
	}
	if (alloc != 0)
		ev[n++] = (struct pw_check_mem){ st->device, t->start, alloc, t };
	if (freed != 0)
		ev[n++] = (struct pw_check_mem){ st->device, t->end, -freed, t };
	return n;
}

/* Device D's memory, instant by instant: events within the ordering
 * tolerance of an instant's first event belong to it, and the level after
 * all of them is the instant's peak (frees come before allocations).
 * Reports the first instant over the limit, or whose level overflows (a
 * sum no double holds is above any limit it could be compared with);
 * returns the index past D's events. */
static size_t
pw_check_memory_of(struct pw_checker *c, int d, const struct pw_check_mem *ev,
    size_t i, size_t n)
{
	double level = c->p->memory[d].static_bytes;
	double limit = c->p->memory[d].limit;
	const struct pw_timed_op *first, *culprit;
	char name[64];
	double t0;
	bool over = pw_check_over(level, limit);

	if (over)
		pw_check_report(c, "device %d: static memory %.15g exceeds its "
		    "limit %.15g", d, level, limit);
	while (i < n && ev[i].device == d && !over) {
		t0 = ev[i].t;
		first = culprit = ev[i].op;
		for (; i < n && ev[i].device == d && !pw_check_before(t0,
		    ev[i].t, pw_check_order_tol(c, first->op, ev[i].op->op,
		    0)); i++) {
			level += ev[i].delta;
			if (ev[i].delta > 0)
				culprit = ev[i].op;
		}
		over = !isfinite(level) || pw_check_over(level, limit);
		pw_op_name(name, sizeof name, culprit->op);
		if (!isfinite(level))
			pw_check_report(c, "device %d: its memory overflows at "
			    "%.15g (at %s)", d, t0, name);
		else if (over)
			pw_check_report(c, "device %d holds %.15g bytes at "
			    "%.15g (at %s), over its limit %.15g", d, level,
			    t0, name, limit);
	}
	while (i < n && ev[i].device == d)
		i++;
	return i;
}

static void
pw_check_memory(struct pw_checker *c, struct pw_check_mem *ev, size_t n)
{
	size_t i = 0;
	int d;

	qsort(ev, n, sizeof *ev, pw_check_mem_cmp);
	for (d = 0; d < c->p->devices; d++)
		i = pw_check_memory_of(c, d, ev, i, n);
	assert(i == n);
}

/* The checks that need times: durations, dependencies, resources and
 * memory, over every admitted op with finite times. */
static void
pw_check_times(struct pw_checker *c)
{
	const struct pw_problem *p = c->p;
	const struct pw_timed_op *t;
	struct pw_check_busy *busy;
	struct pw_check_mem *ev;
	size_t k, nbusy = 0, nev = 0, count = 0;
	int device;

	for (k = 0; k < c->nslots; k++)
		count += c->slot[k] != PW_CHECK_ABSENT;
	busy = pw_xreallocarray(NULL, count + 1, sizeof *busy);
	ev = pw_xreallocarray(NULL, 2 * count + 1, sizeof *ev);
	for (k = 0; k < c->nslots; k++) {
		if ((t = pw_check_timed(c, k)) == NULL)
			continue;
		pw_check_duration_of(c, t);
		pw_check_deps(c, t);
		device = pw_check_device(p, t->op.stage);
		busy[nbusy++] = (struct pw_check_busy){
			pw_kind_is_transfer(t->op.kind) ? p->devices +
			    pw_check_channel(p, device, t->op.kind) : device,
			t->start, t->end, t };
		nev += pw_check_mem_events(p, t, ev + nev);
	}
	pw_check_resources(c, busy, nbusy);
	pw_check_memory(c, ev, nev);
	free(busy);
	free(ev);
}

int
pw_check(const struct pw_problem *p, const struct pw_timed_op *ops, size_t n,
    struct pw_violations *out)
{
	struct pw_checker c;
	size_t i;
	int s, j;

	memset(out, 0, sizeof *out);
	c.p = p;
	c.ops = ops;
	c.scale = pw_check_scale(p);
	c.out = out;
	c.nslots = (size_t)PW_NKINDS * (size_t)p->nstages *
	    (size_t)p->microbatches;
	c.slot = pw_xreallocarray(NULL, c.nslots, sizeof *c.slot);
	for (i = 0; i < c.nslots; i++)
		c.slot[i] = PW_CHECK_ABSENT;
	for (i = 0; i < n; i++)
		pw_check_admit(&c, i);
	for (s = 0; s < p->nstages; s++)
		for (j = 0; j < p->microbatches; j++)
			pw_check_presence(&c, s, j);
	pw_check_times(&c);
	free(c.slot);
	return out->n;
}

void
pw_violations_free(struct pw_violations *v)
{
	int i;

	for (i = 0; i < v->n; i++)
		free(v->msg[i]);
	free(v->msg);
	memset(v, 0, sizeof *v);
}
