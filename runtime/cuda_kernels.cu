/*
 * The CUDA backend's kernels: what the workload needs beyond cuBLAS.  Each
 * computes the CPU backend's formula (runtime/cpu.c) so that both backends
 * give the same numbers; the fill draws the same pw_splitmix64 sequence.
 * Every launcher enqueues on STREAM and returns the launch's cudaError_t.
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "cuda_int.h"

#define PW_CUK_GELU_C	0.7978845608028654f
#define PW_CUK_GELU_K	0.044715f
#define PW_CUK_THREADS	256

static unsigned
pw_cuk_blocks(size_t n)
{
	size_t b = (n + PW_CUK_THREADS - 1) / PW_CUK_THREADS;

	return b == 0 ? 1 : b > 65535 ? 65535 : (unsigned)b;
}

__device__ static float
pw_cuk_tanh(float x)
{
	return 1.0f - 2.0f / (expf(2.0f * PW_CUK_GELU_C * (x + PW_CUK_GELU_K * x *
	    x * x)) + 1.0f);
}

__global__ static void
pw_cuk_gelu(const float *h, float *a, size_t n)
{
	size_t i;
	float x;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		x = h[i];
		a[i] = 0.5f * x * (1.0f + pw_cuk_tanh(x));
	}
}

__global__ static void
pw_cuk_gelu_grad(float *h, const float *da, size_t n)
{
	size_t i;
	float x, t;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		x = h[i];
		t = pw_cuk_tanh(x);
		h[i] = da[i] * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) *
		    PW_CUK_GELU_C * (1.0f + 3.0f * PW_CUK_GELU_K * x * x));
	}
}

/* One block, so the sum in double has one order whatever the GPU. */
__global__ static void
pw_cuk_loss(float *y, const float *t, size_t n, double *out)
{
	__shared__ double part[PW_CUK_THREADS];
	double sum = 0, d;
	size_t i;
	unsigned s;

	for (i = threadIdx.x; i < n; i += blockDim.x) {
		d = (double)y[i] - t[i];
		sum += d * d;
		y[i] = (float)(2.0 * d / (double)n);
	}
	part[threadIdx.x] = sum;
	__syncthreads();
	for (s = blockDim.x / 2; s > 0; s /= 2) {
		if (threadIdx.x < s)
			part[threadIdx.x] += part[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*out = n == 0 ? 0 : part[0] / (double)n;
}

/* The i-th number of pw_splitmix64 from STATE is the mix of STATE plus
 * i + 1 times its increment: each thread computes its own. */
__global__ static void
pw_cuk_fill(float *x, size_t n, uint64_t state, float scale)
{
	size_t i;
	uint64_t z;
	float u;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		z = state + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		u = (float)(z >> 40) * 0x1p-24f;
		x[i] = scale * (2.0f * u - 1.0f);
	}
}

__global__ static void
pw_cuk_axpy(size_t n, float alpha, float *x, float *y)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x) {
		y[i] += alpha * x[i];
		x[i] = 0.0f;
	}
}

/* C = BETA C over an M x N row-major matrix: a GEMM with no inner terms. */
__global__ static void
pw_cuk_scale(size_t m, size_t n, float beta, float *c, size_t ldc)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < m * n;
	    i += (size_t)gridDim.x * blockDim.x)
		c[(i / n) * ldc + i % n] = beta == 0.0f ? 0.0f :
		    beta * c[(i / n) * ldc + i % n];
}

extern "C" int
pw_cuk_launch_gelu(cudaStream_t st, const float *h, float *a, size_t n)
{
	pw_cuk_gelu<<<pw_cuk_blocks(n), PW_CUK_THREADS, 0, st>>>(h, a, n);
	return (int)cudaGetLastError();
}

extern "C" int
pw_cuk_launch_gelu_grad(cudaStream_t st, float *h, const float *da, size_t n)
{
	pw_cuk_gelu_grad<<<pw_cuk_blocks(n), PW_CUK_THREADS, 0, st>>>(h, da, n);
	return (int)cudaGetLastError();
}

extern "C" int
pw_cuk_launch_loss(cudaStream_t st, float *y, const float *t, size_t n,
    double *out)
{
	pw_cuk_loss<<<1, PW_CUK_THREADS, 0, st>>>(y, t, n, out);
	return (int)cudaGetLastError();
}

extern "C" int
pw_cuk_launch_fill(cudaStream_t st, float *x, size_t n, uint64_t state,
    float scale)
{
	pw_cuk_fill<<<pw_cuk_blocks(n), PW_CUK_THREADS, 0, st>>>(x, n, state,
	    scale);
	return (int)cudaGetLastError();
}

extern "C" int
pw_cuk_launch_axpy(cudaStream_t st, size_t n, float alpha, float *x, float *y)
{
	pw_cuk_axpy<<<pw_cuk_blocks(n), PW_CUK_THREADS, 0, st>>>(n, alpha, x, y);
	return (int)cudaGetLastError();
}

extern "C" int
pw_cuk_launch_scale(cudaStream_t st, size_t m, size_t n, float beta, float *c,
    size_t ldc)
{
	pw_cuk_scale<<<pw_cuk_blocks(m * n), PW_CUK_THREADS, 0, st>>>(m, n, beta,
	    c, ldc);
	return (int)cudaGetLastError();
}
