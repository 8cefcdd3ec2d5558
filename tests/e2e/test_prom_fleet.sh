# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The PromQL shipped for a fleet (docs/prometheus.md, "Queries for a fleet"):
# the rules file (packaging/prometheus/cacheperf-bpf.rules.yml) passes
# `promtool check rules` and `promtool test rules` on input series whose
# expected alerts tests/data/prom/rules-test.yml works out; every metric the
# Grafana dashboard (packaging/grafana/cacheperf-bpf.json), the rules and the
# doc's promql blocks query is a family of a golden file (or a recording rule),
# and each expr parses. The checker must be able to fail: a dashboard with a
# misspelt metric and one with a broken expr are refused. No root needed.
. "$(dirname "$0")/tap.sh"

command -v promtool >/dev/null || skip_all "no promtool (packaging/deps.sh)"
python3 -c 'import yaml' 2>/dev/null || skip_all "no python3-yaml (packaging/deps.sh)"
work=$(mktemp -d)
trap 'rm -rf "$work" "$tap_out"' EXIT
rules=$CP_ROOT/packaging/prometheus/cacheperf-bpf.rules.yml
dash=$CP_ROOT/packaging/grafana/cacheperf-bpf.json
check=$CP_ROOT/tests/lib/prom_queries_check.py
goldens=("$CP_ROOT"/tests/data/prom/*.prom)

# queries_ok DESC SOURCE...: every name known, and promtool parses every expr
queries_ok() {
	local desc=$1
	shift
	if ! python3 "$check" --golden "${goldens[@]}" --rules "$rules" --out "$work/q.yml" "$@" \
		>"$tap_out" 2>&1; then
		_not_ok "$desc" "$(tail -5 "$tap_out")"
	elif ! promtool check rules "$work/q.yml" >"$tap_out" 2>&1; then
		_not_ok "$desc" "promtool check rules: $(tail -3 "$tap_out")"
	else
		_ok "$desc"
	fi
}

run_cmd promtool check rules "$rules"
if [ "$rc" -eq 0 ] && grep -q "SUCCESS: 5 rules found" "$tap_out"; then
	_ok "promtool check rules accepts the rules file"
else
	_not_ok "promtool check rules accepts the rules file" "rc $rc"
fi
run_cmd promtool test rules "$CP_ROOT/tests/data/prom/rules-test.yml"
if [ "$rc" -eq 0 ]; then _ok "promtool test rules: the alerts fire as worked out"; else
	_not_ok "promtool test rules: the alerts fire as worked out" "$(tail -20 "$tap_out")"; fi

# the unit test can fail: an alert expected with another summary is a failure
mkdir -p "$work/t/tests/data/prom" "$work/t/packaging/prometheus"
cp "$rules" "$work/t/packaging/prometheus/"
sed 's/New false sharing in worker/New false sharing in someone else/' \
	"$CP_ROOT/tests/data/prom/rules-test.yml" >"$work/t/tests/data/prom/rules-test.yml"
run_cmd promtool test rules "$work/t/tests/data/prom/rules-test.yml"
if [ "$rc" -ne 0 ] && grep -q FAILED "$tap_out"; then
	_ok "promtool test rules fails on a wrong expectation"
else
	_not_ok "promtool test rules fails on a wrong expectation" "rc $rc"
fi

queries_ok "the dashboard queries only metrics of a golden file, and each expr parses" "$dash"
queries_ok "the rules query only metrics of a golden file" "$rules"
queries_ok "the promql blocks of docs/prometheus.md too" "$CP_ROOT/docs/prometheus.md"
n=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(sum(len(p.get("targets", [])) for p in d["panels"]))' "$dash")
if [ "$n" -ge 8 ]; then _ok "the dashboard has its panels' queries ($n)"; else
	_not_ok "the dashboard has its panels' queries" "$n"; fi

# the checker can fail: a misspelt metric is named, a broken expr does not parse
sed 's/cacheperf_issue_misses_per_second/cacheperf_issue_miss_per_second/' "$dash" >"$work/typo.json"
if python3 "$check" --golden "${goldens[@]}" --rules "$rules" --out "$work/typo.yml" "$work/typo.json" \
	>"$tap_out" 2>&1; then
	_not_ok "a dashboard with a misspelt metric is refused" "the checker accepted it"
elif grep -q "cacheperf_issue_miss_per_second is in no golden file" "$tap_out"; then
	_ok "a dashboard with a misspelt metric is refused"
else
	_not_ok "a dashboard with a misspelt metric is refused" "$(cat "$tap_out")"
fi
sed 's/sum by (type) (cacheperf_issue_misses_per_second/sum by (type) ((cacheperf_issue_misses_per_second/' \
	"$dash" >"$work/broken.json"
python3 "$check" --golden "${goldens[@]}" --rules "$rules" --out "$work/broken.yml" "$work/broken.json" \
	>/dev/null 2>&1
if ! cmp -s "$dash" "$work/broken.json" && ! promtool check rules "$work/broken.yml" >/dev/null 2>&1; then
	_ok "a dashboard with an expr that does not parse is refused"
else
	_not_ok "a dashboard with an expr that does not parse is refused"
fi

done_testing
