/*
 * cpu.c - the CPU backend: device memory and host memory are both the
 * process's heap, the GEMMs go through OpenBLAS (one BLAS thread per
 * calling thread: the engine runs one device per thread), the elementwise
 * primitives are plain loops.  A device's context is stateless, so its
 * compute and copy workers share it safely.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "rt_int.h"

/* The tanh approximation's constants: sqrt(2/pi) and 0.044715. */
#define PW_CPU_GELU_C	0.7978845608028654f
#define PW_CPU_GELU_K	0.044715f

static pthread_once_t pw_cpu_once = PTHREAD_ONCE_INIT;

/* Each device thread runs BLAS on itself only; OpenBLAS would otherwise
 * start a pool per call site that the device threads fight over. */
static void
pw_cpu_blas_init(void)
{
	openblas_set_num_threads(1);
}

/* Every device's context is the same token: nothing is shared. */
static int
pw_cpu_open(int device, void **ctx, struct pw_error *err)
{
	(void)device;
	(void)err;
	pthread_once(&pw_cpu_once, pw_cpu_blas_init);
	*ctx = NULL;
	return PW_OK;
}

static void
pw_cpu_close(void *ctx)
{
	(void)ctx;
}

/* The caller owns what it returns (pw_cpu_release); NULL when the heap
 * refuses, which the arena reports as its own failure. */
static void *
pw_cpu_alloc(void *ctx, size_t bytes)
{
	(void)ctx;
	return pw_tryallocarray(bytes, 1);
}

static void
pw_cpu_release(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

/* Applies BETA to an M x N matrix C: what a GEMM with no inner terms
 * (K = 0) leaves, which BLAS would refuse for its leading dimensions. */
static void
pw_cpu_scale(size_t m, size_t n, float beta, float *c, size_t ldc)
{
	size_t i, j;
	float *row;

	if (beta == 1.0f)
		return;
	for (i = 0; i < m; i++)
		for (row = c + i * ldc, j = 0; j < n; j++)
			row[j] = beta == 0.0f ? 0.0f : beta * row[j];
}

static int
pw_cpu_gemm(void *ctx, bool ta, bool tb, size_t m, size_t n, size_t k,
    float alpha, const float *a, size_t lda, const float *b, size_t ldb,
    float beta, float *c, size_t ldc, struct pw_error *err)
{
	(void)ctx;
	if (m == 0 || n == 0)
		return PW_OK;
	if (k == 0) {
		pw_cpu_scale(m, n, beta, c, ldc);
		return PW_OK;
	}
	if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX ||
	    ldb > INT_MAX || ldc > INT_MAX) {
		pw_error_set(err, "cpu: a GEMM of %zu x %zu x %zu is beyond "
		    "BLAS's int sizes", m, n, k);
		return PW_ERR_RUNTIME;
	}
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
	    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha,
	    a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
	return PW_OK;
}

/* tanh(c (x + k x^3)) as 1 - 2 / (e^2u + 1): libm's tanhf (through
 * expm1f) took most of an MLP block's time, more than its GEMMs; this
 * form's error is absolute (about 1e-7), which gelu and its gradient,
 * each within (1 + t), keep relative.  Saturates to +-1. */
static inline float
pw_cpu_gelu_tanh(float x)
{
	return 1.0f - 2.0f / (expf(2.0f * PW_CPU_GELU_C * (x + PW_CPU_GELU_K * x *
	    x * x)) + 1.0f);
}

/* gelu(x) = x/2 (1 + tanh(u)), u = c (x + k x^3). */
static int
pw_cpu_gelu(void *ctx, const float *h, float *a, size_t n, struct pw_error *err)
{
	size_t i;
	float x;

	(void)ctx;
	(void)err;
	for (i = 0; i < n; i++) {
		x = h[i];
		a[i] = 0.5f * x * (1.0f + pw_cpu_gelu_tanh(x));
	}
	return PW_OK;
}

/* gelu'(x) = (1 + t)/2 + x/2 (1 - t^2) c (1 + 3k x^2), t = tanh(u). */
static int
pw_cpu_gelu_grad(void *ctx, float *h, const float *da, size_t n,
    struct pw_error *err)
{
	size_t i;
	float x, t;

	(void)ctx;
	(void)err;
	for (i = 0; i < n; i++) {
		x = h[i];
		t = pw_cpu_gelu_tanh(x);
		h[i] = da[i] * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) *
		    PW_CPU_GELU_C * (1.0f + 3.0f * PW_CPU_GELU_K * x * x));
	}
	return PW_OK;
}

/* The sum in double: a microbatch's loss is one number the reference
 * must meet to 1e-5 whatever the order of its terms. */
static int
pw_cpu_loss(void *ctx, float *y, const float *t, size_t n, double *loss,
    struct pw_error *err)
{
	double sum = 0, d;
	size_t i;

	(void)ctx;
	(void)err;
	for (i = 0; i < n; i++) {
		d = (double)y[i] - t[i];
		sum += d * d;
		y[i] = (float)(2.0 * d / (double)n);
	}
	*loss = n == 0 ? 0 : sum / (double)n;
	return PW_OK;
}

static int
pw_cpu_fill(void *ctx, float *x, size_t n, uint64_t state, float scale,
    struct pw_error *err)
{
	size_t i;
	float u;

	(void)ctx;
	(void)err;
	for (i = 0; i < n; i++) {
		u = (float)(pw_splitmix64(&state) >> 40) * 0x1p-24f;
		x[i] = scale * (2.0f * u - 1.0f);
	}
	return PW_OK;
}

static int
pw_cpu_axpy(void *ctx, size_t n, float alpha, const float *x, float *y,
    struct pw_error *err)
{
	size_t i;

	(void)ctx;
	(void)err;
	for (i = 0; i < n; i++)
		y[i] += alpha * x[i];
	return PW_OK;
}

static int
pw_cpu_zero(void *ctx, float *x, size_t n, struct pw_error *err)
{
	(void)ctx;
	(void)err;
	if (n > 0)
		memset(x, 0, n * sizeof *x);
	return PW_OK;
}

/* Host and device are one memory here: every direction is memcpy. */
static int
pw_cpu_copy(void *ctx, float *dst, const float *src, size_t n,
    enum pw_rt_copy dir, struct pw_error *err)
{
	(void)ctx;
	(void)dir;
	(void)err;
	if (n > 0 && dst != src)
		memcpy(dst, src, n * sizeof *dst);
	return PW_OK;
}

double
pw_rt_cpu_available(void)
{
	FILE *fp = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kib;
	long pages, size;

	/* MemAvailable: what the kernel can give without swapping. */
	while (fp != NULL && fgets(line, sizeof line, fp) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			fclose(fp);
			return (double)kib * 1024;
		}
	if (fp != NULL)
		fclose(fp);
	pages = sysconf(_SC_PHYS_PAGES);
	size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return INFINITY;
	return (double)pages * (double)size;
}

const struct pw_rt_backend_ops pw_rt_cpu = {
	.kind = PW_RT_CPU,
	.open = pw_cpu_open,
	.close = pw_cpu_close,
	.device_alloc = pw_cpu_alloc,
	.device_release = pw_cpu_release,
	.alloc = pw_cpu_alloc,
	.release = pw_cpu_release,
	.host_alloc = pw_cpu_alloc,
	.host_release = pw_cpu_release,
	.gemm = pw_cpu_gemm,
	.gelu = pw_cpu_gelu,
	.gelu_grad = pw_cpu_gelu_grad,
	.loss = pw_cpu_loss,
	.fill = pw_cpu_fill,
	.axpy = pw_cpu_axpy,
	.zero = pw_cpu_zero,
	.copy = pw_cpu_copy,
};
