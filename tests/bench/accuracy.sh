#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Classification accuracy against the oracle's ground truth. For
# each corpus workload (tests/oracle/workloads): the oracle traces it,
# simulates the caches and writes the truth and a simulated PEBS recording;
# `cacheperf-bpf report` classifies the recording with the production code.
# Prints: workload, true dominant issue (class, origin, line, object),
# whether the oracle's truth agrees with the workload's "ORACLE:" markers,
# the top reported issue, and whether it matches the truth (type, origin,
# source line among the issue's lines, object); then precision and recall.
#
# usage: accuracy.sh [BUILD [SET [ORACLE OPTIONS...]]]
#   SET: all (default), check (the make-check subset), or workload names
#   separated by commas. ORACLE OPTIONS go to the oracle: --load-period N,
#   --store-period N, --window-ratio PPM, --seed N...
#   --sensitivity as SET runs the paper's study (Table 4/5) on all of them.
set -u
BUILD=${1:-build}
SET=${2:-all}
shift 2 2>/dev/null || shift $#
ORACLE="$BUILD/tests/oracle/oracle"
BIN="$BUILD/cacheperf-bpf"
WL="$BUILD/tests/oracle/workloads"
SRC=tests/oracle/workloads
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# name, command (binary and arguments)
CORPUS="lr_false_sharing:lr_false_sharing
histogram_false_sharing:histogram_false_sharing
cache_scratch:cache_scratch
cache_thrash:cache_thrash
counter_true_sharing:counter_true_sharing
adi_conflict:adi_conflict
nw_conflict:nw_conflict
raytrace_conflict:raytrace_conflict
irs_capacity:irs_capacity
streamcluster_small:streamcluster_small
control_sum:friendly_control sum
control_padded:friendly_control padded"
CHECK="counter_true_sharing,cache_thrash,adi_conflict,raytrace_conflict,irs_capacity,control_sum"

# "file.c:LINE" of the line holding MARK in the workload's source, or "-"
marker() {
	local f="$SRC/$1.c" n
	n=$(grep -n "ORACLE: $2" "$f" | head -1 | cut -d: -f1)
	[ -n "$n" ] && echo "$1.c:$n" || echo "-"
}

# the report's first issue as "type origin line1,line2,... object"
reported() {
	awk '
	/^#1 / { on = 1; t = $0; origin = (t ~ /Allocator/) ? "allocator" : "application"
		type = "capacity_or_conflict"
		if (t ~ /false sharing/) type = "false_sharing"; else if (t ~ /true sharing/) type = "true_sharing"
		else if (t ~ /conflict misses,/) type = "conflict"; else if (t ~ /capacity misses,/) type = "capacity"
		next }
	/^#2 / || /minor issues/ { if (on) exit }
	# an object paragraph: "Related to the heap object ... at:", then its frames
	on && /Related to|allocated by|allocated at/ { inobj = 1 }
	on && /^  (Impact|Access history|Hint|Accessed)/ { inobj = 0 }
	# instructions read "file.c: 12 (f)", allocation frames "f (file.c:12)"
	on && match($0, /[A-Za-z0-9_]+\.c: ?[0-9]+/) {
		s = substr($0, RSTART, RLENGTH); gsub(/: /, ":", s)
		if (inobj || $0 ~ /allocated at|Related to|object/) { if (!obj) obj = "heap:" s } else lines = lines (lines ? "," : "") s }
	on && /global variable|variable / && !obj { if (match($0, /variable [A-Za-z_0-9]+/)) obj = "global:" substr($0, RSTART + 9, RLENGTH - 9) }
	END { if (!on) print "none - - -"; else print type, origin, (lines ? lines : "-"), (obj ? obj : "-") }'
}

run_set() {	# $1: set, rest: oracle options; prints rows, then "SCORE tp fp fn"
	local set=$1 tp=0 fp=0 fn=0 line name cmd
	shift
	printf '%-22s | %-44s | %-6s | %-44s | %s\n' workload "truth (class origin line object)" oracle \
		"reported (first issue)" match
	while IFS= read -r line; do
		name=${line%%:*}
		cmd=${line#*:}
		case ",$set," in ,all,|*",$name,"*) ;; *) continue ;; esac
		# shellcheck disable=SC2086
		if ! "$ORACLE" "$@" -o "$dir/$name.cprec" -t "$dir/$name.truth" -- $WL/$cmd \
			>/dev/null 2>"$dir/$name.err"; then
			printf '%-22s | oracle failed: %s\n' "$name" "$(head -1 "$dir/$name.err")"
			fn=$((fn + 1))
			continue
		fi
		local truth t_cls t_org t_line t_obj exp_line exp_obj ok_oracle rep r_type r_org r_lines r_obj m
		truth=$(grep '^truth:' "$dir/$name.truth")
		t_cls=$(sed -n 's/.*class=\([a-z_]*\).*/\1/p' <<<"$truth")
		t_org=$(sed -n 's/.*origin=\([a-z]*\).*/\1/p' <<<"$truth")
		t_line=$(sed -n 's/.* line=\([^ ]*\).*/\1/p' <<<"$truth")
		t_obj=$(sed -n 's/.* object=\([^ ]*\).*/\1/p' <<<"$truth")
		bin=${cmd%% *}
		exp_line=$(marker "$bin" ISSUE)
		exp_obj=$(marker "$bin" OBJECT)
		if [ -z "$t_cls" ]; then
			ok_oracle=$([ "$exp_line" = - ] && echo yes || echo NO)
		else
			ok_oracle=$([ "$exp_line" = "$t_line" ] && [[ "$t_obj" == *"$exp_obj"* || \
				"$t_obj" == global:* ]] && echo yes || echo NO)
		fi
		"$BIN" report "$dir/$name.cprec" >"$dir/$name.report" 2>/dev/null
		rep=$(reported <"$dir/$name.report")
		read -r r_type r_org r_lines r_obj <<<"$rep"
		if [ -z "$t_cls" ]; then
			m=$([ "$r_type" = none ] && echo yes || echo NO)
			[ "$r_type" = none ] || fp=$((fp + 1))
		else
			m=""
			[ "$r_type" = "$t_cls" ] || m="${m}type "
			[ "$r_org" = "$t_org" ] || m="${m}origin "
			[[ ",$r_lines," == *",$t_line,"* ]] || m="${m}line "
			[ "$r_obj" = "$t_obj" ] || m="${m}object "
			if [ -z "$m" ]; then m=yes; tp=$((tp + 1)); else
				m="NO (${m% })"; fn=$((fn + 1)); [ "$r_type" = none ] || fp=$((fp + 1)); fi
		fi
		printf '%-22s | %-44s | %-6s | %-44s | %s\n' "$name" \
			"${t_cls:-none} ${t_org} ${t_line} ${t_obj}" "$ok_oracle" \
			"$r_type $r_org $r_lines $r_obj" "$m"
	done <<<"$CORPUS"
	echo "SCORE $tp $fp $fn"
}

score() {	# $1: label; stdin: run_set output
	local out tp fp fn
	out=$(cat)
	grep -v '^SCORE' <<<"$out"
	read -r _ tp fp fn <<<"$(grep '^SCORE' <<<"$out")"
	awk -v l="$1" -v tp="$tp" -v fp="$fp" -v fn="$fn" 'BEGIN {
		printf "%s: %d matched, %d wrong reports, %d missed; precision %.2f, recall %.2f\n\n", l, tp, fp, fn,
			tp + fp ? tp / (tp + fp) : 1, tp + fn ? tp / (tp + fn) : 1 }'
}

case $SET in
check) SET=$CHECK ;;
esac
if [ "$SET" = --sensitivity ]; then
	for v in "default:" "periods 10x lower:--load-period 2000 --store-period 5000" \
		 "periods 10x higher:--load-period 200000 --store-period 500000" \
		 "window 0 %:--window-ratio 0" "window 0.5 %:--window-ratio 5000" \
		 "window 2.5 %:--window-ratio 25000"; do
		echo "== ${v%%:*}"
		# shellcheck disable=SC2086
		run_set all ${v#*:} | score "${v%%:*}"
	done
	exit 0
fi
run_set "$SET" "$@" | score "${SET}"
