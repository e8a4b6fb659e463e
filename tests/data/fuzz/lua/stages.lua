-- A problem of given stages, a link and pins: a seed for fuzz_lua.
local pw = require "pipewright"
local stages = {}
for s = 1, 4 do
	stages[s] = { f = 1, b = 1, w = 1, act = 2, hold = 1, offload = 1,
	    comm = 0.1 * s }
end
local p = pw.problem{
	name = "seed",
	devices = 2,
	microbatches = 4,
	stages = stages,
	comm = 0.25,
	link = { d2h = 10, h2d = 10, latency = 0.01, duplex = true,
	    groups = { { 1, 2 } } },
	memory_limit = function(d, default) return 20 + d end,
	static = { 1, 2 },
	objective = "span",
	time_limit = 0.1,
	precede = { { { "B", 1, 1 }, { "F", 1, 3 } } },
}
local s = assert(pw.schedule(p, "1f1b-interleaved"))
assert(s.makespan > 0 and #s.ops > 0 and s.problem == p)
for _, op in ipairs(s.ops) do
	local _ = op.kind .. op.stage .. op.mb .. op.start .. op.finish
end
return p
