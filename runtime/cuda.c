/*
 * The CUDA backend: the workload's primitives (rt_int.h) on NVIDIA GPUs,
 * GEMMs through cuBLAS, the rest through the kernels of cuda_kernels.cu.
 * Each pipeline device has three streams on the GPU pw_rt_gpu_of maps it
 * to (so devices that share a GPU, an emulation, are separate streams):
 * compute, with its cuBLAS handle; D2H, where offloads copy into pinned
 * host memory; H2D, where reloads copy back.  An offload's stream waits
 * for its forward's end event, and a backward's compute for its reload's,
 * so the GPU keeps the schedule's order whatever the host threads do.
 * Every primitive returns when its result is there (the interface is
 * synchronous), and every op is timed by events on its stream, read after
 * the iteration against a reference event taken at its start: the
 * measured timeline is the GPU's.
 *
 * Memory: what the arena accounts comes from one pool per device
 * (cudaMalloc'd when the device opens, sized from the problem by the
 * engine, handed out by pool.c), and the reservation is checked against
 * cudaMemGetInfo then; offloaded tensors wait in a pool of pinned host
 * memory (cudaHostAlloc).  The engine's hand-off buffers and the loss are
 * managed memory, which the local transport and the host reach.
 *
 * The GEMM's arithmetic: bf16 inputs with fp32 accumulation
 * (CUBLAS_COMPUTE_32F_FAST_16BF) unless PW_CUDA_MATH=fp32 in the
 * environment asks for fp32 throughout, the correctness test's mode.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cuda_int.h"
#include "rt_int.h"

/* A pool's pieces start at multiples of this (cudaMalloc's own). */
#define PW_CUDA_ALIGN	256
/* The least room a pool leaves beside the predicted peak, for its
 * alignment and first fit's fragmentation (the plan asks for an eighth
 * more, and this). */
#define PW_CUDA_SLACK	(64.0 * 1048576)

struct pw_cuda_ctx {
	int		 device;
	int		 gpu;
	cudaStream_t	 stream[PW_RT_NLANES];
	cublasHandle_t	 blas;
	cublasComputeType_t math;
	double		*loss;		/* one double of managed memory */
	void		*pool_base;	/* the pool's device memory */
	struct pw_rt_pool *pool;
	void		*host_base;	/* the pinned host pool */
	size_t		 host_bytes;
	struct pw_rt_pool *host;
	/* Pinned blocks beyond the pool, kept for reuse until the device
	 * closes (cudaFreeHost may wait for the device): an offload may
	 * start before the reload that frees room in the pool ends, which
	 * the simulated order the pool is sized by does not do. */
	pthread_mutex_t	 spill_lock;
	struct pw_cuda_spill {
		void	*p;
		size_t	 bytes;
		bool	 used;
	}		*spill;
	int		 nspill, capspill;
	/* The events of the ops in each slot: start and end, made on first
	 * use; the reference the iteration's times count from. */
	size_t		 nslots;
	cudaEvent_t	*ev;		/* [nslots * 2] */
	cudaEvent_t	 ref;
	double		 ref_host;	/* pw_now when REF completed */
};

/* What pw_cuda_plan was told (its arrays copied), for the devices'
 * opens. */
static struct pw_rt_cuda_plan pw_cuda_planned = { 1, 0, false, 0, NULL, NULL,
    NULL };
static double *pw_cuda_peak_bytes, *pw_cuda_pool_bytes, *pw_cuda_host_bytes;

/* A copy of N doubles of SRC, or NULL for none: the caller's. */
static double *
pw_cuda_doubles(const double *src, int n)
{
	double *d;

	if (src == NULL || n < 1)
		return NULL;
	d = pw_xcalloc((size_t)n, sizeof *d);
	memcpy(d, src, (size_t)n * sizeof *d);
	return d;
}

static void
pw_cuda_plan(const struct pw_rt_cuda_plan *plan)
{
	free(pw_cuda_peak_bytes);
	free(pw_cuda_pool_bytes);
	free(pw_cuda_host_bytes);
	pw_cuda_planned = *plan;
	if (pw_cuda_planned.devices < 1)
		pw_cuda_planned.devices = 1;
	pw_cuda_peak_bytes = pw_cuda_doubles(plan->peak, pw_cuda_planned.devices);
	pw_cuda_pool_bytes = pw_cuda_doubles(plan->pool, pw_cuda_planned.devices);
	pw_cuda_host_bytes = pw_cuda_doubles(plan->host, pw_cuda_planned.devices);
	pw_cuda_planned.peak = pw_cuda_peak_bytes;
	pw_cuda_planned.pool = pw_cuda_pool_bytes;
	pw_cuda_planned.host = pw_cuda_host_bytes;
}

static int
pw_cuda_gpus(char *why, size_t len)
{
	cudaError_t ce;
	int n = 0;

	ce = cudaGetDeviceCount(&n);
	if (ce != cudaSuccess || n <= 0) {
		if (why != NULL && len > 0)
			snprintf(why, len, "no GPU visible (cudaGetDeviceCount: "
			    "%s)", ce != cudaSuccess ? cudaGetErrorString(ce) :
			    "0 devices");
		return 0;
	}
	return n;
}

static int
pw_cuda_gpu(const void *ctx)
{
	const struct pw_cuda_ctx *c = ctx;

	return c->gpu;
}

static void
pw_cuda_gpu_name(const void *ctx, char *buf, size_t len)
{
	const struct pw_cuda_ctx *c = ctx;
	struct cudaDeviceProp prop;
	size_t i, at = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (cudaGetDeviceProperties(&prop, c->gpu) != cudaSuccess) {
		snprintf(buf, len, "?");
		return;
	}
	for (i = 0; i < sizeof prop.uuid.bytes && at + 3 <= len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%02x",
		    (unsigned char)prop.uuid.bytes[i]);
}

/* The launcher's local rank (Open MPI, then Slurm), or -1 outside one. */
static int
pw_cuda_local_rank(void)
{
	const char *s = getenv("OMPI_COMM_WORLD_LOCAL_RANK");

	if (s == NULL)
		s = getenv("SLURM_LOCALID");
	return s != NULL && *s != '\0' ? atoi(s) : -1;
}

/* Says CALL's failure for CTX's device during OP in ERR: the one line a
 * CUDA failure ends the run with. */
static int
pw_cuda_fail(const struct pw_cuda_ctx *c, const char *op, const char *call,
    const char *what, struct pw_error *err)
{
	pw_error_set(err, "cuda: device %d (GPU %d): %s: %s: %s", c->device,
	    c->gpu, op, call, what);
	return PW_ERR_RUNTIME;
}

/* Waits for what LANE's stream of CTX holds; the launch status LAUNCH
 * first. */
static int
pw_cuda_lane_done(const struct pw_cuda_ctx *c, enum pw_rt_lane lane,
    const char *op, int launch, struct pw_error *err)
{
	cudaError_t ce = (cudaError_t)launch;

	if (ce != cudaSuccess)
		return pw_cuda_fail(c, op, "kernel launch",
		    cudaGetErrorString(ce), err);
	if ((ce = cudaStreamSynchronize(c->stream[lane])) != cudaSuccess)
		return pw_cuda_fail(c, op, "cudaStreamSynchronize",
		    cudaGetErrorString(ce), err);
	return PW_OK;
}

/* The same on the compute stream, where every primitive but a transfer
 * runs. */
static int
pw_cuda_done(const struct pw_cuda_ctx *c, const char *op, int launch,
    struct pw_error *err)
{
	return pw_cuda_lane_done(c, PW_RT_LANE_COMPUTE, op, launch, err);
}

static void
pw_cuda_close(void *ctx)
{
	struct pw_cuda_ctx *c = ctx;
	size_t i;
	int l;

	if (c == NULL)
		return;
	cudaSetDevice(c->gpu);
	for (i = 0; c->ev != NULL && i < 2 * c->nslots; i++)
		if (c->ev[i] != NULL)
			cudaEventDestroy(c->ev[i]);
	free(c->ev);
	if (c->ref != NULL)
		cudaEventDestroy(c->ref);
	pw_rt_pool_free(c->pool);
	if (c->pool_base != NULL)
		cudaFree(c->pool_base);
	pw_rt_pool_free(c->host);
	if (c->host_base != NULL)
		cudaFreeHost(c->host_base);
	for (l = 0; l < c->nspill; l++)
		cudaFreeHost(c->spill[l].p);
	free(c->spill);
	pthread_mutex_destroy(&c->spill_lock);
	if (c->loss != NULL)
		cudaFree(c->loss);
	if (c->blas != NULL)
		cublasDestroy(c->blas);
	for (l = 0; l < PW_RT_NLANES; l++)
		if (c->stream[l] != NULL)
			cudaStreamDestroy(c->stream[l]);
	free(c);
}

/* Memory a device leaves outside its pool: NCCL's buffers, cuBLAS's
 * workspace, the hand-off and wire buffers (512 MiB and 2% of the GPU). */
static double
pw_cuda_reserve(size_t total)
{
	return 512.0 * 1048576 + 0.02 * (double)total;
}

/* The device's pool: WANT bytes (the predicted PEAK with room for
 * alignment and fragmentation), at most what the GPU has free beside
 * pw_cuda_reserve, never less than PEAK and PW_CUDA_SLACK (then the open
 * fails, saying so); allocated at once, and the reservation checked against
 * cudaMemGetInfo (the free memory must drop by the pool, or the pool is
 * not the device memory it is counted as). */
static int
pw_cuda_open_pool(struct pw_cuda_ctx *c, double want, double peak,
    struct pw_error *err)
{
	size_t free0, free1, total, n;
	char b1[32], b2[32], b3[32], why[200];
	double room;
	cudaError_t ce;

	if ((ce = cudaMemGetInfo(&free0, &total)) != cudaSuccess)
		return pw_cuda_fail(c, "open", "cudaMemGetInfo",
		    cudaGetErrorString(ce), err);
	room = (double)free0 - pw_cuda_reserve(total);
	if (room < peak + PW_CUDA_SLACK) {
		snprintf(why, sizeof why, "a predicted peak of %s and 64 MiB "
		    "does not fit in the %s free beside a reserve of %s",
		    pw_fmt_bytes(b1,
		    sizeof b1, peak), pw_fmt_bytes(b2, sizeof b2,
		    (double)free0), pw_fmt_bytes(b3, sizeof b3,
		    pw_cuda_reserve(total)));
		return pw_cuda_fail(c, "open", "cudaMemGetInfo", why, err);
	}
	n = (size_t)(want < room ? want : room);
	if ((ce = cudaMalloc(&c->pool_base, n)) != cudaSuccess) {
		c->pool_base = NULL;
		snprintf(why, sizeof why, "%s for the pool of %s (%s free)",
		    cudaGetErrorString(ce), pw_fmt_bytes(b1, sizeof b1,
		    (double)n), pw_fmt_bytes(b2, sizeof b2, (double)free0));
		return pw_cuda_fail(c, "open", "cudaMalloc", why, err);
	}
	if ((ce = cudaMemGetInfo(&free1, &total)) != cudaSuccess)
		return pw_cuda_fail(c, "open", "cudaMemGetInfo",
		    cudaGetErrorString(ce), err);
	if (free1 > free0 || free0 - free1 < n) {
		snprintf(why, sizeof why, "the free memory fell by %s for a "
		    "pool of %s", pw_fmt_bytes(b1, sizeof b1, free1 > free0 ?
		    0.0 : (double)(free0 - free1)), pw_fmt_bytes(b2, sizeof b2,
		    (double)n));
		return pw_cuda_fail(c, "open", "cudaMemGetInfo", why, err);
	}
	c->pool = pw_rt_pool_new(c->pool_base, n, PW_CUDA_ALIGN);
	return PW_OK;
}

/* The pinned host pool of BYTES. */
static int
pw_cuda_open_host(struct pw_cuda_ctx *c, double bytes, struct pw_error *err)
{
	char b1[32], why[128];
	cudaError_t ce;

	if ((ce = cudaHostAlloc(&c->host_base, (size_t)bytes,
	    cudaHostAllocPortable)) != cudaSuccess) {
		c->host_base = NULL;
		snprintf(why, sizeof why, "%s for %s of pinned host memory",
		    cudaGetErrorString(ce), pw_fmt_bytes(b1, sizeof b1, bytes));
		return pw_cuda_fail(c, "open", "cudaHostAlloc", why, err);
	}
	c->host_bytes = (size_t)bytes;
	c->host = pw_rt_pool_new(c->host_base, (size_t)bytes, PW_CUDA_ALIGN);
	return PW_OK;
}

/* *CTX is the caller's (pw_cuda_close). */
static int
pw_cuda_open(int device, void **ctx, struct pw_error *err)
{
	const struct pw_rt_cuda_plan *plan = &pw_cuda_planned;
	struct pw_cuda_ctx *c;
	char why[160];
	int n, local, l, rc = PW_OK;
	cudaError_t ce;

	*ctx = NULL;
	if ((n = pw_cuda_gpus(why, sizeof why)) == 0) {
		pw_error_set(err, "cuda: device %d: %s", device, why);
		return PW_ERR_INPUT;
	}
	if (plan->gpus > 0 && plan->gpus < n)
		n = plan->gpus;
	c = pw_xcalloc(1, sizeof *c);
	pthread_mutex_init(&c->spill_lock, NULL);
	c->device = device;
	local = plan->ranks ? pw_cuda_local_rank() : -1;
	c->gpu = local >= 0 ? local % n :
	    pw_rt_gpu_of(device, plan->devices, n);
	c->math = pw_rt_math_of(PW_RT_CUDA, getenv("PW_CUDA_MATH")) ==
	    PW_RT_FP32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_16BF;
	c->nslots = plan->nops;
	c->ev = pw_xcalloc(2 * c->nslots + 1, sizeof *c->ev);
	if ((ce = cudaSetDevice(c->gpu)) != cudaSuccess)
		rc = pw_cuda_fail(c, "open", "cudaSetDevice",
		    cudaGetErrorString(ce), err);
	for (l = 0; l < PW_RT_NLANES && rc == PW_OK; l++)
		if ((ce = cudaStreamCreateWithFlags(&c->stream[l],
		    cudaStreamNonBlocking)) != cudaSuccess) {
			c->stream[l] = NULL;
			rc = pw_cuda_fail(c, "open", "cudaStreamCreate",
			    cudaGetErrorString(ce), err);
		}
	if (rc == PW_OK && cublasCreate(&c->blas) != CUBLAS_STATUS_SUCCESS) {
		c->blas = NULL;
		rc = pw_cuda_fail(c, "open", "cublasCreate", "failed", err);
	} else if (rc == PW_OK && cublasSetStream(c->blas,
	    c->stream[PW_RT_LANE_COMPUTE]) != CUBLAS_STATUS_SUCCESS)
		rc = pw_cuda_fail(c, "open", "cublasSetStream", "failed", err);
	else if (rc == PW_OK && (ce = cudaMallocManaged((void **)&c->loss,
	    sizeof *c->loss,
	    cudaMemAttachGlobal)) != cudaSuccess) {
		c->loss = NULL;
		rc = pw_cuda_fail(c, "open", "cudaMallocManaged",
		    cudaGetErrorString(ce), err);
	} else if (rc == PW_OK && (ce = cudaEventCreate(&c->ref)) !=
	    cudaSuccess) {
		c->ref = NULL;
		rc = pw_cuda_fail(c, "open", "cudaEventCreate",
		    cudaGetErrorString(ce), err);
	}
	if (rc == PW_OK && plan->pool != NULL && device < plan->devices &&
	    plan->pool[device] > 0)
		rc = pw_cuda_open_pool(c, plan->pool[device], plan->peak != NULL ?
		    plan->peak[device] : 0, err);
	if (rc == PW_OK && plan->host != NULL && device < plan->devices &&
	    plan->host[device] > 0)
		rc = pw_cuda_open_host(c, plan->host[device], err);
	if (rc != PW_OK) {
		pw_cuda_close(c);
		return rc;
	}
	*ctx = c;
	return PW_OK;
}

/* From the device's pool (or cudaMalloc where it has none): the
 * caller's until pw_cuda_device_release; NULL when there is no room. */
static void *
pw_cuda_device_alloc(void *ctx, size_t bytes)
{
	struct pw_cuda_ctx *c = ctx;
	void *p = NULL;

	if (c->pool != NULL)
		return pw_rt_pool_take(c->pool, bytes, NULL);
	cudaSetDevice(c->gpu);
	if (cudaMalloc(&p, bytes == 0 ? 1 : bytes) != cudaSuccess)
		return NULL;
	return p;
}

static void
pw_cuda_device_release(void *ctx, void *p)
{
	struct pw_cuda_ctx *c = ctx;

	if (c->pool != NULL) {
		pw_rt_pool_give(c->pool, p);
		return;
	}
	cudaSetDevice(c->gpu);
	cudaFree(p);
}

/* Managed memory (the host reaches it): the caller owns it
 * (pw_cuda_release); NULL when the GPU has no room. */
static void *
pw_cuda_alloc(void *ctx, size_t bytes)
{
	struct pw_cuda_ctx *c = ctx;
	void *p = NULL;

	cudaSetDevice(c->gpu);
	if (cudaMallocManaged(&p, bytes == 0 ? 1 : bytes,
	    cudaMemAttachGlobal) != cudaSuccess)
		return NULL;
	return p;
}

static void
pw_cuda_release(void *ctx, void *p)
{
	struct pw_cuda_ctx *c = ctx;

	cudaSetDevice(c->gpu);
	cudaFree(p);
}

/* Pinned host memory, where offloaded tensors wait: from the host pool,
 * else the smallest spilled block (pw_cuda_ctx.spill) free and large
 * enough, else a new one; the caller owns it (pw_cuda_host_release),
 * NULL when refused. */
static void *
pw_cuda_host_alloc(void *ctx, size_t bytes)
{
	struct pw_cuda_ctx *c = ctx;
	void *p = NULL;
	int i, best = -1;

	if (c->host != NULL && (p = pw_rt_pool_take(c->host, bytes,
	    NULL)) != NULL)
		return p;
	pthread_mutex_lock(&c->spill_lock);
	for (i = 0; i < c->nspill; i++)
		if (!c->spill[i].used && c->spill[i].bytes >= bytes &&
		    (best < 0 || c->spill[i].bytes < c->spill[best].bytes))
			best = i;
	if (best >= 0) {
		c->spill[best].used = true;
		p = c->spill[best].p;
	}
	pthread_mutex_unlock(&c->spill_lock);
	if (p != NULL)
		return p;
	/* Outside the lock: pinning host memory takes its time. */
	cudaSetDevice(c->gpu);
	if (cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable) !=
	    cudaSuccess)
		return NULL;
	pthread_mutex_lock(&c->spill_lock);
	if (c->nspill == c->capspill) {
		c->capspill = c->capspill ? 2 * c->capspill : 8;
		c->spill = pw_xreallocarray(c->spill, (size_t)c->capspill,
		    sizeof *c->spill);
	}
	c->spill[c->nspill++] = (struct pw_cuda_spill){ p, bytes, true };
	pthread_mutex_unlock(&c->spill_lock);
	return p;
}

static void
pw_cuda_host_release(void *ctx, void *p)
{
	struct pw_cuda_ctx *c = ctx;
	int i;

	if (c->host != NULL && (char *)p >= (char *)c->host_base &&
	    (char *)p < (char *)c->host_base + c->host_bytes) {
		pw_rt_pool_give(c->host, p);
		return;
	}
	pthread_mutex_lock(&c->spill_lock);
	for (i = 0; i < c->nspill; i++)
		if (c->spill[i].p == p)
			c->spill[i].used = false;
	pthread_mutex_unlock(&c->spill_lock);
}

/* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS
 * gets B before A and N before M. */
static int
pw_cuda_gemm(void *ctx, bool ta, bool tb, size_t m, size_t n, size_t k,
    float alpha, const float *a, size_t lda, const float *b, size_t ldb,
    float beta, float *c, size_t ldc, struct pw_error *err)
{
	struct pw_cuda_ctx *x = ctx;
	cublasStatus_t st;

	if (m == 0 || n == 0)
		return PW_OK;
	cudaSetDevice(x->gpu);
	if (k == 0)
		return pw_cuda_done(x, "gemm",
		    pw_cuk_launch_scale(x->stream[PW_RT_LANE_COMPUTE], m, n, beta, c, ldc), err);
	if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX ||
	    lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX) {
		pw_error_set(err, "cuda: a GEMM of %zu x %zu x %zu is beyond "
		    "cuBLAS's int sizes", m, n, k);
		return PW_ERR_RUNTIME;
	}
	st = cublasGemmEx(x->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
	    ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha,
	    b, CUDA_R_32F, (int)ldb, a, CUDA_R_32F, (int)lda, &beta,
	    c, CUDA_R_32F, (int)ldc, x->math, CUBLAS_GEMM_DEFAULT);
	if (st != CUBLAS_STATUS_SUCCESS)
		return pw_cuda_fail(x, "gemm", "cublasGemmEx",
		    cublasGetStatusString(st), err);
	return pw_cuda_done(x, "gemm", cudaSuccess, err);
}

static int
pw_cuda_gelu(void *ctx, const float *h, float *a, size_t n,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->gpu);
	return pw_cuda_done(c, "gelu", pw_cuk_launch_gelu(c->stream[PW_RT_LANE_COMPUTE], h, a, n),
	    err);
}

static int
pw_cuda_gelu_grad(void *ctx, float *h, const float *da, size_t n,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->gpu);
	return pw_cuda_done(c, "gelu_grad",
	    pw_cuk_launch_gelu_grad(c->stream[PW_RT_LANE_COMPUTE], h, da, n), err);
}

static int
pw_cuda_loss(void *ctx, float *y, const float *t, size_t n, double *loss,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;
	int rc;

	cudaSetDevice(c->gpu);
	rc = pw_cuda_done(c, "loss",
	    pw_cuk_launch_loss(c->stream[PW_RT_LANE_COMPUTE], y, t, n, c->loss), err);
	if (rc == PW_OK)
		*loss = *c->loss;
	return rc;
}

static int
pw_cuda_fill(void *ctx, float *x, size_t n, uint64_t state, float scale,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->gpu);
	return pw_cuda_done(c, "fill",
	    pw_cuk_launch_fill(c->stream[PW_RT_LANE_COMPUTE], x, n, state, scale), err);
}

static int
pw_cuda_axpy(void *ctx, size_t n, float alpha, const float *x, float *y,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->gpu);
	/* The interface's X is const to its readers; the step zeroes it. */
	return pw_cuda_done(c, "axpy", pw_cuk_launch_axpy(c->stream[PW_RT_LANE_COMPUTE], n, alpha,
	    (float *)(uintptr_t)x, y), err);
}

static int
pw_cuda_zero(void *ctx, float *x, size_t n, struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->gpu);
	return pw_cuda_done(c, "zero", (int)cudaMemsetAsync(x, 0,
	    n * sizeof *x, c->stream[PW_RT_LANE_COMPUTE]), err);
}

/* Unified addressing tells the direction from the pointers; DIR names the
 * op in a failure. */
static int
pw_cuda_copy(void *ctx, float *dst, const float *src, size_t n,
    enum pw_rt_copy dir, struct pw_error *err)
{
	static const char *const names[] = { "copy d2d", "offload d2h",
	    "reload h2d" };
	static const enum pw_rt_lane lanes[] = { PW_RT_LANE_COMPUTE,
	    PW_RT_LANE_D2H, PW_RT_LANE_H2D };
	struct pw_cuda_ctx *c = ctx;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->gpu);
	return pw_cuda_lane_done(c, lanes[dir], names[dir],
	    (int)cudaMemcpyAsync(dst, src, n * sizeof *dst, cudaMemcpyDefault,
	    c->stream[lanes[dir]]), err);
}

/* ------------------------------------------------------------------ */
/* The device's clock                                                  */

static int
pw_cuda_clock_start(void *ctx, struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;
	cudaError_t ce;

	cudaSetDevice(c->gpu);
	if ((ce = cudaEventRecord(c->ref, c->stream[PW_RT_LANE_COMPUTE])) !=
	    cudaSuccess || (ce = cudaEventSynchronize(c->ref)) != cudaSuccess)
		return pw_cuda_fail(c, "clock", "cudaEventRecord",
		    cudaGetErrorString(ce), err);
	c->ref_host = pw_now();
	return PW_OK;
}

/* The event of SLOT's start or end, made on first use (NULL with ERR
 * when it cannot be). */
static cudaEvent_t
pw_cuda_event(struct pw_cuda_ctx *c, size_t slot, bool end,
    struct pw_error *err)
{
	cudaEvent_t *ev;
	cudaError_t ce;

	if (slot >= c->nslots) {
		pw_error_set(err, "cuda: device %d: op slot %zu of %zu planned",
		    c->device, slot, c->nslots);
		return NULL;
	}
	ev = &c->ev[2 * slot + (end ? 1 : 0)];
	if (*ev == NULL && (ce = cudaEventCreate(ev)) != cudaSuccess) {
		*ev = NULL;
		pw_cuda_fail(c, "clock", "cudaEventCreate",
		    cudaGetErrorString(ce), err);
	}
	return *ev;
}

static int
pw_cuda_mark(void *ctx, enum pw_rt_lane lane, size_t slot, bool end,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;
	cudaEvent_t ev;
	cudaError_t ce;

	cudaSetDevice(c->gpu);
	if ((ev = pw_cuda_event(c, slot, end, err)) == NULL)
		return PW_ERR_RUNTIME;
	if ((ce = cudaEventRecord(ev, c->stream[lane])) != cudaSuccess)
		return pw_cuda_fail(c, "clock", "cudaEventRecord",
		    cudaGetErrorString(ce), err);
	return PW_OK;
}

static int
pw_cuda_wait(void *ctx, enum pw_rt_lane lane, size_t slot,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;
	cudaEvent_t ev;
	cudaError_t ce;

	cudaSetDevice(c->gpu);
	if ((ev = pw_cuda_event(c, slot, true, err)) == NULL)
		return PW_ERR_RUNTIME;
	if ((ce = cudaStreamWaitEvent(c->stream[lane], ev, 0)) != cudaSuccess)
		return pw_cuda_fail(c, "order", "cudaStreamWaitEvent",
		    cudaGetErrorString(ce), err);
	return PW_OK;
}

static int
pw_cuda_op_time(void *ctx, size_t slot, bool end, double *t,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;
	cudaEvent_t ev;
	cudaError_t ce;
	float ms;

	cudaSetDevice(c->gpu);
	if ((ev = pw_cuda_event(c, slot, end, err)) == NULL)
		return PW_ERR_RUNTIME;
	if ((ce = cudaEventSynchronize(ev)) != cudaSuccess ||
	    (ce = cudaEventElapsedTime(&ms, c->ref, ev)) != cudaSuccess)
		return pw_cuda_fail(c, "clock", "cudaEventElapsedTime",
		    cudaGetErrorString(ce), err);
	/* The reference completed just before REF_HOST was read. */
	*t = c->ref_host + (double)ms / 1e3;
	return PW_OK;
}

static double
pw_cuda_peak(void *ctx)
{
	struct pw_cuda_ctx *c = ctx;

	return c->pool != NULL ? (double)pw_rt_pool_peak(c->pool) : NAN;
}

static const struct pw_rt_backend_ops pw_cuda_ops = {
	.kind = PW_RT_CUDA,
	.open = pw_cuda_open,
	.close = pw_cuda_close,
	.device_alloc = pw_cuda_device_alloc,
	.device_release = pw_cuda_device_release,
	.alloc = pw_cuda_alloc,
	.release = pw_cuda_release,
	.host_alloc = pw_cuda_host_alloc,
	.host_release = pw_cuda_host_release,
	.gemm = pw_cuda_gemm,
	.gelu = pw_cuda_gelu,
	.gelu_grad = pw_cuda_gelu_grad,
	.loss = pw_cuda_loss,
	.fill = pw_cuda_fill,
	.axpy = pw_cuda_axpy,
	.zero = pw_cuda_zero,
	.copy = pw_cuda_copy,
	.clock_start = pw_cuda_clock_start,
	.mark = pw_cuda_mark,
	.wait = pw_cuda_wait,
	.op_time = pw_cuda_op_time,
	.peak = pw_cuda_peak,
};

/* The module's one symbol (rt_int.h): what the program reaches it by. */
const struct pw_rt_cuda_module pw_rt_cuda_module = {
	.size = sizeof pw_rt_cuda_module,
	.version = PACKAGE_STRING,
	.ops = &pw_cuda_ops,
	.gpus = pw_cuda_gpus,
	.gpu = pw_cuda_gpu,
	.gpu_name = pw_cuda_gpu_name,
	.plan = pw_cuda_plan,
	.wire_nccl = pw_rt_wire_nccl,
	.wire_copies = pw_rt_wire_cuda_copies,
};
