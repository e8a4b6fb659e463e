/*
 * write.c - the only way scripts write files: pw.write_json and
 * pw.write_csv, below the directories the interpreter allows, atomically;
 * and the other way round, a problem written as the script that builds
 * it (pwlua_problem_write, for the designer's "e" on a problem from no
 * file).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pwlua_int.h"

/* pw.write_json(path, problem or schedule): the interchange format. */
static int
pwl_write_json(lua_State *L)
{
	const char *path = pwl_whole_arg(L, 1, "pw.write_json", "path");
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
		/* The fewest digits that read back as the same double; the
		 * words strtod and Python's float() read for the rest (the
		 * C library writes a NaN's sign, which no reader keeps). */
		v = lua_tonumber(L, -1);
		if (isnan(v))
			snprintf(num, sizeof num, "nan");
		else if (isinf(v))
			snprintf(num, sizeof num, "%s", v > 0 ? "inf" : "-inf");
		else
			snprintf(num, sizeof num, "%.*g", pw_exact_precision(v),
			    v);
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

/* Whether ROW (a table) is a record: its first key a name (a list's
 * cells are placed by number; pwl_csv_columns and pwl_csv_listed refuse
 * the two mixed). */
static bool
pwl_is_record(lua_State *L, int row)
{
	bool record;

	if (lua_rawlen(L, row) > 0)
		return false;
	lua_pushnil(L);
	if (lua_next(L, row) == 0)
		return false;
	record = lua_type(L, -2) != LUA_TNUMBER;
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
	const char **names, *s;
	char where[64];
	size_t i, n = 0, k, len;
	int set;

	lua_newtable(L);
	set = lua_gettop(L);
	for (i = 1; i <= nrows; i++) {
		pwl_csv_row(L, rows, i);
		lua_pushnil(L);
		while (lua_next(L, -2) != 0) {
			lua_pop(L, 1);
			if (lua_type(L, -1) == LUA_TNUMBER)
				pwl_fail(L, "pw.write_csv: rows[%zu]: mixes "
				    "named and listed cells", i);
			if (lua_type(L, -1) != LUA_TSTRING)
				pwl_fail(L, "pw.write_csv: rows[%zu]: a cell's "
				    "name must be a string or its place a "
				    "number (got a %s key)", i,
				    luaL_typename(L, -1));
			/* A NUL would cut the name, and two cells would
			 * share a column. */
			snprintf(where, sizeof where, "rows[%zu]: a cell's "
			    "name", i);
			s = lua_tolstring(L, -1, &len);
			pwl_check_text(L, s, len, "pw.write_csv", where);
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

/* Raises unless the listed row I at ROW (of N cells) has cells 1 to N
 * only: a named cell beside them would be left out. */
static void
pwl_csv_listed(lua_State *L, int row, size_t i, size_t n)
{
	lua_Integer k = 0, at = 0;
	bool stray = false, whole;

	/* A name anywhere is the mix; else the first place out of range. */
	lua_pushnil(L);
	while (lua_next(L, row) != 0) {
		lua_pop(L, 1);
		pwl_work(L, 1, "pw.write_csv");
		if (lua_type(L, -1) != LUA_TNUMBER)
			pwl_fail(L, "pw.write_csv: rows[%zu]: mixes named and "
			    "listed cells", i);
		whole = pwl_whole(L, -1, &k);
		if (!stray && (!whole || k < 1 || (size_t)k > n)) {
			stray = true;
			at = whole ? k : 0;
		}
	}
	if (stray && at >= 1)
		pwl_fail(L, "pw.write_csv: rows[%zu]: a cell at %lld, past the "
		    "row's %zu (a hole in the list?)", i, (long long)at, n);
	if (stray)
		pwl_fail(L, "pw.write_csv: rows[%zu]: a cell's place must be a "
		    "whole number from 1", i);
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
		if (!record)
			pwl_csv_listed(L, lua_gettop(L), i, n);
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
	const char *path = pwl_whole_arg(L, 1, "pw.write_csv", "path"), *as;
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
	/* As JSON writers refuse a script's name. */
	if ((as = pw_path_misread(path, ".csv")) != NULL)
		return pwl_fail(L, "pw.write_csv: %s: a CSV with this name "
		    "would be read back as %s: name it .csv", path, as);
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

/* ------------------------------------------------------------------ */
/* pwlua_problem_write: a problem as the script that builds it         */

/* V as a Lua number that reads back as the same double. */
static void
pwl_emit_number(FILE *fp, double v)
{
	char num[64];

	if (isinf(v)) {
		fputs(v > 0 ? "math.huge" : "-math.huge", fp);
		return;
	}
	snprintf(num, sizeof num, "%.*g", pw_exact_precision(v), v);
	/* A whole number is written as a float: fields of bytes and
	 * seconds are numbers, and integers read the same. */
	fputs(num, fp);
}

/* S as a Lua string literal: quotes, backslashes and control bytes
 * escaped by their decimal codes. */
static void
pwl_emit_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\' || c < ' ' || c == 127)
			fprintf(fp, "\\%03u", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void
pwl_emit_field(FILE *fp, const char *indent, const char *name, double v)
{
	fprintf(fp, "%s%s = ", indent, name);
	pwl_emit_number(fp, v);
	fputs(",\n", fp);
}

/* NAME = { v, ... } of the per-device values at OFFSET in P's memory. */
static void
pwl_emit_per_device(FILE *fp, const struct pw_problem *p, const char *name,
    size_t offset)
{
	int d;

	fprintf(fp, "\t%s = {", name);
	for (d = 0; d < p->devices; d++) {
		fputs(d ? ", " : " ", fp);
		pwl_emit_number(fp, *(const double *)(const void *)
		    ((const char *)&p->memory[d] + offset));
	}
	fputs(" },\n", fp);
}

static void
pwl_emit_model(FILE *fp, const struct pw_model *m)
{
	fputs("\tmodel = pw.model{\n", fp);
	if (m->name != NULL) {
		fputs("\t\tname = ", fp);
		pwl_emit_string(fp, m->name);
		fputs(",\n", fp);
	}
	fprintf(fp, "\t\tlayers = %d,\n\t\thidden = %d,\n\t\theads = %d,\n"
	    "\t\tkv_heads = %d,\n\t\tffn = %d,\n\t\tseq = %d,\n"
	    "\t\tvocab = %d,\n\t\tmicro_batch = %d,\n"
	    "\t\tflash_attention = %s,\n\t\trecompute = \"%s\",\n"
	    "\t\tgated_mlp = %s,\n\t\ttied_embeddings = %s,\n\t},\n",
	    m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->seq,
	    m->vocab, m->micro_batch, m->flash_attention ? "true" : "false",
	    pwl_recompute_names[m->recompute], m->gated_mlp ? "true" : "false",
	    m->tied_embeddings ? "true" : "false");
}

static void
pwl_emit_hardware(FILE *fp, const struct pw_hardware *hw)
{
	fputs("\thardware = pw.hardware{\n", fp);
	if (hw->name != NULL) {
		fputs("\t\tname = ", fp);
		pwl_emit_string(fp, hw->name);
		fputs(",\n", fp);
	}
	pwl_emit_field(fp, "\t\t", "peak_flops", hw->peak_flops);
	pwl_emit_field(fp, "\t\t", "efficiency", hw->efficiency);
	pwl_emit_field(fp, "\t\t", "memory", hw->memory);
	pwl_emit_field(fp, "\t\t", "pcie_d2h", hw->pcie_d2h);
	pwl_emit_field(fp, "\t\t", "pcie_h2d", hw->pcie_h2d);
	pwl_emit_field(fp, "\t\t", "pcie_latency", hw->pcie_latency);
	pwl_emit_field(fp, "\t\t", "p2p_bandwidth", hw->p2p_bandwidth);
	pwl_emit_field(fp, "\t\t", "p2p_latency", hw->p2p_latency);
	fputs("\t},\n", fp);
}

/* The model, hardware and split of P's origin, and P's limits: one
 * number when every device has the same (which keeps the origin on
 * reading), else one per device. */
static void
pwl_emit_origin(FILE *fp, const struct pw_problem *p)
{
	const struct pw_origin *o = p->origin;
	const struct pw_split *sp = &o->split;
	double limit;
	int d, s;
	bool uniform = true;

	pwl_emit_model(fp, &o->model);
	pwl_emit_hardware(fp, &o->hardware);
	fprintf(fp, "\tdevices = %d,\n\tchunks = %d,\n\tplacement = \"%s\",\n"
	    "\tmicrobatches = %d,\n\toffload = %s,\n", sp->devices,
	    sp->chunks, pw_placement_names[sp->placement],
	    sp->microbatches, sp->offload ? "true" : "false");
	if (sp->reserve_bytes != 0)
		pwl_emit_field(fp, "\t", "reserve", sp->reserve_bytes);
	if (sp->reserve_fraction != 0)
		pwl_emit_field(fp, "\t", "reserve_fraction",
		    sp->reserve_fraction);
	if (sp->tp != 0)
		fprintf(fp, "\ttp = %d,\n", sp->tp);
	if (sp->dp != 0)
		fprintf(fp, "\tdp = %d,\n", sp->dp);
	if (sp->layers_per_stage != NULL) {
		fputs("\tlayers_per_stage = {", fp);
		for (s = 0; s < sp->devices * sp->chunks; s++)
			fprintf(fp, "%s%d", s ? ", " : " ",
			    sp->layers_per_stage[s]);
		fputs(" },\n", fp);
	}
	for (d = 1; d < p->devices; d++)
		uniform = uniform && p->memory[d].limit == p->memory[0].limit;
	if (uniform && isfinite(p->memory[0].limit)) {
		limit = pwl_split_limit(o, p->memory[0].limit);
		/* The hardware's memory, as the split had it, is left out:
		 * an edit of the hardware's memory then moves the limit. */
		if (sp->memory_limit != 0 || limit != o->hardware.memory)
			pwl_emit_field(fp, "\t", "memory_limit", limit);
	} else if (uniform)
		pwl_emit_field(fp, "\t", "memory_limit", p->memory[0].limit);
	else
		pwl_emit_per_device(fp, p, "memory_limit",
		    offsetof(struct pw_device_memory, limit));
}

/* P's stages, memory and link as they are. */
static void
pwl_emit_stages(FILE *fp, const struct pw_problem *p)
{
	static const struct {
		const char *name;
		size_t	offset;
	} costs[] = {
		{ "f", offsetof(struct pw_stage, f) },
		{ "b", offsetof(struct pw_stage, b) },
		{ "w", offsetof(struct pw_stage, w) },
		{ "act", offsetof(struct pw_stage, act) },
		{ "hold", offsetof(struct pw_stage, hold) },
		{ "offload", offsetof(struct pw_stage, offload) },
		{ "comm", offsetof(struct pw_stage, comm) },
	};
	const struct pw_stage *st;
	const char *sep;
	size_t k;
	int s, g, d;

	fprintf(fp, "\tdevices = %d,\n\tmicrobatches = %d,\n", p->devices,
	    p->microbatches);
	pwl_emit_field(fp, "\t", "comm", p->comm);
	fputs("\tstages = {\n", fp);
	for (s = 0; s < p->nstages; s++) {
		st = &p->stages[s];
		fprintf(fp, "\t\t{ device = %d", st->device + 1);
		for (k = 0; k < sizeof costs / sizeof costs[0]; k++) {
			fprintf(fp, ", %s = ", costs[k].name);
			pwl_emit_number(fp, *(const double *)(const void *)
			    ((const char *)st + costs[k].offset));
		}
		fputs(" },\n", fp);
	}
	fputs("\t},\n", fp);
	pwl_emit_per_device(fp, p, "static",
	    offsetof(struct pw_device_memory, static_bytes));
	pwl_emit_per_device(fp, p, "memory_limit",
	    offsetof(struct pw_device_memory, limit));
	if (!p->link.present)
		return;
	fputs("\tlink = {\n", fp);
	pwl_emit_field(fp, "\t\t", "d2h", p->link.d2h);
	pwl_emit_field(fp, "\t\t", "h2d", p->link.h2d);
	pwl_emit_field(fp, "\t\t", "latency", p->link.latency);
	fprintf(fp, "\t\tduplex = %s,\n\t\tgroups = {",
	    p->link.duplex ? "true" : "false");
	for (g = 0; g < p->link.ngroups; g++) {
		fputs(g ? ", {" : " {", fp);
		sep = " ";
		for (d = 0; d < p->devices; d++) {
			if (p->link.group[d] == g) {
				fprintf(fp, "%s%d", sep, d + 1);
				sep = ", ";
			}
		}
		fputs(" }", fp);
	}
	fputs(" },\n\t},\n", fp);
}

int
pwlua_problem_write(const char *path, const struct pw_problem *p,
    struct pw_error *err)
{
	struct pw_outfile out;
	int rc;

	if ((rc = pw_outfile_open(&out, path, err)) != PW_OK)
		return rc;
	fputs("-- A pipewright problem (docs/lua.md); pipewright design "
	    "reloads it after each edit.\nreturn pw.problem{\n", out.fp);
	if (p->name != NULL) {
		fputs("\tname = ", out.fp);
		pwl_emit_string(out.fp, p->name);
		fputs(",\n", out.fp);
	}
	if (p->origin != NULL)
		pwl_emit_origin(out.fp, p);
	else
		pwl_emit_stages(out.fp, p);
	fputs("}\n", out.fp);
	return pw_outfile_commit(&out, err);
}
