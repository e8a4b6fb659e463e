/*
 * test_lua.c - the Lua scripting subsystem: problems built by scripts
 * against the same problems built in C, cost overrides, schedule objects,
 * the writers, and every sandbox refusal with the exact shape of its error
 * (file:line, then the traceback).
 *
 * Runs in a fresh temporary directory (scripts write below the current
 * one); make check sets EXAMPLES for examples/default.lua.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "pipewright.h"
#include "pwlua_int.h"
#include "tap.h"
#include "testlib.h"

/* test_tiny_model and test_toy_hw (testlib.h) as a script builds them. */
#define TINY_MODEL \
	"local tiny = pw.model.gpt{ name = 'tiny', layers = 4, hidden = 16," \
	" heads = 2, seq = 8, vocab = 100, micro_batch = 2," \
	" flash_attention = false }\n" \
	"local toy = pw.hardware{ name = 'toy', peak_flops = 1048576," \
	" efficiency = 0.5, memory = 1e9, pcie_d2h = 64, pcie_h2d = 32," \
	" pcie_latency = 0.125, p2p_bandwidth = 1024, p2p_latency = 0.25 }\n"

/* The unit problem: 4 devices, 8 microbatches, F = B = W = 1. */
#define UNIT_STAGE "{ f = 1, b = 1, w = 1, act = 1, hold = 0.5 }"
#define UNIT_SPEC \
	"{ devices = 4, microbatches = 8, stages = { " UNIT_STAGE ", " \
	UNIT_STAGE ", " UNIT_STAGE ", " UNIT_STAGE " }"

/* A script's first lines, P: 4 devices whose limits only offloading
 * meets (tests/data/plan_on_moves_nothing.json's problem). */
#define TIGHT_LINK_PROBLEM \
	"local function st() return { f = 1, b = 1, w = 1, act = 1, hold =" \
	" 0.5, offload = 1 } end\n" \
	"local p = pw.problem{ devices = 4, microbatches = 8, comm = 0.25," \
	" stages = { st(), st(), st(), st() }, static = { 1, 0, 0, 0 }," \
	" memory_limit = { 2, 1.5, 1, 1 }, link = { d2h = 4, h2d = 4," \
	" latency = 0.1, groups = { { 1, 2 }, { 3, 4 } } } }\n"

static char tmpdir[PATH_MAX];

static void
write_file(const char *name, const char *text)
{
	FILE *fp = fopen(name, "w");

	if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) != 0) {
		perror(name);
		exit(99);
	}
}

/* The number of entries in the current directory besides . and .. */
static int
count_entries(void)
{
	struct dirent *e;
	DIR *dir = opendir(".");
	int n = 0;

	while ((e = readdir(dir)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(dir);
	return n;
}

/* Writes TEXT (unless NULL) to NAME and runs it in LUA; the result and
 * ERR. */
static int
run_text(struct pwlua *lua, const char *name, const char *text,
    struct pw_error *err)
{
	if (text != NULL)
		write_file(name, text);
	err->msg[0] = '\0';
	return pwlua_run(lua, name, 0, NULL, err);
}

/* Runs TEXT in a fresh interpreter that may write below ".", expecting
 * success (the script checks itself with assert). */
static void
script_ok(const char *name, const char *text, const char *what)
{
	const char *dirs[] = { ".", NULL };
	const struct pwlua_config config = { 0, 0, dirs, 0, NULL };
	struct pwlua *lua = pwlua_new(&config, NULL);
	struct pw_error err;

	if (!tap_int(run_text(lua, name, text, &err), PW_OK, "%s", what))
		tap_diag("%s", err.msg);
	pwlua_free(lua);
}

/* Runs TEXT in a fresh interpreter with CONFIG, expecting RC and the
 * message WANT exactly. */
static void
script_fails(const struct pwlua_config *config, const char *name,
    const char *text, int rc, const char *want, const char *what)
{
	struct pw_error err;
	struct pwlua *lua = pwlua_new(config, &err);

	if (!tap_ok(lua != NULL, "%s: the interpreter starts", what)) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_int(run_text(lua, name, text, &err), rc, "%s: fails", what);
	tap_str(err.msg, want, "%s: the message", what);
	pwlua_free(lua);
}

/* The problem the script TEXT returns, or NULL after a failed check. */
static struct pw_problem *
script_problem(const char *name, const char *text)
{
	struct pw_problem *p;
	struct pw_error err;

	write_file(name, text);
	if ((p = pwlua_problem_read(name, NULL, NULL, &err)) == NULL)
		tap_diag("%s", err.msg);
	return p;
}

static bool
same_origin(const struct pw_origin *a, const struct pw_origin *b)
{
	const struct pw_model *ma = &a->model, *mb = &b->model;
	const struct pw_hardware *ha = &a->hardware, *hb = &b->hardware;

	return strcmp(ma->name, mb->name) == 0 && ma->layers == mb->layers &&
	    ma->hidden == mb->hidden && ma->heads == mb->heads &&
	    ma->kv_heads == mb->kv_heads && ma->ffn == mb->ffn &&
	    ma->seq == mb->seq && ma->vocab == mb->vocab &&
	    ma->micro_batch == mb->micro_batch &&
	    ma->flash_attention == mb->flash_attention &&
	    ma->recompute == mb->recompute &&
	    strcmp(ha->name, hb->name) == 0 &&
	    ha->peak_flops == hb->peak_flops &&
	    ha->efficiency == hb->efficiency && ha->memory == hb->memory &&
	    ha->pcie_d2h == hb->pcie_d2h && ha->pcie_h2d == hb->pcie_h2d &&
	    ha->pcie_latency == hb->pcie_latency &&
	    ha->p2p_bandwidth == hb->p2p_bandwidth &&
	    ha->p2p_latency == hb->p2p_latency &&
	    a->split.devices == b->split.devices &&
	    a->split.chunks == b->split.chunks &&
	    a->split.placement == b->split.placement &&
	    a->split.microbatches == b->split.microbatches &&
	    a->split.memory_limit == b->split.memory_limit &&
	    a->split.offload == b->split.offload &&
	    (a->split.layers_per_stage == NULL) ==
	    (b->split.layers_per_stage == NULL);
}

/* examples/default.lua is the built-in default problem, exactly. */
static void
test_default(void)
{
	const char *examples = getenv("EXAMPLES");
	struct pw_problem *p, *want = pw_problem_default();
	struct pw_error err;
	char path[PATH_MAX];

	if (examples == NULL) {
		tap_skip("EXAMPLES is not set (run by make check)",
		    "examples/default.lua is the default problem");
		pw_problem_free(want);
		return;
	}
	snprintf(path, sizeof path, "%s/default.lua", examples);
	if (!tap_ok((p = pwlua_problem_read(path, NULL, NULL, &err)) != NULL,
	    "examples/default.lua reads")) {
		tap_diag("%s", err.msg);
		pw_problem_free(want);
		return;
	}
	tap_ok(pw_problem_same(p, want), "default.lua: the default problem");
	tap_str(p->name, want->name, "default.lua: its name");
	tap_ok(p->origin != NULL && same_origin(p->origin, want->origin),
	    "default.lua: its origin");
	pw_problem_free(p);
	pw_problem_free(want);
}

/* A model problem built by a script equals the one pw_cost_problem
 * builds, origin included. */
static void
test_model_problem(void)
{
	const struct pw_split split = {
		.devices = 2, .chunks = 2, .placement = PW_PLACE_V,
		.microbatches = 4, .layers_per_stage = NULL,
		.memory_limit = 5e8, .offload = true,
	};
	struct pw_problem *p, *want;
	struct pw_error err;

	p = script_problem("model.lua", TINY_MODEL
	    "return pw.problem{ model = tiny, hardware = toy, devices = 2,\n"
	    "  placement = 'v', microbatches = 4, memory_limit = 5e8,\n"
	    "  offload = true }\n");
	if (!tap_int(pw_cost_problem(&test_tiny_model, &test_toy_hw, &split, &want, &err), PW_OK,
	    "the C model problem builds"))
		tap_diag("%s", err.msg);
	if (p != NULL && want != NULL) {
		tap_ok(pw_problem_same(p, want), "script model problem: same "
		    "stages, memory and link as pw_cost_problem's");
		tap_str(p->name, "tiny-2xtoy", "script model problem: name");
		tap_ok(p->origin != NULL && same_origin(p->origin,
		    want->origin), "script model problem: same origin");
		tap_int(p->nstages, 4, "V placement: 2 chunks per device");
		tap_int(p->stages[3].device, 0, "V: stage 3 on device 0");
	}
	pw_problem_free(p);
	pw_problem_free(want);

	/* Presets and overrides: pw.model "x" { ... } is the preset with
	 * those fields changed. */
	script_ok("presets.lua",
	    "local m = pw.model 'gpt3-6.7b' { seq = 4096 }\n"
	    "assert(m.seq == 4096 and m.layers == 32 and m.hidden == 4096)\n"
	    "assert(m.name == 'gpt3-6.7b' and m.recompute == 'none')\n"
	    /* The command line's word is read too; the files' is shown. */
	    "local r = pw.model 'gpt3-6.7b' { recompute = 'selective' }\n"
	    "assert(r.recompute == 'pipeoffload')\n"
	    "local h = pw.hardware 'H100-SXM' { efficiency = 0.25 }\n"
	    "assert(h.efficiency == 0.25 and h.peak_flops == 989e12)\n"
	    "assert(pw.hardware 'h100-sxm'.efficiency == 0.5)\n"
	    "assert(#pw.model.presets == 18 and #pw.hardware.presets == 3)\n"
	    "local l = pw.model 'llama3-8b'\n"
	    "assert(l.gated_mlp and not l.tied_embeddings and l.ffn == 14336)\n"
	    "local u = pw.model{ layers = 2, hidden = 8, heads = 2, seq = 4,\n"
	    "  vocab = 10 }\n"
	    "assert(u.flash_attention and not u.gated_mlp and\n"
	    "  not u.tied_embeddings)\n"
	    "assert(pw.GiB == 2^30 and pw.GB == 1e9 and pw.ms == 1e-3)\n",
	    "presets, overrides and units");
	/* A layer count a float holds whole (a division's 6.0) is one;
	 * 2^40 is no count, whatever an int would make of it. */
	script_ok("split_whole.lua",
	    "local spec = { model = 'gpt3-1.3b', hardware = 'H100-SXM',\n"
	    "  devices = 4, microbatches = 8, layers_per_stage = { 12 / 2,\n"
	    "  6, 6, 6 } }\n"
	    "assert(#pw.problem(spec).stages == 4)\n"
	    "spec.layers_per_stage[1] = 2^40\n"
	    "local ok, e = pcall(pw.problem, spec)\n"
	    "assert(not ok and e:find('pw.problem: layers_per_stage[1]: must "
	    "be a layer count from 1 to 100000 (got 1099511627776.0)', 1, "
	    "true), e)\n",
	    "layers_per_stage: whole floats taken, counts past the model's "
	    "refused");
	/* Stages the layers cannot fill are said before the pairs those
	 * stages would make are counted (which named the microbatches). */
	script_ok("fill.lua",
	    "local ok, e = pcall(pw.problem, { model = 'gpt3-1.3b',\n"
	    "  hardware = 'H100-SXM', devices = 2000000, microbatches = 1 })\n"
	    "assert(not ok and e:find('pw.problem: split: 24 layers cannot "
	    "fill 2000000 stages (2000000 devices x 1 chunk) with at least "
	    "one each', 1, true), e)\n"
	    "ok, e = pcall(pw.problem, { model = 'gpt3-1.3b',\n"
	    "  hardware = 'H100-SXM', devices = 16, placement = 'v',\n"
	    "  chunks = 3, microbatches = 8 })\n"
	    "assert(not ok and e:find('pw.problem: split: chunks: V placement "
	    "needs 2 chunks per device (got 3)', 1, true), e)\n",
	    "2000000 devices of 24 layers: the devices blamed; V with 3 "
	    "chunks: the chunks, first");
	script_ok("nan_cost.lua",
	    "local ok, e = pcall(pw.problem, { devices = 1, microbatches = 1,\n"
	    "  stages = { { f = 0/0, b = 1, w = 1, act = 1 } } })\n"
	    "assert(not ok and e:find('stages[0].f: must be a non-negative "
	    "number (got nan)', 1, true), e)\n"
	    "ok, e = pcall(pw.problem, { devices = 1, microbatches = 1,\n"
	    "  stages = { { f = 1, b = 1, w = 1, act = 1 } },\n"
	    "  static = function() return 0/0 end })\n"
	    "assert(not ok and e:find('memory[0].static: must be a "
	    "non-negative number (got nan)', 1, true), e)\n"
	    "ok, e = pcall(pw.problem, { model = 'gpt3-1.3b',\n"
	    "  hardware = 'H100-SXM', devices = 4, microbatches = 8,\n"
	    "  layers_per_stage = { 0/0, 6, 6, 6 } })\n"
	    "assert(not ok and e:find('layers_per_stage[1]: must be a layer "
	    "count from 1 to 100000 (got nan)', 1, true), e)\n",
	    "0/0 is said as nan, whatever its sign bit: a cost, a device's "
	    "static bytes, a layer count");
}

/* A problem given by its stages equals the same problem built in C. */
static void
test_raw_problem(void)
{
	struct pw_problem *p, *want;
	int s;

	p = script_problem("raw.lua",
	    "return pw.problem{ name = 'raw', devices = 2, microbatches = 3,\n"
	    "  comm = 0.5, placement = 'v', static = { 1, 2 },\n"
	    "  memory_limit = { 10, math.huge },\n"
	    "  link = { d2h = 4, h2d = 2, latency = 0.25, duplex = false,\n"
	    "    groups = { { 2 } } },\n"
	    "  stages = {\n"
	    "    { f = 1, b = 2, w = 3, act = 4, hold = 1, offload = 2 },\n"
	    "    { f = 1, b = 2, w = 3, act = 4, comm = 0.75 },\n"
	    "    { f = 1, b = 2, w = 3, act = 4 },\n"
	    "    { device = 1, f = 5, b = 6, w = 7, act = 3 } } }\n");
	want = pw_problem_new(2, 4, 3);
	pw_problem_set_comm(want, 0.5);
	for (s = 0; s < 4; s++) {
		want->stages[s] = (struct pw_stage){ .device = s < 2 ? s : 3 - s,
		    .f = 1, .b = 2, .w = 3, .act = 4, .comm = 0.5 };
	}
	want->stages[0].hold = 1;
	want->stages[0].offload = 2;
	want->stages[1].comm = 0.75;
	want->stages[3] = (struct pw_stage){ .device = 0, .f = 5, .b = 6,
	    .w = 7, .act = 3, .comm = 0.5 };
	want->memory[0] = (struct pw_device_memory){ 1, 10 };
	want->memory[1] = (struct pw_device_memory){ 2, INFINITY };
	pw_problem_set_link(want, 4, 2, 0.25, false);
	want->link.group[0] = 1;
	want->link.group[1] = 0;
	if (p != NULL) {
		tap_ok(pw_problem_same(p, want), "raw problem: same as built "
		    "in C (placement, devices, comm, static, limits, link "
		    "groups)");
		tap_str(p->name, "raw", "raw problem: name");
		tap_ok(p->origin == NULL, "raw problem: no origin");
	}
	pw_problem_free(p);
	pw_problem_free(want);
}

/* Cost overrides change exactly what they name; the origin goes when the
 * model no longer gives the problem. */
static void
test_overrides(void)
{
	const struct pw_split split = {
		.devices = 2, .chunks = 1, .placement = PW_PLACE_LOOP,
		.microbatches = 4, .layers_per_stage = NULL,
		.memory_limit = 0, .offload = true,
	};
	struct pw_problem *p, *want;
	struct pw_error err;

	if (pw_cost_problem(&test_tiny_model, &test_toy_hw, &split, &want, &err) != PW_OK) {
		tap_ok(false, "the C model problem builds: %s", err.msg);
		return;
	}
	p = script_problem("cost.lua", TINY_MODEL
	    "local seen = 0\n"
	    "return pw.problem{ model = tiny, hardware = toy, devices = 2,\n"
	    "  microbatches = 4, offload = { 2 },\n"
	    "  cost = function(stage, kind, default)\n"
	    "    seen = seen + 1\n"
	    "    if stage == 2 and kind == 'f' then return 3 * default end\n"
	    "    if stage == 1 and kind == 'comm' then return 0.5 end\n"
	    "  end,\n"
	    "  static = function(device, default)\n"
	    "    if device == 1 then return default + 1024 end\n"
	    "  end,\n"
	    "  memory_limit = { 2e9, 3e9 } }\n");
	if (p != NULL) {
		tap_near(p->stages[1].f, 3 * want->stages[1].f, 0,
		    "cost function: f of stage 2 tripled");
		tap_near(p->stages[0].f, want->stages[0].f, 0,
		    "cost function: nil keeps the default");
		tap_near(p->stages[0].comm, 0.5, 0, "cost function: comm");
		tap_near(p->stages[0].offload, 0, 0,
		    "offload = {2}: stage 1 keeps its activations");
		tap_near(p->stages[1].offload, want->stages[1].offload, 0,
		    "offload = {2}: stage 2 may offload");
		tap_near(p->memory[0].static_bytes,
		    want->memory[0].static_bytes + 1024, 0,
		    "static function: device 1 + 1 KiB");
		tap_near(p->memory[1].static_bytes,
		    want->memory[1].static_bytes, 0,
		    "static function: nil keeps the default");
		tap_near(p->memory[1].limit, 3e9, 0, "per-device limit");
		tap_ok(p->origin == NULL, "overridden costs drop the origin");
	}
	pw_problem_free(p);

	p = script_problem("table.lua", TINY_MODEL
	    "return pw.problem{ model = tiny, hardware = toy, devices = 2,\n"
	    "  microbatches = 4, cost = { [1] = { act = 2e6, hold = 1e6 } } }\n");
	if (p != NULL) {
		tap_near(p->stages[0].act, 2e6, 0, "cost table: act of stage 1");
		tap_near(p->stages[0].hold, 1e6, 0, "cost table: hold of stage 1");
		tap_near(p->stages[1].act, want->stages[1].act, 0,
		    "cost table: stage 2 as the model says");
	}
	pw_problem_free(p);

	p = script_problem("same.lua", TINY_MODEL
	    "return pw.problem{ model = tiny, hardware = toy, devices = 2,\n"
	    "  microbatches = 4, offload = true, memory_limit = { 1e9, 1e9 },\n"
	    "  cost = function() return nil end }\n");
	if (p != NULL) {
		tap_ok(pw_problem_same(p, want), "overrides that change nothing");
		tap_ok(p->origin != NULL, "...keep the origin");
	}
	pw_problem_free(p);
	pw_problem_free(want);
}

/* Schedules, metrics, constraints and the optimizer from a script. */
static void
test_schedules(void)
{
	/* Over its limits, a family's schedule may beat the bound the
	 * memory terms give (28.1 s, for zb-h2's 27.75 s): it is bound
	 * without the limits instead, never above its makespan. */
	script_ok("overbound.lua",
	    TIGHT_LINK_PROBLEM
	    "local s = assert(pw.schedule(p, 'zb-h2'))\n"
	    "assert(not s.feasible and s.makespan == 27.75)\n"
	    "assert(s.bound == 27.75 and s.gap == 0)\n"
	    "local f = assert(pw.schedule(p, 'zb-auto'))\n"
	    "assert(f.feasible and f.bound > 28 and f.bound < 28.2)\n",
	    "an over-limit family schedule is bound without the limits");
	script_ok("sched.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "local s = assert(pw.schedule(p, '1f1b'))\n"
	    "assert(s.family == '1f1b' and s.makespan == 33)\n"
	    "assert(s.bubble_rate == 9 / 33 and s.idle == 36)\n"
	    "assert(s.peak[1] == 4 and s.peak[4] == 1 and #s.peak == 4)\n"
	    "assert(s.feasible and s.bound == 27 and s.gap == 6 / 33)\n"
	    "assert(#s.ops == 64 and s.ops[1].kind == 'F')\n"
	    "assert(s.ops[1].stage == 1 and s.ops[1].mb == 1)\n"
	    "assert(s.ops[1].device == 1 and s.ops[1].finish == 1)\n"
	    "assert(s.problem == p and s.busy[2] == 24)\n"
	    "assert(s.span[1] == 33 and s.span[4] == 24 and #s.span == 4)\n"
	    "local h2 = assert(pw.schedule(p, 'zb-h2'))\n"
	    "assert(h2.makespan == 27 and h2.peak[1] == 7)\n"
	    "local none, why = pw.schedule(p, 'zb-v')\n"
	    "assert(none == nil and why:find('^zb%-v does not apply'))\n"
	    "local fams = pw.families()\n"
	    "assert(fams[1] == 'gpipe' and fams[2] == '1f1b')\n",
	    "families: exact 1F1B and ZB-H2 metrics on the unit problem");

	script_ok("compare.lua",
	    "local p = pw.problem" UNIT_SPEC ", memory_limit = 6 }\n"
	    "local rows = pw.compare(p)\n"
	    "assert(#rows == #pw.families())\n"
	    "local r = rows[2]\n"
	    "assert(r.family == '1f1b' and r.makespan == 33 and r.why == nil)\n"
	    "assert(r.bubble == 9 / 33 and r.idle == 36 and r.max_peak == 4)\n"
	    "assert(r.feasible and r.tightest == 1 and r.share == 4 / 6)\n"
	    "local h2 = rows[5]\n"
	    "assert(h2.family == 'zb-h2' and h2.makespan == 27)\n"
	    "assert(h2.max_peak == 7 and not h2.feasible)\n"
	    "assert(h2.tightest == 1 and h2.share == 7 / 6)\n"
	    "local v = rows[9]\n"
	    "assert(v.family == 'zb-v' and v.makespan == nil)\n"
	    "assert(v.why:find('^zb%-v needs V placement'))\n"
	    "local free = pw.compare(pw.problem" UNIT_SPEC " })[2]\n"
	    "assert(free.tightest == nil and free.share == nil)\n",
	    "compare: every family's row, exact on the unit problem");

	script_ok("solve.lua",
	    "local p = pw.problem" UNIT_SPEC ",\n"
	    "  memory_limit = 4, time_limit = 2, objective = 'makespan',\n"
	    "  precede = { { { 'F', 1, 1 }, { kind = 'F', stage = 1, mb = 2 } } } }\n"
	    "assert(p.objective == 'makespan' and p.time_limit == 2)\n"
	    "assert(p.precede[1][2].mb == 2)\n"
	    "assert(p.memory_limit[4] == 4 and #p.memory_limit == 4)\n"
	    "assert(p.static[1] == 0 and #p.static == 4)\n"
	    "local s = assert(pw.solve(p, { seed = 3 }))\n"
	    "assert(s.feasible and s.peak[1] <= 4)\n"
	    "assert(s.objective == s.makespan and s.makespan >= 27)\n"
	    "assert(s.makespan <= 33 and s.bound <= s.makespan)\n"
	    "assert(s.start ~= nil)\n",
	    "pw.solve under a limit of 4 with a must-precede pair");
	script_ok("op4.lua",
	    "local ok, why = pcall(pw.problem, " UNIT_SPEC ",\n"
	    "  precede = { { { 'W', 1, 1, 5 }, { 'F', 1, 5 } } } })\n"
	    "assert(not ok and why:find('precede[1][1]: must be an op such as "
	    "{\"F\", stage, mb}: those three entries alone', 1, true), why)\n"
	    "ok, why = pcall(pw.problem, " UNIT_SPEC ",\n"
	    "  precede = { { { 'W', 1, 1, x = 5 }, { 'F', 1, 5 } } } })\n"
	    "assert(not ok and why:find('precede[1][1]: must be an op', 1, "
	    "true), why)\n"
	    "ok, why = pcall(pw.problem, " UNIT_SPEC ",\n"
	    "  precede = { { { 'W', 1, 1 }, { 'F', 1, 5 }, x = 1 } } })\n"
	    "assert(not ok and why:find('precede[1]: must be a pair', 1, "
	    "true), why)\n",
	    "an op or a pair with more than its entries is refused");

	/* test_solver's 7x16 under a limit of 3: 92 at 5,000 iterations. */
	script_ok("solve_it.lua",
	    "local st = " UNIT_STAGE "\n"
	    "local p = pw.problem{ devices = 7, microbatches = 16,\n"
	    "  stages = { st, st, st, st, st, st, st }, memory_limit = 3 }\n"
	    "local s = assert(pw.solve(p, { iteration_limit = 5000 }))\n"
	    "assert(s.objective == 92 and s.ended == 'iteration limit')\n"
	    "assert(s.start == 'zb-auto')\n"
	    "assert(pw.schedule(p, 'zb-auto').ended == nil)\n",
	    "pw.solve: an iteration limit, and why it ended");
	/* 0, as the default, is no iteration limit; the end in the user's
	 * words, as the command line's. */
	script_ok("solve_it0.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "local s = assert(pw.solve(p, { iteration_limit = 0 }))\n"
	    "assert(s.objective == 27 and s.optimal)\n"
	    "assert(s.ended == 'optimal for this split and layout')\n",
	    "pw.solve: iteration limit 0 is none");
	script_fails(NULL, "solve_itneg.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "pw.solve(p, { iteration_limit = -1 })\n", PW_ERR_INPUT,
	    "solve_itneg.lua:2: pw.solve: iteration_limit: must be from 0 to "
	    "2147483647 (got -1)\nstack traceback:\n\t[C]: in function "
	    "'pipewright.solve'\n\tsolve_itneg.lua:2: in main chunk",
	    "pw.solve: a negative iteration limit");
	/* Seeds as the command line takes them: Lua's integers, all 63
	 * bits. */
	script_ok("solve_seed.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "assert(pw.solve(p, { seed = math.maxinteger, iteration_limit = 10 }))\n"
	    "assert(pw.solve(p, { seed = 1 << 40, iteration_limit = 10 }))\n",
	    "pw.solve: seeds up to math.maxinteger");
	script_fails(NULL, "solve_seedneg.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "pw.solve(p, { seed = -1 })\n", PW_ERR_INPUT,
	    "solve_seedneg.lua:2: pw.solve: seed: must be from 0 to "
	    "9223372036854775807 (got -1)\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.solve'\n\tsolve_seedneg.lua:2: in main chunk",
	    "pw.solve: a negative seed");
	script_ok("solve_huge.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "local s = assert(pw.solve(p, { time_limit = math.huge, "
	    "iteration_limit = 100 }))\n"
	    "assert(s.objective == 27)\n",
	    "pw.solve: time_limit math.huge is what the run has left");
	/* A nil in place of the options (fuzz_lua: it was dropped by the
	 * settop and lua_next ran on the nil). */
	script_ok("solve_nil.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "local s = assert(pw.solve(p, nil))\n"
	    "assert(s.objective == 27 and s.optimal)\n",
	    "pw.solve with nil options: the defaults");
}

/* pw.plan: the candidates of an iteration-limited planner, best first,
 * each a design with its schedule object and that schedule's problem;
 * a fixed split and a model's; every bad option an error naming it. */
static void
test_plan(void)
{
	script_ok("plan_pins.lua",
	    "local p = pw.problem" UNIT_SPEC ", precede = { { { 'W', 1, 1 }, "
	    "{ 'F', 1, 5 } } } }\n"
	    "local c, why = pw.plan(p, { iteration_limit = 100 })\n"
	    "assert(c == nil and why == 'pw.plan: the problem: its precede "
	    "pairs name ops of its own split, which plan changes (solve "
	    "honours them)', why)\n",
	    "pw.plan: a problem with precede pairs: nil and why");
	script_ok("plan_fixed.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "local c, info = assert(pw.plan(p, { iteration_limit = 2000 }))\n"
	    "assert(info.split_fixed and info.ended == 'searched')\n"
	    "assert(info.tried == 1 and #c == 1)\n"
	    "local b = c[1]\n"
	    "assert(b.layers_per_stage == nil and b.layout == '1 chunk' and b.chunks == 1)\n"
	    "assert(b.placement == 'loop' and b.recompute == nil)\n"
	    "assert(b.offload == false and b.family == 'zb-h1')\n"
	    "assert(b.makespan == 27 and b.objective == 27 and b.bound == 27)\n"
	    "assert(b.gap == 0 and b.limit == math.huge)\n"
	    "assert(b.peak == b.schedule.peak[b.peak_device])\n"
	    "assert(b.bubble_rate == b.schedule.bubble_rate)\n"
	    "assert(b.idle_share == b.schedule.idle / (4 * 27))\n"
	    "assert(b.schedule.makespan == 27 and b.schedule.optimal)\n"
	    "assert(b.schedule.problem.devices == 4)\n"
	    "assert(b.schedule.objective == 27 and b.schedule.gap == 0)\n"
	    /* zb-h1 meets the bound: the optimizer leaves it out. */
	    "assert(not b.optimized and b.peak_device == 1)\n",
	    "pw.plan on given stages: the schedule searched, the split fixed");
	/* A candidate's problem, a split of the script's, keeps what the
	 * script asked of the optimizer. */
	script_ok("plan_prefs.lua", TINY_MODEL
	    "local p = pw.problem{ model = tiny, hardware = toy, devices = 2,\n"
	    "  microbatches = 4, objective = 'span', time_limit = 2 }\n"
	    "local c = assert(pw.plan(p, { iteration_limit = 10, top = 2 }))\n"
	    "for _, x in ipairs(c) do\n"
	    "  assert(x.schedule.problem.objective == 'span')\n"
	    "  assert(x.schedule.problem.time_limit == 2)\n"
	    "end\n", "pw.plan: candidates' problems keep the objective and "
	    "time limit");
	/* Moving nothing, a candidate meets the bound of schedules that
	 * move nothing: optimal among them (offload 'off'), not among the
	 * schedules that offload ('on'). */
	script_ok("plan_on.lua",
	    TIGHT_LINK_PROBLEM
	    "for mode, optimal in pairs({ on = false, off = true }) do\n"
	    "  local c = assert(pw.plan(p, { iteration_limit = 3000,"
	    " offload = mode }))\n"
	    "  assert(c[1].makespan == 84 and c[1].bound == 84)\n"
	    "  assert(c[1].bound_name == 'device' and c[1].gap == 0)\n"
	    "  assert(c[1].schedule.optimal == optimal, mode)\n"
	    "end\n", "pw.plan: a candidate that moves nothing is optimal only "
	    "without the link");
	script_ok("plan_model.lua", TINY_MODEL
	    "local p = pw.problem{ model = tiny, hardware = toy, devices = 2,\n"
	    "  microbatches = 4 }\n"
	    "local c, info = assert(pw.plan(p, { iteration_limit = 500,\n"
	    "  top = 3, offload = 'off' }))\n"
	    "assert(not info.split_fixed and #c == 3)\n"
	    "for i = 2, #c do assert(c[i - 1].objective <= c[i].objective) end\n"
	    /* Nine designs' starts, then the moves from the two within
	     * 10% of the best (1,3 and 3,1 each). */
	    "assert(info.tried == 13 and info.ended == 'searched')\n"
	    "for _, x in ipairs(c) do\n"
	    "  local n = 0\n"
	    "  for _, l in ipairs(x.layers_per_stage) do n = n + l end\n"
	    "  assert(n == 4 and #x.layers_per_stage == 2 * x.chunks)\n"
	    "  assert(x.offload == false)\n"
	    "  assert(#x.schedule.problem.stages == #x.layers_per_stage)\n"
	    "  assert(x.makespan == x.schedule.makespan)\n"
	    "  assert(x.schedule.problem.time_limit == nil)\n"
	    "end\n"
	    "assert(table.concat(c[1].layers_per_stage, ',') == '2,2')\n"
	    "assert(c[1].layout == '1 chunk')\n"
	    "assert(c[1].family == 'zb-auto' and c[1].bound_name == 'device')\n"
	    "assert(c[1].makespan == 7.203125 and c[1].gap == 0)\n"
	    /* Selective recomputation ties with none at 7.203 s and is
	     * leaner: the planner keeps it alone. */
	    "assert(c[1].recompute == 'pipeoffload' and not c[1].optimized)\n"
	    "assert(c[1].peak_device == 2)\n"
	    /* The optimizer's V schedule meets its bound. */
	    "assert(table.concat(c[2].layers_per_stage, ',') == '1,1,1,1')\n"
	    "assert(c[2].layout == 'V' and c[2].recompute == 'pipeoffload')\n"
	    "assert(c[2].family == 'solve' and c[2].optimized)\n"
	    "assert(c[2].bound_name == 'head-body-tail')\n"
	    "assert(c[2].makespan == 7.34375 and c[2].gap == 0)\n"
	    "assert(table.concat(c[3].layers_per_stage, ',') == '1,1,1,1')\n"
	    "assert(c[3].layout == 'loop x2' and c[3].recompute == 'pipeoffload')\n"
	    "assert(c[3].family == 'solve' and c[3].optimized)\n"
	    "assert(c[3].makespan == 8.421875)\n"
	    "assert(c[3].gap == (8.421875 - c[3].bound) / 8.421875)\n",
	    "pw.plan on a model: the split searched, the best exact");
	/* No iteration limit (0, as the default): zb-h1 meets its bound,
	 * so the optimizer never runs and the search ends on its own. */
	script_ok("plan_it0.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "local c, info = assert(pw.plan(p, { iteration_limit = 0 }))\n"
	    "assert(info.ended == 'searched' and #c == 1)\n"
	    "assert(c[1].family == 'zb-h1' and c[1].schedule.optimal)\n",
	    "pw.plan: iteration limit 0 is none");
	/* The charge counts the planner's designs of one layer per chunk
	 * (128 stages here): 656 MiB, where 32 a device would be 164. */
	script_ok("plan_cap.lua",
	    "local m = pw.model('gpt3-1.3b'){ layers = 128 }\n"
	    "local p = pw.problem{ model = m, hardware = 'H100-SXM',\n"
	    "  devices = 4, microbatches = 4000 }\n"
	    "local ok, e = pcall(pw.plan, p, { time_limit = 0.001 })\n"
	    "assert(not ok and e:find('pw.plan: 656.4 MiB more exceeds the "
	    "memory cap of 512 MiB', 1, true), e)\n",
	    "pw.plan: the charge at the most stages a design may have");
	script_fails(NULL, "plan_top.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "pw.plan(p, { top = 0 })\n", PW_ERR_INPUT,
	    "plan_top.lua:2: pw.plan: top: must be from 1 to 1000 (got 0)\n"
	    "stack traceback:\n\t[C]: in function 'pipewright.plan'\n"
	    "\tplan_top.lua:2: in main chunk", "pw.plan: top 0");
	script_fails(NULL, "plan_field.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "pw.plan(p, { chunks = 2 })\n", PW_ERR_INPUT,
	    "plan_field.lua:2: pw.plan: unknown field 'chunks'\n"
	    "stack traceback:\n\t[C]: in function 'pipewright.plan'\n"
	    "\tplan_field.lua:2: in main chunk", "pw.plan: an unknown option");
	script_fails(NULL, "plan_time.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "pw.plan(p, { time_limit = -1 })\n", PW_ERR_INPUT,
	    "plan_time.lua:2: pw.plan: time_limit: must be a positive number "
	    "of seconds (got -1)\nstack traceback:\n\t[C]: in function "
	    "'pipewright.plan'\n\tplan_time.lua:2: in main chunk",
	    "pw.plan: a negative time limit");
	/* 0 stands for none internally; given, it is refused as -1 is. */
	script_fails(NULL, "problem_time0.lua",
	    "pw.problem" UNIT_SPEC ", time_limit = 0 }\n", PW_ERR_INPUT,
	    "problem_time0.lua:1: pw.problem: time_limit: must be a positive "
	    "number of seconds (got 0)\nstack traceback:\n\t[C]: in function "
	    "'pipewright.problem'\n\tproblem_time0.lua:1: in main chunk",
	    "pw.problem: a time limit of 0");
	script_fails(NULL, "plan_offload.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "pw.plan(p, { offload = true })\n", PW_ERR_INPUT,
	    "plan_offload.lua:2: pw.plan: offload: must be one of \"auto\", "
	    "\"on\", \"off\" (got true)\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.plan'\n\tplan_offload.lua:2: in main chunk",
	    "pw.plan: offload not a mode");
	script_fails(NULL, "plan_arg.lua", "pw.plan({})\n", PW_ERR_INPUT,
	    "plan_arg.lua:1: bad argument #1 to 'plan' (problem expected, got "
	    "table)\nstack traceback:\n\t[C]: in function 'pipewright.plan'\n"
	    "\tplan_arg.lua:1: in main chunk", "pw.plan: not a problem");
}

/* pw.load and pw.write_json: files round-trip into equal objects. */
static void
test_load_write(void)
{
	const char *dirs[] = { ".", NULL };
	const struct pwlua_config here = { 0, 0, dirs, 0, NULL };
	char *text;

	script_ok("rt.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "pw.write_json('p.json', p)\n"
	    "assert(pw.load('p.json') == p)\n"
	    "local s = pw.schedule(p, 'zb-h1')\n"
	    "pw.write_json('s.json', s)\n"
	    "local t = pw.load('s.json')\n"
	    "assert(t.makespan == s.makespan and t.problem == p)\n"
	    "assert(#t.ops == #s.ops)\n"
	    "assert(t.family == 'zb-h1', tostring(t.family))\n",
	    "write_json then load: the same problem, schedule and family");
	script_fails(&here, "wlua.lua", "pw.write_json('p.lua', pw.problem"
	    UNIT_SPEC " })\n", PW_ERR_INPUT, "wlua.lua:1: pw.write_json: "
	    "p.lua: a JSON file with this name would be read back as a Lua "
	    "script: name it .json\nstack traceback:\n\t[C]: in function "
	    "'pipewright.write_json'\n\twlua.lua:1: in main chunk",
	    "pw.write_json to a .lua name");
	tap_ok(access("p.lua", F_OK) != 0, "pw.write_json to a .lua name: "
	    "nothing written");
	/* Nor a CSV over a script (this one's own) or a JSON file. */
	write_file("wself.lua", "pw.write_csv('wself.lua', { { 'return', 1 } })"
	    "\n");
	script_fails(&here, "wself.lua", NULL, PW_ERR_INPUT, "wself.lua:1: "
	    "pw.write_csv: wself.lua: a CSV with this name would be read back "
	    "as a Lua script: name it .csv\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.write_csv'\n\twself.lua:1: in main chunk",
	    "pw.write_csv over the running script");
	script_ok("wjson.lua", "local ok, why = pcall(pw.write_csv, 'x.JSON', "
	    "{ { 1 } })\nassert(not ok and why:find('would be read back as a "
	    "JSON file', 1, true), why)\n", "pw.write_csv to a .json name");
	tap_ok(access("x.JSON", F_OK) != 0, "pw.write_csv to a .json name: "
	    "nothing written");
	/* format.md's example with RELOAD(0,1) at BW(0,0)'s end. */
	write_file("end.json", "{\"format\": \"pipewright.schedule.v1\", "
	    "\"problem\": {\"devices\": 2, \"microbatches\": 2, \"stages\": ["
	    "{\"device\": 0, \"f\": 1, \"b\": 1, \"w\": 1, \"act\": 1, "
	    "\"hold\": 0, \"offload\": 1}, {\"device\": 1, \"f\": 1, \"b\": 1, "
	    "\"w\": 1, \"act\": 1, \"hold\": 0, \"offload\": 0}], \"memory\": ["
	    "{\"static\": 0, \"limit\": 4}, {\"static\": 0, \"limit\": 4}], "
	    "\"link\": {\"d2h\": 4, \"h2d\": 4, \"latency\": 0, \"duplex\": "
	    "true}}, \"ops\": ["
	    "{\"device\": 0, \"kind\": \"F\", \"stage\": 0, \"mb\": 0, "
	    "\"start\": 0, \"end\": 1},"
	    "{\"device\": 0, \"kind\": \"OFFLOAD\", \"stage\": 0, \"mb\": 0, "
	    "\"start\": 1, \"end\": 1.25, \"bytes\": 1},"
	    "{\"device\": 0, \"kind\": \"F\", \"stage\": 0, \"mb\": 1, "
	    "\"start\": 1, \"end\": 2},"
	    "{\"device\": 1, \"kind\": \"F\", \"stage\": 1, \"mb\": 0, "
	    "\"start\": 1, \"end\": 2},"
	    "{\"device\": 0, \"kind\": \"RELOAD\", \"stage\": 0, \"mb\": 0, "
	    "\"start\": 1.25, \"end\": 1.5, \"bytes\": 1, \"after\": "
	    "{\"kind\": \"F\", \"stage\": 0, \"mb\": 1}},"
	    "{\"device\": 0, \"kind\": \"OFFLOAD\", \"stage\": 0, \"mb\": 1, "
	    "\"start\": 2, \"end\": 2.25, \"bytes\": 1},"
	    "{\"device\": 1, \"kind\": \"BW\", \"stage\": 1, \"mb\": 0, "
	    "\"start\": 2, \"end\": 4},"
	    "{\"device\": 0, \"kind\": \"RELOAD\", \"stage\": 0, \"mb\": 1, "
	    "\"start\": 6, \"end\": 6.25, \"bytes\": 1, \"after\": "
	    "{\"kind\": \"BW\", \"stage\": 0, \"mb\": 0, \"at\": \"end\"}},"
	    "{\"device\": 1, \"kind\": \"F\", \"stage\": 1, \"mb\": 1, "
	    "\"start\": 4, \"end\": 5},"
	    "{\"device\": 0, \"kind\": \"BW\", \"stage\": 0, \"mb\": 0, "
	    "\"start\": 4, \"end\": 6},"
	    "{\"device\": 1, \"kind\": \"BW\", \"stage\": 1, \"mb\": 1, "
	    "\"start\": 5, \"end\": 7},"
	    "{\"device\": 0, \"kind\": \"BW\", \"stage\": 0, \"mb\": 1, "
	    "\"start\": 7, \"end\": 9}]}\n");
	script_ok("end.lua", "local s = pw.load('end.json')\n"
	    "local at = {}\n"
	    "for _, op in ipairs(s.ops) do\n"
	    "  if op.kind == 'RELOAD' then at[op.mb] = op end\n"
	    "end\n"
	    "assert(at[1].after.kind == 'F' and at[1].after.at == nil)\n"
	    "assert(at[2].after.kind == 'BW' and at[2].after.mb == 1)\n"
	    "assert(at[2].after.at == 'end' and at[2].start == 6)\n",
	    "an anchor at an op's end: after.at = 'end', the reload at 6");
	write_file("rt2.lua", "return pw.problem" UNIT_SPEC " }\n");
	script_ok("rt.lua", "local p = pw.load('rt2.lua')\n"
	    "assert(p.devices == 4 and p.nstages == 4)\n"
	    "assert(p.stages[1].hold == 0.5 and p.memory_limit[1] == math.huge)\n",
	    "pw.load runs a problem script");
	script_fails(NULL, "ld.lua", "pw.load('nosuch.json')\n", PW_ERR_INPUT,
	    "ld.lua:1: pw.load: nosuch.json: cannot open: No such file or "
	    "directory\nstack traceback:\n\t[C]: in function "
	    "'pipewright.load'\n\tld.lua:1: in main chunk",
	    "pw.load of a missing file");
	write_file("nope.json", "{\"format\": \"nope\"}\n");
	script_fails(NULL, "ld.lua", "pw.load('nope.json')\n", PW_ERR_INPUT,
	    "ld.lua:1: pw.load: nope.json: format: must be "
	    "\"pipewright.problem.v1\" or \"pipewright.schedule.v1\" (got "
	    "\"nope\")\nstack traceback:\n\t[C]: in function "
	    "'pipewright.load'\n\tld.lua:1: in main chunk",
	    "pw.load of a file of neither format");

	script_ok("csv.lua",
	    "pw.write_csv('r.csv', { { x = 1, name = 'a,b', y = 0.1 },\n"
	    "  { x = 2.5, name = 'say \"hi\"', z = true } })\n"
	    "pw.write_csv('l.csv', { { 'k', 'v' }, { 1, 1/3 } })\n"
	    "pw.write_csv('c.csv', { { a = 1, b = 2 } }, { 'b', 'a' })\n",
	    "write_csv: records, lists, chosen columns");
	text = test_read_file("r.csv");
	tap_str(text, "name,x,y,z\n\"a,b\",1,0.1,\n\"say \"\"hi\"\"\",2.5,,true\n",
	    "records: sorted columns, quoting, shortest numbers");
	free(text);
	text = test_read_file("l.csv");
	tap_str(text, "k,v\n1,0.3333333333333333\n", "lists: as given");
	free(text);
	text = test_read_file("c.csv");
	tap_str(text, "b,a\n2,1\n", "columns: in the order given");
	free(text);
	script_ok("k.lua", "assert(math.abs(pw.offload_ratio(4096, 4096, "
	    "440e12, 21e9) - 2.435870) < 5e-7)\n"
	    "local ok, why = pcall(pw.offload_ratio, 1, 1, 0, 0)\n"
	    "assert(not ok and why:find('must be a positive number of "
	    "FLOP/s', 1, true), why)\n",
	    "offload_ratio: PipeOffload's k; no NaN from a zero rate");
	script_ok("nan.lua", "pw.write_csv('n.csv', { { 0/0, -(0/0), "
	    "math.huge, -math.huge } })\n", "write_csv: numbers that are not "
	    "finite");
	text = test_read_file("n.csv");
	tap_str(text, "nan,nan,inf,-inf\n", "... as strtod and Python read "
	    "them");
	free(text);
	script_ok("keys.lua", "local ok, why = pcall(pw.write_csv, 'k.csv', "
	    "{ { a = 1, [2] = 3 } })\n"
	    "assert(why:find('rows[1]: mixes named and listed cells', 1, "
	    "true), why)\n"
	    "ok, why = pcall(pw.write_csv, 'k.csv', { { a = 1, [true] = 3 } })"
	    "\nassert(why:find(\"rows[1]: a cell's name must be a string or "
	    "its place a number (got a boolean key)\", 1, true), why)\n"
	    "ok, why = pcall(pw.write_csv, 'k.csv', { { x = 1, [1] = 2 } })\n"
	    "assert(why:find('rows[1]: mixes named and listed cells', 1, "
	    "true), why)\n"
	    "ok, why = pcall(pw.write_csv, 'k.csv', { { ['a\\0b'] = 1, "
	    "a = 2 } })\n"
	    "assert(why:find(\"rows[1]: a cell's name: must be UTF-8 text "
	    "without NUL bytes\", 1, true), why)\n",
	    "write_csv: a row's keys of two kinds, or of neither, a list with "
	    "a name beside it, a name with a NUL");
}

/* The budget's hook runs more often as the script holds more: a call
 * that passes over a string without allocating (utf8.len, ==) may pass
 * over all of it in one instruction, and such a loop, holding 128 MiB,
 * once ran a minute past the time limit.  Holding 24 MiB (48 while
 * string.rep makes it), the hook runs every 15 instructions, so a budget
 * of 100 stops a loop of four instructions a turn within 33 turns (every
 * 1000: 248 turns); the globals survive the stop. */
static void
hook_follows_memory(void)
{
	const struct pwlua_config tiny = { 100, 0, NULL, 0, NULL };
	struct pwlua *lua;
	struct pw_error err;

	if ((lua = pwlua_new(&tiny, &err)) == NULL) {
		tap_diag("%s", err.msg);
		return;
	}
	tap_int(run_text(lua, "held.lua", "s = string.rep('a', 3 << 23)\n"
	    "n = 0\nwhile true do n = n + 1 end\n", &err), PW_ERR_INPUT,
	    "a loop holding 24 MiB: stopped by the budget");
	if (!tap_int(run_text(lua, "turns.lua", "assert(n <= 33, n)\n", &err),
	    PW_OK, "...within a few hook periods of its spending it"))
		tap_diag("%s", err.msg);
	pwlua_free(lua);
}

/* The library functions that loop in C: table.move charges its count
 * first (a numeric string counts as a number), so it stops at once on a
 * budget of 100,000; the ones sized by #t refuse a table with __len; an
 * empty string.rep is "" at once; calls they refuse fail as they would,
 * catchable, and name them as called. */
static void
loops_charged(const struct pwlua_config *small)
{
	static const char *const lens[] = { "insert(t, 1, 0)", "remove(t, 1)",
	    "concat(t)", "sort(t)", "unpack(t)" };
	char text[256], want[512];
	size_t i;

	script_fails(small, "move.lua", "table.move({}, '1', '1099511627776', "
	    "1, {})\n", PW_ERR_INPUT, "move.lua:1: table.move: instruction "
	    "budget of 100000 exceeded\nstack traceback:\n\t[C]: in function "
	    "'table.move'\n\tmove.lua:1: in main chunk",
	    "table.move charges the range it loops over");
	for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		snprintf(text, sizeof text, "local t = setmetatable({}, { __len "
		    "= function() return 2^40 end })\ntable.%s\n", lens[i]);
		snprintf(want, sizeof want, "len.lua:2: table.%.*s: a table "
		    "with a __len metamethod is refused (its length would "
		    "drive a loop no budget sees)\nstack traceback:\n\t[C]: in "
		    "function 'table.%.*s'\n\tlen.lua:2: in main chunk",
		    (int)strcspn(lens[i], "("), lens[i],
		    (int)strcspn(lens[i], "("), lens[i]);
		script_fails(small, "len.lua", text, PW_ERR_INPUT, want,
		    lens[i]);
	}
	/* One sort of 2^14 numbers is 2^14 x 15 steps; appends and pops
	 * cost one each, inserts at the front what they shift. */
	script_fails(small, "sort.lua", "local t = {}\nfor i = 1, 2^14 do "
	    "t[i] = i end\ntable.sort(t)\n", PW_ERR_INPUT, "sort.lua:3: "
	    "table.sort: instruction budget of 100000 exceeded\nstack "
	    "traceback:\n\t[C]: in function 'table.sort'\n\tsort.lua:3: in "
	    "main chunk", "table.sort charges n log n");
	script_ok("append.lua", "local t = {}\nfor i = 1, 5000 do "
	    "table.insert(t, i) end\nfor i = 1, 5000 do table.remove(t) end\n"
	    "assert(#t == 0)\n", "appends and pops are charged one each");
	script_fails(small, "front.lua", "local t = {}\nfor i = 1, 2000 do "
	    "table.insert(t, 1, i) end\n", PW_ERR_INPUT, "front.lua:2: "
	    "table.insert: instruction budget of 100000 exceeded\nstack "
	    "traceback:\n\t[C]: in function 'table.insert'\n\tfront.lua:2: "
	    "in main chunk", "inserts at the front charge what they shift");
	script_fails(small, "remove3.lua", "local t = {}\nfor i = 1, 3000 do "
	    "t[i] = i end\nfor i = 1, 100 do table.remove(t, 1, 0) end\n",
	    PW_ERR_INPUT, "remove3.lua:3: table.remove: instruction budget of "
	    "100000 exceeded\nstack traceback:\n\t[C]: in function "
	    "'table.remove'\n\tremove3.lua:3: in main chunk",
	    "remove with more arguments charges what it shifts");
	{
		struct pw_error err;
		struct pwlua *lua = pwlua_new(small, &err);

		tap_int(run_text(lua, "ranges.lua", "local t, s = {}, {}\n"
		    "for i = 1, 20000 do t[i] = i; s[i] = 'x' end\n"
		    "for k = 1, 100 do\n  assert(select('#', table.unpack(t, k, "
		    "k + 2)) == 3)\n  assert(table.concat(s, '', k, k + 2) == "
		    "'xxx')\nend\n", &err), PW_OK, "unpack and concat charge "
		    "their range, not #t");
		pwlua_free(lua);
	}
	script_fails(small, "move.lua", "table.move(1, 2, 3)\n", PW_ERR_INPUT,
	    "move.lua:1: bad argument #4 to 'move' (number expected, got no "
	    "value)\nstack traceback:\n\t[C]: in function 'table.move'\n"
	    "\tmove.lua:1: in main chunk", "table.move's own errors name it");
	script_ok("loops.lua", "local t = {3, 1, 2}\ntable.sort(t)\n"
	    "table.insert(t, 1, 0)\nassert(table.remove(t) == 3)\n"
	    "assert(table.concat(table.move(t, 1, 3, 2), ',') == '0,0,1,2')\n"
	    "assert(('ab'):rep(3, ',') == 'ab,ab,ab')\n"
	    "assert(string.rep('', 2^53) == '' and string.rep('', 3, '') == '')\n"
	    "assert(not pcall(table.insert, {}, -2^62, 1))\n"
	    "assert(not pcall(string.rep, 'x', 2^62))\n"
	    "assert(not pcall(table.concat, {}, ',', 1, 2^40))\n"
	    "assert(not pcall(table.move, {}, 1, 2^40))\n",
	    "they work as Lua's own, and what they refuse a pcall catches");
}

/* A problem's names are charged to the memory cap; none is over 1 MiB. */
static void
names_charged(const struct pwlua_config *capped)
{
	struct pw_error err;
	struct pwlua *lua = pwlua_new(capped, &err);

	if (!tap_ok(lua != NULL, "names: the interpreter starts"))
		return;
	tap_int(run_text(lua, "names.lua", "local n = ('x'):rep(900000)\n"
	    "local keep = {}\nfor i = 1, 8 do keep[i] = pw.problem" UNIT_SPEC
	    ", name = n .. i } end\n", &err), PW_ERR_INPUT,
	    "names: problems named with 0.9 MB each overrun 4 MiB");
	tap_ok(strncmp(err.msg, "names.lua:3: pw.problem: name: 878.9 KiB more "
	    "exceeds the memory cap of 4 MiB (", 79) == 0, "names: %s",
	    err.msg);
	pwlua_free(lua);
	if (!tap_ok((lua = pwlua_new(NULL, &err)) != NULL,
	    "names: the interpreter starts"))
		return;
	tap_int(run_text(lua, "long.lua", "pw.problem" UNIT_SPEC ", name = "
	    "('x'):rep(2^20 + 1) }\n", &err), PW_ERR_INPUT,
	    "names: over 1 MiB");
	tap_ok(strncmp(err.msg, "long.lua:1: pw.problem: name: longer than 1 "
	    "MiB\n", 48) == 0, "names: %s", err.msg);
	pwlua_free(lua);
}

/* Loading hits the parser's limits without a line to name: the file is
 * named, in words a user reads. */
static void
test_load_limits(const struct pwlua_config *capped)
{
	char *text = pw_xmalloc(8 << 20);
	struct pwlua *lua;
	struct pw_error err;
	size_t n, at;

	n = (size_t)snprintf(text, 64, "local x = ");
	memset(text + n, '(', 250);
	text[n + 250] = '1';
	memset(text + n + 251, ')', 250);
	strcpy(text + n + 501, "\n");
	script_fails(NULL, "nest.lua", text, PW_ERR_INPUT, "nest.lua: nested "
	    "too deeply to load (Lua's C stack holds about 190 levels of "
	    "brackets, blocks and operators, or of pw.load within pw.load)",
	    "deep nesting names the file");
	n = (size_t)snprintf(text, 64, "local s = \"");
	memset(text + n, 'x', (6 << 20));
	strcpy(text + n + (6 << 20), "\"\n");
	script_fails(capped, "big.lua", text, PW_ERR_INPUT, "big.lua: memory "
	    "cap of 4 MiB exceeded", "a script too big to load names the cap");
	at = (size_t)snprintf(text, 32, "local x\n");
	for (n = 0; n < 40000; n++)
		at += (size_t)snprintf(text + at, 32, "::l%zu:: x = 1\n", n);
	script_fails(NULL, "labels.lua", text, PW_ERR_INPUT, "labels.lua: too "
	    "many labels/gotos (limit is 32767)", "Lua's own limits name the "
	    "file");
	lua = pwlua_new(NULL, &err);
	tap_int(run_text(lua, "self.lua", "return pw.load('self.lua')\n", &err),
	    PW_ERR_INPUT, "pw.load of itself: fails");
	tap_ok(strncmp(err.msg, "self.lua:1: self.lua: nested too deeply to "
	    "load (", 42) == 0, "pw.load of itself: said so (%.60s)",
	    err.msg);
	pwlua_free(lua);
	free(text);
}

/* The interpreter: arguments, persistence, and what it refuses. */
static void
test_sandbox(void)
{
	const char *dirs[] = { "allowed", NULL };
	const struct pwlua_config small = { 100000, 0, dirs, 0, NULL };
	const struct pwlua_config capped = { 0, 4 << 20, NULL, 0, NULL };
	const struct pwlua_config none = { 0, 0, NULL, 0, NULL };
	char *const argv[] = { "one", "two" };
	char want[PATH_MAX + 512], real[PATH_MAX];
	struct pw_error err;
	struct pwlua *lua;

	script_ok("absent.lua",
	    "assert(io == nil and os == nil and package == nil)\n"
	    "assert(debug == nil and load == nil and loadfile == nil)\n"
	    "assert(dofile == nil and string and table and math and utf8)\n"
	    "assert(require 'pipewright' == pw and require 'string' == string)\n"
	    "assert(not pcall(require, 'io'))\n",
	    "io, os, package, debug, load, loadfile, dofile are absent");

	lua = pwlua_new(NULL, &err);
	write_file("args.lua", "assert(arg[0] == 'args.lua' and arg[1] == 'one')\n"
	    "assert(arg[2] == 'two' and select('#', ...) == 2)\n"
	    "kept = (kept or 0) + 1\n");
	tap_int(pwlua_run(lua, "args.lua", 2, argv, &err), PW_OK,
	    "arg and ... hold the arguments");
	tap_int(run_text(lua, "err.lua", "local x = 1\nerror('boom')\n", &err),
	    PW_ERR_INPUT, "error(): PW_ERR_INPUT");
	tap_str(err.msg, "err.lua:2: boom\nstack traceback:\n\t[C]: in "
	    "function 'error'\n\terr.lua:2: in main chunk",
	    "error(): file:line, then the traceback");
	tap_int(run_text(lua, "after.lua", "assert(kept == 1)\n", &err), PW_OK,
	    "after an error the interpreter runs on, globals kept");
	pwlua_free(lua);

	script_fails(NULL, "obj.lua", "\nerror({})\n", PW_ERR_INPUT,
	    "obj.lua:2: (error object is a table value)\nstack traceback:\n"
	    "\t[C]: in function 'error'\n\tobj.lua:2: in main chunk",
	    "an error object gets the position of its line");
	script_fails(NULL, "clock.lua", "\nerror('at 10:00:00 it failed', 0)\n",
	    PW_ERR_INPUT, "clock.lua:2: at 10:00:00 it failed\nstack "
	    "traceback:\n\t[C]: in function 'error'\n\tclock.lua:2: in main "
	    "chunk", "a message like a position (10:00:00:) still gets its "
	    "line");
	script_fails(NULL, "again.lua", "local ok, e = pcall(error, 'x')\n"
	    "local ok, e = pcall(function() error('boom') end)\nerror(e, 0)\n",
	    PW_ERR_INPUT, "again.lua:2: boom\nstack traceback:\n\t[C]: in "
	    "function 'error'\n\tagain.lua:3: in main chunk", "an error "
	    "raised again keeps its own position, not a second one");
	script_fails(NULL, "nul.lua", "error('a\\0b\\0')\n", PW_ERR_INPUT,
	    "nul.lua:1: a\\x00b\\x00\nstack traceback:\n"
	    "\t[C]: in function 'error'\n\tnul.lua:1: in main chunk",
	    "an error's NUL bytes are written \\x00, nothing after them lost");
	script_fails(NULL, "load.lua", "local f = load('return 1')\n",
	    PW_ERR_INPUT, "load.lua:1: attempt to call a nil value (global "
	    "'load')\nstack traceback:\n\tload.lua:1: in main chunk",
	    "load is absent");
	script_fails(NULL, "dofile.lua", "\n\ndofile('x.lua')\n", PW_ERR_INPUT,
	    "dofile.lua:3: attempt to call a nil value (global 'dofile')\n"
	    "stack traceback:\n\tdofile.lua:3: in main chunk",
	    "dofile is absent");
	script_fails(NULL, "io.lua", "io.write('x')\n", PW_ERR_INPUT,
	    "io.lua:1: attempt to index a nil value (global 'io')\n"
	    "stack traceback:\n\tio.lua:1: in main chunk", "io is absent");
	script_fails(NULL, "req.lua", "require 'os'\n", PW_ERR_INPUT,
	    "req.lua:1: module 'os' is not available to scripts (only "
	    "pipewright, string, table, math and utf8)\nstack traceback:\n"
	    "\t[C]: in function 'require'\n\treq.lua:1: in main chunk",
	    "require of anything else");
	script_fails(NULL, "syntax.lua", "local x =\n", PW_ERR_INPUT,
	    "syntax.lua:2: unexpected symbol near <eof>", "a syntax error");
	script_fails(NULL, "missing.lua", NULL, PW_ERR_IO,
	    "missing.lua: cannot open: No such file or directory",
	    "a missing script");

	mkdir("allowed", 0777);
	if (realpath("allowed", real) == NULL)
		real[0] = '\0';
	snprintf(want, sizeof want, "out.lua:2: pw.write_csv: ../x.csv: "
	    "scripts may write only below %s\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.write_csv'\n\tout.lua:2: in main chunk",
	    real);
	script_fails(&small, "out.lua", "local rows = { { 1 } }\n"
	    "pw.write_csv('../x.csv', rows)\n", PW_ERR_INPUT, want,
	    "a write outside the allowed directories");
	snprintf(want, sizeof want, "cwd.lua:1: pw.write_json: p.json: "
	    "scripts may write only below %s\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.write_json'\n\tcwd.lua:1: in main chunk",
	    real);
	script_fails(&small, "cwd.lua", "pw.write_json('p.json', "
	    "pw.problem" UNIT_SPEC " })\n", PW_ERR_INPUT, want,
	    "the current directory is not allowed unless given");
	script_fails(&none, "nowrite.lua", "pw.write_csv('allowed/x.csv', {})\n",
	    PW_ERR_INPUT, "nowrite.lua:1: pw.write_csv: allowed/x.csv: this "
	    "script may not write files\nstack traceback:\n\t[C]: in function "
	    "'pipewright.write_csv'\n\tnowrite.lua:1: in main chunk",
	    "no write directories: no writing");
	script_fails(&small, "loop.lua", "local n = 0\nwhile true do n = n + 1 "
	    "end\n", PW_ERR_INPUT, "loop.lua:2: instruction budget of 100000 "
	    "exceeded (a runaway loop?)\nstack traceback:\n\tloop.lua:2: in "
	    "main chunk", "a runaway loop is stopped by the budget");
	script_fails(&small, "pcall.lua", "while true do\n  pcall(function() "
	    "while true do end end)\nend\n", PW_ERR_INPUT, "pcall.lua:2: "
	    "instruction budget of 100000 exceeded (a runaway loop?)\nstack "
	    "traceback:\n\tpcall.lua:2: in main chunk",
	    "pcall does not swallow the budget's stop");
	/* Lua runs an xpcall handler before the error unwinds, and for the
	 * hook's own error with hooks off: a loop there ran forever. */
	script_fails(&small, "xpcall.lua", "local ok = xpcall(error,\n"
	    "  function(m) while true do end end)\nreturn ok\n", PW_ERR_INPUT,
	    "xpcall.lua:3: instruction budget of 100000 exceeded (a runaway "
	    "loop?)\nstack traceback:\n\txpcall.lua:3: in main chunk",
	    "a looping xpcall handler is stopped by the budget");
	script_fails(&small, "xpcall2.lua", "while true do\n  xpcall("
	    "function() while true do end end,\n    function(m) return m end)"
	    "\nend\n", PW_ERR_INPUT, "xpcall2.lua:3: instruction budget of "
	    "100000 exceeded (a runaway loop?)\nstack traceback:\n"
	    "\txpcall2.lua:3: in main chunk",
	    "nor does xpcall swallow the stop");
	loops_charged(&small);
	hook_follows_memory();
	names_charged(&capped);
	script_fails(&none, "readonly.lua", "local p = pw.problem" UNIT_SPEC
	    " }\np.x = 1\n", PW_ERR_INPUT, "readonly.lua:2: pw.problem: 'x' "
	    "cannot be set (its fields are read-only: make a new one)\nstack "
	    "traceback:\n\t[C]: in metamethod 'newindex'\n\treadonly.lua:2: "
	    "in main chunk", "a problem's fields are read-only, said so");
	script_fails(&none, "setmeta.lua", "setmetatable('', {})\n",
	    PW_ERR_INPUT, "setmeta.lua:1: bad argument #1 to 'setmetatable' "
	    "(table expected, got string)\nstack traceback:\n\t[C]: in "
	    "function 'setmetatable'\n\tsetmeta.lua:1: in main chunk",
	    "setmetatable's own errors name it");
	script_fails(&capped, "mem.lua", "local t = {}\nfor i = 1, 1e7 do t[i] = "
	    "i end\n", PW_ERR_INPUT, "mem.lua:2: memory cap of 4 MiB "
	    "exceeded\nstack traceback:\n\tmem.lua:2: in main chunk",
	    "a memory hog hits the cap");
	script_fails(&capped, "rep.lua", "local function f()\n  return "
	    "string.rep('x', 1 << 24)\nend\nf()\n", PW_ERR_INPUT, "rep.lua:2: "
	    "memory cap of 4 MiB exceeded\nstack traceback:\n\t[C]: "
	    "in field 'rep'\n\trep.lua:2: in local 'f'\n\trep.lua:4: in main "
	    "chunk", "one allocation over the cap, in a function");
	test_load_limits(&capped);
	tap_ok(pwlua_new(&(struct pwlua_config){ 0, 1024, NULL, 0, NULL }, &err) ==
	    NULL, "a cap too small to start: NULL");
	tap_str(err.msg, "the Lua interpreter does not start within a memory "
	    "cap of 1 KiB", "...saying so");
	tap_ok(pwlua_new(&(struct pwlua_config){ 0, 0, (const char *[]){
	    "nowhere", NULL }, 0, NULL }, &err) == NULL, "a missing write directory: "
	    "NULL");
	tap_str(err.msg, "nowhere: cannot write below it: No such file or "
	    "directory", "...saying so");
}

/* Precompiled Lua, made here with luac's own function, is refused. */
static int
dump_writer(lua_State *L, const void *p, size_t len, void *fp)
{
	(void)L;
	return fwrite(p, 1, len, fp) != len;
}

static void
test_bytecode(void)
{
	lua_State *L = luaL_newstate();
	FILE *fp = fopen("bc.lua", "wb");

	if (luaL_loadstring(L, "print('hi')") != LUA_OK ||
	    lua_dump(L, dump_writer, fp, 0) != 0 || fclose(fp) != 0)
		tap_diag("cannot make bytecode");
	lua_close(L);
	script_fails(NULL, "bc.lua", NULL, PW_ERR_INPUT, "bc.lua: precompiled "
	    "Lua (bytecode) is refused; scripts are loaded as source text only",
	    "bytecode is refused");
	fp = fopen("bc2.lua", "wb");
	fputs("#!/usr/bin/env lua\n", fp);
	fclose(fp);
	L = luaL_newstate();
	fp = fopen("bc2.lua", "ab");
	if (luaL_loadstring(L, "print('hi')") != LUA_OK ||
	    lua_dump(L, dump_writer, fp, 0) != 0 || fclose(fp) != 0)
		tap_diag("cannot make bytecode");
	lua_close(L);
	script_fails(NULL, "bc2.lua", NULL, PW_ERR_INPUT, "bc2.lua: "
	    "precompiled Lua (bytecode) is refused; scripts are loaded as "
	    "source text only", "bytecode after a #! line is refused");
}

/* Errors leave no partial files: a failed write leaves nothing, an
 * existing file stays as it was. */
static void
test_no_partial_files(void)
{
	const char *dirs[] = { ".", NULL };
	const struct pwlua_config config = { 0, 0, dirs, 0, NULL };
	char *text;
	int before;

	mkdir("clean", 0777);
	if (chdir("clean") != 0)
		return;
	write_file("keep.csv", "old\n");
	write_file("bad.lua", "local rows = {}\n"
	    "for i = 1, 5000 do rows[i] = { i, 'x' } end\n"
	    "rows[4000][2] = {}\n"
	    "pw.write_csv('keep.csv', rows)\n");
	before = count_entries();
	script_fails(&config, "bad.lua", NULL, PW_ERR_INPUT, "bad.lua:4: "
	    "pw.write_csv: rows[4000][2]: must be a number, a string or a "
	    "boolean (got table)\nstack traceback:\n\t[C]: in function "
	    "'pipewright.write_csv'\n\tbad.lua:4: in main chunk",
	    "a bad cell in row 4000");
	text = test_read_file("keep.csv");
	tap_str(text, "old\n", "the existing file is as it was");
	free(text);
	tap_int(count_entries(), before, "no temporary file is left");
	write_file("late.lua", "pw.write_csv('new.csv', { { 1 } })\n"
	    "error('later')\n");
	script_fails(&config, "late.lua", NULL, PW_ERR_INPUT, "late.lua:2: "
	    "later\nstack traceback:\n\t[C]: in function 'error'\n\t"
	    "late.lua:2: in main chunk", "an error after a write");
	text = test_read_file("new.csv");
	tap_str(text, "1\n", "the file written before it is whole");
	free(text);
	if (chdir("..") != 0)
		tap_diag("cannot return to %s", tmpdir);
}

/* A list's length is a border the script picks: keys 2^0 .. 2^62 and
 * then 1 .. 5 make #t 2^62.  No count read from one sizes anything
 * unchecked. */
#define BORDER_LIST(v) \
	"local big = {}\n" \
	"for k = 0, 62 do big[1 << k] = " v " end\n" \
	"for i = 1, 5 do big[i] = " v " end\n" \
	"assert(#big == 1 << 62)\n"

/* Every row of pw.write_csv is a table, also among records (whose
 * columns are gathered before the rows are written). */
static void
test_csv_rows(void)
{
	const char *dirs[] = { ".", NULL };
	const struct pwlua_config config = { 0, 0, dirs, 0, NULL };
	const struct pwlua_config small = { 10000000, 0, dirs, 0, NULL };

	script_fails(&config, "rec.lua", "pw.write_csv('rec.csv', { { a = 1 },"
	    " 5 })\n", PW_ERR_INPUT, "rec.lua:1: pw.write_csv: rows[2]: must "
	    "be a table (got number)\nstack traceback:\n\t[C]: in function "
	    "'pipewright.write_csv'\n\trec.lua:1: in main chunk",
	    "a number among record rows");
	script_fails(&small, "csvb.lua", BORDER_LIST("1")
	    "pw.write_csv('csvb.csv', { big })\n", PW_ERR_INPUT, "csvb.lua:5: "
	    "pw.write_csv: instruction budget of 10000000 exceeded\nstack "
	    "traceback:\n\t[C]: in function 'pipewright.write_csv'\n"
	    "\tcsvb.lua:5: in main chunk", "a row of border 2^62 is charged "
	    "cell by cell");
}

/* pwlua_config.output takes print and pw.show, of a script run for its
 * output and of one read as a problem alike. */
static void
test_output(void)
{
	struct pwlua_config config = { 0, 0, NULL, 0, NULL };
	struct pw_problem *p;
	struct pw_error err;
	struct pwlua *lua;
	char *text = NULL;
	size_t len = 0;

	if ((config.output = open_memstream(&text, &len)) == NULL) {
		tap_skip("no memory stream", "output");
		return;
	}
	write_file("out.lua", "print('a', 1)\nprint(nil)\n");
	if ((lua = pwlua_new(&config, &err)) != NULL) {
		tap_int(pwlua_run(lua, "out.lua", 0, NULL, &err), PW_OK,
		    "output: a script runs");
		pwlua_free(lua);
	}
	write_file("outp.lua", "print('problem')\nreturn pw.problem{ "
	    "devices = 1, microbatches = 1, stages = { { f = 1, b = 1, "
	    "w = 1, act = 1, hold = 1 } } }\n");
	p = pwlua_problem_read("outp.lua", &config, NULL, &err);
	if (!tap_ok(p != NULL, "output: a problem script reads"))
		tap_diag("%s", err.msg);
	pw_problem_free(p);
	fclose(config.output);
	tap_str(text, "a\t1\nnil\nproblem\n", "output: both printed to the "
	    "configured stream");
	free(text);
}

/* Mistakes in a problem script name the field, at the script's line. */
static void
test_problem_errors(void)
{
	struct pw_error err;

	write_file("bad1.lua", "return pw.problem{ devices = 2, microbatch = 4 }\n");
	tap_ok(pwlua_problem_read("bad1.lua", NULL, NULL, &err) == NULL,
	    "an unknown field is refused");
	tap_str(err.msg, "bad1.lua:1: pw.problem: unknown field 'microbatch'\n"
	    "stack traceback:\n\t[C]: in function 'pipewright.problem'\n\tbad1.lua:1: in "
	    "main chunk", "...naming it and the line");
	write_file("bad2.lua", "return pw.problem" UNIT_SPEC ",\n"
	    "  cost = function(s, k, d) if s == 3 then return 'x' end end }\n");
	tap_ok(pwlua_problem_read("bad2.lua", NULL, NULL, &err) == NULL,
	    "a cost function returning a string is refused");
	tap_str(err.msg, "bad2.lua:1: pw.problem: cost(3, \"f\") returned a "
	    "string; a number, or nil for the default\nstack traceback:\n"
	    "\t[C]: in function 'pipewright.problem'\n\tbad2.lua:1: in main chunk",
	    "...naming the stage and the kind");
	write_file("bad3.lua", "return 42\n");
	tap_ok(pwlua_problem_read("bad3.lua", NULL, NULL, &err) == NULL,
	    "a script returning a number is no problem");
	tap_str(err.msg, "bad3.lua: a problem script must end with 'return "
	    "pw.problem{...}' (it returned number)", "...saying what it must "
	    "return");
	write_file("bad4.lua", "return pw.problem" UNIT_SPEC ",\n"
	    "  memory_limit = 0.5 }\n");
	tap_ok(pwlua_problem_read("bad4.lua", NULL, NULL, &err) == NULL,
	    "a limit below one activation is refused");
	tap_str(err.msg, "bad4.lua:1: pw.problem: memory[0].limit: 0.5 B is "
	    "below what one microbatch needs on device 0 (static 0 B + act of "
	    "stage 0 1 B) [devices and stages numbered from 0]\nstack traceback:\n\t[C]: in function 'pipewright.problem'\n"
	    "\tbad4.lua:1: in main chunk", "...by the core's validation");
	write_file("bad5.lua", "return pw.problem" UNIT_SPEC ", name = 5 }\n");
	tap_ok(pwlua_problem_read("bad5.lua", NULL, NULL, &err) == NULL,
	    "a name that is no string is refused");
	tap_str(err.msg, "bad5.lua:1: pw.problem: name: must be a string (got "
	    "number)\nstack traceback:\n\t[C]: in function "
	    "'pipewright.problem'\n\tbad5.lua:1: in main chunk", "...naming "
	    "the field and its type");
}

/* Removes the directory PATH and everything below it. */
static void
remove_tree(const char *path)
{
	char child[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *dir;

	if ((dir = opendir(path)) == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof child, "%s/%s", path, e->d_name);
		if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(child);
		else
			unlink(child);
	}
	closedir(dir);
	rmdir(path);
}

/* No script reaches a metatable of ours, and no sequence of calls frees
 * what C still uses: a schedule keeps its problem alive. */
static void
test_objects_kept(void)
{
	script_ok("locked.lua",
	    "local p = pw.problem" UNIT_SPEC " }\n"
	    "local s = pw.schedule(p, 'zb-h1')\n"
	    "local m = pw.model.gpt{ layers = 4, hidden = 16, heads = 2,"
	    " seq = 8, vocab = 100 }\n"
	    "for _, x in ipairs{ p, s, m, pw.model, pw.hardware, '' } do\n"
	    "  assert(getmetatable(x) == 'locked')\n"
	    "end\n"
	    "assert(not pcall(setmetatable, m, nil))\n"
	    "p = nil\n"
	    "collectgarbage()\n"
	    "collectgarbage()\n"
	    "assert(s.problem.devices == 4 and #s.ops == 96)\n",
	    "every metatable is locked; a schedule keeps its problem");
	script_fails(NULL, "uaf.lua", "local p = pw.problem" UNIT_SPEC " }\n"
	    "local s = pw.schedule(p, 'zb-h1')\n"
	    "getmetatable(p).__gc(p)\n", PW_ERR_INPUT,
	    "uaf.lua:3: attempt to call a nil value (field '__gc')\n"
	    "stack traceback:\n\tuaf.lua:3: in main chunk",
	    "a problem's __gc is out of reach");
}

/* Script code never runs where hooks are off: setmetatable refuses a
 * __gc, and __close stays under the budget. */
static void
test_finalizers(void)
{
	const struct pwlua_config small = { 100000, 0, NULL, 0, NULL };

	script_fails(NULL, "gc.lua", "setmetatable({}, { __gc = function()\n"
	    "  while true do end end })\ncollectgarbage()\n", PW_ERR_INPUT,
	    "gc.lua:1: setmetatable: a metatable with __gc is refused (scripts "
	    "have no finalizers)\nstack traceback:\n\t[C]: in function "
	    "'setmetatable'\n\tgc.lua:1: in main chunk",
	    "setmetatable refuses a finalizer");
	script_fails(NULL, "gcf.lua", "setmetatable({}, { __gc = false })\n",
	    PW_ERR_INPUT, "gcf.lua:1: setmetatable: a metatable with __gc is "
	    "refused (scripts have no finalizers)\nstack traceback:\n\t[C]: "
	    "in function 'setmetatable'\n\tgcf.lua:1: in main chunk",
	    "...also a __gc that is set later");
	script_ok("gclate.lua", "local mt = {}\n"
	    "local t = setmetatable({}, mt)\n"
	    "mt.__gc = function() while true do end end\n"
	    "t = nil\ncollectgarbage()\n",
	    "a __gc added after setmetatable never runs");
	script_fails(&small, "close.lua", "do\n  local x <close> = setmetatable("
	    "{}, { __close = function()\n    while true do end end })\nend\n",
	    PW_ERR_INPUT, "close.lua:3: instruction budget of 100000 exceeded "
	    "(a runaway loop?)\nstack traceback:\n\tclose.lua:3: in metamethod "
	    "'close'\n\tclose.lua:3: in main chunk",
	    "a __close handler is under the budget");
}

/* The watchdog stops a run at its wall-clock limit, and pw.solve and
 * pw.plan within what the run has left. */
static void
test_watchdog(void)
{
	const struct pwlua_config quick = { ULONG_MAX, 0, NULL, 0.25, NULL };
	const struct pwlua_config second = { ULONG_MAX, 0, NULL, 1, NULL };
	const double bad[] = { INFINITY, NAN, 1e300, -1 };
	/* Each within what the run has left, and cancelled at its end. */
	static const char *const searches[] = { "pw.solve", "pw.plan" };
	char want[256], text[512];
	struct pw_error err;
	struct pwlua *lua;
	size_t i;

	script_fails(&quick, "wd.lua", "local n = 0\nwhile true do n = n + 1 "
	    "end\n", PW_ERR_INPUT, "wd.lua:2: time limit of 250 ms exceeded "
	    "(a runaway script?)\nstack traceback:\n\twd.lua:2: in main chunk",
	    "the watchdog stops a loop the budget would not");
	/* Builds are C that no flag stops: the run stops as the build the
	 * time ran out in returns, or at the hook's next call where the time
	 * ran out between two builds (the schedules held make the hook run
	 * every few instructions), on the loop's line either way (they take
	 * seconds in all here; the run, 250 ms and one build). */
	lua = pwlua_new(&quick, &err);
	tap_int(run_text(lua, "build.lua", "local st = {}\nfor i = 1, 8 do "
	    "st[i] = { f = 1, b = 1, w = 1, act = 1 } end\nlocal p = "
	    "pw.problem{ devices = 8, microbatches = 2048, stages = st }\n"
	    "for i = 1, 100 do pw.schedule(p, '1f1b') end\n", &err),
	    PW_ERR_INPUT, "builds that outlast the time: stopped");
	tap_ok(strncmp(err.msg, "build.lua:4: ", 13) == 0 && strstr(err.msg,
	    "time limit of 250 ms exceeded") != NULL, "...on the loop's line, "
	    "as a build returns or between two (%.60s)", err.msg);
	pwlua_free(lua);
	lua = pwlua_new(&second, &err);
	for (i = 0; i < sizeof searches / sizeof searches[0]; i++) {
		snprintf(text, sizeof text, "local p = pw.problem" UNIT_SPEC
		    " }\nlocal s = %s(p, { time_limit = 1e6 })\n"
		    "while true do end\n", searches[i]);
		tap_int(run_text(lua, "wds.lua", text, &err), PW_ERR_INPUT,
		    "%s and a loop: stopped", searches[i]);
		tap_ok(strstr(err.msg, "time limit of 1 s exceeded") != NULL &&
		    strstr(err.msg, "internal error") == NULL,
		    "...by the time limit (%.60s)", err.msg);
	}
	tap_int(run_text(lua, "wdn.lua", "local x = 1\n", &err), PW_OK,
	    "the next run has its own time");
	pwlua_free(lua);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const struct pwlua_config absurd = { 0, 0, NULL, bad[i], NULL };

		err.msg[0] = '\0';
		tap_ok(pwlua_new(&absurd, &err) == NULL, "seconds %g: refused",
		    bad[i]);
		snprintf(want, sizeof want, "the time limit of a script must be "
		    "from 0 (the default) to 3.16224e+07 seconds (got %g)",
		    bad[i]);
		tap_str(err.msg, want, "...saying so");
	}
}

static void
test_borders(void)
{
	script_fails(NULL, "bsolve.lua", "local p = pw.problem" UNIT_SPEC " }\n"
	    BORDER_LIST("{ { 'F', 1, 1 }, { 'F', 2, 1 } }")
	    "pw.solve(p, { precede = big })\n", PW_ERR_INPUT, "bsolve.lua:6: "
	    "pw.solve: precede: 4611686018427387904 pairs is more than the "
	    "problem's 192 ops\nstack traceback:\n\t[C]: in function "
	    "'pipewright.solve'\n\tbsolve.lua:6: in main chunk",
	    "pw.solve: a precede list of border 2^62");
	script_fails(NULL, "bprob.lua", BORDER_LIST("{ { 'F', 1, 1 }, "
	    "{ 'F', 2, 1 } }")
	    "pw.problem" UNIT_SPEC ", precede = big }\n", PW_ERR_INPUT,
	    "bprob.lua:5: pw.problem: precede: 4611686018427387904 pairs is "
	    "more than the problem's 192 ops\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.problem'\n\tbprob.lua:5: in main chunk",
	    "pw.problem: a precede list of border 2^62");
	script_fails(NULL, "hw.lua", "local h = pw.hardware 'H100-SXM' { "
	    "efficiency = 2 }\n", PW_ERR_INPUT, "hw.lua:1: pw.hardware: "
	    "H100-SXM: efficiency: must be in (0, 1] (got 2)\nstack traceback:"
	    "\n\t[C]: in ?\n\thw.lua:1: in main chunk",
	    "pw.hardware checks its fields where it is made");
	script_fails(NULL, "m.lua", "local m = pw.model 'gpt3-1.3b' { heads = "
	    "7 }\n", PW_ERR_INPUT, "m.lua:1: pw.model: gpt3-1.3b: heads: 7 "
	    "does not divide hidden 2048\nstack traceback:\n\t[C]: in ?\n"
	    "\tm.lua:1: in main chunk",
	    "pw.model checks its fields where it is made");
	/* The reader's range is the field's: a count, not an int's. */
	script_fails(NULL, "mseq.lua", "local m = pw.model 'gpt3-1.3b' { seq = "
	    "3e9 }\n", PW_ERR_INPUT, "mseq.lua:1: pw.model: seq: "
	    "must be from 1 to 2147483647 (got 3000000000)\nstack traceback:"
	    "\n\t[C]: in ?\n\tmseq.lua:1: in main chunk",
	    "pw.model: a sequence beyond an int, in the field's range");
	script_fails(NULL, "mkv.lua", "local m = pw.model 'gpt3-1.3b' { "
	    "kv_heads = -1 }\n", PW_ERR_INPUT, "mkv.lua:1: pw.model: "
	    "kv_heads: must be from 0 to 2147483647 (got -1)\n"
	    "stack traceback:\n\t[C]: in ?\n\tmkv.lua:1: in main chunk",
	    "pw.model: kv_heads from 0 (0: as many as heads)");
	script_fails(NULL, "pin2.lua", "pw.problem" UNIT_SPEC ", precede = { "
	    "{ { 'F', 1, 1 }, { 'F', 2, 1 } } } }\n", PW_ERR_INPUT, "pin2.lua:1: "
	    "pw.problem: precede[1]: F(0,0) is on device 0 and F(1,0) on "
	    "device 1: a pin joins two ops of one device [devices and stages "
	    "numbered from 0]\nstack traceback:\n\t[C]: in function "
	    "'pipewright.problem'\n\tpin2.lua:1: in main chunk",
	    "pw.problem: a pair across two devices");
	script_fails(NULL, "pin1.lua", "pw.problem" UNIT_SPEC ", precede = { "
	    "{ { 'B', 1, 1 }, { 'BW', 1, 1 } } } }\n", PW_ERR_INPUT,
	    "pin1.lua:1: pw.problem: precede[1]: B(0,0) and BW(0,0) are one "
	    "op [devices and stages numbered from 0]\nstack traceback:\n\t"
	    "[C]: in function 'pipewright.problem'\n\tpin1.lua:1: in main "
	    "chunk", "pw.problem: a pair of one op");
	/* -inf was taken for the stages' comm never given. */
	script_fails(NULL, "comm.lua", "pw.problem{ devices = 1, microbatches"
	    " = 2, comm = -math.huge, stages = { { f = 1, b = 1, w = 1, act ="
	    " 1 } } }\n", PW_ERR_INPUT, "comm.lua:1: pw.problem: comm: must "
	    "be a finite non-negative number (got -inf)\nstack traceback:\n\t[C]: in"
	    " function 'pipewright.problem'\n\tcomm.lua:1: in main chunk",
	    "pw.problem: a comm of -inf, named");
}

/* offload = {...} is read in one pass: repeats mark a stage once, and a
 * stage out of range names its place. */
static void
test_offload_list(void)
{
	script_ok("offl.lua", "local st = { f = 1, b = 1, w = 1, act = 1,"
	    " hold = 0.5, offload = 0.5 }\n"
	    "local p = pw.problem{ devices = 2, microbatches = 2,"
	    " link = { d2h = 1, h2d = 1 }, stages = { st, st, st, st },"
	    " offload = { 4, 2, 4, 2 } }\n"
	    "local o = {}\n"
	    "for s, x in ipairs(p.stages) do o[s] = x.offload end\n"
	    "assert(o[1] == 0 and o[2] == 0.5 and o[3] == 0 and o[4] == 0.5,"
	    " table.concat(o, ' '))\n", "offload: repeated stages, the rest "
	    "keep their activations");
	script_fails(NULL, "offb.lua", "local st = " UNIT_STAGE "\n"
	    "pw.problem{ devices = 1, microbatches = 1, stages = { st },"
	    " offload = { 1, 2 } }\n", PW_ERR_INPUT, "offb.lua:2: pw.problem: "
	    "offload[2]: must be a stage from 1 to 1 (got 2)\nstack traceback:"
	    "\n\t[C]: in function 'pipewright.problem'\n\toffb.lua:2: in main "
	    "chunk", "offload: a stage out of range");
}

/* Random small patterns and subjects: the metered matcher answers as
 * Lua's own string library does (kept as R). */
static const char property_script[] =
    "math.randomseed(42)\n"
    "local atoms = { 'a', 'b', '.', '%a', '%d', '%s', '%w', '%A', '%S',\n"
    "  '[ab]', '[^a]', '[a-c]', '[%d_]', '%.', '%%', 'x', '1', '(', ')',\n"
    "  '()', '%1', '%2', '%b()', '%bab', '%f[%w]', '%f[%W]', '^', '$',\n"
    "  '[]a]', '[^]]', '%', '[', '[a-]', '[%a-z]', '%z', '%x', '%p' }\n"
    "local quants = { '', '', '', '*', '+', '-', '?' }\n"
    "local chars = { 'a', 'b', 'c', '1', '2', ' ', '(', ')', '_', '.',\n"
    "  'x', ']', '^', '-', '%', '\\0' }\n"
    "local reps = { '<%0>', '%1', 'x', '%%', '%2', '%', { a = 'A', [1] = 'one',"
    " b = false },\n"
    "  function(a, b) if b then return a .. '/' .. tostring(b) end end }\n"
    "local function pick(t) return t[math.random(#t)] end\n"
    "local function make(from, quant, max)\n"
    "  local t = {}\n"
    "  for i = 1, math.random(0, max) do\n"
    "    t[i] = pick(from) .. (quant and pick(quants) or '')\n"
    "  end\n"
    "  return table.concat(t)\n"
    "end\n"
    "local function all(f, ...)\n"
    "  local r = table.pack(pcall(f, ...))\n"
    "  if not r[1] then return 'error' end\n"
    "  for i = 1, r.n do r[i] = tostring(r[i]) end\n"
    "  return table.concat(r, '|', 1, r.n)\n"
    "end\n"
    "local function each(gmatch)\n"
    "  return function(s, p, init)\n"
    "    local out = {}\n"
    "    for a, b in gmatch(s, p, init) do\n"
    "      out[#out + 1] = tostring(a) .. ':' .. tostring(b)\n"
    "      if #out > 40 then break end\n"
    "    end\n"
    "    return table.concat(out, ',')\n"
    "  end\n"
    "end\n"
    "local mine = { string.find, string.match, each(string.gmatch),\n"
    "  string.gsub }\n"
    "local real = { R.find, R.match, each(R.gmatch), R.gsub }\n"
    "local cases, bad = 0, nil\n"
    "for n = 1, 4000 do\n"
    "  local p, s = make(atoms, true, 5), make(chars, false, 8)\n"
    "  local third = math.random(-3, 10)\n"
    "  for k = 1, 4 do\n"
    "    local arg3, arg4 = third, k == 1 and math.random(0, 3) == 0 or nil\n"
    "    if k == 4 then arg3, arg4 = pick(reps), math.random(-1, 4) end\n"
    "    local a = all(mine[k], s, p, arg3, arg4)\n"
    "    local b = all(real[k], s, p, arg3, arg4)\n"
    "    cases = cases + 1\n"
    "    if a ~= b and not bad then\n"
    "      bad = string.format('%d: %q %q %s: %s, not %s', k, s, p,\n"
    "        tostring(arg3), a, b)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return cases, bad\n";

/* A meter with no end, counting what it is charged. */
struct count_meter {
	struct pwl_meter meter;
	unsigned long steps;
};

static const char *
count_charge(struct pwl_meter *m, lua_State *L, unsigned long steps)
{
	(void)L;
	((struct count_meter *)(void *)m)->steps += steps;
	return NULL;
}

static void
test_patterns(void)
{
	static const char *const hostile[][2] = {
		{ "function 'string.find'", "return s:find(p)" },
		{ "function 'string.match'", "return s:match(p)" },
		{ "function 'string.gsub'", "return s:gsub(p, 'x')" },
		{ "for iterator 'for iterator'", "for x in s:gmatch(p) do end" },
	};
	const struct pwlua_config budget = { 10000000, 0, NULL, 0, NULL };
	/* Seconds that making the strings never takes, however loaded the
	 * machine (a quarter of one was once spent before the find), and
	 * that the find's ~1e13 steps always do. */
	const struct pwlua_config timed = { ULONG_MAX, 0, NULL, 2, NULL };
	struct count_meter meter = { { count_charge, 0 }, 0 };
	char text[256], want[512];
	lua_State *L = luaL_newstate();
	size_t i;

	luaL_openlibs(L);
	if (luaL_dostring(L, "R = { find = string.find, match = string.match,"
	    " gmatch = string.gmatch, gsub = string.gsub }") != LUA_OK)
		tap_diag("%s", lua_tostring(L, -1));
	pwl_open_pattern(L, &meter.meter);
	if (!tap_int(luaL_dostring(L, property_script), LUA_OK,
	    "the property script runs"))
		tap_diag("%s", lua_tostring(L, -1));
	tap_int(lua_tointeger(L, -2), 16000, "16000 random cases");
	if (!tap_ok(lua_isnil(L, -1), "...each answered as Lua's own"))
		tap_diag("%s", lua_tostring(L, -1));
	tap_ok(meter.steps > 0, "...each charged to the meter");
	lua_close(L);

	for (i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
		snprintf(text, sizeof text, "local s = ('a'):rep(3000)\n"
		    "local p = ('a-'):rep(12) .. 'b'\n%s\n", hostile[i][1]);
		snprintf(want, sizeof want, "hostile.lua:3: pattern too complex "
		    "(instruction budget of 10000000 exceeded)\nstack "
		    "traceback:\n"
		    "\t[C]: in %s\n\thostile.lua:3: in main chunk",
		    hostile[i][0]);
		script_fails(&budget, "hostile.lua", text, PW_ERR_INPUT, want,
		    "a backtracking pattern runs out of the budget");
	}
	/* ~4e12 steps of set scanning: each is charged, and the deadline,
	 * read where they are, stops it too (the strings' 5e6 bytes are
	 * charged to the budget as string.rep makes them). */
	script_fails(&budget, "set.lua", "local s = ('z'):rep(4e6)\n"
	    "local p = '[' .. ('a'):rep(1e6) .. 'z]*'\nreturn s:find(p)\n",
	    PW_ERR_INPUT, "set.lua:3: pattern too complex (instruction budget "
	    "of 10000000 exceeded)\nstack traceback:\n\t[C]: in function "
	    "'string.find'\n\tset.lua:3: in main chunk",
	    "a long set is charged by its length");
	script_fails(&timed, "setq.lua", "local s = ('z'):rep(1e7)\n"
	    "local p = '[' .. ('a'):rep(1e6) .. 'z]*'\nreturn s:find(p)\n",
	    PW_ERR_INPUT, "setq.lua:3: pattern too complex (time limit of 2 "
	    "s exceeded)\nstack traceback:\n\t[C]: in function "
	    "'string.find'\n\tsetq.lua:3: in main chunk",
	    "...and stopped at the time limit, saying so");
	script_fails(&budget, "plain.lua", "local s = ('a'):rep(1e6)\n"
	    "for i = 1, 100 do s:find('b', 1, true) end\n", PW_ERR_INPUT,
	    "plain.lua:2: pattern too complex (instruction budget of 10000000 "
	    "exceeded)\nstack traceback:\n\t[C]: in function 'string.find'"
	    "\n\tplain.lua:2: in main chunk", "a plain find is charged by what "
	    "it scans");
	script_fails(&budget, "gsub.lua", "local s = ('a'):rep(1e6)\n"
	    "for i = 1, 100 do s:gsub('^b', 'c') end\n", PW_ERR_INPUT,
	    "gsub.lua:2: pattern too complex (instruction budget of 10000000 "
	    "exceeded)\nstack traceback:\n\t[C]: in function 'string.gsub'"
	    "\n\tgsub.lua:2: in main chunk", "gsub is charged by what it "
	    "copies");
	script_ok("posref.lua", "assert(('aa'):find('()%1') == nil)\n"
	    "assert(('aa'):match('()a%1') == nil)\n",
	    "a back reference to a position capture matches nothing");
	script_fails(&budget, "swallow.lua", "local s = ('a'):rep(3000)\n"
	    "local ok = pcall(s.find, s, ('a-'):rep(12) .. 'b')\n"
	    "local x = 1\n", PW_ERR_INPUT, "swallow.lua:3: instruction budget "
	    "of 10000000 exceeded (a runaway loop?)\nstack traceback:\n"
	    "\tswallow.lua:3: in main chunk",
	    "pcall does not swallow the pattern's stop");
}

/* C memory made for a script counts against its cap; counts too large
 * for memory are refused before anything is sized by them. */
static void
test_c_memory(void)
{
	const struct pwlua_config capped = { 0, 32 << 20, NULL, 0, NULL };
	char want[512];
	struct pw_error err;
	struct pwlua *lua;

	snprintf(want, sizeof want, "huge.lua:2: pw.problem: microbatches: 1 "
	    "stages x 2147483647 microbatches exceeds the limit of %zu (stage, "
	    "microbatch) pairs (each keeps 6 ops in memory)\nstack traceback:"
	    "\n\t[C]: in function 'pipewright.problem'\n\thuge.lua:2: in main "
	    "chunk", PW_MAX_PAIRS);
	script_fails(NULL, "huge.lua", "local st = " UNIT_STAGE "\n"
	    "pw.problem{ devices = 1, microbatches = 2147483647,"
	    " stages = { st } }\n", PW_ERR_INPUT, want,
	    "2^31-1 microbatches: an error");
	lua = pwlua_new(&capped, &err);
	tap_int(run_text(lua, "many.lua", "local st = " UNIT_STAGE "\n"
	    "local p = pw.problem{ devices = 4, microbatches = 4096, stages = {"
	    " st, st, st, st } }\n"
	    "local kept = {}\n"
	    "for i = 1, 1000 do kept[i] = pw.schedule(p, 'gpipe') end\n", &err),
	    PW_ERR_INPUT, "kept schedules: stopped by the cap");
	tap_ok(strncmp(err.msg, "many.lua:4: pw.schedule: ", 25) == 0 &&
	    strstr(err.msg, " more exceeds the memory cap of 32 MiB (") != NULL,
	    "...naming the call and the cap");
	/* The candidates a plan keeps are charged before it runs. */
	tap_int(run_text(lua, "plancap.lua", "local st = " UNIT_STAGE "\n"
	    "local p = pw.problem{ devices = 4, microbatches = 4096, stages = {"
	    " st, st, st, st } }\n"
	    "pw.plan(p, { top = 1000 })\n", &err), PW_ERR_INPUT,
	    "pw.plan's kept candidates: stopped by the cap");
	tap_ok(strncmp(err.msg, "plancap.lua:3: pw.plan: ", 24) == 0 &&
	    strstr(err.msg, " more exceeds the memory cap of 32 MiB (") != NULL,
	    "...naming the call and the cap");
	/* What the planner holds at once is charged before it runs: 32
	 * devices x 32,000 microbatches of an 8B model need more than the
	 * cap for one design alone, and are refused at once. */
	pwlua_free(lua);
	lua = pwlua_new(&(struct pwlua_config){ 0, PWLUA_MEMORY, NULL, 0, NULL },
	    &err);
	tap_int(run_text(lua, "planwork.lua",
	    "local p = pw.problem{ model = 'llama3-8b', hardware = 'H100-SXM',"
	    " devices = 32, microbatches = 32000 }\n"
	    "pw.plan(p, { top = 1 })\n", &err), PW_ERR_INPUT,
	    "pw.plan's working set: refused by the cap");
	tap_ok(strncmp(err.msg, "planwork.lua:2: pw.plan: ", 25) == 0 &&
	    strstr(err.msg, " more exceeds the memory cap of 512 MiB (") != NULL,
	    "...before it runs, naming the cap");
	pwlua_free(lua);
	lua = pwlua_new(&capped, &err);
	if (!tap_int(run_text(lua, "drop.lua", "local st = " UNIT_STAGE "\n"
	    "local p = pw.problem{ devices = 4, microbatches = 4096, stages = {"
	    " st, st, st, st } }\n"
	    "for i = 1, 100 do local s = pw.schedule(p, 'gpipe') end\n", &err),
	    PW_OK, "dropped schedules give their memory back"))
		tap_diag("%s", err.msg);
	pwlua_free(lua);
}

/* Text that reaches a file is UTF-8; paths have no NUL; pw.load reads
 * only below the directories, links resolved, and quotes nothing from
 * outside. */
static void
test_files_refused(void)
{
	const char *dirs[] = { "inside", NULL };
	const struct pwlua_config config = { 0, 0, dirs, 0, NULL };
	char want[PATH_MAX + 512], real[PATH_MAX], cwd[PATH_MAX];

	mkdir("inside", 0777);
	script_fails(NULL, "utf.lua", "pw.problem{ name = 'bad\\xff',"
	    " devices = 1, microbatches = 1, stages = { " UNIT_STAGE " } }\n",
	    PW_ERR_INPUT, "utf.lua:1: pw.problem: name: must be UTF-8 text "
	    "without NUL bytes\nstack traceback:\n\t[C]: in function "
	    "'pipewright.problem'\n\tutf.lua:1: in main chunk",
	    "a problem name that is not UTF-8");
	script_fails(NULL, "utfm.lua", "pw.hardware{ name = '\\xc3',"
	    " peak_flops = 1, memory = 1, p2p_bandwidth = 1 }\n", PW_ERR_INPUT,
	    "utfm.lua:1: pw.hardware: name: must be UTF-8 text without NUL "
	    "bytes\nstack traceback:\n\t[C]: in field 'hardware'\n"
	    "\tutfm.lua:1: in main chunk", "a hardware name that is not UTF-8");
	script_fails(&config, "utfc.lua", "pw.write_csv('-', { { 'ok', "
	    "'\\xfe' } })\n", PW_ERR_INPUT, "utfc.lua:1: pw.write_csv: "
	    "rows[1][2]: must be UTF-8 text without NUL bytes\nstack "
	    "traceback:\n\t[C]: in function 'pipewright.write_csv'\n"
	    "\tutfc.lua:1: in main chunk", "a CSV cell that is not UTF-8");
	script_fails(&config, "nul.lua", "pw.write_csv('inside/a\\0.lua', {})\n",
	    PW_ERR_INPUT, "nul.lua:1: pw.write_csv: inside/a: the path has a "
	    "NUL byte inside\nstack traceback:\n\t[C]: in function "
	    "'pipewright.write_csv'\n\tnul.lua:1: in main chunk",
	    "a NUL inside a written path");
	script_fails(&config, "nul.lua", "pw.load('inside/p.json\\0.lua')\n",
	    PW_ERR_INPUT, "nul.lua:1: pw.load: inside/p.json: the path has a "
	    "NUL byte inside\nstack traceback:\n\t[C]: in function "
	    "'pipewright.load'\n\tnul.lua:1: in main chunk",
	    "a NUL inside a read path");
	script_fails(&config, "nul.lua", "pw.schedule(pw.problem" UNIT_SPEC
	    " }, '1f1b\\0x')\n", PW_ERR_INPUT, "nul.lua:1: pw.schedule: 1f1b: "
	    "the name has a NUL byte inside\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.schedule'\n\tnul.lua:1: in main chunk",
	    "a NUL inside a family's name (1f1b was built from it)");
	script_fails(&config, "nul.lua", "pw.model('gpt3-6.7b\\0')\n",
	    PW_ERR_INPUT, "nul.lua:1: pw.model: gpt3-6.7b: the name has a NUL "
	    "byte inside\nstack traceback:\n\t[C]: in field 'model'\n\t"
	    "nul.lua:1: in main chunk", "a NUL inside a preset's name (the "
	    "preset was taken from it)");

	write_file("secret.json", "TOPSECRET\n");
	if (symlink("../secret.json", "inside/link.json") != 0)
		perror("symlink");
	if (realpath("inside", real) == NULL || getcwd(cwd, sizeof cwd) == NULL)
		real[0] = cwd[0] = '\0';
	snprintf(want, sizeof want, "rd.lua:1: pw.load: secret.json: scripts "
	    "may read only below %s\nstack traceback:\n\t[C]: in function "
	    "'pipewright.load'\n\trd.lua:1: in main chunk", real);
	script_fails(&config, "rd.lua", "pw.load('secret.json')\n",
	    PW_ERR_INPUT, want, "a read outside the directories");
	snprintf(want, sizeof want, "ln.lua:1: pw.load: inside/link.json: "
	    "scripts may read only below %s\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.load'\n\tln.lua:1: in main chunk", real);
	script_fails(&config, "ln.lua", "pw.load('inside/link.json')\n",
	    PW_ERR_INPUT, want, "a link leading outside, quoting nothing");
	snprintf(want, sizeof want, "etc.lua:1: pw.load: /etc/passwd: scripts "
	    "may read only below %s\nstack traceback:\n\t[C]: in function "
	    "'pipewright.load'\n\tetc.lua:1: in main chunk", cwd);
	script_fails(NULL, "etc.lua", "pw.load('/etc/passwd')\n", PW_ERR_INPUT,
	    want, "writing nothing, a script reads below . only");
	snprintf(want, sizeof want, "miss.lua:1: pw.load: ../nosuch.json: "
	    "scripts may read only below %s\nstack traceback:\n\t[C]: in "
	    "function 'pipewright.load'\n\tmiss.lua:1: in main chunk", real);
	script_fails(&config, "miss.lua", "pw.load('../nosuch.json')\n",
	    PW_ERR_INPUT, want, "a missing file outside: refused, not 'no "
	    "such file'");
	if (mkfifo("inside/fifo.json", 0666) != 0)
		perror("mkfifo");
	script_fails(&config, "fifo.lua", "pw.load('inside/fifo.json')\n",
	    PW_ERR_INPUT, "fifo.lua:1: pw.load: inside/fifo.json: not a "
	    "regular file (scripts read only regular files)\nstack traceback:"
	    "\n\t[C]: in function 'pipewright.load'\n\tfifo.lua:1: in main "
	    "chunk", "a FIFO is refused before it is opened");
	script_fails(&config, "stdin.lua", "pw.load('-')\n", PW_ERR_INPUT,
	    "stdin.lua:1: pw.load: -: scripts read files, not the standard "
	    "input\nstack traceback:\n\t[C]: in function 'pipewright.load'"
	    "\n\tstdin.lua:1: in main chunk", "'-' is no file to read");
}

/* A problem script may return a schedule: its problem is taken with the
 * options the script gave it, as pw.solve would take them. */
static void
test_problem_of_schedule(void)
{
	struct pwlua_solve_prefs prefs;
	struct pw_problem *p;
	struct pw_error err;

	write_file("sched_prefs.lua", "local p = pw.problem" UNIT_SPEC ",\n"
	    "  objective = 'span', time_limit = 7,\n"
	    "  precede = { { { 'F', 1, 1 }, { 'F', 1, 2 } } } }\n"
	    "return pw.schedule(p, '1f1b')\n");
	p = pwlua_problem_read("sched_prefs.lua", NULL, &prefs, &err);
	if (tap_ok(p != NULL, "a script returning a schedule reads")) {
		tap_ok(p->devices == 4 && p->microbatches == 8,
		    "its problem is the schedule's");
		tap_ok(prefs.has_objective && prefs.objective == PW_OBJ_SPAN &&
		    prefs.time_limit == 7 && prefs.npins == 1 &&
		    prefs.pins[0].after.mb == 1,
		    "with the objective, time limit and pins its script gave");
		pwlua_solve_prefs_free(&prefs);
	} else
		tap_diag("%s", err.msg);
	pw_problem_free(p);

	write_file("sched_split.lua", "local p = pw.problem{ model = "
	    "'gpt3-1.3b', hardware = 'H100-SXM', devices = 4, "
	    "microbatches = 8, objective = 'span', time_limit = 3 }\n"
	    "return pw.schedule(p, 'zb-v')\n");
	p = pwlua_problem_read("sched_split.lua", NULL, &prefs, &err);
	if (tap_ok(p != NULL, "a script returning a split again reads")) {
		tap_ok(p->nstages == 8, "its problem is the V's 8 stages");
		tap_ok(prefs.has_objective && prefs.objective == PW_OBJ_SPAN &&
		    prefs.time_limit == 3 && prefs.npins == 0,
		    "with the objective and time limit its script gave");
		pwlua_solve_prefs_free(&prefs);
	} else
		tap_diag("%s", err.msg);
	pw_problem_free(p);
}

/* pwlua_problem_write: the script reads back as the same problem, its
 * origin (the model's split) kept; given stages as they are. */
static void
test_problem_write(void)
{
	struct pw_problem *def = pw_problem_default(), *v = NULL, *raw, *back;
	struct pwlua_solve_prefs prefs;
	struct pw_error err;
	int d;

	if (!tap_int(pwlua_problem_write("def.lua", def, &err), PW_OK,
	    "write the default problem"))
		tap_diag("%s", err.msg);
	back = pwlua_problem_read("def.lua", NULL, &prefs, &err);
	if (tap_ok(back != NULL, "it reads back")) {
		tap_ok(pw_problem_same(back, def), "the same problem");
		tap_str(back->name, def->name, "its name");
		tap_ok(back->origin != NULL && back->origin->split.devices == 8
		    && back->origin->split.chunks == 1 &&
		    back->origin->split.microbatches == 32 &&
		    back->origin->split.offload &&
		    back->origin->split.placement == PW_PLACE_LOOP,
		    "the same origin split");
		tap_ok(!prefs.has_objective && prefs.npins == 0,
		    "no optimizer options");
		pwlua_solve_prefs_free(&prefs);
	} else {
		tap_diag("%s", err.msg);
	}
	pw_problem_free(back);

	tap_int(pw_problem_resplit(def, PW_PLACE_V, 2, &v, &err), PW_OK,
	    "the default problem split as a V");
	for (d = 0; v != NULL && d < v->devices; d++)
		v->memory[d].limit = 40.0 * (1 << 30);
	tap_int(v ? pwlua_problem_write("v.lua", v, &err) : -1, PW_OK,
	    "write it with a 40 GiB limit");
	back = pwlua_problem_read("v.lua", NULL, NULL, &err);
	if (tap_ok(back != NULL, "it reads back")) {
		tap_ok(pw_problem_same(back, v), "the same V problem");
		tap_ok(back->origin != NULL && back->origin->split.chunks == 2 &&
		    back->origin->split.placement == PW_PLACE_V &&
		    back->origin->split.memory_limit == 40.0 * (1 << 30),
		    "the same origin split, the limit in it");
	} else {
		tap_diag("%s", err.msg);
	}
	pw_problem_free(back);

	raw = pw_problem_new(2, 3, 5);
	free(raw->name);
	raw->name = pw_xstrdup("q\"uote\\d\n");
	pw_problem_set_comm(raw, 0.1);
	for (d = 0; d < 3; d++)
		raw->stages[d] = (struct pw_stage){ .device = d % 2,
		    .f = 0.1 * (d + 1), .b = 1.0 / 3, .w = 0.7, .act = 3e9,
		    .hold = 1e9, .offload = d == 1 ? 2e9 : 0, .comm = 0.1 };
	raw->stages[2].comm = 0.25;
	raw->memory[0] = (struct pw_device_memory){ 1.5e9, 1e10 };
	raw->memory[1] = (struct pw_device_memory){ 0, INFINITY };
	pw_problem_set_link(raw, 12.5e9, 1e10, 1e-6, false);
	raw->link.group[1] = 0;
	raw->link.ngroups = 1;
	tap_int(pwlua_problem_write("raw.lua", raw, &err), PW_OK,
	    "write a problem of given stages");
	back = pwlua_problem_read("raw.lua", NULL, NULL, &err);
	if (tap_ok(back != NULL, "it reads back")) {
		tap_ok(pw_problem_same(back, raw), "the same stages, memory and "
		    "link (one group of both devices)");
		tap_str(back->name, raw->name, "a name with quotes, a "
		    "backslash and a newline");
		tap_ok(back->origin == NULL, "no origin");
	} else {
		tap_diag("%s", err.msg);
	}
	pw_problem_free(back);
	tap_ok(pwlua_problem_write("no/such/dir/x.lua", raw, &err) != PW_OK &&
	    strstr(err.msg, "no/such/dir/x.lua") != NULL,
	    "an unwritable path is an error naming it: %s", err.msg);
	pw_problem_free(raw);
	pw_problem_free(v);
	pw_problem_free(def);
}

/* The cost model's newer fields in scripts: pw.problem's reserve, tp
 * and dp as the C split has them, a model script for --model FILE.lua,
 * and the writer keeping all of them. */
static void
test_model_fields(void)
{
	static const int layers[] = { 9, 8, 8, 7 };
	struct pw_model m = *pw_model_find("llama3-8b");
	struct pw_split sp = { .devices = 4, .chunks = 1,
	    .placement = PW_PLACE_LOOP, .microbatches = 8,
	    .layers_per_stage = layers, .memory_limit = 60 * 1073741824.0,
	    .reserve_bytes = 4 * 1073741824.0, .reserve_fraction = 0.05,
	    .tp = 2, .dp = 4 };
	struct pw_problem *p, *want = NULL, *back;
	struct pw_model read;
	struct pw_error err;
	char *name = NULL;

	m.tied_embeddings = true;
	if (!tap_int(pw_cost_problem(&m, pw_hardware_find("H100-SXM"), &sp,
	    &want, &err), PW_OK, "the C llama3-8b problem builds"))
		tap_diag("%s", err.msg);
	p = script_problem("fields.lua",
	    "return pw.problem{ model = pw.model 'llama3-8b' {\n"
	    "  tied_embeddings = true }, hardware = 'H100-SXM',\n"
	    "  devices = 4, microbatches = 8, layers_per_stage = { 9, 8, 8, 7 },\n"
	    "  memory_limit = 60 * pw.GiB, reserve = 4 * pw.GiB,\n"
	    "  reserve_fraction = 0.05, tp = 2, dp = 4 }\n");
	if (p != NULL && want != NULL) {
		tap_ok(pw_problem_same(p, want) && p->origin != NULL &&
		    p->origin->split.tp == 2 && p->origin->split.dp == 4 &&
		    p->origin->split.reserve_bytes == 4 * 1073741824.0 &&
		    p->origin->split.reserve_fraction == 0.05 &&
		    p->origin->model.tied_embeddings &&
		    p->origin->model.gated_mlp,
		    "reserve, reserve_fraction, tp and dp as the C split");
		tap_near(p->memory[2].limit, 0.95 * 60 * 1073741824.0 -
		    4 * 1073741824.0, 0, "the limit less both reserves");
		tap_int(pwlua_problem_write("fields_out.lua", p, &err), PW_OK,
		    "write it");
		back = pwlua_problem_read("fields_out.lua", NULL, NULL, &err);
		tap_ok(back != NULL && pw_problem_same(back, p) &&
		    back->origin != NULL && back->origin->split.tp == 2 &&
		    back->origin->split.dp == 4 &&
		    back->origin->split.memory_limit == 60 * 1073741824.0 &&
		    back->origin->split.reserve_fraction == 0.05 &&
		    back->origin->model.tied_embeddings,
		    "the written script reads back with its origin");
		pw_problem_free(back);
	}
	pw_problem_free(p);
	pw_problem_free(want);
	p = script_problem("reserve_bad.lua",
	    "return pw.problem{ model = 'llama3-8b', hardware = 'H100-SXM',\n"
	    "  devices = 4, microbatches = 8, reserve_fraction = 1 }\n");
	tap_ok(p == NULL, "a reserve fraction of 1 is refused");
	pw_problem_free(p);

	write_file("mymodel.lua", "return pw.model{ name = 'mine', layers = 4,\n"
	    "  hidden = 64, heads = 4, seq = 32, vocab = 1000, ffn = 160,\n"
	    "  gated_mlp = true }\n");
	if (tap_int(pwlua_model_read("mymodel.lua", &read, &name, &err), PW_OK,
	    "a model script reads"))
		tap_ok(read.layers == 4 && read.hidden == 64 && read.ffn == 160 &&
		    read.gated_mlp && read.flash_attention &&
		    !read.tied_embeddings && read.micro_batch == 1 &&
		    name != NULL && read.name == name &&
		    strcmp(name, "mine") == 0,
		    "its fields, the defaults (flash attention) and its name");
	else
		tap_diag("%s", err.msg);
	free(name);
	write_file("plain.lua", "return { layers = 2, hidden = 8, heads = 2,\n"
	    "  seq = 4, vocab = 10 }\n");
	tap_ok(pwlua_model_read("plain.lua", &read, &name, &err) == PW_OK &&
	    name == NULL && read.name == NULL && read.layers == 2,
	    "a plain table of fields, without a name");
	write_file("notmodel.lua", "return 42\n");
	tap_int(pwlua_model_read("notmodel.lua", &read, &name, &err),
	    PW_ERR_INPUT, "a script returning a number is refused");
	tap_str(err.msg, "notmodel.lua: a model script must end with "
	    "'return pw.model{...}' (it returned number)", "and says so");
	write_file("problem.lua", "return pw.problem" UNIT_SPEC " }\n");
	tap_int(pwlua_model_read("problem.lua", &read, &name, &err),
	    PW_ERR_INPUT, "a problem script as a model is refused");
	tap_str(err.msg, "problem.lua: a model script must end with "
	    "'return pw.model{...}' (it returned a problem)", "naming what "
	    "it returned (Lua's word is userdata)");
	write_file("badfield.lua", "return { layers = 2, hidden = 8,\n"
	    "  heads = 2, seq = 4 }\n");
	tap_int(pwlua_model_read("badfield.lua", &read, &name, &err),
	    PW_ERR_INPUT, "a missing field is refused");
	tap_ok(strstr(err.msg, "badfield.lua") != NULL &&
	    strstr(err.msg, "vocab") != NULL && name == NULL,
	    "naming the file and the field (%s)", err.msg);
	/* Read from C after the script ran: no line of it is left to
	 * trace, so no empty traceback either. */
	write_file("fraction.lua", "return { layers = 2.5, hidden = 8,\n"
	    "  heads = 2, seq = 4, vocab = 16 }\n");
	tap_int(pwlua_model_read("fraction.lua", &read, &name, &err),
	    PW_ERR_INPUT, "a fractional layer count is refused");
	tap_str(err.msg, "fraction.lua: layers: must be a whole number (got "
	    "2.5)", "in one line, without an empty traceback");
	/* Whole but beyond any integer, or past the cost model's layers:
	 * the range is what is wrong, and says the real one. */
	write_file("huge.lua", "return { layers = 2, hidden = 1e300,\n"
	    "  heads = 2, seq = 4, vocab = 16 }\n");
	tap_int(pwlua_model_read("huge.lua", &read, &name, &err),
	    PW_ERR_INPUT, "hidden 1e300 is refused");
	tap_str(err.msg, "huge.lua: hidden: must be from 1 to 2147483647 (got "
	    "1e+300)", "by its range");
	write_file("deep.lua", "return { layers = 200000, hidden = 8,\n"
	    "  heads = 2, seq = 4, vocab = 16 }\n");
	tap_int(pwlua_model_read("deep.lua", &read, &name, &err),
	    PW_ERR_INPUT, "200000 layers are refused");
	tap_str(err.msg, "deep.lua: layers: must be from 1 to 100000 (got "
	    "200000)", "by the cost model's range");
	write_file("nan.lua", "return { layers = 2, hidden = 8,\n"
	    "  heads = 2, seq = 0/0, vocab = 16 }\n");
	tap_int(pwlua_model_read("nan.lua", &read, &name, &err),
	    PW_ERR_INPUT, "seq nan is refused");
	tap_str(err.msg, "nan.lua: seq: must be a whole number (got nan)",
	    "as nan, whatever its sign bit");
	tap_int(pwlua_model_read("nosuch.lua", &read, &name, &err), PW_ERR_IO,
	    "a missing file is an I/O error");
}

int
main(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/test_lua.XXXXXX",
	    base != NULL ? base : "/tmp");
	if (mkdtemp(tmpdir) == NULL || chdir(tmpdir) != 0) {
		perror(tmpdir);
		return 99;
	}
	test_default();
	test_model_problem();
	test_raw_problem();
	test_overrides();
	test_schedules();
	test_plan();
	test_load_write();
	test_sandbox();
	test_bytecode();
	test_no_partial_files();
	test_csv_rows();
	test_problem_errors();
	test_output();
	test_objects_kept();
	test_finalizers();
	test_watchdog();
	test_borders();
	test_offload_list();
	test_patterns();
	test_c_memory();
	test_files_refused();
	test_problem_write();
	test_problem_of_schedule();
	test_model_fields();
	if (chdir("/") == 0)
		remove_tree(tmpdir);
	return tap_done();
}
