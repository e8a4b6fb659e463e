-- pipeoffload.lua: the PipeOffload paper's models (Wan et al., ICML 2025,
-- table 2) at its GPU counts and sequence lengths, on A100 80GB GPUs with
-- the paper's own constants: 220 TFLOP/s achieved and 15 GB/s of PCIe.
--
-- For each model: the cost model's numbers for one pipeline stage, the
-- offload ratio k of the paper's Eq. 1, and what the schedules it compares
-- need: the largest activation memory on any GPU (peak less the weights
-- and optimizer state) and the iteration time, with m = 8 x GPUs.
--
--   pipewright script examples/pipeoffload.lua

local pw = require "pipewright"

-- The A100 preset (efficiency 0.5, PCIe Gen4 at 25 GB/s) with the paper's
-- measured rate and its assumed PCIe bandwidth instead.
local a100 = pw.hardware "A100-80GB" {
	efficiency = 220e12 / 312e12,
	pcie_d2h = 15 * pw.GB,
	pcie_h2d = 15 * pw.GB,
}

-- Model preset, GPUs, sequence length.  5.8B ran on 2 to 32 GPUs; the
-- long sequences are those of the paper's comparison with tensor
-- parallelism.
local cases = {
	{ "pipeoffload-5.8b", 8, 4096 },
	{ "pipeoffload-10.5b", 8, 4096 },
	{ "pipeoffload-18.1b", 16, 4096 },
	{ "pipeoffload-42.9b", 32, 4096 },
	{ "pipeoffload-66.6b", 32, 4096 },
	{ "pipeoffload-42.9b", 32, 16384 },
	{ "pipeoffload-66.6b", 32, 16384 },
}

-- The schedules the paper compares that apply to one chunk per GPU or to
-- the interleaved split pipewright makes for them.
local families = { "1f1b", "1f1b-interleaved", "gis", "gis-h", "po-h",
	"po-f" }

local function problem(case)
	local model = pw.model(case[1]) { seq = case[3] }
	return pw.problem{
		model = model,
		hardware = a100,
		devices = case[2],
		microbatches = 8 * case[2],
		offload = true,
	}
end

-- The largest activation memory of any device (bytes).
local function activation(s)
	local most = 0
	for d = 1, s.problem.devices do
		most = math.max(most, s.peak[d] - s.problem.static[d])
	end
	return most
end

print("PipeOffload's models on A100 80GB (220 TFLOP/s, PCIe 15 GB/s), "
	.. "m = 8 x GPUs")
print()
print(string.format("%-18s %4s %6s %6s %10s %9s %9s %5s", "model", "GPUs",
	"seq", "layers", "F+B+W", "act", "static", "k"))
for _, case in ipairs(cases) do
	local p = problem(case)
	local st = p.stages[2]	-- a middle stage: layers only
	local static = 0
	for d = 1, p.devices do
		static = math.max(static, p.static[d])
	end
	local k = pw.offload_ratio(p.model.hidden, p.model.seq,
		a100.peak_flops * a100.efficiency, a100.pcie_d2h)
	local few, many = p.model.layers // p.devices,
		-(-p.model.layers // p.devices)
	print(string.format("%-18s %4d %6d %6s %10s %9s %9s %5.2f", case[1],
		case[2], case[3], few == many and few or few .. "-" .. many,
		pw.fmt_seconds(st.f + st.b + st.w), pw.fmt_bytes(st.act),
		pw.fmt_bytes(static), k))
end

print()
print("largest activation memory (GiB) / iteration (s); * over the GPU's memory")
local head = string.format("%-18s %6s", "model", "seq")
for _, f in ipairs(families) do
	head = head .. string.format(" %16s", f)
end
print(head)
for _, case in ipairs(cases) do
	local p = problem(case)
	local line = string.format("%-18s %6d", case[1], case[3])
	for _, f in ipairs(families) do
		local s = pw.schedule(p, f)
		if s then
			line = line .. string.format(" %6.1f / %6.2f%s",
				activation(s) / pw.GiB, s.makespan,
				s.feasible and " " or "*")
		else
			line = line .. string.format(" %16s", "n/a")
		end
	end
	print((line:gsub(" +$", "")))
end
