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

/* bf16 weight and gradient (2 + 2), fp32 master weight and Adam m, v (3 x 4). */
#define PW_BYTES_PER_PARAM	16.0

/* One layer, or the LM head, for one microbatch. */
struct pw_block {
	double	f, b, w;	/* FLOPs */
	double	act, hold;	/* bytes */
	double	params;
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

static int
pw_cost_check_model(const struct pw_model *m, struct pw_error *err)
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

static int
pw_cost_check_hardware(const struct pw_hardware *hw, bool offload,
    struct pw_error *err)
{
	const char *where = pw_cost_where(hw->name, "hardware");
	int rc;

	if ((rc = pw_cost_need_real(where, "peak_flops", hw->peak_flops, false,
	    err)) != PW_OK)
		return rc;
	if (!(hw->efficiency > 0 && hw->efficiency <= 1)) {
		pw_error_set(err, "%s: efficiency: must be in (0, 1] (got %g)",
		    where, hw->efficiency);
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

static int
pw_cost_check_split(const struct pw_split *sp, int layers, struct pw_error *err)
{
	long long nstages, sum = 0;
	int rc, s;

	if ((rc = pw_cost_need_int("split", "devices", sp->devices, 1,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_int("split", "chunks", sp->chunks, 1,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_int("split", "microbatches", sp->microbatches, 1,
	    err)) != PW_OK ||
	    (rc = pw_cost_need_real("split", "memory_limit", sp->memory_limit,
	    true, err)) != PW_OK)
		return rc;
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
	nstages = (long long)sp->devices * sp->chunks;
	if (nstages > layers) {
		pw_error_set(err, "split: %d layers cannot fill %lld stages (%d "
		    "devices x %d chunks) with at least one each", layers,
		    nstages, sp->devices, sp->chunks);
		return PW_ERR_INPUT;
	}
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
	if (sum != layers) {
		pw_error_set(err, "split: layers_per_stage: sums to %lld, the "
		    "model has %d layers", sum, layers);
		return PW_ERR_INPUT;
	}
	return PW_OK;
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

/* One transformer layer.  With h_kv = h * kv_heads / heads and f = ffn,
 * the linear layers take G = 4h + 4h_kv + 4f FLOPs per token and h (24h in
 * the standard case), attention 4s (forward) and 8s (backward). */
static struct pw_block
pw_cost_layer(const struct pw_model *m)
{
	const double s = m->seq, b = m->micro_batch, h = m->hidden;
	const double kv = m->kv_heads != 0 ? m->kv_heads : m->heads;
	const double hkv = h * kv / m->heads;
	const double f = m->ffn != 0 ? m->ffn : 4 * h;
	const double sb = s * b, sbh = s * b * h, linear = 4 * h + 4 * hkv + 4 * f;
	const double scores = pw_cost_scores(m);
	struct pw_block l;

	l.f = sbh * (linear + 4 * s);
	l.b = sbh * (linear + 8 * s);
	l.w = sbh * linear;
	l.params = 2 * h * h + 2 * h * hkv + 2 * h * f;
	switch (m->recompute) {
	case PW_RECOMPUTE_NONE:
		l.act = sb * (14 * h + 4 * hkv + 4 * f) + scores;
		break;
	case PW_RECOMPUTE_PIPEOFFLOAD:
		/* Less the LayerNorm outputs (4sbh), the GeLU output (2sbf)
		 * and the two dropout masks (2sbh). */
		l.act = sb * (8 * h + 4 * hkv + 2 * f) + scores;
		break;
	case PW_RECOMPUTE_FULL:
		l.act = 2 * sbh;
		l.b += l.f;
		break;
	}
	/* B frees the tensors only the input gradient needs (2sbh and the
	 * scores); with full recompute the checkpoint stays until W. */
	l.hold = m->recompute == PW_RECOMPUTE_FULL ? l.act : l.act - 2 * sbh -
	    scores;
	return l;
}

/* The untied LM head: a V x h matmul in F, B and W; it keeps its input
 * (bf16) and the logits in fp32 for the cross-entropy gradient. */
static struct pw_block
pw_cost_head(const struct pw_model *m)
{
	const double s = m->seq, b = m->micro_batch, h = m->hidden;
	const double V = m->vocab;
	struct pw_block hd;

	hd.f = hd.b = hd.w = 2 * s * b * h * V;
	hd.act = 2 * s * b * h + 4 * s * b * V;
	hd.hold = 2 * s * b * h;
	hd.params = V * h;
	return hd;
}

/* Layers of stage S of NSTAGES: the split's list, or an even share with
 * the remainder on the middle stages (the end stages carry the embedding
 * and the LM head). */
static int
pw_cost_layers(const struct pw_split *sp, int layers, int nstages, int s)
{
	int extra = layers % nstages, first = (nstages - extra) / 2;

	if (sp->layers_per_stage != NULL)
		return sp->layers_per_stage[s];
	return layers / nstages + (s >= first && s < first + extra);
}

static char *
pw_strdup_or_null(const char *s)
{
	return s != NULL ? pw_xstrdup(s) : NULL;
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
	o->model.name = pw_strdup_or_null(m->name);
	o->hardware = *hw;
	o->hardware.name = pw_strdup_or_null(hw->name);
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
	split.layers_per_stage = NULL;
	if (pw_cost_problem(&o->model, &o->hardware, &split, out, err) != PW_OK)
		return PW_ERR_NOT_APPLICABLE;
	return PW_OK;
}

int
pw_cost_problem(const struct pw_model *m, const struct pw_hardware *hw,
    const struct pw_split *sp, struct pw_problem **out, struct pw_error *err)
{
	struct pw_block layer, head;
	struct pw_problem *p = NULL;
	struct pw_stage *st;
	double rate, embedding, n, f, b, w, params;
	int rc, s, d, nstages, last;

	*out = NULL;
	/* The names become the problem's name and its origin's. */
	if ((rc = pw_text_check(m->name, "model", "name", err)) != PW_OK ||
	    (rc = pw_text_check(hw->name, "hardware", "name", err)) != PW_OK ||
	    (rc = pw_cost_check_model(m, err)) != PW_OK ||
	    (rc = pw_cost_check_hardware(hw, sp->offload, err)) != PW_OK ||
	    (rc = pw_cost_check_split(sp, m->layers, err)) != PW_OK)
		return rc;
	layer = pw_cost_layer(m);
	head = pw_cost_head(m);
	rate = hw->peak_flops * hw->efficiency;
	embedding = (double)m->vocab * m->hidden;

	nstages = sp->devices * sp->chunks;
	last = nstages - 1;
	if ((rc = pw_problem_check_counts(sp->devices, nstages,
	    sp->microbatches, "split", err)) != PW_OK)
		return rc;
	p = pw_problem_new(sp->devices, nstages, sp->microbatches);
	p->name = pw_xasprintf("%s-%dx%s", pw_cost_where(m->name, "model"),
	    sp->devices, pw_cost_where(hw->name, "hardware"));
	rc = sp->placement == PW_PLACE_V ? pw_problem_place_v(p, err) :
	    pw_problem_place_loop(p, err);
	assert(rc == PW_OK);	/* the split was checked */
	pw_problem_set_comm(p, 2.0 * m->seq * m->micro_batch * m->hidden /
	    hw->p2p_bandwidth + hw->p2p_latency);

	for (s = 0; s < nstages; s++) {
		st = &p->stages[s];
		n = pw_cost_layers(sp, m->layers, nstages, s);
		f = n * layer.f;
		b = n * layer.b;
		w = n * layer.w;
		st->act = n * layer.act;
		st->hold = n * layer.hold;
		params = n * layer.params;
		if (s == 0)
			params += embedding;
		if (s == last) {
			f += head.f;
			b += head.b;
			w += head.w;
			st->act += head.act;
			st->hold += head.hold;
			params += head.params;
		}
		st->f = f / rate;
		st->b = b / rate;
		st->w = w / rate;
		st->offload = st->act;
		p->memory[st->device].static_bytes += PW_BYTES_PER_PARAM * params;
	}
	for (d = 0; d < sp->devices; d++)
		p->memory[d].limit = sp->memory_limit >= DBL_MAX ? INFINITY :
		    sp->memory_limit > 0 ? sp->memory_limit : hw->memory;
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
