# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A process is its PID and its start time (issue 29, attack 6;
# docs/security.md "Process identity"). Under -a (restricted with --cgroup
# to a cgroup this test makes), a tenant (nobody) faults pages in
# cp_tenant_secret_fn and exits; then a root worker is forked with the
# tenant's PID (ns_last_pid set to PID - 1 right before the fork) and faults
# pages in cp_root_worker_fn. Both are tests/workloads/pid_reuse.c built
# without PIE, so they load at the same addresses and the worker's store
# lies inside the tenant's function (docs in that file). The report must
# name the worker's instruction cp_root_worker_fn, never the tenant's
# function, and still name the tenant's own instruction after it; the
# replay of the run's recording must say the same.
. "$(dirname "$0")/tap.sh"

need_root "needs root: the profiler is root, the tenant is nobody"
command -v cc >/dev/null || skip_all "no C compiler to build the two programs"
setarch "$(uname -m)" -R true 2>/dev/null || skip_all "no setarch -R to run without ASLR"
id nobody >/dev/null 2>&1 || skip_all "no user nobody to be the tenant"
[ -w /proc/sys/kernel/ns_last_pid ] || skip_all "no /proc/sys/kernel/ns_last_pid to choose a PID"
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
out=$(mktemp -d)
name=cp-pidreuse-$$
cleanup() {
	[ -n "$cg2" ] && rmdir "$cg2/$name" 2>/dev/null
	rm -rf "$out" "$tap_out"
}
trap cleanup EXIT
[ -n "$cg2" ] && mkdir "$cg2/$name" || skip_all "no cgroup2 file system to make a cgroup in"
chmod 0755 "$out"

src=$CP_ROOT/tests/workloads/pid_reuse.c
cc -g -O1 -fno-omit-frame-pointer -no-pie -DCP_WORK_FN=cp_tenant_secret_fn -DCP_WORK_PAD=512 \
	-o "$out/tenant_prog" "$src" &&
	cc -g -O1 -fno-omit-frame-pointer -no-pie -o "$out/root_prog" "$src" ||
	skip_all "cannot build $src without PIE"
# the layout the attack needs: the worker's function where the tenant's is
t_at=$(nm "$out/tenant_prog" | awk '$3 == "cp_tenant_secret_fn" { print $1 }')
r_at=$(nm "$out/root_prog" | awk '$3 == "cp_root_worker_fn" { print $1 }')
[ -n "$t_at" ] && [ "$t_at" = "$r_at" ] ||
	skip_all "the two builds do not place their functions alike ($t_at, $r_at)"

# The tenant as nobody, reaped; then the root program forks its worker
# with the tenant's PID (no exec, as a pre-forking daemon's worker). Prints
# "tenant PID STATUS" and "worker PID STATUS" (PID 0: not had).
cat >"$out/drive.sh" <<'EOF'
echo $$ >"$1/cgroup.procs" || exit 1
# no ASLR in either: every mapping of the worker lies where the tenant's
# did, so that no ip of the worker is outside the tenant's maps
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- \
	setarch "$(uname -m)" -R "$2" 64 800 4000 &
tpid=$!
wait "$tpid"
echo "tenant $tpid $?"
sleep 0.5
setarch "$(uname -m)" -R "$3" -f "$tpid" 64 800 2500
EOF

: >"$tap_out" # not an earlier run's lines (wait_for, tap.sh)
"$BIN" -v -a --cgroup "/$name" --source faults -d 14 --max-bp-rate 0 --top 1000 \
	-o "$out/a.txt" --record "$out/a.cprec" >"$tap_out" 2>&1 </dev/null &
prof=$!
if ! wait_for "sampling events" "$tap_out"; then
	kill "$prof" 2>/dev/null
	wait "$prof"
	skip_all "the profiler did not start"
fi
sleep 0.5
bash "$out/drive.sh" "$cg2/$name" "$out/tenant_prog" "$out/root_prog" >"$out/drive.out" 2>&1
wait "$prof"
rc=$?
read -r _ tpid tst < <(grep '^tenant ' "$out/drive.out")
read -r _ rpid rst < <(grep '^worker ' "$out/drive.out")

if [ "$rc" -ne 0 ] || [ "$tst" != 0 ]; then
	_not_ok "the run ends with a report" "profiler status $rc, tenant status ${tst:-?}" \
		"$(cat "$out/drive.out")"
	done_testing
	exit 0
fi
_ok "the run ends with a report"
if [ "${rpid:-0}" = 0 ] || [ "$rpid" != "$tpid" ] || [ "$rst" != 0 ]; then
	skip "the root worker could not be given the tenant's pid $tpid (got ${rpid:-none}): other processes forked meanwhile"
	done_testing
	exit 0
fi

# located REPORT WHO: the location of the instruction table's line of pid
# $tpid whose ip is the worker's store (WHO=worker: below the function's
# start + 512, the tenant's padding) or the tenant's (WHO=tenant: at or
# above it, within 1 KiB)
located() {
	local fn=$((16#$t_at)) ip loc

	while read -r ip loc; do
		ip=$((ip))
		[ "$ip" -ge "$fn" ] && [ "$ip" -lt $((fn + 1024)) ] || continue
		if { [ "$2" = worker ] && [ "$ip" -lt $((fn + 512)) ]; } ||
			{ [ "$2" = tenant ] && [ "$ip" -ge $((fn + 512)) ]; }; then
			echo "$loc"
			return
		fi
	done < <(awk -v pid="$tpid" '/^Instructions with the most/ { on = 1; next }
		on && /^$/ { on = 0 }
		on && $2 == pid && $3 ~ /^0x/ { ip = $3; $1 = $2 = $3 = ""; print ip, substr($0, 4) }' "$1")
}

# check REPORT WHAT: the worker's store is named after its own function and
# the tenant's after the tenant's
check() {
	local w t

	w=$(located "$1" worker)
	t=$(located "$1" tenant)
	case $w in
	cp_root_worker_fn*) _ok "$2: the root worker with pid $tpid is named cp_root_worker_fn" ;;
	*) _not_ok "$2: the root worker with pid $tpid is named cp_root_worker_fn" \
		"the worker's store is named: ${w:-no line}" "$(grep -a " $tpid " "$1" | head -5)" ;;
	esac
	case $t in
	cp_tenant_secret_fn*) _ok "$2: the tenant's own store is still named cp_tenant_secret_fn" ;;
	*) _not_ok "$2: the tenant's own store is still named cp_tenant_secret_fn" \
		"the tenant's store is named: ${t:-no line}" "$(grep -a " $tpid " "$1" | head -5)" ;;
	esac
}

check "$out/a.txt" "live"
run_cmd "$BIN" report --top 1000 -o "$out/r.txt" "$out/a.cprec"
if [ "$rc" -ne 0 ]; then
	_not_ok "the recording replays" "status $rc"
else
	check "$out/r.txt" "replay"
fi
done_testing
