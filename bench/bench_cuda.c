/*
 * bench_cuda.c - what the GPU gives the runtime, beside the hardware
 * preset's figures (issue 17's targets): device-to-host and host-to-device
 * bandwidth between pinned host memory and device memory, each direction
 * alone and both at once (on two streams), and the dense bf16 GEMM rate
 * through cuBLAS (fp32 accumulation).  Each figure is the median of
 * BENCH_RUNS timed runs after one untimed, timed by CUDA events on the
 * GPU's own clock.  Built only with CUDA; where no GPU is visible it says
 * "no GPU" and exits 77 (automake's skip).
 *
 *   ./bench/bench_cuda [PRESET]	(default H200)
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench.h"
#include "pipewright.h"

#define BENCH_RUNS	9
/* The copies' size: large enough that the link's latency is noise. */
#define BENCH_COPY	((size_t)256 << 20)
/* The GEMM's sides: square bf16 GEMMs of this order fill an H100/H200. */
#define BENCH_GEMM_N	8192

/* Exits with what failed where a CUDA call does. */
#define BENCH_CU(call) bench_cu((call), #call, __LINE__)
static void
bench_cu(cudaError_t e, const char *what, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "bench_cuda:%d: %s: %s\n", line, what,
		    cudaGetErrorString(e));
		exit(1);
	}
}

/* The copies of one run: D2H on S[0] when D2H, H2D on S[1] when H2D,
 * started together; the seconds from the start to each stream's end
 * into T[0] (D2H) and T[1] (H2D). */
static void
bench_copy(void *const *buf, cudaStream_t *s, bool d2h, bool h2d, double *t)
{
	cudaEvent_t start, end[2];
	float ms;
	int i;

	BENCH_CU(cudaEventCreate(&start));
	for (i = 0; i < 2; i++)
		BENCH_CU(cudaEventCreate(&end[i]));
	BENCH_CU(cudaEventRecord(start, s[0]));
	BENCH_CU(cudaStreamWaitEvent(s[1], start, 0));
	if (d2h)
		BENCH_CU(cudaMemcpyAsync(buf[2], buf[0], BENCH_COPY,
		    cudaMemcpyDeviceToHost, s[0]));
	if (h2d)
		BENCH_CU(cudaMemcpyAsync(buf[1], buf[3], BENCH_COPY,
		    cudaMemcpyHostToDevice, s[1]));
	for (i = 0; i < 2; i++)
		BENCH_CU(cudaEventRecord(end[i], s[i]));
	for (i = 0; i < 2; i++) {
		BENCH_CU(cudaEventSynchronize(end[i]));
		BENCH_CU(cudaEventElapsedTime(&ms, start, end[i]));
		t[i] = ms / 1e3;
	}
	BENCH_CU(cudaEventDestroy(start));
	for (i = 0; i < 2; i++)
		BENCH_CU(cudaEventDestroy(end[i]));
}

/* The median over the runs of each direction's bandwidth, bytes/s, into
 * BW[0] (D2H) and BW[1] (H2D), of those that ran; BUF: device,
 * device, host, host. */
static void
bench_copies(void *const *buf, cudaStream_t *s, bool d2h, bool h2d,
    double *bw)
{
	double t[BENCH_RUNS][2], v[BENCH_RUNS];
	int r, i;

	bench_copy(buf, s, d2h, h2d, t[0]);
	for (r = 0; r < BENCH_RUNS; r++)
		bench_copy(buf, s, d2h, h2d, t[r]);
	for (i = 0; i < 2; i++) {
		if (!(i == 0 ? d2h : h2d))
			continue;
		for (r = 0; r < BENCH_RUNS; r++)
			v[r] = BENCH_COPY / t[r][i];
		bw[i] = bench_median(v, BENCH_RUNS);
	}
}

/* The median bf16 GEMM rate, FLOP/s. */
static double
bench_gemm(cudaStream_t s)
{
	const size_t n = BENCH_GEMM_N;
	const float one = 1, zero = 0;
	uint16_t *a, *b, *c;	/* bf16 storage */
	cublasHandle_t h;
	cudaEvent_t e0, e1;
	double t[BENCH_RUNS];
	float ms;
	int r;

	BENCH_CU(cudaMalloc((void **)&a, n * n * sizeof *a));
	BENCH_CU(cudaMalloc((void **)&b, n * n * sizeof *b));
	BENCH_CU(cudaMalloc((void **)&c, n * n * sizeof *c));
	BENCH_CU(cudaMemsetAsync(a, 0, n * n * sizeof *a, s));
	BENCH_CU(cudaMemsetAsync(b, 0, n * n * sizeof *b, s));
	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
	    cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "bench_cuda: cublasCreate failed\n");
		exit(1);
	}
	BENCH_CU(cudaEventCreate(&e0));
	BENCH_CU(cudaEventCreate(&e1));
	for (r = -1; r < BENCH_RUNS; r++) {
		BENCH_CU(cudaEventRecord(e0, s));
		if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n,
		    (int)n, &one, a, CUDA_R_16BF, (int)n, b, CUDA_R_16BF,
		    (int)n, &zero, c, CUDA_R_16BF, (int)n, CUBLAS_COMPUTE_32F,
		    CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
			fprintf(stderr, "bench_cuda: cublasGemmEx failed\n");
			exit(1);
		}
		BENCH_CU(cudaEventRecord(e1, s));
		BENCH_CU(cudaEventSynchronize(e1));
		BENCH_CU(cudaEventElapsedTime(&ms, e0, e1));
		if (r >= 0)
			t[r] = 2.0 * (double)n * (double)n * (double)n /
			    (ms / 1e3);
	}
	BENCH_CU(cudaEventDestroy(e0));
	BENCH_CU(cudaEventDestroy(e1));
	cublasDestroy(h);
	BENCH_CU(cudaFree(a));
	BENCH_CU(cudaFree(b));
	BENCH_CU(cudaFree(c));
	return bench_median(t, BENCH_RUNS);
}

/* One row: what was measured, ours, the preset's and their ratio. */
static void
bench_row(const char *what, double ours, double preset, const char *unit)
{
	printf("%-24s %10.1f %10.1f %-7s %6.3f\n", what, ours, preset, unit,
	    ours / preset);
}

int
main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "H200";
	const struct pw_hardware *hw = pw_hardware_find(name);
	void *buf[4];
	cudaStream_t s[2];
	double d2h[2], h2d[2], both[2], gemm;
	int n = 0, i;

	if (hw == NULL) {
		fprintf(stderr, "bench_cuda: no hardware preset '%s'\n", name);
		return 2;
	}
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		printf("no GPU\n");
		return 77;
	}
	BENCH_CU(cudaSetDevice(0));
	for (i = 0; i < 2; i++)
		BENCH_CU(cudaStreamCreateWithFlags(&s[i],
		    cudaStreamNonBlocking));
	for (i = 0; i < 2; i++) {
		BENCH_CU(cudaMalloc(&buf[i], BENCH_COPY));
		BENCH_CU(cudaHostAlloc(&buf[2 + i], BENCH_COPY,
		    cudaHostAllocDefault));
		memset(buf[2 + i], 0, BENCH_COPY);
		BENCH_CU(cudaMemset(buf[i], 0, BENCH_COPY));
	}
	bench_copies(buf, s, true, false, d2h);
	bench_copies(buf, s, false, true, h2d);
	bench_copies(buf, s, true, true, both);
	gemm = bench_gemm(s[0]);
	printf("bench_cuda: GPU 0 against the %s preset; medians of %d "
	    "runs, CUDA events; %zu MiB pinned copies, bf16 GEMMs of %d^3\n",
	    hw->name, BENCH_RUNS, BENCH_COPY >> 20, BENCH_GEMM_N);
	printf("%-24s %10s %10s %-7s %6s\n", "figure", "ours", "preset",
	    "unit", "ratio");
	bench_row("D2H alone", d2h[0] / 1e9, hw->pcie_d2h / 1e9, "GB/s");
	bench_row("H2D alone", h2d[1] / 1e9, hw->pcie_h2d / 1e9, "GB/s");
	bench_row("D2H with H2D", both[0] / 1e9, hw->pcie_d2h / 1e9, "GB/s");
	bench_row("H2D with D2H", both[1] / 1e9, hw->pcie_h2d / 1e9, "GB/s");
	bench_row("bf16 GEMM", gemm / 1e12, hw->peak_flops *
	    hw->efficiency / 1e12, "TFLOP/s");
	printf("(the GEMM's preset figure is the peak times the preset's "
	    "efficiency, %.2f: what the cost model assumes)\n",
	    hw->efficiency);
	for (i = 0; i < 2; i++) {
		BENCH_CU(cudaFree(buf[i]));
		BENCH_CU(cudaFreeHost(buf[2 + i]));
	}
	for (i = 0; i < 2; i++)
		BENCH_CU(cudaStreamDestroy(s[i]));
	return 0;
}
