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
 * rank).  The memory events of each device follow the simulated
 * timeline's order (arena.c), so the measured peak is the simulator's.
 *
 * The calling thread drives the iterations: it starts every worker at
 * once, waits for them in 100 ms steps (watching the cancel), and reports
 * the progress.  The first error of any worker stops every wait.
 */
#define _GNU_SOURCE	/* open_memstream, fmemopen */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rt_int.h"

/* ------------------------------------------------------------------ */
/* Names, defaults, tags, waiting                                      */

static const char *const pw_engine_backends[PW_RT_NBACKENDS] = { "cpu", "cuda" };
static const char *const pw_engine_transports[PW_RT_NTRANSPORTS] = { "local", "mpi" };

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
	return (unsigned)b < PW_RT_NBACKENDS ? pw_engine_backends[b] : "?";
}

int
pw_rt_backend_parse(const char *s, enum pw_rt_backend *out)
{
	int i, rc = pw_engine_lookup(s, pw_engine_backends, PW_RT_NBACKENDS, &i);

	if (rc == PW_OK)
		*out = (enum pw_rt_backend)i;
	return rc;
}

const char *
pw_rt_transport_name(enum pw_rt_transport t)
{
	return (unsigned)t < PW_RT_NTRANSPORTS ? pw_engine_transports[t] : "?";
}

int
pw_rt_transport_parse(const char *s, enum pw_rt_transport *out)
{
	int i, rc = pw_engine_lookup(s, pw_engine_transports, PW_RT_NTRANSPORTS, &i);

	if (rc == PW_OK)
		*out = (enum pw_rt_transport)i;
	return rc;
}

bool
pw_rt_backend_available(enum pw_rt_backend b, char *why, size_t len)
{
	const char *reason = NULL;

	if (b == PW_RT_CUDA)
		reason = "not built with CUDA";
	else if (b != PW_RT_CPU)
		reason = "unknown backend";
	if (reason != NULL && why != NULL && len > 0)
		snprintf(why, len, "%s", reason);
	return reason == NULL;
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
/* The run's state                                                     */

/* What one measured op of one iteration keeps: start, end, arrive (in
 * that order, at pw_engine_rec). */
enum { PW_ENGINE_START, PW_ENGINE_END, PW_ENGINE_ARRIVE, PW_ENGINE_REC };
#define PW_ENGINE_REC_BYTES	(PW_ENGINE_REC * sizeof(double))

struct pw_engine;

struct pw_engine_worker {
	struct pw_engine *e;
	int	device;
	int	channel;	/* -1: the device's compute worker */
	int	nops;
	struct pw_op *ops;
	pthread_t thread;
	bool	running;
};

struct pw_engine_dev {
	bool	here;		/* run by this process */
	void	*ctx;		/* the backend's, when opened */
	struct pw_rt_arena *arena;
	/* Hand-off buffers not in use (the compute worker's alone). */
	int	npool, cappool;
	float	**pool;
};

struct pw_engine {
	const struct pw_problem *p;
	const struct pw_schedule *sched;
	const struct pw_workload *work;
	const struct pw_rt_opts *opts;
	const struct pw_rt_backend_ops *backend;
	struct pw_rt_net *net;
	struct pw_where *where;
	struct pw_timing *timing;
	size_t	io;			/* floats per hand-off */
	int	m;
	struct pw_engine_dev *dev;	/* [devices] */
	struct pw_rt_stage **stage;	/* [nstages]: NULL for those elsewhere */
	struct pw_rt_saved **saved;	/* [nstages * m] */
	float	**fwd, **bwd;		/* [nstages * m]: same-device hand-offs */
	long	*ticket;		/* [universe]: memory event, -1 none */
	double	*tbytes;		/* [universe]: its bytes */
	int	*started, *ended;	/* [universe]: iteration + 1 */
	size_t	nops;
	struct pw_timed_op *timed;	/* the simulated ops, by start */
	size_t	*slot;			/* [universe]: index in timed */
	double	*rec;			/* [iterations][nops][3]: start, end, arrive */
	int	total;			/* warm-up plus measured */
	bool	has_fail;
	int	fail_device;
	struct pw_op fail_op;
	int	nworkers;
	struct pw_engine_worker *workers;

	pthread_mutex_t lock;
	pthread_cond_t changed;		/* go, done, quit, stop */
	/* An op started or ended: told only to the workers waiting for one
	 * (pw_engine_await), so that the many marks of a run wake nobody
	 * else, on a machine with fewer cores than workers. */
	pthread_cond_t marked;
	int	awaiting;
	int	go;			/* iterations started */
	int	iter;			/* the one running */
	int	done;			/* workers through it */
	bool	quit;
	double	t0;			/* its start, pw_now */
	double	span;			/* its latest op end, from t0 */
	double	loss;			/* its summed loss */
	char	*host;		/* the hosts: "a,b" for several */
	atomic_bool stop;
	int	rc;			/* the first error */
	struct pw_error err;
	bool	originated;		/* it began here (pw_rt_result) */
};

/* The record of the op in SLOT in measured iteration K: PW_ENGINE_REC
 * doubles, E's. */
static double *
pw_engine_rec(const struct pw_engine *e, int k, size_t slot)
{
	return &e->rec[((size_t)k * e->nops + slot) * PW_ENGINE_REC];
}

/* Records the first error and stops every wait.  Later errors (mostly
 * "stopped" from the waits the first one ended) are dropped.  Whether
 * the first began here (ORIGINAL: not a wait that a stop ended; a
 * cancel aside, which every rank sees) goes to pw_rt_result.originated,
 * so that under MPI the program has the rank where an error starts say
 * it and end the job, and the others end without a word: the job's one
 * line.  E's net is open (a run is under way). */
static void
pw_engine_stop(struct pw_engine *e, int rc, const struct pw_error *err,
    bool original)
{
	int d;

	pthread_mutex_lock(&e->lock);
	if (e->rc == PW_OK) {
		e->rc = rc;
		e->err = *err;
		e->originated = original && rc != PW_ERR_CANCELLED;
	}
	atomic_store(&e->stop, true);
	pthread_cond_broadcast(&e->changed);
	pthread_cond_broadcast(&e->marked);
	pthread_mutex_unlock(&e->lock);
	e->net->stop(e->net);
	for (d = 0; d < e->p->devices; d++)
		if (e->dev[d].arena != NULL)
			pw_rt_arena_stop(e->dev[d].arena);
}

/* A worker's error at OP of DEVICE, as one line naming both (messages
 * that name them already, the arena's, are kept). */
static void
pw_engine_fail(struct pw_engine *e, int device, struct pw_op op, int rc,
    const struct pw_error *inner)
{
	struct pw_error err;
	char name[64], prefix[96];

	pw_op_name(name, sizeof name, op);
	snprintf(prefix, sizeof prefix, "device %d, ", device);
	if (strncmp(inner->msg, prefix, strlen(prefix)) == 0)
		err = *inner;
	else
		pw_error_set(&err, "device %d, %s: %s", device, name, inner->msg);
	pw_engine_stop(e, rc == PW_ERR_CANCELLED ? PW_ERR_CANCELLED : PW_ERR_RUNTIME,
	    &err, rc != PW_ERR_CANCELLED);
}

static int
pw_engine_device(const struct pw_engine *e, struct pw_op op)
{
	return e->p->stages[op.stage].device;
}

static bool
pw_engine_has(const struct pw_engine *e, struct pw_op op)
{
	return pw_where_has(e->where, e->p, op);
}

/* Marks OP started or ended in iteration IT at T (seconds from its
 * start), recording T when measured. */
static void
pw_engine_mark(struct pw_engine *e, struct pw_op op, int it, bool end, double t)
{
	size_t u = pw_op_index(e->p, op);
	int k = it - e->opts->warmup;

	if (k >= 0)
		pw_engine_rec(e, k, e->slot[u])[end ? PW_ENGINE_END :
		    PW_ENGINE_START] = t;
	pthread_mutex_lock(&e->lock);
	if (end) {
		e->ended[u] = it + 1;
		if (t > e->span)
			e->span = t;
	} else
		e->started[u] = it + 1;
	if (e->awaiting > 0)
		pthread_cond_broadcast(&e->marked);
	pthread_mutex_unlock(&e->lock);
}

/* Waits until OP (of this process) has started or ended in IT; false
 * once stopped. */
static bool
pw_engine_await(struct pw_engine *e, struct pw_op op, int it, bool end)
{
	size_t u = pw_op_index(e->p, op);
	const int *flag = end ? e->ended : e->started;

	pthread_mutex_lock(&e->lock);
	e->awaiting++;
	while (flag[u] != it + 1 && !atomic_load(&e->stop))
		pw_sync_wait(&e->marked, &e->lock, PW_RT_WAIT);
	e->awaiting--;
	pthread_mutex_unlock(&e->lock);
	return !atomic_load(&e->stop);
}

/* ------------------------------------------------------------------ */
/* Hand-offs                                                           */

/* A hand-off buffer of device D: from its pool, else new.  The caller
 * owns it until it gives it back to the pool (pw_engine_unbuf), which
 * releases it with the device; NULL with ERR when the backend refuses. */
static float *
pw_engine_buf(struct pw_engine *e, int d, struct pw_error *err)
{
	struct pw_engine_dev *dv = &e->dev[d];
	float *b;

	if (dv->npool > 0)
		return dv->pool[--dv->npool];
	b = e->backend->alloc(dv->ctx, e->io * sizeof *b);
	if (b == NULL)
		pw_error_set(err, "the %s backend refused a hand-off buffer of "
		    "%zu bytes", pw_rt_backend_name(e->backend->kind),
		    e->io * sizeof *b);
	return b;
}

static void
pw_engine_unbuf(struct pw_engine *e, int d, float *b)
{
	struct pw_engine_dev *dv = &e->dev[d];

	if (b == NULL)
		return;
	if (dv->npool == dv->cappool) {
		dv->cappool = dv->cappool ? 2 * dv->cappool : 8;
		dv->pool = pw_xreallocarray(dv->pool, (size_t)dv->cappool,
		    sizeof *dv->pool);
	}
	dv->pool[dv->npool++] = b;
}

/* The tensor OP of device D waits for from stage FROM: passed directly
 * from SLOTS when FROM is on D, else received into a buffer (its arrival
 * recorded as OP's).  *OUT the buffer, D's to give back. */
static int
pw_engine_take_input(struct pw_engine *e, int d, struct pw_op op, int from,
    float **slots, int it, float **out, struct pw_error *err)
{
	int src = e->p->stages[from].device, k = it - e->opts->warmup, rc;
	size_t at = (size_t)op.stage * (size_t)e->m + (size_t)op.mb;
	double when;

	if (src == d) {
		*out = slots[at];
		slots[at] = NULL;
		return PW_OK;
	}
	if ((*out = pw_engine_buf(e, d, err)) == NULL)
		return PW_ERR_RUNTIME;
	rc = e->net->recv(e->net, src, d, pw_rt_tag(op), *out, e->io, err);
	if (rc != PW_OK)
		return rc;
	when = e->net->arrived != NULL ? e->net->arrived(e->net) : pw_now();
	if (k >= 0)
		pw_engine_rec(e, k, e->slot[pw_op_index(e->p, op)])
		    [PW_ENGINE_ARRIVE] = when - e->t0;
	return PW_OK;
}

/* Hands BUF (of device D), the tensor TO waits for, to TO's device:
 * into SLOTS when that is D, else through the transport. */
static int
pw_engine_hand(struct pw_engine *e, int d, struct pw_op to, float **slots,
    float *buf, struct pw_error *err)
{
	int dst = pw_engine_device(e, to), rc;

	if (dst == d) {
		slots[(size_t)to.stage * (size_t)e->m + (size_t)to.mb] = buf;
		return PW_OK;
	}
	rc = e->net->send(e->net, d, dst, pw_rt_tag(to), buf, e->io, err);
	pw_engine_unbuf(e, d, buf);
	return rc;
}

/* The backward of (S, MB) the schedule has: B, or the fused BW. */
static struct pw_op
pw_engine_backward(const struct pw_engine *e, int s, int mb)
{
	struct pw_op op = { PW_B, s, mb };

	if (!pw_engine_has(e, op))
		op.kind = PW_BW;
	return op;
}

/* ------------------------------------------------------------------ */
/* Ops                                                                 */

/* OP starts on device D in iteration IT: its memory event is the
 * arena's to order, its start is recorded. */
static void
pw_engine_begin(struct pw_engine *e, int d, struct pw_op op, int it)
{
	size_t u = pw_op_index(e->p, op);

	pw_rt_arena_expect(e->dev[d].arena, e->ticket[u], e->tbytes[u]);
	pw_engine_mark(e, op, it, false, pw_now() - e->t0);
}

/* OP, begun, did its work with RC: its memory event settles and, when
 * both went well, its end is recorded.  Returns the first error. */
static int
pw_engine_end(struct pw_engine *e, int d, struct pw_op op, int it, int rc,
    struct pw_error *err)
{
	if (rc == PW_OK)
		rc = pw_rt_arena_settle(e->dev[d].arena, err);
	else
		pw_rt_arena_settle(e->dev[d].arena, NULL);
	if (rc == PW_OK)
		pw_engine_mark(e, op, it, true, pw_now() - e->t0);
	return rc;
}

/* What compute op OP of device D needs before it starts: its input *IN
 * (NULL for none) and a buffer *OUT for what it hands on (NULL for
 * none), both D's to give back. */
static int
pw_engine_inputs(struct pw_engine *e, int d, struct pw_op op, int it,
    float **in, float **out, struct pw_error *err)
{
	int S = e->p->nstages, rc = PW_OK;
	struct pw_op reload = { PW_RELOAD, op.stage, op.mb };

	*in = *out = NULL;
	switch (op.kind) {
	case PW_F:
		if (op.stage > 0)
			rc = pw_engine_take_input(e, d, op, op.stage - 1, e->fwd,
			    it, in, err);
		if (rc == PW_OK && op.stage < S - 1 &&
		    (*out = pw_engine_buf(e, d, err)) == NULL)
			rc = PW_ERR_RUNTIME;
		break;
	case PW_B:
	case PW_BW:
		if (pw_engine_has(e, reload) && !pw_engine_await(e, reload, it, true))
			return PW_ERR_CANCELLED;
		if (op.stage < S - 1)
			rc = pw_engine_take_input(e, d, op, op.stage + 1, e->bwd,
			    it, in, err);
		if (rc == PW_OK && op.stage > 0 &&
		    (*out = pw_engine_buf(e, d, err)) == NULL)
			rc = PW_ERR_RUNTIME;
		break;
	default:
		break;
	}
	return rc;
}

/* The workload's computation of compute op OP, *LOSS the last stage's
 * F's. */
static int
pw_engine_work(struct pw_engine *e, struct pw_op op, const float *in,
    float *out, double *loss, struct pw_error *err)
{
	size_t at = (size_t)op.stage * (size_t)e->m + (size_t)op.mb;
	struct pw_rt_stage *st = e->stage[op.stage];
	int rc;

	switch (op.kind) {
	case PW_F:
		return pw_rt_forward(st, op.mb, in, out, &e->saved[at], loss, err);
	case PW_B:
		return pw_rt_backward_input(st, e->saved[at], in, out, err);
	case PW_W:
		rc = pw_rt_backward_weight(st, e->saved[at], err);
		break;
	case PW_BW:
		rc = pw_rt_backward_input(st, e->saved[at], in, out, err);
		if (rc == PW_OK)
			rc = pw_rt_backward_weight(st, e->saved[at], err);
		break;
	default:
		assert(!"a transfer on a compute worker");
		return PW_ERR_RUNTIME;
	}
	/* W gave back what F kept (or the stop's cleanup will). */
	e->saved[at] = NULL;
	return rc;
}

static int
pw_engine_compute(struct pw_engine *e, int d, struct pw_op op, int it,
    struct pw_error *err)
{
	float *in = NULL, *out = NULL;
	double loss = 0;
	int rc;

	if ((rc = pw_engine_inputs(e, d, op, it, &in, &out, err)) != PW_OK)
		goto out;
	pw_engine_begin(e, d, op, it);
	rc = pw_engine_work(e, op, in, out, &loss, err);
	if ((rc = pw_engine_end(e, d, op, it, rc, err)) != PW_OK)
		goto out;
	if (op.kind == PW_F && op.stage == e->p->nstages - 1) {
		pthread_mutex_lock(&e->lock);
		e->loss += loss;
		pthread_mutex_unlock(&e->lock);
	}
	if (out != NULL) {
		struct pw_op to = op.kind == PW_F ?
		    (struct pw_op){ PW_F, op.stage + 1, op.mb } :
		    pw_engine_backward(e, op.stage - 1, op.mb);

		rc = pw_engine_hand(e, d, to, op.kind == PW_F ? e->fwd : e->bwd,
		    out, err);
		out = NULL;
	}
out:
	pw_engine_unbuf(e, d, in);
	pw_engine_unbuf(e, d, out);
	return rc;
}

/* The transfer next to OP in its channel's order, *NEXT; false at the
 * end (or the start, BEFORE). */
static bool
pw_engine_neighbour(const struct pw_engine *e, struct pw_op op, bool before,
    struct pw_op *next)
{
	size_t u = pw_op_index(e->p, op);
	const struct pw_seq *seq =
	    &e->sched->channel[e->where->resource[u] - e->p->devices];
	int pos = e->where->position[u] + (before ? -1 : 1);

	if (pos < 0 || pos >= seq->len)
		return false;
	*next = seq->ops[pos];
	return true;
}

static int
pw_engine_transfer(struct pw_engine *e, int d, struct pw_op op, int it,
    struct pw_error *err)
{
	struct pw_rt_stage *st = e->stage[op.stage];
	struct pw_rt_saved *sv;
	struct pw_op dep = { op.kind == PW_OFFLOAD ? PW_F : PW_OFFLOAD,
	    op.stage, op.mb }, prev;
	struct pw_anchor anchor;
	int rc;

	/* The channel's previous transfer: a token when on another rank. */
	if (pw_engine_neighbour(e, op, true, &prev)) {
		int pd = pw_engine_device(e, prev);

		if (e->dev[pd].here) {
			if (!pw_engine_await(e, prev, it, true))
				return PW_ERR_CANCELLED;
		} else if ((rc = e->net->recv(e->net, pd, d, pw_rt_tag(op), NULL,
		    0, err)) != PW_OK)
			return rc;
	}
	if (!pw_engine_await(e, dep, it, true))
		return PW_ERR_CANCELLED;
	if (op.kind == PW_RELOAD &&
	    pw_schedule_anchor(e->sched, op.stage, op.mb, &anchor) &&
	    pw_engine_has(e, anchor.op) &&
	    !pw_engine_await(e, anchor.op, it, anchor.at_end))
		return PW_ERR_CANCELLED;
	/* What F kept is E's since F ended. */
	sv = e->saved[(size_t)op.stage * (size_t)e->m + (size_t)op.mb];

	pw_engine_begin(e, d, op, it);
	rc = op.kind == PW_OFFLOAD ? pw_rt_offload(st, sv, err) :
	    pw_rt_reload(st, sv, err);
	if ((rc = pw_engine_end(e, d, op, it, rc, err)) != PW_OK)
		return rc;

	if (pw_engine_neighbour(e, op, false, &prev) &&
	    !e->dev[pw_engine_device(e, prev)].here)
		rc = e->net->send(e->net, d, pw_engine_device(e, prev),
		    pw_rt_tag(prev), NULL, 0, err);
	return rc;
}

/* One iteration of worker W. */
static void
pw_engine_iteration(struct pw_engine_worker *w, int it)
{
	struct pw_engine *e = w->e;
	struct pw_error err;
	struct pw_op op = { PW_F, 0, 0 };
	int i, s, rc = PW_OK;

	err.msg[0] = '\0';
	for (s = 0; w->channel < 0 && s < e->p->nstages && rc == PW_OK; s++)
		if (e->p->stages[s].device == w->device)
			rc = pw_rt_stage_zero(e->stage[s], &err);
	for (i = 0; i < w->nops && rc == PW_OK && !atomic_load(&e->stop); i++) {
		op = w->ops[i];
		if (e->has_fail && e->fail_device == w->device &&
		    memcmp(&e->fail_op, &op, sizeof op) == 0) {
			pw_error_set(&err, "injected failure (PIPEWRIGHT_FAIL_AT)");
			rc = PW_ERR_RUNTIME;
			break;
		}
		rc = w->channel < 0 ? pw_engine_compute(e, w->device, op, it, &err) :
		    pw_engine_transfer(e, w->device, op, it, &err);
	}
	for (s = 0; w->channel < 0 && s < e->p->nstages && rc == PW_OK; s++)
		if (e->p->stages[s].device == w->device)
			rc = pw_rt_stage_step(e->stage[s], e->m, &err);
	if (rc != PW_OK)
		pw_engine_fail(e, w->device, op, rc, &err);
}

static void *
pw_engine_worker_main(void *arg)
{
	struct pw_engine_worker *w = arg;
	struct pw_engine *e = w->e;
	int seen = 0, it;

	for (;;) {
		pthread_mutex_lock(&e->lock);
		while (e->go == seen && !e->quit)
			pw_sync_wait(&e->changed, &e->lock, PW_RT_WAIT);
		if (e->quit) {
			pthread_mutex_unlock(&e->lock);
			break;
		}
		seen = e->go;
		it = e->iter;
		pthread_mutex_unlock(&e->lock);
		if (!atomic_load(&e->stop))
			pw_engine_iteration(w, it);
		pthread_mutex_lock(&e->lock);
		if (++e->done == e->nworkers)
			pthread_cond_broadcast(&e->changed);
		pthread_mutex_unlock(&e->lock);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Setting up                                                          */

/* A memory event for the order: its op, its instant, whether it frees,
 * whether its op started before that instant (EARLY), the op's place in
 * a topological order of the ops (RANK). */
struct pw_engine_event {
	struct pw_op op;
	size_t	index;
	size_t	rank;
	double	t;
	bool	frees;
	bool	early;
	bool	transfer;
};

/* A causal order of events: by time; at one instant the frees of ops
 * that started before it first (they wait on nothing at it), compute
 * ops before transfers, by op index; then the other events (the
 * allocations at it and the frees of zero-duration ops) in the ops'
 * topological order, so that no event waits for one that waits for it
 * (the simulator's "frees first" would give a zero-duration B's free
 * the turn before the allocation of the F it waits for). */
static int
pw_engine_event_cmp(const void *a, const void *b)
{
	const struct pw_engine_event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->early != y->early)
		return x->early ? -1 : 1;
	if (!x->early)
		return x->rank < y->rank ? -1 : x->rank > y->rank;
	if (x->transfer != y->transfer)
		return x->transfer ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Every present op's place in a topological order of pw_preds (Kahn's):
 * an array [universe] the caller frees.  The schedule simulated, so the
 * order covers every present op. */
static size_t *
pw_engine_topo(const struct pw_engine *e)
{
	size_t universe = pw_op_universe(e->p), u, v, nready = 0, next = 0;
	size_t *rank = pw_xcalloc(universe, sizeof *rank);
	size_t *first = pw_xcalloc(universe + 1, sizeof *first);
	size_t *fill, *succ, *ready = pw_xcalloc(universe, sizeof *ready);
	int *indeg = pw_xcalloc(universe, sizeof *indeg);
	struct pw_pred pred[PW_MAX_PREDS];
	int i, n;

	for (u = 0; u < universe; u++) {
		if (!pw_timing_has(e->timing, u))
			continue;
		n = pw_preds(e->p, e->sched, e->where, pw_op_from_index(e->p, u),
		    pred);
		indeg[u] = n;
		for (i = 0; i < n; i++)
			first[pw_op_index(e->p, pred[i].op) + 1]++;
	}
	for (u = 0; u < universe; u++)
		first[u + 1] += first[u];
	succ = pw_xcalloc(first[universe] + 1, sizeof *succ);
	fill = pw_xcalloc(universe + 1, sizeof *fill);
	memcpy(fill, first, universe * sizeof *fill);
	for (u = 0; u < universe; u++) {
		if (!pw_timing_has(e->timing, u))
			continue;
		n = pw_preds(e->p, e->sched, e->where, pw_op_from_index(e->p, u),
		    pred);
		for (i = 0; i < n; i++)
			succ[fill[pw_op_index(e->p, pred[i].op)]++] = u;
		if (n == 0)
			ready[nready++] = u;
	}
	while (nready > 0) {
		u = ready[--nready];
		rank[u] = next++;
		for (v = first[u]; v < first[u + 1]; v++)
			if (--indeg[succ[v]] == 0)
				ready[nready++] = succ[v];
	}
	free(indeg);
	free(ready);
	free(fill);
	free(succ);
	free(first);
	return rank;
}

/* Numbers every device's memory events (e->ticket, e->tbytes). */
static void
pw_engine_number_events(struct pw_engine *e)
{
	size_t u, n = 0, i, universe = pw_op_universe(e->p);
	struct pw_engine_event *ev = pw_xcalloc(universe, sizeof *ev);
	long *next = pw_xcalloc((size_t)e->p->devices, sizeof *next);
	size_t *rank = pw_engine_topo(e);

	for (u = 0; u < universe; u++) {
		struct pw_op op = pw_op_from_index(e->p, u);
		struct pw_mem_effect m;

		e->ticket[u] = -1;
		if (!pw_timing_has(e->timing, u))
			continue;
		m = pw_op_memory(e->p, op);
		if (m.alloc <= 0 && m.freed <= 0)
			continue;
		ev[n].op = op;
		ev[n].index = u;
		ev[n].rank = rank[u];
		ev[n].frees = m.alloc <= 0;
		ev[n].t = ev[n].frees ? e->timing->end[u] : e->timing->start[u];
		ev[n].early = ev[n].frees && e->timing->start[u] < ev[n].t;
		ev[n].transfer = pw_kind_is_transfer(op.kind);
		e->tbytes[u] = ev[n].frees ? m.freed : m.alloc;
		n++;
	}
	qsort(ev, n, sizeof *ev, pw_engine_event_cmp);
	for (i = 0; i < n; i++)
		e->ticket[ev[i].index] = next[pw_engine_device(e, ev[i].op)]++;
	free(rank);
	free(next);
	free(ev);
}

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

/* Opens what the devices of this process need: the backend, the arena,
 * the stages, the workers. */
static int
pw_engine_open(struct pw_engine *e, struct pw_error *err)
{
	const struct pw_problem *p = e->p;
	int d, s, c, rc;

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
		    e->dev[d].arena, e->opts->seed, &e->stage[s], err);
		if (rc != PW_OK) {
			e->stage[s] = NULL;
			return rc;
		}
	}
	return PW_OK;
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
	free(e->rec);
	free(e->host);
	pw_where_free(e->where);
	pw_timing_free(e->timing);
	pthread_cond_destroy(&e->changed);
	pthread_cond_destroy(&e->marked);
	pthread_mutex_destroy(&e->lock);
}

/* ------------------------------------------------------------------ */
/* Before the run: the inputs, the failure to inject, the schedule     */

static int
pw_engine_check_opts(const struct pw_rt_opts *o, struct pw_error *err)
{
	char why[128];

	if ((unsigned)o->backend >= PW_RT_NBACKENDS ||
	    (unsigned)o->transport >= PW_RT_NTRANSPORTS) {
		pw_error_set(err, "unknown backend or transport");
		return PW_ERR_INPUT;
	}
	if (!pw_rt_backend_available(o->backend, why, sizeof why)) {
		pw_error_set(err, "the %s backend: %s",
		    pw_rt_backend_name(o->backend), why);
		return PW_ERR_INPUT;
	}
	if (o->iterations < 1 || o->iterations > PW_MAX_ITERATIONS) {
		pw_error_set(err, "iterations %d: must be in 1..%d",
		    o->iterations, PW_MAX_ITERATIONS);
		return PW_ERR_INPUT;
	}
	if (o->warmup < 0 || o->warmup > PW_MAX_ITERATIONS) {
		pw_error_set(err, "warm-up %d: must be in 0..%d",
		    o->warmup, PW_MAX_ITERATIONS);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* Reads opts.fail_at ("DEVICE:OP") into E, refusing a value that names
 * no op of that device's schedule. */
static int
pw_engine_parse_fail(struct pw_engine *e, struct pw_error *err)
{
	const char *v = e->opts->fail_at, *colon;
	struct pw_error why;
	char dev[32], name[64], *shown;
	int rc = PW_ERR_INPUT;

	if (v == NULL)
		return PW_OK;
	shown = pw_escape(v);
	colon = strchr(v, ':');
	if (colon == NULL || (size_t)(colon - v) >= sizeof dev) {
		pw_error_set(err, "PIPEWRIGHT_FAIL_AT=\"%s\": must be DEVICE:OP, "
		    "as 2:B(0,3)", shown);
		goto out;
	}
	memcpy(dev, v, (size_t)(colon - v));
	dev[colon - v] = '\0';
	if (!pw_parse_int(dev, 0, e->p->devices - 1, &e->fail_device)) {
		pw_error_set(err, "PIPEWRIGHT_FAIL_AT=\"%s\": device \"%s\": must "
		    "be in 0..%d", shown, dev, e->p->devices - 1);
		goto out;
	}
	if (pw_op_parse(colon + 1, e->p, &e->fail_op, &why) != PW_OK) {
		pw_error_set(err, "PIPEWRIGHT_FAIL_AT=\"%s\": %s", shown, why.msg);
		goto out;
	}
	/* As a pin names it: B or W of a fused backward is its BW, BW of a
	 * split one its B. */
	if (!pw_engine_has(e, e->fail_op))
		e->fail_op = pw_pin_other(e->fail_op);
	pw_op_name(name, sizeof name, e->fail_op);
	if (!pw_engine_has(e, e->fail_op)) {
		pw_error_set(err, "PIPEWRIGHT_FAIL_AT=\"%s\": %s is not in the "
		    "schedule", shown, name);
		goto out;
	}
	if (pw_engine_device(e, e->fail_op) != e->fail_device) {
		pw_error_set(err, "PIPEWRIGHT_FAIL_AT=\"%s\": %s runs on device "
		    "%d, not device %d", shown, name,
		    pw_engine_device(e, e->fail_op), e->fail_device);
		goto out;
	}
	e->has_fail = true;
	rc = PW_OK;
out:
	free(shown);
	return rc;
}

/* Refuses a predicted peak above a device's limit and, on the CPU, whose
 * devices share the host's memory, predicted peaks of the devices here
 * that add up to more than the host has available. */
static int
pw_engine_check_memory(const struct pw_engine *e, const struct pw_metrics *met,
    struct pw_error *err)
{
	const struct pw_problem *p = e->p;
	double sum = 0, avail;
	int d, here = 0;

	for (d = 0; d < p->devices; d++) {
		if (met->device[d].peak > p->memory[d].limit) {
			pw_error_set(err, "refused: device %d's predicted "
			    "peak of %.0f bytes exceeds its limit of %.0f bytes", d,
			    met->device[d].peak, p->memory[d].limit);
			return PW_ERR_INPUT;
		}
		if (e->dev[d].here) {
			sum += met->device[d].peak;
			here++;
		}
	}
	if (e->backend->kind != PW_RT_CPU)
		return PW_OK;
	avail = pw_rt_cpu_available();
	if (sum > avail) {
		pw_error_set(err, "refused: the predicted peaks of the %d "
		    "device%s this process runs on the CPU add up to %.0f bytes, "
		    "more than the %.0f bytes of host memory available", here,
		    here == 1 ? "" : "s", sum, avail);
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* Simulates and checks the schedule: a malformed or deadlocking one, a
 * broken rule or a predicted peak above a limit is refused. */
static int
pw_engine_check_schedule(struct pw_engine *e, struct pw_error *err)
{
	const struct pw_problem *p = e->p;
	struct pw_violations v = { 0 };
	struct pw_metrics *met;
	struct pw_error why;
	int rc;

	if (e->sched->ndevices != p->devices || e->sched->nstages != p->nstages ||
	    e->sched->microbatches != p->microbatches ||
	    e->sched->nchannels != pw_problem_nchannels(p)) {
		pw_error_set(err, "the schedule is shaped for another "
		    "problem (%d devices, %d stages, %d microbatches, %d channels)",
		    e->sched->ndevices, e->sched->nstages, e->sched->microbatches,
		    e->sched->nchannels);
		return PW_ERR_INPUT;
	}
	if (e->work->nstages != p->nstages) {
		pw_error_set(err, "the workload has %d stages, the problem "
		    "%d", e->work->nstages, p->nstages);
		return PW_ERR_INPUT;
	}
	if ((rc = pw_simulate(p, e->sched, &e->timing, &why)) != PW_OK) {
		e->timing = NULL;
		pw_error_set(err, "refused: %s", why.msg);
		return PW_ERR_INPUT;
	}
	if ((rc = pw_where_build(p, e->sched, &e->where, &why)) != PW_OK) {
		e->where = NULL;
		pw_error_set(err, "refused: %s", why.msg);
		return PW_ERR_INPUT;
	}
	met = pw_metrics_compute(p, e->sched, e->timing);
	rc = pw_engine_check_memory(e, met, err);
	pw_metrics_free(met);
	if (rc != PW_OK)
		return rc;
	e->timed = pw_timed_ops(p, e->sched, e->timing, &e->nops);
	if ((double)e->opts->iterations * (double)e->nops * PW_ENGINE_REC_BYTES >
	    PW_RT_RECORD_BUDGET) {
		pw_error_set(err, "iterations %d: the records of %zu ops over "
		    "%d iterations (%.0f bytes) exceed the runtime's budget of "
		    "%.0f bytes; at most %.0f iterations of this schedule",
		    e->opts->iterations, e->nops, e->opts->iterations,
		    (double)e->opts->iterations * (double)e->nops *
		    PW_ENGINE_REC_BYTES, PW_RT_RECORD_BUDGET,
		    floor(PW_RT_RECORD_BUDGET / ((double)e->nops *
		    PW_ENGINE_REC_BYTES)));
		return PW_ERR_INPUT;
	}
	if (pw_check(p, e->timed, e->nops, &v) > 0) {
		pw_error_set(err, "refused: %s", v.msg[0]);
		rc = PW_ERR_INPUT;
	}
	pw_violations_free(&v);
	return rc;
}

/* ------------------------------------------------------------------ */
/* MPI: rank 0's problem, schedule and workload to every rank          */

/* The workload as one line: hidden ffn tokens scaled nstages layers...
 * Returns a string the caller frees (*LEN its length, no NUL counted),
 * NULL when no stream can be opened. */
static char *
pw_engine_workload_line(const struct pw_workload *w, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	int s;

	if (fp == NULL)
		return NULL;
	fprintf(fp, "%d %d %d %d %d", w->hidden, w->ffn, w->tokens,
	    w->scaled ? 1 : 0, w->nstages);
	for (s = 0; s < w->nstages; s++)
		fprintf(fp, " %d", w->layers[s]);
	fclose(fp);
	return buf;
}

/* The next number of *AT, from LO to HI, into *OUT; *AT past it.  False
 * for no number or one out of range. */
static bool
pw_engine_field(char **at, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(*at, &end, 10);
	if (end == *at || errno != 0 || v < lo || v > hi)
		return false;
	*at = end;
	*out = (int)v;
	return true;
}

/* Reads pw_engine_workload_line's line into W (the caller's: cleared on
 * success, untouched else), every field range-checked, then the
 * workload as pw_workload_validate holds it. */
static int
pw_engine_workload_read(const char *buf, size_t len, struct pw_workload *w,
    struct pw_error *err)
{
	char *line = pw_xmalloc(len + 1), *at;
	struct pw_workload r = { 0 };
	int s, scaled, rc = PW_ERR_INPUT;
	bool parsed = false;

	memcpy(line, buf, len);
	line[len] = '\0';
	at = line;
	if (!pw_engine_field(&at, 0, INT_MAX, &r.hidden) ||
	    !pw_engine_field(&at, 0, INT_MAX, &r.ffn) ||
	    !pw_engine_field(&at, 0, INT_MAX, &r.tokens) ||
	    !pw_engine_field(&at, 0, 1, &scaled) ||
	    !pw_engine_field(&at, 1, (long)PW_MAX_PAIRS, &r.nstages))
		goto out;
	r.scaled = scaled != 0;
	r.layers = pw_xcalloc((size_t)r.nstages, sizeof *r.layers);
	for (s = 0; s < r.nstages; s++)
		if (!pw_engine_field(&at, 0, INT_MAX, &r.layers[s]))
			goto out;
	if (*at != '\0')
		goto out;
	parsed = true;
	rc = pw_workload_validate(&r, r.nstages, "rank 0's workload", err);
	if (rc == PW_OK)
		*w = r;
out:
	if (!parsed)
		pw_error_set(err, "rank 0's workload is malformed");
	if (rc != PW_OK)
		pw_workload_clear(&r);
	free(line);
	return rc;
}

/* Rank 0 sends what it checked (or an empty message when it refused, so
 * that the others end too); the other ranks read it into *PROBLEM,
 * *SCHED and *WORK, theirs to free. */
static int
pw_engine_share(struct pw_rt_net *net, bool refused, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *timing,
    const struct pw_workload *work, struct pw_problem **op,
    struct pw_schedule **osched, struct pw_workload *owork,
    struct pw_error *err)
{
	char *buf = NULL, *wbuf = NULL;
	size_t len = 0, wlen = 0, nops = 0;
	struct pw_timed_op *ops = NULL;
	struct pw_measured *m = NULL;
	FILE *fp;
	int rc;

	if (net->rank == 0 && !refused) {
		if ((fp = open_memstream(&buf, &len)) == NULL) {
			pw_error_set(err, "cannot buffer the schedule");
			return PW_ERR_RUNTIME;
		}
		rc = pw_schedule_write_stream(fp, p, sched, timing, NULL, err);
		fclose(fp);
		if (rc != PW_OK) {
			free(buf);
			buf = NULL;
			len = 0;
		}
		wbuf = pw_engine_workload_line(work, &wlen);
	}
	rc = net->bcast(net, &buf, &len, err);
	if (rc == PW_OK)
		rc = net->bcast(net, &wbuf, &wlen, err);
	if (rc != PW_OK || net->rank == 0)
		goto out;
	if (len == 0) {
		pw_error_set(err, "rank 0 refused the schedule");
		rc = PW_ERR_INPUT;
		goto out;
	}
	if ((fp = fmemopen(buf, len, "r")) == NULL) {
		pw_error_set(err, "cannot read rank 0's schedule");
		rc = PW_ERR_RUNTIME;
		goto out;
	}
	rc = pw_file_read_stream(fp, "rank 0's schedule", op, &ops, &nops, &m, err);
	fclose(fp);
	pw_measured_free(m);
	if (rc == PW_OK)
		rc = pw_schedule_from_timed(*op, ops, nops, osched, err);
	if (rc == PW_OK)
		rc = pw_engine_workload_read(wbuf, wlen, owork, err);
out:
	free(ops);
	free(buf);
	free(wbuf);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The run                                                             */

/* Each rank's iteration, for rank 0: its latest op end, its loss. */
struct pw_engine_tick {
	double	span;
	double	loss;
	int	has_loss;
};

static void
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
	tick->span = e->span;
	tick->loss = e->loss;
	tick->has_loss = e->dev[e->p->stages[e->p->nstages - 1].device].here;
	rc = atomic_load(&e->stop) ? e->rc : PW_OK;
	pthread_mutex_unlock(&e->lock);
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

/* The measured ops this process ran, as doubles: per op its slot, then
 * start, end and arrive of every measured iteration; first the peak of
 * its device(s) and its gradient error.  Returns an array the caller
 * frees, *LEN its bytes. */
static double *
pw_engine_pack(const struct pw_engine *e, double grad_error, size_t *len)
{
	int K = e->opts->iterations, k, d;
	size_t i, n = 0, per = 1 + PW_ENGINE_REC * (size_t)K;
	double *buf = pw_xcalloc(2 + (size_t)e->p->devices + e->nops * per,
	    sizeof *buf);

	buf[n++] = grad_error;
	for (d = 0; d < e->p->devices; d++)
		buf[n++] = e->dev[d].here ? pw_rt_arena_peak(e->dev[d].arena) : -1;
	for (i = 0; i < e->nops; i++) {
		if (!e->dev[e->timed[i].device].here)
			continue;
		buf[n++] = (double)i;
		for (k = 0; k < K; k++)
			memcpy(&buf[n + PW_ENGINE_REC * (size_t)k],
			    pw_engine_rec(e, k, i), PW_ENGINE_REC_BYTES);
		n += PW_ENGINE_REC * (size_t)K;
	}
	*len = n * sizeof *buf;
	return buf;
}

/* Reads what pw_engine_pack wrote (of another rank) into E's records,
 * PEAK and *GRAD_ERROR (the largest). */
static int
pw_engine_unpack(struct pw_engine *e, const char *bytes, size_t len,
    double *peak, double *grad_error, struct pw_error *err)
{
	int K = e->opts->iterations, d, k;
	size_t n = len / sizeof(double), at = 0, i;
	size_t per = 1 + PW_ENGINE_REC * (size_t)K;
	double *buf = pw_xmalloc(len + 1);

	memcpy(buf, bytes, len);
	if (n < 1 + (size_t)e->p->devices ||
	    (n - 1 - (size_t)e->p->devices) % per != 0) {
		free(buf);
		pw_error_set(err, "a rank sent malformed measurements");
		return PW_ERR_RUNTIME;
	}
	if (buf[at] > *grad_error || isnan(buf[at]))
		*grad_error = buf[at];
	at++;
	for (d = 0; d < e->p->devices; d++, at++)
		if (buf[at] >= 0)
			peak[d] = buf[at];
	while (at < n) {
		i = (size_t)buf[at++];
		for (k = 0; i < e->nops && k < K; k++)
			memcpy(pw_engine_rec(e, k, i),
			    &buf[at + PW_ENGINE_REC * (size_t)k],
			    PW_ENGINE_REC_BYTES);
		at += PW_ENGINE_REC * (size_t)K;
	}
	free(buf);
	return PW_OK;
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
		peak[d] = e->dev[d].here ? pw_rt_arena_peak(e->dev[d].arena) : 0;
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
	pthread_mutex_t spare;
	int d;

	memset(e, 0, sizeof *e);
	e->p = p;
	e->sched = sched;
	e->work = work;
	e->opts = opts;
	/* The one backend built (pw_engine_check_opts refused the others). */
	e->backend = &pw_rt_cpu;
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
	pw_sync_init(&e->lock, &e->changed);
	/* MARKED shares LOCK: pw_sync_init sets up a pair, so its own lock
	 * is a spare one. */
	pw_sync_init(&spare, &e->marked);
	pthread_mutex_destroy(&spare);
	atomic_init(&e->stop, false);
}

/* Which hosts the ranks run on, for the measured run: E->host on rank 0,
 * each name once, in rank order. */
static int
pw_engine_hosts(struct pw_engine *e, struct pw_error *err)
{
	/* HOST_NAME_MAX is 64 on Linux; POSIX allows 255 and a
	 * truncated name is still terminated below. */
	char name[256], **all = NULL;
	size_t *lens = NULL;
	int r, q, rc;

	if (gethostname(name, sizeof name) != 0)
		snprintf(name, sizeof name, "localhost");
	name[sizeof name - 1] = '\0';
	if (e->net->size == 1) {
		e->host = pw_xstrdup(name);
		return PW_OK;
	}
	rc = e->net->gather(e->net, name, strlen(name) + 1, &all, &lens, err);
	for (r = 0; rc == PW_OK && e->net->rank == 0 && r < e->net->size; r++) {
		all[r][lens[r] > 0 ? lens[r] - 1 : 0] = '\0';
		for (q = 0; q < r && strcmp(all[q], all[r]) != 0; q++)
			continue;
		if (r == 0)
			e->host = pw_xstrdup(all[r]);
		else if (q == r) {
			char *joined = pw_xasprintf("%s,%s", e->host, all[r]);

			free(e->host);
			e->host = joined;
		}
	}
	pw_engine_free_gathered(e, all, lens);
	return rc;
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
	if (rc == PW_OK)
		rc = pw_engine_threads(&e, true, err);
	if (rc != PW_OK) {
		pw_engine_stop(&e, rc, err, true);
		pw_engine_threads(&e, false, err);
		rc = PW_ERR_RUNTIME;
		goto out;
	}
	rc = pw_engine_run(&e, step, loss, err);
	ran = true;
	if (rc == PW_OK)
		rc = pw_engine_finish(&e, step, loss, out, err);
out:
	out->originated = pw_engine_originated(inited ? &e : NULL, net, rc, ran);
	if (inited)
		pw_engine_free(&e);
	free(step);
	free(loss);
	net->close(net);
	pw_problem_free(shared.problem);
	pw_schedule_free(shared.sched);
	pw_workload_clear(&shared.work);
	return rc;
}
