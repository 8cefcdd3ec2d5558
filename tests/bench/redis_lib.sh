# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What the benchmarks that drive Debian's redis-server share (live_service.sh,
# agent_cost.sh); sourced. The caller sets $work (a temporary directory it
# removes) and defines die MESSAGE. Every wait polls a bounded number of times.

# Stops what the script started, by its pid, and waits for it: TENTHS of a
# second (default 100), then SIGKILL. The profiler writes its report and
# detaches its probes first (the kernel's uprobe unregistration takes seconds here).
stop() { # PID SIGNAL [TENTHS]
	[ -n "$1" ] || return 0
	kill "-$2" "$1" 2>/dev/null || return 0
	for _ in $(seq "${3:-100}"); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# A TCP port nobody uses (no socket of any state in /proc/net/tcp{,6}).
free_port() {
	local p hex
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 20000))
		hex=$(printf ':%04X ' "$p")
		grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}

# Starts a fresh server on a free port of 127.0.0.1 (no persistence, its
# files in $work, --io-threads 2): sets srv and port.
start_server() { # NAME
	local log=$work/redis-$1.log
	for _ in 1 2 3; do
		port=$(free_port) || die "no free port"
		redis-server --bind 127.0.0.1 --port "$port" --protected-mode yes \
			--save '' --appendonly no --io-threads 2 --daemonize no \
			--dir "$work" --logfile "$log" &
		srv=$!
		for _ in $(seq 100); do
			kill -0 "$srv" 2>/dev/null || break
			[ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ] && return 0
			sleep 0.1
		done
		stop "$srv" TERM	# the port was taken meanwhile, or it did not come up
		srv=
	done
	die "redis-server did not start (see $log)"
}

# CPU seconds (user + system, all threads) of PID so far.
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo "?"
}

# Exits unless redis-server, redis-benchmark, redis-cli and timeout are installed.
need_redis() {
	for c in redis-server redis-benchmark redis-cli timeout; do
		command -v "$c" >/dev/null || die "$c is not installed (packaging/deps.sh installs redis-server and redis-tools)"
	done
}
