/*
 * module.c - the module table "pipewright" (units, pw.families, pw.load,
 * pw.fmt_*) and the helpers every file of lua/ reads tables with.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pwlua_int.h"

#define PWL_BOX		"pw.box"

/* Units scripts multiply by: pw.GiB, pw.ms, ... */
static const struct {
	const char *name;
	double	value;
} pwl_units[] = {
	{ "KiB", 1024.0 },
	{ "MiB", 1048576.0 },
	{ "GiB", 1073741824.0 },
	{ "TiB", 1099511627776.0 },
	{ "KB", 1e3 },
	{ "MB", 1e6 },
	{ "GB", 1e9 },
	{ "TB", 1e12 },
	{ "TFLOPS", 1e12 },
	{ "s", 1.0 },
	{ "ms", 1e-3 },
	{ "us", 1e-6 },
};

int
pwl_fail(lua_State *L, const char *fmt, ...)
{
	char buf[sizeof ((struct pw_error *)NULL)->msg + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return luaL_error(L, "%s", buf);
}

/* A box: its pointer first, as pwl_box returns it. */
struct pwl_box {
	void	*p;
	size_t	charged;
	void	(*destroy)(void *);
};

static int
pwl_box_gc(lua_State *L)
{
	struct pwl_box *box = luaL_checkudata(L, 1, PWL_BOX);

	if (box->p != NULL)
		box->destroy(box->p);
	box->p = NULL;
	pwl_release(L, &box->charged);
	return 0;
}

void **
pwl_box(lua_State *L, size_t bytes, const char *what)
{
	return pwl_box_with(L, bytes, what, free);
}

void **
pwl_box_with(lua_State *L, size_t bytes, const char *what,
    void (*destroy)(void *))
{
	struct pwl_box *box = lua_newuserdatauv(L, sizeof *box, 0);

	box->p = NULL;
	box->charged = 0;
	box->destroy = destroy;
	luaL_setmetatable(L, PWL_BOX);
	pwl_charge(L, &box->charged, bytes, what);
	return &box->p;
}

size_t
pwl_array_bytes(lua_State *L, size_t n, size_t size, const char *what)
{
	char bytes[32];

	if (size != 0 && n > SIZE_MAX / size)
		pwl_fail(L, "%s: %zu records of %s do not fit in memory",
		    what, n, pw_fmt_bytes(bytes, sizeof bytes, (double)size));
	return n * size;
}

void
pwl_lock(lua_State *L)
{
	lua_pushliteral(L, PWL_LOCKED);
	lua_setfield(L, -2, "__metatable");
}

/* __newindex of pipewright's objects: what they hold is read-only. */
static int
pwl_readonly(lua_State *L)
{
	const char *what = luaL_getmetafield(L, 1, "__name") == LUA_TSTRING ?
	    lua_tostring(L, -1) : "object";

	if (lua_type(L, 2) == LUA_TSTRING)
		return luaL_error(L, "%s: '%s' cannot be set (its fields are "
		    "read-only: make a new one)", what, lua_tostring(L, 2));
	return luaL_error(L, "%s: its fields are read-only (make a new one)",
	    what);
}

void
pwl_new_metatable(lua_State *L, const char *name, const luaL_Reg *meta)
{
	luaL_newmetatable(L, name);
	lua_pushcfunction(L, pwl_readonly);
	lua_setfield(L, -2, "__newindex");
	luaL_setfuncs(L, meta, 0);
	pwl_lock(L);
	lua_pop(L, 1);
}

/* Whether KEY is among the names of NAMES (see pwl_check_fields). */
static bool
pwl_known(const char *key, const void *names, size_t stride)
{
	const char *const *name;
	const char *p;

	for (p = names; *(name = (const char *const *)(const void *)p) != NULL;
	    p += stride)
		if (strcmp(*name, key) == 0)
			return true;
	return false;
}

void
pwl_check_fields(lua_State *L, int idx, const char *what, const void *names,
    size_t stride)
{
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx) != 0) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING) {
			pwl_fail(L, "%s: unexpected %s key; fields are given by "
			    "name", what, luaL_typename(L, -1));
		}
		if (!pwl_known(lua_tostring(L, -1), names, stride))
			pwl_fail(L, "%s: unknown field '%s'", what,
			    lua_tostring(L, -1));
	}
}

/* Pushes the field NAME of the table at IDX; whether it is absent. */
static bool
pwl_field(lua_State *L, int idx, const char *what, const char *name,
    bool need)
{
	if (lua_getfield(L, idx, name) != LUA_TNIL)
		return false;
	if (need)
		pwl_fail(L, "%s: missing field '%s'", what, name);
	lua_pop(L, 1);
	return true;
}

/* Pushes the field NAME of the table at IDX, failing unless it is of Lua
 * type TYPE (WANT in words); whether it is absent. */
static bool
pwl_typed(lua_State *L, int idx, const char *what, const char *name,
    bool need, int type, const char *want)
{
	if (pwl_field(L, idx, what, name, need))
		return true;
	if (lua_type(L, -1) != type)
		pwl_fail(L, "%s: %s: must be %s (got %s)", what, name, want,
		    luaL_typename(L, -1));
	return false;
}

double
pwl_get_number(lua_State *L, int idx, const char *what, const char *name,
    double def)
{
	double v;

	if (pwl_typed(L, idx, what, name, def == PWL_NEED_NUMBER, LUA_TNUMBER,
	    "a number"))
		return def;
	v = pwl_tonumber(L, -1);
	lua_pop(L, 1);
	return v;
}

lua_Number
pwl_tonumber(lua_State *L, int idx)
{
	lua_Number x = lua_tonumber(L, idx);

	return isnan(x) ? NAN : x;
}

const char *
pwl_got(lua_State *L, int idx)
{
	if (lua_type(L, idx) == LUA_TNUMBER && isnan(lua_tonumber(L, idx))) {
		lua_pushliteral(L, "nan");
		return "nan";
	}
	return luaL_tolstring(L, idx, NULL);
}

bool
pwl_whole(lua_State *L, int idx, lua_Integer *out)
{
	int ok;

	if (lua_type(L, idx) != LUA_TNUMBER)
		return false;
	*out = lua_tointegerx(L, idx, &ok);
	return ok != 0;
}

lua_Integer
pwl_get_integer(lua_State *L, int idx, const char *what, const char *name,
    lua_Integer def, lua_Integer min, lua_Integer max)
{
	lua_Integer v = 0;
	lua_Number x;

	if (pwl_typed(L, idx, what, name, def == PWL_NEED_INTEGER,
	    LUA_TNUMBER, "a whole number"))
		return def;
	if (!pwl_whole(L, -1, &v)) {
		x = lua_tonumber(L, -1);
		/* Whole but beyond any integer (1e300, inf): the range is
		 * what is wrong. */
		if (x == floor(x))
			pwl_fail(L, "%s: %s: must be from %lld to %lld (got "
			    "%.*g)", what, name, (long long)min,
			    (long long)max, pw_exact_precision(x), x);
		pwl_fail(L, "%s: %s: must be a whole number (got %s)", what,
		    name, pwl_got(L, -1));
	}
	if (v < min || v > max)
		pwl_fail(L, "%s: %s: must be from %lld to %lld (got %lld)",
		    what, name, (long long)min, (long long)max, (long long)v);
	lua_pop(L, 1);
	return v;
}

int
pwl_get_int(lua_State *L, int idx, const char *what, const char *name,
    int def, int min, int max)
{
	return (int)pwl_get_integer(L, idx, what, name, def == PWL_NEED_INT ?
	    PWL_NEED_INTEGER : def, min, max);
}

bool
pwl_get_bool(lua_State *L, int idx, const char *what, const char *name,
    bool def)
{
	bool v;

	if (pwl_typed(L, idx, what, name, false, LUA_TBOOLEAN,
	    "true or false"))
		return def;
	v = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

void
pwl_check_text(lua_State *L, const char *s, size_t len, const char *what,
    const char *name)
{
	if (len > PW_TEXT_MAX)
		pwl_fail(L, "%s: %s: longer than 1 MiB", what, name);
	if (strlen(s) != len || !pw_text_valid(s))
		pwl_fail(L, "%s: %s: must be UTF-8 text without NUL bytes", what,
		    name);
}

const char *
pwl_get_string(lua_State *L, int idx, const char *what, const char *name,
    const char *def)
{
	const char *v;

	size_t len;

	if (pwl_typed(L, idx, what, name, false, LUA_TSTRING, "a string"))
		return def;
	v = lua_tolstring(L, -1, &len);
	pwl_check_text(L, v, len, what, name);
	lua_pop(L, 1);
	return v;
}

void
pwl_opts_arg(lua_State *L, int arg)
{
	/* An empty table pushed after the settop, which would drop it above
	 * a nil argument. */
	if (lua_isnoneornil(L, arg)) {
		lua_settop(L, arg - 1);
		lua_newtable(L);
	} else
		luaL_checktype(L, arg, LUA_TTABLE);
	lua_settop(L, arg);
}

void
pwl_push_doubles(lua_State *L, const double *first, int n, size_t stride)
{
	int i;

	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_pushnumber(L, *(const double *)(const void *)
		    ((const char *)first + (size_t)i * stride));
		lua_rawseti(L, -2, i + 1);
	}
}

int
pwl_get_option(lua_State *L, int idx, const char *what, const char *name,
    int def, const char *const *names)
{
	char choices[256] = "";
	const char *s;
	int i;

	if (pwl_field(L, idx, what, name, false))
		return def;
	s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
	for (i = 0; names[i] != NULL; i++) {
		if (strcmp(names[i], s) == 0) {
			lua_pop(L, 1);
			return i;
		}
		snprintf(choices + strlen(choices), sizeof choices -
		    strlen(choices), "%s\"%s\"", i > 0 ? ", " : "", names[i]);
	}
	return pwl_fail(L, "%s: %s: must be one of %s (got %s)", what, name,
	    choices, pwl_got(L, -1));
}

/* pw.families(): the names of the schedule families, in registry order. */
static int
pwl_families(lua_State *L)
{
	size_t i;

	lua_createtable(L, (int)pw_nfamilies, 0);
	for (i = 0; i < pw_nfamilies; i++) {
		lua_pushstring(L, pw_families[i].name);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* A JSON file: a problem, or a schedule (its problem and its orders,
 * simulated again). */
static int
pwl_load_file(lua_State *L, const char *path)
{
	struct pwl_problem *pb = pwl_problem_push(L);
	struct pw_timed_op **ops = (struct pw_timed_op **)pwl_box(L, 0,
	    "pw.load");
	char **family = (char **)pwl_box(L, 0, "pw.load");
	struct pw_schedule *sched;
	struct pwl_schedule *sb;
	struct pw_error err;
	size_t nops;

	if (pw_file_read(path, &pb->p, ops, &nops, family, &err) != PW_OK)
		return pwl_fail(L, "pw.load: %s", err.msg);
	/* Read already (the reader checks the counts): charged after. */
	pwl_charge(L, &pb->charged, pwl_problem_bytes(pb->p->devices,
	    pb->p->nstages) + pwl_problem_text_bytes(pb->p), "pw.load");
	if (*ops == NULL) {
		lua_pop(L, 2);
		return 1;
	}
	sb = pwl_schedule_push(L, -3, pb->p, "pw.load");
	/* The family is the file's text: kept in the orders and in the
	 * timed copy of them. */
	if (*family != NULL)
		pwl_charge(L, &sb->charged, 2 * (strlen(*family) + 1),
		    "pw.load");
	if (pw_schedule_from_timed(pb->p, *ops, nops, &sched, &err) != PW_OK)
		return pwl_fail(L, "pw.load: %s", err.msg);
	sched->family = *family;
	*family = NULL;
	pwl_schedule_finish(L, sb, pw_problem_copy(pb->p), sched, NULL,
	    "pw.load");
	return 1;
}

/* pw.load(path): a problem or schedule from a JSON file or a Lua script. */
static int
pwl_load(lua_State *L)
{
	const char *path = pwl_whole_arg(L, 1, "pw.load", "path");

	pwl_path_read(L, "pw.load", path);
	if (pwlua_is_script(path)) {
		if (pwl_loadfile(L, path) != LUA_OK)
			return lua_error(L);
		lua_call(L, 0, 1);
		if (pwl_problem_test(L, -1) == NULL &&
		    pwl_schedule_test(L, -1) == NULL)
			return pwl_fail(L, "pw.load: %s returned a %s, not a "
			    "problem or a schedule", path, luaL_typename(L, -1));
		return 1;
	}
	return pwl_load_file(L, path);
}

/* pw.fmt_bytes(n), pw.fmt_seconds(t): "3.5 GiB", "12.3 ms". */
static int
pwl_fmt(lua_State *L)
{
	char buf[64];
	double v = luaL_checknumber(L, 1);

	if (lua_toboolean(L, lua_upvalueindex(1)))
		lua_pushstring(L, pw_fmt_bytes(buf, sizeof buf, v));
	else
		lua_pushstring(L, pw_fmt_seconds(buf, sizeof buf, v));
	return 1;
}

/* pw.offload_ratio(hidden, seq, compute_rate, pcie_bandwidth):
 * PipeOffload's k (pw_offload_ratio). */
static int
pwl_offload_ratio(lua_State *L)
{
	lua_Integer hidden = luaL_checkinteger(L, 1);
	lua_Integer seq = luaL_checkinteger(L, 2);
	lua_Number rate = luaL_checknumber(L, 3);
	lua_Number bandwidth = luaL_checknumber(L, 4);

	luaL_argcheck(L, hidden > 0 && hidden <= INT_MAX, 1, "out of range");
	luaL_argcheck(L, seq > 0 && seq <= INT_MAX, 2, "out of range");
	luaL_argcheck(L, rate > 0 && isfinite(rate), 3, "must be a positive "
	    "number of FLOP/s");
	luaL_argcheck(L, bandwidth > 0 && isfinite(bandwidth), 4, "must be a "
	    "positive number of bytes/s");
	lua_pushnumber(L, pw_offload_ratio((int)hidden, (int)seq, rate,
	    bandwidth));
	return 1;
}

int
pwl_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "families", pwl_families },
		{ "load", pwl_load },
		{ "offload_ratio", pwl_offload_ratio },
		{ NULL, NULL }
	};
	static const luaL_Reg box[] = {
		{ "__gc", pwl_box_gc },
		{ NULL, NULL }
	};
	size_t i;

	pwl_new_metatable(L, PWL_BOX, box);

	luaL_newlib(L, funcs);
	for (i = 0; i < sizeof pwl_units / sizeof pwl_units[0]; i++) {
		lua_pushnumber(L, pwl_units[i].value);
		lua_setfield(L, -2, pwl_units[i].name);
	}
	lua_pushboolean(L, 1);
	lua_pushcclosure(L, pwl_fmt, 1);
	lua_setfield(L, -2, "fmt_bytes");
	lua_pushboolean(L, 0);
	lua_pushcclosure(L, pwl_fmt, 1);
	lua_setfield(L, -2, "fmt_seconds");
	lua_pushstring(L, PACKAGE_VERSION);
	lua_setfield(L, -2, "version");
	pwl_open_model(L);
	pwl_open_problem(L);
	pwl_open_schedule(L);
	pwl_open_plan(L);
	pwl_open_write(L);
	return 1;
}
