/*
 * workload.c - what the runtime computes: per layer an MLP block over a
 * microbatch of T tokens x H hidden (fp32, row-major),
 *
 *	h = X W1,  a = gelu(h),  y = X + a W2,
 *
 * its input gradient (B), its weight gradients (W), the last stage's
 * mean-squared-error loss against a seeded target, and the bytes each of
 * them keeps, which pw_workload_problem states so that the simulator
 * predicts the run's memory exactly.  docs/runtime.md, "The workload",
 * has every formula; the layout of what F keeps is below.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"

/* The CPU's scaled-down shape of a model (docs/runtime.md): an op of
 * 128 tokens through hidden 128 takes milliseconds. */
#define PW_WORKLOAD_CPU_HIDDEN	128
#define PW_WORKLOAD_CPU_TOKENS	128

/* The largest bytes of one stage, so that the problem's sums are exact
 * (doubles hold integers to 2^53, and a problem adds a few stages' bytes
 * up); each dimension and the layers of a stage are bounded by
 * pw_workload_validate (PW_WORKLOAD_MAX_DIM, PW_WORKLOAD_MAX_LAYERS), so
 * that every product below fits a size_t. */
#define PW_WORKLOAD_MAX_BYTES	0x1p50

/* The sizes of one stage; every product of them fits a size_t once
 * pw_workload_check has passed (PW_WORKLOAD_MAX_DIM, PW_WORKLOAD_MAX_LAYERS). */
struct pw_workload_shape {
	size_t	t, h, f, layers;
	bool	last;
};

struct pw_rt_stage {
	const struct pw_rt_backend_ops *be;
	void	*ctx;
	struct pw_rt_arena *arena;
	int	s;
	struct pw_workload_shape sh;
	uint64_t seed;
	float	*weights;	/* per layer W1 (h x f) then W2 (f x h) */
	float	*grads;		/* the same layout */
	float	*work;		/* pw_workload_work_floats: da at B, the target at F */
};

/*
 * What F keeps for one microbatch.  KEEP is what it produces (per layer
 * X, h, a; then, on the last stage, the last layer's output, which the
 * loss turns into its gradient): the offload bytes.  REST is the dy
 * slots B writes for W (all layers', less the last stage's last).  F
 * takes both at its start, one memory event of act bytes (the arena's
 * order ends it once both have moved); OFFLOAD gives KEEP back, RELOAD
 * takes it again, W gives both.
 */
struct pw_rt_saved {
	int	mb;
	float	*keep;		/* NULL while offloaded */
	float	*rest;
	float	*host;		/* KEEP's copy while offloaded */
};

/* What an empty tensor points at: never NULL, never read or written. */
static float pw_workload_empty;

/* ------------------------------------------------------------------ */
/* Sizes                                                               */

static struct pw_workload_shape
pw_workload_shape(const struct pw_workload *w, int s)
{
	struct pw_workload_shape sh;

	sh.t = (size_t)w->tokens;
	sh.h = (size_t)w->hidden;
	sh.f = (size_t)w->ffn;
	sh.layers = (size_t)w->layers[s];
	sh.last = s == w->nstages - 1;
	return sh;
}

static size_t
pw_workload_layer_keep(const struct pw_workload_shape *sh)
{
	return sh->t * (sh->h + 2 * sh->f);
}

/* F's output that waits on the host when offloaded: the offload bytes. */
static size_t
pw_workload_keep_floats(const struct pw_workload_shape *sh)
{
	return sh->layers * pw_workload_layer_keep(sh) + (sh->last ? sh->t * sh->h : 0);
}

static size_t
pw_workload_rest_floats(const struct pw_workload_shape *sh)
{
	return (sh->layers - (sh->last ? 1 : 0)) * sh->t * sh->h;
}

static size_t
pw_workload_param_floats(const struct pw_workload_shape *sh)
{
	return sh->layers * 2 * sh->h * sh->f;
}

/* The workspace: da (t x f) at B, and on the last stage the target (t x
 * h) at F, which never runs at once with a B of the same device. */
static size_t
pw_workload_work_floats(const struct pw_workload_shape *sh)
{
	return sh->t * (sh->last && sh->h > sh->f ? sh->h : sh->f);
}

/* The bytes of stage S that pw_workload_problem states: act (= hold) is
 * what F takes, offload what it produces, static the weights, the
 * gradients and the workspace. */
struct pw_workload_bytes {
	double	act, hold, offload, stat;
};

static struct pw_workload_bytes
pw_workload_bytes(const struct pw_workload *w, int s)
{
	struct pw_workload_shape sh = pw_workload_shape(w, s);
	struct pw_workload_bytes b;

	b.act = 4.0 * (double)(pw_workload_keep_floats(&sh) + pw_workload_rest_floats(&sh));
	b.hold = b.act;
	b.offload = 4.0 * (double)pw_workload_keep_floats(&sh);
	b.stat = 4.0 * (double)(2 * pw_workload_param_floats(&sh) + pw_workload_work_floats(&sh));
	return b;
}

size_t
pw_rt_io_floats(const struct pw_workload *w)
{
	return (size_t)w->tokens * (size_t)w->hidden;
}

size_t
pw_rt_grad_floats(const struct pw_workload *w, int s)
{
	struct pw_workload_shape sh = pw_workload_shape(w, s);

	return pw_workload_param_floats(&sh);
}

/* ------------------------------------------------------------------ */
/* Shapes                                                              */

/* Every value in range (pw_workload_validate) and every stage's bytes
 * within PW_WORKLOAD_MAX_BYTES. */
static int
pw_workload_check(const struct pw_workload *w, struct pw_error *err)
{
	struct pw_workload_bytes b;
	char keeps[32], most[32];
	int s, rc;

	if ((rc = pw_workload_validate(w, w->nstages, "workload", err)) != PW_OK)
		return rc;
	for (s = 0; s < w->nstages; s++) {
		b = pw_workload_bytes(w, s);
		if (b.act + b.stat > PW_WORKLOAD_MAX_BYTES) {
			pw_error_set(err, "workload: stage %d keeps %s, more "
			    "than %s", s, pw_fmt_bytes(keeps, sizeof keeps,
			    b.act + b.stat), pw_fmt_bytes(most, sizeof most,
			    PW_WORKLOAD_MAX_BYTES));
			return PW_ERR_INPUT;
		}
	}
	return PW_OK;
}

/* OUT (the caller's) becomes NSTAGES stages of the default shape. */
static void
pw_workload_defaults(int nstages, struct pw_workload *out)
{
	int s;

	memset(out, 0, sizeof *out);
	out->hidden = PW_WORKLOAD_HIDDEN;
	out->ffn = PW_WORKLOAD_FFN;
	out->tokens = PW_WORKLOAD_TOKENS;
	out->nstages = nstages;
	out->layers = pw_xcalloc((size_t)nstages, sizeof *out->layers);
	for (s = 0; s < nstages; s++)
		out->layers[s] = PW_WORKLOAD_LAYERS;
}

/* Reads one "key=value" ITEM of SPEC into W; SEEN marks the keys read. */
static int
pw_workload_parse_item(const char *item, struct pw_workload *w,
    unsigned *seen, struct pw_error *err)
{
	static const char *const keys[] = {
		"hidden", "ffn", "tokens", "layers"
	};
	const char *eq = strchr(item, '=');
	size_t klen = eq != NULL ? (size_t)(eq - item) : strlen(item);
	long min = 0, max = PW_WORKLOAD_MAX_DIM;
	int *field[4], i, v, s;

	field[0] = &w->hidden;
	field[1] = &w->ffn;
	field[2] = &w->tokens;
	field[3] = &v;
	for (i = 0; i < 4; i++)
		if (strlen(keys[i]) == klen &&
		    strncmp(item, keys[i], klen) == 0)
			break;
	if (i == 4) {
		pw_error_set(err, "workload: unknown key \"%.*s\" (hidden, "
		    "ffn, tokens or layers)", (int)klen, item);
		return PW_ERR_INPUT;
	}
	/* As an option given twice: the first value would be lost. */
	if ((*seen & 1u << i) != 0) {
		pw_error_set(err, "workload: %s is given twice", keys[i]);
		return PW_ERR_INPUT;
	}
	*seen |= 1u << i;
	if (i == 3) {
		min = 1;
		max = PW_WORKLOAD_MAX_LAYERS;
	}
	if (eq == NULL || !pw_parse_int(eq + 1, min, max, field[i])) {
		pw_error_set(err, "workload: %s: \"%s\" is not a whole number "
		    "from %ld to %ld", keys[i], eq != NULL ? eq + 1 : "", min,
		    max);
		return PW_ERR_INPUT;
	}
	if (i == 3)
		for (s = 0; s < w->nstages; s++)
			w->layers[s] = v;
	return PW_OK;
}

int
pw_workload_parse(const char *spec, const struct pw_workload *base,
    int nstages, struct pw_workload *out, struct pw_error *err)
{
	char *copy, *item, *next;
	unsigned seen = 0;
	int rc = PW_OK;

	if (nstages < 1) {
		pw_error_set(err, "workload: %d stages (at least 1)", nstages);
		return PW_ERR_INPUT;
	}
	if (base != NULL && base->nstages == nstages) {
		pw_workload_copy(out, base);
		out->scaled = false;
	} else {
		pw_workload_defaults(nstages, out);
		if (base != NULL) {
			out->hidden = base->hidden;
			out->ffn = base->ffn;
			out->tokens = base->tokens;
		}
	}
	copy = pw_xstrdup(spec);
	for (item = copy; item != NULL && rc == PW_OK; item = next) {
		if ((next = strchr(item, ',')) != NULL)
			*next++ = '\0';
		rc = pw_workload_parse_item(item, out, &seen, err);
	}
	free(copy);
	if (rc == PW_OK)
		rc = pw_workload_check(out, err);
	if (rc != PW_OK)
		pw_workload_clear(out);
	return rc;
}

/* The shape of ORIGIN's model: hidden, ffn (4h when unset) and the
 * tokens of a microbatch (sequence x micro-batch). */
static void
pw_workload_model_shape(const struct pw_origin *o, long *hidden, long *ffn,
    long *tokens)
{
	*hidden = o->model.hidden;
	*ffn = o->model.ffn != 0 ? o->model.ffn : 4L * o->model.hidden;
	*tokens = (long)o->model.seq * o->model.micro_batch;
}

/* V as an int, or just beyond the range (which pw_workload_check names) when it
 * is larger. */
static int
pw_workload_clamp(long v)
{
	return v <= PW_WORKLOAD_MAX_DIM ? (int)v : (int)PW_WORKLOAD_MAX_DIM + 1;
}

int
pw_workload_for(const struct pw_problem *p, const struct pw_workload *given,
    enum pw_rt_backend backend, struct pw_workload *out, struct pw_error *err)
{
	const struct pw_origin *o = p->origin;
	long h, f, t, hs;
	int s, rc;

	if (given != NULL) {
		if (given->nstages != p->nstages) {
			pw_error_set(err, "workload: %d stages, the problem "
			    "has %d", given->nstages, p->nstages);
			return PW_ERR_INPUT;
		}
		pw_workload_copy(out, given);
	} else {
		pw_workload_defaults(p->nstages, out);
		if (o != NULL) {
			pw_workload_model_shape(o, &h, &f, &t);
			for (s = 0; s < p->nstages; s++)
				out->layers[s] = pw_split_layers(&o->split,
				    o->model.layers, s);
			if (backend == PW_RT_CPU && h > 0 &&
			    (h > PW_WORKLOAD_CPU_HIDDEN || t > PW_WORKLOAD_CPU_TOKENS)) {
				/* Keep the ffn/hidden ratio, rounded. */
				hs = h < PW_WORKLOAD_CPU_HIDDEN ? h : PW_WORKLOAD_CPU_HIDDEN;
				f = (f * hs + h / 2) / h;
				h = hs;
				t = t < PW_WORKLOAD_CPU_TOKENS ? t : PW_WORKLOAD_CPU_TOKENS;
				out->scaled = true;
			}
			out->hidden = pw_workload_clamp(h);
			out->ffn = pw_workload_clamp(f);
			out->tokens = pw_workload_clamp(t);
		}
	}
	if ((rc = pw_workload_check(out, err)) != PW_OK)
		pw_workload_clear(out);
	return rc;
}

struct pw_problem *
pw_workload_problem(const struct pw_problem *p, const struct pw_workload *w,
    double limit, struct pw_error *err)
{
	struct pw_problem *q;
	struct pw_workload_bytes b;
	int s, d;

	if (w->nstages != p->nstages) {
		pw_error_set(err, "workload: %d stages, the problem has %d",
		    w->nstages, p->nstages);
		return NULL;
	}
	if (pw_workload_check(w, err) != PW_OK)
		return NULL;
	q = pw_problem_copy(p);
	/* Its bytes are the workload's, which the cost model would not
	 * build again from the origin: the stages stand as given. */
	pw_origin_free(q->origin);
	q->origin = NULL;
	for (d = 0; d < q->devices; d++) {
		q->memory[d].static_bytes = 0;
		q->memory[d].limit = limit;
	}
	for (s = 0; s < q->nstages; s++) {
		b = pw_workload_bytes(w, s);
		q->stages[s].act = b.act;
		q->stages[s].hold = b.hold;
		q->stages[s].offload = b.offload;
		q->memory[q->stages[s].device].static_bytes += b.stat;
	}
	if (pw_problem_validate(q, "workload", err) != PW_OK) {
		pw_problem_free(q);
		return NULL;
	}
	return q;
}

void
pw_workload_print(FILE *fp, const struct pw_workload *w,
    const struct pw_problem *from)
{
	const struct pw_origin *o = from != NULL ? from->origin : NULL;
	long h, f, t;
	int s;

	fputs("workload: ", fp);
	for (s = 1; s < w->nstages; s++)
		if (w->layers[s] != w->layers[0])
			break;
	if (s == w->nstages)
		fprintf(fp, "%d layer%s per stage", w->layers[0],
		    w->layers[0] == 1 ? "" : "s");
	else {
		for (s = 0; s < w->nstages; s++)
			fprintf(fp, "%s%d", s == 0 ? "" : "+", w->layers[s]);
		fputs(" layers over the stages", fp);
	}
	fprintf(fp, " of MLP blocks (hidden %d, ffn %d, %d tokens per "
	    "microbatch), fp32; attention is not part of the workload",
	    w->hidden, w->ffn, w->tokens);
	if (w->scaled && o != NULL) {
		pw_workload_model_shape(o, &h, &f, &t);
		fprintf(fp, "; scaled down from %s (hidden %ld, ffn %ld, %ld "
		    "tokens)", o->model.name, h, f, t);
	} else if (w->scaled)
		fputs("; scaled down from the problem's model", fp);
	fputs(w->scaled ? " so that an op takes milliseconds on the CPU\n" :
	    "\n", fp);
}

/* ------------------------------------------------------------------ */
/* Stages                                                              */

uint64_t
pw_rt_stream(uint64_t seed, const uint64_t *keys, size_t n)
{
	uint64_t st = seed;
	size_t i;

	for (i = 0; i < n; i++) {
		st ^= keys[i];
		st = pw_splitmix64(&st);
	}
	return st;
}

/* BYTES from the arena for WHAT; an empty tensor takes nothing. */
static float *
pw_workload_take(struct pw_rt_stage *st, size_t floats, const char *what,
    struct pw_error *err)
{
	if (floats == 0)
		return &pw_workload_empty;
	return pw_rt_arena_take(st->arena, floats * sizeof(float), what, err);
}

static void
pw_workload_give(struct pw_rt_stage *st, float *p, size_t floats)
{
	if (p != NULL && floats > 0)
		pw_rt_arena_give(st->arena, p, floats * sizeof(float));
}

/* Layer L's W1 and W2 in BASE (the weights or their gradients). */
static float *
pw_workload_w1(const struct pw_rt_stage *st, float *base, size_t l)
{
	return base + l * 2 * st->sh.h * st->sh.f;
}

static float *
pw_workload_w2(const struct pw_rt_stage *st, float *base, size_t l)
{
	return base + l * 2 * st->sh.h * st->sh.f + st->sh.h * st->sh.f;
}

/* PW_ERR_CANCELLED, saying so, once CANCEL (NULL: never) is set while
 * stage S opens; else PW_OK. */
static int
pw_workload_cancelled(const atomic_int *cancel, int s, struct pw_error *err)
{
	if (cancel == NULL || atomic_load(cancel) == 0)
		return PW_OK;
	pw_error_set(err, "cancelled while stage %d's weights were made", s);
	return PW_ERR_CANCELLED;
}

int
pw_rt_stage_open(const struct pw_workload *w, int s,
    const struct pw_rt_backend_ops *be, void *ctx, struct pw_rt_arena *arena,
    uint64_t seed, const atomic_int *cancel, struct pw_rt_stage **out,
    struct pw_error *err)
{
	struct pw_rt_stage *st;
	uint64_t keys[3];
	size_t l, n, hf;
	float h, f, depth = 0;
	int rc, k;

	*out = NULL;
	if ((rc = pw_workload_check(w, err)) != PW_OK)
		return rc;
	h = (float)w->hidden;
	f = (float)w->ffn;
	hf = (size_t)w->hidden * (size_t)w->ffn;
	for (k = 0; k < w->nstages; k++)
		depth += (float)w->layers[k];
	st = pw_xcalloc(1, sizeof *st);
	st->be = be;
	st->ctx = ctx;
	st->arena = arena;
	st->s = s;
	st->sh = pw_workload_shape(w, s);
	st->seed = seed;
	n = pw_rt_grad_floats(w, s);
	if ((st->weights = pw_workload_take(st, n, "weights", err)) == NULL ||
	    (st->grads = pw_workload_take(st, n, "gradients", err)) == NULL ||
	    (st->work = pw_workload_take(st, pw_workload_work_floats(&st->sh), "workspace",
	    err)) == NULL) {
		rc = PW_ERR_RUNTIME;
		goto fail;
	}
	/* Each matrix uniform in +-1/sqrt(fan_in) (h for W1, f for W2), W2
	 * also by 1/sqrt(the model's layers): each residual branch then adds
	 * its share of a bounded variance, where at 1/sqrt(f) alone the
	 * activations grew layer after layer and 24 layers gave a NaN loss. */
	keys[1] = (uint64_t)s;
	for (l = 0; l < st->sh.layers; l++) {
		keys[2] = l;
		keys[0] = PW_RT_W1;
		if ((rc = pw_workload_cancelled(cancel, s, err)) != PW_OK ||
		    (rc = be->fill(ctx, pw_workload_w1(st, st->weights, l), hf,
		    pw_rt_stream(seed, keys, 3), h > 0 ? 1.0f / sqrtf(h) : 0,
		    err)) != PW_OK)
			goto fail;
		keys[0] = PW_RT_W2;
		if ((rc = pw_workload_cancelled(cancel, s, err)) != PW_OK ||
		    (rc = be->fill(ctx, pw_workload_w2(st, st->weights, l), hf,
		    pw_rt_stream(seed, keys, 3), f > 0 ? 1.0f / sqrtf(f * depth) :
		    0,
		    err)) != PW_OK)
			goto fail;
	}
	if ((rc = pw_workload_cancelled(cancel, s, err)) != PW_OK ||
	    (rc = be->zero(ctx, st->grads, n, err)) != PW_OK)
		goto fail;
	*out = st;
	return PW_OK;
fail:
	pw_rt_stage_close(st);
	return rc;
}

void
pw_rt_stage_close(struct pw_rt_stage *st)
{
	size_t n;

	if (st == NULL)
		return;
	n = pw_workload_param_floats(&st->sh);
	pw_workload_give(st, st->weights, n);
	pw_workload_give(st, st->grads, n);
	pw_workload_give(st, st->work, pw_workload_work_floats(&st->sh));
	free(st);
}

/* Layer L's tensors in SV. */
static float *
pw_workload_x(const struct pw_rt_stage *st, const struct pw_rt_saved *sv, size_t l)
{
	return sv->keep + l * pw_workload_layer_keep(&st->sh);
}

static float *
pw_workload_h(const struct pw_rt_stage *st, const struct pw_rt_saved *sv, size_t l)
{
	return pw_workload_x(st, sv, l) + st->sh.t * st->sh.h;
}

static float *
pw_workload_a(const struct pw_rt_stage *st, const struct pw_rt_saved *sv, size_t l)
{
	return pw_workload_h(st, sv, l) + st->sh.t * st->sh.f;
}

/* The gradient of layer L's output: in REST, but the last stage's last
 * layer's ends KEEP (where F left the loss's gradient). */
static float *
pw_workload_dy(const struct pw_rt_stage *st, const struct pw_rt_saved *sv, size_t l)
{
	if (st->sh.last && l == st->sh.layers - 1)
		return sv->keep + st->sh.layers * pw_workload_layer_keep(&st->sh);
	return sv->rest + l * st->sh.t * st->sh.h;
}

/* "F(s,mb)" and the like, for the arena's messages. */
static void
pw_workload_what(char *buf, size_t len, const char *op, const struct pw_rt_stage *st,
    int mb)
{
	snprintf(buf, len, "%s(%d,%d)", op, st->s, mb);
}

/* Gives back every byte of SV and frees it: at W's end, or when a run
 * stops before W. */
void
pw_rt_saved_free(struct pw_rt_stage *st, struct pw_rt_saved *sv)
{
	size_t keep, rest;

	if (sv == NULL)
		return;
	keep = pw_workload_keep_floats(&st->sh);
	rest = pw_workload_rest_floats(&st->sh);
	pw_workload_give(st, sv->keep, keep);
	pw_workload_give(st, sv->rest, rest);
	if (sv->host != NULL && keep > 0)
		st->be->host_release(st->ctx, sv->host);
	free(sv);
}

/* C (M x N) = op(A) op(B) + BETA C, every matrix whole (its leading
 * dimension its width as stored). */
static int
pw_workload_mm(struct pw_rt_stage *st, bool ta, bool tb, size_t m, size_t n,
    size_t k, const float *a, const float *b, float beta, float *c,
    struct pw_error *err)
{
	return st->be->gemm(st->ctx, ta, tb, m, n, k, 1.0f, a, ta ? m : k, b,
	    tb ? k : n, beta, c, n, err);
}

int
pw_rt_forward(struct pw_rt_stage *st, int mb, const float *in, float *out,
    struct pw_rt_saved **saved, double *loss, struct pw_error *err)
{
	const struct pw_rt_backend_ops *be = st->be;
	size_t t = st->sh.t, h = st->sh.h, f = st->sh.f, l;
	struct pw_rt_saved *sv;
	uint64_t keys[2];
	char what[64];
	float *x, *y;
	double mbloss = 0;
	int rc;

	assert(st->sh.last ? out == NULL : out != NULL);
	assert(st->s == 0 ? in == NULL : in != NULL);
	*saved = NULL;
	pw_workload_what(what, sizeof what, "F", st, mb);
	sv = pw_xcalloc(1, sizeof *sv);
	sv->mb = mb;
	if ((sv->keep = pw_workload_take(st, pw_workload_keep_floats(&st->sh), what,
	    err)) == NULL ||
	    (sv->rest = pw_workload_take(st, pw_workload_rest_floats(&st->sh), what,
	    err)) == NULL) {
		pw_rt_saved_free(st, sv);
		return PW_ERR_RUNTIME;
	}
	keys[0] = PW_RT_INPUT;
	keys[1] = (uint64_t)mb;
	x = pw_workload_x(st, sv, 0);
	rc = in == NULL ? be->fill(st->ctx, x, t * h, pw_rt_stream(st->seed,
	    keys, 2), 1.0f, err) : be->copy(st->ctx, x, in, t * h, PW_RT_D2D,
	    err);
	for (l = 0; l < st->sh.layers && rc == PW_OK; l++) {
		x = pw_workload_x(st, sv, l);
		if (l + 1 < st->sh.layers)
			y = pw_workload_x(st, sv, l + 1);
		else
			y = st->sh.last ? pw_workload_dy(st, sv, l) : out;
		/* h = X W1, a = gelu(h), y = X + a W2. */
		if ((rc = pw_workload_mm(st, false, false, t, f, h, x, pw_workload_w1(st,
		    st->weights, l), 0.0f, pw_workload_h(st, sv, l), err)) != PW_OK ||
		    (rc = be->gelu(st->ctx, pw_workload_h(st, sv, l), pw_workload_a(st, sv, l),
		    t * f, err)) != PW_OK ||
		    (rc = be->copy(st->ctx, y, x, t * h, PW_RT_D2D,
		    err)) != PW_OK)
			break;
		rc = pw_workload_mm(st, false, false, t, h, f, pw_workload_a(st, sv, l), pw_workload_w2(st,
		    st->weights, l), 1.0f, y, err);
	}
	if (rc == PW_OK && st->sh.last) {
		keys[0] = PW_RT_TARGET;
		if ((rc = be->fill(st->ctx, st->work, t * h,
		    pw_rt_stream(st->seed, keys, 2), 1.0f, err)) == PW_OK)
			rc = be->loss(st->ctx, pw_workload_dy(st, sv, st->sh.layers - 1),
			    st->work, t * h, &mbloss, err);
	}
	if (rc != PW_OK) {
		pw_rt_saved_free(st, sv);
		return rc;
	}
	if (loss != NULL)
		*loss = mbloss;
	*saved = sv;
	return PW_OK;
}

int
pw_rt_backward_input(struct pw_rt_stage *st, struct pw_rt_saved *sv,
    const float *dout, float *din, struct pw_error *err)
{
	const struct pw_rt_backend_ops *be = st->be;
	size_t t = st->sh.t, h = st->sh.h, f = st->sh.f, l;
	float *dy, *dx;
	int rc = PW_OK;

	assert(st->sh.last ? dout == NULL : dout != NULL);
	if (!st->sh.last)
		rc = be->copy(st->ctx, pw_workload_dy(st, sv, st->sh.layers - 1), dout,
		    t * h, PW_RT_D2D, err);
	for (l = st->sh.layers; l-- > 0 && rc == PW_OK;) {
		dy = pw_workload_dy(st, sv, l);
		dx = l > 0 ? pw_workload_dy(st, sv, l - 1) : din;
		/* da = dy W2^T into the workspace; dh = da gelu'(h) over h. */
		if ((rc = pw_workload_mm(st, false, true, t, f, h, dy, pw_workload_w2(st,
		    st->weights, l), 0.0f, st->work, err)) != PW_OK ||
		    (rc = be->gelu_grad(st->ctx, pw_workload_h(st, sv, l), st->work,
		    t * f, err)) != PW_OK || dx == NULL)
			continue;
		/* dx = dh W1^T + dy: the residual's gradient first. */
		if ((rc = be->copy(st->ctx, dx, dy, t * h, PW_RT_D2D,
		    err)) == PW_OK)
			rc = pw_workload_mm(st, false, true, t, h, f, pw_workload_h(st, sv, l),
			    pw_workload_w1(st, st->weights, l), 1.0f, dx, err);
	}
	/* W needs all of it: act - hold is 0 and nothing is given back. */
	return rc;
}

int
pw_rt_backward_weight(struct pw_rt_stage *st, struct pw_rt_saved *sv,
    struct pw_error *err)
{
	size_t t = st->sh.t, h = st->sh.h, f = st->sh.f, l;
	int rc = PW_OK;

	for (l = 0; l < st->sh.layers && rc == PW_OK; l++) {
		/* dW1 += X^T dh, dW2 += a^T dy. */
		if ((rc = pw_workload_mm(st, true, false, h, f, t, pw_workload_x(st, sv, l),
		    pw_workload_h(st, sv, l), 1.0f, pw_workload_w1(st, st->grads, l),
		    err)) != PW_OK)
			break;
		rc = pw_workload_mm(st, true, false, f, h, t, pw_workload_a(st, sv, l), pw_workload_dy(st,
		    sv, l), 1.0f, pw_workload_w2(st, st->grads, l), err);
	}
	if (rc == PW_OK)
		pw_rt_saved_free(st, sv);
	return rc;
}

int
pw_rt_offload(struct pw_rt_stage *st, struct pw_rt_saved *sv,
    struct pw_error *err)
{
	size_t keep = pw_workload_keep_floats(&st->sh);
	char what[64], size[32];
	int rc;

	assert(sv->keep != NULL && sv->host == NULL);
	pw_workload_what(what, sizeof what, "OFFLOAD", st, sv->mb);
	if (keep == 0)
		sv->host = &pw_workload_empty;
	else if ((sv->host = st->be->host_alloc(st->ctx, keep *
	    sizeof(float))) == NULL) {
		pw_error_set(err, "%s: no host memory for %s", what,
		    pw_fmt_bytes(size, sizeof size, (double)(keep *
		    sizeof(float))));
		return PW_ERR_RUNTIME;
	}
	if ((rc = st->be->copy(st->ctx, sv->host, sv->keep, keep, PW_RT_D2H,
	    err)) != PW_OK)
		return rc;
	pw_workload_give(st, sv->keep, keep);
	sv->keep = NULL;
	return PW_OK;
}

int
pw_rt_reload(struct pw_rt_stage *st, struct pw_rt_saved *sv,
    struct pw_error *err)
{
	size_t keep = pw_workload_keep_floats(&st->sh);
	char what[64];
	int rc;

	assert(sv->keep == NULL && sv->host != NULL);
	pw_workload_what(what, sizeof what, "RELOAD", st, sv->mb);
	if ((sv->keep = pw_workload_take(st, keep, what, err)) == NULL)
		return PW_ERR_RUNTIME;
	if ((rc = st->be->copy(st->ctx, sv->keep, sv->host, keep, PW_RT_H2D,
	    err)) != PW_OK)
		return rc;
	if (keep > 0)
		st->be->host_release(st->ctx, sv->host);
	sv->host = NULL;
	return PW_OK;
}

int
pw_rt_stage_zero(struct pw_rt_stage *st, struct pw_error *err)
{
	return st->be->zero(st->ctx, st->grads, pw_workload_param_floats(&st->sh), err);
}

int
pw_rt_stage_step(struct pw_rt_stage *st, int m, struct pw_error *err)
{
	assert(m >= 1);
	return st->be->axpy(st->ctx, pw_workload_param_floats(&st->sh),
	    -PW_RT_LR / (float)m, st->grads, st->weights, err);
}

int
pw_rt_stage_grads(struct pw_rt_stage *st, float *host, struct pw_error *err)
{
	return st->be->copy(st->ctx, host, st->grads, pw_workload_param_floats(&st->sh),
	    PW_RT_D2H, err);
}

/* ------------------------------------------------------------------ */
/* The sequential computation                                          */

int
pw_rt_reference(const struct pw_workload *w, int m, int iterations,
    uint64_t seed, atomic_int *cancel, float **grads, double *loss,
    struct pw_error *err)
{
	const struct pw_rt_backend_ops *be = &pw_rt_cpu;
	struct pw_rt_stage **st;
	struct pw_rt_saved **sv;
	struct pw_rt_arena *arena = NULL;
	size_t io = pw_rt_io_floats(w);
	float *buf[2];
	double sum = 0, l;
	void *ctx = NULL;
	bool opened = false;
	int s, k, j, rc, ns = w->nstages;

	st = pw_xcalloc((size_t)ns, sizeof *st);
	sv = pw_xcalloc((size_t)ns, sizeof *sv);
	buf[0] = pw_xcalloc(io > 0 ? io : 1, sizeof(float));
	buf[1] = pw_xcalloc(io > 0 ? io : 1, sizeof(float));
	if ((rc = be->open(0, &ctx, err)) != PW_OK)
		goto out;
	opened = true;
	arena = pw_rt_arena_new(0, INFINITY, be, ctx);
	for (s = 0; s < ns && rc == PW_OK; s++)
		rc = pw_rt_stage_open(w, s, be, ctx, arena, seed, cancel,
		    &st[s], err);
	if (rc == PW_ERR_CANCELLED)
		pw_error_set(err, "cancelled during the gradient check");
	for (k = 0; k < iterations && rc == PW_OK; k++) {
		sum = 0;
		for (s = 0; s < ns && rc == PW_OK; s++)
			rc = pw_rt_stage_zero(st[s], err);
		for (j = 0; j < m && rc == PW_OK; j++) {
			if (cancel != NULL && atomic_load(cancel) != 0) {
				pw_error_set(err, "cancelled during the "
				    "gradient check");
				rc = PW_ERR_CANCELLED;
				break;
			}
			/* Stage s reads buf[(s+1) % 2] and writes buf[s % 2]
			 * forwards; backwards the other way round. */
			for (s = 0; s < ns && rc == PW_OK; s++) {
				l = 0;
				rc = pw_rt_forward(st[s], j, s > 0 ?
				    buf[(s + 1) % 2] : NULL, s < ns - 1 ?
				    buf[s % 2] : NULL, &sv[s], &l, err);
				sum += l;
			}
			for (s = ns - 1; s >= 0 && rc == PW_OK; s--) {
				rc = pw_rt_backward_input(st[s], sv[s], s < ns -
				    1 ? buf[s % 2] : NULL, s > 0 ?
				    buf[(s + 1) % 2] : NULL, err);
				if (rc == PW_OK &&
				    (rc = pw_rt_backward_weight(st[s], sv[s],
				    err)) == PW_OK)
					sv[s] = NULL;
			}
		}
		for (s = 0; s < ns && rc == PW_OK; s++)
			rc = pw_rt_stage_step(st[s], m, err);
	}
	for (s = 0; s < ns && rc == PW_OK; s++)
		rc = pw_rt_stage_grads(st[s], grads[s], err);
	if (rc == PW_OK)
		*loss = sum / m;
out:
	for (s = 0; s < ns; s++) {
		if (st[s] != NULL)
			pw_rt_saved_free(st[s], sv[s]);
		pw_rt_stage_close(st[s]);
	}
	if (arena != NULL)
		pw_rt_arena_free(arena);
	if (opened)
		be->close(ctx);
	free(buf[0]);
	free(buf[1]);
	free(st);
	free(sv);
	return rc;
}
