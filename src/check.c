/*
 * check.c - the independent checker.
 *
 * It verifies timed ops against a problem from first principles and on
 * purpose shares no code with the simulator: durations, hops, channels,
 * dependencies and memory events are recomputed here from the problem's
 * fields.  pw_op_deps and pw_op_memory are the simulator's copy of the
 * same rules; this file keeps its own, so that a wrong rule there cannot
 * hide by being called from here too.  Every pass is linear or a sort, so
 * a million ops check in about a second.
 *
 * Each violation is found as data (struct pw_violation, with the line
 * that says it and the list entry at fault), and pw_check_line writes its
 * message from that data, so the two cannot disagree.
 */
#include <assert.h>
#include <math.h>
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
	/* A measured timeline (pw_check_measured): durations and the comm
	 * between devices are the run's own. */
	bool	 measured;
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

/* The line a violation gets, by kind (pw_check_kinds). */
enum pw_check_line {
	PW_CHECK_OUTSIDE,		/* an entry that is no op of the problem */
	PW_CHECK_NO_LINK,		/* a transfer, and no link */
	PW_CHECK_NO_BYTES,		/* a transfer of a stage without offload */
	PW_CHECK_BYTES,			/* a transfer of other bytes */
	PW_CHECK_REPEAT,
	PW_CHECK_DEVICE,		/* stated on another device */
	PW_CHECK_NONFINITE,
	PW_CHECK_MISSING,
	PW_CHECK_MISSING_BACKWARD,	/* neither BW nor B and W */
	PW_CHECK_BOTH_BACKWARDS,	/* BW and B or W */
	PW_CHECK_UNMATCHED,		/* one transfer of the pair */
	PW_CHECK_DURATION,
	PW_CHECK_EARLY,			/* before a dependency ends */
	PW_CHECK_STRAY_ANCHOR,		/* an anchor on no RELOAD */
	PW_CHECK_ANCHOR_OUTSIDE,
	PW_CHECK_ANCHOR_TRANSFER,
	PW_CHECK_ANCHOR_DEVICE,
	PW_CHECK_ANCHOR_UNLISTED,
	PW_CHECK_ANCHOR_EARLY,
	PW_CHECK_OVERLAP,
	PW_CHECK_STATIC,		/* static memory over the limit */
	PW_CHECK_OVERFLOW,		/* a memory level no double holds */
	PW_CHECK_OVER,			/* memory over the limit */
	PW_CHECK_PIN,			/* a pin broken */
};

static const enum pw_violation_kind pw_check_kinds[] = {
	[PW_CHECK_OUTSIDE] = PW_VIOL_SHAPE,
	[PW_CHECK_NO_LINK] = PW_VIOL_SHAPE,
	[PW_CHECK_NO_BYTES] = PW_VIOL_SHAPE,
	[PW_CHECK_BYTES] = PW_VIOL_SHAPE,
	[PW_CHECK_REPEAT] = PW_VIOL_SHAPE,
	[PW_CHECK_DEVICE] = PW_VIOL_SHAPE,
	[PW_CHECK_NONFINITE] = PW_VIOL_SHAPE,
	[PW_CHECK_MISSING] = PW_VIOL_SHAPE,
	[PW_CHECK_MISSING_BACKWARD] = PW_VIOL_SHAPE,
	[PW_CHECK_BOTH_BACKWARDS] = PW_VIOL_SHAPE,
	[PW_CHECK_UNMATCHED] = PW_VIOL_SHAPE,
	[PW_CHECK_DURATION] = PW_VIOL_DURATION,
	[PW_CHECK_EARLY] = PW_VIOL_DEPENDENCY,
	[PW_CHECK_STRAY_ANCHOR] = PW_VIOL_ANCHOR,
	[PW_CHECK_ANCHOR_OUTSIDE] = PW_VIOL_ANCHOR,
	[PW_CHECK_ANCHOR_TRANSFER] = PW_VIOL_ANCHOR,
	[PW_CHECK_ANCHOR_DEVICE] = PW_VIOL_ANCHOR,
	[PW_CHECK_ANCHOR_UNLISTED] = PW_VIOL_ANCHOR,
	[PW_CHECK_ANCHOR_EARLY] = PW_VIOL_ANCHOR,
	[PW_CHECK_OVERLAP] = PW_VIOL_OVERLAP,
	[PW_CHECK_STATIC] = PW_VIOL_MEMORY,
	[PW_CHECK_OVERFLOW] = PW_VIOL_MEMORY,
	[PW_CHECK_OVER] = PW_VIOL_MEMORY,
	[PW_CHECK_PIN] = PW_VIOL_PIN,
};

/* A violation as found: the row the caller gets, the line that says it,
 * the list entry at fault (whose stated device, bytes, times, anchor and
 * position the line quotes) and the one quantity no row holds. */
struct pw_check_found {
	enum pw_check_line line;
	struct pw_violation v;
	const struct pw_timed_op *listed;	/* NULL where none */
	double	level;		/* PW_CHECK_OVER: the device's memory */
};

/* A violation of LINE about OP (NULL: no op of the problem), listed as
 * entry T (NULL: none), with no other op, resource, instant or bytes. */
static struct pw_check_found
pw_check_viol(enum pw_check_line line, const struct pw_op *op,
    const struct pw_timed_op *t)
{
	struct pw_check_found f;

	memset(&f, 0, sizeof f);
	f.line = line;
	f.v.kind = pw_check_kinds[line];
	f.v.has_op = op != NULL;
	if (op != NULL)
		f.v.op = *op;
	f.v.resource = -1;
	f.v.at = NAN;
	f.v.bytes = NAN;
	f.listed = t;
	f.level = NAN;
	return f;
}

/* As pw_check_viol, with OTHER. */
static struct pw_check_found
pw_check_viol2(enum pw_check_line line, const struct pw_op *op,
    const struct pw_timed_op *t, struct pw_op other)
{
	struct pw_check_found f = pw_check_viol(line, op, t);

	f.v.has_other = true;
	f.v.other = other;
	return f;
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

/* Seconds between ops A and B of one microbatch that depend on each
 * other: the hop between their stages, adjacent when they differ. */
static double
pw_check_lag(const struct pw_problem *p, struct pw_op a, struct pw_op b)
{
	if (a.stage == b.stage)
		return 0;
	return pw_check_hop(p, a.stage < b.stage ? a.stage : b.stage);
}

/* The comm a dependency of A on B waits for: the hop between them, or
 * none in a measured timeline, whose comm is the run's own. */
static double
pw_check_comm(const struct pw_checker *c, struct pw_op a, struct pw_op b)
{
	return c->measured ? 0 : pw_check_lag(c->p, a, b);
}

/* Writes the line of F into BUF from F's fields, the problem and the
 * listed times of F's ops. */
static void
pw_check_line(const struct pw_checker *c, const struct pw_check_found *f,
    char *buf, size_t len)
{
	const struct pw_problem *p = c->p;
	const struct pw_violation *v = &f->v;
	const struct pw_timed_op *t = f->listed, *u = NULL;
	const struct pw_stage *st = v->has_op ? &p->stages[v->op.stage] : NULL;
	char a[64] = "", b[64] = "", res[64] = "", lag[64] = "";
	double comm;

	if (v->has_op)
		pw_op_name(a, sizeof a, v->op);
	if (v->has_other) {
		pw_op_name(b, sizeof b, v->other);
		u = pw_check_find(c, v->other.kind, v->other.stage,
		    v->other.mb);
	}
	if (v->resource >= 0)
		pw_resource_name(p, v->resource, res, sizeof res);
	switch (f->line) {
	case PW_CHECK_OUTSIDE:
		snprintf(buf, len, "op %zu (kind %d, stage %d, mb %d) is not "
		    "an op of the problem (%d stages, %d microbatches)",
		    (size_t)(t - c->ops), (int)t->op.kind, t->op.stage,
		    t->op.mb, p->nstages, p->microbatches);
		break;
	case PW_CHECK_NO_LINK:
		snprintf(buf, len, "%s: the problem has no offload link", a);
		break;
	case PW_CHECK_NO_BYTES:
		snprintf(buf, len, "%s: stage %d has no offload bytes", a,
		    v->op.stage);
		break;
	case PW_CHECK_BYTES:
		snprintf(buf, len, "%s moves %.15g B, but stage %d "
		    "offloads %.15g B", a, t->bytes, v->op.stage, st->offload);
		break;
	case PW_CHECK_REPEAT:
		snprintf(buf, len, "%s appears more than once (ops %zu and "
		    "%zu)", a, c->slot[pw_check_key(p, v->op.kind, v->op.stage,
		    v->op.mb)], (size_t)(t - c->ops));
		break;
	case PW_CHECK_DEVICE:
		snprintf(buf, len, "%s is stated on device %d, but stage %d "
		    "runs on device %d", a, t->device, v->op.stage,
		    st->device);
		break;
	case PW_CHECK_NONFINITE:
		snprintf(buf, len, "%s has a non-finite %s (start %g, end %g)",
		    a, isfinite(t->start) && isfinite(t->end) ? "duration" :
		    "time", t->start, t->end);
		break;
	case PW_CHECK_MISSING:
		snprintf(buf, len, "missing %s", a);
		break;
	case PW_CHECK_MISSING_BACKWARD:
		snprintf(buf, len, "missing %s (or B and W)", a);
		break;
	case PW_CHECK_BOTH_BACKWARDS:
		snprintf(buf, len, "%s and %s both present: a backward is "
		    "fused or split, not both", a, b);
		break;
	case PW_CHECK_UNMATCHED:
		snprintf(buf, len, "missing %s to match %s", a, b);
		break;
	case PW_CHECK_DURATION:
		snprintf(buf, len, "%s lasts %.15g s (from %.15g s to %.15g s), "
		    "but should last %.15g s", a, t->end - t->start, v->at,
		    t->end, pw_check_duration(p, v->op));
		break;
	case PW_CHECK_PIN:
		snprintf(buf, len, "the pin %s before %s is broken: %s starts "
		    "at %.15g s, after %s at %.15g s", a, b, a, v->at, b,
		    u->start);
		break;
	case PW_CHECK_EARLY:
		comm = pw_check_comm(c, v->op, v->other);
		if (comm != 0)
			snprintf(lag, sizeof lag, " plus comm %.15g s", comm);
		snprintf(buf, len, "%s starts at %.15g s before %s ends at "
		    "%.15g s%s", a, v->at, b, u->end, lag);
		break;
	case PW_CHECK_STRAY_ANCHOR:
		snprintf(buf, len, "%s names an anchor, but only a RELOAD may",
		    a);
		break;
	case PW_CHECK_ANCHOR_OUTSIDE:
		snprintf(buf, len, "%s is anchored at (kind %d, stage %d, mb "
		    "%d), which is no op of the problem", a,
		    (int)t->anchor.op.kind, t->anchor.op.stage,
		    t->anchor.op.mb);
		break;
	case PW_CHECK_ANCHOR_TRANSFER:
		snprintf(buf, len, "%s is anchored at %s, which is no compute "
		    "op", a, b);
		break;
	case PW_CHECK_ANCHOR_DEVICE:
		snprintf(buf, len, "%s is anchored at %s on device %d, not on "
		    "its own device %d", a, b, pw_check_device(p,
		    v->other.stage), st->device);
		break;
	case PW_CHECK_ANCHOR_UNLISTED:
		snprintf(buf, len, "%s is anchored at %s, which is not listed",
		    a, b);
		break;
	case PW_CHECK_ANCHOR_EARLY:
		snprintf(buf, len, "%s starts at %.15g s before its anchor %s "
		    "%s at %.15g s", a, v->at, b, t->anchor.at_end ? "ends" :
		    "starts", t->anchor.at_end ? u->end : u->start);
		break;
	case PW_CHECK_OVERLAP:
		snprintf(buf, len, "%s runs %s [%.15g, %.15g] s and %s [%.15g, "
		    "%.15g] s at once", res, b, u->start, u->end, a, t->start,
		    t->end);
		break;
	case PW_CHECK_STATIC:
		snprintf(buf, len, "%s: static memory %.15g B exceeds its "
		    "limit %.15g B", res, p->memory[v->resource].static_bytes,
		    p->memory[v->resource].limit);
		break;
	case PW_CHECK_OVERFLOW:
		snprintf(buf, len, "%s: its memory overflows at %.15g s (at %s)",
		    res, v->at, a);
		break;
	case PW_CHECK_OVER:
		snprintf(buf, len, "%s holds %.15g B at %.15g s (at %s), over "
		    "its limit %.15g B", res, f->level, v->at, a,
		    p->memory[v->resource].limit);
		break;
	}
}

/* Appends F's row and its line to the checker's output. */
static void
pw_check_report(struct pw_checker *c, const struct pw_check_found *f)
{
	struct pw_violations *v = c->out;
	char buf[512];

	pw_check_line(c, f, buf, sizeof buf);
	if (v->n == v->cap) {
		v->cap = v->cap == 0 ? 16 : v->cap * 2;
		v->msg = pw_xreallocarray(v->msg, (size_t)v->cap,
		    sizeof *v->msg);
		v->item = pw_xreallocarray(v->item, (size_t)v->cap,
		    sizeof *v->item);
	}
	v->item[v->n] = f->v;
	v->msg[v->n++] = pw_xstrdup(buf);
}

/* Reports LINE about the op of entry T, as pw_check_viol. */
static void
pw_check_report_op(struct pw_checker *c, enum pw_check_line line,
    const struct pw_timed_op *t)
{
	struct pw_check_found f = pw_check_viol(line, &t->op, t);

	pw_check_report(c, &f);
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
	struct pw_check_found f;
	size_t key;

	if (!pw_op_in(p, t->op)) {
		f = pw_check_viol(PW_CHECK_OUTSIDE, NULL, t);
		pw_check_report(c, &f);
		return;
	}
	st = &p->stages[t->op.stage];
	if (pw_kind_is_transfer(t->op.kind)) {
		if (!p->link.present) {
			pw_check_report_op(c, PW_CHECK_NO_LINK, t);
			return;
		}
		if (!(st->offload > 0)) {
			pw_check_report_op(c, PW_CHECK_NO_BYTES, t);
			return;
		}
		if (!(fabs(t->bytes - st->offload) <= PW_CHECK_RTOL *
		    st->offload))
			pw_check_report_op(c, PW_CHECK_BYTES, t);
	}
	key = pw_check_key(p, t->op.kind, t->op.stage, t->op.mb);
	if (c->slot[key] != PW_CHECK_ABSENT) {
		pw_check_report_op(c, PW_CHECK_REPEAT, t);
		return;
	}
	if (t->device != st->device) {
		f = pw_check_viol(PW_CHECK_DEVICE, &t->op, t);
		if (t->device >= 0 && t->device < p->devices)
			f.v.resource = t->device;
		pw_check_report(c, &f);
	}
	if (!isfinite(t->end - t->start))
		pw_check_report_op(c, PW_CHECK_NONFINITE, t);
	if (t->has_anchor && t->op.kind != PW_RELOAD)
		pw_check_report_op(c, PW_CHECK_STRAY_ANCHOR, t);
	c->slot[key] = i;
}

/* Reports LINE of the presence check about OP, beside OTHER (NULL:
 * none). */
static void
pw_check_shape(struct pw_checker *c, enum pw_check_line line,
    struct pw_op op, const struct pw_op *other)
{
	struct pw_check_found f = other != NULL ? pw_check_viol2(line, &op,
	    NULL, *other) : pw_check_viol(line, &op, NULL);

	pw_check_report(c, &f);
}

/* Each (stage, mb): F, then BW or both B and W, and both transfers or
 * neither. */
static void
pw_check_presence(struct pw_checker *c, int s, int j)
{
	struct pw_op f = { PW_F, s, j }, bw = { PW_BW, s, j };
	struct pw_op b = { PW_B, s, j }, w = { PW_W, s, j };
	struct pw_op off = { PW_OFFLOAD, s, j }, rel = { PW_RELOAD, s, j };
	bool has_bw, has_b, has_w, has_off, has_rel;

	if (!pw_check_has(c, PW_F, s, j))
		pw_check_shape(c, PW_CHECK_MISSING, f, NULL);
	has_bw = pw_check_has(c, PW_BW, s, j);
	has_b = pw_check_has(c, PW_B, s, j);
	has_w = pw_check_has(c, PW_W, s, j);
	if (has_bw && (has_b || has_w))
		pw_check_shape(c, PW_CHECK_BOTH_BACKWARDS, bw,
		    has_b ? &b : &w);
	else if (!has_bw && !has_b && !has_w)
		pw_check_shape(c, PW_CHECK_MISSING_BACKWARD, bw, NULL);
	else if (!has_bw && has_b != has_w)
		pw_check_shape(c, PW_CHECK_MISSING, has_b ? w : b, NULL);
	has_off = pw_check_has(c, PW_OFFLOAD, s, j);
	has_rel = pw_check_has(c, PW_RELOAD, s, j);
	if (has_off != has_rel)
		pw_check_shape(c, PW_CHECK_UNMATCHED, has_off ? rel : off,
		    has_off ? &off : &rel);
}

static void
pw_check_duration_of(struct pw_checker *c, const struct pw_timed_op *t)
{
	double want = pw_check_duration(c->p, t->op);
	struct pw_check_found f;

	if (c->measured)
		return;
	/* False for a WANT that is not finite: no listed op lasts that. */
	if (fabs(t->end - t->start - want) <= pw_check_tol(c, want))
		return;
	f = pw_check_viol(PW_CHECK_DURATION, &t->op, t);
	f.v.at = t->start;
	pw_check_report(c, &f);
}

/* Reports when T starts before DEP ends plus the hop between them (of
 * a measured timeline: before DEP ends).  An absent DEP is reported by
 * the presence check already. */
static void
pw_check_after(struct pw_checker *c, const struct pw_timed_op *t,
    const struct pw_timed_op *dep)
{
	struct pw_check_found f;
	double comm;

	if (dep == NULL)
		return;
	comm = pw_check_comm(c, t->op, dep->op);
	if (!pw_check_before(t->start, dep->end + comm, pw_check_order_tol(c,
	    t->op, dep->op, comm)))
		return;
	f = pw_check_viol2(PW_CHECK_EARLY, &t->op, t, dep->op);
	f.v.at = t->start;
	pw_check_report(c, &f);
}

/* True when RELOAD T starts before its anchor A, listed and timed, has
 * started (ended, for an anchor at the end). */
static bool
pw_check_before_anchor(const struct pw_checker *c, const struct pw_timed_op *t,
    struct pw_op a)
{
	const struct pw_timed_op *at = pw_check_find(c, a.kind, a.stage, a.mb);

	return at != NULL && pw_check_before(t->start, t->anchor.at_end ?
	    at->end : at->start, pw_check_order_tol(c, t->op, at->op, 0));
}

/* A RELOAD's anchor: a listed compute op on its device that has started
 * (ended, for an anchor at the end). */
static void
pw_check_anchor(struct pw_checker *c, const struct pw_timed_op *t)
{
	const struct pw_problem *p = c->p;
	struct pw_op a = t->anchor.op;
	struct pw_check_found f;
	enum pw_check_line line;

	if (!pw_op_in(p, a)) {
		pw_check_report_op(c, PW_CHECK_ANCHOR_OUTSIDE, t);
		return;
	}
	if (!pw_check_is_compute(a.kind))
		line = PW_CHECK_ANCHOR_TRANSFER;
	else if (pw_check_device(p, a.stage) != pw_check_device(p,
	    t->op.stage))
		line = PW_CHECK_ANCHOR_DEVICE;
	else if (!pw_check_has(c, a.kind, a.stage, a.mb))
		line = PW_CHECK_ANCHOR_UNLISTED;
	else if (pw_check_before_anchor(c, t, a))
		line = PW_CHECK_ANCHOR_EARLY;
	else
		return;
	f = pw_check_viol2(line, &t->op, t, a);
	if (line == PW_CHECK_ANCHOR_EARLY)
		f.v.at = t->start;
	pw_check_report(c, &f);
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
			pw_check_after(c, t, pw_check_find(c, PW_F, s - 1, j));
		break;
	case PW_B:
	case PW_BW:
		if (s == p->nstages - 1) {
			pw_check_after(c, t, pw_check_find(c, PW_F, s, j));
		} else {
			dep = pw_check_find(c, PW_B, s + 1, j);
			if (dep == NULL)
				dep = pw_check_find(c, PW_BW, s + 1, j);
			pw_check_after(c, t, dep);
		}
		pw_check_after(c, t, pw_check_find(c, PW_RELOAD, s, j));
		break;
	case PW_W:
		pw_check_after(c, t, pw_check_find(c, PW_B, s, j));
		break;
	case PW_OFFLOAD:
		pw_check_after(c, t, pw_check_find(c, PW_F, s, j));
		break;
	case PW_RELOAD:
		pw_check_after(c, t, pw_check_find(c, PW_OFFLOAD, s, j));
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

/* One op at a time per device and per channel.  Sorted by start, each op
 * is compared with the one reaching furthest among those before it, so
 * every op that overlaps an earlier one is reported once. */
static void
pw_check_resources(struct pw_checker *c, struct pw_check_busy *busy, size_t n)
{
	struct pw_check_found f;
	size_t i, last = 0;

	qsort(busy, n, sizeof *busy, pw_check_busy_cmp);
	for (i = 0; i < n; i++) {
		if (i == 0 || busy[i].resource != busy[last].resource) {
			last = i;
			continue;
		}
		if (pw_check_before(busy[i].start, busy[last].end,
		    pw_check_order_tol(c, busy[i].t->op,
		    busy[last].t->op, 0))) {
			f = pw_check_viol2(PW_CHECK_OVERLAP, &busy[i].t->op,
			    busy[i].t, busy[last].t->op);
			f.v.resource = busy[i].resource;
			f.v.at = busy[i].start;
			pw_check_report(c, &f);
		}
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
	struct pw_check_found f;
	double t0;
	bool over = pw_check_over(level, limit);

	if (over) {
		f = pw_check_viol(PW_CHECK_STATIC, NULL, NULL);
		f.v.resource = d;
		f.v.bytes = level - limit;
		pw_check_report(c, &f);
	}
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
		if (!over)
			continue;
		f = pw_check_viol(isfinite(level) ? PW_CHECK_OVER :
		    PW_CHECK_OVERFLOW, &culprit->op, culprit);
		f.v.resource = d;
		f.v.at = t0;
		f.v.bytes = isfinite(level) ? level - limit : INFINITY;
		f.level = level;
		pw_check_report(c, &f);
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

/* The listed entry of the op a pin names as the user sees it: B or W of
 * a fused backward is its BW, BW of a split one its B.  NULL when the
 * list has neither (a shape violation says so). */
static const struct pw_timed_op *
pw_check_pinned(const struct pw_checker *c, struct pw_op op)
{
	const struct pw_timed_op *t;

	if ((t = pw_check_find(c, op.kind, op.stage, op.mb)) != NULL)
		return t;
	if (op.kind == PW_B || op.kind == PW_W)
		return pw_check_find(c, PW_BW, op.stage, op.mb);
	if (op.kind == PW_BW)
		return pw_check_find(c, PW_B, op.stage, op.mb);
	return NULL;
}

/* Each of the NPINS PINS holds: its before starts no later than its
 * after (within the tolerance of ordering the two). */
static void
pw_check_pins(struct pw_checker *c, const struct pw_pin *pins, size_t npins)
{
	const struct pw_timed_op *a, *b;
	struct pw_check_found f;
	size_t i;

	for (i = 0; i < npins; i++) {
		if ((a = pw_check_pinned(c, pins[i].before)) == NULL ||
		    (b = pw_check_pinned(c, pins[i].after)) == NULL ||
		    !isfinite(a->start) || !isfinite(b->start) ||
		    !pw_check_before(b->start, a->start, pw_check_order_tol(c,
		    a->op, b->op, 0)))
			continue;
		f = pw_check_viol(PW_CHECK_PIN, &a->op, a);
		f.v.has_other = true;
		f.v.other = b->op;
		f.v.at = a->start;
		pw_check_report(c, &f);
	}
}

static int
pw_check_run(const struct pw_problem *p, const struct pw_timed_op *ops,
    size_t n, bool measured, const struct pw_pin *pins, size_t npins,
    struct pw_violations *out)
{
	struct pw_checker c;
	size_t i;
	int s, j;

	memset(out, 0, sizeof *out);
	c.p = p;
	c.measured = measured;
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
	pw_check_pins(&c, pins, npins);
	free(c.slot);
	return out->n;
}

int
pw_check(const struct pw_problem *p, const struct pw_timed_op *ops, size_t n,
    struct pw_violations *out)
{
	return pw_check_run(p, ops, n, false, NULL, 0, out);
}

int
pw_check_measured(const struct pw_problem *p, const struct pw_timed_op *ops,
    size_t n, struct pw_violations *out)
{
	return pw_check_run(p, ops, n, true, NULL, 0, out);
}

int
pw_check_file(const struct pw_problem *p, const struct pw_timed_op *ops,
    size_t n, bool measured, const struct pw_pin *pins, size_t npins,
    struct pw_violations *out)
{
	return pw_check_run(p, ops, n, measured, pins, npins, out);
}

void
pw_violations_free(struct pw_violations *v)
{
	int i;

	for (i = 0; i < v->n; i++)
		free(v->msg[i]);
	free(v->msg);
	free(v->item);
	memset(v, 0, sizeof *v);
}
