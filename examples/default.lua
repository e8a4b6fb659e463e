-- default.lua: the built-in default problem as a script to copy and edit.
--
-- GPT-3 6.7B (the cost model's preset) with a sequence of 4096 instead of
-- GPT-3's 2048, on 8 H100-SXM GPUs at half their peak, one stage of 4
-- layers per GPU (stage s on GPU s), 32 microbatches, each GPU's whole
-- memory as its limit, and a PCIe link with two GPUs behind each switch.
--
--   pipewright problem examples/default.lua    is    pipewright problem
--   pipewright compare examples/default.lua    compares every family on it

local pw = require "pipewright"

return pw.problem{
	name = "gpt3-6.7b-8xh100",
	model = pw.model "gpt3-6.7b" { seq = 4096 },
	hardware = pw.hardware "H100-SXM",
	devices = 8,
	microbatches = 32,
	offload = true,
}
