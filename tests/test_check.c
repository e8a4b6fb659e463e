/*
 * test_check.c - the checker on hand-built timed ops.
 *
 * The base case: 2 devices, stage s on device s, 2 microbatches, split
 * backward, stage 0 offloads; every time below is worked out by hand.
 *
 *   f = 1, b = 2, w = 1; comm 0.5; act 4/3, hold 1, offload 2 (stage 0)
 *   link: d2h 2, h2d 4 bytes/s, latency 0.25, duplex, one group for both
 *         devices (OFFLOAD 0.25 + 2/2 = 1.25 s, RELOAD 0.25 + 2/4 = 0.75 s)
 *
 *   device 0   F00 [0,1] F01 [1,2] B00 [5,7] W00 [7,8] B01 [9,11] W01 [11,12]
 *   device 1   F10 [1.5,2.5] B10 [2.5,4.5] W10 [4.5,5.5]
 *              F11 [5.5,6.5] B11 [6.5,8.5] W11 [8.5,9.5]
 *   link0.d2h  OFFLOAD00 [1,2.25] OFFLOAD01 [2.25,3.5]
 *   link0.h2d  RELOAD00 [4.25,5] (anchor F01)  RELOAD01 [8.25,9] (anchor W00)
 *
 * Memory of device 0 (static 1): 5 at 0, 9 at 1 (the peak), 7 at 2.25,
 * 5 at 3.5, 7 at 4.25, 4 at 7, 3 at 8, 5 at 8.25, 2 at 11, 1 at 12; its
 * limit is 9.  Device 1 (static 0): 3 at 1.5, 1 at 4.5, and at 5.5 W10
 * frees 1 while F11 allocates 3: 3 when frees come first (4 otherwise);
 * its limit is 3.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pipewright.h"
#include "tap.h"

struct list {
	struct pw_timed_op op[32];
	size_t	n;
};

static void
add(struct list *l, const struct pw_problem *p, enum pw_kind kind, int s,
    int j, double start, double end)
{
	struct pw_timed_op *t = &l->op[l->n++];

	memset(t, 0, sizeof *t);
	t->op = (struct pw_op){ kind, s, j };
	t->device = p->stages[s].device;
	t->start = start;
	t->end = end;
	if (pw_kind_is_transfer(kind))
		t->bytes = p->stages[s].offload;
}

static struct pw_timed_op *
get(struct list *l, enum pw_kind kind, int s, int j)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->op[i].op.kind == kind && l->op[i].op.stage == s &&
		    l->op[i].op.mb == j)
			return &l->op[i];
	return NULL;
}

static void
drop(struct list *l, enum pw_kind kind, int s, int j)
{
	struct pw_timed_op *t = get(l, kind, s, j);
	size_t i = (size_t)(t - l->op);

	memmove(t, t + 1, (l->n - i - 1) * sizeof *t);
	l->n--;
}

static void
move(struct list *l, enum pw_kind kind, int s, int j, double start, double end)
{
	struct pw_timed_op *t = get(l, kind, s, j);

	t->start = start;
	t->end = end;
}

static void
anchor(struct list *l, int s, int j, enum pw_kind kind, int as, int aj)
{
	struct pw_timed_op *t = get(l, PW_RELOAD, s, j);

	t->has_anchor = true;
	t->anchor = (struct pw_anchor){ { kind, as, aj }, false };
}

/* As anchor(), at the end of the anchor op. */
static void
anchor_end(struct list *l, int s, int j, enum pw_kind kind, int as, int aj)
{
	anchor(l, s, j, kind, as, aj);
	get(l, PW_RELOAD, s, j)->anchor.at_end = true;
}

/* Moves every op of L by OFFSET seconds. */
static void
shift(struct list *l, double offset)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		l->op[i].start += offset;
		l->op[i].end += offset;
	}
}

/* Checks L and expects WANT violations; with WANT 1, NEEDLE is the whole
 * message, otherwise a part of some message. */
static void
expect(const struct pw_problem *p, const struct list *l, int want,
    const char *needle, const char *label)
{
	struct pw_violations v;
	bool found = false;
	int n, i;

	n = pw_check(p, l->op, l->n, &v);
	tap_int(n, want, "%s: %d violation(s)", label, want);
	tap_int(v.n, n, "%s: one message per violation", label);
	if (n != want)
		for (i = 0; i < v.n; i++)
			tap_diag("  %s", v.msg[i]);
	if (needle != NULL && want == 1) {
		tap_str(v.n > 0 ? v.msg[0] : NULL, needle, "%s: message", label);
	} else if (needle != NULL) {
		for (i = 0; i < v.n; i++)
			found |= strstr(v.msg[i], needle) != NULL;
		tap_ok(found, "%s: a message names %s", label, needle);
	}
	pw_violations_free(&v);
	tap_ok(v.n == 0 && v.msg == NULL, "%s: violations freed", label);
}

/* The one violation expected of a list, as data: NO_OP where the row
 * names no op. */
struct want {
	enum pw_violation_kind kind;
	struct pw_op op, other;
	int	resource;
	double	at, bytes;
};

#define NO_OP	((struct pw_op){ PW_NKINDS, -1, -1 })

/* Equal, or both NaN. */
static bool
same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

static bool
same_op(bool has, struct pw_op got, struct pw_op want)
{
	if (want.kind == PW_NKINDS)
		return !has;
	return has && got.kind == want.kind && got.stage == want.stage &&
	    got.mb == want.mb;
}

/* Checks L, expects one violation and compares its row with W field by
 * field. */
static void
expect_item(const struct pw_problem *p, const struct list *l,
    struct want w, const char *label)
{
	struct pw_violations v;
	const struct pw_violation *it;

	if (!tap_int(pw_check(p, l->op, l->n, &v), 1, "%s: one violation",
	    label)) {
		pw_violations_free(&v);
		return;
	}
	it = &v.item[0];
	tap_int(it->kind, w.kind, "%s: kind", label);
	tap_ok(same_op(it->has_op, it->op, w.op), "%s: op", label);
	tap_ok(same_op(it->has_other, it->other, w.other), "%s: other op",
	    label);
	tap_int(it->resource, w.resource, "%s: resource", label);
	tap_ok(same(it->at, w.at), "%s: at %.17g, want %.17g", label, it->at,
	    w.at);
	tap_ok(same(it->bytes, w.bytes), "%s: bytes %.17g, want %.17g", label,
	    it->bytes, w.bytes);
	pw_violations_free(&v);
	tap_ok(v.item == NULL, "%s: rows freed", label);
}

static struct pw_problem *
base_problem(void)
{
	struct pw_problem *p = pw_problem_new(2, 2, 2);
	struct pw_error err;
	int s;

	for (s = 0; s < 2; s++) {
		p->stages[s].device = s;
		p->stages[s].f = 1;
		p->stages[s].b = 2;
		p->stages[s].w = 1;
		p->stages[s].hold = 1;
	}
	p->stages[0].act = 4;
	p->stages[0].offload = 2;
	p->stages[1].act = 3;
	pw_problem_set_comm(p, 0.5);
	p->memory[0] = (struct pw_device_memory){ 1, 9 };
	p->memory[1] = (struct pw_device_memory){ 0, 3 };
	pw_problem_set_link(p, 2, 4, 0.25, true);
	p->link.ngroups = 1;
	p->link.group[1] = 0;
	if (pw_problem_validate(p, "base", &err) != PW_OK)
		tap_diag("base problem: %s", err.msg);
	return p;
}

static void
base_list(struct list *l, const struct pw_problem *p)
{
	l->n = 0;
	add(l, p, PW_F, 0, 0, 0, 1);
	add(l, p, PW_F, 0, 1, 1, 2);
	add(l, p, PW_B, 0, 0, 5, 7);
	add(l, p, PW_W, 0, 0, 7, 8);
	add(l, p, PW_B, 0, 1, 9, 11);
	add(l, p, PW_W, 0, 1, 11, 12);
	add(l, p, PW_F, 1, 0, 1.5, 2.5);
	add(l, p, PW_B, 1, 0, 2.5, 4.5);
	add(l, p, PW_W, 1, 0, 4.5, 5.5);
	add(l, p, PW_F, 1, 1, 5.5, 6.5);
	add(l, p, PW_B, 1, 1, 6.5, 8.5);
	add(l, p, PW_W, 1, 1, 8.5, 9.5);
	add(l, p, PW_OFFLOAD, 0, 0, 1, 2.25);
	add(l, p, PW_OFFLOAD, 0, 1, 2.25, 3.5);
	add(l, p, PW_RELOAD, 0, 0, 4.25, 5);
	add(l, p, PW_RELOAD, 0, 1, 8.25, 9);
	anchor(l, 0, 0, PW_F, 0, 1);
	anchor(l, 0, 1, PW_W, 0, 0);
}

static void
test_valid(const struct pw_problem *p)
{
	struct list l;

	base_list(&l, p);
	expect(p, &l, 0, NULL, "valid base schedule");
	get(&l, PW_W, 1, 1)->end = 9.5 + 1e-12;
	expect(p, &l, 0, NULL, "an end off by 1e-12 is within tolerance");
}

static void
test_presence(const struct pw_problem *p)
{
	struct list l;

	base_list(&l, p);
	drop(&l, PW_W, 0, 1);
	expect(p, &l, 1, "missing W(0,1)", "W dropped");

	base_list(&l, p);
	drop(&l, PW_RELOAD, 0, 1);
	expect(p, &l, 1, "missing RELOAD(0,1) to match OFFLOAD(0,1)",
	    "RELOAD dropped");

	base_list(&l, p);
	l.op[l.n] = l.op[0];
	l.n++;
	expect(p, &l, 1, "F(0,0) appears more than once (ops 0 and 16)",
	    "duplicate F");
}

static void
test_admit(const struct pw_problem *p)
{
	struct pw_problem *q;
	struct list l;

	base_list(&l, p);
	add(&l, p, PW_F, 1, 0, 20, 21);
	l.op[l.n - 1].op.stage = 5;
	expect(p, &l, 1, "op 16 (kind 0, stage 5, mb 0) is not an op of the "
	    "problem (2 stages, 2 microbatches)", "stage out of range");

	base_list(&l, p);
	get(&l, PW_F, 0, 0)->device = 1;
	expect(p, &l, 1, "F(0,0) is stated on device 1, but stage 0 runs on "
	    "device 0", "wrong device");

	base_list(&l, p);
	add(&l, p, PW_OFFLOAD, 1, 0, 2.5, 2.75);
	expect(p, &l, 1, "OFFLOAD(1,0): stage 1 has no offload bytes",
	    "transfer of a stage without offload");

	base_list(&l, p);
	get(&l, PW_OFFLOAD, 0, 0)->bytes = 3;
	expect(p, &l, 1, "OFFLOAD(0,0) moves 3 B, but stage 0 offloads 2 B",
	    "wrong bytes");

	base_list(&l, p);
	get(&l, PW_W, 0, 1)->end = INFINITY;
	expect(p, &l, 1, "W(0,1) has a non-finite time (start 11, end inf)",
	    "infinite end");

	base_list(&l, p);
	get(&l, PW_F, 1, 0)->has_anchor = true;
	expect(p, &l, 1, "F(1,0) names an anchor, but only a RELOAD may",
	    "anchor on F");

	q = pw_problem_copy(p);
	q->link.present = false;
	base_list(&l, q);
	expect(q, &l, 4, "OFFLOAD(0,0): the problem has no offload link",
	    "transfers without a link");
	pw_problem_free(q);
}

static void
test_durations(const struct pw_problem *p)
{
	struct list l;

	base_list(&l, p);
	get(&l, PW_W, 1, 1)->end = 9.75;
	expect(p, &l, 1, "W(1,1) lasts 1.25 s (from 8.5 s to 9.75 s), but "
	    "should last 1 s", "W too long");

	base_list(&l, p);
	get(&l, PW_RELOAD, 0, 0)->end = 4.75;
	expect(p, &l, 1, "RELOAD(0,0) lasts 0.5 s (from 4.25 s to 4.75 s), but "
	    "should last 0.75 s", "RELOAD too short");
}

static void
test_dependencies(const struct pw_problem *p)
{
	struct list l;

	base_list(&l, p);
	move(&l, PW_OFFLOAD, 0, 0, 0.5, 1.75);
	expect(p, &l, 1, "OFFLOAD(0,0) starts at 0.5 s before F(0,0) ends at 1 "
	    "s",
	    "OFFLOAD before its F ends");

	base_list(&l, p);
	move(&l, PW_RELOAD, 0, 1, 3.25, 4);
	get(&l, PW_RELOAD, 0, 1)->has_anchor = false;
	expect(p, &l, 1, "RELOAD(0,1) starts at 3.25 s before OFFLOAD(0,1) "
	    "ends at 3.5 s", "RELOAD before its OFFLOAD ends");

	base_list(&l, p);
	move(&l, PW_RELOAD, 0, 1, 8.5, 9.25);
	expect(p, &l, 1, "B(0,1) starts at 9 s before RELOAD(0,1) ends at 9.25 "
	    "s",
	    "B before its RELOAD ends");

	base_list(&l, p);
	move(&l, PW_F, 1, 0, 1, 2);
	expect(p, &l, 1, "F(1,0) starts at 1 s before F(0,0) ends at 1 s plus "
	    "comm 0.5 s", "F ignoring comm");

	base_list(&l, p);
	move(&l, PW_RELOAD, 0, 1, 8, 8.75);
	move(&l, PW_B, 0, 1, 8.75, 10.75);
	expect(p, &l, 1, "B(0,1) starts at 8.75 s before B(1,1) ends at 8.5 s "
	    "plus comm 0.5 s", "B ignoring comm");
}

/* One device, two stages: the hop between them costs nothing. */
static void
test_same_device_hop(void)
{
	struct pw_problem *p = pw_problem_new(1, 2, 1);
	struct list l = { .n = 0 };
	int s;

	for (s = 0; s < 2; s++) {
		p->stages[s].f = 1;
		p->stages[s].b = 1;
		p->stages[s].act = 1;
	}
	pw_problem_set_comm(p, 0.5);
	add(&l, p, PW_F, 0, 0, 0, 1);
	add(&l, p, PW_F, 1, 0, 1, 2);
	add(&l, p, PW_BW, 1, 0, 2, 3);
	add(&l, p, PW_BW, 0, 0, 3, 4);
	expect(p, &l, 0, NULL, "no comm between stages on one device");
	pw_problem_free(p);
}

static void
test_resources(const struct pw_problem *p)
{
	struct list l;

	base_list(&l, p);
	move(&l, PW_F, 0, 1, 0.5, 1.5);
	expect(p, &l, 1, "device 0 runs F(0,0) [0, 1] s and F(0,1) [0.5, 1.5] "
	    "s at once", "device overlap");

	base_list(&l, p);
	move(&l, PW_OFFLOAD, 0, 1, 2, 3.25);
	expect(p, &l, 1, "link0.d2h runs OFFLOAD(0,0) [1, 2.25] s and "
	    "OFFLOAD(0,1) [2, 3.25] s at once", "channel overlap");
}

/* Two devices, each stage offloads through one link: F [0,1] and [1,2],
 * OFFLOAD00 [1,2], OFFLOAD10 [2,3], RELOAD10 [3,4], BW10 [4,5],
 * RELOAD00 [4,5], BW00 [5,6]; valid whatever the groups and duplex. */
static struct pw_problem *
mini_problem(bool duplex, bool shared)
{
	struct pw_problem *p = pw_problem_new(2, 2, 1);
	int s;

	for (s = 0; s < 2; s++) {
		p->stages[s] = (struct pw_stage){ .device = s, .f = 1, .b = 1,
		    .act = 1, .offload = 1 };
	}
	pw_problem_set_link(p, 1, 1, 0, duplex);
	if (shared) {
		p->link.ngroups = 1;
		p->link.group[1] = 0;
	}
	return p;
}

static void
mini_list(struct list *l, const struct pw_problem *p)
{
	l->n = 0;
	add(l, p, PW_F, 0, 0, 0, 1);
	add(l, p, PW_F, 1, 0, 1, 2);
	add(l, p, PW_OFFLOAD, 0, 0, 1, 2);
	add(l, p, PW_OFFLOAD, 1, 0, 2, 3);
	add(l, p, PW_RELOAD, 1, 0, 3, 4);
	add(l, p, PW_BW, 1, 0, 4, 5);
	add(l, p, PW_RELOAD, 0, 0, 4, 5);
	add(l, p, PW_BW, 0, 0, 5, 6);
}

static void
test_channels(void)
{
	static const char *const what[] = { "half duplex, own groups",
	    "half duplex, shared group", "duplex, own groups",
	    "duplex, shared group" };
	/* The overlap when OFFLOAD00 moves to [1.5,2.5] and when RELOAD00
	 * moves to [2,3], per configuration; NULL where there is none. */
	static const char *const offload_clash[] = { NULL,
	    "link0 runs OFFLOAD(0,0) [1.5, 2.5] s and OFFLOAD(1,0) [2, 3] s at "
	    "once",
	    NULL, "link0.d2h runs OFFLOAD(0,0) [1.5, 2.5] s and OFFLOAD(1,0) "
	    "[2, 3] s at once" };
	static const char *const reload_clash[] = { NULL,
	    "link0 runs OFFLOAD(1,0) [2, 3] s and RELOAD(0,0) [2, 3] s at once",
	    NULL, NULL };
	struct pw_problem *p;
	struct list l;
	char label[128];
	int k;

	for (k = 0; k < 4; k++) {
		p = mini_problem(k >= 2, k % 2 == 1);
		mini_list(&l, p);
		snprintf(label, sizeof label, "%s: valid", what[k]);
		expect(p, &l, 0, NULL, label);

		move(&l, PW_OFFLOAD, 0, 0, 1.5, 2.5);
		snprintf(label, sizeof label, "%s: offloads of two devices",
		    what[k]);
		expect(p, &l, offload_clash[k] != NULL, offload_clash[k], label);

		mini_list(&l, p);
		move(&l, PW_RELOAD, 0, 0, 2, 3);
		snprintf(label, sizeof label, "%s: reload beside an offload",
		    what[k]);
		expect(p, &l, reload_clash[k] != NULL, reload_clash[k], label);
		pw_problem_free(p);
	}
}

static void
test_backward_forms(void)
{
	struct pw_problem *p = mini_problem(true, false);
	struct list l;

	mini_list(&l, p);
	add(&l, p, PW_W, 0, 0, 6, 6);
	expect(p, &l, 1, "BW(0,0) and W(0,0) both present: a backward is fused "
	    "or split, not both", "BW mixed with W");

	mini_list(&l, p);
	drop(&l, PW_BW, 1, 0);
	expect(p, &l, 1, "missing BW(1,0) (or B and W)", "backward missing");
	pw_problem_free(p);
}

static void
test_anchors(const struct pw_problem *p)
{
	struct list l;

	base_list(&l, p);
	anchor(&l, 0, 0, PW_B, 0, 0);
	expect(p, &l, 1, "RELOAD(0,0) starts at 4.25 s before its anchor "
	    "B(0,0) starts at 5 s", "reload before its anchor");

	base_list(&l, p);
	anchor_end(&l, 0, 1, PW_W, 0, 0);
	expect(p, &l, 0, NULL, "a reload after its anchor's end");
	get(&l, PW_RELOAD, 0, 1)->start = 7.9;
	get(&l, PW_RELOAD, 0, 1)->end = 8.65;
	expect(p, &l, 1, "RELOAD(0,1) starts at 7.9 s before its anchor W(0,0) "
	    "ends at 8 s", "reload before its anchor's end");

	base_list(&l, p);
	anchor(&l, 0, 0, PW_F, 1, 0);
	expect(p, &l, 1, "RELOAD(0,0) is anchored at F(1,0) on device 1, not "
	    "on its own device 0", "anchor on another device");

	base_list(&l, p);
	anchor(&l, 0, 0, PW_OFFLOAD, 0, 0);
	expect(p, &l, 1, "RELOAD(0,0) is anchored at OFFLOAD(0,0), which is no "
	    "compute op", "anchor not compute");

	base_list(&l, p);
	anchor(&l, 0, 1, PW_W, 0, 7);
	expect(p, &l, 1, "RELOAD(0,1) is anchored at (kind 2, stage 0, mb 7), "
	    "which is no op of the problem", "anchor outside the problem");

	base_list(&l, p);
	drop(&l, PW_W, 0, 0);
	drop(&l, PW_RELOAD, 0, 1);
	add(&l, p, PW_RELOAD, 0, 1, 8.25, 9);
	anchor(&l, 0, 1, PW_W, 0, 0);
	expect(p, &l, 2, "RELOAD(0,1) is anchored at W(0,0), which is not "
	    "listed", "anchor not listed");
}

static void
test_memory(const struct pw_problem *p)
{
	struct pw_problem *q = pw_problem_copy(p);
	struct list l;

	base_list(&l, q);
	q->memory[0].limit = 8.5;
	expect(q, &l, 1, "device 0 holds 9 B at 1 s (at F(0,1)), over its "
	    "limit 8.5 B", "memory over the limit");

	q->memory[0].limit = 9 + 1e-6;
	q->memory[1].limit = 3 - 1e-6;
	expect(q, &l, 1, "device 1 holds 3 B at 1.5 s (at F(1,0)), over its "
	    "limit 2.999999 B", "limit just below the peak");

	q->memory[1].limit = 3;
	q->memory[1].static_bytes = 3.5;
	expect(q, &l, 1, "device 1: static memory 3.5 B exceeds its limit 3 B",
	    "static over the limit");
	pw_problem_free(q);
}

/*
 * The base case at 1e12 s, where each of its times is exact: it stays
 * valid, and a zero-length op, an overlap and memory over a limit are
 * still caught (a tolerance of 1e-9 of the clock was 1000 s there).  At
 * 1e6/3 s, where the times round, it stays valid, and so it does with
 * W(1,1) at 1e15 s, which must not loosen the checks of the rest.  The
 * fused mini case at 1e12 s catches a zero-length F and BW.
 */
static void
test_far(const struct pw_problem *p)
{
	struct pw_problem *q = pw_problem_copy(p);
	struct list l;

	base_list(&l, p);
	shift(&l, 1e12);
	expect(p, &l, 0, NULL, "the base case at 1e12 s");
	get(&l, PW_F, 0, 0)->end = 1e12;
	expect(p, &l, 1, "F(0,0) lasts 0 s (from 1000000000000 s to "
	    "1000000000000 s), but should last 1 s", "a zero-length F at 1e12 s");

	base_list(&l, p);
	move(&l, PW_F, 0, 1, 0.5, 1.5);
	shift(&l, 1e12);
	expect(p, &l, 1, "device 0 runs F(0,0) [1000000000000, 1000000000001] "
	    "s and F(0,1) [1000000000000.5, 1000000000001.5] s at once",
	    "an overlap at 1e12 s");

	q->memory[0].limit = 8.5;
	base_list(&l, q);
	shift(&l, 1e12);
	expect(q, &l, 1, "device 0 holds 9 B at 1000000000001 s (at F(0,1)), "
	    "over its limit 8.5 B", "memory over the limit at 1e12 s");

	base_list(&l, p);
	shift(&l, 1e6 / 3);
	expect(p, &l, 0, NULL, "the base case at 1e6/3 s, rounded");

	/* One op far away lengthens the makespan, not the tolerance. */
	base_list(&l, p);
	move(&l, PW_W, 1, 1, 1e15, 1e15 + 1);
	expect(p, &l, 0, NULL, "W(1,1) at 1e15 s");
	move(&l, PW_F, 0, 0, 0, 0);
	expect(p, &l, 1, "F(0,0) lasts 0 s (from 0 s to 0 s), but should last "
	    "1 s",
	    "and a zero-length F near 0");
	pw_problem_free(q);

	/* The fused mini case, with F(0,0) and BW(0,0) of zero length. */
	q = mini_problem(true, false);
	mini_list(&l, q);
	shift(&l, 1e12);
	expect(q, &l, 0, NULL, "the mini case at 1e12 s");
	get(&l, PW_F, 0, 0)->end = 1e12;
	get(&l, PW_BW, 0, 0)->end = get(&l, PW_BW, 0, 0)->start;
	expect(q, &l, 2, "BW(0,0) lasts 0 s (from 1000000000005 s "
	    "to 1000000000005 s), but should last 1 s", "zero-length F and BW at "
	    "1e12 s");
	pw_problem_free(q);
}

/* Times, durations and sums no double holds: each is one line, and the
 * op is otherwise skipped. */
static void
test_nonfinite(const struct pw_problem *p)
{
	/* An op of the base case as stated instead, and the one message. */
	static const struct {
		enum pw_kind kind;
		int	s, j;
		double	start, end, bytes;
		const char *msg;
	} bad[] = {
		{ PW_F, 0, 0, 1e308, -1e308, 0, "F(0,0) has a non-finite "
		    "duration (start 1e+308, end -1e+308)" },
		{ PW_W, 0, 1, NAN, 12, 0, "W(0,1) has a non-finite time (start "
		    "nan, end 12)" },
		{ PW_OFFLOAD, 0, 1, 2.25, 3.5, NAN, "OFFLOAD(0,1) moves nan B, "
	    "but stage 0 offloads 2 B" },
	};
	struct pw_timed_op *t;
	struct pw_problem *q;
	struct list l;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		base_list(&l, p);
		t = get(&l, bad[i].kind, bad[i].s, bad[i].j);
		t->start = bad[i].start;
		t->end = bad[i].end;
		t->bytes = bad[i].bytes;
		expect(p, &l, 1, bad[i].msg, bad[i].msg);
	}

	/* 2 bytes at 1e-308 bytes/s: no OFFLOAD lasts that long. */
	q = pw_problem_copy(p);
	q->link.d2h = 1e-308;
	base_list(&l, q);
	expect(q, &l, 2, "OFFLOAD(0,0) lasts 1.25 s (from 1 s to 2.25 s), but "
	    "should last inf s", "an OFFLOAD that should last longer than a double "
	    "holds");
	pw_problem_free(q);
}

/* Zero-length F at 1e308 and -1e308: the gap between them overflows, and
 * its sign still says F(1,0) starts first. */
static void
test_overflowing_gap(void)
{
	struct pw_problem *p = mini_problem(true, false);
	struct list l;

	p->stages[0].f = 0;
	p->stages[1].f = 0;
	mini_list(&l, p);
	move(&l, PW_F, 0, 0, 1e308, 1e308);
	move(&l, PW_F, 1, 0, -1e308, -1e308);
	drop(&l, PW_OFFLOAD, 0, 0);
	drop(&l, PW_RELOAD, 0, 0);
	expect(p, &l, 1, "F(1,0) starts at -1e+308 s before F(0,0) ends at "
	    "1e+308 s", "a gap that overflows");
	pw_problem_free(p);
}

/* One device, fused backward, act 2: BW00 frees 2 at 2 as F01 allocates
 * 2, so a limit of 2 holds only when frees come first.  With act 1e308
 * and both F first, the level at F01 overflows, which no limit allows,
 * not even none. */
static void
test_frees_first(void)
{
	struct pw_problem *p = pw_problem_new(1, 1, 2);
	struct list l = { .n = 0 };

	p->stages[0] = (struct pw_stage){ .f = 1, .b = 1, .act = 2 };
	p->memory[0].limit = 2;
	add(&l, p, PW_F, 0, 0, 0, 1);
	add(&l, p, PW_BW, 0, 0, 1, 2);
	add(&l, p, PW_F, 0, 1, 2, 3);
	add(&l, p, PW_BW, 0, 1, 3, 4);
	expect(p, &l, 0, NULL, "frees before allocations at an equal instant");
	/* The base case's device 1 has the same tie at 5.5. */
	p->memory[0].limit = 1.5;
	expect(p, &l, 1, "device 0 holds 2 B at 0 s (at F(0,0)), over its "
	    "limit 1.5 B", "and the limit binds");
	p->stages[0].act = 1e308;
	p->memory[0].limit = INFINITY;
	move(&l, PW_F, 0, 1, 1, 2);
	move(&l, PW_BW, 0, 0, 2, 3);
	expect(p, &l, 1, "device 0: its memory overflows at 1 s (at F(0,1))",
	    "a memory sum that overflows");
	pw_problem_free(p);
}

/* One device, act 2 fully offloaded between F00 and F01:
 * F00 [0,1] 2, OFFLOAD00 [1,2] frees 2 as F01 [2,3] allocates 2,
 * RELOAD00 [3,4] brings it back to 4, BW00 [4,5] 2, BW01 [5,6] 0. */
static void
test_transfer_memory(void)
{
	struct pw_problem *p = pw_problem_new(1, 1, 2);
	struct list l = { .n = 0 };

	p->stages[0] = (struct pw_stage){ .f = 1, .b = 1, .act = 2,
	    .offload = 2 };
	pw_problem_set_link(p, 2, 2, 0, true);
	p->memory[0].limit = 4;
	add(&l, p, PW_F, 0, 0, 0, 1);
	add(&l, p, PW_OFFLOAD, 0, 0, 1, 2);
	add(&l, p, PW_F, 0, 1, 2, 3);
	add(&l, p, PW_RELOAD, 0, 0, 3, 4);
	add(&l, p, PW_BW, 0, 0, 4, 5);
	add(&l, p, PW_BW, 0, 1, 5, 6);
	expect(p, &l, 0, NULL, "offload frees, reload allocates: peak 4");
	p->memory[0].limit = 3;
	expect(p, &l, 1, "device 0 holds 4 B at 3 s (at RELOAD(0,0)), over its "
	    "limit 3 B", "the reload breaks a limit of 3");
	pw_problem_free(p);
}

#define OP(k, s, j)	((struct pw_op){ PW_ ## k, s, j })

/* Each kind of violation as data, with every field the checker sets. */
static void
test_items(const struct pw_problem *p)
{
	struct pw_problem *q;
	struct list l;

	base_list(&l, p);
	get(&l, PW_F, 0, 0)->device = 1;
	expect_item(p, &l, (struct want){ PW_VIOL_SHAPE, OP(F, 0, 0), NO_OP,
	    1, NAN, NAN }, "row of an op on a wrong device");

	base_list(&l, p);
	get(&l, PW_F, 0, 0)->device = 7;
	expect_item(p, &l, (struct want){ PW_VIOL_SHAPE, OP(F, 0, 0), NO_OP,
	    -1, NAN, NAN }, "row of an op on no device");

	base_list(&l, p);
	drop(&l, PW_RELOAD, 0, 1);
	expect_item(p, &l, (struct want){ PW_VIOL_SHAPE, OP(RELOAD, 0, 1),
	    OP(OFFLOAD, 0, 1), -1, NAN, NAN }, "row of a missing RELOAD");

	base_list(&l, p);
	add(&l, p, PW_F, 1, 0, 20, 21);
	l.op[l.n - 1].op.stage = 5;
	expect_item(p, &l, (struct want){ PW_VIOL_SHAPE, NO_OP, NO_OP, -1,
	    NAN, NAN }, "row of an op outside the problem");

	base_list(&l, p);
	get(&l, PW_W, 1, 1)->end = 9.75;
	expect_item(p, &l, (struct want){ PW_VIOL_DURATION, OP(W, 1, 1),
	    NO_OP, -1, 8.5, NAN }, "row of a W too long");

	base_list(&l, p);
	move(&l, PW_F, 1, 0, 1, 2);
	expect_item(p, &l, (struct want){ PW_VIOL_DEPENDENCY, OP(F, 1, 0),
	    OP(F, 0, 0), -1, 1, NAN }, "row of an F ignoring comm");

	base_list(&l, p);
	move(&l, PW_RELOAD, 0, 1, 8, 8.75);
	move(&l, PW_B, 0, 1, 8.75, 10.75);
	expect_item(p, &l, (struct want){ PW_VIOL_DEPENDENCY, OP(B, 0, 1),
	    OP(B, 1, 1), -1, 8.75, NAN }, "row of a B ignoring comm");

	base_list(&l, p);
	anchor(&l, 0, 0, PW_B, 0, 0);
	expect_item(p, &l, (struct want){ PW_VIOL_ANCHOR, OP(RELOAD, 0, 0),
	    OP(B, 0, 0), -1, 4.25, NAN }, "row of a reload before its anchor");

	base_list(&l, p);
	anchor(&l, 0, 0, PW_F, 1, 0);
	expect_item(p, &l, (struct want){ PW_VIOL_ANCHOR, OP(RELOAD, 0, 0),
	    OP(F, 1, 0), -1, NAN, NAN }, "row of an anchor on another device");

	base_list(&l, p);
	anchor(&l, 0, 1, PW_W, 0, 7);
	expect_item(p, &l, (struct want){ PW_VIOL_ANCHOR, OP(RELOAD, 0, 1),
	    NO_OP, -1, NAN, NAN }, "row of an anchor outside the problem");

	base_list(&l, p);
	get(&l, PW_F, 1, 0)->has_anchor = true;
	expect_item(p, &l, (struct want){ PW_VIOL_ANCHOR, OP(F, 1, 0), NO_OP,
	    -1, NAN, NAN }, "row of an anchor on an F");

	base_list(&l, p);
	move(&l, PW_F, 0, 1, 0.5, 1.5);
	expect_item(p, &l, (struct want){ PW_VIOL_OVERLAP, OP(F, 0, 1),
	    OP(F, 0, 0), 0, 0.5, NAN }, "row of a device overlap");

	/* Channel 0 (link0.d2h) is resource 2, after the two devices. */
	base_list(&l, p);
	move(&l, PW_OFFLOAD, 0, 1, 2, 3.25);
	expect_item(p, &l, (struct want){ PW_VIOL_OVERLAP, OP(OFFLOAD, 0, 1),
	    OP(OFFLOAD, 0, 0), 2, 2, NAN }, "row of a channel overlap");

	q = pw_problem_copy(p);
	base_list(&l, q);
	q->memory[0].limit = 8.5;
	expect_item(q, &l, (struct want){ PW_VIOL_MEMORY, OP(F, 0, 1), NO_OP,
	    0, 1, 0.5 }, "row of memory over the limit");

	q->memory[0].limit = 9;
	q->memory[1].static_bytes = 3.25;
	expect_item(q, &l, (struct want){ PW_VIOL_MEMORY, NO_OP, NO_OP, 1,
	    NAN, 0.25 }, "row of static memory over the limit");
	pw_problem_free(q);

	q = pw_problem_new(1, 1, 2);
	q->stages[0] = (struct pw_stage){ .f = 1, .b = 1, .act = 1e308 };
	q->memory[0].limit = INFINITY;
	l.n = 0;
	add(&l, q, PW_F, 0, 0, 0, 1);
	add(&l, q, PW_F, 0, 1, 1, 2);
	add(&l, q, PW_BW, 0, 0, 2, 3);
	add(&l, q, PW_BW, 0, 1, 3, 4);
	expect_item(q, &l, (struct want){ PW_VIOL_MEMORY, OP(F, 0, 1), NO_OP,
	    0, 1, INFINITY }, "row of a memory level that overflows");
	pw_problem_free(q);
}

/* A schedule file's pins: one that holds, none reported; one broken,
 * reported with both ops and the instant; one naming BW of a backward
 * listed split, as its B. */
static void
test_pins(const struct pw_problem *p)
{
	struct pw_pin held = { OP(F, 0, 0), OP(F, 0, 1) };
	struct pw_pin broken = { OP(W, 0, 1), OP(B, 0, 0) };
	struct pw_pin split = { OP(F, 1, 1), OP(BW, 1, 0) };
	struct pw_violations v;
	struct list l;

	base_list(&l, p);
	tap_int(pw_check_file(p, l.op, l.n, false, &held, 1, &v), 0,
	    "pins: one that holds is no violation");
	pw_violations_free(&v);
	if (tap_int(pw_check_file(p, l.op, l.n, false, &broken, 1, &v), 1,
	    "pins: one broken is one violation")) {
		tap_ok(v.item[0].kind == PW_VIOL_PIN && v.item[0].has_op &&
		    v.item[0].op.kind == PW_W && v.item[0].op.mb == 1 &&
		    v.item[0].has_other && v.item[0].other.kind == PW_B &&
		    v.item[0].at == 11, "pins: its row names both ops and "
		    "where the before starts");
		tap_str(v.msg[0], "the pin W(0,1) before B(0,0) is broken: "
		    "W(0,1) starts at 11 s, after B(0,0) at 5 s", "pins: its "
		    "line");
	}
	pw_violations_free(&v);
	tap_int(pw_check(p, l.op, l.n, &v), 0, "pins: pw_check knows none");
	pw_violations_free(&v);
	/* BW(1,0) of the split list is B(1,0), at 2.5: F(1,1), at 5.5, is
	 * after it. */
	if (tap_int(pw_check_file(p, l.op, l.n, false, &split, 1, &v), 1,
	    "pins: BW of a split backward is its B"))
		tap_ok(v.item[0].other.kind == PW_B, "pins: named as listed");
	pw_violations_free(&v);
}

int
main(void)
{
	struct pw_problem *p = base_problem();

	test_valid(p);
	test_presence(p);
	test_admit(p);
	test_durations(p);
	test_dependencies(p);
	test_same_device_hop();
	test_pins(p);
	test_resources(p);
	test_channels();
	test_backward_forms();
	test_anchors(p);
	test_memory(p);
	test_frees_first();
	test_transfer_memory();
	test_far(p);
	test_nonfinite(p);
	test_overflowing_gap();
	test_items(p);
	pw_problem_free(p);
	return tap_done();
}
