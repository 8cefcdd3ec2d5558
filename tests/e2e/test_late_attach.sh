# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Objects allocated before the profiler attached (`-p PID` on a running
# program): no allocation probe saw their malloc, so only glibc's own chunk
# headers, read from the target's memory, can name them. tests/workloads/
# late_attach.c allocates one object (in the main arena's [heap], as an
# mmapped chunk, or in another thread's arena), says "ready", and only after
# the profiler attached and sent "go" makes two threads falsely share its
# first line. The soft source finds the false sharing; the issue must name
# the object at its address with its size, and never present the mapping
# around it (135168 bytes for a fresh [heap] or arena heap) as the object.
# Under jemalloc (preloaded, when installed), whose metadata is not read, the
# report says so and gives bytes of the line only.
#
# The size shown is malloc_usable_size(), the bytes the user may use: the
# chunk header knows the chunk's size, not the request, and the usable size
# is the request rounded up, which the user recognizes and can check. In
# glibc (x86-64) a request takes a chunk of max(32, request + 8 rounded up to
# 16), of which the user may use all but its 8-byte size field; a request
# above the mmap threshold gets its own mapping of request + 8 rounded to 16,
# plus 8, rounded up to a page, of which the 16-byte header is not usable.
. "$(dirname "$0")/tap.sh"

need_root "attaching to a process needs root"
SECONDS_RUN=${CP_SOFT_SECONDS:-3}
src=$CP_ROOT/tests/workloads/late_attach.c
small=$(awk '$1 == "#define" && $2 == "LATE_SMALL_BYTES" { print $3 }' "$src")
big=$(awk '$1 == "#define" && $2 == "LATE_BIG_BYTES" { print $3 }' "$src")
write_line=$(grep -n "MARK: late-write \*/" "$src" | cut -d: -f1)
dir=$(mktemp -d)
wl_pid=
cleanup() {
	[ -n "$wl_pid" ] && kill "$wl_pid" 2>/dev/null
	exec 3>&- 2>/dev/null
	rm -rf "$dir" "$tap_out"
}
trap cleanup EXIT

usable_heap() {
	local c=$((($1 + 8 + 15) & ~15))
	[ "$c" -lt 32 ] && c=32
	echo $((c - 8))
}
usable_mmapped() {
	local nb=$((($1 + 8 + 15) & ~15))
	echo $((((nb + 8 + 4095) & ~4095) - 16))
}

# wait_for FILE PATTERN SECONDS: until the extended regex PATTERN is in FILE
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# issue: the false-sharing issue of the report, up to its hint
issue() { sed -n '/^Issues/,/^Instructions/p' "$dir/txt" | awk '
	/^#[0-9]+ Application.s false sharing/ { on = 1 } on { print } on && /^  Hint:/ { exit }'; }

# start MODE [PRELOAD]: late_attach MODE, attached after its allocation, profiled
# into $dir/txt and $dir/json; sets addr and map_bytes (the mapping holding the
# object). Returns 1 (said) when the run fails.
start() {
	local mode=$1 preload=${2:-} rc
	rm -f "$dir"/*
	mkfifo "$dir/in"
	LD_PRELOAD=$preload "$WL/late_attach" "$mode" "$SECONDS_RUN" <"$dir/in" >"$dir/wl" 2>&1 &
	wl_pid=$!
	exec 3>"$dir/in"
	if ! wait_for "$dir/wl" "^ready " 20; then
		_not_ok "$mode: the workload allocates its object" "$(cat "$dir/wl")"
		return 1
	fi
	addr=$(awk '$1 == "object" { print $2 }' "$dir/wl")
	# the mapping that holds the object, as the kernel shows it now
	map_bytes=0
	while read -r range _; do
		if ((addr >= 0x${range%-*} && addr < 0x${range#*-})); then
			map_bytes=$((0x${range#*-} - 0x${range%-*}))
			break
		fi
	done <"/proc/$wl_pid/maps"
	timeout --kill-after=10 180 "$BIN" -v --source soft -p "$wl_pid" -o "$dir/txt" \
		--json "$dir/json" 2>"$dir/err" &
	local ppid=$!
	# the threads start writing once the profiler samples them
	wait_for "$dir/err" "sampling events" 120
	echo go >&3
	exec 3>&-
	wait "$ppid"
	rc=$?
	wait "$wl_pid"
	wl_pid=
	if [ "$rc" -ne 0 ]; then
		_not_ok "$mode: the run exits 0" "status $rc" "$(tail -5 "$dir/err")"
		return 1
	fi
}

# late MODE USABLE: the issue names late_attach MODE's object and its USABLE bytes
late() {
	local mode=$1 usable=$2 block want obj
	start "$mode" || return 1
	block=$(issue)
	want="Related to the heap object at $addr ($usable bytes, glibc chunk) allocated before profiling began, call site unknown"
	if [ -z "$block" ]; then
		_not_ok "$mode: false sharing found" "$(sed -n '/^Issues/,/^Instructions/p' "$dir/txt")"
		return 1
	fi
	if grep -qF "late_attach.c: $write_line (writer)" <<<"$block" && grep -qF -- "$want" <<<"$block"
	then _ok "$mode: the issue names the object at $addr, $usable bytes, allocated before attach"
	else _not_ok "$mode: the issue names the object at $addr, $usable bytes, allocated before attach" \
		"want: $want" "$block"; fi
	if grep -qF "pad or align the object ($usable bytes)" <<<"$block" &&
		grep -qF "Offsets in the $usable-byte object: " <<<"$block"; then
		_ok "$mode: the hint pads the $usable-byte object"
	else _not_ok "$mode: the hint pads the $usable-byte object" "$block"; fi
	# neither the mapping's size nor a fresh heap's (what the hint said before)
	if ! grep -Eq "(135168|$map_bytes)[ -]byte|\((135168|$map_bytes) bytes|no allocation seen" <<<"$block"
	then _ok "$mode: no mapping ($map_bytes bytes) presented as the object"
	else _not_ok "$mode: no mapping ($map_bytes bytes) presented as the object" "$block"; fi
	obj=$(sed -n '/^  "issues": \[/,/^  \],/p' "$dir/json" | grep -A12 '"objects": \[' | head -14)
	if grep -q '"kind": "heap"' <<<"$obj" && grep -q "\"size\": $usable," <<<"$obj" &&
		grep -q "\"start\": \"$addr\"" <<<"$obj" && grep -q '"found_by": "glibc_chunk"' <<<"$obj" &&
		grep -q '"before_attach": true' <<<"$obj"; then
		_ok "$mode: JSON: the object, found by glibc_chunk, $usable bytes at $addr"
	else _not_ok "$mode: JSON: the object, found by glibc_chunk, $usable bytes at $addr" "$obj"; fi
	if grep -Eq "^ +[0-9]+ +[0-9]+  heap object at $addr \($usable bytes, glibc chunk\), allocated before attach$" "$dir/txt"
	then _ok "$mode: the objects section counts its samples"
	else _not_ok "$mode: the objects section counts its samples" \
		"$(sed -n '/^Objects with/,/^$/p' "$dir/txt")"; fi
}

late small "$(usable_heap "$small")"
late big "$(usable_mmapped "$big")"
late arena "$(usable_heap "$small")"

# jemalloc keeps its metadata elsewhere, in a form we do not read: the report
# says so, names no object and gives bytes of the line, never a mapping's size
# Two 8-byte objects allocated before attach, next to each other on one line,
# each written by one thread: no probe saw who allocated them, so the rule is
# the other one (docs/architecture.md, the report step): distinct objects on the line, each used by
# a thread of its own, are the allocator's placement. Both are named from
# their chunk headers.
pair=$(usable_heap "$(awk '$1 == "#define" && $2 == "LATE_PAIR_BYTES" { print $3 }' "$src")")
if start pair; then
	addr2=$(awk '$1 == "object2" { print $2 }' "$dir/wl")
	block=$(sed -n '/^Issues/,/^Instructions/p' "$dir/txt" | awk '
		/^#[0-9]+ Allocator.s false sharing/ { on = 1 } on { print } on && /^  Hint:/ { exit }')
	if grep -qF "late_attach.c: $write_line (writer)" <<<"$block" &&
		grep -qF "the heap object at $addr ($pair bytes, glibc chunk) allocated before profiling began" <<<"$block" &&
		grep -qF "the heap object at $addr2 ($pair bytes, glibc chunk) allocated before profiling began" <<<"$block" &&
		grep -qF "Hint: Objects each used by different threads share a 64-byte line" <<<"$block"; then
		_ok "pair: allocator's false sharing of the objects at $addr and $addr2, threads unseen"
	else
		_not_ok "pair: allocator's false sharing of the objects at $addr and $addr2, threads unseen" \
			"${block:-$(sed -n '/^Issues/,/^Instructions/p' "$dir/txt")}"
	fi
fi

je=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib64/libjemalloc.so.2 2>/dev/null | head -1)
if [ -z "$je" ]; then
	skip "jemalloc: libjemalloc.so.2 is not installed"
elif start small "$je"; then
	block=$(issue)
	if grep -qF "Related to memory [anon] with no allocation seen (jemalloc: its metadata is not read, so no object is named)" <<<"$block" &&
		grep -qF "pad or align the data each thread writes to 64 bytes. Bytes of the line: " <<<"$block" &&
		! grep -Eq "\(($map_bytes|135168) bytes|-byte object" <<<"$block" &&
		sed -n '/^  "issues": \[/,/^  \],/p' "$dir/json" | grep -q '"allocator": "jemalloc"'; then
		_ok "jemalloc: its metadata is not read, said; line offsets only"
	else
		_not_ok "jemalloc: its metadata is not read, said; line offsets only" \
			"${block:-$(sed -n '/^Issues/,/^Instructions/p' "$dir/txt")}"
	fi
fi
done_testing
