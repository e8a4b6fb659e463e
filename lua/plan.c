/*
 * plan.c - pw.plan: the planner (pw_planner) for a script's problem, its
 * candidates as tables best first, each with its schedule object and that
 * schedule's own problem (the candidate's split, chunks and recompute).
 */
#include <stdlib.h>
#include <string.h>

#include "pwlua_int.h"

static void
pwl_plan_result_free(void *r)
{
	pw_planner_result_free(r);
	free(r);
}

/* Reads pw.plan's options (the table at 2) into O; the problem PB's
 * stated objective is the default one. */
static void
pwl_plan_opts(lua_State *L, const struct pwl_problem *pb,
    struct pw_planner_opts *o)
{
	static const char *const fields[] = { "objective", "time_limit",
	    "iteration_limit", "top", "seed", "offload", NULL };
	struct pwl_search_opts so;

	pwl_check_fields(L, 2, "pw.plan", fields, sizeof *fields);
	pw_planner_opts_init(o);
	so = (struct pwl_search_opts){ o->objective, o->offload,
	    o->time_limit, o->iteration_limit, o->seed };
	pwl_search_opts(L, pb, "pw.plan", &so);
	o->objective = so.objective;
	o->offload = so.offload;
	o->time_limit = so.time_limit;
	o->iteration_limit = so.iteration_limit;
	o->seed = so.seed;
	o->top = (size_t)pwl_get_int(L, 2, "pw.plan", "top", (int)o->top, 1,
	    1000);
}

/* An estimate of the bytes the planner holds at once on P under O: the
 * TOP candidates kept (a problem and a schedule each) and the design
 * being timed (a plan), each at the most stages a design of P may have
 * (P's own when its stages are given). */
static size_t
pwl_plan_work_bytes(lua_State *L, const struct pw_problem *p,
    const struct pw_planner_opts *o)
{
	size_t per_stage = pw_op_universe(p) / (size_t)p->nstages + 1;
	int stages = p->nstages, chunks;
	size_t universe, kept;

	if (p->origin != NULL) {
		chunks = pw_planner_most_chunks(p->origin);
		if (p->devices * chunks > stages)
			stages = p->devices * chunks;
	}
	universe = pwl_array_bytes(L, per_stage, (size_t)stages, "pw.plan");
	kept = pwl_problem_bytes(p->devices, stages) +
	    pwl_problem_text_bytes(p) + pwl_array_bytes(L, universe,
	    sizeof (struct pw_op), "pw.plan");
	return pwl_array_bytes(L, o->top, kept, "pw.plan") +
	    pwl_plan_bytes(L, p->devices, stages, universe, "pw.plan");
}

/* Pushes the schedule object of candidate C, its problem object (which
 * takes C's problem, and PB's objective and time limit) beside it as the
 * schedule's; C's schedule is taken too. */
static void
pwl_plan_schedule(lua_State *L, const struct pwl_problem *pb,
    struct pw_planner_candidate *c)
{
	const struct pw_problem *p = c->problem;
	struct pwl_problem *used;
	struct pwl_schedule *s;
	struct pw_schedule *sched;

	used = pwl_problem_push(L);
	pwl_problem_charge(L, used, p->devices, p->nstages, p->microbatches,
	    "pw.plan");
	s = pwl_schedule_push(L, -1, p, "pw.plan");
	used->p = c->problem;
	c->problem = NULL;
	pwl_problem_inherit(used, pb);
	sched = c->schedule;
	c->schedule = NULL;
	pwl_schedule_finish(L, s, pw_problem_copy(used->p), sched, NULL,
	    "pw.plan: internal error");
	/* The planner's figures, for its objective. */
	s->objective = c->objective;
	s->bound = c->bound;
	s->gap = c->gap;
	/* A candidate that moves nothing in a design with the link is bound
	 * as one (docs/cli.md): meeting that bound proves nothing of the
	 * schedules that offload. */
	s->optimal = pw_objective_meets_bound(c->objective, c->bound) &&
	    (!c->design.offload || c->moves);
	lua_remove(L, -2);
}

/* Pushes the list of the split's layer counts, or nil when it is fixed. */
static void
pwl_plan_split(lua_State *L, const struct pw_design *dg, int nstages)
{
	int k;

	if (dg->layers_per_stage == NULL) {
		lua_pushnil(L);
		return;
	}
	lua_createtable(L, nstages, 0);
	for (k = 0; k < nstages; k++) {
		lua_pushinteger(L, dg->layers_per_stage[k]);
		lua_rawseti(L, -2, k + 1);
	}
}

/* Pushes candidate C, a design of PB's model, as a table (taking its
 * problem and schedule). */
static void
pwl_plan_candidate(lua_State *L, const struct pwl_problem *pb,
    struct pw_planner_candidate *c)
{
	const struct pw_design *dg = &c->design;
	char layout[64];

	lua_createtable(L, 0, 20);
	pwl_plan_split(L, dg, c->problem->nstages);
	lua_setfield(L, -2, "layers_per_stage");
	lua_pushstring(L, pw_design_layout_name(dg, layout, sizeof layout));
	lua_setfield(L, -2, "layout");
	lua_pushinteger(L, dg->chunks);
	lua_setfield(L, -2, "chunks");
	lua_pushstring(L, pw_design_placement_name(dg));
	lua_setfield(L, -2, "placement");
	/* A fixed split's recomputation is the problem's, unknown here:
	 * nil, as plan --json's null. */
	if (dg->layers_per_stage != NULL)
		lua_pushstring(L, pwl_recompute_names[dg->recompute]);
	else
		lua_pushnil(L);
	lua_setfield(L, -2, "recompute");
	lua_pushboolean(L, dg->offload);
	lua_setfield(L, -2, "offload");
	lua_pushstring(L, c->schedule_name);
	lua_setfield(L, -2, "family");
	pwl_set_number(L, "makespan", c->makespan);
	pwl_set_number(L, "objective", c->objective);
	pwl_set_number(L, "bubble_rate", c->bubble_rate);
	pwl_set_number(L, "idle_share", c->idle_share);
	pwl_set_number(L, "peak", c->peak);
	lua_pushinteger(L, c->peak_device + 1);
	lua_setfield(L, -2, "peak_device");
	pwl_set_number(L, "limit", c->limit);
	pwl_set_number(L, "bound", c->bound);
	lua_pushstring(L, c->bound_name);
	lua_setfield(L, -2, "bound_name");
	pwl_set_number(L, "gap", c->gap);
	lua_pushboolean(L, c->optimized);
	lua_setfield(L, -2, "optimized");
	pwl_plan_schedule(L, pb, c);
	lua_setfield(L, -2, "schedule");
}

/* pw.plan(problem [, opts]): the planner's candidates, best first, and a
 * table of how its search went; nil and the reason when no design fits. */
static int
pwl_plan(lua_State *L)
{
	struct pwl_problem *pb = pwl_problem_check(L, 1);
	struct pw_planner_result **res;
	struct pw_planner_opts o;
	struct pw_error err;
	size_t i;
	int rc;

	pwl_opts_arg(L, 2);
	pwl_plan_opts(L, pb, &o);
	if (pb->prefs.npins > 0) {
		lua_pushnil(L);
		lua_pushstring(L, "pw.plan: the problem: " PW_PLANNER_NO_PINS);
		return 2;
	}
	/* 3: the result, charged before the planner runs for what it
	 * holds at once (a search over the cap is refused, not run), until
	 * each candidate kept is charged as a schedule object of its own. */
	res = (struct pw_planner_result **)pwl_box_with(L,
	    pwl_plan_work_bytes(L, pb->p, &o), "pw.plan",
	    pwl_plan_result_free);
	/* No longer than the run has left, and stopped at its deadline. */
	o.time_limit = fmin(o.time_limit, pwl_time_left(L, "pw.plan"));
	o.cancel = pwl_cancel(L);
	*res = pw_xcalloc(1, sizeof **res);
	rc = pw_planner(pb->p, &o, *res, &err);
	if (rc == PW_ERR_INPUT) {
		lua_pushnil(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	if (rc != PW_OK)
		return pwl_fail(L, "pw.plan: internal error: %s", err.msg);
	lua_createtable(L, (int)(*res)->ncand, 0);
	for (i = 0; i < (*res)->ncand; i++) {
		pwl_plan_candidate(L, pb, &(*res)->cand[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, (lua_Integer)(*res)->tried);
	lua_setfield(L, -2, "tried");
	lua_pushboolean(L, (*res)->split_fixed);
	lua_setfield(L, -2, "split_fixed");
	lua_pushstring(L, pw_solve_end_words((*res)->ended));
	lua_setfield(L, -2, "ended");
	return 2;
}

void
pwl_open_plan(lua_State *L)
{
	lua_pushcfunction(L, pwl_plan);
	lua_setfield(L, -2, "plan");
}
