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
 * over layer boundaries.  The first pass finds the least bottleneck by
 * bisection (a device's load and memory grow with its layers, so under a
 * cap it takes its fewest up to some most, and counts exist exactly when
 * those sum to the layers); the second, a program, among the counts
 * that keep every device at or under it, the least sum of squared device
 * loads (a lexicographic objective does not decompose over prefixes, a
 * sum under a cap does).  docs/planner.md states the model and its
 * approximations.
 *
 * A device's cost depends on which of its stages carry the embedding and
 * the LM head and, for memory, on its activations in flight; so the table
 * holds one row per kind of device (holding stage 0, the last stage,
 * both, neither), and a device's cell is its kind's with its own
 * in-flight count: a row per device made 1,024 devices of a
 * 100,000-layer model cost 3 GB and most of 19 s.
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

/* What a kind of device costs when it holds N layers, its activations in
 * flight aside. */
struct pw_balance_row {
	double	load;		/* f + b + w of its stages, seconds */
	double	stat;		/* static bytes */
	double	act;		/* its largest stage's activation */
};

/* The kinds of device: bit 0, it holds stage 0; bit 1, the last stage. */
#define PW_BALANCE_KINDS	4

/* The table of every kind's cells and what the search knows of its
 * inputs. */
struct pw_balance {
	const struct pw_model *model;
	const struct pw_hardware *hw;
	const struct pw_split *split;
	int	devices, chunks, layers;
	int	lo, hi;		/* a device's fewest and most layers */
	double	room;		/* bytes a device may use; INFINITY: no limit */
	int	*kind;		/* [devices] */
	int	*inflight;	/* [devices] */
	/* [PW_BALANCE_KINDS * (hi + 1)]; a kind no device has is left 0 */
	struct pw_balance_row *row;
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

static struct pw_balance_row *
pw_balance_row(const struct pw_balance *bl, int kind, int n)
{
	return &bl->row[(size_t)kind * (size_t)(bl->hi + 1) + (size_t)n];
}

/* Device D's cell for N layers: its kind's with its activations. */
static struct pw_balance_cell
pw_balance_at(const struct pw_balance *bl, int d, int n)
{
	const struct pw_balance_row *rw = pw_balance_row(bl, bl->kind[d], n);
	struct pw_balance_cell cl;

	cl.load = rw->load;
	cl.need = rw->stat + bl->inflight[d] * rw->act;
	cl.fits = cl.need <= bl->room;
	return cl;
}

/* Sorts the devices into kinds, with their in-flight counts (INFLIGHT,
 * else 1F1B's), and fills the row of each kind some device has from the
 * first such device: pw_cost_stage on each of its chunks. */
static void
pw_balance_fill(struct pw_balance *bl, const int *inflight)
{
	const struct pw_split *sp = bl->split;
	const int nstages = bl->devices * bl->chunks;
	struct pw_balance_row *rw;
	struct pw_stage st;
	double stat;
	int *share = pw_xcalloc((size_t)nstages, sizeof *share);
	int first[PW_BALANCE_KINDS], d, n, s, c, kind;

	for (kind = 0; kind < PW_BALANCE_KINDS; kind++)
		first[kind] = -1;
	for (d = 0; d < bl->devices; d++) {
		bl->inflight[d] = inflight != NULL ? inflight[d] :
		    pw_balance_inflight(sp, d);
		for (kind = 0, c = 0; c < bl->chunks; c++) {
			s = pw_placement_stage(sp->placement, bl->devices,
			    nstages, d, c);
			kind |= (s == 0) | (s == nstages - 1) << 1;
		}
		bl->kind[d] = kind;
		if (first[kind] < 0)
			first[kind] = d;
	}
	for (kind = 0; kind < PW_BALANCE_KINDS; kind++) {
		if ((d = first[kind]) < 0)
			continue;
		for (n = bl->lo; n <= bl->hi; n++) {
			rw = pw_balance_row(bl, kind, n);
			pw_split_share(sp, d, n, share);
			for (c = 0; c < bl->chunks; c++) {
				s = pw_placement_stage(sp->placement,
				    bl->devices, nstages, d, c);
				pw_cost_stage(bl->model, bl->hw, sp, s,
				    share[s], &st, &stat);
				rw->load += st.f + st.b + st.w;
				rw->stat += stat;
				if (st.act > rw->act)
					rw->act = st.act;
			}
			/* What the bisection and pw_balance_max rest on: one
			 * more layer goes to one stage. */
			assert(n == bl->lo || (rw->load >= rw[-1].load &&
			    rw->stat >= rw[-1].stat && rw->act >= rw[-1].act));
		}
	}
	free(share);
}

/* The most layers device D holds with each of its stages within its room
 * and its load at most CAP; BL->lo - 1 when even its fewest do not.
 * Both grow with its layers, so the counts that qualify run from its
 * fewest up. */
static int
pw_balance_max(const struct pw_balance *bl, int d, double cap)
{
	struct pw_balance_cell cl;
	int lo = bl->lo - 1, hi = bl->hi, mid;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		cl = pw_balance_at(bl, d, mid);
		if (cl.fits && cl.load <= cap)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The most layers BL's devices hold with each within its room and its
 * load at most CAP, each at least its fewest; 0 when a device cannot
 * take even those (*SHORT, when not NULL, is then that device, else
 * -1).  Under CAP the devices can hold every layer exactly when this
 * reaches the layers: each takes any count from its fewest to its most. */
static long
pw_balance_sum(const struct pw_balance *bl, double cap, int *short_device)
{
	long sum = 0;
	int d, most;

	if (short_device != NULL)
		*short_device = -1;
	for (d = 0; d < bl->devices; d++) {
		if ((most = pw_balance_max(bl, d, cap)) < bl->lo) {
			if (short_device != NULL)
				*short_device = d;
			return 0;
		}
		sum += most;
	}
	return sum;
}

/* The least bottleneck, a cell's load: the least load under which the
 * devices hold every layer (pw_balance_sum, which a larger cap keeps),
 * by bisection over the loads of the cells that fit; INFINITY when none
 * does.  A kind's cell fits some device of the kind exactly when it fits
 * the one with the fewest activations in flight. */
static double
pw_balance_least_cap(const struct pw_balance *bl)
{
	size_t n = 0, lo, hi, mid;
	double *load, best = INFINITY;
	int fewest[PW_BALANCE_KINDS], kind, d, k;

	for (kind = 0; kind < PW_BALANCE_KINDS; kind++)
		fewest[kind] = -1;
	for (d = 0; d < bl->devices; d++)
		if (fewest[bl->kind[d]] < 0 || bl->inflight[d] <
		    bl->inflight[fewest[bl->kind[d]]])
			fewest[bl->kind[d]] = d;
	load = pw_xreallocarray(NULL, PW_BALANCE_KINDS *
	    (size_t)(bl->hi - bl->lo + 1), sizeof *load);
	for (kind = 0; kind < PW_BALANCE_KINDS; kind++)
		for (k = bl->lo; fewest[kind] >= 0 && k <= bl->hi; k++)
			if (pw_balance_at(bl, fewest[kind], k).fits)
				load[n++] = pw_balance_row(bl, kind, k)->load;
	qsort(load, n, sizeof *load, pw_double_cmp);
	if (n > 0 && pw_balance_sum(bl, load[n - 1], NULL) >= bl->layers) {
		for (lo = 0, hi = n - 1; lo < hi; ) {
			mid = lo + (hi - lo) / 2;
			if (pw_balance_sum(bl, load[mid], NULL) >= bl->layers)
				hi = mid;
			else
				lo = mid + 1;
		}
		best = load[lo];
	}
	free(load);
	return best;
}

/*
 * The counts under CAP (pw_balance_least_cap's) with the least sum of
 * squared loads, into LAYERS: a dynamic program over the devices in
 * order, its state the layers used so far, kept to the counts from
 * which every layer can still be placed (device d's most is
 * pw_balance_max's), so that its rows are narrow where the cap is tight.
 * Among ties the most layers win, so that the later devices, which keep
 * fewer activations in flight, take the extra layers.
 */
static void
pw_balance_spread(const struct pw_balance *bl, double cap, int *layers)
{
	const int P = bl->devices;
	long *klo = pw_xcalloc((size_t)P, sizeof *klo);
	long *khi = pw_xcalloc((size_t)P, sizeof *khi);
	size_t *row = pw_xcalloc((size_t)P + 1, sizeof *row);
	int *most = pw_xcalloc((size_t)P, sizeof *most), *choice;
	long sum = 0, after, k, nlo, nhi;
	double *value, prev, v, load;
	size_t at;
	int d, n;

	for (d = 0; d < P; d++)
		most[d] = pw_balance_max(bl, d, cap);
	for (d = 0; d < P; d++) {
		sum += most[d];
		khi[d] = sum < bl->layers - (long)(P - 1 - d) * bl->lo ? sum :
		    bl->layers - (long)(P - 1 - d) * bl->lo;
	}
	for (d = P - 1, after = 0; d >= 0; d--) {
		klo[d] = bl->layers - after > (long)(d + 1) * bl->lo ?
		    bl->layers - after : (long)(d + 1) * bl->lo;
		after += most[d];
		assert(klo[d] <= khi[d]);
	}
	for (d = 0; d < P; d++)
		row[d + 1] = row[d] + (size_t)(khi[d] - klo[d] + 1);
	value = pw_xreallocarray(NULL, row[P], sizeof *value);
	choice = pw_xreallocarray(NULL, row[P], sizeof *choice);
	for (d = 0; d < P; d++)
		for (k = klo[d]; k <= khi[d]; k++) {
			value[row[d] + (size_t)(k - klo[d])] = INFINITY;
			choice[row[d] + (size_t)(k - klo[d])] = -1;
			/* The counts whose rest, K - N, the row before holds
			 * (the first device holds all of K), largest first. */
			nhi = d == 0 ? k : k - klo[d - 1];
			nlo = d == 0 ? k : k - khi[d - 1];
			for (n = (int)(nhi < most[d] ? nhi : most[d]);
			    n >= nlo && n >= bl->lo; n--) {
				prev = d == 0 ? 0 : value[row[d - 1] +
				    (size_t)(k - n - klo[d - 1])];
				if (!isfinite(prev))
					continue;
				load = pw_balance_at(bl, d, n).load;
				v = prev + load * load;
				at = row[d] + (size_t)(k - klo[d]);
				if (v < value[at]) {
					value[at] = v;
					choice[at] = n;
				}
			}
		}
	for (d = P - 1, k = bl->layers; d >= 0; d--) {
		n = choice[row[d] + (size_t)(k - klo[d])];
		assert(n >= bl->lo);
		pw_split_share(bl->split, d, n, layers);
		k -= n;
	}
	assert(k == 0);
	free(choice);
	free(value);
	free(most);
	free(row);
	free(khi);
	free(klo);
}

/* Why no counts fit: the first device that cannot hold even its fewest
 * layers, else the layers the devices' limits hold at most. */
static void
pw_balance_why(const struct pw_balance *bl, struct pw_error *err)
{
	char need[32], room[32];
	long most;
	int d;

	most = pw_balance_sum(bl, INFINITY, &d);
	if (d >= 0) {
		pw_error_set(err, "split: device %d cannot hold even a stage of "
		    "one layer per chunk: it needs %s, its limit less the "
		    "reserve is %s", d, pw_fmt_bytes(need, sizeof need,
		    pw_balance_at(bl, d, bl->lo).need), pw_fmt_bytes(room,
		    sizeof room, bl->room));
		return;
	}
	pw_error_set(err, "split: the devices' limits hold at most %ld of the "
	    "model's %d layers", most, bl->layers);
}

/* BL's cells for M on HW split as SP (its layers_per_stage left out,
 * into OWN, which BL keeps) with INFLIGHT; pw_balance_free frees them. */
static int
pw_balance_init(struct pw_balance *bl, struct pw_split *own,
    const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, const int *inflight, struct pw_error *err)
{
	int rc, d;

	*own = *sp;
	own->layers_per_stage = NULL;
	memset(bl, 0, sizeof *bl);
	if ((rc = pw_cost_check(m, hw, own, err)) != PW_OK)
		return rc;
	for (d = 0; inflight != NULL && d < sp->devices; d++)
		if (inflight[d] < 0) {
			pw_error_set(err, "split: inflight[%d]: must not be "
			    "negative (got %d)", d, inflight[d]);
			return PW_ERR_INPUT;
		}
	bl->model = m;
	bl->hw = hw;
	bl->split = own;
	bl->devices = own->devices;
	bl->chunks = own->chunks;
	bl->layers = m->layers;
	bl->lo = own->chunks;
	bl->hi = m->layers - (own->devices - 1) * own->chunks;
	bl->room = pw_split_room(own, hw);
	bl->kind = pw_xcalloc((size_t)bl->devices, sizeof *bl->kind);
	bl->inflight = pw_xcalloc((size_t)bl->devices, sizeof *bl->inflight);
	bl->row = pw_xcalloc(PW_BALANCE_KINDS * (size_t)(bl->hi + 1),
	    sizeof *bl->row);
	pw_balance_fill(bl, inflight);
	return PW_OK;
}

static void
pw_balance_free(struct pw_balance *bl)
{
	free(bl->kind);
	free(bl->inflight);
	free(bl->row);
}

long
pw_split_most_layers(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, const int *inflight, double *need)
{
	struct pw_split own;
	struct pw_balance bl;
	struct pw_error err;
	long most = -1;
	int d = -1;

	if (pw_balance_init(&bl, &own, m, hw, sp, inflight, &err) == PW_OK)
		most = pw_balance_sum(&bl, INFINITY, &d);
	if (need != NULL)
		*need = d >= 0 ? pw_balance_at(&bl, d, bl.lo).need : 0;
	pw_balance_free(&bl);
	return most;
}

int
pw_split_balance(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, const int *inflight, int *layers,
    double *bottleneck, struct pw_error *err)
{
	struct pw_split own;
	struct pw_balance bl;
	double best;
	int rc;

	if ((rc = pw_balance_init(&bl, &own, m, hw, sp, inflight, err)) !=
	    PW_OK)
		goto out;
	if (!isfinite(best = pw_balance_least_cap(&bl))) {
		pw_balance_why(&bl, err);
		rc = PW_ERR_NOT_APPLICABLE;
		goto out;
	}
	pw_balance_spread(&bl, best, layers);
	if (bottleneck != NULL)
		*bottleneck = best;
	rc = PW_OK;
out:
	pw_balance_free(&bl);
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
