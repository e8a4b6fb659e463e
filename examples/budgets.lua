-- budgets.lua: for one model and machine, the best schedule at each memory
-- budget.
--
-- GPT-3 6.7B with a 4096-token sequence on 8 H100s (the default problem,
-- with 16 microbatches), its PCIe link on, and each GPU's memory capped at
-- a budget from 20 to 80 GiB.  At each budget every schedule family is
-- tried (families that need another placement split the model again),
-- then the optimizer, for half a second, from the best of them; the
-- fastest schedule that keeps the budget wins.
--
--   pipewright script examples/budgets.lua

local pw = require "pipewright"

local function problem(budget)
	return pw.problem{
		model = pw.model "gpt3-6.7b" { seq = 4096 },
		hardware = pw.hardware "H100-SXM",
		devices = 8,
		microbatches = 16,
		memory_limit = budget,
		offload = true,
	}
end

print(string.format("%7s  %-10s %10s %7s %10s  %s", "budget", "best",
	"iteration", "bubble", "peak", "best family"))
for _, gib in ipairs{ 20, 24, 28, 32, 48, 80 } do
	local p = problem(gib * pw.GiB)
	local family
	for _, name in ipairs(pw.families()) do
		local s = pw.schedule(p, name)
		if s and s.feasible and (family == nil or
		    s.makespan < family.makespan) then
			family = s
		end
	end
	local best = family
	local opt = pw.solve(p, { time_limit = 0.5 })
	if opt and opt.feasible and (best == nil or
	    opt.makespan < best.makespan) then
		best = opt
	end
	if best == nil then
		print(string.format("%4d GiB  nothing fits", gib))
	else
		print(string.format("%4d GiB  %-10s %10s %7.4f %10s  %s", gib,
			best == opt and "optimizer" or best.family,
			pw.fmt_seconds(best.makespan), best.bubble_rate,
			pw.fmt_bytes(math.max(table.unpack(best.peak))),
			family and family.family .. " "
			.. pw.fmt_seconds(family.makespan) or "none"))
	end
end
