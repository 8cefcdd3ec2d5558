# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Golden outputs: the checked-in recording tests/golden/chain.cprec, replayed
# through `cacheperf-bpf report`, gives the checked-in text, JSON and HTML byte for
# byte (tests/golden/README.md says why each line is right). The recording
# names its program at /tmp/cacheperf-golden/chain; --path-map points there
# to the copy checked in beside it, so this passes from any clone, anywhere,
# without root. And it can fail: without the map, or with another build-id,
# the report is not the golden one.
. "$(dirname "$0")/tap.sh"

golden=$(cd "$CP_ROOT/tests/golden" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
map="--path-map=/tmp/cacheperf-golden=$golden"

"$BIN" report "$map" --json "$dir/json" --html "$dir/html" "$golden/chain.cprec" >"$dir/txt" 2>"$dir/err"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$dir/err" ]; then _ok "report of the golden recording, no warning"
else _not_ok "report of the golden recording, no warning" "status $rc" "$(cat "$dir/err")"; fi
if cmp -s "$dir/txt" "$golden/chain.txt"; then _ok "the text report is the golden one"; else
	_not_ok "the text report is the golden one" "$(diff "$golden/chain.txt" "$dir/txt" | head -20)"
fi
if cmp -s "$dir/json" "$golden/chain.json"; then _ok "the JSON report is the golden one"; else
	_not_ok "the JSON report is the golden one" "$(diff "$golden/chain.json" "$dir/json" | head -20)"
fi

if cmp -s "$dir/html" "$golden/chain.html"; then _ok "the HTML report is the golden one"; else
	_not_ok "the HTML report is the golden one" "$(diff "$golden/chain.html" "$dir/html" | head -20)"
fi

# the program elsewhere under another name is still found through the map
mkdir "$dir/elsewhere"
cp "$golden/chain" "$dir/elsewhere/chain"
"$BIN" report --path-map "/tmp/cacheperf-golden=$dir/elsewhere" "$golden/chain.cprec" >"$dir/txt2" 2>&1
if cmp -s "$dir/txt2" "$golden/chain.txt"; then _ok "--path-map to another copy: the same report"; else
	_not_ok "--path-map to another copy: the same report" "$(diff "$golden/chain.txt" "$dir/txt2" | head)"; fi

# without the map the program is not found: the comparison above can fail
"$BIN" report "$golden/chain.cprec" >"$dir/bare" 2>"$dir/bare.err"
if ! cmp -s "$dir/bare" "$golden/chain.txt" &&
	grep -q "warning: /tmp/cacheperf-golden/chain: file missing since the recording" "$dir/bare.err" &&
	grep -q "chain+0x[0-9a-f]* (file missing since the recording" "$dir/bare"; then
	_ok "without --path-map: a warning, offsets, not the golden report"
else
	_not_ok "without --path-map: a warning, offsets, not the golden report" "$(cat "$dir/bare.err")"
fi

# a copy with another build-id (a rebuilt program) is refused by the build-id check
cp "$golden/chain" "$dir/elsewhere/chain"
objcopy --remove-section .note.gnu.build-id "$dir/elsewhere/chain" 2>/dev/null
"$BIN" report --path-map "/tmp/cacheperf-golden=$dir/elsewhere" "$golden/chain.cprec" \
	>"$dir/nobid" 2>"$dir/nobid.err"
if ! cmp -s "$dir/nobid" "$golden/chain.txt" &&
	grep -q "file changed since the recording: build-id [0-9a-f]*, now none (looked at $dir/elsewhere/chain)" "$dir/nobid.err"
then _ok "a copy with another build-id is named and not used"
else _not_ok "a copy with another build-id is named and not used" "$(cat "$dir/nobid.err")"; fi

expect "--path-map needs OLD=NEW" 2 "--path-map: 'x' is not OLD=NEW" "$BIN" report --path-map x "$golden/chain.cprec"
expect "--path-map is for report FILE" 2 "--path-map is for" "$BIN" --path-map /a=/b -- true
done_testing
