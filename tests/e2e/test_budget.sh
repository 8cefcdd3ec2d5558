# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The overhead budget (root): an allocation storm of `-- CMD` under
# --source soft at the default budget of a launched command (5 %). The unit
# costs are measured at start, the soft frequency is lowered to fit half the
# budget, the allocation probes come in windows, and the estimate the report
# gives stays inside the budget, in the text, JSON and Prometheus outputs,
# for the run, for each CPU (against its time), for the storm's process and
# in every interval of 10 s; and a 60 s run of 4 threads of malloc/free on
# this machine's CPUs (CP_BUDGET_LONG=0 leaves it out, for a quicker local
# run). --overhead 0 turns it all off.
. "$(dirname "$0")/tap.sh"

need_root "runs need root"
command -v python3 >/dev/null || skip_all "no python3 to read the JSON report"
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT

# storm [-d SECONDS] [OPTIONS]: "ready PID", waits for a line, then malloc+free
# as fast as it can for 30 s, profiled for 14 s (or SECONDS: the storm is
# stopped then)
run_storm() {
	local secs=14

	if [ "${1:-}" = -d ]; then
		secs=$2
		shift 2
	fi
	# notice: the budget line (or, --overhead 0, none) is said
	(sleep 1; echo go) | "$BIN" --source soft -d "$secs" -o "$dir/report" --json "$dir/json" \
		--prom-file "$dir/prom" --log-level notice "$@" -- "$WL/alloc_sites" storm 30 >"$tap_out" 2>&1
	rc=$?
}

# run_ok NAME MIN MAX: the run exited 0 inside the budget, for the run, its
# process and its intervals of 10 s (MIN to MAX of them, none over)
run_ok() {
	local verdict

	verdict=$(python3 - "$dir/json" "$2" "$3" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["overhead"]
lo, hi = int(sys.argv[2]), int(sys.argv[3])
t, p, iv, bad = o["spent_pct"]["total"], o["per_process"], o["per_interval"], []
if t > o["budget_pct"]: bad.append("estimated %s %% over the budget" % o["spent_pct"])
if not p or p[0]["pct"] > o["budget_pct"]: bad.append("per process %s" % p)
if o["alloc_calls"] == 0: bad.append("no allocator call probed")
if not lo <= iv["count"] <= hi or iv["over"] != 0 or \
   (iv["count"] and not 0 < iv["max_pct"] <= o["budget_pct"]):
    bad.append("per interval %s, the estimate revised by %s %%" % (iv, o["revised_pct"]))
print("; ".join(bad) or "ok")
PY
	)
	if [ "$rc" -eq 0 ] && [ "$verdict" = ok ]; then
		_ok "$1"
	else
		_not_ok "$1" "status $rc" "$verdict" "$(sed -n '/^Overhead budget/,/^$/p' "$dir/report")"
	fi
}

# A short run holds too: the storm's first window is cut where the account
# (the share of the targets' CPU time so far, or of one CPU's second at the
# start) is spent, whatever the profiling loop is doing meanwhile
run_storm -d 3
# shorter than an interval: the run is its only one
run_ok "a 3 s storm: the estimate stays inside the budget, for the run and its process" 0 0

run_storm
if [ "$rc" -eq 0 ] && grep -q '^Overhead budget$' "$dir/report"; then
	_ok "a run with the default budget exits 0 with an Overhead budget section"
else
	_not_ok "a run with the default budget exits 0 with an Overhead budget section" \
		"status $rc" "$(cat "$tap_out")"
fi

# the JSON's figures, checked against each other (not against this machine's costs);
# where breakpoints open but never fire none is armed, and a hit's cost is not measured
bp_fires && fires=1 || fires=0
verdict=$(python3 - "$dir/json" "$fires" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["overhead"]
u, bad = o["unit_costs_ns"], []
if o["budget_pct"] != 5.0: bad.append("budget %s, want 5 (-- CMD)" % o["budget_pct"])
# allocation_programs: measured on the storm's first calls; tick_program: on_tick
# timed itself on the target's ticks
measured = ["tick", "uprobe", "uretprobe", "wakeup", "syscall", "allocation_programs",
            "tick_program"]
if sys.argv[2] == "1":
    measured.append("breakpoint_hit")
elif u["breakpoint_hit"] != 0:
    bad.append("a breakpoint hit's cost where none fires: %s ns" % u["breakpoint_hit"])
if not all(u[k] > 0 for k in measured):
    bad.append("a unit cost not measured: %s" % u)
# ticks get at most half the budget: freq x tick cost <= 2.5 % (the floor aside)
if o["soft_freq_hz"] * u["tick"] > 25000 * 1000 or o["soft_freq_hz"] > o["soft_freq_asked_hz"]:
    bad.append("soft frequency %s Hz at %s ns a tick" % (o["soft_freq_hz"], u["tick"]))
# the ticks' estimate is their count at the tick's cost with its program's
want = 100.0 * o["ticks"] * (u["tick"] + u["tick_program"]) / (o["target_cpu_s"] * 1e9)
if abs(o["spent_pct"]["ticks"] - want) > 0.02 + want / 100:
    bad.append("ticks estimated %s %%, %s ticks at %s + %s ns: %.3f %%" % (
        o["spent_pct"]["ticks"], o["ticks"], u["tick"], u["tick_program"], want))
if o["spent_pct"]["total"] > o["budget_pct"]:
    bad.append("estimated %s %% over the budget" % o["spent_pct"])
if o["alloc_calls"] == 0 or not 0 < o["alloc_attached_pct"] < 100:
    bad.append("allocation probes: %s calls, attached %s %%" % (o["alloc_calls"], o["alloc_attached_pct"]))
# each CPU against its time (one entry per possible CPU), the storm against its
# CPU time: inside too
cpus = sum(int(r.split("-")[-1]) - int(r.split("-")[0]) + 1
           for r in open("/sys/devices/system/cpu/possible").read().strip().split(","))
if len(o["per_cpu_pct"]) != min(cpus, 256) or max(o["per_cpu_pct"]) > o["budget_pct"]:
    bad.append("per CPU %s on %s CPUs" % (o["per_cpu_pct"], cpus))
# every interval of 10 s in the 14 s storm (a reading a second: 3 to 5 of them)
iv = o["per_interval"]
if iv["interval_s"] != 10 or not 3 <= iv["count"] <= 6 or iv["over"] != 0 \
   or not 0 < iv["max_pct"] <= o["budget_pct"] or iv["max_to_s"] - iv["max_from_s"] < 10:
    bad.append("per interval %s" % iv)
procs = o["per_process"]
if len(procs) != 1 or procs[0]["pid"] <= 0 or procs[0]["alloc_calls"] != o["alloc_calls"] \
   or procs[0]["pct"] > o["budget_pct"]:
    bad.append("per process %s" % procs)
print("; ".join(bad) or "ok")
PY
)
if [ "$verdict" = ok ]; then
	_ok "the estimate stays inside the budget; ticks lowered, probes in windows (JSON)"
else
	_not_ok "the estimate stays inside the budget; ticks lowered, probes in windows (JSON)" \
		"$verdict" "$(sed -n '/^Overhead budget/,/^$/p' "$dir/report")"
fi

if grep -q '^  estimated spent: [0-9.]* % (ticks' "$dir/report" &&
   grep -q '^  per CPU, of its time: highest [0-9.]* % (CPU [0-9]*);' "$dir/report" &&
   grep -q '^  per process, the costliest: process [0-9]*: [0-9.]* % of its' "$dir/report" &&
   grep -q '^  per interval of 10 s, of the targets.* CPU time in it: highest [0-9.]* % ([0-9.]* s to [0-9.]* s, their CPU time [0-9.]* s) of [0-9]* intervals$' "$dir/report" &&
   ! grep -q 'over the budget' "$dir/report"; then
	_ok "the text report gives the estimate, per CPU, interval and process, not over the budget"
else
	_not_ok "the text report gives the estimate, per CPU, interval and process, not over the budget" \
		"$(sed -n '/^Overhead budget/,/^$/p' "$dir/report")"
fi

if grep -q '^cacheperf_overhead_budget_ratio 0.05$' "$dir/prom" &&
   grep -q '^cacheperf_overhead_estimated_ratio{probe="allocation_probes"} ' "$dir/prom" &&
   grep -q '^cacheperf_probe_unit_cost_seconds{probe="wakeup"} ' "$dir/prom" &&
   grep -q '^cacheperf_overhead_cpu_max_estimated_ratio 0\.0' "$dir/prom" &&
   grep -q '^cacheperf_overhead_process_max_estimated_ratio 0\.0' "$dir/prom" &&
   awk '$1 == "cacheperf_overhead_interval_max_estimated_ratio" { ok = $2 > 0 && $2 <= 0.05 }
	END { exit !ok }' "$dir/prom" &&
   grep -q '^cacheperf_probe_unit_cost_seconds{probe="tick"} ' "$dir/prom"; then
	_ok "the Prometheus file has the budget, the estimate and the unit costs"
else
	_not_ok "the Prometheus file has the budget, the estimate and the unit costs" \
		"$(grep -E 'overhead|unit_cost' "$dir/prom")"
fi

# A minute of 4 threads of malloc/free (more than this machine's CPUs): the
# account earns as they run, keeps no more than a second's earnings, and
# every interval of 10 s stays inside, as the whole run does. Contended,
# the programs measured again cost more than on the first calls (10.7 us a
# call against 1.3): the intervals are priced at the run time the programs
# took in them, not at that later figure (docs/overhead.md).
if [ "${CP_BUDGET_LONG:-1}" = 1 ]; then
	(sleep 1; echo go) | "$BIN" --source soft -d 60 -o "$dir/report" --json "$dir/json" \
		--log-level notice -- "$WL/malloc_churn" 1000000000000 >"$tap_out" 2>&1
	rc=$?
	# a reading a second: some 50 intervals of 10 s
	run_ok "a 60 s run of 4 allocating threads: the run and every 10 s inside the budget" 40 100
else
	skip "a 60 s run of 4 allocating threads: CP_BUDGET_LONG=0"
fi

# no budget: as asked, no section, no calibration
run_storm --overhead 0
if [ "$rc" -eq 0 ] && ! grep -q '^Overhead budget' "$dir/report" &&
   ! grep -q 'overhead budget' "$tap_out" &&
   python3 -c 'import json,sys; sys.exit("overhead" in json.load(open(sys.argv[1])))' "$dir/json"; then
	_ok "--overhead 0: no budget section, no calibration"
else
	_not_ok "--overhead 0: no budget section, no calibration" "status $rc"
fi
done_testing
