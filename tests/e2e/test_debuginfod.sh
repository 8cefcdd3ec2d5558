# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Debug info from a debuginfod server (root: a network namespace). The golden
# recording's program with its debug info moved out (objcopy --only-keep-debug,
# then --strip-debug: the build-id and the symbol table stay) is served by
# Debian's debuginfod on 127.0.0.1 inside a network namespace of its own, so
# nothing outside can reach it, and the replays run there too:
#  - with DEBUGINFOD_URLS the report is the golden one, byte for byte;
#  - without the variable, or with --no-debuginfod, it has no source lines and
#    the server is never asked (its cache stays empty);
#  - a server that takes the connection and never answers costs one fetch
#    timeout (CP_DEBUGINFOD_TIMEOUT_MS, 5 s), not a stalled profiler.
. "$(dirname "$0")/tap.sh"

need_root "a private network namespace needs root"
for t in debuginfod unshare ip curl objcopy readelf python3; do
	command -v "$t" >/dev/null || skip_all "no $t (packaging/deps.sh installs it)"
done
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
golden=$CP_ROOT/tests/golden
mkdir -p "$dir/bin" "$dir/srv"
cp "$golden/chain" "$dir/bin/chain"
objcopy --only-keep-debug "$dir/bin/chain" "$dir/srv/chain.debug"
objcopy --strip-debug "$dir/bin/chain"
id=$(readelf -n "$dir/bin/chain" | awk '/Build ID/ { print $3 }')
export BIN dir golden id

# everything that talks to a server, inside the namespace
cat >"$dir/ns.sh" <<'NS'
set -u
ip link set lo up
replay() { # NAME [ENV...] -- [OPTIONS...]
	local name=$1 env=() t0
	shift
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	t0=$(date +%s%N)
	env "${env[@]}" DEBUGINFOD_CACHE_PATH="$dir/cache.$name" "$BIN" report "$@" \
		--path-map /tmp/cacheperf-golden="$dir/bin" "$golden/chain.cprec" \
		>"$dir/$name.txt" 2>"$dir/$name.err"
	echo $? $((($(date +%s%N) - t0) / 1000000)) >"$dir/$name.rc"
}
debuginfod -F "$dir/srv" -p 8002 -d "$dir/db.sqlite" -t 1 -c 1 >"$dir/srv.log" 2>&1 &
srv=$!
for i in $(seq 300); do
	curl -sf -o /dev/null "http://127.0.0.1:8002/buildid/$id/debuginfo" && break
	sleep 0.1
done
echo "$i" >"$dir/indexed"
replay served DEBUGINFOD_URLS=http://127.0.0.1:8002 --
replay refused DEBUGINFOD_URLS=http://127.0.0.1:8002 -- --no-debuginfod
replay unset --
kill "$srv"
wait "$srv" 2>/dev/null
# a server that accepts the connection and never answers
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 8003)); s.listen(8); time.sleep(60)' &
mute=$!
sleep 0.3
replay mute DEBUGINFOD_URLS=http://127.0.0.1:8003 --
kill "$mute"
NS
unshare -n bash "$dir/ns.sh" >"$dir/ns.log" 2>&1

read -r rc ms <"$dir/served.rc" 2>/dev/null
if [ "${rc:-1}" -eq 0 ] && cmp -s "$dir/served.txt" "$golden/chain.txt"; then
	_ok "with DEBUGINFOD_URLS the stripped program's report is the golden one"
else
	_not_ok "with DEBUGINFOD_URLS the stripped program's report is the golden one" \
		"status ${rc:-none}; server indexed after $(cat "$dir/indexed" 2>/dev/null) tries" \
		"$(diff "$golden/chain.txt" "$dir/served.txt" | head -8)" "$(tail -3 "$dir/ns.log")"
fi
if grep -q '^    - chain\.c: 72 (main)$' "$dir/served.txt" &&
   grep -q '^    - main in chain$' "$dir/unset.txt" &&
   grep -q '^    - main in chain$' "$dir/refused.txt"; then
	_ok "without the variable, or with --no-debuginfod, no source lines"
else
	_not_ok "without the variable, or with --no-debuginfod, no source lines" \
		"$(grep -h -A1 'instruction at' "$dir/unset.txt" "$dir/refused.txt")"
fi
if [ -z "$(find "$dir/cache.refused" "$dir/cache.unset" -type f 2>/dev/null)" ] &&
   [ -n "$(find "$dir/cache.served" -type f 2>/dev/null)" ]; then
	_ok "the server was asked only when allowed (libdebuginfod's cache)"
else
	_not_ok "the server was asked only when allowed (libdebuginfod's cache)" \
		"$(find "$dir"/cache.* -type f 2>/dev/null)"
fi
read -r rc ms <"$dir/mute.rc" 2>/dev/null
if [ "${rc:-1}" -eq 0 ] && [ "${ms:-99999}" -lt 15000 ] &&
   grep -q '^    - main in chain$' "$dir/mute.txt"; then
	_ok "a server that never answers costs one timeout (${ms} ms), the report comes"
else
	_not_ok "a server that never answers costs one timeout, the report comes" \
		"status ${rc:-none}, ${ms:-?} ms" "$(tail -3 "$dir/mute.err")"
fi
done_testing
