#!/bin/sh
# test_cli.sh - the pipewright program end to end, as TAP.
#
# make check sets PIPEWRIGHT, TESTDATA and EXAMPLES; run by hand from a
# build directory (sh /path/to/tests/test_cli.sh) it finds them itself.
# Plain POSIX sh, grep, sed and awk: no python or jq needed.

srcdir=$(cd "$(dirname "$0")/.." && pwd)
PIPEWRIGHT=${PIPEWRIGHT:-./pipewright}
TESTDATA=${TESTDATA:-$srcdir/tests/data}
EXAMPLES=${EXAMPLES:-$srcdir/examples}
PW=$PIPEWRIGHT
UNIT=$EXAMPLES/unit4x8.json

. "$srcdir/tests/tap.sh"

err_has() { grep -q -e "$1" "$tmp/err"; }
out_starts() { [ "$(head -c ${#1} "$tmp/out")" = "$1" ]; }
differs() { ! cmp -s "$1" "$2"; }
lacks() { ! grep -q -e "$1" "$2"; }

# fails STATUS WHAT DESCRIPTION CMD...: CMD exits STATUS with one error
# line naming WHAT and nothing on stdout.
fails() {
	want=$1
	what=$2
	desc=$3
	shift 3
	run "$@"
	ok "$desc: exit $want" status_is "$want"
	ok "$desc: one error line naming ${what##*/}" one_error "$what"
	ok "$desc: nothing on stdout" out_empty
}

# has_tmp DIR NAME, no_tmp DIR NAME: whether a temporary file of NAME
# (.NAME.pw-tmp.PID.XXXXXX) is in DIR.
has_tmp() {
	set -- "$1/.$2.pw-tmp."*
	[ -e "$1" ]
}
no_tmp() { ! has_tmp "$@"; }
# signal_when SIG CONDITION CMD...: runs CMD in the background (its output
# in $tmp/bg.out and $tmp/bg.err) until CONDITION (a command line) holds,
# then sends it SIG; its exit status goes to $signalled.  A background job
# of a script starts with interrupts ignored, and a suite run under nohup
# with hangups ignored, which the program keeps so; env gives it the
# default dispositions back.
signal_when() {
	sig=$1
	cond=$2
	shift 2
	# Emptied here: the background job might open them only after the
	# first look, which would see the last run's output.
	: >"$tmp/bg.out"
	: >"$tmp/bg.err"
	env --default-signal=HUP,INT,TERM "$@" >>"$tmp/bg.out" 2>>"$tmp/bg.err" &
	pid=$!
	i=0
	while [ $i -lt 1200 ] && ! eval "$cond"; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -"$sig" $pid
	wait $pid
	signalled=$?
}
# Whether FILE holds no control character but newlines.
no_control() { ! LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$1"; }

# A JSON number field of $tmp/out ("makespan": 33.0 -> 33).
field() {
	sed -n "s/^ *\"$1\": *\\([-0-9.eE+]*\\),*\$/\\1/p" "$tmp/out" | head -1
}
# Whether two numbers are equal within 1e-9.
same() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-9 && d > -1e-9) }'
}

echo "# pipewright: $PW"

# ------------------------------------------------------------ help, version
run "$PW" --version
ok "--version exits 0" status_is 0
ok "--version prints the name and a version" \
    grep -q '^pipewright [0-9][0-9.]*$' "$tmp/out"
fails 2 "foo" "--version with an argument" "$PW" --version foo

run "$PW" --help
ok "--help exits 0" status_is 0
cp "$tmp/out" "$tmp/help"
for cmd in schedule eval check compare show export design help; do
	ok "--help lists $cmd" grep -q "^  $cmd " "$tmp/help"
done
run "$PW" help
ok "help is --help" cmp -s "$tmp/out" "$tmp/help"

for cmd in schedule eval check compare show export design help; do
	run "$PW" "$cmd" --help
	ok "$cmd --help exits 0" status_is 0
	ok "$cmd --help starts with its usage" out_starts "usage: pipewright $cmd "
	cp "$tmp/out" "$tmp/cmdhelp"
	run "$PW" help "$cmd"
	ok "help $cmd is $cmd --help" cmp -s "$tmp/out" "$tmp/cmdhelp"
	run "$PW" "$cmd" -h
	ok "$cmd -h is $cmd --help" cmp -s "$tmp/out" "$tmp/cmdhelp"
done

# The registries, as the help lists them.
"$PW" schedule --help | awk '/^families:/ { on = 1; next } on && NF { print $1 }' >"$tmp/families"
"$PW" export --help | awk '/^formats:/ { on = 1; next } on && NF { print $1 }' >"$tmp/formats"
ok "schedule --help lists families" [ -s "$tmp/families" ]
ok "export --help lists chrome" grep -qx chrome "$tmp/formats"
ok "export --help lists svg" grep -qx svg "$tmp/formats"
families=$(cat "$tmp/families")

# Option letters: getopt_long hands back the letter, so two long options
# of one letter would read as one (--problem once took --sort's, --gpus
# --height's).  The table (cmd_parse.c, with cmd.h's model options) gives
# every option a letter of its own; every option a command's help
# documents is in it, and its help's short letter is the table's.
sed -n "s/^	{ \"\([a-z-]*\)\", [a-z_]*, NULL, '\(.\)' },\$/\2 \1/p" \
    "$srcdir/src/cli/cmd_parse.c" >"$tmp/letters"
sed -n 's/^	\(OPT\|FLAG\)(PW_CMD_M_[A-Z_]*, \([A-Za-z]\), "\([a-z-]*\)".*/\2 \3/p' \
    "$srcdir/src/cli/cmd.h" >>"$tmp/letters"
ok "the option table read: every row of cmd_parse.c and cmd.h" [ \
    "$(wc -l <"$tmp/letters")" -eq $(($(grep -c "_argument, NULL, '" \
    "$srcdir/src/cli/cmd_parse.c") + $(grep -c '^	\(OPT\|FLAG\)(PW_CMD_M_' \
    "$srcdir/src/cli/cmd.h"))) ]
cut -d' ' -f1 "$tmp/letters" | sort | uniq -d >"$tmp/shared"
ok "no two options share a letter" [ ! -s "$tmp/shared" ]
commands=$("$PW" --help | awk '/^commands:/ { on = 1; next } on && !NF { exit }
    on { print $1 }')
: >"$tmp/undocumented"
for cmd in $commands; do
	"$PW" "$cmd" --help | sed -n \
	    's/^  \(-\([A-Za-z]\), \)\{0,1\}--\([a-z-]*\).*/\2 \3/p' |
	    while read -r letter name; do
		[ -n "$name" ] || { name=$letter; letter=; }
		grep -q " $name\$" "$tmp/letters" &&
		    { [ -z "$letter" ] || grep -qx "$letter $name" "$tmp/letters"; } ||
		    echo "$cmd --$name ($letter)"
	    done >>"$tmp/undocumented"
done
ok "every option a command's help documents is the table's, with its letter" \
    [ ! -s "$tmp/undocumented" ]

fails 2 "frobnicate" "unknown command" "$PW" frobnicate
fails 2 "--frobnicate" "unknown global option" "$PW" --frobnicate
fails 2 "frobnicate" "help on an unknown command" "$PW" help frobnicate
fails 2 "export" "help with two commands" "$PW" help show export
fails 2 "--frobnicate" "unknown long option" "$PW" compare --frobnicate
fails 2 "-z" "unknown short option" "$PW" eval -z x.json
fails 2 "--family" "option without its value" "$PW" schedule --family
fails 2 "usage: pipewright eval" "missing argument" "$PW" eval
fails 2 "extra.json" "extra argument" "$PW" check a.json extra.json
fails 2 "--family" "schedule without a family" "$PW" schedule
fails 2 "--to" "export without a format" "$PW" export a.json
fails 2 "--width" "bad width" "$PW" show a.json --width 0
fails 2 "--width" "width not a number" "$PW" show a.json --width 8x
fails 2 "export: an empty argument where a file name belongs" \
    "an empty file name" "$PW" export "" --to chrome
fails 2 "--width" "a width of more columns than show draws" \
    "$PW" show "$UNIT" --width 200000
ok "show names its range of columns" \
    one_error "pipewright: show: --width 200000 is out of range: 1 to 100000 columns"
fails 2 "--width" "a width beyond an int" \
    "$PW" show "$UNIT" --width 99999999999
ok "a width beyond an int is a number out of range, as written" \
    one_error "pipewright: show: --width 99999999999 is out of range: 1 to 100000 columns"
fails 2 "--height" "a height beyond a long" \
    "$PW" export "$UNIT" --to svg --height 999999999999999999999999
ok "export names its range of pixels for a height beyond a long" \
    one_error "pipewright: export: --height 999999999999999999999999 is out of range: 120 to 16384 pixels"

# ------------------------------------------------------------ the main job
run "$PW"
ok "no arguments exits 0" status_is 0
cp "$tmp/out" "$tmp/main"
run "$PW" compare
ok "compare exits 0" status_is 0
ok "no arguments is compare on the default problem" cmp -s "$tmp/out" "$tmp/main"
# The table without its imbalance warning, which names the input.
sed '/^warning:/,$d' "$tmp/main" >"$tmp/main-table"
ok "the default problem's split is the best of its layers: no warning" \
    lacks '^warning:' "$tmp/main"
for f in $families; do
	ok "compare has a row for $f" grep -q "^$f " "$tmp/main"
done
ok "compare shows each device's peak" grep -q '^device  *d0  *d1' "$tmp/main"

# A large problem's comparison (4,096 stage-microbatch pairs and more)
# says on stderr, off a terminal a line each, which family is next and at
# the end how long all took; a smaller one says nothing.
nfamilies=$(grep -c . "$tmp/families")
run "$PW" compare --model gpt3-1.3b --hardware H100-SXM --devices 8 \
    --microbatches 512
ok "compare of 8 stages by 512 microbatches exits 0" status_is 0
ok "it says before each of the $nfamilies families which is next" \
    awk -v n="$nfamilies" '
	$0 !~ /^compare: [0-9]+ of [0-9]+ families built in [0-9.]+ [mun]?s, building [a-z0-9-]+$/ { next }
	$2 == NR - 1 && $4 == n { k++ }
	END { exit k == n ? 0 : 1 }' "$tmp/err"
ok "and at the end how long all took" \
    [ "$(sed -n '$p' "$tmp/err" | sed -E 's/in [0-9.]+ [mun]?s$/in T/')" = "compare: $nfamilies families built in T" ]
ok "its table is the table" out_has '^family  *makespan'
run "$PW" compare --model gpt3-1.3b --hardware H100-SXM --devices 8 \
    --microbatches 511
ok "8 stages by 511 microbatches: nothing on stderr" err_empty

# The same off a terminal even when stdin is one (a pipe of stdout).
run sh -c '"$1" </dev/null | cat' sh "$PW"
ok "no arguments into a pipe is the report" cmp -s "$tmp/out" "$tmp/main"
run env TERM=dumb "$PW"
ok "no arguments with TERM=dumb is the report" cmp -s "$tmp/out" "$tmp/main"

# ------------------------------------------------------------ design off a terminal
# tests/test_tui_e2e.sh drives it on one (tmux).
run "$PW" design --keys
if [ "$status" -eq 2 ]; then
	ok "design says it is not built" one_error \
	    "this pipewright was built without the terminal designer"
	fails 2 "without the terminal designer" "design when not built" \
	    "$PW" design
else
	ok "design --keys exits 0 off a terminal" status_is 0
	# One row a key: its names, the modes where it acts, what it does.
	ok "design --keys lists q" out_has "$(printf '^q\tall\tquit')"
	ok "design --keys lists ?" out_has "$(printf '^?\ttimeline\t')"
	ok "design --keys: three fields in every row" \
	    awk -F '\t' 'NF != 3 { exit 1 }' "$tmp/out"
	ok "design --keys writes nothing on stderr" err_empty
	ok "design --keys has no control characters but tabs" \
	    sh -c '! LC_ALL=C grep -q "$(printf "[\001-\010\013-\037\177]")" "$1"' \
	    sh "$tmp/out"
	# docs/designer.md's key table is these rows.
	awk -F '\t' '{ printf "| `%s` | %s | %s |\n", $1, $2, $3 }' \
	    "$tmp/out" >"$tmp/keys.md"
	sed -n '/^## Keys$/,/^## /p' "$srcdir/docs/designer.md" |
	    grep '^| `' >"$tmp/keys.doc"
	ok "docs/designer.md lists every key as design --keys does" \
	    cmp -s "$tmp/keys.md" "$tmp/keys.doc"
	fails 2 "design: needs a terminal on stdin and stdout" \
	    "design off a terminal" "$PW" design </dev/null
	fails 2 "design: needs a terminal on stdin and stdout" \
	    "design of a file off a terminal" "$PW" design "$UNIT" </dev/null
	fails 2 "design: $tmp/absent.json: cannot open" \
	    "design of a missing file off a terminal names the file" \
	    "$PW" design "$tmp/absent.json" </dev/null
fi
fails 2 "--frobnicate" "design with an unknown option" "$PW" design --frobnicate
fails 2 "b.json" "design of two files" "$PW" design a.json b.json

# ------------------------------------------------------------ problem files
run "$PW" problem
ok "problem writes the default problem" status_is 0
ok "the default problem is examples/default.json" cmp -s "$tmp/out" "$EXAMPLES/default.json"
run "$PW" problem "$UNIT" -o "$tmp/unit.json"
ok "problem -o exits 0" status_is 0
ok "a problem file round-trips unchanged" cmp -s "$tmp/unit.json" "$UNIT"
"$PW" schedule "$UNIT" --family 1f1b -o "$tmp/unit-1f1b.json" 2>/dev/null
run "$PW" problem "$tmp/unit-1f1b.json"
ok "problem extracts the problem of a schedule file" cmp -s "$tmp/out" "$UNIT"

# ------------------------------------------------------------ schedule -> check
# roundtrip LABEL PROBLEM...: every family's schedule of the problem (none:
# the default one) passes check, or the family says why it does not apply.
roundtrip() {
	label=$1
	shift
	napplicable=0
	for f in $families; do
		run "$PW" schedule "$@" --family "$f" -o "$tmp/$label-$f.json"
		if [ "$status" -eq 2 ] && grep -q 'does not apply' "$tmp/err"; then
			ok "$label: $f does not apply, in one line" one_error "$f"
			continue
		fi
		napplicable=$((napplicable + 1))
		ok "$label: schedule --family $f exits 0" status_is 0
		ok "$label: $f prints its metrics to stdout" out_has '^makespan '
		file=$tmp/$label-$f.json
		if out_has '^memory  *OVER THE LIMIT'; then
			# Still written; check finds only the memory faults.
			run "$PW" check "$file"
			ok "$label: check rejects $f over the limit" status_is 1
			ok "$label: each violation is over a limit" \
			    sh -c '! sed "\$d" "$1" | grep -v "limit"' sh "$tmp/out"
		else
			run "$PW" check "$file"
			ok "$label: check accepts $f" status_is 0
			ok "$label: check says valid" out_has "^$file: valid ([0-9]* ops)\$"
		fi
	done
	ok "$label: some family applies" [ "$napplicable" -gt 0 ]
}

# Two chunks per device in loop placement: the interleaved families' case.
cat >"$tmp/loop.json" <<EOF
{"format": "pipewright.problem.v1", "devices": 2, "microbatches": 4, "comm": 0.0,
 "stages": [
  {"device": 0, "f": 1.0, "b": 1.0, "w": 1.0, "act": 1.0, "hold": 0.5, "offload": 0.0},
  {"device": 1, "f": 1.0, "b": 1.0, "w": 1.0, "act": 1.0, "hold": 0.5, "offload": 0.0},
  {"device": 0, "f": 1.0, "b": 1.0, "w": 1.0, "act": 1.0, "hold": 0.5, "offload": 0.0},
  {"device": 1, "f": 1.0, "b": 1.0, "w": 1.0, "act": 1.0, "hold": 0.5, "offload": 0.0}],
 "memory": [{"static": 1.0, "limit": 100.0}, {"static": 1.0, "limit": 100.0}]}
EOF

roundtrip default
roundtrip loop "$tmp/loop.json"
if [ -f "$UNIT" ]; then
	roundtrip unit "$UNIT"
else
	skip "unit problem round trip" "no $UNIT"
fi

# To stdout the schedule is the output and the metrics go to stderr.
run "$PW" schedule --family 1f1b
ok "schedule to stdout exits 0" status_is 0
ok "schedule to stdout writes JSON" out_starts "{"
ok "schedule to stdout prints its metrics on stderr" err_has '^makespan '
cp "$tmp/out" "$tmp/stdout-1f1b.json"
run "$PW" check "$tmp/stdout-1f1b.json"
ok "the schedule from stdout is valid" status_is 0

# /dev/stdout on a pipe is written in place (it leads to no path to
# rename over), and as stdout it sends the report to stderr.
run sh -c '"$1" schedule --family 1f1b -o /dev/stdout | cat' sh "$PW"
ok "schedule -o /dev/stdout into a pipe exits 0" status_is 0
ok "and writes the schedule alone there" cmp -s "$tmp/out" "$tmp/stdout-1f1b.json"
ok "with the metrics on stderr" err_has '^makespan '
run sh -c '"$1" schedule --family 1f1b -o /dev/fd/3 3>&1 >/dev/null | cat' \
    sh "$PW"
ok "schedule -o /dev/fd/3 on a pipe writes the schedule there" \
    cmp -s "$tmp/out" "$tmp/stdout-1f1b.json"
run sh -c '"$1" schedule --family 1f1b -o "$2" >"$2"' sh "$PW" "$tmp/redir.json"
ok "schedule -o FILE with stdout on FILE: the schedule alone in FILE" \
    cmp -s "$tmp/redir.json" "$tmp/stdout-1f1b.json"
ok "and the metrics on stderr, not in the file it replaced" \
    err_has '^makespan '

# "-" reads stdin.
run sh -c '"$1" schedule --family zb-h1 2>/dev/null | "$1" check -' sh "$PW"
ok "check - reads a schedule from stdin" out_has '^<stdin>: valid ([0-9]* ops)$'
run sh -c '"$1" compare - <"$2"' sh "$PW" "$tmp/default-1f1b.json"
sed '/^warning:/,$d' "$tmp/out" >"$tmp/table"
ok "compare - reads the problem from stdin" cmp -s "$tmp/table" "$tmp/main-table"
"$PW" problem --model gpt3-1.3b --hardware H100-SXM --devices 2 --microbatches 4 --layers-per-stage 20,4 -o "$tmp/uneven.json"
run sh -c '"$1" compare - <"$2"' sh "$PW" "$tmp/uneven.json"
ok "compare - names plan on the same file" out_has '^    pipewright plan -$'

# A schedule file stands for its problem.
run "$PW" schedule "$tmp/default-1f1b.json" --family 1f1b -o "$tmp/again.json"
ok "schedule accepts a schedule file as the problem" status_is 0
ok "it gives the same schedule" cmp -s "$tmp/again.json" "$tmp/default-1f1b.json"
run "$PW" compare "$tmp/default-1f1b.json"
ok "compare accepts a schedule file" status_is 0
sed '/^warning:/,$d' "$tmp/out" >"$tmp/table"
ok "it gives the default problem's table" cmp -s "$tmp/table" "$tmp/main-table"
"$PW" schedule "$tmp/uneven.json" --family 1f1b -o "$tmp/uneven-1f1b.json"
run "$PW" compare "$tmp/uneven-1f1b.json"
ok "its warning names plan on the file" out_has "^    pipewright plan $tmp/uneven-1f1b.json\$"

fails 2 "nosuch" "unknown family" "$PW" schedule --family nosuch -o "$tmp/x.json"
ok "unknown family lists the families" grep -q -F "$(head -1 "$tmp/families")" "$tmp/err"
ok "unknown family writes no file" [ ! -e "$tmp/x.json" ]

# ------------------------------------------------------------ split again
run "$PW" schedule --family zb-v -o "$tmp/zbv.json"
ok "zb-v on the default problem exits 0" status_is 0
ok "it says the model was split again" err_has "zb-v splits the built-in default problem again: 16 stages, 2 per device"
run "$PW" check "$tmp/zbv.json"
ok "the split schedule checks" status_is 0
ok "its file holds the 16-stage problem" grep -q '"placement": "v"' "$tmp/zbv.json"
run "$PW" compare
ok "compare names the families that ran on a new split" out_has '^zb-v: ran on the model split again, 16 stages (2 per device)'

# ------------------------------------------------------------ exact metrics
if [ -f "$UNIT" ]; then
	# p = 4, m = 8, f = b = w = 1: spans 33 / 27 / 24 (PipeOffload).
	for spec in 1f1b:33:33 zb-h1:27:27 zb-h2:-:24; do
		f=${spec%%:*}
		rest=${spec#*:}
		makespan=${rest%%:*}
		span=${rest#*:}
		run "$PW" eval --json "$tmp/unit-$f.json"
		ok "unit $f: eval --json exits 0" status_is 0
		if [ "$makespan" != - ]; then
			ok "unit $f: makespan $makespan" same "$(field makespan)" "$makespan"
		fi
		ok "unit $f: max span $span" same "$(field max_span)" "$span"
	done

	run "$PW" eval --json "$tmp/unit-1f1b.json"
	ok "unit 1f1b: bubble rate 9/33" same "$(field bubble_rate)" 0.27272727272727
	ok "unit 1f1b: total idle 4*33 - 4*24" same "$(field total_idle)" 36
	ok "unit 1f1b: max busy 24" same "$(field max_busy)" 24
	ok "unit 1f1b: one entry per device" [ "$(grep -c '"within_limit"' "$tmp/out")" -eq 4 ]
	ok "unit 1f1b: JSON names every field" \
	    sh -c 'for k in makespan bubble_rate total_idle max_span max_busy feasible devices span busy idle peak limit within_limit; do grep -q "\"$k\":" "$1" || exit 1; done' sh "$tmp/out"
	if command -v python3 >/dev/null 2>&1; then
		ok "eval --json is one JSON object" \
		    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not isinstance(d["devices"], list))' "$tmp/out"
	else
		skip "eval --json is one JSON object" "no python3"
	fi
	run "$PW" eval "$tmp/unit-1f1b.json"
	ok "eval prints the makespan as text" out_has '^makespan  *33 s$'
	ok "eval prints the bubble rate as text" out_has '^bubble rate  *0\.2727$'
	ok "eval prints a row per device" [ "$(grep -c '^[0-3] ' "$tmp/out")" -eq 4 ]
	ok "eval is quiet on stderr when the times agree" [ ! -s "$tmp/err" ]

	run "$PW" compare "$UNIT"
	ok "compare unit4x8 exits 0" status_is 0
	for f in $families; do
		ok "compare unit4x8 has a row for $f" out_has "^$f "
	done
	ok "compare unit4x8: 1f1b makespan" out_has '^1f1b  *33 s  *0\.2727 '
	ok "compare unit4x8: zb-h2's peaks 7 6 5 4" \
	    out_has '^zb-h2  *7 B  *6 B  *5 B  *4 B$'

	# With a limit of 5 activations, GPipe (peak 8) and ZB-H2 (7, 6,
	# 5, 4) break it, 1F1B and ZB-H1 (peak 4) fit.
	sed 's/"limit": null/"limit": 5.0/' "$UNIT" >"$tmp/tight.json"
	run "$PW" compare "$tmp/tight.json"
	ok "compare tight exits 0" status_is 0
	ok "compare tight: gpipe over on every device" \
	    out_has '^gpipe  *33 s .* 8 B  *d0 160\.0%  *over: 4 devices, d0 by 3 B$'
	ok "compare tight: 1f1b fits" out_has '^1f1b  .* 4 B  *d0 80\.0%  *ok$'
	ok "compare tight: zb-h2 over on two devices" \
	    out_has '^zb-h2  .* 7 B  *d0 140\.0%  *over: 2 devices, d0 by 2 B$'
	ok "compare tight: the limits" out_has '^limit  *5 B  *5 B  *5 B  *5 B$'
	ok "compare tight: zb-h2's shares" \
	    out_has '^zb-h2  *140\.0%  *120\.0%  *100\.0%  *80\.0%$'
	ok "compare tight: the reason 1f1b-interleaved does not apply" \
	    out_has '^1f1b-interleaved not applicable: '

	run "$PW" schedule "$tmp/tight.json" --family gpipe -o "$tmp/tight-gpipe.json"
	ok "schedule over the limit still exits 0" status_is 0
	ok "and says which device is over and by how much" \
	    out_has '^memory  *OVER THE LIMIT on 4 devices; worst device 0 by 3 B (peak 8 B, limit 5 B)$'
	ok "and marks each device" [ "$(grep -c '160\.0% OVER$' "$tmp/out")" -eq 4 ]
	run "$PW" eval --json "$tmp/tight-gpipe.json"
	ok "eval over the limit exits 0" status_is 0
	ok "eval --json: not feasible" out_has '"feasible": false'
	ok "eval --json: the limit" same "$(field limit)" 5
	run "$PW" check "$tmp/tight-gpipe.json"
	ok "check over the limit exits 1" status_is 1
else
	skip "exact metrics on the unit problem" "no $UNIT"
fi

# ------------------------------------------------------------ check finds faults
# edit N START END: the schedule file on stdin with op N's start and end
# (in file order) moved by START and END seconds.
edit() {
	awk -v want="$1" -v ds="$2" -v de="$3" '
	function move(key, by,    v) {
		if (!match($0, "\"" key "\": *[-0-9.eE+]+"))
			return
		v = substr($0, RSTART, RLENGTH)
		sub(/^[^:]*: */, "", v)
		$0 = substr($0, 1, RSTART - 1) "\"" key "\": " \
		    sprintf("%.17g", v + by) \
		    substr($0, RSTART + RLENGTH)
	}
	/"kind": *"/ && /"start":/ && ++seen == want { move("start", ds); move("end", de) }
	{ print }'
}

nops=$(grep -c '"kind": *"' "$tmp/default-1f1b.json")
edit 2 0.5 0 <"$tmp/default-1f1b.json" >"$tmp/bad-start.json"
ok "the corrupted file differs from the original" \
    differs "$tmp/bad-start.json" "$tmp/default-1f1b.json"
run "$PW" check "$tmp/bad-start.json"
ok "check of a moved start: exit 1" status_is 1
ok "check names the file on each violation" out_has "^$tmp/bad-start.json: "
ok "check ends with the count" sh -c 'tail -1 "$1" | grep -q ": [0-9][0-9]* violations*$"' sh "$tmp/out"
ok "check's violations go to stdout" [ ! -s "$tmp/err" ]

# eval keeps the orders and recomputes the times, saying so.
edit "$nops" 100 100 <"$tmp/default-1f1b.json" >"$tmp/late.json"
run "$PW" check "$tmp/late.json"
ok "check accepts the last op moved later" status_is 0
run "$PW" eval --json "$tmp/late.json"
ok "eval of the moved op exits 0" status_is 0
ok "eval says the stored times differ, in one line" one_error "differ"
mv "$tmp/out" "$tmp/late.out"
run "$PW" eval --json "$tmp/default-1f1b.json"
ok "eval recomputes the moved op's times" cmp -s "$tmp/out" "$tmp/late.out"
run "$PW" launch "$tmp/late.json" --dry-run
ok "launch runs the orders, and says so too" err_has "^pipewright: $tmp/late.json: the stored times of 1 of [0-9]* ops differ"

# The second op far later puts F(0,1) after ops that wait for it.
edit 2 100 100 <"$tmp/default-1f1b.json" >"$tmp/deadlock.json"
fails 2 "$tmp/deadlock.json" "eval of orders that deadlock" "$PW" eval "$tmp/deadlock.json"
ok "the error says deadlock" err_has 'deadlock'

# A start time that is not a number.
sed 's/"start": *[-0-9.eE+]*/"start": "soon"/' "$tmp/default-1f1b.json" >"$tmp/notnum.json"
fails 2 "$tmp/notnum.json" "check of a non-numeric start" "$PW" check "$tmp/notnum.json"

# ------------------------------------------------------------ bad inputs
for f in "$TESTDATA"/bad/*.json; do
	[ -e "$f" ] || { skip "tests/data/bad" "no files"; break; }
	fails 2 "$f" "check $(basename "$f")" "$PW" check "$f"
done

# Text jansson refuses is an input error for every reader, never an abort.
for f in "$TESTDATA"/bad/utf8_*.json; do
	for cmd in problem check show "schedule --family 1f1b"; do
		fails 2 "$f" "$cmd $(basename "$f")" "$PW" $cmd "$f"
	done
done
run "$PW" problem "$TESTDATA/bad/utf8_lone_low.json"
ok "a lone low surrogate is named as such" err_has \
	'utf8_lone_low.json: line 1 column 19: JSON syntax error: invalid \\u escape: a UTF-16 surrogate without its pair$'

# A script whose watchdog cannot start is the program's failure (exit 3),
# not the script's: with a 4 GB stack limit and 1 GB of address space no
# thread stack fits.  Sanitizers reserve more address space than that.
# OpenBLAS (the runtime's) would start its own thread pool as the program
# loads, and fail first: OPENBLAS_NUM_THREADS=1 starts none, as the
# runtime wants it anyway (one BLAS thread per device thread).
printf 'print("ran")\n' >"$tmp/hello.lua"
if ldd "$PW" 2>/dev/null | grep -q -e libasan -e libubsan; then
	skip "script without a watchdog thread" "a sanitizer build"
elif ! (ulimit -s 4000000) 2>/dev/null; then
	skip "script without a watchdog thread" "the stack limit is fixed"
else
	run env OPENBLAS_NUM_THREADS=1 sh -c 'ulimit -s 4000000 &&
	    ulimit -v 1000000 && exec "$@"' sh "$PW" script "$tmp/hello.lua"
	ok "script without a watchdog thread: exit 3" status_is 3
	ok "script without a watchdog thread: says so" one_error \
	    "hello.lua: cannot start the watchdog thread"
fi

run sh -c 'printf "print(arg[1], 6 * 7)\n" | "$1" script - x' sh "$PW"
ok "script - reads the script from stdin" out_has '^x	42$'
run sh -c 'printf "error(\"boom\")\n" | "$1" script -' sh "$PW"
ok "...and names it <stdin>" err_has '^pipewright: <stdin>:1: boom'
run sh -c 'printf "#!/usr/bin/env pipewright\nerror(\"two\")\n" | "$1" script -' \
    sh "$PW"
ok "...past a first '#' line, lines counted as in a file" \
    err_has '^pipewright: <stdin>:2: two'

printf 'local function f(n) return f(n + 1) + 1 end\nf(1)\n' >"$tmp/deep.lua"
run "$PW" script "$tmp/deep.lua"
ok "a deep traceback's skip reads as words, not an escaped tab" \
    err_has '; \.\.\. (skipping [0-9]* levels); '

# A script read as a problem prints to stderr: the command's stdout is
# its own (JSON here); pipewright script prints to stdout.
run "$PW" script "$tmp/hello.lua"
ok "script prints to stdout" out_has '^ran$'
# (Its problem made in place: a script reads below the current directory
# only, which a distcheck build is not above the sources of.)
cat >"$tmp/noisy.lua" <<'EOF'
print("ran")
local st = {}
for i = 1, 2 do st[i] = { f = 1, b = 1, w = 1, act = 1 } end
local p = pw.problem{ devices = 2, microbatches = 2, stages = st }
pw.show(pw.schedule(p, "1f1b"), 40)
return p
EOF
run "$PW" problem "$tmp/noisy.lua"
ok "a problem script's print and pw.show go to stderr" err_has '^ran$'
ok "...leaving the problem's JSON alone on stdout" \
    sh -c '"$1" problem "$2" 2>/dev/null >"$3" && "$1" problem "$3" >/dev/null' \
    sh "$PW" "$tmp/noisy.lua" "$tmp/noisy.json"

printf 'this is not JSON\n' >"$tmp/notjson.json"
for cmd in check eval show; do
	fails 2 "$tmp/missing.json" "$cmd of a missing file" "$PW" $cmd "$tmp/missing.json"
	fails 2 "$tmp/notjson.json" "$cmd of a file that is not JSON" "$PW" $cmd "$tmp/notjson.json"
done
fails 2 "$tmp/missing.json" "compare of a missing file" "$PW" compare "$tmp/missing.json"
fails 2 "$tmp/notjson.json" "compare of a file that is not JSON" "$PW" compare "$tmp/notjson.json"
fails 2 "$tmp/missing.json" "schedule of a missing file" "$PW" schedule "$tmp/missing.json" --family 1f1b
fails 2 "$tmp/missing.json" "export of a missing file" "$PW" export "$tmp/missing.json" --to svg
for cmd in show "export --to svg"; do
	fails 2 "${UNIT##*/}" "$cmd of a problem" "$PW" $cmd "$UNIT"
	ok "$cmd of a problem says to add --family" err_has "is a problem, not a schedule: add --family NAME"
done
fails 2 "nosuch" "unknown format" "$PW" export "$tmp/default-1f1b.json" --to nosuch
ok "unknown format lists the formats" err_has 'chrome'

# ------------------------------------------------------------ atomic output
fails 2 "$tmp/nodir/s.json" "schedule into a missing directory" \
    "$PW" schedule --family 1f1b -o "$tmp/nodir/s.json"
ok "no directory appears" [ ! -e "$tmp/nodir" ]
fails 2 "$tmp/nodir/s.svg" "export into a missing directory" \
    "$PW" export "$tmp/default-1f1b.json" --to svg -o "$tmp/nodir/s.svg"
ok "still no directory" [ ! -e "$tmp/nodir" ]

printf 'precious\n' >"$tmp/keep"
run "$PW" schedule "$tmp/notjson.json" --family 1f1b -o "$tmp/keep"
ok "schedule of a bad problem fails" status_is 2
ok "it leaves the existing output alone" grep -qx precious "$tmp/keep"
run "$PW" schedule --family nosuch -o "$tmp/keep"
ok "it leaves it alone on an unknown family" grep -qx precious "$tmp/keep"
run "$PW" export "$tmp/notjson.json" --to chrome -o "$tmp/keep"
ok "export of a bad file fails" status_is 2
ok "it leaves the existing output alone" grep -qx precious "$tmp/keep"
run "$PW" schedule --family 1f1b -o "$tmp/keep"
ok "schedule replaces an existing output" status_is 0
ok "with a whole schedule" cmp -s "$tmp/keep" "$tmp/default-1f1b.json"
ok "no temporary file is left behind" no_tmp "$tmp" keep

# An output keeps its mode, and a link given as the output keeps leading
# to the file written.
chmod 600 "$tmp/keep"
run "$PW" schedule --family 1f1b -o "$tmp/keep"
ok "a private output stays private" [ "$(ls -l "$tmp/keep" | cut -c1-10)" = "-rw-------" ]
ln -s keep "$tmp/keep-link"
run "$PW" export "$tmp/default-1f1b.json" --to svg -o "$tmp/keep-link"
ok "export through a link exits 0" status_is 0
ok "the link is still a link" [ -L "$tmp/keep-link" ]
ok "its target holds the output" sh -c '[ "$(head -c 4 "$1")" = "<svg" ]' sh "$tmp/keep"
ok "the target kept its mode" [ "$(ls -l "$tmp/keep" | cut -c1-10)" = "-rw-------" ]
ok "no temporary file beside the target" no_tmp "$tmp" keep

# Export onto its own input (by another name) would replace the schedule
# or the costs with a trace.
cp "$tmp/default-1f1b.json" "$tmp/self.json"
run "$PW" export "$tmp/self.json" --to chrome -o "$tmp/./self.json"
ok "export -o its own FILE fails" status_is 2
ok "it says the output is the input" grep -qx "pipewright: export: -o '$tmp/./self.json' is the input $tmp/self.json: it would be replaced; write elsewhere" "$tmp/err"
ok "the schedule is as it was" cmp -s "$tmp/self.json" "$tmp/default-1f1b.json"
cp "$UNIT" "$tmp/costs.json"
run "$PW" export "$EXAMPLES/torch/1f1b.csv" --problem "$tmp/costs.json" --to svg -o "$tmp/costs.json"
ok "export -o its --problem fails" status_is 2
ok "the costs are as they were" cmp -s "$tmp/costs.json" "$UNIT"

# A file its user may not write is refused, as the shell's > refuses it,
# though its directory would let a rename replace it.  Root writes any
# file; as root the test runs as nobody where setpriv can switch, on
# copies of the program and the problem (a build in a private directory,
# mktemp -d's, is out of nobody's reach).
mkdir "$tmp/open" && chmod 777 "$tmp/open" && chmod o+x "$tmp"
cp "$PW" "$tmp/open/pw" && cp "$UNIT" "$tmp/open/unit.json" && chmod 755 "$tmp/open/pw" && chmod 644 "$tmp/open/unit.json"
as_user=
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
if [ "$(id -u)" -ne 0 ] || [ -n "$as_user" ]; then
	run $as_user sh -c 'cd "$1" && echo precious > ro.svg && chmod 444 ro.svg && exec ./pw export unit.json --family 1f1b --to svg -o ro.svg' sh "$tmp/open"
	ok "export -o a read-only file fails" status_is 2
	ok "it says it cannot write it" grep -qx "pipewright: ro.svg: cannot write: Permission denied" "$tmp/err"
	ok "the file is as it was" grep -qx precious "$tmp/open/ro.svg"
	ok "no temporary file beside it" no_tmp "$tmp/open" ro.svg
else
	for what in "export -o a read-only file fails" "it says it cannot write it" \
	    "the file is as it was" "no temporary file beside it"; do
		skip "$what" "root writes any file, and no setpriv to run as another user"
	done
fi

# A fatal signal while an output is written leaves the output as it was
# and no temporary file.  Writing 786,432 ops (about 47 MB) takes seconds:
# the signal comes once the temporary file is there, the run still
# writing (its status says the signal ended it).
cat >"$tmp/big.lua" <<'EOF'
local stages = {}
for d = 1, 32 do stages[d] = { f = 1, b = 1, w = 1, act = 1, hold = 0.5 } end
return pw.problem{ devices = 32, microbatches = 8192, stages = stages }
EOF
# Each signal with the status of a run it ends (128 + its number).
for spec in TERM:143 HUP:129; do
	sig=${spec%:*}
	want=${spec#*:}
	printf 'precious\n' >"$tmp/big.json"
	signal_when $sig 'has_tmp "$tmp" big.json' \
	    "$PW" schedule "$tmp/big.lua" --family 1f1b -o "$tmp/big.json"
	ok "SIG$sig during schedule -o ends it" [ "$signalled" -eq "$want" ]
	ok "...leaving no temporary file" no_tmp "$tmp" big.json
	ok "...and the output as it was" grep -qx precious "$tmp/big.json"
	printf 'precious\n' >"$tmp/big.trace"
	signal_when $sig 'has_tmp "$tmp" big.trace' \
	    "$PW" export "$tmp/big.lua" --family 1f1b --to chrome -o "$tmp/big.trace"
	ok "SIG$sig during export ends it" [ "$signalled" -eq "$want" ]
	ok "...leaving no temporary file" no_tmp "$tmp" big.trace
	ok "...and the output as it was" grep -qx precious "$tmp/big.trace"
done

# After SIGKILL a temporary file remains; the next run of the same output
# removes it (its process is gone), and nothing else that looks alike.
sh -c 'exit 0' &
dead=$!
wait $dead
for f in ".keep.pw-tmp.$dead.AbC123" ".keep.pw-tmp.$dead.AbC12" ".keep.pw-tmp.$$.AbC123" \
    ".keep.pw-tmp.$dead.AbC123x" ".other.pw-tmp.$dead.AbC123"; do
	: >"$tmp/$f"
done
run "$PW" schedule --family 1f1b -o "$tmp/keep-link"
ok "a run after SIGKILL exits 0" status_is 0
ok "...removing the dead run's temporary file" [ ! -e "$tmp/.keep.pw-tmp.$dead.AbC123" ]
ok "...and only that" sh -c 'cd "$1" && shift && for f; do [ -e "$f" ] || exit 1; done &&
    [ "$(ls -A | grep -c pw-tmp)" -eq $# ]' sh "$tmp" ".keep.pw-tmp.$dead.AbC12" \
    ".keep.pw-tmp.$dead.AbC123x" ".keep.pw-tmp.$$.AbC123" ".other.pw-tmp.$dead.AbC123"
rm -f "$tmp"/.*pw-tmp*

# Names from files are escaped in everything printed as text: an ESC,
# a BEL and a C1 CSI reach no terminal.
if [ -f "$UNIT" ]; then
	sed 's/"name": "unit4x8"/"name": "x\\u001b]0;t\\u0007\\u009by"/' "$UNIT" >"$tmp/esc.json"
	"$PW" schedule "$tmp/esc.json" --family 1f1b -o "$tmp/esc-1f1b.json" >/dev/null
	run "$PW" compare "$tmp/esc.json"
	ok "compare escapes the name" out_has '^x\\x1b]0;t\\x07\\xc2\\x9by: 4 devices'
	ok "...and prints no control character" no_control "$tmp/out"
	run "$PW" show "$tmp/esc-1f1b.json"
	ok "show escapes the name and names the file's family" \
	    out_has '^x\\x1b]0;t\\x07\\xc2\\x9by (1f1b): 4 devices'
	ok "...and prints no control character" no_control "$tmp/out"
	sed 's/"family": "1f1b"/"family": "f\\u001b[2Jg"/' "$tmp/esc-1f1b.json" \
	    >"$tmp/esc-family.json"
	run "$PW" show "$tmp/esc-family.json"
	ok "show escapes the file's family" out_has ' (f\\x1b\[2Jg): 4 devices'
	ok "...and prints no control character" no_control "$tmp/out"
	run "$PW" eval "$tmp/esc-1f1b.json"
	ok "eval prints no control character" no_control "$tmp/out"
fi
printf 'x\033[2J\n\377.json' >"$tmp/esc-name"
fails 2 'x\x1b[2J; \xff.json: cannot open' \
    "a path with ESC, a newline and a stray byte, escaped" "$PW" eval "$(cat "$tmp/esc-name")"
ok "...no control character on stderr" no_control "$tmp/err"

# A full disk: the output that cannot be written is an error, said once.
if [ -c /dev/full ]; then
	for args in "compare" "schedule --family 1f1b" "eval --json $tmp/default-1f1b.json" \
	    "export $tmp/default-1f1b.json --to svg"; do
		run sh -c "\"\$1\" $args >/dev/full" sh "$PW"
		ok "$(echo "$args" | cut -d' ' -f1) into a full disk: exit 2" status_is 2
		ok "$(echo "$args" | cut -d' ' -f1) into a full disk: one error line" one_error "write"
	done
	# A JSON larger than stdout's buffer fails as it is written: the
	# error names the cause as the text forms' do.
	for args in "compare --json" "eval --json $tmp/default-1f1b.json" \
	    "eval --critical --json $tmp/default-1f1b.json"; do
		run sh -c "\"\$1\" $args >/dev/full" sh "$PW"
		ok "$args into a full disk names the cause" \
		    err_has ': No space left on device$'
	done
	# A script's print stops the script there, with the cause (the
	# flag left for the program's end had none).
	printf 'for i = 1, 1e6 do print(i) end\n' >"$tmp/prints.lua"
	run sh -c "\"\$1\" script \"\$2\" >/dev/full" sh "$PW" "$tmp/prints.lua"
	ok "a script's print into a full disk: exit 2" status_is 2
	ok "...its cause, at the print" err_has \
	    'prints.lua:1: print: cannot write the output: No space left on device;'
else
	skip "writing into a full disk" "no /dev/full"
fi

# ------------------------------------------------------------ show, export
run "$PW" show "$tmp/default-1f1b.json" --width 100
ok "show exits 0" status_is 0
ok "show draws one row per device" [ "$(grep -c '^dev [0-9]' "$tmp/out")" -eq 8 ]
ok "show keeps to the width" [ "$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$tmp/out")" -le 100 ]
run env COLUMNS=60 "$PW" show "$tmp/default-1f1b.json"
ok "show takes the width from COLUMNS" [ "$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$tmp/out")" -le 60 ]
if [ -f "$UNIT" ]; then
	run "$PW" show "$UNIT" --family zb-h1 --width 80
	ok "show --family builds the schedule of a problem" status_is 0
	ok "it draws one row per device" [ "$(grep -c '^dev [0-9]' "$tmp/out")" -eq 4 ]
	run "$PW" show "$UNIT" --family zb-h1 --width 80 --from 5 --to 15
	ok "show --from --to exits 0" status_is 0
	ok "show --from --to names the window" out_has '^window: 5 s to 15 s$'
	ok "show --from --to draws the window alone" out_has '^dev 0 |\.\{14\}0BBBBBBB0wwwwww4FFFFFF1bbbbbb1WWWWWW5fffffff2BBBBBB2wwwwww|$'
	ok "the window's ticks count from the schedule's start" out_has '^ \{14\}6 s \{12\}8 s \{11\}10 s'
	run "$PW" show "$UNIT" --family zb-h1 -F 20
	ok "show --from alone runs to the end" out_has '^window: 20 s to 27 s$'
	fails 2 "show: the window's start 15 s is not before its end 5 s" "show --from after --to" "$PW" show "$UNIT" --family zb-h1 --from 15 --to 5
	fails 2 "show: the window 0 s to 30 s reaches outside the schedule, 0 s to 27 s" "show --to past the end" "$PW" show "$UNIT" --family zb-h1 --to 30
	fails 2 "show: --from 'soon' is not a number of seconds" "show --from not a number" "$PW" show "$UNIT" --family zb-h1 --from soon
fi

run "$PW" export "$tmp/default-1f1b.json" --to chrome
ok "export chrome exits 0" status_is 0
ok "export chrome writes JSON" out_starts "{"
run "$PW" export "$tmp/default-1f1b.json" --to svg -o "$tmp/s.svg"
ok "export svg -o exits 0" status_is 0
ok "export svg writes nothing to stdout" out_empty
ok "export svg writes an SVG" sh -c '[ "$(head -c 4 "$1")" = "<svg" ]' sh "$tmp/s.svg"
run "$PW" export "$tmp/default-1f1b.json" --to svg
ok "export svg to stdout is the same" cmp -s "$tmp/out" "$tmp/s.svg"
run "$PW" export "$tmp/default-1f1b.json" --family zb-h1 --to chrome
ok "export --family builds the schedule" status_is 0

# Pictures' sizes: in range, for pictures only, and a height that fits.
run "$PW" export "$tmp/default-1f1b.json" --to svg --width 800 --height 700
ok "export svg --width --height exits 0" status_is 0
ok "the SVG is 800 by 700" out_has '^<svg .* width="800" height="700" viewBox="0 0 800 700">'
fails 2 "--width 100" "a width under 320" \
    "$PW" export "$tmp/default-1f1b.json" --to svg --width 100
ok "the width's range is named" err_has "320 to 16384 pixels"
fails 2 "--width" "a width not a whole number" \
    "$PW" export "$tmp/default-1f1b.json" --to svg --width 1e3
ok "export names no range of show's" \
    one_error "pipewright: export: --width '1e3' is not a whole number of at least 1"
fails 2 "--height 20000" "a height over 16384" \
    "$PW" export "$tmp/default-1f1b.json" --to svg --height 20000
fails 2 "--height 130" "a height too small for the rows" \
    "$PW" export "$tmp/default-1f1b.json" --to svg --height 130 -o "$tmp/small.svg"
ok "it says how high at least" err_has "8 lanes and 8 memory plots: at least 442"
ok "no SVG is left" [ ! -e "$tmp/small.svg" ]
fails 2 "chrome" "a size for the trace" \
    "$PW" export "$tmp/default-1f1b.json" --to chrome --width 800
if command -v rsvg-convert >/dev/null 2>&1; then
	run "$PW" export "$tmp/default-1f1b.json" --to png --width 640 -o "$tmp/s.png"
	ok "export png exits 0" status_is 0
	ok "export png writes a PNG" sh -c '[ "$(head -c 4 "$1" | tail -c 3)" = PNG ]' sh "$tmp/s.png"
	ok "640 pixels wide" sh -c '[ "$(od -An -tu1 -j16 -N4 "$1" | tr -s " ")" = " 0 0 2 128" ]' sh "$tmp/s.png"
else
	skip "export png" "rsvg-convert missing"
fi
mkdir "$tmp/nobin"
run env PATH="$tmp/nobin" "$PW" export "$tmp/default-1f1b.json" --to png -o "$tmp/none.png"
ok "png without rsvg-convert: exit 2" status_is 2
ok "png without rsvg-convert: one line naming librsvg2-bin" one_error "librsvg2-bin"
ok "png without rsvg-convert: no file" [ ! -e "$tmp/none.png" ]
# An rsvg-convert that says it succeeded and wrote nothing.
mkdir "$tmp/mutebin"
printf '#!/bin/sh\ncat >/dev/null\nexit 0\n' >"$tmp/mutebin/rsvg-convert"
chmod +x "$tmp/mutebin/rsvg-convert"
run env PATH="$tmp/mutebin:$PATH" "$PW" export "$tmp/default-1f1b.json" --to png -o "$tmp/mute.png"
ok "png from a mute rsvg-convert: exit 2" status_is 2
ok "png from a mute rsvg-convert: one line saying so" one_error "rsvg-convert wrote no PNG (nothing)"
ok "png from a mute rsvg-convert: no file" [ ! -e "$tmp/mute.png" ]
# One that fails saying why, and one killed by a signal: one line each,
# its words or its signal in it, nothing of its own on stderr.
mkdir "$tmp/failbin" "$tmp/killbin"
printf '#!/bin/sh\ncat >/dev/null\necho "Error reading SVG: bad" >&2\necho "more" >&2\nexit 1\n' >"$tmp/failbin/rsvg-convert"
printf '#!/bin/sh\ncat >/dev/null\nkill -SEGV $$\n' >"$tmp/killbin/rsvg-convert"
chmod +x "$tmp/failbin/rsvg-convert" "$tmp/killbin/rsvg-convert"
run env PATH="$tmp/failbin:$PATH" "$PW" export "$tmp/default-1f1b.json" --to png -o "$tmp/fail.png"
ok "png from a failing rsvg-convert: exit 2" status_is 2
ok "png from a failing rsvg-convert: one line with its first" \
    one_error "png: rsvg-convert failed (exit status 1): Error reading SVG: bad"
run env PATH="$tmp/killbin:$PATH" "$PW" export "$tmp/default-1f1b.json" --to png -o "$tmp/kill.png"
ok "png from a killed rsvg-convert: one line naming the signal" \
    one_error "png: rsvg-convert failed (killed by signal 11, "
ok "png from a killed rsvg-convert: no file" [ ! -e "$tmp/kill.png" ]
if command -v script >/dev/null 2>&1; then
	# stdout a terminal: script(1) gives the command one.
	script -qec "$PW export $tmp/default-1f1b.json --to png" /dev/null >"$tmp/tty.out" 2>&1
	ok "png to a terminal: refused, naming -o" grep -q "writes binary data, which a terminal cannot show: give -o FILE" "$tmp/tty.out"
	ok "png to a terminal: no PNG on it" lacks PNG "$tmp/tty.out"
	script -qec "$PW export $tmp/default-1f1b.json --to png -o /dev/stdout" /dev/null >"$tmp/tty.out" 2>&1
	ok "png to a terminal named as a file: refused too" grep -q "writes binary data, which a terminal cannot show: give -o FILE" "$tmp/tty.out"
	ok "... with no PNG on it" lacks PNG "$tmp/tty.out"
else
	skip "png to a terminal" "no script(1)"
	skip "png to a terminal named as a file" "no script(1)"
fi

# ------------------------------------------------------------ solve
run "$PW" solve --help
ok "solve --help exits 0" status_is 0
ok "solve --help starts with its usage" out_starts "usage: pipewright solve "
run "$PW" --help
ok "--help lists solve" grep -q "^  solve " "$tmp/out"
if [ -f "$UNIT" ]; then
	# Unit 4x8 without limits: ZB-H1 meets the bound 27 at once.
	run "$PW" solve "$UNIT" -o "$tmp/solved.json"
	ok "solve exits 0" status_is 0
	ok "solve prints the makespan" out_has '^makespan  *27 s$'
	ok "solve prints the objective" out_has '^objective  *makespan 27 s (optimal for this split and layout)$'
	ok "solve prints the lower bound" out_has '^lower bound  *27 s$'
	ok "solve prints the gap" out_has '^gap  *0\.00%$'
	ok "solve prints the start" out_has '^start  *zb-h1 at 27 s$'
	ok "solve prints the model" out_has '^model  *none built$'
	ok "solve says why it ended" out_has '^ended  *optimal for this split and layout (the same schedule on every run)$'
	ok "solve reports progress on stderr" err_has '^solve: .* incumbent '
	run "$PW" check "$tmp/solved.json"
	ok "the solved schedule checks" status_is 0

	run "$PW" solve "$UNIT" --from 1f1b -o "$tmp/solved-1f1b.json"
	ok "solve --from FAMILY exits 0" status_is 0
	ok "it starts from the family" out_has '^start  *1f1b at 33 s$'
	ok "and ends at the bound" out_has '^objective  *makespan 27 s (optimal for this split and layout)$'
	run "$PW" solve "$UNIT" --from "$tmp/unit-1f1b.json" -o /dev/null
	ok "solve --from FILE exits 0" status_is 0
	ok "it starts from the file's schedule" out_has '^start  *given at 33 s$'
	run "$PW" solve "$UNIT" --objective span --seed 3 -o /dev/null
	ok "solve --objective span exits 0" status_is 0
	ok "the span objective is ZB-H2's 24" out_has '^objective  *span 24 s (optimal for this split and layout)$'

	# A Lua problem's objective and must-precede pairs hold unless the
	# command line says otherwise.  W(1,1) before F(1,5) (1-based, on
	# device 1), which the unpinned optimum breaks.
	cat >"$tmp/free.lua" <<'EOF'
local unit = { f = 1, b = 1, w = 1, act = 1, hold = 0.5 }
return pw.problem{ devices = 4, microbatches = 8, objective = "span",
  stages = { unit, unit, unit, unit } }
EOF
	sed 's/^  stages/  precede = { { { "W", 1, 1 }, { "F", 1, 5 } } }, stages/' \
	    "$tmp/free.lua" >"$tmp/pinned.lua"
	cat >"$tmp/pincheck.lua" <<'EOF'
local w, f
for _, op in ipairs(pw.load(arg[1]).ops) do
  if op.kind == "W" and op.stage == 1 and op.mb == 1 then w = op.start end
  if op.kind == "F" and op.stage == 1 and op.mb == 5 then f = op.start end
end
print(w <= f and "held" or "broken")
EOF
	run "$PW" solve "$tmp/free.lua" -o "$tmp/free.json"
	ok "solve of a Lua problem exits 0" status_is 0
	ok "it takes the script's objective" out_has '^objective  *span 24 s'
	run "$PW" script --write-dir "$tmp" "$tmp/pincheck.lua" "$tmp/free.json"
	ok "unpinned, W(1,1) starts after F(1,5)" out_has '^broken$'
	run "$PW" solve "$tmp/pinned.lua" -o "$tmp/pinned.json"
	ok "solve of a pinned Lua problem exits 0" status_is 0
	run "$PW" script --write-dir "$tmp" "$tmp/pincheck.lua" "$tmp/pinned.json"
	ok "the script's pin holds in the solved schedule" out_has '^held$'
	fails 2 "pinned.lua" "plan of a problem with precede pairs" "$PW" plan "$tmp/pinned.lua" -I 100
	ok "which says why it takes none" err_has 'its precede pairs name ops of its own split, which plan changes (solve honours them)$'
	run "$PW" solve "$tmp/free.lua" --objective makespan -o /dev/null
	ok "--objective overrides the script's" out_has '^objective  *makespan 27 s'

	# A schedule file's pins are the solver's too, and the result keeps
	# them: the same pin, 0-based, added to the unpinned result, as the
	# start (--from) or as the problem.
	pin='{"before": {"kind": "W", "stage": 0, "mb": 0}, "after": {"kind": "F", "stage": 0, "mb": 4}}'
	{ sed '$d' "$tmp/free.json"; printf ',\n  "pins": [%s]\n}\n' "$pin"; } \
	    >"$tmp/free-pinned.json"
	run "$PW" solve "$tmp/free.lua" --from "$tmp/free-pinned.json" -I 2000 \
	    -o "$tmp/from-pinned.json"
	ok "solve --from a pinned file exits 0" status_is 0
	ok "its start is the file's orders with the pin's" out_has '^start  *given in the pins'"'"' order at [0-9.]* s$'
	fails 2 "free-pinned.json" "plan of a schedule file with pins" "$PW" plan "$tmp/free-pinned.json" -I 100
	ok "refused as a script's pairs are" err_has 'its precede pairs name ops of its own split'
	run "$PW" check "$tmp/free-pinned.json"
	ok "check of the file whose pin its times break exits 1" status_is 1
	ok "naming the pin and the starts that break it" out_has \
	    ': the pin W(0,0) before F(0,4) is broken: W(0,0) starts at [0-9.]* s, after F(0,4) at [0-9.]* s$'
	run "$PW" script --write-dir "$tmp" "$tmp/pincheck.lua" "$tmp/from-pinned.json"
	ok "the file's pin holds in the solved schedule" out_has '^held$'
	ok "the solved schedule carries the pin" \
	    grep -qxF "    $pin" "$tmp/from-pinned.json"
	run "$PW" check "$tmp/from-pinned.json"
	ok "the pinned result checks" status_is 0
	run "$PW" solve "$tmp/free-pinned.json" --from "$tmp/free-pinned.json" \
	    --objective span -I 2000 -o "$tmp/problem-pinned.json"
	ok "solve of a pinned schedule file exits 0" status_is 0
	run "$PW" script --write-dir "$tmp" "$tmp/pincheck.lua" "$tmp/problem-pinned.json"
	ok "its pin holds in the solved schedule" out_has '^held$'
	ok "and is carried" grep -qxF "    $pin" "$tmp/problem-pinned.json"
	run "$PW" check "$tmp/problem-pinned.json"
	ok "check finds its pin held" out_has ': valid ([0-9]* ops)$'
	ok "once, though the problem's file is also the start" \
	    [ "$(grep -c '"before"' "$tmp/problem-pinned.json")" -eq 1 ]
	# B and BW of a microbatch are one op: one pin, named both ways in
	# the problem's file and the start's (written twice before).
	bpin='{"before": {"kind": "B", "stage": 1, "mb": 3}, "after": {"kind": "F", "stage": 1, "mb": 5}}'
	{ sed '$d' "$tmp/free.json"; printf ',\n  "pins": [%s]\n}\n' "$bpin"; } \
	    >"$tmp/pin-b.json"
	{ sed '$d' "$tmp/free.json"; printf ',\n  "pins": [%s]\n}\n' \
	    "$(echo "$bpin" | sed 's/"kind": "B"/"kind": "BW"/')"; } \
	    >"$tmp/pin-bw.json"
	run "$PW" solve "$tmp/pin-b.json" --from "$tmp/pin-bw.json" -I 2000 \
	    -o "$tmp/pin-once.json"
	ok "a pin on B and on BW: solve exits 0" status_is 0
	ok "...and writes it once" \
	    [ "$(grep -c '"before"' "$tmp/pin-once.json")" -eq 1 ]
	# So does one file listing it twice, as B and as BW.
	{ sed '$d' "$tmp/free.json"; printf ',\n  "pins": [%s,\n%s]\n}\n' \
	    "$bpin" "$(echo "$bpin" | sed 's/"kind": "B"/"kind": "BW"/')"; } \
	    >"$tmp/pin-twice.json"
	run "$PW" solve "$tmp/pin-twice.json" -I 2000 -o "$tmp/pin-once.json"
	ok "a file with one pin twice: solve exits 0" status_is 0
	ok "...and writes it once" \
	    [ "$(grep -c '"before"' "$tmp/pin-once.json")" -eq 1 ]
	fails 2 "is the schedule's output too" "solve -o and --write-lp of one file" \
	    "$PW" solve "$tmp/pin-twice.json" -I 2000 -o "$tmp/one.json" --write-lp "$tmp/./one.json"
	ok "...which it names, writing neither" [ ! -e "$tmp/one.json" ]
	"$PW" solve "$tmp/pin-twice.json" -I 2000 --write-lp "$tmp/out.lp" \
	    >"$tmp/out.lp" 2>"$tmp/err"
	ok "so is stdout sent to the file --write-lp names" \
	    grep -q "is the schedule's output too" "$tmp/err"
	run "$PW" solve "$tmp/pin-twice.json" -I 2000 -o /dev/null \
	    --write-lp /dev/null
	ok "not /dev/null as both, which loses nothing" status_is 0
	sed '/^  "pins"/s/"kind": "W"/"kind": "OFFLOAD"/' \
	    "$tmp/free-pinned.json" >"$tmp/bad-pin.json"
	fails 2 "$tmp/bad-pin.json: pins[0].before.kind: must be a compute op's kind" \
	    "solve from a file with a bad pin" \
	    "$PW" solve "$tmp/free.lua" --from "$tmp/bad-pin.json"
	run "$PW" solve "$tmp/free.json" --objective span -I 2000 -o "$tmp/unpinned.json"
	ok "an unpinned result has no pins" lacks '"pins"' "$tmp/unpinned.json"

	# To stdout the schedule is the output and the report goes to stderr.
	run "$PW" solve "$UNIT"
	ok "solve to stdout exits 0" status_is 0
	ok "solve to stdout writes JSON" out_starts "{"
	ok "solve to stdout reports on stderr" err_has '^lower bound '

	# An interrupt stops the search and the best schedule so far is
	# written.  Sixteen uneven stages under a limit of eight activations
	# keep the windows busy for minutes (the search never ends by itself
	# before the interrupt).
	cat >"$tmp/long.lua" <<'EOF'
local stages = {}
for d = 0, 15 do
  local c = 1 + 0.04 * ((d * 7) % 5 - 2)
  stages[#stages + 1] = { f = c, b = c * (1 + 0.05 * (d % 4)),
    w = c * (0.5 + 0.1 * (d % 3)), act = 1, hold = 0.5 }
end
return pw.problem{ devices = 16, microbatches = 64, comm = 0.02,
  memory_limit = 8, stages = stages }
EOF
	for sig in INT TERM; do
		signal_when $sig 'grep -q " lns " "$tmp/bg.err"' \
		    "$PW" solve "$tmp/long.lua" --time-limit 600 -o "$tmp/long.json"
		ok "a solve stopped by SIG$sig exits 0" [ "$signalled" -eq 0 ]
		ok "...saying it was cancelled" grep -q '^objective  *makespan .* (cancelled)$' "$tmp/bg.out"
		ok "...and why it ended" grep -q '^ended  *cancelled (the best so far: another run may differ)$' "$tmp/bg.out"
		run "$PW" check "$tmp/long.json"
		ok "...and its schedule checks" status_is 0
		ok "...leaving no temporary file" no_tmp "$tmp" long.json
		rm "$tmp/long.json"
	done
	# Interrupted while the model asked for is written: the file is
	# still written whole, and no temporary file is left beside it.
	mkdir "$tmp/lp"
	signal_when INT 'grep -q " milp " "$tmp/bg.err"' "$PW" solve \
	    "$tmp/long.lua" --time-limit 600 --write-lp "$tmp/lp/long.lp" -o /dev/null
	ok "an interrupted solve with --write-lp exits 0" [ "$signalled" -eq 0 ]
	ok "...having written the model" grep -q '^/\* Objective function \*/' "$tmp/lp/long.lp"
	ok "...and nothing else" [ "$(ls "$tmp/lp")" = long.lp ]

	# With a link the problem could offload: --offload off proves 30.9 s
	# among the schedules that move nothing, and says so, while the
	# problem's own bound (26.3 s) and solve's default (26.8 s) are lower.
	run "$PW" solve "$TESTDATA/offload_or_not.json" --offload off \
	    --iteration-limit 3000 -o "$tmp/keep.json"
	ok "--offload off: optimal without offload, said so" out_has \
	    '^objective  *makespan 30.9 s (optimal for this split and layout, without offload)$'
	ok "--offload off: the bound is said to be without offload" out_has \
	    '^lower bound  *30.9 s (without offload)$'
	ok "--offload off: the problem's own bound stays below" out_has \
	    '^bounds  *makespan >= 26.3 s (head-body-tail), '
	ok "--offload off: and so does the end" out_has \
	    '^ended  *optimal for this split and layout, without offload (the same schedule on every run)$'
	run "$PW" solve "$TESTDATA/offload_or_not.json" --iteration-limit 3000 \
	    -o "$tmp/move.json"
	ok "offloading, solve finds 26.8 s" out_has '^objective  *makespan 26.8 s'
	run "$PW" plan "$TESTDATA/offload_or_not.json" --iteration-limit 3000
	ok "plan bounds its candidate that moves nothing as such" out_has \
	    '^2  *given  *1 chunk  *-  *no  *zb-auto  *30.9 s .* 30.9 s (crossing)  *0.00%$'
	# --offload on: a candidate of the design with the link that moves
	# nothing is bound as one too (28.1 s, memory, 66.5% before).
	run "$PW" plan "$TESTDATA/plan_on_moves_nothing.json" --offload on \
	    --iteration-limit 3000
	ok "plan --offload on bounds a candidate that moves nothing as such" \
	    out_has '^1  *given  *1 chunk  *-  *no  *zb-auto  *84 s .* 84 s (device)  *0.00%$'
	run "$PW" plan "$TESTDATA/plan_on_moves_nothing.json" --offload on \
	    --iteration-limit 3000 --json
	ok "its JSON: the design has the link" out_has '^      "offload": true,$'
	ok "... and its schedule moves nothing" out_has '^      "moves": false,$'

	# Ops of no duration may start together, and the big-M model may
	# then order them across devices in a cycle: the schedule is rebuilt
	# in the graph's order instead (exit 3, no schedule, before).
	run "$PW" solve "$TESTDATA/solve_zero_costs.json" \
	    --iteration-limit 3000 -o "$tmp/zero.json"
	ok "ops of no duration: solve exits 0" status_is 0
	ok "...and finds the optimum" out_has \
	    '^objective  *makespan 9 s (optimal for this split and layout)$'
	run "$PW" check "$tmp/zero.json"
	ok "...which checks" status_is 0
	run "$PW" plan "$TESTDATA/solve_zero_costs.json" --iteration-limit 3000
	ok "ops of no duration: plan exits 0" status_is 0
	# A backward a million times the others' length: lp_solve fails on
	# the model's arithmetic (ACCURACYERROR), which proves nothing, and
	# the search's schedule stands (exit 3 before).
	run "$PW" solve "$TESTDATA/solve_wide_costs.json" \
	    --iteration-limit 3000 -o "$tmp/wide.json"
	ok "costs a million apart: solve exits 0" status_is 0
	ok "...with the search's schedule" out_has \
	    '^objective  *makespan 4000038 s$'
	run "$PW" check "$tmp/wide.json"
	ok "...which checks" status_is 0

	# Limit 3: the families' 31 is optimal and the crossing bound
	# proves it, so no model is built and --write-lp writes nothing.
	sed 's/"limit": null/"limit": 3.0/' "$UNIT" >"$tmp/tight3.json"
	run "$PW" solve "$tmp/tight3.json" -o "$tmp/tight3-a.json" --write-lp "$tmp/tight3.lp"
	ok "solve at limit 3 exits 0" status_is 0
	ok "limit 3: makespan 31, proven" out_has '^objective  *makespan 31 s (optimal for this split and layout)$'
	ok "limit 3: by the crossing bound" out_has '^bounds  *makespan >= 31 s (crossing), '
	ok "limit 3: no model" out_has '^model  *none built$'
	ok "limit 3: no LP file" [ ! -e "$tmp/tight3.lp" ]
	ok "limit 3: and a note that says why" grep -qxF \
	    "pipewright: solve: --write-lp $tmp/tight3.lp: nothing written: the start meets the lower bound: no model was built" "$tmp/err"

	# Limit 2: the optimum 41, which the crossing bound proves too.
	sed 's/"limit": null/"limit": 2.0/' "$UNIT" >"$tmp/tight2.json"
	run "$PW" solve "$tmp/tight2.json" -o "$tmp/tight2-a.json"
	ok "solve at limit 2 exits 0" status_is 0
	ok "limit 2: makespan 41, proven" out_has '^objective  *makespan 41 s (optimal for this split and layout)$'
	ok "limit 2: by the crossing bound" out_has '^bounds  *makespan >= 41 s (crossing), '
	run "$PW" check "$tmp/tight2-a.json"
	ok "the tight schedule checks" status_is 0

	# Where the bound (26) is below the optimum (26.5), the whole model
	# proves it; the same seed twice gives the same file.
	cat >"$tmp/whole.lua" <<'EOF'
local st = { f = 1, b = 1.5, w = 0.5, act = 1, hold = 0.5 }
return pw.problem{ devices = 3, microbatches = 6, comm = 0.5,
  memory_limit = 3, stages = { st, st, st } }
EOF
	run "$PW" solve "$tmp/whole.lua" -o "$tmp/whole-a.json" --write-lp "$tmp/whole.lp"
	ok "solve of a 3x6 exits 0" status_is 0
	ok "3x6: makespan 26.5, proven" out_has '^objective  *makespan 26.5 s (optimal for this split and layout)$'
	ok "3x6: the bound below it" out_has '^bounds  *makespan >= 26 s '
	ok "3x6: the whole model's size" out_has '^model  *.*binaries.*(whole)$'
	ok "--write-lp writes the model in LP format" grep -q '^/\* Objective function \*/' "$tmp/whole.lp"
	ok "with no note of a file not written" lacks 'nothing written' "$tmp/err"
	run "$PW" solve "$tmp/whole.lua" -o "$tmp/whole-b.json"
	ok "the same seed gives the same schedule" cmp -s "$tmp/whole-a.json" "$tmp/whole-b.json"
	run "$PW" check "$tmp/whole-a.json"
	ok "the 3x6 schedule checks" status_is 0

	# An iteration limit ends the search at the same point on every run,
	# also one beside a busy loop (a time limit would not): 7x16 under
	# a limit of 3 reaches 92 within 5,000 simplex iterations.
	cat >"$tmp/seven.lua" <<'EOF'
local unit = { f = 1, b = 1, w = 1, act = 1, hold = 0.5 }
return pw.problem{ devices = 7, microbatches = 16, memory_limit = 3,
  stages = { unit, unit, unit, unit, unit, unit, unit } }
EOF
	run "$PW" solve "$tmp/seven.lua" --iteration-limit 5000 -o "$tmp/seven-a.json"
	ok "solve --iteration-limit exits 0" status_is 0
	ok "...reaching 92" out_has '^objective  *makespan 92 s$'
	ok "...ending by its limit" out_has '^ended  *iteration limit (the same schedule on every run)$'
	( while :; do :; done ) &
	busy=$!
	run "$PW" solve "$tmp/seven.lua" -I 5000 -o "$tmp/seven-b.json"
	kill $busy
	ok "the same iteration limit gives the same file" cmp -s "$tmp/seven-a.json" "$tmp/seven-b.json"

	fails 2 "--objective" "solve with a bad objective" "$PW" solve "$UNIT" --objective fast
	fails 2 "--offload" "solve with a bad offload mode" "$PW" solve "$UNIT" --offload maybe
	fails 2 "--time-limit" "solve with a bad time limit" "$PW" solve "$UNIT" --time-limit -1
	fails 2 "--seed" "solve with a bad seed" "$PW" solve "$UNIT" --seed x
	fails 2 "--seed '9223372036854775808' is not a whole number from 0 to 9223372036854775807" \
	    "solve with a seed past Lua's integers" "$PW" solve "$UNIT" --seed 9223372036854775808
	run "$PW" solve "$UNIT" --seed 9223372036854775807 -I 10 -o /dev/null
	ok "solve takes the largest seed" status_is 0
	fails 2 "--iteration-limit '0' is not a whole number from 1" \
	    "solve with an iteration limit of 0" "$PW" solve "$UNIT" --iteration-limit 0
	fails 2 "nosuch" "solve from nothing known" "$PW" solve "$UNIT" --from nosuch
	# (after the search's first progress line)
	run "$PW" solve "$UNIT" --from zb-v -I 10
	ok "solve from a family that does not apply: exit 2" status_is 2
	ok "it names --from, not the solver's field" err_has "^pipewright: solve: --from zb-v: zb-v does not apply: "
	fails 2 "usage: pipewright solve" "solve without a problem" "$PW" solve
	fails 2 "another problem (8 devices, the one to solve 4)" \
	    "solve from another problem's schedule, naming what differs" \
	    "$PW" solve "$UNIT" --from "$tmp/default-1f1b.json"
	fails 2 "$tmp/nodir/s.json" "solve into a missing directory" \
	    "$PW" solve "$UNIT" -o "$tmp/nodir/s.json"
	ok "solve leaves no directory" [ ! -e "$tmp/nodir" ]
else
	skip "solve on the unit problem" "no $UNIT"
fi

# Two chunks of act 1 per device under a limit of 1.5 and no link: one
# microbatch cannot pass.
sed -e 's/"limit": 100.0/"limit": 1.5/g' -e 's/"static": 1.0/"static": 0.0/g' \
    "$tmp/loop.json" >"$tmp/loop-tight.json"
fails 2 "device 0 needs 2 B" "solve an infeasible problem" "$PW" solve "$tmp/loop-tight.json"
ok "the explanation names the limit" err_has 'its limit is 1.5 B'

# ------------------------------------------------------------ critical path, slack
# Two devices, two microbatches, f = 1, b = 2, w = 1, comm 0.5.  1F1B by
# hand: F(0,0) 0-1; F(1,0) waits for it and the hop, 1.5-2.5; device 1
# runs BW(1,0) 2.5-5.5, F(1,1) 5.5-6.5 (F(0,1) arrived at 2.5), BW(1,1)
# 6.5-9.5; device 0 runs BW(0,0) 6-9 after BW(1,0) and the hop, BW(0,1)
# after BW(1,1) and the hop, 10-13.  Durations 1+1+3+1+3+3 = 12, hops 1.
cat >"$tmp/two.json" <<'EOF'
{
  "format": "pipewright.problem.v1",
  "name": "two",
  "devices": 2,
  "microbatches": 2,
  "comm": 0.5,
  "stages": [
    {"device": 0, "f": 1.0, "b": 2.0, "w": 1.0, "act": 1.0, "hold": 0.5, "offload": 0.0},
    {"device": 1, "f": 1.0, "b": 2.0, "w": 1.0, "act": 1.0, "hold": 0.5, "offload": 0.0}
  ],
  "memory": [
    {"static": 0.0, "limit": null},
    {"static": 0.0, "limit": null}
  ]
}
EOF
cat >"$tmp/two.critical" <<'EOF'
op       on        start  end    bound by
F(0,0)   device 0  0 s    1 s    starts at 0
F(1,0)   device 1  1.5 s  2.5 s  dependency on F(0,0) + 500 ms
BW(1,0)  device 1  2.5 s  5.5 s  device order after F(1,0)
F(1,1)   device 1  5.5 s  6.5 s  device order after BW(1,0)
BW(1,1)  device 1  6.5 s  9.5 s  device order after F(1,1)
BW(0,1)  device 0  10 s   13 s   dependency on BW(1,1) + 500 ms
total    durations 12 s + delays 1 s = makespan 13 s
EOF
run "$PW" schedule "$tmp/two.json" --family 1f1b -o "$tmp/two-1f1b.json"
ok "two: the 1f1b schedule exits 0" status_is 0
run "$PW" eval "$tmp/two-1f1b.json" --critical
ok "eval --critical exits 0" status_is 0
ok "eval --critical: the path worked by hand" cmp -s "$tmp/out" "$tmp/two.critical"
ok "eval --critical is quiet on stderr" err_empty
run "$PW" eval "$tmp/two.json" -f 1f1b -c
ok "eval -c -f 1f1b: the same path from the problem" cmp -s "$tmp/out" "$tmp/two.critical"

# As JSON: the sums, then each op and the edge that binds it.
tr -d ' \n' >"$tmp/two.critical.json" <<'EOF'
{"makespan": 13.0, "durations": 12.0, "delays": 1.0, "path": [
{"op": "F(0,0)", "kind": "F", "stage": 0, "mb": 0, "device": 0, "start": 0.0, "end": 1.0, "bound_by": null},
{"op": "F(1,0)", "kind": "F", "stage": 1, "mb": 0, "device": 1, "start": 1.5, "end": 2.5,
 "bound_by": {"edge": "dependency", "op": "F(0,0)", "from": "end", "delay": 0.5}},
{"op": "BW(1,0)", "kind": "BW", "stage": 1, "mb": 0, "device": 1, "start": 2.5, "end": 5.5,
 "bound_by": {"edge": "device", "op": "F(1,0)", "from": "end", "delay": 0.0}},
{"op": "F(1,1)", "kind": "F", "stage": 1, "mb": 1, "device": 1, "start": 5.5, "end": 6.5,
 "bound_by": {"edge": "device", "op": "BW(1,0)", "from": "end", "delay": 0.0}},
{"op": "BW(1,1)", "kind": "BW", "stage": 1, "mb": 1, "device": 1, "start": 6.5, "end": 9.5,
 "bound_by": {"edge": "device", "op": "F(1,1)", "from": "end", "delay": 0.0}},
{"op": "BW(0,1)", "kind": "BW", "stage": 0, "mb": 1, "device": 0, "start": 10.0, "end": 13.0,
 "bound_by": {"edge": "dependency", "op": "BW(1,1)", "from": "end", "delay": 0.5}}]}
EOF
run "$PW" eval "$tmp/two-1f1b.json" --critical --json
ok "eval --critical --json exits 0" status_is 0
tr -d ' \n' <"$tmp/out" >"$tmp/out.flat"
ok "eval --critical --json: the path worked by hand" cmp -s "$tmp/out.flat" "$tmp/two.critical.json"

# Slack by hand, the makespan kept: BW(0,0) may end as late as BW(0,1)'s
# start, 10, so start at 7: 1; F(0,1) must end by F(1,1)'s start less the
# hop, 5, so start at 4: 3; every other op is on the critical path.
tr -d ' \n' >"$tmp/two.ops.json" <<'EOF'
"ops": [
{"op": "F(0,0)", "kind": "F", "stage": 0, "mb": 0, "device": 0, "start": 0.0, "end": 1.0, "slack": 0.0},
{"op": "F(0,1)", "kind": "F", "stage": 0, "mb": 1, "device": 0, "start": 1.0, "end": 2.0, "slack": 3.0},
{"op": "BW(0,0)", "kind": "BW", "stage": 0, "mb": 0, "device": 0, "start": 6.0, "end": 9.0, "slack": 1.0},
{"op": "BW(0,1)", "kind": "BW", "stage": 0, "mb": 1, "device": 0, "start": 10.0, "end": 13.0, "slack": 0.0},
{"op": "F(1,0)", "kind": "F", "stage": 1, "mb": 0, "device": 1, "start": 1.5, "end": 2.5, "slack": 0.0},
{"op": "BW(1,0)", "kind": "BW", "stage": 1, "mb": 0, "device": 1, "start": 2.5, "end": 5.5, "slack": 0.0},
{"op": "F(1,1)", "kind": "F", "stage": 1, "mb": 1, "device": 1, "start": 5.5, "end": 6.5, "slack": 0.0},
{"op": "BW(1,1)", "kind": "BW", "stage": 1, "mb": 1, "device": 1, "start": 6.5, "end": 9.5, "slack": 0.0}]}
EOF
run "$PW" eval "$tmp/two-1f1b.json" --json
ok "eval --json with the ops exits 0" status_is 0
tr -d ' \n' <"$tmp/out" | sed 's/^.*"devices":\[[^]]*\],//' >"$tmp/out.flat"
ok "eval --json: every op with its slack, after the devices" cmp -s "$tmp/out.flat" "$tmp/two.ops.json"
ok "eval --json: the metrics still come first" out_starts '{
  "makespan": 13.0,
  "bubble_rate": '

if [ -f "$UNIT" ]; then
	# 1F1B on p = 4, m = 8, f = b = w = 1: the forwards down to the last
	# stage (3 s), its 8 forwards and fused backwards (24 s), the fused
	# backwards back up (6 s).
	run "$PW" eval "$tmp/unit-1f1b.json" --critical
	ok "unit 1f1b: the path has 4 + 15 + 3 ops" [ "$(grep -c '^[FB]' "$tmp/out")" -eq 22 ]
	ok "unit 1f1b: 15 follow device 3's order" \
	    [ "$(grep -c 'device 3 .*device order after' "$tmp/out")" -eq 15 ]
	ok "unit 1f1b: the total" out_has '^total    durations 33 s + delays 0 s = makespan 33 s$'
else
	skip "eval --critical on the unit problem" "no $UNIT"
fi
fails 2 "--critical" "check takes no --critical" "$PW" check --critical "$tmp/two-1f1b.json"

# ------------------------------------------------------------ model options
# A small model on two devices: every command that takes PROBLEM takes
# the model options instead.
MODEL="--model gpt3-1.3b --hardware H100-SXM --devices 2 --microbatches 4"
err_is() { [ "$(cat "$tmp/err")" = "$1" ]; }

run "$PW" problem $MODEL -o "$tmp/model.json"
ok "problem --model exits 0" status_is 0
ok "its problem has 2 devices" grep -q '^  "devices": 2,$' "$tmp/model.json"
ok "and 4 microbatches" grep -q '^  "microbatches": 4,$' "$tmp/model.json"
ok "and keeps its model" grep -q '"name": "gpt3-1.3b"' "$tmp/model.json"
ok "without tp or dp, not given (written only when set)" \
    lacks '"tp"\|"dp"' "$tmp/model.json"
run "$PW" problem $MODEL --tp 2 -o "$tmp/model-tp.json"
ok "with --tp, its tp" grep -q '"tp": 2,' "$tmp/model-tp.json"
run "$PW" schedule --family 1f1b $MODEL -o "$tmp/model-1f1b.json"
ok "schedule --model exits 0" status_is 0
ok "schedule --model: 1f1b's makespan" out_has '^makespan      97\.83 ms$'
run "$PW" schedule --family 1f1b "$tmp/model.json" -o "$tmp/file-1f1b.json"
ok "the same schedule as from its problem file" cmp -s "$tmp/model-1f1b.json" "$tmp/file-1f1b.json"
run "$PW" compare $MODEL
ok "compare --model exits 0" status_is 0
ok "compare --model names the problem" out_has '^gpt3-1\.3b-2xH100-SXM: 2 devices, 2 stages, 4 microbatches$'
ok "compare --model: 1f1b's row" out_has '^1f1b  *97\.83 ms  *0\.1795  *23\.2% '
for cmd in eval show; do
	run "$PW" "$cmd" --family zb-h1 $MODEL
	ok "$cmd --family with --model exits 0" status_is 0
done
run "$PW" export --family zb-h1 $MODEL --to chrome -o "$tmp/model.trace"
ok "export --family with --model exits 0" status_is 0
run "$PW" schedule --family 1f1b $MODEL --seq 1024 --micro-batch 2 -o /dev/null
ok "--seq and --micro-batch change the costs" out_has '^makespan      91\.57 ms$'
run "$PW" problem $MODEL --memory-limit 60GiB
ok "--memory-limit 60GiB is every device's limit" out_has '"limit": 64424509440\.0}'
run "$PW" problem $MODEL --memory-limit none
ok "--memory-limit none is no limit" out_has '"limit": null}'
run "$PW" problem $MODEL --memory-limit 60GiB --reserve 5%
ok "--reserve 5% is kept in the origin" out_has '"reserve_fraction": 0\.05'
run "$PW" problem $MODEL --reserve 4GiB
ok "--reserve 4GiB is kept in the origin" out_has '"reserve_bytes": 4294967296'
run "$PW" problem $MODEL --chunks 2 --layers-per-stage 6,6,6,6
ok "--chunks 2 gives four stages" [ "$(grep -c '"device": [01], "f"' "$tmp/out")" -eq 4 ]
ok "and --layers-per-stage is kept" out_has '"layers_per_stage": \[6, 6, 6, 6\]'
run "$PW" problem $MODEL --placement v
ok "--placement v puts stages 0 and 3 on device 0" \
    [ "$(grep -c '"device": 0, "f"' "$tmp/out")" -eq 2 ]
cp "$tmp/out" "$tmp/v.out"
run "$PW" problem $MODEL --placement V
ok "--placement V as plan's table writes it: the same problem" cmp -s "$tmp/out" "$tmp/v.out"
run "$PW" problem $MODEL --memory-limit 60GiB --reserve 5.5%
ok "--reserve 5.5% is a share" out_has '"reserve_fraction": 0\.055'
run "$PW" problem $MODEL --recompute full
ok "--recompute full is the model's" out_has '"recompute": "full"'
for word in selective Selective pipeoffload; do
	run "$PW" problem $MODEL --recompute $word
	ok "--recompute $word is pipeoffload" out_has '"recompute": "pipeoffload"'
done
run "$PW" problem $MODEL --tp 2 --dp 4
ok "--tp is kept" out_has '"tp": 2'
ok "--dp is kept" out_has '"dp": 4'
run "$PW" problem $MODEL
ok "without --offload there is no link" lacks '"link"' "$tmp/out"
run "$PW" problem $MODEL --offload
ok "--offload gives the PCIe link" out_has '"link"'

# --model FILE.lua: a script returning a model.
cat >"$tmp/tiny.lua" <<'LUA'
return pw.model{ name = "tiny", layers = 4, hidden = 1024, heads = 8, seq = 1024, vocab = 32000 }
LUA
run "$PW" problem --model "$tmp/tiny.lua" --hardware H100-SXM --devices 2 --microbatches 4
ok "problem --model FILE.lua exits 0" status_is 0
ok "its problem is the script's model" out_has '^  "name": "tiny-2xH100-SXM",$'
echo 'return { layers = 4 }' >"$tmp/nohidden.lua"
fails 2 "$tmp/nohidden.lua" "a model script missing a field" "$PW" problem --model "$tmp/nohidden.lua" --hardware H100-SXM --devices 2 --microbatches 4
ok "it names the field" err_has "hidden"

fails 2 "examples" "--model with a problem file" "$PW" compare --model gpt3-1.3b "$UNIT"
run "$PW" compare --model gpt3-1.3b "$UNIT"
ok "it names both" err_is "pipewright: compare: --model gpt3-1.3b and the file '$UNIT' both give the problem (use one)"
fails 2 "--microbatches M" "--model without the rest" "$PW" compare --model gpt3-1.3b --devices 2
ok "it names what is missing" err_is "pipewright: compare: --model gpt3-1.3b also needs --hardware NAME, --microbatches M"
fails 2 "--devices" "a model option without --model" "$PW" schedule --family 1f1b --devices 2
ok "it says so" err_is "pipewright: schedule: --devices needs --model NAME|FILE.lua (try 'pipewright schedule --help')"
fails 2 "nosuch" "an unknown model" "$PW" compare --model nosuch --hardware H100-SXM --devices 2 --microbatches 4
fails 2 "nosuch" "an unknown hardware" "$PW" compare --model gpt3-1.3b --hardware nosuch --devices 2 --microbatches 4
fails 2 "$tmp/none.lua" "a missing model script" "$PW" compare --model "$tmp/none.lua" --hardware H100-SXM --devices 2 --microbatches 4
fails 2 "--family" "eval --model without --family" "$PW" eval $MODEL
ok "it says so" err_is "pipewright: eval: --model needs --family NAME (a model's problem has no schedule until a family builds one)"
# Each option's bad value, named with it in one line.
while IFS='|' read -r opt value line; do
	# Each option once: the model's own value of it goes.
	fails 2 "$opt" "$opt $value" "$PW" compare $(echo "$MODEL" |
	    sed "s/$opt [^ ]*//") "$opt" "$value"
	ok "$opt $value: the message" err_is "pipewright: compare: $opt '$value' $line"
done <<'BAD'
--devices|0|is not a whole number from 1 to 65536
--microbatches|x|is not a whole number from 1 to 1048576
--seq|-1|is not a whole number from 1 to 1048576
--micro-batch|1.5|is not a whole number from 1 to 1048576
--memory-limit|60GB?|is not a size of at least a byte (60GiB, 8e10) or none
--memory-limit|0|is not a size of at least a byte (60GiB, 8e10) or none
--reserve|100%|is not a size (4GiB) or a share of the limit from 0% to below 100% (5%)
--reserve|-1GiB|is not a size (4GiB) or a share of the limit from 0% to below 100% (5%)
--tp|0|is not a whole number from 1 to 65536
--dp|two|is not a whole number from 1 to 1048576
--chunks|0|is not a whole number from 1 to 1024
--placement|w|is not loop or v
--recompute|some|is not none, selective, pipeoffload or full
--reserve|0x5%|is not a size (4GiB) or a share of the limit from 0% to below 100% (5%)
--reserve|+5%|is not a size (4GiB) or a share of the limit from 0% to below 100% (5%)
--reserve|5b%|is not a size (4GiB) or a share of the limit from 0% to below 100% (5%)
--layers-per-stage|12,x|is not a list of whole numbers from 1 to 24 (4,4,5,3)
--layers-per-stage|12|gives 1 stage, the split has 2 (devices x chunks)
--layers-per-stage|,,|is not a list of whole numbers from 1 to 24 (4,4,5,3)
--memory-limit|0.5B|is not a size of at least a byte (60GiB, 8e10) or none
--layers-per-stage|12,13|adds up to 25 layers, the model has 24
BAD
run "$PW" compare $MODEL --memory-limit NONE
ok "--memory-limit none in any case" status_is 0
# A second value would silently replace the first (a typo'd model name
# would go unnoticed).
fails 2 "--model" "an option given twice" "$PW" compare --model nosuch $MODEL
ok "it says so" err_is "pipewright: compare: --model is given twice"
fails 2 "--t" "an ambiguous abbreviation" "$PW" plan $MODEL --t 1
ok "it names what it could be" err_is "pipewright: plan: option '--t' is ambiguous: --time-limit, --top, --tp (try 'pipewright plan --help')"
fails 2 "reserve" "compare: a reserve of the whole limit" "$PW" compare $MODEL --memory-limit 4GiB --reserve 4GiB
ok "it says what the reserve leaves, not a negative room" err_is "pipewright: compare: gpt3-1.3b on 2 H100-SXM: split: the reserve (4 GiB) leaves nothing of the limit of 4 GiB"
run "$PW" problem $MODEL --tp 2 --reserve 5% -o "$tmp/model.lua"
ok "problem -o FILE.lua exits 0" status_is 0
ok "and writes a problem script" grep -q '^return pw\.problem{$' "$tmp/model.lua"
# The same problem, its origin too: the limit the options left to the
# hardware is left to it in the script, so that an edit of the
# hardware's memory moves it.
run "$PW" problem "$tmp/model.lua"
cp "$tmp/out" "$tmp/model-from-lua.json"
run "$PW" problem $MODEL --tp 2 --reserve 5%
ok "which reads back as the same problem" cmp -s "$tmp/out" "$tmp/model-from-lua.json"
ok "stating no limit of its own" lacks 'memory_limit' "$tmp/model.lua"
sed 's/^\(\t\tmemory = \)[0-9]*,$/\1100000000000,/' "$tmp/model.lua" >"$tmp/model-more.lua"
run "$PW" problem "$tmp/model-more.lua"
ok "a script whose hardware has 100 GB: its limit less the 5% reserve" \
    out_has '"limit": 95000000000\.0}'
run "$PW" problem $MODEL --memory-limit 60GiB -o "$tmp/model60.lua"
ok "a limit of its own is stated" \
    grep -q '^	memory_limit = 64424509440,$' "$tmp/model60.lua"
# No limit stays none, and the model with it (families split it again).
run "$PW" problem $MODEL --memory-limit none -o "$tmp/nolimit.lua"
run "$PW" problem "$tmp/nolimit.lua"
cp "$tmp/out" "$tmp/nolimit-from-lua.json"
run "$PW" problem $MODEL --memory-limit none
ok "a script without a limit reads back whole, its origin kept" cmp -s "$tmp/out" "$tmp/nolimit-from-lua.json"
fails 2 "does not fit" "a limit below one microbatch" "$PW" compare $MODEL --memory-limit 11GiB
ok "it names the device and its sizes, the model once" err_is "pipewright: compare: gpt3-1.3b on 2 H100-SXM does not fit: device 0 needs 12.13 GiB for one microbatch (static 10.53 GiB + stage 0's activation 1.594 GiB), above its 11 GiB (try 'pipewright plan', which also searches other splits, recomputation and offload)"
fails 2 "does not fit" "a reserve that leaves too little" "$PW" compare $MODEL --memory-limit 12GiB --reserve 10%
ok "it says the reserve counts" err_has "above its 10\.8 GiB (its limit less the reserve)"
fails 2 "--offload" "the flag --offload with a value" "$PW" compare $MODEL --offload=on
ok "it says the flag takes none" err_is "pipewright: compare: option '--offload' takes no value (try 'pipewright compare --help')"
fails 2 "--offload" "solve's --offload needs a value" "$PW" solve $MODEL --offload
run "$PW" solve $MODEL --offload off --iteration-limit 20 -o "$tmp/model-solved.json"
ok "solve --model exits 0" status_is 0
ok "solve --model --offload off: no link" lacks '"link"' "$tmp/model-solved.json"
fails 2 "terminal" "design --model without a terminal: the problem is built, then" \
    "$PW" design $MODEL </dev/null
fails 2 "--hardware NAME" "design --model without the rest" "$PW" design --model gpt3-1.3b --devices 2 --microbatches 4
run "$PW" design --help
ok "design --help lists the model options" out_has '^  --model NAME|FILE\.lua  a model preset'
run "$PW" compare --help
ok "compare --help lists the model options" out_has '^  --model NAME|FILE\.lua  a model preset'
ok "compare --help lists the model presets" out_has '^  llama3-8b  '
ok "compare --help lists the hardware" out_has '^  H100-SXM  '
run "$PW" solve --help
ok "solve --help says --offload decides the link" out_has '^  with --model, --offload auto and on give'

# An imbalanced problem: the last stage's forward twice the others'.
sed '/"device": 3/s/"f": 1\.0/"f": 2.0/' "$UNIT" >"$tmp/heavy.json"
run "$PW" compare "$tmp/heavy.json"
ok "compare warns of the heavy stage" \
    out_has "^warning: device 3's work (f + b + w of its stages = 4 s) is 23% above the mean of the 4 devices';\$"
ok "and says how to rebalance given stages" out_has '^    pipewright plan --model NAME --hardware NAME --devices P --microbatches M$'
run "$PW" compare "$UNIT"
ok "an even problem has no warning" lacks '^warning:' "$tmp/out"
run "$PW" compare $MODEL --layers-per-stage 20,4
ok "an uneven split warns" out_has "^warning: device 0's work (f + b + w of its stages = 29.18 ms) is 54% above the bottleneck of the\$"
ok "against the best split of its layout" out_has '^    best split on this layout (18.97 ms); to rebalance the split, run:$'
ok "and names plan with the model options, the split left out" \
    out_has '^    pipewright plan --model gpt3-1\.3b --hardware H100-SXM --devices 2 --microbatches 4$'

# ------------------------------------------------------------ plan
PLAN="plan $MODEL --iteration-limit 20"
run "$PW" $PLAN --top 3 -o "$tmp/plan.json"
ok "plan exits 0" status_is 0
ok "plan reports progress on stderr" err_has '^plan: [0-9]* candidates\? ([0-9]* builds\?[^)]*), best '
ok "plan names what it planned" out_has '^gpt3-1\.3b on 2 H100-SXM: the 3 best of 98 candidates by step time$'
ok "plan prints the table's header" \
    out_has '^#  *split  *layout  *recompute  *offload  *schedule  *step time  *bubble  *idle  *peak / limit  *bound  *gap$'
# At an iteration limit the answer is the same on every run: the rows
# exactly.
cat >"$tmp/plan.rows" <<'ROWS'
1  3,3,4,3,3,3,3,2  loop x4  selective  no       solve     77.38 ms   0.0002  2.9%  14.54 GiB / 79.65 GiB (d0)  75.92 ms (head-body-tail)  1.89%
2  6,6,7,5          loop x2  selective  no       solve     77.86 ms   0.0000  3.5%  14.8 GiB / 79.65 GiB (d0)   77.38 ms (head-body-tail)  0.62%
3  6,7,6,5          V        selective  no       solve     78.82 ms   0.0000  4.6%  13.97 GiB / 79.65 GiB (d0)  78.82 ms (head-body-tail)  0.00%
ROWS
grep '^[1-9] ' "$tmp/out" >"$tmp/plan.got"
ok "plan's rows at an iteration limit, exactly" cmp -s "$tmp/plan.rows" "$tmp/plan.got"
ok "plan defines the bubble and idle columns under the table" \
    out_has "^bubble: (the longest device span - the busiest device's work) / that span, as$"
ok "each with its split, bound (named) and gap" \
    out_has '^1  [0-9,]*  .*  [0-9.]* ms ([a-z-]*)  *[0-9.]*%$'
ok "plan says why it ended" out_has '^ended  *iteration limit (the same answer on every run)$'
ok "plan writes the best schedule" status_is 0
run "$PW" check "$tmp/plan.json"
ok "the best schedule is valid" status_is 0
ok "no temporary file is left beside it" no_tmp "$tmp" plan.json
ok "its problem keeps the split" grep -q '"layers_per_stage": \[' "$tmp/plan.json"
if [ -w /dev/full ]; then
	run "$PW" $PLAN --top 3 -o /dev/full
	ok "plan -o a full disk: exit 2" status_is 2
	ok "and the error names the file" err_has '^pipewright: /dev/full: write failed'
	ok "the ranking is still printed" out_has '^3  '
else
	skip "plan -o a full disk" "/dev/full is not writable"
fi
run "$PW" $PLAN --top 3 -o "$tmp/plan2.json"
ok "plan with an iteration limit is deterministic" cmp -s "$tmp/plan.json" "$tmp/plan2.json"
cp "$tmp/plan.json" "$tmp/plan-kept.json"
fails 2 "--top" "plan --top 0" "$PW" $PLAN --top 0 -o "$tmp/plan.json"
fails 2 "--top" "plan --top 1001" "$PW" $PLAN --top 1001
ok "--top's range is pw.plan's" err_is "pipewright: plan: --top '1001' is not a whole number from 1 to 1000"
ok "a failed plan leaves -o as it was" cmp -s "$tmp/plan.json" "$tmp/plan-kept.json"
fails 2 "$tmp/nodir/p.json" "plan -o in a missing directory" "$PW" $PLAN -o "$tmp/nodir/p.json"
ok "it fails before the search" lacks '^plan: ' "$tmp/err"
fails 2 "Is a directory" "plan -o a directory" "$PW" $PLAN -o "$tmp"
ok "it fails before the search" lacks '^plan: ' "$tmp/err"
fails 2 "--output" "plan -o an empty name" "$PW" $PLAN -o ''
ok "it says the name is empty" err_is "pipewright: plan: --output needs a file name, not an empty one"
fails 2 "--problem" "a file option given the next option" "$PW" eval "$tmp/x.csv" --problem --model gpt3-1.3b
ok "it names both, and how to name such a file" err_is "pipewright: eval: --problem needs a file name before --model (a file of that name: ./--model)"
fails 2 "--output" "-o given the next short option" "$PW" schedule "$UNIT" --family 1f1b -o -f
ok "no file -f is written" [ ! -e -f ]
ok "it names the option taken" err_is "pipewright: schedule: --output needs a file name before -f (a file of that name: ./-f)"
# solve has no -f: a file's name that looks like an option is refused all
# the same (a file -f was written).
fails 2 "--output" "-o given another command's option" "$PW" solve "$UNIT" -o -f
ok "no file -f is written" [ ! -e -f ]
ok "it says how to name such a file" err_is "pipewright: solve: --output needs a file name before -f (a file of that name: ./-f)"
fails 2 "default.lua" "eval of a Lua script where a schedule file is read" "$PW" eval "$EXAMPLES/default.lua"
ok "it says what it is and what is read" err_is "pipewright: $EXAMPLES/default.lua: a Lua script, where a JSON file is read (a schedule file)"
# A schedule written as JSON under a name every reader takes for a script
# or a CSV could not be read back: refused before the work, nothing left.
fails 2 "s.lua" "schedule -o a .lua name" "$PW" schedule "$UNIT" --family 1f1b -o "$tmp/s.lua"
ok "it says why and what to name it" err_is "pipewright: $tmp/s.lua: a JSON file with this name would be read back as a Lua script: name it .json"
ok "no s.lua is written" [ ! -e "$tmp/s.lua" ]
fails 2 "s.CSV" "solve -o a .CSV name, before solving" "$PW" solve "$UNIT" --iteration-limit 1 -o "$tmp/s.CSV"
ok "it says it is read as a PyTorch CSV" err_is "pipewright: $tmp/s.CSV: a JSON file with this name would be read back as a PyTorch schedule CSV: name it .json"
ok "nothing solved: no report" out_empty
ok "no s.CSV is written" [ ! -e "$tmp/s.CSV" ]
fails 2 "p.csv" "problem -o a .csv name" "$PW" problem "$UNIT" -o "$tmp/p.csv"
ok "no p.csv is written" [ ! -e "$tmp/p.csv" ]
fails 2 "--from" "a value option given the next option" "$PW" solve "$UNIT" --from --iteration-limit 5
ok "it says so" err_is "pipewright: solve: --from needs a value before --iteration-limit"
run "$PW" schedule "$UNIT" --family 1f1b --output=--model-out.json
ok "--output=--x names a file --x: no option of that name" status_is 0
rm -f -- --model-out.json
fails 2 "--from" "show --from an empty time" "$PW" show "$UNIT" --family 1f1b --from ''
ok "it is a time there, not a file" err_has "^pipewright: show: --from '' is not"
fails 2 "Is a directory" "solve --write-lp a directory, before the search" "$PW" solve $MODEL --iteration-limit 20 --write-lp "$tmp"
fails 2 "--objective" "plan --objective bad" "$PW" $PLAN --objective fast
fails 2 "--offload" "plan --offload bad" "$PW" $PLAN --offload maybe
fails 2 "--time-limit" "plan --time-limit 0" "$PW" $PLAN --time-limit 0
# 1 ns ends before the first design: no clock is that fast.
fails 2 "time limit" "plan --time-limit 1e-9" "$PW" $PLAN --time-limit 1e-9
ok "it gives the limit in units" err_is "pipewright: plan: gpt3-1.3b on 2 H100-SXM: the time limit of 1 ns ended before any design was timed (raise the time limit)"
fails 2 "reserve" "a reserve of the whole limit" "$PW" plan $MODEL --memory-limit 4GiB --reserve 4GiB
ok "it gives both in units, naming the model" err_is "pipewright: plan: gpt3-1.3b on 2 H100-SXM: split: the reserve (4 GiB) leaves nothing of the limit of 4 GiB"
fails 2 "--iteration-limit" "plan --iteration-limit 0" "$PW" plan $MODEL --iteration-limit 0
run "$PW" $PLAN --top 2 -o -
ok "plan -o - exits 0" status_is 0
ok "plan -o -: the schedule on stdout" out_starts '{'
ok "plan -o -: the table on stderr" err_has '^#  *split  *layout'
run "$PW" $PLAN --top 2 --objective span
ok "plan --objective span ranks by span" out_has ' the 2 best of [0-9]* candidates by span$'
ok "and shows the span beside the step time" \
    out_has '^#  *split  *layout  *recompute  *offload  *schedule  *step time  *span  *bubble  *idle  *peak / limit  *bound  *gap$'
run "$PW" $PLAN --top 2 --offload on --json
ok "plan --offload on: only designs with the link" [ "$(grep -c '"offload": true,' "$tmp/out")" -eq 2 ]
run "$PW" $PLAN --top 2 --json
ok "plan --json exits 0" status_is 0
if command -v python3 >/dev/null 2>&1; then
	ok "plan --json is one JSON object with 2 candidates" \
	    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (len(d["candidates"]) == 2 and d["split_fixed"] is False and d["ended"] == "iteration limit" and isinstance(d["candidates"][0]["layers_per_stage"], list)))' "$tmp/out"
else
	skip "plan --json is one JSON object" "no python3"
fi
ok "plan --json: split_fixed" out_has '^  "split_fixed": false,$'
run "$PW" plan "$UNIT" --iteration-limit 20
ok "plan of given stages exits 0" status_is 0
ok "plan of given stages says the split is fixed" out_has '^The split is fixed: the problem.s stages were given, so plan searched the$'
ok "and its best is zb-h1 at the bound, recompute unknown" out_has '^1  given  1 chunk  -  *no  *zb-h1  *27 s  *0\.1111  *11\.1%  *4 B / none (d0)  *27 s (device)  *0\.00%$'
ok "one candidate is singular" out_has ': the best of 1 candidate by step time$'
run "$PW" $PLAN --top 1
ok "plan --top 1: the best of all" out_has '^gpt3-1\.3b on 2 H100-SXM: the best of 98 candidates by step time$'

# plan takes a model as it is described: its even split need not fit.
run "$PW" plan $MODEL --memory-limit 11GiB --iteration-limit 20 --top 1
ok "plan of a model whose even split does not fit exits 0" status_is 0
ok "and finds full recomputation with offload" out_has '^1  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1  loop x12  full  *yes  *solve  *104\.1 ms '
fails 2 "no design fits" "plan of a model no design fits" "$PW" plan $MODEL --memory-limit 10GiB --iteration-limit 20
ok "it names the model, as compare does" err_has "^pipewright: plan: gpt3-1\.3b on 2 H100-SXM: no design fits memory: "

# A script's objective holds for plan as for solve; the command line wins.
cat >"$tmp/span.lua" <<'LUA'
local unit = { f = 1, b = 1, w = 1, act = 1, hold = 0.5 }
return pw.problem{ devices = 4, microbatches = 8, objective = "span",
  stages = { unit, unit, unit, unit } }
LUA
run "$PW" plan "$tmp/span.lua" --iteration-limit 20
ok "plan of a script that states the span ranks by span" out_has ' candidate by span$'
run "$PW" plan "$tmp/span.lua" --iteration-limit 20 --objective makespan
ok "--objective overrides the script's" out_has ' candidate by step time$'

# solve on a one-stage-per-device model names a family that splits it
# again and beats the result.
run "$PW" solve $MODEL --iteration-limit 20 -o /dev/null
ok "solve notes the family that splits the model again" [ "$(grep '^pipewright: ' "$tmp/err")" = "pipewright: solve: zb-v splits the model again (2 stages per device, V) and reaches 81.86 ms within the limits, below this 86.13 ms: try pipewright plan --model gpt3-1.3b --hardware H100-SXM --devices 2 --microbatches 4, or solve with --placement v" ]
# The note's families are built within solve's own limit: with 1 ns
# they are not all built, and the note is left out rather than wrong.
run "$PW" solve $MODEL --time-limit 1e-9 -o "$tmp/model-1ns.json"
ok "solve --time-limit 1e-9 still exits 0" status_is 0
ok "and leaves out the note it had no time for" lacks 'splits the model again' "$tmp/err"
run "$PW" solve "$UNIT" --iteration-limit 20 -o /dev/null
ok "given stages get no such note" lacks 'splits the model again' "$tmp/err"
run "$PW" help plan
ok "help plan documents the default time limit" out_has '^  -l, --time-limit S  seconds to search (default 60)$'
ok "help plan wraps its usage line" out_has '^                       \[--objective makespan|span\] \[-o FILE\] \[--json\]$'
for cmd in schedule problem compare eval check show export script solve design plan launch calibrate; do
	"$PW" help $cmd | awk 'NF == 0 { exit } length > 79 { bad = 1 } END { exit bad }'
	ok "help $cmd: the usage line fits 80 columns" [ $? -eq 0 ]
done

# solve's wording and bounds.
run "$PW" solve "$UNIT" -o /dev/null
ok "solve prints both objectives' strongest bounds, named" \
    out_has '^bounds  *makespan >= 27 s ([a-z-]*), span >= 24 s ([a-z-]*), for this split and layout$'

# ------------------------------------------------------------ launch, calibrate
# A run's durations depend on the machine: nothing here asserts one.  What
# does not: exit codes, the lines' shapes, the peaks (measured equals
# predicted, exactly), the checker on the measured timeline, the files.
# json_ok FILE: whether FILE parses as JSON (python3 or jq when present,
# else its first and last characters).
json_ok() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -m json.tool "$1" >/dev/null
	elif command -v jq >/dev/null 2>&1; then
		jq . "$1" >/dev/null
	else
		[ "$(head -c 1 "$1")" = "{" ] && [ "$(tail -c 2 "$1")" = "}
" ]
	fi
}
LAUNCH="--iterations 2 --warmup 1"
run "$PW" launch "$UNIT" --family 1f1b $LAUNCH -o "$tmp/m.json"
ok "launch of a problem exits 0" status_is 0
ok "launch says what the workload leaves out" out_has 'attention'
ok "launch reports progress per iteration on stderr" err_has '^iteration 1/3 (warm-up): [0-9.]* [mun]*s, loss [0-9.]*$'
ok "and the measured ones" err_has '^iteration 3/3: '
ok "launch prints the step time" out_has '^step time   [0-9.]* [mun]*s on cpu, local (median of 2 iterations after 1 warm-up)$'
ok "launch prints the loss" out_has '^loss        [0-9.e+-]* (the last iteration'"'"'s mean)$'
ok "launch checks the gradients" out_has '^gradients   max relative error [0-9.e+-]* against the sequential computation (fp32: below 1e-5); loss '
ok "launch compares with the prediction" out_has '^measured against predicted:$'
ok "each device's measured peak is the predicted one" [ "$(grep -c '^device [0-3] peak .* 1\.000$' "$tmp/out")" -eq 4 ]
ok "and its busy time" [ "$(grep -c '^device [0-3] busy ' "$tmp/out")" -eq 4 ]
ok "launch lists the 5 ops that differ most" [ "$(sed -n '/^the ops that differ most:$/,/^$/p' "$tmp/out" | grep -c '^[FBW]')" -eq 5 ]
ok "launch -o writes the measured file" grep -q '"measured"' "$tmp/m.json"
# Four device threads on one core (taskset, util-linux) are an emulation
# and launch says so; with a core for each device it says nothing.
run taskset -c 0 "$PW" launch "$UNIT" --family 1f1b $LAUNCH -o "$tmp/memu.json"
ok "launch on fewer cores than devices exits 0" status_is 0
ok "its measured file says it was an emulation" grep -q '"emulated": true' "$tmp/memu.json"
ok "and says it is an emulation, and why its times differ" err_has '^launch: an emulation: 4 devices on 1 core, the device threads sharing them: the measured times include that sharing, which the prediction (a processor for each device) leaves out$'
# A run refused before it starts (its devices' peaks, 16 TiB, are more
# than this machine's memory) says only why.
run taskset -c 0 "$PW" launch "$UNIT" --family 1f1b --workload hidden=262144,ffn=1048576 $LAUNCH
ok "launch of a workload larger than host memory exits 2" status_is 2
ok "in one error line" one_error 'more than the'
ok "saying nothing of an emulation it did not run" lacks 'emulation' "$tmp/err"
if [ "$(nproc)" -ge 4 ]; then
	run "$PW" launch "$UNIT" --family 1f1b $LAUNCH
	ok "with a core for each device it is no emulation" lacks 'emulation' "$tmp/err"
else
	skip "with a core for each device it is no emulation" "this machine has $(nproc) cores"
fi
run "$PW" show "$tmp/m.json" --width 100
ok "show of a measured file exits 0" status_is 0
ok "show of a sound measured file warns of nothing" [ ! -s "$tmp/err" ]
ok "show says it draws the measured timeline" out_has '^measured (cpu, 2 iterations, median step)$'
ok "it draws one row per device" [ "$(grep -c '^dev [0-9]' "$tmp/out")" -eq 4 ]
run "$PW" show "$tmp/m.json" --width 100 --predicted
ok "show --predicted draws the simulator's" lacks '^measured (' "$tmp/out"
run "$PW" eval "$tmp/m.json"
ok "eval of a measured file exits 0" status_is 0
ok "eval says it measures the measured timeline" out_has '^measured (cpu, 2 iterations, median step)$'
run "$PW" export "$tmp/m.json" --to chrome
ok "export of a measured file writes JSON" out_starts "{"
ok "its trace is named as measured" grep -q '"args":{"name":"pipewright: unit4x8 (1f1b), measured (cpu, 2 iterations, median step)"}' "$tmp/out"
run "$PW" export "$tmp/m.json" --to svg
ok "its picture is titled as measured" grep -q '>unit4x8 (1f1b), measured (cpu, 2 iterations, median step)</text>' "$tmp/out"
run "$PW" export "$tmp/m.json" --to svg --predicted
ok "the predicted picture is titled as the schedule" grep -q 'class="title">unit4x8 (1f1b)</text>' "$tmp/out"
run "$PW" check "$tmp/m.json"
ok "check of a measured file passes" status_is 0
ok "it checks the measured timeline" out_has ': valid ([0-9]* ops, measured)$'
# Read twice (the plan, then the measured run): stdin, a FIFO and a pipe
# give the second reading all of it too.  A FIFO opened a second time
# would wait for a writer forever: timeout ends that as a failure.
run "$PW" check - <"$tmp/m.json"
ok "check of a measured file on stdin checks its measured timeline" \
    out_has '^<stdin>: valid ([0-9]* ops, measured)$'
rm -f "$tmp/fifo"
mkfifo "$tmp/fifo"
cat "$tmp/m.json" >"$tmp/fifo" &
run timeout 60 "$PW" eval "$tmp/fifo"
wait
ok "eval of a measured file through a FIFO reads it twice" \
    out_has '^measured (cpu, 2 iterations, median step)$'
run sh -c 'cat "$1" | "$2" show /dev/stdin --width 100' sh "$tmp/m.json" "$PW"
ok "show of a measured file through a pipe draws its measured timeline" \
    out_has '^measured (cpu, 2 iterations, median step)$'
run "$PW" eval - --against - <"$tmp/m.json"
ok "- for two arguments reads stdin for both" status_is 0
ok "and compares the run with its own prediction" \
    out_has '^measured against predicted:$'
# F(0,1) moved onto F(0,0)'s start, its duration kept: one device
# running two ops at once.  (F(0,0) starts when its memory turn comes,
# not always at 0.)
awk 'NR == FNR {
	if (/"op": "F\(0,0\)"/) {
		at = $0; sub(/.*"start": /, "", at); sub(/,.*/, "", at)
	}
	next
}
/"op": "F\(0,1\)"/ {
	s = $0; sub(/.*"start": /, "", s); sub(/,.*/, "", s)
	e = $0; sub(/.*"end": /, "", e); sub(/,.*/, "", e)
	sub(/"start": [0-9.e-]*/, "\"start\": " at)
	sub(/"end": [0-9.e-]*/, "\"end\": " sprintf("%.17g", at + e - s))
} { print }' "$tmp/m.json" "$tmp/m.json" >"$tmp/overlap.json"
run "$PW" show "$tmp/overlap.json" --width 100
ok "show of a measured timeline that breaks a rule exits 0" status_is 0
ok "warning in one line" one_error 'overlap.json'
ok "which names the rules broken and the check to run" err_has '^pipewright: warning: the measured timeline breaks [0-9]* rules*: pipewright check .*overlap.json$'
# Stored times that differ and a bad run: the run refuses the file, in
# one line, with no note on the times before it.
awk '/"kind": "F", "stage": 0, "mb": 0,/ { sub(/"end": [0-9.e-]*/, "\"end\": 5") }
/"op": "F\(0,0\)"/ { sub(/"start": [0-9.e-]*/, "\"start\": -1") } { print }' \
    "$tmp/m.json" >"$tmp/badrun.json"
for cmd in eval show "export --to chrome -o $tmp/badrun.trace"; do
	fails 2 "badrun.json: measured.ops[0].start: must be a non-negative number (got -1)" \
	    "${cmd%% *} of a file whose times differ and whose run is bad" "$PW" $cmd "$tmp/badrun.json"
done
run "$PW" eval --against "$tmp/m.json" "$tmp/m.json"
ok "eval --against exits 0" status_is 0
ok "eval --against says which prediction" out_has '^.*m.json measured against the prediction of .*m.json on its problem$'
ok "eval --against compares the step time" out_has '^step time  '
ok "eval --against lists every op by its error" [ "$(sed -n '/^ops by error:$/,/^$/p' "$tmp/out" | grep -c '^[FBW]')" -eq 64 ]
ok "eval --against gives the mean absolute error" out_has '^mean absolute error  [0-9.]*% of the predicted durations (64 ops)$'
run "$PW" eval --against "$tmp/m.json" "$tmp/m.json" --json
ok "eval --against --json exits 0" status_is 0
ok "eval --against --json parses" json_ok "$tmp/out"
ok "it holds the ops" out_has '"mean_abs_error": '
fails 2 "has no measured run" "eval --against of a file without a run" "$PW" eval --against "$tmp/m.json" "$tmp/default-1f1b.json"
fails 2 "another pipeline" "eval --against a schedule of another pipeline" "$PW" eval --against "$tmp/default-1f1b.json" "$tmp/m.json"
ok "which says how it differs, and what --against takes" err_has '^pipewright: eval: .*m\.json is a run of another pipeline than .*default-1f1b\.json.s ([0-9]* devices, against 8): --against takes the schedule it ran$'
run "$PW" schedule "$UNIT" --family zb-h1 -o "$tmp/unit-zbh1.json"
fails 2 "other ops" "eval --against a schedule of other ops (split backwards)" "$PW" eval --against "$tmp/unit-zbh1.json" "$tmp/m.json"
ok "which names an op the run lacks" err_has '^pipewright: eval: .*m\.json is a run of other ops than .*unit-zbh1\.json.s (the run has no B(0,0)): --against takes the schedule it ran$'
run "$PW" schedule "$UNIT" --family gpipe -o "$tmp/unit-gpipe.json"
run "$PW" eval --against "$tmp/unit-gpipe.json" "$tmp/m.json"
ok "eval --against another schedule of the run's pipeline exits 0" status_is 0
ok "saying where the orders first differ" err_has '^pipewright: eval: .*m\.json ran other orders than .*unit-gpipe\.json (device [0-9]*.s op [0-9]*: [FBW]*([0-9]*,[0-9]*), against [FBW]*([0-9]*,[0-9]*)): the prediction times .*unit-gpipe\.json.s$'
run "$PW" eval --against "$tmp/m.json" "$tmp/m.json"
ok "and nothing of orders for its own schedule" err_empty
run "$PW" launch "$UNIT" --family zb-h1 $LAUNCH --json
ok "launch --json exits 0" status_is 0
ok "launch --json parses" json_ok "$tmp/out"
ok "it holds the comparison" out_has '"against_predicted": {'
ok "and the arithmetic the cpu computed in" out_has '"math": "fp32"'
run "$PW" launch "$UNIT" $LAUNCH
ok "launch of a problem without --family runs its best family" out_has '^schedule    [a-z0-9-]*$'

cp "$tmp/m.json" "$tmp/m-kept.json"
run "$PW" calibrate "$tmp/m.json" -o "$tmp/m.json"
ok "calibrate -o its own run fails" status_is 2
ok "it says the output is the run" grep -qx "pipewright: calibrate: -o '$tmp/m.json' is the measured run $tmp/m.json: it would be replaced; write elsewhere" "$tmp/err"
ok "the run is as it was" cmp -s "$tmp/m.json" "$tmp/m-kept.json"
run "$PW" calibrate "$tmp/m.json" -o "$tmp/cal.json"
ok "calibrate exits 0" status_is 0
ok "calibrate prints the fit per stage" [ "$(grep -c '^[0-3]  ' "$tmp/out")" -eq 4 ]
ok "calibrate prints the residual" out_has '^residual   '
ok "calibrate prints the calibrated prediction" out_has '^prediction predicted [0-9.]* [mun]*s against measured [0-9.]* [mun]*s (the run'"'"'s step): ratio [0-9.e+-]*; before calibration predicted [0-9.]* [mun]*s, ratio [0-9.e+-]*$'
run "$PW" calibrate "$tmp/m.json" "$tmp/m.json"
ok "calibrate of two runs exits 0" status_is 0
ok "each run's prediction stands against its own step" [ "$(grep -c '^prediction predicted .* (the step of run [12], .*m.json): ratio ' "$tmp/out")" -eq 2 ]
# Runs of two schedules: each is predicted by its own schedule.
run "$PW" launch "$UNIT" --family gpipe $LAUNCH -o "$tmp/mgp.json"
run "$PW" calibrate "$tmp/m.json" "$tmp/mgp.json" -o "$tmp/cal2.json"
ok "calibrate of runs of two schedules exits 0" status_is 0
gp=$(sed -n 's/^prediction predicted \([^ ]* [mun]*s\) .*(the step of run 2, .*mgp.json).*/\1/p' "$tmp/out")
fb=$(sed -n 's/^prediction predicted \([^ ]* [mun]*s\) .*(the step of run 1, .*m.json).*/\1/p' "$tmp/out")
"$PW" schedule "$tmp/cal2.json" --family gpipe -o "$tmp/gp2.json" >/dev/null 2>&1
"$PW" schedule "$tmp/cal2.json" --family 1f1b -o "$tmp/fb2.json" >/dev/null 2>&1
ok "run 2's prediction is gpipe's makespan on the calibrated problem ($gp)" [ -n "$gp" ] && "$PW" eval "$tmp/gp2.json" | grep -q "^makespan *$gp\$"
ok "run 1's is 1f1b's ($fb)" [ -n "$fb" ] && "$PW" eval "$tmp/fb2.json" | grep -q "^makespan *$fb\$"
run "$PW" calibrate "$tmp/memu.json"
ok "calibrate of an emulated run exits 0" status_is 0
ok "and says the fit carries the sharing" err_has '^calibrate: .*memu.json was an emulation (its devices shared GPUs or CPU cores): its op times include that sharing, so the fit does too, and the prediction leaves it out$'
sed 's/"emulated": true/"emulated": false/' "$tmp/memu.json" >"$tmp/mown.json"
run "$PW" calibrate "$tmp/mown.json"
ok "calibrate of a run with a processor per device warns of nothing" err_empty
run "$PW" launch "$UNIT" --family 1f1b $LAUNCH --workload tokens=16 -o "$tmp/m16.json"
run "$PW" calibrate "$tmp/m16.json" -o "$tmp/c16.json"
ok "calibrate of a run of another workload than the default names the one to run again" \
    out_has "^workload   the runs' is not the calibrated problem's default: launch $tmp/c16.json --workload hidden=64,ffn=256,tokens=16,layers=1 runs it again$"
run "$PW" calibrate "$tmp/m.json"
ok "and of the default workload says nothing of it" lacks '^workload ' "$tmp/out"
fails 2 "m16.json): workload tokens 16, run 1 tokens 32" "calibrate of runs of two workloads" "$PW" calibrate "$tmp/m.json" "$tmp/m16.json"
sed 's/"comm": 0.0/"comm": 0.5/' "$UNIT" >"$tmp/comm.json"
run "$PW" launch "$tmp/comm.json" --family 1f1b $LAUNCH -o "$tmp/mc.json"
fails 2 "mc.json): another problem (stage 0's comm 0.5, run 1 0)" "calibrate of runs of two problems" "$PW" calibrate "$tmp/m.json" "$tmp/mc.json"
# What differs is named, where it is not a stage's cost.
sed 's/"microbatches": 8/"microbatches": 16/' "$UNIT" >"$tmp/u16.json"
run "$PW" launch "$tmp/u16.json" --family 1f1b $LAUNCH -o "$tmp/mu16.json"
fails 2 "mu16.json): another problem (16 microbatches, run 1 8)" "calibrate of runs of two microbatch counts" "$PW" calibrate "$tmp/m.json" "$tmp/mu16.json"
run "$PW" launch "$UNIT" --family 1f1b $LAUNCH --memory-limit 1GiB -o "$tmp/mlim.json"
fails 2 "mlim.json): another problem (device 0's memory limit 1 GiB, run 1 none)" "calibrate of runs of two limits" "$PW" calibrate "$tmp/m.json" "$tmp/mlim.json"
# A measured file keeps its schedule's pins.
run "$PW" schedule "$UNIT" --family zb-h1 -o "$tmp/pinned.json"
sed -i 's/^  "ops": \[$/  "pins": [{"before": {"kind": "F", "stage": 0, "mb": 0}, "after": {"kind": "F", "stage": 0, "mb": 7}}],\n  "ops": [/' "$tmp/pinned.json"
run "$PW" launch "$tmp/pinned.json" $LAUNCH -o "$tmp/mpinned.json"
ok "launch of a schedule with a pin exits 0" status_is 0
ok "its measured file keeps the pin" grep -q '^    {"before": {"kind": "F", "stage": 0, "mb": 0}, "after": {"kind": "F", "stage": 0, "mb": 7}}$' "$tmp/mpinned.json"
# The measured file may not replace the input, and a name its directory
# cannot hold is refused before the run, not after it.
cp "$UNIT" "$tmp/own.json"
fails 2 "launch: -o '$tmp/own.json' is the input $tmp/own.json: it would be replaced; write elsewhere" "launch -o its own input" "$PW" launch "$tmp/own.json" --family 1f1b $LAUNCH -o "$tmp/own.json"
ok "which is left as it was" cmp -s "$UNIT" "$tmp/own.json"
long=$(printf 'n%.0s' $(seq 1 300)).json
fails 2 "cannot write: File name too long" "launch -o a name too long" "$PW" launch "$UNIT" --family 1f1b $LAUNCH -o "$tmp/$long"
ok "refused before the run" sh -c '! grep -q "^iteration" "$1"' sh "$tmp/err"
# An offloading schedule's transfers fit the link.
sed 's/^  \]$/  ],\n  "link": {"d2h": 1.0, "h2d": 1.0, "latency": 0.0, "duplex": true}/' "$UNIT" >"$tmp/link.json"
run "$PW" launch "$tmp/link.json" --family po-h $LAUNCH -o "$tmp/mpo.json"
ok "launch of po-h on an offload problem exits 0" status_is 0
run "$PW" calibrate "$tmp/mpo.json"
ok "calibrate of an offloading run exits 0" status_is 0
ok "it fits the link, its residual in seconds" out_has '^link       d2h [0-9.]* [KMGT]*i*B/s, h2d [0-9.]* [KMGT]*i*B/s, latency [0-9.]* [mun]*s.* (residual [0-9.]* [mun]*s)$'
run "$PW" eval "$tmp/cal.json" --family 1f1b
ok "the calibrated problem file loads back" status_is 0
run "$PW" calibrate "$tmp/m.json" -o "$tmp/cal.lua"
ok "calibrate -o .lua exits 0" status_is 0
run "$PW" eval "$tmp/cal.lua" --family 1f1b
ok "the calibrated problem script loads back" status_is 0
fails 2 "cal.txt" "calibrate -o of another suffix" "$PW" calibrate "$tmp/m.json" -o "$tmp/cal.txt"
fails 2 "has no measured run" "calibrate of a file without a run" "$PW" calibrate "$tmp/default-1f1b.json"
fails 2 "unit4x8.json has no measured run" "calibrate of a run with a problem file after it" "$PW" calibrate "$tmp/m.json" "$UNIT"

run "$PW" launch "$UNIT" --family 1f1b --dry-run
ok "launch --dry-run exits 0" status_is 0
ok "it prints the workload's problem" out_has '"pipewright.problem.v1"'
ok "and the workload on stderr" err_has '^workload: .*attention is not part of the workload$'
ok "which parses" json_ok "$tmp/out"
fails 2 "dry-run" "launch --dry-run -o" "$PW" launch "$UNIT" --family 1f1b --dry-run -o "$tmp/dry.json"
ok "and writes nothing" [ ! -e "$tmp/dry.json" ]
run "$PW" schedule "$UNIT" --family gpipe -o "$tmp/gpipe-over.json"
sed -i '0,/"limit": null/s//"limit": 4.0/' "$tmp/gpipe-over.json"
run "$PW" launch "$tmp/gpipe-over.json" --dry-run
ok "launch of a schedule over its problem's limit runs it" status_is 0
ok "saying so first" err_has '^pipewright: launch: .*gpipe-over\.json breaks its problem.s memory limit on 1 device (device 0: peak 8 B, limit 4 B); the run keeps the workload.s bytes, which --memory-limit bounds$'
run env PIPEWRIGHT_FAIL_AT='1:F(1,2)' "$PW" launch "$UNIT" --family 1f1b $LAUNCH
ok "a failure injected into a worker exits 4" status_is 4
# The emulation's notice comes before the run, where a machine has fewer
# cores than the problem has devices.
sed -i '/^launch: an emulation: /d' "$tmp/err"
ok "in one line naming the op" one_error 'F(1,2)'
ok "and the device" err_has 'device 1'
run env PIPEWRIGHT_WIRE=host "$PW" launch "$UNIT" --family zb-h1 $LAUNCH
ok "launch over the host wire (PIPEWRIGHT_WIRE=host) exits 0" status_is 0
ok "with the gradients checked" out_has '^gradients   max relative error [0-9.e+-]* against the sequential computation (fp32: below 1e-5)'
run env PIPEWRIGHT_WIRE=host PIPEWRIGHT_FAIL_AT='2:B(2,3)' "$PW" launch "$UNIT" --family zb-h1 $LAUNCH
ok "a failure injected on the host wire exits 4" status_is 4
sed -i '/^launch: an emulation: /d' "$tmp/err"
ok "in one line naming the op" one_error 'B(2,3)'
fails 2 'PIPEWRIGHT_WIRE="nccl": the one wire to ask for is host' "launch with an unknown PIPEWRIGHT_WIRE" env PIPEWRIGHT_WIRE=nccl "$PW" launch "$UNIT" --family 1f1b $LAUNCH
fails 2 "hidden" "launch of a bad --workload" "$PW" launch "$UNIT" --family 1f1b --workload hidden=x
fails 2 "tpu" "launch of an unknown backend" "$PW" launch "$UNIT" --backend tpu
fails 2 "not local or mpi" "launch of an unknown transport" "$PW" launch "$UNIT" --transport pigeon
fails 2 "CUDA" "launch --backend cuda without CUDA" "$PW" launch "$UNIT" --backend cuda
# The CUDA backend is a module loaded when a GPU is asked for
# (runtime/cuda_load.c): nothing else loads CUDA's libraries, and a
# missing module, or a file that is not one, is one line.
ldd "$PW" >"$tmp/ldd" 2>&1
ok "the program starts without CUDA's libraries" lacks 'libcudart\|libcublas\|libnccl' "$tmp/ldd"
if grep -q '^#define HAVE_CUDA 1' "${PW%/*}/config.h" 2>/dev/null; then
	fails 2 "/nonexistent/pipewright-cuda.so: cannot open shared object file" "launch with PIPEWRIGHT_CUDA_MODULE naming no file" env PIPEWRIGHT_CUDA_MODULE=/nonexistent/pipewright-cuda.so "$PW" launch "$UNIT" --backend cuda
	libc=$(awk '$1 ~ /^libc\.so/ { print $3 }' "$tmp/ldd")
	fails 2 "${libc:-libc} is not the CUDA backend's module (no pw_rt_cuda_module)" "launch with PIPEWRIGHT_CUDA_MODULE naming another library" env PIPEWRIGHT_CUDA_MODULE="${libc:-/nonexistent/libc}" "$PW" launch "$UNIT" --backend cuda
	mkdir "$tmp/bare"
	run sh -c 'cd "$1" && shift && exec env PIPEWRIGHT_CUDA_MODULE=pipewright-cuda.so "$@"' sh "$tmp/bare" "$PW" launch "$UNIT" --backend cuda
	ok "a bare PIPEWRIGHT_CUDA_MODULE is a file in the current folder" one_error "./pipewright-cuda.so: cannot open shared object file"
	run env -u PIPEWRIGHT_CUDA_MODULE "$PW" launch "$UNIT" --backend cuda $LAUNCH
	if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
		ok "the module beside the program runs a launch" status_is 0
	else
		ok "the module beside the program loads, and finds no GPU" one_error "no GPU visible"
	fi
else
	skip "launch with PIPEWRIGHT_CUDA_MODULE naming no file" "this build has no CUDA"
	skip "launch with PIPEWRIGHT_CUDA_MODULE naming another library" "this build has no CUDA"
	skip "the module beside the program" "this build has no CUDA"
fi
fails 2 "--iterations" "launch --iterations 0" "$PW" launch "$UNIT" --iterations 0
run "$PW" launch "$UNIT" --family 1f1b $LAUNCH --memory-limit 1KiB
ok "a schedule above --memory-limit is refused" status_is 2
ok "naming the device" err_has 'device [0-3]'
signal_when INT 'grep -q "^iteration 2/" "$tmp/bg.err"' "$PW" launch "$UNIT" --family 1f1b --iterations 100000 --no-check
ok "Ctrl-C stops a launch: exit 4" [ "$signalled" -eq 4 ]
ok "saying at which iteration" grep -q '^pipewright: launch: cancelled at iteration [0-9]* of 100001$' "$tmp/bg.err"
ok "in one line" [ "$(grep -vc -e '^iteration ' -e '^launch: an emulation: ' "$tmp/bg.err")" -eq 1 ]
# The family is chosen on the workload's bytes, within --memory-limit.
run "$PW" launch "$tmp/comm.json" --iterations 1 --memory-limit 700KiB
ok "launch of a problem under a limit runs a family within it" status_is 0
ok "and says which" out_has '^schedule    [a-z0-9-]*$'
"$PW" schedule "$UNIT" --family 1f1b -o "$tmp/s1.json" >/dev/null
run "$PW" launch "$tmp/s1.json" --iterations 1
ok "launch of a schedule file says its family" out_has '^schedule    1f1b (from .*s1.json)$'
ok "one iteration is singular" out_has '(median of 1 iteration after 1 warm-up)$'
ok "the loss's error is named so" out_has '; loss error [0-9.e+-]*$'
sed 's/^  "ops": \[$/  "pins": [{"before": {"kind": "F", "stage": 0, "mb": 1}, "after": {"kind": "F", "stage": 0, "mb": 0}}],\n  "ops": [/' \
    "$tmp/s1.json" >"$tmp/pinned.json"
fails 2 "pinned.json: the schedule breaks its pin 0: F(0,1)" "launch of a schedule that breaks its pin" "$PW" launch "$tmp/pinned.json" --iterations 1
ok "refused before it runs" lacks '^iteration ' "$tmp/err"
run "$PW" launch "$tmp/m16.json" --iterations 1
ok "a measured file runs again on its recorded workload" err_has '^launch: the workload recorded in .*m16.json (--workload sets another)$'
ok "which is the one it ran" out_has '16 tokens per microbatch'
run "$PW" launch "$tmp/m16.json" --family zb-h1 --dry-run
ok "so does another family of its problem" err_has '^launch: the workload recorded in .*m16.json (--workload sets another)$'
ok "... running that workload" err_has '^workload: .*16 tokens per microbatch'
# --workload sets its keys; the others stay what would run without it.
run "$PW" launch "$tmp/m16.json" --workload hidden=32 --dry-run
ok "a measured file with part of a workload keeps the rest it recorded" \
    err_has '^workload: 1 layer per stage of MLP blocks (hidden 32, ffn 256, 16 tokens per microbatch)'
run "$PW" launch $MODEL --workload hidden=32 --dry-run
ok "a model's problem with part of a workload keeps the rest of its shape" \
    err_has '^workload: 12 layers per stage of MLP blocks (hidden 32, ffn 512, 128 tokens per microbatch)'

# ------------------------------------------------------------ docs
# docs/cli.md's family table is the registry: the names and summaries of
# 'schedule --help', in its order.
"$PW" schedule --help | awk '/^families:/ { on = 1; next }
    on && NF { name = $1; sub(/^ *[^ ]+ +/, ""); print name "|" $0 }' >"$tmp/families.help"
awk 'on && !/^\|/ { exit }
    on && /^\| `/ { sub(/^\| `/, ""); sub(/` \| /, "|"); sub(/ \|$/, ""); print }
    /^\| name \| schedule \|$/ { on = 1 }' "$srcdir/docs/cli.md" >"$tmp/families.doc"
ok "schedule --help lists the families with their summaries" grep -q '^gpipe|GPipe: ' "$tmp/families.help"
ok "docs/cli.md's family table is schedule --help's list" cmp -s "$tmp/families.doc" "$tmp/families.help"

echo "1..$n"
[ "$failed" -eq 0 ]
