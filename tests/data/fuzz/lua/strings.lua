-- Strings, patterns and tables: a seed for fuzz_lua.
local pw = require "pipewright"
local t = {}
for w in ("alpha beta gamma"):gmatch("%a+") do t[#t + 1] = w:upper() end
table.sort(t)
local s = table.concat(t, ","):gsub("(%w+)", "<%1>")
assert(s:find("<ALPHA>", 1, true) and s:match("^<(%u+)>") == "ALPHA")
assert(pw.fmt_bytes(3 * pw.GiB) and pw.fmt_seconds(pw.ms))
assert(#pw.families() > 10 and pw.offload_ratio(4096, 2048, 1e15, 5e10))
local ok, why = pcall(pw.problem, { devices = 2 })
assert(not ok and why)
return pw.problem{ name = s, devices = 1, microbatches = 1,
    stages = { { f = 1, b = 1, w = 1, act = 1 } } }
