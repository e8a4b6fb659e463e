/*
 * net_local.c - hand-offs between the device threads of one process.
 *
 * A message is a copy of the sender's floats in the receiving device's
 * mailbox, under its tag; recv waits on that mailbox's condition until
 * its message is there or the net is stopped.  One mailbox per device,
 * so that a send wakes only its receiver (the device threads outnumber
 * the cores).  A mailbox is a list: a run keeps a few messages in
 * flight per device.  Broadcast and
 * gather are those of one process; the barrier across the device threads
 * is the engine's own.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"

struct pw_net_msg {
	struct pw_net_msg *next;
	uint64_t tag;
	double	at;		/* pw_now when it was sent */
	size_t	n;
	float	*buf;
};

struct pw_net_box {
	pthread_mutex_t lock;
	pthread_cond_t arrived;
	struct pw_net_msg *head;
	bool	stopped;
	atomic_uint posted;	/* messages put here so far: what a spin watches */
};

/* How long a receive yields its core before it sleeps: a hand-off that
 * comes within it costs no sleep and wake-up (on the 2-core development
 * machine a token goes round a ring of 8 threads in about 3 us a hand-off
 * so, against 18 us asleep: bench_runtime's floor), and a longer wait
 * costs no more than this of a core. */
#define PW_NET_SPIN	50e-6

struct pw_net_local {
	int	devices;
	struct pw_net_box *box;	/* [devices] */
};

/* When the calling thread's last message arrived. */
static _Thread_local double pw_net_local_last;

static int
pw_net_local_send(struct pw_rt_net *net, int from, int to, uint64_t tag,
    const float *buf, size_t n, struct pw_error *err)
{
	struct pw_net_local *l = net->ctx;
	struct pw_net_box *x;
	struct pw_net_msg *m;

	(void)from;
	if (to < 0 || to >= l->devices) {
		pw_error_set(err, "local transport: no device %d", to);
		return PW_ERR_RUNTIME;
	}
	x = &l->box[to];
	m = pw_xcalloc(1, sizeof *m);
	m->tag = tag;
	m->n = n;
	m->buf = pw_xmalloc(n * sizeof *m->buf);
	if (n > 0)
		memcpy(m->buf, buf, n * sizeof *buf);
	pthread_mutex_lock(&x->lock);
	m->at = pw_now();
	m->next = x->head;
	x->head = m;
	atomic_fetch_add(&x->posted, 1);
	pthread_mutex_unlock(&x->lock);
	/* After the unlock, so that the receiver it wakes finds it free. */
	pthread_cond_broadcast(&x->arrived);
	return PW_OK;
}

/* Unlinks and returns the message under TAG, NULL when none (X
 * locked). */
static struct pw_net_msg *
pw_net_local_take(struct pw_net_box *x, uint64_t tag)
{
	struct pw_net_msg **pp, *m;

	for (pp = &x->head; (m = *pp) != NULL; pp = &m->next)
		if (m->tag == tag) {
			*pp = m->next;
			return m;
		}
	return NULL;
}

static int
pw_net_local_recv(struct pw_rt_net *net, int from, int to, uint64_t tag,
    float *buf, size_t n, struct pw_error *err)
{
	struct pw_net_local *l = net->ctx;
	struct pw_net_box *x;
	struct pw_net_msg *m;
	double t0 = pw_now();
	unsigned posted;
	int rc = PW_OK;

	if (to < 0 || to >= l->devices) {
		pw_error_set(err, "local transport: no device %d", to);
		return PW_ERR_RUNTIME;
	}
	x = &l->box[to];
	pthread_mutex_lock(&x->lock);
	while ((m = pw_net_local_take(x, tag)) == NULL && !x->stopped) {
		if (pw_now() - t0 >= PW_NET_SPIN) {
			pw_sync_wait(&x->arrived, &x->lock, PW_RT_WAIT);
			continue;
		}
		posted = atomic_load(&x->posted);
		pthread_mutex_unlock(&x->lock);
		while (atomic_load(&x->posted) == posted &&
		    pw_now() - t0 < PW_NET_SPIN)
			sched_yield();
		pthread_mutex_lock(&x->lock);
	}
	pthread_mutex_unlock(&x->lock);
	if (m == NULL) {
		pw_error_set(err, "device %d: stopped waiting for device %d",
		    to, from);
		return PW_ERR_CANCELLED;
	}
	if (m->n != n) {
		pw_error_set(err, "device %d: %zu floats from device %d, %zu "
		    "expected", to, m->n, from, n);
		rc = PW_ERR_RUNTIME;
	} else if (n > 0)
		memcpy(buf, m->buf, n * sizeof *buf);
	pw_net_local_last = m->at;
	free(m->buf);
	free(m);
	return rc;
}

static double
pw_net_local_arrived(struct pw_rt_net *net)
{
	(void)net;
	return pw_net_local_last;
}

static void
pw_net_local_stop(struct pw_rt_net *net)
{
	struct pw_net_local *l = net->ctx;
	int d;

	for (d = 0; d < l->devices; d++) {
		pthread_mutex_lock(&l->box[d].lock);
		l->box[d].stopped = true;
		pthread_cond_broadcast(&l->box[d].arrived);
		pthread_mutex_unlock(&l->box[d].lock);
	}
}

/* One process: rank 0's bytes are already everyone's. */
static int
pw_net_local_bcast(struct pw_rt_net *net, char **buf, size_t *len,
    struct pw_error *err)
{
	(void)net;
	(void)buf;
	(void)len;
	(void)err;
	return PW_OK;
}

static int
pw_net_local_gather(struct pw_rt_net *net, const char *buf, size_t len,
    char ***all, size_t **lens, struct pw_error *err)
{
	(void)net;
	(void)err;
	*all = pw_xcalloc(1, sizeof **all);
	*lens = pw_xcalloc(1, sizeof **lens);
	(*all)[0] = pw_xmalloc(len);
	if (len > 0)
		memcpy((*all)[0], buf, len);
	(*lens)[0] = len;
	return PW_OK;
}

static int
pw_net_local_barrier(struct pw_rt_net *net, struct pw_error *err)
{
	(void)net;
	(void)err;
	return PW_OK;
}

static void
pw_net_local_close(struct pw_rt_net *net)
{
	struct pw_net_local *l;
	struct pw_net_msg *m;
	int d;

	if (net == NULL)
		return;
	l = net->ctx;
	for (d = 0; d < l->devices; d++) {
		while ((m = l->box[d].head) != NULL) {
			l->box[d].head = m->next;
			free(m->buf);
			free(m);
		}
		pthread_cond_destroy(&l->box[d].arrived);
		pthread_mutex_destroy(&l->box[d].lock);
	}
	free(l->box);
	free(l);
	free(net);
}

int
pw_rt_net_local(int devices, struct pw_rt_net **out, struct pw_error *err)
{
	struct pw_rt_net *net;
	struct pw_net_local *l;
	int d;

	if (devices < 1) {
		pw_error_set(err, "local transport: %d devices", devices);
		return PW_ERR_INPUT;
	}
	l = pw_xcalloc(1, sizeof *l);
	l->devices = devices;
	l->box = pw_xcalloc((size_t)devices, sizeof *l->box);
	for (d = 0; d < devices; d++) {
		pw_sync_init(&l->box[d].lock, &l->box[d].arrived);
		atomic_init(&l->box[d].posted, 0);
	}
	net = pw_xcalloc(1, sizeof *net);
	net->kind = PW_RT_LOCAL;
	net->rank = 0;
	net->size = 1;
	net->ctx = l;
	net->send = pw_net_local_send;
	net->recv = pw_net_local_recv;
	net->stop = pw_net_local_stop;
	net->bcast = pw_net_local_bcast;
	net->gather = pw_net_local_gather;
	net->barrier = pw_net_local_barrier;
	net->close = pw_net_local_close;
	net->arrived = pw_net_local_arrived;
	*out = net;
	return PW_OK;
}
