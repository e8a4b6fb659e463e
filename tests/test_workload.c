/*
 * test_workload.c - the runtime's workload (runtime/workload.c) on the
 * CPU backend: the bytes its problem states, the arena's level after
 * each op against docs/model.md, gradients against a naive computation
 * in double precision, determinism, the sequential reference, the shape
 * of a model's workload and the parser's messages.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"
#include "tap.h"

/* A workload of NSTAGES stages (LAYERS each, NULL: one) the caller
 * clears. */
static struct pw_workload
work_of(int hidden, int ffn, int tokens, int nstages, const int *layers)
{
	struct pw_workload w;
	int s;

	memset(&w, 0, sizeof w);
	w.hidden = hidden;
	w.ffn = ffn;
	w.tokens = tokens;
	w.nstages = nstages;
	w.layers = pw_xcalloc((size_t)nstages, sizeof *w.layers);
	for (s = 0; s < nstages; s++)
		w.layers[s] = layers != NULL ? layers[s] : 1;
	return w;
}

/* Stage s on DEV[s], M microbatches, f = b = w = 1. */
static struct pw_problem *
problem_of(int devices, int nstages, const int *dev, int m)
{
	struct pw_problem *p = pw_problem_new(devices, nstages, m);
	int s;

	for (s = 0; s < nstages; s++) {
		p->stages[s].device = dev[s];
		p->stages[s].f = p->stages[s].b = p->stages[s].w = 1;
	}
	return p;
}

static void
test_bytes(void)
{
	static const int dev[] = { 0, 1, 0 }, lay[] = { 2, 3, 1 };
	struct pw_workload w = work_of(4, 6, 3, 3, lay);
	struct pw_problem *p = problem_of(2, 3, dev, 4), *q;
	struct pw_error err;

	q = pw_workload_problem(p, &w, 1e6, &err);
	if (!tap_ok(q != NULL, "the workload's problem of h 4, f 6, t 3"))
		tap_diag("%s", err.msg);
	else {
		/* act = 8 L t (h + f); offload = 4 L t (h + 2f) (+ 4 t h on
		 * the last stage); static = 4 (4 L h f + t max(f, h last)). */
		tap_int((long long)q->stages[0].act, 8 * 2 * 3 * 10, "stage 0 act");
		tap_int((long long)q->stages[0].hold, 480, "stage 0 hold = act");
		tap_int((long long)q->stages[0].offload, 4 * 2 * 3 * 16,
		    "stage 0 offload");
		tap_int((long long)q->stages[1].act, 8 * 3 * 3 * 10, "stage 1 act");
		tap_int((long long)q->stages[1].offload, 4 * 3 * 3 * 16,
		    "stage 1 offload");
		tap_int((long long)q->stages[2].act, 240, "stage 2 (last) act");
		tap_int((long long)q->stages[2].offload, 4 * (3 * 16 + 12),
		    "stage 2 (last) offload: its output too");
		/* Device 0: stages 0 and 2; device 1: stage 1. */
		tap_int((long long)q->memory[0].static_bytes,
		    4 * (4 * 2 * 24 + 18) + 4 * (4 * 1 * 24 + 18),
		    "device 0 static: weights, gradients, workspace of 0 and 2");
		tap_int((long long)q->memory[1].static_bytes, 4 * (4 * 3 * 24 + 18),
		    "device 1 static");
		tap_ok(q->memory[0].limit == 1e6 && q->memory[1].limit == 1e6,
		    "the limit on every device");
		tap_ok(q->stages[1].f == 1 && q->microbatches == 4 &&
		    q->origin == NULL, "times and microbatches kept, no origin");
	}
	pw_problem_free(q);
	pw_workload_clear(&w);

	/* The last stage's workspace holds the target when h > f. */
	w = work_of(8, 2, 5, 3, NULL);
	q = pw_workload_problem(p, &w, INFINITY, &err);
	if (tap_ok(q != NULL, "h 8, f 2, t 5")) {
		tap_int((long long)q->stages[2].act, 400, "last act");
		tap_int((long long)q->stages[2].offload, 400,
		    "last offload = act: one layer, nothing but its output left");
		tap_int((long long)q->memory[1].static_bytes, 4 * (4 * 16 + 5 * 2),
		    "a middle stage's workspace is t f");
		tap_int((long long)q->memory[0].static_bytes,
		    4 * (64 + 10) + 4 * (64 + 40), "the last's is t h");
	}
	pw_problem_free(q);
	pw_workload_clear(&w);

	/* No tokens: no activations, the weights still there. */
	w = work_of(4, 6, 0, 3, NULL);
	q = pw_workload_problem(p, &w, INFINITY, &err);
	if (tap_ok(q != NULL, "t 0"))
		tap_ok(q->stages[0].act == 0 && q->stages[2].offload == 0 &&
		    q->memory[1].static_bytes == 4 * 4 * 24,
		    "t 0: act 0, offload 0, static the weights and gradients");
	pw_problem_free(q);
	pw_workload_clear(&w);

	w = work_of(4, 6, 3, 2, NULL);
	tap_ok(pw_workload_problem(p, &w, INFINITY, &err) == NULL &&
	    strcmp(err.msg, "workload: 2 stages, the problem has 3") == 0,
	    "stages must match: %s", err.msg);
	pw_workload_clear(&w);
	w = work_of(4, 6, 3, 3, NULL);
	tap_ok(pw_workload_problem(p, &w, 1000, &err) == NULL &&
	    strstr(err.msg, "on device 0") != NULL,
	    "a limit below static + act is refused: %s", err.msg);
	pw_workload_clear(&w);
	pw_problem_free(p);
}

/* The arena's level after each op of one microbatch equals the model's. */
static void
test_levels(void)
{
	static const int dev[] = { 0, 1 }, lay[] = { 2, 2 };
	struct pw_workload w = work_of(5, 7, 3, 2, lay);
	struct pw_problem *p = problem_of(2, 2, dev, 1), *q;
	struct pw_rt_arena *a;
	struct pw_rt_stage *st;
	struct pw_rt_saved *sv;
	struct pw_stage *g;
	struct pw_error err;
	float *io = pw_xcalloc(15, sizeof *io);
	double loss, base;
	int s;

	q = pw_workload_problem(p, &w, INFINITY, &err);
	for (s = 1; s >= 0; s--) {
		g = &q->stages[s];
		base = q->memory[s].static_bytes;
		a = pw_rt_arena_new(s, INFINITY, &pw_rt_cpu, NULL);
		if (!tap_int(pw_rt_stage_open(&w, s, &pw_rt_cpu, NULL, a, 1,
		    NULL, &st, &err), PW_OK, "stage %d opens", s))
			continue;
		tap_ok(pw_rt_arena_level(a) == base, "stage %d: static %g after "
		    "open", s, pw_rt_arena_level(a));
		pw_rt_forward(st, 0, s > 0 ? io : NULL, s < 1 ? io : NULL, &sv,
		    &loss, &err);
		tap_ok(pw_rt_arena_level(a) == base + g->act, "stage %d: F "
		    "takes act", s);
		pw_rt_offload(st, sv, &err);
		tap_ok(pw_rt_arena_level(a) == base + g->act - g->offload,
		    "stage %d: OFFLOAD frees offload", s);
		pw_rt_reload(st, sv, &err);
		tap_ok(pw_rt_arena_level(a) == base + g->act, "stage %d: RELOAD "
		    "takes offload", s);
		pw_rt_backward_input(st, sv, s < 1 ? io : NULL, s > 0 ? io : NULL,
		    &err);
		tap_ok(pw_rt_arena_level(a) == base + g->hold, "stage %d: B "
		    "frees act - hold", s);
		pw_rt_backward_weight(st, sv, &err);
		tap_ok(pw_rt_arena_level(a) == base, "stage %d: W frees hold", s);
		tap_ok(pw_rt_arena_peak(a) == base + g->act, "stage %d: peak "
		    "static + act", s);
		pw_rt_stage_close(st);
		tap_ok(pw_rt_arena_level(a) == 0, "stage %d: close gives back "
		    "all", s);
		pw_rt_arena_free(a);
	}

	/* One byte short of static + act: F fails naming its op, and gives
	 * back what it took. */
	g = &q->stages[0];
	base = q->memory[0].static_bytes;
	a = pw_rt_arena_new(0, base + g->act - 1, &pw_rt_cpu, NULL);
	if (tap_int(pw_rt_stage_open(&w, 0, &pw_rt_cpu, NULL, a, 1, NULL,
	    &st, &err), PW_OK, "stage 0 opens under a tight limit")) {
		tap_int(pw_rt_forward(st, 3, NULL, io, &sv, &loss, &err),
		    PW_ERR_RUNTIME, "F beyond the limit fails");
		tap_ok(strstr(err.msg, "F(0,3)") != NULL && sv == NULL,
		    "its message names the op: %s", err.msg);
		tap_ok(pw_rt_arena_level(a) == base, "and it gave back what "
		    "it took");
		pw_rt_stage_close(st);
	}
	pw_rt_arena_free(a);
	free(io);
	pw_problem_free(q);
	pw_problem_free(p);
	pw_workload_clear(&w);
}

/* ------------------------------------------------------------------ */
/* The naive computation: double precision, triple loops, the seeds as
 * docs/runtime.md draws them (the streams pw_rt_stream derives).     */

static void
naive_fill(double *x, size_t n, uint64_t st, float scale)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = (double)(scale * (2.0f * ((float)(pw_splitmix64(&st) >>
		    40) * 0x1p-24f) - 1.0f));
}

static double
naive_gelu(double x, double *grad)
{
	double c = sqrt(2 / M_PI), u = c * (x + 0.044715 * x * x * x),
	    t = tanh(u);

	*grad = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c *
	    (1 + 3 * 0.044715 * x * x);
	return 0.5 * x * (1 + t);
}

/* C (M x N) = A (M x K) B (K x N) with either transposed as stored. */
static void
naive_mm(size_t m, size_t n, size_t k, const double *a, bool ta,
    const double *b, bool tb, double *c)
{
	size_t i, j, l;
	double sum;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			sum = 0;
			for (l = 0; l < k; l++)
				sum += (ta ? a[l * m + i] : a[i * k + l]) *
				    (tb ? b[j * k + l] : b[l * n + j]);
			c[i * n + j] = sum;
		}
}

/* One stage's layers for the naive computation. */
struct naive {
	size_t	t, h, f, layers;
	double	*w, *g;		/* per layer W1, W2 */
	double	*x, *hh, *a;	/* per layer, one microbatch */
};

/* The gradients of W's stages accumulated over M microbatches of one
 * iteration from SEED into G[s] (each pw_rt_grad_floats), and the mean
 * loss. */
static double
naive_run(const struct pw_workload *wk, int m, uint64_t seed, double **g)
{
	size_t t = (size_t)wk->tokens, h = (size_t)wk->hidden,
	    f = (size_t)wk->ffn, th = t * h, tf = t * f, hf = h * f, l, i;
	int ns = wk->nstages, s, j;
	struct naive *st = pw_xcalloc((size_t)ns, sizeof *st);
	float depth = 0;
	double *y = pw_xcalloc(th + 1, sizeof *y), *dy = pw_xcalloc(th + 1,
	    sizeof *dy), *tmp = pw_xcalloc(tf + hf + th + 1, sizeof *tmp), *d,
	    loss = 0, sum, gr;
	uint64_t keys[3];

	/* W2 is scaled by the model's layers too (docs/runtime.md). */
	for (s = 0; s < ns; s++)
		depth += (float)wk->layers[s];
	for (s = 0; s < ns; s++) {
		st[s].layers = (size_t)wk->layers[s];
		st[s].w = pw_xcalloc(st[s].layers * 2 * hf + 1, sizeof(double));
		st[s].g = g[s];
		memset(g[s], 0, st[s].layers * 2 * hf * sizeof(double));
		st[s].x = pw_xcalloc(st[s].layers * th + 1, sizeof(double));
		st[s].hh = pw_xcalloc(st[s].layers * tf + 1, sizeof(double));
		st[s].a = pw_xcalloc(st[s].layers * tf + 1, sizeof(double));
		for (l = 0; l < st[s].layers; l++) {
			keys[0] = PW_RT_W1;
			keys[1] = (uint64_t)s;
			keys[2] = l;
			naive_fill(st[s].w + l * 2 * hf, hf, pw_rt_stream(seed, keys,
			    3), 1.0f / sqrtf((float)h));
			keys[0] = PW_RT_W2;
			naive_fill(st[s].w + l * 2 * hf + hf, hf,
			    pw_rt_stream(seed, keys, 3), 1.0f / sqrtf((float)f *
			    depth));
		}
	}
	for (j = 0; j < m; j++) {
		keys[0] = PW_RT_INPUT;
		keys[1] = (uint64_t)j;
		naive_fill(y, th, pw_rt_stream(seed, keys, 2), 1.0f);
		for (s = 0; s < ns; s++)
			for (l = 0; l < st[s].layers; l++) {
				memcpy(st[s].x + l * th, y, th * sizeof *y);
				naive_mm(t, f, h, y, false, st[s].w + l * 2 * hf,
				    false, st[s].hh + l * tf);
				for (i = 0; i < tf; i++)
					st[s].a[l * tf + i] = naive_gelu(st[s].hh[l *
					    tf + i], &gr);
				naive_mm(t, h, f, st[s].a + l * tf, false, st[s].w +
				    l * 2 * hf + hf, false, tmp);
				for (i = 0; i < th; i++)
					y[i] += tmp[i];
			}
		keys[0] = PW_RT_TARGET;
		naive_fill(dy, th, pw_rt_stream(seed, keys, 2), 1.0f);
		for (sum = 0, i = 0; i < th; i++) {
			sum += (y[i] - dy[i]) * (y[i] - dy[i]);
			dy[i] = 2 * (y[i] - dy[i]) / (double)th;
		}
		loss += th > 0 ? sum / (double)th : 0;
		for (s = ns - 1; s >= 0; s--)
			for (l = st[s].layers; l-- > 0;) {
				d = st[s].g + l * 2 * hf;
				/* dW2 += a^T dy; da = dy W2^T; dh = da gelu'(h). */
				naive_mm(f, h, t, st[s].a + l * tf, true, dy, false,
				    tmp);
				for (i = 0; i < hf; i++)
					d[hf + i] += tmp[i];
				naive_mm(t, f, h, dy, false, st[s].w + l * 2 * hf +
				    hf, true, tmp);
				for (i = 0; i < tf; i++) {
					naive_gelu(st[s].hh[l * tf + i], &gr);
					tmp[i] *= gr;
				}
				/* dW1 += X^T dh; dx = dh W1^T + dy. */
				naive_mm(h, f, t, st[s].x + l * th, true, tmp, false,
				    tmp + tf);
				for (i = 0; i < hf; i++)
					d[i] += tmp[tf + i];
				naive_mm(t, h, f, tmp, false, st[s].w + l * 2 * hf,
				    true, tmp + tf);
				for (i = 0; i < th; i++)
					dy[i] += tmp[tf + i];
			}
	}
	for (s = 0; s < ns; s++) {
		free(st[s].w);
		free(st[s].x);
		free(st[s].hh);
		free(st[s].a);
	}
	free(st);
	free(y);
	free(dy);
	free(tmp);
	return loss / m;
}

/* The largest over W's stages of ||G - R|| / ||R||. */
static double
rel_error(const struct pw_workload *w, float **g, double **r)
{
	double num, den, e, worst = 0;
	size_t i;
	int s;

	for (s = 0; s < w->nstages; s++) {
		num = den = 0;
		for (i = 0; i < pw_rt_grad_floats(w, s); i++) {
			num += (g[s][i] - r[s][i]) * (g[s][i] - r[s][i]);
			den += r[s][i] * r[s][i];
		}
		e = den > 0 ? sqrt(num / den) : sqrt(num);
		worst = e > worst ? e : worst;
	}
	return worst;
}

/* Runs one iteration of W over M microbatches stage by stage: every F
 * (microbatch by microbatch), then every backward in reverse, the odd
 * microbatches offloaded and reloaded between.  Leaves the gradients in
 * G and returns the mean loss, or NAN on a failure. */
static double
staged_run(const struct pw_workload *w, int m, int iterations, uint64_t seed,
    float **g)
{
	int ns = w->nstages, s, j, k, rc = PW_OK;
	size_t io = pw_rt_io_floats(w) + 1;
	struct pw_rt_stage **st = pw_xcalloc((size_t)ns, sizeof *st);
	struct pw_rt_saved **sv = pw_xcalloc((size_t)(ns * m), sizeof *sv);
	float *buf = pw_xcalloc((size_t)(ns * m) * io, sizeof *buf);
	struct pw_rt_arena *a = pw_rt_arena_new(0, INFINITY, &pw_rt_cpu, NULL);
	struct pw_error err;
	double loss = 0, l;

	for (s = 0; s < ns && rc == PW_OK; s++)
		rc = pw_rt_stage_open(w, s, &pw_rt_cpu, NULL, a, seed, NULL,
		    &st[s], &err);
	for (k = 0; k < iterations && rc == PW_OK; k++) {
		loss = 0;
		for (s = 0; s < ns && rc == PW_OK; s++)
			rc = pw_rt_stage_zero(st[s], &err);
		/* buf[s m + j]: what stage s hands on for microbatch j. */
		for (j = 0; j < m && rc == PW_OK; j++)
			for (s = 0; s < ns && rc == PW_OK; s++) {
				l = 0;
				rc = pw_rt_forward(st[s], j, s > 0 ? buf + ((s - 1) *
				    m + j) * io : NULL, s < ns - 1 ? buf + (s * m +
				    j) * io : NULL, &sv[s * m + j], &l, &err);
				loss += l;
				if (rc == PW_OK && j % 2 == 1)
					rc = pw_rt_offload(st[s], sv[s * m + j], &err);
			}
		for (j = m - 1; j >= 0 && rc == PW_OK; j--)
			for (s = ns - 1; s >= 0 && rc == PW_OK; s--) {
				if (j % 2 == 1 && (rc = pw_rt_reload(st[s], sv[s *
				    m + j], &err)) != PW_OK)
					break;
				rc = pw_rt_backward_input(st[s], sv[s * m + j], s <
				    ns - 1 ? buf + (s * m + j) * io : NULL, s > 0 ?
				    buf + ((s - 1) * m + j) * io : NULL, &err);
				if (rc == PW_OK)
					rc = pw_rt_backward_weight(st[s], sv[s * m +
					    j], &err);
			}
		for (s = 0; s < ns && rc == PW_OK; s++)
			rc = pw_rt_stage_step(st[s], m, &err);
	}
	for (s = 0; s < ns && rc == PW_OK; s++)
		rc = pw_rt_stage_grads(st[s], g[s], &err);
	if (rc != PW_OK)
		tap_diag("staged run: %s", err.msg);
	for (s = 0; s < ns; s++)
		pw_rt_stage_close(st[s]);
	pw_rt_arena_free(a);
	free(st);
	free(sv);
	free(buf);
	return rc == PW_OK ? loss / m : NAN;
}

static float **
grads_new(const struct pw_workload *w)
{
	float **g = pw_xcalloc((size_t)w->nstages, sizeof *g);
	int s;

	for (s = 0; s < w->nstages; s++)
		g[s] = pw_xcalloc(pw_rt_grad_floats(w, s) + 1, sizeof **g);
	return g;
}

static void
grads_free(const struct pw_workload *w, float **g)
{
	int s;

	for (s = 0; s < w->nstages; s++)
		free(g[s]);
	free(g);
}

static void
test_gradients(void)
{
	static const int lay[] = { 2, 1, 3 };
	struct pw_workload w = work_of(6, 10, 5, 3, lay);
	float **g = grads_new(&w), **r = grads_new(&w);
	double **ng = pw_xcalloc(3, sizeof *ng), loss, nloss, rloss, e;
	struct pw_error err;
	size_t i;
	int s;

	for (s = 0; s < 3; s++)
		ng[s] = pw_xcalloc(pw_rt_grad_floats(&w, s) + 1, sizeof **ng);
	nloss = naive_run(&w, 4, 7, ng);
	loss = staged_run(&w, 4, 1, 7, g);
	e = rel_error(&w, g, ng);
	tap_ok(e < 1e-5, "gradients against the naive "
	    "double computation: relative error %.3g", e);
	tap_ok(fabs(loss - nloss) / nloss < 1e-5, "loss %.9g against %.9g",
	    loss, nloss);
	tap_ok(nloss > 0.1, "the loss is not trivially small (%g)", nloss);

	/* The reference runs microbatches in order without offloading: the
	 * same numbers but for the order of their sums. */
	tap_int(pw_rt_reference(&w, 4, 3, 7, NULL, r, &rloss, &err), PW_OK,
	    "the reference runs");
	loss = staged_run(&w, 4, 3, 7, g);
	for (s = 0; s < 3; s++)
		for (i = 0; i < pw_rt_grad_floats(&w, s); i++)
			ng[s][i] = r[s][i];
	e = rel_error(&w, g, ng);
	tap_ok(e < 1e-5, "3 iterations with steps: "
	    "the reference against stage-by-stage calls, relative error %.3g",
	    e);
	tap_ok(fabs(loss - rloss) / rloss < 1e-5, "their last loss %.9g "
	    "against %.9g", loss, rloss);
	tap_ok(rloss < nloss, "the steps lower the loss (%g, first %g)", rloss,
	    nloss);
	for (s = 0; s < 3; s++)
		free(ng[s]);
	free(ng);
	grads_free(&w, g);
	grads_free(&w, r);
	pw_workload_clear(&w);
}

static void
test_determinism(void)
{
	static const int lay[] = { 1, 2 };
	struct pw_workload w = work_of(8, 12, 4, 2, lay);
	float **a = grads_new(&w), **b = grads_new(&w);
	double la, lb;
	struct pw_error err;
	size_t n0 = pw_rt_grad_floats(&w, 0) * sizeof(float),
	    n1 = pw_rt_grad_floats(&w, 1) * sizeof(float);

	pw_rt_reference(&w, 3, 2, 42, NULL, a, &la, &err);
	pw_rt_reference(&w, 3, 2, 42, NULL, b, &lb, &err);
	tap_ok(memcmp(a[0], b[0], n0) == 0 && memcmp(a[1], b[1], n1) == 0 &&
	    la == lb, "same seed: the same numbers");
	pw_rt_reference(&w, 3, 2, 43, NULL, b, &lb, &err);
	tap_ok(memcmp(a[0], b[0], n0) != 0 && memcmp(a[1], b[1], n1) != 0 &&
	    la != lb, "another seed: other numbers");
	grads_free(&w, a);
	grads_free(&w, b);
	pw_workload_clear(&w);

	/* A cancel already set: refused before the first weights are made,
	 * saying what was cancelled. */
	{
		atomic_int cancel = 1;

		w = work_of(8, 12, 4, 2, lay);
		a = grads_new(&w);
		tap_int(pw_rt_reference(&w, 3, 2, 42, &cancel, a, &la, &err),
		    PW_ERR_CANCELLED, "a set cancel stops the gradient check");
		tap_str(err.msg, "cancelled during the gradient check",
		    "it says so");
		grads_free(&w, a);
		pw_workload_clear(&w);
	}

	/* No tokens: zero-size GEMMs, loss 0, gradients 0. */
	w = work_of(8, 12, 0, 2, lay);
	a = grads_new(&w);
	tap_int(pw_rt_reference(&w, 2, 1, 1, NULL, a, &la, &err), PW_OK,
	    "t 0 runs");
	tap_ok(la == 0 && a[0][0] == 0 && a[1][5] == 0, "t 0: loss 0, "
	    "gradients 0");
	grads_free(&w, a);
	pw_workload_clear(&w);

	/* No ffn: every block is the identity (GEMMs of no inner terms), so
	 * the loss is that of the input against the target, both uniform in
	 * [-1, 1): about 2/3 over 4 x 8 numbers. */
	w = work_of(8, 0, 4, 2, lay);
	a = grads_new(&w);
	tap_int(pw_rt_reference(&w, 2, 1, 1, NULL, a, &la, &err), PW_OK,
	    "f 0 runs");
	tap_ok(la > 0.3 && la < 1.1, "f 0: the loss of the input itself "
	    "(%g)", la);
	grads_free(&w, a);
	pw_workload_clear(&w);
	w = work_of(0, 12, 4, 2, lay);
	a = grads_new(&w);
	tap_ok(pw_rt_reference(&w, 2, 1, 1, NULL, a, &la, &err) == PW_OK && la == 0,
	    "h 0: runs, loss 0");
	grads_free(&w, a);
	pw_workload_clear(&w);
}

static void
parse_bad(const char *spec, const char *want)
{
	struct pw_workload w;
	struct pw_error err;

	tap_int(pw_workload_parse(spec, NULL, 2, &w, &err), PW_ERR_INPUT,
	    "\"%s\" is refused", spec);
	tap_str(err.msg, want, "\"%s\": its message", spec);
}

static void
test_parse(void)
{
	struct pw_workload w, v;
	struct pw_error err;

	if (tap_int(pw_workload_parse("hidden=16,layers=3", NULL, 2, &w,
	    &err), PW_OK, "hidden=16,layers=3"))
		tap_ok(w.hidden == 16 && w.ffn == PW_WORKLOAD_FFN && w.tokens ==
		    PW_WORKLOAD_TOKENS && w.nstages == 2 && w.layers[0] == 3 &&
		    w.layers[1] == 3 && !w.scaled, "the rest are the defaults");
	if (tap_int(pw_workload_parse("tokens=0", &w, 2, &v, &err), PW_OK,
	    "tokens=0 on a base"))
		tap_ok(v.hidden == 16 && v.tokens == 0 && v.layers[1] == 3,
		    "the rest from the base");
	pw_workload_clear(&v);
	pw_workload_clear(&w);
	parse_bad("width=3", "workload: unknown key \"width\" (hidden, ffn, "
	    "tokens or layers)");
	parse_bad("hidden=-1", "workload: hidden: \"-1\" is not a whole number "
	    "from 0 to 1048576");
	parse_bad("ffn=2x", "workload: ffn: \"2x\" is not a whole number from "
	    "0 to 1048576");
	parse_bad("tokens", "workload: tokens: \"\" is not a whole number from "
	    "0 to 1048576");
	parse_bad("layers=0", "workload: layers: \"0\" is not a whole number "
	    "from 1 to 4096");
	parse_bad("hidden=8,,ffn=2", "workload: unknown key \"\" (hidden, ffn, "
	    "tokens or layers)");
	parse_bad("hidden=8,tokens=4,hidden=16", "workload: hidden is given "
	    "twice");
	/* 8 L t (h + f) + 4 (4 L h f + t f) at 2^18 and L = 4096. */
	parse_bad("hidden=262144,ffn=262144,tokens=262144,layers=4096",
	    "workload: stage 0 keeps 8192 TiB, more than 1024 TiB");
}

/* What pw_workload_print writes of W made for FROM is WANT. */
static void
print_is(const struct pw_workload *w, const struct pw_problem *from,
    const char *want, const char *name)
{
	char *text = NULL;
	size_t len;
	FILE *fp = open_memstream(&text, &len);

	pw_workload_print(fp, w, from);
	fclose(fp);
	tap_str(text, want, "%s", name);
	free(text);
}

static void
test_shape(void)
{
	const struct pw_model *m = pw_model_find("llama3-8b");
	const struct pw_hardware *hw = pw_hardware_find("H100-SXM");
	struct pw_split sp = { .devices = 4, .chunks = 1,
	    .placement = PW_PLACE_LOOP, .microbatches = 8 };
	struct pw_problem *p = NULL, *q;
	struct pw_workload w, given;
	struct pw_error err;

	if (!tap_int(pw_cost_problem(m, hw, &sp, &p, &err), PW_OK,
	    "llama3-8b on 4 H100-SXM"))
		return;
	if (tap_int(pw_workload_for(p, NULL, PW_RT_CPU, &w, &err), PW_OK,
	    "its CPU workload")) {
		tap_ok(w.hidden == 128 && w.ffn == 448 && w.tokens == 128 &&
		    w.scaled && w.nstages == 4 && w.layers[0] == 8 &&
		    w.layers[3] == 8, "hidden 4096 -> 128, ffn 14336 -> 448 "
		    "(ratio 3.5 kept), 8192 tokens -> 128, 8 layers per stage, "
		    "scaled");
		print_is(&w, p, "workload: 8 layers per stage of MLP blocks "
		    "(hidden 128, ffn 448, 128 tokens per microbatch), fp32; "
		    "attention is not part of the workload; scaled down from "
		    "llama3-8b (hidden 4096, ffn 14336, 8192 tokens) so that an "
		    "op takes milliseconds on the CPU\n", "what it prints");
		w.layers[1] = 7;
		print_is(&w, NULL, "workload: 8+7+8+8 layers over the stages of "
		    "MLP blocks (hidden 128, ffn 448, 128 tokens per microbatch), "
		    "fp32; attention is not part of the workload; scaled down "
		    "from the problem's model so that an op takes milliseconds "
		    "on the CPU\n", "uneven layers, the model not known");
		pw_workload_clear(&w);
	}
	if (tap_int(pw_workload_for(p, NULL, PW_RT_CUDA, &w, &err), PW_OK,
	    "its CUDA workload"))
		tap_ok(w.hidden == 4096 && w.ffn == 14336 && w.tokens == 8192 &&
		    !w.scaled, "CUDA keeps the model's sizes");
	pw_workload_clear(&w);
	given = work_of(3, 4, 5, 4, NULL);
	if (tap_int(pw_workload_for(p, &given, PW_RT_CPU, &w, &err), PW_OK,
	    "a given workload"))
		tap_ok(w.hidden == 3 && w.tokens == 5 && !w.scaled,
		    "a given workload wins");
	pw_workload_clear(&w);
	pw_workload_clear(&given);
	given = work_of(3, 4, 5, 2, NULL);
	tap_int(pw_workload_for(p, &given, PW_RT_CPU, &w, &err), PW_ERR_INPUT,
	    "a given workload of other stages is refused");
	tap_str(err.msg, "workload: 2 stages, the problem has 4",
	    "its message");
	pw_workload_clear(&given);
	q = pw_problem_new(2, 3, 4);
	if (tap_int(pw_workload_for(q, NULL, PW_RT_CPU, &w, &err), PW_OK,
	    "a problem with given stages"))
		tap_ok(w.hidden == PW_WORKLOAD_HIDDEN && w.nstages == 3 &&
		    w.layers[2] == PW_WORKLOAD_LAYERS && !w.scaled,
		    "the defaults");
	print_is(&w, NULL, "workload: 1 layer per stage of MLP blocks (hidden 64, "
	    "ffn 256, 32 tokens per microbatch), fp32; attention is not part "
	    "of the workload\n", "the defaults print");
	pw_workload_clear(&w);
	pw_problem_free(q);
	pw_problem_free(p);
}

int
main(void)
{
	test_bytes();
	test_levels();
	test_gradients();
	test_determinism();
	test_parse();
	test_shape();
	return tap_done();
}
