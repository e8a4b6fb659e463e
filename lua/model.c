/*
 * model.c - models and hardware as Lua tables: pw.model, pw.model.gpt,
 * pw.hardware and their presets.  The tables are plain; one descriptor
 * per struct field reads and writes them, and the C cost model does every
 * computation with what they hold.
 */
#include <stddef.h>
#include <string.h>

#include "pwlua_int.h"

enum pwl_type {
	PWL_INT,
	PWL_REAL,
	PWL_BOOL,
	PWL_NAME,
	PWL_RECOMPUTE,
};

struct pwl_field {
	const char *name;	/* first, for pwl_check_fields */
	enum pwl_type type;
	size_t	offset;
	bool	need;		/* no default */
	double	def;
	int	min;		/* PWL_INT: the least the reader takes (0 for
				 * a count derived when 0) */
	int	max;		/* PWL_INT: the most (0: INT_MAX) */
};

/* A struct pw_model or pw_hardware as a Lua table. */
struct pwl_record {
	const char *what;
	const char *meta;
	const struct pwl_field *fields;
	const void *(*find)(const char *);	/* a preset by name */
	const void *presets;	/* the registry: size bytes apart */
	const size_t *npresets;
	size_t	size;
	/* The core's check of one, PW_OK or why not. */
	int	(*check)(const void *, struct pw_error *);
};

#define PWL_MF(n, t, need, def, min) \
	{ #n, t, offsetof(struct pw_model, n), need, def, min, 0 }
static const struct pwl_field pwl_model_fields[] = {
	PWL_MF(name, PWL_NAME, false, 0, 0),
	{ "layers", PWL_INT, offsetof(struct pw_model, layers), true, 0, 1,
	    PW_MODEL_MAX_LAYERS },
	PWL_MF(hidden, PWL_INT, true, 0, 1),
	PWL_MF(heads, PWL_INT, true, 0, 1),
	PWL_MF(kv_heads, PWL_INT, false, 0, 0),
	PWL_MF(ffn, PWL_INT, false, 0, 0),
	PWL_MF(seq, PWL_INT, true, 0, 1),
	PWL_MF(vocab, PWL_INT, true, 0, 1),
	PWL_MF(micro_batch, PWL_INT, false, 1, 1),
	/* What current models train with (docs/cost-model.md). */
	PWL_MF(flash_attention, PWL_BOOL, false, 1, 0),
	PWL_MF(recompute, PWL_RECOMPUTE, false, PW_RECOMPUTE_NONE, 0),
	PWL_MF(gated_mlp, PWL_BOOL, false, 0, 0),
	PWL_MF(tied_embeddings, PWL_BOOL, false, 0, 0),
	{ NULL, PWL_INT, 0, false, 0, 0, 0 }
};

#define PWL_HF(n, need, def) \
	{ #n, PWL_REAL, offsetof(struct pw_hardware, n), need, def, 0, 0 }
static const struct pwl_field pwl_hardware_fields[] = {
	{ "name", PWL_NAME, offsetof(struct pw_hardware, name), false, 0, 0,
	    0 },
	PWL_HF(peak_flops, true, 0),
	PWL_HF(efficiency, false, 1),
	PWL_HF(memory, true, 0),
	PWL_HF(pcie_d2h, false, 0),
	PWL_HF(pcie_h2d, false, 0),
	PWL_HF(pcie_latency, false, 0),
	PWL_HF(p2p_bandwidth, true, 0),
	PWL_HF(p2p_latency, false, 0),
	{ NULL, PWL_INT, 0, false, 0, 0, 0 }
};

static const void *
pwl_find_model(const char *name)
{
	return pw_model_find(name);
}

static const void *
pwl_find_hardware(const char *name)
{
	return pw_hardware_find(name);
}

static int
pwl_check_model(const void *m, struct pw_error *err)
{
	return pw_model_check(m, err);
}

/* The link's rates are checked where a problem offloads. */
static int
pwl_check_hardware(const void *hw, struct pw_error *err)
{
	return pw_hardware_check(hw, false, err);
}

static const struct pwl_record pwl_model_record = {
	"pw.model", PWL_MODEL, pwl_model_fields, pwl_find_model,
	pw_model_presets, &pw_nmodel_presets, sizeof (struct pw_model),
	pwl_check_model
};
static const struct pwl_record pwl_hardware_record = {
	"pw.hardware", PWL_HARDWARE, pwl_hardware_fields, pwl_find_hardware,
	pw_hardware_presets, &pw_nhardware_presets, sizeof (struct pw_hardware),
	pwl_check_hardware
};

/* Field NAME of the table at IDX, a recomputation's name as the core
 * reads it (pw_recompute_parse); DEF when absent. */
static int
pwl_recompute_read(lua_State *L, int idx, const char *what,
    const char *name, int def)
{
	const char *v = pwl_get_string(L, idx, what, name, NULL);
	enum pw_recompute r;

	if (v == NULL)
		return def;
	if (!pw_recompute_parse(v, &r))
		return pwl_fail(L, "%s: %s: must be one of "
		    PW_RECOMPUTE_CHOICES " (got %s)", what, name, v);
	return (int)r;
}

/*
 * Reads the table at IDX (named WHAT in errors) into OUT, a struct
 * pw_model or pw_hardware.  With PARTIAL an absent field keeps OUT's
 * value, else it gets its default or raises.  Names point into the table.
 */
static void
pwl_record_read(lua_State *L, int idx, const struct pwl_record *rec,
    const char *what, void *out, bool partial)
{
	const struct pwl_field *f;
	char *at;
	int *i;
	double *d;
	bool *b;
	const char **s;

	idx = lua_absindex(L, idx);
	if (!lua_istable(L, idx))
		pwl_fail(L, "%s: must be a table (got %s)", what,
		    luaL_typename(L, idx));
	pwl_check_fields(L, idx, what, rec->fields, sizeof *rec->fields);
	for (f = rec->fields; f->name != NULL; f++) {
		at = (char *)out + f->offset;
		switch (f->type) {
		case PWL_INT:
			i = (int *)(void *)at;
			*i = pwl_get_int(L, idx, what, f->name, partial ? *i :
			    f->need ? PWL_NEED_INT : (int)f->def, f->min,
			    f->max != 0 ? f->max : INT_MAX);
			break;
		case PWL_REAL:
			d = (double *)(void *)at;
			*d = pwl_get_number(L, idx, what, f->name, partial ? *d :
			    f->need ? PWL_NEED_NUMBER : f->def);
			break;
		case PWL_BOOL:
			b = (bool *)(void *)at;
			*b = pwl_get_bool(L, idx, what, f->name, partial ? *b :
			    f->def != 0);
			break;
		case PWL_RECOMPUTE:
			i = (int *)(void *)at;
			*i = pwl_recompute_read(L, idx, what, f->name, partial ?
			    *i : (int)f->def);
			break;
		case PWL_NAME:
			s = (const char **)(void *)at;
			*s = pwl_get_string(L, idx, what, f->name, partial ?
			    *s : NULL);
			break;
		}
	}
}

/* Pushes IN (a struct pw_model or pw_hardware) as a table. */
static void
pwl_record_push(lua_State *L, const struct pwl_record *rec, const void *in)
{
	const struct pwl_field *f;
	const char *at, *name;

	lua_createtable(L, 0, 12);
	for (f = rec->fields; f->name != NULL; f++) {
		at = (const char *)in + f->offset;
		switch (f->type) {
		case PWL_INT:
			lua_pushinteger(L, *(const int *)(const void *)at);
			break;
		case PWL_REAL:
			lua_pushnumber(L, *(const double *)(const void *)at);
			break;
		case PWL_BOOL:
			lua_pushboolean(L, *(const bool *)(const void *)at);
			break;
		case PWL_RECOMPUTE:
			lua_pushstring(L, pwl_recompute_names[
			    *(const int *)(const void *)at]);
			break;
		case PWL_NAME:
			name = *(const char *const *)(const void *)at;
			if (name == NULL)
				continue;
			lua_pushstring(L, name);
			break;
		}
		lua_setfield(L, -2, f->name);
	}
	luaL_setmetatable(L, rec->meta);
}

/* Both structs a record may read into. */
union pwl_any {
	struct pw_model model;
	struct pw_hardware hardware;
};

/* Pushes IN as pwl_record_push does once the core takes it, so that a
 * field out of range is named where the script made it. */
static void
pwl_record_checked_push(lua_State *L, const struct pwl_record *rec,
    const void *in)
{
	struct pw_error err;

	if (rec->check(in, &err) != PW_OK)
		pwl_fail(L, "%s: %s", rec->what, err.msg);
	pwl_record_push(L, rec, in);
}

/* model(overrides), hardware(overrides): a copy with those fields
 * changed.  Upvalue 1 is the record. */
static int
pwl_record_override(lua_State *L)
{
	const struct pwl_record *rec = lua_touserdata(L, lua_upvalueindex(1));
	union pwl_any u;

	memset(&u, 0, sizeof u);
	pwl_record_read(L, 1, rec, rec->what, &u, false);
	pwl_record_read(L, 2, rec, rec->what, &u, true);
	pwl_record_checked_push(L, rec, &u);
	return 1;
}

/* The list of a record's preset names, for messages. */
static void
pwl_preset_names(const struct pwl_record *rec, char *buf, size_t len)
{
	const char *name;
	size_t i, used;

	buf[0] = '\0';
	for (i = 0; i < *rec->npresets; i++) {
		name = *(const char *const *)(const void *)
		    ((const char *)rec->presets + i * rec->size);
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s", i > 0 ? ", " : "",
		    name);
	}
}

/* Pushes the model or hardware the value at IDX gives: a preset's name,
 * or a table (checked and completed with the defaults). */
static void
pwl_record_make(lua_State *L, const struct pwl_record *rec, int idx)
{
	char names[512];
	union pwl_any u;
	const void *preset;

	if (lua_type(L, idx) == LUA_TSTRING) {
		/* A preset is its whole name: "gpt3-6.7b\0x" is none. */
		if ((preset = rec->find(pwl_whole_arg(L, idx, rec->what,
		    "name"))) == NULL) {
			pwl_preset_names(rec, names, sizeof names);
			pwl_fail(L, "%s: unknown preset '%s' (one of: %s)",
			    rec->what, lua_tostring(L, idx), names);
		}
		pwl_record_push(L, rec, preset);
		return;
	}
	memset(&u, 0, sizeof u);
	pwl_record_read(L, idx, rec, rec->what, &u, false);
	pwl_record_checked_push(L, rec, &u);
}

/* pw.model(x), pw.hardware(x) through __call (arg 1 is the table). */
static int
pwl_record_call(lua_State *L)
{
	pwl_record_make(L, lua_touserdata(L, lua_upvalueindex(1)), 2);
	return 1;
}

/* pw.model.gpt{...}: a transformer model table. */
static int
pwl_model_gpt(lua_State *L)
{
	pwl_record_make(L, &pwl_model_record, 1);
	return 1;
}

/* Sets up REC's metatable and its entry in the module (at -1) as NAME. */
static void
pwl_record_open(lua_State *L, const struct pwl_record *rec, const char *name)
{
	size_t i;

	luaL_newmetatable(L, rec->meta);
	lua_pushlightuserdata(L, (void *)rec);
	lua_pushcclosure(L, pwl_record_override, 1);
	lua_setfield(L, -2, "__call");
	pwl_lock(L);
	lua_pop(L, 1);

	lua_createtable(L, 0, 2);
	lua_createtable(L, (int)*rec->npresets, 0);
	for (i = 0; i < *rec->npresets; i++) {
		lua_pushstring(L, *(const char *const *)(const void *)
		    ((const char *)rec->presets + i * rec->size));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "presets");
	lua_createtable(L, 0, 1);
	lua_pushlightuserdata(L, (void *)rec);
	lua_pushcclosure(L, pwl_record_call, 1);
	lua_setfield(L, -2, "__call");
	pwl_lock(L);
	lua_setmetatable(L, -2);
	lua_setfield(L, -2, name);
}

/* Reads the model or hardware at IDX, a table or a preset's name; a name
 * pushes the preset's table, which the strings in OUT then point into. */
static void
pwl_record_get(lua_State *L, const struct pwl_record *rec, int idx,
    const char *what, void *out)
{
	memset(out, 0, rec->size);
	if (lua_type(L, idx) == LUA_TSTRING) {
		pwl_record_make(L, rec, idx);
		idx = -1;
	}
	pwl_record_read(L, idx, rec, what, out, false);
}

void
pwl_model_get(lua_State *L, int idx, const char *what, struct pw_model *out)
{
	pwl_record_get(L, &pwl_model_record, idx, what, out);
}

void
pwl_hardware_get(lua_State *L, int idx, const char *what,
    struct pw_hardware *out)
{
	pwl_record_get(L, &pwl_hardware_record, idx, what, out);
}

void
pwl_model_push(lua_State *L, const struct pw_model *m)
{
	pwl_record_push(L, &pwl_model_record, m);
}

void
pwl_hardware_push(lua_State *L, const struct pw_hardware *hw)
{
	pwl_record_push(L, &pwl_hardware_record, hw);
}

void
pwl_open_model(lua_State *L)
{
	pwl_record_open(L, &pwl_model_record, "model");
	pwl_record_open(L, &pwl_hardware_record, "hardware");
	lua_getfield(L, -1, "model");
	lua_pushcfunction(L, pwl_model_gpt);
	lua_setfield(L, -2, "gpt");
	lua_pop(L, 1);
}
