/* test_json.c - the interchange format: round trips, examples, bad input. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "pipewright.h"
#include "plan.h"
#include "tap.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/pw-test-json.XXXXXX";
static const char *testdata;
static const char *examples;

/* Returns TMPDIR/NAME, which the caller frees. */
static char *
tmp_path(const char *name)
{
	return pw_xasprintf("%s/%s", tmpdir, name);
}

static void
spew(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (fp == NULL)
		abort();
	fputs(text, fp);
	fclose(fp);
}

static int
count_entries(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Exact equality (INFINITY equals itself). */
static bool
same_num(double a, double b)
{
	return a == b;
}

/* Compares every field of two problems exactly; WHY names the first
 * difference. */
static bool
same_problem(const struct pw_problem *a, const struct pw_problem *b,
    char *why, size_t len)
{
	int i;

#define DIFF(cond, ...) do {					\
	if (cond) {						\
		snprintf(why, len, __VA_ARGS__);		\
		return false;					\
	}							\
} while (0)
	snprintf(why, len, "identical");
	DIFF((a->name == NULL) != (b->name == NULL) ||
	    (a->name != NULL && strcmp(a->name, b->name) != 0), "name");
	DIFF(a->devices != b->devices, "devices");
	DIFF(a->microbatches != b->microbatches, "microbatches");
	DIFF(a->nstages != b->nstages, "nstages");
	DIFF(!same_num(a->comm, b->comm), "comm");
	for (i = 0; i < a->nstages; i++) {
		const struct pw_stage *x = &a->stages[i], *y = &b->stages[i];

		DIFF(x->device != y->device, "stages[%d].device", i);
		DIFF(!same_num(x->f, y->f), "stages[%d].f", i);
		DIFF(!same_num(x->b, y->b), "stages[%d].b", i);
		DIFF(!same_num(x->w, y->w), "stages[%d].w", i);
		DIFF(!same_num(x->act, y->act), "stages[%d].act", i);
		DIFF(!same_num(x->hold, y->hold), "stages[%d].hold", i);
		DIFF(!same_num(x->offload, y->offload), "stages[%d].offload",
		    i);
		DIFF(!same_num(x->comm, y->comm), "stages[%d].comm", i);
	}
	for (i = 0; i < a->devices; i++) {
		DIFF(!same_num(a->memory[i].static_bytes,
		    b->memory[i].static_bytes), "memory[%d].static", i);
		DIFF(!same_num(a->memory[i].limit, b->memory[i].limit),
		    "memory[%d].limit", i);
	}
	DIFF(a->link.present != b->link.present, "link.present");
	if (!a->link.present)
		return true;
	DIFF(!same_num(a->link.d2h, b->link.d2h), "link.d2h");
	DIFF(!same_num(a->link.h2d, b->link.h2d), "link.h2d");
	DIFF(!same_num(a->link.latency, b->link.latency), "link.latency");
	DIFF(a->link.duplex != b->link.duplex, "link.duplex");
	DIFF(a->link.ngroups != b->link.ngroups, "link.ngroups");
	for (i = 0; i < a->devices; i++)
		DIFF(a->link.group[i] != b->link.group[i], "link.group[%d]", i);
#undef DIFF
	return true;
}

/* Three devices, five stages placed by hand, numbers that print badly
 * with %.17g, an unlimited and a limited device, per-stage comm overrides
 * (one of them 0) and a half-duplex link with uneven groups. */
static struct pw_problem *
irregular_problem(void)
{
	static const int device[] = { 0, 1, 2, 1, 0 };
	struct pw_problem *p = pw_problem_new(3, 5, 7);
	int s;

	p->name = pw_xstrdup("odd \"name\" \xc3\xa9");
	pw_problem_set_comm(p, 1e-5 / 3);
	for (s = 0; s < 5; s++) {
		p->stages[s].device = device[s];
		p->stages[s].f = 0.1 * (s + 1);
		p->stages[s].b = 1.0 / 3 + s;
		p->stages[s].w = s == 4 ? 0 : 1e-300;
		p->stages[s].act = 2.5e10 + s;
		p->stages[s].hold = 0.7 * p->stages[s].act;
		p->stages[s].offload = p->stages[s].act / 3;
	}
	p->stages[2].comm = 0.25;
	p->stages[3].comm = 0;
	p->memory[0].static_bytes = 0.1;
	p->memory[1].static_bytes = 7e9;
	p->memory[1].limit = 1e12;
	p->memory[2].limit = 5e10 + 0.5;
	pw_problem_set_link(p, 2.5e10, 1.2e10, 3e-6, false);
	p->link.group[0] = 1;
	p->link.group[1] = 0;
	p->link.group[2] = 1;
	p->link.ngroups = 2;
	return p;
}

/* The member of a JSON file's problem at PATH ("stages", 2, "comm"). */
static json_t *
jpath(json_t *v, const char *key, int index, const char *member)
{
	v = json_object_get(v, key);
	if (index >= 0)
		v = json_array_get(v, (size_t)index);
	return member != NULL ? json_object_get(v, member) : v;
}

static void
test_problem_roundtrip(void)
{
	struct pw_problem *p = irregular_problem(), *q = NULL;
	struct pw_error err;
	char why[128], *path = tmp_path("irregular.json");
	char *again = tmp_path("again.json"), *t1, *t2;
	json_t *root, *groups, *first;

	if (!tap_int(pw_problem_write(path, p, &err), PW_OK, "write irregular "
	    "problem") || !tap_ok((q = pw_problem_read(path, &err)) != NULL,
	    "read it back")) {
		tap_diag("%s", err.msg);
		goto out;
	}
	tap_ok(same_problem(p, q, why, sizeof why), "round trip keeps every "
	    "field exactly (%s)", why);
	tap_int(pw_problem_write(again, q, &err), PW_OK, "write it again");
	t1 = test_read_file(path);
	t2 = test_read_file(again);
	tap_ok(t1 != NULL && t2 != NULL && strcmp(t1, t2) == 0,
	    "writing is deterministic");
	free(t1);
	free(t2);

	root = json_load_file(path, 0, NULL);
	tap_ok(root != NULL, "the file is JSON for jansson too");
	tap_str(json_string_value(json_object_get(root, "format")),
	    "pipewright.problem.v1", "format names a problem file");
	tap_ok(jpath(root, "stages", 0, "comm") == NULL,
	    "no per-stage comm where it equals the problem's");
	tap_ok(json_real_value(jpath(root, "stages", 2, "comm")) == 0.25,
	    "per-stage comm written where it differs");
	tap_ok(json_is_real(jpath(root, "stages", 3, "comm")) &&
	    json_real_value(jpath(root, "stages", 3, "comm")) == 0,
	    "a zero override is written too");
	tap_ok(json_is_null(jpath(root, "memory", 0, "limit")),
	    "an unlimited device's limit is null");
	tap_ok(json_real_value(jpath(root, "stages", 0, "f")) == 0.1,
	    "0.1 is written so that it reads back as 0.1");
	groups = json_object_get(json_object_get(root, "link"), "groups");
	first = json_array_get(groups, 0);
	tap_ok(json_array_size(groups) == 2 && json_array_size(first) == 1 &&
	    json_integer_value(json_array_get(first, 0)) == 1 &&
	    json_array_size(json_array_get(groups, 1)) == 2,
	    "groups listed in group order: [[1], [0, 2]]");
	json_decref(root);
out:
	pw_problem_free(p);
	pw_problem_free(q);
	free(path);
	free(again);
}

/* Devices missing from "groups" get groups of their own after the listed
 * ones; one group per device is written as no "groups" at all. */
static void
test_groups(void)
{
	struct pw_problem *p;
	struct pw_error err;
	char *path = tmp_path("groups.json"), *text;

	spew(path, "{\"format\": \"pipewright.problem.v1\", \"devices\": 3, "
	    "\"microbatches\": 2, \"stages\": [{\"device\": 0, \"f\": 1, "
	    "\"b\": 1, \"w\": 1, \"act\": 1}, {\"device\": 1, \"f\": 1, "
	    "\"b\": 1, \"w\": 1, \"act\": 1}, {\"device\": 2, \"f\": 1, "
	    "\"b\": 1, \"w\": 1, \"act\": 1}], \"memory\": [{\"static\": 0, "
	    "\"limit\": 4}, {\"static\": 0, \"limit\": null}, {\"static\": 0, "
	    "\"limit\": null}], \"link\": {\"d2h\": 1e9, \"h2d\": 2e9, "
	    "\"groups\": [[2]]}}");
	p = pw_problem_read(path, &err);
	if (!tap_ok(p != NULL, "integers where numbers are expected, defaults "
	    "left out")) {
		tap_diag("%s", err.msg);
		free(path);
		return;
	}
	tap_int(p->link.ngroups, 3, "two unlisted devices add two groups");
	tap_ok(p->link.group[2] == 0 && p->link.group[0] == 1 &&
	    p->link.group[1] == 2, "listed group first, then device order");
	tap_ok(p->link.duplex && p->link.latency == 0,
	    "duplex defaults to true, latency to 0");
	tap_ok(p->comm == 0 && p->stages[1].comm == 0 &&
	    p->stages[1].hold == 0 && p->stages[1].offload == 0,
	    "comm, hold and offload default to 0");
	tap_ok(p->memory[0].limit == 4 && isinf(p->memory[1].limit),
	    "limit 4 and null");
	pw_problem_set_link(p, 1e9, 1e9, 0, true);
	tap_int(pw_problem_write(path, p, &err), PW_OK, "write one group per "
	    "device");
	text = test_read_file(path);
	tap_ok(text != NULL && strstr(text, "\"groups\"") == NULL &&
	    strstr(text, "\"link\"") != NULL, "one group per device: no "
	    "\"groups\" written");
	free(text);
	p->link.present = false;
	tap_int(pw_problem_write(path, p, &err), PW_OK, "write without link");
	text = test_read_file(path);
	tap_ok(text != NULL && strstr(text, "\"link\"") == NULL,
	    "no link: no \"link\" written");
	free(text);
	pw_problem_free(p);
	free(path);
}

/* The default problem's shape and the first-principles numbers of a
 * GPT-3 6.7B-like model at s = 4096 (see default.c): what the
 * interchange examples and reports rest on. */
static void
test_default(void)
{
	struct pw_problem *p = pw_problem_default();
	struct pw_error err;
	/* FLOPs of 4 layers at s = h = 4096, b = 1, and of the LM head. */
	const double flops = 989e12 * 0.5;
	const double f = 7696581394432.0, b = 8796093022208.0;
	const double w = 6597069766656.0, head = 1686345089024.0;
	int d;
	bool same;

	tap_int(pw_problem_validate(p, "default", &err), PW_OK,
	    "the default problem is valid");
	tap_str(p->name, "gpt3-6.7b-8xh100", "default name");
	tap_ok(p->devices == 8 && p->nstages == 8 && p->microbatches == 32 &&
	    pw_problem_is_loop(p), "8 stages on 8 devices, 32 microbatches");
	tap_near(p->stages[0].f, f / flops, 1e-15, "f of a middle stage: "
	    "%.6f s", f / flops);
	tap_near(p->stages[3].b, b / flops, 1e-15, "b: %.6f s", b / flops);
	tap_near(p->stages[6].w, w / flops, 1e-15, "w: %.6f s", w / flops);
	tap_near(p->stages[7].f, (f + head) / flops, 1e-15, "the LM head adds "
	    "2sbhV FLOPs to f of the last stage");
	tap_near(p->stages[7].w, (w + head) / flops, 1e-15, "... and to w");
	tap_near(p->stages[5].act, 2281701376.0, 0, "act = 4 x 34sbh bytes");
	tap_near(p->stages[5].hold, 2147483648.0, 0, "hold = 4 x 32sbh bytes");
	tap_near(p->stages[5].offload, p->stages[5].act, 0, "offload = act");
	tap_near(p->memory[3].static_bytes, 12884901888.0, 0,
	    "static = 16 x 4 x 12h^2 bytes = 12 GiB");
	tap_near(p->memory[0].static_bytes, 16178544640.0, 0,
	    "device 0 adds the embedding");
	tap_near(p->memory[7].static_bytes, 16178544640.0, 0,
	    "device 7 adds the LM head");
	for (d = 1, same = true; d < 8; d++)
		same = same && p->memory[d].limit == p->memory[0].limit;
	tap_ok(same && isfinite(p->memory[0].limit), "one finite limit for "
	    "all devices");
	tap_ok(p->comm > 0, "comm between devices takes time");
	tap_ok(p->link.present && p->link.duplex && p->link.d2h == 50e9 &&
	    p->link.h2d == 50e9 && p->link.latency == 10e-6,
	    "PCIe Gen5 link");
	tap_ok(p->link.ngroups == 4 && p->link.group[0] == 0 &&
	    p->link.group[1] == 0 && p->link.group[6] == 3 &&
	    p->link.group[7] == 3, "two devices per PCIe switch");
	pw_problem_free(p);
}

/* The origin travels with the problem, and is dropped once the stated
 * costs no longer come from it. */
static void
test_origin(void)
{
	struct pw_problem *p = pw_problem_default(), *q;
	struct pw_error err;
	char *path = tmp_path("origin.json"), *text, *edit;

	tap_ok(p->origin != NULL && p->origin->model.layers == 32 &&
	    strcmp(p->origin->hardware.name, "H100-SXM") == 0,
	    "the default problem knows its model and hardware");
	tap_int(pw_problem_write(path, p, &err), PW_OK, "write with origin");
	q = pw_problem_read(path, &err);
	if (tap_ok(q != NULL, "read with origin")) {
		tap_ok(q->origin != NULL && pw_problem_same(p, q) &&
		    q->origin->split.chunks == 1 &&
		    q->origin->split.placement == PW_PLACE_LOOP &&
		    q->origin->model.seq == 4096 &&
		    q->origin->model.flash_attention &&
		    q->origin->hardware.p2p_bandwidth ==
		    p->origin->hardware.p2p_bandwidth,
		    "the origin round-trips");
		tap_ok(!q->origin->model.gated_mlp &&
		    !q->origin->model.tied_embeddings &&
		    q->origin->split.reserve_bytes == 0 &&
		    q->origin->split.reserve_fraction == 0 &&
		    q->origin->split.tp == 0 && q->origin->split.dp == 0,
		    "a file without the newer fields reads them as none");
		pw_problem_free(q);
	}
	text = test_read_file(path);
	edit = strstr(text, "\"f\": 0.0155");
	if (tap_ok(edit != NULL, "found stage 0's f")) {
		edit[9] = '9';	/* 0.0155... becomes 0.0195... */
		spew(path, text);
		q = pw_problem_read(path, &err);
		tap_ok(q != NULL && q->origin == NULL && q->stages[0].f > 0.019,
		    "hand-edited costs drop the origin and keep the edit");
		pw_problem_free(q);
	}
	free(text);
	text = test_read_file(path);
	edit = strstr(text, "\"recompute\": \"none\"");
	if (tap_ok(edit != NULL, "found the recompute field")) {
		memcpy(edit + 13, "\"some\"", 6);
		spew(path, text);
		q = pw_problem_read(path, &err);
		tap_ok(q == NULL, "a bad origin field is an error");
		tap_ok(strstr(err.msg, "origin.model.recompute: must be one "
		    "of \"none\", \"pipeoffload\" (or \"selective\"), "
		    "\"full\" (got \"some\")") != NULL,
		    "which names the field (%s)", err.msg);
		pw_problem_free(q);
	}
	free(text);
	/* Afresh: the file still holds the edit of f above. */
	tap_int(pw_problem_write(path, p, &err), PW_OK,
	    "write with origin again");
	text = test_read_file(path);
	edit = strstr(text, "\"recompute\": \"none\"");
	if (tap_ok(edit != NULL, "found the recompute field again")) {
		memcpy(edit + 13, "\"NONE\"", 6);
		spew(path, text);
		q = pw_problem_read(path, &err);
		tap_ok(q != NULL && q->origin != NULL &&
		    q->origin->model.recompute == PW_RECOMPUTE_NONE,
		    "a recomputation's name in any case, the origin kept");
		pw_problem_free(q);
	}
	free(text);
	unlink(path);
	free(path);
	pw_problem_free(p);
}

static void
test_examples(void)
{
	struct pw_problem *def = pw_problem_default(), *p;
	struct pw_error err;
	char why[128], *path, *out = tmp_path("default.json"), *t1, *t2;
	int s;
	bool unit = true;

	path = pw_xasprintf("%s/default.json", examples);
	p = pw_problem_read(path, &err);
	if (tap_ok(p != NULL, "read examples/default.json"))
		tap_ok(same_problem(p, def, why, sizeof why), "it is exactly "
		    "the built-in default (%s)", why);
	else
		tap_diag("%s", err.msg);
	pw_problem_free(p);
	tap_int(pw_problem_write(out, def, &err), PW_OK, "write the default");
	t1 = test_read_file(path);
	t2 = test_read_file(out);
	tap_ok(t1 != NULL && t2 != NULL && strcmp(t1, t2) == 0,
	    "examples/default.json is what the writer writes today");
	free(t1);
	free(t2);
	free(path);

	path = pw_xasprintf("%s/unit4x8.json", examples);
	p = pw_problem_read(path, &err);
	if (tap_ok(p != NULL, "read examples/unit4x8.json")) {
		tap_ok(p->devices == 4 && p->nstages == 4 &&
		    p->microbatches == 8 && pw_problem_is_loop(p) &&
		    p->comm == 0 && !p->link.present, "unit4x8 shape");
		for (s = 0; s < 4; s++) {
			const struct pw_stage *st = &p->stages[s];

			unit = unit && st->f == 1 && st->b == 1 &&
			    st->w == 1 && st->act == 1 && st->hold == 0.5 &&
			    st->offload == 1 &&
			    p->memory[s].static_bytes == 0 &&
			    isinf(p->memory[s].limit);
		}
		tap_ok(unit, "unit times, act 1, hold 0.5, no limits");
	} else
		tap_diag("%s", err.msg);
	pw_problem_free(p);
	free(path);
	free(out);
	pw_problem_free(def);
}

/* A schedule file as another tool might write it: integer times, an
 * anchor, metrics that disagree with the ops, and fields of its own. */
static const char foreign_schedule[] =
	"{\"format\": \"pipewright.schedule.v1\",\n"
	" \"producer\": \"elsewhere\",\n"
	" \"metrics\": {\"makespan\": \"nonsense\"},\n"
	" \"problem\": {\"devices\": 2, \"microbatches\": 1,\n"
	"  \"name\": \"tiny\",\n"
	"  \"stages\": [{\"device\": 0, \"f\": 1, \"b\": 1, \"w\": 1, "
	"\"act\": 1, \"offload\": 1},\n"
	"             {\"device\": 1, \"f\": 1, \"b\": 1, \"w\": 1, "
	"\"act\": 1}],\n"
	"  \"memory\": [{\"static\": 0, \"limit\": null}, {\"static\": 0, "
	"\"limit\": 2}],\n"
	"  \"link\": {\"d2h\": 4, \"h2d\": 4, \"latency\": 0.5, "
	"\"duplex\": false}},\n"
	" \"ops\": [{\"device\": 0, \"kind\": \"F\", \"stage\": 0, \"mb\": 0, "
	"\"start\": 0, \"end\": 1},\n"
	"  {\"device\": 0, \"kind\": \"OFFLOAD\", \"stage\": 0, \"mb\": 0, "
	"\"start\": 1, \"end\": 1.75, \"bytes\": 1},\n"
	"  {\"device\": 1, \"kind\": \"F\", \"stage\": 1, \"mb\": 0, "
	"\"start\": 1, \"end\": 2},\n"
	"  {\"device\": 1, \"kind\": \"BW\", \"stage\": 1, \"mb\": 0, "
	"\"start\": 2, \"end\": 4},\n"
	"  {\"device\": 0, \"kind\": \"RELOAD\", \"stage\": 0, \"mb\": 0, "
	"\"start\": 2, \"end\": 2.75, \"bytes\": 1, "
	"\"after\": {\"kind\": \"F\", \"stage\": 0, \"mb\": 0}},\n"
	"  {\"device\": 0, \"kind\": \"BW\", \"stage\": 0, \"mb\": 0, "
	"\"start\": 4, \"end\": 6, \"note\": \"ignored\"}]}\n";

static void
test_foreign_schedule(void)
{
	struct pw_problem *p;
	struct pw_timed_op *ops;
	struct pw_error err;
	char *path = tmp_path("foreign.json");
	json_t *root;
	size_t n;

	spew(path, foreign_schedule);
	p = pw_problem_read(path, &err);
	if (tap_ok(p != NULL, "pw_problem_read takes a schedule file")) {
		tap_str(p->name, "tiny", "... and returns its problem");
		tap_ok(p->link.present && !p->link.duplex &&
		    p->link.latency == 0.5 && p->memory[1].limit == 2,
		    "the problem's link and limits");
	} else
		tap_diag("%s", err.msg);
	pw_problem_free(p);

	if (!tap_int(pw_schedule_read(path, &p, &ops, &n, NULL, &err), PW_OK,
	    "read a foreign schedule (metrics and unknown fields ignored)")) {
		tap_diag("%s", err.msg);
		free(path);
		return;
	}
	tap_int((long long)n, 6, "six ops");
	tap_ok(ops[1].op.kind == PW_OFFLOAD && ops[1].device == 0 &&
	    ops[1].start == 1 && ops[1].end == 1.75 && ops[1].bytes == 1 &&
	    !ops[1].has_anchor, "OFFLOAD as stated");
	tap_ok(ops[4].op.kind == PW_RELOAD && ops[4].has_anchor &&
	    ops[4].anchor.op.kind == PW_F && ops[4].anchor.op.stage == 0 &&
	    ops[4].anchor.op.mb == 0 && !ops[4].anchor.at_end,
	    "RELOAD anchored at F(0,0)'s start");
	tap_ok(ops[5].op.kind == PW_BW && ops[5].op.stage == 0 &&
	    ops[5].start == 4 && ops[5].end == 6 && !ops[5].has_anchor,
	    "last op BW(0,0) from 4 to 6");
	free(ops);
	pw_problem_free(p);

	/* Anchors the checker must judge are read as stated. */
	root = json_loads(foreign_schedule, 0, NULL);
	json_object_set_new(json_array_get(json_object_get(root, "ops"), 0),
	    "after", json_pack("{s:s, s:i, s:i}", "kind", "OFFLOAD", "stage", 0,
	    "mb", 0));
	json_dump_file(root, path, 0);
	json_decref(root);
	if (tap_int(pw_schedule_read(path, &p, &ops, &n, NULL, &err), PW_OK,
	    "an anchor on an F, at an OFFLOAD, is no read error")) {
		tap_ok(ops[0].has_anchor && ops[0].anchor.op.kind == PW_OFFLOAD,
		    "... it is read as stated, for the checker");
		free(ops);
		pw_problem_free(p);
	} else
		tap_diag("%s", err.msg);
	free(path);
}

/* One row per file in tests/data/bad: the reader that gets it and what it
 * must say after "PATH: ".  Where jansson (syntax) or the problem model's
 * own checks (problem.c) word the rest, only the start is fixed here. */
static const struct bad_case {
	const char *file;
	bool schedule;
	bool exact;
	const char *msg;
} bad_cases[] = {
	{ "bad_format.json", false, true, "format: must be "
	    "\"pipewright.problem.v1\" or \"pipewright.schedule.v1\" (got "
	    "\"pipewright.problem.v9\")" },
	{ "comm_negative.json", false, true, "comm: must be a non-negative "
	    "number (got -0.5)" },
	{ "device_no_stage.json", false, false, "devices: " },
	{ "devices_fraction.json", false, true, "devices: must be a positive "
	    "integer (got 2.5)" },
	/* Past 64 bits an integer is read as the real it is near, so that
	 * its field says what it must be. */
	{ "devices_past_int64.json", false, true, "devices: must be at most "
	    "2147483647 (got 1.8446744073709552e19)" },
	{ "comm_past_double.json", false, true, "line 5 column 14: JSON "
	    "syntax error: a number beyond the range of a double (about "
	    "1.8e308)" },
	/* A schedule CSV under another name: said so. */
	{ "schedule_csv.json", false, true, "line 1 column 2: JSON syntax "
	    "error: parse error: trailing garbage (a PyTorch schedule CSV is "
	    "read by its .csv name)" },
	{ "schedule_csv_quoted.json", false, true, "line 1 column 6: JSON "
	    "syntax error: parse error: trailing garbage (a PyTorch schedule "
	    "CSV is read by its .csv name)" },
	{ "devices_string.json", false, true, "devices: must be a positive "
	    "integer (got \"2\")" },
	{ "devices_zero.json", false, true, "devices: must be a positive "
	    "integer (got 0)" },
	{ "duplicate_key.json", false, false, "line 4 column 10: JSON syntax "
	    "error: " },
	{ "empty.json", false, false, "line 1 column 0: JSON syntax error: " },
	{ "group_device.json", false, true, "link.groups[0][1]: device 9 does "
	    "not exist (devices = 4)" },
	{ "group_empty.json", false, true, "link.groups[1]: must be a "
	    "non-empty array of devices (got [])" },
	{ "group_not_array.json", false, true, "link.groups[0]: must be a "
	    "non-empty array of devices (got 0)" },
	{ "group_twice.json", false, true, "link.groups[1][0]: device 1 is "
	    "already in link.groups[0]" },
	{ "hold_gt_act.json", false, false, "stages[0].hold: " },
	{ "limit_missing.json", false, true, "memory[0]: missing field "
	    "\"limit\"" },
	{ "limit_small.json", false, false, "memory[1].limit: " },
	{ "limit_string.json", false, true, "memory[1].limit: must be a "
	    "non-negative number or null (got \"80GB\")" },
	{ "link_d2h_zero.json", false, true, "link.d2h: must be a positive "
	    "number (got 0)" },
	{ "link_duplex.json", false, true, "link.duplex: must be true or false "
	    "(got \"yes\")" },
	{ "link_missing_h2d.json", false, true, "link: missing field \"h2d\"" },
	{ "memory_length.json", false, true, "memory: must have 2 entries, one "
	    "per device (got 1)" },
	{ "microbatches_huge.json", false, true, "microbatches: must be at "
	    "most 2147483647 (got 1000000000000)" },
	{ "missing_microbatches.json", false, true, "missing field "
	    "\"microbatches\"" },
	{ "name_number.json", false, true, "name: must be a string (got 5)" },
	{ "negative_f.json", false, true, "stages[3].f: must be a non-negative "
	    "number (got -1)" },
	{ "nesting_deep.json", false, true, "line 1 column 2049: JSON syntax "
	    "error: maximum parsing depth reached" },
	{ "no_format.json", false, true, "missing field \"format\"" },
	{ "not_object.json", false, true, "must be a JSON object (got "
	    "[1, 2])" },
	{ "sched_after_at.json", true, true, "ops[4].after.at: must be one of "
	    "\"start\", \"end\" (got \"middle\")" },
	{ "sched_after_kind.json", true, true, "ops[4].after.kind: must be F, "
	    "B, W, BW, OFFLOAD or RELOAD (got \"FW\")" },
	{ "sched_bytes.json", true, true, "ops[1]: missing field \"bytes\"" },
	{ "sched_device.json", true, true, "ops[0].device: must be a "
	    "non-negative integer (got -1)" },
	{ "sched_kind.json", true, true, "ops[1].kind: must be F, B, W, BW, "
	    "OFFLOAD or RELOAD (got \"X\")" },
	{ "sched_mb.json", true, true, "ops[0].mb: microbatch 1 does not exist "
	    "(microbatches = 1)" },
	{ "sched_no_ops.json", true, true, "missing field \"ops\"" },
	{ "sched_no_problem.json", true, true, "missing field \"problem\"" },
	{ "sched_op_not_object.json", true, true, "ops[3]: must be an object "
	    "(got [\"B\", 1, 0])" },
	{ "sched_pin_devices.json", true, true, "pins[0]: F(0,0) is on device "
	    "0 and F(1,0) on device 1: a pin joins two ops of one device" },
	{ "sched_pin_same.json", true, true, "pins[0]: B(0,0) and BW(0,0) are "
	    "one op" },
	{ "sched_pin_stage.json", true, true, "pins[1].after.stage: stage 9 "
	    "does not exist (stages = 2)" },
	{ "sched_pin_transfer.json", true, true, "pins[0].before.kind: must be "
	    "a compute op's kind: F, B, W or BW (got \"OFFLOAD\")" },
	{ "sched_problem_f.json", true, true, "problem.stages[0].f: must be a "
	    "non-negative number (got -1)" },
	/* What only the whole problem shows names its field in the file
	 * too. */
	{ "sched_problem_hold.json", true, true, "problem.stages[0].hold: 2 "
	    "exceeds act 1" },
	{ "sched_stage.json", true, true, "ops[0].stage: stage 7 does not "
	    "exist (stages = 2)" },
	{ "sched_start.json", true, true, "ops[2].start: must be a number (got "
	    "\"1.0\")" },
	/* Read as problems: the ops and the measured run are skipped, and
	 * a key twice is an error there too. */
	{ "sched_op_key_twice.json", false, true, "line 5 column 53: JSON "
	    "syntax error: duplicate object key" },
	{ "sched_measured_key_twice.json", false, true, "line 10 column 14: "
	    "JSON syntax error: duplicate object key" },
	{ "sched_ops_too_many.json", true, true, "ops: more than the 12 ops "
	    "the problem has (2 stages x 1 microbatches x 6 kinds)" },
	{ "pairs_too_many.json", false, true, "microbatches: 4 stages x "
	    "2000000 microbatches exceeds the limit of 1048576 (stage, "
	    "microbatch) pairs (each keeps 6 ops in memory)" },
	{ "sum_act.json", false, true, "memory[0]: static 0 plus every "
	    "activation of device 0 held at once (2 microbatches) is not a "
	    "finite number of bytes" },
	{ "sum_comm.json", false, true, "stages[0].comm: 1e+308 makes the "
	    "time of every op in series, once per device, not finite (2 "
	    "microbatches, 2 devices)" },
	{ "sum_f.json", false, true, "stages[0].f: 1e+308 makes the time of "
	    "every op in series, once per device, not finite (2 microbatches, "
	    "2 devices)" },
	{ "stage_comm_negative.json", false, true, "stages[0].comm: must be a "
	    "non-negative number (got -1)" },
	{ "stage_device.json", false, true, "stages[2].device: device 9 does "
	    "not exist (devices = 8)" },
	{ "stage_missing_w.json", false, true, "stages[1]: missing field "
	    "\"w\"" },
	{ "stage_not_object.json", false, true, "stages[0]: must be an object "
	    "(got 1)" },
	{ "stages_empty.json", false, true, "stages: must not be empty (got "
	    "[])" },
	{ "stages_not_array.json", false, true, "stages: must be an array (got "
	    "{\"device\": 0})" },
	{ "syntax.json", false, false, "line 4 column 17: JSON syntax "
	    "error: " },
	{ "trailing.json", false, false, "line 1 column 37: JSON syntax "
	    "error: " },
	/* Text jansson refuses, though yajl reads it, in a value, a key and
	 * an element a problem read skips. */
	{ "utf8_f5.json", false, true, "line 1 column 17: JSON syntax error: "
	    "invalid UTF-8 text in a string" },
	{ "utf8_high_pair.json", false, true, "line 1 column 25: JSON syntax "
	    "error: invalid \\u escape: a UTF-16 surrogate without its pair" },
	{ "utf8_lone_low.json", false, true, "line 1 column 19: JSON syntax "
	    "error: invalid \\u escape: a UTF-16 surrogate without its pair" },
	{ "utf8_overlong.json", false, true, "line 1 column 15: JSON syntax "
	    "error: invalid UTF-8 text in a string" },
	{ "utf8_skipped_op.json", false, true, "line 55 column 19: JSON "
	    "syntax error: invalid \\u escape: a UTF-16 surrogate without its "
	    "pair" },
	{ "utf8_surrogate.json", false, true, "line 1 column 41: JSON syntax "
	    "error: invalid UTF-8 text in a string" },
};

#define NBAD (sizeof bad_cases / sizeof bad_cases[0])

static void
check_bad(const struct bad_case *c, const char *path)
{
	struct pw_problem *p;
	struct pw_timed_op *ops;
	struct pw_error err;
	char *want = pw_xasprintf("%s: %s", path, c->msg);
	size_t n;
	int rc = PW_ERR_INPUT;

	memset(&err, 0, sizeof err);
	if (c->schedule)
		rc = pw_schedule_read(path, &p, &ops, &n, NULL, &err);
	else
		p = pw_problem_read(path, &err);
	tap_ok(rc == PW_ERR_INPUT && p == NULL, "%s is refused as input",
	    c->file);
	if (c->exact)
		tap_str(err.msg, want, "%s: the message", c->file);
	else
		tap_ok(strncmp(err.msg, want, strlen(want)) == 0 &&
		    strchr(err.msg, '\n') == NULL, "%s: one line starting "
		    "\"%s\" (got \"%s\")", c->file, want, err.msg);
	free(want);
}

static void
test_bad_inputs(void)
{
	struct dirent *de;
	char *dir = pw_xasprintf("%s/bad", testdata), *path;
	size_t i, len;
	DIR *d;
	int listed = 0;

	for (i = 0; i < NBAD; i++) {
		path = pw_xasprintf("%s/%s", dir, bad_cases[i].file);
		check_bad(&bad_cases[i], path);
		free(path);
	}
	if (!tap_ok((d = opendir(dir)) != NULL, "open %s", dir)) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		for (i = 0; i < NBAD && strcmp(bad_cases[i].file,
		    de->d_name) != 0; i++)
			;
		if (i == NBAD)
			tap_ok(false, "%s has an expected message here",
			    de->d_name);
		listed++;
	}
	closedir(d);
	tap_int(listed, (long long)NBAD, "every fixture is checked, and every "
	    "checked one exists");
	free(dir);
}

static void
test_unreadable(void)
{
	struct pw_problem *p;
	struct pw_timed_op *ops;
	struct pw_error err;
	char *path = tmp_path("absent.json"), *want, *unit;
	size_t n;

	p = pw_problem_read(path, &err);
	want = pw_xasprintf("%s: cannot open: No such file or directory", path);
	tap_ok(p == NULL, "a missing file");
	tap_str(err.msg, want, "... is named with the reason");
	free(want);
	tap_int(pw_schedule_read(path, &p, &ops, &n, NULL, &err), PW_ERR_IO,
	    "a missing schedule is an I/O error");
	tap_int(pw_schedule_read(tmpdir, &p, &ops, &n, NULL, &err), PW_ERR_IO,
	    "a directory is an I/O error");
	tap_ok(p == NULL && ops == NULL && n == 0,
	    "failed reads return nothing");

	unit = pw_xasprintf("%s/unit4x8.json", examples);
	tap_int(pw_schedule_read(unit, &p, &ops, &n, NULL, &err), PW_ERR_INPUT,
	    "a problem file is not a schedule");
	want = pw_xasprintf("%s: format: must be \"pipewright.schedule.v1\" "
	    "(got \"pipewright.problem.v1\")", unit);
	tap_str(err.msg, want, "... and the message says so");
	free(want);
	free(unit);
	free(path);
}

/* Output is atomic: a failed write leaves nothing, and a file is replaced
 * only by a complete one. */
static void
test_atomic(void)
{
	struct pw_problem *p = pw_problem_default(), *q;
	struct pw_error err;
	char *missing = tmp_path("no/such/dir.json");
	char *keep = tmp_path("keep.json"), *text;
	int before;

	before = count_entries(tmpdir);
	tap_int(pw_problem_write(missing, p, &err), PW_ERR_IO,
	    "writing into a missing directory fails");
	tap_ok(strstr(err.msg, missing) != NULL, "... naming the path: %s",
	    err.msg);
	tap_int(count_entries(tmpdir), before, "... and leaves nothing behind");

	spew(keep, "old\n");
	before = count_entries(tmpdir);
	p->stages[3].f = -1;
	tap_int(pw_problem_write(keep, p, &err), PW_ERR_INPUT,
	    "an invalid problem is not written");
	text = test_read_file(keep);
	tap_str(text, "old\n", "... and the old file stays as it was");
	free(text);
	tap_int(count_entries(tmpdir), before,
	    "... with no temporary file left");
	p->stages[3].f = p->stages[2].f;
	tap_int(pw_problem_write(keep, p, &err), PW_OK, "a valid write");
	q = pw_problem_read(keep, &err);
	tap_ok(q != NULL && q->nstages == 8, "... replaces the file");
	tap_int(count_entries(tmpdir), before,
	    "... in place, nothing else left");
	pw_problem_free(q);
	pw_problem_free(p);
	free(missing);
	free(keep);
}

static bool
same_timed(const struct pw_timed_op *a, const struct pw_timed_op *b)
{
	return a->op.kind == b->op.kind && a->op.stage == b->op.stage &&
	    a->op.mb == b->op.mb && a->device == b->device &&
	    a->start == b->start && a->end == b->end && a->bytes == b->bytes &&
	    a->has_anchor == b->has_anchor && (!a->has_anchor ||
	    (a->anchor.op.kind == b->anchor.op.kind &&
	    a->anchor.op.stage == b->anchor.op.stage &&
	    a->anchor.op.mb == b->anchor.op.mb &&
	    a->anchor.at_end == b->anchor.at_end));
}

/* Two stages, two microbatches, split backward, both activations of
 * stage 0 offloaded, one reload anchored at an op's start and one at an
 * op's end; times that are no short decimals, so that exact round trips
 * are put to the test. */
static struct pw_schedule *
offload_schedule(struct pw_problem **out)
{
	static const struct pw_op order[] = {
		{ PW_F, 0, 0 }, { PW_F, 0, 1 }, { PW_B, 0, 0 }, { PW_W, 0, 0 },
		{ PW_B, 0, 1 }, { PW_W, 0, 1 },
		{ PW_F, 1, 0 }, { PW_B, 1, 0 }, { PW_F, 1, 1 }, { PW_B, 1, 1 },
		{ PW_W, 1, 0 }, { PW_W, 1, 1 },
		{ PW_OFFLOAD, 0, 0 }, { PW_OFFLOAD, 0, 1 },
		{ PW_RELOAD, 0, 0 }, { PW_RELOAD, 0, 1 },
	};
	static const struct pw_anchor start = { { PW_F, 0, 1 }, false };
	static const struct pw_anchor end = { { PW_B, 0, 0 }, true };
	struct pw_problem *p = pw_problem_new(2, 2, 2);
	struct pw_schedule *s;
	struct pw_error err;
	size_t i;
	int k;

	pw_problem_place_loop(p, &err);
	pw_problem_set_comm(p, 0.05);
	for (k = 0; k < 2; k++) {
		p->stages[k].f = 0.1 + k / 3.0;
		p->stages[k].b = 0.2;
		p->stages[k].w = 0.3;
		p->stages[k].act = 3;
		p->stages[k].hold = 1;
		p->memory[k].limit = 100;
	}
	p->stages[0].offload = 3;
	pw_problem_set_link(p, 7, 9, 0.01, true);
	s = pw_schedule_new(p);
	s->family = pw_xstrdup("handmade");
	for (i = 0; i < sizeof order / sizeof order[0]; i++)
		pw_schedule_append(s, p, order[i]);
	pw_schedule_set_anchor(s, 0, 0, start);
	pw_schedule_set_anchor(s, 0, 1, end);
	*out = p;
	return s;
}

/* Text that is not UTF-8 (which jansson refuses) is an input error that
 * names its field, in the writer, the validation and the cost model,
 * and no file is left behind. */
/* The cost model's newer fields (a gated MLP, tied embeddings, the
 * reserve, TP and DP) and an explicit split round-trip. */
static void
test_origin_fields(void)
{
	static const int layers[] = { 9, 8, 8, 7 };
	struct pw_model m = *pw_model_find("llama3-8b");
	struct pw_split sp = { .devices = 4, .chunks = 1,
	    .placement = PW_PLACE_LOOP, .microbatches = 8,
	    .layers_per_stage = layers, .memory_limit = 60 * 1073741824.0,
	    .reserve_bytes = 1e9, .reserve_fraction = 0.05, .tp = 2,
	    .dp = 4 };
	struct pw_problem *p = NULL, *q;
	struct pw_error err;
	char *path = tmp_path("fields.json"), *text;

	m.tied_embeddings = true;
	if (!tap_int(pw_cost_problem(&m, pw_hardware_find("H100-SXM"), &sp, &p,
	    &err), PW_OK, "llama3-8b tied, reserved, tp 2, dp 4 builds")) {
		tap_diag("%s", err.msg);
		free(path);
		return;
	}
	tap_int(pw_problem_write(path, p, &err), PW_OK, "write it");
	text = test_read_file(path);
	tap_ok(strstr(text, "\"gated_mlp\": true") != NULL &&
	    strstr(text, "\"tied_embeddings\": true") != NULL &&
	    strstr(text, "\"reserve_bytes\": 1000000000") != NULL &&
	    strstr(text, "\"reserve_fraction\": 0.05") != NULL &&
	    strstr(text, "\"tp\": 2") != NULL && strstr(text, "\"dp\": 4")
	    != NULL, "the file states them");
	free(text);
	q = pw_problem_read(path, &err);
	if (tap_ok(q != NULL && q->origin != NULL, "read back with its origin")) {
		tap_ok(pw_problem_same(p, q) && q->origin->model.gated_mlp &&
		    q->origin->model.tied_embeddings &&
		    q->origin->split.reserve_bytes == 1e9 &&
		    q->origin->split.reserve_fraction == 0.05 &&
		    q->origin->split.tp == 2 && q->origin->split.dp == 4 &&
		    q->origin->split.layers_per_stage != NULL &&
		    q->origin->split.layers_per_stage[0] == 9 &&
		    q->origin->split.layers_per_stage[3] == 7,
		    "every field round-trips");
		tap_near(q->memory[0].limit, 0.95 * 60 * 1073741824.0 - 1e9, 0,
		    "the limit less the reserve");
	}
	pw_problem_free(q);
	unlink(path);
	free(path);
	pw_problem_free(p);
}

static void
test_text(void)
{
	struct pw_problem *p = pw_problem_default(), *q = NULL;
	struct pw_schedule *s = NULL;
	struct pw_timing *t = NULL;
	struct pw_model m = pw_model_presets[0];
	struct pw_error err;
	char *path = tmp_path("text.json"), *want;
	int before = count_entries(tmpdir);

	free((char *)p->origin->hardware.name);
	p->origin->hardware.name = pw_xstrdup("H\xff");
	tap_int(pw_problem_write(path, p, &err), PW_ERR_INPUT,
	    "a hardware name that is not UTF-8 is not written");
	want = pw_xasprintf("%s: origin.hardware.name: must be valid UTF-8 "
	    "text", path);
	tap_str(err.msg, want, "the message names the field");
	free(want);
	tap_int(pw_cost_problem(&p->origin->model, &p->origin->hardware,
	    &p->origin->split, &q, &err), PW_ERR_INPUT,
	    "the cost model refuses it");
	tap_str(err.msg, "hardware: name: must be valid UTF-8 text",
	    "and names the field");
	m.name = "m\xc3";
	tap_int(pw_cost_problem(&m, &p->origin->hardware, &p->origin->split,
	    &q, &err), PW_ERR_INPUT, "a cut model name too");
	tap_str(err.msg, "model: name: must be valid UTF-8 text",
	    "its message");
	pw_problem_free(q);
	pw_origin_free(p->origin);
	p->origin = NULL;
	if (tap_int(pw_family_build(pw_family_find("1f1b"), p, &q, &s, &err),
	    PW_OK, "build 1f1b") &&
	    tap_int(pw_simulate(q, s, &t, &err), PW_OK, "simulate it")) {
		free(s->family);
		s->family = pw_xstrdup("1f1b\xe9");
		tap_int(pw_schedule_write(path, q, s, t, &err), PW_ERR_INPUT,
		    "a family name that is not UTF-8 is not written");
		want = pw_xasprintf("%s: family: must be valid UTF-8 text",
		    path);
		tap_str(err.msg, want, "and named");
		free(want);
	}
	tap_int(count_entries(tmpdir), before, "no file left behind");
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(q);
	pw_problem_free(p);
	free(path);
}

/* Returns FILE's text with its top-level member KEY first (as a tool
 * sorting keys would write it), in a string the caller frees. */
static char *
member_first(const char *file, const char *key)
{
	json_t *root = json_load_file(file, 0, NULL), *out = json_object();
	const char *k;
	json_t *v;
	char *text;

	json_object_set(out, key, json_object_get(root, key));
	json_object_foreach(root, k, v)
		json_object_set(out, k, v);
	text = json_dumps(out, JSON_REAL_PRECISION(17));
	json_decref(out);
	json_decref(root);
	return text;
}

/* Reads "-" with TEXT on a pipe as standard input, which cannot seek. */
static int
read_piped(const char *text, struct pw_problem **p, struct pw_timed_op **ops,
    size_t *n, struct pw_error *err)
{
	int fds[2], saved = dup(0), rc;
	pid_t pid;

	if (saved < 0 || pipe(fds) != 0 || (pid = fork()) < 0)
		abort();
	if (pid == 0) {
		close(fds[0]);
		if (write(fds[1], text, strlen(text)) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	dup2(fds[0], 0);
	close(fds[0]);
	rc = pw_schedule_read("-", p, ops, n, NULL, err);
	dup2(saved, 0);
	close(saved);
	clearerr(stdin);
	waitpid(pid, NULL, 0);
	return rc;
}

/* Ops stated before the format and the problem are read all the same:
 * from a file, and from a pipe. */
static void
test_ops_first(void)
{
	struct pw_problem *def = pw_problem_default(), *used, *p, *q;
	struct pw_schedule *s;
	struct pw_timing *t;
	struct pw_timed_op *ops, *ops2;
	struct pw_error err;
	char *path = tmp_path("order.json"), *moved = tmp_path("moved.json");
	char *text;
	size_t n, n2, i;
	bool same;

	if (!tap_int(pw_family_build(pw_family_find("zb-h1"), def, &used, &s,
	    &err), PW_OK, "build zb-h1") ||
	    !tap_int(pw_simulate(used, s, &t, &err), PW_OK, "simulate it") ||
	    !tap_int(pw_schedule_write(path, used, s, t, &err), PW_OK,
	    "write it"))
		return;
	text = member_first(path, "ops");
	tap_ok(strncmp(text, "{\"ops\": [", 9) == 0, "ops come first");
	spew(moved, text);
	tap_int(pw_schedule_read(path, &p, &ops, &n, NULL, &err), PW_OK,
	    "read as written");
	tap_int(pw_schedule_read(moved, &q, &ops2, &n2, NULL, &err), PW_OK,
	    "read with the ops first");
	for (i = 0, same = n == n2 && n > 0; i < n && same; i++)
		same = same_timed(&ops[i], &ops2[i]);
	tap_ok(same && pw_problem_same(p, q), "the same problem and ops");
	pw_problem_free(q);
	free(ops2);
	tap_int(read_piped(text, &q, &ops2, &n2, &err), PW_OK,
	    "read from a pipe with the ops first");
	for (i = 0, same = n == n2; i < n && same; i++)
		same = same_timed(&ops[i], &ops2[i]);
	tap_ok(same, "the same ops from the pipe");
	pw_problem_free(q);
	free(ops2);
	q = pw_problem_read(moved, &err);
	tap_ok(q != NULL && pw_problem_same(p, q),
	    "the problem alone, skipping the ops");
	pw_problem_free(q);
	free(ops);
	pw_problem_free(p);
	free(text);
	unlink(moved);
	unlink(path);
	free(moved);
	free(path);
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(used);
	pw_problem_free(def);
}

static void
test_schedule_roundtrip(void)
{
	struct pw_problem *p, *q = NULL;
	struct pw_schedule *s = offload_schedule(&p), *s2 = NULL;
	struct pw_timing *t = NULL, *t2 = NULL;
	struct pw_timed_op *ops = NULL, *ops2 = NULL;
	struct pw_metrics *m = NULL;
	struct pw_error err;
	char why[128], *path = tmp_path("sched.json");
	char *edited = tmp_path("edited.json"), *text, *line;
	size_t i, n, n2, u;
	json_t *root;
	bool same;
	int lines;

	if (!tap_int(pw_simulate(p, s, &t, &err), PW_OK, "simulate the "
	    "offload schedule") ||
	    !tap_int(pw_schedule_write(path, p, s, t, &err), PW_OK,
	    "write it") ||
	    !tap_int(pw_schedule_read(path, &q, &ops2, &n2, NULL, &err), PW_OK,
	    "read it back")) {
		tap_diag("%s", err.msg);
		goto out;
	}
	tap_ok(same_problem(p, q, why, sizeof why), "its problem round-trips "
	    "(%s)", why);
	ops = pw_timed_ops(p, s, t, &n);
	tap_int((long long)n2, (long long)n, "every op is written");
	for (i = 0, same = n == n2; i < n && same; i++)
		same = same_timed(&ops[i], &ops2[i]);
	tap_ok(same, "ops read back exactly as timed, in start order, with "
	    "the anchors");
	if (tap_int(pw_schedule_from_timed(q, ops2, n2, &s2, &err), PW_OK,
	    "rebuild the schedule from the file") &&
	    tap_int(pw_simulate(q, s2, &t2, &err), PW_OK, "simulate it")) {
		u = pw_op_universe(p);
		for (i = 0, same = true; i < u && same; i++)
			same = pw_timing_has(t, i) == pw_timing_has(t2, i) &&
			    (!pw_timing_has(t, i) ||
			    (t->start[i] == t2->start[i] &&
			    t->end[i] == t2->end[i]));
		tap_ok(same, "the rebuilt schedule times exactly the same");
	}

	m = pw_metrics_compute(p, s, t);
	root = json_load_file(path, 0, NULL);
	tap_str(json_string_value(json_object_get(root, "family")), "handmade",
	    "the family is written");
	tap_ok(json_real_value(jpath(root, "metrics", -1, "makespan")) ==
	    m->makespan && json_array_size(jpath(root, "metrics", -1,
	    "peak")) == 2, "metrics are written for other tools");
	json_object_set_new(root, "metrics", json_string("stale"));
	json_dump_file(root, edited, 0);
	json_decref(root);
	pw_problem_free(q);
	free(ops2);
	tap_int(pw_schedule_read(edited, &q, &ops2, &n2, NULL, &err), PW_OK,
	    "metrics are never read back");

	text = test_read_file(path);
	for (lines = 0, line = text; line != NULL && (line = strstr(line,
	    "\"start\"")) != NULL; line++)
		lines++;
	tap_int(lines, (long long)n, "one op per line");
	tap_ok(text != NULL && strstr(text, "\"after\": {\"kind\": \"F\", "
	    "\"stage\": 0, \"mb\": 1}") != NULL, "the anchor as \"after\"");
	tap_ok(text != NULL && strstr(text, "\"after\": {\"kind\": \"B\", "
	    "\"stage\": 0, \"mb\": 0, \"at\": \"end\"}") != NULL,
	    "an anchor at an op's end with \"at\": \"end\"");
	free(text);
out:
	pw_metrics_free(m);
	pw_timing_free(t);
	pw_timing_free(t2);
	pw_schedule_free(s);
	pw_schedule_free(s2);
	pw_problem_free(p);
	pw_problem_free(q);
	free(ops);
	free(ops2);
	free(path);
	free(edited);
}

static void
remove_tmpdir(void)
{
	struct dirent *de;
	char *path;
	DIR *d;

	if ((d = opendir(tmpdir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		path = tmp_path(de->d_name);
		unlink(path);
		free(path);
	}
	closedir(d);
	rmdir(tmpdir);
}

/* TEXT, a schedule file as written without pins, with PINS (a JSON
 * value's text) as its last member: a string the caller frees. */
static char *
with_pins(const char *text, const char *pins)
{
	size_t n = strlen(text);

	if (n < 3 || strcmp(text + n - 3, "\n}\n") != 0)
		abort();
	return pw_xasprintf("%.*s,\n  \"pins\": %s\n}\n", (int)(n - 3), text,
	    pins);
}

static bool
same_pin(const struct pw_pin *a, const struct pw_pin *b)
{
	return a->before.kind == b->before.kind &&
	    a->before.stage == b->before.stage &&
	    a->before.mb == b->before.mb && a->after.kind == b->after.kind &&
	    a->after.stage == b->after.stage && a->after.mb == b->after.mb;
}

/* Frees what a read gave and clears it for the next. */
static void
release(struct pw_problem **p, struct pw_timed_op **ops, struct pw_pin **pins)
{
	pw_problem_free(*p);
	free(*ops);
	free(*pins);
	*p = NULL;
	*ops = NULL;
	*pins = NULL;
}

/* A pinned file read wrong (beyond tests/data/bad's): its text is the
 * pinless file's with PINS. */
static const struct pin_bad {
	const char *pins;
	const char *want;	/* after "FILE: " */
} pin_bads[] = {
	{ "3", "pins: must be an array (got 3)" },
	{ "[1]", "pins[0]: must be an object (got 1)" },
	{ "[{\"before\": {\"kind\": \"F\", \"stage\": 0, \"mb\": 0}}]",
	    "pins[0]: missing field \"after\"" },
	{ "[{\"before\": [], \"after\": {}}]",
	    "pins[0].before: must be an object (got [])" },
	{ "[{\"before\": {\"kind\": \"F\", \"stage\": 0, \"mb\": 2}, "
	    "\"after\": {\"kind\": \"B\", \"stage\": 0, \"mb\": 1}}]",
	    "pins[0].before.mb: microbatch 2 does not exist "
	    "(microbatches = 2)" },
	{ "[{\"before\": {\"kind\": \"X\", \"stage\": 0, \"mb\": 0}, "
	    "\"after\": {\"kind\": \"B\", \"stage\": 0, \"mb\": 1}}]",
	    "pins[0].before.kind: must be F, B, W, BW, OFFLOAD or RELOAD "
	    "(got \"X\")" },
	{ "[{\"before\": {\"kind\": \"W\", \"stage\": 1, \"mb\": 1}, "
	    "\"after\": {\"kind\": \"W\", \"stage\": 1, \"mb\": 1}}]",
	    "pins[0]: W(1,1) and W(1,1) are one op" },
	{ "[{\"before\": {\"kind\": \"W\", \"stage\": 1, \"mb\": 0}, "
	    "\"after\": {\"kind\": \"BW\", \"stage\": 1, \"mb\": 0}}]",
	    "pins[0]: W(1,0) cannot come before BW(1,0), which it depends on" },
	{ "[{\"before\": {\"kind\": \"B\", \"stage\": 1, \"mb\": 1}, "
	    "\"after\": {\"kind\": \"F\", \"stage\": 1, \"mb\": 1}}]",
	    "pins[0]: B(1,1) cannot come before F(1,1), which it depends on" },
};

/* Pins in schedule files: written after the ops, one per line, read
 * back wherever they stand, absent without a byte of difference, and
 * refused with the file and the field named. */
static void
test_pins(void)
{
	static const struct pw_pin pins[2] = {
		{ { PW_F, 0, 1 }, { PW_B, 0, 0 } },
		{ { PW_W, 1, 1 }, { PW_F, 1, 0 } },
	};
	static const char pins_text[] = "[\n"
	    "    {\"before\": {\"kind\": \"F\", \"stage\": 0, \"mb\": 1}, "
	    "\"after\": {\"kind\": \"B\", \"stage\": 0, \"mb\": 0}},\n"
	    "    {\"before\": {\"kind\": \"W\", \"stage\": 1, \"mb\": 1}, "
	    "\"after\": {\"kind\": \"F\", \"stage\": 1, \"mb\": 0}}\n  ]";
	struct pw_problem *p, *q = NULL;
	struct pw_schedule *s = offload_schedule(&p);
	struct pw_timing *t = NULL;
	struct pw_timed_op *ops = NULL, *ops2 = NULL;
	struct pw_pin *back = NULL, bad = { { PW_F, 0, 0 }, { PW_B, 9, 0 } };
	struct pw_error err;
	char *plain = tmp_path("plain.json"), *none = tmp_path("none.json");
	char *pinned = tmp_path("pinned.json"), *edited = tmp_path("e.json");
	char *t1 = NULL, *t2 = NULL, *t3 = NULL, *want, *text;
	size_t i, n, n2, nback = 7;
	bool same;
	int before;

	if (!tap_int(pw_simulate(p, s, &t, &err), PW_OK, "pins: simulate") ||
	    !tap_int(pw_schedule_write(plain, p, s, t, &err), PW_OK,
	    "pins: write without pins") ||
	    !tap_int(pw_schedule_write_with(none, p, s, t, NULL, 0, NULL,
	    &err),
	    PW_OK, "pins: write with no pins") ||
	    !tap_int(pw_schedule_write_with(pinned, p, s, t, pins, 2, NULL,
	    &err),
	    PW_OK, "pins: write two pins")) {
		tap_diag("%s", err.msg);
		goto out;
	}
	t1 = test_read_file(plain);
	t2 = test_read_file(none);
	t3 = test_read_file(pinned);
	tap_str(t2, t1, "pins: none written is the file as before pins");
	text = with_pins(t1, pins_text);
	tap_str(t3, text, "pins: after the ops, one pin per line");
	free(text);

	if (tap_int(pw_file_read_pins(pinned, &q, &ops, &n, &back, &nback, NULL,
	    &err), PW_OK, "pins: read back")) {
		tap_int((long long)nback, 2, "pins: both read");
		tap_ok(nback == 2 && same_pin(&back[0], &pins[0]) &&
		    same_pin(&back[1], &pins[1]), "pins: the same pins");
		tap_ok(pw_problem_same(p, q), "pins: the same problem");
	}
	release(&q, &ops2, &back);
	if (tap_int(pw_schedule_read(plain, &q, &ops2, &n2, NULL, &err), PW_OK,
	    "pins: read the plain file")) {
		for (i = 0, same = n == n2 && n > 0; i < n && same; i++)
			same = same_timed(&ops[i], &ops2[i]);
		tap_ok(same, "pins: the pinned file's ops are the plain one's");
	}
	release(&q, &ops2, &back);
	/* The problem and the pins alone, the ops skipped. */
	if (tap_int(pw_file_read_pins(pinned, &q, NULL, NULL, &back, &nback,
	    NULL, &err), PW_OK, "pins: read without the ops"))
		tap_ok(pw_problem_same(p, q) && nback == 2 &&
		    same_pin(&back[0], &pins[0]) && same_pin(&back[1], &pins[1]),
		    "pins: the same problem and pins");
	release(&q, &ops2, &back);
	/* The readers without pins read a pinned file. */
	tap_int(pw_schedule_read(pinned, &q, &ops2, &n2, NULL, &err), PW_OK,
	    "pins: pw_schedule_read reads a pinned file");
	tap_int((long long)n2, (long long)n, "pins: and all its ops");
	release(&q, &ops2, &back);
	nback = 7;
	back = (struct pw_pin *)&nback;
	tap_int(pw_file_read_pins(plain, &q, &ops2, &n2, &back, &nback,
	    NULL, &err), PW_OK, "pins: a file without pins");
	tap_ok(back == NULL && nback == 0, "pins: has none");
	release(&q, &ops2, &back);

	/* Pins before the ops, the way a tool sorting keys writes them. */
	text = member_first(pinned, "pins");
	tap_ok(strncmp(text, "{\"pins\": [", 10) == 0, "pins: moved first");
	spew(edited, text);
	free(text);
	if (tap_int(pw_file_read_pins(edited, &q, &ops2, &n2, &back, &nback,
	    NULL, &err), PW_OK, "pins: read with the pins first"))
		tap_ok(nback == 2 && n2 == n && same_pin(&back[0], &pins[0]) &&
		    same_pin(&back[1], &pins[1]), "pins: the same pins and ops");
	release(&q, &ops2, &back);

	/* A problem file has no pins. */
	if (tap_int(pw_problem_write(edited, p, &err), PW_OK,
	    "pins: write a problem file") &&
	    tap_int(pw_file_read_pins(edited, &q, &ops2, &n2, &back, &nback,
	    NULL, &err), PW_OK, "pins: read the problem file"))
		tap_ok(ops2 == NULL && back == NULL && nback == 0,
		    "pins: no ops, no pins");
	pw_problem_free(q);
	q = NULL;

	for (i = 0; i < sizeof pin_bads / sizeof pin_bads[0]; i++) {
		text = with_pins(t1, pin_bads[i].pins);
		spew(edited, text);
		free(text);
		tap_int(pw_file_read_pins(edited, &q, &ops2, &n2, &back,
		    &nback, NULL, &err), PW_ERR_INPUT, "pins: bad %zu refused",
		    i);
		want = pw_xasprintf("%s: %s", edited, pin_bads[i].want);
		tap_str(err.msg, want, "pins: bad %zu named", i);
		free(want);
		tap_ok(q == NULL && ops2 == NULL && back == NULL,
		    "pins: bad %zu gives nothing", i);
	}
	/* The plain readers refuse them too: one reader. */
	tap_int(pw_schedule_read(edited, &q, &ops2, &n2, NULL, &err),
	    PW_ERR_INPUT, "pins: pw_schedule_read refuses a bad pin");

	/* What could not be read back is not written. */
	before = count_entries(tmpdir);
	unlink(edited);
	before--;
	tap_int(pw_schedule_write_with(edited, p, s, t, &bad, 1, NULL,
	    &err),
	    PW_ERR_INPUT, "pins: a bad pin is not written");
	want = pw_xasprintf("%s: pins[0].after.stage: stage 9 does not exist "
	    "(stages = 2)", edited);
	tap_str(err.msg, want, "pins: the writer names it");
	free(want);
	tap_int(count_entries(tmpdir), before, "pins: no file left behind");
out:
	unlink(plain);
	unlink(none);
	unlink(pinned);
	unlink(edited);
	free(plain);
	free(none);
	free(pinned);
	free(edited);
	free(t1);
	free(t2);
	free(t3);
	free(ops);
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* A schedule file's "family" reads back with its ops, wherever it
 * stands; none is NULL, and anything but a string is refused. */
static void
test_family(void)
{
	static const char written[] = "\"family\": \"zb-h1\"";
	static char stale[] = "stale";	/* the reader must overwrite it */
	struct pw_problem *def = pw_problem_default(), *used, *p = NULL;
	struct pw_schedule *s;
	struct pw_timing *t;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	char *path = tmp_path("family.json"), *edited = tmp_path("fam2.json");
	char *text, *at, *family = NULL, *want, *unit, *bad;
	size_t n;

	if (!tap_int(pw_family_build(pw_family_find("zb-h1"), def, &used, &s,
	    &err), PW_OK, "family: build zb-h1") ||
	    !tap_int(pw_simulate(used, s, &t, &err), PW_OK,
	    "family: simulate it"))
		return;
	free(s->family);
	s->family = pw_xstrdup("zb-h1");
	if (!tap_int(pw_schedule_write(path, used, s, t, &err), PW_OK,
	    "family: write it"))
		return;
	if (tap_int(pw_schedule_read(path, &p, &ops, &n, &family, &err), PW_OK,
	    "family: read back"))
		tap_str(family, "zb-h1", "family: as written");
	pw_problem_free(p);
	free(ops);
	free(family);

	/* With the ops first, after them in the text. */
	text = member_first(path, "ops");
	spew(edited, text);
	free(text);
	family = NULL;
	if (tap_int(pw_file_read(edited, &p, &ops, &n, &family, &err), PW_OK,
	    "family: read after the ops"))
		tap_str(family, "zb-h1", "family: the same");
	pw_problem_free(p);
	free(ops);
	free(family);

	text = test_read_file(path);
	at = strstr(text, written);
	if (!tap_ok(at != NULL, "family: the file has it"))
		goto out;
	bad = pw_xasprintf("%.*s\"family\": 5%s", (int)(at - text), text,
	    at + sizeof written - 1);
	spew(edited, bad);
	free(bad);
	tap_int(pw_schedule_read(edited, &p, &ops, &n, &family, &err),
	    PW_ERR_INPUT, "family: a number is refused");
	want = pw_xasprintf("%s: family: must be a string (got 5)", edited);
	tap_str(err.msg, want, "family: the error names the field");
	free(want);
	tap_ok(p == NULL && ops == NULL && family == NULL,
	    "family: nothing given on the error");
	bad = pw_xasprintf("%.*s\"comment\": 1%s", (int)(at - text), text,
	    at + sizeof written - 1);
	spew(edited, bad);
	free(bad);
	family = stale;
	if (tap_int(pw_schedule_read(edited, &p, &ops, &n, &family, &err),
	    PW_OK, "family: a file without one reads"))
		tap_ok(family == NULL, "family: none is NULL");
	pw_problem_free(p);
	free(ops);
	unit = pw_xasprintf("%s/unit4x8.json", examples);
	family = stale;
	if (tap_int(pw_file_read(unit, &p, &ops, &n, &family, &err), PW_OK,
	    "family: a problem file reads"))
		tap_ok(family == NULL && ops == NULL,
		    "family: a problem file has none");
	pw_problem_free(p);
	free(unit);
out:
	free(text);
	unlink(edited);
	unlink(path);
	free(edited);
	free(path);
	pw_schedule_free(s);
	pw_timing_free(t);
	pw_problem_free(used);
	pw_problem_free(def);
}

/* No text over 1 MiB: the reader stops at the string that passes it,
 * naming where it starts; the writer refuses such a name. */
static void
test_long_text(void)
{
	struct pw_problem *p = pw_problem_default(), *q;
	struct pw_error err;
	char *path = tmp_path("long.json"), *name, *text, *want;
	size_t n = PW_TEXT_MAX;

	name = pw_xmalloc(n + 2);
	memset(name, 'x', n + 1);
	name[n] = '\0';
	free(p->name);
	p->name = name;
	if (tap_int(pw_problem_write(path, p, &err), PW_OK,
	    "long text: a name of 1 MiB is written")) {
		q = pw_problem_read(path, &err);
		tap_ok(q != NULL && strcmp(q->name, name) == 0,
		    "long text: ... and read back");
		pw_problem_free(q);
	}
	name[n] = 'x';
	name[n + 1] = '\0';
	tap_int(pw_problem_write(path, p, &err), PW_ERR_INPUT,
	    "long text: a byte more is not written");
	want = pw_xasprintf("%s: name: longer than 1 MiB", path);
	tap_str(err.msg, want, "long text: ... naming the field");
	free(want);
	text = pw_xasprintf("{\"format\": \"pipewright.problem.v1\",\n"
	    "  \"name\": \"%s\"}\n", name);
	spew(path, text);
	tap_ok(pw_problem_read(path, &err) == NULL,
	    "long text: the reader refuses it");
	want = pw_xasprintf("%s: line 2 column 11: a string longer than 1 MiB "
	    "(no field needs one)", path);
	tap_str(err.msg, want, "long text: ... where it starts");
	free(want);
	free(text);
	/* Counted as decoded, as the writer counts: 1 MiB of quotes is
	 * 2 MiB written. */
	memset(name, '"', n);
	name[n] = '\0';
	if (tap_int(pw_problem_write(path, p, &err), PW_OK,
	    "long text: 1 MiB of quotes is written")) {
		q = pw_problem_read(path, &err);
		tap_ok(q != NULL && strcmp(q->name, name) == 0,
		    "long text: ... and read back (%s)", q != NULL ? "" :
		    err.msg);
		pw_problem_free(q);
	}
	/* yajl's time grows with a number's length as with a string's. */
	text = pw_xasprintf("{\"format\": \"pipewright.problem.v1\",\n"
	    "  \"devices\": 0.%04097d}\n", 0);
	spew(path, text);
	tap_ok(pw_problem_read(path, &err) == NULL,
	    "long text: a number of 4100 characters is refused");
	want = pw_xasprintf("%s: line 2 column 14: a number longer than 4096 "
	    "characters (no field needs one)", path);
	tap_str(err.msg, want, "long text: ... where it starts");
	free(want);
	free(text);
	unlink(path);
	free(path);
	pw_problem_free(p);
}

/* Transfers that take no time on a channel two devices share tie too:
 * the channel's order is kept, not its devices'. */
static void
test_zero_time_channel(void)
{
	static const char csv[] = "0F0,0B0\n1F0,1B0\n1O0,0O0,1R0,0R0\n";
	struct pw_problem *p = pw_problem_new(2, 2, 1), *q = NULL;
	struct pw_schedule *s = NULL, *back = NULL;
	struct pw_timing *t = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_error err;
	char *path = tmp_path("channel.json");
	FILE *fp = fmemopen((void *)csv, strlen(csv), "r");
	size_t n;
	int k;

	pw_problem_place_loop(p, &err);
	for (k = 0; k < 2; k++) {
		p->stages[k].f = p->stages[k].b = p->stages[k].w = 1;
		p->stages[k].act = 1;
		p->stages[k].offload = 1;
	}
	pw_problem_set_link(p, 1e300, 1e300, 0, false);
	p->link.ngroups = 1;
	p->link.group[0] = p->link.group[1] = 0;
	if (tap_int(pw_torch_read(fp, "channel.csv", p, &s, &err), PW_OK,
	    "shared channel: the orders") &&
	    tap_int(pw_simulate(p, s, &t, &err), PW_OK, "shared channel: "
	    "they time") &&
	    tap_int(pw_schedule_write(path, p, s, t, &err), PW_OK,
	    "shared channel: written") &&
	    tap_int(pw_schedule_read(path, &q, &ops, &n, NULL, &err), PW_OK,
	    "shared channel: read") &&
	    tap_int(pw_schedule_from_timed(q, ops, n, &back, &err), PW_OK,
	    "shared channel: rebuilt")) {
		tap_ok(t->start[pw_op_index(p, s->channel[0].ops[0])] ==
		    t->end[pw_op_index(p, s->channel[0].ops[3])],
		    "shared channel: its four transfers take no time");
		tap_ok(test_same_schedule(back, s), "shared channel: its "
		    "order read back, device 1's transfer first");
	} else
		tap_diag("%s", err.msg);
	fclose(fp);
	pw_schedule_free(back);
	pw_schedule_free(s);
	pw_timing_free(t);
	pw_problem_free(q);
	pw_problem_free(p);
	free(ops);
	free(path);
}

/* A W listed before its B and another microbatch's F between them: the
 * W goes right after its B, not into the B's place ahead of that F,
 * which would deadlock with device 1's order. */
static void
test_zero_time_listed_early(void)
{
	static const struct pw_op listed[] = {
		{ PW_F, 0, 0 }, { PW_W, 0, 0 }, { PW_F, 0, 1 }, { PW_B, 0, 0 },
		{ PW_B, 0, 1 }, { PW_W, 0, 1 },
		{ PW_F, 1, 0 }, { PW_F, 1, 1 }, { PW_B, 1, 0 }, { PW_W, 1, 0 },
		{ PW_B, 1, 1 }, { PW_W, 1, 1 },
	};
	struct pw_stage st = { .act = 1, .hold = 1 };
	struct pw_problem *p = test_problem_uniform(2, 1, 2, PW_PLACE_LOOP,
	    &st);
	struct pw_timed_op ops[12];
	struct pw_schedule *s = NULL;
	struct pw_timing *t = NULL;
	struct pw_error err;
	char *order;
	size_t i;

	for (i = 0; i < 12; i++)
		ops[i] = (struct pw_timed_op){ .op = listed[i],
		    .device = listed[i].stage };
	if (tap_int(pw_schedule_from_timed(p, ops, 12, &s, &err), PW_OK,
	    "listed early: rebuilt")) {
		order = test_order(&s->device[0]);
		tap_str(order, "F(0,0) F(0,1) B(0,0) W(0,0) B(0,1) W(0,1)",
		    "listed early: W(0,0) right after its B, F(0,1) kept "
		    "before them");
		free(order);
		if (!tap_int(pw_simulate(p, s, &t, &err), PW_OK,
		    "listed early: it runs"))
			tap_diag("%s", err.msg);
	}
	pw_timing_free(t);
	pw_schedule_free(s);
	pw_problem_free(p);
}

/* pw_json_print: indented, a newline after, the value taken. */
static void
test_json_print(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	tap_int(pw_json_print(fp, json_pack("{s:i, s:[i, i]}", "a", 1, "b", 2,
	    3)), PW_OK, "json print: ok");
	fclose(fp);
	tap_str(buf, "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ]\n}\n",
	    "json print: indented, with a newline");
	free(buf);
}

/* Reverses, among OPS[N] that start and end together, each device's ops
 * of one microbatch in the places they take: W before its B before its
 * F, as a file may list ops taking no time. */
static void
scramble_ties(struct pw_timed_op *ops, size_t n)
{
	size_t i, j, a, b, lo, hi, *at = calloc(n, sizeof *at), k;
	bool *seen = calloc(n, sizeof *seen);
	struct pw_timed_op tmp;

	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && ops[j].start == ops[i].start &&
		    ops[j].end == ops[i].end; j++)
			;
		for (a = i; a < j; a++) {
			if (seen[a])
				continue;
			for (k = 0, b = a; b < j; b++)
				if (ops[b].device == ops[a].device &&
				    ops[b].op.mb == ops[a].op.mb) {
					seen[b] = true;
					at[k++] = b;
				}
			for (lo = 0, hi = k - 1; lo < hi; lo++, hi--) {
				tmp = ops[at[lo]];
				ops[at[lo]] = ops[at[hi]];
				ops[at[hi]] = tmp;
			}
		}
	}
	free(seen);
	free(at);
}

/* Whether SCHED, simulated on P, starts and ends every op of OPS[N] when
 * they say. */
static bool
times_as_stated(const struct pw_problem *p, const struct pw_schedule *sched,
    const struct pw_timed_op *ops, size_t n)
{
	struct pw_timing *t = NULL;
	struct pw_error err;
	size_t i, idx;
	bool same;

	if (pw_simulate(p, sched, &t, &err) != PW_OK) {
		tap_diag("%s", err.msg);
		return false;
	}
	for (i = 0, same = true; i < n && same; i++) {
		idx = pw_op_index(p, ops[i].op);
		same = t->start[idx] == ops[i].start && t->end[idx] == ops[i].end;
	}
	pw_timing_free(t);
	return same;
}

/* Ops that take no time start and end together; a schedule file keeps
 * their order on each device and channel, so every family's orders read
 * back as built, with no costs at all and with W taking none.  Listed
 * against their dependencies (W before its own B), they are put back in
 * an order that keeps them, which runs as stated. */
static void
test_zero_time_ties(void)
{
	struct pw_stage st = { .f = 0, .b = 0, .w = 0, .act = 1, .hold = 1 };
	struct pw_problem *probs[2];
	const struct pw_schedule *built;
	struct pw_schedule *back = NULL;
	struct pw_problem *q = NULL;
	struct pw_timed_op *ops = NULL;
	struct pw_plan *plan;
	struct pw_error err;
	char *path = tmp_path("ties.json");
	size_t f, n;
	int k, tried = 0, kept = 0, untangled = 0;

	probs[0] = test_problem_uniform(4, 1, 4, PW_PLACE_LOOP, &st);
	st.f = 1;
	st.b = 1;
	probs[1] = test_problem_uniform(4, 1, 4, PW_PLACE_LOOP, &st);
	for (k = 0; k < 2; k++)
		for (f = 0; f < pw_nfamilies; f++) {
			if (pw_plan_family(&pw_families[f], probs[k], &plan,
			    &err) != PW_OK)
				continue;
			tried++;
			built = pw_plan_schedule(plan);
			if (pw_schedule_write(path, pw_plan_problem(plan),
			    built, pw_plan_timing(plan), &err) == PW_OK &&
			    pw_schedule_read(path, &q, &ops, &n, NULL,
			    &err) == PW_OK && pw_schedule_from_timed(q, ops, n,
			    &back, &err) == PW_OK &&
			    test_same_schedule(back, built))
				kept++;
			else
				tap_diag("%s, %s: %s", pw_families[f].name,
				    k == 0 ? "no costs" : "W taking no time",
				    back == NULL ? err.msg :
				    "another order read back");
			pw_schedule_free(back);
			back = NULL;
			if (ops != NULL) {
				scramble_ties(ops, n);
				if (pw_schedule_from_timed(q, ops, n, &back,
				    &err) == PW_OK && times_as_stated(q, back,
				    ops, n))
					untangled++;
				else
					tap_diag("%s, %s: listed against its "
					    "dependencies, it does not run as "
					    "stated", pw_families[f].name,
					    k == 0 ? "no costs" :
					    "W taking no time");
			}
			pw_schedule_free(back);
			pw_problem_free(q);
			free(ops);
			back = NULL;
			q = NULL;
			ops = NULL;
			pw_plan_free(plan);
		}
	tap_ok(tried >= 2 * 10, "zero-time ties: %d family schedules built",
	    tried);
	tap_int(kept, tried, "zero-time ties: every one reads back in its "
	    "orders");
	tap_int(untangled, tried, "zero-time ties: every one listed against "
	    "its dependencies runs as stated");
	pw_problem_free(probs[0]);
	pw_problem_free(probs[1]);
	free(path);
}

int
main(void)
{
	if ((testdata = getenv("TESTDATA")) == NULL)
		testdata = "tests/data";
	if ((examples = getenv("EXAMPLES")) == NULL)
		examples = "examples";
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_problem_roundtrip();
	test_groups();
	test_default();
	test_origin();
	test_origin_fields();
	test_examples();
	test_foreign_schedule();
	test_bad_inputs();
	test_unreadable();
	test_atomic();
	test_text();
	test_ops_first();
	test_schedule_roundtrip();
	test_zero_time_ties();
	test_zero_time_channel();
	test_zero_time_listed_early();
	test_json_print();
	test_pins();
	test_family();
	test_long_text();
	remove_tmpdir();
	return tap_done();
}
