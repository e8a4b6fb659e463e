/*
 * cost.c - the transformer cost model: a model on some hardware, split into
 * stages, gives each stage's times and bytes and each device's static
 * memory.  docs/cost-model.md derives every formula below.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipewright.h"

/* Bytes per parameter: bf16 weight and gradient (2 + 2), and the
 * optimizer state ZeRO-1 shards, fp32 master weight and Adam m, v (3 x 4). */
#define PW_BYTES_WEIGHT_GRAD	4.0
#define PW_BYTES_OPTIMIZER	12.0

/* One layer, or the LM head, for one microbatch on one TP rank. */
struct pw_block {
	double	f, b, w;	/* FLOPs */
	double	act, hold;	/* bytes */
	double	params;
	double	f_reduce, b_reduce; /* all-reduces of 2sbh bytes in F, B */
};

/* Where an error is: the model's or the hardware's name, or "split". */
static const char *
pw_cost_where(const char *name, const char *fallback)
{
	return name != NULL ? name : fallback;
}

static int
pw_cost_need_int(const char *where, const char *field, int value, int min,
    struct pw_error *err)
{
	if (value >= min)
		return PW_OK;
	pw_error_set(err, "%s: %s: must be at least %d (got %d)", where, field,
	    min, value);
	return PW_ERR_INPUT;
}

/* A rate or size that must be positive; ZERO_OK also lets 0 through. */
static int
pw_cost_need_real(const char *where, const char *field, double value,
    bool zero_ok, struct pw_error *err)
{
	if (isfinite(value) && (value > 0 || (zero_ok && value == 0)))
		return PW_OK;
	pw_error_set(err, "%s: %s: must be a %s number (got %g)", where, field,
	    zero_ok ? "non-negative" : "positive", value);
	return PW_ERR_INPUT;
}

int
pw_model_check(const struct pw_model *m, struct pw_error *err)
{
	const char *where = pw_cost_where(m->name, "model");
	static const char *const field[] = { "layers", "hidden", "heads",
	    "kv_heads", "ffn", "seq", "vocab", "micro_batch" };
	static const int min[] = { 1, 1, 1, 0, 0, 1, 1, 1 };
	const int value[] = { m->layers, m->hidden, m->heads, m->kv_heads,
	    m->ffn, m->seq, m->vocab, m->micro_batch };
	size_t i;
	int rc;

	for (i = 0; i < sizeof value / sizeof value[0]; i++)
		if ((rc = pw_cost_need_int(where, field[i], value[i], min[i],
		    err)) != PW_OK)
			return rc;
	/* The largest models have a few hundred; the planner's split
	 * tables grow with devices x layers (8 devices of 10^8 layers held
	 * 18 GiB and ran minutes past any time limit). */
	if (m->layers > PW_MODEL_MAX_LAYERS) {
		pw_error_set(err, "%s: layers: at most %d (got %d)", where,
		    PW_MODEL_MAX_LAYERS, m->layers);
		return PW_ERR_INPUT;
	}
	if (m->hidden % m->heads != 0) {
		pw_error_set(err, "%s: heads: %d does not divide hidden %d",
		    where, m->heads, m->hidden);
		return PW_ERR_INPUT;
	}
	if (m->kv_heads != 0 && m->heads % m->kv_heads != 0) {
		pw_error_set(err, "%s: kv_heads: %d does not divide heads %d",
		    where, m->kv_heads, m->heads);
		return PW_ERR_INPUT;
	}
	if (m->recompute != PW_RECOMPUTE_NONE &&
	    m->recompute != PW_RECOMPUTE_PIPEOFFLOAD &&
	    m->recompute != PW_RECOMPUTE_FULL) {
		pw_error_set(err, "%s: recompute: unknown choice %d", where,
		    (int)m->recompute);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

int
pw_hardware_check(const struct pw_hardware *hw, bool offload,
    struct pw_error *err)
{
	const char *where = pw_cost_where(hw->name, "hardware");
	int rc;

	if ((rc = pw_cost_need_real(where, "peak_flops", hw->peak_flops, false,
	    err)) != PW_OK)
		return rc;
	if (!(hw->efficiency > 0 && hw->efficiency <= 1)) {
		/* In full: 1 + 2^-52 is no "1". */
		pw_error_set(err, "%s: efficiency: must be in (0, 1] "
		    "(got %.*g)", where, pw_exact_precision(hw->efficiency),
		    hw->efficiency);
		return PW_ERR_INPUT;
	}
	if ((rc = pw_cost_need_real(where, "memory", hw->memory, false,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_real(where, "p2p_bandwidth", hw->p2p_bandwidth,
	    false, err)) != PW_OK ||
	    (rc = pw_cost_need_real(where, "p2p_latency", hw->p2p_latency, true,
	    err)) != PW_OK)
		return rc;
	if (!offload)
		return PW_OK;
	if ((rc = pw_cost_need_real(where, "pcie_d2h", hw->pcie_d2h, false,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_real(where, "pcie_h2d", hw->pcie_h2d, false,
	    err)) != PW_OK)
		return rc;
	return pw_cost_need_real(where, "pcie_latency", hw->pcie_latency, true,
	    err);
}

int
pw_split_check_shape(const struct pw_model *m, const struct pw_split *sp,
    struct pw_error *err)
{
	long long nstages = (long long)sp->devices * sp->chunks;

	if (sp->placement != PW_PLACE_LOOP && sp->placement != PW_PLACE_V) {
		pw_error_set(err, "split: placement: unknown choice %d",
		    (int)sp->placement);
		return PW_ERR_INPUT;
	}
	if (sp->placement == PW_PLACE_V && sp->chunks != 2) {
		pw_error_set(err, "split: chunks: V placement needs 2 chunks per "
		    "device (got %d)", sp->chunks);
		return PW_ERR_INPUT;
	}
	/* Every stage holds a layer, which also bounds the stage count. */
	if (nstages <= m->layers)
		return PW_OK;
	pw_error_set(err, "split: %d layers cannot fill %lld stages (%d "
	    "device%s x %d chunk%s) with at least one each", m->layers,
	    nstages, sp->devices, sp->devices == 1 ? "" : "s", sp->chunks,
	    sp->chunks == 1 ? "" : "s");
	return PW_ERR_INPUT;
}

static int
pw_cost_check_split(const struct pw_split *sp, const struct pw_model *m,
    double limit, struct pw_error *err)
{
	long long nstages, sum = 0;
	char b1[32], b2[32];
	int rc, s, kv;

	if ((rc = pw_cost_need_int("split", "devices", sp->devices, 1,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_int("split", "chunks", sp->chunks, 1,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_int("split", "microbatches", sp->microbatches, 1,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_int("split", "tp", sp->tp, 0, err)) != PW_OK ||
	    (rc = pw_cost_need_int("split", "dp", sp->dp, 0, err)) != PW_OK ||
	    (rc = pw_cost_need_real("split", "memory_limit", sp->memory_limit,
	    true, err)) != PW_OK ||
	    (rc = pw_cost_need_real("split", "reserve_bytes", sp->reserve_bytes,
	    true, err)) != PW_OK)
		return rc;
	if (!(sp->reserve_fraction >= 0 && sp->reserve_fraction < 1)) {
		pw_error_set(err, "split: reserve_fraction: must be in [0, 1) "
		    "(got %g)", sp->reserve_fraction);
		return PW_ERR_INPUT;
	}
	if (isfinite(limit) && !(limit - pw_split_reserve(sp, limit) > 0)) {
		pw_error_set(err, "split: the reserve (%s) leaves nothing of "
		    "the limit of %s", pw_fmt_bytes(b1, sizeof b1,
		    pw_split_reserve(sp, limit)), pw_fmt_bytes(b2, sizeof b2,
		    limit));
		return PW_ERR_INPUT;
	}
	kv = m->kv_heads != 0 ? m->kv_heads : m->heads;
	if (sp->tp > 1 && m->heads % sp->tp != 0) {
		pw_error_set(err, "split: tp: %d does not divide the %d heads",
		    sp->tp, m->heads);
		return PW_ERR_INPUT;
	}
	if (sp->tp > 1 && kv % sp->tp != 0) {
		pw_error_set(err, "split: tp: %d does not divide the %d "
		    "key/value heads", sp->tp, kv);
		return PW_ERR_INPUT;
	}
	if ((rc = pw_split_check_shape(m, sp, err)) != PW_OK)
		return rc;
	nstages = (long long)sp->devices * sp->chunks;
	if ((rc = pw_problem_check_counts(sp->devices, (int)nstages,
	    sp->microbatches, "split", err)) != PW_OK)
		return rc;
	if (sp->layers_per_stage == NULL)
		return PW_OK;
	for (s = 0; s < nstages; s++) {
		if (sp->layers_per_stage[s] < 1) {
			pw_error_set(err, "split: layers_per_stage[%d]: must be at "
			    "least 1 (got %d)", s, sp->layers_per_stage[s]);
			return PW_ERR_INPUT;
		}
		sum += sp->layers_per_stage[s];
	}
	if (sum != m->layers) {
		pw_error_set(err, "split: layers_per_stage: sums to %lld, the "
		    "model has %d layers", sum, m->layers);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* The limit SP gives every device before its reserve: INFINITY for none. */
static double
pw_cost_limit(const struct pw_split *sp, const struct pw_hardware *hw)
{
	if (sp->memory_limit >= DBL_MAX)
		return INFINITY;
	return sp->memory_limit > 0 ? sp->memory_limit : hw->memory;
}

int
pw_cost_check(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, struct pw_error *err)
{
	int rc;

	/* The names become the problem's name and its origin's. */
	if ((rc = pw_text_check(m->name, "model", "name", err)) != PW_OK ||
	    (rc = pw_text_check(hw->name, "hardware", "name", err)) != PW_OK ||
	    (rc = pw_model_check(m, err)) != PW_OK ||
	    (rc = pw_hardware_check(hw, sp->offload, err)) != PW_OK)
		return rc;
	return pw_cost_check_split(sp, m, pw_cost_limit(sp, hw), err);
}

/* No limit has nothing to hold back. */
double
pw_split_reserve(const struct pw_split *sp, double limit)
{
	if (!isfinite(limit))
		return 0;
	return sp->reserve_bytes + sp->reserve_fraction * limit;
}

double
pw_split_room(const struct pw_split *sp, const struct pw_hardware *hw)
{
	double limit = pw_cost_limit(sp, hw);

	return limit - pw_split_reserve(sp, limit);
}

/* Bytes of the attention scores a layer keeps (s x s per head): none with
 * flash attention or full recompute; the softmax output (2 bytes) when
 * PipeOffload recomputes dropout; Korthikanti et al.'s 5 bytes otherwise. */
static double
pw_cost_scores(const struct pw_model *m)
{
	const double s = m->seq, b = m->micro_batch, a = m->heads;

	if (m->flash_attention || m->recompute == PW_RECOMPUTE_FULL)
		return 0;
	return (m->recompute == PW_RECOMPUTE_PIPEOFFLOAD ? 2 : 5) * a * s * s * b;
}

/*
 * One transformer layer on one of T tensor-parallel ranks.  With h_kv =
 * h * kv_heads / heads, f = ffn and k = 2 h x f matrices in the MLP (3
 * when gated), the linear layers take G = 4h + 4h_kv + 2kf FLOPs per
 * token and per unit of h (24h in the standard case), attention 4s
 * (forward) and 8s (backward).  TP divides the FLOPs, the weights and the
 * tensors inside its regions; the LayerNorms' inputs and outputs, the
 * dropout masks and the layer's input (10sbh) stay whole on every rank.
 */
static struct pw_block
pw_cost_layer(const struct pw_model *m, double t)
{
	const double s = m->seq, b = m->micro_batch, h = m->hidden;
	const double kv = m->kv_heads != 0 ? m->kv_heads : m->heads;
	const double hkv = h * kv / m->heads;
	const double f = m->ffn != 0 ? m->ffn : 4 * h;
	const double k = m->gated_mlp ? 3 : 2;
	const double sb = s * b, sbh = s * b * h, linear = 4 * h + 4 * hkv +
	    2 * k * f;
	/* Q, K, V, the attention output and the MLP's 2kf: GeLU's input and
	 * output, or SwiGLU's gate and up outputs and their product. */
	const double inner = sb * (4 * h + 4 * hkv + 2 * k * f);
	const double scores = pw_cost_scores(m);
	struct pw_block l;

	l.f = sbh * (linear + 4 * s) / t;
	l.b = sbh * (linear + 8 * s) / t;
	l.w = sbh * linear / t;
	l.params = (2 * h * h + 2 * h * hkv + k * h * f) / t;
	l.f_reduce = l.b_reduce = 2;
	switch (m->recompute) {
	case PW_RECOMPUTE_NONE:
		l.act = 10 * sbh + (inner + scores) / t;
		break;
	case PW_RECOMPUTE_PIPEOFFLOAD:
		/* Less the LayerNorm outputs (4sbh), the activation's output
		 * (2sbf) and the two dropout masks (2sbh). */
		l.act = 4 * sbh + (inner - 2 * sb * f + scores) / t;
		break;
	case PW_RECOMPUTE_FULL:
		l.act = 2 * sbh;
		l.b += l.f;
		l.b_reduce += l.f_reduce;
		break;
	}
	/* B frees the tensors only the input gradient needs (2sbh and the
	 * scores, inside the attention's TP region); with full recompute the
	 * checkpoint stays until W. */
	l.hold = m->recompute == PW_RECOMPUTE_FULL ? l.act : l.act -
	    (2 * sbh + scores) / t;
	return l;
}

/* The LM head, vocabulary-parallel over T ranks: a V x h matmul in F, B
 * and W; it keeps its input (bf16, whole) and its share of the logits in
 * fp32 for the cross-entropy gradient; B all-reduces its input's
 * gradient. */
static struct pw_block
pw_cost_head(const struct pw_model *m, double t)
{
	const double s = m->seq, b = m->micro_batch, h = m->hidden;
	const double V = m->vocab;
	struct pw_block hd;

	hd.f = hd.b = hd.w = 2 * s * b * h * V / t;
	hd.act = 2 * s * b * h + 4 * s * b * V / t;
	hd.hold = 2 * s * b * h;
	hd.params = V * h / t;
	hd.f_reduce = 0;
	hd.b_reduce = 1;
	return hd;
}

/* Seconds of one ring all-reduce of BYTES over T ranks: 2(T - 1) steps,
 * each moving BYTES / T over the p2p link after its latency. */
static double
pw_cost_allreduce(const struct pw_hardware *hw, double bytes, double t)
{
	return 2 * (t - 1) * (bytes / t / hw->p2p_bandwidth + hw->p2p_latency);
}

int
pw_split_layers(const struct pw_split *sp, int layers, int s)
{
	int nstages = sp->devices * sp->chunks, p = sp->devices;
	int extra = layers % nstages, first = (nstages - extra) / 2, d, more;

	if (sp->layers_per_stage != NULL)
		return sp->layers_per_stage[s];
	if (sp->placement != PW_PLACE_V)
		return layers / nstages + (s >= first && s < first + extra);
	/* V's middle stages share devices (p - 1 holds stages p - 1 and p),
	 * so the remainder goes by device: one each to devices p - 1 down to
	 * 0 (device 0, which holds the embedding and the head, last), then a
	 * second round.  A device's one more goes to its first chunk, as
	 * pw_split_share shares a device's layers. */
	d = s < p ? s : nstages - 1 - s;
	more = (p - 1 - d < extra) + (2 * p - 1 - d < extra);
	return layers / nstages + (more == 2 || (more == 1 && s < p));
}

/* The device of stage S under SP's placement. */
static int
pw_cost_device(const struct pw_split *sp, int s)
{
	return pw_placement_device(sp->placement, sp->devices, sp->devices *
	    sp->chunks, s);
}

/* Pass 0 of the share takes the plain stages, 1 stage 0, 2 the last. */
void
pw_split_share(const struct pw_split *sp, int d, int n, int *layers)
{
	const int nstages = sp->devices * sp->chunks;
	int s, k, extra = n % sp->chunks, pass;

	assert(n >= sp->chunks);
	for (pass = 0; pass < 3; pass++)
		for (k = 0; k < sp->chunks; k++) {
			s = pw_placement_stage(sp->placement, sp->devices,
			    nstages, d, k);
			if ((s == 0 ? 1 : s == nstages - 1 ? 2 : 0) != pass)
				continue;
			layers[s] = n / sp->chunks + (extra > 0);
			extra -= extra > 0;
		}
}

void
pw_cost_stage(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, int s, int layers, struct pw_stage *out,
    double *static_bytes)
{
	const double t = sp->tp > 1 ? sp->tp : 1, dp = sp->dp > 1 ? sp->dp : 1;
	const double rate = hw->peak_flops * hw->efficiency;
	const double sbh = (double)m->seq * m->micro_batch * m->hidden;
	const double reduce = pw_cost_allreduce(hw, 2 * sbh, t);
	const int last = sp->devices * sp->chunks - 1;
	struct pw_block layer = pw_cost_layer(m, t), head;
	double f, b, w, params, f_reduce, b_reduce;

	f = layers * layer.f;
	b = layers * layer.b;
	w = layers * layer.w;
	f_reduce = layers * layer.f_reduce;
	b_reduce = layers * layer.b_reduce;
	out->device = pw_cost_device(sp, s);
	out->act = layers * layer.act;
	out->hold = layers * layer.hold;
	params = layers * layer.params;
	if (s == 0) {
		/* The vocabulary-parallel lookup sums its ranks' rows. */
		params += (double)m->vocab * m->hidden / t;
		f_reduce += 1;
	}
	if (s == last) {
		head = pw_cost_head(m, t);
		f += head.f;
		b += head.b;
		w += head.w;
		f_reduce += head.f_reduce;
		b_reduce += head.b_reduce;
		out->act += head.act;
		out->hold += head.hold;
		/* Tied weights are one tensor only where the embedding's
		 * device also holds the head; elsewhere the head is a copy. */
		if (!m->tied_embeddings || pw_cost_device(sp, 0) != out->device)
			params += head.params;
	}
	out->f = f / rate + f_reduce * reduce;
	out->b = b / rate + b_reduce * reduce;
	out->w = w / rate;
	out->offload = out->act;
	out->comm = 2 * sbh / hw->p2p_bandwidth + hw->p2p_latency;
	*static_bytes = (PW_BYTES_WEIGHT_GRAD + PW_BYTES_OPTIMIZER / dp) *
	    params;
}

/* Returns an origin the caller owns, holding copies of all three. */
static struct pw_origin *
pw_origin_new(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp)
{
	struct pw_origin *o = pw_xcalloc(1, sizeof *o);
	size_t n = (size_t)sp->devices * (size_t)sp->chunks;
	int *layers = NULL;

	o->model = *m;
	o->model.name = pw_xstrdup(m->name);
	o->hardware = *hw;
	o->hardware.name = pw_xstrdup(hw->name);
	o->split = *sp;
	if (sp->layers_per_stage != NULL) {
		layers = pw_xreallocarray(NULL, n, sizeof *layers);
		memcpy(layers, sp->layers_per_stage, n * sizeof *layers);
	}
	o->split.layers_per_stage = layers;
	return o;
}

struct pw_origin *
pw_origin_copy(const struct pw_origin *o)
{
	if (o == NULL)
		return NULL;
	return pw_origin_new(&o->model, &o->hardware, &o->split);
}

void
pw_origin_free(struct pw_origin *o)
{
	if (o == NULL)
		return;
	/* The origin owns these; the structs share their types with the
	 * presets, whose strings are constant. */
	free((char *)o->model.name);
	free((char *)o->hardware.name);
	free((int *)o->split.layers_per_stage);
	free(o);
}

int
pw_problem_resplit(const struct pw_problem *p, enum pw_placement placement,
    int chunks, struct pw_problem **out, struct pw_error *err)
{
	struct pw_split split;
	const struct pw_origin *o = p->origin;
	int *layers = NULL, *total = NULL, rc = PW_ERR_NOT_APPLICABLE, s, d;
	int old = 0;

	*out = NULL;
	if (o == NULL) {
		pw_error_set(err, "its stages were given directly, so there is "
		    "no model to split again");
		return PW_ERR_NOT_APPLICABLE;
	}
	if (o->model.layers < o->split.devices * chunks) {
		pw_error_set(err, "%d layers cannot fill %d stages per device "
		    "on %d devices", o->model.layers, chunks, o->split.devices);
		return PW_ERR_NOT_APPLICABLE;
	}
	split = o->split;
	split.placement = placement;
	split.chunks = chunks;
	old = o->split.devices * o->split.chunks;
	total = pw_xcalloc((size_t)split.devices, sizeof *total);
	layers = pw_xcalloc((size_t)split.devices * (size_t)chunks,
	    sizeof *layers);
	for (s = 0; s < old; s++)
		total[pw_cost_device(&o->split, s)] += pw_split_layers(&o->split,
		    o->model.layers, s);
	for (d = 0; d < split.devices; d++) {
		if (total[d] < chunks) {
			pw_error_set(err, "device %d: %d stages need at least "
			    "%d layers (it holds %d)", d, chunks, chunks,
			    total[d]);
			goto out;
		}
		pw_split_share(&split, d, total[d], layers);
	}
	split.layers_per_stage = layers;
	if (pw_cost_problem(&o->model, &o->hardware, &split, out, err) ==
	    PW_OK) {
		/* The problem's own name (a script's), not the model's. */
		if (p->name != NULL) {
			free((*out)->name);
			(*out)->name = pw_xstrdup(p->name);
		}
		rc = PW_OK;
	}
out:
	free(total);
	free(layers);
	return rc;
}

int
pw_cost_problem(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, struct pw_problem **out, struct pw_error *err)
{
	struct pw_problem *p = NULL;
	double bytes, room;
	int rc, s, d, nstages;

	*out = NULL;
	if ((rc = pw_cost_check(m, hw, sp, err)) != PW_OK)
		return rc;
	nstages = sp->devices * sp->chunks;
	p = pw_problem_new(sp->devices, nstages, sp->microbatches);
	p->name = pw_xasprintf("%s-%dx%s", pw_cost_where(m->name, "model"),
	    sp->devices, pw_cost_where(hw->name, "hardware"));
	for (s = 0; s < nstages; s++) {
		pw_cost_stage(m, hw, sp, s, pw_split_layers(sp, m->layers, s),
		    &p->stages[s], &bytes);
		p->memory[p->stages[s].device].static_bytes += bytes;
	}
	p->comm = p->stages[0].comm;
	room = pw_split_room(sp, hw);
	for (d = 0; d < sp->devices; d++)
		p->memory[d].limit = room;
	if (sp->offload) {
		pw_problem_set_link(p, hw->pcie_d2h, hw->pcie_h2d,
		    hw->pcie_latency, true);
		for (d = 0; d < sp->devices; d++)
			p->link.group[d] = d / 2;
		p->link.ngroups = (sp->devices + 1) / 2;
	}

	if ((rc = pw_problem_validate(p, pw_cost_where(m->name, "model"),
	    err)) != PW_OK)
		goto out;
	p->origin = pw_origin_new(m, hw, sp);
	*out = p;
	p = NULL;
out:
	pw_problem_free(p);
	return rc;
}

double
pw_offload_ratio(int hidden, int seq, double compute_rate,
    double pcie_bandwidth)
{
	return 10.0 / (3.0 * (6.0 * hidden + seq)) * compute_rate /
	    pcie_bandwidth;
}
