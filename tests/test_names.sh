#!/bin/sh
# test_names.sh - the layering as the built objects show it, as TAP.  No
# layer references a symbol that a layer above it defines: the core
# (libpwcore.a) none of the solver's (libpwsolver.a), the scripting
# layer's (libpwlua.a), the runtime's (libpwrt.a) or the program's
# (src/cli/: main.c, cmd*.c); the solver none of the scripting layer's,
# the runtime's or the program's; the scripting layer none of the
# program's.  The runtime stands on the core alone: it references
# nothing of the solver, the scripting layer, the designer or the
# program, and so does its CUDA module.  The terminal designer (libpwtui.a, when
# built) stands on the core, the solver and the scripting layer, and none
# of them references its symbols; it references none of the program's.  And no static function shares its name
# with an extern function of another object, as offload.c's private
# pw_lower_bound once shadowed the solver's public one: a call meant for
# the one compiles against the other without a word.
#
# Skipped without nm.  make check sets PIPEWRIGHT; the libraries and the
# program's objects are built beside it.

NM=${NM:-nm}
if ! command -v "$NM" >/dev/null 2>&1; then
	echo "1..0 # SKIP nm is not installed"
	exit 0
fi

srcdir=$(cd "$(dirname "$0")/.." && pwd)
PIPEWRIGHT=${PIPEWRIGHT:-./pipewright}

. "$srcdir/tests/tap.sh"

build=$(dirname "$PIPEWRIGHT")
core=$build/libpwcore.a
solver=$build/libpwsolver.a
lua=$build/libpwlua.a
rt=$build/libpwrt.a
# The designer's library, when configure found ncursesw.
tui=
[ -f "$build/libpwtui.a" ] && tui=$build/libpwtui.a
# The runtime's CUDA backend, a module of its own, when configure found
# CUDA.
cudamod=
[ -f "$build/pipewright-cuda.so" ] && cudamod=$build/pipewright-cuda.so
# The program's objects, whatever automake names them.
program=$(ls "$build"/src/cli/pipewright-*.o 2>/dev/null)

# defined FILE...: the extern symbols the objects of FILE define, sorted.
defined() {
	"$NM" -g --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u
}

# crossing LOWER UPPER...: runs as run() does, with the symbols that the
# objects of LOWER reference and those of UPPER define in $tmp/err (one
# a line: none when the layering holds).
crossing() {
	lower=$1
	shift
	"$NM" -u "$lower" | awk 'NF == 2 { print $2 }' | sort -u >"$tmp/u"
	status=$?
	defined "$@" >"$tmp/d" || status=$?
	comm -12 "$tmp/u" "$tmp/d" >"$tmp/err"
	: >"$tmp/out"
}

# Each layer defines what the checks below look for, so that none of them
# passes for want of symbols.
run defined "$core"
ok "the core defines pw_check" grep -qx pw_check "$tmp/out"
run defined "$solver"
ok "the solver defines pw_solve" grep -qx pw_solve "$tmp/out"
run defined "$lua"
ok "the scripting layer defines pwlua_new" grep -qx pwlua_new "$tmp/out"
run defined "$rt"
ok "the runtime defines pw_launch" grep -qx pw_launch "$tmp/out"
run defined $program
ok "the program defines pw_cmd_check" grep -qx pw_cmd_check "$tmp/out"
if [ -n "$tui" ]; then
	run defined "$tui"
	ok "the designer defines tui_design" grep -qx tui_design "$tmp/out"
else
	skip "the designer defines tui_design" "built without ncursesw"
fi

crossing "$core" "$solver" "$lua" "$rt" $tui $program
ok "the core references nothing the layers above it define" err_empty
crossing "$solver" "$lua" "$rt" $tui $program
ok "the solver references nothing the layers above it define" err_empty
crossing "$rt" "$solver" "$lua" $tui $program
ok "the runtime references nothing of the solver, the scripting layer, the designer or the program" \
    err_empty
# It does stand on the core: the check above is not empty for want of
# references.
crossing "$rt" "$core"
ok "the runtime uses the core" test -s "$tmp/err"
if [ -n "$cudamod" ]; then
	crossing "$cudamod" "$solver" "$lua" $tui $program
	ok "the CUDA module references nothing of the solver, the scripting layer, the designer or the program" \
	    err_empty
	crossing "$cudamod" "$rt"
	ok "the CUDA module calls back into the runtime" test -s "$tmp/err"
else
	skip "the CUDA module references nothing above the runtime" \
	    "built without CUDA"
	skip "the CUDA module calls back into the runtime" "built without CUDA"
fi
crossing "$lua" $tui $program
ok "the scripting layer references nothing the designer or the program define" \
    err_empty
if [ -n "$tui" ]; then
	crossing "$tui" $program
	ok "the designer references nothing the program defines" err_empty
	# It does stand on the layers below: the check above is not empty
	# for want of references.
	crossing "$tui" "$core"
	ok "the designer uses the core" test -s "$tmp/err"
else
	skip "the designer references nothing the program defines" \
	    "built without ncursesw"
	skip "the designer uses the core" "built without ncursesw"
fi

# Every function as "t NAME OBJECT" or "T NAME OBJECT", without the
# suffixes of the compiler's clones (.part.0, .cold, .constprop.0); then
# each static NAME that another object defines as extern.
"$NM" -A --defined-only "$core" "$solver" "$lua" "$rt" $cudamod $tui $program |
    awk '$2 == "t" || $2 == "T" {
	obj = $1; sub(/:[0-9a-fA-F]*$/, "", obj)
	name = $3; sub(/\..*/, "", name)
	print $2, name, obj
    }' >"$tmp/functions"
status=$?
awk '$1 == "T" { ext[$2] = $3 }
    $1 == "t" { local[$2 " " $3] = 1 }
    END {
	for (k in local) {
		split(k, f, " ")
		if (f[1] in ext && ext[f[1]] != f[2])
			print f[1] ": static in " f[2] ", extern in " ext[f[1]]
	}
    }' "$tmp/functions" | sort >"$tmp/err"
ok "the libraries list their functions" grep -q '^t ' "$tmp/functions"
ok "no static function shares its name with an extern one elsewhere" \
    err_empty

echo "1..$n"
[ "$failed" -eq 0 ]
