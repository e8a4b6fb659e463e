/* test_metrics.c - metrics and memory curves of hand-timed schedules. */
#include <math.h>
#include <stdlib.h>

#include "pipewright.h"
#include "tap.h"
#include "testlib.h"

static void
test_two_devices(void)
{
	struct pw_problem *p = test_two_device_problem();
	struct pw_schedule *s = test_two_device_schedule(p);
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	int i;

	for (i = 0; i < 2; i++) {
		p->stages[i].act = 3;
		p->stages[i].hold = 1;
		p->memory[i].static_bytes = 10;
	}
	p->memory[1].limit = 12.5;
	if (!tap_int(pw_simulate(p, s, &t, &err), PW_OK, "simulates"))
		return;
	m = pw_metrics_compute(p, s, t);
	tap_near(m->makespan, 10, 0, "makespan");
	tap_near(m->device[0].span, 10, 0, "device 0 span");
	tap_near(m->device[1].span, 6, 0, "device 1 span 1.5 to 7.5");
	tap_near(m->device[0].busy, 6, 0, "device 0 busy");
	tap_near(m->device[1].idle, 4, 0, "device 1 idle = makespan - busy");
	tap_near(m->total_idle, 8, 0, "total idle");
	tap_near(m->bubble_rate, 0.4, 1e-15, "bubble rate (10 - 6) / 10");
	tap_near(m->device[0].peak, 16, 0, "device 0 peak: static + two activations");
	tap_near(m->device[1].peak, 13, 0, "device 1 peak: one activation at a time");
	tap_ok(m->device[0].within_limit, "no limit on device 0");
	tap_ok(!m->device[1].within_limit, "device 1 over 12.5");
	tap_ok(!m->feasible, "infeasible overall");
	/* Device 1 frees BW(1,0) at 4.5 exactly when F(1,1) allocates. */
	tap_int(m->device[1].ncurve, 4, "device 1 curve points");
	tap_near(m->device[1].curve[2].t, 4.5, 0, "equal-instant events merge");
	tap_near(m->device[1].curve[2].bytes, 13, 0, "frees come before allocations");
	pw_metrics_free(m);
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(p);
}

static void
test_offload_memory(void)
{
	struct pw_problem *p = pw_problem_new(1, 1, 2);
	struct pw_schedule *s = NULL;
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	static const double want_t[] = { 0, 1, 3, 4, 5, 6 };
	static const double want_b[] = { 2, 4, 3, 2, 1, 0 };
	int i;

	p->stages[0] = (struct pw_stage){ 0, 1, 1, 1, 2, 1, 2, 0 };
	pw_problem_set_link(p, 1, 2, 0, true);
	s = test_offload_schedule(p, true);
	if (!tap_int(pw_simulate(p, s, &t, &err), PW_OK, "offload simulates"))
		return;
	m = pw_metrics_compute(p, s, t);
	tap_near(m->makespan, 6, 0, "makespan with offload");
	tap_near(m->device[0].peak, 4, 0, "peak before the offload lands");
	if (tap_int(m->device[0].ncurve, 6, "curve points"))
		for (i = 0; i < 6; i++) {
			tap_near(m->device[0].curve[i].t, want_t[i], 0, "curve[%d].t", i);
			tap_near(m->device[0].curve[i].bytes, want_b[i], 0, "curve[%d].bytes", i);
		}
	pw_metrics_free(m);
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(p);
}

int
main(void)
{
	test_two_devices();
	test_offload_memory();
	return tap_done();
}
