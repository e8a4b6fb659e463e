/* test_problem.c - placements, validation, op indexing and channels. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "tap.h"

static struct pw_problem *
uniform(int devices, int stages, int mb)
{
	struct pw_problem *p = pw_problem_new(devices, stages, mb);
	int s;

	for (s = 0; s < stages; s++)
		p->stages[s] = (struct pw_stage){ 0, 1, 2, 1, 4, 2, 4, 0 };
	return p;
}

static void
test_placement(void)
{
	struct pw_problem *p = uniform(4, 8, 8);
	struct pw_error err;
	char counts[96];

	tap_int(pw_problem_place_loop(p, &err), PW_OK, "loop placement");
	tap_int(p->stages[5].device, 1, "stage 5 on device 1");
	tap_ok(pw_problem_is_loop(p) && !pw_problem_is_v(p), "loop recognised");
	tap_int(pw_problem_chunks(p, 2), 2, "two chunks per device");
	tap_int(pw_problem_place_v(p, &err), PW_OK, "V placement");
	tap_int(p->stages[5].device, 2, "stage 5 on device 2p-1-5 = 2");
	tap_int(p->stages[3].device, 3, "stage 3 on device 3");
	tap_ok(pw_problem_is_v(p) && !pw_problem_is_loop(p), "V recognised");
	pw_problem_set_comm(p, 0.25);
	tap_near(pw_problem_hop(p, 3), 0, 0, "no hop within a device (stages 3 and 4)");
	tap_near(pw_problem_hop(p, 4), 0.25, 0, "hop between devices");
	pw_problem_free(p);

	p = uniform(1, 1, 1);
	tap_str(pw_problem_counts(p, counts, sizeof counts), "1 device, "
	    "1 stage, 1 microbatch", "the counts of one: singular");
	pw_problem_free(p);
	p = uniform(3, 4, 2);
	tap_str(pw_problem_counts(p, counts, sizeof counts), "3 devices, "
	    "4 stages, 2 microbatches", "the counts: plural");
	tap_int(pw_problem_place_v(p, &err), PW_ERR_INPUT, "V needs 2p stages");
	tap_str(err.msg, "V placement needs 2 stages per device (4 stages on 3 devices)", "V refusal");
	tap_int(pw_problem_place_loop(p, &err), PW_ERR_INPUT, "loop needs a multiple");
	pw_problem_free(p);
}

static void
test_validate(void)
{
	struct pw_problem *p = uniform(2, 2, 4);
	struct pw_error err;

	pw_problem_place_loop(p, &err);
	p->memory[1].static_bytes = 10;
	p->memory[1].limit = 14;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_OK, "valid problem");
	p->memory[1].limit = 13;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT, "limit below one microbatch");
	tap_str(err.msg, "x.json: memory[1].limit: 13 B is below what one microbatch "
	    "needs on device 1 (static 10 B + act of stage 1 4 B)", "limit message");
	p->memory[1].limit = INFINITY;
	p->stages[1].f = -1;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT, "negative time");
	tap_str(err.msg, "x.json: stages[1].f: must be a non-negative number (got -1)",
	    "negative message");
	p->stages[1].f = 1;
	p->stages[0].hold = 5;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT, "hold above act");
	tap_str(err.msg, "x.json: stages[0].hold: 5 exceeds act 4", "hold message");
	p->stages[0].hold = 2;
	p->stages[0].device = 2;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT, "device out of range");
	tap_str(err.msg, "x.json: stages[0].device: device 2 does not exist (devices = 2)",
	    "device message");
	p->stages[0].device = 1;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT, "idle device");
	tap_str(err.msg, "x.json: devices: device 0 has no stage", "idle device message");
	p->stages[0].device = 0;
	p->stages[0].w = NAN;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT, "NaN time");
	pw_problem_free(p);
}

static void
test_ops(void)
{
	struct pw_problem *p = uniform(2, 4, 3);
	struct pw_error err;
	struct pw_op op = { PW_RELOAD, 3, 2 }, back;
	enum pw_kind kind;
	char buf[64];
	size_t i;
	bool roundtrip = true;

	pw_problem_place_loop(p, &err);
	tap_int((long long)pw_op_universe(p), 4 * 3 * 6, "universe");
	tap_int((long long)pw_op_index(p, op), ((3 * 3) + 2) * 6 + 5, "index");
	for (i = 0; i < pw_op_universe(p); i++) {
		back = pw_op_from_index(p, i);
		roundtrip = roundtrip && pw_op_index(p, back) == i;
	}
	tap_ok(roundtrip, "index round trip");
	tap_ok(pw_op_same(op, (struct pw_op){ PW_RELOAD, 3, 2 }) &&
	    !pw_op_same(op, (struct pw_op){ PW_OFFLOAD, 3, 2 }) &&
	    !pw_op_same(op, (struct pw_op){ PW_RELOAD, 2, 2 }) &&
	    !pw_op_same(op, (struct pw_op){ PW_RELOAD, 3, 1 }), "one op: "
	    "kind, stage and microbatch alike");
	{
		struct pw_seq seq = { 0 };

		pw_seq_push(&seq, (struct pw_op){ PW_F, 0, 0 });
		pw_seq_push(&seq, (struct pw_op){ PW_F, 0, 1 });
		pw_seq_push(&seq, (struct pw_op){ PW_B, 0, 0 });
		tap_ok(pw_seq_find(&seq, (struct pw_op){ PW_B, 0, 0 }) == 2 &&
		    pw_seq_find(&seq, (struct pw_op){ PW_F, 0, 1 }) == 1 &&
		    pw_seq_find(&seq, (struct pw_op){ PW_W, 0, 0 }) == -1,
		    "an op's place in an order, -1 when absent");
		free(seq.ops);
	}
	tap_str(pw_op_name(buf, sizeof buf, op), "RELOAD(3,2)", "op name");
	tap_int(pw_kind_parse("BW", &kind), PW_OK, "parse BW");
	tap_int(kind, PW_BW, "parsed BW");
	tap_int(pw_kind_parse("bw", &kind), PW_ERR_INPUT, "kinds are upper case");

	op.kind = PW_BW;
	tap_near(pw_op_duration(p, op), 3, 0, "BW takes b + w");
	pw_problem_set_link(p, 2, 4, 0.5, true);
	op.kind = PW_OFFLOAD;
	tap_near(pw_op_duration(p, op), 2.5, 0, "offload: latency + bytes/d2h");
	op.kind = PW_RELOAD;
	tap_near(pw_op_duration(p, op), 1.5, 0, "reload: latency + bytes/h2d");

	p->link.ngroups = 1;
	p->link.group[1] = 0;
	tap_int(pw_problem_nchannels(p), 2, "one group, duplex: two channels");
	tap_int(pw_problem_channel(p, 1, PW_RELOAD), 1, "reload on the h2d channel");
	tap_str(pw_channel_name(p, 1, buf, sizeof buf), "link0.h2d", "channel name");
	p->link.duplex = false;
	tap_int(pw_problem_channel(p, 1, PW_RELOAD), 0, "half duplex shares one channel");
	tap_str(pw_channel_name(p, 0, buf, sizeof buf), "link0", "half duplex name");
	pw_problem_free(p);
}

static void
test_copy(void)
{
	struct pw_problem *p = uniform(2, 2, 2), *q;

	p->name = pw_xstrdup("copy me");
	pw_problem_set_link(p, 1, 1, 0, false);
	q = pw_problem_copy(p);
	q->link.group[0] = 1;
	q->stages[0].f = 9;
	tap_str(q->name, "copy me", "name copied");
	tap_int(p->link.group[0], 0, "copy is deep (groups)");
	tap_near(p->stages[0].f, 1, 0, "copy is deep (stages)");
	pw_problem_free(p);
	pw_problem_free(q);
}

/* Finite values whose sums are not: each names its field (issue 12). */
static void
test_validate_sums(void)
{
	static const struct {
		const char *what;
		size_t	off;		/* a double of stage 1, or (size_t)-1 */
		double	value;
		const char *msg;
	} c[] = {
		{ "f near DBL_MAX", offsetof(struct pw_stage, f), 1e308,
		    "x.json: stages[1].f: 1e+308 makes the time of every op "
		    "in series, once per device, not finite (4 microbatches, "
		    "2 devices)" },
		{ "comm near DBL_MAX", offsetof(struct pw_stage, comm), 1e308,
		    "x.json: stages[0].comm: 1e+308 makes the time of every op "
		    "in series, once per device, not finite (4 microbatches, "
		    "2 devices)" },
		{ "act near DBL_MAX", offsetof(struct pw_stage, act), 1e308,
		    "x.json: memory[1]: static 0 plus every activation of "
		    "device 1 held at once (4 microbatches) is not a finite "
		    "number of bytes" },
		{ "a transfer that takes for ever", (size_t)-1, 5e-324,
		    "x.json: stages[0].offload: 4 makes the time of every op "
		    "in series, once per device, not finite (4 microbatches, "
		    "2 devices, transfers over link.d2h 4.94066e-324, link.h2d "
		    "1, link.latency 0)" },
	};
	struct pw_problem *p;
	struct pw_error err;
	size_t i;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		p = uniform(2, 2, 4);
		pw_problem_place_loop(p, &err);
		/* Large but finite: 3e307 in series, twice 1.5e307 each. */
		p->stages[0].f = 1e306;
		if (c[i].off == (size_t)-1)
			pw_problem_set_link(p, c[i].value, 1, 0, true);
		else if (c[i].off == offsetof(struct pw_stage, comm))
			pw_problem_set_comm(p, c[i].value);
		else
			*(double *)((char *)&p->stages[1] + c[i].off) =
			    c[i].value;
		tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT,
		    "%s is refused", c[i].what);
		tap_str(err.msg, c[i].msg, "%s: the message", c[i].what);
		pw_problem_free(p);
	}
	p = uniform(2, 2, 4);
	pw_problem_place_loop(p, &err);
	p->stages[0].f = 2e306;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_OK,
	    "2e306 in series, 8 microbatch-devices: finite");
	p->stages[1].comm = 1e308;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_OK,
	    "the last stage's comm is never used: not counted");
	pw_problem_free(p);
}

/* One limit on the size, and names that files can carry. */
static void
test_validate_counts_text(void)
{
	struct pw_problem *p;
	struct pw_error err;
	char want[256];

	tap_int(pw_problem_check_counts(2, 4, (int)(PW_MAX_PAIRS / 4),
	    "x.json", &err), PW_OK, "PW_MAX_PAIRS pairs are allowed");
	tap_int(pw_problem_check_counts(2, 4, (int)(PW_MAX_PAIRS / 4) + 1,
	    "x.json", &err), PW_ERR_INPUT, "one microbatch more is not");
	snprintf(want, sizeof want, "x.json: microbatches: 4 stages x %d "
	    "microbatches exceeds the limit of %zu (stage, microbatch) pairs "
	    "(each keeps 6 ops in memory)", (int)(PW_MAX_PAIRS / 4) + 1,
	    PW_MAX_PAIRS);
	tap_str(err.msg, want, "the message says the limit and why");
	tap_int(pw_problem_check_counts(3, 2, 1, "x.json", &err), PW_ERR_INPUT,
	    "more devices than stages");

	p = uniform(2, 2, 4);
	pw_problem_place_loop(p, &err);
	p->name = pw_xstrdup("caf\xe9");
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT,
	    "a name that is not UTF-8");
	tap_str(err.msg, "x.json: name: must be valid UTF-8 text",
	    "the message names the field");
	free(p->name);
	p->name = pw_xstrdup("caf\xc3\xa9");
	tap_int(pw_problem_validate(p, "x.json", &err), PW_OK,
	    "a UTF-8 name is fine");
	pw_problem_free(p);
}

/* Devices x stages: 20,000 devices of two stages each validate in one
 * pass (this took minutes when each device scanned every stage; the test
 * checks the result, its speed is left to the figures in the log). */
static void
test_validate_wide(void)
{
	struct pw_problem *p = uniform(20000, 40000, 1);
	struct pw_error err;

	tap_int(pw_problem_place_loop(p, &err), PW_OK, "40,000 stages placed");
	tap_int(pw_problem_validate(p, "x.json", &err), PW_OK,
	    "20,000 devices validate");
	p->stages[19999].device = p->stages[39999].device = 19998;
	tap_int(pw_problem_validate(p, "x.json", &err), PW_ERR_INPUT,
	    "the last device left without a stage");
	tap_str(err.msg, "x.json: devices: device 19999 has no stage",
	    "is named");
	pw_problem_free(p);
}

/* Names as pw_op_name writes them and as a user types them, on 8
 * stages and 32 microbatches: the op read, or the one-line error. */
static void
test_op_parse(void)
{
	static const struct { const char *s, *want; } rows[] = {
		{ "B(3,12)", "B(3,12)" },
		{ "bw( 0 , 1 )", "BW(0,1)" },
		{ "  Offload(7,31) ", "OFFLOAD(7,31)" },
		{ "reload(0,0)", "RELOAD(0,0)" },
		{ "w(2,\t5)", "W(2,5)" },
		{ "f (1,2)", "F(1,2)" },
		{ "X(1,2)", "'X(1,2)': unknown kind 'X'" },
		{ "BWX(1,2)", "'BWX(1,2)': unknown kind 'BWX'" },
		{ "FORWARDPASSES(1,2)",
		    "'FORWARDPASSES(1,2)': unknown kind 'FORWARDPASSES'" },
		{ "F(9,0)", "'F(9,0)': stage 9 is out of range (0 to 7)" },
		{ "F(-1,0)", "'F(-1,0)': stage -1 is out of range (0 to 7)" },
		{ "F(0,32)",
		    "'F(0,32)': microbatch 32 is out of range (0 to 31)" },
		{ "F(0,99999999999999999999999)",
		    "'F(0,99999999999999999999999)': microbatch "
		    "99999999999999999999999 is out of range (0 to 31)" },
		{ "F(1", "'F(1': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))" },
		{ "F(1,2)x", "'F(1,2)x': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))" },
		{ "(1,2)", "'(1,2)': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))" },
		{ "F(,2)", "'F(,2)': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))" },
		{ "F(1 2)", "'F(1 2)': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))" },
		{ "", "'': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))" },
		{ "F(1,\n2)", "'F(1,\\x0a2)': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))" },
	};
	struct pw_problem *p = pw_problem_new(8, 8, 32);
	struct pw_error err;
	struct pw_op op = { PW_W, 5, 5 };
	char name[64];
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (pw_op_parse(rows[i].s, p, &op, &err) == PW_OK)
			pw_op_name(err.msg, sizeof err.msg, op);
		tap_str(err.msg, rows[i].want, "op parse: '%s'", rows[i].want);
	}
	/* A refusal leaves OUT as it was. */
	op = (struct pw_op){ PW_W, 5, 5 };
	tap_int(pw_op_parse("F(9,0)", p, &op, &err), PW_ERR_INPUT,
	    "op parse: refuses");
	tap_str(pw_op_name(name, sizeof name, op), "W(5,5)",
	    "op parse: a refusal keeps the op");
	/* Every name pw_op_name writes reads back. */
	for (i = 0; i < pw_op_universe(p); i++) {
		pw_op_name(name, sizeof name, pw_op_from_index(p, i));
		if (pw_op_parse(name, p, &op, &err) != PW_OK ||
		    pw_op_index(p, op) != i)
			break;
	}
	tap_int((long long)i, (long long)pw_op_universe(p),
	    "op parse: every name round-trips");
	pw_problem_free(p);
}

/* What else a pin's op may mean: the fused or split form of a backward. */
static void
test_pin_other(void)
{
	static const enum pw_kind from[] = { PW_F, PW_B, PW_W, PW_BW,
	    PW_OFFLOAD, PW_RELOAD };
	static const enum pw_kind want[] = { PW_F, PW_BW, PW_BW, PW_B,
	    PW_OFFLOAD, PW_RELOAD };
	struct pw_op op;
	size_t i;

	for (i = 0; i < sizeof from / sizeof from[0]; i++) {
		op = pw_pin_other((struct pw_op){ from[i], 3, 7 });
		tap_ok(op.kind == want[i] && op.stage == 3 && op.mb == 7,
		    "pin other: %s means %s too", pw_kind_name(from[i]),
		    pw_kind_name(want[i]));
	}
}

/* Which pins say the same: B and BW of one microbatch are one op, W and
 * BW are not (a pin after a W waits for more than one after a B). */
static void
test_pin_same(void)
{
	static const struct {
		enum pw_kind before, after, other_before, other_after;
		int other_mb;
		bool same;
	} row[] = {
		{ PW_F, PW_B, PW_F, PW_B, 0, true },
		{ PW_F, PW_B, PW_F, PW_BW, 0, true },
		{ PW_BW, PW_F, PW_B, PW_F, 0, true },
		{ PW_F, PW_W, PW_F, PW_BW, 0, false },
		{ PW_F, PW_B, PW_F, PW_B, 1, false },
		{ PW_F, PW_B, PW_B, PW_F, 0, false },
	};
	struct pw_pin a, b;
	size_t i;

	for (i = 0; i < sizeof row / sizeof row[0]; i++) {
		a = (struct pw_pin){ { row[i].before, 1, 4 },
		    { row[i].after, 1, 2 } };
		b = (struct pw_pin){ { row[i].other_before, 1, 4 },
		    { row[i].other_after, 1, 2 + row[i].other_mb } };
		tap_ok(pw_pin_same(&a, &b) == row[i].same &&
		    pw_pin_same(&b, &a) == row[i].same, "pin same: %s(1,4) "
		    "before %s(1,2) and %s(1,4) before %s(1,%d): %s",
		    pw_kind_name(row[i].before), pw_kind_name(row[i].after),
		    pw_kind_name(row[i].other_before),
		    pw_kind_name(row[i].other_after), 2 + row[i].other_mb,
		    row[i].same ? "the same" : "not");
	}
}

/* The one placement formula, and the warm-ups the classic families and
 * the partition search share. */
static void
test_placement_device(void)
{
	static const int loop[] = { 0, 1, 2, 3, 0, 1, 2, 3 };
	static const int v[] = { 0, 1, 2, 3, 3, 2, 1, 0 };
	int s, okl = 1, okv = 1;

	for (s = 0; s < 8; s++) {
		okl = okl && pw_placement_device(PW_PLACE_LOOP, 4, 8, s) ==
		    loop[s];
		okv = okv && pw_placement_device(PW_PLACE_V, 4, 8, s) == v[s];
	}
	tap_ok(okl, "placement device: loop 0 1 2 3 0 1 2 3");
	tap_ok(okv, "placement device: V 0 1 2 3 3 2 1 0");
	tap_int(pw_warmup_forwards(4, 1, 8, 0), 3, "warm-up: 1F1B p - d - 1");
	tap_int(pw_warmup_forwards(4, 1, 2, 0), 2, "warm-up: 1F1B at most m");
	tap_int(pw_warmup_forwards(4, 2, 8, 0), 10,
	    "warm-up: interleaved 2(p - d - 1) + (v - 1)p");
	tap_int(pw_warmup_forwards(4, 2, 8, 3), 4,
	    "warm-up: interleaved, the last device");
	tap_int(pw_warmup_forwards(4, 2, 3, 0), 6,
	    "warm-up: interleaved at most v m");
}

/* pw_problem_imbalance: per device; against the device mean for given
 * stages, against the best split of the layout for a model's. */
static void
test_imbalance(void)
{
	const struct pw_model *m = pw_model_find("llama3-8b");
	const struct pw_hardware *hw = pw_hardware_find("H100-SXM");
	struct pw_model sel;
	struct pw_split sp = { .devices = 8, .chunks = 1,
	    .placement = PW_PLACE_LOOP, .microbatches = 32,
	    .memory_limit = 64424509440.0 };
	struct pw_problem *p = uniform(4, 8, 8);
	struct pw_error err;
	double ref, best;
	int d, layers[16];

	pw_problem_place_v(p, &err);
	tap_near(pw_problem_imbalance(p, &d, &ref), 1, 0,
	    "imbalance: V of equal stages is even");
	p->stages[7].f = 3;
	tap_near(pw_problem_imbalance(p, &d, &ref), 10 / 8.5, 0,
	    "imbalance: device 0's 10 s over the mean 8.5 s");
	tap_ok(d == 0 && ref == 8.5, "imbalance: device 0, the device mean");
	pw_problem_free(p);
	p = NULL;

	/* The case: the even split's last stage carries the head. */
	if (!tap_int(pw_cost_problem(m, hw, &sp, &p, &err), PW_OK,
	    "imbalance: llama3-8b on 8 at 60 GiB builds") ||
	    !tap_int(pw_split_balance(m, hw, &sp, NULL, layers, &best, &err),
	    PW_OK, "imbalance: its best split"))
		goto out;
	tap_near(pw_problem_imbalance(p, &d, &ref), 1.1683823529411765, 1e-15,
	    "imbalance: the even split 16.8%% above the best bottleneck");
	tap_ok(d == 7 && ref == best, "imbalance: device 7, against "
	    "pw_split_balance's bottleneck");
	pw_problem_free(p);
	p = NULL;
	/* The planner's best: V (stages 0 and 15 on device 0) of selective
	 * recomputation, which a split of one stage per device never
	 * balances within 10%, is 1 exactly. */
	sel = *m;
	sel.recompute = PW_RECOMPUTE_PIPEOFFLOAD;
	sp.chunks = 2;
	sp.placement = PW_PLACE_V;
	if (!tap_int(pw_split_balance_fit(&sel, hw, &sp, layers, &best, &err),
	    PW_OK, "imbalance: the best V split"))
		goto out;
	sp.layers_per_stage = layers;
	if (tap_int(pw_cost_problem(&sel, hw, &sp, &p, &err), PW_OK,
	    "imbalance: it builds"))
		tap_near(pw_problem_imbalance(p, &d, &ref), 1, 0,
		    "imbalance: the best V split is 1 exactly");
	tap_ok(layers[0] == 2 && layers[7] == 3 && layers[15] == 1,
	    "imbalance: the planner's split, 2 .. 3 .. 1");
out:
	pw_problem_free(p);
}

int
main(void)
{
	test_placement();
	test_placement_device();
	test_imbalance();
	test_validate();
	test_validate_sums();
	test_validate_counts_text();
	test_validate_wide();
	test_ops();
	test_copy();
	test_op_parse();
	test_pin_other();
	test_pin_same();
	return tap_done();
}
