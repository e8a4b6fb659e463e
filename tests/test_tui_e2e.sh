#!/bin/sh
# test_tui_e2e.sh - the terminal designer end to end, as TAP: the real
# program in tmux (a private server, 120x40), driven with send-keys and
# read back with capture-pane.  Every check polls the screen (or a file)
# for what it expects, up to a deadline, instead of sleeping a fixed time,
# so that a loaded machine only makes it slower.
#
# Skipped without tmux or when this pipewright has no designer.  make
# check sets PIPEWRIGHT and EXAMPLES; run by hand from a build directory
# it finds them itself.

srcdir=$(cd "$(dirname "$0")/.." && pwd)
PIPEWRIGHT=${PIPEWRIGHT:-./pipewright}
EXAMPLES=${EXAMPLES:-$srcdir/examples}
PW=$PIPEWRIGHT
case $PW in
/*) ;;
*) PW=$(pwd)/$PW ;;
esac

if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux is not installed"
	exit 0
fi
if ! "$PW" design --keys >/dev/null 2>&1; then
	echo "1..0 # SKIP this pipewright is built without the designer"
	exit 0
fi

. "$srcdir/tests/tap.sh"

# The seconds a poll waits at most: generous, for a loaded machine; a
# pass never waits that long.
WAIT=${PW_E2E_WAIT:-60}
sock=pw-e2e-$$
tm() { tmux -L "$sock" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT

work=$tmp/work
mkdir "$work" || exit 99
status=0
# A session that outlives the others keeps the server up between them
# (killing the last session ends it, racing the next new-session).
tm new-session -d -s keep -x 80 -y 24 "exec sleep 3600" || exit 99
socket=$(tm display-message -p '#{socket_path}')
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$tmp" "$socket"' EXIT

# start CMD: a new session "pw" at 120x40 running the shell command CMD in
# $work, with a UTF-8 locale, a known terminal and $PW the program; what
# CMD exits with goes to $work/exit.  The pane stays after it ends.
start() {
	rm -f "$work/exit"
	printf '%s\n' "$1" >"$tmp/cmd.sh"
	tm kill-session -t pw >/dev/null 2>&1
	tm new-session -d -s pw -x 120 -y 40 -c "$work" \
	    "env LC_ALL=C.UTF-8 TERM=screen-256color PW='$PW' sh '$tmp/cmd.sh';
	    echo \$? >'$work/exit'; exec sleep 3600"
}

# screen: the pane's text in $tmp/screen.
screen() { tm capture-pane -p -t pw >"$tmp/screen" 2>/dev/null; }

# wait_for TEST...: runs TEST (with a fresh capture of the screen first)
# until it succeeds; false when it has not within $WAIT seconds.
wait_for() {
	end=$(($(date +%s) + WAIT))
	while :; do
		screen
		"$@" && return 0
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}
# line N: the screen's line N (1 is the top), as last captured.
line() { sed -n "${1}p" "$tmp/screen"; }
matches() { grep -E -q -e "$1" "$tmp/screen"; }
lacks() { ! matches "$1"; }
line_isnt() { [ "$(line "$1")" != "$2" ]; }
# The session's command has ended with status $1.
ended() { [ -s "$work/exit" ] && [ "$(cat "$work/exit")" = "$1" ]; }

# poll ERE, gone ERE: the screen comes to match ERE, or stops matching.
poll() { wait_for matches "$1"; }
gone() { wait_for lacks "$1"; }
# changed N TEXT: line N comes to be other than TEXT.
changed() { wait_for line_isnt "$1" "$2"; }
# exited STATUS: the session's command ends with STATUS.
exited() { wait_for ended "$1"; }
# file_appears FILE: FILE comes to exist.
file_appears() { wait_for test -e "$1"; }
# start_line: the details panel's " start ... end ..." line.
start_line() { grep -E '^ start [0-9]' "$tmp/screen" | head -1; }

keys() { tm send-keys -t pw "$@"; }
text() { tm send-keys -t pw -l "$1"; }
# erase N: N Backspaces (a prompt or a field comes with a proposal).
erase() {
	i=0
	while [ $i -lt "$1" ]; do
		keys BSpace
		i=$((i + 1))
	done
}

# A failed check shows the screen it last saw instead of stderr.
fail_screen() {
	[ "$failed" -eq "$1" ] && return
	sed 's/^/#   | /' "$tmp/screen"
}

# check DESCRIPTION TEST...: ok, with the screen shown on a failure.
check() {
	failed_before=$failed
	: >"$tmp/err"
	ok "$@"
	fail_screen "$failed_before"
}

echo "# pipewright: $PW"


# ------------------------------------------------------------ the main job on a terminal
start 'env TERM=dumb "$PW"'
check "no command with TERM=dumb prints the report and exits 0" exited 0
tm capture-pane -p -S - -t pw >"$tmp/screen"
check "the report has its table" grep -q '^family  *makespan' "$tmp/screen"
check "and its peaks" grep -q '^device  *d0  *d1' "$tmp/screen"

start 'TERM=nosuchterm exec "$PW" design'
check "a terminal unknown to terminfo: exit 2" exited 2
check "and one line that names it" \
    poll "^pipewright: design: cannot use the terminal: TERM 'nosuchterm' is not in the terminfo database\$"
check "and nothing else" [ "$(grep -c . "$tmp/screen")" -eq 1 ]
start 'exec "$PW" design "$PWD/missing.json"'
check "a file that cannot be loaded: exit 2" exited 2
check "one line naming it, before any screen" poll '^pipewright: design: .*missing\.json'
check "and nothing else" [ "$(grep -c . "$tmp/screen")" -eq 1 ]

# ------------------------------------------------------------ a session on the default problem
start 'exec "$PW"'
check "no command on a terminal opens the designer" \
    poll '^makespan [0-9.]+ m?s  bubble '
check "the header names the problem and where the schedule came from" \
    poll '^gpt3-6\.7b.* 8 devices, .* 32 microbatches  from family '
check "the message line has the key hints" poll '^\? help  o optimize'
check "the timeline has a block per device" poll '^d7 '
check "the ruler has units" poll '^ +\|0 s +\|[0-9.]+ m?s'
check "the details panel shows the first op" poll 'F\(0,0\) forward'

screen
ruler=$(line 3)
keys +
check "+ zooms in: the ruler changes" changed 3 "$ruler"
screen
ruler=$(line 3)
keys 0
check "0 fits the whole schedule again" changed 3 "$ruler"

keys /
check "/ asks for an op" poll '^find op'
text 'F(0,3)'
keys Enter
check "/ F(0,3) selects it: the details panel shows it" \
    poll 'F\(0,3\) forward'
check "its details: stage, chunk, microbatch, device" \
    poll '^ stage 0, chunk 0, microbatch 3, device d0'
screen
before=$(start_line)
check "its details: start, end, duration, slack" \
    grep -q -E '^ start .* end .* duration .* slack ' "$tmp/screen"

keys '>'
check "> moves it one place later" poll '^move F\(0,3\) later: makespan '
screen
moved=$(start_line)
check "the move re-times it" [ -n "$moved" ] && [ "$moved" != "$before" ]
check "an unsaved change writes the recovery file" \
    file_appears "$work/.pipewright-default.pw-recover"
keys u
check "u undoes the move" poll '^undo move F\(0,3\) later'
screen
check "the undo puts its start back" [ "$(start_line)" = "$before" ]

# The constraints panel: the memory limit of every device (the fifth
# field).
keys t
check "t opens the constraints panel" poll 'constraints \(Tab next'
keys Tab Tab Tab Tab Enter
check "Enter edits the memory limit" poll 'memory limit  +[0-9.]+ GiB_'
erase 16
text '30'
keys Enter
check "a new memory limit re-times, a bare number read as GiB" \
    poll '^memory limit 30 GiB: makespan '
check "the header shows the limit" poll ' / 30 GiB \(d[0-9]\)'
check "every device gets it" poll 'memory limit of device 7  +30 GiB'
keys Escape
check "Esc closes the panel" gone 'constraints \(Tab next'

keys o
check "o starts the optimizer: the message line shows its progress" \
    poll '^optimizing: incumbent .* bound .* gap .* elapsed .*\(Esc cancels\)'
keys Escape
check "Esc cancels it, keeping the best schedule" \
    poll '^optimized: makespan .*\(cancelled\)'
check "the header says where the schedule came from" \
    poll ' from optimizer \(.*cancelled\)'

keys c
check "c opens the compare view" poll 'bottom - top'
check "the compare view shows each schedule's metrics" \
    poll 'top: .*, bubble [0-9.]+%, idle '
keys Escape
check "Esc leaves it" gone 'bottom - top'

# D runs for the constraints panel's time limit: 600 s here (the field
# after the 8 device limits, the offload, its two bandwidths and the
# objective; the cursor is on the memory limit, field 5, from above).
# Without an iteration limit the search then certainly still runs when
# its first candidate shows, and Esc always finds it running.
keys t
check "t opens the constraints panel again" poll 'constraints \(Tab next'
keys Tab Tab Tab Tab Tab Tab Tab Tab Tab Tab Tab Tab Tab Enter
check "Enter edits the time limit" poll 'time limit  +[0-9.]+ m?s_'
erase 16
text '600'
keys Enter
check "the time limit is 600 s" poll 'time limit  +600 s'
keys Escape
check "Esc closes the panel" gone 'constraints \(Tab next'

keys D
check "D starts the design search: its panel shows the progress" \
    poll '^Design search   running: [1-9][0-9]* candidates? \([0-9]+ builds?[^)]*\), best [0-9.]+ m?s \('
keys Escape
check "Esc cancels it, keeping the best candidates so far" \
    poll '^design search: [0-9]+ candidates tried \(cancelled\), best '
check "the panel lists them, the cursor on the best" \
    poll '^> [0-9,.]+ +(1 chunk|loop x[0-9]+|V) '
keys Enter
# Which candidates a cancelled search holds depends on when Esc came: a
# split of many stages may run past the header's width.
check "Enter opens one: the header says where it came from" \
    poll ' from design split [0-9]'
keys u
check "u undoes it" poll '^undo design split '

keys S
check "S asks for a file name" poll '^save the schedule as: '
erase 40
text 'saved.json'
keys Enter
check "S saved.json saves" poll '^saved saved\.json'
run "$PW" check "$work/saved.json"
check "pipewright check passes on the saved file" status_is 0
check "the saved file is valid" grep -q 'saved.json: valid' "$tmp/out"
check "a save removes the recovery file" \
    [ ! -e "$work/.pipewright-default.pw-recover" ]

keys x
check "x asks where to export" poll '^export to '
erase 40
text 'svg out.svg'
keys Enter
check "x out.svg exports" poll '^exported out\.svg'
check "the export is an SVG picture" \
    sh -c 'head -c 5 "$1" | grep -q -e "<svg" -e "<?xml"' sh "$work/out.svg"

keys '>'
check "a change after the save" poll '^move F\(0,3\) later'
keys q
check "q with unsaved changes asks" \
    poll '^unsaved changes: s saves and quits, q quits without saving'
keys q
check "q again quits: exit 0" exited 0
check "the quit restores the terminal (no designer on the screen)" \
    gone '^makespan '
check "a quit without saving removes the recovery file" \
    [ ! -e "$work/.pipewright-default.pw-recover" ]

# ------------------------------------------------------------ L: a launch on the runtime
cp "$srcdir/tests/data/tui_small.json" "$work/small.json" || exit 99
start 'exec "$PW" design small.json'
check "design small.json draws" poll '^makespan 17 s '
keys L
# A run this small may end before a capture sees its first message.
check "L launches: the message line says so" poll '^launch: '
check "when it ends, the header has the measured step" \
    poll '^makespan 17 s  measured: step [0-9.]+ [mun]?s \(predicted 17 s\)'
check "and a run lane follows each device's" poll '^  run  '
# The given stages' seconds against the workload's milliseconds: over
# 10x apart on any machine but one a thousand times slower.
check "the message line says how it went, and to calibrate first" \
    poll '^launch: (step )?[0-9.]+ [mun]?s measured(,| against) 17 s predicted(: over 10x apart, calibrate to compare)?'
keys q
check "q quits after a launch: exit 0" exited 0

# ------------------------------------------------------------ $EDITOR breaks the Lua file
cp "$EXAMPLES/default.lua" "$work/model.lua" || exit 99
cat >"$tmp/break.sh" <<'SCRIPT'
#!/bin/sh
printf 'this is not Lua (\n' >>"$1"
SCRIPT
chmod +x "$tmp/break.sh"
start "EDITOR='$tmp/break.sh' exec \"\$PW\" design model.lua"
check "design model.lua opens the designer" poll '^makespan '
screen
header=$(line 2)
keys e
check "e: the error panel shows the Lua error with file:line" \
    poll 'model\.lua:[0-9]+'
check "the error panel is open" poll 'error \(Esc closes\)'
check "the message line says the problem stays" \
    poll 'model\.lua did not load: the problem and schedule stay'
keys Escape
check "Esc closes the error panel" gone 'error \(Esc closes\)'
check "the designer stays, with the same schedule" poll "^$(printf '%s' "$header" | sed 's/[][\.*^$()|+?{}]/\\&/g')\$"

# ------------------------------------------------------------ $EDITOR on the default problem
cat >"$tmp/halve.sh" <<'SCRIPT'
#!/bin/sh
sed 's/microbatches = 32/microbatches = 16/' "$1" >"$1.new" && mv "$1.new" "$1"
SCRIPT
chmod +x "$tmp/halve.sh"
keys q
check "the broken file's session quits" exited 0

# An editor that leaves the file as it was: nothing to read again, no
# change (a script run again was one, and a schedule file's reload
# dropped the edits not saved to it).
cp "$EXAMPLES/default.lua" "$work/same.lua" || exit 99
start "EDITOR=true exec \"\$PW\" design same.lua"
check "design same.lua opens the designer" poll '^makespan '
keys e
check "e with the file unchanged: nothing reloaded" \
    poll '^reload same\.lua: unchanged \(the editor left it as it was\)'
keys q
check "and no unsaved change: q quits at once" exited 0
# An editor that writes the same bytes back under a new inode (as an
# editor saving by rename does): unchanged too.
cat >"$tmp/rewrite.sh" <<'SCRIPT'
#!/bin/sh
cp "$1" "$1.tmp" && mv "$1.tmp" "$1"
SCRIPT
chmod +x "$tmp/rewrite.sh"
start "EDITOR='$tmp/rewrite.sh' exec \"\$PW\" design same.lua"
check "design same.lua opens again" poll '^makespan '
keys e
check "e with the same bytes written back: nothing reloaded" \
    poll '^reload same\.lua: unchanged \(the editor left it as it was\)'
# Its write moved the file's change time: as the designer's own, not
# another program's change, so the next e is the same.
keys / Escape
check "(a prompt cancelled in between)" poll '^cancelled'
keys e
check "e again after it: nothing reloaded either" \
    poll '^reload same\.lua: unchanged \(the editor left it as it was\)'
keys q
check "q quits at once again" exited 0
# Another program changed the file since the designer read it: e reads
# it again, however the editor leaves it (the screen is the old file's).
start "EDITOR=true exec \"\$PW\" design same.lua"
check "design same.lua opens a third time" poll ' 32 microbatches '
sed 's/microbatches = 32/microbatches = 12/' "$work/same.lua" >"$work/same.tmp" &&
    mv "$work/same.tmp" "$work/same.lua" || exit 99
keys e
check "e after another program's change: the file is read again" \
    poll '^reload same\.lua[:,] .*makespan '
check "its change shows: 12 microbatches" poll ' 12 microbatches '
keys q
check "the reload was a change: q asks" poll '^unsaved changes: '
keys q
check "q again quits" exited 0

start "EDITOR='$tmp/halve.sh' exec \"\$PW\""
check "the default problem again" poll ' 32 microbatches '
keys e
check "e on a problem from no file asks for a new file" \
    poll '^write the problem to a new file \(\.lua or \.json\): '
erase 40
text 'mine.lua'
keys Enter
check "the problem is written there and edited: it reloads" \
    poll '^reload mine\.lua: makespan '
check "the edit took: 16 microbatches" poll ' 16 microbatches '
check "the file is a Lua problem script" grep -q 'microbatches = 16' \
    "$work/mine.lua"
check "the recovery file follows the new file" \
    file_appears "$work/.mine.lua.pw-recover"
check "and leaves the default problem's" \
    [ ! -e "$work/.pipewright-default.pw-recover" ]

# ------------------------------------------------------------ resize
tm resize-window -t pw -x 80 -y 24
check "at 80x24 the designer still draws its layout" \
    poll '^ stage 0, chunk 0, microbatch 0, device d0'
check "at 80x24 the header is there" poll '^makespan '
tm resize-window -t pw -x 79 -y 24
check "below 80x24 a one-line notice" \
    poll '^pipewright needs at least 80x24 \(this terminal is 79x24\)'
check "and nothing else" gone '^makespan '
keys f
keys q
check "there q asks under the notice, the other keys wait" \
    poll '^unsaved changes: '
keys Escape
check "Esc answers it" gone '^unsaved changes: '
tm resize-window -t pw -x 120 -y 40
check "back at 120x40 the designer draws again" poll '^makespan '
check "the notice is gone" gone 'needs at least'
keys q
check "the reload is unsaved: q asks" poll '^unsaved changes: '
keys q
check "the session quits: exit 0" exited 0
check "the quit removes the new file's recovery file" \
    [ ! -e "$work/.mine.lua.pw-recover" ]

# ------------------------------------------------------------ kill -9 and the recovery file
start 'echo $$ >pid; exec "$PW" design'
check "design opens the default problem" poll 'F\(0,0\) forward'
keys /
text 'F(0,3)'
keys Enter
check "F(0,3) selected" poll 'F\(0,3\) forward'
keys '>'
check "F(0,3) moved" poll '^move F\(0,3\) later'
screen
moved=$(start_line)
check "the recovery file is written" \
    file_appears "$work/.pipewright-default.pw-recover"
kill -9 "$(cat "$work/pid")"
check "kill -9 ends the designer" exited 137

start 'exec "$PW" design'
check "the next design offers the recovery file" \
    poll '^restore unsaved changes from \.pipewright-default\.pw-recover \(saved [0-9-]+ [0-9:]+\)\? y/n'
keys y
check "y restores it" poll '^restored the unsaved changes'
keys /
text 'F(0,3)'
keys Enter
check "F(0,3) selected again" poll 'F\(0,3\) forward'
screen
check "the change is back" [ -n "$moved" ] && [ "$(start_line)" = "$moved" ]
keys q
check "the restored changes are unsaved: q asks" poll '^unsaved changes: '
keys q
check "q quits: exit 0" exited 0


# ------------------------------------------------------------ SIGTERM, a declined restore
start 'echo $$ >pid; exec "$PW" design'
check "design again" poll 'F\(0,0\) forward'
keys '>'
check "a change" poll '^move F\(0,0\) later'
check "its recovery file" file_appears "$work/.pipewright-default.pw-recover"
kill -TERM "$(cat "$work/pid")"
check "SIGTERM ends the designer by that signal (143)" exited 143
check "SIGTERM restores the terminal" gone '^makespan '
check "SIGTERM keeps the recovery file" \
    [ -e "$work/.pipewright-default.pw-recover" ]
start 'exec "$PW" design'
check "the recovery file is offered" poll '^restore unsaved changes from '
keys n
check "n declines it" poll '^recovery file kept as \.pipewright-default\.pw-recover~, not restored'
keys q
check "nothing changed: q quits at once" exited 0
check "a declined restore keeps the recovery file, aside" \
    [ -e "$work/.pipewright-default.pw-recover~" ]
rm -f "$work/.pipewright-default.pw-recover~"

# ------------------------------------------------------------ two designers of one file
# The first holds its recovery file's lock: the second neither offers the
# first's live changes as a crash's nor writes over them; once the first
# is killed, the second's next change writes the file as its own.
tm new-session -d -s first -x 120 -y 40 -c "$work" \
    "env LC_ALL=C.UTF-8 TERM=screen-256color PW='$PW' sh -c 'echo \$\$ >pid1; exec \"\$PW\" design'; exec sleep 3600"
file_appears "$work/.pipewright-default.pw-recover.lock"
tm send-keys -t first '>'
check "the first designer writes its recovery file" \
    file_appears "$work/.pipewright-default.pw-recover"
first=$(cksum <"$work/.pipewright-default.pw-recover")
# recovery_is_first: the recovery file is still the first designer's.
recovery_is_first() {
	[ "$(cksum <"$work/.pipewright-default.pw-recover")" = "$first" ]
}
recovery_not_first() { ! recovery_is_first; }
# neither_left: no recovery file, no lock file.
neither_left() {
	[ ! -e "$work/.pipewright-default.pw-recover" ] &&
	    [ ! -e "$work/.pipewright-default.pw-recover.lock" ]
}
start 'exec "$PW" design'
check "the second says another designer is editing, offers nothing" \
    poll '^another designer is editing with \.pipewright-default\.pw-recover: its changes are its own'
keys '>'
check "the second's change writes no recovery file" \
    poll '^recovery file not written: another designer is editing with \.pipewright-default\.pw-recover'
check "the first's recovery file is as it wrote it" recovery_is_first
kill -9 "$(cat "$work/pid1")"
tm kill-session -t first >/dev/null 2>&1
# The kernel lets the lock go only once the killed process has ended,
# which kill does not wait for (a sanitized build's end takes longest).
lock_free() { flock -n "$work/.pipewright-default.pw-recover.lock" true; }
check "the first's lock goes when it is killed" wait_for lock_free
keys '>'
check "the first gone, the second's next change writes its own" \
    wait_for recovery_not_first
check "keeping the first's aside" \
    poll '^recovery file kept as \.pipewright-default\.pw-recover~, not restored: another session.s, left when it ended'
check "as it wrote it" [ "$(cksum <"$work/.pipewright-default.pw-recover~")" = "$first" ]
keys q
check "q asks about the unsaved changes" poll '^unsaved changes: '
keys q
check "q quits: exit 0" exited 0
check "its recovery file and its lock file go with it" neither_left
rm -f "$work/pid1" "$work/.pipewright-default.pw-recover~"

# ------------------------------------------------------------ SIGHUP
start 'echo $$ >pid; exec "$PW" design'
check "design for a hangup" poll 'F\(0,0\) forward'
keys '>'
check "a change before it" poll '^move F\(0,0\) later'
check "its recovery file, again" \
    file_appears "$work/.pipewright-default.pw-recover"
kill -HUP "$(cat "$work/pid")"
check "SIGHUP ends the designer by that signal (129)" exited 129
check "SIGHUP restores the terminal" gone '^makespan '
check "SIGHUP keeps the recovery file" \
    [ -e "$work/.pipewright-default.pw-recover" ]
rm -f "$work/.pipewright-default.pw-recover"

# ------------------------------------------------------------ a crash
start 'echo $$ >pid; exec "$PW" design'
check "design once more" poll 'F\(0,0\) forward'
kill -SEGV "$(cat "$work/pid")"
check "SIGSEGV goes on to end it (139)" exited 139
check "a crash restores the terminal" gone '^makespan '

# ------------------------------------------------------------ Ctrl-Z
# An interactive shell with job control in the pane.
if command -v bash >/dev/null 2>&1; then
	start 'PS1="pw-e2e$ " exec bash --norc --noprofile -i'
	check "a shell in the pane" poll '^pw-e2e\$'
	text '"$PW" design'
	keys Enter
	check "design from the shell" poll 'F\(0,0\) forward'
	keys C-z
	check "Ctrl-Z suspends it to the shell" poll 'Stopped'
	check "with the terminal restored" gone '^makespan '
	text 'fg'
	keys Enter
	check "fg brings the screen back" poll 'F\(0,0\) forward'
	keys q
	check "q quits to the shell" gone '^makespan '
	text '"$PW" design'
	keys Enter
	check "design again from the shell" poll 'F\(0,0\) forward'
	keys '>'
	check "a change" poll '^move F\(0,0\) later'
	check "its recovery file" \
	    file_appears "$work/.pipewright-default.pw-recover"
	keys C-c
	check "Ctrl-C ends the designer, restoring the terminal" \
	    gone '^makespan '
	text 'echo "status $?"'
	keys Enter
	check "by SIGINT (status 130)" poll '^status 130$'
	check "keeping the recovery file" \
	    [ -e "$work/.pipewright-default.pw-recover" ]
	rm -f "$work/.pipewright-default.pw-recover"
	text 'exit 0'
	keys Enter
	check "the shell ends" exited 0
else
	skip "Ctrl-Z suspends the designer" "bash is not installed"
fi

# ------------------------------------------------------------ the mouse
# xterm's SGR mouse reports, typed into the pane: BUTTON;COLUMN;ROW
# (1-based), M for a press, m for a release.
mouse() { tm send-keys -t pw -l "$(printf '\033[<%d;%d;%d%s' "$@")"; }
# A loaded machine may deliver a report in pieces: a second's ESCDELAY
# keeps them one event.
start 'TERM=xterm-256color ESCDELAY=1000 exec "$PW" design'
check "design with the mouse" poll 'F\(0,0\) forward'
# Keys that come back on the screen first, so that the click goes to a
# designer that is reading its input (one was lost under a loaded
# check-sanitize, its first event right after the first screen).
screen
ruler=$(line 3)
keys +
check "the designer reads keys: + zooms" changed 3 "$ruler"
keys 0
check "and 0 fits again, before the click" changed 3 "$(line 3)"
mouse 0 61 6 M
mouse 0 61 6 m
check "a click on d1's lane selects its op there" \
    poll '^ stage [0-9]+, chunk [01], microbatch [0-9]+, device d1$'
# A press and its release in one write: what a designer busy as they came
# reads, both behind one KEY_MOUSE (only the release was seen once).
tm send-keys -t pw -l "$(printf '\033[<0;61;8M\033[<0;61;8m')"
check "a click read with its release at once selects d2's op there" \
    poll '^ stage [0-9]+, chunk [01], microbatch [0-9]+, device d2$'
screen
ruler=$(line 3)
mouse 64 61 6 M
check "the wheel zooms" changed 3 "$ruler"
keys q
check "q quits" exited 0

# ------------------------------------------------------------ colour, monochrome, ASCII
# sgr_colour: the screen (with its attributes) sets a colour.
sgr_colour() {
	tm capture-pane -p -e -t pw >"$tmp/sgr"
	grep -E -q "$(printf '\033')\\[([0-9;]*;)?(3[0-8]|4[0-8]|9[0-7])[;m]" \
	    "$tmp/sgr"
}
# non_ascii: the screen holds a character that is not ASCII.
non_ascii() { LC_ALL=C grep -q "$(printf '[\200-\377]')" "$tmp/screen"; }

start 'exec "$PW" design'
check "design draws" poll '^makespan '
check "in colour on a colour terminal" sgr_colour
check "with UTF-8 glyphs in a UTF-8 locale" non_ascii
start 'NO_COLOR=1 exec "$PW" design'
check "NO_COLOR: design draws" poll '^makespan '
check "NO_COLOR: no colour" eval '! sgr_colour'
start 'exec "$PW" design --mono'
check "--mono: design draws" poll '^makespan '
check "--mono: no colour" eval '! sgr_colour'
start 'TERM=vt100 exec "$PW" design'
check "TERM=vt100: design draws" poll '^makespan '
check "TERM=vt100: no colour" eval '! sgr_colour'
start 'exec "$PW" design --ascii'
check "--ascii: design draws" poll '^makespan '
check "--ascii: ASCII only" eval '! non_ascii'
start 'LC_ALL=C exec "$PW" design'
check "a C locale: design draws" poll '^makespan '
check "a C locale: ASCII only" eval '! non_ascii'
keys q
check "q quits at once when nothing changed" exited 0

echo "1..$n"
[ "$failed" -eq 0 ]
