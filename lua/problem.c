/*
 * problem.c - pw.problem and the problem object.  A problem is built by
 * the C cost model (or from stages given as they are); scripts then
 * override what they know better, and everything ends up in the plain
 * arrays of a struct pw_problem.
 */
#include <float.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pwlua_int.h"

#define PWL_WHAT	"pw.problem"
/* The core's messages number from 0, as the file format does. */
#define PWL_CORE	" [devices and stages numbered from 0]"


/* ------------------------------------------------------------------ */
/* Ops and must-precede pairs                                          */

void
pwl_op_push(lua_State *L, struct pw_op op)
{
	lua_createtable(L, 0, 3);
	lua_pushstring(L, pw_kind_name(op.kind));
	lua_setfield(L, -2, "kind");
	lua_pushinteger(L, op.stage + 1);
	lua_setfield(L, -2, "stage");
	lua_pushinteger(L, op.mb + 1);
	lua_setfield(L, -2, "mb");
}

/* Whether the table at IDX is a list of N entries and nothing else: a
 * key beside them (t.x, t[N + 1], whether in the list part or not) would
 * be dropped unread. */
static bool
pwl_list_of(lua_State *L, int idx, size_t n)
{
	lua_Integer k;
	bool ok = lua_rawlen(L, idx) == n;

	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (ok && lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		ok = pwl_whole(L, -1, &k) && k >= 1 && (size_t)k <= n;
	}
	if (!ok)
		lua_pop(L, 1);
	return ok;
}

/* Reads a compute op of P at IDX: {kind = "F", stage = 1, mb = 1} or
 * {"F", 1, 1}. */
static struct pw_op
pwl_op_read(lua_State *L, int idx, const char *what,
    const struct pw_problem *p)
{
	static const char *const names[] = { "kind", "stage", "mb", NULL };
	struct pw_op op;
	int i, top = lua_gettop(L);

	idx = lua_absindex(L, idx);
	if (!lua_istable(L, idx))
		pwl_fail(L, "%s: must be an op such as {\"F\", stage, mb} (got "
		    "%s)", what, luaL_typename(L, idx));
	if (lua_rawgeti(L, idx, 1) != LUA_TNIL) {
		/* {"F", 1, 1} reads as {kind = "F", stage = 1, mb = 1}; more
		 * would be dropped unread, as beside a pair. */
		if (!pwl_list_of(L, idx, 3))
			pwl_fail(L, "%s: must be an op such as {\"F\", stage, "
			    "mb}: those three entries alone", what);
		lua_createtable(L, 0, 3);
		for (i = 0; names[i] != NULL; i++) {
			lua_rawgeti(L, idx, i + 1);
			lua_setfield(L, -2, names[i]);
		}
		idx = lua_gettop(L);
	}
	pwl_check_fields(L, idx, what, names, sizeof *names);
	if (lua_getfield(L, idx, "kind") != LUA_TSTRING ||
	    pw_kind_parse(lua_tostring(L, -1), &op.kind) != PW_OK ||
	    pw_kind_is_transfer(op.kind))
		pwl_fail(L, "%s: kind: must be \"F\", \"B\", \"W\" or \"BW\" "
		    "(got %s)", what, pwl_got(L, -1));
	op.stage = pwl_get_int(L, idx, what, "stage", PWL_NEED_INT, 1,
	    p->nstages) - 1;
	op.mb = pwl_get_int(L, idx, what, "mb", PWL_NEED_INT, 1,
	    p->microbatches) - 1;
	lua_settop(L, top);
	return op;
}

size_t
pwl_pins_count(lua_State *L, int idx, const char *what,
    const struct pw_problem *p)
{
	size_t n, most = pw_op_universe(p);

	if (!lua_istable(L, idx))
		pwl_fail(L, "%s: must be a list of {before, after} pairs (got "
		    "%s)", what, luaL_typename(L, idx));
	/* The length is a border the script chooses (t[2^62] = x makes
	 * one), not a count of what is there: bounded before anything is
	 * sized by it. */
	if ((n = lua_rawlen(L, idx)) > most)
		pwl_fail(L, "%s: %zu pairs is more than the problem's %zu ops",
		    what, n, most);
	return n;
}

void
pwl_pins_read(lua_State *L, int idx, const char *what, size_t n,
    const struct pw_problem *p, struct pw_pin *out)
{
	struct pw_error err;
	char where[128];
	size_t i;

	idx = lua_absindex(L, idx);
	for (i = 0; i < n; i++) {
		snprintf(where, sizeof where, "%s[%zu]", what, i + 1);
		if (lua_rawgeti(L, idx, (lua_Integer)i + 1) != LUA_TTABLE ||
		    !pwl_list_of(L, -1, 2))
			pwl_fail(L, "%s: must be a pair {before, after}", where);
		snprintf(where, sizeof where, "%s[%zu][1]", what, i + 1);
		lua_rawgeti(L, -1, 1);
		out[i].before = pwl_op_read(L, -1, where, p);
		snprintf(where, sizeof where, "%s[%zu][2]", what, i + 1);
		lua_rawgeti(L, -2, 2);
		out[i].after = pwl_op_read(L, -1, where, p);
		lua_pop(L, 3);
		if (pw_pin_check(p, &out[i], &err) != PW_OK)
			pwl_fail(L, "%s[%zu]: %s" PWL_CORE, what, i + 1,
			    err.msg);
	}
}

/* ------------------------------------------------------------------ */
/* pw.problem                                                          */

static const char *const pwl_problem_fields[] = {
	"name", "devices", "microbatches", "placement",
	"model", "hardware", "chunks", "layers_per_stage",	/* a model */
	"reserve", "reserve_fraction", "tp", "dp",
	"stages", "comm", "link",				/* raw stages */
	"static", "memory_limit", "offload", "cost",
	"objective", "time_limit", "precede",
	NULL
};

/* The stage costs scripts may override, by name; a stage given as it is
 * must state the NEEDed ones. */
static const struct {
	const char *name;
	size_t	offset;
	bool	need;
} pwl_costs[] = {
	{ "f", offsetof(struct pw_stage, f), true },
	{ "b", offsetof(struct pw_stage, b), true },
	{ "w", offsetof(struct pw_stage, w), true },
	{ "act", offsetof(struct pw_stage, act), true },
	{ "hold", offsetof(struct pw_stage, hold), false },
	{ "offload", offsetof(struct pw_stage, offload), false },
	{ "comm", offsetof(struct pw_stage, comm), false },
	{ NULL, 0, false },
};

static double *
pwl_cost_at(struct pw_stage *st, size_t k)
{
	return (double *)(void *)((char *)st + pwl_costs[k].offset);
}

/* Raises unless the spec (at 1) leaves out every field in NAMES. */
static void
pwl_refuse(lua_State *L, const char *const *names, const char *why)
{
	for (; *names != NULL; names++) {
		if (lua_getfield(L, 1, *names) != LUA_TNIL)
			pwl_fail(L, PWL_WHAT ": %s: %s", *names, why);
		lua_pop(L, 1);
	}
}

/* The problem of the model and hardware the spec names. */
static void
pwl_build_model(lua_State *L, struct pwl_problem *pb)
{
	static const char *const raw[] = { "stages", "comm", "link", NULL };
	struct pw_model m;
	struct pw_hardware hw;
	struct pw_split sp;
	struct pw_error err;
	lua_Integer k;
	int *layers = NULL;
	size_t i, n;
	int d, t;

	pwl_refuse(L, raw, "not with a model (the cost model gives them)");
	memset(&sp, 0, sizeof sp);
	lua_getfield(L, 1, "model");
	pwl_model_get(L, -1, PWL_WHAT ": model", &m);
	if (lua_getfield(L, 1, "hardware") == LUA_TNIL)
		pwl_fail(L, PWL_WHAT ": hardware: missing (a model needs the "
		    "hardware it runs on)");
	pwl_hardware_get(L, -1, PWL_WHAT ": hardware", &hw);

	sp.devices = pwl_get_int(L, 1, PWL_WHAT, "devices", PWL_NEED_INT, 1,
	    INT_MAX);
	sp.microbatches = pwl_get_int(L, 1, PWL_WHAT, "microbatches",
	    PWL_NEED_INT, 1, INT_MAX);
	sp.placement = pwl_get_option(L, 1, PWL_WHAT, "placement",
	    PW_PLACE_LOOP, pw_placement_names);
	sp.chunks = pwl_get_int(L, 1, PWL_WHAT, "chunks",
	    sp.placement == PW_PLACE_V ? 2 : 1, 1, INT_MAX);
	if ((long long)sp.devices * sp.chunks > INT_MAX)
		pwl_fail(L, PWL_WHAT ": chunks: %d devices x %d chunks is more "
		    "than %d stages", sp.devices, sp.chunks, INT_MAX);
	/* Before the charge, which would blame the microbatches. */
	if (pw_split_check_shape(&m, &sp, &err) != PW_OK)
		pwl_fail(L, PWL_WHAT ": %s", err.msg);
	pwl_problem_charge(L, pb, sp.devices, sp.devices * sp.chunks,
	    sp.microbatches, PWL_WHAT);
	if (lua_getfield(L, 1, "layers_per_stage") != LUA_TNIL) {
		n = (size_t)sp.devices * (size_t)sp.chunks;
		if (!lua_istable(L, -1) || lua_rawlen(L, -1) != n)
			pwl_fail(L, PWL_WHAT ": layers_per_stage: must list %zu "
			    "layer counts, one per stage", n);
		layers = lua_newuserdatauv(L, pwl_array_bytes(L, n,
		    sizeof *layers, PWL_WHAT ": layers_per_stage"), 0);
		for (i = 0; i < n; i++) {
			lua_rawgeti(L, -2, (lua_Integer)i + 1);
			if (!pwl_whole(L, -1, &k) || k < 1 ||
			    k > PW_MODEL_MAX_LAYERS)
				pwl_fail(L, PWL_WHAT ": layers_per_stage[%zu]: "
				    "must be a layer count from 1 to %d (got %s)",
				    i + 1, PW_MODEL_MAX_LAYERS, pwl_got(L, -1));
			layers[i] = (int)k;
			lua_pop(L, 1);
		}
	}
	sp.layers_per_stage = layers;
	/* One finite limit for all goes into the split (and the origin);
	 * any other form is applied later, to a problem built without
	 * one. */
	t = lua_getfield(L, 1, "memory_limit");
	if (t == LUA_TNUMBER && isfinite(lua_tonumber(L, -1)))
		sp.memory_limit = lua_tonumber(L, -1);
	else if (t != LUA_TNIL)
		sp.memory_limit = DBL_MAX;
	t = lua_getfield(L, 1, "offload");
	if (t != LUA_TNIL && t != LUA_TBOOLEAN && t != LUA_TTABLE)
		pwl_fail(L, PWL_WHAT ": offload: must be true, false or a list "
		    "of stages (got %s)", luaL_typename(L, -1));
	sp.offload = t == LUA_TTABLE || lua_toboolean(L, -1);
	sp.reserve_bytes = pwl_get_number(L, 1, PWL_WHAT, "reserve", 0);
	sp.reserve_fraction = pwl_get_number(L, 1, PWL_WHAT,
	    "reserve_fraction", 0);
	sp.tp = pwl_get_int(L, 1, PWL_WHAT, "tp", 0, 0, INT_MAX);
	sp.dp = pwl_get_int(L, 1, PWL_WHAT, "dp", 0, 0, INT_MAX);

	if (pw_cost_problem(&m, &hw, &sp, &pb->p, &err) != PW_OK)
		pwl_fail(L, PWL_WHAT ": %s" PWL_CORE, err.msg);
	if (sp.memory_limit == DBL_MAX)
		for (d = 0; d < pb->p->devices; d++)
			pb->p->memory[d].limit = hw.memory;
}

/* Reads the link of a problem given by its stages. */
static void
pwl_build_link(lua_State *L, struct pw_problem *p)
{
	static const char *const fields[] = { "d2h", "h2d", "latency",
	    "duplex", "groups", NULL };
	const char *what = PWL_WHAT ": link";
	size_t g, i, ngroups, n;
	lua_Integer k;
	int d, next;

	if (lua_getfield(L, 1, "link") == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (!lua_istable(L, -1))
		pwl_fail(L, "%s: must be a table (got %s)", what,
		    luaL_typename(L, -1));
	pwl_check_fields(L, -1, what, fields, sizeof *fields);
	pw_problem_set_link(p,
	    pwl_get_number(L, -1, what, "d2h", PWL_NEED_NUMBER),
	    pwl_get_number(L, -1, what, "h2d", PWL_NEED_NUMBER),
	    pwl_get_number(L, -1, what, "latency", 0),
	    pwl_get_bool(L, -1, what, "duplex", true));
	if (lua_getfield(L, -1, "groups") == LUA_TNIL) {
		lua_pop(L, 2);
		return;
	}
	if (!lua_istable(L, -1))
		pwl_fail(L, "%s.groups: must be a list of lists of devices", what);
	for (d = 0; d < p->devices; d++)
		p->link.group[d] = -1;
	ngroups = lua_rawlen(L, -1);
	for (g = 0; g < ngroups; g++) {
		n = lua_rawgeti(L, -1, (lua_Integer)g + 1) == LUA_TTABLE ?
		    (size_t)lua_rawlen(L, -1) : 0;
		if (n == 0)
			pwl_fail(L, "%s.groups[%zu]: must be a non-empty list of "
			    "devices", what, g + 1);
		for (i = 0; i < n; i++) {
			lua_rawgeti(L, -1, (lua_Integer)i + 1);
			if (!pwl_whole(L, -1, &k) || k < 1 || k > p->devices)
				pwl_fail(L, "%s.groups[%zu][%zu]: must be a device "
				    "from 1 to %d (got %s)", what, g + 1, i + 1,
				    p->devices, pwl_got(L, -1));
			d = (int)k;
			if (p->link.group[d - 1] != -1)
				pwl_fail(L, "%s.groups[%zu][%zu]: device %d is "
				    "already in group %d", what, g + 1, i + 1, d,
				    p->link.group[d - 1] + 1);
			p->link.group[d - 1] = (int)g;
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	/* Devices in no group get one each, numbered after the listed. */
	next = (int)ngroups;
	for (d = 0; d < p->devices; d++)
		if (p->link.group[d] == -1)
			p->link.group[d] = next++;
	p->link.ngroups = next;
	lua_pop(L, 2);
}

/* The problem of the stages the spec lists. */
static void
pwl_build_raw(lua_State *L, struct pwl_problem *pb)
{
	static const char *const modelled[] = { "hardware", "chunks",
	    "layers_per_stage", "reserve", "reserve_fraction", "tp", "dp",
	    NULL };
	static const char *const stage_fields[] = { "device", "f", "b", "w",
	    "act", "hold", "offload", "comm", NULL };
	struct pw_problem *p;
	struct pw_error placed;
	char what[64];
	int devices, m, n, s, placement, rc;
	size_t k;
	double comm;

	pwl_refuse(L, modelled, "needs a model");
	devices = pwl_get_int(L, 1, PWL_WHAT, "devices", PWL_NEED_INT, 1,
	    INT_MAX);
	m = pwl_get_int(L, 1, PWL_WHAT, "microbatches", PWL_NEED_INT, 1,
	    INT_MAX);
	placement = pwl_get_option(L, 1, PWL_WHAT, "placement", PW_PLACE_LOOP,
	    pw_placement_names);
	comm = pwl_get_number(L, 1, PWL_WHAT, "comm", 0);
	/* Checked here, not with the problem: the stages' default comm is
	 * this one, and -inf is the mark of a field they must give. */
	if (!(comm >= 0) || isinf(comm))
		pwl_fail(L, PWL_WHAT ": comm: must be a finite non-negative "
		    "number (got %g)", comm);
	if (lua_getfield(L, 1, "stages") != LUA_TTABLE ||
	    lua_rawlen(L, -1) == 0 || lua_rawlen(L, -1) > INT_MAX)
		pwl_fail(L, PWL_WHAT ": stages: give a list of stages, or a "
		    "model and hardware (got %s)", luaL_typename(L, -1));
	n = (int)lua_rawlen(L, -1);

	pwl_problem_charge(L, pb, devices, n, m, PWL_WHAT);
	pb->p = p = pw_problem_new(devices, n, m);
	pw_problem_set_comm(p, comm);
	/* The placement places the stages that name no device. */
	rc = placement == PW_PLACE_V ? pw_problem_place_v(p, &placed) :
	    pw_problem_place_loop(p, &placed);
	for (s = 0; s < n; s++) {
		snprintf(what, sizeof what, PWL_WHAT ": stages[%d]", s + 1);
		if (lua_rawgeti(L, -1, s + 1) != LUA_TTABLE)
			pwl_fail(L, "%s: must be a table (got %s)", what,
			    luaL_typename(L, -1));
		pwl_check_fields(L, -1, what, stage_fields,
		    sizeof *stage_fields);
		if (rc != PW_OK) {
			if (lua_getfield(L, -1, "device") == LUA_TNIL)
				pwl_fail(L, "%s: device: missing, and the "
				    "placement cannot place it: %s", what,
				    placed.msg);
			lua_pop(L, 1);
		}
		p->stages[s].device = pwl_get_int(L, -1, what, "device",
		    p->stages[s].device + 1, 1, devices) - 1;
		/* Absent optional costs keep what is there: 0, and comm. */
		for (k = 0; pwl_costs[k].name != NULL; k++)
			*pwl_cost_at(&p->stages[s], k) = pwl_get_number(L, -1,
			    what, pwl_costs[k].name, pwl_costs[k].need ?
			    PWL_NEED_NUMBER : *pwl_cost_at(&p->stages[s], k));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	pwl_build_link(L, p);
	if (lua_getfield(L, 1, "offload") != LUA_TNIL &&
	    !lua_istable(L, -1))
		pwl_fail(L, PWL_WHAT ": offload: a problem given by its stages "
		    "has the link it states; offload takes a list of the stages "
		    "that may offload");
	lua_pop(L, 1);
}

/*
 * Applies the per-device field NAME of the spec to the struct
 * pw_device_memory member at OFFSET: a number for every device, a list
 * with one per device, or function(device, default) returning a number
 * (nil keeps the default).
 */
static void
pwl_per_device(lua_State *L, struct pw_problem *p, const char *name,
    size_t offset)
{
	double *v;
	int d, t;

	t = lua_getfield(L, 1, name);
	if (t == LUA_TTABLE && lua_rawlen(L, -1) != (size_t)p->devices)
		pwl_fail(L, PWL_WHAT ": %s: must list %d values, one per device "
		    "(got %zu)", name, p->devices, (size_t)lua_rawlen(L, -1));
	if (t != LUA_TNIL && t != LUA_TNUMBER && t != LUA_TTABLE &&
	    t != LUA_TFUNCTION)
		pwl_fail(L, PWL_WHAT ": %s: must be a number, a list or a "
		    "function (got %s)", name, luaL_typename(L, -1));
	for (d = 0; d < p->devices && t != LUA_TNIL; d++) {
		v = (double *)(void *)((char *)&p->memory[d] + offset);
		if (t == LUA_TNUMBER) {
			*v = pwl_tonumber(L, -1);
			continue;
		}
		if (t == LUA_TTABLE)
			lua_rawgeti(L, -1, d + 1);
		else {
			lua_pushvalue(L, -1);
			lua_pushinteger(L, d + 1);
			lua_pushnumber(L, *v);
			lua_call(L, 2, 1);
		}
		if (lua_type(L, -1) == LUA_TNUMBER)
			*v = pwl_tonumber(L, -1);
		else if (t == LUA_TTABLE || !lua_isnil(L, -1))
			pwl_fail(L, PWL_WHAT ": %s: the value for device %d must "
			    "be a number (got %s)", name, d + 1,
			    luaL_typename(L, -1));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* offload = {stages...}: every other stage keeps its activations.  One
 * pass over the list marks the stages (a userdata the cap is charged
 * for), one over the stages reads the marks. */
static void
pwl_offload_only(lua_State *L, struct pw_problem *p)
{
	bool *listed;
	lua_Integer k;
	size_t i, n;
	int s;

	if (lua_getfield(L, 1, "offload") != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	listed = lua_newuserdatauv(L, (size_t)p->nstages, 0);
	memset(listed, 0, (size_t)p->nstages);
	n = lua_rawlen(L, -2);
	/* A border past the list's end finds nil there and raises. */
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -2, (lua_Integer)i);
		if (!pwl_whole(L, -1, &k) || k < 1 || k > p->nstages)
			pwl_fail(L, PWL_WHAT ": offload[%zu]: must be a stage from "
			    "1 to %d (got %s)", i, p->nstages, pwl_got(L, -1));
		listed[k - 1] = true;
		lua_pop(L, 1);
	}
	for (s = 0; s < p->nstages; s++)
		if (!listed[s])
			p->stages[s].offload = 0;
	lua_pop(L, 2);
}

/* cost = function(stage, kind, default) or {[stage] = {kind = value}}. */
static void
pwl_cost_overrides(lua_State *L, struct pw_problem *p)
{
	char what[64];
	lua_Integer s;
	size_t k;
	double *v;
	int t;

	t = lua_getfield(L, 1, "cost");
	if (t == LUA_TFUNCTION) {
		for (s = 0; s < p->nstages; s++)
			for (k = 0; pwl_costs[k].name != NULL; k++) {
				v = pwl_cost_at(&p->stages[s], k);
				lua_pushvalue(L, -1);
				lua_pushinteger(L, s + 1);
				lua_pushstring(L, pwl_costs[k].name);
				lua_pushnumber(L, *v);
				lua_call(L, 3, 1);
				if (lua_type(L, -1) == LUA_TNUMBER)
					*v = pwl_tonumber(L, -1);
				else if (!lua_isnil(L, -1))
					pwl_fail(L, PWL_WHAT ": cost(%d, \"%s\") "
					    "returned a %s; a number, or nil for "
					    "the default", (int)s + 1,
					    pwl_costs[k].name,
					    luaL_typename(L, -1));
				lua_pop(L, 1);
			}
	} else if (t == LUA_TTABLE) {
		lua_pushnil(L);
		while (lua_next(L, -2) != 0) {
			if (!pwl_whole(L, -2, &s))
				s = 0;
			if (s < 1 || s > p->nstages || !lua_istable(L, -1))
				pwl_fail(L, PWL_WHAT ": cost: must map stages 1 to "
				    "%d to tables of costs", p->nstages);
			snprintf(what, sizeof what, PWL_WHAT ": cost[%d]",
			    (int)s);
			pwl_check_fields(L, -1, what, pwl_costs,
			    sizeof pwl_costs[0]);
			for (k = 0; pwl_costs[k].name != NULL; k++) {
				v = pwl_cost_at(&p->stages[s - 1], k);
				*v = pwl_get_number(L, -1, what,
				    pwl_costs[k].name, *v);
			}
			lua_pop(L, 1);
		}
	} else if (t != LUA_TNIL)
		pwl_fail(L, PWL_WHAT ": cost: must be a function or a table "
		    "(got %s)", luaL_typename(L, -1));
	lua_pop(L, 1);
}

/* The split's limit, before the reserve, that leaves LIMIT: the origin's
 * own when it does (exactly), else the one that undoes the reserve (the
 * reader rebuilds and compares). */
double
pwl_split_limit(const struct pw_origin *o, double limit)
{
	const struct pw_split *sp = &o->split;
	double has = sp->memory_limit > 0 ? sp->memory_limit :
	    o->hardware.memory;

	if (limit == has - pw_split_reserve(sp, has))
		return has;
	return (limit + sp->reserve_bytes) / (1 - sp->reserve_fraction);
}

/*
 * Keeps P's origin only while it still gives exactly P (as the JSON
 * reader does), so that no family splits a stale model behind the
 * script's back; one finite limit for all devices goes into it.
 */
static void
pwl_origin_refresh(struct pw_problem *p)
{
	struct pw_origin *o = p->origin;
	struct pw_problem *again = NULL;
	struct pw_error err;
	double limit = p->memory[0].limit, has, want;
	bool uniform = true;
	int d;

	if (o == NULL)
		return;
	for (d = 1; d < p->devices; d++)
		uniform = uniform && p->memory[d].limit == limit;
	has = o->split.memory_limit > 0 ? o->split.memory_limit :
	    o->hardware.memory;
	/* A limit stated per device is what is left after the reserve;
	 * none (math.huge) is the split's own none. */
	want = isfinite(limit) ? pwl_split_limit(o, limit) : DBL_MAX;
	if (uniform && want != has)
		o->split.memory_limit = want;
	if (!uniform || pw_cost_problem(&o->model, &o->hardware, &o->split,
	    &again, &err) != PW_OK || !pw_problem_same(again, p)) {
		pw_origin_free(p->origin);
		p->origin = NULL;
	}
	pw_problem_free(again);
}

/* The solver options the spec states. */
static void
pwl_constraints(lua_State *L, struct pwl_problem *pb)
{
	struct pwlua_solve_prefs *prefs = &pb->prefs;
	size_t n;
	int objective;
	bool given;

	objective = pwl_get_option(L, 1, PWL_WHAT, "objective", -1,
	    pw_objective_names);
	prefs->has_objective = objective >= 0;
	prefs->objective = prefs->has_objective ?
	    (enum pw_objective)objective : PW_OBJ_MAKESPAN;
	/* 0 stands for none given, so a given 0 must not pass as that. */
	given = lua_getfield(L, 1, "time_limit") != LUA_TNIL;
	lua_pop(L, 1);
	prefs->time_limit = pwl_get_number(L, 1, PWL_WHAT, "time_limit", 0);
	if (given && !(prefs->time_limit > 0 && isfinite(prefs->time_limit)))
		pwl_fail(L, PWL_WHAT ": time_limit: must be a positive number "
		    "of seconds (got %g)", prefs->time_limit);
	if (lua_getfield(L, 1, "precede") != LUA_TNIL &&
	    (n = pwl_pins_count(L, -1, PWL_WHAT ": precede", pb->p)) > 0) {
		pwl_charge(L, &pb->charged, pwl_array_bytes(L, n,
		    sizeof *prefs->pins, PWL_WHAT ": precede"),
		    PWL_WHAT ": precede");
		prefs->pins = pw_xcalloc(n, sizeof *prefs->pins);
		prefs->npins = n;
		pwl_pins_read(L, -1, PWL_WHAT ": precede", n, pb->p,
		    prefs->pins);
	}
	lua_pop(L, 1);
}

/* pw.problem{...}: docs/lua.md lists the fields. */
static int
pwl_problem_new(lua_State *L)
{
	struct pwl_problem *pb;
	struct pw_error err;
	const char *name;
	size_t named = 0;
	int t;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	pwl_check_fields(L, 1, PWL_WHAT, pwl_problem_fields,
	    sizeof *pwl_problem_fields);
	pb = pwl_problem_push(L);
	t = lua_getfield(L, 1, "model");
	lua_pop(L, 1);
	if (t != LUA_TNIL)
		pwl_build_model(L, pb);
	else
		pwl_build_raw(L, pb);
	lua_settop(L, 2);
	/* Its names are the script's strings, copied: charged before. */
	if ((name = pwl_get_string(L, 1, PWL_WHAT, "name", NULL)) != NULL) {
		named = strlen(name) + 1;
		pwl_charge(L, &pb->charged, named, PWL_WHAT ": name");
		free(pb->p->name);
		pb->p->name = pw_xstrdup(name);
	}
	pwl_per_device(L, pb->p, "static",
	    offsetof(struct pw_device_memory, static_bytes));
	/* A model's one finite limit is its split's, already less the
	 * reserve. */
	t = lua_getfield(L, 1, "memory_limit");
	if (pb->p->origin == NULL || t != LUA_TNUMBER ||
	    !isfinite(lua_tonumber(L, -1)))
		pwl_per_device(L, pb->p, "memory_limit",
		    offsetof(struct pw_device_memory, limit));
	lua_pop(L, 1);
	pwl_cost_overrides(L, pb->p);
	pwl_offload_only(L, pb->p);
	if (pw_problem_validate(pb->p, PWL_WHAT, &err) != PW_OK)
		pwl_fail(L, "%s" PWL_CORE, err.msg);
	pwl_origin_refresh(pb->p);
	pwl_charge(L, &pb->charged, pwl_problem_text_bytes(pb->p) - named,
	    PWL_WHAT);
	pwl_constraints(L, pb);
	return 1;
}

/* ------------------------------------------------------------------ */
/* The problem object                                                  */

static int
pwl_problem_gc(lua_State *L)
{
	struct pwl_problem *pb = luaL_checkudata(L, 1, PWL_PROBLEM);

	pw_problem_free(pb->p);
	pwlua_solve_prefs_free(&pb->prefs);
	pwl_release(L, &pb->charged);
	memset(pb, 0, sizeof *pb);
	return 0;
}

size_t
pwl_problem_bytes(int devices, int nstages)
{
	return sizeof (struct pw_problem) + (size_t)nstages *
	    sizeof (struct pw_stage) + (size_t)devices *
	    (sizeof (struct pw_device_memory) + sizeof (int));
}

size_t
pwl_problem_text_bytes(const struct pw_problem *p)
{
	const struct pw_origin *o = p->origin;
	size_t n = p->name != NULL ? strlen(p->name) + 1 : 0;

	if (o != NULL) {
		n += sizeof *o;
		n += o->model.name != NULL ? strlen(o->model.name) + 1 : 0;
		n += o->hardware.name != NULL ? strlen(o->hardware.name) + 1 : 0;
		n += o->split.layers_per_stage != NULL ? (size_t)p->nstages *
		    sizeof (int) : 0;
	}
	return n;
}

void
pwl_problem_charge(lua_State *L, struct pwl_problem *pb, int devices,
    int nstages, int microbatches, const char *what)
{
	struct pw_error err;

	if (pw_problem_check_counts(devices, nstages, microbatches, what,
	    &err) != PW_OK)
		pwl_fail(L, "%s", err.msg);
	pwl_charge(L, &pb->charged, pwl_problem_bytes(devices, nstages), what);
}

struct pwl_problem *
pwl_problem_push(lua_State *L)
{
	struct pwl_problem *pb = lua_newuserdatauv(L, sizeof *pb, 1);

	memset(pb, 0, sizeof *pb);
	luaL_setmetatable(L, PWL_PROBLEM);
	lua_newtable(L);
	lua_setiuservalue(L, -2, 1);
	return pb;
}

void
pwl_problem_inherit(struct pwl_problem *to, const struct pwl_problem *from)
{
	to->prefs.has_objective = from->prefs.has_objective;
	to->prefs.objective = from->prefs.objective;
	to->prefs.time_limit = from->prefs.time_limit;
}

struct pwl_problem *
pwl_problem_test(lua_State *L, int idx)
{
	struct pwl_problem *pb = luaL_testudata(L, idx, PWL_PROBLEM);

	return pb != NULL && pb->p != NULL ? pb : NULL;
}

struct pwl_problem *
pwl_problem_check(lua_State *L, int arg)
{
	struct pwl_problem *pb = pwl_problem_test(L, arg);

	if (pb == NULL)
		luaL_typeerror(L, arg, "problem");
	return pb;
}

static void
pwl_push_stages(lua_State *L, const struct pw_problem *p)
{
	size_t k;
	int s;

	lua_createtable(L, p->nstages, 0);
	for (s = 0; s < p->nstages; s++) {
		lua_createtable(L, 0, 8);
		lua_pushinteger(L, p->stages[s].device + 1);
		lua_setfield(L, -2, "device");
		for (k = 0; pwl_costs[k].name != NULL; k++) {
			lua_pushnumber(L, *pwl_cost_at(&p->stages[s], k));
			lua_setfield(L, -2, pwl_costs[k].name);
		}
		lua_rawseti(L, -2, s + 1);
	}
}

static void
pwl_push_link(lua_State *L, const struct pw_problem *p)
{
	int d, g, n;

	if (!p->link.present) {
		lua_pushnil(L);
		return;
	}
	lua_createtable(L, 0, 5);
	lua_pushnumber(L, p->link.d2h);
	lua_setfield(L, -2, "d2h");
	lua_pushnumber(L, p->link.h2d);
	lua_setfield(L, -2, "h2d");
	lua_pushnumber(L, p->link.latency);
	lua_setfield(L, -2, "latency");
	lua_pushboolean(L, p->link.duplex);
	lua_setfield(L, -2, "duplex");
	lua_createtable(L, p->link.ngroups, 0);
	for (g = 0; g < p->link.ngroups; g++) {
		lua_newtable(L);
		for (d = 0, n = 0; d < p->devices; d++) {
			if (p->link.group[d] != g)
				continue;
			lua_pushinteger(L, d + 1);
			lua_rawseti(L, -2, ++n);
		}
		lua_rawseti(L, -2, g + 1);
	}
	lua_setfield(L, -2, "groups");
}

static void
pwl_push_pins(lua_State *L, const struct pwl_problem *pb)
{
	size_t i;

	lua_createtable(L, (int)pb->prefs.npins, 0);
	for (i = 0; i < pb->prefs.npins; i++) {
		lua_createtable(L, 2, 0);
		pwl_op_push(L, pb->prefs.pins[i].before);
		lua_rawseti(L, -2, 1);
		pwl_op_push(L, pb->prefs.pins[i].after);
		lua_rawseti(L, -2, 2);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* Pushes the field KEY of a problem object; raises for unknown keys. */
static void
pwl_problem_field(lua_State *L, const struct pwl_problem *pb,
    const char *key)
{
	const struct pw_problem *p = pb->p;
	const char *placement = pw_problem_is_loop(p) ?
	    pw_placement_names[PW_PLACE_LOOP] : pw_problem_is_v(p) ?
	    pw_placement_names[PW_PLACE_V] : NULL;

	if (strcmp(key, "name") == 0)
		lua_pushstring(L, p->name);
	else if (strcmp(key, "devices") == 0)
		lua_pushinteger(L, p->devices);
	else if (strcmp(key, "microbatches") == 0)
		lua_pushinteger(L, p->microbatches);
	else if (strcmp(key, "nstages") == 0)
		lua_pushinteger(L, p->nstages);
	else if (strcmp(key, "chunks") == 0 && placement != NULL)
		lua_pushinteger(L, p->nstages / p->devices);
	else if (strcmp(key, "placement") == 0)
		lua_pushstring(L, placement);
	else if (strcmp(key, "comm") == 0)
		lua_pushnumber(L, p->comm);
	else if (strcmp(key, "stages") == 0)
		pwl_push_stages(L, p);
	else if (strcmp(key, "static") == 0)
		pwl_push_doubles(L, &p->memory[0].static_bytes, p->devices,
		    sizeof *p->memory);
	else if (strcmp(key, "memory_limit") == 0)
		pwl_push_doubles(L, &p->memory[0].limit, p->devices,
		    sizeof *p->memory);
	else if (strcmp(key, "link") == 0)
		pwl_push_link(L, p);
	else if (strcmp(key, "model") == 0 && p->origin != NULL)
		pwl_model_push(L, &p->origin->model);
	else if (strcmp(key, "hardware") == 0 && p->origin != NULL)
		pwl_hardware_push(L, &p->origin->hardware);
	else if (strcmp(key, "objective") == 0 && pb->prefs.has_objective)
		lua_pushstring(L, pw_objective_names[pb->prefs.objective]);
	else if (strcmp(key, "time_limit") == 0 && pb->prefs.time_limit > 0)
		lua_pushnumber(L, pb->prefs.time_limit);
	else if (strcmp(key, "precede") == 0)
		pwl_push_pins(L, pb);
	else if (strcmp(key, "chunks") == 0 || strcmp(key, "model") == 0 ||
	    strcmp(key, "hardware") == 0 || strcmp(key, "objective") == 0 ||
	    strcmp(key, "time_limit") == 0)
		lua_pushnil(L);
	else
		pwl_fail(L, "problem: no field '%s'", key);
}

/* Fields are computed on first use and kept (treat them as read-only). */
static int
pwl_problem_index(lua_State *L)
{
	struct pwl_problem *pb = pwl_problem_check(L, 1);
	const char *key = luaL_checkstring(L, 2);

	lua_getiuservalue(L, 1, 1);
	if (lua_getfield(L, -1, key) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	pwl_problem_field(L, pb, key);
	lua_pushvalue(L, -1);
	lua_setfield(L, -3, key);
	return 1;
}

static int
pwl_problem_tostring(lua_State *L)
{
	const struct pw_problem *p = pwl_problem_check(L, 1)->p;
	char counts[96];

	lua_pushfstring(L, "problem %s: %s", p->name != NULL ? p->name :
	    "(unnamed)", pw_problem_counts(p, counts, sizeof counts));
	return 1;
}

/* Equal problems have the same devices, stages, costs, memory and link
 * (names and origins aside). */
static int
pwl_problem_eq(lua_State *L)
{
	struct pwl_problem *a = pwl_problem_test(L, 1);
	struct pwl_problem *b = pwl_problem_test(L, 2);

	lua_pushboolean(L, a != NULL && b != NULL && pw_problem_same(a->p,
	    b->p));
	return 1;
}

void
pwl_open_problem(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{ "__gc", pwl_problem_gc },
		{ "__index", pwl_problem_index },
		{ "__tostring", pwl_problem_tostring },
		{ "__eq", pwl_problem_eq },
		{ NULL, NULL }
	};

	pwl_new_metatable(L, PWL_PROBLEM, meta);
	lua_pushcfunction(L, pwl_problem_new);
	lua_setfield(L, -2, "problem");
}
