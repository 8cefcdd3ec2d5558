# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The callers of an issue's instruction as a user meets them: the one store of
# tests/workloads/callers (touch(), cp:callers-touch) faults 2 x 256 pages
# through main -> path_a -> via_a -> inner and 256 through main -> path_b ->
# inner. With --source faults each first touch of a page is one sample, so the
# issue's line has 768 samples with a stack: 512 (66.7 %) on the first path,
# 256 (33.3 %) on the second. `--callers 2` must name both paths with those
# shares, innermost caller first at the lines of the cp:callers-* markers;
# JSON lists them with their frames; the recording's replay shows the same.
# Those runs walk every sample's stack (--stack-every 1); by default one in 32
# is walked and counted as 32, so the shares are estimates (checked last).
# callers_nofp has no frame pointer in inner(): only the CFI unwinding of
# stack copies finds the two paths there.
. "$(dirname "$0")/tap.sh"

need_root "page-fault events and BPF need root"
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
src=$CP_ROOT/tests/workloads/callers.c
mark() { grep -n "cp:callers-$1 \*/" "$src" | cut -d: -f1; }
path_a="inner (callers.c:$(mark inner)) ← via_a (callers.c:$(mark via-a)) ← path_a (callers.c:$(mark path-a)) ← main (callers.c:$(mark main-a))"
path_b="inner (callers.c:$(mark inner)) ← path_b (callers.c:$(mark path-b)) ← main (callers.c:$(mark main-b))"

# run NAME PROFILER-OPTIONS...: the workload launched by the profiler, told "go"
# once it said "ready" (the profiler measures its costs first); report in NAME.all
run() {
	local name=$1

	shift
	rm -f "$dir/$name.in"
	mkfifo "$dir/$name.in"
	(exec 3>"$dir/$name.in"; wait_for '^ready ' "$dir/$name.all" 60; echo go >&3) &
	"$BIN" --source faults "$@" -- "${WLDIR:-$WL}/${PROG:-callers}" "${PAGES:-256}" ${LINGER:+"$LINGER"} \
		<"$dir/$name.in" \
		>"$dir/$name.all" 2>"$dir/$name.err"
	rc=$?
	wait
}

# callers_of FILE: the "called from" block under the issue's instruction
callers_of() { grep -A2 "called from" "$1"; }

# it lingers 1.5 s after its faults: a snapshot of its maps taken at its exec,
# before ld.so mapped libc, is refreshed while it lives (the replay has the
# recorded maps), so live and replay name the same libc frames
LINGER=1500 run live --stack-every 1 --callers 2 --json "$dir/live.json" --record "$dir/run.cprec" \
	--folded "$dir/live.folded" --pprof "$dir/live.pb.gz"
got=$(callers_of "$dir/live.all")
if [ "$rc" -eq 0 ] && grep -qF "(touch)" "$dir/live.all" &&
	grep -qF "called from (2 of 2 paths; 768 samples with a stack):" <<<"$got" &&
	grep -qF " 66.7 %  $path_a" <<<"$got" && grep -qF " 33.3 %  $path_b" <<<"$got"; then
	_ok "--callers 2: both paths into touch()'s store, with their shares"
else
	_not_ok "--callers 2: both paths into touch()'s store, with their shares" "status $rc" \
		"want: 66.7 %  $path_a" "want: 33.3 %  $path_b" "got:  $got" \
		"$(head -5 "$dir/live.err")"
fi

# JSON: the same paths, shares and frames (the workload's; libc's start follows)
jgot=$(python3 - "$dir/live.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for c in d["issues"][0]["instructions"][0]["callers"]:
    print("%.4f %d %s %s" % (c["share"], c["count"], c["unit"],
          " ".join("%s:%s" % (f["function"], f["line"]) for f in c["frames"]
                   if os.path.basename(f["file"] or "") == "callers.c")))
PY
)
jwant="0.6667 512 samples inner:$(mark inner) via_a:$(mark via-a) path_a:$(mark path-a) main:$(mark main-a)
0.3333 256 samples inner:$(mark inner) path_b:$(mark path-b) main:$(mark main-b)"
if [ "$(head -2 <<<"$jgot")" = "$jwant" ]; then _ok "JSON callers[]: the two paths, shares, frames"; else
	_not_ok "JSON callers[]: the two paths, shares, frames" "want: $jwant" "got:  $jgot"; fi

# the exports carry the same stacks, root first: folded lines and pprof's traces
if grep -qE ';main;path_a;via_a;inner;touch 512$' "$dir/live.folded" &&
	grep -qE ';main;path_b;inner;touch 256$' "$dir/live.folded"; then
	_ok "--folded: the two paths into touch(), 512 and 256 faults"; else
	_not_ok "--folded: the two paths into touch(), 512 and 256 faults" \
		"$(grep touch "$dir/live.folded")"; fi
if command -v go >/dev/null; then
	export HOME=$dir/home GOCACHE=$dir/gocache GOTOOLCHAIN=local
	traces=$(go tool pprof -traces "$dir/live.pb.gz" 2>&1)
	# a trace lists its frames innermost first, one per line, after its value
	if grep -A4 -E '^ +512 ' <<<"$traces" | tr -s ' \n' ' ' |
		grep -qE 'touch inner via_a path_a main'; then
		_ok "--pprof: go tool pprof -traces shows touch <- inner <- via_a <- path_a <- main"
	else
		_not_ok "--pprof: go tool pprof -traces shows the path of 512" "$(head -40 <<<"$traces")"
	fi
else
	skip "go tool pprof: go is not installed (packaging/deps.sh installs golang-go)"
fi

# the recording carries the stacks: the replay lists the same paths
expect "report FILE --callers 2 of the recording" 0 "" "$BIN" report "$dir/run.cprec" --callers 2
if [ "$(callers_of "$tap_out")" = "$got" ] && [ -n "$got" ]; then
	_ok "the replay shows the same callers"
else
	_not_ok "the replay shows the same callers" "live:   $got" "replay: $(callers_of "$tap_out")"
fi
if [ "$(replayable "$dir/live.all" | grep -Ev '^(ready|touched) ')" = "$(replayable "$tap_out")" ]; then
	_ok "the replayed report equals the live one, but for breakpoint figures"; else
	_not_ok "the replayed report equals the live one, but for breakpoint figures" \
		"$(diff <(replayable "$dir/live.all" | grep -Ev '^(ready|touched) ') \
			<(replayable "$tap_out") | head -10)"; fi

# --callers 1: the most counted path only; the default: none
expect "report FILE --callers 1" 0 "" "$BIN" report "$dir/run.cprec" --callers 1
if grep -qF "called from (1 of 2 paths; 768 samples with a stack):" "$tap_out" &&
	! grep -qF "$path_b" "$tap_out"; then
	_ok "--callers 1: the first path only"; else
	_not_ok "--callers 1: the first path only" "$(callers_of "$tap_out")"; fi
expect "report FILE without --callers" 0 "" "$BIN" report "$dir/run.cprec"
if ! grep -q "called from" "$tap_out"; then _ok "no --callers: no paths in the text"; else
	_not_ok "no --callers: no paths in the text"; fi
# the default, one stack in 32, on 4 x 1024 pages: ~96 of the 3072 samples
# walked, each worth 32, so the counts are multiples of 32 and path A's share
# is 2/3 give or take the binomial's spread (sd 0.048 for 96 draws: [0.40,
# 0.90] is over 4.8 sd each side)
PAGES=1024 run sampled --callers 2
got=$(callers_of "$dir/sampled.all")
total=$(sed -nE 's/.*called from \(2 of 2 paths; ([0-9]+) samples with a stack\):.*/\1/p' <<<"$got")
share_a=$(grep -F "$path_a" <<<"$got" | awk '{ print $1 }')
if [ "$rc" -eq 0 ] && [ -n "$total" ] && [ $((total % 32)) -eq 0 ] &&
	grep -qF "$path_b" <<<"$got" &&
	awk -v s="$share_a" 'BEGIN { exit !(s >= 40 && s <= 90) }'; then
	_ok "--stack-every 32 (default): both paths, counts of 32, path A near 2/3 ($share_a %)"
else
	_not_ok "--stack-every 32 (default): both paths, counts of 32, path A near 2/3" \
		"status $rc" "got: $got" "$(head -5 "$dir/sampled.err")"
fi
run off --stack-every 0 --callers 2
if [ "$rc" -eq 0 ] && ! grep -q "called from" "$dir/off.all" && grep -qF "(touch)" "$dir/off.all"; then
	_ok "--stack-every 0: the issue, no paths"; else
	_not_ok "--stack-every 0: the issue, no paths" "status $rc" "$(head -20 "$dir/off.all")"; fi

# callers_nofp: inner() keeps no frame pointer and zeroes rbp, so the
# frame-pointer walk from touch() stops at inner() on both paths (one stack
# id); the copies of those stacks, unwound by CFI, tell the paths apart
# again and go on to libc's start (__libc_start_call_main), where they
# stop as a whole frame-pointer walk does (never __libc_start_main_impl or
# _start, which only CFI reaches: one path is one path). 128 pages: ~440 walked events whose copies fit the
# copy ring (~990) even if the profiler read nothing until the end, so the
# shares are exact on a busy machine too; the workload stays 3 s after its
# stores, as its modules are opened for copies only while it lives. Copies
# read after its exit record (a slow drain) are walked in those: none is
# left "not unwound, their process gone".
PROG=callers_nofp PAGES=128 LINGER=3000 run nofp --stack-every 1 --callers 2 -v --record "$dir/nofp.cprec"
got=$(callers_of "$dir/nofp.all")
copies=$(grep -o 'call stacks: [0-9]* walked events copied, [0-9]* made deeper by CFI; [0-9]* counted' \
	"$dir/nofp.err")
gone=$(sed -n 's/.*; \([0-9]*\) not unwound, their process gone.*/\1/p' "$dir/nofp.err")
if [ "$rc" -eq 0 ] && grep -qF "called from (2 of 2 paths; 384 samples with a stack):" <<<"$got" &&
	grep -qF " 66.7 %  $path_a ← __libc_start_call_main" <<<"$got" &&
	grep -qF " 33.3 %  $path_b ← __libc_start_call_main" <<<"$got" &&
	! grep -qE "__libc_start_main_impl|_start in" <<<"$got" &&
	awk '{ exit !($7 >= 384 && $12 == 0) }' <<<"$copies" && [ "$gone" = 0 ]; then
	_ok "CFI: both paths through a frameless inner(), shares exact ($copies)"
else
	_not_ok "CFI: both paths through a frameless inner(), shares exact" "status $rc" \
		"got: $got" "copies: $copies; $gone not unwound, their process gone" \
		"$(head -5 "$dir/nofp.err")"
fi
expect "report FILE --callers 2 of the CFI run's recording" 0 "" \
	"$BIN" report "$dir/nofp.cprec" --callers 2
if [ "$(callers_of "$tap_out")" = "$got" ] && [ -n "$got" ]; then
	_ok "the replay shows the CFI run's callers"
else
	_not_ok "the replay shows the CFI run's callers" "live:   $got" \
		"replay: $(callers_of "$tap_out")"
fi

# The same program as a tenant's file (its copy owned by nobody, in nobody's
# directory): its CFI is read by the describe server alone, which walks its
# frames and hands the walk back at libc's (the host's, walked here), so the
# paths are the very ones above, and the Limits line counts the server's walks.
tdir=$(tenant_dir) || skip_all "cannot make a directory for the tenant"
cp "$WL/callers_nofp" "$tdir/" && chown nobody:nogroup "$tdir/callers_nofp"
WLDIR=$tdir PROG=callers_nofp PAGES=128 LINGER=3000 run tenant --stack-every 1 --callers 2 -v
tgot=$(callers_of "$dir/tenant.all")
# unwinds_of NAME: the describe server's walks in run NAME's Limits
unwinds_of() {
	sed -n 's/^  describe server (tenants. files): [0-9]* requests, \([0-9]*\) unwinds.*/\1/p' \
		"$dir/$1.all"
}
unwinds=$(unwinds_of tenant)
if [ "$rc" -eq 0 ] && [ -n "$got" ] && [ "$tgot" = "$got" ] && [ "${unwinds:-0}" -ge 384 ]; then
	_ok "CFI of a tenant's program walked by the describe server: the same paths ($unwinds walks)"
else
	_not_ok "CFI of a tenant's program walked by the describe server: the same paths" \
		"status $rc" "here:   $got" "server: $tgot" "walks: ${unwinds:-none}" \
		"$(grep -A8 '^Limits' "$dir/tenant.all")"
fi

# served NAME DESC: run NAME found the paths above for touch(), the describe server walked
# the tenant's program (384 walks at least) and no parse worker vetted it
# (libdw in the profiler never parsed it: it was the server's alone)
served() {
	local name=$1 desc=$2 tgot unwinds
	# (the first issue's: a wrapper's own faults may make another)
	tgot=$(callers_of "$dir/$name.all" | head -3)
	unwinds=$(unwinds_of "$name")
	if [ "$rc" -eq 0 ] && [ -n "$got" ] && [ "$tgot" = "$got" ] && [ "${unwinds:-0}" -ge 384 ] &&
		grep -q '^  file copies: .*; 0 parsed first by a worker' "$dir/$name.all"; then
		_ok "$desc: the same paths, $unwinds walks by the server, none vetted"
	else
		_not_ok "$desc: the same paths, walked by the server, none vetted" \
			"status $rc" "here:   $got" "server: $tgot" "walks: ${unwinds:-none}" \
			"$(grep -A8 '^Limits' "$dir/$name.all")"
	fi
}

# With --record: the live run makes the process's own Dwfl from the maps text
# it records, and judges the tenant's program there as without --record (the
# server's, never vetted nor walked here); the replay shows the same callers.
WLDIR=$tdir PROG=callers_nofp PAGES=128 LINGER=3000 run tenant_rec --stack-every 1 --callers 2 -v \
	--record "$dir/tenant.cprec"
served tenant_rec "--record, a tenant's program"
live_callers=$(callers_of "$dir/tenant_rec.all")
expect "report FILE --callers 2 of the tenant's recording" 0 "" \
	"$BIN" report "$dir/tenant.cprec" --callers 2
if [ -n "$live_callers" ] && [ "$(callers_of "$tap_out")" = "$live_callers" ] &&
	[ "$(replayable "$dir/tenant_rec.all" | grep -Ev '^(ready|touched) |^  describe server ')" = \
		"$(replayable "$tap_out" | grep -v '^  describe server ')" ]; then
	_ok "the tenant's recording replays as the live run reported"
else
	_not_ok "the tenant's recording replays as the live run reported" \
		"$(diff <(replayable "$dir/tenant_rec.all" | grep -Ev '^(ready|touched) ') \
			<(replayable "$tap_out") | head -10)"
fi

# The tenant's program deleted once it runs (a wrapper opens it, unlinks it
# and executes what it holds open): no file on disk is the one mapped, so the
# process's own Dwfl holds it (found through map_files). Its frames are still
# the server's, walked from the kept copy of the content judged.
cp "$WL/callers_nofp" "$tdir/gone.bin"
printf '#!/bin/sh\nexec 3<"$0.bin" && rm -f "$0.bin" && exec /proc/self/fd/3 "$@"\n' >"$tdir/gone"
chmod 0755 "$tdir/gone" && chown nobody:nogroup "$tdir/gone" "$tdir/gone.bin"
WLDIR=$tdir PROG=gone PAGES=128 LINGER=3000 run gone --stack-every 1 --callers 2 -v
if [ -e "$tdir/gone.bin" ]; then
	_not_ok "the tenant's program ran deleted" "$(head -5 "$dir/gone.err")"
else
	served gone "a tenant's program deleted since it was mapped"
fi
rm -rf "$tdir"

PROG=callers_nofp PAGES=128 run nofp_fp --stack-every 1 --callers 2 --stack-copy-bytes 0
got=$(callers_of "$dir/nofp_fp.all")
if [ "$rc" -eq 0 ] && grep -qF "called from (1 of 1 paths; 384 samples with a stack):" <<<"$got" &&
	grep -qE "^ +100\.0 %  inner \(callers\.c:$(mark inner)\)$" <<<"$got"; then
	_ok "--stack-copy-bytes 0: the walk stops at inner(), one path"
else
	_not_ok "--stack-copy-bytes 0: the walk stops at inner(), one path" "status $rc" "got: $got"
fi

expect "--callers 65 is refused" 2 "--callers: '65' is not a whole number from 0 to 64" \
	"$BIN" report "$dir/run.cprec" --callers 65

done_testing
