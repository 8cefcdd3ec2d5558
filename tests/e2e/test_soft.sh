# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The no-PMU source as a user runs it: `--source soft -- soft_loop` reports
# the loop's load and store lines (found from the markers in
# tests/workloads/soft_loop.c) with time counts, the global array and the
# heap buffer they touch (the buffer's malloc line from the source too);
# `--source auto` picks soft on a machine without a PMU and says why; -p
# works on a running process; a recording replays to the same report.
. "$(dirname "$0")/tap.sh"

need_root "the soft source needs root"
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
src=$CP_ROOT/tests/workloads/soft_loop.c
load_line=$(grep -n "soft: load" "$src" | cut -d: -f1)
store_line=$(grep -n "soft: store" "$src" | cut -d: -f1)
malloc_line=$(grep -n "= malloc(SRC_N" "$src" | cut -d: -f1)

# check_report FILE WHAT: the report in FILE shows what soft_loop does
check_report() {
	local f=$1 what=$2
	if grep -Eq "^  source: +soft" "$f"; then _ok "$what: the report names the soft source"
	else _not_ok "$what: the report names the soft source" "$(head -5 "$f")"; fi
	if grep -Eq "^  time samples: [1-9][0-9]* ticks in user mode" "$f"; then
		_ok "$what: time samples counted"
	else _not_ok "$what: time samples counted" "$(grep -A3 '^Totals' "$f")"; fi
	# ticks, samples, pid, ip, location
	if grep -Eq "^ +[1-9][0-9]* +[1-9][0-9]* +[0-9]+ +0x[0-9a-f]+ +copy_pass \(soft_loop.c:$load_line\)$" "$f" &&
		grep -Eq "^ +[1-9][0-9]* +[1-9][0-9]* +[0-9]+ +0x[0-9a-f]+ +copy_pass \(soft_loop.c:$store_line\)$" "$f"; then
		_ok "$what: the loop's load and store lines have ticks and samples"
	else _not_ok "$what: the loop's load and store lines have ticks and samples" \
		"$(sed -n '/^Instructions/,/^$/p' "$f")"; fi
	if grep -Eq "^ +[1-9][0-9]* +[0-9]+ +global soft_dst \(32768 bytes\)" "$f" &&
		grep -Eq "^ +[1-9][0-9]* +[0-9]+ +heap object \(67108864 bytes\) allocated at 0x[0-9a-f]+ \(main \(soft_loop.c:$malloc_line\)\)" "$f"; then
		_ok "$what: samples land in the global array and the heap buffer"
	else _not_ok "$what: samples land in the global array and the heap buffer" \
		"$(sed -n '/^Objects/,/^$/p' "$f")"; fi
}

# --- forced: --source soft -- CMD ----------------------------------------------
# the source is a notice: said at the service's level, not at a terminal's default
"$BIN" --log-level notice --source soft -- "$WL/soft_loop" mem 2000 >"$dir/soft" 2>"$dir/soft.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^cacheperf-bpf: source soft: requested with --source soft" "$dir/soft.err"; then
	_ok "--source soft runs and says so"
else _not_ok "--source soft runs and says so" "status $rc" "$(cat "$dir/soft.err")"; fi
check_report "$dir/soft" "--source soft -- CMD"

# --- auto: soft where the machine has no PMU --------------------------------------
if "$BIN" --probe 2>/dev/null | grep -q "^--source auto: soft: "; then
	"$BIN" --log-level notice -- "$WL/soft_loop" mem 1500 >"$dir/auto" 2>"$dir/auto.err"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -Eq "^cacheperf-bpf: source soft: .*PMU" "$dir/auto.err"; then
		_ok "--source auto falls back to soft and says why"
	else _not_ok "--source auto falls back to soft and says why" "status $rc" \
		"$(cat "$dir/auto.err")"; fi
	if grep -Eq "^  source: +soft: " "$dir/auto"; then _ok "--source auto: the report says soft"
	else _not_ok "--source auto: the report says soft" "$(head -5 "$dir/auto")"; fi
else
	skip "this machine has a PMU: --source auto does not pick soft"
	skip "this machine has a PMU: --source auto does not pick soft"
fi

# --- -p PID -------------------------------------------------------------------------
# the loop outlives the run whatever the start takes (the probes' costs are
# measured at start, the programs load slower on a busy machine)
"$WL/soft_loop" mem 30000 &
wl=$!
sleep 0.3
"$BIN" --source soft -p "$wl" -d 4 >"$dir/pid" 2>"$dir/pid.err"
rc=$?
kill "$wl" 2>/dev/null
wait "$wl" 2>/dev/null
if [ "$rc" -eq 0 ] && grep -Eq "copy_pass \(soft_loop.c:$store_line\)$" "$dir/pid"; then
	_ok "-p PID: the running loop's store is sampled"
else _not_ok "-p PID: the running loop's store is sampled" "status $rc" "$(cat "$dir/pid.err")" \
	"$(sed -n '/^Instructions/,/^$/p' "$dir/pid")"; fi

# --- a recording replays to the same report ---------------------------------------
rec=$dir/soft.cprec
setarch "$(uname -m)" -R "$BIN" --source soft --record "$rec" -- "$WL/soft_loop" mem 1500 \
	>"$dir/live" 2>"$dir/live.err"
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$rec" ]; then _ok "--source soft --record writes a recording"
else _not_ok "--source soft --record writes a recording" "status $rc" "$(cat "$dir/live.err")"; fi
run_cmd "$BIN" report "$rec"
# the breakpoint manager's figures are not recorded (tests/e2e/test_recording.sh)
if [ "$rc" -eq 0 ] && [ "$(replayable "$dir/live")" = "$(replayable "$tap_out")" ]; then
	_ok "the replayed soft report equals the live one"
else _not_ok "the replayed soft report equals the live one" "status $rc" \
	"$(diff "$dir/live" "$tap_out" | head -20)"; fi
check_report "$tap_out" "replayed"
done_testing
