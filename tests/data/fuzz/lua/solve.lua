-- The optimizer from Lua, within a small iteration limit: a seed for fuzz_lua.
local pw = require "pipewright"
local p = pw.problem{ devices = 2, microbatches = 3,
    stages = { { f = 1, b = 1, w = 1, act = 1, hold = 1 },
               { f = 1, b = 2, w = 1, act = 1, hold = 1 } },
    memory_limit = 3 }
local s = pw.solve(p, { iteration_limit = 200, time_limit = 0.2, seed = 3,
    start = "zb-h1" })
if s then
	assert(s.bound <= s.objective and tostring(s.problem))
	local _ = s.peak[1] + s.busy[2] + s.span[1] + s.gap
end
return s or p
