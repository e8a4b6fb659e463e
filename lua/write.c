/*
 * write.c - the only way scripts write files: pw.write_json and
 * pw.write_csv, below the directories the interpreter allows, atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pwlua_int.h"

/* pw.write_json(path, problem or schedule): the interchange format. */
static int
pwl_write_json(lua_State *L)
{
	const char *path = pwl_path_arg(L, 1, "pw.write_json");
	struct pwl_problem *pb = pwl_problem_test(L, 2);
	struct pwl_schedule *s = pwl_schedule_test(L, 2);
	struct pw_error err;
	int rc;

	if (pb == NULL && s == NULL)
		return luaL_typeerror(L, 2, "problem or schedule");
	pwl_path_write(L, "pw.write_json", path);
	if (pb != NULL)
		rc = pw_problem_write(path, pb->p, &err);
	else
		rc = pw_schedule_write(path, pw_plan_problem(s->plan),
		    pw_plan_timed(s->plan), pw_plan_timing(s->plan), &err);
	if (rc != PW_OK)
		return pwl_fail(L, "pw.write_json: %s", err.msg);
	return 0;
}

/* Replaces the value at the top by its text as a CSV cell; WHERE names
 * it in errors. */
static void
pwl_csv_text(lua_State *L, const char *where)
{
	char num[64];
	const char *s;
	luaL_Buffer q;
	size_t len, i;
	int prec;
	double v;

	switch (lua_type(L, -1)) {
	case LUA_TNIL:
		num[0] = '\0';
		break;
	case LUA_TBOOLEAN:
		snprintf(num, sizeof num, "%s", lua_toboolean(L, -1) ? "true" :
		    "false");
		break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, -1)) {
			snprintf(num, sizeof num, "%lld",
			    (long long)lua_tointeger(L, -1));
			break;
		}
		/* The fewest digits that read back as the same double. */
		v = lua_tonumber(L, -1);
		for (prec = 1; prec <= 17; prec++) {
			snprintf(num, sizeof num, "%.*g", prec, v);
			if (strtod(num, NULL) == v || v != v)
				break;
		}
		break;
	case LUA_TSTRING:
		s = lua_tolstring(L, -1, &len);
		pwl_check_text(L, s, len, "pw.write_csv", where);
		if (strcspn(s, ",\"\r\n") == len)
			return;
		/* Quoted, with quotes doubled (RFC 4180). */
		luaL_buffinit(L, &q);
		luaL_addchar(&q, '"');
		for (i = 0; i < len; i++) {
			if (s[i] == '"')
				luaL_addchar(&q, '"');
			luaL_addchar(&q, s[i]);
		}
		luaL_addchar(&q, '"');
		luaL_pushresult(&q);
		lua_remove(L, -2);
		return;
	default:
		pwl_fail(L, "pw.write_csv: %s: must be a number, a string or a "
		    "boolean (got %s)", where, luaL_typename(L, -1));
	}
	lua_pop(L, 1);
	lua_pushstring(L, num);
}

/* qsort's order of column names. */
static int
pwl_strcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether ROW (a table) is a record: fields by name, no list part. */
static bool
pwl_is_record(lua_State *L, int row)
{
	bool record;

	if (lua_rawlen(L, row) > 0)
		return false;
	lua_pushnil(L);
	record = lua_next(L, row) != 0;
	if (record)
		lua_pop(L, 2);
	return record;
}

/* Pushes row I of the rows at ROWS, raising unless it is a table. */
static void
pwl_csv_row(lua_State *L, int rows, size_t i)
{
	if (lua_rawgeti(L, rows, (lua_Integer)i) != LUA_TTABLE)
		pwl_fail(L, "pw.write_csv: rows[%zu]: must be a table (got %s)",
		    i, luaL_typename(L, -1));
}

/* Pushes the sorted names of every field of the record rows at ROWS. */
static void
pwl_csv_columns(lua_State *L, int rows, size_t nrows)
{
	const char **names;
	size_t i, n = 0, k;
	int set;

	lua_newtable(L);
	set = lua_gettop(L);
	for (i = 1; i <= nrows; i++) {
		pwl_csv_row(L, rows, i);
		lua_pushnil(L);
		while (lua_next(L, -2) != 0) {
			lua_pop(L, 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				pwl_fail(L, "pw.write_csv: rows[%zu]: mixes "
				    "named and listed cells", i);
			lua_pushvalue(L, -1);
			if (lua_rawget(L, set) == LUA_TNIL) {
				lua_pushvalue(L, -2);
				lua_pushboolean(L, 1);
				lua_rawset(L, set);
				n++;
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	names = lua_newuserdatauv(L, pwl_array_bytes(L, n, sizeof *names,
	    "pw.write_csv: columns"), 0);
	k = 0;
	lua_pushnil(L);
	while (lua_next(L, set) != 0) {
		lua_pop(L, 1);
		names[k++] = lua_tostring(L, -1);
	}
	qsort(names, n, sizeof *names, pwl_strcmp);
	lua_createtable(L, (int)n, 0);
	for (k = 0; k < n; k++) {
		lua_pushstring(L, names[k]);
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	lua_replace(L, set);
	lua_pop(L, 1);
}

/*
 * Writes ROWS as CSV into B.  A row is a list (its cells in order) or a
 * record (its fields, in the order of COLUMNS); with COLUMNS (0: none)
 * a header line comes first.
 */
static void
pwl_csv_build(lua_State *L, luaL_Buffer *b, int rows, int columns)
{
	char where[64];
	size_t i, j, n, nrows = lua_rawlen(L, rows);
	size_t ncols = columns != 0 ? lua_rawlen(L, columns) : 0;
	bool record;

	for (j = 1; j <= ncols; j++) {
		snprintf(where, sizeof where, "columns[%zu]", j);
		if (j > 1)
			luaL_addchar(b, ',');
		if (lua_rawgeti(L, columns, (lua_Integer)j) != LUA_TSTRING)
			pwl_fail(L, "pw.write_csv: %s: must be a string (got "
			    "%s)", where, luaL_typename(L, -1));
		pwl_csv_text(L, where);
		luaL_addvalue(b);
	}
	if (ncols > 0)
		luaL_addchar(b, '\n');
	for (i = 1; i <= nrows; i++) {
		pwl_csv_row(L, rows, i);
		record = pwl_is_record(L, lua_gettop(L));
		if (record && columns == 0)
			pwl_fail(L, "pw.write_csv: rows[%zu]: a record among "
			    "listed rows", i);
		n = record ? ncols : lua_rawlen(L, -1);
		lua_pop(L, 1);
		/* B may keep its own value on the stack: each cell is pushed
		 * alone and added with luaL_addvalue. */
		for (j = 1; j <= n; j++) {
			/* N may be a border far past the row's cells. */
			pwl_work(L, 1, "pw.write_csv");
			snprintf(where, sizeof where, "rows[%zu][%zu]", i, j);
			if (j > 1)
				luaL_addchar(b, ',');
			lua_rawgeti(L, rows, (lua_Integer)i);
			if (record) {
				lua_rawgeti(L, columns, (lua_Integer)j);
				lua_rawget(L, -2);
			} else
				lua_rawgeti(L, -1, (lua_Integer)j);
			lua_remove(L, -2);
			pwl_csv_text(L, where);
			luaL_addvalue(b);
		}
		luaL_addchar(b, '\n');
	}
}

/* pw.write_csv(path, rows [, columns]). */
static int
pwl_write_csv(lua_State *L)
{
	const char *path = pwl_path_arg(L, 1, "pw.write_csv");
	struct pw_outfile out;
	struct pw_error err;
	luaL_Buffer b;
	const char *text;
	size_t len, nrows;
	int columns = 0;

	luaL_checktype(L, 2, LUA_TTABLE);
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		columns = 3;
	}
	lua_settop(L, 3);
	pwl_path_write(L, "pw.write_csv", path);
	nrows = lua_rawlen(L, 2);
	if (columns == 0 && nrows > 0) {
		lua_rawgeti(L, 2, 1);
		if (lua_istable(L, -1) && pwl_is_record(L, lua_gettop(L))) {
			pwl_csv_columns(L, 2, nrows);
			lua_replace(L, 3);
			columns = 3;
		}
		lua_settop(L, 3);
	}
	/* All of it in memory first: no Lua error can come while the file
	 * is open. */
	luaL_buffinit(L, &b);
	pwl_csv_build(L, &b, 2, columns);
	luaL_pushresult(&b);
	text = lua_tolstring(L, -1, &len);
	if (pw_outfile_open(&out, path, &err) != PW_OK)
		return pwl_fail(L, "pw.write_csv: %s", err.msg);
	/* A failed write is recorded in OUT, and the commit reports its
	 * errno (not that of removing the temporary file). */
	fwrite(text, 1, len, out.fp);
	if (pw_outfile_commit(&out, &err) != PW_OK)
		return pwl_fail(L, "pw.write_csv: %s", err.msg);
	return 0;
}

void
pwl_open_write(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "write_json", pwl_write_json },
		{ "write_csv", pwl_write_csv },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
