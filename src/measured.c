/*
 * measured.c - a measured run (docs/format.md, "measured"): what the
 * runtime saw of a schedule, checked against the schedule it ran, shown
 * as a timing and compared with the prediction.
 *
 * The core only carries a run: the runtime (runtime/) makes one, and
 * json.c reads and writes it.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

const char *const pw_measured_backends[PW_NMEASURED_BACKENDS] = {
	"cpu", "cuda"
};
const char *const pw_measured_transports[PW_NMEASURED_TRANSPORTS] = {
	"local", "mpi"
};
/* pw_measured_word's message names two words. */
_Static_assert(PW_NMEASURED_BACKENDS == 2 && PW_NMEASURED_TRANSPORTS == 2,
    "a measured word's message lists two");

void
pw_workload_clear(struct pw_workload *w)
{
	free(w->layers);
	memset(w, 0, sizeof *w);
}

void
pw_workload_copy(struct pw_workload *dst, const struct pw_workload *src)
{
	*dst = *src;
	dst->layers = NULL;
	if (src->layers != NULL) {
		dst->layers = pw_xreallocarray(NULL, (size_t)src->nstages + 1,
		    sizeof *dst->layers);
		memcpy(dst->layers, src->layers, (size_t)src->nstages *
		    sizeof *dst->layers);
	}
}

int
pw_workload_validate(const struct pw_workload *w, int nstages,
    const char *where, struct pw_error *err)
{
	static const struct {
		const char *key;
		size_t off;
	} size[] = {
		{ "hidden", offsetof(struct pw_workload, hidden) },
		{ "ffn", offsetof(struct pw_workload, ffn) },
		{ "tokens", offsetof(struct pw_workload, tokens) },
	};
	size_t i;
	int v, s;

	for (i = 0; i < sizeof size / sizeof size[0]; i++) {
		v = *(const int *)((const char *)w + size[i].off);
		if (v < 0 || v > PW_WORKLOAD_MAX_DIM) {
			pw_error_set(err, "%s.%s: must be from 0 to %d (got %d)",
			    where, size[i].key, PW_WORKLOAD_MAX_DIM, v);
			return PW_ERR_INPUT;
		}
	}
	if (w->nstages != nstages || w->layers == NULL) {
		pw_error_set(err, "%s.layers: must have %d entries, one per "
		    "stage (got %d)", where, nstages,
		    w->layers == NULL ? 0 : w->nstages);
		return PW_ERR_INPUT;
	}
	for (s = 0; s < nstages; s++)
		if (w->layers[s] < 1 || w->layers[s] > PW_WORKLOAD_MAX_LAYERS) {
			pw_error_set(err, "%s.layers[%d]: must be from 1 to %d "
			    "(got %d)", where, s, PW_WORKLOAD_MAX_LAYERS,
			    w->layers[s]);
			return PW_ERR_INPUT;
		}
	return PW_OK;
}

/* Returns N zero doubles the caller frees; never NULL (N may be 0). */
static double *
pw_measured_zeros(size_t n)
{
	return pw_xcalloc(n + 1, sizeof (double));
}

/* Returns a run the caller owns (pw_measured_free), or NULL for sizes
 * no run has: the sizes may come from a file. */
struct pw_measured *
pw_measured_new(int devices, size_t nops, int iterations)
{
	struct pw_measured *m;
	size_t i;

	if (devices < 0 || iterations < 0 || iterations > PW_MAX_ITERATIONS ||
	    nops > SIZE_MAX / sizeof (double) / ((size_t)iterations + 1))
		return NULL;
	m = pw_xcalloc(1, sizeof *m);
	m->iterations = iterations;
	m->step = pw_measured_zeros((size_t)iterations);
	m->loss = pw_measured_zeros((size_t)iterations);
	m->devices = devices;
	m->peak = pw_measured_zeros((size_t)devices);
	m->nops = nops;
	m->ops = pw_xcalloc(nops + 1, sizeof *m->ops);
	for (i = 0; i < nops; i++) {
		m->ops[i].arrive = NAN;
		m->ops[i].durations = pw_measured_zeros((size_t)iterations);
	}
	return m;
}

void
pw_measured_free(struct pw_measured *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nops; i++)
		free(m->ops[i].durations);
	free(m->ops);
	free(m->backend);
	free(m->transport);
	free(m->host);
	free(m->step);
	free(m->loss);
	free(m->peak);
	pw_workload_clear(&m->workload);
	free(m);
}

/* Returns a deep copy the caller owns. */
struct pw_measured *
pw_measured_copy(const struct pw_measured *src)
{
	struct pw_measured *m;
	size_t i, it = (size_t)src->iterations;
	double *durations;

	m = pw_measured_new(src->devices, src->nops, src->iterations);
	assert(m != NULL);	/* SRC holds as much */
	m->backend = pw_xstrdup(src->backend);
	m->transport = pw_xstrdup(src->transport);
	m->host = pw_xstrdup(src->host);
	m->emulated = src->emulated;
	m->warmup = src->warmup;
	m->shown = src->shown;
	memcpy(m->step, src->step, it * sizeof *m->step);
	memcpy(m->loss, src->loss, it * sizeof *m->loss);
	memcpy(m->peak, src->peak, (size_t)src->devices * sizeof *m->peak);
	for (i = 0; i < src->nops; i++) {
		durations = m->ops[i].durations;
		m->ops[i] = src->ops[i];
		m->ops[i].durations = durations;
		memcpy(durations, src->ops[i].durations, it * sizeof *durations);
	}
	pw_workload_copy(&m->workload, &src->workload);
	return m;
}

/* M's steps, least first: an array the caller frees. */
static double *
pw_measured_sorted_steps(const struct pw_measured *m)
{
	size_t n = (size_t)m->iterations;
	double *sorted = pw_measured_zeros(n);

	memcpy(sorted, m->step, n * sizeof *sorted);
	qsort(sorted, n, sizeof *sorted, pw_double_cmp);
	return sorted;
}

double
pw_measured_step(const struct pw_measured *m)
{
	double *sorted, median;
	size_t n = (size_t)m->iterations;

	if (n == 0)
		return NAN;
	sorted = pw_measured_sorted_steps(m);
	median = n % 2 == 1 ? sorted[n / 2] :
	    (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	free(sorted);
	return median;
}

/* ------------------------------------------------------------------ */
/* Validation                                                          */

/* Sets "WHERE: measured.FIELD: WHAT" and returns PW_ERR_INPUT. */
static int
pw_measured_bad(struct pw_error *err, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
pw_measured_bad(struct pw_error *err, const char *where, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pw_error_set(err, "%s: measured.%s", where, msg);
	return PW_ERR_INPUT;
}

/* X, named FIELD, must be a finite non-negative number. */
static int
pw_measured_number(struct pw_error *err, const char *where, const char *field,
    double x)
{
	if (isfinite(x) && x >= 0)
		return PW_OK;
	return pw_measured_bad(err, where, "%s: must be a non-negative "
	    "number (got %.*g)", field, pw_exact_precision(x), x);
}

/* Each of X[N], named BASE[i]. */
static int
pw_measured_numbers(struct pw_error *err, const char *where, const char *base,
    const double *x, size_t n)
{
	char field[96];
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		snprintf(field, sizeof field, "%s[%zu]", base, i);
		if ((rc = pw_measured_number(err, where, field, x[i])) != PW_OK)
			return rc;
	}
	return PW_OK;
}

/* FIELD's value S must be one of NAMES[N] (the format's two words). */
static int
pw_measured_word(struct pw_error *err, const char *where, const char *field,
    const char *s, const char *const *names, size_t n)
{
	char *shown;
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return PW_OK;
	shown = pw_escape(s);
	rc = pw_measured_bad(err, where, "%s: must be \"%s\" or \"%s\" (got "
	    "\"%s\")", field, names[0], names[1], shown);
	free(shown);
	return rc;
}

static int
pw_measured_validate_head(const struct pw_problem *p,
    const struct pw_measured *m, const char *where, struct pw_error *err)
{
	static const struct {
		const char *key;
		size_t off;
	} text[] = {
		{ "backend", offsetof(struct pw_measured, backend) },
		{ "transport", offsetof(struct pw_measured, transport) },
		{ "host", offsetof(struct pw_measured, host) },
	};
	char wwhere[sizeof err->msg];
	const char *s;
	size_t i;
	int rc;

	for (i = 0; i < sizeof text / sizeof text[0]; i++) {
		s = *(char *const *)((const char *)m + text[i].off);
		if (s == NULL)
			return pw_measured_bad(err, where, "%s: missing",
			    text[i].key);
		if (!pw_text_valid(s))
			return pw_measured_bad(err, where, "%s: must be valid "
			    "UTF-8 text", text[i].key);
	}
	if ((rc = pw_measured_word(err, where, "backend", m->backend,
	    pw_measured_backends, PW_NMEASURED_BACKENDS)) != PW_OK ||
	    (rc = pw_measured_word(err, where, "transport", m->transport,
	    pw_measured_transports, PW_NMEASURED_TRANSPORTS)) != PW_OK)
		return rc;
	if (m->iterations < 1 || m->iterations > PW_MAX_ITERATIONS)
		return pw_measured_bad(err, where, "iterations: must be from 1 "
		    "to %d (got %d)", PW_MAX_ITERATIONS, m->iterations);
	if (m->warmup < 0)
		return pw_measured_bad(err, where, "warmup: must be a "
		    "non-negative integer (got %d)", m->warmup);
	if (m->shown < 0 || m->shown >= m->iterations)
		return pw_measured_bad(err, where, "shown: must be an "
		    "iteration from 0 to %d (got %d)", m->iterations - 1,
		    m->shown);
	if (m->devices != p->devices)
		return pw_measured_bad(err, where, "peak: must have %d "
		    "entries, one per device (got %d)", p->devices,
		    m->devices);
	if ((rc = pw_measured_numbers(err, where, "step", m->step,
	    (size_t)m->iterations)) != PW_OK ||
	    (rc = pw_measured_numbers(err, where, "loss", m->loss,
	    (size_t)m->iterations)) != PW_OK ||
	    (rc = pw_measured_numbers(err, where, "peak", m->peak,
	    (size_t)m->devices)) != PW_OK)
		return rc;
	snprintf(wwhere, sizeof wwhere, "%s: measured.workload", where);
	return pw_workload_validate(&m->workload, p->nstages, wwhere, err);
}

/* Op I of M: in PROBLEM, on its stage's device, in SCHED (unless NULL:
 * W is then NULL too), listed once (SEEN, by op index, holds 1 + the
 * entry that listed it), with sound times. */
static int
pw_measured_validate_op(const struct pw_problem *p, const struct pw_where *w,
    const struct pw_measured *m, size_t i, size_t *seen, const char *where,
    struct pw_error *err)
{
	const struct pw_measured_op *mo = &m->ops[i];
	char name[64], field[96];
	double dur;
	size_t idx;
	int device, rc;

	if (!pw_op_in(p, mo->op))
		return pw_measured_bad(err, where, "ops[%zu].op: no op of the "
		    "problem (%d stages, %d microbatches)", i, p->nstages,
		    p->microbatches);
	pw_op_name(name, sizeof name, mo->op);
	idx = pw_op_index(p, mo->op);
	if (w != NULL && !pw_where_has(w, p, mo->op))
		return pw_measured_bad(err, where, "ops[%zu].op: %s is not an "
		    "op of the schedule", i, name);
	if (w == NULL && pw_kind_is_transfer(mo->op.kind) &&
	    (!p->link.present || p->stages[mo->op.stage].offload == 0))
		return pw_measured_bad(err, where, "ops[%zu].op: %s moves "
		    "nothing on this problem", i, name);
	if (seen[idx] != 0)
		return pw_measured_bad(err, where, "ops[%zu].op: %s is listed "
		    "twice (first at measured.ops[%zu])", i, name,
		    seen[idx] - 1);
	seen[idx] = i + 1;
	device = p->stages[mo->op.stage].device;
	if (mo->device != device)
		return pw_measured_bad(err, where, "ops[%zu].device: must be "
		    "%d, the device of stage %d (got %d)", i, device,
		    mo->op.stage, mo->device);
	snprintf(field, sizeof field, "ops[%zu].start", i);
	if ((rc = pw_measured_number(err, where, field, mo->start)) != PW_OK)
		return rc;
	snprintf(field, sizeof field, "ops[%zu].end", i);
	if ((rc = pw_measured_number(err, where, field, mo->end)) != PW_OK)
		return rc;
	if (mo->end < mo->start)
		return pw_measured_bad(err, where, "ops[%zu].end: must be at "
		    "least its start, %.*g (got %.*g)", i,
		    pw_exact_precision(mo->start), mo->start,
		    pw_exact_precision(mo->end), mo->end);
	snprintf(field, sizeof field, "ops[%zu].arrive", i);
	if (!isnan(mo->arrive) &&
	    (rc = pw_measured_number(err, where, field, mo->arrive)) != PW_OK)
		return rc;
	/* Its input came before it ended. */
	if (!isnan(mo->arrive) && mo->arrive > mo->end)
		return pw_measured_bad(err, where, "ops[%zu].arrive: must be "
		    "at most its end, %.*g (got %.*g)", i,
		    pw_exact_precision(mo->end), mo->end,
		    pw_exact_precision(mo->arrive), mo->arrive);
	snprintf(field, sizeof field, "ops[%zu].durations", i);
	if ((rc = pw_measured_numbers(err, where, field, mo->durations,
	    (size_t)m->iterations)) != PW_OK)
		return rc;
	/* The shown iteration's times are its duration's (the runtime
	 * writes end - start itself; a hand's edit may not). */
	dur = mo->durations[m->shown];
	if (!(fabs(dur - (mo->end - mo->start)) <= 1e-9 * fmax(fabs(mo->end),
	    dur) + 1e-12))
		return pw_measured_bad(err, where, "ops[%zu].durations[%d]: "
		    "must be its end less its start in the shown iteration, "
		    "%.*g (got %.*g)", i, m->shown,
		    pw_exact_precision(mo->end - mo->start), mo->end - mo->start,
		    pw_exact_precision(dur), dur);
	return PW_OK;
}

/* The shown iteration is the median step's (with ties, any of that
 * step's), as the runtime writes it. */
static int
pw_measured_validate_shown(const struct pw_measured *m, const char *where,
    struct pw_error *err)
{
	double s = m->step[m->shown], median, *sorted;

	sorted = pw_measured_sorted_steps(m);
	median = sorted[(m->iterations - 1) / 2];
	free(sorted);
	if (s != median)
		return pw_measured_bad(err, where, "shown: must be an iteration "
		    "of the median step, %.*g (iteration %d's step is %.*g)",
		    pw_exact_precision(median), median, m->shown,
		    pw_exact_precision(s), s);
	return PW_OK;
}

/* An op runs inside its iteration, which starts at 0 of its times and
 * whose step ends with its last op: no duration is above its iteration's
 * step.  One op above names that op; several, the step. */
static int
pw_measured_validate_within(const struct pw_measured *m, const char *where,
    struct pw_error *err)
{
	size_t i, over, first = 0;
	double longest;
	int k;

	for (k = 0; k < m->iterations; k++) {
		longest = 0;
		for (i = over = 0; i < m->nops; i++)
			if (!(m->ops[i].durations[k] <= m->step[k] *
			    (1 + 1e-9) + 1e-12)) {
				first = over++ == 0 ? i : first;
				longest = fmax(longest,
				    m->ops[i].durations[k]);
			}
		if (over == 1)
			return pw_measured_bad(err, where, "ops[%zu]."
			    "durations[%d]: must be at most iteration %d's "
			    "step, %.*g (got %.*g)", first, k, k,
			    pw_exact_precision(m->step[k]), m->step[k],
			    pw_exact_precision(longest), longest);
		if (over > 1)
			return pw_measured_bad(err, where, "step[%d]: must be "
			    "at least iteration %d's longest op, %.*g (got "
			    "%.*g; %zu ops are longer)", k, k,
			    pw_exact_precision(longest), longest,
			    pw_exact_precision(m->step[k]), m->step[k], over);
	}
	return PW_OK;
}

/* The shown iteration's step is when its last op ended. */
static int
pw_measured_validate_step(const struct pw_measured *m, const char *where,
    struct pw_error *err)
{
	double s = m->step[m->shown], last = 0;
	size_t i;

	for (i = 0; i < m->nops; i++)
		last = fmax(last, m->ops[i].end);
	if (m->nops > 0 && !(fabs(s - last) <= 1e-9 * fmax(s, last) + 1e-12))
		return pw_measured_bad(err, where, "step[%d]: must be when the "
		    "shown iteration's last op ended, %.*g (got %.*g)",
		    m->shown, pw_exact_precision(last), last,
		    pw_exact_precision(s), s);
	return PW_OK;
}

/* SCHED may be NULL: M is then checked against PROBLEM alone (what
 * calibration, which has no schedule, needs). */
int
pw_measured_validate(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m, const char *where, struct pw_error *err)
{
	struct pw_where *w = NULL;
	struct pw_error why;
	size_t *seen = NULL, i, want;
	int rc;

	if ((rc = pw_measured_validate_head(p, m, where, err)) != PW_OK ||
	    (rc = pw_measured_validate_shown(m, where, err)) != PW_OK)
		return rc;
	if (sched != NULL) {
		if ((rc = pw_where_build(p, sched, &w, &why)) != PW_OK) {
			pw_error_set(err, "%s: %s", where, why.msg);
			return rc;
		}
		want = pw_schedule_nops(sched);
		if (m->nops != want) {
			rc = pw_measured_bad(err, where, "ops: must have %zu "
			    "entries, one per op of the schedule (got %zu)",
			    want, m->nops);
			goto out;
		}
	}
	seen = pw_xcalloc(pw_op_universe(p), sizeof *seen);
	for (i = 0; i < m->nops && rc == PW_OK; i++)
		rc = pw_measured_validate_op(p, w, m, i, seen, where, err);
	if (rc == PW_OK)
		rc = pw_measured_validate_within(m, where, err);
	if (rc == PW_OK)
		rc = pw_measured_validate_step(m, where, err);
out:
	free(seen);
	pw_where_free(w);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Views                                                               */

/* Returns a timing the caller owns. */
struct pw_timing *
pw_measured_timing(const struct pw_problem *p, const struct pw_measured *m,
    struct pw_error *err)
{
	struct pw_timing *t;
	size_t i, idx;

	if (pw_measured_validate(p, NULL, m, "measured run", err) != PW_OK)
		return NULL;
	t = pw_xcalloc(1, sizeof *t);
	t->universe = pw_op_universe(p);
	t->start = pw_xreallocarray(NULL, t->universe, sizeof *t->start);
	t->end = pw_xreallocarray(NULL, t->universe, sizeof *t->end);
	t->bind = pw_xreallocarray(NULL, t->universe, sizeof *t->bind);
	for (i = 0; i < t->universe; i++) {
		t->start[i] = t->end[i] = NAN;
		t->bind[i] = (struct pw_bind){ PW_NO_BIND, 0 };
	}
	for (i = 0; i < m->nops; i++) {
		idx = pw_op_index(p, m->ops[i].op);
		t->start[idx] = m->ops[i].start;
		t->end[idx] = m->ops[i].end;
	}
	return t;
}

void
pw_measured_index(const struct pw_problem *p, const struct pw_measured *m,
    size_t *at)
{
	size_t i, u = pw_op_universe(p);

	for (i = 0; i < u; i++)
		at[i] = SIZE_MAX;
	for (i = 0; i < m->nops; i++)
		at[pw_op_index(p, m->ops[i].op)] = i;
}

/* Returns timed ops the caller frees.  The timed ops are pw_timed_ops
 * of the measured timing, so bytes, anchors and their order are the
 * simulated schedule's rules. */
struct pw_timed_op *
pw_measured_timed(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m, size_t *n)
{
	struct pw_timed_op *ops;
	struct pw_timing *t;
	struct pw_error err;

	*n = 0;
	if ((t = pw_measured_timing(p, m, &err)) == NULL)
		return NULL;
	ops = pw_timed_ops(p, sched, t, n);
	pw_timing_free(t);
	return ops;
}

/* ------------------------------------------------------------------ */
/* Measured against predicted                                          */

static double
pw_measured_gap(const struct pw_op_error *e)
{
	return fabs(e->measured - e->predicted);
}

/* Largest gap first; the op index breaks ties, for a stable report. */
static int
pw_measured_error_cmp(const void *a, const void *b)
{
	const struct pw_op_error *x = a, *y = b;
	double gx = pw_measured_gap(x), gy = pw_measured_gap(y);

	if (gx != gy)
		return gx > gy ? -1 : 1;
	if (x->op.stage != y->op.stage)
		return x->op.stage < y->op.stage ? -1 : 1;
	if (x->op.mb != y->op.mb)
		return x->op.mb < y->op.mb ? -1 : 1;
	return x->op.kind < y->op.kind ? -1 : x->op.kind > y->op.kind;
}

int
pw_measured_compare(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t, const struct pw_metrics *met,
    const struct pw_measured *m, struct pw_measured_cmp *out,
    struct pw_error *err)
{
	const struct pw_measured_op *mo;
	struct pw_op_error *e;
	size_t i, idx, counted = 0;
	double sum = 0;
	int d, rc;

	memset(out, 0, sizeof *out);
	if ((rc = pw_measured_validate(p, sched, m, "measured run",
	    err)) != PW_OK)
		return rc;
	out->step_predicted = met->makespan;
	out->step_measured = pw_measured_step(m);
	out->devices = p->devices;
	out->busy_predicted = pw_measured_zeros((size_t)p->devices);
	out->busy_measured = pw_measured_zeros((size_t)p->devices);
	out->peak_predicted = pw_measured_zeros((size_t)p->devices);
	out->peak_measured = pw_measured_zeros((size_t)p->devices);
	for (d = 0; d < p->devices; d++) {
		out->busy_predicted[d] = met->device[d].busy;
		out->peak_predicted[d] = met->device[d].peak;
		out->peak_measured[d] = m->peak[d];
	}
	out->nops = m->nops;
	out->ops = pw_xcalloc(m->nops + 1, sizeof *out->ops);
	for (i = 0; i < m->nops; i++) {
		mo = &m->ops[i];
		e = &out->ops[i];
		idx = pw_op_index(p, mo->op);
		e->op = mo->op;
		e->device = mo->device;
		e->predicted_start = t->start[idx];
		e->predicted = t->end[idx] - t->start[idx];
		e->measured_start = mo->start;
		e->measured = mo->end - mo->start;
		if (!pw_kind_is_transfer(mo->op.kind))
			out->busy_measured[mo->device] += e->measured;
		if (e->predicted > 0) {
			sum += pw_measured_gap(e) / e->predicted;
			counted++;
		}
	}
	qsort(out->ops, out->nops, sizeof *out->ops, pw_measured_error_cmp);
	out->mean_abs_error = counted > 0 ? sum / (double)counted : 0;
	return PW_OK;
}

void
pw_measured_cmp_free(struct pw_measured_cmp *c)
{
	free(c->busy_predicted);
	free(c->busy_measured);
	free(c->peak_predicted);
	free(c->peak_measured);
	free(c->ops);
	memset(c, 0, sizeof *c);
}
