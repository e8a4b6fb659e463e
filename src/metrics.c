/* metrics.c - makespan, spans, idle time, bubble rate and memory curves. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "pipewright.h"

/* A memory change on one device; frees sort before allocations at equal
 * instants, as the model says. */
struct pw_mem_event {
	int	device;
	double	t;
	double	delta;
};

static int
pw_mem_event_cmp(const void *a, const void *b)
{
	const struct pw_mem_event *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if ((x->delta < 0) != (y->delta < 0))
		return x->delta < 0 ? -1 : 1;
	return 0;
}

static void
pw_mem_push(struct pw_mem_event **ev, size_t *n, size_t *cap, int device,
    double t, double delta)
{
	if (delta == 0)
		return;
	if (*n == *cap) {
		*cap = *cap == 0 ? 256 : *cap * 2;
		*ev = pw_xreallocarray(*ev, *cap, sizeof **ev);
	}
	(*ev)[*n].device = device;
	(*ev)[*n].t = t;
	(*ev)[*n].delta = delta;
	(*n)++;
}

/* Pushes what OP does to its device's memory at its start and end. */
static void
pw_mem_effects(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op, struct pw_mem_event **ev, size_t *n, size_t *cap)
{
	struct pw_mem_effect e = pw_op_memory(p, op);
	size_t idx = pw_op_index(p, op);
	int device = p->stages[op.stage].device;

	pw_mem_push(ev, n, cap, device, t->start[idx], e.alloc);
	pw_mem_push(ev, n, cap, device, t->end[idx], -e.freed);
}

static void
pw_curve_push(struct pw_device_metrics *dm, int *cap, double t, double bytes)
{
	if (dm->ncurve == *cap) {
		*cap = *cap == 0 ? 64 : *cap * 2;
		dm->curve = pw_xreallocarray(dm->curve, (size_t)*cap,
		    sizeof *dm->curve);
	}
	dm->curve[dm->ncurve].t = t;
	dm->curve[dm->ncurve].bytes = bytes;
	dm->ncurve++;
}

/* Sweeps the sorted events into each device's step curve and peak. */
static void
pw_metrics_memory(const struct pw_problem *p, struct pw_metrics *m,
    struct pw_mem_event *ev, size_t n)
{
	size_t i = 0;
	int d, cap;
	double level;

	if (n > 0)
		qsort(ev, n, sizeof *ev, pw_mem_event_cmp);
	for (d = 0; d < p->devices; d++) {
		struct pw_device_metrics *dm = &m->device[d];

		cap = 0;
		level = p->memory[d].static_bytes;
		dm->peak = level;
		pw_curve_push(dm, &cap, m->start, level);
		while (i < n && ev[i].device == d) {
			double at = ev[i].t;

			while (i < n && ev[i].device == d && ev[i].t == at)
				level += ev[i++].delta;
			if (dm->curve[dm->ncurve - 1].t == at)
				dm->curve[dm->ncurve - 1].bytes = level;
			else
				pw_curve_push(dm, &cap, at, level);
			if (level > dm->peak)
				dm->peak = level;
		}
		/* Sums of frees can leave rounding noise above the limit;
		 * the checker uses the same relative tolerance. */
		dm->within_limit = dm->peak <= p->memory[d].limit +
		    1e-9 * fmax(1, fabs(p->memory[d].limit));
	}
}

struct pw_metrics *
pw_metrics_compute(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t)
{
	struct pw_metrics *m;
	struct pw_mem_event *ev = NULL;
	size_t nev = 0, cap = 0, idx;
	double first = INFINITY, last = -INFINITY;
	int d, r, i;

	m = pw_xcalloc(1, sizeof *m);
	m->ndevices = p->devices;
	m->device = pw_xcalloc((size_t)p->devices, sizeof *m->device);
	for (r = 0; r < sched->ndevices + sched->nchannels; r++) {
		const struct pw_seq *seq = pw_schedule_order(sched, r);

		for (i = 0; i < seq->len; i++) {
			idx = pw_op_index(p, seq->ops[i]);
			assert(pw_timing_has(t, idx));
			first = fmin(first, t->start[idx]);
			last = fmax(last, t->end[idx]);
			pw_mem_effects(p, t, seq->ops[i], &ev, &nev, &cap);
		}
	}
	m->start = isfinite(first) ? first : 0;
	m->makespan = isfinite(first) ? last - first : 0;
	for (d = 0; d < p->devices; d++) {
		struct pw_device_metrics *dm = &m->device[d];
		const struct pw_seq *seq = &sched->device[d];

		dm->first_start = INFINITY;
		dm->last_end = -INFINITY;
		for (i = 0; i < seq->len; i++) {
			idx = pw_op_index(p, seq->ops[i]);
			dm->first_start = fmin(dm->first_start, t->start[idx]);
			dm->last_end = fmax(dm->last_end, t->end[idx]);
			dm->busy += t->end[idx] - t->start[idx];
		}
		if (seq->len == 0)
			dm->first_start = dm->last_end = m->start;
		dm->span = dm->last_end - dm->first_start;
		/* The busy time sums rounded durations, which can come out a
		 * rounding above the span of a device that never waits: no
		 * idle is less than none. */
		dm->idle = fmax(0, m->makespan - dm->busy);
		m->max_span = fmax(m->max_span, dm->span);
		m->max_busy = fmax(m->max_busy, dm->busy);
		m->total_idle += dm->idle;
	}
	/* 0 too where the span is beyond the doubles (a timing no
	 * validated problem has), rather than NaN. */
	m->bubble_rate = m->max_span > 0 && isfinite(m->max_span) ?
	    fmax(0, (m->max_span - m->max_busy) / m->max_span) : 0;
	pw_metrics_memory(p, m, ev, nev);
	m->feasible = true;
	for (d = 0; d < p->devices; d++)
		m->feasible = m->feasible && m->device[d].within_limit;
	free(ev);
	return m;
}

void
pw_metrics_free(struct pw_metrics *m)
{
	int d;

	if (m == NULL)
		return;
	for (d = 0; d < m->ndevices; d++)
		free(m->device[d].curve);
	free(m->device);
	free(m);
}
