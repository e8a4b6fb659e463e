/*
 * The CUDA backend: the workload's primitives (rt_int.h) on NVIDIA GPUs,
 * GEMMs through cuBLAS, the rest through the kernels of cuda_kernels.cu.
 * Each pipeline device has its own stream and cuBLAS handle on the GPU
 * pw_rt_gpu_of maps it to, so devices that share a GPU (an emulation) are
 * separate streams.  Every primitive returns when its result is there
 * (the interface is synchronous), and device memory is managed memory, so
 * that the engine's transports, which copy with the host's memcpy, and the
 * workload's host reads of the loss reach it.
 *
 * The GEMM's arithmetic: bf16 inputs with fp32 accumulation
 * (CUBLAS_COMPUTE_32F_FAST_16BF) unless PW_CUDA_MATH=fp32 in the
 * environment asks for fp32 throughout, the correctness test's mode.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cuda_int.h"
#include "rt_int.h"

struct pw_cuda_ctx {
	int		 device;
	int		 gpu;
	cudaStream_t	 stream;
	cublasHandle_t	 blas;
	cublasComputeType_t math;
	double		*loss;		/* one double of managed memory */
};

/* The pipeline devices of this launch and the GPUs pw_rt_gpu_of spreads
 * them over (0: every one visible).  Set by pw_rt_cuda_plan before any
 * device opens. */
static int pw_cuda_ndevices = 1;
static int pw_cuda_ngpus;

void
pw_rt_cuda_plan(int devices, int gpus)
{
	pw_cuda_ndevices = devices > 0 ? devices : 1;
	pw_cuda_ngpus = gpus;
}

int
pw_rt_cuda_gpus(char *why, size_t len)
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

/* Waits for what CTX's stream holds; the launch status LAUNCH first. */
static int
pw_cuda_done(const struct pw_cuda_ctx *c, const char *op, int launch,
    struct pw_error *err)
{
	cudaError_t ce = (cudaError_t)launch;

	if (ce != cudaSuccess)
		return pw_cuda_fail(c, op, "kernel launch",
		    cudaGetErrorString(ce), err);
	if ((ce = cudaStreamSynchronize(c->stream)) != cudaSuccess)
		return pw_cuda_fail(c, op, "cudaStreamSynchronize",
		    cudaGetErrorString(ce), err);
	return PW_OK;
}

static void
pw_cuda_close(void *ctx)
{
	struct pw_cuda_ctx *c = ctx;

	if (c == NULL)
		return;
	cudaSetDevice(c->gpu);
	if (c->loss != NULL)
		cudaFree(c->loss);
	if (c->blas != NULL)
		cublasDestroy(c->blas);
	if (c->stream != NULL)
		cudaStreamDestroy(c->stream);
	free(c);
}

/* *CTX is the caller's (pw_cuda_close). */
static int
pw_cuda_open(int device, void **ctx, struct pw_error *err)
{
	struct pw_cuda_ctx *c;
	char why[160];
	int n, local, rc = PW_OK;
	cudaError_t ce;

	*ctx = NULL;
	if ((n = pw_rt_cuda_gpus(why, sizeof why)) == 0) {
		pw_error_set(err, "cuda: device %d: %s", device, why);
		return PW_ERR_INPUT;
	}
	if (pw_cuda_ngpus > 0 && pw_cuda_ngpus < n)
		n = pw_cuda_ngpus;
	c = pw_xcalloc(1, sizeof *c);
	c->device = device;
	local = pw_cuda_local_rank();
	c->gpu = local >= 0 ? local % n :
	    pw_rt_gpu_of(device, pw_cuda_ndevices, n);
	c->math = pw_rt_math_of(PW_RT_CUDA, getenv("PW_CUDA_MATH")) ==
	    PW_RT_FP32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_16BF;
	if ((ce = cudaSetDevice(c->gpu)) != cudaSuccess)
		rc = pw_cuda_fail(c, "open", "cudaSetDevice",
		    cudaGetErrorString(ce), err);
	else if ((ce = cudaStreamCreateWithFlags(&c->stream,
	    cudaStreamNonBlocking)) != cudaSuccess)
		rc = pw_cuda_fail(c, "open", "cudaStreamCreate",
		    cudaGetErrorString(ce), err);
	else if (cublasCreate(&c->blas) != CUBLAS_STATUS_SUCCESS) {
		c->blas = NULL;
		rc = pw_cuda_fail(c, "open", "cublasCreate", "failed", err);
	} else if (cublasSetStream(c->blas, c->stream) !=
	    CUBLAS_STATUS_SUCCESS)
		rc = pw_cuda_fail(c, "open", "cublasSetStream", "failed", err);
	else if ((ce = cudaMallocManaged((void **)&c->loss, sizeof *c->loss,
	    cudaMemAttachGlobal)) != cudaSuccess) {
		c->loss = NULL;
		rc = pw_cuda_fail(c, "open", "cudaMallocManaged",
		    cudaGetErrorString(ce), err);
	}
	if (rc != PW_OK) {
		pw_cuda_close(c);
		return rc;
	}
	*ctx = c;
	return PW_OK;
}

/* The caller owns what it returns (pw_cuda_release); NULL when the GPU
 * has no room. */
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

/* Pinned host memory, where offloaded tensors wait; the caller owns it
 * (pw_cuda_host_release), NULL when refused. */
static void *
pw_cuda_host_alloc(void *ctx, size_t bytes)
{
	struct pw_cuda_ctx *c = ctx;
	void *p = NULL;

	cudaSetDevice(c->gpu);
	if (cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable) !=
	    cudaSuccess)
		return NULL;
	return p;
}

static void
pw_cuda_host_release(void *ctx, void *p)
{
	(void)ctx;
	cudaFreeHost(p);
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
		    pw_cuk_launch_scale(x->stream, m, n, beta, c, ldc), err);
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
	return pw_cuda_done(c, "gelu", pw_cuk_launch_gelu(c->stream, h, a, n),
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
	    pw_cuk_launch_gelu_grad(c->stream, h, da, n), err);
}

static int
pw_cuda_loss(void *ctx, float *y, const float *t, size_t n, double *loss,
    struct pw_error *err)
{
	struct pw_cuda_ctx *c = ctx;
	int rc;

	cudaSetDevice(c->gpu);
	rc = pw_cuda_done(c, "loss",
	    pw_cuk_launch_loss(c->stream, y, t, n, c->loss), err);
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
	    pw_cuk_launch_fill(c->stream, x, n, state, scale), err);
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
	return pw_cuda_done(c, "axpy", pw_cuk_launch_axpy(c->stream, n, alpha,
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
	    n * sizeof *x, c->stream), err);
}

/* Unified addressing tells the direction from the pointers; DIR names the
 * op in a failure. */
static int
pw_cuda_copy(void *ctx, float *dst, const float *src, size_t n,
    enum pw_rt_copy dir, struct pw_error *err)
{
	static const char *const names[] = { "copy d2d", "offload d2h",
	    "reload h2d" };
	struct pw_cuda_ctx *c = ctx;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->gpu);
	return pw_cuda_done(c, names[dir], (int)cudaMemcpyAsync(dst, src,
	    n * sizeof *dst, cudaMemcpyDefault, c->stream), err);
}

const struct pw_rt_backend_ops pw_rt_cuda = {
	.kind = PW_RT_CUDA,
	.open = pw_cuda_open,
	.close = pw_cuda_close,
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
};
