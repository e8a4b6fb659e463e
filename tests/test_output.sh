#!/bin/sh
# test_output.sh - what pipewright prints for people and other tools, as
# TAP: the Megatron-LM flags of schedule and plan, schedule and solve on a
# terminal, compare's forms and order, and the man page.
#
# make check sets PIPEWRIGHT and EXAMPLES; run by hand from a build
# directory (sh /path/to/tests/test_output.sh) it finds them itself.

srcdir=$(cd "$(dirname "$0")/.." && pwd)
PW=${PIPEWRIGHT:-./pipewright}
EXAMPLES=${EXAMPLES:-$srcdir/examples}
UNIT=$EXAMPLES/unit4x8.json

. "$srcdir/tests/tap.sh"

lacks() { ! grep -q -e "$1" "$2"; }

M="--model llama3-8b --hardware H100-SXM --devices 4 --microbatches 8
--memory-limit none"

# megatron WANT ARGS...: schedule's megatron line is exactly WANT.
megatron() {
	want=$1
	shift
	run $PW schedule $M "$@" -o "$tmp/s.json"
	[ "$status" -eq 0 ] && [ "$(grep '^megatron: ' "$tmp/out")" = \
	    "megatron: $want" ]
}

ok "megatron: an even split is the pipeline size alone" megatron \
    "--pipeline-model-parallel-size 4 --num-layers 32 --micro-batch-size 1 --global-batch-size 8" \
    --family 1f1b
ok "megatron: uneven first and last stages" megatron \
    "--pipeline-model-parallel-size 4 --num-layers 32 --decoder-first-pipeline-num-layers 7 --decoder-last-pipeline-num-layers 9 --micro-batch-size 1 --global-batch-size 8" \
    --layers-per-stage 7,8,8,9 --family 1f1b
ok "megatron: an arbitrary uneven split is a layout string" megatron \
    "--pipeline-model-parallel-size 4 --num-layers 32 --pipeline-model-parallel-layout \"Et*6|t*9|t*8|t*9,L\" --micro-batch-size 1 --global-batch-size 8" \
    --layers-per-stage 6,9,8,9 --family 1f1b
ok "megatron: interleaved 1F1B is virtual stages" megatron \
    "--pipeline-model-parallel-size 4 --num-layers 32 --num-virtual-stages-per-pipeline-rank 2 --micro-batch-size 1 --global-batch-size 8" \
    --chunks 2 --family 1f1b-interleaved
ok "megatron: uneven virtual stages are a layout, in Megatron's order" \
    megatron \
    "--pipeline-model-parallel-size 4 --num-layers 32 --pipeline-model-parallel-layout \"Et*3|t*4|t*4|t*4|t*4|t*4|t*4|t*5,L\" --micro-batch-size 1 --global-batch-size 8" \
    --chunks 2 --layers-per-stage 3,4,4,4,4,4,4,5 --family 1f1b-interleaved
ok "megatron: tensor and data parallelism (ZeRO-1: the distributed optimizer)" \
    megatron \
    "--pipeline-model-parallel-size 4 --tensor-model-parallel-size 2 --use-distributed-optimizer --num-layers 32 --micro-batch-size 1 --global-batch-size 16" \
    --tp 2 --dp 2 --family 1f1b
ok "megatron: a global batch beyond 32 bits (M b D = 2^32) is whole" \
    megatron \
    "--pipeline-model-parallel-size 4 --use-distributed-optimizer --num-layers 32 --micro-batch-size 65536 --global-batch-size 4294967296" \
    --micro-batch 65536 --dp 8192 --family 1f1b
ok "megatron: full recomputation, every layer" megatron \
    "--pipeline-model-parallel-size 4 --num-layers 32 --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --micro-batch-size 1 --global-batch-size 8" \
    --recompute full --family 1f1b
ok "megatron: PipeOffload's selective recomputation has no equivalent" \
    megatron \
    "Megatron has no equivalent: the selective recomputation (PipeOffload's: LayerNorm, GeLU and dropout run again) is none of Megatron-LM's recompute modules, which recompute a whole attention core or MLP" \
    --recompute selective --family 1f1b
ok "megatron: zero bubble has no equivalent" megatron \
    "Megatron has no equivalent: Zero Bubble splits the backward into B and W; Megatron-LM's schedules run each backward whole" \
    --family zb-h1
ok "megatron: an offloading schedule has no equivalent" megatron \
    "Megatron has no equivalent: the schedule offloads activations to host memory and reloads them; Megatron-LM's pipeline schedules have no such ops" \
    --chunks 2 --offload --family po-f
ok "megatron: the V has no equivalent" megatron \
    "Megatron has no equivalent: the V placement (stages d and 2p-1-d on device d); Megatron-LM places virtual stages in a loop" \
    --family zb-v
run $PW schedule "$UNIT" --family 1f1b -o "$tmp/s.json"
ok "megatron: given stages give the pipeline size alone" \
    grep -qx 'megatron: --pipeline-model-parallel-size 4' "$tmp/out"
run $PW plan $M --iteration-limit 200 --top 1
ok "plan: the best candidate's megatron line" grep -q '^megatron: ' \
    "$tmp/out"
run $PW plan "$UNIT" --iteration-limit 200 --top 1 --json
ok "plan --json: each candidate's megatron" grep -q \
    "\"megatron\": \"Zero Bubble splits the backward into B and W; Megatron-LM's schedules run each backward whole\"," \
    "$tmp/out"
ok "plan --json: whether Megatron has it" grep -q \
    '"megatron_equivalent": false$' "$tmp/out"

# compare: the best line, the columns, the orders and the machine forms.
run $PW compare "$UNIT"
ok "compare: the first line names the best within every limit" \
    [ "$(sed -n 1p "$tmp/out")" = "best within every limit: zb-h1 (makespan 27 s)" ]
ok "compare: the header, each column as wide as its widest cell" \
    [ "$(sed -n 4p "$tmp/out")" = "family            makespan  bubble  idle share  total idle  max peak  peak/limit  status" ]
ok "compare: 1f1b's row with its idle share" grep -qx \
    '1f1b              33 s      0\.2727  27\.3%       36 s        4 B       no limit    ok' \
    "$tmp/out"
# first_row KEY FAMILY: compare --sort KEY lists FAMILY first.
first_row() {
	run $PW compare "$UNIT" --sort "$1"
	[ "$status" -eq 0 ] && [ "$(sed -n 5p "$tmp/out" | cut -d' ' -f1)" = "$2" ]
}
ok "compare: sorted by makespan by default" first_row makespan zb-h1
ok "compare --sort name" first_row name 1f1b
ok "compare --sort bubble: the lowest, ties in the registry's order" \
    first_row bubble zb-h2
ok "compare --sort memory: the smallest largest peak" first_row memory 1f1b
run $PW compare "$UNIT" --sort name
ok "compare --sort name: the last with a schedule, by name" \
    [ "$(sed -n 15p "$tmp/out" | cut -d' ' -f1)" = "zb-h2" ]
ok "compare --sort name: families without a schedule last, by name" \
    [ "$(sed -n 16p "$tmp/out" | cut -d' ' -f1)" = "1f1b-interleaved" ]
# A limit of 0 that a peak of 0 meets is a limit, full (it read "no
# limits" and -nan%).
cat >"$tmp/limit0.json" <<'EOF'
{"format": "pipewright.problem.v1", "name": "limit0", "devices": 2,
 "microbatches": 2, "comm": 0,
 "stages": [{"device": 0, "f": 1, "b": 1, "w": 1, "act": 0},
  {"device": 1, "f": 1, "b": 1, "w": 1, "act": 1}],
 "memory": [{"static": 0, "limit": 0}, {"static": 0, "limit": null}]}
EOF
run $PW schedule "$tmp/limit0.json" --family 1f1b -o "$tmp/limit0-1f1b.json"
ok "a limit of 0: the tightest device, full" \
    out_has '^memory  *within every limit; tightest device 0 at 100\.0%$'
ok "a limit of 0: its row's use" out_has '^0  .* 0 B  *0 B  *100\.0%$'
run $PW compare "$tmp/limit0.json" --json
ok "a limit of 0: compare's share is 1" grep -q '"peak_share": 1\.0,' "$tmp/out"
run $PW compare "$UNIT" --sort fastest
ok "compare --sort: a bad key is one error line" one_error \
    "--sort 'fastest' is not makespan, memory, bubble or name"
ok "compare --sort: exit 2" status_is 2
run $PW compare "$UNIT" --json --csv
ok "compare: --json with --csv is one error line" one_error "give one"

run $PW compare "$UNIT" --csv
tr -d '\r' <"$tmp/out" >"$tmp/csv"
ok "compare --csv: every line ends in CRLF" \
    [ "$(grep -c "$(printf '\r')\$" "$tmp/out")" -eq 19 ]
ok "compare --csv: the header" [ "$(sed -n 1p "$tmp/csv")" = \
    "family,status,makespan_s,bubble_rate,idle_share,total_idle_s,max_peak_bytes,tightest_device,peak_share,over_devices,reason" ]
ok "compare --csv: numbers in full" grep -qx \
    '1f1b,ok,33,0\.27272727272727271,0\.27272727272727271,36,4,,,0,' \
    "$tmp/csv"
ok "compare --csv: a reason with commas is quoted" grep -q \
    '^zb-v,not-applicable,,,,,,,,,"zb-v needs V placement (device d holds stages d and 2p-1-d); this problem has 4 stages on 4 devices; splitting again: its stages were given directly, so there is no model to split again"$' \
    "$tmp/csv"
run $PW compare "$UNIT" --json
ok "compare --json: the best" grep -q '^  "best": "zb-h1",$' "$tmp/out"
ok "compare --json: the idle share" grep -q \
    '"idle_share": 0\.27272727272727271,' "$tmp/out"
sed 's/"limit": null/"limit": 1.0/' "$UNIT" >"$tmp/tight.json"
run $PW compare "$tmp/tight.json"
ok "compare: the best within the limits, not the fastest row" \
    [ "$(sed -n 1p "$tmp/out")" = "best within every limit: zb-auto (makespan 72 s)" ]
ok "compare: the fastest row is over its limits" grep -q \
    '^zb-h1  .*  over: 4 devices, d0 by 3 B$' "$tmp/out"
run $PW compare "$tmp/tight.json" --json
ok "compare --json: the best within the limits" grep -q \
    '^  "best": "zb-auto",$' "$tmp/out"

# On a terminal (script(1) gives the command a pty), schedule and solve
# without -o print the metrics and a hint, not the JSON.
if command -v script >/dev/null 2>&1 &&
    script -qc true /dev/null >/dev/null 2>&1; then
	for cmd in "schedule --family 1f1b" "solve --iteration-limit 50"; do
		run script -qc "$PW $cmd $UNIT" /dev/null
		ok "$cmd on a terminal: the metrics and the hint" grep -q \
		    '^hint: stdout is a terminal, so the schedule.s JSON was not printed: write the schedule with -o FILE' \
		    "$tmp/out"
		ok "$cmd on a terminal: no JSON" lacks '"format"' "$tmp/out"
		run script -qc "$PW $cmd $UNIT -o -" /dev/null
		ok "$cmd -o - on a terminal: the JSON" grep -q \
		    '"format": "pipewright.schedule.v1"' "$tmp/out"
		run sh -c "$PW $cmd $UNIT | cat"
		ok "$cmd to a pipe: the JSON, no hint" grep -q \
		    '"format": "pipewright.schedule.v1"' "$tmp/out"
		ok "$cmd to a pipe: no hint" lacks '^hint:' "$tmp/out"
	done
else
	skip "schedule and solve on a terminal" "script(1) is missing"
fi

# The man page: written from the command table, rendered without a
# warning, every command a section, the exit statuses listed.
run $PW help --man
cp "$tmp/out" "$tmp/pipewright.1"
ok "help --man exits 0" status_is 0
if command -v groff >/dev/null 2>&1; then
	run groff -man -Tutf8 -ww "$tmp/pipewright.1"
	ok "the man page renders" status_is 0
	ok "the man page renders without a warning" err_empty
	cp "$tmp/out" "$tmp/man.txt"
	$PW help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' \
	    >"$tmp/commands"
	ok "help lists the commands" [ "$(wc -l <"$tmp/commands")" -ge 14 ]
	while read -r cmd; do
		ok "the man page has a section for $cmd" grep -qx \
		    ".SS $cmd" "$tmp/pipewright.1"
		ok "the man page renders $cmd's usage" grep -q \
		    "usage: pipewright $cmd" "$tmp/man.txt"
	done <"$tmp/commands"
	ok "the man page lists the exit statuses" grep -q \
	    'a launch that failed or was stopped' "$tmp/man.txt"
	ok "the man page: exit status 4" grep -A1 -qx '.B 4' \
	    "$tmp/pipewright.1"
	ok "the man page lists the families" grep -q \
	    '^ *zb-v  *Zero Bubble V: ' "$tmp/man.txt"
else
	skip "the man page renders" "groff is not installed"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
