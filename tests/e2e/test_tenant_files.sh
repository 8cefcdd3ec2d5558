# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Files a hostile tenant names (docs/security.md, "Files a target names"): an
# unprivileged user (nobody, no capabilities; in its own user and mount
# namespace where it needs one) plants FIFOs, symlinks, a self-truncating
# library, a decompression bomb, thousands of mapped files and a huge maps
# file, CFI naming a huge register and debug info nested 300,000 deep,
# ELF headers that cost libelf far more than their bytes, and 80 processes
# of long maps; the root profiler, attached with -p (-a for the 80
# processes), must finish each run with a
# report (under `timeout`: a hang is a failure), never read a file outside
# the tenant's root, and name what it refused in the report's Limits.
# tests/workloads/tenant_files.c is the tenant's program,
# tests/workloads/lib/cp_tenantlib.c its library; tenant_parse.c (with
# tenant_parse.S) carries the CFI and the nesting.
. "$(dirname "$0")/tap.sh"

need_root "the profiler runs as root against a tenant"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
# How long a tenant's program runs at most: each run ends it (and the
# processes it started) once the profiler is done, so this only needs to
# outlast the profiler's start on a loaded machine.
RUN_MS=${CP_TENANT_MS:-30000}
d=$(tenant_dir) || skip_all "cannot make a directory for the tenant"
secret=$(mktemp -d)
chmod 0700 "$secret"
# the reports: the profiler's own directory (it drops CAP_DAC_OVERRIDE after
# setup, so it could not write into the tenant's)
out=$(mktemp -d)
wl_pid=
more_pids=()
cg=
fm_cg=
cleanup() {
	[ -n "$wl_pid" ] && kill "$wl_pid" 2>/dev/null
	[ ${#more_pids[@]} -gt 0 ] && kill "${more_pids[@]}" 2>/dev/null
	wait 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	[ -n "$fm_cg" ] && rmdir "$fm_cg" 2>/dev/null
	rm -rf "$d" "$secret" "$out" "$tap_out"
}
trap cleanup EXIT
cp "$WL/tenant_files" "$WL/libcp_tenant.so" "$d/"
chown nobody:nogroup "$d"/*

# tenant NAME CMD...: CMD as the tenant in the background, its output in
# $d/NAME.out; waits for "ready PID" and sets pid. Status 1 on time-out.
tenant() {
	local name=$1
	shift
	rm -f "$d/$name.out"
	as_tenant "$@" >"$d/$name.out" 2>&1 &
	wl_pid=$!
	if ! wait_for "^ready " "$d/$name.out" 30; then
		_not_ok "$name: the tenant's program starts" "$(cat "$d/$name.out")"
		return 1
	fi
	pid=$(awk '$1 == "ready" { print $2; exit }' "$d/$name.out")
}

# in_ns NAME SETUP: the tenant's program run inside `unshare -Urm` from a
# tmpfs at $d/m (invisible to the host), then SETUP (shell, in the
# namespace) mounts another tmpfs over $d/m and plants what it wants at the
# paths the maps name. Sets pid once SETUP ran ("ready" is shown after it).
in_ns() {
	local name=$1 setup=$2
	mkdir -p "$d/m" && chown nobody:nogroup "$d/m"
	tenant "$name" unshare -Urm sh -c '
		d=$1 ms=$2 setup=$3 name=$4
		mount -t tmpfs t "$d/m" && cp "$d/tenant_files" "$d/libcp_tenant.so" "$d/m/" || exit 1
		"$d/m/tenant_files" lib "$d/m/libcp_tenant.so" "$ms" > "$d/$name.wl" 2>&1 &
		while ! grep -q "^ready" "$d/$name.wl" 2>/dev/null; do sleep 0.05; done
		mount -t tmpfs t "$d/m" && eval "$setup" || exit 1
		cat "$d/$name.wl"
		wait' sh "$d" "$RUN_MS" "$setup" "$name"
}

# profile NAME [WRAPPER...]: the root profiler on $pid for 3 s under a
# time-out (run by WRAPPER: time, prlimit), the report in $out/NAME.txt and
# the options in the array opts; status in rc.
opts=()
profile() {
	local name=$1
	shift
	run_cmd "$@" timeout -k 5 60 "$BIN" --source soft -d 3 --quiet -p "$pid" \
		-o "$out/$name.txt" "${opts[@]}"
	opts=()
	kill "$wl_pid" 2>/dev/null
	wait "$wl_pid" 2>/dev/null
	wl_pid=
	end_tenants
}

# end_tenants: every process of the tenant's programs (the children they
# forked, those in their namespaces) ends now, not at RUN_MS.
end_tenants() {
	pkill -KILL -u nobody -f "$d/" 2>/dev/null
}

# finished NAME DESC: the run ended by itself (not killed: 124 is the
# time-out, 128+N a signal) and wrote its report.
finished() {
	if [ "$rc" -ne 0 ]; then
		_not_ok "$2" "exit status $rc (124: hung until the time-out; 135: SIGBUS)"
	elif ! grep -q "^Limits" "$out/$1.txt" 2>/dev/null; then
		_not_ok "$2" "no report in $out/$1.txt"
	else
		_ok "$2"
	fi
}

# refused NAME REASON: the Limits section counts a refusal for REASON.
refused() {
	grep -Eq "^  files refused: [0-9]+ \(.*$2 [1-9]" "$out/$1.txt"
}

# timer_for NAME sets the array timer: GNU time's maximum resident set (the
# kernel's count of the profiler or of its largest child, a parse worker:
# the report's own figure is sampled, and misses short peaks) and wall time
# of run NAME, into $d/NAME.time.
timer_for() {
	timer=()
	[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "maxrss_kib %M
wall_s %e" -o "$d/$1.time")
}
# under NAME KEY DIVISOR MAX UNIT DESC: run NAME's KEY figure, divided, is under MAX.
under() {
	local name=$1 key=$2 div=$3 max=$4 unit=$5 desc=$6 got
	if [ ${#timer[@]} -eq 0 ]; then
		skip "$desc (no /usr/bin/time)"
	elif got=$(awk -v k="$key" -v d="$div" '$1 == k { print int($2 / d) }' "$d/$name.time") &&
		[ -n "$got" ] && [ "$got" -lt "$max" ]; then
		_ok "$desc: $got $unit"
	else
		_not_ok "$desc (< $max $unit)" "$(cat "$d/$name.time")"
	fi
}
# rss_under NAME MIB DESC, wall_under NAME SECONDS DESC
rss_under() {
	under "$1" maxrss_kib 1024 "$2" MiB "$3"
}
wall_under() {
	under "$1" wall_s 1 "$2" s "$3"
}

# 1. A stripped binary whose .gnu_debuglink names a FIFO next to it.
objcopy --only-keep-debug "$d/tenant_files" "$d/dl.debug" &&
	objcopy --strip-debug --add-gnu-debuglink="$d/dl.debug" "$d/tenant_files" "$d/dl" &&
	rm "$d/dl.debug" && mkfifo "$d/dl.debug" && chown nobody:nogroup "$d/dl" "$d/dl.debug"
if tenant debuglink "$d/dl" spin "$RUN_MS"; then
	profile debuglink
	finished debuglink "a .gnu_debuglink naming a FIFO: no hang, a report"
fi

# 2. FIFOs at the binary's and the library's paths in the tenant's mount
# namespace, planted after they were mapped (and after maps were read).
if in_ns fifo 'mkfifo "$d/m/tenant_files" "$d/m/libcp_tenant.so"'; then
	profile fifo
	finished fifo "FIFOs at the mapped paths in the tenant's namespace: no hang, a report"
	if grep -q "cp_tenant_stream" "$out/fifo.txt"; then
		_ok "the library is still named (read through map_files, not its path)"
	else
		_not_ok "the library is still named (read through map_files, not its path)"
	fi
fi

# 3. An absolute symlink at the library's path, to a root-only host file
# with symbols of its own: resolved in the profiler's root, it would name
# them. The profiler must read the mapped file, never the link's target.
objcopy --strip-debug --prefix-symbols=tfsecret_ "$WL/libcp_tenant.so" "$secret/libsecret.so"
if in_ns symlink "ln -s '$secret/libsecret.so' \"\$d/m/libcp_tenant.so\""; then
	profile symlink
	finished symlink "an absolute symlink out of the tenant's root: a report"
	if grep -q "tfsecret_" "$out/symlink.txt"; then
		_not_ok "the root-only file's symbols are not in the report" \
			"$(grep tfsecret_ "$out/symlink.txt" | head -3)"
	elif ! grep -q "cp_tenant_stream" "$out/symlink.txt"; then
		_not_ok "the mapped library is named instead" "$(sed -n '/^Issues/,/^Limits/p' "$out/symlink.txt" | head -20)"
	else
		_ok "the root-only file's symbols are not in the report, the mapped library's are"
	fi
fi

# 4. A library its processes truncate and write back over and over, while
# new processes run in it: a profiler that has it mmapped (libdw) dies of
# SIGBUS looking their samples up.
mkdir -p "$d/flip" && cp "$WL/libcp_tenant.so" "$d/flip/" && chown -R nobody:nogroup "$d/flip"
if tenant flip "$d/tenant_files" flip "$d/flip/libcp_tenant.so" "$RUN_MS"; then
	profile flip
	finished flip "a library truncated while profiled: no SIGBUS, a report"
fi

# 5. A 441 KB library with two 200 MiB zlib sections: refused before libdw
# inflates them, RSS under --max-memory, the refusal counted.
head -c $((200 << 20)) /dev/zero >"$secret/zeros"
# (objcopy compresses only sections that were in its input: two steps)
strip --strip-debug -o "$secret/bomb.so" "$WL/libcp_tenant.so" &&
	objcopy --add-section .debug_info="$secret/zeros" --add-section .debug_str="$secret/zeros" \
		"$secret/bomb.so" "$secret/big.so" &&
	objcopy --compress-debug-sections=zlib "$secret/big.so" "$d/bomb.so" &&
	chown nobody:nogroup "$d/bomb.so"
rm -f "$secret/zeros" "$secret/big.so"
if tenant bomb "$d/tenant_files" lib "$d/bomb.so" "$RUN_MS"; then
	opts=(--max-memory 256M)
	profile bomb
	finished bomb "a compressed-section bomb: a report"
	peak=$(sed -n 's/^  memory: [0-9.]* MiB, peak \([0-9.]*\) MiB.*/\1/p' "$out/bomb.txt")
	if [ -n "$peak" ] && awk -v p="$peak" 'BEGIN { exit !(p < 256) }' &&
		refused bomb "compressed sections too big"; then
		_ok "the bomb is refused and counted; peak memory $peak MiB < 256"
	else
		_not_ok "the bomb is refused and counted; peak memory under --max-memory" \
			"peak ${peak:-?} MiB" "$(grep -A4 '^Limits' "$out/bomb.txt")"
	fi
fi

# 6. 1,150 mapped ELF files and a deleted one (the deleted file makes the
# profiler open the process's every file), against a soft fd limit of 1,024.
mkdir -p "$d/many" && chown nobody:nogroup "$d/many"
if tenant many "$d/tenant_files" maps "$d/libcp_tenant.so" "$d/many" 1150 "$RUN_MS"; then
	profile many prlimit --nofile=1024:4096
	finished many "1,150 mapped files with 1,024 descriptors: the report is written"
	if grep -q "Too many open files" "$tap_out"; then
		_not_ok "no \"Too many open files\"" "$(grep -m3 'Too many open files' "$tap_out")"
	else
		_ok "no \"Too many open files\""
	fi
fi

# 7. 30,000 mappings under 4,000-byte paths (120 MB of maps): read up to the
# cap only, the cut counted, the profiler's RSS bounded (GNU time's maximum
# resident set: the report's own figure is sampled, and misses short peaks).
mkdir -p "$d/long" && chown nobody:nogroup "$d/long"
if tenant long "$d/tenant_files" longmaps "$d/long" 30000 "$RUN_MS"; then
	timer_for long
	profile long "${timer[@]}"
	finished long "a huge /proc/PID/maps: a report"
	if refused long "maps cut at their byte cap"; then
		_ok "maps read up to the cap, the cut counted"
	else
		_not_ok "maps read up to the cap, the cut counted" "$(grep -A4 '^Limits' "$out/long.txt")"
	fi
	rss_under long 150 "the profiler's RSS stays bounded"
fi

# 8. CFI naming register 50,331,648 (tests/workloads/tenant_parse.c) in a
# function without a frame pointer, so every walked tick's stack copy is
# unwound by CFI: libdw would size its register table for it (384 MiB per
# unwind, ~2 s of page faults each). Refused before libdw executes it, the
# refusal counted, RSS under --max-memory, the run as long as any other.
cp "$WL/tenant_parse" "$d/" && chown nobody:nogroup "$d/tenant_parse"
if tenant cfi "$d/tenant_parse" cfi "$RUN_MS"; then
	timer_for cfi
	opts=(--max-memory 256M --stack-every 1)
	profile cfi "${timer[@]}"
	finished cfi "CFI naming a huge register in unwound stacks: a report"
	if refused cfi "CFI out of bounds" && grep -q "stream (tenant_parse.c" "$out/cfi.txt"; then
		_ok "the module's CFI is refused and counted, its symbols kept"
	else
		_not_ok "the module's CFI is refused and counted, its symbols kept" \
			"$(grep -A6 '^Limits' "$out/cfi.txt")"
	fi
	rss_under cfi 256 "the profiler's RSS stays under --max-memory"
fi

# 9. Debug info nesting 300,000 lexical blocks around one function's code
# (tests/workloads/tenant_parse.S), in a unit with no subprogram: libdw's
# dwarf_getscopes() recursed once per level and the profiler died of
# SIGSEGV. The walk is the profiler's own, its depth capped and counted;
# the function is named by its symbol, the others by their debug info.
if tenant deep "$d/tenant_parse" deep "$RUN_MS"; then
	profile deep
	finished deep "debug info nesting 300,000 blocks: no SIGSEGV, a report"
	if refused deep "DWARF past the walk's caps" && grep -q "cp_deep_stream" "$out/deep.txt" &&
		grep -q "stream (tenant_parse.c:" "$out/deep.txt"; then
		_ok "the nesting is cut and counted, the module's functions named"
	else
		_not_ok "the nesting is cut and counted, the module's functions named" \
			"$(sed -n '/^Instructions/,/^Objects/p' "$out/deep.txt" | head -8)" \
			"$(grep -A6 '^Limits' "$out/deep.txt")"
	fi
fi
# 10-13. Debug info small on disk and costly to read
# (tests/workloads/tenant_dwarf.S), and MiniDebugInfo that inflates to
# 384 MiB: each took the profiler past --max-memory (funcs 2.1 GB, lines
# 1 GB, the bomb 550 MB) or held it for minutes (inl: 40 s of CPU per
# lookup). The profiler's own walks are capped (funcs, inl); what libdw
# does (lines, the bomb) a parse worker meets first and its file is
# refused. Each run must end with a report, GNU time's maximum resident
# set (the profiler and its workers) under the 256 MiB --max-memory, in
# under 15 s (3 s of profiling; before, inl took 33 s).
# costly NAME REASON DESC CMD...: the tenant runs CMD; the run is checked
# as above and must count a refusal for REASON.
costly() {
	local name=$1 why=$2 desc=$3
	shift 3
	if tenant "$name" "$@"; then
		timer_for "$name"
		profile "$name" "${timer[@]}"
		finished "$name" "$desc: a report"
		if refused "$name" "$why"; then
			_ok "$desc: refused and counted ($why)"
		else
			_not_ok "$desc: refused and counted ($why)" "$(grep -A8 '^Limits' "$out/$name.txt")"
		fi
		rss_under "$name" 256 "$desc: the profiler and its workers under --max-memory"
		wall_under "$name" 15 "$desc: the run's wall time"
	fi
}
for kind in funcs inl lines; do
	cp "$WL/tenant_dwarf_$kind" "$d/" && chown nobody:nogroup "$d/tenant_dwarf_$kind"
done
costly dwfuncs "DWARF past the walk's caps" "6,000 subprograms naming one list of 6,000 ranges" \
	"$d/tenant_dwarf_funcs" "$RUN_MS"
costly dwinl "DWARF past the walk's caps" "30,000 inlined calls each naming 30,000 ranges" \
	"$d/tenant_dwarf_inl" "$RUN_MS"
costly dwlines "copy past --max-memory" "a line program of 4,000,000 rows" \
	"$d/tenant_dwarf_lines" "$RUN_MS"
if command -v xz >/dev/null && head -c 384M /dev/zero | xz -1 -T1 >"$d/bomb.xz" &&
	objcopy --strip-all --add-section .gnu_debugdata="$d/bomb.xz" "$d/tenant_files" "$d/mdi" &&
	chown nobody:nogroup "$d/mdi"; then
	rm -f "$d/bomb.xz"
	costly mdi "copy past --max-memory" "MiniDebugInfo inflating to 384 MiB" \
		"$d/mdi" spin "$RUN_MS"
else
	skip "MiniDebugInfo: no xz or objcopy"
fi
# The tenant's own files are parsed once, by the describe server, not first
# by a parse worker too (the host's by neither)
if grep -q "; 0 parsed first by a worker" "$out/dwlines.txt" 2>/dev/null &&
	grep -Eq "^  describe server .*: [1-9][0-9]* requests" "$out/dwlines.txt"; then
	_ok "the tenant's files parsed once, by the describe server"
else
	_not_ok "the tenant's files parsed once, by the describe server" \
		"$(grep 'file copies\|describe server' "$out/dwlines.txt")"
fi

# 8. Sparse libraries: three copies of the tenant's library grown to 200 MiB
# with holes (truncate; 16 KiB of disk each), one with a 200 MiB section
# lying in its hole (what libelf would read), each mapped by its own
# process. A copy of every byte cost the profiler 1.2 GiB of shmem for them,
# unseen by --max-memory. Measured as the kernel counts it: the peak of a
# memory cgroup of the profiler's own (cgroup v2 memory.peak or v1
# memory.max_usage_in_bytes: unmapped memfd pages are in no RSS), GNU time's
# maximum resident set, and the wall time against the same run on the
# plain libraries.

# mem_cgroup: a new memory cgroup below this shell's, its directory in cg.
mem_cgroup() {
	local p v2 v1
	p=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
	for v2 in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		[ -n "$p" ] && [ -e "$v2$p/memory.peak" ] &&
			grep -qw memory "$v2$p/cgroup.subtree_control" 2>/dev/null &&
			mkdir "$v2$p/cp_sparse_$$" 2>/dev/null && cg=$v2$p/cp_sparse_$$ && return 0
	done
	[ -n "$v1" ] && [ -d "/sys/fs/cgroup/memory$v1" ] &&
		mkdir "/sys/fs/cgroup/memory$v1/cp_sparse_$$" 2>/dev/null &&
		cg=/sys/fs/cgroup/memory$v1/cp_sparse_$$
}

# cg_peak: the cgroup's peak in MiB.
cg_peak() {
	local f=$cg/memory.peak
	[ -e "$f" ] || f=$cg/memory.max_usage_in_bytes
	echo $(($(cat "$f") >> 20))
}

# sparse_run NAME LIB...: one tenant process per library, the profiler on
# them all in the cgroup (a fresh one each run) under GNU time; sets wall (s).
sparse_run() {
	local name=$1 i=0 pids=() t0 t1
	shift
	for lib; do
		i=$((i + 1))
		tenant "$name$i" "$d/tenant_files" lib "$lib" 30000 || return 1
		pids+=("$pid")
		more_pids+=("$wl_pid")
	done
	pid=$(IFS=,; echo "${pids[*]}")
	wl_pid=
	[ -n "$cg" ] && rmdir "$cg"
	cg=
	mem_cgroup
	opts=(--max-memory 256M)
	t0=$(date +%s%N)
	profile "$name" /usr/bin/time -f "maxrss_kb %M" -o "$d/$name.time" \
		sh -c '[ -z "$0" ] || echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg"
	t1=$(date +%s%N)
	wall=$(((t1 - t0) / 1000000))
	kill "${more_pids[@]}" 2>/dev/null
	wait 2>/dev/null
	more_pids=()
}

if [ ! -x /usr/bin/time ]; then
	skip "sparse libraries (no GNU /usr/bin/time)"
else
	for i in 1 2 3; do
		cp "$WL/libcp_tenant.so" "$d/plain$i.so"
	done
	cp "$WL/libcp_tenant.so" "$d/sparse1.so" && truncate -s 200M "$d/sparse1.so"
	cp "$WL/libcp_tenant.so" "$d/sparse2.so" && truncate -s 200M "$d/sparse2.so"
	truncate -s 200M "$secret/zeros" &&
		objcopy --add-section .debug_junk="$secret/zeros" "$WL/libcp_tenant.so" "$secret/junk.so" &&
		cp --sparse=always "$secret/junk.so" "$d/sparse3.so"
	rm -f "$secret/zeros" "$secret/junk.so"
	chown nobody:nogroup "$d"/plain?.so "$d"/sparse?.so
	if sparse_run plain "$d"/plain?.so; then
		plain_wall=$wall
		plain_peak=$([ -n "$cg" ] && cg_peak)
	fi
	if sparse_run sparse "$d"/sparse?.so; then
		finished sparse "three sparse 200 MiB libraries: a report"
		maxrss=$(awk '$1 == "maxrss_kb" { print int($2 / 1024) }' "$d/sparse.time")
		if [ -z "$cg" ]; then
			skip "the profiler's peak memory (no memory cgroup to measure it in)"
		elif peak=$(cg_peak) && [ "$peak" -lt 256 ] && [ -n "$maxrss" ] &&
			[ "$maxrss" -lt 256 ]; then
			_ok "peak memory under --max-memory 256M: cgroup $peak MiB, RSS $maxrss MiB (plain libraries: cgroup ${plain_peak:-?} MiB)"
		else
			_not_ok "peak memory under --max-memory 256M" "cgroup peak $peak MiB, max RSS ${maxrss:-?} MiB"
		fi
		if [ -n "$plain_wall" ] && [ "$wall" -le $((plain_wall + 5000)) ]; then
			_ok "wall time ${wall} ms, the plain libraries' ${plain_wall} ms"
		else
			_not_ok "wall time at most 5 s more than the plain libraries'" \
				"${wall} ms against ${plain_wall:-?} ms"
		fi
		if refused sparse "copy past --max-memory" &&
			grep -q "cp_tenant_stream" "$out/sparse.txt"; then
			_ok "the section in a hole refused and counted; the grown libraries named"
		else
			_not_ok "the section in a hole refused and counted; the grown libraries named" \
				"$(grep -A6 '^Limits' "$out/sparse.txt")"
		fi
	fi
fi

# 10. The same library (and binary, libc) mapped by two tenant processes:
# each file copied once, not once per process (the report's "file copies",
# JSON limits.file_copies, Prometheus cacheperf_file_copies_total), and
# both processes still named in the library.
# limits_of JSON SECTION KEY...: the report's limits.SECTION.KEY figures, on one line.
limits_of() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["limits"][sys.argv[2]]
print(*(s[k] for k in sys.argv[3:]))' "$@" 2>/dev/null
}
if ! command -v python3 >/dev/null; then
	skip "copies per file (no python3 to read the JSON report)"
elif tenant shared1 "$d/tenant_files" lib "$d/libcp_tenant.so" "$RUN_MS"; then
	opts=(--json "$out/one.json")
	profile one
	if tenant shared1 "$d/tenant_files" lib "$d/libcp_tenant.so" "$RUN_MS"; then
		p1=$pid
		more_pids+=("$wl_pid")
		if tenant shared2 "$d/tenant_files" lib "$d/libcp_tenant.so" "$RUN_MS"; then
			pid="$p1,$pid"
			opts=(--json "$out/two.json" --prom-file "$out/two.prom")
			profile two
		fi
		more_pids=()
	fi
	finished two "two processes of the same files: a report"
	read -r one_made _ <<<"$(limits_of "$out/one.json" file_copies made reused)"
	read -r two_made two_reused <<<"$(limits_of "$out/two.json" file_copies made reused)"
	if [ -n "$one_made" ] && [ "$one_made" -gt 0 ] && [ "$two_made" = "$one_made" ]; then
		_ok "two processes, one copy of each file: $two_made made ($two_reused reused), one process $one_made"
	else
		_not_ok "two processes, one copy of each file" \
			"made ${two_made:-?} for two processes, ${one_made:-?} for one" \
			"$(grep '^  file copies' "$out/one.txt" "$out/two.txt")"
	fi
	named=$(grep -c "cp_tenant_stream" "$out/two.txt")
	if grep -q '^cacheperf_file_copies_total{result="made"} [1-9]' "$out/two.prom" 2>/dev/null &&
		grep -q "^  file copies: $two_made made" "$out/two.txt" && [ "$named" -gt 0 ]; then
		_ok "the copies counted in the report and Prometheus; the library named"
	else
		_not_ok "the copies counted in the report and Prometheus; the library named" \
			"$(grep file_copies "$out/two.prom" 2>/dev/null)" "$(grep '^  file copies' "$out/two.txt")"
	fi
fi

# 11. The describe server: a tenant's files are described in a sandboxed
# child of the profiler's (cp-symbols: seccomp, no capability), not by
# libdw in the profiler. A server killed mid-run, as a crash in libdw would
# end it, costs the profiler nothing: it finishes with its report, and the
# library is named (by the server before it died, or by the next one), or,
# had a request been in flight, that file alone is refused and counted.
if ! command -v python3 >/dev/null; then
	skip "the describe server (no python3 to read the JSON report)"
elif tenant server "$d/tenant_files" lib "$d/libcp_tenant.so" "$RUN_MS"; then
	timeout -k 5 60 "$BIN" --source soft -d 4 --quiet -p "$pid" -o "$out/server.txt" \
		--json "$out/server.json" &
	guard=$!
	srv=
	for _ in $(seq 100); do
		prof=$(pgrep -P "$guard" -x cacheperf-bpf)
		srv=${prof:+$(pgrep -P "$prof" -x cp-symbols)}
		[ -n "$srv" ] && break
		sleep 0.05
	done
	# forked a moment ago, it may not have bounded itself yet
	for _ in $(seq 40); do
		status=$(cat "/proc/$srv/status" 2>/dev/null)
		grep -q '^Seccomp:[[:space:]]*2' <<<"$status" && break
		sleep 0.05
	done
	[ -n "$srv" ] && kill -SEGV "$srv"
	wait "$guard"
	rc=$?
	kill "$wl_pid" 2>/dev/null
	wait "$wl_pid" 2>/dev/null
	wl_pid=
	end_tenants
	finished server "the describe server killed mid-run: a report"
	# (the user nobody only where the profiler may still switch: it dropped CAP_SETUID)
	bounds='^(Seccomp:\s*2|NoNewPrivs:\s*1|CapEff:\s*0+|CapPrm:\s*0+)$'
	if [ -n "$srv" ] && [ "$(grep -cE "$bounds" <<<"$status")" = 4 ]; then
		_ok "the tenant's files are described by cp-symbols: seccomp, no_new_privs, no capability"
	else
		_not_ok "the tenant's files are described by cp-symbols: seccomp, no_new_privs, no capability" \
			"server pid '${srv}'" "$status"
	fi
	read -r started refused_n <<<"$(limits_of "$out/server.json" describe_server started refused)"
	if [ "${started:-0}" -ge 1 ] && { grep -q "cp_tenant_stream" "$out/server.txt" ||
		{ [ "${refused_n:-0}" -ge 1 ] && refused server "its parse failed in the worker"; }; }; then
		_ok "the library named after the server's death ($started started, $refused_n refused)"
	else
		_not_ok "the library named after the server's death" \
			"started ${started:-?}, refused ${refused_n:-?}" "$(grep -A12 '^Limits' "$out/server.txt")"
	fi
	# its CPU time answering requests is the workers' budget's, and the report says so
	read -r srv_cpu srv_waits <<<"$(limits_of "$out/server.json" describe_server cpu_ns budget_waits)"
	if [ "${srv_cpu:-0}" -gt 0 ] && [ -n "$srv_waits" ] &&
		grep -q "^  describe server .* s of CPU from the workers' budget, $srv_waits lookups waited" \
			"$out/server.txt"; then
		_ok "the server's CPU time shown as the workers' budget's (${srv_cpu} ns, $srv_waits waits)"
	else
		_not_ok "the server's CPU time shown as the workers' budget's" \
			"cpu_ns ${srv_cpu:-?}, budget_waits ${srv_waits:-?}" \
			"$(grep '^  describe server' "$out/server.txt")"
	fi
fi

# 12. The tenant's own copy of libc (LD_LIBRARY_PATH, as a container's):
# a tenant's file, described by the describe server, which opens no path.
# Its DWARF is in the host's libc6-dbg debug file (same build-id): the
# profiler finds it and sends it with each request, so the report names
# libc's memset variant with its source line, as binutils' addr2line
# (which finds the same debug file) does for the same address.
libc_so=/lib/x86_64-linux-gnu/libc.so.6
if ! command -v addr2line >/dev/null || [ ! -f "$libc_so" ]; then
	skip "a tenant's libc (no addr2line or no $libc_so)"
else
	mkdir "$d/tlibc"
	cp "$libc_so" "$d/tlibc/"
	chown -R nobody:nogroup "$d/tlibc"
	if tenant tlibc env LD_LIBRARY_PATH="$d/tlibc" "$d/tenant_files" libc "$RUN_MS"; then
		base=$(awk -v f="$d/tlibc/libc.so.6" '$6 == f && $3 == "00000000" {
			split($1, a, "-"); print a[1]; exit }' "/proc/$pid/maps")
		profile tlibc
		finished tlibc "a tenant's libc: a report"
		# the hot memset: "ip function (file:line)" in the report
		read -r ip got <<<"$(awk '$NF ~ /\.S:[0-9]+\)$/ && $(NF-1) ~ /^__memset/ {
			print $(NF-2), $(NF-1), $NF; exit }' "$out/tlibc.txt")"
		want=
		if [ -n "$ip" ] && [ -n "$base" ]; then
			want=$(addr2line -f -e "$d/tlibc/libc.so.6" "$(printf '0x%x' $((ip - 0x$base)))" |
				awk 'NR == 1 { f = $1 } NR == 2 { n = split($1, p, "/"); print f, "(" p[n] ")" }')
		fi
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			_ok "the tenant's libc described with the host's debug file: $got"
		else
			_not_ok "the tenant's libc described with the host's debug file" \
				"report: ${ip:-no memset line} ${got}; addr2line: ${want:-?} (base ${base:-?})" \
				"$(grep -i 'memset\|libc' "$out/tlibc.txt" | head -5)"
		fi
	fi
fi
# 13. Many big libraries, each a file of its own (12 copies of the tenant's
# library with 20 MiB of data added), walked in turn under --max-memory
# 128M. Each Dwfl of the profiler's held its file's sealed copy, as the
# describe server held those it parsed, so they held all twelve, past what
# the kept copies let go, and the drain stalled for seconds copying them
# again for each stack. Now the Dwfls keep a quarter of the limit of copies
# (Limits counts the Dwfls let go for it) and the two servers share
# another: the run ends with a report, its memory under the limit as the
# profiler counts it (the servers' copies too), no server restarted, the
# library's function named. What cannot fit is refused and counted ("copy
# past --max-memory"): twelve 20 MiB files do not fit in 128 MiB. Copies
# admitted up to the limit itself held the profiler there, and a parse
# between two readings took the peak past it (128.2 MiB, one run in two):
# they leave an eighth of the limit to that growth.
if head -c 20M /dev/urandom >"$d/junk.bin" &&
	objcopy --add-section .cp_junk="$d/junk.bin" "$d/libcp_tenant.so" "$d/big.so"; then
	rm -f "$d/junk.bin"
	libs=()
	for i in $(seq 1 12); do
		cp "$d/big.so" "$d/big$i.so"
		libs+=("$d/big$i.so")
	done
	rm -f "$d/big.so"
	chown nobody:nogroup "${libs[@]}"
	if tenant biglibs "$d/tenant_files" libs "$RUN_MS" "${libs[@]}"; then
		opts=(--max-memory 128M)
		profile biglibs
		finished biglibs "12 libraries of 20 MiB: a report"
		lim=$(sed -n '/^Limits/,$p' "$out/biglibs.txt")
		peak=$(sed -n 's/^  memory: .*, peak \([0-9.]*\) MiB .*, limit \([0-9]*\) MiB.*/\1 \2/p' <<<"$lim")
		if grep -Eq "^  symbolizer: snapshots evicted [0-9]+ \\([1-9][0-9]* to keep their files' copies" <<<"$lim" &&
			grep -Eq "^  describe server .* 0 restarted, 0 files refused" <<<"$lim" &&
			[ -n "$peak" ] && awk -v p="$peak" 'BEGIN { split(p, a, " "); exit !(a[1] <= a[2]) }' &&
			grep -q "cp_tenant_stream" "$out/biglibs.txt"; then
			_ok "12 libraries of 20 MiB: copies bounded, no server restarted, under the limit, the function named"
		else
			_not_ok "12 libraries of 20 MiB: copies bounded, no server restarted, under the limit, the function named" \
				"$(grep -E '^  (files refused|symbolizer|file copies|describe server|memory)' <<<"$lim")" \
				"$(grep -c cp_tenant_stream "$out/biglibs.txt") lines name cp_tenant_stream"
		fi
	fi
	rm -f "${libs[@]}"
else
	skip "many big libraries: no objcopy"
fi

# 14. The tenant's library deleted after dlopen, and one replaced by another
# file renamed over its path: no file on disk is the mapped one, so the
# process's own Dwfl answers for it (reached through map_files). It is the
# describe server's all the same, from the kept copy of the content judged:
# the report names the function and line binutils' addr2line gives for the
# same address of the library as it was, the server's requests are counted
# (Limits, JSON limits.describe_server), and no parse worker vetted it
# first, as libdw in the profiler never parses it ("0 parsed first by a
# worker", JSON limits.parse_workers).
# gone NAME HOW: the library at $d/NAME/, gone by HOW (rm, mv) once mapped.
gone() {
	local name=$1 how=$2 base ip got want requests workers
	mkdir -p "$d/$name" && cp "$WL/libcp_tenant.so" "$d/$name/" && cp "$WL/libcp_tenant.so" "$secret/$name.so"
	chown -R nobody:nogroup "$d/$name"
	tenant "$name" "$d/tenant_files" lib "$d/$name/libcp_tenant.so" "$RUN_MS" || return
	base=$(awk -v f="$d/$name/libcp_tenant.so" '$6 == f && $3 == "00000000" {
		split($1, a, "-"); print a[1]; exit }' "/proc/$pid/maps")
	if [ "$how" = rm ]; then
		rm "$d/$name/libcp_tenant.so"
	else
		cp "$d/tenant_files" "$d/$name/new.so" && chown nobody:nogroup "$d/$name/new.so" &&
			mv "$d/$name/new.so" "$d/$name/libcp_tenant.so"
	fi
	opts=(--json "$out/$name.json")
	profile "$name"
	finished "$name" "a tenant's library gone since it was mapped ($how): a report"
	read -r ip got <<<"$(awk 'NF > 2 && $(NF-1) == "cp_tenant_stream" { print $(NF-2), $(NF-1), $NF; exit }' \
		"$out/$name.txt")"
	want=
	if [ -n "$ip" ] && [ -n "$base" ]; then
		want=$(addr2line -f -e "$secret/$name.so" "$(printf '0x%x' $((ip - 0x$base)))" |
			awk 'NR == 1 { f = $1 } NR == 2 { n = split($1, p, "/"); print f, "(" p[n] ")" }')
	fi
	read -r requests <<<"$(limits_of "$out/$name.json" describe_server requests)"
	workers=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["limits"]["parse_workers"])' \
		"$out/$name.json" 2>/dev/null)
	if [ -n "$want" ] && [ "$got" = "$want" ] && [ "${requests:-0}" -ge 1 ] && [ "$workers" = 0 ] &&
		grep -q "^  file copies: .*; 0 parsed first by a worker" "$out/$name.txt" &&
		grep -Eq "^  describe server .*: $requests requests" "$out/$name.txt"; then
		_ok "the library gone ($how) named by the describe server alone: $got, $requests requests"
	else
		_not_ok "the library gone ($how) named by the describe server alone" \
			"report: ${ip:-no cp_tenant_stream line} ${got}; addr2line: ${want:-?} (base ${base:-?})" \
			"requests ${requests:-?}, parse_workers ${workers:-?}" \
			"$(grep 'file copies\|describe server' "$out/$name.txt")"
	fi
}
if ! command -v python3 >/dev/null || ! command -v addr2line >/dev/null; then
	skip "a tenant's library gone since it was mapped (no python3 or addr2line)"
else
	gone deleted rm
	gone replaced mv
fi
# 15. ELF files whose headers cost libelf and libdw far more than their
# bytes (tests/workloads/tenant_elf.c), each a copy of the tenant's library
# its program loads and walks in: 65,000 section names in a 40 MiB
# .shstrtab with no NUL (libelf's elf_strptr() looked for one from each
# name to the table's end: the run hung for minutes), 1,000,000 object
# symbols named in a 32 MiB .strtab without one (the globals' reader, the
# same), 998 compressed sections over one MiB at an odd offset
# (gelf_getchdr() copied each first: a GiB with --max-memory 256M), and,
# recorded then replayed, 1,000 note sections over such a MiB (libdw's
# build-id reader copied each: a GiB). The profiler
# reads them in bounds (user/machine/elf_bounds.h): each run ends with a
# report, GNU time's maximum resident set under --max-memory, in under
# 15 s (3 s of profiling).
# Unterminated tables are refused before libdw sees the file, and counted.
# hostile KIND DESC REASON [OPTION...]: the library made so, loaded,
# profiled; a refusal for REASON counted (none: "").
hostile() {
	local kind=$1 desc=$2 why=$3
	shift 3
	if ! "$WL/tenant_elf" "$kind" "$WL/libcp_tenant.so" "$d/h$kind.so" ||
		! chown nobody:nogroup "$d/h$kind.so"; then
		_not_ok "$desc: the library is made"
		return 1
	fi
	tenant "h$kind" "$d/tenant_files" lib "$d/h$kind.so" "$RUN_MS" || return 1
	timer_for "h$kind"
	opts=(--max-memory 256M "$@")
	profile "h$kind" "${timer[@]}"
	finished "h$kind" "$desc: a report"
	rss_under "h$kind" 256 "$desc: the profiler and its workers under --max-memory"
	wall_under "h$kind" 15 "$desc: the run's wall time"
	if [ -z "$why" ]; then
		:
	elif refused "h$kind" "$why"; then
		_ok "$desc: refused and counted ($why)"
	else
		_not_ok "$desc: refused and counted ($why)" "$(grep -A8 '^Limits' "$out/h$kind.txt")"
	fi
}
hostile names "65,000 section names in a 40 MiB table without a NUL" "string tables unterminated"
hostile syms "1,000,000 object symbols named in a 32 MiB table without a NUL" \
	"string tables unterminated"
hostile chdrs "998 compressed sections over one odd-placed MiB" ""
# libelf's heap for a million section headers (320 MiB) is counted with
# the copy, before libelf sees it: past the limit, refused
hostile sections "1,000,000 section headers in 64 MB" "copy past --max-memory"
if hostile notes "1,000 note sections over one odd-placed MiB, recorded" "" \
	--record "$out/hnotes.rec"; then
	timer_for hnotes-replay
	run_cmd timeout -k 5 60 "${timer[@]}" "$BIN" report "$out/hnotes.rec" --max-memory 256M
	if [ "$rc" -eq 0 ]; then
		_ok "the recording replayed beside the file with 1,000 note sections"
	else
		_not_ok "the recording replayed beside the file with 1,000 note sections" \
			"exit status $rc" "$(tail -3 "$tap_out")"
	fi
	rss_under hnotes-replay 256 "the replay under --max-memory"
	wall_under hnotes-replay 15 "the replay's wall time"
fi
rm -f "$d"/h*.so

# code_file NAME FILE DESC [OPTION...]: the tenant runs the code at offset
# 4096 of FILE, mapped executable, profiled under --max-memory 256M (and
# the options): a report, GNU time's maximum resident set under the limit,
# in under 15 s.
code_file() {
	local name=$1 file=$2 desc=$3
	shift 3
	chown nobody:nogroup "$file" && tenant "$name" "$d/tenant_files" code "$file" 4096 "$RUN_MS" ||
		return 1
	timer_for "$name"
	opts=(--max-memory 256M "$@")
	profile "$name" "${timer[@]}"
	finished "$name" "$desc: a report"
	rss_under "$name" 256 "$desc: the profiler under --max-memory"
	wall_under "$name" 15 "$desc: the run's wall time"
	rm -f "$file"
}

# 16. No ELF file at all: a gzip file mapped executable, the code it runs
# at offset 4096 (tenant_elf gzip), 512 MiB of zeros after it (2.3 MB).
# libdw's opener inflates a compressed file that is not ELF, all of it, to
# look inside: a lookup in it took the profiler to 544 MiB and a 3 s run
# to 8 minutes (with 512 MiB: every lookup inflated it again). It is told
# by its magic now, never opened by libdw.
if "$WL/tenant_elf" gzip "$d/code.gz" && head -c 512M /dev/zero | gzip -1 >>"$d/code.gz"; then
	code_file gzcode "$d/code.gz" "code run from a gzip file inflating to 512 MiB"
else
	skip "code run from a gzip file: no gzip"
fi

# 17. Section headers that are the program headers (tenant_elf overlap):
# e_shnum 0 and e_shoff = e_phoff, so the section count libelf takes is
# the first program header's p_filesz, 2,000,000. The object table reads
# a file's header tables into an image and hands it to libelf, which kept
# ~300 bytes of heap for each: 1.6 GB under --max-memory 256M in a review.
# Extended numbering reads as no sections there now.
"$WL/tenant_elf" overlap "$d/overlap.so" &&
	code_file overlap "$d/overlap.so" "section headers read from the program headers"

# 18. A big-endian ELF file of a million section headers (64 MB): the
# copy's cost counted libelf's heap for files of this machine's byte order
# only, and libdw opened the file: 364 MiB under --max-memory 256M. Its
# heap is counted as if the file were all section headers now, and the
# symbolizer refuses it. With --record (the build-ids of the process's
# files, read at its first snapshot, before --max-memory was in force:
# every copy admitted) 353 MiB.
"$WL/tenant_elf" bigendian "$d/be.so" &&
	code_file bigendian "$d/be.so" "a big-endian file of a million sections, recorded" \
		--record "$out/be.rec"
# 19. Many processes with long maps under -a: 80 processes, each with 4,000
# mappings under a ~4,000-byte path (16 MB of /proc/PID/maps, ~150 ms for
# the kernel to write per read). The soft source, the object table and the
# symbolizer read each process's maps, again and again: the profiler ran
# 40-118 s instead of 3.5 and took 1.2 GB. Every read takes 256 KiB; past
# them, reads share one bank of bytes (what it cannot pay for is cut,
# counted): GNU time's maximum resident set under --max-memory 256M, the
# wall time at most 5 s more than with the same 80 processes with no long
# mappings. The tenant's processes are in a cgroup of their own, the
# profiler on it alone (-a --cgroup): the machine's other processes are not
# the test's.
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
# forkmaps NAME N: the tenant's 80 processes with N long mappings each, in
# the cgroup $fm_cg, profiled with -a --cgroup under GNU time ($d/NAME.time).
forkmaps() {
	local name=$1 n=$2 p
	mkdir -p "$d/fm" && chown nobody:nogroup "$d/fm"
	tenant "$name" "$d/tenant_files" forkmaps "$d/fm" 80 "$n" "$RUN_MS" || return 1
	fm_cg=$cg2/cp_forkmaps_$$
	mkdir -p "$fm_cg" || return 1
	for p in "$pid" $(pgrep -P "$pid"); do
		echo "$p" >"$fm_cg/cgroup.procs" 2>/dev/null
	done
	# (GNU time outside the time-out: a run killed by it still has its figures)
	timer_for "$name"
	run_cmd "${timer[@]}" timeout -k 5 60 "$BIN" --source soft -d 3 --quiet -a \
		--cgroup "/${fm_cg#"$cg2"/}" --max-memory 256M -o "$out/$name.txt"
	kill "$wl_pid" 2>/dev/null
	wait "$wl_pid" 2>/dev/null
	wl_pid=
	end_tenants
	for _ in $(seq 50); do
		rmdir "$fm_cg" 2>/dev/null && break
		sleep 0.1
	done
	fm_cg=
}
if [ -z "$cg2" ] || [ ! -x /usr/bin/time ]; then
	skip "80 processes of long maps under -a (no cgroup2 file system or no /usr/bin/time)"
elif forkmaps fmplain 0 && forkmaps fmlong 4000; then
	finished fmlong "80 processes of 4,000 long mappings under -a: a report"
	rss_under fmlong 256 "80 processes of long maps: the profiler's RSS under --max-memory"
	plain=$(awk '$1 == "wall_s" { print $2 }' "$d/fmplain.time")
	long=$(awk '$1 == "wall_s" { print $2 }' "$d/fmlong.time")
	if [ -n "$plain" ] && [ -n "$long" ] && awk -v a="$long" -v b="$plain" 'BEGIN { exit !(a <= b + 5) }'; then
		_ok "80 processes of long maps: wall time $long s, without them $plain s"
	else
		_not_ok "80 processes of long maps: wall time at most 5 s more than without them" \
			"${long:-?} s against ${plain:-?} s"
	fi
	if refused fmlong "maps cut for the reads' budget"; then
		_ok "the maps cut for the reads' budget are counted"
	else
		_not_ok "the maps cut for the reads' budget are counted" "$(grep -A8 '^Limits' "$out/fmlong.txt")"
	fi
fi

# many_files MODE N DESC OPTS...: tenant_files MODE (codefiles, datafiles)
# maps N one-page files and walks in fresh anonymous code; the root
# profiler's 3 s run with OPTS under GNU time gives a report, ends within
# 9 s and stays under --max-memory.
many_files() {
	local name=$1 n=$2 desc=$3
	shift 3
	mkdir -p "$d/$name" && chown nobody:nogroup "$d/$name"
	tenant "$name" "$d/tenant_files" "$name" "$d/$name" "$n" "$RUN_MS" || return 1
	timer_for "$name"
	opts=(--max-memory 256M "$@")
	profile "$name" "${timer[@]}"
	finished "$name" "$desc: a report"
	wall_under "$name" 9 "$desc: the 3 s run's wall time"
	rss_under "$name" 256 "$desc: the profiler's RSS under --max-memory"
}

# 20. 60,000 one-page files mapped executable by one process (helper-68):
# the symbolizer gave libdwfl the whole maps text, whose reporter walks its
# module list at each file, and the globals scanned every mapping for each
# file and opened them all at each snapshot: a 3 s run took 20 s and more
# (-d 10: 26 s, one record 25 s). libdwfl gets the files with code, 512 at
# most, the globals read 512 files at most, grouped in one sort: the run
# ends near its 3 s, the files past the cap counted.
if many_files codefiles 60000 "60,000 files mapped executable"; then
	if refused codefiles "modules per process capped"; then
		_ok "the files past the modules' cap are counted"
	else
		_not_ok "the files past the modules' cap are counted" "$(grep -A8 '^Limits' "$out/codefiles.txt")"
	fi
fi

# 21. The same with 40,000 data files (mapped readable only), with
# --record (helper-68): the recorder wrote the build-id of every mapped
# file, each read from a copy of the file, and once its table was full
# copied every file again at each maps text it wrote (9 processes of
# 9,000 files: 60.9 s for a 10 s run; here 17.6 s, 72,330 copies). Data
# files are never symbolized: their build-ids are not written, the 3 s
# run ends near its 3 s (3.5 s).
many_files datafiles 40000 "40,000 data files mapped, recorded" --record "$out/datafiles.rec"
done_testing
