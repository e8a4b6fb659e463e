/* problem.c - the problem model: stages, devices, memory, link, ops. */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

struct pw_problem *
pw_problem_new(int devices, int nstages, int microbatches)
{
	struct pw_problem *p;
	int d;

	assert(devices > 0 && nstages > 0 && microbatches > 0);
	p = pw_xcalloc(1, sizeof *p);
	p->devices = devices;
	p->nstages = nstages;
	p->microbatches = microbatches;
	p->stages = pw_xcalloc((size_t)nstages, sizeof *p->stages);
	p->memory = pw_xcalloc((size_t)devices, sizeof *p->memory);
	for (d = 0; d < devices; d++)
		p->memory[d].limit = INFINITY;
	p->link.group = pw_xcalloc((size_t)devices, sizeof *p->link.group);
	return p;
}

void
pw_problem_free(struct pw_problem *p)
{
	if (p == NULL)
		return;
	free(p->name);
	free(p->stages);
	free(p->memory);
	free(p->link.group);
	pw_origin_free(p->origin);
	free(p);
}

struct pw_problem *
pw_problem_copy(const struct pw_problem *src)
{
	struct pw_problem *p;

	p = pw_problem_new(src->devices, src->nstages, src->microbatches);
	p->name = src->name != NULL ? pw_xstrdup(src->name) : NULL;
	p->comm = src->comm;
	memcpy(p->stages, src->stages, (size_t)src->nstages * sizeof *p->stages);
	memcpy(p->memory, src->memory, (size_t)src->devices * sizeof *p->memory);
	free(p->link.group);
	p->link = src->link;
	p->link.group = pw_xcalloc((size_t)src->devices, sizeof *p->link.group);
	memcpy(p->link.group, src->link.group,
	    (size_t)src->devices * sizeof *p->link.group);
	p->origin = pw_origin_copy(src->origin);
	return p;
}

struct pw_problem *
pw_problem_unlimited(const struct pw_problem *p)
{
	struct pw_problem *q = pw_problem_copy(p);
	int d;

	for (d = 0; d < q->devices; d++)
		q->memory[d].limit = INFINITY;
	return q;
}

int
pw_problem_place_loop(struct pw_problem *p, struct pw_error *err)
{
	int s;

	if (p->nstages % p->devices != 0) {
		pw_error_set(err, "loop placement needs the stage count (%d) to "
		    "be a multiple of the device count (%d)", p->nstages,
		    p->devices);
		return PW_ERR_INPUT;
	}
	for (s = 0; s < p->nstages; s++)
		p->stages[s].device = pw_placement_device(PW_PLACE_LOOP,
		    p->devices, p->nstages, s);
	return PW_OK;
}

int
pw_problem_place_v(struct pw_problem *p, struct pw_error *err)
{
	int s;

	if (p->nstages != 2 * p->devices) {
		pw_error_set(err, "V placement needs 2 stages per device (%d "
		    "stages on %d devices)", p->nstages, p->devices);
		return PW_ERR_INPUT;
	}
	for (s = 0; s < p->nstages; s++)
		p->stages[s].device = pw_placement_device(PW_PLACE_V,
		    p->devices, p->nstages, s);
	return PW_OK;
}

const char *const pw_placement_names[] = { "loop", "v", NULL };

int
pw_placement_device(enum pw_placement placement, int devices, int nstages,
    int s)
{
	assert(devices > 0 && s >= 0 && s < nstages);
	if (placement == PW_PLACE_V && s >= devices)
		return nstages - 1 - s;
	return s % devices;
}

int
pw_placement_stage(enum pw_placement placement, int devices, int nstages,
    int d, int k)
{
	assert(d >= 0 && d < devices && k >= 0 && k < nstages / devices);
	if (placement == PW_PLACE_V)
		return k == 0 ? d : nstages - 1 - d;
	return d + k * devices;
}

void
pw_problem_set_comm(struct pw_problem *p, double comm)
{
	int s;

	p->comm = comm;
	for (s = 0; s < p->nstages; s++)
		p->stages[s].comm = comm;
}

void
pw_problem_set_link(struct pw_problem *p, double d2h, double h2d,
    double latency, bool duplex)
{
	int d;

	p->link.present = true;
	p->link.d2h = d2h;
	p->link.h2d = h2d;
	p->link.latency = latency;
	p->link.duplex = duplex;
	p->link.ngroups = p->devices;
	for (d = 0; d < p->devices; d++)
		p->link.group[d] = d;
}

/* A value the model accepts: finite and not negative. */
static bool
pw_nonneg(double v)
{
	return isfinite(v) && v >= 0;
}

static int
pw_validate_stage(const struct pw_problem *p, int s, const char *at,
    struct pw_error *err)
{
	const struct pw_stage *st = &p->stages[s];
	static const char *const name[] = { "f", "b", "w", "act", "hold",
	    "offload", "comm" };
	const double value[] = { st->f, st->b, st->w, st->act, st->hold,
	    st->offload, st->comm };
	size_t i;

	if (st->device < 0 || st->device >= p->devices) {
		pw_error_set(err, "%sstages[%d].device: device %d does not "
		    "exist (devices = %d)", at, s, st->device, p->devices);
		return PW_ERR_INPUT;
	}
	for (i = 0; i < sizeof name / sizeof name[0]; i++) {
		if (!pw_nonneg(value[i])) {
			pw_error_set(err, "%sstages[%d].%s: must be a "
			    "non-negative number (got %g)", at, s, name[i],
			    value[i]);
			return PW_ERR_INPUT;
		}
	}
	if (st->hold > st->act || st->offload > st->act) {
		pw_error_set(err, "%sstages[%d].%s: %g exceeds act %g", at,
		    s, st->hold > st->act ? "hold" : "offload",
		    st->hold > st->act ? st->hold : st->offload, st->act);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* The names a problem carries into files, its own and its origin's,
 * named within PARENT as pw_problem_validate_in names its fields. */
static int
pw_validate_names(const struct pw_problem *p, const char *where,
    const char *parent, struct pw_error *err)
{
	static const char *const field[] = { "name", "origin.model.name",
	    "origin.hardware.name" };
	const char *text[] = { p->name,
	    p->origin != NULL ? p->origin->model.name : NULL,
	    p->origin != NULL ? p->origin->hardware.name : NULL };
	char named[64];
	size_t i;
	int rc;

	for (i = 0; i < sizeof field / sizeof field[0]; i++) {
		snprintf(named, sizeof named, "%s%s%s", parent,
		    *parent != '\0' ? "." : "", field[i]);
		if ((rc = pw_text_check(text[i], where, named, err)) != PW_OK)
			return rc;
	}
	return PW_OK;
}

/* What one pass over the stages learns of a device. */
struct pw_vdevice {
	int	chunks;		/* stages on it */
	int	largest;	/* the stage of its largest act, -1 for none */
	double	acts;		/* every stage's act, one microbatch each */
};

static int
pw_validate_memory(const struct pw_problem *p, int d,
    const struct pw_vdevice *vd, const char *at, struct pw_error *err)
{
	const struct pw_device_memory *mem = &p->memory[d];
	double largest = vd->largest < 0 ? 0 : p->stages[vd->largest].act;
	char need[32], have[32], limit[32];

	if (!pw_nonneg(mem->static_bytes)) {
		pw_error_set(err, "%smemory[%d].static: must be a non-negative "
		    "number (got %g)", at, d, mem->static_bytes);
		return PW_ERR_INPUT;
	}
	if (isnan(mem->limit) || mem->limit < 0) {
		pw_error_set(err, "%smemory[%d].limit: must be a non-negative "
		    "number or null (got %g)", at, d, mem->limit);
		return PW_ERR_INPUT;
	}
	/* A schedule may hold every activation of the device at once (GPipe
	 * does), and the metrics add them up: that sum must be a number. */
	if (!isfinite(mem->static_bytes + vd->acts * p->microbatches)) {
		pw_error_set(err, "%smemory[%d]: static %g plus every "
		    "activation of device %d held at once (%d microbatches) "
		    "is not a finite number of bytes", at, d,
		    mem->static_bytes, d, p->microbatches);
		return PW_ERR_INPUT;
	}
	/* No schedule, offloaded or not, can run a microbatch through a stage
	 * without holding its whole activation while F runs. */
	if (mem->static_bytes + largest > mem->limit) {
		pw_error_set(err, "%smemory[%d].limit: %s is below what one "
		    "microbatch needs on device %d (static %s + act of stage %d "
		    "%s)", at, d, pw_fmt_bytes(limit, sizeof limit,
		    mem->limit), d,
		    pw_fmt_bytes(need, sizeof need, mem->static_bytes),
		    vd->largest,
		    pw_fmt_bytes(have, sizeof have, largest));
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

static int
pw_validate_link(const struct pw_problem *p, const char *at,
    struct pw_error *err)
{
	int d;

	if (!(p->link.d2h > 0 && isfinite(p->link.d2h)) ||
	    !(p->link.h2d > 0 && isfinite(p->link.h2d))) {
		pw_error_set(err, "%slink: d2h and h2d must be positive "
		    "bandwidths (got %g, %g)", at, p->link.d2h, p->link.h2d);
		return PW_ERR_INPUT;
	}
	if (!pw_nonneg(p->link.latency)) {
		pw_error_set(err, "%slink.latency: must be a non-negative "
		    "number (got %g)", at, p->link.latency);
		return PW_ERR_INPUT;
	}
	for (d = 0; d < p->devices; d++)
		if (p->link.group[d] < 0 || p->link.group[d] >= p->link.ngroups) {
			pw_error_set(err, "%slink.groups: device %d is in "
			    "group %d of %d", at, d, p->link.group[d],
			    p->link.ngroups);
			return PW_ERR_INPUT;
		}
	return PW_OK;
}

/*
 * Adds stage S's share of the serial time to *SERIAL: every op of one
 * microbatch (a transfer pair where it can offload) and both hand-overs
 * to the next stage.  No makespan exceeds the serial time of every
 * microbatch, and the total idle time adds a makespan per device, so
 * that product must be finite for every time derived from a schedule to
 * be a number.  Names the first field that makes it overflow.
 */
static int
pw_validate_serial(const struct pw_problem *p, int s, double *serial,
    const char *at, struct pw_error *err)
{
	const struct pw_stage *st = &p->stages[s];
	struct pw_op off = { PW_OFFLOAD, s, 0 }, rel = { PW_RELOAD, s, 0 };
	double hop = s + 1 < p->nstages ? pw_problem_hop(p, s) : 0;
	double moved = p->link.present && st->offload > 0 ?
	    pw_op_duration(p, off) + pw_op_duration(p, rel) : 0;
	const char *const name[] = { "f", "b", "w", "comm", "offload" };
	const double term[] = { st->f, st->b, st->w, 2 * hop, moved };
	const double value[] = { st->f, st->b, st->w, st->comm, st->offload };
	double scale = (double)p->microbatches * p->devices;
	char link[128] = "";
	size_t i;

	for (i = 0; i < sizeof term / sizeof term[0]; i++) {
		*serial += term[i];
		if (isfinite(*serial * scale))
			continue;
		/* The transfers' time is the link's as much as the bytes'. */
		if (i == 4)
			snprintf(link, sizeof link, ", transfers over link.d2h "
			    "%g, link.h2d %g, link.latency %g", p->link.d2h,
			    p->link.h2d, p->link.latency);
		pw_error_set(err, "%sstages[%d].%s: %g makes the time of "
		    "every op in series, once per device, not finite (%d "
		    "microbatches, %d devices%s)", at, s, name[i], value[i],
		    p->microbatches, p->devices, link);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* "WHERE: PARENT." ("WHERE: " without one): what the messages of the
 * checks below start with, before the field each names. */
static void
pw_validate_at(char *buf, size_t len, const char *where, const char *parent)
{
	snprintf(buf, len, "%s: %s%s", where, parent, *parent != '\0' ? "." :
	    "");
}

static int
pw_validate_counts(int devices, int nstages, int microbatches,
    const char *at, struct pw_error *err)
{
	if (devices < 1 || nstages < 1 || microbatches < 1) {
		pw_error_set(err, "%sdevices, stages and microbatches must be "
		    "at least 1 (got %d, %d, %d)", at, devices, nstages,
		    microbatches);
		return PW_ERR_INPUT;
	}
	if (devices > nstages) {
		pw_error_set(err, "%sdevices: %d devices for %d stages (every "
		    "device runs at least one stage)", at, devices, nstages);
		return PW_ERR_INPUT;
	}
	if ((size_t)nstages * (size_t)microbatches > PW_MAX_PAIRS) {
		pw_error_set(err, "%smicrobatches: %d stages x %d microbatches "
		    "exceeds the limit of %zu (stage, microbatch) pairs (each "
		    "keeps %d ops in memory)", at, nstages, microbatches,
		    PW_MAX_PAIRS, PW_NKINDS);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

int
pw_problem_check_counts(int devices, int nstages, int microbatches,
    const char *where, struct pw_error *err)
{
	return pw_problem_check_counts_in(devices, nstages, microbatches,
	    where, "", err);
}

int
pw_problem_check_counts_in(int devices, int nstages, int microbatches,
    const char *where, const char *parent, struct pw_error *err)
{
	char at[sizeof err->msg];

	pw_validate_at(at, sizeof at, where, parent);
	return pw_validate_counts(devices, nstages, microbatches, at, err);
}

/* One pass over the stages, so that validating is linear in the stages
 * whatever the devices. */
int
pw_problem_validate(const struct pw_problem *p, const char *where,
    struct pw_error *err)
{
	return pw_problem_validate_in(p, where, "", err);
}

int
pw_problem_validate_in(const struct pw_problem *p, const char *where,
    const char *parent, struct pw_error *err)
{
	struct pw_vdevice *vd = NULL;
	const struct pw_stage *st;
	char at[sizeof err->msg];
	double serial = 0;
	int s, d, rc;

	pw_validate_at(at, sizeof at, where, parent);
	if ((rc = pw_validate_counts(p->devices, p->nstages, p->microbatches,
	    at, err)) != PW_OK)
		return rc;
	if (!pw_nonneg(p->comm)) {
		pw_error_set(err, "%scomm: must be a non-negative number "
		    "(got %g)", at, p->comm);
		return PW_ERR_INPUT;
	}
	if (p->link.present &&
	    (rc = pw_validate_link(p, at, err)) != PW_OK)
		return rc;
	if ((rc = pw_validate_names(p, where, parent, err)) != PW_OK)
		return rc;
	vd = pw_xcalloc((size_t)p->devices, sizeof *vd);
	for (d = 0; d < p->devices; d++)
		vd[d].largest = -1;
	for (s = 0; s < p->nstages; s++) {
		if ((rc = pw_validate_stage(p, s, at, err)) != PW_OK ||
		    (rc = pw_validate_serial(p, s, &serial, at,
		    err)) != PW_OK)
			goto out;
		st = &p->stages[s];
		vd[st->device].chunks++;
		vd[st->device].acts += st->act;
		if (vd[st->device].largest < 0 ||
		    st->act > p->stages[vd[st->device].largest].act)
			vd[st->device].largest = s;
	}
	for (d = 0; d < p->devices; d++)
		if (vd[d].chunks == 0) {
			pw_error_set(err, "%sdevices: device %d has no stage",
			    at, d);
			rc = PW_ERR_INPUT;
			goto out;
		}
	for (d = 0; d < p->devices; d++)
		if ((rc = pw_validate_memory(p, d, &vd[d], at,
		    err)) != PW_OK)
			goto out;
out:
	free(vd);
	return rc;
}

bool
pw_problem_same(const struct pw_problem *a, const struct pw_problem *b)
{
	size_t st = sizeof *a->stages, mem = sizeof *a->memory;

	if (a->devices != b->devices || a->nstages != b->nstages ||
	    a->microbatches != b->microbatches || a->comm != b->comm ||
	    memcmp(a->stages, b->stages, (size_t)a->nstages * st) != 0 ||
	    memcmp(a->memory, b->memory, (size_t)a->devices * mem) != 0 ||
	    a->link.present != b->link.present)
		return false;
	if (!a->link.present)
		return true;
	return a->link.d2h == b->link.d2h && a->link.h2d == b->link.h2d &&
	    a->link.latency == b->link.latency &&
	    a->link.duplex == b->link.duplex &&
	    a->link.ngroups == b->link.ngroups &&
	    memcmp(a->link.group, b->link.group,
	    (size_t)a->devices * sizeof *a->link.group) == 0;
}

int
pw_problem_chunks(const struct pw_problem *p, int device)
{
	int s, n = 0;

	for (s = 0; s < p->nstages; s++)
		n += p->stages[s].device == device;
	return n;
}

bool
pw_problem_is_loop(const struct pw_problem *p)
{
	int s;

	if (p->nstages % p->devices != 0)
		return false;
	for (s = 0; s < p->nstages; s++)
		if (p->stages[s].device != pw_placement_device(PW_PLACE_LOOP,
		    p->devices, p->nstages, s))
			return false;
	return true;
}

char *
pw_problem_counts(const struct pw_problem *p, char *buf, size_t len)
{
	snprintf(buf, len, "%d device%s, %d stage%s, %d microbatch%s",
	    p->devices, p->devices == 1 ? "" : "s", p->nstages,
	    p->nstages == 1 ? "" : "s", p->microbatches,
	    p->microbatches == 1 ? "" : "es");
	return buf;
}

bool
pw_problem_is_v(const struct pw_problem *p)
{
	int s;

	if (p->nstages != 2 * p->devices)
		return false;
	for (s = 0; s < p->nstages; s++)
		if (p->stages[s].device != pw_placement_device(PW_PLACE_V,
		    p->devices, p->nstages, s))
			return false;
	return true;
}

double
pw_problem_hop(const struct pw_problem *p, int s)
{
	assert(s >= 0 && s + 1 < p->nstages);
	if (p->stages[s].device == p->stages[s + 1].device)
		return 0;
	return p->stages[s].comm;
}

/* The least bottleneck of a split of P's model and layout into *BEST:
 * PW_OK, else no model to split or no split of it fits. */
static int
pw_problem_best_bottleneck(const struct pw_problem *p, double *best)
{
	struct pw_error err;
	int *layers, rc;

	if (p->origin == NULL)
		return PW_ERR_NOT_APPLICABLE;
	layers = pw_xcalloc((size_t)p->nstages, sizeof *layers);
	rc = pw_split_balance_fit(&p->origin->model, &p->origin->hardware,
	    &p->origin->split, layers, best, &err);
	free(layers);
	return rc;
}

double
pw_problem_imbalance(const struct pw_problem *p, int *worst_device,
    double *reference)
{
	double *work = pw_xcalloc((size_t)p->devices, sizeof *work);
	double most = -1, sum = 0, ref;
	int s, d, worst = 0;

	for (s = 0; s < p->nstages; s++)
		work[p->stages[s].device] += p->stages[s].f + p->stages[s].b +
		    p->stages[s].w;
	for (d = 0; d < p->devices; d++) {
		sum += work[d];
		if (work[d] > most) {
			most = work[d];
			worst = d;
		}
	}
	free(work);
	if (pw_problem_best_bottleneck(p, &ref) != PW_OK)
		ref = sum / p->devices;
	if (worst_device != NULL)
		*worst_device = worst;
	if (reference != NULL)
		*reference = ref;
	/* Devices of no work are all alike. */
	return ref > 0 ? most / ref : 1;
}

/* ------------------------------------------------------------------ */

static const char *const pw_kind_names[PW_NKINDS] = {
	"F", "B", "W", "BW", "OFFLOAD", "RELOAD"
};

const char *
pw_kind_name(enum pw_kind kind)
{
	assert(kind >= 0 && kind < PW_NKINDS);
	return pw_kind_names[kind];
}

int
pw_kind_parse(const char *s, enum pw_kind *out)
{
	int k;

	for (k = 0; k < PW_NKINDS; k++) {
		if (strcmp(s, pw_kind_names[k]) == 0) {
			*out = (enum pw_kind)k;
			return PW_OK;
		}
	}
	return PW_ERR_INPUT;
}

bool
pw_kind_is_transfer(enum pw_kind kind)
{
	return kind == PW_OFFLOAD || kind == PW_RELOAD;
}

bool
pw_op_in(const struct pw_problem *p, struct pw_op op)
{
	return (unsigned)op.kind < PW_NKINDS && op.stage >= 0 &&
	    op.stage < p->nstages && op.mb >= 0 && op.mb < p->microbatches;
}

size_t
pw_op_universe(const struct pw_problem *p)
{
	return (size_t)p->nstages * (size_t)p->microbatches * PW_NKINDS;
}

size_t
pw_op_index(const struct pw_problem *p, struct pw_op op)
{
	assert(op.stage >= 0 && op.stage < p->nstages);
	assert(op.mb >= 0 && op.mb < p->microbatches);
	assert(op.kind >= 0 && op.kind < PW_NKINDS);
	return ((size_t)op.stage * (size_t)p->microbatches + (size_t)op.mb) *
	    PW_NKINDS + (size_t)op.kind;
}

bool
pw_op_same(struct pw_op a, struct pw_op b)
{
	return a.kind == b.kind && a.stage == b.stage && a.mb == b.mb;
}

struct pw_op
pw_op_from_index(const struct pw_problem *p, size_t index)
{
	struct pw_op op;
	size_t pair = index / PW_NKINDS;

	assert(index < pw_op_universe(p));
	op.kind = (enum pw_kind)(index % PW_NKINDS);
	op.stage = (int)(pair / (size_t)p->microbatches);
	op.mb = (int)(pair % (size_t)p->microbatches);
	return op;
}

double
pw_op_duration(const struct pw_problem *p, struct pw_op op)
{
	const struct pw_stage *st = &p->stages[op.stage];

	switch (op.kind) {
	case PW_F:
		return st->f;
	case PW_B:
		return st->b;
	case PW_W:
		return st->w;
	case PW_BW:
		return st->b + st->w;
	case PW_OFFLOAD:
		return p->link.latency + st->offload / p->link.d2h;
	case PW_RELOAD:
		return p->link.latency + st->offload / p->link.h2d;
	case PW_NKINDS:
		break;
	}
	assert(!"unknown op kind");
	return 0;
}

char *
pw_op_name(char *buf, size_t len, struct pw_op op)
{
	snprintf(buf, len, "%s(%d,%d)", pw_kind_name(op.kind), op.stage, op.mb);
	return buf;
}

/* Blanks, which an op name may have around its numbers. */
static const char *
pw_problem_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Reads a number of an op name at *S (a sign allowed, so that "-1" is
 * named out of range), moving *S past it and the blanks after it; its
 * text, LEN bytes from *TEXT, is what a message names.  A number too
 * long for a long stops at LONG_MAX (or its negative), out of any range.
 * Returns false when *S holds no number. */
static bool
pw_problem_number(const char **s, const char **text, int *len, long *out)
{
	const char *p = pw_problem_blanks(*s), *digits;
	bool neg = *p == '-';

	*text = p;
	if (*p == '-' || *p == '+')
		p++;
	digits = p;
	*out = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		*out = *out > (LONG_MAX - 9) / 10 ? LONG_MAX :
		    *out * 10 + (*p - '0');
	if (p == digits)
		return false;
	if (neg)
		*out = -*out;
	*len = (int)(p - *text);
	*s = pw_problem_blanks(p);
	return true;
}

/* Sets ERR for the op name SHOWN, whose WHAT (the stage or the
 * microbatch, its text TEXT of LEN bytes) is not below COUNT. */
static int
pw_problem_op_range(struct pw_error *err, const char *shown,
    const char *what, const char *text, int len, int count)
{
	pw_error_set(err, "'%s': %s %.*s is out of range (0 to %d)", shown,
	    what, len, text, count - 1);
	return PW_ERR_INPUT;
}

bool
pw_kind_precedes(enum pw_kind ka, int sa, enum pw_kind kb, int sb)
{
	ka = ka == PW_BW ? PW_B : ka;
	kb = kb == PW_BW ? PW_B : kb;
	switch (ka) {
	case PW_F:
		return kb != PW_F || sb > sa;
	case PW_B:
		return (kb == PW_B && sb < sa) || (kb == PW_W && sb <= sa);
	default:
		return false;
	}
}

struct pw_op
pw_pin_other(struct pw_op op)
{
	if (op.kind == PW_BW)
		op.kind = PW_B;
	else if (op.kind == PW_B || op.kind == PW_W)
		op.kind = PW_BW;
	return op;
}

/* Whether a pin's ops A and B are one: the same, or B and BW of one
 * microbatch. */
static bool
pw_pin_same_op(struct pw_op a, struct pw_op b)
{
	bool ab = a.kind == PW_B || a.kind == PW_BW;
	bool bb = b.kind == PW_B || b.kind == PW_BW;

	return pw_op_same(a, b) || (ab && bb && a.stage == b.stage &&
	    a.mb == b.mb);
}

bool
pw_pin_same(const struct pw_pin *a, const struct pw_pin *b)
{
	return pw_pin_same_op(a->before, b->before) &&
	    pw_pin_same_op(a->after, b->after);
}

int
pw_pin_check(const struct pw_problem *p, const struct pw_pin *pin,
    struct pw_error *err)
{
	struct pw_op a = pin->before, b = pin->after;
	char na[48], nb[48];
	int da, db;

	if (!pw_op_in(p, a) || pw_kind_is_transfer(a.kind) ||
	    !pw_op_in(p, b) || pw_kind_is_transfer(b.kind)) {
		pw_error_set(err, "both ops must be compute ops (F, B, W, BW) "
		    "of stages 0-%d and microbatches 0-%d", p->nstages - 1,
		    p->microbatches - 1);
		return PW_ERR_INPUT;
	}
	pw_op_name(na, sizeof na, a);
	pw_op_name(nb, sizeof nb, b);
	da = p->stages[a.stage].device;
	db = p->stages[b.stage].device;
	if (da != db) {
		pw_error_set(err, "%s is on device %d and %s on device %d: a "
		    "pin joins two ops of one device", na, da, nb, db);
		return PW_ERR_INPUT;
	}
	if (pw_pin_same_op(a, b)) {
		pw_error_set(err, "%s and %s are one op", na, nb);
		return PW_ERR_INPUT;
	}
	/* No schedule keeps such a pin (with W and BW of one stage: split,
	 * the W needs the B; fused, the two are one op). */
	if (a.mb == b.mb && pw_kind_precedes(b.kind, b.stage, a.kind,
	    a.stage)) {
		pw_error_set(err, "%s cannot come before %s, which it depends "
		    "on", na, nb);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

int
pw_op_parse(const char *s, const struct pw_problem *p, struct pw_op *out,
    struct pw_error *err)
{
	const char *at = pw_problem_blanks(s), *kind = at, *ts, *tm;
	char upper[16], *shown;
	struct pw_op op;
	long stage, mb;
	int ls, lm, rc = PW_ERR_INPUT;
	size_t i, n;

	while ((*at >= 'A' && *at <= 'Z') || (*at >= 'a' && *at <= 'z'))
		at++;
	n = (size_t)(at - kind);
	shown = pw_escape(s);
	at = pw_problem_blanks(at);
	if (n == 0 || *at++ != '(' ||
	    !pw_problem_number(&at, &ts, &ls, &stage) || *at++ != ',' ||
	    !pw_problem_number(&at, &tm, &lm, &mb) || *at++ != ')' ||
	    *pw_problem_blanks(at) != '\0') {
		pw_error_set(err, "'%s': not an op name such as B(3,12) "
		    "(KIND(STAGE,MICROBATCH))", shown);
		goto out;
	}
	/* Kind names are short: a longer word is no kind. */
	if (n < sizeof upper) {
		for (i = 0; i < n; i++)
			upper[i] = kind[i] >= 'a' ? (char)(kind[i] - 'a' + 'A') :
			    kind[i];
		upper[n] = '\0';
	}
	if (n >= sizeof upper || pw_kind_parse(upper, &op.kind) != PW_OK) {
		pw_error_set(err, "'%s': unknown kind '%.*s'", shown, (int)n,
		    kind);
		goto out;
	}
	if (stage < 0 || stage >= p->nstages) {
		rc = pw_problem_op_range(err, shown, "stage", ts, ls,
		    p->nstages);
		goto out;
	}
	if (mb < 0 || mb >= p->microbatches) {
		rc = pw_problem_op_range(err, shown, "microbatch", tm, lm,
		    p->microbatches);
		goto out;
	}
	op.stage = (int)stage;
	op.mb = (int)mb;
	*out = op;
	rc = PW_OK;
out:
	free(shown);
	return rc;
}

int
pw_problem_nchannels(const struct pw_problem *p)
{
	if (!p->link.present)
		return 0;
	return p->link.duplex ? 2 * p->link.ngroups : p->link.ngroups;
}

int
pw_problem_channel(const struct pw_problem *p, int device, enum pw_kind kind)
{
	int group;

	assert(p->link.present && pw_kind_is_transfer(kind));
	group = p->link.group[device];
	if (!p->link.duplex)
		return group;
	return 2 * group + (kind == PW_RELOAD);
}

char *
pw_channel_name(const struct pw_problem *p, int channel, char *buf, size_t len)
{
	if (!p->link.duplex)
		snprintf(buf, len, "link%d", channel);
	else
		snprintf(buf, len, "link%d.%s", channel / 2,
		    channel % 2 == 0 ? "d2h" : "h2d");
	return buf;
}

char *
pw_resource_name(const struct pw_problem *p, int resource, char *buf,
    size_t len)
{
	if (resource >= p->devices)
		return pw_channel_name(p, resource - p->devices, buf, len);
	snprintf(buf, len, "device %d", resource);
	return buf;
}
