# tap.sh - what the shell tests share, sourced by them: a temporary
# directory, $tmp, removed on exit, and TAP test points counted in $n
# (failures in $failed) over the output of the last command run.
# Plain POSIX sh.

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 99' HUP INT TERM

n=0
failed=0

# run CMD...: runs it with stdout in $tmp/out, stderr in $tmp/err and the
# exit status in $status.
run() {
	"$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
}

# out_has RE: the last command's stdout has a line matching RE.
out_has() { grep -q -e "$1" "$tmp/out"; }

# ok DESCRIPTION TEST...: one test point, passing when TEST succeeds; on a
# failure the last command's status and stderr are shown.
ok() {
	point=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $point"
	else
		echo "not ok $n - $point"
		failed=$((failed + 1))
		echo "#   status $status; stderr:"
		sed 's/^/#   /' "$tmp/err" 2>/dev/null | head -5
	fi
}

# skip DESCRIPTION WHY: one test point skipped.
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

status_is() { [ "$status" -eq "$1" ]; }
out_empty() { [ ! -s "$tmp/out" ]; }
err_empty() { [ ! -s "$tmp/err" ]; }
# The error is one line, "pipewright: ...", naming WHAT (a fixed string).
one_error() {
	[ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	    grep -q '^pipewright: ' "$tmp/err" &&
	    grep -q -F -e "$1" "$tmp/err"
}
