/*
 * form.c - the constraints panel: the problem's split, memory and link,
 * and the optimizer's objective, time limit and family, as fields of text
 * with units.  A field that changes the problem builds a new one (a
 * problem is read-only once loaded) and the plan follows as one change;
 * a bad value is refused with one line and changes nothing.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui_int.h"

enum tui_form_kind {
	TUI_FIELD_DEVICES,
	TUI_FIELD_CHUNKS,
	TUI_FIELD_PLACEMENT,
	TUI_FIELD_MICROBATCHES,
	TUI_FIELD_LIMIT,	/* every device's */
	TUI_FIELD_DEVICE_LIMIT,	/* one per device */
	TUI_FIELD_OFFLOAD,
	TUI_FIELD_D2H,
	TUI_FIELD_H2D,
	TUI_FIELD_OBJECTIVE,
	TUI_FIELD_TIME_LIMIT,
	TUI_FIELD_FAMILY,
	TUI_FIELD_PIN,		/* one row per pin, after the fields */
};

/* The most devices, chunks per device and microbatches the form takes:
 * every family is built synchronously on each change, and beyond these
 * that takes seconds without a frame (the batch commands take more). */
#define TUI_FORM_MAX_DEVICES		256
#define TUI_FORM_MAX_CHUNKS		16
#define TUI_FORM_MAX_MICROBATCHES	4096

static const int tui_form_caps[] = {
	[TUI_FIELD_DEVICES] = TUI_FORM_MAX_DEVICES,
	[TUI_FIELD_CHUNKS] = TUI_FORM_MAX_CHUNKS,
	[TUI_FIELD_MICROBATCHES] = TUI_FORM_MAX_MICROBATCHES,
};

/* Fields before the per-device limits, and after them. */
#define TUI_FORM_HEAD	5
#define TUI_FORM_TAIL	6

static const char *const tui_form_labels[] = {
	"devices", "chunks per device", "placement", "microbatches",
	"memory limit", "memory limit of device", "offload", "D2H bandwidth",
	"H2D bandwidth", "objective", "time limit", "family", "pin",
};

static const struct pw_problem *
tui_form_problem(const struct tui *d)
{
	return pw_plan_problem(d->plan);
}

/* The fields before the pins' rows. */
static int
tui_form_nvalues(const struct tui *d)
{
	return TUI_FORM_HEAD + tui_form_problem(d)->devices + TUI_FORM_TAIL;
}

int
tui_form_nfields(const struct tui *d)
{
	return tui_form_nvalues(d) + (int)d->npins;
}

/* FIELD's kind, with its device in *INDEX for a per-device limit, its
 * pin (in tui.pins) for a pin's row. */
static enum tui_form_kind
tui_form_kind(const struct tui *d, int field, int *index)
{
	int n = tui_form_problem(d)->devices;

	*index = -1;
	if (field < TUI_FORM_HEAD)
		return (enum tui_form_kind)field;
	if (field < TUI_FORM_HEAD + n) {
		*index = field - TUI_FORM_HEAD;
		return TUI_FIELD_DEVICE_LIMIT;
	}
	if (field >= tui_form_nvalues(d)) {
		*index = field - tui_form_nvalues(d);
		return TUI_FIELD_PIN;
	}
	return (enum tui_form_kind)(field - n + 1);
}

int
tui_form_pin(const struct tui *d, int field)
{
	int i;

	return tui_form_kind(d, field, &i) == TUI_FIELD_PIN ? i : -1;
}

const char *
tui_form_label(const struct tui *d, int field, char *buf, size_t len)
{
	int i;
	enum tui_form_kind k = tui_form_kind(d, field, &i);

	if (k == TUI_FIELD_DEVICE_LIMIT)
		snprintf(buf, len, "%s %d", tui_form_labels[k], i);
	else if (k == TUI_FIELD_PIN)
		/* From 0, as the file's pins and the header's "breaks pin N"
		 * count them. */
		snprintf(buf, len, "%s %d", tui_form_labels[k], i);
	else
		snprintf(buf, len, "%s", tui_form_labels[k]);
	return buf;
}

/* A limit as the form shows it: bytes, or "inf". */
static const char *
tui_form_limit(char *buf, size_t len, double limit)
{
	if (isinf(limit))
		snprintf(buf, len, "inf");
	else
		pw_fmt_bytes(buf, len, limit);
	return buf;
}

/* The bandwidth in bytes/s the link (else the model's hardware) has. */
static double
tui_form_bandwidth(const struct pw_problem *p, enum tui_form_kind k)
{
	if (p->link.present)
		return k == TUI_FIELD_D2H ? p->link.d2h : p->link.h2d;
	if (p->origin != NULL)
		return k == TUI_FIELD_D2H ? p->origin->hardware.pcie_d2h :
		    p->origin->hardware.pcie_h2d;
	return 0;
}

bool
tui_form_same(const struct pw_problem *a, const struct pw_problem *b)
{
	return pw_problem_same(a, b) &&
	    tui_form_bandwidth(a, TUI_FIELD_D2H) ==
	    tui_form_bandwidth(b, TUI_FIELD_D2H) &&
	    tui_form_bandwidth(a, TUI_FIELD_H2D) ==
	    tui_form_bandwidth(b, TUI_FIELD_H2D);
}

const char *
tui_form_value(const struct tui *d, int field, char *buf, size_t len)
{
	const struct pw_problem *p = tui_form_problem(d);
	int dev, i;
	enum tui_form_kind k = tui_form_kind(d, field, &dev);
	char a[48], b[48];
	double bw;

	switch (k) {
	case TUI_FIELD_DEVICES:
		snprintf(buf, len, "%d", p->devices);
		break;
	case TUI_FIELD_CHUNKS:
		snprintf(buf, len, "%d", pw_problem_chunks(p, 0));
		break;
	case TUI_FIELD_PLACEMENT:
		snprintf(buf, len, "%s", pw_problem_is_v(p) ? "v" :
		    pw_problem_is_loop(p) ? "loop" : "given");
		break;
	case TUI_FIELD_MICROBATCHES:
		snprintf(buf, len, "%d", p->microbatches);
		break;
	case TUI_FIELD_LIMIT:
		for (i = 1; i < p->devices; i++) {
			if (p->memory[i].limit != p->memory[0].limit) {
				snprintf(buf, len, "per device");
				return buf;
			}
		}
		tui_form_limit(buf, len, p->memory[0].limit);
		break;
	case TUI_FIELD_DEVICE_LIMIT:
		tui_form_limit(buf, len, p->memory[dev].limit);
		break;
	case TUI_FIELD_OFFLOAD:
		snprintf(buf, len, "%s", p->link.present ? "on" : "off");
		break;
	case TUI_FIELD_D2H:
	case TUI_FIELD_H2D:
		bw = tui_form_bandwidth(p, k);
		if (bw > 0)
			snprintf(buf, len, "%g GB/s", bw / 1e9);
		else
			snprintf(buf, len, "none");
		break;
	case TUI_FIELD_OBJECTIVE:
		snprintf(buf, len, "%s", pw_objective_names[d->objective]);
		break;
	case TUI_FIELD_TIME_LIMIT:
		pw_fmt_seconds(buf, len, d->time_limit);
		break;
	case TUI_FIELD_FAMILY:
		snprintf(buf, len, "%s", d->family >= 0 ?
		    pw_families[d->family].name : "none");
		break;
	case TUI_FIELD_PIN:
		snprintf(buf, len, "%s before %s", pw_op_name(a, sizeof a,
		    d->pins[dev].before), pw_op_name(b, sizeof b,
		    d->pins[dev].after));
		break;
	}
	return buf;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

struct tui_form_unit {
	const char *name;
	double	scale;
};

/* TEXT as a number with one of UNITS (case-insensitive; none: the first,
 * the unit the form shows), blanks allowed between; "inf", "none" and
 * "unlimited" are INFINITY when INF_OK.  False when it is none of these
 * or not positive. */
static bool
tui_form_number(const char *text, const struct tui_form_unit *units,
    bool inf_ok, double *out)
{
	char *end;
	double v;

	while (isspace((unsigned char)*text))
		text++;
	if (inf_ok && (strcasecmp(text, "inf") == 0 ||
	    strcasecmp(text, "none") == 0 ||
	    strcasecmp(text, "unlimited") == 0)) {
		*out = INFINITY;
		return true;
	}
	/* Decimal, as the command line's numbers. */
	errno = 0;
	v = pw_parse_decimal(text, &end);
	if (end == text || errno != 0 || !isfinite(v) || !(v > 0))
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end == '\0') {
		*out = v * units[0].scale;
		return isfinite(*out);
	}
	for (; units->name != NULL; units++) {
		if (strcasecmp(end, units->name) == 0) {
			*out = v * units->scale;
			return isfinite(*out);
		}
	}
	return false;
}

static const struct tui_form_unit tui_form_bytes[] = {
	{ "GiB", 1073741824.0 }, { "B", 1 }, { "KiB", 1024.0 },
	{ "MiB", 1048576.0 }, { "TiB", 1099511627776.0 }, { "KB", 1e3 },
	{ "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 }, { NULL, 0 },
};

static const struct tui_form_unit tui_form_rates[] = {
	{ "GB/s", 1e9 }, { "B/s", 1 }, { "KB/s", 1e3 }, { "MB/s", 1e6 },
	{ "TB/s", 1e12 }, { "GiB/s", 1073741824.0 },
	{ "MiB/s", 1048576.0 }, { NULL, 0 },
};

static const struct tui_form_unit tui_form_times[] = {
	{ "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "min", 60 },
	{ NULL, 0 },
};

/* TEXT as an amount of UNITS (tui_form_number) in *OUT; false with ERR
 * saying that it is no KIND. */
static bool
tui_form_amount(const char *text, const struct tui_form_unit *units,
    bool inf_ok, const char *label, const char *kind, double *out,
    struct pw_error *err)
{
	if (tui_form_number(text, units, inf_ok, out))
		return true;
	pw_error_set(err, "%s: \"%s\" is no %s", label, text, kind);
	return false;
}

/* A problem's offload: off (0) or on (1). */
static const char *const tui_form_off_on[] = { "off", "on", NULL };

/* TEXT's index among the two NAMES (an enum's, NULL-terminated); -1
 * with ERR set when it is neither. */
static int
tui_form_choice(const char *text, const char *const *names,
    const char *label, struct pw_error *err)
{
	int k = pw_names_find(names, text);

	assert(names[0] != NULL && names[1] != NULL && names[2] == NULL);
	if (k < 0)
		pw_error_set(err, "%s: \"%s\" is neither %s nor %s", label,
		    text, names[0], names[1]);
	return k;
}

/* ------------------------------------------------------------------ */
/* New problems                                                        */

/* Puts P's limits on NP: each device's when the count is the same, else
 * P's one limit when every device has it. */
static void
tui_form_keep_limits(const struct pw_problem *p, struct pw_problem *np)
{
	int i;

	if (np->devices == p->devices) {
		for (i = 0; i < p->devices; i++)
			np->memory[i].limit = p->memory[i].limit;
		return;
	}
	for (i = 1; i < p->devices; i++) {
		if (p->memory[i].limit != p->memory[0].limit)
			return;
	}
	for (i = 0; i < np->devices; i++)
		np->memory[i].limit = p->memory[0].limit;
}

/* One limit every device of NP has is its split's, as a script's, so
 * that a split again has it too; "no limit" is the largest (0 would be
 * the hardware's memory), as pw_sweep_limited has it. */
static void
tui_form_split_limit(struct pw_problem *np)
{
	double v = np->memory[0].limit;
	int i;

	if (np->origin == NULL)
		return;
	for (i = 1; i < np->devices; i++) {
		if (np->memory[i].limit != v)
			return;
	}
	np->origin->split.memory_limit = isfinite(v) ? v : DBL_MAX;
}

/* P's model split again as SPLIT on HW, keeping P's name and limits. */
static int
tui_form_rebuild(const struct pw_problem *p, const struct pw_hardware *hw,
    const struct pw_split *split, struct pw_problem **out,
    struct pw_error *err)
{
	int rc = pw_cost_problem(&p->origin->model, hw, split, out, err);

	if (rc != PW_OK)
		return rc;
	free((*out)->name);
	(*out)->name = p->name ? pw_xstrdup(p->name) : NULL;
	tui_form_keep_limits(p, *out);
	return PW_OK;
}

/* The problem field K (DEVICE for a per-device limit) of P set to TEXT,
 * in *OUT. */
static int
tui_form_problem_set(const struct pw_problem *p, enum tui_form_kind k,
    int device, const char *label, const char *text,
    struct pw_problem **out, struct pw_error *err)
{
	const struct pw_origin *o = p->origin;
	struct pw_split sp;
	struct pw_hardware hw;
	struct pw_problem *np = NULL;
	double v = 0;
	int n = 0, i, rc;
	bool split = false;

	if (o != NULL) {
		sp = o->split;
		hw = o->hardware;
	}
	switch (k) {
	case TUI_FIELD_DEVICES:
	case TUI_FIELD_CHUNKS:
	case TUI_FIELD_MICROBATCHES:
		if (!pw_parse_int(text, 1, INT_MAX, &n)) {
			pw_error_set(err, "%s: \"%s\" is no whole number of at "
			    "least 1", label, text);
			return PW_ERR_INPUT;
		}
		if (n > tui_form_caps[k]) {
			pw_error_set(err, "%s: %d is more than the designer "
			    "builds (at most %d)", label, n, tui_form_caps[k]);
			return PW_ERR_INPUT;
		}
		if (k != TUI_FIELD_MICROBATCHES && o == NULL)
			goto given;
		if (o == NULL) {
			if ((rc = pw_problem_check_counts(p->devices,
			    p->nstages, n, label, err)) != PW_OK)
				return rc;
			np = pw_problem_copy(p);
			np->microbatches = n;
			break;
		}
		if (k == TUI_FIELD_DEVICES)
			sp.devices = n;
		else if (k == TUI_FIELD_CHUNKS)
			sp.chunks = n;
		else
			sp.microbatches = n;
		split = true;
		break;
	case TUI_FIELD_PLACEMENT:
		if ((n = tui_form_choice(text, pw_placement_names, label,
		    err)) < 0)
			return PW_ERR_INPUT;
		if (o == NULL)
			goto given;
		sp.placement = (enum pw_placement)n;
		if (sp.placement == PW_PLACE_V)
			sp.chunks = 2;
		split = true;
		break;
	case TUI_FIELD_LIMIT:
	case TUI_FIELD_DEVICE_LIMIT:
		if (!tui_form_amount(text, tui_form_bytes, true, label,
		    "amount of memory (as 40 GiB, or inf)", &v, err))
			return PW_ERR_INPUT;
		np = pw_problem_copy(p);
		for (i = 0; i < np->devices; i++) {
			if (k == TUI_FIELD_LIMIT || i == device)
				np->memory[i].limit = v;
		}
		tui_form_split_limit(np);
		break;
	case TUI_FIELD_OFFLOAD:
		if ((n = tui_form_choice(text, tui_form_off_on, label,
		    err)) < 0)
			return PW_ERR_INPUT;
		if (o != NULL) {
			sp.offload = n;
			split = true;
			break;
		}
		np = pw_problem_copy(p);
		if (n == 0) {
			np->link.present = false;
		} else if (!np->link.present) {
			if (!(np->link.d2h > 0 && np->link.h2d > 0)) {
				pw_problem_free(np);
				pw_error_set(err, "%s: set the D2H and H2D "
				    "bandwidths first", label);
				return PW_ERR_INPUT;
			}
			np->link.present = true;
		}
		break;
	case TUI_FIELD_D2H:
	case TUI_FIELD_H2D:
		if (!tui_form_amount(text, tui_form_rates, false, label,
		    "bandwidth (as 25 GB/s)", &v, err))
			return PW_ERR_INPUT;
		/* A model's link is its hardware's: set while offload is off,
		 * the rate waits there for offload on. */
		if (o != NULL) {
			*(k == TUI_FIELD_D2H ? &hw.pcie_d2h : &hw.pcie_h2d) = v;
			split = true;
			break;
		}
		np = pw_problem_copy(p);
		if (!np->link.present)
			/* A new link, on: both ways at this rate until the
			 * other is set. */
			pw_problem_set_link(np, v, v, 0, true);
		*(k == TUI_FIELD_D2H ? &np->link.d2h : &np->link.h2d) = v;
		break;
	default:
		return PW_ERR_INTERNAL;
	}
	if (split) {
		if (k == TUI_FIELD_DEVICES || k == TUI_FIELD_CHUNKS ||
		    k == TUI_FIELD_PLACEMENT)
			sp.layers_per_stage = NULL;
		if (k == TUI_FIELD_CHUNKS && n != 2)
			sp.placement = PW_PLACE_LOOP;
		if ((rc = tui_form_rebuild(p, &hw, &sp, &np, err)) != PW_OK) {
			char *msg = pw_xstrdup(err->msg);

			pw_error_set(err, "%s: %s", label, msg);
			free(msg);
			goto fail;
		}
	}
	if ((rc = pw_problem_validate(np, label, err)) != PW_OK)
		goto fail;
	*out = np;
	return PW_OK;
given:
	pw_error_set(err, "%s: this problem's stages are given: edit its file "
	    "to split it differently", label);
	return PW_ERR_INPUT;
fail:
	{
		/* Errors of a rebuild or a validation are one line. */
		char *nl = strchr(err->msg, '\n');

		if (nl != NULL)
			*nl = '\0';
	}
	pw_problem_free(np);
	return rc;
}

/* The optimizer's field K set to TEXT, as one change WHAT. */
static int
tui_form_option_set(struct tui *d, enum tui_form_kind k, const char *label,
    const char *text, const char *what, struct pw_error *err)
{
	struct tui_snapshot before;
	const struct pw_family *f;
	struct pw_plan *plan;
	char source[96];
	double v = 0;
	int span = 0;

	if (k == TUI_FIELD_FAMILY) {
		if ((f = pw_family_find(text)) == NULL) {
			pw_error_set(err, "%s: \"%s\" is no family (f cycles "
			    "through them)", label, text);
			return PW_ERR_INPUT;
		}
		if (tui_family_plan(pw_plan_problem(d->plan),
		    (int)(f - pw_families), &plan, NULL, err) != PW_OK)
			return PW_ERR_NOT_APPLICABLE;
		snprintf(source, sizeof source, "family %s", f->name);
		tui_plan_set(d, plan, what, source, (int)(f - pw_families));
		return PW_OK;
	}
	if (k == TUI_FIELD_OBJECTIVE && (span = tui_form_choice(text,
	    pw_objective_names, label, err)) < 0)
		return PW_ERR_INPUT;
	if (k == TUI_FIELD_TIME_LIMIT && !tui_form_amount(text,
	    tui_form_times, false, label, "time (as 12 s or 500 ms)", &v, err))
		return PW_ERR_INPUT;
	/* The value it has already is no change to undo. */
	if (k == TUI_FIELD_OBJECTIVE ? d->objective == (span ? PW_OBJ_SPAN :
	    PW_OBJ_MAKESPAN) : d->time_limit == v) {
		tui_message(d, false, "%s: unchanged", what);
		return PW_OK;
	}
	before = tui_snapshot_take(d);
	if (k == TUI_FIELD_OBJECTIVE)
		d->objective = span ? PW_OBJ_SPAN : PW_OBJ_MAKESPAN;
	else
		d->time_limit = v;
	tui_plan_record(d, &before, what);
	return PW_OK;
}

/* TEXT of field K as it was read, with its unit, into BUF: "18" for a
 * limit is "18 GiB", so the change's name says what it set. */
static const char *
tui_form_shown(enum tui_form_kind k, const char *text, char *buf, size_t len)
{
	double v;

	if ((k == TUI_FIELD_LIMIT || k == TUI_FIELD_DEVICE_LIMIT) &&
	    tui_form_number(text, tui_form_bytes, true, &v))
		return tui_form_limit(buf, len, v);
	if ((k == TUI_FIELD_D2H || k == TUI_FIELD_H2D) &&
	    tui_form_number(text, tui_form_rates, false, &v)) {
		snprintf(buf, len, "%g GB/s", v / 1e9);
		return buf;
	}
	if (k == TUI_FIELD_TIME_LIMIT &&
	    tui_form_number(text, tui_form_times, false, &v))
		return pw_fmt_seconds(buf, len, v);
	snprintf(buf, len, "%s", text);
	return buf;
}

int
tui_form_set(struct tui *d, int field, const char *text, struct pw_error *err)
{
	const struct pw_problem *p;
	struct pw_problem *np;
	char label[64], shown[64], *what, *t;
	const char *note;
	int dev, rc;
	enum tui_form_kind k = tui_form_kind(d, field, &dev);
	size_t n;

	/* Blanks around the value do not count. */
	while (isspace((unsigned char)*text))
		text++;
	t = pw_xstrdup(text);
	for (n = strlen(t); n > 0 && isspace((unsigned char)t[n - 1]); n--)
		t[n - 1] = '\0';
	tui_form_label(d, field, label, sizeof label);
	if (k == TUI_FIELD_PIN) {
		pw_error_set(err, "%s: a pin is not typed: x or Delete removes "
		    "it, Enter selects its first op", label);
		free(t);
		return PW_ERR_INPUT;
	}
	/* A rate where there is no link sets more than its field: say so. */
	p = pw_plan_problem(d->plan);
	note = (k != TUI_FIELD_D2H && k != TUI_FIELD_H2D) || p->link.present ?
	    "" : p->origin != NULL ? " (kept for offload on)" : " (a new link, "
	    "offload on: both ways at this rate until the other is set)";
	what = pw_xasprintf("%s %s", label, tui_form_shown(k, t, shown,
	    sizeof shown));
	if (k != TUI_FIELD_OBJECTIVE && k != TUI_FIELD_TIME_LIMIT)
		tui_busy(d, "building %s ...", what);
	if (k >= TUI_FIELD_OBJECTIVE) {
		rc = tui_form_option_set(d, k, label, t, what, err);
	} else if ((rc = tui_form_problem_set(p, k, dev, label, t, &np,
	    err)) == PW_OK) {
		rc = tui_problem_set(d, np, what, err);
	}
	/* The change is named by its field; the message says the rest. */
	if (rc == PW_OK && note[0] != '\0') {
		char said[sizeof d->message + 96];

		snprintf(said, sizeof said, "%s%s", d->message, note);
		tui_message(d, false, "%s", said);
	}
	/* Fewer devices, fewer fields. */
	if (d->form.field >= tui_form_nfields(d))
		d->form.field = tui_form_nfields(d) - 1;
	free(what);
	free(t);
	return rc;
}

unsigned
tui_form_key(struct tui *d, int key)
{
	struct tui_form *f = &d->form;
	struct pw_error err;

	if (key == TUI_KEY_ESC) {
		f->editing = false;
		return TUI_DRAW_PANEL;
	}
	if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		f->editing = false;
		if (tui_form_set(d, f->field, f->text, &err) != PW_OK) {
			tui_message(d, true, "%s", err.msg);
			return TUI_DRAW_PANEL | TUI_DRAW_MESSAGE;
		}
		return TUI_DRAW_ALL;
	}
	return tui_prompt_type(d, f->text, &f->len, sizeof f->text, key) ?
	    TUI_DRAW_PANEL | TUI_DRAW_MESSAGE : 0;
}
