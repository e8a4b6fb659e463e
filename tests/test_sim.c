/* test_sim.c - the simulator on hand-timed schedules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"
#include "tap.h"
#include "testlib.h"

static double
start_of(const struct pw_problem *p, const struct pw_timing *t,
    enum pw_kind kind, int stage, int mb)
{
	return t->start[pw_op_index(p, test_op(kind, stage, mb))];
}

/* Two devices, fused backward, comm 0.5: every start worked out by hand. */
static void
test_two_devices(void)
{
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s = test_two_device_schedule(p);
	struct pw_timing *t;
	struct pw_error err;

	if (tap_int(pw_simulate(p, s, &t, &err), PW_OK, "two devices simulate")) {
		tap_near(start_of(p, t, PW_F, 1, 0), 1.5, 0, "F(1,0) waits for comm");
		tap_near(start_of(p, t, PW_F, 1, 1), 4.5, 0, "F(1,1) waits for its device");
		tap_near(start_of(p, t, PW_BW, 0, 0), 5, 0, "BW(0,0) waits for BW(1,0) plus comm");
		tap_near(start_of(p, t, PW_BW, 0, 1), 8, 0, "BW(0,1) starts at 8");
		tap_near(t->end[pw_op_index(p, test_op(PW_BW, 0, 1))], 10, 0, "last op ends at 10");
		tap_ok(!pw_timing_has(t, pw_op_index(p, test_op(PW_B, 0, 0))), "absent ops have no time");
		pw_timing_free(t);
	}
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* One device, split backward, one offloaded activation with and without a
 * reload anchor, on a full- and a half-duplex link. */
static void
test_offload(void)
{
	struct pw_problem *p = pw_problem_new(1, 1, 2);
	struct pw_schedule *s;
	struct pw_timing *t;
	struct pw_error err;

	p->stages[0] = (struct pw_stage){ 0, 1, 1, 1, 2, 1, 2, 0 };
	pw_problem_set_link(p, 4, 2, 0, true);
	tap_int(pw_problem_nchannels(p), 2, "duplex link has two channels");

	s = test_offload_schedule(p, false);
	if (tap_int(pw_simulate(p, s, &t, &err), PW_OK, "offload simulates")) {
		tap_near(start_of(p, t, PW_OFFLOAD, 0, 0), 1, 0, "offload right after F");
		tap_near(t->end[pw_op_index(p, test_op(PW_OFFLOAD, 0, 0))], 1.5, 0, "offload takes bytes/d2h");
		tap_near(start_of(p, t, PW_RELOAD, 0, 0), 1.5, 0, "unanchored reload follows the offload");
		tap_near(t->end[pw_op_index(p, test_op(PW_RELOAD, 0, 0))], 2.5, 0, "reload takes bytes/h2d");
		tap_near(start_of(p, t, PW_B, 0, 0), 4, 0, "B(0,0) after W(0,1)");
		pw_timing_free(t);
	}
	pw_schedule_free(s);

	s = test_offload_schedule(p, true);
	if (tap_int(pw_simulate(p, s, &t, &err), PW_OK, "anchored offload simulates")) {
		tap_near(start_of(p, t, PW_RELOAD, 0, 0), 2, 0, "reload waits for its anchor's start");
		pw_timing_free(t);
	}
	pw_schedule_free(s);

	/* Half duplex with latency: a reload that must end before B. */
	pw_problem_set_link(p, 1, 1, 0.25, false);
	p->stages[0].w = 0;
	s = test_offload_schedule(p, true);
	if (tap_int(pw_simulate(p, s, &t, &err), PW_OK, "half duplex simulates")) {
		tap_near(t->end[pw_op_index(p, test_op(PW_OFFLOAD, 0, 0))], 3.25, 0, "offload 1 + 0.25 + 2");
		tap_near(start_of(p, t, PW_RELOAD, 0, 0), 3.25, 0, "reload after offload on the shared channel");
		tap_near(start_of(p, t, PW_B, 0, 0), 5.5, 0, "B waits for the reload's end");
		pw_timing_free(t);
	}
	pw_schedule_free(s);
	pw_problem_free(p);
}

static void
test_bad_schedules(void)
{
	struct pw_problem *p = pw_problem_new(2, 2, 1);
	struct pw_schedule *s;
	struct pw_timing *t;
	struct pw_error err;

	pw_problem_place_loop(p, &err);
	p->stages[0].f = p->stages[1].f = 1;

	/* BW before F on device 1: a cycle through F(1,0). */
	s = pw_schedule_new(p);
	pw_schedule_append(s, p, test_op(PW_F, 0, 0));
	pw_schedule_append(s, p, test_op(PW_BW, 0, 0));
	pw_schedule_append(s, p, test_op(PW_BW, 1, 0));
	pw_schedule_append(s, p, test_op(PW_F, 1, 0));
	tap_int(pw_simulate(p, s, &t, &err), PW_ERR_DEADLOCK, "deadlock detected");
	tap_ok(t == NULL, "no timing on deadlock");
	tap_str(err.msg, "deadlock: 3 ops can never start:\n"
	    "  device 0: BW(0,0) waits for BW(1,0)\n"
	    "  device 1: BW(1,0) waits for F(1,0)", "deadlock names blocked ops and waits");
	pw_schedule_free(s);

	s = pw_schedule_new(p);
	pw_schedule_append(s, p, test_op(PW_F, 0, 0));
	pw_schedule_append(s, p, test_op(PW_BW, 0, 0));
	pw_schedule_append(s, p, test_op(PW_F, 1, 0));
	tap_int(pw_simulate(p, s, &t, &err), PW_ERR_INPUT, "missing op rejected");
	tap_str(err.msg, "schedule: stage 1 microbatch 0 needs F, then BW or both "
	    "B and W, and OFFLOAD with RELOAD or neither (has F)", "missing op named");
	pw_seq_push(&s->device[0], test_op(PW_F, 1, 0));
	tap_int(pw_simulate(p, s, &t, &err), PW_ERR_INPUT, "op on wrong device rejected");
	tap_str(err.msg, "schedule: F(1,0) is ordered on device 0 but belongs to device 1",
	    "wrong device named");
	s->device[0].len--;
	pw_schedule_append(s, p, test_op(PW_BW, 1, 0));
	pw_schedule_append(s, p, test_op(PW_BW, 1, 0));
	tap_int(pw_simulate(p, s, &t, &err), PW_ERR_INPUT, "duplicate rejected");
	tap_str(err.msg, "schedule: BW(1,0) appears twice", "duplicate named");
	s->device[1].len--;
	pw_schedule_append(s, p, test_op(PW_B, 0, 0));
	tap_int(pw_simulate(p, s, &t, &err), PW_ERR_INPUT, "mixed B and BW rejected");
	pw_schedule_free(s);
	pw_problem_free(p);
}

int
main(void)
{
	test_two_devices();
	test_offload();
	test_bad_schedules();
	return tap_done();
}
