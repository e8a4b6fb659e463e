/*
 * engine_prep.c - before a run: the options, PIPEWRIGHT_FAIL_AT, the
 * schedule's checks (its shape, the simulator, the limits and the host's
 * memory, the records' budget, the checker), and the memory order the
 * arenas follow (engine.h).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

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
void
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
/* ------------------------------------------------------------------ */
/* Before the run: the inputs, the failure to inject, the schedule     */

int
pw_engine_check_opts(const struct pw_rt_opts *o, struct pw_error *err)
{
	char why[512];

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
	if (o->gpus < 0 || (o->gpus > 0 && o->backend != PW_RT_CUDA)) {
		pw_error_set(err, "gpus %d: a count of GPUs for the cuda "
		    "backend", o->gpus);
		return PW_ERR_INPUT;
	}
	if (o->host_wire && o->transport != PW_RT_LOCAL) {
		pw_error_set(err, "PIPEWRIGHT_WIRE=host: the host wire joins "
		    "the threads of one process, not MPI ranks");
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
int
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
	/* The example is an op every schedule has, on its device. */
	if (colon == NULL || (size_t)(colon - v) >= sizeof dev) {
		pw_error_set(err, "PIPEWRIGHT_FAIL_AT=\"%s\": must be DEVICE:OP, "
		    "as %d:F(0,0)", shown, e->p->stages[0].device);
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
	char b1[32], b2[32], b3[32];
	int d, here = 0;

	for (d = 0; d < p->devices; d++) {
		if (met->device[d].peak > p->memory[d].limit) {
			/* The excess too: it may be below what 4 digits of
			 * the two show. */
			pw_error_set(err, "refused: device %d's predicted "
			    "peak of %s exceeds its limit of %s by %s", d,
			    pw_fmt_bytes(b1, sizeof b1, met->device[d].peak),
			    pw_fmt_bytes(b2, sizeof b2, p->memory[d].limit),
			    pw_fmt_bytes(b3, sizeof b3, met->device[d].peak -
			    p->memory[d].limit));
			return PW_ERR_INPUT;
		}
		e->predicted[d] = met->device[d].peak;
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
		    "device%s this process runs on the CPU add up to %s, more "
		    "than the %s of host memory available", here,
		    here == 1 ? "" : "s", pw_fmt_bytes(b1, sizeof b1, sum),
		    pw_fmt_bytes(b2, sizeof b2, avail));
		return PW_ERR_INPUT;
	}
	return PW_OK;
}

/* Simulates and checks the schedule: a malformed or deadlocking one, a
 * broken rule or a predicted peak above a limit is refused. */
int
pw_engine_check_schedule(struct pw_engine *e, struct pw_error *err)
{
	const struct pw_problem *p = e->p;
	struct pw_violations v = { 0 };
	struct pw_metrics *met;
	struct pw_error why;
	char b1[32], b2[32];
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
		    "%d iterations (%s) exceed the runtime's budget of %s; at "
		    "most %.0f iterations of this schedule",
		    e->opts->iterations, e->nops, e->opts->iterations,
		    pw_fmt_bytes(b1, sizeof b1, (double)e->opts->iterations *
		    (double)e->nops * PW_ENGINE_REC_BYTES), pw_fmt_bytes(b2,
		    sizeof b2, PW_RT_RECORD_BUDGET),
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
