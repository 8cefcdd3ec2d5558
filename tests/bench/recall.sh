#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Soft mode's recall (#31): each workload with a known sharing problem, and
# its fixed twin, run RUNS times under `--source soft`; a run finds its
# problem when the report has every expected issue (type, and the access
# line marked in tests/workloads) and, for a twin, none it must not have.
# Prints per workload: found/runs, the median impact of the first expected
# issue, and the median share of the target's user-mode ticks recovered as
# samples with an address (samples / ticks: what the skid correction and
# the decoded operands turned into accesses), then the totals.
#
# usage: recall.sh [RUNS [SECONDS [BUILD [MATCH]]]]   (default 5 runs of 3 s, build;
#        MATCH: only the workloads whose name matches this extended regex)
# Needs root (the profiler) and python3.
set -u
RUNS=${1:-5}
SECS=${2:-3}
BUILD=${3:-build}
MATCH=${4:-}
BIN="$BUILD/cacheperf-bpf"
WL="$BUILD/tests/workloads"
SRC=tests/workloads
die() { echo "recall: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"
if [ ! -x "$BIN" ] || [ ! -x "$WL/false_sharing_O0" ]; then
	die "build first: make BUILD=$BUILD tests"
fi
command -v python3 >/dev/null || die "python3 is not installed"
dir=$(mktemp -d /tmp/cp-recall.XXXXXX) || die "cannot make a temporary directory"
trap 'rm -rf "$dir"' EXIT

# name | environment | command | expected issues "type@file:mark ..." ("-": none;
# "type/processes@...": an issue of several processes) | issue types that must
# be absent ("-": nothing more)
CASES="false sharing|-|false_sharing SECS|false_sharing@false_sharing.c:fs-write|-
false sharing, padded|-|false_sharing --padded SECS|-|false_sharing true_sharing
false sharing, -O0|-|false_sharing_O0 SECS|false_sharing@false_sharing.c:fs-write|-
false sharing, -O0, padded|-|false_sharing_O0 --padded SECS|-|false_sharing true_sharing
allocator false sharing|MALLOC_ARENA_MAX=1|false_sharing --alloc SECS|false_sharing@false_sharing.c:fs-alloc-write|-
allocator false sharing, aligned|MALLOC_ARENA_MAX=1|false_sharing --alloc --aligned SECS|-|false_sharing true_sharing
mixed line|-|false_sharing --mixed SECS|false_sharing@false_sharing.c:fs-mixed-own true_sharing@false_sharing.c:fs-mixed-total|-
mixed line, padded|-|false_sharing --mixed --padded SECS|true_sharing@false_sharing.c:fs-mixed-total|false_sharing
true sharing|-|true_sharing 2 SECS|true_sharing@true_sharing.c:ts-inc|-
between processes|-|shm_sharing SECS|false_sharing/processes@shm_sharing.c:shm-write|-
between processes, padded|-|shm_sharing --padded SECS|-|false_sharing true_sharing
pointer chase|-|chase SECS|false_sharing@chase.c:chase-load|-
pointer chase, padded|-|chase --padded SECS|-|false_sharing true_sharing
index chase|-|chase --index SECS|false_sharing@chase.c:chase-index|-
index chase, padded|-|chase --index --padded SECS|-|false_sharing true_sharing"

# mark FILE NAME: the line of "/* MARK: NAME */" in tests/workloads/FILE
mark() { grep -n "MARK: $2 \*/" "$SRC/$1" | cut -d: -f1; }

# judge JSON EXPECTED ABSENT: prints "found impact recovered" for one report
judge() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = [w.split("@") for w in sys.argv[2].split()] if sys.argv[2] != "-" else []
absent = sys.argv[3].split() if sys.argv[3] != "-" else []
issues = d.get("issues", [])
def has(t, where):
    f, line = where.rsplit(":", 1)
    t, _, procs = t.partition("/")
    return next((i for i in issues if i["type"] == t and
        (not procs or len(i.get("sharing", {}).get("pids", [])) > 1) and any(
        x.get("file", "").endswith(f) and str(x.get("line")) == line
        for x in i["instructions"])), None)
hits = [has(t, w) for t, w in want]
found = all(hits) and not any(i["type"] in absent for i in issues)
t = d["totals"]
rec = (t["load_samples"] + t["store_samples"]) / t["ticks"] if t["ticks"] else 0
print(int(found), "%.3f" % (hits[0]["score"] if hits and hits[0] else 0), "%.3f" % rec)
PY
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) : "?" }'; }

echo "recall: $RUNS runs of ${SECS} s per workload, $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %7s %8s %10s\n' workload found impact recovered
all_found=0 all_runs=0
while IFS='|' read -r name envs cmd want absent; do
	[[ -z "$MATCH" || "$name" =~ $MATCH ]] || continue
	exp=""
	for w in $want; do
		[ "$w" = "-" ] && break
		f=${w#*@}
		exp+="${w%@*}@${f%%:*}:$(mark "${f%%:*}" "${f#*:}") "
	done
	[ -n "$exp" ] || exp="-"
	found=0 impacts="" recs=""
	for _ in $(seq "$RUNS"); do
		json="$dir/r.json"
		rm -f "$json"
		# shellcheck disable=SC2086 # the command's words
		if [ "$envs" = "-" ]; then
			"$BIN" --source soft -o "$dir/r.txt" --json "$json" -- "$WL"/${cmd/SECS/$SECS} \
				>/dev/null 2>"$dir/r.err"
		else
			env "$envs" "$BIN" --source soft -o "$dir/r.txt" --json "$json" -- \
				"$WL"/${cmd/SECS/$SECS} >/dev/null 2>"$dir/r.err"
		fi
		[ -s "$json" ] || { tail -3 "$dir/r.err" >&2; die "$name: no report"; }
		read -r f imp rec < <(judge "$json" "$exp" "$absent")
		found=$((found + f))
		impacts+="$imp"$'\n'
		recs+="$rec"$'\n'
	done
	all_found=$((all_found + found))
	all_runs=$((all_runs + RUNS))
	printf '%-34s %3d/%-3d %7.1f%% %9.1f%%\n' "$name" "$found" "$RUNS" \
		"$(printf '%s' "$impacts" | median | awk '{ print $1 * 100 }')" \
		"$(printf '%s' "$recs" | median | awk '{ print $1 * 100 }')"
done <<<"$CASES"
echo "all: $all_found/$all_runs runs found their problem (or stayed clean)"
