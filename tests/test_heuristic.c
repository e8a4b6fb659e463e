/*
 * test_heuristic.c - the memory-aware list scheduler (solver/heuristic.c)
 * alone: its schedules simulate, pass the checker and keep every limit,
 * and its W rules, the grid's and then each device's own, give the
 * stated makespans on bench_solver's case (d), where how late a device
 * runs its W decides the step time.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "tap.h"
#include "testlib.h"

/* Tests that the heuristic schedules P within its limits, that the
 * schedule passes the checker, and that its makespan is MAKESPAN. */
static void
test_makespan(struct pw_problem *p, double makespan, const char *what)
{
	struct pw_heuristic_opts o;
	struct pw_schedule *sched;
	struct pw_metrics *m;
	struct pw_error err;

	memset(&o, 0, sizeof o);
	o.objective = PW_OBJ_MAKESPAN;
	if (!tap_int(pw_heuristic(p, &o, &sched, &err), PW_OK, "%s: "
	    "scheduled", what)) {
		tap_diag("%s", err.msg);
		return;
	}
	if ((m = test_valid_schedule(p, sched, NULL, what)) != NULL)
		tap_near(m->makespan, makespan, 1e-6, "%s: makespan %.4f",
		    what, makespan);
	pw_metrics_free(m);
	pw_schedule_free(sched);
}

/*
 * Case (d)'s problems (one stage per device, uneven costs, act 1, hold
 * 0.5).  The classic W rules (W where they fit, in every gap, or right
 * after their B) give 247.1303 at p=16 with 12 activations and 135.2408
 * at p=8 with 5; the grid's best with the rules that fill gaps half a W
 * fits or cap the W owed gives 239.4995 and 134.8670, and the rules
 * chosen device by device 237.6373 and 134.1868.  Without a limit no cap
 * applies and the makespan is the classic rules' (p=16: 230.1584, where
 * zb-auto gives 231.1145).
 */
static void
test_w_rules(void)
{
	struct pw_problem *p;

	p = test_problem_uneven(16, 64, 12);
	test_makespan(p, 237.6373066059, "p=16 at 12: rules by device");
	pw_problem_free(p);
	p = test_problem_uneven(8, 32, 5);
	test_makespan(p, 134.1868498125, "p=8 at 5: rules by device");
	pw_problem_free(p);
	p = test_problem_uneven(16, 64, INFINITY);
	test_makespan(p, 230.1584220767, "p=16 without a limit");
	pw_problem_free(p);
	p = test_problem_unit(4, 8, 0, 2);
	test_makespan(p, 41, "unit 4x8 at 2: the optimum");
	pw_problem_free(p);
}

int
main(void)
{
	test_w_rules();
	return tap_done();
}
