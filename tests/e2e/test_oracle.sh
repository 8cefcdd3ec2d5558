# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The ground-truth oracle on a few corpus workloads (tests/bench/accuracy.sh
# check): the oracle's truth agrees with the workload's "ORACLE:" markers
# (its own sanity), and `cacheperf-bpf report` on the simulated PEBS
# recording names the true type and source line; the control reports nothing.
# Objects are not asserted: the workloads free them before exiting, and the
# report looks objects up after the frees (see README "Accuracy").
. "$(dirname "$0")/tap.sh"

run_cmd bash "$CP_ROOT/tests/bench/accuracy.sh" "$CP_BUILD" check
if [ "$rc" -ne 0 ]; then
	_not_ok "accuracy.sh check runs" "exit status $rc"
fi
for w in adi_conflict irs_capacity counter_true_sharing control_sum; do
	row=$(grep "^$w " "$tap_out")
	IFS='|' read -r _ truth oracle reported _ <<<"$row"
	read -r t_cls _ t_line _ <<<"$truth"
	read -r r_type _ r_lines _ <<<"$reported"
	if [ -z "$row" ]; then
		_not_ok "$w: a row in the table"
	elif [ "${oracle// /}" != yes ]; then
		_not_ok "$w: the oracle's truth agrees with the source markers" "$row"
	elif [ "$t_cls" = none ] && [ "$r_type" = none ]; then
		_ok "$w: no issue, and none reported"
	elif [ "$t_cls" = "$r_type" ] && [[ ",$r_lines," == *",$t_line,"* ]]; then
		_ok "$w: reported as $r_type at $t_line, as the truth says"
	else
		_not_ok "$w: reported type and line match the truth" "$row"
	fi
done
echo "1..$tap_n"
