/* json.c - the interchange format (docs/format.md): yajl streams the
 * text, jansson holds the values and writes them. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <yajl/yajl_parse.h>

#include "pipewright.h"

#define PW_FORMAT_PROBLEM	"pipewright.problem.v1"
#define PW_FORMAT_SCHEDULE	"pipewright.schedule.v1"

/* Longest field name in a message: "problem.link.groups[12][34]". */
#define PW_FIELD_MAX	128

/* ------------------------------------------------------------------ */
/* Fields shared by the reader and the writer                         */

/* What a number field may hold. */
enum pw_jsign {
	PW_JS_ANY,
	PW_JS_NONNEG,
	PW_JS_POSITIVE,
	PW_JS_LIMIT,		/* non-negative, or null for INFINITY */
};

/* A number field of a C struct, so that one table drives both reading
 * and writing it. */
struct pw_jfield {
	const char	*key;
	size_t		 off;
	bool		 required;
	enum pw_jsign	 sign;
};

static const struct pw_jfield pw_jstage[] = {
	{ "f", offsetof(struct pw_stage, f), true, PW_JS_NONNEG },
	{ "b", offsetof(struct pw_stage, b), true, PW_JS_NONNEG },
	{ "w", offsetof(struct pw_stage, w), true, PW_JS_NONNEG },
	{ "act", offsetof(struct pw_stage, act), true, PW_JS_NONNEG },
	{ "hold", offsetof(struct pw_stage, hold), false, PW_JS_NONNEG },
	{ "offload", offsetof(struct pw_stage, offload), false, PW_JS_NONNEG },
};

static const struct pw_jfield pw_jmemory[] = {
	{ "static", offsetof(struct pw_device_memory, static_bytes), true,
	    PW_JS_NONNEG },
	{ "limit", offsetof(struct pw_device_memory, limit), true,
	    PW_JS_LIMIT },
};

static const struct pw_jfield pw_jlink[] = {
	{ "d2h", offsetof(struct pw_link, d2h), true, PW_JS_POSITIVE },
	{ "h2d", offsetof(struct pw_link, h2d), true, PW_JS_POSITIVE },
	{ "latency", offsetof(struct pw_link, latency), false, PW_JS_NONNEG },
};

/* An integer field of a C struct, at least MIN. */
struct pw_jintfield {
	const char	*key;
	size_t		 off;
	int		 min;
};

static const struct pw_jintfield pw_jmodel[] = {
	{ "layers", offsetof(struct pw_model, layers), 1 },
	{ "hidden", offsetof(struct pw_model, hidden), 1 },
	{ "heads", offsetof(struct pw_model, heads), 1 },
	{ "kv_heads", offsetof(struct pw_model, kv_heads), 0 },
	{ "ffn", offsetof(struct pw_model, ffn), 0 },
	{ "seq", offsetof(struct pw_model, seq), 1 },
	{ "vocab", offsetof(struct pw_model, vocab), 1 },
	{ "micro_batch", offsetof(struct pw_model, micro_batch), 1 },
};

static const struct pw_jfield pw_jhardware[] = {
	{ "peak_flops", offsetof(struct pw_hardware, peak_flops), true,
	    PW_JS_POSITIVE },
	{ "efficiency", offsetof(struct pw_hardware, efficiency), true,
	    PW_JS_POSITIVE },
	{ "memory", offsetof(struct pw_hardware, memory), true,
	    PW_JS_POSITIVE },
	{ "pcie_d2h", offsetof(struct pw_hardware, pcie_d2h), true,
	    PW_JS_NONNEG },
	{ "pcie_h2d", offsetof(struct pw_hardware, pcie_h2d), true,
	    PW_JS_NONNEG },
	{ "pcie_latency", offsetof(struct pw_hardware, pcie_latency), true,
	    PW_JS_NONNEG },
	{ "p2p_bandwidth", offsetof(struct pw_hardware, p2p_bandwidth), true,
	    PW_JS_POSITIVE },
	{ "p2p_latency", offsetof(struct pw_hardware, p2p_latency), true,
	    PW_JS_NONNEG },
};

static const struct pw_jfield pw_jsplit[] = {
	{ "memory_limit", offsetof(struct pw_split, memory_limit), true,
	    PW_JS_NONNEG },
};

/* Optional, 0 when absent, written only when set: files from before the
 * reserve read and write as they did. */
static const struct pw_jfield pw_jreserve[] = {
	{ "reserve_bytes", offsetof(struct pw_split, reserve_bytes), false,
	    PW_JS_NONNEG },
	{ "reserve_fraction", offsetof(struct pw_split, reserve_fraction),
	    false, PW_JS_NONNEG },
};

/* Names of the cost model's enums, indexed by value. */
const char *const pw_recompute_names[] = { "none", "pipeoffload", "full",
    NULL };
/* The same as tables and screens show them: the command line's words. */
static const char *const pw_recompute_labels[] = { "none", "selective",
    "full" };

const char *
pw_recompute_name(enum pw_recompute r)
{
	assert(r >= PW_RECOMPUTE_NONE && r <= PW_RECOMPUTE_FULL);
	return pw_recompute_names[r];
}

const char *
pw_recompute_label(enum pw_recompute r)
{
	assert(r >= PW_RECOMPUTE_NONE && r <= PW_RECOMPUTE_FULL);
	return pw_recompute_labels[r];
}

bool
pw_recompute_parse(const char *s, enum pw_recompute *out)
{
	int r;

	for (r = PW_RECOMPUTE_NONE; r <= PW_RECOMPUTE_FULL; r++)
		if (strcasecmp(s, pw_recompute_names[r]) == 0 ||
		    strcasecmp(s, pw_recompute_labels[r]) == 0) {
			*out = (enum pw_recompute)r;
			return true;
		}
	return false;
}

/* The ops a pin names, each an object as an anchor is ("kind", "stage",
 * "mb"). */
static const struct pw_jpinfield {
	const char *key;
	size_t	off;
} pw_jpin[] = {
	{ "before", offsetof(struct pw_pin, before) },
	{ "after", offsetof(struct pw_pin, after) },
};

#define PW_NFIELDS(t)	(sizeof (t) / sizeof (t)[0])

static double *
pw_jfield_ptr(const struct pw_jfield *f, void *base)
{
	return (double *)((char *)base + f->off);
}

static double
pw_jfield_get(const struct pw_jfield *f, const void *base)
{
	return *(const double *)((const char *)base + f->off);
}


static size_t
pw_jflags(const json_t *v)
{
	if (json_is_real(v))
		return JSON_ENCODE_ANY |
		    JSON_REAL_PRECISION(pw_exact_precision(json_real_value(v)));
	return JSON_ENCODE_ANY;
}

/* Jansson fails to build a value only when memory runs out or it is
 * given text that is not UTF-8.  Text never reaches it unchecked: the
 * writer's user text passes pw_text_check first, and the reader builds
 * every string and key with pw_jp_text, which reports a refusal as
 * invalid text; so a NULL here is memory running out and, like
 * pw_xmalloc, gives up. */
static json_t *
pw_jcheck(json_t *v)
{
	if (v == NULL) {
		fprintf(stderr, "pipewright: out of memory building JSON\n");
		abort();
	}
	return v;
}

/* ------------------------------------------------------------------ */
/* Reader                                                              */

/* A file being read: its name for messages and where errors go. */
struct pw_jin {
	const char	*file;
	struct pw_error	*err;
};

/* Names a field in BUF (PW_FIELD_MAX bytes); a name too long ends in
 * "...". */
static const char *
pw_jnamef(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PW_FIELD_MAX, fmt, ap);
	va_end(ap);
	if (n >= PW_FIELD_MAX)
		memcpy(buf + PW_FIELD_MAX - 4, "...", 4);
	return buf;
}

static const char *
pw_jname(char *buf, const char *parent, const char *key)
{
	if (parent[0] == '\0')
		return pw_jnamef(buf, "%s", key);
	return pw_jnamef(buf, "%s.%s", parent, key);
}

static const char *
pw_jname_index(char *buf, const char *parent, size_t i)
{
	return pw_jnamef(buf, "%s[%zu]", parent, i);
}

/* Sets "FILE: FIELD: WHAT (got VALUE)"; FIELD "" is the whole file.  A
 * value too long for one line is named by its type. */
static int
pw_jbad(struct pw_jin *in, const char *field, const json_t *v, const char *what)
{
	char got[64];
	size_t n;

	n = json_dumpb(v, got, sizeof got - 1, pw_jflags(v));
	if (n > 0 && n < sizeof got)
		got[n] = '\0';
	else
		snprintf(got, sizeof got, "%s", json_is_object(v) ?
		    "an object" : json_is_array(v) ? "an array" :
		    "a long string");
	if (field[0] == '\0')
		pw_error_set(in->err, "%s: %s (got %s)", in->file, what, got);
	else
		pw_error_set(in->err, "%s: %s: %s (got %s)", in->file, field,
		    what, got);
	return PW_ERR_INPUT;
}

/* Finds member KEY of OBJ (named PARENT) and names it in FIELD.  An absent
 * member is an error when REQUIRED, else *OUT is NULL. */
static int
pw_jmember(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, bool required, char *field, json_t **out)
{
	pw_jname(field, parent, key);
	*out = json_object_get(obj, key);
	if (*out != NULL || !required)
		return PW_OK;
	if (parent[0] == '\0')
		pw_error_set(in->err, "%s: missing field \"%s\"", in->file,
		    key);
	else
		pw_error_set(in->err, "%s: %s: missing field \"%s\"", in->file,
		    parent, key);
	return PW_ERR_INPUT;
}

static int
pw_jnumber(struct pw_jin *in, const char *field, const json_t *v,
    enum pw_jsign sign, double *out)
{
	static const char *const what[] = {
		[PW_JS_ANY] = "must be a number",
		[PW_JS_NONNEG] = "must be a non-negative number",
		[PW_JS_POSITIVE] = "must be a positive number",
		[PW_JS_LIMIT] = "must be a non-negative number or null",
	};
	double x;

	if (sign == PW_JS_LIMIT && json_is_null(v)) {
		*out = INFINITY;
		return PW_OK;
	}
	if (!json_is_number(v))
		return pw_jbad(in, field, v, what[sign]);
	x = json_number_value(v);
	if ((sign == PW_JS_POSITIVE && !(x > 0)) ||
	    ((sign == PW_JS_NONNEG || sign == PW_JS_LIMIT) && !(x >= 0)))
		return pw_jbad(in, field, v, what[sign]);
	*out = x;
	return PW_OK;
}

/* Reads number member KEY of OBJ; an absent optional one leaves *OUT as
 * it was (its default). */
static int
pw_jmember_number(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, bool required, enum pw_jsign sign, double *out)
{
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc;

	rc = pw_jmember(in, obj, parent, key, required, field, &v);
	if (rc != PW_OK || v == NULL)
		return rc;
	return pw_jnumber(in, field, v, sign, out);
}

/* Reads the number fields in TABLE from OBJ into the struct at BASE. */
static int
pw_jfields(struct pw_jin *in, const json_t *obj, const char *parent,
    const struct pw_jfield *table, size_t n, void *base)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = pw_jmember_number(in, obj, parent, table[i].key,
		    table[i].required, table[i].sign,
		    pw_jfield_ptr(&table[i], base))) != PW_OK)
			return rc;
	return PW_OK;
}

/* An integer >= MIN (0 or 1) and within int; integral reals count. */
static int
pw_jint(struct pw_jin *in, const char *field, const json_t *v, int min,
    int *out)
{
	double x;

	x = json_is_number(v) ? json_number_value(v) : NAN;
	if (!(x == floor(x) && x >= min))
		return pw_jbad(in, field, v, min > 0 ? "must be a positive "
		    "integer" : "must be a non-negative integer");
	if (x > INT_MAX)
		return pw_jbad(in, field, v, "must be at most 2147483647");
	*out = (int)x;
	return PW_OK;
}

/* An index below COUNT into something the problem has NOUNS of. */
static int
pw_jref(struct pw_jin *in, const char *field, const json_t *v,
    const char *noun, const char *nouns, int count, int *out)
{
	int rc;

	if ((rc = pw_jint(in, field, v, 0, out)) != PW_OK)
		return rc;
	if (*out >= count) {
		pw_error_set(in->err, "%s: %s: %s %d does not exist (%s = %d)",
		    in->file, field, noun, *out, nouns, count);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* Member KEY as pw_jint reads it; when not REQUIRED, an absent one
 * leaves *OUT as it is. */
static int
pw_jmember_intx(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, bool required, int min, int *out)
{
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc;

	rc = pw_jmember(in, obj, parent, key, required, field, &v);
	if (rc != PW_OK || v == NULL)
		return rc;
	return pw_jint(in, field, v, min, out);
}

static int
pw_jmember_int(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, int min, int *out)
{
	return pw_jmember_intx(in, obj, parent, key, true, min, out);
}

static int
pw_jmember_ref(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, const char *noun, const char *nouns, int count, int *out)
{
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc;

	if ((rc = pw_jmember(in, obj, parent, key, true, field, &v)) != PW_OK)
		return rc;
	return pw_jref(in, field, v, noun, nouns, count, out);
}

/* Member KEY as an array of objects (at least one when NONEMPTY). */
static int
pw_jarray(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, bool nonempty, json_t **out)
{
	char field[PW_FIELD_MAX];
	int rc;

	if ((rc = pw_jmember(in, obj, parent, key, true, field, out)) != PW_OK)
		return rc;
	if (!json_is_array(*out))
		return pw_jbad(in, field, *out, "must be an array");
	if (nonempty && json_array_size(*out) == 0)
		return pw_jbad(in, field, *out, "must not be empty");
	if (json_array_size(*out) > INT_MAX)
		return pw_jbad(in, field, *out, "has too many entries");
	return PW_OK;
}

/* Element I of ARRAY (named PARENT), which must be an object; names it in
 * FIELD. */
static int
pw_jelement(struct pw_jin *in, const json_t *array, const char *parent,
    size_t i, char *field, json_t **out)
{
	pw_jname_index(field, parent, i);
	*out = json_array_get(array, i);
	if (!json_is_object(*out))
		return pw_jbad(in, field, *out, "must be an object");
	return PW_OK;
}

static int
pw_jread_stage(struct pw_jin *in, const json_t *obj, const char *parent,
    struct pw_problem *p, struct pw_stage *st)
{
	int rc;

	if ((rc = pw_jmember_ref(in, obj, parent, "device", "device",
	    "devices", p->devices, &st->device)) != PW_OK ||
	    (rc = pw_jfields(in, obj, parent, pw_jstage, PW_NFIELDS(pw_jstage),
	    st)) != PW_OK)
		return rc;
	return pw_jmember_number(in, obj, parent, "comm", false, PW_JS_NONNEG,
	    &st->comm);
}

/* Groups as listed take the first numbers; every device listed in none
 * gets a group of its own after them, in device order. */
static int
pw_jread_groups(struct pw_jin *in, const json_t *groups, const char *field,
    struct pw_problem *p)
{
	char gname[PW_FIELD_MAX], dname[PW_FIELD_MAX];
	const json_t *g;
	int *member, d, ngroups, rc = PW_OK;
	size_t i, j;

	if (!json_is_array(groups) || json_array_size(groups) > INT_MAX)
		return pw_jbad(in, field, groups, "must be an array of arrays "
		    "of devices");
	/* member[d]: 1 + the group listing device d, or 0. */
	member = pw_xcalloc((size_t)p->devices, sizeof *member);
	json_array_foreach(groups, i, g) {
		pw_jname_index(gname, field, i);
		if (!json_is_array(g) || json_array_size(g) == 0) {
			rc = pw_jbad(in, gname, g, "must be a non-empty array "
			    "of devices");
			goto out;
		}
		for (j = 0; j < json_array_size(g); j++) {
			pw_jname_index(dname, gname, j);
			if ((rc = pw_jref(in, dname, json_array_get(g, j),
			    "device", "devices", p->devices, &d)) != PW_OK)
				goto out;
			if (member[d] != 0) {
				pw_error_set(in->err, "%s: %s: device %d is "
				    "already in %s[%d]", in->file, dname, d,
				    field, member[d] - 1);
				rc = PW_ERR_INPUT;
				goto out;
			}
			member[d] = (int)i + 1;
		}
	}
	ngroups = (int)json_array_size(groups);
	for (d = 0; d < p->devices; d++)
		p->link.group[d] = member[d] != 0 ? member[d] - 1 : ngroups++;
	p->link.ngroups = ngroups;
out:
	free(member);
	return rc;
}

static int
pw_jread_link(struct pw_jin *in, const json_t *obj, const char *field,
    struct pw_problem *p)
{
	struct pw_link link = { .duplex = true };
	char name[PW_FIELD_MAX];
	json_t *v;
	int rc;

	if (!json_is_object(obj))
		return pw_jbad(in, field, obj, "must be an object");
	if ((rc = pw_jfields(in, obj, field, pw_jlink, PW_NFIELDS(pw_jlink),
	    &link)) != PW_OK ||
	    (rc = pw_jmember(in, obj, field, "duplex", false, name,
	    &v)) != PW_OK)
		return rc;
	if (v != NULL) {
		if (!json_is_boolean(v))
			return pw_jbad(in, name, v, "must be true or false");
		link.duplex = json_is_true(v);
	}
	pw_problem_set_link(p, link.d2h, link.h2d, link.latency, link.duplex);
	rc = pw_jmember(in, obj, field, "groups", false, name, &v);
	if (rc != PW_OK)
		return rc;
	return v != NULL ? pw_jread_groups(in, v, name, p) : PW_OK;
}

/* Member KEY of OBJ as one of the N strings in NAMES; *OUT its index. */
static int
pw_jmember_enum(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, const char *const *names, size_t n, int *out)
{
	char field[PW_FIELD_MAX], what[PW_FIELD_MAX];
	json_t *v;
	size_t i, used = 0;
	int rc;

	if ((rc = pw_jmember(in, obj, parent, key, true, field, &v)) != PW_OK)
		return rc;
	for (i = 0; i < n; i++)
		if (json_is_string(v) && strcmp(json_string_value(v),
		    names[i]) == 0) {
			*out = (int)i;
			return PW_OK;
		}
	used = (size_t)snprintf(what, sizeof what, "must be one of");
	for (i = 0; i < n && used < sizeof what; i++)
		used += (size_t)snprintf(what + used, sizeof what - used,
		    "%s \"%s\"", i == 0 ? "" : ",", names[i]);
	return pw_jbad(in, field, v, what);
}

/* Member KEY, true or false; when not REQUIRED, an absent one leaves
 * *OUT as it is. */
static int
pw_jmember_bool(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, bool required, bool *out)
{
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc;

	rc = pw_jmember(in, obj, parent, key, required, field, &v);
	if (rc != PW_OK || v == NULL)
		return rc;
	if (!json_is_boolean(v))
		return pw_jbad(in, field, v, "must be true or false");
	*out = json_is_true(v);
	return PW_OK;
}

/* Member KEY of OBJ: a string that lives as long as OBJ, or NULL when
 * absent and not REQUIRED. */
static int
pw_jmember_text(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, bool required, const char **out)
{
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc;

	*out = NULL;
	if ((rc = pw_jmember(in, obj, parent, key, required, field,
	    &v)) != PW_OK || v == NULL)
		return rc;
	if (!json_is_string(v))
		return pw_jbad(in, field, v, "must be a string");
	*out = json_string_value(v);
	return PW_OK;
}

/* Member "name" of OBJ, optional. */
static int
pw_jmember_name(struct pw_jin *in, const json_t *obj, const char *parent,
    const char **out)
{
	return pw_jmember_text(in, obj, parent, "name", false, out);
}

/* Member KEY of OBJ as an object, named in FIELD. */
static int
pw_jmember_object(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, char *field, json_t **out)
{
	int rc;

	if ((rc = pw_jmember(in, obj, parent, key, true, field, out)) != PW_OK)
		return rc;
	return json_is_object(*out) ? PW_OK :
	    pw_jbad(in, field, *out, "must be an object");
}

/* Member "recompute", a name pw_recompute_parse reads. */
static int
pw_jmember_recompute(struct pw_jin *in, const json_t *obj,
    const char *parent, enum pw_recompute *out)
{
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc;

	if ((rc = pw_jmember(in, obj, parent, "recompute", true, field,
	    &v)) != PW_OK)
		return rc;
	if (json_is_string(v) && pw_recompute_parse(json_string_value(v), out))
		return PW_OK;
	return pw_jbad(in, field, v, "must be one of " PW_RECOMPUTE_CHOICES);
}

static int
pw_jread_model(struct pw_jin *in, const json_t *obj, const char *parent,
    struct pw_model *m)
{
	size_t i;
	int rc;

	if ((rc = pw_jmember_name(in, obj, parent, &m->name)) != PW_OK)
		return rc;
	for (i = 0; i < PW_NFIELDS(pw_jmodel); i++)
		if ((rc = pw_jmember_int(in, obj, parent, pw_jmodel[i].key,
		    pw_jmodel[i].min, (int *)((char *)m +
		    pw_jmodel[i].off))) != PW_OK)
			return rc;
	/* Files from before gated MLPs and tied embeddings have neither. */
	if ((rc = pw_jmember_bool(in, obj, parent, "flash_attention", true,
	    &m->flash_attention)) != PW_OK ||
	    (rc = pw_jmember_bool(in, obj, parent, "gated_mlp", false,
	    &m->gated_mlp)) != PW_OK ||
	    (rc = pw_jmember_bool(in, obj, parent, "tied_embeddings", false,
	    &m->tied_embeddings)) != PW_OK ||
	    (rc = pw_jmember_recompute(in, obj, parent, &m->recompute)) != PW_OK)
		return rc;
	return PW_OK;
}

/* Reads SPLIT's own fields; devices and microbatches are the problem's. */
static int
pw_jread_split(struct pw_jin *in, const json_t *obj, const char *parent,
    struct pw_split *sp, int **layers)
{
	char field[PW_FIELD_MAX], elem[PW_FIELD_MAX];
	json_t *v;
	size_t i;
	int rc, placement;

	if ((rc = pw_jmember_int(in, obj, parent, "chunks", 1,
	    &sp->chunks)) != PW_OK ||
	    (rc = pw_jmember_enum(in, obj, parent, "placement",
	    pw_placement_names, PW_NPLACEMENTS, &placement)) != PW_OK ||
	    (rc = pw_jfields(in, obj, parent, pw_jsplit, PW_NFIELDS(pw_jsplit),
	    sp)) != PW_OK ||
	    (rc = pw_jfields(in, obj, parent, pw_jreserve,
	    PW_NFIELDS(pw_jreserve), sp)) != PW_OK ||
	    (rc = pw_jmember_intx(in, obj, parent, "tp", false, 0,
	    &sp->tp)) != PW_OK ||
	    (rc = pw_jmember_intx(in, obj, parent, "dp", false, 0,
	    &sp->dp)) != PW_OK ||
	    (rc = pw_jmember_bool(in, obj, parent, "offload", true,
	    &sp->offload)) != PW_OK ||
	    (rc = pw_jmember(in, obj, parent, "layers_per_stage", false, field,
	    &v)) != PW_OK)
		return rc;
	sp->placement = (enum pw_placement)placement;
	if (v == NULL)
		return PW_OK;
	if (!json_is_array(v) || json_array_size(v) !=
	    (size_t)sp->devices * (size_t)sp->chunks)
		return pw_jbad(in, field, v, "must be an array of one layer "
		    "count per stage");
	*layers = pw_xcalloc(json_array_size(v), sizeof **layers);
	for (i = 0; i < json_array_size(v); i++)
		if ((rc = pw_jint(in, pw_jname_index(elem, field, i),
		    json_array_get(v, i), 1, &(*layers)[i])) != PW_OK)
			return rc;
	sp->layers_per_stage = *layers;
	return PW_OK;
}

/*
 * Reads the origin OBJ (named FIELD) of problem P.  It is kept only when
 * the cost model still builds exactly P from it: a file whose costs were
 * edited by hand keeps its edits, and nothing splits the stale model
 * again behind the user's back.
 */
static int
pw_jread_origin(struct pw_jin *in, const json_t *obj, const char *field,
    struct pw_problem *p)
{
	struct pw_model m;
	struct pw_hardware hw;
	struct pw_split sp;
	struct pw_problem *rebuilt = NULL;
	struct pw_error why;
	char part[PW_FIELD_MAX];
	json_t *v;
	int *layers = NULL, rc;

	memset(&m, 0, sizeof m);
	memset(&hw, 0, sizeof hw);
	memset(&sp, 0, sizeof sp);
	sp.devices = p->devices;
	sp.microbatches = p->microbatches;
	if (!json_is_object(obj))
		return pw_jbad(in, field, obj, "must be an object");
	if ((rc = pw_jmember_object(in, obj, field, "model", part,
	    &v)) != PW_OK ||
	    (rc = pw_jread_model(in, v, part, &m)) != PW_OK ||
	    (rc = pw_jmember_object(in, obj, field, "hardware", part,
	    &v)) != PW_OK ||
	    (rc = pw_jmember_name(in, v, part, &hw.name)) != PW_OK ||
	    (rc = pw_jfields(in, v, part, pw_jhardware,
	    PW_NFIELDS(pw_jhardware), &hw)) != PW_OK ||
	    (rc = pw_jmember_object(in, obj, field, "split", part,
	    &v)) != PW_OK ||
	    (rc = pw_jread_split(in, v, part, &sp, &layers)) != PW_OK)
		goto out;
	if (pw_cost_problem(&m, &hw, &sp, &rebuilt, &why) != PW_OK) {
		pw_error_set(in->err, "%s: %s: the cost model cannot build "
		    "it: %s", in->file, field, why.msg);
		rc = PW_ERR_INPUT;
		goto out;
	}
	if (pw_problem_same(p, rebuilt)) {
		p->origin = rebuilt->origin;
		rebuilt->origin = NULL;
	}
out:
	pw_problem_free(rebuilt);
	free(layers);
	return rc;
}

/* Reads the problem object OBJ, named PARENT in messages ("" at the top
 * of a problem file).  Returns a problem the caller owns in *OUT. */
static int
pw_jread_problem(struct pw_jin *in, const json_t *obj, const char *parent,
    struct pw_problem **out)
{
	struct pw_problem *p = NULL;
	char field[PW_FIELD_MAX], elem[PW_FIELD_MAX];
	json_t *stages, *memory, *v;
	double comm = 0;
	int devices, microbatches, rc;
	size_t i;

	*out = NULL;
	if (!json_is_object(obj))
		return pw_jbad(in, parent, obj, "must be an object");
	if ((rc = pw_jmember_int(in, obj, parent, "devices", 1,
	    &devices)) != PW_OK ||
	    (rc = pw_jmember_int(in, obj, parent, "microbatches", 1,
	    &microbatches)) != PW_OK ||
	    (rc = pw_jmember_number(in, obj, parent, "comm", false,
	    PW_JS_NONNEG, &comm)) != PW_OK ||
	    (rc = pw_jarray(in, obj, parent, "stages", true,
	    &stages)) != PW_OK ||
	    (rc = pw_jarray(in, obj, parent, "memory", false,
	    &memory)) != PW_OK)
		return rc;
	if (json_array_size(memory) != (size_t)devices) {
		pw_error_set(in->err, "%s: %s: must have %d entries, one per "
		    "device (got %zu)", in->file, pw_jname(field, parent,
		    "memory"), devices, json_array_size(memory));
		return PW_ERR_INPUT;
	}
	if ((rc = pw_problem_check_counts_in(devices,
	    (int)json_array_size(stages), microbatches, in->file, parent,
	    in->err)) != PW_OK)
		return rc;

	p = pw_problem_new(devices, (int)json_array_size(stages), microbatches);
	pw_problem_set_comm(p, comm);
	pw_jname(field, parent, "stages");
	for (i = 0; i < json_array_size(stages); i++)
		if ((rc = pw_jelement(in, stages, field, i, elem,
		    &v)) != PW_OK ||
		    (rc = pw_jread_stage(in, v, elem, p,
		    &p->stages[i])) != PW_OK)
			goto out;
	pw_jname(field, parent, "memory");
	for (i = 0; i < json_array_size(memory); i++)
		if ((rc = pw_jelement(in, memory, field, i, elem,
		    &v)) != PW_OK ||
		    (rc = pw_jfields(in, v, elem, pw_jmemory,
		    PW_NFIELDS(pw_jmemory), &p->memory[i])) != PW_OK)
			goto out;
	rc = pw_jmember(in, obj, parent, "link", false, field, &v);
	if (rc != PW_OK || (v != NULL &&
	    (rc = pw_jread_link(in, v, field, p)) != PW_OK))
		goto out;
	if ((rc = pw_jmember(in, obj, parent, "name", false, field,
	    &v)) != PW_OK)
		goto out;
	if (v != NULL) {
		if (!json_is_string(v)) {
			rc = pw_jbad(in, field, v, "must be a string");
			goto out;
		}
		p->name = pw_xstrdup(json_string_value(v));
	}
	if ((rc = pw_problem_validate_in(p, in->file, parent, in->err)) !=
	    PW_OK)
		goto out;
	if ((rc = pw_jmember(in, obj, parent, "origin", false, field,
	    &v)) != PW_OK || (v != NULL &&
	    (rc = pw_jread_origin(in, v, field, p)) != PW_OK))
		goto out;
	*out = p;
	p = NULL;
out:
	pw_problem_free(p);
	return rc;
}

/* A kind's name; the message lists them all. */
static int
pw_jkind(struct pw_jin *in, const char *field, const json_t *v,
    enum pw_kind *out)
{
	char what[64];
	int k, n;

	if (json_is_string(v) && pw_kind_parse(json_string_value(v),
	    out) == PW_OK)
		return PW_OK;
	n = snprintf(what, sizeof what, "must be ");
	for (k = 0; k < PW_NKINDS; k++)
		n += snprintf(what + n, sizeof what - (size_t)n, "%s%s",
		    k == 0 ? "" : k == PW_NKINDS - 1 ? " or " : ", ",
		    pw_kind_name((enum pw_kind)k));
	return pw_jbad(in, field, v, what);
}

/* Reads "kind", "stage" and "mb" of OBJ: an op, or the anchor it names. */
static int
pw_jread_opref(struct pw_jin *in, const json_t *obj, const char *parent,
    const struct pw_problem *p, struct pw_op *op)
{
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc;

	if ((rc = pw_jmember(in, obj, parent, "kind", true, field,
	    &v)) != PW_OK ||
	    (rc = pw_jkind(in, field, v, &op->kind)) != PW_OK ||
	    (rc = pw_jmember_ref(in, obj, parent, "stage", "stage", "stages",
	    p->nstages, &op->stage)) != PW_OK)
		return rc;
	return pw_jmember_ref(in, obj, parent, "mb", "microbatch",
	    "microbatches", p->microbatches, &op->mb);
}

/* Reads one op.  What makes a schedule invalid rather than unreadable (a
 * wrong device for its stage, an anchor on an op that is no RELOAD or at
 * an op that is no compute op) is read as stated: the checker reports
 * it. */
static int
pw_jread_op(struct pw_jin *in, const json_t *obj, const char *parent,
    const struct pw_problem *p, struct pw_timed_op *to)
{
	static const char *const at[] = { "start", "end" };
	char field[PW_FIELD_MAX];
	json_t *v;
	int rc, where = 0;

	if ((rc = pw_jmember_ref(in, obj, parent, "device", "device",
	    "devices", p->devices, &to->device)) != PW_OK ||
	    (rc = pw_jread_opref(in, obj, parent, p, &to->op)) != PW_OK ||
	    (rc = pw_jmember_number(in, obj, parent, "start", true, PW_JS_ANY,
	    &to->start)) != PW_OK ||
	    (rc = pw_jmember_number(in, obj, parent, "end", true, PW_JS_ANY,
	    &to->end)) != PW_OK)
		return rc;
	if (pw_kind_is_transfer(to->op.kind) &&
	    (rc = pw_jmember_number(in, obj, parent, "bytes", true,
	    PW_JS_NONNEG, &to->bytes)) != PW_OK)
		return rc;
	rc = pw_jmember(in, obj, parent, "after", false, field, &v);
	if (rc != PW_OK || v == NULL)
		return rc;
	if (!json_is_object(v))
		return pw_jbad(in, field, v, "must be an object");
	to->has_anchor = true;
	if ((rc = pw_jread_opref(in, v, field, p, &to->anchor.op)) != PW_OK)
		return rc;
	/* "at" is optional: an anchor's start unless it says "end". */
	if (json_object_get(v, "at") != NULL &&
	    (rc = pw_jmember_enum(in, v, field, "at", at, 2, &where)) != PW_OK)
		return rc;
	to->anchor.at_end = where == 1;
	return PW_OK;
}

/* Reads one pin: two compute ops of one device, not one op twice. */
static int
pw_jread_pin(struct pw_jin *in, const json_t *obj, const char *parent,
    const struct pw_problem *p, struct pw_pin *pin)
{
	char field[PW_FIELD_MAX], kind[PW_FIELD_MAX];
	struct pw_error why;
	struct pw_op *op;
	json_t *v;
	size_t i;
	int rc;

	for (i = 0; i < PW_NFIELDS(pw_jpin); i++) {
		op = (struct pw_op *)((char *)pin + pw_jpin[i].off);
		if ((rc = pw_jmember(in, obj, parent, pw_jpin[i].key, true,
		    field, &v)) != PW_OK)
			return rc;
		if (!json_is_object(v))
			return pw_jbad(in, field, v, "must be an object");
		if ((rc = pw_jread_opref(in, v, field, p, op)) != PW_OK)
			return rc;
		if (pw_kind_is_transfer(op->kind))
			return pw_jbad(in, pw_jname(kind, field, "kind"),
			    json_object_get(v, "kind"), "must be a compute "
			    "op's kind: F, B, W or BW");
	}
	if ((rc = pw_pin_check(p, pin, &why)) != PW_OK)
		pw_error_set(in->err, "%s: %s: %s", in->file, parent, why.msg);
	return rc;
}

/* Reads OBJ's optional "pins" for P: *PINS the caller frees, NULL when
 * there are none. */
static int
pw_jread_pins(struct pw_jin *in, const json_t *obj,
    const struct pw_problem *p, struct pw_pin **pins, size_t *npins)
{
	char field[PW_FIELD_MAX];
	json_t *array, *v;
	size_t i, n;
	int rc;

	*pins = NULL;
	*npins = 0;
	if ((rc = pw_jmember(in, obj, "", "pins", false, field,
	    &array)) != PW_OK || array == NULL)
		return rc;
	if (!json_is_array(array))
		return pw_jbad(in, field, array, "must be an array");
	if ((n = json_array_size(array)) == 0)
		return PW_OK;
	*pins = pw_xreallocarray(NULL, n, sizeof **pins);
	for (i = 0; i < n; i++)
		if ((rc = pw_jelement(in, array, "pins", i, field,
		    &v)) != PW_OK ||
		    (rc = pw_jread_pin(in, v, field, p, &(*pins)[i])) != PW_OK) {
			free(*pins);
			*pins = NULL;
			return rc;
		}
	*npins = n;
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* The measured section                                                */

/* Member KEY of OBJ as an array of N entries, one per NOUN; each
 * element is then read by the caller. */
static int
pw_jarray_of(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, size_t n, const char *noun, char *field, json_t **out)
{
	int rc;

	if ((rc = pw_jmember(in, obj, parent, key, true, field, out)) != PW_OK)
		return rc;
	if (!json_is_array(*out))
		return pw_jbad(in, field, *out, "must be an array");
	if (json_array_size(*out) != n) {
		pw_error_set(in->err, "%s: %s: must have %zu entries, one per "
		    "%s (got %zu)", in->file, field, n, noun,
		    json_array_size(*out));
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* Member KEY of OBJ: N non-negative numbers, one per NOUN, into X. */
static int
pw_jnumbers(struct pw_jin *in, const json_t *obj, const char *parent,
    const char *key, size_t n, const char *noun, double *x)
{
	char field[PW_FIELD_MAX], elem[PW_FIELD_MAX];
	json_t *array;
	size_t i;
	int rc;

	if ((rc = pw_jarray_of(in, obj, parent, key, n, noun, field,
	    &array)) != PW_OK)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = pw_jnumber(in, pw_jname_index(elem, field, i),
		    json_array_get(array, i), PW_JS_NONNEG, &x[i])) != PW_OK)
			return rc;
	return PW_OK;
}

/* The sizes of a workload: read as integers here, judged (their range,
 * zero included) by pw_workload_validate. */
static const struct pw_jintfield pw_jworkload[] = {
	{ "hidden", offsetof(struct pw_workload, hidden), 0 },
	{ "ffn", offsetof(struct pw_workload, ffn), 0 },
	{ "tokens", offsetof(struct pw_workload, tokens), 0 },
};

static int
pw_jread_workload(struct pw_jin *in, const json_t *obj, const char *parent,
    const struct pw_problem *p, struct pw_workload *w)
{
	char field[PW_FIELD_MAX], elem[PW_FIELD_MAX];
	json_t *v, *array;
	size_t i;
	int rc;

	if ((rc = pw_jmember_object(in, obj, parent, "workload", field,
	    &v)) != PW_OK)
		return rc;
	for (i = 0; i < PW_NFIELDS(pw_jworkload); i++)
		if ((rc = pw_jmember_int(in, v, field, pw_jworkload[i].key,
		    pw_jworkload[i].min, (int *)((char *)w +
		    pw_jworkload[i].off))) != PW_OK)
			return rc;
	if ((rc = pw_jmember_bool(in, v, field, "scaled", false,
	    &w->scaled)) != PW_OK ||
	    (rc = pw_jarray_of(in, v, field, "layers", (size_t)p->nstages,
	    "stage", elem, &array)) != PW_OK)
		return rc;
	w->nstages = p->nstages;
	w->layers = pw_xcalloc((size_t)p->nstages + 1, sizeof *w->layers);
	for (i = 0; i < (size_t)p->nstages; i++)
		if ((rc = pw_jint(in, pw_jname_index(field, elem, i),
		    json_array_get(array, i), 0, &w->layers[i])) != PW_OK)
			return rc;
	return PW_OK;
}

/* Measured op I, the object V, into MO. */
static int
pw_jread_measured_op(struct pw_jin *in, const json_t *v, const char *elem,
    const struct pw_problem *p, int iterations, struct pw_measured_op *mo)
{
	char field[PW_FIELD_MAX];
	struct pw_error why;
	json_t *name;
	int rc;

	if ((rc = pw_jmember(in, v, elem, "op", true, field, &name)) != PW_OK)
		return rc;
	if (!json_is_string(name))
		return pw_jbad(in, field, name, "must be an op's name, as "
		    "\"F(0,3)\"");
	if (pw_op_parse(json_string_value(name), p, &mo->op, &why) != PW_OK) {
		pw_error_set(in->err, "%s: %s: %s", in->file, field, why.msg);
		return PW_ERR_INPUT;
	}
	if ((rc = pw_jmember_ref(in, v, elem, "device", "device", "devices",
	    p->devices, &mo->device)) != PW_OK ||
	    (rc = pw_jmember_number(in, v, elem, "start", true, PW_JS_NONNEG,
	    &mo->start)) != PW_OK ||
	    (rc = pw_jmember_number(in, v, elem, "end", true, PW_JS_NONNEG,
	    &mo->end)) != PW_OK ||
	    (rc = pw_jmember_number(in, v, elem, "arrive", false,
	    PW_JS_NONNEG, &mo->arrive)) != PW_OK)
		return rc;
	return pw_jnumbers(in, v, elem, "durations", (size_t)iterations,
	    "iteration", mo->durations);
}

/* Whether the arrays a run of ITERATIONS allocates (step, loss, each
 * op's durations) have that many entries, and ITERATIONS is within
 * PW_MAX_ITERATIONS: checked before anything is allocated, so that a
 * stated count alone never sizes memory. */
static int
pw_jmeasured_sizes(struct pw_jin *in, const json_t *obj, const char *parent,
    const json_t *ops, int iterations)
{
	char field[PW_FIELD_MAX], elem[PW_FIELD_MAX], dfield[PW_FIELD_MAX];
	json_t *v, *array;
	size_t i;
	int rc;

	if (iterations > PW_MAX_ITERATIONS) {
		pw_error_set(in->err, "%s: measured.iterations: must be at most "
		    "%d (got %d)", in->file, PW_MAX_ITERATIONS, iterations);
		return PW_ERR_INPUT;
	}
	if ((rc = pw_jarray_of(in, obj, parent, "step", (size_t)iterations,
	    "iteration", field, &array)) != PW_OK ||
	    (rc = pw_jarray_of(in, obj, parent, "loss", (size_t)iterations,
	    "iteration", field, &array)) != PW_OK)
		return rc;
	pw_jname(field, parent, "ops");
	for (i = 0; i < json_array_size(ops); i++)
		if ((rc = pw_jelement(in, ops, field, i, elem, &v)) != PW_OK ||
		    (rc = pw_jarray_of(in, v, elem, "durations",
		    (size_t)iterations, "iteration", dfield, &array)) != PW_OK)
			return rc;
	return PW_OK;
}

/* Reads the measured section OBJ of a file whose problem is P; the
 * schedule's judgement (pw_measured_validate) is the caller's.  Returns
 * a run the caller owns in *OUT. */
static int
pw_jread_measured(struct pw_jin *in, const json_t *obj,
    const struct pw_problem *p, struct pw_measured **out)
{
	static const char *const text[] = { "backend", "transport", "host" };
	const char *parent = "measured", *s[3];
	char field[PW_FIELD_MAX], elem[PW_FIELD_MAX];
	struct pw_measured *m = NULL;
	json_t *ops, *v;
	int iterations, warmup, shown, rc;
	size_t i;

	*out = NULL;
	if (!json_is_object(obj))
		return pw_jbad(in, parent, obj, "must be an object");
	for (i = 0; i < PW_NFIELDS(text); i++)
		if ((rc = pw_jmember_text(in, obj, parent, text[i], true,
		    &s[i])) != PW_OK)
			return rc;
	if ((rc = pw_jmember_int(in, obj, parent, "iterations", 1,
	    &iterations)) != PW_OK ||
	    (rc = pw_jmember_int(in, obj, parent, "warmup", 0,
	    &warmup)) != PW_OK ||
	    (rc = pw_jmember_int(in, obj, parent, "shown", 0,
	    &shown)) != PW_OK ||
	    (rc = pw_jarray(in, obj, parent, "ops", false, &ops)) != PW_OK)
		return rc;
	if (json_array_size(ops) > pw_op_universe(p))
		return pw_jbad(in, "measured.ops", ops, "must list each op of "
		    "the schedule once");
	if ((rc = pw_jmeasured_sizes(in, obj, parent, ops, iterations)) != PW_OK)
		return rc;
	if ((m = pw_measured_new(p->devices, json_array_size(ops),
	    iterations)) == NULL) {
		pw_error_set(in->err, "%s: measured: %zu ops of %d iterations "
		    "each: too many to hold", in->file, json_array_size(ops),
		    iterations);
		return PW_ERR_INPUT;
	}
	m->backend = pw_xstrdup(s[0]);
	m->transport = pw_xstrdup(s[1]);
	m->host = pw_xstrdup(s[2]);
	m->warmup = warmup;
	m->shown = shown;
	if ((rc = pw_jmember_bool(in, obj, parent, "emulated", false,
	    &m->emulated)) != PW_OK ||
	    (rc = pw_jnumbers(in, obj, parent, "step", (size_t)iterations,
	    "iteration", m->step)) != PW_OK ||
	    (rc = pw_jnumbers(in, obj, parent, "loss", (size_t)iterations,
	    "iteration", m->loss)) != PW_OK ||
	    (rc = pw_jnumbers(in, obj, parent, "peak", (size_t)p->devices,
	    "device", m->peak)) != PW_OK ||
	    (rc = pw_jread_workload(in, obj, parent, p,
	    &m->workload)) != PW_OK)
		goto out;
	pw_jname(field, parent, "ops");
	for (i = 0; i < m->nops; i++)
		if ((rc = pw_jelement(in, ops, field, i, elem, &v)) != PW_OK ||
		    (rc = pw_jread_measured_op(in, v, elem, p, iterations,
		    &m->ops[i])) != PW_OK)
			goto out;
	*out = m;
	m = NULL;
out:
	pw_measured_free(m);
	return rc;
}

/* Reads ROOT's measured section, if any, into *OUT and judges it
 * against the schedule OPS state. */
static int
pw_jmeasured_of(struct pw_jin *in, const json_t *root,
    const struct pw_problem *p, const struct pw_timed_op *ops, size_t nops,
    struct pw_measured **out)
{
	struct pw_schedule *sched = NULL;
	struct pw_error why;
	const json_t *v;
	int rc;

	*out = NULL;
	if ((v = json_object_get(root, "measured")) == NULL)
		return PW_OK;
	if ((rc = pw_jread_measured(in, v, p, out)) != PW_OK)
		return rc;
	if ((rc = pw_schedule_from_timed(p, ops, nops, &sched,
	    &why)) != PW_OK)
		pw_error_set(in->err, "%s: %s", in->file, why.msg);
	else
		rc = pw_measured_validate(p, sched, *out, in->file, in->err);
	pw_schedule_free(sched);
	if (rc != PW_OK) {
		pw_measured_free(*out);
		*out = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* Loader: yajl streams the text, jansson holds the values             */

/*
 * A schedule file's top-level "ops" array never becomes one tree: a
 * reader of the problem alone skips its elements, and a reader of the
 * ops reads each element as it closes, once the format and the problem
 * before it are read.  A file that states its ops before those is read
 * twice: the first pass skips the ops, the second reads them (input that
 * cannot seek is kept in a temporary file for it).  A top-level
 * "measured" section is skipped the same way unless its run is wanted:
 * then it is kept whole and read once the ops are.
 */
struct pw_jfile {
	struct pw_jin	*in;
	bool		 schedule_only;
	bool		 want_ops;	/* read the ops, else skip them */
	bool		 want_pins;	/* read the pins (always with the ops) */
	bool		 want_measured;	/* read the measured run (with the ops) */
	bool		 headed;	/* the format and problem are read */
	bool		 rescan;	/* ops came before them: read again */
	bool		 schedule;	/* a schedule file */
	struct pw_problem *p;
	struct pw_timed_op *ops;
	size_t		 nops, cap;
	struct pw_pin	*pins;		/* a schedule file's, with its ops */
	size_t		 npins;
	struct pw_measured *measured;	/* a schedule file's, when wanted */
	char		*family;	/* a schedule file's, or NULL */
};

/* The deepest nesting read, as jansson's own parser allows: deeper
 * values would overflow the stack of jansson's recursive release. */
#define PW_JSON_MAX_DEPTH	2048
/* The longest string read, PW_TEXT_MAX as decoded, and the longest
 * number: yajl lexes a token that spans its input chunks again from its
 * start at every chunk, so that its time grows with the square of the
 * token's length. */
#define PW_JSON_MAX_STRING	PW_TEXT_MAX
#define PW_JSON_MAX_NUMBER	4096

/* An open container and, for an object, the key of its next member (a
 * JSON string, so that jansson has checked it). */
struct pw_jframe {
	json_t	*v;
	json_t	*key;
};

/* Where the raw text stands between strings' "\u" escapes, which yajl
 * decodes more loosely than jansson: it turns a lone low surrogate into
 * bytes jansson refuses, a lone high one into "?", and pairs a high one
 * with any escape that follows. */
enum pw_jesc {
	PW_JE_OUT,		/* outside strings */
	PW_JE_STRING,
	PW_JE_BACKSLASH,
	PW_JE_HEX		/* in the digits of "\u" */
};

struct pw_jscan {
	enum pw_jesc	 state;
	int		 digits;
	unsigned	 unit;		/* the UTF-16 unit being read */
	bool		 high;		/* a high surrogate awaits its pair */
	uint64_t	 at;		/* offset of the byte scanned next */
	int		 line, column;	/* of the byte scanned last */
	uint64_t	 bad;		/* offset of the first bad escape */
	/* The token being read: a string's text as decoded (escapes
	 * counted as the bytes they stand for, as the writers count it),
	 * or a number's characters, from where it starts. */
	uint64_t	 token_len;
	int		 token_line, token_column;
	const char	*too_long;	/* what it is: "a string longer than ..." */
};

struct pw_jparse {
	struct pw_jfile	*f;
	yajl_handle	 h;
	struct pw_jframe *stack;
	size_t		 depth, cap;
	json_t		*root;
	size_t		 skip;		/* depth inside a skipped array, or 0 */
	/* [skipped_cap]: a skipped object's keys so far at each depth of
	 * skip (a JSON object of nulls, kept and cleared for the next
	 * object there; NULL until one opens), so that a duplicate key is an
	 * error whether or not the command reads that part of the file. */
	json_t		**skipped;
	size_t		 skipped_cap;
	bool		 stream;	/* the open ops array's elements are read */
	bool		 csv_like;	/* the text starts as a schedule CSV */
	/* The chunk being parsed and the line and column at its start, for
	 * messages. */
	const unsigned char *chunk;
	size_t		 chunklen;
	int		 line, column;
	uint64_t	 offset;	/* of the chunk in the text */
	struct pw_jscan	 scan;
	int		 rc;
};

/* Checks the root's format (a schedule file, or when !SCHEDULE_ONLY also
 * a problem file) and reads its problem. */
static int
pw_jhead(struct pw_jfile *f, const json_t *root)
{
	struct pw_jin *in = f->in;
	char field[PW_FIELD_MAX];
	const char *format;
	json_t *v;
	int rc;

	f->headed = true;
	if (!json_is_object(root))
		return pw_jbad(in, "", root, "must be a JSON object");
	if ((rc = pw_jmember(in, root, "", "format", true, field,
	    &v)) != PW_OK)
		return rc;
	format = json_is_string(v) ? json_string_value(v) : "";
	f->schedule = strcmp(format, PW_FORMAT_SCHEDULE) == 0;
	if (f->schedule_only && !f->schedule)
		return pw_jbad(in, field, v, "must be \"" PW_FORMAT_SCHEDULE
		    "\"");
	if (!f->schedule && strcmp(format, PW_FORMAT_PROBLEM) != 0)
		return pw_jbad(in, field, v, "must be \"" PW_FORMAT_PROBLEM
		    "\" or \"" PW_FORMAT_SCHEDULE "\"");
	if (!f->schedule)
		return pw_jread_problem(in, root, "", &f->p);
	if ((rc = pw_jmember(in, root, "", "problem", true, field,
	    &v)) != PW_OK)
		return rc;
	return pw_jread_problem(in, v, field, &f->p);
}

/* Reads V, element I of "ops", into the next timed op. */
static int
pw_jfile_op(struct pw_jfile *f, const json_t *v, size_t i)
{
	char elem[PW_FIELD_MAX];
	int rc;

	/* A schedule states each op of the problem at most once. */
	if (i >= pw_op_universe(f->p)) {
		pw_error_set(f->in->err, "%s: ops: more than the %zu ops the "
		    "problem has (%d stages x %d microbatches x %d kinds)",
		    f->in->file, pw_op_universe(f->p), f->p->nstages,
		    f->p->microbatches, PW_NKINDS);
		return PW_ERR_INPUT;
	}
	pw_jname_index(elem, "ops", i);
	if (!json_is_object(v))
		return pw_jbad(f->in, elem, v, "must be an object");
	if (f->nops == f->cap) {
		f->cap = f->cap == 0 ? 256 : 2 * f->cap;
		f->ops = pw_xreallocarray(f->ops, f->cap, sizeof *f->ops);
	}
	memset(&f->ops[f->nops], 0, sizeof *f->ops);
	if ((rc = pw_jread_op(f->in, v, elem, f->p, &f->ops[f->nops])) != PW_OK)
		return rc;
	f->nops++;
	return PW_OK;
}

/* Sets a syntax error at the parser's position in its chunk. */
static int
pw_jp_fail(struct pw_jparse *P, const char *what)
{
	size_t i, n = yajl_get_bytes_consumed(P->h);
	int line = P->line, column = P->column;

	if (n > P->chunklen)
		n = P->chunklen;

	for (i = 0; i < n; i++) {
		column++;
		if (P->chunk[i] == '\n') {
			line++;
			column = 0;
		}
	}
	pw_error_set(P->f->in->err, "%s: line %d column %d: JSON syntax "
	    "error: %s", P->f->in->file, line, column, what);
	P->rc = PW_ERR_INPUT;
	return 0;
}

/* Adds a finished value to the open container, or makes it the root;
 * an element of the ops being streamed is read and dropped.  Returns
 * yajl's 1 to go on, 0 to stop. */
static int
pw_jp_value(struct pw_jparse *P, json_t *v)
{
	struct pw_jframe *top;
	size_t i;

	pw_jcheck(v);
	if (P->depth == 0) {
		P->root = v;
		return 1;
	}
	top = &P->stack[P->depth - 1];
	if (json_is_object(top->v)) {
		if (json_object_set_new(top->v, json_string_value(top->key),
		    v) != 0)
			pw_jcheck(NULL);
		json_decref(top->key);
		top->key = NULL;
		return 1;
	}
	if (P->stream && P->depth == 2) {
		i = P->f->nops;
		P->rc = pw_jfile_op(P->f, v, i);
		json_decref(v);
		return P->rc == PW_OK;
	}
	if (json_array_append_new(top->v, v) != 0)
		pw_jcheck(NULL);
	return 1;
}

static int
pw_jp_null(void *ctx)
{
	struct pw_jparse *P = ctx;

	return P->skip > 0 || pw_jp_value(P, json_null());
}

static int
pw_jp_boolean(void *ctx, int b)
{
	struct pw_jparse *P = ctx;

	return P->skip > 0 || pw_jp_value(P, json_boolean(b));
}

/* A number, from its text S of LEN bytes (yajl has checked its
 * grammar): an integer that fits 64 bits is one; a longer integer is
 * read as the real it is near, so that its field says what it must be
 * (yajl would stop at "integer overflow"); a real beyond a double's
 * range is refused naming it. */
static int
pw_jp_number(void *ctx, const char *s, size_t len)
{
	struct pw_jparse *P = ctx;
	char text[PW_JSON_MAX_NUMBER + 1];
	long long x;
	double d;

	snprintf(text, sizeof text, "%.*s", (int)len, s);
	if (strcspn(text, ".eE") == strlen(text)) {
		errno = 0;
		x = strtoll(text, NULL, 10);
		if (errno == 0)
			return P->skip > 0 || pw_jp_value(P, json_integer(x));
	}
	d = strtod(text, NULL);
	if (!isfinite(d))
		return pw_jp_fail(P, "a number beyond the range of a double "
		    "(about 1.8e308)");
	return P->skip > 0 || pw_jp_value(P, json_real(d));
}

/* Marks the first "\\u" escape in the chunk that is not UTF-16 as
 * jansson reads it: a surrogate must come as a high one and then a low
 * one.  The chunk is scanned before yajl parses it, so the mark may lie
 * in text yajl then refuses; pw_jp_text reports it only once yajl has
 * read past it, when that text was valid JSON and the scan exact.  It
 * also counts lines, and stops at a string or number over its limit,
 * before yajl spends the square of its length on it. */
static void
pw_jscan_chunk(struct pw_jscan *S, const unsigned char *s, size_t n)
{
	size_t i;
	bool bad, number;
	int c;

	for (i = 0; i < n && S->too_long == NULL; i++, S->at++) {
		c = s[i];
		bad = false;
		S->column++;
		if (c == '\n') {
			S->line++;
			S->column = 0;
		}
		switch (S->state) {
		case PW_JE_OUT:
			number = c != '\0' && strchr("0123456789+-.eE", c) !=
			    NULL;
			if (c == '"' || (number && S->token_len == 0)) {
				S->token_line = S->line;
				S->token_column = S->column;
			}
			if (c == '"') {
				S->state = PW_JE_STRING;
				S->token_len = 0;
			} else if (!number)
				S->token_len = 0;
			else if (++S->token_len > PW_JSON_MAX_NUMBER)
				S->too_long = "a number longer than 4096 "
				    "characters";
			break;
		case PW_JE_STRING:
			bad = S->high && c != '\\';
			if (c == '\\')
				S->state = PW_JE_BACKSLASH;
			else if (c == '"') {
				S->state = PW_JE_OUT;
				S->token_len = 0;
			} else
				S->token_len++;
			break;
		case PW_JE_BACKSLASH:
			bad = S->high && c != 'u';
			S->state = c == 'u' ? PW_JE_HEX : PW_JE_STRING;
			S->token_len += c != 'u';
			S->unit = 0;
			S->digits = 0;
			break;
		case PW_JE_HEX:
			S->unit = 16 * S->unit + (unsigned)(c <= '9' ?
			    c - '0' : (c | 0x20) - 'a' + 10);
			if (++S->digits < 4)
				break;
			S->state = PW_JE_STRING;
			if (S->unit >= 0xdc00 && S->unit <= 0xdfff)
				bad = !S->high;
			else
				bad = S->high;
			S->high = S->unit >= 0xd800 && S->unit <= 0xdbff;
			/* UTF-8's bytes for it: a pair's four with its high. */
			S->token_len += S->unit < 0x80 ? 1 : S->unit < 0x800 ?
			    2 : S->high ? 4 : S->unit >= 0xdc00 &&
			    S->unit <= 0xdfff ? 0 : 3;
			break;
		}
		if (S->state != PW_JE_OUT && S->token_len > PW_JSON_MAX_STRING)
			S->too_long = "a string longer than 1 MiB";
		if (bad && S->bad == UINT64_MAX)
			S->bad = S->at;
	}
}

/* The string or key yajl just read, S of LEN bytes, as a new JSON
 * string (the caller owns it), or NULL with a syntax error: its raw
 * text had a bad escape, or it holds "\\u0000" (refused as jansson does
 * by default) or is not UTF-8 as jansson reads it (yajl's own check is
 * looser).  Jansson decides, as the value lives in it; text in a
 * skipped array is checked alike, so that whether a file reads does not
 * depend on the command. */
static json_t *
pw_jp_text(struct pw_jparse *P, const unsigned char *s, size_t len)
{
	json_t *v;

	if (P->scan.bad < P->offset + yajl_get_bytes_consumed(P->h)) {
		pw_jp_fail(P, "invalid \\u escape: a UTF-16 surrogate "
		    "without its pair");
		return NULL;
	}
	if (memchr(s, '\0', len) != NULL) {
		pw_jp_fail(P, "\\u0000 is not allowed in a string");
		return NULL;
	}
	if ((v = json_stringn((const char *)s, len)) == NULL)
		pw_jp_fail(P, "invalid UTF-8 text in a string");
	return v;
}

static int
pw_jp_string(void *ctx, const unsigned char *s, size_t len)
{
	struct pw_jparse *P = ctx;
	json_t *v;

	if ((v = pw_jp_text(P, s, len)) == NULL)
		return 0;
	if (P->skip > 0) {
		json_decref(v);
		return 1;
	}
	return pw_jp_value(P, v);
}

static int
pw_jp_key(void *ctx, const unsigned char *s, size_t len)
{
	struct pw_jparse *P = ctx;
	struct pw_jframe *top = &P->stack[P->depth - 1];
	json_t *key, *seen;
	bool again;

	if ((key = pw_jp_text(P, s, len)) == NULL)
		return 0;
	if (P->skip > 0) {
		seen = P->skipped[P->skip - 1];
		again = json_object_get(seen, json_string_value(key)) != NULL;
		if (!again)
			json_object_set_new(seen, json_string_value(key),
			    json_null());
		json_decref(key);
		return again ? pw_jp_fail(P, "duplicate object key") : 1;
	}
	top->key = key;
	if (json_object_get(top->v, json_string_value(top->key)) != NULL)
		return pw_jp_fail(P, "duplicate object key");
	return 1;
}

/* Whether the container opening now is the top level's member KEY. */
static bool
pw_jp_is_top(const struct pw_jparse *P, const char *key)
{
	return P->depth == 1 && P->stack[0].key != NULL &&
	    strcmp(json_string_value(P->stack[0].key), key) == 0;
}

/* Whether one more container may open; else a syntax error. */
static bool
pw_jp_deeper(struct pw_jparse *P)
{
	if (P->depth + P->skip < PW_JSON_MAX_DEPTH)
		return true;
	pw_jp_fail(P, "maximum parsing depth reached");
	return false;
}

static int
pw_jp_open(struct pw_jparse *P, json_t *v)
{
	pw_jcheck(v);
	if (!pw_jp_deeper(P)) {
		json_decref(v);
		return 0;
	}
	if (P->depth == P->cap) {
		P->cap = P->cap == 0 ? 16 : 2 * P->cap;
		P->stack = pw_xreallocarray(P->stack, P->cap,
		    sizeof *P->stack);
	}
	P->stack[P->depth].v = v;
	P->stack[P->depth].key = NULL;
	P->depth++;
	return 1;
}

/* Opens a container to skip: an object (MAP) or an array. */
static int
pw_jp_skip(struct pw_jparse *P, bool map)
{
	size_t i;

	if (!pw_jp_deeper(P))
		return 0;
	if (P->skip == P->skipped_cap) {
		i = P->skipped_cap;
		P->skipped_cap = P->skipped_cap == 0 ? 16 : 2 * P->skipped_cap;
		P->skipped = pw_xreallocarray(P->skipped, P->skipped_cap,
		    sizeof *P->skipped);
		for (; i < P->skipped_cap; i++)
			P->skipped[i] = NULL;
	}
	if (map && P->skipped[P->skip] == NULL)
		P->skipped[P->skip] = json_object();
	else if (map)
		json_object_clear(P->skipped[P->skip]);
	P->skip++;
	return 1;
}

static int
pw_jp_start_map(void *ctx)
{
	struct pw_jparse *P = ctx;

	if (P->skip > 0 || (!P->f->want_measured &&
	    pw_jp_is_top(P, "measured")))
		return pw_jp_skip(P, true);
	return pw_jp_open(P, json_object());
}

/* The ops array opens: with the format and problem already there, they
 * are read now and the elements read one by one (or skipped); else the
 * array is kept whole. */
static int
pw_jp_start_array(void *ctx)
{
	struct pw_jparse *P = ctx;
	struct pw_jfile *f = P->f;
	const json_t *root;

	if (P->skip > 0)
		return pw_jp_skip(P, false);
	if (!pw_jp_is_top(P, "ops"))
		return pw_jp_open(P, json_array());
	root = P->stack[0].v;
	if (f->want_ops && !f->headed &&
	    json_object_get(root, "format") != NULL &&
	    json_object_get(root, "problem") != NULL &&
	    (P->rc = pw_jhead(f, root)) != PW_OK)
		return 0;
	if (!f->want_ops || !f->headed || !f->schedule) {
		f->rescan = f->want_ops && !f->headed;
		return pw_jp_skip(P, false);
	}
	P->stream = true;
	return pw_jp_open(P, json_array());
}

/* Closes a container; the end of a skipped array leaves an empty one. */
static int
pw_jp_close(void *ctx)
{
	struct pw_jparse *P = ctx;

	if (P->skip > 0)
		return --P->skip > 0 || pw_jp_value(P, json_array());
	P->depth--;
	if (P->depth == 1)
		P->stream = false;
	return pw_jp_value(P, P->stack[P->depth].v);
}

static const yajl_callbacks pw_jp_callbacks = {
	.yajl_null = pw_jp_null,
	.yajl_boolean = pw_jp_boolean,
	.yajl_number = pw_jp_number,
	.yajl_string = pw_jp_string,
	.yajl_start_map = pw_jp_start_map,
	.yajl_map_key = pw_jp_key,
	.yajl_end_map = pw_jp_close,
	.yajl_start_array = pw_jp_start_array,
	.yajl_end_array = pw_jp_close,
};

/* Ends a yajl step: a refusal of yajl's own becomes a syntax error. */
static int
pw_jp_status(struct pw_jparse *P, yajl_status st)
{
	unsigned char *msg;
	char said[256];
	size_t n;

	if (st == yajl_status_ok || P->rc != PW_OK)
		return P->rc;
	msg = yajl_get_error(P->h, 0, NULL, 0);
	n = strlen((char *)msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* "0F0,0F1,...": a schedule CSV named otherwise reads as JSON; one
	 * so named reaches JSON where the command reads no CSV. */
	snprintf(said, sizeof said, "%s%s", (char *)msg, !P->csv_like ? "" :
	    pw_path_ends(P->f->in->file, ".csv") ? " (a PyTorch schedule CSV, "
	    "where this reads JSON)" : " (a PyTorch schedule CSV is read by "
	    "its .csv name)");
	pw_jp_fail(P, said);
	yajl_free_error(P->h, msg);
	return P->rc;
}

/* Whether the N bytes of S start as a PyTorch schedule CSV does: an
 * empty cell, or an action ("0F0": a stage, then a kind's letter). */
static bool
pw_jcsv_like(const unsigned char *s, size_t n)
{
	size_t i = 0;

	/* A byte-order mark and a quoted first cell, as spreadsheets write
	 * them. */
	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	if (i < n && s[i] == '"')
		i++;
	if (i < n && s[i] == ',')
		return true;
	s += i;
	n -= i;
	i = 0;
	while (i < n && isdigit(s[i]))
		i++;
	return i > 0 && i < n && strchr("FIBWOR", s[i]) != NULL && s[i];
}

/* Parses FP into *ROOT (the caller releases it; ops read on the way are
 * in F), chunk by chunk, copying the text to TEE unless NULL. */
static int
pw_jparse_stream(struct pw_jfile *f, FILE *fp, FILE *tee, json_t **root)
{
	struct pw_jparse P = { .f = f, .line = 1,
	    .scan = { .line = 1, .bad = UINT64_MAX } };
	unsigned char buf[1 << 16];
	size_t n, i;
	int rc = PW_OK;

	P.h = yajl_alloc(&pw_jp_callbacks, NULL, &P);
	if (P.h == NULL)
		pw_jcheck(NULL);
	P.chunk = buf;
	while (rc == PW_OK && (n = fread(buf, 1, sizeof buf, fp)) > 0) {
		P.chunklen = n;
		if (P.offset == 0)
			P.csv_like = pw_jcsv_like(buf, n);
		if (tee != NULL && fwrite(buf, 1, n, tee) != n) {
			pw_error_set(f->in->err, "%s: cannot keep a copy to "
			    "read twice: %s", f->in->file, strerror(errno));
			rc = PW_ERR_IO;
			break;
		}
		/* Where the chunk starts, for yajl's errors in it. */
		P.line = P.scan.line;
		P.column = P.scan.column;
		pw_jscan_chunk(&P.scan, buf, n);
		if (P.scan.too_long != NULL) {
			pw_error_set(f->in->err, "%s: line %d column %d: %s "
			    "(no field needs one)", f->in->file,
			    P.scan.token_line, P.scan.token_column,
			    P.scan.too_long);
			rc = PW_ERR_INPUT;
			break;
		}
		if ((rc = pw_jp_status(&P, yajl_parse(P.h, buf, n))) != PW_OK)
			break;
		P.offset += n;
	}
	if (rc == PW_OK && ferror(fp)) {
		pw_error_set(f->in->err, "%s: cannot read: %s", f->in->file,
		    strerror(errno));
		rc = PW_ERR_IO;
	}
	/* The end of the text: positions are where the last chunk ended. */
	P.chunklen = 0;
	P.line = P.scan.line;
	P.column = P.scan.column;
	if (rc == PW_OK)
		rc = pw_jp_status(&P, yajl_complete_parse(P.h));
	while (P.depth > 0) {
		P.depth--;
		json_decref(P.stack[P.depth].v);
		json_decref(P.stack[P.depth].key);
	}
	for (i = 0; i < P.skipped_cap; i++)
		json_decref(P.skipped[i]);
	free(P.skipped);
	free(P.stack);
	yajl_free(P.h);
	if (rc != PW_OK) {
		json_decref(P.root);
		P.root = NULL;
	}
	*root = P.root;
	return rc;
}

/* A schedule file's optional "family" from ROOT into F. */
static int
pw_jread_family(struct pw_jfile *f, const json_t *root)
{
	const char *family;
	int rc;

	if ((rc = pw_jmember_text(f->in, root, "", "family", false,
	    &family)) == PW_OK)
		f->family = pw_xstrdup(family);
	return rc;
}

/* Reads FP into F: its format, its problem, its family and, where F
 * wants them, a schedule file's ops, pins and measured run. */
static int
pw_jload_stream(struct pw_jfile *f, FILE *fp)
{
	json_t *root = NULL, *array;
	FILE *tee = NULL;
	long start = -1;
	int rc;

	if (f->want_ops && (start = ftell(fp)) < 0 &&
	    (tee = tmpfile()) == NULL) {
		pw_error_set(f->in->err, "%s: cannot keep a copy to read "
		    "twice: %s", f->in->file, strerror(errno));
		rc = PW_ERR_IO;
		goto out;
	}
	rc = pw_jparse_stream(f, fp, tee, &root);
	if (rc == PW_OK && !f->headed)
		rc = pw_jhead(f, root);
	if (rc == PW_OK && f->rescan && f->schedule) {
		json_decref(root);
		root = NULL;
		if (fseek(tee != NULL ? tee : fp, tee != NULL ? 0 : start,
		    SEEK_SET) != 0) {
			pw_error_set(f->in->err, "%s: cannot read it again: %s",
			    f->in->file, strerror(errno));
			rc = PW_ERR_IO;
			goto out;
		}
		rc = pw_jparse_stream(f, tee != NULL ? tee : fp, NULL, &root);
	}
	/* The ops were read as they came, leaving an empty array; the pins,
	 * a few, are whole in the tree wherever they stand. */
	if (rc == PW_OK && f->schedule && f->want_ops)
		rc = pw_jarray(f->in, root, "", "ops", false, &array);
	if (rc == PW_OK && f->schedule && (f->want_ops || f->want_pins))
		rc = pw_jread_pins(f->in, root, f->p, &f->pins, &f->npins);
	if (rc == PW_OK && f->schedule && f->want_measured)
		rc = pw_jmeasured_of(f->in, root, f->p, f->ops, f->nops,
		    &f->measured);
	if (rc == PW_OK && f->schedule)
		rc = pw_jread_family(f, root);
out:
	json_decref(root);
	if (tee != NULL)
		fclose(tee);
	return rc;
}

/* Reads PATH ("-": stdin) into F, as pw_jload_stream. */
static int
pw_jload(struct pw_jfile *f, const char *path)
{
	FILE *fp;
	int rc;

	/* A script read as JSON fails on its first line, saying nothing of
	 * why: the command wants a file here. */
	if (pw_path_ends(path, ".lua")) {
		pw_error_set(f->in->err, "%s: a Lua script, where a JSON file "
		    "is read (a %s file)", f->in->file, f->schedule_only ?
		    "schedule" : "problem or schedule");
		return PW_ERR_INPUT;
	}
	if ((fp = pw_infile_open(path)) == NULL) {
		pw_error_set(f->in->err, "%s: cannot open: %s", f->in->file,
		    strerror(errno));
		return PW_ERR_IO;
	}
	rc = pw_jload_stream(f, fp);
	fclose(fp);
	return rc;
}

/* Returns a problem the caller owns, or NULL with ERR set. */
struct pw_problem *
pw_problem_read(const char *path, struct pw_error *err)
{
	struct pw_jin in = { strcmp(path, "-") == 0 ? "<stdin>" : path, err };
	struct pw_jfile f = { .in = &in };
	int rc = pw_jload(&f, path);

	/* A schedule file's family is read with it, and not wanted here. */
	free(f.family);
	if (rc != PW_OK) {
		pw_problem_free(f.p);
		return NULL;
	}
	return f.p;
}

/* What a reader wants of a file: where its outputs go (NULL: not
 * wanted).  Wanting the measured run reads the ops too. */
struct pw_jwant {
	bool		 schedule_only;
	struct pw_problem **problem;
	struct pw_timed_op **ops;
	size_t		*nops;
	struct pw_pin	**pins;
	size_t		*npins;
	struct pw_measured **measured;
	char		**family;
};

/* Reads PATH (or, when FP is not NULL, FP named LABEL), a schedule file
 * or (unless W's SCHEDULE_ONLY) a problem file: its problem, and a
 * schedule file's ops (unless W's OPS is NULL: then they are skipped,
 * their syntax checked), pins and measured run.  On success the caller
 * owns what W points at: *PROBLEM, *OPS (NULL for a problem file), *PINS
 * (NULL when there are none; PINS NULL: they are checked with the ops
 * and dropped) and *MEASURED (NULL when there is none); on failure all
 * are NULL. */
static int
pw_jread_file(const char *path, FILE *fp, const struct pw_jwant *w,
    struct pw_error *err)
{
	struct pw_jin in = { fp != NULL || strcmp(path, "-") != 0 ? path :
	    "<stdin>", err };
	struct pw_jfile f = { .in = &in, .schedule_only = w->schedule_only,
	    .want_ops = w->ops != NULL || w->measured != NULL,
	    .want_pins = w->pins != NULL,
	    .want_measured = w->measured != NULL };
	struct pw_timed_op **ops = w->ops;
	struct pw_pin **pins = w->pins;
	int rc;

	*w->problem = NULL;
	if (ops != NULL) {
		*ops = NULL;
		*w->nops = 0;
	}
	if (pins != NULL) {
		*pins = NULL;
		*w->npins = 0;
	}
	if (w->measured != NULL)
		*w->measured = NULL;
	if (w->family != NULL)
		*w->family = NULL;
	rc = fp != NULL ? pw_jload_stream(&f, fp) : pw_jload(&f, path);
	if (rc != PW_OK) {
		pw_problem_free(f.p);
		free(f.ops);
		free(f.pins);
		pw_measured_free(f.measured);
		free(f.family);
		return rc;
	}
	*w->problem = f.p;
	if (w->family != NULL)
		*w->family = f.family;
	else
		free(f.family);
	if (f.schedule && ops != NULL) {
		*ops = f.ops != NULL ? f.ops : pw_xmalloc(sizeof **ops);
		*w->nops = f.nops;
	} else
		free(f.ops);
	if (pins == NULL)
		free(f.pins);
	else {
		*pins = f.pins;
		*w->npins = f.npins;
	}
	if (w->measured != NULL)
		*w->measured = f.measured;
	return PW_OK;
}

int
pw_schedule_read(const char *path, struct pw_problem **problem,
    struct pw_timed_op **ops, size_t *nops, char **family,
    struct pw_error *err)
{
	struct pw_jwant w = { .schedule_only = true, .problem = problem,
	    .ops = ops, .nops = nops, .family = family };

	return pw_jread_file(path, NULL, &w, err);
}

int
pw_schedule_read_pins(const char *path, struct pw_problem **problem,
    struct pw_timed_op **ops, size_t *nops, struct pw_pin **pins,
    size_t *npins, struct pw_error *err)
{
	struct pw_jwant w = { .schedule_only = true, .problem = problem,
	    .ops = ops, .nops = nops, .pins = pins, .npins = npins };

	return pw_jread_file(path, NULL, &w, err);
}

int
pw_file_read(const char *path, struct pw_problem **problem,
    struct pw_timed_op **ops, size_t *nops, char **family,
    struct pw_error *err)
{
	struct pw_jwant w = { .problem = problem, .ops = ops, .nops = nops,
	    .family = family };

	return pw_jread_file(path, NULL, &w, err);
}

int
pw_file_read_pins(const char *path, struct pw_problem **problem,
    struct pw_timed_op **ops, size_t *nops, struct pw_pin **pins,
    size_t *npins, char **family, struct pw_error *err)
{
	struct pw_jwant w = { .problem = problem, .ops = ops, .nops = nops,
	    .pins = pins, .npins = npins, .family = family };

	return pw_jread_file(path, NULL, &w, err);
}

int
pw_file_read_stream(FILE *fp, const char *label, struct pw_problem **problem,
    struct pw_timed_op **ops, size_t *nops, struct pw_measured **measured,
    struct pw_error *err)
{
	struct pw_jwant w = { .problem = problem, .ops = ops, .nops = nops,
	    .measured = measured };

	return pw_jread_file(label, fp, &w, err);
}

int
pw_schedule_read_run(const char *path, struct pw_problem **problem,
    struct pw_timed_op **ops, size_t *nops, char **family,
    struct pw_measured **measured, struct pw_error *err)
{
	struct pw_jwant w = { .problem = problem, .ops = ops, .nops = nops,
	    .family = family, .measured = measured };

	return pw_jread_file(path, NULL, &w, err);
}

int
pw_measured_read(const char *path, struct pw_measured **out,
    struct pw_error *err)
{
	struct pw_jwant w = { .measured = out };
	struct pw_problem *p;
	int rc;

	w.problem = &p;
	rc = pw_jread_file(path, NULL, &w, err);
	pw_problem_free(p);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */

int
pw_json_print(FILE *fp, json_t *root)
{
	int rc = PW_OK, error = 0;

	if (json_dumpf(root, fp, JSON_INDENT(2)) != 0 || fputc('\n', fp) == EOF) {
		rc = PW_ERR_IO;
		error = errno;
	}
	json_decref(root);
	/* The failed write's cause, for the caller's message. */
	if (rc != PW_OK)
		errno = error;
	return rc;
}

bool
pw_text_valid(const char *s)
{
	json_t *v;
	bool valid;

	if (strlen(s) > PW_TEXT_MAX)
		return false;
	v = json_string(s);
	valid = v != NULL;

	json_decref(v);
	return valid;
}

int
pw_text_check(const char *s, const char *where, const char *field,
    struct pw_error *err)
{
	if (s == NULL || pw_text_valid(s))
		return PW_OK;
	if (strlen(s) > PW_TEXT_MAX)
		pw_error_set(err, "%s: %s: longer than 1 MiB", where, field);
	else
		pw_error_set(err, "%s: %s: must be valid UTF-8 text", where,
		    field);
	return PW_ERR_INPUT;
}

static void
pw_jset(json_t *obj, const char *key, json_t *v)
{
	if (json_object_set_new(obj, key, pw_jcheck(v)) != 0)
		pw_jcheck(NULL);
}

static void
pw_jappend(json_t *array, json_t *v)
{
	if (json_array_append_new(array, pw_jcheck(v)) != 0)
		pw_jcheck(NULL);
}

static json_t *
pw_jreal(double x)
{
	assert(isfinite(x));
	return json_real(x);
}

static void
pw_jset_fields(json_t *obj, const struct pw_jfield *table, size_t n,
    const void *base)
{
	double x;
	size_t i;

	for (i = 0; i < n; i++) {
		x = pw_jfield_get(&table[i], base);
		pw_jset(obj, table[i].key, table[i].sign == PW_JS_LIMIT &&
		    isinf(x) ? json_null() : pw_jreal(x));
	}
}

/* Lists every group by number when they are not simply one per device. */
static json_t *
pw_jgroups(const struct pw_problem *p)
{
	json_t *groups;
	int d, k;
	bool own = p->link.ngroups == p->devices;

	for (d = 0; d < p->devices && own; d++)
		own = p->link.group[d] == d;
	if (own)
		return NULL;
	/* Each device joins its group's list, so that this is linear in the
	 * devices however many groups there are. */
	groups = pw_jcheck(json_array());
	for (k = 0; k < p->link.ngroups; k++)
		pw_jappend(groups, json_array());
	for (d = 0; d < p->devices; d++)
		pw_jappend(json_array_get(groups, (size_t)p->link.group[d]),
		    json_integer(d));
	return groups;
}

/* Sets member KEY to text from a user (NULL: no member), which JSON
 * can carry only when it is UTF-8; FIELD names it in the message. */
static int
pw_jset_text(json_t *obj, const char *key, const char *text,
    const char *where, const char *field, struct pw_error *err)
{
	int rc;

	if (text == NULL)
		return PW_OK;
	if ((rc = pw_text_check(text, where, field, err)) != PW_OK)
		return rc;
	pw_jset(obj, key, json_string(text));
	return PW_OK;
}

/* Returns the origin as a new JSON object the caller releases, or NULL
 * with ERR set when a name cannot be written. */
static json_t *
pw_jorigin(const struct pw_origin *o, const char *where, const char *parent,
    struct pw_error *err)
{
	json_t *obj, *model, *hw, *split, *layers;
	char field[PW_FIELD_MAX];
	size_t i, n;

	model = pw_jcheck(json_object());
	hw = pw_jcheck(json_object());
	if (pw_jset_text(model, "name", o->model.name, where,
	    pw_jname(field, parent, "origin.model.name"), err) != PW_OK ||
	    pw_jset_text(hw, "name", o->hardware.name, where,
	    pw_jname(field, parent, "origin.hardware.name"), err) != PW_OK) {
		json_decref(model);
		json_decref(hw);
		return NULL;
	}
	for (i = 0; i < PW_NFIELDS(pw_jmodel); i++)
		pw_jset(model, pw_jmodel[i].key, json_integer(*(const int *)
		    ((const char *)&o->model + pw_jmodel[i].off)));
	pw_jset(model, "flash_attention",
	    json_boolean(o->model.flash_attention));
	pw_jset(model, "recompute",
	    json_string(pw_recompute_name(o->model.recompute)));
	if (o->model.gated_mlp)
		pw_jset(model, "gated_mlp", json_true());
	if (o->model.tied_embeddings)
		pw_jset(model, "tied_embeddings", json_true());
	pw_jset_fields(hw, pw_jhardware, PW_NFIELDS(pw_jhardware),
	    &o->hardware);
	split = pw_jcheck(json_object());
	pw_jset(split, "chunks", json_integer(o->split.chunks));
	pw_jset(split, "placement",
	    json_string(pw_placement_names[o->split.placement]));
	pw_jset_fields(split, pw_jsplit, PW_NFIELDS(pw_jsplit), &o->split);
	for (i = 0; i < PW_NFIELDS(pw_jreserve); i++)
		if (pw_jfield_get(&pw_jreserve[i], &o->split) != 0)
			pw_jset(split, pw_jreserve[i].key,
			    pw_jreal(pw_jfield_get(&pw_jreserve[i], &o->split)));
	if (o->split.tp != 0)
		pw_jset(split, "tp", json_integer(o->split.tp));
	if (o->split.dp != 0)
		pw_jset(split, "dp", json_integer(o->split.dp));
	pw_jset(split, "offload", json_boolean(o->split.offload));
	if (o->split.layers_per_stage != NULL) {
		layers = pw_jcheck(json_array());
		n = (size_t)o->split.devices * (size_t)o->split.chunks;
		for (i = 0; i < n; i++)
			pw_jappend(layers,
			    json_integer(o->split.layers_per_stage[i]));
		pw_jset(split, "layers_per_stage", layers);
	}
	obj = pw_jcheck(json_object());
	pw_jset(obj, "model", model);
	pw_jset(obj, "hardware", hw);
	pw_jset(obj, "split", split);
	return obj;
}

/* Returns the problem as a new JSON object the caller releases, or NULL
 * with ERR set when a name cannot be written; FORMAT adds the problem
 * file's "format", PARENT prefixes field names ("" or "problem"). */
static json_t *
pw_jproblem(const struct pw_problem *p, bool format, const char *where,
    const char *parent, struct pw_error *err)
{
	json_t *obj, *stages, *memory, *link, *groups, *v, *origin;
	char field[PW_FIELD_MAX];
	int i;

	obj = pw_jcheck(json_object());
	if (format)
		pw_jset(obj, "format", json_string(PW_FORMAT_PROBLEM));
	if (pw_jset_text(obj, "name", p->name, where,
	    pw_jname(field, parent, "name"), err) != PW_OK)
		goto fail;
	pw_jset(obj, "devices", json_integer(p->devices));
	pw_jset(obj, "microbatches", json_integer(p->microbatches));
	pw_jset(obj, "comm", pw_jreal(p->comm));
	stages = pw_jcheck(json_array());
	for (i = 0; i < p->nstages; i++) {
		v = pw_jcheck(json_object());
		pw_jset(v, "device", json_integer(p->stages[i].device));
		pw_jset_fields(v, pw_jstage, PW_NFIELDS(pw_jstage),
		    &p->stages[i]);
		if (p->stages[i].comm != p->comm)
			pw_jset(v, "comm", pw_jreal(p->stages[i].comm));
		pw_jappend(stages, v);
	}
	pw_jset(obj, "stages", stages);
	memory = pw_jcheck(json_array());
	for (i = 0; i < p->devices; i++) {
		v = pw_jcheck(json_object());
		pw_jset_fields(v, pw_jmemory, PW_NFIELDS(pw_jmemory),
		    &p->memory[i]);
		pw_jappend(memory, v);
	}
	pw_jset(obj, "memory", memory);
	if (p->link.present) {
		link = pw_jcheck(json_object());
		pw_jset_fields(link, pw_jlink, PW_NFIELDS(pw_jlink), &p->link);
		pw_jset(link, "duplex", json_boolean(p->link.duplex));
		if ((groups = pw_jgroups(p)) != NULL)
			pw_jset(link, "groups", groups);
		pw_jset(obj, "link", link);
	}
	if (p->origin != NULL) {
		if ((origin = pw_jorigin(p->origin, where, parent,
		    err)) == NULL)
			goto fail;
		pw_jset(obj, "origin", origin);
	}
	return obj;
fail:
	json_decref(obj);
	return NULL;
}

/* Returns the metrics as a new JSON object the caller releases. */
static json_t *
pw_jmetrics(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t)
{
	struct pw_metrics *m;
	json_t *obj, *peak;
	int d;

	m = pw_metrics_compute(p, sched, t);
	obj = pw_jcheck(json_object());
	pw_jset(obj, "makespan", pw_jreal(m->makespan));
	pw_jset(obj, "bubble_rate", pw_jreal(m->bubble_rate));
	pw_jset(obj, "total_idle", pw_jreal(m->total_idle));
	pw_jset(obj, "feasible", json_boolean(m->feasible));
	peak = pw_jcheck(json_array());
	for (d = 0; d < m->ndevices; d++)
		pw_jappend(peak, pw_jreal(m->device[d].peak));
	pw_jset(obj, "peak", peak);
	pw_metrics_free(m);
	return obj;
}

/* Returns OP's "kind", "stage" and "mb" as a new JSON object the caller
 * releases: an anchor or a pin's op. */
static json_t *
pw_jopref(struct pw_op op)
{
	json_t *obj = pw_jcheck(json_object());

	pw_jset(obj, "kind", json_string(pw_kind_name(op.kind)));
	pw_jset(obj, "stage", json_integer(op.stage));
	pw_jset(obj, "mb", json_integer(op.mb));
	return obj;
}

/* Returns one op as a new JSON object the caller releases. */
static json_t *
pw_jop(const struct pw_timed_op *to)
{
	json_t *obj, *after;

	obj = pw_jcheck(json_object());
	pw_jset(obj, "device", json_integer(to->device));
	pw_jset(obj, "kind", json_string(pw_kind_name(to->op.kind)));
	pw_jset(obj, "stage", json_integer(to->op.stage));
	pw_jset(obj, "mb", json_integer(to->op.mb));
	pw_jset(obj, "start", pw_jreal(to->start));
	pw_jset(obj, "end", pw_jreal(to->end));
	if (pw_kind_is_transfer(to->op.kind))
		pw_jset(obj, "bytes", pw_jreal(to->bytes));
	if (to->has_anchor) {
		after = pw_jopref(to->anchor.op);
		if (to->anchor.at_end)
			pw_jset(after, "at", json_string("end"));
		pw_jset(obj, "after", after);
	}
	return obj;
}

/*
 * Layout: a container holding a list of records (stages, memory, ops) is
 * spread over lines, one member or element per line; every other value,
 * each record included, stays on one line.  So a file reads and diffs a
 * record per line.  Jansson encodes every key and scalar.
 */
static bool
pw_jspread(const json_t *v)
{
	const char *key;
	json_t *m;

	if (json_is_array(v))
		return json_array_size(v) > 0 &&
		    json_is_object(json_array_get(v, 0));
	json_object_foreach((json_t *)v, key, m)
		if (json_is_array(m) && pw_jspread(m))
			return true;
	return false;
}

/* Starts the next member or element of a container at DEPTH. */
static void
pw_jsep(FILE *fp, bool spread, int depth, bool *first)
{
	if (!*first)
		fputc(',', fp);
	if (spread)
		fprintf(fp, "\n%*s", 2 * depth, "");
	else if (!*first)
		fputc(' ', fp);
	*first = false;
}

static void
pw_jemit(FILE *fp, const json_t *v, int depth);

static void
pw_jemit_key(FILE *fp, const char *key)
{
	json_t *s = pw_jcheck(json_string(key));

	json_dumpf(s, fp, JSON_ENCODE_ANY);
	json_decref(s);
	fputs(": ", fp);
}

/* Emits the members of OBJ (the caller writes the braces). */
static void
pw_jemit_members(FILE *fp, const json_t *obj, bool spread, int depth,
    bool *first)
{
	const char *key;
	json_t *m;

	json_object_foreach((json_t *)obj, key, m) {
		pw_jsep(fp, spread, depth, first);
		pw_jemit_key(fp, key);
		pw_jemit(fp, m, depth);
	}
}

static void
pw_jemit(FILE *fp, const json_t *v, int depth)
{
	bool spread, first = true;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v)) {
		json_dumpf(v, fp, pw_jflags(v));
		return;
	}
	spread = pw_jspread(v);
	fputc(json_is_object(v) ? '{' : '[', fp);
	if (json_is_object(v))
		pw_jemit_members(fp, v, spread, depth + 1, &first);
	else
		for (i = 0; i < json_array_size(v); i++) {
			pw_jsep(fp, spread, depth + 1, &first);
			pw_jemit(fp, json_array_get(v, i), depth + 1);
		}
	if (spread && !first)
		fprintf(fp, "\n%*s", 2 * depth, "");
	fputc(json_is_object(v) ? '}' : ']', fp);
}

/* Writes HEAD's members and, for a schedule, the member "ops" built one
 * op at a time, so that a million-op schedule never becomes one JSON
 * tree, then TAIL's members (TAIL may be NULL), onto FP. */
static void
pw_jemit_file(FILE *fp, const json_t *head, const struct pw_timed_op *ops,
    size_t nops, bool with_ops, const json_t *tail)
{
	json_t *op;
	bool first = true, first_op = true;
	size_t i;

	fputc('{', fp);
	pw_jemit_members(fp, head, true, 1, &first);
	if (with_ops) {
		pw_jsep(fp, true, 1, &first);
		pw_jemit_key(fp, "ops");
		fputc('[', fp);
		for (i = 0; i < nops; i++) {
			op = pw_jop(&ops[i]);
			pw_jsep(fp, true, 2, &first_op);
			pw_jemit(fp, op, 2);
			json_decref(op);
		}
		fputs(nops > 0 ? "\n  ]" : "]", fp);
	}
	if (tail != NULL)
		pw_jemit_members(fp, tail, true, 1, &first);
	fputs("\n}\n", fp);
}

int
pw_json_path_check(const char *path, struct pw_error *err)
{
	const char *as = pw_path_misread(path, ".json");

	if (as == NULL)
		return PW_OK;
	pw_error_set(err, "%s: a JSON file with this name would be read back "
	    "as %s: name it .json", path, as);
	return PW_ERR_INPUT;
}

/* pw_jemit_file atomically to PATH. */
static int
pw_jwrite(const char *path, const json_t *head, const struct pw_timed_op *ops,
    size_t nops, bool with_ops, const json_t *tail, struct pw_error *err)
{
	struct pw_outfile out;
	int rc;

	if ((rc = pw_json_path_check(path, err)) != PW_OK ||
	    (rc = pw_outfile_open(&out, path, err)) != PW_OK)
		return rc;
	pw_jemit_file(out.fp, head, ops, nops, with_ops, tail);
	return pw_outfile_commit(&out, err);
}

int
pw_problem_write(const char *path, const struct pw_problem *p,
    struct pw_error *err)
{
	json_t *head;
	int rc;

	/* What could not be read back is not written. */
	if ((rc = pw_problem_validate(p, path, err)) != PW_OK)
		return rc;
	if ((head = pw_jproblem(p, true, path, "", err)) == NULL)
		return PW_ERR_INPUT;
	rc = pw_jwrite(path, head, NULL, 0, false, NULL, err);
	json_decref(head);
	return rc;
}

/* Returns "pins" for PINS as a new JSON object the caller releases, or
 * NULL with ERR set when a pin could not be read back (checked by the
 * reader's own rules, on the object built). */
static json_t *
pw_jpins(const struct pw_problem *p, const struct pw_pin *pins, size_t npins,
    const char *path, struct pw_error *err)
{
	struct pw_jin in = { path, err };
	struct pw_pin *back;
	json_t *obj, *array, *pin;
	size_t i, j, nback;

	array = pw_jcheck(json_array());
	for (i = 0; i < npins; i++) {
		pin = pw_jcheck(json_object());
		for (j = 0; j < PW_NFIELDS(pw_jpin); j++)
			pw_jset(pin, pw_jpin[j].key, pw_jopref(*(const struct
			    pw_op *)((const char *)&pins[i] + pw_jpin[j].off)));
		pw_jappend(array, pin);
	}
	obj = pw_jcheck(json_object());
	pw_jset(obj, "pins", array);
	if (pw_jread_pins(&in, obj, p, &back, &nback) != PW_OK) {
		json_decref(obj);
		return NULL;
	}
	free(back);
	return obj;
}

int
pw_schedule_write(const char *path, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t,
    struct pw_error *err)
{
	return pw_schedule_write_with(path, p, sched, t, NULL, 0, NULL, err);
}

/* Returns the measured section as a new JSON object the caller
 * releases. */
static json_t *
pw_jmeasured(const struct pw_measured *m)
{
	const struct pw_measured_op *mo;
	json_t *obj, *steps, *loss, *peak, *w, *layers, *ops, *op, *durations;
	char name[64];
	size_t i, k;
	int d, s;

	obj = pw_jcheck(json_object());
	pw_jset(obj, "backend", json_string(m->backend));
	pw_jset(obj, "transport", json_string(m->transport));
	pw_jset(obj, "host", json_string(m->host));
	pw_jset(obj, "emulated", json_boolean(m->emulated));
	pw_jset(obj, "iterations", json_integer(m->iterations));
	pw_jset(obj, "warmup", json_integer(m->warmup));
	pw_jset(obj, "shown", json_integer(m->shown));
	steps = pw_jcheck(json_array());
	loss = pw_jcheck(json_array());
	for (k = 0; k < (size_t)m->iterations; k++) {
		pw_jappend(steps, pw_jreal(m->step[k]));
		pw_jappend(loss, pw_jreal(m->loss[k]));
	}
	pw_jset(obj, "step", steps);
	pw_jset(obj, "loss", loss);
	peak = pw_jcheck(json_array());
	for (d = 0; d < m->devices; d++)
		pw_jappend(peak, pw_jreal(m->peak[d]));
	pw_jset(obj, "peak", peak);
	w = pw_jcheck(json_object());
	for (i = 0; i < PW_NFIELDS(pw_jworkload); i++)
		pw_jset(w, pw_jworkload[i].key, json_integer(*(const int *)
		    ((const char *)&m->workload + pw_jworkload[i].off)));
	layers = pw_jcheck(json_array());
	for (s = 0; s < m->workload.nstages; s++)
		pw_jappend(layers, json_integer(m->workload.layers[s]));
	pw_jset(w, "layers", layers);
	pw_jset(w, "scaled", json_boolean(m->workload.scaled));
	pw_jset(obj, "workload", w);
	ops = pw_jcheck(json_array());
	for (i = 0; i < m->nops; i++) {
		mo = &m->ops[i];
		op = pw_jcheck(json_object());
		pw_jset(op, "op", json_string(pw_op_name(name, sizeof name,
		    mo->op)));
		pw_jset(op, "device", json_integer(mo->device));
		pw_jset(op, "start", pw_jreal(mo->start));
		pw_jset(op, "end", pw_jreal(mo->end));
		if (!isnan(mo->arrive))
			pw_jset(op, "arrive", pw_jreal(mo->arrive));
		durations = pw_jcheck(json_array());
		for (k = 0; k < (size_t)m->iterations; k++)
			pw_jappend(durations, pw_jreal(mo->durations[k]));
		pw_jset(op, "durations", durations);
		pw_jappend(ops, op);
	}
	pw_jset(obj, "ops", ops);
	return obj;
}

/* A schedule file's parts for WHERE: HEAD (format, family, problem,
 * metrics), its timed OPS (the caller frees them) and TAIL (pins and the
 * measured run M, NULL when it has neither); the caller releases HEAD
 * and TAIL.  PW_ERR_INPUT when something could not be read back. */
static int
pw_jschedule(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, const struct pw_pin *pins, size_t npins,
    const struct pw_measured *m, const char *where, json_t **head,
    json_t **tail, struct pw_timed_op **ops, size_t *nops,
    struct pw_error *err)
{
	json_t *problem;
	int rc;

	*head = *tail = NULL;
	if ((rc = pw_problem_validate(p, where, err)) != PW_OK ||
	    (m != NULL && (rc = pw_measured_validate(p, sched, m, where,
	    err)) != PW_OK))
		return rc;
	/* Files without pins stay as they were before pins. */
	if (npins > 0 && (*tail = pw_jpins(p, pins, npins, where,
	    err)) == NULL)
		return PW_ERR_INPUT;
	*head = pw_jcheck(json_object());
	pw_jset(*head, "format", json_string(PW_FORMAT_SCHEDULE));
	if ((rc = pw_jset_text(*head, "family", sched->family, where,
	    "family", err)) == PW_OK &&
	    (problem = pw_jproblem(p, false, where, "problem", err)) == NULL)
		rc = PW_ERR_INPUT;
	if (rc != PW_OK) {
		json_decref(*head);
		json_decref(*tail);
		*head = *tail = NULL;
		return rc;
	}
	pw_jset(*head, "problem", problem);
	pw_jset(*head, "metrics", pw_jmetrics(p, sched, t));
	if (m != NULL) {
		if (*tail == NULL)
			*tail = pw_jcheck(json_object());
		pw_jset(*tail, "measured", pw_jmeasured(m));
	}
	*ops = pw_timed_ops(p, sched, t, nops);
	return PW_OK;
}

/* Writes a schedule file to PATH, or onto FP when it is not NULL. */
static int
pw_jwrite_schedule(const char *path, FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t,
    const struct pw_pin *pins, size_t npins, const struct pw_measured *m,
    struct pw_error *err)
{
	struct pw_timed_op *ops;
	json_t *head, *tail;
	size_t n;
	int rc;

	if ((rc = pw_jschedule(p, sched, t, pins, npins, m, path, &head,
	    &tail, &ops, &n, err)) != PW_OK)
		return rc;
	if (fp == NULL)
		rc = pw_jwrite(path, head, ops, n, true, tail, err);
	else {
		pw_jemit_file(fp, head, ops, n, true, tail);
		if (fflush(fp) != 0 || ferror(fp)) {
			pw_error_set(err, "%s: cannot write: %s", path,
			    strerror(errno));
			rc = PW_ERR_IO;
		}
	}
	free(ops);
	json_decref(head);
	json_decref(tail);
	return rc;
}

int
pw_schedule_write_with(const char *path, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t,
    const struct pw_pin *pins, size_t npins, const struct pw_measured *m,
    struct pw_error *err)
{
	return pw_jwrite_schedule(path, NULL, p, sched, t, pins, npins, m,
	    err);
}

int
pw_schedule_write_stream(FILE *fp, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t,
    const struct pw_measured *m, struct pw_error *err)
{
	return pw_jwrite_schedule("<stream>", fp, p, sched, t, NULL, 0, m,
	    err);
}
