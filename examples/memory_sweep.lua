-- memory_sweep.lua: bubble rate against the memory limit, the curve of the
-- Zero Bubble paper's Figure 7, for several families and the optimizer.
--
-- GPT-3 1.3B on 4 H100s, 12 microbatches.  The limit is each GPU's
-- largest static memory plus k stage-activations (M_B, the activation of
-- one microbatch on the first stage), k = 2 ... 8 (p = 4: 1F1B needs p,
-- ZB-H2 2p - 1).  Every family's schedule is timed under each limit; the
-- optimizer minimizes the largest per-device span (the objective behind
-- the bubble rate) for half a second at each.  The rows go to a CSV file
-- for plotting elsewhere, a summary to stdout.
--
--   pipewright script examples/memory_sweep.lua [OUT.csv]
--
-- OUT.csv (default memory_sweep.csv) must lie below the current directory
-- or a --write-dir.  Columns: k, limit_gib, schedule, stages (4 for the
-- problem as given; the V families split the model into 8), makespan (s),
-- bubble_rate, peak_gib (the largest device's), fits (the schedule keeps
-- every limit).

local pw = require "pipewright"

local out = arg[1] or "memory_sweep.csv"
local families = { "1f1b", "zb-h1", "zb-h2", "zb-auto", "zb-v", "v-half",
	"v-min" }

local spec = {
	model = pw.model "gpt3-1.3b",
	hardware = pw.hardware "H100-SXM",
	devices = 4,
	microbatches = 12,
}
local base = pw.problem(spec)
local mb = base.stages[1].act
local static = math.max(table.unpack(base.static))

local rows = {}
local function row(k, s, name)
	rows[#rows + 1] = {
		k = k,
		limit_gib = spec.memory_limit / pw.GiB,
		schedule = name,
		stages = s.problem.nstages,
		makespan = s.makespan,
		bubble_rate = s.bubble_rate,
		peak_gib = math.max(table.unpack(s.peak)) / pw.GiB,
		fits = s.feasible,
	}
end

print(string.format("GPT-3 1.3B on 4 H100: M_B = %s, static up to %s",
	pw.fmt_bytes(mb), pw.fmt_bytes(static)))
print(string.format("%2s %9s  %-22s %s", "k", "limit", "best family (fits)",
	"optimizer"))
for k = 2, 8 do
	spec.memory_limit = static + k * mb
	local p = pw.problem(spec)
	local best
	for _, name in ipairs(families) do
		local s = pw.schedule(p, name)
		if s then
			row(k, s, name)
			if s.feasible and (best == nil or
			    s.bubble_rate < best.bubble_rate) then
				best = s
			end
		end
	end
	local opt, why = pw.solve(p, { objective = "span", time_limit = 0.5 })
	if opt then
		row(k, opt, "optimizer")
	end
	print(string.format("%2d %9s  %-22s %s", k,
		pw.fmt_bytes(spec.memory_limit),
		best and string.format("%-8s %.4f", best.family,
			best.bubble_rate) or "none",
		opt and string.format("%.4f (from %s)", opt.bubble_rate,
			opt.start) or "none: " .. why))
end

pw.write_csv(out, rows, { "k", "limit_gib", "schedule", "stages",
	"makespan", "bubble_rate", "peak_gib", "fits" })
print("wrote " .. out)
