/*
 * test_views_trace.c - the Chrome/Perfetto trace of every family's
 * schedule on the default problem, held to the Trace Event Format's
 * rules by a validator of its own (no trace processor can be had here):
 * the JSON parses, every event has what its phase requires, slices last
 * no less than 0, counters carry numbers, metadata names what it sets,
 * flow starts and ends pair by id and bind to slices that exist at their
 * times.  Then what the trace says is checked against the schedule: a
 * slice per op named "F s2.c1 mb5", a colour per kind from the viewer's
 * reserved names, and a flow for each data dependency across tracks
 * and from each reload's anchor, counted here from the model's rules
 * (docs/model.md) and the schedule's anchors rather than from pw_preds;
 * the anchor flows of one offloading schedule event by event.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pipewright.h"
#include "tap.h"

/* The colour names catapult's trace viewer reserves (color_scheme.html),
 * which Perfetto's JSON import maps too. */
static const char *const trace_cnames[] = {
	"thread_state_uninterruptible", "thread_state_iowait",
	"thread_state_running", "thread_state_runnable",
	"thread_state_sleeping", "thread_state_unknown",
	"background_memory_dump", "light_memory_dump", "detailed_memory_dump",
	"vsync_highlight_color", "generic_work", "good", "bad", "terrible",
	"black", "grey", "white", "yellow", "olive", "rail_response",
	"rail_animation", "rail_idle", "rail_load", "startup",
	"heap_dump_stack_frame", "heap_dump_object_type",
	"heap_dump_child_node_arrow", "cq_build_running", "cq_build_passed",
	"cq_build_failed", "cq_build_abandoned", "cq_build_attempt_runnig",
	"cq_build_attempt_passed", "cq_build_attempt_failed",
};

/* What the validator found; the first broken rule, for the diagnosis. */
struct trace_check {
	char	bad[256];
	int	nbad;
	int	slices, counters, meta, starts, ends;
	json_t	*events;	/* borrowed */
	json_t	*tracks;	/* "pid/tid": its slices */
	json_t	*flows;		/* "cat/id": its flow events */
};

static void __attribute__((format(printf, 2, 3)))
trace_bad(struct trace_check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->nbad++ > 0)
		return;
	va_start(ap, fmt);
	vsnprintf(c->bad, sizeof c->bad, fmt, ap);
	va_end(ap);
}

static double
trace_ts(json_t *ev)
{
	return json_number_value(json_object_get(ev, "ts"));
}

static bool
trace_is_int(json_t *ev, const char *key)
{
	return json_is_integer(json_object_get(ev, key));
}

static bool
trace_is_num(json_t *ev, const char *key)
{
	json_t *v = json_object_get(ev, key);

	return json_is_number(v) && isfinite(json_number_value(v));
}

static bool
trace_cname_known(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof trace_cnames / sizeof trace_cnames[0]; i++)
		if (strcmp(trace_cnames[i], name) == 0)
			return true;
	return false;
}

/* KEY of length LEN for EV's track ("pid/tid") or flow ("cat/id"). */
static void
trace_key(char *key, size_t len, json_t *ev, const char *a, const char *b)
{
	json_t *x = json_object_get(ev, a);

	snprintf(key, len, "%s/%lld", json_is_string(x) ? json_string_value(x) :
	    json_is_integer(x) ? "" : "?", (long long)json_integer_value(x));
	snprintf(key + strlen(key), len - strlen(key), "/%lld",
	    (long long)json_integer_value(json_object_get(ev, b)));
}

/* Files EV (borrowed) under KEY's array in INDEX. */
static void
trace_file(json_t *index, const char *key, json_t *ev)
{
	json_t *list = json_object_get(index, key);

	if (list == NULL) {
		list = json_array();
		json_object_set_new(index, key, list);
	}
	json_array_append(list, ev);
}

/* The "X" slice on EV's pid and tid that encloses EV's ts, or NULL. */
static json_t *
trace_enclosing(json_t *tracks, json_t *ev)
{
	double ts = json_number_value(json_object_get(ev, "ts")), s, d;
	char key[64];
	json_t *x;
	size_t i;

	trace_key(key, sizeof key, ev, "pid", "tid");
	json_array_foreach(json_object_get(tracks, key), i, x) {
		s = json_number_value(json_object_get(x, "ts"));
		d = json_number_value(json_object_get(x, "dur"));
		if (s <= ts && ts <= s + d)
			return x;
	}
	return NULL;
}

static void
trace_check_meta(struct trace_check *c, size_t i, json_t *ev)
{
	const char *name = json_string_value(json_object_get(ev, "name"));
	json_t *args = json_object_get(ev, "args");

	c->meta++;
	if (!trace_is_int(ev, "pid"))
		trace_bad(c, "event %zu: metadata without pid", i);
	if (strncmp(name, "thread_", 7) == 0 && !trace_is_int(ev, "tid"))
		trace_bad(c, "event %zu: %s without tid", i, name);
	if (strcmp(name, "process_name") == 0 ||
	    strcmp(name, "thread_name") == 0) {
		if (!json_is_string(json_object_get(args, "name")))
			trace_bad(c, "event %zu: %s without args.name", i, name);
	} else if (strcmp(name, "process_sort_index") == 0 ||
	    strcmp(name, "thread_sort_index") == 0) {
		if (!trace_is_int(args, "sort_index"))
			trace_bad(c, "event %zu: %s without args.sort_index", i,
			    name);
	} else
		trace_bad(c, "event %zu: unknown metadata %s", i, name);
}

static void
trace_check_event(struct trace_check *c, size_t i, json_t *ev)
{
	const char *ph = json_string_value(json_object_get(ev, "ph"));
	json_t *args = json_object_get(ev, "args"), *v;
	const char *key;

	if (ph == NULL || !json_is_string(json_object_get(ev, "name"))) {
		trace_bad(c, "event %zu: no ph or name", i);
		return;
	}
	if (strcmp(ph, "M") == 0) {
		trace_check_meta(c, i, ev);
		return;
	}
	if (!trace_is_int(ev, "pid") || !trace_is_num(ev, "ts")) {
		trace_bad(c, "event %zu (%s): no pid or ts", i, ph);
		return;
	}
	if (strcmp(ph, "X") == 0) {
		c->slices++;
		if (!trace_is_int(ev, "tid") || !trace_is_num(ev, "dur") ||
		    json_number_value(json_object_get(ev, "dur")) < 0)
			trace_bad(c, "event %zu: a slice without tid or dur >= 0",
			    i);
		v = json_object_get(ev, "cname");
		if (v != NULL && (!json_is_string(v) ||
		    !trace_cname_known(json_string_value(v))))
			trace_bad(c, "event %zu: cname not reserved", i);
	} else if (strcmp(ph, "C") == 0) {
		c->counters++;
		if (!json_is_object(args) || json_object_size(args) == 0)
			trace_bad(c, "event %zu: a counter without args", i);
		json_object_foreach(args, key, v) {
			if (!json_is_number(v))
				trace_bad(c, "event %zu: counter %s not a number",
				    i, key);
		}
	} else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
		if (!trace_is_int(ev, "tid") || !trace_is_int(ev, "id") ||
		    !json_is_string(json_object_get(ev, "cat")))
			trace_bad(c, "event %zu: a flow without tid, id or cat",
			    i);
		else if (trace_enclosing(c->tracks, ev) == NULL)
			trace_bad(c, "event %zu: flow %s binds to no slice", i,
			    ph);
		if (ph[0] == 'f' && !json_is_string(json_object_get(ev, "bp")))
			trace_bad(c, "event %zu: flow end without bp", i);
	} else
		trace_bad(c, "event %zu: phase %s", i, ph);
}

/* Indexes the slices by track and the flow events by (cat, id). */
static void
trace_index(struct trace_check *c)
{
	const char *ph;
	char key[64];
	json_t *ev;
	size_t i;

	c->tracks = json_object();
	c->flows = json_object();
	json_array_foreach(c->events, i, ev) {
		if ((ph = json_string_value(json_object_get(ev, "ph"))) == NULL)
			continue;
		if (strcmp(ph, "X") == 0) {
			trace_key(key, sizeof key, ev, "pid", "tid");
			trace_file(c->tracks, key, ev);
		} else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
			trace_key(key, sizeof key, ev, "cat", "id");
			trace_file(c->flows, key, ev);
		}
	}
}

/*
 * Pairs flow starts and ends by (cat, id): one of each, on different
 * tracks, binding to slices of one microbatch (an anchor's may be of
 * another), the start no later.
 */
static void
trace_check_flows(struct trace_check *c)
{
	json_t *list, *ev, *to, *from, *into;
	const char *key;
	size_t i;

	json_object_foreach(c->flows, key, list) {
		ev = to = NULL;
		json_array_foreach(list, i, from) {
			if (json_string_value(json_object_get(from, "ph"))[0] ==
			    's') {
				c->starts++;
				ev = from;
			} else {
				c->ends++;
				to = from;
			}
		}
		if (json_array_size(list) != 2 || ev == NULL || to == NULL) {
			trace_bad(c, "flow %s: not one start and one end", key);
			continue;
		}
		from = trace_enclosing(c->tracks, ev);
		into = trace_enclosing(c->tracks, to);
		if (from == NULL || into == NULL)
			continue;
		if (json_equal(json_object_get(ev, "tid"),
		    json_object_get(to, "tid")))
			trace_bad(c, "flow %s stays on its track", key);
		if (strcmp(json_string_value(json_object_get(ev, "cat")),
		    "anchor") != 0 && !json_equal(json_object_get(
		    json_object_get(from, "args"), "mb"), json_object_get(
		    json_object_get(into, "args"), "mb")))
			trace_bad(c, "flow %s joins two microbatches", key);
		if (trace_ts(ev) > trace_ts(to))
			trace_bad(c, "flow %s ends before it starts", key);
	}
}

/* The track of OP as the trace numbers them (devices, then channels). */
static int
trace_track(const struct pw_problem *p, struct pw_op op)
{
	int d = p->stages[op.stage].device;

	if (!pw_kind_is_transfer(op.kind))
		return d;
	return p->devices + pw_problem_channel(p, d, op.kind);
}

static bool
trace_has(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op)
{
	size_t i = pw_op_index(p, op);

	return pw_timing_has(t, i) && t->end[i] > t->start[i];
}

/* 1 when OP and DEP are both timed, take time and sit on two tracks. */
static int
trace_cross(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op, struct pw_op dep)
{
	return trace_has(p, t, op) && trace_has(p, t, dep) &&
	    trace_track(p, op) != trace_track(p, dep);
}

/*
 * The data dependencies across tracks, by the model's rules: F(s) on
 * F(s-1); a backward of a stage before the last on the next stage's B
 * (else its BW) and on its own reload; an offload on its F; a reload on
 * its offload and on its anchor (a compute op, so on another track).  W
 * waits for its B and the last stage's backward for its F on the same
 * device, so they never cross.
 */
static int
trace_want_flows(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timing *t)
{
	struct pw_anchor anchor;
	struct pw_op op, dep;
	int s, m, k, n = 0;

	for (s = 0; s < p->nstages; s++) {
		for (m = 0; m < p->microbatches; m++) {
			for (k = 0; k < PW_NKINDS; k++) {
				op = (struct pw_op){ k, s, m };
				if (!trace_has(p, t, op))
					continue;
				dep = op;
				switch (k) {
				case PW_F:
					dep.stage = s - 1;
					n += s > 0 && trace_cross(p, t, op, dep);
					break;
				case PW_B:
				case PW_BW:
					dep.kind = PW_RELOAD;
					n += trace_cross(p, t, op, dep);
					if (s == p->nstages - 1)
						break;
					dep = (struct pw_op){ PW_B, s + 1, m };
					if (!trace_has(p, t, dep))
						dep.kind = PW_BW;
					n += trace_cross(p, t, op, dep);
					break;
				case PW_OFFLOAD:
					dep.kind = PW_F;
					n += trace_cross(p, t, op, dep);
					break;
				case PW_RELOAD:
					dep.kind = PW_OFFLOAD;
					n += trace_cross(p, t, op, dep);
					n += pw_schedule_anchor(sched, s, m,
					    &anchor) && trace_cross(p, t, op,
					    anchor.op);
					break;
				}
			}
		}
	}
	return n;
}

/* Every slice named as pw_view_op_label names it, with its args; every
 * kind one colour, no two kinds the same. */
static void
trace_check_names(const char *fam, const struct pw_problem *p, json_t *events)
{
	const char *cname[PW_NKINDS] = { NULL };
	char want[64];
	json_t *ev, *args;
	enum pw_kind kind;
	size_t i;
	int bad = 0, clash = 0, k, j, *chunks = pw_view_chunks(p);

	json_array_foreach(events, i, ev) {
		if (strcmp(json_string_value(json_object_get(ev, "ph")), "X") != 0)
			continue;
		args = json_object_get(ev, "args");
		if (pw_kind_parse(json_string_value(json_object_get(args,
		    "kind")), &kind) != PW_OK) {
			bad++;
			continue;
		}
		k = (int)json_integer_value(json_object_get(args, "stage"));
		snprintf(want, sizeof want, "%s s%d.c%d mb%d",
		    pw_kind_name(kind), k, chunks[k],
		    (int)json_integer_value(json_object_get(args, "mb")));
		bad += strcmp(want, json_string_value(json_object_get(ev,
		    "name"))) != 0 || json_integer_value(json_object_get(args,
		    "chunk")) != chunks[k];
		if (cname[kind] == NULL)
			cname[kind] = json_string_value(json_object_get(ev,
			    "cname"));
		bad += cname[kind] == NULL || strcmp(cname[kind],
		    json_string_value(json_object_get(ev, "cname"))) != 0;
	}
	for (k = 0; k < PW_NKINDS; k++)
		for (j = k + 1; j < PW_NKINDS; j++)
			clash += cname[k] != NULL && cname[j] != NULL &&
			    strcmp(cname[k], cname[j]) == 0;
	tap_int(bad, 0, "%s: slices named kind, stage.chunk, mb; one colour "
	    "a kind", fam);
	tap_int(clash, 0, "%s: no two kinds share a colour", fam);
	free(chunks);
}

/* The memory counters: per device its curve and its limit, in GiB. */
static void
trace_check_memory(const char *fam, const struct pw_problem *p,
    const struct pw_metrics *m, json_t *events)
{
	char mem[32], lim[32];
	json_t *ev;
	size_t i;
	int d, nmem = 0, nlim = 0, want = 0, bad = 0;

	for (d = 0; d < p->devices; d++) {
		want += m->device[d].ncurve;
		snprintf(mem, sizeof mem, "mem dev %d", d);
		snprintf(lim, sizeof lim, "limit dev %d", d);
		json_array_foreach(events, i, ev) {
			const char *name = json_string_value(json_object_get(ev,
			    "name"));
			double gib = json_number_value(json_object_get(
			    json_object_get(ev, "args"), "GiB"));

			if (strcmp(name, mem) == 0)
				nmem++;
			if (strcmp(name, lim) == 0) {
				nlim++;
				bad += fabs(gib * 1073741824.0 -
				    p->memory[d].limit) > 1e-3;
			}
		}
	}
	tap_int(nmem, want, "%s: a memory counter per curve point", fam);
	tap_int(nlim, 2 * p->devices, "%s: each limit a series of its own, "
	    "start to end", fam);
	tap_int(bad, 0, "%s: limits in GiB", fam);
}

/* The channels that carry a transfer, each a track of its own. */
static int
trace_nchannels(const struct pw_schedule *s)
{
	int c, n = 0;

	for (c = 0; c < s->nchannels; c++)
		n += s->channel[c].len > 0;
	return n;
}

/* One flow as "TID TS -> TID TS" (microseconds as the trace writes them). */
static void
trace_flow_line(char *buf, size_t len, int from_tid, double from, int to_tid,
    double to)
{
	snprintf(buf, len, "%d %.15g -> %d %.15g\n", from_tid, from, to_tid, to);
}

static int
trace_cmp_line(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* LINES (N of them, each TRACE_LINE long) sorted and joined; the caller
 * owns the string. */
#define TRACE_LINE	96
static char *
trace_join(char (*lines)[TRACE_LINE], size_t n)
{
	char *out = calloc(n * TRACE_LINE + 1, 1);
	size_t i;

	qsort(lines, n, TRACE_LINE, trace_cmp_line);
	for (i = 0; i < n; i++)
		strcat(out, lines[i]);
	return out;
}

/*
 * The anchor flows of FAM's trace event by event: one per anchored
 * reload, from its anchor's device track at the anchor's midpoint (the
 * reload's, where that comes first) to the reload's channel track at the
 * reload's midpoint.  Returns how many reloads came first.
 */
static size_t
trace_check_anchors(const char *fam, const struct pw_problem *p,
    const struct pw_schedule *sched, const struct pw_timing *t,
    json_t *flows)
{
	char (*want)[TRACE_LINE], (*got)[TRACE_LINE];
	struct pw_anchor anchor;
	struct pw_op op;
	double as, ae, rs, re, from, to;
	size_t nwant = 0, ngot = 0, nfirst = 0, i, cap = (size_t)p->nstages *
	    (size_t)p->microbatches;
	const char *key;
	json_t *list, *ev, *s_ev, *f_ev;
	char *w, *g;
	int stage, m;

	want = calloc(cap + 1, TRACE_LINE);
	got = calloc(json_object_size(flows) + 1, TRACE_LINE);
	for (stage = 0; stage < p->nstages; stage++) {
		for (m = 0; m < p->microbatches; m++) {
			op = (struct pw_op){ PW_RELOAD, stage, m };
			if (!pw_schedule_anchor(sched, stage, m, &anchor) ||
			    !pw_view_times(p, t, op, &rs, &re) ||
			    !pw_view_times(p, t, anchor.op, &as, &ae))
				continue;
			to = rs / 2 + re / 2;
			from = fmin(as / 2 + ae / 2, to);
			nfirst += from == to;
			trace_flow_line(want[nwant++], TRACE_LINE,
			    trace_track(p, anchor.op), from * 1e6,
			    trace_track(p, op), to * 1e6);
		}
	}
	json_object_foreach(flows, key, list) {
		if (strncmp(key, "anchor/", 7) != 0)
			continue;
		s_ev = f_ev = NULL;
		json_array_foreach(list, i, ev) {
			if (json_string_value(json_object_get(ev, "ph"))[0] ==
			    's')
				s_ev = ev;
			else
				f_ev = ev;
		}
		if (s_ev == NULL || f_ev == NULL)
			continue;
		trace_flow_line(got[ngot++], TRACE_LINE,
		    (int)json_integer_value(json_object_get(s_ev, "tid")),
		    trace_ts(s_ev), (int)json_integer_value(json_object_get(
		    f_ev, "tid")), trace_ts(f_ev));
	}
	w = trace_join(want, nwant);
	g = trace_join(got, ngot);
	tap_str(g, w, "%s: a flow from each of the %zu anchors to its reload",
	    fam, nwant);
	free(w);
	free(g);
	free(want);
	free(got);
	return nfirst;
}

/* Checks FAM's trace on BASE; returns how many of its anchored reloads
 * end their first half before their anchor's midpoint. */
static size_t
trace_family(const struct pw_family *fam, const struct pw_problem *base)
{
	struct trace_check c = { .nbad = 0 };
	struct pw_problem *p;
	struct pw_schedule *s;
	struct pw_timing *t;
	struct pw_metrics *m;
	struct pw_error err;
	json_error_t jerr;
	json_t *root;
	char *buf = NULL;
	size_t len = 0, i;
	size_t nfirst = 0;
	FILE *fp;
	int rc;

	if (!tap_int(pw_family_build(fam, base, &p, &s, &err), PW_OK,
	    "%s builds", fam->name))
		return 0;
	tap_int(pw_simulate(p, s, &t, &err), PW_OK, "%s simulates", fam->name);
	m = pw_metrics_compute(p, s, t);
	fp = open_memstream(&buf, &len);
	rc = pw_export_find("chrome")->write(fp, p, s, t, m, NULL, &err);
	fclose(fp);
	tap_int(rc, PW_OK, "%s: the trace is written", fam->name);
	root = json_loads(buf, 0, &jerr);
	c.events = json_object_get(root, "traceEvents");
	if (tap_ok(json_is_array(c.events), "%s: the trace parses: %s",
	    fam->name, root == NULL ? jerr.text : "an array of events")) {
		trace_index(&c);
		for (i = 0; i < json_array_size(c.events); i++)
			trace_check_event(&c, i, json_array_get(c.events, i));
		trace_check_flows(&c);
		tap_str(c.nbad == 0 ? "" : c.bad, "", "%s: every event keeps "
		    "the format's rules (%d broken)", fam->name, c.nbad);
		tap_int(c.slices, (long long)pw_schedule_nops(s),
		    "%s: a slice per op", fam->name);
		tap_int(c.ends, c.starts, "%s: as many flow ends as starts",
		    fam->name);
		tap_int(c.starts, trace_want_flows(p, s, t),
		    "%s: a flow per dependency across tracks", fam->name);
		tap_int(c.meta, 1 + 2 * (long long)(p->devices +
		    trace_nchannels(s)), "%s: the process and every track "
		    "named and sorted", fam->name);
		trace_check_names(fam->name, p, c.events);
		trace_check_memory(fam->name, p, m, c.events);
		if (trace_nchannels(s) > 0)
			nfirst = trace_check_anchors(fam->name, p, s, t,
			    c.flows);
	}
	json_decref(c.tracks);
	json_decref(c.flows);
	json_decref(root);
	free(buf);
	pw_metrics_free(m);
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(p);
	return nfirst;
}

int
main(void)
{
	struct pw_problem *base = pw_problem_default();
	size_t i;

	for (i = 0; i < pw_nfamilies; i++)
		trace_family(&pw_families[i], base);
	/* Reloads 20 times faster than the default link: many then end
	 * their first half before their anchor's midpoint, and their flow
	 * must still run forward from inside the anchor. */
	/* A family that splits the model again costs it from the origin. */
	base->link.h2d = base->origin->hardware.pcie_h2d = 1e12;
	base->link.latency = base->origin->hardware.pcie_latency = 0;
	tap_diag("po-f with reloads at 1e12 B/s and no latency");
	tap_ok(trace_family(pw_family_find("po-f"), base) > 0,
	    "po-f: some reloads there come before their anchor's midpoint");
	pw_problem_free(base);
	return tap_done();
}
