/*
 * test_rules.c - the model's rules as functions (rules.c): each op's
 * candidates and predecessors, the index of where ops are, memory
 * effects, and the simulator's binding predecessors; every value worked
 * out by hand.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"
#include "pipewright.h"
#include "plan.h"
#include "tap.h"
#include "testlib.h"

/* PRED as "dependency F(0,1)+0.25", "anchor B(0,1) from start". */
static void
pred_text(char *buf, size_t len, const struct pw_pred *pred)
{
	char name[64];
	size_t n;

	n = (size_t)snprintf(buf, len, "%s %s", pw_pred_kind_name(pred->kind),
	    pw_op_name(name, sizeof name, pred->op));
	if (pred->delay != 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "+%g", pred->delay);
	if (pred->from_start && n < len)
		snprintf(buf + n, len - n, " from start");
}

/* The N rows of PREDS joined by ", ", into BUF. */
static const char *
preds_text(char *buf, size_t len, const struct pw_pred *preds, int n)
{
	char one[128];
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		pred_text(one, sizeof one, &preds[i]);
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    i == 0 ? "" : ", ", one);
	}
	return buf;
}

static void
check_deps(const struct pw_problem *p, struct pw_op op,
    const struct pw_anchor *anchor, const char *want)
{
	struct pw_pred deps[PW_MAX_DEPS];
	char buf[512], name[64];
	int n;

	n = pw_op_deps(p, op, anchor, deps);
	tap_str(preds_text(buf, sizeof buf, deps, n), want, "deps of %s%s",
	    pw_op_name(name, sizeof name, op), anchor == NULL ? "" :
	    anchor->at_end ? " anchored at an end" : " anchored at a start");
}

/* Three stages on devices 0, 1, 1: the hop 0 -> 1 is stage 0's comm,
 * 1 -> 2 stays on device 1 and costs nothing. */
static void
test_deps(void)
{
	struct pw_problem *p = pw_problem_new(2, 3, 2);
	struct pw_anchor start = { { PW_B, 0, 0 }, false };
	struct pw_anchor end = { { PW_W, 0, 0 }, true };

	p->stages[1].device = p->stages[2].device = 1;
	p->stages[0].comm = 0.25;
	p->stages[1].comm = 0.5;
	p->stages[2].comm = 0.75;
	check_deps(p, test_op(PW_F, 0, 0), NULL, "");
	check_deps(p, test_op(PW_F, 1, 1), NULL, "dependency F(0,1)+0.25");
	check_deps(p, test_op(PW_F, 2, 0), NULL, "dependency F(1,0)");
	check_deps(p, test_op(PW_B, 2, 0), NULL,
	    "dependency F(2,0), dependency RELOAD(2,0)");
	check_deps(p, test_op(PW_BW, 2, 1), NULL,
	    "dependency F(2,1), dependency RELOAD(2,1)");
	check_deps(p, test_op(PW_BW, 0, 1), NULL, "dependency B(1,1)+0.25, "
	    "dependency BW(1,1)+0.25, dependency RELOAD(0,1)");
	check_deps(p, test_op(PW_B, 1, 0), NULL, "dependency B(2,0), "
	    "dependency BW(2,0), dependency RELOAD(1,0)");
	check_deps(p, test_op(PW_W, 1, 0), NULL, "dependency B(1,0)");
	check_deps(p, test_op(PW_OFFLOAD, 0, 1), NULL, "dependency F(0,1)");
	check_deps(p, test_op(PW_RELOAD, 0, 1), NULL,
	    "dependency OFFLOAD(0,1)");
	check_deps(p, test_op(PW_RELOAD, 0, 1), &start,
	    "dependency OFFLOAD(0,1), anchor B(0,0) from start");
	check_deps(p, test_op(PW_RELOAD, 0, 1), &end,
	    "dependency OFFLOAD(0,1), anchor W(0,0)");
	/* An anchor is a reload's alone. */
	check_deps(p, test_op(PW_F, 1, 1), &start, "dependency F(0,1)+0.25");
	pw_problem_free(p);
}

/* pw_zb_dep of OP ("" for none) as pred_text writes it. */
static void
check_zb_dep(const struct pw_problem *p, struct pw_op op, const char *want)
{
	struct pw_pred dep;
	char buf[128], name[64];

	buf[0] = '\0';
	if (pw_zb_dep(p, op, &dep))
		pred_text(buf, sizeof buf, &dep);
	tap_str(buf, want, "zb dep of %s", pw_op_name(name, sizeof name, op));
}

/* The families' one input of F, B and W: pw_op_deps' first candidate of
 * those kinds (test_deps' problem). */
static void
test_zb_dep(void)
{
	struct pw_problem *p = pw_problem_new(2, 3, 2);

	p->stages[1].device = p->stages[2].device = 1;
	p->stages[0].comm = 0.25;
	p->stages[1].comm = 0.5;
	check_zb_dep(p, test_op(PW_F, 0, 1), "");
	check_zb_dep(p, test_op(PW_F, 1, 1), "dependency F(0,1)+0.25");
	check_zb_dep(p, test_op(PW_B, 2, 0), "dependency F(2,0)");
	check_zb_dep(p, test_op(PW_B, 0, 1), "dependency B(1,1)+0.25");
	check_zb_dep(p, test_op(PW_B, 1, 0), "dependency B(2,0)");
	check_zb_dep(p, test_op(PW_W, 1, 0), "dependency B(1,0)");
	pw_problem_free(p);
}

/* The one-stage offload problem of test_sim: act 3, hold 1, offload 2. */
static struct pw_problem *
offload_problem(bool duplex)
{
	struct pw_problem *p = pw_problem_new(1, 1, 2);

	p->stages[0] = (struct pw_stage){ 0, 1, 1, 1, 3, 1, 2, 0 };
	pw_problem_set_link(p, 4, 2, 0, duplex);
	return p;
}

/* OP's predecessors, or with SUCCS its successors, against WANT. */
static void
check_edges(const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_where *w, struct pw_op op, bool succs, const char *want)
{
	struct pw_pred rows[16];
	char buf[512], name[64];
	int n;

	n = succs ? pw_succs(p, s, w, op, rows, 16) :
	    pw_preds(p, s, w, op, rows);
	tap_str(preds_text(buf, sizeof buf, rows, n), want, "%s of %s",
	    succs ? "succs" : "preds", pw_op_name(name, sizeof name, op));
}

static void
check_preds(const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_where *w, struct pw_op op, const char *want)
{
	check_edges(p, s, w, op, false, want);
}

static void
check_succs(const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_where *w, struct pw_op op, const char *want)
{
	check_edges(p, s, w, op, true, want);
}

static void
test_preds(void)
{
	/* Each op's predecessors, and the same edges turned round: its
	 * successors, each row naming the op that waits. */
	static const struct {
		struct pw_op op;
		const char *preds, *succs;
	} rows[] = {
		{ { PW_F, 0, 0 }, "", "device F(0,1), dependency B(0,0), "
		    "dependency OFFLOAD(0,0)" },
		{ { PW_F, 0, 1 }, "device F(0,0)",
		    "device B(0,1), dependency B(0,1)" },
		{ { PW_B, 0, 1 }, "device F(0,1), dependency F(0,1)",
		    "device W(0,1), dependency W(0,1), anchor RELOAD(0,0) from "
		    "start" },
		{ { PW_B, 0, 0 }, "device W(0,1), dependency F(0,0), "
		    "dependency RELOAD(0,0)", "device W(0,0), dependency W(0,0)" },
		{ { PW_W, 0, 0 }, "device B(0,0), dependency B(0,0)", "" },
		{ { PW_OFFLOAD, 0, 0 }, "dependency F(0,0)",
		    "dependency RELOAD(0,0)" },
		{ { PW_RELOAD, 0, 0 }, "dependency OFFLOAD(0,0), anchor B(0,1) "
		    "from start", "dependency B(0,0)" },
	};
	struct pw_problem *p = offload_problem(true);
	struct pw_schedule *s = test_offload_schedule(p, true);
	struct pw_pred one[1];
	struct pw_where *w;
	struct pw_error err;
	size_t i;

	if (!tap_int(pw_where_build(p, s, &w, &err), PW_OK, "where: builds"))
		return;
	tap_int((long long)w->universe, 12, "where: universe of 1 x 2 pairs");
	tap_int(w->resource[pw_op_index(p, test_op(PW_B, 0, 0))], 0,
	    "where: B(0,0) on device 0");
	tap_int(w->position[pw_op_index(p, test_op(PW_B, 0, 0))], 4,
	    "where: B(0,0) fifth");
	tap_int(w->resource[pw_op_index(p, test_op(PW_OFFLOAD, 0, 0))], 1,
	    "where: the offload on resource 1, link0.d2h");
	tap_int(w->resource[pw_op_index(p, test_op(PW_RELOAD, 0, 0))], 2,
	    "where: the reload on resource 2, link0.h2d");
	tap_int(w->resource[pw_op_index(p, test_op(PW_OFFLOAD, 0, 1))],
	    PW_NOWHERE, "where: an absent op is nowhere");
	tap_ok(pw_where_has(w, p, test_op(PW_W, 0, 1)), "where: has W(0,1)");
	tap_ok(!pw_where_has(w, p, test_op(PW_BW, 0, 1)), "where: lacks BW(0,1)");
	tap_ok(!pw_where_has(w, p, test_op(PW_F, 1, 0)),
	    "where: an op out of range is absent");

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		check_preds(p, s, w, rows[i].op, rows[i].preds);
		check_succs(p, s, w, rows[i].op, rows[i].succs);
	}
	/* The count is every successor, however few rows fit. */
	tap_int(pw_succs(p, s, w, test_op(PW_F, 0, 0), NULL, 0), 3,
	    "succs: counted with no room");
	tap_int(pw_succs(p, s, w, test_op(PW_F, 0, 0), one, 1), 3,
	    "succs: counted past the room");
	tap_ok(one[0].kind == PW_PRED_DEVICE && one[0].op.kind == PW_F &&
	    one[0].op.mb == 1, "succs: the first row fits");
	pw_where_free(w);
	pw_schedule_free(s);
	pw_problem_free(p);

	/* Half duplex: the reload follows the offload on the one channel. */
	p = offload_problem(false);
	s = test_offload_schedule(p, false);
	if (tap_int(pw_where_build(p, s, &w, &err), PW_OK,
	    "where: half duplex builds")) {
		check_preds(p, s, w, test_op(PW_RELOAD, 0, 0),
		    "channel OFFLOAD(0,0), dependency OFFLOAD(0,0)");
		pw_where_free(w);
	}
	pw_schedule_free(s);
	pw_problem_free(p);
}

static void
check_where_error(const struct pw_problem *p, const struct pw_schedule *s,
    const char *want, const char *what)
{
	struct pw_where *w = NULL;
	struct pw_error err;

	tap_int(pw_where_build(p, s, &w, &err), PW_ERR_INPUT, "where: %s refused",
	    what);
	tap_ok(w == NULL, "where: no index for %s", what);
	tap_str(err.msg, want, "where: %s named", what);
}

static void
test_where_errors(void)
{
	struct pw_problem *p = offload_problem(true);
	struct pw_schedule *s = pw_schedule_new(p);

	pw_seq_push(&s->device[0], test_op(PW_F, 0, 0));
	pw_seq_push(&s->device[0], test_op(PW_F, 0, 2));
	check_where_error(p, s, "schedule: device 0 position 1: op (0,2) out "
	    "of range", "a microbatch out of range");
	s->device[0].ops[1] = test_op(PW_OFFLOAD, 0, 0);
	check_where_error(p, s, "schedule: OFFLOAD(0,0) is ordered on device 0 "
	    "but belongs to the link of device 0", "a transfer on a device");
	s->device[0].ops[1] = test_op(PW_F, 0, 0);
	check_where_error(p, s, "schedule: F(0,0) appears twice",
	    "a repeated op");
	s->device[0].len = 1;
	pw_seq_push(&s->channel[1], test_op(PW_OFFLOAD, 0, 0));
	check_where_error(p, s, "schedule: OFFLOAD(0,0) is ordered on "
	    "link0.h2d but belongs to the link of device 0",
	    "an offload on the reload's channel");
	s->channel[1].ops[0] = test_op(PW_F, 0, 1);
	check_where_error(p, s, "schedule: F(0,1) is ordered on link0.h2d but "
	    "belongs to device 0", "a compute op on a channel");
	s->channel[1].len = 0;
	pw_seq_push(&s->channel[0], test_op(PW_OFFLOAD, 0, 1));
	p->stages[0].offload = 0;
	check_where_error(p, s, "schedule: OFFLOAD(0,1) moves nothing (stage 0 "
	    "has offload 0)", "a transfer of nothing");
	pw_schedule_free(s);
	pw_problem_free(p);
}

static void
test_memory(void)
{
	static const char *const want[PW_NKINDS] = {
		"3 0", "0 2", "0 1", "0 3", "0 2", "2 0"
	};
	struct pw_problem *p = offload_problem(true);
	struct pw_mem_effect e;
	char buf[64];
	int k;

	for (k = 0; k < PW_NKINDS; k++) {
		e = pw_op_memory(p, test_op((enum pw_kind)k, 0, 1));
		snprintf(buf, sizeof buf, "%g %g", e.alloc, e.freed);
		tap_str(buf, want[k], "memory of %s: alloc at start, free at end",
		    pw_kind_name((enum pw_kind)k));
	}
	pw_problem_free(p);
}

/* What binds OP in T: "none" or "kind op". */
static void
check_bind(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op, const char *want)
{
	const struct pw_bind *b = &t->bind[pw_op_index(p, op)];
	char buf[128], name[64], from[64];

	if (b->pred == PW_NO_BIND)
		snprintf(buf, sizeof buf, "none");
	else
		snprintf(buf, sizeof buf, "%s %s",
		    pw_pred_kind_name((enum pw_pred_kind)b->kind),
		    pw_op_name(from, sizeof from, pw_op_from_index(p, b->pred)));
	tap_str(buf, want, "%s is bound by %s", pw_op_name(name, sizeof name, op),
	    want);
}

struct bind_row {
	struct pw_op op;
	const char *want;
};

/* Simulates S on P and checks the binding predecessor of each row. */
static void
check_binds(const struct pw_problem *p, const struct pw_schedule *s,
    const struct bind_row *rows, size_t n, const char *what)
{
	struct pw_timing *t;
	struct pw_error err;
	size_t i;

	if (!tap_int(pw_simulate(p, s, &t, &err), PW_OK, "%s simulates", what))
		return;
	for (i = 0; i < n; i++)
		check_bind(p, t, rows[i].op, rows[i].want);
	pw_timing_free(t);
}

/* The two-device 1F1B of test_sim: F(1,0) starts at 1.5, BW(1,0) at 2.5
 * (its device and its F tie: the order's row comes first), F(1,1) at
 * 4.5, BW(1,1) at 5.5, BW(0,0) at 5, BW(0,1) at 8.  In the offload
 * schedule of test_sim the anchored reload starts at its anchor's start,
 * 2. */
static void
test_bind(void)
{
	static const struct bind_row onefb[] = {
		{ { PW_F, 0, 0 }, "none" },
		{ { PW_F, 0, 1 }, "device F(0,0)" },
		{ { PW_F, 1, 0 }, "dependency F(0,0)" },
		{ { PW_BW, 1, 0 }, "device F(1,0)" },
		{ { PW_F, 1, 1 }, "device BW(1,0)" },
		{ { PW_BW, 1, 1 }, "device F(1,1)" },
		{ { PW_BW, 0, 0 }, "dependency BW(1,0)" },
		{ { PW_BW, 0, 1 }, "dependency BW(1,1)" },
		{ { PW_B, 0, 0 }, "none" },
	};
	static const struct bind_row offload[] = {
		{ { PW_OFFLOAD, 0, 0 }, "dependency F(0,0)" },
		{ { PW_RELOAD, 0, 0 }, "anchor B(0,1)" },
		{ { PW_B, 0, 0 }, "device W(0,1)" },
	};
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s = test_two_device_schedule(p);

	check_binds(p, s, onefb, sizeof onefb / sizeof onefb[0], "1F1B");
	pw_schedule_free(s);
	pw_problem_free(p);
	p = offload_problem(true);
	s = test_offload_schedule(p, true);
	check_binds(p, s, offload, sizeof offload / sizeof offload[0],
	    "offload");
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* Every op's slack in T, in index order, "op=slack" for present ops. */
static void
check_slack(const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_timing *t, const char *want, const char *what)
{
	double *slack = pw_slack(p, s, t);
	char buf[1024], name[64];
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < t->universe && used < sizeof buf; i++)
		if (pw_timing_has(t, i))
			used += (size_t)snprintf(buf + used, sizeof buf - used,
			    "%s%s=%g", used == 0 ? "" : " ", pw_op_name(name,
			    sizeof name, pw_op_from_index(p, i)), slack[i]);
	tap_str(buf, want, "slack of %s", what);
	free(slack);
}

/* The critical path of T as "op [start,end] <- kind op+delay ...". */
static void
check_critical(const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_timing *t, const char *want, const char *what)
{
	struct pw_critical *path;
	char buf[1024], name[64], by[128];
	size_t i, n, used = 0;

	path = pw_critical_path(p, s, t, &n);
	buf[0] = '\0';
	for (i = 0; i < n && used < sizeof buf; i++) {
		by[0] = '\0';
		if (path[i].bound)
			pred_text(by, sizeof by, &path[i].by);
		used += (size_t)snprintf(buf + used, sizeof buf - used,
		    "%s%s [%g,%g]%s%s", i == 0 ? "" : "; ",
		    pw_op_name(name, sizeof name, path[i].op), path[i].start,
		    path[i].end, path[i].bound ? " by " : "", by);
	}
	tap_str(buf, want, "critical path of %s", what);
	free(path);
}

/* What runs on resource R at AT: the op's name or "idle". */
static void
check_op_at(const struct pw_problem *p, const struct pw_schedule *s,
    const struct pw_timing *t, int r, double at, const char *want)
{
	struct pw_op op;
	char name[64];

	tap_str(pw_op_at(p, s, t, r, at, &op) ? pw_op_name(name, sizeof name,
	    op) : "idle", want, "resource %d at %g runs %s", r, at, want);
}

/* A question at an instant: what runs on resource R (NULL: "idle"), or
 * with R negative, the memory of device -1 - R in bytes. */
struct at_row {
	int	r;
	double	at;
	const char *op;
	double	bytes;
};

/* What every question of plan.h answers on S, simulated on P. */
struct query_case {
	const char *what;
	const char *slack;
	const char *critical;
	const struct at_row *rows;
	size_t	nrows;
};

static void
check_queries(const struct pw_problem *p, const struct pw_schedule *s,
    const struct query_case *c)
{
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	const struct at_row *row;
	size_t i;
	int d;

	if (!tap_int(pw_simulate(p, s, &t, &err), PW_OK, "%s simulates",
	    c->what))
		return;
	check_slack(p, s, t, c->slack, c->what);
	check_critical(p, s, t, c->critical, c->what);
	m = pw_metrics_compute(p, s, t);
	for (i = 0; i < c->nrows; i++) {
		row = &c->rows[i];
		d = -1 - row->r;
		if (row->r >= 0)
			check_op_at(p, s, t, row->r, row->at,
			    row->op != NULL ? row->op : "idle");
		else
			tap_near(pw_memory_at(m, d, row->at), row->bytes, 0,
			    "%s: memory of device %d at %g", c->what, d, row->at);
	}
	pw_metrics_free(m);
	pw_timing_free(t);
}

/* The two-device 1F1B (comm 0.5) timed in test_bind, ending at 10, with
 * act 3, hold 1 and 10 static bytes: device 0 allocates 3 at 0 and 1 and
 * frees 3 at 7 and 10; device 1 frees BW(1,0) at 4.5 as F(1,1)
 * allocates (frees first). */
static void
test_query_1f1b(void)
{
	static const struct at_row rows[] = {
		{ 0, 0.5, "F(0,0)", 0 }, { 0, 1, "F(0,1)", 0 },
		{ 0, 3, NULL, 0 }, { 0, 5, "BW(0,0)", 0 }, { 0, 7, NULL, 0 },
		{ 0, 9.99, "BW(0,1)", 0 }, { 0, 10, NULL, 0 },
		{ 0, -1, NULL, 0 }, { 1, 1.2, NULL, 0 },
		{ 1, 1.5, "F(1,0)", 0 }, { 1, 7.4, "BW(1,1)", 0 },
		{ 2, 1, NULL, 0 },
		{ -1, 0, NULL, 13 }, { -1, 0.5, NULL, 13 }, { -1, 1, NULL, 16 },
		{ -1, 6.99, NULL, 16 }, { -1, 7, NULL, 13 },
		{ -1, 100, NULL, 10 }, { -2, 4.5, NULL, 13 },
	};
	static const struct query_case c = { "1F1B",
		"F(0,0)=0 BW(0,0)=1 F(0,1)=2 BW(0,1)=0 "
		"F(1,0)=0 BW(1,0)=0 F(1,1)=0 BW(1,1)=0",
		"F(0,0) [0,1]; "
		"F(1,0) [1.5,2.5] by dependency F(0,0)+0.5; "
		"BW(1,0) [2.5,4.5] by device F(1,0); "
		"F(1,1) [4.5,5.5] by device BW(1,0); "
		"BW(1,1) [5.5,7.5] by device F(1,1); "
		"BW(0,1) [8,10] by dependency BW(1,1)+0.5",
		rows, sizeof rows / sizeof rows[0]
	};
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s = test_two_device_schedule(p);
	int d;

	for (d = 0; d < 2; d++) {
		p->stages[d] = (struct pw_stage){ .device = d, .f = 1, .b = 1.5,
		    .w = 0.5, .act = 3, .hold = 1, .comm = 0.5 };
		p->memory[d].static_bytes = 10;
	}
	check_queries(p, s, &c);
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* The anchored offload schedule on a slow reload (2 bytes at 0.5 B/s):
 * F(0,0) [0,1], F(0,1) [1,2], B(0,1) [2,3], W(0,1) [3,4], OFFLOAD [1,1.5],
 * RELOAD from its anchor B(0,1)'s start [2,6], B(0,0) [6,7], W(0,0)
 * [7,8].  The anchor's edge from a start carries no duration, either
 * way.  Memory: +3 at 0 and 1, -2 at 1.5, +2 at 2, -2 at 3, -1 at 4, -2
 * at 7, -1 at 8. */
static void
test_query_offload(void)
{
	static const struct at_row rows[] = {
		{ 1, 1.25, "OFFLOAD(0,0)", 0 }, { 1, 1.5, NULL, 0 },
		{ 2, 2, "RELOAD(0,0)", 0 }, { 2, 6, NULL, 0 },
		{ 3, 2, NULL, 0 },
		{ -1, 1.49, NULL, 6 }, { -1, 1.5, NULL, 4 },
		{ -1, 2.5, NULL, 6 }, { -1, 5, NULL, 3 }, { -1, 7.5, NULL, 1 },
		{ -1, 9, NULL, 0 },
	};
	static const struct query_case c = { "the offload",
		"F(0,0)=0 B(0,0)=0 W(0,0)=0 OFFLOAD(0,0)=0.5 "
		"RELOAD(0,0)=0 F(0,1)=0 B(0,1)=0 W(0,1)=2",
		"F(0,0) [0,1]; "
		"F(0,1) [1,2] by device F(0,0); "
		"B(0,1) [2,3] by device F(0,1); "
		"RELOAD(0,0) [2,6] by anchor B(0,1) from start; "
		"B(0,0) [6,7] by dependency RELOAD(0,0); "
		"W(0,0) [7,8] by device B(0,0)",
		rows, sizeof rows / sizeof rows[0]
	};
	struct pw_problem *p = offload_problem(true);
	struct pw_schedule *s;

	pw_problem_set_link(p, 4, 0.5, 0, true);
	s = test_offload_schedule(p, true);
	check_queries(p, s, &c);
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* The successors of the two-device 1F1B, by hand: the forward hands
 * on with the hop; the last stage's backward feeds the stage before
 * it. */
static void
test_succs(void)
{
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s = test_two_device_schedule(p);
	struct pw_where *w;
	struct pw_error err;

	if (tap_int(pw_where_build(p, s, &w, &err), PW_OK,
	    "succs: two devices build")) {
		check_succs(p, s, w, test_op(PW_F, 0, 0),
		    "device F(0,1), dependency F(1,0)+0.5");
		check_succs(p, s, w, test_op(PW_F, 1, 1),
		    "device BW(1,1), dependency BW(1,1)");
		check_succs(p, s, w, test_op(PW_BW, 1, 0),
		    "device F(1,1), dependency BW(0,0)+0.5");
		check_succs(p, s, w, test_op(PW_BW, 0, 1), "");
		pw_where_free(w);
	}
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* How many rows of ROWS (N) name OP by edge E. */
static int
count_rows(const struct pw_pred *rows, int n, struct pw_op op,
    const struct pw_pred *e)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += rows[i].op.kind == op.kind && rows[i].op.stage == op.stage &&
		    rows[i].op.mb == op.mb && rows[i].kind == e->kind &&
		    rows[i].from_start == e->from_start &&
		    rows[i].delay == e->delay;
	return k;
}

/* pw_succs is pw_preds turned round on SCHED: every edge X <- P shows
 * as P -> X as often, and the edges add up.  Returns the edges seen,
 * counting the anchors' in *ANCHORS. */
static size_t
check_inverse(const struct pw_problem *p, const struct pw_schedule *sched,
    const char *what, size_t *anchors)
{
	struct pw_pred preds[PW_MAX_PREDS], succs[64], edge;
	struct pw_where *w;
	struct pw_error err;
	struct pw_op x;
	size_t i, npreds = 0, nsuccs = 0, bad = 0;
	int k, np, ns;

	if (!tap_int(pw_where_build(p, sched, &w, &err), PW_OK,
	    "inverse: %s indexes", what))
		return 0;
	for (i = 0; i < w->universe; i++) {
		if (w->resource[i] == PW_NOWHERE)
			continue;
		x = pw_op_from_index(p, i);
		np = pw_preds(p, sched, w, x, preds);
		npreds += (size_t)np;
		ns = pw_succs(p, sched, w, x, succs, 64);
		nsuccs += (size_t)ns;
		for (k = 0; k < np; k++) {
			edge = preds[k];
			*anchors += edge.kind == PW_PRED_ANCHOR;
			ns = pw_succs(p, sched, w, edge.op, succs, 64);
			if (ns > 64 || count_rows(succs, ns, x, &edge) !=
			    count_rows(preds, np, edge.op, &edge))
				bad++;
		}
	}
	tap_int((long long)bad, 0, "inverse: %s: every edge both ways", what);
	tap_int((long long)nsuccs, (long long)npreds,
	    "inverse: %s: the edges add up", what);
	pw_where_free(w);
	return npreds;
}

/* Every family on problems of each layout, with and without offloads:
 * the successors agree with the predecessors edge for edge. */
static void
test_succs_inverse(void)
{
	static const struct pw_stage st = { .f = 1, .b = 1, .w = 0.5,
	    .act = 2, .hold = 1, .comm = 0.25 };
	struct pw_problem *probs[4], *used;
	struct pw_schedule *sched;
	struct pw_offload_opts opts = { PW_OFFSEL_PEAK, 1, NULL };
	struct pw_error err;
	char what[128];
	size_t i, k, edges = 0, anchors = 0;
	int built = 0;

	probs[0] = test_problem_uniform(4, 1, 8, PW_PLACE_LOOP, &st);
	probs[1] = test_problem_uniform(3, 2, 6, PW_PLACE_LOOP, &st);
	probs[2] = test_problem_uniform(4, 2, 8, PW_PLACE_V, &st);
	probs[3] = test_po_problem(4, 1, 8, 2, 0.5, INFINITY);
	for (k = 0; k < 4; k++)
		for (i = 0; i < pw_nfamilies; i++) {
			if (pw_family_build(&pw_families[i], probs[k], &used,
			    &sched, &err) != PW_OK)
				continue;
			built++;
			snprintf(what, sizeof what, "%s on problem %zu",
			    pw_families[i].name, k);
			edges += check_inverse(used, sched, what, &anchors);
			/* Offloads add transfers, channels and anchors. */
			if (used->link.present && sched->nchannels > 0 &&
			    sched->channel[0].len == 0 &&
			    pw_offload_plan(used, sched, &opts, &err) == PW_OK) {
				snprintf(what, sizeof what, "%s on problem %zu "
				    "offloaded", pw_families[i].name, k);
				edges += check_inverse(used, sched, what, &anchors);
			}
			pw_schedule_free(sched);
			pw_problem_free(used);
		}
	tap_ok(built >= 10, "inverse: %d family schedules checked", built);
	tap_ok(edges > 1000, "inverse: %zu edges checked", edges);
	tap_ok(anchors > 10, "inverse: %zu of them anchors", anchors);
	for (k = 0; k < 4; k++)
		pw_problem_free(probs[k]);
}

/* pw_order_seek on test_query_1f1b's device 0: F(0,0) [0,1], F(0,1)
 * [1,2], BW(0,0) [5,7], BW(0,1) [8,10]. */
static void
test_order_seek(void)
{
	static const struct { double t; int want; } rows[] = {
		{ -1, 0 }, { 0, 0 }, { 0.5, 0 }, { 1, 1 }, { 1.5, 1 },
		{ 2, 2 }, { 6.99, 2 }, { 7, 3 }, { 9, 3 }, { 10, 4 },
		{ 100, 4 },
	};
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s = test_two_device_schedule(p);
	struct pw_timing *t;
	struct pw_error err;
	size_t i;

	if (tap_int(pw_simulate(p, s, &t, &err), PW_OK, "seek: simulates")) {
		for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
			tap_int(pw_order_seek(p, s, t, 0, rows[i].t),
			    rows[i].want, "seek: device 0 after %g", rows[i].t);
		/* Device 1: F(1,0) [1.5,2.5] ... BW(1,1) [5.5,7.5]. */
		tap_int(pw_order_seek(p, s, t, 1, 1), 0, "seek: device 1 "
		    "before its first op");
		tap_int(pw_order_seek(p, s, t, 1, 7.5), 4, "seek: device 1 "
		    "after its last op");
		pw_timing_free(t);
	}
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* S on P deadlocks with message MSG, and pw_deadlock_waits lists WANT:
 * each blocked op and the edge it waits by, as "B(0,0) <- dependency
 * RELOAD(0,0)", joined by "; ". */
static void
check_deadlock(const struct pw_problem *p, const struct pw_schedule *s,
    const char *msg, const char *want, const char *what)
{
	struct pw_timing *t;
	struct pw_wait *waits;
	struct pw_error err;
	char buf[512], edge[128], name[64];
	size_t i, n, used = 0;

	tap_int(pw_simulate(p, s, &t, &err), PW_ERR_DEADLOCK,
	    "waits: %s deadlocks", what);
	tap_str(err.msg, msg, "waits: %s: the message", what);
	n = pw_deadlock_waits(p, s, &waits);
	buf[0] = '\0';
	for (i = 0; i < n && used < sizeof buf; i++) {
		pred_text(edge, sizeof edge, &waits[i].on);
		used += (size_t)snprintf(buf + used, sizeof buf - used,
		    "%s%s <- %s", i == 0 ? "" : "; ",
		    pw_op_name(name, sizeof name, waits[i].op), edge);
	}
	tap_str(buf, want, "waits: %s: the list", what);
	free(waits);
}

/* Deadlocks by hand: each resource's first blocked op and the one
 * unfinished predecessor it names, in the list as in the message. */
static void
test_deadlock_waits(void)
{
	static const struct pw_op order[] = {
		{ PW_BW, 0, 0 }, { PW_F, 0, 0 }, { PW_F, 0, 1 }, { PW_BW, 0, 1 },
		{ PW_F, 1, 0 }, { PW_BW, 1, 0 }, { PW_F, 1, 1 }, { PW_BW, 1, 1 },
	};
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s = pw_schedule_new(p);
	struct pw_wait *waits;
	size_t i, n;

	/* Device 0 runs BW(0,0) first, which waits for BW(1,0); device 1's
	 * F(1,0) waits for F(0,0), behind BW(0,0). */
	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		pw_schedule_append(s, p, order[i]);
	check_deadlock(p, s, "deadlock: 8 ops can never start:\n"
	    "  device 0: BW(0,0) waits for BW(1,0)\n"
	    "  device 1: F(1,0) waits for F(0,0)",
	    "BW(0,0) <- dependency BW(1,0)+0.5; "
	    "F(1,0) <- dependency F(0,0)+0.5", "two devices");
	pw_schedule_free(s);

	/* A timed schedule waits for nothing. */
	s = test_two_device_schedule(p);
	waits = (struct pw_wait *)&n;
	tap_int((long long)pw_deadlock_waits(p, s, &waits), 0,
	    "waits: none when it times");
	tap_ok(waits == NULL, "waits: and no list");
	pw_schedule_free(s);
	pw_problem_free(p);

	/* The channel: a half-duplex link ordered reload first.  The reload
	 * waits for its offload; B(0,0), for the reload. */
	p = offload_problem(false);
	s = test_offload_schedule(p, false);
	s->channel[0].ops[0] = test_op(PW_RELOAD, 0, 0);
	s->channel[0].ops[1] = test_op(PW_OFFLOAD, 0, 0);
	check_deadlock(p, s, "deadlock: 4 ops can never start:\n"
	    "  device 0: B(0,0) waits for RELOAD(0,0)\n"
	    "  link0: RELOAD(0,0) waits for OFFLOAD(0,0)",
	    "B(0,0) <- dependency RELOAD(0,0); "
	    "RELOAD(0,0) <- dependency OFFLOAD(0,0)", "the channel");
	pw_schedule_free(s);
	pw_problem_free(p);
}

int
main(void)
{
	test_deps();
	test_zb_dep();
	test_preds();
	test_where_errors();
	test_memory();
	test_bind();
	test_query_1f1b();
	test_query_offload();
	test_succs();
	test_succs_inverse();
	test_order_seek();
	test_deadlock_waits();
	return tap_done();
}
