#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Logs an operator can live with (root, docs/logs.md): -a while a loop
# starts hundreds of short-lived processes (/bin/true, `sh -c :`, and
# tests/workloads/no_malloc, which maps no malloc ever) says a handful of
# lines per interval, each summary with its counts, and no libbpf line; with
# JOURNAL_STREAM naming stderr every line starts with its priority; with -v
# each process is named, and a comm a tenant chose (an OSC sequence, a
# newline and a forged priority) is shown filtered.
. "$(dirname "$0")/tap.sh"

need_root "needs root"
[ -x "$WL/no_malloc" ] || skip_all "no $WL/no_malloc (make tests)"
out=$(mktemp -d)
trap 'rm -rf "$out" "$tap_out"' EXIT
D=8 I=2

# churn N: N rounds of /bin/true, `sh -c :` and no_malloc (lives 0 s: at
# once), as a build host starts them; $out/churn.n gets the count started
churn() {
	local n=0

	for _ in $(seq "$1"); do
		/bin/true
		sh -c :
		"$WL/no_malloc" 0
		n=$((n + 3))
	done
	echo "$n" >"$out/churn.n"
}

# profile FILE ARGS...: -a for $D s, -i $I, stderr in FILE, while the churn
# runs from the second second on; status in $rc
profile() {
	local err=$1

	shift
	(sleep 1; churn 150) &
	"$BIN" -a --source soft -d "$D" -i "$I" --quiet --max-bp-rate 0 -o /dev/null "$@" \
		2>>"$err" </dev/null
	rc=$?
	wait
}

# 1. the service's level: startup notices, then per interval a summary line
profile "$out/notice.err" --log-level notice
cp "$out/notice.err" "$tap_out"
lines=$(wc -l <"$out/notice.err")
# source and budget at the start, at most 3 per interval and at the end
max=$((2 + 3 * (D / I + 1)))
sums=$(grep -c '^cacheperf-bpf: allocation probes skipped for [0-9]* process\(es\)\?: [0-9]' \
	"$out/notice.err")
skipped=$(sed -n 's/^cacheperf-bpf: allocation probes skipped for \([0-9]*\) process.*/\1/p' \
	"$out/notice.err" | awk '{ n += $1 } END { print n + 0 }')
if [ "$rc" -eq 0 ] && [ "$lines" -le "$max" ] && [ "$sums" -ge 1 ] &&
   [ "${skipped:-0}" -ge 10 ]; then
	_ok "-a, $(cat "$out/churn.n") processes started: $lines lines (at most $max), $sums summaries of $skipped skipped"
else
	_not_ok "-a with hundreds of processes says a handful of lines, with counts" \
		"status $rc, $lines lines (at most $max), $sums summaries of ${skipped:-0} skipped"
fi
# every summary carries counts; no process is named; libbpf says nothing. A
# machine without sysfs cache information gets the one startup warning that
# says so (the fallback cache model).
geo_warning='cacheperf-bpf: warning: cannot read /sys/devices/system/cpu/cpu0/cache: [^;]*; using the fallback model for L1D, L2 and LLC (set the real one with --cache L1D=SIZE:WAYS:LINE,L2=\.\.\.,LLC=\.\.\.)'
bad=$(grep -v '^cacheperf-bpf: \(source \|overhead budget \|allocation probes skipped for [0-9]\+ process\(es\)\?: [0-9]\+ [a-z ]\+\(; [0-9]\+ [a-z ]\+\)*$\|allocation probes \(backed off\|resumed\)\)' \
	"$out/notice.err" | grep -vx "$geo_warning"
	[ "$(grep -cx "$geo_warning" "$out/notice.err")" -le 1 ] || echo "(the cache warning twice)")
if [ -z "$bad" ]; then
	_ok "each line is a startup notice or a summary with counts"
else
	_not_ok "each line is a startup notice or a summary with counts" "$bad"
fi
if grep -q 'libbpf' "$out/notice.err" || grep -q 'for process [0-9]' "$out/notice.err"; then
	_not_ok "no libbpf line, no process named without -v"
else
	_ok "no libbpf line, no process named without -v"
fi

# 2. a terminal's default level: none of that
profile "$out/default.err"
cp "$out/default.err" "$tap_out"
if [ "$rc" -eq 0 ] && ! grep -q 'allocation probes\|libbpf\|^cacheperf-bpf: source ' \
	"$out/default.err"; then
	_ok "the default level (warning) says no summary and no startup notice"
else
	_not_ok "the default level (warning) says no summary and no startup notice" "status $rc"
fi

# 3. the journal, -v: each line with its priority, each process named, a
# hostile comm filtered
evil=$'\e]0;pwned\a\n<0>x'
ln -s "$WL/no_malloc" "$out/$evil"
: >"$out/journal.err"
js=$(stat -c '%d:%i' "$out/journal.err")
# named_alive PATTERN CMD...: once everything is attached (on a busy machine
# seconds after the start: the probes' costs are measured first), CMD runs
# until a line matching PATTERN names it, $D s at most: a process gone before
# the profiler's turn comes is never named, and under load that turn can come
# seconds late
named_alive() {
	local pat=$1 pid

	shift
	wait_for "sampling events" "$out/journal.err" || return
	"$@" &
	pid=$!
	wait_for "$pat" "$out/journal.err" "$D"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
named_alive 'pwned' "$out/$evil" "$D" &
named_alive '\(no_malloc\): ' "$WL/no_malloc" "$D" &
export JOURNAL_STREAM=$js
profile "$out/journal.err" -v
unset JOURNAL_STREAM
cp "$out/journal.err" "$tap_out"
unprefixed=$(grep -cv '^<[3-7]>' "$out/journal.err")
if [ "$rc" -eq 0 ] && [ "$unprefixed" -eq 0 ] &&
   grep -q '^<5>source ' "$out/journal.err" &&
   grep -q '^<5>allocation probes skipped for [0-9]* process' "$out/journal.err"; then
	_ok "JOURNAL_STREAM names stderr: every line starts with its priority"
else
	_not_ok "JOURNAL_STREAM names stderr: every line starts with its priority" \
		"status $rc, $unprefixed lines without" "$(grep -v '^<[3-7]>' "$out/journal.err" | head -3)"
fi
if grep -Eq '^<6>allocation probes skipped for process [0-9]+ \((true|sh|no_malloc)\): ' \
	"$out/journal.err"; then
	_ok "-v names each process skipped"
else
	_not_ok "-v names each process skipped"
fi
# the comm is the symlink's name: ESC and BEL are '?', the comm is cut at
# its newline (/proc/PID/comm ends with one), the forged "<0>x" is no line
if grep -q '^<6>allocation probes skipped for process [0-9]* (?\]0;pwned?): nothing it maps defines malloc yet$' \
	"$out/journal.err" && ! grep -q $'\e' "$out/journal.err" &&
   ! grep -q '^<0>\|^x)' "$out/journal.err"; then
	_ok "a hostile comm comes out filtered, on its own line"
else
	_not_ok "a hostile comm comes out filtered, on its own line" \
		"$(grep -a 'pwned' "$out/journal.err" | cat -v | head -3)"
fi
done_testing
