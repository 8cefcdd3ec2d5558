# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Packaging: `make deb`'s script builds the .deb (dpkg-buildpackage, about
# 20-60 s) and lintian finds no error in it; the package holds the binary,
# the systemd unit, the man page and the options file (a conffile); the
# binary from the package runs. Then the profiler runs with exactly the
# capabilities of the unit's CapabilityBoundingSet and no-new-privileges
# (setpriv) against a process of user nobody: it must find its symbols and
# see its allocations (uprobes), so the set is what the code needs.
. "$(dirname "$0")/tap.sh"

UNIT=$CP_ROOT/packaging/cacheperf-bpf.service
out=$(mktemp -d)
trap 'rm -rf "$out" "$tap_out"' EXIT

if command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null &&
   command -v dh >/dev/null; then
	run_cmd "$CP_ROOT/packaging/deb.sh" "$out/deb"
	deb=$(ls "$out"/deb/cacheperf-bpf_*_amd64.deb 2>/dev/null | head -1)
	if [ "$rc" -eq 0 ] && [ -n "$deb" ]; then
		_ok "the package builds and lintian reports no error"
	else
		_not_ok "the package builds and lintian reports no error" "status $rc"
	fi
	files=$(dpkg-deb -c "$deb" 2>/dev/null | awk '{ print $6 }')
	missing=
	for f in ./usr/sbin/cacheperf-bpf ./lib/systemd/system/cacheperf-bpf.service \
		 ./usr/share/man/man8/cacheperf-bpf.8.gz ./etc/default/cacheperf-bpf \
		 ./usr/share/cacheperf-bpf/cacheperf-bpf.rules.yml \
		 ./usr/share/cacheperf-bpf/grafana-dashboard.json; do
		grep -qx -- "$f" <<<"$files" || missing+=" $f"
	done
	if [ -z "$missing" ]; then _ok "the package installs binary, unit, man page, options file, rules, dashboard"; else
		_not_ok "the package installs binary, unit, man page, options file, rules, dashboard" "missing:$missing"; fi
	dpkg-deb -e "$deb" "$out/control" 2>/dev/null
	if grep -qx /etc/default/cacheperf-bpf "$out/control/conffiles" 2>/dev/null; then
		_ok "the options file is a conffile (kept on upgrade)"
	else
		_not_ok "the options file is a conffile (kept on upgrade)"
	fi
	dpkg-deb -x "$deb" "$out/root" 2>/dev/null
	expect "the packaged binary runs" 0 '^cacheperf-bpf [0-9]' "$out/root/usr/sbin/cacheperf-bpf" --version
	expect "the packaged man page renders" 0 'cacheperf-bpf - find why' \
		env MANWIDTH=200 man -l "$out/root/usr/share/man/man8/cacheperf-bpf.8.gz"
else
	skip "no dpkg-buildpackage, debhelper or lintian (packaging/deps.sh installs them)"
fi

# The unit's syntax, as systemd reads it (its binary is not installed here)
if command -v systemd-analyze >/dev/null; then
	bad=$(systemd-analyze verify --man=no "$UNIT" 2>&1 | grep -v 'is not executable')
	if [ -z "$bad" ]; then _ok "systemd-analyze verify accepts the unit"; else
		_not_ok "systemd-analyze verify accepts the unit" "$bad"; fi
else
	skip "no systemd-analyze"
fi

# The unit's capabilities are enough: another user's process, symbols and heap objects
[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null ||
	skip_all "the capability run needs root and setpriv"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
setpriv --reuid=nobody --regid=nogroup --clear-groups "$WL/slow_touch" 5 >"$out/wl.out" 2>&1 &
wl=$!
sleep 0.3
run_cmd setpriv --bounding-set "-all,$caps" --inh-caps=-all --no-new-privs \
	"$BIN" --source faults --max-bp-rate 0 -p "$wl" -d 3
wait "$wl"
if [ "$rc" -eq 0 ] && grep -q ' touch (slow_touch.c:[0-9]*)$' "$tap_out"; then
	_ok "with the unit's capabilities ($caps): another user's process is symbolized"
else
	_not_ok "with the unit's capabilities ($caps): another user's process is symbolized" "status $rc"
fi
# slow_touch allocates and frees a block every 50 ms
applied=$(sed -n 's/.*allocation events: \([0-9]*\) applied.*/\1/p' "$tap_out")
if ! grep -q 'no allocation probes' "$tap_out" && [ "${applied:-0}" -ge 20 ]; then
	_ok "with the unit's capabilities: its allocations are seen ($applied events)"
else
	_not_ok "with the unit's capabilities: its allocations are seen" "${applied:-no} events"
fi
done_testing
