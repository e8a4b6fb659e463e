/*
 * Inside the CUDA backend's module (rt_int.h, pw_rt_cuda_module): between
 * its C files (cuda.c, nccl.c) and its kernels (cuda_kernels.cu).  The
 * launchers each enqueue one kernel on a stream and return the launch's
 * cudaError_t as an int; the wires are nccl.c's, which the module's table
 * in cuda.c hands to the program.
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

struct pw_rt_net;
struct pw_rt_wire;
struct pw_error;
/* The table's wire_nccl and wire_copies (rt_int.h says what they make). */
int	pw_rt_wire_nccl(struct pw_rt_net *base, int devices, const int *gpu,
	    struct pw_rt_wire **out, struct pw_error *);
int	pw_rt_wire_cuda_copies(int devices, const int *gpu,
	    struct pw_rt_wire **out, struct pw_error *);

#ifdef __cplusplus
}
#endif

#endif
