#!/bin/sh
# test_examples.sh - every examples/*.lua run by 'pipewright script', its
# output checked, and the script command end to end, as TAP.
#
# make check sets PIPEWRIGHT and EXAMPLES; run by hand from a build
# directory (sh /path/to/tests/test_examples.sh) it finds them itself.
# Scripts run in a temporary directory, where they may write.

srcdir=$(cd "$(dirname "$0")/.." && pwd)
PIPEWRIGHT=${PIPEWRIGHT:-./pipewright}
EXAMPLES=${EXAMPLES:-$srcdir/examples}
case $PIPEWRIGHT in /*) ;; *) PIPEWRIGHT=$(pwd)/$PIPEWRIGHT ;; esac
case $EXAMPLES in /*) ;; *) EXAMPLES=$(pwd)/$EXAMPLES ;; esac
PW=$PIPEWRIGHT

. "$srcdir/tests/tap.sh"
mkdir "$tmp/work" "$tmp/other" || exit 99
cd "$tmp/work" || exit 99

out_has() { grep -q -F -x -e "$1" "$tmp/out"; }
out_lines() { [ "$(grep -c -e "$1" "$tmp/out")" -eq "$2" ]; }
# Nothing but the expected files in the working directory.
only_files() { [ "$(ls -A | tr '\n' ' ')" = "$1" ]; }

echo "# pipewright: $PW"

# ------------------------------------------------------------ every example
for f in "$EXAMPLES"/*.lua; do
	name=${f##*/}
	run "$PW" script "$f"
	ok "$name runs (exit 0)" status_is 0
	ok "$name says nothing on stderr" err_empty
	cp "$tmp/out" "$tmp/${name%.lua}.out"
done

# ------------------------------------------------------------ default.lua
run "$PW" script "$EXAMPLES/default.lua"
ok "default.lua as a script prints nothing" out_empty
"$PW" problem >"$tmp/default.json"
run "$PW" problem "$EXAMPLES/default.lua"
ok "problem default.lua exits 0" status_is 0
ok "default.lua is the built-in default problem, byte for byte" \
    cmp -s "$tmp/out" "$tmp/default.json"
# The same table; no warning: no split of the default's layers has a
# lighter bottleneck.
"$PW" compare >"$tmp/compare"
run "$PW" compare "$EXAMPLES/default.lua"
ok "compare takes a .lua problem as it takes a .json one" \
    cmp -s "$tmp/out" "$tmp/compare"
ok "the default's split cannot be rebalanced: no warning" \
    sh -c '! grep -q "^warning:" "$1"' sh "$tmp/out"
# A split that can: the warning names plan on the script.
cat >"$tmp/uneven.lua" <<'EOF'
local pw = require "pipewright"
return pw.problem{ model = pw.model "gpt3-1.3b", hardware =
    pw.hardware "H100-SXM", devices = 2, microbatches = 4,
    layers_per_stage = { 20, 4 } }
EOF
run "$PW" compare "$tmp/uneven.lua"
ok "compare's warning names plan on the script" \
    grep -qx "    pipewright plan $tmp/uneven.lua" "$tmp/out"
run "$PW" schedule "$EXAMPLES/default.lua" --family zb-h1 -o "$tmp/zb.json"
ok "schedule takes a .lua problem" status_is 0
run "$PW" check "$tmp/zb.json"
ok "its schedule checks" status_is 0

# ------------------------------------------------------------ pipeoffload.lua
cp "$tmp/pipeoffload.out" "$tmp/out"
# The cost model's numbers: exact.
ok "pipeoffload: 5.8B on 8 GPUs" out_has \
    "pipeoffload-5.8b      8   4096      4   93.71 ms 1.062 GiB 12.45 GiB  1.71"
ok "pipeoffload: 10.5B on 8 GPUs" out_has \
    "pipeoffload-10.5b     8   4096    4-5   175.7 ms 1.641 GiB 20.31 GiB  1.40"
ok "pipeoffload: 18.1B on 16 GPUs" out_has \
    "pipeoffload-18.1b    16   4096    2-3   147.6 ms 1.172 GiB 17.44 GiB  1.19"
ok "pipeoffload: 42.9B on 32 GPUs" out_has \
    "pipeoffload-42.9b    32   4096    1-2   168.7 ms 1.031 GiB  20.5 GiB  0.92"
ok "pipeoffload: 66.6B on 32 GPUs" out_has \
    "pipeoffload-66.6b    32   4096    1-2   257.7 ms 1.281 GiB 31.88 GiB  0.75"
ok "pipeoffload: 42.9B at s = 16384" out_has \
    "pipeoffload-42.9b    32  16384    1-2   854.6 ms 4.125 GiB  20.5 GiB  0.75"
ok "pipeoffload: 66.6B at s = 16384" out_has \
    "pipeoffload-66.6b    32  16384    1-2    1.256 s 5.125 GiB 31.88 GiB  0.63"
# The schedules: one row per case, a cell per family.
ok "pipeoffload: a schedule row per case" \
    out_lines '^pipeoffload-[0-9.]*b  *[0-9]*  *[0-9]' 14
ok "pipeoffload: 1F1B keeps 32 activations of 1 GiB on 42.9B" \
    grep -q '^pipeoffload-42.9b    4096   32.0 /  48.34 ' "$tmp/out"
ok "pipeoffload: at s = 16384, 1F1B needs more than the GPU" \
    grep -q '^pipeoffload-42.9b   16384  127.9 / 244.75\*' "$tmp/out"
ok "pipeoffload: offloading (po-f) lowers 66.6B's activation memory" awk '
    /^pipeoffload-66.6b    4096/ {
	s = $0; k = 0
	while (match(s, /[0-9.]+ \//)) {
		v[++k] = substr(s, RSTART, RLENGTH - 2) + 0
		s = substr(s, RSTART + RLENGTH)
	}
	found = 1
    }
    END { exit !(found && k >= 2 && v[k] < v[1]) }' "$tmp/out"

# ------------------------------------------------------------ moe_cost.lua
cp "$tmp/moe_cost.out" "$tmp/out"
ok "moe_cost: 7 layers per stage, 3 and 4 MoE layers in turn" out_has \
    "      2      7    4   30.02 ms  2.422 GiB  19.25 GiB"
ok "moe_cost: the last stage carries the LM head" out_has \
    "      8      7    4   43.07 ms  4.395 GiB  23.16 GiB"
ok "moe_cost: the first stage carries the embedding" out_has \
    "      1      7    3   28.35 ms  2.281 GiB  19.66 GiB"
ok "moe_cost: the script's split shortens the last stage" out_has \
    "      8      4    2   29.73 ms  3.316 GiB  13.91 GiB"
ok "moe_cost: both splits have 56 layers on 8 stages" awk '
    /^  stage/ { b++ } /^ +[0-9]+ +[0-9]+ +[0-9]+ / { s[b] += $2; c[b]++ }
    END { exit !(b == 2 && s[1] == 56 && s[2] == 56 && c[1] == 8 && c[2] == 8) }' "$tmp/out"
ok "moe_cost: balancing shortens every schedule" awk '
    /makespan/ { t[$1, ++k[$1]] = $3 }
    END { exit !(t["1f1b", 2] < t["1f1b", 1] && t["zb-h1", 2] < t["zb-h1", 1] &&
	t["zb-auto", 2] < t["zb-auto", 1]) }' "$tmp/out"

# ------------------------------------------------------------ memory_sweep.lua
rm -f memory_sweep.csv
run "$PW" script "$EXAMPLES/memory_sweep.lua"
ok "memory_sweep: writes memory_sweep.csv here, nothing else" \
    only_files "memory_sweep.csv "
ok "memory_sweep: says so" out_has "wrote memory_sweep.csv"
ok "memory_sweep: a summary line for each k = 2 ... 8" \
    out_lines '^ [2-8] ' 7
csv=memory_sweep.csv
ok "memory_sweep: the CSV header" \
    [ "$(head -1 $csv)" = "k,limit_gib,schedule,stages,makespan,bubble_rate,peak_gib,fits" ]
ok "memory_sweep: the optimizer at every k" \
    [ "$(grep -c ',optimizer,' $csv)" -eq 7 ]
ok "memory_sweep: ZB-H2 fits from 2p = 8 activations on" awk -F, '
    $3 == "zb-h2" { fit[$1] = $8 }
    END { exit !(fit[7] == "false" && fit[8] == "true") }' $csv
ok "memory_sweep: 1F1B fits from p = 4 activations on" awk -F, '
    $3 == "1f1b" { fit[$1] = $8 }
    END { exit !(fit[3] == "false" && fit[4] == "true") }' $csv
ok "memory_sweep: the optimizer fits and is no worse than any family that fits" awk -F, '
    NR > 1 && $3 != "optimizer" && $4 == 4 && $8 == "true" &&
	(!($1 in best) || $6 < best[$1]) { best[$1] = $6 }
    NR > 1 && $3 == "optimizer" { opt[$1] = $6; fit[$1] = $8 }
    END { for (k in opt) if (fit[k] != "true" || (k in best && opt[k] > best[k] + 1e-9)) exit 1 }' $csv
run "$PW" script "$EXAMPLES/memory_sweep.lua" ../other/sweep.csv
ok "memory_sweep: refuses to write outside the current directory" status_is 2
line=$(grep -n '^pw.write_csv(out' "$EXAMPLES/memory_sweep.lua" | cut -d: -f1)
ok "memory_sweep: ...naming the script's line" \
    one_error "memory_sweep.lua:$line: pw.write_csv: ../other/sweep.csv: scripts may write only below"
run "$PW" script --write-dir ../other "$EXAMPLES/memory_sweep.lua" ../other/sweep.csv
ok "memory_sweep: writes below --write-dir" \
    cmp -s ../other/sweep.csv "$tmp/work/memory_sweep.csv"
rm -f memory_sweep.csv

# ------------------------------------------------------------ budgets.lua
cp "$tmp/budgets.out" "$tmp/out"
ok "budgets: a line for each budget" out_lines '^ *[0-9]* GiB  ' 6
ok "budgets: each names the best schedule and the best family" awk '
    / GiB  / && !/nothing fits/ { if (NF < 9) exit 1; n++ }
    END { exit !(n == 6) }' "$tmp/out"
ok "budgets: offloading (po-auto, 1.031 s; po-h 1.092 s) is the best family at 24 GiB" \
    grep -q '^  24 GiB  .*  po-auto [0-9.]* s$' "$tmp/out"
ok "budgets: ZB-V (split again into a V) is the best family at 80 GiB" \
    grep -q '^  80 GiB  .*  zb-v [0-9.]* ms$' "$tmp/out"
ok "budgets: the best is no slower than the best family" awk '
    function secs(v, u) { return u == "ms" ? v / 1000 : u == "us" ? v / 1e6 : v }
    / GiB  / && !/nothing fits/ { if (secs($4, $5) > secs($(NF - 1), $NF) * (1 + 1e-9)) exit 1 }' "$tmp/out"

# ------------------------------------------------------------ the script command
cat >args.lua <<'EOF'
print(arg[0], #arg, ...)
EOF
run "$PW" script args.lua one -x --two
ok "script: arguments after FILE are the script's, options too" \
    out_has "args.lua	3	one	-x	--two"
cat >bad.lua <<'EOF'
local t = {}
t.x.y = 1
EOF
run "$PW" script bad.lua
ok "script: a runtime error exits 2" status_is 2
ok "script: one line naming file:line, with the traceback" \
    one_error "bad.lua:2: attempt to index a nil value (field 'x'); stack traceback: bad.lua:2: in main chunk"
run "$PW" script missing.lua
ok "script: a missing file exits 2" status_is 2
ok "script: ...saying so" one_error "missing.lua: cannot open: No such file or directory"
run "$PW" script
ok "script: no FILE is a usage error" one_error "script: missing an argument"
run "$PW" script --write-dir nowhere args.lua
ok "script: a missing --write-dir is refused" \
    one_error "script: nowhere: cannot write below it"
cat >half.lua <<'EOF'
local rows = {}
for i = 1, 10000 do rows[i] = { i, i / 3 } end
rows[9999][2] = print
pw.write_csv("half.csv", rows)
EOF
run "$PW" script half.lua
ok "script: a bad row fails the write" \
    one_error "half.lua:4: pw.write_csv: rows[9999][2]: must be a number, a string or a boolean (got function)"
ok "script: ...leaving no file, whole or half" only_files "args.lua bad.lua half.lua "
rm -f args.lua bad.lua half.lua

cat >prob.lua <<'EOF'
return pw.problem{ devices = 2, microbatches = 2,
	stages = { { f = 1, b = 1, w = 1, act = 1 }, { f = 1, b = 1, w = 1, act = -1 } } }
EOF
run "$PW" problem prob.lua
ok "problem: a bad .lua problem exits 2" status_is 2
ok "problem: ...naming the script's line" \
    one_error "prob.lua:1: pw.problem: stages[1].act: must be a non-negative number (got -1) [devices and stages numbered from 0]"
cat >prob.lua <<'EOF'
pw.write_json("p.json", pw.problem{ devices = 1, microbatches = 1,
	stages = { { f = 1, b = 1, w = 1, act = 1 } } })
EOF
run "$PW" compare prob.lua
ok "problem scripts write no files" \
    one_error "prob.lua:1: pw.write_json: p.json: this script may not write files"

echo "1..$n"
