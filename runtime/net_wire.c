/*
 * net_wire.c - the sequenced transport: hand-offs between devices over a
 * wire with NCCL's matching (a send completes once its receive is
 * posted; transfers between two devices match in posting order).
 *
 * Over such a wire a device that sends whenever its op ends and receives
 * whenever its next op needs can deadlock: two neighbours each sending the
 * other what it will only receive after its own send completes (the
 * steady state of 1F1B).  So here a thread per device posts the device's
 * transfers, and every device posts in one global order: by the simulated
 * end of the op that produces each tensor (pw_rt_messages).  A compute
 * worker's send copies its floats into a wire buffer (an outbox) and
 * returns; its receive waits for the device's thread to have received the
 * tensor (an inbox).  The device threads never wait on each other in a
 * cycle: of the messages not yet through, the first in the order has its
 * tensor produced (its op waits only for earlier messages) and both of
 * its devices at it (each has passed every earlier one of its own), so it
 * goes through.  A device thread groups what it can post at once, in the
 * order: while each tensor was made (on the simulated timeline) before
 * the group's receives are used, and sends only once their tensors are
 * in the outbox (pw_wire_group says why).  Ties in the times go by
 * causal depth, so zero-length ops cannot reverse a cause and its
 * effect.
 *
 * The order repeats every iteration, so a device thread goes round its
 * list once for each, or until the net is stopped or closed.  Tokens of
 * shared channels (no floats), broadcasts, gathers, barriers and the
 * clock are the base net's.
 *
 * The matched wire at the end is this file's too: NCCL's matching
 * between the threads of one process, on any memory that can copy.  On
 * the heap (the host wire) the suite runs every schedule through the
 * sequenced transport on a machine without a GPU; on a GPU (cuda.c) it
 * joins devices that share one, which NCCL refuses to.
 */
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"

/* The most transfers a device thread posts as one group. */
#define PW_WIRE_GROUP	16

/* ------------------------------------------------------------------ */
/* The order                                                           */

struct pw_wire_key {
	struct pw_rt_message msg;
	long	depth;		/* its producing op's causal depth */
};

static int
pw_wire_key_cmp(const void *a, const void *b)
{
	const struct pw_wire_key *x = a, *y = b;

	if (x->msg.made != y->msg.made)
		return x->msg.made < y->msg.made ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->msg.from != y->msg.from)
		return x->msg.from < y->msg.from ? -1 : 1;
	if (x->msg.to != y->msg.to)
		return x->msg.to < y->msg.to ? -1 : 1;
	return (x->msg.tag > y->msg.tag) - (x->msg.tag < y->msg.tag);
}

/* Each op's causal depth in DEPTH[universe] (zeroed): 1 + the deepest of
 * its predecessors (pw_preds), so that an op is deeper than every op it
 * waits for, however the times tie (zero durations, no hop).  A
 * depth-first walk from each op of OPS[N]: an op on top of the stack is
 * opened (-1) by pushing the predecessors it still needs, and settled
 * once they are; a copy pushed again meanwhile is dropped when it comes
 * up.  A predecessor already open is on the walk's own path, a cycle,
 * which a schedule that simulated cannot have (assert). */
static void
pw_wire_depths(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_where *where, const struct pw_timed_op *ops, size_t n,
    long *depth)
{
	struct pw_pred pred[PW_MAX_PREDS];
	size_t cap = n + 1, top, i, u, q;
	struct pw_op *stack = pw_xcalloc(cap, sizeof *stack);
	long d;
	int k, np;
	bool open;

	for (i = 0; i < n; i++) {
		stack[0] = ops[i].op;
		top = 1;
		while (top > 0) {
			u = pw_op_index(p, stack[top - 1]);
			if (depth[u] > 0) {
				top--;
				continue;
			}
			open = depth[u] < 0;
			np = pw_preds(p, sched, where, stack[top - 1], pred);
			for (d = 1, k = 0; k < np; k++) {
				q = pw_op_index(p, pred[k].op);
				if (depth[q] > 0) {
					if (depth[q] + 1 > d)
						d = depth[q] + 1;
					continue;
				}
				assert(depth[q] == 0 && !open);
				if (depth[q] != 0 || open)
					continue;
				if (top == cap) {
					cap *= 2;
					stack = pw_xreallocarray(stack, cap,
					    sizeof *stack);
				}
				stack[top++] = pred[k].op;
				depth[u] = -1;
			}
			if (depth[u] == 0 || open) {
				depth[u] = d;
				top--;
			}
		}
	}
	free(stack);
}

/* Whether compute op OP hands a tensor on, and to which op (*TO): a
 * backward's receiver is the B, or the fused BW where WHERE has that. */
static bool
pw_wire_hands(const struct pw_problem *p, const struct pw_where *where,
    struct pw_op op, struct pw_op *to)
{
	switch (op.kind) {
	case PW_F:
		if (op.stage >= p->nstages - 1)
			return false;
		*to = (struct pw_op){ PW_F, op.stage + 1, op.mb };
		return true;
	case PW_B:
	case PW_BW:
		if (op.stage == 0)
			return false;
		*to = (struct pw_op){ PW_B, op.stage - 1, op.mb };
		if (!pw_where_has(where, p, *to))
			to->kind = PW_BW;
		return true;
	default:
		return false;
	}
}

struct pw_rt_message *
pw_rt_messages(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_where *where, const struct pw_timed_op *ops, size_t n,
    size_t *count)
{
	size_t universe = pw_op_universe(p), i, c = 0;
	struct pw_wire_key *k = pw_xcalloc(n + 1, sizeof *k);
	double *start = pw_xcalloc(universe, sizeof *start);
	long *depth = pw_xcalloc(universe, sizeof *depth);
	struct pw_rt_message *out;
	struct pw_op to;

	pw_wire_depths(p, sched, where, ops, n, depth);
	for (i = 0; i < n; i++)
		start[pw_op_index(p, ops[i].op)] = ops[i].start;
	for (i = 0; i < n; i++) {
		int from = ops[i].device, dst;

		if (!pw_wire_hands(p, where, ops[i].op, &to))
			continue;
		dst = p->stages[to.stage].device;
		if (dst == from)
			continue;
		k[c].depth = depth[pw_op_index(p, ops[i].op)];
		k[c].msg = (struct pw_rt_message){ from, dst, pw_rt_tag(to),
		    ops[i].end, start[pw_op_index(p, to)] };
		c++;
	}
	qsort(k, c, sizeof *k, pw_wire_key_cmp);
	out = pw_xcalloc(c + 1, sizeof *out);
	for (i = 0; i < c; i++)
		out[i] = k[i].msg;
	free(depth);
	free(start);
	free(k);
	*count = c;
	return out;
}

/* ------------------------------------------------------------------ */
/* The sequenced transport                                             */

/* A tensor waiting in a box: a wire buffer under its tag. */
struct pw_wire_item {
	struct pw_wire_item *next;
	uint64_t tag;
	float	*buf;
	double	at;		/* pw_now when it was put there */
};

struct pw_wire_dev {
	struct pw_wire_net *w;
	int	device;
	bool	here;
	struct pw_rt_message *msgs;	/* the device's, in the order */
	size_t	nmsgs;
	int	round;			/* the iteration its thread is in */
	struct pw_wire_item *outbox, *inbox;
	float	**spare;		/* wire buffers not in use */
	int	nspare, capspare;
	pthread_t thread;
	bool	running;
	bool	finished;		/* its thread has returned (W locked) */
};

struct pw_wire_net {
	struct pw_rt_net *base;
	struct pw_rt_wire *wire;
	int	devices;
	size_t	floats;
	int	rounds;
	struct pw_wire_dev *dev;	/* [devices] */
	pthread_mutex_t lock;		/* every box and spare list */
	pthread_cond_t changed;
	bool	stopped;
	bool	quit;
	int	rc;			/* the first failure of a device thread */
	struct pw_error err;
};

/* When the calling thread's last received tensor arrived. */
static _Thread_local double pw_wire_last;

/* A wire buffer of device D (W locked): a spare, else new; NULL when
 * the wire refuses. */
static float *
pw_wire_buf(struct pw_wire_net *w, int d)
{
	struct pw_wire_dev *x = &w->dev[d];

	if (x->nspare > 0)
		return x->spare[--x->nspare];
	return w->wire->buf_alloc(w->wire, d, w->floats);
}

/* Keeps BUF of device D for later (W locked). */
static void
pw_wire_unbuf(struct pw_wire_net *w, int d, float *buf)
{
	struct pw_wire_dev *x = &w->dev[d];

	if (x->nspare == x->capspare) {
		x->capspare = x->capspare ? 2 * x->capspare : 8;
		x->spare = pw_xreallocarray(x->spare, (size_t)x->capspare,
		    sizeof *x->spare);
	}
	x->spare[x->nspare++] = buf;
}

/* Unlinks and returns the item under TAG from *BOX, NULL when none. */
static struct pw_wire_item *
pw_wire_take(struct pw_wire_item **box, uint64_t tag)
{
	struct pw_wire_item **pp, *it;

	for (pp = box; (it = *pp) != NULL; pp = &it->next)
		if (it->tag == tag) {
			*pp = it->next;
			return it;
		}
	return NULL;
}

static void
pw_wire_put(struct pw_wire_item **box, uint64_t tag, float *buf)
{
	struct pw_wire_item *it = pw_xcalloc(1, sizeof *it);

	it->tag = tag;
	it->buf = buf;
	it->at = pw_now();
	it->next = *box;
	*box = it;
}

/* The state a wait of W ends in (W locked): PW_OK to go on, else the
 * first failure or a stop, in ERR. */
static int
pw_wire_status(const struct pw_wire_net *w, int device, struct pw_error *err)
{
	if (w->rc != PW_OK) {
		if (err != NULL)
			*err = w->err;
		return w->rc;
	}
	if (w->stopped || w->quit) {
		pw_error_set(err, "device %d: the %s transport was stopped",
		    device, w->wire->name);
		return PW_ERR_CANCELLED;
	}
	return PW_OK;
}

/* A device thread's failure: the first is kept, every wait ends. */
static void
pw_wire_failed(struct pw_wire_net *w, int rc, const struct pw_error *err)
{
	pthread_mutex_lock(&w->lock);
	if (w->rc == PW_OK && !w->stopped && !w->quit) {
		w->rc = rc == PW_ERR_CANCELLED ? PW_ERR_RUNTIME : rc;
		w->err = *err;
	}
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	w->wire->abort(w->wire);
}

/* The next group of device X from position *AT of its list (W locked):
 * the transfers from there on that can go together, the first send's
 * wait for its tensor first when it comes first.  A group's receives
 * reach the inbox only when all of it has completed, so a transfer joins
 * only where its tensor was made, on the simulated timeline, before every
 * receive already in the group is used: nothing that makes it can wait
 * for those (directly, or through another device's op, a shared
 * channel's token or a reload's anchor).  A send joins only once its
 * tensor is in the outbox.  Fills XF and TAGS, moves *AT past them;
 * returns their count, 0 once stopped or through every round, -1 when the
 * wire refused a buffer (ERR). */
static int
pw_wire_group(struct pw_wire_dev *x, size_t *at, struct pw_rt_xfer *xf,
    uint64_t *tags, struct pw_error *err)
{
	struct pw_wire_net *w = x->w;
	double first_use = INFINITY;
	int n = 0;

	while (n < PW_WIRE_GROUP && x->round < w->rounds &&
	    pw_wire_status(w, x->device, NULL) == PW_OK) {
		const struct pw_rt_message *m = &x->msgs[*at];
		bool send = m->from == x->device;
		struct pw_wire_item *it = NULL;
		float *buf;

		if (n > 0 && !(m->made < first_use))
			break;
		if (send && (it = pw_wire_take(&x->outbox, m->tag)) == NULL) {
			if (n > 0)
				break;
			pw_sync_wait(&w->changed, &w->lock, PW_RT_WAIT);
			continue;
		}
		if (send) {
			buf = it->buf;
			free(it);
		} else if ((buf = pw_wire_buf(w, x->device)) == NULL) {
			if (n > 0)
				break;	/* what it has first; then this again */
			pw_error_set(err, "device %d: %s: no memory for a "
			    "receive buffer of %zu floats", x->device,
			    w->wire->name, w->floats);
			return -1;
		}
		xf[n] = (struct pw_rt_xfer){ send ? m->to : m->from, send, buf,
		    w->floats };
		tags[n++] = m->tag;
		if (!send && m->used < first_use)
			first_use = m->used;
		*at = (*at + 1) % x->nmsgs;
		if (*at == 0) {
			x->round++;
			break;	/* an iteration's last: the next waits for it */
		}
	}
	return n;
}

/* A device thread: its list once an iteration, a group at a time. */
static void *
pw_wire_main(void *arg)
{
	struct pw_wire_dev *x = arg;
	struct pw_wire_net *w = x->w;
	struct pw_rt_xfer xf[PW_WIRE_GROUP];
	uint64_t tags[PW_WIRE_GROUP];
	struct pw_error err;
	size_t at = 0;
	int n, i, rc;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		n = pw_wire_group(x, &at, xf, tags, &err);
		pthread_mutex_unlock(&w->lock);
		if (n < 0) {
			pw_wire_failed(w, PW_ERR_RUNTIME, &err);
			break;
		}
		if (n == 0)
			break;
		rc = w->wire->exchange(w->wire, x->device, xf, n, &err);
		pthread_mutex_lock(&w->lock);
		for (i = 0; i < n; i++) {
			if (xf[i].send || rc != PW_OK)
				pw_wire_unbuf(w, x->device, xf[i].buf);
			else
				pw_wire_put(&x->inbox, tags[i], xf[i].buf);
		}
		pthread_cond_broadcast(&w->changed);
		pthread_mutex_unlock(&w->lock);
		if (rc != PW_OK) {
			if (rc != PW_ERR_CANCELLED)
				pw_wire_failed(w, rc, &err);
			break;
		}
	}
	pthread_mutex_lock(&w->lock);
	x->finished = true;
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static int
pw_wire_send(struct pw_rt_net *net, int from, int to, uint64_t tag,
    const float *buf, size_t n, struct pw_error *err)
{
	struct pw_wire_net *w = net->ctx;
	float *copy;
	int rc;

	if (n == 0)
		return w->base->send(w->base, from, to, tag, buf, n, err);
	if (from < 0 || from >= w->devices || !w->dev[from].here ||
	    n != w->floats) {
		pw_error_set(err, "%s transport: a send of %zu floats from "
		    "device %d (%zu a hand-off)", w->wire->name, n, from,
		    w->floats);
		return PW_ERR_RUNTIME;
	}
	pthread_mutex_lock(&w->lock);
	copy = pw_wire_buf(w, from);
	pthread_mutex_unlock(&w->lock);
	if (copy == NULL) {
		pw_error_set(err, "device %d: %s: no memory for a send buffer "
		    "of %zu floats", from, w->wire->name, n);
		return PW_ERR_RUNTIME;
	}
	if ((rc = w->wire->copy(w->wire, from, copy, buf, n, err)) != PW_OK) {
		pthread_mutex_lock(&w->lock);
		pw_wire_unbuf(w, from, copy);
		pthread_mutex_unlock(&w->lock);
		return rc;
	}
	pthread_mutex_lock(&w->lock);
	if ((rc = pw_wire_status(w, from, err)) == PW_OK)
		pw_wire_put(&w->dev[from].outbox, tag, copy);
	else
		pw_wire_unbuf(w, from, copy);
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static int
pw_wire_recv(struct pw_rt_net *net, int from, int to, uint64_t tag,
    float *buf, size_t n, struct pw_error *err)
{
	struct pw_wire_net *w = net->ctx;
	struct pw_wire_item *it = NULL;
	int rc = PW_OK;

	if (n == 0)
		return w->base->recv(w->base, from, to, tag, buf, n, err);
	if (to < 0 || to >= w->devices || !w->dev[to].here || n != w->floats) {
		pw_error_set(err, "%s transport: a receive of %zu floats on "
		    "device %d (%zu a hand-off)", w->wire->name, n, to,
		    w->floats);
		return PW_ERR_RUNTIME;
	}
	pthread_mutex_lock(&w->lock);
	while ((it = pw_wire_take(&w->dev[to].inbox, tag)) == NULL &&
	    (rc = pw_wire_status(w, to, err)) == PW_OK)
		pw_sync_wait(&w->changed, &w->lock, PW_RT_WAIT);
	pthread_mutex_unlock(&w->lock);
	if (it == NULL)
		return rc;
	rc = w->wire->copy(w->wire, to, buf, it->buf, n, err);
	pw_wire_last = it->at;
	pthread_mutex_lock(&w->lock);
	pw_wire_unbuf(w, to, it->buf);
	pthread_mutex_unlock(&w->lock);
	free(it);
	return rc;
}

static double
pw_wire_arrived(struct pw_rt_net *net)
{
	(void)net;
	return pw_wire_last;
}

static void
pw_wire_stop(struct pw_rt_net *net)
{
	struct pw_wire_net *w = net->ctx;

	pthread_mutex_lock(&w->lock);
	w->stopped = true;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	w->wire->abort(w->wire);
	w->base->stop(w->base);
}

static int
pw_wire_bcast(struct pw_rt_net *net, char **buf, size_t *len,
    struct pw_error *err)
{
	struct pw_wire_net *w = net->ctx;

	return w->base->bcast(w->base, buf, len, err);
}

static int
pw_wire_gather(struct pw_rt_net *net, const char *buf, size_t len,
    char ***all, size_t **lens, struct pw_error *err)
{
	struct pw_wire_net *w = net->ctx;

	return w->base->gather(w->base, buf, len, all, lens, err);
}

static int
pw_wire_barrier(struct pw_rt_net *net, struct pw_error *err)
{
	struct pw_wire_net *w = net->ctx;

	return w->base->barrier(w->base, err);
}

static int
pw_wire_common(struct pw_rt_net *net, double *t0, struct pw_error *err)
{
	struct pw_wire_net *w = net->ctx;

	return w->base->common(w->base, t0, err);
}

/* Frees a box's items, their buffers back to D's spares (W locked). */
static void
pw_wire_empty(struct pw_wire_net *w, int d, struct pw_wire_item **box)
{
	struct pw_wire_item *it;

	while ((it = *box) != NULL) {
		*box = it->next;
		pw_wire_unbuf(w, d, it->buf);
		free(it);
	}
}

/* Ends W's threads and frees W and NET; closes the base net too when
 * BASE says so (it is W's once made). */
static void
pw_wire_end(struct pw_rt_net *net, bool base)
{
	struct pw_wire_net *w = net->ctx;
	bool busy = false;
	int d, k;

	/* A run that went through every round leaves nothing in flight: the
	 * wire then ends its transfers' links cleanly; threads still at work
	 * (a failed open) and a stopped or failed run end by an abort. */
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	busy = w->stopped || w->rc != PW_OK;
	for (d = 0; d < w->devices; d++)
		busy |= w->dev[d].running && !w->dev[d].finished;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	if (busy)
		w->wire->abort(w->wire);
	for (d = 0; d < w->devices; d++)
		if (w->dev[d].running)
			pthread_join(w->dev[d].thread, NULL);
	for (d = 0; d < w->devices; d++) {
		struct pw_wire_dev *x = &w->dev[d];

		pw_wire_empty(w, d, &x->outbox);
		pw_wire_empty(w, d, &x->inbox);
		for (k = 0; k < x->nspare; k++)
			w->wire->buf_release(w->wire, d, x->spare[k]);
		free(x->spare);
		free(x->msgs);
	}
	w->wire->close(w->wire);
	if (base)
		w->base->close(w->base);
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	free(w->dev);
	free(w);
	free(net);
}

static void
pw_wire_close(struct pw_rt_net *net)
{
	if (net != NULL)
		pw_wire_end(net, true);
}

int
pw_rt_net_wire(struct pw_rt_net *base, struct pw_rt_wire *wire, int devices,
    const struct pw_rt_message *msgs, size_t nmsgs, size_t floats,
    int rounds, struct pw_rt_net **out, struct pw_error *err)
{
	struct pw_rt_net *net = pw_xcalloc(1, sizeof *net);
	struct pw_wire_net *w = pw_xcalloc(1, sizeof *w);
	size_t i;
	int d, rc = PW_OK;

	assert(devices >= 1);
	w->base = base;
	w->wire = wire;
	w->devices = devices;
	w->floats = floats;
	w->rounds = rounds;
	w->dev = pw_xcalloc((size_t)devices, sizeof *w->dev);
	pw_sync_init(&w->lock, &w->changed);
	*net = *base;
	net->ctx = w;
	net->send = pw_wire_send;
	net->recv = pw_wire_recv;
	net->stop = pw_wire_stop;
	net->bcast = pw_wire_bcast;
	net->gather = pw_wire_gather;
	net->barrier = pw_wire_barrier;
	net->common = base->common != NULL ? pw_wire_common : NULL;
	net->arrived = pw_wire_arrived;
	net->close = pw_wire_close;
	for (d = 0; d < devices; d++) {
		struct pw_wire_dev *x = &w->dev[d];

		x->w = w;
		x->device = d;
		x->here = base->kind == PW_RT_LOCAL || d == base->rank;
		x->msgs = pw_xcalloc(nmsgs + 1, sizeof *x->msgs);
		for (i = 0; i < nmsgs; i++)
			if (msgs[i].from == d || msgs[i].to == d)
				x->msgs[x->nmsgs++] = msgs[i];
	}
	for (d = 0; d < devices && rc == PW_OK; d++) {
		struct pw_wire_dev *x = &w->dev[d];

		if (!x->here || x->nmsgs == 0)
			continue;
		if (pw_thread_start(&x->thread, pw_wire_main, x) != 0) {
			pw_error_set(err, "%s transport: cannot start device "
			    "%d's thread", wire->name, d);
			rc = PW_ERR_RUNTIME;
		} else
			x->running = true;
	}
	*out = net;
	if (rc != PW_OK) {
		pw_wire_end(net, false);
		*out = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* The matched wire                                                    */

/* One posted half of a transfer, waiting for its other half. */
struct pw_match_post {
	struct pw_match_post *next;
	int	device;		/* who posted it */
	float	*buf;
	size_t	n;
	bool	done;
	int	rc;
	struct pw_error err;
};

/* The posts between two devices (FROM to TO), each side's in order. */
struct pw_match_pair {
	struct pw_match_post *sends, *recvs;
};

struct pw_match_wire {
	int	devices;
	struct pw_rt_wire_memory mem;
	struct pw_match_pair *pair;	/* [from * devices + to] */
	pthread_mutex_t lock;
	pthread_cond_t matched;
	atomic_bool aborted;
};

static void
pw_match_append(struct pw_match_post **list, struct pw_match_post *p)
{
	while (*list != NULL)
		list = &(*list)->next;
	*list = p;
}

/* The pair a post of DEVICE with XF goes to. */
static struct pw_match_pair *
pw_match_pair_of(struct pw_match_wire *m, int device,
    const struct pw_rt_xfer *xf)
{
	return xf->send ? &m->pair[device * m->devices + xf->peer] :
	    &m->pair[xf->peer * m->devices + device];
}

/* Matches the pair's heads while both sides have one (M locked): the
 * receiver's buffer gets the sender's floats. */
static void
pw_match_heads(struct pw_match_wire *m, struct pw_match_pair *pr)
{
	struct pw_match_post *s, *r;

	while ((s = pr->sends) != NULL && (r = pr->recvs) != NULL) {
		pr->sends = s->next;
		pr->recvs = r->next;
		if (s->n != r->n) {
			pw_error_set(&r->err, "device %d: %s: %zu floats from "
			    "device %d, %zu posted", r->device, m->mem.name,
			    s->n, s->device, r->n);
			s->err = r->err;
			s->rc = r->rc = PW_ERR_RUNTIME;
		} else if ((r->rc = m->mem.copy(m->mem.arg, r->device, r->buf,
		    s->buf, s->n, &r->err)) != PW_OK) {
			s->rc = r->rc;
			s->err = r->err;
		}
		s->done = r->done = true;
	}
}

/* Unlinks P from *LIST when it is there. */
static void
pw_match_unlink(struct pw_match_post **list, const struct pw_match_post *p)
{
	for (; *list != NULL; list = &(*list)->next)
		if (*list == p) {
			*list = p->next;
			return;
		}
}

static int
pw_match_exchange(struct pw_rt_wire *wire, int device,
    const struct pw_rt_xfer *xf, int n, struct pw_error *err)
{
	struct pw_match_wire *m = wire->ctx;
	struct pw_match_post *post = pw_xcalloc((size_t)n + 1, sizeof *post);
	int i, left, rc = PW_OK;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < n; i++) {
		struct pw_match_pair *pr = pw_match_pair_of(m, device, &xf[i]);

		assert(xf[i].peer >= 0 && xf[i].peer < m->devices);
		post[i].device = device;
		post[i].buf = xf[i].buf;
		post[i].n = xf[i].n;
		pw_match_append(xf[i].send ? &pr->sends : &pr->recvs, &post[i]);
		pw_match_heads(m, pr);
	}
	pthread_cond_broadcast(&m->matched);
	for (;;) {
		for (left = 0, i = 0; i < n; i++)
			left += !post[i].done;
		if (left == 0 || atomic_load(&m->aborted))
			break;
		pw_sync_wait(&m->matched, &m->lock, PW_RT_WAIT);
	}
	for (i = 0; i < n; i++) {
		struct pw_match_pair *pr = pw_match_pair_of(m, device, &xf[i]);

		if (!post[i].done) {
			pw_match_unlink(xf[i].send ? &pr->sends : &pr->recvs,
			    &post[i]);
			if (rc == PW_OK) {
				pw_error_set(err, "device %d: %s: aborted",
				    device, m->mem.name);
				rc = PW_ERR_CANCELLED;
			}
		} else if (post[i].rc != PW_OK && rc == PW_OK) {
			*err = post[i].err;
			rc = post[i].rc;
		}
	}
	pthread_mutex_unlock(&m->lock);
	free(post);
	return rc;
}

static void
pw_match_abort(struct pw_rt_wire *wire)
{
	struct pw_match_wire *m = wire->ctx;

	pthread_mutex_lock(&m->lock);
	atomic_store(&m->aborted, true);
	pthread_cond_broadcast(&m->matched);
	pthread_mutex_unlock(&m->lock);
}

static float *
pw_match_buf_alloc(struct pw_rt_wire *wire, int device, size_t n)
{
	struct pw_match_wire *m = wire->ctx;

	return m->mem.alloc(m->mem.arg, device, n);
}

static void
pw_match_buf_release(struct pw_rt_wire *wire, int device, float *buf)
{
	struct pw_match_wire *m = wire->ctx;

	m->mem.release(m->mem.arg, device, buf);
}

static int
pw_match_copy(struct pw_rt_wire *wire, int device, float *dst,
    const float *src, size_t n, struct pw_error *err)
{
	struct pw_match_wire *m = wire->ctx;

	return m->mem.copy(m->mem.arg, device, dst, src, n, err);
}

static void
pw_match_close(struct pw_rt_wire *wire)
{
	struct pw_match_wire *m;

	if (wire == NULL)
		return;
	m = wire->ctx;
	if (m->mem.close != NULL)
		m->mem.close(m->mem.arg);
	pthread_cond_destroy(&m->matched);
	pthread_mutex_destroy(&m->lock);
	free(m->pair);
	free(m);
	free(wire);
}

int
pw_rt_wire_matched(int devices, const struct pw_rt_wire_memory *mem,
    struct pw_rt_wire **out, struct pw_error *err)
{
	struct pw_rt_wire *wire;
	struct pw_match_wire *m;

	if (devices < 1) {
		pw_error_set(err, "%s: %d devices", mem->name, devices);
		return PW_ERR_INPUT;
	}
	m = pw_xcalloc(1, sizeof *m);
	m->devices = devices;
	m->mem = *mem;
	m->pair = pw_xcalloc((size_t)devices * (size_t)devices, sizeof *m->pair);
	pw_sync_init(&m->lock, &m->matched);
	atomic_init(&m->aborted, false);
	wire = pw_xcalloc(1, sizeof *wire);
	*wire = (struct pw_rt_wire){ mem->name, m, pw_match_exchange,
	    pw_match_abort, pw_match_buf_alloc, pw_match_buf_release,
	    pw_match_copy, pw_match_close };
	*out = wire;
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* The host wire: the matched wire on the heap                         */

/* The caller owns what it returns (pw_host_release). */
static float *
pw_host_alloc(void *arg, int device, size_t n)
{
	(void)arg;
	(void)device;
	return pw_tryallocarray(n, sizeof(float));
}

static void
pw_host_release(void *arg, int device, float *buf)
{
	(void)arg;
	(void)device;
	free(buf);
}

static int
pw_host_copy(void *arg, int device, float *dst, const float *src, size_t n,
    struct pw_error *err)
{
	(void)arg;
	(void)device;
	(void)err;
	if (n > 0)
		memcpy(dst, src, n * sizeof *dst);
	return PW_OK;
}

int
pw_rt_wire_host(int devices, struct pw_rt_wire **out, struct pw_error *err)
{
	static const struct pw_rt_wire_memory heap = { "host wire",
	    pw_host_alloc, pw_host_release, pw_host_copy, NULL, NULL };

	return pw_rt_wire_matched(devices, &heap, out, err);
}
