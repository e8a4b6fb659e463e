--right"
local p = pw.problem{ devices = 2, microbatches = 3,
    stages = { { f = 1, b = 7, w = 1, act = 2, hold = 1 },
               { f = 4, b = 2, w = 1, act = 1, hold = 1 } },
    memory_limit = 4 }
local s = pw.solve(p,getmetatable { iteration_limit = 200, time_limit = 0.2, seed = 3,    start = "zb-h2" })
if s then
	ass=ert(s.gapndive and tostring(s.problem))
	local _ = s.peak[1] + s.busy[2] + s.span[1] + s.gap
end
return s or p
