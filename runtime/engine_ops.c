/*
 * engine_ops.c - the workers: how a run stops, the marks of an op's
 * start and end, the hand-offs between devices, the compute ops and the
 * transfers, and each worker's iterations (engine.h).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* The record of the op in SLOT in measured iteration K: PW_ENGINE_REC
 * doubles, E's. */
double *
pw_engine_rec(const struct pw_engine *e, int k, size_t slot)
{
	return &e->rec[((size_t)k * e->nops + slot) * PW_ENGINE_REC];
}

/* Records the first error and stops every wait.  Later errors (mostly
 * "stopped" from the waits the first one ended) are dropped.  Whether
 * the first began here (ORIGINAL: not a wait that a stop ended; a
 * cancel aside, which every rank sees) goes to pw_rt_result.originated,
 * and whether it was this rank's own cancel to pw_rt_result.own_cancel,
 * so that under MPI the program has the rank where an error starts say
 * it and end the job, and the others end without a word: the job's one
 * line.  E's net is open (a run is under way). */
void
pw_engine_stop(struct pw_engine *e, int rc, const struct pw_error *err,
    bool original)
{
	int d;

	pthread_mutex_lock(&e->lock);
	if (e->rc == PW_OK) {
		e->rc = rc;
		e->err = *err;
		e->originated = original && rc != PW_ERR_CANCELLED;
		e->own_cancel = original && rc == PW_ERR_CANCELLED;
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

int
pw_engine_device(const struct pw_engine *e, struct pw_op op)
{
	return e->p->stages[op.stage].device;
}

bool
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
	char size[32];
	float *b;

	if (dv->npool > 0)
		return dv->pool[--dv->npool];
	b = e->backend->alloc(dv->ctx, e->io * sizeof *b);
	if (b == NULL)
		pw_error_set(err, "the %s backend refused a hand-off buffer of "
		    "%s", pw_rt_backend_name(e->backend->kind),
		    pw_fmt_bytes(size, sizeof size, (double)(e->io *
		    sizeof *b)));
	return b;
}

void
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

/* The lane OP's work goes on. */
static enum pw_rt_lane
pw_engine_lane(struct pw_op op)
{
	return op.kind == PW_OFFLOAD ? PW_RT_LANE_D2H :
	    op.kind == PW_RELOAD ? PW_RT_LANE_H2D : PW_RT_LANE_COMPUTE;
}

/* Where the backend keeps a clock of its own, marks OP's start (END
 * false) or end on device D's lane for it. */
static int
pw_engine_device_mark(struct pw_engine *e, int d, struct pw_op op, bool end,
    struct pw_error *err)
{
	if (e->backend->mark == NULL)
		return PW_OK;
	return e->backend->mark(e->dev[d].ctx, pw_engine_lane(op),
	    e->slot[pw_op_index(e->p, op)], end, err);
}

/* Where the backend orders its lanes itself, device D's lane for OP
 * waits for DEP's end (of this device) there too. */
static int
pw_engine_device_wait(struct pw_engine *e, int d, struct pw_op op,
    struct pw_op dep, struct pw_error *err)
{
	if (e->backend->wait == NULL)
		return PW_OK;
	return e->backend->wait(e->dev[d].ctx, pw_engine_lane(op),
	    e->slot[pw_op_index(e->p, dep)], err);
}

/* OP starts on device D in iteration IT: its memory event is the
 * arena's to order, its start is recorded.  An op that allocates as it
 * starts (F, a reload) starts when its event's turn comes: recorded
 * before, a reload would seem to hold its bytes while the offload it
 * waited for still held its own, and the measured timeline would break
 * the limit the run kept. */
static int
pw_engine_begin(struct pw_engine *e, int d, struct pw_op op, int it,
    struct pw_error *err)
{
	size_t u = pw_op_index(e->p, op);
	int rc;

	pw_rt_arena_expect(e->dev[d].arena, e->ticket[u], e->tbytes[u]);
	if ((e->ticket[u] >= 0 && pw_op_memory(e->p, op).alloc > 0 &&
	    (rc = pw_rt_arena_ready(e->dev[d].arena, err)) != PW_OK) ||
	    (rc = pw_engine_device_mark(e, d, op, false, err)) != PW_OK) {
		/* The event ends with the op that will not run. */
		pw_rt_arena_settle(e->dev[d].arena, NULL);
		return rc;
	}
	pw_engine_mark(e, op, it, false, pw_now() - e->t0);
	return PW_OK;
}

/* OP, begun, did its work with RC: when it went well its end is
 * recorded, then its memory event settles (a free ends there, after the
 * end recorded, so that no event after it seems to start before it).
 * Returns the first error. */
static int
pw_engine_end(struct pw_engine *e, int d, struct pw_op op, int it, int rc,
    struct pw_error *err)
{
	if (rc == PW_OK)
		rc = pw_engine_device_mark(e, d, op, true, err);
	if (rc == PW_OK)
		pw_engine_mark(e, op, it, true, pw_now() - e->t0);
	if (rc == PW_OK)
		rc = pw_rt_arena_settle(e->dev[d].arena, err);
	else
		pw_rt_arena_settle(e->dev[d].arena, NULL);
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
		if (pw_engine_has(e, reload)) {
			if (!pw_engine_await(e, reload, it, true))
				return PW_ERR_CANCELLED;
			if ((rc = pw_engine_device_wait(e, d, op, reload,
			    err)) != PW_OK)
				return rc;
		}
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

	if ((rc = pw_engine_inputs(e, d, op, it, &in, &out, err)) != PW_OK ||
	    (rc = pw_engine_begin(e, d, op, it, err)) != PW_OK)
		goto out;
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
	if ((rc = pw_engine_device_wait(e, d, op, dep, err)) != PW_OK)
		return rc;
	if (op.kind == PW_RELOAD &&
	    pw_schedule_anchor(e->sched, op.stage, op.mb, &anchor) &&
	    pw_engine_has(e, anchor.op) &&
	    !pw_engine_await(e, anchor.op, it, anchor.at_end))
		return PW_ERR_CANCELLED;
	/* What F kept is E's since F ended. */
	sv = e->saved[(size_t)op.stage * (size_t)e->m + (size_t)op.mb];

	if ((rc = pw_engine_begin(e, d, op, it, err)) != PW_OK)
		return rc;
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

void *
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
