/*
 * family_offload.c - PipeOffload's schedules (Wan et al., ICML 2025,
 * shared/reference/pipeoffload.md): the group-interleaved layouts GIS,
 * GIS-H and PO, and the PO layout with activations moved to host memory
 * (PO-H, PO-F, PO-sel).
 *
 * Every layout comes from the authors' building block.  Microbatches go
 * in groups of g; on loop placement with v chunks per device, counting F,
 * B and W as one slot each, device i runs
 *
 *	F of chunk c, microbatch r of group q   at slot 3 pos(c) + i,
 *	B of chunk c                            at slot 3 (pos(v-1) + d-1-i
 *						    + pos(v-1-c)) + 1 + i,
 *	W right after its B,
 *
 * with pos(c) = k g c + g floor(c / P) + g v q + r.  The factor 3 makes
 * the steady state F, B, W, F, B, W.  k = ceil(ceil(d/2) / g) spaces a
 * microbatch's chunks so that its forward has left device d-1 before
 * device 0 needs it again (3kg >= d); after P = v / gcd(v, k) chunks the
 * spaced slots would land on used ones, so later chunks move one group on
 * (the slots then cover every residue exactly once).
 *
 * - GIS: g = d, so k = 1: the forwards fill consecutive slots, device i
 *   runs d(v-1) + d-i of them before its first B; peak d v activations,
 *   bubble (d-1)(f+b).
 * - group size g in [ceil(d/2), d]: peak g(v-1) + d, bubble (d-g)(v-1)
 *   slots more than GIS's; GIS-H: g = ceil(d/2).
 * - PO: g = 1, k = ceil(d/2): each microbatch's chunks are spread evenly
 *   over its lifetime ("uniformly repeating"), so chunk c's activations
 *   live about 6k(v-1-c) slots plus the warm-up: the lowest chunks live
 *   longest and offloading them frees the most memory per transfer.
 *
 * The offloading families hand the PO layout to the offload planner
 * (offload.c): PO-H and PO-F with PipeOffload's rule on the ceil(v/2)
 * lowest chunks or on all of them; PO-sel searches, over the number of
 * lowest chunks the rule starts from, the plan that peak shaving then
 * takes lowest.
 *
 * Only the order on each device matters (the simulator computes times).
 * The orders never deadlock: delaying device i by min(i, 3kg - d, d-1)
 * slots turns the slots into a timing in which every op comes after what
 * it depends on (a microbatch's F reaches device 0 again 3kg - d slots
 * after leaving device d-1; backwards need 2 slots a hop and
 * 3kg + min(...) >= 2d - 1 across the wrap), so sorting by slot is a
 * topological order for any op durations.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"

struct pw_slots {
	int	d, v, g;
	int	k;	/* groups between a microbatch's consecutive chunks */
	int	wrap;	/* P: chunks after which the slots move one group on */
};

/* One op of a device with its slot, for sorting. */
struct pw_slotted {
	long long slot;
	struct pw_op op;
};

static int
pw_gcd(int a, int b)
{
	while (b != 0) {
		int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static void
pw_slots_init(struct pw_slots *lay, int d, int v, int g)
{
	assert(d >= 1 && v >= 1 && g >= 1 && g <= d);
	lay->d = d;
	lay->v = v;
	lay->g = g;
	lay->k = ((d + 1) / 2 + g - 1) / g;
	lay->wrap = v / pw_gcd(v, lay->k);
}

static long long
pw_slots_pos(const struct pw_slots *lay, int c, int mb)
{
	long long g = lay->g, q = mb / lay->g, r = mb % lay->g;

	return lay->k * g * c + g * (c / lay->wrap) + g * lay->v * q + r;
}

/* The slot of OP on device I, less the device's constant i. */
static long long
pw_slots_slot(const struct pw_slots *lay, int i, struct pw_op op)
{
	int c = op.stage / lay->d;
	long long b;

	if (op.kind == PW_F)
		return 3 * pw_slots_pos(lay, c, op.mb);
	assert(op.kind == PW_B || op.kind == PW_W);
	b = 3 * (pw_slots_pos(lay, lay->v - 1, 0) + lay->d - 1 - i +
	    pw_slots_pos(lay, lay->v - 1 - c, op.mb)) + 1;
	return op.kind == PW_B ? b : b + 1;
}

static int
pw_slotted_cmp(const void *a, const void *b)
{
	const struct pw_slotted *x = a, *y = b;

	assert(x->slot != y->slot);
	return x->slot < y->slot ? -1 : 1;
}

/* PW_OK for loop placement (any v >= 1), else the reason. */
static int
pw_slots_applies(const char *name, const struct pw_problem *p,
    struct pw_error *err)
{
	if (!pw_problem_is_loop(p)) {
		pw_error_set(err, "%s needs loop placement (stage s on device "
		    "s mod p, the same number of stages on every device); this "
		    "problem has %d stages on %d devices not in loop placement",
		    name, p->nstages, p->devices);
		return PW_ERR_NOT_APPLICABLE;
	}
	return PW_OK;
}

/*
 * Returns the layout of group size G on P, named NAME, in *OUT (the
 * caller owns it), or PW_ERR_NOT_APPLICABLE.
 */
static int
pw_slots_build(const char *name, const struct pw_problem *p, int g,
    struct pw_schedule **out, struct pw_error *err)
{
	static const enum pw_kind kinds[] = { PW_F, PW_B, PW_W };
	struct pw_slots lay;
	struct pw_schedule *sched;
	struct pw_slotted *ops;
	int rc, i, c, j, n, kind, v = p->nstages / p->devices;

	*out = NULL;
	if ((rc = pw_slots_applies(name, p, err)) != PW_OK)
		return rc;
	pw_slots_init(&lay, p->devices, v, g);
	sched = pw_schedule_new(p);
	sched->family = pw_xstrdup(name);
	ops = pw_xreallocarray(NULL, (size_t)v * (size_t)p->microbatches * 3,
	    sizeof *ops);
	for (i = 0; i < p->devices; i++) {
		n = 0;
		for (c = 0; c < v; c++)
			for (j = 0; j < p->microbatches; j++)
				for (kind = 0; kind < 3; kind++) {
					ops[n].op.kind = kinds[kind];
					ops[n].op.stage = c * p->devices + i;
					ops[n].op.mb = j;
					ops[n].slot = pw_slots_slot(&lay, i,
					    ops[n].op);
					n++;
				}
		qsort(ops, (size_t)n, sizeof *ops, pw_slotted_cmp);
		for (j = 0; j < n; j++)
			pw_schedule_append(sched, p, ops[j].op);
	}
	free(ops);
	*out = sched;
	return PW_OK;
}

int
pw_family_group_interleaved(const struct pw_problem *p, int g,
    struct pw_schedule **out, struct pw_error *err)
{
	char name[32];

	if (g < 1 || g > p->devices) {
		*out = NULL;
		pw_error_set(err, "group interleaving needs a group size from 1 "
		    "to the devices (%d); got %d", p->devices, g);
		return PW_ERR_NOT_APPLICABLE;
	}
	snprintf(name, sizeof name, "gis-g%d", g);
	return pw_slots_build(name, p, g, out, err);
}

int
pw_family_gis(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_slots_build("gis", p, p->devices, out, err);
}

int
pw_family_gis_h(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_slots_build("gis-h", p, (p->devices + 1) / 2, out, err);
}

int
pw_family_po(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_slots_build("po", p, 1, out, err);
}

/* PW_OK when P has a link and some stage offload bytes, else the reason. */
static int
pw_po_can_offload(const char *name, const struct pw_problem *p,
    struct pw_error *err)
{
	bool any = false;
	int rc, s;

	if ((rc = pw_slots_applies(name, p, err)) != PW_OK)
		return rc;
	for (s = 0; s < p->nstages; s++)
		any = any || p->stages[s].offload > 0;
	if (!p->link.present || !any) {
		pw_error_set(err, "%s needs an offload link and stages with "
		    "offload bytes; this problem has %s", name,
		    !p->link.present ? "no link" : "offload 0 on every stage");
		return PW_ERR_NOT_APPLICABLE;
	}
	return PW_OK;
}

/* A layout built and timed once, for the plans made of it. */
struct pw_po_layout {
	const struct pw_problem *p;
	struct pw_schedule *sched;
	struct pw_timing *timing;
	struct pw_metrics *metrics;
};

static void
pw_po_layout_free(struct pw_po_layout *lay)
{
	pw_schedule_free(lay->sched);
	pw_timing_free(lay->timing);
	pw_metrics_free(lay->metrics);
}

/* The layout of group size G on P, named NAME, timed, in *LAY (the caller
 * frees it with pw_po_layout_free), or PW_ERR_NOT_APPLICABLE. */
static int
pw_po_layout(const char *name, const struct pw_problem *p, int g,
    struct pw_po_layout *lay, struct pw_error *err)
{
	int rc;

	memset(lay, 0, sizeof *lay);
	lay->p = p;
	if ((rc = pw_slots_build(name, p, g, &lay->sched, err)) != PW_OK ||
	    (rc = pw_simulate(p, lay->sched, &lay->timing, err)) != PW_OK) {
		pw_po_layout_free(lay);
		return rc;
	}
	lay->metrics = pw_metrics_compute(p, lay->sched, lay->timing);
	return PW_OK;
}

/*
 * LAY with transfers planned by SELECT, PipeOffload's rule naming the
 * activations of the CHUNKS lowest chunks (the longest lived), a reload
 * ending MARGIN backwards before its backward (the authors use one).
 * Returns the schedule in *OUT and its metrics in *MET (MET NULL: not
 * wanted), both the caller's.
 */
static int
pw_po_plan(const struct pw_po_layout *lay, enum pw_offload_select select,
    int chunks, double margin, struct pw_schedule **out,
    struct pw_metrics **met, struct pw_error *err)
{
	const struct pw_problem *p = lay->p;
	struct pw_offload_opts opts = { select, margin, NULL };
	bool *rule;
	int rc, s, j;

	rule = pw_xcalloc((size_t)p->nstages * (size_t)p->microbatches,
	    sizeof *rule);
	for (s = 0; s < p->nstages; s++)
		for (j = 0; j < p->microbatches; j++)
			rule[s * p->microbatches + j] = s / p->devices < chunks;
	opts.rule = rule;
	*out = pw_schedule_copy(lay->sched);
	if ((rc = pw_offload_plan_timed(p, *out, lay->timing, lay->metrics,
	    &opts, met, err)) != PW_OK) {
		pw_schedule_free(*out);
		*out = NULL;
	}
	free(rule);
	return rc;
}

/* PO-H and PO-F: the PO layout with the rule on CHUNKS chunks, named
 * NAME. */
static int
pw_po_rule(const char *name, const struct pw_problem *p, int chunks,
    struct pw_schedule **out, struct pw_error *err)
{
	struct pw_po_layout lay;
	int rc;

	*out = NULL;
	if ((rc = pw_po_can_offload(name, p, err)) != PW_OK ||
	    (rc = pw_po_layout(name, p, 1, &lay, err)) != PW_OK)
		return rc;
	rc = pw_po_plan(&lay, PW_OFFSEL_LAZY, chunks, 1.0, out, NULL, err);
	pw_po_layout_free(&lay);
	return rc;
}

int
pw_family_po_h(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_po_rule("po-h", p, (p->nstages / p->devices + 1) / 2, out,
	    err);
}

int
pw_family_po_f(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	return pw_po_rule("po-f", p, p->nstages / p->devices, out, err);
}

/* The highest device peak of M; the sum of all of them in *SUM. */
static double
pw_po_peak(const struct pw_problem *p, const struct pw_metrics *m,
    double *sum)
{
	double peak = 0;
	int d;

	*sum = 0;
	for (d = 0; d < p->devices; d++) {
		if (d == 0 || m->device[d].peak > peak)
			peak = m->device[d].peak;
		*sum += m->device[d].peak;
	}
	return peak;
}

/* Of the plans offered, the one with the lowest highest peak, then the
 * lowest sum of peaks (the first among equals): PO-sel's choice. */
struct pw_po_lowest {
	struct pw_schedule *sched;	/* owned; NULL before the first */
	double	peak, sum;
};

/* Offers SCHED (taken over), whose metrics are MET, to LOW. */
static void
pw_po_lowest_offer(struct pw_po_lowest *low, const struct pw_problem *p,
    struct pw_schedule *sched, const struct pw_metrics *met)
{
	double sum, peak = pw_po_peak(p, met, &sum);

	if (low->sched != NULL && !(peak < low->peak ||
	    (peak == low->peak && sum < low->sum))) {
		pw_schedule_free(sched);
		return;
	}
	pw_schedule_free(low->sched);
	low->sched = sched;
	low->peak = peak;
	low->sum = sum;
}

/*
 * LAY's plans by PipeOffload's rule on the c lowest chunks, each followed
 * by peak shaving over all activations, a reload ending MARGIN backwards
 * before its backward, for c = 0..v in turn.  Unless FITS is NULL, the
 * first plan within every limit goes to *FITS and ends the sweep; the
 * others are offered to LOWEST (NULL: dropped).
 */
static int
pw_po_sweep(const struct pw_po_layout *lay, double margin,
    struct pw_schedule **fits, struct pw_po_lowest *lowest,
    struct pw_error *err)
{
	const struct pw_problem *p = lay->p;
	struct pw_schedule *sched;
	struct pw_metrics *met;
	int rc = PW_OK, c, v = p->nstages / p->devices;

	for (c = 0; c <= v && rc == PW_OK; c++) {
		if ((rc = pw_po_plan(lay, PW_OFFSEL_PEAK, c, margin, &sched,
		    &met, err)) != PW_OK)
			break;
		if (fits != NULL && met->feasible) {
			*fits = sched;
			pw_metrics_free(met);
			break;
		}
		if (lowest != NULL)
			pw_po_lowest_offer(lowest, p, sched, met);
		else
			pw_schedule_free(sched);
		pw_metrics_free(met);
	}
	return rc;
}

/*
 * PO-sel: of the PO layout's plans for c = 0..v (pw_po_sweep, a margin of
 * one backward), the lowest highest peak (then the lowest sum of peaks).
 * None adds bubble, so neither does the best.
 */
int
pw_family_po_sel(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	struct pw_po_layout lay;
	struct pw_po_lowest low = { NULL, 0, 0 };
	int rc;

	*out = NULL;
	if ((rc = pw_po_can_offload("po-sel", p, err)) != PW_OK ||
	    (rc = pw_po_layout("po-sel", p, 1, &lay, err)) != PW_OK)
		return rc;
	rc = pw_po_sweep(&lay, 1.0, NULL, &low, err);
	pw_po_layout_free(&lay);
	if (rc != PW_OK)
		pw_schedule_free(low.sched);
	else
		*out = low.sched;
	return rc;
}

/*
 * The layout of group size G within every limit, in *OUT (NULL when
 * none is found): as it is, else with PipeOffload's rule on the c lowest
 * chunks then peak shaving (c = 0..v) and a margin of one backward, then
 * of none; the first plan that fits.  A plan moves no compute op, so
 * every plan that fits has the layout's makespan, in *MAKESPAN.  Unless
 * LOWEST is NULL, the plans of a margin of one that do not fit are
 * offered to it: for G = 1 those are PO-sel's.
 */
static int
pw_po_fit(const struct pw_problem *p, int g, bool offload,
    struct pw_schedule **out, double *makespan, struct pw_po_lowest *lowest,
    struct pw_error *err)
{
	static const double margin[2] = { 1.0, 0.0 };
	struct pw_po_layout lay;
	int rc, k;

	*out = NULL;
	if ((rc = pw_po_layout("po-auto", p, g, &lay, err)) != PW_OK)
		return rc;
	*makespan = lay.metrics->makespan;
	if (lay.metrics->feasible) {
		*out = lay.sched;
		lay.sched = NULL;
	}
	for (k = 0; k < 2 && offload && *out == NULL && rc == PW_OK; k++)
		rc = pw_po_sweep(&lay, margin[k], out, k == 0 ? lowest : NULL,
		    err);
	pw_po_layout_free(&lay);
	return rc;
}

/*
 * PO-auto: the group size and the offload plan for the limits.  A larger
 * group has less bubble ((d - g)(v - 1) slots more than GIS) and more
 * activations in flight, so the largest group size that fits (as it is or
 * planned, pw_po_fit) is searched by bisection between the PO layout
 * (g = 1) and GIS (g = d), taking the fit to fall as g grows; of the
 * group sizes tried that fit, the fastest (the largest among equals):
 * with uneven stages (an LM head on the last) a larger group can be
 * slower.  When even the PO layout does not fit: PO-sel's plan, the
 * lowest peak, or without a link the PO layout as it is.
 */
int
pw_family_po_auto(const struct pw_problem *p, struct pw_schedule **out,
    struct pw_error *err)
{
	struct pw_schedule *sched = NULL;
	struct pw_po_lowest low = { NULL, 0, 0 };
	struct pw_error why;
	double best, makespan;
	bool offload, fits;
	int rc, lo = 1, hi = p->devices, mid;

	*out = NULL;
	if ((rc = pw_slots_applies("po-auto", p, err)) != PW_OK)
		return rc;
	offload = pw_po_can_offload("po-auto", p, &why) == PW_OK;
	if ((rc = pw_po_fit(p, hi, offload, out, &best, NULL, err)) != PW_OK ||
	    *out != NULL)
		return rc;
	/* The PO layout's plans that do not fit are PO-sel's, kept for
	 * when none fits. */
	rc = pw_po_fit(p, lo, offload, out, &best, &low, err);
	fits = *out != NULL;
	if (rc == PW_OK && !fits) {
		if (offload) {
			*out = low.sched;
			low.sched = NULL;
		} else
			rc = pw_slots_build("po-auto", p, lo, out, err);
	}
	pw_schedule_free(low.sched);
	if (rc != PW_OK || !fits)
		return rc;
	/* *OUT fits with group size LO, nothing did with HI. */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if ((rc = pw_po_fit(p, mid, offload, &sched, &makespan, NULL,
		    err)) != PW_OK) {
			pw_schedule_free(*out);
			*out = NULL;
			return rc;
		}
		if (sched == NULL) {
			hi = mid;
			continue;
		}
		lo = mid;
		if (makespan <= best) {
			pw_schedule_free(*out);
			*out = sched;
			best = makespan;
		} else
			pw_schedule_free(sched);
		sched = NULL;
	}
	return PW_OK;
}
