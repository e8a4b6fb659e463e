/*
 * Between the CUDA backend's C file (cuda.c) and its kernels
 * (cuda_kernels.cu): the launchers, each enqueuing one kernel on a stream
 * and returning the launch's cudaError_t as an int.
 */
#ifndef PW_CUDA_INT_H
#define PW_CUDA_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

int	pw_cuk_launch_gelu(cudaStream_t, const float *h, float *a, size_t n);
int	pw_cuk_launch_gelu_grad(cudaStream_t, float *h, const float *da,
	    size_t n);
int	pw_cuk_launch_loss(cudaStream_t, float *y, const float *t, size_t n,
	    double *out);
int	pw_cuk_launch_fill(cudaStream_t, float *x, size_t n, uint64_t state,
	    float scale);
int	pw_cuk_launch_axpy(cudaStream_t, size_t n, float alpha, float *x,
	    float *y);
int	pw_cuk_launch_scale(cudaStream_t, size_t m, size_t n, float beta,
	    float *c, size_t ldc);

#ifdef __cplusplus
}
#endif

#endif
