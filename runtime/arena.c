/*
 * arena.c - a device's memory: every byte the workload keeps, taken from
 * the backend and accounted against the device's limit.
 *
 * The compute worker and the copy workers of a device share the arena.
 * So that the measured peak is the simulator's, the engine numbers the
 * device's memory events in the simulated timeline's order and gives each
 * op's event to its worker (pw_rt_arena_expect): the takes and gives of
 * that event wait for the events before it; an allocation ends once its
 * bytes are taken (or at pw_rt_arena_settle, whichever comes first), a
 * free at pw_rt_arena_settle, after the op has recorded its end.  A
 * thread with no event pending (a stage opening, the reference) takes and
 * gives at once.
 */
#include <pthread.h>
#include <stdlib.h>

#include "rt_int.h"

struct pw_rt_arena {
	int	device;
	double	limit;
	const struct pw_rt_backend_ops *backend;
	void	*ctx;
	pthread_mutex_t lock;
	pthread_cond_t turned;
	double	level;
	double	peak;
	long	turn;		/* the memory event whose turn it is */
	bool	stopped;
};

/* The calling worker's pending event: which arena, its number, the bytes
 * still to move. */
static _Thread_local struct pw_rt_arena *pw_arena_mine;
static _Thread_local long pw_arena_ticket = -1;
static _Thread_local double pw_arena_left;

struct pw_rt_arena *
pw_rt_arena_new(int device, double limit, const struct pw_rt_backend_ops *backend,
    void *ctx)
{
	struct pw_rt_arena *a = pw_xcalloc(1, sizeof *a);

	a->device = device;
	a->limit = limit;
	a->backend = backend;
	a->ctx = ctx;
	pw_sync_init(&a->lock, &a->turned);
	return a;
}

void
pw_rt_arena_free(struct pw_rt_arena *a)
{
	if (a == NULL)
		return;
	pthread_cond_destroy(&a->turned);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void
pw_rt_arena_expect(struct pw_rt_arena *a, long ticket, double bytes)
{
	pw_arena_mine = a;
	pw_arena_ticket = ticket;
	pw_arena_left = bytes;
}

/* Waits (A locked) until the calling thread's event, if it has one on A,
 * has its turn; false once A was stopped. */
static bool
pw_arena_wait_turn(struct pw_rt_arena *a)
{
	if (pw_arena_mine != a || pw_arena_ticket < 0)
		return true;
	while (a->turn != pw_arena_ticket && !a->stopped)
		pw_sync_wait(&a->turned, &a->lock, PW_RT_WAIT);
	return !a->stopped;
}

/* Ends the calling thread's event on A (A locked): the next one's turn. */
static void
pw_arena_end_event(struct pw_rt_arena *a)
{
	a->turn++;
	pw_arena_ticket = -1;
	pw_arena_mine = NULL;
	pthread_cond_broadcast(&a->turned);
}

/* Counts BYTES moved by the calling thread's event on A (A locked). */
static void
pw_arena_count(struct pw_rt_arena *a, size_t bytes)
{
	if (pw_arena_mine != a || pw_arena_ticket < 0)
		return;
	pw_arena_left -= (double)bytes;
	/* The event's bytes are a double from the problem (pw_op_memory),
	 * the moves whole size_t counts: half a byte left is all moved, and
	 * keeps a rounding of the double from holding the turn. */
	if (pw_arena_left <= 0.5)
		pw_arena_end_event(a);
}

void *
pw_rt_arena_take(struct pw_rt_arena *a, size_t bytes, const char *what,
    struct pw_error *err)
{
	char b1[32], b2[32], b3[32];
	void *p = NULL;

	pthread_mutex_lock(&a->lock);
	if (!pw_arena_wait_turn(a)) {
		pw_error_set(err, "device %d, %s: stopped", a->device, what);
		goto out;
	}
	if (a->level + (double)bytes > a->limit) {
		pw_error_set(err, "device %d, %s: out of memory: %s asked, "
		    "%s of the limit of %s left", a->device, what,
		    pw_fmt_bytes(b1, sizeof b1, (double)bytes),
		    pw_fmt_bytes(b2, sizeof b2, a->limit - a->level),
		    pw_fmt_bytes(b3, sizeof b3, a->limit));
		goto out;
	}
	p = a->backend->device_alloc(a->ctx, bytes);
	if (p == NULL) {
		pw_error_set(err, "device %d, %s: the %s backend refused %s",
		    a->device, what, pw_rt_backend_name(a->backend->kind),
		    pw_fmt_bytes(b1, sizeof b1, (double)bytes));
		goto out;
	}
	a->level += (double)bytes;
	if (a->level > a->peak)
		a->peak = a->level;
	pw_arena_count(a, bytes);
out:
	pthread_mutex_unlock(&a->lock);
	return p;
}

void
pw_rt_arena_give(struct pw_rt_arena *a, void *p, size_t bytes)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	/* A give waits for its turn too, but gives once stopped: what was
	 * taken always goes back.  Its event ends at pw_rt_arena_settle, as
	 * the op ends: a free is the op's end's, and the next event waits
	 * for the end the op records. */
	pw_arena_wait_turn(a);
	a->backend->device_release(a->ctx, p);
	a->level -= (double)bytes;
	pthread_mutex_unlock(&a->lock);
}

int
pw_rt_arena_ready(struct pw_rt_arena *a, struct pw_error *err)
{
	int rc = PW_OK;

	pthread_mutex_lock(&a->lock);
	if (!pw_arena_wait_turn(a)) {
		pw_error_set(err, "device %d: stopped", a->device);
		rc = PW_ERR_CANCELLED;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int
pw_rt_arena_settle(struct pw_rt_arena *a, struct pw_error *err)
{
	int rc = PW_OK;

	pthread_mutex_lock(&a->lock);
	if (pw_arena_mine == a && pw_arena_ticket >= 0) {
		if (pw_arena_wait_turn(a))
			pw_arena_end_event(a);
		else {
			pw_error_set(err, "device %d: stopped", a->device);
			rc = PW_ERR_CANCELLED;
		}
	}
	pw_arena_ticket = -1;
	pw_arena_mine = NULL;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

void
pw_rt_arena_restart(struct pw_rt_arena *a)
{
	pthread_mutex_lock(&a->lock);
	a->turn = 0;
	pthread_mutex_unlock(&a->lock);
}

void
pw_rt_arena_stop(struct pw_rt_arena *a)
{
	pthread_mutex_lock(&a->lock);
	a->stopped = true;
	pthread_cond_broadcast(&a->turned);
	pthread_mutex_unlock(&a->lock);
}

double
pw_rt_arena_level(const struct pw_rt_arena *a)
{
	struct pw_rt_arena *m = (struct pw_rt_arena *)a;
	double v;

	pthread_mutex_lock(&m->lock);
	v = m->level;
	pthread_mutex_unlock(&m->lock);
	return v;
}

double
pw_rt_arena_peak(const struct pw_rt_arena *a)
{
	struct pw_rt_arena *m = (struct pw_rt_arena *)a;
	double v;

	pthread_mutex_lock(&m->lock);
	v = m->peak;
	pthread_mutex_unlock(&m->lock);
	return v;
}
