/*
 * balance.c - the partition search: how many layers each stage of a
 * split holds so that the busiest device is as light as it can be with
 * every device within its memory.
 *
 * The search is over the devices' layer counts: a device's compute and
 * memory depend only on how many layers it holds (its chunks share them
 * by one fixed rule, pw_split_share), so a dynamic program over the
 * devices in order, with the layers used so far as its state, is exact
 * for the model.  For one chunk per device that is the classic program
 * over layer boundaries.  It runs twice: the first pass finds the least
 * bottleneck, the second, among the counts that keep every device at or
 * under it, the least sum of squared device loads (a lexicographic
 * objective does not decompose over prefixes, a sum under a cap does).
 * docs/planner.md states the model and its approximations.
 */
#include <assert.h>
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
	int	devices, chunks, layers;
	int	lo, hi;		/* a device's fewest and most layers */
	double	room;		/* bytes a device may use; INFINITY: no limit */
	struct pw_balance_cell *cell;	/* [devices * (hi + 1)] */
};

/* Activations device D keeps at once under 1F1B (one chunk) or
 * Megatron's interleaved schedule: its warm-up forwards plus the one of
 * its first backward, at most every forward it runs. */
static int
pw_balance_inflight(const struct pw_split *sp, int d)
{
	long n = pw_warmup_forwards(sp->devices, sp->chunks,
	    sp->microbatches, d) + 1L;
	long most = (long)sp->chunks * sp->microbatches;

	return (int)(n < most ? n : most);
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
	const int nstages = bl->devices * bl->chunks;
	struct pw_balance_cell *cl;
	struct pw_stage st;
	double stat, act;
	int *share = pw_xcalloc((size_t)nstages, sizeof *share);
	int d, n, s, k;

	for (d = 0; d < bl->devices; d++) {
		k = inflight != NULL ? inflight[d] : pw_balance_inflight(sp, d);
		for (n = bl->lo; n <= bl->hi; n++) {
			cl = pw_balance_at(bl, d, n);
			pw_split_share(sp, d, n, share);
			cl->load = 0;
			cl->need = 0;
			act = 0;
			for (s = 0; s < nstages; s++) {
				if (pw_placement_device(sp->placement,
				    bl->devices, nstages, s) != d)
					continue;
				pw_cost_stage(bl->model, bl->hw, sp, s,
				    share[s], &st, &stat);
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
	char need[32], room[32];
	long most = 0;
	int d, n, fit;

	for (d = 0; d < bl->devices; d++) {
		cl = pw_balance_at(bl, d, bl->lo);
		if (!cl->fits) {
			pw_error_set(err, "split: device %d cannot hold even a "
			    "stage of one layer per chunk: it needs %s, its "
			    "limit less the reserve is %s", d,
			    pw_fmt_bytes(need, sizeof need, cl->need),
			    pw_fmt_bytes(room, sizeof room, bl->room));
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
	int *choice = NULL;
	int rc, d, k, n;
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
	bl.layers = m->layers;
	bl.lo = own.chunks;
	bl.hi = m->layers - (own.devices - 1) * own.chunks;
	bl.room = pw_split_room(&own, hw);
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
	for (d = bl.devices - 1, k = bl.layers; d >= 0; d--) {
		n = choice[d * w + k];
		assert(n >= bl.lo);
		pw_split_share(&own, d, n, layers);
		k -= n;
	}
	assert(k == 0);
	if (bottleneck != NULL)
		*bottleneck = best;
	rc = PW_OK;
out:
	free(choice);
	free(value);
	free(bl.cell);
	return rc;
}

/* A split's own layers pass pw_problem_validate, which asks for one
 * activation per device, so the second search finds a split for any
 * problem built from the model. */
int
pw_split_balance_fit(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, int *layers, double *bottleneck,
    struct pw_error *err)
{
	int *one, d, rc;

	if ((rc = pw_split_balance(m, hw, sp, NULL, layers, bottleneck,
	    err)) != PW_ERR_NOT_APPLICABLE)
		return rc;
	one = pw_xcalloc((size_t)sp->devices, sizeof *one);
	for (d = 0; d < sp->devices; d++)
		one[d] = 1;
	rc = pw_split_balance(m, hw, sp, one, layers, bottleneck, err);
	free(one);
	return rc;
}
