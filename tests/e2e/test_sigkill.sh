# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# SIGKILL of the profiler (root) while it has allocation uprobes and hardware
# breakpoints attached to its target: the probes and breakpoints vanish with
# its file descriptors, and the target runs on normally. The target is a
# shell running tests/workloads/slow_touch (a store the breakpoint manager
# arms and whose history fills only after seconds, malloc and free all
# along), then churn (threads and processes allocating). A uprobe or
# breakpoint left behind would kill them with SIGTRAP; both must end with
# status 0 and their output.
. "$(dirname "$0")/tap.sh"

need_root "needs root"
command -v bpftool >/dev/null || skip_all "no bpftool to name the attached programs"

out=$(mktemp -d)
trap 'rm -rf "$out" "$tap_out"' EXIT

# "ID NAME" of the program of each of @pid's BPF links (their fdinfo
# prog_id, named from one listing of every program: a bpftool run per fd is
# too slow on a busy machine).
link_progs() {
	local pid=$1 f k v link id ids=()
	for f in /proc/"$pid"/fdinfo/*; do
		link= id=
		while read -r k v; do
			case $k in link_type:) link=1 ;; prog_id:) id=$v ;; esac
		done <"$f" 2>/dev/null
		[ -n "$link" ] && [ -n "$id" ] && ids+=("$id")
	done
	[ ${#ids[@]} -gt 0 ] || return 0
	bpftool prog show 2>/dev/null | awk -v ids="${ids[*]}" '
		BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) links[a[i]]++ }
		/^[0-9]+:/ {
			id = $1; sub(":", "", id)
			for (i = 2; i < NF; i++)
				if ($i == "name" && (id in links))
					for (k = 0; k < links[id]; k++) print id, $(i + 1)
		}'
}

# where breakpoints open but never fire, the profiler arms none: the kill is
# of the allocation probes alone, and the breakpoints' part is skipped
bp_fires && watched="watched by a breakpoint" || watched="its allocations probed"

# -- CMD launches the shell held until the probes are attached; the shell
# writes each program's status, the profiler's own output goes elsewhere
"$BIN" --source faults --bp-expiry 60000 -o "$out/report" -- sh -c \
	"'$WL/slow_touch' 8 > '$out/slow_touch.out'; echo \"slow_touch \$?\" >> '$out/status'; \
	 '$WL/churn' 3 > '$out/churn.out'; echo \"churn \$?\" >> '$out/status'" \
	>"$out/prof.out" 2>&1 &
prof=$!
bp=0 alloc=0 progs=
for _ in $(seq 1 100); do
	sleep 0.1
	progs=$(link_progs "$prof")
	bp=$(grep -c ' on_breakpoint$' <<<"$progs")
	alloc=$(grep -Ec ' on_(alloc|calloc|memalign|realloc|free)' <<<"$progs")
	[ "$alloc" -gt 0 ] && { [ "$bp" -gt 0 ] || ! bp_fires; } && break
done
if ! bp_fires; then
	if [ "$alloc" -gt 0 ] && [ "$bp" -eq 0 ]; then
		_ok "before the kill: $alloc allocation probe links, no breakpoint link"
	else
		_not_ok "before the kill: allocation probes are attached, no breakpoint" \
			"$alloc allocation probe links, $bp breakpoint links"
	fi
	need_bp "before the kill: breakpoints are attached"
elif [ "$bp" -gt 0 ] && [ "$alloc" -gt 0 ]; then
	_ok "before the kill: $alloc allocation probe links and $bp breakpoint links"
else
	_not_ok "before the kill: allocation probes and breakpoints are attached" \
		"$alloc allocation probe links, $bp breakpoint links"
fi
kill -KILL "$prof"
wait "$prof" 2>/dev/null
kst=$?
if [ "$kst" -eq 137 ]; then _ok "the profiler died of SIGKILL"; else
	_not_ok "the profiler died of SIGKILL" "status $kst"; fi

# the target, reparented, goes on; give it the time of its two programs
for _ in $(seq 1 200); do
	[ "$(wc -l < "$out/status" 2>/dev/null)" = 2 ] && break
	sleep 0.1
done
cat "$out/status" >"$tap_out" 2>/dev/null
if grep -qx 'slow_touch 0' "$out/status" 2>/dev/null &&
   grep -q '^slow_touch: 160 pages, sum 160$' "$out/slow_touch.out"; then
	_ok "slow_touch, $watched at the kill, finishes with status 0 and its output"
else
	_not_ok "slow_touch, $watched at the kill, finishes with status 0 and its output"
fi
if grep -qx 'churn 0' "$out/status" 2>/dev/null &&
   grep -q '^churn: [0-9]* rounds, [0-9]* threads, [0-9]* processes' "$out/churn.out"; then
	_ok "churn, allocating after the kill, finishes with status 0 and its output"
else
	_not_ok "churn, allocating after the kill, finishes with status 0 and its output"
fi
# nothing of the profiler stays loaded: each program it had linked is gone
left=$(for id in $(cut -d' ' -f1 <<<"$progs" | sort -u); do
	bpftool prog show id "$id" >/dev/null 2>&1 && echo "$id"; done)
if [ -n "$progs" ] && [ -z "$left" ]; then
	_ok "none of the profiler's programs survives it"
else
	_not_ok "none of the profiler's programs survives it" "still loaded: $left"
fi
done_testing
