/*
 * test_measured.c - measured runs: the JSON section and the stream, the
 * validation's messages, the checker on a measured timeline, the
 * comparison with the prediction and the calibration, on runs built
 * here.
 *
 * The base case is test_two_device_problem (f = 1, b = 1.5, w = 0.5,
 * comm 0.5, 2 microbatches; device 0 runs F F BW BW, device 1 F BW F
 * BW), whose simulation ends at 10.  Its "run" is the same schedule
 * simulated on other costs, f = 2, b = w = 1 (BW 2), comm 0.25:
 *
 *   device 0   F00 [0,2] F01 [2,4] BW00 [6.5,8.5] BW01 [10.5,12.5]
 *   device 1   F10 [2.25,4.25] BW10 [4.25,6.25] F11 [6.25,8.25]
 *              BW11 [8.25,10.25]
 *
 * with two measured iterations: the first those durations, the second
 * each op 0.5 longer (steps 12.5 and 13.5).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipewright.h"
#include "plan.h"
#include "runtime.h"
#include "tap.h"
#include "testlib.h"

/* SCHED timed on Q as one measured run for P (P's devices and stages),
 * two iterations, the second EXTRA longer per op. */
static struct pw_measured *
run_of(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_problem *q, double extra)
{
	struct pw_measured *m;
	struct pw_measured_op *mo;
	struct pw_timing *t;
	struct pw_metrics *met;
	struct pw_error err = { "" };
	const struct pw_seq *seq;
	size_t k = 0, idx, from;
	int r, i, s, d, hop;

	if (pw_simulate(q, sched, &t, &err) != PW_OK)
		abort();
	met = pw_metrics_compute(q, sched, t);
	m = pw_measured_new(p->devices, pw_schedule_nops(sched), 2);
	m->backend = pw_xstrdup("cpu");
	m->transport = pw_xstrdup("local");
	m->host = pw_xstrdup("testhost");
	m->warmup = 1;
	m->shown = 0;
	m->step[0] = met->makespan;
	m->step[1] = met->makespan + 1;
	m->loss[0] = 0.5;
	m->loss[1] = 0.25;
	for (d = 0; d < p->devices; d++)
		m->peak[d] = 100 * (d + 1);
	m->workload.hidden = 64;
	m->workload.ffn = 256;
	m->workload.tokens = 32;
	m->workload.nstages = p->nstages;
	m->workload.layers = pw_xcalloc((size_t)p->nstages, sizeof (int));
	for (s = 0; s < p->nstages; s++)
		m->workload.layers[s] = s + 1;
	for (r = 0; r < sched->ndevices + sched->nchannels; r++) {
		seq = r < sched->ndevices ? &sched->device[r] :
		    &sched->channel[r - sched->ndevices];
		for (i = 0; i < seq->len; i++) {
			mo = &m->ops[k++];
			mo->op = seq->ops[i];
			s = mo->op.stage;
			idx = pw_op_index(q, mo->op);
			mo->device = p->stages[s].device;
			mo->start = t->start[idx];
			mo->end = t->end[idx];
			mo->durations[0] = mo->end - mo->start;
			mo->durations[1] = mo->end - mo->start + extra;
			/* An F waits for the stage before, a BW for the
			 * one after: the hop's stage is the lower. */
			hop = mo->op.kind == PW_F ? s - 1 : s;
			from = SIZE_MAX;
			if (mo->op.kind == PW_F && s > 0)
				from = pw_op_index(q, test_op(PW_F, s - 1,
				    mo->op.mb));
			else if (mo->op.kind == PW_BW && s + 1 < q->nstages)
				from = pw_op_index(q, test_op(PW_BW, s + 1,
				    mo->op.mb));
			if (from != SIZE_MAX && q->stages[hop].device !=
			    q->stages[hop + 1].device)
				mo->arrive = t->end[from] +
				    pw_problem_hop(q, hop);
		}
	}
	pw_metrics_free(met);
	pw_timing_free(t);
	return m;
}

/* The base case's other costs. */
static struct pw_problem *
run_costs(const struct pw_problem *p)
{
	struct pw_problem *q = pw_problem_copy(p);
	int s;

	for (s = 0; s < q->nstages; s++) {
		q->stages[s].f = 2;
		q->stages[s].b = 1;
		q->stages[s].w = 1;
		q->stages[s].comm = 0.25;
	}
	return q;
}

static bool
same_doubles(const double *a, const double *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))))
			return false;
	return true;
}

/* Whether A and B hold the same run, to the bit. */
static bool
same_run(const struct pw_measured *a, const struct pw_measured *b)
{
	const struct pw_measured_op *x, *y;
	size_t i, it = (size_t)a->iterations;

	if (strcmp(a->backend, b->backend) != 0 ||
	    strcmp(a->transport, b->transport) != 0 ||
	    strcmp(a->host, b->host) != 0 || a->emulated != b->emulated ||
	    a->iterations != b->iterations || a->warmup != b->warmup ||
	    a->shown != b->shown || a->devices != b->devices ||
	    a->nops != b->nops || !same_doubles(a->step, b->step, it) ||
	    !same_doubles(a->loss, b->loss, it) ||
	    !same_doubles(a->peak, b->peak, (size_t)a->devices) ||
	    a->workload.hidden != b->workload.hidden ||
	    a->workload.ffn != b->workload.ffn ||
	    a->workload.tokens != b->workload.tokens ||
	    a->workload.nstages != b->workload.nstages ||
	    a->workload.scaled != b->workload.scaled ||
	    memcmp(a->workload.layers, b->workload.layers,
	    (size_t)a->workload.nstages * sizeof (int)) != 0)
		return false;
	for (i = 0; i < a->nops; i++) {
		x = &a->ops[i];
		y = &b->ops[i];
		if (x->op.kind != y->op.kind || x->op.stage != y->op.stage ||
		    x->op.mb != y->op.mb || x->device != y->device ||
		    !same_doubles(&x->start, &y->start, 1) ||
		    !same_doubles(&x->end, &y->end, 1) ||
		    !same_doubles(&x->arrive, &y->arrive, 1) ||
		    !same_doubles(x->durations, y->durations, it))
			return false;
	}
	return true;
}

static void
test_basics(void)
{
	struct pw_measured *m = pw_measured_new(2, 3, 4), *c;
	struct pw_workload v;

	tap_ok(m->nops == 3 && m->devices == 2 && m->iterations == 4 &&
	    isnan(m->ops[2].arrive) && m->ops[2].durations[3] == 0 &&
	    m->backend == NULL, "new: sized, zero, arrive NAN, no strings");
	m->step[0] = 4;
	m->step[1] = 1;
	m->step[2] = 3;
	m->step[3] = 2;
	tap_near(pw_measured_step(m), 2.5, 0, "step: the mean of the middle "
	    "two of an even count");
	m->iterations = 3;
	tap_near(pw_measured_step(m), 3, 0, "step: the middle of an odd "
	    "count");
	m->iterations = 4;
	m->backend = pw_xstrdup("cpu");
	m->ops[1].durations[2] = 7;
	m->workload.nstages = 2;
	m->workload.layers = pw_xcalloc(2, sizeof (int));
	m->workload.layers[1] = 5;
	c = pw_measured_copy(m);
	m->ops[1].durations[2] = 0;
	m->workload.layers[1] = 0;
	tap_ok(c->ops[1].durations[2] == 7 && c->workload.layers[1] == 5 &&
	    strcmp(c->backend, "cpu") == 0 && c->step[3] == 2 &&
	    c->backend != m->backend, "copy: deep");
	pw_workload_copy(&v, &c->workload);
	pw_workload_clear(&c->workload);
	tap_ok(c->workload.layers == NULL && c->workload.nstages == 0 &&
	    v.layers[1] == 5 && v.nstages == 2, "workload: copy, clear");
	pw_workload_clear(&v);
	pw_measured_free(c);
	pw_measured_free(m);
}

/* Writes the base run to a file and to a stream, and reads both back. */
static void
test_round_trip(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m)
{
	char path[] = "/tmp/pw-test-measured.XXXXXX";
	struct pw_measured *back = NULL;
	struct pw_problem *rp = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_plan *plan = NULL;
	struct pw_timing *t;
	struct pw_error err = { "" };
	char *buf = NULL;
	size_t len = 0, nops = 0;
	FILE *fp;
	int fd;

	if (pw_simulate(p, sched, &t, &err) != PW_OK ||
	    (fd = mkstemp(path)) < 0)
		abort();
	close(fd);
	if (tap_int(pw_schedule_write_with(path, p, sched, t, NULL, 0, m, &err),
	    PW_OK, "write_measured: %s", err.msg) &&
	    tap_int(pw_measured_read(path, &back, &err), PW_OK,
	    "measured_read: %s", err.msg))
		tap_ok(back != NULL && same_run(m, back), "file: the run "
		    "reads back to the bit");
	pw_measured_free(back);
	back = NULL;
	if (tap_int(pw_file_read(path, &rp, &ops, &nops, NULL, &err), PW_OK,
	    "file_read skips the section: %s", err.msg))
		tap_ok(pw_problem_same(p, rp) && nops == 8, "file_read: the "
		    "problem and 8 ops");
	pw_problem_free(rp);
	free(ops);
	rp = NULL;
	ops = NULL;
	if (tap_int(pw_plan_read_run(path, &plan, &back, &err), PW_OK,
	    "plan_read_run: %s", err.msg))
		tap_ok(back != NULL && same_run(m, back) && plan != NULL &&
		    pw_problem_same(p, pw_plan_problem(plan)) &&
		    pw_schedule_nops(pw_plan_schedule(plan)) ==
		    pw_schedule_nops(sched),
		    "plan_read_run: the run and the plan, in one reading");
	pw_measured_free(back);
	pw_plan_free(plan);
	back = NULL;

	/* A schedule file with no run. */
	if (pw_schedule_write(path, p, sched, t, &err) != PW_OK)
		abort();
	tap_int(pw_measured_read(path, &back, &err), PW_OK, "measured_read "
	    "of a file without a run");
	tap_ok(back == NULL, "no run: NULL");
	tap_ok(pw_plan_read_run(path, &plan, &back, &err) == PW_OK &&
	    back == NULL && plan == NULL, "plan_read_run without a run: "
	    "neither");
	unlink(path);

	fp = open_memstream(&buf, &len);
	tap_int(pw_schedule_write_stream(fp, p, sched, t, m, &err), PW_OK,
	    "write_stream: %s", err.msg);
	fclose(fp);
	fp = fmemopen(buf, len, "r");
	if (tap_int(pw_file_read_stream(fp, "broadcast", &rp, &ops, &nops,
	    &back, &err), PW_OK, "read_stream: %s", err.msg))
		tap_ok(pw_problem_same(p, rp) && nops == 8 && back != NULL &&
		    same_run(m, back), "stream: problem, ops and run back");
	fclose(fp);
	pw_problem_free(rp);
	pw_measured_free(back);
	free(ops);

	/* measured.ops[3] is BW(0,1); its end made -1 by hand. */
	{
		char *at = strstr(buf, "\"measured\""), *end;
		int i;

		for (i = 0; i < 4 && at != NULL; i++)
			at = strstr(at + 1, "\"end\": ");
		end = at != NULL ? strchr(at, ',') : NULL;
		if (end == NULL)
			abort();
		memmove(at + 9, end, strlen(end) + 1);
		memcpy(at, "\"end\": -1", 9);
		fp = fmemopen(buf, strlen(buf), "r");
		tap_int(pw_file_read_stream(fp, "broadcast", &rp, &ops, &nops,
		    &back, &err), PW_ERR_INPUT, "a bad end is refused");
		tap_str(err.msg, "broadcast: measured.ops[3].end: must be a "
		    "non-negative number (got -1)", "its message");
		tap_ok(rp == NULL && ops == NULL && back == NULL, "nothing "
		    "left behind");
		fclose(fp);
		fp = fmemopen(buf, strlen(buf), "r");
		tap_int(pw_file_read_stream(fp, "broadcast", &rp, &ops, &nops,
		    NULL, &err), PW_OK, "a reader that wants no run skips "
		    "it: %s", err.msg);
		fclose(fp);
		pw_problem_free(rp);
		free(ops);
	}
	free(buf);
	pw_timing_free(t);
}

/* BUF with its first FROM replaced by TO; the caller frees it. */
static char *
edited(const char *buf, const char *from, const char *to)
{
	const char *at = strstr(buf, from);
	size_t head, n;
	char *out;

	if (at == NULL)
		abort();
	head = (size_t)(at - buf);
	n = strlen(buf) - strlen(from) + strlen(to);
	out = pw_xmalloc(n + 1);
	memcpy(out, buf, head);
	strcpy(out + head, to);
	strcat(out + head, at + strlen(from));
	return out;
}

/* The stream TEXT read back: refused with WANT's message, or (WANT
 * NULL) PW_OK with the run SAME. */
static void
read_text(const char *text, const char *want, const struct pw_measured *same,
    const char *what)
{
	struct pw_measured *back = NULL;
	struct pw_problem *rp = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_error err = { "" };
	size_t nops = 0;
	FILE *fp = fmemopen((void *)text, strlen(text), "r");

	if (want == NULL && tap_int(pw_file_read_stream(fp, "s", &rp, &ops,
	    &nops, &back, &err), PW_OK, "%s: read back: %s", what, err.msg))
		tap_ok(back != NULL && same_run(same, back), "%s: the run back "
		    "to the bit", what);
	if (want != NULL && tap_int(pw_file_read_stream(fp, "s", &rp, &ops,
	    &nops, &back, &err), PW_ERR_INPUT, "%s: refused", what))
		tap_str(err.msg, want, "%s: its message", what);
	fclose(fp);
	pw_problem_free(rp);
	pw_measured_free(back);
	free(ops);
}

/* A zero-size workload (what `launch --workload hidden=0` writes) reads
 * back; a file's stated iterations never size memory before its arrays
 * agree with them. */
static void
test_sizes(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m)
{
	struct pw_measured *zero = pw_measured_copy(m);
	struct pw_timing *t;
	struct pw_error err = { "" };
	char *buf = NULL, *text, *more;
	size_t len = 0;
	FILE *fp;

	tap_ok(pw_measured_new(2, 3, PW_MAX_ITERATIONS + 1) == NULL &&
	    pw_measured_new(-1, 3, 1) == NULL &&
	    pw_measured_new(2, 3, -1) == NULL, "new: NULL for sizes no run "
	    "has");
	if (pw_simulate(p, sched, &t, &err) != PW_OK)
		abort();
	zero->workload.hidden = zero->workload.ffn = zero->workload.tokens = 0;
	fp = open_memstream(&buf, &len);
	tap_int(pw_schedule_write_stream(fp, p, sched, t, zero, &err), PW_OK,
	    "zero sizes: written: %s", err.msg);
	fclose(fp);
	read_text(buf, NULL, zero, "zero sizes");

	text = edited(buf, "\"iterations\": 2", "\"iterations\": 400000000");
	read_text(text, "s: measured.iterations: must be at most 100000 (got "
	    "400000000)", NULL, "400,000,000 iterations");
	free(text);
	text = edited(buf, "\"iterations\": 2", "\"iterations\": 3");
	read_text(text, "s: measured.step: must have 3 entries, one per "
	    "iteration (got 2)", NULL, "3 iterations, 2 steps");
	more = edited(text, "\"step\": [12.5, ", "\"step\": [12.5, 1, ");
	free(text);
	text = edited(more, "\"loss\": [0.5, ", "\"loss\": [0.5, 1, ");
	free(more);
	read_text(text, "s: measured.ops[0].durations: must have 3 entries, "
	    "one per iteration (got 2)", NULL, "3 iterations, 2 durations");
	free(text);
	text = edited(buf, "\"hidden\": 0", "\"hidden\": 1048577");
	read_text(text, "s: measured.workload.hidden: must be from 0 to "
	    "1048576 (got 1048577)", NULL, "hidden 2^20 + 1");
	free(text);
	text = edited(buf, "\"layers\": [1, ", "\"layers\": [0, ");
	read_text(text, "s: measured.workload.layers[0]: must be from 1 to "
	    "4096 (got 0)", NULL, "a stage of no layers");
	free(text);
	free(buf);
	pw_timing_free(t);
	pw_measured_free(zero);
}

/* The op-index map; the timed ops of a run that does not match; a copy
 * keeps a missing string missing. */
static void
test_index(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m)
{
	size_t u = pw_op_universe(p), *at = pw_xcalloc(u, sizeof *at);
	size_t i, listed = 0, n = 1;
	struct pw_measured *bad = pw_measured_copy(m), *c;
	struct pw_timed_op *ops;
	bool ok = true;

	pw_measured_index(p, m, at);
	for (i = 0; i < m->nops; i++)
		ok = ok && at[pw_op_index(p, m->ops[i].op)] == i;
	for (i = 0; i < u; i++)
		listed += at[i] != SIZE_MAX;
	tap_ok(ok && listed == 8, "index: each op to its entry, 8 listed of "
	    "%zu", u);
	bad->ops[4].device = 0;
	ops = pw_measured_timed(p, sched, bad, &n);
	tap_ok(ops == NULL && n == 0, "timed: NULL for a run that does not "
	    "match");
	free(bad->host);
	bad->host = NULL;
	c = pw_measured_copy(bad);
	tap_ok(c->host == NULL && strcmp(c->backend, "cpu") == 0, "copy: a "
	    "missing host stays missing");
	pw_measured_free(c);
	pw_measured_free(bad);
	free(at);
}

/* The message pw_workload_validate gives W. */
static void
workload_refused(const struct pw_workload *w, int nstages, const char *want)
{
	struct pw_error err = { "" };

	if (tap_int(pw_workload_validate(w, nstages, "w", &err), PW_ERR_INPUT,
	    "workload refused: %s", want))
		tap_str(err.msg, want, "its message");
}

static void
test_workload_validate(void)
{
	int layers[2] = { 1, PW_WORKLOAD_MAX_LAYERS };
	struct pw_workload w = { 0, PW_WORKLOAD_MAX_DIM, 0, 2, layers, false };
	struct pw_error err = { "" };

	tap_int(pw_workload_validate(&w, 2, "w", &err), PW_OK, "workload: "
	    "0 and 2^20 sizes, 1 and 4096 layers: %s", err.msg);
	workload_refused(&w, 3, "w.layers: must have 3 entries, one per "
	    "stage (got 2)");
	w.tokens = -1;
	workload_refused(&w, 2, "w.tokens: must be from 0 to 1048576 (got "
	    "-1)");
	w.tokens = 0;
	w.ffn = PW_WORKLOAD_MAX_DIM + 1;
	workload_refused(&w, 2, "w.ffn: must be from 0 to 1048576 (got "
	    "1048577)");
	w.ffn = 0;
	layers[1] = PW_WORKLOAD_MAX_LAYERS + 1;
	workload_refused(&w, 2, "w.layers[1]: must be from 1 to 4096 (got "
	    "4097)");
	w.layers = NULL;
	workload_refused(&w, 2, "w.layers: must have 2 entries, one per "
	    "stage (got 0)");
}

/* The message pw_measured_validate gives M after EDIT. */
static void
refused(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m, void (*edit)(struct pw_measured *),
    const char *want)
{
	struct pw_measured *bad = pw_measured_copy(m);
	struct pw_error err = { "" };

	edit(bad);
	if (tap_int(pw_measured_validate(p, sched, bad, "t", &err),
	    PW_ERR_INPUT, "refused: %s", want))
		tap_str(err.msg, want, "its message");
	pw_measured_free(bad);
}

static void e_devices(struct pw_measured *m) { m->devices = 3; }
static void
e_nops(struct pw_measured *m)
{
	free(m->ops[7].durations);
	m->nops = 7;
}

static void e_twice(struct pw_measured *m) { m->ops[1].op = m->ops[0].op; }
static void e_device(struct pw_measured *m) { m->ops[4].device = 0; }
static void e_start(struct pw_measured *m) { m->ops[3].start = -1; }
static void e_end(struct pw_measured *m) { m->ops[3].end = 1; }
static void e_shown(struct pw_measured *m) { m->shown = 2; }
static void e_nan(struct pw_measured *m) { m->ops[2].durations[1] = NAN; }
static void e_arrive(struct pw_measured *m) { m->ops[4].arrive = -0.5; }
static void e_foreign(struct pw_measured *m) { m->ops[0].op.kind = PW_B; }
static void e_layers(struct pw_measured *m) { m->workload.nstages = 1; }
static void e_host(struct pw_measured *m) { free(m->host); m->host = NULL; }
static void e_step(struct pw_measured *m) { m->step[1] = INFINITY; }
static void e_duration(struct pw_measured *m) { m->ops[5].durations[0] = 5; }
static void e_late(struct pw_measured *m) { m->ops[4].arrive = 1e300; }
static void e_median(struct pw_measured *m) { m->step[0] = m->step[1] + 1; }
static void e_last(struct pw_measured *m) { m->step[0] -= 0.5; }
static void e_long(struct pw_measured *m) { m->ops[2].durations[1] = 14; }
static void e_short(struct pw_measured *m) { m->step[0] = 0.5; }
static void e_swap(struct pw_measured *m) { m->shown = 1; }
static void
e_backend(struct pw_measured *m)
{
	free(m->backend);
	m->backend = pw_xstrdup("tpu");
}
static void
e_transport(struct pw_measured *m)
{
	free(m->transport);
	m->transport = pw_xstrdup("mpi\x1b[2J");
}

static void
test_validate(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m)
{
	struct pw_error err = { "" };

	tap_int(pw_measured_validate(p, sched, m, "t", &err), PW_OK,
	    "the base run is valid");
	tap_int(pw_measured_validate(p, NULL, m, "t", &err), PW_OK,
	    "and against the problem alone");
	refused(p, sched, m, e_devices, "t: measured.peak: must have 2 "
	    "entries, one per device (got 3)");
	refused(p, sched, m, e_nops, "t: measured.ops: must have 8 entries, "
	    "one per op of the schedule (got 7)");
	refused(p, sched, m, e_twice, "t: measured.ops[1].op: F(0,0) is "
	    "listed twice (first at measured.ops[0])");
	refused(p, sched, m, e_device, "t: measured.ops[4].device: must be 1, "
	    "the device of stage 1 (got 0)");
	refused(p, sched, m, e_start, "t: measured.ops[3].start: must be a "
	    "non-negative number (got -1)");
	refused(p, sched, m, e_end, "t: measured.ops[3].end: must be at least "
	    "its start, 10.5 (got 1)");
	refused(p, sched, m, e_shown, "t: measured.shown: must be an "
	    "iteration from 0 to 1 (got 2)");
	refused(p, sched, m, e_nan, "t: measured.ops[2].durations[1]: must "
	    "be a non-negative number (got nan)");
	refused(p, sched, m, e_arrive, "t: measured.ops[4].arrive: must be a "
	    "non-negative number (got -0.5)");
	refused(p, sched, m, e_foreign, "t: measured.ops[0].op: B(0,0) is not "
	    "an op of the schedule");
	refused(p, sched, m, e_layers, "t: measured.workload.layers: must "
	    "have 2 entries, one per stage (got 1)");
	refused(p, sched, m, e_host, "t: measured.host: missing");
	refused(p, sched, m, e_step, "t: measured.step[1]: must be a "
	    "non-negative number (got inf)");
	refused(p, sched, m, e_duration, "t: measured.ops[5].durations[0]: "
	    "must be its end less its start in the shown iteration, 2 (got "
	    "5)");
	refused(p, sched, m, e_late, "t: measured.ops[4].arrive: must be at "
	    "most its end, 4.25 (got 1e+300)");
	refused(p, sched, m, e_median, "t: measured.shown: must be an "
	    "iteration of the median step, 13.5 (iteration 0's step is 14.5)");
	refused(p, sched, m, e_last, "t: measured.step[0]: must be when the "
	    "shown iteration's last op ended, 12.5 (got 12)");
	refused(p, sched, m, e_long, "t: measured.ops[2].durations[1]: must "
	    "be at most iteration 1's step, 13.5 (got 14)");
	/* Every op longer than its iteration: the step is what is wrong. */
	refused(p, sched, m, e_short, "t: measured.step[0]: must be at least "
	    "iteration 0's longest op, 2 (got 0.5; 8 ops are longer)");
	/* The shown iteration moved: the field at fault is shown, not the
	 * durations that no longer match it. */
	refused(p, sched, m, e_swap, "t: measured.shown: must be an "
	    "iteration of the median step, 12.5 (iteration 1's step is "
	    "13.5)");
	/* Words a report prints: the format's own, nothing a terminal
	 * would take for an escape sequence. */
	refused(p, sched, m, e_backend, "t: measured.backend: must be \"cpu\" "
	    "or \"cuda\" (got \"tpu\")");
	refused(p, sched, m, e_transport, "t: measured.transport: must be "
	    "\"local\" or \"mpi\" (got \"mpi\\x1b[2J\")");
}

/* The one violation pw_check_measured finds in M's timeline after
 * moving op I to [START, END]. */
static void
one_violation(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m, size_t i, double start, double end,
    enum pw_violation_kind kind, const char *what, const char *want)
{
	struct pw_measured *bad = pw_measured_copy(m);
	struct pw_violations v;
	struct pw_timed_op *ops;
	size_t n;

	bad->ops[i].start = start;
	bad->ops[i].end = end;
	ops = pw_measured_timed(p, sched, bad, &n);
	if (tap_int(pw_check_measured(p, ops, n, &v), 1, "%s: one violation",
	    what))
		if (tap_ok(v.item[0].kind == kind, "%s: its kind", what))
			tap_str(v.msg[0], want, "%s: its line", what);
	pw_violations_free(&v);
	free(ops);
	pw_measured_free(bad);
}

static void
test_check(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m)
{
	struct pw_violations v;
	struct pw_timed_op *ops;
	size_t n;

	ops = pw_measured_timed(p, sched, m, &n);
	tap_int((long long)n, 8, "timed: every op");
	tap_ok(ops[0].op.kind == PW_F && ops[0].start == 0 &&
	    ops[7].op.kind == PW_BW && ops[7].op.stage == 0 &&
	    ops[7].end == 12.5, "timed: sorted by start");
	if (!tap_int(pw_check_measured(p, ops, n, &v), 0, "check_measured "
	    "accepts the run's own durations and comm"))
		tap_diag("%s", v.msg[0]);
	pw_violations_free(&v);
	tap_ok(pw_check(p, ops, n, &v) > 0, "check refuses the same timeline "
	    "(durations not the problem's)");
	pw_violations_free(&v);
	free(ops);
	/* ops[1] is F(0,1) of device 0, ops[4] F(1,0). */
	one_violation(p, sched, m, 1, 1.5, 3.5, PW_VIOL_OVERLAP,
	    "F(0,1) over F(0,0)", "device 0 runs F(0,0) [0, 2] s and F(0,1) "
	    "[1.5, 3.5] s at once");
	one_violation(p, sched, m, 4, 1.5, 3.5, PW_VIOL_DEPENDENCY,
	    "F(1,0) before F(0,0) ends", "F(1,0) starts at 1.5 s before F(0,0) "
	    "ends at 2 s");
}

/* One device, one stage, two microbatches, activation (0,0) offloaded
 * and reloaded (anchored at B(0,1)); the run's costs are other. */
static void
test_check_transfers(void)
{
	struct pw_problem *p = pw_problem_new(1, 1, 2), *q;
	struct pw_schedule *sched;
	struct pw_measured *m;
	struct pw_timed_op *ops;
	struct pw_violations v;
	size_t n, i;

	p->stages[0] = (struct pw_stage){ .f = 1, .b = 1, .w = 1, .act = 2,
	    .hold = 1, .offload = 1 };
	pw_problem_set_link(p, 1, 1, 0, true);
	sched = test_offload_schedule(p, true);
	q = pw_problem_copy(p);
	q->stages[0].f = 1.5;
	q->stages[0].b = 2;
	q->link.d2h = 0.5;
	m = run_of(p, sched, q, 0);
	ops = pw_measured_timed(p, sched, m, &n);
	if (!tap_int(pw_check_measured(p, ops, n, &v), 0, "transfers: "
	    "accepted at the run's own speed"))
		tap_diag("%s", v.msg[0]);
	pw_violations_free(&v);
	for (i = 0; i < n && ops[i].op.kind != PW_RELOAD; i++)
		;
	tap_ok(i < n && ops[i].has_anchor && ops[i].bytes == 1, "timed: the "
	    "reload's anchor and bytes");
	free(ops);
	for (i = 0; m->ops[i].op.kind != PW_RELOAD; i++)
		;
	/* B(0,0) starts at 6: the reload must end by then. */
	one_violation(p, sched, m, i, 6.5, 7.5, PW_VIOL_DEPENDENCY,
	    "RELOAD(0,0) after its backward starts", "B(0,0) starts at 6 s "
	    "before RELOAD(0,0) ends at 7.5 s");
	pw_measured_free(m);
	pw_schedule_free(sched);
	pw_problem_free(q);
	pw_problem_free(p);
}

static void
test_compare(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_measured *m)
{
	static const struct pw_op order[] = {
		{ PW_F, 0, 0 }, { PW_F, 0, 1 }, { PW_F, 1, 0 }, { PW_F, 1, 1 },
		{ PW_BW, 0, 0 }, { PW_BW, 0, 1 }, { PW_BW, 1, 0 },
		{ PW_BW, 1, 1 },
	};
	struct pw_measured_cmp c;
	struct pw_timing *t;
	struct pw_metrics *met;
	struct pw_error err = { "" };
	size_t i;
	bool in_order = true;

	if (pw_simulate(p, sched, &t, &err) != PW_OK)
		abort();
	met = pw_metrics_compute(p, sched, t);
	if (!tap_int(pw_measured_compare(p, sched, t, met, m, &c, &err),
	    PW_OK, "compare: %s", err.msg))
		goto out;
	tap_near(c.step_predicted, 10, 0, "compare: predicted step");
	tap_near(c.step_measured, 13, 0, "compare: measured step, the "
	    "median of 12.5 and 13.5");
	tap_ok(c.devices == 2 && c.busy_predicted[0] == 6 &&
	    c.busy_predicted[1] == 6 && c.busy_measured[0] == 8 &&
	    c.busy_measured[1] == 8, "compare: busy 6 predicted, 8 measured");
	tap_ok(c.peak_predicted[0] == 0 && c.peak_measured[0] == 100 &&
	    c.peak_measured[1] == 200, "compare: peaks");
	tap_int((long long)c.nops, 8, "compare: every op");
	for (i = 0; i < 8; i++)
		in_order &= c.ops[i].op.kind == order[i].kind &&
		    c.ops[i].op.stage == order[i].stage &&
		    c.ops[i].op.mb == order[i].mb;
	tap_ok(in_order, "compare: the Fs (1 s off) first, then by op");
	tap_ok(c.ops[0].predicted == 1 && c.ops[0].measured == 2 &&
	    c.ops[2].predicted_start == 1.5 && c.ops[2].measured_start ==
	    2.25 && c.ops[4].predicted == 2 && c.ops[4].measured == 2,
	    "compare: durations and starts");
	tap_near(c.mean_abs_error, 0.5, 0, "compare: mean absolute relative "
	    "error (4 ops 100%% off, 4 exact)");
	pw_measured_cmp_free(&c);
	{
		struct pw_measured *bad = pw_measured_copy(m);

		bad->ops[1].op = bad->ops[0].op;
		tap_int(pw_measured_compare(p, sched, t, met, bad, &c, &err),
		    PW_ERR_INPUT, "compare: a run of another schedule");
		tap_str(err.msg, "measured run: measured.ops[1].op: F(0,0) is "
		    "listed twice (first at measured.ops[0])", "its message");
		pw_measured_cmp_free(&c);
		pw_measured_free(bad);
	}
out:
	pw_metrics_free(met);
	pw_timing_free(t);
}

static void
test_timing(const struct pw_problem *p, const struct pw_measured *m)
{
	struct pw_timing *t;
	struct pw_error err = { "" };
	size_t idx = pw_op_index(p, test_op(PW_BW, 1, 0));

	t = pw_measured_timing(p, m, &err);
	if (!tap_ok(t != NULL, "timing: %s", t == NULL ? err.msg : "built"))
		return;
	tap_ok(t->start[idx] == 4.25 && t->end[idx] == 6.25 &&
	    !pw_timing_has(t, pw_op_index(p, test_op(PW_B, 1, 0))) &&
	    t->bind[idx].pred == PW_NO_BIND, "timing: the shown iteration, "
	    "no binds");
	pw_timing_free(t);
}

/*
 * Calibration of the base run: per stage, F's 4 samples are 2, 2, 2.5,
 * 2.5 (f = 2.25) and BW's too (b + w = 2.25, split 3:1 as the problem's
 * 1.5 and 0.5: b = 1.6875, w = 0.5625); the hops wait 0.25 (stage 0's
 * comm); stage 1, the last, keeps its 0.5.  Every sample is 0.25 from
 * its fit: residual 0.25, relative 0.25 / 2.25 = 1/9.
 */
static void
test_calibrate(const struct pw_problem *p, const struct pw_measured *m)
{
	const struct pw_measured *runs[] = { m };
	struct pw_calibration fit;
	struct pw_problem *out;
	struct pw_error err = { "" };

	if (!tap_int(pw_calibrate(p, runs, 1, &out, &fit, &err), PW_OK,
	    "calibrate: %s", err.msg))
		return;
	tap_ok(fit.nstages == 2 && fit.runs == 1 && fit.samples[0] == 8 &&
	    fit.samples[1] == 8, "calibrate: 8 samples a stage");
	tap_ok(fit.f[0] == 2.25 && fit.f[1] == 2.25 && out->stages[0].f ==
	    2.25, "calibrate: f = 2.25");
	tap_ok(fit.b[0] == 1.6875 && fit.w[0] == 0.5625 &&
	    out->stages[1].b == 1.6875 && out->stages[1].w == 0.5625,
	    "calibrate: a fused backward split as the problem's b and w");
	tap_ok(fit.comm[0] == 0.25 && out->stages[0].comm == 0.25 &&
	    fit.comm[1] == 0.5, "calibrate: comm 0.25, the last stage's kept");
	tap_near(fit.residual, 0.25, 1e-15, "calibrate: residual");
	tap_near(fit.relative, 1.0 / 9, 1e-15, "calibrate: relative "
	    "residual");
	tap_ok(!fit.has_link && out->origin == NULL, "calibrate: no link, no "
	    "origin");
	pw_calibration_free(&fit);
	pw_problem_free(out);
}

/* A run of 2 devices, one stage each, one microbatch, split backward,
 * both activations offloaded: OFFLOAD D2H[0..1] and RELOAD H2D[0..1]
 * seconds, stage s moving BYTES[s]; every compute op 1 s. */
static struct pw_measured *
link_run(struct pw_problem **pp, const double bytes[2], const double d2h[2],
    const double h2d[2])
{
	static const enum pw_kind kinds[] = { PW_F, PW_B, PW_W, PW_OFFLOAD,
	    PW_RELOAD };
	struct pw_problem *p = test_problem_unit(2, 1, 0, INFINITY);
	struct pw_measured *m;
	struct pw_measured_op *mo;
	size_t k, n = 0;
	int s;

	pw_problem_set_link(p, 100, 100, 0.25, true);
	m = pw_measured_new(2, 10, 1);
	m->backend = pw_xstrdup("cpu");
	m->transport = pw_xstrdup("local");
	m->host = pw_xstrdup("h");
	m->workload = (struct pw_workload){ 8, 8, 8, 2, NULL, false };
	m->workload.layers = pw_xcalloc(2, sizeof (int));
	for (s = 0; s < 2; s++) {
		p->stages[s].act = p->stages[s].offload = bytes[s];
		p->stages[s].hold = 0;
		m->workload.layers[s] = 1;
		for (k = 0; k < 5; k++) {
			mo = &m->ops[n++];
			mo->op = test_op(kinds[k], s, 0);
			mo->device = s;
			mo->durations[0] = kinds[k] == PW_OFFLOAD ? d2h[s] :
			    kinds[k] == PW_RELOAD ? h2d[s] : 1;
			mo->end = mo->durations[0];
			m->step[0] = fmax(m->step[0], mo->end);
		}
	}
	*pp = p;
	return m;
}

/*
 * The link: stages moving 1000 and 3000 bytes, offloads taking 1.5 and
 * 3.5 s, reloads 1 and 2 s, are exactly latency 0.5 with d2h 1000 and
 * h2d 2000 bytes/s.  With 2000 bytes each, latency and bandwidth cannot
 * be told apart: latency 0, offloads of 2 and 3 s give d2h = 4000 / 5 =
 * 800, reloads of 1 s h2d 2000; the offloads are 0.5 off their fit,
 * so the link's residual is sqrt((0.25 + 0.25) / 4), and over all 10 op
 * durations sqrt(0.5 / 10).  Offloads of 1000 and 3000 bytes taking 3.5
 * and 1.5 s fit latency 2.5 with a d2h time falling with the bytes:
 * noise, so through the origin, d2h = 1e7 / 8000 = 1250 and h2d =
 * 1e7 / 7000.
 */
static void
test_calibrate_link(void)
{
	static const double sep[2] = { 1000, 3000 }, same[2] = { 2000, 2000 };
	static const double off[2] = { 1.5, 3.5 }, rel[2] = { 1, 2 };
	static const double off2[2] = { 2, 3 }, rel2[2] = { 1, 1 };
	static const double falling[2] = { 3.5, 1.5 };
	struct pw_calibration fit;
	struct pw_problem *p, *out;
	struct pw_measured *m;
	struct pw_error err = { "" };
	const struct pw_measured *runs[1];

	m = link_run(&p, sep, off, rel);
	runs[0] = m;
	if (tap_int(pw_calibrate(p, runs, 1, &out, &fit, &err), PW_OK,
	    "link: %s", err.msg)) {
		tap_ok(fit.has_link && fit.link_fit == PW_LINK_FIT_APART,
		    "link: latency apart");
		tap_near(fit.latency, 0.5, 1e-12, "link: latency 0.5");
		tap_near(fit.d2h, 1000, 1e-9, "link: d2h 1000");
		tap_near(fit.h2d, 2000, 1e-9, "link: h2d 2000");
		tap_near(fit.link_residual, 0, 1e-12, "link: exact fit");
		tap_near(fit.residual, 0, 1e-12, "link: residual 0");
		tap_ok(out->link.latency == fit.latency && out->link.d2h ==
		    fit.d2h && out->link.h2d == fit.h2d, "link: in the "
		    "calibrated problem");
		pw_calibration_free(&fit);
		pw_problem_free(out);
	}
	pw_measured_free(m);
	pw_problem_free(p);

	m = link_run(&p, same, off2, rel2);
	runs[0] = m;
	if (tap_int(pw_calibrate(p, runs, 1, &out, &fit, &err), PW_OK,
	    "link, equal bytes: %s", err.msg)) {
		tap_ok(fit.has_link && fit.link_fit == PW_LINK_FIT_SAME_BYTES &&
		    fit.latency == 0, "link, equal bytes: none apart, "
		    "latency 0");
		tap_near(fit.d2h, 800, 1e-9, "link, equal bytes: d2h 800");
		tap_near(fit.h2d, 2000, 1e-9, "link, equal bytes: h2d 2000");
		tap_near(fit.link_residual, sqrt(0.125), 1e-15, "link, equal "
		    "bytes: link residual");
		tap_near(fit.residual, sqrt(0.05), 1e-15, "link, equal bytes: "
		    "residual over every op");
		pw_calibration_free(&fit);
		pw_problem_free(out);
	}
	pw_measured_free(m);
	pw_problem_free(p);

	m = link_run(&p, sep, falling, rel);
	runs[0] = m;
	if (tap_int(pw_calibrate(p, runs, 1, &out, &fit, &err), PW_OK,
	    "link, noise: %s", err.msg)) {
		tap_ok(fit.has_link && fit.link_fit == PW_LINK_FIT_NOISE &&
		    fit.latency == 0, "link, noise: none apart, latency 0");
		tap_near(fit.d2h, 1250, 1e-9, "link, noise: d2h 1250");
		tap_near(fit.h2d, 1e7 / 7000, 1e-9, "link, noise: h2d "
		    "1e7 / 7000");
		pw_calibration_free(&fit);
		pw_problem_free(out);
	}
	pw_measured_free(m);
	pw_problem_free(p);
}

static void
test_calibrate_refusals(const struct pw_problem *p, const struct pw_measured *m)
{
	struct pw_measured *bad = pw_measured_copy(m);
	const struct pw_measured *runs[] = { m, bad };
	struct pw_calibration fit;
	struct pw_problem *out;
	struct pw_error err = { "" };

	tap_int(pw_calibrate(p, runs, 0, &out, &fit, &err), PW_ERR_INPUT,
	    "calibrate: no run");
	tap_str(err.msg, "calibrate: no measured run to fit", "its message");
	bad->ops[4].device = 0;
	tap_int(pw_calibrate(p, runs, 2, &out, &fit, &err), PW_ERR_INPUT,
	    "calibrate: a run that does not match");
	tap_str(err.msg, "measured run 2: measured.ops[4].device: must be 1, "
	    "the device of stage 1 (got 0)", "its message");
	tap_ok(out == NULL && fit.f == NULL, "calibrate: nothing left");
	bad->ops[4].device = 1;
	bad->nops = 4;	/* device 0's ops only: stage 1 has no sample */
	tap_int(pw_calibrate(p, runs + 1, 1, &out, &fit, &err), PW_ERR_INPUT,
	    "calibrate: a stage without samples");
	tap_str(err.msg, "calibrate: stage 1 has no measured F", "its message");
	bad->nops = 8;
	pw_measured_free(bad);
}

int
main(void)
{
	struct pw_problem *p = test_two_device_problem(), *q = run_costs(p);
	struct pw_schedule *sched = test_two_device_schedule(p);
	struct pw_measured *m = run_of(p, sched, q, 0.5);

	test_basics();
	test_round_trip(p, sched, m);
	test_sizes(p, sched, m);
	test_index(p, sched, m);
	test_workload_validate();
	test_validate(p, sched, m);
	test_check(p, sched, m);
	test_check_transfers();
	test_compare(p, sched, m);
	test_timing(p, m);
	test_calibrate(p, m);
	test_calibrate_link();
	test_calibrate_refusals(p, m);
	pw_measured_free(m);
	pw_schedule_free(sched);
	pw_problem_free(q);
	pw_problem_free(p);
	return tap_done();
}
