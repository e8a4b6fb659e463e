/*
 * schedule.c - schedule objects (each a plan of the core's) and what
 * makes them: pw.schedule (a family), pw.solve (the optimizer), pw.show
 * (the text Gantt chart) and pw.compare (every family's figures).
 */
#include <stdlib.h>
#include <string.h>

#include "pwlua_int.h"

/* pw.show's width when none is given (the CLI's default too). */
#define PWL_WIDTH	100
#define PWL_WIDTH_MAX	100000


static int
pwl_schedule_gc(lua_State *L)
{
	struct pwl_schedule *s = luaL_checkudata(L, 1, PWL_SCHEDULE);

	pw_plan_free(s->plan);
	pwl_release(L, &s->charged);
	memset(s, 0, sizeof *s);
	return 0;
}

/* The bytes of a plan for each op of its problem: the orders twice (as
 * edited and as timed), the timing, the index and the metrics. */
#define PWL_PLAN_OP_BYTES (2 * sizeof (struct pw_op) + \
	2 * sizeof (struct pw_anchor) + 2 * sizeof (double) + \
	sizeof (struct pw_bind) + 2 * sizeof (int32_t) + \
	sizeof (struct pw_mem_point))

size_t
pwl_plan_bytes(lua_State *L, int devices, int nstages, size_t universe,
    const char *what)
{
	return pwl_problem_bytes(devices, nstages) +
	    2 * sizeof (struct pw_schedule) + sizeof (struct pw_timing) +
	    sizeof (struct pw_metrics) + pwl_array_bytes(L, universe,
	    PWL_PLAN_OP_BYTES, what) + (size_t)devices *
	    sizeof (struct pw_device_metrics);
}

/* An estimate of the bytes of a plan of P: its copy of the problem and
 * a few of each of the problem's ops. */
static size_t
pwl_schedule_bytes(lua_State *L, const struct pw_problem *p)
{
	return pwl_plan_bytes(L, p->devices, p->nstages, pw_op_universe(p),
	    "a schedule") + pwl_problem_text_bytes(p);
}

void
pwl_search_opts(lua_State *L, const struct pwl_problem *pb, const char *who,
    struct pwl_search_opts *o)
{
	if (pb->prefs.has_objective)
		o->objective = pb->prefs.objective;
	o->objective = pwl_get_option(L, 2, who, "objective",
	    (int)o->objective, pw_objective_names);
	o->offload = pwl_get_option(L, 2, who, "offload", (int)o->offload,
	    pw_offload_mode_names);
	o->time_limit = pwl_get_number(L, 2, who, "time_limit",
	    o->time_limit);
	/* math.huge is all the run has left (the caller caps it there). */
	if (!(o->time_limit > 0))
		pwl_fail(L, "%s: time_limit: must be a positive number of "
		    "seconds (got %g)", who, o->time_limit);
	o->iteration_limit = pwl_get_int(L, 2, who, "iteration_limit",
	    (int)o->iteration_limit, 0, INT_MAX);
	o->seed = (unsigned long)pwl_get_integer(L, 2, who, "seed",
	    (lua_Integer)o->seed, 0, PW_SEED_MAX);
}

/* Charges what *CHARGED lacks of BYTES. */
static void
pwl_charge_up(lua_State *L, size_t *charged, size_t bytes, const char *what)
{
	if (bytes > *charged)
		pwl_charge(L, charged, bytes - *charged, what);
}

struct pwl_schedule *
pwl_schedule_push(lua_State *L, int problem, const struct pw_problem *p,
    const char *what)
{
	struct pwl_schedule *s;

	problem = lua_absindex(L, problem);
	s = lua_newuserdatauv(L, sizeof *s, 2);
	memset(s, 0, sizeof *s);
	luaL_setmetatable(L, PWL_SCHEDULE);
	lua_pushvalue(L, problem);
	lua_setiuservalue(L, -2, 1);
	lua_newtable(L);
	lua_setiuservalue(L, -2, 2);
	pwl_charge(L, &s->charged, pwl_schedule_bytes(L, p), what);
	return s;
}

struct pwl_schedule *
pwl_schedule_test(lua_State *L, int idx)
{
	struct pwl_schedule *s = luaL_testudata(L, idx, PWL_SCHEDULE);

	return s != NULL && s->plan != NULL ? s : NULL;
}

static struct pwl_schedule *
pwl_schedule_check(lua_State *L, int arg)
{
	struct pwl_schedule *s = pwl_schedule_test(L, arg);

	if (s == NULL)
		luaL_typeerror(L, arg, "schedule");
	return s;
}

/* P's lower bound on the makespan of a schedule WITHIN its limits or
 * not: the memory terms hold only for schedules that keep the limits
 * (one over them may beat the bound they give). */
static double
pwl_schedule_bound(const struct pw_problem *p, bool within)
{
	struct pw_problem *unlimited;
	double bound;

	if (within)
		return pw_lower_bound(p, PW_OBJ_MAKESPAN);
	unlimited = pw_problem_unlimited(p);
	bound = pw_lower_bound(unlimited, PW_OBJ_MAKESPAN);
	pw_problem_free(unlimited);
	return bound;
}

/* The solver's figures of S: RES's, or (RES NULL) the makespan as the
 * objective with the optimizer's lower bound on it. */
static void
pwl_schedule_figures(struct pwl_schedule *s, const struct pw_solve_result *res)
{
	const struct pw_problem *p = pw_plan_problem(s->plan);

	if (res != NULL) {
		s->objective = res->objective;
		s->bound = res->bound;
		s->gap = res->gap;
		s->optimal = res->optimal;
		s->ended = pw_solve_result_words(res, res->ended);
		memcpy(s->start, res->start, sizeof s->start);
		s->start[sizeof s->start - 1] = '\0';
		return;
	}
	s->objective = pw_plan_metrics(s->plan)->makespan;
	/* Summed, a bound the makespan meets may pass it in the last
	 * digits: never above, as solve's. */
	s->bound = fmin(pwl_schedule_bound(p,
	    pw_plan_metrics(s->plan)->feasible), s->objective);
	s->gap = pw_objective_gap(s->objective, s->bound);
}

void
pwl_schedule_finish(lua_State *L, struct pwl_schedule *s,
    struct pw_problem *problem, struct pw_schedule *sched,
    const struct pw_solve_result *res, const char *what)
{
	struct pw_error err;

	if (pw_plan_new(problem, sched, &s->plan, &err) != PW_OK)
		pwl_fail(L, "%s: %s", what, err.msg);
	pwl_schedule_figures(s, res);
}

/* pw.schedule(problem, family): the family's schedule, or nil and the
 * reason when the family does not apply. */
static int
pwl_schedule_new(lua_State *L)
{
	struct pwl_problem *pb = pwl_problem_check(L, 1);
	const char *name = pwl_whole_arg(L, 2, "pw.schedule", "name");
	const struct pw_family *family;
	const struct pw_problem *p;
	struct pwl_problem *used;
	struct pwl_schedule *s;
	struct pw_error err;
	int rc;

	lua_settop(L, 2);
	if ((family = pw_family_find(name)) == NULL)
		return pwl_fail(L, "pw.schedule: unknown family '%s' (see "
		    "pw.families())", name);
	/* The family may split the problem again, in as many stages. */
	used = pwl_problem_push(L);
	pwl_problem_charge(L, used, pb->p->devices, pb->p->nstages,
	    pb->p->microbatches, "pw.schedule");
	s = pwl_schedule_push(L, 3, pb->p, "pw.schedule");
	rc = pw_plan_family(family, pb->p, &s->plan, &err);
	/* A build is one step of C, which no flag stops: a run whose time
	 * ran out during it stops as it returns. */
	pwl_work(L, 0, "pw.schedule");
	if (rc == PW_ERR_NOT_APPLICABLE) {
		lua_pushnil(L);
		lua_pushfstring(L, "%s does not apply: %s", name, err.msg);
		return 2;
	}
	if (rc == PW_ERR_INTERNAL)
		return pwl_fail(L, "pw.schedule: internal error: %s", err.msg);
	if (rc != PW_OK)
		return pwl_fail(L, "pw.schedule: %s: %s", name, err.msg);
	p = pw_plan_problem(s->plan);
	/* Not split again: the schedule is for the script's own problem. */
	if (pw_problem_same(p, pb->p)) {
		lua_pushvalue(L, 1);
		lua_setiuservalue(L, 4, 1);
	} else {
		/* Split again, into more stages: charged for them now, and
		 * the script's problem object for it its own copy. */
		pwl_charge_up(L, &used->charged, pwl_problem_bytes(p->devices,
		    p->nstages) + pwl_problem_text_bytes(p), "pw.schedule");
		pwl_charge_up(L, &s->charged, pwl_schedule_bytes(L, p),
		    "pw.schedule");
		used->p = pw_problem_copy(p);
		pwl_problem_inherit(used, pb);
	}
	pwl_schedule_figures(s, NULL);
	/* So is the bound, on a problem of many stages. */
	pwl_work(L, 0, "pw.schedule");
	return 1;
}

/* Reads pw.solve's start option (at the top) into O. */
static void
pwl_solve_start(lua_State *L, const struct pwl_problem *pb,
    struct pw_solve_opts *o)
{
	struct pwl_schedule *start;

	if (lua_type(L, -1) == LUA_TSTRING) {
		o->start_family = lua_tostring(L, -1);
		if (pw_family_find(o->start_family) == NULL)
			pwl_fail(L, "pw.solve: start: unknown family '%s' (see "
			    "pw.families())", o->start_family);
	} else if ((start = pwl_schedule_test(L, -1)) != NULL) {
		if (!pw_problem_same(pw_plan_problem(start->plan), pb->p))
			pwl_fail(L, "pw.solve: start: that schedule is for "
			    "another problem");
		o->start = pw_plan_schedule(start->plan);
	} else if (!lua_isnil(L, -1))
		pwl_fail(L, "pw.solve: start: must be a family name or a "
		    "schedule (got %s)", luaL_typename(L, -1));
}

/* pw.solve(problem [, opts]): the optimizer's schedule, or nil and the
 * reason when it finds none (an infeasible problem, say). */
static int
pwl_solve(lua_State *L)
{
	static const char *const fields[] = { "objective", "offload",
	    "time_limit", "iteration_limit", "seed", "start", "precede",
	    NULL };
	struct pwl_problem *pb = pwl_problem_check(L, 1);
	struct pw_solve_result res;
	struct pw_schedule *sched;
	struct pwl_search_opts so;
	struct pw_solve_opts o;
	struct pwl_schedule *s;
	struct pw_error err;
	struct pw_pin *pins;
	size_t n = 0;

	pwl_opts_arg(L, 2);
	pwl_check_fields(L, 2, "pw.solve", fields, sizeof *fields);
	pw_solve_opts_init(&o);
	/* The default time limit: the problem's, else the optimizer's. */
	so = (struct pwl_search_opts){ o.objective, o.offload,
	    pb->prefs.time_limit > 0 ? pb->prefs.time_limit : o.time_limit,
	    o.iteration_limit, o.seed };
	pwl_search_opts(L, pb, "pw.solve", &so);
	o.objective = so.objective;
	o.offload = so.offload;
	o.time_limit = so.time_limit;
	o.iteration_limit = so.iteration_limit;
	o.seed = so.seed;
	lua_getfield(L, 2, "start");		/* 3: kept for its string */
	pwl_solve_start(L, pb, &o);
	if (lua_getfield(L, 2, "precede") != LUA_TNIL)	/* 4 */
		n = pwl_pins_count(L, 4, "pw.solve: precede", pb->p);
	/* 5: the script's pins and these, owned by Lua (each count is at
	 * most the problem's ops, so the sum does not wrap). */
	pins = lua_newuserdatauv(L, pwl_array_bytes(L, pb->prefs.npins + n,
	    sizeof *pins, "pw.solve: precede"), 0);
	if (pb->prefs.npins > 0)
		memcpy(pins, pb->prefs.pins, pb->prefs.npins * sizeof *pins);
	if (n > 0)
		pwl_pins_read(L, 4, "pw.solve: precede", n, pb->p,
		    pins + pb->prefs.npins);
	o.pins = pins;
	o.npins = pb->prefs.npins + n;

	s = pwl_schedule_push(L, 1, pb->p, "pw.solve");
	/* No longer than the run has left, and stopped at its deadline. */
	o.time_limit = fmin(o.time_limit, pwl_time_left(L, "pw.solve"));
	o.cancel = pwl_cancel(L);
	memset(&res, 0, sizeof res);
	if (pw_solve(pb->p, &o, &res, &err) != PW_OK) {
		lua_pushnil(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	/* The schedule is the plan's now (freed with it, also when
	 * finishing raises); the rest of RES owns nothing. */
	sched = res.schedule;
	res.schedule = NULL;
	pwl_schedule_finish(L, s, pw_problem_copy(pb->p), sched, &res,
	    "pw.solve: internal error");
	pw_solve_result_free(&res);
	return 1;
}

/* pw.show(schedule [, width]): the text Gantt chart on the run's output
 * (pwl_out). */
static int
pwl_show(lua_State *L)
{
	struct pwl_schedule *s = pwl_schedule_check(L, 1);
	lua_Integer width = luaL_optinteger(L, 2, PWL_WIDTH);

	luaL_argcheck(L, width >= 1 && width <= PWL_WIDTH_MAX, 2,
	    "the width must be from 1 to 100000 columns");
	pw_show(pwl_out(L), pw_plan_problem(s->plan), pw_plan_timed(s->plan),
	    pw_plan_timing(s->plan), pw_plan_metrics(s->plan), (int)width);
	return 0;
}

static void
pwl_rows_free(void *rows)
{
	pw_compare_rows_free(rows);
}

void
pwl_set_number(lua_State *L, const char *name, double x)
{
	lua_pushnumber(L, x);
	lua_setfield(L, -2, name);
}

/* pw.compare(problem): one table per family, in the registry's order:
 * its figures, or why it has no schedule. */
static int
pwl_compare(lua_State *L)
{
	struct pwl_problem *pb = pwl_problem_check(L, 1);
	const struct pw_problem *p = pb->p;
	const struct pw_compare_row *r;
	struct pw_compare_row **rows;
	size_t i;

	lua_settop(L, 1);
	/* One family's plan at a time, and every row's metrics. */
	rows = (struct pw_compare_row **)pwl_box_with(L, pwl_schedule_bytes(L, p) +
	    pw_nfamilies * (sizeof (struct pw_metrics) + (size_t)p->devices *
	    sizeof (struct pw_device_metrics) + pw_op_universe(p) *
	    sizeof (struct pw_mem_point)), "pw.compare", pwl_rows_free);
	*rows = pw_compare_rows(p, NULL, NULL);
	pwl_work(L, 0, "pw.compare");
	lua_createtable(L, (int)pw_nfamilies, 0);
	for (i = 0; i < pw_nfamilies; i++) {
		r = &(*rows)[i];
		lua_createtable(L, 0, 8);
		lua_pushstring(L, r->family->name);
		lua_setfield(L, -2, "family");
		if (r->rc != PW_OK) {
			lua_pushstring(L, r->why);
			lua_setfield(L, -2, "why");
		} else {
			pwl_set_number(L, "makespan", r->metrics->makespan);
			pwl_set_number(L, "bubble", r->metrics->bubble_rate);
			pwl_set_number(L, "idle", r->metrics->total_idle);
			pwl_set_number(L, "max_peak", r->max_peak);
			lua_pushboolean(L, r->metrics->feasible);
			lua_setfield(L, -2, "feasible");
			if (r->tightest >= 0) {
				lua_pushinteger(L, r->tightest + 1);
				lua_setfield(L, -2, "tightest");
				pwl_set_number(L, "share", r->share);
			}
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* Pushes the list of timed ops, sorted by start. */
static void
pwl_push_ops(lua_State *L, const struct pwl_schedule *s)
{
	const struct pw_problem *p = pw_plan_problem(s->plan);
	struct pw_timed_op **ops = (struct pw_timed_op **)pwl_box(L,
	    pw_op_universe(p) * sizeof **ops, "schedule: ops");
	const struct pw_timed_op *op;
	char channel[64];
	size_t i, n;

	*ops = pw_timed_ops(p, pw_plan_timed(s->plan), pw_plan_timing(s->plan),
	    &n);
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		op = &(*ops)[i];
		pwl_op_push(L, op->op);
		lua_pushinteger(L, op->device + 1);
		lua_setfield(L, -2, "device");
		lua_pushnumber(L, op->start);
		lua_setfield(L, -2, "start");
		lua_pushnumber(L, op->end);
		lua_setfield(L, -2, "finish");
		if (pw_kind_is_transfer(op->op.kind)) {
			lua_pushnumber(L, op->bytes);
			lua_setfield(L, -2, "bytes");
			lua_pushstring(L, pw_channel_name(p,
			    pw_problem_channel(p, op->device, op->op.kind),
			    channel, sizeof channel));
			lua_setfield(L, -2, "channel");
		}
		if (op->has_anchor) {
			pwl_op_push(L, op->anchor.op);
			if (op->anchor.at_end) {
				lua_pushstring(L, "end");
				lua_setfield(L, -2, "at");
			}
			lua_setfield(L, -2, "after");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_remove(L, -2);
}

/* Pushes the field KEY of a schedule object; raises for unknown keys. */
static void
pwl_schedule_field(lua_State *L, const struct pwl_schedule *s,
    const char *key)
{
	const struct pw_metrics *m = pw_plan_metrics(s->plan);

	if (strcmp(key, "family") == 0)
		lua_pushstring(L, pw_plan_schedule(s->plan)->family);
	else if (strcmp(key, "makespan") == 0)
		lua_pushnumber(L, m->makespan);
	else if (strcmp(key, "bubble_rate") == 0)
		lua_pushnumber(L, m->bubble_rate);
	else if (strcmp(key, "idle") == 0)
		lua_pushnumber(L, m->total_idle);
	else if (strcmp(key, "feasible") == 0)
		lua_pushboolean(L, m->feasible);
	else if (strcmp(key, "peak") == 0)
		pwl_push_doubles(L, &m->device[0].peak, m->ndevices,
		    sizeof *m->device);
	else if (strcmp(key, "busy") == 0)
		pwl_push_doubles(L, &m->device[0].busy, m->ndevices,
		    sizeof *m->device);
	else if (strcmp(key, "span") == 0)
		pwl_push_doubles(L, &m->device[0].span, m->ndevices,
		    sizeof *m->device);
	else if (strcmp(key, "objective") == 0)
		lua_pushnumber(L, s->objective);
	else if (strcmp(key, "bound") == 0)
		lua_pushnumber(L, s->bound);
	else if (strcmp(key, "gap") == 0)
		lua_pushnumber(L, s->gap);
	else if (strcmp(key, "optimal") == 0)
		lua_pushboolean(L, s->optimal);
	else if (strcmp(key, "start") == 0)
		lua_pushstring(L, s->start[0] != '\0' ? s->start : NULL);
	else if (strcmp(key, "ended") == 0)
		lua_pushstring(L, s->ended);
	else if (strcmp(key, "ops") == 0)
		pwl_push_ops(L, s);
	else
		pwl_fail(L, "schedule: no field '%s'", key);
}

/* Fields are computed on first use and kept (treat them as read-only). */
static int
pwl_schedule_index(lua_State *L)
{
	struct pwl_schedule *s = pwl_schedule_check(L, 1);
	const char *key = luaL_checkstring(L, 2);

	if (strcmp(key, "problem") == 0) {
		lua_getiuservalue(L, 1, 1);
		return 1;
	}
	lua_getiuservalue(L, 1, 2);
	if (lua_getfield(L, -1, key) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	pwl_schedule_field(L, s, key);
	lua_pushvalue(L, -1);
	lua_setfield(L, -3, key);
	return 1;
}

static int
pwl_schedule_tostring(lua_State *L)
{
	struct pwl_schedule *s = pwl_schedule_check(L, 1);
	const struct pw_metrics *m = pw_plan_metrics(s->plan);
	const char *family = pw_plan_schedule(s->plan)->family;
	char span[32], peak[32];
	double top = 0;
	int d;

	for (d = 0; d < m->ndevices; d++)
		if (m->device[d].peak > top)
			top = m->device[d].peak;
	lua_pushfstring(L, "schedule %s: makespan %s, bubble rate %f, peak %s%s",
	    family != NULL ? family : "(unnamed)",
	    pw_fmt_seconds(span, sizeof span, m->makespan),
	    m->bubble_rate, pw_fmt_bytes(peak, sizeof peak, top),
	    m->feasible ? "" : " (over a limit)");
	return 1;
}

void
pwl_open_schedule(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{ "__gc", pwl_schedule_gc },
		{ "__index", pwl_schedule_index },
		{ "__tostring", pwl_schedule_tostring },
		{ NULL, NULL }
	};
	static const luaL_Reg funcs[] = {
		{ "schedule", pwl_schedule_new },
		{ "solve", pwl_solve },
		{ "show", pwl_show },
		{ "compare", pwl_compare },
		{ NULL, NULL }
	};

	pwl_new_metatable(L, PWL_SCHEDULE, meta);
	luaL_setfuncs(L, funcs, 0);
}
