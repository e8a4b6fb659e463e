/* testlib.c - shared builders and verdicts of the tests (testlib.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "tap.h"
#include "testlib.h"

const struct pw_model test_tiny_model = {
	.name = "tiny", .layers = 4, .hidden = 16, .heads = 2, .kv_heads = 0,
	.ffn = 0, .seq = 8, .vocab = 100, .micro_batch = 2,
	.flash_attention = false, .recompute = PW_RECOMPUTE_NONE,
};
const struct pw_hardware test_toy_hw = {
	.name = "toy", .peak_flops = 1048576, .efficiency = 0.5, .memory = 1e9,
	.pcie_d2h = 64, .pcie_h2d = 32, .pcie_latency = 0.125,
	.p2p_bandwidth = 1024, .p2p_latency = 0.25,
};

struct pw_op
test_op(enum pw_kind kind, int stage, int mb)
{
	struct pw_op o = { kind, stage, mb };

	return o;
}

char *
test_read_file(const char *name)
{
	FILE *fp = fopen(name, "r");
	char *buf;
	long len;

	if (fp == NULL)
		return NULL;
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	buf = pw_xcalloc((size_t)len + 1, 1);
	if (fread(buf, 1, (size_t)len, fp) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

struct pw_problem *
test_problem_unit(int p, int m, double comm, double limit)
{
	struct pw_problem *prob = pw_problem_new(p, p, m);
	struct pw_error err;
	int s;

	if (pw_problem_place_loop(prob, &err) != PW_OK)
		abort();
	for (s = 0; s < p; s++) {
		prob->stages[s].f = prob->stages[s].b = prob->stages[s].w = 1;
		prob->stages[s].act = 1;
		prob->stages[s].hold = 0.5;
		prob->memory[s].limit = limit;
	}
	pw_problem_set_comm(prob, comm);
	return prob;
}

/* A number in [0, 1) from the splitmix64 sequence of *X. */
static double
test_unit_random(uint64_t *x)
{
	return (double)(pw_splitmix64(x) >> 11) * 0x1.0p-53;
}

struct pw_problem *
test_problem_uneven(int p, int m, double limit)
{
	struct pw_problem *prob = test_problem_unit(p, m, 0.02, limit);
	uint64_t x = 1000 * (uint64_t)p + (uint64_t)m;
	double c;
	int s;

	for (s = 0; s < p; s++) {
		c = 1 + 0.2 * (2 * test_unit_random(&x) - 1);
		prob->stages[s].f = c;
		prob->stages[s].b = c * (1 + 0.3 * test_unit_random(&x));
		prob->stages[s].w = c * (0.5 + 0.5 * test_unit_random(&x));
	}
	return prob;
}

struct pw_problem *
test_problem_uniform(int p, int v, int m, enum pw_placement place,
    const struct pw_stage *stage)
{
	struct pw_problem *prob;
	struct pw_error err;
	int s, rc;

	prob = pw_problem_new(p, p * v, m);
	for (s = 0; s < prob->nstages; s++)
		prob->stages[s] = *stage;
	if (place == PW_PLACE_V)
		rc = pw_problem_place_v(prob, &err);
	else
		rc = pw_problem_place_loop(prob, &err);
	if (rc != PW_OK)
		abort();
	pw_problem_set_comm(prob, stage->comm);
	return prob;
}

struct pw_stage
test_zb_stage(const struct test_zb_case *c, int v)
{
	struct pw_stage st = { .f = c->f / v, .b = c->b / v, .w = c->w / v,
	    .act = c->act / v, .hold = c->hold / v, .comm = c->comm };

	return st;
}

struct pw_problem *
test_two_device_problem(void)
{
	static const struct pw_stage st = { .f = 1, .b = 1.5, .w = 0.5,
	    .comm = 0.5 };

	return test_problem_uniform(2, 1, 2, PW_PLACE_LOOP, &st);
}

struct pw_schedule *
test_two_device_schedule(const struct pw_problem *p)
{
	static const struct pw_op order[] = {
		{ PW_F, 0, 0 }, { PW_F, 0, 1 }, { PW_BW, 0, 0 }, { PW_BW, 0, 1 },
		{ PW_F, 1, 0 }, { PW_BW, 1, 0 }, { PW_F, 1, 1 }, { PW_BW, 1, 1 },
	};
	struct pw_schedule *s = pw_schedule_new(p);
	size_t i;

	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		pw_schedule_append(s, p, order[i]);
	return s;
}

struct pw_schedule *
test_offload_schedule(const struct pw_problem *p, bool anchored)
{
	static const struct pw_op order[] = {
		{ PW_F, 0, 0 }, { PW_F, 0, 1 }, { PW_B, 0, 1 }, { PW_W, 0, 1 },
		{ PW_B, 0, 0 }, { PW_W, 0, 0 }, { PW_OFFLOAD, 0, 0 },
		{ PW_RELOAD, 0, 0 },
	};
	struct pw_schedule *s = pw_schedule_new(p);
	size_t i;

	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		pw_schedule_append(s, p, order[i]);
	if (anchored)
		pw_schedule_set_anchor(s, 0, 0, (struct pw_anchor){
		    test_op(PW_B, 0, 1), false });
	return s;
}

char *
test_order(const struct pw_seq *seq)
{
	char *s, name[64];
	size_t len = 0, cap = (size_t)seq->len * sizeof name + 1;
	int i;

	s = pw_xmalloc(cap);
	s[0] = '\0';
	for (i = 0; i < seq->len; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%s",
		    i == 0 ? "" : " ", pw_op_name(name, sizeof name,
		    seq->ops[i]));
	return s;
}

const struct pw_family *
test_registered(const char *name)
{
	const struct pw_family *fam = pw_family_find(name);

	if (!tap_ok(fam != NULL, "registry has %s", name))
		return NULL;
	tap_ok(fam->summary != NULL && fam->summary[0] != '\0' &&
	    strchr(fam->summary, '\n') == NULL, "%s: one-line summary", name);
	return fam;
}

struct pw_schedule *
test_simulate(const char *family, const struct pw_problem *prob,
    const char *what, struct pw_timing **timing)
{
	const struct pw_family *fam = pw_family_find(family);
	struct pw_schedule *sched = NULL;
	struct pw_error err;

	*timing = NULL;
	if (!tap_ok(fam != NULL, "family %s is registered", family))
		return NULL;
	if (!tap_ok(fam->build(prob, &sched, &err) == PW_OK &&
	    pw_simulate(prob, sched, timing, &err) == PW_OK,
	    "%s: %s builds and simulates", what, family)) {
		tap_diag("%s", err.msg);
		pw_schedule_free(sched);
		*timing = NULL;
		return NULL;
	}
	return sched;
}

char *
test_compute_only(const struct pw_schedule *sched, int nops)
{
	int d, c;

	for (d = 0; d < sched->ndevices; d++)
		if (sched->device[d].len != nops)
			return pw_xasprintf("device %d has %d ops", d,
			    sched->device[d].len);
	for (c = 0; c < sched->nchannels; c++)
		if (sched->channel[c].len != 0)
			return pw_xasprintf("transfers on channel %d", c);
	return NULL;
}

char *
test_checker(const struct pw_problem *prob, const struct pw_schedule *sched,
    const struct pw_timing *timing)
{
	struct pw_timed_op *ops;
	struct pw_violations v = { 0 };
	char *fail = NULL;
	size_t n;
	int bad;

	ops = pw_timed_ops(prob, sched, timing, &n);
	if ((bad = pw_check(prob, ops, n, &v)) != 0)
		fail = pw_xasprintf("checker: %d violations, first: %s", bad,
		    v.msg[0]);
	pw_violations_free(&v);
	free(ops);
	return fail;
}

struct pw_metrics *
test_valid_schedule(const struct pw_problem *prob,
    const struct pw_schedule *sched, struct pw_timing **timing,
    const char *what)
{
	struct pw_metrics *m;
	struct pw_timing *t;
	struct pw_error err;
	char *msg;
	bool within = true;
	int d;

	if (!tap_ok(pw_simulate(prob, sched, &t, &err) == PW_OK,
	    "%s: simulates", what))
		return NULL;
	msg = test_checker(prob, sched, t);
	tap_ok(msg == NULL, "%s: passes the checker%s%s", what, msg != NULL ?
	    ": " : "", msg != NULL ? msg : "");
	free(msg);
	m = pw_metrics_compute(prob, sched, t);
	for (d = 0; d < prob->devices; d++)
		within = within && m->device[d].peak <= prob->memory[d].limit;
	tap_ok(within, "%s: every device within its limit", what);
	if (timing != NULL)
		*timing = t;
	else
		pw_timing_free(t);
	return m;
}

void
test_refusal(const char *family, const struct pw_problem *prob,
    const char *want)
{
	const struct pw_family *fam = pw_family_find(family);
	struct pw_schedule *sched = NULL;
	struct pw_error err;

	if (!tap_ok(fam != NULL, "family %s is registered", family))
		return;
	tap_int(fam->build(prob, &sched, &err), PW_ERR_NOT_APPLICABLE,
	    "%s refuses %d stages on %d devices, %d microbatches", family,
	    prob->nstages, prob->devices, prob->microbatches);
	tap_ok(sched == NULL, "%s: no schedule when refused", family);
	tap_str(err.msg, want, "%s: the reason", family);
	pw_schedule_free(sched);
}

bool
test_same_schedule(const struct pw_schedule *a, const struct pw_schedule *b)
{
	int r, i;

	if (a->ndevices != b->ndevices || a->nchannels != b->nchannels)
		return false;
	for (r = 0; r < a->ndevices + a->nchannels; r++) {
		const struct pw_seq *x = r < a->ndevices ? &a->device[r] :
		    &a->channel[r - a->ndevices];
		const struct pw_seq *y = r < b->ndevices ? &b->device[r] :
		    &b->channel[r - b->ndevices];

		if (x->len != y->len)
			return false;
		for (i = 0; i < x->len; i++)
			if (x->ops[i].kind != y->ops[i].kind ||
			    x->ops[i].stage != y->ops[i].stage ||
			    x->ops[i].mb != y->ops[i].mb)
				return false;
	}
	for (i = 0; i < a->nstages * a->microbatches; i++)
		if (a->anchor[i].op.kind != b->anchor[i].op.kind ||
		    (a->anchor[i].op.kind != PW_NKINDS &&
		    (a->anchor[i].op.stage != b->anchor[i].op.stage ||
		    a->anchor[i].op.mb != b->anchor[i].op.mb ||
		    a->anchor[i].at_end != b->anchor[i].at_end)))
			return false;
	return true;
}

double
test_pinned_start(const struct pw_problem *p, const struct pw_timing *t,
    struct pw_op op)
{
	if (!pw_timing_has(t, pw_op_index(p, op)))
		op.kind = op.kind == PW_BW ? PW_B : PW_BW;
	return t->start[pw_op_index(p, op)];
}

struct pw_problem *
test_po_problem(int d, int v, int m, double k, double hold, double limit)
{
	const struct pw_stage unit = { .f = 1, .b = 1, .w = 1, .act = 1,
	    .hold = hold, .offload = 1 };
	struct pw_problem *p;
	int i;

	p = test_problem_uniform(d, v, m, PW_PLACE_LOOP, &unit);
	if (k > 0) {
		pw_problem_set_link(p, 4 / (3 * k), 4 / (3 * k), 0, false);
		p->link.ngroups = (d + 1) / 2;
		for (i = 0; i < d; i++)
			p->link.group[i] = i / 2;
	}
	for (i = 0; i < d; i++)
		p->memory[i].limit = limit;
	return p;
}
