#!/bin/sh
# fuzz.sh - the libFuzzer targets, built with clang from the sources the
# Makefile names (FUZZ_CORE, FUZZ_SOLVER, FUZZ_LUA) into build-fuzz/.
#
#   fuzz.sh fuzz [SECONDS]   runs each target for SECONDS (default 60) on
#                            its corpus (build-fuzz/corpus-*, kept between
#                            runs) and its seeds: examples/, tests/data/bad/,
#                            schedules of the examples, and every input that
#                            once crashed (tests/data/fuzz/).  A crash fails
#                            and says where its input is.
#   fuzz.sh fuzz-coverage    replays each corpus through a coverage build
#                            and reports the lines of src/ and lua/ reached.
#
# FUZZ_TARGETS (default "json lua") picks targets, FUZZ_SEED fixes
# libFuzzer's seed.
set -eu
mode=$1
seconds=${2:-60}
top=${FUZZ_SRCDIR:-.}
out=build-fuzz
targets=${FUZZ_TARGETS:-json lua}
mkdir -p "$out"

# The C files among the Makefile's source lists, below the source tree.
sources() {
	for f in "$@"; do
		case $f in *.c) printf '%s/%s ' "$top" "$f" ;; esac
	done
}
core=$(sources $FUZZ_CORE)
json_src="$top/tests/fuzz/fuzz_json.c $core"
json_libs="$JANSSON_LIBS $YAJL_LIBS $LIBS"
lua_src="$top/tests/fuzz/fuzz_lua.c $(sources $FUZZ_LUA $FUZZ_SOLVER) $core"
lua_libs="$LUA_LIBS $LPSOLVE_LIBS $JANSSON_LIBS $YAJL_LIBS -lpthread $LIBS"
cflags="-std=c11 -g -O1 -fno-omit-frame-pointer $FUZZ_CPPFLAGS \
-I$top/tests -I$top/tests/fuzz $JANSSON_CFLAGS $YAJL_CFLAGS $LUA_CFLAGS"

# build NAME FLAGS SOURCES LIBS: one clang command, sources and harness.
build() {
	echo "fuzz: building $out/$1" >&2
	# shellcheck disable=SC2086
	$FUZZ_CC $cflags $2 $3 $top/tests/fuzz/fuzz_file.c -o "$out/$1" $4
}

# The seeds of target T: files ending in SUFFIX, named by their folder.
seed() {
	t=$1 suffix=$2 dir=$out/seed-$1
	rm -rf "$dir"
	mkdir -p "$dir"
	# The example experiment scripts each run for seconds: of the Lua
	# examples only the problem script is a seed.
	examples="$top/examples/*$suffix"
	[ "$t" = lua ] && examples=$top/examples/default.lua
	for f in $examples "$top"/tests/data/bad/*"$suffix" \
	    "$top"/tests/data/fuzz/"$t"/*"$suffix"; do
		[ -f "$f" ] || continue
		cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
	done
	[ "$t" = json ] || return 0
	for family in 1f1b zb-h1 zb-v 1f1b-interleaved po-auto; do
		for ex in unit4x8.json default.json pipeoffload.lua; do
			./pipewright schedule "$top/examples/$ex" --family \
			    "$family" -o "$dir/sched-$family-$ex.json" \
			    >/dev/null 2>&1 || true
		done
	done
}

suffix_of() {
	case $1 in json) echo .json ;; lua) echo .lua ;; esac
}

case $mode in
fuzz)
	status=0
	for t in $targets; do
		eval "src=\$${t}_src libs=\$${t}_libs"
		build "fuzz_$t" "-fsanitize=fuzzer,address,undefined \
-fno-sanitize-recover=undefined" "$src" "$libs"
		seed "$t" "$(suffix_of "$t")"
		mkdir -p "$out/corpus-$t"
		# pw.solve may return while its worker finishes a unit that
		# cannot be interrupted, on its own copies (solver/solver.c):
		# libFuzzer's check after each input then counts that
		# thread's memory in flight as a leak of a later input.  The
		# suite under ASan (make check-sanitize) and valgrind check
		# the Lua paths for leaks at exit instead.
		leaks=1
		[ "$t" = lua ] && leaks=0
		log=$out/fuzz_$t.log
		echo "fuzz: fuzz_$t for $seconds s (log: $log)" >&2
		if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		    "$out/fuzz_$t" -max_total_time="$seconds" -timeout=25 \
		    -rss_limit_mb=4096 -max_len=32768 -print_final_stats=1 \
		    -detect_leaks=$leaks \
		    ${FUZZ_SEED:+-seed=$FUZZ_SEED} \
		    -dict="$top/tests/fuzz/$t.dict" -artifact_prefix="$out/$t-" \
		    "$out/corpus-$t" "$out/seed-$t" >"$log" 2>&1; then
			grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' \
			    "$log" | sed "s/^/fuzz_$t: /" >&2
		else
			status=1
			tail -n 40 "$log" >&2
			echo "fuzz: fuzz_$t failed; its input is $out/$t-*: make it" \
			    "a test by copying it to tests/data/fuzz/$t/NAME$(suffix_of "$t")" >&2
		fi
	done
	exit $status
	;;
fuzz-coverage)
	for t in $targets; do
		eval "src=\$${t}_src libs=\$${t}_libs"
		suffix=$(suffix_of "$t")
		build "cover_$t" "-fprofile-instr-generate -fcoverage-mapping \
-DREPLAY_SET=\"$t\" -DREPLAY_SUFFIX=\"$suffix\"" \
		    "$src $top/tests/fuzz/replay.c $top/tests/tap.c" "$libs"
		seed "$t" "$suffix"
		mkdir -p "$out/corpus-$t"
		rm -f "$out/cover_$t".*.profraw
		LLVM_PROFILE_FILE="$out/cover_$t.%p.profraw" \
		    "$out/cover_$t" "$out/corpus-$t" "$out/seed-$t" >/dev/null || true
		llvm-profdata merge -o "$out/cover_$t.profdata" "$out/cover_$t".*.profraw
		# The harness's own folder keeps llvm-cov from cutting src/ off
		# the names, as it cuts the prefix all names share.
		llvm-cov report "$out/cover_$t" -instr-profile="$out/cover_$t.profdata" \
		    "$top/src" "$top/lua" "$top/tests/fuzz" >"$out/cover_$t.txt"
		# The lines of each folder reached (llvm-cov's columns 8 and 9:
		# lines, lines missed), per file in $out/cover_$t.txt.
		awk -v t="$t" -v n="$(ls "$out/corpus-$t" "$out/seed-$t" | wc -l)" '
		    $1 ~ /(^|\/)(src|lua)\/[^\/]*\.c$/ {
			d = $1; sub(/\/[^\/]*$/, "", d); sub(/.*\//, "", d)
			lines[d] += $8; missed[d] += $9
		    }
		    END {
			for (d in lines)
				printf "fuzz_%s: %s/ %d of %d lines (%.1f%%) by %d inputs\n",
				    t, d, lines[d] - missed[d], lines[d],
				    100 * (lines[d] - missed[d]) / lines[d], n
		    }' "$out/cover_$t.txt" | sort
	done
	;;
*)
	echo "usage: fuzz.sh fuzz [SECONDS] | fuzz.sh fuzz-coverage" >&2
	exit 2
	;;
esac
