-- moe_cost.lua: a custom cost function for uneven stages.
--
-- A 56-layer transformer whose every second layer is a mixture of experts
-- (8 experts, each token routed to 2) with a 128256-token vocabulary (so
-- a large LM head), on 8 H100s.  The C cost model
-- knows dense layers only; the script adds what an MoE layer costs on top
-- through pw.problem's cost and static functions.  The embedding and the
-- LM head sit on the end stages (the cost model puts them there), so
-- stages are uneven twice over: by their MoE layers and by the head.
--
-- Seven layers per stage gives stages of three and four MoE layers in turn;
-- the script then splits the layers by its own costs (fewest seconds on
-- the slowest stage) and compares the schedules of both splits.
--
--   pipewright script examples/moe_cost.lua

local pw = require "pipewright"

local model = pw.model.gpt{
	name = "moe-56l",
	layers = 56, hidden = 2048, heads = 16, seq = 4096, vocab = 128256,
	flash_attention = true,
}
local hardware = pw.hardware "H100-SXM"
local devices, experts = 8, 8
local h, s, b = model.hidden, model.seq, model.micro_batch

local function is_moe(layer)
	return layer % 2 == 0
end

-- A dense layer's costs, from the cost model: stage 2 of a split with
-- one layer per stage holds exactly one layer, the last stage one layer
-- and the LM head.
local ref = pw.problem{
	model = model, hardware = hardware, devices = model.layers,
	microbatches = 1,
}
local layer, last = ref.stages[2], ref.stages[model.layers]

-- What an MoE layer adds to a dense one.  A token's second expert runs
-- the MLP again: its two h x 4h matrices are 16h of the 24h + 4s (F),
-- 24h + 8s (B) and 24h (W) FLOPs per token and unit of h.  It keeps a
-- second copy of the MLP input (2sbh) and of the GeLU input and output
-- (16sbh) until W.  The other 7 experts' MLP weights (8h^2 parameters
-- each) cost 16 bytes a parameter with Adam.
local moe = {
	f = layer.f * 16 * h / (24 * h + 4 * s),
	b = layer.b * 16 * h / (24 * h + 8 * s),
	w = layer.w * 16 / 24,
	act = 18 * s * b * h,
	hold = 18 * s * b * h,
	offload = 18 * s * b * h,
}
local expert_bytes = (experts - 1) * 8 * h * h * 16

-- The MoE layers of each stage of SPLIT (layers per stage).
local function moe_layers(split)
	local count, first = {}, 1
	for stage, n in ipairs(split) do
		count[stage] = 0
		for l = first, first + n - 1 do
			if is_moe(l) then count[stage] = count[stage] + 1 end
		end
		first = first + n
	end
	return count
end

local function problem(split)
	local count = moe_layers(split)
	return pw.problem{
		name = "moe-56l-8xh100",
		model = model, hardware = hardware,
		devices = devices, microbatches = 32,
		layers_per_stage = split,
		-- default is the stage's dense cost (seconds or bytes).
		cost = function(stage, kind, default)
			if moe[kind] then
				return default + count[stage] * moe[kind]
			end
		end,
		-- One stage per device: device d holds stage d.
		static = function(device, default)
			return default + count[device] * expert_bytes
		end,
	}
end

-- The layers per stage that make the slowest stage fastest (F + B + W of
-- each layer, the head on the last stage): a small dynamic program.
local function balanced_split()
	local L = model.layers
	local t = {}
	for l = 1, L do
		t[l] = layer.f + layer.b + layer.w
		if is_moe(l) then t[l] = t[l] + moe.f + moe.b + moe.w end
	end
	local head = (last.f + last.b + last.w) - (layer.f + layer.b + layer.w)
	local function span(i, j, final)	-- layers i..j
		local sum = final and head or 0
		for l = i, j do sum = sum + t[l] end
		return sum
	end
	-- best[k][j]: the slowest of k stages over layers 1..j, and its cut.
	local best, cut = {}, {}
	for k = 1, devices do
		best[k], cut[k] = {}, {}
		for j = k, L - (devices - k) do
			best[k][j] = math.huge
			for i = k, j do
				local prev = k == 1 and (i == 1 and 0 or math.huge)
					or (best[k - 1][i - 1] or math.huge)
				local worst = math.max(prev, span(i, j, k == devices))
				if worst < best[k][j] then
					best[k][j], cut[k][j] = worst, i
				end
			end
		end
	end
	local split, j = {}, L
	for k = devices, 1, -1 do
		split[k] = j - cut[k][j] + 1
		j = cut[k][j] - 1
	end
	return split
end

local function report(title, split)
	local p = problem(split)
	local count = moe_layers(split)
	print(title)
	print(string.format("  %5s %6s %4s %10s %10s %10s", "stage", "layers",
		"moe", "F+B+W", "act", "static"))
	for i, st in ipairs(p.stages) do
		print(string.format("  %5d %6d %4d %10s %10s %10s", i, split[i],
			count[i], pw.fmt_seconds(st.f + st.b + st.w),
			pw.fmt_bytes(st.act), pw.fmt_bytes(p.static[st.device])))
	end
	for _, f in ipairs{ "1f1b", "zb-h1", "zb-auto" } do
		local sched = assert(pw.schedule(p, f))
		print(string.format("  %-8s makespan %s, bubble rate %.3f, peak %s",
			f, pw.fmt_seconds(sched.makespan), sched.bubble_rate,
			pw.fmt_bytes(math.max(table.unpack(sched.peak)))))
	end
end

local even = {}
for i = 1, devices do even[i] = model.layers // devices end
report(model.layers // devices .. " layers per stage", even)
print()
report("split by the script's costs", balanced_split())
