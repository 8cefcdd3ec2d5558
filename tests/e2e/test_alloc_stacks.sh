# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Allocation call stacks as a user meets them: tests/workloads/alloc_chain
# allocates its one heap object three calls deep (main -> chain_outer ->
# chain_middle -> chain_inner -> malloc) and then writes into it, so the
# report's issue is related to that object. The expected frames are the
# lines of the cp:chain-* markers in alloc_chain.h and .c, innermost first;
# the live report, its JSON and the report of its recording must all show them.
# Then the same object allocated through a wrapper inlined into main, a
# C++ std::vector whose operator new has no frame pointer (CFI unwinding),
# and an object allocated after more distinct stacks than a stack map holds.
. "$(dirname "$0")/tap.sh"

need_root "allocation probes need root"
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
src=$CP_ROOT/tests/workloads/alloc_chain.h
mark() { grep -n "cp:chain-$1\b" "$src" | cut -d: -f1; }
main_line=$(grep -n "cp:chain-main \*/" "$CP_ROOT/tests/workloads/alloc_chain.c" | cut -d: -f1)
want="chain_inner (alloc_chain.h:$(mark inner)) ← chain_middle (alloc_chain.h:$(mark middle))"
want="$want ← chain_outer (alloc_chain.h:$(mark outer)) ← main (alloc_chain.c:$main_line)"

# run_chain NAME PROFILER-OPTIONS... -- WORKLOAD ARGS: the workload launched directly (a
# shell between would exec it before its allocation probes are attached); "go"
# half a second after it said "ready", so its maps are read while it lives: the
# profiler measures its probes' costs first, which takes a second or more on a
# busy machine, so a timer started with the pipeline can fire before the
# workload has even started. Its own lines ("ready", "touched") go to the same
# stdout as the report, NAME.all; status in rc.
run_chain() {
	local name=$1 opts=()

	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	rm -f "$dir/$name.in"
	mkfifo "$dir/$name.in"
	(exec 3>"$dir/$name.in"; wait_for '^ready ' "$dir/$name.all" 60; sleep 0.5; echo go >&3) &
	"$BIN" --source faults "${opts[@]}" -- "$WL/$1" "${@:2}" <"$dir/$name.in" \
		>"$dir/$name.all" 2>"$dir/$name.err"
	rc=$?
	wait
}

# heap_frames JSON N [inlined]: the first N frames of the issue's heap object,
# "function:file:line" (":inlined" appended with a third argument), space-separated
heap_frames() {
	python3 - "$@" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for o in d["issues"][0]["objects"]:
    if o["kind"] == "heap":
        print(" ".join("%s:%s:%d" % (f["function"], os.path.basename(f["file"] or ""), f["line"])
                       + (":%s" % f["inlined"] if len(sys.argv) > 3 else "")
                       for f in o["alloc_stack"][:int(sys.argv[2])]))
PY
}

run_chain live --json "$dir/live.json" --record "$dir/run.cprec" -- alloc_chain 512
grep -Ev "^(ready|touched) " "$dir/live.all" >"$dir/live"
related=$(grep "Related to the heap object" "$dir/live")
if [ "$rc" -eq 0 ] && grep -qF "allocated by thread" <<<"$related" &&
	grep -qF "at $want" <<<"$related"; then
	_ok "the live report shows the 4-frame allocation stack"
else
	_not_ok "the live report shows the 4-frame allocation stack" "status $rc" \
		"want: $want" "got:  $related"
fi

# JSON: objects[].alloc_stack[], innermost first, one entry per frame
got=$(heap_frames "$dir/live.json" 4)
jwant="chain_inner:alloc_chain.h:$(mark inner) chain_middle:alloc_chain.h:$(mark middle)"
jwant="$jwant chain_outer:alloc_chain.h:$(mark outer) main:alloc_chain.c:$main_line"
if [ "$got" = "$jwant" ]; then _ok "JSON objects[].alloc_stack[] has the 4 frames"; else
	_not_ok "JSON objects[].alloc_stack[] has the 4 frames" "want: $jwant" "got:  $got"; fi

# the recording carries the frames: the replay shows the same stack, same report
expect "report FILE of the recording" 0 "" "$BIN" report "$dir/run.cprec"
if grep -qF "at $want" "$tap_out"; then _ok "the replayed report shows the same stack"; else
	_not_ok "the replayed report shows the same stack" "want: $want"; fi
if [ "$(replayable "$dir/live")" = "$(replayable "$tap_out")" ]; then
	_ok "the replayed report equals the live one, but for breakpoint figures"; else
	_not_ok "the replayed report equals the live one, but for breakpoint figures" \
		"$(diff <(replayable "$dir/live") <(replayable "$tap_out") | head -10)"; fi

# --alloc-wrapper on the replay: the program's own wrappers go from the top of
# the stack, the first frame shown is their caller's
wrapped="at chain_outer (alloc_chain.h:$(mark outer)) ← main (alloc_chain.c:$main_line)"
expect "report FILE --alloc-wrapper chain_inner --alloc-wrapper chain_middle" 0 "" \
	"$BIN" report "$dir/run.cprec" --alloc-wrapper chain_inner --alloc-wrapper chain_middle
if grep "Related to the heap object" "$tap_out" | grep -qF "$wrapped"; then
	_ok "--alloc-wrapper: the stack starts at the wrappers' caller"
else
	_not_ok "--alloc-wrapper: the stack starts at the wrappers' caller" "want: $wrapped" \
		"got:  $(grep "Related to the heap object" "$tap_out")"
fi

# an allocation through a header wrapper inlined into main: the wrapper's line,
# then main's line where it is called (the inline call site), not main's caller
inl_want="chain_inline (alloc_chain.h:$(mark inline)) ← main (alloc_chain.c:$(grep -n \
	"cp:chain-main-inline" "$CP_ROOT/tests/workloads/alloc_chain.c" | cut -d: -f1))"
run_chain inline --json "$dir/inline.json" -- alloc_chain 512 inline
related=$(grep "Related to the heap object" "$dir/inline.all")
if [ "$rc" -eq 0 ] && grep -qF "at $inl_want ← " <<<"$related"; then
	_ok "an inlined wrapper's frame is followed by its caller's line"
else
	_not_ok "an inlined wrapper's frame is followed by its caller's line" "status $rc" \
		"want: $inl_want ← ..." "got:  $related"
fi
got=$(heap_frames "$dir/inline.json" 2 inlined)
jwant="chain_inline:alloc_chain.h:$(mark inline):True main:alloc_chain.c:$(grep -n \
	"cp:chain-main-inline" "$CP_ROOT/tests/workloads/alloc_chain.c" | cut -d: -f1):False"
if [ "$got" = "$jwant" ]; then _ok "JSON marks the inlined frame and gives main's call line"; else
	_not_ok "JSON marks the inlined frame and gives main's call line" "want: $jwant" "got:  $got"; fi

# C++: a std::vector sized in make_counts(), libstdc++'s operator new and the
# vector's internals in between, none with a frame pointer. CFI unwinding of
# the stack copy reaches the user's frames; the allocator's and the standard
# library's go from the top, so the first frame is the user's line.
vsrc=$CP_ROOT/tests/workloads/cxx_vector.cpp
vmark() { grep -n "cp:vector-$1 \*/" "$vsrc" | cut -d: -f1; }
vwant="at make_counts (cxx_vector.cpp:$(vmark resize)) ← main (cxx_vector.cpp:$(vmark main))"
# (it stays 2 s after its stores: a stack copy is unwound only while its
# process lives, and a profiler beside CPU hogs reads the copy late)
CXX_VECTOR_HOLD=2 run_chain vector --json "$dir/vector.json" --record "$dir/vector.cprec" \
	-- cxx_vector 512
related=$(grep "Related to the heap object" "$dir/vector.all")
if [ "$rc" -eq 0 ] && grep -qF "$vwant ← " <<<"$related"; then
	_ok "C++: operator new's and the vector's frames unwound through, the user's first"
else
	_not_ok "C++: operator new's and the vector's frames unwound through, the user's first" \
		"status $rc" "want: $vwant ← ..." "got:  $related"
fi
# the objects table names the same first frame, not operator new (its direct caller)
objline=$(grep -E "^ +[0-9]+ +[0-9]+  heap object \(" "$dir/vector.all" | head -1)
if grep -qF "allocated at make_counts (cxx_vector.cpp:$(vmark resize))" <<<"$objline"; then
	_ok "C++: the objects table says where the user's code allocated"
else
	_not_ok "C++: the objects table says where the user's code allocated" "got:  $objline"
fi
got=$(heap_frames "$dir/vector.json" 2)
jwant="make_counts:cxx_vector.cpp:$(vmark resize) main:cxx_vector.cpp:$(vmark main)"
if [ "$got" = "$jwant" ]; then _ok "C++: JSON alloc_stack[] starts at make_counts"; else
	_not_ok "C++: JSON alloc_stack[] starts at make_counts" "want: $jwant" "got:  $got"; fi
# the same with frame pointers only: the walk stops in operator new, whose
# frame is all that is left (what made the stack copies necessary)
run_chain fponly --alloc-stack-bytes 0 -- cxx_vector 512
related=$(grep "Related to the heap object" "$dir/fponly.all")
if [ "$rc" -eq 0 ] && grep -qF "at _Znwm in libstdc++" <<<"$related" &&
   ! grep -qF "make_counts" <<<"$related"; then
	_ok "C++, --alloc-stack-bytes 0: frame pointers alone stop in operator new"
else
	_not_ok "C++, --alloc-stack-bytes 0: frame pointers alone stop in operator new" \
		"status $rc" "got:  $related"
fi
# false sharing in a vector's element array made by make_unique in a helper
# (--source soft: this machine has no PMU): the issue names the 64-byte array
# at the make_unique line, then the helper's caller
swant="allocated by thread [0-9]+ at make_shared_counts \\(cxx_vector.cpp:$(vmark unique)\\)"
swant="$swant ← share \\(cxx_vector.cpp:$(vmark main-unique)\\)"
"$BIN" --source soft -o "$dir/share.txt" -- "$WL/cxx_vector" share 3 >"$dir/share.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^#1 Application's false sharing" "$dir/share.txt" &&
   grep -A2 "^#1 " "$dir/share.txt" | grep -E "Related to the heap object \(64 bytes\)" |
	grep -Eq "$swant"; then
	_ok "C++ false sharing: the element array named at the make_unique line"
else
	_not_ok "C++ false sharing: the element array named at the make_unique line" \
		"status $rc" "want: $swant" "$(grep -A3 '^#1 ' "$dir/share.txt")"
fi
expect "report FILE of the C++ recording" 0 "" "$BIN" report "$dir/vector.cprec"
if grep "Related to the heap object" "$tap_out" | grep -qF "$vwant ← "; then
	_ok "C++: the replay has the unwound frames (recorded as the site's stack)"
else
	_not_ok "C++: the replay has the unwound frames (recorded as the site's stack)" \
		"$(grep "Related to the heap object" "$tap_out")"
fi

# a long run's stacks: alloc_paths allocates from 24000 distinct stacks (the
# allocation stack maps hold CP_MAX_ALLOC_STACKS = 8192 each; one map of 16384
# used to fill for good), then its one object from late_site(): that late
# call site still has its stack, and few stacks were refused on the way
psrc=$CP_ROOT/tests/workloads/alloc_paths.c
pmark() { grep -n "cp:late-$1 \*/" "$psrc" | cut -d: -f1; }
pwant="at late_site (alloc_paths.c:$(pmark site)) ← main (alloc_paths.c:$(pmark main))"
run_chain paths --overhead 0 --max-alloc-rate 0 --alloc-stack-bytes 0 --json "$dir/paths.json" \
	-- alloc_paths 24000 512
related=$(grep "Related to the heap object" "$dir/paths.all")
if [ "$rc" -eq 0 ] && grep -qF "$pwant ← " <<<"$related"; then
	_ok "after 24000 distinct stacks, a new call site's object has its stack"
else
	_not_ok "after 24000 distinct stacks, a new call site's object has its stack" \
		"status $rc" "want: $pwant ← ..." "got:  $related"
fi
errors=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["drops"]["alloc_stack_errors"])' \
	"$dir/paths.json" 2>/dev/null)
if [ -n "$errors" ] && [ "$errors" -le 4800 ]; then
	_ok "stacks refused over 24000 distinct ones: $errors, at most a fifth"
else
	_not_ok "stacks refused over 24000 distinct ones: at most a fifth" "got: ${errors:-none}"
fi

# the drops a long run watches are in the JSON, with the other drops
keys=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["drops"]
print(" ".join(k for k in ("stack_lost_at_take", "stack_store_evicted", "bpf_recursion_misses",
    "bpf_recursion_misses_by_program", "alloc_stack_errors", "alloc_stacks_missing") if k in d))' \
	"$dir/paths.json" 2>/dev/null)
want_keys="stack_lost_at_take stack_store_evicted bpf_recursion_misses"
want_keys="$want_keys bpf_recursion_misses_by_program alloc_stack_errors alloc_stacks_missing"
if [ "$keys" = "$want_keys" ]; then _ok "JSON drops has the stack and BPF recursion drops"; else
	_not_ok "JSON drops has the stack and BPF recursion drops" "want: $want_keys" "got:  $keys"; fi

done_testing
