# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The ground-truth oracle on a few corpus workloads (tests/bench/accuracy.sh
# check): the oracle's truth agrees with the workload's "ORACLE:" markers
# (its own sanity), and `cacheperf-bpf report` on the simulated PEBS
# recording names the true type, origin, source line and object (the
# workloads free their objects before exiting: the report must still name
# them, from what the samples touched); the control reports nothing.
. "$(dirname "$0")/tap.sh"

run_cmd bash "$CP_ROOT/tests/bench/accuracy.sh" "$CP_BUILD" check
if [ "$rc" -ne 0 ]; then
	_not_ok "accuracy.sh check runs" "exit status $rc"
fi
for w in adi_conflict raytrace_conflict irs_capacity counter_true_sharing cache_thrash control_sum; do
	row=$(grep "^$w " "$tap_out")
	IFS='|' read -r _ truth oracle reported _ <<<"$row"
	read -r t_cls t_origin t_line t_obj <<<"$truth"
	read -r r_type r_origin r_lines r_obj <<<"$reported"
	if [ -z "$row" ]; then
		_not_ok "$w: a row in the table"
	elif [ "${oracle// /}" != yes ]; then
		_not_ok "$w: the oracle's truth agrees with the source markers" "$row"
	elif [ "$t_cls" = none ] && [ "$r_type" = none ]; then
		_ok "$w: no issue, and none reported"
	elif [ "$t_cls" = "$r_type" ] && [ "$t_origin" = "$r_origin" ] &&
	     [[ ",$r_lines," == *",$t_line,"* ]] && [ "$t_obj" = "$r_obj" ]; then
		_ok "$w: reported as $r_origin $r_type at $t_line on $t_obj, as the truth says"
	else
		_not_ok "$w: reported type, origin, line and object match the truth" "$row"
	fi
done
done_testing
