/* test_problem.c - placements, validation, op indexing and channels. */
#include <math.h>
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

	p = uniform(3, 4, 2);
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
	tap_str(err.msg, "x.json: memory[1].limit: 13 is below what one microbatch "
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

int
main(void)
{
	test_placement();
	test_validate();
	test_ops();
	test_copy();
	return tap_done();
}
