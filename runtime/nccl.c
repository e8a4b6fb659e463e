/*
 * nccl.c - the GPUs' wires, under the sequenced transport (net_wire.c),
 * which posts every device's transfers in one global order and groups
 * what it posts at once: NCCL (ncclSend and ncclRecv in
 * ncclGroupStart/ncclGroupEnd) between devices on GPUs of their own, and
 * the matched wire with device-to-device copies between devices that
 * share a GPU (NCCL refuses two ranks on one GPU: an emulation).
 *
 * One process with several devices, each on its own GPU, gets its
 * communicators from ncclCommInitAll; under MPI every rank has one device
 * and rank 0's unique id reaches the others over the base net's
 * broadcast.  Each device posts on its own stream and the posting thread
 * polls that stream rather than blocking in CUDA, so that a stop, a
 * failed peer or NCCL's own asynchronous error is seen within a poll:
 * then every communicator of the process is aborted (ncclCommAbort),
 * which ends the transfers in flight on the GPU, and the exchanges
 * return.  A transfer that has not completed after PIPEWRIGHT_NCCL_TIMEOUT
 * seconds (default PW_NCCL_TIMEOUT) fails the same way, naming the
 * device and its peer: a peer that died without a word (its rank killed)
 * ends the others instead of hanging them.
 *
 * Wire buffers are device memory of their own (cudaMalloc on the
 * device's GPU), apart from the device's pool: the hand-offs are not
 * what the schedule's memory model counts.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "rt_int.h"

/* Seconds a transfer may wait for its peer before the run fails. */
#define PW_NCCL_TIMEOUT		300.0
/* Between two looks at a device's stream. */
#define PW_NCCL_POLL_NS		20000L

struct pw_nccl_dev {
	int	gpu;			/* -1: not this process's */
	ncclComm_t comm;		/* NULL once aborted */
	cudaStream_t stream;
	pthread_mutex_t lock;		/* posting against aborting */
};

struct pw_nccl {
	int	devices;
	bool	ranks;			/* one device per MPI rank */
	struct pw_nccl_dev *dev;	/* [devices] */
	atomic_bool aborted;
	double	timeout;
};

static int
pw_nccl_fail(struct pw_error *err, int device, int gpu, const char *call,
    const char *why)
{
	pw_error_set(err, "nccl: device %d (GPU %d): %s: %s", device, gpu,
	    call, why);
	return PW_ERR_RUNTIME;
}

/* The timeout the environment asks for (whole seconds, 1 to a day),
 * else PW_NCCL_TIMEOUT. */
static double
pw_nccl_timeout(void)
{
	const char *s = getenv("PIPEWRIGHT_NCCL_TIMEOUT");
	int t;

	if (s == NULL || !pw_parse_int(s, 1, 86400, &t))
		return PW_NCCL_TIMEOUT;
	return t;
}

/* Waits until device D's communicator has no operation in progress
 * (non-blocking communicators: their calls return ncclInProgress);
 * PW_ERR_CANCELLED once aborted. */
static int
pw_nccl_settle(struct pw_nccl *n, int d, const char *call,
    struct pw_error *err)
{
	struct pw_nccl_dev *x = &n->dev[d];
	struct timespec nap = { 0, PW_NCCL_POLL_NS };
	double t0 = pw_now();
	ncclResult_t st = ncclInProgress;

	for (;;) {
		pthread_mutex_lock(&x->lock);
		if (x->comm == NULL) {
			pthread_mutex_unlock(&x->lock);
			pw_error_set(err, "device %d: nccl: aborted", d);
			return PW_ERR_CANCELLED;
		}
		if (ncclCommGetAsyncError(x->comm, &st) != ncclSuccess)
			st = ncclSystemError;
		pthread_mutex_unlock(&x->lock);
		if (st != ncclInProgress)
			break;
		if (pw_now() - t0 > n->timeout)
			return pw_nccl_fail(err, d, x->gpu, call, "timed out");
		nanosleep(&nap, NULL);
	}
	if (st != ncclSuccess)
		return pw_nccl_fail(err, d, x->gpu, call, ncclGetErrorString(st));
	return PW_OK;
}

static int
pw_nccl_exchange(struct pw_rt_wire *wire, int device,
    const struct pw_rt_xfer *xf, int count, struct pw_error *err)
{
	struct pw_nccl *n = wire->ctx;
	struct pw_nccl_dev *x = &n->dev[device];
	struct timespec nap = { 0, PW_NCCL_POLL_NS };
	ncclResult_t st = ncclSuccess, async;
	cudaError_t ce;
	double t0;
	int i, rc;

	pthread_mutex_lock(&x->lock);
	if (x->comm == NULL) {
		pthread_mutex_unlock(&x->lock);
		pw_error_set(err, "device %d: nccl: aborted", device);
		return PW_ERR_CANCELLED;
	}
	cudaSetDevice(x->gpu);
	st = ncclGroupStart();
	for (i = 0; i < count && st == ncclSuccess; i++)
		st = xf[i].send ?
		    ncclSend(xf[i].buf, xf[i].n, ncclFloat32, xf[i].peer, x->comm,
		    x->stream) :
		    ncclRecv(xf[i].buf, xf[i].n, ncclFloat32, xf[i].peer, x->comm,
		    x->stream);
	/* A group once started is ended, whatever failed in it. */
	async = ncclGroupEnd();
	if (st == ncclSuccess)
		st = async;
	pthread_mutex_unlock(&x->lock);
	if (st == ncclInProgress)
		rc = pw_nccl_settle(n, device, "ncclGroupEnd", err);
	else if (st != ncclSuccess)
		rc = pw_nccl_fail(err, device, x->gpu, count == 1 ?
		    (xf[0].send ? "ncclSend" : "ncclRecv") :
		    "ncclSend/ncclRecv group", ncclGetErrorString(st));
	else
		rc = PW_OK;
	if (rc != PW_OK)
		return rc;
	for (t0 = pw_now();;) {
		if (atomic_load(&n->aborted)) {
			pw_error_set(err, "device %d: nccl: aborted", device);
			return PW_ERR_CANCELLED;
		}
		ce = cudaStreamQuery(x->stream);
		if (ce == cudaSuccess)
			return PW_OK;
		if (ce != cudaErrorNotReady)
			return pw_nccl_fail(err, device, x->gpu,
			    "cudaStreamQuery", cudaGetErrorString(ce));
		pthread_mutex_lock(&x->lock);
		st = x->comm != NULL ? ncclCommGetAsyncError(x->comm, &async) :
		    ncclSuccess;
		pthread_mutex_unlock(&x->lock);
		if (st == ncclSuccess && async != ncclSuccess &&
		    async != ncclInProgress)
			return pw_nccl_fail(err, device, x->gpu,
			    "ncclCommGetAsyncError", ncclGetErrorString(async));
		if (pw_now() - t0 > n->timeout) {
			char why[96];

			snprintf(why, sizeof why, "timed out after %.0f s "
			    "waiting for device %d (PIPEWRIGHT_NCCL_TIMEOUT)",
			    n->timeout, xf[0].peer);
			return pw_nccl_fail(err, device, x->gpu,
			    xf[0].send ? "ncclSend" : "ncclRecv", why);
		}
		nanosleep(&nap, NULL);
	}
}

static void
pw_nccl_abort(struct pw_rt_wire *wire)
{
	struct pw_nccl *n = wire->ctx;
	int d;

	if (atomic_exchange(&n->aborted, true))
		return;
	for (d = 0; d < n->devices; d++) {
		struct pw_nccl_dev *x = &n->dev[d];

		pthread_mutex_lock(&x->lock);
		if (x->comm != NULL) {
			ncclCommAbort(x->comm);
			x->comm = NULL;
		}
		pthread_mutex_unlock(&x->lock);
	}
}

/* Device memory on DEVICE's GPU, the caller's (pw_nccl_buf_release);
 * NULL when the GPU has no room. */
static float *
pw_nccl_buf_alloc(struct pw_rt_wire *wire, int device, size_t n)
{
	struct pw_nccl *c = wire->ctx;
	void *p = NULL;

	cudaSetDevice(c->dev[device].gpu);
	if (cudaMalloc(&p, (n == 0 ? 1 : n) * sizeof(float)) != cudaSuccess)
		return NULL;
	return p;
}

static void
pw_nccl_buf_release(struct pw_rt_wire *wire, int device, float *buf)
{
	struct pw_nccl *c = wire->ctx;

	cudaSetDevice(c->dev[device].gpu);
	cudaFree(buf);
}

/* Between a wire buffer and a hand-off buffer of the backend's (unified
 * addressing tells the direction); returns once DST holds the floats. */
static int
pw_nccl_copy(struct pw_rt_wire *wire, int device, float *dst,
    const float *src, size_t n, struct pw_error *err)
{
	struct pw_nccl *c = wire->ctx;
	cudaError_t ce;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(c->dev[device].gpu);
	if ((ce = cudaMemcpy(dst, src, n * sizeof *dst, cudaMemcpyDefault)) !=
	    cudaSuccess)
		return pw_nccl_fail(err, device, c->dev[device].gpu,
		    "cudaMemcpy", cudaGetErrorString(ce));
	return PW_OK;
}

static void
pw_nccl_close(struct pw_rt_wire *wire)
{
	struct pw_nccl *n;
	int d;

	if (wire == NULL)
		return;
	n = wire->ctx;
	for (d = 0; d < n->devices; d++) {
		struct pw_nccl_dev *x = &n->dev[d];

		if (x->gpu < 0)
			continue;
		cudaSetDevice(x->gpu);
		if (x->comm != NULL)
			ncclCommDestroy(x->comm);
		if (x->stream != NULL)
			cudaStreamDestroy(x->stream);
		pthread_mutex_destroy(&x->lock);
	}
	free(n->dev);
	free(n);
	free(wire);
}

/* One process, every device here on its own GPU: ncclCommInitAll. */
static int
pw_nccl_open_local(struct pw_nccl *n, struct pw_error *err)
{
	ncclComm_t *comms = pw_xcalloc((size_t)n->devices, sizeof *comms);
	int *list = pw_xcalloc((size_t)n->devices, sizeof *list), d;
	ncclResult_t st;

	for (d = 0; d < n->devices; d++)
		list[d] = n->dev[d].gpu;
	st = ncclCommInitAll(comms, n->devices, list);
	if (st == ncclSuccess)
		for (d = 0; d < n->devices; d++)
			n->dev[d].comm = comms[d];
	free(comms);
	free(list);
	if (st != ncclSuccess)
		return pw_nccl_fail(err, 0, n->dev[0].gpu, "ncclCommInitAll",
		    ncclGetErrorString(st));
	return PW_OK;
}

/* This rank's device D of BASE's ranks: rank 0's unique id over BASE's
 * broadcast, a non-blocking communicator (its set-up may wait for a
 * peer that never comes: it is polled, and times out). */
static int
pw_nccl_open_rank(struct pw_nccl *n, struct pw_rt_net *base, int d,
    struct pw_error *err)
{
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	ncclUniqueId id;
	ncclResult_t st;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	memset(&id, 0, sizeof id);
	if (base->rank == 0) {
		if ((st = ncclGetUniqueId(&id)) != ncclSuccess)
			return pw_nccl_fail(err, d, n->dev[d].gpu,
			    "ncclGetUniqueId", ncclGetErrorString(st));
		buf = pw_xmalloc(sizeof id);
		memcpy(buf, &id, sizeof id);
		len = sizeof id;
	}
	rc = base->bcast(base, &buf, &len, err);
	if (rc == PW_OK && len != sizeof id) {
		pw_error_set(err, "nccl: rank %d: a unique id of %zu bytes "
		    "(%zu expected)", base->rank, len, sizeof id);
		rc = PW_ERR_RUNTIME;
	}
	if (rc == PW_OK)
		memcpy(&id, buf, sizeof id);
	free(buf);
	if (rc != PW_OK)
		return rc;
	config.blocking = 0;
	st = ncclCommInitRankConfig(&n->dev[d].comm, base->size, id, base->rank,
	    &config);
	if (st != ncclSuccess && st != ncclInProgress) {
		n->dev[d].comm = NULL;
		return pw_nccl_fail(err, d, n->dev[d].gpu,
		    "ncclCommInitRankConfig", ncclGetErrorString(st));
	}
	return pw_nccl_settle(n, d, "ncclCommInitRankConfig", err);
}

int
pw_rt_wire_nccl(struct pw_rt_net *base, int devices, const int *gpu,
    struct pw_rt_wire **out, struct pw_error *err)
{
	struct pw_rt_wire *wire = pw_xcalloc(1, sizeof *wire);
	struct pw_nccl *n = pw_xcalloc(1, sizeof *n);
	cudaError_t ce;
	int d, rc = PW_OK;

	n->devices = devices;
	n->ranks = base->kind == PW_RT_MPI;
	n->dev = pw_xcalloc((size_t)devices, sizeof *n->dev);
	n->timeout = pw_nccl_timeout();
	atomic_init(&n->aborted, false);
	*wire = (struct pw_rt_wire){ "nccl", n, pw_nccl_exchange, pw_nccl_abort,
	    pw_nccl_buf_alloc, pw_nccl_buf_release, pw_nccl_copy,
	    pw_nccl_close };
	for (d = 0; d < devices; d++) {
		struct pw_nccl_dev *x = &n->dev[d];

		x->gpu = gpu[d];
		if (x->gpu < 0)
			continue;
		pthread_mutex_init(&x->lock, NULL);
		if ((ce = cudaSetDevice(x->gpu)) != cudaSuccess ||
		    (ce = cudaStreamCreateWithFlags(&x->stream,
		    cudaStreamNonBlocking)) != cudaSuccess) {
			x->stream = NULL;
			rc = pw_nccl_fail(err, d, x->gpu, "cudaStreamCreate",
			    cudaGetErrorString(ce));
			break;
		}
	}
	if (rc == PW_OK)
		rc = n->ranks ? pw_nccl_open_rank(n, base, base->rank, err) :
		    pw_nccl_open_local(n, err);
	if (rc != PW_OK) {
		pw_nccl_abort(wire);
		pw_nccl_close(wire);
		return rc;
	}
	*out = wire;
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* Devices sharing a GPU: the matched wire with device copies           */

/* Device memory on DEVICE's GPU (ARG: the GPU of each device), the
 * caller's (pw_copies_release); NULL when the GPU has no room. */
static float *
pw_copies_alloc(void *arg, int device, size_t n)
{
	const int *gpu = arg;
	void *p = NULL;

	cudaSetDevice(gpu[device]);
	if (cudaMalloc(&p, (n == 0 ? 1 : n) * sizeof(float)) != cudaSuccess)
		return NULL;
	return p;
}

static void
pw_copies_release(void *arg, int device, float *buf)
{
	const int *gpu = arg;

	cudaSetDevice(gpu[device]);
	cudaFree(buf);
}

/* Device to device (or from and to a managed hand-off buffer: unified
 * addressing tells which); returns once DST holds the floats. */
static int
pw_copies_copy(void *arg, int device, float *dst, const float *src,
    size_t n, struct pw_error *err)
{
	const int *gpu = arg;
	cudaError_t ce;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(gpu[device]);
	if ((ce = cudaMemcpy(dst, src, n * sizeof *dst, cudaMemcpyDefault)) !=
	    cudaSuccess) {
		pw_error_set(err, "cuda: device %d (GPU %d): hand-off: "
		    "cudaMemcpy: %s", device, gpu[device],
		    cudaGetErrorString(ce));
		return PW_ERR_RUNTIME;
	}
	return PW_OK;
}

int
pw_rt_wire_cuda_copies(int devices, const int *gpu, struct pw_rt_wire **out,
    struct pw_error *err)
{
	struct pw_rt_wire_memory mem = { "device copies", pw_copies_alloc,
	    pw_copies_release, pw_copies_copy, free, NULL };
	int *copy = pw_xcalloc((size_t)devices + 1, sizeof *copy), rc;

	memcpy(copy, gpu, (size_t)devices * sizeof *copy);
	mem.arg = copy;
	if ((rc = pw_rt_wire_matched(devices, &mem, out, err)) != PW_OK)
		free(copy);
	return rc;
}
