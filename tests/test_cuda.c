/*
 * The CUDA backend where it can be checked without a GPU: how pipeline
 * devices map onto GPUs (the emulation's layout), which wire the hand-offs
 * take (NCCL, device copies, the host wire), that the backend's module
 * loads (this build's, named by PIPEWRIGHT_CUDA_MODULE), its refusal
 * when no GPU is visible or CUDA was not built, the emulation's label,
 * the arithmetic each backend computes in and the gradient check's bound.
 * With a GPU, its primitives against the CPU backend's: the seeded fill
 * equal bit for bit, GELU, its gradient, the loss and an fp32 GEMM within
 * fp32's rounding; without one those tests print "# SKIP no GPU".
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"
#include "tap.h"

/* The tests that need a GPU (tc_primitives and tc_device). */
#define TC_GPU_TESTS	12
#define TC_N		1000

static void
tc_mapping(void)
{
	static const int four_on_one[] = { 0, 0, 0, 0 };
	static const int five_on_two[] = { 0, 0, 0, 1, 1 };
	static const int seven_on_three[] = { 0, 0, 0, 1, 1, 2, 2 };
	int d, ok;

	for (ok = 1, d = 0; d < 4; d++)
		ok &= pw_rt_gpu_of(d, 4, 1) == four_on_one[d];
	tap_ok(ok, "4 devices on 1 GPU: all on GPU 0");
	for (ok = 1, d = 0; d < 5; d++)
		ok &= pw_rt_gpu_of(d, 5, 2) == five_on_two[d];
	tap_ok(ok, "5 devices on 2 GPUs: 3 then 2");
	for (ok = 1, d = 0; d < 7; d++)
		ok &= pw_rt_gpu_of(d, 7, 3) == seven_on_three[d];
	tap_ok(ok, "7 devices on 3 GPUs: 3, 2, 2");
	for (ok = 1, d = 0; d < 4; d++)
		ok &= pw_rt_gpu_of(d, 4, 8) == d;
	tap_ok(ok, "4 devices on 8 GPUs: each its own");
	tap_int(pw_rt_gpu_of(4, 4, 1), -1, "a device past the last: -1");
	tap_int(pw_rt_gpu_of(0, 4, 0), -1, "no GPUs: -1");
	tap_int(pw_rt_gpu_of(-1, 4, 2), -1, "a negative device: -1");
}

/* The arithmetic each backend computes in and the gradient check's bound
 * for it: the default CUDA launch is bf16, whose bound is 1e-2. */
static void
tc_math(void)
{
	tap_int(pw_rt_math_of(PW_RT_CUDA, NULL), PW_RT_BF16,
	    "cuda without PW_CUDA_MATH: bf16");
	tap_int(pw_rt_math_of(PW_RT_CUDA, "fp32"), PW_RT_FP32,
	    "cuda with PW_CUDA_MATH=fp32: fp32");
	tap_int(pw_rt_math_of(PW_RT_CUDA, "bf16"), PW_RT_BF16,
	    "cuda with PW_CUDA_MATH=bf16: bf16");
	tap_int(pw_rt_math_of(PW_RT_CPU, NULL), PW_RT_FP32, "cpu: fp32");
	tap_int(pw_rt_math_of(PW_RT_CPU, "bf16"), PW_RT_FP32,
	    "cpu: fp32 whatever PW_CUDA_MATH says");
	tap_ok(pw_rt_math_tolerance(PW_RT_FP32) == 1e-5 &&
	    strcmp(pw_rt_math_tolerance_text(PW_RT_FP32), "1e-5") == 0,
	    "fp32's bound: 1e-5");
	tap_ok(pw_rt_math_tolerance(PW_RT_BF16) == 1e-2 &&
	    strcmp(pw_rt_math_tolerance_text(PW_RT_BF16), "1e-2") == 0,
	    "bf16's bound: 1e-2");
	tap_str(pw_rt_math_name(PW_RT_BF16), "bf16", "bf16's name");
}

#ifdef HAVE_CUDA
/* Whether the N floats of X and Y differ by at most TOL relative to the
 * larger magnitude (exactly equal when TOL is 0). */
static bool
tc_close(const float *x, const float *y, size_t n, double tol)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fabs((double)x[i] - y[i]) > tol * fmax(1.0,
		    fmax(fabs(x[i]), fabs(y[i]))))
			return false;
	return true;
}

/* Each primitive on both backends from the same inputs; the GPU's buffers
 * are managed memory, read here after the synchronous call. */
static void
tc_primitives(void)
{
	const struct pw_rt_cuda_module *cuda = pw_rt_cuda_load(NULL, 0);
	const struct pw_rt_backend_ops *g = cuda->ops, *c = &pw_rt_cpu;
	struct pw_error err;
	void *gx, *cx;
	float *a[2], *b[2], *h[2], *t[2];
	double lg = 0, lc = 0;
	int i, ok;

	setenv("PW_CUDA_MATH", "fp32", 1);
	cuda->plan(&(struct pw_rt_cuda_plan){ 1, 1, false, 0, NULL, NULL,
	    NULL });
	if (!tap_ok(g->open(0, &gx, &err) == PW_OK, "cuda opens device 0")) {
		tap_diag("%s", err.msg);
		return;
	}
	c->open(0, &cx, &err);
	for (i = 0; i < 2; i++) {
		const struct pw_rt_backend_ops *o = i == 0 ? g : c;
		void *x = i == 0 ? gx : cx;

		a[i] = o->alloc(x, TC_N * TC_N * sizeof (float));
		b[i] = o->alloc(x, TC_N * TC_N * sizeof (float));
		h[i] = o->alloc(x, TC_N * TC_N * sizeof (float));
		t[i] = o->alloc(x, TC_N * TC_N * sizeof (float));
		o->fill(x, a[i], TC_N * TC_N, 7, 1.0f, &err);
		o->fill(x, b[i], TC_N * TC_N, 11, 0.5f, &err);
	}
	tap_ok(tc_close(a[0], a[1], TC_N * TC_N, 0) &&
	    tc_close(b[0], b[1], TC_N * TC_N, 0), "fill: the same numbers");
	ok = 1;
	for (i = 0; i < 2; i++) {
		const struct pw_rt_backend_ops *o = i == 0 ? g : c;
		void *x = i == 0 ? gx : cx;

		ok &= o->gemm(x, false, true, TC_N, TC_N, TC_N, 1.0f, a[i],
		    TC_N, b[i], TC_N, 0.0f, h[i], TC_N, &err) == PW_OK;
	}
	tap_ok(ok && tc_close(h[0], h[1], TC_N * TC_N, 1e-5),
	    "fp32 GEMM A B^T within 1e-5");
	for (ok = 1, i = 0; i < 2; i++) {
		const struct pw_rt_backend_ops *o = i == 0 ? g : c;
		void *x = i == 0 ? gx : cx;

		ok &= o->gelu(x, a[i], t[i], TC_N * TC_N, &err) == PW_OK;
	}
	tap_ok(ok && tc_close(t[0], t[1], TC_N * TC_N, 1e-6), "gelu within 1e-6");
	for (ok = 1, i = 0; i < 2; i++) {
		const struct pw_rt_backend_ops *o = i == 0 ? g : c;
		void *x = i == 0 ? gx : cx;

		ok &= o->gelu_grad(x, a[i], b[i], TC_N * TC_N, &err) == PW_OK;
		ok &= o->loss(x, t[i], b[i], TC_N * TC_N, i == 0 ? &lg : &lc,
		    &err) == PW_OK;
	}
	tap_ok(ok && tc_close(a[0], a[1], TC_N * TC_N, 1e-6) &&
	    fabs(lg - lc) <= 1e-9 * fmax(1.0, fabs(lc)),
	    "gelu's gradient within 1e-6, the loss within 1e-9");
	for (i = 0; i < 2; i++) {
		const struct pw_rt_backend_ops *o = i == 0 ? g : c;
		void *x = i == 0 ? gx : cx;

		o->release(x, a[i]);
		o->release(x, b[i]);
		o->release(x, h[i]);
		o->release(x, t[i]);
	}
	g->close(gx);
	c->close(cx);
}

/* A device opened with a plan: its arena memory from the pool of the
 * planned size (the peak the pool's, each piece aligned), pinned host
 * memory from its own pool (and past it from blocks kept for reuse), a
 * transfer's lane waiting on the compute
 * lane's event, and the events' clock: a GEMM's end after its start,
 * both after the reference. */
static void
tc_device(void)
{
	const struct pw_rt_cuda_module *cuda = pw_rt_cuda_load(NULL, 0);
	const struct pw_rt_backend_ops *g = cuda->ops;
	const double pool = 64.0 * 1048576, host = 1048576;
	struct pw_error err;
	float *a, *b, *h, *pin, *spill;
	double t0, t1;
	void *x;
	int ok;

	cuda->plan(&(struct pw_rt_cuda_plan){ 1, 1, false, 4, NULL, &pool,
	    &host });
	if (!tap_ok(g->open(0, &x, &err) == PW_OK, "cuda opens device 0 with "
	    "a pool of 64 MiB and 1 MiB pinned")) {
		tap_diag("%s", err.msg);
		return;
	}
	a = g->device_alloc(x, 1000);
	b = g->device_alloc(x, 1000);
	tap_ok(a != NULL && b != NULL && (char *)b - (char *)a == 1024,
	    "device memory comes from the pool, pieces aligned to 256 bytes");
	tap_ok(g->device_alloc(x, 65 * 1048576) == NULL,
	    "more than the pool is refused");
	tap_int((long long)g->peak(x), 2048, "the peak is the pool's: 2 KiB");
	g->device_release(x, b);
	g->device_release(x, a);
	pin = g->host_alloc(x, 4096);
	spill = g->host_alloc(x, 2 * 1048576);
	g->host_release(x, spill);
	tap_ok(pin != NULL && spill != NULL &&
	    ((char *)spill < (char *)pin || (char *)spill > (char *)pin +
	    1048576) && g->host_alloc(x, 1048576 + 1) == spill,
	    "pinned memory from its own pool, past it from a block kept for "
	    "the next that fits");
	g->host_release(x, spill);
	a = g->alloc(x, TC_N * TC_N * sizeof (float));
	b = g->alloc(x, TC_N * TC_N * sizeof (float));
	h = g->alloc(x, TC_N * TC_N * sizeof (float));
	ok = g->fill(x, a, TC_N * TC_N, 3, 1.0f, &err) == PW_OK &&
	    g->clock_start(x, &err) == PW_OK &&
	    g->mark(x, PW_RT_LANE_COMPUTE, 0, false, &err) == PW_OK &&
	    g->gemm(x, false, false, TC_N, TC_N, TC_N, 1.0f, a, TC_N, a, TC_N,
	    0.0f, b, TC_N, &err) == PW_OK &&
	    g->mark(x, PW_RT_LANE_COMPUTE, 0, true, &err) == PW_OK &&
	    g->wait(x, PW_RT_LANE_D2H, 0, &err) == PW_OK &&
	    g->copy(x, pin, b, 1024, PW_RT_D2H, &err) == PW_OK &&
	    g->op_time(x, 0, false, &t0, &err) == PW_OK &&
	    g->op_time(x, 0, true, &t1, &err) == PW_OK;
	if (!tap_ok(ok, "a GEMM timed by events, its result offloaded on "
	    "the D2H lane after its event"))
		tap_diag("%s", err.msg);
	tap_ok(ok && t1 > t0 && t1 - t0 < 1.0 && pin[0] == b[0],
	    "its end after its start, within a second; the copy holds it");
	g->release(x, a);
	g->release(x, b);
	g->release(x, h);
	g->host_release(x, pin);
	g->close(x);
}
#endif

/* The backend's module (cuda_load.c) loads whether a GPU is there or
 * not: the suite's, which PIPEWRIGHT_CUDA_MODULE names. */
static void
tc_module(void)
{
#ifdef HAVE_CUDA
	char why[512] = "";
	const struct pw_rt_cuda_module *cuda = pw_rt_cuda_load(why, sizeof why);

	if (!tap_ok(cuda != NULL, "the CUDA backend's module loads")) {
		tap_diag("%s", why);
		return;
	}
	tap_str(cuda->version, PACKAGE_STRING, "the module is this build's");
	tap_int(cuda->ops->kind, PW_RT_CUDA, "its backend is cuda");
#else
	tap_skip("this build has no CUDA", "the CUDA backend's module loads");
#endif
}

static void
tc_gpu(void)
{
	char why[512] = "";
	struct pw_rt_opts o;
	int i;

	pw_rt_opts_init(&o);
	o.backend = PW_RT_CUDA;
	if (!pw_rt_backend_available(PW_RT_CUDA, why, sizeof why)) {
#ifdef HAVE_CUDA
		tap_ok(strncmp(why, "no GPU visible (cudaGetDeviceCount: ",
		    36) == 0, "no GPU: one line says so (%s)", why);
#else
		tap_str(why, "this build has no CUDA (configure found none, or "
		    "--without-cuda)", "without CUDA: the build says so");
#endif
		tap_int(pw_rt_backend_default(), PW_RT_CPU,
		    "the default backend is cpu then");
		tap_ok(!pw_rt_emulation(&o, 4, why, sizeof why),
		    "no GPU: no emulation");
		for (i = 0; i < TC_GPU_TESTS; i++)
			tap_skip("no GPU", "cuda device test %d", i + 1);
		return;
	}
#ifdef HAVE_CUDA
	tap_int(pw_rt_backend_default(), PW_RT_CUDA,
	    "a GPU visible: the default backend is cuda");
	o.gpus = 1;
	tap_ok(pw_rt_emulation(&o, 4, why, sizeof why) &&
	    strcmp(why, "an emulation: 4 devices on 1 GPU, as separate "
	    "streams with device-to-device copies") == 0,
	    "--gpus 1, 4 devices: an emulation (%s)", why);
	tc_primitives();
	tc_device();
#endif
}

/* Which wire a launch picks: NCCL only where every device of the
 * process has a GPU of its own (or a rank each), device copies where
 * they share one; the host wire when asked for; none for the CPU or one
 * device. */
static void
tc_wire_pick(void)
{
	static const int own[] = { 0, 1, 2, 3 }, shared[] = { 0, 0, 1, 1 },
	    rank[] = { -1, 1, -1, -1 }, one[] = { 0, 0, 0, 0 };
	static const struct {
		enum pw_rt_backend backend;
		enum pw_rt_transport transport;
		bool	host_wire;
		int	devices;
		const int *gpu;
		enum pw_rt_wire_kind want;
		const char *what;
	} cases[] = {
		{ PW_RT_CUDA, PW_RT_LOCAL, false, 4, own, PW_RT_WIRE_NCCL,
		    "4 devices on 4 GPUs: NCCL" },
		{ PW_RT_CUDA, PW_RT_LOCAL, false, 4, shared, PW_RT_WIRE_COPIES,
		    "4 devices on 2 GPUs: device copies" },
		{ PW_RT_CUDA, PW_RT_LOCAL, false, 4, one, PW_RT_WIRE_COPIES,
		    "4 devices on 1 GPU: device copies" },
		{ PW_RT_CUDA, PW_RT_MPI, false, 4, own, PW_RT_WIRE_NCCL,
		    "a rank each on a GPU of its own under MPI: NCCL" },
		{ PW_RT_CUDA, PW_RT_MPI, false, 4, shared, PW_RT_WIRE_NONE,
		    "ranks sharing GPUs under MPI: the MPI transport's own" },
		{ PW_RT_CUDA, PW_RT_LOCAL, false, 1, one, PW_RT_WIRE_NONE,
		    "one device: no hand-offs, no wire" },
		{ PW_RT_CPU, PW_RT_LOCAL, false, 4, rank, PW_RT_WIRE_NONE,
		    "the CPU: the local mailboxes" },
		{ PW_RT_CPU, PW_RT_LOCAL, true, 4, rank, PW_RT_WIRE_HOST,
		    "the CPU asked for the host wire: it" },
		{ PW_RT_CUDA, PW_RT_LOCAL, true, 4, own, PW_RT_WIRE_HOST,
		    "CUDA asked for the host wire: it too" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		tap_int(pw_rt_wire_pick(cases[i].backend, cases[i].transport,
		    cases[i].host_wire, cases[i].devices, cases[i].gpu),
		    cases[i].want, "%s", cases[i].what);
}

int
main(void)
{
	tc_mapping();
	tc_wire_pick();
	tc_math();
	tc_module();
	tc_gpu();
	return tap_done();
}
