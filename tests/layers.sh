#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make layers`: the folders of user/ are layers, and a file includes only
# headers of its own folder or of folders below it. The order, lowest first:
#
#   util      helpers with no knowledge of profiling (parsing, hashing, clocks, files)
#   machine   what this machine is: sysfs, cache geometry, PMUs, event attributes, cgroups
#   budget    the overhead budget: what each probe may cost the targets (pure)
#   objects   what an address belongs to: maps, heap objects, call sites, globals
#   symbols   addresses to functions, files and lines (libdw)
#   decode    machine code: operands, effects, skid, what a tick's instruction means
#   profile   the record handlers and the stores they feed
#   classify  Algorithm 1: stores to issues, hints
#   breakpoints which instructions to watch, and their findings (pure)
#   report    text, JSON, Prometheus: rendering what profile and classify hold
#   export    pprof and folded stacks: the profile for other tools (docs/pprof.md);
#             the table of every output (export/outputs.h)
#   record    recordings: format, I/O, the recorder, the replay
#   live      the BPF skeleton, perf events, probes, signals, the live run loop
#   cli       main, options, targets, the report command
#
# Only live/ may include the BPF skeleton (cacheperf.skel.h), and only
# export/ the code protoc-c generates from proto/ ("proto/profile.pb-c.h",
# in the build directory). Every include of
# a project header names its folder ("profile/insn_store.h"), so a reader and
# this check both see which way it points. Exit status 1 on any violation.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
order=(util machine budget objects symbols decode profile classify breakpoints report export record live cli)
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done

bad=0
complain() { echo "layers: $1"; bad=1; }

cd "$root/user" || exit 1
for d in */; do
	d=${d%/}
	[ -n "${rank[$d]:-}" ] || complain "user/$d/ is no layer: add it to tests/layers.sh"
done
while IFS= read -r f; do
	dir=${f%%/*}
	[ -n "${rank[$dir]:-}" ] || continue
	while IFS=: read -r line inc; do
		case "$inc" in
		cacheperf/*) continue ;;	# include/cacheperf: the ABI, below everything
		cacheperf.skel.h)
			[ "$dir" = live ] ||
				complain "user/$f:$line includes the BPF skeleton; only live/ may"
			continue ;;
		proto/*.pb-c.h)	# generated from proto/*.proto
			[ "$dir" = export ] ||
				complain "user/$f:$line includes \"$inc\"; only export/ may"
			continue ;;
		*/*) ;;
		*) complain "user/$f:$line includes \"$inc\" without its folder"; continue ;;
		esac
		to=${inc%%/*}
		if [ -z "${rank[$to]:-}" ]; then
			complain "user/$f:$line includes \"$inc\": no such layer"
		elif [ "${rank[$to]}" -gt "${rank[$dir]}" ]; then
			complain "user/$f:$line includes \"$inc\": $dir/ is below $to/"
		fi
	done < <(grep -noE '^#include "[^"]+"' "$f" | sed -E 's/^([0-9]+):#include "(.*)"$/\1:\2/')
done < <(find . -name '*.[ch]' | sed 's|^\./||' | sort)
[ "$bad" -eq 0 ] && echo "layers: ok (${order[*]})"
exit "$bad"
