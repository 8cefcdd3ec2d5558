# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# --pprof, --folded and --pprof-dir read by their real consumer, Debian's
# `go tool pprof` (docs/pprof.md):
#   - the golden recording's profile and folded stacks are the checked-in
#     ones (tests/golden/README.md says why each value is right), and pprof
#     shows its functions, build-id and labels;
#   - a live soft run of a workload with known false sharing: pprof -top,
#     -traces and -tags name the workload's function and the issue's labels,
#     its sample types are time (ticks, cpu), never misses;
#   - --pprof-dir writes profiles pprof reads, each with its interval's call
#     stacks, keeps --pprof-keep of ours and removes nothing else; a
#     directory it cannot write is said at start.
# The live parts need root; without go the pprof reads are skipped.
. "$(dirname "$0")/tap.sh"

golden=$(cd "$CP_ROOT/tests/golden" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
export HOME=$dir/home GOCACHE=$dir/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$HOME"
have_go=$(command -v go)

# pprof ARGS...: `go tool pprof ARGS` into $tap_out, status in $rc
pprof() { run_cmd go tool pprof "$@"; }

# has DESC PATTERN...: every extended regex PATTERN matches a line of $tap_out
has() {
	local desc=$1 p missing=
	shift
	for p in "$@"; do grep -Eq -- "$p" "$tap_out" || missing+="/$p/ "; done
	if [ "$rc" -eq 0 ] && [ -z "$missing" ]; then _ok "$desc"
	else _not_ok "$desc" "status $rc, missing $missing"; fi
}

# --- the golden recording ---
"$BIN" report --path-map "/tmp/cacheperf-golden=$golden" --pprof "$dir/chain.pb.gz" \
	--folded "$dir/chain.folded" "$golden/chain.cprec" >"$dir/txt" 2>"$dir/err"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$dir/err" ] && cmp -s "$dir/txt" "$golden/chain.txt"; then
	_ok "report --pprof --folded: exit 0, no warning, the text report unchanged"
else _not_ok "report --pprof --folded: exit 0, no warning, the text report unchanged" \
	"status $rc" "$(cat "$dir/err")"; fi
# the serialized profile byte for byte; gzip's own bytes depend on zlib's version
if cmp -s <(zcat "$dir/chain.pb.gz") <(zcat "$golden/chain.pb.gz"); then
	_ok "the pprof profile is the golden one"
else _not_ok "the pprof profile is the golden one"; fi
if cmp -s "$dir/chain.folded" "$golden/chain.folded"; then _ok "the folded stacks are the golden ones"
else _not_ok "the folded stacks are the golden ones" "$(diff "$golden/chain.folded" "$dir/chain.folded")"; fi
# gzip header: deflate, no name, modification time 0 (bytes 4-7): the same file every time
if [ "$(od -An -tx1 -N8 "$dir/chain.pb.gz" | tr -d ' ')" = 1f8b080000000000 ]; then
	_ok "gzip without a time stamp or name"
else _not_ok "gzip without a time stamp or name" "$(od -An -tx1 -N10 "$dir/chain.pb.gz")"; fi
if [ "$(stat -c %a "$dir/chain.pb.gz") $(stat -c %a "$dir/chain.folded")" = "600 600" ]; then
	_ok "mode 0600, as the reports"
else _not_ok "mode 0600, as the reports" "$(stat -c '%a %n' "$dir"/chain.*)"; fi

if [ -z "$have_go" ]; then
	skip "go tool pprof: go is not installed (packaging/deps.sh installs golang-go)"
else
	# 512 faults at main's touch (chain.c:72), 2 in chain_inner (alloc_chain.h:24), 1 in
	# [uprobes]: samples only (a page-fault source), the issue's labels on main's sample
	pprof -raw "$golden/chain.pb.gz"
	has "pprof -raw of the golden profile: types, locations, mapping with its build-id, labels" \
		'^samples/count\[dflt\]$' '^PeriodType: page_faults count$' \
		'^ +512: 1 $' \
		'issue_type:\[capacity_or_conflict\] object:\[chain_inner alloc_chain.h:22\] origin:\[application\]' \
		'^ +1: 0x4011d3 M=1 main tests/golden/chain.c:72 s=0$' \
		'^ +2: 0x401049 M=1 chain_inner tests/workloads/alloc_chain.h:24 s=0$' \
		'^1: 0x401000/0x402000/0x1000 /tmp/cacheperf-golden/chain 275594ab6559d6afedd5b987ae7e506973a52ef4 \[FN\]\[FL\]\[LN\]$'
	if grep -Eq '(^| )misses/' "$tap_out"; then _not_ok "no misses type from page faults"; else
		_ok "no misses type from page faults"; fi
	pprof -top "$golden/chain.pb.gz"
	has "pprof -top of the golden profile: main 512, chain_inner 2 of 515" \
		'Total samples = 515' '^ +512 99\.42% 99\.42% +512 99\.42% +main$' \
		'^ +2 +0\.39% 99\.81% +2 +0\.39% +chain_inner$'
fi

# --- bad input ---
expect "--pprof - is refused" 2 "--pprof: give a file name" "$BIN" --pprof - -- true
expect "--pprof and --folded in one file are refused" 2 "name the same file" \
	"$BIN" --pprof "$dir/x" --folded "$dir/x" -- true
expect "--pprof-dir is for runs" 2 "--pprof-dir writes a profile per interval" \
	"$BIN" report --pprof-dir "$dir" "$golden/chain.cprec"
expect "--pprof-keep 0 is refused" 2 "--pprof-keep: '0' is not a whole number" \
	"$BIN" --pprof-keep 0 -- true

if [ "$(id -u)" -ne 0 ]; then
	skip "live runs need root"
	done_testing
	exit 0
fi
expect "an unwritable --pprof-dir is said before the run" 1 \
	"--pprof-dir $dir/none: No such file or directory" \
	"$BIN" --source soft --pprof-dir "$dir/none" -- true
expect "a file as --pprof-dir is said before the run" 1 "--pprof-dir $dir/txt: not a directory" \
	"$BIN" --source soft --pprof-dir "$dir/txt" -- true

# --- a live soft run of false sharing (tests/workloads/false_sharing.c, MARK: fs-write) ---
mkdir "$dir/d"
# ours, older than anything the run writes; and files that are not ours
for t in 1 2 3; do echo old >"$dir/d/cacheperf-$t-000001.pb.gz"; done
echo keep >"$dir/d/other.pb.gz"
echo keep >"$dir/d/cacheperf-notes.txt"
run_cmd "$BIN" --source soft -i 1 --pprof "$dir/fs.pb.gz" --folded "$dir/fs.folded" \
	--pprof-dir "$dir/d" --pprof-keep 2 -o "$dir/fs.txt" -- "$WL/false_sharing" 3
if [ "$rc" -eq 0 ] && grep -q "^#1 Application's false sharing" "$dir/fs.txt"; then
	_ok "soft run of false_sharing: exit 0, false sharing reported"
else _not_ok "soft run of false_sharing: exit 0, false sharing reported" "status $rc" \
	"$(sed -n '/^Issues/,/^Instructions/p' "$dir/fs.txt" | head)"; fi
# the folded stacks: the process, then worker's callers, root first:
# libc's start_thread, which keeps no frame pointer (the walk stops at
# worker; the stack copies unwound by CFI reach it), then worker. CFI
# stops at the thread's start function, never its caller __clone3, as a
# whole frame-pointer walk would (docs/stacks.md): one path is one path.
# __clone3 as the leaf is a tick in a new thread before it called
# start_thread (one of 3,640 in a CI run beside two hogs): not a path past it
if grep -Eq '^false_sharing;start_thread;worker [0-9]+$' "$dir/fs.folded" &&
	! grep -q '__clone3;' "$dir/fs.folded"; then
	_ok "folded: false_sharing;start_thread;worker N"
else _not_ok "folded: false_sharing;start_thread;worker N" "$(head "$dir/fs.folded")"; fi

ours=$(cd "$dir/d" && ls | grep -E '^cacheperf-[0-9]+-[0-9]{6}\.pb\.gz$' | sort -t- -k2,2n -k3,3n)
new=$(grep -v -e '^cacheperf-[123]-000001' <<<"$ours" | tail -1)
if [ "$(wc -l <<<"$ours")" -le 2 ] && [ -n "$new" ] && [ ! -e "$dir/d/cacheperf-1-000001.pb.gz" ] &&
	[ -e "$dir/d/other.pb.gz" ] && [ -e "$dir/d/cacheperf-notes.txt" ] &&
	! ls "$dir/d" | grep -q '\.pb\.gz\.'; then
	_ok "--pprof-dir: new profiles, at most --pprof-keep 2 of ours, the oldest gone, others kept"
else _not_ok "--pprof-dir: new profiles, at most --pprof-keep 2 of ours, the oldest gone, others kept" \
	"$(ls -la "$dir/d")"; fi

if [ -z "$have_go" ]; then
	skip "go tool pprof: go is not installed"
	done_testing
	exit 0
fi
pprof -top "$dir/fs.pb.gz"
has "pprof -top: time in worker, default type cpu" '^Type: cpu$' ' worker$'
pprof -traces "$dir/fs.pb.gz"
has "pprof -traces: worker with the issue's labels" ' worker$' \
	'issue_type: +false_sharing' 'origin: +application' 'comm: +false_sharing'
pprof -tags "$dir/fs.pb.gz"
has "pprof -tags: issue_type, origin, object, comm, pid" '^ issue_type: Total' \
	'\(.*\): false_sharing$' '\(.*\): application$' '^ object: Total' '^ comm: Total' '^ pid: Total'
pprof -raw "$dir/fs.pb.gz"
has "pprof -raw: ticks and cpu nanoseconds, the soft note" '^ticks/count cpu/nanoseconds\[dflt\]$' \
	'impact is time share'
# the types line, not the note, which says the misses are not measured
if grep -Eq '(^| )misses/' "$tap_out"; then _not_ok "soft: no misses type"
else _ok "soft: no misses type"; fi
pprof -top "$dir/d/$new"
has "pprof reads an interval's profile: worker" ' worker$'
# an interval's profile has that interval's call stacks, not leaves only:
# worker's caller is libc's start_thread (one of the kept files, the last
# interval may be short)
traced=
for f in $(grep -v -e '^cacheperf-[123]-000001' <<<"$ours"); do
	pprof -traces "$dir/d/$f"
	grep -A1 -E ' worker$' "$tap_out" | grep -qE '^ +start_thread$' && traced=$f
done
if [ -n "$traced" ]; then _ok "an interval's profile has its call stacks: worker <- start_thread"
else _not_ok "an interval's profile has its call stacks: worker <- start_thread" \
	"$(head -30 "$tap_out")"; fi
done_testing
