/*
 * nccl.c - the GPUs' wires, under the sequenced transport (net_wire.c),
 * which posts every device's transfers in one global order and groups
 * what it posts at once: NCCL (ncclSend and ncclRecv in
 * ncclGroupStart/ncclGroupEnd) between devices on GPUs of their own, and
 * the matched wire with device-to-device copies between devices that
 * share a GPU (NCCL refuses two ranks on one GPU: an emulation).
 *
 * Every communicator is non-blocking (ncclConfig_t.blocking = 0): a call
 * returns ncclInProgress at once and is polled with
 * ncclCommGetAsyncError, never waited on inside NCCL.  So a stop, a
 * failed peer or NCCL's own asynchronous error is seen within a poll, and
 * ncclCommAbort can end a communicator whatever it is doing (a blocking
 * one, ncclCommInitAll's, may block in ncclGroupEnd while its first
 * transfer to a peer sets the connection up, and cannot be aborted
 * then).  One process with several devices makes its communicators as
 * ncclCommInitAll does, one unique id and an ncclCommInitRankConfig per
 * GPU in one group; under MPI every rank has one device and rank 0's
 * unique id reaches the others over the base net's broadcast.  Each
 * device posts on a stream of its own and the posting thread polls it;
 * a transfer that has not completed after PIPEWRIGHT_NCCL_TIMEOUT seconds
 * (default PW_NCCL_TIMEOUT) fails, naming the device and its peers, so
 * that a peer that died without a word ends the others instead of hanging
 * them.  On a stop every communicator of the process is aborted, which
 * ends the transfers in flight on the GPU; a run that ends well
 * finalizes and destroys them.
 *
 * Wire buffers are device memory of their own (cudaMalloc on the
 * device's GPU), apart from the device's pool: the hand-offs are not
 * what the schedule's memory model counts.  Copies between them and the
 * engine's hand-off buffers go on a copy stream of each device's,
 * waited for, so that they are ordered against the non-blocking compute
 * and transfer streams (the legacy default stream is not).
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

#include "cuda_int.h"
#include "rt_int.h"

/* ------------------------------------------------------------------ */
/* The wires' memory on the devices' GPUs                              */

/* Each device's GPU and a copy stream of its own: a copy between a
 * wire's buffer and a hand-off buffer goes there and is waited for, so
 * that it is ordered against the non-blocking compute and transfer
 * streams (the legacy default stream is not). */
struct pw_gpu_mem {
	int	devices;
	int	*gpu;		/* -1: not this process's */
	cudaStream_t *copy;
};

static void
pw_gpu_mem_close(void *arg)
{
	struct pw_gpu_mem *m = arg;
	int d;

	if (m == NULL)
		return;
	for (d = 0; d < m->devices; d++)
		if (m->copy[d] != NULL) {
			cudaSetDevice(m->gpu[d]);
			cudaStreamDestroy(m->copy[d]);
		}
	free(m->copy);
	free(m->gpu);
	free(m);
}

/* The memory of DEVICES devices on GPU[devices]: the caller's
 * (pw_gpu_mem_close), NULL with ERR when a copy stream cannot be made. */
static struct pw_gpu_mem *
pw_gpu_mem_new(int devices, const int *gpu, struct pw_error *err)
{
	struct pw_gpu_mem *m = pw_xcalloc(1, sizeof *m);
	cudaError_t ce;
	int d;

	m->devices = devices;
	m->gpu = pw_xcalloc((size_t)devices + 1, sizeof *m->gpu);
	m->copy = pw_xcalloc((size_t)devices + 1, sizeof *m->copy);
	memcpy(m->gpu, gpu, (size_t)devices * sizeof *m->gpu);
	for (d = 0; d < devices; d++) {
		if (gpu[d] < 0)
			continue;
		if ((ce = cudaSetDevice(gpu[d])) != cudaSuccess ||
		    (ce = cudaStreamCreateWithFlags(&m->copy[d],
		    cudaStreamNonBlocking)) != cudaSuccess) {
			m->copy[d] = NULL;
			pw_error_set(err, "cuda: device %d (GPU %d): hand-off: "
			    "cudaStreamCreate: %s", d, gpu[d],
			    cudaGetErrorString(ce));
			pw_gpu_mem_close(m);
			return NULL;
		}
	}
	return m;
}

/* Device memory on DEVICE's GPU, the caller's (pw_gpu_mem_release);
 * NULL when the GPU has no room. */
static float *
pw_gpu_mem_alloc(void *arg, int device, size_t n)
{
	const struct pw_gpu_mem *m = arg;
	void *p = NULL;

	cudaSetDevice(m->gpu[device]);
	if (cudaMalloc(&p, (n == 0 ? 1 : n) * sizeof(float)) != cudaSuccess)
		return NULL;
	return p;
}

static void
pw_gpu_mem_release(void *arg, int device, float *buf)
{
	const struct pw_gpu_mem *m = arg;

	cudaSetDevice(m->gpu[device]);
	cudaFree(buf);
}

/* N floats from SRC to DST (wire buffers, hand-off buffers: unified
 * addressing tells where each is) on DEVICE's copy stream, returning
 * once DST holds them. */
static int
pw_gpu_mem_copy(void *arg, int device, float *dst, const float *src,
    size_t n, struct pw_error *err)
{
	const struct pw_gpu_mem *m = arg;
	const char *call = "cudaMemcpyAsync";
	cudaError_t ce;

	if (n == 0)
		return PW_OK;
	cudaSetDevice(m->gpu[device]);
	if ((ce = cudaMemcpyAsync(dst, src, n * sizeof *dst, cudaMemcpyDefault,
	    m->copy[device])) == cudaSuccess) {
		call = "cudaStreamSynchronize";
		ce = cudaStreamSynchronize(m->copy[device]);
	}
	if (ce != cudaSuccess) {
		pw_error_set(err, "cuda: device %d (GPU %d): hand-off: %s: %s",
		    device, m->gpu[device], call, cudaGetErrorString(ce));
		return PW_ERR_RUNTIME;
	}
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* NCCL                                                                */

/* Seconds a transfer may wait for its peer before the run fails. */
#define PW_NCCL_TIMEOUT		300.0
/* Between two looks at a device's stream. */
#define PW_NCCL_POLL_NS		20000L

struct pw_nccl_dev {
	int	gpu;			/* -1: not this process's */
	ncclComm_t comm;		/* NULL once aborted or retired */
	cudaStream_t stream;		/* its transfers */
	pthread_mutex_t lock;		/* posting against aborting */
};

struct pw_nccl {
	int	devices;
	bool	ranks;			/* one device per MPI rank */
	struct pw_nccl_dev *dev;	/* [devices] */
	struct pw_gpu_mem *mem;		/* the wire's buffers and copies */
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
			char why[160], peers[64] = "";
			size_t len = 0;

			for (i = 0; i < count && len < sizeof peers - 8; i++)
				len += (size_t)snprintf(peers + len, sizeof peers -
				    len, "%s%d", i > 0 ? "," : "", xf[i].peer);
			snprintf(why, sizeof why, "timed out after %.0f s "
			    "waiting for device%s %s (PIPEWRIGHT_NCCL_TIMEOUT)",
			    n->timeout, count > 1 ? "s" : "", peers);
			return pw_nccl_fail(err, device, x->gpu, count == 1 ?
			    (xf[0].send ? "ncclSend" : "ncclRecv") :
			    "ncclSend/ncclRecv group", why);
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

static float *
pw_nccl_buf_alloc(struct pw_rt_wire *wire, int device, size_t n)
{
	return pw_gpu_mem_alloc(((struct pw_nccl *)wire->ctx)->mem, device, n);
}

static void
pw_nccl_buf_release(struct pw_rt_wire *wire, int device, float *buf)
{
	pw_gpu_mem_release(((struct pw_nccl *)wire->ctx)->mem, device, buf);
}

static int
pw_nccl_copy(struct pw_rt_wire *wire, int device, float *dst,
    const float *src, size_t n, struct pw_error *err)
{
	return pw_gpu_mem_copy(((struct pw_nccl *)wire->ctx)->mem, device, dst,
	    src, n, err);
}

/* Ends the communicators of this process after a run that ended well:
 * each finalized (what it issued flushed), all of them before any is
 * polled, since a finalize waits for every rank of the clique (one
 * thread would otherwise wait on its own next communicator); then each
 * destroyed, or aborted where its finalize failed or timed out. */
static void
pw_nccl_retire(struct pw_nccl *n)
{
	ncclResult_t *st = pw_xcalloc((size_t)n->devices, sizeof *st);
	struct pw_error ignored;
	ncclComm_t comm;
	int d;

	for (d = 0; d < n->devices; d++) {
		struct pw_nccl_dev *x = &n->dev[d];

		pthread_mutex_lock(&x->lock);
		st[d] = x->comm != NULL ? ncclCommFinalize(x->comm) : ncclSuccess;
		pthread_mutex_unlock(&x->lock);
	}
	for (d = 0; d < n->devices; d++) {
		struct pw_nccl_dev *x = &n->dev[d];
		bool ok = st[d] == ncclSuccess || st[d] == ncclInProgress;

		pthread_mutex_lock(&x->lock);
		comm = x->comm;
		pthread_mutex_unlock(&x->lock);
		if (comm == NULL)
			continue;
		if (ok)
			ok = pw_nccl_settle(n, d, "ncclCommFinalize", &ignored) ==
			    PW_OK;
		pthread_mutex_lock(&x->lock);
		comm = x->comm;
		x->comm = NULL;
		pthread_mutex_unlock(&x->lock);
		if (comm != NULL) {
			cudaSetDevice(x->gpu);
			if (ok)
				ncclCommDestroy(comm);
			else
				ncclCommAbort(comm);
		}
	}
	free(st);
}

static void
pw_nccl_close(struct pw_rt_wire *wire)
{
	struct pw_nccl *n;
	int d;

	if (wire == NULL)
		return;
	n = wire->ctx;
	pw_nccl_retire(n);
	for (d = 0; d < n->devices; d++) {
		struct pw_nccl_dev *x = &n->dev[d];

		if (x->stream != NULL) {
			cudaSetDevice(x->gpu);
			cudaStreamDestroy(x->stream);
		}
		pthread_mutex_destroy(&x->lock);
	}
	pw_gpu_mem_close(n->mem);
	free(n->dev);
	free(n);
	free(wire);
}

/* One process, every device here on its own GPU: what ncclCommInitAll
 * does (one unique id, a communicator per GPU made in one group), with
 * non-blocking communicators. */
static int
pw_nccl_open_local(struct pw_nccl *n, struct pw_error *err)
{
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	ncclUniqueId id;
	ncclResult_t st, end;
	int d, rc = PW_OK;

	if ((st = ncclGetUniqueId(&id)) != ncclSuccess)
		return pw_nccl_fail(err, 0, n->dev[0].gpu, "ncclGetUniqueId",
		    ncclGetErrorString(st));
	config.blocking = 0;
	st = ncclGroupStart();
	for (d = 0; d < n->devices && (st == ncclSuccess ||
	    st == ncclInProgress); d++) {
		cudaSetDevice(n->dev[d].gpu);
		st = ncclCommInitRankConfig(&n->dev[d].comm, n->devices, id, d,
		    &config);
	}
	end = ncclGroupEnd();
	/* Inside the group each init says only that it is in progress; the
	 * group's end says whether it failed. */
	if (end != ncclSuccess && end != ncclInProgress)
		st = end;
	if (st != ncclSuccess && st != ncclInProgress)
		return pw_nccl_fail(err, d > 0 ? d - 1 : 0,
		    n->dev[d > 0 ? d - 1 : 0].gpu, "ncclCommInitRankConfig",
		    ncclGetErrorString(st));
	for (d = 0; d < n->devices && rc == PW_OK; d++)
		rc = pw_nccl_settle(n, d, "ncclCommInitRankConfig", err);
	return rc;
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
	st = ncclSuccess;
	if (base->rank == 0 && (st = ncclGetUniqueId(&id)) == ncclSuccess) {
		buf = pw_xmalloc(sizeof id);
		memcpy(buf, &id, sizeof id);
		len = sizeof id;
	}
	/* Rank 0 broadcasts nothing when it has no id, so that the others
	 * fail at once rather than wait for one. */
	rc = base->bcast(base, &buf, &len, err);
	if (st != ncclSuccess) {
		free(buf);
		return pw_nccl_fail(err, d, n->dev[d].gpu, "ncclGetUniqueId",
		    ncclGetErrorString(st));
	}
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
		n->dev[d].gpu = gpu[d];
		pthread_mutex_init(&n->dev[d].lock, NULL);
	}
	for (d = 0; d < devices && rc == PW_OK; d++) {
		struct pw_nccl_dev *x = &n->dev[d];

		if (x->gpu < 0)
			continue;
		if ((ce = cudaSetDevice(x->gpu)) != cudaSuccess ||
		    (ce = cudaStreamCreateWithFlags(&x->stream,
		    cudaStreamNonBlocking)) != cudaSuccess) {
			x->stream = NULL;
			rc = pw_nccl_fail(err, d, x->gpu, "cudaStreamCreate",
			    cudaGetErrorString(ce));
		}
	}
	if (rc == PW_OK && (n->mem = pw_gpu_mem_new(devices, gpu, err)) == NULL)
		rc = PW_ERR_RUNTIME;
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

int
pw_rt_wire_cuda_copies(int devices, const int *gpu, struct pw_rt_wire **out,
    struct pw_error *err)
{
	struct pw_rt_wire_memory mem = { "device copies", pw_gpu_mem_alloc,
	    pw_gpu_mem_release, pw_gpu_mem_copy, pw_gpu_mem_close, NULL };
	int rc;

	if ((mem.arg = pw_gpu_mem_new(devices, gpu, err)) == NULL)
		return PW_ERR_RUNTIME;
	if ((rc = pw_rt_wire_matched(devices, &mem, out, err)) != PW_OK)
		pw_gpu_mem_close(mem.arg);
	return rc;
}
