/*
 * search.c - the worker's search: the start (the given schedule, a named
 * family or the best feasible family), the list scheduler, the whole
 * model where it is small enough, then rounds of the local search
 * (local.c) and the windows (lns.c), which share the rest.  Every
 * schedule it keeps passes through pw_search_offer, which checks it.
 */
#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "milp.h"
#include "plan.h"
#include "search.h"

/* The whole model is solved when it has at most this many ordering
 * binaries (estimated before building it): lp_solve proves small
 * pipeline models in seconds and loses its way in large ones. */
#define PW_SOLVE_WHOLE_BINARIES	1000
/* A model is written for --write-lp only up to this size. */
#define PW_SOLVE_WRITE_BINARIES	200000
#define PW_SEARCH_TEXT_(x)	#x
#define PW_SEARCH_TEXT(x)	PW_SEARCH_TEXT_(x)
/* The rounds: the windows' first budget of windows, and the local
 * search's of iterations (a window's share, lns.c's, in moves at their
 * re-timing's worth), each doubled after a round of its method that
 * lowered the objective and halved after one that did not, within these
 * (the local search's as multiples of a window's share); so the time
 * goes to whichever finds improvements, and neither is starved: a
 * method's worst round costs about a window's share. */
#define PW_ROUND_WINDOWS	4
#define PW_ROUND_WINDOWS_MIN	1
#define PW_ROUND_WINDOWS_MAX	32
/* Local rounds in a row without a better objective after which the
 * local search is done, until the windows lower the objective. */
#define PW_ROUND_LOCAL_IDLE	3
/* The share of the time limit by which the heuristic's descent should
 * be done, so that the windows and the local search get the rest: on
 * bench_solver's case (d) the descent's passes after its first lower
 * p=32 with 24 activations from 486.11 to 480.93 in 10 s of the row's
 * 60, while at p=16 with 12 a second pass (which finds nothing there)
 * would take a quarter of the row's second from the search, whose
 * polish takes the first pass's 237.64 to 237.10 (237.36 with it).
 * The passes also stop where the heuristic does not lead the start:
 * polishing it there only takes time from the start's polish (with
 * them, bench_planner's plan at 60 GiB went from 4.5799 s to 4.5927 s). */
#define PW_SEARCH_HEURISTIC	(1.0 / 3)
/* A start's name: a family's (20 bytes at most) with its note. */
#define PW_SEARCH_LABEL		40
/* The local search's generator is the seed's, on another stream than
 * the windows'. */
#define PW_ROUND_SALT		UINT64_C(0x9e3779b97f4a7c15)

/* ------------------------------------------------------------------ */
/* The search (worker thread)                                          */

double
pw_search_elapsed(const struct pw_search *s)
{
	return pw_now() - s->t0;
}

/* Whether S has run out of its iteration limit. */
static bool
pw_search_spent(const struct pw_search *s)
{
	return s->o->iteration_limit > 0 &&
	    s->iterations >= s->o->iteration_limit;
}

bool
pw_search_stopped(const struct pw_search *s)
{
	return s->stop != 0 || pw_search_elapsed(s) >= s->limit ||
	    pw_search_spent(s);
}

/* A counter, not only the signal: a run that was not waiting when it
 * came still sees it at its next wait. */
void
pw_search_signal(struct pw_search *s)
{
	s->events++;
	pthread_cond_signal(&s->cond);
}

void
pw_search_publish(struct pw_search *s, const char *phase)
{
	pthread_mutex_lock(&s->lock);
	s->pub_incumbent = s->best != NULL ? s->eval.objective : INFINITY;
	s->pub_bound = s->bound;
	if (phase != NULL)
		s->pub_phase = phase;
	if (s->stop != 0 && s->best == NULL)
		s->pub_phase = "waiting";
	pw_search_signal(s);
	pthread_mutex_unlock(&s->lock);
}

bool
pw_search_closed(const struct pw_search *s)
{
	return s->best != NULL && pw_objective_meets_bound(s->eval.objective,
	    s->bound);
}

/*
 * Offers SCHED as the incumbent, taking it over: kept when it is
 * feasible, passes the checker and beats the incumbent, else freed.
 * START, when not NULL, is then also recorded as where the search
 * started, in the same step, so that no result has one without the
 * other.  Returns whether it was kept.
 */
bool
pw_search_offer(struct pw_search *s, struct pw_schedule *sched,
    const char *phase, const char *start)
{
	struct pw_schedule *old, *answer, *old_answer = NULL;
	struct pw_timing *t;
	struct pw_eval e;
	struct pw_error err;
	bool keep = false;

	/* One simulation serves the evaluation and the checker. */
	if (pw_simulate(s->p, sched, &t, &err) == PW_OK) {
		pw_solver_judge(s->p, sched, t, s->o->objective,
		    s->offloadable, s->o->pins, s->o->npins, &e);
		keep = e.feasible && (s->best == NULL ||
		    pw_eval_better(&e, &s->eval)) &&
		    pw_solver_checked(s->p, sched, t);
		pw_timing_free(t);
	}
	if (!keep) {
		pw_schedule_free(sched);
		return false;
	}
	answer = s->answer == NULL || pw_eval_leaner(&e, &s->answer_eval) ?
	    pw_schedule_copy(sched) : NULL;
	pthread_mutex_lock(&s->lock);
	old = s->best;
	s->best = sched;
	s->eval = e;
	s->accepted++;
	if (answer != NULL) {
		old_answer = s->answer;
		s->answer = answer;
		s->answer_eval = e;
	}
	if (start != NULL) {
		snprintf(s->start, sizeof s->start, "%s", start);
		s->start_objective = e.objective;
	}
	pthread_mutex_unlock(&s->lock);
	pw_schedule_free(old);
	pw_schedule_free(old_answer);
	pw_search_publish(s, phase);
	return true;
}

/* Where a start stands: its schedule (owned) and evaluation, and
 * whether some device's peak reaches its limit (at or over it). */
struct pw_start {
	struct pw_schedule *sched;
	struct pw_eval eval;
	bool	at_limit;
	bool	pin_ordered;	/* its family's orders with the pins' */
	const char *family;	/* the family's name (static), or NULL */
};

/* How the search names start ST of NAME (a family, "given") in BUF. */
static const char *
pw_search_start_name(const struct pw_start *st, const char *name, char *buf,
    size_t len)
{
	snprintf(buf, len, "%s%s", name, st->pin_ordered ?
	    " in the pins' order" : "");
	return buf;
}

/* Whether a device's peak in M reaches its limit in P. */
static bool
pw_search_at_limit(const struct pw_problem *p, const struct pw_metrics *m)
{
	double limit;
	int d;

	for (d = 0; d < p->devices; d++) {
		limit = p->memory[d].limit;
		if (m->device[d].peak >= limit - pw_solver_tol(limit))
			return true;
	}
	return false;
}

/*
 * Builds family FAM on the problem as given into *ST, judged on its plan's
 * timing.  Returns PW_OK, else the reason: the family refuses
 * (PW_ERR_NOT_APPLICABLE), needs another split (the same), or its
 * schedule does not simulate (pw_plan_family's PW_ERR_INTERNAL).
 */
static int
pw_search_family(struct pw_search *s, const struct pw_family *fam,
    struct pw_start *st, struct pw_error *err)
{
	struct pw_plan *plan;
	int rc, nstages;

	memset(st, 0, sizeof *st);
	/* Told before the build, which on a model of many layers (a chunk
	 * each) could outlast the whole search. */
	if ((nstages = pw_family_split_stages(fam, s->p)) != 0) {
		pw_error_set(err, "%s needs its stages laid out otherwise (it "
		    "splits the model into %d stages); the solver keeps the "
		    "problem as given", fam->name, nstages);
		return PW_ERR_NOT_APPLICABLE;
	}
	if ((rc = pw_plan_family(fam, s->p, &plan, err)) != PW_OK)
		return rc;
	assert(pw_problem_same(pw_plan_problem(plan), s->p));
	pw_solver_judge_plan(plan, s->o->objective, s->offloadable,
	    s->o->pins, s->o->npins, &st->eval);
	st->family = fam->name;
	st->sched = pw_schedule_copy(pw_plan_timed(plan));
	st->at_limit = pw_search_at_limit(s->p, pw_plan_metrics(plan));
	pw_plan_free(plan);
	return PW_OK;
}

/* Records where the search started (under the lock: the result reads it). */
static void
pw_search_set_start(struct pw_search *s, const char *name, double objective,
    bool feasible)
{
	pthread_mutex_lock(&s->lock);
	snprintf(s->start, sizeof s->start, "%s%s", name, feasible ? "" :
	    " (infeasible)");
	s->start_objective = objective;
	pthread_mutex_unlock(&s->lock);
}

/* Offers CAND, family NAME's, as the start when it is feasible and its
 * objective beats the incumbent's (the first family of the best
 * objective starts); else frees it. */
static void
pw_search_offer_start(struct pw_search *s, struct pw_start *cand,
    const char *name)
{
	char label[PW_SEARCH_LABEL];

	if (!cand->eval.feasible || (s->best != NULL && !pw_solver_better(
	    cand->eval.objective, s->eval.objective)))
		pw_schedule_free(cand->sched);
	else
		pw_search_offer(s, cand->sched, "start", pw_search_start_name(
		    cand, name, label, sizeof label));
	cand->sched = NULL;
}

/* Keeps a copy of CAND, family schedule over a limit (or breaking a
 * pin), in *DONOR when it is the fastest of them so far. */
static void
pw_search_donor(struct pw_start *donor, const struct pw_start *cand)
{
	if (cand->eval.feasible || (donor->sched != NULL &&
	    !pw_solver_better(cand->eval.objective, donor->eval.objective)))
		return;
	pw_schedule_free(donor->sched);
	*donor = *cand;
	donor->sched = pw_schedule_copy(cand->sched);
}

/* OP as the schedule W indexes has it: itself, or the op a pin's op may
 * mean there (pw_pin_other: BW for a fused backward's B or W). */
static struct pw_op
pw_search_pin_op(const struct pw_problem *p, const struct pw_where *w,
    struct pw_op op)
{
	return pw_where_has(w, p, op) ? op : pw_pin_other(op);
}

/* The ops that wait for an op, by op index: SUCC[FIRST[i]] up to
 * SUCC[FIRST[i + 1]]. */
struct pw_search_succ {
	size_t	*first;
	size_t	*succ;
};

/* A min-heap of the positions in one resource's order of its ops that
 * are ready and not yet placed (a placed one is dropped when it comes
 * up). */
struct pw_search_heap {
	int	*at;
	int	n;
};

static void
pw_search_heap_push(struct pw_search_heap *h, int pos)
{
	int i = h->n++, up, t;

	h->at[i] = pos;
	for (; i > 0 && h->at[up = (i - 1) / 2] > h->at[i]; i = up) {
		t = h->at[up];
		h->at[up] = h->at[i];
		h->at[i] = t;
	}
}

static void
pw_search_heap_pop(struct pw_search_heap *h)
{
	int i = 0, c, t;

	h->at[0] = h->at[--h->n];
	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && h->at[c + 1] < h->at[c])
			c++;
		if (h->at[i] <= h->at[c])
			break;
		t = h->at[c];
		h->at[c] = h->at[i];
		h->at[i] = t;
		i = c;
	}
}

/* What pw_search_pin_order works with: SCHED (indexed in W) and OUT, its
 * new orders (AT[r] ops written on resource r); REM counts, by op index,
 * what each op still waits for (its data, but the anchor of a reload,
 * and the ops pins put before it); READY holds each resource's ops that
 * wait for nothing. */
struct pw_search_pinned {
	const struct pw_problem *p;
	const struct pw_schedule *sched;
	const struct pw_where *w;
	struct pw_schedule *out;
	struct pw_search_succ next;
	int	*rem, *at;
	bool	*done;
	struct pw_search_heap *ready;
};

/* Places op OP next in resource R's new order: what waited for it waits
 * for one op less.  A reload placed before the op it was anchored at
 * (pw_search_pin_unanchor let it) loses the anchor, a hint where to
 * start that the new order could not keep. */
static void
pw_search_pin_place(struct pw_search_pinned *pp, int r, struct pw_op op)
{
	const struct pw_problem *p = pp->p;
	struct pw_seq *to = r < pp->out->ndevices ? &pp->out->device[r] :
	    &pp->out->channel[r - pp->out->ndevices];
	struct pw_anchor *anchor;
	size_t i = pw_op_index(p, op), k, j;
	int wr;

	to->ops[pp->at[r]++] = op;
	pp->done[i] = true;
	if (op.kind == PW_RELOAD) {
		anchor = &pp->out->anchor[(size_t)op.stage *
		    (size_t)p->microbatches + (size_t)op.mb];
		if (anchor->op.kind != PW_NKINDS && !pp->done[pw_op_index(p,
		    anchor->op)])
			anchor->op.kind = PW_NKINDS;
	}
	for (k = pp->next.first[i]; k < pp->next.first[i + 1]; k++) {
		j = pp->next.succ[k];
		/* A reload let go of its anchor waits for nothing. */
		if (pp->rem[j] > 0 && --pp->rem[j] == 0 && !pp->done[j]) {
			wr = pp->w->resource[j];
			pw_search_heap_push(&pp->ready[wr],
			    pp->w->position[j]);
		}
	}
}

/* Fills PP's REM and NEXT from its schedule's data, its reloads' anchors
 * and PINS[NPINS] (a pin whose two ops are one there, a fused backward's,
 * holds by itself). */
static void
pw_search_pin_edges(struct pw_search_pinned *pp, const struct pw_pin *pins,
    size_t npins)
{
	const struct pw_problem *p = pp->p;
	const int nres = pp->sched->ndevices + pp->sched->nchannels;
	size_t n = pw_op_universe(p), *fill, a, b, k;
	struct pw_pred pred[PW_MAX_PREDS];
	const struct pw_seq *seq;
	int r, i, j, np, pass;

	pp->next.first = pw_xcalloc(n + 1, sizeof *pp->next.first);
	fill = pw_xcalloc(n + 1, sizeof *fill);
	/* Pass 0 counts each op's successors, pass 1 lists them. */
	for (pass = 0; pass < 2; pass++) {
		for (r = 0; r < nres; r++) {
			seq = pw_schedule_order(pp->sched, r);
			for (i = 0; i < seq->len; i++) {
				b = pw_op_index(p, seq->ops[i]);
				np = pw_preds(p, pp->sched, pp->w, seq->ops[i],
				    pred);
				for (j = 0; j < np; j++) {
					if (pred[j].kind != PW_PRED_DEP &&
					    pred[j].kind != PW_PRED_ANCHOR)
						continue;
					a = pw_op_index(p, pred[j].op);
					if (pass == 0) {
						pp->next.first[a + 1]++;
						pp->rem[b]++;
					} else
						pp->next.succ[fill[a]++] = b;
				}
			}
		}
		for (k = 0; k < npins; k++) {
			a = pw_op_index(p, pw_search_pin_op(p, pp->w,
			    pins[k].before));
			b = pw_op_index(p, pw_search_pin_op(p, pp->w,
			    pins[k].after));
			if (a == b)
				continue;
			if (pass == 0) {
				pp->next.first[a + 1]++;
				pp->rem[b]++;
			} else
				pp->next.succ[fill[a]++] = b;
		}
		if (pass == 0) {
			for (k = 0; k < n; k++)
				pp->next.first[k + 1] += pp->next.first[k];
			memcpy(fill, pp->next.first, n * sizeof *fill);
			pp->next.succ = pw_xcalloc(pp->next.first[n] + 1,
			    sizeof *pp->next.succ);
		}
	}
	free(fill);
}

/* When nothing else can go: the reload nearest the head of its order
 * that waits for its anchor alone stops waiting for it (the anchor
 * then goes when it is placed, pw_search_pin_place).  Returns its
 * resource, or -1 when no reload does. */
static int
pw_search_pin_unanchor(struct pw_search_pinned *pp, const int *head)
{
	const struct pw_problem *p = pp->p;
	const struct pw_anchor *an;
	const struct pw_seq *seq;
	int r, i, best_r = -1, best_i = 0;
	size_t k;

	for (r = pp->sched->ndevices; r < pp->sched->ndevices +
	    pp->sched->nchannels; r++) {
		seq = pw_schedule_order(pp->sched, r);
		for (i = head[r]; i < seq->len && (best_r < 0 ||
		    i - head[r] < best_i - head[best_r]); i++) {
			k = pw_op_index(p, seq->ops[i]);
			if (pp->done[k] || seq->ops[i].kind != PW_RELOAD ||
			    pp->rem[k] != 1)
				continue;
			an = &pp->sched->anchor[(size_t)seq->ops[i].stage *
			    (size_t)p->microbatches + (size_t)seq->ops[i].mb];
			if (an->op.kind == PW_NKINDS || !pw_where_has(pp->w, p,
			    an->op) || pp->done[pw_op_index(p, an->op)])
				continue;
			best_r = r;
			best_i = i;
		}
	}
	if (best_r >= 0) {
		k = pw_op_index(p, pw_schedule_order(pp->sched,
		    best_r)->ops[best_i]);
		pp->rem[k] = 0;
		pw_search_heap_push(&pp->ready[best_r], best_i);
	}
	return best_r;
}

/*
 * SCHED's orders with every pin kept (the family's order names
 * microbatches, which a pin may reverse): each resource's ops go in its
 * order while the next one's data, its anchor (a reload's) and the ops
 * pins put before it have gone; when no resource's next has, the ready
 * op nearest the head of its order goes, and when none is ready, a
 * reload that waits for its anchor alone lets go of it.  What goes is a
 * topological order of the data, the pins, the anchors kept and the new
 * orders, so these time.  Returns a schedule the caller owns, or NULL
 * when SCHED does not index (pw_where_build), the pins close a cycle
 * with the data, or S's search is stopped.
 */
static struct pw_schedule *
pw_search_pin_order(const struct pw_search *s, const struct pw_schedule *sched)
{
	const struct pw_problem *p = s->p;
	const int nres = sched->ndevices + sched->nchannels;
	struct pw_search_pinned pp = { .p = p, .sched = sched };
	struct pw_where *w = NULL;
	struct pw_error err;
	const struct pw_seq *seq;
	struct pw_search_heap *h;
	int *head, r, best, i, left = 0;
	size_t placed = 0, polled = 0, n = pw_op_universe(p);
	bool moved;

	if (pw_where_build(p, sched, &w, &err) != PW_OK)
		return NULL;
	pp.w = w;
	pp.out = pw_schedule_copy(sched);
	pp.rem = pw_xcalloc(n, sizeof *pp.rem);
	pp.done = pw_xcalloc(n, sizeof *pp.done);
	pp.at = pw_xcalloc((size_t)nres, sizeof *pp.at);
	pp.ready = pw_xcalloc((size_t)nres, sizeof *pp.ready);
	head = pw_xcalloc((size_t)nres, sizeof *head);
	pw_search_pin_edges(&pp, s->o->pins, s->o->npins);
	for (r = 0; r < nres; r++) {
		seq = pw_schedule_order(sched, r);
		pp.ready[r].at = pw_xcalloc((size_t)seq->len + 1,
		    sizeof *pp.ready[r].at);
		left += seq->len;
		for (i = 0; i < seq->len; i++)
			if (pp.rem[pw_op_index(p, seq->ops[i])] == 0)
				pw_search_heap_push(&pp.ready[r], i);
	}
	while (left > 0) {
		/* A placement is cheap; a long run may still be stopped. */
		if (placed - polled >= 4096) {
			polled = placed;
			if (pw_search_stopped(s))
				break;
		}
		moved = false;
		for (r = 0; r < nres; r++) {
			seq = pw_schedule_order(sched, r);
			while (head[r] < seq->len) {
				i = (int)pw_op_index(p, seq->ops[head[r]]);
				if (!pp.done[i] && pp.rem[i] > 0)
					break;
				if (!pp.done[i]) {
					pw_search_pin_place(&pp, r,
					    seq->ops[head[r]]);
					left--;
					placed++;
					moved = true;
				}
				head[r]++;
			}
		}
		if (moved)
			continue;
		best = -1;
		for (r = 0; r < nres; r++) {
			h = &pp.ready[r];
			seq = pw_schedule_order(sched, r);
			while (h->n > 0 && pp.done[pw_op_index(p,
			    seq->ops[h->at[0]])])
				pw_search_heap_pop(h);
			if (h->n > 0 && (best < 0 || h->at[0] - head[r] <
			    pp.ready[best].at[0] - head[best]))
				best = r;
		}
		if (best < 0 && (best = pw_search_pin_unanchor(&pp,
		    head)) < 0)
			break;
		seq = pw_schedule_order(sched, best);
		i = pp.ready[best].at[0];
		pw_search_heap_pop(&pp.ready[best]);
		pw_search_pin_place(&pp, best, seq->ops[i]);
		left--;
		placed++;
	}
	for (r = 0; r < nres; r++)
		free(pp.ready[r].at);
	free(head);
	free(pp.ready);
	free(pp.at);
	free(pp.done);
	free(pp.rem);
	free(pp.next.succ);
	free(pp.next.first);
	pw_where_free(w);
	if (left > 0) {
		pw_schedule_free(pp.out);
		pp.out = NULL;
	}
	return pp.out;
}


/* Whether PIN joins two ops of one kind and stage (microbatches apart). */
static bool
pw_search_pin_within(const struct pw_pin *pin)
{
	return pin->before.kind == pin->after.kind &&
	    pin->before.stage == pin->after.stage;
}

/* Whether one of PINS[NPINS] puts a microbatch's op before an earlier
 * microbatch's of the same kind and stage: the order the heuristic
 * keeps. */
static bool
pw_search_pins_reverse(const struct pw_pin *pins, size_t npins)
{
	size_t k;

	for (k = 0; k < npins; k++)
		if (pw_search_pin_within(&pins[k]) &&
		    pins[k].before.mb > pins[k].after.mb)
			return true;
	return false;
}

/*
 * SCHED with its microbatches renamed so that every pin between two ops
 * of one kind and stage holds (the microbatches of a problem are alike,
 * so the renamed schedule times and fits as the original): the names in
 * the order those pins put them, each otherwise at its place (a stable
 * topological sort), given to the microbatches in the order the original
 * runs them.  Returns a schedule the caller owns, or NULL when no such
 * pin reverses the order or the pins close a cycle.
 */
static struct pw_schedule *
pw_search_pin_rename(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_pin *pins, size_t npins)
{
	const int m = p->microbatches;
	int *name = NULL, *waits, *to, r, i, j, placed;
	struct pw_schedule *out = NULL;
	bool *done;
	size_t k;

	if (!pw_search_pins_reverse(pins, npins))
		return NULL;
	waits = pw_xcalloc((size_t)m, sizeof *waits);
	done = pw_xcalloc((size_t)m, sizeof *done);
	to = pw_xcalloc((size_t)m, sizeof *to);
	for (k = 0; k < npins; k++)
		if (pw_search_pin_within(&pins[k]))
			waits[pins[k].after.mb]++;
	/* TO[i]: the name the i-th microbatch gets, the least ready name
	 * each time (m is at most a few thousand, pins few). */
	for (placed = 0; placed < m; placed++) {
		for (j = 0; j < m && (done[j] || waits[j] > 0); j++)
			continue;
		if (j == m)
			break;
		done[j] = true;
		to[placed] = j;
		for (k = 0; k < npins; k++)
			if (pw_search_pin_within(&pins[k]) &&
			    pins[k].before.mb == j)
				waits[pins[k].after.mb]--;
	}
	if (placed == m) {
		name = to;
		to = NULL;
		out = pw_schedule_copy(sched);
		for (r = 0; r < out->ndevices + out->nchannels; r++) {
			struct pw_seq *q = r < out->ndevices ?
			    &out->device[r] : &out->channel[r - out->ndevices];

			for (i = 0; i < q->len; i++)
				q->ops[i].mb = name[q->ops[i].mb];
		}
		for (i = 0; i < p->nstages; i++)
			for (j = 0; j < m; j++) {
				struct pw_anchor a = sched->anchor[(size_t)i *
				    (size_t)m + (size_t)j];

				if (a.op.kind != PW_NKINDS)
					a.op.mb = name[a.op.mb];
				out->anchor[(size_t)i * (size_t)m +
				    (size_t)name[j]] = a;
			}
	}
	free(name);
	free(to);
	free(done);
	free(waits);
	return out;
}

/* CAND, a start (a family's or the given schedule) that breaks a pin or
 * a limit, in place of its orders with the pins' (pw_search_pin_order)
 * where those differ and time (a device runs its order, so they hold
 * every pin); else unchanged. */
static void
pw_search_pin_start(struct pw_search *s, struct pw_start *cand)
{
	struct pw_schedule *ordered, *renamed;
	struct pw_plan *plan;
	struct pw_error err;

	if (s->o->npins == 0 || cand->eval.feasible)
		return;
	/* Renamed first: the same schedule, where the pins only ask for
	 * another microbatch first; then in the pins' order. */
	renamed = pw_search_pin_rename(s->p, cand->sched, s->o->pins,
	    s->o->npins);
	ordered = pw_search_pin_order(s, renamed != NULL ? renamed :
	    cand->sched);
	pw_schedule_free(renamed);
	if (ordered == NULL)
		return;
	if (pw_schedule_same_orders(ordered, cand->sched, NULL, NULL)) {
		pw_schedule_free(ordered);
		return;
	}
	/* The plan takes the orders, whatever it returns. */
	if (pw_plan_new(pw_problem_copy(s->p), ordered, &plan, &err) != PW_OK)
		return;
	pw_schedule_free(cand->sched);
	cand->sched = pw_schedule_copy(pw_plan_timed(plan));
	pw_solver_judge_plan(plan, s->o->objective, s->offloadable,
	    s->o->pins, s->o->npins, &cand->eval);
	cand->at_limit = pw_search_at_limit(s->p, pw_plan_metrics(plan));
	cand->pin_ordered = true;
	pw_plan_free(plan);
}

/*
 * The start: the given schedule, the named family, or the best feasible
 * family, recorded in s->start.  Offloading families start with offload
 * on, and with offload auto when a limit binds: some family's schedule
 * without offload reaches a device's limit (is over it, or peaks at it),
 * so memory is what holds the schedules back; they are then weighed
 * after the others (the best of them first).  Each feasible start is
 * offered as soon as it is weighed, so that a stop finds a schedule;
 * without one the heuristic's schedule is the start.  The fastest family
 * that breaks a limit is kept in *DONOR (the caller's) for the graft.
 */
static int
pw_search_start(struct pw_search *s, struct pw_start *donor)
{
	const struct pw_solve_opts *o = s->o;
	const struct pw_family *fam;
	const char *name, *offname = NULL;
	struct pw_start st, cand, off;
	struct pw_error err;
	char label[PW_SEARCH_LABEL];
	bool binds = false;
	size_t i;
	int rc;

	memset(&st, 0, sizeof st);
	if (o->start != NULL) {
		name = "given";
		if ((rc = pw_solver_eval(s->p, o->start, o->objective,
		    s->offloadable, o->pins, o->npins, &st.eval,
		    &err)) != PW_OK) {
			pw_error_set(&s->err, "solve: start: %s", err.msg);
			return PW_ERR_INPUT;
		}
		st.sched = pw_schedule_copy(o->start);
	} else if (o->start_family != NULL) {
		name = o->start_family;
		if ((fam = pw_family_find(o->start_family)) == NULL) {
			pw_error_set(&s->err, "solve: start: unknown "
			    "family '%s'", o->start_family);
			return PW_ERR_INPUT;
		}
		if (pw_search_family(s, fam, &st, &err) != PW_OK) {
			pw_error_set(&s->err, "solve: start: %s does "
			    "not apply: %s", fam->name, err.msg);
			return PW_ERR_INPUT;
		}
	} else {
		memset(&off, 0, sizeof off);
		for (i = 0; i < pw_nfamilies; i++) {
			/* Stopped: the first feasible start will do (an
			 * offloading one where a limit binds). */
			if ((s->best != NULL || (off.sched != NULL && binds)) &&
			    pw_search_stopped(s))
				break;
			if (pw_search_family(s, &pw_families[i], &cand,
			    &err) != PW_OK)
				continue;
			pw_search_pin_start(s, &cand);
			pw_search_donor(donor, &cand);
			if (!pw_solver_moves(cand.sched)) {
				binds = binds || cand.at_limit;
				pw_search_offer_start(s, &cand,
				    pw_families[i].name);
			} else if (o->offload == PW_OFFMODE_ON)
				pw_search_offer_start(s, &cand,
				    pw_families[i].name);
			else if (o->offload == PW_OFFMODE_AUTO &&
			    cand.eval.feasible && (off.sched == NULL ||
			    pw_solver_better(cand.eval.objective,
			    off.eval.objective))) {
				pw_schedule_free(off.sched);
				off = cand;
				offname = pw_families[i].name;
			} else
				pw_schedule_free(cand.sched);
		}
		if (off.sched != NULL && binds)
			pw_search_offer_start(s, &off, offname);
		pw_schedule_free(off.sched);
		return PW_OK;
	}
	pw_search_pin_start(s, &st);
	/* What the error names should nothing keep the limits. */
	if (st.pin_ordered)
		pw_search_donor(donor, &st);
	pw_search_set_start(s, pw_search_start_name(&st, name, label,
	    sizeof label), st.eval.objective, st.eval.feasible);
	if (st.eval.feasible)
		pw_search_offer(s, st.sched, "start", NULL);
	else
		pw_schedule_free(st.sched);
	return PW_OK;
}

/* ------------------------------------------------------------------ */
/* The MILP, whole or in windows                                       */

/*
 * The ordering binaries of the whole model, estimated before building
 * it: pairs of ops on one device whose order no dependency implies,
 * with the ops of one kind of a stage in microbatch order (so a class
 * that precedes another within a microbatch leaves only the pairs where
 * the later class has the earlier microbatch), plus one offload binary
 * per movable activation.
 */
static double
pw_search_binaries(const struct pw_search *s)
{
	static const enum pw_kind kinds[] = { PW_F, PW_B, PW_W };
	const struct pw_problem *p = s->p;
	double m = p->microbatches, n = 0;
	int sa, sb, ka, kb;

	for (sa = 0; sa < p->nstages; sa++) {
		if (s->offloadable != NULL && s->offloadable[sa])
			n += m;
		for (sb = sa; sb < p->nstages; sb++) {
			if (p->stages[sa].device != p->stages[sb].device)
				continue;
			for (ka = 0; ka < 3; ka++)
				for (kb = sa == sb ? ka + 1 : 0; kb < 3; kb++) {
					if (pw_kind_precedes(kinds[ka],
					    sa, kinds[kb], sb) ||
					    pw_kind_precedes(kinds[kb],
					    sb, kinds[ka], sa))
						n += m * (m - 1) / 2;
					else
						n += m * m;
				}
		}
	}
	return n;
}

/*
 * The binaries the whole model adds for activations that may be away
 * from their device at a compute op of it (milp.c checks memory at every
 * compute op where a reload could start): per device, its compute ops
 * times its movable activations.
 */
static double
pw_search_away(const struct pw_search *s)
{
	const struct pw_problem *p = s->p;
	double *acts, n = 0;
	int d, st;

	acts = pw_xcalloc((size_t)p->devices, sizeof *acts);
	for (st = 0; st < p->nstages && s->offloadable != NULL; st++)
		if (s->offloadable[st])
			acts[p->stages[st].device] += p->microbatches;
	for (d = 0; d < p->devices; d++)
		n += acts[d] * 3 * p->microbatches * pw_problem_chunks(p, d);
	free(acts);
	return n;
}

/*
 * Solves the model with the ops of MASK free (NULL: the whole model) for
 * at most ITERATIONS simplex iterations (0: no limit of its own;
 * PW_SEARCH_WRITE_ONLY: none, the model is only written to WRITE_LP)
 * within what is left of the search's time and iterations, offering what
 * it finds as the incumbent (with TIES, also one of the same objective
 * that ends earlier: pw_milp_request).  *IMPROVED says whether it was
 * taken, *OPTIMAL whether lp_solve finished.
 */
int
pw_search_milp(struct pw_search *s, const bool *mask, bool ties,
    long iterations, const char *write_lp, const char *phase, bool *improved,
    bool *optimal)
{
	struct pw_milp_request rq;
	struct pw_milp_result res;
	long left = s->o->iteration_limit - s->iterations;
	int rc;

	memset(&rq, 0, sizeof rq);
	rq.problem = s->p;
	rq.objective = s->o->objective;
	rq.incumbent = s->best;
	rq.incumbent_objective = s->eval.objective;
	rq.free = mask;
	rq.offload = s->offloadable != NULL;
	rq.may_offload = s->offloadable;
	rq.pins = s->o->pins;
	rq.npins = s->o->npins;
	rq.lower_bound = s->bound;
	/* The limit may pass since the caller looked: lp_solve then stops
	 * at once. */
	rq.time_limit = fmax(0, s->limit - pw_search_elapsed(s));
	rq.write_only = iterations == PW_SEARCH_WRITE_ONLY;
	rq.iteration_limit = iterations > 0 ? iterations : 0;
	if (s->o->iteration_limit > 0)
		rq.iteration_limit = iterations > 0 && iterations < left ?
		    iterations : left > 1 ? left : 1;
	rq.cancel = &s->stop;
	rq.write_lp = write_lp;
	rq.ties = ties;
	memset(&res, 0, sizeof res);
	*improved = *optimal = false;
	/* A model file asked for is written before pw_solve returns, and
	 * its failure reported; once pw_solve has returned, none is. */
	pthread_mutex_lock(&s->lock);
	if (s->left)
		rq.write_lp = NULL;
	s->writing = rq.write_lp != NULL;
	pthread_mutex_unlock(&s->lock);
	rc = pw_milp_solve(&rq, &res, &s->err);
	/* At least one per model: every model counts against the limit. */
	s->iterations += res.iterations > 0 ? res.iterations : 1;
	pthread_mutex_lock(&s->lock);
	if (res.written)
		s->lp_unwritten = NULL;
	s->writing = false;
	pw_search_signal(s);
	pthread_mutex_unlock(&s->lock);
	if (rc != PW_OK)
		return rc;
	/* The model reported is one that was solved: the whole one, or the
	 * largest window. */
	pthread_mutex_lock(&s->lock);
	if (!rq.write_only && (mask == NULL || (!s->model.whole &&
	    res.size.binaries >= s->model.binaries)))
		s->model = res.size;
	pthread_mutex_unlock(&s->lock);
	*optimal = res.optimal;
	if (res.schedule != NULL)
		*improved = pw_search_offer(s, res.schedule, phase, NULL);
	/* lp_solve's bound counts for the problem only when the model
	 * restricted nothing (milp.h: exact); nothing can be below the
	 * incumbent's objective. */
	if (res.exact && s->best != NULL && !isnan(res.bound)) {
		pthread_mutex_lock(&s->lock);
		s->bound = fmax(s->bound, res.optimal ? s->eval.objective :
		    fmin(res.bound, s->eval.objective));
		pthread_mutex_unlock(&s->lock);
		pw_search_publish(s, phase);
	}
	return PW_OK;
}

/* BUDGET doubled after a round that lowered the objective (BETTER),
 * else halved, within MIN and MAX. */
static long
pw_search_adapt(long budget, bool better, long min, long max)
{
	budget = better ? budget * 2 : budget / 2;
	return budget < min ? min : budget > max ? max : budget;
}

/*
 * Rounds of the windows and the local search from the incumbent until
 * the search stops, the bound is met, or neither can improve: the
 * windows done (a whole pass of the largest solved without improvement)
 * and PW_ROUND_LOCAL_IDLE local rounds in a row without a better
 * objective.  A local round follows a round of windows that did not
 * lower the objective; each method's improvement renews the other.
 */
static int
pw_search_rounds(struct pw_search *s)
{
	struct pw_lns *lns = pw_lns_new(s);
	uint64_t x = (uint64_t)s->o->seed ^ PW_ROUND_SALT;
	long windows = PW_ROUND_WINDOWS, share = pw_lns_share(lns);
	long budget = share, cost = pw_local_cost(s->best);
	int idle = 0, rc = PW_OK;
	bool done = false, better = false;
	double before;

	while (!pw_search_stopped(s) && !pw_search_closed(s)) {
		if (!done) {
			pw_search_publish(s, "lns");
			before = s->eval.objective;
			if ((rc = pw_lns_round(s, lns, (int)windows,
			    &done)) != PW_OK)
				break;
			better = pw_solver_better(s->eval.objective, before);
			windows = pw_search_adapt(windows, better,
			    PW_ROUND_WINDOWS_MIN, PW_ROUND_WINDOWS_MAX);
			if (better)
				idle = 0;
		}
		/* The local search's turn comes when the windows' did not
		 * lower the objective. */
		if (!better && idle < PW_ROUND_LOCAL_IDLE &&
		    !pw_search_stopped(s) && !pw_search_closed(s)) {
			pw_search_publish(s, "local");
			better = pw_search_local(s, budget / cost + 1, &x);
			budget = pw_search_adapt(budget, better, share,
			    PW_ROUND_WINDOWS_MAX * share);
			idle = better ? 0 : idle + 1;
			if (better) {
				pw_lns_renew(lns);
				done = false;
			}
		}
		if (done && idle >= PW_ROUND_LOCAL_IDLE)
			break;
	}
	pw_lns_free(lns);
	return rc;
}

/*
 * After the start, when the fastest family broke a limit: its fill
 * grafted onto the incumbent (pw_search_graft), where the windows and
 * the local search's moves, which keep the transfers they are given or
 * place them for a few ops at a time, do not reach: PipeOffload's k = 0.8
 * rows, where GIS's fill on po-auto's schedule with offloads planned
 * anew shortens the span.  DONOR is freed.
 */
static void
pw_search_grafted(struct pw_search *s, struct pw_start *donor)
{
	if (donor->sched != NULL && !pw_search_stopped(s) &&
	    !pw_search_closed(s) && pw_solver_better(donor->eval.objective,
	    s->eval.objective)) {
		pw_search_publish(s, "local");
		pw_search_graft(s, donor->sched);
	}
	pw_schedule_free(donor->sched);
	donor->sched = NULL;
}

/* WHY the model file asked for is not written, where one is. */
static void
pw_search_unwritten(struct pw_search *s, const char *why)
{
	pthread_mutex_lock(&s->lock);
	if (s->lp_unwritten != NULL)
		s->lp_unwritten = why;
	pthread_mutex_unlock(&s->lock);
}

/* The whole search; the result stays in S. */
static int
pw_search_phases(struct pw_search *s)
{
	struct pw_heuristic_opts ho;
	struct pw_schedule *sched;
	struct pw_start donor;
	struct pw_error err;
	double bound, binaries;
	bool improved, optimal;
	int rc;

	bound = pw_bound_problem(s->p, s->o->objective, s->offloadable);
	pthread_mutex_lock(&s->lock);
	s->bound = bound;
	pthread_mutex_unlock(&s->lock);
	pw_search_publish(s, "start");
	memset(&donor, 0, sizeof donor);
	if ((rc = pw_search_start(s, &donor)) != PW_OK)
		goto out;
	/* Before the heuristic, which can take seconds on a large problem
	 * (and longer on a loaded machine): the graft's few plans improve
	 * more where they apply. */
	if (s->best != NULL)
		pw_search_grafted(s, &donor);

	/* Stopped already: the start will do if it is feasible. */
	if (!pw_search_closed(s) && (s->best == NULL ||
	    !pw_search_stopped(s))) {
		pw_search_publish(s, "heuristic");
		memset(&ho, 0, sizeof ho);
		ho.objective = s->o->objective;
		ho.offloadable = s->offloadable;
		ho.pins = s->o->pins;
		ho.npins = s->o->npins;
		ho.stop = &s->stop;
		ho.settle = true;
		ho.incumbent = s->best != NULL ? s->eval.objective : INFINITY;
		/* Under an iteration limit, the first pass only: the same on
		 * every run. */
		if (s->o->iteration_limit <= 0)
			ho.settle_by = s->t0 + s->limit * PW_SEARCH_HEURISTIC;
		rc = pw_heuristic(s->p, &ho, &sched, &err);
		if (rc != PW_OK && s->best == NULL && donor.pin_ordered)
			/* The start's orders kept the pins but not a limit:
			 * nothing proves that no schedule can. */
			pw_error_set(&s->err, "solve: no schedule found that "
			    "keeps the pins within the limits: %s in the "
			    "pins' order does not (%s), and the heuristic %s",
			    donor.family != NULL ? donor.family : "the given "
			    "schedule", donor.eval.why,
			    pw_search_pins_reverse(s->o->pins,
			    s->o->npins) ? "keeps each "
			    "stage's microbatch order, which the pins reverse" :
			    "found none");
		else if (rc != PW_OK && s->best == NULL)
			pw_error_set(&s->err, "solve: %s", err.msg);
		if (rc != PW_OK && s->best == NULL)
			goto out;
		/* Without a start, the heuristic's schedule is the start. */
		if (rc == PW_OK)
			pw_search_offer(s, sched, "heuristic", s->start[0] ==
			    '\0' ? "heuristic" : NULL);
		if (s->best == NULL) {
			pw_error_set(&s->err, "solve: internal error: no "
			    "schedule passed the checker");
			rc = PW_ERR_INTERNAL;
			goto out;
		}
	}
	rc = PW_OK;
	if (pw_search_closed(s)) {
		pw_search_unwritten(s, "the start meets the lower bound: no "
		    "model was built");
		goto out;
	}
	if (pw_search_stopped(s))
		goto out;

	binaries = pw_search_binaries(s) + pw_search_away(s);
	if (binaries <= PW_SOLVE_WHOLE_BINARIES) {
		pw_search_publish(s, "milp");
		rc = pw_search_milp(s, NULL, false, 0, s->o->write_lp, "milp",
		    &improved, &optimal);
		goto out;
	}
	if (binaries > PW_SOLVE_WRITE_BINARIES)
		pw_search_unwritten(s, "the whole model is too large to "
		    "write (more than " PW_SEARCH_TEXT(PW_SOLVE_WRITE_BINARIES)
		    " ordering binaries)");
	else if (s->o->write_lp != NULL) {
		/* Built for the file only (too large to solve whole); the
		 * search goes on in windows. */
		pw_search_publish(s, "milp");
		if ((rc = pw_search_milp(s, NULL, false, PW_SEARCH_WRITE_ONLY,
		    s->o->write_lp, "milp", &improved, &optimal)) != PW_OK)
			goto out;
	}
	rc = pw_search_rounds(s);
out:
	pw_schedule_free(donor.sched);
	return rc;
}

int
pw_search_run(struct pw_search *s)
{
	int rc = pw_search_phases(s);

	/* A stop may have cut a unit short (the heuristic returns its best
	 * policy so far), so a stopped search is not reproducible even when
	 * its schedule meets the bound. */
	if (s->stop != 0 || pw_search_elapsed(s) >= s->limit)
		s->ended = PW_END_TIME;
	else if (pw_search_closed(s))
		s->ended = PW_END_OPTIMAL;
	else if (pw_search_spent(s))
		s->ended = PW_END_ITERATIONS;
	else
		s->ended = PW_END_SEARCHED;
	return rc;
}
