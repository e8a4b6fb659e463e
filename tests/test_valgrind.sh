#!/bin/sh
# test_valgrind.sh - the command-line paths of the examples under
# valgrind, as TAP: every example problem (examples/*.json and the problem
# script default.lua) through problem, compare, schedule, eval, check,
# show, export and solve, and every example script through script.  Each
# run must be clean: no invalid read or write, no use of uninitialised
# memory, no definite or indirect leak (valgrind's exit code 99 says so).
#
# Skipped without valgrind, and for a build with sanitizers (which valgrind
# cannot run).  make check sets PIPEWRIGHT and EXAMPLES.

srcdir=$(cd "$(dirname "$0")/.." && pwd)
PIPEWRIGHT=${PIPEWRIGHT:-./pipewright}
EXAMPLES=${EXAMPLES:-$srcdir/examples}
PW=$PIPEWRIGHT

. "$srcdir/tests/tap.sh"

if ! command -v valgrind >/dev/null 2>&1; then
	skip "the examples under valgrind" "valgrind is not installed"
	echo "1..$n"
	exit 0
fi
if ldd "$PW" 2>/dev/null | grep -q -e libasan -e libubsan; then
	skip "the examples under valgrind" "a sanitizer build"
	echo "1..$n"
	exit 0
fi

# clean CMD...: CMD under valgrind exits as it would (0 or 1), with no
# error valgrind reports.
clean() {
	cd "$tmp/run" &&
	    valgrind -q --error-exitcode=99 --leak-check=full \
		--suppressions="$srcdir/tests/data/valgrind-ld.supp" \
		--show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect "$@" \
		>"$tmp/out" 2>"$tmp/err"
	status=$?
	cd "$tmp"
	[ "$status" -le 1 ] && ! grep -q '^==[0-9]*==' "$tmp/err"
}

mkdir "$tmp/run"
for problem in "$EXAMPLES"/*.json "$EXAMPLES/default.lua"; do
	name=$(basename "$problem")
	s=$tmp/run/$name.zb.json
	ok "valgrind: problem $name" clean "$PW" problem "$problem"
	ok "valgrind: compare $name" clean "$PW" compare "$problem"
	ok "valgrind: schedule $name (zb-h1)" clean "$PW" schedule "$problem" \
	    --family zb-h1 -o "$s"
	ok "valgrind: schedule $name (po-auto)" clean "$PW" schedule \
	    "$problem" --family po-auto -o "$tmp/run/po.json"
	ok "valgrind: eval $name's schedule" clean "$PW" eval "$s" --json
	ok "valgrind: check $name's schedule" clean "$PW" check "$s"
	ok "valgrind: show $name's schedule" clean "$PW" show "$s"
	ok "valgrind: export $name's schedule to svg" clean "$PW" export "$s" \
	    --to svg -o "$tmp/run/s.svg"
	ok "valgrind: export $name's schedule to chrome" clean "$PW" export \
	    "$s" --to chrome -o "$tmp/run/s.trace.json"
	ok "valgrind: solve $name" clean "$PW" solve "$problem" \
	    --iteration-limit 300 -o "$tmp/run/best.json"
done
for script in "$EXAMPLES"/*.lua; do
	ok "valgrind: script $(basename "$script")" clean "$PW" script "$script"
done

echo "1..$n"
[ "$failed" -eq 0 ]
