# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Recordings as a user meets them: a live run with --record, then
# `cacheperf-bpf report FILE` on the machine it was made on gives the same
# report, byte for byte (times and reasons come from the recording); a file
# that is not a recording, cut short or damaged gives exit 1 and a sentence
# with the byte offset.
. "$(dirname "$0")/tap.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT

# --- bad files need no root ----------------------------------------------------
expect "report of a missing file" 1 "cannot open the recording $dir/none" "$BIN" report "$dir/none"
echo "hello" >"$dir/text"
expect "report of a file that is not a recording" 1 "not a cacheperf-bpf recording" \
	"$BIN" report "$dir/text"
expect "report without a file" 2 "usage: cacheperf-bpf report FILE" "$BIN" report

need_root "live recordings need root"

# --- a live run, recorded, then replayed ------------------------------------------
# touch_pages (tests/e2e/test_cli.sh explains the run; "go" after 1 s: on a busy
# machine the drain may lag and the workload must still be there for its
# maps to be read); its own output goes
# elsewhere so stdout is the report alone
tp=$WL/touch_pages
rec=$dir/run.cprec
setarch "$(uname -m)" -R "$BIN" --source faults --record "$rec" -- \
	sh -c "(sleep 1; echo go) | $tp 64 >/dev/null" >"$dir/live" 2>"$dir/live.err"
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$rec" ]; then _ok "--record writes the recording"; else
	_not_ok "--record writes the recording" "status $rc" "$(cat "$dir/live.err")"; fi
# the live report found the workload's store (so an equal replay is not an empty one)
if grep -Eq "^ +128 +[0-9]+ +0x[0-9a-f]+ +touch \(touch_pages.c:[0-9]+\)$" "$dir/live"; then
	_ok "the live report shows the workload's 128 faults"; else
	_not_ok "the live report shows the workload's 128 faults" "$(cat "$dir/live")"; fi

expect "report FILE succeeds" 0 "^cacheperf-bpf report" "$BIN" report "$rec"
# The breakpoint manager's own figures are not recorded (its histories are,
# so the issues are the same), nor is the profiler's own memory: the live
# report's "Breakpoints" paragraph and its Limits' "memory:" line are the
# differences allowed.
if grep -q "^Breakpoints (" "$dir/live" && ! grep -q "^Breakpoints (" "$tap_out" &&
	[ "$(replayable "$dir/live")" = "$(replayable "$tap_out")" ]; then
	_ok "the replayed report equals the live one byte for byte, but for breakpoint and memory figures"
else
	_not_ok "the replayed report equals the live one byte for byte, but for breakpoint and memory figures" \
		"$(diff "$dir/live" "$tap_out" | head -20)"
fi
if ! grep -q "warning" "$tap_out"; then _ok "no file changed since the recording"; else
	_not_ok "no file changed since the recording"; fi

# --- damaged recordings: exit 1 and the offset ------------------------------------
size=$(stat -c %s "$rec")
head -c $((size / 2)) "$rec" >"$dir/cut"
expect "a recording cut in half" 1 "truncated at byte [0-9]+" "$BIN" report "$dir/cut"
cp "$rec" "$dir/flip"
# the byte's complement: a constant 0xff left a byte that was 0xff already as it was
byte=$(od -An -tu1 -j $((size / 3)) -N1 "$rec")
printf "\\$(printf '%03o' $((byte ^ 0xff)))" |
	dd of="$dir/flip" bs=1 seek=$((size / 3)) conv=notrunc status=none
cmp -s "$rec" "$dir/flip" && _not_ok "the damaged copy differs from the recording"
expect "a damaged byte" 1 "corrupt at byte [0-9]+" "$BIN" report "$dir/flip"

# --- a mapped file that changed since: shown as an offset, with the reason ---------
cp "$tp" "$dir/tp"
setarch "$(uname -m)" -R "$BIN" --source faults --record "$dir/tp.cprec" -- \
	sh -c "(sleep 1; echo go) | $dir/tp 64 >/dev/null" >/dev/null 2>&1
# rebuild it with another build-id (a new file, as a linker writes it)
objcopy --remove-section .comment "$dir/tp" "$dir/tp.new" 2>/dev/null
cc -g -O1 -pthread -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567 \
	-o "$dir/tp.new" "$CP_ROOT/tests/workloads/touch_pages.c" 2>/dev/null && mv "$dir/tp.new" "$dir/tp"
expect "report FILE after the binary changed" 0 "" "$BIN" report "$dir/tp.cprec"
if grep -q "warning: $dir/tp: file changed since the recording: build-id" "$tap_out" &&
	grep -Eq "^ +128 +[0-9]+ +0x[0-9a-f]+ +tp\+0x[0-9a-f]+ \(file changed since the recording" "$tap_out"
then _ok "a changed binary is named, its instructions shown as offsets"
else _not_ok "a changed binary is named, its instructions shown as offsets"; fi

done_testing
