#!/bin/sh
# test_docs.sh - the documentation agrees with the program, as TAP: every
# transcript of docs/*.md and README.md runs and prints what it shows, and
# every option docs/cli.md names for a command is in that command's --help
# and the other way round (with the short letters docs/cli.md gives them),
# that docs/cli.md's command table is pipewright help's, and that each
# command has a transcript there that runs.
#
# A transcript is a fenced block whose first line starts with "$ ".  Each
# "$ " line is a command, run by sh in a scratch directory with
# `pipewright` the built program; the lines up to the next "$ " line are
# what it prints: its stdout, then its stderr (captured apart, so that
# the order does not depend on buffering).  A last line "[exit N]" is its
# exit status, which is 0 without one.  A line that is exactly "..."
# stands for any number of lines (none included): what is timing-dependent
# or too long to show.  The transcripts of one file run in its order in
# one scratch directory (a copy of examples/ and tests/data/), so a file
# one writes the next may read.
#
# Two markers, HTML comments on the line before a fenced block:
#   <!-- file: NAME -->               the block is written to NAME in the
#                                     scratch directory (a problem, a Lua
#                                     script) before the next transcripts
#   <!-- transcript: not run (WHY) --> the transcript is not run; each of
#                                     its commands is a "# SKIP WHY" point
#   <!-- transcript: needs PROGRAM -->  run only where PROGRAM is on PATH
#                                     (an optional tool), else skipped
#
# make check sets PIPEWRIGHT, TESTDATA and EXAMPLES; run by hand from a
# build directory (sh /path/to/tests/test_docs.sh) it finds them itself.
# Plain POSIX sh, awk, diff: no python needed.

srcdir=$(cd "$(dirname "$0")/.." && pwd)
PIPEWRIGHT=${PIPEWRIGHT:-./pipewright}
TESTDATA=${TESTDATA:-$srcdir/tests/data}
EXAMPLES=${EXAMPLES:-$srcdir/examples}
case $PIPEWRIGHT in /*) ;; *) PIPEWRIGHT=$(pwd)/$PIPEWRIGHT ;; esac
PW=$PIPEWRIGHT

. "$srcdir/tests/tap.sh"

echo "# pipewright: $PW"
mkdir "$tmp/bin" || exit 99
ln -s "$PW" "$tmp/bin/pipewright" || exit 99

# What the transcripts may not depend on: the caller's terminal width,
# locale and colours.
unset COLUMNS NO_COLOR LANGUAGE
LC_ALL=C.UTF-8
TERM=dumb
PATH=$tmp/bin:$PATH
export LC_ALL TERM PATH

# split DOC DIR: DOC's blocks as numbered cases in DIR: N.cmd (a command),
# N.exp (its output), N.status, N.line (its line in DOC), N.skip (why it
# is not run), N.needs (the program it needs); or N.name and N.body (a
# file to write).
split() {
	awk -v dir="$2" '
	function out(suffix, text) {
		f = sprintf("%s/%04d.%s", dir, n, suffix)
		printf "%s", text >f
		close(f)
	}
	function flush(   st, e) {
		if (cmd == "")
			return
		st = 0
		e = wanted
		if (match(e, /\[exit [0-9]+\]\n$/) && (RSTART == 1 ||
		    substr(e, RSTART - 1, 1) == "\n")) {
			st = substr(e, RSTART + 6, RLENGTH - 8) + 0
			e = substr(e, 1, RSTART - 1)
		}
		n++
		out("cmd", cmd "\n")
		out("exp", e)
		out("status", st "\n")
		out("line", cmdline "\n")
		if (skip != "")
			out("skip", skip "\n")
		if (needs != "")
			out("needs", needs "\n")
		cmd = ""
	}
	infence == 0 && /^```/ {
		infence = 1
		first = 1
		body = ""
		start = NR
		next
	}
	infence == 1 && /^```$/ {
		infence = 0
		flush()
		if (fname != "") {
			n++
			out("name", fname "\n")
			out("body", body)
			out("line", start "\n")
		}
		fname = skip = needs = ""
		next
	}
	infence == 1 {
		if (first && fname == "" && substr($0, 1, 2) != "$ ")
			infence = 2     # not a transcript: skipped to its end
		first = 0
		if (fname != "") {
			body = body $0 "\n"
		} else if (substr($0, 1, 2) == "$ ") {
			flush()
			cmd = substr($0, 3)
			cmdline = NR
			wanted = ""
		} else {
			wanted = wanted $0 "\n"
		}
		next
	}
	infence == 2 {
		if (/^```$/)
			infence = 0
		fname = skip = needs = ""
		next
	}
	/^<!-- file: .* -->$/ {
		fname = $0
		sub(/^<!-- file: /, "", fname)
		sub(/ -->$/, "", fname)
		next
	}
	/^<!-- transcript: not run \(.*\) -->$/ {
		skip = $0
		sub(/^<!-- transcript: not run \(/, "", skip)
		sub(/\) -->$/, "", skip)
		next
	}
	/^<!-- transcript: needs [^ ]* -->$/ {
		needs = $4
		next
	}
	NF > 0 { fname = skip = needs = "" }
	' "$1"
}

# matches EXPECTED ACTUAL: whether ACTUAL is EXPECTED, a line of "..."
# standing for any run of lines; ACTUAL's last line must end in a newline,
# as the documented one does.
matches() {
	if [ -s "$2" ] && ! tail -c 1 "$2" | grep -q '^$'; then
		return 1
	fi
	awk '
	FNR == NR { e[++ne] = $0; next }
	{ a[++na] = $0 }
	END {
		# m[i, j]: e[i..ne] matches a[j..na]; unset is false.
		m[ne + 1, na + 1] = 1
		for (i = ne; i >= 1; i--)
			for (j = na + 1; j >= 1; j--)
				if (e[i] == "...")
					m[i, j] = m[i + 1, j] || (j <= na && m[i, j + 1])
				else
					m[i, j] = j <= na && e[i] == a[j] && m[i + 1, j + 1]
		exit !m[1, 1]
	}' "$1" "$2"
}

# diag FILE: FILE's lines as TAP diagnostics.
diag() { sed 's/^/#   /' "$1"; }

transcripts=0
skipped=0
: >"$tmp/run-commands"
for doc in "$srcdir"/docs/*.md "$srcdir"/README.md; do
	rel=${doc#"$srcdir"/}
	cases=$tmp/cases
	run=$tmp/run
	rm -rf "$cases" "$run"
	mkdir -p "$cases" "$run/tests" || exit 99
	cp -R "$EXAMPLES" "$run/examples" && cp -R "$TESTDATA" "$run/tests/data" || exit 99
	split "$doc" "$cases" || exit 99
	for c in "$cases"/*.line; do
		[ -e "$c" ] || continue
		c=${c%.line}
		line=$(cat "$c.line")
		if [ -e "$c.name" ]; then
			name=$(cat "$c.name")
			mkdir -p "$run/$(dirname "$name")" && cp "$c.body" "$run/$name" || exit 99
			continue
		fi
		cmd=$(cat "$c.cmd")
		if [ -e "$c.skip" ]; then
			skipped=$((skipped + 1))
			skip "$rel:$line: \$ $cmd" "$(cat "$c.skip")"
			continue
		fi
		if [ -e "$c.needs" ] && ! command -v "$(cat "$c.needs")" >/dev/null 2>&1; then
			skipped=$((skipped + 1))
			skip "$rel:$line: \$ $cmd" "$(cat "$c.needs") missing"
			continue
		fi
		transcripts=$((transcripts + 1))
		[ "$rel" != docs/cli.md ] ||
		    echo "$cmd" | awk '$1 == "pipewright" { print $2 }' >>"$tmp/run-commands"
		(cd "$run" && exec sh -c "$cmd") >"$tmp/out" 2>"$tmp/err" </dev/null
		status=$?
		cat "$tmp/out" "$tmp/err" >"$tmp/got"
		want=$(cat "$c.status")
		n=$((n + 1))
		if [ "$status" -eq "$want" ] && matches "$c.exp" "$tmp/got"; then
			echo "ok $n - $rel:$line: \$ $cmd"
		else
			echo "not ok $n - $rel:$line: \$ $cmd"
			failed=$((failed + 1))
			[ "$status" -eq "$want" ] || echo "#   exit $status, documented $want"
			diff -u "$c.exp" "$tmp/got" | sed '1,2d' >"$tmp/diff"
			sed 40q "$tmp/diff" >"$tmp/diff40"
			diag "$tmp/diff40"
			[ "$(wc -l <"$tmp/diff")" -le 40 ] || echo "#   (diff cut at 40 lines)"
		fi
	done
done
echo "# $transcripts transcripts run, $skipped not run"

# ------------------------------------------------ the options of docs/cli.md
cli=$srcdir/docs/cli.md
commands=$("$PW" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')

# The command table at the top lists exactly pipewright help's commands.
awk -F'`' '/^\| `[a-z]/ && !done { split($2, w, " "); print w[1]; seen = 1; next }
	seen && !/^\|/ { done = 1 }' "$cli" | sort >"$tmp/table"
printf '%s\n' $commands | sort >"$tmp/help"
n=$((n + 1))
if cmp -s "$tmp/table" "$tmp/help"; then
	echo "ok $n - docs/cli.md's command table lists pipewright help's commands"
else
	echo "not ok $n - docs/cli.md's command table lists pipewright help's commands"
	failed=$((failed + 1))
	diff -u "$tmp/help" "$tmp/table" | sed '1,2d' >"$tmp/diff"
	diag "$tmp/diff"
fi

# Every command has a transcript in docs/cli.md that runs.
for cmd in $commands; do
	n=$((n + 1))
	if grep -q -x -e "$cmd" "$tmp/run-commands"; then
		echo "ok $n - docs/cli.md runs an example of '$cmd'"
	else
		echo "not ok $n - docs/cli.md runs an example of '$cmd'"
		failed=$((failed + 1))
	fi
done

# section NAME: the text of docs/cli.md's "## NAME" section, but the
# output of its transcripts (which may quote other programs' options).
section() {
	awk -v want="## $1" '$0 == want { on = 1; next } /^## / { on = 0 }
	    !on { next }
	    fence == 0 && /^```/ { fence = 1; first = 1; print; next }
	    fence && /^```$/ { fence = 0; print; next }
	    fence && first { first = 0; out = substr($0, 1, 2) == "$ " }
	    !fence || !out || substr($0, 1, 2) == "$ "' "$cli"
}
# longopts: the long options named in stdin, one a line, sorted.
longopts() { grep -o -e '--[a-z][a-z0-9-]*' | sort -u; }
# none_left DESC FILE WHERE: a test point that passes when FILE (what one
# list has that the other lacks) is empty, else names its lines as
# missing from WHERE.
none_left() {
	n=$((n + 1))
	if [ ! -s "$2" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		failed=$((failed + 1))
		echo "#   $3:" $(cat "$2")
	fi
}
# Every command takes --help, which the top of docs/cli.md describes.
{ section "Model options"; echo --help; } | longopts >"$tmp/model"

for cmd in $commands; do
	section "$cmd" >"$tmp/section"
	if [ ! -s "$tmp/section" ]; then
		n=$((n + 1))
		echo "not ok $n - docs/cli.md has a section '## $cmd'"
		failed=$((failed + 1))
		continue
	fi
	"$PW" "$cmd" --help >"$tmp/usage"
	# The options of --help: its usage lines and its option lines.
	awk '/^usage:/ { u = 1 } u && /^$/ { u = 0 } u { print }
	    /^  (-[a-zA-Z], )?--[a-z]/ { print $1, $2 }
	    END { print "--help" }' "$tmp/usage" | longopts >"$tmp/has"
	longopts <"$tmp/section" >"$tmp/named"
	comm -23 "$tmp/named" "$tmp/has" >"$tmp/extra"
	none_left "docs/cli.md's $cmd names only options of '$cmd --help'" "$tmp/extra" "not in --help"
	# A short letter the section's table gives an option is --help's.
	sed -n 's/^| `\(-[a-zA-Z]\)`, `\(--[a-z][a-z0-9-]*\).*/\1 \2/p' "$tmp/section" |
	    sort -u >"$tmp/short.doc"
	sed -n 's/^  \(-[a-zA-Z]\), \(--[a-z][a-z0-9-]*\).*/\1 \2/p' "$tmp/usage" |
	    sort -u >"$tmp/short.help"
	comm -23 "$tmp/short.doc" "$tmp/short.help" >"$tmp/extra"
	none_left "docs/cli.md's $cmd gives its options --help's short letters" "$tmp/extra" "not in --help"
	# Each option of --help is in the section, a model option in the
	# section or in "Model options".
	if grep -q '^model options' "$tmp/usage"; then
		sort -u "$tmp/named" "$tmp/model" >"$tmp/documented"
	else
		{ cat "$tmp/named"; echo --help; } | sort -u >"$tmp/documented"
	fi
	comm -23 "$tmp/has" "$tmp/documented" >"$tmp/missing"
	none_left "every option of '$cmd --help' is in docs/cli.md" "$tmp/missing" "not in docs/cli.md"
done

echo "1..$n"
[ "$failed" -eq 0 ]
