-- A problem from the cost model, with overrides: a seed for fuzz_lua.
local pw = require "pipewright"
return pw.problem{
	model = pw.model "gpt3-1.3b" { seq = 1024, layers = 8 },
	hardware = pw.hardware "A100-80GB",
	devices = 4,
	chunks = 2,
	placement = "v",
	microbatches = 8,
	offload = { 1, 2 },
	memory_limit = 60 * pw.GiB,
	cost = function(stage, kind, default)
		if kind == "f" then return default * 1.5 end
	end,
}
