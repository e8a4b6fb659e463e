/*
 * engine.c - pw_launch: runs a schedule's orders with real tensors.
 *
 * Per device run here: a compute worker running its compute order and a
 * copy worker per channel the device uses, running the device's share of
 * that channel's order.  What an op waits for is what the simulator makes
 * it wait for (docs/model.md): its order, its data (a tensor from another
 * device through the transport, one from the same device passed
 * directly), a reload's offload and anchor, a backward's reload, and a
 * shared channel's previous transfer (a token when that is on another
 * rank).  The memory events of each device follow a causal order of
 * the simulated timeline (engine_prep.c, arena.c), so the measured peak
 * is the simulator's where no op lasts zero seconds.
 *
 * The calling thread drives the iterations: it starts every worker at
 * once, waits for them in 100 ms steps (watching the cancel), and reports
 * the progress.  The first error of any worker stops every wait.
 *
 * This file: the names and defaults, setting the run up, the iterations,
 * the measured run and pw_launch; the workers are engine_ops.c's, the
 * checks and the memory order engine_prep.c's, what the ranks share
 * engine_mpi.c's (engine.h).
 */
#define _GNU_SOURCE	/* sched_getaffinity, CPU_COUNT */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine.h"

/* ------------------------------------------------------------------ */
/* Names, defaults, tags, waiting                                      */

/* The names are the measured file's words, which the core reads back. */
_Static_assert(PW_RT_NBACKENDS == PW_NMEASURED_BACKENDS &&
    PW_RT_NTRANSPORTS == PW_NMEASURED_TRANSPORTS,
    "a backend or transport the measured file cannot name");
static const struct {
	const char	*name;
	double		 tolerance;
	const char	*tolerance_text;
} pw_engine_maths[PW_RT_NMATHS] = {
	{ "fp32", 1e-5, "1e-5" },
	{ "bf16", 1e-2, "1e-2" },
};

/* The index of S among NAMES[N] into *OUT; PW_ERR_INPUT when none. */
static int
pw_engine_lookup(const char *s, const char *const *names, int n, int *out)
{
	int i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcasecmp(s, names[i]) == 0) {
			*out = i;
			return PW_OK;
		}
	return PW_ERR_INPUT;
}

const char *
pw_rt_backend_name(enum pw_rt_backend b)
{
	return (unsigned)b < PW_RT_NBACKENDS ? pw_measured_backends[b] : "?";
}

int
pw_rt_backend_parse(const char *s, enum pw_rt_backend *out)
{
	int i, rc = pw_engine_lookup(s, pw_measured_backends, PW_RT_NBACKENDS, &i);

	if (rc == PW_OK)
		*out = (enum pw_rt_backend)i;
	return rc;
}

enum pw_rt_math
pw_rt_math_of(enum pw_rt_backend b, const char *mode)
{
	if (b != PW_RT_CUDA)
		return PW_RT_FP32;
	return mode != NULL && strcmp(mode, "fp32") == 0 ? PW_RT_FP32 :
	    PW_RT_BF16;
}

const char *
pw_rt_math_name(enum pw_rt_math m)
{
	assert((unsigned)m < PW_RT_NMATHS);
	return pw_engine_maths[m].name;
}

double
pw_rt_math_tolerance(enum pw_rt_math m)
{
	assert((unsigned)m < PW_RT_NMATHS);
	return pw_engine_maths[m].tolerance;
}

const char *
pw_rt_math_tolerance_text(enum pw_rt_math m)
{
	assert((unsigned)m < PW_RT_NMATHS);
	return pw_engine_maths[m].tolerance_text;
}

const char *
pw_rt_transport_name(enum pw_rt_transport t)
{
	return (unsigned)t < PW_RT_NTRANSPORTS ? pw_measured_transports[t] : "?";
}

int
pw_rt_transport_parse(const char *s, enum pw_rt_transport *out)
{
	int i, rc = pw_engine_lookup(s, pw_measured_transports, PW_RT_NTRANSPORTS, &i);

	if (rc == PW_OK)
		*out = (enum pw_rt_transport)i;
	return rc;
}

bool
pw_rt_backend_available(enum pw_rt_backend b, char *why, size_t len)
{
	const char *reason = NULL;

	if (b == PW_RT_CUDA) {
#ifdef HAVE_CUDA
		const struct pw_rt_cuda_module *cuda = pw_rt_cuda_load(why, len);

		return cuda != NULL && cuda->gpus(why, len) > 0;
#else
		reason = "this build has no CUDA (configure found none, or "
		    "--without-cuda)";
#endif
	} else if (b != PW_RT_CPU)
		reason = "unknown backend";
	if (reason != NULL && why != NULL && len > 0)
		snprintf(why, len, "%s", reason);
	return reason == NULL;
}

/* The GPUs a CUDA launch with OPTS uses: 0 when none is visible. */
static int
pw_engine_gpus(const struct pw_rt_opts *o)
{
#ifdef HAVE_CUDA
	const struct pw_rt_cuda_module *cuda = pw_rt_cuda_load(NULL, 0);
	int n = cuda != NULL ? cuda->gpus(NULL, 0) : 0;

	return o->gpus > 0 && o->gpus < n ? o->gpus : n;
#else
	(void)o;
	return 0;
#endif
}

int
pw_rt_host_cores(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof set, &set) == 0 &&
	    (n = CPU_COUNT(&set)) > 0)
		return (int)n;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 && n < INT_MAX ? (int)n : 1;
}

bool
pw_rt_emulation(const struct pw_rt_opts *o, int devices, char *line,
    size_t len)
{
	int gpus, cores;

	if (o->backend == PW_RT_CPU) {
		if (o->transport != PW_RT_LOCAL ||
		    (cores = pw_rt_host_cores()) >= devices)
			return false;
		snprintf(line, len, "an emulation: %d devices on %d core%s, "
		    "the device threads sharing them: the measured times "
		    "include that sharing, which the prediction (a processor "
		    "for each device) leaves out", devices, cores,
		    cores == 1 ? "" : "s");
		return true;
	}
	if (o->backend != PW_RT_CUDA || o->transport != PW_RT_LOCAL ||
	    (gpus = pw_engine_gpus(o)) < 1 || gpus >= devices)
		return false;
	snprintf(line, len, "an emulation: %d devices on %d GPU%s, as "
	    "separate streams with device-to-device copies", devices, gpus,
	    gpus == 1 ? "" : "s");
	return true;
}

int
pw_rt_gpu_of(int device, int devices, int gpus)
{
	int per, extra, big;

	if (devices < 1 || gpus < 1 || device < 0 || device >= devices)
		return -1;
	if (gpus >= devices)
		return device;
	per = devices / gpus;
	extra = devices % gpus;
	big = extra * (per + 1);
	return device < big ? device / (per + 1) : extra + (device - big) / per;
}

enum pw_rt_backend
pw_rt_backend_default(void)
{
	return pw_rt_backend_available(PW_RT_CUDA, NULL, 0) ? PW_RT_CUDA : PW_RT_CPU;
}

void
pw_rt_opts_init(struct pw_rt_opts *o)
{
	memset(o, 0, sizeof *o);
	o->backend = PW_RT_CPU;
	o->transport = PW_RT_LOCAL;
	o->iterations = 5;
	o->warmup = 1;
	o->seed = 1;
}

int
pw_rt_wire_env(const char *value, struct pw_rt_opts *o, struct pw_error *err)
{
	char *shown;

	o->host_wire = false;
	if (value == NULL || *value == '\0')
		return PW_OK;
	if (strcmp(value, "host") == 0) {
		o->host_wire = true;
		return PW_OK;
	}
	shown = pw_escape(value);
	pw_error_set(err, "PIPEWRIGHT_WIRE=\"%s\": the one wire to ask for "
	    "is host", shown);
	free(shown);
	return PW_ERR_INPUT;
}

uint64_t
pw_rt_tag(struct pw_op op)
{
	return ((uint64_t)op.kind << 44) | ((uint64_t)op.stage << 24) |
	    (uint64_t)op.mb;
}

void
pw_rt_result_free(struct pw_rt_result *r)
{
	if (r == NULL)
		return;
	pw_measured_free(r->measured);
	r->measured = NULL;
}

/* ------------------------------------------------------------------ */
/* Setting up                                                          */


/* Adds a worker for DEVICE's compute order (CHANNEL -1) or its share of
 * CHANNEL's; none when that is empty. */
static void
pw_engine_add_worker(struct pw_engine *e, int device, int channel)
{
	const struct pw_seq *seq = channel < 0 ? &e->sched->device[device] :
	    &e->sched->channel[channel];
	struct pw_engine_worker *w = &e->workers[e->nworkers];
	int i;

	w->e = e;
	w->device = device;
	w->channel = channel;
	w->ops = pw_xcalloc((size_t)seq->len + 1, sizeof *w->ops);
	for (i = 0; i < seq->len; i++)
		if (pw_engine_device(e, seq->ops[i]) == device)
			w->ops[w->nops++] = seq->ops[i];
	if (w->nops > 0 || channel < 0)
		e->nworkers++;
	else
		free(w->ops);
}

enum pw_rt_wire_kind
pw_rt_wire_pick(enum pw_rt_backend backend, enum pw_rt_transport transport,
    bool host_wire, int devices, const int *gpu)
{
	int d, k;

	if (host_wire)
		return PW_RT_WIRE_HOST;
	if (backend != PW_RT_CUDA || devices < 2)
		return PW_RT_WIRE_NONE;
	for (d = 0; d < devices; d++)
		for (k = 0; k < d; k++)
			if (gpu[d] >= 0 && gpu[d] == gpu[k])
				return transport == PW_RT_MPI ? PW_RT_WIRE_NONE :
				    PW_RT_WIRE_COPIES;
	return PW_RT_WIRE_NCCL;
}

/* A collective every rank calls: every rank's MINE (LEN bytes) to rank
 * 0, where DECIDE turns them (ALL[size], LENS) into SIZE bytes at OUT;
 * then OUT on every rank.  Rank 0 broadcasts even when the gather failed
 * (nothing, then), so that no rank waits for it in vain. */
static int
pw_engine_ask_all(struct pw_engine *e, const void *mine, size_t len,
    void (*decide)(char **all, const size_t *lens, int size, void *out),
    void *out, size_t size, struct pw_error *err)
{
	char **all = NULL, *buf = NULL;
	size_t *lens = NULL, got = 0;
	int rc;

	rc = e->net->gather(e->net, mine, len, &all, &lens, err);
	if (rc == PW_OK && e->net->rank == 0) {
		buf = pw_xcalloc(1, size);
		decide(all, lens, e->net->size, buf);
		got = size;
	}
	pw_engine_free_gathered(e, all, lens);
	if (e->net->bcast(e->net, &buf, &got, rc == PW_OK ? err : NULL) !=
	    PW_OK && rc == PW_OK)
		rc = PW_ERR_RUNTIME;
	if (rc == PW_OK && got != size) {
		pw_error_set(err, "rank %d: rank 0's answer came in %zu bytes, "
		    "%zu expected", e->net->rank, got, size);
		rc = PW_ERR_RUNTIME;
	}
	if (rc == PW_OK)
		memcpy(out, buf, size);
	free(buf);
	return rc;
}

#ifdef HAVE_CUDA
/* Rank 0's side of pw_engine_rank_gpus: OUT[size] numbers, equal for the
 * ranks whose host and GPU (ALL[size]) are equal. */
static void
pw_engine_same_gpus(char **all, const size_t *lens, int size, void *out)
{
	int *id = out, r, k;

	for (r = 0; r < size; r++)
		for (id[r] = r, k = 0; k < r; k++)
			if (lens[r] == lens[k] &&
			    memcmp(all[r], all[k], lens[r]) == 0) {
				id[r] = id[k];
				break;
			}
}

/* Under MPI a rank knows its own GPU only: rank 0 gathers every rank's
 * host and GPU (its UUID, which CUDA_VISIBLE_DEVICES cannot renumber)
 * and broadcasts, for each device, a number that ranks on one GPU share,
 * into IDS[devices]; ranks sharing a GPU make the run an emulation
 * (E->emulation, on rank 0). */
static int
pw_engine_rank_gpus(struct pw_engine *e, int *ids, struct pw_error *err)
{
	char me[320], host[256] = "", gpu[64] = "";
	size_t len;
	int d, gpus = 0, rc;

	if (gethostname(host, sizeof host - 1) != 0)
		snprintf(host, sizeof host, "?");
	e->cuda->gpu_name(e->dev[e->net->rank].ctx, gpu, sizeof gpu);
	len = (size_t)snprintf(me, sizeof me, "%s|%s", host, gpu) + 1;
	if ((rc = pw_engine_ask_all(e, me, len, pw_engine_same_gpus, ids,
	    (size_t)e->p->devices * sizeof *ids, err)) != PW_OK)
		return rc;
	/* Ranks on one GPU share it, as devices of one process do. */
	for (d = 0; d < e->p->devices; d++)
		gpus += ids[d] == d;
	if (e->net->rank == 0 && gpus < e->p->devices)
		snprintf(e->emulation, sizeof e->emulation, "an emulation: %d "
		    "devices on %d GPU%s, the ranks sharing them: the measured "
		    "times include that sharing, which the prediction leaves "
		    "out", e->p->devices, gpus, gpus == 1 ? "" : "s");
	return PW_OK;
}
#endif

/* The wire pw_rt_wire_pick picks for E, in *WIRE (NULL: none). */
static int
pw_engine_pick_wire(struct pw_engine *e, struct pw_rt_wire **wire,
    struct pw_error *err)
{
	int n = e->p->devices, d, rc = PW_OK;
	int *gpu = pw_xcalloc((size_t)n, sizeof *gpu);
	int *ids = pw_xcalloc((size_t)n, sizeof *ids);

	for (d = 0; d < n; d++) {
		gpu[d] = -1;
#ifdef HAVE_CUDA
		if (e->dev[d].here && e->backend->kind == PW_RT_CUDA)
			gpu[d] = e->cuda->gpu(e->dev[d].ctx);
#endif
	}
	/* Which devices share a GPU: in one process their GPUs say; under
	 * MPI rank 0 tells every rank. */
	memcpy(ids, gpu, (size_t)n * sizeof *ids);
#ifdef HAVE_CUDA
	if (e->backend->kind == PW_RT_CUDA && e->net->kind == PW_RT_MPI &&
	    n > 1)
		rc = pw_engine_rank_gpus(e, ids, err);
#endif
	*wire = NULL;
	switch (rc == PW_OK ? pw_rt_wire_pick(e->backend->kind, e->net->kind,
	    e->opts->host_wire, n, ids) : PW_RT_WIRE_NONE) {
	case PW_RT_WIRE_HOST:
		rc = pw_rt_wire_host(n, wire, err);
		break;
#ifdef HAVE_CUDA
	case PW_RT_WIRE_NCCL:
		rc = e->cuda->wire_nccl(e->net, n, gpu, wire, err);
		break;
	case PW_RT_WIRE_COPIES:
		rc = e->cuda->wire_copies(n, gpu, wire, err);
		break;
#endif
	default:
		break;
	}
	free(ids);
	free(gpu);
	return rc;
}

/* Puts E's hand-offs on the wire pw_engine_pick_wire picks, through the
 * sequenced transport over E's net. */
static int
pw_engine_wire(struct pw_engine *e, struct pw_error *err)
{
	struct pw_rt_message *msgs;
	struct pw_rt_wire *wire;
	struct pw_rt_net *net;
	size_t n;
	int rc;

	if ((rc = pw_engine_pick_wire(e, &wire, err)) != PW_OK || wire == NULL)
		return rc;
	msgs = pw_rt_messages(e->p, e->sched, e->where, e->timed, e->nops,
	    &n);
	rc = pw_rt_net_wire(e->net, wire, e->p->devices, msgs, n, e->io,
	    e->total, &net, err);
	free(msgs);
	if (rc == PW_OK)
		e->net = net;
	return rc;
}

/* A change of a device's host-held bytes at an instant. */
struct pw_engine_move {
	double	t;
	double	bytes;		/* > 0 taken (an offload), < 0 given back */
};

/* By time, the takes before the gives at an instant. */
static int
pw_engine_move_cmp(const void *a, const void *b)
{
	const struct pw_engine_move *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->bytes < 0) - (y->bytes < 0);
}

double
pw_rt_host_peak(const struct pw_timed_op *ops, size_t n, int device)
{
	struct pw_engine_move *mv = pw_xcalloc(n + 1, sizeof *mv);
	double level = 0, peak = 0;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		const struct pw_timed_op *o = &ops[i];

		if (o->device != device || !pw_kind_is_transfer(o->op.kind))
			continue;
		mv[k].t = o->op.kind == PW_OFFLOAD ? o->start : o->end;
		mv[k++].bytes = o->op.kind == PW_OFFLOAD ? o->bytes : -o->bytes;
	}
	qsort(mv, k, sizeof *mv, pw_engine_move_cmp);
	for (i = 0; i < k; i++) {
		level += mv[i].bytes;
		if (level > peak)
			peak = level;
	}
	free(mv);
	return peak;
}

#ifdef HAVE_CUDA
/* Tells the CUDA backend what its devices open with: the GPUs, the op
 * slots its events time, and each device's pools, sized from the
 * simulated peaks with room for the pools' alignment and first-fit
 * fragmentation (an eighth, and 64 MiB; docs/runtime.md). */
static void
pw_engine_plan_cuda(struct pw_engine *e)
{
	int d, n = e->p->devices;
	double *pool = pw_xcalloc((size_t)n, sizeof *pool);
	double *host = pw_xcalloc((size_t)n, sizeof *host);
	struct pw_rt_cuda_plan plan;

	for (d = 0; d < n; d++) {
		double h = pw_rt_host_peak(e->timed, e->nops, d);

		pool[d] = ceil(e->predicted[d] * 1.125) + 64.0 * 1048576;
		host[d] = h > 0 ? ceil(h * 1.125) + 1048576 : 0;
	}
	plan.devices = n;
	plan.gpus = pw_engine_gpus(e->opts);
	plan.ranks = e->net->kind == PW_RT_MPI;
	plan.nops = e->nops;
	plan.peak = e->predicted;
	plan.pool = pool;
	plan.host = host;
	e->cuda->plan(&plan);
	free(pool);
	free(host);
}
#endif

/* Opens what the devices of this process need: the backend, the arena,
 * the stages, the workers. */
static int
pw_engine_open_here(struct pw_engine *e, struct pw_error *err)
{
	const struct pw_problem *p = e->p;
	int d, s, c, rc;

#ifdef HAVE_CUDA
	if (e->backend->kind == PW_RT_CUDA)
		pw_engine_plan_cuda(e);
#endif
	e->workers = pw_xcalloc((size_t)p->devices * (size_t)(e->sched->nchannels + 1),
	    sizeof *e->workers);
	for (d = 0; d < p->devices; d++) {
		struct pw_engine_dev *dv = &e->dev[d];

		if (!dv->here)
			continue;
		if ((rc = e->backend->open(d, &dv->ctx, err)) != PW_OK) {
			dv->ctx = NULL;
			return rc;
		}
		dv->arena = pw_rt_arena_new(d, p->memory[d].limit, e->backend,
		    dv->ctx);
		pw_engine_add_worker(e, d, -1);
		for (c = 0; c < e->sched->nchannels; c++)
			pw_engine_add_worker(e, d, c);
	}
	for (s = 0; s < p->nstages; s++) {
		d = p->stages[s].device;
		if (!e->dev[d].here)
			continue;
		rc = pw_rt_stage_open(e->work, s, e->backend, e->dev[d].ctx,
		    e->dev[d].arena, e->opts->seed, e->opts->cancel,
		    &e->stage[s], err);
		if (rc != PW_OK) {
			e->stage[s] = NULL;
			return rc;
		}
	}
	return PW_OK;
}

/* Rank 0's side of pw_engine_agree: the first rank (of ALL[size], each
 * one's open result) that did not open, else -1, into OUT. */
static void
pw_engine_first_failed(char **all, const size_t *lens, int size, void *out)
{
	int *failed = out, r;

	for (*failed = -1, r = 0; r < size && *failed < 0; r++)
		if (lens[r] != sizeof(int) ||
		    memcmp(all[r], &(int){ PW_OK }, sizeof(int)) != 0)
			*failed = r;
}

/* Under MPI, whether every rank opened (RC, this rank's): rank 0 gathers
 * them and broadcasts the first rank that failed, so that all go on to
 * the wire's set-up (a collective) or none does.  A rank that opened
 * while another failed gets PW_ERR_CANCELLED: the other says why. */
static int
pw_engine_agree(struct pw_engine *e, int rc, struct pw_error *err)
{
	struct pw_error net_err;
	int failed = -1, net_rc;

	net_rc = pw_engine_ask_all(e, &rc, sizeof rc, pw_engine_first_failed,
	    &failed, sizeof failed, &net_err);
	if (rc != PW_OK)
		return rc;
	if (net_rc != PW_OK || failed >= 0) {
		pw_error_set(err, "rank %d: stopped: rank %d could not open its "
		    "device", e->net->rank, failed);
		/* Another's stop, not this rank's cancel, whatever signal
		 * mpirun sends it next: it stays silent. */
		pw_engine_stop(e, PW_ERR_CANCELLED, err, false);
		return PW_ERR_CANCELLED;
	}
	return PW_OK;
}

/* Opens the devices of this process and, once every rank has (under
 * MPI with CUDA, where the wire's set-up is collective), the wire. */
static int
pw_engine_open(struct pw_engine *e, struct pw_error *err)
{
	int rc = pw_engine_open_here(e, err);

	if (e->net->kind == PW_RT_MPI && e->backend->kind == PW_RT_CUDA)
		rc = pw_engine_agree(e, rc, err);
	return rc == PW_OK ? pw_engine_wire(e, err) : rc;
}

static void
pw_engine_free(struct pw_engine *e)
{
	size_t i, n = (size_t)e->p->nstages * (size_t)e->m;
	int d, s, k;

	for (k = 0; k < e->nworkers; k++)
		free(e->workers[k].ops);
	free(e->workers);
	/* What a stopped run left: saved tensors and hand-offs. */
	for (i = 0; e->saved != NULL && i < n; i++) {
		int dev = e->p->stages[i / (size_t)e->m].device;

		if (e->saved[i] != NULL)
			pw_rt_saved_free(e->stage[i / (size_t)e->m], e->saved[i]);
		pw_engine_unbuf(e, dev, e->fwd[i]);
		pw_engine_unbuf(e, dev, e->bwd[i]);
	}
	for (s = 0; s < e->p->nstages; s++)
		if (e->stage[s] != NULL)
			pw_rt_stage_close(e->stage[s]);
	for (d = 0; d < e->p->devices; d++) {
		struct pw_engine_dev *dv = &e->dev[d];

		for (k = 0; k < dv->npool; k++)
			e->backend->release(dv->ctx, dv->pool[k]);
		free(dv->pool);
		pw_rt_arena_free(dv->arena);
		if (dv->ctx != NULL)
			e->backend->close(dv->ctx);
	}
	free(e->dev);
	free(e->stage);
	free(e->saved);
	free(e->fwd);
	free(e->bwd);
	free(e->ticket);
	free(e->tbytes);
	free(e->started);
	free(e->ended);
	free(e->slot);
	free(e->timed);
	free(e->predicted);
	free(e->rec);
	free(e->host);
	pw_where_free(e->where);
	pw_timing_free(e->timing);
	pthread_cond_destroy(&e->changed);
	pthread_cond_destroy(&e->marked);
	pthread_mutex_destroy(&e->lock);
}


/* ------------------------------------------------------------------ */
/* The run                                                             */

/* Each rank's iteration, for rank 0: its latest op end, its loss. */
struct pw_engine_tick {
	double	span;
	double	loss;
	int	has_loss;
};

void
pw_engine_free_gathered(const struct pw_engine *e, char **all, size_t *lens)
{
	int r;

	for (r = 0; all != NULL && r < e->net->size; r++)
		free(all[r]);
	free(all);
	free(lens);
}

/* Stops the run when the caller has cancelled it (E->lock not held). */
static void
pw_engine_watch(struct pw_engine *e, int it)
{
	struct pw_error err;

	if (e->opts->cancel == NULL || !atomic_load(e->opts->cancel) ||
	    atomic_load(&e->stop))
		return;
	pw_error_set(&err, "cancelled at iteration %d of %d", it + 1,
	    e->total);
	pw_engine_stop(e, PW_ERR_CANCELLED, &err, true);
}

/* Where the backend has a clock of its own (CUDA's events), the ops of
 * iteration IT on this process's devices as it saw them: the records of
 * a measured iteration and the span come from it, not from the host's
 * marks, which include the host's waits for the device. */
static int
pw_engine_device_times(struct pw_engine *e, int it, struct pw_error *err)
{
	int k = it - e->opts->warmup, rc;
	double t[2], span = 0;
	size_t i;

	if (e->backend->op_time == NULL)
		return PW_OK;
	for (i = 0; i < e->nops; i++) {
		void *ctx = e->dev[e->timed[i].device].ctx;

		if (!e->dev[e->timed[i].device].here)
			continue;
		if ((rc = e->backend->op_time(ctx, i, false, &t[0], err)) != PW_OK ||
		    (rc = e->backend->op_time(ctx, i, true, &t[1], err)) != PW_OK)
			return rc;
		if (k >= 0) {
			pw_engine_rec(e, k, i)[PW_ENGINE_START] = t[0] - e->t0;
			pw_engine_rec(e, k, i)[PW_ENGINE_END] = t[1] - e->t0;
		}
		if (t[1] - e->t0 > span)
			span = t[1] - e->t0;
	}
	e->span = span;
	return PW_OK;
}

/* Starts iteration IT on every worker and waits for them, watching the
 * cancel; the span and loss of this process in *TICK. */
static int
pw_engine_step(struct pw_engine *e, int it, struct pw_engine_tick *tick)
{
	struct pw_error err;
	double t0;
	int d, rc;

	/* Under MPI every rank measures from rank 0's start. */
	rc = e->net->barrier(e->net, &err);
	t0 = pw_now();
	if (rc == PW_OK && e->net->common != NULL)
		rc = e->net->common(e->net, &t0, &err);
	if (rc != PW_OK) {
		pw_engine_stop(e, PW_ERR_RUNTIME, &err, true);
		return rc;
	}
	for (d = 0; d < e->p->devices && e->backend->clock_start != NULL; d++)
		if (e->dev[d].here &&
		    (rc = e->backend->clock_start(e->dev[d].ctx, &err)) != PW_OK) {
			pw_engine_stop(e, rc, &err, true);
			return rc;
		}
	pw_engine_watch(e, it);
	pthread_mutex_lock(&e->lock);
	for (d = 0; d < e->p->devices; d++)
		if (e->dev[d].arena != NULL)
			pw_rt_arena_restart(e->dev[d].arena);
	e->iter = it;
	e->done = 0;
	e->span = 0;
	e->loss = 0;
	e->t0 = t0;
	e->go++;
	pthread_cond_broadcast(&e->changed);
	while (e->done < e->nworkers) {
		pthread_mutex_unlock(&e->lock);
		pw_engine_watch(e, it);
		pthread_mutex_lock(&e->lock);
		if (e->done < e->nworkers)
			pw_sync_wait(&e->changed, &e->lock, PW_RT_WAIT);
	}
	rc = atomic_load(&e->stop) ? e->rc : PW_OK;
	pthread_mutex_unlock(&e->lock);
	if (rc == PW_OK && (rc = pw_engine_device_times(e, it, &err)) != PW_OK)
		pw_engine_stop(e, rc, &err, true);
	tick->span = e->span;
	tick->loss = e->loss;
	tick->has_loss = e->dev[e->p->stages[e->p->nstages - 1].device].here;
	return rc;
}

/* Rank 0's view of iteration IT: every rank's ticks combined. */
static int
pw_engine_combine(struct pw_engine *e, const struct pw_engine_tick *mine,
    struct pw_engine_tick *all_of, struct pw_error *err)
{
	char **all = NULL;
	size_t *lens = NULL;
	int r, rc;

	*all_of = *mine;
	if (e->net->size == 1)
		return PW_OK;
	rc = e->net->gather(e->net, (const char *)mine, sizeof *mine, &all, &lens, err);
	for (r = 0; rc == PW_OK && e->net->rank == 0 && r < e->net->size; r++) {
		struct pw_engine_tick t;

		if (lens[r] != sizeof t) {
			pw_error_set(err, "rank %d sent a malformed "
			    "iteration", r);
			rc = PW_ERR_RUNTIME;
			break;
		}
		memcpy(&t, all[r], sizeof t);
		if (t.span > all_of->span)
			all_of->span = t.span;
		if (t.has_loss) {
			all_of->loss = t.loss;
			all_of->has_loss = 1;
		}
	}
	pw_engine_free_gathered(e, all, lens);
	return rc;
}

/* The workers' threads: started, or joined once QUIT. */
static int
pw_engine_threads(struct pw_engine *e, bool start, struct pw_error *err)
{
	int k, rc;

	if (!start) {
		pthread_mutex_lock(&e->lock);
		e->quit = true;
		pthread_cond_broadcast(&e->changed);
		pthread_mutex_unlock(&e->lock);
		for (k = 0; k < e->nworkers; k++)
			if (e->workers[k].running)
				pthread_join(e->workers[k].thread, NULL);
		return PW_OK;
	}
	for (k = 0; k < e->nworkers; k++) {
		rc = pw_thread_start(&e->workers[k].thread, pw_engine_worker_main,
		    &e->workers[k]);
		if (rc != 0) {
			pw_error_set(err, "cannot start a worker thread: %s",
			    strerror(rc));
			return PW_ERR_RUNTIME;
		}
		e->workers[k].running = true;
	}
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* After the run: the reference, the measured run                     */

/* The largest relative gradient error of the stages here against the
 * sequential computation, and its last loss in *REF_LOSS. */
static int
pw_engine_reference(struct pw_engine *e, double *grad_error, double *ref_loss,
    struct pw_error *err)
{
	int S = e->p->nstages, s, rc;
	float **ref = pw_xcalloc((size_t)S, sizeof *ref), *got = NULL;
	size_t i, n;

	for (s = 0; s < S; s++)
		ref[s] = pw_xcalloc(pw_rt_grad_floats(e->work, s) + 1, sizeof **ref);
	*grad_error = 0;
	rc = pw_rt_reference(e->work, e->m, e->total, e->opts->seed,
	    e->opts->cancel, ref, ref_loss, err);
	for (s = 0; rc == PW_OK && s < S; s++) {
		double diff = 0, norm = 0, rel;

		if (e->stage[s] == NULL)
			continue;
		n = pw_rt_grad_floats(e->work, s);
		got = pw_xreallocarray(got, n + 1, sizeof *got);
		if ((rc = pw_rt_stage_grads(e->stage[s], got, err)) != PW_OK)
			break;
		for (i = 0; i < n; i++) {
			double dd = (double)got[i] - (double)ref[s][i];

			diff += dd * dd;
			norm += (double)ref[s][i] * (double)ref[s][i];
		}
		rel = norm > 0 ? sqrt(diff / norm) : sqrt(diff);
		if (rel > *grad_error)
			*grad_error = rel;
	}
	for (s = 0; s < S; s++)
		free(ref[s]);
	free(ref);
	free(got);
	return rc;
}

/* An iteration's step and its number, for sorting by step (ties by
 * number, so that the order is total). */
struct pw_engine_ranked {
	double	step;
	int	k;
};

static int
pw_engine_ranked_cmp(const void *a, const void *b)
{
	const struct pw_engine_ranked *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* The iteration shown: the median step's (the lower middle one). */
static int
pw_engine_shown(const double *step, int n)
{
	struct pw_engine_ranked *r = pw_xcalloc((size_t)n, sizeof *r);
	int k, shown;

	for (k = 0; k < n; k++) {
		r[k].step = step[k];
		r[k].k = k;
	}
	qsort(r, (size_t)n, sizeof *r, pw_engine_ranked_cmp);
	shown = r[(n - 1) / 2].k;
	free(r);
	return shown;
}

/* The measured run of E's records, STEP, LOSS and PEAK (each per
 * iteration or device): a pw_measured the caller owns. */
static struct pw_measured *
pw_engine_measured(struct pw_engine *e, const double *step, const double *loss,
    const double *peak)
{
	int K = e->opts->iterations, k, d;
	struct pw_measured *m = pw_measured_new(e->p->devices, e->nops, K);
	size_t i;

	m->backend = pw_xstrdup(pw_rt_backend_name(e->opts->backend));
	m->transport = pw_xstrdup(pw_rt_transport_name(e->opts->transport));
	m->host = pw_xstrdup(e->host);
	m->emulated = e->emulation[0] != '\0';
	m->iterations = K;
	m->warmup = e->opts->warmup;
	for (k = 0; k < K; k++) {
		m->step[k] = step[k];
		m->loss[k] = loss[k];
	}
	m->shown = pw_engine_shown(step, K);
	for (d = 0; d < e->p->devices; d++)
		m->peak[d] = peak[d];
	for (i = 0; i < e->nops; i++) {
		struct pw_measured_op *o = &m->ops[i];
		const double *r = pw_engine_rec(e, m->shown, i);

		o->op = e->timed[i].op;
		o->device = e->timed[i].device;
		o->start = r[PW_ENGINE_START];
		o->end = r[PW_ENGINE_END];
		o->arrive = r[PW_ENGINE_ARRIVE];
		for (k = 0; k < K; k++) {
			r = pw_engine_rec(e, k, i);
			o->durations[k] = r[PW_ENGINE_END] - r[PW_ENGINE_START];
		}
	}
	pw_workload_copy(&m->workload, e->work);
	return m;
}

/* Device D's measured peak: its pool's where the backend has one (the
 * bytes the GPU really held, each piece aligned), else the arena's. */
static double
pw_engine_peak(const struct pw_engine *e, int d)
{
	double pool = e->backend->peak != NULL ?
	    e->backend->peak(e->dev[d].ctx) : NAN;

	return isnan(pool) ? pw_rt_arena_peak(e->dev[d].arena) : pool;
}

/* Everything after the iterations: the reference, the records of every
 * rank on rank 0, the measured run there. */
static int
pw_engine_finish(struct pw_engine *e, const double *step, const double *loss,
    struct pw_rt_result *out, struct pw_error *err)
{
	double grad_error = NAN, ref_loss = NAN, *mine, *peak;
	char **all = NULL;
	size_t len, *lens = NULL;
	int d, r, rc = PW_OK;

	if (e->opts->reference)
		rc = pw_engine_reference(e, &grad_error, &ref_loss, err);
	if (rc != PW_OK)
		return rc;
	peak = pw_xcalloc((size_t)e->p->devices, sizeof *peak);
	for (d = 0; d < e->p->devices; d++)
		peak[d] = e->dev[d].here ? pw_engine_peak(e, d) : 0;
	if (e->net->size > 1) {
		mine = pw_engine_pack(e, grad_error, &len);
		rc = e->net->gather(e->net, (const char *)mine, len, &all, &lens, err);
		free(mine);
		for (r = 1; rc == PW_OK && e->net->rank == 0 && r < e->net->size; r++)
			rc = pw_engine_unpack(e, all[r], lens[r], peak, &grad_error,
			    err);
		pw_engine_free_gathered(e, all, lens);
	}
	if (rc == PW_OK && e->net->rank == 0) {
		out->measured = pw_engine_measured(e, step, loss, peak);
		out->grad_error = grad_error;
		out->math = pw_rt_math_of(e->opts->backend,
		    getenv("PW_CUDA_MATH"));
		out->loss_error = e->opts->reference ?
		    fabs(loss[e->opts->iterations - 1] - ref_loss) /
		    (ref_loss != 0 ? fabs(ref_loss) : 1) : NAN;
	}
	free(peak);
	return rc;
}

/* Runs the iterations; the steps and losses of the measured ones in
 * STEP and LOSS. */
static int
pw_engine_run(struct pw_engine *e, double *step, double *loss,
    struct pw_error *err)
{
	struct pw_engine_tick mine, all;
	struct pw_rt_progress pr;
	int it, rc;

	for (it = 0; it < e->total; it++) {
		if ((rc = pw_engine_step(e, it, &mine)) != PW_OK)
			break;
		if ((rc = pw_engine_combine(e, &mine, &all, err)) != PW_OK) {
			pw_engine_stop(e, rc, err, true);
			break;
		}
		pr.iteration = it + 1;
		pr.total = e->total;
		pr.warmup = it < e->opts->warmup;
		pr.step = all.span;
		pr.loss = all.loss / e->m;
		pr.emulation = e->emulation[0] != '\0' ? e->emulation : NULL;
		if (!pr.warmup) {
			step[it - e->opts->warmup] = pr.step;
			loss[it - e->opts->warmup] = pr.loss;
		}
		if (e->net->rank == 0 && e->opts->progress != NULL)
			e->opts->progress(&pr, e->opts->progress_arg);
	}
	pw_engine_threads(e, false, err);
	if (atomic_load(&e->stop)) {
		*err = e->err;
		return e->rc;
	}
	return PW_OK;
}

/* Sets E up for PROBLEM, SCHED and WORK on NET. */
static void
pw_engine_init(struct pw_engine *e, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_workload *work,
    const struct pw_rt_opts *opts, struct pw_rt_net *net)
{
	size_t universe = pw_op_universe(p), n;
	int d;

	memset(e, 0, sizeof *e);
	e->p = p;
	e->sched = sched;
	e->work = work;
	e->opts = opts;
	/* pw_engine_check_opts refused a backend not built or with no GPU. */
	e->backend = &pw_rt_cpu;
#ifdef HAVE_CUDA
	if (opts->backend == PW_RT_CUDA) {
		e->cuda = pw_rt_cuda_load(NULL, 0);
		assert(e->cuda != NULL);
		e->backend = e->cuda->ops;
	}
#endif
	e->net = net;
	e->m = p->microbatches;
	e->total = opts->warmup + opts->iterations;
	e->io = pw_rt_io_floats(work);
	n = (size_t)p->nstages * (size_t)e->m;
	e->dev = pw_xcalloc((size_t)p->devices, sizeof *e->dev);
	for (d = 0; d < p->devices; d++)
		e->dev[d].here = net->kind == PW_RT_LOCAL || d == net->rank;
	e->stage = pw_xcalloc((size_t)p->nstages, sizeof *e->stage);
	e->saved = pw_xcalloc(n, sizeof *e->saved);
	e->fwd = pw_xcalloc(n, sizeof *e->fwd);
	e->bwd = pw_xcalloc(n, sizeof *e->bwd);
	e->ticket = pw_xcalloc(universe, sizeof *e->ticket);
	e->tbytes = pw_xcalloc(universe, sizeof *e->tbytes);
	e->started = pw_xcalloc(universe, sizeof *e->started);
	e->ended = pw_xcalloc(universe, sizeof *e->ended);
	e->slot = pw_xcalloc(universe, sizeof *e->slot);
	e->predicted = pw_xcalloc((size_t)p->devices, sizeof *e->predicted);
	pw_sync_init(&e->lock, &e->changed);
	pw_sync_init(NULL, &e->marked);		/* on LOCK too */
	atomic_init(&e->stop, false);
}

/* The records, once the schedule is checked: a slot per op. */
static void
pw_engine_size(struct pw_engine *e)
{
	size_t i;

	for (i = 0; i < e->nops; i++)
		e->slot[pw_op_index(e->p, e->timed[i].op)] = i;
	e->rec = pw_xcalloc((size_t)e->opts->iterations * e->nops *
	    PW_ENGINE_REC + 1, sizeof *e->rec);
	for (i = 0; i < (size_t)e->opts->iterations * e->nops; i++)
		e->rec[i * PW_ENGINE_REC + PW_ENGINE_ARRIVE] = NAN;
	pw_engine_number_events(e);
}

/* Whether pw_launch's error RC began in this process (pw_rt_result).
 * During the run (RAN) or its opening, a stop says (E's first error);
 * an error after it, without a stop, is this rank's own.  Before it, an
 * input error is rank 0's to say: it checked what every rank runs (the
 * others' is its refusal, or the count of ranks that it names as well);
 * other errors there are each rank's own.  A cancel is nobody's. */
static bool
pw_engine_originated(const struct pw_engine *e, const struct pw_rt_net *net,
    int rc, bool ran)
{
	if (rc == PW_OK || rc == PW_ERR_CANCELLED)
		return false;
	if (e != NULL && e->rc != PW_OK)
		return e->originated;
	if (ran)
		return true;
	return net->rank == 0 || rc != PW_ERR_INPUT;
}

/* What rank 0 shares with the other ranks under MPI, theirs to free. */
struct pw_engine_shared {
	struct pw_problem *problem;
	struct pw_schedule *sched;
	struct pw_workload work;
};

/* Sets E up (*INITED once it is) for what this rank runs and checks it:
 * rank 0 checks what it is given; under MPI the others get what it
 * checked into *SHARED and check that. */
static int
pw_engine_prepare(struct pw_engine *e, bool *inited,
    const struct pw_problem *problem, const struct pw_schedule *sched,
    const struct pw_workload *work, const struct pw_rt_opts *opts,
    struct pw_rt_net *net, struct pw_engine_shared *shared,
    struct pw_error *err)
{
	bool refused = false;
	int rc = PW_OK, rc2;

	if (net->rank == 0 && (problem == NULL || sched == NULL || work == NULL)) {
		pw_error_set(err, "no problem, schedule or workload");
		rc = PW_ERR_INPUT;
		refused = true;
	} else if (net->rank == 0) {
		pw_engine_init(e, problem, sched, work, opts, net);
		*inited = true;
		if ((rc = pw_engine_check_schedule(e, err)) == PW_OK)
			rc = pw_engine_parse_fail(e, err);
		refused = rc != PW_OK;
	}
	if (net->kind != PW_RT_MPI)
		return rc;
	rc2 = pw_engine_share(net, refused, problem, sched,
	    *inited ? e->timing : NULL, work, &shared->problem, &shared->sched,
	    &shared->work, err);
	if (!refused && rc2 != PW_OK)
		rc = rc2;
	if (rc == PW_OK && net->rank != 0) {
		pw_engine_init(e, shared->problem, shared->sched, &shared->work,
		    opts, net);
		*inited = true;
		if ((rc = pw_engine_check_schedule(e, err)) == PW_OK)
			rc = pw_engine_parse_fail(e, err);
	}
	if (rc == PW_OK && net->size != e->p->devices) {
		pw_error_set(err, "%d MPI ranks for %d devices: run one rank "
		    "per device (mpirun -np %d)", net->size, e->p->devices,
		    e->p->devices);
		rc = PW_ERR_INPUT;
	}
	return rc;
}

int
pw_launch(const struct pw_problem *problem, const struct pw_schedule *sched,
    const struct pw_workload *work, const struct pw_rt_opts *opts,
    struct pw_rt_result *out, struct pw_error *err)
{
	struct pw_engine_shared shared = { NULL, NULL, { 0 } };
	struct pw_rt_net *net = NULL;
	struct pw_engine e;
	bool inited = false, ran = false;
	double *step = NULL, *loss = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	out->grad_error = out->loss_error = NAN;
	if ((rc = pw_engine_check_opts(opts, err)) != PW_OK)
		return rc;
	rc = opts->transport == PW_RT_MPI ? pw_rt_net_mpi(&net, err) :
	    pw_rt_net_local(problem != NULL ? problem->devices : 0, &net, err);
	if (rc != PW_OK)
		return rc;
	rc = pw_engine_prepare(&e, &inited, problem, sched, work, opts, net,
	    &shared, err);
	if (rc != PW_OK)
		goto out;

	pw_engine_size(&e);
	if ((rc = pw_engine_hosts(&e, err)) != PW_OK)
		goto out;
	step = pw_xcalloc((size_t)opts->iterations, sizeof *step);
	loss = pw_xcalloc((size_t)opts->iterations, sizeof *loss);
	rc = pw_engine_open(&e, err);
	net = e.net;		/* the sequenced transport's, when on a wire */
	if (rc == PW_OK)
		rc = pw_engine_threads(&e, true, err);
	if (rc != PW_OK) {
		pw_engine_stop(&e, rc, err, true);
		pw_engine_threads(&e, false, err);
		if (rc != PW_ERR_CANCELLED)
			rc = PW_ERR_RUNTIME;
		goto out;
	}
	rc = pw_engine_run(&e, step, loss, err);
	ran = true;
	if (rc == PW_OK)
		rc = pw_engine_finish(&e, step, loss, out, err);
out:
	out->originated = pw_engine_originated(inited ? &e : NULL, net, rc, ran);
	/* No stop recorded (a cancel before the engine ran, or while its
	 * results were gathered): the flag says whether it was this
	 * rank's. */
	out->own_cancel = rc == PW_ERR_CANCELLED && (inited && e.rc != PW_OK ?
	    e.own_cancel : opts->cancel != NULL && atomic_load(opts->cancel));
	/* The net first: a wire's transfers end before the devices' memory
	 * and streams go; after a run that failed, by an abort. */
	if (ran && rc != PW_OK)
		net->stop(net);
	net->close(net);
	if (inited)
		pw_engine_free(&e);
	free(step);
	free(loss);
	pw_problem_free(shared.problem);
	pw_schedule_free(shared.sched);
	pw_workload_clear(&shared.work);
	return rc;
}
