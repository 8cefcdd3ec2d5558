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
		 ./usr/share/cacheperf-bpf/grafana-dashboard.json \
		 ./usr/share/cacheperf-bpf/debuginfod.conf; do
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

# debuginfod from the service: the unit keeps PrivateNetwork=yes; the drop-in
# (installed by hand, as the options file and the man page say) opens the
# network and gives the client a writable cache. systemd-analyze reads the
# drop-in next to the unit: verify parses it (a broken one is reported: it
# is read), and the offline security analysis shows the merged settings.
DROPIN=$CP_ROOT/packaging/systemd/debuginfod.conf
sd=$out/sd
mkdir -p "$sd/cacheperf-bpf.service.d"
cp "$UNIT" "$sd/"
if command -v systemd-analyze >/dev/null; then
	cp "$DROPIN" "$sd/cacheperf-bpf.service.d/debuginfod.conf"
	bad=$(systemd-analyze verify --man=no "$sd/cacheperf-bpf.service" 2>&1 | grep -v 'is not executable')
	echo 'PrivateNetwork=maybe' >"$sd/cacheperf-bpf.service.d/zz-broken.conf"
	broken=$(systemd-analyze verify --man=no "$sd/cacheperf-bpf.service" 2>&1 | grep -c 'zz-broken.conf')
	rm "$sd/cacheperf-bpf.service.d/zz-broken.conf"
	if [ -z "$bad" ] && [ "$broken" -ge 1 ]; then
		_ok "systemd-analyze verify accepts the unit with the debuginfod drop-in"
	else
		_not_ok "systemd-analyze verify accepts the unit with the debuginfod drop-in" \
			"${bad:-a broken drop-in was not reported}"
	fi
	with=$(systemd-analyze security --offline=true --no-pager "$sd/cacheperf-bpf.service" 2>&1)
	rm -r "$sd/cacheperf-bpf.service.d"
	without=$(systemd-analyze security --offline=true --no-pager "$sd/cacheperf-bpf.service" 2>&1)
	if ! grep -q 'PrivateNetwork=' <<<"$without"; then
		skip "systemd-analyze security --offline: not in this systemd"
	elif grep -q '✓ PrivateNetwork=' <<<"$without" && grep -q '✗ PrivateNetwork=' <<<"$with" &&
	     grep -q '✓ RestrictAddressFamilies=~AF_(INET|INET6)' <<<"$without" &&
	     grep -q '✗ RestrictAddressFamilies=~AF_(INET|INET6)' <<<"$with"; then
		_ok "no network without the drop-in; with it, the host's network and inet sockets"
	else
		_not_ok "no network without the drop-in; with it, the host's network and inet sockets" \
			"$(grep -E 'PrivateNetwork|AF_\(INET' <<<"$with")"
	fi
else
	skip "no systemd-analyze"
fi
# the cache: CacheDirectory=cacheperf-bpf is /var/cache/cacheperf-bpf, writable under ProtectSystem=strict
if grep -qx 'CacheDirectory=cacheperf-bpf' "$DROPIN" &&
   grep -qx 'Environment=DEBUGINFOD_CACHE_PATH=/var/cache/cacheperf-bpf/debuginfod' "$DROPIN" &&
   grep -q '^#DEBUGINFOD_URLS=' "$CP_ROOT/packaging/cacheperf-bpf.default" &&
   grep -q 'cp /usr/share/cacheperf-bpf/debuginfod.conf /etc/systemd/system/cacheperf-bpf.service.d/' \
	"$CP_ROOT/packaging/cacheperf-bpf.default" "$DROPIN" &&
   grep -q 'debuginfod.conf' "$UNIT"; then
	_ok "the drop-in's cache is the service's; the options file and the unit say how to enable it"
else
	_not_ok "the drop-in's cache is the service's; the options file and the unit say how to enable it"
fi

# The profiler says at start when DEBUGINFOD_URLS cannot be reached: in a
# network namespace of its own (as PrivateNetwork=yes makes) a remote server
# is warned about; a loopback one, no variable or --no-debuginfod are not.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
	warn='DEBUGINFOD_URLS is set, but this process has no network route'
	dbg() { env "$@" unshare -n "$BIN" --source faults -o /dev/null -- true 2>&1; }
	remote=$(dbg DEBUGINFOD_URLS=http://debuginfod.example.org:8002)
	loop=$(dbg DEBUGINFOD_URLS="http://127.0.0.1:8002 http://localhost:8003")
	none=$(dbg DEBUGINFOD_URLS=)
	refused=$(env DEBUGINFOD_URLS=http://debuginfod.example.org:8002 unshare -n "$BIN" --no-debuginfod \
		--source faults -o /dev/null -- true 2>&1)
	if grep -qF "$warn" <<<"$remote" && grep -q 'debuginfod.conf' <<<"$remote" &&
	   ! grep -qF "$warn" <<<"$loop$none$refused"; then
		_ok "no network route to DEBUGINFOD_URLS: said at start, with the drop-in to enable"
	else
		_not_ok "no network route to DEBUGINFOD_URLS: said at start, with the drop-in to enable" \
			"remote: $remote; loop/none/refused: $loop $none $refused"
	fi
else
	skip "the debuginfod warning needs root for a network namespace"
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
