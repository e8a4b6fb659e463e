#!/bin/sh
# test_torch.sh - PyTorch's schedule CSV end to end: export --to
# torch-csv and torch-csv-offload, a .csv read by show, eval, check,
# solve --from and launch --dry-run with --problem, the examples/torch
# CSVs timed as their families, the plain export's warning, the errors.
#
# make check sets PIPEWRIGHT and EXAMPLES.  Plain POSIX sh.

srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$srcdir/tests/tap.sh"
PW=${PIPEWRIGHT:-./pipewright}
# Absolute: one check runs in another directory.
case $PW in /*) ;; *) PW=$PWD/$PW ;; esac
EXAMPLES=${EXAMPLES:-$srcdir/examples}
UNIT=$EXAMPLES/unit4x8.json

makespan() { "$PW" eval "$@" | sed -n 's/^makespan *//p'; }

# Each example CSV times as the family it came from.
for x in "gpipe unit4x8.json gpipe" "1f1b unit4x8.json 1f1b" \
    "1f1b-interleaved torch/loop4x2.json interleaved1f1b" \
    "zb-v torch/v4x2.json zbv"; do
	set -- $x
	want=$(makespan "$EXAMPLES/$2" --family "$1")
	got=$(makespan "$EXAMPLES/torch/$3.csv" --problem "$EXAMPLES/$2")
	ok "examples/torch/$3.csv times as $1 ($want)" [ "$got" = "$want" ]
	run "$PW" export "$EXAMPLES/$2" --family "$1" --to torch-csv
	ok "examples/torch/$3.csv is $1's export" cmp -s "$tmp/out" \
	    "$EXAMPLES/torch/$3.csv"
done
ok "1f1b on unit4x8 takes 33 s" [ "$(makespan "$UNIT" --family 1f1b)" = "33 s" ]

# An offloading family (on the default problem): the plain form warns once and drops the
# transfers, the offload form keeps them (the same makespan back).
"$PW" schedule --family po-f -o "$tmp/pof.json" >/dev/null 2>&1
run "$PW" export "$tmp/pof.json" --to torch-csv -o "$tmp/pof.csv"
ok "torch-csv of po-f: exit 0" status_is 0
ok "torch-csv of po-f: one warning naming the transfers" \
    grep -q '^pipewright: warning: torch-csv has no offload or reload: [0-9]* transfers left out (--to torch-csv-offload keeps them)$' "$tmp/err"
ok "torch-csv of po-f: 8 rows, no transfer tokens" \
    sh -c "[ \$(wc -l <'$tmp/pof.csv') -eq 8 ] && ! grep -q '[OR]' '$tmp/pof.csv'"
run "$PW" export "$tmp/pof.json" --to torch-csv-offload -o "$tmp/pofo.csv"
ok "torch-csv-offload of po-f: silent" err_empty
ok "torch-csv-offload of po-f: reload tokens with anchors" \
    grep -q '[0-9]R[0-9]*@' "$tmp/pofo.csv"
ok "the offload CSV times as po-f" \
    [ "$(makespan "$tmp/pofo.csv" --problem "$tmp/pof.json")" = "$(makespan "$tmp/pof.json")" ]
run "$PW" check "$tmp/pofo.csv" --problem "$tmp/pof.json"
ok "check of the offload CSV: valid" out_has "pofo.csv: valid ("
run "$PW" show "$tmp/pofo.csv" --problem "$tmp/pof.json" --width 60
ok "show of the offload CSV draws the link" out_has "link"
# Without the last channel's row its offloads have no reloads; a reload
# anchored after an op that needs it deadlocks: each refusal names the
# file.
sed '$d' "$tmp/pofo.csv" >"$tmp/pofcut.csv"
run "$PW" eval "$tmp/pofcut.csv" --problem "$tmp/pof.json"
ok "an offload without its reload: exit 2" status_is 2
ok "an offload without its reload: names the file, the tokens and the row" \
    grep -q -E "^pipewright: $tmp/pofcut.csv: [0-9]+O[0-9]+ has no [0-9]+R[0-9]+ \(each offload needs its reload, and each reload its offload: channel 7's row, row 15\)\$" "$tmp/err"
first=$(grep -o -E '[0-9]+R[0-9]+@[^,]*' "$tmp/pofo.csv" | head -1)
# At the end of its stage's last W, which waits for its own B.
sed "s/$first/${first%%@*}@${first%%R*}W31+/" "$tmp/pofo.csv" >"$tmp/pofdead.csv"
run "$PW" eval "$tmp/pofdead.csv" --problem "$tmp/pof.json"
ok "a reload anchored too late: exit 2" status_is 2
ok "a reload anchored too late: a deadlock of the file's orders" \
    one_error "pipewright: $tmp/pofdead.csv: its orders on the problem: deadlock: "
# A problem script gives the costs as its problem file does (it reads
# below the current directory only).
cp "$UNIT" "$tmp/unit.json"
cp "$EXAMPLES/torch/1f1b.csv" "$tmp/1f1b.csv"
printf 'return pw.load("unit.json")\n' >"$tmp/unit.lua"
ok "a CSV costed by a problem script times as by its file" \
    [ "$(makespan "$tmp/1f1b.csv" --problem "$UNIT")" = \
    "$(cd "$tmp" && makespan 1f1b.csv --problem unit.lua)" ]

# What editors add, read as PyTorch's csv.reader reads it: quoted cells
# and CRLF line ends are the plain file; a byte-order mark and a blank
# line at the end, which PyTorch would refuse too, are named.
sed 's/\([^,]*\)/"\1"/g' "$tmp/1f1b.csv" >"$tmp/quoted.csv"
sed 's/$/\r/' "$tmp/1f1b.csv" >"$tmp/crlf.csv"
plain=$(makespan "$tmp/1f1b.csv" --problem "$UNIT")
ok "the plain CSV times ($plain)" [ -n "$plain" ]
for f in quoted crlf; do
	ok "a CSV with $f cells or lines reads as the plain one" \
	    [ "$(makespan "$tmp/$f.csv" --problem "$UNIT")" = "$plain" ]
done
printf '\357\273\277' | cat - "$tmp/1f1b.csv" >"$tmp/bom.csv"
run "$PW" eval "$tmp/bom.csv" --problem "$UNIT"
ok "a byte-order mark is named" grep -q 'bom.csv:1:1: a UTF-8 byte-order mark' \
    "$tmp/err"
{ cat "$tmp/1f1b.csv"; echo; } >"$tmp/blank.csv"
run "$PW" eval "$tmp/blank.csv" --problem "$UNIT"
ok "a blank line after the last row is named" \
    grep -q 'blank.csv:5: row 4 (a blank line: ' "$tmp/err"

# solve --from a CSV, launch --dry-run of one.
run "$PW" solve "$UNIT" --from "$EXAMPLES/torch/1f1b.csv" --iteration-limit 1 \
    --time-limit 1000 -o "$tmp/solved.json"
ok "solve --from a CSV: exit 0" status_is 0
run "$PW" launch "$EXAMPLES/torch/gpipe.csv" --problem "$UNIT" --dry-run
ok "launch --dry-run of a CSV: exit 0" status_is 0

# Errors: one line each, exit 2.
run "$PW" eval "$EXAMPLES/torch/gpipe.csv"
ok "a CSV without --problem: exit 2" status_is 2
ok "a CSV without --problem: says to add it" one_error "add --problem PROBLEM"
run "$PW" eval "$EXAMPLES/torch/gpipe.csv" --problem "$EXAMPLES/torch/1f1b.csv"
ok "a CSV as --problem: exit 2" status_is 2
ok "a CSV as --problem: says it is a schedule" \
    one_error "eval: --problem $EXAMPLES/torch/1f1b.csv is a schedule (a PyTorch CSV), not the problem or schedule file that gives its costs"
printf '0F0,0Z0\n' >"$tmp/bad.csv"
run "$PW" show "$tmp/bad.csv" --problem "$UNIT"
ok "a bad token: exit 2" status_is 2
ok "a bad token: FILE:LINE:COL" one_error "bad.csv:1:5: bad action \"0Z0\""
run "$PW" eval "$EXAMPLES/torch/zbv.csv" --problem "$EXAMPLES/torch/loop4x2.json"
ok "a V CSV on a loop problem: exit 2" status_is 2
ok "a V CSV on a loop problem: names the rank" \
    one_error "zbv.csv:1:29: 7F0 on rank 0, but stage 7 is on rank 3 (the problem's loop placement)"
run "$PW" eval "$UNIT" --problem "$UNIT"
ok "--problem with a JSON file: exit 2" status_is 2
ok "--problem with a JSON file: says what it is for" \
    one_error "eval: --problem gives the costs of a PyTorch schedule CSV (FILE.csv)"
# --family builds a schedule from a problem, and a CSV is a schedule.
for c in eval show schedule; do
	run "$PW" $c "$EXAMPLES/torch/gpipe.csv" --family 1f1b
	ok "$c of a CSV with --family: exit 2" status_is 2
	ok "$c of a CSV with --family: says it is a schedule" \
	    one_error "$c: $EXAMPLES/torch/gpipe.csv is a schedule (a PyTorch CSV), not a problem for --family to schedule"
done
run "$PW" compare "$EXAMPLES/torch/gpipe.csv"
ok "compare of a CSV: exit 2" status_is 2
ok "compare of a CSV: says it is a schedule" \
    one_error "compare: $EXAMPLES/torch/gpipe.csv is a schedule (a PyTorch CSV), not a problem"
run "$PW" export --help
ok "export --help lists torch-csv" out_has "^  torch-csv "

echo "1..$n"
[ "$failed" -eq 0 ]
