# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Breakpoint sampling in whole runs of the real binary (root). With the
# page-fault source, tests/workloads/bp_hot's first pass faults each page in,
# so each of its 16 walking loads shows up as a run of faults and becomes a
# candidate; the manager arms them 4 at a time. Its 8 column walks (one L1
# set, a new line each row) must be reported settled as conflicts, its 8
# padded walks full without settling, each at its source line (the CP_MARK
# comments in bp_hot.c). --max-bp-rate 0 turns it all off. Where breakpoints
# open but never fire (need_bp), the checks of their histories are skipped.
. "$(dirname "$0")/tap.sh"

need_root "runs need root"

src=$CP_ROOT/tests/workloads/bp_hot.c
col_line=$(grep -n 'CP_MARK conflict loads' "$src" | cut -d: -f1)
pad_line=$(grep -n 'CP_MARK padded loads' "$src" | cut -d: -f1)

# 1500000 passes, ~4 s here: the 16 walks need 16 histories of 64 hits and
# the hit budget of a launched command (5 %) is ~1 000-2 000 hits a second,
# less when the breakpoint cost is measured on a loaded machine; the default
# 0.5 s run left one walk unarmed beside a CPU hog, and 600000 passes (2.4 s
# beside two) left four padded walks unfilled in a whole `make check` (the
# first on a VM whose breakpoints fire)
run_cmd "$BIN" --source faults -- "$WL/bp_hot" 1500000
if [ "$rc" -eq 0 ]; then _ok "a run with breakpoints exits 0"; else
	_not_ok "a run with breakpoints exits 0" "exit status $rc"; fi
settled=$(grep -c "settled as conflict .*conflict_pass (bp_hot.c:$col_line)\$" "$tap_out")
full=$(grep -c " full .*padded_pass (bp_hot.c:$pad_line)\$" "$tap_out")
if need_bp "the 8 column walks settle as conflicts"; then
	if [ "$settled" -eq 8 ]; then _ok "the 8 column walks settle as conflicts"; else
		_not_ok "the 8 column walks settle as conflicts" "$settled lines at bp_hot.c:$col_line"; fi
fi
if need_bp "the 8 padded walks fill without settling"; then
	if [ "$full" -eq 8 ]; then _ok "the 8 padded walks fill without settling"; else
		_not_ok "the 8 padded walks fill without settling" "$full lines at bp_hot.c:$pad_line"; fi
fi
# the counters agree with the list; no slot was refused, nothing dropped
if ! need_bp "the counters add up"; then
	:
elif grep -Eq "armed: (1[6-9]|[2-9][0-9]); settled as conflict: ([89]|[1-9][0-9]), full: ([89]|[1-9][0-9])" "$tap_out" &&
   grep -q "no free slot (ENOSPC, retried): 0, candidates dropped (table full): 0" "$tap_out"; then
	_ok "the counters add up"
else
	_not_ok "the counters add up"
fi
# padded rows land on a new set each: the repetition fits L1, no simulated conflict
if ! need_bp "padded walks show no simulated conflict"; then
	:
elif grep " full .*padded_pass" "$tap_out" | grep -qv "none, fits"; then
	_not_ok "padded walks show no simulated conflict"
else
	_ok "padded walks show no simulated conflict"
fi
# The histories reach the classifier: the column walk puts 9 lines on one set
# of the 8-way L1 (conflict), the padded one a line per set (capacity).
issues=$(sed -n '/^Issues/,/^Instructions/p' "$tap_out")
if ! need_bp "the classifier calls the column walk a conflict, the padded walk capacity"; then
	:
elif grep -A1 "^#[0-9]* Application's conflict misses" <<<"$issues" |
	grep -q "bp_hot.c: $col_line (conflict_pass)" &&
   grep -A1 "^#[0-9]* Application's capacity misses" <<<"$issues" |
	grep -q "bp_hot.c: $pad_line (padded_pass)"; then
	_ok "the classifier calls the column walk a conflict, the padded walk capacity"
else
	_not_ok "the classifier calls the column walk a conflict, the padded walk capacity" "$issues"
fi

# -a: per-CPU breakpoint events, the {tgid, ip} key filters in BPF; the
# workload starts after the attach. In a cgroup of its own, named with
# --cgroup: on a busy machine other processes' faults (a build, a fuzzer)
# would take the 4 slots of each CPU, and the walks were not all armed in time.
# --overhead 5: the walks need ~1000 hits, which -a's default 1 % (~250 hits/s
# in this VM) spreads past the run; this checks per-CPU arming, not the budget.
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cg=cp-bp-test-$$
trap 'rm -f "$tap_out"; [ -n "$cg2" ] && rmdir "$cg2/$cg" 2>/dev/null' EXIT
if need_bp "-a: per-CPU breakpoints settle the 8 column walks"; then
	: >"$tap_out" # not the last run's "sampling events" (wait_for, tap.sh)
	if [ -n "$cg2" ] && mkdir "$cg2/$cg"; then
		"$BIN" -v --source faults -a --cgroup "/$cg" -d 8 --overhead 5 --max-alloc-rate 0 \
			>"$tap_out" 2>&1 &
		ppid=$!
		wait_for "sampling events" "$tap_out"
		sh -c "echo \$\$ > '$cg2/$cg/cgroup.procs' && exec '$WL/bp_hot'" >/dev/null
	else
		"$BIN" -v --source faults -a -d 8 --overhead 5 --max-alloc-rate 0 >"$tap_out" 2>&1 &
		ppid=$!
		wait_for "sampling events" "$tap_out"
		"$WL/bp_hot" >/dev/null
	fi
	wait $ppid
	settled=$(grep -c "settled as conflict .*conflict_pass (bp_hot.c:$col_line)\$" "$tap_out")
	if [ "$settled" -eq 8 ]; then _ok "-a: per-CPU breakpoints settle the 8 column walks"; else
		_not_ok "-a: per-CPU breakpoints settle the 8 column walks" "$settled lines"; fi
fi

expect "--max-bp-rate 0 turns breakpoints off" 0 "^  off \(--max-bp-rate 0\)" \
	"$BIN" --source faults --max-bp-rate 0 -- "$WL/bp_hot" 1000
if grep -q "settled as conflict  " "$tap_out"; then
	_not_ok "nothing is armed when off"
else
	_ok "nothing is armed when off"
fi
done_testing
