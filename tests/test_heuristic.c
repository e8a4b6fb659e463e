/*
 * test_heuristic.c - the memory-aware list scheduler (solver/heuristic.c)
 * alone: its schedules simulate, pass the checker and keep every limit,
 * and its W rules, the grid's and then each device's own, give the
 * stated makespans on bench_solver's case (d), where how late a device
 * runs its W decides the step time, with two stages a device, and with
 * activations moving to the host.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"
#include "testlib.h"

/* Tests that the heuristic schedules P within its limits (moving
 * activations where OFFLOAD: every stage with offload bytes may, and
 * some do), that the schedule passes the checker, and that its makespan
 * is MAKESPAN.  SETTLE, when not NULL, gives the options' bounds on the
 * descent's passes, the rest of it zero (NULL: none, the passes run to
 * the end). */
static void
test_makespan(struct pw_problem *p, double makespan, const char *what,
    bool offload, const struct pw_heuristic_opts *settle)
{
	struct pw_heuristic_opts o;
	struct pw_schedule *sched;
	struct pw_metrics *m;
	struct pw_error err;
	bool *may = NULL;
	int s, c, moved = 0;

	if (settle != NULL)
		o = *settle;
	else
		memset(&o, 0, sizeof o);
	o.objective = PW_OBJ_MAKESPAN;
	if (offload) {
		may = calloc((size_t)p->nstages, sizeof *may);
		for (s = 0; s < p->nstages; s++)
			may[s] = p->stages[s].offload > 0;
		o.offloadable = may;
	}
	if (!tap_int(pw_heuristic(p, &o, &sched, &err), PW_OK, "%s: "
	    "scheduled", what)) {
		tap_diag("%s", err.msg);
		free(may);
		return;
	}
	if ((m = test_valid_schedule(p, sched, NULL, what)) != NULL)
		tap_near(m->makespan, makespan, 1e-6, "%s: makespan %.4f",
		    what, makespan);
	for (c = 0; c < sched->nchannels; c++)
		moved += sched->channel[c].len;
	tap_ok(offload == (moved > 0), "%s: %s", what, offload ?
	    "activations move" : "nothing moves");
	pw_metrics_free(m);
	pw_schedule_free(sched);
	free(may);
}

/*
 * Case (d)'s problems (one stage per device, uneven costs, act 1, hold
 * 0.5).  The classic W rules (W where they fit, in every gap, or right
 * after their B) give 247.1303 at p=16 with 12 activations and 135.2408
 * at p=8 with 5; the grid's best with the rules that fill gaps half a W
 * fits or cap the W owed gives 239.4995 and 134.8670, and the rules
 * chosen device by device 237.6373 (one pass over the devices; the
 * second finds nothing) and 134.0095 (134.1868 after the first pass).
 * Without a limit no cap applies and the makespan is the classic rules'
 * (p=16: 230.1584, where zb-auto gives 231.1145).
 */
static void
test_w_rules(void)
{
	struct pw_heuristic_opts settle;
	struct pw_problem *p;

	p = test_problem_uneven(16, 64, 12);
	test_makespan(p, 237.6373066059, "p=16 at 12: rules by device",
	    false, NULL);
	pw_problem_free(p);
	p = test_problem_uneven(8, 32, 5);
	test_makespan(p, 134.0095473732, "p=8 at 5: rules by device",
	    false, NULL);
	/* Bounded by a caller: the first pass only where no time is given,
	 * by a time already past, or where the heuristic does not lead the
	 * incumbent; to the end while it leads, or without an incumbent. */
	memset(&settle, 0, sizeof settle);
	settle.settle = true;
	settle.incumbent = 134.2;
	test_makespan(p, 134.1868498125, "p=8 at 5: one pass, no time given",
	    false, &settle);
	settle.settle_by = pw_now();
	test_makespan(p, 134.1868498125, "p=8 at 5: one pass, out of time",
	    false, &settle);
	settle.settle_by = pw_now() + 3600;
	test_makespan(p, 134.0095473732, "p=8 at 5: passes while leading",
	    false, &settle);
	settle.incumbent = 134.1;
	test_makespan(p, 134.1868498125, "p=8 at 5: one pass, not leading",
	    false, &settle);
	settle.incumbent = INFINITY;
	test_makespan(p, 134.0095473732, "p=8 at 5: passes, no incumbent",
	    false, &settle);
	pw_problem_free(p);
	p = test_problem_uneven(16, 64, INFINITY);
	test_makespan(p, 230.1584220767, "p=16 without a limit", false, NULL);
	pw_problem_free(p);
	p = test_problem_unit(4, 8, 0, 2);
	test_makespan(p, 41, "unit 4x8 at 2: the optimum", false, NULL);
	pw_problem_free(p);
}

/*
 * Where devices hold two stages (the owed W of both count against the
 * cap, and the stage orders join the grid) and where activations move
 * (each policy searches its extra above the limit, the transfers planned
 * for it).  Four devices with two stages each in a loop, eight
 * microbatches, unit times, act 1, hold 0.5, a limit of 4: 73, where the
 * classic W rules gave 74.  PipeOffload's d=4, v=2, m=16, k=0.5 at a
 * limit of 3: 102, with transfers.
 */
static void
test_stages_offload(void)
{
	struct pw_stage stage = { .f = 1, .b = 1, .w = 1, .act = 1,
	    .hold = 0.5 };
	struct pw_problem *p;
	int d;

	p = test_problem_uniform(4, 2, 8, PW_PLACE_LOOP, &stage);
	for (d = 0; d < p->devices; d++)
		p->memory[d].limit = 4;
	test_makespan(p, 73, "loop x2 at 4", false, NULL);
	pw_problem_free(p);
	p = test_po_problem(4, 2, 16, 0.5, 1, 3);
	test_makespan(p, 102, "PipeOffload at 3", true, NULL);
	pw_problem_free(p);
}

int
main(void)
{
	test_w_rules();
	test_stages_offload();
	return tap_done();
}
