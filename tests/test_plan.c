/*
 * test_plan.c - plans: made from a family, from orders and from a file;
 * every edit and each of its refusals; undo; failed re-times keeping the
 * last good timing; copies; and the comparison's rows.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "plan.h"
#include "tap.h"
#include "testlib.h"

/* Random moves per family in test_random_undo. */
#define NMOVES	200

static double
start_of(const struct pw_plan *plan, enum pw_kind kind, int stage, int mb)
{
	return pw_plan_timing(plan)->start[pw_op_index(pw_plan_problem(plan),
	    test_op(kind, stage, mb))];
}

/* Applies E and returns its code; the undo goes to *UNDO. */
static int
edit(struct pw_plan *plan, struct pw_edit e, struct pw_edit *undo,
    struct pw_error *err)
{
	return pw_plan_apply(plan, &e, undo, err);
}

static struct pw_edit
move(enum pw_kind kind, int stage, int mb, int to)
{
	return (struct pw_edit){ .kind = PW_EDIT_MOVE, .op = test_op(kind,
	    stage, mb), .to = to };
}

static struct pw_edit
insert(enum pw_kind kind, int stage, int mb, int to)
{
	return (struct pw_edit){ .kind = PW_EDIT_INSERT, .op = test_op(kind,
	    stage, mb), .to = to };
}

static struct pw_edit
removal(enum pw_kind kind, int stage, int mb)
{
	return (struct pw_edit){ .kind = PW_EDIT_REMOVE, .op = test_op(kind,
	    stage, mb) };
}

/* A plan of the two-device schedule the simulator's tests time by hand
 * (makespan 10). */
static struct pw_plan *
two_device_plan(void)
{
	struct pw_problem *p = test_two_device_problem();
	struct pw_plan *plan = NULL;
	struct pw_error err;

	if (!tap_int(pw_plan_new(p, test_two_device_schedule(p), &plan, &err),
	    PW_OK, "the two-device plan times"))
		tap_diag("%s", err.msg);
	return plan;
}

static void
test_family(void)
{
	struct pw_stage st = { .f = 1, .b = 1, .w = 1, .act = 1, .hold = 0.5 };
	struct pw_problem *p = test_problem_uniform(4, 1, 8, PW_PLACE_LOOP,
	    &st);
	const struct pw_critical *crit;
	struct pw_plan *plan;
	struct pw_error err;
	size_t n;

	if (tap_int(pw_plan_family(pw_family_find("1f1b"), p, &plan, &err),
	    PW_OK, "family: 1f1b builds")) {
		/* (m + p - 1)(f + b + w) on unit costs without comm. */
		tap_near(pw_plan_metrics(plan)->makespan, 33, 0,
		    "family: 1f1b makespan (8 + 4 - 1) * 3");
		tap_str(pw_plan_schedule(plan)->family, "1f1b",
		    "family: the schedule is named");
		tap_int(pw_plan_status(plan, &err), PW_OK, "family: status ok");
		tap_ok(pw_plan_timed(plan) != pw_plan_schedule(plan) &&
		    test_same_schedule(pw_plan_timed(plan),
		    pw_plan_schedule(plan)), "family: timed orders are a copy");
		tap_int(pw_plan_where(plan)->resource[pw_op_index(p,
		    test_op(PW_F, 2, 0))], 2, "family: F(2,0) is on device 2");
		tap_int(pw_plan_where(plan)->position[pw_op_index(p,
		    test_op(PW_F, 0, 1))], 1, "family: F(0,1) second");
		crit = pw_plan_critical(plan, &n);
		if (tap_ok(crit != NULL && n > 1, "family: a critical path")) {
			tap_ok(!crit[0].bound && crit[0].start == 0,
			    "family: it starts at 0, bound by nothing");
			tap_near(crit[n - 1].end, 33, 0, "family: it ends at 33");
		}
		tap_ok(pw_plan_critical(plan, &n) == crit,
		    "family: the critical path is kept");
		tap_near(pw_plan_slack(plan)[pw_op_index(p, test_op(PW_F, 0,
		    0))], 0, 0, "family: F(0,0) has no slack");
		tap_ok(pw_plan_slack(plan) == pw_plan_slack(plan),
		    "family: slack is kept");
		pw_plan_free(plan);
	}
	tap_int(pw_plan_family(pw_family_find("zb-v"), p, &plan, &err),
	    PW_ERR_NOT_APPLICABLE, "family: zb-v refuses one stage per "
	    "device without a model");
	tap_ok(plan == NULL, "family: no plan on a refusal");
	pw_problem_free(p);
}

static void
test_new(void)
{
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s;
	struct pw_plan *plan;
	struct pw_error err;

	plan = two_device_plan();
	if (plan != NULL) {
		tap_near(pw_plan_metrics(plan)->makespan, 10, 0,
		    "new: makespan 10");
		tap_near(start_of(plan, PW_BW, 0, 0), 5, 0, "new: BW(0,0) at 5");
		pw_plan_free(plan);
	}

	/* Orders missing an op: the simulator's error, no plan. */
	s = test_two_device_schedule(p);
	s->device[1].len--;
	tap_int(pw_plan_new(pw_problem_copy(p), s, &plan, &err), PW_ERR_INPUT,
	    "new: malformed orders refused");
	tap_ok(plan == NULL, "new: no plan");
	/* An invalid problem. */
	p->stages[0].f = -1;
	tap_int(pw_plan_new(pw_problem_copy(p), test_two_device_schedule(p),
	    &plan, &err), PW_ERR_INPUT, "new: invalid problem refused");
	tap_ok(strncmp(err.msg, "problem: ", 9) == 0, "new: the message "
	    "names the problem (%s)", err.msg);
	pw_problem_free(p);
}

static void
test_read(void)
{
	char path[] = "/tmp/test_plan.XXXXXX";
	struct pw_timed_op *stored;
	struct pw_plan *plan, *back;
	struct pw_error err;
	size_t nstored;
	int fd;

	if ((plan = two_device_plan()) == NULL)
		return;
	fd = mkstemp(path);
	close(fd);
	tap_int(pw_schedule_write(path, pw_plan_problem(plan),
	    pw_plan_schedule(plan), pw_plan_timing(plan), &err), PW_OK,
	    "read: the file is written");
	if (tap_int(pw_plan_read(path, &back, &stored, &nstored, &err), PW_OK,
	    "read: the file reads")) {
		tap_int((long long)nstored, 8, "read: 8 stored ops");
		tap_ok(test_same_schedule(pw_plan_schedule(back),
		    pw_plan_schedule(plan)), "read: the same orders");
		tap_near(pw_plan_metrics(back)->makespan, 10, 0,
		    "read: makespan 10");
		free(stored);
		pw_plan_free(back);
	}
	unlink(path);
	tap_int(pw_plan_read(path, &back, NULL, NULL, &err), PW_ERR_IO,
	    "read: a missing file");
	tap_ok(back == NULL && strstr(err.msg, path) != NULL,
	    "read: the message names the file (%s)", err.msg);
	pw_plan_free(plan);
}

/* Every refusal, each leaving the orders as they were. */
static void
test_refusals(void)
{
	static const struct {
		struct pw_edit e;
		const char *msg;
	} cases[] = {
		{ { .kind = (enum pw_edit_kind)7 }, "edit: unknown kind 7" },
		{ { .kind = PW_EDIT_MOVE, .op = { PW_F, 2, 0 } },
		    "move: op (kind 0, stage 2, microbatch 0) is out of range" },
		{ { .kind = PW_EDIT_REMOVE, .op = { PW_NKINDS, 0, 0 } },
		    "remove: op (kind 6, stage 0, microbatch 0) is out of "
		    "range" },
		{ { .kind = PW_EDIT_MOVE, .op = { PW_B, 0, 1 } },
		    "move: B(0,1) is not in the schedule" },
		{ { .kind = PW_EDIT_REMOVE, .op = { PW_W, 1, 0 } },
		    "remove: W(1,0) is not in the schedule" },
		{ { .kind = PW_EDIT_INSERT, .op = { PW_F, 0, 1 }, .to = 0 },
		    "insert: F(0,1) is in the schedule already (at 1)" },
		{ { .kind = PW_EDIT_MOVE, .op = { PW_F, 0, 1 }, .to = 4 },
		    "move: F(0,1): position 4 is out of range (0 to 3)" },
		{ { .kind = PW_EDIT_MOVE, .op = { PW_F, 0, 1 }, .to = -1 },
		    "move: F(0,1): position -1 is out of range (0 to 3)" },
		{ { .kind = PW_EDIT_INSERT, .op = { PW_B, 1, 0 }, .to = 5 },
		    "insert: B(1,0): position 5 is out of range (0 to 4)" },
		{ { .kind = PW_EDIT_INSERT, .op = { PW_OFFLOAD, 1, 0 } },
		    "insert: OFFLOAD(1,0) moves nothing (stage 1 offloads 0 "
		    "bytes)" },
		{ { .kind = PW_EDIT_ANCHOR, .op = { PW_F, 0, 0 } },
		    "anchor: F(0,0) is not a RELOAD" },
		{ { .kind = PW_EDIT_ANCHOR, .op = { PW_RELOAD, 0, 0 },
		    .has_anchor = true, .anchor = { { PW_OFFLOAD, 0, 1 } } },
		    "anchor: RELOAD(0,0): the anchor is not a compute op of "
		    "the problem" },
		{ { .kind = PW_EDIT_ANCHOR, .op = { PW_RELOAD, 0, 0 },
		    .has_anchor = true, .anchor = { { PW_F, 1, 0 } } },
		    "anchor: RELOAD(0,0) is on device 0, its anchor F(1,0) on "
		    "device 1" },
		{ { .kind = PW_EDIT_ANCHOR, .op = { PW_RELOAD, 1, 0 },
		    .has_anchor = true, .anchor = { { PW_F, 1, 1 } } },
		    "anchor: RELOAD(1,0) cannot exist (stage 1 offloads 0 "
		    "bytes)" },
	};
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *before, *bad;
	struct pw_plan *plan;
	struct pw_edit undo;
	struct pw_error err;
	size_t i;

	/* Stage 0 may offload; stage 1 may not. */
	p->stages[0].act = p->stages[0].offload = 1;
	pw_problem_set_link(p, 1, 1, 0, true);
	if (!tap_int(pw_plan_new(p, test_two_device_schedule(p), &plan, &err),
	    PW_OK, "refusals: the plan times"))
		return;
	before = pw_schedule_copy(pw_plan_schedule(plan));
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err.msg[0] = '\0';
		tap_int(edit(plan, cases[i].e, &undo, &err), PW_ERR_INPUT,
		    "refusals: case %zu refused", i);
		tap_str(err.msg, cases[i].msg, "refusals: case %zu's message",
		    i);
	}
	/* Orders no edits could make are refused whole, so that every
	 * edit's inverse applies. */
	bad = pw_schedule_copy(before);
	pw_schedule_set_anchor(bad, 0, 0, (struct pw_anchor){ { PW_F, 1, 0 },
	    false });
	tap_int(pw_plan_replace(plan, bad, &err), PW_ERR_INPUT,
	    "refusals: replace by orders with a foreign anchor");
	tap_str(err.msg, "replace: anchor: RELOAD(0,0) is on device 0, its "
	    "anchor F(1,0) on device 1", "refusals: replace's message");
	bad = pw_schedule_copy(before);
	bad->device[0].ops[1] = bad->device[0].ops[0];
	tap_int(pw_plan_replace(plan, bad, &err), PW_ERR_INPUT,
	    "refusals: replace by orders with an op twice");
	tap_str(err.msg, "replace: schedule: F(0,0) appears twice",
	    "refusals: replace's message");
	tap_ok(test_same_schedule(pw_plan_schedule(plan), before),
	    "refusals: nothing changed");
	pw_schedule_free(before);
	pw_plan_free(plan);

	p = test_two_device_problem();
	if (tap_int(pw_plan_new(p, test_two_device_schedule(p), &plan, &err),
	    PW_OK, "refusals: a plan without a link")) {
		tap_int(edit(plan, insert(PW_OFFLOAD, 0, 0, 0), NULL, &err),
		    PW_ERR_INPUT, "refusals: no transfers without a link");
		tap_str(err.msg, "insert: OFFLOAD(0,0): the problem has no "
		    "offload link", "refusals: the message says so");
		pw_plan_free(plan);
	}
}

/* Moves, one that deadlocks, and undo. */
static void
test_move(void)
{
	struct pw_plan *plan = two_device_plan();
	struct pw_schedule *before;
	struct pw_edit undo, redo;
	struct pw_error err;
	char *order;

	if (plan == NULL)
		return;
	before = pw_schedule_copy(pw_plan_schedule(plan));
	/* Device 1: F(1,0) BW(1,0) F(1,1) BW(1,1) -> F F BW BW. */
	tap_int(edit(plan, move(PW_F, 1, 1, 1), &undo, &err), PW_OK,
	    "move: F(1,1) to 1");
	order = test_order(&pw_plan_schedule(plan)->device[1]);
	tap_str(order, "F(1,0) F(1,1) BW(1,0) BW(1,1)", "move: the order");
	free(order);
	tap_int(undo.kind, PW_EDIT_MOVE, "move: undone by a move");
	tap_int(undo.to, 2, "move: back to 2");
	tap_int(pw_plan_status(plan, NULL), PW_OK, "move: times");
	/* F(1,1) at 2.5, BW(1,0) 3.5-5.5, BW(1,1) 5.5-7.5, BW(0,0) 6-8,
	 * BW(0,1) 8-10. */
	tap_near(start_of(plan, PW_BW, 1, 0), 3.5, 0, "move: BW(1,0) at 3.5");
	tap_near(start_of(plan, PW_BW, 0, 0), 6, 0, "move: BW(0,0) at 6");
	tap_near(pw_plan_metrics(plan)->makespan, 10, 0, "move: makespan 10");
	tap_int(edit(plan, undo, &redo, &err), PW_OK, "move: undo applies");
	tap_ok(test_same_schedule(pw_plan_schedule(plan), before),
	    "move: undo gives the orders back");
	tap_near(start_of(plan, PW_BW, 0, 0), 5, 0, "move: BW(0,0) at 5 again");

	/* BW(0,0) first on device 0 waits for what waits for F(0,0). */
	tap_int(edit(plan, move(PW_BW, 0, 0, 0), &undo, &err), PW_OK,
	    "deadlock: the move applies");
	tap_int(pw_plan_status(plan, &err), PW_ERR_DEADLOCK,
	    "deadlock: status says so");
	tap_ok(strncmp(err.msg, "deadlock: 8 ops can never start:", 32) == 0 &&
	    strstr(err.msg, "BW(0,0) waits for BW(1,0)") != NULL,
	    "deadlock: the message names the blocked ops");
	order = test_order(&pw_plan_schedule(plan)->device[0]);
	tap_str(order, "BW(0,0) F(0,0) F(0,1) BW(0,1)", "deadlock: the "
	    "orders as edited");
	free(order);
	tap_ok(test_same_schedule(pw_plan_timed(plan), before),
	    "deadlock: the timed orders are the last good ones");
	tap_near(start_of(plan, PW_BW, 0, 0), 5, 0, "deadlock: the old timing");
	tap_near(pw_plan_metrics(plan)->makespan, 10, 0,
	    "deadlock: the old metrics");
	tap_int(edit(plan, undo, NULL, &err), PW_OK, "deadlock: undo applies");
	tap_int(pw_plan_status(plan, &err), PW_OK,
	    "deadlock: undo clears the status");
	tap_ok(test_same_schedule(pw_plan_schedule(plan), before),
	    "deadlock: undo gives the orders back");
	pw_schedule_free(before);
	pw_plan_free(plan);
}

/* BW(1,0) out, B(1,0) and W(1,0) in, and every edit undone. */
static void
test_split(void)
{
	struct pw_plan *plan = two_device_plan();
	struct pw_schedule *before;
	struct pw_edit undo[3];
	struct pw_error err;
	char *order;
	int i;

	if (plan == NULL)
		return;
	before = pw_schedule_copy(pw_plan_schedule(plan));
	tap_int(edit(plan, removal(PW_BW, 1, 0), &undo[0], &err), PW_OK,
	    "split: BW(1,0) removed");
	tap_int(undo[0].kind, PW_EDIT_INSERT, "split: undone by an insert");
	tap_int(undo[0].to, 1, "split: at 1");
	tap_int(pw_plan_status(plan, &err), PW_ERR_INPUT,
	    "split: a missing backward does not time");
	tap_int(edit(plan, insert(PW_B, 1, 0, 1), &undo[1], &err), PW_OK,
	    "split: B(1,0) inserted");
	tap_int(undo[1].kind, PW_EDIT_REMOVE, "split: undone by a remove");
	tap_int(pw_plan_status(plan, NULL), PW_ERR_INPUT,
	    "split: B without W does not time");
	tap_near(start_of(plan, PW_BW, 0, 0), 5, 0,
	    "split: the old timing meanwhile");
	tap_int(edit(plan, insert(PW_W, 1, 0, 2), &undo[2], &err), PW_OK,
	    "split: W(1,0) inserted");
	tap_int(pw_plan_status(plan, &err), PW_OK, "split: times again");
	order = test_order(&pw_plan_schedule(plan)->device[1]);
	tap_str(order, "F(1,0) B(1,0) W(1,0) F(1,1) BW(1,1)", "split: order");
	free(order);
	/* B(1,0) 2.5-4, so BW(0,0) starts at 4 + 0.5. */
	tap_near(start_of(plan, PW_BW, 0, 0), 4.5, 0, "split: BW(0,0) at 4.5");
	tap_near(start_of(plan, PW_W, 1, 0), 4, 0, "split: W(1,0) at 4");
	for (i = 2; i >= 0; i--)
		tap_int(edit(plan, undo[i], NULL, &err), PW_OK,
		    "split: undo %d applies", i);
	tap_ok(test_same_schedule(pw_plan_schedule(plan), before),
	    "split: undo gives the orders back");
	tap_int(pw_plan_status(plan, NULL), PW_OK, "split: status ok");
	tap_near(start_of(plan, PW_BW, 0, 0), 5, 0, "split: BW(0,0) at 5");
	pw_schedule_free(before);
	pw_plan_free(plan);
}

/* One device offloading (0,0): the reload anchored at B(0,1) and not. */
static void
test_anchor(void)
{
	struct pw_problem *p = pw_problem_new(1, 1, 2);
	struct pw_schedule *anchored;
	struct pw_edit e = { .kind = PW_EDIT_ANCHOR, .op = { PW_RELOAD, 0, 0 },
	    .has_anchor = true, .anchor = { { PW_B, 0, 1 }, false } };
	struct pw_edit undo, redo;
	struct pw_plan *plan;
	struct pw_error err;

	p->stages[0] = (struct pw_stage){ 0, 1, 1, 1, 2, 1, 2, 0 };
	pw_problem_set_link(p, 4, 2, 0, true);
	anchored = test_offload_schedule(p, true);
	if (!tap_int(pw_plan_new(p, test_offload_schedule(p, false), &plan,
	    &err), PW_OK, "anchor: the plan times"))
		goto out;
	tap_near(start_of(plan, PW_RELOAD, 0, 0), 1.5, 0,
	    "anchor: unanchored reload at 1.5");
	tap_int(edit(plan, e, &undo, &err), PW_OK, "anchor: set");
	tap_ok(test_same_schedule(pw_plan_schedule(plan), anchored),
	    "anchor: the anchored orders");
	tap_near(start_of(plan, PW_RELOAD, 0, 0), 2, 0,
	    "anchor: the reload waits for B(0,1)'s start");
	tap_ok(undo.kind == PW_EDIT_ANCHOR && !undo.has_anchor,
	    "anchor: undone by clearing it");
	tap_int(edit(plan, undo, &redo, &err), PW_OK, "anchor: cleared");
	tap_near(start_of(plan, PW_RELOAD, 0, 0), 1.5, 0,
	    "anchor: back at 1.5");
	tap_ok(redo.has_anchor && redo.anchor.op.kind == PW_B &&
	    redo.anchor.op.mb == 1 && !redo.anchor.at_end,
	    "anchor: clearing is undone by setting it again");
	tap_ok(!pw_schedule_anchor(pw_plan_schedule(plan), 0, 0, NULL),
	    "anchor: none now");
	pw_plan_free(plan);
out:
	pw_schedule_free(anchored);
}

static void
test_copy_replace(void)
{
	struct pw_plan *plan = two_device_plan(), *copy;
	struct pw_schedule *s, *before;
	struct pw_problem *other;
	struct pw_error err;

	if (plan == NULL)
		return;
	before = pw_schedule_copy(pw_plan_schedule(plan));
	tap_int(edit(plan, move(PW_BW, 0, 0, 0), NULL, &err), PW_OK,
	    "copy: a deadlocking move");
	copy = pw_plan_copy(plan);
	tap_int(pw_plan_status(copy, &err), PW_ERR_DEADLOCK,
	    "copy: the failed re-time is copied");
	tap_ok(test_same_schedule(pw_plan_timed(copy), before),
	    "copy: and the last good orders");
	tap_near(pw_plan_metrics(copy)->makespan, 10, 0, "copy: and metrics");
	tap_int(edit(copy, move(PW_BW, 0, 0, 2), NULL, &err), PW_OK,
	    "copy: edited back");
	tap_int(pw_plan_status(copy, NULL), PW_OK, "copy: times");
	tap_int(pw_plan_status(plan, NULL), PW_ERR_DEADLOCK,
	    "copy: the original is untouched");
	tap_ok(pw_plan_schedule(plan)->device[0].ops[0].kind == PW_BW,
	    "copy: the original's orders too");

	/* Replace with good orders, then with a deadlock, then bad shape. */
	tap_int(pw_plan_replace(plan, pw_schedule_copy(before), &err), PW_OK,
	    "replace: good orders");
	tap_int(pw_plan_status(plan, NULL), PW_OK, "replace: status cleared");
	s = pw_schedule_copy(pw_plan_schedule(plan));
	s->device[0].ops[0] = test_op(PW_BW, 0, 0);
	s->device[0].ops[2] = test_op(PW_F, 0, 0);
	tap_int(pw_plan_replace(plan, s, &err), PW_ERR_DEADLOCK,
	    "replace: a deadlock");
	tap_int(pw_plan_status(plan, NULL), PW_ERR_DEADLOCK,
	    "replace: the status is its code");
	tap_ok(test_same_schedule(pw_plan_timed(plan), before),
	    "replace: the last good orders kept");
	other = pw_problem_new(3, 3, 2);
	tap_int(pw_plan_replace(plan, pw_schedule_new(other), &err),
	    PW_ERR_INPUT, "replace: another shape refused");
	tap_str(err.msg, "replace: the schedule is shaped for 3 devices, 0 "
	    "channels, 3 stages and 2 microbatches, the problem has 2, 0, 2 "
	    "and 2", "replace: the message");
	tap_int(pw_plan_status(plan, NULL), PW_ERR_DEADLOCK,
	    "replace: refused, nothing changed");
	pw_problem_free(other);
	pw_schedule_free(before);
	pw_plan_free(copy);
	pw_plan_free(plan);
}

/* Random moves on a few families' schedules, each undone at once: the
 * orders end as they began, and so does the timing. */
static void
test_random_undo(void)
{
	static const char *const families[] = { "1f1b", "zb-h1", "gpipe",
	    "1f1b-interleaved" };
	/* How many of the moves leave orders that do not time. */
	static const int nfailed[] = { 126, 133, 83, 150 };
	struct pw_stage st = { .f = 1, .b = 1.25, .w = 0.75, .act = 1,
	    .hold = 0.5, .comm = 0.125 };
	uint64_t seed = 13;
	struct pw_schedule *before;
	struct pw_problem *p;
	struct pw_plan *plan;
	struct pw_edit e, undo;
	struct pw_error err;
	const struct pw_seq *seq;
	double makespan;
	size_t f;
	int i, d, bad, failed;

	for (f = 0; f < sizeof families / sizeof families[0]; f++) {
		p = test_problem_uniform(3, f == 3 ? 2 : 1, 6, PW_PLACE_LOOP,
		    &st);
		if (!tap_int(pw_plan_family(pw_family_find(families[f]), p,
		    &plan, &err), PW_OK, "random: %s builds", families[f])) {
			pw_problem_free(p);
			continue;
		}
		before = pw_schedule_copy(pw_plan_schedule(plan));
		makespan = pw_plan_metrics(plan)->makespan;
		bad = failed = 0;
		for (i = 0; i < NMOVES; i++) {
			d = (int)(pw_splitmix64(&seed) % (uint64_t)p->devices);
			seq = &pw_plan_schedule(plan)->device[d];
			e = (struct pw_edit){ .kind = PW_EDIT_MOVE };
			e.op = seq->ops[pw_splitmix64(&seed) % (uint64_t)
			    seq->len];
			e.to = (int)(pw_splitmix64(&seed) % (uint64_t)seq->len);
			if (pw_plan_apply(plan, &e, &undo, &err) != PW_OK)
				bad++;
			failed += pw_plan_status(plan, NULL) != PW_OK;
			if (pw_plan_apply(plan, &undo, NULL, &err) != PW_OK ||
			    pw_plan_status(plan, NULL) != PW_OK ||
			    !test_same_schedule(pw_plan_schedule(plan), before))
				bad++;
		}
		tap_int(bad, 0, "random: %s: %d moves, each undone exactly",
		    families[f], NMOVES);
		tap_int(failed, nfailed[f], "random: %s: moves that do not "
		    "time", families[f]);
		tap_near(pw_plan_metrics(plan)->makespan, makespan, 0,
		    "random: %s: the makespan as it was", families[f]);
		pw_schedule_free(before);
		pw_plan_free(plan);
		pw_problem_free(p);
	}
}

/* What pw_compare_rows told its progress (the registry has fewer
 * families than this). */
#define TEST_TOLD_MAX	64
struct test_compare_told {
	size_t	done[TEST_TOLD_MAX];
	size_t	n;		/* calls, also those past TEST_TOLD_MAX */
	const struct pw_problem *problem;	/* the last call's */
	size_t	stop_at;	/* stop before this family; 0: never */
};

static bool
test_compare_told(void *arg, const struct pw_problem *p, size_t done)
{
	struct test_compare_told *told = arg;

	told->problem = p;
	if (told->n < TEST_TOLD_MAX)
		told->done[told->n] = done;
	told->n++;
	return told->stop_at == 0 || done < told->stop_at;
}

/* The comparison's rows on unit costs with every limit 6 activations:
 * 1f1b holds p = 4 at its peak, gpipe every microbatch's 8. */
static void
test_compare_rows(void)
{
	struct pw_stage st = { .f = 1, .b = 1, .w = 1, .act = 1, .hold = 0.5 };
	struct pw_problem *p = test_problem_uniform(4, 1, 8, PW_PLACE_LOOP,
	    &st);
	struct test_compare_told told;
	const struct pw_compare_row *r;
	struct pw_compare_row *rows;
	size_t i;
	int d;

	for (d = 0; d < p->devices; d++)
		p->memory[d].limit = 6;
	told = (struct test_compare_told){ .n = 0 };
	rows = pw_compare_rows(p, test_compare_told, &told);
	for (i = 0; i < pw_nfamilies; i++)
		tap_ok(rows[i].family == &pw_families[i], "rows: row %zu is %s",
		    i, pw_families[i].name);
	for (i = 0; i < told.n && i < TEST_TOLD_MAX && told.done[i] == i;
	    i++)
		continue;
	tap_ok(told.n == pw_nfamilies + 1 && i == told.n, "rows: progress "
	    "told 0 to %zu families built, in order (%zu calls)", pw_nfamilies,
	    told.n);
	tap_ok(told.problem == p, "rows: of the problem compared");
	r = &rows[1];
	if (tap_int(r->rc, PW_OK, "rows: 1f1b has a schedule")) {
		tap_ok(r->why == NULL && r->metrics != NULL, "rows: 1f1b's "
		    "metrics, no reason");
		tap_int(r->nstages, 4, "rows: 1f1b on the given 4 stages");
		tap_near(r->metrics->makespan, 33, 0, "rows: 1f1b makespan 33");
		tap_near(r->max_peak, 4, 0, "rows: 1f1b's max peak 4");
		tap_int(r->tightest, 0, "rows: 1f1b's tightest device 0");
		tap_near(r->share, 4.0 / 6, 0, "rows: at 4/6 of its limit");
		tap_int(r->nover, 0, "rows: 1f1b over no limit");
	}
	r = &rows[0];
	if (tap_int(r->rc, PW_OK, "rows: gpipe has a schedule")) {
		tap_near(r->max_peak, 8, 0, "rows: gpipe's max peak 8");
		tap_int(r->tightest, 0, "rows: gpipe's tightest device 0");
		tap_near(r->share, 8.0 / 6, 0, "rows: at 8/6 of its limit");
		tap_int(r->nover, 4, "rows: gpipe over every limit");
		tap_ok(!r->metrics->feasible, "rows: gpipe infeasible");
	}
	r = &rows[8];
	tap_str(r->family->name, "zb-v", "rows: row 8 is zb-v");
	tap_int(r->rc, PW_ERR_NOT_APPLICABLE, "rows: zb-v does not apply");
	tap_ok(r->metrics == NULL && r->why != NULL && r->why[0] != '\0' &&
	    r->tightest == -1, "rows: zb-v has a reason, no metrics (%s)",
	    r->why);
	pw_compare_rows_free(rows);

	/* Progress stops it before the fourth family: three built, the
	 * rest cancelled, and no call after the last. */
	told = (struct test_compare_told){ .stop_at = 3 };
	rows = pw_compare_rows(p, test_compare_told, &told);
	tap_ok(told.n == 4 && told.done[3] == 3, "rows: stopped by its "
	    "progress at family 3 (%zu calls)", told.n);
	for (i = 0; i < 3 && rows[i].rc != PW_ERR_CANCELLED; i++)
		continue;
	tap_int((long long)i, 3, "rows: the three before it were built");
	for (i = 3; i < pw_nfamilies && rows[i].rc == PW_ERR_CANCELLED &&
	    rows[i].family == &pw_families[i] && rows[i].metrics == NULL &&
	    rows[i].tightest == -1 && strcmp(rows[i].why, "cancelled") == 0;
	    i++)
		continue;
	tap_int((long long)i, (long long)pw_nfamilies, "rows: every one "
	    "from it on is cancelled, named, without metrics");
	tap_int(pw_compare_best(rows), 1, "rows: the best of those built "
	    "(1f1b; gpipe is over its limits)");
	pw_compare_rows_free(rows);

	/* No limits: no tightest device. */
	for (d = 0; d < p->devices; d++)
		p->memory[d].limit = INFINITY;
	rows = pw_compare_rows(p, NULL, NULL);
	tap_int(rows[1].tightest, -1, "rows: no limit, no tightest device");
	tap_int(rows[1].nover, 0, "rows: and none over");
	pw_compare_rows_free(rows);
	pw_problem_free(p);
}

/* 1f1b on 4 devices of unit costs peaks at 4, 3, 2, 1 activations: the
 * highest on device 0, the tightest where the limit is nearest. */
static void
test_tightest(void)
{
	struct pw_stage st = { .f = 1, .b = 1, .w = 1, .act = 1 };
	struct pw_problem *p = test_problem_uniform(4, 1, 8, PW_PLACE_LOOP,
	    &st);
	struct pw_plan *plan;
	struct pw_error err;
	int nover = -1;

	p->memory[3].limit = 1.5;
	p->memory[2].limit = 2;
	if (!tap_int(pw_plan_family(pw_family_find("1f1b"), p, &plan, &err),
	    PW_OK, "tightest: 1f1b builds")) {
		pw_problem_free(p);
		return;
	}
	tap_int(pw_metrics_peak_device(pw_plan_metrics(plan)), 0,
	    "tightest: the highest peak is device 0's");
	tap_int(pw_metrics_tightest(pw_plan_problem(plan),
	    pw_plan_metrics(plan), &nover), 2,
	    "tightest: device 2, at its limit, beats device 3 at 2/3");
	tap_int(nover, 0, "tightest: no device over");
	tap_int(pw_metrics_tightest(pw_plan_problem(plan),
	    pw_plan_metrics(plan), NULL), 2, "tightest: NOVER may be NULL");
	pw_plan_free(plan);
	pw_problem_free(p);
}

int
main(void)
{
	test_family();
	test_new();
	test_read();
	test_refusals();
	test_move();
	test_split();
	test_anchor();
	test_copy_replace();
	test_random_undo();
	test_compare_rows();
	test_tightest();
	return tap_done();
}
