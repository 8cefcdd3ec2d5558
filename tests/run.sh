#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Runs every test program (cmocka binaries in BUILD/tests/{unit,bpf}, TAP shell
# scripts in tests/e2e) and ends with one line: "N passed, N failed, N skipped".
# Each program speaks TAP (cmocka with CMOCKA_MESSAGE_OUTPUT=TAP). A program that
# exits non-zero without reporting a failing case counts as one failure, so a
# crash is never a pass. Exit status is non-zero if anything failed.
#
# usage: tests/run.sh BUILD_DIR [FILTER]
set -u
build=${1:-build}
filter=${2:-${TESTS:-}}
root=$(cd "$(dirname "$0")/.." && pwd)
export CP_BUILD=$(cd "$build" && pwd) CP_ROOT=$root
export CMOCKA_MESSAGE_OUTPUT=TAP
per_test_timeout=${CP_TEST_TIMEOUT:-600}

pass=0 fail=0 skip=0
failed_names=() failed_lines=()

run_one() {
	local name=$1; shift
	local out rc p=0 f=0 s=0
	out=$(timeout --kill-after=10 "$per_test_timeout" "$@" 2>&1 </dev/null)
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok "*) p=$((p + 1)) ;;
		"not ok "*"# SKIP"*) s=$((s + 1)) ;;
		"not ok "[0-9]*) f=$((f + 1)) ;;
		esac
	done <<<"$out"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		out+=$'\n'"# $name exited with status $rc without reporting a failing case"
	fi
	if [ $((p + f + s)) -eq 0 ]; then
		f=1
		out+=$'\n'"# $name reported no test at all"
	fi
	if [ "$f" -gt 0 ] || [ -n "${CP_TEST_VERBOSE:-}" ]; then
		printf '%s\n' "$out" | sed "s|^|[$name] |"
	fi
	printf '%-40s %3d passed %3d failed %3d skipped\n' "$name" "$p" "$f" "$s"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	[ "$f" -eq 0 ] || failed_names+=("$name")
	[ "$f" -eq 0 ] || failed_lines+=("$(failed_cases "$name" <<<"$out")")
}

# The failing cases of a test's output with the diagnostics under each (not
# its dumped output, '#   |'), for the summary: a log's tail then says what
# failed even when the dumps above it scrolled away.
failed_cases() {
	awk -v name="$1" '
		/^not ok [0-9]/ && !/# SKIP/ { keep = 4; print "  [" name "] " $0; next }
		keep && /^# / && !/^#   \|/ { keep--; print "  [" name "]   " $0; next }
		{ keep = 0 }
		/exited with status|reported no test at all/ { print "  [" name "] " $0 }'
}

for dir in unit bpf; do
	for t in "$build"/tests/$dir/test_*; do
		[ -x "$t" ] || continue
		name=$dir/$(basename "$t")
		[ -n "$filter" ] && [[ "$name" != *$filter* ]] && continue
		run_one "$name" "$t"
	done
done
for t in "$root"/tests/e2e/test_*.sh; do
	[ -f "$t" ] || continue
	name=e2e/$(basename "$t" .sh)
	[ -n "$filter" ] && [[ "$name" != *$filter* ]] && continue
	run_one "$name" bash "$t"
done

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failing: ${failed_names[*]}"
	printf '%s\n' "${failed_lines[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
