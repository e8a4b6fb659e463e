/*
 * balance.c - the partition search: how many layers each stage of a
 * split holds so that the busiest device is as light as it can be with
 * every device within its memory.
 *
 * The search is over the devices' layer counts: a device's compute and
 * memory depend only on how many layers it holds (its chunks share them
 * by one fixed rule, pw_balance_share), so a dynamic program over the
 * devices in order, with the layers used so far as its state, is exact
 * for the model.  For one chunk per device that is the classic program
 * over layer boundaries.  It runs twice: the first pass finds the least
 * bottleneck, the second, among the counts that keep every device at or
 * under it, the least sum of squared device loads (a lexicographic
 * objective does not decompose over prefixes, a sum under a cap does).
 * docs/planner.md states the model and its approximations.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

/* What device D costs when it holds N layers, shared among its chunks. */
struct pw_balance_cell {
	bool	fits;		/* within its limit less the reserve */
	double	load;		/* f + b + w of its stages, seconds */
	double	need;		/* static bytes plus its in-flight activations */
};

/* The table of every device's cells and what the search knows of its
 * inputs. */
struct pw_balance {
	const struct pw_model *model;
	const struct pw_hardware *hw;
	const struct pw_split *split;
	int	devices, chunks, nstages, layers;
	int	lo, hi;		/* a device's fewest and most layers */
	double	room;		/* bytes a device may use; INFINITY: no limit */
	struct pw_balance_cell *cell;	/* [devices * (hi + 1)] */
};

/* The pipeline stage of chunk C of device D. */
static int
pw_balance_stage(const struct pw_split *sp, int d, int c)
{
	if (sp->placement == PW_PLACE_V)
		return c == 0 ? d : 2 * sp->devices - 1 - d;
	return d + c * sp->devices;
}

/*
 * Shares N layers among device D's chunks, writing each chunk's count to
 * OUT[c]: evenly, the remainder to the chunks holding neither the
 * embedding nor the LM head first, then to the embedding's, the head's
 * last, so that the end stages (which carry the most beside their
 * layers) are the lightest.
 */
static void
pw_balance_share(const struct pw_split *sp, int d, int n, int *out)
{
	int v = sp->chunks, last = sp->devices * v - 1, extra = n % v;
	int pass, c, s;

	for (c = 0; c < v; c++)
		out[c] = n / v;
	/* Pass 0: plain chunks; 1: the embedding's; 2: the head's. */
	for (pass = 0; pass < 3 && extra > 0; pass++)
		for (c = 0; c < v && extra > 0; c++) {
			s = pw_balance_stage(sp, d, c);
			if ((pass == 0 && s != 0 && s != last) ||
			    (pass == 1 && s == 0 && s != last) ||
			    (pass == 2 && s == last)) {
				out[c]++;
				extra--;
			}
		}
	assert(extra == 0);
}

/* Activations device D keeps at once under 1F1B (one chunk) or
 * Megatron's interleaved schedule (its warm-up forwards plus one). */
static int
pw_balance_inflight(const struct pw_split *sp, int d)
{
	long p = sp->devices, v = sp->chunks, m = sp->microbatches, n;

	if (v == 1)
		n = p - d;
	else
		n = 2 * (p - d - 1) + (v - 1) * p + 1;
	if (n > v * m)
		n = v * m;
	return (int)n;
}

static struct pw_balance_cell *
pw_balance_at(const struct pw_balance *bl, int d, int n)
{
	return &bl->cell[(size_t)d * (size_t)(bl->hi + 1) + (size_t)n];
}

/* Fills every cell: pw_cost_stage on each chunk of each device. */
static void
pw_balance_fill(struct pw_balance *bl, const int *inflight)
{
	const struct pw_split *sp = bl->split;
	struct pw_balance_cell *cl;
	struct pw_stage st;
	double stat, act;
	int *share = pw_xcalloc((size_t)bl->chunks, sizeof *share);
	int d, n, c, k;

	for (d = 0; d < bl->devices; d++) {
		k = inflight != NULL ? inflight[d] : pw_balance_inflight(sp, d);
		for (n = bl->lo; n <= bl->hi; n++) {
			cl = pw_balance_at(bl, d, n);
			pw_balance_share(sp, d, n, share);
			cl->load = 0;
			cl->need = 0;
			act = 0;
			for (c = 0; c < bl->chunks; c++) {
				pw_cost_stage(bl->model, bl->hw, sp,
				    pw_balance_stage(sp, d, c), share[c], &st,
				    &stat);
				cl->load += st.f + st.b + st.w;
				cl->need += stat;
				if (st.act > act)
					act = st.act;
			}
			cl->need += k * act;
			cl->fits = cl->need <= bl->room;
		}
	}
	free(share);
}

/* The bytes a device may use under SP: its limit less the reserve. */
static double
pw_balance_room(const struct pw_split *sp, const struct pw_hardware *hw)
{
	double limit;

	if (sp->memory_limit >= DBL_MAX)
		return INFINITY;
	limit = sp->memory_limit > 0 ? sp->memory_limit : hw->memory;
	return limit - pw_split_reserve(sp, limit);
}

/*
 * One pass of the program.  With CAP < 0 it minimises the largest load
 * (VALUE[d][k] the least bottleneck of devices 0..d holding k layers),
 * else the sum of squared loads with every load at most CAP.  CHOICE
 * records each state's count; among ties the most layers win, so that
 * the later devices, which keep fewer activations in flight, take the
 * extra layers.  Returns the
 * final state's value, INFINITY when no counts fit.
 */
static double
pw_balance_pass(const struct pw_balance *bl, double cap, double *value,
    int *choice)
{
	const size_t w = (size_t)bl->layers + 1;
	const struct pw_balance_cell *cl;
	double prev, v;
	int d, k, n;

	for (d = 0; d < bl->devices; d++)
		for (k = 0; k <= bl->layers; k++) {
			value[d * w + k] = INFINITY;
			choice[d * w + k] = -1;
			for (n = bl->hi < k ? bl->hi : k; n >= bl->lo; n--) {
				cl = pw_balance_at(bl, d, n);
				if (!cl->fits || (cap >= 0 && cl->load > cap))
					continue;
				prev = d == 0 ? (k == n ? 0 : INFINITY) :
				    value[(d - 1) * w + (k - n)];
				if (!isfinite(prev))
					continue;
				v = cap < 0 ? fmax(prev, cl->load) :
				    prev + cl->load * cl->load;
				if (v < value[d * w + k]) {
					value[d * w + k] = v;
					choice[d * w + k] = n;
				}
			}
		}
	return value[(bl->devices - 1) * w + (size_t)bl->layers];
}

/* Why no counts fit: the first device that cannot hold even its fewest
 * layers, else the layers the devices' limits hold at most. */
static void
pw_balance_why(const struct pw_balance *bl, struct pw_error *err)
{
	const struct pw_balance_cell *cl;
	long most = 0;
	int d, n, fit;

	for (d = 0; d < bl->devices; d++) {
		cl = pw_balance_at(bl, d, bl->lo);
		if (!cl->fits) {
			pw_error_set(err, "split: device %d cannot hold even a "
			    "stage of one layer per chunk: it needs %.0f bytes, "
			    "its limit less the reserve is %.0f", d, cl->need,
			    bl->room);
			return;
		}
		fit = bl->lo;
		for (n = bl->lo; n <= bl->hi; n++)
			if (pw_balance_at(bl, d, n)->fits)
				fit = n;
		most += fit;
	}
	pw_error_set(err, "split: the devices' limits hold at most %ld of the "
	    "model's %d layers", most, bl->layers);
}

int
pw_split_balance(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, const int *inflight, int *layers,
    double *bottleneck, struct pw_error *err)
{
	struct pw_split own = *sp;
	struct pw_balance bl;
	double *value = NULL, best;
	int *choice = NULL, *share = NULL;
	int rc, d, c, k, n;
	size_t w;

	own.layers_per_stage = NULL;
	if ((rc = pw_cost_check(m, hw, &own, err)) != PW_OK)
		return rc;
	for (d = 0; inflight != NULL && d < sp->devices; d++)
		if (inflight[d] < 0) {
			pw_error_set(err, "split: inflight[%d]: must not be "
			    "negative (got %d)", d, inflight[d]);
			return PW_ERR_INPUT;
		}
	memset(&bl, 0, sizeof bl);
	bl.model = m;
	bl.hw = hw;
	bl.split = &own;
	bl.devices = own.devices;
	bl.chunks = own.chunks;
	bl.nstages = own.devices * own.chunks;
	bl.layers = m->layers;
	bl.lo = own.chunks;
	bl.hi = m->layers - (own.devices - 1) * own.chunks;
	bl.room = pw_balance_room(&own, hw);
	bl.cell = pw_xcalloc((size_t)bl.devices * (size_t)(bl.hi + 1),
	    sizeof *bl.cell);
	pw_balance_fill(&bl, inflight);

	w = (size_t)bl.layers + 1;
	value = pw_xreallocarray(NULL, (size_t)bl.devices * w, sizeof *value);
	choice = pw_xreallocarray(NULL, (size_t)bl.devices * w, sizeof *choice);
	best = pw_balance_pass(&bl, -1, value, choice);
	if (!isfinite(best)) {
		pw_balance_why(&bl, err);
		rc = PW_ERR_NOT_APPLICABLE;
		goto out;
	}
	/* The bottleneck is one cell's load, so the cap admits it exactly. */
	pw_balance_pass(&bl, best, value, choice);
	share = pw_xcalloc((size_t)bl.chunks, sizeof *share);
	for (d = bl.devices - 1, k = bl.layers; d >= 0; d--) {
		n = choice[d * w + k];
		assert(n >= bl.lo);
		pw_balance_share(&own, d, n, share);
		for (c = 0; c < bl.chunks; c++)
			layers[pw_balance_stage(&own, d, c)] = share[c];
		k -= n;
	}
	assert(k == 0);
	if (bottleneck != NULL)
		*bottleneck = best;
	rc = PW_OK;
out:
	free(share);
	free(choice);
	free(value);
	free(bl.cell);
	return rc;
}
