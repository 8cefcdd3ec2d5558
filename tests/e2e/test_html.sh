# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The HTML report in a real browser (root for the runs): Debian's chromium,
# headless, in a network namespace of its own (unshare -n: no network at
# all, so the page can only show what it holds), loads the --html page of a
# soft run of a workload with a known problem, and the DOM it built must
# have the figure of that problem with the cells the workload's layout
# implies. A screenshot of each page is kept under
# $CP_BUILD/tests/artefacts/html/ for a person to look at.
. "$(dirname "$0")/tap.sh"

need_root "runs need root"
command -v chromium >/dev/null ||
	skip_all "chromium is not installed (packaging/deps.sh installs it)"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"

art=$CP_BUILD/tests/artefacts/html
mkdir -p "$art"
work=$(mktemp -d)
trap 'rm -rf "$work" "$tap_out"' EXIT
SECONDS_RUN=${CP_SOFT_SECONDS:-3}

# mark FILE NAME: the line of "/* MARK: NAME */" in tests/workloads/FILE
mark() { grep -n "MARK: $2 \*/" "$CP_ROOT/tests/workloads/$1" | cut -d: -f1; }

# browse NAME: chromium offline on $work/NAME.html: the DOM to $work/NAME.dom, a screenshot
browse() {
	local page=$work/$1.html

	unshare -n timeout 120 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$work/profile" --dump-dom "file://$page" \
		>"$work/$1.dom" 2>"$work/$1.chromium"
	unshare -n timeout 120 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$work/profile" --hide-scrollbars --window-size=1200,1500 \
		--screenshot="$art/$1.png" "file://$page" >/dev/null 2>&1
	cp "$page" "$art/$1.html"
}

# run NAME CMD...: a soft run writing $work/NAME.{txt,html}, then browsed
run() {
	local name=$1

	shift
	run_cmd "$BIN" --source soft -i 1 -o "$work/$name.txt" --html "$work/$name.html" -- "$@"
	if [ "$rc" -ne 0 ] || [ ! -s "$work/$name.html" ]; then
		_not_ok "$name: the run writes the page" "exit status $rc"
		return 1
	fi
	browse "$name"
	if grep -q "<title>cacheperf-bpf report: " "$work/$name.dom" &&
		[ "$(stat -c %s "$art/$name.png" 2>/dev/null || echo 0)" -gt 10000 ]; then
		_ok "$name: chromium loads the page offline, screenshot $art/$name.png"
	else
		_not_ok "$name: chromium loads the page offline" "$(tail -5 "$work/$name.chromium")"
		return 1
	fi
}

# cells DOM: "TID BYTES" per thread row of the first line map, BYTES the written ones
written() {
	awk '/<svg class="linemap"/ { on = 1 } on && /<\/svg>/ { exit }
		on && match($0, /<g class="thread" data-tid="[0-9]+"/) {
			tid = substr($0, RSTART + 28, RLENGTH - 29); order[++n] = tid }
		on && tid != "" && match($0, /class="cell wr" data-byte="[0-9]+"/) {
			b[tid] = b[tid] (b[tid] == "" ? "" : ",") substr($0, RSTART + 27, RLENGTH - 28) }
		on && /<\/g>/ { tid = "" }
		END { for (i = 1; i <= n; i++) print order[i], b[order[i]] }' "$1"
}

# False sharing (false_sharing.c): struct counters is one volatile long, the
# threads' counters sizeof(long) = 8 bytes apart in a 128-byte object
# aligned to 64; thread t's `c->count++` loads and stores bytes 8t..8t+7.
if run false_sharing "$WL/false_sharing" "$SECONDS_RUN"; then
	dom=$work/false_sharing.dom
	rows=$(written "$dom" | awk '{ print $2 }' | sort | tr '\n' ' ')
	if [ "$(grep -c 'data-type="false_sharing"' "$dom")" -ge 1 ] &&
		[ "$rows" = "0,1,2,3,4,5,6,7 8,9,10,11,12,13,14,15 " ]; then
		_ok "false sharing: one row writes bytes 0-7, the other 8-15"
	else
		_not_ok "false sharing: one row writes bytes 0-7, the other 8-15" "rows: $rows" \
			"$(written "$dom")"
	fi
	if grep -q 'class="obj" data-first="0" data-end="128"' "$dom" &&
		grep -q '<g class="pad" data-byte="8">' "$dom" &&
		grep -q '>+8</text>' "$dom"; then
		_ok "false sharing: the object from byte 0 (128 bytes), +8, padding before byte 8"
	else
		_not_ok "false sharing: the object from byte 0 (128 bytes), +8, padding before byte 8" \
			"$(grep -E 'class="(obj|pad)"' "$dom")"
	fi
	leaf="worker (false_sharing.c:$(mark false_sharing.c fs-write))"
	if grep 'class="frame leaf"' "$dom" | grep -qF "<title>$leaf: "; then
		_ok "false sharing: the flame graph has $leaf"
	else
		_not_ok "false sharing: the flame graph has $leaf" "$(grep 'class="frame' "$dom")"
	fi
	# -i 1 over a run of about $SECONDS_RUN s: intervals, and the issue's share
	# of each: the ticks on its instructions (those of line fs-write) over the
	# interval's ticks (docs/html.md). Over the run those are the ticks the
	# text's Instructions table shows on that line over its "ticks in user
	# mode", a mean of the intervals' shares weighted by their ticks: it lies
	# between the least and the most of them (0.005: rounding, and ticks
	# whose counter was dropped). The report's Impact is the line's samples
	# over the same ticks; a tick becomes a sample only once its instruction
	# is decoded (the first ~100 ms of an instruction's ticks are not), so
	# it may lie below the intervals, never above them (0.0005: the text's
	# 0.1 %). How large they are depends on how often the two threads ran at
	# once: on a loaded machine far less than half.
	tl=$(sed -n '/id="i1-tl"/,/<\/svg>/p' "$dom" | grep -o 'data-share="[0-9.]*"' |
		grep -o '[0-9.]*')
	impact=$(awk '/^#1 / { on = 1 } on && /^  Impact: / { print $2 / 100; exit }' \
		"$work/false_sharing.txt")
	run_share=$(awk -v loc="worker (false_sharing.c:$(mark false_sharing.c fs-write))" '
		/ time samples: [0-9]+ ticks in user mode/ { total = $3 }
		/^Instructions with/ { on = 1; next }
		on && /^$/ { on = 0 }
		on && index($0, loc) { on_line += $1 }
		END { if (total) print on_line / total }' "$work/false_sharing.txt")
	if [ "$(wc -l <<<"$tl")" -ge 2 ] && [ -n "$impact" ] && [ -n "$run_share" ] &&
		awk -v s="$run_share" -v i="$impact" 'NR == 1 { lo = hi = $1 }
			$1 < lo { lo = $1 } $1 > hi { hi = $1 }
			END { exit !(hi > 0 && lo <= s + 0.005 && hi >= s - 0.005 && i <= hi + 0.0005) }' <<<"$tl"; then
		_ok "false sharing: a timeline of $(wc -l <<<"$tl") intervals, the run's share $run_share among theirs, the impact $impact not above"
	else
		_not_ok "false sharing: a timeline of 2 or more intervals, the run's share among theirs, the impact not above" \
			"run's share '$run_share', impact '$impact'" "$tl"
	fi
	# every figure has a text alternative
	if [ "$(grep -c 'role="img"' "$dom")" -eq "$(grep -c '<desc id=' "$dom")" ]; then
		_ok "false sharing: every figure has a title and a description"
	else
		_not_ok "false sharing: every figure has a title and a description"
	fi
fi

# Conflict (conflict.c): a column walk, rows ROW = 4096 bytes apart: one L1
# set per column, far more lines (192 rows) than the set has ways. A conflict
# is proven by an access history: where breakpoints never fire, none.
if run conflict "$WL/conflict" "$SECONDS_RUN" &&
	need_bp "conflict: the L1 heatmap outlines the issue's set" \
		"conflict: the history's stride is 4096, more lines than ways" \
		"conflict: an L2 heatmap with cells"; then
	dom=$work/conflict.dom
	set=$(grep -o "accesses on L1 set [0-9]*" "$work/conflict.txt" | head -1 | grep -o '[0-9]*$')
	ways=$(grep -o "distinct lines for [0-9]* ways" "$work/conflict.txt" | head -1 |
		grep -o '[0-9]* ways' | grep -o '[0-9]*')
	hist=$(sed -n '/id="i1-hist"/,/<\/svg>/p' "$dom")
	lines=$(grep -o "class=\"hbar hot\" data-set=\"$set\" data-lines=\"[0-9]*\"" <<<"$hist" |
		grep -o 'lines="[0-9]*' | grep -o '[0-9]*$')
	if [ -n "$set" ] && grep -q 'data-type="conflict"' "$dom" &&
		sed -n '/id="i1-l1"/,/<\/svg>/p' "$dom" | grep -q "class=\"set hot\" data-set=\"$set\""; then
		_ok "conflict: the L1 heatmap outlines set $set, the one the text report names"
	else
		_not_ok "conflict: the L1 heatmap outlines the issue's set" "set '$set'" \
			"$(grep -A3 'Access history' "$work/conflict.txt")"
	fi
	if [ -n "$lines" ] && [ -n "$ways" ] && [ "$lines" -gt "$ways" ] &&
		grep -q "the commonest stride is 4096 bytes" <<<"$hist"; then
		_ok "conflict: the history's stride is 4096 (a row), $lines lines on set $set > $ways ways"
	else
		_not_ok "conflict: the history's stride is 4096, more lines than ways" \
			"lines '$lines' ways '$ways'" "$(grep '<desc' <<<"$hist")"
	fi
	if sed -n '/id="i1-l2"/,/<\/svg>/p' "$dom" | grep -q 'class="set'; then
		_ok "conflict: an L2 heatmap with cells"
	else
		_not_ok "conflict: an L2 heatmap with cells"
	fi
fi

# Capacity (stream.c): one load streaming over an array of 8 x L2 (sysfs
# cpu0 index2, as the geometry read here): one pass touches all of it; a
# capacity issue in soft mode needs the stream's access history
if run capacity "$WL/stream" "$SECONDS_RUN" && need_bp "capacity: the footprint drawn against L2"; then
	dom=$work/capacity.dom
	fp=$(sed -n '/id="i1-fp"/,/<\/svg>/p' "$dom")
	foot=$(grep -o 'class="foot" data-bytes="[0-9]*' <<<"$fp" | grep -o '[0-9]*$')
	l2=$(grep -o 'class="level" data-bytes="[0-9]*' <<<"$fp" | sed -n 2p | grep -o '[0-9]*$')
	if [ -n "$foot" ] && [ -n "$l2" ] && [ "$foot" -eq $((8 * l2)) ]; then
		_ok "capacity: the footprint ($foot bytes) drawn against L2 ($l2 bytes): 8 x"
	else
		_not_ok "capacity: the footprint drawn against L2" "foot '$foot' L2 '$l2'" "$fp"
	fi
fi
done_testing
