/*
 * test_wire.c - the sequenced transport (runtime/net_wire.c) on its own:
 * two device threads trade tensors over the host wire in the order it is
 * given, every round intact; a wire that fails (injected here, as an
 * NCCL error would) ends both sides' receives with its one line instead
 * of a hang; a stop ends a receive that nothing will answer; tokens
 * without floats go through the base net; a hand-off of the wrong size is
 * refused.  pw_rt_messages's order is held to its lemma on random
 * schedules in test_property, and every family runs over the host wire
 * in test_runtime.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_int.h"
#include "tap.h"

#define TW_FLOATS	64
#define TW_ROUNDS	3

/* A host wire whose exchange number FAIL_AT (from 1, over both devices)
 * fails, the way an NCCL error would. */
struct tw_faulty {
	struct pw_rt_wire *host;
	atomic_int calls;
	int	fail_at;
};

static int
tw_faulty_exchange(struct pw_rt_wire *wire, int device,
    const struct pw_rt_xfer *xf, int n, struct pw_error *err)
{
	struct tw_faulty *f = wire->ctx;

	if (atomic_fetch_add(&f->calls, 1) + 1 == f->fail_at) {
		pw_error_set(err, "test wire: device %d: ncclSend: injected",
		    device);
		return PW_ERR_RUNTIME;
	}
	return f->host->exchange(f->host, device, xf, n, err);
}

static void
tw_faulty_abort(struct pw_rt_wire *wire)
{
	struct tw_faulty *f = wire->ctx;

	f->host->abort(f->host);
}

static float *
tw_faulty_alloc(struct pw_rt_wire *wire, int device, size_t n)
{
	struct tw_faulty *f = wire->ctx;

	return f->host->buf_alloc(f->host, device, n);
}

static void
tw_faulty_release(struct pw_rt_wire *wire, int device, float *buf)
{
	struct tw_faulty *f = wire->ctx;

	f->host->buf_release(f->host, device, buf);
}

static int
tw_faulty_copy(struct pw_rt_wire *wire, int device, float *dst,
    const float *src, size_t n, struct pw_error *err)
{
	struct tw_faulty *f = wire->ctx;

	return f->host->copy(f->host, device, dst, src, n, err);
}

static void
tw_faulty_close(struct pw_rt_wire *wire)
{
	struct tw_faulty *f = wire->ctx;

	f->host->close(f->host);
	free(f);
	free(wire);
}

/* A host wire for 2 devices, failing at exchange FAIL_AT (0: never). */
static struct pw_rt_wire *
tw_wire(int fail_at)
{
	struct pw_rt_wire *w = calloc(1, sizeof *w);
	struct tw_faulty *f = calloc(1, sizeof *f);
	struct pw_error err;

	pw_rt_wire_host(2, &f->host, &err);
	f->fail_at = fail_at;
	atomic_init(&f->calls, 0);
	*w = (struct pw_rt_wire){ "test wire", f, tw_faulty_exchange,
	    tw_faulty_abort, tw_faulty_alloc, tw_faulty_release, tw_faulty_copy,
	    tw_faulty_close };
	return w;
}

/* The ping-pong's order: device 0 hands tag 10 to device 1, which hands
 * tag 20 back, twice a round (what a 2-device pipeline's F and B do). */
static const struct pw_rt_message tw_order[] = {
	{ 0, 1, 10, 1, 2 }, { 1, 0, 20, 3, 4 }, { 0, 1, 11, 5, 6 },
	{ 1, 0, 21, 7, 8 },
};
#define TW_NMSGS	(sizeof tw_order / sizeof tw_order[0])

struct tw_side {
	struct pw_rt_net *net;
	int	device;
	int	rc;		/* the first failure */
	struct pw_error err;
	int	good;		/* tensors received intact */
	double	arrived;	/* the last arrival net->arrived says */
};

/* Device 0 sends, then receives what device 1 sends back, twice a
 * round; device 1 the other way.  Each tensor is filled with its tag and
 * round. */
static void *
tw_side_main(void *arg)
{
	struct tw_side *s = arg;
	float buf[TW_FLOATS], got[TW_FLOATS];
	int r, k, i, ok;

	s->rc = PW_OK;
	for (r = 0; r < TW_ROUNDS && s->rc == PW_OK; r++)
		for (k = 0; k < (int)TW_NMSGS && s->rc == PW_OK; k++) {
			const struct pw_rt_message *m = &tw_order[k];

			if (m->from == s->device) {
				for (i = 0; i < TW_FLOATS; i++)
					buf[i] = (float)(m->tag * 100 + r) + i;
				s->rc = s->net->send(s->net, m->from, m->to,
				    m->tag, buf, TW_FLOATS, &s->err);
				continue;
			}
			s->rc = s->net->recv(s->net, m->from, m->to, m->tag, got,
			    TW_FLOATS, &s->err);
			if (s->rc != PW_OK)
				break;
			for (ok = 1, i = 0; i < TW_FLOATS; i++)
				ok &= got[i] == (float)(m->tag * 100 + r) + i;
			s->good += ok;
			s->arrived = s->net->arrived(s->net);
		}
	return NULL;
}

/* Runs both sides over NET to their end; false when a thread would not
 * start. */
static bool
tw_run(struct pw_rt_net *net, struct tw_side *side)
{
	pthread_t t[2];
	int d;

	for (d = 0; d < 2; d++) {
		memset(&side[d], 0, sizeof side[d]);
		side[d].net = net;
		side[d].device = d;
		if (pthread_create(&t[d], NULL, tw_side_main, &side[d]) != 0)
			return false;
	}
	for (d = 0; d < 2; d++)
		pthread_join(t[d], NULL);
	return true;
}

static struct pw_rt_net *
tw_net(int fail_at)
{
	struct pw_rt_net *base, *net = NULL;
	struct pw_error err;

	if (pw_rt_net_local(2, &base, &err) != PW_OK ||
	    pw_rt_net_wire(base, tw_wire(fail_at), 2, tw_order, TW_NMSGS,
	    TW_FLOATS, TW_ROUNDS, &net, &err) != PW_OK)
		tap_diag("the net: %s", err.msg);
	return net;
}

static void
test_pingpong(void)
{
	struct tw_side side[2];
	struct pw_rt_net *net = tw_net(0);
	double t0 = pw_now();

	if (!tap_ok(net != NULL && tw_run(net, side), "two device threads "
	    "over the sequenced transport"))
		return;
	tap_ok(side[0].rc == PW_OK && side[1].rc == PW_OK, "both sides end "
	    "without an error (%s%s)", side[0].err.msg, side[1].err.msg);
	tap_int(side[0].good + side[1].good, (long long)(TW_ROUNDS * TW_NMSGS),
	    "every tensor of every round arrives intact, in the order");
	tap_ok(side[1].arrived >= t0 && side[1].arrived <= pw_now(),
	    "the arrival is a pw_now instant of the run");
	net->close(net);
}

/* The wire's exchange number FAIL_AT fails: both sides end with its
 * line, neither hangs. */
static void
test_failure(int fail_at)
{
	struct tw_side side[2];
	struct pw_rt_net *net = tw_net(fail_at);
	int d, failed = 0;

	if (!tap_ok(net != NULL && tw_run(net, side), "exchange %d fails: "
	    "both sides end", fail_at))
		return;
	for (d = 0; d < 2; d++)
		if (side[d].rc == PW_ERR_RUNTIME &&
		    strstr(side[d].err.msg, ": ncclSend: injected") != NULL)
			failed++;
	tap_ok(failed >= 1 && side[0].rc != PW_OK && side[1].rc != PW_OK,
	    "exchange %d fails: the run fails with the wire's one line (%s | "
	    "%s)", fail_at, side[0].err.msg, side[1].err.msg);
	net->close(net);
}

struct tw_stopper {
	struct pw_rt_net *net;
	double	after;
};

/* Stops the net a moment after it starts: whether the receive is
 * waiting by then or not, it must end cancelled. */
static void *
tw_stopper_main(void *arg)
{
	struct tw_stopper *s = arg;
	struct timespec nap = { 0, (long)(s->after * 1e9) };

	nanosleep(&nap, NULL);
	s->net->stop(s->net);
	return NULL;
}

/* A receive nothing answers ends at a stop; a wrong size is refused; a
 * token passes through the base net. */
static void
test_stop_and_refusals(void)
{
	struct pw_rt_net *net = tw_net(0);
	struct tw_stopper st;
	struct pw_error err;
	float buf[TW_FLOATS];
	pthread_t t;
	int rc;

	if (!tap_ok(net != NULL, "a net for the refusals"))
		return;
	tap_int(net->send(net, 0, 1, 10, buf, TW_FLOATS - 1, &err),
	    PW_ERR_RUNTIME, "a hand-off of the wrong size is refused");
	tap_str(err.msg, "test wire transport: a send of 63 floats from "
	    "device 0 (64 a hand-off)", "in one line naming it");
	tap_int(net->send(net, 1, 0, 99, NULL, 0, &err), PW_OK,
	    "a token (no floats) is sent");
	tap_int(net->recv(net, 1, 0, 99, NULL, 0, &err), PW_OK,
	    "and received through the base net");
	st.net = net;
	st.after = 0.05;
	pthread_create(&t, NULL, tw_stopper_main, &st);
	rc = net->recv(net, 1, 0, 20, buf, TW_FLOATS, &err);
	pthread_join(t, NULL);
	tap_int(rc, PW_ERR_CANCELLED, "a receive nothing answers ends when "
	    "the net is stopped");
	tap_str(err.msg, "device 0: the test wire transport was stopped",
	    "and says so");
	net->close(net);
}

int
main(void)
{
	int k;

	test_pingpong();
	/* Each exchange of a round's first group in turn. */
	for (k = 1; k <= 4; k++)
		test_failure(k);
	test_stop_and_refusals();
	return tap_done();
}
