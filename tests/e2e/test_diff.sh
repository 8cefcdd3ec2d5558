# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `cacheperf-bpf diff BEFORE AFTER` as a user runs it after a fix (docs/diff.md).
#
# Without root: the golden recording against itself gives the checked-in
# tests/golden/chain-diff.txt and .json byte for byte (every issue the same
# and unchanged; tests/golden/README.md says why each line is right); a
# recording that is missing, cut short or of another source is refused with
# its name, and nothing is written.
#
# With root: a false-sharing workload and its padded twin, each recorded for a
# short soft run (as tests/e2e/test_soft_classes.sh runs them): the diff says
# the false sharing is gone, in text and JSON; the other way round it is new,
# and --fail-on-new exits 3; a recording against itself has every issue
# unchanged.
. "$(dirname "$0")/tap.sh"

golden=$(cd "$CP_ROOT/tests/golden" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
map="--path-map=/tmp/cacheperf-golden=$golden"

# The golden self-diff, named as a user in tests/golden would name it.
(cd "$golden" && "$BIN" diff "$map" --json "$dir/json" chain.cprec chain.cprec) \
	>"$dir/txt" 2>"$dir/err"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$dir/err" ]; then _ok "diff of the golden recording with itself, no warning"
else _not_ok "diff of the golden recording with itself, no warning" "status $rc" "$(cat "$dir/err")"; fi
if cmp -s "$dir/txt" "$golden/chain-diff.txt"; then _ok "the text diff is the golden one"; else
	_not_ok "the text diff is the golden one" "$(diff "$golden/chain-diff.txt" "$dir/txt" | head -20)"
fi
if cmp -s "$dir/json" "$golden/chain-diff.json"; then _ok "the JSON diff is the golden one"; else
	_not_ok "the JSON diff is the golden one" "$(diff "$golden/chain-diff.json" "$dir/json" | head -20)"
fi
# the comparison can fail: without the map the program is not found, its lines are addresses
(cd "$golden" && "$BIN" diff chain.cprec chain.cprec) >"$dir/bare" 2>/dev/null
if ! cmp -s "$dir/bare" "$golden/chain-diff.txt" &&
	grep -q "capacity or conflict  0x[0-9a-f]*  heap object from 0x" "$dir/bare"; then
	_ok "without --path-map: addresses, not the golden diff"
else
	_not_ok "without --path-map: addresses, not the golden diff" "$(cat "$dir/bare")"
fi
expect "--fail-on-new: nothing new against itself, status 0" 0 "^Summary: 0 gone, 0 new, 1 in both" \
	"$BIN" diff "$map" --fail-on-new "$golden/chain.cprec" "$golden/chain.cprec"

# refused DESC PATTERN ARGS...: status 1, PATTERN on stderr, neither -o nor --json written
refused() {
	local desc=$1 pat=$2
	shift 2
	rm -f "$dir/out.txt" "$dir/out.json"
	"$BIN" diff "$map" -o "$dir/out.txt" --json "$dir/out.json" "$@" >"$dir/stdout" 2>"$dir/stderr"
	rc=$?
	if [ "$rc" -ne 1 ]; then
		_not_ok "$desc" "exit status $rc, want 1" "$(cat "$dir/stderr")"
	elif ! grep -Eq -- "$pat" "$dir/stderr"; then
		_not_ok "$desc" "stderr does not match /$pat/" "$(cat "$dir/stderr")"
	elif [ -e "$dir/out.txt" ] || [ -e "$dir/out.json" ] || [ -s "$dir/stdout" ]; then
		_not_ok "$desc" "something was written" "$(ls "$dir")"
	else
		_ok "$desc"
	fi
}
head -c 300 "$golden/chain.cprec" >"$dir/cut.cprec"
refused "a recording cut short: named, with the byte, nothing written" \
	"$dir/cut.cprec: truncated at byte [0-9]+" "$golden/chain.cprec" "$dir/cut.cprec"
refused "a missing recording: named, nothing written" \
	"cannot open the recording $dir/none.cprec: No such file" "$dir/none.cprec" "$golden/chain.cprec"
printf 'not a recording at all, just text\n' >"$dir/text.cprec"
refused "a file that is no recording: named, nothing written" "$dir/text.cprec" \
	"$dir/text.cprec" "$golden/chain.cprec"
expect "diff needs two recordings" 2 "usage: cacheperf-bpf diff BEFORE AFTER" \
	"$BIN" diff "$golden/chain.cprec"

if [ "$(id -u)" -ne 0 ]; then
	skip "recording the workloads needs root"
	done_testing
	exit 0
fi

SECONDS_RUN=${CP_DIFF_SECONDS:-2}
mark() { grep -n "MARK: $2 \*/" "$CP_ROOT/tests/workloads/$1" | cut -d: -f1; }
write=$(mark false_sharing.c fs-write)
alloc=$(mark false_sharing.c fs-alloc)
row="application's false sharing  false_sharing.c:$write (worker)  heap object from main (false_sharing.c:$alloc)"

# record NAME ARGS...: a soft run of the false-sharing workload into $dir/NAME.cprec
record() {
	local name=$1
	shift
	run_cmd "$BIN" --source soft -o "$dir/$name.txt" --record "$dir/$name.cprec" -- \
		"$WL/false_sharing" "$@" "$SECONDS_RUN"
	[ "$rc" -eq 0 ] || _not_ok "recording $name exits 0" "exit status $rc"
}
record fs
record padded --padded
# the premise: the run has the false sharing, the padded twin has no issue
if grep -q "^#1 Application's false sharing" "$dir/fs.txt" && grep -q "^Issues (0)" "$dir/padded.txt"
then _ok "the workload shows false sharing, its padded twin no issue"
else _not_ok "the workload shows false sharing, its padded twin no issue" \
	"$(sed -n '/^Issues/,/^Instructions/p' "$dir/fs.txt" "$dir/padded.txt")"; fi

# section NAME FILE: a section of the text diff, from its heading to the blank line
section() { awk -v h="^$1 " '$0 ~ h { on = 1 } on && /^$/ { exit } on { print }' "$2"; }
# json_array NAME FILE: the top-level array NAME of a JSON diff (one key per line)
json_array() { sed -n "/^  \"$1\": \[\]/p; /^  \"$1\": \[\$/,/^  \],\$/p" "$2"; }

"$BIN" diff --json "$dir/d.json" -o "$dir/d.txt" "$dir/fs.cprec" "$dir/padded.cprec" 2>"$dir/err"
rc=$?
gone=$(section Gone "$dir/d.txt")
if [ "$rc" -eq 0 ] && grep -q "^Gone (1)" <<<"$gone" && grep -qF "$row  was " <<<"$gone" &&
	grep -q "^Summary: 1 gone, 0 new, 0 in both" "$dir/d.txt"; then
	_ok "text: the padded twin's false sharing is gone, nothing new"
else
	_not_ok "text: the padded twin's false sharing is gone, nothing new" "status $rc" \
		"$(cat "$dir/d.txt" "$dir/err")"
fi
gone=$(json_array gone "$dir/d.json")
if grep -q '"type": "false_sharing"' <<<"$gone" &&
	grep -q "\"location\": \"false_sharing.c:$write\"" <<<"$gone" &&
	grep -q "\"object\": \"heap object from main (false_sharing.c:$alloc)\"" <<<"$gone" &&
	json_array both "$dir/d.json" | grep -q '"both": \[\]' &&
	json_array new "$dir/d.json" | grep -q '"new": \[\]' &&
	grep -q '"impact": "time_share"' "$dir/d.json"; then
	_ok "JSON: the false sharing in gone, both and new empty, impact time_share"
else
	_not_ok "JSON: the false sharing in gone, both and new empty, impact time_share" \
		"$(head -c 3000 "$dir/d.json")"
fi
if command -v python3 >/dev/null; then
	if python3 -m json.tool "$dir/d.json" >/dev/null; then _ok "JSON: the diff parses"
	else _not_ok "JSON: the diff parses" "$(head -c 2000 "$dir/d.json")"; fi
else
	skip "no python3 to parse the JSON diff"
fi

# the other way round: the false sharing is new, and --fail-on-new says so by its status
run_cmd "$BIN" diff --fail-on-new "$dir/padded.cprec" "$dir/fs.cprec"
if [ "$rc" -eq 3 ] && grep -q "^New (1)" "$tap_out" && grep -qF "$row  now " "$tap_out"; then
	_ok "--fail-on-new: the false sharing is new, status 3"
else
	_not_ok "--fail-on-new: the false sharing is new, status 3" "status $rc"
fi

# a recording against itself: each of its issues the same and unchanged, none gone or new
n=$(grep -c "^#[0-9]" "$dir/fs.txt")
run_cmd "$BIN" diff "$dir/fs.cprec" "$dir/fs.cprec"
if [ "$rc" -eq 0 ] && [ "$n" -ge 1 ] &&
	grep -q "^Summary: 0 gone, 0 new, $n in both (0 better, 0 worse, $n unchanged)\$" "$tap_out" &&
	[ "$(grep -c "  +0.0 pp unchanged  " "$tap_out")" -eq "$n" ]; then
	_ok "itself: its $n issues unchanged"
else
	_not_ok "itself: its $n issues unchanged" "status $rc"
fi

# a page-fault recording against a soft one: impacts of different measures, refused
refused "faults against soft: refused, naming both sources" \
	"--source faults .*, $dir/fs.cprec with --source soft .*record both runs with the same --source" \
	"$golden/chain.cprec" "$dir/fs.cprec"
done_testing
